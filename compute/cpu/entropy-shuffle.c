/* SPDX-License-Identifier: MIT */
/* Local entropy on the CPU by AVX2 byte shuffles: every level counted 32 pixels a vector, for small windows and few levels. */
#include "entropy-internal.h"

#include <stdlib.h>

#ifdef ES_HAVE_AVX2_PATH
#include <immintrin.h>

/* ---- shuffle ----------------------------------------------------------------- */

#define ES_SIMD_MAX_SLICES ((ES_SIMD_MAX_WINDOW * ES_SIMD_MAX_WINDOW + 16) / 16)

typedef struct {
  int levels;
  uint8_t table[4][ES_SIMD_MAX_SLICES][16]; /* [plane][slice][count % 16] */
} ShuffleTables;

static void
shuffle_tables_init (ShuffleTables *st, int window, int levels)
{
  int max_count = window * window;

  *st = (ShuffleTables){ 0 };
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
  uint8_t *counts; /* levels rows of per-column counts, r zero columns each side */
  size_t counts_stride;
  uint32_t *sums;      /* one row of scaled Σ T[count] */
  EsCpuRing ring;      /* k + 1 level rows: the window and the row leaving it */
  const uint8_t *none; /* a row of 0xFF, which counts nothing */
} SimdScratch;

/* Adds row `enter` to the column counts and subtracts row `leave` (either
 * may be s->none). Rows run on to a multiple of ES_PAD bytes with 0xFF,
 * which no level of a SIMD job matches, so the loop reads whole blocks. */
ES_AVX2 static void
simd_slide_columns (const SimdScratch *s, int levels, int w, int r, const uint8_t *enter, const uint8_t *leave)
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
simd_window_sums_inline (const SimdScratch *s, const ShuffleTables *st, int w, const int window, const int slices,
                         const int planes)
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

#define ES_SIMD_WINDOW_SUMS(k, slices, planes)                                                                         \
  ES_AVX2 static void simd_window_sums_##k (const SimdScratch *s, const ShuffleTables *st, int w)                      \
  {                                                                                                                    \
    simd_window_sums_inline (s, st, w, k, slices, planes);                                                             \
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
entropy_simd_band (const EntropyTables *t, const ShuffleTables *st, SimdScratch *s, const EsImage *in,
                   const EsImage *out, int y0, int y1, EsControl *control)
{
  int w = out->width, h = out->height;
  int k = t->window, r = k / 2;
  EsCpuRing *ring = &s->ring;

  /* The loop below first drops row y0 − r − 1 and adds row y0 + r. */
  memset (s->counts, 0, (size_t) st->levels * s->counts_stride);
  es_cpu_ring_start (ring, y0 - r - 1 > 0 ? y0 - r - 1 : 0);
  for (int y = y0 - r - 1; y < y0 + r; y++)
    if (y >= 0 && y < h)
      simd_slide_columns (s, st->levels, w, r, es_cpu_ring_copy (ring, in, y, ES_CPU_MAP_LEVELS, st->levels), s->none);

  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int top = y - r - 1, bottom = y + r;
      int rows = (bottom < h ? bottom : h - 1) - (top + 1 > 0 ? top + 1 : 0) + 1;
      float *dst = es_image_row (out, y);
      const uint8_t *enter = bottom < h ? es_cpu_ring_copy (ring, in, bottom, ES_CPU_MAP_LEVELS, st->levels) : s->none;

      simd_slide_columns (s, st->levels, w, r, enter, top >= 0 ? es_cpu_ring_row (ring, top) : s->none);
      simd_window_sums (s, st, w, k);

      es_cpu_entropy_finish_row (t, s->sums, w, rows, dst);
      es_control_advance (control, 1);
    }
}

typedef struct {
  const EntropyTables *t;
  const ShuffleTables *st;
  const EsImage *in, *out;
  size_t padded; /* a row, run on with 0xFF to a multiple of ES_PAD */
  size_t counts_stride;
  size_t counts_size, sums_size;
} Shuffle;

static void
shuffle_start_thread (const void *context, uint8_t *scratch)
{
  const Shuffle *c = context;

  /* es_cpu_map_row writes the first width bytes of a row; the rest stays
   * 0xFF, and so does the row after the ring. */
  memset (scratch + c->counts_size + c->sums_size, 0xFF, (size_t) (c->t->window + 2) * c->padded);
}

static void
shuffle_band (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control)
{
  const Shuffle *c = context;
  int k = c->t->window;
  uint8_t *rows = scratch + c->counts_size + c->sums_size;
  SimdScratch s = {
    .counts = scratch,
    .counts_stride = c->counts_stride,
    .sums = (uint32_t *) (scratch + c->counts_size),
    .ring = { rows, c->padded, k + 1, 0, { 0 } },
    .none = rows + (size_t) (k + 1) * c->padded,
  };

  entropy_simd_band (c->t, c->st, &s, c->in, c->out, y0, y1, control);
}

bool
es_cpu_entropy_shuffle (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                        EsControl *control, EsError *error)
{
  ShuffleTables st;
  int k = job->window;
  size_t padded = ((size_t) out->width + ES_PAD - 1) / ES_PAD * ES_PAD;
  /* Vector loads reach k − 1 + 31 bytes past the last block's start. */
  size_t counts_stride = padded + 2 * ES_PAD;
  Shuffle shuffle = {
    .t = t,
    .st = &st,
    .in = in,
    .out = out,
    .padded = padded,
    .counts_stride = counts_stride,
    .counts_size = (size_t) job->levels * counts_stride,
    .sums_size = padded * sizeof (uint32_t),
  };
  /* The ring's k + 1 rows and the 0xFF row. */
  size_t rows_size = (size_t) (k + 2) * padded;
  EsCpuBands work = {
    .what = "entropy",
    .scratch_bytes = shuffle.counts_size + shuffle.sums_size + rows_size,
    .context = &shuffle,
    .start_thread = shuffle_start_thread,
    .band = shuffle_band,
  };

#ifdef ES_HAVE_AVX512_PATH
  if (es_cpu_entropy_avx512 ())
    return es_cpu_entropy_shuffle512 (job, t, in, out, control, error);
#endif
  shuffle_tables_init (&st, k, job->levels);
  return es_cpu_run_bands (&work, out->height, control, error);
}
#endif
