/* SPDX-License-Identifier: MIT */
/* Tests of the inspection functions (app/es-inspect.c, app/es-csv.c): line pixels, profiles against
 * the result buffer, rectangle statistics against a long double reference, entropy-window counts
 * under random definitions against es_run, and the CSV tables parsed back. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-csv.h"
#include "es-definitions.h"
#include "es-calibration.h"
#include "es-inspect.h"
#include "es-pipeline.h"
#include "tap.h"

static unsigned long long rng;

static int
random_int (int lo, int hi) /* lo..hi inclusive */
{
  return tap_random_int (&rng, lo, hi);
}

static void
random_image (EsImage *image, int width, int height, EsFormat format, int depth)
{
  EsError error = { 0 };

  if (!es_image_alloc (image, width, height, format, depth, &error))
    {
      tap_diag ("%s", error.message);
      exit (1);
    }
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        void *row = es_image_row (image, y);

        if (format == ES_FORMAT_F32)
          ((float *) row)[x] = (float) (tap_random (&rng) % 1000000) / 7919.0f - 40.0f;
        else if (format == ES_FORMAT_U16)
          ((uint16_t *) row)[x] = (uint16_t) (tap_random (&rng) % (1u << depth));
        else
          ((uint8_t *) row)[x] = (uint8_t) (tap_random (&rng) % (1u << depth));
      }
}

/* A sample as stored, read without es_channel_value. */
static double
raw_sample (const EsImage *image, int x, int y)
{
  const void *row = es_image_row (image, y);

  switch (image->format)
    {
    case ES_FORMAT_U8: return ((const uint8_t *) row)[x];
    case ES_FORMAT_U16: return ((const uint16_t *) row)[x];
    default: return ((const float *) row)[x];
    }
}

/* ---- Lines --------------------------------------------------------------- */

static void
test_line_pixels (void)
{
  bool steps_ok = true, ends_ok = true, near_ok = true, count_ok = true;
  EsPixel pixels[400];

  for (int t = 0; t < 2000; t++)
    {
      int x0 = random_int (-50, 150), y0 = random_int (-50, 150);
      int x1 = random_int (-50, 150), y1 = random_int (-50, 150);
      int dx = x1 - x0, dy = y1 - y0;
      size_t n = es_line_pixels (x0, y0, x1, y1, pixels);
      size_t major = (size_t) (abs (dx) > abs (dy) ? abs (dx) : abs (dy));

      count_ok &= n == major + 1 && es_line_pixels (x0, y0, x1, y1, NULL) == n;
      ends_ok &= pixels[0].x == x0 && pixels[0].y == y0 && pixels[n - 1].x == x1 && pixels[n - 1].y == y1;
      for (size_t i = 0; i < n; i++)
        {
          /* One step along the longer axis each time, at most one along the other. */
          if (i > 0)
            {
              int sx = abs (pixels[i].x - pixels[i - 1].x), sy = abs (pixels[i].y - pixels[i - 1].y);

              steps_ok &= abs (dx) >= abs (dy) ? sx == 1 && sy <= 1 : sy == 1 && sx <= 1;
            }
          /* Within half a pixel of the ideal line, measured along the shorter axis. */
          if (abs (dx) >= abs (dy) && dx != 0)
            near_ok &= fabs (y0 + (double) dy * (pixels[i].x - x0) / dx - pixels[i].y) <= 0.5 + 1e-9;
          else if (dy != 0)
            near_ok &= fabs (x0 + (double) dx * (pixels[i].y - y0) / dy - pixels[i].x) <= 0.5 + 1e-9;
        }
    }
  tap_ok (count_ok, "a line has max(|dx|, |dy|) + 1 pixels");
  tap_ok (ends_ok, "a line starts and ends at its ends");
  tap_ok (steps_ok, "a line steps once along its longer axis per pixel, 8-connected");
  tap_ok (near_ok, "every pixel is within half a pixel of the ideal line");
}

/* The profile of an entropy result, of the gray values and of their levels,
 * against the buffers read directly at the line's pixels. */
static void
test_profile (void)
{
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  EsImage gray = { 0 };
  EsResult result = { 0 };
  EsViewParams params;
  EsProfile profile;
  EsPixel pixels[200];
  int width = random_int (20, 90), height = random_int (20, 90);
  bool values_ok = true, distance_ok = true, ran;

  random_image (&gray, width, height, ES_FORMAT_U8, 8);
  es_view_params_init (&params, ES_OP_ENTROPY);
  params.job.window = 2 * random_int (1, 5) + 1;
  params.job.levels = random_int (2, 64);
  ran = engine && es_pipeline_run (engine, &gray, &params, &result, &error);
  if (!tap_ok (ran, "entropy of a %d×%d image for the profile%s%s", width, height, ran ? "" : ": ",
               ran ? "" : error.message))
    return;

  EsChannel channels[] = {
    { "gray", &gray, 0, 1.0, 0 },
    { "level", &gray, params.job.levels, 1.0, 0 },
    { "entropy (bits)", &result.values, 0, 1 / M_LN2, 0 },
  };
  for (int t = 0; t < 50 && values_ok; t++)
    {
      int x0 = random_int (0, width - 1), y0 = random_int (0, height - 1);
      int x1 = random_int (0, width - 1), y1 = random_int (0, height - 1);
      size_t n = es_line_pixels (x0, y0, x1, y1, pixels);

      if (!es_profile_sample (&profile, channels, 3, x0, y0, x1, y1, &error))
        {
          values_ok = false;
          break;
        }
      values_ok &= profile.n == n && profile.n_channels == 3;
      for (size_t i = 0; i < n && values_ok; i++)
        {
          int x = pixels[i].x, y = pixels[i].y;
          double g = raw_sample (&gray, x, y);

          values_ok &= profile.pixels[i].x == x && profile.pixels[i].y == y;
          values_ok &= profile.values[i] == g;
          values_ok &= profile.values[n + i] == floor (g * params.job.levels / 256);
          values_ok &= profile.values[2 * n + i] == raw_sample (&result.values, x, y) * channels[2].scale;
          distance_ok &= fabs (profile.distance[i] - sqrt ((double) (x - x0) * (x - x0) + (double) (y - y0) * (y - y0)))
                         < 1e-12;
        }
      es_profile_clear (&profile);
    }
  tap_ok (values_ok, "profile: gray, level and entropy at each pixel equal the buffers");
  tap_ok (distance_ok, "profile: distances from the first pixel");
  tap_ok (!es_profile_sample (&profile, channels, 3, 0, 0, width, 0, &error)
            && strstr (error.message, "leaves the image"),
          "a line that leaves the image is refused");
  es_result_clear (&result);
  es_image_clear (&gray);
  es_engine_free (engine);
}

