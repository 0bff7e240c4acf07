/* SPDX-License-Identifier: MIT */
/* EsColorbar's tick layout, exposed for tests/test-ui.c (only it calls this). */
#pragma once

#include "es-colorbar.h"

G_BEGIN_DECLS

/* Tick positions: a "nice" step (1, 2, 2.5 or 5 × 10^k) giving about
 * max_ticks ticks in lo..hi. Returns the count written to ticks. */
int es_colorbar_ticks (double lo, double hi, int max_ticks, gboolean integral, double *ticks, int *decimals);

G_END_DECLS
