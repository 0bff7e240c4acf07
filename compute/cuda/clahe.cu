/* SPDX-License-Identifier: MIT */
/* CLAHE on the GPU: per-tile histograms four ways, clipped CDFs as LUTs, a bilinear blend; bit-identical to OpenCV. */
#include "es-cuda-internal.h"
#include "es-i18n.h"

/* Why four variants: CLAHE counts a histogram per tile, turns each into a
 * LUT (clip, redistribute, scan), then blends four tiles' LUTs per pixel.
 * With OpenCV's default 8×8 grid an 8192² image has only 64 tiles of a
 * million pixels each, so where the counting happens decides the speed:
 * global atomics queue on 64 × 256 counters; a block per tile leaves most
 * SMs idle; chunks of a tile counted in shared memory keep every SM busy.
 *
 * Every float step is OpenCV's, rounded as its scalar code rounds it (no
 * FMA contraction: __fmul_rn, __fadd_rn), so results are bit-identical to
 * the CPU backend and to cv::CLAHE. */

/* The geometry of one job (DESIGN.md §1, CLAHE): the grid's tiles over the
 * image padded by reflect-101 to a multiple of the grid (es_clahe_geometry),
 * and the constants both passes use, computed on the host as OpenCV does. */
typedef struct {
  int width, height;     /* the image */
  int tiles_x, tiles_y;
  int tile_w, tile_h;    /* of the padded image */
  int bins;              /* 256 or 65536 */
  int clip;              /* counts a bin keeps; 0: no clipping */
  float lut_scale;       /* (bins − 1) / tile area */
  float inv_tile_w, inv_tile_h;
  /* The image rows that the frame holds, frame row y − band_y0: the whole
   * image (0, height), or one band of a banded run (EsCudaOp.count_band). */
  int band_y0, band_rows;
} ClaheGrid;

/* cv::borderInterpolate (BORDER_REFLECT_101) of a padded coordinate past
 * the end: padding is only ever added after the last row and column. */
static __device__ __forceinline__ int
reflect_101 (int p, int n)
{
  if (n == 1)
    return 0;
  while (p >= n || p < 0)
    p = p >= n ? 2 * n - 2 - p : -p;
  return p;
}

/* ---- histograms ------------------------------------------------------------- */

/* histogram[tile · bins + v]: one counter per tile and sample value, in global
 * memory; rows and columns of the padding count the sample they reflect.
 * Each padded row counts in the launch whose frame holds the image row it
 * reflects, so that bands of any height, added one after the other, count
 * every padded row once, as the whole image does. */

/* The frame row that padded row py counts, or −1 when the image row it
 * reflects lies in another band. */
static __device__ __forceinline__ int
counted_row (const ClaheGrid &g, int py)
{
  const int y = (py < g.height ? py : reflect_101 (py, g.height)) - g.band_y0;
  return y >= 0 && y < g.band_rows ? y : -1;
}

/* One atomic a pixel on global counters: the frame's own rows, then the
 * padding rows below the image (fewer than the grid's rows). */
template <typename T>
static __global__ void __launch_bounds__ (256)
histogram_global_kernel (const void *__restrict__ in, size_t in_pitch, ClaheGrid g, uint32_t *histogram)
{
  const int padded_w = g.tile_w * g.tiles_x;
  const int padding_rows = g.tile_h * g.tiles_y - g.height;
  const long long pixels = (long long) padded_w * (g.band_rows + padding_rows);

  for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < pixels;
       i += (long long) gridDim.x * blockDim.x)
    {
      const int px = (int) (i % padded_w), r = (int) (i / padded_w);
      const int py = r < g.band_rows ? g.band_y0 + r : g.height + (r - g.band_rows);
      const int fy = counted_row (g, py);
      if (fy < 0)
        continue;
      const int tile = (py / g.tile_h) * g.tiles_x + px / g.tile_w;
      const int x = px < g.width ? px : reflect_101 (px, g.width);
      atomicAdd (&histogram[(size_t) tile * g.bins + __ldg (es_dev_row<T> (in, in_pitch, fy) + x)], 1u);
    }
}

/* Rows of a tile that one block of the shared-memory histograms counts. */
#define CHUNK_ROWS 32
#define HIST_THREADS 256

/* Counts one chunk of rows of one tile (blockIdx.y: the tile, blockIdx.x: the
 * chunk) into a block-private histogram in shared memory. Interior columns
 * are read 16 at a time on the row's vector grid; the reflected columns of
 * the last tile column one at a time. */
