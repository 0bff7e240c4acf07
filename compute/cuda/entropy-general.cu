/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU for every definition (DESIGN.md §1): any window shape, border, binning, units and mask. */
#include <stdlib.h>
#include <string.h>

#include "entropy-internal.h"

/* Two kernels, after a first pass that bins the frame once per cell:
 * borders as index mappings (es_border_index), the bin of every sample value
 * from a table filled on the host by es_bin_sample, masked and clipped cells
 * marked void (squares of 3 and 5 whose bins are the samples, without a
 * mask, skip that pass). Masked pixels get NaN, windows that count nothing
 * too.
 *
 * Up to 256 bins and 961 cells (windows of more than 9 cells, or up to 16
 * bins), the shared-memory counts of the fast variant slide down the
 * window's column spans: entropy-span-counts.cu. Else windows of at most
 * 32 cells are sorted, two windows a thread (below).
 *
 * Larger windows slide: each thread owns the histogram of one output
 * column's window and slides it down a strip of rows, per step, for every
 * column span of the window (any shape), the pixel that leaves at the top
 * and the one that enters at the bottom. Consecutive threads take
 * consecutive columns, so a warp's loads of a row coalesce. Σ c ln c moves
 * by exact differences of a table of round(c ln c · 2^32) in uint64, so a
 * long slide accumulates no error, and the number of occupied bins makes a
 * single-bin window exactly 0. The work per pixel is two updates per column
 * span, whatever the number of bins. Counts are 16-bit (a window holds at
 * most 255² = 65025 pixels): in shared memory up to 256 bins, laid out so
 * that a warp's 32 threads hit 32 banks whatever their bins; beyond, in a
 * global scratch buffer, interleaved by thread. With 65536 bins there is no
 * room for the void mark in 16 bits: that case resolves each cell inside
 * the sliding kernel instead. */
#define GENERAL_BLOCK 128
#define GENERAL_FIX_BITS 32
#define GENERAL_MAX_CELLS (ES_SIDE_MAX * ES_SIDE_MAX)
#define GENERAL_SHARED_BINS 256
/* Differences of the c ln c table kept in shared memory up to this count. */
#define GENERAL_SHARED_DIFFS 1024
/* Global counts: at least 4096 threads' worth of histograms, up to 512 MiB
 * (exact 16-bit bins: 128 KiB a thread). */
#define GENERAL_SCRATCH_MAX ((size_t) 512 << 20)

typedef struct {
  const void *in;
  unsigned in_pitch;
  int width, height;
  bool u16;
  const uint8_t *mask;  /* the frame's rows of the mask, or NULL: every pixel counts */
  unsigned mask_pitch;
  const uint16_t *bin_of;  /* the bin of every sample value, or NULL: bin = sample (a levels image) */
  const EsSpan *spans;     /* column spans: dy from x0 to x1 at column offset dx = span.dy */
  int n_spans;
  EsBorder border;
  uint32_t border_bin;     /* ES_BORDER_CONSTANT */
  uint32_t bins;           /* B */
  bool normalized;
  const unsigned long long *diff;  /* round(c ln c · 2^32) differences: D[c] = T[c + 1] − T[c] */
  int n_diffs;
  uint16_t *counts;        /* global counts: bin b of thread t at b · threads + t */
  /* The frame's bins, padded by the window's half extents, 16-bit; all
   * ones (the void mark) where a cell counts nowhere. With 65536 bins the
   * mark is also bin 0xffff: only the sort kernel reads such a frame, and
   * it tells the two apart itself. NULL where the sort kernel reads the
   * samples (square windows, bins that are the samples, no mask). For
   * the span-counts kernel, 8-bit where its bins and void mark fit a byte
   * (bin_frame's `bytes`). */
  uint16_t *binned;
  unsigned binned_pitch;   /* in bins */
  uint16_t void_mark;      /* a void cell: GENERAL_VOID; for the span-counts kernel B (a mask) or 0 (clip) */
  int half_h, half_w;
  const EsCudaTables *tables;
  unsigned threads;        /* threads of the grid */
  float *out;
  unsigned out_pitch;
  int strip;               /* output rows a thread slides down */
  int strips;              /* strips of the frame */
  /* Windows of at most SMALL_CELLS cells, for the sort kernel: their
   * cells relative to the centre, and as offsets in the binned frame. */
  int n_cells;
  int cell_offset[32];
  signed char cell_dy[32], cell_dx[32];
} GeneralParams;

#define GENERAL_VOID 0xffffu
#define BIN_ROWS 8  /* rows of the binned frame a thread of the bin pass fills */

#define SMALL_CELLS 32
#define SORT_ONLY_CELLS 9  /* windows this small with more than 16 bins sort rather than count (below) */
#define SMALL_ROWS 4  /* output rows a thread of the sort kernel computes: pairs */

/* The bin of the window cell at image row yy, column xx, or −1 when it
 * counts nowhere (outside the image with clip, or masked). */
