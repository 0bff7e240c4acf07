/* SPDX-License-Identifier: MIT */
/* EsWindow: the timings card's figures: the median of the last runs of the job on screen, and how long
 * opening the image on screen took. */
#include "es-window-private.h"

#include <stdlib.h>

#include "es-debug.h"

/* Timings: the median of the last runs of the job on screen */

typedef struct {
  guint64 source_serial;
  EsView view;
  EsJob job;
  EsBackendChoice backend; /* that ran it */
  const char *variant;     /* that ran (static) */
  EsTiming runs[ES_WINDOW_TIMING_RUNS];
  int n_runs, next;
} TimingRecord;

/* The jobs whose runs are kept; the oldest is forgotten first. */
#define TIMING_RECORDS 64

static gboolean
record_matches (const TimingRecord *record, const EsLayer *layer)
{
  if (record->source_serial != layer->source->serial || record->view != layer->view
      || record->backend != layer->result.timing.backend
      || g_strcmp0 (record->variant, layer->result.timing.variant) != 0 || record->job.op != layer->job.op)
    return FALSE;
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_job_get_param (&record->job, id) != es_job_get_param (&layer->job, id))
      return FALSE;
  return TRUE;
}

static TimingRecord *
find_record (EsWindow *self, const EsLayer *layer)
{
  for (GList *l = self->timing_history.head; l; l = l->next)
    if (record_matches (l->data, layer))
      return l->data;
  return NULL;
}

void
_es_window_record_timing (EsWindow *self, const EsLayer *layer)
{
  TimingRecord *record = find_record (self, layer);

  if (layer->view == ES_VIEW_ORIGINAL)
    return;
  if (record)
    g_queue_remove (&self->timing_history, record);
  else
    {
      record = g_new0 (TimingRecord, 1);
      record->source_serial = layer->source->serial;
      record->view = layer->view;
      record->job = layer->job;
      record->backend = layer->result.timing.backend;
      record->variant = layer->result.timing.variant;
    }
  record->runs[record->next] = layer->result.timing;
  record->next = (record->next + 1) % ES_WINDOW_TIMING_RUNS;
  record->n_runs = MIN (record->n_runs + 1, ES_WINDOW_TIMING_RUNS);
  g_queue_push_head (&self->timing_history, record);
  while (g_queue_get_length (&self->timing_history) > TIMING_RECORDS)
    g_free (g_queue_pop_tail (&self->timing_history));
}

/* Another image is on screen: no figure of the last one applies. */
void
_es_window_forget_timings (EsWindow *self)
{
  g_queue_clear_full (&self->timing_history, g_free);
  if (self->timings)
    es_timings_set_open (self->timings, NULL, NULL);
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median_of (double *values, int n)
{
  qsort (values, n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* The median of each figure over the job's last runs; the layer's own
 * timing when it has none (*n_runs 0: the original, which runs nothing). */
void
_es_window_median_timing (EsWindow *self, const EsLayer *layer, EsTiming *median, int *n_runs)
{
  TimingRecord *record = find_record (self, layer);
  double upload[ES_WINDOW_TIMING_RUNS], kernel[ES_WINDOW_TIMING_RUNS];
  double download[ES_WINDOW_TIMING_RUNS], wall[ES_WINDOW_TIMING_RUNS];
  int n;

  *median = layer->result.timing;
  *n_runs = 0;
  if (record == NULL)
    return;
  n = record->n_runs;
  for (int i = 0; i < n; i++)
    {
      upload[i] = record->runs[i].upload_ms;
      kernel[i] = record->runs[i].kernel_ms;
      download[i] = record->runs[i].download_ms;
      wall[i] = record->runs[i].wall_ms;
    }
  median->upload_ms = median_of (upload, n);
  median->kernel_ms = median_of (kernel, n);
  median->download_ms = median_of (download, n);
  median->wall_ms = median_of (wall, n);
  /* The bandwidth beside the median time is the model's bytes over it. */
  es_timing_update_rates (median);
  *n_runs = n;
}

char *
_es_window_overlay_text (EsWindow *self, const EsLayer *layer)
{
  EsTiming median;
  int n_runs;

  _es_window_median_timing (self, layer, &median, &n_runs);
  return es_timings_overlay_text (layer, &median);
}

/* Opening: from the request to the first frame painted with the image */

void
_es_window_open_decoded (EsWindow *self, const EsSource *source, gint64 requested, double decode_ms)
{
  self->opening.source_serial = source->serial;
  self->opening.requested = requested;
  self->opening.decode_ms = decode_ms;
  self->opening.compute_ms = -1;
}

static gboolean
is_serial (const EsSource *source, guint64 serial)
{
  return source != NULL && source->serial == serial;
}

/* Whether the opening's image is on screen; an opening whose image is
 * neither on screen nor on its way there (another replaced it before it
 * was shown, the user cancelled it, its views failed) is dropped. */
static gboolean
open_on_screen (EsWindow *self)
{
  guint64 serial = self->opening.source_serial;

  if (serial == 0)
    return FALSE;
  if (is_serial (self->source, serial))
    return TRUE;
  if (!is_serial (self->pending_source, serial))
    self->opening.source_serial = 0;
  return FALSE;
}

gboolean
_es_window_open_waits_for_paint (EsWindow *self)
{
  if (!open_on_screen (self))
    return FALSE;
  /* The response that put the image on screen has just been taken in: its
   * worker time is the opening's compute, whatever comes before the paint. */
  if (self->opening.compute_ms < 0)
    self->opening.compute_ms = self->last_worker_ms;
  return TRUE;
}

void
_es_window_open_painted (EsWindow *self, gint64 now)
{
  EsView views[ES_CANVAS_MAX_PANES];
  int n = _es_window_get_views (self, views);
  EsOpenTiming open = { 0 };

  if (!open_on_screen (self) || self->opening.compute_ms < 0)
    return;
  open.total_ms = (now - self->opening.requested) / 1000.0;
  open.decode_ms = self->opening.decode_ms;
  open.compute_ms = self->opening.compute_ms;
  for (int i = 0; i < n; i++)
    open.heatmap |= es_view_is_heatmap (views[i]);
  self->opening.source_serial = 0;
  es_timings_set_open (self->timings, self->source->name, &open);
  es_debug_log ("open %s: %.1f ms from the request to the first frame with its %s "
                "(read and decode %.1f ms, compute %.1f ms)",
                self->source->name, open.total_ms, open.heatmap ? "heatmap" : "view", open.decode_ms, open.compute_ms);
}
