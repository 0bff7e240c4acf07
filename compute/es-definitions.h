/* SPDX-License-Identifier: MIT */
/* Exact definitions shared by every backend (DESIGN.md §1): one place each.
 * The inline helpers compile for CUDA devices too. */
#pragma once

#include <stdint.h>
#include <math.h>

#include "es-ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define ES_DEFINITION_FN static inline __host__ __device__
#else
#define ES_DEFINITION_FN static inline
#endif

/* level = floor(v * L / 2^depth); v * L fits in 32 bits for v < 2^16, L ≤ 2^16. */
ES_DEFINITION_FN uint32_t
es_quantize_sample (uint32_t v, int levels, int depth)
{
  return (v * (uint32_t) levels) >> depth;
}

/* ---- binning -----------------------------------------------------------------
 * How one sample becomes a bin, prepared once per job and input by
 * es_binner_init. A levels image (EsImage.levels != 0) is already binned:
 * bin = v, B = its levels, whatever the mode. */
typedef struct {
  EsBinning mode;    /* never ES_BINNING_MINMAX after es_binner_init */
  uint32_t levels;   /* L */
  uint32_t depth;    /* bits of a sample */
  uint32_t maxval;   /* es_image_maxval, for byte binning */
  uint32_t lo, span; /* range: LO and HI − LO + 1 */
  uint32_t bins;     /* B: the number of possible bins, bins < B */
  bool identity;     /* a levels image: bin = v */
} EsBinner;

/* The bin of sample v (0..2^depth − 1); always < binner->bins. */
ES_DEFINITION_FN uint32_t
es_bin_sample (const EsBinner *binner, uint32_t v)
{
  uint64_t scaled;

  if (binner->identity)
    return v;
  switch (binner->mode)
    {
    case ES_BINNING_DEPTH: return es_quantize_sample (v, (int) binner->levels, (int) binner->depth);
    case ES_BINNING_EXACT: return v;
    case ES_BINNING_BYTE: return ((uint32_t) es_sample_to_u8_max (v, binner->maxval) * binner->levels) >> 8;
    default: /* ES_BINNING_RANGE */
      if (v <= binner->lo)
        return 0;
      scaled = (uint64_t) (v - binner->lo) * binner->levels / binner->span;
      return scaled < binner->levels ? (uint32_t) scaled : binner->levels - 1;
    }
}

/* Fills the binner of a valid entropy job on `in`. Minmax binning reads the
 * whole image for its min and max here, unless the engine's gate already
 * turned it into range binning (es_job_resolve_minmax), as it does for every
 * job it runs. */
void es_binner_init (EsBinner *binner, const EsJob *job, const EsImage *in);
/* The bin of a constant border: the border value binned like any sample. */
uint32_t es_binner_border_bin (const EsBinner *binner, const EsJob *job);

/* ---- borders -----------------------------------------------------------------
 * The in-image index that stands for index i of a row or column of n pixels:
 * symmetric, mirror and replicate as their patterns on `a b c d` (es-ops.h),
 * periodic for windows wider than the image; -1 outside the image for clip
 * and constant, which the callers handle (skip, or count the constant's bin). */
ES_DEFINITION_FN int
es_border_index (int i, int n, EsBorder border)
{
  int period;

  if (i >= 0 && i < n)
    return i;
  switch (border)
    {
    case ES_BORDER_SYMMETRIC:
      period = 2 * n;
      i %= period;
      if (i < 0)
        i += period;
      return i < n ? i : period - 1 - i;
    case ES_BORDER_MIRROR:
      if (n == 1)
        return 0;
      period = 2 * n - 2;
      i %= period;
      if (i < 0)
        i += period;
      return i < n ? i : period - i;
    case ES_BORDER_REPLICATE: return i < 0 ? 0 : n - 1;
    default: /* clip, constant */ return -1;
    }
}

/* ---- window shapes -----------------------------------------------------------
 * A window as row spans: the cells (dx, dy), relative to the centre pixel,
 * with x0 ≤ dx ≤ x1 on row dy. Spans come sorted by dy, then x0, and never
 * overlap. */
typedef struct {
  int dy, x0, x1;
} EsSpan;

/* The window's half height and half width (the halo is the half height);
 * of a 3-D window, those of its planes. */
void es_window_extent (const EsJob *job, int *half_height, int *half_width);
/* Writes up to `capacity` spans and returns how many the window has (more
 * than capacity: call again with room for that many). Square, rectangle,
 * disk (x² + y² ≤ r², exactly scikit-image's morphology.disk) or footprint.
 * 2-D windows only: a 3-D window has es_window_spans_3d. */
int es_window_spans (const EsJob *job, EsSpan *spans, int capacity);
/* Cells in the window: n away from borders and masks (of every plane of a
 * 3-D window). */
int es_window_pixels (const EsJob *job);

/* A 3-D window as spans along x: cells (dx, dy, dz) with x0 ≤ dx ≤ x1 on
 * row dy of plane dz, sorted by dz, dy, then x0, never overlapping. A 2-D
 * window is the case dz = 0. */
typedef struct {
  int dz, dy, x0, x1;
} EsSpan3;

/* The half depth (the plane halo: 0 for a 2-D window), half height and
 * half width. */
void es_window_extent_3d (const EsJob *job, int *half_depth, int *half_height, int *half_width);
/* As es_window_spans, for any window: box, ball (z² + y² + x² ≤ r², exactly
 * scikit-image's morphology.ball), 3-D footprint, or a 2-D window at dz = 0. */
int es_window_spans_3d (const EsJob *job, EsSpan3 *spans, int capacity);

/* ---- entropy values ------------------------------------------------------------ */

