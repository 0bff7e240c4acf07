/* entroscope-cli's stderr: one-line error reports, exit statuses and the batch progress line. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "es-cli-report.h"

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
es_cli_progress_show (int index, int count, const char *input)
{
  char name[256];

  /* Keep the line from wrapping on a narrow terminal. */
  snprintf (name, sizeof name, "%s", es_cli_base_name (input));
  for (char *c = name; *c; c++)
    if (iscntrl ((unsigned char) *c))
      *c = '?';
  fprintf (stderr, "\r\033[K[%d/%d] %.60s", index, count, name);
  fflush (stderr);
  progress_shown = true;
}

const char *
es_cli_base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

void
es_cli_report (const char *subject, const char *format, ...)
{
  char line[1024];
  size_t len = 0;
  va_list args;

  es_cli_progress_clear ();
  if (subject)
    len = (size_t) snprintf (line, sizeof line, "%s: ", subject);
  if (len < sizeof line)
    {
      va_start (args, format);
      vsnprintf (line + len, sizeof line - len, format, args);
      va_end (args);
    }
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
    case ES_OK:
      return ES_EXIT_OK;
    case ES_ERROR_INVALID:
      return ES_EXIT_USAGE;
    case ES_ERROR_IO:
    case ES_ERROR_FORMAT:
    case ES_ERROR_LIMIT:
      return ES_EXIT_DATA;
    case ES_ERROR_NO_MEMORY:
    case ES_ERROR_COMPUTE:
    case ES_ERROR_UNAVAILABLE:
    default:
      return ES_EXIT_COMPUTE;
    }
}

int
es_cli_report_error (const char *subject, const EsError *error)
{
  size_t len = subject ? strlen (subject) : 0;

  if (subject && strncmp (error->message, subject, len) == 0 && error->message[len] == ':')
    es_cli_report (NULL, "%s", error->message);
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
  es_cli_report (NULL, "%s (see '" ES_CLI_PROGRAM " --help')", message);
  return ES_EXIT_USAGE;
}
