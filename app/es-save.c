/* SPDX-License-Identifier: MIT */
/* Encoders: colormapped and raw 16-bit PNG (libpng), RGB PNG and the text matrix. */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "es-colorbar-layout.h"
#include "es-path.h"
#include "es-png-error.h"
#include "es-save.h"
#include "es-ops.h"

/* "cannot write 'PATH': reason", the path shortened so that the reason fits. */
static bool
es_save_fail (EsError *error, EsErrorCode code, const char *path, const char *reason)
{
  char shown[ES_PATH_MESSAGE_MAX + 1];

  return es_error_set (error, code, "cannot write '%s': %s",
                       es_path_shorten (path, ES_PATH_MESSAGE_MAX, shown, sizeof shown), reason);
}

/* ---- PNG writing through an atomic file ---------------------------------- */

/* Everything the libpng callbacks change lives on the heap, so nothing that
 * changes between setjmp and longjmp is a local of the function that called
 * setjmp (those would need to be volatile). */
typedef struct {
  FILE *stream;
  int write_errno;  /* errno of a failed write, 0 for an encoder error */
  EsPngErrors errors;  /* libpng only warns about things that do not change the output */
  uint8_t row[];    /* one encoded row */
} PngContext;

typedef void (*FillRowFunc) (void *data, int y, uint8_t *row);

static void
png_context_write (png_structp png, png_bytep data, size_t length)
{
  PngContext *ctx = png_get_io_ptr (png);

  if (fwrite (data, 1, length, ctx->stream) != length)
    {
      ctx->write_errno = errno ? errno : EIO;
      png_error (png, "write failed");
    }
}

static void
png_context_flush (png_structp png)
{
  PngContext *ctx = png_get_io_ptr (png);

  if (fflush (ctx->stream) != 0)
    {
      ctx->write_errno = errno ? errno : EIO;
      png_error (png, "write failed");
    }
}

/* Up to a dozen tEXt chunks with their values formatted in place. */
typedef struct {
  png_text text[12];
  char values[12][64];
  int n;
} TextChunks;

static void __attribute__ ((format (printf, 3, 4)))
text_add (TextChunks *chunks, const char *key, const char *format, ...)
{
  va_list args;
  int i = chunks->n++;

  va_start (args, format);
  vsnprintf (chunks->values[i], sizeof chunks->values[i], format, args);
  va_end (args);
  chunks->text[i] = (png_text) {
    .compression = PNG_TEXT_COMPRESSION_NONE,
    .key = (png_charp) key,
    .text = chunks->values[i],
    .text_length = strlen (chunks->values[i]),
  };
}

/* The chunks every export carries: who wrote it and what the values are. */
static void
text_add_info (TextChunks *chunks, const EsValueInfo *info)
{
  EsOp op;

  text_add (chunks, "Software", "Entroscope");
  if (!info)
    return;
  if (info->operation)
    text_add (chunks, "Operation", "%s", info->operation);
  if (info->window)
    text_add (chunks, "Window", "%d", info->window);
  if (info->levels)
    text_add (chunks, "Levels", "%d", info->levels);
  /* An amount of 0 is a real one, so its presence comes from the table. */
  if (info->operation && es_op_from_name (info->operation, &op) && es_op_uses (op, ES_PARAM_AMOUNT))
    text_add (chunks, "Amount", "%.9g", (double) info->amount);
  if (info->units)
    text_add (chunks, "Units", "%s", info->units);
}

static double
unit_scale_of (const EsValueInfo *info)
{
  return info && info->unit_scale != 0 ? info->unit_scale : 1.0;
}

