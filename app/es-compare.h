/* SPDX-License-Identifier: MIT */
/* Every kernel variant of one job on one image, timed beside the copy floor (window and CLI). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "es-engine.h"

/* Timed runs per variant after the warm-up, unless the caller asks for
 * another number: the window and `entroscope-cli bench --image` agree. */
#define ES_COMPARE_DEFAULT_REPEATS 10

typedef struct {
  const char *id;    /* the variant's id; "openmp" for the CPU's implementation */
  const char *label; /* "Shared-memory tile"; static storage like the strings below */
  const char *lesson;
  const char *source;
  bool is_default;
  EsBackendChoice backend; /* the backend that ran it */
  int repeats;
  double kernel_ms;      /* median of EsTiming.kernel_ms */
  double wall_ms;        /* median of EsTiming.wall_ms */
  double floor_multiple; /* kernel_ms / the copy floor; NAN without a floor (the CPU) */
  EsMetrics metrics;     /* of the median kernel time (es_compare_measure) */
  /* Why the variant cannot compute the job (es_variant_unsupported): then
   * it is not timed (repeats 0, the figures NAN), since the engine would
   * time another variant under its name. NULL when it was timed. */
  const char *unsupported;
} EsCompareRow;

/* A CUDA variant's row before it is timed: its names and lesson, from the
 * variant table (variant NULL: the CPU's single implementation). */
void es_compare_row_init (EsCompareRow *row, const EsVariant *variant);

/* Records a timed row: the medians and metrics of `timing` (as
 * es_compare_measure gives them) and its multiple of the copy floor
 * (floor_ms NAN: none). es_compare_variants fills its rows so; a test fills
 * a comparison of its own the same way. */
void es_compare_row_record (EsCompareRow *row, const EsTiming *timing, int repeats, double floor_ms);

/* The peaks a comparison's achieved bandwidths are drawn against. */
typedef struct {
  /* The copy floor's bytes (es_compare_op_bytes) over its median time:
   * what a plain copy achieves on the same image, in the same process. NAN
   * without a floor (the CPU). */
  double floor_gbs;
  /* The device's datasheet bandwidth (EsMetrics.datasheet_gbs) of the
   * rows; 0 when unknown (the CPU). */
  double datasheet_gbs;
  /* The fastest row's achieved GB/s (EsMetrics.achieved_gbs), 0 when none
   * was timed or none has a memory model. */
  double fastest_gbs;
} EsCompareBandwidth;

/* The peaks of a comparison of job on an image of `pixels` pixels. */
void es_compare_bandwidth (const EsJob *job, size_t pixels, const EsCompareRow *rows, size_t n_rows, double floor_ms,
                           EsCompareBandwidth *bandwidth);

/* Called before each step (the copy floor, then each variant) with the
 * number of steps done, the total and the label of the step that starts,
 * and once at the end with done == total and label NULL. Called on the
 * thread running es_compare_variants. Returning false cancels. */
typedef bool (*EsCompareProgress) (size_t done, size_t total, const char *label, void *user_data);

/* The engine variants are timed on: the first CUDA device alone unless
 * ES_DEVICES (--devices) names devices. With several devices a job runs in
 * bands over all of them and its kernel time is the overlapped span, which
 * no copy floor of one GPU compares with. AUTO falls back to the CPU. */
EsEngine *es_compare_engine_new (EsBackendChoice choice, EsError *error);

/* The bytes an ideal kernel of op moves for an image of `pixels` pixels:
 * each input byte read once, each output byte written once (equalize reads
 * its input twice: histogram, then the LUT). The copy floor moves these. */
void es_compare_op_bytes (const EsJob *job, size_t pixels, size_t *in_bytes, size_t *out_bytes);

/* A warm-up run, then `repeats` timed runs of one job: *timing is the last
 * run's, with the medians of the kernel and wall times and the metrics'
 * rates from them. A CUDA run that falls back to the CPU is an error (it
 * would time the CPU under a CUDA label). `out` is reused between runs;
 * the caller clears it. With counters on (es_engine_set_counters), the
 * warm-up run reads them and the timed runs go without. */
bool es_compare_measure (EsEngine *engine, const EsJob *job, const EsImage *image, int repeats, EsImage *out,
                         EsTiming *timing, EsError *error);

/* On a CUDA engine: the copy floor of the op's bytes (median of `repeats`),
 * then for each CUDA variant of job->op (job->variant is ignored) a warm-up
 * run and `repeats` timed runs, giving one row per variant in es_variants()
 * order; a variant that cannot compute the job gets a row that says why.
 * On the CPU: one row for its single implementation and *floor_ms = NAN.
 * A CUDA run that falls back to the CPU is an error (it would time the CPU
 * under a CUDA label). On success *rows (free with free()) has *n_rows rows.
 * Cancelled by `progress` (may be NULL): false with error->code ES_OK and
 * nothing allocated. */
bool es_compare_variants (EsEngine *engine, const EsImage *image, const EsJob *job, int repeats,
                          EsCompareProgress progress, void *user_data, EsCompareRow **rows, size_t *n_rows,
                          double *floor_ms, EsError *error);
