/* SPDX-License-Identifier: MIT */
/* The inspection tools' icons, drawn with cairo in the foreground colour. */
#include "es-tools-private.h"

/* The tools' icons, drawn here: the icon theme of Debian 12 has none for them. */
static void
draw_icon (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  int tool = GPOINTER_TO_INT (data);
  GdkRGBA fg;

  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  gdk_cairo_set_source_rgba (cr, &fg);
  cairo_set_line_width (cr, 1.5);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  switch (tool)
    {
    case ES_TOOL_POINTER: /* an arrow */
      cairo_move_to (cr, 4, 2);
      cairo_line_to (cr, 4, 13);
      cairo_line_to (cr, 7, 10);
      cairo_line_to (cr, 9.5, 14.5);
      cairo_line_to (cr, 11, 13.7);
      cairo_line_to (cr, 8.7, 9.3);
      cairo_line_to (cr, 12.5, 9.3);
      cairo_close_path (cr);
      cairo_fill (cr);
      break;
    case ES_TOOL_LINE: /* a line between two ends */
      cairo_move_to (cr, 3.5, 12.5);
      cairo_line_to (cr, 12.5, 3.5);
      cairo_stroke (cr);
      cairo_arc (cr, 3.5, 12.5, 2, 0, 2 * G_PI);
      cairo_arc (cr, 12.5, 3.5, 2, 0, 2 * G_PI);
      cairo_fill (cr);
      break;
    case ES_TOOL_RECT: /* a rectangle with corners */
      cairo_rectangle (cr, 2.75, 3.75, 10.5, 8.5);
      cairo_stroke (cr);
      cairo_rectangle (cr, 1.5, 2.5, 3, 3);
      cairo_rectangle (cr, 11.5, 10.5, 3, 3);
      cairo_fill (cr);
      break;
    case ES_TOOL_INSPECT: /* a 3×3 window, its centre filled */
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          {
            cairo_rectangle (cr, 1.5 + 4.5 * i, 1.5 + 4.5 * j, 3.6, 3.6);
            if (i == 1 && j == 1)
              cairo_fill (cr);
            else
              cairo_stroke (cr);
          }
      break;
    case ES_TOOL_SWIPE: /* two halves and the split */
      cairo_rectangle (cr, 1.75, 2.75, 12.5, 10.5);
      cairo_stroke (cr);
      cairo_rectangle (cr, 1.75, 2.75, 6.25, 10.5);
      cairo_fill (cr);
      cairo_move_to (cr, 8, 0.5);
      cairo_line_to (cr, 8, 15.5);
      cairo_stroke (cr);
      break;
    default: /* contrast: a half-filled circle */
      cairo_arc (cr, 8, 8, 6, 0, 2 * G_PI);
      cairo_stroke (cr);
      cairo_arc (cr, 8, 8, 6, G_PI / 2, 3 * G_PI / 2);
      cairo_fill (cr);
      break;
    }
}

GtkWidget *
_es_tools_icon_new (int tool)
{
  GtkWidget *area = gtk_drawing_area_new ();

  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (area), 16);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (area), 16);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), draw_icon, GINT_TO_POINTER (tool), NULL);
  gtk_widget_set_halign (area, GTK_ALIGN_CENTER);
  gtk_widget_set_valign (area, GTK_ALIGN_CENTER);
  return area;
}

/* Shapes over the image: a dark line under a light one shows on any
 * colours; dots of dot_radius mark the points (0: none). */
void
_es_tools_stroke_path (GtkSnapshot *snapshot, const graphene_rect_t *bounds, const double *points, int n_points,
                       gboolean closed, double dot_radius)
{
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, bounds);

  for (int pass = 0; pass < 2; pass++)
    {
      if (pass == 0)
        cairo_set_source_rgba (cr, 0, 0, 0, 0.7);
      else
        cairo_set_source_rgba (cr, 1, 0.85, 0.2, 1);
      cairo_set_line_width (cr, pass == 0 ? 4 : 2);
      cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
      for (int i = 0; i < n_points; i++)
        cairo_line_to (cr, points[2 * i], points[2 * i + 1]);
      if (closed)
        cairo_close_path (cr);
      cairo_stroke (cr);
      for (int i = 0; i < n_points && dot_radius > 0; i++)
        {
          cairo_new_sub_path (cr);
          cairo_arc (cr, points[2 * i], points[2 * i + 1], dot_radius + (pass == 0 ? 1 : 0), 0, 2 * G_PI);
          cairo_fill (cr);
        }
    }
  cairo_destroy (cr);
}
