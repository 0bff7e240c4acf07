/* SPDX-License-Identifier: MIT */
/* The fast PNG path for the common layouts (8/16-bit gray, gray+alpha, RGB, RGBA, not interlaced):
 * our own unfiltering (es-png-unfilter.c) after either the whole IDAT stream inflated at once
 * (es-inflate-parallel.c on several threads, else libdeflate), then rows on every core, or zlib
 * inflating it as it is read, rows handed on as they complete (a streaming consumer, or a build
 * without libdeflate). Every chunk's CRC is checked, chunk order is checked as libpng does, and
 * both ways give the same image and the same message for the same file. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef ES_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "es-calibration.h"
#include "es-inflate-parallel.h"
#include "es-load-internal.h"
#include "es-png-inflate.h"
#include "es-png-unfilter.h"
#include "es-test-hooks.h"

/* deflate expands its input by at most 1032:1, so IDAT data this much
 * smaller than the image cannot hold it. */
#define ES_PNG_MAX_RATIO 1032
/* Output room past the image, so that a stream with more data than the
 * image still fills every image byte before libdeflate stops (a stored
 * block is at most 65535 bytes, a match 258). */
#define ES_PNG_INFLATE_SLACK (128u << 10)

static const uint8_t png_signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

/* libdeflate's CRC-32 is several times faster than zlib's. */
static inline uint32_t
chunk_crc32 (uint32_t crc, const uint8_t *bytes, size_t n)
{
#ifdef ES_HAVE_LIBDEFLATE
  return libdeflate_crc32 (crc, bytes, n);
#else
  return (uint32_t) crc32_z (crc, bytes, n);
#endif
}

static bool force_streamed;

void
es_png_inflate_force_streamed (bool streamed)
{
  force_streamed = streamed;
}

/* Tests of the CLI reach the zlib path through the environment. */
bool
es_load_png_rows_while_reading (void)
{
#ifdef ES_HAVE_LIBDEFLATE
  return force_streamed || es_test_hook_png_zlib ();
#else
  return true;
#endif
}

