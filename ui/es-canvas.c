/* SPDX-License-Identifier: MIT */
/* EsCanvas: renders only what is visible, crisp when zoomed in, as a GtkScrollable. */
#include "es-canvas-private.h"

#include "es-debug.h"

#include <math.h>
#include <string.h>

#define GAP 4                /* logical pixels between grid panes */
#define OVERLAY_MARGIN 8     /* between an overlay and its pane's edges */
#define POINTER_CLEARANCE 32 /* how near the pointer may come before an overlay moves away */
#define COVERS_LABELS 1e6    /* choose_corner's score of a corner over the caption or a pane's label */
#define MAX_ZOOM 64.0

enum {
  PROP_0,
  PROP_ZOOM,
  PROP_FIT,
  PROP_ACTIVE_PANE,
  N_PROPS,
  PROP_HADJUSTMENT = N_PROPS,
  PROP_VADJUSTMENT,
  PROP_HSCROLL_POLICY,
  PROP_VSCROLL_POLICY,
};

enum { SIGNAL_HOVER, SIGNAL_STEP, SIGNAL_CLICKED, N_SIGNALS };

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE_WITH_CODE (EsCanvas, es_canvas, GTK_TYPE_WIDGET, G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE, NULL))

/* Zoom steps for keys and wheel clicks: integer zooms keep pixel blocks even. */
static const double zoom_steps[] = {
  1.0 / 32, 1.0 / 24, 1.0 / 16, 1.0 / 12, 1.0 / 8, 1.0 / 6, 1.0 / 4, 1.0 / 3, 1.0 / 2, 2.0 / 3, 1,  1.5,
  2,        3,        4,        6,        8,       12,      16,      24,      32,      48,      64,
};

/* Geometry */

static void
pane_size_for (EsCanvas *self, int n_panes, double *width, double *height)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));

  if (n_panes > 1)
    {
      w = (w - GAP) / 2;
      h = (h - GAP) / 2;
    }
  *width = MAX (w, 1);
  *height = MAX (h, 1);
}

static void
pane_size (EsCanvas *self, double *width, double *height)
{
  pane_size_for (self, self->n_panes, width, height);
}

static void
pane_origin (EsCanvas *self, int pane, double *x, double *y)
{
  double pw, ph;

  pane_size (self, &pw, &ph);
  *x = (pane % 2) * (pw + GAP);
  *y = (pane / 2) * (ph + GAP);
}

static double
fit_zoom_for (EsCanvas *self, int n_panes, int image_width, int image_height)
{
  double pw, ph, zoom;

  if (image_width == 0)
    return 1.0;
  pane_size_for (self, n_panes, &pw, &ph);
  zoom = MIN (pw / image_width, ph / image_height);
  /* Enlarged, the fit keeps every image pixel the same whole number of
   * screen pixels: uneven blocks would look like artefacts. */
  return zoom >= 1 ? floor (zoom) : zoom;
}

static double
fit_zoom (EsCanvas *self)
{
  return fit_zoom_for (self, self->n_panes, self->image_width, self->image_height);
}

static double
min_zoom (EsCanvas *self)
{
  return MAX (MIN (fit_zoom (self), 1.0) / 2, zoom_steps[0]);
}

static double
max_zoom (EsCanvas *self)
{
  return MAX (MAX_ZOOM, fit_zoom (self));
}

/* The device-pixel position of the image's top-left corner inside a pane:
 * centred when the image is smaller than the pane, else set by the scroll
 * position. Rounded so that pixel blocks sit on the device pixel grid. */
static void
origin_for (double pw, double ph, double cw, double ch, double hvalue, double vvalue, int scale_factor, int *ox,
            int *oy)
{
  double x = cw < pw ? (pw - cw) / 2 : -hvalue;
  double y = ch < ph ? (ph - ch) / 2 : -vvalue;

  *ox = (int) round (x * scale_factor);
  *oy = (int) round (y * scale_factor);
}

static void
content_origin (EsCanvas *self, int scale_factor, int *ox, int *oy)
{
  double pw, ph;

  pane_size (self, &pw, &ph);
  origin_for (pw, ph, self->image_width * self->zoom, self->image_height * self->zoom,
              gtk_adjustment_get_value (self->hadjustment), gtk_adjustment_get_value (self->vadjustment), scale_factor,
              ox, oy);
}

static void
configure_adjustments (EsCanvas *self, double hvalue, double vvalue)
{
  double pw, ph;
  double cw = self->image_width * self->zoom, ch = self->image_height * self->zoom;

  pane_size (self, &pw, &ph);
  if (self->hadjustment)
    gtk_adjustment_configure (self->hadjustment, CLAMP (hvalue, 0, MAX (cw - pw, 0)), 0, MAX (cw, pw), pw * 0.1,
                              pw * 0.9, pw);
  if (self->vadjustment)
    gtk_adjustment_configure (self->vadjustment, CLAMP (vvalue, 0, MAX (ch - ph, 0)), 0, MAX (ch, ph), ph * 0.1,
                              ph * 0.9, ph);
}

