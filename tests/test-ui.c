/* SPDX-License-Identifier: MIT */
/* UI tests (GTest, under Xvfb): open, switch views, tune, zoom, export byte-identical to the pipeline,
 * compare variants, refuse images over the size limit; with the compute held back by a test hook:
 * superseded jobs are cancelled and never shown, Escape cancels, display-only changes run no job,
 * a new image goes on screen with its title at once. (test-ui-tables.c: the UI follows the tables.) */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "es-application.h"
#include "es-bar.h"
#include "es-canvas-private.h"
#include "es-colorbar-private.h"
#include "es-compare-window-private.h"
#include "es-load.h"
#include "es-settings.h"
#include "es-window-private.h"

static GSettings *settings;
static EsWindow *window;
static char *tmpdir;

/* Test parameters (by EsParamId), drawn afresh each run (GTest prints the seed). */
static double test_params[ES_N_PARAMS];
#define test_window ((int) test_params[ES_PARAM_WINDOW])
#define test_levels ((int) test_params[ES_PARAM_LEVELS])

static gboolean timed_out;

/* The compute, held back on purpose: every job that runs a kernel passes
 * this gate (es_worker_set_job_hook) on the worker thread. It counts the
 * jobs and, while the gate is shut, holds each one before its kernel runs,
 * polling the job's control so that a cancel still stops it (a "deaf" gate
 * holds it until it opens, as a job that is slow to notice would be). */
static struct {
  GMutex lock;
  GCond cond;
  gboolean shut;
  gboolean deaf;
  double report;        /* progress reported while held (es_control_advance); <0: none */
  int started;          /* jobs that reached the gate */
  int held;             /* jobs waiting at it now */
  int cancelled;        /* jobs whose control was cancelled when they left it */
  EsWorkItem last;      /* the last job that reached it */
} gate;

static void
gate_hook (const EsWorkItem *item, EsControl *control, gpointer user_data)
{
  g_mutex_lock (&gate.lock);
  gate.started++;
  gate.last = *item;
  if (gate.shut)
    {
      if (gate.report >= 0)
        {
          es_control_begin (control, 1000);
          es_control_advance (control, (long long) (gate.report * 1000));
        }
      gate.held++;
      g_main_context_wakeup (NULL);
      while (gate.shut && (gate.deaf || !es_control_cancelled (control)))
        g_cond_wait_until (&gate.cond, &gate.lock, g_get_monotonic_time () + 2 * G_TIME_SPAN_MILLISECOND);
      gate.held--;
    }
  gate.cancelled += es_control_cancelled (control);
  g_mutex_unlock (&gate.lock);
  g_main_context_wakeup (NULL);
}

static void
gate_set (gboolean shut, gboolean deaf, double report)
{
  g_mutex_lock (&gate.lock);
  gate.shut = shut;
  gate.deaf = deaf;
  gate.report = report;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
}

static int
gate_get (const int *field)
{
  int value;

  g_mutex_lock (&gate.lock);
  value = *field;
  g_mutex_unlock (&gate.lock);
  return value;
}

static gboolean
on_timeout (gpointer data)
{
  timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop until nothing is pending and the window is idle (or
 * until *flag is set, when flag is given). */
static void
wait_for (gboolean *flag)
{
  guint id;

  timed_out = FALSE;
  id = g_timeout_add_seconds (120, on_timeout, NULL);
  while (!timed_out
         && (flag ? !*flag : g_main_context_pending (NULL) || es_window_get_busy (window)))
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (timed_out);
  g_source_remove (id);
}

static void
wait_idle (void)
{
  wait_for (NULL);
}

typedef gboolean (*Predicate) (gpointer data);

/* Runs the main loop until predicate holds; check (if given) runs after
 * every iteration, so that nothing shown for a moment escapes it. */
static void
wait_until (Predicate predicate, gpointer data, GFunc check, gpointer check_data)
{
  guint id;

  timed_out = FALSE;
  id = g_timeout_add_seconds (120, on_timeout, NULL);
  if (check)
    check (check_data, NULL);
  while (!timed_out && !predicate (data))
    {
      g_main_context_iteration (NULL, TRUE);
      if (check)
        check (check_data, NULL);
    }
  g_assert_false (timed_out);
  g_source_remove (id);
}

static gboolean
is_idle (gpointer data)
{
  return !g_main_context_pending (NULL) && !es_window_get_busy (window);
}

/* n jobs wait at the gate. */
static gboolean
gate_holds (gpointer data)
{
  return gate_get (&gate.held) == GPOINTER_TO_INT (data);
}

/* The n-th job since *data started is the one held at the gate. */
typedef struct {
  int base, n;
} GateCount;

static gboolean
gate_holds_job (gpointer data)
{
  const GateCount *count = data;
  gboolean holds;

  g_mutex_lock (&gate.lock);
  holds = gate.started - count->base == count->n && gate.held == 1;
  g_mutex_unlock (&gate.lock);
  return holds;
}

/* The window has asked the worker for something since generation *data. */
static gboolean
request_sent (gpointer data)
{
  return window->generation > *(guint64 *) data;
}

static char *
test_image (const char *folder, const char *name)
{
  return g_build_filename (g_getenv ("ES_TESTDATA"), folder, name, NULL);
}

static void
open_path (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);

  es_window_open (window, file);
  wait_idle ();
}

