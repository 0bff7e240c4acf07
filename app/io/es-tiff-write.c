/* SPDX-License-Identifier: MIT */
/* TIFF output: gray pages (8/16-bit integer, 32-bit float), Deflate-compressed strips or
 * uncompressed (the compression setting), laid out so that they are written front to back, with no
 * seeking: into an atomic file, a pipe or a device alike. BigTIFF when the file could pass 4 GiB.
 * Needs no libtiff. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef ES_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "es-calibration.h"
#include "es-path.h"
#include "es-save-gated.h"
#include "es-tiff.h"

/* Strips of about this many bytes (at least one row): deflated, each is a
 * task for one core. */
#define ES_TIFF_STRIP_BYTES (1u << 20)

enum {
  TAG_NEW_SUBFILE_TYPE = 254,
  TAG_IMAGE_WIDTH = 256,
  TAG_IMAGE_LENGTH = 257,
  TAG_BITS_PER_SAMPLE = 258,
  TAG_COMPRESSION = 259,
  TAG_PHOTOMETRIC = 262,
  TAG_IMAGE_DESCRIPTION = 270,
  TAG_STRIP_OFFSETS = 273,
  TAG_SAMPLES_PER_PIXEL = 277,
  TAG_ROWS_PER_STRIP = 278,
  TAG_STRIP_BYTE_COUNTS = 279,
  TAG_X_RESOLUTION = 282,
  TAG_Y_RESOLUTION = 283,
  TAG_PLANAR_CONFIG = 284,
  TAG_RESOLUTION_UNIT = 296,
  TAG_PAGE_NUMBER = 297,
  TAG_SOFTWARE = 305,
  TAG_PREDICTOR = 317,
  TAG_SAMPLE_FORMAT = 339,
};

enum { COMPRESSION_NONE = 1, COMPRESSION_DEFLATE = 8 };

enum { TYPE_ASCII = 2, TYPE_SHORT = 3, TYPE_LONG = 4, TYPE_RATIONAL = 5, TYPE_LONG8 = 16 };

enum { RESOLUTION_UNIT_CENTIMETRE = 3 };

/* What one thread reuses from strip to strip. */
typedef struct {
  uint8_t *samples; /* the strip's stored rows */
  size_t capacity;  /* bytes of samples */
#ifdef ES_HAVE_LIBDEFLATE
  struct libdeflate_compressor *compressor;
#endif
} Deflater;

struct EsTiffWriter {
  EsAtomicFile *file;
  FILE *stream;
  char *path;
  bool big;  /* BigTIFF: 8-byte offsets */
  int level; /* deflate level of every strip; 0: uncompressed */
  int pages, added;
  uint64_t offset; /* bytes written so far */
  /* Deflates the pages of one strip, kept from page to page: a compressor
   * costs more to set up than a small page to deflate. */
  Deflater single;
};

static void
deflater_clear (Deflater *d)
{
  free (d->samples);
#ifdef ES_HAVE_LIBDEFLATE
  libdeflate_free_compressor (d->compressor);
#endif
  *d = (Deflater){ 0 };
}

/* The Software tag (ImageDescription says it too). */
static const char software[] = "Entroscope";

static bool
es_tiff_write_fail (EsTiffWriter *writer, EsError *error, EsErrorCode code, const char *reason)
{
  char shown[ES_PATH_MESSAGE_MAX + 1];

  return es_error_set (error, code, "cannot write '%s': %s",
                       es_path_shorten (writer->path, ES_PATH_MESSAGE_MAX, shown, sizeof shown), reason);
}

/* The deflate level of each compression setting, 0 for none. Measured on an
 * entropy map of floats (docs/performance/files.md, "Encoding TIFF"): level
 * 1 keeps 33 % of the bytes at 200 MB/s a core, level 6 31 % at 65 MB/s, so
 * the default is level 1; fast skips compression, small takes level 9. */
static int
tiff_deflate_level (EsCompression compression)
{
  switch (compression)
    {
    case ES_COMPRESSION_FAST: return 0;
    case ES_COMPRESSION_SMALL: return 9;
    case ES_COMPRESSION_DEFAULT:
    default: return 1;
    }
}

