/* SPDX-License-Identifier: MIT */
/* TIFF decoding to gray through libtiff: strips and tiles, every codec libtiff has, BigTIFF, pages;
 * limits checked before anything is allocated, reading only through our own bounded I/O. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

#include "es-calibration.h"
#include "es-load-internal.h"
#include "es-ome.h"
#include "es-tiff.h"

/* One row of a strip image, or one tile, may not take more than this: a
 * legitimate one is far smaller, and a hostile header cannot make us
 * allocate more. */
#define ES_TIFF_CHUNK_MAX (64u << 20)
/* A tile may hang over the image, but not by more than this many times its
 * area (or 2^16 pixels, for small images with the usual 256×256 tiles). */
#define ES_TIFF_TILE_OVERHANG 4
/* Pages are counted up to this many (libtiff's own limit is higher). */
#define ES_TIFF_MAX_PAGES 65535
/* A directory's entries are searched for its size only among its first
 * this many (a real one has a dozen or two, ImageWidth and ImageLength
 * first): a hostile chain of huge directories costs no more than this. */
#define ES_TIFF_SIZE_ENTRIES 64

/* A file is read through a window of this many bytes: libtiff asks for a
 * directory in three or four small reads (its count, its entries, its link,
 * a value), and a stack of small pages lies in a few windows, not in one
 * system call per read. */
#define ES_TIFF_WINDOW (64u << 10)

/* The name libtiff is given for the input (it is cut from its messages). */
#define ES_TIFF_NAME "input"

/* One page of the index that es_tiff_page_count builds. */
typedef struct {
  uint64_t offset;        /* of its directory in the file */
  uint32_t width, height; /* as its entries store them plainly, else 0 */
} EsTiffPageEntry;

struct EsTiff {
  TIFF *tif;
  /* Memory input (fd < 0) or a regular file read with pread(). */
  const uint8_t *data;
  uint8_t *owned;
  int fd;
  uint64_t offset, size, pos;
  /* File input: the bytes of the file from window_start on, window_size of
   * them (a cache of pread(); memory input needs none). */
  uint8_t *window;
  uint64_t window_start;
  size_t window_size;
  char message[256];      /* libtiff's first error since the last es_tiff_reset */
  int pages;              /* -1 until indexed */
  uint64_t past_last;     /* the link from the last page libtiff counted: 0, or a directory it could not read */
  int current;            /* the page whose directory libtiff holds, or -1 */
  EsTiffPageEntry *index; /* where each page's directory lies, and its size */
  EsSampleRule rule;      /* how samples become values (es_tiff_set_sample_rule) */
  /* What the first page's ImageDescription says of every page's pixel
   * size (OME-XML, or ImageJ's unit=), read once: described is set then. */
  bool described;
  EsImageMeta description;
  bool imagej;          /* an ImageJ description: the resolution tags count in its unit */
  EsLengthUnit ij_unit; /* that unit, ES_LENGTH_NONE when it names none we know */
  double ij_spacing;    /* its spacing= (planes' spacing, in ij_unit), 0 when absent */
  bool ij_um;           /* its unit is spelt "um": ImageJ reads a resolution in centimetres as µm */
};

static void
es_tiff_reset (EsTiff *tiff)
{
  tiff->message[0] = '\0';
}

/* The error handler of this handle: keeps libtiff's first message. */
static int
es_tiff_on_error (TIFF *tif, void *user_data, const char *module, const char *format, va_list args)
{
  EsTiff *tiff = user_data;

  (void) tif;
  (void) module;
  if (tiff->message[0] == '\0')
    {
      /* libtiff starts many messages with the file's name, which the
       * caller gives. */
      static const char name[] = ES_TIFF_NAME ": ";
      vsnprintf (tiff->message, sizeof tiff->message, format, args);
      if (strncmp (tiff->message, name, sizeof name - 1) == 0)
        memmove (tiff->message, tiff->message + sizeof name - 1, strlen (tiff->message) - (sizeof name - 2));
    }
  return 1;
}

/* Warnings (unknown tags, odd but readable files) are not errors. */
static int
es_tiff_on_warning (TIFF *tif, void *user_data, const char *module, const char *format, va_list args)
{
  (void) tif;
  (void) user_data;
  (void) module;
  (void) format;
  (void) args;
  return 1;
}

/* Polled between pages, rows and tiles and by every read: a signal handler
 * cancels it. */
static EsControl *interrupt_control;

void
es_tiff_set_interrupt (EsControl *control)
{
  interrupt_control = control;
}

/* True, with the error set, once the control is cancelled. */
static bool
es_tiff_interrupted (EsError *error)
{
  if (!es_control_cancelled (interrupt_control))
    return false;
  es_error_set (error, ES_ERROR_CANCELLED, "interrupted");
  return true;
}

static bool
es_tiff_fail (EsTiff *tiff, EsError *error, const char *what)
{
  /* libtiff's reads fail once interrupted (es_tiff_read_proc): that is no
   * fault of the file. */
  if (es_tiff_interrupted (error))
    return false;
  if (tiff->message[0] != '\0')
    return es_error_set (error, ES_ERROR_FORMAT, "TIFF: %s: %s", what, tiff->message);
  return es_error_set (error, ES_ERROR_FORMAT, "TIFF: %s", what);
}

/* ---- client I/O: memory, or pread() of a regular file ---- */

/* Up to n bytes of the file at `at` (from the start of the input) by
 * pread(); fewer at its end or on an error. */
