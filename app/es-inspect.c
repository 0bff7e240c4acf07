/* SPDX-License-Identifier: MIT */
/* Line profiles, rectangle statistics and entropy-window counts, and their CSV tables. */
#include "es-inspect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "es-definitions.h"

double
es_channel_value (const EsChannel *channel, int x, int y)
{
  const EsImage *image = channel->image;
  const void *row = es_image_row (image, y);
  double scale = channel->scale != 0 ? channel->scale : 1.0;
  uint32_t sample;

  if (image->format == ES_FORMAT_F32)
    return ((const float *) row)[x] * scale;
  sample = image->format == ES_FORMAT_U16 ? ((const uint16_t *) row)[x] : ((const uint8_t *) row)[x];
  if (channel->levels > 0 && image->levels == 0)
    sample = es_quantize_sample (sample, channel->levels, image->depth);
  return sample * scale;
}

size_t
es_line_pixels (int x0, int y0, int x1, int y1, EsPixel *pixels)
{
  long dx = labs ((long) x1 - x0), dy = -labs ((long) y1 - y0);
  int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  long err = dx + dy;
  size_t n = 0;

  for (;;)
    {
      if (pixels)
        pixels[n] = (EsPixel) { x0, y0 };
      n++;
      if (x0 == x1 && y0 == y1)
        return n;
      long e2 = 2 * err;
      if (e2 >= dy)
        {
          err += dy;
          x0 += sx;
        }
      if (e2 <= dx)
        {
          err += dx;
          y0 += sy;
        }
    }
}

static bool
inside (const EsImage *image, int x, int y)
{
  return x >= 0 && y >= 0 && x < image->width && y < image->height;
}

bool
es_profile_sample (EsProfile *profile, const EsChannel *channels, int n_channels,
                   int x0, int y0, int x1, int y1, EsError *error)
{
  size_t n;

  memset (profile, 0, sizeof *profile);
  if (n_channels < 1)
    return es_error_set (error, ES_ERROR_INVALID, "a profile needs a channel");
  for (int c = 0; c < n_channels; c++)
    if (channels[c].image->width != channels[0].image->width
        || channels[c].image->height != channels[0].image->height)
      return es_error_set (error, ES_ERROR_INVALID, "the channels differ in size");
  if (!inside (channels[0].image, x0, y0) || !inside (channels[0].image, x1, y1))
    return es_error_set (error, ES_ERROR_INVALID, "the line leaves the image");

  n = es_line_pixels (x0, y0, x1, y1, NULL);
  profile->pixels = malloc (n * sizeof *profile->pixels);
  profile->distance = malloc (n * sizeof *profile->distance);
  profile->values = malloc (n * (size_t) n_channels * sizeof *profile->values);
  if (!profile->pixels || !profile->distance || !profile->values)
    {
      es_profile_clear (profile);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
    }
  profile->n = n;
  profile->n_channels = n_channels;
  es_line_pixels (x0, y0, x1, y1, profile->pixels);
  for (size_t i = 0; i < n; i++)
    {
      const EsPixel *p = &profile->pixels[i];

      profile->distance[i] = hypot (p->x - x0, p->y - y0);
      for (int c = 0; c < n_channels; c++)
        profile->values[c * n + i] = es_channel_value (&channels[c], p->x, p->y);
    }
  return true;
}

void
es_profile_clear (EsProfile *profile)
{
  free (profile->pixels);
  free (profile->distance);
  free (profile->values);
  memset (profile, 0, sizeof *profile);
}

void
es_profile_csv (const EsProfile *profile, const EsChannel *channels, EsCsv *csv)
{
  static const char *const columns[] = { "index", "x", "y", "distance" };

  for (size_t i = 0; i < sizeof columns / sizeof *columns; i++)
    es_csv_text (csv, columns[i]);
  for (int c = 0; c < profile->n_channels; c++)
    es_csv_text (csv, channels[c].name);
  es_csv_end_row (csv);
  for (size_t i = 0; i < profile->n; i++)
    {
      es_csv_integer (csv, (long long) i);
      es_csv_integer (csv, profile->pixels[i].x);
      es_csv_integer (csv, profile->pixels[i].y);
      es_csv_number (csv, profile->distance[i]);
      for (int c = 0; c < profile->n_channels; c++)
        es_csv_number (csv, profile->values[c * profile->n + i]);
      es_csv_end_row (csv);
    }
}

EsRect
es_rect_from_corners (int x0, int y0, int x1, int y1)
{
  int left = x0 < x1 ? x0 : x1, top = y0 < y1 ? y0 : y1;

  return (EsRect) { left, top, abs (x1 - x0) + 1, abs (y1 - y0) + 1 };
}

bool
es_rect_clip (EsRect *rect, int width, int height)
{
  long x0 = rect->x > 0 ? rect->x : 0, y0 = rect->y > 0 ? rect->y : 0;
  long x1 = (long) rect->x + rect->width, y1 = (long) rect->y + rect->height;

  x1 = x1 < width ? x1 : width;
  y1 = y1 < height ? y1 : height;
  if (x1 <= x0 || y1 <= y0)
    {
      *rect = (EsRect) { 0, 0, 0, 0 };
      return false;
    }
  *rect = (EsRect) { (int) x0, (int) y0, (int) (x1 - x0), (int) (y1 - y0) };
  return true;
}