/* Below this, a computed entropy of a window of n counted pixels is exactly 0:
 * half the smallest nonzero value, ((n − 1)·ln(n / (n − 1)) + ln n) / n (one
 * pixel of another bin), which is > 9e-5 for n ≤ 255². Writing such results
 * as 0 makes a single-bin window exact rather than rounding noise that an
 * automatic colour range would stretch into patterns. */
ES_DEFINITION_FN double
es_entropy_zero_below (int n)
{
  double m = (double) n;

  if (n <= 1)
    return 1.0; /* one pixel: H is 0 */
  return 0.5 * ((m - 1.0) * log (m / (m - 1.0)) + log (m)) / m;
}

/* log2(e): bits a nat. */
#define ES_BITS_PER_NAT 1.4426950408889634

/* What H in nats is multiplied by as a kernel stores it: ES_BITS_PER_NAT
 * for bits, 1 for nats and for normalized values (which have a divisor of
 * their own). Scaling in the store spares every definition a second pass
 * over its output. */
ES_DEFINITION_FN double
es_entropy_unit_scale (const EsEntropyDefinition *d)
{
  return d->bits && !d->normalized ? ES_BITS_PER_NAT : 1.0;
}

/* The float32 a kernel stores for H (nats, float64) in the unit of
 * unit_scale: H rounded to float32, then scaled in float64 and rounded
 * again, so that a value in bits is bit for bit the nats result scaled as
 * exports and the window scale it (es_pipeline's unit_scale); with a
 * scale of 1, (float) H. */
ES_DEFINITION_FN float
es_entropy_store (double h, double unit_scale)
{
  return (float) ((double) (float) h * unit_scale);
}

/* The value a pixel gets from H (nats, float64) over n counted pixels and B
 * possible bins: 0 below the threshold, H / ln(min(B, n)) when normalized
 * (0 when that minimum is 1), H · unit_scale (es_entropy_unit_scale)
 * otherwise. n == 0: no value (NaN). */
ES_DEFINITION_FN double
es_entropy_value (double h, int n, uint32_t bins, bool normalized, double unit_scale)
{
  uint32_t most;

  if (n == 0)
    return NAN;
  if (h < es_entropy_zero_below (n))
    return 0.0;
  if (!normalized)
    return h * unit_scale;
  most = bins < (uint32_t) n ? bins : (uint32_t) n;
  return most <= 1 ? 0.0 : h / log ((double) most);
}

/* Kept for the default definition's fast kernels (n ≤ 31²), where
 * es_entropy_zero_below (n) ≥ 4e-3 > this. */
#define ES_ENTROPY_ZERO_BELOW 1e-3

/* ---- equalize and sharpen ------------------------------------------------------ */

/* The equalization LUT of cv::equalizeHist from a 256-bin histogram of n
 * pixels. Returns 0 when the image has a single value (then it is returned
 * unchanged: the LUT is the identity), 1 otherwise. Float32 arithmetic with
 * round-half-even, exactly as OpenCV does it; the CUDA kernels that build the
 * LUT on the device mirror this function. */
int es_equalize_lut (const uint64_t hist[256], uint64_t n, uint8_t lut[256]);

/* One sharpened sample: sat_u8(round_half_even(c + a * (4c - N - S - E - W))),
 * evaluated as float(c) + a * float(laplacian) with two roundings (no FMA), so
 * that every backend gets the same bits. */
static inline uint8_t
es_sharpen_sample (int c, int laplacian, float amount)
{
  float product = amount * (float) laplacian;
  float value = (float) c + product;
  float r = rintf (value); /* round half to even in the default FP mode */
  return (uint8_t) (r < 0.0f ? 0.0f : r > 255.0f ? 255.0f : r);
}

/* ---- CLAHE (OpenCV's CLAHE_Impl::apply) --------------------------------------- */

/* The tiles of a width × height image under a job's grid. When either side
 * is not a multiple of its tile count, OpenCV pads both sides at the right
 * and bottom by `tiles − side % tiles` (a full tile count on a side that
 * divides evenly) with reflect-101 (es_border_index's mirror) for the
 * histograms; the tiles divide the padded image, and the blend places the
 * unpadded pixels on the same tiles. */
typedef struct {
  int padded_width, padded_height;
  int tile_width, tile_height;
} EsClaheGeometry;

ES_DEFINITION_FN void
es_clahe_geometry (const EsJob *job, int width, int height, EsClaheGeometry *g)
{
  int columns = job->tile_columns, rows = job->tile_rows;

  g->padded_width = width, g->padded_height = height;
  if (width % columns != 0 || height % rows != 0)
    {
      g->padded_width = width + columns - width % columns;
      g->padded_height = height + rows - height % rows;
    }
  g->tile_width = g->padded_width / columns;
  g->tile_height = g->padded_height / rows;
}

/* A bin's largest count in a tile of `tile_pixels`: (int) (clip · pixels /
 * bins) in double, at least 1; 0 (no clipping) for a clip of 0. */
ES_DEFINITION_FN int
es_clahe_clip_count (double clip, int tile_pixels, int bins)
{
  int count;

  if (!(clip > 0.0))
    return 0;
  count = (int) (clip * tile_pixels / bins);
  return count > 1 ? count : 1;
}

/* OpenCV's saturate_cast from float: round half to even, then clamp. */
ES_DEFINITION_FN uint8_t
es_saturate_u8 (float value)
{
  float r = rintf (value);
  return (uint8_t) (r < 0.0f ? 0.0f : r > 255.0f ? 255.0f : r);
}

ES_DEFINITION_FN uint16_t
es_saturate_u16 (float value)
{
  float r = rintf (value);
  return (uint16_t) (r < 0.0f ? 0.0f : r > 65535.0f ? 65535.0f : r);
}

#ifdef __cplusplus
}
#endif
