/* SPDX-License-Identifier: MIT */
/* PNG decoding to gray with libpng's low-level API, streamed from a bounded reader, hardened against hostile files. */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-calibration.h"
#include "es-load.h"
#include "es-png-error.h"
#include "es-load-internal.h"
#include "es-png-inflate.h"

/* Ancillary chunks (text, ICC profiles) may not decompress to more than this,
 * nor may a file carry more than this many of them. */
#define ES_PNG_CHUNK_MALLOC_MAX (8u << 20)
#define ES_PNG_CHUNK_CACHE_MAX 1000

/* Everything that must survive a longjmp out of libpng lives here, in the
 * caller's frame, not in locals of the function that calls setjmp: C leaves
 * non-volatile locals modified after setjmp indeterminate after the jump,
 * while objects reached through a pointer keep their last stored value. */
typedef struct {
  EsReader *reader;
  EsError read_error; /* why the input ended early: a read error, the limit, an interruption */
  png_structp png;
  png_infop info;
  uint8_t *row;
  EsImage image;
  EsErrorCode code;
  EsPngErrors errors;
  EsSampleRule rule;
} EsPngDecoder;

static void
es_png_read_fn (png_structp png, png_bytep out, size_t length)
{
  EsPngDecoder *decoder = png_get_io_ptr (png);

  if (es_reader_read (decoder->reader, out, length) != length)
    {
      /* Only one row and the image are ever held: libpng asks for a chunk
       * header, a piece of IDAT or a CRC at a time. */
      if (es_reader_failed (decoder->reader, &decoder->read_error))
        png_error (png, decoder->read_error.message);
      png_error (png, "file is truncated");
    }
}

/* Converts one decoded row of `cols` pixels (after libpng's transforms: 8-bit
 * samples, or 16-bit big-endian ones, `channels` per pixel) to gray, writing
 * pixel i to column x0 + i * dx of image row y (dx > 1 for interlace passes). */
static void
es_png_convert_row (const uint8_t *src, int cols, int channels, bool sixteen, bool colour, EsSampleRule rule,
                    EsImage *image, int y, int x0, int dx)
{
  if (!sixteen)
    {
      uint8_t *dst = (uint8_t *) es_image_row (image, y) + x0;

      if (!colour)
        for (int i = 0; i < cols; i++, src += channels)
          dst[(size_t) i * dx] = src[0];
      else if (rule == ES_SAMPLES_CELLS)
        for (int i = 0; i < cols; i++, src += channels)
          dst[(size_t) i * dx] = (uint8_t) es_cell_of_rgb (src[0], src[1], src[2]);
      else
        for (int i = 0; i < cols; i++, src += channels)
          dst[(size_t) i * dx] = (uint8_t) es_luma_int (src[0], src[1], src[2]);
    }
  else
    {
      uint16_t *dst = (uint16_t *) es_image_row (image, y) + x0;
      size_t step = (size_t) channels * 2;

      if (!colour)
        for (int i = 0; i < cols; i++, src += step)
          dst[(size_t) i * dx] = (uint16_t) (src[0] << 8 | src[1]);
      else if (rule == ES_SAMPLES_CELLS)
        for (int i = 0; i < cols; i++, src += step)
          dst[(size_t) i * dx] = (uint16_t) es_cell_of_rgb (
            (uint32_t) (src[0] << 8 | src[1]), (uint32_t) (src[2] << 8 | src[3]), (uint32_t) (src[4] << 8 | src[5]));
      else
        for (int i = 0; i < cols; i++, src += step)
          dst[(size_t) i * dx] = (uint16_t) es_luma_int (
            (uint32_t) (src[0] << 8 | src[1]), (uint32_t) (src[2] << 8 | src[3]), (uint32_t) (src[4] << 8 | src[5]));
    }
}

/* Refuses an oversized image from the IHDR fields alone, before libpng is
 * involved at all, so that the caller gets ES_ERROR_LIMIT rather than
 * libpng's generic "Invalid IHDR data" for sides above its own limit. A
 * malformed IHDR is left for libpng to report. */
