/* SPDX-License-Identifier: MIT */
/* The line profile: the line on every pane, and a plot of each channel along it (gray, level and
 * every result on screen), stacked on one distance axis, with a readout under the pointer. */
#include "es-tools-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

/* A channel's strip: room for its name (20 px keeps one view's three
 * strips and the axis, 78 px, whole in a 640 × 420 window's panel). */
#define STRIP_MIN_HEIGHT 20
/* The channels' names left of the strips: at most a quarter of the width. */
#define LABEL_WIDTH(width) MIN (150, (width) / 4)

typedef struct {
  EsTools *tools;
  int hover_index; /* the profile sample under the pointer; -1 none */
} PlotData;

static PlotData *
plot_data (GtkWidget *plot)
{
  return g_object_get_data (G_OBJECT (plot), "es-plot");
}

static void
format_value (char *buffer, size_t size, double value, const EsChannel *channel)
{
  const EsImageMeta *meta = &channel->image->meta;

  if (isnan (value))
    g_strlcpy (buffer, "NaN", size);
  else if (channel->levels == 0 && meta->stored == ES_STORED_FLOAT)
    g_snprintf (buffer, size, "%.*f", es_image_meta_value_decimals (meta), value);
  else if (channel->image->format == ES_FORMAT_F32)
    g_snprintf (buffer, size, "%.4f", value);
  else
    g_snprintf (buffer, size, "%.0f", value);
}

/* A distance along the line: tenths of a pixel, or five significant
 * digits of a calibrated unit. */
static void
format_distance (char *buffer, size_t size, const EsProfile *profile, double distance)
{
  if (g_strcmp0 (profile->distance_unit, "px") == 0)
    g_snprintf (buffer, size, "%.1f", distance);
  else
    es_format_significant (buffer, size, distance, 5);
}

char *
_es_profile_length_text (const EsProfile *profile)
{
  char length[32];

  format_distance (length, sizeof length, profile, profile->n > 0 ? profile->distance[profile->n - 1] : 0);
  /* TRANSLATORS: the line's length, its unit (px, µm…) and its samples */
  return g_strdup_printf (_ ("%s %s · %zu samples"), length, profile->distance_unit, profile->n);
}

static void
draw_text (cairo_t *cr, GtkWidget *widget, const char *text, double x, double y, gboolean right)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, text);
  int width, height;

  pango_layout_get_pixel_size (layout, &width, &height);
  cairo_move_to (cr, right ? x - width : x, y);
  pango_cairo_show_layout (cr, layout);
  g_object_unref (layout);
}

static void
draw_plot (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  GtkWidget *widget = GTK_WIDGET (area);
  PlotData *plot = plot_data (widget);
  EsTools *tools = plot->tools;
  const EsProfile *profile = &tools->profile;
  double left = LABEL_WIDTH (width), right = width - 8, strip;
  double total = profile->n > 0 ? profile->distance[profile->n - 1] : 0;
  GdkRGBA fg, accent = { 0.21, 0.52, 0.89, 1 };
  char text[128];

  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  if (profile->n == 0)
    {
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.55);
      draw_text (cr, widget, _ ("Drag on the image to draw a line (L); Esc clears it"), 0, 4, FALSE);
      return;
    }
  strip = (height - 18.0) / profile->n_channels;
  for (int c = 0; c < profile->n_channels; c++)
    {
      const EsChannel *channel = &tools->channels.channels[c];
      const double *values = profile->values + (size_t) c * profile->n;
      double lo = INFINITY, hi = -INFINITY, top = c * strip, y_scale;
      size_t nan = 0;
      gboolean drawing = FALSE;

      /* NaN (no value: a float TIFF's NaN, a masked-out entropy pixel) is
       * skipped, as NumPy's nanmin and nanmax skip it, and counted. */
      for (size_t i = 0; i < profile->n; i++)
        if (isnan (values[i]))
          nan++;
        else
          {
            lo = MIN (lo, values[i]);
            hi = MAX (hi, values[i]);
          }
      y_scale = hi > lo ? (strip - 6) / (hi - lo) : 0;

      /* The strip's name and extent, left of it. */
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.85);
      draw_text (cr, widget, channel->name, 0, top + 1, FALSE);
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.5);
      format_value (text, sizeof text, lo, channel);
      g_strlcat (text, " … ", sizeof text);
      format_value (text + strlen (text), sizeof text - strlen (text), hi, channel);
      if (nan > 0)
        {
          g_autofree char *skipped = _es_nan_skipped_text (nan);

          g_strlcat (text, " · ", sizeof text);
          g_strlcat (text, skipped, sizeof text);
        }
      if (strip >= 30)
        draw_text (cr, widget, text, 0, top + strip / 2, FALSE);

      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.07);
      cairo_rectangle (cr, left, top + 1, right - left, strip - 2);
      cairo_fill (cr);

      gdk_cairo_set_source_rgba (cr, &accent);
      cairo_set_line_width (cr, 1.25);
      for (size_t i = 0; i < profile->n; i++)
        {
          double x = left + (total > 0 ? profile->distance[i] / total : 0.5) * (right - left);
          double y = top + strip - 3 - (values[i] - lo) * y_scale;

          /* The line breaks where there is no value. */
          if (isnan (values[i]))
            drawing = FALSE;
          else if (!drawing)
            {
              cairo_move_to (cr, x, y);
              /* A lone value between gaps still shows as a dot. */
              cairo_rel_line_to (cr, 1, 0);
              cairo_rel_move_to (cr, -1, 0);
              drawing = TRUE;
            }
          else
            cairo_line_to (cr, x, y);
        }
      cairo_stroke (cr);

      if (plot->hover_index >= 0 && (size_t) plot->hover_index < profile->n)
        {
          format_value (text, sizeof text, values[plot->hover_index], channel);
          cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.95);
          draw_text (cr, widget, text, right - 2, top + 1, TRUE);
        }
    }

  /* The shared axis: distance along the line, in pixels or the image's unit. */
  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.55);
  draw_text (cr, widget, "0", left, height - 17, FALSE);
  /* The pointer's place replaces the line's length while the plot is hovered. */
  if (plot->hover_index < 0)
    {
      g_autofree char *length = _es_profile_length_text (profile);

      draw_text (cr, widget, length, right, height - 17, TRUE);
    }
  if (plot->hover_index >= 0 && (size_t) plot->hover_index < profile->n)
    {
      const EsPixel *p = &profile->pixels[plot->hover_index];
      double x = left + (total > 0 ? profile->distance[plot->hover_index] / total : 0.5) * (right - left);

      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      cairo_set_line_width (cr, 1);
      cairo_move_to (cr, round (x) + 0.5, 0);
      cairo_line_to (cr, round (x) + 0.5, height - 18);
      cairo_stroke (cr);
      char at[32], length[32];

      format_distance (at, sizeof at, profile, profile->distance[plot->hover_index]);
      format_distance (length, sizeof length, profile, total);
      g_snprintf (text, sizeof text, _ ("x %d  y %d  · %s of %s %s"), p->x, p->y, at, length, profile->distance_unit);
      draw_text (cr, widget, text, right, height - 17, TRUE);
    }
}

