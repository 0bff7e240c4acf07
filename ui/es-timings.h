/* SPDX-License-Identifier: MIT */
/* EsTimings: the live timings card (backend, variant, upload/kernel/download/total, Mpx/s) and how
 * long opening the image on screen took. */
#pragma once

#include <gtk/gtk.h>

#include "es-layer.h"

G_BEGIN_DECLS

#define ES_TYPE_TIMINGS (es_timings_get_type ())
G_DECLARE_FINAL_TYPE (EsTimings, es_timings, ES, TIMINGS, GtkWidget)

/* Opening an image, from the request (file chooser, drop, recent file,
 * command line) to the first frame painted with its views, on the
 * monotonic clock; the rest of total_ms is waiting between the steps,
 * the image's histogram, the upload to the screen and painting. */
typedef struct {
  double total_ms;
  double decode_ms;  /* reading and decoding the file */
  double compute_ms; /* the worker, for the views that first showed it */
  gboolean heatmap;  /* those views held a heatmap, not only the original */
} EsOpenTiming;

/* Shows how the layer was made: timing is the median of the last n_runs
 * runs of its job (0 for the original, which runs no job). */
void es_timings_update (EsTimings *self, const char *engine_description, const EsLayer *layer, const EsTiming *timing,
                        int n_runs);
/* The canvas overlay of a pane that shows layer: the backend and the
 * variant, then the kernel and end-to-end (es_run) times of timing, the
 * medians that the card shows. Free with g_free. */
char *es_timings_overlay_text (const EsLayer *layer, const EsTiming *timing);
/* Draws an overlay's text in its dark box over the bottom left corner of
 * the area (x, y, width × height) of packed RGB pixels, sized for that
 * area so that it stays legible on a slide: what Copy View and the export
 * with overlays carry. Any thread. */
void es_timings_overlay_draw (const char *text, guint8 *rgb, size_t stride, int x, int y, int width, int height);
/* What the card says of the variant that ran `job` (the chosen one, or the
 * default): "general ran: fast computes …" when the engine ran another
 * because the chosen one cannot compute the job, or the chosen one's slow
 * path; NULL when there is nothing to say. Free with g_free. */
char *es_timings_variant_note (const EsJob *job, const EsTiming *timing);
/* Shows how long opening the image `name` took; NULL hides it (another
 * image is on screen and its first frame is still to be painted). */
void es_timings_set_open (EsTimings *self, const char *name, const EsOpenTiming *open);
/* For tests: what the card shows of the opening (FALSE: nothing). */
gboolean es_timings_get_open (EsTimings *self, const char **name, EsOpenTiming *open);

G_END_DECLS