static __device__ __forceinline__ void
count_chunk_u8 (const void *in, size_t in_pitch, const ClaheGrid &g, int tile, int chunk, uint32_t *bins)
{
  const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
  const int x0 = tx * g.tile_w, x1 = x0 + g.tile_w;
  int row0 = ty * g.tile_h + chunk * CHUNK_ROWS;
  int row1 = min (row0 + CHUNK_ROWS, (ty + 1) * g.tile_h);
  /* Image rows outside the frame are cut off at once; padding rows below
   * the image are checked one by one (counted_row). */
  if (row1 <= g.height)
    {
      row0 = max (row0, g.band_y0);
      row1 = min (row1, g.band_y0 + g.band_rows);
      if (row0 >= row1)
        return;
    }
  const int inside_end = max (x0, min (x1, g.width)); /* columns read from the row itself */
  const int v0 = x0 / ES_CUDA_VECTOR, v1 = (inside_end + ES_CUDA_VECTOR - 1) / ES_CUDA_VECTOR;
  /* A tile wholly in the padding (more tiles than columns) reads no
   * vector: v0 may lie past the row's last one. */
  const int vectors = inside_end > x0 ? v1 - v0 : 0;

  /* (row, vector) cells in one flat loop: a 1024-pixel-wide tile has only
   * 64 vectors a row, which would leave most of the block idle. */
  const int rows = row1 - row0, cells = rows * vectors;
  for (int i = threadIdx.x; i < cells; i += blockDim.x)
    {
      const int fy = counted_row (g, row0 + i / vectors), xs = (v0 + i % vectors) * ES_CUDA_VECTOR;
      uint32_t s[16];

      if (fy < 0)
        continue;
      EsVec16<uint8_t>::load (es_dev_row<uint8_t> (in, in_pitch, fy), xs, s);
      if (xs >= x0 && xs + ES_CUDA_VECTOR <= inside_end)
        {
#pragma unroll
          for (int k = 0; k < 16; k++)
            atomicAdd (&bins[s[k]], 1u);
        }
      else
        {
#pragma unroll
          for (int k = 0; k < 16; k++)
            if (xs + k >= x0 && xs + k < inside_end)
              atomicAdd (&bins[s[k]], 1u);
        }
    }
  const int padding = x1 - inside_end;
  for (int i = threadIdx.x; i < rows * padding; i += blockDim.x)
    {
      const int fy = counted_row (g, row0 + i / padding), px = inside_end + i % padding;
      if (fy >= 0)
        atomicAdd (&bins[__ldg (es_dev_row<uint8_t> (in, in_pitch, fy) + reflect_101 (px, g.width))], 1u);
    }
}

static __device__ __forceinline__ void
clear_bins (uint32_t *bins, int n)
{
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    bins[i] = 0;
  __syncthreads ();
}

static __device__ __forceinline__ void
merge_bins (const uint32_t *bins, uint32_t *tile_histogram)
{
  __syncthreads ();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (bins[i] != 0)
      atomicAdd (&tile_histogram[i], bins[i]);
}

/* blockIdx.y: the tile after first_tile (a band reaches a few tile rows). */
static __global__ void __launch_bounds__ (HIST_THREADS)
histogram_shared_kernel (const void *__restrict__ in, size_t in_pitch, ClaheGrid g, int first_tile,
                         uint32_t *histogram)
{
  __shared__ uint32_t bins[256];
  const int tile = first_tile + (int) blockIdx.y;

  clear_bins (bins, 256);
  count_chunk_u8 (in, in_pitch, g, tile, blockIdx.x, bins);
  merge_bins (bins, histogram + (size_t) tile * 256);
}

/* ---- clip, redistribute, CDF: a tile's LUT -------------------------------------- */

/* saturate_cast<T>(sum · lut_scale): the count converted to float, one
 * float multiply, rounded half to even (cvRound), saturated. */
template <typename T>
static __device__ __forceinline__ T
lut_value (uint32_t sum, float lut_scale)
{
  const int r = __float2int_rn (__fmul_rn (__uint2float_rn (sum), lut_scale));
  const int top = sizeof (T) == 1 ? 255 : 65535;
  return (T) min (max (r, 0), top);
}

/* The 8-bit LUT of one tile from its 256 counts, by every thread of a block
 * of at least 256 (thread k < 256 owns bin k; the others only keep the
 * barriers company): clip each bin at the limit, spread the clipped counts
 * evenly (batch), then the residual one each on every step-th bin from 0,
 * as OpenCV's loop does; then the inclusive scan. */
static __device__ void
build_lut_u8 (uint32_t count, const ClaheGrid &g, uint8_t *lut)
{
  __shared__ uint32_t warp_sums[32];
  __shared__ uint32_t clipped_total;
  const int k = threadIdx.x, lane = k & 31, warp = k >> 5;
  const bool owner = k < 256;
  uint32_t h = owner ? count : 0;

  if (g.clip > 0)
    {
      uint32_t excess = h > (uint32_t) g.clip ? h - (uint32_t) g.clip : 0;
      h -= excess;
      excess = __reduce_add_sync (0xffffffffu, excess);
      if (k == 0)
        clipped_total = 0;
      __syncthreads ();
      if (lane == 0 && excess != 0)
        atomicAdd (&clipped_total, excess);
      __syncthreads ();
      const uint32_t clipped = clipped_total;
      const uint32_t batch = clipped / 256u, residual = clipped - batch * 256u;
      if (owner)
        {
          h += batch;
          if (residual != 0)
            {
              const uint32_t step = max (256u / residual, 1u);
              if ((uint32_t) k % step == 0 && (uint32_t) k / step < residual)
                h++;
            }
        }
    }
  /* Inclusive scan: in the warp, then over the eight warps' totals. */
  uint32_t sum = h;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1)
    {
      const uint32_t up = __shfl_up_sync (0xffffffffu, sum, d);
      if (lane >= d)
        sum += up;
    }
  if (lane == 31)
    warp_sums[warp] = sum;
  __syncthreads ();
  if (!owner)
    return;
  for (int w = 0; w < warp; w++)
    sum += warp_sums[w];
  lut[k] = lut_value<uint8_t> (sum, g.lut_scale);
}

/* The 16-bit LUT of one tile from its 65536 counts in global memory, by a
 * block of 1024 threads, each owning 64 consecutive bins: the same steps as
 * build_lut_u8, the scan over the threads' partial sums. */
#define LUT16_THREADS 1024
#define LUT16_PER_THREAD (65536 / LUT16_THREADS)

