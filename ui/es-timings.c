/* SPDX-License-Identifier: MIT */
/* EsTimings: fills the card with the medians of the last runs of the job on screen, and with how long
 * opening the image on screen took. */
#include "es-timings.h"

#include <pango/pangocairo.h>
#include <string.h>
#include <glib/gi18n-lib.h>

struct _EsTimings {
  GtkWidget parent_instance;

  GtkLabel *device_label;
  GtkLabel *reason_label;
  GtkLabel *job_label;
  GtkLabel *upload_label;
  GtkLabel *kernel_label;
  GtkLabel *download_label;
  GtkLabel *total_label;
  GtkLabel *rate_label;
  GtkLabel *bandwidth_label;
  GtkLabel *occupancy_label;
  GtkCheckButton *counters_check;
  GtkLabel *counters_label;
  GtkLabel *runs_label;
  GtkLabel *note_label;
  GtkWidget *open_box;
  GtkLabel *open_title;
  GtkLabel *open_decode_label;
  GtkLabel *open_compute_label;
  GtkLabel *open_rest_label;
  GtkLabel *open_total_title;
  GtkLabel *open_total_label;

  char *open_name; /* NULL: no opening shown */
  EsOpenTiming open;
};

G_DEFINE_FINAL_TYPE (EsTimings, es_timings, GTK_TYPE_WIDGET)

static void
set_ms (GtkLabel *label, double ms)
{
  char text[32];

  g_snprintf (text, sizeof text, "%.2f ms", ms);
  gtk_label_set_label (label, text);
}

char *
es_timings_overlay_text (const EsLayer *layer, const EsTiming *timing)
{
  g_autofree char *backend = NULL;

  if (layer->view == ES_VIEW_ORIGINAL)
    return g_strdup (_ ("Original · no kernel"));
  backend = g_ascii_strup (es_backend_name (timing->backend), -1);
  /* One line names what ran, one gives its figures: the kernel's time and
   * what it achieved (the memory model's bytes over that time, as the
   * Timings card's Memory row), then the time end to end. */
  if (timing->metrics.achieved_gbs > 0)
    return g_strdup_printf (_ ("%s · %s\nkernel %.2f ms · %.1f GB/s · end to end %.2f ms"), backend,
                            timing->variant ? timing->variant : "default", timing->kernel_ms,
                            timing->metrics.achieved_gbs, timing->wall_ms);
  return g_strdup_printf (_ ("%s · %s\nkernel %.2f ms · end to end %.2f ms"), backend,
                          timing->variant ? timing->variant : "default", timing->kernel_ms, timing->wall_ms);
}

static void
rounded_rectangle (cairo_t *cr, double width, double height, double radius)
{
  cairo_new_sub_path (cr);
  cairo_arc (cr, width - radius, radius, radius, -G_PI / 2, 0);
  cairo_arc (cr, width - radius, height - radius, radius, 0, G_PI / 2);
  cairo_arc (cr, radius, height - radius, radius, G_PI / 2, G_PI);
  cairo_arc (cr, radius, radius, radius, G_PI, 3 * G_PI / 2);
  cairo_close_path (cr);
}

