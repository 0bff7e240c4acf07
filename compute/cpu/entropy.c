/* SPDX-License-Identifier: MIT */
/* Local entropy on the CPU: sliding, column-histogram and AVX2 shuffle methods, chosen per window and level count. */
#include "es-cpu.h"
#include "es-cpu-internal.h"
#include "../es-definitions.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#ifdef ES_HAVE_AVX2_PATH
#include <immintrin.h>
#endif

/* Three methods compute the same sums, each cheapest somewhere; a cost
 * model (method_cost, fitted on this project's Zen 4) picks one per window
 * k and level count L:
 *
 * - sliding (any job): per output row, the window histogram slides right
 *   one column at a time; each of the 2k pixels that leave or enter moves a
 *   count by one and the sum by a table difference. O(k) scalar updates a
 *   pixel, whatever L: the choice for many levels and small windows.
 * - columns (AVX2, any job): Perreault and Hébert's column histograms.
 *   Each image column keeps the counts of the k rows under the window;
 *   moving down a row adds one pixel to it and removes one. Along a row the
 *   window histogram adds the entering column and subtracts the leaving
 *   one, 16 u16 counts per AVX2 register, and Σ T[count] is summed afresh
 *   over the L levels, two pixels per table load (pairs below). O(L) a
 *   pixel, whatever the window: the choice for large windows, and the
 *   bound on every job's cost.
 * - shuffle (AVX2, k ≤ 15, L < 255): every level counted 32 pixels per
 *   vector, T looked up with vpshufb. O(L·k²/16) cheap vector work a pixel:
 *   the choice for small windows and few levels (5×5, 16 levels: the
 *   default job).
 *
 * Each keeps its window sums of c·ln c as integers, T[c] = round(c ln c ·
 * 2^bits), so moving a window is exact, nothing drifts along a row, and
 * every run gives the same bits. A sum has at most n/2 terms with c ≥ 2
 * (T[0] = T[1] = 0), so the rounding moves (1/n)·Σ by at most 2^-bits / 4.
 * The sums are uint32: a window's sum is below 2^31 (ES_ENTROPY_BITS), and
 * modular arithmetic makes every partial sum on the way harmless. */

#define ES_MAX_COUNT (ES_WINDOW_MAX * ES_WINDOW_MAX)

/* Rows copied for the vector loops run on to a multiple of this many bytes. */
#define ES_PAD 32

/* Sliding and columns: T[961] · 2^18 ≈ 1.73e9 < 2^31, and the rounding
 * leaves 2^-20 ≈ 1e-6 of the 1e-5 budget. */
#define ES_ENTROPY_BITS 18
/* Shuffle: four bytes hold T[225] · 2^17 ≈ 1.6e8. */
#define ES_SIMD_BITS 17

typedef struct {
  int window;
  /* value[c] = T[c]; delta[c] = T[c+1] − T[c]. */
  uint32_t value[ES_MAX_COUNT + 1];
  uint32_t delta[ES_MAX_COUNT];
  /* For a window of n pixels: ln n, and 2^-bits / n, which turns a scaled
   * sum into (1/n) Σ c ln c without a division per pixel. */
  double ln_n[ES_MAX_COUNT + 1];
  double inv_n[ES_MAX_COUNT + 1];
} EntropyTables;

static int64_t
entropy_scaled (int c, int bits)
{
  return c > 1 ? llround (ldexp (c * log (c), bits)) : 0;
}

static void
entropy_tables_init (EntropyTables *t, int window, int bits)
{
  t->window = window;
  t->value[0] = 0;
  for (int c = 1; c <= window * window; c++)
    {
      t->value[c] = (uint32_t) entropy_scaled (c, bits);
      t->delta[c - 1] = t->value[c] - t->value[c - 1];
      t->ln_n[c] = log (c);
      t->inv_n[c] = ldexp (1.0 / c, -bits);
    }
}

static inline float
entropy_value (const EntropyTables *t, uint32_t sum, int n)
{
  double h = t->ln_n[n] - (double) sum * t->inv_n[n];
  /* A window of one level leaves only the rounding of T around zero: it is
   * exactly 0 (and never −0). */
  return h >= ES_ENTROPY_ZERO_BELOW ? (float) h : 0.0f;
}

/* What turns the scaled sum of a window of `rows` × k pixels into its
 * entropy. */
typedef struct {
  double ln_n, inv_n;
} RowFinish;

static inline RowFinish
row_finish (const EntropyTables *t, int rows)
{
  return (RowFinish) { t->ln_n[rows * t->window], t->inv_n[rows * t->window] };
}

/* For the scalar loops of the sliding and column methods, where the
 * finish fits between table loads and a predicted branch is cheapest. */
static inline float
finish_value (const RowFinish *f, uint32_t sum)
{
  /* Window sums are below 2^31: a signed conversion is one instruction. */
  double v = f->ln_n - (int32_t) sum * f->inv_n;

  return v >= ES_ENTROPY_ZERO_BELOW ? (float) v : 0.0f;
}

/* Redoes the columns within r of the left and right edges, whose window
 * is clipped to fewer columns than k. */
static void
entropy_finish_edges (const EntropyTables *t, const uint32_t *sums, int w, int rows, float *dst)
{
  int r = t->window / 2;
  int inner0 = r < w ? r : w;
  int inner1 = w - r > inner0 ? w - r : inner0;

  for (int x = 0; x < w; x = x + 1 == inner0 ? inner1 : x + 1)
    {
      int left = x - r < 0 ? 0 : x - r;
      int right = x + r >= w ? w - 1 : x + r;
      dst[x] = entropy_value (t, sums[x], rows * (right - left + 1));
    }
}

#ifdef ES_HAVE_AVX2_PATH
/* The same value for a loop that should vectorize: the choice is a mask,
 * not the branch GCC makes of the expression above (the conversion might
 * trap), so a photograph's runs of uniform windows cost no mispredictions. */