uint64_t
es_tiff_page_bytes (const EsImage *values)
{
  return (uint64_t) values->width * (uint64_t) values->height * es_format_size (values->format);
}

EsTiffWriter *
es_tiff_writer_open (const char *path, int pages, uint64_t bytes, EsError *error)
{
  EsTiffWriter *writer = calloc (1, sizeof *writer);
  int level = tiff_deflate_level (es_save_get_compression ());
  /* Headers, descriptions and strip tables: a few KiB a page, and at most
   * 16 bytes for every 512 KiB strip; deflate can add 1/128 to samples that
   * do not compress. */
  uint64_t estimate = 16 + bytes + (level > 0 ? bytes / 128 : 0) + (uint64_t) pages * 8192
                      + 16 * (bytes / (512u << 10) + (uint64_t) pages);

  if (writer == NULL || (writer->path = strdup (path)) == NULL)
    {
      free (writer);
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
      return NULL;
    }
  writer->pages = pages;
  writer->level = level;
  writer->big = estimate > UINT32_MAX;
  writer->file = es_atomic_file_open (path, error);
  if (writer->file == NULL)
    {
      free (writer->path);
      free (writer);
      return NULL;
    }
  writer->stream = es_atomic_file_stream (writer->file);
  return writer;
}

void
es_tiff_writer_abort (EsTiffWriter *writer)
{
  if (writer == NULL)
    return;
  es_atomic_file_abort (writer->file);
  deflater_clear (&writer->single);
  free (writer->path);
  free (writer);
}

bool
es_tiff_writer_commit (EsTiffWriter *writer, EsError *error)
{
  bool ok;

  if (writer->added != writer->pages)
    {
      es_tiff_write_fail (writer, error, ES_ERROR_INVALID, "not every page was written");
      es_tiff_writer_abort (writer);
      return false;
    }
  ok = es_atomic_file_commit (writer->file, error);
  deflater_clear (&writer->single);
  free (writer->path);
  free (writer);
  return ok;
}

/* ---- bytes, in host order (the header says which) ---- */

static void
put (EsTiffWriter *writer, const void *bytes, size_t n)
{
  /* A failed write sets the stream's error flag; commit reports it. */
  fwrite (bytes, 1, n, writer->stream);
  writer->offset += n;
}

static void
put16 (EsTiffWriter *writer, uint16_t v)
{
  put (writer, &v, 2);
}

static void
put32 (EsTiffWriter *writer, uint32_t v)
{
  put (writer, &v, 4);
}

static void
put64 (EsTiffWriter *writer, uint64_t v)
{
  put (writer, &v, 8);
}

/* An offset or a count: 8 bytes in BigTIFF, else 4. */
static void
put_word (EsTiffWriter *writer, uint64_t v)
{
  if (writer->big)
    put64 (writer, v);
  else
    put32 (writer, (uint32_t) v);
}

static void
pad_to (EsTiffWriter *writer, uint64_t offset)
{
  static const uint8_t zeros[16];

  while (writer->offset < offset)
    put (writer, zeros, offset - writer->offset < sizeof zeros ? (size_t) (offset - writer->offset) : sizeof zeros);
}

static void
put_header (EsTiffWriter *writer)
{
  uint16_t probe = 1;

  put (writer, *(uint8_t *) &probe ? "II" : "MM", 2);
  if (writer->big)
    {
      put16 (writer, 43);
      put16 (writer, 8);
      put16 (writer, 0);
      put64 (writer, 16);
    }
  else
    {
      put16 (writer, 42);
      put32 (writer, 8);
    }
}

/* One IFD entry; `value` is the value itself (SHORT and LONG fit in place)
 * or the offset of the values. */
static void
put_entry (EsTiffWriter *writer, uint16_t tag, uint16_t type, uint64_t count, uint64_t value)
{
  put16 (writer, tag);
  put16 (writer, type);
  put_word (writer, count);
  /* A value in place is left-justified in the field. */
  if (type == TYPE_SHORT && count == 1)
    {
      put16 (writer, (uint16_t) value);
      put16 (writer, 0);
      if (writer->big)
        put32 (writer, 0);
    }
  else if (type == TYPE_LONG && count == 1 && writer->big)
    {
      put32 (writer, (uint32_t) value);
      put32 (writer, 0);
    }
  else
    put_word (writer, value);
}

