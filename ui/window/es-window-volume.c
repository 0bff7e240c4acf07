/* SPDX-License-Identifier: MIT */
/* EsWindow: a volume on screen. The worker computes every view of the whole volume once per parameter
 * change; the plane shown, the Z slider, Page Up/Down, Ctrl+wheel and the orthogonal views only pick
 * planes and slices of those results to draw, so that they never start a job. */
#include "es-window-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

static gboolean
is_volume (EsWindow *self)
{
  return self->source != NULL && es_source_planes (self->source) > 1;
}

/* The image as the tools and the readout see it: plane z of a volume, else the image itself. */
EsSource *
_es_window_get_shown_source (EsWindow *self)
{
  if (!is_volume (self))
    return self->source;
  if (self->plane_source == NULL || self->plane_source->volume.source != self->source
      || self->plane_source->volume.z != self->z)
    {
      g_clear_pointer (&self->plane_source, es_source_unref);
      self->plane_source = es_source_new_plane (self->source, self->z);
    }
  return self->plane_source;
}

EsLayer *
_es_window_plane_of (EsWindow *self, EsLayer *layer)
{
  EsSource *plane_source;
  EsLayer **plane;

  if (!is_volume (self) || layer == NULL)
    return layer;
  plane_source = _es_window_get_shown_source (self);
  plane = &self->planes[layer->view];
  if (*plane == NULL || (*plane)->volume != layer || (*plane)->source != plane_source)
    {
      g_clear_pointer (plane, es_layer_unref);
      *plane = es_layer_new_plane (layer, plane_source, self->z);
    }
  return *plane;
}

int
_es_window_get_plane (EsWindow *self)
{
  return is_volume (self) ? self->z : 0;
}

gboolean
_es_window_get_orthogonal (EsWindow *self, EsView *view)
{
  if (!is_volume (self) || !self->orthogonal)
    return FALSE;
  if (view)
    *view = self->orthogonal_view;
  return TRUE;
}

/* The slice of the orthogonal views' layer through the crosshair, kept
 * while the layer and the crosshair stay. */
static EsLayer *
slice_of (EsWindow *self, EsLayer *volume, EsSliceAxis axis)
{
  EsLayer **slice = &self->slices[axis == ES_SLICE_XZ ? 0 : 1];
  int at = axis == ES_SLICE_XZ ? self->cross_y : self->cross_x;

  if (*slice == NULL || (*slice)->volume != volume || self->slice_at[axis == ES_SLICE_XZ ? 0 : 1] != at)
    {
      g_clear_pointer (slice, es_layer_unref);
      *slice = es_layer_new_slice (volume, _es_window_get_shown_source (self), axis, at);
      self->slice_at[axis == ES_SLICE_XZ ? 0 : 1] = at;
    }
  return *slice;
}

int
_es_window_orthogonal_panes (EsWindow *self, EsCanvasPane *panes)
{
  EsLayer *volume = self->shown[self->orthogonal_view];
  int planes = es_source_planes (self->source);

  /* XY | YZ over XZ | (empty), as Fiji's Orthogonal Views lay them out
   * around the plane: YZ shares the plane's rows, XZ its columns. */
  self->cross_x = CLAMP (self->cross_x, 0, self->source->image.width - 1);
  self->cross_y = CLAMP (self->cross_y, 0, self->source->image.height - 1);
  g_free (self->pane_labels[0]);
  g_free (self->pane_labels[1]);
  g_free (self->pane_labels[2]);
  self->pane_labels[0] = g_strdup_printf ("XY · z %d", self->z);
  self->pane_labels[1] = g_strdup_printf ("YZ · x %d", self->cross_x);
  self->pane_labels[2] = g_strdup_printf ("XZ · y %d", self->cross_y);
  panes[0].label = self->pane_labels[0];
  panes[0].cross_x = self->cross_x;
  panes[0].cross_y = self->cross_y;
  panes[1] = panes[0];
  /* The slices come from the XY pane's job: its overlay says it once;
   * what was rendered for the XY pane is not theirs. */
  panes[1].overlay = NULL;
  panes[1].rendering = NULL;
  panes[1].layer = slice_of (self, volume, ES_SLICE_YZ);
  panes[1].label = self->pane_labels[1];
  panes[1].cross_x = self->z;
  panes[1].cross_y = self->cross_y;
  panes[2] = panes[1];
  panes[2].layer = slice_of (self, volume, ES_SLICE_XZ);
  panes[2].label = self->pane_labels[2];
  panes[2].cross_x = self->cross_x;
  panes[2].cross_y = self->z;
  g_return_val_if_fail (panes[1].layer && panes[2].layer && planes > 1, 1);
  return 3;
}

