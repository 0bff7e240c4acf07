/* SPDX-License-Identifier: MIT */
/* Image comparisons shared by the plain-C tests. */
#pragma once

#include <stdbool.h>
#include <string.h>

#include "es-image.h"

/* Same size, format and planes, and equal sample bytes in every row of every plane (strides may differ). */
static inline bool
images_equal (const EsImage *a, const EsImage *b)
{
  if (a->width != b->width || a->height != b->height || a->format != b->format
      || es_image_planes (a) != es_image_planes (b))
    return false;
  const size_t row = (size_t) a->width * es_format_size (a->format);
  for (int z = 0; z < es_image_planes (a); z++)
    for (int y = 0; y < a->height; y++)
      if (memcmp (es_image_voxel_row (a, z, y), es_image_voxel_row (b, z, y), row) != 0)
        return false;
  return true;
}
