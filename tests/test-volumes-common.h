/* SPDX-License-Identifier: MIT */
/* What the volume tests (CPU and CUDA) share: random numbers, random volumes, masks and 3-D windows, and the
 * comparison with the float64 reference. */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "es-definitions.h"
#include "es-engine.h"
#include "es-reference.h"
#include "tap.h"

#define ENTROPY_TOLERANCE 1e-5

static unsigned long long rng;

static inline int
random_int (int lo, int hi)
{
  return tap_random_int (&rng, lo, hi);
}

static inline int
random_odd (int lo, int hi)
{
  return 2 * random_int (lo / 2, (hi - 1) / 2) + 1;
}

/* A random volume; about one value in three repeats its left neighbour,
 * and narrow ones use 8 values at most, so that windows hold runs and
 * single bins. */
static inline bool
make_volume (EsImage *volume, int width, int height, int planes, EsFormat format, int depth)
{
  uint32_t max = (1u << depth) - 1;
  uint32_t spread = random_int (0, 1) ? max : (max < 7 ? max : 7);
  uint32_t base = (uint32_t) random_int (0, (int) (max - spread));

  if (!es_image_alloc_volume (volume, width, height, planes, format, depth, NULL))
    return false;
  for (int z = 0; z < planes; z++)
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++)
        {
          void *row = es_image_voxel_row (volume, z, y);
          uint32_t v = base + (uint32_t) (tap_random (&rng) % (spread + 1));

          if (x > 0 && random_int (0, 2) == 0)
            v = format == ES_FORMAT_U16 ? ((uint16_t *) row)[x - 1] : ((uint8_t *) row)[x - 1];
          if (format == ES_FORMAT_U16)
            ((uint16_t *) row)[x] = (uint16_t) v;
          else
            ((uint8_t *) row)[x] = (uint8_t) v;
        }
  return true;
}

/* Mostly in, with holes and one fully masked plane row. */
static inline bool
make_mask (EsImage *mask, int width, int height, int planes)
{
  if (!es_image_alloc_volume (mask, width, height, planes, ES_FORMAT_U8, 8, NULL))
    return false;
  for (int z = 0; z < planes; z++)
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++)
        ((uint8_t *) es_image_voxel_row (mask, z, y))[x] = (uint8_t) (random_int (0, 3) != 0 && y % 7 != 3);
  return true;
}

static inline size_t
voxels (const EsImage *image)
{
  return (size_t) image->width * (size_t) image->height * (size_t) es_image_planes (image);
}

/* The largest difference of out (F32, a volume) from expected; NaN where
 * exactly one of them is NaN. */
static inline double
max_difference (const EsImage *out, const double *expected)
{
  double worst = 0.0;
  size_t i = 0;

  for (int z = 0; z < es_image_planes (out); z++)
    for (int y = 0; y < out->height; y++)
      for (int x = 0; x < out->width; x++, i++)
        {
          double got = ((const float *) es_image_voxel_row (out, z, y))[x];

          if (isnan (got) != isnan (expected[i]))
            return NAN;
          if (!isnan (got) && fabs (got - expected[i]) > worst)
            worst = fabs (got - expected[i]);
        }
  return worst;
}

/* Whether out, job's result on volume, equals the float64 reference within
 * ENTROPY_TOLERANCE; a diagnostic names `what` where not, and *worst rises
 * to the largest difference where so. */
static inline bool
equals_reference (const EsImage *out, const EsJob *job, const EsImage *volume, const char *what, double *worst)
{
  double *expected = malloc (voxels (volume) * sizeof *expected);
  double diff = NAN;

  if (expected != NULL)
    {
      es_reference_entropy_volume (volume, job->levels, job->window, &job->definition, expected);
      diff = max_difference (out, expected);
    }
  free (expected);
  if (!(diff <= ENTROPY_TOLERANCE))
    {
      tap_diag ("%s: off by %g", what, diff);
      return false;
    }
  if (diff > *worst)
    *worst = diff;
  return true;
}

/* A random 3-D window, at times larger than the volume in every direction.
 * large adds balls up to radius 6 and boxes up to 15×13×15: windows past
 * 961 cells (the CUDA kernels' wide sums) and 255 (their 16-bit counts). */
