/* SPDX-License-Identifier: MIT */
/* EsSidebar: AdwPreferencesGroup rows for every parameter (set up from its table row, shown while an
 * operation reads it), bound to GSettings; the timings of the active view; no wheel, arrow or click traps
 * that change a value unasked. */
#include "es-sidebar.h"

#include <math.h>
#include <glib/gi18n-lib.h>

#include "es-intl.h"
#include "es-histogram.h"
#include "es-settings.h"
#include "es-sidebar-definition.h"
#include "es-timings.h"

struct _EsSidebar {
  GtkWidget parent_instance;

  GtkAdjustment *param_adjustments[ES_N_PARAMS]; /* "NAME_adjustment" of the template */
  GtkWidget *param_rows[ES_N_PARAMS];            /* "NAME_row" */
  GSettings *settings;
  GtkAdjustment *max_pixels_adjustment;
  AdwComboRow *units_row;
  EsSidebarDefinition *definition;
  AdwComboRow *colormap_row;
  AdwComboRow *range_row;
  GtkSwitch *reversed_switch;
  GtkWidget *reversed_row;
  AdwPreferencesGroup *timings_group;
  EsTimings *timings;
  AdwActionRow *cuda_row;
  AdwPreferencesGroup *variant_group;
  GtkLabel *quantized_title;
  EsHistogram *quantized_histogram;
  EsHistogram *before_histogram;
  EsHistogram *after_histogram;

  unsigned ops_on_screen; /* 1u << EsOp of every view on screen */

  GPtrArray *variant_rows;
  int variant_op; /* the op the rows were built for; -1 none */
  gboolean variant_cuda;

  GtkWidget *focus_before_press; /* weak: the focus before a click on a spin button's +/- */
};

G_DEFINE_FINAL_TYPE (EsSidebar, es_sidebar, GTK_TYPE_WIDGET)

static const char *const units_nicks[] = { "nats", "bits", "normalized", NULL };
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

static gboolean
group_shows_a_row (EsSidebar *self, GtkWidget *group)
{
  GtkWidget *units = GTK_WIDGET (self->units_row);

  if (gtk_widget_get_visible (units) && gtk_widget_is_ancestor (units, group))
    return TRUE;
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (self->param_rows[id] && gtk_widget_get_visible (self->param_rows[id])
        && gtk_widget_is_ancestor (self->param_rows[id], group))
      return TRUE;
  return FALSE;
}

/* A parameter's row shows while an operation on screen reads it in the
 * job the settings describe (EsOpInfo.params_read: entropy reads the window
 * only as the square's side), and a group while one of its rows shows. The
 * units convert nats: their row shows with a result in nats. */
static void
update_param_rows (EsSidebar *self)
{
  unsigned read = 0;
  gboolean nats = FALSE;

  for (int op = 0; op < ES_N_OPS; op++)
    {
      EsJob job = ES_JOB_INIT (op);

      if (!(self->ops_on_screen & (1u << op)))
        continue;
      nats |= g_str_equal (es_op_info (op)->units, "nats");
      for (int id = 0; id < ES_N_PARAMS; id++)
        if (es_op_uses (op, id))
          es_job_set_param (&job, id, es_settings_get_number (self->settings, es_param (id)->name));
      es_sidebar_definition_get (self->definition, 0, 0, es_sidebar_definition_get_image_planes (self->definition),
                                 &job);
      read |= es_job_params_read (&job);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->units_row), nats);
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (self->param_rows[id])
      gtk_widget_set_visible (self->param_rows[id], (read & ES_PARAM_BIT (id)) != 0);
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (self->param_rows[id])
      {
        GtkWidget *group = gtk_widget_get_ancestor (self->param_rows[id], ADW_TYPE_PREFERENCES_GROUP);

        gtk_widget_set_visible (group, group_shows_a_row (self, group));
      }
}

