/* EsWindow: settings in, jobs out to the worker, newest results in, views, readouts and exports. */
#include "es-window.h"

#include <string.h>

#include "es-colorbar.h"
#include "es-compare-window.h"
#include "es-debug.h"
#include "es-load.h"
#include "es-definitions.h"
#include "es-settings.h"
#include "es-sidebar.h"
#include "es-timings.h"
#include "es-worker.h"

struct _EsWindow {
  AdwApplicationWindow parent_instance;

  AdwToastOverlay *toast_overlay;
  GtkDropDown *view_dropdown;
  GtkSpinner *spinner;
  AdwWindowTitle *window_title;
  GtkMenuButton *zoom_button;
  AdwFlap *flap;
  GtkStack *stack;
  EsCanvas *canvas;
  GtkRevealer *timings_revealer;
  EsTimings *timings;
  EsColorbar *colorbar;
  GtkLabel *position_label;
  GtkLabel *info_label;
  EsSidebar *sidebar;

  GSettings *settings;
  EsWorker *worker;
  GCancellable *cancellable;      /* cancelled when the window goes away */
  GtkNativeDialog *chooser;

  EsCompareWindow *compare_window; /* weak */
  gboolean compare_when_open;

  EsSource *source;
  guint64 load_serial;            /* the newest load wins */
  int loads;
  int tasks;                      /* exports, copies and comparisons */
  gboolean busy;

  guint64 generation;             /* of the newest request */
  guint64 answered_generation;    /* of the newest response, shown or not */
  guint64 shown_generation;       /* of the newest response shown */
  EsLayer *shown[ES_N_VIEWS];
  gboolean shown_fresh[ES_N_VIEWS];
  char *engine_description;
  gboolean cuda_in_use;

  guint update_idle;
  GString *changes;               /* what changed since the last request */
  GQueue pending_log;             /* PendingChange, for ENTROSCOPE_DEBUG=timing */
  gulong after_paint_handler;
  GdkFrameClock *paint_clock;
  double last_worker_ms;
  double last_jobs_ms;

  int hover_pane, hover_x, hover_y;
  guint status_idle;
  char *last_message;
};

enum {
  PROP_0,
  PROP_VIEW,
  PROP_BACKEND,
  PROP_VARIANT,
  PROP_SHOW_TIMINGS,
  PROP_SHOW_SIDEBAR,
  PROP_BUSY,
  PROP_SETTINGS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (EsWindow, es_window, ADW_TYPE_APPLICATION_WINDOW)

/* The dropdown's order; also the GSettings nicks of "view". */
static const char *const view_nicks[] = {
  "original", "quantized", "entropy", "equalized", "sharpened", "grid", NULL
};
static const EsView grid_views[4] = {
  ES_VIEW_ORIGINAL, ES_VIEW_ENTROPY, ES_VIEW_EQUALIZED, ES_VIEW_SHARPENED
};
static const char *const variant_keys[ES_N_OPS] = {
  [ES_OP_QUANTIZE] = "variant-quantize",
  [ES_OP_ENTROPY] = "variant-entropy",
  [ES_OP_EQUALIZE] = "variant-equalize",
  [ES_OP_SHARPEN] = "variant-sharpen",
};

typedef struct {
  guint64 generation;
  gint64 time;
  char *what;
} PendingChange;

/* Messages */

static void
show_toast (EsWindow *self, const char *message)
{
  AdwToast *toast;

  g_free (self->last_message);
  self->last_message = g_strdup (message);
  if (self->toast_overlay == NULL)   /* disposed: a late export result */
    return;
  toast = adw_toast_new (message);
  adw_toast_set_timeout (toast, 6);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

static void
update_busy (EsWindow *self)
{
  gboolean busy = self->loads > 0 || self->tasks > 0
                  || self->generation > self->answered_generation;

  if (self->spinner == NULL)   /* disposed */
    return;
  gtk_spinner_set_spinning (self->spinner, busy);
  gtk_widget_set_visible (GTK_WIDGET (self->spinner), busy);
  if (busy != self->busy)
    {
      self->busy = busy;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
    }
}

/* The timing log: from a change to the first frame painted with its result. */

static void
pending_change_free (gpointer data)
{
  PendingChange *change = data;

  g_free (change->what);
  g_free (change);
}

static void
log_change (EsWindow *self, guint64 generation, const char *what)
{
  PendingChange *change;

  if (!es_debug_timing ())
    return;
  change = g_new (PendingChange, 1);
  change->generation = generation;
  change->time = g_get_monotonic_time ();
  change->what = g_strdup (what);
  g_queue_push_tail (&self->pending_log, change);
}

static void
on_after_paint (GdkFrameClock *clock, EsWindow *self)
{
  gint64 now = g_get_monotonic_time ();
  PendingChange *change;

  while ((change = g_queue_peek_head (&self->pending_log))
         && change->generation <= self->shown_generation)
    {
      g_queue_pop_head (&self->pending_log);
      es_debug_log ("%s: %.1f ms from request to the new view shown (worker %.1f ms, "
                    "of which es_run %.1f ms)", change->what, (now - change->time) / 1000.0,
                    self->last_worker_ms, self->last_jobs_ms);
      pending_change_free (change);
    }
  g_clear_signal_handler (&self->after_paint_handler, self->paint_clock);
  g_clear_object (&self->paint_clock);
}

/* Interactivity starts with the first frame: from then on, stalls count. */
static void
on_first_paint (GdkFrameClock *clock, EsWindow *self)
{
  g_signal_handlers_disconnect_by_func (clock, on_first_paint, self);
  es_debug_log ("first frame painted");
  es_debug_watch_main_loop ();
}

static void
on_realize (GtkWidget *widget, gpointer data)
{
  g_signal_connect (gtk_widget_get_frame_clock (widget), "after-paint",
                    G_CALLBACK (on_first_paint), widget);
}

static void
watch_next_paint (EsWindow *self)
{
  GdkFrameClock *clock;

  if (!es_debug_timing () || self->after_paint_handler
      || g_queue_is_empty (&self->pending_log))
    return;
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));
  if (clock == NULL)
    return;
  self->paint_clock = g_object_ref (clock);
  self->after_paint_handler = g_signal_connect (clock, "after-paint",
                                                G_CALLBACK (on_after_paint), self);
}

