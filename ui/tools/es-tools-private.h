/* SPDX-License-Identifier: MIT */
/* EsTools's insides, shared by es-tools.c and the tools' files (es-profile.c, es-roi.c,
 * es-inspector.c, es-swipe.c, es-tools-contrast.c, es-tools-csv.c, es-tools-icons.c);
 * tests/test-ui-tools.c reads them too. */
#pragma once

#include "es-calibration.h"
#include "es-canvas-private.h"
#include "es-inspect.h"
#include "es-tools.h"

G_BEGIN_DECLS

/* Every value a tool reads: gray, level, then each operation view on
 * screen (the result's own values, in the display's units). */
#define ES_TOOLS_MAX_CHANNELS (2 + ES_CANVAS_MAX_PANES)

typedef struct {
  int n;
  EsChannel channels[ES_TOOLS_MAX_CHANNELS];
  char *names[ES_TOOLS_MAX_CHANNELS];
  EsView views[ES_TOOLS_MAX_CHANNELS];     /* ES_VIEW_ORIGINAL for gray and level */
  EsLayer *layers[ES_TOOLS_MAX_CHANNELS];  /* held while the channels are used */
  gboolean heatmap[ES_TOOLS_MAX_CHANNELS]; /* its values take the colormap */
} EsToolsChannels;

typedef struct {
  gboolean enabled;
  double lo, hi; /* in the values' own units (nats for entropy) */
} EsContrastLimits;

struct _EsTools {
  GObject parent_instance;

  EsToolsHost *host; /* owns this */
  EsCanvas *canvas;
  GSimpleActionGroup *actions;
  EsTool tool;

  guint64 source_serial; /* of the image the shapes belong to */
  /* The shapes, in image pixels. */
  gboolean has_line, has_rect, dragging;
  int line[4]; /* x0, y0, x1, y1 */
  int rect_corners[4];
  int drag_pane;
  int hover_x, hover_y; /* the inspector's pixel; -1 none */
  gboolean inspect_pinned;
  double swipe_split; /* fraction of the pane's width */
  EsView swipe_view;  /* shown left of the split */

  /* The results, updated when a shape or the views change. */
  EsToolsChannels channels;
  EsProfile profile;
  EsStats stats[ES_TOOLS_MAX_CHANNELS];
  EsRect roi;
  guint64 roi_bins[64];
  double roi_lo, roi_hi;
  guint update_idle;

  EsContrastLimits contrast[ES_N_VIEWS];

  /* Widgets. */
  GtkWidget *palette;
  GtkWidget *tool_buttons[ES_N_TOOLS];
  GtkWidget *panel; /* docked above the status bar while an image is open */
  GtkWidget *panel_scroller;
  GtkWidget *panel_stack;
  GtkWidget *close_button;
  gboolean holding_fit; /* its drag holds the canvas's fit (es_canvas_hold_fit) */
  GtkWidget *panel_title;
  GtkWidget *copy_button, *export_button;
  GtkWidget *shape_button, *shape_spins[4];
  gboolean shape_updating;
  GtkWidget *profile_plot;
  GtkWidget *roi_grid, *roi_histogram, *roi_caption;
  GtkWidget *inspector_cells, *inspector_counts, *inspector_caption;
  GtkWidget *swipe_dropdown;
  GtkAdjustment *swipe_adjustment; /* the split in percent, for the keyboard */
  guint64 contrast_bins[128];
  EsLayer *contrast_layer; /* the histogram's */
  int contrast_drag;       /* the handle dragged: 0 low, 1 high */
  GtkWidget *contrast_button, *contrast_range, *contrast_switch, *contrast_lo, *contrast_hi;
  GtkWidget *contrast_caption;
  gboolean contrast_updating;
  EsPixels swipe_pixels;   /* the swipe side, rendered */
  EsLayer *swipe_original; /* the original as a layer, for the swipe */
  EsColorScale swipe_pixels_scale;
  int swipe_pixels_key[6];
  EsLayer *swipe_pixels_layer;
};

