/* SPDX-License-Identifier: MIT */
/* EsWindow: busy work, the progress card over the canvas while a long job runs, and cancelling it
 * (Escape, Cancel); the accessors of its state. */
#include "es-window-private.h"

#include <glib/gi18n-lib.h>

/* Busy work: loading, computing the views, exporting, copying, comparing. */

/* The views on screen are older than the settings and a result is coming. */
static gboolean
view_behind (EsWindow *self)
{
  return (self->source || self->pending_source) && self->generation > self->answered_generation
         && self->generation > self->shown_generation;
}

/* Work the user waits for in this window (comparisons have their own). */
gboolean
_es_window_waiting (EsWindow *self)
{
  return self->loading_name || self->pending_source || view_behind (self) || self->tasks > 0;
}

/* What Escape and the overlay's Cancel button stop. */
gboolean
_es_window_cancellable_work (EsWindow *self)
{
  return self->loading_name || self->pending_source || view_behind (self);
}

void
_es_window_update_busy (EsWindow *self)
{
  gboolean busy = _es_window_waiting (self) || self->comparisons > 0 || self->generation > self->answered_generation;

  if (self->spinner == NULL) /* disposed */
    return;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.cancel", _es_window_cancellable_work (self));
  _es_window_update_progress (self);
  if (busy != self->busy)
    {
      self->busy = busy;
      g_object_notify (G_OBJECT (self), "busy");
    }
}

static void
on_task_done (GTask *task, GParamSpec *pspec, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));

  if (g_object_get_data (G_OBJECT (task), "es-comparison"))
    self->comparisons--;
  else
    self->tasks--;
  _es_window_update_busy (self);
}

void
_es_window_track_task (EsWindow *self, GTask *task, gboolean comparison)
{
  if (comparison)
    {
      self->comparisons++;
      g_object_set_data (G_OBJECT (task), "es-comparison", GINT_TO_POINTER (1));
    }
  else
    self->tasks++;
  _es_window_update_busy (self);
  g_signal_connect_object (task, "notify::completed", G_CALLBACK (on_task_done), self, 0);
}

/* Progress and cancel */

static int
n_views (EsWindow *self)
{
  EsView views[ES_CANVAS_MAX_PANES];

  return _es_window_get_views (self, views);
}

/* "Computing Entropy", "Opening “photo.png”"; and the job in words. */
static void
describe_work (EsWindow *self, char **title, char **detail)
{
  EsView views[ES_CANVAS_MAX_PANES];
  EsView active = es_window_get_active_view (self);
  EsJob job;
  int n = _es_window_get_views (self, views);

  if (self->loading_name || self->pending_source)
    {
      *title = g_strdup_printf (_ ("Opening “%s”"),
                                self->loading_name ? self->loading_name : self->pending_source->name);
      *detail = self->loading_name ? g_strdup (_ ("Reading the file"))
                : n > 1            ? g_strdup (_ ("Computing the grid"))
                                   : g_strdup_printf (_ ("Computing %s"), es_view_title (active));
      return;
    }
  *title = n > 1 ? g_strdup (_ ("Computing the Grid")) : g_strdup_printf (_ ("Computing %s"), es_view_title (active));
  es_window_get_view_job (self, active, &job);
  *detail = es_view_get_op (active, &job.op) ? es_job_describe_params (&job, " · ") : g_strdup ("");
}

static void
show_progress (EsWindow *self, gboolean show)
{
  if (show)
    {
      g_autofree char *title = NULL, *detail = NULL;

      /* Opening goes from reading the file to computing its views. */
      describe_work (self, &title, &detail);
      gtk_label_set_label (self->progress_title, title);
      gtk_label_set_label (self->progress_detail, detail);
      gtk_widget_set_visible (GTK_WIDGET (self->progress_detail), *detail != '\0');
    }
  if (gtk_revealer_get_reveal_child (self->progress_revealer) == show)
    return;
  if (show)
    self->progress_fraction = -2; /* nothing on the bar yet */
  gtk_widget_set_visible (GTK_WIDGET (self->progress_revealer), TRUE);
  gtk_revealer_set_reveal_child (self->progress_revealer, show);
}

/* While work is waited for, about 30 times a second: the worker's progress
 * on the bar, once the work has taken longer than the delay. */
