/* Local entropy on the GPU: the classroom baseline, the c·ln c table in three memories, a shared tile, and the fast kernel. */
#include <stddef.h>
#include <string.h>

#include "es-cuda-internal.h"

/* Every variant computes H = ln n − (1/n) Σ c ln c over the clipped window
 * (DESIGN.md §1). The table variants and the general path of "fast" sum
 * round(c ln c · 2^19) exactly in uint32 and finish in double, so they agree
 * bit for bit; "naive" and "per-thread-histogram" take logs in double; the
 * fast kernel sums float entries of c ln c (at most 16 terms below 191). All
 * stay within 2e-6 of a float64 evaluation. */
static const EsVariant entropy_variants[] = {
  { "naive", "Naive: one pass over the window per level",
    "For every level the thread scans its whole window again in global memory, so a 5×5 window "
    "with 16 levels costs 400 loads per pixel: the classroom baseline that the other variants improve on.",
    "Classroom local-entropy exercise (one loop per level)", false },
  { "per-thread-histogram", "Per-thread histogram",
    "Each thread counts its window once into a private array of counts in local memory, trading "
    "space for time: k² loads per pixel instead of L·k².",
    "NVIDIA CUDA C++ Programming Guide, §Local memory", false },
  { "log-table-global", "c·ln c table in global memory",
    "The logarithms become a table of c·ln c read from global memory: no transcendental math, "
    "and the table stays hot in the L1 and L2 caches.",
    "NVIDIA CUDA C++ Best Practices Guide, §Device memory spaces", false },
  { "log-table-constant", "c·ln c table in constant memory",
    "The same table in __constant__ memory: a warp reading one address gets a broadcast, but "
    "threads with different counts read different addresses and the constant cache serializes them.",
    "NVIDIA CUDA C++ Programming Guide, §Constant memory", false },
  { "log-table-shared", "c·ln c table in shared memory",
    "The same table copied into shared memory by each block: 32 banks serve different addresses "
    "in parallel, so divergent lookups no longer serialize.",
    "NVIDIA CUDA C++ Programming Guide, §Shared memory", false },
  { "shared-tile", "Shared-memory tile with halo",
    "Each block stages its tile of levels plus a halo of k/2 cells per side in shared memory, so "
    "the k² window reads of neighbouring threads hit on-chip memory instead of global memory.",
    "NVIDIA CUDA C++ Programming Guide, §Shared memory (tiled stencil); cuda-samples convolutionSeparable", false },
  { "fast", "Fast: packed counters, sliding windows",
    "Counts live as packed 4-bit and 8-bit counters in registers: warp shuffles add k neighbouring "
    "pixels into a row histogram, the window histogram slides down the image one row in and one "
    "row out, c·ln c comes from a bank-conflict-free shared table, and quantization is fused into the load.",
    "NVIDIA CUDA C++ Programming Guide, §Warp shuffle functions; packed (SWAR) counters as in CUB BlockRadixRank", true },
  { "pageable-transfers", "Fast kernel, pageable host memory",
    "The fast kernel, but the image is copied from and to ordinary pageable memory: the driver "
    "stages it through its own pinned buffer, so the upload and download are slower than from "
    "pinned memory.",
    "NVIDIA CUDA C++ Best Practices Guide, §Pinned memory", false },
  { "per-call-alloc", "Fast kernel, buffers allocated per call",
    "The fast kernel, but the device buffers are allocated and freed on every run: cudaMalloc "
    "and cudaFree synchronize and cost far more than the kernel (the time shows in upload and download).",
    "NVIDIA CUDA C++ Best Practices Guide, §Memory allocation", false },
};

const EsVariant *
es_cuda_entropy_variants (size_t *n)
{
  *n = sizeof entropy_variants / sizeof entropy_variants[0];
  return entropy_variants;
}

EsCudaTransfer
es_cuda_entropy_transfer (const char *variant)
{
  if (strcmp (variant, "pageable-transfers") == 0)
    return ES_CUDA_TRANSFER_PAGEABLE;
  if (strcmp (variant, "per-call-alloc") == 0)
    return ES_CUDA_TRANSFER_PER_CALL;
  return ES_CUDA_TRANSFER_STAGED;
}

