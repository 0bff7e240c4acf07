/* SPDX-License-Identifier: MIT */
/* entroscope: the GTK window's entry point. */
#include <glib/gi18n-lib.h>
#include <locale.h>

#include "es-application.h"
#include "es-intl.h"

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSettings) settings = NULL;
  g_autoptr (EsApplication) application = NULL;

  /* Before anything shows text: the window's, the templates' (GtkBuilder
   * translates in the default domain) and app/'s messages. */
  setlocale (LC_ALL, "");
  es_intl_init ();
  textdomain (GETTEXT_PACKAGE);
  settings = es_application_create_settings (&error);
  if (settings == NULL)
    {
      g_printerr ("entroscope: %s\n", error->message);
      return 1;
    }
  g_set_application_name ("Entroscope");
  application = es_application_new (settings, 0);
  return g_application_run (G_APPLICATION (application), argc, argv);
}
