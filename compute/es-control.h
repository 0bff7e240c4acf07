/* SPDX-License-Identifier: MIT */
/* Cooperative cancellation and progress of a running job, shared by the caller and the backends. */
#pragma once

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A caller makes one, passes it to es_run_controlled, and may cancel it from
 * any thread; the backends poll it between bands of rows (CPU) and between
 * launches and bands (CUDA), so a cancelled job stops within one band, and
 * report the fraction of the job done. NULL everywhere means "neither". */
typedef struct EsControl EsControl;

/* Called on a computing thread (often an OpenMP one) with the fraction
 * done, 0..1; threads may report slightly out of order, so keep the
 * largest. It must be quick and thread-safe. */
typedef void (*EsProgressFunc) (double done, void *user_data);

EsControl *es_control_new (EsProgressFunc progress, void *user_data);
void es_control_free (EsControl *control);
/* Asks the job to stop; safe from any thread and from a signal handler. */
void es_control_cancel (EsControl *control);
bool es_control_cancelled (const EsControl *control);
/* Makes it usable for a new job: not cancelled, nothing done. */
void es_control_reset (EsControl *control);

/* For backends: `units` of work in all, then `n` more done. Thread-safe. */
void es_control_begin (EsControl *control, long long units);
void es_control_advance (EsControl *control, long long n);

#ifdef __cplusplus
}
#endif
