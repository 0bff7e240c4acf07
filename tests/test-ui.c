/* SPDX-License-Identifier: MIT */
/* UI tests (GTest, under Xvfb): open, switch views, tune, zoom, export byte-identical to the pipeline,
 * compare variants, refuse images over the size limit. (test-ui-loop.c: cancellation and display-only
 * changes; test-ui-tables.c: the UI follows the tables.) */
#include "test-ui-common.h"

static void
test_open (void)
{
  g_autofree char *path = test_image ("images", "camera.png");
  EsSource *source;
  EsLayer *layer;

  open_path (path);
  source = es_window_get_source (window);
  g_assert_nonnull (source);
  g_assert_cmpstr (source->name, ==, "camera.png");
  g_assert_cmpint (source->image.width, ==, 512);
  g_assert_cmpint (source->image.height, ==, 512);

  set_view ("entropy");
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_nonnull (layer);
  g_assert_true (layer->source == source);
  g_assert_cmpint (layer->result.values.format, ==, ES_FORMAT_F32);
  g_assert_cmpint (es_canvas_get_n_panes (es_window_get_canvas (window)), ==, 1);
}

static void
test_bad_file (void)
{
  g_autofree char *corrupt = test_image ("pngsuite", "xcrn0g04.png");
  g_autofree char *missing = g_build_filename (tmpdir, "no-such-image.png", NULL);
  EsSource *before = es_window_get_source (window);

  open_path (corrupt);
  g_assert_true (es_window_get_source (window) == before);
  g_assert_true (g_str_has_prefix (es_window_get_last_message (window), "Could not open “xcrn0g04.png”: "));

  open_path (missing);
  g_assert_true (es_window_get_source (window) == before);
  g_assert_true (g_str_has_prefix (es_window_get_last_message (window), "Could not open “no-such-image.png”: "));
}

static void
test_views (void)
{
  static const struct {
    const char *name;
    EsView view;
  } views[] = {
    { "original", ES_VIEW_ORIGINAL },   { "quantized", ES_VIEW_QUANTIZED }, { "equalized", ES_VIEW_EQUALIZED },
    { "sharpened", ES_VIEW_SHARPENED }, { "entropy", ES_VIEW_ENTROPY },
  };
  EsCanvas *canvas = es_window_get_canvas (window);

  for (guint i = 0; i < G_N_ELEMENTS (views); i++)
    {
      EsLayer *layer;

      set_view (views[i].name);
      layer = es_window_get_layer (window, views[i].view);
      g_assert_nonnull (layer);
      g_assert_cmpint (layer->view, ==, views[i].view);
      g_assert_cmpint (es_window_get_active_view (window), ==, views[i].view);
      g_assert_cmpint (es_canvas_get_n_panes (canvas), ==, 1);
    }

  set_view ("grid");
  g_assert_cmpint (es_canvas_get_n_panes (canvas), ==, 4);
  g_assert_nonnull (es_window_get_layer (window, ES_VIEW_ORIGINAL));
  g_assert_nonnull (es_window_get_layer (window, ES_VIEW_ENTROPY));
  g_assert_nonnull (es_window_get_layer (window, ES_VIEW_EQUALIZED));
  g_assert_nonnull (es_window_get_layer (window, ES_VIEW_SHARPENED));
  /* The grid's active pane starts on the entropy heatmap. */
  g_assert_cmpint (es_window_get_active_view (window), ==, ES_VIEW_ENTROPY);
}