/* "Key=value" lines: the facts of PNG's tEXt chunks (es_value_info_each). */
typedef struct {
  char *out;
  size_t size, used;
} Description;

static void
describe_item (void *data, const char *key, const char *value)
{
  Description *d = data;

  if (d->used < d->size)
    d->used += (size_t) snprintf (d->out + d->used, d->size - d->used, "%s=%s\n", key, value);
}

/* The first page of a calibrated stack whose planes' spacing is known
 * starts with ImageJ's description, which Fiji and tifffile read the
 * spacing from: `unit=um` because ImageJ turns the resolution in pixels a
 * centimetre (ResolutionUnit 3, written below) into µm exactly when the
 * description's unit is "um" (ij.io.FileOpener), and `spacing=` in µm. */
static void
describe_imagej_stack (const EsImageMeta *pixel_size, int pages, Description *d)
{
  char spacing[32];

  es_format_significant (spacing, sizeof spacing, pixel_size->pixel_depth * 1e6, 9);
  d->used += (size_t) snprintf (d->out, d->size, "ImageJ=1.11a\nimages=%d\nslices=%d\nunit=um\nspacing=%s\n", pages,
                                pages, spacing);
}

static void
describe (const EsValueInfo *info, int pages, bool first_page, char *out, size_t size)
{
  Description d = { .out = out, .size = size };

  out[0] = '\0';
  if (info != NULL && first_page && pages > 1 && es_image_meta_calibrated (&info->pixel_size)
      && info->pixel_size.pixel_depth > 0 && isfinite (info->pixel_size.pixel_depth))
    describe_imagej_stack (&info->pixel_size, pages, &d);
  es_value_info_each (info, describe_item, &d);
}

/* ---- strips ---- */

/* A page's strips: rows_per_strip rows each (the last may have fewer). */
typedef struct {
  const EsImage *values;
  size_t row_bytes;
  uint64_t rows_per_strip, count;
  double scale; /* floats are written times this (units) */
} Strips;

static int
strip_rows (const Strips *strips, uint64_t s)
{
  uint64_t rows = (uint64_t) strips->values->height - s * strips->rows_per_strip;

  return (int) (rows < strips->rows_per_strip ? rows : strips->rows_per_strip);
}

/* Row y as the file stores it: floats times the scale, integers as they are
 * or, with `predict` (TIFF's predictor 2), each sample less its left
 * neighbour, which deflate compresses far better on images. Returns the
 * image's own row when nothing changes. */
static const void *
stored_row (const Strips *strips, int y, bool predict, void *out)
{
  const EsImage *values = strips->values;
  const void *src = es_image_row (values, y);
  int width = values->width;

  if (values->format == ES_FORMAT_F32)
    {
      if (strips->scale == 1.0)
        return src;
      for (int x = 0; x < width; x++)
        ((float *) out)[x] = (float) (((const float *) src)[x] * strips->scale);
      return out;
    }
  if (!predict)
    return src;
  if (values->format == ES_FORMAT_U8)
    {
      const uint8_t *in = src;
      uint8_t *diff = out;
      diff[0] = in[0];
      for (int x = 1; x < width; x++)
        diff[x] = (uint8_t) (in[x] - in[x - 1]);
    }
  else
    {
      const uint16_t *in = src;
      uint16_t *diff = out;
      diff[0] = in[0];
      for (int x = 1; x < width; x++)
        diff[x] = (uint16_t) (in[x] - in[x - 1]);
    }
  return out;
}

/* A strip as TIFF's Deflate (code 8) stores it: one zlib stream. */
typedef struct {
  uint8_t *bytes;
  size_t size;
} DeflatedStrip;

/* Ready for strips of `strips`, which may be larger than the last ones;
 * false when out of memory. */
static bool
deflater_ready (Deflater *d, const Strips *strips, int level)
{
  size_t bytes = (size_t) strips->rows_per_strip * strips->row_bytes;

  if (d->capacity < bytes)
    {
      uint8_t *grown = realloc (d->samples, bytes);
      if (grown == NULL)
        return false;
      d->samples = grown;
      d->capacity = bytes;
    }
#ifdef ES_HAVE_LIBDEFLATE
  if (d->compressor == NULL)
    d->compressor = libdeflate_alloc_compressor (level);
  return d->compressor != NULL;
#else
  (void) level;
  return true;
#endif
}