static __device__ void
build_lut_u16 (const uint32_t *counts, const ClaheGrid &g, uint16_t *lut)
{
  __shared__ uint32_t warp_sums[LUT16_THREADS / 32];
  __shared__ uint32_t clipped_total;
  const int k = threadIdx.x, lane = k & 31, warp = k >> 5;
  const int first = k * LUT16_PER_THREAD;
  uint32_t batch = 0, residual = 0, step = 1;

  if (g.clip > 0)
    {
      uint32_t excess = 0;
      for (int i = 0; i < LUT16_PER_THREAD; i++)
        {
          const uint32_t h = __ldcg (&counts[first + i]);
          excess += h > (uint32_t) g.clip ? h - (uint32_t) g.clip : 0;
        }
      excess = __reduce_add_sync (0xffffffffu, excess);
      if (k == 0)
        clipped_total = 0;
      __syncthreads ();
      if (lane == 0)
        atomicAdd (&clipped_total, excess);
      __syncthreads ();
      batch = clipped_total / 65536u;
      residual = clipped_total - batch * 65536u;
      step = residual != 0 ? max (65536u / residual, 1u) : 1u;
    }
  /* Bin i after clipping and redistribution. */
  auto clipped_bin = [&] (int i) -> uint32_t {
    uint32_t h = __ldcg (&counts[i]);
    if (g.clip <= 0)
      return h;
    h = min (h, (uint32_t) g.clip) + batch;
    return h + ((uint32_t) i % step == 0 && (uint32_t) i / step < residual ? 1u : 0u);
  };
  uint32_t total = 0;
  for (int i = 0; i < LUT16_PER_THREAD; i++)
    total += clipped_bin (first + i);
  /* Exclusive prefix of the threads' totals. */
  uint32_t sum = total;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1)
    {
      const uint32_t up = __shfl_up_sync (0xffffffffu, sum, d);
      if (lane >= d)
        sum += up;
    }
  if (lane == 31)
    warp_sums[warp] = sum;
  __syncthreads ();
  if (warp == 0)
    {
      uint32_t w = warp_sums[lane];
#pragma unroll
      for (int d = 1; d < 32; d <<= 1)
        {
          const uint32_t up = __shfl_up_sync (0xffffffffu, w, d);
          if (lane >= d)
            w += up;
        }
      warp_sums[lane] = w;
    }
  __syncthreads ();
  sum = sum - total + (warp > 0 ? warp_sums[warp - 1] : 0);
  for (int i = 0; i < LUT16_PER_THREAD; i++)
    {
      sum += clipped_bin (first + i);
      lut[first + i] = lut_value<uint16_t> (sum, g.lut_scale);
    }
}

/* One block a tile: the LUT from the tile's counts in `histogram`. */
static __global__ void __launch_bounds__ (256)
lut_u8_kernel (const uint32_t *histogram, ClaheGrid g, uint8_t *luts)
{
  const size_t tile = blockIdx.x;
  build_lut_u8 (__ldcg (&histogram[tile * 256 + threadIdx.x]), g, luts + tile * 256);
}

static __global__ void __launch_bounds__ (LUT16_THREADS)
lut_u16_kernel (const uint32_t *histogram, ClaheGrid g, uint16_t *luts)
{
  const size_t tile = blockIdx.x;
  build_lut_u16 (histogram + tile * 65536, g, luts + tile * 65536);
}

/* ---- fused: one block a tile ----------------------------------------------------- */

#define FUSED_THREADS 1024

/* The whole tile counted by one block into shared memory, then its LUT
 * built there: no global histogram, no second launch, but only
 * tiles_x · tiles_y blocks. In bands (BUILD_LUT false) a tile's LUT waits
 * for every band, so the block merges its band's counts into the global
 * histogram instead; blockIdx.x is then the tile after first_tile. */
template <bool BUILD_LUT>
static __global__ void __launch_bounds__ (FUSED_THREADS)
fused_u8_kernel (const void *__restrict__ in, size_t in_pitch, ClaheGrid g, int first_tile, uint32_t *histogram,
                 uint8_t *luts)
{
  __shared__ uint32_t bins[256];
  const int chunks = (g.tile_h + CHUNK_ROWS - 1) / CHUNK_ROWS;
  const int tile = first_tile + (int) blockIdx.x;

  clear_bins (bins, 256);
  for (int chunk = 0; chunk < chunks; chunk++)
    count_chunk_u8 (in, in_pitch, g, tile, chunk, bins);
  if (BUILD_LUT)
    {
      __syncthreads ();
      build_lut_u8 (threadIdx.x < 256 ? bins[threadIdx.x] : 0u, g, luts + (size_t) tile * 256);
    }
  else
    merge_bins (bins, histogram + (size_t) tile * 256);
}

/* ---- chunked histograms whose last block builds the tile's LUT -------------------- */

/* histogram[tiles · 256 + tile] counts the chunks of each tile that merged. */
static __global__ void __launch_bounds__ (HIST_THREADS)
histogram_lut_kernel (const void *__restrict__ in, size_t in_pitch, ClaheGrid g, uint32_t *histogram,
                      uint8_t *luts)
{
  __shared__ uint32_t bins[256];
  __shared__ bool last;
  const int tile = blockIdx.y;
  const int tiles = g.tiles_x * g.tiles_y;
  uint32_t *tile_histogram = histogram + (size_t) tile * 256;

  clear_bins (bins, 256);
  count_chunk_u8 (in, in_pitch, g, tile, blockIdx.x, bins);
  merge_bins (bins, tile_histogram);
  /* Publish this block's counts before counting it as merged. */
  __threadfence ();
  __syncthreads ();
  if (threadIdx.x == 0)
    last = atomicAdd (&histogram[(size_t) tiles * 256 + tile], 1u) == gridDim.x - 1u;
  __syncthreads ();
  if (last)
    {
      __threadfence ();
      build_lut_u8 (__ldcg (&tile_histogram[threadIdx.x]), g, luts + (size_t) tile * 256);
    }
}

