/* SPDX-License-Identifier: MIT */
/* EsWindow: settings in, jobs out to the worker, newest results in and on screen; the GObject itself.
 * Its other parts: es-window-status.c, -open.c, -export.c, -compare.c, -layout.c, -settings.c, -files.c. */
#include "es-window-private.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n-lib.h>

#include "es-accessible.h"
#include "es-settings.h"
#include "es-tools.h"

enum {
  PROP_0,
  PROP_VIEW,
  PROP_BACKEND,
  PROP_VARIANT,
  PROP_SHOW_TIMINGS,
  PROP_SHOW_SIDEBAR,
  PROP_BUSY,
  PROP_HARDWARE_COUNTERS,
  PROP_SETTINGS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE_WITH_CODE (EsWindow, es_window, ADW_TYPE_APPLICATION_WINDOW,
                               G_IMPLEMENT_INTERFACE (ES_TYPE_COMPARER, _es_window_comparer_iface_init)
                                 G_IMPLEMENT_INTERFACE (ES_TYPE_TOOLS_HOST, _es_window_tools_host_iface_init))

#define GRID_NICK "grid"

/* Messages */

void
_es_window_show_message (EsWindow *self, const char *message)
{
  g_autofree char *markup = g_markup_escape_text (message, -1);
  AdwToast *toast;

  g_free (self->last_message);
  self->last_message = g_strdup (message);
  if (self->toast_overlay == NULL) /* disposed: a late export result */
    return;
  toast = adw_toast_new (markup);
  adw_toast_set_timeout (toast, 6);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

/* What is shown */

int
_es_window_get_views (EsWindow *self, EsView *views)
{
  /* Parts set up in es_window_init ask before the settings arrive: the default view. */
  g_autofree char *nick = self->settings ? g_settings_get_string (self->settings, "view") : g_strdup ("entropy");
  EsView view;

  /* The orthogonal views are three slices of one view. */
  if (self->settings && _es_window_get_orthogonal (self, &view))
    {
      views[0] = view;
      return 1;
    }
  if (g_str_equal (nick, GRID_NICK))
    return es_view_get_grid (views, ES_CANVAS_MAX_PANES);
  views[0] = es_view_from_name (nick, &view) ? view : ES_VIEW_ENTROPY;
  return 1;
}

/* The grid starts on its first heatmap (the entropy). */
int
_es_window_first_grid_heatmap (void)
{
  EsView views[ES_CANVAS_MAX_PANES];
  int n = es_view_get_grid (views, ES_CANVAS_MAX_PANES);

  for (int i = 0; i < n; i++)
    if (es_view_is_heatmap (views[i]))
      return i;
  return 0;
}

EsView
es_window_get_active_view (EsWindow *self)
{
  EsView views[ES_CANVAS_MAX_PANES];
  int n;

  g_return_val_if_fail (ES_IS_WINDOW (self), ES_VIEW_ORIGINAL);

  n = _es_window_get_views (self, views);
  return views[MIN (es_canvas_get_active_pane (self->canvas), n - 1)];
}

void
es_window_get_view_job (EsWindow *self, EsView view, EsJob *job)
{
  EsOp op = ES_OP_QUANTIZE;
  gboolean has_op = es_view_get_op (view, &op);

  g_return_if_fail (ES_IS_WINDOW (self));

  /* Only the parameters an operation uses are read, so that a change
   * elsewhere does not look like a new job; the rest keep the defaults. A
   * value beyond the operation's cap (quantize's 8-bit levels) is another
   * operation's, and this one takes its cap. */
  *job = (EsJob) ES_JOB_INIT (op);
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (op, id))
      es_job_set_param (job, id,
                        MIN (es_settings_get_number (self->settings, es_param (id)->name), es_op_param_max (op, id)));
  job->variant = NULL;
  if (has_op)
    {
      g_autofree char *key = es_settings_variant_key (op);
      g_autofree char *id = g_settings_get_string (self->settings, key);
      const EsVariant *variant = *id ? es_variant_find (op, id) : NULL;

      job->variant = variant ? variant->id : NULL;
    }
  if (has_op)
    {
      EsSource *source = _es_window_get_request_source (self);

      es_sidebar_definition_get (es_sidebar_get_definition (self->sidebar), source ? source->image.width : 0,
                                 source ? source->image.height : 0, source ? es_source_planes (source) : 1, job);
    }
}

void
_es_window_get_display (EsWindow *self, EsDisplay *display)
{
  display->colormap = g_settings_get_enum (self->settings, "colormap");
  display->reversed = g_settings_get_boolean (self->settings, "reversed");
  display->range = g_settings_get_enum (self->settings, "range") == 1 ? ES_RANGE_AUTO : ES_RANGE_ABSOLUTE;
  display->units = g_settings_get_enum (self->settings, "units") == 1 ? ES_UNITS_BITS : ES_UNITS_NATS;
}

EsBackendChoice
_es_window_get_backend (EsWindow *self)
{
  g_autofree char *nick = g_settings_get_string (self->settings, "backend");
  EsBackendChoice backend = ES_BACKEND_AUTO;

  /* The nicks of "backend" are the backends' names. */
  es_backend_from_name (nick, &backend);
  return backend;
}

EsSource *
_es_window_get_request_source (EsWindow *self)
{
  return self->pending_source ? self->pending_source : self->source;
}

static void
add_item (EsRequest *request, EsWindow *self, EsView view)
{
  for (int i = 0; i < request->n_items; i++)
    if (request->items[i].view == view)
      return;
  request->items[request->n_items].view = view;
  es_window_get_view_job (self, view, &request->items[request->n_items].job);
  request->n_items++;
}

static gboolean
send_request (gpointer data)
{
  EsWindow *self = data;
  EsSource *source = _es_window_get_request_source (self);
  EsRequest *request;
  EsView views[ES_CANVAS_MAX_PANES];
  int n;

  g_assert (ES_IS_WINDOW (self));
  self->update_idle = 0;

  request = g_new0 (EsRequest, 1);
  request->generation = ++self->generation;
  request->backend = _es_window_get_backend (self);
  request->counters = self->hardware_counters;
  /* No image yet: the worker still sets up the engine for the chosen
   * backend, so the Compute section can say whether CUDA is usable. */
  if (source)
    {
      request->source = es_source_ref (source);
      n = _es_window_get_views (self, views);
      for (int i = 0; i < n; i++)
        add_item (request, self, views[i]);
      request->n_shown = request->n_items;
      /* Orthogonal views and volumes' planes are drawn from layers that
       * the main thread makes: only 2-D views are rendered ahead. */
      _es_window_get_display (self, &request->display);
      if (es_source_planes (source) == 1 && !_es_window_get_orthogonal (self, NULL))
        for (int i = 0; i < n; i++)
          es_canvas_plan_viewport (self->canvas, n, source->image.width, source->image.height,
                                   &request->items[i].viewport);
      /* The side panel's histograms need their views too. */
      if (_es_window_get_panel_shown (self))
        for (int view = 0; view < ES_N_VIEWS; view++)
          if (es_view_has_histogram (view))
            add_item (request, self, view);
      _es_window_log_change (self, request->generation, self->changes->len ? self->changes->str : "update");
      _es_window_note_requested_keys (self, request->generation);
      /* A new request: whatever was cancelled before is not the news now. */
      gtk_label_set_label (self->notice_label, "");
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->notice_label), NULL);
    }
  g_string_truncate (self->changes, 0);
  es_worker_submit (self->worker, request);
  _es_window_update_busy (self);
  return G_SOURCE_REMOVE;
}

