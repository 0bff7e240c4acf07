/* SPDX-License-Identifier: MIT */
/* Image loading: recognises the format from the first bytes, then decodes while reading in bounded pieces. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-load-internal.h"
#include "es-text-matrix-internal.h"
#ifdef ES_HAVE_TIFF
#include "es-tiff.h"
#endif
#ifdef ES_HAVE_JPEG
#include "es-jpeg.h"
#endif

/* What refusals list as readable: the formats of the libraries built in. */
#ifdef ES_HAVE_TIFF
#define ES_LOAD_FORMATS_TIFF ", TIFF"
#else
#define ES_LOAD_FORMATS_TIFF ""
#endif
#ifdef ES_HAVE_JPEG
#define ES_LOAD_FORMATS_JPEG ", JPEG"
#else
#define ES_LOAD_FORMATS_JPEG ""
#endif
#define ES_LOAD_FORMATS "PNG, PGM" ES_LOAD_FORMATS_TIFF ES_LOAD_FORMATS_JPEG ", text matrix"

/* Larger inputs are refused: no accepted image needs them (2^30 pixels of
 * 16-bit PGM is 2 GiB) and a text matrix that large would take minutes. A
 * regular file is refused from its size, anything else after limit + 1
 * bytes. */
#define ES_LOAD_MAX_FILE_SIZE (4ull << 30)

static uint64_t max_file_size = ES_LOAD_MAX_FILE_SIZE;
static EsControl *interrupt_control;

void
es_load_set_max_file_size (uint64_t bytes)
{
  max_file_size = bytes ? bytes : ES_LOAD_MAX_FILE_SIZE;
}

uint64_t
es_load_get_max_file_size (void)
{
  return max_file_size;
}

void
es_load_set_interrupt (EsControl *control)
{
  interrupt_control = control;
  es_reader_set_interrupt (control);
#ifdef ES_HAVE_TIFF
  es_tiff_set_interrupt (control);
#endif
}

EsControl *
es_load_get_interrupt (void)
{
  return interrupt_control;
}

/* ---- recognising the format ---- */

/* Formats that are recognised only to be named in the refusal (TIFF and
 * JPEG too, without libtiff or libjpeg-turbo). The magic numbers are those of the formats'
 * specifications (and of file(1)). */
typedef struct {
  const char *name;
  size_t offset;
  const char *magic;
  size_t length;
} EsMagic;

#define MAGIC(name, offset, bytes)                                                                                     \
  {                                                                                                                    \
    name, offset, bytes, sizeof bytes - 1                                                                              \
  }

static const EsMagic unsupported[] = {
  MAGIC ("JPEG", 0, "\xff\xd8\xff"),
  MAGIC ("TIFF", 0, "II*\0"),
  MAGIC ("TIFF", 0, "MM\0*"),
  MAGIC ("BigTIFF", 0, "II+\0"),
  MAGIC ("BigTIFF", 0, "MM\0+"),
  MAGIC ("GIF", 0, "GIF87a"),
  MAGIC ("GIF", 0, "GIF89a"),
  MAGIC ("JPEG 2000", 0, "\0\0\0\x0cjP  \r\n\x87\n"),
  MAGIC ("JPEG 2000", 0, "\xff\x4f\xff\x51"),
  MAGIC ("JPEG XL", 0, "\0\0\0\x0cJXL \r\n\x87\n"),
  MAGIC ("JPEG XL", 0, "\xff\x0a"),
  MAGIC ("HEIF", 4, "ftypheic"),
  MAGIC ("HEIF", 4, "ftypheix"),
  MAGIC ("HEIF", 4, "ftypmif1"),
  MAGIC ("HEIF", 4, "ftypmsf1"),
  MAGIC ("AVIF", 4, "ftypavif"),
  MAGIC ("AVIF", 4, "ftypavis"),
  MAGIC ("OpenEXR", 0, "\x76\x2f\x31\x01"),
  MAGIC ("Photoshop (PSD)", 0, "8BPS"),
  MAGIC ("QOI", 0, "qoif"),
  MAGIC ("MNG", 0, "\x8aMNG\r\n\x1a\n"),
  MAGIC ("JNG", 0, "\x8bJNG\r\n\x1a\n"),
  MAGIC ("FITS", 0, "SIMPLE  ="),
  MAGIC ("Radiance HDR", 0, "#?RADIANCE"),
  MAGIC ("DDS", 0, "DDS |"),
  MAGIC ("PDF", 0, "%PDF-"),
};

