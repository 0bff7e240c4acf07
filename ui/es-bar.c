/* SPDX-License-Identifier: MIT */
/* EsBar: a rounded bar in a faint trough, cairo-drawn, with a dashed marker where the floor lies. */
#include "es-bar.h"

#include <math.h>

struct _EsBar {
  GtkWidget parent_instance;

  EsBarKind kind;
  double value, max, floor;
};

G_DEFINE_FINAL_TYPE (EsBar, es_bar, GTK_TYPE_WIDGET)

GtkWidget *
es_bar_new (EsBarKind kind)
{
  EsBar *self = g_object_new (ES_TYPE_BAR, NULL);

  self->kind = kind;
  return GTK_WIDGET (self);
}

void
es_bar_set (EsBar *self, double value, double max, double floor)
{
  g_return_if_fail (ES_IS_BAR (self));

  self->value = value;
  self->max = max;
  self->floor = floor;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
rounded_rectangle (cairo_t *cr, double x, double y, double width, double height, double radius)
{
  radius = MIN (radius, MIN (width, height) / 2);
  cairo_new_sub_path (cr);
  cairo_arc (cr, x + width - radius, y + radius, radius, -G_PI / 2, 0);
  cairo_arc (cr, x + width - radius, y + height - radius, radius, 0, G_PI / 2);
  cairo_arc (cr, x + radius, y + height - radius, radius, G_PI / 2, G_PI);
  cairo_arc (cr, x + radius, y + radius, radius, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

static void
es_bar_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  EsBar *self = ES_BAR (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  double length = self->max > 0 ? CLAMP (self->value / self->max, 0, 1) * width : 0;
  GdkRGBA fg;
  cairo_t *cr;

  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));

  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.07);
  rounded_rectangle (cr, 0, 0, width, height, 4);
  cairo_fill (cr);

  /* Even the fastest bar stays visible beside a slow naive one. */
  if (self->value > 0)
    length = MAX (length, 3);
  rounded_rectangle (cr, 0, 0, length, height, 4);
  switch (self->kind)
    {
    case ES_BAR_DEFAULT:
      cairo_set_source_rgb (cr, 0.21, 0.52, 0.89); /* GNOME blue 3 */
      cairo_fill (cr);
      break;
    case ES_BAR_CPU:
      cairo_set_source_rgb (cr, 0.90, 0.38, 0.0); /* GNOME orange 5 */
      cairo_fill (cr);
      break;
    case ES_BAR_FLOOR:
      /* Hatched: a bound, not a kernel. */
      cairo_save (cr);
      cairo_clip_preserve (cr);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.25);
      cairo_fill (cr);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.35);
      cairo_set_line_width (cr, 2);
      for (double x = -height; x < length + height; x += 7)
        {
          cairo_move_to (cr, x, height);
          cairo_line_to (cr, x + height, 0);
        }
      cairo_stroke (cr);
      cairo_restore (cr);
      break;
    case ES_BAR_VARIANT:
    default:
      cairo_set_source_rgb (cr, 0.38, 0.63, 0.92); /* GNOME blue 2, a step lighter */
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, 0.1, 0.1, 0.12, 0.35);
      cairo_fill (cr);
      break;
    }

  if (isfinite (self->floor) && self->floor > 0 && self->max > 0)
    {
      double x = round (CLAMP (self->floor / self->max, 0, 1) * width) + 0.5;
      double dash[] = { 3, 2 };

      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.8);
      cairo_set_line_width (cr, 1);
      cairo_set_dash (cr, dash, 2, 0);
      cairo_move_to (cr, x, -1);
      cairo_line_to (cr, x, height + 1);
      cairo_stroke (cr);
    }
  cairo_destroy (cr);
}

static void
es_bar_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                int *minimum_baseline, int *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 120 : 18;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 360 : 18;
}

static void
es_bar_class_init (EsBarClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->snapshot = es_bar_snapshot;
  widget_class->measure = es_bar_measure;
  gtk_widget_class_set_css_name (widget_class, "esbar");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
es_bar_init (EsBar *self)
{
  self->floor = NAN;
}
