/* SPDX-License-Identifier: MIT */
/* UI tests of the window's loop, with the compute held back at the gate: superseded jobs are cancelled
 * and never shown, Escape cancels, display-only changes run no job, a new image goes on screen with its
 * title at once, the overlay's medians, the timing log's split of a change's time. */
#include "test-ui-common.h"

#include <stdio.h>
#include <unistd.h>

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
  wait_until (gate_holds_job, &(GateCount){ started, 1 }, check_never_shown, forbidden);
  request_window (taken[0]);
  wait_until (gate_holds_job, &(GateCount){ started, 2 }, check_never_shown, forbidden);
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

/* Activates what Escape is bound to on the window, as a key press would:
 * each shortcut in turn until one acts (a disabled action passes it on). */
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

          if (gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (shortcut), escape)
              && gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0, GTK_WIDGET (window),
                                               gtk_shortcut_get_arguments (shortcut)))
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
  /* The side panel shows what the result on screen was computed with. */
  g_assert_cmpint (g_settings_get_int (settings, "window"), ==, taken[0]);
  g_assert_cmpstr (gtk_label_get_label (window->notice_label), ==, "Cancelled");
  g_free (expected);
  expected = g_strdup_printf ("Cancelled: Entropy · window %d · levels %d", target, test_levels);
  g_assert_cmpstr (es_window_get_last_message (window), ==, expected);
  g_assert_false (gtk_revealer_get_reveal_child (window->progress_revealer));
  g_assert_false (cancel_enabled ());
  assert_job_label ("Entropy · %d×%d · clip · %d bins · bits", taken[0], taken[0], test_levels);

  /* The next change computes again, and the notice goes. */
  gate_set (FALSE, FALSE, -1);
  es_window_set_progress_delay (window, ES_WINDOW_PROGRESS_DELAY_MS);
  g_settings_set_int (settings, "window", target);
  wait_idle ();
  g_assert_cmpint (shown_window (), ==, target);
  g_assert_cmpstr (gtk_label_get_label (window->notice_label), ==, "");
  g_settings_set_int (settings, "window", test_window);
  wait_idle ();
  g_assert_cmpint (shown_window (), ==, test_window);

  /* A definition key (the side panel's Border row) goes back as well. */
  gate_set (TRUE, FALSE, -1);
  g_settings_set_string (settings, "border", "mirror");
  wait_until (gate_holds, GINT_TO_POINTER (1), NULL, NULL);
  press_escape ();
  wait_until (gate_holds, GINT_TO_POINTER (0), NULL, NULL);
  wait_idle ();
  g_assert_cmpint (g_settings_get_enum (settings, "border"), ==,
                   es_window_get_layer (window, ES_VIEW_ENTROPY)->job.definition.border);
  g_assert_cmpint (g_settings_get_enum (settings, "border"), ==, 0);
  gate_set (FALSE, FALSE, -1);
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
  assert_job_label ("Entropy · %d×%d · clip · %d bins · nats", test_window, test_window, test_levels);
  g_settings_set_string (settings, "range", "absolute");
  wait_idle ();
  assert_pane_range (0, 0, layer->result.scale.hi);
  g_assert_cmpfloat_with_epsilon (layer->result.scale.hi, log (MIN (test_levels, test_window * test_window)), 1e-9);
  g_settings_set_string (settings, "colormap", "cividis");
  g_settings_set_boolean (settings, "reversed", FALSE);
  wait_idle ();
  g_assert_cmpint (es_window_get_canvas (window)->panes[0].scale.map, ==, ES_COLORMAP_CIVIDIS);
  g_assert_true (es_window_get_layer (window, ES_VIEW_ENTROPY) == layer);
  g_assert_cmpint (gate_get (&gate.started), ==, started);

  /* The export follows what is shown: nats, the absolute range, cividis. */
  export_shown (path, ES_EXPORT_RAW16, FALSE);
  {
    g_autofree char *expected = expected_export_as (image, ES_VIEW_ENTROPY, ES_EXPORT_RAW16, FALSE, ES_RANGE_ABSOLUTE,
                                                    ES_UNITS_NATS, ES_COLORMAP_CIVIDIS, FALSE);
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
  assert_job_label ("Entropy · %d×%d · clip · %d bins · bits", test_window, test_window, test_levels);
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
  return gtk_revealer_get_reveal_child (window->progress_revealer) && gtk_widget_get_mapped (data)
         && gtk_widget_is_sensitive (data);
}

