/* SPDX-License-Identifier: MIT */
/* The general variant's path for any window up to 961 cells and 256 bins: shared counts slid down column spans. */
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "entropy-fast-internal.h"

/* The shared-counts kernel of the fast variant (entropy-counts.cu) for
 * column spans of any shape. Each thread owns one output column and slides
 * its window's histogram down a strip of rows; per step down, for each
 * column span (column offset dx, rows y0..y1 of the window), the cell at
 * y + y0 leaves and the cell at y + y1 + 1 enters, in the same column, and
 * the two are taken as a pair (equal bins cancel). As there: 16-bit counts
 * in shared memory laid out so that a warp hits 32 banks whatever its bins
 * (es_cuda_count_lane), each kept as 4·count (the byte offset of its table
 * difference), and exact uint64 sums of round(c ln c · 2^29) differences
 * (32-bit entries, ES_CUDA_FINE_BITS) finished in double. It reads the
 * frame binned by the general kernel's first pass, padded by the window's
 * half extents, so no step tests an edge; 8-bit where the bins (and a void
 * mark) fit a byte, else 16-bit. Void cells count in bin B where a mask
 * makes them (the first pass marks them so): the value takes that bin's
 * count v out (n = cells − v, Σ − T[v]). Without a mask, cells clipped off
 * the image are bin 0 in the frame, so that 256 bins fit a byte: those in
 * columns outside are taken out of bin 0's count once, when the thread's
 * first window is filled (they stay bin 0 down the column), and the v in
 * rows outside, which follow from the row near the top and bottom, out of
 * its count c in the value (Σ − T[c] + T[c − v]); the rows between test
 * nothing. A window is exactly 0 when its sum is T[n] (a single bin). Two
 * updates a column span and pixel, each two 16-bit loads and stores of
 * counts and two table loads in shared memory besides the two cells'
 * loads: the L1/shared-memory pipe bounds it (Nsight Compute: 66–78 %
 * busy), and its cost grows with the spans, not with B. Where four spans'
 * cells lie side by side in a row (rectangles, the flat top and bottom of
 * large disks) and the loads do not go ahead, two aligned words of the
 * 8-bit frame bring the four. */
#define SPAN_COUNTS_BLOCK 128
#define SPAN_COUNTS_SMEM_MAX \
  ((ES_CUDA_SPAN_COUNTS_MAX_BINS + 1) * 2 * SPAN_COUNTS_BLOCK + (ES_CUDA_MAX_COUNT + 1) * 4)

typedef struct {
  const void *centre;      /* the binned frame's cell under output (0, 0) */
  unsigned pitch;          /* in bins */
  int width, height;
  uint32_t bins;           /* B; the void bin is bin B */
  int cells;
  bool masked;             /* void cells are bin B in the frame; a void centre is a masked-out pixel */
  bool clipped;            /* cells outside the image are bin 0 in the frame (no void bin) */
  bool normalized;
  double unit_scale;       /* es_entropy_unit_scale */
  const EsCudaTables *tables;
  float *out;
  unsigned out_pitch;
  int strip, tiles;
  int half_h;              /* within half_h rows of the top or bottom, clip takes rows of cells out too */
  int n_spans;             /* padded to whole groups by the loads-ahead loop */
  int real_spans;
  /* Spans 0 to side_spans − 1 (8-bit frames, groups of 4 without loads
   * ahead): each four leaves from four cells side by side, left to right,
   * and enters so. */
  int side_spans;
  int2 span[ES_CUDA_SPAN_COUNTS_MAX_SPANS];  /* { leave, enter }: offsets from the centre before a step down */
  unsigned geometry[ES_CUDA_SPAN_COUNTS_MAX_SPANS];  /* the real spans' dx, y0, y1, each + 512 in 10 bits */
} SpanCountsParams;

#define SPAN_GEOMETRY_BIAS 512

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

/* Four cells side by side in the 8-bit frame, the first at `first`, from
 * the two aligned words that hold them (rows are whole words, and a row
 * more follows the last). */
static __device__ __forceinline__ uint32_t
four_cells (const uint8_t *first)
{
  const uintptr_t address = (uintptr_t) first;
  const uint32_t *word = (const uint32_t *) (address & ~(uintptr_t) 3);
  return __funnelshift_r (__ldg (word), __ldg (word + 1), 8u * (uint32_t) (address & 3));
}

