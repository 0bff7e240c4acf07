/* SPDX-License-Identifier: MIT */
/* What every CPU operation shares: the band driver, per-thread scratch, input rows mapped to levels or 8 bits. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../es-definitions.h"
#include "../es-engine.h"

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
int
es_cpu_band_rows (int height)
{
  int threads = omp_get_max_threads ();
  int rows = (height + 8 * threads - 1) / (8 * threads);

  if (band_rows_override > 0)
    return band_rows_override;
  return rows < 16 ? 16 : rows;
}

bool
es_cpu_finish (EsControl *control, EsError *error)
{
  if (es_control_cancelled (control))
    return es_error_set (error, ES_ERROR_CANCELLED, "cancelled");
  return true;
}

uint8_t *
es_cpu_scratch_alloc (size_t per_thread, int threads, const char *what, EsError *error)
{
  /* aligned_alloc wants a multiple of the alignment. */
  size_t bytes = (per_thread * (size_t) threads + 63) / 64 * 64;
  uint8_t *memory = aligned_alloc (64, bytes);

  if (memory == NULL)
    es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu KiB of %s scratch", bytes >> 10, what);
  return memory;
}

bool
es_cpu_run_bands (const EsCpuBands *work, int height, EsControl *control, EsError *error)
{
  int rows_per_band = es_cpu_band_rows (height);
  int bands = es_cpu_band_count (height, rows_per_band);
  /* No more threads than bands: a thread with no band would only spin in
   * the team's barrier, and a stack of small pages runs one short job after
   * another (4000 one-pixel pages: 13 s with an idle thread spinning, 0.4 s
   * without). */
  int threads = bands < 1 ? 1 : omp_get_max_threads () < bands ? omp_get_max_threads () : bands;
  /* Whole cache lines a thread, at least one: no two threads write one
   * line, and each block starts aligned for the vector loads and stores of
   * its method. */
  size_t stride = work->scratch_bytes > 0 ? (work->scratch_bytes + 63) / 64 * 64 : 64;
  uint8_t *memory = es_cpu_scratch_alloc (stride, threads, work->what, error);

  if (memory == NULL)
    return false;
  es_control_begin (control, height);

#pragma omp parallel num_threads(threads)
  {
    uint8_t *scratch = memory + stride * (size_t) omp_get_thread_num ();

    if (work->start_thread != NULL)
      work->start_thread (work->context, scratch);
      /* Bands go to threads as they come free (es_cpu_band_rows). */
#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      if (!es_control_cancelled (control))
        {
          int y0 = band * rows_per_band;
          int y1 = y0 + rows_per_band < height ? y0 + rows_per_band : height;

          work->band (work->context, scratch, y0, y1, control);
        }
  }
  free (memory);
  return es_cpu_finish (control, error);
}

/* es_sample_to_u8_max without a division, so that the row loops vectorize:
 * with a = 510 v + maxval < 2^26 and b = 2 maxval < 2^18, a / b is
 * (a · ⌈2^49 / b⌉) >> 49 exactly (the error a · (⌈2^49 / b⌉ · b − 2^49) / b
 * stays below 2^49 / b). */
static inline uint8_t
view_sample (uint32_t v, uint32_t maxval, uint64_t reciprocal)
{
  return (uint8_t) (((uint64_t) (v * 510u + maxval) * reciprocal) >> 49);
}

/* Called once per row from every operation, so an ifunc call per row costs
 * nothing next to the loop; the clones are what make the loops vectorize. */
ES_HOT void
es_cpu_map_row (const EsImage *in, int y, EsCpuMap kind, int levels, uint8_t *dst)
{
  int w = in->width;
  int depth = in->depth;
  uint32_t maxval = es_image_maxval (in);
  uint64_t reciprocal = ((uint64_t) 1 << 49) / (2u * maxval) + 1;

  if (in->format == ES_FORMAT_U8)
    {
      const uint8_t *src = es_image_row (in, y);
      if (in->levels)
        memcpy (dst, src, (size_t) w);
      else if (kind == ES_CPU_MAP_LEVELS)
        /* es_quantize_sample in 16-bit lanes, which v · L ≤ 255 · 256 fits:
         * three times faster than 32-bit ones. */
        for (int x = 0; x < w; x++)
          dst[x] = (uint8_t) ((uint16_t) (src[x] * (uint16_t) levels) >> depth);
      else
        for (int x = 0; x < w; x++)
          dst[x] = view_sample (src[x], maxval, reciprocal);
    }
  else
    {
      const uint16_t *src = es_image_row (in, y);
      if (in->levels)
        for (int x = 0; x < w; x++)
          dst[x] = (uint8_t) src[x];
      else if (kind == ES_CPU_MAP_LEVELS)
        for (int x = 0; x < w; x++)
          dst[x] = (uint8_t) es_quantize_sample (src[x], levels, depth);
      else
        for (int x = 0; x < w; x++)
          dst[x] = view_sample (src[x], maxval, reciprocal);
    }
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
es_cpu_copy_gbs (size_t bytes, int repeats)
{
  enum { MOST_REPEATS = 32 };
  uint8_t *source = aligned_alloc (64, (bytes + 63) / 64 * 64), *target = aligned_alloc (64, (bytes + 63) / 64 * 64);
  double ms[MOST_REPEATS] = { 0 };
  double gbs = 0;

  repeats = repeats < 1 ? 1 : repeats > MOST_REPEATS ? MOST_REPEATS : repeats;
  if (source != NULL && target != NULL)
    {
      /* Written first, so that the copies time memory, not page faults. */
      memset (source, 1, bytes);
      memset (target, 0, bytes);
      for (int r = 0; r < repeats; r++)
        {
          double start = es_monotonic_ms ();
#pragma omp parallel
          {
            /* Each thread copies its own contiguous share, as the bands do. */
            size_t threads = (size_t) omp_get_num_threads (), t = (size_t) omp_get_thread_num ();
            size_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
            memcpy (target + begin, source + begin, end - begin);
          }
          ms[r] = es_monotonic_ms () - start;
        }
      qsort (ms, (size_t) repeats, sizeof *ms, compare_doubles);
      if (ms[repeats / 2] > 0)
        gbs = 2.0 * (double) bytes / 1e6 / ms[repeats / 2];
    }
  free (source);
  free (target);
  return gbs;
}
