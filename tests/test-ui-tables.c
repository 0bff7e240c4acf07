/* SPDX-License-Identifier: MIT */
/* UI tests that need no image (GTest, under Xvfb): the GSettings schema, the view switcher and its
 * accelerators, the shortcuts window, the Compare Variants operations and the side panel follow the
 * operation, parameter and view tables; the Compute section says whether CUDA is usable. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "es-compare-window.h"
#include "es-sidebar.h"
#include "test-ui-common.h"

/* The CUDA row's subtitle until the worker has said whether CUDA is usable. */
static const char checking_subtitle[] = "Checking for a GPU…";

static gboolean
subtitle_is_not (gpointer row)
{
  return g_strcmp0 (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), checking_subtitle) != 0;
}

static GtkWidget *
find_widget (GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_widget (child, type);
      if (found)
        return found;
    }
  return NULL;
}

/* The titles a dropdown lists. */
static void
assert_dropdown_titles (GtkDropDown *dropdown, const char *const *titles, guint n_titles)
{
  GListModel *model = gtk_drop_down_get_model (dropdown);

  g_assert_cmpuint (g_list_model_get_n_items (model), ==, n_titles);
  for (guint i = 0; i < n_titles; i++)
    {
      g_autoptr (GtkStringObject) item = g_list_model_get_item (model, i);

      g_assert_cmpstr (gtk_string_object_get_string (item), ==, titles[i]);
    }
}

static double
variant_number (GVariant *value)
{
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT32))
    return g_variant_get_int32 (value);
  g_assert_true (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE));
  return g_variant_get_double (value);
}

static GtkWidget *
find_row (GtkWidget *widget, const char *title)
{
  if (ADW_IS_PREFERENCES_ROW (widget)
      && g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)), title) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *row = find_row (child, title);
      if (row)
        return row;
    }
  return NULL;
}

/* Where CUDA cannot be used, its backend row is greyed out and says why. */
static void
test_cuda_row (void)
{
  EsError error = { 0 };
  EsEngine *cuda = es_engine_new (ES_BACKEND_CUDA, &error);
  GtkWidget *row = find_row (GTK_WIDGET (window), "CUDA");
  const char *subtitle;

  g_assert_nonnull (row);
  /* The worker answers even without an image (see the test below). */
  g_assert_cmpstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), !=, checking_subtitle);
  subtitle = adw_action_row_get_subtitle (ADW_ACTION_ROW (row));
  g_test_message ("CUDA row: %s", subtitle);
  if (cuda)
    g_assert_true (gtk_widget_get_sensitive (row));
  else
    {
      g_assert_false (gtk_widget_get_sensitive (row));
      g_assert_nonnull (subtitle);
      g_assert_cmpuint (strlen (subtitle), >, 0);
      g_assert_cmpstr (gtk_widget_get_tooltip_text (row), ==, subtitle);
      if (!es_engine_cuda_compiled ())
        g_assert_nonnull (strstr (subtitle, "no CUDA backend"));
    }
  g_clear_pointer (&cuda, es_engine_free);
}

/* Before any image is open the Compute section must not keep saying that
 * it is checking: the worker sets up the engine and answers anyway. */
static void
test_cuda_row_without_image (void)
{
  GtkWidget *row = find_row (GTK_WIDGET (window), "CUDA");

  g_assert_null (es_window_get_source (window));
  g_assert_nonnull (row);
  wait_until (subtitle_is_not, row, NULL, NULL);
  test_cuda_row ();

  /* Asked for CUDA, the engine is set up again; the row says the same. */
  g_settings_set_string (settings, "backend", "cuda");
  wait_until (is_idle, NULL, NULL, NULL);
  test_cuda_row ();
  g_settings_reset (settings, "backend");
  wait_until (is_idle, NULL, NULL, NULL);
}

/* The schema cannot drift from the tables: each parameter's key has its
 * name, type, range and default; "view" lists the view switcher's values;
 * each operation has its variant key, and one with presets its preset key. */