static void
test_parameters (void)
{
  EsLayer *layer;

  set_test_settings ();

  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_nonnull (layer);
  g_assert_cmpint (layer->job.window, ==, test_window);
  g_assert_cmpint (layer->job.levels, ==, test_levels);
  /* The automatic range: the canvas draws the values' own extent. */
  assert_pane_range (0, layer->min, layer->max);
  assert_job_label ("Entropy · %d×%d · clip · %d bins · bits", test_window, test_window, test_levels);

  /* Every view's job has the parameters its operation uses. */
  for (int view = 0; view < ES_N_VIEWS; view++)
    {
      EsOp op;

      if (!es_view_get_op (view, &op))
        continue;
      set_view (es_view_name (view));
      layer = es_window_get_layer (window, view);
      g_assert_nonnull (layer);
      g_assert_cmpint (layer->job.op, ==, op);
      for (int id = 0; id < ES_N_PARAMS; id++)
        if (es_op_uses (op, id))
          g_assert_cmpfloat (es_job_get_param (&layer->job, id), ==,
                             es_param (id)->digits ? (float) test_params[id] : test_params[id]);
    }
  set_view ("sharpened");
  assert_job_label ("Sharpened · amount %.2f", test_params[ES_PARAM_AMOUNT]);
  set_view ("entropy");
}

static void
test_export (void)
{
  static const struct {
    EsExportFormat format;
    gboolean colorbar;
  } formats[] = {
    { ES_EXPORT_PNG, FALSE },
    { ES_EXPORT_PNG, TRUE },
    { ES_EXPORT_RAW16, FALSE },
    { ES_EXPORT_TEXT, FALSE },
  };
  g_autofree char *image = test_image ("images", "camera.png");
  g_autofree char *path = g_build_filename (tmpdir, "shown.out", NULL);

  /* Every view of an operation (the original is test_export_original's). */
  for (int view = 0; view < ES_N_VIEWS; view++)
    {
      EsOp op;

      if (!es_view_get_op (view, &op))
        continue;
      set_view (es_view_name (view));
      for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
        {
          g_autofree char *expected = NULL;

          g_test_message ("export %s as format %d%s", es_view_name (view), formats[f].format,
                          formats[f].colorbar ? " with colorbar" : "");
          export_shown (path, formats[f].format, formats[f].colorbar);
          expected = expected_export (image, view, formats[f].format, formats[f].colorbar);
          assert_same_files (path, expected);
        }
    }
  set_view ("entropy");
}

static void
test_export_grid_pane (void)
{
  g_autofree char *image = test_image ("images", "camera.png");
  g_autofree char *path = g_build_filename (tmpdir, "pane.png", NULL);
  g_autofree char *expected = NULL;

  /* In the grid, export follows the active pane. */
  set_view ("grid");
  es_canvas_set_active_pane (es_window_get_canvas (window), 3);
  wait_idle ();
  g_assert_cmpint (es_window_get_active_view (window), ==, ES_VIEW_SHARPENED);
  export_shown (path, ES_EXPORT_PNG, FALSE);
  expected = expected_export (image, ES_VIEW_SHARPENED, ES_EXPORT_PNG, FALSE);
  assert_same_files (path, expected);
  set_view ("entropy");
}

static void
test_export_original (void)
{
  g_autofree char *image_path = test_image ("images", "camera.png");
  g_autofree char *path = g_build_filename (tmpdir, "original.png", NULL);
  EsImage exported = { 0 }, image = { 0 };
  EsError error = { 0 };

  set_view ("original");
  export_shown (path, ES_EXPORT_PNG, FALSE);
  g_assert_true (es_load_file (path, 16, &exported, &error));
  g_assert_true (es_load_file (image_path, 16, &image, &error));
  g_assert_cmpint (exported.width, ==, image.width);
  g_assert_cmpint (exported.height, ==, image.height);
  for (int y = 0; y < image.height; y++)
    g_assert_cmpmem (es_image_row (&exported, y), image.width, es_image_row (&image, y), image.width);
  es_image_clear (&exported);
  es_image_clear (&image);
  set_view ("entropy");
}

static void
on_export_failed (GObject *object, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;

  g_assert_false (es_window_export_finish (ES_WINDOW (object), result, &error));
  g_assert_nonnull (error);
  g_test_message ("export failed as expected: %s", error->message);
  *(gboolean *) user_data = TRUE;
}

