/* SPDX-License-Identifier: MIT */
/* EsWindow: the main window; opens images, sends jobs to the worker, shows and exports results. */
#pragma once

#include <adwaita.h>

#include "es-canvas.h"
#include "es-layer.h"
#include "es-worker.h"

G_BEGIN_DECLS

#define ES_TYPE_WINDOW (es_window_get_type ())
G_DECLARE_FINAL_TYPE (EsWindow, es_window, ES, WINDOW, AdwApplicationWindow)

EsWindow *es_window_new (AdwApplication *application, GSettings *settings);

/* The values of win.view and of the "view" key: each view's name
 * (es_view_name), then "grid"; NULL-terminated, in the order of the view
 * switcher and of the Alt+1… accelerators. */
const char *const *es_window_get_view_nicks (void);

/* Decodes the file off the main thread; a bad file leaves the current image
 * in place and says why in a toast. */
void es_window_open (EsWindow *self, GFile *file);
/* Opens the bundled sample image (when it can be found). */
gboolean es_window_open_sample (EsWindow *self);

/* "CUDA: NVIDIA H100 (sm_90)": the engine of the last run (for the about
 * window's debug info); NULL before the worker has answered. */
const char *es_window_get_engine_description (EsWindow *self);

/* Writes the active view through es_pipeline_export, in a thread. */
void es_window_export_async (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar,
                             GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
/* Writes every plane of the active view of a volume as one multi-page TIFF
 * (es_volume_export_tiff, as entroscope-cli does), in a thread; fails when
 * the image is not a volume. Finished by es_window_export_finish. */
void es_window_export_volume_async (EsWindow *self, GFile *file, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data);
gboolean es_window_export_finish (EsWindow *self, GAsyncResult *result, GError **error);

/* Opens the Compare Variants view (win.compare) as soon as an image is open. */
void es_window_compare_when_open (EsWindow *self);

G_END_DECLS
