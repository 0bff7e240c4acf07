/* Local entropy on the CPU: a sliding histogram for any window, an AVX2 path for small windows and few levels. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#ifdef ES_HAVE_AVX2_PATH
#include <immintrin.h>
#endif

#define ES_MAX_COUNT (ES_WINDOW_MAX * ES_WINDOW_MAX)

/* Rows copied for the vector loops run on to a multiple of this many bytes. */
#define ES_PAD 32

/* Window sums of c·ln c are kept as integers: T[c] = round(c ln c · 2^bits).
 * Updating such a sum as the window moves is exact, so nothing drifts along
 * a row. A sum has at most n/2 terms with c ≥ 2 (T[0] = T[1] = 0), so the
 * rounding moves (1/n)·Σ by at most 2^-bits / 4. */
typedef struct {
  int window;
  /* delta[c] = T[c+1] − T[c]. */
  int64_t delta[ES_MAX_COUNT];
  /* For a window of n pixels: ln n, and 2^-bits / n, which turns a scaled
   * sum into (1/n) Σ c ln c without a division per pixel. */
  double ln_n[ES_MAX_COUNT + 1];
  double inv_n[ES_MAX_COUNT + 1];
} EntropyTables;

/* The generic path: 2^40 leaves 2^-42 of error; the largest sum,
 * 961·ln 961 · 2^40 ≈ 7.3e15, fits in 63 bits. */
#define ES_ENTROPY_BITS 40
/* The SIMD path below: four bytes hold T[225] · 2^17 ≈ 1.6e8. */
#define ES_SIMD_BITS 17

static int64_t
entropy_scaled (int c, int bits)
{
  return c > 1 ? llround (ldexp (c * log (c), bits)) : 0;
}

static void
entropy_tables_init (EntropyTables *t, int window, int bits)
{
  t->window = window;
  for (int c = 1; c <= window * window; c++)
    {
      t->delta[c - 1] = entropy_scaled (c, bits) - entropy_scaled (c - 1, bits);
      t->ln_n[c] = log (c);
      t->inv_n[c] = ldexp (1.0 / c, -bits);
    }
}

static inline float
entropy_value (const EntropyTables *t, int64_t sum, int n)
{
  double h = t->ln_n[n] - (double) sum * t->inv_n[n];
  /* A uniform window gives ±1e-13 around zero; print it as 0, not −0. */
  return h > 0.0 ? (float) h : 0.0f;
}

/* One output row by the generic method, from the `rows` level rows of its
 * clipped window: the window histogram slides right one column at a time,
 * and each count change from c to c±1 moves the sum by a table difference,
 * so a pixel costs O(k) whatever the number of levels. */
static void
entropy_row (const EntropyTables *t, const uint8_t *const *row, int rows, int w, float *out)
{
  int r = t->window / 2;
  int32_t hist[256] = { 0 };
  int64_t sum = 0;

  /* The window of x = 0 holds columns 0..r (clipped). */
  for (int c = 0; c <= r && c < w; c++)
    for (int i = 0; i < rows; i++)
      sum += t->delta[hist[row[i][c]]++];

  for (int x = 0; x < w; x++)
    {
      int left = x - r < 0 ? 0 : x - r;
      int right = x + r >= w ? w - 1 : x + r;
      out[x] = entropy_value (t, sum, rows * (right - left + 1));
      if (x + 1 >= w)
        break;

      /* Column x − r leaves the window of x + 1 (from x = r on) and column
       * x + r + 1 enters it (while it exists). */
      if (x - r >= 0 && x + r + 1 < w)
        for (int i = 0; i < rows; i++)
          {
            const uint8_t *p = row[i];
            sum -= t->delta[--hist[p[x - r]]];
            sum += t->delta[hist[p[x + r + 1]]++];
          }
      else if (x - r >= 0)
        for (int i = 0; i < rows; i++)
          sum -= t->delta[--hist[row[i][x - r]]];
      else if (x + r + 1 < w)
        for (int i = 0; i < rows; i++)
          sum += t->delta[hist[row[i][x + r + 1]]++];
    }
}

