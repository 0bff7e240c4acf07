/* SPDX-License-Identifier: MIT */
/* EsSidebarDefinition: the side panel's Definition group: the preset menu of the operation on screen, and the
 * entropy definition (shape, border, binning, mask). */
#pragma once

#include <adwaita.h>

#include "es-ops.h"

G_BEGIN_DECLS

#define ES_TYPE_SIDEBAR_DEFINITION (es_sidebar_definition_get_type ())
G_DECLARE_FINAL_TYPE (EsSidebarDefinition, es_sidebar_definition, ES, SIDEBAR_DEFINITION, AdwPreferencesGroup)

/* Signals: "changed" (const char *what): the definition that jobs carry
 * changed (a key, the mask, the footprint, or units to or from normalized:
 * nats ↔ bits is display only and emits nothing); "message" (const char
 * *text): something the user must read (a mask of the wrong size);
 * "rows-changed": a volume was opened after a 2-D image or the other way
 * round, which changes the rows a job reads (a 3-D window has no side). */

/* Binds the rows to their keys. */
void es_sidebar_definition_bind (EsSidebarDefinition *self, GSettings *settings);
/* Whether a settings key is one of the definition's (beyond window, levels and units). */
gboolean es_sidebar_definition_has_key (const char *key);
/* The size of the image on screen: a mask must have it; a volume (planes >
 * 1) shows the choice of a 3-D or a per-plane window. */
void es_sidebar_definition_set_image_size (EsSidebarDefinition *self, int width, int height, int planes);
/* Its planes (1 before any image). */
int es_sidebar_definition_get_image_planes (EsSidebarDefinition *self);
/* The definition in force for a job on a width×height×planes image, its
 * parameters already set. Entropy's (job->window and job->levels come from
 * the parameters): on a volume with "volume-window" 3-D, the box or ball of
 * the 3-D keys, else the 2-D shape; the mask and the footprint it points at
 * live as long as this widget. Another operation's: its preset's (CLAHE's
 * kind), the parameters kept. */
void es_sidebar_definition_get (EsSidebarDefinition *self, int width, int height, int planes, EsJob *job);

/* What the mask chooser does: reads the file on a worker thread, then uses
 * it ("changed") or, when it cannot be read or has another size than the
 * image, says so ("message") and keeps the previous mask. A later call
 * supersedes a read in flight; NULL clears the mask. */
void es_sidebar_definition_load_mask (EsSidebarDefinition *self, GFile *file);
/* A mask is being read. */
gboolean es_sidebar_definition_is_reading_mask (EsSidebarDefinition *self);
/* Sets "footprint-file" and the shape; the file is read when the key changes. */
void es_sidebar_definition_choose_footprint (EsSidebarDefinition *self, GFile *file);
/* The operation on screen (the active view's, or one on screen with
 * presets): its preset menu shows, and the entropy definition's rows only
 * for entropy; without presets the group hides. */
void es_sidebar_definition_set_op (EsSidebarDefinition *self, gboolean has_op, EsOp op);
/* Applies a preset of op by name ("matlab", or its own definition's,
 * "entroscope"): sets its key, and for entropy every definition key. */
void es_sidebar_definition_apply_preset (EsSidebarDefinition *self, EsOp op, const char *name);

G_END_DECLS
