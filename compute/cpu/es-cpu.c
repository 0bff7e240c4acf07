/* The CPU backend: OpenMP over bands of rows; the per-sample rules come from es-ops.h. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../es-definitions.h"

/* Hot row loops get an AVX2 clone picked at load time, so that a generic
 * x86-64 build still vectorizes them (rintf becomes vroundps) on CPUs that
 * have it. The small-window entropy path is written for AVX2 directly. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define ES_HOT __attribute__ ((target_clones ("avx2", "default")))
#define ES_HAVE_AVX2_PATH 1
#define ES_AVX2 __attribute__ ((target ("avx2")))
#include <immintrin.h>
#else
#define ES_HOT
#endif

#define ES_MAX_COUNT (ES_WINDOW_MAX * ES_WINDOW_MAX)

/* Rows copied for the vector loops run on to a multiple of this many bytes. */
#define ES_PAD 32

typedef enum {
  MAP_LEVELS,  /* quantization levels (entropy, quantize) */
  MAP_VIEW,    /* the 8-bit view (equalize, sharpen) */
} MapKind;

/* Levels images already hold levels, which also serve as their 8-bit view. */
ES_HOT static void
map_row (const EsImage *in, int y, MapKind kind, int levels, uint8_t *dst)
{
  int w = in->width;
  int depth = in->depth;

  if (in->format == ES_FORMAT_U8)
    {
      const uint8_t *src = es_image_row (in, y);
      if (in->levels)
        memcpy (dst, src, (size_t) w);
      else if (kind == MAP_LEVELS)
        /* es_quantize_sample in 16-bit lanes, which v · L ≤ 255 · 256 fits:
         * three times faster than 32-bit ones. */
        for (int x = 0; x < w; x++)
          dst[x] = (uint8_t) ((uint16_t) (src[x] * (uint16_t) levels) >> depth);
      else
        for (int x = 0; x < w; x++)
          dst[x] = es_sample_to_u8 (src[x], depth);
    }
  else
    {
      const uint16_t *src = es_image_row (in, y);
      if (in->levels)
        for (int x = 0; x < w; x++)
          dst[x] = (uint8_t) src[x];
      else if (kind == MAP_LEVELS)
        for (int x = 0; x < w; x++)
          dst[x] = (uint8_t) es_quantize_sample (src[x], levels, depth);
      else
        for (int x = 0; x < w; x++)
          dst[x] = es_sample_to_u8 (src[x], depth);
    }
}

/* Whether the input's rows already are what map_row would make of them
 * (8-bit samples for the view, a u8 levels image for levels). */
static bool
map_is_identity (const EsImage *in, MapKind kind)
{
  return in->format == ES_FORMAT_U8 && (in->levels || (kind == MAP_VIEW && in->depth == 8));
}

/* Row y mapped to u8: the input's own row when it already is one, else
 * `buffer` filled by map_row. */
static const uint8_t *
source_row (const EsImage *in, int y, MapKind kind, int levels, uint8_t *buffer)
{
  if (map_is_identity (in, kind))
    return es_image_row (in, y);
  map_row (in, y, kind, levels, buffer);
  return buffer;
}

/* A window of consecutive mapped rows kept in `size` slots of one thread's
 * buffer: row j lives in slot j mod size, so a band walks down the image
 * holding only the rows its window reaches. */
typedef struct {
  uint8_t *buffer;
  size_t stride;
  int size;
  int next;                             /* the next row to map */
  const uint8_t *rows[ES_WINDOW_MAX + 1];
} Ring;

/* Starts a band at row `first`; nothing mapped for an earlier band is
 * reused, so bands are independent whatever thread ran the one before. */
static void
ring_start (Ring *ring, int first)
{
  ring->next = first;
  memset (ring->rows, 0, sizeof ring->rows);
}

/* Maps the rows up to `last` that are not mapped yet. */
static void
ring_fill (Ring *ring, const EsImage *in, MapKind kind, int levels, int last)
{
  for (; ring->next <= last; ring->next++)
    {
      int slot = ring->next % ring->size;
      ring->rows[slot] = source_row (in, ring->next, kind, levels, ring->buffer + (size_t) slot * ring->stride);
    }
}

/* Maps row y into its slot, copying even where the input's row would do. */
static const uint8_t *
ring_copy (Ring *ring, const EsImage *in, int y, MapKind kind, int levels)
{
  uint8_t *slot = ring->buffer + (size_t) (y % ring->size) * ring->stride;

  map_row (in, y, kind, levels, slot);
  ring->rows[y % ring->size] = slot;
  ring->next = y + 1;
  return slot;
}

static inline const uint8_t *
ring_row (const Ring *ring, int y)
{
  return ring->rows[y % ring->size];
}

/* 0: the backend chooses; tests set it through es-cpu-internal.h. */
static int band_rows_override;

void
es_cpu_set_band_rows (int rows)
{
  band_rows_override = rows > 0 ? rows : 0;
}

