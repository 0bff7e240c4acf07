/* SPDX-License-Identifier: MIT */
/* Internal to app/: TIFF read page by page through libtiff (built when ES_HAVE_TIFF), and written as
 * stacks by our own front-to-back writer (always built). */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-image.h"
#include "es-load.h"
#include "es-save.h"

/* ---- reading ---- */

typedef struct EsTiff EsTiff;

/* A TIFF in memory: data must outlive the handle, which frees it at close
 * when owned is set. */
EsTiff *es_tiff_open_memory (const void *data, size_t size, bool owned, EsError *error);
/* A TIFF in a regular file, read with pread() from `offset` on (the file
 * holds `size` bytes from there); fd is not closed here. */
EsTiff *es_tiff_open_fd (int fd, uint64_t offset, uint64_t size, EsError *error);
void es_tiff_close (EsTiff *tiff);
/* How the pages decode from here on: ES_SAMPLES_IMAGE (the default) or as
 * cells (es-load.h). */
void es_tiff_set_sample_rule (EsTiff *tiff, EsSampleRule rule);
/* The number of pages (image file directories); a multi-page file is a
 * stack. The first call indexes them, so that any page is reached at once.
 * 0, with error set, where the chain of directories goes on past the pages
 * that can be read (a truncated file) or past 65535 pages; with a NULL
 * error, the pages that can be read. */
int es_tiff_page_count (EsTiff *tiff, EsError *error);
/* Once control is cancelled (a signal handler may do it), whatever reads a
 * page stops between pages, rows or tiles with ES_ERROR_CANCELLED. */
void es_tiff_set_interrupt (EsControl *control);
/* The size of page `page` without decoding it. */
bool es_tiff_page_size (EsTiff *tiff, int page, int *width, int *height, EsError *error);

/* Decodes page `page` (from 0) to gray, as DESIGN.md §1 says: 1..16-bit
 * unsigned integers as stored (U8 for depth ≤ 8, else U16), signed 8/16-bit
 * offset by 2^(bits-1), MinIsWhite inverted, RGB reduced with BT.709 luma,
 * 32/64-bit floats mapped from their finite min..max to 0..65535 (U16,
 * depth 16; NaN to 0 and the rest to 1..65535 when there is NaN), counted
 * in image->meta (nan_samples, infinite_samples). */
bool es_tiff_read_page (EsTiff *tiff, int page, EsImage *image, EsError *error);

/* What es_tiff_read_page would give for page `page`, from its tags alone:
 * the format and depth of its samples, and whether they are stored as
 * floats (then mapped to U16 by their range). */
bool es_tiff_page_format (EsTiff *tiff, int page, EsFormat *format, int *depth, bool *floats, EsError *error);
/* The page's ImageDescription (malloc'd), or NULL when it has none. */
char *es_tiff_page_description (EsTiff *tiff, int page);
/* As es_tiff_read_page, but a float page stays F32 as stored (reduced to
 * gray): a volume maps its floats by the range of all its pages. */
bool es_tiff_read_page_floats (EsTiff *tiff, int page, EsImage *image, EsError *error);

/* What maps float samples to 16 bits (DESIGN.md §1): the finite range
 * lo..hi of a page (or of every page of a volume) and how many samples lie
 * outside it. A zeroed struct is not empty: start from ES_FLOAT_RANGE_EMPTY. */
typedef struct {
  double lo, hi;
  uint64_t nan, infinite;
} EsFloatRange;

#define ES_FLOAT_RANGE_EMPTY ((EsFloatRange){ INFINITY, -INFINITY, 0, 0 })

/* Widens the range by every sample of an F32 plane, counting those that
 * are not finite. */
void es_float_range_add_plane (EsFloatRange *range, const EsImage *plane);
/* The float quantization of DESIGN.md §1 of every sample of an F32 plane
 * into the U16 plane `out` of its size, by the range: the finite range to
 * 0..65535, or to 1..65535 when the range holds NaN, which is then 0; −∞
 * and +∞ to the ends of the finite range. */
void es_float_range_plane_samples (const EsFloatRange *range, const EsImage *plane, EsImage *out);
/* The value map of samples so quantized (value = offset + sample · step;
 * a constant page or one without a finite sample maps every finite sample
 * to lo, or 0) with the counts of NaN and infinite samples. */
void es_float_range_map (const EsFloatRange *range, EsImageMeta *meta);
/* The note that tells of a float image's NaN and infinite samples ("page 2:
 * 3 NaN samples (no value), 1 infinite (the finite range's end)"), page 0
 * for none; "" when it has neither. */
void es_float_notice (const EsImageMeta *meta, int page, char *notice, size_t size);

/* ---- writing ---- */

typedef struct EsTiffWriter EsTiffWriter;

/* Opens an atomic output (a special file is written into) for `pages`
 * pages of `bytes` sample bytes in all: classic TIFF, or BigTIFF when the
 * file could pass 4 GiB. One sample per pixel, strips of about 1 MiB,
 * deflated on every core or stored as the compression setting says
 * (es_save_get_compression, fixed at open), nothing written twice: a pipe
 * takes it as well as a file. */
EsTiffWriter *es_tiff_writer_open (const char *path, int pages, uint64_t bytes, EsError *error);
/* Appends one page: F32 values as 32-bit float (times info->unit_scale),
 * U8 and U16 as they are; the metadata in ImageDescription. */
bool es_tiff_writer_add (EsTiffWriter *writer, const EsImage *values, const EsValueInfo *info, EsError *error);
/* Appends every plane of a volume as a page, as es_tiff_writer_add would
 * one by one (the same bytes), deflating the strips of several planes at
 * once so that planes of one strip each still use every core. */
bool es_tiff_writer_add_planes (EsTiffWriter *writer, const EsImage *volume, const EsValueInfo *info, EsError *error);
/* Writes out and renames into place (or removes everything on failure). */
bool es_tiff_writer_commit (EsTiffWriter *writer, EsError *error);
void es_tiff_writer_abort (EsTiffWriter *writer);
/* The sample bytes of one page of values, for es_tiff_writer_open. */
uint64_t es_tiff_page_bytes (const EsImage *values);
