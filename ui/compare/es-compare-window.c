/* SPDX-License-Identifier: MIT */
/* EsCompareWindow: runs es_compare_variants on the worker, shows progress, then bandwidths and times beside the peaks. */
#include "es-compare-window.h"
#include "es-compare-window-private.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n-lib.h>

#include "es-intl.h"
#include "es-accessible.h"
#include "es-bandwidth-chart.h"
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
  GtkLabel *bandwidth_caption;
  EsBandwidthChart *bandwidth_chart;
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

static char *
format_kib (size_t bytes)
{
  return bytes < 1024 ? g_strdup_printf ("%zu B", bytes) : g_strdup_printf ("%.1f KiB", bytes / 1024.0);
}

/* The main kernel's resources, "occupancy 75%, 40 registers, 4.0 KiB
 * shared, no spills", or NULL where no kernel was recorded (the CPU). */
static char *
kernel_summary (const EsMetrics *m)
{
  const EsKernelInfo *k;
  GString *text;

  if (m->n_kernels == 0)
    return NULL;
  k = &m->kernels[CLAMP (m->main_kernel, 0, m->n_kernels - 1)];
  text = g_string_new (NULL);
  g_string_append_printf (text, _ ("occupancy %.0f%%"), 100 * k->occupancy);
  g_string_append (text, ", ");
  g_string_append_printf (text, _ ("%d registers"), k->registers);
  if (k->static_shared + k->dynamic_shared > 0)
    {
      g_autofree char *shared = format_kib (k->static_shared + k->dynamic_shared);

      g_string_append (text, ", ");
      g_string_append_printf (text, _ ("%s shared"), shared);
    }
  g_string_append (text, ", ");
  if (k->local_bytes > 0)
    {
      g_autofree char *local = format_kib (k->local_bytes);

      g_string_append_printf (text, _ ("%s local a thread"), local);
    }
  else
    g_string_append (text, _ ("no spills"));
  return g_string_free (text, FALSE);
}

/* A variant's memory model, bandwidth and main kernel under its bar: "5.2
 * MB read, 1.0 MB written (24.0 B/px) · 1210 GB/s, 62% of the copy floor,
 * 25% of the datasheet peak", then "occupancy 75%, 40 registers, no
 * spills". NULL without a model. */
static char *
metrics_summary (const EsMetrics *m, double floor_gbs)
{
  const double bytes = m->model.read_bytes + m->model.write_bytes;
  g_autofree char *read = NULL, *written = NULL, *bandwidth = NULL, *kernel = NULL;
  GString *text;

  if (bytes <= 0 || m->pixels <= 0)
    return NULL;
  read = format_bytes ((size_t) m->model.read_bytes);
  written = format_bytes ((size_t) m->model.write_bytes);
  text = g_string_new (NULL);
  g_string_append_printf (text, _ ("%s read, %s written (%.1f B/px)"), read, written, bytes / m->pixels);
  if (m->achieved_gbs > 0)
    {
      bandwidth = es_bandwidth_format (m->achieved_gbs);
      g_string_append_printf (text, " · %s", bandwidth);
      if (isfinite (floor_gbs) && floor_gbs > 0)
        {
          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of the copy floor"), 100 * m->achieved_gbs / floor_gbs);
        }
      else if (m->copy_share > 0)
        {
          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of memcpy"), 100 * m->copy_share);
        }
      if (m->datasheet_share > 0)
        {
          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of the datasheet peak"), 100 * m->datasheet_share);
        }
    }
  /* The main kernel on a line of its own, so that neither half wraps mid-figure. */
  kernel = kernel_summary (m);
  if (kernel)
    g_string_append_printf (text, "\n%s", kernel);
  return g_string_free (text, FALSE);
}

/* Starts a line of `text` (none before the first). */
static void
new_line (GString *text)
{
  if (text->len > 0)
    g_string_append_c (text, '\n');
}

/* Every figure behind the summary line, for its tooltip: the model's
 * bytes, the achieved bandwidth against each peak, each kernel's launch and
 * resources, the transfers. */
