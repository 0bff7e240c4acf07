/* SPDX-License-Identifier: MIT */
/* Internal to the entropy .cu files: the launchers that the variant table in entropy.cu names. */
#pragma once

#include "es-cuda-internal.h"

/* entropy-teaching.cu: one EsCudaLaunch per teaching variant, and their
 * device setup (the constant table, shared-memory limits). */
bool es_cuda_entropy_naive (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_per_thread_histogram (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job,
                                           EsError *error);
bool es_cuda_entropy_table_global (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_table_constant (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_table_shared (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_shared_tile (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_teaching_init (EsCuda *cuda, EsError *error);

/* entropy-fast.cu: the fast variant on every row (its EsCudaLaunch), on
 * output rows [y_first, y_last) (EsCudaOp.launch_rows), and its setup. */
bool es_cuda_entropy_fast (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_launch_rows (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, int y_first,
                                  int y_last, int q_first, int q_last, EsError *error);
bool es_cuda_entropy_fast_init (EsCuda *cuda, EsError *error);

/* entropy-general.cu: every definition (EsEntropyDefinition), and its table. */
bool es_cuda_entropy_general (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_general_init (EsCuda *cuda, EsError *error);

/* A job on a frame that the general kernel's first pass binned: 16-bit bins,
 * all ones where a cell counts nowhere, padded by the window's half extents. */
typedef struct {
  const uint16_t *binned;
  unsigned binned_pitch;       /* in bins */
  int half_h, half_w;
  int width, height;
  uint32_t bins;               /* B */
  bool normalized;
  float *out;
  unsigned out_pitch;
  const EsSpan *column_spans;  /* host: cells (dx, y0..y1) as EsSpan { dx, y0, y1 } */
  int n_spans;
  int cells;                   /* es_window_pixels */
} EsCudaBinnedJob;

/* entropy-spans.cu: the general variant's path for up to 16 bins and 961
 * cells. Sets *ran when it launched; left false (and no error), the job goes
 * to the other kernels. */
#define ES_CUDA_SPANS_MAX_BINS 16
bool es_cuda_entropy_spans (EsCuda *cuda, const EsCudaBinnedJob *job, bool *ran, EsError *error);
