/* PGM decoding (binary P5 and plain P2), samples kept as stored. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "es-load.h"

typedef struct {
  const uint8_t *data;
  size_t size;
  size_t pos;
  bool plain;  /* P2: positions are reported as line:column, else as byte offsets */
} EsPgmReader;

/* Formats where the reader is (or was) as "line L, column C" for P2, whose
 * users think in lines, and "byte N" (from 0) for binary P5. */
static void
es_pgm_position (const EsPgmReader *reader, size_t pos, char *out, size_t out_size)
{
  size_t line = 1, line_start = 0;

  if (!reader->plain)
    {
      snprintf (out, out_size, "byte %zu", pos);
      return;
    }
  /* Only runs on the error path, so a scan from the start is fine. */
  for (size_t i = 0; i < pos && i < reader->size; i++)
    if (reader->data[i] == '\n')
      {
        line++;
        line_start = i + 1;
      }
  snprintf (out, out_size, "line %zu, column %zu", line, pos - line_start + 1);
}

static bool
es_pgm_fail (const EsPgmReader *reader, size_t pos, EsError *error, const char *what)
{
  char where[64];

  es_pgm_position (reader, pos, where, sizeof where);
  return es_error_set (error, ES_ERROR_FORMAT, "PGM: %s: %s", where, what);
}

