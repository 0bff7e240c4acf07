/* SPDX-License-Identifier: MIT */
/* Views, sources and layers: what the window shows, shared read-only between threads. */
#pragma once

#include <gdk/gdk.h>

#include "es-pipeline.h"

G_BEGIN_DECLS

/* What a pane can show: the original image, or the result of one operation.
 * Each value has a row in es-layer.c's view table; an operation's view needs
 * nothing else in ui/. The grid shows several at once. */
typedef enum {
  ES_VIEW_ORIGINAL,
  ES_VIEW_QUANTIZED,
  ES_VIEW_ENTROPY,
  ES_VIEW_EQUALIZED,
  ES_VIEW_SHARPENED,
  ES_VIEW_CLAHE,
  ES_N_VIEWS
} EsView;

const char *es_view_name (EsView view); /* "entropy" (also the GSettings nick) */
/* "Original", else the operation's result_title: "Entropy", "Equalized" */
const char *es_view_title (EsView view);
gboolean es_view_from_name (const char *name, EsView *view);
/* Heatmap views take the user's colormap; the others are images, shown in gray. */
gboolean es_view_is_heatmap (EsView view);
/* The operation behind a view; FALSE for the original. */
gboolean es_view_get_op (EsView view, EsOp *op);
/* The view that shows op's result. */
EsView es_view_for_op (EsOp op);
/* The grid's panes in order, at most max_views of them; returns how many. */
int es_view_get_grid (EsView *views, int max_views);
/* Its values are counted into EsLayer.histogram, for the side panel. */
gboolean es_view_has_histogram (EsView view);

/* "window 5 · levels 16": each parameter the job's operation uses, by its
 * table name, with the table's decimals, joined by separator. "" for none. */
char *es_job_describe_params (const EsJob *job, const char *separator);

/* A decoded image. Immutable once made; refcounted (atomic). */
typedef struct {
  EsImage image;
  GFile *file;
  char *name;                   /* for titles and messages */
  guint64 serial;               /* unique in the process: tells sources apart after they are freed */
  guint64 histogram[256];       /* of the 8-bit view of the samples */
  guint32 sample_lo, sample_hi; /* the samples' range: what minmax binning bins over */
  /* A plane of a volume (es_source_new_plane): the volume, held, and the
   * plane's z; image then shares the volume's pixels. NULL otherwise. */
  struct _EsSourceVolume {
    gpointer source; /* EsSource */
    int z;
  } volume;
} EsSource;

/* Takes over image's pixels (and zeroes *image). */
EsSource *es_source_new (GFile *file, const char *name, EsImage *image);
/* Plane z of a volume as a source of its own, for what shows and inspects
 * one plane: its image is the plane's pixels (shared, never copied), its
 * histogram and sample range the whole volume's, so that minmax binning
 * and the histograms stay those of the volume that the jobs ran on. */
EsSource *es_source_new_plane (EsSource *volume, int z);
/* The planes of a source's image: 1 for a 2-D image and for a plane. */
int es_source_planes (const EsSource *source);
/* Both accept NULL. */
EsSource *es_source_ref (EsSource *source);
void es_source_unref (EsSource *source);
guint32 es_source_sample (const EsSource *source, int x, int y);

/* How a layer is shown: everything the user can change without a new job.
 * The colour scale, the range and the units are derived from a layer's
 * values when it is drawn or exported, so changing them runs nothing. */
typedef struct {
  EsColormap colormap; /* heatmap views; the others keep their own */
  gboolean reversed;
  EsRangeMode range; /* views of an operation; the original is always absolute */
  EsUnits units;     /* views whose values are in nats */
} EsDisplay;

#define ES_LAYER_MAX_MIPS 14

