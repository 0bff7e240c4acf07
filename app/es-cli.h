/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: the parsed command line, between its option parser and its commands. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "es-bench.h"
#include "es-cli-report.h"
#include "es-pipeline.h"

/* ES_VERSION comes from project() in meson.build. */

/* The kinds of command; each option names the kinds that accept it. */
typedef enum {
  ES_CLI_COMMAND_OP = 1 << 0,     /* entropy, equalize, ...: one per operation */
  ES_CLI_COMMAND_INFO = 1 << 1,
  ES_CLI_COMMAND_BENCH = 1 << 2,
} EsCliCommand;

typedef struct {
  const char *output;
  bool quiet;
  bool timings;
  bool colorbar;
  bool raw16;
  bool format_set;
  EsExportFormat format;
  const char *colormap;           /* NULL: the operation's default */
  EsRangeMode range;
  EsUnits units;
  EsJob job;                      /* --window, --levels, --amount; op and variant unset */
  EsBackendChoice backend;
  const char *variant;
  unsigned long long max_pixels;  /* 0: the default budget */
  EsBenchOptions bench;           /* ops and sizes hold the defaults until given */
  bool sizes_given;               /* --sizes, which bench --image refuses */
} EsCliOptions;

/* The defaults of every option. */
void es_cli_options_init (EsCliOptions *options);
/* Parses argv (argv[0] is the command word) into options; getopt_long
 * leaves the operands at argv[optind...]. Returns -1 to go on, else the
 * exit status (after --help and --version too). */
int es_cli_parse_options (int argc, char **argv, EsCliCommand command, EsCliOptions *options);
void es_cli_print_help (FILE *out);
void es_cli_print_version (FILE *out);
