/* SPDX-License-Identifier: MIT */
/* EsCanvas: a zoomable, pannable view of one layer or a linked 2×2 grid of four. */
#pragma once

#include <gtk/gtk.h>

#include "es-layer.h"

G_BEGIN_DECLS

#define ES_TYPE_CANVAS (es_canvas_get_type ())
G_DECLARE_FINAL_TYPE (EsCanvas, es_canvas, ES, CANVAS, GtkWidget)

#define ES_CANVAS_MAX_PANES 4

typedef struct {
  EsLayer *layer;     /* borrowed for the call; the canvas keeps a ref */
  EsColorScale scale; /* the colours to draw it with */
  /* The grid's label over the pane (copied); NULL: the view's title. */
  const char *label;
  /* A crosshair through image point (cross_x, cross_y) of the pane: the
   * orthogonal views' lines; no crosshair when cross_x is negative. */
  double cross_x, cross_y;
  /* The pane's pixels made off the main thread (the worker's, for the
   * viewport of es_canvas_plan_viewport), used while it fits the pane; a
   * new reference is taken. NULL: the canvas renders the pane itself. */
  const EsRendering *rendering;
  /* The timing overlay's text (copied; a line a figure); NULL: none. */
  const char *overlay;
} EsCanvasPane;

/* Shows one pane, or three or four in a 2×2 grid that share zoom and pan:
 * the first pane's size sets both, the others may be of other sizes (the
 * orthogonal views' slices), drawn from the same origin so that their rows
 * and columns line up with the first's. A new size fits the image to the
 * view; the same size keeps zoom and pan. */
void es_canvas_set_panes (EsCanvas *self, const EsCanvasPane *panes, int n_panes);
/* Where es_canvas_set_panes with n_panes panes will show a layer of
 * image_width × image_height pixels, as things stand: the viewport for
 * which the worker renders a result's first pixels. */
void es_canvas_plan_viewport (EsCanvas *self, int n_panes, int image_width, int image_height, EsViewport *viewport);
/* The caption that the window lays over the canvas's top left corner, in
 * canvas coordinates, or NULL for none: the top row's pane labels start
 * below it, and no timing overlay covers it. */
void es_canvas_set_caption (EsCanvas *self, const graphene_rect_t *caption);
/* While a button is held on the canvas (a pan, or a tool's shape being
 * drawn), a fit keeps its zoom when the canvas's size changes: the gesture's
 * points stay where the user aimed. Each hold is released once; the last
 * release fits again. */
void es_canvas_hold_fit (EsCanvas *self, gboolean hold);
/* The pane that export, copy and the colorbar follow (chosen by a click). */
int es_canvas_get_active_pane (EsCanvas *self);
void es_canvas_set_active_pane (EsCanvas *self, int pane);

/* Zoom is screen pixels per image pixel. Set directly, it keeps the image
 * point at the centre of the view (or under the pointer) where it was. */
double es_canvas_get_zoom (EsCanvas *self);
void es_canvas_set_zoom (EsCanvas *self, double zoom);
void es_canvas_zoom_fit (EsCanvas *self);
void es_canvas_zoom_in (EsCanvas *self);
void es_canvas_zoom_out (EsCanvas *self);

/* Where a pane shows the image (logical pixels, in the pane): image point
 * (ix, iy) lies at (x + ix · zoom, y + iy · zoom); device_x and device_y
 * are x and y in device pixels, as the canvas renders them. */
typedef struct {
  int pane;
  double x, y, zoom;
  double width, height;
  int scale_factor;
  int device_x, device_y;
} EsCanvasPaneGeometry;

/* Draws over each pane after its image (the inspection tools' shapes,
 * es-tools.c), clipped to the pane, in the pane's coordinates. */
typedef void (*EsCanvasDrawFunc) (EsCanvas *canvas, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry,
                                  gpointer user_data);
void es_canvas_set_draw_func (EsCanvas *self, EsCanvasDrawFunc func, gpointer user_data);
/* Draws pixels 1:1 with their top-left corner at device pixel (x, y) of
 * the snapshot's coordinates (a pane's, or a draw function's): as a cairo
 * node under the cairo renderer, as a texture kept in pixels otherwise. */
void es_canvas_append_pixels (EsCanvas *self, GtkSnapshot *snapshot, EsPixels *pixels, int x, int y);
/* Called by a draw function: the overlay of the pane being drawn keeps
 * clear of this rectangle (pane coordinates), as of a tool's shape. */
void es_canvas_keep_clear (EsCanvas *self, const graphene_rect_t *rect);
/* The overlay of a pane, where it is in the canvas's coordinates and what
 * it says (borrowed); FALSE when the pane shows none. */
gboolean es_canvas_get_overlay (EsCanvas *self, int pane, graphene_rect_t *bounds, const char **text);
/* The pane under a point of the widget and the image point there (it may
 * lie outside the image); FALSE outside every pane. */
gboolean es_canvas_widget_to_image (EsCanvas *self, double x, double y, int *pane, double *ix, double *iy);
/* With stepping on, a mouse wheel turned with Ctrl held emits "step" (+1
 * away from the user, −1 towards) instead of zooming: a volume's planes.
 * "clicked" (pane, x, y) follows a click without a drag on an image. */
void es_canvas_set_stepping (EsCanvas *self, gboolean stepping);

G_END_DECLS
