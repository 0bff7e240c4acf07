/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: an input that is a stack (a multi-page TIFF), processed page by page into one multi-page TIFF. */
#pragma once

#include "es-cli.h"
#include "es-load.h"

/* Runs the job on every page of a stack (es_pages_count > 1) and writes
 * them, in order, into one multi-page TIFF at output (format must be
 * ES_EXPORT_TIFF); returns the exit status (errors are reported here). The
 * pages are not closed here: the caller opened them once, as a pipe or a
 * FIFO can be read only once. */
int es_cli_stack_process (EsEngine *engine, const EsViewParams *params, const EsCliOptions *options,
                          EsExportFormat format, EsPages *pages, const char *input, const char *output, bool to_stdout,
                          EsControl *interrupt, EsResult *result);