/* es-tools.c */
void _es_tools_channels_clear (EsToolsChannels *channels);
/* The layer of a view for the image on screen (the original made here). */
EsLayer *_es_tools_get_layer (EsTools *self, EsView view);
void _es_tools_schedule_update (EsTools *self);
/* The pane geometry's point of an image coordinate. */
void _es_tools_to_pane (const EsCanvasPaneGeometry *geometry, double ix, double iy, double *px, double *py);
/* A rectangle's size for captions: "12 × 8 px", and where the image is
 * calibrated its sides and area in the image's unit too. */
char *_es_tools_describe_rect (const EsImageMeta *meta, int width, int height);
/* "3 NaN skipped": values that statistics and plots leave out. */
char *_es_nan_skipped_text (guint64 nan);
/* The line's length in pixels or the image's unit and its samples, as the
 * plot's axis and its accessible description give it: "12.3 µm · 57 samples". */
char *_es_profile_length_text (const EsProfile *profile);
/* The timing overlays keep clear of the box around these pane points (a
 * shape being drawn). */
void _es_tools_keep_clear (EsTools *self, const double *points, int n_points);
/* Tests drive the tools as the pointer does, in canvas coordinates. */
void es_tools_set_tool (EsTools *self, EsTool tool);
void es_tools_press (EsTools *self, double x, double y);
void es_tools_motion (EsTools *self, double x, double y);
void es_tools_release (EsTools *self, double x, double y);
/* es-tools-csv.c: the tools.copy and tools.export actions. */
void _es_tools_copy_action (GSimpleAction *action, GVariant *parameter, gpointer data);
void _es_tools_export_action (GSimpleAction *action, GVariant *parameter, gpointer data);
/* Brings the results up to date now (they follow changes on idle). */
void es_tools_update (EsTools *self);
/* The CSV of the line's profile or the rectangle's statistics, as copied
 * and exported; NULL without a shape. */
char *es_tools_get_csv (EsTools *self);
gboolean es_tools_export_csv (EsTools *self, const char *path, GError **error);

/* es-tools-icons.c: a 16×16 icon of a tool; ES_N_TOOLS is the contrast one. */
GtkWidget *_es_tools_icon_new (int tool);
/* A path over the image that shows on any colours (dots of dot_radius at its points). */
void _es_tools_stroke_path (GtkSnapshot *snapshot, const graphene_rect_t *bounds, const double *points, int n_points,
                            gboolean closed, double dot_radius);

/* es-tools-shape.c: the shape's coordinates in spin buttons (a popover). */
GtkWidget *_es_tools_shape_button_new (EsTools *self);
void _es_tools_shape_update (EsTools *self);

/* es-profile.c: the plot of the line's profile. */
GtkWidget *_es_profile_plot_new (EsTools *tools);
/* The plot's least height for `channels` strips and its axis. */
int _es_profile_plot_height (int channels);
void _es_profile_plot_update (GtkWidget *plot);
void _es_profile_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry);

/* es-roi.c: the rectangle's statistics and histogram. */
GtkWidget *_es_roi_page_new (EsTools *self);
void _es_roi_update (EsTools *self);
void _es_roi_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry);
/* The text of the statistics grid's cell (row 0: the header). */
const char *es_tools_get_roi_cell (EsTools *self, int row, int column);

/* es-inspector.c: the entropy window under the pointer. */
GtkWidget *_es_inspector_page_new (EsTools *self);
void _es_inspector_update (EsTools *self);
void _es_inspector_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry);
/* The window's counts, and the line shown under them (H, n, the view's value). */
gboolean es_tools_get_window_counts (EsTools *self, EsWindowCounts *counts);
const char *es_tools_get_inspector_text (EsTools *self);

/* es-swipe.c: another view left of the split. */
GtkWidget *_es_swipe_page_new (EsTools *self);
void _es_swipe_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry);
void _es_swipe_clear (EsTools *self);

/* es-tools-contrast.c: manual contrast limits, in a popover. */
GtkWidget *_es_contrast_button_new (EsTools *self);
void _es_contrast_update (EsTools *self);
void es_tools_set_contrast (EsTools *self, EsView view, gboolean enabled, double lo, double hi);

G_END_DECLS
