/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the teaching variants: the classroom baseline, a per-thread histogram, the c·ln c table in three memories, a shared tile. */
#include <stddef.h>

#include "entropy-internal.h"

#include <stddef.h>

#include "es-cuda-internal.h"

/* The fixed-point c·ln c table for "log-table-constant" (3.8 KiB). */
static __constant__ uint32_t c_clnc_fix[ES_CUDA_MAX_COUNT + 1];

/* The device address of the fixed-point table, without touching device memory. */
static const uint32_t *
clnc_fix_table (const EsCuda *cuda)
{
  return (const uint32_t *) ((const char *) cuda->tables + offsetof (EsCudaTables, clnc_fix));
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
  return h >= ES_ENTROPY_ZERO_BELOW ? (float) h : 0.0f;
}

static __device__ __forceinline__ float
entropy_from_double (double sum, int n)
{
  double h = log ((double) n) - sum / n;
  return h >= ES_ENTROPY_ZERO_BELOW ? (float) h : 0.0f;
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
  uint16_t count[ES_FAST_LEVELS_MAX];

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

/* ---- counts in shared memory, the c·ln c table in global, constant or shared memory ---- */

/* 64 threads a block: 256 levels of uint32 counts fill 64 KiB. Thread t
 * keeps the count of level l at counts[l · 64 + t], so a warp's 32 threads
 * hit 32 different banks whatever levels they count: the counting costs the
 * same in every table variant, and only the table's memory differs. */
#define TABLE_W 32
#define TABLE_H 2
#define TABLE_THREADS (TABLE_W * TABLE_H)

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

/* Dynamic shared memory: the counts (levels × 64 words), then the table
 * (k² + 1 words) for TABLE_SHARED. */
template <int SPACE>
static __global__ void __launch_bounds__ (TABLE_THREADS)
entropy_table_kernel (const uint8_t *lev, size_t lev_pitch, int width, int height, int r, int levels,
                      const uint32_t *global_table, const EsCudaTables *__restrict__ tables,
                      void *out, size_t out_pitch)
{
  extern __shared__ uint32_t shared[];
  uint32_t *count = shared + threadIdx.y * TABLE_W + threadIdx.x;
  uint32_t *shared_table = shared + levels * TABLE_THREADS;
  int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (SPACE == TABLE_SHARED)
    load_shared_table (shared_table, tables, (2 * r + 1) * (2 * r + 1) + 1);
  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    {
      EsWindow w (x, y, r, width, height);
      uint32_t sum = 0;

      for (int l = 0; l < levels; l++)
        count[l * TABLE_THREADS] = 0;
      for (int yy = w.y0; yy <= w.y1; yy++)
        {
          const uint8_t *row = lev + (size_t) yy * lev_pitch;
          for (int xx = w.x0; xx <= w.x1; xx++)
            count[row[xx] * TABLE_THREADS]++;
        }
      for (int l = 0; l < levels; l++)
        sum += table_lookup<SPACE> (count[l * TABLE_THREADS], global_table, shared_table);
      *out_pixel (out, out_pitch, x, y) = entropy_from_fix (sum, w.n (), tables);
    }
}

/* ---- shared tile with halo ---------------------------------------------- */

/* Dynamic shared memory: the counts, the table (k² + 1 words), then the
 * levels tile of (TABLE_W + 2r) × (TABLE_H + 2r) bytes. */
static __global__ void __launch_bounds__ (TABLE_THREADS)
entropy_tile_kernel (const uint8_t *__restrict__ lev, size_t lev_pitch, int width, int height, int r,
                     int levels, const EsCudaTables *__restrict__ tables, void *out, size_t out_pitch)
{
  extern __shared__ uint32_t shared[];
  const int entries = (2 * r + 1) * (2 * r + 1) + 1;
  uint32_t *count = shared + threadIdx.y * TABLE_W + threadIdx.x;
  uint32_t *shared_table = shared + levels * TABLE_THREADS;
  uint8_t *tile = (uint8_t *) (shared_table + entries);
  const int tile_w = TABLE_W + 2 * r;
  const int tile_cells = tile_w * (TABLE_H + 2 * r);
  const int tid = threadIdx.y * TABLE_W + threadIdx.x;
  const int ox = blockIdx.x * TABLE_W;
  const int tiles_y = (height + TABLE_H - 1) / TABLE_H;

  load_shared_table (shared_table, tables, entries);
  /* Every thread of the block runs the same number of iterations, so the
   * barriers inside are reached by all. */
  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y)
    {
      int oy = ty * TABLE_H;
      int x = ox + threadIdx.x;
      int y = oy + threadIdx.y;

      __syncthreads ();  /* the previous tile is no longer read */
      for (int i = tid; i < tile_cells; i += TABLE_THREADS)
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
            count[l * TABLE_THREADS] = 0;
          for (int yy = w.y0; yy <= w.y1; yy++)
            {
              /* Image column xx sits at tile column xx − ox + r ≥ 0. */
              int base = (yy - oy + r) * tile_w + r - ox;
              for (int xx = w.x0; xx <= w.x1; xx++)
                count[tile[base + xx] * TABLE_THREADS]++;
            }
          for (int l = 0; l < levels; l++)
            sum += shared_table[count[l * TABLE_THREADS]];
          *out_pixel (out, out_pitch, x, y) = entropy_from_fix (sum, w.n (), tables);
        }
    }
}

