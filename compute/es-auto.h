/* SPDX-License-Identifier: MIT */
/* Where an `auto` engine runs a job: a cost model of the CPU against CUDA, end to end (DESIGN.md §2). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the choice depends on: the job, its size, and the state of the device. */
typedef struct {
  const EsJob *job;
  uint64_t pixels;
  size_t in_bytes, out_bytes; /* what CUDA would upload and download */
  int cpu_threads;
  double cuda_open_left_ms; /* until the device is open: 0 once it is */
  bool cuda_warm;           /* a job already ran on it (its kernels are loaded) */
} EsAutoCase;

/* Estimated milliseconds from input in host memory to result in host memory. */
double es_auto_cpu_ms (const EsAutoCase *c);
double es_auto_cuda_ms (const EsAutoCase *c);
/* Whether the CPU is expected to be done first (ties go to the CPU). */
bool es_auto_prefers_cpu (const EsAutoCase *c);
/* Whether CUDA can be done first at any image size, once open and warm:
 * its cost a pixel (copies and kernel) under the CPU's. Where it cannot,
 * a one-shot program need not open the device at all (opening and closing
 * it cost 60-100 ms of a process's life even when no job runs there). */
bool es_auto_cuda_can_win (const EsJob *job, size_t in_bytes_per_pixel, int cpu_threads);
/* Expected milliseconds a fresh process waits for the device to open. */
#define ES_AUTO_CUDA_OPEN_MS 360.0

#ifdef __cplusplus
}
#endif
