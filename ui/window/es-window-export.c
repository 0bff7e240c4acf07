/* SPDX-License-Identifier: MIT */
/* EsWindow: exporting what is shown (through es_pipeline_export, as the CLI) or a volume's every plane
 * (es_volume_export_tiff, as the CLI), and copying it. */
#include "es-window-private.h"
#include "es-tools.h"
#include "es-volume-export.h"

#include <stdlib.h>
#include <string.h>
#include <glib/gi18n-lib.h>

/* Exports of every window stop through this once a window closes with its
 * exports still writing: es_atomic_file removes their temporary files. */
static EsControl *export_interrupt;
static int exports_running; /* in every window (main thread) */

typedef struct {
  EsLayer *layer;
  EsResult result;
  char *path;
  EsExportFormat format;
  gboolean colorbar;
  gboolean every_plane; /* the volume's every plane as one multi-page TIFF */
  char *overlay;        /* drawn over a colormapped PNG (slides); NULL: none */
} ExportData;

static void
export_data_free (gpointer data)
{
  ExportData *export = data;

  es_layer_unref (export->layer);
  g_free (export->path);
  g_free (export->overlay);
  g_free (export);
}

/* The colormapped PNG with the timing overlay over the image: the export's
 * picture drawn in memory, the overlay over it, then written. */
static gboolean
export_with_overlay (ExportData *export, EsError *error)
{
  EsHeatmapCanvas canvas;
  gboolean ok;

  if (!es_heatmap_canvas_render (&export->result.values, &export->result.scale, export->colorbar, &export->result.info,
                                 &canvas, error))
    return FALSE;
  es_timings_overlay_draw (export->overlay, canvas.rgb, canvas.stride, canvas.image_x, canvas.image_y,
                           export->result.values.width, export->result.values.height);
  ok = es_save_heatmap_canvas_png (export->path, &canvas, &export->result.scale, &export->result.info, error);
  free (canvas.rgb);
  return ok;
}

static void
export_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  ExportData *export = task_data;
  EsError error = { 0 };

  if (export->every_plane ? es_volume_export_tiff (export->path, &export->result, &error)
      : export->overlay   ? export_with_overlay (export, &error)
                        : es_pipeline_export (export->path, export->format, &export->result, export->colorbar, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", error.message);
}

static void
on_export_done (GTask *task, GParamSpec *pspec, EsWindow *self)
{
  GApplication *app;

  self->exports--;
  if (--exports_running == 0)
    es_control_reset (export_interrupt);
  if ((app = g_application_get_default ()) != NULL)
    g_application_release (app);
}

void
_es_window_export_close (EsWindow *self)
{
  /* The interrupt stops every export of the process: only when all of
   * them are this window's. Others finish; the process waits for them. */
  if (self->exports > 0 && exports_running == self->exports)
    es_control_cancel (export_interrupt);
}

static void
export_async (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar, gboolean every_plane,
              GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task;
  EsLayer *layer;
  ExportData *export;
  EsDisplay display;
  GApplication *app;

  task = g_task_new (self, cancellable, callback, user_data);
  layer = es_window_get_layer (self, es_window_get_active_view (self));
  /* The plane's layer shares the volume's values, range and job: the
   * volume's layer is what the CLI would write. */
  if (every_plane && layer != NULL)
    layer = layer->volume;
  g_task_set_source_tag (task, es_window_export_async);
  if (every_plane && layer == NULL && es_window_get_layer (self, es_window_get_active_view (self)) != NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _ ("The image is not a volume"));
      g_object_unref (task);
      return;
    }
  if (layer == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _ ("Nothing to export yet"));
      g_object_unref (task);
      return;
    }
  export = g_new0 (ExportData, 1);
  export->path = g_file_get_path (file);
  if (export->path == NULL)
    {
      g_free (export);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _ ("Exports need a local file"));
      g_object_unref (task);
      return;
    }
  export->layer = es_layer_ref (layer);
  /* What is on screen: the colours, range and units of now, from the
   * values the layer has (no job runs for them). */
  _es_window_get_display (self, &display);
  es_layer_export_result (layer, &display, &export->result);
  /* A colour PNG takes the manual contrast limits too; raw values keep their range. */
  if (format == ES_EXPORT_PNG)
    es_tools_adjust_scale (self->tools, layer->view, &export->result.scale);
  export->format = format;
  export->colorbar = colorbar;
  export->every_plane = every_plane;
  /* Slides: only a picture takes the overlay; values stay values. */
  if (format == ES_EXPORT_PNG && !every_plane && g_settings_get_boolean (self->settings, "export-overlays"))
    export->overlay = _es_window_overlay_text (self, layer);
  g_task_set_task_data (task, export, export_data_free);
  /* The process has one compression setting, as the application has. */
  es_save_set_compression (g_settings_get_enum (self->settings, "export-compression"));

  if (export_interrupt == NULL)
    {
      export_interrupt = es_control_new (NULL, NULL);
      es_atomic_file_set_interrupt (export_interrupt);
    }
  /* The process lives until the export is written or removed. */
  if ((app = g_application_get_default ()) != NULL)
    g_application_hold (app);
  exports_running++;
  self->exports++;
  g_signal_connect_object (task, "notify::completed", G_CALLBACK (on_export_done), self, 0);
  _es_window_track_task (self, task, FALSE);
  g_task_run_in_thread (task, export_thread);
  g_object_unref (task);
}

