/* SPDX-License-Identifier: MIT */
/* ROI statistics: the rectangle on every pane, and n, mean, standard deviation, min and max of every
 * channel inside it, with a histogram of the active view's values there. */
#include "es-tools-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

#include "es-histogram.h"

#define N_COLUMNS 6

static const char *const column_titles[N_COLUMNS] = { "", "n", "mean", "std dev", "min", "max" };

static void
set_cell (EsTools *self, int column, int row, const char *text)
{
  GtkGrid *grid = GTK_GRID (self->roi_grid);
  GtkWidget *label = gtk_grid_get_child_at (grid, column, row);

  if (label == NULL)
    {
      label = gtk_label_new (NULL);
      gtk_label_set_xalign (GTK_LABEL (label), column == 0 ? 0 : 1);
      gtk_label_set_selectable (GTK_LABEL (label), row > 0);
      gtk_widget_set_focusable (label, FALSE);
      gtk_widget_add_css_class (label, row == 0 ? "caption-heading" : "numeric");
      if (column > 0)
        gtk_widget_set_hexpand (label, TRUE);
      gtk_grid_attach (grid, label, column, row, 1, 1);
    }
  gtk_label_set_label (GTK_LABEL (label), text);
}

const char *
es_tools_get_roi_cell (EsTools *self, int row, int column)
{
  GtkWidget *label = gtk_grid_get_child_at (GTK_GRID (self->roi_grid), column, row);

  return label && gtk_widget_get_visible (label) ? gtk_label_get_label (GTK_LABEL (label)) : NULL;
}

static void
format_number (char *buffer, size_t size, double value, const EsChannel *channel, gboolean exact)
{
  const EsImageMeta *meta = &channel->image->meta;

  /* Integer samples keep their digits; means and deviations get decimals;
   * a float TIFF's values get those that tell two samples apart. */
  if (channel->levels == 0 && meta->stored == ES_STORED_FLOAT)
    g_snprintf (buffer, size, "%.*f", MAX (es_image_meta_value_decimals (meta), exact ? 0 : 4), value);
  else if (channel->image->format != ES_FORMAT_F32 && exact)
    g_snprintf (buffer, size, "%.0f", value);
  else
    g_snprintf (buffer, size, "%.4f", value);
}

/* The channel that shows the active view's values. */
static int
active_channel (EsTools *self)
{
  EsView active = es_tools_host_get_active_view (self->host);

  for (int c = 0; c < self->channels.n; c++)
    if (self->channels.views[c] == active && active != ES_VIEW_ORIGINAL)
      return c;
  return 0;
}

