/* SPDX-License-Identifier: MIT */
/* EsSidebar: AdwPreferencesGroup rows for every parameter (set up from its table row), bound to GSettings. */
#include "es-sidebar.h"

#include <math.h>

#include "es-histogram.h"
#include "es-settings.h"

struct _EsSidebar {
  GtkWidget parent_instance;

  GtkAdjustment *param_adjustments[ES_N_PARAMS];   /* "NAME_adjustment" of the template */
  GtkAdjustment *max_pixels_adjustment;
  AdwComboRow *units_row;
  AdwComboRow *colormap_row;
  AdwComboRow *range_row;
  GtkSwitch *reversed_switch;
  AdwActionRow *cuda_row;
  AdwPreferencesGroup *variant_group;
  GtkLabel *quantized_title;
  EsHistogram *quantized_histogram;
  EsHistogram *before_histogram;
  EsHistogram *after_histogram;

  GPtrArray *variant_rows;
  int variant_op;          /* the op the rows were built for; -1 none */
  gboolean variant_cuda;
};

G_DEFINE_FINAL_TYPE (EsSidebar, es_sidebar, GTK_TYPE_WIDGET)

static const char *const units_nicks[] = { "nats", "bits", NULL };
static const char *const colormap_nicks[] = { "viridis", "magma", "inferno", "cividis", "gray", NULL };
static const char *const range_nicks[] = { "absolute", "auto", NULL };

/* max-pixels, in pixels, <-> the spin button, in megapixels. */
static gboolean
pixels_to_megapixels (GValue *value, GVariant *variant, gpointer user_data)
{
  g_value_set_double (value, g_variant_get_uint64 (variant) / 1e6);
  return TRUE;
}

static GVariant *
megapixels_to_pixels (const GValue *value, const GVariantType *type, gpointer user_data)
{
  return g_variant_new_uint64 ((guint64) MAX (llround (g_value_get_double (value) * 1e6), 1));
}

void
es_sidebar_bind (EsSidebar *self, GSettings *settings)
{
  g_return_if_fail (ES_IS_SIDEBAR (self));

  g_return_if_fail (G_IS_SETTINGS (settings));

  /* Each parameter's key has the parameter's name. */
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (self->param_adjustments[id])
      g_settings_bind (settings, es_param (id)->name, self->param_adjustments[id], "value",
                       G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (settings, "max-pixels", self->max_pixels_adjustment, "value",
                                G_SETTINGS_BIND_DEFAULT, pixels_to_megapixels, megapixels_to_pixels,
                                NULL, NULL);
  g_settings_bind (settings, "reversed", self->reversed_switch, "active", G_SETTINGS_BIND_DEFAULT);
  es_settings_bind_choice (settings, "units", self->units_row, units_nicks);
  es_settings_bind_choice (settings, "colormap", self->colormap_row, colormap_nicks);
  es_settings_bind_choice (settings, "range", self->range_row, range_nicks);
}

void
es_sidebar_set_cuda (EsSidebar *self, gboolean usable, const char *reason)
{
  g_autofree char *sentence = NULL;

  g_return_if_fail (ES_IS_SIDEBAR (self));

  /* Reasons are written to follow "CUDA is not available: "; alone on a
   * row they start with a capital. */
  if (!usable && reason && *reason)
    {
      sentence = g_strdup (reason);
      sentence[0] = g_ascii_toupper (sentence[0]);
    }
  gtk_widget_set_sensitive (GTK_WIDGET (self->cuda_row), usable);
  adw_action_row_set_subtitle (self->cuda_row, usable ? "NVIDIA GPU" : sentence);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->cuda_row), usable ? NULL : sentence);
}

static void
clear_variant_rows (EsSidebar *self)
{
  for (guint i = 0; i < self->variant_rows->len; i++)
    adw_preferences_group_remove (self->variant_group, g_ptr_array_index (self->variant_rows, i));
  g_ptr_array_set_size (self->variant_rows, 0);
}

static void
add_row (EsSidebar *self, GtkWidget *row)
{
  adw_preferences_group_add (self->variant_group, row);
  g_ptr_array_add (self->variant_rows, row);
}

