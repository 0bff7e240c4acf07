/* The compute worker: one thread that owns the EsEngine and runs jobs off the main loop. */
#pragma once

#include "es-layer.h"

G_BEGIN_DECLS

/* One thing to compute: a view of the source with its parameters. */
typedef struct {
  EsView view;
  EsViewParams params;    /* params.job.variant must be static (es_variant_find) */
} EsWorkItem;

typedef struct {
  guint64 generation;     /* increases with every request */
  EsSource *source;       /* owned by the request */
  EsBackendChoice backend;
  int n_items;
  /* The first n_shown items are on screen: they are answered first, in a
   * response of their own; the rest (for histograms) follow in a second. */
  int n_shown;
  EsWorkItem items[ES_N_VIEWS];
} EsRequest;

/* What the engine is and what it can do, sent with every response. */
typedef struct {
  char *description;        /* es_engine_describe */
  EsBackendChoice backend;  /* the backend in use */
  gboolean cuda_usable;     /* a CUDA engine could be made in this process */
  char *cuda_reason;        /* why not, when not */
} EsEngineInfo;

typedef struct {
  guint64 generation;
  gboolean complete;            /* the last response to its request */
  EsSource *source;
  int n_layers;
  EsLayer *layers[ES_N_VIEWS];  /* in request order; NULL where a job failed */
  gboolean fresh[ES_N_VIEWS];   /* computed for this request, not from the cache */
  char *error;                  /* the first failure, for the user */
  char *notice;                 /* a CUDA fallback notice, for the user */
  EsEngineInfo engine;
  double worker_ms;             /* from picking the request up to posting this */
  double jobs_ms;               /* es_run time of the layers computed for this */
} EsResponse;

void es_request_free (EsRequest *request);
void es_response_free (EsResponse *response);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (EsResponse, es_response_free)

/* Called on the main context with a response it owns. */
typedef void (*EsWorkerCallback) (EsResponse *response, gpointer user_data);

typedef struct _EsWorker EsWorker;

EsWorker *es_worker_new (EsWorkerCallback callback, gpointer user_data);
/* Queues a request (taken over). Queued requests that a newer one makes
 * obsolete are dropped unanswered: only the newest one is worked on. */
void es_worker_submit (EsWorker *worker, EsRequest *request);
/* Stops the thread after its current job; no callback runs afterwards. */
void es_worker_free (EsWorker *worker);

G_END_DECLS