/* What is shown */

static int
current_views (EsWindow *self, EsView *views)
{
  g_autofree char *nick = g_settings_get_string (self->settings, "view");
  EsView view;

  if (g_str_equal (nick, "grid"))
    {
      memcpy (views, grid_views, sizeof grid_views);
      return 4;
    }
  views[0] = es_view_from_name (nick, &view) ? view : ES_VIEW_ENTROPY;
  return 1;
}

EsView
es_window_get_active_view (EsWindow *self)
{
  EsView views[4];
  int n = current_views (self, views);

  return views[MIN (es_canvas_get_active_pane (self->canvas), n - 1)];
}

void
es_window_get_view_params (EsWindow *self, EsView view, EsViewParams *params)
{
  EsOp op = ES_OP_QUANTIZE;
  gboolean has_op = es_view_get_op (view, &op);

  /* Only the fields an operation uses are set, so that a change elsewhere
   * does not look like a new job. */
  es_view_params_init (params, op);
  if (op == ES_OP_ENTROPY)
    params->job.window = g_settings_get_int (self->settings, "window");
  if (op == ES_OP_ENTROPY || op == ES_OP_QUANTIZE)
    params->job.levels = g_settings_get_int (self->settings, "levels");
  if (op == ES_OP_SHARPEN)
    params->job.amount = (float) g_settings_get_double (self->settings, "amount");
  params->range = g_settings_get_enum (self->settings, "range") == 1 ? ES_RANGE_AUTO
                                                                     : ES_RANGE_ABSOLUTE;
  if (op == ES_OP_ENTROPY)
    params->units = g_settings_get_enum (self->settings, "units") == 1 ? ES_UNITS_BITS
                                                                       : ES_UNITS_NATS;
  if (es_view_is_heatmap (view))
    {
      params->colormap = g_settings_get_enum (self->settings, "colormap");
      params->reversed = g_settings_get_boolean (self->settings, "reversed");
    }
  else
    {
      params->colormap = ES_COLORMAP_GRAY;
      params->reversed = false;
    }
  params->job.variant = NULL;
  if (has_op)
    {
      g_autofree char *id = g_settings_get_string (self->settings, variant_keys[op]);
      const EsVariant *variant = *id ? es_variant_find (op, id) : NULL;

      params->job.variant = variant ? variant->id : NULL;
    }
}

static EsBackendChoice
current_backend (EsWindow *self)
{
  switch (g_settings_get_enum (self->settings, "backend"))
    {
    case 1:
      return ES_BACKEND_CPU;
    case 2:
      return ES_BACKEND_CUDA;
    default:
      return ES_BACKEND_AUTO;
    }
}

static void
add_item (EsRequest *request, EsWindow *self, EsView view)
{
  for (int i = 0; i < request->n_items; i++)
    if (request->items[i].view == view)
      return;
  request->items[request->n_items].view = view;
  es_window_get_view_params (self, view, &request->items[request->n_items].params);
  request->n_items++;
}

static gboolean
send_request (gpointer data)
{
  EsWindow *self = data;
  EsRequest *request;
  EsView views[4];
  int n;

  self->update_idle = 0;
  if (self->source == NULL)
    {
      /* No image yet: the worker still sets up the engine for the chosen
       * backend, so the Compute section can say whether CUDA is usable. */
      request = g_new0 (EsRequest, 1);
      request->generation = self->generation;
      request->backend = current_backend (self);
      g_string_truncate (self->changes, 0);
      es_worker_submit (self->worker, request);
      return G_SOURCE_REMOVE;
    }

  request = g_new0 (EsRequest, 1);
  request->generation = ++self->generation;
  request->source = es_source_ref (self->source);
  request->backend = current_backend (self);
  n = current_views (self, views);
  for (int i = 0; i < n; i++)
    add_item (request, self, views[i]);
  request->n_shown = request->n_items;
  /* The histograms need the quantized and equalized images too. */
  if (g_settings_get_boolean (self->settings, "show-sidebar"))
    {
      add_item (request, self, ES_VIEW_QUANTIZED);
      add_item (request, self, ES_VIEW_EQUALIZED);
    }

  log_change (self, request->generation, self->changes->len ? self->changes->str : "update");
  g_string_truncate (self->changes, 0);
  es_worker_submit (self->worker, request);
  update_busy (self);
  return G_SOURCE_REMOVE;
}

