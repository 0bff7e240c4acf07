/* SPDX-License-Identifier: MIT */
/* EsSidebar: the tuning panel, bound to GSettings, with backend, variants and histograms. */
#pragma once

#include <adwaita.h>

#include "es-layer.h"
#include "es-sidebar-definition.h"
#include "es-timings.h"

G_BEGIN_DECLS

#define ES_TYPE_SIDEBAR (es_sidebar_get_type ())
G_DECLARE_FINAL_TYPE (EsSidebar, es_sidebar, ES, SIDEBAR, GtkWidget)

/* Binds every parameter row to its key; changes are written at once. */
void es_sidebar_bind (EsSidebar *self, GSettings *settings);
/* Greys the CUDA row out, with the reason as subtitle and tooltip, when
 * CUDA cannot be used. */
void es_sidebar_set_cuda (EsSidebar *self, gboolean usable, const char *reason);
/* Lists the kernel variants of op (radio rows on win.variant, lesson as
 * tooltip); has_op FALSE for the original, which runs no kernel. */
void es_sidebar_set_variants (EsSidebar *self, gboolean has_op, EsOp op, gboolean cuda_in_use);
/* The operations of the views on screen (1u << EsOp each) and the active
 * view's: the parameter rows they read show, the others hide, and the
 * Definition group shows the active operation's presets. */
void es_sidebar_set_ops (EsSidebar *self, unsigned ops_on_screen, gboolean has_active, EsOp active);
/* Marks the variant rows for job (of the listed op): a variant that cannot
 * compute it is dimmed, and says why and which variant runs it instead; one
 * that runs it on a slow path says so. Subtitle, and tooltip with the lesson. */
void es_sidebar_mark_variants (EsSidebar *self, const EsJob *job);
/* Any of the three may be NULL (not computed yet). */
void es_sidebar_set_histograms (EsSidebar *self, const EsSource *source, const EsLayer *quantized,
                                const EsLayer *equalized, EsColormap map, gboolean reversed);

/* The timings of the active view, in their own group at the top (shown
 * or hidden as a whole: win.show-timings). */
EsTimings *es_sidebar_get_timings (EsSidebar *self);
GtkWidget *es_sidebar_get_timings_group (EsSidebar *self);
/* The entropy definition's rows: what the window's entropy jobs carry. */
EsSidebarDefinition *es_sidebar_get_definition (EsSidebar *self);
/* Colormap and Reversed do something only when a heatmap is on screen. */
void es_sidebar_set_colors_sensitive (EsSidebar *self, gboolean sensitive);

G_END_DECLS