/* The fixed-point c·ln c table for "log-table-constant" (3.8 KiB). */
static __constant__ uint32_t c_clnc_fix[ES_CUDA_MAX_COUNT + 1];

/* The device address of the fixed-point table, without touching device memory. */
static const uint32_t *
clnc_fix_table (const EsCuda *cuda)
{
  return (const uint32_t *) ((const char *) cuda->tables + offsetof (EsCudaTables, clnc_fix));
}

bool
es_cuda_entropy_init (EsCuda *cuda, EsError *error)
{
  ES_CUDA_TRY (cuda, cudaMemcpyToSymbolAsync (c_clnc_fix, clnc_fix_table (cuda), sizeof c_clnc_fix, 0,
                                              cudaMemcpyDeviceToDevice, cuda->stream),
               "upload of the constant c ln c table", error);
  ES_CUDA_TRY (cuda, cudaStreamSynchronize (cuda->stream), "upload of the constant c ln c table", error);
  return true;
}

/* The clipped window of (x, y) and its pixel count. */
struct EsWindow {
  int x0, x1, y0, y1;

  __device__ __forceinline__
  EsWindow (int x, int y, int r, int width, int height)
    : x0 (max (x - r, 0)), x1 (min (x + r, width - 1)), y0 (max (y - r, 0)), y1 (min (y + r, height - 1))
  {
  }

  __device__ __forceinline__ int
  n () const
  {
    return (x1 - x0 + 1) * (y1 - y0 + 1);
  }
};

/* H from a fixed-point sum; a uniform window may land a hair below zero,
 * which is returned as +0 (never −0), as on the CPU. */
static __device__ __forceinline__ float
entropy_from_fix (uint32_t sum, int n, const EsCudaTables *__restrict__ tables)
{
  double h = __fma_rn (-(double) sum, __ldg (&tables->inv_n_fix[n]), __ldg (&tables->ln_n[n]));
  return h > 0.0 ? (float) h : 0.0f;
}

static __device__ __forceinline__ float
entropy_from_double (double sum, int n)
{
  double h = log ((double) n) - sum / n;
  return h > 0.0 ? (float) h : 0.0f;
}

static __device__ __forceinline__ float *
out_pixel (void *out, size_t out_pitch, int x, int y)
{
  return es_dev_row_mut<float> (out, out_pitch, y) + x;
}

/* ---- naive ------------------------------------------------------------- */

static __global__ void __launch_bounds__ (256)
entropy_naive_kernel (const uint8_t *lev, size_t lev_pitch, int width, int height, int r, int levels,
                      void *out, size_t out_pitch)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    {
      EsWindow w (x, y, r, width, height);
      double sum = 0.0;

      for (int l = 0; l < levels; l++)
        {
          int c = 0;
          for (int yy = w.y0; yy <= w.y1; yy++)
            {
              const uint8_t *row = lev + (size_t) yy * lev_pitch;
              for (int xx = w.x0; xx <= w.x1; xx++)
                c += row[xx] == l;
            }
          if (c > 1)
            sum += c * log ((double) c);
        }
      *out_pixel (out, out_pitch, x, y) = entropy_from_double (sum, w.n ());
    }
}

/* ---- per-thread histogram ---------------------------------------------- */

static __global__ void __launch_bounds__ (256)
entropy_histogram_kernel (const uint8_t *lev, size_t lev_pitch, int width, int height, int r, int levels,
                          void *out, size_t out_pitch)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  uint16_t count[ES_LEVELS_MAX];

  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    {
      EsWindow w (x, y, r, width, height);
      double sum = 0.0;

      for (int l = 0; l < levels; l++)
        count[l] = 0;
      for (int yy = w.y0; yy <= w.y1; yy++)
        {
          const uint8_t *row = lev + (size_t) yy * lev_pitch;
          for (int xx = w.x0; xx <= w.x1; xx++)
            count[row[xx]]++;
        }
      for (int l = 0; l < levels; l++)
        if (count[l] > 1)
          sum += count[l] * log ((double) count[l]);
      *out_pixel (out, out_pitch, x, y) = entropy_from_double (sum, w.n ());
    }
}

