/* SPDX-License-Identifier: MIT */
/* Internal to app/: the decoders that stream from a bounded reader, and how the loader recognises a format. */
#pragma once

#include <math.h>

#include "es-load.h"
#include "es-reader.h"

/* BT.709 luma of stored values, rounded half away from zero (DESIGN.md §1),
 * for every decoder; the sum is formed in double, in this fixed order. */
static inline long
es_luma (double r, double g, double b)
{
  return lround (0.2126 * r + 0.7152 * g + 0.0722 * b);
}

/* The same for integer samples (up to 16 bits), in integers: n = 2126 R +
 * 7152 G + 722 B is exact, and the double sum lies within 1e-10 of
 * n / 10000, so both round to the same integer unless n / 10000 is a tie
 * (n % 10000 == 5000), which es_luma decides. */
static inline uint32_t
es_luma_int (uint32_t r, uint32_t g, uint32_t b)
{
  uint32_t n = 2126u * r + 7152u * g + 722u * b + 5000u;
  uint32_t q = n / 10000u;

  return n - q * 10000u != 0 ? q : (uint32_t) es_luma (r, g, b);
}

/* The colour of a cell (ES_SAMPLES_CELLS): its largest channel, nonzero
 * exactly when one of them is, so that (0, 0, 1) is in. */
static inline uint32_t
es_cell_of_rgb (uint32_t r, uint32_t g, uint32_t b)
{
  uint32_t v = r > g ? r : g;
  return v > b ? v : b;
}

/* Whether a float sample of a cell is in: nonzero and not NaN. */
static inline bool
es_cell_in (float v)
{
  return v != 0.0f && !isnan (v);
}

/* PNG and PGM decode as they read: they hold the image and one row (PNG) or
 * one buffer (PGM), never the file. The text matrix parser needs its whole
 * text and takes memory (es_text_matrix_decode). */
bool es_png_decode_reader (EsReader *reader, EsImage *image, EsRowWatch *watch, EsSampleRule rule, EsError *error);
bool es_pgm_decode_reader (EsReader *reader, EsImage *image, EsError *error);

typedef enum {
  ES_INPUT_NEED_MORE, /* the bytes given do not decide yet */
  ES_INPUT_EMPTY,
  ES_INPUT_PNG,
  ES_INPUT_PGM,
  ES_INPUT_TEXT_MATRIX,
  ES_INPUT_TIFF,        /* classic or BigTIFF, either byte order (read when built with libtiff) */
  ES_INPUT_JPEG,        /* SOI and a marker (read when built with libjpeg-turbo) */
  ES_INPUT_UNSUPPORTED, /* a known image format that this program does not read */
  ES_INPUT_UNKNOWN,
} EsInputKind;

/* At most this many first bytes decide (the text matrix allows blank lines
 * before its "H W" line, up to this far). */
#define ES_SNIFF_MAX ES_READER_BUFFER

/* Recognises the input from its first `size` bytes (complete: they are the
 * whole input). Magic numbers need the first 32 bytes; only a text matrix
 * behind blank lines may need more, up to ES_SNIFF_MAX. For
 * ES_INPUT_UNSUPPORTED, *name is the format's name ("JPEG"). */
EsInputKind es_load_sniff (const uint8_t *head, size_t size, bool complete, const char **name);