void
es_sidebar_set_ops (EsSidebar *self, unsigned ops_on_screen, gboolean has_active, EsOp active)
{
  gboolean has_presets = FALSE;
  EsOp definition_op = active;
  size_t n = 0;

  g_return_if_fail (ES_IS_SIDEBAR (self));

  /* The Definition group follows the active view, or else the first view on
   * screen that has presets (the grid's entropy while the original is active). */
  if (has_active && es_presets (active, &n) && n > 0)
    has_presets = TRUE;
  for (int op = 0; op < ES_N_OPS && !has_presets; op++)
    if ((ops_on_screen & (1u << op)) && es_presets (op, &n) && n > 0)
      {
        definition_op = op;
        has_presets = TRUE;
      }
  es_sidebar_definition_set_op (self->definition, has_presets, definition_op);
  if (ops_on_screen == self->ops_on_screen)
    return;
  self->ops_on_screen = ops_on_screen;
  if (self->settings)
    update_param_rows (self);
}

/* After the definition's own handler (connected first), so that a new
 * footprint file has been read. */
static void
on_setting (GSettings *settings, const char *key, EsSidebar *self)
{
  update_param_rows (self);
}

static void
on_definition_changed (EsSidebarDefinition *definition, const char *what, EsSidebar *self)
{
  update_param_rows (self);
}

void
es_sidebar_bind (EsSidebar *self, GSettings *settings)
{
  g_return_if_fail (ES_IS_SIDEBAR (self));

  g_return_if_fail (G_IS_SETTINGS (settings));

  /* Each parameter's key has the parameter's name. */
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (self->param_adjustments[id])
      g_settings_bind (settings, es_param (id)->name, self->param_adjustments[id], "value", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (settings, "max-pixels", self->max_pixels_adjustment, "value", G_SETTINGS_BIND_DEFAULT,
                                pixels_to_megapixels, megapixels_to_pixels, NULL, NULL);
  g_settings_bind (settings, "reversed", self->reversed_switch, "active", G_SETTINGS_BIND_DEFAULT);
  es_settings_bind_choice (settings, "units", self->units_row, units_nicks);
  es_sidebar_definition_bind (self->definition, settings);
  g_set_object (&self->settings, settings);
  g_signal_connect_object (settings, "changed", G_CALLBACK (on_setting), self, 0);
  g_signal_connect_object (self->definition, "changed", G_CALLBACK (on_definition_changed), self, 0);
  g_signal_connect_object (self->definition, "rows-changed", G_CALLBACK (update_param_rows), self, G_CONNECT_SWAPPED);
  update_param_rows (self);
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
      /* compute/'s reasons are marked for translation (N_), a driver's are not. */
      sentence = g_strdup (_ (reason));
      sentence[0] = g_ascii_toupper (sentence[0]);
    }
  gtk_widget_set_sensitive (GTK_WIDGET (self->cuda_row), usable);
  adw_action_row_set_subtitle (self->cuda_row, usable ? _ ("NVIDIA GPU") : sentence);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->cuda_row), usable ? NULL : sentence);
}

