/* SPDX-License-Identifier: MIT */
/* What GTK 4.8 does not tell assistive technologies on its own, for widgets built in C. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* A drop-down as a screen reader should read it. GTK 4.8 gives the focus
 * to a toggle button inside the drop-down that has no name of its own
 * (Orca reads "GtkToggleButton"), and does not follow a label's relation
 * to the drop-down any further: the drop-down and that button are both
 * named name (the text of the label beside it, if any), and the button is
 * described by the item shown, kept up to date. */
void es_accessible_name_drop_down (GtkDropDown *drop_down, const char *name);

G_END_DECLS
