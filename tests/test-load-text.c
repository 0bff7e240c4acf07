/* SPDX-License-Identifier: MIT */
/* Tests of PGM and text-matrix decoding: round trips, malformed inputs, the parallel parser. */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "es-load.h"
#include "es-text-matrix-internal.h"
#include "tap.h"
#include "test-load-common.h"

/* Random whitespace and, where allowed, comments between header fields. */
static void
pgm_separator (Buffer *b, bool comments)
{
  static const char *blanks[] = { " ", "\n", "\t", "  ", "\r\n", " \n " };

  buffer_printf (b, "%s", blanks[random_below (6)]);
  if (comments && random_below (3) == 0)
    buffer_printf (b, "# a comment 123 -4\n");
}

static void
make_pgm (Buffer *b, bool plain, int width, int height, uint32_t maxval, const uint32_t *values)
{
  buffer_printf (b, "P%c", plain ? '2' : '5');
  pgm_separator (b, true);
  buffer_printf (b, "%d", width);
  pgm_separator (b, true);
  buffer_printf (b, "%d", height);
  pgm_separator (b, true);
  buffer_printf (b, "%" PRIu32, maxval);
  buffer_printf (b, "%s", random_below (2) ? "\n" : " ");
  for (size_t i = 0; i < (size_t) width * height; i++)
    {
      if (plain)
        {
          buffer_printf (b, "%" PRIu32, values[i]);
          pgm_separator (b, true);
        }
      else if (maxval < 256)
        buffer_append (b, &(uint8_t){ (uint8_t) values[i] }, 1);
      else
        buffer_append (b, (uint8_t[2]){ (uint8_t) (values[i] >> 8), (uint8_t) values[i] }, 2);
    }
}

static uint32_t
random_maxval (void)
{
  switch (random_below (6))
    {
    case 0: return 1;
    case 1: return 255;
    case 2: return 256;
    case 3: return 65535;
    case 4: return 1 + random_below (255);
    default: return 256 + random_below (65280);
    }
}

static void
test_pgm_round_trips (void)
{
  static const int sizes[][2] = { { 1, 1 }, { 1, 37 }, { 53, 1 }, { 13, 17 }, { 31, 7 }, { 2, 2 }, { 0, 0 } };

  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int plain = 0; plain < 2; plain++)
      {
        int width = sizes[s][0] ? sizes[s][0] : 1 + (int) random_below (300);
        int height = sizes[s][1] ? sizes[s][1] : 1 + (int) random_below (300);
        uint32_t maxval = random_maxval ();
        uint32_t *values = malloc (sizeof *values * width * height);
        int depth = 0;
        EsImage image = { 0 };
        EsError error = { 0 };
        Buffer b = { 0 };
        bool ok, same;

        for (uint32_t m = maxval; m; m >>= 1)
          depth++;
        for (size_t i = 0; i < (size_t) width * height; i++)
          values[i] = random_below (maxval + 1);
        make_pgm (&b, plain, width, height, maxval, values);
        /* A second image after a P5 raster is ignored. */
        if (!plain)
          buffer_printf (&b, "P5 1 1 255\nX");
        ok = es_load_memory (b.data, b.size, 16, &image, &error);
        if (!ok)
          tap_diag ("%s", error.message);
        same = ok && image.width == width && image.height == height && same_samples (&image, values);
        tap_ok (ok && same && image.width == width && image.height == height && image.depth == depth
                  && image.format == (maxval < 256 ? ES_FORMAT_U8 : ES_FORMAT_U16) && image.levels == 0,
                "P%c %d×%d maxval %" PRIu32 " round-trips (depth %d)", plain ? '2' : '5', width, height, maxval, depth);
        es_image_clear (&image);
        free (values);
        free (b.data);
      }
}

