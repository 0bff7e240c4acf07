/* SPDX-License-Identifier: MIT */
/* Text matrix decoding ("H W", then H lines of W levels each), in parallel for large inputs. */
#include <limits.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-text-matrix-internal.h"

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

static bool es_text_fail (EsError *error, long line, const char *line_start, const char *p, const char *format, ...)
  __attribute__ ((format (printf, 5, 6)));

static bool
es_text_fail (EsError *error, long line, const char *line_start, const char *p, const char *format, ...)
{
  char what[256];
  va_list args;

  va_start (args, format);
  vsnprintf (what, sizeof what, format, args);
  va_end (args);
  return es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld, column %ld: %s", line,
                       (long) (p - line_start + 1), what);
}

/* Parses the non-negative integer at *p, which must end at a blank, a
 * newline or the end of the data, and advances *p past it. */
static bool
es_text_parse_number (const char **p, const char *end, long line, const char *line_start, const char *what, int *value,
                      EsError *error)
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
    return es_text_fail (error, line, line_start, q, "junk '%c' after %s", *q >= 0x20 && *q < 0x7f ? *q : '?', what);
  *p = q;
  *value = v;
  return true;
}

/* The careful parse of the value at start, for es_text_parse_row. Through
 * copies, so that the row loop's own position and value, whose addresses
 * are never taken, stay in registers. */
static bool
es_text_parse_value (const char **p, const char *start, const char *end, long line, const char *line_start, int *v,
                     EsError *error)
{
  const char *q = start;
  int value;

  if (!es_text_parse_number (&q, end, line, line_start, "a value", &value, error))
    return false;
  *p = q;
  *v = value;
  return true;
}

/* Parses one image row: the line at p (up to '\n' or end) must hold exactly
 * width values below levels. Rows depend on nothing but their own line, so
 * that a caller that has found the line starts can parse them in parallel.
 * Returns the end of the line (the '\n' or end), or NULL on error. */