/* Each band maps its rows and its halo into a ring of k rows. */
static bool
entropy_generic (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                 EsControl *control, EsError *error)
{
  int w = in->width, h = in->height, k = t->window, r = k / 2;
  int threads = omp_get_max_threads ();
  int rows_per_band = es_cpu_band_rows (h);
  int bands = es_cpu_band_count (h, rows_per_band);
  size_t per_thread = es_cpu_map_is_identity (in, ES_CPU_MAP_LEVELS) ? 0 : (size_t) k * (size_t) w;
  uint8_t *memory = es_cpu_scratch_alloc (per_thread > 0 ? per_thread : 1, threads, "entropy", error);

  if (memory == NULL)
    return false;

#pragma omp parallel num_threads (threads)
  {
    EsCpuRing ring = { memory + per_thread * (size_t) omp_get_thread_num (), (size_t) w, k, 0, { 0 } };

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < h ? y0 + rows_per_band : h;

        es_cpu_ring_start (&ring, y0 - r > 0 ? y0 - r : 0);
        for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
          {
            int top = y - r > 0 ? y - r : 0;
            int bottom = y + r < h ? y + r : h - 1;
            const uint8_t *window[ES_WINDOW_MAX];

            es_cpu_ring_fill (&ring, in, ES_CPU_MAP_LEVELS, job->levels, bottom);
            for (int i = top; i <= bottom; i++)
              window[i - top] = es_cpu_ring_row (&ring, i);
            entropy_row (t, window, bottom - top + 1, w, es_image_row (out, y));
            es_control_advance (control, 1);
          }
      }
  }
  free (memory);
  return true;
}

#ifdef ES_HAVE_AVX2_PATH
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

/* Rough cost per pixel of each path: vector instructions of the loops
 * below, and for the generic path a fit to timings on a Zen 4 (up to 60
 * levels for 15×15 windows, 80 for 3×3, the SIMD path is faster). */
static bool
entropy_simd_pays (int window, int levels)
{
  int slices = window * window / 16 + 1;
  double simd = levels * (8.0 * slices + 16.0 + 3.0 * window) / 32.0;
  double generic = 20.0 * window + 20.0;

  /* 0xFF pads the plane's rows, so it must not be a level. */
  return window <= ES_SIMD_MAX_WINDOW && levels < 0xFF && simd < generic && __builtin_cpu_supports ("avx2");
}

/* Per-thread scratch of the SIMD path. */
typedef struct {
  uint8_t *counts;       /* levels rows of per-column counts, r zero columns each side */
  size_t counts_stride;
  int32_t *sums;         /* one row of scaled Σ T[count] */
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

/* Turns one row of scaled sums into entropies. Columns within r of an edge
 * have a clipped window; the others share one n, and that loop vectorizes. */
ES_HOT static void
entropy_finish_row (const EntropyTables *t, const int32_t *sums, int w, int rows, float *dst)
{
  int r = t->window / 2;
  int inner0 = r < w ? r : w;
  int inner1 = w - r > inner0 ? w - r : inner0;
  double ln_n = t->ln_n[rows * t->window], inv_n = t->inv_n[rows * t->window];

  for (int x = inner0; x < inner1; x++)
    {
      double v = ln_n - sums[x] * inv_n;
      dst[x] = v > 0.0 ? (float) v : 0.0f;
    }
  for (int x = 0; x < w; x = x + 1 == inner0 ? inner1 : x + 1)
    {
      int left = x - r < 0 ? 0 : x - r;
      int right = x + r >= w ? w - 1 : x + r;
      dst[x] = entropy_value (t, sums[x], rows * (right - left + 1));
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
  size_t sums_size = padded * sizeof (int32_t);
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
      .sums = (int32_t *) (mine + counts_size),
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

bool
es_cpu_entropy (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  EntropyTables *tables;
  bool simd = false;
  bool ok;

  assert (out->format == ES_FORMAT_F32 && out->width == in->width && out->height == in->height);
  assert (job->window % 2 == 1 && job->window <= ES_WINDOW_MAX && job->levels <= ES_LEVELS_MAX);
#ifdef ES_HAVE_AVX2_PATH
  simd = entropy_simd_pays (job->window, job->levels);
#endif
  tables = malloc (sizeof *tables);
  if (tables == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the entropy tables");
  entropy_tables_init (tables, job->window, simd ? ES_SIMD_BITS : ES_ENTROPY_BITS);
  es_control_begin (control, in->height);

#ifdef ES_HAVE_AVX2_PATH
  if (simd)
    ok = entropy_simd (job, tables, in, out, control, error);
  else
#endif
    ok = entropy_generic (job, tables, in, out, control, error);

  free (tables);
  return ok && es_cpu_finish (control, error);
}