static void
test_pgm_malformed (void)
{
  static const struct {
    const char *what, *data;
    size_t size;
    const char *where;
    EsErrorCode code;
  } cases[] = {
    { "bad magic", "P7 2 2 255\n", 0, "byte 0", ES_ERROR_FORMAT },
    { "no space after the magic", "P52 2 255\n", 0, "byte 2", ES_ERROR_FORMAT },
    { "missing maxval (P5)", "P5 2 2\n", 0, "byte 7", ES_ERROR_FORMAT },
    { "missing maxval (P2)", "P2\n2 2\n", 0, "line 3, column 1", ES_ERROR_FORMAT },
    { "maxval 0", "P5 2 2 0\n", 0, "byte 7", ES_ERROR_FORMAT },
    { "maxval 70000", "P2\n# c\n2 2\n70000\n", 0, "line 4, column 1", ES_ERROR_FORMAT },
    { "width 0", "P5 0 2 255\n", 0, "byte 3", ES_ERROR_FORMAT },
    { "junk in the header", "P5 2x2 255\n", 0, "byte 4", ES_ERROR_FORMAT },
    { "negative width", "P2 -2 2 255\n", 0, "line 1, column 4", ES_ERROR_FORMAT },
    { "overflowing height", "P5 2 99999999999 255\n", 0, "byte 5", ES_ERROR_FORMAT },
    { "header without raster", "P5 2 2 255", 0, "byte 10", ES_ERROR_FORMAT },
    { "truncated P5", "P5 2 2 255\nabc", 0, "byte 14", ES_ERROR_FORMAT },
    { "truncated 16-bit P5", "P5 1 2 1000\n\x01\x02\x03", 0, "byte 15", ES_ERROR_FORMAT },
    { "P5 sample over maxval", "P5 2 1 100\n\x10\x65", 0, "byte 12", ES_ERROR_FORMAT },
    { "16-bit P5 sample over maxval", "P5 1 2 1000\n\x03\xe8\x03\xe9", 0, "byte 14", ES_ERROR_FORMAT },
    { "P2 sample over maxval", "P2\n2 2\n15\n1 2\n3 16\n", 0, "line 5, column 3", ES_ERROR_FORMAT },
    { "truncated P2", "P2\n2 2\n15\n1 2\n3\n", 0, "line 6, column 1", ES_ERROR_FORMAT },
    { "P2 trailing junk", "P2\n2 1\n15\n1 2\n x\n", 0, "line 5, column 2", ES_ERROR_FORMAT },
    { "P2 extra sample", "P2\n2 1\n15\n1 2 3\n", 0, "line 4, column 5", ES_ERROR_FORMAT },
    { "P2 negative sample", "P2\n2 1\n15\n1 -2\n", 0, "line 4, column 3", ES_ERROR_FORMAT },
    { "P2 overflowing sample", "P2 2 1 65535\n1 99999999999999999999\n", 0, "line 2, column 3", ES_ERROR_FORMAT },
    { "P2 junk in a sample", "P2 2 1 65535\n1 2a\n", 0, "line 2, column 4", ES_ERROR_FORMAT },
    { "too wide", "P5 2000000 1 255\n", 0, "PGM: ", ES_ERROR_LIMIT },
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      size_t size = cases[i].size ? cases[i].size : strlen (cases[i].data);
      bool ok = es_pgm_decode (cases[i].data, size, &image, &error);

      tap_ok (!ok && error.code == cases[i].code && strstr (error.message, cases[i].where) != NULL && one_line (&error)
                && image.pixels == NULL,
              "PGM %s is rejected at %s: %s", cases[i].what, cases[i].where, error.message);
    }
}

/* Text matrices --------------------------------------------------------- */