gboolean
_es_canvas_widget_to_image (EsCanvas *self, double x, double y, int *pane, double *ix, double *iy)
{
  double pw, ph, px, py;
  int sf = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  int ox, oy, p;

  if (self->n_panes == 0)
    return FALSE;
  pane_size (self, &pw, &ph);
  p = self->n_panes == 1 ? 0 : (x >= pw + GAP / 2.0) + 2 * (y >= ph + GAP / 2.0);
  if (p >= self->n_panes)
    return FALSE;
  pane_origin (self, p, &px, &py);
  content_origin (self, sf, &ox, &oy);
  *pane = p;
  *ix = ((x - px) * sf - ox) / (self->zoom * sf);
  *iy = ((y - py) * sf - oy) / (self->zoom * sf);
  return TRUE;
}

void
_es_canvas_update_hover (EsCanvas *self)
{
  int pane = -1, x = -1, y = -1;
  double ix, iy;

  if (self->pointer_inside && _es_canvas_widget_to_image (self, self->pointer_x, self->pointer_y, &pane, &ix, &iy)
      && ix >= 0 && iy >= 0 && ix < es_layer_width (self->panes[pane].layer)
      && iy < es_layer_height (self->panes[pane].layer))
    {
      x = (int) ix;
      y = (int) iy;
    }
  else
    pane = -1;

  if (pane == self->hover_pane && x == self->hover_x && y == self->hover_y)
    return;
  self->hover_pane = pane;
  self->hover_x = x;
  self->hover_y = y;
  g_signal_emit (self, signals[SIGNAL_HOVER], 0, pane, x, y);
}

void
_es_canvas_zoom_at (EsCanvas *self, double zoom, double x, double y, gboolean fit)
{
  double pw, ph, px, py, ix, iy, ax, ay;
  int pane;

  if (self->image_width == 0)
    return;
  zoom = CLAMP (zoom, min_zoom (self), max_zoom (self));
  pane_size (self, &pw, &ph);
  if (!_es_canvas_widget_to_image (self, x, y, &pane, &ix, &iy))
    {
      pane = 0;
      x = pw / 2;
      y = ph / 2;
      _es_canvas_widget_to_image (self, x, y, &pane, &ix, &iy);
    }
  pane_origin (self, pane, &px, &py);
  ax = x - px;
  ay = y - py;

  self->zoom = zoom;
  self->fit = fit;
  configure_adjustments (self, ix * zoom - ax, iy * zoom - ay);
  for (int i = 0; i < self->n_panes; i++)
    es_rendering_clear (&self->panes[i].rendering);
  _es_canvas_update_hover (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT]);
}

static void
zoom_about_focus (EsCanvas *self, double zoom, gboolean fit)
{
  double pw, ph;

  /* Keys zoom about the pointer when it is over the canvas, else the centre. */
  if (self->pointer_inside)
    _es_canvas_zoom_at (self, zoom, self->pointer_x, self->pointer_y, fit);
  else
    {
      pane_size (self, &pw, &ph);
      _es_canvas_zoom_at (self, zoom, pw / 2, ph / 2, fit);
    }
}

double
_es_canvas_next_zoom (double zoom, int direction)
{
  if (direction > 0)
    {
      for (guint i = 0; i < G_N_ELEMENTS (zoom_steps); i++)
        if (zoom_steps[i] > zoom * 1.01)
          return zoom_steps[i];
      return zoom_steps[G_N_ELEMENTS (zoom_steps) - 1];
    }
  for (int i = G_N_ELEMENTS (zoom_steps) - 1; i >= 0; i--)
    if (zoom_steps[i] < zoom / 1.01)
      return zoom_steps[i];
  return zoom_steps[0];
}

/* Public API */

static void
pane_clear (Pane *pane)
{
  g_clear_pointer (&pane->layer, es_layer_unref);
  g_clear_pointer (&pane->label, g_free);
  g_clear_pointer (&pane->overlay, g_free);
  es_rendering_clear (&pane->rendering);
}

/* Overlays */

static gboolean
overlay_shown (EsCanvas *self, int pane)
{
  return pane < self->n_panes && self->panes[pane].overlay != NULL;
}

/* Shown, and where it covers neither the caption nor its pane's label. */
static gboolean
overlay_visible (EsCanvas *self, int pane)
{
  return overlay_shown (self, pane) && self->panes[pane].overlay_fits;
}

static void
overlay_size (EsCanvas *self, int pane, int *width, int *height)
{
  gtk_widget_measure (self->overlay_labels[pane], GTK_ORIENTATION_HORIZONTAL, -1, NULL, width, NULL, NULL);
  gtk_widget_measure (self->overlay_labels[pane], GTK_ORIENTATION_VERTICAL, *width, NULL, height, NULL, NULL);
}

