/* SPDX-License-Identifier: MIT */
/* PGM decoding (binary P5 and plain P2), samples kept as stored, streamed from a bounded reader. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "es-load-internal.h"

/* Where a problem is: P2 files are reported by line and column (their
 * users think in lines), binary P5 ones by byte offset from 0. */
typedef struct {
  uint64_t offset;
  uint64_t line;       /* from 1 */
  uint64_t line_start; /* offset of the line's first byte */
} EsPgmMark;

typedef struct {
  EsReader *in;
  bool plain; /* P2 */
  uint64_t line, line_start;
} EsPgmReader;

static EsPgmMark
es_pgm_here (const EsPgmReader *reader)
{
  return (EsPgmMark){ es_reader_offset (reader->in), reader->line, reader->line_start };
}

static inline int
es_pgm_peek (EsPgmReader *reader)
{
  return es_reader_peek (reader->in);
}

/* Consumes the byte that es_pgm_peek returned, counting lines. */
static inline void
es_pgm_advance (EsPgmReader *reader)
{
  if (es_reader_next (reader->in) == '\n')
    {
      reader->line++;
      reader->line_start = es_reader_offset (reader->in);
    }
}

/* Reports a problem that the bytes read show, at mark. */
static bool
es_pgm_fail (const EsPgmReader *reader, EsPgmMark mark, EsError *error, const char *what)
{
  char where[64];

  if (reader->plain)
    snprintf (where, sizeof where, "line %" PRIu64 ", column %" PRIu64, mark.line, mark.offset - mark.line_start + 1);
  else
    snprintf (where, sizeof where, "byte %" PRIu64, mark.offset);
  return es_error_set (error, ES_ERROR_FORMAT, "PGM: %s: %s", where, what);
}

/* Whether the input ended early because of a read error, the size limit or
 * an interruption; if so, sets error to say that. */
static bool
es_pgm_read_failed (const EsPgmReader *reader, EsError *error)
{
  EsError failed = { 0 };

  if (!es_reader_failed (reader->in, &failed))
    return false;
  es_error_set (error, failed.code, "PGM: %s", failed.message);
  return true;
}

/* Reports the end of the data at mark, unless the input ended early: then
 * the reason it did is the problem. */
static bool
es_pgm_fail_end (const EsPgmReader *reader, EsPgmMark mark, EsError *error, const char *what)
{
  if (es_pgm_read_failed (reader, error))
    return false;
  return es_pgm_fail (reader, mark, error, what);
}