void
es_window_export_async (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar,
                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (ES_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  export_async (self, file, format, colorbar, FALSE, cancellable, callback, user_data);
}

void
es_window_export_volume_async (EsWindow *self, GFile *file, GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer user_data)
{
  g_return_if_fail (ES_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  export_async (self, file, ES_EXPORT_TIFF, FALSE, TRUE, cancellable, callback, user_data);
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
  g_autoptr (GFile) parent = g_file_get_parent (file);
  g_autoptr (GError) error = NULL;
  g_autofree char *name = g_file_get_basename (file);
  g_autofree char *message = NULL;

  g_assert (ES_IS_WINDOW (self));
  if (!es_window_export_finish (self, result, &error))
    {
      message = g_strdup_printf (_ ("Could not export “%s”"), name);
      _es_window_show_error (self, message, error->message);
      return;
    }
  /* Only a folder that took an export is remembered for the next. */
  if (parent && self->settings)
    {
      g_autofree char *uri = g_file_get_uri (parent);

      g_settings_set_string (self->settings, "last-folder", uri);
    }
  message = g_strdup_printf (_ ("Exported “%s”"), name);
  _es_window_show_message (self, message);
}

/* Exports the chosen file after the chooser (or a test) has picked it. */
void
_es_window_export_file (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar)
{
  es_window_export_async (self, file, format, colorbar, NULL, on_exported, g_object_ref (file));
}

/* By EsExportFormat, as the "export-format" setting's values (png, raw16,
 * text, tiff); a volume's chooser adds EXPORT_EVERY_PLANE ("volume"), which
 * only a volume offers (volumes come from multi-page TIFFs: a build without
 * libtiff has none). */
#define EXPORT_EVERY_PLANE 4
static const char *const export_labels[] = {
  N_ ("Colormapped PNG"),
  N_ ("Raw 16-bit PNG"),
  N_ ("Text matrix"),
#ifdef ES_HAVE_TIFF
  N_ ("TIFF (the values as they are)"),
  N_ ("Multi-page TIFF (every plane)"),
#endif
  NULL,
};
static const char *const export_extensions[] = { "png", "png", "txt", "tif", "tif" };
/* By EsCompression, as the "export-compression" setting's values. */
static const char *const compression_ids[] = { "fast", "default", "small", NULL };
static const char *const compression_labels[] = { N_ ("Fast"), N_ ("Default"), N_ ("Small"), NULL };
/* Extensions that a name may end with and that the format's replaces. */
static const char *const known_extensions[] = { "png", "txt", "tif", "tiff", "pgm", NULL };

char *
_es_window_export_name (const char *name, EsExportFormat format)
{
  const char *dot = strrchr (name, '.');
  const char *extension = export_extensions[MIN ((guint) format, G_N_ELEMENTS (export_extensions) - 1)];
  g_autofree char *stem = NULL;

  if (dot && dot != name)
    for (const char *const *known = known_extensions; *known; known++)
      if (g_ascii_strcasecmp (dot + 1, *known) == 0)
        {
          stem = g_strndup (name, dot - name);
          break;
        }
  return g_strdup_printf ("%s.%s", stem ? stem : name, extension);
}

/* The export dialog's filters are its formats (named by export_labels): the
 * filter chosen is the format, and the name's extension follows it. */
static int
export_filter_format (GtkFileFilter *filter)
{
  const char *name = filter ? gtk_file_filter_get_name (filter) : NULL;

  /* By name: the portal hands back a copy of the filter chosen. */
  for (guint i = 0; name && export_labels[i]; i++)
    if (strcmp (name, export_labels[i]) == 0)
      return i;
  return -1;
}

static void
on_export_filter (GtkFileChooser *chooser, GParamSpec *pspec, EsWindow *self)
{
  int format = export_filter_format (gtk_file_chooser_get_filter (chooser));
  g_autofree char *name = gtk_file_chooser_get_current_name (chooser);
  g_autofree char *fixed = NULL;

  if (format < 0 || name == NULL || *name == '\0')
    return;
  fixed = _es_window_export_name (name, format);
  if (strcmp (fixed, name) != 0)
    gtk_file_chooser_set_current_name (chooser, fixed);
}

typedef struct {
  EsWindow *window;
  GFile *file;
  int format;
  gboolean colorbar;
} PendingExport;

static void
pending_export_free (gpointer data)
{
  PendingExport *pending = data;

  g_object_unref (pending->window);
  g_object_unref (pending->file);
  g_free (pending);
}

static void
start_export (EsWindow *self, GFile *file, int format, gboolean colorbar)
{
  if (format == EXPORT_EVERY_PLANE)
    es_window_export_volume_async (self, file, NULL, on_exported, g_object_ref (file));
  else
    _es_window_export_file (self, file, format, colorbar);
}

static void
on_replace_response (AdwMessageDialog *dialog, const char *response, PendingExport *pending)
{
  if (strcmp (response, "replace") == 0)
    start_export (pending->window, pending->file, pending->format, pending->colorbar);
}

GtkWidget *
_es_window_export_chosen (EsWindow *self, GFile *chosen, int format, gboolean colorbar)
{
  g_autoptr (GFile) parent = g_file_get_parent (chosen);
  g_autofree char *name = g_file_get_basename (chosen);
  g_autofree char *fixed = _es_window_export_name (name, format);
  g_autoptr (GFile) file = parent ? g_file_get_child (parent, fixed) : g_object_ref (chosen);
  g_autofree char *heading = NULL, *body = NULL, *folder = NULL;
  PendingExport *pending;
  GtkWidget *dialog;

  /* The chooser asked before replacing the name it showed; a name the
   * format changed is another file, which nobody was asked about. */
  if (g_file_equal (file, chosen) || !g_file_query_exists (file, NULL))
    {
      start_export (self, file, format, colorbar);
      return NULL;
    }
  folder = parent ? g_file_get_parse_name (parent) : g_strdup ("");
  heading = g_strdup_printf (_ ("Replace “%s”?"), fixed);
  body = g_strdup_printf (_ ("The format chosen saves “%s” as “%s”, and a file of that name already exists in “%s”. "
                             "Replacing it overwrites its contents."),
                          name, fixed, folder);
  dialog = adw_message_dialog_new (GTK_WINDOW (self), heading, body);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog), "cancel", _ ("_Cancel"), "replace", _ ("_Replace"),
                                    NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "replace", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  pending = g_new0 (PendingExport, 1);
  pending->window = g_object_ref (self);
  pending->file = g_steal_pointer (&file);
  pending->format = format;
  pending->colorbar = colorbar;
  g_signal_connect_data (dialog, "response", G_CALLBACK (on_replace_response), pending,
                         (GClosureNotify) (void (*) (void)) pending_export_free, 0);
  gtk_window_present (GTK_WINDOW (dialog));
  return dialog;
}

static void
on_export_response (GtkNativeDialog *dialog, int response, EsWindow *self)
{
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);

  g_assert (ES_IS_WINDOW (self));
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) chosen = gtk_file_chooser_get_file (chooser);
      int format = export_filter_format (gtk_file_chooser_get_filter (chooser));
      gboolean colorbar = g_strcmp0 (gtk_file_chooser_get_choice (chooser, "colorbar"), "true") == 0;
      const char *compression = gtk_file_chooser_get_choice (chooser, "compression");

      if (format < 0)
        format = g_settings_get_enum (self->settings, "export-format");
      for (guint i = 0; compression_ids[i]; i++)
        if (g_strcmp0 (compression, compression_ids[i]) == 0)
          g_settings_set_enum (self->settings, "export-compression", i);
      g_settings_set_enum (self->settings, "export-format", format);
      g_settings_set_boolean (self->settings, "export-colorbar", colorbar);
      g_settings_set_boolean (self->settings, "export-overlays",
                              g_strcmp0 (gtk_file_chooser_get_choice (chooser, "overlays"), "true") == 0);
      _es_window_export_chosen (self, chosen, format, colorbar);
    }
  g_clear_object (&self->chooser);
}