/* Deflates strip s into out at `level`; false when out of memory. */
static bool
deflate_strip (Deflater *d, const Strips *strips, uint64_t s, int level, DeflatedStrip *out)
{
  bool predict = strips->values->format != ES_FORMAT_F32;
  int y0 = (int) (s * strips->rows_per_strip), rows = strip_rows (strips, s);
  size_t n = (size_t) rows * strips->row_bytes;
  uint8_t *shrunk;

  for (int i = 0; i < rows; i++)
    {
      uint8_t *row = d->samples + (size_t) i * strips->row_bytes;
      const void *stored = stored_row (strips, y0 + i, predict, row);
      if (stored != row)
        memcpy (row, stored, strips->row_bytes);
    }
#ifdef ES_HAVE_LIBDEFLATE
  {
    size_t bound = libdeflate_zlib_compress_bound (d->compressor, n);
    out->bytes = malloc (bound);
    out->size = out->bytes != NULL ? libdeflate_zlib_compress (d->compressor, d->samples, n, out->bytes, bound) : 0;
  }
#else
  {
    uLongf size = compressBound ((uLong) n);
    out->bytes = malloc (size);
    out->size = out->bytes != NULL && compress2 (out->bytes, &size, d->samples, (uLong) n, level) == Z_OK ? size : 0;
  }
#endif
  if (out->size == 0)
    return false;
  shrunk = realloc (out->bytes, out->size);
  if (shrunk != NULL)
    out->bytes = shrunk;
  return true;
}

/* Deflates every strip of n pages of the same size on every core (strip s
 * of page p into out[p · count + s]), each once the gate has released its
 * rows. Pages go together so that a volume of one-strip pages still keeps
 * every core busy. ES_ERROR_CANCELLED when the gate's producer failed. */
static bool
deflate_strips (EsTiffWriter *writer, const Strips *pages, int n, EsRowGate *gate, DeflatedStrip *out, EsError *error)
{
  _Atomic int failure = 0; /* 1: out of memory, 2: the image was not completed */
  uint64_t count = pages[0].count, total = count * (uint64_t) n;

#pragma omp parallel if (total > 1 && !omp_in_parallel())
  {
    /* One strip in all (a small page of a stack) takes the writer's own
     * deflater, set up once for every page. */
    Deflater own = { 0 }, *d = total == 1 ? &writer->single : &own;
    bool ready = true;

#pragma omp for schedule(dynamic, 1)
    for (uint64_t i = 0; i < total; i++)
      {
        const Strips *strips = &pages[i / count];
        uint64_t s = i % count;

        if (failure != 0)
          continue;
        if (!es_row_gate_wait (gate, (int) (s * strips->rows_per_strip) + strip_rows (strips, s)))
          failure = 2;
        else if (!(ready = ready && deflater_ready (d, strips, writer->level))
                 || !deflate_strip (d, strips, s, writer->level, &out[i]))
          failure = 1;
      }
    deflater_clear (&own);
  }
  if (failure == 2)
    return es_tiff_write_fail (writer, error, ES_ERROR_CANCELLED, "its image was not completed");
  if (failure == 1)
    return es_tiff_write_fail (writer, error, ES_ERROR_NO_MEMORY, "out of memory");
  return true;
}

/* Writes the strips uncompressed, each once the gate has released its rows. */
static bool
put_plain_strips (EsTiffWriter *writer, const Strips *strips, EsRowGate *gate, EsError *error)
{
  const EsImage *values = strips->values;
  void *row = NULL;

  if (values->format == ES_FORMAT_F32 && strips->scale != 1.0)
    {
      row = malloc (strips->row_bytes);
      if (row == NULL)
        return es_tiff_write_fail (writer, error, ES_ERROR_NO_MEMORY, "out of memory");
    }
  for (int y = 0; y < values->height && !ferror (writer->stream); y++)
    {
      /* A strip's worth of rows at a time: a wake-up costs more than a row. */
      if (gate != NULL && y % strips->rows_per_strip == 0 && !es_row_gate_wait (gate, y + (int) strips->rows_per_strip))
        {
          free (row);
          return es_tiff_write_fail (writer, error, ES_ERROR_CANCELLED, "its image was not completed");
        }
      put (writer, stored_row (strips, y, false, row), strips->row_bytes);
    }
  free (row);
  return true;
}