/* ---- c·ln c table in global, constant or shared memory ------------------ */

enum { TABLE_GLOBAL, TABLE_CONSTANT, TABLE_SHARED };

template <int SPACE>
static __device__ __forceinline__ uint32_t
table_lookup (int c, const uint32_t *global_table, const uint32_t *shared_table)
{
  if (SPACE == TABLE_GLOBAL)
    return global_table[c];
  if (SPACE == TABLE_CONSTANT)
    return c_clnc_fix[c];
  return shared_table[c];
}

/* Copies entries 0..k² of the table into shared memory; the whole block
 * calls it before any thread returns. */
static __device__ __forceinline__ void
load_shared_table (uint32_t *shared_table, const EsCudaTables *__restrict__ tables, int entries)
{
  int threads = blockDim.x * blockDim.y;

  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < entries; i += threads)
    shared_table[i] = __ldg (&tables->clnc_fix[i]);
  __syncthreads ();
}

template <int SPACE>
static __global__ void __launch_bounds__ (256)
entropy_table_kernel (const uint8_t *lev, size_t lev_pitch, int width, int height, int r, int levels,
                      const uint32_t *global_table, const EsCudaTables *__restrict__ tables,
                      void *out, size_t out_pitch)
{
  extern __shared__ uint32_t shared_table[];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  uint16_t count[ES_LEVELS_MAX];

  if (SPACE == TABLE_SHARED)
    load_shared_table (shared_table, tables, (2 * r + 1) * (2 * r + 1) + 1);
  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    {
      EsWindow w (x, y, r, width, height);
      uint32_t sum = 0;

      for (int l = 0; l < levels; l++)
        count[l] = 0;
      for (int yy = w.y0; yy <= w.y1; yy++)
        {
          const uint8_t *row = lev + (size_t) yy * lev_pitch;
          for (int xx = w.x0; xx <= w.x1; xx++)
            count[row[xx]]++;
        }
      for (int l = 0; l < levels; l++)
        sum += table_lookup<SPACE> (count[l], global_table, shared_table);
      *out_pixel (out, out_pitch, x, y) = entropy_from_fix (sum, w.n (), tables);
    }
}

/* ---- shared tile with halo ---------------------------------------------- */

#define TILE_W 32
#define TILE_H 8

/* Dynamic shared memory: the table (k² + 1 words), then the levels tile of
 * (TILE_W + 2r) × (TILE_H + 2r) bytes. */
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
entropy_tile_kernel (const uint8_t *__restrict__ lev, size_t lev_pitch, int width, int height, int r,
                     int levels, const EsCudaTables *__restrict__ tables, void *out, size_t out_pitch)
{
  extern __shared__ uint32_t shared_table[];
  int entries = (2 * r + 1) * (2 * r + 1) + 1;
  uint8_t *tile = (uint8_t *) (shared_table + entries);
  int tile_w = TILE_W + 2 * r;
  int tile_cells = tile_w * (TILE_H + 2 * r);
  int tid = threadIdx.y * TILE_W + threadIdx.x;
  int ox = blockIdx.x * TILE_W;
  int tiles_y = (height + TILE_H - 1) / TILE_H;
  uint16_t count[ES_LEVELS_MAX];

  load_shared_table (shared_table, tables, entries);
  /* Every thread of the block runs the same number of iterations, so the
   * barriers inside are reached by all. */
  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y)
    {
      int oy = ty * TILE_H;
      int x = ox + threadIdx.x;
      int y = oy + threadIdx.y;

      __syncthreads ();  /* the previous tile is no longer read */
      for (int i = tid; i < tile_cells; i += TILE_W * TILE_H)
        {
          int gx = ox - r + i % tile_w;
          int gy = oy - r + i / tile_w;
          tile[i] = gx >= 0 && gx < width && gy >= 0 && gy < height ? lev[(size_t) gy * lev_pitch + gx] : 0;
        }
      __syncthreads ();

      if (x < width && y < height)
        {
          EsWindow w (x, y, r, width, height);
          uint32_t sum = 0;

          for (int l = 0; l < levels; l++)
            count[l] = 0;
          for (int yy = w.y0; yy <= w.y1; yy++)
            {
              /* Image column xx sits at tile column xx − ox + r ≥ 0. */
              int base = (yy - oy + r) * tile_w + r - ox;
              for (int xx = w.x0; xx <= w.x1; xx++)
                count[tile[base + xx]]++;
            }
          for (int l = 0; l < levels; l++)
            sum += shared_table[count[l]];
          *out_pixel (out, out_pitch, x, y) = entropy_from_fix (sum, w.n (), tables);
        }
    }
}