/* Cells outside the image in the window of column x, row y (clip): the
 * spans' cells in columns outside, and with `rows`, those in rows outside. */
static __device__ int
clipped_cells (const SpanCountsParams &p, int x, int y, bool rows)
{
  int v = 0;
  for (int s = 0; s < p.real_spans; s++)
    {
      const unsigned g = p.geometry[s];
      const int dx = (int) (g & 1023u) - SPAN_GEOMETRY_BIAS, y0 = (int) (g >> 10 & 1023u) - SPAN_GEOMETRY_BIAS,
                y1 = (int) (g >> 20) - SPAN_GEOMETRY_BIAS;
      if ((unsigned) (x + dx) >= (unsigned) p.width)
        v += y1 - y0 + 1;
      else if (rows)
        v += y1 - y0 + 1 - max (0, min (y + y1, p.height - 1) - max (y + y0, 0) + 1);
    }
  return v;
}

/* G spans a group: their 2G cells are loaded before their updates. AHEAD:
 * the next group's loads are issued before this group's updates (where
 * the counts fill shared memory, L1 is small and a load often waits on
 * L2); the spans are then padded to whole groups (p.n_spans), the missing
 * ones leaving and entering the centre cell at once (no change). Otherwise
 * the spans past the last whole group go one at a time. Cell: the frame's
 * uint8_t or uint16_t. */
