/* SPDX-License-Identifier: MIT */
/* EsColorbar: the colour scale of the shown heatmap, with ticks in the chosen units. */
#pragma once

#include <gtk/gtk.h>

#include "es-colormap.h"

G_BEGIN_DECLS

#define ES_TYPE_COLORBAR (es_colorbar_get_type ())
G_DECLARE_FINAL_TYPE (EsColorbar, es_colorbar, ES, COLORBAR, GtkWidget)

/* scale->lo/hi are in the values' own units; ticks show value_offset +
 * value·unit_scale (an original float TIFF's samples as its values),
 * labelled with units. integral: the values are whole numbers (levels, gray). */
void es_colorbar_set_scale (EsColorbar *self, const EsColorScale *scale, double unit_scale, double value_offset,
                            const char *units, gboolean integral);

G_END_DECLS