/* The way into the Compare Variants window, under the variants. */
static void
add_compare_row (EsSidebar *self, gboolean have_variants)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *icon = gtk_image_new_from_icon_name ("es-compare-symbolic");
  GtkWidget *arrow = gtk_image_new_from_icon_name ("go-next-symbolic");

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), "Compare Variants…");
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row),
                               have_variants ? "Time each one on this image, beside the copy floor"
                                             : "Time this image on the CPU, and see why variants "
                                               "need CUDA");
  gtk_widget_set_tooltip_text (row, "Ctrl+B");
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), arrow);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "win.compare");
  add_row (self, row);
}

void
es_sidebar_set_variants (EsSidebar *self, gboolean has_op, EsOp op, gboolean cuda_in_use)
{
  const EsVariant *variants;
  size_t n = 0;
  g_autofree char *title = NULL;

  g_return_if_fail (ES_IS_SIDEBAR (self));

  if ((has_op ? (int) op : -1) == self->variant_op && cuda_in_use == self->variant_cuda
      && self->variant_rows->len > 0)
    return;
  self->variant_op = has_op ? (int) op : -1;
  self->variant_cuda = cuda_in_use;
  clear_variant_rows (self);

  if (!has_op)
    {
      adw_preferences_group_set_title (self->variant_group, "Kernel Variant");
      adw_preferences_group_set_description (self->variant_group,
                                             "The original image runs no kernel");
      add_compare_row (self, FALSE);
      return;
    }

  title = g_strdup_printf ("Kernel Variant · %s", es_op_name (op));
  adw_preferences_group_set_title (self->variant_group, title);
  variants = es_variants (op, &n);
  if (n == 0)
    {
      adw_preferences_group_set_description (self->variant_group,
                                             "This build has no CUDA kernels; the CPU has one "
                                             "implementation of each operation");
      add_compare_row (self, FALSE);
      return;
    }
  adw_preferences_group_set_description (self->variant_group,
                                         cuda_in_use
                                           ? "Each variant computes the same result and teaches "
                                             "one lesson about GPU memory (hover for it)"
                                           : "Variants run on CUDA only; the CPU has one "
                                             "implementation");
  for (size_t i = 0; i < n; i++)
    {
      GtkWidget *row = adw_action_row_new ();
      GtkWidget *check = gtk_check_button_new ();
      g_autofree char *subtitle = NULL;

      subtitle = g_strdup_printf ("%s%s", variants[i].id, variants[i].is_default ? " · default" : "");
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), variants[i].label);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
      gtk_widget_set_tooltip_text (row, variants[i].lesson);
      gtk_widget_set_valign (check, GTK_ALIGN_CENTER);
      gtk_actionable_set_action_name (GTK_ACTIONABLE (check), "win.variant");
      gtk_actionable_set_action_target (GTK_ACTIONABLE (check), "s", variants[i].id);
      adw_action_row_add_prefix (ADW_ACTION_ROW (row), check);
      adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), check);
      gtk_widget_set_sensitive (row, cuda_in_use);
      add_row (self, row);
    }
  add_compare_row (self, cuda_in_use);
}

void
es_sidebar_set_histograms (EsSidebar *self, const EsSource *source, const EsLayer *quantized,
                           const EsLayer *equalized, EsColormap map, gboolean reversed)
{
  g_autofree char *title = NULL;

  g_return_if_fail (ES_IS_SIDEBAR (self));

  if (quantized && quantized->histogram)
    {
      title = g_strdup_printf ("Quantized levels (%u)", quantized->n_bins);
      gtk_label_set_label (self->quantized_title, title);
      es_histogram_set_counts (self->quantized_histogram, quantized->histogram,
                               quantized->n_bins, map, reversed);
    }
  else
    es_histogram_set_counts (self->quantized_histogram, NULL, 0, ES_N_COLORMAPS, FALSE);
  es_histogram_set_counts (self->before_histogram, source ? source->histogram : NULL, 256,
                           ES_N_COLORMAPS, FALSE);
  es_histogram_set_counts (self->after_histogram,
                           equalized && equalized->histogram ? equalized->histogram : NULL, 256,
                           ES_N_COLORMAPS, FALSE);
}

