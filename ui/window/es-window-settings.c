/* SPDX-License-Identifier: MIT */
/* EsWindow: its own settings (windows side by side compute with their own parameters), undo and redo of
 * parameter and colour changes, reset to the defaults, a new window with these settings. */
/* g_memory_settings_backend_new () */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>
#include <glib/gi18n-lib.h>

#include "es-sidebar-definition.h"
#include "es-window-private.h"

/* Shared by every window: where files are, what was opened, how large an
 * image may be, how exports are made, the style. */
static const char *const app_wide_keys[] = {
  "last-folder",     "recent-files",       "reopen-last", "max-pixels",      "export-format",
  "export-colorbar", "export-compression", "style",       "export-overlays", NULL,
};

/* What Undo steps back through: the parameters (by name, from the table),
 * then how results are coloured and a volume's window. */
static const char *const other_undoable_keys[] = {
  "colormap", "reversed",   "range",      "units",     "volume-window",
  "shape-3d", "box-planes", "box-height", "box-width", "ball-radius",
};
#define N_UNDOABLE (ES_N_PARAMS + G_N_ELEMENTS (other_undoable_keys))

/* Changes of one key closer together than this are one step. */
#define UNDO_MERGE_US (800 * G_TIME_SPAN_MILLISECOND)

typedef struct {
  const char *key; /* static */
  GVariant *before;
  GVariant *after;
  gint64 time;
} SettingChange;

/* The job keys of a request (_es_window_note_requested_keys). */
typedef struct {
  guint64 generation;
  GVariant *keys; /* a{sv} */
} RequestedKeys;

static void
requested_keys_free (gpointer data)
{
  RequestedKeys *requested = data;

  g_variant_unref (requested->keys);
  g_free (requested);
}

static const char *
undoable_key (int i)
{
  return i < ES_N_PARAMS ? es_param (i)->name : other_undoable_keys[i - ES_N_PARAMS];
}

static int
undoable_index (const char *key)
{
  for (int i = 0; i < (int) N_UNDOABLE; i++)
    if (g_str_equal (key, undoable_key (i)))
      return i;
  return -1;
}

static void
setting_change_free (gpointer data)
{
  SettingChange *change = data;

  g_variant_unref (change->before);
  g_variant_unref (change->after);
  g_free (change);
}

static void
update_undo_actions (EsWindow *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.undo", !g_queue_is_empty (&self->undo_stack));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.redo", !g_queue_is_empty (&self->redo_stack));
}

/* A change of an undoable key: a new step, or the last one extended
 * (a spin button held down, a slider dragged). */
static void
record_change (EsWindow *self, int index, GVariant *after)
{
  GVariant *before = self->undoable_values[index];
  SettingChange *last = g_queue_peek_head (&self->undo_stack);
  gint64 now = g_get_monotonic_time ();

  if (g_variant_equal (before, after))
    return;
  if (last && last->key == undoable_key (index) && now - last->time < UNDO_MERGE_US)
    {
      g_variant_unref (last->after);
      last->after = g_variant_ref (after);
      last->time = now;
      if (g_variant_equal (last->before, last->after))
        setting_change_free (g_queue_pop_head (&self->undo_stack));
    }
  else
    {
      SettingChange *change = g_new (SettingChange, 1);

      change->key = undoable_key (index);
      change->before = g_variant_ref (before);
      change->after = g_variant_ref (after);
      change->time = now;
      g_queue_push_head (&self->undo_stack, change);
    }
  g_queue_clear_full (&self->redo_stack, setting_change_free);
  update_undo_actions (self);
}

static void
on_window_setting (GSettings *settings, const char *key, EsWindow *self)
{
  g_autoptr (GVariant) value = g_settings_get_value (settings, key);
  g_autoptr (GVariant) shared = g_settings_get_value (self->app_settings, key);
  int index = undoable_index (key);

  g_assert (ES_IS_WINDOW (self));
  if (index >= 0)
    {
      if (!self->undoing)
        record_change (self, index, value);
      g_variant_unref (self->undoable_values[index]);
      self->undoable_values[index] = g_variant_ref (value);
    }
  /* The newest choice is the default of the next window. */
  if (!g_variant_equal (value, shared))
    g_settings_set_value (self->app_settings, key, value);
}

static void
on_app_setting (GSettings *settings, const char *key, EsWindow *self)
{
  g_autoptr (GVariant) value = NULL, own = NULL;

  g_assert (ES_IS_WINDOW (self));
  if (!g_strv_contains (app_wide_keys, key))
    return;
  value = g_settings_get_value (settings, key);
  own = g_settings_get_value (self->settings, key);
  if (!g_variant_equal (value, own))
    g_settings_set_value (self->settings, key, value);
}

