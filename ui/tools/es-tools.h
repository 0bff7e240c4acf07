/* SPDX-License-Identifier: MIT */
/* EsTools: the window's inspection tools (line profile, ROI statistics, pixel inspector, swipe
 * compare, contrast limits), their palette, panel, shortcuts and canvas shapes. They read the
 * window's image, views and display through EsToolsHost, and know nothing else of it. */
#pragma once

#include "es-canvas.h"
#include "es-tools-host.h"

G_BEGIN_DECLS

#define ES_TYPE_TOOLS (es_tools_get_type ())
G_DECLARE_FINAL_TYPE (EsTools, es_tools, ES, TOOLS, GObject)

typedef enum {
  ES_TOOL_POINTER, /* pan and choose the active pane */
  ES_TOOL_LINE,    /* line profile */
  ES_TOOL_RECT,    /* ROI statistics */
  ES_TOOL_INSPECT, /* the entropy window under the pointer */
  ES_TOOL_SWIPE,   /* another view left of a draggable split */
  ES_N_TOOLS
} EsTool;

/* Called once by the window: puts the tools' actions ("tools.*") and
 * plain-key shortcuts on the host, and their shapes and drag gesture on
 * its canvas. The host owns the tools; they do not hold a reference on it. */
EsTools *es_tools_new (EsToolsHost *host, EsCanvas *canvas);
/* The palette (a column of tool buttons) and the panel of the tool in use
 * (a revealer), for the host to place in its layout. */
GtkWidget *es_tools_get_palette (EsTools *self);
GtkWidget *es_tools_get_panel (EsTools *self);

/* The window's hooks: the colour scale of a view with manual contrast
 * limits (display only), and new views or display settings on screen. */
void es_tools_adjust_scale (EsTools *self, EsView view, EsColorScale *scale);
void es_tools_views_changed (EsTools *self);

G_END_DECLS
