/* SPDX-License-Identifier: MIT */
/* EsWindow: opening images (off the main thread), the file chooser, drag and drop, the bundled sample. */
#include "es-window-private.h"

#include <stdio.h>
#include <string.h>
#include <glib/gi18n-lib.h>

#include "es-load.h"
#include "es-sandbox.h"
#include "es-settings.h"
#include "es-volume.h"

typedef struct {
  GFile *file;
  char *name;
  int levels;
  guint64 max_pixels; /* the "max-pixels" setting */
  guint64 budget;     /* es_image_get_max_pixels () when the load started */
  guint64 serial;
  gboolean remember_folder; /* not for the bundled sample */
  gint64 requested;         /* monotonic µs of the request, for the timings card */
  double decode_ms;         /* reading and decoding, on the load thread */
  char notice[256];         /* what the decoder said beside the image (the page shown, NaN samples), or "" */
} LoadData;

static void
load_data_free (gpointer data)
{
  LoadData *load = data;

  g_object_unref (load->file);
  g_free (load->name);
  g_free (load);
}

/* "0.26", "0.0011": megapixels with the digits that tell small limits apart. */
static char *
format_megapixels (guint64 pixels)
{
  double megapixels = pixels / 1e6;

  return megapixels >= 0.1 ? g_strdup_printf ("%.2f", megapixels) : g_strdup_printf ("%.2g", megapixels);
}

/* An image over "max-pixels", in the setting's unit. */
static char *
too_large_message (int width, int height, guint64 max_pixels)
{
  g_autofree char *size = format_megapixels ((guint64) width * (guint64) height);
  g_autofree char *limit = format_megapixels (max_pixels);

  return g_strdup_printf (_ ("the image is %d × %d, %s megapixels: over the Maximum Image Size of "
                             "%s megapixels (side panel)"),
                          width, height, size, limit);
}

/* Files are decoded in the sandbox (es-sandbox.h) where this build has
 * one; a build without says so once, and decodes in this process. */
static gboolean
use_sandbox (void)
{
  static gsize checked;
  static gboolean available;

  if (g_once_init_enter (&checked))
    {
      const char *reason;

      available = es_sandbox_available (&reason);
      if (!available)
        g_message ("images are decoded in this process, not in a sandbox: %s", reason);
      g_once_init_leave (&checked, 1);
    }
  return available;
}

/* A multi-page TIFF (or an OME-TIFF's channel 0 at time 0) opens as a
 * volume, a page a plane, as entroscope-cli reads it for a 3-D window;
 * everything else as one image. A sandboxed decoder is stopped as soon as
 * the load is cancelled (another file opened): the cancellable's
 * descriptor, released by the caller, wakes the wait for its answer. */
static const EsDecodeRequest *
decode_request (int levels, GCancellable *cancellable, EsDecodeRequest *request)
{
  int cancel_fd = cancellable ? g_cancellable_get_fd (cancellable) : -1;

  *request = (EsDecodeRequest){
    .levels = levels,
    .cancellable = cancel_fd >= 0,
    .cancel_fd = cancel_fd,
  };
  return request;
}

/* A file that is not local (dropped from elsewhere) is read through GIO,
 * never past the loader's size limit. */
static gboolean
load_stream (LoadData *load, GCancellable *cancellable, EsImage *image, EsError *es_error, GError **error)
{
  g_autoptr (GFileInputStream) stream = g_file_read (load->file, cancellable, error);
  guint64 limit = es_load_get_max_file_size ();
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  guint8 piece[64 << 10];
  gssize n;

  if (stream == NULL)
    return FALSE;
  while ((n = g_input_stream_read (G_INPUT_STREAM (stream), piece, sizeof piece, cancellable, error)) > 0)
    {
      if (bytes->len + (guint64) n > limit)
        {
          es_error_set (es_error, ES_ERROR_IO, "file is larger than the limit of %" G_GUINT64_FORMAT " bytes", limit);
          return TRUE;
        }
      g_byte_array_append (bytes, piece, n);
    }
  if (n < 0)
    return FALSE;
  EsDecodeRequest request;

  es_decode_memory (bytes->data, bytes->len, use_sandbox (), decode_request (load->levels, cancellable, &request),
                    image, load->notice, sizeof load->notice, es_error);
  if (request.cancellable)
    g_cancellable_release_fd (cancellable);
  return TRUE;
}