/* Changes within one main-loop iteration make one request. */
void
_es_window_schedule_update (EsWindow *self, const char *what)
{
  if (self->changes->len)
    g_string_append (self->changes, ", ");
  g_string_append (self->changes, what);
  if (self->update_idle == 0)
    self->update_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE, send_request, self, NULL);
}

EsLayer *
es_window_get_layer (EsWindow *self, EsView view)
{
  EsLayer *layer;

  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  g_return_val_if_fail (view < ES_N_VIEWS, NULL);

  layer = self->shown[view];
  return layer && layer->source == self->source ? _es_window_plane_of (self, layer) : NULL;
}

/* The side panel's rows follow the views on screen; its variants, the active one. */
static void
update_variants (EsWindow *self)
{
  EsView views[ES_CANVAS_MAX_PANES];
  int n = _es_window_get_views (self, views);
  unsigned ops_on_screen = 0;
  EsOp op = ES_OP_QUANTIZE;
  gboolean has_op = es_view_get_op (es_window_get_active_view (self), &op);

  for (int i = 0; i < n; i++)
    {
      EsOp shown;

      if (es_view_get_op (views[i], &shown))
        ops_on_screen |= 1u << shown;
    }
  es_sidebar_set_ops (self->sidebar, ops_on_screen, has_op, op);
  es_sidebar_set_variants (self->sidebar, has_op, op, self->cuda_in_use);
  if (has_op)
    {
      EsJob job;

      es_window_get_view_job (self, es_window_get_active_view (self), &job);
      es_sidebar_mark_variants (self->sidebar, &job);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VARIANT]);
}

