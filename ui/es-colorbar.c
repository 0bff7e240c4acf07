/* SPDX-License-Identifier: MIT */
/* EsColorbar: a vertical gradient of the colormap with labelled ticks and units. */
#include "es-colorbar.h"
#include "es-colorbar-private.h"

#include <math.h>

#define BAR_WIDTH 14
#define MARGIN_TOP 30
#define MARGIN_BOTTOM 14
#define MAX_TICKS 12
/* The no-data swatch's row under the bar. */
#define NO_DATA_ROW 24

struct _EsColorbar {
  GtkWidget parent_instance;

  gboolean has_scale;
  EsColorScale scale;
  double unit_scale;
  double value_offset;
  char *units;
  gboolean integral;
  char *no_data; /* the swatch's label, NULL for none */
};

G_DEFINE_FINAL_TYPE (EsColorbar, es_colorbar, GTK_TYPE_WIDGET)

int
es_colorbar_ticks (double lo, double hi, int max_ticks, gboolean integral, double *ticks, int *decimals)
{
  static const double nice[] = { 1, 2, 2.5, 5, 10 };
  double span = hi - lo, raw, magnitude, step = 1;
  int n = 0;

  *decimals = 0;
  if (!(span > 0))
    {
      ticks[0] = lo;
      *decimals = integral ? 0 : 2;
      return 1;
    }
  raw = span / MAX (max_ticks - 1, 1);
  magnitude = pow (10, floor (log10 (raw)));
  for (guint i = 0; i < G_N_ELEMENTS (nice); i++)
    if (nice[i] * magnitude >= raw)
      {
        step = nice[i] * magnitude;
        break;
      }
  if (integral)
    step = MAX (1, round (step));
  if (!integral)
    *decimals = MAX (0, (int) -floor (log10 (step) + 1e-9) + (fmod (step / magnitude, 1) != 0));

  for (double t = ceil (lo / step - 1e-9) * step; t <= hi + step * 1e-9 && n < max_ticks; t += step)
    ticks[n++] = fabs (t) < step * 1e-9 ? 0 : t;
  return n;
}

void
es_colorbar_set_scale (EsColorbar *self, const EsColorScale *scale, double unit_scale, double value_offset,
                       const char *units, gboolean integral)
{
  g_return_if_fail (ES_IS_COLORBAR (self));

  self->has_scale = scale != NULL;
  if (scale)
    self->scale = *scale;
  self->unit_scale = unit_scale > 0 ? unit_scale : 1.0;
  self->value_offset = value_offset;
  g_free (self->units);
  self->units = g_strdup (units);
  self->integral = integral;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
es_colorbar_set_no_data (EsColorbar *self, const char *label)
{
  g_return_if_fail (ES_IS_COLORBAR (self));

  if (g_strcmp0 (self->no_data, label) == 0)
    return;
  g_free (self->no_data);
  self->no_data = g_strdup (label);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const char *
es_colorbar_get_no_data (EsColorbar *self)
{
  g_return_val_if_fail (ES_IS_COLORBAR (self), NULL);
  return self->no_data;
}

static void
append_text (EsColorbar *self, GtkSnapshot *snapshot, const char *text, double x, double y, double xalign,
             const GdkRGBA *color)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  int width, height;

  pango_layout_get_pixel_size (layout, &width, &height);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (round (x - xalign * width), round (y - height / 2.0)));
  gtk_snapshot_append_layout (snapshot, layout, color);
  gtk_snapshot_restore (snapshot);
  g_object_unref (layout);
}

static void
es_colorbar_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  EsColorbar *self = ES_COLORBAR (widget);
  const uint8_t (*table)[3];
  double height = gtk_widget_get_height (widget);
  double top = MARGIN_TOP, bottom = height - MARGIN_BOTTOM - (self->no_data ? NO_DATA_ROW : 0), bar_x = 12;
  double lo, hi, ticks[MAX_TICKS];
  GskColorStop stops[256];
  GdkRGBA color, tick_color;
  int n_ticks, decimals;

  if (!self->has_scale || bottom - top < 20)
    return;

  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &color);
  tick_color = color;
  tick_color.alpha *= 0.8;

  /* High values at the top, as on a map legend. */
  table = es_colormap_table (self->scale.map);
  for (int i = 0; i < 256; i++)
    {
      int k = self->scale.reversed ? i : 255 - i;
      stops[i].offset = i / 255.0f;
      stops[i].color = (GdkRGBA){ table[k][0] / 255.0f, table[k][1] / 255.0f, table[k][2] / 255.0f, 1.0f };
    }
  gtk_snapshot_append_linear_gradient (snapshot, &GRAPHENE_RECT_INIT (bar_x, top, BAR_WIDTH, bottom - top),
                                       &GRAPHENE_POINT_INIT (bar_x, top), &GRAPHENE_POINT_INIT (bar_x, bottom), stops,
                                       256);

  if (self->units)
    append_text (self, snapshot, self->units, bar_x, MARGIN_TOP / 2.0, 0, &color);

  /* The colour of pixels without a value, which no colormap holds. */
  if (self->no_data)
    {
      GdkRGBA swatch = { es_no_data_rgb[0] / 255.0f, es_no_data_rgb[1] / 255.0f, es_no_data_rgb[2] / 255.0f, 1.0f };
      double y = bottom + NO_DATA_ROW - BAR_WIDTH;

      gtk_snapshot_append_color (snapshot, &swatch, &GRAPHENE_RECT_INIT (bar_x, y, BAR_WIDTH, BAR_WIDTH));
      append_text (self, snapshot, self->no_data, bar_x + BAR_WIDTH + 8, y + BAR_WIDTH / 2.0, 0, &color);
    }

  lo = self->value_offset + self->scale.lo * self->unit_scale;
  hi = self->value_offset + self->scale.hi * self->unit_scale;
  n_ticks = es_colorbar_ticks (lo, hi, MIN (MAX_TICKS, (int) ((bottom - top) / 28) + 1), self->integral, ticks,
                               &decimals);
  for (int i = 0; i < n_ticks; i++)
    {
      double y = hi > lo ? bottom - (ticks[i] - lo) / (hi - lo) * (bottom - top) : bottom;
      char text[32];

      y = round (y) + 0.5;
      gtk_snapshot_append_color (snapshot, &tick_color, &GRAPHENE_RECT_INIT (bar_x + BAR_WIDTH, y - 0.5, 5, 1));
      g_snprintf (text, sizeof text, "%.*f", decimals, ticks[i]);
      append_text (self, snapshot, text, bar_x + BAR_WIDTH + 8, y, 0, &color);
    }
}

static void
es_colorbar_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                     int *minimum_baseline, int *natural_baseline)
{
  *minimum = *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 76 : 120;
}

static void
es_colorbar_finalize (GObject *object)
{
  g_free (ES_COLORBAR (object)->units);
  g_free (ES_COLORBAR (object)->no_data);
  G_OBJECT_CLASS (es_colorbar_parent_class)->finalize (object);
}

static void
es_colorbar_class_init (EsColorbarClass *klass)
{
  GTK_WIDGET_CLASS (klass)->snapshot = es_colorbar_snapshot;
  GTK_WIDGET_CLASS (klass)->measure = es_colorbar_measure;
  G_OBJECT_CLASS (klass)->finalize = es_colorbar_finalize;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "escolorbar");
  gtk_widget_class_set_accessible_role (GTK_WIDGET_CLASS (klass), GTK_ACCESSIBLE_ROLE_IMG);
}

static void
es_colorbar_init (EsColorbar *self)
{
  self->unit_scale = 1.0;
}
