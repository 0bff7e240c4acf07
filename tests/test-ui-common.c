/* SPDX-License-Identifier: MIT */
/* The UI tests' shared window, gate and helpers. */
#include "test-ui-common.h"

GSettings *settings;
GSettings *app_settings;
EsApplication *application;
EsWindow *window;
char *tmpdir;
double test_params[ES_N_PARAMS];
gboolean timed_out;
TestGate gate;

void
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

void
gate_set (gboolean shut, gboolean deaf, double report)
{
  g_mutex_lock (&gate.lock);
  gate.shut = shut;
  gate.deaf = deaf;
  gate.report = report;
  g_cond_broadcast (&gate.cond);
  g_mutex_unlock (&gate.lock);
}

int
gate_get (const int *field)
{
  int value;

  g_mutex_lock (&gate.lock);
  value = *field;
  g_mutex_unlock (&gate.lock);
  return value;
}

gboolean
on_timeout (gpointer data)
{
  timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main loop until nothing is pending and the window is idle (or
 * until *flag is set, when flag is given). */
void
wait_for (gboolean *flag)
{
  guint id;

  timed_out = FALSE;
  id = g_timeout_add_seconds (120, on_timeout, NULL);
  while (!timed_out && (flag ? !*flag : g_main_context_pending (NULL) || es_window_get_busy (window)))
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (timed_out);
  g_source_remove (id);
}

void
wait_idle (void)
{
  wait_for (NULL);
}

/* Runs the main loop until predicate holds; check (if given) runs after
 * every iteration, so that nothing shown for a moment escapes it. */
void
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

gboolean
is_idle (gpointer data)
{
  return !g_main_context_pending (NULL) && !es_window_get_busy (window);
}

/* n jobs wait at the gate. */
gboolean
gate_holds (gpointer data)
{
  return gate_get (&gate.held) == GPOINTER_TO_INT (data);
}

/* The n-th job since *data started is the one held at the gate. */

gboolean
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
gboolean
request_sent (gpointer data)
{
  return window->generation > *(guint64 *) data;
}

char *
test_image (const char *folder, const char *name)
{
  return g_build_filename (g_getenv ("ES_TESTDATA"), folder, name, NULL);
}

void
open_path (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);

  es_window_open (window, file);
  wait_idle ();
}

void
set_view (const char *view)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.view", "s", view));
  wait_idle ();
}

/* A parameter's key holds an "i" or a "d" (the table's digits say which). */
void
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
double
random_value (const EsParam *param)
{
  int steps = (int) round ((param->max - param->min) / param->step);
  double scale = pow (10, param->digits);

  return round ((param->min + g_test_rand_int_range (0, steps + 1) * param->step) * scale) / scale;
}

/* The colour range a pane of the canvas is drawn with. */
void
assert_pane_range (int pane, double lo, double hi)
{
  EsCanvas *canvas = es_window_get_canvas (window);

  g_assert_cmpint (pane, <, canvas->n_panes);
  g_assert_cmpfloat (canvas->panes[pane].scale.lo, ==, lo);
  g_assert_cmpfloat (canvas->panes[pane].scale.hi, ==, hi);
}

/* The status bar's words for the job on screen. */
void
assert_job_label (const char *format, ...)
{
  g_autofree char *expected = NULL;
  va_list args;

  va_start (args, format);
  expected = g_strdup_vprintf (format, args);
  va_end (args);
  g_assert_cmpstr (gtk_label_get_label (window->info_label), ==, expected);
}

/* What the window must write: the same job through es_pipeline_run and
 * es_pipeline_export, set up here from the test's own parameters, on the
 * backend that computed the shown layer (as the CLI on the same machine
 * would: CUDA's entropy may differ from the CPU's in the last float bits). */
char *
expected_export_as (const char *image_path, EsView view, EsExportFormat format, gboolean colorbar, EsRangeMode range,
                    EsUnits units, EsColormap colormap, gboolean reversed)
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
char *
expected_export (const char *image_path, EsView view, EsExportFormat format, gboolean colorbar)
{
  return expected_export_as (image_path, view, format, colorbar, ES_RANGE_AUTO, ES_UNITS_BITS, ES_COLORMAP_MAGMA, TRUE);
}

