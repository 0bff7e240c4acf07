/* SPDX-License-Identifier: MIT */
/* The general variant's path for any window up to 961 cells and 256 bins: shared counts slid down column spans. */
#include <string.h>

#include "entropy-fast-internal.h"

/* The shared-counts kernel of the fast variant (entropy-counts.cu) for
 * column spans of any shape. Each thread owns one output column and slides
 * its window's histogram down a strip of rows; per step down, for each
 * column span (column offset dx, rows y0..y1 of the window), the cell at
 * y + y0 leaves and the cell at y + y1 + 1 enters, in the same column, and
 * the two are taken as a pair (equal bins cancel). As there: 16-bit counts
 * in shared memory laid out so that a warp hits 32 banks whatever its bins
 * (es_cuda_count_lane), each kept as 4·count (the byte offset of its table
 * difference), and exact uint32 sums of round(c ln c · 2^19) differences
 * finished in double. It reads the frame binned by the general kernel's
 * first pass, padded by the window's half extents, so no step tests an
 * edge: void cells (clipped or masked), which that pass marks as bin B,
 * count in one more bin, whose count v the value takes out (n = cells − v,
 * Σ − T[v]), and a window is exactly 0 when its sum is T[n] (a single bin).
 * Two updates a column span and pixel, each two 16-bit loads and stores of
 * counts and two table loads in shared memory besides the two cells'
 * loads: the L1/shared-memory pipe bounds it (Nsight Compute: 66–78 % busy),
 * and its cost grows with the spans, not with B. */
#define SPAN_COUNTS_BLOCK 128
#define SPAN_COUNTS_SMEM_MAX \
  ((ES_CUDA_SPAN_COUNTS_MAX_BINS + 1) * 2 * SPAN_COUNTS_BLOCK + (ES_CUDA_MAX_COUNT + 1) * 4)

typedef struct {
  const uint16_t *centre;  /* the binned frame's cell under output (0, 0) */
  unsigned pitch;          /* in bins */
  int width, height;
  uint32_t bins;           /* B; the void bin is bin B */
  int cells;
  bool voids;              /* clip or a mask: cells can be void */
  bool masked;             /* a void centre is a masked-out pixel */
  bool normalized;
  const EsCudaTables *tables;
  float *out;
  unsigned out_pitch;
  int strip, tiles;
  int n_spans;
  int2 span[ES_CUDA_SPAN_COUNTS_MAX_SPANS];  /* { leave, enter }: offsets from the centre before a step down */
} SpanCountsParams;

/* Shared memory by 32-bit address: each count and table difference is one
 * load or store whatever its type (no 16-bit arithmetic to widen), and a
 * bin's count is one shift-and-add from the thread's base. Volatile, so
 * that they stay in program order among themselves (a count may be loaded
 * right after a store to it). */
static __device__ __forceinline__ uint32_t
shared_u16 (uint32_t address)
{
  uint32_t v;
  asm volatile ("ld.shared.u16 %0, [%1];" : "=r"(v) : "r"(address));
  return v;
}

