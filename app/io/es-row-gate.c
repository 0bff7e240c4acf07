/* SPDX-License-Identifier: MIT */
/* Rows released from a producing thread to waiting readers. */
#include "es-row-gate.h"

void
es_row_gate_init (EsRowGate *gate, int total)
{
  pthread_mutex_init (&gate->lock, NULL);
  pthread_cond_init (&gate->changed, NULL);
  gate->total = total;
  gate->ready = 0;
  gate->finished = false;
  gate->failed = false;
}

void
es_row_gate_clear (EsRowGate *gate)
{
  pthread_cond_destroy (&gate->changed);
  pthread_mutex_destroy (&gate->lock);
}

void
es_row_gate_advance (EsRowGate *gate, int rows)
{
  pthread_mutex_lock (&gate->lock);
  if (rows > gate->total - 1)
    rows = gate->total - 1;
  if (rows > gate->ready)
    {
      gate->ready = rows;
      pthread_cond_broadcast (&gate->changed);
    }
  pthread_mutex_unlock (&gate->lock);
}

void
es_row_gate_finish (EsRowGate *gate)
{
  pthread_mutex_lock (&gate->lock);
  gate->ready = gate->total;
  gate->finished = true;
  pthread_cond_broadcast (&gate->changed);
  pthread_mutex_unlock (&gate->lock);
}

void
es_row_gate_fail (EsRowGate *gate)
{
  pthread_mutex_lock (&gate->lock);
  gate->failed = true;
  pthread_cond_broadcast (&gate->changed);
  pthread_mutex_unlock (&gate->lock);
}

bool
es_row_gate_wait (EsRowGate *gate, int rows)
{
  bool ok;

  if (gate == NULL)
    return true;
  pthread_mutex_lock (&gate->lock);
  if (rows > gate->total)
    rows = gate->total;
  while (!gate->failed && gate->ready < rows)
    pthread_cond_wait (&gate->changed, &gate->lock);
  ok = !gate->failed;
  pthread_mutex_unlock (&gate->lock);
  return ok;
}

int
es_row_gate_ready (EsRowGate *gate, bool *failed)
{
  int ready;

  pthread_mutex_lock (&gate->lock);
  ready = gate->ready;
  *failed = gate->failed;
  pthread_mutex_unlock (&gate->lock);
  return ready;
}
