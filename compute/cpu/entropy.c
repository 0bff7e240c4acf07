/* SPDX-License-Identifier: MIT */
/* Local entropy on the CPU: sliding, column-histogram, shuffle and sort methods, chosen per window and level count. */
#include "es-cpu.h"
#include "entropy-internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Redoes the columns within r of the left and right edges, whose window
 * is clipped to fewer columns than k. */
void
es_cpu_entropy_finish_edges (const EntropyTables *t, const uint32_t *sums, int w, int rows, float *dst)
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
/* Turns one row of scaled sums into entropies (for the shuffle method,
 * whose sums come a row at a time); `rows` is the clipped window's height.
 * Columns within r of an edge have a clipped window; the others share one
 * n, and that loop vectorizes. */
ES_HOT void
es_cpu_entropy_finish_row (const EntropyTables *t, const uint32_t *sums, int w, int rows, float *dst)
{
  RowFinish f = row_finish (t, rows);
  int r = t->window / 2;
  int inner0 = r < w ? r : w;
  int inner1 = w - r > inner0 ? w - r : inner0;

  for (int x = inner0; x < inner1; x++)
    dst[x] = finish_value_masked (&f, sums[x]);
  es_cpu_entropy_finish_edges (t, sums, w, rows, dst);
}
#endif

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
sliding_row_inline (const EntropyTables *t, const uint8_t *first, size_t stride, int rows, int w, uint32_t *sums,
                    float *dst, const int fixed_rows)
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
      dst[x] = finish_value (&f, s); /* x = r has a full window; the edges are redone below */
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
  es_cpu_entropy_finish_edges (t, sums, w, n, dst);
}

#define ES_SLIDING_ROW(rows)                                                                                           \
  ES_HOT static void sliding_row_##rows (const EntropyTables *t, const uint8_t *first, size_t stride, int n, int w,    \
                                         uint32_t *sums, float *dst)                                                   \
  {                                                                                                                    \
    sliding_row_inline (t, first, stride, n, w, sums, dst, rows);                                                      \
  }

ES_SLIDING_ROW (0)
ES_SLIDING_ROW (3)
ES_SLIDING_ROW (5)
ES_SLIDING_ROW (7)

/* One row of entropies from its window's `rows` level rows. */
static void
sliding_row (const EntropyTables *t, const uint8_t *first, size_t stride, int rows, int w, uint32_t *sums, float *dst)
{
  switch (rows)
    {
    case 3: sliding_row_3 (t, first, stride, rows, w, sums, dst); break;
    case 5: sliding_row_5 (t, first, stride, rows, w, sums, dst); break;
    case 7: sliding_row_7 (t, first, stride, rows, w, sums, dst); break;
    default: sliding_row_0 (t, first, stride, rows, w, sums, dst); break;
    }
}

typedef struct {
  const EntropyTables *t;
  const EsImage *in, *out;
  int levels;
  size_t stride;    /* between the ring's slots */
  size_t sums_size; /* the row of sums before the ring */
} Sliding;

/* Each band maps its rows and its halo into a ring of 2k rows in which
 * row y sits twice, at slots y mod k and y mod k + k: the window's rows,
 * at most k consecutive ones, are then always consecutive slots, and no
 * table of row pointers is loaded per update. Slots are a multiple of 64
 * bytes plus 64 apart: at a power-of-two distance (a 4096-pixel image) the
 * k rows under one column would all fall into one set of the L1 cache,
 * which holds eight, and every update beyond the eighth row would miss. */
static void
sliding_band (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control)
{
  const Sliding *s = context;
  const EsImage *in = s->in;
  int w = in->width, h = in->height, k = s->t->window, r = k / 2;
  size_t stride = s->stride;
  uint32_t *sums = (uint32_t *) scratch;
  uint8_t *ring = scratch + s->sums_size;
  int next = y0 - r > 0 ? y0 - r : 0; /* the next row to map */

  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int top, bottom;

      window_rows (y, r, h, &top, &bottom);
      for (; next <= bottom; next++)
        {
          uint8_t *slot = ring + (size_t) (next % k) * stride;
          es_cpu_map_row (in, next, ES_CPU_MAP_LEVELS, s->levels, slot);
          memcpy (slot + (size_t) k * stride, slot, (size_t) w);
        }
      sliding_row (s->t, ring + (size_t) (top % k) * stride, stride, bottom - top + 1, w, sums,
                   es_image_row (s->out, y));
      es_control_advance (control, 1);
    }
}