static char *
metrics_details (const EsMetrics *m, double floor_gbs)
{
  const double bytes = m->model.read_bytes + m->model.write_bytes;
  GString *text = g_string_new (NULL);

  if (bytes > 0 && m->pixels > 0)
    {
      g_autofree char *read = format_bytes ((size_t) m->model.read_bytes);
      g_autofree char *written = format_bytes ((size_t) m->model.write_bytes);

      g_string_append_printf (text, _ ("Memory model: %s read, %s written, %.2f bytes a pixel"), read, written,
                              bytes / m->pixels);
      if (m->model.shared_bytes > 0)
        {
          g_autofree char *shared = format_bytes ((size_t) m->model.shared_bytes);

          g_string_append (text, "; ");
          g_string_append_printf (text, _ ("%s through shared memory"), shared);
        }
    }
  if (m->achieved_gbs > 0)
    {
      g_autofree char *achieved = es_bandwidth_format (m->achieved_gbs);

      new_line (text);
      g_string_append_printf (text, _ ("Achieved: %s"), achieved);
      if (isfinite (floor_gbs) && floor_gbs > 0)
        {
          g_autofree char *floor = es_bandwidth_format (floor_gbs);

          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of the copy floor (%s)"), 100 * m->achieved_gbs / floor_gbs, floor);
        }
      if (m->copy_gbs > 0)
        {
          g_autofree char *copy = es_bandwidth_format (m->copy_gbs);

          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of memcpy (%s)"), 100 * m->copy_share, copy);
        }
      if (m->datasheet_gbs > 0)
        {
          g_autofree char *datasheet = es_bandwidth_format (m->datasheet_gbs);

          g_string_append (text, ", ");
          g_string_append_printf (text, _ ("%.0f%% of the datasheet peak (%s)"), 100 * m->datasheet_share, datasheet);
        }
    }
  for (int i = 0; i < m->n_kernels; i++)
    {
      const EsKernelInfo *k = &m->kernels[i];
      g_autofree char *local = format_kib (k->local_bytes);

      new_line (text);
      g_string_append_printf (text, i == m->main_kernel ? _ ("%s (the lesson's): ") : "%s: ", k->name);
      g_string_append_printf (text,
                              _ ("grid %u×%u×%u of %u×%u×%u threads, %d registers, %zu + %zu B shared (static + "
                                 "dynamic), %s local a thread, %d blocks an SM, occupancy %.0f%%"),
                              k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2], k->registers,
                              k->static_shared, k->dynamic_shared, local, k->blocks_per_sm, 100 * k->occupancy);
    }
  if (m->host_memory != ES_HOST_NONE)
    {
      new_line (text);
      g_string_append_printf (text, _ ("Transfers: %s, %.1f GB/s up, %.1f GB/s down"),
                              es_host_memory_name (m->host_memory), m->upload_gbs, m->download_gbs);
    }
  return g_string_free (text, FALSE);
}

/* A row's tooltip (taken) followed by every figure of its metrics. */
static char *
add_figures (char *tooltip, const EsMetrics *m, double floor_gbs)
{
  g_autofree char *figures = metrics_details (m, floor_gbs);
  char *text;

  if (*figures == '\0')
    return tooltip;
  text = g_strconcat (tooltip, "\n\n", figures, NULL);
  g_free (tooltip);
  return text;
}

/* The job as the window's status bar names it, "Entropy · 5×5 · clip · 16
 * bins · nats", or where the operation has no definition line, its
 * parameters: "Sharpen, amount 1". */
static char *
describe_job (const EsJob *job)
{
  char definition[192];
  g_autofree char *params = NULL;

  es_job_describe_definition_in (job, job->definition.bits ? "bits" : "nats", es_tr, definition, sizeof definition);
  if (definition[0] != '\0')
    return g_strconcat (_ (es_op_info (job->op)->title), " · ", definition, NULL);
  params = es_job_describe_params (job, ", ");
  return g_strconcat (_ (es_op_info (job->op)->title), *params ? ", " : "", params, NULL);
}

/* The command that prints the same numbers (es-cli.c, bench --image);
 * *complete is FALSE where it cannot give the whole definition. */