/* What the colorbar's no-data swatch stands for in the active pane: a
 * float TIFF's NaN on the original, pixels without an entropy value (a
 * mask, a footprint that leaves the image, NaN input) on its heatmap. */
static const char *
no_data_label (const EsLayer *layer, const EsValueInfo *info)
{
  gboolean nan_input = layer->source != NULL && layer->source->image.meta.nan_samples > 0;

  if (layer->view == ES_VIEW_ORIGINAL)
    return nan_input ? "NaN" : NULL;
  if (layer->view == ES_VIEW_ENTROPY && (nan_input || info->may_have_no_data))
    return _ ("no data");
  return NULL;
}

/* Shows the newest results of the current views, once all of them exist. */
static void
refresh_view (EsWindow *self)
{
  EsCanvasPane panes[ES_CANVAS_MAX_PANES];
  EsView views[ES_CANVAS_MAX_PANES];
  EsLayer *active;
  EsColorScale scale;
  EsValueInfo info;
  EsDisplay display;
  EsTiming median;
  int n = _es_window_get_views (self, views), n_runs;
  /* The timing overlays follow the card (Ctrl+T). */
  gboolean show_overlays = g_settings_get_boolean (self->settings, "show-timings");
  char *overlays[ES_CANVAS_MAX_PANES] = { NULL };

  _es_window_get_display (self, &display);
  for (int i = 0; i < n; i++)
    {
      panes[i] = (EsCanvasPane){ .layer = es_window_get_layer (self, views[i]), .cross_x = -1 };
      if (panes[i].layer == NULL)
        return;
      if (panes[i].layer == self->shown[views[i]])
        panes[i].rendering = &self->renderings[views[i]];

      es_layer_display_scale (panes[i].layer, &display, &panes[i].scale);
      es_tools_adjust_scale (self->tools, views[i], &panes[i].scale);
    }
  for (int i = 0; i < n && show_overlays; i++)
    panes[i].overlay = overlays[i] = _es_window_overlay_text (self, panes[i].layer);
  es_canvas_set_panes (self->canvas, panes,
                       _es_window_get_orthogonal (self, NULL) ? _es_window_orthogonal_panes (self, panes) : n);
  for (int i = 0; i < n; i++)
    g_free (overlays[i]);
  /* The canvas holds what it took; a later refresh renders itself. */
  for (int view = 0; view < ES_N_VIEWS; view++)
    es_rendering_clear (&self->renderings[view]);
  es_tools_views_changed (self->tools);
  gtk_stack_set_visible_child_name (self->stack, "canvas");

  active = panes[MIN (es_canvas_get_active_pane (self->canvas), n - 1)].layer;
  es_layer_display_scale (active, &display, &scale);
  es_tools_adjust_scale (self->tools, active->view, &scale);
  es_layer_display_info (active, &display, &info);
  _es_window_update_job_label (self, active, &info);
  es_colorbar_set_scale (self->colorbar, &scale, info.unit_scale, info.value_offset, info.units,
                         active->result.values.format != ES_FORMAT_F32
                           && (info.unit_scale == 0 || info.unit_scale == 1));
  es_colorbar_set_no_data (self->colorbar, no_data_label (active, &info));
  _es_window_median_timing (self, active, &median, &n_runs);
  es_timings_update (self->timings, self->engine_description, active, &median, n_runs);
  es_sidebar_set_histograms (self->sidebar, _es_window_get_shown_source (self),
                             es_window_get_layer (self, ES_VIEW_QUANTIZED),
                             es_window_get_layer (self, ES_VIEW_EQUALIZED), display.colormap, display.reversed);
  update_variants (self);
  _es_window_update_actions (self);
  _es_window_update_position (self);
}