static inline uint32_t
be32 (const uint8_t *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

bool
es_png_inflate_takes (EsReader *reader)
{
  size_t size = es_reader_fill (reader, 33);
  const uint8_t *d = reader->data + reader->pos;

  if (size < 33 || memcmp (d, png_signature, 8) != 0 || be32 (d + 8) != 13 || memcmp (d + 12, "IHDR", 4) != 0)
    return false;
  /* depth 8 or 16; colour type 0, 2, 4 or 6; deflate, filter method 0, no interlace. */
  return (d[24] == 8 || d[24] == 16) && (d[25] == 0 || d[25] == 2 || d[25] == 4 || d[25] == 6) && d[26] == 0
         && d[27] == 0 && d[28] == 0;
}

/* ---- chunks ---- */

typedef struct Streamed Streamed;

typedef struct {
  EsReader *reader;
  EsError *error;
  Streamed *stream; /* NULL: the IDAT stream is joined in idat */
  uint8_t *idat;
  size_t idat_size, idat_capacity;
  uint64_t idat_max; /* more cannot be image data (deflate's worst case) */
  EsImageMeta meta;  /* the pixel size of a pHYs chunk in metres */
  /* The image rows are decoded into while the chunks are read (NULL when
   * they are all read first): it gets meta before its first row, so that
   * a consumer of rows (EsRowWatch) sees the pixel size. */
  EsImage *image;
} EsPngChunks;

static bool streamed_feed (Streamed *s, const uint8_t *bytes, size_t n, EsError *error);

static bool
es_png_truncated (EsPngChunks *c)
{
  if (es_reader_failed (c->reader, c->error))
    return false;
  return es_error_set (c->error, ES_ERROR_FORMAT, "file is truncated");
}

/* Reads n bytes of chunk data, adding them to the CRC: into out, to the
 * streaming inflater (feed), or skipped. */
static bool
es_png_chunk_data (EsPngChunks *c, uint8_t *out, bool feed, uint32_t n, uint32_t *crc)
{
  while (n > 0)
    {
      size_t available = es_reader_fill (c->reader, n < ES_READER_BUFFER ? n : ES_READER_BUFFER);
      size_t take = available < n ? available : n;
      const uint8_t *bytes = c->reader->data + c->reader->pos;

      if (take == 0)
        return es_png_truncated (c);
      *crc = chunk_crc32 (*crc, bytes, take);
      if (feed && !streamed_feed (c->stream, bytes, take, c->error))
        return false;
      if (out != NULL)
        {
          memcpy (out, bytes, take);
          out += take;
        }
      c->reader->pos += take;
      n -= (uint32_t) take;
    }
  return true;
}

static bool
es_png_chunk_crc (EsPngChunks *c, const char *type, uint32_t crc)
{
  uint8_t stored[4];

  if (es_reader_read (c->reader, stored, 4) != 4)
    return es_png_truncated (c);
  if (be32 (stored) != crc)
    return es_error_set (c->error, ES_ERROR_FORMAT, "%.4s: CRC error", type);
  return true;
}

/* Appends an IDAT chunk's data to the stream. */
static bool
es_png_chunk_idat (EsPngChunks *c, uint32_t length, uint32_t *crc)
{
  if (length == 0)
    return true;
  if (c->idat_size + length > c->idat_max)
    return es_error_set (c->error, ES_ERROR_FORMAT, "IDAT: more compressed data than the image can need");
  if (c->stream != NULL)
    {
      c->idat_size += length;
      return es_png_chunk_data (c, NULL, true, length, crc);
    }
  if (c->idat_size + length > c->idat_capacity)
    {
      /* Grows with what was read, never to what a header claims; but at
       * once to the rest of a regular file (the data cannot outgrow it),
       * whose pages each doubling past glibc's mmap threshold would
       * otherwise clear and copy again (for a 120 MB IDAT stream, 240 MB
       * cleared and 120 MB copied). Where the file's size cannot be had,
       * the geometric size is tried. */
      size_t capacity = c->idat_capacity ? c->idat_capacity * 2 : 1u << 16;
      uint64_t left = c->idat_capacity ? 0 : es_reader_left_hint (c->reader);
      uint8_t *grown = NULL;

      while (capacity < c->idat_size + length)
        capacity *= 2;
      if (capacity > c->idat_max)
        capacity = (size_t) c->idat_max;
      if (left > capacity && left < c->idat_max && (grown = realloc (c->idat, (size_t) left)) != NULL)
        capacity = (size_t) left;
      else
        grown = realloc (c->idat, capacity);
      if (grown == NULL)
        return es_error_set (c->error, ES_ERROR_NO_MEMORY, "out of memory for %zu MiB of IDAT data", capacity >> 20);
      es_memory_prefer_huge_pages (grown + c->idat_size, capacity - c->idat_size);
      c->idat = grown;
      c->idat_capacity = capacity;
    }
  if (!es_png_chunk_data (c, c->idat + c->idat_size, false, length, crc))
    return false;
  c->idat_size += length;
  return true;
}

/* Reads the chunks after IHDR up to and including IEND, joining the first
 * run of IDAT chunks; what follows IEND is not read. */
static bool
es_png_read_chunks (EsPngChunks *c)
{
  bool seen_idat = false, idat_ended = false, seen_plte = false;

  for (;;)
    {
      uint8_t head[8];
      uint32_t length, crc;
      const char *type = (const char *) head + 4;

      if (es_reader_read (c->reader, head, 8) != 8)
        return es_png_truncated (c);
      length = be32 (head);
      if (length > 0x7fffffffu)
        return es_error_set (c->error, ES_ERROR_FORMAT, "%.4s: chunk length out of range", type);
      for (int i = 4; i < 8; i++)
        if (!((head[i] >= 'A' && head[i] <= 'Z') || (head[i] >= 'a' && head[i] <= 'z')))
          return es_error_set (c->error, ES_ERROR_FORMAT, "invalid chunk type");
      crc = chunk_crc32 (0, head + 4, 4);

      if (memcmp (type, "IDAT", 4) == 0 && !idat_ended)
        {
          if (!seen_idat && c->image != NULL)
            c->image->meta = c->meta;
          seen_idat = true;
          if (!es_png_chunk_idat (c, length, &crc))
            return false;
        }
      else
        {
          /* IDAT chunks after the first run add nothing (libpng ignores them too). */
          if (seen_idat)
            idat_ended = true;
          if (memcmp (type, "IHDR", 4) == 0)
            return es_error_set (c->error, ES_ERROR_FORMAT, "IHDR: out of place");
          if (memcmp (type, "PLTE", 4) == 0 && (seen_idat || seen_plte))
            return es_error_set (c->error, ES_ERROR_FORMAT, "PLTE: %s", seen_plte ? "duplicate" : "out of place");
          seen_plte |= memcmp (type, "PLTE", 4) == 0;
          if (!(type[0] & 0x20) && memcmp (type, "IDAT", 4) != 0 && memcmp (type, "PLTE", 4) != 0
              && memcmp (type, "IEND", 4) != 0)
            return es_error_set (c->error, ES_ERROR_FORMAT, "%.4s: unknown critical chunk", type);
          /* pHYs in metres calibrates the pixels (libpng's rules: before
           * IDAT, 9 bytes); other ancillary chunks are skipped, their CRC
           * checked. */
          if (memcmp (type, "pHYs", 4) == 0 && length == 9 && !seen_idat)
            {
              uint8_t phys[9];

              if (!es_png_chunk_data (c, phys, false, length, &crc))
                return false;
              if (phys[8] == 1)
                es_image_meta_set_pixels_per_metre (&c->meta, be32 (phys), be32 (phys + 4));
            }
          else if (!es_png_chunk_data (c, NULL, false, length, &crc))
            return false;
        }
      if (!es_png_chunk_crc (c, type, crc))
        return false;
      if (memcmp (type, "IEND", 4) == 0)
        return seen_idat || es_error_set (c->error, ES_ERROR_FORMAT, "missing IDAT");
    }
}

/* ---- the two ways to inflate ---- */

/* What both ways share: the header's fields, and the image once allocated. */
typedef struct {
  uint32_t width, height;
  int depth, channels;
  size_t bpp, row_bytes;
  uint64_t raw_size; /* the filtered rows: height × (row_bytes + 1) */
  EsImage out;
} Layout;

/* Inflated as read (zlib), unfiltered a row at a time as rows complete. */
struct Streamed {
  z_stream z;
  bool z_ready;
  Layout *layout;
  const EsRowWatch *watch;
  uint8_t *rows; /* filtered rows as inflated: whole ones, then part of the next */
  size_t capacity, filled;
  uint8_t *prev;       /* the last unfiltered row (zeros before the first) */
  uint64_t inflated;   /* bytes of filtered rows so far */
  uint64_t extra;      /* bytes inflated past the image */
  uint32_t done, told; /* rows unfiltered; rows the watch has heard of */
  bool ended;          /* zlib reached the stream's end (its Adler-32 checked) */
  bool bad_data;       /* zlib refused the stream */
  bool bad_filter;     /* a row's filter type is not 0..4 */
};

/* Unfilters the whole rows in s->rows into the image, then keeps the
 * partial row at the front. */
static void
streamed_take_rows (Streamed *s)
{
  Layout *l = s->layout;
  size_t step = l->row_bytes + 1;
  size_t complete = s->filled / step;

  for (size_t k = 0; k < complete; k++, s->done++)
    {
      uint8_t *row = s->rows + k * step;
      const uint8_t *prev = k == 0 ? s->prev : row - step + 1;

      if (s->bad_filter)
        continue;
      if (row[0] > 4)
        {
          s->bad_filter = true;
          continue;
        }
      es_png_unfilter_row (row + 1, prev, l->row_bytes, l->bpp, row[0]);
      es_png_convert_row (row + 1, (int) l->width, l->channels, l->depth == 16, es_image_row (&l->out, (int) s->done));
    }
  if (complete == 0)
    return;
  memcpy (s->prev, s->rows + (complete - 1) * step + 1, l->row_bytes);
  s->filled -= complete * step;
  memmove (s->rows, s->rows + complete * step, s->filled);
  /* Told every 32 rows or so: a wake-up costs more than a row. */
  if (s->watch != NULL && !s->bad_filter && (s->done - s->told >= 32 || s->done == l->height))
    {
      s->watch->rows_decoded ((EsRowWatch *) s->watch, &l->out, (int) s->done);
      s->told = s->done;
    }
}

/* Inflates the next piece of the IDAT stream. As with libdeflate's
 * output room, up to ES_PNG_INFLATE_SLACK bytes past the image are
 * inflated (and checked); beyond them the rest is ignored. */
static bool
streamed_feed (Streamed *s, const uint8_t *bytes, size_t n, EsError *error)
{
  Layout *l = s->layout;

  if (s->ended || s->bad_data || s->extra > ES_PNG_INFLATE_SLACK)
    return true;
  s->z.next_in = (uint8_t *) bytes;
  s->z.avail_in = (uInt) n;
  for (;;)
    {
      bool image_done = s->inflated == l->raw_size;
      uint64_t room = image_done ? ES_PNG_INFLATE_SLACK + 1 - s->extra : l->raw_size - s->inflated;
      size_t space = image_done ? s->capacity : s->capacity - s->filled;
      uInt before;
      int status;

      if (room < space)
        space = (size_t) room;
      s->z.next_out = image_done ? s->rows : s->rows + s->filled;
      s->z.avail_out = before = (uInt) space;
      status = inflate (&s->z, Z_NO_FLUSH);
      if (image_done)
        s->extra += before - s->z.avail_out;
      else
        {
          s->inflated += before - s->z.avail_out;
          s->filled += before - s->z.avail_out;
          streamed_take_rows (s);
        }
      if (status == Z_STREAM_END)
        s->ended = true;
      else if (status == Z_DATA_ERROR || status == Z_NEED_DICT)
        s->bad_data = true;
      else if (status == Z_MEM_ERROR)
        return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory inflating IDAT");
      /* Output may be pending inside zlib while the output room was full. */
      if (s->ended || s->bad_data || s->extra > ES_PNG_INFLATE_SLACK || status == Z_BUF_ERROR
          || (s->z.avail_in == 0 && s->z.avail_out > 0))
        return true;
    }
}

static bool
decode_streamed (EsPngChunks *chunks, Layout *l, const EsRowWatch *watch, EsError *error)
{
  Streamed s = { .layout = l, .watch = watch };
  size_t step = l->row_bytes + 1;
  bool ok = false;

  /* About 256 KiB of filtered rows at a time, at least two. */
  s.capacity = step * ((256u << 10) / step > 2 ? (256u << 10) / step : 2);
  s.rows = malloc (s.capacity);
  s.prev = calloc (1, l->row_bytes);
  if (s.rows == NULL || s.prev == NULL || inflateInit (&s.z) != Z_OK)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory for the PNG decoder");
      goto done;
    }
  s.z_ready = true;
  /* As with libpng, the image is allocated from the header; its pages
   * are touched only as rows are decoded. */
  if (!es_image_alloc (&l->out, (int) l->width, (int) l->height, l->depth == 16 ? ES_FORMAT_U16 : ES_FORMAT_U8,
                       l->depth, error))
    goto done;
  chunks->stream = &s;
  chunks->image = &l->out;
  if (!es_png_read_chunks (chunks))
    goto done;
  /* The same verdicts, in the same order, as decode_whole's. */
  if ((uint64_t) chunks->idat_size * ES_PNG_MAX_RATIO + 1024 < l->raw_size)
    es_error_set (error, ES_ERROR_FORMAT, "IDAT: not enough image data");
  else if (s.bad_data || (!s.ended && s.extra <= ES_PNG_INFLATE_SLACK))
    es_error_set (error, ES_ERROR_FORMAT, "IDAT: invalid compressed data");
  else if (s.done < l->height)
    es_error_set (error, ES_ERROR_FORMAT, "IDAT: not enough image data");
  else if (s.bad_filter)
    es_error_set (error, ES_ERROR_FORMAT, "bad adaptive filter value");
  else
    ok = true;

done:
  /* The caller's chunks must not keep the address of this frame's state. */
  chunks->stream = NULL;
  chunks->image = NULL;
  if (s.z_ready)
    inflateEnd (&s.z);
  free (s.rows);
  free (s.prev);
  return ok;
}

