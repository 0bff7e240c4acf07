/* SPDX-License-Identifier: MIT */
/* EsWindow: the status bar (the pixel under the pointer, the job on screen, the zoom), and the watch on
 * the frame clock that times how long a change or an opening takes to reach the screen (the
 * ENTROSCOPE_DEBUG=timing log, the opening time of the timings card). */
#include "es-window-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

#include "es-calibration.h"
#include "es-debug.h"
#include "es-definitions.h"
#include "es-inspect.h"

typedef struct {
  guint64 generation;
  gint64 time;
  char *what;
} PendingChange;

/* The timing log, from a change to the first frame painted with its result, and the opening's time. */

static void
pending_change_free (gpointer data)
{
  PendingChange *change = data;

  g_free (change->what);
  g_free (change);
}

void
_es_window_log_change (EsWindow *self, guint64 generation, const char *what)
{
  PendingChange *change;

  if (!es_debug_timing ())
    return;
  /* A cancel ends the wait of every change before it. */
  if (g_str_equal (what, "cancelled"))
    {
      for (GList *l = self->pending_log.head, *next; l; l = next)
        {
          next = l->next;
          change = l->data;
          if (change->generation == 0 || change->generation > generation)
            continue;
          g_queue_delete_link (&self->pending_log, l);
          es_debug_log ("%s: cancelled after %.1f ms, never shown", change->what,
                        (g_get_monotonic_time () - change->time) / 1000.0);
          pending_change_free (change);
        }
      return;
    }
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

  g_assert (ES_IS_WINDOW (self));
  _es_window_open_painted (self, now);
  for (GList *l = self->pending_log.head, *next; l; l = next)
    {
      next = l->next;
      change = l->data;
      if (change->generation > self->shown_generation)
        continue;
      g_queue_delete_link (&self->pending_log, l);
      if (change->generation == 0)
        es_debug_log ("%s: %.1f ms from the change to the view shown (display only, no job)", change->what,
                      (now - change->time) / 1000.0);
      else if (change->generation < self->shown_generation)
        es_debug_log ("%s: superseded by a later change, never shown", change->what);
      else
        es_debug_log ("%s: %.1f ms from request to the new view shown (worker %.1f ms, "
                      "of which es_run %.1f ms; then %.1f ms to the frame, layout %.1f ms, paint "
                      "%.1f ms, %.1f ms after)",
                      change->what, (now - change->time) / 1000.0, self->last_worker_ms, self->last_jobs_ms,
                      (self->phase_end[0] - self->response_handled) / 1000.0,
                      (self->phase_end[1] - self->phase_end[0]) / 1000.0,
                      (self->phase_end[2] - self->phase_end[1]) / 1000.0, (now - self->phase_end[2]) / 1000.0);
      pending_change_free (change);
    }
  g_clear_signal_handler (&self->after_paint_handler, self->paint_clock);
  g_clear_object (&self->paint_clock);
}

/* Interactivity starts with the first frame: from then on, stalls count. */
static void
on_first_paint (GdkFrameClock *clock, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  g_signal_handlers_disconnect_by_func (clock, on_first_paint, self);
  es_debug_log ("first frame painted");
  es_debug_watch_main_loop ();
}

/* The end of each phase of a frame, connected to run after every other
 * handler of the phase (GTK connects its layout handler anew when a layout
 * is needed). A phase that a frame skips ends where the one before it
 * did, so that it counts 0; a frame without an update phase starts its
 * layout where its before-paint phase ends. */
static void
on_phase_end (GdkFrameClock *clock, EsWindow *self, int phase)
{
  gint64 now = g_get_monotonic_time ();

  for (int i = phase; i < 3; i++)
    self->phase_end[i] = now;
}

static void
on_update_end (GdkFrameClock *clock, EsWindow *self)
{
  on_phase_end (clock, self, 0);
}

static void
on_layout_end (GdkFrameClock *clock, EsWindow *self)
{
  on_phase_end (clock, self, 1);
}

static void
on_paint_end (GdkFrameClock *clock, EsWindow *self)
{
  on_phase_end (clock, self, 2);
}

