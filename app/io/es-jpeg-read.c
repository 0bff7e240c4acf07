/* SPDX-License-Identifier: MIT */
/* JPEG decoding to gray with libjpeg-turbo's libjpeg API, streamed from a bounded reader, hardened against hostile
 * files, turned upright by the EXIF orientation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "es-jpeg.h"
#include "es-load-internal.h"

/* A progressive or multi-scan file may have at most this many scans: each
 * one walks the whole image again, so a small file of thousands of empty
 * scans would keep the decoder busy for minutes. Real encoders write about
 * ten; 500 is libjpeg-turbo's own advice (djpeg -maxscans, its security
 * notes). */
#define ES_JPEG_MAX_SCANS 500

/* Rows are turned upright this many at a time (es_jpeg_place_strip). */
#define ES_JPEG_STRIP_ROWS 32

/* The TIFF tag of the EXIF orientation, a SHORT 1..8 in IFD0. */
#define ES_EXIF_ORIENTATION 0x0112
#define ES_EXIF_TYPE_SHORT 3

/* Everything that must survive a longjmp out of libjpeg lives here, in the
 * caller's frame and reached through a pointer (as in es-png-read.c): C
 * leaves non-volatile locals modified after setjmp indeterminate after the
 * jump. Whatever we allocate is recorded here first, so the one cleanup
 * after the jump frees it. */
typedef struct {
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr errors;
  struct jpeg_source_mgr source;
  struct jpeg_progress_mgr progress;
  jmp_buf jump;
  EsReader *reader;
  size_t given;    /* bytes of the reader's window handed to libjpeg by the last fill */
  EsError failure; /* why the decode stopped */
  EsImage image;
  uint8_t *row;   /* one decoded colour row before it becomes gray */
  uint8_t *strip; /* ES_JPEG_STRIP_ROWS gray rows before they are turned upright */
  uint8_t *exif;  /* the EXIF APP1 payload while it is parsed */
  int orientation;
  bool exif_seen; /* only the first EXIF APP1 counts */
  EsSampleRule rule;
} EsJpegDecoder;

static void es_jpeg_fail (EsJpegDecoder *decoder, EsErrorCode code, const char *format, ...)
  __attribute__ ((noreturn, format (printf, 3, 4)));

/* Every refusal ends here: the message is kept and the decode unwinds to
 * es_jpeg_decode_rows, which libjpeg's error manager design allows from any
 * of its callbacks. */
static void
es_jpeg_fail (EsJpegDecoder *decoder, EsErrorCode code, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  es_error_setv (&decoder->failure, code, format, args);
  va_end (args);
  longjmp (decoder->jump, 1);
}

static void
es_jpeg_error_exit (j_common_ptr common)
{
  EsJpegDecoder *decoder = common->client_data;
  char message[JMSG_LENGTH_MAX];

  /* Debian 12's libjpeg-turbo (2.1) is built for 8-bit samples only; its
   * own message ("Unsupported JPEG data precision 12") does not say so.
   * The precision read from the frame header decides, not only the message
   * code: Ubuntu 24.04's libjpeg-turbo refused a 12-bit file with its own
   * message through a code other than JERR_BAD_PRECISION. */
  if (common->err->msg_code == JERR_BAD_PRECISION
      || (common->is_decompressor && ((j_decompress_ptr) common)->data_precision > 8))
    es_jpeg_fail (decoder, ES_ERROR_FORMAT,
                  "%d-bit samples are not supported (this libjpeg-turbo decodes 8-bit JPEG only)",
                  common->is_decompressor ? ((j_decompress_ptr) common)->data_precision : common->err->msg_parm.i[0]);
  (*common->err->format_message) (common, message);
  es_jpeg_fail (decoder, common->err->msg_code == JERR_OUT_OF_MEMORY ? ES_ERROR_NO_MEMORY : ES_ERROR_FORMAT, "%s",
                message);
}

/* libjpeg goes on after damaged entropy-coded data (a bad Huffman or
 * arithmetic code, a marker inside a scan, a broken progression), filling
 * what it could not decode with gray: such pixels are not the image, so
 * every warning refuses the file, as djpeg -strict does. Three are only
 * about metadata and pass: an unknown JFIF revision, a damaged ICC
 * profile (not used here), and bytes between markers after a scan that
 * decoded completely (padding that some cameras write). Trace messages
 * (level > 0) are not warnings. */
