/* SPDX-License-Identifier: MIT */
/* EsTimings: the live timings overlay (backend, variant, upload/kernel/download/total, Mpx/s). */
#pragma once

#include <gtk/gtk.h>

#include "es-layer.h"

G_BEGIN_DECLS

#define ES_TYPE_TIMINGS (es_timings_get_type ())
G_DECLARE_FINAL_TYPE (EsTimings, es_timings, ES, TIMINGS, GtkWidget)

/* Shows how the layer was made: timing is the median of the last n_runs
 * runs of its job (0 for the original, which runs no job). */
void es_timings_update (EsTimings *self, const char *engine_description, const EsLayer *layer,
                        const EsTiming *timing, int n_runs);

G_END_DECLS
