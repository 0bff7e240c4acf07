/* GSettings helpers shared by the window and the side panel. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Binds a string key holding one of `nicks` (NULL-terminated, static) to a
 * guint "selected" property (AdwComboRow, GtkDropDown): index i <-> nicks[i]. */
void es_settings_bind_choice (GSettings *settings, const char *key, gpointer object,
                              const char *const *nicks);

G_END_DECLS