/* ---- fast: packed counters in registers (k ≤ 7, L ≤ 16) ------------------ */

/* Each warp owns 32 − (k−1) output columns of a strip of rows; lane j loads
 * column x0 − r + j. A lane's one-hot level is a 16-nibble counter vector
 * (levels 0–7 in lo, 8–15 in hi); shuffles add the k lanes j..j+k−1 into the
 * histogram of one window row (counts ≤ 7 fit a nibble). Spread to bytes
 * that hold 4·count (≤ 196 for k = 7: byte offsets into the float table),
 * the window histogram slides down the strip: add the entering row, drop the
 * row that entered k steps before (a ring of k registers sets). */
#define FAST_BLOCK 256
#define FAST_STRIP 64

template <int K>
static __device__ __forceinline__ void
row_histogram (uint32_t &lo, uint32_t &hi)
{
  const unsigned all = 0xffffffffu;
  uint32_t a_lo = lo + __shfl_down_sync (all, lo, 1);
  uint32_t a_hi = hi + __shfl_down_sync (all, hi, 1);  /* lanes j, j+1 */

  if (K == 3)
    {
      lo = a_lo + __shfl_down_sync (all, lo, 2);
      hi = a_hi + __shfl_down_sync (all, hi, 2);
      return;
    }
  uint32_t b_lo = a_lo + __shfl_down_sync (all, a_lo, 2);
  uint32_t b_hi = a_hi + __shfl_down_sync (all, a_hi, 2);  /* j..j+3 */
  if (K == 5)
    {
      lo = b_lo + __shfl_down_sync (all, lo, 4);
      hi = b_hi + __shfl_down_sync (all, hi, 4);
      return;
    }
  b_lo += __shfl_down_sync (all, a_lo, 4);
  b_hi += __shfl_down_sync (all, a_hi, 4);  /* j..j+5 */
  lo = b_lo + __shfl_down_sync (all, lo, 6);
  hi = b_hi + __shfl_down_sync (all, hi, 6);  /* j..j+6 */
}

/* c ln c for the count in byte b of w (the byte holds 4·c: a byte offset). */
static __device__ __forceinline__ float
clnc_at (uint32_t w, unsigned b, const float *table)
{
  return *(const float *) ((const char *) table + __byte_perm (w, 0u, 0x4440u + b));
}

/* Σ c ln c over the 4 counters of a word, then over the 4 words: a pairwise
 * tree keeps the rounding error near that of a single addition. */
static __device__ __forceinline__ float
clnc_word (uint32_t w, const float *table)
{
  return __fadd_rn (__fadd_rn (clnc_at (w, 0, table), clnc_at (w, 1, table)),
                    __fadd_rn (clnc_at (w, 2, table), clnc_at (w, 3, table)));
}

static __device__ __forceinline__ float
sum_clnc (const uint32_t win[4], const float *table)
{
  return __fadd_rn (__fadd_rn (clnc_word (win[0], table), clnc_word (win[1], table)),
                    __fadd_rn (clnc_word (win[2], table), clnc_word (win[3], table)));
}

