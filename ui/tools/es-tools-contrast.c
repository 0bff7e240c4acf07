/* SPDX-License-Identifier: MIT */
/* Contrast limits: manual low and high colour limits for the active view, beside the Range setting's
 * absolute and automatic ones, set with spin buttons or by dragging a range over the view's
 * histogram (as napari's). Display only: the window recolours, nothing is computed. */
#include "es-tools-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

#define N_BINS G_N_ELEMENTS (((EsTools *) NULL)->contrast_bins)

/* The active view's layer, its values' absolute range and how they are
 * shown: offset + value × unit_scale (EsValueInfo; an original float
 * TIFF's values). */
static EsLayer *
active_layer (EsTools *self, EsView *view, double *lo, double *hi, double *unit_scale, double *offset)
{
  EsLayer *layer;
  EsDisplay display;
  EsValueInfo info;

  *view = es_tools_host_get_active_view (self->host);
  layer = _es_tools_get_layer (self, *view);
  if (layer == NULL)
    return NULL;
  *lo = layer->result.scale.lo;
  *hi = layer->result.scale.hi;
  if (*view == ES_VIEW_ORIGINAL)
    {
      *lo = 0;
      *hi = (1 << layer->source->image.depth) - 1;
    }
  es_tools_host_get_display (self->host, &display);
  es_layer_display_info (layer, &display, &info);
  *unit_scale = info.unit_scale > 0 ? info.unit_scale : 1.0;
  *offset = info.value_offset;
  return layer;
}

/* The limits in use: the manual ones, else those the Range setting gives. */
static void
current_limits (EsTools *self, EsLayer *layer, EsView view, double *lo, double *hi)
{
  EsDisplay display;
  EsColorScale scale;

  es_tools_host_get_display (self->host, &display);
  es_layer_display_scale (layer, &display, &scale);
  es_tools_adjust_scale (self, view, &scale);
  *lo = scale.lo;
  *hi = scale.hi;
}

void
es_tools_set_contrast (EsTools *self, EsView view, gboolean enabled, double lo, double hi)
{
  EsContrastLimits *limits;

  g_return_if_fail (ES_IS_TOOLS (self));
  g_return_if_fail (view < ES_N_VIEWS);

  limits = &self->contrast[view];
  if (lo > hi)
    {
      double t = lo;

      lo = hi;
      hi = t;
    }
  if (limits->enabled == enabled && limits->lo == lo && limits->hi == hi)
    return;
  limits->enabled = enabled;
  limits->lo = lo;
  limits->hi = hi;
  es_tools_host_refresh (self->host);
  _es_contrast_update (self);
}

void
_es_contrast_update (EsTools *self)
{
  double abs_lo, abs_hi, unit, offset, lo, hi;
  EsView view;
  EsLayer *layer = active_layer (self, &view, &abs_lo, &abs_hi, &unit, &offset);
  g_autofree char *caption = NULL;

  if (self->contrast_range == NULL)
    return;
  gtk_widget_set_sensitive (self->contrast_switch, layer != NULL);
  gtk_widget_set_sensitive (self->contrast_lo, layer != NULL);
  gtk_widget_set_sensitive (self->contrast_hi, layer != NULL);
  if (layer == NULL)
    return;
  /* The histogram is counted only while the popover shows it. */
  if (gtk_widget_get_mapped (self->contrast_range) && layer != self->contrast_layer)
    {
      EsChannel channel = { "values", &layer->result.values, 0, 1.0, 0 };

      es_roi_histogram (&channel, (EsRect){ 0, 0, es_layer_width (layer), es_layer_height (layer) }, abs_lo, abs_hi,
                        self->contrast_bins, N_BINS);
      self->contrast_layer = layer;
    }
  current_limits (self, layer, view, &lo, &hi);
  self->contrast_updating = TRUE;
  gtk_switch_set_active (GTK_SWITCH (self->contrast_switch), self->contrast[view].enabled);
  for (int i = 0; i < 2; i++)
    {
      GtkSpinButton *spin = GTK_SPIN_BUTTON (i == 0 ? self->contrast_lo : self->contrast_hi);
      int digits = layer->result.values.format == ES_FORMAT_F32 ? 3
                   : view == ES_VIEW_ORIGINAL ? es_image_meta_value_decimals (&layer->result.values.meta)
                                              : 0;

      gtk_spin_button_set_digits (spin, digits);
      gtk_spin_button_set_increments (spin, digits ? 0.01 : 1, digits ? 0.1 : 16);
      gtk_spin_button_set_range (spin, offset + MIN (abs_lo, lo) * unit, offset + MAX (abs_hi, hi) * unit);
      gtk_spin_button_set_value (spin, offset + (i == 0 ? lo : hi) * unit);
    }
  self->contrast_updating = FALSE;
  caption = g_strdup_printf (_ ("%s · the histogram spans %g … %g"), es_view_title (view), offset + abs_lo * unit,
                             offset + abs_hi * unit);
  gtk_label_set_label (GTK_LABEL (self->contrast_caption), caption);
  gtk_widget_queue_draw (self->contrast_range);
}

