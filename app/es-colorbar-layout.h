/* SPDX-License-Identifier: MIT */
/* Internal to app/: the layout of the labelled colorbar that an exported heatmap can carry on its right. */
#pragma once

#include <stdint.h>

#include "es-colormap.h"
#include "es-save.h"

#define ES_COLORBAR_LAYOUT_TICKS 5

/* The canvas: the heatmap at (margin, margin), unchanged, and to its right a
 * panel with the bar, its ticks, their labels and the units. Rows are drawn
 * on demand, so even a very tall export needs no canvas-sized buffer. */
typedef struct {
  int width, height; /* the whole canvas */
  int margin;
  int image_width, image_height;
  int scale; /* pixels per font pixel */
  int bar_x, bar_top, bar_height;
  int label_x, units_x, units_bottom;
  int n_ticks;
  int tick_y[ES_COLORBAR_LAYOUT_TICKS];
  char labels[ES_COLORBAR_LAYOUT_TICKS][32];
  char units[32];
  const uint8_t (*table)[3];
  uint8_t flip;  /* 255 when the map is reversed */
  uint8_t solid; /* hi <= lo: the bar shows the single colour of the image */
} EsColorbarLayout;

/* Lays the canvas out for an image of the given size. info may be NULL. */
void es_colorbar_layout_init (EsColorbarLayout *bar, int image_width, int image_height, const EsColorScale *scale,
                              const EsValueInfo *info);
/* Fills canvas row y (width * 3 bytes); image_row is the heatmap's RGB row
 * y - margin, or NULL above and below the image. */
void es_colorbar_layout_row (const EsColorbarLayout *bar, int y, const uint8_t *image_row, uint8_t *out);