static void
test_export_failure (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "no-such-folder", "out.png", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  gboolean done = FALSE;

  es_window_export_async (window, file, ES_EXPORT_PNG, TRUE, NULL, on_export_failed, &done);
  wait_for (&done);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Dropping a file list on the window opens its first file. */
static void
test_drop (void)
{
  g_autofree char *path = test_image ("images", "brick.png");
  g_autoptr (GFile) file = g_file_new_for_path (path);
  GtkWidget *stack = gtk_widget_get_ancestor (GTK_WIDGET (es_window_get_canvas (window)), GTK_TYPE_STACK);
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (stack);
  GtkDropTarget *target = NULL;
  GValue value = G_VALUE_INIT;
  GSList *files = g_slist_prepend (NULL, file);
  gboolean handled = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, i);
      if (GTK_IS_DROP_TARGET (controller))
        target = GTK_DROP_TARGET (controller);
    }
  g_assert_nonnull (target);

  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_list (files));
  g_signal_emit_by_name (target, "drop", &value, 10.0, 10.0, &handled);
  g_value_unset (&value);
  g_slist_free (files);
  g_assert_true (handled);
  wait_idle ();
  g_assert_cmpstr (es_window_get_source (window)->name, ==, "brick.png");
  g_assert_nonnull (es_window_get_layer (window, es_window_get_active_view (window)));

  /* Back to the image the other tests expect. */
  g_free (path);
  path = test_image ("images", "camera.png");
  open_path (path);
}

static void
test_copy (void)
{
  GdkClipboard *clipboard = gtk_widget_get_clipboard (GTK_WIDGET (window));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.copy", NULL));
  wait_idle ();
  g_assert_true (gdk_content_formats_contain_gtype (gdk_clipboard_get_formats (clipboard), GDK_TYPE_TEXTURE));
  g_assert_cmpstr (es_window_get_last_message (window), ==, "Copied the view to the clipboard");
}

/* CPU on request; CUDA where it works, else a toast and the CPU's result. */
static void
test_backend (void)
{
  EsError error = { 0 };
  EsEngine *cuda = es_engine_new (ES_BACKEND_CUDA, &error);
  EsLayer *layer;

  set_view ("entropy");
  g_settings_set_string (settings, "backend", "cpu");
  wait_idle ();
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_cmpint (layer->backend, ==, ES_BACKEND_CPU);
  g_assert_cmpint (layer->result.timing.backend, ==, ES_BACKEND_CPU);

  g_settings_set_string (settings, "backend", "cuda");
  wait_idle ();
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_nonnull (layer);
  g_assert_cmpint (layer->backend, ==, ES_BACKEND_CUDA);
  if (cuda)
    g_assert_cmpint (layer->result.timing.backend, ==, ES_BACKEND_CUDA);
  else
    {
      g_assert_cmpint (layer->result.timing.backend, ==, ES_BACKEND_CPU);
      g_assert_true (g_str_has_prefix (es_window_get_last_message (window), "CUDA is not available"));
    }
  g_clear_pointer (&cuda, es_engine_free);

  g_settings_set_string (settings, "backend", "auto");
  wait_idle ();
}

/* The bars the user sees: EsBar widgets that are drawn. */
static int
count_drawn_bars (GtkWidget *widget)
{
  int n = ES_IS_BAR (widget) && gtk_widget_is_drawable (widget);

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    n += count_drawn_bars (child);
  return n;
}