static void
on_spin_changed (GtkSpinButton *spin, EsTools *self)
{
  double abs_lo, abs_hi, unit, offset;
  EsView view;
  EsLayer *layer = active_layer (self, &view, &abs_lo, &abs_hi, &unit, &offset);

  if (self->contrast_updating || layer == NULL)
    return;
  /* Typing a limit turns the manual limits on. */
  es_tools_set_contrast (self, view, TRUE,
                         (gtk_spin_button_get_value (GTK_SPIN_BUTTON (self->contrast_lo)) - offset) / unit,
                         (gtk_spin_button_get_value (GTK_SPIN_BUTTON (self->contrast_hi)) - offset) / unit);
}

static void
on_switch_active (GtkSwitch *button, GParamSpec *pspec, EsTools *self)
{
  double abs_lo, abs_hi, unit, offset, lo, hi;
  EsView view;
  EsLayer *layer = active_layer (self, &view, &abs_lo, &abs_hi, &unit, &offset);

  if (self->contrast_updating || layer == NULL)
    return;
  current_limits (self, layer, view, &lo, &hi);
  es_tools_set_contrast (self, view, gtk_switch_get_active (button), lo, hi);
}

static void
draw_range (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  EsTools *self = data;
  double abs_lo, abs_hi, unit, offset, lo, hi, bar = (double) width / N_BINS;
  EsView view;
  EsLayer *layer = active_layer (self, &view, &abs_lo, &abs_hi, &unit, &offset);
  guint64 max = 0;
  GdkRGBA fg, accent = { 0.21, 0.52, 0.89, 1 };

  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.06);
  cairo_paint (cr);
  if (layer == NULL || layer != self->contrast_layer || abs_hi <= abs_lo)
    return;
  for (guint i = 0; i < N_BINS; i++)
    max = MAX (max, self->contrast_bins[i]);
  /* Square-root heights: a few large bins do not flatten the rest. */
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.55);
  for (guint i = 0; i < N_BINS && max > 0; i++)
    {
      double h = sqrt ((double) self->contrast_bins[i] / max) * (height - 8);

      cairo_rectangle (cr, i * bar, height - h, MAX (bar - 1, 1), h);
    }
  cairo_fill (cr);

  current_limits (self, layer, view, &lo, &hi);
  {
    double x0 = (lo - abs_lo) / (abs_hi - abs_lo) * width, x1 = (hi - abs_lo) / (abs_hi - abs_lo) * width;

    cairo_set_source_rgba (cr, accent.red, accent.green, accent.blue, 0.25);
    cairo_rectangle (cr, x0, 0, x1 - x0, height);
    cairo_fill (cr);
    gdk_cairo_set_source_rgba (cr, &accent);
    cairo_set_line_width (cr, 2);
    for (int i = 0; i < 2; i++)
      {
        double x = i == 0 ? x0 : x1;

        cairo_move_to (cr, x, 0);
        cairo_line_to (cr, x, height);
        cairo_stroke (cr);
        cairo_rectangle (cr, x - 4, height / 2.0 - 8, 8, 16);
        cairo_fill (cr);
      }
  }
}

/* Dragging moves the nearer limit to the pointer's value. */
static void
drag_to (EsTools *self, double x, gboolean begin)
{
  double abs_lo, abs_hi, unit, offset, lo, hi, value;
  EsView view;
  EsLayer *layer = active_layer (self, &view, &abs_lo, &abs_hi, &unit, &offset);
  double width = MAX (gtk_widget_get_width (self->contrast_range), 1);

  if (layer == NULL || abs_hi <= abs_lo)
    return;
  current_limits (self, layer, view, &lo, &hi);
  value = abs_lo + CLAMP (x / width, 0, 1) * (abs_hi - abs_lo);
  if (begin)
    self->contrast_drag = fabs (value - lo) <= fabs (value - hi) ? 0 : 1;
  if (self->contrast_drag == 0)
    lo = MIN (value, hi);
  else
    hi = MAX (value, lo);
  es_tools_set_contrast (self, view, TRUE, lo, hi);
}