static void
set_view (const char *view)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.view", "s", view));
  wait_idle ();
}

/* A parameter's key holds an "i" or a "d" (the table's digits say which). */
static void
set_params (const double *values)
{
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      const EsParam *param = es_param (id);

      g_settings_set_value (settings, param->name,
                            param->digits ? g_variant_new_double (values[id])
                                          : g_variant_new_int32 ((gint32) values[id]));
    }
}

/* A value on the parameter's steps, anywhere in its range. */
static double
random_value (const EsParam *param)
{
  int steps = (int) round ((param->max - param->min) / param->step);
  double scale = pow (10, param->digits);

  return round ((param->min + g_test_rand_int_range (0, steps + 1) * param->step) * scale) / scale;
}

/* The colour range a pane of the canvas is drawn with. */
static void
assert_pane_range (int pane, double lo, double hi)
{
  EsCanvas *canvas = es_window_get_canvas (window);

  g_assert_cmpint (pane, <, canvas->n_panes);
  g_assert_cmpfloat (canvas->panes[pane].scale.lo, ==, lo);
  g_assert_cmpfloat (canvas->panes[pane].scale.hi, ==, hi);
}

/* The status bar's words for the job on screen. */
static void G_GNUC_PRINTF (1, 2)
assert_job_label (const char *format, ...)
{
  g_autofree char *expected = NULL;
  va_list args;

  va_start (args, format);
  expected = g_strdup_vprintf (format, args);
  va_end (args);
  g_assert_cmpstr (gtk_label_get_label (window->info_label), ==, expected);
}

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
    { "original", ES_VIEW_ORIGINAL },
    { "quantized", ES_VIEW_QUANTIZED },
    { "equalized", ES_VIEW_EQUALIZED },
    { "sharpened", ES_VIEW_SHARPENED },
    { "entropy", ES_VIEW_ENTROPY },
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

  set_view ("entropy");
  set_params (test_params);
  g_settings_set_string (settings, "colormap", "magma");
  g_settings_set_boolean (settings, "reversed", TRUE);
  g_settings_set_string (settings, "range", "auto");
  g_settings_set_string (settings, "units", "bits");
  wait_idle ();

  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_nonnull (layer);
  g_assert_cmpint (layer->job.window, ==, test_window);
  g_assert_cmpint (layer->job.levels, ==, test_levels);
  /* The automatic range: the canvas draws the values' own extent. */
  assert_pane_range (0, layer->min, layer->max);
  assert_job_label ("Entropy · window %d · levels %d · bits", test_window, test_levels);

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
  assert_job_label ("Sharpened · amount %.2f", test_params[ES_PARAM_AMOUNT]);
  set_view ("entropy");
}

/* What the window must write: the same job through es_pipeline_run and
 * es_pipeline_export, set up here from the test's own parameters, on the
 * backend that computed the shown layer (as the CLI on the same machine
 * would: CUDA's entropy may differ from the CPU's in the last float bits). */
