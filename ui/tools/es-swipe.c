/* SPDX-License-Identifier: MIT */
/* Swipe compare: another view of the image left of a draggable split, over every pane, with the
 * pane's own zoom and pan (so both sides stay linked). */
#include "es-tools-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

#include "es-accessible.h"

void
_es_swipe_clear (EsTools *self)
{
  es_pixels_clear (&self->swipe_pixels);
  self->swipe_pixels_layer = NULL;
}

/* A side's name at (x, y), or ending there (right); the timing overlay
 * keeps clear of it, as of a tool's shape. */
static void
draw_label (EsTools *self, GtkSnapshot *snapshot, const char *text, double x, double y, gboolean right)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self->canvas), text);
  GdkRGBA bg = { 0, 0, 0, 0.62 }, fg = { 1, 1, 1, 1 };
  int width, height;

  pango_layout_get_pixel_size (layout, &width, &height);
  if (right)
    x -= width + 12;
  gtk_snapshot_append_color (snapshot, &bg, &GRAPHENE_RECT_INIT (x, y, width + 12, height + 6));
  es_canvas_keep_clear (self->canvas, &GRAPHENE_RECT_INIT (x, y, width + 12, height + 6));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x + 6, y + 3));
  gtk_snapshot_append_layout (snapshot, layout, &fg);
  gtk_snapshot_restore (snapshot);
  g_object_unref (layout);
}

void
_es_swipe_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry)
{
  EsLayer *layer = _es_tools_get_layer (self, self->swipe_view);
  EsView views[ES_CANVAS_MAX_PANES];
  int sf = geometry->scale_factor;
  double split = round (self->swipe_split * geometry->width);
  double points[4] = { split, 0, split, geometry->height };
  double handle[2] = { split, geometry->height / 2 };
  int n = es_tools_host_get_views (self->host, views);

  if (layer && es_layer_width (layer) == self->canvas->image_width
      && es_layer_height (layer) == self->canvas->image_height)
    {
      double zoom = geometry->zoom * sf;
      int x0 = MAX (geometry->device_x, 0), y0 = MAX (geometry->device_y, 0);
      int x1 = MIN ((int) ceil (geometry->device_x + es_layer_width (layer) * zoom), (int) (split * sf));
      int y1 = MIN ((int) ceil (geometry->device_y + es_layer_height (layer) * zoom), (int) (geometry->height * sf));
      int key[6] = { x0, y0, x1, y1, geometry->device_x, geometry->device_y };
      EsColorScale scale;
      EsDisplay display;

      es_tools_host_get_display (self->host, &display);
      es_layer_display_scale (layer, &display, &scale);
      es_tools_adjust_scale (self, layer->view, &scale);
      if (x1 > x0 && y1 > y0)
        {
          /* One rendering serves every pane: they share zoom and pan. */
          if (self->swipe_pixels.surface == NULL || self->swipe_pixels_layer != layer
              || memcmp (key, self->swipe_pixels_key, sizeof key) != 0
              || memcmp (&scale, &self->swipe_pixels_scale, sizeof scale) != 0)
            {
              _es_swipe_clear (self);
              es_layer_render (layer, &scale, zoom, geometry->device_x - x0, geometry->device_y - y0, x1 - x0, y1 - y0,
                               &self->swipe_pixels);
              self->swipe_pixels_layer = layer;
              self->swipe_pixels_scale = scale;
              memcpy (self->swipe_pixels_key, key, sizeof key);
            }
          if (self->swipe_pixels.surface != NULL)
            es_canvas_append_pixels (self->canvas, snapshot, &self->swipe_pixels, x0, y0);
        }
    }
  _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height), points, 2, FALSE, 0);
  _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height), handle, 1, FALSE, 6);
  /* Which side is which (the grid's panes name their right side already). */
  draw_label (self, snapshot, layer ? es_view_title (self->swipe_view) : _ ("not computed: show it once"), split - 6,
              geometry->height - 34, TRUE);
  if (n == 1)
    draw_label (self, snapshot, es_view_title (views[0]), split + 6, geometry->height - 34, FALSE);
}

static void
on_view_selected (GtkDropDown *dropdown, GParamSpec *pspec, EsTools *self)
{
  self->swipe_view = gtk_drop_down_get_selected (dropdown);
  _es_swipe_clear (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->canvas));
}

static void
on_split_changed (GtkAdjustment *adjustment, EsTools *self)
{
  self->swipe_split = gtk_adjustment_get_value (adjustment) / 100;
  gtk_widget_queue_draw (GTK_WIDGET (self->canvas));
}

GtkWidget *
_es_swipe_page_new (EsTools *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *label = gtk_label_new_with_mnemonic (_ ("_Left of the split"));
  GtkWidget *split_label = gtk_label_new_with_mnemonic (_ ("S_plit"));
  GtkAdjustment *adjustment = gtk_adjustment_new (50, 0, 100, 1, 10, 0);
  g_autoptr (GtkStringList) titles = gtk_string_list_new (NULL);
  GtkWidget *scale;

  for (int view = 0; view < ES_N_VIEWS; view++)
    gtk_string_list_append (titles, es_view_title (view));
  self->swipe_dropdown = gtk_drop_down_new (G_LIST_MODEL (g_object_ref (titles)), NULL);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (self->swipe_dropdown), self->swipe_view);
  g_signal_connect (self->swipe_dropdown, "notify::selected", G_CALLBACK (on_view_selected), self);
  gtk_label_set_mnemonic_widget (GTK_LABEL (label), self->swipe_dropdown);
  es_accessible_label_drop_down (GTK_DROP_DOWN (self->swipe_dropdown), GTK_LABEL (label));
  gtk_box_append (GTK_BOX (box), label);
  gtk_box_append (GTK_BOX (box), self->swipe_dropdown);

  scale = gtk_scale_new (GTK_ORIENTATION_HORIZONTAL, adjustment);
  gtk_widget_set_hexpand (scale, TRUE);
  gtk_scale_set_draw_value (GTK_SCALE (scale), FALSE);
  gtk_label_set_mnemonic_widget (GTK_LABEL (split_label), scale);
  g_signal_connect (adjustment, "value-changed", G_CALLBACK (on_split_changed), self);
  self->swipe_adjustment = adjustment;
  gtk_box_append (GTK_BOX (box), split_label);
  gtk_box_append (GTK_BOX (box), scale);
  gtk_widget_set_valign (box, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (box, _ ("Drag on the image to move the split; both sides share zoom and pan"));
  return box;
}