/* Where an overlay of width × height sits in a corner, in pane coordinates. */
static graphene_rect_t
overlay_rect (EsOverlayCorner corner, double pw, double ph, int width, int height)
{
  double left = OVERLAY_MARGIN, right = pw - OVERLAY_MARGIN - width;
  double top = OVERLAY_MARGIN, bottom = ph - OVERLAY_MARGIN - height;
  graphene_rect_t rect;

  graphene_rect_init (&rect, MAX (corner == ES_OVERLAY_BOTTOM_LEFT ? left : right, 0),
                      MAX (corner == ES_OVERLAY_TOP_RIGHT ? top : bottom, 0), width, height);
  return rect;
}

static double
overlap_fraction (const graphene_rect_t *rect, const graphene_rect_t *other)
{
  graphene_rect_t common;

  if (!graphene_rect_intersection (rect, other, &common))
    return 0;
  return (double) common.size.width * common.size.height / MAX (rect->size.width * rect->size.height, 1);
}

/* The corner where a pane's overlay hides the least: never over the
 * caption or the pane's label (*fits is FALSE where every corner would
 * be: a pane too small for it, such as the orthogonal views' in a small
 * window); never where the pointer is or a tool's shape lies if another
 * corner is free of them; then in the margin around the image rather than
 * over it; then where it already is, so that it does not jump about. */
static EsOverlayCorner
choose_corner (EsCanvas *self, int index, gboolean *fits)
{
  Pane *pane = &self->panes[index];
  int sf = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  double pw, ph, px, py, best_score = G_MAXDOUBLE;
  int width, height, ox, oy;
  graphene_rect_t image, label = GRAPHENE_RECT_INIT (0, 0, 0, 0);
  EsOverlayCorner best = pane->overlay_corner;

  pane_size (self, &pw, &ph);
  pane_origin (self, index, &px, &py);
  /* The pane's label, laid out once for every corner (none: no area). */
  (void) _es_canvas_pane_label_bounds (self, index, &label);
  content_origin (self, sf, &ox, &oy);
  overlay_size (self, index, &width, &height);
  graphene_rect_init (&image, (double) ox / sf, (double) oy / sf, es_layer_width (pane->layer) * self->zoom,
                      es_layer_height (pane->layer) * self->zoom);
  for (EsOverlayCorner corner = 0; corner < ES_N_OVERLAY_CORNERS; corner++)
    {
      graphene_rect_t rect = overlay_rect (corner, pw, ph, width, height), near, in_canvas;
      double score = 10 * overlap_fraction (&rect, &image) + (corner != pane->overlay_corner);

      graphene_rect_inset_r (&rect, -POINTER_CLEARANCE, -POINTER_CLEARANCE, &near);
      if (self->pointer_inside
          && graphene_rect_contains_point (&near, &GRAPHENE_POINT_INIT (self->pointer_x - px, self->pointer_y - py)))
        score += 1000;
      for (int k = 0; k < pane->n_keep_clear; k++)
        score += 100 * (graphene_rect_intersection (&near, &pane->keep_clear[k], NULL) ? 1 : 0);
      graphene_rect_offset_r (&rect, (float) px, (float) py, &in_canvas);
      if (overlap_fraction (&in_canvas, &self->caption) > 0 || overlap_fraction (&in_canvas, &label) > 0)
        score += COVERS_LABELS;
      if (score < best_score)
        {
          best_score = score;
          best = corner;
        }
    }
  *fits = best_score < COVERS_LABELS;
  return best;
}

/* Moves overlays whose best corner changed; TRUE when one moved. */
static gboolean
place_overlays (EsCanvas *self)
{
  gboolean moved = FALSE;

  for (int i = 0; i < self->n_panes; i++)
    if (overlay_shown (self, i))
      {
        gboolean fits;
        EsOverlayCorner corner = choose_corner (self, i, &fits);

        moved |= corner != self->panes[i].overlay_corner || fits != self->panes[i].overlay_fits;
        self->panes[i].overlay_corner = corner;
        self->panes[i].overlay_fits = fits;
      }
  if (moved)
    gtk_widget_queue_allocate (GTK_WIDGET (self));
  return moved;
}

void
_es_canvas_pointer_moved (EsCanvas *self)
{
  place_overlays (self);
}

static void
allocate_overlays (EsCanvas *self)
{
  double pw, ph, px, py;

  pane_size (self, &pw, &ph);
  for (int i = 0; i < ES_CANVAS_MAX_PANES; i++)
    {
      GtkWidget *label = self->overlay_labels[i];
      GtkAllocation allocation;
      graphene_rect_t rect;
      int width, height;

      if (overlay_shown (self, i))
        self->panes[i].overlay_corner = choose_corner (self, i, &self->panes[i].overlay_fits);
      gtk_widget_set_child_visible (label, overlay_visible (self, i));
      if (!overlay_visible (self, i))
        continue;
      overlay_size (self, i, &width, &height);
      rect = overlay_rect (self->panes[i].overlay_corner, pw, ph, width, height);
      pane_origin (self, i, &px, &py);
      allocation.x = (int) (px + rect.origin.x);
      allocation.y = (int) (py + rect.origin.y);
      allocation.width = width;
      allocation.height = height;
      gtk_widget_size_allocate (label, &allocation, -1);
    }
}

