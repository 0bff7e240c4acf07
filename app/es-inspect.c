/* SPDX-License-Identifier: MIT */
/* Line profiles, rectangle statistics and entropy-window counts, and their CSV tables. */
#include "es-inspect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-calibration.h"
#include "es-definitions.h"

double
es_channel_value (const EsChannel *channel, int x, int y)
{
  const EsImage *image = channel->image;
  const void *row = es_image_row (image, y);
  double scale = channel->scale != 0 ? channel->scale : 1.0;
  uint32_t sample;

  if (image->format == ES_FORMAT_F32)
    return channel->offset + ((const float *) row)[x] * scale;
  sample = image->format == ES_FORMAT_U16 ? ((const uint16_t *) row)[x] : ((const uint8_t *) row)[x];
  if (channel->levels == 0 && es_image_meta_is_nan (&image->meta, sample))
    return NAN;
  if (channel->levels > 0 && image->levels == 0)
    sample = es_quantize_sample (sample, channel->levels, image->depth);
  return channel->offset + sample * scale;
}

EsChannel
es_channel_of_values (const EsImage *image)
{
  const EsImageMeta *meta = &image->meta;

  if (meta->stored == ES_STORED_UNSIGNED)
    return (EsChannel){ "gray", image, 0, 1.0, 0 };
  /* A constant float page (step 0) maps every sample to its one value:
   * the tiny scale keeps "0 means 1" from reading it as a step of 1. */
  return (EsChannel){ "value", image, 0, meta->value_scale != 0 ? meta->value_scale : 1e-300, meta->value_offset };
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
        pixels[n] = (EsPixel){ x0, y0 };
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
es_profile_sample (EsProfile *profile, const EsChannel *channels, int n_channels, int x0, int y0, int x1, int y1,
                   EsError *error)
{
  size_t n;

  memset (profile, 0, sizeof *profile);
  if (n_channels < 1)
    return es_error_set (error, ES_ERROR_INVALID, "a profile needs a channel");
  for (int c = 0; c < n_channels; c++)
    if (channels[c].image->width != channels[0].image->width || channels[c].image->height != channels[0].image->height)
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
  profile->distance_unit = es_image_meta_length_symbol (&channels[0].image->meta);
  for (size_t i = 0; i < n; i++)
    {
      const EsPixel *p = &profile->pixels[i];

      profile->distance[i] = es_image_meta_length (&channels[0].image->meta, p->x - x0, p->y - y0);
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
  static const char *const columns[] = { "index", "x", "y" };
  char distance[32] = "distance";

  for (size_t i = 0; i < sizeof columns / sizeof *columns; i++)
    es_csv_text (csv, columns[i]);
  /* Pixels stay "distance", as before calibration was read. */
  if (profile->distance_unit != NULL && strcmp (profile->distance_unit, "px") != 0)
    snprintf (distance, sizeof distance, "distance (%s)", profile->distance_unit);
  es_csv_text (csv, distance);
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

  return (EsRect){ left, top, abs (x1 - x0) + 1, abs (y1 - y0) + 1 };
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
      *rect = (EsRect){ 0, 0, 0, 0 };
      return false;
    }
  *rect = (EsRect){ (int) x0, (int) y0, (int) (x1 - x0), (int) (y1 - y0) };
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
          {
            stats->nan++;
            continue;
          }
        stats->n++;
        sum += v;
        stats->min = v < stats->min ? v : stats->min;
        stats->max = v > stats->max ? v : stats->max;
      }
  if (stats->n == 0)
    {
      uint64_t nan = stats->nan;

      memset (stats, 0, sizeof *stats);
      stats->nan = nan;
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
es_roi_histogram (const EsChannel *channel, EsRect rect, double lo, double hi, uint64_t *bins, int n_bins)
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
es_roi_csv (const EsChannel *channels, const EsStats *stats, int n_channels, EsRect rect, EsCsv *csv)
{
  static const char *const columns[] = { "channel", "x", "y", "width", "height", "n", "mean", "stddev", "min", "max" };
  const EsImageMeta *meta = n_channels > 0 ? &channels[0].image->meta : NULL;
  bool calibrated = meta != NULL && es_image_meta_calibrated (meta);
  bool any_nan = false;
  char area[32];

  for (int c = 0; c < n_channels; c++)
    any_nan |= stats[c].nan > 0;
  for (size_t i = 0; i < sizeof columns / sizeof *columns; i++)
    es_csv_text (csv, columns[i]);
  if (any_nan)
    es_csv_text (csv, "nan");
  if (calibrated)
    {
      snprintf (area, sizeof area, "area (%s²)", es_image_meta_length_symbol (meta));
      es_csv_text (csv, area);
    }
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
      if (any_nan)
        es_csv_integer (csv, (long long) stats[c].nan);
      if (calibrated)
        es_csv_number (csv, es_image_meta_area (meta, rect.width, rect.height));
      es_csv_end_row (csv);
    }
}

/* ---- The entropy window of one pixel ------------------------------------------ */

/* In the mask, and not NaN: a float TIFF's NaN pixels are masked out as
 * es_job_mask_nan masks them for es_run. */
static bool
counted_in_mask (const EsImage *mask, const EsImage *image, int x, int y, int z)
{
  return (mask == NULL || ((const uint8_t *) es_image_voxel_row (mask, z, y))[x] != 0)
         && !es_image_meta_is_nan (&image->meta, (uint32_t) es_image_voxel_sample (image, x, y, z));
}

/* The samples of bin b: every binning is monotone in v, so a bisection over
 * es_bin_sample finds them without a second copy of the rules. */
static void
bin_sample_range (const EsBinner *binner, uint32_t top, uint32_t b, uint32_t *lo, uint32_t *hi)
{
  uint32_t a = 0, z = top;

  if (binner->identity)
    {
      *lo = *hi = b;
      return;
    }
  while (a < z) /* the first v with bin(v) ≥ b */
    {
      uint32_t mid = a + (z - a) / 2;

      if (es_bin_sample (binner, mid) >= b)
        z = mid;
      else
        a = mid + 1;
    }
  *lo = a;
  z = top;
  while (a < z) /* the last v with bin(v) ≤ b */
    {
      uint32_t mid = a + (z - a + 1) / 2;

      if (es_bin_sample (binner, mid) <= b)
        a = mid;
      else
        z = mid - 1;
    }
  *hi = a;
}

static bool
check_window_job (const EsJob *job, const EsImage *image, int x, int y, int z, EsError *error)
{
  const EsImage *mask = job->definition.mask;

  if (job->op != ES_OP_ENTROPY)
    return es_error_set (error, ES_ERROR_INVALID, "the window counts need an entropy job");
  if (!es_job_validate (job, error))
    return false;
  if (image->format != ES_FORMAT_U8 && image->format != ES_FORMAT_U16)
    return es_error_set (error, ES_ERROR_INVALID, "the window counts need an 8- or 16-bit image");
  if (mask
      && (mask->width != image->width || mask->height != image->height
          || es_image_planes (mask) != es_image_planes (image) || mask->format != ES_FORMAT_U8))
    return es_error_set (error, ES_ERROR_INVALID, "the mask is not an 8-bit image of the input's size");
  if (!inside (image, x, y) || z < 0 || z >= es_image_planes (image))
    return es_error_set (error, ES_ERROR_INVALID, "voxel (%d, %d, %d) is outside the image", x, y, z);
  return true;
}

/* The state and bin of the window's cell at (ix, iy, iz) of the image, which
 * may lie outside it: a 2-D window reads plane iz only, as es_run computes
 * it plane by plane; a 3-D window maps z by the border mode as x and y. */
static EsWindowCell
window_cell (const EsEntropyDefinition *d, const EsBinner *binner, uint32_t constant_bin, const EsImage *image, int ix,
             int iy, int iz)
{
  int mx = es_border_index (ix, image->width, d->border);
  int my = es_border_index (iy, image->height, d->border);
  int mz = es_border_index (iz, es_image_planes (image), d->border);

  if (mx < 0 || my < 0 || mz < 0) /* outside, clip or constant */
    return d->border == ES_BORDER_CONSTANT ? (EsWindowCell){ constant_bin, ES_CELL_BORDER }
                                           : (EsWindowCell){ 0, ES_CELL_OUTSIDE };
  return (EsWindowCell){ es_bin_sample (binner, (uint32_t) es_image_voxel_sample (image, mx, my, mz)),
                         !counted_in_mask (d->mask, image, mx, my, mz)                       ? ES_CELL_MASKED
                         : inside (image, ix, iy) && iz >= 0 && iz < es_image_planes (image) ? ES_CELL_COUNTED
                                                                                             : ES_CELL_BORDER };
}

bool
es_window_counts_voxel (const EsJob *job, const EsImage *image, int x, int y, int z, EsWindowCounts *counts,
                        EsError *error)
{
  const EsEntropyDefinition *d = &job->definition;
  EsBinner binner;
  EsSpan3 *spans = NULL;
  uint32_t *tally = NULL, constant_bin, top;
  size_t columns, rows;
  int n_spans;

  memset (counts, 0, sizeof *counts);
  if (!check_window_job (job, image, x, y, z, error))
    return false;

  es_binner_init (&binner, job, image);
  constant_bin = es_binner_border_bin (&binner, job);
  es_window_extent_3d (job, &counts->half_depth, &counts->half_height, &counts->half_width);
  columns = (size_t) (2 * counts->half_width + 1);
  rows = (size_t) (2 * counts->half_height + 1);
  n_spans = es_window_spans_3d (job, NULL, 0);
  spans = malloc ((size_t) (n_spans > 0 ? n_spans : 1) * sizeof *spans);
  counts->cells = calloc (columns * rows * (size_t) (2 * counts->half_depth + 1), sizeof *counts->cells);
  tally = calloc (binner.bins, sizeof *tally);
  if (!spans || !counts->cells || !tally)
    {
      free (spans);
      free (tally);
      es_window_counts_clear (counts);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
    }
  es_window_spans_3d (job, spans, n_spans);

  counts->x = x;
  counts->y = y;
  counts->z = z;
  counts->bins = binner.bins;
  counts->normalized = d->normalized;
  counts->masked = !counted_in_mask (d->mask, image, x, y, z);
  for (int s = 0; s < n_spans; s++)
    for (int dx = spans[s].x0; dx <= spans[s].x1; dx++)
      {
        size_t plane = (size_t) (spans[s].dz + counts->half_depth);
        size_t row = plane * rows + (size_t) (spans[s].dy + counts->half_height);
        EsWindowCell *cell = &counts->cells[row * columns + (size_t) (dx + counts->half_width)];

        *cell = window_cell (d, &binner, constant_bin, image, x + dx, y + spans[s].dy, z + spans[s].dz);
        if (cell->state == ES_CELL_COUNTED || cell->state == ES_CELL_BORDER)
          {
            tally[cell->bin]++;
            counts->n++;
          }
      }
  free (spans);

  for (uint32_t b = 0; b < binner.bins; b++)
    counts->n_used += tally[b] != 0;
  counts->used = malloc ((counts->n_used > 0 ? counts->n_used : 1) * sizeof *counts->used);
  if (!counts->used)
    {
      free (tally);
      es_window_counts_clear (counts);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
    }
  top = es_image_maxval (image);
  top = d->border == ES_BORDER_CONSTANT && d->border_value > top ? d->border_value : top;
  for (uint32_t b = 0, i = 0; b < binner.bins; b++)
    if (tally[b])
      {
        EsBinCount *used = &counts->used[i++];
        double p = (double) tally[b] / counts->n;

        *used = (EsBinCount){ .bin = b, .count = tally[b] };
        bin_sample_range (&binner, top, b, &used->lo, &used->hi);
        counts->entropy -= p * log (p);
      }
  free (tally);

  counts->value = counts->masked ? NAN
                                 : es_entropy_value (counts->entropy, (int) counts->n, binner.bins, d->normalized,
                                                     es_entropy_unit_scale (d));
  counts->divisor = 1.0;
  if (d->normalized)
    {
      uint32_t most = binner.bins < counts->n ? binner.bins : counts->n;

      counts->divisor = most <= 1 ? 0.0 : log ((double) most);
    }
  return true;
}

bool
es_window_counts (const EsJob *job, const EsImage *image, int x, int y, EsWindowCounts *counts, EsError *error)
{
  return es_window_counts_voxel (job, image, x, y, 0, counts, error);
}

void
es_window_counts_clear (EsWindowCounts *counts)
{
  free (counts->cells);
  free (counts->used);
  memset (counts, 0, sizeof *counts);
}

EsWindowCell
es_window_counts_cell (const EsWindowCounts *counts, int dx, int dy)
{
  return es_window_counts_cell_3d (counts, dx, dy, 0);
}

EsWindowCell
es_window_counts_cell_3d (const EsWindowCounts *counts, int dx, int dy, int dz)
{
  size_t rows = (size_t) (2 * counts->half_height + 1);

  if (counts->cells == NULL || abs (dx) > counts->half_width || abs (dy) > counts->half_height
      || abs (dz) > counts->half_depth)
    return (EsWindowCell){ 0, ES_CELL_NONE };
  return counts->cells[((size_t) (dz + counts->half_depth) * rows + (size_t) (dy + counts->half_height))
                         * (size_t) (2 * counts->half_width + 1)
                       + (size_t) (dx + counts->half_width)];
}

bool
es_pixel_bin (const EsJob *job, const EsImage *image, int x, int y, uint32_t *bin)
{
  EsBinner binner;

  if (job->op != ES_OP_ENTROPY || !es_job_validate (job, NULL) || !inside (image, x, y)
      || (image->format != ES_FORMAT_U8 && image->format != ES_FORMAT_U16))
    return false;
  es_binner_init (&binner, job, image);
  *bin = es_bin_sample (&binner, (uint32_t) es_image_sample (image, x, y));
  return true;
}