static size_t
es_tiff_pread (EsTiff *tiff, uint8_t *buffer, size_t n, uint64_t at)
{
  size_t done = 0;

  while (done < n)
    {
      ssize_t got = pread (tiff->fd, buffer + done, n - done, (off_t) (tiff->offset + at + done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        break;
      done += (size_t) got;
    }
  return done;
}

static tmsize_t
es_tiff_read_proc (thandle_t handle, void *buffer, tmsize_t size)
{
  EsTiff *tiff = handle;
  uint64_t left = tiff->pos < tiff->size ? tiff->size - tiff->pos : 0;
  size_t want = (uint64_t) size < left ? (size_t) size : (size_t) left;
  size_t done = 0;

  /* Once interrupted, libtiff's reads come back short: whatever it is
   * doing (counting pages, reading a strip) fails at once. */
  if (size <= 0 || es_control_cancelled (interrupt_control))
    return 0;
  if (tiff->fd < 0)
    {
      memcpy (buffer, tiff->data + tiff->pos, want);
      done = want;
    }
  else if (want >= ES_TIFF_WINDOW / 2 || (tiff->window == NULL && (tiff->window = malloc (ES_TIFF_WINDOW)) == NULL))
    done = es_tiff_pread (tiff, buffer, want, tiff->pos);
  else
    {
      /* Small reads come from the window, moved to start here when they
       * fall outside it. */
      if (tiff->pos < tiff->window_start || tiff->pos + want > tiff->window_start + tiff->window_size)
        {
          tiff->window_start = tiff->pos;
          tiff->window_size = es_tiff_pread (tiff, tiff->window, ES_TIFF_WINDOW, tiff->pos);
        }
      if (tiff->pos + want <= tiff->window_start + tiff->window_size)
        done = want;
      else
        done = (size_t) (tiff->window_start + tiff->window_size - tiff->pos);
      memcpy (buffer, tiff->window + (tiff->pos - tiff->window_start), done);
    }
  tiff->pos += done;
  return (tmsize_t) done;
}

static tmsize_t
es_tiff_write_proc (thandle_t handle, void *buffer, tmsize_t size)
{
  (void) handle;
  (void) buffer;
  (void) size;
  return -1;
}

static toff_t
es_tiff_seek_proc (thandle_t handle, toff_t offset, int whence)
{
  EsTiff *tiff = handle;
  uint64_t base = whence == SEEK_CUR ? tiff->pos : whence == SEEK_END ? tiff->size : 0;

  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
    return (toff_t) -1;
  if (offset > UINT64_MAX - base)
    return (toff_t) -1;
  tiff->pos = base + offset;
  return tiff->pos;
}

static int
es_tiff_close_proc (thandle_t handle)
{
  (void) handle;
  return 0;
}

static toff_t
es_tiff_size_proc (thandle_t handle)
{
  return ((EsTiff *) handle)->size;
}

/* Nothing is mapped: memory input is read through es_tiff_read_proc as a
 * file is, so that both give libtiff the same calls and the same verdicts. */
static int
es_tiff_map_proc (thandle_t handle, void **base, toff_t *size)
{
  (void) handle;
  (void) base;
  (void) size;
  return 0;
}

static void
es_tiff_unmap_proc (thandle_t handle, void *base, toff_t size)
{
  (void) handle;
  (void) base;
  (void) size;
}

static EsTiff *
es_tiff_open (EsTiff *tiff, EsError *error)
{
  TIFFOpenOptions *options = TIFFOpenOptionsAlloc ();
  uint64_t pixels = es_image_get_max_pixels ();
  uint64_t max_alloc = pixels > (1ull << 40) ? 0 : pixels * 32 > (64u << 20) ? pixels * 32 : (64u << 20);

  if (options == NULL)
    {
      free (tiff->owned);
      free (tiff);
      es_error_set (error, ES_ERROR_NO_MEMORY, "TIFF: out of memory for the decoder");
      return NULL;
    }
  /* libtiff's own buffers (compressed strips, tables) need no more than a
   * page's stored samples can take: 4 samples of 8 bytes a pixel (0: no
   * limit, for budgets beyond any memory). */
  TIFFOpenOptionsSetMaxSingleMemAlloc (options, (tmsize_t) max_alloc);
  TIFFOpenOptionsSetErrorHandlerExtR (options, es_tiff_on_error, tiff);
  TIFFOpenOptionsSetWarningHandlerExtR (options, es_tiff_on_warning, tiff);
  tiff->pages = -1;
  tiff->current = 0; /* libtiff reads the first directory as it opens */
  tiff->tif = TIFFClientOpenExt (ES_TIFF_NAME, "r", tiff, es_tiff_read_proc, es_tiff_write_proc, es_tiff_seek_proc,
                                 es_tiff_close_proc, es_tiff_size_proc, es_tiff_map_proc, es_tiff_unmap_proc, options);
  TIFFOpenOptionsFree (options);
  if (tiff->tif == NULL)
    {
      es_tiff_fail (tiff, error, "not a readable TIFF file");
      free (tiff->window);
      free (tiff->owned);
      free (tiff);
      return NULL;
    }
  return tiff;
}

EsTiff *
es_tiff_open_memory (const void *data, size_t size, bool owned, EsError *error)
{
  EsTiff *tiff = calloc (1, sizeof *tiff);

  if (tiff == NULL)
    {
      if (owned)
        free ((void *) data);
      es_error_set (error, ES_ERROR_NO_MEMORY, "TIFF: out of memory for the decoder");
      return NULL;
    }
  tiff->data = data;
  tiff->owned = owned ? (uint8_t *) data : NULL;
  tiff->fd = -1;
  tiff->size = size;
  return es_tiff_open (tiff, error);
}

EsTiff *
es_tiff_open_fd (int fd, uint64_t offset, uint64_t size, EsError *error)
{
  EsTiff *tiff = calloc (1, sizeof *tiff);

  if (tiff == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "TIFF: out of memory for the decoder");
      return NULL;
    }
  tiff->fd = fd;
  tiff->offset = offset;
  tiff->size = size;
  return es_tiff_open (tiff, error);
}

void
es_tiff_set_sample_rule (EsTiff *tiff, EsSampleRule rule)
{
  tiff->rule = rule;
}

void
es_tiff_close (EsTiff *tiff)
{
  if (tiff == NULL)
    return;
  TIFFClose (tiff->tif);
  free (tiff->index);
  free (tiff->window);
  free (tiff->owned);
  free (tiff);
}

/* ---- the index of pages ---- */

/* n bytes at `offset` of the file, through the same I/O as libtiff's,
 * leaving its position as it was. */
static bool
es_tiff_read_at (EsTiff *tiff, uint64_t offset, void *buffer, size_t n)
{
  uint64_t pos = tiff->pos;
  bool ok = offset <= tiff->size && n <= tiff->size - offset;

  tiff->pos = offset;
  ok = ok && es_tiff_read_proc (tiff, buffer, (tmsize_t) n) == (tmsize_t) n;
  tiff->pos = pos;
  return ok;
}

/* An unsigned integer of `size` bytes (2, 4 or 8) in the file's byte order. */
static uint64_t
es_tiff_uint (const uint8_t *bytes, int size, bool big_endian)
{
  uint64_t v = 0;

  for (int i = 0; i < size; i++)
    v |= (uint64_t) bytes[big_endian ? i : size - 1 - i] << (8 * (size - 1 - i));
  return v;
}

/* The page's width and height when its first entries (n of them, from
 * `table`) store them as one SHORT, LONG or LONG8 each, else 0 and 0 (then
 * libtiff is asked). */
static void
es_tiff_index_size (EsTiffPageEntry *page, const uint8_t *table, uint64_t n, bool big, bool big_endian)
{
  int entry_size = big ? 20 : 12, count_size = big ? 8 : 4;

  for (uint64_t i = 0; i < n; i++)
    {
      const uint8_t *e = table + i * (uint64_t) entry_size;
      uint64_t tag = es_tiff_uint (e, 2, big_endian), type = es_tiff_uint (e + 2, 2, big_endian);
      uint64_t count = es_tiff_uint (e + 4, count_size, big_endian);
      const uint8_t *value = e + 4 + count_size;
      uint64_t v = type == TIFF_SHORT          ? es_tiff_uint (value, 2, big_endian)
                   : type == TIFF_LONG         ? es_tiff_uint (value, 4, big_endian)
                   : type == TIFF_LONG8 && big ? es_tiff_uint (value, 8, big_endian)
                                               : 0;

      /* libtiff keeps the first of repeated tags, and so does this. */
      if (count != 1 || v > UINT32_MAX)
        v = 0;
      if (tag == TIFFTAG_IMAGEWIDTH && page->width == 0)
        page->width = (uint32_t) v;
      else if (tag == TIFFTAG_IMAGELENGTH && page->height == 0)
        page->height = (uint32_t) v;
    }
  if (page->width == 0 || page->height == 0)
    page->width = page->height = 0;
}

/* Where each of the first `count` directories lies, following the chain
 * from the header as TIFFNumberOfDirectories has just done (it found them
 * readable and free of loops), and *past_last the link from the last of
 * them (0 where the chain ends there); false if the chain reads otherwise
 * now, or when interrupted. One read a directory: its count, its first
 * entries and, for a directory of no more entries than that, the link to
 * the next. */
static bool
es_tiff_index (EsTiff *tiff, int count, uint64_t *past_last)
{
  bool big = TIFFIsBigTIFF (tiff->tif), big_endian;
  int count_size = big ? 8 : 2, entry_size = big ? 20 : 12, link_size = big ? 8 : 4;
  uint8_t header[16], chunk[8 + ES_TIFF_SIZE_ENTRIES * 20 + 8];
  uint64_t offset;

  if (!es_tiff_read_at (tiff, 0, header, big ? 16 : 8)
      || (tiff->index = calloc ((size_t) count, sizeof *tiff->index)) == NULL)
    return false;
  big_endian = header[0] == 'M';
  offset = big ? es_tiff_uint (header + 8, 8, big_endian) : es_tiff_uint (header + 4, 4, big_endian);
  for (int i = 0; i < count; i++)
    {
      uint64_t left = offset < tiff->size ? tiff->size - offset : 0, entries, link_at;
      size_t want = (size_t) count_size + ES_TIFF_SIZE_ENTRIES * (size_t) entry_size + (size_t) link_size;

      if ((i & 1023) == 0 && es_control_cancelled (interrupt_control))
        return false;
      if (want > left)
        want = (size_t) left;
      if (offset == 0 || want < (size_t) count_size || !es_tiff_read_at (tiff, offset, chunk, want))
        return false;
      entries = es_tiff_uint (chunk, count_size, big_endian);
      if (entries > 0xFFFF)
        return false;
      tiff->index[i].offset = offset;
      es_tiff_index_size (&tiff->index[i], chunk + count_size,
                          entries < ES_TIFF_SIZE_ENTRIES ? entries : ES_TIFF_SIZE_ENTRIES, big, big_endian);
      link_at = (uint64_t) count_size + entries * (uint64_t) entry_size;
      if (link_at + (uint64_t) link_size <= want)
        offset = es_tiff_uint (chunk + link_at, link_size, big_endian);
      else if (es_tiff_read_at (tiff, offset + link_at, chunk, (size_t) link_size))
        offset = es_tiff_uint (chunk, link_size, big_endian);
      else
        return false;
    }
  *past_last = offset;
  return true;
}

/* Counts the pages and indexes them once: libtiff's TIFFSetDirectory walks
 * the chain of directories from the start on every call, which made a
 * stack's pages quadratic (4000 pages: minutes); TIFFSetSubDirectory goes
 * straight to a directory whose offset libtiff has seen, as
 * TIFFNumberOfDirectories (one walk, loops checked) lets it. */
int
es_tiff_page_count (EsTiff *tiff, EsError *error)
{
  if (tiff->pages < 0)
    {
      tdir_t n = TIFFNumberOfDirectories (tiff->tif);
      tiff->pages = n < 1 ? 1 : n > ES_TIFF_MAX_PAGES ? ES_TIFF_MAX_PAGES : (int) n;
      /* The file changed under us, or libtiff and this disagree: the pages
       * that the index does not reach stay unread. */
      if (!es_tiff_index (tiff, tiff->pages, &tiff->past_last) && tiff->index != NULL)
        {
          int reached = 0;
          while (reached < tiff->pages && tiff->index[reached].offset != 0)
            reached++;
          tiff->pages = reached > 0 ? reached : 1;
          tiff->past_last = 0;
        }
      /* A link back to a page already counted is a loop, which libtiff
       * stopped: no page is missing. */
      for (int i = 0; tiff->index != NULL && i < tiff->pages && tiff->past_last != 0; i++)
        if (tiff->index[i].offset == tiff->past_last)
          tiff->past_last = 0;
    }
  /* A chain that goes on past the pages counted to a directory that
   * libtiff could not read (a truncated file's next page, or a damaged
   * link), or past ES_TIFF_MAX_PAGES: reading the first pages alone would
   * pass a part of the stack or volume for all of it. */
  if (tiff->past_last == 0 || error == NULL)
    return tiff->pages;
  if (tiff->pages == ES_TIFF_MAX_PAGES)
    es_error_set (error, ES_ERROR_FORMAT, "TIFF: more than %d pages", ES_TIFF_MAX_PAGES);
  else if (tiff->past_last >= tiff->size)
    es_error_set (error, ES_ERROR_FORMAT,
                  "TIFF: page %d's directory lies at byte %" PRIu64 ", past the end of the file (%" PRIu64
                  " bytes): the file is truncated",
                  tiff->pages + 1, tiff->past_last, tiff->size);
  else
    es_error_set (error, ES_ERROR_FORMAT, "TIFF: page %d's directory, at byte %" PRIu64 ", cannot be read%s%s",
                  tiff->pages + 1, tiff->past_last, tiff->message[0] ? ": " : "", tiff->message);
  return 0;
}

static bool
es_tiff_select (EsTiff *tiff, int page, EsError *error)
{
  char what[64];
  bool ok;

  es_tiff_reset (tiff);
  if (es_tiff_interrupted (error))
    return false;
  if (tiff->current == page)
    return true;
  es_tiff_page_count (tiff, NULL);
  /* Without an index (no memory for it), the slow way. */
  ok = page < tiff->pages
       && (tiff->index != NULL ? TIFFSetSubDirectory (tiff->tif, tiff->index[page].offset)
                               : TIFFSetDirectory (tiff->tif, (tdir_t) page));
  tiff->current = ok ? page : -1;
  if (ok)
    return true;
  snprintf (what, sizeof what, "page %d cannot be read", page + 1);
  return es_tiff_fail (tiff, error, what);
}

bool
es_tiff_page_size (EsTiff *tiff, int page, int *width, int *height, EsError *error)
{
  uint32_t w = 0, h = 0;

  es_tiff_page_count (tiff, NULL);
  if (es_tiff_interrupted (error))
    return false;
  /* A stack's sizes come from the index, without libtiff reading every
   * directory (its slowest part) a second time. */
  if (tiff->index != NULL && page >= 0 && page < tiff->pages && tiff->index[page].width != 0)
    {
      w = tiff->index[page].width;
      h = tiff->index[page].height;
    }
  else
    {
      if (!es_tiff_select (tiff, page, error))
        return false;
      TIFFGetField (tiff->tif, TIFFTAG_IMAGEWIDTH, &w);
      TIFFGetField (tiff->tif, TIFFTAG_IMAGELENGTH, &h);
    }
  if (w == 0 || h == 0 || w > ES_MAX_SIDE || h > ES_MAX_SIDE)
    return es_error_set (error, w == 0 || h == 0 ? ES_ERROR_FORMAT : ES_ERROR_LIMIT,
                         "TIFF: image size %" PRIu32 "×%" PRIu32 " is %s", w, h,
                         w == 0 || h == 0 ? "empty" : "over the limit");
  *width = (int) w;
  *height = (int) h;
  return true;
}

/* ---- samples ---- */

/* How the stored samples of a page become values. */
typedef struct {
  uint32_t width, height;
  uint16_t spp, bits, sample_format, photometric, planar;
  bool floats; /* IEEE floats: planes are F32 */
  bool colour; /* RGB: three planes, then luma */
  bool invert; /* MinIsWhite */
  bool cells;  /* read as cells (ES_SAMPLES_CELLS) */
  EsFormat plane_format;
  int depth; /* of integer planes */
  EsImage planes[3];
} EsTiffPage;

/* Sample i of a row of packed samples, as a double. */
static inline double
es_tiff_sample (const uint8_t *row, size_t i, const EsTiffPage *p)
{
  switch (p->bits)
    {
    case 8: return p->sample_format == SAMPLEFORMAT_INT ? (double) ((int8_t) row[i] + 128) : (double) row[i];
      case 16: {
        uint16_t v;
        memcpy (&v, row + 2 * i, 2);
        return p->sample_format == SAMPLEFORMAT_INT ? (double) ((int16_t) v + 32768) : (double) v;
      }
      case 32: {
        float v;
        memcpy (&v, row + 4 * i, 4);
        return v;
      }
      case 64: {
        double v;
        memcpy (&v, row + 8 * i, 8);
        return (float) v;
      }
      default: {
        /* 1, 2 or 4 bits, most significant first. */
        size_t bit = i * p->bits;
        return (double) (row[bit / 8] >> (8 - p->bits - bit % 8) & ((1u << p->bits) - 1));
      }
    }
}

/* Stores n samples (the first at sample index `first`, then every `step`)
 * of a row into plane `plane` at (x0, y). */
static void
es_tiff_store (EsTiffPage *p, int plane, const uint8_t *row, size_t first, size_t step, uint32_t x0, uint32_t y,
               uint32_t n)
{
  EsImage *image = &p->planes[plane];
  void *dst = es_image_row (image, (int) y);
  double top = (double) ((1u << p->depth) - 1);
  size_t size = es_format_size (p->plane_format);

  /* Samples of the plane's own width, neither inverted nor cells: unsigned
   * ones and 32-bit floats, in this machine's byte order as libtiff gives
   * them, are a copy; signed ones, offset by 2^(bits−1), are in two's
   * complement their top bit flipped (CT's 16-bit Hounsfield units). The
   * loop below takes each sample through a double, 2.6 ns a sample: 0.35 s
   * of a 512³ volume's decoding on this machine. */
  if (step == 1 && !p->invert && !p->cells && p->bits == 8 * size)
    {
      if (p->sample_format == (p->floats ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT))
        {
          memcpy ((uint8_t *) dst + (size_t) x0 * size, row + first * size, (size_t) n * size);
          return;
        }
      if (p->sample_format == SAMPLEFORMAT_INT && size == 1)
        {
          for (uint32_t i = 0; i < n; i++)
            ((uint8_t *) dst)[x0 + i] = row[first + i] ^ 0x80u;
          return;
        }
      if (p->sample_format == SAMPLEFORMAT_INT)
        {
          for (uint32_t i = 0; i < n; i++)
            {
              uint16_t v;
              memcpy (&v, row + 2 * (first + i), 2);
              ((uint16_t *) dst)[x0 + i] = v ^ 0x8000u;
            }
          return;
        }
    }
  for (uint32_t i = 0; i < n; i++)
    {
      double v = es_tiff_sample (row, first + i * step, p);
      if (p->floats)
        ((float *) dst)[x0 + i] = p->invert ? (float) -v : (float) v;
      else if (p->cells && p->sample_format == SAMPLEFORMAT_INT)
        {
          /* A signed cell is in where it is nonzero as stored, which its
           * offset (v + 2^(bits−1)) would hide. */
          bool in = v != (p->bits == 8 ? 128.0 : 32768.0);
          if (p->plane_format == ES_FORMAT_U8)
            ((uint8_t *) dst)[x0 + i] = in;
          else
            ((uint16_t *) dst)[x0 + i] = in;
        }
      else if (p->plane_format == ES_FORMAT_U8)
        ((uint8_t *) dst)[x0 + i] = (uint8_t) (p->invert ? top - v : v);
      else
        ((uint16_t *) dst)[x0 + i] = (uint16_t) (p->invert ? top - v : v);
    }
}

/* Bytes of n packed samples. */
static uint64_t
es_tiff_bytes (uint64_t n, unsigned bits)
{
  return (n * bits + 7) / 8;
}

static bool
es_tiff_read_strips (EsTiff *tiff, EsTiffPage *p, EsError *error)
{
  int planes = p->colour ? 3 : 1;
  bool separate = p->planar == PLANARCONFIG_SEPARATE;
  uint64_t row_bytes = es_tiff_bytes ((uint64_t) p->width * (separate ? 1 : p->spp), p->bits);
  tmsize_t scanline = TIFFScanlineSize (tiff->tif);
  uint8_t *row;

  if (row_bytes > ES_TIFF_CHUNK_MAX)
    return es_error_set (error, ES_ERROR_LIMIT, "TIFF: rows of %" PRIu64 " bytes are over the limit", row_bytes);
  if (scanline <= 0 || (uint64_t) scanline < row_bytes)
    return es_tiff_fail (tiff, error, "bad row size");
  row = malloc ((size_t) scanline);
  if (row == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "TIFF: out of memory for a row");
  /* Plane by plane, rows in order: libtiff decodes each strip once. */
  for (int plane = 0; plane < (separate ? planes : 1); plane++)
    for (uint32_t y = 0; y < p->height; y++)
      {
        if (es_tiff_interrupted (error))
          {
            free (row);
            return false;
          }
        if (TIFFReadScanline (tiff->tif, row, y, (uint16_t) plane) < 0)
          {
            char what[64];
            free (row);
            snprintf (what, sizeof what, "row %" PRIu32 " cannot be decoded", y);
            return es_tiff_fail (tiff, error, what);
          }
        if (separate)
          es_tiff_store (p, plane, row, 0, 1, 0, y, p->width);
        else
          for (int c = 0; c < planes; c++)
            es_tiff_store (p, c, row, (size_t) c, p->spp, 0, y, p->width);
      }
  free (row);
  return true;
}

static bool
es_tiff_read_tiles (EsTiff *tiff, EsTiffPage *p, EsError *error)
{
  int planes = p->colour ? 3 : 1;
  bool separate = p->planar == PLANARCONFIG_SEPARATE;
  uint32_t tw = 0, th = 0;
  uint64_t area, image_area = (uint64_t) p->width * p->height, tile_row_bytes, tile_bytes;
  uint8_t *tile;

  TIFFGetField (tiff->tif, TIFFTAG_TILEWIDTH, &tw);
  TIFFGetField (tiff->tif, TIFFTAG_TILELENGTH, &th);
  if (tw == 0 || th == 0)
    return es_error_set (error, ES_ERROR_FORMAT, "TIFF: tiles of size %" PRIu32 "×%" PRIu32, tw, th);
  area = (uint64_t) tw * th;
  tile_row_bytes = es_tiff_bytes ((uint64_t) tw * (separate ? 1 : p->spp), p->bits);
  tile_bytes = tile_row_bytes * th;
  if (area > ES_TIFF_TILE_OVERHANG * (image_area > 65536 ? image_area : 65536) || tile_bytes > ES_TIFF_CHUNK_MAX)
    return es_error_set (error, ES_ERROR_LIMIT, "TIFF: tiles of %" PRIu32 "×%" PRIu32 " are over the limit", tw, th);
  tile = malloc ((size_t) tile_bytes);
  if (tile == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "TIFF: out of memory for a tile");
  for (int plane = 0; plane < (separate ? planes : 1); plane++)
    for (uint32_t y0 = 0; y0 < p->height; y0 += th)
      for (uint32_t x0 = 0; x0 < p->width; x0 += tw)
        {
          uint32_t rows = p->height - y0 < th ? p->height - y0 : th;
          uint32_t cols = p->width - x0 < tw ? p->width - x0 : tw;
          ttile_t index = TIFFComputeTile (tiff->tif, x0, y0, 0, (uint16_t) plane);
          tmsize_t got;

          if (es_tiff_interrupted (error))
            {
              free (tile);
              return false;
            }
          got = TIFFReadEncodedTile (tiff->tif, index, tile, (tmsize_t) tile_bytes);

          /* Edge tiles are stored whole: all of the tile must be there. */
          if (got < 0 || (uint64_t) got < tile_bytes)
            {
              char what[80];
              free (tile);
              snprintf (what, sizeof what, "the tile at %" PRIu32 ",%" PRIu32 " cannot be decoded", x0, y0);
              return es_tiff_fail (tiff, error, what);
            }
          for (uint32_t r = 0; r < rows; r++)
            {
              const uint8_t *row = tile + r * tile_row_bytes;
              if (separate)
                es_tiff_store (p, plane, row, 0, 1, x0, y0 + r, cols);
              else
                for (int c = 0; c < planes; c++)
                  es_tiff_store (p, c, row, (size_t) c, p->spp, x0, y0 + r, cols);
            }
        }
  free (tile);
  return true;
}

/* Anything the direct path does not take (palettes, CMYK, YCbCr without
 * JPEG, CIELab, LogLuv, old JPEG...) goes through libtiff's RGBA interface,
 * a band of rows at a time, to 8-bit RGB and then luma. */
static bool
es_tiff_read_rgba (EsTiff *tiff, EsTiffPage *p, EsError *error)
{
  TIFFRGBAImage rgba;
  char message[1024];
  uint32_t band = 64;
  uint32_t *raster;

  if (!TIFFRGBAImageOK (tiff->tif, message) || !TIFFRGBAImageBegin (&rgba, tiff->tif, 0, message))
    return es_error_set (error, ES_ERROR_FORMAT, "TIFF: not supported: %s", message);
  rgba.req_orientation = ORIENTATION_TOPLEFT;
  raster = malloc ((size_t) p->width * band * sizeof *raster);
  if (raster == NULL)
    {
      TIFFRGBAImageEnd (&rgba);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "TIFF: out of memory for a band of rows");
    }
  for (uint32_t y = 0; y < p->height; y += band)
    {
      uint32_t rows = p->height - y < band ? p->height - y : band;

      bool cancelled = es_tiff_interrupted (error);

      rgba.row_offset = (int) y;
      rgba.col_offset = 0;
      if (cancelled || !TIFFRGBAImageGet (&rgba, raster, p->width, rows))
        {
          free (raster);
          TIFFRGBAImageEnd (&rgba);
          return cancelled ? false : es_tiff_fail (tiff, error, "cannot be decoded");
        }
      for (uint32_t r = 0; r < rows; r++)
        {
          uint8_t *dst = es_image_row (&p->planes[0], (int) (y + r));
          for (uint32_t x = 0; x < p->width; x++)
            {
              uint32_t v = raster[(size_t) r * p->width + x];
              dst[x] = (uint8_t) (p->cells ? es_cell_of_rgb (TIFFGetR (v), TIFFGetG (v), TIFFGetB (v))
                                           : es_luma_int (TIFFGetR (v), TIFFGetG (v), TIFFGetB (v)));
            }
        }
    }
  free (raster);
  TIFFRGBAImageEnd (&rgba);
  return true;
}

