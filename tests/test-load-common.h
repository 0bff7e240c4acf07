/* SPDX-License-Identifier: MIT */
/* Helpers shared by the decoder tests (test-load-png.c, test-load-text.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-error.h"
#include "es-image.h"

extern const char *testdata;   /* ES_TESTDATA, or tests/data */
extern unsigned long long rng; /* seeded by load_tests_init */

/* Reads ES_TESTDATA and seeds rng (printing the seed). */
void load_tests_init (void);

/* A growable byte buffer for building test files. */
typedef struct {
  char *data;
  size_t size, capacity;
} Buffer;

void buffer_append (Buffer *b, const void *data, size_t size);
void buffer_printf (Buffer *b, const char *format, ...) __attribute__ ((format (printf, 2, 3)));
uint32_t random_below (uint32_t n);
/* The whole file, NUL-terminated one byte past *size; false on any error. */
bool read_file (const char *path, uint8_t **data, size_t *size);
uint32_t sample_at (const EsImage *image, int x, int y);
/* Whether the image holds values (width × height, row after row). */
bool same_samples (const EsImage *image, const uint32_t *values);
/* FNV-1a of the samples (U16 as little-endian pairs). */
unsigned long long image_hash (const EsImage *image);
/* Messages go on one line after the file name: not empty, no newline. */
bool one_line (const EsError *error);