static inline float
finish_value_masked (const RowFinish *f, uint32_t sum)
{
  double v = f->ln_n - (int32_t) sum * f->inv_n;
  float h = (float) v;
  uint32_t bits;

  memcpy (&bits, &h, sizeof bits);
  bits &= -(uint32_t) (v >= ES_ENTROPY_ZERO_BELOW);
  memcpy (&h, &bits, sizeof h);
  return h;
}

/* Turns one row of scaled sums into entropies (for the shuffle method,
 * whose sums come a row at a time); `rows` is the clipped window's height.
 * Columns within r of an edge have a clipped window; the others share one
 * n, and that loop vectorizes. */
ES_HOT static void
entropy_finish_row (const EntropyTables *t, const uint32_t *sums, int w, int rows, float *dst)
{
  RowFinish f = row_finish (t, rows);
  int r = t->window / 2;
  int inner0 = r < w ? r : w;
  int inner1 = w - r > inner0 ? w - r : inner0;

  for (int x = inner0; x < inner1; x++)
    dst[x] = finish_value_masked (&f, sums[x]);
  entropy_finish_edges (t, sums, w, rows, dst);
}
#endif

/* The rows of output row y's window, clipped to the image. */
static inline void
window_rows (int y, int r, int h, int *top, int *bottom)
{
  *top = y - r > 0 ? y - r : 0;
  *bottom = y + r < h ? y + r : h - 1;
}

/* ---- sliding ----------------------------------------------------------------- */

/* Adding a pixel of level v moves the sum by delta[count], removing one by
 * −delta[count − 1]. Each row's leaving pixel goes before its entering one,
 * so no count ever exceeds the window's n. */
#define SLIDE_ADD(sum, v) ((sum) += t->delta[hist[v]++])
#define SLIDE_REMOVE(sum, v) ((sum) -= t->delta[--hist[v]])

/* The window sums of one output row from its `rows` level rows, `stride`
 * bytes apart from `first` (no table of row pointers to load per update).
 * Inlined with a constant row count for the common small windows so that
 * the loop over the rows unrolls. */
static inline __attribute__ ((always_inline)) void
sliding_row_inline (const EntropyTables *t, const uint8_t *first, size_t stride, int rows, int w,
                    uint32_t *sums, float *dst, const int fixed_rows)
{
  int r = t->window / 2;
  int n = fixed_rows ? fixed_rows : rows;
  RowFinish f = row_finish (t, n);
  /* 32-bit counts: a few per cent faster than 16-bit ones here. */
  uint32_t hist[256] = { 0 };
  uint32_t s = 0;
  int x = 0;

  /* The window of x = 0 holds columns 0..r: 0..r−1 now, r in the loop. */
  for (int c = 0; c < r && c < w; c++)
    for (int i = 0; i < n; i++)
      SLIDE_ADD (s, first[i * stride + c]);

  /* Column x + r enters; column x − r − 1 leaves from x = r + 1 on. */
  for (; x <= r && x < w; x++)
    {
      if (x + r < w)
        for (int i = 0; i < n; i++)
          SLIDE_ADD (s, first[i * stride + x + r]);
      sums[x] = s;
      dst[x] = finish_value (&f, s);  /* x = r has a full window; the edges are redone below */
    }
  for (; x + r < w; x++)
    {
      const uint8_t *p = first + x;
      /* Two sums, so that a late table load delays only half the chain. */
      uint32_t in = 0, out = 0;

      for (int i = 0; i < n; i++, p += stride)
        {
          out += t->delta[--hist[p[-r - 1]]];
          in += t->delta[hist[p[r]]++];
        }
      s += in - out;
      sums[x] = s;
      /* The finish's arithmetic fits between the table loads. */
      dst[x] = finish_value (&f, s);
    }
  for (; x < w; x++)
    {
      for (int i = 0; i < n; i++)
        SLIDE_REMOVE (s, first[i * stride + x - r - 1]);
      sums[x] = s;
      dst[x] = finish_value (&f, s);
    }
  entropy_finish_edges (t, sums, w, n, dst);
}

#define ES_SLIDING_ROW(rows) \
  ES_HOT static void \
  sliding_row_##rows (const EntropyTables *t, const uint8_t *first, size_t stride, int n, int w, uint32_t *sums, \
                      float *dst) \
  { \
    sliding_row_inline (t, first, stride, n, w, sums, dst, rows); \
  }

ES_SLIDING_ROW (0)
ES_SLIDING_ROW (3)
ES_SLIDING_ROW (5)
ES_SLIDING_ROW (7)

/* One row of entropies from its window's `rows` level rows. */
static void
sliding_row (const EntropyTables *t, const uint8_t *first, size_t stride, int rows, int w, uint32_t *sums,
             float *dst)
{
  switch (rows)
    {
    case 3: sliding_row_3 (t, first, stride, rows, w, sums, dst); break;
    case 5: sliding_row_5 (t, first, stride, rows, w, sums, dst); break;
    case 7: sliding_row_7 (t, first, stride, rows, w, sums, dst); break;
    default: sliding_row_0 (t, first, stride, rows, w, sums, dst); break;
    }
}

/* Each band maps its rows and its halo into a ring of 2k rows in which
 * row y sits twice, at slots y mod k and y mod k + k: the window's rows,
 * at most k consecutive ones, are then always consecutive slots, and no
 * table of row pointers is loaded per update. Slots are a multiple of 64
 * bytes plus 64 apart: at a power-of-two distance (a 4096-pixel image) the
 * k rows under one column would all fall into one set of the L1 cache,
 * which holds eight, and every update beyond the eighth row would miss. */