static char *
expected_export_as (const char *image_path, EsView view, EsExportFormat format, gboolean colorbar,
                    EsRangeMode range, EsUnits units, EsColormap colormap, gboolean reversed)
{
  char *path = g_build_filename (tmpdir, "expected.out", NULL);
  EsLayer *shown = es_window_get_layer (window, view);
  EsError error = { 0 };
  EsEngine *engine;

  g_assert_nonnull (shown);
  engine = es_engine_new (shown->result.timing.backend, &error);
  EsImage image = { 0 };
  EsResult result = { 0 };
  EsViewParams params;
  EsOp op;

  g_assert_nonnull (engine);
  g_assert_true (es_view_get_op (view, &op));
  g_assert_true (es_load_file (image_path, test_levels, &image, &error));
  es_view_params_init (&params, op);
  params.range = range;
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (op, id))
      es_job_set_param (&params.job, id, test_params[id]);
  if (es_units_convertible (op))
    params.units = units;
  if (es_view_is_heatmap (view))
    {
      params.colormap = colormap;
      params.reversed = reversed;
    }
  g_assert_true (es_pipeline_run (engine, &image, &params, &result, &error));
  g_assert_true (es_pipeline_export (path, format, &result, colorbar, &error));
  es_result_clear (&result);
  es_image_clear (&image);
  es_engine_free (engine);
  return path;
}

/* With the display test_parameters sets: bits, the automatic range, magma reversed. */
static char *
expected_export (const char *image_path, EsView view, EsExportFormat format, gboolean colorbar)
{
  return expected_export_as (image_path, view, format, colorbar, ES_RANGE_AUTO, ES_UNITS_BITS,
                             ES_COLORMAP_MAGMA, TRUE);
}