/* Changes within one main-loop iteration make one request. */
static void
schedule_update (EsWindow *self, const char *what)
{
  if (self->changes->len)
    g_string_append (self->changes, ", ");
  g_string_append (self->changes, what);
  if (self->update_idle == 0)
    self->update_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE, send_request, self, NULL);
}

static EsLayer *
current_layer (EsWindow *self, EsView view)
{
  EsLayer *layer = self->shown[view];

  return layer && layer->source == self->source ? layer : NULL;
}

static void
update_position (EsWindow *self)
{
  EsView views[4];
  g_autoptr (GString) text = NULL;
  EsLayer *layer, *levels_layer;
  guint32 gray;
  int levels, n = current_views (self, views);

  if (self->hover_pane < 0 || self->hover_pane >= n || self->source == NULL
      || !(layer = current_layer (self, views[self->hover_pane]))
      || self->hover_x >= self->source->image.width || self->hover_y >= self->source->image.height)
    {
      gtk_label_set_label (self->position_label, " ");
      return;
    }

  text = g_string_new (NULL);
  gray = es_source_sample (self->source, self->hover_x, self->hover_y);
  levels_layer = current_layer (self, ES_VIEW_ENTROPY);
  if (!levels_layer)
    levels_layer = current_layer (self, ES_VIEW_QUANTIZED);
  levels = levels_layer ? levels_layer->params.job.levels
                        : g_settings_get_int (self->settings, "levels");
  g_string_append_printf (text, "x %5d   y %5d      gray %5u      level %3u",
                          self->hover_x, self->hover_y, gray,
                          self->source->image.levels > 0
                            ? gray
                            : es_quantize_sample (gray, levels, self->source->image.depth));

  if (layer->view != ES_VIEW_ORIGINAL)
    {
      double value = es_layer_value (layer, self->hover_x, self->hover_y);
      const EsValueInfo *info = &layer->result.info;

      if (layer->result.values.format == ES_FORMAT_F32)
        g_string_append_printf (text, "      %s %.4f %s", es_view_title (layer->view),
                                value * (info->unit_scale > 0 ? info->unit_scale : 1.0),
                                info->units ? info->units : "");
      else
        g_string_append_printf (text, "      %s %d", es_view_title (layer->view), (int) value);
    }
  gtk_label_set_label (self->position_label, text->str);
}

static void
update_zoom_label (EsWindow *self)
{
  double percent = es_canvas_get_zoom (self->canvas) * 100;
  char label[32];

  g_snprintf (label, sizeof label, percent < 10 ? "%.1f %%" : "%.0f %%", percent);
  gtk_menu_button_set_label (self->zoom_button, label);
}

/* What the active view is, in words: the job behind it. */
static void
update_job_label (EsWindow *self, const EsLayer *layer)
{
  const EsJob *job = &layer->params.job;
  g_autofree char *text = NULL;

  switch (layer->view)
    {
    case ES_VIEW_ENTROPY:
      text = g_strdup_printf ("Entropy · %d×%d window · %d levels · %s", job->window, job->window,
                              job->levels, layer->result.info.units);
      break;
    case ES_VIEW_QUANTIZED:
      text = g_strdup_printf ("Quantized · %d levels", job->levels);
      break;
    case ES_VIEW_SHARPENED:
      text = g_strdup_printf ("Sharpened · amount %.2f", job->amount);
      break;
    case ES_VIEW_EQUALIZED:
      text = g_strdup ("Equalized");
      break;
    default:
      text = g_strdup_printf ("Original · %d-bit", layer->source->image.depth);
      break;
    }
  gtk_label_set_label (self->info_label, text);
}

static void
display_scale (EsWindow *self, const EsLayer *layer, EsColorScale *scale)
{
  es_layer_display_scale (layer, g_settings_get_enum (self->settings, "colormap"),
                          g_settings_get_boolean (self->settings, "reversed"), scale);
}

static void
update_variants (EsWindow *self)
{
  EsOp op = ES_OP_QUANTIZE;
  gboolean has_op = es_view_get_op (es_window_get_active_view (self), &op);

  es_sidebar_set_variants (self->sidebar, has_op, op, self->cuda_in_use);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VARIANT]);
}

/* Shows the newest results of the current views, once all of them exist. */
static void
refresh_view (EsWindow *self)
{
  EsCanvasPane panes[4];
  EsView views[4];
  EsLayer *active;
  EsColorScale scale;
  int n = current_views (self, views);

  for (int i = 0; i < n; i++)
    {
      panes[i].layer = current_layer (self, views[i]);
      if (panes[i].layer == NULL)
        return;
      display_scale (self, panes[i].layer, &panes[i].scale);
    }
  es_canvas_set_panes (self->canvas, panes, n);
  gtk_stack_set_visible_child_name (self->stack, "canvas");

  active = panes[MIN (es_canvas_get_active_pane (self->canvas), n - 1)].layer;
  update_job_label (self, active);
  display_scale (self, active, &scale);
  es_colorbar_set_scale (self->colorbar, &scale, active->result.info.unit_scale,
                         active->result.info.units,
                         active->result.values.format != ES_FORMAT_F32);
  es_timings_update (self->timings, self->engine_description, active,
                     self->shown_fresh[active->view]);
  es_sidebar_set_histograms (self->sidebar, self->source,
                             current_layer (self, ES_VIEW_QUANTIZED),
                             current_layer (self, ES_VIEW_EQUALIZED),
                             g_settings_get_enum (self->settings, "colormap"),
                             g_settings_get_boolean (self->settings, "reversed"));
  update_variants (self);
  update_position (self);
}

