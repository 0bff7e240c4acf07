/* SPDX-License-Identifier: MIT */
/* What every CPU operation shares: band sizing, per-thread scratch, input rows mapped to levels or 8 bits. */
#include "es-cpu-internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../es-definitions.h"

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
  uint8_t *memory = malloc (per_thread * (size_t) threads);

  if (memory == NULL)
    es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu KiB of %s scratch",
                  per_thread * (size_t) threads >> 10, what);
  return memory;
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