static bool
write_png (const char *path, int width, int height, int bit_depth, int color_type,
           TextChunks *chunks, FillRowFunc fill_row, void *data, EsError *error)
{
  int channels = color_type == PNG_COLOR_TYPE_RGB ? 3 : 1;
  size_t row_bytes = (size_t) width * (size_t) channels * (size_t) (bit_depth / 8);
  PngContext *ctx;
  EsAtomicFile *file;
  png_structp png;
  png_infop info = NULL;

  ctx = calloc (1, sizeof *ctx + row_bytes);
  if (!ctx)
    return es_save_fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
  file = es_atomic_file_open (path, error);
  if (!file)
    {
      free (ctx);
      return false;
    }
  ctx->stream = es_atomic_file_stream (file);
  png = png_create_write_struct (PNG_LIBPNG_VER_STRING, &ctx->errors, es_png_error, es_png_warning);
  if (png)
    info = png_create_info_struct (png);
  if (!png || !info)
    {
      png_destroy_write_struct (&png, NULL);
      es_atomic_file_abort (file);
      free (ctx);
      return es_save_fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
    }

  if (setjmp (png_jmpbuf (png)))
    {
      char shown[ES_PATH_MESSAGE_MAX + 1];

      png_destroy_write_struct (&png, &info);
      es_atomic_file_abort (file);
      es_path_shorten (path, ES_PATH_MESSAGE_MAX, shown, sizeof shown);
      if (ctx->write_errno == ECANCELED)
        es_error_set (error, ES_ERROR_CANCELLED, "'%s' was not written: interrupted", shown);
      else if (ctx->write_errno)
        es_error_set (error, ES_ERROR_IO, "cannot write '%s': %s", shown, strerror (ctx->write_errno));
      else
        es_error_set (error, ES_ERROR_IO, "cannot write '%s': %s", shown, ctx->errors.message);
      free (ctx);
      return false;
    }

  png_set_write_fn (png, ctx, png_context_write, png_context_flush);
  /* The default limit (a million pixels a side) is for reading; our sides
   * are already checked, and a colorbar adds a little width. */
  png_set_user_limits (png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  png_set_IHDR (png, info, (png_uint_32) width, (png_uint_32) height, bit_depth, color_type,
                PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_text (png, info, chunks->text, chunks->n);
  /* No tIME chunk: the same job must give the same bytes. */
  png_write_info (png, info);
  for (int y = 0; y < height; y++)
    {
      fill_row (data, y, ctx->row);
      png_write_row (png, ctx->row);
    }
  png_write_end (png, info);
  png_destroy_write_struct (&png, &info);
  free (ctx);
  return es_atomic_file_commit (file, error);
}

static bool
check_values (const char *path, const EsImage *values, EsError *error)
{
  if (!values || !values->pixels || values->width <= 0 || values->height <= 0
      || (values->format != ES_FORMAT_U8 && values->format != ES_FORMAT_U16
          && values->format != ES_FORMAT_F32)
      || values->stride < (size_t) values->width * es_format_size (values->format))
    return es_save_fail (error, ES_ERROR_INVALID, path, "no image to write");
  return true;
}

static inline double
sample_at (const EsImage *image, const void *row, int x)
{
  switch (image->format)
    {
    case ES_FORMAT_U8:
      return ((const uint8_t *) row)[x];
    case ES_FORMAT_U16:
      return ((const uint16_t *) row)[x];
    default:
      return ((const float *) row)[x];
    }
}

/* ---- Heatmap ---------------------------------------------------------- */

/* The heatmap is rendered a band of rows at a time (about a million pixels),
 * so an export needs no second image-sized buffer. */
typedef struct {
  const EsImage *values;
  const EsColorScale *scale;
  const EsColorbarLayout *bar;  /* NULL: the heatmap alone */
  uint8_t *band;
  int band_rows, band_y, band_height;
} HeatmapRows;

static void
heatmap_fill_row (void *data, int y, uint8_t *row)
{
  HeatmapRows *h = data;
  int image_y = h->bar ? y - h->bar->margin : y;
  const uint8_t *src = NULL;

  if (image_y >= 0 && image_y < h->values->height)
    {
      if (image_y < h->band_y || image_y >= h->band_y + h->band_height)
        {
          EsImage band = *h->values;
          band.height = h->values->height - image_y < h->band_rows
                          ? h->values->height - image_y : h->band_rows;
          band.pixels = es_image_row (h->values, image_y);
          es_render_heatmap (&band, h->scale, h->band, 3 * (size_t) band.width);
          h->band_y = image_y;
          h->band_height = band.height;
        }
      src = h->band + (size_t) (image_y - h->band_y) * 3 * (size_t) h->values->width;
    }
  if (h->bar)
    es_colorbar_layout_row (h->bar, y, src, row);
  else
    memcpy (row, src, 3 * (size_t) h->values->width);
}

bool
es_save_heatmap_png (const char *path, const EsImage *values, const EsColorScale *scale,
                     bool colorbar, const EsValueInfo *info, EsError *error)
{
  double unit_scale = unit_scale_of (info);
  HeatmapRows rows = { .values = values, .scale = scale, .band_y = -1 };
  EsColorbarLayout bar;
  TextChunks chunks = { .n = 0 };
  int width, height;
  bool ok;

  if (!check_values (path, values, error))
    return false;
  if (!scale)
    return es_save_fail (error, ES_ERROR_INVALID, path, "no colour scale");

  width = values->width;
  height = values->height;
  if (colorbar)
    {
      es_colorbar_layout_init (&bar, values->width, values->height, scale, info);
      rows.bar = &bar;
      width = bar.width;
      height = bar.height;
    }
  rows.band_rows = (1 << 20) / values->width;
  rows.band_rows = rows.band_rows < 1 ? 1 : rows.band_rows > values->height ? values->height : rows.band_rows;
  rows.band = malloc ((size_t) rows.band_rows * 3 * (size_t) values->width);
  if (!rows.band)
    return es_save_fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");

  text_add_info (&chunks, info);
  text_add (&chunks, "Range", "%.9g..%.9g", scale->lo * unit_scale, scale->hi * unit_scale);
  ok = write_png (path, width, height, 8, PNG_COLOR_TYPE_RGB, &chunks, heatmap_fill_row, &rows, error);
  free (rows.band);
  return ok;
}

/* ---- Raw 16-bit ------------------------------------------------------- */

typedef struct {
  const EsImage *values;
  double lo, s;  /* sample = round ((v - lo) * s), s = 65535 / (hi - lo) */
} Raw16Rows;

static void
raw16_fill_row (void *data, int y, uint8_t *row)
{
  const Raw16Rows *r = data;
  const void *src = es_image_row (r->values, y);

  for (int x = 0; x < r->values->width; x++)
    {
      double t = (sample_at (r->values, src, x) - r->lo) * r->s;
      unsigned int v;
      t = t > 0 ? t : 0;
      t = t < 65535 ? t : 65535;
      v = (unsigned int) (t + 0.5);
      /* PNG samples are big-endian. */
      row[2 * x] = (uint8_t) (v >> 8);
      row[2 * x + 1] = (uint8_t) v;
    }
}

bool
es_save_raw16_png (const char *path, const EsImage *values, double lo, double hi,
                   const EsValueInfo *info, EsError *error)
{
  double unit_scale = unit_scale_of (info);
  bool spread = hi > lo;
  Raw16Rows rows = { .values = values, .lo = lo, .s = spread ? 65535.0 / (hi - lo) : 0.0 };
  TextChunks chunks = { .n = 0 };

  if (!check_values (path, values, error))
    return false;
  text_add_info (&chunks, info);
  text_add (&chunks, "ValueOffset", "%.9g", lo * unit_scale);
  text_add (&chunks, "ValueScale", "%.9g", spread ? (hi - lo) * unit_scale / 65535.0 : 0.0);
  return write_png (path, values->width, values->height, 16, PNG_COLOR_TYPE_GRAY,
                    &chunks, raw16_fill_row, &rows, error);
}

/* ---- RGB -------------------------------------------------------------- */

typedef struct {
  const uint8_t *rgb;
  int width;
  size_t stride;
} RgbRows;

static void
rgb_fill_row (void *data, int y, uint8_t *row)
{
  const RgbRows *r = data;
  memcpy (row, r->rgb + (size_t) y * r->stride, 3 * (size_t) r->width);
}

bool
es_save_rgb_png (const char *path, const uint8_t *rgb, int width, int height, size_t stride,
                 EsError *error)
{
  RgbRows rows = { .rgb = rgb, .width = width, .stride = stride };
  TextChunks chunks = { .n = 0 };

  if (!rgb || width <= 0 || height <= 0 || stride < 3 * (size_t) width)
    return es_save_fail (error, ES_ERROR_INVALID, path, "no image to write");
  text_add_info (&chunks, NULL);
  return write_png (path, width, height, 8, PNG_COLOR_TYPE_RGB, &chunks, rgb_fill_row, &rows, error);
}

/* ---- Text matrix ------------------------------------------------------ */

/* Writes x exactly as printf ("%.5f", x) does and returns the length: the
 * exact product x * 10^5 (a rounded product plus its error, from fma) is
 * rounded half to even. Values too large for that (or not finite) go to
 * snprintf, so out must hold at least 320 bytes. */
static int
format_fixed5 (char *out, double x)
{
  char digits[24];
  char *p = out;
  double product, residual, r;
  uint64_t n, whole;
  int k = 0;

  /* Below 2^52 / 10^5 every half-integer product is representable. */
  if (!(fabs (x) < 4e10))
    return snprintf (out, 320, "%.5f", x);
  if (signbit (x))
    {
      *p++ = '-';
      x = -x;
    }
  product = x * 1e5;
  residual = fma (x, 1e5, -product);
  r = nearbyint (product);
  /* An apparent tie is not one when the rounded-off residual tips it. */
  if (fabs (product - r) == 0.5 && residual != 0)
    r = residual > 0 ? product + 0.5 : product - 0.5;

  n = (uint64_t) r;
  whole = n / 100000;
  do
    digits[k++] = (char) ('0' + whole % 10);
  while ((whole /= 10) != 0);
  while (k > 0)
    *p++ = digits[--k];
  *p++ = '.';
  n %= 100000;
  for (int i = 4; i >= 0; i--, n /= 10)
    p[i] = (char) ('0' + n % 10);
  return (int) (p + 5 - out);
}

static int
format_int (char *out, unsigned int v)
{
  char digits[12];
  int k = 0, len;

  do
    digits[k++] = (char) ('0' + v % 10);
  while ((v /= 10) != 0);
  len = k;
  while (k > 0)
    *out++ = digits[--k];
  return len;
}

bool
es_save_text_matrix (const char *path, const EsImage *values, const EsValueInfo *info,
                     EsError *error)
{
  /* Rows are formatted into a buffer that is written out whenever fewer
   * bytes than one value can take remain. */
  enum { BUFFER_SIZE = 1 << 16, VALUE_MAX = 320 };
  double unit_scale = unit_scale_of (info);
  EsAtomicFile *file;
  FILE *stream;
  char *buffer;
  size_t used = 0;

  if (!check_values (path, values, error))
    return false;
  buffer = malloc (BUFFER_SIZE);
  if (!buffer)
    return es_save_fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
  file = es_atomic_file_open (path, error);
  if (!file)
    {
      free (buffer);
      return false;
    }
  stream = es_atomic_file_stream (file);

  used = (size_t) snprintf (buffer, BUFFER_SIZE, "%d %d\n", values->height, values->width);
  for (int y = 0; y < values->height && !ferror (stream); y++)
    {
      const void *row = es_image_row (values, y);
      for (int x = 0; x < values->width; x++)
        {
          if (BUFFER_SIZE - used < VALUE_MAX + 2)
            {
              fwrite (buffer, 1, used, stream);
              used = 0;
            }
          if (x > 0)
            buffer[used++] = ' ';
          switch (values->format)
            {
            case ES_FORMAT_U8:
              used += (size_t) format_int (buffer + used, ((const uint8_t *) row)[x]);
              break;
            case ES_FORMAT_U16:
              used += (size_t) format_int (buffer + used, ((const uint16_t *) row)[x]);
              break;
            case ES_FORMAT_F32:
              used += (size_t) format_fixed5 (buffer + used, ((const float *) row)[x] * unit_scale);
              break;
            }
        }
      buffer[used++] = '\n';
    }
  if (used && !ferror (stream))
    fwrite (buffer, 1, used, stream);
  free (buffer);
  /* A failed write leaves the stream's error flag set; commit reports it
   * (with its errno) and removes the temporary file. */
  return es_atomic_file_commit (file, error);
}
