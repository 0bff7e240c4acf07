/* SPDX-License-Identifier: MIT */
/* Equalize on the CPU: a parallel 256-bin histogram, the LUT of es-definitions.c, then the LUT applied. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>

#include "../es-definitions.h"

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
 * LUT pass then rewrites in place (an 8-bit input is read twice instead).
 * A volume's rows are those of every plane: one histogram, one LUT. */
bool
es_cpu_equalize (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  (void) job;
  uint64_t hist[256] = { 0 };
  uint8_t lut[256];
  int w = in->width, h = in->height, planes = es_image_planes (in);
  long long rows = (long long) planes * h;
  bool identity = es_cpu_map_is_identity (in, ES_CPU_MAP_VIEW);

  assert (out->format == ES_FORMAT_U8 && out->width == w && out->height == h && es_image_planes (out) == planes);
  /* Two passes over the rows: the histogram, then the LUT. */
  es_control_begin (control, 2 * rows);

#pragma omp parallel
  {
    uint64_t sub[4][256] = { { 0 } };

#pragma omp for schedule(static)
    for (long long r = 0; r < rows; r++)
      if (!es_control_cancelled (control))
        {
          EsImage in_plane = es_image_plane (in, (int) (r / h));
          int y = (int) (r % h);

          histogram_row (
            es_cpu_source_row (&in_plane, y, ES_CPU_MAP_VIEW, 0, es_image_voxel_row (out, (int) (r / h), y)), w, sub);
          es_control_advance (control, 1);
        }
#pragma omp critical
    for (int i = 0; i < 256; i++)
      hist[i] += sub[0][i] + sub[1][i] + sub[2][i] + sub[3][i];
  }

  if (es_control_cancelled (control))
    return es_cpu_finish (control, error);
  /* A single-valued image keeps its values: es_equalize_lut then leaves the
   * identity in lut. */
  es_equalize_lut (hist, (uint64_t) w * (uint64_t) h * (uint64_t) planes, lut);

#pragma omp parallel for schedule(static)
  for (long long r = 0; r < rows; r++)
    if (!es_control_cancelled (control))
      {
        uint8_t *q = es_image_voxel_row (out, (int) (r / h), (int) (r % h));
        const uint8_t *p = identity ? es_image_voxel_row (in, (int) (r / h), (int) (r % h)) : q;
        for (int x = 0; x < w; x++)
          q[x] = lut[p[x]];
        es_control_advance (control, 1);
      }
  return es_cpu_finish (control, error);
}

/* Two passes (es_cpu_equalize): an 8-bit image whose view is itself is
 * read by both and written by the second; any other image is read once,
 * its view written into the output, which the second pass reads and
 * rewrites in place. */
void
es_cpu_equalize_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);
  const bool identity = extent->format == ES_FORMAT_U8 && (extent->levels != 0 || extent->depth == 8);

  (void) job;
  if (identity)
    *traffic = (EsTraffic){ 2 * pixels, pixels, 0 };
  else
    *traffic = (EsTraffic){ pixels * (double) es_format_size (extent->format) + pixels, 2 * pixels, 0 };
}