static void
test_schema (void)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  g_autoptr (GSettingsSchemaKey) view_key = NULL;
  g_autoptr (GVariant) view_range = NULL, nicks = NULL;
  const char *kind;

  g_object_get (settings, "settings-schema", &schema, NULL);
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      const EsParam *param = es_param (id);
      g_autoptr (GSettingsSchemaKey) key = NULL;
      g_autoptr (GVariant) range = NULL, limits = NULL, min = NULL, max = NULL, fallback = NULL;

      g_test_message ("parameter %s", param->name);
      g_assert_true (g_settings_schema_has_key (schema, param->name));
      key = g_settings_schema_get_key (schema, param->name);
      g_assert_true (g_variant_type_equal (g_settings_schema_key_get_value_type (key),
                                           param->digits ? G_VARIANT_TYPE_DOUBLE : G_VARIANT_TYPE_INT32));
      range = g_settings_schema_key_get_range (key);
      g_variant_get (range, "(&sv)", &kind, &limits);
      g_assert_cmpstr (kind, ==, "range");
      min = g_variant_get_child_value (limits, 0);
      max = g_variant_get_child_value (limits, 1);
      g_assert_cmpfloat (variant_number (min), ==, param->min);
      g_assert_cmpfloat (variant_number (max), ==, param->max);
      fallback = g_settings_schema_key_get_default_value (key);
      g_assert_cmpfloat (variant_number (fallback), ==, param->default_value);
    }

  view_key = g_settings_schema_get_key (schema, "view");
  view_range = g_settings_schema_key_get_range (view_key);
  g_variant_get (view_range, "(&sv)", &kind, &nicks);
  g_assert_cmpstr (kind, ==, "enum");
  {
    g_autofree const char **schema_nicks = g_variant_get_strv (nicks, NULL);

    g_assert_true (g_strv_equal (schema_nicks, es_window_get_view_nicks ()));
  }

  for (int op = 0; op < ES_N_OPS; op++)
    {
      g_autofree char *key = es_settings_variant_key (op);

      g_assert_true (g_settings_schema_has_key (schema, key));
    }

  /* An operation with presets has its preset key: its own definition's
   * nick (the default), then its presets' names in table order (entropy's
   * "custom" after them). */
  for (int op = 0; op < ES_N_OPS; op++)
    {
      g_autofree char *name = es_settings_preset_key (op);
      g_autoptr (GSettingsSchemaKey) key = NULL;
      g_autoptr (GVariant) range = NULL, preset_nicks = NULL, fallback = NULL;
      g_autofree const char **schema_nicks = NULL;
      size_t n;
      const EsPreset *presets = es_presets (op, &n);

      g_test_message ("presets of %s", es_op_name (op));
      if (n == 0)
        {
          g_assert_false (g_settings_schema_has_key (schema, name));
          continue;
        }
      g_assert_true (g_settings_schema_has_key (schema, name));
      key = g_settings_schema_get_key (schema, name);
      range = g_settings_schema_key_get_range (key);
      g_variant_get (range, "(&sv)", &kind, &preset_nicks);
      g_assert_cmpstr (kind, ==, "enum");
      schema_nicks = g_variant_get_strv (preset_nicks, NULL);
      g_assert_cmpstr (schema_nicks[0], ==, es_op_info (op)->definition_name);
      for (size_t i = 0; i < n; i++)
        g_assert_cmpstr (schema_nicks[i + 1], ==, presets[i].name);
      fallback = g_settings_schema_key_get_default_value (key);
      g_assert_cmpstr (g_variant_get_string (fallback, NULL), ==, es_op_info (op)->definition_name);
    }
}

/* One view per operation, titled as the table says, in the view switcher
 * and on Alt+1… in the order of the "view" values. */
