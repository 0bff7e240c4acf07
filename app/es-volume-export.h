/* SPDX-License-Identifier: MIT */
/* A volume's result to files: one multi-page float TIFF, or one PNG per plane (the CLI, the window, Python). */
#pragma once

#include "es-pipeline.h"

/* Writes every plane of result->values as one page of a TIFF at path, in
 * order (the values as they are, BigTIFF past 4 GiB, result->info in each
 * page's ImageDescription, PageNumber z of planes), atomically; "-" is
 * stdout. The compression is es_save's setting. */
bool es_volume_export_tiff (const char *path, const EsResult *result, EsError *error);

/* The file of plane z when a volume goes to PNGs: output without ".png",
 * then "-z0000.png" (malloc'd; NULL when out of memory). */
char *es_volume_plane_path (const char *output, int z);

/* Writes each plane of result->values through es_pipeline_export in the
 * PNG format given, to es_volume_plane_path (output, z), every plane on
 * result's colour scale (the volume's). On success *first and *last (when
 * not NULL) receive the first and the last path written (malloc'd; *last
 * is NULL for a volume of one plane). */
bool es_volume_export_planes (const char *output, EsExportFormat format, const EsResult *result, bool colorbar,
                              char **first, char **last, EsError *error);
