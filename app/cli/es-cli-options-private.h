/* SPDX-License-Identifier: MIT */
/* Shared by entroscope-cli's option parser (es-cli-options.c) and its --help (es-cli-help.c). */
#pragma once

#include <stddef.h>

#include "es-ops.h"

/* Every operation's bit. */
#define ES_CLI_ALL_OPS ((1u << ES_N_OPS) - 1)

/* "quantize, entropy and sharpen": the operations whose bit is in ops,
 * joined with `last` before the last one ("|" joins them all). */
void es_cli_op_list (unsigned ops, const char *separator, const char *last, char *text, size_t size);