/* ---- Rectangles ---------------------------------------------------------- */

/* Statistics the slow way, in long double. */
static void
reference_stats (const EsImage *image, EsRect rect, double scale, long double *mean, long double *stddev, double *min,
                 double *max, long long *n)
{
  long double sum = 0, squares = 0;
  int x0 = rect.x < 0 ? 0 : rect.x, y0 = rect.y < 0 ? 0 : rect.y;
  int x1 = rect.x + rect.width < image->width ? rect.x + rect.width : image->width;
  int y1 = rect.y + rect.height < image->height ? rect.y + rect.height : image->height;

  *n = 0;
  *min = INFINITY;
  *max = -INFINITY;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        double v = raw_sample (image, x, y) * scale;

        sum += v;
        (*n)++;
        *min = fmin (*min, v);
        *max = fmax (*max, v);
      }
  *mean = *n ? sum / *n : 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      squares += ((long double) raw_sample (image, x, y) * scale - *mean)
                 * ((long double) raw_sample (image, x, y) * scale - *mean);
  *stddev = *n > 1 ? sqrtl (squares / (*n - 1)) : 0;
}

static bool
close_to (double value, long double reference, double tolerance)
{
  return fabsl ((long double) value - reference) <= tolerance * (1 + fabsl (reference));
}

static void
test_roi_stats (void)
{
  static const EsFormat formats[] = { ES_FORMAT_U8, ES_FORMAT_U16, ES_FORMAT_F32 };
  bool stats_ok = true, histogram_ok = true, clipped_ok = true;

  for (size_t f = 0; f < 3; f++)
    for (int t = 0; t < 40; t++)
      {
        EsImage image = { 0 };
        int width = random_int (1, 70), height = random_int (1, 70);
        int depth = formats[f] == ES_FORMAT_U16 ? 16 : 8;
        double scale = t % 2 ? 1.0 : 1 / M_LN2;
        EsRect rect = es_rect_from_corners (random_int (-10, width + 10), random_int (-10, height + 10),
                                            random_int (-10, width + 10), random_int (-10, height + 10));
        EsChannel channel = { "values", &image, 0, scale, 0 };
        EsStats stats;
        long double mean, stddev;
        double min, max;
        long long n;
        uint64_t bins[37], total = 0, direct[37] = { 0 };

        random_image (&image, width, height, formats[f], depth);
        es_roi_stats (&channel, rect, &stats);
        reference_stats (&image, rect, scale, &mean, &stddev, &min, &max, &n);
        stats_ok &= (long long) stats.n == n;
        if (n > 0)
          stats_ok &= close_to (stats.mean, mean, 1e-12) && close_to (stats.stddev, stddev, 1e-9) && stats.min == min
                      && stats.max == max;
        if (!stats_ok)
          {
            tap_diag ("%s %d×%d rect %d,%d %d×%d: n %llu/%lld mean %.17g/%.17Lg sd %.17g/%.17Lg",
                      es_format_name (formats[f]), width, height, rect.x, rect.y, rect.width, rect.height,
                      (unsigned long long) stats.n, n, stats.mean, mean, stats.stddev, stddev);
            es_image_clear (&image);
            break;
          }

        /* The histogram against bins computed here, over the reference's range. */
        es_roi_histogram (&channel, rect, min, max, bins, 37);
        for (int i = 0; i < 37; i++)
          total += bins[i];
        if (es_rect_clip (&rect, width, height))
          for (int y = rect.y; y < rect.y + rect.height; y++)
            for (int x = rect.x; x < rect.x + rect.width; x++)
              {
                double v = raw_sample (&image, x, y) * scale;
                int bin = max > min ? (int) floor ((v - min) / ((max - min) / 37)) : 0;

                direct[bin > 36 ? 36 : bin < 0 ? 0 : bin]++;
              }
        histogram_ok &= total == (uint64_t) n && memcmp (bins, direct, sizeof bins) == 0;
        clipped_ok &= n == 0
                      || (rect.x >= 0 && rect.y >= 0 && rect.x + rect.width <= width && rect.y + rect.height <= height);
        es_image_clear (&image);
      }
  tap_ok (stats_ok, "ROI n, mean, stddev (n − 1), min, max agree with a long double reference");
  tap_ok (histogram_ok, "ROI histogram: every pixel counted once, in its bin");
  tap_ok (clipped_ok, "rectangles are clipped to the image");

  EsImage one = { 0 };
  EsChannel channel = { "one", &one, 0, 1, 0 };
  EsStats stats;

  random_image (&one, 3, 3, ES_FORMAT_U8, 8);
  es_roi_stats (&channel, (EsRect){ 1, 1, 1, 1 }, &stats);
  tap_ok (stats.n == 1 && stats.stddev == 0 && stats.mean == raw_sample (&one, 1, 1),
          "a single pixel: its value, standard deviation 0");
  es_roi_stats (&channel, (EsRect){ 5, 5, 3, 3 }, &stats);
  tap_ok (stats.n == 0, "a rectangle outside the image holds nothing");
  es_image_clear (&one);
}