template <typename Cell, int G, bool AHEAD>
static __global__ void __launch_bounds__ (SPAN_COUNTS_BLOCK)
entropy_span_counts_kernel (const SpanCountsParams p)
{
  extern __shared__ uint32_t smem[];  /* D[c] = T[c + 1] − T[c], c ≤ cells (D[cells] unused); then the counts */
  const int t = threadIdx.x;
  const EsCudaTables *__restrict__ tables = p.tables;

  for (int i = t; i <= p.cells; i += SPAN_COUNTS_BLOCK)
    smem[i] = i < p.cells ? (uint32_t) (__ldg (&tables->clnc_fine[i + 1]) - __ldg (&tables->clnc_fine[i])) : 0u;
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
  unsigned long long sum = 0;
  const Cell *centre = (const Cell *) p.centre + (size_t) y_begin * p.pitch + (unsigned) x;
  for (int s = 0; s < p.n_spans; s++)
    for (int cell = p.span[s].x; cell != p.span[s].y; cell += (int) p.pitch)
      {
        const uint32_t a = count (__ldg (centre + cell)), c4 = shared_u16 (a);
        shared_u16_set (a, c4 + 4u);
        sum += diff (c4);
      }

  /* Clip without a mask: the cells in columns outside the image are bin 0
   * of the padded frame, and stay so down the column (each step, a bin-0
   * cell leaves and one enters), so they are taken out of bin 0 once,
   * here: the rows away from the top and bottom then count exactly their
   * window's cells, n_columns of them, with no test and no table a row.
   * Only the cells in rows outside, near the top and bottom, remain in
   * bin 0 to take out. (Taken out a row, they cost the warps at the
   * image's sides four table loads a row, and the kernel, one wave,
   * waited for those warps.) */
  const int clipped_columns = p.clipped ? clipped_cells (p, x, 0, false) : 0;
  const int n_columns = p.cells - clipped_columns;
  if (clipped_columns != 0)
    {
      const uint32_t a = count (0u), c4 = shared_u16 (a), c4_kept = c4 - 4u * (uint32_t) clipped_columns;
      shared_u16_set (a, c4_kept);
      sum += __ldg (&tables->clnc_fine[c4_kept >> 2]) - __ldg (&tables->clnc_fine[c4 >> 2]);
    }

  /* The window of (x, y): es_entropy_value with the exact single-bin test
   * (T is strictly superadditive, far beyond its rounding: Σ = T[n] only
   * for one bin). The centre is void only where the mask leaves it out.
   * A window of no cells (all in columns outside) is NaN: T[n] is then
   * made unreachable and ln n NaN, so that the finish needs no test. */
  unsigned long long t_columns = __ldg (&tables->clnc_fine[n_columns]);
  double2 li_columns = ln_inv_fine (n_columns, tables);
  const double ln_most_columns = __ldg (&tables->ln_n[p.bins < (uint32_t) n_columns ? p.bins : (uint32_t) n_columns]);
  if (n_columns == 0)
    t_columns = ~0ull, li_columns = make_double2 (__longlong_as_double (0x7ff8000000000000ll), 0.0);
  float *out_column = p.out + x;
  /* A window that may lose cells in rows outside or to the mask (EDGE), or
   * one known to keep its column's n_columns. */
  auto emit = [&] (int y, auto edge) {
    unsigned long long s = sum, t_n = t_columns;
    int n = n_columns;
    double2 li = li_columns;
    double ln_most = ln_most_columns;
    if (decltype (edge)::value && (p.masked || p.clipped))
      {
        uint32_t v;
        if (p.masked)
          v = shared_u16 (count (void_bin)) >> 2;
        else
          v = y < p.half_h || y >= p.height - p.half_h ? (uint32_t) (clipped_cells (p, x, y, true) - clipped_columns)
                                                       : 0u;
        if (v != 0u)
          {
            n -= (int) v;
            if (p.masked)
              s -= __ldg (&tables->clnc_fine[v]);
            else
              {
                /* Bin 0 holds the v cells in rows outside besides its c − v. */
                const uint32_t c = shared_u16 (count (0u)) >> 2;
                s += __ldg (&tables->clnc_fine[c - v]) - __ldg (&tables->clnc_fine[c]);
              }
            t_n = __ldg (&tables->clnc_fine[n]);
            li = ln_inv_fine (n, tables);
            ln_most = __ldg (&tables->ln_n[p.bins < (uint32_t) n ? p.bins : (uint32_t) n]);
          }
      }
    float value;
    if (decltype (edge)::value && ((p.masked && *centre == (Cell) void_bin) || n == 0))
      value = __int_as_float (0x7fc00000);
    else if (s == t_n)
      value = 0.0f;
    else
      {
        const double h = entropy_from_fine (s, li);
        value = (float) (p.normalized ? h / ln_most : es_entropy_store (h, p.unit_scale));
      }
    *(float *) ((char *) out_column + (size_t) (unsigned) y * p.out_pitch) = value;
  };

  /* Spans s to s + g − 1: their leaving and entering cells' bins, from the
   * centre c. */
  auto load = [&] (const Cell *c, int s, int g, uint32_t (&leave)[G], uint32_t (&enter)[G]) {
#pragma unroll
    for (int j = 0; j < g; j++)
      {
        const int2 span = p.span[s + j];
        leave[j] = __ldg (c + span.x);
        enter[j] = __ldg (c + span.y);
      }
  };
  /* A group of side-by-side spans (s < p.side_spans: 8-bit frames, the
   * loop without loads ahead): each four's cells from two words. */
  auto load_side = [&] (const Cell *c, int s, uint32_t (&leave)[G], uint32_t (&enter)[G]) {
#pragma unroll
    for (int q = 0; q < G; q += 4)
      {
        const int2 span = p.span[s + q];
        const uint32_t out = four_cells ((const uint8_t *) c + span.x), in = four_cells ((const uint8_t *) c + span.y);
#pragma unroll
        for (int j = 0; j < 4; j++)
          leave[q + j] = out >> 8 * j & 0xffu, enter[q + j] = in >> 8 * j & 0xffu;
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
    sum += (unsigned long long) diff (ca4) - diff (cb4_new);
  };

  /* Without a mask, the rows away from the top and bottom keep their
   * column's cells, so their finish tests nothing (the tests a row were
   * 8 % of the instructions at square 5); the rows near the top and
   * bottom, and every row with a mask, take them. */
  const std::true_type edge;
  const std::false_type inside;
  const int top_end = max (y_begin + 1, min (y_end, p.clipped ? p.half_h : 0));
  const int bottom_begin = max (top_end, min (y_end, p.clipped ? p.height - p.half_h : y_end));

  /* The rows after the first: near the top, away from the edges, near the
   * bottom; one copy of the loop for each kind of finish. */
  auto by_segments = [&] (auto rows) {
#pragma unroll 1
    for (int segment = 0; segment < 3; segment++)
      {
        const int from = segment == 0 ? y_begin + 1 : segment == 1 ? top_end : bottom_begin;
        const int to = segment == 0 ? top_end : segment == 1 ? bottom_begin : y_end;
        if (segment == 1 && !p.masked)
          rows (from, to, inside);
        else
          rows (from, to, edge);
      }
  };

  emit (y_begin, edge);
  if (!AHEAD)
    {
      const int whole = p.n_spans / G * G;
      auto rows = [&] (int y_from, int y_to, auto kind) {
        for (int y = y_from; y < y_to; y++)
          {
            int s = 0;
            if (sizeof (Cell) == 1)
              for (; s < p.side_spans; s += G)
                {
                  uint32_t out_bins[G], in_bins[G];
                  load_side (centre, s, out_bins, in_bins);
#pragma unroll
                  for (int j = 0; j < G; j++)
                    swap (in_bins[j], out_bins[j]);
                }
            for (; s < whole; s += G)
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
            emit (y, kind);
          }
      };
      by_segments (rows);
      return;
    }
  uint32_t leave[G] = {}, enter[G] = {};
  if (y_begin + 1 < y_end)
    load (centre, 0, G, leave, enter);
  auto rows = [&] (int y_from, int y_to, auto kind) {
    for (int y = y_from; y < y_to; y++)
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
        emit (y, kind);
      }
  };
  by_segments (rows);
}

