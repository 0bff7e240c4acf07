/* SPDX-License-Identifier: MIT */
/* A stack read as a volume: its pages checked against each other and the pixel budget before anything is
 * allocated, then decoded a plane at a time into one EsImage of planes. */
#include "es-volume.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-ome.h"
#include "es-tiff.h"

static const char *
format_words (EsFormat format, int depth, bool floats)
{
  static const char *bits[17] = { "",      "1-bit",  "2-bit",  "3-bit",  "4-bit",  "5-bit",  "6-bit",  "7-bit", "8-bit",
                                  "9-bit", "10-bit", "11-bit", "12-bit", "13-bit", "14-bit", "15-bit", "16-bit" };

  if (floats)
    return "float";
  (void) format;
  return depth >= 1 && depth <= 16 ? bits[depth] : "integer";
}

/* The pages of the volume: those of the chosen channel and time of an
 * OME-TIFF, else every page. */
static int *
choose_pages (EsPages *pages, const EsVolumeChoice *choice, int *count, EsError *error)
{
  char *xml = es_pages_description (pages, 0);
  EsOmePixels ome;
  bool is_ome = false;
  int *chosen = NULL;

  if (xml != NULL && !es_ome_read (xml, &ome, &is_ome, error) && is_ome)
    {
      free (xml);
      return NULL;
    }
  if (is_ome)
    {
      chosen = malloc ((size_t) ome.size_z * sizeof *chosen);
      if (chosen == NULL)
        es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
      else if (!es_ome_z_pages (&ome, choice->channel, choice->time, es_pages_count (pages), chosen, error))
        {
          free (chosen);
          chosen = NULL;
        }
      *count = ome.size_z;
      free (xml);
      return chosen;
    }
  free (xml);
  if ((choice->channel_given && choice->channel != 0) || (choice->time_given && choice->time != 0))
    {
      es_error_set (error, ES_ERROR_INVALID,
                    "not an OME-TIFF: it has no %s %d to choose (its pages are the "
                    "planes of one volume)",
                    choice->channel_given && choice->channel != 0 ? "channel" : "time point",
                    choice->channel_given && choice->channel != 0 ? choice->channel : choice->time);
      return NULL;
    }
  *count = es_pages_count (pages);
  chosen = malloc ((size_t) *count * sizeof *chosen);
  if (chosen == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
      return NULL;
    }
  for (int i = 0; i < *count; i++)
    chosen[i] = i;
  return chosen;
}

/* Every chosen page agrees with the first in size and format; the volume
 * fits the pixel budget. Headers only: nothing is decoded. */
static bool
check_pages (EsPages *pages, const int *chosen, int count, int *width, int *height, EsFormat *format, int *depth,
             bool *floats, EsError *error)
{
  EsError local = { 0 };

  for (int i = 0; i < count; i++)
    {
      int w, h, d;
      EsFormat f;
      bool fl;

      if (!es_pages_size (pages, chosen[i], &w, &h, error) || !es_pages_format (pages, chosen[i], &f, &d, &fl, error))
        return false;
      if (i == 0)
        {
          *width = w, *height = h, *format = f, *depth = d, *floats = fl;
          continue;
        }
      if (w != *width || h != *height)
        return es_error_set (error, ES_ERROR_FORMAT,
                             "page %d is %d×%d, page %d %d×%d: the pages of a volume must agree in size", chosen[i] + 1,
                             w, h, chosen[0] + 1, *width, *height);
      if (f != *format || d != *depth || fl != *floats)
        return es_error_set (
          error, ES_ERROR_FORMAT, "page %d holds %s samples, page %d %s: the pages of a volume must agree in format",
          chosen[i] + 1, format_words (f, d, fl), chosen[0] + 1, format_words (*format, *depth, *floats));
    }
  if (!es_image_check_volume_size (*width, *height, count, *format, &local))
    {
      uint64_t voxels = (uint64_t) *width * (uint64_t) *height * (uint64_t) count;

      if (local.code != ES_ERROR_LIMIT || *width > ES_MAX_SIDE || *height > ES_MAX_SIDE || count > ES_MAX_SIDE)
        {
          *error = local;
          return false;
        }
      return es_error_set (error, ES_ERROR_LIMIT,
                           "volume %d×%d×%d is %llu voxels, %.1f MiB decoded (and %.1f MiB of float results): "
                           "over the memory limit of %llu pixels (--max-pixels)",
                           *width, *height, count, (unsigned long long) voxels,
                           (double) voxels * (double) es_format_size (*format) / 1048576.0,
                           (double) voxels * 4.0 / 1048576.0, (unsigned long long) es_image_get_max_pixels ());
    }
  return true;
}

