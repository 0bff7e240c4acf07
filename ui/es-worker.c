/* The compute worker: a thread owning the EsEngine, a one-slot cache per view, newest-first. */
#include "es-worker.h"

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

struct _EsWorker {
  GThread *thread;
  GAsyncQueue *queue;        /* EsRequest*, or &quit_marker */
  GMainContext *context;
  EsWorkerCallback callback;
  gpointer user_data;
  gint alive;                /* atomic: 0 once es_worker_free has run */

  /* Touched by the worker thread only. */
  EsEngine *engine;
  EsBackendChoice engine_choice;
  gboolean probed;
  gboolean cuda_usable;
  char *cuda_reason;
  EsLayer *cache[ES_N_VIEWS];
};

static EsRequest quit_marker;

void
es_request_free (EsRequest *request)
{
  if (request == NULL || request == &quit_marker)
    return;
  es_source_unref (request->source);
  g_free (request);
}

void
es_response_free (EsResponse *response)
{
  if (response == NULL)
    return;
  for (int i = 0; i < response->n_layers; i++)
    if (response->layers[i])
      es_layer_unref (response->layers[i]);
  es_source_unref (response->source);
  g_free (response->error);
  g_free (response->notice);
  g_free (response->engine.description);
  g_free (response->engine.cuda_reason);
  g_free (response);
}

static void
es_worker_release (EsWorker *worker)
{
  g_atomic_rc_box_release_full (worker, NULL);
}

typedef struct {
  EsWorker *worker;
  EsResponse *response;
} Delivery;

static gboolean
deliver (gpointer data)
{
  Delivery *delivery = data;

  if (g_atomic_int_get (&delivery->worker->alive))
    delivery->worker->callback (delivery->response, delivery->worker->user_data);
  else
    es_response_free (delivery->response);
  es_worker_release (delivery->worker);
  g_free (delivery);
  return G_SOURCE_REMOVE;
}

/* Finds out once whether CUDA can be used at all, for the backend choice in
 * the window (which greys CUDA out with this reason). */
static void
probe_cuda (EsWorker *worker)
{
  EsError error = { 0 };
  EsEngine *cuda;

  if (worker->probed)
    return;
  worker->probed = TRUE;
  if (!es_engine_cuda_compiled ())
    {
      worker->cuda_reason = g_strdup ("This build has no CUDA backend");
      return;
    }
  if (worker->engine && es_engine_backend (worker->engine) == ES_BACKEND_CUDA)
    {
      worker->cuda_usable = TRUE;
      return;
    }
  if (worker->engine && worker->engine_choice == ES_BACKEND_AUTO)
    {
      worker->cuda_reason = g_strdup (es_engine_cuda_reason (worker->engine));
      return;
    }
  cuda = es_engine_new (ES_BACKEND_CUDA, &error);
  worker->cuda_usable = cuda != NULL;
  if (cuda)
    es_engine_free (cuda);
  else
    worker->cuda_reason = g_strdup (error.message);
}

static gboolean
ensure_engine (EsWorker *worker, EsBackendChoice choice, EsResponse *response)
{
  EsError error = { 0 };

  if (worker->engine && worker->engine_choice == choice)
    return TRUE;
  g_clear_pointer (&worker->engine, es_engine_free);
  worker->engine = es_engine_new (choice, &error);
  if (worker->engine == NULL && choice == ES_BACKEND_CUDA)
    {
      response->notice = g_strdup_printf ("CUDA is not available (%s); using the CPU", error.message);
      es_error_clear (&error);
      worker->engine = es_engine_new (ES_BACKEND_CPU, &error);
    }
  if (worker->engine == NULL)
    {
      response->error = g_strdup_printf ("No compute backend: %s", error.message);
      return FALSE;
    }
  worker->engine_choice = choice;
  probe_cuda (worker);
  return TRUE;
}

static gboolean
same_params (const EsViewParams *a, const EsViewParams *b)
{
  return a->job.op == b->job.op && a->job.window == b->job.window
         && a->job.levels == b->job.levels && a->job.amount == b->job.amount
         && g_strcmp0 (a->job.variant, b->job.variant) == 0
         && a->range == b->range && a->units == b->units;
}