static __device__ __forceinline__ int
cell_bin (const GeneralParams &p, const uint16_t *bin_of, int yy, int xx)
{
  const int ry = es_border_index (yy, p.height, p.border);
  const int rx = es_border_index (xx, p.width, p.border);

  if (ry < 0 || rx < 0)
    return p.border == ES_BORDER_CONSTANT ? (int) p.border_bin : -1;
  if (p.mask != NULL && __ldg (p.mask + (size_t) ry * p.mask_pitch + rx) == 0)
    return -1;
  const char *row = (const char *) p.in + (size_t) ry * p.in_pitch;
  const uint32_t v = p.u16 ? __ldg ((const uint16_t *) row + rx) : __ldg ((const uint8_t *) row + rx);
  return bin_of != NULL ? (int) bin_of[v] : (int) v;
}

/* The frame's bins, padded: cell (x, y) of the padded frame is image cell
 * (x − half_w, y − half_h) as the window sees it. Four cells a thread, one
 * store, whole rows of the pitch and one row more (the span-counts kernel
 * reads words past a row's last cell), the cells past the padded frame
 * void. Inside the image and without a mask, the four samples are binned
 * straight (8-bit samples through a table in shared memory); elsewhere each
 * cell resolves its border and mask. Cell: 16-bit, or 8-bit where the
 * span-counts kernel's bins and void mark fit a byte (p.binned holds
 * those). */
template <typename Cell>
static __global__ void __launch_bounds__ (GENERAL_BLOCK)
bin_cells_kernel (GeneralParams p)
{
  __shared__ uint16_t s_bin_of[256];
  const bool u8_table = !p.u16 && p.bin_of != NULL;
  if (u8_table)
    for (int i = threadIdx.x; i < 256; i += GENERAL_BLOCK)
      s_bin_of[i] = __ldg (p.bin_of + i);
  __syncthreads ();
  const uint16_t *bin_of = u8_table ? s_bin_of : p.bin_of;

  const int x = 4 * (int) (blockIdx.x * GENERAL_BLOCK + threadIdx.x);
  const int padded_w = p.width + 2 * p.half_w, padded_h = p.height + 2 * p.half_h;
  if (x >= (int) p.binned_pitch)
    return;
  const int xx = x - p.half_w;
  const bool columns_inside = p.mask == NULL && xx >= 0 && xx + 4 <= p.width;
  for (int y = blockIdx.y; y <= padded_h; y += gridDim.y)
    {
      const int yy = y - p.half_h;
      uint32_t bin[4];
      if (columns_inside && yy >= 0 && yy < p.height)
        {
          const char *row = (const char *) p.in + (size_t) yy * p.in_pitch;
#pragma unroll
          for (int i = 0; i < 4; i++)
            {
              const uint32_t v
                = p.u16 ? __ldg ((const uint16_t *) row + xx + i) : __ldg ((const uint8_t *) row + xx + i);
              bin[i] = bin_of != NULL ? bin_of[v] : v;
            }
        }
      else
#pragma unroll
        for (int i = 0; i < 4; i++)
          {
            const int b = y < padded_h && x + i < padded_w ? cell_bin (p, bin_of, yy, xx + i) : -1;
            bin[i] = b < 0 ? p.void_mark : (uint32_t) b;
          }
      if (sizeof (Cell) == 1)
        *(uint32_t *) ((uint8_t *) p.binned + (size_t) y * p.binned_pitch + x)
          = (bin[0] & 0xffu) | (bin[1] & 0xffu) << 8 | (bin[2] & 0xffu) << 16 | bin[3] << 24;
      else
        *(uint2 *) (p.binned + (size_t) y * p.binned_pitch + x)
          = make_uint2 (bin[0] | bin[1] << 16, bin[2] | bin[3] << 16);
    }
}

