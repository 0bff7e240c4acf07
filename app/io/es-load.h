/* SPDX-License-Identifier: MIT */
/* Image decoding: PNG (libpng), PGM (P2/P5), TIFF (libtiff), JPEG (libjpeg-turbo) and the text matrix, to gray. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "es-control.h"
#include "es-image.h"

/* Loads a file, recognising its format from its first bytes, never from
 * its name: the PNG signature, "P2"/"P5" and whitespace, a TIFF or BigTIFF
 * header (when built with libtiff), a JPEG's SOI (when built with
 * libjpeg-turbo), or a text matrix (a digit first, after blank lines
 * perhaps). Anything else is refused at once (ES_ERROR_FORMAT): "empty
 * file", "GIF is not supported (PNG, PGM, TIFF, JPEG, text matrix are)" for
 * a format known by its magic number (PPM, PBM, PAM, GIF, BMP, WebP, TIFF
 * or JPEG without their library...), else "not an image this program reads
 * (...)"; only what looks like a text matrix gets text-matrix errors.
 *
 * The file is read in bounded pieces and never past the size limit (4 GiB)
 * plus one byte: a regular file over the limit is refused unread, anything
 * else once it has given limit + 1 bytes ("file is larger than 4 GiB",
 * ES_ERROR_IO). PNG and PGM are decoded as they are read, holding the image
 * and a 64 KiB buffer (what follows a P5 raster or the PNG IEND chunk is not
 * read), and so is JPEG, up to its EOI marker (es-jpeg.h); a text matrix is held whole, as its parser needs, but reading stops
 * at the first byte that no text matrix holds.
 *
 * A TIFF needs to seek: a regular file is read where it lies, anything else
 * is read into memory first (never past the limit). These functions give
 * its first page; es_pages_* below give every page of a stack.
 *
 * JPEG gives U8 (depth 8), turned upright by its EXIF orientation. PNG, PGM
 * and integer TIFF give U8 (depth 1..8) or U16 (depth 9..16)
 * samples as stored (no rescaling), colour reduced with BT.709 weights on
 * the stored values; float TIFF gives U16 (depth 16) by DESIGN.md §1;
 * a text matrix gives U8/U16 levels with image->levels = levels and fails on
 * any value >= levels. Error messages name the problem and, for text, the
 * line and column; the caller prefixes the file name. */
bool es_load_file (const char *path, int levels, EsImage *image, EsError *error);
/* How the samples of a file become the one value of each pixel. */
typedef enum {
  /* Images (DESIGN.md §1): colour by BT.709 luma, signed integers offset by
   * 2^(bits−1), floats mapped to 16 bits by their finite range. */
  ES_SAMPLES_IMAGE,
  /* Cells (masks, footprints): a pixel is in when its value as stored is
   * nonzero and not NaN: colour gives the largest channel (a float pixel 1
   * when a channel is in), signed integers 1 where nonzero, floats stay
   * floats. */
  ES_SAMPLES_CELLS,
} EsSampleRule;

/* An image read as cells, U8 0/1: in where a sample as stored is nonzero
 * and not NaN, in any channel (ES_SAMPLES_CELLS); a multi-page TIFF gives a
 * volume of them, its pages of one size. The masks and footprints of entropy
 * definitions, for the CLI and the window alike. */
bool es_load_cells (const char *path, EsImage *cells, EsError *error);
/* The same on the file open on fd (not closed). */
bool es_load_cells_fd (int fd, EsImage *cells, EsError *error);
/* The same from an open descriptor (not closed): a file, a pipe, a device. */
bool es_load_fd (int fd, int levels, EsImage *image, EsError *error);
/* The same recognition and decoders on bytes already in memory (the window
 * reads files through GIO); the same verdicts and messages as es_load_fd. */
bool es_load_memory (const void *data, size_t size, int levels, EsImage *image, EsError *error);