void
es_timings_overlay_draw (const char *text, guint8 *rgb, size_t stride, int x, int y, int width, int height)
{
  /* The canvas's overlay is 12 px text on a screen that shows some 800
   * pixels of the image: the same proportion on the image itself. */
  double size = 12 * MAX (1.0, MIN (width, height) / 800.0);
  int pad_x = (int) (size * 2 / 3), pad_y = (int) (size / 4), margin = (int) (size * 2 / 3);
  g_autoptr (PangoFontDescription) font = pango_font_description_from_string ("Sans");
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (surface);
  PangoLayout *layout = pango_cairo_create_layout (cr);
  int text_width, text_height, box_x, box_y, box_width, box_height;
  guint32 *pixels;
  int surface_stride;

  pango_font_description_set_absolute_size (font, size * PANGO_SCALE);
  pango_layout_set_font_description (layout, font);
  pango_layout_set_text (layout, text, -1);
  pango_layout_get_pixel_size (layout, &text_width, &text_height);
  cairo_destroy (cr);
  cairo_surface_destroy (surface);

  box_width = MIN (text_width + 2 * pad_x, width);
  box_height = MIN (text_height + 2 * pad_y, height);
  box_x = x + MIN (margin, width - box_width);
  box_y = y + MAX (height - margin - box_height, 0);

  /* Only the box's pixels go through cairo and back. */
  surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, box_width, box_height);
  pixels = (guint32 *) cairo_image_surface_get_data (surface);
  surface_stride = cairo_image_surface_get_stride (surface) / 4;
  for (int j = 0; j < box_height; j++)
    for (int i = 0; i < box_width; i++)
      {
        const guint8 *p = rgb + (size_t) (box_y + j) * stride + 3 * (size_t) (box_x + i);

        pixels[j * surface_stride + i] = 0xff000000u | (guint32) p[0] << 16 | (guint32) p[1] << 8 | p[2];
      }
  cairo_surface_mark_dirty (surface);
  cr = cairo_create (surface);
  rounded_rectangle (cr, box_width, box_height, size / 2);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.65);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_move_to (cr, pad_x, pad_y);
  pango_cairo_update_layout (cr, layout);
  pango_cairo_show_layout (cr, layout);
  cairo_destroy (cr);
  cairo_surface_flush (surface);
  for (int j = 0; j < box_height; j++)
    for (int i = 0; i < box_width; i++)
      {
        guint32 v = pixels[j * surface_stride + i];
        guint8 *p = rgb + (size_t) (box_y + j) * stride + 3 * (size_t) (box_x + i);

        p[0] = v >> 16;
        p[1] = v >> 8;
        p[2] = v;
      }
  cairo_surface_destroy (surface);
  g_object_unref (layout);
}

char *
es_timings_variant_note (const EsJob *job, const EsTiming *timing)
{
  const EsVariant *chosen, *ran;
  const char *why;

  if (timing->backend != ES_BACKEND_CUDA || timing->variant == NULL)
    return NULL;
  chosen = es_variant_find (job->op, job->variant);
  ran = es_variant_find (job->op, timing->variant);
  if (chosen == NULL || ran == NULL)
    return NULL;
  if (chosen != ran)
    {
      why = es_variant_unsupported (chosen, job);
      return g_strdup_printf (_ ("%s ran: %s %s"), ran->id, chosen->id, why ? why : _ ("did not run this job"));
    }
  why = es_variant_slow_path (ran, job);
  return why ? g_strdup_printf (_ ("%s ran on its %s"), ran->id, why) : NULL;
}

/* "812 GB/s · 24% of peak" (the copy floor when measured, else the
 * datasheet), and "38% · 40 registers" with the spills, if any, of the
 * main kernel; "—" where the run has no such figure (the CPU has no
 * occupancy, the original view no run). */
static void
set_metrics (EsTimings *self, const EsTiming *timing)
{
  const EsMetrics *m = timing ? &timing->metrics : NULL;
  const EsKernelInfo *k = m && m->n_kernels > 0 && m->main_kernel >= 0 && m->main_kernel < m->n_kernels
                            ? &m->kernels[m->main_kernel]
                            : NULL;
  const double share = m ? (m->copy_share > 0 ? m->copy_share : m->datasheet_share) : 0;
  g_autofree char *bandwidth = NULL, *occupancy = NULL;

  if (m && m->achieved_gbs > 0)
    bandwidth = share > 0 ? g_strdup_printf (_ ("%.1f GB/s · %.0f%% of peak"), m->achieved_gbs, 100 * share)
                          : g_strdup_printf ("%.1f GB/s", m->achieved_gbs);
  if (k && k->occupancy > 0)
    occupancy = k->local_bytes > 0 ? g_strdup_printf (_ ("%.0f%% · %d registers · %zu B local"), 100 * k->occupancy,
                                                      k->registers, k->local_bytes)
                                   : g_strdup_printf (_ ("%.0f%% · %d registers"), 100 * k->occupancy, k->registers);
  gtk_label_set_label (self->bandwidth_label, bandwidth ? bandwidth : "—");
  gtk_label_set_label (self->occupancy_label, occupancy ? occupancy : "—");
}

