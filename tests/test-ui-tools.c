/* SPDX-License-Identifier: MIT */
/* UI tests of the inspection tools (GTest, under Xvfb): a line and a rectangle drawn through the
 * tools' pointer API on the grid, their numbers shown and exported as CSV against the layers' own
 * values and a long double reference; the pixel inspector's counts; the grid readout; contrast
 * limits that recolour without a job; swipe; Escape. */
#include "test-ui-common.h"

#include "es-calibration.h"
#include "es-definitions.h"
#include "es-tools-private.h"

static EsTools *tools;

/* Widget coordinates of the centre of image pixel (ix, iy) in pane 0. */
static void
pixel_to_widget (int ix, int iy, double *x, double *y)
{
  EsCanvas *canvas = es_window_get_canvas (window);
  double ox, oy;
  int pane;

  g_assert_true (es_canvas_widget_to_image (canvas, 0, 0, &pane, &ox, &oy));
  g_assert_cmpint (pane, ==, 0);
  *x = (ix + 0.5 - ox) * es_canvas_get_zoom (canvas);
  *y = (iy + 0.5 - oy) * es_canvas_get_zoom (canvas);
}

static void
drag (int x0, int y0, int x1, int y1)
{
  double wx0, wy0, wx1, wy1;

  pixel_to_widget (x0, y0, &wx0, &wy0);
  pixel_to_widget (x1, y1, &wx1, &wy1);
  es_tools_press (tools, wx0, wy0);
  es_tools_motion (tools, (wx0 + wx1) / 2, (wy0 + wy1) / 2);
  es_tools_release (tools, wx1, wy1);
  wait_idle ();
}

/* What the window shows for a view at a pixel, in the display's units. */
static double
shown_value (EsView view, int x, int y)
{
  EsLayer *layer = es_window_get_layer (window, view);
  EsDisplay display;
  EsValueInfo info;

  g_assert_nonnull (layer);
  _es_window_get_display (window, &display);
  es_layer_display_info (layer, &display, &info);
  return es_layer_value (layer, x, y) * (info.unit_scale > 0 ? info.unit_scale : 1.0);
}

static double
level_of (guint32 gray)
{
  EsLayer *layer = es_window_get_layer (window, ES_VIEW_ENTROPY);

  return es_quantize_sample (gray, layer->job.levels, es_window_get_source (window)->image.depth);
}

/* The grid's operation views, as the tools' channels name them. */
static const EsView grid_ops[] = { ES_VIEW_ENTROPY, ES_VIEW_EQUALIZED, ES_VIEW_SHARPENED };

static void
open_grid (void)
{
  g_autofree char *path = test_image ("images", "camera.png");

  if (es_window_get_source (window) == NULL)
    open_path (path);
  set_view ("grid");
  g_settings_set_string (settings, "units", "bits");
  wait_idle ();
  tools = es_window_get_tools (window);
  g_assert_nonnull (tools);
}

/* Splits a CSV text into rows of fields (the tools write no quoted fields
 * for numbers; the header's names hold no commas). */
static char ***
split_csv (const char *text, int *n_rows)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  char ***rows = g_new0 (char **, g_strv_length (lines) + 1);
  int n = 0;

  for (int i = 0; lines[i]; i++)
    if (*lines[i])
      rows[n++] = g_strsplit (lines[i], ",", -1);
  *n_rows = n;
  return rows;
}

static void
free_csv (char ***rows)
{
  for (int i = 0; rows[i]; i++)
    g_strfreev (rows[i]);
  g_free (rows);
}

