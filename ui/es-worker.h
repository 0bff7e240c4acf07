/* SPDX-License-Identifier: MIT */
/* The compute worker: one thread that owns the EsEngine and runs jobs off the main loop. */
#pragma once

#include <gio/gio.h>

#include "es-compare.h"
#include "es-layer.h"

G_BEGIN_DECLS

/* One thing to compute: a view of the source with its job. Only the job:
 * how the result is shown (EsDisplay) never reaches the worker. */
typedef struct {
  EsView view;
  EsJob job; /* job.variant must be static (es_variant_find) */
  /* Where a view on screen will be drawn (es_canvas_plan_viewport): the
   * worker renders the result's first pixels for it, so that showing the
   * result on the main thread only draws it. Zoom 0: none. */
  EsViewport viewport;
} EsWorkItem;

typedef struct {
  guint64 generation; /* increases with every request */
  EsSource *source;   /* owned by the request; NULL: only set up the engine */
  EsBackendChoice backend;
  /* Hardware counters for the jobs (es_engine_set_counters): a result
   * computed without them is computed again. */
  gboolean counters;
  /* The colours the items' viewports are rendered with. The jobs never
   * depend on it: a display change runs nothing (the canvas renders it). */
  EsDisplay display;
  int n_items;
  /* The first n_shown items are on screen: they are answered first, in a
   * response of their own; the rest (for histograms) follow in a second. */
  int n_shown;
  EsWorkItem items[ES_N_VIEWS];
} EsRequest;

/* What the engine is and what it can do, sent with every response. */
typedef struct {
  char *description;       /* es_engine_describe */
  EsBackendChoice backend; /* the backend in use */
  gboolean cuda_usable;    /* a CUDA engine could be made in this process */
  char *cuda_reason;       /* why not, when not */
} EsEngineInfo;

typedef struct {
  guint64 generation;
  gboolean complete;  /* the last response to its request */
  gboolean cancelled; /* es_worker_cancel stopped it: no layers */
  EsSource *source;
  int n_layers;
  EsLayer *layers[ES_N_VIEWS]; /* in request order; NULL where a job failed */
  gboolean fresh[ES_N_VIEWS];  /* computed for this request, not from the cache */
  /* The layers' pixels for their items' viewports, where they had one. */
  EsRendering renderings[ES_N_VIEWS];
  char *error;  /* the first failure, for the user */
  char *notice; /* a CUDA fallback notice, for the user */
  EsEngineInfo engine;
  double worker_ms; /* from picking the request up to posting this */
  double jobs_ms;   /* es_run time of the layers computed for this */
} EsResponse;

void es_request_free (EsRequest *request);
void es_response_free (EsResponse *response);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (EsResponse, es_response_free)

/* Called on the main context with a response it owns. */
typedef void (*EsWorkerCallback) (EsResponse *response, gpointer user_data);

typedef struct _EsWorker EsWorker;

EsWorker *es_worker_new (EsWorkerCallback callback, gpointer user_data);
/* Hands a request over (taken over); its generation must be above every
 * earlier one's. Only the newest request is worked on: one that waits is
 * dropped unanswered, and the job running for an older one is cancelled
 * (es_control_cancel) unless the new request needs that very job. An older
 * request is never answered once a newer one has come. */
void es_worker_submit (EsWorker *worker, EsRequest *request);
/* Stops the request of that generation, waiting or running (its job stops
 * within about a row of work); it is answered with response->cancelled. */
void es_worker_cancel (EsWorker *worker, guint64 generation);
/* Tells the worker that the views on screen of the request of that
 * generation are painted: it holds the request's other jobs (the side
 * panel's histograms) until then, at most PAINT_WAIT_MS, so that they do
 * not take the cores from the frame that shows the views. Any thread. */
void es_worker_shown_painted (EsWorker *worker, guint64 generation);
/* The fraction 0..1 done of the views on screen of the request of that
 * generation, or -1 when it is not running (yet). Any thread; cheap. */
double es_worker_get_progress (EsWorker *worker, guint64 generation);
/* What es_worker_compare gives back. */
typedef struct {
  EsSource *source;
  EsJob job;           /* what was compared (job.variant unused) */
  EsEngineInfo engine; /* the engine that ran the rows */
  int repeats;
  EsCompareRow *rows; /* one per CUDA variant, or the CPU's one row */
  size_t n_rows;
  double floor_ms; /* the copy floor; NAN without CUDA */
} EsComparison;

void es_comparison_free (EsComparison *comparison);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (EsComparison, es_comparison_free)

/* Called on the task's main context while a comparison runs (not after its
 * task was cancelled): the fraction done and the step that starts. */
typedef void (*EsCompareProgressFunc) (double fraction, const char *step, gpointer user_data);

/* Queues es_compare_variants of job on the source with the engine for
 * backend. It runs after the view request in progress and is never dropped
 * for a newer one; view requests wait while it runs. It is timed as
 * `entroscope-cli bench` times: on a thread of normal priority (the view
 * jobs run nicer) with the only OpenMP team in the process, once the main
 * loop has nothing left to do. The task (taken over) returns an EsComparison
 * (es_comparison_free) or a GError; its cancellable stops the runs between
 * two of them (G_IO_ERROR_CANCELLED). progress_data must live as long as
 * the task (e.g. be its source object or be held by its callback). */
void es_worker_compare (EsWorker *worker, GTask *task, EsSource *source, EsBackendChoice backend, const EsJob *job,
                        int repeats, EsCompareProgressFunc progress, gpointer progress_data);
/* Stops the thread after cancelling its current job; no callback runs
 * afterwards; comparisons still queued or running return
 * G_IO_ERROR_CANCELLED. */
void es_worker_free (EsWorker *worker);

/* Only tests/test-ui.c calls this. The hook runs on the worker thread
 * before every job that runs a kernel (not for results from the cache),
 * with the job's control: it may count jobs, report progress
 * (es_control_begin/advance) and hold the job back while it polls
 * es_control_cancelled. NULL removes it. */
typedef void (*EsWorkerJobHook) (const EsWorkItem *item, EsControl *control, gpointer user_data);
void es_worker_set_job_hook (EsWorker *worker, EsWorkerJobHook hook, gpointer user_data);

G_END_DECLS