/* The EsVariant of a variant row (static storage). */
#define VARIANT_KEY "es-variant"

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
  /* The row's title says it all; its icons are left out of the accessible tree. */
  GtkWidget *icon = g_object_new (GTK_TYPE_IMAGE, "icon-name", "es-compare-symbolic", "accessible-role",
                                  GTK_ACCESSIBLE_ROLE_PRESENTATION, NULL);
  GtkWidget *arrow = g_object_new (GTK_TYPE_IMAGE, "icon-name", "go-next-symbolic", "accessible-role",
                                   GTK_ACCESSIBLE_ROLE_PRESENTATION, NULL);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _ ("Compare Variants…"));
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), have_variants
                                                       ? _ ("Time each one on this image, beside the copy floor")
                                                       : _ ("Time this image on the CPU, and see why variants "
                                                            "need CUDA"));
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

  if ((has_op ? (int) op : -1) == self->variant_op && cuda_in_use == self->variant_cuda && self->variant_rows->len > 0)
    return;
  self->variant_op = has_op ? (int) op : -1;
  self->variant_cuda = cuda_in_use;
  clear_variant_rows (self);

  if (!has_op)
    {
      adw_preferences_group_set_title (self->variant_group, _ ("Kernel Variant"));
      adw_preferences_group_set_description (self->variant_group, _ ("The original image runs no kernel"));
      add_compare_row (self, FALSE);
      return;
    }

  title = g_strdup_printf (_ ("Kernel Variant · %s"), es_op_name (op));
  adw_preferences_group_set_title (self->variant_group, title);
  variants = es_variants (op, &n);
  if (n == 0)
    {
      adw_preferences_group_set_description (self->variant_group, _ ("This build has no CUDA kernels; the CPU has one "
                                                                     "implementation of each operation"));
      add_compare_row (self, FALSE);
      return;
    }
  adw_preferences_group_set_description (self->variant_group,
                                         cuda_in_use ? _ ("Each variant computes the same result and teaches "
                                                          "one lesson about GPU memory (hover for it)")
                                                     : _ ("Variants run on CUDA only; the CPU has one "
                                                          "implementation"));
  for (size_t i = 0; i < n; i++)
    {
      GtkWidget *row = adw_action_row_new ();
      /* One variant of several: a radio button, as it draws (see the Compute group in es-sidebar.ui). */
      GtkWidget *check = g_object_new (GTK_TYPE_CHECK_BUTTON, "accessible-role", GTK_ACCESSIBLE_ROLE_RADIO, NULL);
      g_autofree char *subtitle = NULL;

      subtitle = g_strdup_printf ("%s%s", variants[i].id, variants[i].is_default ? " · default" : "");
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _ (variants[i].label));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
      gtk_widget_set_tooltip_text (row, _ (variants[i].lesson));
      gtk_widget_set_valign (check, GTK_ALIGN_CENTER);
      gtk_actionable_set_action_name (GTK_ACTIONABLE (check), "win.variant");
      gtk_actionable_set_action_target (GTK_ACTIONABLE (check), "s", variants[i].id);
      adw_action_row_add_prefix (ADW_ACTION_ROW (row), check);
      adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), check);
      gtk_widget_set_sensitive (row, cuda_in_use);
      g_object_set_data (G_OBJECT (row), VARIANT_KEY, (gpointer) &variants[i]);
      add_row (self, row);
    }
  add_compare_row (self, cuda_in_use);
}

void
es_sidebar_mark_variants (EsSidebar *self, const EsJob *job)
{
  g_return_if_fail (ES_IS_SIDEBAR (self));

  for (guint i = 0; i < self->variant_rows->len; i++)
    {
      GtkWidget *row = g_ptr_array_index (self->variant_rows, i);
      const EsVariant *variant = g_object_get_data (G_OBJECT (row), VARIANT_KEY);
      const char *why, *slow, *is_default;
      g_autofree char *subtitle = NULL, *tooltip = NULL;
      EsJob any_variant = *job;
      const EsVariant *runs;

      if (variant == NULL) /* the Compare Variants row */
        continue;
      is_default = variant->is_default ? " · default" : "";
      any_variant.variant = NULL;
      runs = es_variant_for_job (&any_variant);
      why = es_variant_unsupported (variant, job);
      slow = why == NULL ? es_variant_slow_path (variant, job) : NULL;
      if (why)
        subtitle = g_strdup_printf (_ ("%s%s · not for this job: %s runs it"), variant->id, is_default,
                                    runs ? runs->id : _ ("another variant"));
      else
        subtitle = g_strdup_printf ("%s%s%s", variant->id, is_default, slow ? _ (" · slow path for this job") : "");
      tooltip = why    ? g_strdup_printf (_ ("Not for this job: %s; %s runs it.\n\n%s"), why,
                                       runs ? runs->id : _ ("another variant"), _ (variant->lesson))
                : slow ? g_strdup_printf (_ ("Runs this job on a %s.\n\n%s"), slow, _ (variant->lesson))
                       : g_strdup (_ (variant->lesson));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
      gtk_widget_set_tooltip_text (row, tooltip);
      if (why)
        gtk_widget_add_css_class (row, "dim-label");
      else
        gtk_widget_remove_css_class (row, "dim-label");
    }
}

void
es_sidebar_set_histograms (EsSidebar *self, const EsSource *source, const EsLayer *quantized, const EsLayer *equalized,
                           EsColormap map, gboolean reversed)
{
  g_autofree char *title = NULL;

  g_return_if_fail (ES_IS_SIDEBAR (self));

  if (quantized && quantized->histogram)
    {
      title = g_strdup_printf (_ ("Quantized levels (%u)"), quantized->n_bins);
      gtk_label_set_label (self->quantized_title, title);
      es_histogram_set_counts (self->quantized_histogram, quantized->histogram, quantized->n_bins, map, reversed);
    }
  else
    es_histogram_set_counts (self->quantized_histogram, NULL, 0, ES_N_COLORMAPS, FALSE);
  es_histogram_set_counts (self->before_histogram, source ? source->histogram : NULL, 256, ES_N_COLORMAPS, FALSE);
  es_histogram_set_counts (self->after_histogram, equalized && equalized->histogram ? equalized->histogram : NULL, 256,
                           ES_N_COLORMAPS, FALSE);
}