void
on_exported (GObject *object, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (es_window_export_finish (ES_WINDOW (object), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

void
export_shown (const char *path, EsExportFormat format, gboolean colorbar)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  gboolean done = FALSE;

  es_window_export_async (window, file, format, colorbar, NULL, on_exported, &done);
  wait_for (&done);
  wait_idle ();
}

void
assert_same_files (const char *a, const char *b)
{
  g_autofree char *da = NULL, *db = NULL;
  gsize la, lb;

  g_assert_true (g_file_get_contents (a, &da, &la, NULL));
  g_assert_true (g_file_get_contents (b, &db, &lb, NULL));
  g_assert_cmpuint (la, >, 0);
  g_assert_cmpmem (da, la, db, lb);
}

/* The entropy view with this run's parameters, and every display setting
 * away from its default (magma, reversed, automatic range, bits). */
void
set_test_settings (void)
{
  set_view ("entropy");
  set_params (test_params);
  g_settings_set_string (settings, "colormap", "magma");
  g_settings_set_boolean (settings, "reversed", TRUE);
  g_settings_set_string (settings, "range", "auto");
  g_settings_set_string (settings, "units", "bits");
  wait_idle ();
}

void
ui_test_setup (int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;

  g_test_init (argc, argv, NULL);

  /* Every parameter anywhere in the table's range, on its steps, but odd
   * windows of 3..15 and levels 2..64 (to keep the runs short). */
  for (int id = 0; id < ES_N_PARAMS; id++)
    test_params[id] = random_value (es_param (id));
  test_params[ES_PARAM_WINDOW] = 3 + 2 * g_test_rand_int_range (0, 7);
  test_params[ES_PARAM_LEVELS] = g_test_rand_int_range (2, 65);
  for (int id = 0; id < ES_N_PARAMS; id++)
    g_test_message ("%s %.*f", es_param (id)->name, es_param (id)->digits, test_params[id]);

  tmpdir = g_dir_make_tmp ("entroscope-ui-XXXXXX", &error);
  g_assert_no_error (error);
  app_settings = es_application_create_settings (&error);
  g_assert_no_error (error);
  application = es_application_new (app_settings, G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (application), NULL, &error);
  g_assert_no_error (error);
  window = es_window_new (ADW_APPLICATION (application), app_settings);
  settings = g_object_ref (window->settings);
  gtk_window_present (GTK_WINDOW (window));
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  gate.report = -1;
  es_worker_set_job_hook (es_window_get_worker (window), gate_hook, NULL);
}

void
ui_test_teardown (void)
{

  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&settings);
  g_clear_object (&app_settings);
  for (const char *const *name = (const char *const[]){ "shown.out", "expected.out", "pane.png", "original.png",
                                                        "medium.pgm", NULL };
       *name; name++)
    {
      g_autofree char *path = g_build_filename (tmpdir, *name, NULL);
      g_unlink (path);
    }
  g_rmdir (tmpdir);
  g_clear_object (&application);
}

/* Each test may run alone (-p): the image the window shows in the suite. */
void
ensure_image (void)
{
  if (es_window_get_source (window) == NULL)
    {
      g_autofree char *path = test_image ("images", "camera.png");

      open_path (path);
    }
}

gboolean
window_idle (gpointer data)
{
  return !g_main_context_pending (NULL) && !es_window_get_busy (data) && !es_window_get_busy (window);
}

/* An action's enabled state, as a button bound to it shows it. */
gboolean
action_enabled (EsWindow *which, const char *action)
{
  GtkBox *status_bar = GTK_BOX (gtk_widget_get_parent (GTK_WIDGET (which->position_label)));
  GtkWidget *button = gtk_button_new ();
  gboolean enabled;

  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), action);
  gtk_box_append (status_bar, button);
  enabled = gtk_widget_get_sensitive (button);
  gtk_box_remove (status_bar, button);
  return enabled;
}

/* The last message starts with prefix, and the window is idle. */
gboolean
message_starts (gpointer prefix)
{
  const char *message = es_window_get_last_message (window);

  return message && g_str_has_prefix (message, prefix) && !g_main_context_pending (NULL)
         && !es_window_get_busy (window);
}
