/* SPDX-License-Identifier: MIT */
/* Slow, obviously-correct references for the compute tests, written straight
 * from DESIGN.md §1 and independently of compute/es-definitions.h (only the
 * definition's data type comes from compute/es-ops.h). */
#pragma once

#include <stdint.h>

#include "es-image.h"
#include "es-ops.h"

/* Sample (x, y) of a U8 or U16 image. */
uint32_t es_reference_sample (const EsImage *image, int x, int y);

/* Each function writes width × height values, row after row, with no gaps.
 * A levels image (image->levels != 0) already holds its levels, which also
 * stand for its 8-bit view. */
void es_reference_quantize (const EsImage *image, int levels, uint8_t *out);
/* Local entropy in nats over the clipped window, in double precision. */
void es_reference_entropy (const EsImage *image, int levels, int window, double *out);
/* cv::equalizeHist of the 8-bit view. */
void es_reference_equalize (const EsImage *image, uint8_t *out);
/* The 5-point sharpen of the 8-bit view, borders replicated. */
void es_reference_sharpen (const EsImage *image, float amount, uint8_t *out);
/* cv::createCLAHE (clip, tileGridSize (columns, rows)).apply () on the stored
 * samples (U8 or U16, 256 or 65536 bins). */
void es_reference_clahe (const EsImage *image, double clip, int columns, int rows, uint16_t *out);
/* round(v · 255 / maxval), halves up: the 8-bit view of DESIGN.md §1. */
uint32_t es_reference_view (uint32_t v, uint32_t maxval);
/* Local entropy under a definition, in nats (or normalized), double
 * precision, NaN where a pixel gets no value; window is the square's side.
 * Windows up to 255 cells a side. */
void es_reference_entropy_defined (const EsImage *image, int levels, int window, const EsEntropyDefinition *d,
                                   double *out);
/* The same over a volume (a 2-D image is one plane) and any window: a 2-D
 * one (at dz = 0), a box, a ball or a 3-D footprint; planes map through the
 * border mode as rows and columns do, the mask has the volume's planes.
 * Writes width × height × planes values, plane after plane. */
void es_reference_entropy_volume (const EsImage *volume, int levels, int window, const EsEntropyDefinition *d,
                                  double *out);
/* The number k of nonzero counts among count[0..n) when there are at least
 * two and all are equal (each of them in *each), else 0: the windows whose
 * H is exactly ln k. */
int es_reference_alike_bins (const int *count, int n, int *each);
