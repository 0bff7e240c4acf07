/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: an input that is a stack (a multi-page TIFF), processed page by page into one multi-page TIFF. */
#pragma once

#include "es-cli.h"
#include "es-load.h"
#include "es-sandbox.h"

/* A stack's pages: decoded in this process, or with --sandbox in the
 * sandbox, a batch at a time, from a file read again for each batch. */
typedef struct {
  EsPages *pages; /* in this process */
  bool sandboxed;
  int fd; /* sandboxed: es_sandbox_open_stack's */
  EsDecodeRequest request;
  EsSandboxStack batch; /* the first batch when the stack is handed over */
} EsStackPages;

void es_stack_pages_close (EsStackPages *stack);

/* Runs the job on every page of a stack (more than one page) and writes
 * them, in order, into one multi-page TIFF at output (format must be
 * ES_EXPORT_TIFF); returns the exit status (errors are reported here). The
 * pages are not closed here: the caller opened them once, as a pipe or a
 * FIFO can be read only once. */
int es_cli_stack_process (EsEngine *engine, const EsViewParams *params, const EsCliOptions *options,
                          EsExportFormat format, EsStackPages *pages, const char *input, const char *output,
                          bool to_stdout, EsControl *interrupt, EsResult *result);
