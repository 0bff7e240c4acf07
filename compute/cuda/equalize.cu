/* SPDX-License-Identifier: MIT */
/* Histogram equalization on the GPU: four ways to build the histogram, one LUT, bit-identical to cv::equalizeHist. */
#include "es-cuda-internal.h"
#include "../es-definitions.h"
#include "es-i18n.h"

/* histogram[256] counts the blocks that have merged (the fused variant). */
#define BLOCKS_DONE 256

/* ---- the LUT: es_equalize_lut, one thread per bin ---------------------- */

/* Called by every thread of a block of at least 256 threads; thread k writes
 * lut[k]. Float32 steps with explicit rounding, as es_equalize_lut and
 * OpenCV do them: scale = 255 / (n − h[first]), then the count converted to
 * float, multiplied, rounded half to even and saturated. */
static __device__ void
build_lut (const unsigned long long *histogram, unsigned long long n, uint8_t *lut)
{
  __shared__ unsigned long long cdf[256];
  __shared__ int first;
  const int k = threadIdx.x;
  const bool bin = k < 256;
  /* Other blocks wrote the bins with atomics (in L2): read past L1. */
  unsigned long long h = bin ? __ldcg (&histogram[k]) : 0;

  if (k == 0)
    first = 255;
  if (bin)
    cdf[k] = h;
  __syncthreads ();
  if (bin && h != 0)
    atomicMin (&first, k);
  for (int offset = 1; offset < 256; offset <<= 1)
    {
      unsigned long long add = bin && k >= offset ? cdf[k - offset] : 0;
      __syncthreads ();
      if (bin)
        cdf[k] += add;
      __syncthreads ();
    }
  if (!bin)
    return;

  const int f = first;
  const unsigned long long h_first = cdf[f];  /* bins before f are empty */
  uint32_t value;
  if (h_first == n)
    value = (uint32_t) k;  /* one value only: the image is returned unchanged */
  else if (k <= f)
    value = 0;
  else
    {
      float scale = __fdiv_rn (255.0f, __ull2float_rn (n - h_first));
      float v = rintf (__fmul_rn (__ull2float_rn (cdf[k] - h_first), scale));
      value = v > 255.0f ? 255u : (uint32_t) v;
    }
  lut[k] = (uint8_t) value;
}

static __global__ void __launch_bounds__ (256)
lut_kernel (const unsigned long long *histogram, unsigned long long n, uint8_t *lut)
{
  build_lut (histogram, n, lut);
}

/* ---- histograms ---------------------------------------------------------- */

template <typename T>
static __device__ __forceinline__ uint32_t
view_at (const void *in, size_t in_pitch, int x, int y, EsSampleMap map)
{
  return es_dev_view (__ldg (es_dev_row<T> (in, in_pitch, y) + x), map);
}

template <typename T>
static __global__ void __launch_bounds__ (256)
histogram_global_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                         unsigned long long *histogram)
{
  for (EsVectorWalk walk (width); walk.y < height; walk.next ())
    atomicAdd (&histogram[view_at<T> (in, in_pitch, walk.x, walk.y, map)], 1ull);
}

template <typename T>
static __global__ void __launch_bounds__ (256)
histogram_block_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                        unsigned long long *histogram)
{
  __shared__ uint32_t bins[256];

  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    bins[i] = 0;
  __syncthreads ();
  for (EsVectorWalk walk (width); walk.y < height; walk.next ())
    atomicAdd (&bins[view_at<T> (in, in_pitch, walk.x, walk.y, map)], 1u);
  __syncthreads ();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (bins[i] != 0)
      atomicAdd (&histogram[i], (unsigned long long) bins[i]);
}

#define WARP_BLOCK 256
#define WARPS (WARP_BLOCK / 32)

/* Adds the block's per-warp sub-histograms into the global one. */
static __device__ __forceinline__ void
merge_warp_bins (uint32_t (*bins)[256], int warps, unsigned long long *histogram)
{
  __syncthreads ();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    {
      unsigned long long sum = 0;
      for (int w = 0; w < warps; w++)
        sum += bins[w][i];
      if (sum != 0)
        atomicAdd (&histogram[i], sum);
    }
}