void
es_float_range_map (const EsFloatRange *range, EsImageMeta *meta)
{
  /* With NaN, sample 0 is NaN and the finite values start at 1: one step
   * below lo is where sample 0 would lie. */
  double steps = range->nan > 0 ? 65534.0 : 65535.0;
  double first = range->nan > 0 ? 1.0 : 0.0;
  double step = range->hi > range->lo ? (range->hi - range->lo) / steps : 0;

  meta->stored = ES_STORED_FLOAT;
  meta->value_offset = range->hi >= range->lo ? range->lo - first * step : 0;
  meta->value_scale = step;
  meta->nan_samples = range->nan;
  meta->infinite_samples = range->infinite;
}

/* The range and the mapping go over rows without branches, the rows of a
 * plane on every core: a call, branches and lround a sample took 2 ns for
 * the mapping alone (docs/performance/files.md, "TIFF input"). Functions
 * of a whole row are cloned for AVX2, as es-colormap.c's are. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define ES_FLOAT_ROWS __attribute__ ((target_clones ("avx2", "default")))
#else
#define ES_FLOAT_ROWS
#endif

/* Whether a plane's rows go to every core: smaller ones stay on the
 * calling thread. */
static bool
es_float_plane_parallel (const EsImage *plane)
{
  return (size_t) plane->width * (size_t) plane->height >= (1u << 18);
}