template <bool SHARED, bool BINNED>
static __global__ void __launch_bounds__ (GENERAL_BLOCK)
entropy_general_kernel (GeneralParams p)
{
  extern __shared__ unsigned long long smem[];
  unsigned long long *s_diff = smem;  /* up to GENERAL_SHARED_DIFFS */
  uint16_t *s_bin_of = (uint16_t *) (s_diff + (p.n_diffs <= GENERAL_SHARED_DIFFS ? p.n_diffs : 0));
  const bool u8_table = !BINNED && !p.u16 && p.bin_of != NULL;
  char *s_counts = (char *) (s_bin_of + (u8_table ? 256 : 0));
  const int t = threadIdx.x;

  if (p.n_diffs <= GENERAL_SHARED_DIFFS)
    for (int i = t; i < p.n_diffs; i += GENERAL_BLOCK)
      s_diff[i] = __ldg (p.diff + i);
  if (u8_table)
    for (int i = t; i < 256; i += GENERAL_BLOCK)
      s_bin_of[i] = __ldg (p.bin_of + i);
  __syncthreads ();
  const unsigned long long *diff = p.n_diffs <= GENERAL_SHARED_DIFFS ? s_diff : p.diff;
  const uint16_t *bin_of = u8_table ? s_bin_of : p.bin_of;

  /* Shared: bin b of thread t at byte 256·b + es_cuda_count_lane (t). */
  char *const mine = s_counts + es_cuda_count_lane (t);
  const unsigned gt = blockIdx.x * GENERAL_BLOCK + t;
  auto count = [&] (int bin) -> uint16_t * {
    return SHARED ? (uint16_t *) (mine + 256 * bin) : p.counts + (size_t) bin * p.threads + gt;
  };
  if (SHARED)
    for (uint32_t b = 0; b < p.bins; b++)
      *count ((int) b) = 0;
  /* The bin of a window cell, −1 where it counts nowhere. */
  auto bin_at = [&] (int yy, int xx) -> int {
    if (!BINNED)
      return cell_bin (p, bin_of, yy, xx);
    const uint32_t bin
      = p.binned[(size_t) (yy + p.half_h) * p.binned_pitch + (unsigned) (xx + p.half_w)];
    return bin == GENERAL_VOID ? -1 : (int) bin;
  };

  const size_t items = (size_t) p.width * (size_t) p.strips;
  for (size_t item = gt; item < items; item += p.threads)
    {
      const int x = (int) (item % (size_t) p.width);
      const int y_begin = (int) (item / (size_t) p.width) * p.strip;
      const int y_end = min (y_begin + p.strip, p.height);
      int n = 0, occupied = 0, last_n = -1;
      unsigned long long sum = 0;
      double ln_n = 0.0, ln_most = 0.0;

      auto add = [&] (int bin) {
        if (bin < 0)
          return;
        uint16_t *c = count (bin);
        const unsigned was = *c;
        *c = (uint16_t) (was + 1u);
        sum += diff[was];
        n++;
        occupied += was == 0u;
      };
      auto remove = [&] (int bin) {
        if (bin < 0)
          return;
        uint16_t *c = count (bin);
        const unsigned was = *c;
        *c = (uint16_t) (was - 1u);
        sum -= diff[was - 1u];
        n--;
        occupied -= was == 1u;
      };

      for (int s = 0; s < p.n_spans; s++)
        {
          const EsSpan span = p.spans[s];
          for (int dy = span.x0; dy <= span.x1; dy++)
            add (bin_at (y_begin + dy, x + span.dy));
        }
      float *out_column = p.out + x;
      for (int y = y_begin;; y++)
        {
          /* es_entropy_value, with its threshold replaced by the exact
           * test of a single occupied bin; logs only when n changes. */
          float value;
          if (p.mask != NULL && __ldg (p.mask + (size_t) y * p.mask_pitch + x) == 0)
            value = __int_as_float (0x7fc00000);
          else if (n == 0)
            value = __int_as_float (0x7fc00000);
          else if (occupied <= 1)
            value = 0.0f;
          else
            {
              if (n != last_n)
                {
                  const uint32_t most = p.bins < (uint32_t) n ? p.bins : (uint32_t) n;
                  last_n = n;
                  ln_n = log ((double) n);
                  ln_most = log ((double) most);
                }
              double h = ln_n - ldexp ((double) sum, -GENERAL_FIX_BITS) / (double) n;
              value = (float) (p.normalized ? h / ln_most : h);
            }
          *(float *) ((char *) out_column + (size_t) y * p.out_pitch) = value;
          if (y + 1 >= y_end)
            break;
          for (int s = 0; s < p.n_spans; s++)
            {
              const EsSpan span = p.spans[s];
              remove (bin_at (y + span.x0, x + span.dy));
              add (bin_at (y + 1 + span.x1, x + span.dy));
            }
        }
      /* Leave the histogram empty for the thread's next item. */
      for (int s = 0; s < p.n_spans; s++)
        {
          const EsSpan span = p.spans[s];
          for (int dy = span.x0; dy <= span.x1; dy++)
            remove (bin_at (y_end - 1 + dy, x + span.dy));
        }
    }
}

/* The sliding kernel by where its counts live and whether the frame is binned. */
typedef void (*GeneralKernel) (GeneralParams);
static const GeneralKernel general_kernels[2][2] = {
  { entropy_general_kernel<false, false>, entropy_general_kernel<false, true> },
  { entropy_general_kernel<true, false>, entropy_general_kernel<true, true> },
};

/* -- windows of at most 32 cells: sort each window ------------------------------
 *
 * Any number of bins (exact 16-bit bins too) without histograms: a thread
 * takes two windows at once, output rows y and y + 1, and gathers the bins
 * of their N cells into the two 16-bit halves of N registers (void cells
 * and the unused inputs as 0xffff), sorts both halves together with
 * Batcher's odd-even merge network (pruned to N inputs, every index a
 * compile-time constant; `vimnmx` does a compare-exchange of each half in
 * one instruction), and sums c ln c over the runs of equal keys. The work
 * per pixel depends on N alone: about N log² N / 2 instructions. */
