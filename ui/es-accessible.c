/* SPDX-License-Identifier: MIT */
/* What GTK 4.8 does not tell assistive technologies on its own, for widgets built in C. */
#include "es-accessible.h"

/* The drop-down's toggle button: its first child in GTK 4.8. */
static GtkWidget *
drop_down_button (GtkDropDown *drop_down)
{
  GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (drop_down));

  return GTK_IS_TOGGLE_BUTTON (child) ? child : NULL;
}

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

void
es_accessible_name_drop_down (GtkDropDown *drop_down, const char *name)
{
  GtkWidget *button;

  g_return_if_fail (GTK_IS_DROP_DOWN (drop_down));

  g_return_if_fail (name != NULL);

  gtk_accessible_update_property (GTK_ACCESSIBLE (drop_down), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  button = drop_down_button (drop_down);
  /* A later GTK may build the drop-down otherwise; it then names its own parts. */
  if (button == NULL)
    return;
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  g_signal_connect_object (drop_down, "notify::selected-item", G_CALLBACK (on_selected_item), button, 0);
  on_selected_item (drop_down, NULL, button);
}