static GtkWidget *
find_button (GtkWidget *widget, const char *action)
{
  if (GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (widget)), action) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
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
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
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
  g_assert_cmpstr (find_label (GTK_WIDGET (window->timings), "median of"), ==, "median of 3 runs of this job");
  g_settings_set_int (settings, "window", a);
  wait_idle ();
  g_assert_cmpstr (find_label (GTK_WIDGET (window->timings), "median of"), ==, "median of 4 runs of this job");
  /* Display changes add no run. */
  g_settings_set_string (settings, "units", "nats");
  wait_idle ();
  g_assert_cmpstr (find_label (GTK_WIDGET (window->timings), "median of"), ==, "median of 4 runs of this job");
  g_settings_set_string (settings, "units", "bits");
  g_settings_set_int (settings, "window", test_window);
  wait_idle ();
}

/* The timings card's Hardware counters check runs the job on screen again
 * with them: measured where the GPU allows, else one line that says why
 * (here, the CPU); unchecked, the line goes. */
static void
test_hardware_counters (void)
{
  GtkWidget *card = GTK_WIDGET (window->timings);
  const char *measured, *missing;

  set_view ("entropy");
  g_assert_cmpstr (find_label (card, "Hardware counters"), ==, "Hardware counters");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.hardware-counters", NULL));
  wait_idle ();
  measured = find_label (card, "Measured by the hardware: DRAM");
  missing = find_label (card, "Hardware counters not available: ");
  g_assert_true ((measured != NULL) != (missing != NULL));
  if (missing)
    g_assert_nonnull (strstr (missing, "The model alone is shown."));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.hardware-counters", NULL));
  wait_idle ();
  g_assert_null (find_label (card, "Hardware counters not available: "));
  g_assert_null (find_label (card, "Measured by the hardware: "));
}

static gboolean
log_shows_change (gpointer data)
{
  g_autofree char *text = NULL;

  fflush (stderr);
  return g_file_get_contents (data, &text, NULL, NULL) && strstr (text, "from request to the new view shown");
}

/* ENTROSCOPE_DEBUG=timing (set for this binary) logs each change shown
 * with its time after es_run split: the worker past es_run, the wait for
 * the frame, the frame's layout and its paint, and what follows. Each part
 * is at least 0, and together they are the time less es_run and the
 * response's way to the main loop and its handling. */
static void
test_timing_log (void)
{
  g_autofree char *path = NULL, *text = NULL;
  int taken[3] = { 0 }, saved = dup (STDERR_FILENO);
  int log = g_file_open_tmp ("entroscope-timing-XXXXXX", &path, NULL);
  double total, worker, run, wait, layout, paint, after;
  const char *line;

  g_assert_cmpint (log, >=, 0);
  g_assert_cmpint (saved, >=, 0);
  set_view ("entropy");
  taken[0] = shown_window ();
  fflush (stderr);
  g_assert_cmpint (dup2 (log, STDERR_FILENO), ==, STDERR_FILENO);
  g_settings_set_int (settings, "window", window_other_than (taken));
  wait_until (log_shows_change, path, NULL, NULL);
  fflush (stderr);
  dup2 (saved, STDERR_FILENO);
  close (saved);
  close (log);

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_unlink (path);
  line = strstr (text, ": ");
  g_assert_nonnull (line);
  g_assert_cmpint (sscanf (line,
                           ": %lf ms from request to the new view shown (worker %lf ms, of which es_run %lf ms; "
                           "then %lf ms to the frame, layout %lf ms, paint %lf ms, %lf ms after)",
                           &total, &worker, &run, &wait, &layout, &paint, &after),
                   ==, 7);
  g_assert_cmpfloat (run, >=, 0);
  g_assert_cmpfloat (worker, >=, run);
  g_assert_cmpfloat (wait, >=, 0);
  g_assert_cmpfloat (layout, >=, 0);
  g_assert_cmpfloat (paint, >=, 0);
  g_assert_cmpfloat (after, >=, 0);
  g_assert_cmpfloat (worker + wait + layout + paint + after, <=, total + 0.5);
  g_settings_set_int (settings, "window", test_window);
  wait_idle ();
}

int
main (int argc, char *argv[])
{
  int status;

  /* Read once, when the window is made (test_timing_log). */
  g_setenv ("ENTROSCOPE_DEBUG", "timing", TRUE);
  ui_test_setup (&argc, &argv);
  {
    /* The loop tests start from an image on screen, with this run's parameters. */
    g_autofree char *camera = test_image ("images", "camera.png");
    open_path (camera);
    set_test_settings ();
  }
  g_test_add_func ("/ui/supersede", test_supersede);
  g_test_add_func ("/ui/escape", test_escape);
  g_test_add_func ("/ui/display-only", test_display_only);
  g_test_add_func ("/ui/open-together", test_open_together);
  g_test_add_func ("/ui/timing-runs", test_timing_runs);
  g_test_add_func ("/ui/hardware-counters", test_hardware_counters);
  g_test_add_func ("/ui/timing-log", test_timing_log);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