template <int N>
static __device__ __forceinline__ void
sort_network (uint32_t (&v)[N])
{
  /* Knuth's formulation over 32 inputs, with p = 2^lp and k = 2^lk: every
   * trip count a constant, so that the array stays in registers. */
#pragma unroll
  for (int lp = 0; lp < 5; lp++)
#pragma unroll
    for (int lk = 4; lk >= 0; lk--)
#pragma unroll
      for (int a = 0; a < 32; a++)
        {
          const int p = 1 << lp, k = 1 << lk, j0 = k % p;
          const int b = a + k;
          /* Comparator (a, a + k) of this step: a − j0 in [0, k) modulo 2k. */
          if (lk <= lp && a >= j0 && (a - j0) % (2 * k) < k && b < N && a / (2 * p) == b / (2 * p))
            {
              const uint32_t lo = __vminu2 (v[a], v[b]), hi = __vmaxu2 (v[a], v[b]);
              v[a] = lo;
              v[b] = hi;
            }
        }
}

/* Reads the binned frame (with 65536 bins, a bin 0xffff and a void cell
 * share the key 0xffff), or for squares without one the samples; sums the
 * fixed-point c ln c of the table variants (round(c ln c · 2^19)) as
 * differences along each run, and finishes in double as they do. */
template <int N, int H, int W>
static __global__ void __launch_bounds__ (GENERAL_BLOCK, 8)
entropy_small_kernel (GeneralParams p)
{
  __shared__ uint32_t s_diff[SMALL_CELLS];  /* D[c] = T[c + 1] − T[c] */
  const int t = threadIdx.x;

  if (t < SMALL_CELLS)
    s_diff[t] = __ldg (&p.tables->clnc_fix[t + 1]) - __ldg (&p.tables->clnc_fix[t]);
  __syncthreads ();

  const int x = blockIdx.x * GENERAL_BLOCK + t;
  if (x >= p.width)
    return;
  const int pads = N - p.n_cells;
  /* Columns whose windows hold no void cell but the pads: no mask, and the
   * window inside the image or a border that fills it. */
  const bool columns_inside = x >= p.half_w && x + p.half_w < p.width;
  const bool columns_full = p.mask == NULL && (p.border != ES_BORDER_CLIP || columns_inside);
  for (int y0 = blockIdx.y * SMALL_ROWS; y0 < p.height; y0 += gridDim.y * SMALL_ROWS)
    for (int y = y0; y < min (y0 + SMALL_ROWS, p.height); y += 2)
      {
        const bool two = y + 1 < p.height;
        /* Keys of row y in the low halves, of row y + 1 in the high ones
         * (row y again past the last row). */
        uint32_t v[N];
        if constexpr (H > 0)
          {
            /* A full H × W rectangle: the two windows share H − 1 rows,
             * so H + 1 rows of W cells, at constant offsets from a row
             * pointer (the last one row y's again past the last row).
             * Without a binned frame (the bins are the samples, no mask),
             * the samples themselves inside the image, else each cell
             * resolved. */
            uint32_t cell[(H + 1) * W];
            const int row0 = y - H / 2, col0 = x - W / 2;
            if (p.binned == NULL && columns_inside && row0 >= 0 && y + 1 + H / 2 < p.height)
              {
                const char *top = (const char *) p.in + (size_t) row0 * p.in_pitch;
                if (p.u16)
#pragma unroll
                  for (int r = 0; r <= H; r++)
#pragma unroll
                    for (int c = 0; c < W; c++)
                      cell[r * W + c] = __ldg ((const uint16_t *) (top + (size_t) r * p.in_pitch) + col0 + c);
                else
#pragma unroll
                  for (int r = 0; r <= H; r++)
#pragma unroll
                    for (int c = 0; c < W; c++)
                      cell[r * W + c] = __ldg ((const uint8_t *) (top + (size_t) r * p.in_pitch) + col0 + c);
              }
            else if (p.binned == NULL)
#pragma unroll
              for (int r = 0; r <= H; r++)
#pragma unroll
                for (int c = 0; c < W; c++)
                  {
                    const int bin = cell_bin (p, p.bin_of, row0 + (r < H || two ? r : H - 1), col0 + c);
                    cell[r * W + c] = bin < 0 ? GENERAL_VOID : (uint32_t) bin;
                  }
            else
              {
                /* Padded cell (x, y) is image cell (col0, row0). */
                const uint16_t *top = p.binned + (size_t) y * p.binned_pitch + (unsigned) x;
#pragma unroll
                for (int r = 0; r <= H; r++)
#pragma unroll
                  for (int c = 0; c < W; c++)
                    cell[r * W + c] = __ldg (top + (size_t) (r < H || two ? r : H - 1) * p.binned_pitch + c);
              }
#pragma unroll
            for (int i = 0; i < N; i++)
              v[i] = __byte_perm (cell[i], cell[i + W], 0x5410);
          }
        else
          {
            const uint16_t *centre[2] = {
              p.binned + (size_t) (y + p.half_h) * p.binned_pitch + (unsigned) (x + p.half_w),
              p.binned + (size_t) (y + two + p.half_h) * p.binned_pitch + (unsigned) (x + p.half_w),
            };
#pragma unroll
            for (int i = 0; i < N; i++)
              v[i] = i < p.n_cells ? __byte_perm ((uint32_t) __ldg (centre[0] + p.cell_offset[i]),
                                                  (uint32_t) __ldg (centre[1] + p.cell_offset[i]), 0x5410)
                                   : 0xffffffffu;
          }
        sort_network<N> (v);

        /* Zero halves where two neighbours are equal, short of the pads. */
        uint32_t distinct = 0xffffffffu;
#pragma unroll
        for (int i = 1; i < N; i++)
          if (i < N - pads)
            distinct = __vminu2 (distinct, v[i] ^ v[i - 1]);
        const bool full = columns_full
                          && (p.border != ES_BORDER_CLIP || (y >= p.half_h && y + 1 + p.half_h < p.height));
        uint32_t sum[2] = { 0, 0 };
        int n[2] = { p.n_cells, p.n_cells };
        if (!full || (distinct & 0xffffu) == 0 || (distinct >> 16) == 0)
          {
            /* A run of c equal keys adds D[1] + … + D[c − 1] = T[c]; D[0] = 0
             * lets every position add D[run]. Runs of both halves count in
             * one register, as byte offsets into s_diff. */
            uint32_t run = 0;
#pragma unroll
            for (int i = 1; i < N; i++)
              {
                const uint32_t differ = __vminu2 (v[i] ^ v[i - 1], 0x00010001u);  /* 1 a half where keys differ */
                run = __vminu2 (run + 0x00040004u, 0xffffffffu - differ * 0xffffu);
                sum[0] += *(const uint32_t *) ((const char *) s_diff + (run & 0xffffu));
                sum[1] += *(const uint32_t *) ((const char *) s_diff + (run >> 16));
              }
            /* The keys 0xffff sort last, as one run of r: the v voids and
             * pads among them count nowhere, so that run adds T[r − v],
             * not T[r]. */
#pragma unroll
            for (int h = 0; h < 2; h++)
              {
                /* Past the last row the high halves hold no window of
                 * their own (the squares' are other rows): nothing to
                 * count, and no result. */
                if (h == 1 && !two)
                  break;
                const uint32_t last = v[N - 1] >> (16 * h) & 0xffffu, last_run = (run >> (16 * h) & 0xffffu) / 4;
                const int r = last == 0xffffu ? (int) last_run + 1 : 0;
                int voids = r;
                if (p.bins > GENERAL_VOID)
                  {
                    voids = pads;
                    if (!full)
                      for (int i = 0; i < p.n_cells; i++)
                        voids += cell_bin (p, p.bin_of, y + (two ? h : 0) + p.cell_dy[i], x + p.cell_dx[i]) < 0;
                  }
                sum[h] += __ldg (&p.tables->clnc_fix[r - voids]) - __ldg (&p.tables->clnc_fix[r]);
                n[h] = N - voids;
              }
          }

        /* es_entropy_value, with the exact single-bin test (T is strictly
         * superadditive, far beyond its rounding: the sum is T[n] only for
         * one bin); the centre is void only where the mask leaves it out. */
#pragma unroll
        for (int h = 0; h < 2; h++)
          {
            if (h == 1 && !two)
              break;
            float value;
            if ((p.mask != NULL && __ldg (p.mask + (size_t) (y + h) * p.mask_pitch + x) == 0) || n[h] == 0)
              value = __int_as_float (0x7fc00000);
            else if (sum[h] == __ldg (&p.tables->clnc_fix[n[h]]))
              value = 0.0f;
            else
              {
                const double e = __fma_rn (-(double) sum[h], __ldg (&p.tables->inv_n_fix[n[h]]),
                                           __ldg (&p.tables->ln_n[n[h]]));
                const uint32_t most = p.bins < (uint32_t) n[h] ? p.bins : (uint32_t) n[h];
                value = (float) (p.normalized ? e / __ldg (&p.tables->ln_n[most]) : e);
              }
            *(float *) ((char *) (p.out + x) + (size_t) (y + h) * p.out_pitch) = value;
          }
      }
}

