/* SPDX-License-Identifier: MIT */
/* EsApplication: windows for activate/open (each with its own settings), the sample or the last image,
 * accelerators, the style, about. */
#include "es-application.h"

#include <glib/gi18n-lib.h>

#include "es-debug.h"
#include "es-engine.h"
#include "es-window.h"

struct _EsApplication {
  AdwApplication parent_instance;

  GSettings *settings;
  gboolean compare_at_start; /* --compare */
};

G_DEFINE_FINAL_TYPE (EsApplication, es_application, ADW_TYPE_APPLICATION)

GSettings *
es_application_create_settings (GError **error)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchemaSource) build_source = NULL;
  g_autoptr (GSettingsSchema) schema = NULL;

  if (source)
    schema = g_settings_schema_source_lookup (source, ES_APPLICATION_ID, TRUE);
  if (schema == NULL && g_file_test (ES_BUILD_SCHEMA_DIR "/gschemas.compiled", G_FILE_TEST_EXISTS))
    {
      build_source = g_settings_schema_source_new_from_directory (ES_BUILD_SCHEMA_DIR, source, FALSE, error);
      if (build_source == NULL)
        return NULL;
      schema = g_settings_schema_source_lookup (build_source, ES_APPLICATION_ID, TRUE);
    }
  if (schema == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _ ("The settings schema %s is not installed (nor compiled in %s)"), ES_APPLICATION_ID,
                   ES_BUILD_SCHEMA_DIR);
      return NULL;
    }
  return g_settings_new_full (schema, NULL, NULL);
}

EsApplication *
es_application_new (GSettings *settings, GApplicationFlags flags)
{
  EsApplication *self = g_object_new (ES_TYPE_APPLICATION, "application-id", ES_APPLICATION_ID, "flags",
                                      flags | G_APPLICATION_HANDLES_OPEN, "resource-base-path",
                                      "/org/entroscope/Entroscope", NULL);
  self->settings = g_object_ref (settings);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), "[FILE…]");
  g_application_add_main_option (G_APPLICATION (self), "compare", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE,
                                 "Open the Compare Variants view once the image is open", NULL);
  return self;
}

static int
es_application_handle_local_options (GApplication *application, GVariantDict *options)
{
  if (g_variant_dict_contains (options, "compare"))
    ES_APPLICATION (application)->compare_at_start = TRUE;
  return -1;
}

static void
compare_at_start (EsApplication *self, EsWindow *window)
{
  if (self->compare_at_start)
    es_window_compare_when_open (window);
  self->compare_at_start = FALSE;
}

static EsWindow *
get_window (EsApplication *self, gboolean *created)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  *created = window == NULL;
  if (window == NULL)
    window = GTK_WINDOW (es_window_new (ADW_APPLICATION (self), self->settings));
  return ES_WINDOW (window);
}

/* "Reopen the Last Image at Start": the newest recent file, if it is still there. */
static gboolean
open_last (EsApplication *self, EsWindow *window)
{
  g_auto (GStrv) recent = g_settings_get_strv (self->settings, "recent-files");
  g_autoptr (GFile) file = NULL;

  if (!g_settings_get_boolean (self->settings, "reopen-last") || recent[0] == NULL)
    return FALSE;
  file = g_file_new_for_uri (recent[0]);
  if (!g_file_query_exists (file, NULL))
    return FALSE;
  es_window_open (window, file);
  return TRUE;
}

static void
es_application_activate (GApplication *application)
{
  EsApplication *self = ES_APPLICATION (application);
  gboolean created;
  EsWindow *window = get_window (self, &created);

  /* Started with nothing to open: the last image, or the bundled sample. */
  if (created && !open_last (self, window))
    es_window_open_sample (window);
  gtk_window_present (GTK_WINDOW (window));
  compare_at_start (self, window);
}

static void
es_application_open (GApplication *application, GFile **files, int n_files, const char *hint)
{
  EsApplication *self = ES_APPLICATION (application);
  gboolean created;
  EsWindow *window = get_window (self, &created);

  if (n_files > 0)
    es_window_open (window, files[0]);
  gtk_window_present (GTK_WINDOW (window));
  compare_at_start (self, window);

  /* Each further file gets a window of its own. */
  for (int i = 1; i < n_files; i++)
    {
      EsWindow *another = es_window_new (ADW_APPLICATION (self), self->settings);

      es_window_open (another, files[i]);
      gtk_window_present (GTK_WINDOW (another));
    }
}

static void
about_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  EsApplication *self = ES_APPLICATION (user_data);
  GtkWindow *parent;
  const char *developers[] = { _ ("The Entroscope developers"), NULL };
  g_autofree char *debug_info = NULL;
  GtkWidget *about;

  g_assert (ES_IS_APPLICATION (self));
  parent = gtk_application_get_active_window (GTK_APPLICATION (self));

  debug_info = g_strdup_printf (_ ("Engine: %s\nCUDA backend compiled: %s\nGTK %u.%u.%u, libadwaita %u.%u.%u\n"),
                                parent && ES_IS_WINDOW (parent) && es_window_get_engine_description (ES_WINDOW (parent))
                                  ? es_window_get_engine_description (ES_WINDOW (parent))
                                  : _ ("not started"),
                                es_engine_cuda_compiled () ? "yes" : "no", gtk_get_major_version (),
                                gtk_get_minor_version (), gtk_get_micro_version (), adw_get_major_version (),
                                adw_get_minor_version (), adw_get_micro_version ());
  about = g_object_new (ADW_TYPE_ABOUT_WINDOW, "transient-for", parent, "application-name", "Entroscope",
                        "application-icon", ES_APPLICATION_ID, "developer-name", "The Entroscope developers",
                        "developers", developers, "version", ES_VERSION, "comments",
                        "Inspect grayscale images through local entropy, histogram "
                        "equalization and sharpening, on a CUDA GPU or every CPU core.",
                        "license-type", GTK_LICENSE_MIT_X11, "debug-info", debug_info, NULL);
  gtk_window_present (GTK_WINDOW (about));
  /* GTK owns a window once made (its list of toplevels), and frees it when
   * it is closed: nothing leaks. */
  /* cppcheck-suppress memleak */
}

