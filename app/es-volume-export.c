/* SPDX-License-Identifier: MIT */
/* A volume's result as a multi-page float TIFF or a PNG per plane: the one writer of the CLI, the window and Python. */
#include "es-volume-export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-tiff.h"

bool
es_volume_export_tiff (const char *path, const EsResult *result, EsError *error)
{
  int planes = es_image_planes (&result->values);
  EsImage first = es_image_plane (&result->values, 0);
  EsTiffWriter *writer;

  if (strcmp (path, "-") == 0)
    path = "/dev/stdout";
  writer = es_tiff_writer_open (path, planes, es_tiff_page_bytes (&first) * (uint64_t) planes, error);
  if (writer == NULL)
    return false;
  if (!es_tiff_writer_add_planes (writer, &result->values, &result->info, error))
    {
      es_tiff_writer_abort (writer);
      return false;
    }
  return es_tiff_writer_commit (writer, error);
}

char *
es_volume_plane_path (const char *output, int z)
{
  size_t n = strlen (output);
  char *path = NULL;

  if (n >= 4 && strcmp (output + n - 4, ".png") == 0)
    n -= 4;
  if (asprintf (&path, "%.*s-z%04d.png", (int) n, output, z) < 0)
    return NULL;
  return path;
}

bool
es_volume_export_planes (const char *output, EsExportFormat format, const EsResult *result, bool colorbar, char **first,
                         char **last, EsError *error)
{
  int planes = es_image_planes (&result->values);
  char *first_path = NULL, *last_path = NULL;
  bool ok = true;

  for (int z = 0; z < planes && ok; z++)
    {
      EsResult plane = *result;
      char *path = es_volume_plane_path (output, z);

      if (path == NULL)
        {
          ok = es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
          break;
        }
      /* Each plane is written whole: a gate follows the rows of one image. */
      plane.values = es_image_plane (&result->values, z);
      plane.gate = NULL;
      ok = es_pipeline_export (path, format, &plane, colorbar, error);
      if (z == 0)
        first_path = path;
      else
        {
          free (last_path);
          last_path = path;
        }
    }
  if (ok && first != NULL)
    *first = first_path;
  else
    free (first_path);
  if (ok && last != NULL)
    *last = last_path;
  else
    free (last_path);
  return ok;
}