/* ---- the blend ------------------------------------------------------------------ */

/* Where a coordinate falls between tile centres, as OpenCV computes it in
 * float: t = c / tile − 0.5, the tiles floor(t) and floor(t) + 1 (clamped to
 * the grid), the weight of the second t − floor(t). */
typedef struct {
  int first, second;
  int cell; /* floor(t) + 1, clamped to 0..tiles: the cell between two tile centres */
  float weight, weight_first;
} ClaheSpan;

/* The float of a small integer (|n| < 2^22) and back, rounded half to even,
 * by adding 1.5 · 2^23 (ES_DEV_MAGIC): exact, and on the FP32 and integer
 * pipes. The conversion instructions (I2F, F2I, FRND) run at a quarter of
 * their rate, and the blend needed seven a pixel. */
static __device__ __forceinline__ float
small_float (int n)
{
  return __fadd_rn (__int_as_float (ES_DEV_MAGIC_BITS + n), -ES_DEV_MAGIC);
}

static __device__ __forceinline__ int
round_small (float v)
{
  return __float_as_int (__fadd_rn (v, ES_DEV_MAGIC)) - ES_DEV_MAGIC_BITS;
}

static __device__ __forceinline__ ClaheSpan
clahe_span (int c, float inv_tile, int tiles)
{
  const float t = __fsub_rn (__fmul_rn (small_float (c), inv_tile), 0.5f);
  /* floor(t): the nearest integer, one less where that lies above t. */
  int below = round_small (t);
  float below_f = small_float (below);
  if (below_f > t)
    {
      below--;
      below_f = __fsub_rn (below_f, 1.0f);
    }
  ClaheSpan s;
  s.weight = __fsub_rn (t, below_f);
  s.weight_first = __fsub_rn (1.0f, s.weight);
  s.first = min (max (below, 0), tiles - 1); /* columns past the width: the row's padding */
  s.second = min (below + 1, tiles - 1);
  s.cell = min (below + 1, tiles);
  return s;
}

/* (l11·xa1 + l12·xa)·ya1 + (l21·xa1 + l22·xa)·ya, each step rounded as
 * OpenCV's scalar loop rounds it (no FMA), then saturate_cast. */
template <typename T>
static __device__ __forceinline__ uint32_t
blend (uint32_t l11, uint32_t l12, uint32_t l21, uint32_t l22, const ClaheSpan &sx, const ClaheSpan &sy)
{
  const float top = __fadd_rn (__fmul_rn (small_float ((int) l11), sx.weight_first),
                               __fmul_rn (small_float ((int) l12), sx.weight));
  const float bottom = __fadd_rn (__fmul_rn (small_float ((int) l21), sx.weight_first),
                                  __fmul_rn (small_float ((int) l22), sx.weight));
  const float r = __fadd_rn (__fmul_rn (top, sy.weight_first), __fmul_rn (bottom, sy.weight));
  const int top_value = sizeof (T) == 1 ? 255 : 65535;
  return (uint32_t) min (max (round_small (r), 0), top_value);
}

/* The 8-bit blend reads one word a pixel: for each cell between tile
 * centres ((tiles_y + 1) × (tiles_x + 1) of them, the edge cells repeating
 * the edge tiles as OpenCV's clamps do) and each value, the four LUT entries
 * around it, top-left in the low byte. Built once the LUTs are. */
static __global__ void __launch_bounds__ (256)
pack_cells_kernel (const uint8_t *__restrict__ luts, ClaheGrid g, uint32_t *cells)
{
  const int cell = blockIdx.x, cx = cell % (g.tiles_x + 1), cy = cell / (g.tiles_x + 1);
  const int x1 = max (cx - 1, 0), x2 = min (cx, g.tiles_x - 1);
  const int y1 = max (cy - 1, 0), y2 = min (cy, g.tiles_y - 1);
  const int v = threadIdx.x;
  auto lut = [&] (int ty, int tx) { return (uint32_t) __ldg (&luts[((size_t) ty * g.tiles_x + tx) * 256 + v]); };

  cells[(size_t) cell * 256 + v] = lut (y1, x1) | lut (y1, x2) << 8 | lut (y2, x1) << 16 | lut (y2, x2) << 24;
}

/* Byte k of a packed word as a float, exactly: PRMT puts it under the
 * exponent of 1.5 · 2^23 (small_float without the add). */
static __device__ __forceinline__ float
packed_float (uint32_t word, int k)
{
  return __fadd_rn (__int_as_float ((int) __byte_perm (word, (uint32_t) ES_DEV_MAGIC_BITS, 0x7650 + k)),
                    -ES_DEV_MAGIC);
}

/* 16 output pixels a thread: a row's tile rows and weights once, each
 * pixel's tile columns and weights, then its four LUT entries: one packed
 * word (8-bit) or four reads (16-bit). */
