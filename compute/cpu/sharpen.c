/* SPDX-License-Identifier: MIT */
/* Sharpen on the CPU: a 4-neighbour Laplacian per row over a three-row ring, es_sharpen_sample per pixel. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>
#include <omp.h>
#include <stdlib.h>

#include "../es-definitions.h"

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
es_cpu_sharpen (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  int w = in->width, h = in->height;
  int threads = omp_get_max_threads ();
  int rows_per_band = es_cpu_band_rows (h);
  int bands = es_cpu_band_count (h, rows_per_band);
  size_t per_thread = es_cpu_map_is_identity (in, ES_CPU_MAP_VIEW) ? 0 : 3 * (size_t) w;
  uint8_t *memory;

  assert (out->format == ES_FORMAT_U8 && out->width == w && out->height == h);
  memory = es_cpu_scratch_alloc (per_thread > 0 ? per_thread : 1, threads, "sharpen", error);
  if (memory == NULL)
    return false;
  es_control_begin (control, h);

#pragma omp parallel num_threads (threads)
  {
    EsCpuRing ring = { memory + per_thread * (size_t) omp_get_thread_num (), (size_t) w, 3, 0, { 0 } };

#pragma omp for schedule(dynamic)
    for (int band = 0; band < bands; band++)
      {
        int y0 = band * rows_per_band;
        int y1 = y0 + rows_per_band < h ? y0 + rows_per_band : h;

        es_cpu_ring_start (&ring, y0 > 0 ? y0 - 1 : 0);
        for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
          {
            int down = y + 1 < h ? y + 1 : h - 1;

            es_cpu_ring_fill (&ring, in, ES_CPU_MAP_VIEW, 0, down);
            sharpen_row (es_cpu_ring_row (&ring, y > 0 ? y - 1 : 0), es_cpu_ring_row (&ring, y),
                         es_cpu_ring_row (&ring, down), w, job->amount, es_image_row (out, y));
            es_control_advance (control, 1);
          }
      }
  }
  free (memory);
  return es_cpu_finish (control, error);
}