/* ---- Entropy windows ----------------------------------------------------- */

/* A random entropy definition of every part: shape, border, binning, levels,
 * units and mask. The footprint's cells and the mask are the caller's. */
static void
random_definition (EsJob *job, const EsImage *image, EsFootprint *footprint, uint8_t *footprint_cells, EsImage *mask,
                   int t)
{
  EsEntropyDefinition *d = &job->definition;
  uint32_t maxval = es_image_maxval (image);

  *job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  d->shape = (EsShape) (t % ES_N_SHAPES_2D);
  d->border = (EsBorder) ((t / ES_N_SHAPES_2D) % ES_N_BORDERS);
  d->binning = (EsBinning) random_int (0, ES_N_BINNINGS - 1);
  /* Now and then a window larger than the image, so that borders repeat. */
  job->window = 2 * (random_int (0, 5) == 0 ? random_int (10, 30) : random_int (1, 6)) + 1;
  d->height = 2 * random_int (0, 7) + 1;
  d->width = 2 * random_int (0, 7) + 1;
  d->radius = random_int (0, 7);
  footprint->width = 2 * random_int (0, 4) + 1;
  footprint->height = 2 * random_int (0, 4) + 1;
  for (int i = 0; i < footprint->width * footprint->height; i++)
    footprint_cells[i] = (uint8_t) (random_int (0, 2) != 0);
  /* The centre always in: a footprint with no cell is refused. */
  footprint_cells[footprint->width * footprint->height / 2] = 1;
  footprint->cells = footprint_cells;
  d->footprint = footprint;
  d->border_value = (uint32_t) random_int (0, (int) maxval);
  job->levels = random_int (0, 3) == 0 ? random_int (257, ES_LEVELS_MAX) : random_int (2, 256);
  if (d->binning == ES_BINNING_BYTE)
    job->levels = random_int (2, 256);
  d->range_lo = (uint32_t) random_int (0, (int) maxval / 2);
  d->range_hi = (uint32_t) random_int ((int) d->range_lo, (int) maxval);
  d->normalized = random_int (0, 1);
  d->mask = NULL;
  if (random_int (0, 2) == 0)
    {
      for (int y = 0; y < mask->height; y++)
        for (int x = 0; x < mask->width; x++)
          ((uint8_t *) es_image_row (mask, y))[x] = (uint8_t) (random_int (0, 3) != 0 ? random_int (1, 255) : 0);
      d->mask = mask;
    }
}

/* The counts agree with themselves: cells and table give n, the centre cell
 * holds the readout's bin, and each bin's sample range is exactly the
 * samples that the binner puts in it. */
static bool
counts_consistent (const EsWindowCounts *counts, const EsJob *job, const EsImage *image)
{
  EsBinner binner;
  uint32_t from_cells = 0, from_table = 0, top = es_image_maxval (image), bin;

  es_binner_init (&binner, job, image);
  /* The readout's bin is the centre cell's. */
  if (!es_pixel_bin (job, image, counts->x, counts->y, &bin) || bin != es_window_counts_cell (counts, 0, 0).bin)
    return false;
  for (int dy = -counts->half_height; dy <= counts->half_height; dy++)
    for (int dx = -counts->half_width; dx <= counts->half_width; dx++)
      {
        EsWindowCell cell = es_window_counts_cell (counts, dx, dy);

        from_cells += cell.state == ES_CELL_COUNTED || cell.state == ES_CELL_BORDER;
      }
  for (size_t i = 0; i < counts->n_used; i++)
    {
      const EsBinCount *used = &counts->used[i];

      from_table += used->count;
      if ((i > 0 && used->bin <= counts->used[i - 1].bin) || used->lo > used->hi
          || es_bin_sample (&binner, used->lo) != used->bin || es_bin_sample (&binner, used->hi) != used->bin
          || (used->lo > 0 && es_bin_sample (&binner, used->lo - 1) == used->bin)
          || (used->hi < top && es_bin_sample (&binner, used->hi + 1) == used->bin))
        return false;
    }
  return from_cells == counts->n && from_table == counts->n;
}

