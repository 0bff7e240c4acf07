/* SPDX-License-Identifier: MIT */
/* Internal to app/: the OME-XML of an OME-TIFF, as far as reading one image's planes needs it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "es-error.h"
#include "es-image.h"

/* The first image's Pixels element of an OME-XML document: its sizes, the
 * order of its planes, and where its TiffData elements lie (in the text
 * given to es_ome_read, which must outlive this). */
typedef struct {
  int size_x, size_y, size_z, size_c, size_t;
  char order[6];    /* DimensionOrder: "XYZCT", "XYCZT", ... */
  const char *body; /* the Pixels element's content, TiffData among it */
  size_t body_length;
  /* PhysicalSizeX, Y and Z in metres (their units read: µm by default);
   * 0 where absent, malformed or in a unit that is no length we know. */
  double physical_x, physical_y, physical_z;
  EsLengthUnit physical_unit; /* PhysicalSizeXUnit's, to show lengths in */
} EsOmePixels;

/* Whether `text` (a first page's ImageDescription) is OME-XML; when it is,
 * fills pixels, or returns false with error set when its Pixels element
 * cannot be read. `*is_ome` false: not OME-XML, nothing set. */
bool es_ome_read (const char *text, EsOmePixels *pixels, bool *is_ome, EsError *error);

/* The pixel size of the image (PhysicalSizeX/Y/Z), into meta; meta stays
 * uncalibrated when X or Y is unknown. */
void es_ome_pixel_size (const EsOmePixels *pixels, EsImageMeta *meta);

/* The page (TIFF IFD, from 0) of each plane z of channel c at time t, into
 * pages[0 .. size_z - 1]: the TiffData elements' IFD, FirstZ/C/T and
 * PlaneCount as the OME data model defines them, or, without TiffData, the
 * planes one per page in DimensionOrder. Errors name the channel or time out
 * of range, or the plane that no page of this file holds. */
bool es_ome_z_pages (const EsOmePixels *pixels, int channel, int time, int page_count, int *pages, EsError *error);