/* Widens the range by n samples, counting those that are not finite: a
 * vector reduction (no sample that is not finite moves an end, so the ends
 * are the same in any order). Rows are at most ES_MAX_SIDE samples, so a
 * row's counts fit 32 bits. */
static ES_FLOAT_ROWS void
es_float_range_add_row (EsFloatRange *range, const float *row, size_t n)
{
  float lo = (float) range->lo, hi = (float) range->hi;
  uint32_t nan = 0, infinite = 0;

#pragma omp simd reduction(min : lo) reduction(max : hi) reduction(+ : nan, infinite)
  for (size_t i = 0; i < n; i++)
    {
      const float v = row[i], low = isfinite (v) ? v : INFINITY, high = isfinite (v) ? v : -INFINITY;

      lo = low < lo ? low : lo;
      hi = high > hi ? high : hi;
      nan += v != v;
      infinite += fabsf (v) == INFINITY;
    }
  range->lo = lo < range->lo ? lo : range->lo;
  range->hi = hi > range->hi ? hi : range->hi;
  range->nan += nan;
  range->infinite += infinite;
}

static void
es_float_range_merge (EsFloatRange *range, const EsFloatRange *other)
{
  range->lo = other->lo < range->lo ? other->lo : range->lo;
  range->hi = other->hi > range->hi ? other->hi : range->hi;
  range->nan += other->nan;
  range->infinite += other->infinite;
}

