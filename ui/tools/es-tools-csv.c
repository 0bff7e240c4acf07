/* SPDX-License-Identifier: MIT */
/* The line profile and the rectangle statistics as CSV: copied (tools.copy) or exported through a
 * file chooser (tools.export), written atomically by es_csv_write. */
#include "es-tools-private.h"

#include <glib/gi18n-lib.h>

/* The CSV of the current tool's results; FALSE without any. */
static gboolean
build_csv (EsTools *self, EsCsv *csv)
{
  es_tools_update (self);
  es_csv_init (csv);
  if (self->tool == ES_TOOL_LINE && self->profile.n > 0)
    es_profile_csv (&self->profile, self->channels.channels, csv);
  else if (self->tool == ES_TOOL_RECT && self->has_rect && self->channels.n > 0)
    es_roi_csv (self->channels.channels, self->stats, self->channels.n, self->roi, csv);
  else
    return FALSE;
  return TRUE;
}

char *
es_tools_get_csv (EsTools *self)
{
  char *text = NULL;
  EsCsv csv;

  g_return_val_if_fail (ES_IS_TOOLS (self), NULL);

  if (build_csv (self, &csv) && !csv.failed)
    text = g_strdup (es_csv_get_text (&csv));
  es_csv_clear (&csv);
  return text;
}

gboolean
es_tools_export_csv (EsTools *self, const char *path, GError **error)
{
  EsError es_error = { 0 };
  gboolean ok;
  EsCsv csv;

  g_return_val_if_fail (ES_IS_TOOLS (self), FALSE);

  if (!build_csv (self, &csv))
    {
      es_csv_clear (&csv);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _ ("Draw a line or a rectangle first"));
      return FALSE;
    }
  ok = es_csv_write (&csv, path, &es_error);
  es_csv_clear (&csv);
  if (!ok)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", es_error.message);
  return ok;
}

void
_es_tools_copy_action (GSimpleAction *action, GVariant *parameter, gpointer data)
{
  EsTools *self = data;
  g_autofree char *text = es_tools_get_csv (self);

  if (text == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self->host)), text);
  es_tools_host_show_message (self->host, self->tool == ES_TOOL_LINE ? _ ("Profile copied as CSV")
                                                                     : _ ("Statistics copied as CSV"));
}

static void
on_export_response (GtkNativeDialog *chooser, int response, EsTools *self)
{
  g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  g_autofree char *path = file ? g_file_get_path (file) : NULL;
  g_autoptr (GError) error = NULL;

  if (response == GTK_RESPONSE_ACCEPT && path)
    {
      g_autofree char *name = g_file_get_basename (file);
      g_autofree char *message = NULL;

      if (es_tools_export_csv (self, path, &error))
        message = g_strdup_printf (_ ("Wrote “%s”"), name);
      else
        message = g_strdup_printf (_ ("Could not export “%s”: %s"), name, error->message);
      es_tools_host_show_message (self->host, message);
    }
  gtk_native_dialog_destroy (chooser);
  g_object_unref (chooser);
}

void
_es_tools_export_action (GSimpleAction *action, GVariant *parameter, gpointer data)
{
  EsTools *self = data;
  EsSource *source = es_tools_host_get_source (self->host);
  g_autoptr (GtkFileFilter) filter = NULL;
  GtkFileChooserNative *chooser;
  g_autofree char *stem = NULL, *name = NULL;
  char *dot;

  if (source == NULL || !(self->tool == ES_TOOL_LINE ? self->has_line : self->has_rect))
    return;
  chooser = gtk_file_chooser_native_new (self->tool == ES_TOOL_LINE ? _ ("Export the Profile")
                                                                    : _ ("Export the Statistics"),
                                         GTK_WINDOW (self->host), GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  es_tools_host_set_chooser_folder (self->host, GTK_FILE_CHOOSER (chooser));
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, "CSV");
  gtk_file_filter_add_pattern (filter, "*.csv");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  stem = g_strdup (source->name);
  if ((dot = strrchr (stem, '.')) && dot != stem)
    *dot = '\0';
  name = g_strdup_printf ("%s-%s.csv", stem, self->tool == ES_TOOL_LINE ? "profile" : "roi");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_signal_connect (chooser, "response", G_CALLBACK (on_export_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}