static void
set_overlay (EsCanvas *self, int index, const char *text)
{
  Pane *pane = &self->panes[index];

  if (g_strcmp0 (pane->overlay, text) == 0)
    return;
  g_free (pane->overlay);
  pane->overlay = g_strdup (text);
  gtk_label_set_label (GTK_LABEL (self->overlay_labels[index]), text ? text : "");
  gtk_widget_queue_allocate (GTK_WIDGET (self));
}

void
es_canvas_keep_clear (EsCanvas *self, const graphene_rect_t *rect)
{
  Pane *pane;

  g_return_if_fail (ES_IS_CANVAS (self));
  g_return_if_fail (self->drawing_pane >= 0);

  pane = &self->panes[self->drawing_pane];
  if (pane->n_keep_clear < ES_CANVAS_MAX_KEEP_CLEAR)
    pane->keep_clear[pane->n_keep_clear++] = *rect;
}

gboolean
es_canvas_get_overlay (EsCanvas *self, int pane, graphene_rect_t *bounds, const char **text)
{
  g_return_val_if_fail (ES_IS_CANVAS (self), FALSE);

  if (pane < 0 || pane >= ES_CANVAS_MAX_PANES || !overlay_visible (self, pane)
      || !gtk_widget_compute_bounds (self->overlay_labels[pane], GTK_WIDGET (self), bounds))
    return FALSE;
  *text = self->panes[pane].overlay;
  return TRUE;
}