void
_es_window_refresh (EsWindow *self)
{
  /* The side panel follows the views at once, before their results exist. */
  update_variants (self);
  refresh_view (self);
}

/* The image on screen and the one being opened */

void
_es_window_update_subtitle (EsWindow *self)
{
  const char *opening = self->loading_name     ? self->loading_name
                        : self->pending_source ? self->pending_source->name
                                               : NULL;
  EsSource *source = self->source;
  g_autofree char *subtitle = NULL;

  if (self->window_title == NULL) /* disposed */
    return;
  /* Until the new image's views are ready, the old one stays, marked. */
  if (opening)
    subtitle = g_strdup_printf (_ ("Opening “%s”…"), opening);
  else if (source && es_source_planes (source) > 1)
    {
      g_autofree char *samples = _es_window_describe_samples (&source->image);

      /* TRANSLATORS: sides, planes, then the samples: "16-bit", "float"… */
      subtitle = g_strdup_printf (_ ("%d × %d × %d · %s volume"), source->image.width, source->image.height,
                                  es_source_planes (source), samples);
    }
  else if (source)
    {
      g_autofree char *samples = _es_window_describe_samples (&source->image);

      subtitle = g_strdup_printf (_ ("%d × %d · %s%s"), source->image.width, source->image.height, samples,
                                  source->image.levels > 0 ? _ (" · text matrix") : "");
    }
  adw_window_title_set_subtitle (self->window_title, subtitle);
}

void
_es_window_show_source (EsWindow *self, EsSource *source)
{
  g_autofree char *title = NULL;

  if (self->source != source)
    {
      g_clear_pointer (&self->source, es_source_unref);
      self->source = es_source_ref (source);
      es_layer_keep_spares_for (source->image.width, source->image.height);
      _es_window_clear_error (self);
      _es_window_forget_timings (self);
      _es_window_volume_source_changed (self);
    }
  _es_window_apply_max_pixels (self);
  _es_window_update_actions (self);
  es_sidebar_definition_set_image_size (es_sidebar_get_definition (self->sidebar), source->image.width,
                                        source->image.height, es_source_planes (source));
  adw_window_title_set_title (self->window_title, source->name);
  title = g_strdup_printf ("%s — Entroscope", source->name);
  gtk_window_set_title (GTK_WINDOW (self), title);
  _es_window_update_subtitle (self);
}

/* Whether a response holds a layer for every view on screen. */
static gboolean
has_views (EsWindow *self, const EsResponse *response)
{
  EsView views[ES_CANVAS_MAX_PANES];
  int n = _es_window_get_views (self, views);

  for (int v = 0; v < n; v++)
    {
      gboolean found = FALSE;

      for (int i = 0; i < response->n_layers && !found; i++)
        found = response->layers[i] && response->layers[i]->view == views[v];
      if (!found)
        return FALSE;
    }
  return TRUE;
}

/* The worker holds the side panel's jobs until the frame that shows the
 * views on screen is painted (es_worker_shown_painted), so that they do
 * not take the cores from it. */
static void
on_views_painted (GdkFrameClock *clock, EsWindow *self)
{
  g_signal_handlers_disconnect_by_func (clock, on_views_painted, self);
  es_worker_shown_painted (self->worker, self->shown_generation);
}

static void
release_jobs_after_paint (EsWindow *self)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));

  if (clock == NULL) /* nothing to paint on */
    {
      es_worker_shown_painted (self->worker, self->shown_generation);
      return;
    }
  g_signal_handlers_disconnect_by_func (clock, on_views_painted, self);
  g_signal_connect_object (clock, "after-paint", G_CALLBACK (on_views_painted), self, 0);
}