template <typename T>
static __global__ void __launch_bounds__ (256)
blend_kernel (const void *__restrict__ in, size_t in_pitch, int vectors, ClaheGrid g, const T *__restrict__ luts,
              const uint32_t *__restrict__ cells, void *out, size_t out_pitch)
{
  const uint32_t bins = (uint32_t) g.bins;

  for (EsVectorWalk walk (vectors); walk.y < g.band_rows; walk.next ())
    {
      const int x0 = walk.x * ES_CUDA_VECTOR;
      const ClaheSpan sy = clahe_span (g.band_y0 + walk.y, g.inv_tile_h, g.tiles_y);
      uint32_t v[16];

      EsVec16<T>::load (es_dev_row<T> (in, in_pitch, walk.y), x0, v);
      if constexpr (sizeof (T) == 1)
        {
          const uint32_t *row = cells + (size_t) sy.cell * (g.tiles_x + 1) * 256;
#pragma unroll
          for (int k = 0; k < 16; k++)
            {
              const ClaheSpan sx = clahe_span (x0 + k, g.inv_tile_w, g.tiles_x);
              const uint32_t w = __ldg (&row[(uint32_t) sx.cell * 256u + v[k]]);
              const float top = __fadd_rn (__fmul_rn (packed_float (w, 0), sx.weight_first),
                                           __fmul_rn (packed_float (w, 1), sx.weight));
              const float bottom = __fadd_rn (__fmul_rn (packed_float (w, 2), sx.weight_first),
                                              __fmul_rn (packed_float (w, 3), sx.weight));
              const float r = __fadd_rn (__fmul_rn (top, sy.weight_first), __fmul_rn (bottom, sy.weight));
              v[k] = (uint32_t) min (max (round_small (r), 0), 255);
            }
          es_dev_store16 (es_dev_row_mut<uint8_t> (out, out_pitch, walk.y), x0, v);
        }
      else
        {
          const T *row1 = luts + (size_t) sy.first * g.tiles_x * bins;
          const T *row2 = luts + (size_t) sy.second * g.tiles_x * bins;
          T *o = es_dev_row_mut<T> (out, out_pitch, walk.y);
#pragma unroll
          for (int k = 0; k < 16; k++)
            {
              const ClaheSpan sx = clahe_span (x0 + k, g.inv_tile_w, g.tiles_x);
              const uint32_t a = (uint32_t) sx.first * bins + v[k], b = (uint32_t) sx.second * bins + v[k];
              o[x0 + k] = (T) blend<T> (__ldg (&row1[a]), __ldg (&row1[b]), __ldg (&row2[a]), __ldg (&row2[b]), sx,
                                        sy);
            }
        }
    }
}

/* ---- launchers ----------------------------------------------------------------
 * A 16-bit image's 65536 bins a tile do not fit a block's shared memory, so
 * every variant counts those in global memory (as global-atomics does,
 * where 64 tiles spread the atomics over 4 M counters) and builds each
 * tile's LUT with a block of its own. */

/* Which kernels count the tiles, in the order of the variant table
 * (clahe_variants): every variant takes a 16-bit image to the
 * global-atomics kernels. */
enum { COUNT_GLOBAL, COUNT_SHARED, COUNT_TILE_BLOCK, COUNT_FAST };

/* The grid of a job on a width × height image, the frame holding every row. */
static ClaheGrid
image_grid (const EsJob *job, int width, int height, EsFormat format)
{
  EsClaheGeometry geometry;
  ClaheGrid g;

  es_clahe_geometry (job, width, height, &geometry);
  g.width = width;
  g.height = height;
  g.tiles_x = job->tile_columns;
  g.tiles_y = job->tile_rows;
  g.tile_w = geometry.tile_width;
  g.tile_h = geometry.tile_height;
  g.bins = format == ES_FORMAT_U8 ? 256 : 65536;
  g.clip = es_clahe_clip_count (job->clip, g.tile_w * g.tile_h, g.bins);
  g.lut_scale = (float) (g.bins - 1) / (float) (g.tile_w * g.tile_h);
  g.inv_tile_w = 1.0f / (float) g.tile_w;
  g.inv_tile_h = 1.0f / (float) g.tile_h;
  g.band_y0 = 0;
  g.band_rows = height;
  return g;
}

static ClaheGrid
clahe_grid (const EsJob *job, const EsCudaFrame *whole)
{
  return image_grid (job, whole->width, whole->height, whole->in_format);
}

/* The same grid for a band of the whole image (bands.cu's frame of image
 * rows [y_origin, y_origin + height)). */
static ClaheGrid
band_grid (const EsJob *job, const EsCudaFrame *whole, const EsCudaFrame *band)
{
  ClaheGrid g = clahe_grid (job, whole);

  g.band_y0 = band->y_origin;
  g.band_rows = band->height;
  return g;
}

static int
clahe_tiles (const ClaheGrid &g)
{
  return g.tiles_x * g.tiles_y;
}

/* The tiles whose counts the frame's rows reach, a run of whole tile rows:
 * those that hold its rows and, down to the last tile row, those whose
 * padding reflects one of them. */
static void
reached_tiles (const ClaheGrid &g, int *first, int *count)
{
  const int band_end = g.band_y0 + g.band_rows;
  int last_row = (band_end - 1) / g.tile_h;

  for (int py = g.height; py < g.tile_h * g.tiles_y; py++)
    {
      const int y = es_border_index (py, g.height, ES_BORDER_MIRROR);
      if (y >= g.band_y0 && y < band_end)
        last_row = py / g.tile_h > last_row ? py / g.tile_h : last_row;
    }
  *first = g.band_y0 / g.tile_h * g.tiles_x;
  *count = (last_row + 1) * g.tiles_x - *first;
}

/* The LUTs' buffer: every tile's LUT, then (8-bit) the packed cells. */
static size_t
lut_bytes (const ClaheGrid &g, size_t sample)
{
  return (size_t) clahe_tiles (g) * (size_t) g.bins * sample;
}

