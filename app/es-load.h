/* Image decoding: PNG (libpng), PGM (P2/P5) and the text matrix, to gray. */
#pragma once

#include <stddef.h>

#include "es-image.h"

/* Loads a file, choosing the decoder from its first bytes (PNG signature,
 * "P2"/"P5", else the text matrix). PNG and PGM give U8 (depth 1..8) or U16
 * (depth 9..16) samples as stored (no rescaling), colour reduced with
 * BT.709 weights on the stored values; a text matrix gives U8/U16 levels with
 * image->levels = levels and fails on any value >= levels.
 * Error messages name the problem and, for text, the line and column; the
 * caller prefixes the file name. */
bool es_load_file (const char *path, int levels, EsImage *image, EsError *error);
bool es_load_memory (const void *data, size_t size, int levels, EsImage *image, EsError *error);

/* The individual decoders, for tests and fuzzers. */
bool es_png_decode (const void *data, size_t size, EsImage *image, EsError *error);
bool es_pgm_decode (const void *data, size_t size, EsImage *image, EsError *error);
bool es_text_matrix_decode (const void *data, size_t size, int levels, EsImage *image, EsError *error);