static void
quit_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  EsApplication *self = ES_APPLICATION (user_data);
  GList *windows;

  g_assert (ES_IS_APPLICATION (self));
  windows = gtk_application_get_windows (GTK_APPLICATION (self));
  /* Closing (not destroying) lets each window save its size. */
  for (GList *l = g_list_copy (windows); l; l = g_list_delete_link (l, l))
    gtk_window_close (l->data);
}

/* The "style" setting: following the system means dark where it states no
 * preference, as heatmaps read best on a dark surround. */
static void
apply_style (GSettings *settings, const char *key, EsApplication *self)
{
  static const AdwColorScheme schemes[] = {
    ADW_COLOR_SCHEME_PREFER_DARK,
    ADW_COLOR_SCHEME_FORCE_LIGHT,
    ADW_COLOR_SCHEME_FORCE_DARK,
  };
  guint style = g_settings_get_enum (settings, "style");

  adw_style_manager_set_color_scheme (adw_style_manager_get_default (),
                                      schemes[MIN (style, G_N_ELEMENTS (schemes) - 1)]);
}

static void
es_application_startup (GApplication *application)
{
  EsApplication *self = ES_APPLICATION (application);
  /* Menu items bound straight to application-wide settings. */
  static const char *const setting_actions[] = { "style", "reopen-last" };
  static const GActionEntry actions[] = {
    { .name = "about", .activate = about_action },
    { .name = "quit", .activate = quit_action },
  };
  static const struct {
    const char *action;
    const char *accels[4];
  } accels[] = {
    { "app.quit", { "<Primary>q", NULL } },
    { "window.close", { "<Primary>w", NULL } },
    { "win.new-window", { "<Primary>n", NULL } },
    { "win.fullscreen", { "F11", NULL } },
    { "win.undo", { "<Primary>z", NULL } },
    { "win.redo", { "<Primary><Shift>z", "<Primary>y", NULL } },
    { "win.image-info", { "<Primary>i", NULL } },
    { "win.open", { "<Primary>o", NULL } },
    { "win.export", { "<Primary>e", NULL } },
    { "win.copy", { "<Primary>c", NULL } },
    { "win.compare", { "<Primary>b", NULL } },
    { "win.zoom-fit", { "<Primary>0", NULL } },
    { "win.zoom-in", { "<Primary>plus", "<Primary>equal", "<Primary>KP_Add", NULL } },
    { "win.zoom-out", { "<Primary>minus", "<Primary>KP_Subtract", NULL } },
    { "win.show-sidebar", { "F9", NULL } },
    { "win.show-timings", { "<Primary>t", NULL } },
  };

  G_APPLICATION_CLASS (es_application_parent_class)->startup (application);

  g_action_map_add_action_entries (G_ACTION_MAP (application), actions, G_N_ELEMENTS (actions), application);
  for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (application), accels[i].action, accels[i].accels);
  /* Alt+1… choose the views in the order of the view switcher. */
  for (const char *const *nicks = es_window_get_view_nicks (), *const *nick = nicks; *nick; nick++)
    {
      g_autofree char *action = g_strdup_printf ("win.view::%s", *nick);
      g_autofree char *accel = g_strdup_printf ("<Alt>%d", (int) (nick - nicks) + 1);
      const char *view_accels[] = { accel, NULL };

      gtk_application_set_accels_for_action (GTK_APPLICATION (application), action, view_accels);
    }
  for (guint i = 0; i < G_N_ELEMENTS (setting_actions); i++)
    {
      g_autoptr (GAction) action = g_settings_create_action (self->settings, setting_actions[i]);

      g_action_map_add_action (G_ACTION_MAP (application), action);
    }
  g_signal_connect_object (self->settings, "changed::style", G_CALLBACK (apply_style), self, 0);
  apply_style (self->settings, "style", self);
  es_debug_log ("application started");
}

static void
es_application_shutdown (GApplication *application)
{
  es_debug_unwatch_main_loop ();
  G_APPLICATION_CLASS (es_application_parent_class)->shutdown (application);
}

static void
es_application_finalize (GObject *object)
{
  g_clear_object (&ES_APPLICATION (object)->settings);
  G_OBJECT_CLASS (es_application_parent_class)->finalize (object);
}

static void
es_application_class_init (EsApplicationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = es_application_finalize;
  G_APPLICATION_CLASS (klass)->activate = es_application_activate;
  G_APPLICATION_CLASS (klass)->open = es_application_open;
  G_APPLICATION_CLASS (klass)->startup = es_application_startup;
  G_APPLICATION_CLASS (klass)->handle_local_options = es_application_handle_local_options;
  G_APPLICATION_CLASS (klass)->shutdown = es_application_shutdown;
}

static void
es_application_init (EsApplication *self)
{}
