/* SPDX-License-Identifier: MIT */
/* The fast PNG path for the common layouts (8/16-bit gray, gray+alpha, RGB, RGBA, not interlaced):
 * our own unfiltering after either libdeflate inflating the whole IDAT stream at once, or zlib
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

#include "es-load-internal.h"
#include "es-png-inflate.h"

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
  return force_streamed || getenv ("ES_TEST_PNG_ZLIB") != NULL;
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
  Streamed *stream;    /* NULL: the IDAT stream is joined in idat */
  uint8_t *idat;
  size_t idat_size, idat_capacity;
  uint64_t idat_max;   /* more cannot be image data (deflate's worst case) */
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
      /* Grows with what was read, never to what a header claims. */
      size_t capacity = c->idat_capacity ? c->idat_capacity * 2 : 1u << 16;
      uint8_t *grown;

      while (capacity < c->idat_size + length)
        capacity *= 2;
      if (capacity > c->idat_max)
        capacity = (size_t) c->idat_max;
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
          /* Ancillary chunks are skipped, their CRC checked. */
          if (!es_png_chunk_data (c, NULL, false, length, &crc))
            return false;
        }
      if (!es_png_chunk_crc (c, type, crc))
        return false;
      if (memcmp (type, "IEND", 4) == 0)
        return seen_idat || es_error_set (c->error, ES_ERROR_FORMAT, "missing IDAT");
    }
}

/* ---- rows ---- */

/* The Paeth predictor; pa = |p − a| = |b − c|, and so on. */
static inline uint8_t
paeth (uint8_t a, uint8_t b, uint8_t c)
{
  int pa = abs (b - c), pb = abs (a - c), pc = abs (a + b - 2 * c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

#ifdef __SSE2__
#include <emmintrin.h>

/* Sub, Average and Paeth depend on the pixel to the left, so they go pixel
 * by pixel, with the pixel's bpp bytes (2 to 8) side by side in 16-bit
 * lanes. */
/* Inlined into each caller, where bpp is a constant. */
#define ES_INLINE static inline __attribute__ ((always_inline))

/* Loads 4 or 8 bytes, whole moves: up to 5 bytes past the pixel are read,
 * which every row here has (the next row's filter byte and the slack after
 * the last one; the zero row is padded). Lanes past bpp are ignored. */
ES_INLINE __m128i
load_pixel (const uint8_t *p, size_t bpp)
{
  uint64_t v = 0;
  memcpy (&v, p, bpp <= 4 ? 4 : 8);
  return _mm_unpacklo_epi8 (_mm_cvtsi64_si128 ((long long) v), _mm_setzero_si128 ());
}

ES_INLINE void
store_pixel (uint8_t *p, __m128i v, size_t bpp)
{
  uint64_t out = (uint64_t) _mm_cvtsi128_si64 (_mm_packus_epi16 (_mm_and_si128 (v, _mm_set1_epi16 (0xff)),
                                                                 _mm_setzero_si128 ()));
  memcpy (p, &out, bpp);
}

static inline __m128i
abs16 (__m128i x)
{
  return _mm_max_epi16 (x, _mm_sub_epi16 (_mm_setzero_si128 (), x));
}

ES_INLINE void
unfilter_pixels (uint8_t *row, const uint8_t *prev, size_t n, size_t bpp, uint8_t type)
{
  __m128i a = _mm_setzero_si128 (), c = _mm_setzero_si128 ();

  for (size_t i = 0; i < n; i += bpp)
    {
      __m128i x = load_pixel (row + i, bpp), b, predicted;

      switch (type)
        {
        case 1:
          predicted = a;
          break;
        case 3:
          predicted = _mm_srli_epi16 (_mm_add_epi16 (a, load_pixel (prev + i, bpp)), 1);
          break;
        default:
          {
            __m128i pa, pb, pc, smallest, pick_a, pick_b;
            b = load_pixel (prev + i, bpp);
            pa = _mm_sub_epi16 (b, c);
            pb = _mm_sub_epi16 (a, c);
            pc = abs16 (_mm_add_epi16 (pa, pb));
            pa = abs16 (pa);
            pb = abs16 (pb);
            smallest = _mm_min_epi16 (pc, _mm_min_epi16 (pa, pb));
            pick_a = _mm_cmpeq_epi16 (pa, smallest);
            pick_b = _mm_andnot_si128 (pick_a, _mm_cmpeq_epi16 (pb, smallest));
            predicted = _mm_or_si128 (_mm_and_si128 (pick_a, a),
                                      _mm_or_si128 (_mm_and_si128 (pick_b, b),
                                                    _mm_andnot_si128 (_mm_or_si128 (pick_a, pick_b), c)));
            c = b;
            break;
          }
        }
      a = _mm_and_si128 (_mm_add_epi16 (x, predicted), _mm_set1_epi16 (0xff));
      store_pixel (row + i, a, bpp);
    }
}
#endif

/* One-byte pixels (8-bit gray): each byte depends on the one before, so
 * the left neighbour stays in a register rather than being reloaded from
 * the byte just stored (a store-to-load round trip a byte, 5× slower); Sub,
 * a running sum, goes 16 bytes at a time as a prefix sum. */
static void
unfilter_bytes (uint8_t *row, const uint8_t *prev, size_t n, uint8_t type)
{
  size_t i = 0;
  uint8_t a = 0, c = 0;

  switch (type)
    {
    case 1:
#ifdef __SSE2__
      {
        __m128i carry = _mm_setzero_si128 ();
        for (; i + 16 <= n; i += 16)
          {
            __m128i x = _mm_loadu_si128 ((const __m128i *) (row + i));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 1));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 2));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 4));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 8));
            x = _mm_add_epi8 (x, carry);
            _mm_storeu_si128 ((__m128i *) (row + i), x);
            /* The last byte, in every lane, for the next 16. */
            carry = _mm_shuffle_epi32 (_mm_shufflehi_epi16 (_mm_srli_epi16 (_mm_unpackhi_epi8 (x, x), 8), 0xff),
                                       0xff);
            carry = _mm_packus_epi16 (carry, carry);
          }
        a = i > 0 ? row[i - 1] : 0;
      }
