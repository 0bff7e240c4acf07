/* SPDX-License-Identifier: MIT */
/* EsCompareWindow's state for tests/test-ui.c (only it calls these): not part of the widget's API. */
#pragma once

#include "es-compare-window.h"

G_BEGIN_DECLS

/* A comparison is running. */
gboolean es_compare_window_get_busy (EsCompareWindow *self);
/* The page shown: "progress", "chart", "cpu", "error", "cancelled" or "empty". */
const char *es_compare_window_get_page (EsCompareWindow *self);
/* The comparison on screen (chart or cpu page), else NULL. */
const EsComparison *es_compare_window_get_comparison (EsCompareWindow *self);

G_END_DECLS