template <typename T>
static __global__ void __launch_bounds__ (WARP_BLOCK)
histogram_warp_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                       unsigned long long *histogram)
{
  __shared__ uint32_t bins[WARPS][256];
  uint32_t *mine = bins[threadIdx.x / 32];

  for (int i = threadIdx.x; i < WARPS * 256; i += blockDim.x)
    bins[i / 256][i % 256] = 0;
  __syncthreads ();
  for (EsVectorWalk walk (width); walk.y < height; walk.next ())
    atomicAdd (&mine[view_at<T> (in, in_pitch, walk.x, walk.y, map)], 1u);
  merge_warp_bins (bins, WARPS, histogram);
}

#define FUSED_BLOCK 512
#define FUSED_WARPS (FUSED_BLOCK / 32)

/* 16 samples per thread and iteration; the last block to merge builds the
 * LUT (threadfence reduction), which saves a launch and a host round trip. */
template <typename T>
static __global__ void __launch_bounds__ (FUSED_BLOCK)
histogram_fused_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, int vectors,
                        EsSampleMap map, unsigned long long *histogram, uint8_t *lut)
{
  __shared__ uint32_t bins[FUSED_WARPS][256];
  __shared__ bool last;
  uint32_t *mine = bins[threadIdx.x / 32];

  for (int i = threadIdx.x; i < FUSED_WARPS * 256; i += blockDim.x)
    bins[i / 256][i % 256] = 0;
  __syncthreads ();
  for (EsVectorWalk walk (vectors); walk.y < height; walk.next ())
    {
      int x0 = walk.x * ES_CUDA_VECTOR;
      int valid = min (ES_CUDA_VECTOR, width - x0);  /* the row's padding is not counted */
      uint32_t v[16];

      EsVec16<T>::load (es_dev_row<T> (in, in_pitch, walk.y), x0, v);
#pragma unroll
      for (int k = 0; k < 16; k++)
        if (k < valid)
          atomicAdd (&mine[es_dev_view (v[k], map)], 1u);
    }
  merge_warp_bins (bins, FUSED_WARPS, histogram);

  /* Publish this block's atomics before counting it as done. */
  __threadfence ();
  __syncthreads ();
  if (threadIdx.x == 0)
    last = atomicAdd (&histogram[BLOCKS_DONE], 1ull) == gridDim.x - 1ull;
  __syncthreads ();
  if (last)
    {
      __threadfence ();
      build_lut (histogram, (unsigned long long) width * (unsigned long long) height, lut);
    }
}

/* ---- apply ------------------------------------------------------------------ */

template <typename T>
static __global__ void __launch_bounds__ (256)
apply_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
              const uint8_t *__restrict__ lut, uint8_t *out, size_t out_pitch)
{
  for (EsVectorWalk walk (width); walk.y < height; walk.next ())
    es_dev_row_mut<uint8_t> (out, out_pitch, walk.y)[walk.x]
      = __ldg (&lut[view_at<T> (in, in_pitch, walk.x, walk.y, map)]);
}

template <typename T>
static __global__ void __launch_bounds__ (256)
apply_vector_kernel (const void *__restrict__ in, size_t in_pitch, int vectors, int height, EsSampleMap map,
                     const uint8_t *__restrict__ lut, uint8_t *out, size_t out_pitch)
{
  /* One word per entry: bank = value mod 32, no byte-lane conflicts. */
  __shared__ uint32_t table[256];

  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    table[i] = lut[i];
  __syncthreads ();
  for (EsVectorWalk walk (vectors); walk.y < height; walk.next ())
    {
      int x0 = walk.x * ES_CUDA_VECTOR;
      uint32_t v[16];

      EsVec16<T>::load (es_dev_row<T> (in, in_pitch, walk.y), x0, v);
#pragma unroll
      for (int k = 0; k < 16; k++)
        v[k] = table[es_dev_view (v[k], map)];
      es_dev_store16 (es_dev_row_mut<uint8_t> (out, out_pitch, walk.y), x0, v);
    }
}

