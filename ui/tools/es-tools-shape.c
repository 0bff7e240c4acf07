/* SPDX-License-Identifier: MIT */
/* The shape's coordinates typed in: the line's ends or the rectangle's corners in spin buttons, in a
 * popover of the panel's header, so that a shape can be drawn, or made exact, from the keyboard. */
#include "es-tools-private.h"

#include <glib/gi18n-lib.h>

static const char *const titles[4] = { "From _x", "From _y", "To x", "To y" };

/* The shape the spin buttons edit: the line's ends or the rectangle's corners. */
static int *
shape_values (EsTools *self, gboolean **has)
{
  if (self->tool == ES_TOOL_RECT)
    {
      *has = &self->has_rect;
      return self->rect_corners;
    }
  *has = &self->has_line;
  return self->line;
}

static void
on_value_changed (GtkSpinButton *spin, EsTools *self)
{
  gboolean *has;
  int *values = shape_values (self, &has);

  if (self->shape_updating || (self->tool != ES_TOOL_LINE && self->tool != ES_TOOL_RECT))
    return;
  /* A value typed with no shape yet starts one (the others read 0). */
  *has = TRUE;
  for (int i = 0; i < 4; i++)
    values[i] = gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->shape_spins[i]));
  es_tools_update (self);
}

void
_es_tools_shape_update (EsTools *self)
{
  EsSource *source = es_tools_host_get_source (self->host);
  gboolean *has;
  int *values = shape_values (self, &has);

  if (source == NULL)
    return;
  self->shape_updating = TRUE;
  for (int i = 0; i < 4; i++)
    {
      GtkSpinButton *spin = GTK_SPIN_BUTTON (self->shape_spins[i]);

      gtk_spin_button_set_range (spin, 0, (i % 2 ? source->image.height : source->image.width) - 1);
      gtk_spin_button_set_value (spin, *has ? values[i] : 0);
    }
  self->shape_updating = FALSE;
  gtk_widget_set_visible (self->shape_button, self->tool == ES_TOOL_LINE || self->tool == ES_TOOL_RECT);
}

GtkWidget *
_es_tools_shape_button_new (EsTools *self)
{
  GtkWidget *button = gtk_menu_button_new ();
  GtkWidget *popover = gtk_popover_new ();
  GtkWidget *grid = gtk_grid_new ();

  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (button), "document-edit-symbolic");
  gtk_widget_set_tooltip_text (button, _ ("Coordinates"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Coordinates"), -1);
  gtk_widget_add_css_class (button, "flat");
  gtk_grid_set_column_spacing (GTK_GRID (grid), 8);
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  for (int i = 0; i < 4; i++)
    {
      GtkWidget *label = gtk_label_new_with_mnemonic (titles[i]);
      GtkWidget *spin = gtk_spin_button_new_with_range (0, 1, 1);

      gtk_label_set_xalign (GTK_LABEL (label), 1);
      gtk_label_set_mnemonic_widget (GTK_LABEL (label), spin);
      gtk_editable_set_width_chars (GTK_EDITABLE (spin), 5);
      g_signal_connect (spin, "value-changed", G_CALLBACK (on_value_changed), self);
      gtk_grid_attach (GTK_GRID (grid), label, 2 * (i / 2), i % 2, 1, 1);
      gtk_grid_attach (GTK_GRID (grid), spin, 2 * (i / 2) + 1, i % 2, 1, 1);
      self->shape_spins[i] = spin;
    }
  gtk_popover_set_child (GTK_POPOVER (popover), grid);
  gtk_menu_button_set_popover (GTK_MENU_BUTTON (button), popover);
  self->shape_button = button;
  return button;
}
