/* SPDX-License-Identifier: MIT */
/* The pixel inspector: the entropy window under the pointer, its levels cell by cell, and the count
 * of each level with its share of H = −Σ p ln p, which is why the entropy there has its value. */
#include "es-tools-private.h"

#include <math.h>

typedef struct {
  EsWindowCounts counts;
  gboolean valid;
  int x, y;
  GString *text;
} InspectorData;

static InspectorData *
inspector_data (EsTools *self)
{
  return g_object_get_data (G_OBJECT (self->inspector_cells), "es-inspector");
}

gboolean
es_tools_get_window_counts (EsTools *self, EsWindowCounts *counts)
{
  InspectorData *data = inspector_data (self);

  *counts = data->counts;
  return data->valid;
}

const char *
es_tools_get_inspector_text (EsTools *self)
{
  return gtk_label_get_label (GTK_LABEL (self->inspector_caption));
}

static void
colormap_rgb (int level, int levels, EsColormap map, gboolean reversed, double rgb[3])
{
  const uint8_t (*table)[3] = es_colormap_table (map < ES_N_COLORMAPS ? map : ES_COLORMAP_GRAY);
  int k = levels > 1 ? (level * 255 + (levels - 1) / 2) / (levels - 1) : 0;

  if (reversed)
    k = 255 - k;
  for (int i = 0; i < 3; i++)
    rgb[i] = table[k][i] / 255.0;
}

/* The window's cells: each in its level's colour, with the level written
 * in when there is room; the centre outlined. */
static void
draw_cells (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  EsTools *self = user_data;
  InspectorData *data = inspector_data (self);
  EsSource *source = es_window_get_source (self->window);
  EsJob job;
  EsDisplay display;
  int k, half;
  double cell;
  GdkRGBA fg;

  if (!data->valid || source == NULL)
    return;
  es_window_get_view_job (self->window, ES_VIEW_ENTROPY, &job);
  _es_window_get_display (self->window, &display);
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  k = job.window;
  half = k / 2;
  cell = floor (MIN (width, height) / (double) k);
  for (int j = 0; j < k; j++)
    for (int i = 0; i < k; i++)
      {
        int x = data->x - half + i, y = data->y - half + j;
        EsChannel channel = { "level", &source->image, data->counts.levels, 1.0 };
        double rgb[3];

        if (x < 0 || y < 0 || x >= source->image.width || y >= source->image.height)
          {
            /* Outside the image: not in the window (it is clipped). */
            cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.08);
            cairo_rectangle (cr, i * cell + 1, j * cell + 1, cell - 2, cell - 2);
            cairo_fill (cr);
            continue;
          }
        int level = (int) es_channel_value (&channel, x, y);

        colormap_rgb (level, data->counts.levels, display.colormap, display.reversed, rgb);
        cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle (cr, i * cell, j * cell, cell - (cell > 6 ? 1 : 0), cell - (cell > 6 ? 1 : 0));
        cairo_fill (cr);
        if (cell >= 14)
          {
            char text[8];
            PangoLayout *layout;
            int tw, th;

            g_snprintf (text, sizeof text, "%d", level);
            layout = gtk_widget_create_pango_layout (GTK_WIDGET (area), text);
            pango_layout_get_pixel_size (layout, &tw, &th);
            /* Dark text on light cells, light on dark. */
            if (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] > 0.5)
              cairo_set_source_rgb (cr, 0, 0, 0);
            else
              cairo_set_source_rgb (cr, 1, 1, 1);
            cairo_move_to (cr, i * cell + (cell - tw) / 2, j * cell + (cell - th) / 2);
            pango_cairo_show_layout (cr, layout);
            g_object_unref (layout);
          }
      }
  cairo_set_source_rgb (cr, 1, 0.85, 0.2);
  cairo_set_line_width (cr, 2);
  cairo_rectangle (cr, half * cell, half * cell, cell - 1, cell - 1);
  cairo_stroke (cr);
}