static void
test_window_counts (void)
{
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  int checked = 0, failed = 0, consistent_failed = 0, no_data = 0;
  uint8_t footprint_cells[9 * 9];
  EsFootprint footprint = { 0 };
  EsWindowCounts counts = { 0 };

  for (int t = 0; t < 120 && engine; t++)
    {
      EsImage image = { 0 }, mask = { 0 }, out = { 0 };
      EsJob job;
      int width = random_int (1, 23), height = random_int (1, 23);
      int depth = t % 3 == 0 ? random_int (9, 16) : 8;

      random_image (&image, width, height, depth > 8 ? ES_FORMAT_U16 : ES_FORMAT_U8, depth);
      random_image (&mask, width, height, ES_FORMAT_U8, 8);
      random_definition (&job, &image, &footprint, footprint_cells, &mask, t);
      if (!es_run (engine, &job, &image, &out, NULL, &error))
        {
          tap_diag ("es_run: %s", error.message);
          failed++;
        }
      else
        {
          /* Corners, edge middles and the interior. */
          int xs[] = { 0,
                       width - 1,
                       0,
                       width - 1,
                       width / 2,
                       width / 2,
                       0,
                       width - 1,
                       random_int (0, width - 1),
                       random_int (0, width - 1) };
          int ys[] = { 0,
                       0,
                       height - 1,
                       height - 1,
                       0,
                       height - 1,
                       height / 2,
                       height / 2,
                       random_int (0, height - 1),
                       random_int (0, height - 1) };

          for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
            {
              double kernel = ((const float *) es_image_row (&out, ys[i]))[xs[i]];

              if (!es_window_counts (&job, &image, xs[i], ys[i], &counts, &error))
                {
                  tap_diag ("es_window_counts: %s", error.message);
                  failed++;
                  break;
                }
              checked++;
              no_data += isnan (kernel);
              if (isnan (kernel) != isnan (counts.value) || (!isnan (kernel) && fabs (kernel - counts.value) > 1e-5))
                {
                  if (failed++ < 5)
                    tap_diag ("(%d, %d) of %d×%d, %s %s %s L=%d%s%s: kernel %.6f, counts %.6f", xs[i], ys[i], width,
                              height, es_shape_name (job.definition.shape), es_border_name (job.definition.border),
                              es_binning_name (job.definition.binning), job.levels,
                              job.definition.normalized ? " normalized" : "", job.definition.mask ? " masked" : "",
                              kernel, counts.value);
                }
              consistent_failed += !counts_consistent (&counts, &job, &image);
              es_window_counts_clear (&counts);
            }
        }
      es_image_clear (&out);
      es_image_clear (&mask);
      es_image_clear (&image);
    }
  tap_ok (engine && failed == 0 && checked > 1000 && no_data > 0,
          "the window counts give es_run's value under random definitions (%d pixels, %d without data, "
          "%d differ)",
          checked, no_data, failed);
  tap_ok (engine && consistent_failed == 0,
          "cells, the bin table, the readout's bin and each bin's sample range agree with the binner "
          "(%d not)",
          consistent_failed);

  EsImage small = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

  random_image (&small, 4, 4, ES_FORMAT_U8, 8);
  job.window = 4;
  tap_ok (!es_window_counts (&job, &small, 0, 0, &counts, &error), "an even window is refused");
  es_window_counts_clear (&counts);
  error.code = ES_OK;
  job.window = 5;
  tap_ok (!es_window_counts (&job, &small, 4, 0, &counts, &error), "a pixel outside is refused");
  es_window_counts_clear (&counts);
  es_image_clear (&small);
  es_engine_free (engine);
}

/* A volume of random samples below 2^bits, planes tightly packed. */
static void
random_volume (EsImage *volume, int width, int height, int planes, int bits)
{
  EsError error = { 0 };

  if (!es_image_alloc_volume (volume, width, height, planes, ES_FORMAT_U8, 8, &error))
    {
      tap_diag ("%s", error.message);
      exit (1);
    }
  for (int z = 0; z < planes; z++)
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++)
        ((uint8_t *) es_image_voxel_row (volume, z, y))[x] = (uint8_t) (tap_random (&rng) % (1u << bits));
}

/* 3-D windows: the counts at voxels of random volumes (corners in every
 * plane, so that the z border is crossed) give the value es_run computes
 * for the whole volume, under boxes, balls, every border mode, a 3-D mask
 * and normalization; and a 2-D window over a volume counts its own plane. */