/* At most 64 registers for k ≤ 5 (four blocks per SM), 85 for k = 7. */
template <int K, typename T>
static __global__ void __launch_bounds__ (FAST_BLOCK, K <= 5 ? 4 : 3)
entropy_fast_kernel (const void *__restrict__ in, unsigned in_pitch, int width, int height, EsSampleMap map,
                     const EsCudaTables *__restrict__ tables, void *out, unsigned out_pitch,
                     int groups, size_t items)
{
  constexpr int R = K / 2;
  constexpr int OUT_W = 32 - (K - 1);
  constexpr int N_MAX = K * K;
  __shared__ float s_clnc[N_MAX + 1];
  __shared__ float2 s_ln_inv[N_MAX + 1];

  for (int i = threadIdx.x; i <= N_MAX; i += blockDim.x)
    {
      s_clnc[i] = tables->clnc_f[i];
      s_ln_inv[i] = tables->ln_inv_f[i];
    }
  __syncthreads ();

  /* One work item (column group × strip) per warp: all branches on it are
   * uniform across the warp, as the shuffles require. */
  const size_t item = (size_t) blockIdx.x * (FAST_BLOCK / 32) + threadIdx.x / 32;
  if (item >= items)
    return;
  const int lane = threadIdx.x & 31;
  const int out_x0 = (int) (item % (size_t) groups) * OUT_W;
  const int strip = (int) (item / (size_t) groups);
  const int x = out_x0 - R + lane;
  const bool column_in = x >= 0 && x < width;
  const int xc = out_x0 + lane;
  const bool writer = lane < OUT_W && xc < width;
  const int cols = min (xc + R, width - 1) - max (xc - R, 0) + 1;
  const int y_begin = strip * FAST_STRIP;
  const int y_end = min (y_begin + FAST_STRIP, height);
  const int steps = y_end - y_begin + 2 * R;

  uint32_t win[4] = { 0, 0, 0, 0 };
  uint32_t ring[K][4];
#pragma unroll
  for (int j = 0; j < K; j++)
#pragma unroll
    for (int q = 0; q < 4; q++)
      ring[j][q] = 0;

  for (int base = 0; base < steps; base += K)
    {
#pragma unroll
      for (int j = 0; j < K; j++)
        {
          const int step = base + j;
          if (step >= steps)
            break;
          /* Row e enters; ring[j] holds the row that entered K steps ago. */
          const int e = y_begin - R + step;
          uint32_t lo = 0, hi = 0;
          if (column_in && e >= 0 && e < height)
            {
              /* Pitches fit 32 bits (ES_MAX_SIDE): one wide multiply. */
              uint32_t v = __ldg ((const T *) ((const char *) in + (unsigned long long) (unsigned) e * in_pitch) + x);
              uint32_t shift = es_dev_level (v, map) * 4u;
              /* 1 << shift in a 64-bit lo:hi pair; the clamping funnel
               * shift yields 0 for shifts of 32 or more (and "negative"
               * ones, which wrap to large unsigned values). */
              lo = __funnelshift_lc (0u, 1u, shift);
              hi = __funnelshift_lc (0u, 1u, shift - 32u);
            }
          row_histogram<K> (lo, hi);

          uint32_t spread[4] = {
            (lo << 2) & 0x3c3c3c3cu,  /* levels 0, 2, 4, 6 */
            (lo >> 2) & 0x3c3c3c3cu,  /* levels 1, 3, 5, 7 */
            (hi << 2) & 0x3c3c3c3cu,  /* levels 8, 10, 12, 14 */
            (hi >> 2) & 0x3c3c3c3cu,  /* levels 9, 11, 13, 15 */
          };
          /* Every byte of the result is a true count × 4 (0..196), so the
           * word arithmetic never carries between bytes in the end. */
#pragma unroll
          for (int q = 0; q < 4; q++)
            {
              win[q] = win[q] + spread[q] - ring[j][q];
              ring[j][q] = spread[q];
            }

          const int y = e - R;
          if (y >= y_begin && writer)
            {
              int rows = min (y + R, height - 1) - max (y - R, 0) + 1;
              float2 ln_inv = s_ln_inv[rows * cols];
              float h = __fmaf_rn (-sum_clnc (win, s_clnc), ln_inv.y, ln_inv.x);
              *((float *) ((char *) out + (unsigned long long) (unsigned) y * out_pitch) + xc) = h > 0.0f ? h : 0.0f;
            }
        }
    }
}

/* ---- fast, general path: one sliding histogram per column ---------------- */

#define SLIDE_BLOCK 128
#define SLIDE_STRIP 64