static void
test_text_round_trips (void)
{
  static const int sizes[][2] = { { 1, 1 }, { 1, 29 }, { 41, 1 }, { 11, 13 }, { 0, 0 }, { 0, 0 } };
  static const char *blanks[] = { " ", "  ", "\t", " \t " };

  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    {
      int height = sizes[s][0] ? sizes[s][0] : 1 + (int) random_below (200);
      int width = sizes[s][1] ? sizes[s][1] : 1 + (int) random_below (200);
      int levels = s == sizeof sizes / sizeof sizes[0] - 1 ? 1000 : 1 + (int) random_below (256);
      uint32_t *values = malloc (sizeof *values * width * height);
      bool crlf = random_below (2);
      EsImage image = { 0 };
      EsError error = { 0 };
      Buffer b = { 0 };
      bool ok, same;

      buffer_printf (&b, "%s%d %d%s", random_below (2) ? "\n" : "", height, width, crlf ? "\r\n" : "\n");
      for (int y = 0; y < height; y++)
        {
          buffer_printf (&b, "%s", random_below (4) ? "" : blanks[random_below (4)]);
          for (int x = 0; x < width; x++)
            {
              values[(size_t) y * width + x] = random_below ((uint32_t) levels);
              buffer_printf (&b, "%s%" PRIu32, x ? blanks[random_below (4)] : "", values[(size_t) y * width + x]);
            }
          buffer_printf (&b, "%s%s", random_below (4) ? "" : blanks[random_below (4)], crlf ? "\r\n" : "\n");
        }
      if (random_below (2))
        buffer_printf (&b, "\n  \n");
      ok = es_load_memory (b.data, b.size, levels, &image, &error);
      if (!ok)
        tap_diag ("%s", error.message);
      same = ok && image.width == width && image.height == height && same_samples (&image, values);
      tap_ok (ok && same && image.width == width && image.height == height && image.levels == levels
                && image.format == (levels <= 256 ? ES_FORMAT_U8 : ES_FORMAT_U16),
              "text matrix %d×%d with %d levels round-trips%s", height, width, levels, crlf ? " (CRLF)" : "");
      es_image_clear (&image);
      free (values);
      free (b.data);
    }
}

static void
test_text_malformed (void)
{
  static const struct {
    const char *what, *data, *where;
    EsErrorCode code;
  } cases[] = {
    { "an empty file", "", "line 1", ES_ERROR_FORMAT },
    { "a missing width", "5\n", "line 1, column 2", ES_ERROR_FORMAT },
    { "junk after the size", "2 2 2\n0 0\n0 0\n", "line 1, column 5", ES_ERROR_FORMAT },
    { "a zero height", "0 2\n", "line 1, column 1", ES_ERROR_FORMAT },
    { "a zero width", "\n2 0\n", "line 2, column 1", ES_ERROR_FORMAT },
    { "a negative height", "-2 2\n", "line 1, column 1", ES_ERROR_FORMAT },
    { "an overflowing width", "2 99999999999\n", "line 1, column 3", ES_ERROR_FORMAT },
    { "too wide", "1 2000000\n", "line 1", ES_ERROR_LIMIT },
    { "a missing value", "2 3\n1 2 3\n4 5\n", "line 3, column 4", ES_ERROR_FORMAT },
    { "an extra value", "2 3\n1 2 3 4\n4 5 6\n", "line 2, column 7", ES_ERROR_FORMAT },
    { "a negative value", "1 2\n1 -2\n", "line 2, column 3", ES_ERROR_FORMAT },
    { "an overflowing value", "1 2\n1 99999999999\n", "line 2, column 3", ES_ERROR_FORMAT },
    { "junk in a value", "1 2\n1 2x\n", "line 2, column 4", ES_ERROR_FORMAT },
    { "a decimal value", "1 2\n1 2.0\n", "line 2, column 4", ES_ERROR_FORMAT },
    { "a value of 16", "2 3\n0 1 2\n0 17 2\n", "line 3, column 3: value 17 is not below 16 levels", ES_ERROR_FORMAT },
    { "too few rows", "3 2\n0 1\n1 0\n", "line 4, column 1", ES_ERROR_FORMAT },
    { "too many rows", "1 2\n0 1\n1 0\n", "line 3, column 1", ES_ERROR_FORMAT },
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      bool ok = es_text_matrix_decode (cases[i].data, strlen (cases[i].data), 16, &image, &error);

      tap_ok (!ok && error.code == cases[i].code && strstr (error.message, cases[i].where) != NULL && one_line (&error)
                && image.pixels == NULL,
              "text matrix with %s is rejected at %s: %s", cases[i].what, cases[i].where, error.message);
    }
}

/* Parallel text matrices ------------------------------------------------ */

/* The ways a row is broken; each one makes the row an error. */
typedef enum {
  BREAK_JUNK,     /* a letter glued to a value */
  BREAK_NEGATIVE, /* a minus sign */
  BREAK_TOO_BIG,  /* a value of `levels` or more */
  BREAK_OVERFLOW, /* more digits than an int holds */
  BREAK_MISSING,  /* one value too few */
  BREAK_EXTRA,    /* one value too many */
  BREAK_CONTROL,  /* a control byte (NUL included) among the values */
  N_BREAKS
} Break;