static size_t
cell_count (const ClaheGrid &g)
{
  return (size_t) (g.tiles_x + 1) * (size_t) (g.tiles_y + 1);
}

/* The counts (every tile's bins, then a merged-chunks counter a tile) and
 * the maps (the LUTs, then at 8 bits the cells) of a job on the whole
 * image: EsCudaOp.tile_sizes. */
static void
tile_sizes (const EsJob *job, int width, int height, EsFormat format, size_t *counts, size_t *map_bytes)
{
  const ClaheGrid g = image_grid (job, width, height, format);
  const size_t tiles = (size_t) clahe_tiles (g);
  const bool narrow = g.bins == 256;

  *counts = tiles * (size_t) g.bins + tiles;
  *map_bytes = lut_bytes (g, narrow ? 1 : 2) + (narrow ? cell_count (g) * 256 * sizeof (uint32_t) : 0);
}

/* The counts, cleared, and room for the maps. */
static bool
reserve (EsCuda *cuda, const EsJob *job, const EsCudaFrame *whole, EsError *error)
{
  size_t counts, map_bytes;

  tile_sizes (job, whole->width, whole->height, whole->in_format, &counts, &map_bytes);
  if (!es_cuda_device_reserve (cuda, &cuda->tile_counts, counts * sizeof (uint32_t), "CLAHE histograms", error)
      || !es_cuda_device_reserve (cuda, &cuda->tile_maps, map_bytes, "CLAHE LUTs", error))
    return false;
  ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->tile_counts.ptr, 0, counts * sizeof (uint32_t), cuda->stream),
               "histogram reset", error);
  return true;
}

/* Adds the frame's rows to the counts. COUNT_FAST's last chunk of a tile
 * builds the LUT, so it is launched whole (launch_fast); in bands it
 * counts as shared-chunks does, and the tile-block kernel merges its
 * tiles' counts instead of building their LUTs. */
static bool
count_rows (EsCuda *cuda, int counting, const EsCudaFrame *f, const ClaheGrid &g, EsError *error)
{
  uint32_t *counts = (uint32_t *) cuda->tile_counts.ptr;
  int first, tiles;

  reached_tiles (g, &first, &tiles);
  if (g.bins == 65536 || counting == COUNT_GLOBAL)
    {
      const size_t pixels = (size_t) g.tile_w * g.tiles_x * (size_t) (g.band_rows + g.tile_h * g.tiles_y - g.height);
      const unsigned blocks = es_cuda_blocks (cuda, pixels, 256);
      if (g.bins == 256)
        histogram_global_kernel<uint8_t><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, g, counts);
      else
        histogram_global_kernel<uint16_t><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, g, counts);
      ES_CUDA_LAUNCHED (cuda, "CLAHE histogram kernel", error);
      es_cuda_note_kernel (cuda,
                           g.bins == 256 ? (const void *) histogram_global_kernel<uint8_t>
                                         : (const void *) histogram_global_kernel<uint16_t>,
                           blocks, 256, 0, "CLAHE histogram kernel", true);
    }
  else if (counting == COUNT_TILE_BLOCK)
    {
      fused_u8_kernel<false><<<tiles, FUSED_THREADS, 0, cuda->stream>>> (f->in, f->in_pitch, g, first, counts,
                                                                         NULL);
      ES_CUDA_LAUNCHED (cuda, "CLAHE tile-block histogram kernel", error);
      es_cuda_note_kernel (cuda, (const void *) fused_u8_kernel<false>, (unsigned) tiles, FUSED_THREADS, 0,
                           "CLAHE tile-block histogram kernel", true);
    }
  else
    {
      const dim3 grid ((unsigned) es_cuda_div_up ((size_t) g.tile_h, CHUNK_ROWS), (unsigned) tiles);
      histogram_shared_kernel<<<grid, HIST_THREADS, 0, cuda->stream>>> (f->in, f->in_pitch, g, first, counts);
      ES_CUDA_LAUNCHED (cuda, "CLAHE histogram kernel", error);
      es_cuda_note_kernel (cuda, (const void *) histogram_shared_kernel, grid, HIST_THREADS, 0,
                           "CLAHE histogram kernel", true);
    }
  return true;
}

/* The LUTs from the counts, a block a tile. */
static bool
build_luts (EsCuda *cuda, const ClaheGrid &g, EsError *error)
{
  const uint32_t *counts = (const uint32_t *) cuda->tile_counts.ptr;
  const bool narrow = g.bins == 256;

  if (narrow)
    lut_u8_kernel<<<clahe_tiles (g), 256, 0, cuda->stream>>> (counts, g, (uint8_t *) cuda->tile_maps.ptr);
  else
    lut_u16_kernel<<<clahe_tiles (g), LUT16_THREADS, 0, cuda->stream>>> (counts, g,
                                                                         (uint16_t *) cuda->tile_maps.ptr);
  ES_CUDA_LAUNCHED (cuda, "CLAHE LUT kernel", error);
  es_cuda_note_kernel (cuda, narrow ? (const void *) lut_u8_kernel : (const void *) lut_u16_kernel,
                       (unsigned) clahe_tiles (g), narrow ? 256 : LUT16_THREADS, 0, "CLAHE LUT kernel", false);
  return true;
}

