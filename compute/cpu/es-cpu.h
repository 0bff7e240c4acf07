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

/* EsMemoryModel each, beside its runner: the bytes the runner moves through
 * main memory. The bands keep their rings, sums and histograms in the
 * caches (es_cpu_run_bands sizes them so), so only the input, the output
 * and the passes over them count. */
void es_cpu_quantize_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cpu_entropy_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cpu_equalize_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cpu_sharpen_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cpu_clahe_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);

/* The main-memory bandwidth of a parallel memcpy of `bytes` on the
 * backend's threads (GB/s of bytes read plus written, the median of
 * `repeats`): the CPU's peak for es_engine_measure_peak. 0 when the
 * buffers cannot be allocated. */
double es_cpu_copy_gbs (size_t bytes, int repeats);