/* One computed view of a source. Immutable once made; refcounted (atomic). */
typedef struct _EsLayer {
  EsView view;
  EsSource *source;
  EsJob job;               /* what produced it; job.variant NULL where the CPU ran it */
  EsBackendChoice backend; /* the backend that was asked for */
  /* Values, metadata and timing; the scale and info are those of the
   * absolute range in the table's units, the operation's own colormap:
   * es_layer_display_scale and es_layer_display_info adapt them. */
  EsResult result;
  double min, max; /* the automatic range (es_pipeline_auto_range) */
  /* mips[0] is result.values (not owned); mips[k] halves mips[k-1] by 2×2
   * averaging, in F32, so that zoomed-out views do not alias. An
   * original's are made when it is first drawn (es_layer_ensure_mips):
   * the tools read its values without drawing it. */
  EsImage mips[ES_LAYER_MAX_MIPS];
  int n_mips;
  gsize mips_made;    /* g_once: mips and n_mips are set */
  guint64 *histogram; /* es_view_has_histogram: range_max + 1 bins; else NULL */
  guint n_bins;
  /* A plane or a slice of a volume's layer (es_layer_new_plane, _slice):
   * that layer, held; its values, job, range and histogram are the
   * volume's. NULL for a layer of its own. */
  struct _EsLayer *volume;
  gboolean owns_values; /* a slice's gathered values (a plane's are the volume's) */
} EsLayer;

/* Which slice of a volume: a plane (XY), or across the planes through a
 * row (XZ: width × planes) or a column (YZ: planes wide, height high),
 * as Fiji's Orthogonal Views show them. */
typedef enum {
  ES_SLICE_XY,
  ES_SLICE_XZ,
  ES_SLICE_YZ,
} EsSliceAxis;

/* Makes a layer of the original image itself (no copy of the pixels); its
 * mips are made when it is first drawn. */
EsLayer *es_layer_new_original (EsSource *source);
/* Makes the layer's mips if they are not made yet; any thread, once. The
 * renderers call it: the mips are a cache of the values, not a change to
 * the layer. */
void es_layer_ensure_mips (const EsLayer *layer);
/* Makes a layer around a finished pipeline result (taken over, *result
 * zeroed) of job, run with es_layer_job_params. */
EsLayer *es_layer_new (EsView view, EsSource *source, const EsJob *job, EsBackendChoice backend, EsResult *result);
/* Plane z of a volume's layer, shown and inspected as a 2-D layer of
 * plane_source (es_source_new_plane of the layer's source): its values
 * share the volume's, its colour range is the volume's, so that stepping
 * through planes computes nothing and keeps the colours; only the plane's
 * mips are made. */
EsLayer *es_layer_new_plane (EsLayer *volume, EsSource *plane_source, int z);
/* An XZ slice through row `at` or a YZ slice through column `at` of a
 * volume's layer (ES_SLICE_XY is es_layer_new_plane): its values are
 * gathered from every plane, in the volume's format and colour range. */
EsLayer *es_layer_new_slice (EsLayer *volume, EsSource *plane_source, EsSliceAxis axis, int at);
/* What the worker runs for a job: the table's defaults for everything that
 * is only display (absolute range, the table's units and colormap). */
void es_layer_job_params (const EsJob *job, EsViewParams *params);
/* A zeroed *values made ready for es_pipeline_run's output (which reuses a
 * buffer of the right size and format) on the buffer of a result that is
 * gone, when there is one: TRUE then. Its pixels are stale. */
gboolean es_layer_prepare_values (EsImage *values, int width, int height, EsFormat format);
/* Keeps the buffer of values that no layer took (a cancelled job's) for
 * the next result, or frees it; zeroes *values. */
void es_layer_recycle_values (EsImage *values);
/* Fills the pool of spare buffers with what a next result like layer will
 * take (its values and mips), their pages mapped now: the worker does this
 * after an image's first result, so that the first change after opening
 * writes into mapped memory as later ones do. Stops early when stop(data). */
void es_layer_stock_spares (const EsLayer *layer, gboolean (*stop) (gpointer data), gpointer data);
/* The size of the image on screen: spare buffers (kept for the next result
 * of the same size) of other images are freed now, and those of the layers
 * that go later are freed as they go, with the heap trimmed after. */