void
_es_roi_update (EsTools *self)
{
  EsToolsChannels *channels = &self->channels;
  EsSource *source = es_tools_host_get_source (self->host);
  GtkWidget *child;
  EsDisplay display;
  int c;

  if (!self->has_rect || source == NULL || channels->n == 0)
    {
      for (child = gtk_widget_get_first_child (self->roi_grid); child; child = gtk_widget_get_next_sibling (child))
        gtk_widget_set_visible (child, FALSE);
      gtk_widget_set_visible (self->roi_histogram, FALSE);
      gtk_label_set_label (GTK_LABEL (self->roi_caption),
                           _ ("Drag on the image to draw a rectangle (R); Esc clears it"));
      return;
    }
  self->roi = es_rect_from_corners (self->rect_corners[0], self->rect_corners[1], self->rect_corners[2],
                                    self->rect_corners[3]);
  es_rect_clip (&self->roi, source->image.width, source->image.height);
  for (child = gtk_widget_get_first_child (self->roi_grid); child; child = gtk_widget_get_next_sibling (child))
    gtk_widget_set_visible (child, FALSE);
  for (int column = 0; column < N_COLUMNS; column++)
    set_cell (self, column, 0, column_titles[column]);
  for (c = 0; c < channels->n; c++)
    {
      EsStats *stats = &self->stats[c];
      char text[64];

      es_roi_stats (&channels->channels[c], self->roi, stats);
      set_cell (self, 0, c + 1, channels->names[c]);
      g_snprintf (text, sizeof text, "%" G_GUINT64_FORMAT, stats->n);
      if (stats->nan > 0)
        {
          g_autofree char *skipped = _es_nan_skipped_text (stats->nan);

          g_strlcat (text, " · ", sizeof text);
          g_strlcat (text, skipped, sizeof text);
        }
      set_cell (self, 1, c + 1, text);
      format_number (text, sizeof text, stats->mean, &channels->channels[c], FALSE);
      set_cell (self, 2, c + 1, text);
      format_number (text, sizeof text, stats->stddev, &channels->channels[c], FALSE);
      set_cell (self, 3, c + 1, text);
      format_number (text, sizeof text, stats->min, &channels->channels[c], TRUE);
      set_cell (self, 4, c + 1, text);
      format_number (text, sizeof text, stats->max, &channels->channels[c], TRUE);
      set_cell (self, 5, c + 1, text);
    }
  for (int row = 0; row <= c; row++)
    for (int column = 0; column < N_COLUMNS; column++)
      gtk_widget_set_visible (gtk_grid_get_child_at (GTK_GRID (self->roi_grid), column, row), TRUE);

  /* The histogram of the active view inside the rectangle, over the
   * view's whole absolute range, in its colours. */
  {
    int a = active_channel (self);
    EsLayer *layer = channels->layers[a];
    double scale = channels->channels[a].scale != 0 ? channels->channels[a].scale : 1.0;
    double lo = layer->result.scale.lo * scale, hi = layer->result.scale.hi * scale;
    g_autofree char *caption = NULL, *size = NULL;

    if (channels->channels[a].levels > 0)
      {
        lo = 0;
        hi = channels->channels[a].levels;
      }
    else if (layer->view == ES_VIEW_ORIGINAL)
      {
        /* Every sample the depth holds, as the values they stand for
         * (sample 0 is no value where it stands for NaN). */
        lo = channels->channels[a].offset + (source->image.meta.nan_samples > 0 ? scale : 0);
        hi = channels->channels[a].offset + ((1 << source->image.depth) - 1) * scale;
      }
    self->roi_lo = lo;
    self->roi_hi = hi;
    es_roi_histogram (&channels->channels[a], self->roi, lo, hi, self->roi_bins, G_N_ELEMENTS (self->roi_bins));
    es_tools_host_get_display (self->host, &display);
    es_histogram_set_counts (ES_HISTOGRAM (self->roi_histogram), self->roi_bins, G_N_ELEMENTS (self->roi_bins),
                             channels->heatmap[a] ? display.colormap : ES_N_COLORMAPS, display.reversed);
    gtk_widget_set_visible (self->roi_histogram, TRUE);
    size = _es_tools_describe_rect (&source->image.meta, self->roi.width, self->roi.height);
    caption = g_strdup_printf (_ ("x %d  y %d  ·  %s  ·  histogram of %s, %g … %g"), self->roi.x, self->roi.y, size,
                               channels->names[a], lo, hi);
    gtk_label_set_label (GTK_LABEL (self->roi_caption), caption);
  }
}

GtkWidget *
_es_roi_page_new (EsTools *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 18);

  self->roi_grid = gtk_grid_new ();
  gtk_grid_set_column_spacing (GTK_GRID (self->roi_grid), 18);
  gtk_widget_set_hexpand (self->roi_grid, TRUE);
  gtk_widget_set_valign (self->roi_grid, GTK_ALIGN_START);
  gtk_box_append (GTK_BOX (row), self->roi_grid);
  self->roi_histogram = g_object_new (ES_TYPE_HISTOGRAM, NULL);
  /* As tall as the statistics beside it, so that a short window's panel
   * shows the histogram and the caption whole. */
  gtk_widget_set_size_request (self->roi_histogram, 160, -1);
  gtk_widget_add_css_class (self->roi_histogram, "beside-text");
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->roi_histogram), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  "Histogram of the rectangle", -1);
  gtk_box_append (GTK_BOX (row), self->roi_histogram);
  gtk_box_append (GTK_BOX (box), row);
  self->roi_caption = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->roi_caption), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->roi_caption), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (self->roi_caption, "dim-label");
  gtk_box_append (GTK_BOX (box), self->roi_caption);
  return box;
}

void
_es_roi_draw (EsTools *self, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry)
{
  EsRect rect;
  double points[8];

  if (!self->has_rect)
    return;
  /* While dragging, the corners themselves (the clipped ROI follows on idle). */
  rect = es_rect_from_corners (self->rect_corners[0], self->rect_corners[1], self->rect_corners[2],
                               self->rect_corners[3]);
  _es_tools_to_pane (geometry, rect.x, rect.y, &points[0], &points[1]);
  _es_tools_to_pane (geometry, rect.x + rect.width, rect.y + rect.height, &points[4], &points[5]);
  points[2] = points[4];
  points[3] = points[1];
  points[6] = points[0];
  points[7] = points[5];
  _es_tools_keep_clear (self, points, 4);
  _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height), points, 4, TRUE, 0);
}
