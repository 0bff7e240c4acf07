/* SPDX-License-Identifier: MIT */
/* The OME-XML of an OME-TIFF: the first image's sizes, plane order and TiffData, read without an XML library
 * (the few elements and attributes needed have a fixed form in the schema). */
#include "es-ome.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-calibration.h"

/* Whether the tag name at q (after "<" or "</") is `name`, with or without
 * a namespace prefix ("Pixels" or "ome:Pixels"). */
static bool
name_at (const char *q, const char *end, const char *name)
{
  size_t n = strlen (name);

  for (const char *r = q; r < end && r - q < 32 && *r != ' ' && *r != '>' && *r != '/'; r++)
    if (*r == ':')
      {
        q = r + 1;
        break;
      }
  return (size_t) (end - q) > n && strncmp (q, name, n) == 0
         && (q[n] == ' ' || q[n] == '\t' || q[n] == '\n' || q[n] == '\r' || q[n] == '>' || q[n] == '/');
}

/* The next element named `name` at or after `from`, before `end`; returns
 * its '<' or NULL. */
static const char *
find_element (const char *from, const char *end, const char *name)
{
  for (const char *p = from; p < end; p++)
    {
      p = memchr (p, '<', (size_t) (end - p));
      if (p == NULL)
        return NULL;
      if (name_at (p + 1, end, name))
        return p;
    }
  return NULL;
}

/* The end of the tag that starts at `tag` ('>'), or NULL. */
static const char *
tag_end (const char *tag, const char *end)
{
  return memchr (tag, '>', (size_t) (end - tag));
}

/* Attribute `name` of the tag tag..close: its value copied into value
 * (at most size - 1 bytes). False when the tag has no such attribute. */
