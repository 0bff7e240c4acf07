/* SPDX-License-Identifier: MIT */
/* EsBandwidthChart: cairo-drawn bars of achieved GB/s on a log axis, with the peaks as labelled vertical lines. */
#include "es-bandwidth-chart.h"

#include <math.h>
#include <glib/gi18n-lib.h>
#include <pango/pangocairo.h>

/* Rows of bars, each ROW_HEIGHT high; names left of them, values right. */
#define ROW_HEIGHT 24
#define BAR_HEIGHT 14
#define GAP 10
/* The narrowest plot between the names and the values. */
#define MIN_PLOT_WIDTH 160

struct _EsBandwidthChart {
  GtkWidget parent_instance;

  EsBandwidthBar *bars; /* names owned */
  int n_bars;
  double floor_gbs, datasheet_gbs;
  char *description; /* what screen readers are given */
};

G_DEFINE_FINAL_TYPE (EsBandwidthChart, es_bandwidth_chart, GTK_TYPE_WIDGET)

char *
es_bandwidth_format (double gbs)
{
  if (gbs >= 100)
    return g_strdup_printf ("%.0f GB/s", gbs);
  if (gbs >= 10)
    return g_strdup_printf ("%.1f GB/s", gbs);
  return g_strdup_printf ("%.2f GB/s", gbs);
}

/* What is written right of a bar. */
static char *
bar_value_text (const EsBandwidthBar *bar)
{
  if (isnan (bar->gbs))
    return g_strdup (_ ("not timed"));
  if (bar->gbs <= 0)
    return g_strdup (_ ("no model"));
  return es_bandwidth_format (bar->gbs);
}

static void
clear_bars (EsBandwidthChart *self)
{
  for (int i = 0; i < self->n_bars; i++)
    g_free ((char *) self->bars[i].name);
  g_clear_pointer (&self->bars, g_free);
  self->n_bars = 0;
}

/* The axis spans whole decades around every bar and line, so that a
 * variant 100× slower than the copy stays as readable as the fastest. */
static void
axis_range (const EsBandwidthChart *self, double *lo, double *hi)
{
  double min = INFINITY, max = 0;

  for (int i = 0; i < self->n_bars; i++)
    if (isfinite (self->bars[i].gbs) && self->bars[i].gbs > 0)
      {
        min = MIN (min, self->bars[i].gbs);
        max = MAX (max, self->bars[i].gbs);
      }
  if (isfinite (self->floor_gbs) && self->floor_gbs > 0)
    {
      min = MIN (min, self->floor_gbs);
      max = MAX (max, self->floor_gbs);
    }
  if (self->datasheet_gbs > 0)
    {
      min = MIN (min, self->datasheet_gbs);
      max = MAX (max, self->datasheet_gbs);
    }
  if (!isfinite (min))
    min = max = 1;
  *lo = pow (10, floor (log10 (min)));
  *hi = pow (10, ceil (log10 (max * 1.05)));
  if (*hi <= *lo)
    *hi = *lo * 10;
}

static PangoLayout *
layout_new (GtkWidget *widget, const char *text, double scale, gboolean bold)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, text);
  PangoAttrList *attrs = pango_attr_list_new ();

  if (scale != 1.0)
    pango_attr_list_insert (attrs, pango_attr_scale_new (scale));
  if (bold)
    pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
  pango_attr_list_insert (attrs, pango_attr_font_features_new ("tnum"));
  pango_layout_set_attributes (layout, attrs);
  pango_attr_list_unref (attrs);
  return layout;
}

static int
text_width (GtkWidget *widget, const char *text, double scale, gboolean bold)
{
  PangoLayout *layout = layout_new (widget, text, scale, bold);
  int width;

  pango_layout_get_pixel_size (layout, &width, NULL);
  g_object_unref (layout);
  return width;
}

static int
line_height (GtkWidget *widget)
{
  PangoLayout *layout = layout_new (widget, "Hg", 0.85, FALSE);
  int height;

  pango_layout_get_pixel_size (layout, NULL, &height);
  g_object_unref (layout);
  return height;
}

/* The columns: names, then the plot, then the values. */
typedef struct {
  int names_width, values_width, label_height;
  int plot_top, plot_bottom; /* the rows of bars */
} Layout;

