/* SPDX-License-Identifier: MIT */
/* Internal to EsWorker: its state, shared by es-worker.c (jobs, cache, cancellation) and es-worker-compare.c. */
#pragma once

#include "es-worker.h"

G_BEGIN_DECLS

/* Progress is kept as an integer of this scale, so that OpenMP threads can
 * raise it with one atomic compare-and-swap. */
#define PROGRESS_SCALE 1000000

/* Two threads share the engine, never at once:
 *
 * - the jobs thread runs the view requests, a little nicer than the main
 *   loop (see jobs_main), with the OpenMP team that it starts;
 * - the comparisons thread, at the main thread's priority, waits for
 *   comparisons. For each batch it retires the jobs thread (after the
 *   request in progress), so that its OpenMP team goes with it, runs the
 *   comparisons on a thread of its own, and starts a new jobs thread.
 *
 * So a comparison is timed as `entroscope-cli bench` times: at normal
 * priority, with the only OpenMP team in the process (see run_batch). */
struct _EsWorker {
  GMainContext *context;
  EsWorkerCallback callback;
  gpointer user_data;
  gint alive; /* atomic: 0 once es_worker_free has run */

  /* Requests and comparisons for the worker thread, and what it runs. */
  GMutex lock;
  GCond wake;
  EsRequest *pending; /* the newest request not started; NULL if none */
  guint64 latest;     /* the generation of the newest request handed over */
  guint64 running;    /* the generation being worked on; 0 if none */
  gboolean running_cancelled;
  gboolean quit;
  GThread *jobs_thread; /* NULL while comparisons run */
  gboolean retire;      /* the jobs thread is asked to end (for comparisons) */
  /* The job running (job_running), for es_worker_submit to decide whether
   * the new request still needs it. */
  gboolean job_running;
  EsWorkItem job_item;
  const EsSource *job_source;
  EsBackendChoice job_backend;
  gboolean job_on_cpu; /* variants do not matter */
  int shown_done, shown_total;
  gboolean job_shown; /* the running job is one of the views on screen */
  guint64 painted;    /* the newest generation whose views on screen are painted */
  EsWorkerJobHook job_hook;
  gpointer job_hook_data;

  EsControl *control; /* of the running job; cancelled under lock */
  gint progress;      /* atomic, 0..PROGRESS_SCALE: the running job's */

  GThread *compare_thread;
  GAsyncQueue *compares; /* CompareTask*, or &es_worker_quit_marker */

  /* Touched by one thread at a time: the jobs thread, or the thread of a
   * comparison while there is no jobs thread. */
  EsEngine *engine;
  EsBackendChoice engine_choice;
  gboolean probed;
  gboolean cuda_usable;
  char *cuda_reason;
  EsLayer *cache[ES_N_VIEWS];
  guint64 stocked_serial; /* the source whose first results stocked the spare buffers */
};

/* Queued after the last comparison when the worker goes away (es-worker.c). */
extern EsRequest es_worker_quit_marker;

typedef struct {
  EsWorker *worker;
  GTask *task;
  EsSource *source;
  EsBackendChoice backend;
  EsJob job;
  int repeats;
  EsCompareProgressFunc progress;
  gpointer progress_data;
} CompareTask;

/* es-worker.c: the engine and the jobs thread. */
gboolean es_worker_ensure_engine (EsWorker *worker, EsBackendChoice choice, char **notice, char **failure);
/* What the engine is and whether CUDA can be used, for a response or a comparison. */
void es_worker_fill_engine_info (EsWorker *worker, EsEngineInfo *info);
/* Under lock. */
void es_worker_start_jobs_thread (EsWorker *worker);

/* es-worker-compare.c: variant comparisons. */
void es_worker_compare_task_free (CompareTask *compare);
/* The comparisons thread's body; started by es_worker_new. */
gpointer es_worker_compares_main (gpointer data);

G_END_DECLS