void es_layer_keep_spares_for (int width, int height);
EsLayer *es_layer_ref (EsLayer *layer);
void es_layer_unref (EsLayer *layer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (EsLayer, es_layer_unref)

int es_layer_width (const EsLayer *layer);
int es_layer_height (const EsLayer *layer);
/* The value at a pixel in the layer's own units (nats for entropy). */
double es_layer_value (const EsLayer *layer, int x, int y);
/* The colour scale the user sees: the range that display asks for, with its
 * colormap for heatmaps (images keep their own, gray). */
void es_layer_display_scale (const EsLayer *layer, const EsDisplay *display, EsColorScale *scale);
/* The metadata in the units that display asks for (unit_scale converts),
 * its definition line in the reader's language (es_layer_export_result
 * keeps a file's words English). */
void es_layer_display_info (const EsLayer *layer, const EsDisplay *display, EsValueInfo *info);
/* The result as es_pipeline_run would give it for the same job and display:
 * a shallow copy (the values stay the layer's), valid while the layer lives. */
void es_layer_export_result (const EsLayer *layer, const EsDisplay *display, EsResult *result);

/* Where a pane shows a layer, in device pixels: the zoom (device pixels
 * per image pixel), the image's top-left corner in the pane, and the
 * pane's size. */
typedef struct {
  double zoom;
  int origin_x, origin_y;
  int pane_width, pane_height;
} EsViewport;

/* Rendered device pixels, drawn 1:1: an RGB24 cairo image surface (which
 * GTK 4.8's cairo renderer paints with no conversion, where it converts a
 * texture into a new surface on every frame that draws it), and the same
 * bytes as a texture for the GL renderers, made when first drawn there
 * (es_canvas_append_pixels). */
typedef struct {
  cairo_surface_t *surface;
  GdkTexture *texture;
} EsPixels;

void es_pixels_clear (EsPixels *pixels);

/* The pixels of the visible part of a layer: the rectangle (x, y, its
 * size) of the pane that they cover, and what they were rendered for. */
typedef struct {
  EsPixels pixels;
  int x, y;
  EsViewport viewport;
  EsColorScale scale;
} EsRendering;

/* The part of the pane that shows the layer; FALSE when none does. */
gboolean es_layer_visible_rect (const EsLayer *layer, const EsViewport *viewport, int *x, int *y, int *width,
                                int *height);
/* Renders what a pane shows of the layer (es_layer_render of the visible
 * rectangle) into *rendering; FALSE when nothing of it is visible. Any
 * thread: the worker renders the first pixels of a result with it, in
 * bands over its OpenMP team (parallel), the same pixels as one pass. */
gboolean es_layer_render_viewport (const EsLayer *layer, const EsColorScale *scale, const EsViewport *viewport,
                                   gboolean parallel, EsRendering *rendering);
/* Whether rendering shows layer as a pane with viewport and scale would. */
gboolean es_rendering_matches (const EsRendering *rendering, const EsViewport *viewport, const EsColorScale *scale);
void es_rendering_clear (EsRendering *rendering);

/* Renders width×height device pixels of the layer into *pixels, scaled by
 * zoom (device pixels per image pixel) with the image's top-left corner at
 * (origin_x, origin_y) in them. Zoomed in, each image pixel becomes a crisp
 * block; zoomed out, a mip level is sampled bilinearly. Only the visible
 * pixels are touched, so this stays cheap for huge images. FALSE when the
 * surface could not be made. */
gboolean es_layer_render (const EsLayer *layer, const EsColorScale *scale, double zoom, double origin_x,
                          double origin_y, int width, int height, EsPixels *pixels);
/* The whole layer at full resolution as packed RGB8 (for the clipboard). */
GBytes *es_layer_render_rgb (const EsLayer *layer, const EsColorScale *scale, gsize *stride);

G_END_DECLS
