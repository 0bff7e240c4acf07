/* SPDX-License-Identifier: MIT */
/* The pixel inspector: the entropy window under the pointer as the job's definition counts it, its
 * bins cell by cell, and the count of each bin with its share of H = −Σ p ln p, which is why the
 * entropy there has its value (app/es-inspect.c does the counting). */
#include "es-tools-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

/* Beyond this many rows the table says how many more bins there are: a label
 * of 65 536 lines would take seconds to lay out on every pointer move. */
#define TABLE_ROWS_MAX 1024
/* The smallest cell the grid draws; a larger window is summed up in words. */
#define CELL_MIN 3
/* The cells' least height: a 5 × 5 window at the 14-pixel cells that show their bins. */
#define CELLS_MIN_HEIGHT 70

typedef struct {
  EsWindowCounts counts;
  gboolean valid;
  GString *text;
} InspectorData;

static InspectorData *
inspector_data (EsTools *self)
{
  return g_object_get_data (G_OBJECT (self->inspector_cells), "es-inspector");
}

/* The counts are borrowed: they hold until the inspector's next update. */
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
colormap_rgb (uint32_t bin, uint32_t bins, EsColormap map, gboolean reversed, double rgb[3])
{
  const uint8_t (*table)[3] = es_colormap_table (map < ES_N_COLORMAPS ? map : ES_COLORMAP_GRAY);
  int k = bins > 1 ? (int) (((uint64_t) bin * 255 + (bins - 1) / 2) / (bins - 1)) : 0;

  if (reversed)
    k = 255 - k;
  for (int i = 0; i < 3; i++)
    rgb[i] = table[k][i] / 255.0;
}

static void
draw_centred_text (GtkWidget *widget, cairo_t *cr, const char *text, double x, double y, double width, double height)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, text);
  int tw, th;

  pango_layout_get_pixel_size (layout, &tw, &th);
  if (tw > width - 2) /* a smaller font before giving up */
    {
      PangoAttrList *small = pango_attr_list_new ();

      pango_attr_list_insert (small, pango_attr_scale_new (PANGO_SCALE_SMALL));
      pango_layout_set_attributes (layout, small);
      pango_attr_list_unref (small);
      pango_layout_get_pixel_size (layout, &tw, &th);
    }
  if (tw <= width - 2)
    {
      cairo_move_to (cr, x + (width - tw) / 2, y + (height - th) / 2);
      pango_cairo_show_layout (cr, layout);
    }
  g_object_unref (layout);
}

/* One cell: counted cells in their bin's colour with the bin written in when
 * there is room; border cells (counted, from outside the image) the same,
 * dimmed; masked cells crossed out; clipped cells a faint square. */
static void
draw_cell (GtkWidget *area, cairo_t *cr, EsWindowCell cell, uint32_t bins, const EsDisplay *display, const GdkRGBA *fg,
           double x, double y, double cell_size)
{
  double gap = cell_size > 6 ? 1 : 0, rgb[3];
  char text[12];

  if (cell.state == ES_CELL_NONE)
    return;
  if (cell.state == ES_CELL_OUTSIDE)
    {
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.08);
      cairo_rectangle (cr, x + 1, y + 1, cell_size - 2, cell_size - 2);
      cairo_fill (cr);
      return;
    }
  colormap_rgb (cell.bin, bins, display->colormap, display->reversed, rgb);
  cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2],
                         cell.state == ES_CELL_COUNTED  ? 1.0
                         : cell.state == ES_CELL_BORDER ? 0.55
                                                        : 0.2);
  cairo_rectangle (cr, x, y, cell_size - gap, cell_size - gap);
  cairo_fill (cr);
  if (cell.state == ES_CELL_MASKED)
    {
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.7);
      cairo_set_line_width (cr, 1);
      cairo_move_to (cr, x + 1, y + 1);
      cairo_line_to (cr, x + cell_size - gap - 1, y + cell_size - gap - 1);
      cairo_move_to (cr, x + cell_size - gap - 1, y + 1);
      cairo_line_to (cr, x + 1, y + cell_size - gap - 1);
      cairo_stroke (cr);
      return;
    }
  if (cell_size < 14)
    return;
  g_snprintf (text, sizeof text, "%u", cell.bin);
  /* Dark text on light cells, light on dark. */
  if (cell.state == ES_CELL_COUNTED && 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] > 0.5)
    cairo_set_source_rgb (cr, 0, 0, 0);
  else
    cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 1);
  draw_centred_text (area, cr, text, x, y, cell_size - gap, cell_size - gap);
}