static inline bool
es_pgm_is_space (uint8_t c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Skips whitespace and comments ("#" to the end of the line). */
static void
es_pgm_skip_space (EsPgmReader *reader)
{
  while (reader->pos < reader->size)
    {
      uint8_t c = reader->data[reader->pos];

      if (c == '#')
        {
          while (reader->pos < reader->size && reader->data[reader->pos] != '\n'
                 && reader->data[reader->pos] != '\r')
            reader->pos++;
        }
      else if (es_pgm_is_space (c))
        reader->pos++;
      else
        break;
    }
}

static inline bool
es_pgm_is_print (uint8_t c)
{
  return c >= 0x20 && c < 0x7f;
}

static inline bool
es_pgm_is_digit (uint8_t c)
{
  return (unsigned) (c - '0') < 10;
}

/* Reads an unsigned decimal number in min..max, which must be followed by
 * whitespace, a comment or the end of the data. */
static bool
es_pgm_read_number (EsPgmReader *reader, const char *what, uint32_t min, uint32_t max,
                    uint32_t *value, EsError *error)
{
  size_t start;
  uint32_t v = 0;
  char message[128];

  es_pgm_skip_space (reader);
  start = reader->pos;
  if (reader->pos >= reader->size)
    {
      snprintf (message, sizeof message, "file ends where the %s should be", what);
      return es_pgm_fail (reader, reader->pos, error, message);
    }
  if (reader->data[reader->pos] == '-')
    {
      snprintf (message, sizeof message, "the %s is negative", what);
      return es_pgm_fail (reader, start, error, message);
    }
  if (!es_pgm_is_digit (reader->data[reader->pos]))
    {
      snprintf (message, sizeof message, "expected the %s, found '%c'", what,
                es_pgm_is_print (reader->data[reader->pos]) ? reader->data[reader->pos] : '?');
      return es_pgm_fail (reader, start, error, message);
    }
  while (reader->pos < reader->size && es_pgm_is_digit (reader->data[reader->pos]))
    {
      uint32_t digit = reader->data[reader->pos] - '0';

      if (v > (max - digit) / 10)
        {
          snprintf (message, sizeof message, "the %s is over %" PRIu32, what, max);
          return es_pgm_fail (reader, start, error, message);
        }
      v = v * 10 + digit;
      reader->pos++;
    }
  if (reader->pos < reader->size && !es_pgm_is_space (reader->data[reader->pos])
      && reader->data[reader->pos] != '#')
    {
      snprintf (message, sizeof message, "junk '%c' after the %s",
                es_pgm_is_print (reader->data[reader->pos]) ? reader->data[reader->pos] : '?', what);
      return es_pgm_fail (reader, reader->pos, error, message);
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
      uint32_t v;
      size_t start;

      es_pgm_skip_space (reader);
      start = reader->pos;
      if (reader->pos >= reader->size)
        {
          snprintf (message, sizeof message, "file ends after %zu of %zu samples", i, n);
          return es_pgm_fail (reader, reader->pos, error, message);
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
  es_pgm_skip_space (reader);
  if (reader->pos < reader->size)
    return es_pgm_fail (reader, reader->pos, error, "junk after the last sample");
  return true;
}

static bool
es_pgm_read_binary (EsPgmReader *reader, uint32_t maxval, EsImage *image, EsError *error)
{
  size_t n = (size_t) image->width * (size_t) image->height;
  size_t bytes_per_sample = maxval < 256 ? 1 : 2;
  const uint8_t *src = reader->data + reader->pos;
  char message[160];

  /* n * 2 cannot overflow: es_image_alloc has bounded n. */
  if (reader->size - reader->pos < n * bytes_per_sample)
    {
      snprintf (message, sizeof message, "raster is truncated: %zu of %zu bytes present",
                reader->size - reader->pos, n * bytes_per_sample);
      return es_pgm_fail (reader, reader->size, error, message);
    }
  for (size_t i = 0; i < n; i++)
    {
      uint32_t v = bytes_per_sample == 1 ? src[i] : (uint32_t) src[2 * i] << 8 | src[2 * i + 1];

      if (v > maxval)
        {
          snprintf (message, sizeof message, "sample %" PRIu32 " is over maxval %" PRIu32, v, maxval);
          return es_pgm_fail (reader, reader->pos + i * bytes_per_sample, error, message);
        }
      es_pgm_store (image, i, v);
    }
  /* A P5 file may hold several images back to back; only the first is
   * read, and whatever follows it is ignored. */
  return true;
}

bool
es_pgm_decode (const void *data, size_t size, EsImage *image, EsError *error)
{
  EsPgmReader reader = { .data = data, .size = size };
  EsImage out = { 0 };
  EsError local = { 0 };
  uint32_t width, height, maxval;
  int depth = 0;
  bool ok;

  if (size < 2 || reader.data[0] != 'P' || (reader.data[1] != '2' && reader.data[1] != '5'))
    return es_error_set (error, ES_ERROR_FORMAT, "PGM: byte 0: not a PGM file (no P2 or P5 magic)");
  reader.plain = reader.data[1] == '2';
  reader.pos = 2;
  if (reader.pos < size && !es_pgm_is_space (reader.data[reader.pos]) && reader.data[reader.pos] != '#')
    return es_pgm_fail (&reader, reader.pos, error, "no whitespace after the magic number");

  if (!es_pgm_read_number (&reader, "width", 1, INT32_MAX, &width, error)
      || !es_pgm_read_number (&reader, "height", 1, INT32_MAX, &height, error)
      || !es_pgm_read_number (&reader, "maxval", 1, 65535, &maxval, error))
    return false;

  /* Exactly one whitespace byte separates maxval from a P5 raster, which may
   * start with a byte that looks like whitespace; a comment may come first. */
  if (reader.pos < size && reader.data[reader.pos] == '#')
    while (reader.pos < size && reader.data[reader.pos] != '\n' && reader.data[reader.pos] != '\r')
      reader.pos++;
  if (reader.pos >= size)
    return es_pgm_fail (&reader, reader.pos, error, "file ends after the header");
  reader.pos++;

  for (uint32_t m = maxval; m != 0; m >>= 1)
    depth++;
  if (!es_image_alloc (&out, (int) width, (int) height, maxval < 256 ? ES_FORMAT_U8 : ES_FORMAT_U16,
                       depth, &local))
    return es_error_set (error, local.code, "PGM: %s", local.message);
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
