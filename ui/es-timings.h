/* EsTimings: the live timings overlay (backend, variant, upload/kernel/download/total, Mpx/s). */
#pragma once

#include <gtk/gtk.h>

#include "es-layer.h"

G_BEGIN_DECLS

#define ES_TYPE_TIMINGS (es_timings_get_type ())
G_DECLARE_FINAL_TYPE (EsTimings, es_timings, ES, TIMINGS, GtkWidget)

/* Shows how the layer was made; fresh is FALSE when it came from the cache. */
void es_timings_update (EsTimings *self, const char *engine_description, const EsLayer *layer,
                        gboolean fresh);

G_END_DECLS
