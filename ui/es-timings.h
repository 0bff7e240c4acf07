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
/* What the card says of the variant that ran `job` (the chosen one, or the
 * default): "general ran: fast computes …" when the engine ran another
 * because the chosen one cannot compute the job, or the chosen one's slow
 * path; NULL when there is nothing to say. Free with g_free. */
char *es_timings_variant_note (const EsJob *job, const EsTiming *timing);

G_END_DECLS
