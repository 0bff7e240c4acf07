/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: the bench command, on random images or on one file. */
#pragma once

#include <stdbool.h>

#include "es-engine.h"
#include "es-volume.h"

#define ES_BENCH_MAX_SIZES 32
/* Values of one parameter that a bench run times (--windows=3,5,...). */
#define ES_BENCH_MAX_VALUES 32

/* What bench times without --ops and --sizes (--help shows these). */
#define ES_BENCH_DEFAULT_OPS "entropy,equalize,sharpen,clahe"
#define ES_BENCH_DEFAULT_SIZES "1024,4096,8192"

typedef struct {
  int sizes[ES_BENCH_MAX_SIZES];
  int n_sizes;
  EsOp ops[ES_N_OPS];
  int n_ops;
  EsBackendChoice backend; /* AUTO: the CPU, and CUDA when usable */
  const char *variant;     /* NULL: every CUDA variant of each op */
  int repeats;             /* 0: 20 on CUDA, 5 on the CPU (es_bench_image_run: 10) */
  EsJob job;               /* the parameters of every job; op and variant are set per row */
  /* Lists of values of a parameter (--windows, --levels, --amount with
   * commas): each operation is timed at every combination of the values of
   * the parameters it uses. n_values[id] = 0: job's single value. */
  double values[ES_N_PARAMS][ES_BENCH_MAX_VALUES];
  int n_values[ES_N_PARAMS];
  bool metrics;         /* --metrics: each row's EsTiming.metrics beside its times */
  bool counters;        /* --metrics=hw: and the hardware counters of one more run of each */
  const char *csv_path; /* NULL: no CSV */
  const char *image;    /* es_bench_image_run's file */
  const char *mask;     /* and the file of the definition's mask, or NULL */
  bool volume;          /* and read as a volume (a 3-D window, or --volume) */
  EsVolumeChoice volume_choice;
} EsBenchOptions;

/* Times every operation, size, parameter combination, backend and variant
 * on random images and returns the exit status. */
int es_bench_run (const EsBenchOptions *options);
/* bench --image: es_compare_variants for each operation (and parameter
 * combination) on options->image, the numbers the window's Compare
 * Variants view shows for that image. Ignores sizes and variant. Returns
 * the exit status. */
int es_bench_image_run (const EsBenchOptions *options);