static void
test_view_table (void)
{
  GtkApplication *application = gtk_window_get_application (GTK_WINDOW (window));
  const char *const *nicks = es_window_get_view_nicks ();
  const char *titles[ES_N_VIEWS + 1];
  EsView grid[ES_CANVAS_MAX_PANES];
  int n_grid = es_view_get_grid (grid, ES_CANVAS_MAX_PANES);

  for (int op = 0; op < ES_N_OPS; op++)
    {
      EsView view = es_view_for_op (op);
      EsOp back;
      int n = 0;

      g_assert_true (es_view_get_op (view, &back));
      g_assert_cmpint (back, ==, op);
      g_assert_cmpstr (es_view_title (view), ==, es_op_info (op)->result_title);
      for (int other = 0; other < ES_N_VIEWS; other++)
        n += es_view_get_op (other, &back) && back == (EsOp) op;
      g_assert_cmpint (n, ==, 1);
    }
  /* The canvas lays the grid out 2×2. */
  g_assert_cmpint (n_grid, ==, ES_CANVAS_MAX_PANES);

  g_assert_cmpuint (g_strv_length ((char **) nicks), ==, ES_N_VIEWS + 1);
  for (int view = 0; view < ES_N_VIEWS; view++)
    {
      EsView back;

      g_assert_cmpstr (nicks[view], ==, es_view_name (view));
      g_assert_true (es_view_from_name (nicks[view], &back));
      g_assert_cmpint (back, ==, view);
      titles[view] = es_view_title (view);
    }
  titles[ES_N_VIEWS] = "Grid 2×2";
  assert_dropdown_titles (window->view_dropdown, titles, G_N_ELEMENTS (titles));

  for (guint i = 0; nicks[i]; i++)
    {
      g_autofree char *action = g_strdup_printf ("win.view::%s", nicks[i]);
      g_autofree char *accel = g_strdup_printf ("<Alt>%u", i + 1);
      g_auto (GStrv) accels = gtk_application_get_accels_for_action (application, action);

      g_assert_nonnull (accels[0]);
      g_assert_cmpstr (accels[0], ==, accel);
    }
}

/* The shortcuts window is a .ui file: its Alt+digit rows must name the views
 * of the switcher, in its order. */
static void
test_help_overlay (void)
{
  g_autoptr (GtkBuilder) builder = gtk_builder_new_from_resource ("/org/entroscope/Entroscope/gtk/help-overlay.ui");
  g_autoptr (GSList) objects = gtk_builder_get_objects (builder);
  const char *const *nicks = es_window_get_view_nicks ();
  guint found = 0;

  for (GSList *l = objects; l; l = l->next)
    {
      g_autofree char *accelerator = NULL, *title = NULL;
      guint digit;

      if (!GTK_IS_SHORTCUTS_SHORTCUT (l->data))
        continue;
      g_object_get (l->data, "accelerator", &accelerator, "title", &title, NULL);
      if (accelerator == NULL || sscanf (accelerator, "<Alt>%u", &digit) != 1)
        continue;
      g_test_message ("%s: %s", accelerator, title);
      g_assert_cmpuint (digit, >=, 1);
      g_assert_cmpuint (digit, <=, g_strv_length ((char **) nicks));
      if (digit <= ES_N_VIEWS)
        g_assert_cmpstr (title, ==, es_view_title (digit - 1));
      found++;
    }
  g_assert_cmpuint (found, ==, g_strv_length ((char **) nicks));
  gtk_window_destroy (GTK_WINDOW (gtk_builder_get_object (builder, "help_overlay")));
}