/* The most dynamic shared memory a table or tile kernel asks for: 256
 * levels of counts, the 31×31 table and the largest tile. */
#define TABLE_SMEM_MAX                                                         \
  (ES_FAST_LEVELS_MAX * TABLE_THREADS * 4 + (ES_CUDA_MAX_COUNT + 1) * 4        \
   + (TABLE_W + ES_FAST_WINDOW_MAX - 1) * (TABLE_H + ES_FAST_WINDOW_MAX - 1))

static size_t
table_smem (int levels, int window, bool table, bool tile)
{
  int r = window / 2;
  return (size_t) levels * TABLE_THREADS * 4 + (table ? ((size_t) window * window + 1) * 4 : 0)
         + (tile ? (size_t) (TABLE_W + 2 * r) * (TABLE_H + 2 * r) : 0);
}

/* The teaching kernels: one thread per pixel on 32×2 blocks, reading levels
 * that a first kernel wrote. */
enum { TEACH_NAIVE, TEACH_HISTOGRAM, TEACH_TABLE_GLOBAL, TEACH_TABLE_CONSTANT, TEACH_TABLE_SHARED, TEACH_TILE };

template <int KERNEL>
static bool
launch_teaching (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  const int r = job->window / 2;
  const dim3 block (TABLE_W, TABLE_H);
  const dim3 grid ((unsigned) es_cuda_div_up ((size_t) frame->width, TABLE_W),
                   es_cuda_grid_y (es_cuda_div_up ((size_t) frame->height, TABLE_H)));
  const uint8_t *lev = frame->lev;
  const size_t lp = frame->lev_pitch;
  const int w = frame->width, h = frame->height, l = frame->levels;

  if (!es_cuda_quantize_levels (cuda, frame, error))
    return false;

  if constexpr (KERNEL == TEACH_NAIVE)
    entropy_naive_kernel<<<grid, block, 0, cuda->stream>>> (lev, lp, w, h, r, l, frame->out, frame->out_pitch);
  else if constexpr (KERNEL == TEACH_HISTOGRAM)
    entropy_histogram_kernel<<<grid, block, 0, cuda->stream>>> (lev, lp, w, h, r, l, frame->out,
                                                                frame->out_pitch);
  else if constexpr (KERNEL == TEACH_TABLE_GLOBAL)
    entropy_table_kernel<TABLE_GLOBAL><<<grid, block, table_smem (l, job->window, false, false), cuda->stream>>> (
      lev, lp, w, h, r, l, clnc_fix_table (cuda), cuda->tables, frame->out, frame->out_pitch);
  else if constexpr (KERNEL == TEACH_TABLE_CONSTANT)
    entropy_table_kernel<TABLE_CONSTANT><<<grid, block, table_smem (l, job->window, false, false), cuda->stream>>> (
      lev, lp, w, h, r, l, clnc_fix_table (cuda), cuda->tables, frame->out, frame->out_pitch);
  else if constexpr (KERNEL == TEACH_TABLE_SHARED)
    entropy_table_kernel<TABLE_SHARED><<<grid, block, table_smem (l, job->window, true, false), cuda->stream>>> (
      lev, lp, w, h, r, l, clnc_fix_table (cuda), cuda->tables, frame->out, frame->out_pitch);
  else
    entropy_tile_kernel<<<grid, block, table_smem (l, job->window, true, true), cuda->stream>>> (
      lev, lp, w, h, r, l, cuda->tables, frame->out, frame->out_pitch);
  ES_CUDA_LAUNCHED (cuda, "entropy kernel", error);

  const void *kernel = KERNEL == TEACH_NAIVE           ? (const void *) entropy_naive_kernel
                       : KERNEL == TEACH_HISTOGRAM      ? (const void *) entropy_histogram_kernel
                       : KERNEL == TEACH_TABLE_GLOBAL   ? (const void *) entropy_table_kernel<TABLE_GLOBAL>
                       : KERNEL == TEACH_TABLE_CONSTANT ? (const void *) entropy_table_kernel<TABLE_CONSTANT>
                       : KERNEL == TEACH_TABLE_SHARED   ? (const void *) entropy_table_kernel<TABLE_SHARED>
                                                        : (const void *) entropy_tile_kernel;
  const size_t smem = KERNEL == TEACH_NAIVE || KERNEL == TEACH_HISTOGRAM ? 0
                      : table_smem (l, job->window, KERNEL == TEACH_TABLE_SHARED || KERNEL == TEACH_TILE,
                                    KERNEL == TEACH_TILE);
  es_cuda_note_kernel (cuda, kernel, grid, block, smem, "entropy kernel", true);
  return true;
}

bool
es_cuda_entropy_naive (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return launch_teaching<TEACH_NAIVE> (cuda, frame, job, error);
}

