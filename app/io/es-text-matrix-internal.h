/* SPDX-License-Identifier: MIT */
/* Internal to the text matrix decoder and its tests: how the work is split. */
#pragma once

#include "es-load.h"

typedef enum {
  ES_TEXT_SPLIT_AUTO,     /* in parallel when the input is large enough to pay */
  ES_TEXT_SPLIT_SERIAL,   /* one pass, line after line: the reference */
  ES_TEXT_SPLIT_PARALLEL, /* line starts found and rows parsed in parallel, whatever the size */
} EsTextSplit;

/* es_text_matrix_decode with the split forced; every split gives the same
 * image, or the same error with the same message. */
bool es_text_matrix_decode_split (const void *data, size_t size, int levels, EsTextSplit split, EsImage *image,
                                  EsError *error);

/* How much of a text matrix its decoder can need, found while it is read:
 * the header line, H row lines, and of what follows only the first byte of
 * one more non-blank line (the error "more than H rows" is at that line),
 * the first digit of a value past W in a row, of a third number on the
 * header line or of a number that overflows, or the first byte that no text
 * matrix holds (every error is at or before it). The decoder gives the same
 * verdict, message and image on that prefix as on the whole input, so
 * es_load_fd reads no further: an endless row or header from a pipe is
 * refused at its first value too many, holding no more than the matrix it
 * declares. */
typedef struct {
  int state;          /* before the header line, in it, in the rows */
  uint64_t height;    /* the header's first number (capped) */
  uint64_t width;     /* and its second (capped) */
  int header_numbers; /* numbers begun on the header line */
  uint64_t rows;      /* non-blank lines after the header so far */
  uint64_t values;    /* values begun on the current row line */
  bool in_number;     /* the last byte was a digit */
  bool line_blank;    /* the current line holds no digit yet */
} EsTextScan;

/* Feeds the next n bytes. Returns how many of them the decoder needs and
 * sets *done when it needs nothing after those; else returns n. */
size_t es_text_matrix_scan (void *scan, const uint8_t *bytes, size_t n, bool *done);
