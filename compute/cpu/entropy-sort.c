/* SPDX-License-Identifier: MIT */
/* Local entropy over 5×5 windows by AVX-512 sorting networks: 64 windows a vector, one cost for any level count. */
#include "entropy-avx512.h"

#include <stdlib.h>

#ifdef ES_HAVE_AVX512_PATH

/* Every method that counts levels pays for L somewhere: a vector per level
 * (shuffle), a table load per level (columns), or 10 scalar histogram
 * updates a pixel (sliding, which photographs slow down further). With 25
 * cells a window, sorting them is cheaper at many levels: the byte lanes of
 * 25 vectors hold the 25 levels of 64 windows, a sorting network (vpminub,
 * vpmaxub) puts each window's levels in order, and equal levels become runs.
 *
 * With r_i the rank of sorted cell i within its run (0 for a run's first
 * cell), Σ_b T[c_b] = Σ_i δ[r_i], δ[r] = T[r + 1] − T[r]. Three cells at a
 * time, the sum depends on r_i and on whether cell i + 1 continues the run
 * of cell i and cell i + 2 that of cell i + 1: 25 · 4 < 128 cases, one
 * vpermi2b per byte plane of a table of those sums. The sums are the
 * sliding and column methods' (T at 2^18).
 *
 * The columns of the window are sorted first (each column serves five
 * windows); the network below then merges the five sorted columns: it is
 * Batcher's odd-even merge sort of 32 cells, cut to 25 (the cells beyond
 * never move), without the comparators that never exchange on inputs whose
 * columns are sorted (checked on every such 0/1 input, which by the 0/1
 * principle covers every input): 112 comparators instead of 140.
 *
 * Windows clipped by the image's edges (two rows and columns on each side)
 * are counted directly. */

#define SORT_WINDOW 5
#define SORT_CELLS 25
/* Bytes before and after each row copy and column array: the column sorts
 * run a vector beyond the row on each side, and the windows read two
 * columns beyond a block. */
#define MARGIN 64

/* Cells a, b of column-sorted windows: cell 5j + i is the i-th smallest of column j. */
/* The pairs stay in rows of the network's listing: clang-format would reflow them. */
/* clang-format off */
#define SORT25_NETWORK(X) \
  X(4, 5) X(14, 15) X(5, 7) X(8, 10) X(9, 11) X(12, 14) X(5, 6) X(9, 10) X(13, 14) X(0, 4) X(1, 5) \
  X(2, 6) X(8, 12) X(10, 14) X(11, 15) X(16, 20) X(17, 21) X(18, 22) X(19, 23) X(2, 4) X(3, 5) \
  X(10, 12) X(11, 13) X(18, 20) X(19, 21) X(1, 2) X(3, 4) X(5, 6) X(9, 10) X(11, 12) X(13, 14) \
  X(17, 18) X(19, 20) X(21, 22) X(0, 8) X(1, 9) X(2, 10) X(3, 11) X(4, 12) X(5, 13) X(6, 14) X(7, 15) \
  X(4, 8) X(5, 9) X(6, 10) X(7, 11) X(20, 24) X(2, 4) X(3, 5) X(6, 8) X(7, 9) X(10, 12) X(11, 13) \
  X(22, 24) X(1, 2) X(3, 4) X(5, 6) X(7, 8) X(9, 10) X(11, 12) X(13, 14) X(21, 22) X(23, 24) X(0, 16) \
  X(1, 17) X(2, 18) X(3, 19) X(4, 20) X(5, 21) X(6, 22) X(7, 23) X(8, 24) X(8, 16) X(9, 17) X(10, 18) \
  X(11, 19) X(12, 20) X(13, 21) X(14, 22) X(15, 23) X(4, 8) X(5, 9) X(6, 10) X(7, 11) X(12, 16) \
  X(13, 17) X(14, 18) X(15, 19) X(20, 24) X(2, 4) X(3, 5) X(6, 8) X(7, 9) X(10, 12) X(11, 13) \
  X(14, 16) X(15, 17) X(18, 20) X(19, 21) X(22, 24) X(1, 2) X(3, 4) X(5, 6) X(7, 8) X(9, 10) X(11, 12) \
  X(13, 14) X(15, 16) X(17, 18) X(19, 20) X(21, 22) X(23, 24)