bool
es_cuda_entropy_per_thread_histogram (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return launch_teaching<TEACH_HISTOGRAM> (cuda, frame, job, error);
}

bool
es_cuda_entropy_table_global (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return launch_teaching<TEACH_TABLE_GLOBAL> (cuda, frame, job, error);
}

bool
es_cuda_entropy_table_constant (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return launch_teaching<TEACH_TABLE_CONSTANT> (cuda, frame, job, error);
}

bool
es_cuda_entropy_table_shared (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return launch_teaching<TEACH_TABLE_SHARED> (cuda, frame, job, error);
}

bool
es_cuda_entropy_shared_tile (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  return launch_teaching<TEACH_TILE> (cuda, frame, job, error);
}

/* The constant-memory table and the shared-memory limit of the table and
 * tile kernels, once per device. */
bool
es_cuda_entropy_teaching_init (EsCuda *cuda, EsError *error)
{
  ES_CUDA_TRY (cuda, cudaMemcpyToSymbolAsync (c_clnc_fix, clnc_fix_table (cuda), sizeof c_clnc_fix, 0,
                                              cudaMemcpyDeviceToDevice, cuda->stream),
               "upload of the constant c ln c table", error);
  ES_CUDA_TRY (cuda, cudaStreamSynchronize (cuda->stream), "upload of the constant c ln c table", error);
  /* 256 levels of counts need more than the default 48 KiB. */
  const void *kernels[] = { (const void *) entropy_table_kernel<TABLE_GLOBAL>,
                            (const void *) entropy_table_kernel<TABLE_CONSTANT>,
                            (const void *) entropy_table_kernel<TABLE_SHARED>, (const void *) entropy_tile_kernel };
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    ES_CUDA_TRY (cuda, cudaFuncSetAttribute (kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             TABLE_SMEM_MAX), "shared memory limit", error);
  return true;
}

/* ---- memory models ------------------------------------------------------------ */

/* Every teaching kernel in DRAM: the quantize pass (samples in, levels
 * out), then the levels read once (a 32×2 block's window rows, k + 1 of
 * them, are the next blocks' rows too, read while they are in L1 and L2)
 * and one float written a pixel. */
static void
teaching_dram (const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);

  *traffic = (EsTraffic){ 0, 0, 0 };
  es_model_quantize_pass (extent, pixels, traffic);
  traffic->read_bytes += pixels;
  traffic->write_bytes += pixels * sizeof (float);
}

/* Shared memory a pixel of the table kernels: its L counts zeroed and read
 * back (4 bytes each, twice), its k² cells counted (a 4-byte read and
 * write each); table_lookups more 4-byte reads where the c ln c table is
 * in shared memory. */
static double
table_shared_bytes (const EsJob *job, bool table_in_shared)
{
  const double k2 = (double) job->window * job->window, levels = job->levels;

  return 8 * levels + 8 * k2 + (table_in_shared ? 4 * levels : 0);
}

void
es_cuda_entropy_naive_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  /* Its L·k² level loads a pixel hit L1: DRAM sees the levels once. */
  (void) job;
  teaching_dram (extent, traffic);
}

void
es_cuda_entropy_per_thread_histogram_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  teaching_dram (extent, traffic);
  /* Each thread's L 16-bit counts live in local memory, zeroed and summed
   * for every pixel. While the resident threads' arrays fit in L2 (L ≤ 96
   * on the nominal device) they never reach DRAM; beyond, the share that
   * does not fit makes each pixel's zeroing a write and its sum a read. */
  const double array = 2.0 * job->levels, resident = ES_MODEL_RESIDENT_THREADS * array;
  if (resident > ES_MODEL_L2_BYTES)
    {
      const double missed = 1.0 - ES_MODEL_L2_BYTES / resident, pixels = es_extent_pixels (extent);
      traffic->read_bytes += missed * pixels * array;
      traffic->write_bytes += missed * pixels * array;
    }
}

/* log-table-global and log-table-constant: the table's lookups go to the
 * L1 or the constant cache, not shared memory, so both count the same. */
void
es_cuda_entropy_table_cached_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  teaching_dram (extent, traffic);
  traffic->shared_bytes = es_extent_pixels (extent) * table_shared_bytes (job, false);
}

void
es_cuda_entropy_table_shared_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  teaching_dram (extent, traffic);
  traffic->shared_bytes = es_extent_pixels (extent) * table_shared_bytes (job, true);
}

void
es_cuda_entropy_shared_tile_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  /* The tile's halo loads come from L2 (its rows are the neighbour
   * blocks'), so DRAM sees what the table kernels' does; shared memory
   * adds the tile's writes, (32 + 2r)(2 + 2r) bytes a 64-pixel block, and
   * the k² level reads from it. */
  const int r = job->window / 2;
  const double k2 = (double) job->window * job->window;
  const double staged = (double) (TABLE_W + 2 * r) * (TABLE_H + 2 * r) / TABLE_THREADS;

  teaching_dram (extent, traffic);
  traffic->shared_bytes = es_extent_pixels (extent) * (table_shared_bytes (job, true) + k2 + staged);
}
