/* SPDX-License-Identifier: MIT */
/* The definitions of DESIGN.md §1 that are more than a line: the equalization LUT, binning, window shapes. */
#include "es-definitions.h"

int
es_equalize_lut (const uint64_t hist[256], uint64_t n, uint8_t lut[256])
{
  int first = 0;
  uint64_t sum = 0;
  float scale;

  while (first < 255 && hist[first] == 0)
    first++;
  if (hist[first] == n)
    {
      for (int k = 0; k < 256; k++)
        lut[k] = (uint8_t) k;
      return 0;
    }
  /* As cv::equalizeHist: float32 scale, the count converted to float, then
   * rounded half to even and saturated. */
  scale = 255.0f / (float) (n - hist[first]);
  for (int k = 0; k <= first; k++)
    lut[k] = 0;
  for (int k = first + 1; k < 256; k++)
    {
      float value;

      sum += hist[k];
      value = rintf ((float) sum * scale);
      lut[k] = (uint8_t) (value > 255.0f ? 255.0f : value);
    }
  return 1;
}

/* ---- binning ------------------------------------------------------------------- */

void
es_binner_init (EsBinner *binner, const EsJob *job, const EsImage *in)
{
  EsJob resolved = *job;
  const EsEntropyDefinition *d = &resolved.definition;

  /* MINMAX is RANGE over the image's own samples (es_run resolves it at
   * its gate already; other callers get the same rule here). */
  es_job_resolve_minmax (&resolved, in);
  *binner = (EsBinner){
    .mode = d->binning,
    .levels = (uint32_t) job->levels,
    .depth = (uint32_t) in->depth,
    .maxval = es_image_maxval (in),
  };
  if (in->levels != 0)
    {
      binner->identity = true;
      binner->bins = (uint32_t) in->levels;
      return;
    }
  binner->lo = d->range_lo;
  binner->span = d->range_hi - d->range_lo + 1;
  binner->bins = d->binning == ES_BINNING_EXACT ? 1u << in->depth : (uint32_t) job->levels;
}

uint32_t
es_binner_border_bin (const EsBinner *binner, const EsJob *job)
{
  return es_bin_sample (binner, job->definition.border_value);
}

/* ---- window shapes ------------------------------------------------------------- */

void
es_window_extent (const EsJob *job, int *half_height, int *half_width)
{
  const EsEntropyDefinition *d = &job->definition;

  switch (d->shape)
    {
    case ES_SHAPE_RECT: *half_height = d->height / 2, *half_width = d->width / 2; break;
    case ES_SHAPE_DISK: *half_height = *half_width = d->radius; break;
    case ES_SHAPE_FOOTPRINT: *half_height = d->footprint->height / 2, *half_width = d->footprint->width / 2; break;
    case ES_SHAPE_BOX: *half_height = d->height / 2, *half_width = d->width / 2; break;
    case ES_SHAPE_BALL: *half_height = *half_width = d->radius; break;
    default: *half_height = *half_width = job->window / 2; break;
    }
}

void
es_window_extent_3d (const EsJob *job, int *half_depth, int *half_height, int *half_width)
{
  const EsEntropyDefinition *d = &job->definition;

  es_window_extent (job, half_height, half_width);
  switch (d->shape)
    {
    case ES_SHAPE_BOX: *half_depth = d->planes / 2; break;
    case ES_SHAPE_BALL: *half_depth = d->radius; break;
    case ES_SHAPE_FOOTPRINT: *half_depth = d->footprint->planes > 1 ? d->footprint->planes / 2 : 0; break;
    default: *half_depth = 0; break;
    }
}

/* The largest x with x² ≤ q, exactly, in integers. */
static int
isqrt (int q)
{
  int x = (int) sqrt ((double) q);

  while (x * x > q)
    x--;
  while ((x + 1) * (x + 1) <= q)
    x++;
  return x;
}

/* One span into whichever list the caller gave (2-D or 3-D spans), up to
 * capacity; returns the new count, which goes on past the capacity. */
