/* SPDX-License-Identifier: MIT */
/* Encoders: colormapped and raw 16-bit PNG (es-png-write.c), RGB PNG and the text matrix. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "es-calibration.h"
#include "es-colorbar-layout.h"
#include "es-path.h"
#include "es-png-write.h"
#include "es-save-gated.h"
#include "es-ops.h"

/* "cannot write 'PATH': reason", the path shortened so that the reason fits. */
static bool
es_save_fail (EsError *error, EsErrorCode code, const char *path, const char *reason)
{
  char shown[ES_PATH_MESSAGE_MAX + 1];

  return es_error_set (error, code, "cannot write '%s': %s",
                       es_path_shorten (path, ES_PATH_MESSAGE_MAX, shown, sizeof shown), reason);
}

/* ---- PNG metadata ----------------------------------------------------- */

/* Up to a dozen tEXt chunks with their values formatted in place. */
typedef struct {
  EsPngText text[12];
  char values[12][128];
  int n;
  /* The pixel size for pHYs, pixels a metre (0: uncalibrated). */
  uint32_t pixels_per_metre_x, pixels_per_metre_y;
} TextChunks;

static void __attribute__ ((format (printf, 3, 4)))
text_add (TextChunks *chunks, const char *key, const char *format, ...)
{
  va_list args;
  int i = chunks->n++;

  va_start (args, format);
  vsnprintf (chunks->values[i], sizeof chunks->values[i], format, args);
  va_end (args);
  chunks->text[i] = (EsPngText){ .key = key, .value = chunks->values[i] };
}

/* What every export records: who wrote it and what the values are (PNG
 * tEXt chunks here, TIFF ImageDescription lines in es-tiff-write.c). */
void
es_value_info_each (const EsValueInfo *info, EsValueInfoItem item, void *data)
{
  char value[64];
  EsOp op;

  item (data, "Software", "Entroscope");
  if (!info)
    return;
  if (info->operation)
    item (data, "Operation", info->operation);
  if (info->window)
    snprintf (value, sizeof value, "%d", info->window), item (data, "Window", value);
  if (info->levels)
    snprintf (value, sizeof value, "%d", info->levels), item (data, "Levels", value);
  /* An amount of 0 is a real one, so its presence comes from the table. */
  if (info->operation && es_op_from_name (info->operation, &op) && es_op_uses (op, ES_PARAM_AMOUNT))
    snprintf (value, sizeof value, "%.9g", (double) info->amount), item (data, "Amount", value);
  /* A clip of 0 is a real one (no clipping), as the amount's. */
  if (info->operation && es_op_from_name (info->operation, &op) && es_op_uses (op, ES_PARAM_CLIP))
    snprintf (value, sizeof value, "%.17g", info->clip), item (data, "Clip", value);
  if (info->tile_columns)
    snprintf (value, sizeof value, "%dx%d", info->tile_columns, info->tile_rows), item (data, "Tiles", value);
  if (info->units)
    item (data, "Units", info->units);
  if (info->definition[0])
    item (data, "Definition", info->definition);
}

static void
text_add_item (void *chunks, const char *key, const char *value)
{
  text_add (chunks, key, "%s", value);
}

/* The chunks every export carries. */
static void
text_add_info (TextChunks *chunks, const EsValueInfo *info)
{
  double x, y;

  es_value_info_each (info, text_add_item, chunks);
  /* pHYs holds whole pixels a metre, from 1 to 2^31 − 1. */
  if (info != NULL && es_image_meta_density (&info->pixel_size, ES_LENGTH_M, &x, &y) && x >= 0.5 && y >= 0.5
      && x < 2147483647.0 && y < 2147483647.0)
    {
      chunks->pixels_per_metre_x = (uint32_t) lround (x);
      chunks->pixels_per_metre_y = (uint32_t) lround (y);
    }
}

/* A value in its unit scale as shown: an original's samples stand for
 * value_offset + sample × scale (results have no offset, and keep their
 * bytes exactly: −0 stays −0). */
static double
shown_value (const EsValueInfo *info, double scaled)
{
  return info != NULL && info->value_offset != 0 ? info->value_offset + scaled : scaled;
}

static double
unit_scale_of (const EsValueInfo *info)
{
  return info && info->unit_scale != 0 ? info->unit_scale : 1.0;
}