void
_es_inspector_update (EsTools *self)
{
  InspectorData *data = inspector_data (self);
  EsSource *source = es_window_get_source (self->window);
  EsLayer *entropy = es_window_get_layer (self->window, ES_VIEW_ENTROPY);
  EsError error = { 0 };
  EsDisplay display;
  EsValueInfo info;
  EsJob job;
  int x = self->hover_x, y = self->hover_y;

  data->valid = FALSE;
  g_string_truncate (data->text, 0);
  if (source && x >= 0 && y >= 0 && x < source->image.width && y < source->image.height)
    {
      /* The window and levels of the entropy on screen, else of the settings. */
      if (entropy)
        job = entropy->job;
      else
        es_window_get_view_job (self->window, ES_VIEW_ENTROPY, &job);
      data->valid = es_window_counts (&source->image, job.levels, job.window, x, y, &data->counts,
                                      &error);
      data->x = x;
      data->y = y;
    }
  if (!data->valid)
    {
      gtk_label_set_label (GTK_LABEL (self->inspector_counts),
                           "Point at the image: the entropy window there, and the count of each "
                           "level in it (I; a click pins the pixel)");
      gtk_label_set_label (GTK_LABEL (self->inspector_caption), "");
      gtk_widget_queue_draw (self->inspector_cells);
      return;
    }

  g_string_append (data->text, "level   count   p = c/n   −p ln p\n");
  for (int level = 0; level < data->counts.levels; level++)
    if (data->counts.counts[level])
      {
        double p = (double) data->counts.counts[level] / data->counts.n;

        g_string_append_printf (data->text, "%5d   %5u   %7.4f   %7.4f\n", level,
                                data->counts.counts[level], p, -p * log (p));
      }
  g_string_truncate (data->text, data->text->len - 1);
  gtk_label_set_label (GTK_LABEL (self->inspector_counts), data->text->str);

  /* The sum, always in sight above the table (which may scroll). */
  g_string_printf (data->text, "H = −Σ p ln p = %.4f nats = %.4f bits  ·  n = %u",
                   data->counts.entropy, data->counts.entropy / G_LN2, data->counts.n);
  if (data->counts.window.width < job.window || data->counts.window.height < job.window)
    g_string_append_printf (data->text, " (window clipped to %d × %d)", data->counts.window.width,
                            data->counts.window.height);
  if (entropy && es_layer_width (entropy) == source->image.width)
    {
      _es_window_get_display (self->window, &display);
      es_layer_display_info (entropy, &display, &info);
      g_string_append_printf (data->text, "  ·  Entropy view %.4f %s", es_layer_value (entropy, x, y)
                              * (info.unit_scale > 0 ? info.unit_scale : 1), info.units);
    }
  g_string_append_printf (data->text, "  ·  x %d  y %d, window %d, levels %d", x, y, job.window,
                          job.levels);
  gtk_label_set_label (GTK_LABEL (self->inspector_caption), data->text->str);
  gtk_widget_queue_draw (self->inspector_cells);
}

static void
inspector_data_free (gpointer pointer)
{
  InspectorData *data = pointer;

  g_string_free (data->text, TRUE);
  g_free (data);
}

GtkWidget *
_es_inspector_page_new (EsTools *self)
{
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 18);
  GtkWidget *column = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  InspectorData *data = g_new0 (InspectorData, 1);

  data->text = g_string_new (NULL);
  self->inspector_cells = gtk_drawing_area_new ();
  g_object_set_data_full (G_OBJECT (self->inspector_cells), "es-inspector", data, inspector_data_free);
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (self->inspector_cells), 120);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (self->inspector_cells), 120);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->inspector_cells), draw_cells, self, NULL);
  gtk_widget_set_valign (self->inspector_cells, GTK_ALIGN_START);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->inspector_cells), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  "The levels of the entropy window", -1);
  gtk_box_append (GTK_BOX (row), self->inspector_cells);

  self->inspector_counts = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->inspector_counts), 0);
  gtk_label_set_yalign (GTK_LABEL (self->inspector_counts), 0);
  gtk_label_set_selectable (GTK_LABEL (self->inspector_counts), TRUE);
  gtk_label_set_wrap (GTK_LABEL (self->inspector_counts), TRUE);
  gtk_widget_add_css_class (self->inspector_counts, "monospace");
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), self->inspector_counts);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_min_content_height (GTK_SCROLLED_WINDOW (scroller), 48);
  gtk_widget_set_vexpand (scroller, TRUE);
  /* The sum first: it stays in sight when the table scrolls. */
  self->inspector_caption = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->inspector_caption), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->inspector_caption), PANGO_ELLIPSIZE_END);
  gtk_box_append (GTK_BOX (column), self->inspector_caption);
  gtk_box_append (GTK_BOX (column), scroller);
  gtk_widget_set_hexpand (column, TRUE);
  gtk_box_append (GTK_BOX (row), column);
  return row;
}

void
_es_inspector_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry)
{
  InspectorData *data = inspector_data (self);
  const EsRect *window = &data->counts.window;
  double points[8], centre[8];

  if (!data->valid)
    return;
  _es_tools_to_pane (geometry, window->x, window->y, &points[0], &points[1]);
  _es_tools_to_pane (geometry, window->x + window->width, window->y + window->height, &points[4],
                     &points[5]);
  points[2] = points[4], points[3] = points[1], points[6] = points[0], points[7] = points[5];
  _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height),
                         points, 4, TRUE, 0);
  if (geometry->zoom >= 4)
    {
      _es_tools_to_pane (geometry, data->x, data->y, &centre[0], &centre[1]);
      _es_tools_to_pane (geometry, data->x + 1, data->y + 1, &centre[4], &centre[5]);
      centre[2] = centre[4], centre[3] = centre[1], centre[6] = centre[0], centre[7] = centre[5];
      _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height),
                             centre, 4, TRUE, 0);
    }
}
