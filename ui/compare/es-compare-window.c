/* SPDX-License-Identifier: MIT */
/* EsCompareWindow: runs es_compare_variants on the worker, shows progress, then bars beside the copy floor. */
#include "es-compare-window.h"
#include "es-compare-window-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

#include "es-accessible.h"
#include "es-bar.h"
#include "es-debug.h"

struct _EsCompareWindow {
  AdwWindow parent_instance;

  GtkDropDown *op_dropdown;
  AdwWindowTitle *window_title;
  GtkStack *stack;
  AdwStatusPage *progress_page;
  GtkProgressBar *progress_bar;
  GtkLabel *chart_heading;
  GtkLabel *chart_engine;
  GtkGrid *chart_grid;
  GtkLabel *chart_footnote;
  GtkLabel *cpu_title;
  GtkLabel *cpu_description;
  GtkButton *use_cuda_button;
  GtkLabel *cpu_heading;
  GtkGrid *cpu_grid;
  GtkLabel *cpu_footnote;
  AdwStatusPage *error_page;

  EsComparer *comparer;      /* weak: the window goes with its parent */
  GCancellable *cancellable; /* of the comparison running, else NULL */
  EsComparison *comparison;  /* on screen */
};

G_DEFINE_FINAL_TYPE (EsCompareWindow, es_compare_window, ADW_TYPE_WINDOW)

/* Text */

static char *
format_ms (double ms)
{
  if (!isfinite (ms))
    return g_strdup ("–");
  if (ms < 0.01)
    return g_strdup_printf ("%.4f ms", ms);
  if (ms < 1)
    return g_strdup_printf ("%.3f ms", ms);
  if (ms < 100)
    return g_strdup_printf ("%.2f ms", ms);
  return g_strdup_printf ("%.1f ms", ms);
}

static char *
format_bytes (size_t bytes)
{
  return bytes >= 10000000 ? g_strdup_printf ("%.0f MB", bytes / 1e6) : g_strdup_printf ("%.2f MB", bytes / 1e6);
}

/* "Entropy, window 5, levels 16": the operation and the parameters it uses. */
static char *
describe_job (const EsJob *job)
{
  g_autofree char *params = es_job_describe_params (job, ", ");

  return g_strconcat (_ (es_op_info (job->op)->title), *params ? ", " : "", params, NULL);
}

/* The command that prints the same numbers (es-cli.c, bench --image). */
static char *
cli_command (const EsComparison *comparison)
{
  const EsJob *job = &comparison->job;
  g_autofree char *path = comparison->source->file ? g_file_get_path (comparison->source->file) : NULL;
  g_autofree char *quoted = g_shell_quote (path ? path : comparison->source->name);
  GString *command = g_string_new ("entroscope-cli bench --image=");

  g_string_append (command, quoted);
  g_string_append_printf (command, " --ops=%s --repeats=%d", es_op_name (job->op), comparison->repeats);
  /* Without a usable GPU the CLI's automatic choice is the CPU too. */
  if (comparison->engine.backend == ES_BACKEND_CPU && comparison->engine.cuda_usable)
    g_string_append (command, " --backend=cpu");
  /* The parameters the operation uses, where they differ from the CLI's defaults. */
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      const EsParam *param = es_param (id);
      double value = es_job_get_param (job, id);

      if (es_op_uses (job->op, id) && value != param->default_value)
        g_string_append_printf (command, " --%s=%g", param->name, value);
    }
  return g_string_free (command, FALSE);
}

/* The chart */

static void
clear_grid (GtkGrid *grid)
{
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (grid)));)
    gtk_grid_remove (grid, child);
}

static GtkWidget *
label_new (const char *text, float xalign, const char *style, const char *style2)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), xalign);
  if (style)
    gtk_widget_add_css_class (label, style);
  if (style2)
    gtk_widget_add_css_class (label, style2);
  return label;
}