static void
on_exported (GObject *object, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (es_window_export_finish (ES_WINDOW (object), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

static void
export_shown (const char *path, EsExportFormat format, gboolean colorbar)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  gboolean done = FALSE;

  es_window_export_async (window, file, format, colorbar, NULL, on_exported, &done);
  wait_for (&done);
  wait_idle ();
}

static void
assert_same_files (const char *a, const char *b)
{
  g_autofree char *da = NULL, *db = NULL;
  gsize la, lb;

  g_assert_true (g_file_get_contents (a, &da, &la, NULL));
  g_assert_true (g_file_get_contents (b, &db, &lb, NULL));
  g_assert_cmpuint (la, >, 0);
  g_assert_cmpmem (da, la, db, lb);
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
  GtkWidget *stack = gtk_widget_get_ancestor (GTK_WIDGET (es_window_get_canvas (window)),
                                              GTK_TYPE_STACK);
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
  g_assert_true (gdk_content_formats_contain_gtype (gdk_clipboard_get_formats (clipboard),
                                                    GDK_TYPE_TEXTURE));
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

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child;
       child = gtk_widget_get_next_sibling (child))
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

        g_assert_cmpfloat (es_job_get_param (&comparison->job, id), ==,
                           es_param (id)->digits ? (float) value : value);
      }

  for (size_t i = 0; i < comparison->n_rows; i++)
    {
      const EsCompareRow *row = &comparison->rows[i];

      g_test_message ("%s %s: kernel %.3f ms, wall %.3f ms, %.2f× floor", es_op_name (op), row->id,
                      row->kernel_ms, row->wall_ms, row->floor_multiple);
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
  g_autofree char *reason = g_strdup_printf ("over the limit of %" G_GUINT64_FORMAT " pixels", limit);

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
  g_autofree char *small = test_image ("pngsuite", "basn0g08.png");     /* 32×32 */
  g_autofree char *text = test_image ("images", "text.png");            /* 448×172 */
  g_autofree char *camera = test_image ("images", "camera.png");        /* 512×512 */
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
  g_autoptr (GdkTexture) texture = NULL;
  g_autofree guint8 *pixels = g_malloc (size * size * 4);
  g_autofree guint8 *expected = g_malloc ((size / zoom) * (size / zoom) * 3);
  EsDisplay display = { ES_COLORMAP_VIRIDIS, FALSE, ES_RANGE_ABSOLUTE, ES_UNITS_NATS };
  EsColorScale scale;
  EsImage crop;

  g_assert_nonnull (layer);
  es_layer_display_scale (layer, &display, &scale);
  texture = es_layer_render (layer, &scale, zoom, -zoom * 100.0, -zoom * 200.0, size, size);
  gdk_texture_download (texture, pixels, size * 4);

  crop = layer->result.values;
  crop.width = crop.height = size / zoom;
  crop.pixels = (guint8 *) es_image_row (&layer->result.values, 200) + 100 * sizeof (float);
  es_render_heatmap (&crop, &scale, expected, (size / zoom) * 3);

  for (int y = 0; y < size; y++)
    for (int x = 0; x < size; x++)
      {
        const guint8 *p = pixels + (y * size + x) * 4;      /* B G R A in memory (cairo order) */
        const guint8 *e = expected + ((y / zoom) * (size / zoom) + x / zoom) * 3;

        g_assert_cmpuint (p[2], ==, e[0]);
        g_assert_cmpuint (p[1], ==, e[1]);
        g_assert_cmpuint (p[0], ==, e[2]);
        g_assert_cmpuint (p[3], ==, 255);
      }
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
  static const int sizes[][2] = { { 1, 1 }, { 1, 37 }, { 37, 1 }, { 17, 17 }, { 33, 18 },
                                  { 258, 129 }, { 301, 300 } };
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
                double v = kind == 1 ? 1.0 + g_test_rand_double_range (0, 1e-6)
                                     : g_test_rand_double_range (0, 200);
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


/* Cancellation, display-only changes, opening: the compute held at the gate */

/* An odd window size that is none of the ones given (0 ends the list). */
static int
window_other_than (const int *taken)
{
  for (int k = 3;; k += 2)
    {
      gboolean free = TRUE;

      for (const int *t = taken; *t; t++)
        free = free && *t != k;
      if (free)
        return k;
    }
}

static int
shown_window (void)
{
  EsLayer *layer = es_window_get_layer (window, ES_VIEW_ENTROPY);

  g_assert_nonnull (layer);
  return layer->job.window;
}

/* None of these window sizes (0-terminated) is on screen, in the window's
 * layers or in the canvas, not even for one main-loop iteration. */
static void
check_never_shown (gpointer data, gpointer unused)
{
  const int *forbidden = data;
  EsCanvas *canvas = es_window_get_canvas (window);
  EsLayer *layer = window->shown[ES_VIEW_ENTROPY];

  for (const int *k = forbidden; *k; k++)
    {
      if (layer)
        g_assert_cmpint (layer->job.window, !=, *k);
      for (int i = 0; i < canvas->n_panes; i++)
        if (canvas->panes[i].layer->view == ES_VIEW_ENTROPY)
          g_assert_cmpint (canvas->panes[i].layer->job.window, !=, *k);
    }
}

/* Sets the window size and waits until the window has asked for it. */
static void
request_window (int size)
{
  guint64 generation = window->generation;

  g_settings_set_int (settings, "window", size);
  wait_until (request_sent, &generation, NULL, NULL);
}

/* A new request cancels the job of the one before; a superseded job's
 * result is never shown; however many changes come while a job runs, only
 * the last one runs after it. */
static void
test_supersede (void)
{
  int taken[8] = { 0 }, forbidden[8] = { 0 };
  int first, last, started, cancelled;

  set_view ("entropy");
  taken[0] = shown_window ();
  first = taken[1] = forbidden[0] = window_other_than (taken);
  last = taken[2] = window_other_than (taken);
  g_test_message ("on screen %d, then %d (superseded), then %d", taken[0], first, last);

  /* A job that is slow to notice its cancel: three changes pile up while
   * it runs, and only the last one runs after it. */
  started = gate_get (&gate.started);
  cancelled = gate_get (&gate.cancelled);
  gate_set (TRUE, TRUE, -1);
  request_window (first);
  wait_until (gate_holds, GINT_TO_POINTER (1), check_never_shown, forbidden);
  for (int i = 0; i < 3; i++)
    {
      forbidden[1 + i] = taken[3 + i] = window_other_than (taken);
      request_window (forbidden[1 + i]);
    }
  request_window (last);
  g_assert_true (es_window_get_busy (window));
  gate_set (FALSE, FALSE, -1);
  wait_until (is_idle, NULL, check_never_shown, forbidden);
  g_assert_cmpint (shown_window (), ==, last);
  g_assert_cmpint (gate_get (&gate.started) - started, ==, 2);
  g_assert_cmpint (gate_get (&gate.cancelled) - cancelled, ==, 1);
  g_assert_cmpint (gate.last.job.window, ==, last);

  /* A job that stops at once: it is cancelled, the next one runs. */
  started = gate_get (&gate.started);
  cancelled = gate_get (&gate.cancelled);
  forbidden[0] = first;
  forbidden[1] = 0;
  gate_set (TRUE, FALSE, -1);
  request_window (first);
  wait_until (gate_holds_job, &(GateCount) { started, 1 }, check_never_shown, forbidden);
  request_window (taken[0]);
  wait_until (gate_holds_job, &(GateCount) { started, 2 }, check_never_shown, forbidden);
  g_assert_cmpint (gate_get (&gate.cancelled) - cancelled, ==, 1);
  g_assert_cmpint (shown_window (), ==, last);
  gate_set (FALSE, FALSE, -1);
  wait_until (is_idle, NULL, check_never_shown, forbidden);
  g_assert_cmpint (shown_window (), ==, taken[0]);
  g_assert_cmpint (gate_get (&gate.started) - started, ==, 2);

  /* A new request that still needs the running job lets it finish. */
  started = gate_get (&gate.started);
  cancelled = gate_get (&gate.cancelled);
  gate_set (TRUE, FALSE, -1);
  request_window (first);
  wait_until (gate_holds, GINT_TO_POINTER (1), NULL, NULL);
  {
    guint64 generation = window->generation;

    g_settings_set_boolean (settings, "show-sidebar", FALSE);
    wait_until (request_sent, &generation, NULL, NULL);
  }
  g_assert_cmpint (gate_get (&gate.held), ==, 1);
  gate_set (FALSE, FALSE, -1);
  wait_idle ();
  g_assert_cmpint (shown_window (), ==, first);
  g_assert_cmpint (gate_get (&gate.cancelled), ==, cancelled);
  g_assert_cmpint (gate_get (&gate.started) - started, ==, 1);
  g_settings_set_boolean (settings, "show-sidebar", TRUE);
  g_settings_set_int (settings, "window", test_window);
  wait_idle ();
}

/* Activates what Escape is bound to on the window, as a key press would. */
static void
press_escape (void)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (window));
  g_autoptr (GtkShortcutTrigger) escape = gtk_keyval_trigger_new (GDK_KEY_Escape, 0);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, i);

      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (controller)); j++)
        {
          g_autoptr (GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), j);

          if (!gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (shortcut), escape))
            continue;
          g_assert_true (gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0,
                                                       GTK_WIDGET (window),
                                                       gtk_shortcut_get_arguments (shortcut)));
          return;
        }
    }
  g_assert_not_reached ();
}