static void
on_response (EsResponse *response, gpointer user_data)
{
  EsWindow *self = user_data;

  if (response->complete)
    self->answered_generation = MAX (self->answered_generation, response->generation);
  if (response->engine.description)
    {
      g_free (self->engine_description);
      self->engine_description = g_strdup (response->engine.description);
      self->cuda_in_use = response->engine.backend == ES_BACKEND_CUDA;
    }
  es_sidebar_set_cuda (self->sidebar, response->engine.cuda_usable, response->engine.cuda_reason);
  if (response->source == NULL)
    {
      /* The answer to a request without an image: the engine alone. */
      if (response->notice)
        show_toast (self, response->notice);
      es_response_free (response);
      return;
    }

  /* Anything older than what is on screen, or for another image, is stale
   * (the second response to the request on screen is not). */
  if (response->source != self->source || response->generation < self->shown_generation)
    {
      es_response_free (response);
      update_busy (self);
      return;
    }
  if (response->generation > self->shown_generation)
    {
      self->shown_generation = response->generation;
      self->last_worker_ms = response->worker_ms;
      self->last_jobs_ms = response->jobs_ms;
    }
  for (int i = 0; i < response->n_layers; i++)
    {
      EsLayer *layer = response->layers[i];

      if (layer == NULL)
        continue;
      g_clear_pointer (&self->shown[layer->view], es_layer_unref);
      self->shown[layer->view] = es_layer_ref (layer);
      self->shown_fresh[layer->view] = response->fresh[i];
    }
  if (response->error)
    show_toast (self, response->error);
  if (response->notice)
    show_toast (self, response->notice);
  refresh_view (self);
  watch_next_paint (self);
  es_response_free (response);
  update_busy (self);
}

/* Opening */

typedef struct {
  GFile *file;
  char *name;
  int levels;
  guint64 max_pixels;         /* the "max-pixels" setting */
  guint64 budget;             /* es_image_get_max_pixels () when the load started */
  guint64 serial;
  gboolean remember_folder;   /* not for the bundled sample */
} LoadData;

static void
load_data_free (gpointer data)
{
  LoadData *load = data;

  g_object_unref (load->file);
  g_free (load->name);
  g_free (load);
}

static void
load_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  LoadData *load = task_data;
  g_autofree char *contents = NULL;
  gsize length;
  GError *error = NULL;
  EsError es_error = { 0 };
  EsImage image = { 0 };

  if (!g_file_load_contents (load->file, cancellable, &contents, &length, NULL, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (!es_load_memory (contents, length, load->levels, &image, &es_error))
    {
      g_autofree char *budget = g_strdup_printf ("the limit of %" G_GUINT64_FORMAT " pixels",
                                                 load->budget);
      g_autofree char *setting = g_strdup_printf ("the limit of %" G_GUINT64_FORMAT " pixels",
                                                  load->max_pixels);
      g_auto (GStrv) parts = g_strsplit (es_error.message, budget, 2);
      g_autofree char *message = g_strjoinv (setting, parts);

      /* The budget can stand above the setting (see apply_max_pixels); the
       * image is over both, and the user knows the setting. */
      g_task_return_new_error (task, G_IO_ERROR,
                               es_error.code == ES_ERROR_LIMIT ? G_IO_ERROR_MESSAGE_TOO_LARGE
                                                               : G_IO_ERROR_INVALID_DATA,
                               "%s", message);
      return;
    }
  if ((guint64) image.width * (guint64) image.height > load->max_pixels)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                               "image size %d×%d is over the limit of %" G_GUINT64_FORMAT " pixels",
                               image.width, image.height, load->max_pixels);
      es_image_clear (&image);
      return;
    }
  g_task_return_pointer (task, es_source_new (load->file, load->name, &image),
                         (GDestroyNotify) es_source_unref);
}

static guint64
source_pixels (const EsSource *source)
{
  return source ? (guint64) source->image.width * (guint64) source->image.height : 0;
}

/* The process-wide pixel budget that decoders check before they allocate
 * follows the "max-pixels" setting, but never drops below an image open in
 * a window: every job on it allocates outputs of its size. An image between
 * the two is refused after decoding (load_thread). */
static void
apply_max_pixels (EsWindow *self)
{
  GtkApplication *application = gtk_window_get_application (GTK_WINDOW (self));
  guint64 budget = g_settings_get_uint64 (self->settings, "max-pixels");

  budget = MAX (budget, source_pixels (self->source));
  for (GList *l = application ? gtk_application_get_windows (application) : NULL; l; l = l->next)
    if (ES_IS_WINDOW (l->data))
      budget = MAX (budget, source_pixels (ES_WINDOW (l->data)->source));
  es_image_set_max_pixels (budget);
}