/* A finished comparison of op on the current image with the current settings. */
static void
check_comparison (EsCompareWindow *compare, EsOp op)
{
  const EsComparison *comparison = es_compare_window_get_comparison (compare);
  size_t n_variants;

  g_assert_false (es_compare_window_get_busy (compare));
  g_assert_nonnull (comparison);
  g_assert_true (comparison->source == es_window_get_source (window));
  g_assert_cmpint (comparison->job.op, ==, op);
  g_assert_cmpint (comparison->repeats, ==, ES_COMPARE_DEFAULT_REPEATS);
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (op, id))
      {
        double value = es_settings_get_number (settings, es_param (id)->name);

        g_assert_cmpfloat (es_job_get_param (&comparison->job, id), ==, es_param (id)->digits ? (float) value : value);
      }

  for (size_t i = 0; i < comparison->n_rows; i++)
    {
      const EsCompareRow *row = &comparison->rows[i];

      g_test_message ("%s %s: kernel %.3f ms, wall %.3f ms, %.2f× floor", es_op_name (op), row->id, row->kernel_ms,
                      row->wall_ms, row->floor_multiple);
      g_assert_cmpint (row->repeats, ==, ES_COMPARE_DEFAULT_REPEATS);
      g_assert_cmpfloat (row->kernel_ms, >, 0);
      /* Each run's kernel time is part of its wall time, so the medians keep that order. */
      g_assert_cmpfloat (row->kernel_ms, <=, row->wall_ms);
      g_assert_nonnull (row->lesson);
    }

  if (comparison->engine.backend == ES_BACKEND_CUDA)
    {
      es_variants (op, &n_variants);
      g_assert_cmpstr (es_compare_window_get_page (compare), ==, "chart");
      g_assert_cmpuint (comparison->n_rows, ==, n_variants);
      g_assert_cmpfloat (comparison->floor_ms, >, 0);
      for (size_t i = 0; i < comparison->n_rows; i++)
        g_assert_cmpfloat_with_epsilon (comparison->rows[i].floor_multiple,
                                        comparison->rows[i].kernel_ms / comparison->floor_ms, 1e-9);
      /* The floor's bar, then one per variant. */
      g_assert_cmpint (count_drawn_bars (GTK_WIDGET (compare)), ==, (int) n_variants + 1);
    }
  else
    {
      /* No CUDA: the CPU's one implementation, and why there is nothing else. */
      g_assert_cmpstr (es_compare_window_get_page (compare), ==, "cpu");
      g_assert_cmpuint (comparison->n_rows, ==, 1);
      g_assert_cmpstr (comparison->rows[0].id, ==, "openmp");
      g_assert_cmpint (comparison->rows[0].backend, ==, ES_BACKEND_CPU);
      g_assert_true (isnan (comparison->floor_ms));
      g_assert_true (isnan (comparison->rows[0].floor_multiple));
      g_assert_cmpint (count_drawn_bars (GTK_WIDGET (compare)), ==, 1);
    }
}