static char *
cli_command (const EsComparison *comparison, gboolean *complete)
{
  const EsJob *job = &comparison->job;
  g_autofree char *path = comparison->source->file ? g_file_get_path (comparison->source->file) : NULL;
  g_autofree char *quoted = g_shell_quote (path ? path : comparison->source->name);
  GString *command = g_string_new ("entroscope-cli bench --image=");
  char options[256];

  g_string_append (command, quoted);
  g_string_append_printf (command, " --ops=%s --repeats=%d", es_op_name (job->op), comparison->repeats);
  /* Without a usable GPU the CLI's automatic choice is the CPU too. */
  if (comparison->engine.backend == ES_BACKEND_CPU && comparison->engine.cuda_usable)
    g_string_append (command, " --backend=cpu");
  /* The parameters the operation uses, where they differ from the CLI's
   * defaults, then its definition's options. */
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      const EsParam *param = es_param (id);
      double value = es_job_get_param (job, id);

      if (es_op_uses (job->op, id) && value != param->default_value)
        g_string_append_printf (command, " --%s=%g", param->name, value);
    }
  *complete = es_job_format_definition_options (job, options, sizeof options);
  g_string_append (command, options);
  /* A 2-D window over a volume: bench reads its first page unless told. */
  if (es_image_planes (&comparison->source->image) > 1 && !es_definition_is_3d (&job->definition))
    g_string_append (command, " --volume");
  return g_string_free (command, FALSE);
}

/* What the footnote under the times says, with cli_command: "The same
 * numbers from a shell", or, where the command cannot give the whole
 * definition, what it needs added. */