/* Any window and any number of levels: each thread owns a column and a strip
 * of rows, keeps its window's counts in local memory and moves the exact
 * fixed-point sum by table differences as rows enter and leave: 2k updates
 * per pixel instead of k². */
static __global__ void __launch_bounds__ (SLIDE_BLOCK)
entropy_slide_kernel (const uint8_t *__restrict__ lev, size_t lev_pitch, int width, int height, int r,
                      int levels, const EsCudaTables *__restrict__ tables, void *out, size_t out_pitch,
                      int strips)
{
  extern __shared__ uint32_t shared_table[];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  uint16_t count[ES_LEVELS_MAX];

  load_shared_table (shared_table, tables, (2 * r + 1) * (2 * r + 1) + 1);
  if (x >= width)
    return;
  const int x0 = max (x - r, 0);
  const int x1 = min (x + r, width - 1);
  const int cols = x1 - x0 + 1;

  for (int strip = blockIdx.y; strip < strips; strip += gridDim.y)
    {
      int y_begin = strip * SLIDE_STRIP;
      int y_end = min (y_begin + SLIDE_STRIP, height);
      uint32_t sum = 0;

      for (int l = 0; l < levels; l++)
        count[l] = 0;
      for (int yy = max (y_begin - r, 0); yy <= min (y_begin + r, height - 1); yy++)
        {
          const uint8_t *row = lev + (size_t) yy * lev_pitch;
          for (int xx = x0; xx <= x1; xx++)
            {
              int c = count[row[xx]]++;
              sum += shared_table[c + 1] - shared_table[c];
            }
        }

      for (int y = y_begin;;)
        {
          int rows = min (y + r, height - 1) - max (y - r, 0) + 1;
          *out_pixel (out, out_pitch, x, y) = entropy_from_fix (sum, rows * cols, tables);
          if (++y >= y_end)
            break;
          if (y - r - 1 >= 0)
            {
              const uint8_t *row = lev + (size_t) (y - r - 1) * lev_pitch;
              for (int xx = x0; xx <= x1; xx++)
                {
                  int c = count[row[xx]]--;
                  sum += shared_table[c - 1] - shared_table[c];
                }
            }
          if (y + r < height)
            {
              const uint8_t *row = lev + (size_t) (y + r) * lev_pitch;
              for (int xx = x0; xx <= x1; xx++)
                {
                  int c = count[row[xx]]++;
                  sum += shared_table[c + 1] - shared_table[c];
                }
            }
        }
    }
}

/* ---- launchers ----------------------------------------------------------- */

template <int K, typename T>
static void
launch_fast (EsCuda *cuda, const EsCudaFrame *frame)
{
  const int out_w = 32 - (K - 1);
  int groups = (int) es_cuda_div_up ((size_t) frame->width, out_w);
  size_t items = (size_t) groups * es_cuda_div_up ((size_t) frame->height, FAST_STRIP);
  unsigned blocks = (unsigned) es_cuda_div_up (items, FAST_BLOCK / 32);

  entropy_fast_kernel<K, T><<<blocks, FAST_BLOCK, 0, cuda->stream>>> (
    frame->in, (unsigned) frame->in_pitch, frame->width, frame->height, es_cuda_sample_map (frame), cuda->tables,
    frame->out, (unsigned) frame->out_pitch, groups, items);
}

template <typename T>
static bool
launch_fast_for_window (EsCuda *cuda, const EsCudaFrame *frame, int window)
{
  switch (window)
    {
    case 3: launch_fast<3, T> (cuda, frame); return true;
    case 5: launch_fast<5, T> (cuda, frame); return true;
    case 7: launch_fast<7, T> (cuda, frame); return true;
    default: return false;
    }
}