static void
test_profile (void)
{
  g_autofree char *path = NULL, *text = NULL;
  g_autoptr (GError) error = NULL;
  EsSource *source;
  EsPixel pixels[1024];
  char ***rows;
  size_t n;
  int n_rows;

  open_grid ();
  source = es_window_get_source (window);
  es_tools_set_tool (tools, ES_TOOL_LINE);
  drag (37, 401, 480, 90);
  g_assert_true (tools->has_line);
  g_assert_cmpint (tools->line[0], ==, 37);
  g_assert_cmpint (tools->line[1], ==, 401);
  g_assert_cmpint (tools->line[2], ==, 480);
  g_assert_cmpint (tools->line[3], ==, 90);

  /* Gray, level and the three results of the grid, on one axis. */
  n = es_line_pixels (37, 401, 480, 90, pixels);
  g_assert_cmpuint (tools->profile.n, ==, n);
  g_assert_cmpint (tools->profile.n_channels, ==, 5);
  g_assert_cmpstr (tools->channels.names[2], ==, "entropy (bits)");
  for (size_t i = 0; i < n; i++)
    {
      int x = pixels[i].x, y = pixels[i].y;
      guint32 gray = es_source_sample (source, x, y);

      g_assert_cmpfloat (tools->profile.values[i], ==, gray);
      g_assert_cmpfloat (tools->profile.values[n + i], ==, level_of (gray));
      for (int c = 0; c < 3; c++)
        g_assert_cmpfloat_with_epsilon (tools->profile.values[(2 + c) * n + i], shown_value (grid_ops[c], x, y), 1e-12);
    }

  /* The exported file, parsed back, against the layers themselves. */
  path = g_build_filename (tmpdir, "profile.csv", NULL);
  g_assert_true (es_tools_export_csv (tools, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  rows = split_csv (text, &n_rows);
  g_assert_cmpint (n_rows, ==, (int) n + 1);
  g_assert_cmpstr (rows[0][4], ==, "gray");
  g_assert_cmpstr (rows[0][5], ==, "level");
  g_assert_cmpstr (rows[0][6], ==, "entropy (bits)");
  g_assert_cmpstr (rows[0][7], ==, "equalized");
  g_assert_cmpstr (rows[0][8], ==, "sharpened");
  for (size_t i = 0; i < n; i++)
    {
      char **row = rows[i + 1];
      int x = atoi (row[1]), y = atoi (row[2]);

      g_assert_cmpint (x, ==, pixels[i].x);
      g_assert_cmpint (y, ==, pixels[i].y);
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (row[3], NULL), hypot (x - 37, y - 401), 1e-6);
      g_assert_cmpfloat (g_ascii_strtod (row[4], NULL), ==, es_source_sample (source, x, y));
      g_assert_cmpfloat (g_ascii_strtod (row[5], NULL), ==, level_of (es_source_sample (source, x, y)));
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (row[6], NULL), shown_value (ES_VIEW_ENTROPY, x, y), 1e-8);
      g_assert_cmpfloat (g_ascii_strtod (row[7], NULL), ==, shown_value (ES_VIEW_EQUALIZED, x, y));
      g_assert_cmpfloat (g_ascii_strtod (row[8], NULL), ==, shown_value (ES_VIEW_SHARPENED, x, y));
    }
  free_csv (rows);
  g_unlink (path);
}