/* GTK 4.8's file chooser ignores gtk_file_chooser_set_choice for a list of
 * options (it stays on the first one), which lost the saved format and
 * compression at every export: the saved option is listed first, the
 * others after it in their usual order. */
static void
add_choice_selected (GtkFileChooser *chooser, const char *id, const char *label, const char *const *ids,
                     const char *const *labels, guint selected)
{
  guint n = g_strv_length ((char **) ids), j = 1;
  g_autofree const char **order_ids = g_new0 (const char *, n + 1);
  g_autofree const char **order_labels = g_new0 (const char *, n + 1);

  order_ids[0] = ids[selected];
  order_labels[0] = _ (labels[selected]);
  for (guint i = 0; i < n; i++)
    if (i != selected)
      {
        order_ids[j] = ids[i];
        order_labels[j++] = _ (labels[i]);
      }
  gtk_file_chooser_add_choice (chooser, id, label, order_ids, order_labels);
  gtk_file_chooser_set_choice (chooser, id, ids[selected]);
}

/* The file chooser dialog on screen for this window, if GTK shows its own. */
static GtkFileChooser *
shown_file_chooser (EsWindow *self)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) shown = g_list_model_get_item (toplevels, i);

      if (GTK_IS_FILE_CHOOSER_DIALOG (shown) && gtk_window_get_transient_for (shown) == GTK_WINDOW (self)
          && gtk_widget_get_visible (GTK_WIDGET (shown)))
        return GTK_FILE_CHOOSER (shown);
    }
  return NULL;
}