static void
test_window_counts_3d (void)
{
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  int checked = 0, failed = 0, cells_failed = 0;
  EsWindowCounts counts = { 0 };

  for (int t = 0; t < 60 && engine; t++)
    {
      EsImage volume = { 0 }, mask = { 0 }, out = { 0 };
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      int width = random_int (1, 11), height = random_int (1, 11), planes = random_int (1, 7);

      random_volume (&volume, width, height, planes, random_int (1, 8));
      job.levels = 1 << random_int (1, 5);
      job.definition.border = (EsBorder) random_int (0, ES_N_BORDERS - 1);
      job.definition.border_value = (uint32_t) random_int (0, 255);
      job.definition.normalized = t % 4 == 1;
      switch (t % 3)
        {
        case 0:
          job.definition.shape = ES_SHAPE_BOX;
          job.definition.planes = 2 * random_int (0, 3) + 1;
          job.definition.height = 2 * random_int (0, 3) + 1;
          job.definition.width = 2 * random_int (0, 3) + 1;
          break;
        case 1:
          job.definition.shape = ES_SHAPE_BALL;
          job.definition.radius = random_int (0, 3);
          break;
        default:
          job.window = 2 * random_int (1, 2) + 1; /* a square: plane by plane */
          break;
        }
      if (t % 5 == 2)
        {
          random_volume (&mask, width, height, planes, 1);
          job.definition.mask = &mask;
        }
      if (!es_run (engine, &job, &volume, &out, NULL, &error))
        {
          if (failed++ < 5)
            tap_diag ("es_run: %s", error.message);
        }
      else
        for (int z = 0; z < planes; z++)
          {
            int xs[] = { 0, width - 1, width / 2, random_int (0, width - 1) };
            int ys[] = { 0, height - 1, height / 2, random_int (0, height - 1) };

            for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
              {
                double kernel = ((const float *) es_image_voxel_row (&out, z, ys[i]))[xs[i]];
                uint32_t from_cells = 0;

                if (!es_window_counts_voxel (&job, &volume, xs[i], ys[i], z, &counts, &error))
                  {
                    if (failed++ < 5)
                      tap_diag ("es_window_counts_voxel: %s", error.message);
                    continue;
                  }
                checked++;
                if (isnan (kernel) != isnan (counts.value) || (!isnan (kernel) && fabs (kernel - counts.value) > 1e-5))
                  if (failed++ < 5)
                    tap_diag ("(%d, %d, %d) of %d×%d×%d, %s %s L=%d%s%s: kernel %.6f, counts %.6f", xs[i], ys[i], z,
                              width, height, planes, es_shape_name (job.definition.shape),
                              es_border_name (job.definition.border), job.levels,
                              job.definition.normalized ? " normalized" : "", job.definition.mask ? " masked" : "",
                              kernel, counts.value);
                for (int dz = -counts.half_depth; dz <= counts.half_depth; dz++)
                  for (int dy = -counts.half_height; dy <= counts.half_height; dy++)
                    for (int dx = -counts.half_width; dx <= counts.half_width; dx++)
                      {
                        EsWindowCell cell = es_window_counts_cell_3d (&counts, dx, dy, dz);

                        from_cells += cell.state == ES_CELL_COUNTED || cell.state == ES_CELL_BORDER;
                      }
                cells_failed += from_cells != counts.n
                                || (job.definition.shape == ES_SHAPE_BALL
                                    && counts.half_depth != job.definition.radius);
                es_window_counts_clear (&counts);
              }
          }
      es_image_clear (&out);
      es_image_clear (&mask);
      es_image_clear (&volume);
    }
  tap_ok (engine && failed == 0 && checked > 500,
          "3-D window counts give es_run's value at voxels of random volumes (%d voxels, %d differ)", checked, failed);
  tap_ok (engine && cells_failed == 0, "the cells of every plane of a 3-D window add up to n (%d not)", cells_failed);

  EsImage small = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

  random_volume (&small, 4, 4, 3, 8);
  job.definition.shape = ES_SHAPE_BALL;
  job.definition.radius = 1;
  tap_ok (!es_window_counts_voxel (&job, &small, 0, 0, 3, &counts, &error), "a plane outside is refused");
  es_window_counts_clear (&counts);
  es_image_clear (&small);
  es_engine_free (engine);
}

/* ---- CSV ----------------------------------------------------------------- */

/* An RFC 4180 reader for the tests: fields[record][field], returns records. */
static int
parse_csv (const char *text, char *fields[][16], int max_records, int *n_fields)
{
  int record = 0, field = 0;
  char buffer[4096];
  size_t used = 0;
  const char *p = text;

  while (*p && record < max_records)
    {
      bool quoted = *p == '"';

      used = 0;
      if (quoted)
        {
          for (p++; *p && !(*p == '"' && p[1] != '"'); p++)
            {
              buffer[used++] = *p;
              if (*p == '"')
                p++;
            }
          p++;
        }
      else
        while (*p && *p != ',' && *p != '\n')
          buffer[used++] = *p++;
      buffer[used] = '\0';
      fields[record][field++] = strdup (buffer);
      if (*p == ',')
        p++;
      else
        {
          n_fields[record++] = field;
          field = 0;
          if (*p == '\n')
            p++;
        }
    }
  return record;
}

static void
free_csv (char *fields[][16], int records, const int *n_fields)
{
  for (int r = 0; r < records; r++)
    for (int f = 0; f < n_fields[r]; f++)
      free (fields[r][f]);
}

static void
test_csv_quoting (void)
{
  static const char *const texts[] = { "plain", "a,b", "say \"hi\"", "two\nlines", " padded ", "", "x" };
  char *fields[2][16];
  int n_fields[2];
  EsCsv csv;
  bool same = true;
  int records;

  es_csv_init (&csv);
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
    es_csv_text (&csv, texts[i]);
  es_csv_end_row (&csv);
  es_csv_number (&csv, NAN);
  es_csv_integer (&csv, -42);
  es_csv_end_row (&csv);
  records = parse_csv (es_csv_get_text (&csv), fields, 2, n_fields);
  same = records == 2 && n_fields[0] == 7 && n_fields[1] == 2;
  for (int i = 0; same && i < 7; i++)
    same &= strcmp (fields[0][i], texts[i]) == 0;
  same = same && strcmp (fields[1][0], "") == 0 && strcmp (fields[1][1], "-42") == 0;
  tap_ok (same, "CSV fields with commas, quotes, line breaks and spaces read back as written");
  tap_ok (strncmp (es_csv_get_text (&csv), "plain,\"a,b\",\"say \"\"hi\"\"\",", 25) == 0,
          "CSV quoting follows RFC 4180");
  free_csv (fields, records, n_fields);
  es_csv_clear (&csv);
}