typedef struct {
  EsBarKind kind;
  const char *title;
  const char *subtitle;
  const char *lesson; /* under the bar; NULL for none */
  const char *tooltip;
  double value, max, floor;
  const char *value_text;
  const char *extra_text; /* "4.12× floor" */
} ChartRow;

/* One bar: title and id on the left, the bar, its time and its multiple of
 * the floor on the right, the lesson underneath. */
static void
add_chart_row (GtkGrid *grid, int *row, const ChartRow *r)
{
  GtkWidget *names = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *title = label_new (r->title, 0, "compare-title", NULL);
  GtkWidget *bar = es_bar_new (r->kind);
  GtkWidget *value = label_new (r->value_text, 1, "numeric", "compare-value");
  GtkWidget *extra = label_new (r->extra_text, 1, "numeric", "dim-label");

  gtk_label_set_wrap (GTK_LABEL (title), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (title), 26);
  gtk_label_set_width_chars (GTK_LABEL (title), 18);
  gtk_box_append (GTK_BOX (names), title);
  if (r->subtitle)
    gtk_box_append (GTK_BOX (names), label_new (r->subtitle, 0, "dim-label", "caption"));
  gtk_widget_set_valign (names, GTK_ALIGN_CENTER);
  gtk_widget_set_hexpand (bar, TRUE);
  gtk_widget_set_valign (bar, GTK_ALIGN_CENTER);
  es_bar_set (ES_BAR (bar), r->value, r->max, r->floor);
  gtk_widget_set_size_request (value, 84, -1);
  gtk_widget_set_size_request (extra, 92, -1);
  gtk_accessible_update_property (GTK_ACCESSIBLE (bar), GTK_ACCESSIBLE_PROPERTY_LABEL, r->value_text, -1);
  gtk_widget_set_tooltip_text (names, r->tooltip);
  gtk_widget_set_tooltip_text (bar, r->tooltip);

  gtk_grid_attach (grid, names, 0, *row, 1, 1);
  gtk_grid_attach (grid, bar, 1, *row, 1, 1);
  gtk_grid_attach (grid, value, 2, *row, 1, 1);
  gtk_grid_attach (grid, extra, 3, *row, 1, 1);
  (*row)++;
  if (r->lesson)
    {
      GtkWidget *lesson = label_new (r->lesson, 0, "dim-label", "compare-lesson");

      gtk_label_set_wrap (GTK_LABEL (lesson), TRUE);
      gtk_widget_set_tooltip_text (lesson, r->tooltip);
      gtk_grid_attach (grid, lesson, 1, *row, 3, 1);
      (*row)++;
    }
  else
    gtk_widget_add_css_class (names, "compare-last");
}

/* A variant that cannot compute the job is not timed (the engine would run
 * another under its name): its row says why, and which variant runs it. */
static void
add_untimed_row (GtkGrid *grid, int *row, const EsJob *job, const EsCompareRow *v, const char *subtitle, double max,
                 double floor)
{
  EsJob any_variant = *job;
  const EsVariant *runs;
  g_autofree char *why = NULL, *tooltip = NULL;

  any_variant.variant = NULL;
  runs = es_variant_for_job (&any_variant);
  why = g_strdup_printf (_ ("Not for this job: %s; %s runs it."), v->unsupported,
                         runs ? runs->id : _ ("another variant"));
  tooltip = g_strdup_printf ("%s\n\n%s", why, _ (v->lesson));
  add_chart_row (grid, row,
                 &(ChartRow){
                   .kind = ES_BAR_VARIANT,
                   .title = _ (v->label),
                   .subtitle = subtitle,
                   .lesson = why,
                   .tooltip = tooltip,
                   .value = 0,
                   .max = max,
                   .floor = floor,
                   .value_text = _ ("not timed"),
                   .extra_text = "–",
                 });
}

