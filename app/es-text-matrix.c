/* Text matrix decoding: "H W", then H lines of W quantization levels each. */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "es-load.h"

/* Blanks within a line; '\r' counts so that CRLF files parse. */
static inline bool
es_text_is_blank (char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool
es_text_is_digit (char c)
{
  return (unsigned) (c - '0') < 10;
}

static bool
es_text_fail (EsError *error, long line, const char *line_start, const char *p, const char *format, ...)
  __attribute__ ((format (printf, 5, 6)));

static bool
es_text_fail (EsError *error, long line, const char *line_start, const char *p, const char *format, ...)
{
  char what[256];
  va_list args;

  va_start (args, format);
  vsnprintf (what, sizeof what, format, args);
  va_end (args);
  return es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld, column %ld: %s",
                       line, (long) (p - line_start + 1), what);
}

/* Parses the non-negative integer at *p, which must end at a blank, a
 * newline or the end of the data, and advances *p past it. */
static bool
es_text_parse_number (const char **p, const char *end, long line, const char *line_start,
                      const char *what, int *value, EsError *error)
{
  const char *start = *p, *q = *p;
  int v = 0;

  if (*q == '-')
    return es_text_fail (error, line, line_start, start, "%s is negative", what);
  if (!es_text_is_digit (*q))
    return es_text_fail (error, line, line_start, start, "expected %s, found '%c'", what,
                         *q >= 0x20 && *q < 0x7f ? *q : '?');
  for (; q < end && es_text_is_digit (*q); q++)
    {
      int digit = *q - '0';

      if (v > (INT_MAX - digit) / 10)
        return es_text_fail (error, line, line_start, start, "%s overflows", what);
      v = v * 10 + digit;
    }
  if (q < end && *q != '\n' && !es_text_is_blank (*q))
    return es_text_fail (error, line, line_start, q, "junk '%c' after %s",
                         *q >= 0x20 && *q < 0x7f ? *q : '?', what);
  *p = q;
  *value = v;
  return true;
}

/* Parses one image row: the line at p (up to '\n' or end) must hold exactly
 * width values below levels. Rows depend on nothing but their own line, so
 * that a caller that has found the line starts can parse them in parallel.
 * Returns the end of the line (the '\n' or end), or NULL on error. */
static const char *
es_text_parse_row (const char *p, const char *end, long line, int width, int levels,
                   EsImage *image, int y, EsError *error)
{
  const char *line_start = p;
  uint8_t *row8 = es_image_row (image, y);
  uint16_t *row16 = es_image_row (image, y);
  int x = 0;

  for (;;)
    {
      const char *start;
      int v;

      while (p < end && es_text_is_blank (*p))
        p++;
      if (p == end || *p == '\n')
        break;
      if (x == width)
        {
          es_text_fail (error, line, line_start, p, "more than %d values in the row", width);
          return NULL;
        }
      /* The fast path takes up to 9 digits followed by a separator; anything
       * else (junk, a sign, a longer number) is parsed again by the careful
       * parser, which accepts it or says what is wrong and where. */
      start = p;
      v = 0;
      while (p < end && es_text_is_digit (*p) && p - start < 9)
        v = v * 10 + (*p++ - '0');
      if (p == start || (p < end && *p != '\n' && !es_text_is_blank (*p)))
        {
          p = start;
          if (!es_text_parse_number (&p, end, line, line_start, "a value", &v, error))
            return NULL;
        }
      if (v >= levels)
        {
          es_text_fail (error, line, line_start, start, "value %d is not below %d levels", v, levels);
          return NULL;
        }
      if (image->format == ES_FORMAT_U8)
        row8[x++] = (uint8_t) v;
      else
        row16[x++] = (uint16_t) v;
    }
  if (x < width)
    {
      es_text_fail (error, line, line_start, p, "row has %d values, expected %d", x, width);
      return NULL;
    }
  return p;
}

/* Returns whether the line at p holds nothing but blanks. */
static bool
es_text_line_is_blank (const char *p, const char *end)
{
  while (p < end && es_text_is_blank (*p))
    p++;
  return p == end || *p == '\n';
}

static const char *
es_text_next_line (const char *p, const char *end)
{
  while (p < end && *p != '\n')
    p++;
  return p < end ? p + 1 : end;
}

bool
es_text_matrix_decode (const void *data, size_t size, int levels, EsImage *image, EsError *error)
{
  const char *p = data, *end = p + size, *line_start;
  EsImage out = { 0 };
  EsError local = { 0 };
  long line = 1;
  int height, width;

  if (levels < 1 || levels > 65536)
    return es_error_set (error, ES_ERROR_INVALID, "text matrix: %d levels is not in 1..65536", levels);

  /* Blank lines are skipped anywhere: they hold no values. */
  while (p < end && es_text_line_is_blank (p, end))
    {
      p = es_text_next_line (p, end);
      line++;
    }
  if (p == end)
    return es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld: no \"height width\" line", line);
  line_start = p;
  while (es_text_is_blank (*p))
    p++;
  if (!es_text_parse_number (&p, end, line, line_start, "the height", &height, error))
    return false;
  while (p < end && es_text_is_blank (*p))
    p++;
  if (p == end || *p == '\n')
    return es_text_fail (error, line, line_start, p, "the width is missing after the height");
  if (!es_text_parse_number (&p, end, line, line_start, "the width", &width, error))
    return false;
  while (p < end && es_text_is_blank (*p))
    p++;
  if (p < end && *p != '\n')
    return es_text_fail (error, line, line_start, p, "junk after \"height width\"");
  if (height == 0 || width == 0)
    return es_text_fail (error, line, line_start, line_start, "a %d × %d matrix is empty", height, width);
  if (!es_image_alloc (&out, width, height, levels <= 256 ? ES_FORMAT_U8 : ES_FORMAT_U16,
                       levels <= 256 ? 8 : 16, &local))
    return es_error_set (error, local.code, "text matrix: line %ld: %s", line, local.message);
  out.levels = levels;

  for (int y = 0; y < height; y++)
    {
      do
        {
          p = es_text_next_line (p, end);
          line++;
        }
      while (p < end && es_text_line_is_blank (p, end));
      if (p == end)
        {
          es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld, column 1: file ends after %d of %d rows",
                        line, y, height);
          goto fail;
        }
      p = es_text_parse_row (p, end, line, width, levels, &out, y, error);
      if (p == NULL)
        goto fail;
    }
  do
    {
      p = es_text_next_line (p, end);
      line++;
    }
  while (p < end && es_text_line_is_blank (p, end));
  if (p < end)
    {
      es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld, column 1: more than %d rows", line, height);
      goto fail;
    }
  *image = out;
  return true;

fail:
  es_image_clear (&out);
  return false;
}