static void
on_response (EsResponse *response, gpointer user_data)
{
  EsWindow *self = user_data;

  g_assert (ES_IS_WINDOW (self));
  if (response->engine.description)
    {
      g_free (self->engine_description);
      self->engine_description = g_strdup (response->engine.description);
      self->cuda_in_use = response->engine.backend == ES_BACKEND_CUDA;
    }
  if (response->engine.description || response->engine.cuda_reason || response->engine.cuda_usable)
    es_sidebar_set_cuda (self->sidebar, response->engine.cuda_usable, response->engine.cuda_reason);

  /* Only the newest request is ever shown: an older one was superseded
   * (the worker stops answering those, but one may be on its way), and
   * one the user cancelled stays cancelled even if it had just finished. */
  if (response->generation != self->generation || response->generation <= self->cancelled_generation
      || response->cancelled)
    {
      es_response_free (response);
      _es_window_update_busy (self);
      return;
    }
  if (response->complete)
    self->answered_generation = response->generation;
  if (response->source == NULL)
    {
      /* The answer to a request without an image: the engine alone. */
      if (response->notice)
        _es_window_show_message (self, response->notice);
      es_response_free (response);
      _es_window_update_busy (self);
      return;
    }

  /* A newly opened image goes on screen with its views, not before. */
  if (response->source == self->pending_source && response->source != self->source)
    {
      if (!has_views (self, response))
        {
          g_autofree char *summary = g_strdup_printf (_ ("Could not show “%s”"), response->source->name);

          _es_window_show_error (self, summary, response->error ? response->error : _ ("its views failed"));
          g_clear_pointer (&self->pending_source, es_source_unref);
          _es_window_update_subtitle (self);
          _es_window_apply_max_pixels (self);
          self->answered_generation = response->generation;
          es_response_free (response);
          if (self->source == NULL)
            gtk_stack_set_visible_child_name (self->stack, "empty");
          _es_window_update_busy (self);
          return;
        }
      _es_window_show_source (self, response->source);
      g_clear_pointer (&self->pending_source, es_source_unref);
      _es_window_update_subtitle (self);
      _es_window_compare_opened (self);
    }
  if (response->source != self->source)
    {
      es_response_free (response);
      _es_window_update_busy (self);
      return;
    }

  if (response->generation > self->shown_generation)
    {
      self->shown_generation = response->generation;
      _es_window_note_shown_keys (self, response->generation);
      self->last_worker_ms = response->worker_ms;
      self->last_jobs_ms = response->jobs_ms;
    }
  for (int i = 0; i < response->n_layers; i++)
    {
      EsLayer *layer = response->layers[i];

      if (layer == NULL)
        continue;
      if (response->fresh[i])
        _es_window_record_timing (self, layer);
      g_clear_pointer (&self->shown[layer->view], es_layer_unref);
      self->shown[layer->view] = es_layer_ref (layer);
      es_rendering_clear (&self->renderings[layer->view]);
      self->renderings[layer->view] = response->renderings[i];
      memset (&response->renderings[i], 0, sizeof response->renderings[i]);
    }
  if (response->error)
    _es_window_show_error (self, _ ("Could not compute the view"), response->error);
  if (response->notice)
    _es_window_show_message (self, response->notice);
  refresh_view (self);
  _es_window_watch_next_paint (self);
  if (!response->complete)
    release_jobs_after_paint (self);
  self->response_handled = g_get_monotonic_time ();
  es_response_free (response);
  _es_window_update_busy (self);
}

static char *
current_variant (EsWindow *self)
{
  EsOp op;
  g_autofree char *key = NULL, *id = NULL;
  const EsVariant *variants;
  size_t n;

  if (!es_view_get_op (es_window_get_active_view (self), &op))
    return g_strdup ("");
  key = es_settings_variant_key (op);
  id = g_settings_get_string (self->settings, key);
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
  g_return_val_if_fail (ADW_IS_APPLICATION (application), NULL);
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);

  return g_object_new (ES_TYPE_WINDOW, "application", application, "settings", settings, NULL);
}

const char *const *
es_window_get_view_nicks (void)
{
  static const char *nicks[ES_N_VIEWS + 2];
  static gsize initialized;

  if (g_once_init_enter (&initialized))
    {
      for (int view = 0; view < ES_N_VIEWS; view++)
        nicks[view] = es_view_name (view);
      nicks[ES_N_VIEWS] = GRID_NICK;
      g_once_init_leave (&initialized, 1);
    }
  return nicks;
}