static void
test_roi (void)
{
  g_autofree char *text = NULL;
  EsSource *source;
  EsRect rect = { 100, 140, 211, 97 };
  char ***rows;
  int n_rows;

  open_grid ();
  source = es_window_get_source (window);
  es_tools_set_tool (tools, ES_TOOL_RECT);
  /* Corners in either order, the second one beyond the image: clipped. */
  drag (310, 236, 100, 140);
  g_assert_cmpint (tools->roi.x, ==, rect.x);
  g_assert_cmpint (tools->roi.y, ==, rect.y);
  g_assert_cmpint (tools->roi.width, ==, rect.width);
  g_assert_cmpint (tools->roi.height, ==, rect.height);
  g_assert_cmpstr (es_tools_get_roi_cell (tools, 0, 2), ==, "mean");

  text = es_tools_get_csv (tools);
  g_assert_nonnull (text);
  rows = split_csv (text, &n_rows);
  g_assert_cmpint (n_rows, ==, 6);
  for (int c = 0; c < 5; c++)
    {
      long double sum = 0, squares = 0, mean;
      double min = INFINITY, max = -INFINITY, stddev;
      long long n = 0;
      char expected[64];

      /* The slow reference: every pixel of the rectangle, in long double. */
      for (int pass = 0; pass < 2; pass++)
        for (int y = rect.y; y < rect.y + rect.height; y++)
          for (int x = rect.x; x < rect.x + rect.width; x++)
            {
              guint32 gray = es_source_sample (source, x, y);
              double v = c == 0 ? gray : c == 1 ? level_of (gray) : shown_value (grid_ops[c - 2], x, y);

              if (pass == 0)
                {
                  sum += v;
                  n++;
                  min = MIN (min, v);
                  max = MAX (max, v);
                }
              else
                squares += (v - sum / n) * (v - sum / n);
            }
      mean = sum / n;
      stddev = (double) sqrtl (squares / (n - 1));

      g_assert_cmpuint (tools->stats[c].n, ==, (guint64) n);
      g_assert_cmpfloat_with_epsilon (tools->stats[c].mean, (double) mean, 1e-9);
      g_assert_cmpfloat_with_epsilon (tools->stats[c].stddev, stddev, 1e-9);
      g_assert_cmpfloat (tools->stats[c].min, ==, min);
      g_assert_cmpfloat (tools->stats[c].max, ==, max);

      /* What the panel shows. */
      g_assert_cmpstr (es_tools_get_roi_cell (tools, c + 1, 0), ==, tools->channels.names[c]);
      g_snprintf (expected, sizeof expected, "%lld", n);
      g_assert_cmpstr (es_tools_get_roi_cell (tools, c + 1, 1), ==, expected);
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (es_tools_get_roi_cell (tools, c + 1, 2), NULL), (double) mean,
                                      5.1e-5);
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (es_tools_get_roi_cell (tools, c + 1, 3), NULL), stddev, 5.1e-5);
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (es_tools_get_roi_cell (tools, c + 1, 5), NULL), max, 5.1e-5);

      /* What is copied and exported. */
      g_assert_cmpstr (rows[c + 1][0], ==, tools->channels.names[c]);
      g_assert_cmpint (atoi (rows[c + 1][3]), ==, rect.width);
      g_assert_cmpint (g_ascii_strtoll (rows[c + 1][5], NULL, 10), ==, n);
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (rows[c + 1][6], NULL), (double) mean,
                                      1e-8 * (1 + fabs ((double) mean)));
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (rows[c + 1][7], NULL), stddev, 1e-8 * (1 + stddev));
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (rows[c + 1][8], NULL), min, 1e-8 * (1 + fabs (min)));
    }
  free_csv (rows);

  /* The histogram counts every pixel of the rectangle. */
  {
    guint64 total = 0;

    for (guint i = 0; i < G_N_ELEMENTS (tools->roi_bins); i++)
      total += tools->roi_bins[i];
    g_assert_cmpuint (total, ==, (guint64) rect.width * rect.height);
  }
}

static guint drawn_panes;

static void
record_pane (EsCanvas *canvas, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry, gpointer data)
{
  drawn_panes |= 1u << geometry->pane;
}

/* The rectangle is drawn over every pane of the grid, at the same place. */
static void
test_roi_on_every_pane (void)
{
  EsCanvas *canvas;
  EsCanvasDrawFunc tools_draw;
  gpointer tools_data;
  GtkSnapshot *snapshot;
  GskRenderNode *node;

  open_grid ();
  canvas = es_window_get_canvas (window);
  es_tools_set_tool (tools, ES_TOOL_RECT);
  drag (20, 30, 200, 210);
  g_assert_true (tools->has_rect);
  tools_draw = canvas->draw_func;
  tools_data = canvas->draw_data;
  g_assert_nonnull (tools_draw);

  /* The canvas asks for the shapes of each of its four panes. */
  drawn_panes = 0;
  es_canvas_set_draw_func (canvas, record_pane, NULL);
  snapshot = gtk_snapshot_new ();
  GTK_WIDGET_GET_CLASS (canvas)->snapshot (GTK_WIDGET (canvas), snapshot);
  node = gtk_snapshot_free_to_node (snapshot);
  g_clear_pointer (&node, gsk_render_node_unref);
  g_assert_cmpuint (drawn_panes, ==, 0xf);
  es_canvas_set_draw_func (canvas, tools_draw, tools_data);
  es_tools_set_tool (tools, ES_TOOL_POINTER);
}

