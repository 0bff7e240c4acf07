/* EsCompareWindow: times every kernel variant of an operation on the window's image and charts them. */
#pragma once

#include <adwaita.h>

#include "es-window.h"

G_BEGIN_DECLS

#define ES_TYPE_COMPARE_WINDOW (es_compare_window_get_type ())
G_DECLARE_FINAL_TYPE (EsCompareWindow, es_compare_window, ES, COMPARE_WINDOW, AdwWindow)

/* A window over `window`, comparing op (see es_compare_window_run). */
EsCompareWindow *es_compare_window_new (EsWindow *window, EsOp op);
void es_compare_window_set_op (EsCompareWindow *self, EsOp op);
EsOp es_compare_window_get_op (EsCompareWindow *self);
/* Starts a comparison on the window's current image and settings, cancelling
 * the one running. */
void es_compare_window_run (EsCompareWindow *self);
void es_compare_window_cancel (EsCompareWindow *self);
gboolean es_compare_window_get_busy (EsCompareWindow *self);
/* The page shown: "progress", "chart", "cpu", "error", "cancelled" or "empty". */
const char *es_compare_window_get_page (EsCompareWindow *self);
/* The comparison on screen (chart or cpu page), else NULL. */
const EsComparison *es_compare_window_get_comparison (EsCompareWindow *self);

G_END_DECLS