/* Float pages come only from TIFF, whose reader has the mapping. */
static uint16_t
es_volume_float_to_u16 (double v, double lo, double hi)
{
#ifdef ES_HAVE_TIFF
  return es_tiff_float_to_u16 (v, lo, hi);
#else
  (void) v, (void) lo, (void) hi;
  return 0;
#endif
}

static void
copy_plane (EsImage *volume, int z, const EsImage *page)
{
  size_t row_bytes = (size_t) page->width * es_format_size (page->format);

  for (int y = 0; y < page->height; y++)
    memcpy (es_image_voxel_row (volume, z, y), es_image_row (page, y), row_bytes);
}

/* Float pages: a first pass for the volume's finite range, a second that
 * maps each page with it, holding one float page at a time. */
static bool
load_float_planes (EsPages *pages, const int *chosen, EsImage *volume, uint64_t *non_finite, EsError *error)
{
  double lo = INFINITY, hi = -INFINITY;
  int planes = es_image_planes (volume);

  *non_finite = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int z = 0; z < planes; z++)
      {
        EsImage page = { 0 };

        if (!es_pages_load_floats (pages, chosen[z], &page, error))
          return false;
        for (int y = 0; y < page.height; y++)
          {
            const float *row = es_image_row (&page, y);
            uint16_t *out = es_image_voxel_row (volume, z, y);

            for (int x = 0; x < page.width; x++)
              if (pass == 1)
                out[x] = es_volume_float_to_u16 (row[x], lo, hi);
              else if (isfinite (row[x]))
                {
                  lo = row[x] < lo ? row[x] : lo;
                  hi = row[x] > hi ? row[x] : hi;
                }
              else
                ++*non_finite;
          }
        es_image_clear (&page);
      }
  return true;
}

bool
es_pages_load_volume (EsPages *pages, const EsVolumeChoice *choice, EsImage *volume, char *notice, size_t notice_size,
                      EsError *error)
{
  int count = 0, width = 0, height = 0, depth = 0;
  EsFormat format = ES_FORMAT_U8;
  bool floats = false, ok = true;
  uint64_t non_finite = 0;
  int *chosen = choose_pages (pages, choice, &count, error);

  notice[0] = '\0';
  if (chosen == NULL)
    return false;
  if (!check_pages (pages, chosen, count, &width, &height, &format, &depth, &floats, error)
      || !es_image_alloc_volume (volume, width, height, count, format, depth, error))
    {
      free (chosen);
      return false;
    }
  if (floats)
    ok = load_float_planes (pages, chosen, volume, &non_finite, error);
  for (int z = 0; ok && !floats && z < count; z++)
    {
      EsImage page = { 0 };

      ok = es_pages_load (pages, chosen[z], &page, error);
      /* The header said what the decoder gives; a damaged page may yet
       * decode otherwise. */
      if (ok && (page.width != width || page.height != height || page.format != format || page.depth != depth))
        ok = es_error_set (error, ES_ERROR_FORMAT,
                           "page %d decodes to a %s %d×%d image, not the %s %d×%d of the "
                           "volume's first page",
                           chosen[z] + 1, format_words (page.format, page.depth, false), page.width, page.height,
                           format_words (format, depth, false), width, height);
      if (ok)
        {
          copy_plane (volume, z, &page);
          if (z == 0)
            volume->maxval = page.maxval;
        }
      es_image_clear (&page);
    }
  free (chosen);
  if (!ok)
    {
      es_image_clear (volume);
      return false;
    }
  if (non_finite > 0)
    snprintf (notice, notice_size,
              "%llu NaN or infinite sample%s left out of the volume's float range (NaN and "
              "-inf read as 0, +inf as 65535)",
              (unsigned long long) non_finite, non_finite == 1 ? "" : "s");
  return true;
}
