/* SPDX-License-Identifier: MIT */
/* EsWindow: the Compare Variants window (win.compare), which it serves as an EsComparer. */
#include "es-window-private.h"

#include <glib/gi18n-lib.h>

#include "es-compare-window.h"

/* EsComparer */

static EsSource *
es_window_comparer_get_source (EsComparer *comparer)
{
  return ES_WINDOW (comparer)->source;
}

static void
es_window_comparer_compare_async (EsComparer *comparer, EsOp op, int repeats, GCancellable *cancellable,
                                  EsCompareProgressFunc progress, gpointer progress_data, GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  EsWindow *self = ES_WINDOW (comparer);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  EsJob job;

  g_task_set_source_tag (task, es_window_comparer_compare_async);
  if (self->source == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _ ("No image is open"));
      g_object_unref (task);
      return;
    }
  /* The job of the op's view: the same parameters and variant as on screen. */
  es_window_get_view_job (self, es_view_for_op (op), &job);
  _es_window_track_task (self, task, TRUE);
  es_worker_compare (self->worker, task, self->source, _es_window_get_backend (self), &job, repeats, progress,
                     progress_data);
}

static EsComparison *
es_window_comparer_compare_finish (EsComparer *comparer, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, comparer), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
es_window_comparer_set_backend (EsComparer *comparer, EsBackendChoice backend)
{
  /* As the Compute section's rows do: through the action (the nicks of
   * the "backend" key are the backends' names). */
  gtk_widget_activate_action (GTK_WIDGET (comparer), "win.backend", "s", es_backend_name (backend));
}

void
_es_window_comparer_iface_init (EsComparerInterface *iface)
{
  iface->get_source = es_window_comparer_get_source;
  iface->compare_async = es_window_comparer_compare_async;
  iface->compare_finish = es_window_comparer_compare_finish;
  iface->set_backend = es_window_comparer_set_backend;
}

/* The window */

void
es_window_compare_when_open (EsWindow *self)
{
  g_return_if_fail (ES_IS_WINDOW (self));

  if (self->source)
    gtk_widget_activate_action (GTK_WIDGET (self), "win.compare", NULL);
  else
    self->compare_when_open = TRUE;
}

void
_es_window_compare_opened (EsWindow *self)
{
  if (self->compare_when_open)
    {
      self->compare_when_open = FALSE;
      gtk_widget_activate_action (GTK_WIDGET (self), "win.compare", NULL);
    }
}

GtkWindow *
es_window_get_compare_window (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return self->compare_window;
}

static void
compare_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  EsOp op = ES_OP_ENTROPY;
  EsCompareWindow *compare;

  g_assert (ES_IS_WINDOW (self));

  /* The operation on screen; the original runs none, so entropy. */
  es_view_get_op (es_window_get_active_view (self), &op);
  if (self->compare_window == NULL)
    {
      compare = es_compare_window_new (GTK_WINDOW (self), ES_COMPARER (self), op);
      self->compare_window = GTK_WINDOW (compare);
      g_object_add_weak_pointer (G_OBJECT (compare), (gpointer *) &self->compare_window);
      gtk_window_present (GTK_WINDOW (compare));
      es_compare_window_run (compare);
      return;
    }
  compare = ES_COMPARE_WINDOW (self->compare_window);
  gtk_window_present (GTK_WINDOW (compare));
  /* A new operation starts a run by itself; the same one runs again, for
   * the image and settings of now. */
  if (es_compare_window_get_op (compare) != op)
    es_compare_window_set_op (compare, op);
  else
    es_compare_window_run (compare);
}

void
_es_window_compare_dispose (EsWindow *self)
{
  if (self->compare_window)
    {
      GtkWindow *compare = self->compare_window;

      g_object_remove_weak_pointer (G_OBJECT (compare), (gpointer *) &self->compare_window);
      self->compare_window = NULL;
      gtk_window_destroy (compare);
    }
}

void
_es_window_class_compare_init (EsWindowClass *klass)
{
  gtk_widget_class_install_action (GTK_WIDGET_CLASS (klass), "win.compare", NULL, compare_action);
}
