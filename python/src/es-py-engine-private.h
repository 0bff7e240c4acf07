/* SPDX-License-Identifier: MIT */
/* Internal to entroscope.Engine: its object and what its files (es-py-engine*.c) share. */
#pragma once

#include "es-py.h"

typedef struct {
  PyObject_HEAD EsEngine *engine; /* NULL once closed */
  /* One job at a time: EsEngine keeps device buffers, streams and a
   * notice that are not safe to share between threads. Taken with the GIL
   * released and never held while waiting for the GIL. */
  PyThread_type_lock lock;
  EsControl *control; /* the job in flight, for cancel() and SIGINT */
  EsBackendChoice requested;
  PyObject *devices; /* tuple of ints, or None */
  PyObject *weakrefs;
  struct ResultPool *pool; /* page-locked results of a CUDA engine */
} EsPyEngine;

/* ---- page-locked results ----
 * A CUDA engine downloads a result straight into page-locked memory by DMA,
 * but into a fresh NumPy array through its pinned staging buffer plus the
 * page faults of memory never touched: at 8192² that was 25 ms against 6.4
 * (H200). So a CUDA engine's large results are page-locked arrays that go
 * back to a small pool of the engine when Python frees them, ready for the
 * next call of the same size (a loop over images that drops each result
 * reuses two buffers). Only touched with the GIL held. */

/* A volume's result is pooled as an image's is, but a 512³ float one is
 * 512 MiB: the pool keeps at most POOL_MAX_BYTES of buffers waiting (two
 * such results, or a few large images; a loop that drops each result has
 * one waiting at a time), and frees what would go past it. */
#define POOL_SIZE 4
#define POOL_MIN_BYTES (1u << 20)
#define POOL_MAX_BYTES ((size_t) 1 << 30)

typedef struct ResultPool {
  long refs;   /* the engine, and every array that came from it */
  bool closed; /* the engine is closed: buffers coming back are freed */
  int n;
  size_t bytes; /* of the n buffers waiting */
  EsImage free[POOL_SIZE];
} ResultPool;

/* es-py-engine.c */
PyObject *es_py_engine_closed_error (void);

/* es-py-engine-pool.c */
/* Drops the engine's reference: buffers still in use are freed when they come back. */
void es_py_result_pool_close (ResultPool *pool);
/* A new result for a CUDA engine, a 2-D array (planes 0) or a volume of
 * `planes` planes: a page-locked array from the pool (or newly allocated),
 * or NULL without an error where a plain NumPy array is better (the CPU,
 * small results). */
PyObject *es_py_pooled_result (EsPyEngine *self, int width, int height, int planes, EsFormat format);

/* es-py-engine-call.c */
/* entroscope.Timing, made ready by es_py_timing_type_init. */
extern PyTypeObject es_py_timing_type;
bool es_py_timing_type_init (void);
/* The thread that receives Python's signals, set by es_py_engine_init_types. */
extern unsigned long es_py_main_thread;
/* One operation called on the engine, its arguments read from the tables. */
PyObject *es_py_engine_call (EsPyEngine *self, EsOp op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
