/* SPDX-License-Identifier: MIT */
/* Internal to app/: the exports of es-save.h for values still being computed, read as a row gate releases them. */
#pragma once

#include "es-row-gate.h"
#include "es-save.h"

/* The same files as es_save_heatmap_png, es_save_raw16_png and
 * es_save_tiff, byte for byte; each row of values is read only once `gate`
 * has released it (NULL: all are there), and the file is given up, never
 * committed, if the gate fails. */
bool es_save_heatmap_png_gated (const char *path, const EsImage *values, const EsColorScale *scale, bool colorbar,
                                const EsValueInfo *info, EsRowGate *gate, EsError *error);
bool es_save_raw16_png_gated (const char *path, const EsImage *values, double lo, double hi, const EsValueInfo *info,
                              EsRowGate *gate, EsError *error);
bool es_save_tiff_gated (const char *path, const EsImage *values, const EsValueInfo *info, EsRowGate *gate,
                         EsError *error);