void
es_roi_stats (const EsChannel *channel, EsRect rect, EsStats *stats)
{
  double sum = 0, squares = 0;

  memset (stats, 0, sizeof *stats);
  if (!es_rect_clip (&rect, channel->image->width, channel->image->height))
    return;
  stats->min = INFINITY;
  stats->max = -INFINITY;
  for (int y = rect.y; y < rect.y + rect.height; y++)
    for (int x = rect.x; x < rect.x + rect.width; x++)
      {
        double v = es_channel_value (channel, x, y);

        /* No value (a masked-out pixel, NaN): counted nowhere. */
        if (isnan (v))
          continue;
        stats->n++;
        sum += v;
        stats->min = v < stats->min ? v : stats->min;
        stats->max = v > stats->max ? v : stats->max;
      }
  if (stats->n == 0)
    {
      memset (stats, 0, sizeof *stats);
      return;
    }
  stats->mean = sum / (double) stats->n;
  /* Two passes: squares of deviations from the mean do not cancel as
   * Σv² − n·mean² would for large, nearly constant values. */
  for (int y = rect.y; y < rect.y + rect.height; y++)
    for (int x = rect.x; x < rect.x + rect.width; x++)
      {
        double d = es_channel_value (channel, x, y) - stats->mean;

        if (!isnan (d))
          squares += d * d;
      }
  stats->stddev = stats->n > 1 ? sqrt (squares / (double) (stats->n - 1)) : 0;
}

void
es_roi_histogram (const EsChannel *channel, EsRect rect, double lo, double hi, uint64_t *bins,
                  int n_bins)
{
  double width = hi > lo ? (hi - lo) / n_bins : 0;

  memset (bins, 0, (size_t) n_bins * sizeof *bins);
  if (!es_rect_clip (&rect, channel->image->width, channel->image->height))
    return;
  for (int y = rect.y; y < rect.y + rect.height; y++)
    for (int x = rect.x; x < rect.x + rect.width; x++)
      {
        double v = es_channel_value (channel, x, y);
        long bin;

        if (isnan (v))
          continue;
        bin = width > 0 ? (long) floor ((v - lo) / width) : 0;
        bins[bin < 0 ? 0 : bin >= n_bins ? n_bins - 1 : bin]++;
      }
}

void
es_roi_csv (const EsChannel *channels, const EsStats *stats, int n_channels, EsRect rect,
            EsCsv *csv)
{
  static const char *const columns[] = { "channel", "x", "y", "width", "height",
                                          "n", "mean", "stddev", "min", "max" };

  for (size_t i = 0; i < sizeof columns / sizeof *columns; i++)
    es_csv_text (csv, columns[i]);
  es_csv_end_row (csv);
  for (int c = 0; c < n_channels; c++)
    {
      es_csv_text (csv, channels[c].name);
      es_csv_integer (csv, rect.x);
      es_csv_integer (csv, rect.y);
      es_csv_integer (csv, rect.width);
      es_csv_integer (csv, rect.height);
      es_csv_integer (csv, (long long) stats[c].n);
      es_csv_number (csv, stats[c].n ? stats[c].mean : NAN);
      es_csv_number (csv, stats[c].n ? stats[c].stddev : NAN);
      es_csv_number (csv, stats[c].n ? stats[c].min : NAN);
      es_csv_number (csv, stats[c].n ? stats[c].max : NAN);
      es_csv_end_row (csv);
    }
}

bool
es_window_counts (const EsImage *image, int levels, int window, int x, int y,
                  EsWindowCounts *counts, EsError *error)
{
  EsChannel channel = { "level", image, levels, 1.0 };
  int half = window / 2;

  memset (counts, 0, sizeof *counts);
  if (window < 1 || window % 2 == 0)
    return es_error_set (error, ES_ERROR_INVALID, "the window must be odd, not %d", window);
  if (levels < 1 || levels > 256)
    return es_error_set (error, ES_ERROR_INVALID, "levels must be 1..256, not %d", levels);
  if (!inside (image, x, y))
    return es_error_set (error, ES_ERROR_INVALID, "pixel (%d, %d) is outside the image", x, y);

  counts->levels = levels;
  counts->window = (EsRect) { x - half, y - half, window, window };
  es_rect_clip (&counts->window, image->width, image->height);
  counts->n = (uint32_t) (counts->window.width * counts->window.height);
  for (int wy = counts->window.y; wy < counts->window.y + counts->window.height; wy++)
    for (int wx = counts->window.x; wx < counts->window.x + counts->window.width; wx++)
      {
        uint32_t level = (uint32_t) es_channel_value (&channel, wx, wy);

        if (level >= (uint32_t) levels)
          return es_error_set (error, ES_ERROR_INVALID, "level %u at (%d, %d) is not below %d",
                               level, wx, wy, levels);
        counts->counts[level]++;
      }
  for (int i = 0; i < levels; i++)
    if (counts->counts[i])
      {
        double p = (double) counts->counts[i] / counts->n;

        counts->entropy -= p * log (p);
      }
  return true;
}
