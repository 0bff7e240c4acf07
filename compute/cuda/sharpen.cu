/* SPDX-License-Identifier: MIT */
/* Sharpening on the GPU: a 5-point Laplacian stencil with replicated borders, five memory strategies. */
#include "es-cuda-internal.h"
#include "es-i18n.h"

/* The Laplacian part of the kernel; out = c + amount · Σ mask · pixels. */
static __constant__ int c_mask[3][3] = {
  { 0, -1, 0 },
  { -1, 4, -1 },
  { 0, -1, 0 },
};

template <typename T>
static __device__ __forceinline__ int
view_at (const void *in, size_t in_pitch, int x, int y, EsSampleMap map)
{
  return (int) es_dev_view (__ldg (es_dev_row<T> (in, in_pitch, y) + x), map);
}

/* One pixel from global memory, the nearest edge pixel standing in for a
 * missing neighbour. */
template <typename T>
static __device__ __forceinline__ uint32_t
sharpen_at (const void *in, size_t in_pitch, int width, int height, EsSampleMap map, float amount, int x, int y)
{
  int c = view_at<T> (in, in_pitch, x, y, map);
  int laplacian = 4 * c - view_at<T> (in, in_pitch, x, max (y - 1, 0), map)
                  - view_at<T> (in, in_pitch, x, min (y + 1, height - 1), map)
                  - view_at<T> (in, in_pitch, max (x - 1, 0), y, map)
                  - view_at<T> (in, in_pitch, min (x + 1, width - 1), y, map);
  return es_dev_sharpen (c, laplacian, amount);
}

static __device__ __forceinline__ void
put (void *out, size_t out_pitch, int x, int y, uint32_t value)
{
  es_dev_row_mut<uint8_t> (out, out_pitch, y)[x] = (uint8_t) value;
}

#define TILE_W 32
#define TILE_H 8

template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_global_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                       float amount, void *out, size_t out_pitch)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    put (out, out_pitch, x, y, sharpen_at<T> (in, in_pitch, width, height, map, amount, x, y));
}

template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_mask_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                     float amount, void *out, size_t out_pitch)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    {
      int laplacian = 0;
#pragma unroll
      for (int dy = -1; dy <= 1; dy++)
#pragma unroll
        for (int dx = -1; dx <= 1; dx++)
          laplacian += c_mask[dy + 1][dx + 1]
                       * view_at<T> (in, in_pitch, min (max (x + dx, 0), width - 1),
                                     min (max (y + dy, 0), height - 1), map);
      put (out, out_pitch, x, y, es_dev_sharpen (view_at<T> (in, in_pitch, x, y, map), laplacian, amount));
    }
}

/* The tile covers image columns ox−1..ox+TILE_W and rows oy−1..oy+TILE_H,
 * each read at its clamped position: halo cells beyond an edge hold the
 * replicated edge pixel, so the stencil needs no border tests. */
template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_tile_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                     float amount, void *out, size_t out_pitch)
{
  __shared__ uint8_t tile[TILE_H + 2][TILE_W + 2];
  const int tid = threadIdx.y * TILE_W + threadIdx.x;
  const int ox = blockIdx.x * TILE_W;
  const int tiles_y = (height + TILE_H - 1) / TILE_H;

  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y)
    {
      const int oy = ty * TILE_H;

      __syncthreads ();  /* the previous tile is no longer read */
      for (int i = tid; i < (TILE_H + 2) * (TILE_W + 2); i += TILE_W * TILE_H)
        {
          int cx = i % (TILE_W + 2), cy = i / (TILE_W + 2);
          int gx = min (max (ox - 1 + cx, 0), width - 1);
          int gy = min (max (oy - 1 + cy, 0), height - 1);
          tile[cy][cx] = (uint8_t) view_at<T> (in, in_pitch, gx, gy, map);
        }
      __syncthreads ();

      const int x = ox + threadIdx.x, y = oy + threadIdx.y;
      if (x < width && y < height)
        {
          const int tx = threadIdx.x + 1, ty_ = threadIdx.y + 1;
          int c = tile[ty_][tx];
          int laplacian = 4 * c - tile[ty_ - 1][tx] - tile[ty_ + 1][tx] - tile[ty_][tx - 1] - tile[ty_][tx + 1];
          put (out, out_pitch, x, y, es_dev_sharpen (c, laplacian, amount));
        }
    }
}

/* Only the tile's own pixels go to shared memory; a neighbour whose
 * (clamped) position lies outside the tile is read from global memory. */
