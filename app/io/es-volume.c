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

/* What a page's headers say it decodes to. */
typedef struct {
  int width, height, depth;
  EsFormat format;
  bool floats;
} PageShape;

static bool
read_shape (EsPages *pages, int index, PageShape *shape, EsError *error)
{
  return es_pages_size (pages, index, &shape->width, &shape->height, error)
         && es_pages_format (pages, index, &shape->format, &shape->depth, &shape->floats, error);
}

/* How page `index` (shaped *page) differs from page `first_index`
 * (shaped *first), into why ("page 2 is 20×8, page 1 20×16"): "size" or
 * "format", or NULL where they agree. */
static const char *
page_difference (const PageShape *page, int index, const PageShape *first, int first_index, char *why, size_t size)
{
  if (page->width != first->width || page->height != first->height)
    {
      snprintf (why, size, "page %d is %d×%d, page %d %d×%d", index + 1, page->width, page->height, first_index + 1,
                first->width, first->height);
      return "size";
    }
  if (page->format != first->format || page->depth != first->depth || page->floats != first->floats)
    {
      snprintf (why, size, "page %d holds %s samples, page %d %s", index + 1,
                format_words (page->format, page->depth, page->floats), first_index + 1,
                format_words (first->format, first->depth, first->floats));
      return "format";
    }
  return NULL;
}

/* Page `index` agrees with page `first_index`, whose shape is *first, in
 * size and format: headers only, read while its directory is the one just
 * read. */
static bool
check_page (EsPages *pages, int index, int first_index, const PageShape *first, EsError *error)
{
  PageShape page;
  char why[160];
  const char *what;

  if (!read_shape (pages, index, &page, error))
    return false;
  what = page_difference (&page, index, first, first_index, why, sizeof why);
  return what == NULL || es_error_set (error, ES_ERROR_FORMAT, "%s: the pages of a volume must agree in %s", why, what);
}

bool
es_pages_alike (EsPages *pages, char *why, size_t why_size, EsError *error)
{
  PageShape first, page;

  if (!read_shape (pages, 0, &first, error))
    return false;
  for (int i = 1; i < es_pages_count (pages); i++)
    if (!read_shape (pages, i, &page, error) || page_difference (&page, i, &first, 0, why, why_size) != NULL)
      return false;
  return true;
}

/* The volume of `count` pages like the first fits the pixel budget. */
static bool
check_volume_size (const PageShape *first, int count, EsError *error)
{
  EsError local = { 0 };
  uint64_t voxels = (uint64_t) first->width * (uint64_t) first->height * (uint64_t) count;

  if (es_image_check_volume_size (first->width, first->height, count, first->format, &local))
    return true;
  if (local.code != ES_ERROR_LIMIT || first->width > ES_MAX_SIDE || first->height > ES_MAX_SIDE || count > ES_MAX_SIDE)
    {
      *error = local;
      return false;
    }
  return es_error_set (error, ES_ERROR_LIMIT,
                       "volume %d×%d×%d is %llu voxels, %.1f MiB decoded (and %.1f MiB of float results): "
                       "over the memory limit of %llu pixels (--max-pixels)",
                       first->width, first->height, count, (unsigned long long) voxels,
                       (double) voxels * (double) es_format_size (first->format) / 1048576.0,
                       (double) voxels * 4.0 / 1048576.0, (unsigned long long) es_image_get_max_pixels ());
}

static void
copy_plane (EsImage *volume, int z, const EsImage *page)
{
  size_t row_bytes = (size_t) page->width * es_format_size (page->format);

  for (int y = 0; y < page->height; y++)
    memcpy (es_image_voxel_row (volume, z, y), es_image_row (page, y), row_bytes);
}

/* Integer page chosen[z] into plane z of the volume. */
static bool
load_plane (EsPages *pages, const int *chosen, int z, EsImage *volume, EsError *error)
{
  EsImage page = { 0 };
  bool ok = es_pages_load (pages, chosen[z], &page, error);

  /* The header said what the decoder gives; a damaged page may yet decode
   * otherwise. */
  if (ok
      && (page.width != volume->width || page.height != volume->height || page.format != volume->format
          || page.depth != volume->depth))
    ok = es_error_set (error, ES_ERROR_FORMAT,
                       "page %d decodes to a %s %d×%d image, not the %s %d×%d of the "
                       "volume's first page",
                       chosen[z] + 1, format_words (page.format, page.depth, false), page.width, page.height,
                       format_words (volume->format, volume->depth, false), volume->width, volume->height);
  if (ok)
    {
      copy_plane (volume, z, &page);
      /* The first page's samples and pixel size stand for the volume's. */
      if (z == 0)
        {
          volume->maxval = page.maxval;
          volume->meta = page.meta;
        }
    }
  es_image_clear (&page);
  return ok;
}

/* Float page chosen[z] into plane z: with `range` NULL its samples widen
 * *seen (the first pass), else they are mapped by it (the second). */
static bool
load_float_plane (EsPages *pages, const int *chosen, int z, EsImage *volume, const EsFloatRange *range,
                  EsFloatRange *seen, EsError *error)
{
  EsImage page = { 0 };

  if (!es_pages_load_floats (pages, chosen[z], &page, error))
    return false;
  /* The first page's pixel size; the value map comes with the range. */
  if (z == 0)
    volume->meta = page.meta;
#ifdef ES_HAVE_TIFF
  /* Float pages come only from TIFF, whose reader has the mapping. */
  if (range != NULL)
    {
      EsImage plane = es_image_plane (volume, z);

      es_float_range_plane_samples (range, &page, &plane);
    }
  else
    es_float_range_add_plane (seen, &page);
#else
  (void) range, (void) seen;
#endif
  es_image_clear (&page);
  return true;
}

/* Each page is checked against the first, then decoded into its plane,
 * while libtiff holds its directory: one read of each directory (a volume
 * of 65535 one-pixel pages is mostly that). Float pages take a second pass,
 * which maps them by the range of all. Nothing is written before every
 * page has been read. */
bool
es_pages_load_volume (EsPages *pages, const EsVolumeChoice *choice, EsImage *volume, char *notice, size_t notice_size,
                      EsError *error)
{
  int count = 0;
  PageShape first;
  EsFloatRange seen = ES_FLOAT_RANGE_EMPTY;
  bool ok = true;
  int *chosen = choose_pages (pages, choice, &count, error);

  notice[0] = '\0';
  if (chosen == NULL)
    return false;
  if (!read_shape (pages, chosen[0], &first, error) || !check_volume_size (&first, count, error)
      || !es_image_alloc_volume (volume, first.width, first.height, count, first.format, first.depth, error))
    {
      free (chosen);
      return false;
    }
  for (int z = 0; ok && z < count; z++)
    {
      ok = z == 0 || check_page (pages, chosen[z], chosen[0], &first, error);
      if (ok)
        ok = first.floats ? load_float_plane (pages, chosen, z, volume, NULL, &seen, error)
                          : load_plane (pages, chosen, z, volume, error);
    }
  for (int z = 0; ok && first.floats && z < count; z++)
    ok = load_float_plane (pages, chosen, z, volume, &seen, NULL, error);
#ifdef ES_HAVE_TIFF
  if (ok && first.floats)
    {
      es_float_range_map (&seen, &volume->meta);
      es_float_notice (&volume->meta, 0, notice, notice_size);
    }
#endif
  free (chosen);
  if (!ok)
    {
      es_image_clear (volume);
      return false;
    }
  return true;
}
