/* The compute worker: a thread owning the EsEngine, a one-slot cache per view, newest-first, and variant comparisons. */
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
  GMutex compare_lock;
  GQueue compares;           /* CompareTask*, under compare_lock */

  /* Touched by the worker thread only. */
  EsEngine *engine;
  EsBackendChoice engine_choice;
  gboolean probed;
  gboolean cuda_usable;
  char *cuda_reason;
  EsLayer *cache[ES_N_VIEWS];
};

static EsRequest quit_marker;
/* Wakes the thread for a comparison; the comparisons wait in their own
 * queue, where a newer view request cannot drop them. */
static EsRequest compare_marker;

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

void
es_request_free (EsRequest *request)
{
  if (request == NULL || request == &quit_marker || request == &compare_marker)
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

void
es_comparison_free (EsComparison *comparison)
{
  if (comparison == NULL)
    return;
  es_source_unref (comparison->source);
  g_free (comparison->engine.description);
  g_free (comparison->engine.cuda_reason);
  free (comparison->rows);
  g_free (comparison);
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
      /* An engine made for the CPU says only that the CPU was chosen. */
      worker->cuda_reason = g_strdup (worker->engine && worker->engine_choice != ES_BACKEND_CPU
                                        ? es_engine_cuda_reason (worker->engine)
                                        : "this build has no CUDA backend");
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

/* Makes the engine for a backend choice, if it is not the one at hand.
 * *notice says when CUDA was asked for and the CPU stands in; *failure
 * when there is no engine at all. */
static gboolean
ensure_engine (EsWorker *worker, EsBackendChoice choice, char **notice, char **failure)
{
  EsError error = { 0 };

  if (worker->engine && worker->engine_choice == choice)
    return TRUE;
  g_clear_pointer (&worker->engine, es_engine_free);
  worker->engine = es_engine_new (choice, &error);
  if (worker->engine == NULL && choice == ES_BACKEND_CUDA)
    {
      *notice = g_strdup_printf ("CUDA is not available (%s); using the CPU", error.message);
      /* The backend choice greys CUDA out with this reason. */
      if (worker->probed)
        {
          worker->cuda_usable = FALSE;
          g_free (worker->cuda_reason);
          worker->cuda_reason = g_strdup (error.message);
        }
      es_error_clear (&error);
      worker->engine = es_engine_new (ES_BACKEND_CPU, &error);
    }
  if (worker->engine == NULL)
    {
      *failure = g_strdup_printf ("No compute backend: %s", error.message);
      return FALSE;
    }
  worker->engine_choice = choice;
  probe_cuda (worker);
  return TRUE;
}

static gboolean
same_params (const EsViewParams *a, const EsViewParams *b)
{
  if (a->job.op != b->job.op || g_strcmp0 (a->job.variant, b->job.variant) != 0
      || a->range != b->range || a->units != b->units)
    return FALSE;
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_job_get_param (&a->job, id) != es_job_get_param (&b->job, id))
      return FALSE;
  return TRUE;
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
fill_engine_info (EsWorker *worker, EsEngineInfo *info)
{
  /* A device error during a job turns CUDA off for the process (the
   * engine's reason says so): the backend choice must follow. */
  if (worker->cuda_usable && worker->engine && worker->engine_choice != ES_BACKEND_CPU
      && es_engine_backend (worker->engine) != ES_BACKEND_CUDA)
    {
      worker->cuda_usable = FALSE;
      g_free (worker->cuda_reason);
      worker->cuda_reason = g_strdup (es_engine_cuda_reason (worker->engine));
    }
  if (worker->engine)
    {
      info->description = g_strdup (es_engine_describe (worker->engine));
      info->backend = es_engine_backend (worker->engine);
    }
  info->cuda_usable = worker->cuda_usable;
  info->cuda_reason = g_strdup (worker->cuda_reason);
}

static void
post (EsWorker *worker, EsResponse *response, gint64 start, gboolean complete)
{
  Delivery *delivery = g_new (Delivery, 1);

  response->complete = complete;
  fill_engine_info (worker, &response->engine);
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

  if (!ensure_engine (worker, request->backend, &response->notice, &response->error))
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

/* Comparisons */

static void
compare_task_free (CompareTask *compare)
{
  g_object_unref (compare->task);
  es_source_unref (compare->source);
  g_free (compare);
}

typedef struct {
  GTask *task;
  EsCompareProgressFunc progress;
  gpointer progress_data;
  double fraction;
  char *step;
} ProgressUpdate;

static gboolean
deliver_progress (gpointer data)
{
  ProgressUpdate *update = data;

  if (!g_cancellable_is_cancelled (g_task_get_cancellable (update->task)))
    update->progress (update->fraction, update->step, update->progress_data);
  g_object_unref (update->task);
  g_free (update->step);
  g_free (update);
  return G_SOURCE_REMOVE;
}

/* On the worker thread, between two runs: report, and stop when the task
 * is cancelled or the window is going away. */
static bool
on_compare_progress (size_t done, size_t total, const char *label, void *user_data)
{
  CompareTask *compare = user_data;
  ProgressUpdate *update;

  if (!g_atomic_int_get (&compare->worker->alive)
      || g_cancellable_is_cancelled (g_task_get_cancellable (compare->task)))
    return false;
  if (compare->progress == NULL)
    return true;
  update = g_new (ProgressUpdate, 1);
  update->task = g_object_ref (compare->task);
  update->progress = compare->progress;
  update->progress_data = compare->progress_data;
  update->fraction = total ? (double) done / total : 1.0;
  update->step = g_strdup (label);
  g_main_context_invoke (g_task_get_context (compare->task), deliver_progress, update);
  return true;
}

static void
run_compare (EsWorker *worker, CompareTask *compare)
{
  g_autofree char *notice = NULL, *failure = NULL;
  EsComparison *comparison;
  EsEngine *per_gpu = NULL;
  EsError error = { 0 };

  if (!ensure_engine (worker, compare->backend, &notice, &failure))
    {
      g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", failure);
      return;
    }
  /* Variants are timed on one GPU, as `entroscope-cli bench` does: on a
   * host with several, the window's engine spreads each job over all of
   * them, and that span compares with no single GPU's copy floor. */
  if (es_engine_backend (worker->engine) == ES_BACKEND_CUDA)
    {
      per_gpu = es_compare_engine_new (ES_BACKEND_CUDA, &error);
      es_error_clear (&error);
    }
  comparison = g_new0 (EsComparison, 1);
  comparison->source = es_source_ref (compare->source);
  comparison->job = compare->job;
  comparison->repeats = compare->repeats;
  if (!es_compare_variants (per_gpu ? per_gpu : worker->engine, &compare->source->image, &compare->job,
                            compare->repeats, on_compare_progress, compare, &comparison->rows,
                            &comparison->n_rows, &comparison->floor_ms, &error))
    {
      g_clear_pointer (&per_gpu, es_engine_free);
      es_comparison_free (comparison);
      if (error.code == ES_OK)
        g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                 "The comparison was cancelled");
      else
        g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", error.message);
      return;
    }
  /* Read after the runs: a device error during them turns CUDA off. */
  fill_engine_info (worker, &comparison->engine);
  if (per_gpu)
    {
      g_free (comparison->engine.description);
      comparison->engine.description = g_strdup (es_engine_describe (per_gpu));
      es_engine_free (per_gpu);
    }
  g_task_return_pointer (compare->task, comparison, (GDestroyNotify) es_comparison_free);
}

static CompareTask *
next_compare (EsWorker *worker)
{
  CompareTask *compare;

  g_mutex_lock (&worker->compare_lock);
  compare = g_queue_pop_head (&worker->compares);
  g_mutex_unlock (&worker->compare_lock);
  return compare;
}

void
es_worker_compare (EsWorker *worker, GTask *task, EsSource *source, EsBackendChoice backend,
                   const EsJob *job, int repeats, EsCompareProgressFunc progress,
                   gpointer progress_data)
{
  CompareTask *compare = g_new0 (CompareTask, 1);

  compare->worker = worker;
  compare->task = task;
  compare->source = es_source_ref (source);
  compare->backend = backend;
  compare->job = *job;
  compare->job.variant = NULL;
  compare->repeats = repeats;
  compare->progress = progress;
  compare->progress_data = progress_data;
  g_mutex_lock (&worker->compare_lock);
  g_queue_push_tail (&worker->compares, compare);
  g_mutex_unlock (&worker->compare_lock);
  g_async_queue_push (worker->queue, &compare_marker);
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
      EsRequest *item = g_async_queue_pop (worker->queue);
      EsRequest *request = NULL;
      CompareTask *compare;

      /* Only the newest view request matters: the ones before it are
       * stale. Comparisons wait in their own queue. */
      do
        {
          if (item == &quit_marker)
            quit = TRUE;
          else if (item != &compare_marker)
            {
              es_request_free (request);
              request = item;
            }
        }
      while (!quit && (item = g_async_queue_try_pop (worker->queue)));
      if (!quit && request)
        process (worker, request);
      es_request_free (request);
      while (!quit && (compare = next_compare (worker)))
        {
          run_compare (worker, compare);
          compare_task_free (compare);
        }
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
  g_mutex_init (&worker->compare_lock);
  g_queue_init (&worker->compares);
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
  for (CompareTask *compare; (compare = next_compare (worker));)
    {
      g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                               "The window was closed");
      compare_task_free (compare);
    }
  g_mutex_clear (&worker->compare_lock);
  g_async_queue_unref (worker->queue);
  g_main_context_unref (worker->context);
  g_free (worker->cuda_reason);
  es_worker_release (worker);
}