/* The overlay shows the job's progress, to the percent the gate reports. */
static gboolean
progress_shows (gpointer data)
{
  double fraction = *(double *) data;
  g_autofree char *text = g_strdup_printf ("%d %%", (int) floor (fraction * 100));

  return gtk_revealer_get_reveal_child (window->progress_revealer)
         && fabs (gtk_progress_bar_get_fraction (window->progress_bar) - fraction) < 1e-6
         && g_strcmp0 (gtk_progress_bar_get_text (window->progress_bar), text) == 0;
}

static GtkWidget *find_button (GtkWidget *widget, const char *action);

/* Whether win.cancel (Escape) is enabled: its button says. */
static gboolean
cancel_enabled (void)
{
  GtkWidget *button = find_button (GTK_WIDGET (window->progress_revealer), "win.cancel");

  g_assert_nonnull (button);
  return gtk_widget_get_sensitive (button);
}

/* Escape stops the job waited for; the previous result stays, the status
 * says that it was cancelled, and the overlay goes. */
static void
test_escape (void)
{
  double quarter = 0.25;
  int taken[3] = { 0 }, target, cancelled;
  EsLayer *before;
  g_autofree char *expected = NULL;

  set_view ("entropy");
  before = es_window_get_layer (window, ES_VIEW_ENTROPY);
  taken[0] = before->job.window;
  target = taken[1] = window_other_than (taken);
  g_assert_false (cancel_enabled ());
  g_assert_false (gtk_revealer_get_reveal_child (window->progress_revealer));

  es_window_set_progress_delay (window, 0);
  cancelled = gate_get (&gate.cancelled);
  gate_set (TRUE, FALSE, quarter);
  request_window (target);
  wait_until (gate_holds, GINT_TO_POINTER (1), NULL, NULL);
  wait_until (progress_shows, &quarter, NULL, NULL);
  g_assert_cmpstr (gtk_label_get_label (window->progress_title), ==, "Computing Entropy");
  expected = g_strdup_printf ("window %d · levels %d", target, test_levels);
  g_assert_cmpstr (gtk_label_get_label (window->progress_detail), ==, expected);
  g_assert_true (cancel_enabled ());

  press_escape ();
  /* The window is idle at once; the job leaves the gate when it sees the cancel. */
  g_assert_false (es_window_get_busy (window));
  wait_until (gate_holds, GINT_TO_POINTER (0), NULL, NULL);
  wait_idle ();
  g_assert_cmpint (gate_get (&gate.cancelled) - cancelled, ==, 1);
  g_assert_true (es_window_get_layer (window, ES_VIEW_ENTROPY) == before);
  g_assert_cmpint (shown_window (), ==, taken[0]);
  g_assert_cmpint (g_settings_get_int (settings, "window"), ==, target);
  g_assert_cmpstr (gtk_label_get_label (window->notice_label), ==, "Cancelled");
  g_free (expected);
  expected = g_strdup_printf ("Cancelled: Entropy · window %d · levels %d",
                              target, test_levels);
  g_assert_cmpstr (es_window_get_last_message (window), ==, expected);
  g_assert_false (gtk_revealer_get_reveal_child (window->progress_revealer));
  g_assert_false (cancel_enabled ());
  assert_job_label ("Entropy · window %d · levels %d · bits", taken[0], test_levels);

  /* The next change computes again, and the notice goes. */
  gate_set (FALSE, FALSE, -1);
  es_window_set_progress_delay (window, ES_WINDOW_PROGRESS_DELAY_MS);
  g_settings_set_int (settings, "window", test_window);
  wait_idle ();
  g_assert_cmpint (shown_window (), ==, test_window);
  g_assert_cmpstr (gtk_label_get_label (window->notice_label), ==, "");
}