/* Writes one row of `width` values, broken as `how` unless how == N_BREAKS. */
static void
text_row (Buffer *b, int width, int levels, bool crlf, Break how)
{
  static const char *blanks[] = { " ", "  ", "\t", " \t" };
  int spoil = (int) random_below ((uint32_t) width);
  int n = how == BREAK_MISSING ? width - 1 : how == BREAK_EXTRA ? width + 1 : width;

  buffer_printf (b, "%s", random_below (8) ? "" : blanks[random_below (4)]);
  for (int x = 0; x < n; x++)
    {
      uint32_t v = random_below ((uint32_t) levels);

      buffer_printf (b, "%s", x ? blanks[random_below (4)] : "");
      if (x != spoil)
        buffer_printf (b, "%" PRIu32, v);
      else
        switch (how)
          {
          case BREAK_JUNK: buffer_printf (b, "%" PRIu32 "%c", v, 'a' + (int) random_below (26)); break;
          case BREAK_NEGATIVE: buffer_printf (b, "-%" PRIu32, v); break;
          case BREAK_TOO_BIG: buffer_printf (b, "%" PRIu32, (uint32_t) levels + random_below (1000)); break;
          case BREAK_OVERFLOW: buffer_printf (b, "%" PRIu32 "99999999999", v); break;
          case BREAK_CONTROL: buffer_append (b, (char[]){ (char) random_below (8) }, 1); break;
          case BREAK_MISSING:
          case BREAK_EXTRA:
          case N_BREAKS:
          default: buffer_printf (b, "%" PRIu32, v); break;
          }
    }
  buffer_printf (b, "%s%s", random_below (8) ? "" : blanks[random_below (4)], crlf ? "\r\n" : "\n");
}

/* Decodes with the parallel and the automatic split and compares each with
 * the serial parser: the same verdict, the same message, the same pixels. */
static bool
text_splits_agree (const Buffer *b, int levels, char *why, size_t why_size, EsError *serial_error)
{
  EsImage serial = { 0 };
  bool serial_ok = es_text_matrix_decode_split (b->data, b->size, levels, ES_TEXT_SPLIT_SERIAL, &serial, serial_error);

  why[0] = '\0';
  for (int split = 0; split < 2 && why[0] == '\0'; split++)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      bool ok = es_text_matrix_decode_split (b->data, b->size, levels,
                                             split ? ES_TEXT_SPLIT_AUTO : ES_TEXT_SPLIT_PARALLEL, &image, &error);
      const char *name = split ? "auto" : "parallel";

      if (ok != serial_ok)
        snprintf (why, why_size, "%s %s (%.120s), serial %s (%.120s)", name, ok ? "accepts" : "rejects", error.message,
                  serial_ok ? "accepts" : "rejects", serial_error->message);
      else if (!ok && (error.code != serial_error->code || strcmp (error.message, serial_error->message) != 0))
        snprintf (why, why_size, "%s says \"%.120s\", serial \"%.120s\"", name, error.message, serial_error->message);
      else if (!ok && image.pixels != NULL)
        snprintf (why, why_size, "%s leaves an image behind after an error", name);
      else if (ok
               && (image.width != serial.width || image.height != serial.height || image.format != serial.format
                   || image.levels != serial.levels || image_hash (&image) != image_hash (&serial)))
        snprintf (why, why_size, "%s decodes other pixels than serial", name);
      es_image_clear (&image);
    }
  es_image_clear (&serial);
  return why[0] == '\0';
}

/* Random matrices with broken rows at random places, too few or too many
 * rows, blank lines, CRLF and a missing last newline: the parallel parser
 * reports exactly what the serial one reports, which names the first broken
 * row in file order. */