/* ---- one page ---- */

/* Where one page's parts go in the file: its IFD, then the IFD's
 * out-of-line values, then the samples, each at an even (BigTIFF: 8-byte)
 * offset as TIFF asks. */
typedef struct {
  bool stack, deflated, predict;
  /* The input's pixel size as XResolution and YResolution, pixels a
   * centimetre, each a numerator and a denominator (ResolutionUnit 3). */
  bool calibrated;
  uint32_t resolution[2][2];
  int entries;
  size_t description_length;
  uint64_t data_bytes;
  uint64_t description_at, software_at, resolution_at, offsets_at, counts_at, data_at;
  uint64_t next; /* the next page's IFD; 0 on the last page */
} PageLayout;

/* A positive number as a TIFF RATIONAL: the largest power-of-ten
 * denominator (up to 10^6) whose numerator fits 32 bits, so that 15384.6
 * pixels a centimetre (0.65 µm) keeps its digits. */
static bool
rational_of (double v, uint32_t out[2])
{
  uint32_t denominator = 1000000;

  if (!(v > 0) || v >= 4294967295.0)
    return false;
  while (denominator > 1 && v * denominator >= 4294967295.0)
    denominator /= 10;
  out[0] = (uint32_t) llround (v * denominator);
  out[1] = denominator;
  /* In lowest terms: 72 dpi is 2835/100 a centimetre, not 28350000/1000000. */
  while (out[1] % 10 == 0 && out[0] % 10 == 0)
    {
      out[0] /= 10;
      out[1] /= 10;
    }
  return out[0] > 0;
}

/* The pixel size as pixels a centimetre along x and y; false when the
 * image is uncalibrated or the density fits no RATIONAL. */
static bool
resolution_of (const EsImageMeta *meta, uint32_t resolution[2][2])
{
  double x, y;

  return es_image_meta_density (meta, ES_LENGTH_CM, &x, &y) && rational_of (x, resolution[0])
         && rational_of (y, resolution[1]);
}

/* Strips of about ES_TIFF_STRIP_BYTES, never more rows than the image has. */
static void
plan_strips (Strips *strips, const EsValueInfo *info)
{
  const EsImage *values = strips->values;

  strips->rows_per_strip = strips->row_bytes >= ES_TIFF_STRIP_BYTES ? 1 : ES_TIFF_STRIP_BYTES / strips->row_bytes;
  if (strips->rows_per_strip > (uint64_t) values->height)
    strips->rows_per_strip = (uint64_t) values->height;
  strips->count = ((uint64_t) values->height + strips->rows_per_strip - 1) / strips->rows_per_strip;
  strips->scale = info != NULL && info->unit_scale != 0 ? info->unit_scale : 1.0;
}

/* The page's offsets, from where the writer is now (its IFD). */
static void
plan_page (const EsTiffWriter *writer, const Strips *strips, PageLayout *page)
{
  uint64_t word = writer->big ? 8 : 4, entry = writer->big ? 20 : 12;
  uint64_t table_bytes = strips->count > 1 ? strips->count * word : 0;

  page->entries = 13 + (page->stack ? 2 : 0) + (page->predict ? 1 : 0) + (page->calibrated ? 3 : 0);
  page->description_at = writer->offset + (writer->big ? 8 : 2) + page->entries * entry + word;
  page->software_at = (page->description_at + page->description_length + 7) & ~7ull;
  page->resolution_at = (page->software_at + sizeof software + 7) & ~7ull;
  /* A BigTIFF entry holds a RATIONAL in place; a classic one points at it. */
  page->offsets_at = page->resolution_at + (page->calibrated && !writer->big ? 16 : 0);
  page->counts_at = page->offsets_at + table_bytes;
  page->data_at = (page->counts_at + table_bytes + 15) & ~15ull;
  page->next = writer->added + 1 < writer->pages ? (page->data_at + page->data_bytes + 7) & ~7ull : 0;
}