/* Colormap, reversed, range and units re-render the result on screen from
 * its values, in every view and the grid, and in exports: they run no job. */
static void
test_display_only (void)
{
  g_autofree char *image = test_image ("images", "camera.png");
  g_autofree char *path = g_build_filename (tmpdir, "shown.out", NULL);
  EsLayer *layer;
  int started;

  set_view ("entropy");
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  started = gate_get (&gate.started);

  g_settings_set_string (settings, "units", "nats");
  wait_idle ();
  assert_job_label ("Entropy · window %d · levels %d · nats", test_window, test_levels);
  g_settings_set_string (settings, "range", "absolute");
  wait_idle ();
  assert_pane_range (0, 0, layer->result.scale.hi);
  g_assert_cmpfloat_with_epsilon (layer->result.scale.hi,
                                  log (MIN (test_levels, test_window * test_window)), 1e-9);
  g_settings_set_string (settings, "colormap", "cividis");
  g_settings_set_boolean (settings, "reversed", FALSE);
  wait_idle ();
  g_assert_cmpint (es_window_get_canvas (window)->panes[0].scale.map, ==, ES_COLORMAP_CIVIDIS);
  g_assert_true (es_window_get_layer (window, ES_VIEW_ENTROPY) == layer);
  g_assert_cmpint (gate_get (&gate.started), ==, started);

  /* The export follows what is shown: nats, the absolute range, cividis. */
  export_shown (path, ES_EXPORT_RAW16, FALSE);
  {
    g_autofree char *expected = expected_export_as (image, ES_VIEW_ENTROPY, ES_EXPORT_RAW16, FALSE,
                                                    ES_RANGE_ABSOLUTE, ES_UNITS_NATS,
                                                    ES_COLORMAP_CIVIDIS, FALSE);
    assert_same_files (path, expected);
  }

  /* In the grid, every pane follows, and still nothing runs. */
  set_view ("grid");
  started = gate_get (&gate.started);
  g_settings_set_string (settings, "range", "auto");
  g_settings_set_string (settings, "units", "bits");
  wait_idle ();
  for (int i = 0; i < es_window_get_canvas (window)->n_panes; i++)
    {
      EsLayer *pane = es_window_get_canvas (window)->panes[i].layer;

      if (pane->view != ES_VIEW_ORIGINAL)
        assert_pane_range (i, pane->min, pane->max);
    }
  g_settings_set_string (settings, "colormap", "magma");
  g_settings_set_boolean (settings, "reversed", TRUE);
  wait_idle ();
  g_assert_cmpint (gate_get (&gate.started), ==, started);
  set_view ("entropy");
  assert_job_label ("Entropy · window %d · levels %d · bits", test_window, test_levels);
}