static void
es_jpeg_emit_message (j_common_ptr common, int level)
{
  int code = common->err->msg_code;

  if (level >= 0 || code == JWRN_JFIF_MAJOR || code == JWRN_BOGUS_ICC || code == JWRN_EXTRANEOUS_DATA)
    return;
  es_jpeg_error_exit (common);
}

/* ---- input: the bounded reader as a libjpeg source ---- */

static void
es_jpeg_init_source (j_decompress_ptr cinfo)
{
  (void) cinfo;
}

/* Hands libjpeg the reader's next window. libjpeg asks only once it has
 * used every byte given, so those are consumed. The end of the input before
 * EOI refuses the file: libjpeg's own sources would insert a fake EOI and
 * let a truncated file pass with gray rows. */
static boolean
es_jpeg_fill_input_buffer (j_decompress_ptr cinfo)
{
  EsJpegDecoder *decoder = cinfo->client_data;
  EsReader *reader = decoder->reader;
  size_t available;

  reader->pos += decoder->given;
  decoder->given = 0;
  available = es_reader_fill (reader, ES_READER_BUFFER);
  if (available == 0)
    {
      EsError read_error = { 0 };

      /* A read error, the size limit or an interruption keeps its code. */
      if (es_reader_failed (reader, &read_error))
        es_jpeg_fail (decoder, read_error.code, "%s", read_error.message);
      es_jpeg_fail (decoder, ES_ERROR_FORMAT, "file is truncated");
    }
  decoder->given = available;
  decoder->source.next_input_byte = reader->data + reader->pos;
  decoder->source.bytes_in_buffer = available;
  return TRUE;
}

static void
es_jpeg_skip_input_data (j_decompress_ptr cinfo, long count)
{
  struct jpeg_source_mgr *source = cinfo->src;
  size_t left = count > 0 ? (size_t) count : 0;

  while (left > source->bytes_in_buffer)
    {
      left -= source->bytes_in_buffer;
      source->bytes_in_buffer = 0;
      es_jpeg_fill_input_buffer (cinfo);
    }
  source->next_input_byte += left;
  source->bytes_in_buffer -= left;
}

static void
es_jpeg_term_source (j_decompress_ptr cinfo)
{
  (void) cinfo;
}

/* Our source never suspends (it refuses instead), so a marker reader may
 * take bytes one by one. */
static unsigned
es_jpeg_next_byte (j_decompress_ptr cinfo)
{
  struct jpeg_source_mgr *source = cinfo->src;

  if (source->bytes_in_buffer == 0)
    es_jpeg_fill_input_buffer (cinfo);
  source->bytes_in_buffer--;
  return *source->next_input_byte++;
}

/* ---- EXIF orientation ---- */

static uint32_t
es_exif_get (const uint8_t *p, int bytes, bool little)
{
  uint32_t v = 0;

  for (int i = 0; i < bytes; i++)
    v |= (uint32_t) p[little ? i : bytes - 1 - i] << 8 * i;
  return v;
}

int
es_jpeg_exif_orientation (const uint8_t *payload, size_t size)
{
  const uint8_t *tiff = payload + 6;
  size_t tiff_size, ifd, count;
  bool little;

  /* "Exif\0\0", then a TIFF header: byte order, 42, the offset of IFD0. */
  if (size < 6 + 8 || memcmp (payload, "Exif\0\0", 6) != 0)
    return 1;
  tiff_size = size - 6;
  if (memcmp (tiff, "II*\0", 4) == 0)
    little = true;
  else if (memcmp (tiff, "MM\0*", 4) == 0)
    little = false;
  else
    return 1;
  ifd = es_exif_get (tiff + 4, 4, little);
  if (ifd > tiff_size - 2)
    return 1;
  /* Each entry: tag, type, count (4 bytes), value (4 bytes, a SHORT in the
   * first two). Entries past the payload's end are not there. */
  count = es_exif_get (tiff + ifd, 2, little);
  for (size_t i = 0, entry = ifd + 2; i < count && entry <= tiff_size - 12; i++, entry += 12)
    if (es_exif_get (tiff + entry, 2, little) == ES_EXIF_ORIENTATION)
      {
        uint32_t value = es_exif_get (tiff + entry + 8, 2, little);

        if (es_exif_get (tiff + entry + 2, 2, little) != ES_EXIF_TYPE_SHORT
            || es_exif_get (tiff + entry + 4, 4, little) != 1 || value < 1 || value > 8)
          return 1;
        return (int) value;
      }
  return 1;
}