/* A PNG of these rows, compressed as the process's setting says. */
static bool
write_png (const char *path, int width, int height, int bit_depth, int channels, const uint8_t (*palette)[3],
           const TextChunks *chunks, EsPngFillRows fill_rows, void *data, EsRowGate *gate, EsError *error)
{
  EsPngPicture picture = {
    .width = width,
    .height = height,
    .bit_depth = bit_depth,
    .channels = channels,
    .palette = palette,
    .compression = es_save_get_compression (),
    .text = chunks->text,
    .n_text = chunks->n,
    .pixels_per_metre_x = chunks->pixels_per_metre_x,
    .pixels_per_metre_y = chunks->pixels_per_metre_y,
    .fill_rows = fill_rows,
    .data = data,
    .gate = gate,
  };

  return es_png_write (path, &picture, error);
}

static bool
check_values (const char *path, const EsImage *values, EsError *error)
{
  if (!values || !values->pixels || values->width <= 0 || values->height <= 0
      || (values->format != ES_FORMAT_U8 && values->format != ES_FORMAT_U16 && values->format != ES_FORMAT_F32)
      || values->stride < (size_t) values->width * es_format_size (values->format))
    return es_save_fail (error, ES_ERROR_INVALID, path, "no image to write");
  return true;
}

/* Whether some pixels may have no value (NaN): the job says so (a mask, a
 * footprint), or the values show it; values still arriving through a gate
 * cannot be looked at first, so there the job alone decides. */
static bool
may_have_no_data (const EsImage *values, const EsValueInfo *info, EsRowGate *gate)
{
  if (info != NULL && info->may_have_no_data)
    return true;
  return gate == NULL && es_image_has_nan (values);
}

/* ---- 16-bit gray ------------------------------------------------------ */

/* Values as 16-bit gray samples, round ((v - lo) * s) within 0..top, NaN
 * as 65535, XOR flip (65535 for a reversed gray map, else 0). */
typedef struct {
  const EsImage *values;
  double lo, s; /* s = top / (hi - lo) */
  unsigned top; /* 65535, or 65534 when 65535 marks a pixel with no value */
  unsigned flip;
} Gray16Rows;

static void
gray16_fill_row (const Gray16Rows *r, int y, uint8_t *row)
{
  for (int x = 0; x < r->values->width; x++)
    {
      double value = es_image_sample (r->values, x, y);
      double t = (value - r->lo) * r->s;
      unsigned int v;
      t = t > 0 ? t : 0;
      t = t < r->top ? t : r->top;
      v = isnan (value) ? 65535u : (unsigned int) (t + 0.5) ^ r->flip;
      /* PNG samples are big-endian. */
      row[2 * x] = (uint8_t) (v >> 8);
      row[2 * x + 1] = (uint8_t) v;
    }
}

static void
gray16_fill_rows (void *data, int y, int n, uint8_t *rows, size_t stride)
{
  const Gray16Rows *r = data;

  for (int i = 0; i < n; i++)
    gray16_fill_row (r, y + i, rows + (size_t) i * stride);
}

/* The gray map of 16-bit values keeps their 16 bits, as the gray map of
 * 8-bit values writes their 8: over the absolute range (0..65535, the
 * table's range of a 16-bit result) the file holds the values themselves,
 * as cv2.imread (..., IMREAD_UNCHANGED) reads them back. */
static bool
write_gray16_png (const char *path, const EsImage *values, const EsColorScale *scale, const TextChunks *chunks,
                  EsRowGate *gate, EsError *error)
{
  Gray16Rows rows = {
    .values = values,
    .lo = scale->lo,
    .s = scale->hi > scale->lo ? 65535.0 / (scale->hi - scale->lo) : 0.0,
    .top = 65535,
    .flip = scale->reversed ? 65535 : 0,
  };

  return write_png (path, values->width, values->height, 16, 1, NULL, chunks, gray16_fill_rows, &rows, gate, error);
}

/* ---- Heatmap ---------------------------------------------------------- */

/* Rows are rendered as the encoder's bands ask for them, on its threads,
 * so an export needs no second image-sized buffer. */
typedef struct {
  const EsImage *values;
  const EsColorScale *scale;
  const EsColorbarLayout *bar; /* NULL: the heatmap alone */
} HeatmapRows;