static gboolean
progress_tick (gpointer data)
{
  EsWindow *self = data;
  gint64 now = g_get_monotonic_time ();
  double elapsed_ms = (now - self->waiting_since) / 1000.0;
  gboolean overlay = _es_window_cancellable_work (self) && elapsed_ms >= self->progress_delay_ms;
  double fraction;

  g_assert (ES_IS_WINDOW (self));
  if (!_es_window_waiting (self))
    {
      self->progress_tick = 0;
      self->waiting_since = 0;
      show_progress (self, FALSE);
      gtk_widget_set_visible (GTK_WIDGET (self->spinner), FALSE);
      gtk_spinner_set_spinning (self->spinner, FALSE);
      return G_SOURCE_REMOVE;
    }

  show_progress (self, overlay);
  /* The spinner stands for work without the overlay (exports, copies),
   * and only for work that lasts: short jobs must not animate anything. */
  gtk_spinner_set_spinning (self->spinner, !overlay && elapsed_ms >= self->progress_delay_ms);
  gtk_widget_set_visible (GTK_WIDGET (self->spinner), !overlay && elapsed_ms >= self->progress_delay_ms);
  if (!overlay)
    return G_SOURCE_CONTINUE;

  fraction = self->loading_name ? -1 : es_worker_get_progress (self->worker, self->generation);
  if (fraction < 0)
    {
      /* Reading the file, or the worker is finishing something else. */
      gtk_progress_bar_pulse (self->progress_bar);
      gtk_progress_bar_set_text (self->progress_bar, self->loading_name ? _ ("Reading…") : _ ("Waiting…"));
      self->progress_fraction = -1;
    }
  else if (fabs (fraction - self->progress_fraction) >= 0.005)
    {
      char text[16];

      /* Whole percents, so that the bar redraws only when it moves. */
      g_snprintf (text, sizeof text, "%d %%", (int) floor (fraction * 100));
      gtk_progress_bar_set_fraction (self->progress_bar, fraction);
      gtk_progress_bar_set_text (self->progress_bar, text);
      self->progress_fraction = fraction;
    }
  return G_SOURCE_CONTINUE;
}

void
_es_window_update_progress (EsWindow *self)
{
  if (!_es_window_waiting (self) || self->progress_tick)
    {
      if (!_es_window_waiting (self) && self->progress_tick)
        {
          g_clear_handle_id (&self->progress_tick, g_source_remove);
          progress_tick (self);
        }
      return;
    }
  self->waiting_since = g_get_monotonic_time ();
  self->progress_tick = g_timeout_add_full (G_PRIORITY_DEFAULT, 33, progress_tick, self, NULL);
  g_source_set_static_name (g_main_context_find_source_by_id (NULL, self->progress_tick), "[entroscope] progress");
  if (self->progress_delay_ms == 0)
    progress_tick (self);
}

void
_es_window_cancel_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  g_autofree char *title = NULL, *detail = NULL, *message = NULL;

  g_assert (ES_IS_WINDOW (self));
  if (!_es_window_cancellable_work (self))
    return;

  describe_work (self, &title, &detail);
  if (self->loading_name || self->pending_source)
    message = g_strdup_printf (_ ("Cancelled opening “%s”"),
                               self->loading_name ? self->loading_name : self->pending_source->name);
  else
    message = g_strdup_printf (_ ("Cancelled: %s%s%s"),
                               n_views (self) > 1 ? _ ("the grid") : es_view_title (es_window_get_active_view (self)),
                               *detail ? " · " : "", detail);
  _es_window_show_message (self, message);
  /* Until the next request: what is on screen is older than the settings. */
  gtk_label_set_label (self->notice_label, _ ("Cancelled"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->notice_label), message);

  /* The file's decoding cannot stop halfway: its result is dropped. */
  if (self->loading_name)
    {
      g_cancellable_cancel (self->load_cancellable);
      g_clear_object (&self->load_cancellable);
      g_clear_pointer (&self->loading_name, g_free);
      self->load_serial++;
    }
  g_clear_pointer (&self->pending_source, es_source_unref);
  if (self->generation > self->answered_generation)
    {
      es_worker_cancel (self->worker, self->generation);
      self->cancelled_generation = self->generation;
      self->answered_generation = self->generation;
      _es_window_log_change (self, self->generation, "cancelled");
    }
  /* The side panel shows the parameters of the result on screen again
   * (the request this would schedule is dropped below: it is on screen). */
  _es_window_restore_shown_keys (self);
  g_clear_handle_id (&self->update_idle, g_source_remove);
  g_string_truncate (self->changes, 0);
  _es_window_update_subtitle (self);
  _es_window_apply_max_pixels (self);
  if (self->source == NULL)
    gtk_stack_set_visible_child_name (self->stack, "empty");
  _es_window_update_busy (self);
}

/* Read by the window's parts and by tests/test-ui*.c */

gboolean
es_window_get_busy (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), FALSE);
  return self->busy;
}

EsSource *
es_window_get_source (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return self->source;
}

EsCanvas *
es_window_get_canvas (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return self->canvas;
}

const char *
es_window_get_engine_description (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return self->engine_description;
}

EsWorker *
es_window_get_worker (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return self->worker;
}

void
es_window_set_progress_delay (EsWindow *self, guint ms)
{
  g_return_if_fail (ES_IS_WINDOW (self));
  self->progress_delay_ms = ms;
}

const char *
es_window_get_last_message (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return self->last_message;
}
