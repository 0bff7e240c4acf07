/* SPDX-License-Identifier: MIT */
/* Internal to app/: the decoders that stream from a bounded reader, and how the loader recognises a format. */
#pragma once

#include "es-load.h"
#include "es-reader.h"

/* PNG and PGM decode as they read: they hold the image and one row (PNG) or
 * one buffer (PGM), never the file. The text matrix parser needs its whole
 * text and takes memory (es_text_matrix_decode). */
bool es_png_decode_reader (EsReader *reader, EsImage *image, EsError *error);
bool es_pgm_decode_reader (EsReader *reader, EsImage *image, EsError *error);

typedef enum {
  ES_INPUT_NEED_MORE,    /* the bytes given do not decide yet */
  ES_INPUT_EMPTY,
  ES_INPUT_PNG,
  ES_INPUT_PGM,
  ES_INPUT_TEXT_MATRIX,
  ES_INPUT_UNSUPPORTED,  /* a known image format that this program does not read */
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
