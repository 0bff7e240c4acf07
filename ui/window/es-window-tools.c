/* SPDX-License-Identifier: MIT */
/* EsWindow: the inspection tools (EsTools), which it serves as an EsToolsHost and places in its
 * layout: their palette left of the canvas's row, their panel above the status bar. */
#include "es-window-private.h"

#include "es-tools.h"

/* EsToolsHost */

static EsSource *
es_window_tools_host_get_source (EsToolsHost *host)
{
  return _es_window_get_shown_source (ES_WINDOW (host));
}

static EsLayer *
es_window_tools_host_get_layer (EsToolsHost *host, EsView view)
{
  return es_window_get_layer (ES_WINDOW (host), view);
}

static int
es_window_tools_host_get_views (EsToolsHost *host, EsView *views)
{
  return _es_window_get_views (ES_WINDOW (host), views);
}

static EsView
es_window_tools_host_get_active_view (EsToolsHost *host)
{
  return es_window_get_active_view (ES_WINDOW (host));
}

static void
es_window_tools_host_get_display (EsToolsHost *host, EsDisplay *display)
{
  _es_window_get_display (ES_WINDOW (host), display);
}

static void
es_window_tools_host_get_view_job (EsToolsHost *host, EsView view, EsJob *job)
{
  es_window_get_view_job (ES_WINDOW (host), view, job);
}

static void
es_window_tools_host_get_readout_job (EsToolsHost *host, EsJob *job)
{
  es_window_get_readout_job (ES_WINDOW (host), job);
}

static void
es_window_tools_host_refresh (EsToolsHost *host)
{
  _es_window_refresh (ES_WINDOW (host));
}

static void
es_window_tools_host_show_message (EsToolsHost *host, const char *message)
{
  _es_window_show_message (ES_WINDOW (host), message);
}

static void
es_window_tools_host_set_chooser_folder (EsToolsHost *host, GtkFileChooser *chooser)
{
  _es_window_set_chooser_folder (ES_WINDOW (host), chooser);
}

void
_es_window_tools_host_iface_init (EsToolsHostInterface *iface)
{
  iface->get_source = es_window_tools_host_get_source;
  iface->get_layer = es_window_tools_host_get_layer;
  iface->get_views = es_window_tools_host_get_views;
  iface->get_active_view = es_window_tools_host_get_active_view;
  iface->get_display = es_window_tools_host_get_display;
  iface->get_view_job = es_window_tools_host_get_view_job;
  iface->get_readout_job = es_window_tools_host_get_readout_job;
  iface->refresh = es_window_tools_host_refresh;
  iface->show_message = es_window_tools_host_show_message;
  iface->set_chooser_folder = es_window_tools_host_set_chooser_folder;
}

/* The window */

/* The first box of the given orientation that holds widget, and the child of it on the way. */
static GtkBox *
find_box (GtkWidget *widget, GtkOrientation orientation, GtkWidget **child)
{
  for (GtkWidget *parent = gtk_widget_get_parent (widget); parent;
       widget = parent, parent = gtk_widget_get_parent (parent))
    if (GTK_IS_BOX (parent) && gtk_orientable_get_orientation (GTK_ORIENTABLE (parent)) == orientation)
      {
        *child = widget;
        return GTK_BOX (parent);
      }
  return NULL;
}

/* The tools' panel is docked under the image while there is one. */
static void
on_stack_page (GtkStack *stack, GParamSpec *pspec, EsWindow *self)
{
  gtk_widget_set_visible (es_tools_get_panel (self->tools),
                          g_strcmp0 (gtk_stack_get_visible_child_name (stack), "canvas") == 0);
}

void
_es_window_tools_init (EsWindow *self)
{
  GtkWidget *child;
  GtkBox *box;

  self->tools = es_tools_new (ES_TOOLS_HOST (self), self->canvas);
  if ((box = find_box (GTK_WIDGET (self->canvas), GTK_ORIENTATION_HORIZONTAL, &child)))
    gtk_box_insert_child_after (box, es_tools_get_palette (self->tools), NULL);
  if ((box = find_box (GTK_WIDGET (self->position_label), GTK_ORIENTATION_VERTICAL, &child)))
    gtk_box_insert_child_after (box, es_tools_get_panel (self->tools), gtk_widget_get_prev_sibling (child));
  g_signal_connect_object (self->stack, "notify::visible-child-name", G_CALLBACK (on_stack_page), self, 0);
  on_stack_page (self->stack, NULL, self);
}

EsTools *
es_window_get_tools (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return self->tools;
}