static bool
entropy_sliding (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                 EsControl *control, EsError *error)
{
  int w = in->width, h = in->height, k = t->window, r = k / 2;
  int threads = omp_get_max_threads ();
  int rows_per_band = es_cpu_band_rows (h);
  int bands = es_cpu_band_count (h, rows_per_band);
  size_t stride = ((size_t) w + 63) / 64 * 64 + 64;
  size_t ring_size = 2 * (size_t) k * stride;
  size_t sums_size = ((size_t) w * sizeof (uint32_t) + 63) / 64 * 64;
  size_t per_thread = sums_size + ring_size;
  uint8_t *memory = es_cpu_scratch_alloc (per_thread, threads, "entropy", error);

  if (memory == NULL)
    return false;

#pragma omp parallel num_threads (threads)
  {
    uint8_t *mine = memory + per_thread * (size_t) omp_get_thread_num ();
    uint32_t *sums = (uint32_t *) mine;
    uint8_t *ring = mine + sums_size;

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < h ? y0 + rows_per_band : h;
        int next = y0 - r > 0 ? y0 - r : 0;  /* the next row to map */

        for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
          {
            int top, bottom;

            window_rows (y, r, h, &top, &bottom);
            for (; next <= bottom; next++)
              {
                uint8_t *slot = ring + (size_t) (next % k) * stride;
                es_cpu_map_row (in, next, ES_CPU_MAP_LEVELS, job->levels, slot);
                memcpy (slot + (size_t) k * stride, slot, (size_t) w);
              }
            sliding_row (t, ring + (size_t) (top % k) * stride, stride, bottom - top + 1, w, sums,
                         es_image_row (out, y));
            es_control_advance (control, 1);
          }
      }
  }
  free (memory);
  return true;
}

#ifdef ES_HAVE_AVX2_PATH
/* ---- columns ----------------------------------------------------------------- */

#define ES_COLUMNS_MAX_LEVELS 256

/* Each thread keeps every column's counts of L levels, w·L·2 bytes (2 MiB
 * for a 4096-pixel row and 256 levels). Wider rows with many levels go to
 * the sliding method, whose rows take w·2k bytes. */
#define ES_COLUMNS_MAX_BYTES ((size_t) 32 << 20)

/* The counts kept per column: L rounded up to a power of two from 16 (the
 * window histogram then takes 1, 2, 4, 8 or 16 AVX2 registers). */
static int
columns_lanes (int levels)
{
  return levels <= 16 ? 16 : levels <= 32 ? 32 : levels <= 64 ? 64 : levels <= 128 ? 128 : 256;
}

/* Per thread, for columns −r−1 .. w+r. */
static size_t
columns_bytes (int width, int window, int levels)
{
  return ((size_t) width + (size_t) window + 1) * (size_t) columns_lanes (levels) * sizeof (uint16_t);
}

/* The columns of a chunk: about 8 KiB of counts, which stay in L1 between
 * the passes over them. */
#define ES_COLUMNS_CHUNK_BYTES 8192

/* Two neighbouring pixels x and x + 1 per lookup: a level's count c at x
 * becomes c + d at x + 1 (|d| ≤ k, a column's worth), and
 *
 *   pairs[c · (2k + 1) + d + k] = T[c] | T[c + d] << 32,
 *
 * so one 64-bit load per level gives both pixels' terms, and a 64-bit sum
 * of them is S(x) in its low half and S(x + 1) in its high half (each
 * below 2^31, so no carry crosses). That halves the table loads, which are
 * what this method spends its time on. The table has (k² + 1)(2k + 1)
 * entries, 473 KiB at k = 31, of which a row touches a few KiB: counts move
 * little from one pixel to the next. */
typedef struct {
  uint64_t *pairs;
  int span;  /* 2k + 1 */
} PairTable;

static bool
pair_table_init (PairTable *pt, const EntropyTables *t, EsError *error)
{
  int k = t->window, max = k * k;

  pt->span = 2 * k + 1;
  pt->pairs = malloc ((size_t) (max + 1) * (size_t) pt->span * sizeof *pt->pairs);
  if (pt->pairs == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the entropy tables");
  for (int c = 0; c <= max; c++)
    for (int d = -k; d <= k; d++)
      pt->pairs[(size_t) c * pt->span + d + k] =
        c + d >= 0 && c + d <= max ? t->value[c] | (uint64_t) t->value[c + d] << 32 : 0;
  return true;
}

/* Per-thread scratch of the column method. */
typedef struct {
  /* Counts of column x at cols + x · lp, for x in −r−1 .. w+r: the columns
   * outside the image stay zero, so that the window histogram slides over
   * them without a test. lp: L rounded up to 16. */
  uint16_t *cols;
  int lp;
  uint32_t *sums;
  uint16_t *index;  /* the pair-table index of each level, per pair of pixels of a chunk */
  EsCpuRing ring;   /* k + 1 level rows: the window and the row leaving it */
} ColumnScratch;

/* Adds row `enter` to the counts of columns x0..x1−1 and removes row
 * `leave` (either may be NULL). */
static inline __attribute__ ((always_inline)) void
columns_slide_down (uint16_t *cols, int lp, int x0, int x1, const uint8_t *enter, const uint8_t *leave)
{
  if (enter && leave)
    for (int x = x0; x < x1; x++)
      {
        uint16_t *c = cols + (size_t) x * lp;
        c[enter[x]]++;
        c[leave[x]]--;
      }
  else if (enter)
    for (int x = x0; x < x1; x++)
      cols[(size_t) x * lp + enter[x]]++;
  else if (leave)
    for (int x = x0; x < x1; x++)
      cols[(size_t) x * lp + leave[x]]--;
}

/* Keeps a sum in a general register: scalar loads are what Zen 4 does
 * fastest here; left alone, GCC packs the lookups into SSE lanes with
 * pextrw and punpck, up to twice as slow (vpgatherdd is slower still). */
#define ES_SCALAR(v) __asm__ ("" : "+r" (v))

/* The entropies of the n pixels of a chunk, two at a time, from the
 * pair-table indices of `groups` · 4 levels each (levels from L up to a
 * multiple of 4 have c = d = 0, whose entry is 0). The indices were
 * written a pass earlier, so these loads never wait for a store to
 * forward; the arithmetic of the finish comes almost free beside them.
 * Inlined with constant groups, unrolled. */
static inline __attribute__ ((always_inline)) void
columns_lookup_inline (const uint64_t *pairs, const uint16_t *index, int lp, int n, const RowFinish *f,
                       uint32_t *sums, float *dst, const int groups)
{
  for (int x = 0; x < n; x += 2)
    {
      const uint16_t *i = index + (size_t) (x / 2) * lp;
      uint64_t s0 = 0, s1 = 0, s;

      for (int b = 0; b < 4 * groups; b += 4)
        {
          s0 += pairs[i[b]] + pairs[i[b + 2]];
          s1 += pairs[i[b + 1]] + pairs[i[b + 3]];
          ES_SCALAR (s0);
          ES_SCALAR (s1);
        }
      s = s0 + s1;
      sums[x] = (uint32_t) s;
      dst[x] = finish_value (f, (uint32_t) s);
      if (x + 1 < n)
        {
          sums[x + 1] = (uint32_t) (s >> 32);
          dst[x + 1] = finish_value (f, (uint32_t) (s >> 32));
        }
    }
}

typedef void (*ColumnsLookup) (const uint64_t *, const uint16_t *, int, int, const RowFinish *, uint32_t *,
                               float *);

#define ES_COLUMNS_LOOKUP(groups) \
  static void \
  columns_lookup_##groups (const uint64_t *pairs, const uint16_t *index, int lp, int n, const RowFinish *f, \
                           uint32_t *sums, float *dst) \
  { \
    columns_lookup_inline (pairs, index, lp, n, f, sums, dst, groups); \
  }