static void
on_range_begin (GtkGestureDrag *gesture, double x, double y, EsTools *self)
{
  drag_to (self, x, TRUE);
}

static void
on_range_update (GtkGestureDrag *gesture, double dx, double dy, EsTools *self)
{
  double x, y;

  gtk_gesture_drag_get_start_point (gesture, &x, &y);
  drag_to (self, x + dx, FALSE);
}

static void
on_popover_map (GtkWidget *popover, EsTools *self)
{
  self->contrast_layer = NULL;
  _es_contrast_update (self);
}

GtkWidget *
_es_contrast_button_new (EsTools *self)
{
  GtkWidget *button = gtk_menu_button_new ();
  GtkWidget *popover = gtk_popover_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  GtkWidget *header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *title = gtk_label_new (_ ("Manual Contrast Limits"));
  GtkWidget *limits = gtk_grid_new ();
  GtkGesture *drag = gtk_gesture_drag_new ();

  gtk_menu_button_set_child (GTK_MENU_BUTTON (button), _es_tools_icon_new (ES_N_TOOLS));
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_tooltip_text (button, _ ("Contrast Limits (C)"));
  gtk_menu_button_set_direction (GTK_MENU_BUTTON (button), GTK_ARROW_RIGHT);
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Contrast Limits"), -1);

  gtk_widget_add_css_class (title, "heading");
  gtk_widget_set_hexpand (title, TRUE);
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_box_append (GTK_BOX (header), title);
  self->contrast_switch = gtk_switch_new ();
  gtk_widget_set_tooltip_text (self->contrast_switch,
                               _ ("On: these limits; off: the side panel's Range (absolute or automatic)"));
  gtk_accessible_update_relation (GTK_ACCESSIBLE (self->contrast_switch), GTK_ACCESSIBLE_RELATION_LABELLED_BY, title,
                                  NULL, -1);
  g_signal_connect (self->contrast_switch, "notify::active", G_CALLBACK (on_switch_active), self);
  gtk_box_append (GTK_BOX (header), self->contrast_switch);
  gtk_box_append (GTK_BOX (box), header);

  self->contrast_range = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (self->contrast_range), 256);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (self->contrast_range), 72);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->contrast_range), draw_range, self, NULL);
  gtk_widget_set_tooltip_text (self->contrast_range, _ ("Drag to move the nearer limit"));
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_range_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_range_update), self);
  gtk_widget_add_controller (self->contrast_range, GTK_EVENT_CONTROLLER (drag));
  gtk_box_append (GTK_BOX (box), self->contrast_range);

  gtk_grid_set_column_spacing (GTK_GRID (limits), 8);
  for (int i = 0; i < 2; i++)
    {
      GtkWidget *label = gtk_label_new_with_mnemonic (i == 0 ? "_Low" : "_High");
      GtkWidget *spin = gtk_spin_button_new_with_range (0, 1, 1);

      gtk_label_set_mnemonic_widget (GTK_LABEL (label), spin);
      gtk_widget_set_hexpand (spin, TRUE);
      gtk_editable_set_width_chars (GTK_EDITABLE (spin), 6);
      g_signal_connect (spin, "value-changed", G_CALLBACK (on_spin_changed), self);
      gtk_grid_attach (GTK_GRID (limits), label, 2 * i, 0, 1, 1);
      gtk_grid_attach (GTK_GRID (limits), spin, 2 * i + 1, 0, 1, 1);
      if (i == 0)
        self->contrast_lo = spin;
      else
        self->contrast_hi = spin;
    }
  gtk_box_append (GTK_BOX (box), limits);
  self->contrast_caption = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->contrast_caption), 0);
  gtk_label_set_wrap (GTK_LABEL (self->contrast_caption), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (self->contrast_caption), 36);
  gtk_widget_add_css_class (self->contrast_caption, "dim-label");
  gtk_box_append (GTK_BOX (box), self->contrast_caption);

  gtk_popover_set_child (GTK_POPOVER (popover), box);
  g_signal_connect (popover, "map", G_CALLBACK (on_popover_map), self);
  gtk_menu_button_set_popover (GTK_MENU_BUTTON (button), popover);
  return button;
}
