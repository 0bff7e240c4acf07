/* SPDX-License-Identifier: MIT */
/* Internal to app/: the fast PNG path (libdeflate, built when ES_HAVE_LIBDEFLATE) for the common layouts. */
#pragma once

#include "es-image.h"
#include "es-reader.h"

/* Whether the input (the reader at its start, nothing consumed) is a PNG
 * the fast path takes: 8- or 16-bit gray, gray+alpha, RGB or RGBA, not
 * interlaced. Others (palettes, 1/2/4-bit, interlaced) stay with libpng. */
bool es_png_inflate_takes (EsReader *reader);
/* Decodes it exactly as es-png-read.c would: the whole IDAT stream is
 * inflated at once (holding it and the filtered rows besides the image),
 * then unfiltered row by row. Messages come without the "PNG: " prefix. */
bool es_png_inflate_decode (EsReader *reader, EsImage *image, EsError *error);
