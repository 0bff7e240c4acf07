/* SPDX-License-Identifier: MIT */
/* UI tests of the kernel variants (GTest, under Xvfb): the side panel dims those that cannot run a job and
 * says why and which variant runs it; the timings card says which variant ran when it is not the chosen
 * one; the Compare Variants window draws a CUDA comparison's bandwidths and each variant's resources,
 * from a synthetic comparison (a GPU's comparison runs in test-ui.c where there is one). They need the CUDA
 * variant tables (a CUDA build), not a GPU; without them they are skipped.
 *
 * ES_TEST_SCREENSHOTS=PREFIX saves the Compare window as PREFIX-light-1600x1000.png, PREFIX-dark-640x420.png
 * and so on, and scrolled to the default variant's card as PREFIX-light-1600x1000-cards.png…: run it under
 * LANGUAGE=zh_CN too to see the window in Chinese. */
#include "test-ui-common.h"

#include <glib/gi18n-lib.h>
#include <locale.h>

#include "es-bandwidth-chart.h"
#include "es-intl.h"
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

/* ---- Compare Variants on a synthetic CUDA comparison ---- */

/* An H200's copy floor and kernel times for entropy at 8192², 5×5, 16 levels (PERFORMANCE.md, "What each
 * variant teaches"), its datasheet bandwidth, and kernel resources of the kind the real kernels have. The
 * bytes are the variants' own memory models on the 8192² image; nothing here ran on a GPU. */
#define SYNTHETIC_SIDE 8192
#define SYNTHETIC_FLOOR_MS 0.097
#define SYNTHETIC_DATASHEET_GBS 4800.0

typedef struct {
  const char *id;
  double kernel_ms;
  const char *kernel;
  int registers;
  size_t shared, local_bytes;
  int blocks_per_sm;
  EsHostMemory host_memory;
} SyntheticRow;

static const SyntheticRow synthetic_rows[] = {
  { "naive", 16.91, "entropy kernel", 30, 0, 0, 8, ES_HOST_PINNED },
  { "per-thread-histogram", 11.80, "entropy kernel", 38, 0, 64, 8, ES_HOST_PINNED },
  { "log-table-global", 1.417, "entropy kernel", 32, 16384, 0, 6, ES_HOST_PINNED },
  { "log-table-constant", 1.85, "entropy kernel", 32, 16384, 0, 6, ES_HOST_PINNED },
  { "log-table-shared", 1.43, "entropy kernel", 34, 20480, 0, 5, ES_HOST_PINNED },
  { "shared-tile", 1.93, "entropy kernel", 40, 25600, 0, 4, ES_HOST_PINNED },
  { "fast", 0.187, "pair-counter entropy kernel", 64, 4096, 0, 4, ES_HOST_PINNED },
  { "streams-overlap", 0.686, "pair-counter entropy kernel", 64, 4096, 0, 4, ES_HOST_PINNED },
  { "pageable-transfers", 0.290, "pair-counter entropy kernel", 64, 4096, 0, 4, ES_HOST_PAGEABLE },
  { "per-call-alloc", 0.274, "pair-counter entropy kernel", 64, 4096, 0, 4, ES_HOST_PINNED },
  { "general", 0.686, "span-count entropy kernel", 56, 8192, 0, 4, ES_HOST_PINNED },
};

static const SyntheticRow *
synthetic_row (const char *id)
{
  for (size_t i = 0; i < G_N_ELEMENTS (synthetic_rows); i++)
    if (strcmp (synthetic_rows[i].id, id) == 0)
      return &synthetic_rows[i];
  return NULL;
}