#ifdef ES_HAVE_LIBDEFLATE
/* The whole IDAT stream joined, inflated at once (on several threads, or
 * by libdeflate at about twice zlib's speed), then unfiltered on every
 * core, telling the watch of rows as they are done: holds the stream and
 * the filtered rows besides the image, allocated only once the stream is
 * in hand. */
static bool
decode_whole (EsPngChunks *chunks, Layout *l, EsRowWatch *watch, EsError *error)
{
  struct libdeflate_decompressor *inflater = NULL;
  uint8_t *raw = NULL, *zeros = NULL;
  size_t used_in, used_out;
  enum libdeflate_result result;
  EsInflateSplit split = { 0 };
  bool ok = false;

  if (!es_png_read_chunks (chunks))
    goto done;
  /* Only now, with the data in hand, the image and its filtered rows: a
   * stream that cannot hold them is refused first. */
  if ((uint64_t) chunks->idat_size * ES_PNG_MAX_RATIO + 1024 < l->raw_size)
    {
      es_error_set (error, ES_ERROR_FORMAT, "IDAT: not enough image data");
      goto done;
    }
  if (!es_image_alloc (&l->out, (int) l->width, (int) l->height, l->depth == 16 ? ES_FORMAT_U16 : ES_FORMAT_U8,
                       l->depth, error))
    goto done;
  l->out.meta = chunks->meta;
  raw = malloc ((size_t) l->raw_size + ES_PNG_INFLATE_SLACK);
  es_memory_prefer_huge_pages (raw, (size_t) l->raw_size + ES_PNG_INFLATE_SLACK);
  zeros = calloc (1, l->row_bytes);
  inflater = libdeflate_alloc_decompressor ();
  if (raw == NULL || zeros == NULL || inflater == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory for %" PRIu64 " MiB of image data", l->raw_size >> 20);
      goto done;
    }
  /* On several threads where that pays; anything it cannot vouch for
   * (damage included) goes to libdeflate, which names the error. */
  if (es_inflate_parallel_pays (chunks->idat_size, &split)
      && es_inflate_parallel (chunks->idat, chunks->idat_size, raw, (size_t) l->raw_size + ES_PNG_INFLATE_SLACK,
                              &used_out, &split))
    result = LIBDEFLATE_SUCCESS;
  else
    result = libdeflate_zlib_decompress_ex (inflater, chunks->idat, chunks->idat_size, raw,
                                            (size_t) l->raw_size + ES_PNG_INFLATE_SLACK, &used_in, &used_out);
  /* More data than the image needs is ignored, as libpng does. */
  if (result == LIBDEFLATE_BAD_DATA)
    {
      es_error_set (error, ES_ERROR_FORMAT, "IDAT: invalid compressed data");
      goto done;
    }
  if ((result == LIBDEFLATE_SUCCESS || result == LIBDEFLATE_SHORT_OUTPUT) && used_out < l->raw_size)
    {
      es_error_set (error, ES_ERROR_FORMAT, "IDAT: not enough image data");
      goto done;
    }

  /* Every filter type checked first, so that the rows can then go on
   * several threads with nothing left to fail. */
  for (uint32_t y = 0; y < l->height; y++)
    if (raw[(size_t) y * (l->row_bytes + 1)] > 4)
      {
        es_error_set (error, ES_ERROR_FORMAT, "bad adaptive filter value");
        goto done;
      }
  {
    EsPngFiltered filtered = { .raw = raw,
                               .zeros = zeros,
                               .width = l->width,
                               .height = l->height,
                               .bpp = l->bpp,
                               .row_bytes = l->row_bytes,
                               .channels = l->channels,
                               .sixteen = l->depth == 16 };
    es_png_unfilter_image (&filtered, &l->out, watch);
  }
  ok = true;

done:
  libdeflate_free_decompressor (inflater);
  free (raw);
  free (zeros);
  return ok;
}
#endif