/* Image rows y .. y + n - 1 into rgb, one every stride bytes. */
static void
render_rows (const HeatmapRows *h, int y, int n, uint8_t *rgb, size_t stride)
{
  EsImage band = *h->values;

  band.height = n;
  band.pixels = (void *) es_image_row (h->values, y);
  es_render_heatmap (&band, h->scale, rgb, stride);
}

static void
heatmap_fill_rows (void *data, int y, int n, uint8_t *rows, size_t stride)
{
  const HeatmapRows *h = data;
  const EsColorbarLayout *bar = h->bar;
  int first, last;

  if (!bar)
    {
      render_rows (h, y, n, rows, stride);
      return;
    }
  /* The canvas around the image first, then the image's rows in place
   * (the layout fills the image's span with the background only). */
  for (int i = 0; i < n; i++)
    es_colorbar_layout_row (bar, y + i, NULL, rows + (size_t) i * stride);
  first = y - bar->margin > 0 ? y - bar->margin : 0;
  last = y + n - bar->margin < h->values->height ? y + n - bar->margin : h->values->height;
  if (last > first)
    render_rows (h, first, last - first, rows + (size_t) (first + bar->margin - y) * stride + 3 * (size_t) bar->margin,
                 stride);
}

/* One colormap index a pixel: the gray map's levels (es_heatmap_is_gray),
 * or a palette PNG's indices. */
static void
index_fill_rows (void *data, int y, int n, uint8_t *rows, size_t stride)
{
  const HeatmapRows *h = data;
  EsImage band = *h->values;

  band.height = n;
  band.pixels = (void *) es_image_row (h->values, y);
  es_render_indices (&band, h->scale, rows, stride);
}

bool
es_save_heatmap_png (const char *path, const EsImage *values, const EsColorScale *scale, bool colorbar,
                     const EsValueInfo *info, EsError *error)
{
  return es_save_heatmap_png_gated (path, values, scale, colorbar, info, NULL, error);
}

bool
es_save_heatmap_png_gated (const char *path, const EsImage *values, const EsColorScale *scale, bool colorbar,
                           const EsValueInfo *info, EsRowGate *gate, EsError *error)
{
  double unit_scale = unit_scale_of (info);
  HeatmapRows rows = { .values = values, .scale = scale };
  EsColorbarLayout bar;
  TextChunks chunks = { .n = 0 };
  int width, height;

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
  text_add_info (&chunks, info);
  text_add (&chunks, "Range", "%.9g..%.9g", shown_value (info, scale->lo * unit_scale),
            shown_value (info, scale->hi * unit_scale));
  if (!colorbar && es_heatmap_is_gray (values, scale) && values->format == ES_FORMAT_U16)
    return write_gray16_png (path, values, scale, &chunks, gate, error);
  if (!colorbar && es_heatmap_is_gray (values, scale))
    return write_png (path, width, height, 8, 1, NULL, &chunks, index_fill_rows, &rows, gate, error);
  /* Without a colorbar (whose labels have colours of their own) and without
   * NaN (no-data magenta, a 257th colour), every pixel is one of the map's
   * 256: a palette PNG gives every decoder the same RGB pixels from a third
   * of the bytes, so it is filtered and compressed three times faster. */
  if (!colorbar && !may_have_no_data (values, info, gate))
    return write_png (path, width, height, 8, 1, es_colormap_table (scale->map), &chunks, index_fill_rows, &rows, gate,
                      error);
  return write_png (path, width, height, 8, 3, NULL, &chunks, heatmap_fill_rows, &rows, gate, error);
}

bool
es_heatmap_canvas_render (const EsImage *values, const EsColorScale *scale, bool colorbar, const EsValueInfo *info,
                          EsHeatmapCanvas *canvas, EsError *error)
{
  HeatmapRows rows = { .values = values, .scale = scale };
  EsColorbarLayout bar;

  memset (canvas, 0, sizeof *canvas);
  if (!values || !values->pixels || values->width <= 0 || values->height <= 0 || !scale)
    return es_error_set (error, ES_ERROR_INVALID, "cannot draw the heatmap: no image or no colour scale");
  canvas->width = values->width;
  canvas->height = values->height;
  if (colorbar)
    {
      es_colorbar_layout_init (&bar, values->width, values->height, scale, info);
      rows.bar = &bar;
      canvas->width = bar.width;
      canvas->height = bar.height;
      canvas->image_x = canvas->image_y = bar.margin;
    }
  canvas->stride = 3 * (size_t) canvas->width;
  if ((canvas->rgb = malloc (canvas->stride * canvas->height)) == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot draw the heatmap: out of memory for %d × %d pixels",
                         canvas->width, canvas->height);
  heatmap_fill_rows (&rows, 0, canvas->height, canvas->rgb, canvas->stride);
  return true;
}

