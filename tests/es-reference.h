/* SPDX-License-Identifier: MIT */
/* Slow, obviously-correct references for the compute tests, written straight
 * from DESIGN.md §1 and independently of compute/es-ops.h. */
#pragma once

#include <stdint.h>

#include "es-image.h"

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
