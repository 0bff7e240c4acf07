/* SPDX-License-Identifier: MIT */
/* The shuffle method with AVX-512 (VBMI, VNNI): four levels of 16 pixels a vector, T by vpermb, sums by vpdpbusd. */
#include "entropy-avx512.h"

#include <stdlib.h>

#ifdef ES_HAVE_AVX512_PATH

/* The AVX2 loop keeps one level of 32 pixels per vector: its table bytes
 * must be widened before they can be summed over the levels, and counts up
 * to 225 take up to 15 vpshufb slices. Here each 32-bit lane holds the
 * counts of four levels of one pixel, so
 *
 * - one vpermb (64 entries) or vpermi2b (128) per byte plane of T looks up
 *   every count of the window (two and a blend for 13×13 and 15×15);
 * - one vpdpbusd per plane sums the four levels' bytes into the pixel's
 *   32-bit lane: no widening, and the lanes come out in pixel order, ready
 *   for the finish, which runs in the same loop.
 *
 * The column counts of a group of four levels lie in one row, column x at
 * bytes 4x..4x+3, so a window's k columns are k loads 4 bytes apart. The
 * sums are the AVX2 loop's, bit for bit: the same T, planes and finish. */

/* Count columns kept zero left of the image (at least r) and right of it. */
#define PAD_COLUMNS 16

typedef struct {
  uint8_t planes[4][256]; /* byte p of T[c], 0 beyond k² */
  uint32_t patterns[64];  /* the levels 4g..4g+3 of group g as bytes; 0xFE (never a level) beyond L */
  int groups;
} Shuffle512Tables;

static void
shuffle512_tables_init (Shuffle512Tables *st, int window, int levels)
{
  *st = (Shuffle512Tables){ 0 };
  for (int c = 0; c <= window * window; c++)
    {
      uint32_t v = (uint32_t) entropy_scaled (c, ES_SIMD_BITS);
      for (int p = 0; p < 4; p++)
        st->planes[p][c] = (uint8_t) (v >> (8 * p));
    }
  st->groups = (levels + 3) / 4;
  for (int g = 0; g < st->groups; g++)
    for (int i = 0; i < 4; i++)
      st->patterns[g] |= (uint32_t) (4 * g + i < levels ? 4 * g + i : 0xFE) << (8 * i);
}

typedef struct {
  uint8_t *counts; /* groups rows of per-column counts, PAD_COLUMNS zero columns each side */
  size_t counts_stride;
  uint32_t *sums;      /* one row of scaled Σ T[count] */
  EsCpuRing ring;      /* k + 1 level rows: the window and the row leaving it */
  const uint8_t *none; /* a row of 0xFF, which counts nothing */
} Scratch512;

/* Adds row `enter` to the counts of columns x0..x1−1 (multiples of 16) and
 * subtracts row `leave`. Each pixel's level is spread over its lane's four
 * bytes and compared with the group's four levels. */
ES_AVX512 static void
slide_columns (const Scratch512 *s, const Shuffle512Tables *st, int x0, int x1, const uint8_t *enter,
               const uint8_t *leave)
{
  const __m512i spread = _mm512_set_epi32 (0x0F0F0F0F, 0x0E0E0E0E, 0x0D0D0D0D, 0x0C0C0C0C, 0x0B0B0B0B, 0x0A0A0A0A,
                                           0x09090909, 0x08080808, 0x07070707, 0x06060606, 0x05050505, 0x04040404,
                                           0x03030303, 0x02020202, 0x01010101, 0x00000000);
  const __m512i one = _mm512_set1_epi8 (1);

  for (int x = x0; x < x1; x += 16)
    {
      __m512i in = _mm512_castsi128_si512 (_mm_loadu_si128 ((const __m128i *) (enter + x)));
      __m512i out = _mm512_castsi128_si512 (_mm_loadu_si128 ((const __m128i *) (leave + x)));
      uint8_t *col = s->counts + 4 * (size_t) (PAD_COLUMNS + x);

      in = _mm512_permutexvar_epi8 (spread, in);
      out = _mm512_permutexvar_epi8 (spread, out);

      for (int g = 0; g < st->groups; g++, col += s->counts_stride)
        {
          __m512i levels = _mm512_set1_epi32 ((int) st->patterns[g]);
          __m512i c = _mm512_load_si512 ((const void *) col);

          c = _mm512_mask_add_epi8 (c, _mm512_cmpeq_epi8_mask (in, levels), c, one);
          c = _mm512_mask_sub_epi8 (c, _mm512_cmpeq_epi8_mask (out, levels), c, one);
          _mm512_store_si512 ((void *) col, c);
        }
    }
}