static const char *
es_text_parse_row (const char *p, const char *end, long line, int width, int levels, EsImage *image, int y,
                   EsError *error)
{
  const char *line_start = p;
  const char *newline = memchr (p, '\n', (size_t) (end - p));
  const char *line_end = newline != NULL ? newline : end;
  uint8_t *row8 = es_image_row (image, y);
  uint16_t *row16 = es_image_row (image, y);
  int x = 0;

  for (;;)
    {
      const char *start;
      int v;

      while (p < line_end && es_text_is_blank (*p))
        p++;
      if (p == line_end)
        break;
      if (x == width)
        {
          es_text_fail (error, line, line_start, p, "more than %d values in the row", width);
          return NULL;
        }
      /* The fast paths take a number followed by a blank or the line's end;
       * anything else (junk, a sign, a longer number) is parsed again by the
       * careful parser, which accepts it or says what is wrong and where.
       * The first one reads one or two digits without a branch on their
       * count, which is random in a matrix of levels below 100. */
      start = p;
      if (line_end - p >= 3 && es_text_is_digit (p[0]))
        {
          int d0 = p[0] - '0', d1 = p[1] - '0';
          int two = es_text_is_digit (p[1]);

          /* d0 · 10 + d1 for two digits, else d0: masks, not a branch. */
          v = d0 + ((9 * d0 + d1) & -two);
          p += 1 + two;
          if (!es_text_is_blank (*p) && !es_text_parse_value (&p, start, end, line, line_start, &v, error))
            return NULL;
        }
      else
        {
          v = 0;
          while (p < line_end && es_text_is_digit (*p) && p - start < 9)
            v = v * 10 + (*p++ - '0');
          if ((p == start || (p < line_end && !es_text_is_blank (*p)))
              && !es_text_parse_value (&p, start, end, line, line_start, &v, error))
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

/* Parses the "height width" line after any blank lines. On success *p is at
 * the end of that line (its '\n' or the end) and *line is its number. */
static bool
es_text_parse_header (const char **p, const char *end, long *line, int *height, int *width, EsError *error)
{
  const char *q = *p, *line_start;

  /* Blank lines are skipped anywhere: they hold no values. */
  while (q < end && es_text_line_is_blank (q, end))
    {
      q = es_text_next_line (q, end);
      (*line)++;
    }
  if (q == end)
    return es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld: no \"height width\" line", *line);
  line_start = q;
  while (es_text_is_blank (*q))
    q++;
  if (!es_text_parse_number (&q, end, *line, line_start, "the height", height, error))
    return false;
  while (q < end && es_text_is_blank (*q))
    q++;
  if (q == end || *q == '\n')
    return es_text_fail (error, *line, line_start, q, "the width is missing after the height");
  if (!es_text_parse_number (&q, end, *line, line_start, "the width", width, error))
    return false;
  while (q < end && es_text_is_blank (*q))
    q++;
  if (q < end && *q != '\n')
    return es_text_fail (error, *line, line_start, q, "junk after \"height width\"");
  if (*height == 0 || *width == 0)
    return es_text_fail (error, *line, line_start, line_start, "a %d × %d matrix is empty", *height, *width);
  *p = q;
  return true;
}

static bool
es_text_fail_short (EsError *error, long line, int rows, int height)
{
  return es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld, column 1: file ends after %d of %d rows", line,
                       rows, height);
}

static bool
es_text_fail_long (EsError *error, long line, int height)
{
  return es_error_set (error, ES_ERROR_FORMAT, "text matrix: line %ld, column 1: more than %d rows", line, height);
}

/* The reference: rows one after the other from the end of the header line
 * (numbered `line`). The first problem in file order is the one reported. */
static bool
es_text_rows_serial (const char *p, const char *end, long line, EsImage *out, EsError *error)
{
  for (int y = 0; y < out->height; y++)
    {
      do
        {
          p = es_text_next_line (p, end);
          line++;
        }
      while (p < end && es_text_line_is_blank (p, end));
      if (p == end)
        return es_text_fail_short (error, line, y, out->height);
      p = es_text_parse_row (p, end, line, out->width, out->levels, out, y, error);
      if (p == NULL)
        return false;
    }
  do
    {
      p = es_text_next_line (p, end);
      line++;
    }
  while (p < end && es_text_line_is_blank (p, end));
  if (p < end)
    return es_text_fail_long (error, line, out->height);
  return true;
}

/* A non-blank line of the body and its number. */
typedef struct {
  const char *start;
  long line;
} EsTextRow;

/* One slice of the body: the lines that start in it. */
typedef struct {
  const char *from, *to;
  long newlines;    /* '\n' bytes in the slice */
  size_t rows;      /* non-blank lines that start in the slice */
  long first_line;  /* number of the line holding `from` */
  size_t first_row; /* index of the slice's first non-blank line in the body */
} EsTextSlice;

/* Walks the lines that start in the slice (a line starts at `body` or after
 * a '\n'). Counts them on the first pass (rows == NULL); on the second,
 * stores those of index below n_rows. */
static void
es_text_scan_slice (EsTextSlice *slice, const char *body, const char *end, EsTextRow *rows, size_t n_rows)
{
  const char *s = slice->from, *to = slice->to;
  long newlines = 0;
  size_t found = 0;

  if (s > body && s[-1] != '\n')
    {
      /* The slice starts inside a line that belongs to the slice before. */
      const char *n = memchr (s, '\n', (size_t) (to - s));
      s = n != NULL ? n + 1 : to;
      newlines = n != NULL;
    }
  while (s < to)
    {
      const char *n;

      if (!es_text_line_is_blank (s, end))
        {
          size_t index = slice->first_row + found++;
          if (rows != NULL && index < n_rows)
            rows[index] = (EsTextRow){ s, slice->first_line + newlines };
        }
      n = memchr (s, '\n', (size_t) (to - s));
      if (n == NULL)
        break;
      newlines++;
      s = n + 1;
    }
  slice->newlines = newlines;
  slice->rows = found;
}

/* The parallel body: the slices of the body are scanned in parallel for
 * their line starts, a prefix sum numbers the lines and rows, and the rows
 * are parsed concurrently, each by es_text_parse_row on its own line. The
 * errors are those of es_text_rows_serial: the first failing row wins (it
 * is parsed again to get its message), and only then do too few or too
 * many rows count. */
static bool
es_text_rows_parallel (const char *header_end, const char *end, long header_line, EsImage *out, EsError *error)
{
  const char *body = header_end < end ? header_end + 1 : end;
  size_t length = (size_t) (end - body);
  int threads = omp_get_max_threads ();
  size_t n_slices = (size_t) threads * 8;
  EsTextSlice *slices;
  EsTextRow *rows = NULL;
  size_t total_rows = 0, n_rows, n_parse;
  long newlines = 0;
  long first_bad;
  bool ok = false;

  n_slices = n_slices > length ? (length > 0 ? length : 1) : n_slices;
  slices = calloc (n_slices, sizeof *slices);
  if (slices == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "text matrix: cannot allocate the line index");
  for (size_t i = 0; i < n_slices; i++)
    {
      slices[i].from = body + length * i / n_slices;
      slices[i].to = body + length * (i + 1) / n_slices;
    }

#pragma omp parallel for schedule(dynamic, 1)
  for (size_t i = 0; i < n_slices; i++)
    es_text_scan_slice (&slices[i], body, end, NULL, 0);

  for (size_t i = 0; i < n_slices; i++)
    {
      slices[i].first_line = header_line + 1 + newlines;
      slices[i].first_row = total_rows;
      newlines += slices[i].newlines;
      total_rows += slices[i].rows;
    }

  /* One row past the height is enough to name the first extra row. */
  n_rows = total_rows < (size_t) out->height + 1 ? total_rows : (size_t) out->height + 1;
  n_parse = n_rows < (size_t) out->height ? n_rows : (size_t) out->height;
  rows = malloc ((n_rows > 0 ? n_rows : 1) * sizeof *rows);
  if (rows == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "text matrix: cannot allocate the index of %zu rows", n_rows);
      goto done;
    }

#pragma omp parallel for schedule(dynamic, 1)
  for (size_t i = 0; i < n_slices; i++)
    if (slices[i].first_row < n_rows)
      es_text_scan_slice (&slices[i], body, end, rows, n_rows);

  /* Rows after a known bad one need no parsing: only the first error counts. */
  first_bad = (long) n_parse;
#pragma omp parallel for schedule(dynamic, 16)
  for (long y = 0; y < (long) n_parse; y++)
    {
      long bad;
      EsError ignored = { 0 };

#pragma omp atomic read
      bad = first_bad;
      if (y > bad)
        continue;
      if (es_text_parse_row (rows[y].start, end, rows[y].line, out->width, out->levels, out, (int) y, &ignored) == NULL)
        {
#pragma omp critical(es_text_first_bad)
          if (y < first_bad)
            {
#pragma omp atomic write
              first_bad = y;
            }
        }
    }

  if (first_bad < (long) n_parse)
    es_text_parse_row (rows[first_bad].start, end, rows[first_bad].line, out->width, out->levels, out, (int) first_bad,
                       error);
  else if (total_rows < (size_t) out->height)
    /* The serial parser stops after the last line, numbered as if one more
     * line followed a last line without a '\n'. */
    es_text_fail_short (error, header_line + 1 + newlines + (body < end && end[-1] != '\n'), (int) total_rows,
                        out->height);
  else if (total_rows > (size_t) out->height)
    es_text_fail_long (error, rows[out->height].line, out->height);
  else
    ok = true;

done:
  free (rows);
  free (slices);
  return ok;
}