static void
show_chart (EsCompareWindow *self, const EsComparison *comparison)
{
  const EsJob *job = &comparison->job;
  double max = comparison->floor_ms, floor = comparison->floor_ms;
  g_autofree char *what = describe_job (job), *heading = NULL, *floor_text = NULL;
  g_autofree char *in_text = NULL, *out_text = NULL, *footnote = NULL, *command = NULL;
  size_t in_bytes, out_bytes;
  int row = 0;

  clear_grid (self->chart_grid);
  for (size_t i = 0; i < comparison->n_rows; i++)
    if (comparison->rows[i].unsupported == NULL)
      max = MAX (max, comparison->rows[i].kernel_ms);

  heading = g_strdup_printf (_ ("%s: median kernel time of %d runs"), what, comparison->repeats);
  gtk_label_set_label (self->chart_heading, heading);
  gtk_label_set_label (self->chart_engine, comparison->engine.description);

  es_compare_op_bytes (job, (size_t) comparison->source->image.width * (size_t) comparison->source->image.height,
                       &in_bytes, &out_bytes);
  in_text = format_bytes (in_bytes);
  out_text = format_bytes (out_bytes);
  floor_text = format_ms (floor);
  {
    g_autofree char *subtitle = g_strdup_printf (_ ("%s read, %s written"), in_text, out_text);
    ChartRow r = {
      .kind = ES_BAR_FLOOR,
      .title = _ ("Copy floor"),
      .subtitle = subtitle,
      .lesson = _ ("A plain copy kernel that moves the same bytes: no kernel that reads its input "
                   "once and writes its output once can beat it."),
      .tooltip = _ ("The copy floor: the median time of a device-to-device copy kernel of the "
                    "operation's bytes"),
      .value = floor,
      .max = max,
      .floor = NAN,
      .value_text = floor_text,
      .extra_text = "1.00× floor",
    };
    add_chart_row (self->chart_grid, &row, &r);
  }

  for (size_t i = 0; i < comparison->n_rows; i++)
    {
      const EsCompareRow *v = &comparison->rows[i];
      g_autofree char *subtitle = g_strdup_printf ("%s%s", v->id, v->is_default ? " · default" : "");

      if (v->unsupported != NULL)
        {
          add_untimed_row (self->chart_grid, &row, job, v, subtitle, max, floor);
          continue;
        }
      g_autofree char *value = format_ms (v->kernel_ms), *wall = format_ms (v->wall_ms);
      g_autofree char *extra = isfinite (v->floor_multiple) ? g_strdup_printf ("%.2f× floor", v->floor_multiple)
                                                            : g_strdup ("–");
      g_autofree char *tooltip = g_strdup_printf (_ ("%s\n\nFrom: %s\nMedian of %d runs: kernel %s, "
                                                     "end to end %s"),
                                                  _ (v->lesson), v->source && *v->source ? v->source : "–", v->repeats,
                                                  value, wall);
      ChartRow r = {
        .kind = v->is_default ? ES_BAR_DEFAULT : ES_BAR_VARIANT,
        .title = _ (v->label),
        .subtitle = subtitle,
        .lesson = _ (v->lesson),
        .tooltip = tooltip,
        .value = v->kernel_ms,
        .max = max,
        .floor = floor,
        .value_text = value,
        .extra_text = extra,
      };
      add_chart_row (self->chart_grid, &row, &r);
    }

  command = cli_command (comparison);
  footnote = g_markup_printf_escaped (_ ("Kernel times come from CUDA events, after one warm-up "
                                         "run; the dashed line marks the copy floor. Hover over a "
                                         "variant for where its lesson comes from. The same numbers "
                                         "from a shell:\n<tt>%s</tt>"),
                                      command);
  gtk_label_set_markup (self->chart_footnote, footnote);
  gtk_stack_set_visible_child_name (self->stack, "chart");
}

/* Without CUDA there is nothing to compare: say why, what the view would
 * show, and what the CPU takes for the same image. */