void
es_canvas_set_panes (EsCanvas *self, const EsCanvasPane *panes, int n_panes)
{
  gboolean new_size;
  int old_n = self->n_panes;

  g_return_if_fail (ES_IS_CANVAS (self));
  g_return_if_fail (n_panes >= 1 && n_panes <= ES_CANVAS_MAX_PANES);

  new_size = es_layer_width (panes[0].layer) != self->image_width
             || es_layer_height (panes[0].layer) != self->image_height;
  for (int i = n_panes; i < ES_CANVAS_MAX_PANES; i++)
    {
      set_overlay (self, i, NULL);
      pane_clear (&self->panes[i]);
    }
  for (int i = 0; i < n_panes; i++)
    {
      EsLayer *old = self->panes[i].layer;

      /* Compared while the old layer is alive, so that a new layer at a
       * recycled address cannot reuse the old rendering. */
      if (old != panes[i].layer)
        {
          es_rendering_clear (&self->panes[i].rendering);
          if (panes[i].rendering && panes[i].rendering->pixels.surface)
            {
              self->panes[i].rendering = *panes[i].rendering;
              cairo_surface_reference (self->panes[i].rendering.pixels.surface);
              if (self->panes[i].rendering.pixels.texture)
                g_object_ref (self->panes[i].rendering.pixels.texture);
            }
        }
      self->panes[i].layer = es_layer_ref (panes[i].layer);
      self->panes[i].scale = panes[i].scale;
      g_free (self->panes[i].label);
      self->panes[i].label = g_strdup (panes[i].label);
      self->panes[i].cross_x = panes[i].cross_x;
      self->panes[i].cross_y = panes[i].cross_y;
      set_overlay (self, i, panes[i].overlay);
      if (old)
        es_layer_unref (old);
    }
  self->n_panes = n_panes;
  self->image_width = es_layer_width (panes[0].layer);
  self->image_height = es_layer_height (panes[0].layer);

  if (new_size || old_n != n_panes || self->fit)
    {
      double h = gtk_adjustment_get_value (self->hadjustment);
      double v = gtk_adjustment_get_value (self->vadjustment);

      if (new_size || (self->fit && self->fit_holds == 0))
        {
          self->zoom = fit_zoom (self);
          self->fit = TRUE;
          h = v = 0;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT]);
        }
      configure_adjustments (self, h, v);
    }
  _es_canvas_update_hover (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
es_canvas_plan_viewport (EsCanvas *self, int n_panes, int image_width, int image_height, EsViewport *viewport)
{
  int sf;
  double pw, ph, hvalue = 0, vvalue = 0, zoom;

  g_return_if_fail (ES_IS_CANVAS (self));

  /* As es_canvas_set_panes will place it: a new size, or the fit, fits
   * the image to the panes; else zoom and scroll stay, within range. */
  sf = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  pane_size_for (self, n_panes, &pw, &ph);
  if (image_width != self->image_width || image_height != self->image_height || self->fit)
    zoom = fit_zoom_for (self, n_panes, image_width, image_height);
  else
    {
      zoom = self->zoom;
      hvalue = CLAMP (gtk_adjustment_get_value (self->hadjustment), 0, MAX (image_width * zoom - pw, 0));
      vvalue = CLAMP (gtk_adjustment_get_value (self->vadjustment), 0, MAX (image_height * zoom - ph, 0));
    }
  origin_for (pw, ph, image_width * zoom, image_height * zoom, hvalue, vvalue, sf, &viewport->origin_x,
              &viewport->origin_y);
  viewport->zoom = zoom * sf;
  viewport->pane_width = (int) (pw * sf);
  viewport->pane_height = (int) (ph * sf);
}

void
_es_canvas_emit_step (EsCanvas *self, int direction)
{
  g_signal_emit (self, signals[SIGNAL_STEP], 0, direction);
}

void
_es_canvas_emit_clicked (EsCanvas *self, int pane, int x, int y)
{
  g_signal_emit (self, signals[SIGNAL_CLICKED], 0, pane, x, y);
}

void
es_canvas_set_stepping (EsCanvas *self, gboolean stepping)
{
  g_return_if_fail (ES_IS_CANVAS (self));
  self->stepping = stepping;
}

int
es_canvas_get_n_panes (EsCanvas *self)
{
  g_return_val_if_fail (ES_IS_CANVAS (self), 0);
  return self->n_panes;
}

int
es_canvas_get_active_pane (EsCanvas *self)
{
  g_return_val_if_fail (ES_IS_CANVAS (self), 0);
  return self->active_pane;
}

void
es_canvas_hold_fit (EsCanvas *self, gboolean hold)
{
  g_return_if_fail (ES_IS_CANVAS (self));
  g_return_if_fail (hold || self->fit_holds > 0);

  self->fit_holds += hold ? 1 : -1;
  /* A size change while held is fitted now. */
  if (self->fit_holds == 0 && self->fit && self->image_width > 0 && self->zoom != fit_zoom (self))
    _es_canvas_zoom_at (self, fit_zoom (self), 0, 0, TRUE);
}

void
es_canvas_set_caption (EsCanvas *self, const graphene_rect_t *caption)
{
  graphene_rect_t none = GRAPHENE_RECT_INIT (0, 0, 0, 0);

  g_return_if_fail (ES_IS_CANVAS (self));

  if (caption == NULL)
    caption = &none;
  if (graphene_rect_equal (&self->caption, caption))
    return;
  self->caption = *caption;
  self->label_top = caption->size.height > 0 ? (int) ceilf (caption->origin.y + caption->size.height) + 4 : 8;
  /* The frame places the overlays again (place_overlays). */
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
es_canvas_set_active_pane (EsCanvas *self, int pane)
{
  g_return_if_fail (ES_IS_CANVAS (self));

  pane = CLAMP (pane, 0, ES_CANVAS_MAX_PANES - 1);
  if (pane == self->active_pane)
    return;
  self->active_pane = pane;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ACTIVE_PANE]);
}

double
es_canvas_get_zoom (EsCanvas *self)
{
  g_return_val_if_fail (ES_IS_CANVAS (self), 1.0);
  return self->zoom;
}

void
es_canvas_set_zoom (EsCanvas *self, double zoom)
{
  g_return_if_fail (ES_IS_CANVAS (self));
  zoom_about_focus (self, zoom, FALSE);
}

gboolean
es_canvas_get_fit (EsCanvas *self)
{
  g_return_val_if_fail (ES_IS_CANVAS (self), FALSE);
  return self->fit;
}

void
es_canvas_zoom_fit (EsCanvas *self)
{
  g_return_if_fail (ES_IS_CANVAS (self));
  zoom_about_focus (self, fit_zoom (self), TRUE);
}

void
es_canvas_zoom_in (EsCanvas *self)
{
  g_return_if_fail (ES_IS_CANVAS (self));
  zoom_about_focus (self, _es_canvas_next_zoom (self->zoom, 1), FALSE);
}

void
es_canvas_zoom_out (EsCanvas *self)
{
  g_return_if_fail (ES_IS_CANVAS (self));
  zoom_about_focus (self, _es_canvas_next_zoom (self->zoom, -1), FALSE);
}