/* The window's cells, as the kernel counts them; the pixel outlined. A 3-D
 * window's planes are tiles, row by row from its first plane (dz = −d) to
 * its last, half a tile apart. A window too large for a cell of CELL_MIN
 * pixels is named by its size and n. */
static void
draw_cells (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer user_data)
{
  EsTools *self = user_data;
  InspectorData *data = inspector_data (self);
  const EsWindowCounts *counts = &data->counts;
  int columns = 2 * counts->half_width + 1, rows = 2 * counts->half_height + 1;
  int planes = 2 * counts->half_depth + 1;
  int across = (int) ceil (sqrt ((double) planes)), down = (planes + across - 1) / across;
  double gap = planes > 1 ? 0.5 : 0; /* between tiles, in cells */
  EsDisplay display;
  double cell;
  GdkRGBA fg;

  if (!data->valid)
    return;
  es_tools_host_get_display (self->host, &display);
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (area)), &fg);
  cell = floor (MIN (width / (across * (columns + gap)), height / (down * (rows + gap))));
  if (cell < CELL_MIN)
    {
      g_autofree char *text = planes > 1
                                ? g_strdup_printf (_ ("window %d × %d × %d\nn = %u"), planes, rows, columns, counts->n)
                                : g_strdup_printf (_ ("window %d × %d\nn = %u"), rows, columns, counts->n);

      gdk_cairo_set_source_rgba (cr, &fg);
      draw_centred_text (GTK_WIDGET (area), cr, text, 0, 0, width, height);
      return;
    }
  for (int p = 0; p < planes; p++)
    {
      double ox = (p % across) * (columns + gap) * cell, oy = (p / across) * (rows + gap) * cell;
      int dz = p - counts->half_depth;

      for (int j = 0; j < rows; j++)
        for (int i = 0; i < columns; i++)
          draw_cell (GTK_WIDGET (area), cr,
                     es_window_counts_cell_3d (counts, i - counts->half_width, j - counts->half_height, dz),
                     counts->bins, &display, &fg, ox + i * cell, oy + j * cell, cell);
      if (dz == 0)
        {
          cairo_set_source_rgb (cr, 1, 0.85, 0.2);
          cairo_set_line_width (cr, 2);
          cairo_rectangle (cr, ox + counts->half_width * cell, oy + counts->half_height * cell, cell - 1, cell - 1);
          cairo_stroke (cr);
        }
    }
}

/* The table: each non-empty bin, the samples that fall in it (the values
 * they stand for, for a float or signed TIFF), its count, p and its share
 * −p ln p of H. */
