/* SPDX-License-Identifier: MIT */
/* Cooperative cancellation and progress: an atomic flag and an atomic counter. */
#include "es-control.h"

#include <stdatomic.h>
#include <stdlib.h>

struct EsControl {
  /* Lock-free, so that a signal handler may set it. */
  atomic_bool cancelled;
  atomic_llong done;
  atomic_llong units;
  EsProgressFunc progress;
  void *user_data;
};

EsControl *
es_control_new (EsProgressFunc progress, void *user_data)
{
  EsControl *control = calloc (1, sizeof *control);

  if (control == NULL)
    return NULL;
  atomic_init (&control->cancelled, false);
  atomic_init (&control->done, 0);
  atomic_init (&control->units, 0);
  control->progress = progress;
  control->user_data = user_data;
  return control;
}

void
es_control_free (EsControl *control)
{
  free (control);
}

void
es_control_cancel (EsControl *control)
{
  if (control != NULL)
    atomic_store (&control->cancelled, true);
}

bool
es_control_cancelled (const EsControl *control)
{
  return control != NULL && atomic_load_explicit (&((EsControl *) control)->cancelled, memory_order_relaxed);
}

void
es_control_reset (EsControl *control)
{
  if (control == NULL)
    return;
  atomic_store (&control->cancelled, false);
  atomic_store (&control->done, 0);
  atomic_store (&control->units, 0);
}

void
es_control_begin (EsControl *control, long long units)
{
  if (control == NULL)
    return;
  atomic_store (&control->done, 0);
  atomic_store (&control->units, units > 0 ? units : 1);
  if (control->progress != NULL)
    control->progress (0.0, control->user_data);
}

void
es_control_advance (EsControl *control, long long n)
{
  long long done, units;

  if (control == NULL)
    return;
  done = atomic_fetch_add (&control->done, n) + n;
  units = atomic_load (&control->units);
  if (control->progress != NULL && units > 0)
    control->progress (done >= units ? 1.0 : (double) done / (double) units, control->user_data);
}
