/* SPDX-License-Identifier: MIT */
/* EsBar: one horizontal bar of the Compare Variants chart, with the copy floor marked. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ES_TYPE_BAR (es_bar_get_type ())
G_DECLARE_FINAL_TYPE (EsBar, es_bar, ES, BAR, GtkWidget)

/* What a bar stands for; it picks the fill. */
typedef enum {
  ES_BAR_VARIANT, /* a kernel variant */
  ES_BAR_DEFAULT, /* the default (fastest known) variant */
  ES_BAR_FLOOR,   /* the copy floor itself */
  ES_BAR_CPU,     /* the CPU's single implementation */
} EsBarKind;

GtkWidget *es_bar_new (EsBarKind kind);
/* The bar spans value / max of the width; a dashed line marks floor / max
 * (floor NAN or <= 0: no line). */
void es_bar_set (EsBar *self, double value, double max, double floor);

G_END_DECLS
