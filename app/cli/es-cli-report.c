/* SPDX-License-Identifier: MIT */
/* entroscope-cli's stderr: one-line error reports, exit statuses and the batch progress line. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "es-cli-report.h"
#include "es-path.h"

/* Whether stderr ends in a progress line that the next line must replace. */
static bool progress_shown;

void
es_cli_progress_clear (void)
{
  if (progress_shown)
    {
      fputs ("\r\033[K", stderr);
      progress_shown = false;
    }
}

void
es_cli_progress_show (int index, int count, const char *input, double files_per_s, double mb_per_s)
{
  char name[256], rates[64] = "";

  /* Keep the line from wrapping on a narrow terminal. */
  snprintf (name, sizeof name, "%s", es_cli_base_name (input));
  for (char *c = name; *c; c++)
    if (iscntrl ((unsigned char) *c))
      *c = '?';
  if (files_per_s >= 0)
    snprintf (rates, sizeof rates, " · %.1f files/s", files_per_s);
  if (files_per_s >= 0 && mb_per_s > 0)
    snprintf (rates + strlen (rates), sizeof rates - strlen (rates), " · %.1f MB/s", mb_per_s);
  fprintf (stderr, "\r\033[K[%d/%d] %.50s%s", index, count, name, rates);
  fflush (stderr);
  progress_shown = true;
}

const char *
es_cli_base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

/* The longest line es_cli_report writes, prefix and newline aside. */
#define ES_CLI_LINE_MAX 1024
/* A subject keeps at least this much of itself, however long the message. */
#define ES_CLI_SUBJECT_MIN 80

void
es_cli_report (const char *subject, const char *format, ...)
{
  char message[ES_CLI_LINE_MAX], shown[ES_CLI_LINE_MAX], line[2 * ES_CLI_LINE_MAX];
  size_t room;
  va_list args;

  es_cli_progress_clear ();
  va_start (args, format);
  vsnprintf (message, sizeof message, format, args);
  va_end (args);
  /* A long path is shortened in its middle so that the reason after it is
   * never cut: the line is "SUBJECT: message" within ES_CLI_LINE_MAX. */
  if (subject)
    {
      room = strlen (message) + 2 < ES_CLI_LINE_MAX - ES_CLI_SUBJECT_MIN ? ES_CLI_LINE_MAX - strlen (message) - 2
                                                                         : ES_CLI_SUBJECT_MIN;
      snprintf (line, sizeof line, "%s: %s", es_path_shorten (subject, room, shown, sizeof shown), message);
    }
  else
    snprintf (line, sizeof line, "%s", message);
  /* One line, whatever a file name or a message holds. */
  for (char *c = line; *c; c++)
    if (iscntrl ((unsigned char) *c))
      *c = ' ';
  fprintf (stderr, ES_CLI_PROGRAM ": %s\n", line);
}

int
es_cli_exit_status (EsErrorCode code)
{
  switch (code)
    {
    case ES_OK: return ES_EXIT_OK;
    case ES_ERROR_INVALID: return ES_EXIT_USAGE;
    case ES_ERROR_IO:
    case ES_ERROR_FORMAT:
    case ES_ERROR_LIMIT: return ES_EXIT_DATA;
    case ES_ERROR_NO_MEMORY:
    case ES_ERROR_COMPUTE:
    case ES_ERROR_UNAVAILABLE:
    default: return ES_EXIT_COMPUTE;
    }
}

int
es_cli_report_error (const char *subject, const EsError *error)
{
  size_t len = subject ? strlen (subject) : 0;

  if (subject && strncmp (error->message, subject, len) == 0 && error->message[len] == ':')
    es_cli_report (NULL, "%s", error->message);
  /* "cannot write 'SUBJECT': reason" says SUBJECT twice after it: the line
   * is "SUBJECT: reason". */
  else if (subject && strncmp (error->message, "cannot write '", 14) == 0
           && strncmp (error->message + 14, subject, len) == 0 && strncmp (error->message + 14 + len, "': ", 3) == 0)
    es_cli_report (subject, "%s", error->message + 14 + len + 3);
  else
    es_cli_report (subject, "%s", error->message);
  return es_cli_exit_status (error->code);
}

int
es_cli_usage_error (const char *format, ...)
{
  char message[512];
  va_list args;

  va_start (args, format);
  vsnprintf (message, sizeof message, format, args);
  va_end (args);
  es_cli_report (NULL, _ ("%s (see '%s --help')"), message, ES_CLI_PROGRAM);
  return ES_EXIT_USAGE;
}