template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_l2_halo_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                        float amount, void *out, size_t out_pitch)
{
  __shared__ uint8_t tile[TILE_H][TILE_W];
  const int ox = blockIdx.x * TILE_W;
  const int tiles_y = (height + TILE_H - 1) / TILE_H;
  const int x = ox + threadIdx.x;

  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y)
    {
      const int oy = ty * TILE_H;
      const int y = oy + threadIdx.y;
      const bool inside = x < width && y < height;

      __syncthreads ();
      if (inside)
        tile[threadIdx.y][threadIdx.x] = (uint8_t) view_at<T> (in, in_pitch, x, y, map);
      __syncthreads ();

      if (inside)
        {
          /* Clamped neighbour positions are always inside the image, and
           * every image pixel of the tile has been loaded. */
          const int nx[4] = { x, x, max (x - 1, 0), min (x + 1, width - 1) };
          const int ny[4] = { max (y - 1, 0), min (y + 1, height - 1), y, y };
          int c = tile[threadIdx.y][threadIdx.x];
          int laplacian = 4 * c;
#pragma unroll
          for (int i = 0; i < 4; i++)
            {
              int lx = nx[i] - ox, ly = ny[i] - oy;
              laplacian -= lx >= 0 && lx < TILE_W && ly >= 0 && ly < TILE_H
                             ? tile[ly][lx] : view_at<T> (in, in_pitch, nx[i], ny[i], map);
            }
          put (out, out_pitch, x, y, es_dev_sharpen (c, laplacian, amount));
        }
    }
}

/* One packed word of 4 sharpened pixels from the packed centre row C, the
 * rows above (N) and below (S) and the rows shifted by one pixel (W, E).
 * The Laplacian is computed for two pixels at a time in 16-bit halves,
 * biased by 1020 to stay positive; each half and each centre byte becomes
 * an exact float by sitting in the mantissa of 1.5 · 2^23 (PRMT), and the
 * rounded result is the low byte of value + 1.5 · 2^23. Bit-identical to
 * es_dev_sharpen (DESIGN.md §1), see its comment. */
static __device__ __forceinline__ uint32_t
sharpen_word (uint32_t c, uint32_t n, uint32_t s, uint32_t w, uint32_t e, float amount)
{
  const uint32_t magic = ES_DEV_MAGIC_BITS;
  const uint32_t bias = 1020u * 0x00010001u;
  uint32_t lap[2];
#pragma unroll
  for (int odd = 0; odd < 2; odd++)
    {
      const uint32_t sel = odd ? 0x4341 : 0x4240;  /* bytes 1, 3 or 0, 2 into the halves */
      uint32_t sum = __byte_perm (n, 0u, sel) + __byte_perm (s, 0u, sel) + __byte_perm (w, 0u, sel)
                     + __byte_perm (e, 0u, sel);
      lap[odd] = __byte_perm (c, 0u, sel) * 4u + bias - sum;
    }
  uint32_t r[4];
#pragma unroll
  for (int k = 0; k < 4; k++)
    {
      /* Pixel k: byte k of c; its Laplacian is half k/2 of lap[k & 1]. */
      float fc = __fadd_rn (__int_as_float (__byte_perm (c, magic, 0x7650 + k)), -ES_DEV_MAGIC);
      float fl = __fadd_rn (__int_as_float (__byte_perm (lap[k & 1], magic, k < 2 ? 0x7610 : 0x7632)),
                            -(ES_DEV_MAGIC + 1020.0f));
      float value = __fadd_rn (fc, __fmul_rn (amount, fl));
      /* Clamping before rounding gives the same saturated result. */
      value = fminf (fmaxf (value, 0.0f), 255.0f);
      r[k] = __float_as_uint (__fadd_rn (value, ES_DEV_MAGIC));
    }
  return __byte_perm (__byte_perm (r[0], r[1], 0x0040), __byte_perm (r[2], r[3], 0x0040), 0x5410);
}

/* 16 pixels per thread, computed on packed words: three aligned 16-byte
 * loads bring the row and the rows above and below, two byte loads the
 * pixels left and right of the vector. In the last vector of a row the
 * byte after the last pixel is replaced by that pixel (the replicated
 * border), and the lanes beyond the width land in the row's padding: every
 * vector takes the same path, so no thread is left with all the slow ones
 * (a grid stride that is a multiple of the row gives one thread every last
 * vector). */
