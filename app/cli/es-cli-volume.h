/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: a volume's result written as a multi-page TIFF or as one PNG per plane. */
#pragma once

#include "es-cli-files.h"
#include "es-cli.h"

/* Whether a result of `planes` planes can go where the command sends it:
 * never as a text matrix, and as PNG files only into files (not stdout).
 * Checked once the input is decoded, before anything is computed. */
bool es_cli_volume_check_output (EsExportFormat format, bool to_stdout, int planes, EsError *error);

/* Writes a volume's result (es-volume-export.h): a multi-page TIFF at output (a float page a
 * plane; BigTIFF past 4 GiB), or, for PNG formats, output's name without
 * ".png" followed by "-z0000.png", "-z0001.png"... one heatmap per plane,
 * each written atomically, all on the volume's colour scale. A plane file
 * that is a file the command reads (an input, a mask, a footprint) is
 * refused before anything is written. `wrote`
 * receives what the "wrote" line says of it. */
bool es_cli_volume_export (const char *output, EsExportFormat format, const EsResult *result, bool colorbar,
                           const EsCliReadFiles *reads, char *wrote, size_t wrote_size, EsError *error);
