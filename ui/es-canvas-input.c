/* SPDX-License-Identifier: MIT */
/* EsCanvas: pointer, wheel, touchpad, drag and pinch input: hover readout, zoom toward the pointer, pan. */
#include "es-canvas-private.h"

#include <math.h>

static void
on_motion (GtkEventControllerMotion *controller, double x, double y, EsCanvas *self)
{
  g_assert (ES_IS_CANVAS (self));
  self->pointer_inside = TRUE;
  self->pointer_x = x;
  self->pointer_y = y;
  _es_canvas_update_hover (self);
  _es_canvas_pointer_moved (self);
}

static void
on_leave (GtkEventControllerMotion *controller, EsCanvas *self)
{
  g_assert (ES_IS_CANVAS (self));
  self->pointer_inside = FALSE;
  _es_canvas_update_hover (self);
  _es_canvas_pointer_moved (self);
}

static gboolean
on_scroll (GtkEventControllerScroll *controller, double dx, double dy, EsCanvas *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  GdkScrollUnit unit = gtk_event_controller_scroll_get_unit (controller);

  g_assert (ES_IS_CANVAS (self));
  if (self->n_panes == 0)
    return FALSE;

  /* A wheel zooms toward the pointer, one zoom step per click; touchpads
   * pan, and zoom with Ctrl held. */
  if (self->stepping && unit == GDK_SCROLL_UNIT_WHEEL && (state & GDK_CONTROL_MASK))
    {
      if (dy != 0)
        _es_canvas_emit_step (self, dy > 0 ? 1 : -1);
      return TRUE;
    }
  if (unit == GDK_SCROLL_UNIT_WHEEL || (state & GDK_CONTROL_MASK))
    {
      self->scroll_accumulator += unit == GDK_SCROLL_UNIT_WHEEL ? dy : dy / 20.0;
      while (fabs (self->scroll_accumulator) >= 1.0)
        {
          int direction = self->scroll_accumulator > 0 ? -1 : 1;

          self->scroll_accumulator += direction;
          _es_canvas_zoom_at (self, _es_canvas_next_zoom (self->zoom, direction), self->pointer_x, self->pointer_y,
                              FALSE);
        }
      return TRUE;
    }

  gtk_adjustment_set_value (self->hadjustment, gtk_adjustment_get_value (self->hadjustment) + dx);
  gtk_adjustment_set_value (self->vadjustment, gtk_adjustment_get_value (self->vadjustment) + dy);
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, EsCanvas *self)
{
  g_assert (ES_IS_CANVAS (self));
  self->drag_h = gtk_adjustment_get_value (self->hadjustment);
  self->drag_v = gtk_adjustment_get_value (self->vadjustment);
  self->dragging = FALSE;
  es_canvas_hold_fit (self, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, EsCanvas *self)
{
  g_assert (ES_IS_CANVAS (self));
  if (!self->dragging && hypot (dx, dy) < 3)
    return;
  if (!self->dragging)
    {
      self->dragging = TRUE;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
    }
  gtk_adjustment_set_value (self->hadjustment, self->drag_h - dx);
  gtk_adjustment_set_value (self->vadjustment, self->drag_v - dy);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, EsCanvas *self)
{
  double start_x, start_y, ix, iy;
  int pane;

  g_assert (ES_IS_CANVAS (self));
  es_canvas_hold_fit (self, FALSE);
  if (self->dragging)
    {
      self->dragging = FALSE;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), NULL);
      return;
    }
  /* A click without a drag chooses the active pane of the grid. */
  gtk_gesture_drag_get_start_point (gesture, &start_x, &start_y);
  if (!_es_canvas_widget_to_image (self, start_x, start_y, &pane, &ix, &iy))
    return;
  if (self->n_panes > 1)
    es_canvas_set_active_pane (self, pane);
  if (ix >= 0 && iy >= 0 && ix < es_layer_width (self->panes[pane].layer)
      && iy < es_layer_height (self->panes[pane].layer))
    _es_canvas_emit_clicked (self, pane, (int) ix, (int) iy);
}

static void
on_pinch_begin (GtkGesture *gesture, GdkEventSequence *sequence, EsCanvas *self)
{
  g_assert (ES_IS_CANVAS (self));
  self->pinch_zoom = self->zoom;
}

static void
on_pinch_scale (GtkGestureZoom *gesture, double scale, EsCanvas *self)
{
  double x, y;

  g_assert (ES_IS_CANVAS (self));
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    return;
  _es_canvas_zoom_at (self, self->pinch_zoom * scale, x, y, FALSE);
}

void
_es_canvas_input_init (EsCanvas *self)
{
  GtkEventController *controller;
  GtkGesture *gesture;

  controller = gtk_event_controller_motion_new ();
  g_signal_connect (controller, "enter", G_CALLBACK (on_motion), self);
  g_signal_connect (controller, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (controller, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), controller);

  controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (controller, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), controller);

  gesture = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), 0);
  g_signal_connect (gesture, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (gesture, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (gesture, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_zoom_new ();
  g_signal_connect (gesture, "begin", G_CALLBACK (on_pinch_begin), self);
  g_signal_connect (gesture, "scale-changed", G_CALLBACK (on_pinch_scale), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (gesture));
}