/* Row or column i of n folded back into the image, symmetric: d c b a | a b c d | d c b a. */
static int
fold_symmetric (int i, int n)
{
  while (i < 0 || i >= n)
    i = i < 0 ? -1 - i : 2 * n - 1 - i;
  return i;
}

/* The inspector under a disk with symmetric borders, at a corner, where the
 * square clipped window of the old counts differs: its cells counted
 * directly, its value the Entropy view's. */
static void
test_inspector (void)
{
  EsSource *source;
  EsLayer *entropy;
  EsWindowCounts counts;
  g_autofree char *expected = NULL;
  g_autofree guint32 *direct = g_new0 (guint32, ES_LEVELS_MAX);
  guint n = 0, shown = 0;
  int x = 1, y = 2, radius = 4;

  open_grid ();
  g_settings_set_string (settings, "units", "nats");
  g_settings_set_string (settings, "shape", "disk");
  g_settings_set_int (settings, "radius", radius);
  g_settings_set_string (settings, "border", "symmetric");
  wait_idle ();
  source = es_window_get_source (window);
  entropy = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_cmpint (entropy->job.definition.shape, ==, ES_SHAPE_DISK);
  g_assert_cmpint (entropy->job.definition.border, ==, ES_BORDER_SYMMETRIC);
  es_tools_set_tool (tools, ES_TOOL_INSPECT);
  drag (x, y, x, y); /* a click pins the pixel */
  g_assert_true (tools->inspect_pinned);
  g_assert_true (es_tools_get_window_counts (tools, &counts));

  for (int dy = -radius; dy <= radius; dy++)
    for (int dx = -radius; dx <= radius; dx++)
      if (dx * dx + dy * dy <= radius * radius)
        {
          int wx = fold_symmetric (x + dx, source->image.width);
          int wy = fold_symmetric (y + dy, source->image.height);

          direct[(int) level_of (es_source_sample (source, wx, wy))]++;
          n++;
        }
  g_assert_cmpuint (counts.n, ==, n);
  for (size_t i = 0; i < counts.n_used; i++)
    {
      g_assert_cmpuint (counts.used[i].count, ==, direct[counts.used[i].bin]);
      shown += counts.used[i].count;
    }
  g_assert_cmpuint (shown, ==, n);
  g_assert_cmpfloat_with_epsilon (counts.value, es_layer_value (entropy, x, y), 1e-5);
  expected = g_strdup_printf ("H = −Σ p ln p = %.4f nats  ·  n = %u", counts.value, n);
  g_assert_nonnull (strstr (es_tools_get_inspector_text (tools), expected));
  g_assert_nonnull (strstr (es_tools_get_inspector_text (tools), "disk r=4 · symmetric"));

  g_settings_set_string (settings, "shape", "square");
  g_settings_set_string (settings, "border", "clip");
  g_settings_set_string (settings, "units", "bits");
  wait_idle ();
}