static void
put_ifd (EsTiffWriter *writer, const Strips *strips, const PageLayout *page, size_t sample)
{
  const EsImage *values = strips->values;

  if (writer->big)
    put64 (writer, (uint64_t) page->entries);
  else
    put16 (writer, (uint16_t) page->entries);
  if (page->stack)
    put_entry (writer, TAG_NEW_SUBFILE_TYPE, TYPE_LONG, 1, 2); /* a page of a multi-page image */
  put_entry (writer, TAG_IMAGE_WIDTH, TYPE_LONG, 1, (uint64_t) values->width);
  put_entry (writer, TAG_IMAGE_LENGTH, TYPE_LONG, 1, (uint64_t) values->height);
  put_entry (writer, TAG_BITS_PER_SAMPLE, TYPE_SHORT, 1, sample * 8);
  put_entry (writer, TAG_COMPRESSION, TYPE_SHORT, 1, page->deflated ? COMPRESSION_DEFLATE : COMPRESSION_NONE);
  put_entry (writer, TAG_PHOTOMETRIC, TYPE_SHORT, 1, 1); /* MinIsBlack */
  put_entry (writer, TAG_IMAGE_DESCRIPTION, TYPE_ASCII, page->description_length, page->description_at);
  put_entry (writer, TAG_STRIP_OFFSETS, writer->big ? TYPE_LONG8 : TYPE_LONG, strips->count,
             strips->count > 1 ? page->offsets_at : page->data_at);
  put_entry (writer, TAG_SAMPLES_PER_PIXEL, TYPE_SHORT, 1, 1);
  put_entry (writer, TAG_ROWS_PER_STRIP, TYPE_LONG, 1, strips->rows_per_strip);
  put_entry (writer, TAG_STRIP_BYTE_COUNTS, writer->big ? TYPE_LONG8 : TYPE_LONG, strips->count,
             strips->count > 1 ? page->counts_at : page->data_bytes);
  if (page->calibrated)
    for (int axis = 0; axis < 2; axis++)
      {
        if (!writer->big)
          {
            put_entry (writer, axis == 0 ? TAG_X_RESOLUTION : TAG_Y_RESOLUTION, TYPE_RATIONAL, 1,
                       page->resolution_at + 8 * (uint64_t) axis);
            continue;
          }
        put16 (writer, axis == 0 ? TAG_X_RESOLUTION : TAG_Y_RESOLUTION);
        put16 (writer, TYPE_RATIONAL);
        put_word (writer, 1);
        put32 (writer, page->resolution[axis][0]);
        put32 (writer, page->resolution[axis][1]);
      }
  put_entry (writer, TAG_PLANAR_CONFIG, TYPE_SHORT, 1, 1);
  if (page->calibrated)
    put_entry (writer, TAG_RESOLUTION_UNIT, TYPE_SHORT, 1, RESOLUTION_UNIT_CENTIMETRE);
  if (page->stack)
    {
      /* Two SHORTs in place: this page, and how many there are. */
      put16 (writer, TAG_PAGE_NUMBER);
      put16 (writer, TYPE_SHORT);
      put_word (writer, 2);
      put16 (writer, (uint16_t) writer->added);
      put16 (writer, (uint16_t) (writer->pages > 65535 ? 65535 : writer->pages));
      if (writer->big)
        put32 (writer, 0);
    }
  put_entry (writer, TAG_SOFTWARE, TYPE_ASCII, sizeof software, page->software_at);
  if (page->predict)
    put_entry (writer, TAG_PREDICTOR, TYPE_SHORT, 1, 2); /* horizontal differencing */
  put_entry (writer, TAG_SAMPLE_FORMAT, TYPE_SHORT, 1, values->format == ES_FORMAT_F32 ? 3 : 1);
  put_word (writer, page->next);
}

/* Where each strip starts, then how long each is; with one strip both
 * are in the IFD itself. */