static void
on_active_pane (EsCanvas *canvas, GParamSpec *pspec, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  refresh_view (self);
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
  _es_window_export_close (self);
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
  es_settings_bind_choice (self->settings, "view", self->view_dropdown, es_window_get_view_nicks ());
  g_settings_bind (self->settings, "show-timings", self->timings_group, "visible", G_SETTINGS_BIND_GET);
  _es_window_layout_bind (self);
  _es_window_files_bind (self);
  g_signal_connect_object (self->settings, "changed", G_CALLBACK (_es_window_on_settings_changed), self, 0);

  /* The property actions read their state again, now from the settings. */
  for (int i = PROP_VIEW; i <= PROP_SHOW_SIDEBAR; i++)
    g_object_notify_by_pspec (object, properties[i]);

  _es_window_apply_max_pixels (self);
  es_canvas_set_active_pane (self->canvas, _es_window_first_grid_heatmap ());
  update_variants (self);
  _es_window_update_actions (self);
  _es_window_update_zoom_label (self);
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
    case PROP_VIEW: g_value_take_string (value, g_settings_get_string (self->settings, "view")); break;
    case PROP_BACKEND: g_value_take_string (value, g_settings_get_string (self->settings, "backend")); break;
    case PROP_VARIANT: g_value_take_string (value, current_variant (self)); break;
    case PROP_SHOW_TIMINGS: g_value_set_boolean (value, g_settings_get_boolean (self->settings, "show-timings")); break;
    case PROP_SHOW_SIDEBAR: g_value_set_boolean (value, _es_window_get_panel_shown (self)); break;
    case PROP_BUSY: g_value_set_boolean (value, self->busy); break;
    case PROP_HARDWARE_COUNTERS: g_value_set_boolean (value, self->hardware_counters); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
es_window_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  EsWindow *self = ES_WINDOW (object);
  EsOp op;

  switch (prop_id)
    {
    case PROP_SETTINGS: _es_window_settings_create (self, g_value_get_object (value)); break;
    case PROP_VIEW: g_settings_set_string (self->settings, "view", g_value_get_string (value)); break;
    case PROP_BACKEND: g_settings_set_string (self->settings, "backend", g_value_get_string (value)); break;
    case PROP_VARIANT:
      if (es_view_get_op (es_window_get_active_view (self), &op))
        {
          g_autofree char *key = es_settings_variant_key (op);

          g_settings_set_string (self->settings, key, g_value_get_string (value));
        }
      break;
    case PROP_SHOW_TIMINGS: g_settings_set_boolean (self->settings, "show-timings", g_value_get_boolean (value)); break;
    case PROP_SHOW_SIDEBAR: _es_window_set_panel_shown (self, g_value_get_boolean (value)); break;
    case PROP_HARDWARE_COUNTERS:
      if (self->hardware_counters != g_value_get_boolean (value))
        {
          self->hardware_counters = g_value_get_boolean (value);
          g_object_notify_by_pspec (object, pspec);
          _es_window_schedule_update (self, "hardware counters");
        }
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
es_window_dispose (GObject *object)
{
  EsWindow *self = ES_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->tools);
  if (self->load_cancellable)
    g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  _es_window_compare_dispose (self);
  g_clear_handle_id (&self->update_idle, g_source_remove);
  g_clear_handle_id (&self->progress_tick, g_source_remove);
  g_clear_pointer (&self->worker, es_worker_free);
  _es_window_status_dispose (self);
  _es_window_volume_dispose (self);
  if (self->chooser)
    gtk_native_dialog_destroy (self->chooser);
  g_clear_object (&self->chooser);
  for (int i = 0; i < ES_N_VIEWS; i++)
    {
      g_clear_pointer (&self->shown[i], es_layer_unref);
      es_rendering_clear (&self->renderings[i]);
    }
  g_clear_pointer (&self->source, es_source_unref);
  g_clear_pointer (&self->pending_source, es_source_unref);
  _es_window_forget_timings (self);
  _es_window_settings_dispose (self);
  gtk_widget_dispose_template (GTK_WIDGET (self), ES_TYPE_WINDOW);
  G_OBJECT_CLASS (es_window_parent_class)->dispose (object);
}

static void
es_window_finalize (GObject *object)
{
  EsWindow *self = ES_WINDOW (object);

  _es_window_status_finalize (self);
  g_string_free (self->changes, TRUE);
  g_free (self->engine_description);
  g_free (self->last_message);
  g_free (self->last_error);
  g_free (self->loading_name);
  g_clear_object (&self->cancellable);
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

  properties[PROP_VIEW] = g_param_spec_string ("view", NULL, NULL, "entropy",
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BACKEND] = g_param_spec_string ("backend", NULL, NULL, "auto",
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_VARIANT] = g_param_spec_string ("variant", NULL, NULL, "",
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_TIMINGS] = g_param_spec_boolean (
    "show-timings", NULL, NULL, TRUE, G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_SIDEBAR] = g_param_spec_boolean (
    "show-sidebar", NULL, NULL, TRUE, G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Not a setting: reading the counters runs each job's kernels again. */
  properties[PROP_HARDWARE_COUNTERS] = g_param_spec_boolean (
    "hardware-counters", NULL, NULL, FALSE, G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SETTINGS] = g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                                                   G_PARAM_WRITABLE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (ES_TYPE_CANVAS);
  g_type_ensure (ES_TYPE_COLORBAR);
  g_type_ensure (ES_TYPE_SIDEBAR);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/entroscope/Entroscope/es-window.ui");
  gtk_widget_class_bind_template_child (widget_class, EsWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, error_revealer);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, error_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, recent_menu);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, view_dropdown);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, spinner);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, zoom_button);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, flap);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, canvas);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, progress_revealer);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, progress_title);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, progress_detail);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, colorbar);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, position_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, notice_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, info_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, definition_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, sidebar);
  gtk_widget_class_bind_template_callback (widget_class, on_active_pane);
  _es_window_class_status_init (klass);
  _es_window_class_volume_init (klass);

  _es_window_class_open_init (klass);
  _es_window_class_export_init (klass);
  _es_window_class_compare_init (klass);
  _es_window_class_layout_init (klass);
  _es_window_class_settings_init (klass);
  _es_window_class_files_init (klass);
  gtk_widget_class_install_action (widget_class, "win.cancel", NULL, _es_window_cancel_action);
  gtk_widget_class_install_property_action (widget_class, "win.view", "view");
  gtk_widget_class_install_property_action (widget_class, "win.backend", "backend");
  gtk_widget_class_install_property_action (widget_class, "win.variant", "variant");
  gtk_widget_class_install_property_action (widget_class, "win.show-timings", "show-timings");
  gtk_widget_class_install_property_action (widget_class, "win.show-sidebar", "show-sidebar");
  gtk_widget_class_install_property_action (widget_class, "win.hardware-counters", "hardware-counters");

  /* Escape stops the computation or the opening waited for (the action is
   * disabled otherwise, so Escape goes on to whatever else wants it). */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.cancel", NULL);
}