/* APP1 markers, read by us rather than saved by libjpeg (jpeg_save_markers
 * would keep every one, and a file may hold thousands): the first that is
 * EXIF is parsed for its orientation, the rest (XMP, later EXIF) skipped. */
static boolean
es_jpeg_read_app1 (j_decompress_ptr cinfo)
{
  EsJpegDecoder *decoder = cinfo->client_data;
  unsigned high = es_jpeg_next_byte (cinfo);
  size_t length = high << 8 | es_jpeg_next_byte (cinfo);

  if (length < 2)
    es_jpeg_fail (decoder, ES_ERROR_FORMAT, "APP1 marker of length %zu (2 or more)", length);
  length -= 2;
  if (decoder->exif_seen || length < 6)
    {
      es_jpeg_skip_input_data (cinfo, (long) length);
      return TRUE;
    }
  decoder->exif = malloc (length);
  if (decoder->exif == NULL)
    es_jpeg_fail (decoder, ES_ERROR_NO_MEMORY, "out of memory for an APP1 marker of %zu bytes", length);
  for (size_t i = 0; i < length; i++)
    decoder->exif[i] = (uint8_t) es_jpeg_next_byte (cinfo);
  if (memcmp (decoder->exif, "Exif\0\0", 6) == 0)
    {
      decoder->exif_seen = true;
      decoder->orientation = es_jpeg_exif_orientation (decoder->exif, length);
    }
  free (decoder->exif);
  decoder->exif = NULL;
  return TRUE;
}

/* ---- rows to gray, upright ---- */

/* Where decoded pixel (x, y) of a width×height decode lands in the upright
 * image: origin + x·step_x + y·step_y bytes from its first pixel. EXIF
 * orientation o says where the stored 0th row and column are to be shown;
 * 5–8 swap the sides. */
typedef struct {
  ptrdiff_t origin, step_x, step_y;
} EsJpegPlacement;

static EsJpegPlacement
es_jpeg_placement (int orientation, int width, int height, ptrdiff_t stride)
{
  ptrdiff_t right = width - 1, bottom = height - 1;

  switch (orientation)
    {
    case 2: return (EsJpegPlacement){ right, -1, stride };                    /* mirrored left-right */
    case 3: return (EsJpegPlacement){ bottom * stride + right, -1, -stride }; /* turned 180° */
    case 4: return (EsJpegPlacement){ bottom * stride, 1, -stride };          /* mirrored top-bottom */
    case 5: return (EsJpegPlacement){ 0, stride, 1 };                         /* transposed */
    case 6: return (EsJpegPlacement){ bottom, stride, -1 };                   /* turned 90° clockwise */
    case 7: return (EsJpegPlacement){ right * stride + bottom, -stride, -1 }; /* transversed */
    case 8: return (EsJpegPlacement){ right * stride, -stride, 1 };           /* turned 90° anticlockwise */
    default: return (EsJpegPlacement){ 0, 1, stride };
    }
}

/* One stored CMYK sample set to R, G, B as libtiff's RGBA interface turns a
 * CMYK TIFF (DESIGN.md §1), so that the same inks give the same gray in
 * either container: ink values i (0 = none), R = (255 − K)(255 − C) / 255
 * truncated. Adobe's files (those with an APP14 marker: Photoshop and
 * whatever imitates it) store 255 − ink. */
static void
es_jpeg_cmyk_to_rgb (const uint8_t *p, bool inverted, uint32_t rgb[3])
{
  uint32_t k = inverted ? p[3] : 255u - p[3];

  for (int c = 0; c < 3; c++)
    rgb[c] = k * (inverted ? p[c] : 255u - p[c]) / 255u;
}

/* One decoded row to gray by DESIGN.md §1 (as cells: a colour pixel's
 * largest channel). */