static void
put_strip_table (EsTiffWriter *writer, const Strips *strips, const PageLayout *page, const DeflatedStrip *pieces)
{
  uint64_t at = page->data_at;

  if (strips->count <= 1)
    return;
  for (uint64_t s = 0; s < strips->count; s++)
    {
      put_word (writer, at);
      at += page->deflated ? pieces[s].size : (uint64_t) strip_rows (strips, s) * strips->row_bytes;
    }
  for (uint64_t s = 0; s < strips->count; s++)
    put_word (writer, page->deflated ? pieces[s].size : (uint64_t) strip_rows (strips, s) * strips->row_bytes);
}

static void
free_pieces (DeflatedStrip *pieces, uint64_t count)
{
  for (uint64_t s = 0; pieces != NULL && s < count; s++)
    free (pieces[s].bytes);
  free (pieces);
}

/* One page on its way into the file: its strips, where its parts go, its
 * ImageDescription and, when the writer deflates, its deflated strips. */
typedef struct {
  Strips strips;
  PageLayout layout;
  size_t sample;
  char description[1024];
} Page;

/* first_page: the file's first page, which carries the stack's ImageJ description. */
static bool
page_prepare (EsTiffWriter *writer, Page *page, const EsImage *values, const EsValueInfo *info, bool first_page,
              EsError *error)
{
  page->sample = values->format == ES_FORMAT_F32 ? 4 : es_format_size (values->format);
  page->strips = (Strips){ .values = values, .row_bytes = (size_t) values->width * page->sample };
  page->layout = (PageLayout){ .stack = writer->pages > 1, .deflated = writer->level > 0 };
  if (values->pixels == NULL || values->width <= 0 || values->height <= 0)
    return es_tiff_write_fail (writer, error, ES_ERROR_INVALID, "no image to write");
  plan_strips (&page->strips, info);
  page->layout.predict = page->layout.deflated && values->format != ES_FORMAT_F32;
  describe (info, writer->pages, first_page, page->description, sizeof page->description);
  page->layout.calibrated = info != NULL && resolution_of (&info->pixel_size, page->layout.resolution);
  page->layout.description_length = strlen (page->description) + 1;
  return true;
}

/* Writes a prepared page after the ones already added: its IFD, the IFD's
 * values, then its samples (pieces: its deflated strips, freed by the
 * caller; NULL when stored plain, each row read once the gate releases it). */
static bool
page_emit (EsTiffWriter *writer, Page *page, const DeflatedStrip *pieces, EsRowGate *gate, EsError *error)
{
  const Strips *strips = &page->strips;

  if (writer->added >= writer->pages)
    return es_tiff_write_fail (writer, error, ES_ERROR_INVALID, "more pages than announced");
  if (page->layout.deflated)
    for (uint64_t s = 0; s < strips->count; s++)
      page->layout.data_bytes += pieces[s].size;
  else
    page->layout.data_bytes = strips->row_bytes * (uint64_t) strips->values->height;
  if (writer->added == 0)
    put_header (writer);
  plan_page (writer, strips, &page->layout);
  if (!writer->big && page->layout.data_at + page->layout.data_bytes > UINT32_MAX)
    return es_tiff_write_fail (writer, error, ES_ERROR_LIMIT, "larger than its TIFF was planned");

  put_ifd (writer, strips, &page->layout, page->sample);
  put (writer, page->description, page->layout.description_length);
  pad_to (writer, page->layout.software_at);
  put (writer, software, sizeof software);
  pad_to (writer, page->layout.resolution_at);
  if (page->layout.calibrated && !writer->big)
    for (int axis = 0; axis < 2; axis++)
      {
        put32 (writer, page->layout.resolution[axis][0]);
        put32 (writer, page->layout.resolution[axis][1]);
      }
  pad_to (writer, page->layout.offsets_at);
  put_strip_table (writer, strips, &page->layout, pieces);
  pad_to (writer, page->layout.data_at);
  if (page->layout.deflated)
    for (uint64_t s = 0; s < strips->count; s++)
      put (writer, pieces[s].bytes, pieces[s].size);
  else if (!put_plain_strips (writer, strips, gate, error))
    return false;
  if (page->layout.next != 0)
    pad_to (writer, page->layout.next);
  writer->added++;
  return true;
}

/* Deflated strips are made before their page is written: the strip table
 * before them needs their sizes. n pages of one size at a time, which
 * pieces receives (count strips a page). */