static void
set_source (EsWindow *self, EsSource *source, gboolean remember_folder)
{
  g_autofree char *subtitle = NULL, *title = NULL;
  g_autoptr (GFile) parent = NULL;

  g_clear_pointer (&self->source, es_source_unref);
  self->source = source;
  apply_max_pixels (self);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.compare", TRUE);

  adw_window_title_set_title (self->window_title, source->name);
  title = g_strdup_printf ("%s — Entroscope", source->name);
  gtk_window_set_title (GTK_WINDOW (self), title);
  subtitle = g_strdup_printf ("%d × %d · %d-bit%s", source->image.width, source->image.height,
                              source->image.depth,
                              source->image.levels > 0 ? " · text matrix" : "");
  adw_window_title_set_subtitle (self->window_title, subtitle);

  parent = remember_folder && source->file ? g_file_get_parent (source->file) : NULL;
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

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self = ES_WINDOW (object);
  self->loads--;
  update_busy (self);

  if (source == NULL)
    {
      gboolean too_large = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
      g_autofree char *message = g_strdup_printf ("Could not open “%s”: %s%s", load->name,
                                                  error->message,
                                                  too_large ? " (Maximum Image Size is in the "
                                                              "side panel)"
                                                            : "");
      show_toast (self, message);
      if (self->source == NULL && self->loads == 0)
        gtk_stack_set_visible_child_name (self->stack, "empty");
      return;
    }
  if (load->serial != self->load_serial)
    {
      es_source_unref (source);
      return;
    }
  set_source (self, source, load->remember_folder);
  what = g_strdup_printf ("open %s", source->name);
  schedule_update (self, what);
  if (self->compare_when_open)
    {
      self->compare_when_open = FALSE;
      gtk_widget_activate_action (GTK_WIDGET (self), "win.compare", NULL);
    }
}

static void
open_file (EsWindow *self, GFile *file, gboolean remember_folder)
{
  GTask *task;
  LoadData *load;
  g_autoptr (GFileInfo) info = NULL;

  g_return_if_fail (ES_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  load = g_new0 (LoadData, 1);
  load->file = g_object_ref (file);
  load->name = g_file_get_basename (file);
  if (load->name == NULL || !g_utf8_validate (load->name, -1, NULL))
    {
      g_free (load->name);
      load->name = g_file_get_parse_name (file);
    }
  load->levels = g_settings_get_int (self->settings, "levels");
  apply_max_pixels (self);
  load->max_pixels = g_settings_get_uint64 (self->settings, "max-pixels");
  load->budget = es_image_get_max_pixels ();
  load->serial = ++self->load_serial;
  load->remember_folder = remember_folder;
  self->loads++;
  update_busy (self);

  task = g_task_new (self, self->cancellable, on_loaded, NULL);
  g_task_set_task_data (task, load, load_data_free);
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
}

void
es_window_open (EsWindow *self, GFile *file)
{
  open_file (self, file, TRUE);
}

gboolean
es_window_open_sample (EsWindow *self)
{
  const char *candidates[] = { ES_SAMPLE_IMAGE, ES_SAMPLE_IMAGE_SOURCE };

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

static void
set_current_folder (EsWindow *self, GtkFileChooser *chooser)
{
  g_autofree char *uri = g_settings_get_string (self->settings, "last-folder");

  if (*uri)
    {
      g_autoptr (GFile) folder = g_file_new_for_uri (uri);
      gtk_file_chooser_set_current_folder (chooser, folder, NULL);
    }
}

static void
add_filter (GtkFileChooser *chooser, const char *name, const char *pattern)
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

  chooser = gtk_file_chooser_native_new ("Open an Image", GTK_WINDOW (self),
                                         GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, "Images and text matrices");
  gtk_file_filter_add_mime_type (filter, "image/png");
  gtk_file_filter_add_mime_type (filter, "image/x-portable-graymap");
  gtk_file_filter_add_pattern (filter, "*.png");
  gtk_file_filter_add_pattern (filter, "*.pgm");
  gtk_file_filter_add_pattern (filter, "*.txt");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  g_object_unref (filter);
  add_filter (GTK_FILE_CHOOSER (chooser), "All files", "*");
  set_current_folder (self, GTK_FILE_CHOOSER (chooser));

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

/* Exporting and copying */

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

static void
on_task_done (GTask *task, GParamSpec *pspec, EsWindow *self)
{
  self->tasks--;
  update_busy (self);
}

void
es_window_export_async (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar,
                        GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  EsLayer *layer = current_layer (self, es_window_get_active_view (self));
  ExportData *export;
  EsColorScale scale;

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
  display_scale (self, layer, &scale);
  es_layer_export_result (layer, &scale, &export->result);
  export->format = format;
  export->colorbar = colorbar;
  g_task_set_task_data (task, export, export_data_free);

  self->tasks++;
  update_busy (self);
  g_signal_connect_object (task, "notify::completed", G_CALLBACK (on_task_done), self, 0);
  g_task_run_in_thread (task, export_thread);
  g_object_unref (task);
}

gboolean
es_window_export_finish (EsWindow *self, GAsyncResult *result, GError **error)
{
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

  if (es_window_export_finish (self, result, &error))
    message = g_strdup_printf ("Exported “%s”", name);
  else
    message = g_strdup_printf ("Could not export “%s”: %s", name, error->message);
  show_toast (self, message);
}

static const char *const export_ids[] = { "png", "raw16", "text" };
static const char *const export_labels[] = { "Colormapped PNG", "Raw 16-bit PNG", "Text matrix" };
static const char *const export_extensions[] = { "png", "png", "txt" };

static void
on_export_response (GtkNativeDialog *dialog, int response, EsWindow *self)
{
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);

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
  set_current_folder (self, GTK_FILE_CHOOSER (chooser));
  add_filter (GTK_FILE_CHOOSER (chooser), "PNG images", "*.png");
  add_filter (GTK_FILE_CHOOSER (chooser), "Text matrices", "*.txt");
  add_filter (GTK_FILE_CHOOSER (chooser), "All files", "*");

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

  if (bytes == NULL)
    return;
  /* Only wrapping happens here: the pixels were made in the thread. */
  texture = gdk_memory_texture_new (es_layer_width (copy->layer), es_layer_height (copy->layer),
                                    GDK_MEMORY_R8G8B8, bytes, copy->stride);
  gdk_clipboard_set_texture (gtk_widget_get_clipboard (GTK_WIDGET (self)), texture);
  show_toast (self, "Copied the view to the clipboard");
}

static void
copy_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  EsLayer *layer = current_layer (self, es_window_get_active_view (self));
  CopyData *copy;
  GTask *task;

  if (layer == NULL)
    return;
  copy = g_new0 (CopyData, 1);
  copy->layer = es_layer_ref (layer);
  display_scale (self, layer, &copy->scale);
  task = g_task_new (self, self->cancellable, on_copied, NULL);
  g_task_set_task_data (task, copy, copy_data_free);
  self->tasks++;
  update_busy (self);
  g_signal_connect_object (task, "notify::completed", G_CALLBACK (on_task_done), self, 0);
  g_task_run_in_thread (task, copy_thread);
  g_object_unref (task);
}

