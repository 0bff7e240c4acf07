/* Internal to entroscope-cli: the bench command and the CLI's error reporting. */
#pragma once

#include <stdbool.h>

#include "es-engine.h"

/* Exit statuses, documented in --help. */
enum {
  ES_EXIT_OK = 0,
  ES_EXIT_USAGE = 1,
  ES_EXIT_DATA = 2,     /* input or output: ES_ERROR_IO, _FORMAT, _LIMIT */
  ES_EXIT_COMPUTE = 3,  /* ES_ERROR_COMPUTE, _NO_MEMORY, _UNAVAILABLE */
};

#define ES_BENCH_MAX_SIZES 32

typedef struct {
  int sizes[ES_BENCH_MAX_SIZES];
  int n_sizes;
  EsOp ops[ES_N_OPS];
  int n_ops;
  EsBackendChoice backend;  /* AUTO: the CPU, and CUDA when usable */
  const char *variant;      /* NULL: every CUDA variant of each op */
  int repeats;              /* 0: 20 on CUDA, 5 on the CPU */
  int window;
  int levels;
  float amount;
  const char *csv_path;     /* NULL: no CSV */
} EsBenchOptions;

/* Runs the benchmark and returns the exit status. */
int es_bench_run (const EsBenchOptions *options);

/* One line on stderr: "entroscope-cli: SUBJECT: message" (SUBJECT may be
 * NULL). Clears a progress line first so that the two never mix. */
void es_cli_report (const char *subject, const char *format, ...)
  __attribute__ ((format (printf, 2, 3)));
/* Reports an EsError about SUBJECT without repeating SUBJECT when the
 * message already starts with it, and returns the matching exit status. */
int es_cli_report_error (const char *subject, const EsError *error);
int es_cli_exit_status (EsErrorCode code);
