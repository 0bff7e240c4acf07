/* SPDX-License-Identifier: MIT */
/* The general entropy variant on windows of at most 32 cells: each window's bins sorted, two windows a thread. */
#include "entropy-general-internal.h"

#define SMALL_ROWS 4  /* output rows a thread of the sort kernel computes: pairs */

/* Any number of bins (exact 16-bit bins too) without histograms: a thread
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
 * fixed-point c ln c (round(c ln c · 2^29), ES_CUDA_FINE_BITS) as
 * differences along each run, and finishes in double. */
template <int N, int H, int W>
static __global__ void __launch_bounds__ (GENERAL_BLOCK, 8)
entropy_small_kernel (GeneralParams p)
{
  __shared__ uint32_t s_diff[SMALL_CELLS];  /* D[c] = T[c + 1] − T[c] (< 2^32 at 2^29) */
  const int t = threadIdx.x;

  if (t < SMALL_CELLS)
    s_diff[t] = (uint32_t) (__ldg (&p.tables->clnc_fine[t + 1]) - __ldg (&p.tables->clnc_fine[t]));
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
        unsigned long long sum[2] = { 0, 0 };
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
                sum[h] += __ldg (&p.tables->clnc_fine[r - voids]) - __ldg (&p.tables->clnc_fine[r]);
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
            else if (sum[h] == __ldg (&p.tables->clnc_fine[n[h]]))
              value = 0.0f;
            else
              {
                const double e = entropy_from_fine (sum[h], ln_inv_fine (n[h], p.tables));
                const uint32_t most = p.bins < (uint32_t) n[h] ? p.bins : (uint32_t) n[h];
                value = (float) (p.normalized ? e / __ldg (&p.tables->ln_n[most]) : es_entropy_store (e, p.unit_scale));
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
  const void *kernel = square == 3            ? (const void *) entropy_small_kernel<9, 3, 3>
                       : square == 5          ? (const void *) entropy_small_kernel<25, 5, 5>
                       : p->n_cells <= 16     ? (const void *) entropy_small_kernel<16, 0, 0>
                       : p->n_cells <= 25     ? (const void *) entropy_small_kernel<25, 0, 0>
                                              : (const void *) entropy_small_kernel<32, 0, 0>;
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
  es_cuda_note_kernel (cuda, kernel, grid, GENERAL_BLOCK, 0, "small-window entropy kernel", true);
}

bool
es_cuda_general_sort (EsCuda *cuda, const EsJob *job, GeneralParams *p, EsError *error)
{
  /* Squares read the samples where they are the bins and no mask
   * leaves cells out; every other window reads the binned frame, its
   * cells as offsets in it. */
  es_window_extent (job, &p->half_h, &p->half_w);
  small_cells (job, p);
  if (small_square (p) != 0 && p->bin_of == NULL && p->mask == NULL)
    p->binned = NULL;
  else
    {
      if (!es_cuda_general_bin_frame (cuda, job, p, false, error))
        return false;
      for (int i = 0; i < p->n_cells; i++)
        p->cell_offset[i] = p->cell_dy[i] * (int) p->binned_pitch + p->cell_dx[i];
    }
  launch_small (cuda, p);
  ES_CUDA_LAUNCHED (cuda, "small-window entropy kernel", error);
  return true;
}
