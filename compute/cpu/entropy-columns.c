/* SPDX-License-Identifier: MIT */
/* Local entropy on the CPU by column histograms (Perreault & Hébert): O(L) a pixel, whatever the window. */
#include "entropy-internal.h"

#include <stdlib.h>

#ifdef ES_HAVE_AVX2_PATH
#include <immintrin.h>

/* ---- columns ----------------------------------------------------------------- */

/* The counts kept per column: L rounded up to a power of two from 16 (the
 * window histogram then takes 1, 2, 4, 8 or 16 AVX2 registers). */
int
es_cpu_columns_lanes (int levels)
{
  return levels <= 16 ? 16 : levels <= 32 ? 32 : levels <= 64 ? 64 : levels <= 128 ? 128 : 256;
}

/* Per thread, for columns −r−1 .. w+r. */
size_t
es_cpu_columns_bytes (int width, int window, int levels)
{
  return ((size_t) width + (size_t) window + 1) * (size_t) es_cpu_columns_lanes (levels) * sizeof (uint16_t);
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
  int span; /* 2k + 1 */
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
      pt->pairs[(size_t) c * pt->span + d + k] = c + d >= 0 && c + d <= max
                                                   ? t->value[c] | (uint64_t) t->value[c + d] << 32
                                                   : 0;
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
  uint16_t *index; /* the pair-table index of each level, per pair of pixels of a chunk */
  EsCpuRing ring;  /* k + 1 level rows: the window and the row leaving it */
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
#define ES_SCALAR(v) __asm__("" : "+r"(v))

/* The entropies of the n pixels of a chunk, two at a time, from the
 * pair-table indices of `groups` · 4 levels each (levels from L up to a
 * multiple of 4 have c = d = 0, whose entry is 0). The indices were
 * written a pass earlier, so these loads never wait for a store to
 * forward; the arithmetic of the finish comes almost free beside them.
 * Inlined with constant groups, unrolled. */
static inline __attribute__ ((always_inline)) void
columns_lookup_inline (const uint64_t *pairs, const uint16_t *index, int lp, int n, const RowFinish *f, uint32_t *sums,
                       float *dst, const int groups)
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

typedef void (*ColumnsLookup) (const uint64_t *, const uint16_t *, int, int, const RowFinish *, uint32_t *, float *);

#define ES_COLUMNS_LOOKUP(groups)                                                                                      \
  static void columns_lookup_##groups (const uint64_t *pairs, const uint16_t *index, int lp, int n,                    \
                                       const RowFinish *f, uint32_t *sums, float *dst)                                 \
  {                                                                                                                    \
    columns_lookup_inline (pairs, index, lp, n, f, sums, dst, groups);                                                 \
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
columns_lookup_many (const uint64_t *pairs, const uint16_t *index, int lp, int n, const RowFinish *f, uint32_t *sums,
                     float *dst)
{
  columns_lookup_inline (pairs, index, lp, n, f, sums, dst, lp / 4);
}

/* By the number of 4-level groups that hold the levels, up to 64 levels. */
static const ColumnsLookup columns_lookups[16] = {
  columns_lookup_1,  columns_lookup_2,  columns_lookup_3,  columns_lookup_4,  columns_lookup_5,  columns_lookup_6,
  columns_lookup_7,  columns_lookup_8,  columns_lookup_9,  columns_lookup_10, columns_lookup_11, columns_lookup_12,
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
  es_cpu_entropy_finish_edges (t, s->sums, w, rows, out);
}

#define ES_COLUMNS_ROW(chunks)                                                                                         \
  ES_AVX2 static void columns_row_##chunks (const EntropyTables *t, const PairTable *pt, const ColumnScratch *s,       \
                                            int w, int levels, const uint8_t *enter, const uint8_t *leave, int rows,   \
                                            float *out)                                                                \
  {                                                                                                                    \
    columns_row_inline (t, pt, s, w, levels, enter, leave, rows, out, chunks);                                         \
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
               const uint8_t *, int, float *)
    = lp == 16    ? columns_row_1
      : lp == 32  ? columns_row_2
      : lp == 64  ? columns_row_4
      : lp == 128 ? columns_row_8
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

typedef struct {
  const EntropyTables *t;
  const PairTable *pt;
  const EsImage *in, *out;
  int levels, lp;
  size_t cols_size, sums_size, index_size;
} Columns;

static void
columns_band (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control)
{
  const Columns *c = context;
  int k = c->t->window, r = k / 2;
  ColumnScratch s = {
    .cols = (uint16_t *) scratch + (size_t) (r + 1) * c->lp,
    .lp = c->lp,
    .sums = (uint32_t *) (scratch + c->cols_size),
    .index = (uint16_t *) (scratch + c->cols_size + c->sums_size),
    .ring = { scratch + c->cols_size + c->sums_size + c->index_size, (size_t) c->out->width, k + 1, 0, { 0 } },
  };

  entropy_columns_band (c->t, c->pt, &s, c->in, c->out, c->levels, y0, y1, control);
}

bool
es_cpu_entropy_columns (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                        EsControl *control, EsError *error)
{
  int w = out->width, k = job->window;
  PairTable pt;
  /* The counts are loaded aligned: es_cpu_run_bands starts each thread's
   * scratch on 64 bytes. */
  Columns columns = {
    .t = t,
    .pt = &pt,
    .in = in,
    .out = out,
    .levels = job->levels,
    .lp = es_cpu_columns_lanes (job->levels),
    .cols_size = es_cpu_columns_bytes (w, k, job->levels),
    .sums_size = ((size_t) w * sizeof (uint32_t) + 63) / 64 * 64,
    .index_size = ES_COLUMNS_CHUNK_BYTES / 2,
  };
  size_t ring_size = es_cpu_map_is_identity (in, ES_CPU_MAP_LEVELS) ? 0 : (size_t) (k + 1) * (size_t) w;
  EsCpuBands work = {
    .what = "entropy",
    .scratch_bytes = columns.cols_size + columns.sums_size + columns.index_size + ring_size,
    .context = &columns,
    .band = columns_band,
  };
  bool ok;

  assert (job->levels <= ES_COLUMNS_MAX_LEVELS);
  if (!pair_table_init (&pt, t, error))
    return false;
  ok = es_cpu_run_bands (&work, out->height, control, error);
  free (pt.pairs);
  return ok;
}
#endif
