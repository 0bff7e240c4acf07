/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: exit statuses, one-line error reports and the progress line they share stderr with. */
#pragma once

#include <stdbool.h>

#include "es-error.h"
#include "es-intl.h"

#define ES_CLI_PROGRAM "entroscope-cli"

/* Exit statuses, documented in --help. */
enum {
  ES_EXIT_OK = 0,
  ES_EXIT_USAGE = 1,
  ES_EXIT_DATA = 2,    /* input or output (stdout too): ES_ERROR_IO, _FORMAT, _LIMIT */
  ES_EXIT_COMPUTE = 3, /* ES_ERROR_COMPUTE, _NO_MEMORY, _UNAVAILABLE */
  /* Stopped by SIGINT, SIGTERM, SIGHUP or SIGPIPE: 128 + the signal, as
   * shells report it. */
  ES_EXIT_SIGNAL_BASE = 128,
};

/* One line on stderr: "entroscope-cli: SUBJECT: message" (SUBJECT may be
 * NULL). Clears a progress line first so that the two never mix. */
void es_cli_report (const char *subject, const char *format, ...) __attribute__ ((format (printf, 2, 3)));
/* Reports an EsError about SUBJECT without repeating SUBJECT when the
 * message already starts with it, and returns the matching exit status. */
int es_cli_report_error (const char *subject, const EsError *error);
int es_cli_exit_status (EsErrorCode code);
/* "entroscope-cli: message (see 'entroscope-cli --help')"; returns ES_EXIT_USAGE. */
int es_cli_usage_error (const char *format, ...) __attribute__ ((format (printf, 1, 2)));

/* "[3/10] name.png · 4.2 files/s · 96.0 MB/s" on stderr (the rates left
 * out while negative), rewritten in place; es_cli_report and
 * es_cli_progress_clear remove it before anything else is written. */
void es_cli_progress_show (int index, int count, const char *input, double files_per_s, double mb_per_s);
void es_cli_progress_clear (void);

/* The last component of a path: how the CLI names an input in a line. */
const char *es_cli_base_name (const char *path);