template <typename T>
static __global__ void __launch_bounds__ (256, 4)
sharpen_fast_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, int vectors,
                     EsSampleMap map, float amount, void *out, size_t out_pitch)
{
  /* 8-bit samples at full scale 255 are their own 8-bit view (DESIGN.md §1). */
  const bool packed = sizeof (T) == 1 && es_dev_view_is_identity (map);

  for (EsVectorWalk walk (vectors); walk.y < height; walk.next ())
    {
      const int x0 = walk.x * ES_CUDA_VECTOR;
      const int y = walk.y;
      const int ys[3] = { max (y - 1, 0), y, min (y + 1, height - 1) };
      uint32_t rows[3][4];

#pragma unroll
      for (int i = 0; i < 3; i++)
        {
          if (packed)
            {
              uint4 q = __ldg ((const uint4 *) ((const uint8_t *) es_dev_row<T> (in, in_pitch, ys[i]) + x0));
              rows[i][0] = q.x, rows[i][1] = q.y, rows[i][2] = q.z, rows[i][3] = q.w;
            }
          else
            {
              uint32_t v[16];
              EsVec16<T>::load (es_dev_row<T> (in, in_pitch, ys[i]), x0, v);
#pragma unroll
              for (int k = 0; k < 4; k++)
                rows[i][k] = es_dev_view (v[4 * k], map) | es_dev_view (v[4 * k + 1], map) << 8
                             | es_dev_view (v[4 * k + 2], map) << 16 | es_dev_view (v[4 * k + 3], map) << 24;
            }
        }
      const uint32_t left = (uint32_t) view_at<T> (in, in_pitch, max (x0 - 1, 0), y, map);
      const uint32_t right = (uint32_t) view_at<T> (in, in_pitch, min (x0 + ES_CUDA_VECTOR, width - 1), y, map);
      uint32_t *c = rows[1];
      const int valid = width - x0;  /* pixels of this vector inside the image */
      if (valid < ES_CUDA_VECTOR)
        {
          /* Byte `valid` becomes a copy of byte valid − 1, the last pixel. */
#pragma unroll
          for (int k = 0; k < 4; k++)
            {
              int b = valid - 4 * k;
              if (b >= 0 && b < 4)
                c[k] = (c[k] & ~(0xffu << (8 * b))) | (right << (8 * b));
            }
        }

      uint32_t result[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          /* The row shifted by one pixel: west takes the last byte of the
           * word before, east the first byte of the word after. */
          uint32_t before = k == 0 ? left << 24 : c[k - 1];
          uint32_t after = k == 3 ? right : c[k + 1];
          uint32_t w = __funnelshift_l (before, c[k], 8);
          uint32_t e = __funnelshift_r (c[k], after, 8);
          result[k] = sharpen_word (c[k], rows[0][k], rows[2][k], w, e, amount);
        }
      *(uint4 *) (es_dev_row_mut<uint8_t> (out, out_pitch, y) + x0) = make_uint4 (result[0], result[1], result[2], result[3]);
    }
}

/* ---- launchers --------------------------------------------------------------- */

enum { SHARPEN_GLOBAL, SHARPEN_MASK, SHARPEN_TILE, SHARPEN_L2_HALO, SHARPEN_FAST };

/* The kernel of one variant for samples of type T: the fast kernel on a
 * grid of resident blocks, the others on 32×8 tiles. */
template <int KERNEL, typename T>
static bool
launch_typed (EsCuda *cuda, const EsCudaFrame *f, float amount, EsError *error)
{
  const EsSampleMap map = es_cuda_sample_map (f);
  const dim3 block (TILE_W, TILE_H);
  const dim3 grid ((unsigned) es_cuda_div_up ((size_t) f->width, TILE_W),
                   es_cuda_grid_y (es_cuda_div_up ((size_t) f->height, TILE_H)));

  /* What was launched, for the run's metrics. */
  const void *kernel;
  dim3 launched_grid = grid, launched_block = block;

  if constexpr (KERNEL == SHARPEN_FAST)
    {
      size_t cells = (size_t) f->vectors * (size_t) f->height;
      unsigned blocks = es_cuda_resident_blocks (cuda, (const void *) sharpen_fast_kernel<T>, 256, 0, cells);
      sharpen_fast_kernel<T><<<blocks, 256, 0, cuda->stream>>> (
        f->in, f->in_pitch, f->width, f->height, f->vectors, map, amount, f->out, f->out_pitch);
      kernel = (const void *) sharpen_fast_kernel<T>;
      launched_grid = dim3 (blocks);
      launched_block = dim3 (256);
    }
  else if constexpr (KERNEL == SHARPEN_GLOBAL)
    {
      sharpen_global_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                  amount, f->out, f->out_pitch);
      kernel = (const void *) sharpen_global_kernel<T>;
    }
  else if constexpr (KERNEL == SHARPEN_MASK)
    {
      sharpen_mask_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                amount, f->out, f->out_pitch);
      kernel = (const void *) sharpen_mask_kernel<T>;
    }
  else if constexpr (KERNEL == SHARPEN_TILE)
    {
      sharpen_tile_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                amount, f->out, f->out_pitch);
      kernel = (const void *) sharpen_tile_kernel<T>;
    }
  else
    {
      sharpen_l2_halo_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                   amount, f->out, f->out_pitch);
      kernel = (const void *) sharpen_l2_halo_kernel<T>;
    }
  ES_CUDA_LAUNCHED (cuda, "sharpen kernel", error);
  es_cuda_note_kernel (cuda, kernel, launched_grid, launched_block, 0, "sharpen kernel", true);
  return true;
}

