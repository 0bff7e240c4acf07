/* SPDX-License-Identifier: MIT */
/* The compute worker: threads owning the EsEngine, a one-slot cache per view, newest-first with cancellation (comparisons: es-worker-compare.c). */
#include "es-worker-private.h"

#include "es-debug.h"

#ifdef __linux__
#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>
#include <glib/gi18n-lib.h>
#endif

EsRequest es_worker_quit_marker;

void
es_request_free (EsRequest *request)
{
  if (request == NULL || request == &es_worker_quit_marker)
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
    {
      if (response->layers[i])
        es_layer_unref (response->layers[i]);
      es_rendering_clear (&response->renderings[i]);
    }
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
                                        : _ ("this build has no CUDA backend"));
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
gboolean
es_worker_ensure_engine (EsWorker *worker, EsBackendChoice choice, char **notice, char **failure)
{
  EsError error = { 0 };

  if (worker->engine && worker->engine_choice == choice)
    return TRUE;
  g_clear_pointer (&worker->engine, es_engine_free);
  worker->engine = es_engine_new (choice, &error);
  if (worker->engine == NULL && choice == ES_BACKEND_CUDA)
    {
      *notice = g_strdup_printf (_ ("CUDA is not available (%s); using the CPU"), error.message);
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
      *failure = g_strdup_printf (_ ("No compute backend: %s"), error.message);
      return FALSE;
    }
  worker->engine_choice = choice;
  probe_cuda (worker);
  return TRUE;
}

/* The window sets only the fields its choices use (es_sidebar_definition_get);
 * the mask and footprint are the same when they are the same images. */
static gboolean
same_definition (const EsEntropyDefinition *a, const EsEntropyDefinition *b)
{
  return a->shape == b->shape && a->height == b->height && a->width == b->width && a->radius == b->radius
         && a->footprint == b->footprint && a->border == b->border && a->border_value == b->border_value
         && a->binning == b->binning && a->range_lo == b->range_lo && a->range_hi == b->range_hi
         && a->normalized == b->normalized && a->mask == b->mask;
}

static gboolean
same_job (const EsJob *a, const EsJob *b, gboolean ignore_variant)
{
  if (a->op != b->op || (!ignore_variant && g_strcmp0 (a->variant, b->variant) != 0))
    return FALSE;
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_job_get_param (a, id) != es_job_get_param (b, id))
      return FALSE;
  return same_definition (&a->definition, &b->definition);
}

/* Whether a request has a job (view, image, backend, job) among its items. */
static gboolean
request_needs (const EsRequest *request, const EsWorkItem *item, const EsSource *source, EsBackendChoice backend,
               gboolean on_cpu)
{
  if (request->source != source || request->backend != backend)
    return FALSE;
  for (int i = 0; i < request->n_items; i++)
    if (request->items[i].view == item->view
        && (item->view == ES_VIEW_ORIGINAL || same_job (&request->items[i].job, &item->job, on_cpu)))
      return TRUE;
  return FALSE;
}

/* Whether the worker must stop working on this request: a newer one came,
 * or it was cancelled, or the worker is going away. Under lock. */
static gboolean
superseded_locked (EsWorker *worker, const EsRequest *request)
{
  return worker->quit || worker->running_cancelled || worker->latest > request->generation;
}

/* The job as the worker runs it: the CPU has one implementation per
 * operation, so a variant change there must not cost a rerun. */
static void
normalize_job (EsWorker *worker, const EsWorkItem *item, EsJob *job)
{
  *job = item->job;
  if (es_engine_backend (worker->engine) != ES_BACKEND_CUDA)
    job->variant = NULL;
}

/* Whether a run asked for hardware counters: it has them, or says why not. */
static gboolean
counters_asked (const EsMetrics *metrics)
{
  return metrics->counters.measured || metrics->counters_note[0] != '\0';
}

static EsLayer *
cached_layer (EsWorker *worker, const EsRequest *request, const EsWorkItem *item)
{
  EsLayer *cached = worker->cache[item->view];
  EsJob job;

  normalize_job (worker, item, &job);
  if (cached && cached->source == request->source
      && (item->view == ES_VIEW_ORIGINAL
          || (cached->backend == request->backend && same_job (&cached->job, &job, FALSE)
              && (!request->counters || counters_asked (&cached->result.timing.metrics)))))
    return cached;
  return NULL;
}