static inline bool
es_pgm_is_space (int c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Skips a comment: "#" to the end of the line (not the line end itself). */
static void
es_pgm_skip_comment (EsPgmReader *reader)
{
  int c;

  while ((c = es_pgm_peek (reader)) >= 0 && c != '\n' && c != '\r')
    es_pgm_advance (reader);
}

/* Skips whitespace and comments. */
static void
es_pgm_skip_space (EsPgmReader *reader)
{
  int c;

  while ((c = es_pgm_peek (reader)) >= 0)
    {
      if (c == '#')
        es_pgm_skip_comment (reader);
      else if (es_pgm_is_space (c))
        es_pgm_advance (reader);
      else
        break;
    }
}

static inline bool
es_pgm_is_print (int c)
{
  return c >= 0x20 && c < 0x7f;
}

static inline bool
es_pgm_is_digit (int c)
{
  return (unsigned) (c - '0') < 10;
}

/* Reads an unsigned decimal number in min..max, which must be followed by
 * whitespace, a comment or the end of the data. */
static bool
es_pgm_read_number (EsPgmReader *reader, const char *what, uint32_t min, uint32_t max, uint32_t *value, EsError *error)
{
  EsPgmMark start;
  uint32_t v = 0;
  char message[128];
  int c;

  es_pgm_skip_space (reader);
  start = es_pgm_here (reader);
  c = es_pgm_peek (reader);
  if (c < 0)
    {
      snprintf (message, sizeof message, "file ends where the %s should be", what);
      return es_pgm_fail_end (reader, start, error, message);
    }
  if (c == '-')
    {
      snprintf (message, sizeof message, "the %s is negative", what);
      return es_pgm_fail (reader, start, error, message);
    }
  if (!es_pgm_is_digit (c))
    {
      snprintf (message, sizeof message, "expected the %s, found '%c'", what, es_pgm_is_print (c) ? c : '?');
      return es_pgm_fail (reader, start, error, message);
    }
  while ((c = es_pgm_peek (reader)) >= 0 && es_pgm_is_digit (c))
    {
      uint32_t digit = (uint32_t) (c - '0');

      if (v > (max - digit) / 10)
        {
          snprintf (message, sizeof message, "the %s is over %" PRIu32, what, max);
          return es_pgm_fail (reader, start, error, message);
        }
      v = v * 10 + digit;
      es_pgm_advance (reader);
    }
  /* A number cut short by a read error or the limit is not that number. */
  if (c < 0 && es_pgm_read_failed (reader, error))
    return false;
  if (c >= 0 && !es_pgm_is_space (c) && c != '#')
    {
      snprintf (message, sizeof message, "junk '%c' after the %s", es_pgm_is_print (c) ? c : '?', what);
      return es_pgm_fail (reader, es_pgm_here (reader), error, message);
    }
  if (v < min)
    {
      snprintf (message, sizeof message, "the %s is %" PRIu32 ", below %" PRIu32, what, v, min);
      return es_pgm_fail (reader, start, error, message);
    }
  *value = v;
  return true;
}

static inline void
es_pgm_store (EsImage *image, size_t index, uint32_t v)
{
  if (image->format == ES_FORMAT_U8)
    ((uint8_t *) image->pixels)[index] = (uint8_t) v;
  else
    ((uint16_t *) image->pixels)[index] = (uint16_t) v;
}

static bool
es_pgm_read_plain (EsPgmReader *reader, uint32_t maxval, EsImage *image, EsError *error)
{
  size_t n = (size_t) image->width * (size_t) image->height;
  char message[128];

  for (size_t i = 0; i < n; i++)
    {
      EsPgmMark start;
      uint32_t v;

      es_pgm_skip_space (reader);
      start = es_pgm_here (reader);
      if (es_pgm_peek (reader) < 0)
        {
          snprintf (message, sizeof message, "file ends after %zu of %zu samples", i, n);
          return es_pgm_fail_end (reader, start, error, message);
        }
      if (!es_pgm_read_number (reader, "sample", 0, 65535, &v, error))
        return false;
      if (v > maxval)
        {
          snprintf (message, sizeof message, "sample %" PRIu32 " is over maxval %" PRIu32, v, maxval);
          return es_pgm_fail (reader, start, error, message);
        }
      es_pgm_store (image, i, v);
    }
  /* Only whitespace and comments may follow, so P2 is read to its end (in
   * pieces, and never past the size limit). */
  es_pgm_skip_space (reader);
  if (es_pgm_peek (reader) >= 0)
    return es_pgm_fail (reader, es_pgm_here (reader), error, "junk after the last sample");
  return !es_pgm_read_failed (reader, error);
}

/* Raster bytes read and checked at a time: large enough that each read()
 * and each parallel pass costs little, small enough that a bad sample or a
 * cancellation stops a large file early. */
#define ES_PGM_CHUNK ((size_t) 64 << 20)

/* Turns `count` 16-bit big-endian samples, as the file holds them, into
 * the host's own in place, and returns the largest. */
static uint32_t
es_pgm_from_big_endian (uint8_t *bytes, size_t count)
{
  uint16_t *samples = (uint16_t *) bytes;
  uint32_t largest = 0;

#pragma omp parallel for simd schedule(static) reduction(max : largest) if (count > (1u << 20))
  for (size_t k = 0; k < count; k++)
    {
      const uint16_t v = (uint16_t) (bytes[2 * k] << 8 | bytes[2 * k + 1]);
      samples[k] = v;
      largest = v > largest ? v : largest;
    }
  return largest;
}

static uint32_t
es_pgm_largest8 (const uint8_t *samples, size_t count)
{
  uint32_t largest = 0;

#pragma omp parallel for simd schedule(static) reduction(max : largest) if (count > (1u << 20))
  for (size_t k = 0; k < count; k++)
    largest = samples[k] > largest ? samples[k] : largest;
  return largest;
}

/* The raster is read straight into the image's rows (which are packed:
 * sample i at index i), a chunk at a time, then checked against maxval and,
 * at 16 bits, put in the host's byte order, on every core. A sample over maxval is found
 * by a second, serial look only once a chunk's largest says there is
 * one. */
static bool
es_pgm_read_binary (EsPgmReader *reader, uint32_t maxval, EsImage *image, EsError *error)
{
  const size_t n = (size_t) image->width * (size_t) image->height;
  const size_t bytes_per_sample = maxval < 256 ? 1 : 2;
  /* Whole samples per chunk. */
  const size_t chunk = ES_PGM_CHUNK / bytes_per_sample;
  char message[160];

  for (size_t i = 0; i < n;)
    {
      /* n * 2 cannot overflow: es_image_alloc has bounded n. */
      const size_t want = (n - i < chunk ? n - i : chunk) * bytes_per_sample;
      uint8_t *dst = (uint8_t *) image->pixels + i * bytes_per_sample;
      EsPgmMark here = es_pgm_here (reader);
      const size_t got = es_reader_read (reader->in, dst, want);
      const size_t count = got / bytes_per_sample;
      const uint32_t largest = bytes_per_sample == 1 ? es_pgm_largest8 (dst, count)
                                                     : es_pgm_from_big_endian (dst, count);

      if (largest > maxval)
        for (size_t k = 0; k < count; k++)
          {
            const uint32_t v = bytes_per_sample == 1 ? dst[k] : ((const uint16_t *) dst)[k];
            if (v > maxval)
              {
                snprintf (message, sizeof message, "sample %" PRIu32 " is over maxval %" PRIu32, v, maxval);
                here.offset += k * bytes_per_sample;
                return es_pgm_fail (reader, here, error, message);
              }
          }
      if (got < want)
        {
          snprintf (message, sizeof message, "raster is truncated: %zu of %zu bytes present",
                    i * bytes_per_sample + got, n * bytes_per_sample);
          here.offset += got;
          return es_pgm_fail_end (reader, here, error, message);
        }
      i += count;
    }
  /* A P5 file may hold several images back to back; only the first is
   * read, and whatever follows it is neither read nor held. */
  return true;
}

bool
es_pgm_decode (const void *data, size_t size, EsImage *image, EsError *error)
{
  EsReader reader;

  es_reader_init_memory (&reader, data, size);
  return es_pgm_decode_reader (&reader, image, error);
}

bool
es_pgm_decode_reader (EsReader *in, EsImage *image, EsError *error)
{
  EsPgmReader reader = { .in = in, .line = 1 };
  EsImage out = { 0 };
  EsError local = { 0 };
  uint32_t width, height, maxval;
  int depth = 0, c0, c1, c;
  bool ok;

  c0 = es_reader_next (in);
  c1 = c0 == 'P' ? es_reader_next (in) : -1;
  if (c0 != 'P' || (c1 != '2' && c1 != '5'))
    {
      if (es_pgm_read_failed (&reader, error))
        return false;
      return es_error_set (error, ES_ERROR_FORMAT, "PGM: byte 0: not a PGM file (no P2 or P5 magic)");
    }
  reader.plain = c1 == '2';
  c = es_pgm_peek (&reader);
  if (c >= 0 && !es_pgm_is_space (c) && c != '#')
    return es_pgm_fail (&reader, es_pgm_here (&reader), error, "no whitespace after the magic number");

  if (!es_pgm_read_number (&reader, "width", 1, INT32_MAX, &width, error)
      || !es_pgm_read_number (&reader, "height", 1, INT32_MAX, &height, error)
      || !es_pgm_read_number (&reader, "maxval", 1, 65535, &maxval, error))
    return false;

  /* Exactly one whitespace byte separates maxval from a P5 raster, which may
   * start with a byte that looks like whitespace; a comment may come first. */
  if (es_pgm_peek (&reader) == '#')
    es_pgm_skip_comment (&reader);
  if (es_pgm_peek (&reader) < 0)
    return es_pgm_fail_end (&reader, es_pgm_here (&reader), error, "file ends after the header");
  es_pgm_advance (&reader);

  for (uint32_t m = maxval; m != 0; m >>= 1)
    depth++;
  if (!es_image_alloc (&out, (int) width, (int) height, maxval < 256 ? ES_FORMAT_U8 : ES_FORMAT_U16, depth, &local))
    return es_error_set (error, local.code, "PGM: %s", local.message);
  /* Full scale is maxval, which the 8-bit view maps to 255 (DESIGN.md §1). */
  out.maxval = maxval == (1u << depth) - 1 ? 0 : maxval;
  ok = reader.plain ? es_pgm_read_plain (&reader, maxval, &out, error)
                    : es_pgm_read_binary (&reader, maxval, &out, error);
  if (!ok)
    {
      es_image_clear (&out);
      return false;
    }
  *image = out;
  return true;
}