static void
export_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  GtkFileChooserNative *chooser;
  int format = g_settings_get_enum (self->settings, "export-format");
  g_autofree char *stem = NULL, *name = NULL;
  GtkFileChooser *shown;
  guint n_formats = g_strv_length ((char **) export_labels);
  char *dot;

  g_assert (ES_IS_WINDOW (self));
  if (self->source == NULL)
    return;
  chooser = gtk_file_chooser_native_new (es_source_planes (self->source) > 1 ? _ ("Export the Plane or the Volume")
                                                                             : _ ("Export What Is Shown"),
                                         GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  /* Every plane is a volume's choice only; a 2-D image takes the plane's TIFF instead. */
  if (n_formats > EXPORT_EVERY_PLANE && es_source_planes (self->source) <= 1)
    n_formats = EXPORT_EVERY_PLANE;
  if (format == EXPORT_EVERY_PLANE && n_formats == EXPORT_EVERY_PLANE)
    format = ES_EXPORT_TIFF;
  /* A format this build does not write (TIFF without libtiff) falls back to PNG. */
  if (format >= (int) n_formats)
    format = ES_EXPORT_PNG;
  for (guint i = 0; i < n_formats; i++)
    {
      g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

      gtk_file_filter_set_name (filter, _ (export_labels[i]));
      gtk_file_filter_add_suffix (filter, export_extensions[i]);
      if (strcmp (export_extensions[i], "tif") == 0)
        gtk_file_filter_add_suffix (filter, "tiff");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
      if ((int) i == format)
        gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (chooser), filter);
    }
  add_choice_selected (GTK_FILE_CHOOSER (chooser), "compression", _ ("Compression"), compression_ids,
                       compression_labels, g_settings_get_enum (self->settings, "export-compression"));
  gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (chooser), "colorbar", _ ("With colorbar"), NULL, NULL);
  gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (chooser), "colorbar",
                               g_settings_get_boolean (self->settings, "export-colorbar") ? "true" : "false");
  gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (chooser), "overlays", _ ("Include timing overlays (colormapped PNG)"),
                               NULL, NULL);
  gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (chooser), "overlays",
                               g_settings_get_boolean (self->settings, "export-overlays") ? "true" : "false");
  stem = g_strdup (self->source->name);
  if ((dot = strrchr (stem, '.')) && dot != stem)
    *dot = '\0';
  name = g_strdup_printf ("%s-%s.%s", stem, es_view_name (es_window_get_active_view (self)),
                          export_extensions[MIN ((guint) format, G_N_ELEMENTS (export_extensions) - 1)]);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  _es_window_set_chooser_folder (self, GTK_FILE_CHOOSER (chooser));
  g_signal_connect_object (chooser, "notify::filter", G_CALLBACK (on_export_filter), self, 0);

  g_clear_object (&self->chooser);
  self->chooser = GTK_NATIVE_DIALOG (chooser);
  gtk_native_dialog_set_modal (self->chooser, TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (on_export_response), self);
  gtk_native_dialog_show (self->chooser);
  /* GTK 4.8's GtkFileChooserNative tells of a filter chosen in its own
   * dialog (the one shown without a portal) only at the response: the
   * name follows that dialog's filter. */
  if ((shown = shown_file_chooser (self)))
    g_signal_connect_object (shown, "notify::filter", G_CALLBACK (on_export_filter), self, 0);
}

