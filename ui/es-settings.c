/* SPDX-License-Identifier: MIT */
/* GSettings helpers shared by the window and the side panel. */
#include "es-settings.h"

#include <math.h>

static gboolean
nick_to_index (GValue *value, GVariant *variant, gpointer user_data)
{
  const char *const *nicks = user_data;
  const char *nick = g_variant_get_string (variant, NULL);

  for (guint i = 0; nicks[i]; i++)
    if (g_str_equal (nicks[i], nick))
      {
        g_value_set_uint (value, i);
        return TRUE;
      }
  return FALSE;
}

static GVariant *
index_to_nick (const GValue *value, const GVariantType *type, gpointer user_data)
{
  const char *const *nicks = user_data;
  guint index = g_value_get_uint (value);

  return index < g_strv_length ((char **) nicks) ? g_variant_new_string (nicks[index]) : NULL;
}

void
es_settings_bind_choice (GSettings *settings, const char *key, gpointer object, const char *const *nicks)
{
  g_settings_bind_with_mapping (settings, key, object, "selected", G_SETTINGS_BIND_DEFAULT, nick_to_index,
                                index_to_nick, (gpointer) nicks, NULL);
}

double
es_settings_get_number (GSettings *settings, const char *key)
{
  g_autoptr (GVariant) value = NULL;

  g_return_val_if_fail (G_IS_SETTINGS (settings), NAN);

  value = g_settings_get_value (settings, key);
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_INT32))
    return g_variant_get_int32 (value);
  if (g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
    return g_variant_get_double (value);
  g_return_val_if_reached (NAN);
}

void
es_settings_set_number (GSettings *settings, const char *key, double value)
{
  g_autoptr (GVariant) old = NULL;

  g_return_if_fail (G_IS_SETTINGS (settings));

  old = g_settings_get_value (settings, key);
  if (g_variant_is_of_type (old, G_VARIANT_TYPE_INT32))
    g_settings_set_int (settings, key, (int) lround (value));
  else if (g_variant_is_of_type (old, G_VARIANT_TYPE_DOUBLE))
    g_settings_set_double (settings, key, value);
  else
    g_return_if_reached ();
}

char *
es_settings_preset_key (EsOp op)
{
  return g_strconcat ("preset-", es_op_name (op), NULL);
}

char *
es_settings_variant_key (EsOp op)
{
  return g_strconcat ("variant-", es_op_name (op), NULL);
}
