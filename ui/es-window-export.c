/* SPDX-License-Identifier: MIT */
/* EsWindow: exporting what is shown (through es_pipeline_export, as the CLI) and copying it. */
#include "es-window-private.h"

#include <string.h>

typedef struct {
  EsLayer *layer;
  EsResult result;
  char *path;
  EsExportFormat format;
  gboolean colorbar;
} ExportData;

static void
export_data_free (gpointer data)
{
  ExportData *export = data;

  es_layer_unref (export->layer);
  g_free (export->path);
  g_free (export);
}

static void
export_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  ExportData *export = task_data;
  EsError error = { 0 };

  if (es_pipeline_export (export->path, export->format, &export->result, export->colorbar, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", error.message);
}

void
es_window_export_async (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar,
                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task;
  EsLayer *layer;
  ExportData *export;
  EsDisplay display;

  g_return_if_fail (ES_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  task = g_task_new (self, cancellable, callback, user_data);
  layer = es_window_get_layer (self, es_window_get_active_view (self));
  g_task_set_source_tag (task, es_window_export_async);
  if (layer == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "Nothing to export yet");
      g_object_unref (task);
      return;
    }
  export = g_new0 (ExportData, 1);
  export->path = g_file_get_path (file);
  if (export->path == NULL)
    {
      g_free (export);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                               "Exports need a local file");
      g_object_unref (task);
      return;
    }
  export->layer = es_layer_ref (layer);
  /* What is on screen: the colours, range and units of now, from the
   * values the layer has (no job runs for them). */
  _es_window_get_display (self, &display);
  es_layer_export_result (layer, &display, &export->result);
  export->format = format;
  export->colorbar = colorbar;
  g_task_set_task_data (task, export, export_data_free);

  _es_window_track_task (self, task, FALSE);
  g_task_run_in_thread (task, export_thread);
  g_object_unref (task);
}

gboolean
es_window_export_finish (EsWindow *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
on_exported (GObject *object, GAsyncResult *result, gpointer user_data)
{
  EsWindow *self = ES_WINDOW (object);
  g_autoptr (GFile) file = user_data;
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_file_get_basename (file);
  g_autofree char *message = NULL;

  g_assert (ES_IS_WINDOW (self));
  if (es_window_export_finish (self, result, &error))
    message = g_strdup_printf ("Exported “%s”", name);
  else
    message = g_strdup_printf ("Could not export “%s”: %s", name, error->message);
  _es_window_show_message (self, message);
}

static const char *const export_ids[] = { "png", "raw16", "text" };
static const char *const export_labels[] = { "Colormapped PNG", "Raw 16-bit PNG", "Text matrix" };
static const char *const export_extensions[] = { "png", "png", "txt" };

static void
on_export_response (GtkNativeDialog *dialog, int response, EsWindow *self)
{
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);

  g_assert (ES_IS_WINDOW (self));
  if (response == GTK_RESPONSE_ACCEPT)
    {
      GFile *file = gtk_file_chooser_get_file (chooser);
      const char *format = gtk_file_chooser_get_choice (chooser, "format");
      const char *colorbar = gtk_file_chooser_get_choice (chooser, "colorbar");
      g_autoptr (GFile) parent = g_file_get_parent (file);
      int index = 0;

      for (guint i = 0; i < G_N_ELEMENTS (export_ids); i++)
        if (g_strcmp0 (format, export_ids[i]) == 0)
          index = i;
      g_settings_set_enum (self->settings, "export-format", index);
      g_settings_set_boolean (self->settings, "export-colorbar", g_strcmp0 (colorbar, "true") == 0);
      if (parent)
        {
          g_autofree char *uri = g_file_get_uri (parent);
          g_settings_set_string (self->settings, "last-folder", uri);
        }
      es_window_export_async (self, file, index, g_strcmp0 (colorbar, "true") == 0, NULL,
                              on_exported, file);
    }
  g_clear_object (&self->chooser);
}

