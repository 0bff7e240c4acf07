/* SPDX-License-Identifier: MIT */
/* EsCanvas's insides, shared by es-canvas.c and es-canvas-input.c. */
#pragma once

#include "es-canvas.h"

G_BEGIN_DECLS

/* The pane corners a timing overlay may take; the top left holds the
 * caption and the grid's pane labels. */
typedef enum {
  ES_OVERLAY_BOTTOM_LEFT,
  ES_OVERLAY_BOTTOM_RIGHT,
  ES_OVERLAY_TOP_RIGHT,
  ES_N_OVERLAY_CORNERS
} EsOverlayCorner;

/* Shapes that a pane's overlay keeps clear of, gathered while it is drawn. */
#define ES_CANVAS_MAX_KEEP_CLEAR 4

typedef struct {
  EsLayer *layer;
  EsColorScale scale;
  char *label;
  double cross_x, cross_y;
  /* The last rendering and what it was made for. */
  EsRendering rendering;
  /* The timing overlay's text (NULL: none) and where it sits. */
  char *overlay;
  EsOverlayCorner overlay_corner;
  /* FALSE where every corner would cover the caption or the pane's label
   * (a pane too small for it): the overlay is then not shown. */
  gboolean overlay_fits;
  graphene_rect_t keep_clear[ES_CANVAS_MAX_KEEP_CLEAR];
  int n_keep_clear;
} Pane;

struct _EsCanvas {
  GtkWidget parent_instance;

  Pane panes[ES_CANVAS_MAX_PANES];
  int n_panes;
  int active_pane;
  graphene_rect_t caption; /* es_canvas_set_caption; zero size: none */
  int label_top;           /* y of the top row's pane labels: below the caption */
  int image_width, image_height;

  double zoom;
  gboolean fit;
  int fit_holds; /* es_canvas_hold_fit: a fit keeps its zoom while > 0 */

  GtkAdjustment *hadjustment;
  GtkAdjustment *vadjustment;
  guint hscroll_policy : 1;
  guint vscroll_policy : 1;

  /* Pointer state. */
  gboolean pointer_inside;
  double pointer_x, pointer_y;
  int hover_pane, hover_x, hover_y;
  double drag_h, drag_v;
  gboolean dragging;
  double pinch_zoom;
  double scroll_accumulator;
  gboolean stepping;

  EsCanvasDrawFunc draw_func;
  gpointer draw_data;

  /* One label a pane: real widgets, so that screen readers read them. */
  GtkWidget *overlay_labels[ES_CANVAS_MAX_PANES];
  int drawing_pane; /* the pane whose draw function runs, for es_canvas_keep_clear */
};

/* Image coordinates under a point of the widget, and the pane it is in. */
gboolean _es_canvas_widget_to_image (EsCanvas *self, double x, double y, int *pane, double *ix, double *iy);
/* Emits "step" and "clicked" (es-canvas-input.c). */
void _es_canvas_emit_step (EsCanvas *self, int direction);
void _es_canvas_emit_clicked (EsCanvas *self, int pane, int x, int y);
/* Emits "hover" when the image pixel under the pointer changed. */
void _es_canvas_update_hover (EsCanvas *self);
/* Zooms so that the image point under (x, y) in widget coordinates stays put. */
void _es_canvas_zoom_at (EsCanvas *self, double zoom, double x, double y, gboolean fit);
/* The next zoom step up (direction > 0) or down from zoom. */
double _es_canvas_next_zoom (double zoom, int direction);
/* Moves the overlays away from the pointer when it comes near them. */
void _es_canvas_pointer_moved (EsCanvas *self);
/* Adds the motion, scroll, drag and pinch controllers. */
void _es_canvas_input_init (EsCanvas *self);

/* Only tests/test-ui.c calls these. */

int es_canvas_get_n_panes (EsCanvas *self);
/* The zoom follows the view's size (best fit). */
gboolean es_canvas_get_fit (EsCanvas *self);

/* Where pane's label lies, in canvas coordinates: FALSE where panes show
 * none (one pane). */
gboolean _es_canvas_pane_label_bounds (EsCanvas *self, int pane, graphene_rect_t *bounds);

G_END_DECLS