void
es_float_range_add_plane (EsFloatRange *range, const EsImage *plane)
{
#pragma omp parallel if (es_float_plane_parallel(plane))
  {
    EsFloatRange mine = ES_FLOAT_RANGE_EMPTY;

#pragma omp for schedule(static) nowait
    for (int y = 0; y < plane->height; y++)
      es_float_range_add_row (&mine, es_image_row (plane, y), (size_t) plane->width);
#pragma omp critical(es_float_range)
    es_float_range_merge (range, &mine);
  }
}

static ES_FLOAT_ROWS void
es_float_range_samples (const EsFloatRange *range, const float *row, uint16_t *out, size_t n)
{
  const int lowest = range->nan > 0 ? 1 : 0;
  const bool spread = range->hi > range->lo;
  const double lo = range->lo, span = range->hi - range->lo, top = 65535.0 - lowest;

  for (size_t i = 0; i < n; i++)
    {
      double v = row[i];
      /* In [0, top] for a finite sample. lround's half away from zero is
       * its integer part plus whether the fraction (exact) reaches a half. */
      double x = spread && isfinite (v) ? (v - lo) * top / span : 0.0;
      int whole = (int) x;
      int sample = lowest + whole + (x - whole >= 0.5);

      /* Infinities clamp to the ends of the finite range, as a display's
       * contrast limits clamp them (napari, Fiji's 32-bit display). */
      out[i] = (uint16_t) (isnan (v) ? 0 : v == INFINITY ? 65535 : sample);
    }
}