/* Below this size the serial parser is done before threads would start. */
#define ES_TEXT_PARALLEL_MIN_SIZE (1u << 20)

bool
es_text_matrix_decode_split (const void *data, size_t size, int levels, EsTextSplit split, EsImage *image,
                             EsError *error)
{
  const char *p = data, *end = p + size;
  EsImage out = { 0 };
  EsError local = { 0 };
  long line = 1;
  int height, width;
  bool ok;

  if (levels < 1 || levels > 65536)
    return es_error_set (error, ES_ERROR_INVALID, "text matrix: %d levels is not in 1..65536", levels);
  if (!es_text_parse_header (&p, end, &line, &height, &width, error))
    return false;
  if (!es_image_alloc (&out, width, height, levels <= 256 ? ES_FORMAT_U8 : ES_FORMAT_U16, levels <= 256 ? 8 : 16,
                       &local))
    return es_error_set (error, local.code, "text matrix: line %ld: %s", line, local.message);
  out.levels = levels;

  if (split == ES_TEXT_SPLIT_AUTO)
    split = size >= ES_TEXT_PARALLEL_MIN_SIZE && omp_get_max_threads () > 1 ? ES_TEXT_SPLIT_PARALLEL
                                                                            : ES_TEXT_SPLIT_SERIAL;
  if (split == ES_TEXT_SPLIT_PARALLEL)
    ok = es_text_rows_parallel (p, end, line, &out, error);
  else
    ok = es_text_rows_serial (p, end, line, &out, error);
  if (!ok)
    {
      es_image_clear (&out);
      return false;
    }
  *image = out;
  return true;
}