/* The side panel's controls follow the parameter table and the settings. */
static void
test_side_panel (void)
{
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      const EsParam *param = es_param (id);
      g_autofree char *adjustment_id = g_strconcat (param->name, "_adjustment", NULL);
      g_autofree char *control_id = g_strconcat (param->name, "_control", NULL);
      g_autofree char *row_id = g_strconcat (param->name, "_row", NULL);
      GtkAdjustment *adjustment = GTK_ADJUSTMENT (
        gtk_widget_get_template_child (GTK_WIDGET (window->sidebar), ES_TYPE_SIDEBAR, adjustment_id));
      GtkWidget *control = GTK_WIDGET (
        gtk_widget_get_template_child (GTK_WIDGET (window->sidebar), ES_TYPE_SIDEBAR, control_id));
      GtkWidget *row = GTK_WIDGET (
        gtk_widget_get_template_child (GTK_WIDGET (window->sidebar), ES_TYPE_SIDEBAR, row_id));
      char range[64];

      g_test_message ("parameter %s", param->name);
      g_assert_nonnull (adjustment);
      g_assert_nonnull (control);
      g_assert_nonnull (row);
      g_assert_cmpfloat (gtk_adjustment_get_lower (adjustment), ==, param->min);
      g_assert_cmpfloat (gtk_adjustment_get_upper (adjustment), ==, param->max);
      g_assert_cmpfloat (gtk_adjustment_get_step_increment (adjustment), ==, param->step);
      g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, es_settings_get_number (settings, param->name));
      if (GTK_IS_SPIN_BUTTON (control))
        g_assert_cmpuint (gtk_spin_button_get_digits (GTK_SPIN_BUTTON (control)), ==, param->digits);
      else
        g_assert_cmpint (gtk_scale_get_digits (GTK_SCALE (control)), ==, param->digits);
      es_param_describe_range (param, range, sizeof range);
      g_assert_nonnull (strstr (gtk_widget_get_tooltip_text (row), range));

      /* The settings move the control, and the control the settings. */
      g_settings_set_value (settings, param->name,
                            param->digits ? g_variant_new_double (param->max)
                                          : g_variant_new_int32 ((gint32) param->max));
      g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, param->max);
      gtk_adjustment_set_value (adjustment, param->min);
      g_assert_cmpfloat (es_settings_get_number (settings, param->name), ==, param->min);
      g_settings_reset (settings, param->name);
      g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, param->default_value);
    }

  /* A row shows while an operation on screen reads its parameter: entropy
   * reads the window only as the square's side and the levels not with
   * exact binning, quantize the levels always. */
  {
    GtkWidget *window_row = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (window->sidebar), ES_TYPE_SIDEBAR, "window_row"));
    GtkWidget *levels_row = GTK_WIDGET (
      gtk_widget_get_template_child (GTK_WIDGET (window->sidebar), ES_TYPE_SIDEBAR, "levels_row"));

    g_assert_true (gtk_widget_get_visible (window_row));
    g_settings_set_enum (settings, "shape", ES_SHAPE_DISK);
    g_settings_set_enum (settings, "binning", ES_BINNING_EXACT);
    g_assert_false (gtk_widget_get_visible (window_row));
    g_assert_false (gtk_widget_get_visible (levels_row));
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.view", "s", "quantized"));
    g_assert_true (gtk_widget_get_visible (levels_row));
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.view", "s", "entropy"));
    g_settings_reset (settings, "shape");
    g_settings_reset (settings, "binning");
    g_settings_reset (settings, "preset-entropy");
    g_assert_true (gtk_widget_get_visible (window_row));
  }
  wait_until (is_idle, NULL, NULL, NULL);
}

/* The Compare Variants window offers every operation of the table, in its order. */
static void
test_compare_ops (void)
{
  EsCompareWindow *compare = es_compare_window_new (GTK_WINDOW (window), ES_COMPARER (window), ES_OP_ENTROPY);
  const char *titles[ES_N_OPS];

  for (int op = 0; op < ES_N_OPS; op++)
    titles[op] = es_op_info (op)->title;
  assert_dropdown_titles (GTK_DROP_DOWN (find_widget (GTK_WIDGET (compare), GTK_TYPE_DROP_DOWN)), titles, ES_N_OPS);
  for (int op = 0; op < ES_N_OPS; op++)
    {
      es_compare_window_set_op (compare, op);
      g_assert_cmpint (es_compare_window_get_op (compare), ==, op);
    }
  gtk_window_destroy (GTK_WINDOW (compare));
}

int
main (int argc, char *argv[])
{
  int status;

  ui_test_setup (&argc, &argv);

  /* First, while the worker may still be setting up the engine. */
  g_test_add_func ("/ui-tables/cuda-row-without-image", test_cuda_row_without_image);
  g_test_add_func ("/ui-tables/schema", test_schema);
  g_test_add_func ("/ui-tables/view-table", test_view_table);
  g_test_add_func ("/ui-tables/help-overlay", test_help_overlay);
  g_test_add_func ("/ui-tables/compare-ops", test_compare_ops);
  g_test_add_func ("/ui-tables/side-panel", test_side_panel);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