void
es_canvas_set_draw_func (EsCanvas *self, EsCanvasDrawFunc func, gpointer user_data)
{
  g_return_if_fail (ES_IS_CANVAS (self));
  self->draw_func = func;
  self->draw_data = user_data;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
es_canvas_widget_to_image (EsCanvas *self, double x, double y, int *pane, double *ix, double *iy)
{
  g_return_val_if_fail (ES_IS_CANVAS (self), FALSE);
  return _es_canvas_widget_to_image (self, x, y, pane, ix, iy);
}

/* Drawing */

static const EsRendering *
pane_rendering (EsCanvas *self, Pane *pane, const EsViewport *viewport)
{
  gint64 started;
  int width, height;

  if (es_rendering_matches (&pane->rendering, viewport, &pane->scale))
    return &pane->rendering;
  /* Zoom, pan, a resize or a display change: rendered here, on the main
   * thread. A new result comes with its rendering from the worker. */
  es_rendering_clear (&pane->rendering);
  started = g_get_monotonic_time ();
  if (!es_layer_render_viewport (pane->layer, &pane->scale, viewport, FALSE, &pane->rendering))
    return NULL;
  width = cairo_image_surface_get_width (pane->rendering.pixels.surface);
  height = cairo_image_surface_get_height (pane->rendering.pixels.surface);
  es_debug_log ("canvas: rendered %d × %d pixels on the main thread in %.1f ms", width, height,
                (g_get_monotonic_time () - started) / 1000.0);
  return &pane->rendering;
}

/* A pane's label ("XY · z 12", a view's title) as laid out, and its box in
 * the pane's coordinates: the top row's below the caption. */
static PangoLayout *
pane_label_layout (EsCanvas *self, int index, graphene_rect_t *box)
{
  const Pane *pane = &self->panes[index];
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self),
                                                        pane->label ? pane->label : es_view_title (pane->layer->view));
  PangoRectangle extent;
  double px, py;

  pane_origin (self, index, &px, &py);
  pango_layout_get_pixel_extents (layout, NULL, &extent);
  graphene_rect_init (box, 8, py == 0 ? self->label_top : 8, extent.width + 16, extent.height + 8);
  return layout;
}

gboolean
_es_canvas_pane_label_bounds (EsCanvas *self, int pane, graphene_rect_t *bounds)
{
  double px, py;

  if (self->n_panes < 2 || pane < 0 || pane >= self->n_panes)
    return FALSE;
  g_object_unref (pane_label_layout (self, pane, bounds));
  pane_origin (self, pane, &px, &py);
  graphene_rect_offset (bounds, (float) px, (float) py);
  return TRUE;
}

static void
draw_label (EsCanvas *self, GtkSnapshot *snapshot, int index)
{
  graphene_rect_t bounds;
  PangoLayout *layout = pane_label_layout (self, index, &bounds);
  GskRoundedRect box;
  GdkRGBA bg = { 0, 0, 0, 0.62 }, fg = { 1, 1, 1, 1 };
  GdkRGBA accent = { 0.21, 0.52, 0.89, 0.92 };

  gsk_rounded_rect_init_from_rect (&box, &bounds, 6);
  gtk_snapshot_push_rounded_clip (snapshot, &box);
  gtk_snapshot_append_color (snapshot, index == self->active_pane ? &accent : &bg, &box.bounds);
  gtk_snapshot_pop (snapshot);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (bounds.origin.x + 8, bounds.origin.y + 4));
  gtk_snapshot_append_layout (snapshot, layout, &fg);
  gtk_snapshot_restore (snapshot);
  g_object_unref (layout);
}

/* Two lines through the middle of image pixel (cross_x, cross_y), across
 * the pane: light with a dark edge, visible on any colormap. */
static void
draw_crosshair (GtkSnapshot *snapshot, const Pane *pane, double ox, double oy, double zoom, double pw, double ph)
{
  GdkRGBA dark = { 0, 0, 0, 0.55 }, light = { 1.0, 0.85, 0.2, 0.95 };
  double x = floor (ox + (pane->cross_x + 0.5) * zoom), y = floor (oy + (pane->cross_y + 0.5) * zoom);

  gtk_snapshot_append_color (snapshot, &dark, &GRAPHENE_RECT_INIT (x - 1, 0, 3, ph));
  gtk_snapshot_append_color (snapshot, &dark, &GRAPHENE_RECT_INIT (0, y - 1, pw, 3));
  gtk_snapshot_append_color (snapshot, &light, &GRAPHENE_RECT_INIT (x, 0, 1, ph));
  gtk_snapshot_append_color (snapshot, &light, &GRAPHENE_RECT_INIT (0, y, pw, 1));
}

