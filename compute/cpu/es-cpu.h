/* SPDX-License-Identifier: MIT */
/* The CPU (OpenMP) backend: one runner per operation, each computing exactly what the CUDA kernels compute. */
#pragma once

#include "../es-ops.h"

/* EsCpuRunner each: the engine has validated the job and allocated `out`
 * with the job's output format and the input's size. They fail only on an
 * internal allocation. */
bool es_cpu_quantize (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);
bool es_cpu_entropy (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);
bool es_cpu_equalize (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);
bool es_cpu_sharpen (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);
bool es_cpu_clahe (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);
/* CLAHE in bands (EsTilePasses): OpenCV's definition, each band's rows
 * added to per-tile histograms, then each band blended with the LUTs. */
extern const EsTilePasses es_cpu_clahe_passes;