bool
es_png_inflate_decode (EsReader *reader, EsImage *image, EsRowWatch *watch, EsError *error)
{
  uint8_t ihdr[33];
  EsPngChunks chunks = { .reader = reader, .error = error };
  Layout l = { 0 };
  bool ok;

  /* es_png_inflate_takes checked the signature and the IHDR fields. */
  if (es_reader_read (reader, ihdr, 33) != 33)
    return es_png_truncated (&chunks);
  if (chunk_crc32 (0, ihdr + 12, 17) != be32 (ihdr + 29))
    return es_error_set (error, ES_ERROR_FORMAT, "IHDR: CRC error");
  l.width = be32 (ihdr + 16);
  l.height = be32 (ihdr + 20);
  l.depth = ihdr[24];
  l.channels = ihdr[25] == 0 ? 1 : ihdr[25] == 2 ? 3 : ihdr[25] == 4 ? 2 : 4;
  if (l.width == 0 || l.height == 0 || l.width > 0x7fffffffu || l.height > 0x7fffffffu)
    return es_error_set (error, ES_ERROR_FORMAT, "IHDR: invalid image size %" PRIu32 "×%" PRIu32, l.width, l.height);
  if (l.width > ES_MAX_SIDE || l.height > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_LIMIT, "image size %" PRIu32 "×%" PRIu32 " is over the limit", l.width,
                         l.height);
  if (!es_image_check_size ((int) l.width, (int) l.height, l.depth == 16 ? ES_FORMAT_U16 : ES_FORMAT_U8, error))
    return false;
  l.bpp = (size_t) l.channels * (size_t) l.depth / 8;
  l.row_bytes = (size_t) l.width * l.bpp;
  l.raw_size = (uint64_t) l.height * (l.row_bytes + 1);
  chunks.idat_max = l.raw_size + l.raw_size / 16000 * 5 + (1u << 20);

#ifdef ES_HAVE_LIBDEFLATE
  if (!es_load_png_rows_while_reading ())
    ok = decode_whole (&chunks, &l, watch, error);
  else
#endif
    ok = decode_streamed (&chunks, &l, watch, error);
  free (chunks.idat);
  if (ok)
    {
      *image = l.out;
      image->meta = chunks.meta;
    }
  else if (watch != NULL && l.out.pixels != NULL)
    watch->kept = l.out; /* its consumer may still be reading rows it was told of */
  else
    es_image_clear (&l.out);
  return ok;
}