void
es_canvas_append_pixels (EsCanvas *self, GtkSnapshot *snapshot, EsPixels *pixels, int x, int y)
{
  GtkNative *native = gtk_widget_get_native (GTK_WIDGET (self));
  GskRenderer *renderer = native ? gtk_native_get_renderer (native) : NULL;
  int sf = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  int width = cairo_image_surface_get_width (pixels->surface);
  int height = cairo_image_surface_get_height (pixels->surface);
  graphene_rect_t bounds = GRAPHENE_RECT_INIT (x, y, width, height);

  gtk_snapshot_save (snapshot);
  gtk_snapshot_scale (snapshot, 1.0 / sf, 1.0 / sf);
  if (renderer == NULL || GSK_IS_CAIRO_RENDERER (renderer))
    {
      /* Replayed onto the frame as one blit of the surface's bytes. */
      cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &bounds);

      cairo_set_source_surface (cr, pixels->surface, x, y);
      cairo_paint (cr);
      cairo_destroy (cr);
    }
  else
    {
      /* The GL renderers upload a texture once and keep it while it lives:
       * the surface's own bytes, which the texture holds on to. */
      if (pixels->texture == NULL)
        {
          GBytes *bytes = g_bytes_new_with_free_func (
            cairo_image_surface_get_data (pixels->surface),
            (gsize) cairo_image_surface_get_stride (pixels->surface) * (gsize) height,
            (GDestroyNotify) cairo_surface_destroy, cairo_surface_reference (pixels->surface));

          pixels->texture = gdk_memory_texture_new (width, height, GDK_MEMORY_DEFAULT, bytes,
                                                    (gsize) cairo_image_surface_get_stride (pixels->surface));
          g_bytes_unref (bytes);
        }
      gtk_snapshot_append_texture (snapshot, pixels->texture, &bounds);
    }
  gtk_snapshot_restore (snapshot);
}

static void
es_canvas_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  EsCanvas *self = ES_CANVAS (widget);
  int sf = gtk_widget_get_scale_factor (widget);
  double pw, ph;
  int ox, oy;
  GdkRGBA separator = { 0.24, 0.24, 0.27, 1 };

  if (self->n_panes == 0)
    return;
  pane_size (self, &pw, &ph);
  content_origin (self, sf, &ox, &oy);

  if (self->n_panes > 1)
    {
      gtk_snapshot_append_color (snapshot, &separator,
                                 &GRAPHENE_RECT_INIT (pw, 0, GAP, gtk_widget_get_height (widget)));
      gtk_snapshot_append_color (snapshot, &separator, &GRAPHENE_RECT_INIT (0, ph, gtk_widget_get_width (widget), GAP));
    }

  for (int i = 0; i < self->n_panes; i++)
    {
      Pane *pane = &self->panes[i];
      double px, py;
      const EsRendering *rendering;
      EsViewport viewport = { self->zoom * sf, ox, oy, (int) (pw * sf), (int) (ph * sf) };

      pane_origin (self, i, &px, &py);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (px, py));
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, pw, ph));

      rendering = pane_rendering (self, pane, &viewport);
      if (rendering)
        es_canvas_append_pixels (self, snapshot, &pane->rendering.pixels, rendering->x, rendering->y);
      pane->n_keep_clear = 0;
      if (self->draw_func)
        {
          EsCanvasPaneGeometry geometry = { i, (double) ox / sf, (double) oy / sf, self->zoom, pw, ph, sf, ox, oy };

          self->drawing_pane = i;
          self->draw_func (self, snapshot, &geometry, self->draw_data);
          self->drawing_pane = -1;
        }
      if (pane->cross_x >= 0)
        draw_crosshair (snapshot, pane, (double) ox / sf, (double) oy / sf, self->zoom, pw, ph);
      if (self->n_panes > 1)
        draw_label (self, snapshot, i);

      gtk_snapshot_pop (snapshot);
      gtk_snapshot_restore (snapshot);
    }
  /* The shapes just drawn may lie where an overlay is: it moves in the
   * next frame. */
  place_overlays (self);
  for (int i = 0; i < self->n_panes; i++)
    if (overlay_visible (self, i))
      gtk_widget_snapshot_child (widget, self->overlay_labels[i], snapshot);
}

/* GtkWidget and GtkScrollable */

static void
es_canvas_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  EsCanvas *self = ES_CANVAS (widget);

  if (self->fit && self->fit_holds == 0 && self->image_width > 0)
    {
      self->zoom = fit_zoom (self);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
  configure_adjustments (self, self->hadjustment ? gtk_adjustment_get_value (self->hadjustment) : 0,
                         self->vadjustment ? gtk_adjustment_get_value (self->vadjustment) : 0);
  allocate_overlays (self);
}

static void
es_canvas_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                   int *minimum_baseline, int *natural_baseline)
{
  *minimum = 64;
  *natural = 480;
}

