/* SPDX-License-Identifier: MIT */
/* GSettings helpers shared by the window and the side panel. */
#pragma once

#include <gio/gio.h>

#include "es-ops.h"

G_BEGIN_DECLS

/* Binds a string key holding one of `nicks` (NULL-terminated, static) to a
 * guint "selected" property (AdwComboRow, GtkDropDown): index i <-> nicks[i]. */
void es_settings_bind_choice (GSettings *settings, const char *key, gpointer object, const char *const *nicks);

/* A numeric key ("i" or "d", such as a parameter's) as a double. */
double es_settings_get_number (GSettings *settings, const char *key);

/* Sets a numeric key ("i" or "d") from a double. */
void es_settings_set_number (GSettings *settings, const char *key, double value);

/* The key holding the CUDA kernel variant of op: "variant-entropy". */
char *es_settings_variant_key (EsOp op);
/* The key holding the preset of op, an operation with presets (es_presets):
 * "preset-clahe", one of the nicks EsOpInfo.definition_name and its
 * presets' names. */
char *es_settings_preset_key (EsOp op);

G_END_DECLS