ES_COLUMNS_LOOKUP (1)
ES_COLUMNS_LOOKUP (2)
ES_COLUMNS_LOOKUP (3)
ES_COLUMNS_LOOKUP (4)
ES_COLUMNS_LOOKUP (5)
ES_COLUMNS_LOOKUP (6)
ES_COLUMNS_LOOKUP (7)
ES_COLUMNS_LOOKUP (8)
ES_COLUMNS_LOOKUP (9)
ES_COLUMNS_LOOKUP (10)
ES_COLUMNS_LOOKUP (11)
ES_COLUMNS_LOOKUP (12)
ES_COLUMNS_LOOKUP (13)
ES_COLUMNS_LOOKUP (14)
ES_COLUMNS_LOOKUP (15)
ES_COLUMNS_LOOKUP (16)

/* Beyond 64 levels the loop over the groups costs little beside them. */
static void
columns_lookup_many (const uint64_t *pairs, const uint16_t *index, int lp, int n, const RowFinish *f,
                     uint32_t *sums, float *dst)
{
  columns_lookup_inline (pairs, index, lp, n, f, sums, dst, lp / 4);
}

/* By the number of 4-level groups that hold the levels, up to 64 levels. */
static const ColumnsLookup columns_lookups[16] = {
  columns_lookup_1, columns_lookup_2, columns_lookup_3, columns_lookup_4,
  columns_lookup_5, columns_lookup_6, columns_lookup_7, columns_lookup_8,
  columns_lookup_9, columns_lookup_10, columns_lookup_11, columns_lookup_12,
  columns_lookup_13, columns_lookup_14, columns_lookup_15, columns_lookup_16,
};

/* Moves the column counts down a row and computes one row of entropies, a
 * chunk of columns at a time: the chunk's columns take the entering and
 * leaving pixels (scalar updates, a chunk ahead of the window, so that
 * their stores have long left the store queue when the counts are loaded
 * as vectors); the window histogram slides over the chunk, and for each
 * pair of pixels the pair-table index of every level is written out; then
 * the lookups sum the table. Inlined with a constant number of 16-level
 * vectors so that the window histogram stays in registers. */
static inline __attribute__ ((always_inline)) ES_AVX2 void
columns_row_inline (const EntropyTables *t, const PairTable *pt, const ColumnScratch *s, int w, int levels,
                    const uint8_t *enter, const uint8_t *leave, int rows, float *out, const int chunks)
{
  const int lp = 16 * chunks;
  const int step = ES_COLUMNS_CHUNK_BYTES / (lp * (int) sizeof (uint16_t));
  const int r = t->window / 2;
  RowFinish f = row_finish (t, rows);
  ColumnsLookup lookup = levels <= 64 ? columns_lookups[(levels + 3) / 4 - 1] : columns_lookup_many;
  const uint16_t *cols = s->cols;
  uint16_t *index = s->index;
  /* index = c · (2k + 1) + d + k */
  __m256i span = _mm256_set1_epi16 ((short) pt->span), offset = _mm256_set1_epi16 ((short) (pt->span / 2));
  __m256i hist[16];

  columns_slide_down (s->cols, lp, 0, r < w ? r : w, enter, leave);
  for (int c = 0; c < chunks; c++)
    hist[c] = _mm256_setzero_si256 ();
  for (int x = -r; x < r; x++)
    for (int c = 0; c < chunks; c++)
      hist[c] = _mm256_add_epi16 (hist[c], _mm256_load_si256 ((const __m256i *) (cols + x * lp + 16 * c)));

  for (int x0 = 0; x0 < w; x0 += step)
    {
      int x1 = x0 + step < w ? x0 + step : w;

      columns_slide_down (s->cols, lp, x0 + r < w ? x0 + r : w, x1 + r < w ? x1 + r : w, enter, leave);
      /* With an odd x1 − x0 (the row's last chunk) the last pair's second
       * pixel is x1 = w, which reads the zero column w + r; its result is
       * dropped. */
      for (int x = x0; x < x1; x += 2)
        {
          const uint16_t *in = cols + (x + r) * lp, *gone = cols + (x - r - 1) * lp;
          uint16_t *dst = index + (size_t) ((x - x0) / 2) * lp;

          for (int c = 0; c < chunks; c++)
            {
              __m256i d0 = _mm256_sub_epi16 (_mm256_load_si256 ((const __m256i *) (in + 16 * c)),
                                             _mm256_load_si256 ((const __m256i *) (gone + 16 * c)));
              __m256i d1 = _mm256_sub_epi16 (_mm256_load_si256 ((const __m256i *) (in + lp + 16 * c)),
                                             _mm256_load_si256 ((const __m256i *) (gone + lp + 16 * c)));
              __m256i h0 = _mm256_add_epi16 (hist[c], d0);

              /* c · (2k + 1) + d + k ≤ 961 · 63 + 62 < 2^16. */
              _mm256_store_si256 ((__m256i *) (dst + 16 * c),
                                  _mm256_add_epi16 (_mm256_mullo_epi16 (h0, span), _mm256_add_epi16 (d1, offset)));
              hist[c] = _mm256_add_epi16 (h0, d1);
            }
        }
      lookup (pt->pairs, index, lp, x1 - x0, &f, s->sums + x0, out + x0);
    }
  entropy_finish_edges (t, s->sums, w, rows, out);
}