/* The cells of a window of at most SMALL_CELLS cells, relative to its
 * centre. */
static void
small_cells (const EsJob *job, GeneralParams *p)
{
  EsSpan spans[SMALL_CELLS];
  const int n_rows = es_window_spans (job, spans, SMALL_CELLS);

  p->n_cells = 0;
  for (int i = 0; i < n_rows && i < SMALL_CELLS; i++)
    for (int dx = spans[i].x0; dx <= spans[i].x1 && p->n_cells < SMALL_CELLS; dx++)
      {
        p->cell_dy[p->n_cells] = (signed char) spans[i].dy;
        p->cell_dx[p->n_cells++] = (signed char) dx;
      }
}

/* The side of a full square window of 3 or 5, else 0 (any other window
 * of the same extents has fewer cells). */
static int
small_square (const GeneralParams *p)
{
  const int side = 2 * p->half_h + 1;
  return p->half_h == p->half_w && p->n_cells == side * side && (side == 3 || side == 5) ? side : 0;
}

static void
launch_small (EsCuda *cuda, const GeneralParams *p)
{
  const dim3 grid ((unsigned) es_cuda_div_up ((size_t) p->width, GENERAL_BLOCK),
                   es_cuda_grid_y (es_cuda_div_up ((size_t) p->height, SMALL_ROWS)));

  /* Squares of 3 and 5 from row pointers, the rest from the cell offsets. */
  const int square = small_square (p);
  if (square == 3)
    entropy_small_kernel<9, 3, 3><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  else if (square == 5)
    entropy_small_kernel<25, 5, 5><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  else if (p->n_cells <= 16)
    entropy_small_kernel<16, 0, 0><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  else if (p->n_cells <= 25)
    entropy_small_kernel<25, 0, 0><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  else
    entropy_small_kernel<32, 0, 0><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
}