/* What the hardware counted beside what the model says, marked as
 * measured; or, where the run asked and has none, why (the model above
 * stands alone); nothing while the check is off, though a result computed
 * with counters may still be on screen. */
static void
set_counters (EsTimings *self, const EsTiming *timing)
{
  const EsMetrics *m = timing && gtk_check_button_get_active (self->counters_check) ? &timing->metrics : NULL;
  const EsCounters *c = m ? &m->counters : NULL;
  g_autofree char *text = NULL;

  if (c && c->measured)
    text = g_strdup_printf (_ ("Measured by the hardware: DRAM %.1f MB read, %.1f MB written (model %.1f, %.1f) · "
                               "L2 hit rate %.0f%% · achieved occupancy %.0f%% · %.0f shared-memory bank conflicts · "
                               "%.2f MB of local memory"),
                            c->dram_read_bytes / 1e6, c->dram_write_bytes / 1e6, m->model.read_bytes / 1e6,
                            m->model.write_bytes / 1e6, 100 * c->l2_hit_rate, 100 * c->achieved_occupancy,
                            c->shared_bank_conflicts, c->local_bytes / 1e6);
  else if (m && m->counters_note[0] != '\0')
    text = g_strdup_printf (_ ("Hardware counters not available: %s. The model alone is shown."), _ (m->counters_note));
  gtk_label_set_label (self->counters_label, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->counters_label), text != NULL);
}

void
es_timings_update (EsTimings *self, const char *engine_description, const EsLayer *layer, const EsTiming *timing,
                   int n_runs)
{
  g_autofree char *job = NULL, *device = NULL, *cpu = NULL, *runs = NULL, *note = NULL;
  char *reason;
  /* A plane of a volume was computed with the whole volume: the rate counts
   * every voxel the job computed, not the plane shown. */
  const EsLayer *computed = layer->volume ? layer->volume : layer;
  int planes = es_image_planes (&computed->result.values);
  double mpx = (double) es_layer_width (computed) * es_layer_height (computed) * planes / 1e6;
  const char *unit = planes > 1 ? "Mvox/s" : "Mpx/s";
  char rate[32];

  g_return_if_fail (ES_IS_TIMINGS (self));

  gtk_widget_set_visible (GTK_WIDGET (self), TRUE);

  /* "CPU: OpenMP, 2 threads (why not CUDA)": the reason goes on its own line. */
  device = g_strdup (engine_description ? engine_description : "");
  if ((reason = strstr (device, " (")) && g_str_has_suffix (reason, ")"))
    {
      *reason = '\0';
      reason += 2;
      reason[strlen (reason) - 1] = '\0';
    }
  else
    reason = NULL;
  /* compute/ describes its engine in English: the CPU line is said again
   * here, and the reasons it marks (N_) are translated; a driver's own
   * message stays as the driver wrote it. */
  if (g_str_has_prefix (device, "CPU: OpenMP"))
    cpu = g_strdup_printf (dngettext (GETTEXT_PACKAGE, "CPU: OpenMP, %d thread", "CPU: OpenMP, %d threads",
                                      (unsigned long) es_cpu_thread_count ()),
                           es_cpu_thread_count ());
  gtk_label_set_label (self->device_label, cpu ? cpu : device);
  gtk_label_set_label (self->reason_label, reason ? _ (reason) : "");
  gtk_widget_set_visible (GTK_WIDGET (self->reason_label), reason != NULL);
  if (layer->view == ES_VIEW_ORIGINAL)
    {
      gtk_label_set_label (self->job_label, _ ("Original · no kernel"));
      timing = NULL;
    }
  else
    {
      job = g_strdup_printf (_ ("%s · %s backend · variant %s"), es_view_title (layer->view),
                             es_backend_name (timing->backend), timing->variant ? timing->variant : "default");
      gtk_label_set_label (self->job_label, job);
    }

  set_ms (self->upload_label, timing ? timing->upload_ms : 0);
  set_ms (self->kernel_label, timing ? timing->kernel_ms : 0);
  set_ms (self->download_label, timing ? timing->download_ms : 0);
  set_ms (self->total_label, timing ? timing->wall_ms : 0);
  if (timing && timing->wall_ms > 0)
    {
      double rate_mpx = mpx / (timing->wall_ms / 1000.0);
      g_snprintf (rate, sizeof rate, rate_mpx >= 1 ? "%.1f %s" : "%.4f %s", rate_mpx, unit);
    }
  else
    g_strlcpy (rate, "—", sizeof rate);
  gtk_label_set_label (self->rate_label, rate);
  set_metrics (self, timing);
  set_counters (self, timing);

  /* One run says little on a busy computer: the figures are medians, and
   * say of how many runs of this very job (image, parameters, backend and
   * variant); running it again, e.g. after trying another value, adds one. */
  if (timing && n_runs > 1)
    runs = g_strdup_printf (_ ("median of %d runs of this job"), n_runs);
  else if (timing)
    runs = g_strdup (_ ("one run of this job so far"));
  gtk_label_set_label (self->runs_label, runs ? runs : "");
  gtk_widget_set_visible (GTK_WIDGET (self->runs_label), runs != NULL);

  note = timing == NULL      ? NULL
         : timing->fell_back ? g_strdup (_ ("CUDA failed during this job; the CPU finished it"))
                             : es_timings_variant_note (&layer->job, timing);
  gtk_label_set_label (self->note_label, note ? note : "");
  gtk_widget_set_visible (GTK_WIDGET (self->note_label), note != NULL);
}