/* clang-format on */

/* The five cells of a column (an optimal network of 9). */
#define SORT5_NETWORK(X) X (0, 1) X (3, 4) X (2, 4) X (2, 3) X (0, 3) X (0, 2) X (1, 4) X (1, 3) X (1, 2)

#define COMPARE_EXCHANGE(a, b)                                                                                         \
  {                                                                                                                    \
    __m512i low = _mm512_min_epu8 (v[a], v[b]);                                                                        \
    v[b] = _mm512_max_epu8 (v[a], v[b]);                                                                               \
    v[a] = low;                                                                                                        \
  }

typedef struct {
  /* Byte p of δ[r_i] + δ[r_i+1] + δ[r_i+2] at r_i + 32a + 64b: three
   * sorted cells from one of rank r_i, a and b saying whether cell i + 1
   * continues the run of cell i and cell i + 2 that of cell i + 1. */
  uint8_t triples[3][128];
} SortTables;

static void
sort_tables_init (SortTables *st, const EntropyTables *t)
{
  *st = (SortTables){ 0 };
  for (int r = 0; r < SORT_CELLS; r++)
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++)
        {
          /* The ranks of cells i + 1 and i + 2; they never exceed 24. */
          int next = a ? r + 1 : 0, after = b ? next + 1 : 0;
          uint32_t v = after < SORT_CELLS && next < SORT_CELLS ? t->delta[r] + t->delta[next] + t->delta[after] : 0;
          for (int p = 0; p < 3; p++)
            st->triples[p][r + 32 * a + 64 * b] = (uint8_t) (v >> (8 * p));
        }
}

typedef struct {
  uint8_t *rows[SORT_WINDOW];   /* copies of the window's level rows, slot y mod 5 */
  int mapped[SORT_WINDOW];      /* the image row each slot holds */
  uint8_t *sorted[SORT_WINDOW]; /* the i-th smallest level of each column of the window */
} SortScratch;

/* Sorts the columns of the window's rows, x from −64 to the padded width + 64. */
ES_AVX512 static void
sort_columns (const SortScratch *s, int top, int padded)
{
  for (int x = -MARGIN; x < padded + MARGIN; x += 64)
    {
      __m512i v[SORT_WINDOW];

      for (int i = 0; i < SORT_WINDOW; i++)
        v[i] = _mm512_loadu_si512 ((const void *) (s->rows[(top + i) % SORT_WINDOW] + x));
      SORT5_NETWORK (COMPARE_EXCHANGE)
      for (int i = 0; i < SORT_WINDOW; i++)
        _mm512_storeu_si512 ((void *) (s->sorted[i] + x), v[i]);
    }
}

/* The entropies of the full windows of columns x0..x0+63 (the ones within
 * two columns of an edge are redone by the caller). */