/* Groups of 4 spans, and ahead: groups of 4 or 8; each for 8- and 16-bit frames. */
enum { SPAN_COUNTS_4, SPAN_COUNTS_4_AHEAD, SPAN_COUNTS_8_AHEAD, SPAN_COUNTS_LOOPS };
static const void *const span_counts_kernels[2][SPAN_COUNTS_LOOPS] = {
  {
    (const void *) entropy_span_counts_kernel<uint16_t, 4, false>,
    (const void *) entropy_span_counts_kernel<uint16_t, 4, true>,
    (const void *) entropy_span_counts_kernel<uint16_t, 8, true>,
  },
  {
    (const void *) entropy_span_counts_kernel<uint8_t, 4, false>,
    (const void *) entropy_span_counts_kernel<uint8_t, 4, true>,
    (const void *) entropy_span_counts_kernel<uint8_t, 8, true>,
  },
};

/* The window's column spans, from its row spans (entropy-internal.h). */
int
es_cuda_column_spans (const EsJob *job, EsSpan **out)
{
  int hh, hw, n_rows = es_window_spans (job, NULL, 0), n = 0;
  es_window_extent (job, &hh, &hw);
  const int h = 2 * hh + 1, w = 2 * hw + 1;
  EsSpan *rows = (EsSpan *) malloc (sizeof *rows * (size_t) (n_rows > 0 ? n_rows : 1));
  uint8_t *cells = (uint8_t *) calloc ((size_t) h * (size_t) w, 1);
  EsSpan *spans = (EsSpan *) malloc (sizeof *spans * ((size_t) h * (size_t) w / 2 + (size_t) w + 1));

  if (rows == NULL || cells == NULL || spans == NULL)
    n = -1;
  else
    {
      es_window_spans (job, rows, n_rows);
      for (int i = 0; i < n_rows; i++)
        for (int dx = rows[i].x0; dx <= rows[i].x1; dx++)
          cells[(size_t) (dx + hw) * h + (rows[i].dy + hh)] = 1;
      for (int c = 0; c < w; c++)
        for (int r = 0; r < h; r++)
          if (cells[(size_t) c * h + r] && (r == 0 || !cells[(size_t) c * h + r - 1]))
            {
              int end = r;
              while (end + 1 < h && cells[(size_t) c * h + end + 1])
                end++;
              spans[n++] = (EsSpan) { c - hw, r - hh, end - hh };
            }
    }
  free (rows);
  free (cells);
  if (n < 0)
    free (spans), spans = NULL;
  *out = spans;
  return n;
}

static int
compare_spans (const void *a, const void *b)
{
  const int x = ((const int2 *) a)->x, y = ((const int2 *) b)->x;
  return x < y ? -1 : x > y;
}

/* Orders the spans so that fours whose cells lie side by side in a row,
 * leaving and entering, come first (by leaving cell, each run of
 * neighbours cut into fours); returns how many fours. */