/* The grid's readout: all four panes' values at the pointer. */
static void
test_grid_readout (void)
{
  EsCanvas *canvas;
  g_autofree char *entropy = NULL, *equalized = NULL, *sharpened = NULL;
  const char *label;
  int x = 250, y = 123;

  open_grid ();
  canvas = es_window_get_canvas (window);
  g_signal_emit_by_name (canvas, "hover", 3, x, y);
  wait_idle ();
  label = gtk_label_get_label (window->position_label);
  entropy = g_strdup_printf ("Entropy %.4f bits", shown_value (ES_VIEW_ENTROPY, x, y));
  equalized = g_strdup_printf ("Equalized %d", (int) shown_value (ES_VIEW_EQUALIZED, x, y));
  sharpened = g_strdup_printf ("Sharpened %d", (int) shown_value (ES_VIEW_SHARPENED, x, y));
  g_assert_nonnull (strstr (label, entropy));
  g_assert_nonnull (strstr (label, equalized));
  g_assert_nonnull (strstr (label, sharpened));
  g_assert_nonnull (strstr (label, "gray"));
}

/* Manual limits recolour the entropy pane and run no job. */
static void
test_contrast (void)
{
  EsView views[ES_CANVAS_MAX_PANES];
  guint64 generation;
  int pane = -1, n;

  open_grid ();
  g_settings_set_string (settings, "range", "absolute");
  wait_idle ();
  n = _es_window_get_views (window, views);
  for (int i = 0; i < n; i++)
    if (views[i] == ES_VIEW_ENTROPY)
      pane = i;
  g_assert_cmpint (pane, >=, 0);
  generation = window->generation;
  es_tools_set_contrast (tools, ES_VIEW_ENTROPY, TRUE, 1.25, 0.5);
  wait_idle ();
  assert_pane_range (pane, 0.5, 1.25);
  g_assert_cmpuint (window->generation, ==, generation);

  /* The colour PNG export takes them too: the same bytes as the pipeline's
   * export of the layer's result with those limits. */
  {
    g_autofree char *shown = g_build_filename (tmpdir, "shown.out", NULL);
    g_autofree char *expected = g_build_filename (tmpdir, "expected.out", NULL);
    EsLayer *layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
    EsError error = { 0 };
    EsDisplay display;
    EsResult result;

    g_assert_cmpint (es_window_get_active_view (window), ==, ES_VIEW_ENTROPY);
    export_shown (shown, ES_EXPORT_PNG, TRUE);
    _es_window_get_display (window, &display);
    es_layer_export_result (layer, &display, &result);
    result.scale.lo = 0.5;
    result.scale.hi = 1.25;
    g_assert_true (es_pipeline_export (expected, ES_EXPORT_PNG, &result, TRUE, &error));
    assert_same_files (shown, expected);
  }
  es_tools_set_contrast (tools, ES_VIEW_ENTROPY, FALSE, 0.5, 1.25);
  wait_idle ();
  {
    const EsJob *job = &es_window_get_layer (window, ES_VIEW_ENTROPY)->job;

    assert_pane_range (pane, 0, log (MIN (job->levels, job->window * job->window)));
  }
  g_assert_cmpuint (window->generation, ==, generation);
}

static void
test_swipe (void)
{
  EsCanvas *canvas;
  double width;

  open_grid ();
  canvas = es_window_get_canvas (window);
  es_tools_set_tool (tools, ES_TOOL_SWIPE);
  width = (gtk_widget_get_width (GTK_WIDGET (canvas)) - 4) / 2.0;
  es_tools_press (tools, 0.3 * width, 10);
  es_tools_release (tools, 0.3 * width, 10);
  g_assert_cmpfloat_with_epsilon (tools->swipe_split, 0.3, 1e-9);
  g_assert_cmpfloat_with_epsilon (gtk_adjustment_get_value (tools->swipe_adjustment), 30, 1e-6);
  /* The right-hand panes take the same fraction. */
  es_tools_press (tools, width + 4 + 0.75 * width, 10);
  es_tools_release (tools, width + 4 + 0.75 * width, 10);
  g_assert_cmpfloat_with_epsilon (tools->swipe_split, 0.75, 1e-9);
  g_assert_nonnull (_es_tools_get_layer (tools, ES_VIEW_ORIGINAL));
}