/* Comparing variants */

static EsView
op_view (EsOp op)
{
  switch (op)
    {
    case ES_OP_QUANTIZE:
      return ES_VIEW_QUANTIZED;
    case ES_OP_EQUALIZE:
      return ES_VIEW_EQUALIZED;
    case ES_OP_SHARPEN:
      return ES_VIEW_SHARPENED;
    case ES_OP_ENTROPY:
    default:
      return ES_VIEW_ENTROPY;
    }
}

void
es_window_compare_async (EsWindow *self, EsOp op, int repeats, GCancellable *cancellable,
                         EsCompareProgressFunc progress, gpointer progress_data,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  EsViewParams params;

  g_task_set_source_tag (task, es_window_compare_async);
  if (self->source == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "No image is open");
      g_object_unref (task);
      return;
    }
  es_window_get_view_params (self, op_view (op), &params);
  self->tasks++;
  update_busy (self);
  g_signal_connect_object (task, "notify::completed", G_CALLBACK (on_task_done), self, 0);
  es_worker_compare (self->worker, task, self->source, current_backend (self), &params.job,
                     repeats, progress, progress_data);
}

EsComparison *
es_window_compare_finish (EsWindow *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
es_window_compare_when_open (EsWindow *self)
{
  if (self->source)
    gtk_widget_activate_action (GTK_WIDGET (self), "win.compare", NULL);
  else
    self->compare_when_open = TRUE;
}

GtkWindow *
es_window_get_compare_window (EsWindow *self)
{
  return self->compare_window ? GTK_WINDOW (self->compare_window) : NULL;
}

static void
compare_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  EsOp op = ES_OP_ENTROPY;

  /* The operation on screen; the original runs none, so entropy. */
  es_view_get_op (es_window_get_active_view (self), &op);
  if (self->compare_window == NULL)
    {
      self->compare_window = es_compare_window_new (self, op);
      g_object_add_weak_pointer (G_OBJECT (self->compare_window),
                                 (gpointer *) &self->compare_window);
      gtk_window_present (GTK_WINDOW (self->compare_window));
      es_compare_window_run (self->compare_window);
      return;
    }
  gtk_window_present (GTK_WINDOW (self->compare_window));
  /* A new operation starts a run by itself; the same one runs again, for
   * the image and settings of now. */
  if (es_compare_window_get_op (self->compare_window) != op)
    es_compare_window_set_op (self->compare_window, op);
  else
    es_compare_window_run (self->compare_window);
}

/* Zoom */

static void
zoom_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);

  if (g_str_equal (action_name, "win.zoom-in"))
    es_canvas_zoom_in (self->canvas);
  else if (g_str_equal (action_name, "win.zoom-out"))
    es_canvas_zoom_out (self->canvas);
  else if (g_str_equal (action_name, "win.zoom-fit"))
    es_canvas_zoom_fit (self->canvas);
  else
    es_canvas_set_zoom (self->canvas, g_variant_get_double (parameter));
}

/* Settings */

static void
on_settings_changed (GSettings *settings, const char *key, EsWindow *self)
{
  g_autoptr (GVariant) value = g_settings_get_value (settings, key);
  g_autofree char *printed = g_variant_print (value, FALSE);
  g_autofree char *what = g_strdup_printf ("%s=%s", key, printed);

  if (g_str_equal (key, "colormap") || g_str_equal (key, "reversed"))
    {
      /* Colours need no new job: the canvas recolours only what is visible. */
      log_change (self, self->shown_generation, what);
      refresh_view (self);
      watch_next_paint (self);
    }
  else if (g_str_equal (key, "view"))
    {
      es_canvas_set_active_pane (self->canvas, 1);
      refresh_view (self);
      schedule_update (self, what);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW]);
    }
  else if (g_str_equal (key, "show-sidebar"))
    {
      schedule_update (self, what);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOW_SIDEBAR]);
    }
  else if (g_str_equal (key, "show-timings"))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOW_TIMINGS]);
  else if (g_str_equal (key, "backend"))
    {
      schedule_update (self, what);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BACKEND]);
    }
  else if (g_str_has_prefix (key, "variant-"))
    {
      schedule_update (self, what);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VARIANT]);
    }
  else if (g_str_equal (key, "window") || g_str_equal (key, "levels") || g_str_equal (key, "amount")
           || g_str_equal (key, "range") || g_str_equal (key, "units"))
    schedule_update (self, what);
  else if (g_str_equal (key, "max-pixels"))
    apply_max_pixels (self);
}