static bool
es_png_precheck_size (EsReader *reader, EsError *error)
{
  size_t size = es_reader_fill (reader, 25);
  const uint8_t *data = reader->data + reader->pos;
  uint32_t width, height;
  int depth;

  if (size < 25 || memcmp (data + 12, "IHDR", 4) != 0)
    return true;
  width = (uint32_t) data[16] << 24 | (uint32_t) data[17] << 16 | (uint32_t) data[18] << 8 | data[19];
  height = (uint32_t) data[20] << 24 | (uint32_t) data[21] << 16 | (uint32_t) data[22] << 8 | data[23];
  depth = data[24];
  if (width == 0 || height == 0)
    return true;
  if (width > INT_MAX || height > INT_MAX)
    return es_error_set (error, ES_ERROR_LIMIT, "image size %" PRIu32 "×%" PRIu32 " is over the limit", width, height);
  return es_image_check_size ((int) width, (int) height, depth > 8 ? ES_FORMAT_U16 : ES_FORMAT_U8, error);
}

/* The ancillary chunks libpng knows, each name followed by a NUL. */
static const png_byte ignored_chunks[] = "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0sBIT\0sCAL\0"
                                         "sPLT\0sRGB\0tEXt\0tIME\0tRNS\0zTXt\0";

/* The part that runs under setjmp. Returns false with decoder->errors set
 * (libpng errors) or with error set (our own refusals). */