static void
test_text_parallel_errors (void)
{
  static const char *const cases[] = {
    "broken rows",
    "too few rows (a third also broken)",
    "too many rows (a third also broken)",
    "no errors",
  };

  for (int c = 0; c < 4; c++)
    {
      int trials = 60, failures = 0, named = 0;
      char first_failure[400] = "";

      for (int t = 0; t < trials; t++)
        {
          int height = 1 + (int) random_below (t % 3 ? 40 : 400);
          int width = 1 + (int) random_below (t % 2 ? 8 : 60);
          int levels = random_below (2) ? 16 : 2 + (int) random_below (300);
          bool crlf = random_below (4) == 0;
          int written = c == 1   ? (int) random_below ((uint32_t) height)
                        : c == 2 ? height + 1 + (int) random_below (3)
                                 : height;
          int n_broken = c == 0 ? 1 + (int) random_below (4) : c < 3 && random_below (3) == 0;
          int broken[4];
          long line = 1, first_line = 0;
          int first_row = INT32_MAX;
          Buffer b = { 0 };
          EsError serial_error = { 0 };
          char why[300];

          /* Rows to break, anywhere among those written (none if there are none). */
          for (int i = 0; i < n_broken; i++)
            broken[i] = written > 0 ? (int) random_below ((uint32_t) written) : -1;

          for (; random_below (4) == 0; line++)
            buffer_printf (&b, "%s", random_below (2) ? "\n" : "  \n");
          buffer_printf (&b, "%d %d%s", height, width, crlf ? "\r\n" : "\n");
          line++;
          for (int y = 0; y < written; y++)
            {
              Break how = N_BREAKS;

              for (; random_below (10) == 0; line++)
                buffer_printf (&b, "%s", random_below (2) ? "\n" : " \t\r\n");
              for (int i = 0; i < n_broken; i++)
                if (broken[i] == y)
                  how = (Break) random_below (N_BREAKS);
              /* A single value cannot lose one and stay a row. */
              if (how == BREAK_MISSING && width == 1)
                how = BREAK_EXTRA;
              if (how != N_BREAKS && y < first_row)
                {
                  first_row = y;
                  first_line = line;
                }
              text_row (&b, width, levels, crlf, how);
              line++;
            }
          if (random_below (3) == 0)
            buffer_printf (&b, "\n  \n");
          else if (random_below (3) == 0 && b.size > 0 && b.data[b.size - 1] == '\n')
            b.size -= crlf ? 2 : 1;

          if (!text_splits_agree (&b, levels, why, sizeof why, &serial_error))
            {
              if (failures++ == 0)
                snprintf (first_failure, sizeof first_failure, "%d×%d L=%d: %s", height, width, levels, why);
            }
          else if (first_row < height && first_row < written)
            {
              /* Only a broken row counts: the serial parser must name its line. */
              char where[64];

              snprintf (where, sizeof where, "line %ld, column", first_line);
              named += strstr (serial_error.message, where) != NULL;
              if (strstr (serial_error.message, where) == NULL && failures++ == 0)
                snprintf (first_failure, sizeof first_failure, "%d×%d: \"%.200s\" does not name %s", height, width,
                          serial_error.message, where);
            }
          free (b.data);
        }
      tap_ok (failures == 0,
              "text matrices with %s: parallel and serial parsers agree in %d trials "
              "(%d name the first broken row)%s%s",
              cases[c], trials, named, failures ? ": " : "", first_failure);
    }
}

/* Matrices of a few MB (over the size where the automatic split goes
 * parallel) decode to the same pixels as the serial parser and as written,
 * and an error far down such a file is reported as the serial parser does. */
static void
test_text_parallel_large (void)
{
  for (int round = 0; round < 3; round++)
    {
      int height = 600 + (int) random_below (600);
      int width = 900 + (int) random_below (900);
      int levels = round == 2 ? 1000 : 16;
      int bad_row = round == 1 ? (int) random_below ((uint32_t) height) : -1;
      uint32_t *values = malloc (sizeof *values * (size_t) width * height);
      Buffer b = { 0 };
      EsImage image = { 0 };
      EsError error = { 0 };
      char why[300];
      bool agree, same, ok;

      buffer_printf (&b, "%d %d\n", height, width);
      for (int y = 0; y < height; y++)
        {
          for (int x = 0; x < width; x++)
            {
              uint32_t v = random_below ((uint32_t) levels);

              values[(size_t) y * width + x] = v;
              buffer_printf (&b, x ? " %" PRIu32 : "%" PRIu32, y == bad_row && x == width / 2 ? 99999 : v);
            }
          buffer_printf (&b, "\n");
        }
      agree = text_splits_agree (&b, levels, why, sizeof why, &error);
      es_error_clear (&error);
      ok = es_text_matrix_decode_split (b.data, b.size, levels, ES_TEXT_SPLIT_PARALLEL, &image, &error);
      same = ok && image.width == width && image.height == height && same_samples (&image, values);
      if (bad_row >= 0)
        {
          char where[64];

          snprintf (where, sizeof where, "line %d, column", bad_row + 2);
          tap_ok (agree && !ok && strstr (error.message, where) != NULL,
                  "a %.1f MB text matrix with a bad value in row %d: parallel and serial agree on \"%s\"%s%s",
                  b.size / 1e6, bad_row, error.message, agree ? "" : ": ", why);
        }
      else
        tap_ok (agree && ok && same,
                "a %d×%d text matrix of %.1f MB with %d levels decodes in parallel as written "
                "and as the serial parser does%s%s",
                height, width, b.size / 1e6, levels, agree ? "" : ": ", why);
      es_image_clear (&image);
      free (values);
      free (b.data);
    }
}

