/* SPDX-License-Identifier: MIT */
/* EsCompareWindow: times every kernel variant of an operation on another window's image and charts them. */
#pragma once

#include <adwaita.h>

#include "es-comparer.h"

G_BEGIN_DECLS

#define ES_TYPE_COMPARE_WINDOW (es_compare_window_get_type ())
G_DECLARE_FINAL_TYPE (EsCompareWindow, es_compare_window, ES, COMPARE_WINDOW, AdwWindow)

/* A window over parent, comparing op on comparer's image (see
 * es_compare_window_run). It keeps a weak reference to comparer. */
EsCompareWindow *es_compare_window_new (GtkWindow *parent, EsComparer *comparer, EsOp op);
void es_compare_window_set_op (EsCompareWindow *self, EsOp op);
EsOp es_compare_window_get_op (EsCompareWindow *self);
/* Starts a comparison on the comparer's current image and settings,
 * cancelling the one running. */
void es_compare_window_run (EsCompareWindow *self);
void es_compare_window_cancel (EsCompareWindow *self);

G_END_DECLS
