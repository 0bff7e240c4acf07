/* SPDX-License-Identifier: MIT */
/* EsToolsHost: what the inspection tools (EsTools) need from the window whose image they inspect. */
#pragma once

#include <gtk/gtk.h>

#include "es-layer.h"

G_BEGIN_DECLS

#define ES_TYPE_TOOLS_HOST (es_tools_host_get_type ())
/* A window: the tools put their actions and shortcuts on it, and parent their dialogs to it. */
G_DECLARE_INTERFACE (EsToolsHost, es_tools_host, ES, TOOLS_HOST, GtkWindow)

struct _EsToolsHostInterface {
  GTypeInterface parent_iface;

  EsSource *(*get_source) (EsToolsHost *self);
  EsLayer *(*get_layer) (EsToolsHost *self, EsView view);
  int (*get_views) (EsToolsHost *self, EsView *views);
  EsView (*get_active_view) (EsToolsHost *self);
  void (*get_display) (EsToolsHost *self, EsDisplay *display);
  void (*get_view_job) (EsToolsHost *self, EsView view, EsJob *job);
  void (*get_readout_job) (EsToolsHost *self, EsJob *job);
  void (*refresh) (EsToolsHost *self);
  void (*show_message) (EsToolsHost *self, const char *message);
  void (*set_chooser_folder) (EsToolsHost *self, GtkFileChooser *chooser);
};

/* The image on screen, or NULL. */
EsSource *es_tools_host_get_source (EsToolsHost *self);
/* The newest result of a view for the image on screen, or NULL. */
EsLayer *es_tools_host_get_layer (EsToolsHost *self, EsView view);
/* The views on screen (ES_CANVAS_MAX_PANES at most): one, or the grid's; returns how many. */
int es_tools_host_get_views (EsToolsHost *self, EsView *views);
/* The view that the colorbar, export and copy follow. */
EsView es_tools_host_get_active_view (EsToolsHost *self);
/* How results are shown (colormap, range, units). */
void es_tools_host_get_display (EsToolsHost *self, EsDisplay *display);
/* The job the window runs for a view with the current settings. */
void es_tools_host_get_view_job (EsToolsHost *self, EsView view, EsJob *job);
/* The entropy job the readout counts under (see es_window_get_readout_job). */
void es_tools_host_get_readout_job (EsToolsHost *self, EsJob *job);
/* Shows the views again with the current display: the tools' contrast
 * limits (es_tools_adjust_scale) changed, no job runs. */
void es_tools_host_refresh (EsToolsHost *self);
/* A toast. */
void es_tools_host_show_message (EsToolsHost *self, const char *message);
/* Starts a file chooser in the folder where the window's own choosers start. */
void es_tools_host_set_chooser_folder (EsToolsHost *self, GtkFileChooser *chooser);

G_END_DECLS