/* Each variant of entropy that runs the default job, recorded as es_compare_variants records a GPU's. */
static EsComparison *
synthetic_comparison (EsSource *source)
{
  EsComparison *comparison = g_new0 (EsComparison, 1);
  const EsExtent extent = es_extent_of (&source->image);
  size_t n;
  const EsVariant *variants = es_variants (ES_OP_ENTROPY, &n);

  comparison->source = es_source_ref (source);
  comparison->job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  comparison->engine.description = g_strdup ("CUDA: synthetic figures of an NVIDIA H200 (sm_90, 132 SMs, 140 GiB)");
  comparison->engine.backend = ES_BACKEND_CUDA;
  comparison->engine.cuda_usable = TRUE;
  comparison->repeats = ES_COMPARE_DEFAULT_REPEATS;
  comparison->floor_ms = SYNTHETIC_FLOOR_MS;
  /* es_comparison_free frees them with free (), as es_compare_variants allocates them. */
  comparison->rows = calloc (n, sizeof *comparison->rows);
  g_assert_nonnull (comparison->rows);
  comparison->n_rows = n;
  for (size_t i = 0; i < n; i++)
    {
      EsCompareRow *row = &comparison->rows[i];
      const SyntheticRow *synthetic = synthetic_row (variants[i].id);
      EsTiming timing = { .backend = ES_BACKEND_CUDA, .variant = variants[i].id };
      EsMetrics *m = &timing.metrics;
      const unsigned threads = 256;

      es_compare_row_init (row, &variants[i]);
      row->unsupported = es_variant_unsupported (&variants[i], &comparison->job);
      if (row->unsupported != NULL)
        continue;
      g_assert_nonnull (synthetic);
      timing.upload_ms = 2.6;
      timing.kernel_ms = synthetic->kernel_ms;
      timing.download_ms = 10.4;
      timing.wall_ms = timing.upload_ms + timing.kernel_ms + timing.download_ms + 0.4;
      m->pixels = es_extent_pixels (&extent);
      variants[i].memory (&comparison->job, &extent, &m->model);
      m->datasheet_gbs = SYNTHETIC_DATASHEET_GBS;
      m->n_kernels = 1;
      m->kernels[0] = (EsKernelInfo){
        .name = synthetic->kernel,
        .grid = { (unsigned) (m->pixels / threads), 1, 1 },
        .block = { threads, 1, 1 },
        .dynamic_shared = synthetic->shared,
        .registers = synthetic->registers,
        .local_bytes = synthetic->local_bytes,
        .blocks_per_sm = synthetic->blocks_per_sm,
        .occupancy = synthetic->blocks_per_sm * threads / 2048.0,
      };
      m->host_memory = synthetic->host_memory;
      m->upload_bytes = m->pixels;
      m->download_bytes = 4 * m->pixels;
      es_timing_update_rates (&timing);
      es_compare_row_record (row, &timing, comparison->repeats, comparison->floor_ms);
    }
  return comparison;
}

/* The CPU's one row for a job of `definition`, as es_compare_variants
 * records it where CUDA cannot run. */
static EsComparison *
cpu_comparison (EsSource *source, const EsEntropyDefinition *definition)
{
  EsComparison *comparison = g_new0 (EsComparison, 1);
  EsTiming timing = { .backend = ES_BACKEND_CPU, .kernel_ms = 3.5, .wall_ms = 3.6 };

  comparison->source = es_source_ref (source);
  comparison->job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  comparison->job.definition = *definition;
  comparison->engine.description = g_strdup ("CPU: OpenMP, 2 threads");
  comparison->engine.backend = ES_BACKEND_CPU;
  comparison->engine.cuda_reason = g_strdup ("no CUDA device in this test");
  comparison->repeats = ES_COMPARE_DEFAULT_REPEATS;
  comparison->floor_ms = NAN;
  comparison->rows = calloc (1, sizeof *comparison->rows);
  g_assert_nonnull (comparison->rows);
  comparison->n_rows = 1;
  es_compare_row_init (&comparison->rows[0], NULL);
  es_compare_row_record (&comparison->rows[0], &timing, comparison->repeats, NAN);
  return comparison;
}

/* An EsComparer whose comparisons are synthetic_comparison's, on an 8192² image. */
#define TEST_TYPE_COMPARER (test_comparer_get_type ())
G_DECLARE_FINAL_TYPE (TestComparer, test_comparer, TEST, COMPARER, GObject)

struct _TestComparer {
  GObject parent_instance;
  EsSource *source;
  /* A comparison without CUDA, of a job of this definition, instead of
   * synthetic_comparison's (cpu_comparison). */
  gboolean on_cpu;
  EsEntropyDefinition definition;
};

static void test_comparer_iface_init (EsComparerInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestComparer, test_comparer, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (ES_TYPE_COMPARER, test_comparer_iface_init))

static EsSource *
test_comparer_get_source (EsComparer *comparer)
{
  return TEST_COMPARER (comparer)->source;
}

static void
test_comparer_compare_async (EsComparer *comparer, EsOp op, int repeats, GCancellable *cancellable,
                             EsCompareProgressFunc progress, gpointer progress_data, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  GTask *task = g_task_new (comparer, cancellable, callback, user_data);

  TestComparer *self = TEST_COMPARER (comparer);

  g_assert_cmpint (op, ==, ES_OP_ENTROPY);
  g_assert_cmpint (repeats, ==, ES_COMPARE_DEFAULT_REPEATS);
  g_task_return_pointer (
    task, self->on_cpu ? cpu_comparison (self->source, &self->definition) : synthetic_comparison (self->source),
    (GDestroyNotify) es_comparison_free);
  g_object_unref (task);
}