static char *
current_variant (EsWindow *self)
{
  EsOp op;
  g_autofree char *id = NULL;
  const EsVariant *variants;
  size_t n;

  if (!es_view_get_op (es_window_get_active_view (self), &op))
    return g_strdup ("");
  id = g_settings_get_string (self->settings, variant_keys[op]);
  if (*id && es_variant_find (op, id))
    return g_steal_pointer (&id);
  variants = es_variants (op, &n);
  for (size_t i = 0; i < n; i++)
    if (variants[i].is_default)
      return g_strdup (variants[i].id);
  return g_strdup ("");
}

/* GObject */

EsWindow *
es_window_new (AdwApplication *application, GSettings *settings)
{
  return g_object_new (ES_TYPE_WINDOW, "application", application, "settings", settings, NULL);
}

gboolean
es_window_get_busy (EsWindow *self)
{
  return self->busy;
}

EsSource *
es_window_get_source (EsWindow *self)
{
  return self->source;
}

EsLayer *
es_window_get_layer (EsWindow *self, EsView view)
{
  return current_layer (self, view);
}

EsCanvas *
es_window_get_canvas (EsWindow *self)
{
  return self->canvas;
}

const char *
es_window_get_engine_description (EsWindow *self)
{
  return self->engine_description;
}

const char *
es_window_get_last_message (EsWindow *self)
{
  return self->last_message;
}

static gboolean
update_status (gpointer data)
{
  EsWindow *self = data;

  self->status_idle = 0;
  update_position (self);
  update_zoom_label (self);
  return G_SOURCE_REMOVE;
}

/* The canvas reports zoom and hover changes from its size allocation too;
 * labels change size, so they are updated after the frame, not during it. */
static void
schedule_status (EsWindow *self)
{
  if (self->status_idle == 0)
    self->status_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 10, update_status, self, NULL);
}

static void
on_hover (EsCanvas *canvas, int pane, int x, int y, EsWindow *self)
{
  self->hover_pane = pane;
  self->hover_x = x;
  self->hover_y = y;
  schedule_status (self);
}

static void
on_active_pane (EsCanvas *canvas, GParamSpec *pspec, EsWindow *self)
{
  refresh_view (self);
}

static void
on_zoom (EsCanvas *canvas, GParamSpec *pspec, EsWindow *self)
{
  schedule_status (self);
}

static gboolean
es_window_close_request (GtkWindow *window)
{
  EsWindow *self = ES_WINDOW (window);
  int width, height;

  gtk_window_get_default_size (window, &width, &height);
  g_settings_set_int (self->settings, "window-width", width);
  g_settings_set_int (self->settings, "window-height", height);
  g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
  return GTK_WINDOW_CLASS (es_window_parent_class)->close_request (window);
}

static void
es_window_constructed (GObject *object)
{
  EsWindow *self = ES_WINDOW (object);

  G_OBJECT_CLASS (es_window_parent_class)->constructed (object);

  gtk_window_set_default_size (GTK_WINDOW (self), g_settings_get_int (self->settings, "window-width"),
                               g_settings_get_int (self->settings, "window-height"));
  if (g_settings_get_boolean (self->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));

  es_sidebar_bind (self->sidebar, self->settings);
  es_settings_bind_choice (self->settings, "view", self->view_dropdown, view_nicks);
  g_settings_bind (self->settings, "show-sidebar", self->flap, "reveal-flap", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "show-timings", self->timings_revealer, "reveal-child",
                   G_SETTINGS_BIND_GET);
  g_signal_connect_object (self->settings, "changed", G_CALLBACK (on_settings_changed), self, 0);
  if (es_debug_timing ())
    g_signal_connect (self, "realize", G_CALLBACK (on_realize), NULL);

  /* The property actions read their state again, now from the settings. */
  for (int i = PROP_VIEW; i <= PROP_SHOW_SIDEBAR; i++)
    g_object_notify_by_pspec (object, properties[i]);

  apply_max_pixels (self);
  /* The active pane of the grid starts on the entropy heatmap. */
  es_canvas_set_active_pane (self->canvas, 1);
  update_variants (self);
  update_zoom_label (self);
}