#define ES_COLUMNS_ROW(chunks) \
  ES_AVX2 static void \
  columns_row_##chunks (const EntropyTables *t, const PairTable *pt, const ColumnScratch *s, int w, int levels, \
                        const uint8_t *enter, const uint8_t *leave, int rows, float *out) \
  { \
    columns_row_inline (t, pt, s, w, levels, enter, leave, rows, out, chunks); \
  }

ES_COLUMNS_ROW (1)
ES_COLUMNS_ROW (2)
ES_COLUMNS_ROW (4)
ES_COLUMNS_ROW (8)
ES_COLUMNS_ROW (16)

/* Rows y0..y1−1: the column counts start with the rows above y0 that its
 * window and the row leaving it cover, then follow the window down. */
static void
entropy_columns_band (const EntropyTables *t, const PairTable *pt, ColumnScratch *s, const EsImage *in,
                      const EsImage *out, int levels, int y0, int y1, EsControl *control)
{
  int w = out->width, h = out->height;
  int r = t->window / 2;
  int lp = s->lp;
  EsCpuRing *ring = &s->ring;
  uint16_t *cols = s->cols;
  void (*row) (const EntropyTables *, const PairTable *, const ColumnScratch *, int, int, const uint8_t *,
               const uint8_t *, int, float *) =
    lp == 16 ? columns_row_1 : lp == 32 ? columns_row_2 : lp == 64 ? columns_row_4 : lp == 128 ? columns_row_8
                                                                                   : columns_row_16;

  memset (cols - (size_t) (r + 1) * lp, 0, (size_t) (w + 2 * r + 2) * lp * sizeof *cols);
  /* The loop below first drops row y0 − r − 1 and adds row y0 + r. */
  es_cpu_ring_start (ring, y0 - r - 1 > 0 ? y0 - r - 1 : 0);
  for (int y = y0 - r - 1; y < y0 + r; y++)
    if (y >= 0 && y < h)
      {
        es_cpu_ring_fill (ring, in, ES_CPU_MAP_LEVELS, levels, y);
        columns_slide_down (cols, lp, 0, w, es_cpu_ring_row (ring, y), NULL);
      }

  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int top, bottom;
      const uint8_t *enter = NULL, *leave = NULL;

      window_rows (y, r, h, &top, &bottom);
      if (y + r < h)
        {
          es_cpu_ring_fill (ring, in, ES_CPU_MAP_LEVELS, levels, y + r);
          enter = es_cpu_ring_row (ring, y + r);
        }
      if (y - r - 1 >= 0)
        leave = es_cpu_ring_row (ring, y - r - 1);
      row (t, pt, s, w, levels, enter, leave, bottom - top + 1, es_image_row (out, y));
      es_control_advance (control, 1);
    }
}

static bool
entropy_columns (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                 EsControl *control, EsError *error)
{
  int w = out->width, h = out->height, k = job->window, r = k / 2;
  int threads = omp_get_max_threads ();
  int lp = columns_lanes (job->levels);
  size_t cols_size = columns_bytes (w, k, job->levels);
  size_t sums_size = ((size_t) w * sizeof (uint32_t) + 63) / 64 * 64;
  size_t index_size = ES_COLUMNS_CHUNK_BYTES / 2;
  size_t ring_size = es_cpu_map_is_identity (in, ES_CPU_MAP_LEVELS) ? 0 : (size_t) (k + 1) * (size_t) w;
  size_t per_thread = cols_size + sums_size + index_size + ring_size;
  int rows_per_band = es_cpu_band_rows (h);
  int bands = es_cpu_band_count (h, rows_per_band);
  PairTable pt;
  uint8_t *memory;

  assert (job->levels <= ES_COLUMNS_MAX_LEVELS);
  if (!pair_table_init (&pt, t, error))
    return false;
  /* Each thread's block starts on 64 bytes: the counts are loaded aligned. */
  memory = es_cpu_scratch_alloc (per_thread + 64, threads, "entropy", error);
  if (memory == NULL)
    {
      free (pt.pairs);
      return false;
    }

#pragma omp parallel num_threads (threads)
  {
    uint8_t *base = memory + (size_t) (per_thread + 64) * (size_t) omp_get_thread_num ();
    uint8_t *mine = base + (64 - (uintptr_t) base % 64) % 64;
    ColumnScratch s = {
      .cols = (uint16_t *) mine + (size_t) (r + 1) * lp,
      .lp = lp,
      .sums = (uint32_t *) (mine + cols_size),
      .index = (uint16_t *) (mine + cols_size + sums_size),
      .ring = { mine + cols_size + sums_size + index_size, (size_t) w, k + 1, 0, { 0 } },
    };

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < h ? y0 + rows_per_band : h;
        entropy_columns_band (t, &pt, &s, in, out, job->levels, y0, y1, control);
      }
  }
  free (memory);
  free (pt.pairs);
  return true;
}