static void
show_cpu (EsCompareWindow *self, const EsComparison *comparison)
{
  const EsJob *job = &comparison->job;
  const EsCompareRow *cpu = &comparison->rows[0];
  g_autofree char *what = describe_job (job), *heading = NULL, *description = NULL;
  g_autofree char *value = format_ms (cpu->kernel_ms), *wall = format_ms (cpu->wall_ms);
  g_autofree char *extra = g_strdup_printf ("wall %s", wall);
  g_autofree char *subtitle = g_strdup_printf ("%d threads", es_cpu_thread_count ());
  g_autofree char *command = cli_command (comparison), *footnote = NULL, *tooltip = NULL;
  const char *reason = comparison->engine.cuda_reason;
  int row = 0;

  if (comparison->engine.cuda_usable)
    {
      gtk_label_set_label (self->cpu_title, _ ("The CPU Backend Is Selected"));
      description = g_strdup_printf (_ ("Variants are CUDA kernels: each computes the same result and "
                                        "teaches one lesson about GPU memory. A GPU is available; "
                                        "switch to CUDA to time every %s variant beside the copy "
                                        "floor."),
                                     es_op_name (job->op));
    }
  else
    {
      gtk_label_set_label (self->cpu_title, _ ("Kernel Variants Need CUDA"));
      description = g_strdup_printf (_ ("CUDA is not available: %s. Variants are CUDA kernels: each "
                                        "computes the same result and teaches one lesson about GPU "
                                        "memory. On a computer with an NVIDIA GPU, this view times "
                                        "every variant beside the copy floor, the time a plain copy "
                                        "of the same bytes takes."),
                                     reason && *reason ? reason : _ ("CUDA is not in use"));
    }
  gtk_label_set_label (self->cpu_description, description);
  gtk_widget_set_visible (GTK_WIDGET (self->use_cuda_button), comparison->engine.cuda_usable);

  heading = g_strdup_printf (_ ("%s, on the CPU: median of %d runs"), what, comparison->repeats);
  gtk_label_set_label (self->cpu_heading, heading);
  tooltip = g_strdup_printf (_ ("Median of %d runs after a warm-up: kernel %s, end to end %s"), cpu->repeats, value,
                             wall);
  clear_grid (self->cpu_grid);
  {
    ChartRow r = {
      .kind = ES_BAR_CPU,
      .title = _ (cpu->label),
      .subtitle = subtitle,
      .lesson = _ (cpu->lesson),
      .tooltip = tooltip,
      .value = cpu->kernel_ms,
      .max = cpu->kernel_ms,
      .floor = NAN,
      .value_text = value,
      .extra_text = extra,
    };
    add_chart_row (self->cpu_grid, &row, &r);
  }
  footnote = g_markup_printf_escaped (_ ("The same numbers from a shell:\n<tt>%s</tt>"), command);
  gtk_label_set_markup (self->cpu_footnote, footnote);
  gtk_stack_set_visible_child_name (self->stack, "cpu");
}

/* Running */

static void
set_running (EsCompareWindow *self, gboolean running)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "compare.cancel", running);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "compare.run", !running);
}

static void
on_progress (double fraction, const char *step, gpointer user_data)
{
  EsCompareWindow *self = user_data;
  g_autofree char *text = NULL;

  g_assert (ES_IS_COMPARE_WINDOW (self));
  if (self->progress_bar == NULL) /* disposed */
    return;
  text = step ? g_strdup_printf ("%s…", step) : g_strdup (_ ("Done"));
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  gtk_progress_bar_set_text (self->progress_bar, text);
}