static void
load_local (const char *path, LoadData *load, GCancellable *cancellable, EsImage *image, EsError *error)
{
  EsDecodeRequest request;

  es_decode_path (path, use_sandbox (), decode_request (load->levels, cancellable, &request), image, load->notice,
                  sizeof load->notice, error);
  if (request.cancellable)
    g_cancellable_release_fd (cancellable);
}

static void
load_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  LoadData *load = task_data;
  g_autofree char *path = g_file_get_path (load->file);
  GError *error = NULL;
  EsError es_error = { 0 };
  EsImage image = { 0 };
  const char *size_at;
  int width, height;
  gint64 start = g_get_monotonic_time ();

  /* A local file goes through the bounded reader, as in entroscope-cli. */
  if (path)
    load_local (path, load, cancellable, &image, &es_error);
  else if (!load_stream (load, cancellable, &image, &es_error, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  load->decode_ms = (g_get_monotonic_time () - start) / 1000.0;
  /* The decoders' "image size W×H is over the limit of N pixels" (after the
   * format's name), in the setting's unit. */
  size_at = es_error.code == ES_ERROR_LIMIT ? strstr (es_error.message, "image size ") : NULL;
  if (size_at && sscanf (size_at, "image size %d×%d is over", &width, &height) == 2)
    {
      g_autofree char *message = too_large_message (width, height, load->max_pixels);

      /* The process-wide budget can stand above the setting (see
       * apply_max_pixels); the image is over both, and the user knows the setting. */
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE, "%s", message);
      return;
    }
  if (es_error.code != ES_OK)
    {
      g_task_return_new_error (task, G_IO_ERROR,
                               es_error.code == ES_ERROR_LIMIT ? G_IO_ERROR_MESSAGE_TOO_LARGE : G_IO_ERROR_INVALID_DATA,
                               "%s", es_error.message);
      return;
    }
  if ((guint64) image.width * (guint64) image.height * (guint64) es_image_planes (&image) > load->max_pixels)
    {
      g_autofree char *message = too_large_message (image.width, image.height, load->max_pixels);

      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE, "%s", message);
      es_image_clear (&image);
      return;
    }
  g_task_return_pointer (task, es_source_new (load->file, load->name, &image), (GDestroyNotify) es_source_unref);
}

static guint64
source_pixels (const EsSource *source)
{
  return source ? (guint64) source->image.width * (guint64) source->image.height * (guint64) es_source_planes (source)
                : 0;
}

/* The process-wide pixel budget that decoders check before they allocate
 * follows the "max-pixels" setting, but never drops below an image open in
 * a window: every job on it allocates outputs of its size. An image between
 * the two is refused after decoding (load_thread). */
void
_es_window_apply_max_pixels (EsWindow *self)
{
  GtkApplication *application = gtk_window_get_application (GTK_WINDOW (self));
  guint64 budget = g_settings_get_uint64 (self->settings, "max-pixels");

  budget = MAX (budget, source_pixels (self->source));
  budget = MAX (budget, source_pixels (self->pending_source));
  for (GList *l = application ? gtk_application_get_windows (application) : NULL; l; l = l->next)
    if (ES_IS_WINDOW (l->data))
      {
        budget = MAX (budget, source_pixels (ES_WINDOW (l->data)->source));
        budget = MAX (budget, source_pixels (ES_WINDOW (l->data)->pending_source));
      }
  es_image_set_max_pixels (budget);
}