static bool
run_fast (EsCuda *cuda, const EsCudaFrame *frame, int window, EsError *error)
{
  int r = window / 2;
  size_t table_bytes = ((size_t) window * window + 1) * sizeof (uint32_t);

  if (frame->levels <= 16 && window <= ES_CUDA_FAST_MAX_WINDOW)
    {
      bool launched = frame->in_format == ES_FORMAT_U8 ? launch_fast_for_window<uint8_t> (cuda, frame, window)
                                                        : launch_fast_for_window<uint16_t> (cuda, frame, window);
      if (launched)
        {
          ES_CUDA_LAUNCHED (cuda, "fast entropy kernel", error);
          return true;
        }
    }

  if (!es_cuda_quantize_levels (cuda, frame, error))
    return false;
  int strips = (int) es_cuda_div_up ((size_t) frame->height, SLIDE_STRIP);
  dim3 grid ((unsigned) es_cuda_div_up ((size_t) frame->width, SLIDE_BLOCK), es_cuda_grid_y ((size_t) strips));
  entropy_slide_kernel<<<grid, SLIDE_BLOCK, table_bytes, cuda->stream>>> (
    frame->lev, frame->lev_pitch, frame->width, frame->height, r, frame->levels, cuda->tables, frame->out,
    frame->out_pitch, strips);
  ES_CUDA_LAUNCHED (cuda, "sliding entropy kernel", error);
  return true;
}

bool
es_cuda_entropy_run (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, const char *variant,
                     EsError *error)
{
  const int r = job->window / 2;
  const size_t table_bytes = ((size_t) job->window * job->window + 1) * sizeof (uint32_t);
  const dim3 block (TILE_W, TILE_H);
  const dim3 grid ((unsigned) es_cuda_div_up ((size_t) frame->width, TILE_W),
                   es_cuda_grid_y (es_cuda_div_up ((size_t) frame->height, TILE_H)));
  const uint8_t *lev = frame->lev;
  const size_t lp = frame->lev_pitch;
  const int w = frame->width, h = frame->height, l = frame->levels;

  if (strcmp (variant, "fast") == 0 || es_cuda_entropy_transfer (variant) != ES_CUDA_TRANSFER_STAGED)
    return run_fast (cuda, frame, job->window, error);

  if (strcmp (variant, "naive") != 0 && strcmp (variant, "per-thread-histogram") != 0
      && strcmp (variant, "log-table-global") != 0 && strcmp (variant, "log-table-constant") != 0
      && strcmp (variant, "log-table-shared") != 0 && strcmp (variant, "shared-tile") != 0)
    return es_error_set (error, ES_ERROR_INVALID, "unknown entropy variant \"%s\"", variant);

  /* The teaching variants read levels that a first kernel wrote. */
  if (!es_cuda_quantize_levels (cuda, frame, error))
    return false;

  if (strcmp (variant, "naive") == 0)
    entropy_naive_kernel<<<grid, block, 0, cuda->stream>>> (lev, lp, w, h, r, l, frame->out, frame->out_pitch);
  else if (strcmp (variant, "per-thread-histogram") == 0)
    entropy_histogram_kernel<<<grid, block, 0, cuda->stream>>> (lev, lp, w, h, r, l, frame->out,
                                                                frame->out_pitch);
  else if (strcmp (variant, "log-table-global") == 0)
    entropy_table_kernel<TABLE_GLOBAL><<<grid, block, 0, cuda->stream>>> (
      lev, lp, w, h, r, l, clnc_fix_table (cuda), cuda->tables, frame->out, frame->out_pitch);
  else if (strcmp (variant, "log-table-constant") == 0)
    entropy_table_kernel<TABLE_CONSTANT><<<grid, block, 0, cuda->stream>>> (
      lev, lp, w, h, r, l, clnc_fix_table (cuda), cuda->tables, frame->out, frame->out_pitch);
  else if (strcmp (variant, "log-table-shared") == 0)
    entropy_table_kernel<TABLE_SHARED><<<grid, block, table_bytes, cuda->stream>>> (
      lev, lp, w, h, r, l, clnc_fix_table (cuda), cuda->tables, frame->out, frame->out_pitch);
  else
    {
      size_t tile_bytes = (size_t) (TILE_W + 2 * r) * (TILE_H + 2 * r);
      entropy_tile_kernel<<<grid, block, table_bytes + tile_bytes, cuda->stream>>> (
        lev, lp, w, h, r, l, cuda->tables, frame->out, frame->out_pitch);
    }
  ES_CUDA_LAUNCHED (cuda, "entropy kernel", error);
  return true;
}
