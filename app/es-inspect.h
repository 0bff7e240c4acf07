/* SPDX-License-Identifier: MIT */
/* Inspection without a display: values along a line, statistics and a histogram of a
 * rectangle, the bin counts of an entropy window, and their CSV tables. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-csv.h"
#include "es-image.h"
#include "es-ops.h"

/* What is inspected: an image's samples as they are or, with levels > 0,
 * their quantization levels (DESIGN.md §1; a text matrix's samples already
 * are levels), as offset + sample × scale (1/ln 2 shows nats as bits; a
 * float TIFF's samples stand for offset + sample × its step; scale 0
 * means 1). */
typedef struct {
  const char *name; /* the CSV column or row: "gray", "level", "entropy (nats)" */
  const EsImage *image;
  int levels;
  double scale;
  double offset;
} EsChannel;

/* NaN where the pixel has no value: a NaN F32 value, or a sample that
 * stands for a float TIFF's NaN (es_image_meta_is_nan) in a channel of
 * samples, not levels. */
double es_channel_value (const EsChannel *channel, int x, int y);
/* The channel of an image's values as the file stored them: its samples
 * through its value map (EsImageMeta), named "value" when they were
 * floats or signed integers, else "gray". */
EsChannel es_channel_of_values (const EsImage *image);

typedef struct {
  int x, y;
} EsPixel;

/* The pixels of the digital line from (x0, y0) to (x1, y1), both ends
 * included, one for each step along the longer axis (Bresenham):
 * max(|dx|, |dy|) + 1 of them, the count returned. pixels may be NULL. */
size_t es_line_pixels (int x0, int y0, int x1, int y1, EsPixel *pixels);

/* A line profile: every channel's value at each pixel of the line. */
typedef struct {
  size_t n;
  EsPixel *pixels;
  double *distance; /* from the first pixel, in distance_unit */
  /* The unit of distances: the first channel's image's pixel size
   * (EsImageMeta), "µm", "mm"…, or "px" when it has none. */
  const char *distance_unit;
  int n_channels;
  double *values; /* channel c at pixel i: values[c * n + i] */
} EsProfile;

/* The channels must share one size and both ends lie in it. */
bool es_profile_sample (EsProfile *profile, const EsChannel *channels, int n_channels, int x0, int y0, int x1, int y1,
                        EsError *error);
void es_profile_clear (EsProfile *profile);
/* "index,x,y,distance,<channel names…>" then one record per pixel; a
 * calibrated profile's column is "distance (µm)". */
void es_profile_csv (const EsProfile *profile, const EsChannel *channels, EsCsv *csv);

typedef struct {
  int x, y, width, height;
} EsRect;

/* The pixels between two corner pixels, both included, in any order. */
EsRect es_rect_from_corners (int x0, int y0, int x1, int y1);
/* Clips to a width×height image; false when nothing is left. */
bool es_rect_clip (EsRect *rect, int width, int height);

typedef struct {
  uint64_t n;
  double mean;
  double stddev; /* sample standard deviation (n − 1, as Fiji's); 0 for n < 2 */
  double min, max;
  uint64_t nan; /* the values skipped because they are NaN */
} EsStats;

/* Over the rectangle clipped to the image, skipping values that are NaN
 * (no data: masked out, or a float TIFF's NaN) and counting them, as
 * NumPy's nanmean and nanstd (ddof=1) skip them; n 0 when nothing is left. */
void es_roi_stats (const EsChannel *channel, EsRect rect, EsStats *stats);
/* n_bins equal bins over lo..hi (hi in the last bin; values outside go to
 * the end bins), counted over the clipped rectangle. */
void es_roi_histogram (const EsChannel *channel, EsRect rect, double lo, double hi, uint64_t *bins, int n_bins);
/* "channel,x,y,width,height,n,mean,stddev,min,max", one record per channel;
 * when a channel skipped NaN values, then "nan" too, their count; when the
 * first channel's image is calibrated, then "area (µm²)", the rectangle's
 * area in its unit. */
void es_roi_csv (const EsChannel *channels, const EsStats *stats, int n_channels, EsRect rect, EsCsv *csv);

/* ---- The entropy window of one pixel ------------------------------------------
 * What the entropy kernel counts at a pixel under a job's full definition
 * (DESIGN.md §1): the window's shape, the border mode, the binning, the mask
 * and the units, all through compute/es-definitions.h, so that the counts
 * give exactly the value es_run writes there. */

typedef enum {
  ES_CELL_NONE,    /* not in the window's shape */
  ES_CELL_COUNTED, /* an in-image pixel, counted */
  ES_CELL_BORDER,  /* outside the image, counted as the border mode says: a mapped pixel or the constant */
  ES_CELL_OUTSIDE, /* outside the image with clip: not counted */
  ES_CELL_MASKED,  /* masked out (for a mapped cell, the mapped pixel's mask): not counted */
} EsCellState;

typedef struct {
  uint32_t bin; /* COUNTED, BORDER and MASKED cells */
  EsCellState state;
} EsWindowCell;

typedef struct {
  uint32_t bin, count;
  uint32_t lo, hi; /* the sample values that fall in the bin */
} EsBinCount;

typedef struct {
  int x, y, z; /* the pixel, and its plane in a volume */
  int half_width, half_height;
  int half_depth; /* 0 for a 2-D window; a 3-D window's planes above and below */
  /* (2·half_depth + 1) planes of (2·half_width + 1) × (2·half_height + 1)
   * cells, row-major, the pixel at the centre */
  EsWindowCell *cells;
  uint32_t n;    /* cells counted */
  uint32_t bins; /* B: the number of possible bins */
  size_t n_used;
  EsBinCount *used; /* the non-empty bins, by bin */
  bool masked;      /* the pixel itself is masked out: no value */
  bool normalized;
  double entropy; /* H = −Σ (c/n) ln (c/n), nats, in double */
  double divisor; /* normalized: ln(min(B, n)); 0 when that minimum is 1; else 1 */
  double value;   /* what es_run writes there: nats or normalized; NaN: no data */
} EsWindowCounts;

/* Counts the window of (x, y) under an entropy job on a U8/U16 image (a
 * minmax job reads the whole image for its range). false, and an error, for
 * an invalid job, a mask of another size or a pixel outside. Clear with
 * es_window_counts_clear, also after a failure. */
bool es_window_counts (const EsJob *job, const EsImage *image, int x, int y, EsWindowCounts *counts, EsError *error);
/* The same at voxel (x, y, z) of a volume (or plane 0 of a 2-D image): a
 * 3-D window counts the cells of its planes, those beyond the volume's
 * first or last plane as the border mode says, as es_run does; a 2-D
 * window counts plane z alone. A 3-D mask must have the volume's planes. */
bool es_window_counts_voxel (const EsJob *job, const EsImage *image, int x, int y, int z, EsWindowCounts *counts,
                             EsError *error);
void es_window_counts_clear (EsWindowCounts *counts);
/* Cell (dx, dy) of the window, relative to the pixel; ES_CELL_NONE beyond it. */
EsWindowCell es_window_counts_cell (const EsWindowCounts *counts, int dx, int dy);
/* Cell (dx, dy, dz) of a 3-D window; dz 0 is the pixel's own plane. */
EsWindowCell es_window_counts_cell_3d (const EsWindowCounts *counts, int dx, int dy, int dz);
/* The bin that a valid entropy job's definition gives the sample at (x, y),
 * inside the image; false for an invalid job. */
bool es_pixel_bin (const EsJob *job, const EsImage *image, int x, int y, uint32_t *bin);
