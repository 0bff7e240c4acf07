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

/* Decodes the file off the main thread; a bad file leaves the current image
 * in place and says why in a toast. */
void es_window_open (EsWindow *self, GFile *file);
/* Opens the bundled sample image (when it can be found). */
gboolean es_window_open_sample (EsWindow *self);

/* Loading, computing, exporting, copying or comparing variants. */
gboolean es_window_get_busy (EsWindow *self);
EsSource *es_window_get_source (EsWindow *self);
/* The newest result of a view for the current image, or NULL. */
EsLayer *es_window_get_layer (EsWindow *self, EsView view);
/* The view that export, copy, the colorbar and the timings follow. */
EsView es_window_get_active_view (EsWindow *self);
/* The job the window runs for a view with the current settings. */
void es_window_get_view_params (EsWindow *self, EsView view, EsViewParams *params);
EsCanvas *es_window_get_canvas (EsWindow *self);
const char *es_window_get_engine_description (EsWindow *self);
/* The text of the last toast (for tests and the about window's debug info). */
const char *es_window_get_last_message (EsWindow *self);

/* Writes the active view through es_pipeline_export, in a thread. */
void es_window_export_async (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data);
gboolean es_window_export_finish (EsWindow *self, GAsyncResult *result, GError **error);

/* Times every kernel variant of op on the current image with the current
 * settings and backend, on the worker (es_worker_compare). */
void es_window_compare_async (EsWindow *self, EsOp op, int repeats, GCancellable *cancellable,
                              EsCompareProgressFunc progress, gpointer progress_data,
                              GAsyncReadyCallback callback, gpointer user_data);
EsComparison *es_window_compare_finish (EsWindow *self, GAsyncResult *result, GError **error);
/* Opens the Compare Variants view (win.compare) as soon as an image is open. */
void es_window_compare_when_open (EsWindow *self);
/* The Compare Variants window (win.compare), or NULL before it is opened. */
GtkWindow *es_window_get_compare_window (EsWindow *self);

G_END_DECLS