/* The entropy definition's keys, mask or footprint changed. */
static void
on_definition_changed (EsSidebarDefinition *definition, const char *what, EsWindow *self)
{
  _es_window_schedule_update (self, what);
}

static void
es_window_init (EsWindow *self)
{
  g_autoptr (GtkStringList) views = gtk_string_list_new (NULL);
  g_autofree char *tooltip = NULL;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->timings = es_sidebar_get_timings (self->sidebar);
  self->timings_group = es_sidebar_get_timings_group (self->sidebar);

  /* The view switcher: every view, then the grid, in the order of
   * es_window_get_view_nicks () and of the Alt+digit accelerators. */
  for (int view = 0; view < ES_N_VIEWS; view++)
    gtk_string_list_append (views, es_view_title (view));
  gtk_string_list_append (views, _ ("Grid 2×2"));
  gtk_drop_down_set_model (self->view_dropdown, G_LIST_MODEL (views));
  tooltip = g_strdup_printf (_ ("What to Show (Alt+1…%d)"), ES_N_VIEWS + 1);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->view_dropdown), tooltip);
  es_accessible_name_drop_down (self->view_dropdown, _ ("View"));

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.compare", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.cancel", FALSE);
  self->progress_delay_ms = ES_WINDOW_PROGRESS_DELAY_MS;
  g_queue_init (&self->timing_history);
  self->cancellable = g_cancellable_new ();
  self->changes = g_string_new (NULL);
  _es_window_status_init (self);
  _es_window_open_init (self);
  _es_window_layout_init (self);
  _es_window_files_init (self);
  _es_window_tools_init (self);
  _es_window_volume_init (self);
  es_accessible_fix_mnemonic_buttons (GTK_WIDGET (self));

  g_signal_connect_object (es_sidebar_get_definition (self->sidebar), "changed", G_CALLBACK (on_definition_changed),
                           self, 0);
  g_signal_connect_object (es_sidebar_get_definition (self->sidebar), "message", G_CALLBACK (_es_window_show_message),
                           self, G_CONNECT_SWAPPED);

  self->worker = es_worker_new (on_response, self);
  _es_window_schedule_update (self, "start");
}