static EsLayer *
compute_item (EsWorker *worker, const EsRequest *request, const EsWorkItem *item,
              EsResponse *response, gboolean *fresh)
{
  EsViewParams params = item->params;
  EsLayer *cached = worker->cache[item->view];
  EsResult result = { 0 };
  EsError error = { 0 };
  const char *notice;
  EsLayer *layer;

  /* The CPU has one implementation per operation: a variant change there
   * must not cost a rerun. */
  if (es_engine_backend (worker->engine) != ES_BACKEND_CUDA)
    params.job.variant = NULL;

  *fresh = FALSE;
  if (cached && cached->source == request->source
      && (item->view == ES_VIEW_ORIGINAL
          || (cached->backend == request->backend && same_params (&cached->params, &params))))
    return es_layer_ref (cached);

  *fresh = TRUE;
  if (item->view == ES_VIEW_ORIGINAL)
    layer = es_layer_new_original (request->source);
  else if (es_pipeline_run (worker->engine, &request->source->image, &params, &result, &error))
    layer = es_layer_new (item->view, request->source, &params, request->backend, &result);
  else
    {
      if (response->error == NULL)
        response->error = g_strdup_printf ("%s failed: %s", es_view_title (item->view),
                                           error.message);
      es_result_clear (&result);
      return NULL;
    }

  notice = es_engine_take_notice (worker->engine);
  if (notice && response->notice == NULL)
    response->notice = g_strdup (notice);

  g_clear_pointer (&worker->cache[item->view], es_layer_unref);
  worker->cache[item->view] = es_layer_ref (layer);
  return layer;
}

static EsResponse *
response_new (EsWorker *worker, const EsRequest *request)
{
  EsResponse *response = g_new0 (EsResponse, 1);

  response->generation = request->generation;
  response->source = es_source_ref (request->source);
  return response;
}

static void
post (EsWorker *worker, EsResponse *response, gint64 start, gboolean complete)
{
  Delivery *delivery = g_new (Delivery, 1);

  response->complete = complete;
  if (worker->engine)
    {
      response->engine.description = g_strdup (es_engine_describe (worker->engine));
      response->engine.backend = es_engine_backend (worker->engine);
    }
  response->engine.cuda_usable = worker->cuda_usable;
  response->engine.cuda_reason = g_strdup (worker->cuda_reason);
  response->worker_ms = (g_get_monotonic_time () - start) / 1000.0;

  delivery->worker = g_atomic_rc_box_acquire (worker);
  delivery->response = response;
  g_main_context_invoke (worker->context, deliver, delivery);
}

static void
process (EsWorker *worker, EsRequest *request)
{
  gint64 start = g_get_monotonic_time ();
  EsResponse *response = response_new (worker, request);

  if (!ensure_engine (worker, request->backend, response))
    {
      post (worker, response, start, TRUE);
      return;
    }
  for (int i = 0; i < request->n_items; i++)
    {
      EsResponse *part = response;
      int k = part->n_layers++;

      part->layers[k] = compute_item (worker, request, &request->items[i], part, &part->fresh[k]);
      if (part->layers[k] && part->fresh[k])
        part->jobs_ms += part->layers[k]->result.timing.wall_ms;
      /* What is on screen goes out first; the histograms' jobs follow. */
      if (i + 1 == request->n_shown && i + 1 < request->n_items)
        {
          post (worker, part, start, FALSE);
          response = response_new (worker, request);
        }
    }
  post (worker, response, start, TRUE);
}

static gpointer
worker_main (gpointer data)
{
  EsWorker *worker = data;
  gboolean quit = FALSE;

#ifdef __linux__
  /* When the jobs and the main loop compete for the cores, the main loop
   * must win: this thread, and the OpenMP team it starts (threads inherit
   * it), run a little nicer. Linux keeps nice values per thread. */
  setpriority (PRIO_PROCESS, (id_t) gettid (), 5);
#endif

  while (!quit)
    {
      EsRequest *request = g_async_queue_pop (worker->queue);
      EsRequest *next;

      /* Only the newest request matters: the ones before it are stale. */
      while ((next = g_async_queue_try_pop (worker->queue)))
        {
          es_request_free (request);
          request = next;
          if (next == &quit_marker)
            break;
        }
      if (request == &quit_marker)
        break;
      process (worker, request);
      es_request_free (request);
    }

  for (int i = 0; i < ES_N_VIEWS; i++)
    g_clear_pointer (&worker->cache[i], es_layer_unref);
  g_clear_pointer (&worker->engine, es_engine_free);
  return NULL;
}

EsWorker *
es_worker_new (EsWorkerCallback callback, gpointer user_data)
{
  EsWorker *worker = g_atomic_rc_box_new0 (EsWorker);

  worker->queue = g_async_queue_new ();
  worker->context = g_main_context_ref_thread_default ();
  worker->callback = callback;
  worker->user_data = user_data;
  worker->alive = 1;
  worker->thread = g_thread_new ("es-worker", worker_main, worker);
  return worker;
}

void
es_worker_submit (EsWorker *worker, EsRequest *request)
{
  g_async_queue_push (worker->queue, request);
}

void
es_worker_free (EsWorker *worker)
{
  EsRequest *left;

  g_atomic_int_set (&worker->alive, 0);
  g_async_queue_push (worker->queue, &quit_marker);
  g_thread_join (worker->thread);
  while ((left = g_async_queue_try_pop (worker->queue)))
    es_request_free (left);
  g_async_queue_unref (worker->queue);
  g_main_context_unref (worker->context);
  g_free (worker->cuda_reason);
  es_worker_release (worker);
}