/* Bands go to threads as they come free, so that a core shared with
 * another program holds nothing up: about eight bands a thread, each at
 * least 16 rows so that its halo (mapped again, and for entropy the column
 * counts started afresh) costs little. */
static int
band_rows (int height)
{
  int threads = omp_get_max_threads ();
  int rows = (height + 8 * threads - 1) / (8 * threads);

  if (band_rows_override > 0)
    return band_rows_override;
  return rows < 16 ? 16 : rows;
}

static int
band_count (int height, int rows)
{
  return (height + rows - 1) / rows;
}

/* One working buffer for every thread, `per_thread` bytes each. */
static uint8_t *
scratch_alloc (size_t per_thread, int threads, const char *what, EsError *error)
{
  uint8_t *memory = malloc (per_thread * (size_t) threads);

  if (memory == NULL)
    es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu KiB of %s scratch",
                  per_thread * (size_t) threads >> 10, what);
  return memory;
}

bool
es_cpu_quantize (const EsJob *job, const EsImage *in, EsImage *out, EsError *error)
{
  (void) error;
#pragma omp parallel for schedule(static)
  for (int y = 0; y < in->height; y++)
    map_row (in, y, MAP_LEVELS, job->levels, es_image_row (out, y));
  return true;
}

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
                 EsError *error)
{
  int w = in->width, h = in->height, k = t->window, r = k / 2;
  int threads = omp_get_max_threads ();
  int rows_per_band = band_rows (h);
  int bands = band_count (h, rows_per_band);
  size_t per_thread = map_is_identity (in, MAP_LEVELS) ? 0 : (size_t) k * (size_t) w;
  uint8_t *memory = scratch_alloc (per_thread > 0 ? per_thread : 1, threads, "entropy", error);

  if (memory == NULL)
    return false;

#pragma omp parallel num_threads (threads)
  {
    Ring ring = { memory + per_thread * (size_t) omp_get_thread_num (), (size_t) w, k, 0, { 0 } };

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < h ? y0 + rows_per_band : h;

        ring_start (&ring, y0 - r > 0 ? y0 - r : 0);
        for (int y = y0; y < y1; y++)
          {
            int top = y - r > 0 ? y - r : 0;
            int bottom = y + r < h ? y + r : h - 1;
            const uint8_t *window[ES_WINDOW_MAX];

            ring_fill (&ring, in, MAP_LEVELS, job->levels, bottom);
            for (int i = top; i <= bottom; i++)
              window[i - top] = ring_row (&ring, i);
            entropy_row (t, window, bottom - top + 1, w, es_image_row (out, y));
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
  Ring ring;             /* k + 1 level rows: the window and the row leaving it */
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
                   const EsImage *in, const EsImage *out, int y0, int y1)
{
  int w = out->width, h = out->height;
  int k = t->window, r = k / 2;
  Ring *ring = &s->ring;

  /* The loop below first drops row y0 − r − 1 and adds row y0 + r. */
  memset (s->counts, 0, (size_t) st->levels * s->counts_stride);
  ring_start (ring, y0 - r - 1 > 0 ? y0 - r - 1 : 0);
  for (int y = y0 - r - 1; y < y0 + r; y++)
    if (y >= 0 && y < h)
      simd_slide_columns (s, st->levels, w, r, ring_copy (ring, in, y, MAP_LEVELS, st->levels), s->none);

  for (int y = y0; y < y1; y++)
    {
      int top = y - r - 1, bottom = y + r;
      int rows = (bottom < h ? bottom : h - 1) - (top + 1 > 0 ? top + 1 : 0) + 1;
      float *dst = es_image_row (out, y);
      const uint8_t *enter = bottom < h ? ring_copy (ring, in, bottom, MAP_LEVELS, st->levels) : s->none;

      simd_slide_columns (s, st->levels, w, r, enter, top >= 0 ? ring_row (ring, top) : s->none);
      simd_window_sums (s, st, w, k);

      entropy_finish_row (t, s->sums, w, rows, dst);
    }
}

static bool
entropy_simd (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
              EsError *error)
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
  int rows_per_band = band_rows (out->height);
  int bands = band_count (out->height, rows_per_band);
  uint8_t *memory;

  shuffle_tables_init (&st, k, job->levels);
  memory = scratch_alloc (per_thread, threads, "entropy", error);
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

    /* map_row writes the first width bytes of a row; the rest stays 0xFF. */
    memset (rows, 0xFF, rows_size);

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < out->height ? y0 + rows_per_band : out->height;
        entropy_simd_band (t, &st, &s, in, out, y0, y1);
      }
  }
  free (memory);
  return true;
}
#endif