static void
append_table (GString *text, const EsWindowCounts *counts, const EsImageMeta *meta)
{
  int decimals = es_image_meta_value_decimals (meta);
  gboolean values = meta->stored != ES_STORED_UNSIGNED;

  g_string_append_printf (text, "%5s   %-*s  %6s   %7s   %s\n", "bin", values ? 2 * decimals + 10 : 13,
                          values ? "values" : "samples", "count", "p = c/n", "−p ln p");
  for (size_t i = 0; i < counts->n_used && i < TABLE_ROWS_MAX; i++)
    {
      const EsBinCount *used = &counts->used[i];
      double p = (double) used->count / counts->n;
      char samples[64];

      if (values && used->lo == used->hi)
        g_snprintf (samples, sizeof samples, "%.*f", decimals, es_image_meta_value (meta, used->lo));
      else if (values)
        g_snprintf (samples, sizeof samples, "%.*f..%.*f", decimals, es_image_meta_value (meta, used->lo), decimals,
                    es_image_meta_value (meta, used->hi));
      else if (used->lo == used->hi)
        g_snprintf (samples, sizeof samples, "%u", used->lo);
      else
        g_snprintf (samples, sizeof samples, "%u..%u", used->lo, used->hi);
      g_string_append_printf (text, "%5u   %-*s  %6u   %7.4f   %7.4f\n", used->bin, values ? 2 * decimals + 10 : 13,
                              samples, used->count, p, -p * log (p));
    }
  if (counts->n_used > TABLE_ROWS_MAX)
    g_string_append_printf (text, _ ("… and %zu more bins\n"), counts->n_used - TABLE_ROWS_MAX);
  g_string_truncate (text, text->len - 1);
}

/* The sum, in the job's units: nats, bits as the display says, or
 * normalized with its divisor; "no data" where the kernel writes none. */
static void
append_sum (GString *text, const EsWindowCounts *counts, const EsValueInfo *info, gboolean nan)
{
  /* A float TIFF's NaN pixels are masked out, as DESIGN.md §1 defines. */
  if (counts->masked && nan)
    g_string_append_printf (text, _ ("No data: the pixel is NaN  ·  n = %u"), counts->n);
  else if (counts->masked)
    g_string_append_printf (text, _ ("No data: the pixel is masked out  ·  n = %u"), counts->n);
  else if (counts->n == 0)
    g_string_append (text, _ ("No data: the window counts no pixel  ·  n = 0"));
  else if (counts->normalized)
    g_string_append_printf (text,
                            "H = −Σ p ln p = %.4f nats;  H / ln(min(B, n)) = H / ln %u = %.4f "
                            "normalized  ·  n = %u",
                            counts->entropy, MIN (counts->bins, counts->n), counts->value, counts->n);
  else if (info->unit_scale > 0 && info->unit_scale != 1)
    g_string_append_printf (text, "H = −Σ p log₂ p = %.4f %s  (%.4f nats)  ·  n = %u", counts->value * info->unit_scale,
                            info->units, counts->value, counts->n);
  else
    g_string_append_printf (text, "H = −Σ p ln p = %.4f nats  ·  n = %u", counts->value, counts->n);
}