static void
es_jpeg_gray_row (const EsJpegDecoder *decoder, const uint8_t *row, uint8_t *gray)
{
  const struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
  int width = (int) cinfo->output_width;
  bool cells = decoder->rule == ES_SAMPLES_CELLS;
  bool inverted = cinfo->saw_Adobe_marker;

  for (int x = 0; x < width; x++)
    {
      uint32_t rgb[3];

      if (cinfo->out_color_space == JCS_CMYK)
        es_jpeg_cmyk_to_rgb (row + (size_t) x * 4, inverted, rgb);
      else
        for (int c = 0; c < 3; c++)
          rgb[c] = row[(size_t) x * 3 + c];
      gray[x] = (uint8_t) (cells ? es_cell_of_rgb (rgb[0], rgb[1], rgb[2]) : es_luma_int (rgb[0], rgb[1], rgb[2]));
    }
}

/* Rows y0 .. y0 + rows − 1 of the decode, gray in the strip, placed where
 * they belong upright. With the sides kept (orientations 1–4) a row stays a
 * row; with them swapped (5–8) each column of the strip becomes a run of
 * `rows` bytes of one image row, where placing decoded rows one at a time
 * would write one byte to each of `width` rows, a page apart, per row. */
static void
es_jpeg_place_strip (EsJpegDecoder *decoder, int y0, int rows, EsJpegPlacement at)
{
  size_t width = decoder->cinfo.output_width;
  const uint8_t *strip = decoder->strip;
  uint8_t *first = (uint8_t *) decoder->image.pixels + at.origin + (ptrdiff_t) y0 * at.step_y;

  if (at.step_x == 1)
    for (int r = 0; r < rows; r++)
      memcpy (first + (ptrdiff_t) r * at.step_y, strip + r * width, width);
  else if (at.step_x == -1)
    for (int r = 0; r < rows; r++)
      {
        uint8_t *out = first + (ptrdiff_t) r * at.step_y;
        const uint8_t *in = strip + r * width;

        for (size_t x = 0; x < width; x++)
          out[-(ptrdiff_t) x] = in[x];
      }
  else
    for (size_t x = 0; x < width; x++)
      {
        uint8_t *out = first + (ptrdiff_t) x * at.step_x;

        for (int r = 0; r < rows; r++)
          out[(ptrdiff_t) r * at.step_y] = strip[r * width + x];
      }
}

/* ---- the decode ---- */

/* Scans beyond the limit, and cancellation, checked as libjpeg goes. */
static void
es_jpeg_progress (j_common_ptr common)
{
  j_decompress_ptr cinfo = (j_decompress_ptr) common;
  EsJpegDecoder *decoder = cinfo->client_data;

  if (cinfo->input_scan_number > ES_JPEG_MAX_SCANS)
    es_jpeg_fail (decoder, ES_ERROR_FORMAT, "more than %d scans", ES_JPEG_MAX_SCANS);
  if (es_control_cancelled (es_load_get_interrupt ()))
    es_jpeg_fail (decoder, ES_ERROR_CANCELLED, "interrupted");
}