typedef struct {
  EsLayer *layer;
  EsColorScale scale;
  gsize stride;
  char *overlay; /* the pane's timing overlay while it shows; NULL: none */
} CopyData;

static void
copy_data_free (gpointer data)
{
  CopyData *copy = data;

  es_layer_unref (copy->layer);
  g_free (copy->overlay);
  g_free (copy);
}

static void
copy_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  CopyData *copy = task_data;
  GBytes *rgb = es_layer_render_rgb (copy->layer, &copy->scale, &copy->stride);

  /* The copy is the view as seen: with its overlay when it has one. */
  if (copy->overlay)
    {
      gsize size;
      guint8 *pixels = g_bytes_unref_to_data (rgb, &size);

      es_timings_overlay_draw (copy->overlay, pixels, copy->stride, 0, 0, es_layer_width (copy->layer),
                               es_layer_height (copy->layer));
      rgb = g_bytes_new_take (pixels, size);
    }
  g_task_return_pointer (task, rgb, (GDestroyNotify) g_bytes_unref);
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
  texture = gdk_memory_texture_new (es_layer_width (copy->layer), es_layer_height (copy->layer), GDK_MEMORY_R8G8B8,
                                    bytes, copy->stride);
  gdk_clipboard_set_texture (gtk_widget_get_clipboard (GTK_WIDGET (self)), texture);
  _es_window_show_message (self, _ ("Copied the view to the clipboard"));
}

static void
copy_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  EsLayer *layer;
  CopyData *copy;
  EsDisplay display;
  GTask *task;
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));

  g_assert (ES_IS_WINDOW (self));
  /* In a text field, Ctrl+C copies its text. */
  if (GTK_IS_TEXT (focus) || GTK_IS_LABEL (focus))
    {
      gtk_widget_activate_action (focus, "clipboard.copy", NULL);
      return;
    }
  layer = es_window_get_layer (self, es_window_get_active_view (self));
  if (layer == NULL)
    return;
  copy = g_new0 (CopyData, 1);
  copy->layer = es_layer_ref (layer);
  _es_window_get_display (self, &display);
  es_layer_display_scale (layer, &display, &copy->scale);
  es_tools_adjust_scale (self->tools, layer->view, &copy->scale);
  if (g_settings_get_boolean (self->settings, "show-timings"))
    copy->overlay = _es_window_overlay_text (self, layer);
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