static EsComparison *
test_comparer_compare_finish (EsComparer *comparer, GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
test_comparer_set_backend (EsComparer *comparer, EsBackendChoice backend)
{}

static void
test_comparer_iface_init (EsComparerInterface *iface)
{
  iface->get_source = test_comparer_get_source;
  iface->compare_async = test_comparer_compare_async;
  iface->compare_finish = test_comparer_compare_finish;
  iface->set_backend = test_comparer_set_backend;
}

static void
test_comparer_finalize (GObject *object)
{
  es_source_unref (TEST_COMPARER (object)->source);
  G_OBJECT_CLASS (test_comparer_parent_class)->finalize (object);
}

static void
test_comparer_class_init (TestComparerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_comparer_finalize;
}

static void
test_comparer_init (TestComparer *self)
{
  EsImage image = { 0 };
  EsError error = { 0 };

  g_assert_true (es_image_alloc (&image, SYNTHETIC_SIDE, SYNTHETIC_SIDE, ES_FORMAT_U8, 8, &error));
  self->source = es_source_new (NULL, "synthetic-8192.png", &image);
}

static GtkWidget *
find_widget_of_type (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_widget_of_type (child, type);

      if (found)
        return found;
    }
  return NULL;
}

/* The labels under widget, in order; with a CSS class, only those of it
 * (compare-metrics: the lines under the time bars that carry a variant's
 * model and resources). */
static void
collect_labels (GtkWidget *widget, const char *css_class, GPtrArray *labels)
{
  if (GTK_IS_LABEL (widget) && (css_class == NULL || gtk_widget_has_css_class (widget, css_class)))
    g_ptr_array_add (labels, widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    collect_labels (child, css_class, labels);
}

/* Whether the Compare window (data) shows its chart, or its CPU page. */
static gboolean
shows_chart (gpointer data)
{
  return g_strcmp0 (es_compare_window_get_page (data), "chart") == 0;
}

static gboolean
shows_cpu (gpointer data)
{
  return g_strcmp0 (es_compare_window_get_page (data), "cpu") == 0;
}

/* The window as it is drawn, to a PNG. */
static void
save_window (GtkWidget *widget, const char *path)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  g_autoptr (GskRenderNode) node = NULL;
  g_autoptr (GdkTexture) texture = NULL;

  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (snapshot);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (widget)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("saved %s (%d × %d)", path, width, height);
}

/* A Compare window of width × height on the synthetic comparison, its chart on screen. */
static EsCompareWindow *
open_synthetic_compare (TestComparer *comparer, int width, int height)
{
  EsCompareWindow *compare = es_compare_window_new (GTK_WINDOW (window), ES_COMPARER (comparer), ES_OP_ENTROPY);

  gtk_window_set_default_size (GTK_WINDOW (compare), width, height);
  gtk_window_present (GTK_WINDOW (compare));
  es_compare_window_run (compare);
  wait_until (shows_chart, compare, NULL, NULL);
  wait_idle ();
  return compare;
}

/* The bandwidth chart lists every timed variant's GB/s and both peaks for screen readers, and each
 * variant's card gives its bytes, bandwidth and main kernel's resources. */