/* On computing threads, often OpenMP ones: keep the largest fraction. */
static void
on_job_progress (double done, void *user_data)
{
  EsWorker *worker = user_data;
  int value = (int) (CLAMP (done, 0.0, 1.0) * PROGRESS_SCALE);
  int old;

  do
    old = g_atomic_int_get (&worker->progress);
  while (value > old && !g_atomic_int_compare_and_exchange (&worker->progress, old, value));
}

/* Runs one item, or takes it from the cache. *cancelled says that it
 * stopped because of es_control_cancel (the request is then dropped). */
static EsLayer *
compute_item (EsWorker *worker, const EsRequest *request, const EsWorkItem *item, gboolean shown, EsResponse *response,
              gboolean *fresh, gboolean *cancelled)
{
  EsLayer *cached = cached_layer (worker, request, item);
  EsResult result = { 0 };
  EsError error = { 0 };
  EsViewParams params;
  const char *notice;
  EsLayer *layer;
  EsJob job;
  gboolean ok;
  gint64 started;

  *fresh = FALSE;
  *cancelled = FALSE;
  if (cached)
    return es_layer_ref (cached);

  *fresh = TRUE;
  if (item->view == ES_VIEW_ORIGINAL)
    {
      layer = es_layer_new_original (request->source);
      /* Its mips are made here, off the main thread, which draws it. */
      es_layer_ensure_mips (layer);
    }
  else
    {
      normalize_job (worker, item, &job);
      es_layer_job_params (&job, &params);

      /* Published under the lock that es_worker_submit and es_worker_cancel
       * take: a cancel either sees this job or is seen before it starts. */
      g_mutex_lock (&worker->lock);
      if (superseded_locked (worker, request))
        {
          g_mutex_unlock (&worker->lock);
          *cancelled = TRUE;
          return NULL;
        }
      es_control_reset (worker->control);
      g_atomic_int_set (&worker->progress, 0);
      worker->job_running = TRUE;
      worker->job_item = *item;
      worker->job_item.job = job;
      worker->job_source = request->source;
      worker->job_backend = request->backend;
      worker->job_on_cpu = es_engine_backend (worker->engine) != ES_BACKEND_CUDA;
      worker->job_shown = shown;
      g_mutex_unlock (&worker->lock);

      /* The CPU writes into plain memory: a gone result's buffer saves
       * mapping fresh pages (CUDA allocates page-locked memory itself). */
      if (es_engine_backend (worker->engine) == ES_BACKEND_CPU)
        es_layer_prepare_values (&result.values, request->source->image.width, request->source->image.height,
                                 es_job_output_format (&job, request->source->image.format));
      started = g_get_monotonic_time ();
      if (worker->job_hook)
        worker->job_hook (&worker->job_item, worker->control, worker->job_hook_data);
      es_engine_set_counters (worker->engine, request->counters);
      ok = es_pipeline_run_controlled (worker->engine, &request->source->image, &params, &result, worker->control,
                                       &error);

      g_mutex_lock (&worker->lock);
      worker->job_running = FALSE;
      if (shown)
        worker->shown_done++;
      g_mutex_unlock (&worker->lock);

      if (!ok && (error.code == ES_ERROR_CANCELLED || es_control_cancelled (worker->control)))
        {
          g_autofree char *what = es_job_describe_params (&job, " · ");

          es_debug_log ("%s, %s: cancelled after %.1f ms", es_view_title (item->view), what,
                        (g_get_monotonic_time () - started) / 1000.0);
          es_layer_recycle_values (&result.values);
          es_result_clear (&result);
          *cancelled = TRUE;
          return NULL;
        }
      if (!ok)
        {
          if (response->error == NULL)
            response->error = g_strdup_printf (_ ("%s failed: %s"), es_view_title (item->view), error.message);
          es_result_clear (&result);
          return NULL;
        }
      layer = es_layer_new (item->view, request->source, &job, request->backend, &result);
    }

  notice = es_engine_take_notice (worker->engine);
  if (notice && response->notice == NULL)
    response->notice = g_strdup (notice);

  g_clear_pointer (&worker->cache[item->view], es_layer_unref);
  worker->cache[item->view] = es_layer_ref (layer);
  /* The other views' results of another image can never be taken again:
   * they go, with their memory, once this image has a result. */
  for (int view = 0; view < ES_N_VIEWS; view++)
    if (worker->cache[view] && worker->cache[view]->source != request->source)
      g_clear_pointer (&worker->cache[view], es_layer_unref);
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

void
es_worker_fill_engine_info (EsWorker *worker, EsEngineInfo *info)
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

/* Responses always arrive from the main loop, never inside the call that
 * made them (es_worker_cancel runs on the main thread). */
static void
deliver_later (EsWorker *worker, EsResponse *response)
{
  Delivery *delivery = g_new (Delivery, 1);
  GSource *source = g_idle_source_new ();

  delivery->worker = g_atomic_rc_box_acquire (worker);
  delivery->response = response;
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, deliver, delivery, NULL);
  g_source_set_static_name (source, "[entroscope] worker response");
  g_source_attach (source, worker->context);
  g_source_unref (source);
  /* deliver owns and frees the delivery. */
  /* cppcheck-suppress memleak */
}