/* ---- launchers --------------------------------------------------------------- */

enum { HISTOGRAM_GLOBAL, HISTOGRAM_BLOCK, HISTOGRAM_WARP };

/* Three kernels: the histogram with one of the three counting strategies,
 * the LUT from it on one block, then the LUT applied one pixel per thread. */
template <int HISTOGRAM, typename T>
static bool
separate_typed (EsCuda *cuda, const EsCudaFrame *f, EsError *error)
{
  const EsSampleMap map = es_cuda_sample_map (f);
  const unsigned long long n = (unsigned long long) f->width * (unsigned long long) f->height;
  const size_t pixels = (size_t) f->width * (size_t) f->height;
  uint8_t *out = (uint8_t *) f->out;
  unsigned long long *histogram = cuda->histogram;

  ES_CUDA_TRY (cuda, cudaMemsetAsync (histogram, 0, (BLOCKS_DONE + 1) * sizeof *histogram, cuda->stream),
               "histogram reset", error);
  unsigned blocks = es_cuda_blocks (cuda, pixels, 256);
  if constexpr (HISTOGRAM == HISTOGRAM_GLOBAL)
    histogram_global_kernel<T><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                  histogram);
  else if constexpr (HISTOGRAM == HISTOGRAM_BLOCK)
    histogram_block_kernel<T><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                 histogram);
  else
    histogram_warp_kernel<T><<<blocks, WARP_BLOCK, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height,
                                                                       map, histogram);
  ES_CUDA_LAUNCHED (cuda, "histogram kernel", error);
  es_cuda_note_kernel (cuda,
                       HISTOGRAM == HISTOGRAM_GLOBAL  ? (const void *) histogram_global_kernel<T>
                       : HISTOGRAM == HISTOGRAM_BLOCK ? (const void *) histogram_block_kernel<T>
                                                      : (const void *) histogram_warp_kernel<T>,
                       blocks, HISTOGRAM == HISTOGRAM_WARP ? WARP_BLOCK : 256, 0, "histogram kernel", true);

  lut_kernel<<<1, 256, 0, cuda->stream>>> (histogram, n, cuda->lut);
  ES_CUDA_LAUNCHED (cuda, "equalize LUT kernel", error);
  es_cuda_note_kernel (cuda, (const void *) lut_kernel, 1, 256, 0, "equalize LUT kernel", false);
  apply_kernel<T><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map, cuda->lut,
                                                     out, f->out_pitch);
  ES_CUDA_LAUNCHED (cuda, "equalize apply kernel", error);
  es_cuda_note_kernel (cuda, (const void *) apply_kernel<T>, blocks, 256, 0, "equalize apply kernel", false);
  return true;
}

template <int HISTOGRAM>
static bool
launch_separate (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  (void) job;
  if (frame->in_format == ES_FORMAT_U8)
    return separate_typed<HISTOGRAM, uint8_t> (cuda, frame, error);
  return separate_typed<HISTOGRAM, uint16_t> (cuda, frame, error);
}

/* Two kernels: the fused histogram, whose last block builds the LUT, then
 * the LUT applied 16 pixels per thread. */
