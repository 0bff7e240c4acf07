/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: the --metrics columns, beside each time of the compute commands and bench. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "es-engine.h"

/* The column headings of es_cli_metrics_columns, aligned with them. */
void es_cli_metrics_heading (FILE *out);
/* One run's metrics as aligned columns, no newline: the
 * modelled bytes a pixel, the model's MB, the achieved GB/s and its share
 * of the copy floor and of the datasheet bandwidth, shared-memory bytes a
 * pixel, then the main kernel's occupancy, registers, shared and local
 * memory and launch, and the transfers. A figure the backend does not
 * have reads "-". */
void es_cli_metrics_columns (FILE *out, const EsMetrics *metrics);
/* Every kernel of the run on a line of its own, indented: its name, launch
 * and resources (none on the CPU). */
void es_cli_metrics_kernels (FILE *out, const EsMetrics *metrics);
/* --metrics=hw: the hardware counters of the run, measured, beside the
 * model's bytes, then each kernel's, indented; or, where the run has none,
 * why, once a process (the model alone stands). */
void es_cli_metrics_counters (FILE *out, const EsMetrics *metrics);
/* Measures the engine's peak once for the metrics' shares, reporting a
 * failure on stderr (the shares then read "-"). */
void es_cli_metrics_measure_peak (EsEngine *engine);
