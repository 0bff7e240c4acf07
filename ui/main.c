/* SPDX-License-Identifier: MIT */
/* entroscope: the GTK window's entry point. */
#include "es-application.h"

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSettings) settings = es_application_create_settings (&error);
  g_autoptr (EsApplication) application = NULL;

  if (settings == NULL)
    {
      g_printerr ("entroscope: %s\n", error->message);
      return 1;
    }
  g_set_application_name ("Entroscope");
  application = es_application_new (settings, 0);
  return g_application_run (G_APPLICATION (application), argc, argv);
}