static void
test_compare (void)
{
  EsCompareWindow *compare;

  /* It compares the operation on screen. */
  set_view ("sharpened");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.compare", NULL));
  compare = ES_COMPARE_WINDOW (es_window_get_compare_window (window));
  g_assert_nonnull (compare);
  wait_idle ();
  g_assert_cmpint (es_compare_window_get_op (compare), ==, ES_OP_SHARPEN);
  check_comparison (compare, ES_OP_SHARPEN);

  /* Another operation runs again by itself. */
  es_compare_window_set_op (compare, ES_OP_ENTROPY);
  g_assert_true (es_compare_window_get_busy (compare));
  g_assert_cmpstr (es_compare_window_get_page (compare), ==, "progress");
  wait_idle ();
  check_comparison (compare, ES_OP_ENTROPY);

  /* Cancelled before the worker takes it up: no result, and a way back. */
  es_compare_window_run (compare);
  es_compare_window_cancel (compare);
  wait_idle ();
  g_assert_false (es_compare_window_get_busy (compare));
  g_assert_null (es_compare_window_get_comparison (compare));
  g_assert_cmpstr (es_compare_window_get_page (compare), ==, "cancelled");

  /* The action brings the same window back and runs it again. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.compare", NULL));
  g_assert_true (es_window_get_compare_window (window) == GTK_WINDOW (compare));
  wait_idle ();
  check_comparison (compare, ES_OP_SHARPEN);

  gtk_window_destroy (GTK_WINDOW (compare));
  wait_idle ();
  g_assert_null (es_window_get_compare_window (window));
  set_view ("entropy");
}

/* Opens path and checks that it was refused for its size, naming the limit. */
static void
assert_refused (EsSource *before, const char *path, const char *name, guint64 limit)
{
  g_autofree char *prefix = g_strdup_printf ("Could not open “%s”: ", name);
  /* In the setting's unit: limits here are under 0.1 megapixels, given to two digits. */
  g_autofree char *reason = g_strdup_printf ("over the Maximum Image Size of %.2g megapixels", limit / 1e6);

  open_path (path);
  g_test_message ("%s", es_window_get_last_message (window));
  g_assert_true (es_window_get_source (window) == before);
  g_assert_true (g_str_has_prefix (es_window_get_last_message (window), prefix));
  g_assert_nonnull (strstr (es_window_get_last_message (window), reason));
}

/* The image on screen computes with the new window size. */
static void
assert_computes (int entropy_window)
{
  EsLayer *layer;

  g_settings_set_int (settings, "window", entropy_window);
  wait_idle ();
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_nonnull (layer);
  g_assert_true (layer->source == es_window_get_source (window));
  g_assert_cmpint (layer->job.window, ==, entropy_window);
}

/* An image over the "max-pixels" setting is refused with a toast that says
 * why; the image on screen stays and keeps computing, also when the limit
 * drops below it. */
static void
test_max_pixels (void)
{
  g_autofree char *small = test_image ("pngsuite", "basn0g08.png"); /* 32×32 */
  g_autofree char *text = test_image ("images", "text.png");        /* 448×172 */
  g_autofree char *camera = test_image ("images", "camera.png");    /* 512×512 */
  g_autofree char *medium = g_build_filename (tmpdir, "medium.pgm", NULL);
  const guint64 limit = g_test_rand_int_range (1100, 40000);
  g_autofree guint8 *pgm = g_malloc (64 + 200 * 200);
  int header = g_snprintf ((char *) pgm, 64, "P5\n200 200\n255\n");
  EsSource *before;

  /* 200×200: over the limit, under text.png. */
  for (int i = 0; i < 200 * 200; i++)
    pgm[header + i] = (guint8) g_test_rand_int_range (0, 256);
  g_assert_true (g_file_set_contents (medium, (const char *) pgm, header + 200 * 200, NULL));
  g_test_message ("limit %" G_GUINT64_FORMAT " pixels", limit);

  set_view ("entropy");
  open_path (small);
  before = es_window_get_source (window);
  g_assert_cmpstr (before->name, ==, "basn0g08.png");
  g_settings_set_uint64 (settings, "max-pixels", limit);
  assert_refused (before, camera, "camera.png", limit);
  assert_computes (test_window == 3 ? 5 : 3);

  /* A limit lowered below the image on screen applies to the next file, not
   * to the jobs of this one; the refusal names the setting either way. */
  g_settings_reset (settings, "max-pixels");
  open_path (text);
  before = es_window_get_source (window);
  g_assert_cmpstr (before->name, ==, "text.png");
  g_settings_set_uint64 (settings, "max-pixels", limit);
  assert_computes (test_window);
  assert_refused (before, camera, "camera.png", limit);
  assert_refused (before, medium, "medium.pgm", limit);

  g_settings_reset (settings, "max-pixels");
  open_path (medium);
  g_assert_cmpstr (es_window_get_source (window)->name, ==, "medium.pgm");
  open_path (camera);
  g_assert_cmpstr (es_window_get_source (window)->name, ==, "camera.png");
}

/* Zoomed in, every image pixel is a uniform zoom×zoom block of its colour. */
static void
test_crisp_pixels (void)
{
  EsLayer *layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  const int zoom = 4, size = 64;
  EsPixels rendered;
  const guint8 *pixels;
  int stride;
  g_autofree guint8 *expected = g_malloc ((size / zoom) * (size / zoom) * 3);
  EsDisplay display = { ES_COLORMAP_VIRIDIS, FALSE, ES_RANGE_ABSOLUTE, ES_UNITS_NATS };
  EsColorScale scale;
  EsImage crop;

  g_assert_nonnull (layer);
  es_layer_display_scale (layer, &display, &scale);
  g_assert_true (es_layer_render (layer, &scale, zoom, -zoom * 100.0, -zoom * 200.0, size, size, &rendered));
  g_assert_cmpint (cairo_image_surface_get_format (rendered.surface), ==, CAIRO_FORMAT_RGB24);
  pixels = cairo_image_surface_get_data (rendered.surface);
  stride = cairo_image_surface_get_stride (rendered.surface);

  crop = layer->result.values;
  crop.width = crop.height = size / zoom;
  crop.pixels = (guint8 *) es_image_row (&layer->result.values, 200) + 100 * sizeof (float);
  es_render_heatmap (&crop, &scale, expected, (size / zoom) * 3);

  for (int y = 0; y < size; y++)
    for (int x = 0; x < size; x++)
      {
        guint32 word; /* 0xAARRGGBB, cairo's RGB24 with A = 255 */
        memcpy (&word, pixels + (size_t) y * stride + (size_t) x * 4, 4);
        const guint8 p[4] = { word & 0xff, word >> 8 & 0xff, word >> 16 & 0xff, word >> 24 };
        const guint8 *e = expected + ((y / zoom) * (size / zoom) + x / zoom) * 3;

        g_assert_cmpuint (p[2], ==, e[0]);
        g_assert_cmpuint (p[1], ==, e[1]);
        g_assert_cmpuint (p[0], ==, e[2]);
        g_assert_cmpuint (p[3], ==, 255);
      }
  es_pixels_clear (&rendered);
}

static void
test_zoom (void)
{
  EsCanvas *canvas = es_window_get_canvas (window);
  double zoom;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom", "d", 4.0));
  g_assert_cmpfloat (es_canvas_get_zoom (canvas), ==, 4.0);
  g_assert_false (es_canvas_get_fit (canvas));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-in", NULL));
  g_assert_cmpfloat (es_canvas_get_zoom (canvas), >, 4.0);
  zoom = es_canvas_get_zoom (canvas);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-out", NULL));
  g_assert_cmpfloat (es_canvas_get_zoom (canvas), <, zoom);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-fit", NULL));
  g_assert_true (es_canvas_get_fit (canvas));
  wait_idle ();
}

/* The automatic range a layer finds with its mips equals the pipeline's
 * (es_pipeline_auto_range), for every format, odd sizes, NaN and a span
 * too narrow to draw. */
static void
test_layer_range (void)
{
  static const int sizes[][2] = { { 1, 1 }, { 1, 37 }, { 37, 1 }, { 17, 17 }, { 33, 18 }, { 258, 129 }, { 301, 300 } };
  EsImage gray = { 0 };
  EsSource *source;

  g_assert_true (es_image_alloc (&gray, 1, 1, ES_FORMAT_U8, 8, NULL));
  source = es_source_new (NULL, "synthetic", &gray);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (int format = ES_FORMAT_U8; format <= ES_FORMAT_F32; format++)
      for (int kind = 0; kind < 3; kind++)
        {
          EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
          EsResult result = { 0 };
          double lo, hi;
          EsLayer *layer;
          int w = sizes[i][0], h = sizes[i][1];

          g_assert_true (es_image_alloc (&result.values, w, h, format, 8, NULL));
          for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
              {
                double v = kind == 1 ? 1.0 + g_test_rand_double_range (0, 1e-6) : g_test_rand_double_range (0, 200);
                void *row = es_image_row (&result.values, y);

                if (format == ES_FORMAT_U8)
                  ((guint8 *) row)[x] = (guint8) v;
                else if (format == ES_FORMAT_U16)
                  ((guint16 *) row)[x] = (guint16) (v * 300);
                else
                  ((float *) row)[x] = kind == 2 && (x + y) % 7 == 3 ? NAN : (float) v;
              }
          es_pipeline_auto_range (&result.values, &lo, &hi);
          layer = es_layer_new (ES_VIEW_ENTROPY, source, &job, ES_BACKEND_CPU, &result);
          g_assert_cmpfloat (layer->min, ==, lo);
          g_assert_cmpfloat (layer->max, ==, hi);
          es_layer_unref (layer);
        }
  es_source_unref (source);
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

static gboolean
at_once (gpointer data)
{
  return TRUE;
}

/* After an image's first result the worker maps the buffers that the next
 * result of its size takes (es_layer_stock_spares): one set, however often
 * it is asked, none when told to stop. */
static void
test_stock_spares (void)
{
  const int w = 2048, h = 1101; /* 9 MB of floats: the pool keeps buffers from 4 MiB */
  EsImage gray = { 0 }, taken = { 0 }, again = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsResult result = { 0 };
  EsSource *source;
  EsLayer *layer;

  g_assert_true (es_image_alloc (&gray, w, h, ES_FORMAT_U8, 8, NULL));
  source = es_source_new (NULL, "synthetic", &gray);
  g_assert_true (es_image_alloc (&result.values, w, h, ES_FORMAT_F32, 8, NULL));
  result.timing.backend = ES_BACKEND_CPU; /* CUDA results take no spare values */
  layer = es_layer_new (ES_VIEW_ENTROPY, source, &job, ES_BACKEND_CPU, &result);
  es_layer_keep_spares_for (w, h);
  g_assert_false (es_layer_prepare_values (&taken, w, h, ES_FORMAT_F32));

  es_layer_stock_spares (layer, at_once, NULL);
  g_assert_false (es_layer_prepare_values (&taken, w, h, ES_FORMAT_F32));
  es_layer_stock_spares (layer, never, NULL);
  es_layer_stock_spares (layer, never, NULL);
  g_assert_true (es_layer_prepare_values (&taken, w, h, ES_FORMAT_F32));
  g_assert_false (es_layer_prepare_values (&again, w, h, ES_FORMAT_F32));
  g_assert_true (taken.width == w && taken.height == h && taken.stride == (size_t) w * sizeof (float));

  es_image_clear (&taken);
  es_layer_unref (layer);
  es_source_unref (source);
  es_layer_keep_spares_for (1, 1); /* frees what is left */
}

static void
test_colorbar_ticks (void)
{
  double ticks[16];
  int decimals, n;

  n = es_colorbar_ticks (0, 2.772588722, 8, FALSE, ticks, &decimals);
  g_assert_cmpint (n, >=, 4);
  for (int i = 0; i < n; i++)
    {
      g_assert_cmpfloat (ticks[i], >=, 0);
      g_assert_cmpfloat (ticks[i], <=, 2.772588722);
      if (i > 0)
        g_assert_cmpfloat_with_epsilon (ticks[i] - ticks[i - 1], ticks[1] - ticks[0], 1e-9);
    }
  n = es_colorbar_ticks (0, 15, 8, TRUE, ticks, &decimals);
  g_assert_cmpint (decimals, ==, 0);
  for (int i = 0; i < n; i++)
    g_assert_cmpfloat (ticks[i], ==, (double) (int) ticks[i]);
}

int
main (int argc, char *argv[])
{
  int status;

  ui_test_setup (&argc, &argv);
  g_test_add_func ("/ui/colorbar-ticks", test_colorbar_ticks);
  g_test_add_func ("/ui/layer-range", test_layer_range);
  g_test_add_func ("/ui/stock-spares", test_stock_spares);
  g_test_add_func ("/ui/open", test_open);
  g_test_add_func ("/ui/bad-file", test_bad_file);
  g_test_add_func ("/ui/views", test_views);
  g_test_add_func ("/ui/parameters", test_parameters);
  g_test_add_func ("/ui/zoom", test_zoom);
  g_test_add_func ("/ui/crisp-pixels", test_crisp_pixels);
  g_test_add_func ("/ui/export", test_export);
  g_test_add_func ("/ui/export-grid-pane", test_export_grid_pane);
  g_test_add_func ("/ui/export-original", test_export_original);
  g_test_add_func ("/ui/export-failure", test_export_failure);
  g_test_add_func ("/ui/drop", test_drop);
  g_test_add_func ("/ui/copy", test_copy);
  g_test_add_func ("/ui/backend", test_backend);
  g_test_add_func ("/ui/compare", test_compare);
  g_test_add_func ("/ui/max-pixels", test_max_pixels);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