static void
post (EsWorker *worker, EsResponse *response, gint64 start, gboolean complete)
{
  response->complete = complete;
  es_worker_fill_engine_info (worker, &response->engine);
  response->worker_ms = (g_get_monotonic_time () - start) / 1000.0;
  deliver_later (worker, response);
}

static void
post_cancelled (EsWorker *worker, guint64 generation, EsSource *source)
{
  EsResponse *response = g_new0 (EsResponse, 1);

  response->generation = generation;
  response->source = es_source_ref (source);
  response->complete = TRUE;
  response->cancelled = TRUE;
  deliver_later (worker, response);
}

/* Colours and scales what the item's pane will show of layer, here rather
 * than on the main thread: at 4096² and more this is the longest step
 * between a result and its frame. A volume's layer is shown a plane at a
 * time, by a layer made on the main thread: the canvas renders that. */
static void
render_viewport (const EsRequest *request, const EsWorkItem *item, const EsLayer *layer, EsRendering *rendering)
{
  EsColorScale scale;

  if (item->viewport.zoom <= 0 || es_image_planes (&layer->result.values) > 1)
    return;
  es_layer_display_scale (layer, &request->display, &scale);
  es_layer_render_viewport (layer, &scale, &item->viewport, TRUE, rendering);
}

/* The longest the side panel's jobs wait for the frame that shows the
 * views on screen: a slow frame, never a window that paints nothing. */
#define PAINT_WAIT_MS 150

/* Waits until the window has painted the views on screen of request, a
 * newer request came, or PAINT_WAIT_MS passed: the two cores are the
 * frame's while it draws the new views (at 4096², its layout and paint
 * take tens of milliseconds, and the histograms' jobs would run on both
 * cores beside it). */
static void
wait_for_paint (EsWorker *worker, const EsRequest *request)
{
  gint64 deadline = g_get_monotonic_time () + PAINT_WAIT_MS * G_TIME_SPAN_MILLISECOND;

  g_mutex_lock (&worker->lock);
  while (!superseded_locked (worker, request) && worker->painted < request->generation)
    if (!g_cond_wait_until (&worker->wake, &worker->lock, deadline))
      break;
  g_mutex_unlock (&worker->lock);
}

void
es_worker_shown_painted (EsWorker *worker, guint64 generation)
{
  g_return_if_fail (worker != NULL);

  g_mutex_lock (&worker->lock);
  worker->painted = MAX (worker->painted, generation);
  g_cond_broadcast (&worker->wake);
  g_mutex_unlock (&worker->lock);
}

typedef struct {
  EsWorker *worker;
  const EsRequest *request;
} StockRequest;

static gboolean
request_superseded (gpointer data)
{
  StockRequest *stock = data;
  gboolean superseded;

  g_mutex_lock (&stock->worker->lock);
  superseded = superseded_locked (stock->worker, stock->request);
  g_mutex_unlock (&stock->worker->lock);
  return superseded;
}

/* After an image's first complete answer, while the worker has nothing
 * else to do: the spare buffers that the first change will take, mapped
 * now. Without them, the first change after opening a 4096² image wrote
 * its result and mips into fresh pages, and the engine and the layer took
 * 180 and 37 ms where the next change took 95 and 9. */
static void
stock_spares (EsWorker *worker, const EsRequest *request)
{
  StockRequest stock = { worker, request };

  /* A request without an image asks for the engine alone. */
  if (request->source == NULL || worker->stocked_serial == request->source->serial)
    return;
  worker->stocked_serial = request->source->serial;
  for (int i = 0; i < request->n_shown; i++)
    if (worker->cache[request->items[i].view] && worker->cache[request->items[i].view]->source == request->source)
      es_layer_stock_spares (worker->cache[request->items[i].view], request_superseded, &stock);
}