static inline __attribute__ ((always_inline)) ES_AVX512 void
sort_block (const SortScratch *s, const SortTables *st, int x0, int w, __m512d ln_n, __m512d inv_n, float *dst)
{
  const __m512i one = _mm512_set1_epi8 (1), above_a = _mm512_set1_epi8 (32), above_b = _mm512_set1_epi8 (64);
  __m512i v[SORT_CELLS], rank = _mm512_setzero_si512 ();
  __m512i all[3], odd[3];

  for (int j = 0; j < SORT_WINDOW; j++)
    for (int i = 0; i < SORT_WINDOW; i++)
      v[SORT_WINDOW * j + i] = _mm512_loadu_si512 ((const void *) (s->sorted[i] + x0 - 2 + j));
  SORT25_NETWORK (COMPARE_EXCHANGE)

  for (int p = 0; p < 3; p++)
    all[p] = odd[p] = _mm512_setzero_si512 ();
  for (int i = 0; i < SORT_CELLS; i += 3)
    {
      /* Whether cells i + 1 and i + 2 continue the run of cell i. */
      __mmask64 a = i + 1 < SORT_CELLS ? _mm512_cmpeq_epi8_mask (v[i], v[i + 1]) : 0;
      __mmask64 b = i + 2 < SORT_CELLS ? _mm512_cmpeq_epi8_mask (v[i + 1], v[i + 2]) : 0;
      __m512i index = _mm512_mask_add_epi8 (rank, a, rank, above_a);

      index = _mm512_mask_add_epi8 (index, b, index, above_b);
      for (int p = 0; p < 3; p++)
        {
          __m512i part = _mm512_permutex2var_epi8 (_mm512_loadu_si512 ((const void *) st->triples[p]), index,
                                                   _mm512_loadu_si512 ((const void *) (st->triples[p] + 64)));
          /* Word sums: all = even + 256 · odd (mod 2^16), odd exact. */
          all[p] = _mm512_add_epi16 (all[p], part);
          odd[p] = _mm512_add_epi16 (odd[p], _mm512_srli_epi16 (part, 8));
        }
      /* The rank of cell i + 3. */
      if (i + 3 < SORT_CELLS)
        {
          rank = _mm512_maskz_add_epi8 (a, rank, one);
          rank = _mm512_maskz_add_epi8 (b, rank, one);
          rank = _mm512_maskz_add_epi8 (_mm512_cmpeq_epi8_mask (v[i + 2], v[i + 3]), rank, one);
        }
    }

  /* Σ_p plane_p << 8p for the even and the odd pixels, then in pixel order. */
  {
    const __m512i even_first = _mm512_set_epi32 (23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i even_second = _mm512_set_epi32 (31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);

    for (int half = 0; half < 2; half++)
      {
        __m512i even = _mm512_setzero_si512 (), odds = _mm512_setzero_si512 ();

        for (int p = 0; p < 3; p++)
          {
            __m512i e = _mm512_sub_epi16 (all[p], _mm512_slli_epi16 (odd[p], 8));
            __m256i e_half = half ? _mm512_extracti64x4_epi64 (e, 1) : _mm512_castsi512_si256 (e);
            __m256i o_half = half ? _mm512_extracti64x4_epi64 (odd[p], 1) : _mm512_castsi512_si256 (odd[p]);

            even = _mm512_add_epi32 (even, _mm512_slli_epi32 (_mm512_cvtepu16_epi32 (e_half), 8 * p));
            odds = _mm512_add_epi32 (odds, _mm512_slli_epi32 (_mm512_cvtepu16_epi32 (o_half), 8 * p));
          }
        es_finish16_avx512 (_mm512_permutex2var_epi32 (even, even_first, odds), ln_n, inv_n, dst, x0 + 32 * half, w);
        es_finish16_avx512 (_mm512_permutex2var_epi32 (even, even_second, odds), ln_n, inv_n, dst, x0 + 32 * half + 16,
                            w);
      }
  }
}

ES_AVX512 static void
sort_row (const SortScratch *s, const SortTables *st, const RowFinish *f, int w, float *dst)
{
  __m512d ln_n = _mm512_set1_pd (f->ln_n), inv_n = _mm512_set1_pd (f->inv_n);

  for (int x0 = 0; x0 < w; x0 += 64)
    sort_block (s, st, x0, w, ln_n, inv_n, dst);
}

/* Σ T[count] of the window of (x, y) clipped to the image, from the row
 * copies; `hist` is all zero before and after. */
static uint32_t
clipped_sum (const SortScratch *s, const EntropyTables *t, int x, int y, int w, int h, uint16_t *hist, int *n)
{
  int r = SORT_WINDOW / 2;
  int x0 = x - r > 0 ? x - r : 0, x1 = x + r < w ? x + r : w - 1;
  int y0 = y - r > 0 ? y - r : 0, y1 = y + r < h ? y + r : h - 1;
  uint32_t sum = 0;

  for (int yy = y0; yy <= y1; yy++)
    for (int xx = x0; xx <= x1; xx++)
      hist[s->rows[yy % SORT_WINDOW][xx]]++;
  /* Each level's term once: the first of its cells takes it and clears the count. */
  for (int yy = y0; yy <= y1; yy++)
    for (int xx = x0; xx <= x1; xx++)
      {
        uint8_t level = s->rows[yy % SORT_WINDOW][xx];
        sum += t->value[hist[level]];
        hist[level] = 0;
      }
  *n = (y1 - y0 + 1) * (x1 - x0 + 1);
  return sum;
}

static void
band_sort (const EntropyTables *t, const SortTables *st, SortScratch *s, const EsImage *in, const EsImage *out,
           int levels, int y0, int y1, EsControl *control)
{
  int w = out->width, h = out->height, r = SORT_WINDOW / 2;
  int padded = (w + 63) & ~63;
  uint16_t hist[256] = { 0 };

  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int top = y - r > 0 ? y - r : 0, bottom = y + r < h ? y + r : h - 1;
      bool full_rows = y - r >= 0 && y + r < h;
      float *dst = es_image_row (out, y);

      for (int row = top; row <= bottom; row++)
        if (s->mapped[row % SORT_WINDOW] != row)
          {
            es_cpu_map_row (in, row, ES_CPU_MAP_LEVELS, levels, s->rows[row % SORT_WINDOW]);
            s->mapped[row % SORT_WINDOW] = row;
          }
      if (full_rows && w >= SORT_WINDOW)
        {
          RowFinish f = row_finish (t, SORT_WINDOW);

          sort_columns (s, top, padded);
          sort_row (s, st, &f, w, dst);
        }
      for (int x = 0; x < w; x++)
        {
          int n;
          uint32_t sum;

          if (full_rows && x == r && w - r > r)
            x = w - r;
          sum = clipped_sum (s, t, x, y, w, h, hist, &n);
          dst[x] = entropy_value (t, sum, n);
        }
      es_control_advance (control, 1);
    }
}