static void
on_compared (GObject *object, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (EsCompareWindow) self = user_data;
  g_autoptr (GError) error = NULL;
  EsComparison *comparison = es_comparer_compare_finish (ES_COMPARER (object), result, &error);

  g_assert (ES_IS_COMPARE_WINDOW (self));

  /* Disposed, or a newer run replaced this one. */
  if (self->stack == NULL || g_task_get_cancellable (G_TASK (result)) != self->cancellable)
    {
      es_comparison_free (comparison);
      return;
    }
  g_clear_object (&self->cancellable);
  set_running (self, FALSE);

  g_clear_pointer (&self->comparison, es_comparison_free);
  if (comparison == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_stack_set_visible_child_name (self->stack, "cancelled");
      else
        {
          adw_status_page_set_description (self->error_page, error->message);
          gtk_stack_set_visible_child_name (self->stack, "error");
        }
      return;
    }
  self->comparison = comparison;
  for (size_t i = 0; i < comparison->n_rows; i++)
    es_debug_log ("compare %s %s: median of %d runs, kernel %.3f ms, wall %.3f ms", es_op_name (comparison->job.op),
                  comparison->rows[i].id, comparison->rows[i].repeats, comparison->rows[i].kernel_ms,
                  comparison->rows[i].wall_ms);
  if (comparison->engine.backend == ES_BACKEND_CUDA)
    show_chart (self, comparison);
  else
    show_cpu (self, comparison);
}

void
es_compare_window_run (EsCompareWindow *self)
{
  EsSource *source;
  EsOp op;
  g_autofree char *subtitle = NULL, *title = NULL;

  g_return_if_fail (ES_IS_COMPARE_WINDOW (self));

  /* The replaced run's answer is dropped when it comes. */
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  set_running (self, FALSE);
  g_clear_pointer (&self->comparison, es_comparison_free);
  source = self->comparer ? es_comparer_get_source (self->comparer) : NULL;
  if (source == NULL)
    {
      adw_window_title_set_subtitle (self->window_title, NULL);
      gtk_stack_set_visible_child_name (self->stack, "empty");
      return;
    }

  op = es_compare_window_get_op (self);
  subtitle = g_strdup_printf ("%s · %d × %d", source->name, source->image.width, source->image.height);
  adw_window_title_set_subtitle (self->window_title, subtitle);
  title = g_strdup_printf (_ ("Timing the %s Variants"), _ (es_op_info (op)->title));
  adw_status_page_set_title (self->progress_page, title);
  adw_status_page_set_description (self->progress_page, _ ("Each one runs once to warm up, then several times for the "
                                                           "median"));
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  gtk_progress_bar_set_text (self->progress_bar, _ ("Waiting for the current view to finish…"));
  /* At once, not with the stack's crossfade: frames drawn during the timed
   * runs would take a core from them (see docs/performance/window-loop.md,
   * "Compare Variants against `entroscope-cli bench`"). The results still
   * fade in. */
  gtk_stack_set_visible_child_full (self->stack, "progress", GTK_STACK_TRANSITION_TYPE_NONE);

  self->cancellable = g_cancellable_new ();
  set_running (self, TRUE);
  es_comparer_compare_async (self->comparer, op, ES_COMPARE_DEFAULT_REPEATS, self->cancellable, on_progress, self,
                             on_compared, g_object_ref (self));
}

void
es_compare_window_cancel (EsCompareWindow *self)
{
  g_return_if_fail (ES_IS_COMPARE_WINDOW (self));

  /* The cancelled run's answer shows the "cancelled" page. */
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
}

gboolean
es_compare_window_get_busy (EsCompareWindow *self)
{
  g_return_val_if_fail (ES_IS_COMPARE_WINDOW (self), FALSE);
  return self->cancellable != NULL;
}

