/* SPDX-License-Identifier: MIT */
/* Colormaps (viridis, magma, inferno, cividis, gray) and heatmap rendering. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "es-image.h"

typedef enum {
  ES_COLORMAP_VIRIDIS,
  ES_COLORMAP_MAGMA,
  ES_COLORMAP_INFERNO,
  ES_COLORMAP_CIVIDIS,
  ES_COLORMAP_GRAY,
  ES_N_COLORMAPS
} EsColormap;

const char *es_colormap_name (EsColormap map);           /* "viridis" */
/* Accepts "viridis" and the reversed form "viridis_r". */
bool es_colormap_from_name (const char *name, EsColormap *map, bool *reversed);
/* 256 RGB entries, index 0 = low. */
const uint8_t (*es_colormap_table (EsColormap map))[3];

/* How values become colours: value lo -> first entry, hi -> last, clamped. */
typedef struct {
  EsColormap map;
  bool reversed;
  double lo, hi;
} EsColorScale;

/* Renders any image (U8, U16 or F32) to packed 8-bit RGB (3 bytes a pixel,
 * rgb_stride bytes a row) through the scale. */
void es_render_heatmap (const EsImage *values, const EsColorScale *scale,
                        uint8_t *rgb, size_t rgb_stride);
/* Minimum and maximum of an image (NaN-free by construction). */
void es_image_min_max (const EsImage *image, double *lo, double *hi);