/* ---- shuffle ----------------------------------------------------------------- */

/* The small-window path counts every level separately, 32 pixels per vector:
 * per-column counts of each level slide down the image (add the entering
 * row, subtract the leaving one), a window count is the sum of k column
 * counts, and T[count] is looked up with vpshufb. T is cut into bytes
 * (planes) and each plane into 16-entry slices, the most vpshufb indexes. A
 * pixel costs O(L) cheap vector work, which beats O(k) scalar updates for
 * small windows and few levels: 5×5 with 16 levels is the default. Window
 * counts must fit a byte (k ≤ 15: at most 225) and T[225] · 2^17 ≈ 1.6e8
 * fits four planes; the 2^-19 rounding error leaves most of the 1e-5 budget
 * to spare. */
#define ES_SIMD_MAX_WINDOW 15
#define ES_SIMD_MAX_SLICES ((ES_SIMD_MAX_WINDOW * ES_SIMD_MAX_WINDOW + 16) / 16)

typedef struct {
  int levels;
  uint8_t table[4][ES_SIMD_MAX_SLICES][16];  /* [plane][slice][count % 16] */
} ShuffleTables;

static void
shuffle_tables_init (ShuffleTables *st, int window, int levels)
{
  int max_count = window * window;

  *st = (ShuffleTables) { 0 };
  st->levels = levels;
  for (int c = 0; c <= max_count; c++)
    {
      uint32_t v = (uint32_t) entropy_scaled (c, ES_SIMD_BITS);
      for (int p = 0; p < 4; p++)
        st->table[p][c / 16][c % 16] = (uint8_t) (v >> (8 * p));
    }
}

/* Per-thread scratch of the SIMD path. */
typedef struct {
  uint8_t *counts;       /* levels rows of per-column counts, r zero columns each side */
  size_t counts_stride;
  uint32_t *sums;        /* one row of scaled Σ T[count] */
  EsCpuRing ring;        /* k + 1 level rows: the window and the row leaving it */
  const uint8_t *none;   /* a row of 0xFF, which counts nothing */
} SimdScratch;

/* Adds row `enter` to the column counts and subtracts row `leave` (either
 * may be s->none). Rows run on to a multiple of ES_PAD bytes with 0xFF,
 * which no level of a SIMD job matches, so the loop reads whole blocks. */
ES_AVX2 static void
simd_slide_columns (const SimdScratch *s, int levels, int w, int r, const uint8_t *enter,
                    const uint8_t *leave)
{
  for (int x = 0; x < w; x += 32)
    {
      __m256i in = _mm256_loadu_si256 ((const __m256i *) (enter + x));
      __m256i out = _mm256_loadu_si256 ((const __m256i *) (leave + x));
      for (int b = 0; b < levels; b++)
        {
          __m256i level = _mm256_set1_epi8 ((char) b);
          __m256i *col = (__m256i *) (s->counts + (size_t) b * s->counts_stride + r + x);
          __m256i c = _mm256_loadu_si256 (col);
          /* A match is −1: subtracting it counts one in, adding it one out. */
          c = _mm256_sub_epi8 (c, _mm256_cmpeq_epi8 (in, level));
          c = _mm256_add_epi8 (c, _mm256_cmpeq_epi8 (out, level));
          _mm256_storeu_si256 (col, c);
        }
    }
}

/* s->sums[x] = Σ_b T[window count of level b at x], for one row. Inlined
 * with constant window, slices and planes so that the accumulators stay in
 * registers. */
static inline __attribute__ ((always_inline)) ES_AVX2 void
simd_window_sums_inline (const SimdScratch *s, const ShuffleTables *st, int w, const int window,
                         const int slices, const int planes)
{
  __m256i tables[4][ES_SIMD_MAX_SLICES];
  __m256i bias = _mm256_set1_epi8 (0x70);

  for (int p = 0; p < planes; p++)
    for (int i = 0; i < slices; i++)
      tables[p][i] = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) st->table[p][i]));

  for (int x = 0; x < w; x += 32)
    {
      /* Per plane, the byte sums of the first and last 16 pixels (≤ 256 · 255). */
      __m256i acc[4][2];

      for (int p = 0; p < planes; p++)
        acc[p][0] = acc[p][1] = _mm256_setzero_si256 ();

      for (int b = 0; b < st->levels; b++)
        {
          const uint8_t *col = s->counts + (size_t) b * s->counts_stride + x;
          __m256i count = _mm256_loadu_si256 ((const __m256i *) col);
          __m256i v[4];

          for (int j = 1; j < window; j++)
            count = _mm256_add_epi8 (count, _mm256_loadu_si256 ((const __m256i *) (col + j)));
          /* Slice i sees count − 16i plus 0x70, saturated: 0x70..0x7F inside
           * the slice, ≥ 0x80 (vpshufb gives 0) outside it. */
          for (int i = 0; i < slices; i++)
            {
              __m256i index = _mm256_adds_epu8 (_mm256_sub_epi8 (count, _mm256_set1_epi8 ((char) (16 * i))), bias);
              for (int p = 0; p < planes; p++)
                {
                  __m256i part = _mm256_shuffle_epi8 (tables[p][i], index);
                  v[p] = i == 0 ? part : _mm256_or_si256 (v[p], part);
                }
            }
          for (int p = 0; p < planes; p++)
            {
              acc[p][0] = _mm256_add_epi16 (acc[p][0], _mm256_cvtepu8_epi16 (_mm256_castsi256_si128 (v[p])));
              acc[p][1] = _mm256_add_epi16 (acc[p][1], _mm256_cvtepu8_epi16 (_mm256_extracti128_si256 (v[p], 1)));
            }
        }

      /* Σ_p plane_p << 8p: exact modulo 2^32, and the true sum is < 2^31. */
      for (int half = 0; half < 2; half++)
        for (int quarter = 0; quarter < 2; quarter++)
          {
            __m256i sum = _mm256_setzero_si256 ();
            for (int p = 0; p < planes; p++)
              {
                __m128i part = quarter ? _mm256_extracti128_si256 (acc[p][half], 1)
                                       : _mm256_castsi256_si128 (acc[p][half]);
                sum = _mm256_add_epi32 (sum, _mm256_slli_epi32 (_mm256_cvtepu16_epi32 (part), 8 * p));
              }
            _mm256_storeu_si256 ((__m256i *) (s->sums + x + 16 * half + 8 * quarter), sum);
          }
    }
}