#endif
      for (; i < n; i++)
        row[i] = a = (uint8_t) (row[i] + a);
      return;
    case 3:
      for (; i < n; i++)
        row[i] = a = (uint8_t) (row[i] + ((a + prev[i]) >> 1));
      return;
    default:
      for (; i < n; i++)
        {
          uint8_t b = prev[i];
          row[i] = a = (uint8_t) (row[i] + paeth (a, b, c));
          c = b;
        }
      return;
    }
}

/* Undoes the row's filter in place; prev is the previous unfiltered row
 * (zeros for the first). */
static bool
unfilter (uint8_t *row, const uint8_t *prev, size_t n, size_t bpp, uint8_t type)
{
  if (type > 4)
    return false;
  if (type == 0)
    return true;
  if (type == 2)
    {
      for (size_t i = 0; i < n; i++)
        row[i] = (uint8_t) (row[i] + prev[i]);
      return true;
    }
  if (bpp == 1)
    {
      unfilter_bytes (row, prev, n, type);
      return true;
    }
#ifdef __SSE2__
  switch (bpp)
    {
    case 2: unfilter_pixels (row, prev, n, 2, type); return true;
    case 3: unfilter_pixels (row, prev, n, 3, type); return true;
    case 4: unfilter_pixels (row, prev, n, 4, type); return true;
    case 6: unfilter_pixels (row, prev, n, 6, type); return true;
    case 8: unfilter_pixels (row, prev, n, 8, type); return true;
    default: break;
    }
#endif
  switch (type)
    {
    case 1:
      for (size_t i = bpp; i < n; i++)
        row[i] = (uint8_t) (row[i] + row[i - bpp]);
      return true;
    case 3:
      for (size_t i = 0; i < bpp; i++)
        row[i] = (uint8_t) (row[i] + (prev[i] >> 1));
      for (size_t i = bpp; i < n; i++)
        row[i] = (uint8_t) (row[i] + ((row[i - bpp] + prev[i]) >> 1));
      return true;
    default:
      for (size_t i = 0; i < bpp; i++)
        row[i] = (uint8_t) (row[i] + prev[i]);
      for (size_t i = bpp; i < n; i++)
        row[i] = (uint8_t) (row[i] + paeth (row[i - bpp], prev[i], prev[i - bpp]));
      return true;
    }
}

/* One unfiltered row to gray: the first sample (gray, gray+alpha) or the
 * luma of the first three (RGB, RGBA), as es-png-read.c converts them. */
