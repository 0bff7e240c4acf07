/* SPDX-License-Identifier: MIT */
/* Internal to app/: PNG's five row filters undone in place, and unfiltered rows converted to the
 * image's gray samples, for es-png-inflate.c; a whole inflated image on every core. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-load.h"

/* Undoes a row's filter (type 0..4, checked by the caller) in place; prev
 * is the previous unfiltered row (zeros for the first). Nothing past
 * either row is read. */
void es_png_unfilter_row (uint8_t *row, const uint8_t *prev, size_t n, size_t bpp, uint8_t type);
/* One unfiltered row to gray: the first sample (gray, gray+alpha) or the
 * luma of the first three (RGB, RGBA), as es-png-read.c converts them. */
void es_png_convert_row (const uint8_t *src, int width, int channels, bool sixteen, void *out);

/* The inflated image: height rows of a filter byte and row_bytes bytes,
 * every filter byte already checked to be 0..4. */
typedef struct {
  uint8_t *raw;
  const uint8_t *zeros; /* the row above the first: row_bytes zero bytes */
  uint32_t width, height;
  size_t bpp, row_bytes;
  int channels;
  bool sixteen;
} EsPngFiltered;

/* Unfilters every row and converts it into out (allocated to the image's
 * size), telling watch (if any) of rows in increasing order, at least 32 at
 * a time and the last, from the calling thread. Large images go on every
 * OpenMP thread, each taking the next row, a row that depends on the one
 * above following it span by span (a wavefront). */
void es_png_unfilter_image (const EsPngFiltered *f, EsImage *out, EsRowWatch *watch);

/* Tests: images of at least min_bytes of filtered rows go parallel, in
 * spans of span_pixels; 0, 0 restores the defaults. */
void es_png_unfilter_set_parallel (size_t min_bytes, size_t span_pixels);