void
es_float_range_plane_samples (const EsFloatRange *range, const EsImage *plane, EsImage *out)
{
#pragma omp parallel for schedule(static) if (es_float_plane_parallel(plane))
  for (int y = 0; y < plane->height; y++)
    es_float_range_samples (range, es_image_row (plane, y), es_image_row (out, y), (size_t) plane->width);
}

void
es_float_notice (const EsImageMeta *meta, int page, char *notice, size_t size)
{
  char where[24] = "", nan[64] = "", infinite[80] = "";

  notice[0] = '\0';
  if (meta->nan_samples == 0 && meta->infinite_samples == 0)
    return;
  if (page > 0)
    snprintf (where, sizeof where, "page %d: ", page);
  if (meta->nan_samples > 0)
    snprintf (nan, sizeof nan, "%llu NaN sample%s (no value)", (unsigned long long) meta->nan_samples,
              meta->nan_samples == 1 ? "" : "s");
  if (meta->infinite_samples > 0)
    snprintf (infinite, sizeof infinite, "%s%llu infinite sample%s (the finite range's end)", nan[0] ? ", " : "",
              (unsigned long long) meta->infinite_samples, meta->infinite_samples == 1 ? "" : "s");
  snprintf (notice, size, "%s%s%s", where, nan, infinite);
}

/* The value of line `key=` of an ImageJ description into value (NUL-ended,
 * at most size − 1 bytes); false when it has no such line. */