static void
on_plot_motion (GtkEventControllerMotion *controller, double x, double y, GtkWidget *widget)
{
  PlotData *plot = plot_data (widget);
  const EsProfile *profile = &plot->tools->profile;
  double left = LABEL_WIDTH (gtk_widget_get_width (widget)), right = gtk_widget_get_width (widget) - 8;
  double total = profile->n > 0 ? profile->distance[profile->n - 1] : 0, at;
  int best = -1;

  if (profile->n > 0 && x >= left - 4 && x <= right + 4)
    {
      at = CLAMP ((x - left) / MAX (right - left, 1), 0, 1) * total;
      best = 0;
      for (size_t i = 1; i < profile->n; i++)
        if (fabs (profile->distance[i] - at) < fabs (profile->distance[best] - at))
          best = (int) i;
    }
  if (best != plot->hover_index)
    {
      plot->hover_index = best;
      gtk_widget_queue_draw (widget);
      gtk_widget_queue_draw (GTK_WIDGET (plot->tools->canvas));
    }
}

static void
on_plot_leave (GtkEventControllerMotion *controller, GtkWidget *widget)
{
  on_plot_motion (controller, -100, 0, widget);
}

int
_es_profile_plot_height (int channels)
{
  return channels * STRIP_MIN_HEIGHT + 18;
}

GtkWidget *
_es_profile_plot_new (EsTools *tools)
{
  GtkWidget *area = gtk_drawing_area_new ();
  GtkEventController *motion = gtk_event_controller_motion_new ();
  PlotData *plot = g_new0 (PlotData, 1);

  plot->tools = tools;
  plot->hover_index = -1;
  g_object_set_data_full (G_OBJECT (area), "es-plot", plot, g_free);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), draw_plot, NULL, NULL);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (area), _es_profile_plot_height (3));
  gtk_widget_set_hexpand (area, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (area), GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Values along the line"),
                                  -1);
  g_signal_connect (motion, "motion", G_CALLBACK (on_plot_motion), area);
  g_signal_connect (motion, "leave", G_CALLBACK (on_plot_leave), area);
  gtk_widget_add_controller (area, motion);
  return area;
}

void
_es_profile_plot_update (GtkWidget *plot)
{
  PlotData *data = plot_data (plot);
  int n = MAX (data->tools->profile.n_channels, 3);

  g_autofree char *length = data->tools->profile.n > 0 ? _es_profile_length_text (&data->tools->profile) : NULL;

  if ((size_t) data->hover_index >= data->tools->profile.n)
    data->hover_index = -1;
  /* The line's length for screen readers, which cannot read the plot. */
  if (length != NULL)
    gtk_accessible_update_property (GTK_ACCESSIBLE (plot), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, length, -1);
  else
    gtk_accessible_reset_property (GTK_ACCESSIBLE (plot), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (plot), _es_profile_plot_height (n));
  gtk_widget_queue_draw (plot);
}

void
_es_profile_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry)
{
  PlotData *plot = plot_data (self->profile_plot);
  double points[4];

  if (!self->has_line)
    return;
  _es_tools_to_pane (geometry, self->line[0] + 0.5, self->line[1] + 0.5, &points[0], &points[1]);
  _es_tools_to_pane (geometry, self->line[2] + 0.5, self->line[3] + 0.5, &points[2], &points[3]);
  _es_tools_keep_clear (self, points, 2);
  _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height), points, 2, FALSE,
                         3.5);
  /* The plot's pointer, on the line. */
  if (plot->hover_index >= 0 && (size_t) plot->hover_index < self->profile.n)
    {
      const EsPixel *p = &self->profile.pixels[plot->hover_index];
      double at[2];

      _es_tools_to_pane (geometry, p->x + 0.5, p->y + 0.5, &at[0], &at[1]);
      _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height), at, 1, FALSE, 5);
    }
}