static bool
entropy_sliding (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out, EsControl *control,
                 EsError *error)
{
  size_t stride = ((size_t) in->width + 63) / 64 * 64 + 64;
  Sliding sliding = {
    .t = t,
    .in = in,
    .out = out,
    .levels = job->levels,
    .stride = stride,
    .sums_size = ((size_t) in->width * sizeof (uint32_t) + 63) / 64 * 64,
  };
  EsCpuBands work = {
    .what = "entropy",
    .scratch_bytes = sliding.sums_size + 2 * (size_t) t->window * stride,
    .context = &sliding,
    .band = sliding_band,
  };

  return es_cpu_run_bands (&work, in->height, control, error);
}

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
  static const char *const names[] = { "auto", "sliding", "columns", "shuffle", "sort" };

  return method < ES_CPU_N_ENTROPY_METHODS ? names[method] : "?";
}

static bool avx512_disallowed;

void
es_cpu_set_entropy_avx512 (bool allowed)
{
  avx512_disallowed = !allowed;
}

bool
es_cpu_entropy_avx512 (void)
{
#ifdef ES_HAVE_AVX512_PATH
  const char *env = getenv ("ES_CPU_AVX512");

  return !avx512_disallowed && !(env != NULL && strcmp (env, "0") == 0) && __builtin_cpu_supports ("avx512f")
         && __builtin_cpu_supports ("avx512bw") && __builtin_cpu_supports ("avx512vl")
         && __builtin_cpu_supports ("avx512dq") && __builtin_cpu_supports ("avx512vbmi")
         && __builtin_cpu_supports ("avx512vnni");
#else
  return false;
#endif
}

static bool
method_can_run (EsCpuEntropyMethod method, int width, int window, int levels)
{
  switch (method)
    {
    case ES_CPU_ENTROPY_SLIDING: return true;
#ifdef ES_HAVE_AVX2_PATH
    case ES_CPU_ENTROPY_COLUMNS:
      return levels <= ES_COLUMNS_MAX_LEVELS && es_cpu_columns_bytes (width, window, levels) <= ES_COLUMNS_MAX_BYTES
             && __builtin_cpu_supports ("avx2");
    case ES_CPU_ENTROPY_SHUFFLE:
      /* 0xFF pads the rows, so it must not be a level. */
      return window <= ES_SIMD_MAX_WINDOW && levels < 0xFF && __builtin_cpu_supports ("avx2");
#endif
    case ES_CPU_ENTROPY_SORT: return window == 5 && es_cpu_entropy_avx512 ();
    default: return false;
    }
}

/* Nanoseconds a pixel on one core, fitted to single-thread timings of every
 * method, windows 3..31 and 2..256 levels, on random 8-bit images and on a
 * photograph, on the Zen 4 this was written on
 * (docs/performance/cpu-entropy.md). Columns, shuffle and sort cost the same
 * on any image: columns one table load a level and pixel pair, plus vector
 * work that grows with the 16-level vectors; shuffle a few vector
 * instructions per level and 16-count slice of the table with AVX2, per group
 * of four levels with AVX-512 (measured per level below); sort the same for
 * any L. Sliding costs two table updates a window row, more with few levels,
 * and about 1.4 times its cost on noise on a photograph, whose repeated
 * levels chain the updates of one count through memory: the model charges it
 * that, so that near a tie the method whose speed does not depend on the
 * image wins. */