static void
test_compare_chart (void)
{
  g_autoptr (TestComparer) comparer = NULL;
  g_autoptr (GPtrArray) labels = g_ptr_array_new ();
  EsCompareWindow *compare;
  const EsComparison *comparison;
  EsBandwidthChart *chart;
  EsCompareBandwidth bandwidth;
  const char *description;
  g_autofree char *floor = NULL, *datasheet = NULL;
  size_t timed = 0;

  if (!have_variants ())
    return;
  comparer = g_object_new (TEST_TYPE_COMPARER, NULL);
  compare = open_synthetic_compare (comparer, 1600, 1000);
  comparison = es_compare_window_get_comparison (compare);
  g_assert_nonnull (comparison);

  es_compare_bandwidth (&comparison->job, (size_t) SYNTHETIC_SIDE * SYNTHETIC_SIDE, comparison->rows,
                        comparison->n_rows, comparison->floor_ms, &bandwidth);
  /* 8192² in, float out: 5 bytes a pixel over the floor's time. */
  g_assert_cmpfloat_with_epsilon (bandwidth.floor_gbs, 5.0 * SYNTHETIC_SIDE * SYNTHETIC_SIDE / 1e6 / SYNTHETIC_FLOOR_MS,
                                  1e-6);
  g_assert_cmpfloat (bandwidth.datasheet_gbs, ==, SYNTHETIC_DATASHEET_GBS);

  chart = ES_BANDWIDTH_CHART (find_widget_of_type (GTK_WIDGET (compare), ES_TYPE_BANDWIDTH_CHART));
  g_assert_nonnull (chart);
  g_assert_true (gtk_widget_is_drawable (GTK_WIDGET (chart)));
  description = es_bandwidth_chart_get_description (chart);
  g_test_message ("chart: %s", description);
  floor = es_bandwidth_format (bandwidth.floor_gbs);
  datasheet = es_bandwidth_format (bandwidth.datasheet_gbs);
  g_assert_nonnull (strstr (description, floor));
  g_assert_nonnull (strstr (description, datasheet));

  collect_labels (GTK_WIDGET (compare), "compare-metrics", labels);
  for (size_t i = 0; i < comparison->n_rows; i++)
    {
      const EsCompareRow *row = &comparison->rows[i];
      g_autofree char *gbs = NULL, *named = NULL;
      const char *card;

      if (row->unsupported != NULL)
        {
          named = g_strdup_printf ("%s not timed", row->id);
          g_assert_nonnull (strstr (description, named));
          continue;
        }
      /* Modelled bytes over the median kernel time. */
      g_assert_cmpfloat_with_epsilon (
        row->metrics.achieved_gbs,
        (row->metrics.model.read_bytes + row->metrics.model.write_bytes) / 1e6 / row->kernel_ms, 1e-6);
      gbs = es_bandwidth_format (row->metrics.achieved_gbs);
      named = g_strdup_printf (row->is_default ? "%s (default) %s" : "%s %s", row->id, gbs);
      g_assert_nonnull (strstr (description, named));
      g_assert_cmpuint (timed, <, labels->len);
      card = gtk_label_get_label (labels->pdata[timed++]);
      g_test_message ("%s: %s", row->id, card);
      g_assert_nonnull (strstr (card, gbs));
      g_assert_nonnull (strstr (card, "registers"));
      g_assert_nonnull (strstr (card, row->metrics.kernels[0].local_bytes ? "local a thread" : "no spills"));
      g_assert_nonnull (strstr (gtk_widget_get_tooltip_text (labels->pdata[timed - 1]), row->metrics.kernels[0].name));
    }
  g_assert_cmpuint (timed, ==, labels->len);
  g_assert_cmpuint (timed, >=, 8);
  gtk_window_destroy (GTK_WINDOW (compare));
  wait_idle ();
}

/* Scrolls the chart page to the default variant's card, its bar, model and resources. */
static void
scroll_to_default_card (EsCompareWindow *compare)
{
  g_autoptr (GPtrArray) labels = g_ptr_array_new ();
  const EsComparison *comparison = es_compare_window_get_comparison (compare);
  GtkWidget *scrolled, *label = NULL;
  GtkAdjustment *adjustment;
  size_t timed = 0;
  double x, y;

  collect_labels (GTK_WIDGET (compare), "compare-metrics", labels);
  for (size_t i = 0; i < comparison->n_rows && label == NULL; i++)
    if (comparison->rows[i].unsupported == NULL)
      {
        if (comparison->rows[i].is_default)
          label = labels->pdata[timed];
        timed++;
      }
  g_assert_nonnull (label);
  scrolled = gtk_widget_get_ancestor (label, GTK_TYPE_SCROLLED_WINDOW);
  g_assert_true (gtk_widget_translate_coordinates (
    label, gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (scrolled)), 0, 0, &x, &y));
  adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scrolled));
  gtk_adjustment_set_value (adjustment, y - gtk_adjustment_get_page_size (adjustment) / 3);
  wait_idle ();
}

/* The heading names the job as the status bar does, definition included,
 * and the shell command under the times gives the definition's options,
 * or says what it needs added (a mask's file). */