static inline void
random_window (EsEntropyDefinition *d, EsFootprint *footprint, uint8_t *cells, bool large)
{
  const int pick = random_int (0, large ? 3 : 2);

  if (pick == 0)
    {
      d->shape = ES_SHAPE_BOX;
      d->planes = random_odd (1, 11), d->height = random_odd (1, 9), d->width = random_odd (1, 9);
    }
  else if (pick == 1)
    {
      d->shape = ES_SHAPE_BALL;
      d->radius = random_int (0, large ? 6 : 4);
    }
  else if (large && pick == 2)
    {
      d->shape = ES_SHAPE_BOX;
      d->planes = random_odd (9, 15), d->height = random_odd (9, 13), d->width = random_odd (11, 15);
    }
  else
    {
      d->shape = ES_SHAPE_FOOTPRINT;
      footprint->planes = random_odd (3, 5), footprint->height = random_odd (1, 5);
      footprint->width = random_odd (1, 7);
      for (int i = 0; i < footprint->planes * footprint->height * footprint->width; i++)
        cells[i] = random_int (0, 2) != 0;
      cells[footprint->planes * footprint->height * footprint->width / 2] = 1;
      footprint->cells = cells;
      d->footprint = footprint;
    }
}

/* One random entropy job on a random volume: sample format and depth,
 * window (random_window's, large as there), border value, levels, range,
 * unit and, one time in three, a mask; `what` describes it. The job points
 * into the case, which must outlive its runs. */
typedef struct {
  EsImage volume, mask;
  EsJob job;
  EsFootprint footprint;
  uint8_t cells[5 * 5 * 7];
  char what[200];
} RandomCase;

static inline bool
make_random_case (RandomCase *c, int width, int height, int planes, EsBorder border, EsBinning binning, bool large)
{
  const int kind = random_int (0, 3);
  const EsFormat format = kind <= 1 ? ES_FORMAT_U8 : ES_FORMAT_U16;
  const int depth = kind == 0 ? 8 : kind == 1 ? 5 : kind == 2 ? 16 : 12;
  EsEntropyDefinition *d = &c->job.definition;
  char definition[160];

  *c = (RandomCase){ .job = ES_JOB_INIT (ES_OP_ENTROPY) };
  if (!make_volume (&c->volume, width, height, planes, format, depth))
    return false;
  random_window (d, &c->footprint, c->cells, large);
  d->border = border;
  d->border_value = (uint32_t) random_int (0, (1 << depth) - 1);
  d->binning = binning;
  c->job.levels = (int[]){ 2, 16, 256, 300, 4096 }[random_int (0, 4)];
  d->range_lo = (uint32_t) random_int (0, (1 << depth) / 2);
  d->range_hi = d->range_lo + (uint32_t) random_int (0, (1 << depth) / 2 - 1);
  d->normalized = random_int (0, 2) == 0;
  if (random_int (0, 2) == 0 && make_mask (&c->mask, width, height, planes))
    d->mask = &c->mask;
  es_job_describe_definition (&c->job, "nats", definition, sizeof definition);
  snprintf (c->what, sizeof c->what, "%s %d bits %d×%d×%d %s", es_format_name (format), depth, width, height, planes,
            definition);
  return true;
}

/* A 3×5×19 footprint of n cells, a run in row order around its centre
 * (cell 142): windows of exactly n cells, at the edges of the kernels'
 * count widths. */
#define RUN_FOOTPRINT_CELLS (3 * 5 * 19)
static inline EsFootprint
run_footprint (uint8_t cells[RUN_FOOTPRINT_CELLS], int n)
{
  const int first = 142 - n / 2;

  for (int i = 0; i < RUN_FOOTPRINT_CELLS; i++)
    cells[i] = i >= first && i < first + n;
  return (EsFootprint){ .width = 19, .height = 5, .cells = cells, .planes = 3 };
}

static inline void
random_case_clear (RandomCase *c)
{
  es_image_clear (&c->mask);
  es_image_clear (&c->volume);
}
