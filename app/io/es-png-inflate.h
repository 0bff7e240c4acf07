/* SPDX-License-Identifier: MIT */
/* Internal to app/: the fast PNG path for the common layouts (our unfiltering; libdeflate or zlib inflating). */
#pragma once

#include "es-image.h"
#include "es-load.h"
#include "es-reader.h"

/* Whether the input (the reader at its start, nothing consumed) is a PNG
 * the fast path takes: 8- or 16-bit gray, gray+alpha, RGB or RGBA, not
 * interlaced. Others (palettes, 1/2/4-bit, interlaced) stay with libpng. */
bool es_png_inflate_takes (EsReader *reader);
/* Decodes it exactly as es-png-read.c would, with the same messages (without
 * the "PNG: " prefix); a watch hears of rows as they complete (es-load.h).
 * Built with libdeflate, the whole IDAT stream is inflated at once (on
 * several threads where that pays, else by libdeflate at twice zlib's
 * speed), then unfiltered on every core; without it, zlib inflates the
 * stream as it is read and rows complete all along. */
bool es_png_inflate_decode (EsReader *reader, EsImage *image, EsRowWatch *watch, EsError *error);
/* Tests: inflate with zlib as it reads, also where libdeflate is built in. */
void es_png_inflate_force_streamed (bool streamed);