static bool
imagej_field (const char *text, const char *key, char *value, size_t size)
{
  size_t n = strlen (key);

  for (const char *line = text; line != NULL && *line != '\0';
       line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    if (strncmp (line, key, n) == 0 && line[n] == '=')
      {
        const char *v = line + n + 1;
        size_t length = strcspn (v, "\r\n");

        length = length < size - 1 ? length : size - 1;
        memcpy (value, v, length);
        value[length] = '\0';
        return true;
      }
  return false;
}

/* Reads the first page's ImageDescription once: an OME-XML's PhysicalSize
 * (every page's pixel size), or ImageJ's unit= and spacing= (the unit of
 * the resolution tags, which ImageJ writes with ResolutionUnit none). */
static void
es_tiff_read_description (EsTiff *tiff)
{
  char *text;
  EsOmePixels ome;
  EsError ignored = { 0 };
  bool is_ome = false;

  if (tiff->described)
    return;
  tiff->described = true;
  text = es_tiff_page_description (tiff, 0);
  if (text == NULL)
    return;
  if (es_ome_read (text, &ome, &is_ome, &ignored))
    es_ome_pixel_size (&ome, &tiff->description);
  else if (!is_ome && strncmp (text, "ImageJ=", 7) == 0)
    {
      char unit[32] = "", spacing[32];

      tiff->imagej = true;
      /* ImageJ writes µ as the escape "\u00B5". */
      imagej_field (text, "unit", unit, sizeof unit);
      tiff->ij_um = strcmp (unit, "um") == 0;
      if (strcmp (unit, "\\u00B5m") == 0)
        strcpy (unit, "µm");
      if (!es_length_unit_from_name (unit, &tiff->ij_unit))
        tiff->ij_unit = ES_LENGTH_NONE;
      if (!imagej_field (text, "spacing", spacing, sizeof spacing) || !es_parse_decimal (spacing, &tiff->ij_spacing))
        tiff->ij_spacing = 0;
    }
  free (text);
}

/* The pixel size of the selected page (DESIGN.md §1): the OME-XML's, else
 * XResolution and YResolution (pixels a unit) in ImageJ's unit, or with
 * ResolutionUnit centimetre or inch; a page without ResolutionUnit, with
 * "none" and no ImageJ unit, or at 72 pixels an inch (the default of
 * writers that know no size, which ImageJ ignores too) stays uncalibrated,
 * as in Fiji. */
static void
es_tiff_calibrate (EsTiff *tiff, EsImageMeta *meta)
{
  float x_resolution = 0, y_resolution = 0;
  uint16_t resolution_unit = RESUNIT_NONE;

  if (es_image_meta_calibrated (&tiff->description))
    {
      meta->pixel_width = tiff->description.pixel_width;
      meta->pixel_height = tiff->description.pixel_height;
      meta->pixel_depth = tiff->description.pixel_depth;
      meta->length_unit = tiff->description.length_unit;
      return;
    }
  if (!TIFFGetField (tiff->tif, TIFFTAG_XRESOLUTION, &x_resolution)
      || !TIFFGetField (tiff->tif, TIFFTAG_YRESOLUTION, &y_resolution))
    return;
  if (!(x_resolution > 0) || !(y_resolution > 0))
    return;
  TIFFGetField (tiff->tif, TIFFTAG_RESOLUTIONUNIT, &resolution_unit);
  /* ImageJ's own unit (and its planes' spacing) as ImageJ shows them: the
   * resolution counts pixels a unit of the description, except that a
   * resolution in pixels a centimetre under "unit=um" is made µm
   * (ij.io.FileOpener), as our stacks and others' are written. */
  if (tiff->imagej && tiff->ij_unit != ES_LENGTH_NONE)
    {
      double per_unit = resolution_unit == RESUNIT_CENTIMETER && tiff->ij_um ? 1e4 : 1.0;

      es_image_meta_set_pixel_size (meta, per_unit / x_resolution, per_unit / y_resolution, tiff->ij_spacing,
                                    tiff->ij_unit);
      return;
    }
  if (resolution_unit == RESUNIT_NONE)
    return;
  /* Centimetres (what TIFF writers, ours too, give) are shown in the metric
   * unit that suits the pixel: 0.65 µm, not 6.5e-05 cm. */
  if (resolution_unit == RESUNIT_CENTIMETER)
    es_image_meta_set_metric_pixel_size (meta, 0.01 / x_resolution, 0.01 / y_resolution, 0);
  else if (resolution_unit == RESUNIT_INCH && !(x_resolution == 72 && y_resolution == 72))
    es_image_meta_set_pixel_size (meta, 1.0 / x_resolution, 1.0 / y_resolution, 0, ES_LENGTH_INCH);
}

/* Maps the float plane to U16 (DESIGN.md §1) into *image. */
static bool
es_tiff_quantize_floats (const EsImage *plane, EsImage *image, EsError *error)
{
  EsFloatRange range = ES_FLOAT_RANGE_EMPTY;

  es_float_range_add_plane (&range, plane);
  if (!es_image_alloc (image, plane->width, plane->height, ES_FORMAT_U16, 16, error))
    return false;
  es_float_range_plane_samples (&range, plane, image);
  es_float_range_map (&range, &image->meta);
  return true;
}

/* Planes R, G, B to luma in plane R (rounded for integers, as PNG's), or
 * for cells to whether any channel is in. */
static void
es_tiff_luma (EsTiffPage *p)
{
  EsImage *r = &p->planes[0], *g = &p->planes[1], *b = &p->planes[2];
  uint32_t top = (1u << p->depth) - 1;

  for (int y = 0; y < r->height; y++)
    for (int x = 0; x < r->width; x++)
      switch (p->plane_format)
        {
          case ES_FORMAT_F32: {
            float *rr = es_image_row (r, y);
            float gg = ((float *) es_image_row (g, y))[x], bb = ((float *) es_image_row (b, y))[x];

            if (p->cells)
              rr[x] = es_cell_in (rr[x]) || es_cell_in (gg) || es_cell_in (bb);
            else
              rr[x] = (float) (0.2126 * rr[x] + 0.7152 * gg + 0.0722 * bb);
            break;
          }
          case ES_FORMAT_U8: {
            uint8_t *rr = es_image_row (r, y);
            uint32_t v = (p->cells ? es_cell_of_rgb : es_luma_int) (rr[x], ((uint8_t *) es_image_row (g, y))[x],
                                                                    ((uint8_t *) es_image_row (b, y))[x]);
            rr[x] = (uint8_t) (v > top ? top : v);
            break;
          }
          case ES_FORMAT_U16: {
            uint16_t *rr = es_image_row (r, y);
            uint32_t v = (p->cells ? es_cell_of_rgb : es_luma_int) (rr[x], ((uint16_t *) es_image_row (g, y))[x],
                                                                    ((uint16_t *) es_image_row (b, y))[x]);
            rr[x] = (uint16_t) (v > top ? top : v);
            break;
          }
        }
}

/* Reads the page's tags; false with error set when it cannot be decoded. */
static bool
es_tiff_describe (EsTiff *tiff, EsTiffPage *p, bool *direct, EsError *error)
{
  TIFF *tif = tiff->tif;
  uint16_t compression = COMPRESSION_NONE;

  TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &p->width);
  TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &p->height);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &p->spp);
  TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &p->bits);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &p->sample_format);
  TIFFGetFieldDefaulted (tif, TIFFTAG_PLANARCONFIG, &p->planar);
  TIFFGetFieldDefaulted (tif, TIFFTAG_COMPRESSION, &compression);
  if (!TIFFGetField (tif, TIFFTAG_PHOTOMETRIC, &p->photometric))
    p->photometric = p->spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;

  if (p->width == 0 || p->height == 0)
    return es_error_set (error, ES_ERROR_FORMAT, "TIFF: empty image (%" PRIu32 "×%" PRIu32 ")", p->width, p->height);
  if (p->width > ES_MAX_SIDE || p->height > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_LIMIT, "TIFF: image size %" PRIu32 "×%" PRIu32 " is over the limit", p->width,
                         p->height);
  if (!TIFFIsCODECConfigured (compression))
    return es_error_set (error, ES_ERROR_FORMAT, "TIFF: compression %u is not available in this libtiff",
                         (unsigned) compression);
  if (p->spp == 0)
    return es_error_set (error, ES_ERROR_FORMAT, "TIFF: no samples per pixel");

  /* JPEG-compressed YCbCr is decoded to RGB by libtiff itself. */
  if (p->photometric == PHOTOMETRIC_YCBCR && compression == COMPRESSION_JPEG && p->planar == PLANARCONFIG_CONTIG)
    {
      TIFFSetField (tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
      p->photometric = PHOTOMETRIC_RGB;
    }
  p->floats = p->sample_format == SAMPLEFORMAT_IEEEFP && (p->bits == 32 || p->bits == 64);
  p->colour = p->photometric == PHOTOMETRIC_RGB;
  p->invert = p->photometric == PHOTOMETRIC_MINISWHITE;
  *direct = (p->photometric == PHOTOMETRIC_MINISBLACK || p->photometric == PHOTOMETRIC_MINISWHITE
             || (p->colour && p->spp >= 3))
            && (p->floats
                || (p->sample_format == SAMPLEFORMAT_UINT
                    && (p->bits == 1 || p->bits == 2 || p->bits == 4 || p->bits == 8 || p->bits == 16))
                || (p->sample_format == SAMPLEFORMAT_INT && (p->bits == 8 || p->bits == 16)))
            && compression != COMPRESSION_OJPEG;
  if (*direct)
    {
      p->plane_format = p->floats ? ES_FORMAT_F32 : p->bits <= 8 ? ES_FORMAT_U8 : ES_FORMAT_U16;
      p->depth = p->floats ? 16 : p->bits;
    }
  else if (p->floats || p->bits > 16 || p->sample_format == SAMPLEFORMAT_COMPLEXINT
           || p->sample_format == SAMPLEFORMAT_COMPLEXIEEEFP)
    return es_error_set (error, ES_ERROR_FORMAT, "TIFF: %u-bit %s samples with photometric %u are not supported",
                         (unsigned) p->bits, p->floats ? "float" : "integer", (unsigned) p->photometric);
  else
    {
      p->plane_format = ES_FORMAT_U8;
      p->depth = 8;
    }
  return true;
}

