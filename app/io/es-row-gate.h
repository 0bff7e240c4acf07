/* SPDX-License-Identifier: MIT */
/* Internal to app/: rows of an image released to readers on other threads as a producer completes them. */
#pragma once

#include <pthread.h>
#include <stdbool.h>

/* A producer fills an image from the top and says how far it got; readers
 * wait for the rows they need. The last row is released only by
 * es_row_gate_finish, so a reader that needs the whole image (an encoder
 * about to commit its file) waits for the producer's final verdict. */
typedef struct EsRowGate {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int total;     /* rows of the image */
  int ready;     /* rows 0 .. ready - 1 may be read */
  bool finished; /* every row, and the producer succeeded */
  bool failed;   /* the producer gave up: nothing more will come */
} EsRowGate;

void es_row_gate_init (EsRowGate *gate, int total);
void es_row_gate_clear (EsRowGate *gate);

/* Releases rows 0 .. rows - 1 (the last row only through finish). */
void es_row_gate_advance (EsRowGate *gate, int rows);
void es_row_gate_finish (EsRowGate *gate);
void es_row_gate_fail (EsRowGate *gate);

/* Waits until rows 0 .. rows - 1 are released (rows is clamped to the
 * image); false once the producer has failed. A NULL gate has every row. */
bool es_row_gate_wait (EsRowGate *gate, int rows);
/* Rows released so far, and whether the producer has failed, without waiting. */
int es_row_gate_ready (EsRowGate *gate, bool *failed);