void
_es_window_settings_create (EsWindow *self, GSettings *defaults)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  g_autoptr (GSettingsBackend) backend = g_memory_settings_backend_new ();
  g_auto (GStrv) keys = NULL;

  g_object_get (defaults, "settings-schema", &schema, NULL);
  self->app_settings = g_object_ref (defaults);
  self->settings = g_settings_new_full (schema, backend, NULL);
  keys = g_settings_schema_list_keys (schema);
  for (char **key = keys; *key; key++)
    {
      g_autoptr (GVariant) value = g_settings_get_user_value (defaults, *key);

      if (value)
        g_settings_set_value (self->settings, *key, value);
    }
  self->undoable_values = g_new (GVariant *, N_UNDOABLE);
  for (int i = 0; i < (int) N_UNDOABLE; i++)
    self->undoable_values[i] = g_settings_get_value (self->settings, undoable_key (i));
  g_signal_connect_object (self->settings, "changed", G_CALLBACK (on_window_setting), self, 0);
  g_signal_connect_object (self->app_settings, "changed", G_CALLBACK (on_app_setting), self, 0);
  update_undo_actions (self);
}

void
_es_window_settings_dispose (EsWindow *self)
{
  if (self->app_settings)
    g_signal_handlers_disconnect_by_data (self->app_settings, self);
  if (self->settings)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_queue_clear_full (&self->undo_stack, setting_change_free);
  g_queue_clear_full (&self->redo_stack, setting_change_free);
  g_queue_clear_full (&self->requested_keys, requested_keys_free);
  g_clear_pointer (&self->shown_keys, g_variant_unref);
  if (self->undoable_values)
    for (int i = 0; i < (int) N_UNDOABLE; i++)
      g_variant_unref (self->undoable_values[i]);
  g_clear_pointer (&self->undoable_values, g_free);
  g_clear_object (&self->settings);
  g_clear_object (&self->app_settings);
}

/* The keys a new window takes from this one beyond the application-wide
 * ones: what it computes and how it shows it. */
void
_es_window_settings_copy_from (EsWindow *self, EsWindow *other)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  g_auto (GStrv) keys = NULL;

  g_object_get (other->settings, "settings-schema", &schema, NULL);
  keys = g_settings_schema_list_keys (schema);
  /* Presets first: choosing one sets its parameters, which are then copied
   * as they are. */
  for (int presets_first = 1; presets_first >= 0; presets_first--)
    for (char **key = keys; *key; key++)
      {
        g_autoptr (GVariant) value = g_settings_get_value (other->settings, *key);

        if (!g_str_has_prefix (*key, "window-") && g_str_has_prefix (*key, "preset-") == presets_first)
          g_settings_set_value (self->settings, *key, value);
      }
  /* A new window has nothing to undo. */
  g_queue_clear_full (&self->undo_stack, setting_change_free);
  update_undo_actions (self);
}

/* The job keys of requests, and of the response on screen */

static gboolean
is_job_key (const char *key)
{
  EsParamId param;

  return es_param_from_name (key, &param) || es_sidebar_definition_has_key (key) || g_str_has_prefix (key, "variant-")
         || g_str_equal (key, "backend");
}

void
_es_window_note_requested_keys (EsWindow *self, guint64 generation)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  g_auto (GStrv) keys = NULL;
  g_auto (GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);
  RequestedKeys *requested = g_new (RequestedKeys, 1);

  g_object_get (self->settings, "settings-schema", &schema, NULL);
  keys = g_settings_schema_list_keys (schema);
  for (char **key = keys; *key; key++)
    if (is_job_key (*key))
      g_variant_builder_add (&builder, "{sv}", *key, g_settings_get_value (self->settings, *key));
  requested->generation = generation;
  requested->keys = g_variant_ref_sink (g_variant_builder_end (&builder));
  g_queue_push_tail (&self->requested_keys, requested);
}

void
_es_window_note_shown_keys (EsWindow *self, guint64 generation)
{
  RequestedKeys *requested;

  /* Requests up to this one are answered or superseded. */
  while ((requested = g_queue_peek_head (&self->requested_keys)) && requested->generation <= generation)
    {
      g_queue_pop_head (&self->requested_keys);
      if (requested->generation == generation)
        {
          g_clear_pointer (&self->shown_keys, g_variant_unref);
          self->shown_keys = g_variant_ref (requested->keys);
        }
      requested_keys_free (requested);
    }
}

void
_es_window_restore_shown_keys (EsWindow *self)
{
  GVariantIter iter;
  const char *key;
  GVariant *value;

  g_queue_clear_full (&self->requested_keys, requested_keys_free);
  if (self->shown_keys == NULL)
    return;
  g_variant_iter_init (&iter, self->shown_keys);
  while (g_variant_iter_loop (&iter, "{&sv}", &key, &value))
    {
      g_autoptr (GVariant) now = g_settings_get_value (self->settings, key);

      if (!g_variant_equal (now, value))
        g_settings_set_value (self->settings, key, value);
    }
}

/* What a change of a setting does */