static void
es_window_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  EsWindow *self = ES_WINDOW (object);

  /* The template's actionable widgets ask for action states before the
   * construct-only settings arrive: they get the defaults until then. */
  if (self->settings == NULL)
    {
      g_param_value_set_default (pspec, value);
      return;
    }

  switch (prop_id)
    {
    case PROP_VIEW:
      g_value_take_string (value, g_settings_get_string (self->settings, "view"));
      break;
    case PROP_BACKEND:
      g_value_take_string (value, g_settings_get_string (self->settings, "backend"));
      break;
    case PROP_VARIANT:
      g_value_take_string (value, current_variant (self));
      break;
    case PROP_SHOW_TIMINGS:
      g_value_set_boolean (value, g_settings_get_boolean (self->settings, "show-timings"));
      break;
    case PROP_SHOW_SIDEBAR:
      g_value_set_boolean (value, g_settings_get_boolean (self->settings, "show-sidebar"));
      break;
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
es_window_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  EsWindow *self = ES_WINDOW (object);
  EsOp op;

  switch (prop_id)
    {
    case PROP_SETTINGS:
      self->settings = g_value_dup_object (value);
      break;
    case PROP_VIEW:
      g_settings_set_string (self->settings, "view", g_value_get_string (value));
      break;
    case PROP_BACKEND:
      g_settings_set_string (self->settings, "backend", g_value_get_string (value));
      break;
    case PROP_VARIANT:
      if (es_view_get_op (es_window_get_active_view (self), &op))
        g_settings_set_string (self->settings, variant_keys[op], g_value_get_string (value));
      break;
    case PROP_SHOW_TIMINGS:
      g_settings_set_boolean (self->settings, "show-timings", g_value_get_boolean (value));
      break;
    case PROP_SHOW_SIDEBAR:
      g_settings_set_boolean (self->settings, "show-sidebar", g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
es_window_dispose (GObject *object)
{
  EsWindow *self = ES_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  if (self->compare_window)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->compare_window),
                                    (gpointer *) &self->compare_window);
      gtk_window_destroy (GTK_WINDOW (self->compare_window));
      self->compare_window = NULL;
    }
  g_clear_handle_id (&self->update_idle, g_source_remove);
  g_clear_handle_id (&self->status_idle, g_source_remove);
  g_clear_pointer (&self->worker, es_worker_free);
  g_clear_signal_handler (&self->after_paint_handler, self->paint_clock);
  g_clear_object (&self->paint_clock);
  if (self->chooser)
    gtk_native_dialog_destroy (self->chooser);
  g_clear_object (&self->chooser);
  for (int i = 0; i < ES_N_VIEWS; i++)
    g_clear_pointer (&self->shown[i], es_layer_unref);
  g_clear_pointer (&self->source, es_source_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), ES_TYPE_WINDOW);
  G_OBJECT_CLASS (es_window_parent_class)->dispose (object);
}

static void
es_window_finalize (GObject *object)
{
  EsWindow *self = ES_WINDOW (object);

  g_queue_clear_full (&self->pending_log, pending_change_free);
  g_string_free (self->changes, TRUE);
  g_free (self->engine_description);
  g_free (self->last_message);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->settings);
  G_OBJECT_CLASS (es_window_parent_class)->finalize (object);
}

static void
es_window_class_init (EsWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->constructed = es_window_constructed;
  object_class->get_property = es_window_get_property;
  object_class->set_property = es_window_set_property;
  object_class->dispose = es_window_dispose;
  object_class->finalize = es_window_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = es_window_close_request;

  properties[PROP_VIEW] =
    g_param_spec_string ("view", NULL, NULL, "entropy",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BACKEND] =
    g_param_spec_string ("backend", NULL, NULL, "auto",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_VARIANT] =
    g_param_spec_string ("variant", NULL, NULL, "",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_TIMINGS] =
    g_param_spec_boolean ("show-timings", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_SIDEBAR] =
    g_param_spec_boolean ("show-sidebar", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SETTINGS] =
    g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                         G_PARAM_WRITABLE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (ES_TYPE_CANVAS);
  g_type_ensure (ES_TYPE_COLORBAR);
  g_type_ensure (ES_TYPE_SIDEBAR);
  g_type_ensure (ES_TYPE_TIMINGS);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/entroscope/Entroscope/es-window.ui");
  gtk_widget_class_bind_template_child (widget_class, EsWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, view_dropdown);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, spinner);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, zoom_button);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, flap);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, canvas);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, timings_revealer);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, timings);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, colorbar);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, position_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, info_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, sidebar);
  gtk_widget_class_bind_template_callback (widget_class, on_hover);
  gtk_widget_class_bind_template_callback (widget_class, on_active_pane);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.export", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.copy", NULL, copy_action);
  gtk_widget_class_install_action (widget_class, "win.compare", NULL, compare_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom", "d", zoom_action);
  gtk_widget_class_install_property_action (widget_class, "win.view", "view");
  gtk_widget_class_install_property_action (widget_class, "win.backend", "backend");
  gtk_widget_class_install_property_action (widget_class, "win.variant", "variant");
  gtk_widget_class_install_property_action (widget_class, "win.show-timings", "show-timings");
  gtk_widget_class_install_property_action (widget_class, "win.show-sidebar", "show-sidebar");

  /* Plain keys act only when no text field has the focus (they bubble up
   * from the focus widget); their Ctrl forms are application accelerators. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_0, 0, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, 0, "win.zoom", "d", 1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_1, 0, "win.zoom", "d", 1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_2, 0, "win.zoom", "d", 2.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_2, 0, "win.zoom", "d", 2.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "win.zoom-out", NULL);
}

static void
es_window_init (EsWindow *self)
{
  GtkDropTarget *target;
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };

  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.compare", FALSE);
  self->cancellable = g_cancellable_new ();
  self->changes = g_string_new (NULL);
  g_queue_init (&self->pending_log);
  self->hover_pane = -1;

  target = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (target, types, G_N_ELEMENTS (types));
  g_signal_connect (target, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self->stack), GTK_EVENT_CONTROLLER (target));

  self->worker = es_worker_new (on_response, self);
  schedule_update (self, "start");
}