/* Bins the frame into cuda->general_binned, padded by the window's half
 * extents, with one row more; 8-bit cells where `bytes`. */
static bool
bin_frame (EsCuda *cuda, const EsJob *job, GeneralParams *p, bool bytes, EsError *error)
{
  int half_h, half_w;

  es_window_extent (job, &half_h, &half_w);
  p->half_h = half_h, p->half_w = half_w;
  p->binned_pitch = (unsigned) (es_cuda_div_up ((size_t) (p->width + 2 * half_w), ES_CUDA_VECTOR) * ES_CUDA_VECTOR);
  const size_t rows = (size_t) p->height + 2 * (size_t) half_h + 1;
  if (!es_cuda_device_reserve (cuda, &cuda->general_binned, rows * p->binned_pitch * (bytes ? 1 : 2), "binned frame",
                               error))
    return false;
  p->binned = (uint16_t *) cuda->general_binned.ptr;
  /* Eight rows and four cells a thread: with one cell and row, the
   * thread's setup cost more than its cell (Nsight Compute: 90
   * instructions a cell, 0.33 ms at 8192²); eight rows took 0.17 ms, four
   * cells and one store a thread 0.07 ms less
   * (docs/performance/cuda-entropy-definitions.md). */
  const dim3 grid ((unsigned) es_cuda_div_up (p->binned_pitch / 4, GENERAL_BLOCK),
                   es_cuda_grid_y (es_cuda_div_up (rows, BIN_ROWS)));
  if (bytes)
    bin_cells_kernel<uint8_t><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  else
    bin_cells_kernel<uint16_t><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  ES_CUDA_LAUNCHED (cuda, "bin kernel", error);
  return true;
}

/* Host staging of the small per-job tables: pageable memory, which
 * cudaMemcpyAsync has copied out of by the time it returns. */
static bool
upload_table (EsCuda *cuda, EsCudaBuffer *buffer, const void *host, size_t bytes, const char *what, EsError *error)
{
  if (!es_cuda_device_reserve (cuda, buffer, bytes, what, error))
    return false;
  ES_CUDA_TRY (cuda, cudaMemcpyAsync (buffer->ptr, host, bytes, cudaMemcpyHostToDevice, cuda->stream), what, error);
  return true;
}

/* The bin of every sample value and the mask rows of the frame, on the device. */
static bool
general_prepare (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, GeneralParams *p, EsError *error)
{
  const EsEntropyDefinition *d = &job->definition;
  const EsBinner *binner = &frame->binner;
  bool ok;

  /* The bin of every sample value (B ≤ 65536: 16 bits); exact bins are the
   * samples themselves. */
  if (!binner->identity && binner->mode != ES_BINNING_EXACT)
    {
      const size_t values = (size_t) 1 << frame->depth;
      uint16_t *bin_of = (uint16_t *) malloc (values * sizeof *bin_of);
      if (bin_of == NULL)
        return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the bin table");
      for (size_t v = 0; v < values; v++)
        bin_of[v] = (uint16_t) es_bin_sample (binner, (uint32_t) v);
      ok = upload_table (cuda, &cuda->general_bins, bin_of, values * sizeof *bin_of, "bin table", error);
      free (bin_of);
      if (!ok)
        return false;
      p->bin_of = (const uint16_t *) cuda->general_bins.ptr;
    }

  /* The mask rows of this frame (a band starts at image row y_origin). */
  if (d->mask != NULL)
    {
      const size_t pitch = (size_t) frame->vectors * ES_CUDA_VECTOR;
      if (!es_cuda_device_reserve (cuda, &cuda->general_mask, pitch * (size_t) frame->height, "mask buffer", error)
          || !es_cuda_upload_2d (cuda, cuda->general_mask.ptr, pitch,
                                 (const char *) d->mask->pixels + (size_t) frame->y_origin * d->mask->stride,
                                 d->mask->stride, (size_t) frame->width, (size_t) frame->height, cuda->stream,
                                 "mask upload", error))
        return false;
      p->mask = (const uint8_t *) cuda->general_mask.ptr;
      p->mask_pitch = (unsigned) pitch;
    }

  p->tables = cuda->tables;
  return true;
}