/* A request: the views on screen first, in a response of their own, then
 * the rest (the side panel's histograms). A request that a newer one
 * supersedes stops between jobs, or within its running job when the newer
 * one does not need it, and is never answered. */
static void
process (EsWorker *worker, EsRequest *request)
{
  gint64 start = g_get_monotonic_time ();
  EsResponse *response = response_new (worker, request);
  gboolean stopped = FALSE, cancelled = FALSE;
  int shown_total = 0;

  if (!es_worker_ensure_engine (worker, request->backend, &response->notice, &response->error))
    {
      post (worker, response, start, TRUE);
      return;
    }
  for (int i = 0; i < request->n_shown; i++)
    shown_total += cached_layer (worker, request, &request->items[i]) == NULL;
  g_mutex_lock (&worker->lock);
  worker->shown_done = 0;
  worker->shown_total = shown_total;
  g_mutex_unlock (&worker->lock);

  for (int i = 0; i < request->n_items && !stopped; i++)
    {
      EsResponse *part = response;
      int k = part->n_layers;
      gboolean job_cancelled;

      part->layers[k] = compute_item (worker, request, &request->items[i], i < request->n_shown, part, &part->fresh[k],
                                      &job_cancelled);
      part->n_layers++;
      if (part->layers[k] && part->fresh[k])
        part->jobs_ms += part->layers[k]->result.timing.wall_ms;
      if (part->layers[k])
        render_viewport (request, &request->items[i], part->layers[k], &part->renderings[k]);

      g_mutex_lock (&worker->lock);
      stopped = job_cancelled || superseded_locked (worker, request);
      cancelled = worker->running_cancelled && !worker->quit;
      g_mutex_unlock (&worker->lock);
      /* What is on screen goes out first; the histograms' jobs follow. */
      if (!stopped && i + 1 == request->n_shown && i + 1 < request->n_items)
        {
          post (worker, part, start, FALSE);
          response = response_new (worker, request);
          wait_for_paint (worker, request);
        }
    }
  if (!stopped)
    {
      post (worker, response, start, TRUE);
      stock_spares (worker, request);
      return;
    }
  es_response_free (response);
  if (cancelled)
    post_cancelled (worker, request->generation, request->source);
}

static gpointer
jobs_main (gpointer data)
{
  EsWorker *worker = data;

#ifdef __linux__
  /* When the jobs and the main loop compete for the cores, the main loop
   * must win: this thread, and the OpenMP team it starts (threads inherit
   * it), run a little nicer than the main loop, whatever nice value the
   * window was started with (an absolute value would, for a privileged
   * process started nicer than it, put the jobs above the main loop).
   * Linux keeps nice values per thread. It cannot go back (raising a
   * priority needs a privilege): comparisons run on another thread. */
  {
    int nice_value;

    errno = 0;
    nice_value = getpriority (PRIO_PROCESS, (id_t) gettid ());
    if (errno == 0)
      setpriority (PRIO_PROCESS, (id_t) gettid (), MIN (nice_value + 5, 19));
  }
#endif

  g_mutex_lock (&worker->lock);
  for (;;)
    {
      EsRequest *request;

      while (!worker->quit && !worker->retire && worker->pending == NULL)
        g_cond_wait (&worker->wake, &worker->lock);
      if (worker->quit || worker->retire)
        break;

      /* Only the newest view request matters. */
      request = g_steal_pointer (&worker->pending);
      worker->running = request->generation;
      worker->running_cancelled = FALSE;
      g_mutex_unlock (&worker->lock);
      process (worker, request);
      es_request_free (request);
      g_mutex_lock (&worker->lock);
      worker->running = 0;
      worker->running_cancelled = FALSE;
    }
  g_mutex_unlock (&worker->lock);
  return NULL;
}

/* Under lock. */
void
es_worker_start_jobs_thread (EsWorker *worker)
{
  worker->retire = FALSE;
  if (!worker->quit && worker->jobs_thread == NULL)
    worker->jobs_thread = g_thread_new ("es-jobs", jobs_main, worker);
}

