/* SPDX-License-Identifier: MIT */
/* CSV text (RFC 4180 quoting, one record a line) built in memory and written atomically. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "es-error.h"

typedef struct {
  char *text; /* NUL-terminated; NULL while empty */
  size_t length, capacity;
  bool in_row; /* a field was added to the current record */
  bool failed; /* out of memory: the text is incomplete */
} EsCsv;

void es_csv_init (EsCsv *csv);
void es_csv_clear (EsCsv *csv);
/* A text field, quoted when it holds a comma, a quote, a line break or
 * leading or trailing spaces (quotes doubled). */
void es_csv_text (EsCsv *csv, const char *field);
/* A number with 9 significant digits (a float32 value reads back exactly);
 * NaN is an empty field. */
void es_csv_number (EsCsv *csv, double value);
void es_csv_integer (EsCsv *csv, long long value);
/* Ends the record with a line feed. */
void es_csv_end_row (EsCsv *csv);
/* The text so far ("" when empty). */
const char *es_csv_get_text (const EsCsv *csv);
/* Writes the text through an atomic file (es_atomic_file_open): a failure
 * leaves an existing file untouched and no temporary file behind. */
bool es_csv_write (const EsCsv *csv, const char *path, EsError *error);