static const char *
title_of_window (void)
{
  return adw_window_title_get_title (window->window_title);
}

/* The title, the readout and the view belong to the same image at every
 * moment: the old one until the new one's views are ready. */
static void
check_one_image (gpointer data, gpointer unused)
{
  EsSource *source = es_window_get_source (window);
  EsCanvas *canvas = es_window_get_canvas (window);
  g_autofree char *gray = NULL;

  g_assert_nonnull (source);
  g_assert_cmpstr (title_of_window (), ==, source->name);
  for (int i = 0; i < canvas->n_panes; i++)
    g_assert_true (canvas->panes[i].layer->source == source);
  /* The readout of the pixel under the pointer, (1, 1). */
  window->hover_pane = 0;
  window->hover_x = window->hover_y = 1;
  _es_window_update_position (window);
  gray = g_strdup_printf ("gray %5u", es_source_sample (source, 1, 1));
  g_assert_nonnull (strstr (gtk_label_get_label (window->position_label), gray));
}

/* The overlay is revealed, with its Cancel button on screen. */
static gboolean
overlay_shown (gpointer data)
{
  return gtk_revealer_get_reveal_child (window->progress_revealer)
         && gtk_widget_get_mapped (data) && gtk_widget_is_sensitive (data);
}

static GtkWidget *
find_button (GtkWidget *widget, const char *action)
{
  if (GTK_IS_BUTTON (widget)
      && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (widget)), action) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_button (child, action);
      if (found)
        return found;
    }
  return NULL;
}

static void
test_open_together (void)
{
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autofree char *brick = test_image ("images", "brick.png");
  g_autoptr (GFile) brick_file = g_file_new_for_path (brick);
  g_autoptr (GFile) camera_file = g_file_new_for_path (camera);
  GtkWidget *cancel;

  set_view ("entropy");
  g_assert_cmpstr (es_window_get_source (window)->name, ==, "camera.png");

  /* While the new image's views compute, the old one stays, marked. */
  gate_set (TRUE, FALSE, -1);
  es_window_open (window, brick_file);
  wait_until (gate_holds, GINT_TO_POINTER (1), check_one_image, NULL);
  g_assert_cmpstr (title_of_window (), ==, "camera.png");
  g_assert_cmpstr (adw_window_title_get_subtitle (window->window_title), ==, "Opening “brick.png”…");
  gate_set (FALSE, FALSE, -1);
  wait_until (is_idle, NULL, check_one_image, NULL);
  g_assert_cmpstr (title_of_window (), ==, "brick.png");
  g_assert_true (g_str_has_suffix (adw_window_title_get_subtitle (window->window_title), "-bit"));

  /* Cancelling the opening (the overlay's button) keeps the image on screen. */
  es_window_set_progress_delay (window, 0);
  gate_set (TRUE, FALSE, -1);
  es_window_open (window, camera_file);
  wait_until (gate_holds, GINT_TO_POINTER (1), check_one_image, NULL);
  cancel = find_button (GTK_WIDGET (window->progress_revealer), "win.cancel");
  g_assert_nonnull (cancel);
  /* A button is clicked once it is on screen. */
  wait_until (overlay_shown, cancel, NULL, NULL);
  g_assert_cmpstr (gtk_label_get_label (window->progress_title), ==, "Opening “camera.png”");
  g_assert_true (gtk_widget_activate (cancel));
  wait_until (is_idle, NULL, check_one_image, NULL);
  g_assert_cmpstr (title_of_window (), ==, "brick.png");
  g_assert_cmpstr (es_window_get_last_message (window), ==, "Cancelled opening “camera.png”");
  g_assert_true (g_str_has_suffix (adw_window_title_get_subtitle (window->window_title), "-bit"));
  gate_set (FALSE, FALSE, -1);
  es_window_set_progress_delay (window, ES_WINDOW_PROGRESS_DELAY_MS);

  open_path (camera);
  check_one_image (NULL, NULL);
  g_assert_cmpstr (title_of_window (), ==, "camera.png");
}

