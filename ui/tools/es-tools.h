/* SPDX-License-Identifier: MIT */
/* EsTools: the window's inspection tools (line profile, ROI statistics, pixel inspector, swipe
 * compare, contrast limits), their switcher, panel, shortcuts and canvas shapes. */
#pragma once

#include "es-window.h"

G_BEGIN_DECLS

#define ES_TYPE_TOOLS (es_tools_get_type ())
G_DECLARE_FINAL_TYPE (EsTools, es_tools, ES, TOOLS, GObject)

typedef enum {
  ES_TOOL_POINTER,   /* pan and choose the active pane */
  ES_TOOL_LINE,      /* line profile */
  ES_TOOL_RECT,      /* ROI statistics */
  ES_TOOL_INSPECT,   /* the entropy window under the pointer */
  ES_TOOL_SWIPE,     /* another view left of a draggable split */
  ES_N_TOOLS
} EsTool;

/* Called once by the window: puts the tool switcher into its header bar,
 * the tools' panel above its status bar, their actions ("tools.*") and
 * plain-key shortcuts on it, and their shapes on its canvas. */
EsTools *es_window_install_inspection_tools (EsWindow *window);

/* The window's hooks: the colour scale of a view with manual contrast
 * limits (display only), and new views or display settings on screen. */
void es_tools_adjust_scale (EsTools *self, EsView view, EsColorScale *scale);
void es_tools_views_changed (EsTools *self);

G_END_DECLS