static double
method_cost (EsCpuEntropyMethod method, int window, int levels)
{
  /* Shuffle's ns per level and pixel for windows 3, 5, .., 15: AVX2, and
   * AVX-512 (per level of the groups of four it runs). */
  static const double shuffle_per_level[] = { 0.105, 0.142, 0.272, 0.38, 0.48, 0.62, 0.81 };
  static const double shuffle512_per_level[] = { 0.045, 0.055, 0.07, 0.09, 0.10, 0.115, 0.13 };

  switch (method)
    {
    case ES_CPU_ENTROPY_SLIDING: return 1.4 * (1.0 + window * (1.2 + 3.0 / levels));
    case ES_CPU_ENTROPY_COLUMNS:
#ifdef ES_HAVE_AVX2_PATH
      /* One load per level rounded up to 4; beyond 64 levels the vector
       * work of all the lanes dominates. */
      return 1.8 + 0.01 * window
             + 0.14 * (es_cpu_columns_lanes (levels) > 64 ? es_cpu_columns_lanes (levels) : (levels + 3) & ~3);
#else
      return INFINITY;
#endif
    case ES_CPU_ENTROPY_SHUFFLE:
      if (window > 15)
        return INFINITY;
      if (es_cpu_entropy_avx512 ())
        return 0.5 + shuffle512_per_level[(window - 3) / 2] * ((levels + 3) & ~3);
      return 0.5 + shuffle_per_level[(window - 3) / 2] * levels;
    case ES_CPU_ENTROPY_SORT:
      /* The network and the lookups of 25 cells, whatever L. */
      return window == 5 ? 1.8 : INFINITY;
    default: return INFINITY;
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

/* The methods below compute nats; a job in bits has its rows scaled after
 * them, as es_entropy_store scales a value (the general methods scale as
 * they store, at several times the cost). */
static void
scale_to_unit (const EsJob *job, EsImage *out)
{
  const double scale = es_entropy_unit_scale (&job->definition);

  if (scale == 1.0)
    return;
#pragma omp parallel for schedule(static) if ((long long) out->width * out->height > 65536)
  for (int y = 0; y < out->height; y++)
    {
      float *row = es_image_row (out, y);
      for (int x = 0; x < out->width; x++)
        row[x] = es_entropy_store (row[x], scale);
    }
}

bool
es_cpu_entropy (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  EsCpuEntropyMethod method;
  EntropyTables *tables;
  bool ok;

  if (es_definition_is_3d (&job->definition))
    return es_cpu_entropy_3d (job, in, out, control, error);
  assert (out->format == ES_FORMAT_F32 && out->width == in->width && out->height == in->height);
  if (!es_job_is_default_definition (job))
    return es_cpu_entropy_general (job, in, out, control, error);
  assert (job->window % 2 == 1 && job->window <= ES_FAST_WINDOW_MAX && job->levels <= ES_FAST_LEVELS_MAX);
  method = es_cpu_entropy_method (in->width, job->window, job->levels);
  tables = malloc (sizeof *tables);
  if (tables == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the entropy tables");
  entropy_tables_init (tables, job->window, method == ES_CPU_ENTROPY_SHUFFLE ? ES_SIMD_BITS : ES_ENTROPY_BITS);

  switch (method)
    {
#ifdef ES_HAVE_AVX2_PATH
    case ES_CPU_ENTROPY_SHUFFLE: ok = es_cpu_entropy_shuffle (job, tables, in, out, control, error); break;
    case ES_CPU_ENTROPY_COLUMNS: ok = es_cpu_entropy_columns (job, tables, in, out, control, error); break;
#endif
#ifdef ES_HAVE_AVX512_PATH
    case ES_CPU_ENTROPY_SORT: ok = es_cpu_entropy_sort (job, tables, in, out, control, error); break;
#endif
    default: ok = entropy_sliding (job, tables, in, out, control, error); break;
    }

  free (tables);
  if (ok)
    scale_to_unit (job, out);
  return ok;
}

/* Every method (2-D and 3-D) slides its counts over a band's rings of
 * binned rows, held in cache: each sample is read once (a band's halo rows
 * again, which the model leaves out: k − 1 rows a band of 16 rows or more),
 * the mask once if there is one, and each float result written once. */
void
es_cpu_entropy_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);
  const double mask = job->definition.mask != NULL ? pixels : 0;

  *traffic = (EsTraffic){ pixels * (double) es_format_size (extent->format) + mask, pixels * sizeof (float), 0 };
  /* The fast methods' bits pass (scale_to_unit) reads and writes the result again. */
  if (job->definition.bits && !es_definition_is_3d (&job->definition) && es_job_is_default_definition (job))
    {
      traffic->read_bytes += pixels * sizeof (float);
      traffic->write_bytes += pixels * sizeof (float);
    }
}
