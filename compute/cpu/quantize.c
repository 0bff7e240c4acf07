/* SPDX-License-Identifier: MIT */
/* Quantize on the CPU: each row mapped to its levels, straight into the output. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>

/* No bands: a row depends on nothing but itself and needs no scratch. */
bool
es_cpu_quantize (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  assert (out->format == ES_FORMAT_U8 && out->width == in->width && out->height == in->height);
  es_control_begin (control, in->height);
#pragma omp parallel for schedule(static)
  for (int y = 0; y < in->height; y++)
    if (!es_control_cancelled (control))
      {
        es_cpu_map_row (in, y, ES_CPU_MAP_LEVELS, job->levels, es_image_row (out, y));
        es_control_advance (control, 1);
      }
  return es_cpu_finish (control, error);
}

/* One pass: each sample read, each level written. */
void
es_cpu_quantize_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);

  (void) job;
  *traffic = (EsTraffic){ pixels * (double) es_format_size (extent->format), pixels, 0 };
}