static bool
has (const uint8_t *head, size_t size, size_t offset, const char *magic, size_t length)
{
  return size >= offset + length && memcmp (head + offset, magic, length) == 0;
}

static inline bool
is_space (uint8_t c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The Netpbm formats other than PGM, by the digit after 'P'. */
static const char *
netpbm_name (uint8_t c)
{
  switch (c)
    {
    case '1': return "PBM (P1)";
    case '4': return "PBM (P4)";
    case '3': return "PPM (P3)";
    case '6': return "PPM (P6)";
    case '7': return "PAM (P7)";
    case 'F': return "PFM (PF)";
    case 'f': return "PFM (Pf)";
    default: return NULL;
    }
}

/* A BMP file header: "BM", then reserved zeros at 6..9 and a DIB header
 * of a known size at 14: "BM" alone starts too many text files. */
static bool
is_bmp (const uint8_t *head, size_t size)
{
  static const uint32_t dib_sizes[] = { 12, 40, 52, 56, 64, 108, 124 };
  uint32_t dib;

  if (size < 18 || head[0] != 'B' || head[1] != 'M' || head[6] || head[7] || head[8] || head[9])
    return false;
  dib = (uint32_t) head[14] | (uint32_t) head[15] << 8 | (uint32_t) head[16] << 16 | (uint32_t) head[17] << 24;
  for (size_t i = 0; i < sizeof dib_sizes / sizeof dib_sizes[0]; i++)
    if (dib == dib_sizes[i])
      return true;
  return false;
}

/* The PNG signature is 0x89 "PNG\r\n" 0x1a "\n". A damaged one (a flipped
 * bit, a text-mode line ending conversion) still goes to the PNG decoder,
 * which then says what is wrong with it: the three letters, or 0x89 with
 * two of them. */
static bool
is_png (const uint8_t *head, size_t size)
{
  int letters = 0;

  if (has (head, size, 1, "PNG", 3))
    return true;
  if (size < 1 || head[0] != 0x89)
    return false;
  for (size_t i = 1; i < 4 && i < size; i++)
    letters += head[i] == (uint8_t) "\x89PNG"[i];
  return letters >= 2;
}

EsInputKind
es_load_sniff (const uint8_t *head, size_t size, bool complete, const char **name)
{
  *name = NULL;
  if (size == 0)
    return complete ? ES_INPUT_EMPTY : ES_INPUT_NEED_MORE;
  /* Every magic number below fits in the first 32 bytes. */
  if (size < 32 && !complete)
    return ES_INPUT_NEED_MORE;

  if (is_png (head, size))
    return ES_INPUT_PNG;
#ifdef ES_HAVE_TIFF
  /* Classic TIFF (42) and BigTIFF (43), little- or big-endian. */
  if (has (head, size, 0, "II*\0", 4) || has (head, size, 0, "MM\0*", 4) || has (head, size, 0, "II+\0", 4)
      || has (head, size, 0, "MM\0+", 4))
    return ES_INPUT_TIFF;
#endif
#ifdef ES_HAVE_JPEG
  /* SOI, then the 0xFF of the next marker (ITU T.81 B.1.1.3). */
  if (has (head, size, 0, "\xff\xd8\xff", 3))
    return ES_INPUT_JPEG;
#endif
  /* Netpbm: 'P', a digit, then whitespace (or a comment, or the end). */
  if (head[0] == 'P' && size >= 2 && (size == 2 || is_space (head[2]) || head[2] == '#'))
    {
      if (head[1] == '2' || head[1] == '5')
        return ES_INPUT_PGM;
      if ((*name = netpbm_name (head[1])) != NULL)
        return ES_INPUT_UNSUPPORTED;
    }
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
    if (has (head, size, unsupported[i].offset, unsupported[i].magic, unsupported[i].length))
      {
        *name = unsupported[i].name;
        return ES_INPUT_UNSUPPORTED;
      }
  if (is_bmp (head, size))
    {
      *name = "BMP";
      return ES_INPUT_UNSUPPORTED;
    }
  if (has (head, size, 0, "RIFF", 4) && has (head, size, 8, "WEBP", 4))
    {
      *name = "WebP";
      return ES_INPUT_UNSUPPORTED;
    }

  /* A text matrix starts with its height, after blank lines perhaps. */
  for (size_t i = 0; i < size; i++)
    {
      if (is_space (head[i]))
        continue;
      return head[i] >= '0' && head[i] <= '9' ? ES_INPUT_TEXT_MATRIX : ES_INPUT_UNKNOWN;
    }
  /* Only whitespace so far: a short whitespace file is an empty text
   * matrix (its decoder says so), but ES_SNIFF_MAX bytes of it is no image,
   * whatever follows. */
  if (size >= ES_SNIFF_MAX)
    return ES_INPUT_UNKNOWN;
  return complete ? ES_INPUT_TEXT_MATRIX : ES_INPUT_NEED_MORE;
}

/* The refusals of inputs that are not ours. */
static bool
es_load_refuse (EsInputKind kind, const char *name, EsError *error)
{
  switch (kind)
    {
    case ES_INPUT_EMPTY: return es_error_set (error, ES_ERROR_FORMAT, "empty file");
    case ES_INPUT_UNSUPPORTED:
      return es_error_set (error, ES_ERROR_FORMAT, "%s is not supported (" ES_LOAD_FORMATS " are)", name);
    default: return es_error_set (error, ES_ERROR_FORMAT, "not an image this program reads (" ES_LOAD_FORMATS ")");
    }
}

/* ---- pages ---- */

/* A TIFF is held open and decoded page by page; any other input is one
 * page, decoded when it is opened. */
struct EsPages {
  int count;
  EsImage first;
  bool first_taken;
#ifdef ES_HAVE_TIFF
  EsTiff *tiff;
#endif
  int fd; /* opened by es_pages_open, else -1 */
  char notice[160];
};

static EsPages *
es_pages_new (EsError *error)
{
  EsPages *pages = calloc (1, sizeof *pages);

  if (pages == NULL)
    es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
  else
    {
      pages->count = 1;
      pages->fd = -1;
    }
  return pages;
}

int
es_pages_count (const EsPages *pages)
{
  return pages->count;
}

bool
es_pages_size (EsPages *pages, int index, int *width, int *height, EsError *error)
{
  if (index < 0 || index >= pages->count)
    return es_error_set (error, ES_ERROR_INVALID, "no page %d (of %d)", index + 1, pages->count);
#ifdef ES_HAVE_TIFF
  if (pages->tiff != NULL)
    return es_tiff_page_size (pages->tiff, index, width, height, error);
#endif
  *width = pages->first.width;
  *height = pages->first.height;
  return true;
}

const char *
es_pages_notice (const EsPages *pages)
{
  return pages->notice[0] ? pages->notice : NULL;
}

bool
es_pages_load (EsPages *pages, int index, EsImage *image, EsError *error)
{
  pages->notice[0] = '\0';
  if (index < 0 || index >= pages->count)
    return es_error_set (error, ES_ERROR_INVALID, "no page %d (of %d)", index + 1, pages->count);
#ifdef ES_HAVE_TIFF
  if (pages->tiff != NULL)
    {
      if (!es_tiff_read_page (pages->tiff, index, image, error))
        {
          if (pages->count > 1)
            es_error_prefix (error, "page %d", index + 1);
          return false;
        }
      es_float_notice (&image->meta, pages->count > 1 ? index + 1 : 0, pages->notice, sizeof pages->notice);
      return true;
    }
#endif
  if (pages->first_taken)
    return es_error_set (error, ES_ERROR_INVALID, "the page was already loaded");
  *image = pages->first;
  pages->first = (EsImage){ 0 };
  pages->first_taken = true;
  return true;
}

bool
es_pages_format (EsPages *pages, int index, EsFormat *format, int *depth, bool *floats, EsError *error)
{
  if (index < 0 || index >= pages->count)
    return es_error_set (error, ES_ERROR_INVALID, "no page %d (of %d)", index + 1, pages->count);
#ifdef ES_HAVE_TIFF
  if (pages->tiff != NULL)
    return es_tiff_page_format (pages->tiff, index, format, depth, floats, error);
#endif
  *format = pages->first.format;
  *depth = pages->first.depth;
  *floats = false;
  return true;
}

char *
es_pages_description (EsPages *pages, int index)
{
#ifdef ES_HAVE_TIFF
  if (pages->tiff != NULL && index >= 0 && index < pages->count)
    return es_tiff_page_description (pages->tiff, index);
#endif
  (void) pages;
  (void) index;
  return NULL;
}

bool
es_pages_load_floats (EsPages *pages, int index, EsImage *image, EsError *error)
{
#ifdef ES_HAVE_TIFF
  if (pages->tiff != NULL && index >= 0 && index < pages->count)
    {
      pages->notice[0] = '\0';
      if (es_tiff_read_page_floats (pages->tiff, index, image, error))
        return true;
      if (pages->count > 1)
        es_error_prefix (error, "page %d", index + 1);
      return false;
    }
#endif
  return es_pages_load (pages, index, image, error);
}

void
es_pages_close (EsPages *pages)
{
  if (pages == NULL)
    return;
  es_image_clear (&pages->first);
#ifdef ES_HAVE_TIFF
  es_tiff_close (pages->tiff);
#endif
  if (pages->fd >= 0)
    close (pages->fd);
  free (pages);
}

/* The first page, for the single-image entry points. */
static bool
es_pages_take_first (EsPages *pages, EsImage *image, EsError *error)
{
  bool ok;

  if (pages == NULL)
    return false;
  ok = es_pages_load (pages, 0, image, error);
  es_pages_close (pages);
  return ok;
}

/* ---- from memory ---- */

EsPages *
es_pages_open_memory (const void *data, size_t size, int levels, EsError *error)
{
  const char *name;
  EsInputKind kind = es_load_sniff (data, size < ES_SNIFF_MAX ? size : ES_SNIFF_MAX, size <= ES_SNIFF_MAX, &name);
  EsPages *pages;
  bool ok;

  if (kind != ES_INPUT_PNG && kind != ES_INPUT_PGM && kind != ES_INPUT_TEXT_MATRIX && kind != ES_INPUT_TIFF
      && kind != ES_INPUT_JPEG)
    {
      es_load_refuse (kind, name, error);
      return NULL;
    }
  if ((pages = es_pages_new (error)) == NULL)
    return NULL;
  switch (kind)
    {
#ifdef ES_HAVE_TIFF
    case ES_INPUT_TIFF:
      pages->tiff = es_tiff_open_memory (data, size, false, error);
      ok = pages->tiff != NULL && (pages->count = es_tiff_page_count (pages->tiff, error)) > 0;
      break;
#endif
#ifdef ES_HAVE_JPEG
    case ES_INPUT_JPEG: ok = es_jpeg_decode (data, size, &pages->first, error); break;
#endif
    case ES_INPUT_PNG: ok = es_png_decode (data, size, &pages->first, error); break;
    case ES_INPUT_PGM: ok = es_pgm_decode (data, size, &pages->first, error); break;
    default: ok = es_text_matrix_decode (data, size, levels, &pages->first, error); break;
    }
  if (!ok)
    {
      es_pages_close (pages);
      return NULL;
    }
  return pages;
}

bool
es_load_memory (const void *data, size_t size, int levels, EsImage *image, EsError *error)
{
  return es_pages_take_first (es_pages_open_memory (data, size, levels, error), image, error);
}

/* ---- from a file ---- */

#ifdef ES_HAVE_TIFF
/* libtiff needs to seek: a regular file is read where it lies, anything
 * else (a pipe, a FIFO, stdin) is read into memory first, in pieces and
 * never past the size limit. */
static size_t
es_load_take_all (void *state, const uint8_t *bytes, size_t n, bool *done)
{
  (void) state;
  (void) bytes;
  (void) done;
  return n;
}

static EsTiff *
es_load_open_tiff (EsReader *reader, int fd, const struct stat *st, EsError *error)
{
  uint8_t *data;
  size_t size;

  if (S_ISREG (st->st_mode))
    {
      off_t now = lseek (fd, 0, SEEK_CUR);

      /* The input starts where the reader started reading. */
      if (now >= 0 && (uint64_t) now >= reader->total && (uint64_t) st->st_size >= (uint64_t) now - reader->total)
        {
          uint64_t start = (uint64_t) now - reader->total;
          return es_tiff_open_fd (fd, start, (uint64_t) st->st_size - start, error);
        }
    }
  if (!es_reader_read_rest (reader, es_load_take_all, NULL, &data, &size, error))
    return NULL;
  return es_tiff_open_memory (data, size, true, error);
}
#endif

static EsPages *
pages_open_fd (int fd, int levels, EsRowWatch *watch, EsSampleRule rule, EsError *error)
{
  EsReader reader;
  EsPages *pages;
  struct stat st;
  const char *name;
  EsInputKind kind;
  size_t head;
  bool ok;

  if (fstat (fd, &st) != 0)
    {
      es_error_set (error, ES_ERROR_IO, "%s", strerror (errno));
      return NULL;
    }
  if (S_ISDIR (st.st_mode))
    {
      es_error_set (error, ES_ERROR_IO, "%s", strerror (EISDIR));
      return NULL;
    }
  if ((pages = es_pages_new (error)) == NULL)
    return NULL;
  if (!es_reader_init_fd (&reader, fd, max_file_size, error))
    {
      es_pages_close (pages);
      return NULL;
    }

  /* The first 32 bytes decide, unless they are all blank. */
  head = es_reader_fill (&reader, 32);
  kind = es_load_sniff (reader.data, head, reader.eof, &name);
  if (kind == ES_INPUT_NEED_MORE)
    {
      head = es_reader_fill (&reader, ES_SNIFF_MAX);
      kind = es_load_sniff (reader.data, head, reader.eof, &name);
    }
  {
    EsError failed = { 0 };

    /* An input that ended early (a read error, the limit, an interruption)
     * may look empty, truncated or like something else, which it is not.
     * Only 32 bytes or more that show a format not ours are a verdict. */
    if (es_reader_failed (&reader, &failed)
        && (failed.code == ES_ERROR_CANCELLED || head < 32
            || (kind != ES_INPUT_UNSUPPORTED && kind != ES_INPUT_UNKNOWN)))
      {
        es_reader_clear (&reader);
        es_pages_close (pages);
        es_error_set (error, failed.code, "%s", failed.message);
        return NULL;
      }
  }

  /* A regular file says how long it is: refuse it unread. */
  if (kind == ES_INPUT_PNG || kind == ES_INPUT_PGM || kind == ES_INPUT_TEXT_MATRIX || kind == ES_INPUT_TIFF
      || kind == ES_INPUT_JPEG)
    if (S_ISREG (st.st_mode) && (uint64_t) st.st_size > max_file_size)
      {
        reader.error = EFBIG;
        es_reader_failed (&reader, error);
        es_reader_clear (&reader);
        es_pages_close (pages);
        return NULL;
      }

  switch (kind)
    {
    case ES_INPUT_PNG: ok = es_png_decode_reader (&reader, &pages->first, watch, rule, error); break;
    case ES_INPUT_PGM: ok = es_pgm_decode_reader (&reader, &pages->first, error); break;
#ifdef ES_HAVE_JPEG
    case ES_INPUT_JPEG: ok = es_jpeg_decode_reader (&reader, &pages->first, rule, error); break;
#endif
#ifdef ES_HAVE_TIFF
    case ES_INPUT_TIFF:
      pages->tiff = es_load_open_tiff (&reader, fd, &st, error);
      ok = pages->tiff != NULL;
      if (ok)
        {
          es_tiff_set_sample_rule (pages->tiff, rule);
          ok = (pages->count = es_tiff_page_count (pages->tiff, error)) > 0;
        }
      break;
#endif
      case ES_INPUT_TEXT_MATRIX: {
        EsTextScan scan = { 0 };
        uint8_t *text;
        size_t size;

        /* Read only as far as the parser can need (es_text_matrix_scan). */
        ok = es_reader_read_rest (&reader, es_text_matrix_scan, &scan, &text, &size, error);
        if (ok)
          {
            ok = es_text_matrix_decode (text, size, levels, &pages->first, error);
            free (text);
          }
      }
      break;
    default: ok = es_load_refuse (kind, name, error); break;
    }
  es_reader_clear (&reader);
  if (!ok)
    {
      es_pages_close (pages);
      return NULL;
    }
  return pages;
}

EsPages *
es_pages_open_fd (int fd, int levels, EsError *error)
{
  return pages_open_fd (fd, levels, NULL, ES_SAMPLES_IMAGE, error);
}

bool
es_load_fd (int fd, int levels, EsImage *image, EsError *error)
{
  return es_pages_take_first (es_pages_open_fd (fd, levels, error), image, error);
}

static EsPages *
pages_open_path (const char *path, int levels, EsRowWatch *watch, EsSampleRule rule, EsError *error)
{
  EsPages *pages;
  int fd;

  /* Opening a FIFO waits for a writer; a signal that cancels the process's
   * control ends the wait. */
  while ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR)
    if (es_control_cancelled (interrupt_control))
      {
        es_error_set (error, ES_ERROR_CANCELLED, "interrupted");
        return NULL;
      }
  if (fd < 0)
    {
      es_error_set (error, ES_ERROR_IO, "%s", strerror (errno));
      return NULL;
    }
  pages = pages_open_fd (fd, levels, watch, rule, error);
  /* A TIFF in a regular file is read from the descriptor page by page. */
  if (pages != NULL)
    pages->fd = fd;
  else
    close (fd);
  return pages;
}

