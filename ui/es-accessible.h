/* SPDX-License-Identifier: MIT */
/* What GTK 4.8 does not tell assistive technologies on its own, or tells twice. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* A drop-down as a screen reader should read it. GTK 4.8 gives the focus
 * to a toggle button inside the drop-down that has no name of its own
 * (Orca reads "GtkToggleButton"): that button is named too, and described
 * by the item shown, kept up to date. es_accessible_name_drop_down names
 * a drop-down that has no label beside it; es_accessible_label_drop_down
 * one that has (its mnemonic label already names the drop-down itself). */
void es_accessible_name_drop_down (GtkDropDown *drop_down, const char *name);
void es_accessible_label_drop_down (GtkDropDown *drop_down, GtkLabel *label);

/* GTK 4.8 names a button with a mnemonic twice over, from its label
 * property ("_Open…", underscore and all) and from its label widget:
 * "_Open… Open…". This drops the first for every such button in the tree
 * under root, built from a template, so that it reads "Open…". */
void es_accessible_fix_mnemonic_buttons (GtkWidget *root);

G_END_DECLS