/* Pages: a multi-page TIFF is a stack, decoded one page at a time; every
 * other input has one page, decoded when it is opened (with the same
 * recognition, limits and messages as es_load_file). */
typedef struct EsPages EsPages;
EsPages *es_pages_open (const char *path, int levels, EsError *error);
/* fd is not closed, and must stay open until es_pages_close. */
EsPages *es_pages_open_fd (int fd, int levels, EsError *error);
EsPages *es_pages_open_memory (const void *data, size_t size, int levels, EsError *error);
int es_pages_count (const EsPages *pages);
/* The size of page index without decoding it. */
bool es_pages_size (EsPages *pages, int index, int *width, int *height, EsError *error);
/* Decodes page index (from 0) into image; each page once. Errors of a stack
 * name the page ("page 3: TIFF: ..."). */
bool es_pages_load (EsPages *pages, int index, EsImage *image, EsError *error);
/* What page index decodes to, from its header alone: the format and
 * depth es_pages_load gives, and whether the file stores floats (mapped to
 * U16 by their finite range). */
bool es_pages_format (EsPages *pages, int index, EsFormat *format, int *depth, bool *floats, EsError *error);
/* Page index's ImageDescription (malloc'd; an OME-TIFF's OME-XML), or NULL. */
char *es_pages_description (EsPages *pages, int index);
/* As es_pages_load, but float samples stay F32 as stored (reduced to gray):
 * es_pages_load_volume maps a volume's floats by the range of all its planes. */
bool es_pages_load_floats (EsPages *pages, int index, EsImage *image, EsError *error);
/* What the last es_pages_load has to say beside its image (the NaN and
 * infinite samples of a float page), or NULL. */
const char *es_pages_notice (const EsPages *pages);
void es_pages_close (EsPages *pages);

/* A consumer that works on an image while it is still being decoded (the
 * CLI computes and encodes bands of a big PNG as its rows arrive). The
 * decoder calls rows_decoded from its own thread each time more rows are
 * complete, with the image being filled: rows 0 .. rows - 1 are final.
 * Only PNG's common layouts (8/16-bit gray, gray+alpha, RGB, RGBA, not
 * interlaced) are decoded this way; other inputs never call it, and are
 * whole when es_pages_open_watched returns. Until then the file may still
 * prove damaged: only a successful return makes the rows a valid image. */
typedef struct EsRowWatch EsRowWatch;
struct EsRowWatch {
  void (*rows_decoded) (EsRowWatch *watch, const EsImage *image, int rows);
  /* A failed decode that told of rows leaves its image here rather than
   * freeing it, since the consumer may be reading it: clear it once the
   * consumer is done. */
  EsImage kept;
};
EsPages *es_pages_open_watched (const char *path, int levels, EsRowWatch *watch, EsError *error);
/* Whether a PNG's rows reach a watch while the file is still being read
 * (zlib inflating as it reads: a build without libdeflate) rather than all
 * in the last part of the decode (libdeflate inflates the whole stream
 * first, twice as fast). Only then does computing while decoding pay
 * (docs/performance/files.md, "One input in one pass"). */
bool es_load_png_rows_while_reading (void);
/* The size limit of es_load_file and es_load_fd; 0 restores 4 GiB. */
void es_load_set_max_file_size (uint64_t bytes);
uint64_t es_load_get_max_file_size (void);
/* Once control is cancelled (a signal handler may do it), a load waiting on
 * open() or read() stops with ES_ERROR_CANCELLED. NULL turns it off. */
void es_load_set_interrupt (EsControl *control);
EsControl *es_load_get_interrupt (void);

/* The individual decoders, for tests and fuzzers. */
bool es_png_decode (const void *data, size_t size, EsImage *image, EsError *error);
bool es_pgm_decode (const void *data, size_t size, EsImage *image, EsError *error);
bool es_text_matrix_decode (const void *data, size_t size, int levels, EsImage *image, EsError *error);