/* A line typed into the coordinates' spin buttons, without a pointer. */
static void
test_coordinates (void)
{
  static const int ends[4] = { 500, 3, 17, 260 };
  EsPixel pixels[1024];

  open_grid ();
  es_tools_set_tool (tools, ES_TOOL_LINE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "tools.clear", NULL));
  g_assert_false (tools->has_line);
  for (int i = 0; i < 4; i++)
    gtk_spin_button_set_value (GTK_SPIN_BUTTON (tools->shape_spins[i]), ends[i]);
  wait_idle ();
  g_assert_true (tools->has_line);
  g_assert_cmpmem (tools->line, sizeof tools->line, ends, sizeof ends);
  g_assert_cmpuint (tools->profile.n, ==, es_line_pixels (500, 3, 17, 260, pixels));
  for (size_t i = 0; i < tools->profile.n; i++)
    g_assert_cmpfloat (tools->profile.values[i], ==,
                       es_source_sample (es_window_get_source (window), pixels[i].x, pixels[i].y));
  /* Beyond the image, a value stops at its edge. */
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (tools->shape_spins[0]), 9999);
  wait_idle ();
  g_assert_cmpint (tools->line[0], ==, es_window_get_source (window)->image.width - 1);
  es_tools_set_tool (tools, ES_TOOL_POINTER);
}

/* Escape clears the shape, then leaves the tool, then lets Escape go on. */
static void
test_escape (void)
{
  open_grid ();
  es_tools_set_tool (tools, ES_TOOL_LINE);
  drag (10, 10, 50, 60);
  g_assert_true (tools->has_line);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "tools.clear", NULL));
  g_assert_false (tools->has_line);
  g_assert_null (es_tools_get_csv (tools));
  g_assert_cmpint (tools->tool, ==, ES_TOOL_LINE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "tools.clear", NULL));
  g_assert_cmpint (tools->tool, ==, ES_TOOL_POINTER);
  g_assert_false (g_action_group_get_action_enabled (G_ACTION_GROUP (tools->actions), "clear"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "tools.tool", "s", "rectangle"));
  g_assert_cmpint (tools->tool, ==, ES_TOOL_RECT);
  es_tools_set_tool (tools, ES_TOOL_POINTER);
}

/* The value in a fact list ("name", "value", …, NULL). */
static const char *
fact (GStrv facts, const char *name)
{
  for (int i = 0; facts[i] != NULL; i += 2)
    if (g_str_equal (facts[i], name))
      return facts[i + 1];
  return NULL;
}

/* A float TIFF of −1 … 2.5 with 0.5 µm pixels (our own TIFF writer): the
 * window shows its values, not their 16-bit samples, and lengths and areas
 * in µm. */