static void
compute_layout (EsBandwidthChart *self, Layout *l)
{
  GtkWidget *widget = GTK_WIDGET (self);

  l->names_width = text_width (widget, _ ("GB/s, log scale"), 0.85, FALSE);
  l->values_width = 0;
  for (int i = 0; i < self->n_bars; i++)
    {
      g_autofree char *value = bar_value_text (&self->bars[i]);

      l->names_width = MAX (l->names_width, text_width (widget, self->bars[i].name, 1.0, self->bars[i].is_default));
      l->values_width = MAX (l->values_width, text_width (widget, value, 1.0, FALSE));
    }
  l->label_height = line_height (widget);
  /* Two rows of labels for the two lines, so that they never overlap. */
  l->plot_top = 2 * l->label_height + 6;
  l->plot_bottom = l->plot_top + self->n_bars * ROW_HEIGHT;
}

static void
es_bandwidth_chart_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                            int *minimum_baseline, int *natural_baseline)
{
  EsBandwidthChart *self = ES_BANDWIDTH_CHART (widget);
  Layout l;

  compute_layout (self, &l);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = l.names_width + GAP + MIN_PLOT_WIDTH + GAP + l.values_width;
      *natural = l.names_width + GAP + 3 * MIN_PLOT_WIDTH + GAP + l.values_width;
    }
  else
    *minimum = *natural = l.plot_bottom + 6 + l.label_height + 2;
}