/* The window sums of columns x0..x1−1 (multiples of 16) and their
 * entropies with the row's interior n; the columns within r of an edge are
 * redone afterwards. Inlined with constant window, table entries (64, 128
 * or 256) and planes, so that the tables stay in registers. */
static inline __attribute__ ((always_inline)) ES_AVX512 void
window_sums_inline (const Scratch512 *s, const Shuffle512Tables *st, int x0, int x1, int w, const RowFinish *f,
                    float *dst, const int window, const int entries, const int planes)
{
  __m512i table[4][4];
  const __m512i ones = _mm512_set1_epi8 (1);
  const __m512d ln_n = _mm512_set1_pd (f->ln_n), inv_n = _mm512_set1_pd (f->inv_n);

  for (int p = 0; p < planes; p++)
    for (int q = 0; q < entries / 64; q++)
      table[p][q] = _mm512_loadu_si512 ((const void *) (st->planes[p] + 64 * q));

  for (int x = x0; x < x1; x += 16)
    {
      const uint8_t *col = s->counts + 4 * (size_t) (PAD_COLUMNS + x - window / 2);
      __m512i acc[4], sum;

      for (int p = 0; p < planes; p++)
        acc[p] = _mm512_setzero_si512 ();
      for (int g = 0; g < st->groups; g++, col += s->counts_stride)
        {
          __m512i count = _mm512_loadu_si512 ((const void *) col);
          __mmask64 high = 0;

          for (int j = 1; j < window; j++)
            count = _mm512_add_epi8 (count, _mm512_loadu_si512 ((const void *) (col + 4 * j)));
          if (entries == 256)
            high = _mm512_movepi8_mask (count);
          for (int p = 0; p < planes; p++)
            {
              __m512i v;

              if (entries == 64)
                v = _mm512_permutexvar_epi8 (count, table[p][0]);
              else
                v = _mm512_permutex2var_epi8 (table[p][0], count, table[p][1]);
              if (entries == 256)
                v = _mm512_mask_blend_epi8 (high, v, _mm512_permutex2var_epi8 (table[p][2], count, table[p][3]));
              acc[p] = _mm512_dpbusd_epi32 (acc[p], v, ones);
            }
        }

      /* Σ_p plane_p << 8p: exact modulo 2^32, and the true sum is < 2^31. */
      sum = acc[0];
      for (int p = 1; p < planes; p++)
        sum = _mm512_add_epi32 (sum, _mm512_slli_epi32 (acc[p], 8 * p));
      _mm512_storeu_si512 ((void *) (s->sums + x), sum);

      es_finish16_avx512 (sum, ln_n, inv_n, dst, x, w);
    }
}

typedef void (*WindowSums512) (const Scratch512 *, const Shuffle512Tables *, int, int, int, const RowFinish *, float *);

#define ES_WINDOW_SUMS_512(k, entries, planes)                                                                         \
  ES_AVX512 static void window_sums_##k (const Scratch512 *s, const Shuffle512Tables *st, int x0, int x1, int w,       \
                                         const RowFinish *f, float *dst)                                               \
  {                                                                                                                    \
    window_sums_inline (s, st, x0, x1, w, f, dst, k, entries, planes);                                                 \
  }

/* Entries cover counts 0..k²; planes hold T[k²] · 2^17 (as in AVX2). */
ES_WINDOW_SUMS_512 (3, 64, 3)
ES_WINDOW_SUMS_512 (5, 64, 3)
ES_WINDOW_SUMS_512 (7, 64, 4)
ES_WINDOW_SUMS_512 (9, 128, 4)
ES_WINDOW_SUMS_512 (11, 128, 4)
ES_WINDOW_SUMS_512 (13, 256, 4)
ES_WINDOW_SUMS_512 (15, 256, 4)

static WindowSums512
window_sums_for (int window)
{
  static const WindowSums512 sums[] = { window_sums_3,  window_sums_5,  window_sums_7, window_sums_9,
                                        window_sums_11, window_sums_13, window_sums_15 };

  return sums[(window - 3) / 2];
}

/* One row, a chunk of columns at a time: the chunk's column counts (and
 * the 16 beyond it, which its last windows reach) slide first, so that
 * their stores have left the store queue when the window sums load them
 * unaligned; both passes stay in L1. */