static bool
es_png_decode_rows (EsPngDecoder *decoder, EsError *error)
{
  png_uint_32 width, height;
  int bit_depth, colour_type, interlace, depth, channels, passes;
  bool sixteen, colour;

  if (setjmp (png_jmpbuf (decoder->png)))
    return false;

  png_set_error_fn (decoder->png, &decoder->errors, es_png_error, es_png_warning);
  png_set_read_fn (decoder->png, decoder, es_png_read_fn);
  png_set_user_limits (decoder->png, ES_MAX_SIDE, ES_MAX_SIDE);
  png_set_chunk_cache_max (decoder->png, ES_PNG_CHUNK_CACHE_MAX);
  png_set_chunk_malloc_max (decoder->png, ES_PNG_CHUNK_MALLOC_MAX);
  /* Critical chunks already fail on a bad CRC; ancillary ones would only
   * warn and be dropped, but a damaged file should not pass as valid. */
  png_set_crc_action (decoder->png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
  /* Only IHDR, PLTE, IDAT, IEND and pHYs (9 bytes: the pixel size)
   * matter here. libpng allocates a whole
   * text or profile chunk at the length it claims (the chunk malloc limit
   * is not applied to them), so a 49-byte file could ask for 2 GiB: every
   * ancillary chunk is skipped instead, its CRC still checked as it is. */
  png_set_keep_unknown_chunks (decoder->png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
  png_set_keep_unknown_chunks (decoder->png, PNG_HANDLE_CHUNK_NEVER, ignored_chunks, (int) (sizeof ignored_chunks / 5));

  png_read_info (decoder->png, decoder->info);
  png_get_IHDR (decoder->png, decoder->info, &width, &height, &bit_depth, &colour_type, &interlace, NULL, NULL);

  /* Palettes become 8-bit RGB(A); 1/2/4-bit gray is unpacked to one byte per
   * sample without scaling. Gamma, tRNS and background are deliberately not
   * applied: the samples are analysed as stored. */
  if (colour_type == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (decoder->png);
  else if (bit_depth < 8)
    png_set_packing (decoder->png);
  png_read_update_info (decoder->png, decoder->info);

  channels = png_get_channels (decoder->png, decoder->info);
  sixteen = png_get_bit_depth (decoder->png, decoder->info) == 16;
  colour = (png_get_color_type (decoder->png, decoder->info) & PNG_COLOR_MASK_COLOR) != 0;
  depth = colour_type == PNG_COLOR_TYPE_PALETTE ? 8 : bit_depth;

  /* es_image_alloc checks the sides and the pixel budget before it
   * allocates anything. */
  if (!es_image_alloc (&decoder->image, (int) width, (int) height, sixteen ? ES_FORMAT_U16 : ES_FORMAT_U8, depth,
                       error))
    return false;
  {
    png_uint_32 x_density, y_density;
    int unit;

    if (png_get_pHYs (decoder->png, decoder->info, &x_density, &y_density, &unit) && unit == PNG_RESOLUTION_METER)
      es_image_meta_set_pixels_per_metre (&decoder->image.meta, x_density, y_density);
  }
  decoder->row = malloc (png_get_rowbytes (decoder->png, decoder->info));
  if (decoder->row == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory for a row of %zu bytes",
                         png_get_rowbytes (decoder->png, decoder->info));

  /* Interlaced images are read pass by pass as the seven reduced images and
   * scattered into place here, so that only one row is ever buffered. libpng
   * skips empty passes, and so does this loop. */
  passes = interlace == PNG_INTERLACE_ADAM7 ? 7 : 1;
  for (int pass = 0; pass < passes; pass++)
    {
      png_uint_32 rows = passes == 1 ? height : PNG_PASS_ROWS (height, pass);
      png_uint_32 cols = passes == 1 ? width : PNG_PASS_COLS (width, pass);

      if (rows == 0 || cols == 0)
        continue;
      for (png_uint_32 r = 0; r < rows; r++)
        {
          int y = passes == 1 ? (int) r : (int) PNG_ROW_FROM_PASS_ROW (r, pass);
          int x0 = passes == 1 ? 0 : PNG_PASS_START_COL (pass);
          int dx = passes == 1 ? 1 : PNG_PASS_COL_OFFSET (pass);

          png_read_row (decoder->png, decoder->row, NULL);
          es_png_convert_row (decoder->row, (int) cols, channels, sixteen, colour, decoder->rule, &decoder->image, y,
                              x0, dx);
        }
    }

  /* Reading up to IEND catches truncation and damage after the image data. */
  png_read_end (decoder->png, NULL);
  return true;
}

bool
es_png_decode (const void *data, size_t size, EsImage *image, EsError *error)
{
  EsReader reader;

  es_reader_init_memory (&reader, data, size);
  return es_png_decode_reader (&reader, image, NULL, ES_SAMPLES_IMAGE, error);
}

bool
es_png_decode_reader (EsReader *reader, EsImage *image, EsRowWatch *watch, EsSampleRule rule, EsError *error)
{
  EsPngDecoder decoder = { .reader = reader, .rule = rule };
  EsError local = { 0 };
  bool ok;

  if (!es_png_precheck_size (reader, &local))
    return es_error_set (error, local.code, "PNG: %s", local.message);
  /* The common layouts decode faster without libpng (docs/performance/files.md, "Decoding PNG"). Cells
   * (a mask, a footprint: read once, in no hurry) stay with libpng, the one path that knows their rule. */
  if (rule == ES_SAMPLES_IMAGE && es_png_inflate_takes (reader))
    return es_png_inflate_decode (reader, image, watch, &local)
           || es_error_set (error, local.code, "PNG: %s", local.message);

  decoder.png = png_create_read_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  if (decoder.png != NULL)
    decoder.info = png_create_info_struct (decoder.png);
  if (decoder.png == NULL || decoder.info == NULL)
    {
      png_destroy_read_struct (&decoder.png, NULL, NULL);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "PNG: out of memory for the decoder");
    }

  /* Our own refusals go to a local error first so that they get the same
   * "PNG: " prefix as libpng's messages. */
  ok = es_png_decode_rows (&decoder, &local);

  png_destroy_read_struct (&decoder.png, &decoder.info, NULL);
  free (decoder.row);
  if (!ok)
    {
      es_image_clear (&decoder.image);
      /* A read error, the size limit or an interruption keeps its own code. */
      if (decoder.read_error.code != ES_OK)
        return es_error_set (error, decoder.read_error.code, "PNG: %s", decoder.read_error.message);
      if (local.code != ES_OK)
        return es_error_set (error, local.code, "PNG: %s", local.message);
      if (decoder.errors.warning[0] != '\0' && strcmp (decoder.errors.warning, decoder.errors.message) != 0)
        return es_error_set (error, ES_ERROR_FORMAT, "PNG: %s (warning: %s)", decoder.errors.message,
                             decoder.errors.warning);
      return es_error_set (error, ES_ERROR_FORMAT, "PNG: %s", decoder.errors.message);
    }
  *image = decoder.image;
  return true;
}