static int
add_span (EsSpan *spans, EsSpan3 *spans_3d, int capacity, int count, int dz, int dy, int x0, int x1)
{
  if (count < capacity && spans != NULL)
    spans[count] = (EsSpan){ dy, x0, x1 };
  if (count < capacity && spans_3d != NULL)
    spans_3d[count] = (EsSpan3){ dz, dy, x0, x1 };
  return count + 1;
}

/* The runs of nonzero cells of one footprint row as spans. */
static int
add_footprint_row (EsSpan *spans, EsSpan3 *spans_3d, int capacity, int count, int dz, int dy, const uint8_t *row,
                   int width)
{
  for (int x = 0; x < width; x++)
    if (row[x] && (x == 0 || !row[x - 1]))
      {
        int end = x;

        while (end + 1 < width && row[end + 1])
          end++;
        count = add_span (spans, spans_3d, capacity, count, dz, dy, x - width / 2, end - width / 2);
      }
  return count;
}

/* Every plane's rows' spans, in order of dz, dy, x0. */
static int
window_spans (const EsJob *job, EsSpan *spans, EsSpan3 *spans_3d, int capacity)
{
  const EsEntropyDefinition *d = &job->definition;
  int hd, hh, hw, count = 0;

  es_window_extent_3d (job, &hd, &hh, &hw);
  for (int dz = -hd; dz <= hd; dz++)
    for (int dy = -hh; dy <= hh; dy++)
      switch (d->shape)
        {
          case ES_SHAPE_DISK: {
            int half = isqrt (d->radius * d->radius - dy * dy);
            count = add_span (spans, spans_3d, capacity, count, dz, dy, -half, half);
            break;
          }
          case ES_SHAPE_BALL: {
            int q = d->radius * d->radius - dz * dz - dy * dy;
            if (q >= 0)
              count = add_span (spans, spans_3d, capacity, count, dz, dy, -isqrt (q), isqrt (q));
            break;
          }
          case ES_SHAPE_FOOTPRINT: {
            const EsFootprint *f = d->footprint;
            size_t row = (size_t) (dz + hd) * (size_t) f->height + (size_t) (dy + hh);

            count = add_footprint_row (spans, spans_3d, capacity, count, dz, dy, f->cells + row * (size_t) f->width,
                                       f->width);
            break;
          }
        default: count = add_span (spans, spans_3d, capacity, count, dz, dy, -hw, hw); break;
        }
  return count;
}

int
es_window_spans (const EsJob *job, EsSpan *spans, int capacity)
{
  return window_spans (job, spans, NULL, capacity);
}

int
es_window_spans_3d (const EsJob *job, EsSpan3 *spans, int capacity)
{
  return window_spans (job, NULL, spans, capacity);
}

int
es_window_pixels (const EsJob *job)
{
  const EsEntropyDefinition *d = &job->definition;
  int pixels = 0;

  switch (d->shape)
    {
    case ES_SHAPE_RECT: return d->height * d->width;
    case ES_SHAPE_DISK:
      for (int dy = -d->radius; dy <= d->radius; dy++)
        pixels += 2 * isqrt (d->radius * d->radius - dy * dy) + 1;
      return pixels;
    case ES_SHAPE_FOOTPRINT:
      for (size_t i = 0; i < (size_t) d->footprint->width * (size_t) d->footprint->height
                               * (size_t) (d->footprint->planes > 1 ? d->footprint->planes : 1);
           i++)
        pixels += d->footprint->cells[i] != 0;
      return pixels;
    case ES_SHAPE_BOX: return d->planes * d->height * d->width;
    case ES_SHAPE_BALL:
      for (int dz = -d->radius; dz <= d->radius; dz++)
        for (int dy = -d->radius; dy <= d->radius; dy++)
          if (dz * dz + dy * dy <= d->radius * d->radius)
            pixels += 2 * isqrt (d->radius * d->radius - dz * dz - dy * dy) + 1;
      return pixels;
    default: return job->window * job->window;
    }
}