/* Text matrices from a pipe that never ends ----------------------------- */

/* Loads from a pipe into which a child writes `head`, then `repeat` until
 * the reader goes away. Returns the bytes the child managed to write,
 * through a second pipe, or -1 if that failed. */
static long long
load_endless (const char *head, const char *repeat, EsImage *image, EsError *error, bool *ok)
{
  int data[2], count[2];
  long long written = -1;
  pid_t child;

  if (pipe (data) != 0 || pipe (count) != 0)
    return -1;
  child = fork ();
  if (child == 0)
    {
      size_t head_length = strlen (head), repeat_length = strlen (repeat);
      long long sent = 0;

      signal (SIGPIPE, SIG_IGN);
      close (data[0]);
      close (count[0]);
      if (write (data[1], head, head_length) == (ssize_t) head_length)
        for (sent = (long long) head_length; write (data[1], repeat, repeat_length) == (ssize_t) repeat_length;)
          sent += (long long) repeat_length;
      if (write (count[1], &sent, sizeof sent) != (ssize_t) sizeof sent)
        _exit (1);
      _exit (0);
    }
  close (data[1]);
  close (count[1]);
  *ok = child > 0 && es_load_fd (data[0], 16, image, error);
  close (data[0]);
  if (child > 0 && read (count[0], &written, sizeof written) != (ssize_t) sizeof written)
    written = -1;
  close (count[0]);
  if (child > 0)
    waitpid (child, NULL, 0);
  return written;
}

/* A row, a header line or a run of rows that never ends is refused at the
 * first value that proves it wrong: the reader holds what the declared
 * matrix needs and a pipe's worth more, never the 4 GiB limit's worth. With
 * a limit of 64 MiB here, reading on to it would say "larger than". */
static void
test_text_endless (void)
{
  static const struct {
    const char *what, *head, *repeat, *where;
  } cases[] = {
    { "an endless row", "5 5\n", "0 ", "line 2, column 11: more than 5 values" },
    { "an endless header line", "5 5 ", "0 ", "line 1, column 5: junk after" },
    { "an endless run of rows", "5 5\n", "0 0 0 0 0\n", "line 7, column 1: more than 5 rows" },
    { "an endless height", "5", "5", "line 1, column 1: the height overflows" },
    { "an endless width", "5 5", "5", "line 1, column 3: the width overflows" },
  };
  uint64_t limit = es_load_get_max_file_size ();

  es_load_set_max_file_size (64u << 20);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      bool ok = false;
      long long written = load_endless (cases[i].head, cases[i].repeat, &image, &error, &ok);

      /* The pipe holds up to 1 MiB (Linux's largest default), the reader 64 KiB. */
      tap_ok (!ok && strstr (error.message, cases[i].where) != NULL && written >= 0 && written < (2 << 20),
              "%s from a pipe is refused at %s after %lld bytes were written: %s", cases[i].what, cases[i].where,
              written, error.message);
      es_image_clear (&image);
    }
  es_load_set_max_file_size (limit);
}

int
main (void)
{
  load_tests_init ();
  test_pgm_round_trips ();
  test_pgm_malformed ();
  test_text_round_trips ();
  test_text_malformed ();
  test_text_parallel_errors ();
  test_text_parallel_large ();
  test_text_endless ();
  return tap_done ();
}