static void
rounded_bar (cairo_t *cr, double x, double y, double width, double height)
{
  double radius = MIN (4, MIN (width, height) / 2);

  cairo_new_sub_path (cr);
  cairo_arc (cr, x + width - radius, y + radius, radius, -G_PI / 2, 0);
  cairo_arc (cr, x + width - radius, y + height - radius, radius, 0, G_PI / 2);
  cairo_arc (cr, x + radius, y + height - radius, radius, G_PI / 2, G_PI);
  cairo_arc (cr, x + radius, y + radius, radius, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

/* A vertical line over every row at x, and its label in row `label_row` of
 * the labels above the rows: right of the line in the plot's left half,
 * else left of it, so that a label crosses no line to its right (the
 * datasheet peak, on its row above, lies right of the copy floor). */
static void
draw_reference (GtkWidget *widget, cairo_t *cr, const Layout *l, double x, double plot_middle, int label_row,
                const char *label, const GdkRGBA *color, gboolean dashed)
{
  PangoLayout *layout = layout_new (widget, label, 0.85, FALSE);
  double dash[] = { 4, 3 };
  double label_y = label_row * l->label_height;
  int label_width;

  cairo_set_source_rgba (cr, color->red, color->green, color->blue, 0.9);
  cairo_set_line_width (cr, dashed ? 1.5 : 2);
  cairo_set_dash (cr, dash, dashed ? 2 : 0, 0);
  cairo_move_to (cr, x, label_y + l->label_height - 1);
  cairo_line_to (cr, x, l->plot_bottom + 2);
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
  pango_layout_get_pixel_size (layout, &label_width, NULL);
  cairo_move_to (cr, x < plot_middle ? x + 4 : MAX (0, x - 4 - label_width), label_y);
  pango_cairo_show_layout (cr, layout);
  g_object_unref (layout);
}

static void
es_bandwidth_chart_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  EsBandwidthChart *self = ES_BANDWIDTH_CHART (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  double lo, hi, x0, x1, decades;
  GdkRGBA fg, peak;
  gboolean dark;
  cairo_t *cr;
  Layout l;

  if (self->n_bars == 0)
    return;
  compute_layout (self, &l);
  axis_range (self, &lo, &hi);
  x0 = l.names_width + GAP;
  x1 = MAX (x0 + 1, width - l.values_width - GAP);
  decades = log10 (hi) - log10 (lo);
#define X_OF(v) (x0 + (log10 (v) - log10 (lo)) / decades * (x1 - x0))

  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  /* The style's text colour tells a dark style from a light one: the
   * datasheet line is a GNOME orange that reads on either. */
  dark = 0.2126 * fg.red + 0.7152 * fg.green + 0.0722 * fg.blue > 0.5;
  peak = dark ? (GdkRGBA){ 1.0, 0.64, 0.28, 1 } : (GdkRGBA){ 0.78, 0.27, 0.0, 1 };
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));

  /* Decades, with fainter lines at 2× and 5×, and their numbers below. */
  for (double decade = lo; decade < hi * 1.001; decade *= 10)
    for (int m = 1; m <= 5 && decade * m <= hi * 1.001; m += (m == 1 ? 1 : 3))
      {
        double x = round (X_OF (decade * m)) + 0.5;

        cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, m == 1 ? 0.18 : 0.07);
        cairo_set_line_width (cr, 1);
        cairo_move_to (cr, x, l.plot_top - 2);
        cairo_line_to (cr, x, l.plot_bottom + (m == 1 ? 5 : 2));
        cairo_stroke (cr);
        if (m == 1 || decades <= 1.01)
          {
            g_autofree char *number = g_strdup_printf ("%g", decade * m);
            PangoLayout *layout = layout_new (widget, number, 0.85, FALSE);
            int w;

            pango_layout_get_pixel_size (layout, &w, NULL);
            cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.7);
            cairo_move_to (cr, CLAMP (x - w / 2.0, x0 - GAP, width - w), l.plot_bottom + 6);
            pango_cairo_show_layout (cr, layout);
            g_object_unref (layout);
          }
      }
  {
    PangoLayout *layout = layout_new (widget, _ ("GB/s, log scale"), 0.85, FALSE);

    cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.7);
    cairo_move_to (cr, 0, l.plot_bottom + 6);
    pango_cairo_show_layout (cr, layout);
    g_object_unref (layout);
  }

  for (int i = 0; i < self->n_bars; i++)
    {
      const EsBandwidthBar *bar = &self->bars[i];
      double row_y = l.plot_top + i * ROW_HEIGHT, bar_y = row_y + (ROW_HEIGHT - BAR_HEIGHT) / 2.0;
      g_autofree char *value = bar_value_text (bar);
      PangoLayout *name = layout_new (widget, bar->name, 1.0, bar->is_default);
      PangoLayout *value_layout = layout_new (widget, value, 1.0, FALSE);
      int name_height, value_width;

      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.05);
      rounded_bar (cr, x0, bar_y, x1 - x0, BAR_HEIGHT);
      cairo_fill (cr);
      if (isfinite (bar->gbs) && bar->gbs > 0)
        {
          rounded_bar (cr, x0, bar_y, MAX (3, X_OF (bar->gbs) - x0), BAR_HEIGHT);
          if (bar->is_default)
            cairo_set_source_rgb (cr, 0.21, 0.52, 0.89); /* GNOME blue 3, as the time chart's default bar */
          else
            cairo_set_source_rgb (cr, 0.30, 0.47, 0.66); /* the time chart's variant blue, a step darker */
          cairo_fill (cr);
        }

      pango_layout_get_pixel_size (name, NULL, &name_height);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 1);
      cairo_move_to (cr, 0, row_y + (ROW_HEIGHT - name_height) / 2.0);
      pango_cairo_show_layout (cr, name);
      pango_layout_get_pixel_size (value_layout, &value_width, NULL);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, isfinite (bar->gbs) && bar->gbs > 0 ? 1 : 0.6);
      cairo_move_to (cr, width - value_width, row_y + (ROW_HEIGHT - name_height) / 2.0);
      pango_cairo_show_layout (cr, value_layout);
      g_object_unref (name);
      g_object_unref (value_layout);
    }

  if (isfinite (self->floor_gbs) && self->floor_gbs > 0)
    {
      g_autofree char *value = es_bandwidth_format (self->floor_gbs);
      g_autofree char *label = g_strdup_printf (_ ("Copy floor %s"), value);

      draw_reference (widget, cr, &l, round (X_OF (self->floor_gbs)) + 0.5, (x0 + x1) / 2, 1, label, &fg, TRUE);
    }
  if (self->datasheet_gbs > 0)
    {
      g_autofree char *value = es_bandwidth_format (self->datasheet_gbs);
      g_autofree char *label = g_strdup_printf (_ ("Datasheet peak %s"), value);

      draw_reference (widget, cr, &l, round (X_OF (self->datasheet_gbs)), (x0 + x1) / 2, 0, label, &peak, FALSE);
    }
#undef X_OF
  cairo_destroy (cr);
}