void
_es_inspector_update (EsTools *self)
{
  InspectorData *data = inspector_data (self);
  EsSource *source = es_tools_host_get_source (self->host);
  EsLayer *entropy = es_tools_host_get_layer (self->host, ES_VIEW_ENTROPY);
  EsError error = { 0 };
  EsDisplay display;
  EsValueInfo info;
  guint32 sample;
  EsJob job;
  int x = self->hover_x, y = self->hover_y;

  data->valid = FALSE;
  es_window_counts_clear (&data->counts);
  g_string_truncate (data->text, 0);
  es_tools_host_get_readout_job (self->host, &job);
  /* A plane of a volume counts in the volume: a 3-D window reaches the planes around it. */
  if (source && x >= 0 && y >= 0 && x < source->image.width && y < source->image.height)
    data->valid = source->volume.source ? es_window_counts_voxel (&job, &((EsSource *) source->volume.source)->image, x,
                                                                  y, source->volume.z, &data->counts, &error)
                                        : es_window_counts (&job, &source->image, x, y, &data->counts, &error);
  if (!data->valid)
    {
      gtk_label_set_label (GTK_LABEL (self->inspector_counts),
                           error.code != ES_OK
                             ? error.message
                             : _ ("Point at the image: the entropy window there, and the count of each "
                                  "bin in it (I; a click pins the pixel)"));
      gtk_label_set_label (GTK_LABEL (self->inspector_caption), "");
      gtk_widget_queue_draw (self->inspector_cells);
      return;
    }

  append_table (data->text, &data->counts, &source->image.meta);
  gtk_label_set_label (GTK_LABEL (self->inspector_counts), data->text->str);

  /* The sum, always in sight above the table (which may scroll). */
  es_tools_host_get_display (self->host, &display);
  info = es_value_info_for (&job, display.units);
  g_string_truncate (data->text, 0);
  sample = (guint32) es_image_sample (&source->image, x, y);
  append_sum (data->text, &data->counts, &info, es_image_meta_is_nan (&source->image.meta, sample));
  if (entropy && es_layer_width (entropy) == source->image.width)
    {
      double value = es_layer_value (entropy, x, y);

      es_layer_display_info (entropy, &display, &info);
      if (isnan (value))
        g_string_append (data->text, _ ("  ·  Entropy view: no data"));
      else
        g_string_append_printf (data->text, _ ("  ·  Entropy view %.4f %s"),
                                value * (info.unit_scale > 0 ? info.unit_scale : 1), info.units);
    }
  if (es_image_meta_is_nan (&source->image.meta, sample))
    g_string_append (data->text, _ ("  ·  value NaN"));
  else if (source->image.meta.stored != ES_STORED_UNSIGNED)
    g_string_append_printf (data->text, _ ("  ·  value %.*f"), es_image_meta_value_decimals (&source->image.meta),
                            es_image_meta_value (&source->image.meta, sample));
  if (source->volume.source)
    g_string_append_printf (data->text, "  ·  x %d  y %d  z %d  ·  %s", x, y, source->volume.z, info.definition);
  else
    g_string_append_printf (data->text, "  ·  x %d  y %d  ·  %s", x, y, info.definition);
  gtk_label_set_label (GTK_LABEL (self->inspector_caption), data->text->str);
  gtk_widget_queue_draw (self->inspector_cells);
}

static void
inspector_data_free (gpointer pointer)
{
  InspectorData *data = pointer;

  es_window_counts_clear (&data->counts);
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
  /* The cells scale to the panel's height (draw_cells), so that a short
   * window shows the whole window of cells, not a scrolled part of it. */
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (self->inspector_cells), 160);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (self->inspector_cells), CELLS_MIN_HEIGHT);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->inspector_cells), draw_cells, self, NULL);
  gtk_widget_set_vexpand (self->inspector_cells, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->inspector_cells), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  "The bins of the entropy window", -1);
  gtk_box_append (GTK_BOX (row), self->inspector_cells);

  self->inspector_counts = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->inspector_counts), 0);
  gtk_label_set_yalign (GTK_LABEL (self->inspector_counts), 0);
  gtk_label_set_selectable (GTK_LABEL (self->inspector_counts), TRUE);
  gtk_label_set_wrap (GTK_LABEL (self->inspector_counts), TRUE);
  gtk_widget_add_css_class (self->inspector_counts, "monospace");
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), self->inspector_counts);
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
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
  const EsWindowCounts *counts = &data->counts;
  double points[8], centre[8];

  if (!data->valid)
    return;
  /* The window's bounding box, unclipped: border modes count beyond the image. */
  _es_tools_to_pane (geometry, counts->x - counts->half_width, counts->y - counts->half_height, &points[0], &points[1]);
  _es_tools_to_pane (geometry, counts->x + counts->half_width + 1, counts->y + counts->half_height + 1, &points[4],
                     &points[5]);
  points[2] = points[4], points[3] = points[1], points[6] = points[0], points[7] = points[5];
  _es_tools_keep_clear (self, points, 4);
  _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height), points, 4, TRUE, 0);
  if (geometry->zoom >= 4)
    {
      _es_tools_to_pane (geometry, counts->x, counts->y, &centre[0], &centre[1]);
      _es_tools_to_pane (geometry, counts->x + 1, counts->y + 1, &centre[4], &centre[5]);
      centre[2] = centre[4], centre[3] = centre[1], centre[6] = centre[0], centre[7] = centre[5];
      _es_tools_stroke_path (snapshot, &GRAPHENE_RECT_INIT (0, 0, geometry->width, geometry->height), centre, 4, TRUE,
                             0);
    }
}