template <typename T>
static bool
fused_typed (EsCuda *cuda, const EsCudaFrame *f, EsError *error)
{
  const EsSampleMap map = es_cuda_sample_map (f);
  const size_t cells = (size_t) f->vectors * (size_t) f->height;
  uint8_t *out = (uint8_t *) f->out;
  unsigned long long *histogram = cuda->histogram;

  ES_CUDA_TRY (cuda, cudaMemsetAsync (histogram, 0, (BLOCKS_DONE + 1) * sizeof *histogram, cuda->stream),
               "histogram reset", error);
  const unsigned histogram_blocks = es_cuda_blocks (cuda, cells, FUSED_BLOCK);
  histogram_fused_kernel<T><<<histogram_blocks, FUSED_BLOCK, 0, cuda->stream>>> (
    f->in, f->in_pitch, f->width, f->height, f->vectors, map, histogram, cuda->lut);
  ES_CUDA_LAUNCHED (cuda, "fused histogram kernel", error);
  es_cuda_note_kernel (cuda, (const void *) histogram_fused_kernel<T>, histogram_blocks, FUSED_BLOCK, 0,
                       "fused histogram kernel", true);
  const unsigned apply_blocks = es_cuda_blocks (cuda, cells, 256);
  apply_vector_kernel<T><<<apply_blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, f->vectors, f->height, map,
                                                                  cuda->lut, out, f->out_pitch);
  ES_CUDA_LAUNCHED (cuda, "equalize apply kernel", error);
  es_cuda_note_kernel (cuda, (const void *) apply_vector_kernel<T>, apply_blocks, 256, 0, "equalize apply kernel",
                       false);
  return true;
}

static bool
launch_fused (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  (void) job;
  if (frame->in_format == ES_FORMAT_U8)
    return fused_typed<uint8_t> (cuda, frame, error);
  return fused_typed<uint16_t> (cuda, frame, error);
}

/* ---- bands --------------------------------------------------------------- */

/* The histogram of a band added into cuda->histogram's 256 bins (the caller
 * clears them before the first band): every variant's histogram is the
 * same counts, so the bands use the per-block shared one. */
template <typename T>
static bool
histogram_band_typed (EsCuda *cuda, const EsCudaFrame *f, EsError *error)
{
  const size_t pixels = (size_t) f->width * (size_t) f->height;

  const unsigned blocks = es_cuda_blocks (cuda, pixels, 256);
  histogram_block_kernel<T><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height,
                                                               es_cuda_sample_map (f), cuda->histogram);
  ES_CUDA_LAUNCHED (cuda, "histogram kernel", error);
  es_cuda_note_kernel (cuda, (const void *) histogram_block_kernel<T>, blocks, 256, 0, "histogram kernel", true);
  return true;
}

static bool
histogram_band (EsCuda *cuda, const EsCudaFrame *frame, EsError *error)
{
  if (frame->in_format == ES_FORMAT_U8)
    return histogram_band_typed<uint8_t> (cuda, frame, error);
  return histogram_band_typed<uint16_t> (cuda, frame, error);
}

/* The LUT of the devices' summed histograms. es_equalize_lut's result only
 * says whether the LUT is the identity, which the bands need not know. */
static void
combine_histograms (const uint64_t bins[256], uint64_t pixels, uint8_t table[256])
{
  (void) es_equalize_lut (bins, pixels, table);
}

/* Maps a band through cuda->lut, which the caller filled. */
static bool
apply_band (EsCuda *cuda, const EsCudaFrame *frame, EsError *error)
{
  const size_t cells = (size_t) frame->vectors * (size_t) frame->height;
  const unsigned blocks = es_cuda_blocks (cuda, cells, 256);

  if (frame->in_format == ES_FORMAT_U8)
    apply_vector_kernel<uint8_t><<<blocks, 256, 0, cuda->stream>>> (
      frame->in, frame->in_pitch, frame->vectors, frame->height, es_cuda_sample_map (frame), cuda->lut,
      (uint8_t *) frame->out, frame->out_pitch);
  else
    apply_vector_kernel<uint16_t><<<blocks, 256, 0, cuda->stream>>> (
      frame->in, frame->in_pitch, frame->vectors, frame->height, es_cuda_sample_map (frame), cuda->lut,
      (uint8_t *) frame->out, frame->out_pitch);
  ES_CUDA_LAUNCHED (cuda, "equalize apply kernel", error);
  es_cuda_note_kernel (cuda,
                       frame->in_format == ES_FORMAT_U8 ? (const void *) apply_vector_kernel<uint8_t>
                                                        : (const void *) apply_vector_kernel<uint16_t>,
                       blocks, 256, 0, "equalize apply kernel", false);
  return true;
}