#define ES_SIMD_WINDOW_SUMS(k, slices, planes) \
  ES_AVX2 static void \
  simd_window_sums_##k (const SimdScratch *s, const ShuffleTables *st, int w) \
  { \
    simd_window_sums_inline (s, st, w, k, slices, planes); \
  }

/* Slices cover counts 0..k²; planes hold T[k²] · 2^17. */
ES_SIMD_WINDOW_SUMS (3, 1, 3)
ES_SIMD_WINDOW_SUMS (5, 2, 3)
ES_SIMD_WINDOW_SUMS (7, 4, 4)
ES_SIMD_WINDOW_SUMS (9, 6, 4)
ES_SIMD_WINDOW_SUMS (11, 8, 4)
ES_SIMD_WINDOW_SUMS (13, 11, 4)
ES_SIMD_WINDOW_SUMS (15, 15, 4)

static void
simd_window_sums (const SimdScratch *s, const ShuffleTables *st, int w, int window)
{
  switch (window)
    {
    case 3: simd_window_sums_3 (s, st, w); break;
    case 5: simd_window_sums_5 (s, st, w); break;
    case 7: simd_window_sums_7 (s, st, w); break;
    case 9: simd_window_sums_9 (s, st, w); break;
    case 11: simd_window_sums_11 (s, st, w); break;
    case 13: simd_window_sums_13 (s, st, w); break;
    default: simd_window_sums_15 (s, st, w); break;
    }
}

/* Rows y0..y1−1; the column counts follow the window down the band, and
 * the ring maps each level row as the window reaches it. The ring always
 * copies (never borrows the input's rows) so that its rows carry the 0xFF
 * padding. */
static void
entropy_simd_band (const EntropyTables *t, const ShuffleTables *st, SimdScratch *s,
                   const EsImage *in, const EsImage *out, int y0, int y1, EsControl *control)
{
  int w = out->width, h = out->height;
  int k = t->window, r = k / 2;
  EsCpuRing *ring = &s->ring;

  /* The loop below first drops row y0 − r − 1 and adds row y0 + r. */
  memset (s->counts, 0, (size_t) st->levels * s->counts_stride);
  es_cpu_ring_start (ring, y0 - r - 1 > 0 ? y0 - r - 1 : 0);
  for (int y = y0 - r - 1; y < y0 + r; y++)
    if (y >= 0 && y < h)
      simd_slide_columns (s, st->levels, w, r, es_cpu_ring_copy (ring, in, y, ES_CPU_MAP_LEVELS, st->levels),
                          s->none);

  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int top = y - r - 1, bottom = y + r;
      int rows = (bottom < h ? bottom : h - 1) - (top + 1 > 0 ? top + 1 : 0) + 1;
      float *dst = es_image_row (out, y);
      const uint8_t *enter = bottom < h ? es_cpu_ring_copy (ring, in, bottom, ES_CPU_MAP_LEVELS, st->levels)
                                        : s->none;

      simd_slide_columns (s, st->levels, w, r, enter, top >= 0 ? es_cpu_ring_row (ring, top) : s->none);
      simd_window_sums (s, st, w, k);

      entropy_finish_row (t, s->sums, w, rows, dst);
      es_control_advance (control, 1);
    }
}

static bool
entropy_simd (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
              EsControl *control, EsError *error)
{
  ShuffleTables st;
  int threads = omp_get_max_threads ();
  int k = job->window;
  size_t padded = ((size_t) out->width + ES_PAD - 1) / ES_PAD * ES_PAD;
  /* Vector loads reach k − 1 + 31 bytes past the last block's start. */
  size_t counts_stride = padded + 2 * ES_PAD;
  size_t counts_size = (size_t) job->levels * counts_stride;
  size_t sums_size = padded * sizeof (uint32_t);
  /* The ring's k + 1 rows and the 0xFF row. */
  size_t rows_size = (size_t) (k + 2) * padded;
  size_t per_thread = counts_size + sums_size + rows_size;
  int rows_per_band = es_cpu_band_rows (out->height);
  int bands = es_cpu_band_count (out->height, rows_per_band);
  uint8_t *memory;

  shuffle_tables_init (&st, k, job->levels);
  memory = es_cpu_scratch_alloc (per_thread, threads, "entropy", error);
  if (memory == NULL)
    return false;

#pragma omp parallel num_threads (threads)
  {
    uint8_t *mine = memory + per_thread * (size_t) omp_get_thread_num ();
    uint8_t *rows = mine + counts_size + sums_size;
    SimdScratch s = {
      .counts = mine,
      .counts_stride = counts_stride,
      .sums = (uint32_t *) (mine + counts_size),
      .ring = { rows, padded, k + 1, 0, { 0 } },
      .none = rows + (size_t) (k + 1) * padded,
    };

    /* es_cpu_map_row writes the first width bytes of a row; the rest stays 0xFF. */
    memset (rows, 0xFF, rows_size);

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < out->height ? y0 + rows_per_band : out->height;
        entropy_simd_band (t, &st, &s, in, out, y0, y1, control);
      }
  }
  free (memory);
  return true;
}
#endif