/* Hovering a row: its variant, GB/s and share of each peak. */
static gboolean
es_bandwidth_chart_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  EsBandwidthChart *self = ES_BANDWIDTH_CHART (widget);
  const EsBandwidthBar *bar;
  g_autofree char *value = NULL;
  GString *text;
  Layout l;
  int row;

  compute_layout (self, &l);
  if (keyboard || y < l.plot_top || y >= l.plot_bottom)
    return FALSE;
  row = (y - l.plot_top) / ROW_HEIGHT;
  bar = &self->bars[CLAMP (row, 0, self->n_bars - 1)];
  value = bar_value_text (bar);
  text = g_string_new (NULL);
  g_string_append_printf (text, "%s: %s", bar->name, value);
  if (isfinite (bar->gbs) && bar->gbs > 0)
    {
      if (isfinite (self->floor_gbs) && self->floor_gbs > 0)
        {
          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of the copy floor"), 100 * bar->gbs / self->floor_gbs);
        }
      if (self->datasheet_gbs > 0)
        {
          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of the datasheet peak"), 100 * bar->gbs / self->datasheet_gbs);
        }
    }
  gtk_tooltip_set_text (tooltip, text->str);
  g_string_free (text, TRUE);
  return TRUE;
}

/* What a screen reader says after the name, "Achieved bandwidth": "Modelled
 * bytes over median kernel time; copy floor 3459 GB/s; datasheet peak 4800
 * GB/s; naive 27.8 GB/s; …; fast (default) 1794 GB/s; volume not timed". */
static void
update_description (EsBandwidthChart *self)
{
  GString *text = g_string_new (_ ("Modelled bytes over median kernel time"));

  if (isfinite (self->floor_gbs) && self->floor_gbs > 0)
    {
      g_autofree char *value = es_bandwidth_format (self->floor_gbs);

      g_string_append (text, "; ");
      g_string_append_printf (text, _ ("copy floor %s"), value);
    }
  if (self->datasheet_gbs > 0)
    {
      g_autofree char *value = es_bandwidth_format (self->datasheet_gbs);

      g_string_append (text, "; ");
      g_string_append_printf (text, _ ("datasheet peak %s"), value);
    }
  for (int i = 0; i < self->n_bars; i++)
    {
      g_autofree char *value = bar_value_text (&self->bars[i]);

      g_string_append (text, "; ");
      if (self->bars[i].is_default)
        g_string_append_printf (text, _ ("%s (default) %s"), self->bars[i].name, value);
      else
        g_string_append_printf (text, "%s %s", self->bars[i].name, value);
    }
  g_free (self->description);
  self->description = g_string_free (text, FALSE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, self->description, -1);
}

const char *
es_bandwidth_chart_get_description (EsBandwidthChart *self)
{
  g_return_val_if_fail (ES_IS_BANDWIDTH_CHART (self), NULL);
  return self->description;
}

void
es_bandwidth_chart_set (EsBandwidthChart *self, const EsBandwidthBar *bars, int n_bars, double floor_gbs,
                        double datasheet_gbs)
{
  g_return_if_fail (ES_IS_BANDWIDTH_CHART (self));
  g_return_if_fail (n_bars >= 0);

  clear_bars (self);
  self->bars = g_new (EsBandwidthBar, MAX (n_bars, 1));
  for (int i = 0; i < n_bars; i++)
    {
      self->bars[i] = bars[i];
      self->bars[i].name = g_strdup (bars[i].name);
    }
  self->n_bars = n_bars;
  self->floor_gbs = floor_gbs;
  self->datasheet_gbs = datasheet_gbs;
  update_description (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

GtkWidget *
es_bandwidth_chart_new (void)
{
  return g_object_new (ES_TYPE_BANDWIDTH_CHART, NULL);
}

static void
es_bandwidth_chart_finalize (GObject *object)
{
  clear_bars (ES_BANDWIDTH_CHART (object));
  g_free (ES_BANDWIDTH_CHART (object)->description);
  G_OBJECT_CLASS (es_bandwidth_chart_parent_class)->finalize (object);
}

static void
es_bandwidth_chart_class_init (EsBandwidthChartClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = es_bandwidth_chart_finalize;
  widget_class->snapshot = es_bandwidth_chart_snapshot;
  widget_class->measure = es_bandwidth_chart_measure;
  widget_class->query_tooltip = es_bandwidth_chart_query_tooltip;
  gtk_widget_class_set_css_name (widget_class, "esbandwidthchart");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
es_bandwidth_chart_init (EsBandwidthChart *self)
{
  self->floor_gbs = NAN;
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Achieved bandwidth"), -1);
}