/* ---- Raw 16-bit ------------------------------------------------------- */

bool
es_save_raw16_png (const char *path, const EsImage *values, double lo, double hi, const EsValueInfo *info,
                   EsError *error)
{
  return es_save_raw16_png_gated (path, values, lo, hi, info, NULL, error);
}

bool
es_save_raw16_png_gated (const char *path, const EsImage *values, double lo, double hi, const EsValueInfo *info,
                         EsRowGate *gate, EsError *error)
{
  double unit_scale = unit_scale_of (info);
  bool spread = hi > lo;
  /* Pixels with no value (NaN) get a sample of their own, which the
   * tEXt names; the values then span one sample less. */
  bool gaps = may_have_no_data (values, info, gate);
  unsigned top = gaps ? 65534 : 65535;
  Gray16Rows rows = { .values = values, .lo = lo, .s = spread ? top / (hi - lo) : 0.0, .top = top };
  TextChunks chunks = { .n = 0 };

  if (!check_values (path, values, error))
    return false;
  text_add_info (&chunks, info);
  text_add (&chunks, "ValueOffset", "%.9g", lo * unit_scale);
  text_add (&chunks, "ValueScale", "%.9g", spread ? (hi - lo) * unit_scale / top : 0.0);
  if (gaps)
    text_add (&chunks, "NoData", "65535");
  return write_png (path, values->width, values->height, 16, 1, NULL, &chunks, gray16_fill_rows, &rows, gate, error);
}

/* ---- RGB -------------------------------------------------------------- */

typedef struct {
  const uint8_t *rgb;
  int width;
  size_t stride;
} RgbRows;

static void
rgb_fill_rows (void *data, int y, int n, uint8_t *rows, size_t stride)
{
  const RgbRows *r = data;

  for (int i = 0; i < n; i++)
    memcpy (rows + (size_t) i * stride, r->rgb + (size_t) (y + i) * r->stride, 3 * (size_t) r->width);
}

bool
es_save_rgb_png (const char *path, const uint8_t *rgb, int width, int height, size_t stride, EsError *error)
{
  RgbRows rows = { .rgb = rgb, .width = width, .stride = stride };
  TextChunks chunks = { .n = 0 };

  if (!rgb || width <= 0 || height <= 0 || stride < 3 * (size_t) width)
    return es_save_fail (error, ES_ERROR_INVALID, path, "no image to write");
  text_add_info (&chunks, NULL);
  return write_png (path, width, height, 8, 3, NULL, &chunks, rgb_fill_rows, &rows, NULL, error);
}

bool
es_save_heatmap_canvas_png (const char *path, const EsHeatmapCanvas *canvas, const EsColorScale *scale,
                            const EsValueInfo *info, EsError *error)
{
  RgbRows rows = { .rgb = canvas->rgb, .width = canvas->width, .stride = canvas->stride };
  TextChunks chunks = { .n = 0 };

  if (!canvas->rgb || canvas->width <= 0 || canvas->height <= 0)
    return es_save_fail (error, ES_ERROR_INVALID, path, "no image to write");
  text_add_info (&chunks, info);
  text_add (&chunks, "Range", "%.9g..%.9g", scale->lo * unit_scale_of (info), scale->hi * unit_scale_of (info));
  return write_png (path, canvas->width, canvas->height, 8, 3, NULL, &chunks, rgb_fill_rows, &rows, NULL, error);
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
es_save_text_matrix (const char *path, const EsImage *values, const EsValueInfo *info, EsError *error)
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
            case ES_FORMAT_U8: used += (size_t) format_int (buffer + used, ((const uint8_t *) row)[x]); break;
            case ES_FORMAT_U16: used += (size_t) format_int (buffer + used, ((const uint16_t *) row)[x]); break;
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