static bool
pages_write (EsTiffWriter *writer, Page *pages, int n, EsRowGate *gate, EsError *error)
{
  uint64_t count = pages[0].strips.count;
  DeflatedStrip *pieces = NULL;
  bool ok = true;

  if (pages[0].layout.deflated)
    {
      Strips *strips = malloc ((size_t) n * sizeof *strips);

      pieces = calloc ((size_t) (count * (uint64_t) n), sizeof *pieces);
      if (strips == NULL || pieces == NULL)
        {
          free (strips);
          free (pieces);
          return es_tiff_write_fail (writer, error, ES_ERROR_NO_MEMORY, "out of memory");
        }
      for (int p = 0; p < n; p++)
        strips[p] = pages[p].strips;
      ok = deflate_strips (writer, strips, n, gate, pieces, error);
      free (strips);
    }
  for (int p = 0; ok && p < n; p++)
    ok = page_emit (writer, &pages[p], pieces != NULL ? pieces + (uint64_t) p * count : NULL, gate, error);
  free_pieces (pieces, count * (uint64_t) n);
  return ok;
}

/* es_tiff_writer_add, each row of values read once the gate has released it. */
static bool
writer_add (EsTiffWriter *writer, const EsImage *values, const EsValueInfo *info, EsRowGate *gate, EsError *error)
{
  Page page;

  return page_prepare (writer, &page, values, info, writer->added == 0, error)
         && pages_write (writer, &page, 1, gate, error);
}

bool
es_tiff_writer_add (EsTiffWriter *writer, const EsImage *values, const EsValueInfo *info, EsError *error)
{
  return writer_add (writer, values, info, NULL, error);
}

/* Planes deflated together: enough strips to keep every core busy when a
 * plane is one strip, without holding more than about this much of them. */
#define PLANES_BATCH_BYTES ((uint64_t) 64 << 20)

bool
es_tiff_writer_add_planes (EsTiffWriter *writer, const EsImage *volume, const EsValueInfo *info, EsError *error)
{
  int planes = es_image_planes (volume);
  EsImage *views = malloc ((size_t) planes * sizeof *views);
  uint64_t page_bytes = es_tiff_page_bytes (volume);
  int batch = (int) (PLANES_BATCH_BYTES / (page_bytes > 0 ? page_bytes : 1));
  Page *pages;
  bool ok = true;

  if (batch < 1)
    batch = 1;
  if (batch > planes)
    batch = planes;
  pages = malloc ((size_t) batch * sizeof *pages);
  if (views == NULL || pages == NULL)
    {
      free (views);
      free (pages);
      return es_tiff_write_fail (writer, error, ES_ERROR_NO_MEMORY, "out of memory");
    }
  for (int z = 0; ok && z < planes; z += batch)
    {
      int n = planes - z < batch ? planes - z : batch;

      for (int p = 0; ok && p < n; p++)
        {
          views[z + p] = es_image_plane (volume, z + p);
          ok = page_prepare (writer, &pages[p], &views[z + p], info, writer->added + z + p == 0, error);
        }
      ok = ok && pages_write (writer, pages, n, NULL, error);
    }
  free (pages);
  free (views);
  return ok;
}

bool
es_save_tiff (const char *path, const EsImage *values, const EsValueInfo *info, EsError *error)
{
  return es_save_tiff_gated (path, values, info, NULL, error);
}

bool
es_save_tiff_gated (const char *path, const EsImage *values, const EsValueInfo *info, EsRowGate *gate, EsError *error)
{
  EsTiffWriter *writer;

  if (values == NULL || values->pixels == NULL || values->width <= 0 || values->height <= 0)
    {
      char shown[ES_PATH_MESSAGE_MAX + 1];
      return es_error_set (error, ES_ERROR_INVALID, "cannot write '%s': no image to write",
                           es_path_shorten (path, ES_PATH_MESSAGE_MAX, shown, sizeof shown));
    }
  writer = es_tiff_writer_open (path, 1, es_tiff_page_bytes (values), error);
  if (writer == NULL)
    return false;
  if (!writer_add (writer, values, info, gate, error))
    {
      es_tiff_writer_abort (writer);
      return false;
    }
  return es_tiff_writer_commit (writer, error);
}