/* The sort kernel for windows of at most 32 cells, else the sliding kernel. */
static bool
general_launch (EsCuda *cuda, const EsJob *job, const GeneralParams *p_in, EsError *error)
{
  GeneralParams p = *p_in;
  const int cells = es_window_pixels (job);

  p.n_diffs = cells;
  if (cells <= SMALL_CELLS)
    {
      /* Squares read the samples where they are the bins and no mask
       * leaves cells out; every other window reads the binned frame, its
       * cells as offsets in it. */
      es_window_extent (job, &p.half_h, &p.half_w);
      small_cells (job, &p);
      if (small_square (&p) != 0 && p.bin_of == NULL && p.mask == NULL)
        p.binned = NULL;
      else
        {
          if (!bin_frame (cuda, job, &p, false, error))
            return false;
          for (int i = 0; i < p.n_cells; i++)
            p.cell_offset[i] = p.cell_dy[i] * (int) p.binned_pitch + p.cell_dx[i];
        }
      launch_small (cuda, &p);
      ES_CUDA_LAUNCHED (cuda, "small-window entropy kernel", error);
      return true;
    }

  /* Counts in shared memory when they fit, else in the global scratch; the
   * frame binned first (borders, mask and bins resolved once a cell, not
   * once a window) when the bins leave room for the void mark. */
  const bool shared = p.bins <= GENERAL_SHARED_BINS, binned = p.bins <= GENERAL_VOID;
  const size_t smem = (p.n_diffs <= GENERAL_SHARED_DIFFS ? (size_t) p.n_diffs * 8 : 0)
                      + (!binned && !p.u16 && p.bin_of != NULL ? 512 : 0) + (shared ? (size_t) p.bins * 256 : 0);
  const GeneralKernel kernel = general_kernels[shared][binned];
  if (binned && !bin_frame (cuda, job, &p, false, error))
    return false;
  size_t threads
    = (size_t) es_cuda_resident_blocks (cuda, (const void *) kernel, GENERAL_BLOCK, smem, (size_t) 1 << 40)
      * GENERAL_BLOCK;
  if (!shared)
    {
      const size_t per_thread = (size_t) p.bins * sizeof (uint16_t);
      const size_t most = GENERAL_SCRATCH_MAX / per_thread / GENERAL_BLOCK * GENERAL_BLOCK;
      threads = threads < most ? threads : most;
    }

  /* Strips long enough that filling and emptying a window (2 updates a
   * cell) costs no more than sliding it (2 a span and row), short enough to
   * give every thread work. */
  int strip = p.n_spans > 0 ? 2 * cells / p.n_spans : 16;
  strip = strip < 16 ? 16 : strip;
  const size_t fill = es_cuda_div_up ((size_t) p.width * (size_t) p.height, threads);
  if ((size_t) strip < fill)
    strip = (int) fill;
  p.strip = strip < p.height ? strip : p.height;
  p.strips = (int) es_cuda_div_up ((size_t) p.height, (size_t) p.strip);
  const size_t items = (size_t) p.width * (size_t) p.strips;
  if (threads > es_cuda_div_up (items, GENERAL_BLOCK) * GENERAL_BLOCK)
    threads = es_cuda_div_up (items, GENERAL_BLOCK) * GENERAL_BLOCK;
  p.threads = (unsigned) threads;

  if (!shared)
    {
      const size_t bytes = (size_t) p.bins * sizeof (uint16_t) * threads;
      if (!es_cuda_device_reserve (cuda, &cuda->general_counts, bytes, "histogram scratch", error))
        return false;
      /* Every launch starts from empty histograms, whatever a failed one left. */
      ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->general_counts.ptr, 0, bytes, cuda->stream), "histogram scratch",
                   error);
      p.counts = (uint16_t *) cuda->general_counts.ptr;
    }

  kernel<<<(unsigned) (threads / GENERAL_BLOCK), GENERAL_BLOCK, smem, cuda->stream>>> (p);
  ES_CUDA_LAUNCHED (cuda, "general entropy kernel", error);
  return true;
}