/* Opening takes from milliseconds to seconds: tenths matter only below 100 ms. */
static void
set_open_ms (GtkLabel *label, double ms)
{
  char text[32];

  g_snprintf (text, sizeof text, ms < 100 ? "%.1f ms" : "%.0f ms", ms);
  gtk_label_set_label (label, text);
}

void
es_timings_set_open (EsTimings *self, const char *name, const EsOpenTiming *open)
{
  g_autofree char *title = NULL;

  g_return_if_fail (ES_IS_TIMINGS (self));
  g_return_if_fail (name == NULL || open != NULL);

  g_clear_pointer (&self->open_name, g_free);
  gtk_widget_set_visible (self->open_box, name != NULL);
  if (name == NULL)
    return;
  self->open_name = g_strdup (name);
  self->open = *open;
  title = g_strdup_printf (_ ("Opening “%s”"), name);
  gtk_label_set_label (self->open_title, title);
  set_open_ms (self->open_decode_label, open->decode_ms);
  set_open_ms (self->open_compute_label, open->compute_ms);
  set_open_ms (self->open_rest_label, MAX (0, open->total_ms - open->decode_ms - open->compute_ms));
  gtk_label_set_label (self->open_total_title, open->heatmap ? _ ("to first heatmap") : _ ("to first view"));
  set_open_ms (self->open_total_label, open->total_ms);
}

gboolean
es_timings_get_open (EsTimings *self, const char **name, EsOpenTiming *open)
{
  g_return_val_if_fail (ES_IS_TIMINGS (self), FALSE);

  if (self->open_name == NULL || !gtk_widget_get_visible (self->open_box))
    return FALSE;
  *name = self->open_name;
  *open = self->open;
  return TRUE;
}

static void
es_timings_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), ES_TYPE_TIMINGS);
  /* The template's top-level box is not bound: unparent it here. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (es_timings_parent_class)->dispose (object);
}

static void
es_timings_finalize (GObject *object)
{
  g_free (ES_TIMINGS (object)->open_name);
  G_OBJECT_CLASS (es_timings_parent_class)->finalize (object);
}

static void
es_timings_class_init (EsTimingsClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = es_timings_dispose;
  G_OBJECT_CLASS (klass)->finalize = es_timings_finalize;
  gtk_widget_class_set_template_from_resource (widget_class, "/org/entroscope/Entroscope/es-timings.ui");
  gtk_widget_class_bind_template_child (widget_class, EsTimings, device_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, reason_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, job_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, upload_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, kernel_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, download_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, total_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, rate_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, bandwidth_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, occupancy_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, counters_check);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, counters_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, runs_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, note_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, open_box);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, open_title);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, open_decode_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, open_compute_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, open_rest_label);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, open_total_title);
  gtk_widget_class_bind_template_child (widget_class, EsTimings, open_total_label);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
es_timings_init (EsTimings *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  /* Nothing to say before the first result. */
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
}
