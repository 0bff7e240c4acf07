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

/* A swatch of the no-data colour (es_no_data_rgb) under the bar, named
 * label ("NaN", "no data"): what the pixels drawn in it stand for. NULL
 * hides it. */
void es_colorbar_set_no_data (EsColorbar *self, const char *label);
/* The swatch's label; NULL when none is shown. */
const char *es_colorbar_get_no_data (EsColorbar *self);

G_END_DECLS