bool
es_text_matrix_decode (const void *data, size_t size, int levels, EsImage *image, EsError *error)
{
  return es_text_matrix_decode_split (data, size, levels, ES_TEXT_SPLIT_AUTO, image, error);
}

enum { ES_TEXT_SCAN_BEFORE, ES_TEXT_SCAN_HEADER, ES_TEXT_SCAN_ROWS };

/* The next digit of a header number, capped one past INT_MAX (an overflow,
 * which the decoder reports at that digit). Returns whether it overflows. */
static bool
es_text_scan_digit (uint64_t *number, char c)
{
  *number = *number * 10 + (uint64_t) (c - '0');
  if (*number > INT_MAX)
    *number = (uint64_t) INT_MAX + 1;
  return *number > INT_MAX;
}

size_t
es_text_matrix_scan (void *state, const uint8_t *bytes, size_t n, bool *done)
{
  EsTextScan *scan = state;

  *done = false;
  for (size_t i = 0; i < n; i++)
    {
      char c = (char) bytes[i];
      bool digit = es_text_is_digit (c);
      bool starts_number = digit && !scan->in_number;

      /* A byte that no text matrix holds: an error at or before it. */
      if (!digit && c != '\n' && !es_text_is_blank (c))
        {
          *done = true;
          return i + 1;
        }
      scan->in_number = digit;
      switch (scan->state)
        {
        case ES_TEXT_SCAN_BEFORE:
          /* Blank lines, then the header's first digit. */
          if (digit)
            {
              scan->state = ES_TEXT_SCAN_HEADER;
              scan->height = (uint64_t) (c - '0');
              scan->header_numbers = 1;
            }
          break;
        case ES_TEXT_SCAN_HEADER:
          if (starts_number && ++scan->header_numbers > 2)
            {
              /* "junk after height width" is at this digit. */
              *done = true;
              return i + 1;
            }
          if (digit && es_text_scan_digit (scan->header_numbers == 1 ? &scan->height : &scan->width, c))
            {
              *done = true;
              return i + 1;
            }
          if (c == '\n')
            {
              /* The header line decides alone whether it is an error: a
               * missing width, or an empty matrix. */
              if (scan->header_numbers < 2 || scan->height == 0 || scan->width == 0)
                {
                  *done = true;
                  return i + 1;
                }
              scan->state = ES_TEXT_SCAN_ROWS;
              scan->line_blank = true;
            }
          break;
        default:
          if (c == '\n')
            {
              scan->line_blank = true;
              scan->values = 0;
            }
          else if (starts_number)
            {
              /* The first digit of a row line: one past the height is
               * where "more than H rows" is reported; the first digit of
               * value W + 1, where "more than W values". */
              if (scan->line_blank)
                {
                  scan->line_blank = false;
                  if (++scan->rows > scan->height)
                    {
                      *done = true;
                      return i + 1;
                    }
                }
              if (++scan->values > scan->width)
                {
                  *done = true;
                  return i + 1;
                }
            }
          break;
        }
    }
  return n;
}