static char *
read_file (const char *path)
{
  FILE *file = fopen (path, "rb");
  char *text;
  long size;

  if (!file)
    return NULL;
  fseek (file, 0, SEEK_END);
  size = ftell (file);
  rewind (file);
  text = calloc (1, (size_t) size + 1);
  if (fread (text, 1, (size_t) size, file) != (size_t) size)
    text[0] = '\0';
  fclose (file);
  return text;
}

static void
test_csv_tables (const char *dir)
{
  EsImage values = { 0 }, gray = { 0 };
  EsProfile profile;
  EsError error = { 0 };
  EsCsv csv;
  static char *fields[260][16];
  int n_fields[260], records;
  bool profile_ok, roi_ok = true;
  char path[4096], missing[4200];
  char *written;

  random_image (&values, 64, 48, ES_FORMAT_F32, 0);
  random_image (&gray, 64, 48, ES_FORMAT_U16, 12);
  EsChannel channels[] = {
    { "gray", &gray, 0, 1, 0 },
    { "level", &gray, 16, 1, 0 },
    { "entropy (nats)", &values, 0, 1, 0 },
  };

  es_profile_sample (&profile, channels, 3, 3, 40, 60, 2, &error);
  es_csv_init (&csv);
  es_profile_csv (&profile, channels, &csv);
  records = parse_csv (es_csv_get_text (&csv), fields, 260, n_fields);
  profile_ok = records == (int) profile.n + 1 && n_fields[0] == 7 && strcmp (fields[0][6], "entropy (nats)") == 0
               && strcmp (fields[0][3], "distance") == 0;
  for (size_t i = 0; profile_ok && i < profile.n; i++)
    {
      char **row = fields[i + 1];

      profile_ok &= atoi (row[0]) == (int) i && atoi (row[1]) == profile.pixels[i].x
                    && atoi (row[2]) == profile.pixels[i].y
                    && fabs (strtod (row[3], NULL) - profile.distance[i]) <= 1e-8 * (1 + profile.distance[i])
                    && strtod (row[4], NULL) == profile.values[i]
                    && strtod (row[5], NULL) == profile.values[profile.n + i]
                    /* float32 values come back exactly from 9 digits */
                    && (float) strtod (row[6], NULL) == (float) profile.values[2 * profile.n + i];
    }
  tap_ok (profile_ok, "profile CSV parsed back: header, pixels, distances and every value");
  free_csv (fields, records, n_fields);

  snprintf (path, sizeof path, "%s/profile.csv", dir);
  tap_ok (es_csv_write (&csv, path, &error), "profile CSV written");
  written = read_file (path);
  tap_ok (written && strcmp (written, es_csv_get_text (&csv)) == 0, "the file holds the CSV text");
  free (written);
  snprintf (missing, sizeof missing, "%s/no-such-folder/profile.csv", dir);
  error.code = ES_OK;
  tap_ok (!es_csv_write (&csv, missing, &error) && error.code == ES_ERROR_IO
            && strstr (error.message, "no-such-folder"),
          "a CSV into a missing folder fails with a message");
  es_csv_clear (&csv);
  es_profile_clear (&profile);

  EsStats stats[3];
  EsRect rect = { 10, 5, 20, 30 };

  for (int c = 0; c < 3; c++)
    es_roi_stats (&channels[c], rect, &stats[c]);
  es_csv_init (&csv);
  es_roi_csv (channels, stats, 3, rect, &csv);
  records = parse_csv (es_csv_get_text (&csv), fields, 260, n_fields);
  roi_ok = records == 4 && n_fields[0] == 10 && strcmp (fields[0][6], "mean") == 0;
  for (int c = 0; roi_ok && c < 3; c++)
    {
      char **row = fields[c + 1];

      roi_ok &= strcmp (row[0], channels[c].name) == 0 && atoi (row[1]) == 10 && atoi (row[2]) == 5
                && atoi (row[3]) == 20 && atoi (row[4]) == 30 && strtoull (row[5], NULL, 10) == stats[c].n
                && close_to (strtod (row[6], NULL), stats[c].mean, 1e-8)
                && close_to (strtod (row[7], NULL), stats[c].stddev, 1e-8)
                && close_to (strtod (row[8], NULL), stats[c].min, 1e-8)
                && close_to (strtod (row[9], NULL), stats[c].max, 1e-8);
    }
  tap_ok (roi_ok, "ROI CSV parsed back: one record per channel with n, mean, stddev, min, max");
  free_csv (fields, records, n_fields);
  es_csv_clear (&csv);
  unlink (path);
  es_image_clear (&values);
  es_image_clear (&gray);
}

/* Values and lengths in their own units: a float image's channel of values
 * (offset + sample × step), and a calibrated image's profile distances, CSV
 * headers and ROI area. */