/* ---- memory models ------------------------------------------------------------ */

/* Two passes over the image whatever the histogram: it reads every sample
 * (its atomics land on 256 counters in L2 or shared memory, never DRAM),
 * then the apply kernel reads every sample again and writes a byte a
 * pixel; the histogram and LUT are 2 KiB. The image (64 MiB at 8192²)
 * does not stay in L2 from one pass to the next. */
static void
separate_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);

  (void) job;
  *traffic = (EsTraffic){ 2 * pixels * es_model_sample_bytes (extent), pixels, 0 };
}

/* The same two passes over whole 16-sample vectors of the padded rows. */
static void
fused_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_model_vector_pixels (extent);

  (void) job;
  *traffic = (EsTraffic){ 2 * pixels * es_model_sample_bytes (extent), pixels, 0 };
}

/* ---- the operation --------------------------------------------------------- */

static const EsVariant equalize_variants[] = {
  { "global-atomics", N_ ("Global atomics"),
    N_ ("Every pixel does an atomicAdd on one of 256 counters in global memory: simple, but every SM "
    "queues on the same few addresses in L2. On an H200 at 8192²: 10.9 ms for 3 bytes a pixel of DRAM traffic (18 GB/s), "
    "34× slower than a privatized histogram."),
    "NVIDIA CUDA C++ Programming Guide, §Atomic functions",
    false, ES_TRANSFER_DEFAULT, launch_separate<HISTOGRAM_GLOBAL>, NULL, separate_memory },
  { "block-shared", N_ ("Per-block shared histogram"),
    N_ ("Each block counts into its own 256 bins in shared memory and merges them with 256 global "
    "atomics at the end: the contended updates move on chip. On an H200 at 8192²: 0.32 ms for the same 3 bytes a pixel "
    "(627 GB/s), 34× faster than global atomics."),
    "NVIDIA technical blog, \"GPU Pro Tip: Fast Histograms Using Shared Atomics on Maxwell\"",
    false, ES_TRANSFER_DEFAULT, launch_separate<HISTOGRAM_BLOCK>, NULL, separate_memory },
  { "warp-private", N_ ("Per-warp sub-histograms"),
    N_ ("Each warp of a block gets its own sub-histogram in shared memory, so warps never collide on "
    "a bin: the cure for contention on GPUs before Maxwell, but Hopper's shared-memory atomics "
    "resolve collisions in hardware. On an H200 at 8192² it ties with one histogram per block, 0.32 ms, even on a "
    "16-level image."),
    "cuda-samples 2_Concepts_and_Techniques/histogram (histogram256: per-warp sub-histograms)",
    false, ES_TRANSFER_DEFAULT, launch_separate<HISTOGRAM_WARP>, NULL, separate_memory },
  { "fused", N_ ("Fused: vector loads, device LUT"),
    N_ ("Per-warp sub-histograms fed by 16-byte loads, the LUT built on the device by the last block "
    "to finish (no host round trip), and an apply pass that maps 16 pixels per thread from a "
    "shared-memory LUT: two kernels in all. On an H200 at 8192²: 0.091 ms, 1.55× the copy floor, the 3 bytes a pixel "
    "moving at 2.2 TB/s."),
    "CUDA C++ Programming Guide, §Memory fence functions (last-block reduction); cuda-samples threadFenceReduction",
    true, ES_TRANSFER_DEFAULT, launch_fused, NULL, fused_memory },
};

const EsCudaOp es_cuda_equalize = {
  .variants = equalize_variants,
  .n_variants = ES_CUDA_N_VARIANTS (equalize_variants),
  .uses_levels = false,
  .init = NULL,
  .launch_rows = NULL,
  .reduce_band = histogram_band,
  .combine = combine_histograms,
  .apply_band = apply_band,
  .tile_sizes = NULL,
  .count_band = NULL,
  .build_maps = NULL,
  .blend_band = NULL,
  .frame_pad = NULL,
  .slow_path = NULL,
  .volumes = false,
  .run_volume = NULL,
};