static void
on_adjustment_changed (GtkAdjustment *adjustment, EsCanvas *self)
{
  g_assert (ES_IS_CANVAS (self));
  _es_canvas_update_hover (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_adjustment (EsCanvas *self, GtkAdjustment **slot, GtkAdjustment *adjustment)
{
  if (adjustment == NULL)
    adjustment = gtk_adjustment_new (0, 0, 0, 0, 0, 0);
  if (*slot == adjustment)
    return;
  if (*slot)
    {
      g_signal_handlers_disconnect_by_func (*slot, on_adjustment_changed, self);
      g_object_unref (*slot);
    }
  *slot = g_object_ref_sink (adjustment);
  g_signal_connect (adjustment, "value-changed", G_CALLBACK (on_adjustment_changed), self);
  configure_adjustments (self, gtk_adjustment_get_value (adjustment), gtk_adjustment_get_value (adjustment));
}

static void
es_canvas_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  EsCanvas *self = ES_CANVAS (object);

  switch (prop_id)
    {
    case PROP_ZOOM: g_value_set_double (value, self->zoom); break;
    case PROP_FIT: g_value_set_boolean (value, self->fit); break;
    case PROP_ACTIVE_PANE: g_value_set_int (value, self->active_pane); break;
    case PROP_HADJUSTMENT: g_value_set_object (value, self->hadjustment); break;
    case PROP_VADJUSTMENT: g_value_set_object (value, self->vadjustment); break;
    case PROP_HSCROLL_POLICY: g_value_set_enum (value, self->hscroll_policy); break;
    case PROP_VSCROLL_POLICY: g_value_set_enum (value, self->vscroll_policy); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
es_canvas_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  EsCanvas *self = ES_CANVAS (object);

  switch (prop_id)
    {
    case PROP_ZOOM: es_canvas_set_zoom (self, g_value_get_double (value)); break;
    case PROP_FIT:
      if (g_value_get_boolean (value))
        es_canvas_zoom_fit (self);
      break;
    case PROP_ACTIVE_PANE: es_canvas_set_active_pane (self, g_value_get_int (value)); break;
    case PROP_HADJUSTMENT: set_adjustment (self, &self->hadjustment, g_value_get_object (value)); break;
    case PROP_VADJUSTMENT: set_adjustment (self, &self->vadjustment, g_value_get_object (value)); break;
    case PROP_HSCROLL_POLICY: self->hscroll_policy = g_value_get_enum (value); break;
    case PROP_VSCROLL_POLICY: self->vscroll_policy = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
es_canvas_dispose (GObject *object)
{
  EsCanvas *self = ES_CANVAS (object);

  for (int i = 0; i < ES_CANVAS_MAX_PANES; i++)
    {
      pane_clear (&self->panes[i]);
      g_clear_pointer (&self->overlay_labels[i], gtk_widget_unparent);
    }
  self->n_panes = 0;
  if (self->hadjustment)
    g_signal_handlers_disconnect_by_func (self->hadjustment, on_adjustment_changed, self);
  if (self->vadjustment)
    g_signal_handlers_disconnect_by_func (self->vadjustment, on_adjustment_changed, self);
  g_clear_object (&self->hadjustment);
  g_clear_object (&self->vadjustment);
  G_OBJECT_CLASS (es_canvas_parent_class)->dispose (object);
}

static void
es_canvas_class_init (EsCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = es_canvas_get_property;
  object_class->set_property = es_canvas_set_property;
  object_class->dispose = es_canvas_dispose;
  widget_class->snapshot = es_canvas_snapshot;
  widget_class->size_allocate = es_canvas_size_allocate;
  widget_class->measure = es_canvas_measure;

  properties[PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, zoom_steps[0], 1e4, 1.0,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FIT] = g_param_spec_boolean ("fit", NULL, NULL, TRUE,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ACTIVE_PANE] = g_param_spec_int ("active-pane", NULL, NULL, 0, ES_CANVAS_MAX_PANES - 1, 0,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY
                                                     | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  g_object_class_override_property (object_class, PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property (object_class, PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property (object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property (object_class, PROP_VSCROLL_POLICY, "vscroll-policy");

  /* Emitted with the pane and image pixel under the pointer; pane is -1
   * when the pointer is not over the image. */
  signals[SIGNAL_HOVER] = g_signal_new ("hover", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 3, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT);
  /* es_canvas_set_stepping: Ctrl and the wheel, +1 or −1. */
  signals[SIGNAL_STEP] = g_signal_new ("step", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 1, G_TYPE_INT);
  /* A click without a drag on a pane's image: the pane and the image pixel. */
  signals[SIGNAL_CLICKED] = g_signal_new ("clicked", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 3, G_TYPE_INT, G_TYPE_INT, G_TYPE_INT);

  gtk_widget_class_set_css_name (widget_class, "escanvas");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
es_canvas_init (EsCanvas *self)
{
  self->zoom = 1.0;
  self->fit = TRUE;
  self->label_top = 8;
  self->hover_pane = -1;
  self->hover_x = self->hover_y = -1;
  set_adjustment (self, &self->hadjustment, NULL);
  set_adjustment (self, &self->vadjustment, NULL);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
  self->drawing_pane = -1;
  for (int i = 0; i < ES_CANVAS_MAX_PANES; i++)
    {
      /* Labels: the pointer goes through them to the image beneath. */
      GtkWidget *label = gtk_label_new (NULL);

      gtk_widget_add_css_class (label, "timing-overlay");
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_widget_set_can_target (label, FALSE);
      gtk_widget_set_child_visible (label, FALSE);
      gtk_widget_set_parent (label, GTK_WIDGET (self));
      self->overlay_labels[i] = label;
    }

  _es_canvas_input_init (self);
}