static __device__ __forceinline__ void
shared_u16_set (uint32_t address, uint32_t v)
{
  asm volatile ("st.shared.u16 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}

static __device__ __forceinline__ uint32_t
shared_u32 (uint32_t address)
{
  uint32_t v;
  asm volatile ("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address));
  return v;
}

/* G spans a group: their 2G cells are loaded before their updates. AHEAD:
 * the next group's loads are issued before this group's updates (where
 * the counts fill shared memory, L1 is small and a load often waits on
 * L2); the spans are then padded to whole groups (p.n_spans), the missing
 * ones leaving and entering the centre cell at once (no change). Otherwise
 * the spans past the last whole group go one at a time. */
template <int G, bool AHEAD>
static __global__ void __launch_bounds__ (SPAN_COUNTS_BLOCK)
entropy_span_counts_kernel (const SpanCountsParams p)
{
  extern __shared__ uint32_t smem[];  /* D[c] = T[c + 1] − T[c], c ≤ cells (D[cells] unused); then the counts */
  const int t = threadIdx.x;
  const EsCudaTables *__restrict__ tables = p.tables;

  for (int i = t; i <= p.cells; i += SPAN_COUNTS_BLOCK)
    smem[i] = i < p.cells ? __ldg (&tables->clnc_fix[i + 1]) - __ldg (&tables->clnc_fix[i]) : 0u;
  __syncthreads ();

  const int x = (int) (blockIdx.x % (unsigned) p.tiles) * SPAN_COUNTS_BLOCK + t;
  const int y_begin = (int) (blockIdx.x / (unsigned) p.tiles) * p.strip;
  if (x >= p.width || y_begin >= p.height)
    return;
  const int y_end = min (y_begin + p.strip, p.height);

  /* Counts are kept as 4·count: the byte offset of their D entry. */
  const uint32_t dbase = (uint32_t) __cvta_generic_to_shared (smem);
  const uint32_t cbase = dbase + 4u * (uint32_t) (p.cells + 1) + es_cuda_count_lane (t);
  const uint32_t void_bin = p.bins;  /* the frame marks void cells as bin B */
  auto count = [&] (uint32_t bin) -> uint32_t { return cbase + (bin << 8); };
  auto diff = [&] (uint32_t c4) -> uint32_t { return shared_u32 (dbase + c4); };

  for (uint32_t b = 0; b <= void_bin; b++)
    shared_u16_set (count (b), 0u);
  uint32_t sum = 0;
  const uint16_t *centre = p.centre + (size_t) y_begin * p.pitch + (unsigned) x;
  for (int s = 0; s < p.n_spans; s++)
    for (int cell = p.span[s].x; cell != p.span[s].y; cell += (int) p.pitch)
      {
        const uint32_t a = count (__ldg (centre + cell)), c4 = shared_u16 (a);
        shared_u16_set (a, c4 + 4u);
        sum += diff (c4);
      }

  /* The window of (x, y): es_entropy_value with the exact single-bin test
   * (T is strictly superadditive, far beyond its rounding: Σ = T[n] only
   * for one bin). The centre is void only where the mask leaves it out. */
  const uint32_t t_full = __ldg (&tables->clnc_fix[p.cells]);
  const double2 li_full = ln_inv_fix (p.cells, tables);
  const double ln_most_full = __ldg (&tables->ln_n[p.bins < (uint32_t) p.cells ? p.bins : (uint32_t) p.cells]);
  float *out_column = p.out + x;
  auto emit = [&] (int y) {
    uint32_t s = sum, t_n = t_full;
    int n = p.cells;
    double2 li = li_full;
    double ln_most = ln_most_full;
    if (p.voids)
      {
        const uint32_t v = shared_u16 (count (void_bin)) >> 2;
        if (v != 0u)
          {
            n -= (int) v;
            s -= __ldg (&tables->clnc_fix[v]);
            t_n = __ldg (&tables->clnc_fix[n]);
            li = ln_inv_fix (n, tables);
            ln_most = __ldg (&tables->ln_n[p.bins < (uint32_t) n ? p.bins : (uint32_t) n]);
          }
      }
    float value;
    if ((p.masked && *centre == void_bin) || n == 0)
      value = __int_as_float (0x7fc00000);
    else if (s == t_n)
      value = 0.0f;
    else
      {
        const double h = __fma_rn (-(double) s, li.y, li.x);
        value = (float) (p.normalized ? h / ln_most : h);
      }
    *(float *) ((char *) out_column + (size_t) (unsigned) y * p.out_pitch) = value;
  };

  /* Spans s to s + g − 1: their leaving and entering cells' bins, from the
   * centre c. */
  auto load = [&] (const uint16_t *c, int s, int g, uint32_t (&leave)[G], uint32_t (&enter)[G]) {
#pragma unroll
    for (int j = 0; j < g; j++)
      {
        const int2 span = p.span[s + j];
        leave[j] = __ldg (c + span.x);
        enter[j] = __ldg (c + span.y);
      }
  };
  /* One cell enters and one leaves; with equal bins (d4 = 0) both counts
   * stay and the two differences cancel. */
  auto swap = [&] (uint32_t bin_in, uint32_t bin_out) {
    const uint32_t a = count (bin_in), b = count (bin_out);
    const uint32_t ca4 = shared_u16 (a), cb4 = shared_u16 (b);
    const uint32_t d4 = a != b ? 4u : 0u;
    const uint32_t cb4_new = cb4 - d4;
    shared_u16_set (a, ca4 + d4);
    shared_u16_set (b, cb4_new);
    sum += diff (ca4) - diff (cb4_new);
  };

  emit (y_begin);
  if (!AHEAD)
    {
      const int whole = p.n_spans / G * G;
      for (int y = y_begin + 1; y < y_end; y++)
        {
          for (int s = 0; s < whole; s += G)
            {
              uint32_t out_bins[G], in_bins[G];
              load (centre, s, G, out_bins, in_bins);
#pragma unroll
              for (int j = 0; j < G; j++)
                swap (in_bins[j], out_bins[j]);
            }
          for (int s = whole; s < p.n_spans; s++)
            {
              uint32_t out_bins[G], in_bins[G];
              load (centre, s, 1, out_bins, in_bins);
              swap (in_bins[0], out_bins[0]);
            }
          centre += p.pitch;
          emit (y);
        }
      return;
    }
  uint32_t leave[G] = {}, enter[G] = {};
  if (y_begin + 1 < y_end)
    load (centre, 0, G, leave, enter);
  for (int y = y_begin + 1; y < y_end; y++)
    {
      for (int s = 0; s < p.n_spans; s += G)
        {
          uint32_t out_bins[G], in_bins[G];
#pragma unroll
          for (int j = 0; j < G; j++)
            out_bins[j] = leave[j], in_bins[j] = enter[j];
          /* The next group's loads, of this step or the next one's first
           * (uniform across the block). */
          if (s + G < p.n_spans)
            load (centre, s + G, G, leave, enter);
          else if (y + 1 < y_end)
            load (centre + p.pitch, 0, G, leave, enter);
#pragma unroll
          for (int j = 0; j < G; j++)
            swap (in_bins[j], out_bins[j]);
        }
      centre += p.pitch;
      emit (y);
    }
}

/* Groups of 4 spans, and ahead: groups of 4 or 8. */
enum { SPAN_COUNTS_4, SPAN_COUNTS_4_AHEAD, SPAN_COUNTS_8_AHEAD, SPAN_COUNTS_KERNELS };
static const void *const span_counts_kernels[SPAN_COUNTS_KERNELS] = {
  (const void *) entropy_span_counts_kernel<4, false>,
  (const void *) entropy_span_counts_kernel<4, true>,
  (const void *) entropy_span_counts_kernel<8, true>,
};

bool
es_cuda_entropy_span_counts (EsCuda *cuda, const EsCudaBinnedJob *job, bool *ran, EsError *error)
{
  SpanCountsParams p;

  *ran = false;
  if (job->bins > ES_CUDA_SPAN_COUNTS_MAX_BINS || job->cells > ES_CUDA_MAX_COUNT || job->n_spans < 1
      || job->n_spans > ES_CUDA_SPAN_COUNTS_MAX_SPANS)
    return true;
  memset (&p, 0, sizeof p);
  p.pitch = job->binned_pitch;
  p.centre = job->binned + (size_t) job->half_h * job->binned_pitch + (unsigned) job->half_w;
  p.width = job->width;
  p.height = job->height;
  p.bins = job->bins;
  p.cells = job->cells;
  p.voids = job->voids;
  p.masked = job->masked;
  p.normalized = job->normalized;
  p.tables = cuda->tables;
  p.out = job->out;
  p.out_pitch = job->out_pitch;
  for (int s = 0; s < job->n_spans; s++)
    {
      const EsSpan *span = &job->column_spans[s];  /* { dx, y0, y1 } */
      p.span[s] = make_int2 (span->x0 * (int) p.pitch + span->dy, (span->x1 + 1) * (int) p.pitch + span->dy);
    }
  p.n_spans = job->n_spans;

  /* Where the resident blocks' counts leave most of the SM's 256 KiB to
   * L1 (and 16 warps or more hide each other's loads), the loads need not
   * go ahead; where they fill shared memory (many bins), a load often
   * misses L1 and goes a group ahead, in groups of 8 unless that pads more
   * than 4 would (measured: PERFORMANCE.md). */
  const size_t smem = (size_t) (p.bins + 1) * 2 * SPAN_COUNTS_BLOCK + (size_t) (p.cells + 1) * 4;
  int resident = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&resident, span_counts_kernels[SPAN_COUNTS_4], SPAN_COUNTS_BLOCK,
                                                     smem) != cudaSuccess)
    (void) cudaGetLastError ();
  const bool l1_left = (size_t) resident * smem <= ((size_t) 128 << 10) && resident * SPAN_COUNTS_BLOCK / 32 >= 16;
  const int variant = l1_left ? SPAN_COUNTS_4
                : es_cuda_div_up ((size_t) p.n_spans, 8) * 8 == es_cuda_div_up ((size_t) p.n_spans, 4) * 4
                  ? SPAN_COUNTS_8_AHEAD
                  : SPAN_COUNTS_4_AHEAD;
  const void *kernel = span_counts_kernels[variant];
  if (variant != SPAN_COUNTS_4)
    {
      const int group = variant == SPAN_COUNTS_8_AHEAD ? 8 : 4;
      p.n_spans = (int) es_cuda_div_up ((size_t) p.n_spans, (size_t) group) * group;
      for (int s = job->n_spans; s < p.n_spans; s++)
        p.span[s] = make_int2 (0, 0);
    }

  /* One wave of blocks, each a tile of columns and a strip of rows; strips
   * of at least the window's height, so that filling a window costs no
   * more than sliding it. */
  p.tiles = (int) es_cuda_div_up ((size_t) p.width, SPAN_COUNTS_BLOCK);
  p.strip = es_cuda_strip_rows (cuda, kernel, SPAN_COUNTS_BLOCK, smem, p.height,
                                p.tiles, 1, 2 * job->half_h + 1);
  const size_t blocks = (size_t) p.tiles * es_cuda_div_up ((size_t) p.height, (size_t) p.strip);

  void *args[] = { &p };
  ES_CUDA_TRY (cuda, cudaLaunchKernel (kernel, dim3 ((unsigned) blocks), dim3 (SPAN_COUNTS_BLOCK), args, smem,
                                       cuda->stream),
               "span-counts entropy kernel", error);
  *ran = true;
  return true;
}

/* 256 bins and the void bin of 16-bit counts for 128 threads, and the
 * table: more than the default 48 KiB of dynamic shared memory. */
bool
es_cuda_entropy_span_counts_init (EsCuda *cuda, EsError *error)
{
  for (int i = 0; i < SPAN_COUNTS_KERNELS; i++)
    ES_CUDA_TRY (cuda, cudaFuncSetAttribute (span_counts_kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             SPAN_COUNTS_SMEM_MAX),
                 "shared memory limit", error);
  return true;
}