/* ---- choosing a method ------------------------------------------------------- */

static EsCpuEntropyMethod forced_method;

void
es_cpu_set_entropy_method (EsCpuEntropyMethod method)
{
  forced_method = method < ES_CPU_N_ENTROPY_METHODS ? method : ES_CPU_ENTROPY_AUTO;
}

const char *
es_cpu_entropy_method_name (EsCpuEntropyMethod method)
{
  static const char *const names[] = { "auto", "sliding", "columns", "shuffle" };

  return method < ES_CPU_N_ENTROPY_METHODS ? names[method] : "?";
}

static bool
method_can_run (EsCpuEntropyMethod method, int width, int window, int levels)
{
  switch (method)
    {
    case ES_CPU_ENTROPY_SLIDING:
      return true;
#ifdef ES_HAVE_AVX2_PATH
    case ES_CPU_ENTROPY_COLUMNS:
      return levels <= ES_COLUMNS_MAX_LEVELS && columns_bytes (width, window, levels) <= ES_COLUMNS_MAX_BYTES
             && __builtin_cpu_supports ("avx2");
    case ES_CPU_ENTROPY_SHUFFLE:
      /* 0xFF pads the rows, so it must not be a level. */
      return window <= ES_SIMD_MAX_WINDOW && levels < 0xFF && __builtin_cpu_supports ("avx2");
#endif
    default:
      return false;
    }
}

/* Nanoseconds a pixel on one core, fitted to single-thread timings of
 * every method, windows 3..31 and 2..256 levels, on random 8-bit images
 * and on a photograph, on the Zen 4 this was written on (PERFORMANCE.md).
 * Columns and shuffle cost the same on any image: columns one table load
 * a level and pixel pair, plus vector work that grows with the 16-level
 * vectors; shuffle a few vector instructions per level and 16-count slice
 * of the table (measured per level below). Sliding costs two table
 * updates a window row, more with few levels, and about 1.4 times its
 * cost on noise on a photograph, whose repeated levels chain the updates
 * of one count through memory: the model charges it that, so that near a
 * tie the method whose speed does not depend on the image wins. */
static double
method_cost (EsCpuEntropyMethod method, int window, int levels)
{
  /* Shuffle's ns per level and pixel for windows 3, 5, .., 15. */
  static const double shuffle_per_level[] = { 0.105, 0.142, 0.272, 0.38, 0.48, 0.62, 0.81 };

  switch (method)
    {
    case ES_CPU_ENTROPY_SLIDING:
      return 1.4 * (1.0 + window * (1.2 + 3.0 / levels));
    case ES_CPU_ENTROPY_COLUMNS:
#ifdef ES_HAVE_AVX2_PATH
      /* One load per level rounded up to 4; beyond 64 levels the vector
       * work of all the lanes dominates. */
      return 1.8 + 0.01 * window + 0.14 * (columns_lanes (levels) > 64 ? columns_lanes (levels) : (levels + 3) & ~3);
#else
      return INFINITY;
#endif
    case ES_CPU_ENTROPY_SHUFFLE:
      return window <= 15 ? 0.5 + shuffle_per_level[(window - 3) / 2] * levels : INFINITY;
    default:
      return INFINITY;
    }
}

EsCpuEntropyMethod
es_cpu_entropy_method (int width, int window, int levels)
{
  EsCpuEntropyMethod best = ES_CPU_ENTROPY_SLIDING;

  if (forced_method != ES_CPU_ENTROPY_AUTO && method_can_run (forced_method, width, window, levels))
    return forced_method;
  for (int m = ES_CPU_ENTROPY_SLIDING + 1; m < ES_CPU_N_ENTROPY_METHODS; m++)
    if (method_can_run ((EsCpuEntropyMethod) m, width, window, levels)
        && method_cost ((EsCpuEntropyMethod) m, window, levels) < method_cost (best, window, levels))
      best = (EsCpuEntropyMethod) m;
  return best;
}

bool
es_cpu_entropy (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  EsCpuEntropyMethod method;
  EntropyTables *tables;
  bool ok;

  assert (out->format == ES_FORMAT_F32 && out->width == in->width && out->height == in->height);
  assert (job->window % 2 == 1 && job->window <= ES_WINDOW_MAX && job->levels <= ES_LEVELS_MAX);
  method = es_cpu_entropy_method (in->width, job->window, job->levels);
  tables = malloc (sizeof *tables);
  if (tables == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the entropy tables");
  entropy_tables_init (tables, job->window, method == ES_CPU_ENTROPY_SHUFFLE ? ES_SIMD_BITS : ES_ENTROPY_BITS);
  es_control_begin (control, in->height);

  switch (method)
    {
#ifdef ES_HAVE_AVX2_PATH
    case ES_CPU_ENTROPY_SHUFFLE:
      ok = entropy_simd (job, tables, in, out, control, error);
      break;
    case ES_CPU_ENTROPY_COLUMNS:
      ok = entropy_columns (job, tables, in, out, control, error);
      break;
#endif
    default:
      ok = entropy_sliding (job, tables, in, out, control, error);
      break;
    }

  free (tables);
  return ok && es_cpu_finish (control, error);
}
