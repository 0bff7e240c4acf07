/* SPDX-License-Identifier: MIT */
/* EsHistogram: a cairo-drawn bar chart with the cumulative distribution on top. */
#include "es-histogram.h"

struct _EsHistogram {
  GtkWidget parent_instance;

  guint64 *counts;
  guint n_bins;
  EsColormap map;
  gboolean reversed;
};

G_DEFINE_FINAL_TYPE (EsHistogram, es_histogram, GTK_TYPE_WIDGET)

void
es_histogram_set_counts (EsHistogram *self, const guint64 *counts, guint n_bins, EsColormap map, gboolean reversed)
{
  g_return_if_fail (ES_IS_HISTOGRAM (self));

  g_clear_pointer (&self->counts, g_free);
  self->n_bins = counts ? n_bins : 0;
  if (counts)
    self->counts = g_memdup2 (counts, n_bins * sizeof *counts);
  self->map = map;
  self->reversed = reversed;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
es_histogram_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  EsHistogram *self = ES_HISTOGRAM (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  double bar = width / MAX (self->n_bins, 1), gap = bar >= 6 ? 1.5 : 0;
  guint64 max = 0, total = 0, running = 0;
  GdkRGBA fg;
  cairo_t *cr;

  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));

  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.06);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_fill (cr);
  if (self->n_bins == 0)
    {
      cairo_destroy (cr);
      return;
    }

  for (guint i = 0; i < self->n_bins; i++)
    {
      max = MAX (max, self->counts[i]);
      total += self->counts[i];
    }

  for (guint i = 0; i < self->n_bins && max > 0; i++)
    {
      double h = (double) self->counts[i] / max * (height - 4);

      if (self->map < ES_N_COLORMAPS)
        {
          const uint8_t (*table)[3] = es_colormap_table (self->map);
          guint k = self->n_bins > 1 ? (i * 255 + (self->n_bins - 1) / 2) / (self->n_bins - 1) : 0;

          if (self->reversed)
            k = 255 - k;
          cairo_set_source_rgb (cr, table[k][0] / 255.0, table[k][1] / 255.0, table[k][2] / 255.0);
        }
      else
        cairo_set_source_rgb (cr, 0.21, 0.52, 0.89);
      cairo_rectangle (cr, i * bar + gap / 2, height - h, MAX (bar - gap, 1), h);
      cairo_fill (cr);
    }

  /* The cumulative distribution: a straight line after equalization. */
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.75);
  cairo_set_line_width (cr, 1.5);
  cairo_move_to (cr, 0, height);
  for (guint i = 0; i < self->n_bins && total > 0; i++)
    {
      running += self->counts[i];
      cairo_line_to (cr, (i + 1) * bar, height - (double) running / total * (height - 4));
    }
  cairo_stroke (cr);
  cairo_destroy (cr);
}

static void
es_histogram_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                      int *minimum_baseline, int *natural_baseline)
{
  /* Its height is the style's (96 px in the side panel, style.css). */
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 128 : 40;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 256 : 88;
}

static void
es_histogram_finalize (GObject *object)
{
  g_free (ES_HISTOGRAM (object)->counts);
  G_OBJECT_CLASS (es_histogram_parent_class)->finalize (object);
}

static void
es_histogram_class_init (EsHistogramClass *klass)
{
  GTK_WIDGET_CLASS (klass)->snapshot = es_histogram_snapshot;
  GTK_WIDGET_CLASS (klass)->measure = es_histogram_measure;
  G_OBJECT_CLASS (klass)->finalize = es_histogram_finalize;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "eshistogram");
  gtk_widget_class_set_accessible_role (GTK_WIDGET_CLASS (klass), GTK_ACCESSIBLE_ROLE_IMG);
}

static void
es_histogram_init (EsHistogram *self)
{
  self->map = ES_N_COLORMAPS;
}