static void
test_values_and_units (void)
{
#ifdef ES_HAVE_TIFF
  g_autofree char *path = g_build_filename (tmpdir, "calibrated-floats.tif", NULL);
  g_autofree char *length = NULL, *csv = NULL;
  g_auto (GStrv) facts = NULL;
  EsValueInfo info = { .operation = "test", .units = "value", .unit_scale = 1 };
  EsImage values = { 0 };
  EsError error = { 0 };
  EsLayer *original;
  EsDisplay display;
  EsValueInfo shown;
  const char *label;
  int width = 64, height = 48;

  g_assert_true (es_image_alloc (&values, width, height, ES_FORMAT_F32, 0, &error));
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      ((float *) es_image_row (&values, y))[x] = (float) (-1.0 + 3.5 * (x + y) / (width + height - 2));
  es_image_meta_set_pixel_size (&info.pixel_size, 0.5, 0.5, 0, ES_LENGTH_UM);
  g_assert_true (es_save_tiff (path, &values, &info, &error));
  es_image_clear (&values);
  open_path (path);
  set_view ("original");
  wait_idle ();
  tools = es_window_get_tools (window);

  /* The readout: the value under the pointer, to the step between samples. */
  g_signal_emit_by_name (es_window_get_canvas (window), "hover", 0, width - 1, height - 1);
  wait_idle ();
  label = gtk_label_get_label (window->position_label);
  g_assert_nonnull (strstr (label, "value 2.50000"));
  g_assert_null (strstr (label, "gray"));

  /* The colorbar's scale: the samples' 0 … 65535 stand for −1 … 2.5. */
  original = es_window_get_layer (window, ES_VIEW_ORIGINAL);
  _es_window_get_display (window, &display);
  es_layer_display_info (original, &display, &shown);
  g_assert_cmpfloat_with_epsilon (shown.value_offset + original->result.scale.lo * shown.unit_scale, -1, 1e-12);
  g_assert_cmpfloat_with_epsilon (shown.value_offset + original->result.scale.hi * shown.unit_scale, 2.5, 1e-9);

  /* Statistics of the rectangle in values, its area in µm². */
  es_tools_set_tool (tools, ES_TOOL_RECT);
  drag (0, 0, 9, 3);
  g_assert_cmpstr (es_tools_get_roi_cell (tools, 1, 0), ==, "value");
  g_assert_cmpstr (es_tools_get_roi_cell (tools, 1, 4), ==, "-1.00000");
  g_assert_cmpfloat_with_epsilon (g_ascii_strtod (es_tools_get_roi_cell (tools, 1, 5), NULL),
                                  -1.0 + 3.5 * 12 / (width + height - 2), 3.5 / 65535);
  g_assert_nonnull (strstr (gtk_label_get_label (GTK_LABEL (tools->roi_caption)), "10 × 4 px = 5 × 2 µm, area 10 µm²"));
  csv = es_tools_get_csv (tools);
  g_assert_nonnull (strstr (csv, "area (µm²)"));
  g_clear_pointer (&csv, g_free);

  /* The profile's length and its CSV's distances in µm. */
  es_tools_set_tool (tools, ES_TOOL_LINE);
  drag (2, 1, 8, 9);
  length = _es_profile_length_text (&tools->profile);
  g_assert_cmpstr (length, ==, "5 µm · 9 samples");
  csv = es_tools_get_csv (tools);
  g_assert_true (g_str_has_prefix (csv, "index,x,y,distance (µm),value,level"));
  es_tools_set_tool (tools, ES_TOOL_POINTER);

  /* Image Information: the values and the pixel size. */
  facts = _es_window_source_facts (window);
  g_assert_cmpstr (fact (facts, "Values"), ==, "-1.00000 … 2.50000");
  g_assert_cmpstr (fact (facts, "Pixel size"), ==, "0.5 × 0.5 µm");
  g_unlink (path);
#else
  g_test_skip ("built without libtiff");
#endif
}

/* A float TIFF with NaN pixels (a diagonal, and the top-left 4 × 4 block):
 * the readout and the inspector say NaN, the canvas draws it in the no-data
 * colour that the colorbar names, the ROI counts what it skipped, entropy
 * has no value there, and Image Information counts the NaN. */