bool
es_cuda_entropy_general (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  const EsEntropyDefinition *d = &job->definition;
  const EsBinner *binner = &frame->binner;
  GeneralParams p;
  EsSpan *spans;
  bool ok;

  if (frame->width <= 0 || frame->height <= 0)
    return true;
  memset (&p, 0, sizeof p);
  p.void_mark = GENERAL_VOID;
  p.in = frame->in;
  p.in_pitch = (unsigned) frame->in_pitch;
  p.width = frame->width;
  p.height = frame->height;
  p.u16 = frame->in_format == ES_FORMAT_U16;
  p.border = d->border;
  p.border_bin = d->border == ES_BORDER_CONSTANT ? es_binner_border_bin (binner, job) : 0u;
  p.bins = binner->bins;
  p.normalized = d->normalized;
  p.diff = (const unsigned long long *) cuda->general_clnc.ptr;
  p.out = (float *) frame->out;
  p.out_pitch = (unsigned) frame->out_pitch;

  /* The window's column spans. */
  p.n_spans = es_cuda_column_spans (job, &spans);
  if (p.n_spans < 0)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the window's spans");
  ok = upload_table (cuda, &cuda->general_spans, spans, sizeof *spans * (size_t) (p.n_spans > 0 ? p.n_spans : 1),
                     "window spans", error);
  p.spans = (const EsSpan *) cuda->general_spans.ptr;
  if (ok)
    ok = general_prepare (cuda, frame, job, &p, error);
  /* Up to 256 bins, 961 cells and 256 column spans: shared counts slid
   * down the column spans (entropy-span-counts.cu). Why, measured at 8192²
   * on the H200 (docs/performance/cuda-entropy-definitions.md): up to 16
   * bins it beat the kernel that packed the counts in registers at every
   * disk (r = 1 to 15, 9–15 % faster), which it replaces; with more bins, the sliding kernel 1.9–2.8×
   * and the sort kernel from 13 cells on (9 % at 13 and 25 cells, 2× at
   * 29). Windows of at most SORT_ONLY_CELLS cells with more than 16 bins
   * still sort: a 3×3 square sorts its samples in 0.59 ms, against 1.01. */
  const int cells = es_window_pixels (job);
  const bool span_counts = p.bins <= ES_CUDA_SPAN_COUNTS_MAX_BINS && cells <= ES_CUDA_MAX_COUNT
                           && p.n_spans <= ES_CUDA_SPAN_COUNTS_MAX_SPANS && (p.bins <= 16 || cells > SORT_ONLY_CELLS);
  bool ran = false;
  if (ok && span_counts)
    {
      /* The span-counts kernel counts void cells in a bin of their own, B,
       * where a mask makes them; cells clipped off the image without a
       * mask are bin 0, which it takes out by their position. So 8-bit
       * cells hold the bins unless a mask comes with 256 of them. */
      const bool masked = d->mask != NULL, clipped = !masked && d->border == ES_BORDER_CLIP;
      const bool bytes = !masked || p.bins <= 255;
      p.void_mark = (uint16_t) (masked ? p.bins : 0u);
      ok = bin_frame (cuda, job, &p, bytes, error);
      const EsCudaBinnedJob binned = {
        p.binned, p.binned_pitch, bytes, p.half_h, p.half_w, p.width, p.height, p.bins,
        p.normalized, masked, clipped, p.out, p.out_pitch,
        spans, p.n_spans, cells,
      };
      if (ok)
        ok = es_cuda_entropy_span_counts (cuda, &binned, &ran, error);
      p.void_mark = GENERAL_VOID;
    }
  free (spans);
  if (!ok || ran)
    return ok;
  return general_launch (cuda, job, &p, error);
}

/* Once per device: the differences of round(c ln c · 2^32) for every count
 * a window can hold, and the shared-memory limit of the kernel (256 bins of
 * 128 threads' counts, the differences and the 8-bit bin table). */
bool
es_cuda_entropy_general_init (EsCuda *cuda, EsError *error)
{
  const size_t entries = GENERAL_MAX_CELLS;
  unsigned long long *diff = (unsigned long long *) malloc (entries * sizeof *diff);
  bool ok;

  if (diff == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the c ln c table");
  for (size_t c = 0; c < entries; c++)
    {
      const double next = (double) (c + 1) * log ((double) (c + 1)), here = c ? (double) c * log ((double) c) : 0.0;
      diff[c] = (unsigned long long) llround (ldexp (next, GENERAL_FIX_BITS))
                - (unsigned long long) llround (ldexp (here, GENERAL_FIX_BITS));
    }
  ok = es_cuda_device_reserve (cuda, &cuda->general_clnc, entries * sizeof *diff, "c ln c table", error);
  if (ok)
    ok = es_cuda_check (cuda, cudaMemcpy (cuda->general_clnc.ptr, diff, entries * sizeof *diff,
                                          cudaMemcpyHostToDevice), "c ln c table", error);
  free (diff);
  ok = ok && es_cuda_entropy_span_counts_init (cuda, error);
  const int smem = GENERAL_SHARED_DIFFS * 8 + 512 + GENERAL_SHARED_BINS * 256;
  for (int shared = 0; ok && shared < 2; shared++)
    for (int binned = 0; binned < 2; binned++)
      ES_CUDA_TRY (cuda, cudaFuncSetAttribute ((const void *) general_kernels[shared][binned],
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   "shared memory limit", error);
  return ok;
}