void
_es_window_on_settings_changed (GSettings *settings, const char *key, EsWindow *self)
{
  g_autoptr (GVariant) value = g_settings_get_value (settings, key);
  g_autofree char *printed = g_variant_print (value, FALSE);
  g_autofree char *what = g_strdup_printf ("%s=%s", key, printed);
  EsParamId param;

  g_assert (ES_IS_WINDOW (self));
  if (g_str_equal (key, "colormap") || g_str_equal (key, "reversed") || g_str_equal (key, "range")
      || g_str_equal (key, "units"))
    {
      /* How results are shown needs no new job: the canvas recolours only
       * what is visible, from the values it has. */
      _es_window_log_change (self, 0, what);
      _es_window_refresh (self);
      _es_window_watch_next_paint (self);
    }
  else if (g_str_equal (key, "view"))
    {
      es_canvas_set_active_pane (self->canvas, _es_window_first_grid_heatmap ());
      _es_window_refresh (self);
      _es_window_schedule_update (self, what);
      g_object_notify (G_OBJECT (self), "view");
    }
  else if (g_str_equal (key, "show-timings"))
    {
      /* The canvas's overlays come and go with the card. */
      _es_window_refresh (self);
      g_object_notify (G_OBJECT (self), "show-timings");
    }
  else if (g_str_equal (key, "backend"))
    {
      _es_window_schedule_update (self, what);
      g_object_notify (G_OBJECT (self), "backend");
    }
  else if (g_str_has_prefix (key, "variant-"))
    {
      _es_window_schedule_update (self, what);
      g_object_notify (G_OBJECT (self), "variant");
    }
  else if (es_param_from_name (key, &param))
    _es_window_schedule_update (self, what);
  else if (g_str_equal (key, "max-pixels"))
    _es_window_apply_max_pixels (self);
}

/* Undo, redo, reset */

static void
apply_change (EsWindow *self, GQueue *from, GQueue *to, gboolean undo)
{
  SettingChange *change = g_queue_pop_head (from);

  if (change == NULL)
    return;
  self->undoing = TRUE;
  g_settings_set_value (self->settings, change->key, undo ? change->before : change->after);
  self->undoing = FALSE;
  change->time = 0; /* never merged with what follows */
  g_queue_push_head (to, change);
  update_undo_actions (self);
}

static void
undo_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));

  /* In a text field, Ctrl+Z is the field's. */
  if (GTK_IS_TEXT (focus))
    {
      gtk_widget_activate_action (focus, g_str_equal (action_name, "win.undo") ? "text.undo" : "text.redo", NULL);
      return;
    }
  if (g_str_equal (action_name, "win.undo"))
    apply_change (self, &self->undo_stack, &self->redo_stack, TRUE);
  else
    apply_change (self, &self->redo_stack, &self->undo_stack, FALSE);
}

/* Parameters, the entropy definition, colours, variants and the backend go
 * back to the schema's defaults, as one step for each key that Undo can take
 * back. */
static void
reset_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  g_autoptr (GSettingsSchema) schema = NULL;
  g_auto (GStrv) keys = NULL;

  SettingChange *last = g_queue_peek_head (&self->undo_stack);

  /* Its steps are its own: the first key it resets (in the schema's hash
   * order) must not merge into a change of that key just before. */
  if (last)
    last->time = 0;
  g_object_get (self->settings, "settings-schema", &schema, NULL);
  keys = g_settings_schema_list_keys (schema);
  for (char **key = keys; *key; key++)
    if (undoable_index (*key) >= 0 || g_str_has_prefix (*key, "variant-") || g_str_equal (*key, "backend")
        || es_sidebar_definition_has_key (*key))
      {
        g_autoptr (GSettingsSchemaKey) schema_key = g_settings_schema_get_key (schema, *key);
        g_autoptr (GVariant) fallback = g_settings_schema_key_get_default_value (schema_key);

        g_settings_set_value (self->settings, *key, fallback);
      }
  _es_window_show_message (self, _ ("Settings reset to their defaults"));
}

static void
new_window_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  GtkApplication *application = gtk_window_get_application (GTK_WINDOW (self));
  EsWindow *another;

  if (application == NULL)
    return;
  another = es_window_new (ADW_APPLICATION (application), self->app_settings);
  _es_window_settings_copy_from (another, self);
  if (self->source && self->source->file)
    es_window_open (another, self->source->file);
  else
    gtk_stack_set_visible_child_name (another->stack, "empty");
  gtk_window_present (GTK_WINDOW (another));
}

void
_es_window_class_settings_init (EsWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_install_action (widget_class, "win.undo", NULL, undo_action);
  gtk_widget_class_install_action (widget_class, "win.redo", NULL, undo_action);
  gtk_widget_class_install_action (widget_class, "win.reset", NULL, reset_action);
  gtk_widget_class_install_action (widget_class, "win.new-window", NULL, new_window_action);
}
