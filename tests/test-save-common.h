/* SPDX-License-Identifier: MIT */
/* Helpers shared by test-save.c and test-save-files.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-image.h"

extern unsigned long long rng;
extern char tmpdir[]; /* made by the test's main with mkdtemp */

int rand_int (int n);    /* 0..n−1 */
double rand_unit (void); /* [0, 1) */
/* tmpdir/name, in one of 8 rotating static buffers. */
char *tmp_path (const char *name);
/* A random image with a padded stride, so that row addressing is exercised. */
void random_image (EsImage *image, int width, int height, EsFormat format);
double value_at (const EsImage *image, int x, int y);
bool read_file (const char *path, uint8_t **data, size_t *size);
bool file_equals (const char *path, const void *bytes, size_t size);
/* Entries of tmpdir other than `keep`: leftovers of failed writes show here. */
int count_strays (const char *keep);
void remove_all (void);