static char *
command_footnote (const EsComparison *comparison)
{
  gboolean complete;
  g_autofree char *command = cli_command (comparison, &complete);

  if (complete)
    return g_markup_printf_escaped (_ ("The same numbers from a shell:\n<tt>%s</tt>"), command);
  if (comparison->job.op == ES_OP_CLAHE)
    return g_markup_printf_escaped (_ ("From a shell, where bench takes no CLAHE preset and times OpenCV's "
                                       "CLAHE:\n<tt>%s</tt>"),
                                    command);
  return g_markup_printf_escaped (_ ("The same numbers from a shell, with the definition's files added "
                                     "(--footprint=FILE, --mask=FILE):\n<tt>%s</tt>"),
                                  command);
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
  const char *details; /* the memory model and resources, under the bar; NULL for none */
  const char *lesson;  /* under the details; NULL for none */
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
  if (r->details)
    {
      GtkWidget *details = label_new (r->details, 0, "numeric", "compare-metrics");

      gtk_widget_add_css_class (details, "caption");
      gtk_label_set_wrap (GTK_LABEL (details), TRUE);
      gtk_widget_set_tooltip_text (details, r->tooltip);
      gtk_grid_attach (grid, details, 1, *row, 3, 1);
      (*row)++;
    }
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

/* The bandwidth chart: a bar for each variant, the copy floor and the
 * datasheet peak as lines, and a caption that says how to read them. */
static void
show_bandwidth (EsCompareWindow *self, const EsComparison *comparison, const EsCompareBandwidth *bandwidth)
{
  g_autofree EsBandwidthBar *bars = g_new0 (EsBandwidthBar, MAX (comparison->n_rows, 1));
  GString *caption = g_string_new (_ ("Each variant's modelled DRAM bytes over its median kernel time, on a log "
                                      "scale. The dashed line is the copy floor's bandwidth on this image; the "
                                      "solid line the device's datasheet peak."));

  for (size_t i = 0; i < comparison->n_rows; i++)
    {
      const EsCompareRow *v = &comparison->rows[i];

      bars[i] = (EsBandwidthBar){
        .name = v->id,
        .gbs = v->unsupported == NULL && v->repeats > 0 ? v->metrics.achieved_gbs : NAN,
        .is_default = v->is_default,
      };
    }
  es_bandwidth_chart_set (self->bandwidth_chart, bars, (int) comparison->n_rows, bandwidth->floor_gbs,
                          bandwidth->datasheet_gbs);
  /* The models count DRAM bytes as if nothing stayed in the L2 cache
   * between kernels (DESIGN.md §3): on an image that fits in it, a bar can
   * pass the DRAM's peak, and that says the cache served it. */
  if (bandwidth->datasheet_gbs > 0 && bandwidth->fastest_gbs > bandwidth->datasheet_gbs)
    {
      g_string_append_c (caption, ' ');
      g_string_append (caption, _ ("A bar past the datasheet peak was served by the L2 cache: this image fits "
                                   "in it, and the models count the bytes as if it did not."));
    }
  gtk_label_set_label (self->bandwidth_caption, caption->str);
  g_string_free (caption, TRUE);
}

static void
show_chart (EsCompareWindow *self, const EsComparison *comparison)
{
  const EsJob *job = &comparison->job;
  double max = comparison->floor_ms, floor = comparison->floor_ms;
  g_autofree char *what = describe_job (job), *heading = NULL, *floor_text = NULL;
  g_autofree char *in_text = NULL, *out_text = NULL, *footnote = NULL;
  const size_t pixels = (size_t) comparison->source->image.width * (size_t) comparison->source->image.height;
  EsCompareBandwidth bandwidth;
  size_t in_bytes, out_bytes;
  int row = 0;

  clear_grid (self->chart_grid);
  es_compare_bandwidth (job, pixels, comparison->rows, comparison->n_rows, comparison->floor_ms, &bandwidth);
  show_bandwidth (self, comparison, &bandwidth);
  for (size_t i = 0; i < comparison->n_rows; i++)
    if (comparison->rows[i].unsupported == NULL)
      max = MAX (max, comparison->rows[i].kernel_ms);

  heading = g_strdup_printf (_ ("%s: median kernel time of %d runs"), what, comparison->repeats);
  gtk_label_set_label (self->chart_heading, heading);
  gtk_label_set_label (self->chart_engine, comparison->engine.description);

  es_compare_op_bytes (job, pixels, &in_bytes, &out_bytes);
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
      g_autofree char *extra = isfinite (v->floor_multiple) ? g_strdup_printf (_ ("%.2f× floor"), v->floor_multiple)
                                                            : g_strdup ("–");
      g_autofree char *details = metrics_summary (&v->metrics, bandwidth.floor_gbs);
      g_autofree char *tooltip = g_strdup_printf (_ ("%s\n\nFrom: %s\nMedian of %d runs: kernel %s, "
                                                     "end to end %s"),
                                                  _ (v->lesson), v->source && *v->source ? v->source : "–", v->repeats,
                                                  value, wall);

      tooltip = add_figures (tooltip, &v->metrics, bandwidth.floor_gbs);
      ChartRow r = {
        .kind = v->is_default ? ES_BAR_DEFAULT : ES_BAR_VARIANT,
        .title = _ (v->label),
        .subtitle = subtitle,
        .details = details,
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

  {
    g_autofree char *shell = command_footnote (comparison);
    g_autofree char *how = g_markup_escape_text (_ ("Kernel times come from CUDA events, after one warm-up run; "
                                                    "the dashed line marks the copy floor. Hover over a variant "
                                                    "for where its lesson comes from."),
                                                 -1);

    footnote = g_strconcat (how, " ", shell, NULL);
  }
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
  g_autofree char *extra = g_strdup_printf (_ ("wall %s"), wall);
  g_autofree char *subtitle = g_strdup_printf (
    dngettext (GETTEXT_PACKAGE, "%d thread", "%d threads", (unsigned long) es_cpu_thread_count ()),
    es_cpu_thread_count ());
  g_autofree char *footnote = NULL, *tooltip = NULL;
  g_autofree char *details = metrics_summary (&cpu->metrics, NAN);
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
                                     reason && *reason ? _ (reason) : _ ("CUDA is not in use"));
    }
  gtk_label_set_label (self->cpu_description, description);
  gtk_widget_set_visible (GTK_WIDGET (self->use_cuda_button), comparison->engine.cuda_usable);

  heading = g_strdup_printf (_ ("%s, on the CPU: median of %d runs"), what, comparison->repeats);
  gtk_label_set_label (self->cpu_heading, heading);
  tooltip = g_strdup_printf (_ ("Median of %d runs after a warm-up: kernel %s, end to end %s"), cpu->repeats, value,
                             wall);
  tooltip = add_figures (tooltip, &cpu->metrics, NAN);
  clear_grid (self->cpu_grid);
  {
    ChartRow r = {
      .kind = ES_BAR_CPU,
      .title = _ (cpu->label),
      .subtitle = subtitle,
      .details = details,
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
  footnote = command_footnote (comparison);
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
  g_type_ensure (ES_TYPE_BANDWIDTH_CHART);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/entroscope/Entroscope/es-compare-window.ui");
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, op_dropdown);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, window_title);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, progress_page);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, chart_heading);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, chart_engine);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, bandwidth_caption);
  gtk_widget_class_bind_template_child (widget_class, EsCompareWindow, bandwidth_chart);
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