static void
test_values_and_units (void)
{
  EsImage gray = { 0 };
  EsProfile profile = { 0 };
  EsError error = { 0 };
  EsStats stats;
  EsCsv csv;
  EsChannel values;
  bool ok = true;

  es_image_alloc (&gray, 8, 6, ES_FORMAT_U16, 16, NULL);
  for (int y = 0; y < 6; y++)
    for (int x = 0; x < 8; x++)
      ((uint16_t *) es_image_row (&gray, y))[x] = (uint16_t) (x * 9362 + (y & 1));
  /* A float TIFF of −1 … 2.5 as the loader leaves it. */
  gray.meta = (EsImageMeta){ .stored = ES_STORED_FLOAT, .value_offset = -1, .value_scale = 3.5 / 65535 };
  values = es_channel_of_values (&gray);
  for (int y = 0; y < 6; y++)
    for (int x = 0; x < 8; x++)
      ok &= es_channel_value (&values, x, y) == -1 + (x * 9362 + (y & 1)) * (3.5 / 65535);
  es_roi_stats (&values, (EsRect){ 0, 0, 8, 6 }, &stats);
  tap_ok (ok && strcmp (values.name, "value") == 0 && stats.min == -1 && close_to (stats.max, 2.5, 1e-4),
          "a float image's channel gives its values: offset + sample × step, min −1, max 2.5");

  gray.meta = (EsImageMeta){ .stored = ES_STORED_SIGNED, .value_offset = -32768, .value_scale = 1 };
  values = es_channel_of_values (&gray);
  tap_ok (es_channel_value (&values, 0, 0) == -32768 && es_channel_value (&values, 1, 0) == 9362 - 32768,
          "a signed image's channel gives its integers");

  gray.meta = (EsImageMeta){ 0 };
  es_image_meta_set_pixel_size (&gray.meta, 0.5, 2, 0, ES_LENGTH_UM);
  values = es_channel_of_values (&gray);
  ok = es_profile_sample (&profile, &values, 1, 0, 0, 3, 4, &error) && profile.n == 5
       && strcmp (profile.distance_unit, "µm") == 0 && close_to (profile.distance[4], hypot (1.5, 8), 1e-12);
  es_csv_init (&csv);
  es_profile_csv (&profile, &values, &csv);
  tap_ok (ok && strncmp (es_csv_get_text (&csv), "index,x,y,distance (µm),gray\n", 28) == 0,
          "a calibrated profile's distances are in µm (0.5 × 2 µm pixels), and its CSV says so");
  es_csv_clear (&csv);
  es_profile_clear (&profile);
  es_csv_init (&csv);
  es_roi_stats (&values, (EsRect){ 1, 1, 4, 3 }, &stats);
  es_roi_csv (&values, &stats, 1, (EsRect){ 1, 1, 4, 3 }, &csv);
  tap_ok (strstr (es_csv_get_text (&csv), ",max,area (µm²)\n") != NULL
            && strstr (es_csv_get_text (&csv), ",12\n") != NULL,
          "a calibrated ROI's CSV has its area, 4 × 3 pixels of 1 µm² = 12 µm²");
  es_csv_clear (&csv);
  es_image_clear (&gray);
}

/* Bit for bit, NaN meeting NaN. */
static bool
same_values (const EsImage *a, const EsImage *b)
{
  for (int y = 0; y < a->height; y++)
    for (int x = 0; x < a->width; x++)
      {
        float u = ((const float *) es_image_row (a, y))[x], v = ((const float *) es_image_row (b, y))[x];

        if (isnan (u) != isnan (v) || (!isnan (u) && memcmp (&u, &v, sizeof u) != 0))
          return false;
      }
  return true;
}

/* A float TIFF's NaN as the loader leaves it (sample 0, counted in the
 * meta): no value in the channel of values, skipped and counted by the
 * statistics (as NumPy's nanmean and nanstd), a masked-out cell for entropy
 * (es_run under es_job_mask_nan equals es_run under the same mask given),
 * and no-data magenta on screen. */