/* Remembers the folder of an image the user opened, for the choosers. */
static void
remember_folder (EsWindow *self, EsSource *source)
{
  g_autoptr (GFile) parent = source->file ? g_file_get_parent (source->file) : NULL;

  if (parent)
    {
      g_autofree char *uri = g_file_get_uri (parent);
      g_settings_set_string (self->settings, "last-folder", uri);
    }
}

static void
on_loaded (GObject *object, GAsyncResult *result, gpointer user_data)
{
  GTask *task = G_TASK (result);
  LoadData *load = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;
  EsSource *source = g_task_propagate_pointer (task, &error);
  EsWindow *self;
  g_autofree char *what = NULL;

  /* The window went away, or the user cancelled this load (Escape). */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self = ES_WINDOW (object);
  g_assert (ES_IS_WINDOW (self));
  if (g_cancellable_is_cancelled (self->cancellable)) /* disposed */
    {
      es_source_unref (source);
      return;
    }
  /* A newer load, or a cancel, replaced this one: its result is dropped. */
  if (load->serial != self->load_serial)
    {
      es_source_unref (source);
      return;
    }
  g_clear_pointer (&self->loading_name, g_free);
  g_clear_object (&self->load_cancellable);

  if (source == NULL)
    {
      g_autofree char *summary = g_strdup_printf (_ ("Could not open “%s”"), load->name);

      _es_window_show_error (self, summary, error->message);
      _es_window_update_subtitle (self);
      if (self->source == NULL && self->pending_source == NULL)
        gtk_stack_set_visible_child_name (self->stack, "empty");
      _es_window_update_busy (self);
      return;
    }
  if (load->remember_folder)
    {
      remember_folder (self, source);
      _es_window_add_recent (self, source->file);
    }
  /* The image goes on screen, title and all, with its first views (see
   * on_response); until then the one on screen stays, marked as opening. */
  g_clear_pointer (&self->pending_source, es_source_unref);
  self->pending_source = source;
  _es_window_open_decoded (self, source, load->requested, load->decode_ms);
  if (load->notice[0] != '\0')
    {
      g_autofree char *message = g_strdup_printf (_ ("“%s”: %s"), load->name, load->notice);
      _es_window_show_message (self, message);
    }
  _es_window_apply_max_pixels (self);
  _es_window_update_subtitle (self);
  what = g_strdup_printf ("open %s", source->name);
  _es_window_schedule_update (self, what);
  _es_window_update_busy (self);
}

static void
open_file (EsWindow *self, GFile *file, gboolean remember_folder)
{
  GTask *task;
  LoadData *load;

  load = g_new0 (LoadData, 1);
  load->requested = g_get_monotonic_time ();
  load->file = g_object_ref (file);
  load->name = g_file_get_basename (file);
  if (load->name == NULL || !g_utf8_validate (load->name, -1, NULL))
    {
      g_free (load->name);
      load->name = g_file_get_parse_name (file);
    }
  /* Text matrices hold levels: they must be below the levels of the jobs. */
  load->levels = (int) es_settings_get_number (self->settings, es_param (ES_PARAM_LEVELS)->name);
  _es_window_apply_max_pixels (self);
  load->max_pixels = g_settings_get_uint64 (self->settings, "max-pixels");
  load->budget = es_image_get_max_pixels ();
  load->serial = ++self->load_serial;
  load->remember_folder = remember_folder;

  /* The newest load wins: the one before it stops reading, if it still can. */
  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();
  g_free (self->loading_name);
  self->loading_name = g_strdup (load->name);
  _es_window_update_subtitle (self);
  _es_window_update_busy (self);

  task = g_task_new (self, self->load_cancellable, on_loaded, NULL);
  g_task_set_task_data (task, load, load_data_free);
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
}

