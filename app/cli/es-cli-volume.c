/* SPDX-License-Identifier: MIT */
/* entroscope-cli's volumes out: a multi-page float TIFF, or a PNG heatmap per plane. */
#include "es-cli-volume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-volume-export.h"

bool
es_cli_volume_check_output (EsExportFormat format, bool to_stdout, int planes, EsError *error)
{
  if (planes <= 1)
    return true;
  if (format == ES_EXPORT_TEXT)
    return es_error_set (error, ES_ERROR_INVALID,
                         _ ("a volume of %d planes is not written as a text matrix: write a multi-page TIFF "
                            "(-o NAME.tif) or a PNG heatmap per plane (-o DIR/)"),
                         planes);
  if (to_stdout && format != ES_EXPORT_TIFF)
    return es_error_set (error, ES_ERROR_INVALID,
                         _ ("a volume of %d planes is written as one PNG per plane, into files, not to stdout "
                            "(--format tif writes one multi-page TIFF there)"),
                         planes);
  return true;
}

static bool
write_planes (const char *output, EsExportFormat format, const EsResult *result, bool colorbar,
              const EsCliReadFiles *reads, char *wrote, size_t wrote_size, EsError *error)
{
  int planes = es_image_planes (&result->values);
  char *first = NULL, *last = NULL;

  /* Every plane's file is checked before the first is written. */
  for (int z = 0; z < planes; z++)
    {
      char *path = es_volume_plane_path (output, z);
      const EsCliReadFile *read = NULL;
      EsCliFileKey key;
      bool ok;

      if (path != NULL)
        {
          es_cli_file_key (path, &key);
          read = es_cli_read_files_find (reads, &key);
          es_cli_file_key_clear (&key);
        }
      ok = path != NULL && read == NULL;
      if (path == NULL)
        es_error_set (error, ES_ERROR_NO_MEMORY, _ ("out of memory"));
      else if (read != NULL)
        es_error_set (error, ES_ERROR_IO, _ ("%s (plane %d) is the %s %s; nothing was written"), path, z,
                      read->role != NULL ? read->role : "input", read->path);
      free (path);
      if (!ok)
        return false;
    }
  if (!es_volume_export_planes (output, format, result, colorbar, &first, &last, error))
    return false;
  snprintf (wrote, wrote_size, "%s … %s (%d planes)", first, last != NULL ? last : first, planes);
  free (first);
  free (last);
  return true;
}

bool
es_cli_volume_export (const char *output, EsExportFormat format, const EsResult *result, bool colorbar,
                      const EsCliReadFiles *reads, char *wrote, size_t wrote_size, EsError *error)
{
  int planes = es_image_planes (&result->values);

  if (format == ES_EXPORT_TIFF)
    {
      if (!es_volume_export_tiff (output, result, error))
        return false;
      snprintf (wrote, wrote_size, "%s (%d planes)", output, planes);
      return true;
    }
  return write_planes (output, format, result, colorbar, reads, wrote, wrote_size, error);
}
