/* SPDX-License-Identifier: MIT */
/* What the window does with a result after es_run returns, step by step, without a display: the
 * layer (mip levels and automatic range, on the worker), the pane's texture at the fit zoom (the
 * colormap and the scaling, on the worker since the canvas takes the worker's rendering), and
 * Copy View's full-size rendering. Figures: docs/performance/window.md.
 *   usage: bench-window [SIDE [REPEATS [PANE_WIDTH PANE_HEIGHT]]]   (default 4096 7 1206 886) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-layer.h"
#include "es-load.h"

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median (double *values, int n)
{
  qsort (values, n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* The sample image tiled to side × side, as the window's figures use it. */
static gboolean
tiled_sample (const char *path, int side, EsImage *image)
{
  EsImage sample = { 0 };
  EsError error = { 0 };

  if (!es_load_file (path, 0, &sample, &error)
      || !es_image_alloc (image, side, side, sample.format, sample.depth, &error))
    {
      fprintf (stderr, "bench-window: %s\n", error.message);
      es_image_clear (&sample);
      return FALSE;
    }
  image->maxval = sample.maxval;
  for (int y = 0; y < side; y++)
    {
      const guint8 *src = es_image_row (&sample, y % sample.height);
      guint8 *dst = es_image_row (image, y);
      size_t row = (size_t) sample.width * es_format_size (sample.format);

      for (int x = 0; x < side; x += sample.width)
        memcpy (dst + (size_t) x * es_format_size (sample.format), src,
                MIN (row, (size_t) (side - x) * es_format_size (sample.format)));
    }
  es_image_clear (&sample);
  return TRUE;
}

int
main (int argc, char *argv[])
{
  int side = argc > 1 ? atoi (argv[1]) : 4096, repeats = argc > 2 ? atoi (argv[2]) : 7;
  int pane_width = argc > 4 ? atoi (argv[3]) : 1206, pane_height = argc > 4 ? atoi (argv[4]) : 886;
  const char *sample = g_getenv ("ES_SAMPLE") ? g_getenv ("ES_SAMPLE") : ES_SAMPLE_IMAGE;
  double *layer_ms = g_new (double, repeats), *render_ms = g_new (double, repeats), *copy_ms = g_new (double, repeats);
  double run_ms = 0;
  EsImage image = { 0 };
  EsError error = { 0 };
  EsEngine *engine;
  EsViewParams params;
  EsDisplay display = { .colormap = ES_COLORMAP_VIRIDIS, .range = ES_RANGE_AUTO, .units = ES_UNITS_NATS };

  if (side < 1 || repeats < 1 || pane_width < 1 || pane_height < 1 || !tiled_sample (sample, side, &image))
    return 1;
  if ((engine = es_engine_new (ES_BACKEND_CPU, &error)) == NULL)
    {
      fprintf (stderr, "bench-window: %s\n", error.message);
      return 1;
    }
  es_view_params_init (&params, ES_OP_ENTROPY);
  printf ("# %d × %d entropy (default definition, CPU), pane %d × %d device pixels, %d runs: median ms\n", side, side,
          pane_width, pane_height, repeats);
  for (int r = 0; r < repeats; r++)
    {
      EsResult result = { 0 };
      EsLayer *layer;
      EsColorScale scale;
      EsRendering rendering;
      EsViewport viewport;
      GBytes *copy;
      gsize stride;
      double start, zoom;

      if (!es_pipeline_run (engine, &image, &params, &result, &error))
        {
          fprintf (stderr, "bench-window: %s\n", error.message);
          return 1;
        }
      run_ms = result.timing.wall_ms;
      start = es_monotonic_ms ();
      layer = es_layer_new (ES_VIEW_ENTROPY, NULL, &params.job, ES_BACKEND_CPU, &result);
      layer_ms[r] = es_monotonic_ms () - start;

      /* The canvas's fit: the whole image in the pane, centred. */
      zoom = MIN ((double) pane_width / side, (double) pane_height / side);
      viewport = (EsViewport){ zoom, (int) round ((pane_width - side * zoom) / 2),
                               (int) round ((pane_height - side * zoom) / 2), pane_width, pane_height };
      start = es_monotonic_ms ();
      es_layer_display_scale (layer, &display, &scale);
      es_layer_render_viewport (layer, &scale, &viewport, TRUE, &rendering);
      render_ms[r] = es_monotonic_ms () - start;
      es_rendering_clear (&rendering);

      start = es_monotonic_ms ();
      copy = es_layer_render_rgb (layer, &scale, &stride);
      copy_ms[r] = es_monotonic_ms () - start;
      g_bytes_unref (copy);
      es_layer_unref (layer);
    }
  printf ("es_run %.1f (last run)\nlayer (mips, range) %.1f\npane texture at fit %.1f\ncopy view %.1f\n", run_ms,
          median (layer_ms, repeats), median (render_ms, repeats), median (copy_ms, repeats));
  es_engine_free (engine);
  es_image_clear (&image);
  g_free (layer_ms);
  g_free (render_ms);
  g_free (copy_ms);
  return 0;
}
