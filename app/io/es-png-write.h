/* SPDX-License-Identifier: MIT */
/* Internal to app/: the PNG encoder on every core (bands filtered and deflated in parallel, one zlib stream). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-error.h"
#include "es-row-gate.h"
#include "es-save.h"

/* Fills rows y .. y + n - 1 of the picture as PNG stores them (packed
 * samples, 16-bit ones big-endian), one row every `stride` bytes. Called
 * from several threads at once, each with its own rows; a row may be asked
 * for twice (a band also fills the row above it, which its filters read). */
typedef void (*EsPngFillRows) (void *data, int y, int n, uint8_t *rows, size_t stride);

typedef struct {
  const char *key;
  const char *value;
} EsPngText;

typedef struct {
  int width, height;
  int bit_depth;               /* 8 or 16 */
  int channels;                /* 1 (gray, or palette indices) or 3 (RGB) */
  const uint8_t (*palette)[3]; /* 256 RGB entries: rows hold 8-bit indices into them; NULL for gray or RGB */
  EsCompression compression;
  int band_rows;         /* rows deflated as one piece; 0 picks a size that keeps every core busy */
  const EsPngText *text; /* tEXt chunks, before the pixels */
  int n_text;
  /* The pixel size as a pHYs chunk, pixels a metre; 0: none written. */
  uint32_t pixels_per_metre_x, pixels_per_metre_y;
  EsPngFillRows fill_rows;
  void *data;
  /* NULL, or the gate through which the rows fill_rows reads arrive: a
   * band waits for rows up to its last one (a picture row stands for the
   * source row of the same index or an earlier one), and the file is given
   * up if the gate fails. */
  EsRowGate *gate;
} EsPngPicture;

/* Writes the picture to `path` through an atomic file (es-save.h): the
 * bands of rows are filtered as libpng's adaptive heuristic would (the
 * filter of least absolute sum, row by row), deflated on every OpenMP
 * thread, each but the last ended with a sync flush, and joined into one
 * zlib stream (Adler-32 combined), one IDAT chunk a band, each written by
 * the calling thread as soon as the bands before it are. Memory: a few
 * bands per thread, never the whole picture. */
bool es_png_write (const char *path, const EsPngPicture *picture, EsError *error);
