/* SPDX-License-Identifier: MIT */
/* EsToolsHost: the interface between the inspection tools and the window they inspect. */
#include "es-tools-host.h"

G_DEFINE_INTERFACE (EsToolsHost, es_tools_host, GTK_TYPE_WINDOW)

static void
es_tools_host_default_init (EsToolsHostInterface *iface)
{}

EsSource *
es_tools_host_get_source (EsToolsHost *self)
{
  g_return_val_if_fail (ES_IS_TOOLS_HOST (self), NULL);
  return ES_TOOLS_HOST_GET_IFACE (self)->get_source (self);
}

EsLayer *
es_tools_host_get_layer (EsToolsHost *self, EsView view)
{
  g_return_val_if_fail (ES_IS_TOOLS_HOST (self), NULL);
  return ES_TOOLS_HOST_GET_IFACE (self)->get_layer (self, view);
}

int
es_tools_host_get_views (EsToolsHost *self, EsView *views)
{
  g_return_val_if_fail (ES_IS_TOOLS_HOST (self), 0);
  return ES_TOOLS_HOST_GET_IFACE (self)->get_views (self, views);
}

EsView
es_tools_host_get_active_view (EsToolsHost *self)
{
  g_return_val_if_fail (ES_IS_TOOLS_HOST (self), ES_VIEW_ORIGINAL);
  return ES_TOOLS_HOST_GET_IFACE (self)->get_active_view (self);
}

void
es_tools_host_get_display (EsToolsHost *self, EsDisplay *display)
{
  g_return_if_fail (ES_IS_TOOLS_HOST (self));
  ES_TOOLS_HOST_GET_IFACE (self)->get_display (self, display);
}

void
es_tools_host_get_view_job (EsToolsHost *self, EsView view, EsJob *job)
{
  g_return_if_fail (ES_IS_TOOLS_HOST (self));
  ES_TOOLS_HOST_GET_IFACE (self)->get_view_job (self, view, job);
}

void
es_tools_host_get_readout_job (EsToolsHost *self, EsJob *job)
{
  g_return_if_fail (ES_IS_TOOLS_HOST (self));
  ES_TOOLS_HOST_GET_IFACE (self)->get_readout_job (self, job);
}

void
es_tools_host_refresh (EsToolsHost *self)
{
  g_return_if_fail (ES_IS_TOOLS_HOST (self));
  ES_TOOLS_HOST_GET_IFACE (self)->refresh (self);
}

void
es_tools_host_show_message (EsToolsHost *self, const char *message)
{
  g_return_if_fail (ES_IS_TOOLS_HOST (self));
  ES_TOOLS_HOST_GET_IFACE (self)->show_message (self, message);
}

void
es_tools_host_set_chooser_folder (EsToolsHost *self, GtkFileChooser *chooser)
{
  g_return_if_fail (ES_IS_TOOLS_HOST (self));
  ES_TOOLS_HOST_GET_IFACE (self)->set_chooser_folder (self, chooser);
}
