/* SPDX-License-Identifier: MIT */
/* Sharpen on the CPU: a 4-neighbour Laplacian per row over a three-row ring, es_sharpen_sample per pixel. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>

#include "../es-definitions.h"

/* One sharpened row; the nearest edge pixel stands in for a missing
 * neighbour. The interior loop has no branches and vectorizes. */
ES_HOT static void
sharpen_row (const uint8_t *up, const uint8_t *mid, const uint8_t *down, int w, float amount, uint8_t *out)
{
  if (w == 1)
    {
      out[0] = es_sharpen_sample (mid[0], 2 * mid[0] - up[0] - down[0], amount);
      return;
    }
  out[0] = es_sharpen_sample (mid[0], 4 * mid[0] - up[0] - down[0] - mid[0] - mid[1], amount);
  for (int x = 1; x < w - 1; x++)
    out[x] = es_sharpen_sample (mid[x], 4 * mid[x] - up[x] - down[x] - mid[x - 1] - mid[x + 1], amount);
  out[w - 1] = es_sharpen_sample (mid[w - 1], 4 * mid[w - 1] - up[w - 1] - down[w - 1] - mid[w - 2] - mid[w - 1],
                                  amount);
}

typedef struct {
  const EsImage *in, *out;
  float amount;
} Sharpen;

/* The band maps its rows and a one-row halo into a ring of three rows (or
 * reads an 8-bit input's rows in place). */
static void
sharpen_band (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control)
{
  const Sharpen *job = context;
  const EsImage *in = job->in;
  int w = in->width, h = in->height;
  EsCpuRing ring = { scratch, (size_t) w, 3, 0, { 0 } };

  es_cpu_ring_start (&ring, y0 > 0 ? y0 - 1 : 0);
  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int down = y + 1 < h ? y + 1 : h - 1;

      es_cpu_ring_fill (&ring, in, ES_CPU_MAP_VIEW, 0, down);
      sharpen_row (es_cpu_ring_row (&ring, y > 0 ? y - 1 : 0), es_cpu_ring_row (&ring, y),
                   es_cpu_ring_row (&ring, down), w, job->amount, es_image_row (job->out, y));
      es_control_advance (control, 1);
    }
}

bool
es_cpu_sharpen (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  Sharpen sharpen = { in, out, job->amount };
  EsCpuBands work = {
    .what = "sharpen",
    .scratch_bytes = es_cpu_map_is_identity (in, ES_CPU_MAP_VIEW) ? 0 : 3 * (size_t) in->width,
    .context = &sharpen,
    .band = sharpen_band,
  };

  assert (out->format == ES_FORMAT_U8 && out->width == in->width && out->height == in->height);
  return es_cpu_run_bands (&work, in->height, control, error);
}

/* A band's rows are read once (the rows above and below come from the
 * thread's ring, in cache) and each result written once. */
void
es_cpu_sharpen_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);

  (void) job;
  *traffic = (EsTraffic){ pixels * (double) es_format_size (extent->format), pixels, 0 };
}