EsPages *
es_pages_open_watched (const char *path, int levels, EsRowWatch *watch, EsError *error)
{
  return pages_open_path (path, levels, watch, ES_SAMPLES_IMAGE, error);
}

EsPages *
es_pages_open (const char *path, int levels, EsError *error)
{
  return es_pages_open_watched (path, levels, NULL, error);
}

bool
es_load_file (const char *path, int levels, EsImage *image, EsError *error)
{
  return es_pages_take_first (es_pages_open (path, levels, error), image, error);
}

/* One page's samples as cells, into plane z of cells. */
static void
cells_from_page (const EsImage *page, EsImage *cells, int z)
{
  for (int y = 0; y < page->height; y++)
    {
      const void *row = es_image_row (page, y);
      uint8_t *out = es_image_voxel_row (cells, z, y);

      for (int x = 0; x < page->width; x++)
        switch (page->format)
          {
          case ES_FORMAT_U16: out[x] = ((const uint16_t *) row)[x] != 0; break;
          case ES_FORMAT_F32: out[x] = es_cell_in (((const float *) row)[x]); break;
          default: out[x] = ((const uint8_t *) row)[x] != 0; break;
          }
    }
}

/* Every page of pages (closed here) as a plane of cells. */
static bool
cells_from_pages (EsPages *pages, EsImage *cells, EsError *error)
{
  int count, width = 0, height = 0;
  bool ok;

  if (pages == NULL)
    return false;
  count = es_pages_count (pages);
  ok = es_pages_size (pages, 0, &width, &height, error);
  /* Every page's size before any is decoded, as a volume's are checked. */
  for (int z = 1; ok && z < count; z++)
    {
      int w, h;

      ok = es_pages_size (pages, z, &w, &h, error);
      if (ok && (w != width || h != height))
        ok = es_error_set (error, ES_ERROR_FORMAT, "page %d is %d×%d, page 1 %d×%d: the pages must agree in size",
                           z + 1, w, h, width, height);
    }
  ok = ok && es_image_alloc_volume (cells, width, height, count, ES_FORMAT_U8, 1, error);
  /* Floats as stored: a mask of ones, or of 0.5 and 1.0, is in everywhere,
   * which the 16-bit mapping of their range would not keep. */
  for (int z = 0; ok && z < count; z++)
    {
      EsImage page = { 0 };

      ok = es_pages_load_floats (pages, z, &page, error);
      if (ok)
        cells_from_page (&page, cells, z);
      es_image_clear (&page);
    }
  es_pages_close (pages);
  if (!ok)
    es_image_clear (cells);
  return ok;
}

/* 256 levels: a text matrix of cells holds any byte value. */
bool
es_load_cells (const char *path, EsImage *cells, EsError *error)
{
  return cells_from_pages (pages_open_path (path, 256, NULL, ES_SAMPLES_CELLS, error), cells, error);
}

bool
es_load_cells_fd (int fd, EsImage *cells, EsError *error)
{
  return cells_from_pages (pages_open_fd (fd, 256, NULL, ES_SAMPLES_CELLS, error), cells, error);
}
