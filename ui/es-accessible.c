/* SPDX-License-Identifier: MIT */
/* What GTK 4.8 does not tell assistive technologies on its own, or tells twice. */
#include "es-accessible.h"

static void
on_selected_item (GtkDropDown *drop_down, GParamSpec *pspec, GtkWidget *button)
{
  GObject *item = gtk_drop_down_get_selected_item (drop_down);

  if (GTK_IS_STRING_OBJECT (item))
    gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                    gtk_string_object_get_string (GTK_STRING_OBJECT (item)), -1);
  else
    gtk_accessible_reset_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
}

/* The drop-down's toggle button, its first child in GTK 4.8, named name. */
static void
name_button (GtkDropDown *drop_down, const char *name)
{
  GtkWidget *button = gtk_widget_get_first_child (GTK_WIDGET (drop_down));

  /* A later GTK may build the drop-down otherwise; it then names its own parts. */
  if (!GTK_IS_TOGGLE_BUTTON (button))
    return;
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  g_signal_connect_object (drop_down, "notify::selected-item", G_CALLBACK (on_selected_item), button, 0);
  on_selected_item (drop_down, NULL, button);
}

void
es_accessible_name_drop_down (GtkDropDown *drop_down, const char *name)
{
  g_return_if_fail (GTK_IS_DROP_DOWN (drop_down));
  g_return_if_fail (name != NULL);

  gtk_accessible_update_property (GTK_ACCESSIBLE (drop_down), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  name_button (drop_down, name);
}

void
es_accessible_label_drop_down (GtkDropDown *drop_down, GtkLabel *label)
{
  g_return_if_fail (GTK_IS_DROP_DOWN (drop_down));
  g_return_if_fail (GTK_IS_LABEL (label));

  name_button (drop_down, gtk_label_get_text (label));
}

void
es_accessible_fix_mnemonic_buttons (GtkWidget *root)
{
  g_return_if_fail (GTK_IS_WIDGET (root));

  if (GTK_IS_BUTTON (root) && gtk_button_get_use_underline (GTK_BUTTON (root)))
    gtk_accessible_reset_property (GTK_ACCESSIBLE (root), GTK_ACCESSIBLE_PROPERTY_LABEL);
  for (GtkWidget *child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    es_accessible_fix_mnemonic_buttons (child);
}
