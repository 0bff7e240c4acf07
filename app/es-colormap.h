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

const char *es_colormap_name (EsColormap map); /* "viridis" */
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

/* The colour of a pixel with no value (NaN: masked out, or a float TIFF's
 * NaN, DESIGN.md §1). */
extern const uint8_t es_no_data_rgb[3];

/* Renders any image (U8, U16 or F32) to packed 8-bit RGB (3 bytes a pixel,
 * rgb_stride bytes a row) through the scale; NaN values, and the samples
 * that stand for NaN (es_image_meta_is_nan), in es_no_data_rgb. */
void es_render_heatmap (const EsImage *values, const EsColorScale *scale, uint8_t *rgb, size_t rgb_stride);
/* es_render_heatmap into one native 32-bit word a pixel, 0xFFRRGGBB (cairo's
 * RGB24 and ARGB32, opaque), stride bytes a row, on the calling thread
 * alone: the window's pixels, whose callers split the rows themselves. */
void es_render_heatmap_words (const EsImage *values, const EsColorScale *scale, uint32_t *words, size_t stride);
/* Whether the heatmap is gray whatever the pixels (the gray map, and no
 * NaN that would be no-data magenta): one 8-bit sample a pixel then says
 * it all, a third of the bytes for an export to filter and compress. */
bool es_heatmap_is_gray (const EsImage *values, const EsColorScale *scale);
/* The heatmap as indices into the map's table, stride bytes a row: the
 * colour es_render_heatmap gives a pixel is es_colormap_table (map)[index]
 * (NaN aside, which has no index), and for the gray map the index is the
 * gray level itself. */
void es_render_indices (const EsImage *values, const EsColorScale *scale, uint8_t *indices, size_t stride);
/* Whether any F32 value is NaN (a pixel with no value); false for integers. */
bool es_image_has_nan (const EsImage *image);
/* Minimum and maximum of an image (NaN-free by construction). */
void es_image_min_max (const EsImage *image, double *lo, double *hi);