static void
test_nan (void)
{
  EsImage image = { 0 }, mask = { 0 }, masked = { 0 }, nan_mask = { 0 };
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  EsViewParams params;
  EsResult result = { 0 };
  EsTiming timing;
  EsChannel values, levels;
  EsStats stats;
  EsProfile profile = { 0 };
  EsWindowCounts counts = { 0 };
  EsColorScale gray = { .map = ES_COLORMAP_GRAY, .lo = 0, .hi = 65535 };
  EsCsv csv;
  double sum = 0, squares = 0, step = 4.0 / 65534;
  uint8_t rgb[7][9 * 3]; /* the 9 × 7 image, a row of 9 pixels a line */
  int n = 0, nan = 0;
  bool ok = true;

  es_image_alloc (&image, 9, 7, ES_FORMAT_U16, 16, NULL);
  es_image_alloc (&mask, 9, 7, ES_FORMAT_U8, 8, NULL);
  for (int y = 0; y < 7; y++)
    for (int x = 0; x < 9; x++)
      {
        /* NaN on a diagonal and in a corner block, finite values 1..65535. */
        bool is_nan = x == y || (x >= 6 && y >= 5);
        uint16_t sample = is_nan ? 0 : (uint16_t) (1 + (x * 7919 + y * 104729) % 65535);

        ((uint16_t *) es_image_row (&image, y))[x] = sample;
        ((uint8_t *) es_image_row (&mask, y))[x] = !is_nan;
        nan += is_nan;
      }
  /* −2 … 2 with NaN: value = −2 + (sample − 1) · 4 / 65534. */
  image.meta = (EsImageMeta){ .stored = ES_STORED_FLOAT, .value_offset = -2 - step, .value_scale = step };
  image.meta.nan_samples = (uint64_t) nan;

  values = es_channel_of_values (&image);
  levels = (EsChannel){ "level", &image, 16, 1, 0 };
  for (int y = 0; y < 7; y++)
    for (int x = 0; x < 9; x++)
      {
        uint16_t sample = ((uint16_t *) es_image_row (&image, y))[x];
        double v = es_channel_value (&values, x, y);

        ok &= sample == 0 ? isnan (v) && es_channel_value (&levels, x, y) == 0 : v == -2 + (sample - 1) * step;
        if (sample != 0)
          {
            sum += v;
            n++;
          }
      }
  tap_ok (ok, "a float TIFF's NaN sample is NaN in the channel of values, level 0 in the channel of levels");
  for (int y = 0; y < 7; y++)
    for (int x = 0; x < 9; x++)
      if (!isnan (es_channel_value (&values, x, y)))
        squares += (es_channel_value (&values, x, y) - sum / n) * (es_channel_value (&values, x, y) - sum / n);
  es_roi_stats (&values, (EsRect){ 0, 0, 9, 7 }, &stats);
  tap_ok (stats.n == (uint64_t) n && stats.nan == (uint64_t) nan && close_to (stats.mean, sum / n, 1e-12)
            && close_to (stats.stddev, sqrt (squares / (n - 1)), 1e-12),
          "ROI statistics skip NaN as nanmean and nanstd (ddof=1) do, and count it: n %llu, %llu NaN",
          (unsigned long long) stats.n, (unsigned long long) stats.nan);
  es_csv_init (&csv);
  es_roi_csv (&values, &stats, 1, (EsRect){ 0, 0, 9, 7 }, &csv);
  tap_ok (strstr (es_csv_get_text (&csv), ",max,nan\n") != NULL && strstr (es_csv_get_text (&csv), ",12\n") != NULL,
          "the ROI CSV counts the NaN it skipped in a column of its own");
  es_csv_clear (&csv);
  es_roi_stats (&values, (EsRect){ 6, 5, 3, 2 }, &stats);
  tap_ok (stats.n == 0 && stats.nan == 6, "a rectangle of NaN alone has no statistics, and says 6 were skipped");
  ok = es_profile_sample (&profile, &values, 1, 0, 0, 6, 6, &error);
  for (size_t i = 0; ok && i < profile.n; i++)
    ok = isnan (profile.values[i]);
  tap_ok (ok && profile.n == 7, "a profile along the NaN diagonal is NaN at each of its 7 pixels");
  es_profile_clear (&profile);

  params = (EsViewParams){ .job = ES_JOB_INIT (ES_OP_ENTROPY), .colormap = ES_COLORMAP_MAGMA };
  params.job.window = 3;
  ok = engine != NULL && es_pipeline_run (engine, &image, &params, &result, &error);
  params.job.definition.mask = &mask;
  ok = ok && es_run (engine, &params.job, &image, &masked, &timing, &error);
  tap_ok (ok && same_values (&result.values, &masked) && isnan (((float *) result.values.pixels)[0])
            && result.info.may_have_no_data && strstr (result.info.definition, "mask") == NULL,
          "entropy counts NaN as masked-out cells: es_pipeline_run's result is es_run's under that mask, "
          "NaN on NaN pixels, no mask in the definition line (%s)",
          error.message);
  es_image_clear (&masked);
  /* A mask given too: NaN leaves it, and what it leaves out stays out. */
  ((uint8_t *) es_image_row (&mask, 3))[1] = 0;
  params.job.definition.mask = &mask;
  ok = es_job_mask_nan (&params.job, &image, &nan_mask, &error) && params.job.definition.mask == &nan_mask
       && memcmp (nan_mask.pixels, mask.pixels, 9 * 7) == 0;
  es_image_clear (&nan_mask);
  tap_ok (ok, "a mask given with NaN input is that mask without the NaN pixels");

  params.job.definition.mask = NULL;
  ok = es_window_counts (&params.job, &image, 1, 1, &counts, &error) && counts.masked && isnan (counts.value);
  es_window_counts_clear (&counts);
  ok = ok && es_window_counts (&params.job, &image, 1, 0, &counts, &error) && !counts.masked
       && es_window_counts_cell (&counts, 0, 1).state == ES_CELL_MASKED
       && es_window_counts_cell (&counts, -1, 0).state == ES_CELL_MASKED && counts.n == 4
       && close_to (counts.value, ((float *) result.values.pixels)[1], 1e-5);
  es_window_counts_clear (&counts);
  tap_ok (ok, "the inspector's window counts NaN cells nowhere, and its sum is es_run's");

  es_render_heatmap (&image, &gray, rgb[0], sizeof rgb[0]);
  tap_ok (memcmp (rgb[0], es_no_data_rgb, 3) == 0 && memcmp (rgb[0] + 3, es_no_data_rgb, 3) != 0
            && !es_heatmap_is_gray (&image, &gray),
          "a NaN sample is drawn in the no-data colour, its neighbour in gray");

  es_result_clear (&result);
  es_image_clear (&image);
  es_image_clear (&mask);
  if (engine)
    es_engine_free (engine);
}

int
main (void)
{
  char dir[] = "/tmp/test-inspect-XXXXXX";

  rng = tap_seed ();
  if (!mkdtemp (dir))
    {
      tap_ok (false, "temporary folder: %s", strerror (errno));
      return tap_done ();
    }
  test_line_pixels ();
  test_profile ();
  test_roi_stats ();
  test_window_counts ();
  test_window_counts_3d ();
  test_csv_quoting ();
  test_csv_tables (dir);
  test_values_and_units ();
  test_nan ();
  rmdir (dir);
  return tap_done ();
}