static void
export_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  GtkFileChooserNative *chooser;
  int format = g_settings_get_enum (self->settings, "export-format");
  g_autofree char *stem = NULL, *name = NULL;
  char *dot;

  g_assert (ES_IS_WINDOW (self));
  if (self->source == NULL)
    return;
  chooser = gtk_file_chooser_native_new ("Export What Is Shown", GTK_WINDOW (self),
                                         GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (chooser), "format", "Format",
                               (const char **) export_ids, (const char **) export_labels);
  gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (chooser), "format", export_ids[format]);
  gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (chooser), "colorbar", "With colorbar", NULL, NULL);
  gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (chooser), "colorbar",
                               g_settings_get_boolean (self->settings, "export-colorbar") ? "true"
                                                                                          : "false");
  stem = g_strdup (self->source->name);
  if ((dot = strrchr (stem, '.')) && dot != stem)
    *dot = '\0';
  name = g_strdup_printf ("%s-%s.%s", stem, es_view_name (es_window_get_active_view (self)),
                          export_extensions[format]);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  _es_window_set_chooser_folder (self, GTK_FILE_CHOOSER (chooser));
  _es_window_add_chooser_filter (GTK_FILE_CHOOSER (chooser), "PNG images", "*.png");
  _es_window_add_chooser_filter (GTK_FILE_CHOOSER (chooser), "Text matrices", "*.txt");
  _es_window_add_chooser_filter (GTK_FILE_CHOOSER (chooser), "All files", "*");

  g_clear_object (&self->chooser);
  self->chooser = GTK_NATIVE_DIALOG (chooser);
  gtk_native_dialog_set_modal (self->chooser, TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (on_export_response), self);
  gtk_native_dialog_show (self->chooser);
}

typedef struct {
  EsLayer *layer;
  EsColorScale scale;
  gsize stride;
} CopyData;

static void
copy_data_free (gpointer data)
{
  CopyData *copy = data;

  es_layer_unref (copy->layer);
  g_free (copy);
}

static void
copy_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  CopyData *copy = task_data;

  g_task_return_pointer (task, es_layer_render_rgb (copy->layer, &copy->scale, &copy->stride),
                         (GDestroyNotify) g_bytes_unref);
}

static void
on_copied (GObject *object, GAsyncResult *result, gpointer user_data)
{
  EsWindow *self = ES_WINDOW (object);
  CopyData *copy = g_task_get_task_data (G_TASK (result));
  g_autoptr (GBytes) bytes = g_task_propagate_pointer (G_TASK (result), NULL);
  g_autoptr (GdkTexture) texture = NULL;

  g_assert (ES_IS_WINDOW (self));
  if (bytes == NULL)
    return;
  /* Only wrapping happens here: the pixels were made in the thread. */
  texture = gdk_memory_texture_new (es_layer_width (copy->layer), es_layer_height (copy->layer),
                                    GDK_MEMORY_R8G8B8, bytes, copy->stride);
  gdk_clipboard_set_texture (gtk_widget_get_clipboard (GTK_WIDGET (self)), texture);
  _es_window_show_message (self, "Copied the view to the clipboard");
}

static void
copy_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  EsLayer *layer;
  CopyData *copy;
  EsDisplay display;
  GTask *task;

  g_assert (ES_IS_WINDOW (self));
  layer = es_window_get_layer (self, es_window_get_active_view (self));
  if (layer == NULL)
    return;
  copy = g_new0 (CopyData, 1);
  copy->layer = es_layer_ref (layer);
  _es_window_get_display (self, &display);
  es_layer_display_scale (layer, &display, &copy->scale);
  task = g_task_new (self, self->cancellable, on_copied, NULL);
  g_task_set_task_data (task, copy, copy_data_free);
  _es_window_track_task (self, task, FALSE);
  g_task_run_in_thread (task, copy_thread);
  g_object_unref (task);
}

void
_es_window_class_export_init (EsWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_install_action (widget_class, "win.export", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.copy", NULL, copy_action);
}