static void
convert_row (const uint8_t *src, int width, int channels, bool sixteen, void *out)
{
  if (!sixteen)
    {
      uint8_t *dst = out;
      if (channels == 1)
        memcpy (dst, src, (size_t) width);
      else if (channels == 2)
        for (int x = 0; x < width; x++)
          dst[x] = src[2 * x];
      else
        for (int x = 0; x < width; x++, src += channels)
          dst[x] = (uint8_t) es_luma_int (src[0], src[1], src[2]);
    }
  else
    {
      uint16_t *dst = out;
      size_t step = (size_t) channels * 2;
      if (channels <= 2)
        for (int x = 0; x < width; x++, src += step)
          dst[x] = (uint16_t) (src[0] << 8 | src[1]);
      else
        for (int x = 0; x < width; x++, src += step)
          dst[x] = (uint16_t) es_luma_int ((uint32_t) (src[0] << 8 | src[1]), (uint32_t) (src[2] << 8 | src[3]),
                                        (uint32_t) (src[4] << 8 | src[5]));
    }
}

/* ---- the two ways to inflate ---- */

/* What both ways share: the header's fields, and the image once allocated. */
typedef struct {
  uint32_t width, height;
  int depth, channels;
  size_t bpp, row_bytes;
  uint64_t raw_size;    /* the filtered rows: height × (row_bytes + 1) */
  EsImage out;
} Layout;

/* Inflated as read (zlib), unfiltered a row at a time as rows complete. */
struct Streamed {
  z_stream z;
  bool z_ready;
  Layout *layout;
  const EsRowWatch *watch;
  uint8_t *rows;        /* filtered rows as inflated: whole ones, then part of the next */
  size_t capacity, filled;
  uint8_t *prev;        /* the last unfiltered row (zeros before the first), padded */
  uint64_t inflated;    /* bytes of filtered rows so far */
  uint64_t extra;       /* bytes inflated past the image */
  uint32_t done, told;  /* rows unfiltered; rows the watch has heard of */
  bool ended;           /* zlib reached the stream's end (its Adler-32 checked) */
  bool bad_data;        /* zlib refused the stream */
  bool bad_filter;      /* a row's filter type is not 0..4 */
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
      if (!unfilter (row + 1, prev, l->row_bytes, l->bpp, row[0]))
        {
          s->bad_filter = true;
          continue;
        }
      convert_row (row + 1, (int) l->width, l->channels, l->depth == 16, es_image_row (&l->out, (int) s->done));
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

  /* About 256 KiB of filtered rows at a time, at least two, padded for the
   * whole-pixel loads of unfilter (as the joined rows of decode_whole are). */
  s.capacity = step * ((256u << 10) / step > 2 ? (256u << 10) / step : 2);
  s.rows = malloc (s.capacity + 8);
  s.prev = calloc (1, l->row_bytes + 8);
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
  if (s.z_ready)
    inflateEnd (&s.z);
  free (s.rows);
  free (s.prev);
  return ok;
}

#ifdef ES_HAVE_LIBDEFLATE
/* The whole IDAT stream joined, inflated by libdeflate at once (about
 * twice zlib's speed), then unfiltered, telling the watch of rows as they
 * are done: holds the stream and the filtered rows besides the image,
 * allocated only once the stream is in hand. */
static bool
decode_whole (EsPngChunks *chunks, Layout *l, EsRowWatch *watch, EsError *error)
{
  struct libdeflate_decompressor *inflater = NULL;
  uint8_t *raw = NULL, *zeros = NULL;
  size_t used_in, used_out;
  enum libdeflate_result result;
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
  raw = malloc ((size_t) l->raw_size + ES_PNG_INFLATE_SLACK);
  es_memory_prefer_huge_pages (raw, (size_t) l->raw_size + ES_PNG_INFLATE_SLACK);
  zeros = calloc (1, l->row_bytes + 8);
  inflater = libdeflate_alloc_decompressor ();
  if (raw == NULL || zeros == NULL || inflater == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory for %" PRIu64 " MiB of image data", l->raw_size >> 20);
      goto done;
    }
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

  {
    const uint8_t *prev = zeros;

    for (uint32_t y = 0; y < l->height; y++)
      {
        uint8_t *row = raw + (size_t) y * (l->row_bytes + 1);
        if (!unfilter (row + 1, prev, l->row_bytes, l->bpp, row[0]))
          {
            es_error_set (error, ES_ERROR_FORMAT, "bad adaptive filter value");
            goto done;
          }
        convert_row (row + 1, (int) l->width, l->channels, l->depth == 16, es_image_row (&l->out, (int) y));
        prev = row + 1;
        if (watch != NULL && ((y + 1) % 32 == 0 || y + 1 == l->height))
          watch->rows_decoded (watch, &l->out, (int) y + 1);
      }
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
    *image = l.out;
  else if (watch != NULL && l.out.pixels != NULL)
    watch->kept = l.out;  /* its consumer may still be reading rows it was told of */
  else
    es_image_clear (&l.out);
  return ok;
}