/* The ids of a parameter's objects in es-sidebar.ui follow its name: "window_row". */
static const char *const param_children[] = { "_row", "_control", "_adjustment" };

static GObject *
get_param_child (EsSidebar *self, const EsParam *param, const char *suffix)
{
  g_autofree char *id = g_strconcat (param->name, suffix, NULL);

  return gtk_widget_get_template_child (GTK_WIDGET (self), ES_TYPE_SIDEBAR, id);
}

/* A parameter's row, control and adjustment follow its table row: range,
 * step, decimals, odd values only, and a tooltip with its description. */
static void
setup_param (EsSidebar *self, const EsParam *param)
{
  GtkAdjustment *adjustment = GTK_ADJUSTMENT (get_param_child (self, param, "_adjustment"));
  GtkWidget *row = GTK_WIDGET (get_param_child (self, param, "_row"));
  GtkWidget *control = GTK_WIDGET (get_param_child (self, param, "_control"));
  g_autofree char *tooltip = NULL;
  char range[64];

  if (adjustment == NULL || row == NULL || control == NULL)
    {
      g_critical ("es-sidebar.ui has no row for the parameter “%s”", param->name);
      return;
    }
  es_param_describe_range (param, range, sizeof range);
  tooltip = g_strdup_printf ("%c%s; %s", g_ascii_toupper (param->description[0]),
                             param->description + 1, range);
  gtk_adjustment_configure (adjustment, param->default_value, param->min, param->max,
                            param->step, gtk_adjustment_get_page_increment (adjustment), 0);
  if (GTK_IS_SPIN_BUTTON (control))
    {
      gtk_spin_button_set_digits (GTK_SPIN_BUTTON (control), param->digits);
      /* Ticks are lower + k·step: with step 2 from an odd minimum, odd values. */
      gtk_spin_button_set_snap_to_ticks (GTK_SPIN_BUTTON (control), param->odd);
    }
  else if (GTK_IS_SCALE (control))
    {
      gtk_scale_set_digits (GTK_SCALE (control), param->digits);
      gtk_range_set_round_digits (GTK_RANGE (control), param->digits);
    }
  gtk_widget_set_tooltip_text (row, tooltip);
  self->param_adjustments[param->id] = adjustment;
}

static void
es_sidebar_dispose (GObject *object)
{
  EsSidebar *self = ES_SIDEBAR (object);

  g_clear_pointer (&self->variant_rows, g_ptr_array_unref);
  gtk_widget_dispose_template (GTK_WIDGET (object), ES_TYPE_SIDEBAR);
  /* The template's top-level box is not bound: unparent it here. */
  for (GtkWidget *child; (child = gtk_widget_get_first_child (GTK_WIDGET (object)));)
    gtk_widget_unparent (child);
  G_OBJECT_CLASS (es_sidebar_parent_class)->dispose (object);
}

static void
es_sidebar_class_init (EsSidebarClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = es_sidebar_dispose;

  g_type_ensure (ES_TYPE_HISTOGRAM);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/entroscope/Entroscope/es-sidebar.ui");
  /* Each parameter's objects, found by name in es_sidebar_init. */
  for (int id = 0; id < ES_N_PARAMS; id++)
    for (guint i = 0; i < G_N_ELEMENTS (param_children); i++)
      {
        g_autofree char *name = g_strconcat (es_param (id)->name, param_children[i], NULL);

        gtk_widget_class_bind_template_child_full (widget_class, g_intern_string (name), FALSE, 0);
      }
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, max_pixels_adjustment);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, units_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, colormap_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, range_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, reversed_switch);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, cuda_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, variant_group);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, quantized_title);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, quantized_histogram);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, before_histogram);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, after_histogram);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
es_sidebar_init (EsSidebar *self)
{
  self->variant_rows = g_ptr_array_new ();
  self->variant_op = -2;
  gtk_widget_init_template (GTK_WIDGET (self));
  for (int id = 0; id < ES_N_PARAMS; id++)
    setup_param (self, es_param (id));
}