/* The part that runs under setjmp. Returns false with decoder->failure set. */
static bool
es_jpeg_decode_rows (EsJpegDecoder *decoder)
{
  struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
  EsJpegPlacement at;
  int width, height;
  bool swap, upright_gray;

  if (setjmp (decoder->jump))
    return false;

  /* client_data is set before and kept by jpeg_create_decompress, so that
   * its own failure (out of memory) reaches the error manager too. */
  cinfo->client_data = decoder;
  jpeg_create_decompress (cinfo);
  cinfo->src = &decoder->source;
  cinfo->progress = &decoder->progress;
  jpeg_set_marker_processor (cinfo, JPEG_APP0 + 1, es_jpeg_read_app1);

  jpeg_read_header (cinfo, TRUE);
  switch (cinfo->jpeg_color_space)
    {
    case JCS_GRAYSCALE: cinfo->out_color_space = JCS_GRAYSCALE; break;
    case JCS_YCbCr:
    case JCS_RGB: cinfo->out_color_space = JCS_RGB; break;
    case JCS_CMYK:
    case JCS_YCCK: cinfo->out_color_space = JCS_CMYK; break;
    default:
      es_jpeg_fail (decoder, ES_ERROR_FORMAT, "%d components of an unknown colour space are not supported",
                    cinfo->num_components);
    }

  /* The size is refused before libjpeg allocates for it (a progressive
   * file's coefficients take 2 bytes per sample and component). */
  width = (int) cinfo->image_width;
  height = (int) cinfo->image_height;
  swap = decoder->orientation >= 5;
  if (!es_image_check_size (width, height, ES_FORMAT_U8, &decoder->failure))
    return false;

  jpeg_start_decompress (cinfo);
  if (!es_image_alloc (&decoder->image, swap ? height : width, swap ? width : height, ES_FORMAT_U8, 8,
                       &decoder->failure))
    return false;
  /* Upright gray rows need no copy: libjpeg writes them in place. Any
   * other decode goes through a strip of gray rows, and colour through one
   * decoded row before it. */
  upright_gray = decoder->orientation == 1 && cinfo->out_color_space == JCS_GRAYSCALE;
  if (!upright_gray)
    {
      decoder->strip = malloc ((size_t) width * ES_JPEG_STRIP_ROWS);
      if (cinfo->out_color_space != JCS_GRAYSCALE)
        decoder->row = malloc ((size_t) width * (size_t) cinfo->output_components);
      if (decoder->strip == NULL || (cinfo->out_color_space != JCS_GRAYSCALE && decoder->row == NULL))
        es_jpeg_fail (decoder, ES_ERROR_NO_MEMORY, "out of memory for %d rows of %d pixels", ES_JPEG_STRIP_ROWS, width);
    }

  at = es_jpeg_placement (decoder->orientation, width, height, (ptrdiff_t) decoder->image.stride);
  while (cinfo->output_scanline < cinfo->output_height)
    {
      int y = (int) cinfo->output_scanline;
      int in_strip = y % ES_JPEG_STRIP_ROWS;
      uint8_t *gray = upright_gray ? es_image_row (&decoder->image, y) : decoder->strip + (size_t) in_strip * width;
      JSAMPROW rows[1] = { decoder->row != NULL ? decoder->row : gray };

      /* 0 rows would mean a suspending source, which ours never is: refusing
       * keeps the loop finite whatever libjpeg does. */
      if (jpeg_read_scanlines (cinfo, rows, 1) != 1)
        es_jpeg_fail (decoder, ES_ERROR_FORMAT, "row %d could not be decoded", y);
      if (decoder->row != NULL)
        es_jpeg_gray_row (decoder, decoder->row, gray);
      if (!upright_gray && (in_strip == ES_JPEG_STRIP_ROWS - 1 || y == height - 1))
        es_jpeg_place_strip (decoder, y - in_strip, in_strip + 1, at);
    }

  /* Reading up to EOI catches truncation and damage after the last row. */
  jpeg_finish_decompress (cinfo);
  return true;
}

bool
es_jpeg_decode_reader (EsReader *reader, EsImage *image, EsSampleRule rule, EsError *error)
{
  EsJpegDecoder *decoder = calloc (1, sizeof *decoder);
  bool ok;

  if (decoder == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "JPEG: out of memory for the decoder");
  decoder->reader = reader;
  decoder->rule = rule;
  decoder->orientation = 1;
  decoder->cinfo.err = jpeg_std_error (&decoder->errors);
  decoder->errors.error_exit = es_jpeg_error_exit;
  decoder->errors.emit_message = es_jpeg_emit_message;
  decoder->source.init_source = es_jpeg_init_source;
  decoder->source.fill_input_buffer = es_jpeg_fill_input_buffer;
  decoder->source.skip_input_data = es_jpeg_skip_input_data;
  decoder->source.resync_to_restart = jpeg_resync_to_restart;
  decoder->source.term_source = es_jpeg_term_source;
  decoder->progress.progress_monitor = es_jpeg_progress;

  ok = es_jpeg_decode_rows (decoder);

  /* Frees every pool libjpeg allocated, wherever the decode stopped. */
  jpeg_destroy_decompress (&decoder->cinfo);
  free (decoder->row);
  free (decoder->strip);
  free (decoder->exif);
  if (ok)
    *image = decoder->image;
  else
    {
      es_image_clear (&decoder->image);
      es_error_set (error, decoder->failure.code, "JPEG: %s", decoder->failure.message);
    }
  free (decoder);
  return ok;
}

bool
es_jpeg_decode (const void *data, size_t size, EsImage *image, EsError *error)
{
  EsReader reader;

  es_reader_init_memory (&reader, data, size);
  return es_jpeg_decode_reader (&reader, image, ES_SAMPLES_IMAGE, error);
}