EsTimings *
es_sidebar_get_timings (EsSidebar *self)
{
  g_return_val_if_fail (ES_IS_SIDEBAR (self), NULL);
  return self->timings;
}

EsSidebarDefinition *
es_sidebar_get_definition (EsSidebar *self)
{
  g_return_val_if_fail (ES_IS_SIDEBAR (self), NULL);
  return self->definition;
}

GtkWidget *
es_sidebar_get_timings_group (EsSidebar *self)
{
  g_return_val_if_fail (ES_IS_SIDEBAR (self), NULL);
  return GTK_WIDGET (self->timings_group);
}

void
es_sidebar_set_colors_sensitive (EsSidebar *self, gboolean sensitive)
{
  g_return_if_fail (ES_IS_SIDEBAR (self));

  gtk_widget_set_sensitive (GTK_WIDGET (self->colormap_row), sensitive);
  gtk_widget_set_sensitive (self->reversed_row, sensitive);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->colormap_row), sensitive ? NULL : _ ("Only heatmaps have a colormap"));
  gtk_widget_set_tooltip_text (self->reversed_row, sensitive ? NULL : _ ("Only heatmaps have a colormap"));
}

/* Traps: the wheel, arrow keys and +/- clicks never change a value unasked */

/* The wheel over a spin button or a scale scrolls the panel, as it does
 * over the rest of it: a value changes only through the control's own
 * buttons, keys or drag. */
static gboolean
on_control_scroll (GtkEventControllerScroll *controller, double dx, double dy, EsSidebar *self)
{
  GtkWidget *control = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  GtkWidget *scroller = gtk_widget_get_ancestor (control, GTK_TYPE_SCROLLED_WINDOW);
  GtkAdjustment *adjustment;
  double step;

  g_assert (ES_IS_SIDEBAR (self));
  if (scroller == NULL)
    return TRUE;
  adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  /* GtkScrolledWindow's own step for a wheel click; touchpads give pixels. */
  step = gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_WHEEL
           ? pow (gtk_adjustment_get_page_size (adjustment), 2.0 / 3.0)
           : 1.0;
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_value (adjustment) + dy * step);
  return TRUE;
}

/* A click on a spin button's +/- leaves the focus where it was: in the
 * field it would take the next keys (a "1" meant as 100 % zoom, Enter). */
static gboolean
on_spin_event (GtkEventControllerLegacy *controller, GdkEvent *event, EsSidebar *self)
{
  GtkWidget *spin = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  GtkRoot *root = gtk_widget_get_root (spin);
  GdkEventType type = gdk_event_get_event_type (event);

  g_assert (ES_IS_SIDEBAR (self));
  if (root == NULL)
    return FALSE;
  if (type == GDK_BUTTON_PRESS)
    {
      GtkNative *native = gtk_widget_get_native (spin);
      double x, y, origin_x, origin_y;
      GtkWidget *picked;
      GtkWidget *focus = gtk_root_get_focus (root);

      g_clear_weak_pointer (&self->focus_before_press);
      if (!gdk_event_get_position (event, &x, &y) || (focus && (focus == spin || gtk_widget_is_ancestor (focus, spin))))
        return FALSE;
      /* Event positions are on the surface, which may have a shadow around the window. */
      gtk_native_get_surface_transform (native, &origin_x, &origin_y);
      if (!gtk_widget_translate_coordinates (GTK_WIDGET (native), spin, x - origin_x, y - origin_y, &x, &y))
        return FALSE;
      picked = gtk_widget_pick (spin, x, y, GTK_PICK_DEFAULT);
      if (picked && (GTK_IS_BUTTON (picked) || gtk_widget_get_ancestor (picked, GTK_TYPE_BUTTON)))
        {
          /* The window itself stands for "no focus". */
          g_set_weak_pointer (&self->focus_before_press, focus ? focus : GTK_WIDGET (root));
        }
    }
  else if (type == GDK_BUTTON_RELEASE && self->focus_before_press)
    {
      GtkWidget *before = self->focus_before_press;

      g_clear_weak_pointer (&self->focus_before_press);
      if (before == GTK_WIDGET (root))
        gtk_root_set_focus (root, NULL);
      else
        gtk_widget_grab_focus (before);
    }
  return FALSE;
}

