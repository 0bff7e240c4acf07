/* SPDX-License-Identifier: MIT */
/* EsWorker's variant comparisons: their thread, which retires the jobs thread while they are timed. */
#include "es-worker-private.h"

#include <glib/gi18n-lib.h>

void
es_worker_compare_task_free (CompareTask *compare)
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
  /* deliver_progress owns and frees the update. */
  /* cppcheck-suppress memleak */
  return true;
}

static void
run_compare (EsWorker *worker, CompareTask *compare)
{
  g_autofree char *notice = NULL, *failure = NULL;
  EsComparison *comparison;
  EsEngine *per_gpu = NULL;
  EsError error = { 0 };

  if (!es_worker_ensure_engine (worker, compare->backend, &notice, &failure))
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
                            compare->repeats, on_compare_progress, compare, &comparison->rows, &comparison->n_rows,
                            &comparison->floor_ms, &error))
    {
      g_clear_pointer (&per_gpu, es_engine_free);
      es_comparison_free (comparison);
      if (error.code == ES_OK)
        g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_CANCELLED, _ ("The comparison was cancelled"));
      else
        g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", error.message);
      return;
    }
  /* Read after the runs: a device error during them turns CUDA off. */
  es_worker_fill_engine_info (worker, &comparison->engine);
  if (per_gpu)
    {
      g_free (comparison->engine.description);
      comparison->engine.description = g_strdup (es_engine_describe (per_gpu));
      es_engine_free (per_gpu);
    }
  g_task_return_pointer (compare->task, comparison, (GDestroyNotify) es_comparison_free);
}

static gboolean
main_loop_quiet (gpointer data)
{
  GAsyncQueue *signal = data;

  g_async_queue_push (signal, GINT_TO_POINTER (1));
  return G_SOURCE_REMOVE;
}

/* Waits (a second at most) until the main loop has nothing of higher
 * priority to do than a low-priority idle: the last response is on screen
 * and the comparison's window has been drawn, so that neither competes
 * with the timed runs for the cores. */
static void
wait_for_quiet_main_loop (EsWorker *worker)
{
  GAsyncQueue *signal = g_async_queue_new ();
  GSource *source = g_idle_source_new ();

  g_source_set_priority (source, G_PRIORITY_LOW);
  g_source_set_callback (source, main_loop_quiet, g_async_queue_ref (signal), (GDestroyNotify) g_async_queue_unref);
  g_source_set_static_name (source, "[entroscope] quiet before timing");
  g_source_attach (source, worker->context);
  g_source_unref (source);
  g_async_queue_timeout_pop (signal, G_USEC_PER_SEC);
  g_async_queue_unref (signal);
}

static gpointer
compare_thread_main (gpointer data)
{
  CompareTask *compare = data;

  run_compare (compare->worker, compare);
  return NULL;
}

/* Runs comparisons until none is queued. The jobs thread ends first, after
 * its request in progress: a parallel region is as slow as its slowest
 * thread, and a second OpenMP team in the process makes every team sleep
 * between regions instead of spinning (libgomp throttles spinning when
 * there are more OpenMP threads than cores), which added 0.3 ms to each
 * 0.5 ms run in the window. Each comparison then runs on a new thread of
 * normal priority, whose team goes with it. Returns FALSE on quit. */
static gboolean
run_batch (EsWorker *worker, CompareTask *compare)
{
  GThread *jobs;

  g_mutex_lock (&worker->lock);
  worker->retire = TRUE;
  g_cond_broadcast (&worker->wake);
  jobs = g_steal_pointer (&worker->jobs_thread);
  g_mutex_unlock (&worker->lock);
  if (jobs)
    g_thread_join (jobs);

  while (compare && compare != (gpointer) &es_worker_quit_marker)
    {
      if (g_atomic_int_get (&worker->alive))
        {
          wait_for_quiet_main_loop (worker);
          g_thread_join (g_thread_new ("es-compare", compare_thread_main, compare));
        }
      else
        g_task_return_new_error (compare->task, G_IO_ERROR, G_IO_ERROR_CANCELLED, _ ("The window was closed"));
      es_worker_compare_task_free (compare);
      compare = g_async_queue_try_pop (worker->compares);
    }

  g_mutex_lock (&worker->lock);
  es_worker_start_jobs_thread (worker);
  g_mutex_unlock (&worker->lock);
  return compare != (gpointer) &es_worker_quit_marker;
}

/* Started by es_worker_new on the main thread, so that the threads it
 * starts for comparisons have the main thread's priority. */
gpointer
es_worker_compares_main (gpointer data)
{
  EsWorker *worker = data;
  CompareTask *compare;

  while ((compare = g_async_queue_pop (worker->compares)) != (gpointer) &es_worker_quit_marker)
    if (!run_batch (worker, compare))
      break;
  return NULL;
}

void
es_worker_compare (EsWorker *worker, GTask *task, EsSource *source, EsBackendChoice backend, const EsJob *job,
                   int repeats, EsCompareProgressFunc progress, gpointer progress_data)
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
  g_async_queue_push (worker->compares, compare);
  /* The worker's thread owns the queued compare and frees it. */
  /* cppcheck-suppress memleak */
}