static void
row_512 (const EntropyTables *t, const Shuffle512Tables *st, const Scratch512 *s, WindowSums512 sums, int w,
         const uint8_t *enter, const uint8_t *leave, int rows, float *dst)
{
  int padded = (w + 15) & ~15;
  /* About 8 KiB of counts a chunk. */
  int chunk = (2048 / st->groups) & ~15;
  RowFinish f = row_finish (t, rows);

  if (chunk < 16)
    chunk = 16;
  slide_columns (s, st, 0, 16 < padded ? 16 : padded, enter, leave);
  for (int x0 = 0; x0 < padded; x0 += chunk)
    {
      int x1 = x0 + chunk < padded ? x0 + chunk : padded;

      if (x0 + 16 < padded)
        slide_columns (s, st, x0 + 16, x1 + 16 < padded ? x1 + 16 : padded, enter, leave);
      sums (s, st, x0, x1, w, &f, dst);
    }
  es_cpu_entropy_finish_edges (t, s->sums, w, rows, dst);
}

/* Rows y0..y1−1, as the AVX2 loop walks them. */
static void
band_512 (const EntropyTables *t, const Shuffle512Tables *st, Scratch512 *s, const EsImage *in, const EsImage *out,
          int levels, int y0, int y1, EsControl *control)
{
  int w = out->width, h = out->height;
  int k = t->window, r = k / 2;
  int padded = (w + 15) & ~15;
  WindowSums512 sums = window_sums_for (k);
  EsCpuRing *ring = &s->ring;

  memset (s->counts, 0, (size_t) st->groups * s->counts_stride);
  es_cpu_ring_start (ring, y0 - r - 1 > 0 ? y0 - r - 1 : 0);
  for (int y = y0 - r - 1; y < y0 + r; y++)
    if (y >= 0 && y < h)
      slide_columns (s, st, 0, padded, es_cpu_ring_copy (ring, in, y, ES_CPU_MAP_LEVELS, levels), s->none);

  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int top = y - r - 1, bottom = y + r;
      int rows = (bottom < h ? bottom : h - 1) - (top + 1 > 0 ? top + 1 : 0) + 1;
      const uint8_t *enter = bottom < h ? es_cpu_ring_copy (ring, in, bottom, ES_CPU_MAP_LEVELS, levels) : s->none;

      row_512 (t, st, s, sums, w, enter, top >= 0 ? es_cpu_ring_row (ring, top) : s->none, rows, es_image_row (out, y));
      es_control_advance (control, 1);
    }
}

typedef struct {
  const EntropyTables *t;
  const Shuffle512Tables *st;
  const EsImage *in, *out;
  int levels;
  size_t padded; /* a row, run on with 0xFF to a multiple of 64 bytes */
  size_t counts_stride;
  size_t counts_size, sums_size;
} Shuffle512;

static void
shuffle512_start_thread (const void *context, uint8_t *scratch)
{
  const Shuffle512 *c = context;

  /* es_cpu_map_row writes the first width bytes of a row; the rest stays
   * 0xFF, and so does the row after the ring. */
  memset (scratch + c->counts_size + c->sums_size, 0xFF, (size_t) (c->t->window + 2) * c->padded);
}

static void
shuffle512_band (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control)
{
  const Shuffle512 *c = context;
  int k = c->t->window;
  uint8_t *rows = scratch + c->counts_size + c->sums_size;
  Scratch512 s = {
    .counts = scratch,
    .counts_stride = c->counts_stride,
    .sums = (uint32_t *) (scratch + c->counts_size),
    .ring = { rows, c->padded, k + 1, 0, { 0 } },
    .none = rows + (size_t) (k + 1) * c->padded,
  };

  band_512 (c->t, c->st, &s, c->in, c->out, c->levels, y0, y1, control);
}

bool
es_cpu_entropy_shuffle512 (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                           EsControl *control, EsError *error)
{
  Shuffle512Tables st;
  int k = job->window;
  size_t padded = ((size_t) out->width + 63) / 64 * 64;
  Shuffle512 shuffle = {
    .t = t,
    .st = &st,
    .in = in,
    .out = out,
    .levels = job->levels,
    .padded = padded,
    .counts_stride = 4 * (padded + 2 * PAD_COLUMNS),
    .sums_size = padded * sizeof (uint32_t),
  };
  /* The ring's k + 1 rows and the 0xFF row. */
  size_t rows_size = (size_t) (k + 2) * padded;
  /* The counts are stored aligned: es_cpu_run_bands starts each thread's
   * scratch on 64 bytes. */
  EsCpuBands work = {
    .what = "entropy",
    .context = &shuffle,
    .start_thread = shuffle512_start_thread,
    .band = shuffle512_band,
  };

  assert (k <= ES_SIMD_MAX_WINDOW && job->levels < 0xFF);
  shuffle512_tables_init (&st, k, job->levels);
  shuffle.counts_size = (size_t) st.groups * shuffle.counts_stride;
  work.scratch_bytes = shuffle.counts_size + shuffle.sums_size + rows_size;
  return es_cpu_run_bands (&work, out->height, control, error);
}
#endif