static void
test_nan_pixels (void)
{
#ifdef ES_HAVE_TIFF
  g_autofree char *path = g_build_filename (tmpdir, "nan-floats.tif", NULL);
  g_autofree char *nan_fact = NULL;
  g_auto (GStrv) facts = NULL;
  g_autoptr (GBytes) rgb = NULL;
  EsValueInfo info = { .operation = "test", .units = "value", .unit_scale = 1 };
  EsImage values = { 0 };
  EsError error = { 0 };
  EsLayer *original, *entropy;
  EsColorScale scale;
  EsDisplay display;
  const guint8 *pixels;
  gsize stride;
  int width = 40, height = 30, nan = 0;

  g_assert_true (es_image_alloc (&values, width, height, ES_FORMAT_F32, 0, &error));
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        gboolean is_nan = x == y || (x < 4 && y < 4);

        ((float *) es_image_row (&values, y))[x] = is_nan ? NAN : (float) (x - y) / 8.0f;
        nan += is_nan;
      }
  g_assert_true (es_save_tiff (path, &values, &info, &error));
  es_image_clear (&values);
  open_path (path);
  set_view ("original");
  tools = es_window_get_tools (window);

  g_signal_emit_by_name (es_window_get_canvas (window), "hover", 0, 10, 10);
  wait_idle ();
  g_assert_nonnull (strstr (gtk_label_get_label (window->position_label), "value NaN"));
  g_signal_emit_by_name (es_window_get_canvas (window), "hover", 0, 11, 10);
  wait_idle ();
  g_assert_nonnull (strstr (gtk_label_get_label (window->position_label), "value 0.1250"));

  original = es_window_get_layer (window, ES_VIEW_ORIGINAL);
  _es_window_get_display (window, &display);
  es_layer_display_scale (original, &display, &scale);
  rgb = es_layer_render_rgb (original, &scale, &stride);
  pixels = g_bytes_get_data (rgb, NULL);
  g_assert_cmpmem (pixels + 10 * stride + 10 * 3, 3, es_no_data_rgb, 3);
  g_assert_true (memcmp (pixels + 10 * stride + 11 * 3, es_no_data_rgb, 3) != 0);
  g_assert_cmpstr (es_colorbar_get_no_data (window->colorbar), ==, "NaN");

  /* A 10 × 10 rectangle from (0, 0): the 4 × 4 block and 6 more of the diagonal. */
  es_tools_set_tool (tools, ES_TOOL_RECT);
  drag (0, 0, 9, 9);
  g_assert_cmpstr (es_tools_get_roi_cell (tools, 1, 1), ==, "78 · 22 NaN skipped");
  g_assert_cmpuint (tools->stats[0].nan, ==, 22);
  /* Its histogram spans the finite values, not the sample that stands for NaN. */
  g_assert_cmpfloat_with_epsilon (tools->roi_lo, -3.625, 1e-9);

  es_tools_set_tool (tools, ES_TOOL_INSPECT);
  drag (20, 20, 20, 20);
  g_assert_nonnull (strstr (es_tools_get_inspector_text (tools), "No data: the pixel is NaN"));
  g_assert_nonnull (strstr (es_tools_get_inspector_text (tools), "value NaN"));
  es_tools_set_tool (tools, ES_TOOL_POINTER);

  set_view ("entropy");
  entropy = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_true (isnan (es_layer_value (entropy, 20, 20)));
  g_assert_false (isnan (es_layer_value (entropy, 21, 20)));
  g_assert_cmpstr (es_colorbar_get_no_data (window->colorbar), ==, "no data");

  facts = _es_window_source_facts (window);
  nan_fact = g_strdup_printf ("%d samples, without a value", nan);
  g_assert_cmpstr (fact (facts, "NaN"), ==, nan_fact);
  g_assert_cmpstr (fact (facts, "Values"), ==, "-3.6250 … 4.8750");
  g_unlink (path);
#else
  g_test_skip ("built without libtiff");
#endif
}

int
main (int argc, char *argv[])
{
  int status;

  ui_test_setup (&argc, &argv);
  g_test_add_func ("/tools/profile", test_profile);
  g_test_add_func ("/tools/roi", test_roi);
  g_test_add_func ("/tools/roi-on-every-pane", test_roi_on_every_pane);
  g_test_add_func ("/tools/inspector", test_inspector);
  g_test_add_func ("/tools/grid-readout", test_grid_readout);
  g_test_add_func ("/tools/contrast", test_contrast);
  g_test_add_func ("/tools/swipe", test_swipe);
  g_test_add_func ("/tools/coordinates", test_coordinates);
  g_test_add_func ("/tools/escape", test_escape);
  g_test_add_func ("/tools/values-and-units", test_values_and_units);
  g_test_add_func ("/tools/nan-pixels", test_nan_pixels);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
