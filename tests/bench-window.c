/* SPDX-License-Identifier: MIT */
/* What the window does with a result after es_run returns, step by step, without a display: the
 * layer (mip levels and automatic range, on the worker), the pane's texture at the fit zoom (the
 * colormap and the scaling, on the worker since the canvas takes the worker's rendering), and
 * Copy View's full-size rendering. The layer is timed twice a run, as the window meets it: on an
 * image's first result, in fresh memory that the kernel zeroes as it is first touched, and on a
 * recompute, in the buffers of the result it replaces. Figures: docs/performance/window.md.
 *   usage: bench-window [SIDE [REPEATS [PANE_WIDTH PANE_HEIGHT]]]   (default 4096 7 1206 886; at most 64 runs)
 * Each step's median wall time, and its median CPU time over every thread (the work). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "es-layer.h"
#include "es-load.h"

/* The CPU time of every thread of the process: the work, which a machine
 * shared with other programs stretches far less than the wall time. */
static double
cpu_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

static void
print_step (const char *name, double (*ms)[2], int n, double (*column)[64])
{
  for (int i = 0; i < n; i++)
    column[0][i] = ms[i][0], column[1][i] = ms[i][1];
  printf ("%-22s %10.1f %10.1f\n", name, median (column[0], n), median (column[1], n));
}

/* One result as the worker makes it: its values in a spare buffer where
 * one fits (es_layer_prepare_values), then the layer, timed. */
static EsLayer *
timed_layer (EsEngine *engine, EsSource *source, EsViewParams *params, double *run_ms, double *ms)
{
  EsResult result = { 0 };
  EsError error = { 0 };
  EsLayer *layer;
  double start, cpu;

  es_layer_prepare_values (&result.values, source->image.width, source->image.height,
                           es_job_output_format (&params->job, source->image.format));
  if (!es_pipeline_run (engine, &source->image, params, &result, &error))
    {
      fprintf (stderr, "bench-window: %s\n", error.message);
      exit (1);
    }
  *run_ms = result.timing.wall_ms;
  start = es_monotonic_ms ();
  cpu = cpu_ms ();
  layer = es_layer_new (ES_VIEW_ENTROPY, source, &params->job, ES_BACKEND_CPU, &result);
  ms[0] = es_monotonic_ms () - start;
  ms[1] = cpu_ms () - cpu;
  return layer;
}

int
main (int argc, char *argv[])
{
  int side = argc > 1 ? atoi (argv[1]) : 4096, repeats = argc > 2 ? atoi (argv[2]) : 7;
  int pane_width = argc > 4 ? atoi (argv[3]) : 1206, pane_height = argc > 4 ? atoi (argv[4]) : 886;
  const char *sample = g_getenv ("ES_SAMPLE") ? g_getenv ("ES_SAMPLE") : ES_SAMPLE_IMAGE;
  /* Wall and CPU milliseconds of each step, a run a row. */
  double fresh_ms[64][2], layer_ms[64][2], render_ms[64][2], copy_ms[64][2], column[2][64];
  double run_ms = 0;
  EsImage image = { 0 };
  EsSource *source;
  EsError error = { 0 };
  EsEngine *engine;
  EsViewParams params;
  EsDisplay display = { .colormap = ES_COLORMAP_VIRIDIS, .range = ES_RANGE_AUTO, .units = ES_UNITS_NATS };

  if (side < 1 || repeats < 1 || repeats > 64 || pane_width < 1 || pane_height < 1
      || !tiled_sample (sample, side, &image))
    return 1;
  /* As the window opens it: the layers keep their source (its size keys
   * the pool of spare buffers they give back). */
  source = es_source_new (NULL, "bench", &image);
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
      EsLayer *layer;
      EsColorScale scale;
      EsRendering rendering;
      EsViewport viewport;
      GBytes *copy;
      gsize stride;
      double start, cpu, zoom;

      /* An image's first result: no spare buffers (a window showing an
       * image of another size keeps none), every page fresh. The layers
       * of the run before are freed on a thread of their own, long done
       * when es_run returns. */
      es_layer_keep_spares_for (1, 1);
      layer = timed_layer (engine, source, &params, &run_ms, fresh_ms[r]);
      es_layer_keep_spares_for (side, side);
      es_layer_unref (layer);
      /* A recompute: the result before gave its buffers back. */
      layer = timed_layer (engine, source, &params, &run_ms, layer_ms[r]);

      /* The canvas's fit: the whole image in the pane, centred. */
      zoom = MIN ((double) pane_width / side, (double) pane_height / side);
      viewport = (EsViewport){ zoom, (int) round ((pane_width - side * zoom) / 2),
                               (int) round ((pane_height - side * zoom) / 2), pane_width, pane_height };
      start = es_monotonic_ms ();
      cpu = cpu_ms ();
      es_layer_display_scale (layer, &display, &scale);
      es_layer_render_viewport (layer, &scale, &viewport, TRUE, &rendering);
      render_ms[r][0] = es_monotonic_ms () - start;
      render_ms[r][1] = cpu_ms () - cpu;
      es_rendering_clear (&rendering);

      start = es_monotonic_ms ();
      cpu = cpu_ms ();
      copy = es_layer_render_rgb (layer, &scale, &stride);
      copy_ms[r][0] = es_monotonic_ms () - start;
      copy_ms[r][1] = cpu_ms () - cpu;
      g_bytes_unref (copy);
      es_layer_unref (layer);
    }
  printf ("%-22s %10s %10s\n", "step", "wall", "cpu");
  printf ("%-22s %10.1f\n", "es_run (last run)", run_ms);
  print_step ("layer, first result", fresh_ms, repeats, column);
  print_step ("layer, recompute", layer_ms, repeats, column);
  print_step ("pane texture at fit", render_ms, repeats, column);
  print_step ("copy view", copy_ms, repeats, column);
  es_engine_free (engine);
  es_source_unref (source);
  return 0;
}