static int
order_spans (int2 *span, int n)
{
  int2 sorted[ES_CUDA_SPAN_COUNTS_MAX_SPANS];
  int first = 0, rest = n;

  memcpy (sorted, span, sizeof *span * (size_t) n);
  qsort (sorted, (size_t) n, sizeof *sorted, compare_spans);
  for (int start = 0, end; start < n; start = end)
    {
      for (end = start + 1; end < n && sorted[end].x == sorted[end - 1].x + 1;)
        end++;
      int i = start;
      for (; i + 4 <= end; i += 4)
        {
          bool entering = true;
          for (int j = 1; j < 4; j++)
            entering = entering && sorted[i + j].y == sorted[i].y + j;
          for (int j = 0; j < 4; j++)
            span[entering ? first++ : --rest] = sorted[i + j];
        }
      for (; i < end; i++)
        span[--rest] = sorted[i];
    }
  return first / 4;
}

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
  p.centre = (const char *) job->binned
             + ((size_t) job->half_h * job->binned_pitch + (unsigned) job->half_w) * (job->bytes ? 1 : 2);
  p.width = job->width;
  p.height = job->height;
  p.bins = job->bins;
  p.cells = job->cells;
  p.masked = job->masked;
  p.clipped = job->clipped;
  p.normalized = job->normalized;
  p.unit_scale = job->unit_scale;
  p.half_h = job->half_h;
  p.tables = cuda->tables;
  p.out = job->out;
  p.out_pitch = job->out_pitch;
  for (int s = 0; s < job->n_spans; s++)
    {
      const EsSpan *span = &job->column_spans[s];  /* { dx, y0, y1 } */
      p.span[s] = make_int2 (span->x0 * (int) p.pitch + span->dy, (span->x1 + 1) * (int) p.pitch + span->dy);
      p.geometry[s] = (unsigned) (span->dy + SPAN_GEOMETRY_BIAS) | (unsigned) (span->x0 + SPAN_GEOMETRY_BIAS) << 10
                      | (unsigned) (span->x1 + SPAN_GEOMETRY_BIAS) << 20;
    }
  p.n_spans = p.real_spans = job->n_spans;

  /* Where the resident blocks' counts leave most of the SM's 256 KiB to
   * L1 (and 16 warps or more hide each other's loads), the loads need not
   * go ahead; where they fill shared memory (many bins), a load often
   * misses L1 and goes a group ahead, in groups of 8 unless that pads more
   * than 4 would (measured: docs/performance/cuda-entropy-definitions.md). */
  const void *const *kernels = span_counts_kernels[job->bytes];
  const size_t smem = (size_t) (p.bins + 1) * 2 * SPAN_COUNTS_BLOCK + (size_t) (p.cells + 1) * 4;
  int resident = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&resident, kernels[SPAN_COUNTS_4], SPAN_COUNTS_BLOCK,
                                                     smem) != cudaSuccess)
    (void) cudaGetLastError ();
  const bool l1_left = (size_t) resident * smem <= ((size_t) 128 << 10) && resident * SPAN_COUNTS_BLOCK / 32 >= 16;
  const int variant = l1_left ? SPAN_COUNTS_4
                : es_cuda_div_up ((size_t) p.n_spans, 8) * 8 == es_cuda_div_up ((size_t) p.n_spans, 4) * 4
                  ? SPAN_COUNTS_8_AHEAD
                  : SPAN_COUNTS_4_AHEAD;
  const void *kernel = kernels[variant];
  /* Side-by-side spans where the loads do not go ahead: there they saved
   * 12 % at a 15×31 rectangle and 3–4 % at disks r = 10 and 15, 16 bins;
   * in the loads-ahead loops a first version cost 1–2 %
   * (docs/performance/cuda-entropy-definitions.md). */
  if (variant == SPAN_COUNTS_4 && job->bytes)
    p.side_spans = 4 * order_spans (p.span, p.n_spans);
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
  es_cuda_note_kernel (cuda, kernel, dim3 ((unsigned) blocks), dim3 (SPAN_COUNTS_BLOCK), smem,
                       "span-counts entropy kernel", true);
  *ran = true;
  return true;
}

/* 256 bins and the void bin of 16-bit counts for 128 threads, and the
 * table: more than the default 48 KiB of dynamic shared memory. */
bool
es_cuda_entropy_span_counts_init (EsCuda *cuda, EsError *error)
{
  for (int bytes = 0; bytes < 2; bytes++)
    for (int i = 0; i < SPAN_COUNTS_LOOPS; i++)
      ES_CUDA_TRY (cuda, cudaFuncSetAttribute (span_counts_kernels[bytes][i],
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, SPAN_COUNTS_SMEM_MAX),
                   "shared memory limit", error);
  return true;
}