/* At 8 bits, the cells that the blend reads, packed from the LUTs. */
static bool
pack_cells (EsCuda *cuda, const ClaheGrid &g, EsError *error)
{
  if (g.bins != 256)
    return true;
  pack_cells_kernel<<<(unsigned) cell_count (g), 256, 0, cuda->stream>>> (
    (const uint8_t *) cuda->tile_maps.ptr, g, (uint32_t *) ((char *) cuda->tile_maps.ptr + lut_bytes (g, 1)));
  ES_CUDA_LAUNCHED (cuda, "CLAHE cell kernel", error);
  es_cuda_note_kernel (cuda, (const void *) pack_cells_kernel, (unsigned) cell_count (g), 256, 0,
                       "CLAHE cell kernel", false);
  return true;
}

/* The frame's output rows from its input rows and the maps. */
static bool
blend_rows (EsCuda *cuda, const EsCudaFrame *f, const ClaheGrid &g, EsError *error)
{
  const unsigned blocks = es_cuda_blocks (cuda, (size_t) f->vectors * (size_t) g.band_rows, 256);
  const uint32_t *cells = (const uint32_t *) ((const char *) cuda->tile_maps.ptr + lut_bytes (g, 1));

  if (g.bins == 256)
    blend_kernel<uint8_t><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, f->vectors, g,
                                                             (const uint8_t *) cuda->tile_maps.ptr, cells, f->out,
                                                             f->out_pitch);
  else
    blend_kernel<uint16_t><<<blocks, 256, 0, cuda->stream>>> (f->in, f->in_pitch, f->vectors, g,
                                                              (const uint16_t *) cuda->tile_maps.ptr, NULL, f->out,
                                                              f->out_pitch);
  ES_CUDA_LAUNCHED (cuda, "CLAHE blend kernel", error);
  es_cuda_note_kernel (cuda,
                       g.bins == 256 ? (const void *) blend_kernel<uint8_t> : (const void *) blend_kernel<uint16_t>,
                       blocks, 256, 0, "CLAHE blend kernel", false);
  return true;
}

/* The whole image: counts, LUTs, cells, blend. The tile-block and fast
 * kernels build the LUTs as they count (8-bit only). */
static bool
run_whole (EsCuda *cuda, int counting, const EsCudaFrame *f, const EsJob *job, EsError *error)
{
  const ClaheGrid g = clahe_grid (job, f);
  const int path = g.bins == 65536 ? COUNT_GLOBAL : counting;

  if (!reserve (cuda, job, f, error))
    return false;
  if (path == COUNT_TILE_BLOCK)
    {
      fused_u8_kernel<true><<<clahe_tiles (g), FUSED_THREADS, 0, cuda->stream>>> (
        f->in, f->in_pitch, g, 0, NULL, (uint8_t *) cuda->tile_maps.ptr);
      ES_CUDA_LAUNCHED (cuda, "CLAHE fused kernel", error);
      es_cuda_note_kernel (cuda, (const void *) fused_u8_kernel<true>, (unsigned) clahe_tiles (g), FUSED_THREADS, 0,
                           "CLAHE fused kernel", true);
    }
  else if (path == COUNT_FAST)
    {
      const dim3 grid ((unsigned) es_cuda_div_up ((size_t) g.tile_h, CHUNK_ROWS), (unsigned) clahe_tiles (g));
      histogram_lut_kernel<<<grid, HIST_THREADS, 0, cuda->stream>>> (
        f->in, f->in_pitch, g, (uint32_t *) cuda->tile_counts.ptr, (uint8_t *) cuda->tile_maps.ptr);
      ES_CUDA_LAUNCHED (cuda, "CLAHE histogram and LUT kernel", error);
      es_cuda_note_kernel (cuda, (const void *) histogram_lut_kernel, grid, HIST_THREADS, 0,
                           "CLAHE histogram and LUT kernel", true);
    }
  else if (!count_rows (cuda, path, f, g, error) || !build_luts (cuda, g, error))
    return false;
  return pack_cells (cuda, g, error) && blend_rows (cuda, f, g, error);
}

static bool
launch_global (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return run_whole (cuda, COUNT_GLOBAL, frame, job, error);
}

static bool
launch_shared (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return run_whole (cuda, COUNT_SHARED, frame, job, error);
}

static bool
launch_fused (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return run_whole (cuda, COUNT_TILE_BLOCK, frame, job, error);
}

static bool
launch_fast (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return run_whole (cuda, COUNT_FAST, frame, job, error);
}

/* ---- memory models ------------------------------------------------------------------ */

/* Every variant: the counts cleared (cudaMemsetAsync, tiles × (bins + 1)
 * words), the histogram pass reading the image padded to the grid (the
 * reflected rows and columns are read again), the counts written back and
 * read by the LUT kernel (the tile-block kernel keeps them in shared
 * memory; the fast kernel's last chunk of a tile reads them from L2), the
 * LUTs written; at 8 bits the cells of four LUT entries packed from them;
 * then the blend reads every sample again (16-sample vectors of the padded
 * rows), the LUTs or cells once (they sit in L2: 16 KiB at 8 bits, 8 MiB
 * at 16), and writes the result in the input's depth. The atomics land in
 * L2 or shared memory. */