static void
on_realize (GtkWidget *widget, gpointer data)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);

  g_assert (ES_IS_WINDOW (widget));
  if (es_debug_timing ())
    {
      g_signal_connect (clock, "after-paint", G_CALLBACK (on_first_paint), widget);
      g_signal_connect_object (clock, "before-paint", G_CALLBACK (on_update_end), widget, G_CONNECT_AFTER);
      g_signal_connect_object (clock, "update", G_CALLBACK (on_update_end), widget, G_CONNECT_AFTER);
      g_signal_connect_object (clock, "layout", G_CALLBACK (on_layout_end), widget, G_CONNECT_AFTER);
      g_signal_connect_object (clock, "paint", G_CALLBACK (on_paint_end), widget, G_CONNECT_AFTER);
    }
  /* An image shown before the window had a frame clock. */
  _es_window_watch_next_paint (ES_WINDOW (widget));
}

/* The frame clock goes with the surface, its handlers with it: the watch
 * ends here, while both are still there. */
static void
on_unrealize (GtkWidget *widget, gpointer data)
{
  EsWindow *self = ES_WINDOW (widget);

  g_clear_signal_handler (&self->after_paint_handler, self->paint_clock);
  g_clear_object (&self->paint_clock);
}

void
_es_window_watch_next_paint (EsWindow *self)
{
  gboolean opening = _es_window_open_waits_for_paint (self);
  GdkFrameClock *clock;

  if (self->after_paint_handler || (!opening && (!es_debug_timing () || g_queue_is_empty (&self->pending_log))))
    return;
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (self));
  if (clock == NULL)
    return;
  self->paint_clock = g_object_ref (clock);
  self->after_paint_handler = g_signal_connect (clock, "after-paint", G_CALLBACK (on_after_paint), self);
}

void
es_window_get_readout_job (EsWindow *self, EsJob *job)
{
  EsLayer *entropy = es_window_get_layer (self, ES_VIEW_ENTROPY);

  if (entropy)
    *job = entropy->job;
  else
    es_window_get_view_job (self, ES_VIEW_ENTROPY, job);
  /* Minmax binning from the source's range, found when it was decoded:
   * the readout must not scan the image on every pointer move. */
  if (job->definition.binning == ES_BINNING_MINMAX && self->source != NULL && self->source->image.levels == 0)
    {
      job->definition.binning = ES_BINNING_RANGE;
      job->definition.range_lo = self->source->sample_lo;
      job->definition.range_hi = self->source->sample_hi;
    }
}

/* The readout wraps in a narrow window, and its lines come and go with the
 * pointer's values: it keeps the tallest it has been at this width, so
 * that the canvas above it does not resize (and the image under the
 * pointer move) as the pointer crosses it. */
static void
hold_readout_height (EsWindow *self)
{
  GtkWidget *label = GTK_WIDGET (self->position_label);
  int width = gtk_widget_get_width (label), height;
  PangoLayout *layout;

  if (width <= 0)
    return;
  /* The text's own height (the label's measure would include the height held). */
  layout = gtk_widget_create_pango_layout (label, gtk_label_get_label (self->position_label));
  pango_layout_set_width (layout, width * PANGO_SCALE);
  pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
  pango_layout_get_pixel_size (layout, NULL, &height);
  g_object_unref (layout);
  if (width == self->readout_width && height <= self->readout_height)
    return;
  self->readout_width = width;
  self->readout_height = height;
  gtk_widget_set_size_request (label, -1, height);
}

