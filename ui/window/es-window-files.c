/* SPDX-License-Identifier: MIT */
/* EsWindow: the files around the image: Open Recent (the "recent-files" setting) and Image Information. */
#include "es-window-private.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#define MAX_RECENT 10

/* Recent files */

/* A menu label shows a file name as it is: its underscores are not mnemonics. */
static char *
menu_label (const char *name)
{
  g_auto (GStrv) parts = g_strsplit (name, "_", -1);

  return g_strjoinv ("__", parts);
}

static void
rebuild_recent_menu (EsWindow *self)
{
  g_auto (GStrv) uris = g_settings_get_strv (self->settings, "recent-files");

  g_menu_remove_all (self->recent_menu);
  for (guint i = 0; i < MAX_RECENT && uris[i]; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_uri (uris[i]);
      g_autofree char *name = g_file_get_basename (file);
      g_autofree char *label = NULL;
      g_autoptr (GMenuItem) item = NULL;

      if (name == NULL || !g_utf8_validate (name, -1, NULL))
        {
          g_free (name);
          name = g_file_get_parse_name (file);
        }
      label = menu_label (name);
      item = g_menu_item_new (label, NULL);
      g_menu_item_set_action_and_target_value (item, "win.open-recent", g_variant_new_string (uris[i]));
      g_menu_append_item (self->recent_menu, item);
    }
  if (uris[0] == NULL)
    g_menu_append (self->recent_menu, "No Recent Files", "win.no-recent");
}

void
_es_window_add_recent (EsWindow *self, GFile *file)
{
  g_autofree char *uri = g_file_get_uri (file);
  g_auto (GStrv) uris = g_settings_get_strv (self->settings, "recent-files");
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_auto (GStrv) recent = NULL;
  guint n = 1;

  g_strv_builder_add (builder, uri);
  for (guint i = 0; uris[i] && n < MAX_RECENT; i++)
    if (!g_str_equal (uris[i], uri))
      {
        g_strv_builder_add (builder, uris[i]);
        n++;
      }
  recent = g_strv_builder_end (builder);
  g_settings_set_strv (self->settings, "recent-files", (const char *const *) recent);
}

static void
open_recent_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  es_window_open (ES_WINDOW (widget), file);
}

static void
on_recent_files (GSettings *settings, const char *key, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  rebuild_recent_menu (self);
}

/* Image information */

/* The format by the first bytes, as the loader recognises it. */
static const char *
file_format (EsSource *source)
{
  g_autoptr (GFileInputStream) stream = NULL;
  guint8 magic[8] = { 0 };
  gsize n = 0;

  if (source->image.levels > 0)
    return _ ("Text matrix");
  if (source->file == NULL || !(stream = g_file_read (source->file, NULL, NULL))
      || !g_input_stream_read_all (G_INPUT_STREAM (stream), magic, sizeof magic, &n, NULL, NULL))
    return _ ("unknown (the file cannot be read now)");
  if (n >= 8 && memcmp (magic, "\x89PNG\r\n\x1a\n", 8) == 0)
    return "PNG";
  if (n >= 2 && magic[0] == 'P' && (magic[1] == '2' || magic[1] == '5'))
    return magic[1] == '2' ? _ ("PGM (plain, P2)") : _ ("PGM (binary, P5)");
  if (n >= 4 && (memcmp (magic, "II*\0", 4) == 0 || memcmp (magic, "MM\0*", 4) == 0))
    return "TIFF";
  return _ ("unknown (the file changed since it was opened)");
}

char *
_es_window_describe_source (EsWindow *self)
{
  EsSource *source = self->source;
  g_autoptr (GFileInfo) info = NULL;
  g_autofree char *where = NULL, *size = NULL;
  GString *text;

  if (source == NULL)
    return NULL;
  text = g_string_new (NULL);
  g_string_append_printf (text, _ ("Size: %d × %d pixels (%.2f megapixels)\n"), source->image.width,
                          source->image.height, (double) source->image.width * source->image.height / 1e6);
  g_string_append_printf (text, _ ("Depth: %d-bit%s\n"), source->image.depth,
                          source->image.levels > 0 ? " levels" : " gray");
  if (source->image.levels > 0)
    g_string_append_printf (text, "Levels: %d\n", source->image.levels);
  g_string_append_printf (text, "Format: %s\n", file_format (source));
  if (source->file)
    info = g_file_query_info (source->file, G_FILE_ATTRIBUTE_STANDARD_SIZE, G_FILE_QUERY_INFO_NONE, NULL, NULL);
  if (info)
    {
      g_autofree char *human = g_format_size (g_file_info_get_size (info));

      size = g_strdup_printf ("%s (%" G_GINT64_FORMAT " bytes)", human, g_file_info_get_size (info));
    }
  g_string_append_printf (text, _ ("File size: %s\n"), size ? size : "unknown");
  where = source->file ? g_file_get_parse_name (source->file) : g_strdup (source->name);
  g_string_append_printf (text, "Path: %s", where);
  return g_string_free (text, FALSE);
}

static void
image_info_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  g_autofree char *body = _es_window_describe_source (self);
  GtkWidget *dialog;

  if (body == NULL)
    return;
  dialog = adw_message_dialog_new (GTK_WINDOW (self), self->source->name, body);
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", "_Close");
  gtk_window_present (GTK_WINDOW (dialog));
}

/* The placeholder of an empty Open Recent menu: never enabled. */
static void
no_recent_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{}

void
_es_window_class_files_init (EsWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.image-info", NULL, image_info_action);
  gtk_widget_class_install_action (widget_class, "win.no-recent", NULL, no_recent_action);
}

void
_es_window_files_init (EsWindow *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.no-recent", FALSE);
}

void
_es_window_files_bind (EsWindow *self)
{
  g_signal_connect_object (self->settings, "changed::recent-files", G_CALLBACK (on_recent_files), self, 0);
  rebuild_recent_menu (self);
}