template <int COUNTING>
static void
clahe_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  EsClaheGeometry g;
  const bool wide = extent->format == ES_FORMAT_U16;
  const double sample = es_model_sample_bytes (extent);
  const double vectors = es_model_vector_pixels (extent);

  es_clahe_geometry (job, extent->width, extent->height, &g);
  const double tiles = (double) job->tile_columns * job->tile_rows, bins = wide ? 65536 : 256;
  const double counts = (tiles * bins + tiles) * 4, luts = tiles * bins * sample;
  const double cells = wide ? 0 : (job->tile_columns + 1.0) * (job->tile_rows + 1.0) * 256 * 4;
  const int path = wide ? COUNT_GLOBAL : COUNTING;

  *traffic = (EsTraffic){ 0, 0, 0 };
  traffic->write_bytes += counts;
  traffic->read_bytes += (double) g.padded_width * g.padded_height * sample;
  if (path != COUNT_TILE_BLOCK)
    traffic->write_bytes += counts;
  if (path == COUNT_GLOBAL || path == COUNT_SHARED)
    traffic->read_bytes += counts;
  traffic->write_bytes += luts;
  traffic->read_bytes += luts + cells;
  traffic->write_bytes += cells;
  traffic->read_bytes += vectors * sample;
  traffic->write_bytes += vectors * sample;
}

/* ---- the operation ---------------------------------------------------------------- */

/* Every variant computes OpenCV's definition; the peers' presets have other
 * tiles, clipping and blends, and run on the CPU (the engine says so). */
static const char *
presets_on_cpu (const EsJob *job)
{
  return job->clahe.kind != ES_CLAHE_OPENCV ? "the skimage and matlab presets run on the CPU" : NULL;
}

static const EsVariant clahe_variants[] = {
  { "global-atomics", N_ ("Global atomics"),
    N_ ("Every pixel adds one to its tile's bin in global memory: at 8×8 tiles an 8-bit image has only "
    "64 × 256 counters, and every SM queues on the same few addresses in L2. On an H200 at 8192²: 1.64 ms for 3 bytes a "
    "pixel of DRAM traffic (123 GB/s), 10× the shared-memory variants."),
    "NVIDIA CUDA C++ Programming Guide, §Atomic functions",
    false, ES_TRANSFER_DEFAULT, launch_global, presets_on_cpu, clahe_memory<COUNT_GLOBAL> },
  { "shared-chunks", N_ ("Shared-memory chunks"),
    N_ ("Blocks count 32-row chunks of a tile into 256 bins of shared memory and merge them with 256 "
    "global atomics: the contended updates move on chip, and every SM has chunks to count. On an H200 at 8192²: 0.169 ms, "
    "2.9× the copy floor, the 3 bytes a pixel at 1.19 TB/s."),
    "NVIDIA technical blog, \"GPU Pro Tip: Fast Histograms Using Shared Atomics on Maxwell\"",
    false, ES_TRANSFER_DEFAULT, launch_shared, presets_on_cpu, clahe_memory<COUNT_SHARED> },
  { "tile-block", N_ ("One block a tile"),
    /* xgettext:no-c-format */
    N_ ("One block counts its whole tile in shared memory, then clips it and scans its LUT without "
    "leaving the SM: no global histogram and one launch fewer, but an 8×8 grid gives 64 blocks for "
    "132 SMs. On an H200 at 8192²: 0.197 ms, 17% slower than shared chunks."),
    "OpenCV's CUDA CLAHE (cudaimgproc: one block a tile)",
    false, ES_TRANSFER_DEFAULT, launch_fused, presets_on_cpu, clahe_memory<COUNT_TILE_BLOCK> },
  { "fast", N_ ("Chunks, last block builds the LUT"),
    N_ ("Shared-memory chunks as in shared-chunks, and the last chunk of each tile to merge builds that "
    "tile's LUT (threadfence reduction): every SM busy, two kernels in all, and the blend reads its "
    "16 pixels with one 16-byte load. On an H200 at 8192²: 0.168 ms, 2.9× the copy floor, the 3 bytes "
    "a pixel at 1.2 TB/s."),
    "CUDA C++ Programming Guide, §Memory fence functions; cuda-samples threadFenceReduction",
    true, ES_TRANSFER_DEFAULT, launch_fast, presets_on_cpu, clahe_memory<COUNT_FAST> },
};

/* ---- in bands: the tile passes ------------------------------------------------------
 * The CPU's two passes (EsTilePasses) on the devices: each band's rows added
 * to the counts the variant's way, the LUTs and cells built once from the
 * counts of every band (bands.cu sums the devices' counts and copies the
 * maps to every device), then each band blended. */

static bool
count_band (EsCuda *cuda, const EsVariant *variant, const EsJob *job, const EsCudaFrame *whole,
            const EsCudaFrame *band, EsError *error)
{
  const int counting = (int) (variant - clahe_variants);

  return count_rows (cuda, counting == COUNT_FAST ? COUNT_SHARED : counting, band, band_grid (job, whole, band),
                     error);
}

static bool
build_maps (EsCuda *cuda, const EsJob *job, const EsCudaFrame *whole, EsError *error)
{
  const ClaheGrid g = clahe_grid (job, whole);

  return build_luts (cuda, g, error) && pack_cells (cuda, g, error);
}

static bool
blend_band (EsCuda *cuda, const EsJob *job, const EsCudaFrame *whole, const EsCudaFrame *band, EsError *error)
{
  return blend_rows (cuda, band, band_grid (job, whole, band), error);
}

const EsCudaOp es_cuda_clahe = {
  .variants = clahe_variants,
  .n_variants = ES_CUDA_N_VARIANTS (clahe_variants),
  .uses_levels = false,
  .init = NULL,
  .launch_rows = NULL,
  .reduce_band = NULL,
  .combine = NULL,
  .apply_band = NULL,
  .tile_sizes = tile_sizes,
  .count_band = count_band,
  .build_maps = build_maps,
  .blend_band = blend_band,
  .frame_pad = NULL,
  .slow_path = NULL,
  .volumes = false,
  .run_volume = NULL,
};
