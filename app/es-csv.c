/* SPDX-License-Identifier: MIT */
/* CSV text in memory, written atomically: the exports of the window's inspection tools. */
#include "es-csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-save.h"

void
es_csv_init (EsCsv *csv)
{
  memset (csv, 0, sizeof *csv);
}

void
es_csv_clear (EsCsv *csv)
{
  free (csv->text);
  es_csv_init (csv);
}

static bool
reserve (EsCsv *csv, size_t more)
{
  size_t capacity;
  char *text;

  if (csv->failed)
    return false;
  if (csv->length + more + 1 <= csv->capacity)
    return true;
  capacity = csv->capacity ? csv->capacity : 256;
  while (capacity < csv->length + more + 1)
    capacity *= 2;
  text = realloc (csv->text, capacity);
  if (text == NULL)
    {
      csv->failed = true;
      return false;
    }
  csv->text = text;
  csv->capacity = capacity;
  return true;
}

static void
append (EsCsv *csv, const char *bytes, size_t n)
{
  if (!reserve (csv, n))
    return;
  memcpy (csv->text + csv->length, bytes, n);
  csv->length += n;
  csv->text[csv->length] = '\0';
}

/* The separator before every field but a record's first. */
static void
begin_field (EsCsv *csv)
{
  if (csv->in_row)
    append (csv, ",", 1);
  csv->in_row = true;
}

void
es_csv_text (EsCsv *csv, const char *field)
{
  size_t n = strlen (field);
  bool quote = n > 0 && (field[0] == ' ' || field[n - 1] == ' ');

  quote = quote || strpbrk (field, ",\"\r\n") != NULL;
  begin_field (csv);
  if (!quote)
    {
      append (csv, field, n);
      return;
    }
  append (csv, "\"", 1);
  for (const char *p = field; *p; p++)
    {
      append (csv, p, 1);
      if (*p == '"')
        append (csv, "\"", 1); /* a quote inside a quoted field is doubled */
    }
  append (csv, "\"", 1);
}

void
es_csv_number (EsCsv *csv, double value)
{
  char buffer[40];
  int n = 0;

  begin_field (csv);
  if (!isnan (value))
    n = snprintf (buffer, sizeof buffer, "%.9g", value);
  append (csv, buffer, (size_t) n);
}

void
es_csv_integer (EsCsv *csv, long long value)
{
  char buffer[32];
  int n = snprintf (buffer, sizeof buffer, "%lld", value);

  begin_field (csv);
  append (csv, buffer, (size_t) n);
}

void
es_csv_end_row (EsCsv *csv)
{
  append (csv, "\n", 1);
  csv->in_row = false;
}

const char *
es_csv_get_text (const EsCsv *csv)
{
  return csv->text ? csv->text : "";
}

bool
es_csv_write (const EsCsv *csv, const char *path, EsError *error)
{
  EsAtomicFile *file;

  if (csv->failed)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot write '%s': out of memory", path);
  file = es_atomic_file_open (path, error);
  if (file == NULL)
    return false;
  if (csv->length)
    fwrite (csv->text, 1, csv->length, es_atomic_file_stream (file));
  /* A failed write leaves the stream's error flag set: commit reports it
   * and removes the temporary file. */
  return es_atomic_file_commit (file, error);
}
