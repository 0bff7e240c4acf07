/* SPDX-License-Identifier: MIT */
/* EsHistogram: bars of a histogram, optionally coloured by a colormap, with its CDF. */
#pragma once

#include <gtk/gtk.h>

#include "es-colormap.h"

G_BEGIN_DECLS

#define ES_TYPE_HISTOGRAM (es_histogram_get_type ())
G_DECLARE_FINAL_TYPE (EsHistogram, es_histogram, ES, HISTOGRAM, GtkWidget)

/* Copies the counts; NULL clears. With a colormap (map < ES_N_COLORMAPS),
 * bin i takes the colour of value i of 0..n_bins-1, else the accent colour. */
void es_histogram_set_counts (EsHistogram *self, const guint64 *counts, guint n_bins, EsColormap map,
                              gboolean reversed);

G_END_DECLS