typedef struct {
  const EntropyTables *t;
  const SortTables *st;
  const EsImage *in, *out;
  int levels;
  size_t line; /* a row with its margins */
} Sort;

static void
sort_start_thread (const void *context, uint8_t *scratch)
{
  const Sort *c = context;

  /* The margins hold zeros: they are sorted and read, never used. */
  memset (scratch, 0, 2 * SORT_WINDOW * c->line);
}

static void
sort_band (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control)
{
  const Sort *c = context;
  SortScratch s;

  for (int i = 0; i < SORT_WINDOW; i++)
    {
      s.rows[i] = scratch + i * c->line + MARGIN;
      s.sorted[i] = scratch + (SORT_WINDOW + i) * c->line + MARGIN;
      s.mapped[i] = -1;
    }
  band_sort (c->t, c->st, &s, c->in, c->out, c->levels, y0, y1, control);
}

bool
es_cpu_entropy_sort (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                     EsControl *control, EsError *error)
{
  SortTables st;
  size_t padded = ((size_t) out->width + 63) / 64 * 64;
  Sort sort = { .t = t, .st = &st, .in = in, .out = out, .levels = job->levels, .line = MARGIN + padded + MARGIN };
  EsCpuBands work = {
    .what = "entropy",
    .scratch_bytes = 2 * SORT_WINDOW * sort.line,
    .context = &sort,
    .start_thread = sort_start_thread,
    .band = sort_band,
  };

  assert (job->window == SORT_WINDOW && t->window == SORT_WINDOW);
  sort_tables_init (&st, t);
  return es_cpu_run_bands (&work, out->height, control, error);
}
#endif