void
_es_window_update_position (EsWindow *self)
{
  EsView views[ES_CANVAS_MAX_PANES];
  g_autoptr (GString) text = NULL;
  EsLayer *layer;
  EsSource *shown = _es_window_get_shown_source (self);
  EsJob job;
  guint32 gray, bin;
  int n = _es_window_get_views (self, views);

  /* The plane's pixels: the orthogonal views' slices are read where they
   * cross it (the crosshair), not under the pointer. */
  if (self->hover_pane < 0 || self->hover_pane >= n || shown == NULL
      || !(layer = es_window_get_layer (self, views[self->hover_pane])) || self->hover_x >= shown->image.width
      || self->hover_y >= shown->image.height)
    {
      if (shown != NULL && es_source_planes (self->source) > 1)
        {
          g_autofree char *plane = g_strdup_printf (_ ("z %5d of %d"), self->z, es_source_planes (self->source));

          gtk_label_set_label (self->position_label, plane);
        }
      else
        gtk_label_set_label (self->position_label, " ");
      hold_readout_height (self);
      return;
    }

  text = g_string_new (NULL);
  gray = es_source_sample (shown, self->hover_x, self->hover_y);
  g_string_append_printf (text, "x %5d   y %5d", self->hover_x, self->hover_y);
  if (es_source_planes (self->source) > 1)
    g_string_append_printf (text, "   z %5d", self->z);
  /* A float or signed TIFF shows the value its sample stands for, to the
   * step between two samples; the 16-bit sample is an internal detail. */
  if (shown->image.meta.stored == ES_STORED_UNSIGNED)
    g_string_append_printf (text, "      gray %5u", gray);
  else if (es_image_meta_is_nan (&shown->image.meta, gray))
    g_string_append (text, _ ("      value NaN"));
  else
    g_string_append_printf (text, _ ("      value %.*f"), es_image_meta_value_decimals (&shown->image.meta),
                            es_image_meta_value (&shown->image.meta, gray));
  /* The sample's bin under the entropy definition in force: a level of the depth binning. */
  es_window_get_readout_job (self, &job);
  /* NaN has no bin: entropy counts it nowhere (es_job_mask_nan). */
  if (!es_image_meta_is_nan (&shown->image.meta, gray)
      && es_pixel_bin (&job, &shown->image, self->hover_x, self->hover_y, &bin))
    g_string_append_printf (text, "      %s %3u", job.definition.binning == ES_BINNING_DEPTH ? "level" : "bin", bin);

  /* Every pane's value at the pointer: the grid's four views read at once. */
  for (int i = 0; i < n; i++)
    {
      EsDisplay display;
      EsValueInfo info;
      double value;

      layer = es_window_get_layer (self, views[i]);
      if (layer == NULL || layer->view == ES_VIEW_ORIGINAL)
        continue;
      value = es_layer_value (layer, self->hover_x, self->hover_y);
      _es_window_get_display (self, &display);
      es_layer_display_info (layer, &display, &info);
      /* Masked out, or a window that counts nothing. */
      if (isnan (value))
        g_string_append_printf (text, _ ("      %s no data"), es_view_title (layer->view));
      else if (layer->result.values.format == ES_FORMAT_F32)
        g_string_append_printf (text, "      %s %.4f %s", es_view_title (layer->view),
                                value * (info.unit_scale > 0 ? info.unit_scale : 1.0), info.units ? info.units : "");
      else
        g_string_append_printf (text, "      %s %d", es_view_title (layer->view), (int) value);
    }
  gtk_label_set_label (self->position_label, text->str);
  hold_readout_height (self);
}

void
_es_window_update_zoom_label (EsWindow *self)
{
  double percent = es_canvas_get_zoom (self->canvas) * 100;
  char label[32];

  /* No image, no zoom to speak of. */
  if (self->source == NULL)
    g_strlcpy (label, "–", sizeof label);
  else
    g_snprintf (label, sizeof label, percent < 10 ? "%.1f %%" : "%.0f %%", percent);
  /* GTK 4.8's menu button builds a new child for every label it is given,
   * the same text too: new widgets whose styles the window then validates
   * in frames of their own, while a job runs (every refresh asks). */
  if (g_strcmp0 (gtk_menu_button_get_label (self->zoom_button), label) != 0)
    gtk_menu_button_set_label (self->zoom_button, label);
}

/* The canvas's accessible description: what a sighted user sees at a
 * glance, as "Entropy heatmap of camera.png, 512 × 512: Entropy · 5×5 ·
 * clip · 16 bins · nats", for screen readers (the canvas is named
 * "Image" in es-window.ui). job_text describes the active pane. */
static void
describe_canvas (EsWindow *self, const EsLayer *layer, const char *job_text)
{
  const EsSource *source = layer->source;
  EsView views[ES_CANVAS_MAX_PANES], orthogonal_view;
  int n = _es_window_get_views (self, views);
  g_autoptr (GString) text = g_string_new (NULL);

  if (_es_window_get_orthogonal (self, &orthogonal_view))
    g_string_append_printf (text, _ ("%s %s, three orthogonal planes through"), es_view_title (orthogonal_view),
                            es_view_is_heatmap (orthogonal_view) ? "heatmap" : "image");
  else if (n > 1)
    {
      g_string_append_printf (text, _ ("Grid of %d views ("), n);
      for (int i = 0; i < n; i++)
        g_string_append_printf (text, "%s%s", i ? ", " : "", es_view_title (views[i]));
      g_string_append (text, ") of");
    }
  else
    g_string_append_printf (text, "%s %s of", es_view_title (layer->view),
                            es_view_is_heatmap (layer->view) ? "heatmap" : "image");
  g_string_append_printf (text, " %s, %d × %d", source->name, source->image.width, source->image.height);
  if (es_source_planes (source) > 1)
    g_string_append_printf (text, " × %d, plane %d", es_source_planes (source), _es_window_get_plane (self));
  g_string_append_printf (text, n > 1 ? _ ("; the active pane: %s") : ": %s", job_text);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->canvas), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text->str, -1);
}