/* A variant's EsCudaLaunch: its kernel instantiated for the input's samples. */
template <int KERNEL>
static bool
launch (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  if (frame->in_format == ES_FORMAT_U8)
    return launch_typed<KERNEL, uint8_t> (cuda, frame, job->amount, error);
  return launch_typed<KERNEL, uint16_t> (cuda, frame, job->amount, error);
}

/* ---- memory models ------------------------------------------------------------ */

/* Every variant reads each sample from DRAM once and writes a byte a pixel:
 * the rows above and below (the plain kernels' four neighbour loads, the
 * tiles' halo, the fast kernel's three row loads) are the neighbouring
 * threads' and blocks' rows, read a few rows apart and served by L1 and L2.
 * The variants differ in instructions and shared memory, not in DRAM. */
static void
stencil_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);

  (void) job;
  *traffic = (EsTraffic){ pixels * es_model_sample_bytes (extent), pixels, 0 };
}

/* The fast kernel walks whole 16-pixel vectors of the padded rows. */
static void
fast_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_model_vector_pixels (extent);

  (void) job;
  *traffic = (EsTraffic){ pixels * es_model_sample_bytes (extent), pixels, 0 };
}

/* ---- the operation --------------------------------------------------------- */

static const EsVariant sharpen_variants[] = {
  { "global", N_ ("Global memory only"),
    N_ ("Each thread reads its pixel and four neighbours straight from global memory; every pixel is "
    "loaded five times, but the L1 and L2 caches absorb the re-reads, so DRAM sees 2 bytes a pixel as for "
    "every variant. On an H200 at 8192²: 0.51 ms (261 GB/s), a little behind the two shared-memory tiles (0.42 to 0.44 ms)."),
    "NVIDIA CUDA C++ Best Practices Guide, §Device memory spaces",
    false, ES_TRANSFER_DEFAULT, launch<SHARPEN_GLOBAL>, NULL, stencil_memory },
  { "constant-mask", N_ ("3×3 mask in constant memory"),
    N_ ("The stencil weights live in __constant__ memory and the kernel loops over all nine taps: every "
    "thread of a warp reads the same weight at once, which the constant cache broadcasts, but nine "
    "loads and multiplies per pixel (four by zero) make it the slowest variant: on an H200 at 8192², 0.93 ms, 1.8× the "
    "plain global kernel for the same 2 bytes a pixel."),
    "NVIDIA CUDA C++ Programming Guide, §Constant memory; cuda-samples convolutionSeparable",
    false, ES_TRANSFER_DEFAULT, launch<SHARPEN_MASK>, NULL, stencil_memory },
  { "shared-tile", N_ ("Shared-memory tile with halo"),
    /* xgettext:no-c-format */
    N_ ("Each block loads its 32×8 tile plus a one-pixel halo into shared memory once, then every "
    "neighbour read hits shared memory. The halo adds 36% loads from L1 and L2, not DRAM: on an H200 at 8192², 0.44 ms "
    "against 0.51 for the plain global kernel, both at 2 bytes a pixel of DRAM traffic."),
    "NVIDIA CUDA C++ Programming Guide, §Shared memory (tiled stencil)",
    false, ES_TRANSFER_DEFAULT, launch<SHARPEN_TILE>, NULL, stencil_memory },
  { "l2-halo", N_ ("Tile interior in shared, halo from L2"),
    N_ ("The block loads only its interior into shared memory and reads the few neighbours outside the "
    "tile from global memory, where the caches hold them. On an H200 at 8192²: 0.42 ms, just ahead of the plain tile "
    "(0.44 ms): the halo loads it saves are worth a little more than its inside-or-outside test."),
    "NVIDIA CUDA C++ Best Practices Guide, §L2 cache; \"halo from cache\" stencil variants",
    false, ES_TRANSFER_DEFAULT, launch<SHARPEN_L2_HALO>, NULL, stencil_memory },
  { "fast", N_ ("Fast: 16 pixels per thread"),
    N_ ("Each thread sharpens 16 consecutive pixels: three aligned 16-byte loads bring its row and the "
    "rows above and below, the arithmetic runs on packed bytes with exact magic-number float tricks "
    "instead of the quarter-rate conversion unit, and the border vectors take the same path as the others. "
    "On an H200 at 8192²: 0.072 ms, 1.75× the copy floor, 2 bytes a pixel at 1.88 TB/s, 7× the plain global kernel."),
    "NVIDIA CUDA C++ Best Practices Guide, §Coalesced access; vectorized memory access (uint4)",
    true, ES_TRANSFER_DEFAULT, launch<SHARPEN_FAST>, NULL, fast_memory },
};

const EsCudaOp es_cuda_sharpen = ES_CUDA_OP_VARIANTS_ONLY (sharpen_variants);