const char *
es_compare_window_get_page (EsCompareWindow *self)
{
  g_return_val_if_fail (ES_IS_COMPARE_WINDOW (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}

const EsComparison *
es_compare_window_get_comparison (EsCompareWindow *self)
{
  g_return_val_if_fail (ES_IS_COMPARE_WINDOW (self), NULL);
  return self->comparison;
}

/* The dropdown lists the operations in table order: item i is EsOp i. */
void
es_compare_window_set_op (EsCompareWindow *self, EsOp op)
{
  g_return_if_fail (ES_IS_COMPARE_WINDOW (self));
  g_return_if_fail ((unsigned) op < ES_N_OPS);

  gtk_drop_down_set_selected (self->op_dropdown, op);
}

EsOp
es_compare_window_get_op (EsCompareWindow *self)
{
  guint selected;

  g_return_val_if_fail (ES_IS_COMPARE_WINDOW (self), ES_OP_ENTROPY);

  selected = gtk_drop_down_get_selected (self->op_dropdown);
  return selected < ES_N_OPS ? (EsOp) selected : ES_OP_ENTROPY;
}

static void
on_op_selected (EsCompareWindow *self)
{
  g_assert (ES_IS_COMPARE_WINDOW (self));

  /* Before the window is shown, the first run is the caller's. */
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    es_compare_window_run (self);
}

static void
run_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsCompareWindow *self = ES_COMPARE_WINDOW (widget);

  g_assert (ES_IS_COMPARE_WINDOW (self));
  es_compare_window_run (self);
}

static void
cancel_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsCompareWindow *self = ES_COMPARE_WINDOW (widget);

  g_assert (ES_IS_COMPARE_WINDOW (self));
  es_compare_window_cancel (self);
}

static void
use_cuda_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsCompareWindow *self = ES_COMPARE_WINDOW (widget);

  g_assert (ES_IS_COMPARE_WINDOW (self));
  if (self->comparer == NULL)
    return;
  es_comparer_set_backend (self->comparer, ES_BACKEND_CUDA);
  es_compare_window_run (self);
}

EsCompareWindow *
es_compare_window_new (GtkWindow *parent, EsComparer *comparer, EsOp op)
{
  EsCompareWindow *self;

  g_return_val_if_fail (GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (ES_IS_COMPARER (comparer), NULL);

  self = g_object_new (ES_TYPE_COMPARE_WINDOW, "transient-for", parent, NULL);
  self->comparer = comparer;
  g_object_add_weak_pointer (G_OBJECT (comparer), (gpointer *) &self->comparer);
  es_compare_window_set_op (self, op);
  return self;
}

static void
es_compare_window_dispose (GObject *object)
{
  EsCompareWindow *self = ES_COMPARE_WINDOW (object);

  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->comparison, es_comparison_free);
  if (self->comparer)
    g_object_remove_weak_pointer (G_OBJECT (self->comparer), (gpointer *) &self->comparer);
  self->comparer = NULL;
  gtk_widget_dispose_template (GTK_WIDGET (self), ES_TYPE_COMPARE_WINDOW);
  G_OBJECT_CLASS (es_compare_window_parent_class)->dispose (object);
}

static void
es_compare_window_class_init (EsCompareWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = es_compare_window_dispose;

  gtk_widget_class_set_template_from_resource (widget_class, "/org/entroscope/Entroscope/es-compare-window.ui");
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, op_dropdown);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, progress_page);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, chart_heading);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, chart_engine);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, chart_grid);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, chart_footnote);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, cpu_title);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, cpu_description);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, use_cuda_button);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, cpu_heading);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, cpu_grid);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, cpu_footnote);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, error_page);
  gtk_widget_class_bind_template_callback (widget_class, on_op_selected);

  gtk_widget_class_install_action (widget_class, "compare.run", NULL, run_action);
  gtk_widget_class_install_action (widget_class, "compare.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "compare.use-cuda", NULL, use_cuda_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "compare.run", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F5, 0, "compare.run", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
es_compare_window_init (EsCompareWindow *self)
{
  g_autoptr (GtkStringList) ops = gtk_string_list_new (NULL);

  gtk_widget_init_template (GTK_WIDGET (self));
  /* Every operation, from the table (see es_compare_window_set_op). */
  for (int op = 0; op < ES_N_OPS; op++)
    gtk_string_list_append (ops, _ (es_op_info (op)->title));
  gtk_drop_down_set_model (self->op_dropdown, G_LIST_MODEL (ops));
  es_accessible_name_drop_down (self->op_dropdown, _ ("Operation"));
  es_accessible_fix_mnemonic_buttons (GTK_WIDGET (self));
  set_running (self, FALSE);
}
