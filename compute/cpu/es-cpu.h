/* The CPU (OpenMP) backend: computes exactly what the CUDA kernels compute. */
#pragma once

#include "../es-engine.h"

/* `out` is already allocated by the engine with the job's output format and
 * the input's size. Fails only on a bad job or an internal allocation. */
bool es_cpu_run (const EsJob *job, const EsImage *in, EsImage *out, EsError *error);