static void
update_z_bar (EsWindow *self)
{
  int planes = self->source ? es_source_planes (self->source) : 1;
  g_autofree char *count = g_strdup_printf (_ ("of %d"), planes);

  gtk_widget_set_visible (self->z_bar, planes > 1);
  es_canvas_set_stepping (self->canvas, planes > 1);
  gtk_label_set_label (self->z_count_label, count);
}

void
_es_window_volume_source_changed (EsWindow *self)
{
  int planes = self->source ? es_source_planes (self->source) : 1;

  /* A new volume opens at its middle plane, as napari's does: the first
   * plane of a scan is often empty. */
  self->z = planes / 2;
  self->cross_x = self->source ? self->source->image.width / 2 : 0;
  self->cross_y = self->source ? self->source->image.height / 2 : 0;
  self->setting_z = TRUE;
  gtk_adjustment_configure (self->z_adjustment, self->z, 0, planes - 1, 1, MAX (planes / 10, 1), 0);
  self->setting_z = FALSE;
  if (planes <= 1 && self->orthogonal)
    gtk_toggle_button_set_active (self->ortho_button, FALSE);
  update_z_bar (self);
}

void
es_window_set_plane (EsWindow *self, int z)
{
  g_return_if_fail (ES_IS_WINDOW (self));
  if (!is_volume (self))
    return;
  gtk_adjustment_set_value (self->z_adjustment, CLAMP (z, 0, es_source_planes (self->source) - 1));
}

static void
on_z_changed (GtkAdjustment *adjustment, EsWindow *self)
{
  int z = (int) lround (gtk_adjustment_get_value (adjustment));

  if (self->setting_z || z == self->z || !is_volume (self))
    return;
  self->z = z;
  /* Only what is drawn changes: no request goes to the worker. */
  _es_window_log_change (self, 0, "plane");
  _es_window_refresh (self);
  _es_window_watch_next_paint (self);
}

static void
plane_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);

  es_window_set_plane (self, self->z + g_variant_get_int32 (parameter));
}

static void
on_step (EsCanvas *canvas, int direction, EsWindow *self)
{
  es_window_set_plane (self, self->z + direction);
}

static void
on_clicked (EsCanvas *canvas, int pane, int x, int y, EsWindow *self)
{
  /* In the orthogonal views a click on the plane moves the crosshair, and
   * the YZ and XZ slices with it; on a slice it moves the plane too. */
  if (!_es_window_get_orthogonal (self, NULL))
    return;
  switch (pane)
    {
    case 0:
      self->cross_x = x;
      self->cross_y = y;
      break;
    case 1: /* YZ: x is z */
      self->cross_y = y;
      es_window_set_plane (self, x);
      break;
    case 2: /* XZ: y is z */
      self->cross_x = x;
      es_window_set_plane (self, y);
      break;
    default: return;
    }
  _es_window_refresh (self);
}

static void
on_ortho_toggled (GtkToggleButton *button, EsWindow *self)
{
  gboolean on = gtk_toggle_button_get_active (button);

  if (on == self->orthogonal)
    return;
  /* The views follow the view that was active: one view, three slices. */
  if (on)
    self->orthogonal_view = es_window_get_active_view (self);
  self->orthogonal = on;
  es_canvas_set_active_pane (self->canvas, 0);
  _es_window_refresh (self);
}

static void
ortho_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);

  if (is_volume (self))
    gtk_toggle_button_set_active (self->ortho_button, !gtk_toggle_button_get_active (self->ortho_button));
}

void
_es_window_class_volume_init (EsWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_bind_template_child (widget_class, EsWindow, z_bar);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, z_adjustment);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, z_count_label);
  gtk_widget_class_bind_template_child (widget_class, EsWindow, ortho_button);
  gtk_widget_class_bind_template_callback (widget_class, on_z_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_ortho_toggled);
  gtk_widget_class_install_action (widget_class, "win.plane", "i", plane_action);
  gtk_widget_class_install_action (widget_class, "win.orthogonal-views", NULL, ortho_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Down, 0, "win.plane", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Page_Down, 0, "win.plane", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Up, 0, "win.plane", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Page_Up, 0, "win.plane", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_H, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.orthogonal-views", NULL);
}

void
_es_window_volume_init (EsWindow *self)
{
  g_signal_connect (self->canvas, "step", G_CALLBACK (on_step), self);
  g_signal_connect (self->canvas, "clicked", G_CALLBACK (on_clicked), self);
  update_z_bar (self);
}

void
_es_window_volume_dispose (EsWindow *self)
{
  for (int i = 0; i < ES_N_VIEWS; i++)
    g_clear_pointer (&self->planes[i], es_layer_unref);
  g_clear_pointer (&self->slices[0], es_layer_unref);
  g_clear_pointer (&self->slices[1], es_layer_unref);
  g_clear_pointer (&self->plane_source, es_source_unref);
  for (int i = 0; i < 3; i++)
    g_clear_pointer (&self->pane_labels[i], g_free);
}