bool
es_cpu_entropy (const EsJob *job, const EsImage *in, EsImage *out, EsError *error)
{
  EntropyTables *tables;
  bool simd = false;
  bool ok;

#ifdef ES_HAVE_AVX2_PATH
  simd = entropy_simd_pays (job->window, job->levels);
#endif
  tables = malloc (sizeof *tables);
  if (tables == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the entropy tables");
  entropy_tables_init (tables, job->window, simd ? ES_SIMD_BITS : ES_ENTROPY_BITS);

#ifdef ES_HAVE_AVX2_PATH
  if (simd)
    ok = entropy_simd (job, tables, in, out, error);
  else
#endif
    ok = entropy_generic (job, tables, in, out, error);

  free (tables);
  return ok;
}

/* Four sub-histograms per thread so that runs of equal values do not wait on
 * each other's increments. */
static void
histogram_row (const uint8_t *p, int w, uint64_t sub[4][256])
{
  int x = 0;

  for (; x + 4 <= w; x += 4)
    {
      sub[0][p[x]]++;
      sub[1][p[x + 1]]++;
      sub[2][p[x + 2]]++;
      sub[3][p[x + 3]]++;
    }
  for (; x < w; x++)
    sub[0][p[x]]++;
}

/* Two streaming passes over rows and no working memory, so no bands: the
 * histogram pass leaves a converted 8-bit view in the output rows, which the
 * LUT pass then rewrites in place (an 8-bit input is read twice instead). */
bool
es_cpu_equalize (const EsJob *job, const EsImage *in, EsImage *out, EsError *error)
{
  (void) job;
  (void) error;
  uint64_t hist[256] = { 0 };
  uint8_t lut[256];
  int w = in->width, h = in->height;
  bool identity = map_is_identity (in, MAP_VIEW);

#pragma omp parallel
  {
    uint64_t sub[4][256] = { { 0 } };

#pragma omp for schedule(static)
    for (int y = 0; y < h; y++)
      histogram_row (source_row (in, y, MAP_VIEW, 0, es_image_row (out, y)), w, sub);
#pragma omp critical
    for (int i = 0; i < 256; i++)
      hist[i] += sub[0][i] + sub[1][i] + sub[2][i] + sub[3][i];
  }

  /* A single-valued image keeps its values: es_equalize_lut then leaves the
   * identity in lut. */
  es_equalize_lut (hist, (uint64_t) w * (uint64_t) h, lut);

#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++)
    {
      uint8_t *q = es_image_row (out, y);
      const uint8_t *p = identity ? es_image_row (in, y) : q;
      for (int x = 0; x < w; x++)
        q[x] = lut[p[x]];
    }
  return true;
}

/* One sharpened row; the nearest edge pixel stands in for a missing
 * neighbour. The interior loop has no branches and vectorizes. */
ES_HOT static void
sharpen_row (const uint8_t *up, const uint8_t *mid, const uint8_t *down, int w, float amount,
             uint8_t *out)
{
  if (w == 1)
    {
      out[0] = es_sharpen_sample (mid[0], 2 * mid[0] - up[0] - down[0], amount);
      return;
    }
  out[0] = es_sharpen_sample (mid[0], 4 * mid[0] - up[0] - down[0] - mid[0] - mid[1], amount);
  for (int x = 1; x < w - 1; x++)
    out[x] = es_sharpen_sample (mid[x], 4 * mid[x] - up[x] - down[x] - mid[x - 1] - mid[x + 1], amount);
  out[w - 1] = es_sharpen_sample (mid[w - 1],
                                  4 * mid[w - 1] - up[w - 1] - down[w - 1] - mid[w - 2] - mid[w - 1],
                                  amount);
}

/* Each band maps its rows and a one-row halo into a ring of three rows (or
 * reads an 8-bit input's rows in place). */
bool
es_cpu_sharpen (const EsJob *job, const EsImage *in, EsImage *out, EsError *error)
{
  int w = in->width, h = in->height;
  int threads = omp_get_max_threads ();
  int rows_per_band = band_rows (h);
  int bands = band_count (h, rows_per_band);
  size_t per_thread = map_is_identity (in, MAP_VIEW) ? 0 : 3 * (size_t) w;
  uint8_t *memory = scratch_alloc (per_thread > 0 ? per_thread : 1, threads, "sharpen", error);

  if (memory == NULL)
    return false;

#pragma omp parallel num_threads (threads)
  {
    Ring ring = { memory + per_thread * (size_t) omp_get_thread_num (), (size_t) w, 3, 0, { 0 } };

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < h ? y0 + rows_per_band : h;

        ring_start (&ring, y0 > 0 ? y0 - 1 : 0);
        for (int y = y0; y < y1; y++)
          {
            int down = y + 1 < h ? y + 1 : h - 1;

            ring_fill (&ring, in, MAP_VIEW, 0, down);
            sharpen_row (ring_row (&ring, y > 0 ? y - 1 : 0), ring_row (&ring, y), ring_row (&ring, down),
                         w, job->amount, es_image_row (out, y));
          }
      }
  }
  free (memory);
  return true;
}
