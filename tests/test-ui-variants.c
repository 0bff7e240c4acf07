/* SPDX-License-Identifier: MIT */
/* UI tests of the kernel variants that cannot run a job, or run it slowly (GTest, under Xvfb): the side
 * panel dims them and says why and which variant runs it; the timings card says which variant ran when
 * it is not the chosen one. They need the CUDA variant tables (a CUDA build), not a GPU; without them they
 * are skipped. The Compare Variants chart is drawn only from a CUDA comparison, which needs a GPU. */
#include "test-ui-common.h"

#include "es-sidebar.h"
#include "es-timings.h"

/* The variant row of the side panel titled `label`, or NULL. */
static AdwActionRow *
find_row (GtkWidget *widget, const char *label)
{
  if (ADW_IS_ACTION_ROW (widget)
      && g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)), label) == 0)
    return ADW_ACTION_ROW (widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      AdwActionRow *row = find_row (child, label);

      if (row)
        return row;
    }
  return NULL;
}

static AdwActionRow *
variant_row (const char *id)
{
  const EsVariant *variant = es_variant_find (ES_OP_ENTROPY, id);
  AdwActionRow *row;

  g_assert_nonnull (variant);
  row = find_row (GTK_WIDGET (window->sidebar), variant->label);
  g_assert_nonnull (row);
  return row;
}

static gboolean
have_variants (void)
{
  size_t n;

  es_variants (ES_OP_ENTROPY, &n);
  if (n == 0)
    g_test_skip ("this build has no CUDA kernel variants");
  return n > 0;
}

/* A row marked for a job it cannot run: dimmed, subtitle naming the variant that runs it, tooltip
 * with the reason the variant table gives. */
static void
assert_not_for_job (const char *id, const EsJob *job, const char *runs)
{
  AdwActionRow *row = variant_row (id);
  g_autofree char *subtitle = g_strdup_printf (" · not for this job: %s runs it", runs);
  const char *tooltip = gtk_widget_get_tooltip_text (GTK_WIDGET (row));
  const char *why = es_variant_unsupported (es_variant_find (ES_OP_ENTROPY, id), job);

  g_assert_nonnull (why);
  g_assert_true (g_str_has_suffix (adw_action_row_get_subtitle (row), subtitle));
  g_assert_true (g_str_has_prefix (adw_action_row_get_subtitle (row), id));
  g_assert_nonnull (strstr (tooltip, why));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (row), "dim-label"));
}

/* A row for a job it runs: not dimmed, its id (and " · default"), and `slow` when it takes its slow
 * path. */
static void
assert_runs_job (const char *id, gboolean is_default, gboolean slow)
{
  AdwActionRow *row = variant_row (id);
  g_autofree char *subtitle = g_strdup_printf ("%s%s%s", id, is_default ? " · default" : "",
                                               slow ? " · slow path for this job" : "");

  g_assert_cmpstr (adw_action_row_get_subtitle (row), ==, subtitle);
  g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (row), "dim-label"));
}

/* es_sidebar_mark_variants against the variant table, for a disk, a large window and the default. */
static void
test_sidebar_marks (void)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

  if (!have_variants ())
    return;
  es_sidebar_set_variants (window->sidebar, TRUE, ES_OP_ENTROPY, FALSE);

  job.definition.shape = ES_SHAPE_DISK;
  job.definition.radius = 4;
  es_sidebar_mark_variants (window->sidebar, &job);
  assert_not_for_job ("fast", &job, "general");
  assert_not_for_job ("naive", &job, "general");
  assert_runs_job ("general", FALSE, FALSE);

  job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  job.window = 11;
  es_sidebar_mark_variants (window->sidebar, &job);
  assert_runs_job ("fast", TRUE, TRUE);
  g_assert_nonnull (strstr (gtk_widget_get_tooltip_text (GTK_WIDGET (variant_row ("fast"))),
                            es_variant_slow_path (es_variant_find (ES_OP_ENTROPY, "fast"), &job)));
  assert_runs_job ("naive", FALSE, FALSE);

  /* Back to the default job: the marks go. */
  job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  es_sidebar_mark_variants (window->sidebar, &job);
  assert_runs_job ("fast", TRUE, FALSE);
  assert_runs_job ("naive", FALSE, FALSE);
  g_assert_cmpstr (gtk_widget_get_tooltip_text (GTK_WIDGET (variant_row ("naive"))), ==,
                   es_variant_find (ES_OP_ENTROPY, "naive")->lesson);
}

/* The window marks the rows for the job on screen: a disk chosen in the side panel. */
static void
test_window_marks (void)
{
  EsJob job;

  if (!have_variants ())
    return;
  ensure_image ();
  set_view ("entropy");
  g_settings_set_string (settings, "shape", "disk");
  g_settings_set_int (settings, "radius", 3);
  wait_idle ();
  es_window_get_view_job (window, ES_VIEW_ENTROPY, &job);
  g_assert_cmpint (job.definition.shape, ==, ES_SHAPE_DISK);
  assert_not_for_job ("fast", &job, "general");
  assert_runs_job ("general", FALSE, FALSE);

  g_settings_set_string (settings, "shape", "square");
  wait_idle ();
  es_window_get_view_job (window, ES_VIEW_ENTROPY, &job);
  assert_runs_job ("fast", TRUE, es_variant_slow_path (es_variant_find (ES_OP_ENTROPY, "fast"), &job) != NULL);
}

/* The timings card's note: the variant that ran, when the chosen one cannot run the job; the slow
 * path; nothing on the CPU or for a job the chosen variant runs at speed. */
static void
test_timings_note (void)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsTiming timing = { .backend = ES_BACKEND_CUDA, .variant = "general" };
  g_autofree char *expected = NULL, *note = NULL;
  const EsVariant *fast;

  if (!have_variants ())
    return;
  fast = es_variant_find (ES_OP_ENTROPY, "fast");
  job.variant = "fast";
  job.definition.shape = ES_SHAPE_DISK;
  job.definition.radius = 2;
  note = es_timings_variant_note (&job, &timing);
  expected = g_strdup_printf ("general ran: fast %s", es_variant_unsupported (fast, &job));
  g_assert_cmpstr (note, ==, expected);
  g_clear_pointer (&note, g_free);
  g_clear_pointer (&expected, g_free);

  /* No variant named: the default one was chosen. */
  job.variant = NULL;
  note = es_timings_variant_note (&job, &timing);
  g_assert_true (g_str_has_prefix (note, "general ran: fast "));
  g_clear_pointer (&note, g_free);

  job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  job.window = 15;
  timing.variant = "fast";
  note = es_timings_variant_note (&job, &timing);
  expected = g_strdup_printf ("fast ran on its %s", es_variant_slow_path (fast, &job));
  g_assert_cmpstr (note, ==, expected);
  g_clear_pointer (&note, g_free);

  job.window = 5;
  g_assert_null (es_timings_variant_note (&job, &timing));
  timing = (EsTiming){ .backend = ES_BACKEND_CPU, .variant = "cpu" };
  job.definition.shape = ES_SHAPE_DISK;
  g_assert_null (es_timings_variant_note (&job, &timing));
}

int
main (int argc, char *argv[])
{
  int status;

  ui_test_setup (&argc, &argv);
  g_test_add_func ("/variants/sidebar", test_sidebar_marks);
  g_test_add_func ("/variants/window", test_window_marks);
  g_test_add_func ("/variants/timings", test_timings_note);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
