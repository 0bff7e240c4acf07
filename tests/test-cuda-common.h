/* SPDX-License-Identifier: MIT */
/* What the CUDA entropy tests share: random numbers, images of awkward strides with flat and blocky
 * patches, and the comparison with the float64 reference. */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "es-image.h"
#include "tap.h"

#define TOLERANCE 1e-5

static unsigned long long rng;

static inline int
random_int (int lo, int hi)
{
  return tap_random_int (&rng, lo, hi);
}

static inline int
random_odd (int lo, int hi)
{
  return lo + 2 * random_int (0, (hi - lo) / 2);
}

typedef struct {
  const char *name;
  EsFormat format;
  int depth;
  bool levels; /* a levels image: its samples are bins already */
} Kind;

/* Samples below `top` in patches of patch_w × patch_h: a quarter of them
 * flat (single-bin windows), a quarter blocky over three values (few bins),
 * the rest random; rows with spare bytes at their end. */
static inline bool
make_image (EsImage *image, int width, int height, const Kind *kind, uint32_t top, int patch_w, int patch_h)
{
  const size_t sample = kind->format == ES_FORMAT_U16 ? 2 : 1;
  const uint32_t flat = (uint32_t) random_int (0, (int) top - 1);

  *image = (EsImage){ 0 };
  image->width = width;
  image->height = height;
  image->format = kind->format;
  image->depth = kind->depth;
  image->levels = kind->levels ? (int) top : 0;
  image->stride = (size_t) width * sample + sample * (size_t) random_int (0, 3);
  image->pixels = malloc (image->stride * (size_t) height);
  if (image->pixels == NULL)
    return false;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        const int patch = (x / patch_w + y / patch_h) % 4;
        uint32_t v = patch == 0   ? flat
                     : patch == 1 ? (uint32_t) ((x / 7 + y / 5) % 3) * (top / 3)
                                  : (uint32_t) random_int (0, (int) top - 1);
        if (kind->format == ES_FORMAT_U16)
          ((uint16_t *) es_image_row (image, y))[x] = (uint16_t) v;
        else
          ((uint8_t *) es_image_row (image, y))[x] = (uint8_t) v;
      }
  return true;
}

/* The largest difference from the reference: infinite where NaN is not
 * exactly where the reference has it, or, with exact_zero, where a window
 * of one bin (reference 0) is not exactly 0 (DESIGN.md §1). detail names
 * the worst pixel. */
static inline double
reference_error (const EsImage *out, const double *ref, bool exact_zero, char *detail, size_t size)
{
  double worst = 0;

  for (int y = 0; y < out->height; y++)
    for (int x = 0; x < out->width; x++)
      {
        const double r = ref[(size_t) y * out->width + x];
        const float v = ((const float *) es_image_row (out, y))[x];
        const double e = isnan (r) != isnan (v) || (exact_zero && r == 0 && v != 0.0f) ? INFINITY
                         : isnan (r)                                                   ? 0
                                                                                       : fabs (v - r);
        if (e > worst)
          {
            worst = e;
            snprintf (detail, size, "at (%d, %d): %.7g, reference %.7g", x, y, v, r);
          }
      }
  return worst;
}