static void
test_compare_command (void)
{
  for (int custom = 0; custom < 3; custom++)
    {
      g_autoptr (TestComparer) comparer = g_object_new (TEST_TYPE_COMPARER, NULL);
      g_autoptr (GString) text = g_string_new (NULL);
      g_autoptr (GPtrArray) labels = g_ptr_array_new ();
      EsCompareWindow *compare;

      comparer->on_cpu = TRUE;
      if (custom > 0)
        {
          comparer->definition.shape = ES_SHAPE_DISK;
          comparer->definition.radius = 3;
          comparer->definition.border = ES_BORDER_SYMMETRIC;
          comparer->definition.binning = ES_BINNING_EXACT;
        }
      if (custom > 1)
        comparer->definition.mask = &comparer->source->image; /* only its presence matters */
      compare = es_compare_window_new (GTK_WINDOW (window), ES_COMPARER (comparer), ES_OP_ENTROPY);
      gtk_window_present (GTK_WINDOW (compare));
      es_compare_window_run (compare);
      wait_until (shows_cpu, compare, NULL, NULL);
      wait_idle ();
      collect_labels (GTK_WIDGET (compare), NULL, labels);
      for (guint i = 0; i < labels->len; i++)
        g_string_append_printf (text, "%s\n", gtk_label_get_text (labels->pdata[i]));
      g_test_message ("%s", text->str);
      g_assert_nonnull (strstr (text->str, "entroscope-cli bench --image="));
      switch (custom)
        {
        case 0:
          g_assert_nonnull (strstr (text->str, "Entropy · 5×5 · clip · 16 bins · nats, on the CPU"));
          g_assert_nonnull (strstr (text->str, "The same numbers from a shell:\n"));
          g_assert_null (strstr (text->str, " --disk"));
          break;
        case 1:
          g_assert_nonnull (strstr (text->str, "Entropy · disk r=3 · symmetric · exact bins · nats, on the CPU"));
          g_assert_nonnull (strstr (text->str, "The same numbers from a shell:\n"));
          g_assert_nonnull (strstr (text->str, " --disk=3 --border=symmetric --binning=exact"));
          break;
        default:
          g_assert_nonnull (strstr (text->str, "masked, on the CPU"));
          g_assert_nonnull (strstr (text->str, "with the definition's files added (--footprint=FILE, --mask=FILE)"));
          break;
        }
      gtk_window_destroy (GTK_WINDOW (compare));
    }
}

/* ES_TEST_SCREENSHOTS=PREFIX: the synthetic comparison in the light and dark styles, at the screen's size
 * and at the smallest the main window allows. */
static void
test_compare_screenshots (void)
{
  static const int sizes[][2] = { { 1600, 1000 }, { 640, 420 } };
  static const struct {
    const char *name;
    AdwColorScheme scheme;
  } styles[] = { { "light", ADW_COLOR_SCHEME_FORCE_LIGHT }, { "dark", ADW_COLOR_SCHEME_FORCE_DARK } };
  const char *prefix = g_getenv ("ES_TEST_SCREENSHOTS");
  AdwStyleManager *style = adw_style_manager_get_default ();
  AdwColorScheme scheme = adw_style_manager_get_color_scheme (style);
  g_autoptr (TestComparer) comparer = NULL;

  if (prefix == NULL)
    {
      g_test_skip ("ES_TEST_SCREENSHOTS is not set");
      return;
    }
  if (!have_variants ())
    return;
  comparer = g_object_new (TEST_TYPE_COMPARER, NULL);
  /* The chart at once, not half-way through the stack's crossfade to it. */
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  for (size_t s = 0; s < G_N_ELEMENTS (styles); s++)
    for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++)
      {
        g_autofree char *path = g_strdup_printf ("%s-%s-%dx%d.png", prefix, styles[s].name, sizes[i][0], sizes[i][1]);
        EsCompareWindow *compare;

        adw_style_manager_set_color_scheme (style, styles[s].scheme);
        compare = open_synthetic_compare (comparer, sizes[i][0], sizes[i][1]);
        save_window (GTK_WIDGET (compare), path);
        scroll_to_default_card (compare);
        g_free (path);
        path = g_strdup_printf ("%s-%s-%dx%d-cards.png", prefix, styles[s].name, sizes[i][0], sizes[i][1]);
        save_window (GTK_WIDGET (compare), path);
        gtk_window_destroy (GTK_WINDOW (compare));
        wait_idle ();
      }
  adw_style_manager_set_color_scheme (style, scheme);
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", TRUE, NULL);
}

int
main (int argc, char *argv[])
{
  int status;

  /* The language of the environment, as ui/main.c sets it up: ES_TEST_SCREENSHOTS under LANGUAGE=zh_CN
   * shows the window in Chinese (the checks above read English, the tests' default). */
  setlocale (LC_ALL, "");
  es_intl_init ();
  textdomain (GETTEXT_PACKAGE);
  ui_test_setup (&argc, &argv);
  g_test_add_func ("/variants/sidebar", test_sidebar_marks);
  g_test_add_func ("/variants/window", test_window_marks);
  g_test_add_func ("/variants/timings", test_timings_note);
  g_test_add_func ("/variants/compare-chart", test_compare_chart);
  g_test_add_func ("/variants/compare-command", test_compare_command);
  g_test_add_func ("/variants/compare-screenshots", test_compare_screenshots);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