static gboolean
is_runs_label (GtkWidget *widget, const char *prefix)
{
  return GTK_IS_LABEL (widget) && g_str_has_prefix (gtk_label_get_label (GTK_LABEL (widget)), prefix);
}

static const char *
find_label (GtkWidget *widget, const char *prefix)
{
  if (is_runs_label (widget, prefix))
    return gtk_label_get_label (GTK_LABEL (widget));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child;
       child = gtk_widget_get_next_sibling (child))
    {
      const char *found = find_label (child, prefix);
      if (found)
        return found;
    }
  return NULL;
}

/* The timings overlay shows medians over the last runs of the job on
 * screen, and says of how many. */
static void
test_timing_runs (void)
{
  int taken[4] = { 0 }, a, b;

  set_view ("entropy");
  taken[0] = shown_window ();
  a = taken[1] = window_other_than (taken);
  b = taken[2] = window_other_than (taken);
  for (int i = 0; i < 3; i++)
    {
      g_settings_set_int (settings, "window", a);
      wait_idle ();
      g_settings_set_int (settings, "window", b);
      wait_idle ();
    }
  g_assert_cmpstr (find_label (GTK_WIDGET (window->timings), "median of"), ==,
                   "median of 3 runs of this job");
  g_settings_set_int (settings, "window", a);
  wait_idle ();
  g_assert_cmpstr (find_label (GTK_WIDGET (window->timings), "median of"), ==,
                   "median of 4 runs of this job");
  /* Display changes add no run. */
  g_settings_set_string (settings, "units", "nats");
  wait_idle ();
  g_assert_cmpstr (find_label (GTK_WIDGET (window->timings), "median of"), ==,
                   "median of 4 runs of this job");
  g_settings_set_string (settings, "units", "bits");
  g_settings_set_int (settings, "window", test_window);
  wait_idle ();
}

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autoptr (EsApplication) application = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);

  /* Odd windows of 3..15 and levels 2..64 (to keep the runs short), amounts
   * anywhere in the table's range, on its steps. */
  test_params[ES_PARAM_WINDOW] = 3 + 2 * g_test_rand_int_range (0, 7);
  test_params[ES_PARAM_LEVELS] = g_test_rand_int_range (2, 65);
  test_params[ES_PARAM_AMOUNT] = random_value (es_param (ES_PARAM_AMOUNT));
  for (int id = 0; id < ES_N_PARAMS; id++)
    g_test_message ("%s %.*f", es_param (id)->name, es_param (id)->digits, test_params[id]);

  tmpdir = g_dir_make_tmp ("entroscope-ui-XXXXXX", &error);
  g_assert_no_error (error);
  settings = es_application_create_settings (&error);
  g_assert_no_error (error);
  application = es_application_new (settings, G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (application), NULL, &error);
  g_assert_no_error (error);
  window = es_window_new (ADW_APPLICATION (application), settings);
  gtk_window_present (GTK_WINDOW (window));
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  gate.report = -1;
  es_worker_set_job_hook (es_window_get_worker (window), gate_hook, NULL);

  g_test_add_func ("/ui/colorbar-ticks", test_colorbar_ticks);
  g_test_add_func ("/ui/layer-range", test_layer_range);
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
  g_test_add_func ("/ui/supersede", test_supersede);
  g_test_add_func ("/ui/escape", test_escape);
  g_test_add_func ("/ui/display-only", test_display_only);
  g_test_add_func ("/ui/open-together", test_open_together);
  g_test_add_func ("/ui/timing-runs", test_timing_runs);
  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&settings);
  for (const char *const *name = (const char *const[]) { "shown.out", "expected.out", "pane.png",
                                                         "original.png", "medium.pgm", NULL };
       *name; name++)
    {
      g_autofree char *path = g_build_filename (tmpdir, *name, NULL);
      g_unlink (path);
    }
  g_rmdir (tmpdir);
  return status;
}