/* What the active view is, in words: the job behind it, as
 * "Entropy · window 5 · levels 16 · nats" or "Original · 8-bit". */
void
_es_window_update_job_label (EsWindow *self, const EsLayer *layer, const EsValueInfo *info)
{
  g_autoptr (GString) text = g_string_new (es_view_title (layer->view));
  EsOp op;
  EsView views[ES_CANVAS_MAX_PANES];
  int n = _es_window_get_views (self, views);
  const char *definition = NULL;

  if (info->definition[0])
    g_string_append_printf (text, " · %s", info->definition);
  else if (es_view_get_op (layer->view, &op))
    {
      g_autofree char *params = es_job_describe_params (&layer->job, " · ");

      if (*params)
        g_string_append_printf (text, " · %s", params);
      if (es_units_convertible (op))
        g_string_append_printf (text, " · %s", info->units);
    }
  else
    {
      g_autofree char *samples = _es_window_describe_samples (&layer->source->image);

      g_string_append_printf (text, " · %s", samples);
    }
  gtk_label_set_label (self->info_label, text->str);
  describe_canvas (self, layer, text->str);

  /* Over the canvas: the definition of the entropy on screen (in the grid too). */
  for (int i = 0; i < n && definition == NULL; i++)
    {
      EsLayer *pane = es_window_get_layer (self, views[i]);
      EsDisplay display;
      EsValueInfo pane_info;

      if (pane == NULL || pane->job.op != ES_OP_ENTROPY)
        continue;
      _es_window_get_display (self, &display);
      es_layer_display_info (pane, &display, &pane_info);
      gtk_label_set_label (self->definition_label, pane_info.definition);
      definition = gtk_label_get_label (self->definition_label);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->definition_label), definition != NULL);
  /* The caption lies over the top left corner, where the grid's and the
   * orthogonal views' panes have their labels ("XY · z 12"): those go
   * below it, and the timing overlays keep off it. It is as wide as its
   * text, or the canvas less its margins (it ellipsizes). */
  if (definition != NULL)
    {
      GtkWidget *caption = GTK_WIDGET (self->definition_label);
      const int start = gtk_widget_get_margin_start (caption), top = gtk_widget_get_margin_top (caption);
      const int room = gtk_widget_get_width (GTK_WIDGET (self->canvas)) - start - gtk_widget_get_margin_end (caption);
      int width = 0, height = 0;

      gtk_widget_measure (caption, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &width, NULL, NULL);
      if (room > 0)
        width = MIN (width, room);
      gtk_widget_measure (caption, GTK_ORIENTATION_VERTICAL, width, NULL, &height, NULL, NULL);
      es_canvas_set_caption (self->canvas, &GRAPHENE_RECT_INIT (start, top, width, height));
    }
  else
    es_canvas_set_caption (self->canvas, NULL);
}

static gboolean
update_status (gpointer data)
{
  EsWindow *self = data;

  g_assert (ES_IS_WINDOW (self));
  self->status_idle = 0;
  _es_window_update_position (self);
  _es_window_update_zoom_label (self);
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
  g_assert (ES_IS_WINDOW (self));
  self->hover_pane = pane;
  self->hover_x = x;
  self->hover_y = y;
  schedule_status (self);
}

static void
on_zoom (EsCanvas *canvas, GParamSpec *pspec, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  schedule_status (self);
}

void
_es_window_class_status_init (EsWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_bind_template_callback (widget_class, on_hover);
  gtk_widget_class_bind_template_callback (widget_class, on_zoom);
}

void
_es_window_status_init (EsWindow *self)
{
  g_queue_init (&self->pending_log);
  self->hover_pane = -1;
  g_signal_connect (self, "realize", G_CALLBACK (on_realize), NULL);
  g_signal_connect (self, "unrealize", G_CALLBACK (on_unrealize), NULL);
}

void
_es_window_status_dispose (EsWindow *self)
{
  g_clear_handle_id (&self->status_idle, g_source_remove);
  g_clear_signal_handler (&self->after_paint_handler, self->paint_clock);
  g_clear_object (&self->paint_clock);
}

void
_es_window_status_finalize (EsWindow *self)
{
  g_queue_clear_full (&self->pending_log, pending_change_free);
}
