/* SPDX-License-Identifier: MIT */
/* Internal to app/: JPEG decoding to gray through libjpeg-turbo (built when ES_HAVE_JPEG). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-image.h"
#include "es-load.h"
#include "es-reader.h"

/* Decodes a baseline, extended, progressive or arithmetic-coded 8-bit JPEG
 * (gray, YCbCr/RGB, CMYK or YCCK) to U8 gray by DESIGN.md §1, turned
 * upright by its EXIF orientation. Reads only as far as the EOI marker. */
bool es_jpeg_decode_reader (EsReader *reader, EsImage *image, EsSampleRule rule, EsError *error);
bool es_jpeg_decode (const void *data, size_t size, EsImage *image, EsError *error);

/* The EXIF orientation (1..8) that an APP1 marker's payload (after its
 * length) gives; 1 for a payload that is not EXIF, has no orientation or
 * holds a malformed one. Never reads outside payload[0, size). */
int es_jpeg_exif_orientation (const uint8_t *payload, size_t size);