bool
es_tiff_page_format (EsTiff *tiff, int page, EsFormat *format, int *depth, bool *floats, EsError *error)
{
  EsTiffPage p = { 0 };
  bool direct = false;

  if (!es_tiff_select (tiff, page, error) || !es_tiff_describe (tiff, &p, &direct, error))
    return false;
  /* What es_tiff_read_page gives: floats become 16-bit samples. */
  *floats = p.floats;
  *format = p.floats ? ES_FORMAT_U16 : p.plane_format;
  *depth = p.depth;
  return true;
}

char *
es_tiff_page_description (EsTiff *tiff, int page)
{
  const char *text = NULL;
  EsError ignored = { 0 };

  if (!es_tiff_select (tiff, page, &ignored) || !TIFFGetField (tiff->tif, TIFFTAG_IMAGEDESCRIPTION, &text)
      || text == NULL)
    return NULL;
  return strdup (text);
}

static bool es_tiff_decode_page (EsTiff *tiff, int page, bool keep_floats, EsImage *image, EsError *error);

bool
es_tiff_read_page (EsTiff *tiff, int page, EsImage *image, EsError *error)
{
  return es_tiff_decode_page (tiff, page, false, image, error);
}

bool
es_tiff_read_page_floats (EsTiff *tiff, int page, EsImage *image, EsError *error)
{
  return es_tiff_decode_page (tiff, page, true, image, error);
}

static bool
es_tiff_decode_page (EsTiff *tiff, int page, bool keep_floats, EsImage *image, EsError *error)
{
  EsTiffPage p = { 0 };
  EsError local = { 0 };
  bool direct = false, ok;
  int planes;

  if (tiff->rule == ES_SAMPLES_IMAGE)
    es_tiff_read_description (tiff);
  if (!es_tiff_select (tiff, page, error) || !es_tiff_describe (tiff, &p, &direct, error))
    return false;
  p.cells = tiff->rule == ES_SAMPLES_CELLS;
  planes = direct && p.colour ? 3 : 1;
  /* Every plane is checked and allocated before any sample is read: the
   * sides and the pixel budget come first. */
  if (!es_image_check_size ((int) p.width, (int) p.height, p.plane_format, &local))
    return es_error_set (error, local.code, "TIFF: %s", local.message);
  for (int c = 0; c < planes; c++)
    if (!es_image_alloc (&p.planes[c], (int) p.width, (int) p.height, p.plane_format, p.depth, &local))
      {
        for (int k = 0; k < c; k++)
          es_image_clear (&p.planes[k]);
        return es_error_set (error, local.code, "TIFF: %s", local.message);
      }

  if (!direct)
    ok = es_tiff_read_rgba (tiff, &p, error);
  else if (TIFFIsTiled (tiff->tif))
    ok = es_tiff_read_tiles (tiff, &p, error);
  else
    ok = es_tiff_read_strips (tiff, &p, error);
  if (ok && planes == 3)
    es_tiff_luma (&p);
  for (int c = 1; c < planes; c++)
    es_image_clear (&p.planes[c]);
  if (!ok)
    {
      es_image_clear (&p.planes[0]);
      return false;
    }
  if (p.floats && !keep_floats)
    {
      ok = es_tiff_quantize_floats (&p.planes[0], image, &local);
      es_image_clear (&p.planes[0]);
      if (!ok)
        return es_error_set (error, local.code, "TIFF: %s", local.message);
    }
  else
    *image = p.planes[0];
  if (p.cells)
    return true;
  if (direct && p.sample_format == SAMPLEFORMAT_INT && !p.colour)
    image->meta = (EsImageMeta){ .stored = ES_STORED_SIGNED,
                                 /* The sample is v + 2^(bits−1), or its inverse under MinIsWhite. */
                                 .value_offset = p.invert ? (p.bits == 8 ? 127.0 : 32767.0)
                                                          : (p.bits == 8 ? -128.0 : -32768.0),
                                 .value_scale = p.invert ? -1.0 : 1.0 };
  es_tiff_calibrate (tiff, &image->meta);
  return true;
}