void
es_window_open (EsWindow *self, GFile *file)
{
  g_return_if_fail (ES_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  open_file (self, file, TRUE);
}

gboolean
es_window_open_sample (EsWindow *self)
{
  const char *candidates[] = { ES_SAMPLE_IMAGE, ES_SAMPLE_IMAGE_SOURCE };

  g_return_val_if_fail (ES_IS_WINDOW (self), FALSE);

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    if (g_file_test (candidates[i], G_FILE_TEST_IS_REGULAR))
      {
        g_autoptr (GFile) file = g_file_new_for_path (candidates[i]);
        open_file (self, file, FALSE);
        return TRUE;
      }
  gtk_stack_set_visible_child_name (self->stack, "empty");
  return FALSE;
}

void
_es_window_set_chooser_folder (EsWindow *self, GtkFileChooser *chooser)
{
  g_autofree char *uri = g_settings_get_string (self->settings, "last-folder");

  if (*uri)
    {
      g_autoptr (GFile) folder = g_file_new_for_uri (uri);
      gtk_file_chooser_set_current_folder (chooser, folder, NULL);
    }
}

void
_es_window_add_chooser_filter (GtkFileChooser *chooser, const char *name, const char *pattern)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, name);
  gtk_file_filter_add_pattern (filter, pattern);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

static void
on_open_response (GtkNativeDialog *dialog, int response, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      es_window_open (self, file);
    }
  g_clear_object (&self->chooser);
}

static void
open_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  GtkFileFilter *filter;
  GtkFileChooserNative *chooser;

  g_assert (ES_IS_WINDOW (self));

  chooser = gtk_file_chooser_native_new (_ ("Open an Image"), GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, "_Open",
                                         "_Cancel");
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _ ("Images and text matrices"));
  /* The desktop file's types, and the names for where no MIME type is
   * known; text matrices go by their extension alone, so that the filter
   * does not take every text file. */
  gtk_file_filter_add_mime_type (filter, "image/png");
  gtk_file_filter_add_mime_type (filter, "image/x-portable-graymap");
  gtk_file_filter_add_mime_type (filter, "image/tiff");
  gtk_file_filter_add_mime_type (filter, "image/jpeg");
  gtk_file_filter_add_suffix (filter, "png");
  gtk_file_filter_add_suffix (filter, "pgm");
  gtk_file_filter_add_suffix (filter, "tif");
  gtk_file_filter_add_suffix (filter, "tiff");
  gtk_file_filter_add_suffix (filter, "jpg");
  gtk_file_filter_add_suffix (filter, "jpeg");
  gtk_file_filter_add_suffix (filter, "txt");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  g_object_unref (filter);
  _es_window_add_chooser_filter (GTK_FILE_CHOOSER (chooser), _ ("All files"), "*");
  _es_window_set_chooser_folder (self, GTK_FILE_CHOOSER (chooser));

  g_clear_object (&self->chooser);
  self->chooser = GTK_NATIVE_DIALOG (chooser);
  gtk_native_dialog_set_modal (self->chooser, TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (on_open_response), self);
  gtk_native_dialog_show (self->chooser);
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, EsWindow *self)
{
  GFile *file = NULL;

  g_assert (ES_IS_WINDOW (self));

  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));

      file = files ? files->data : NULL;
      g_slist_free (files);
    }
  else if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    file = g_value_get_object (value);
  if (file == NULL)
    return FALSE;
  es_window_open (self, file);
  return TRUE;
}

void
_es_window_class_open_init (EsWindowClass *klass)
{
  gtk_widget_class_install_action (GTK_WIDGET_CLASS (klass), "win.open", NULL, open_action);
}

/* Files dropped anywhere on the image area open like Ctrl+O. */
void
_es_window_open_init (EsWindow *self)
{
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };
  GtkDropTarget *target = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);

  gtk_drop_target_set_gtypes (target, types, G_N_ELEMENTS (types));
  g_signal_connect (target, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self->stack), GTK_EVENT_CONTROLLER (target));
}