EsWorker *
es_worker_new (EsWorkerCallback callback, gpointer user_data)
{
  EsWorker *worker = g_atomic_rc_box_new0 (EsWorker);

  worker->context = g_main_context_ref_thread_default ();
  worker->callback = callback;
  worker->user_data = user_data;
  worker->alive = 1;
  g_mutex_init (&worker->lock);
  g_cond_init (&worker->wake);
  worker->control = es_control_new (on_job_progress, worker);
  worker->compares = g_async_queue_new ();
  g_mutex_lock (&worker->lock);
  es_worker_start_jobs_thread (worker);
  g_mutex_unlock (&worker->lock);
  worker->compare_thread = g_thread_new ("es-compares", es_worker_compares_main, worker);
  return worker;
}

void
es_worker_submit (EsWorker *worker, EsRequest *request)
{
  g_return_if_fail (worker != NULL);
  g_return_if_fail (request != NULL);

  g_mutex_lock (&worker->lock);
  g_warn_if_fail (request->generation > worker->latest);
  es_request_free (worker->pending);
  worker->pending = request;
  worker->latest = request->generation;
  /* The running job goes on only if the new request needs it: its result
   * then comes from the cache. */
  if (worker->job_running
      && !request_needs (request, &worker->job_item, worker->job_source, worker->job_backend, worker->job_on_cpu))
    es_control_cancel (worker->control);
  g_cond_signal (&worker->wake);
  g_mutex_unlock (&worker->lock);
}

void
es_worker_cancel (EsWorker *worker, guint64 generation)
{
  EsRequest *dropped = NULL;

  g_return_if_fail (worker != NULL);

  g_mutex_lock (&worker->lock);
  if (worker->pending && worker->pending->generation == generation)
    dropped = g_steal_pointer (&worker->pending);
  else if (worker->running == generation)
    {
      worker->running_cancelled = TRUE;
      if (worker->job_running)
        es_control_cancel (worker->control);
      /* It may be waiting for the views' frame (wait_for_paint). */
      g_cond_broadcast (&worker->wake);
    }
  g_mutex_unlock (&worker->lock);
  if (dropped)
    {
      post_cancelled (worker, dropped->generation, dropped->source);
      es_request_free (dropped);
    }
}

double
es_worker_get_progress (EsWorker *worker, guint64 generation)
{
  double fraction = -1;

  g_return_val_if_fail (worker != NULL, -1);

  g_mutex_lock (&worker->lock);
  if (worker->running == generation && generation != 0)
    {
      double done = worker->shown_done;

      if (worker->job_running && worker->job_shown)
        done += (double) g_atomic_int_get (&worker->progress) / PROGRESS_SCALE;
      fraction = worker->shown_total > 0 ? MIN (done / worker->shown_total, 1.0) : 1.0;
    }
  g_mutex_unlock (&worker->lock);
  return fraction;
}

void
es_worker_set_job_hook (EsWorker *worker, EsWorkerJobHook hook, gpointer user_data)
{
  g_return_if_fail (worker != NULL);

  g_mutex_lock (&worker->lock);
  worker->job_hook = hook;
  worker->job_hook_data = user_data;
  g_mutex_unlock (&worker->lock);
}

void
es_worker_free (EsWorker *worker)
{
  CompareTask *compare;
  GThread *jobs;

  g_atomic_int_set (&worker->alive, 0);
  g_mutex_lock (&worker->lock);
  worker->quit = TRUE;
  if (worker->job_running)
    es_control_cancel (worker->control);
  g_cond_broadcast (&worker->wake);
  g_mutex_unlock (&worker->lock);
  /* Comparisons queued before this one return cancelled, at once. */
  g_async_queue_push (worker->compares, &es_worker_quit_marker);
  g_thread_join (worker->compare_thread);
  g_mutex_lock (&worker->lock);
  jobs = g_steal_pointer (&worker->jobs_thread);
  g_mutex_unlock (&worker->lock);
  if (jobs)
    g_thread_join (jobs);

  g_clear_pointer (&worker->pending, es_request_free);
  while ((compare = g_async_queue_try_pop (worker->compares)))
    {
      g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_CANCELLED, _ ("The window was closed"));
      es_worker_compare_task_free (compare);
    }
  for (int i = 0; i < ES_N_VIEWS; i++)
    g_clear_pointer (&worker->cache[i], es_layer_unref);
  g_clear_pointer (&worker->engine, es_engine_free);
  g_async_queue_unref (worker->compares);
  es_control_free (worker->control);
  g_cond_clear (&worker->wake);
  g_mutex_clear (&worker->lock);
  g_main_context_unref (worker->context);
  g_free (worker->cuda_reason);
  es_worker_release (worker);
}