static bool
attribute (const char *tag, const char *close, const char *name, char *value, size_t size)
{
  size_t n = strlen (name);

  for (const char *p = tag + 1; p + n + 2 < close; p++)
    {
      const char *v, *stop;

      if ((p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n' && p[-1] != '\r') || strncmp (p, name, n) != 0)
        continue;
      v = p + n;
      while (v < close && (*v == ' ' || *v == '\t'))
        v++;
      if (v >= close || *v != '=')
        continue;
      v++;
      while (v < close && (*v == ' ' || *v == '\t'))
        v++;
      if (v >= close || (*v != '"' && *v != '\''))
        continue;
      stop = memchr (v + 1, *v, (size_t) (close - v - 1));
      if (stop == NULL)
        return false;
      v++;
      n = (size_t) (stop - v) < size - 1 ? (size_t) (stop - v) : size - 1;
      memcpy (value, v, n);
      value[n] = '\0';
      return true;
    }
  return false;
}

/* A non-negative integer attribute; `fallback` when absent; -1 when malformed. */
static long
int_attribute (const char *tag, const char *close, const char *name, long fallback)
{
  char text[32], *stop;
  long value;

  if (!attribute (tag, close, name, text, sizeof text))
    return fallback;
  value = strtol (text, &stop, 10);
  return stop == text || *stop != '\0' || value < 0 || value > 1000000 ? -1 : value;
}

/* The physical size attribute `name` (PhysicalSizeX…) in metres, its unit
 * from `name`Unit (OME's default, µm, when absent) into *unit; 0 when
 * absent, not a positive number or in a unit that is no known length. */
static double
physical_size (const char *tag, const char *close, const char *name, EsLengthUnit *unit)
{
  char text[64], unit_attribute[32], unit_name[32] = "µm";
  double value;

  if (!attribute (tag, close, name, text, sizeof text))
    return 0;
  if (!es_parse_decimal (text, &value))
    return 0;
  snprintf (unit_attribute, sizeof unit_attribute, "%sUnit", name);
  attribute (tag, close, unit_attribute, unit_name, sizeof unit_name);
  if (!isfinite (value) || value <= 0 || !es_length_unit_from_name (unit_name, unit))
    return 0;
  return value * es_length_unit_metres (*unit);
}

void
es_ome_pixel_size (const EsOmePixels *pixels, EsImageMeta *meta)
{
  double metres = es_length_unit_metres (pixels->physical_unit);

  if (pixels->physical_x > 0 && pixels->physical_y > 0)
    es_image_meta_set_pixel_size (meta, pixels->physical_x / metres, pixels->physical_y / metres,
                                  pixels->physical_z / metres, pixels->physical_unit);
}

bool
es_ome_read (const char *text, EsOmePixels *pixels, bool *is_ome, EsError *error)
{
  const char *end = text + strlen (text);
  const char *root = find_element (text, end, "OME");
  const char *tag, *close, *content_end;
  const char *names[] = { "SizeX", "SizeY", "SizeZ", "SizeC", "SizeT" };
  int *sizes[] = { &pixels->size_x, &pixels->size_y, &pixels->size_z, &pixels->size_c, &pixels->size_t };

  *is_ome = root != NULL;
  if (root == NULL)
    return false;
  tag = find_element (root, end, "Pixels");
  close = tag != NULL ? tag_end (tag, end) : NULL;
  if (close == NULL)
    return es_error_set (error, ES_ERROR_FORMAT, "OME-XML: no Pixels element");
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      long v = int_attribute (tag, close, names[i], -1);
      if (v < 1)
        return es_error_set (error, ES_ERROR_FORMAT, "OME-XML: Pixels has no valid %s", names[i]);
      *sizes[i] = (int) v;
    }
  if (!attribute (tag, close, "DimensionOrder", pixels->order, sizeof pixels->order) || strlen (pixels->order) != 5
      || strncmp (pixels->order, "XY", 2) != 0 || strchr (pixels->order + 2, 'Z') == NULL
      || strchr (pixels->order + 2, 'C') == NULL || strchr (pixels->order + 2, 'T') == NULL)
    return es_error_set (error, ES_ERROR_FORMAT, "OME-XML: Pixels has no valid DimensionOrder (XYZCT, ...)");
  {
    EsLengthUnit unit_y, unit_z;

    pixels->physical_x = physical_size (tag, close, "PhysicalSizeX", &pixels->physical_unit);
    pixels->physical_y = physical_size (tag, close, "PhysicalSizeY", &unit_y);
    pixels->physical_z = physical_size (tag, close, "PhysicalSizeZ", &unit_z);
    if (pixels->physical_x == 0)
      pixels->physical_unit = ES_LENGTH_NONE;
  }
  /* The content runs to the closing tag (none when the element is empty). */
  pixels->body = close + 1;
  content_end = close[-1] == '/' ? close + 1 : NULL;
  for (const char *p = pixels->body; content_end == NULL && p < end; p++)
    {
      p = memchr (p, '<', (size_t) (end - p));
      if (p == NULL)
        break;
      if (p[1] == '/' && name_at (p + 2, end, "Pixels"))
        content_end = p;
    }
  pixels->body_length = content_end != NULL && content_end > pixels->body ? (size_t) (content_end - pixels->body) : 0;
  return true;
}

/* The index of plane (z, c, t) in DimensionOrder: the third letter varies
 * fastest. */
static long
plane_index (const EsOmePixels *pixels, int z, int c, int t)
{
  long index = 0;

  for (int i = 4; i >= 2; i--)
    {
      char axis = pixels->order[i];
      int size = axis == 'Z' ? pixels->size_z : axis == 'C' ? pixels->size_c : pixels->size_t;
      int at = axis == 'Z' ? z : axis == 'C' ? c : t;
      index = index * size + at;
    }
  return index;
}

bool
es_ome_z_pages (const EsOmePixels *pixels, int channel, int time, int page_count, int *pages, EsError *error)
{
  long planes = (long) pixels->size_z * pixels->size_c * pixels->size_t;
  const char *end = pixels->body + pixels->body_length;
  const char *tag = find_element (pixels->body, end, "TiffData");
  long *ifd_of;

  if (channel >= pixels->size_c)
    return es_error_set (error, ES_ERROR_INVALID, "OME-TIFF: no channel %d (it has %d: 0..%d)", channel, pixels->size_c,
                         pixels->size_c - 1);
  if (time >= pixels->size_t)
    return es_error_set (error, ES_ERROR_INVALID, "OME-TIFF: no time point %d (it has %d: 0..%d)", time, pixels->size_t,
                         pixels->size_t - 1);
  if (planes > 4L * 65536)
    return es_error_set (error, ES_ERROR_LIMIT, "OME-TIFF: %ld planes are over the limit", planes);
  ifd_of = malloc ((size_t) planes * sizeof *ifd_of);
  if (ifd_of == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
  for (long i = 0; i < planes; i++)
    ifd_of[i] = tag == NULL ? i : -1;
  /* Each TiffData maps PlaneCount planes, from (FirstZ, FirstC, FirstT) on
   * in DimensionOrder, to the pages from IFD on. Without IFD it maps every
   * page; with IFD and without PlaneCount, one. */
  for (; tag != NULL; tag = find_element (tag + 1, end, "TiffData"))
    {
      const char *close = tag_end (tag, end);
      long ifd, count, z, c, t, first;

      if (close == NULL)
        break;
      ifd = int_attribute (tag, close, "IFD", -2);
      count = int_attribute (tag, close, "PlaneCount", ifd == -2 ? planes : 1);
      z = int_attribute (tag, close, "FirstZ", 0);
      c = int_attribute (tag, close, "FirstC", 0);
      t = int_attribute (tag, close, "FirstT", 0);
      if (ifd == -2)
        ifd = 0;
      if (ifd < 0 || count < 0 || z < 0 || c < 0 || t < 0 || z >= pixels->size_z || c >= pixels->size_c
          || t >= pixels->size_t)
        {
          free (ifd_of);
          return es_error_set (error, ES_ERROR_FORMAT, "OME-XML: a TiffData element has invalid attributes");
        }
      first = plane_index (pixels, (int) z, (int) c, (int) t);
      for (long k = 0; k < count && first + k < planes; k++)
        ifd_of[first + k] = ifd + k;
    }
  for (int z = 0; z < pixels->size_z; z++)
    {
      long ifd = ifd_of[plane_index (pixels, z, channel, time)];

      if (ifd < 0 || ifd >= page_count)
        {
          free (ifd_of);
          if (ifd < 0)
            return es_error_set (error, ES_ERROR_FORMAT, "OME-TIFF: no page holds plane z=%d c=%d t=%d", z, channel,
                                 time);
          return es_error_set (error, ES_ERROR_FORMAT,
                               "OME-TIFF: plane z=%d c=%d t=%d is page %ld, but the file has %d (a multi-file "
                               "OME-TIFF is not read)",
                               z, channel, time, ifd + 1, page_count);
        }
      pages[z] = (int) ifd;
    }
  free (ifd_of);
  return true;
}
