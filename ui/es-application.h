/* SPDX-License-Identifier: MIT */
/* EsApplication: org.entroscope.Entroscope; opens files, owns settings and accelerators. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define ES_APPLICATION_ID "org.entroscope.Entroscope"

#define ES_TYPE_APPLICATION (es_application_get_type ())
G_DECLARE_FINAL_TYPE (EsApplication, es_application, ES, APPLICATION, AdwApplication)

/* The settings schema, from the installed schemas or, for uninstalled runs,
 * from the build tree. NULL with a message when neither has it. */
GSettings *es_application_create_settings (GError **error);

EsApplication *es_application_new (GSettings *settings, GApplicationFlags flags);

G_END_DECLS