static void
guard_controls (EsSidebar *self, GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_SPIN_BUTTON (child) || GTK_IS_RANGE (child))
        {
          GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);

          gtk_event_controller_set_propagation_phase (scroll, GTK_PHASE_CAPTURE);
          g_signal_connect (scroll, "scroll", G_CALLBACK (on_control_scroll), self);
          gtk_widget_add_controller (child, scroll);
        }
      if (GTK_IS_SPIN_BUTTON (child))
        {
          GtkEventController *legacy = gtk_event_controller_legacy_new ();

          gtk_event_controller_set_propagation_phase (legacy, GTK_PHASE_CAPTURE);
          g_signal_connect (legacy, "event", G_CALLBACK (on_spin_event), self);
          gtk_widget_add_controller (child, legacy);
          continue;
        }
      guard_controls (self, child);
    }
}

/* Arrow keys move the focus within the panel, never into it: from the
 * canvas or the header they would land on a spin button, and the next
 * arrow would change a parameter. Tab, a click or F6 get in. */
static gboolean
es_sidebar_focus (GtkWidget *widget, GtkDirectionType direction)
{
  gboolean arrow = direction == GTK_DIR_UP || direction == GTK_DIR_DOWN || direction == GTK_DIR_LEFT
                   || direction == GTK_DIR_RIGHT;

  if (arrow && !(gtk_widget_get_state_flags (widget) & GTK_STATE_FLAG_FOCUS_WITHIN))
    return FALSE;
  return GTK_WIDGET_CLASS (es_sidebar_parent_class)->focus (widget, direction);
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
  es_param_describe_range_in (param, es_tr, range, sizeof range);
  tooltip = g_strdup_printf ("%c%s; %s", g_ascii_toupper (_ (param->description)[0]), _ (param->description) + 1,
                             range);
  gtk_adjustment_configure (adjustment, param->default_value, param->min, param->max, param->step,
                            gtk_adjustment_get_page_increment (adjustment), 0);
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
  /* The row names the widget it activates (a spin button) for screen
   * readers; any other control (a slider) takes the row's title here, or
   * GTK 4.8 reads it as "GtkScale". */
  if (ADW_IS_ACTION_ROW (row) && adw_action_row_get_activatable_widget (ADW_ACTION_ROW (row)) != control)
    gtk_accessible_update_property (GTK_ACCESSIBLE (control), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                    adw_preferences_row_get_title (ADW_PREFERENCES_ROW (row)), -1);
  gtk_widget_set_tooltip_text (row, tooltip);
  self->param_adjustments[param->id] = adjustment;
  self->param_rows[param->id] = row;
}

static void
es_sidebar_dispose (GObject *object)
{
  EsSidebar *self = ES_SIDEBAR (object);

  g_clear_pointer (&self->variant_rows, g_ptr_array_unref);
  if (self->settings)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_clear_object (&self->settings);
  g_clear_weak_pointer (&self->focus_before_press);
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
  widget_class->focus = es_sidebar_focus;

  g_type_ensure (ES_TYPE_HISTOGRAM);
  g_type_ensure (ES_TYPE_TIMINGS);
  g_type_ensure (ES_TYPE_SIDEBAR_DEFINITION);
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
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, definition);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, colormap_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, range_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, reversed_switch);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, reversed_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, timings_group);
  gtk_widget_class_bind_template_child (widget_class, EsSidebar, timings);
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
  /* Until a window says which are on screen, every operation's rows. */
  self->ops_on_screen = (1u << ES_N_OPS) - 1;
  gtk_widget_init_template (GTK_WIDGET (self));
  for (int id = 0; id < ES_N_PARAMS; id++)
    setup_param (self, es_param (id));
  guard_controls (self, GTK_WIDGET (self));
}
