/* SPDX-License-Identifier: MIT */
/* For app/ and the window: a multi-page TIFF (or one image of an OME-TIFF) read whole as a volume. */
#pragma once

#include "es-load.h"

/* Which planes of an OME-TIFF make the volume: channel c at time t (both 0
 * by default). A plain multi-page TIFF has neither, and refuses any but 0. */
typedef struct {
  int channel, time;
  bool channel_given, time_given;
} EsVolumeChoice;

/* Decodes the pages of a stack into one volume, a page a plane. The pages
 * must agree in size and in sample format ("page 3 is 64×48, page 1
 * 64×64"), which is checked from their headers, as the pixel budget
 * (es_image_get_max_pixels) is, before the volume is allocated: a refusal
 * gives width × height × planes, the bytes and the limit. Float pages are
 * mapped to U16 by the finite range of the whole volume, as one float
 * image is by its own (DESIGN.md §1). An OME-TIFF's first page
 * ImageDescription names its planes' sizes and order: the volume is the Z
 * planes of choice->channel at choice->time. `notice` receives what the
 * loader has to say beside the volume (NaN samples), or "". */
bool es_pages_load_volume (EsPages *pages, const EsVolumeChoice *choice, EsImage *volume, char *notice,
                           size_t notice_size, EsError *error);
/* Whether every page of a stack agrees with the first in size and sample
 * format, as a volume's pages must: headers only. False with the first
 * disagreement in why ("page 2 is 20×8, page 1 20×16"), or with *error
 * where a header cannot be read (why then untouched). */
bool es_pages_alike (EsPages *pages, char *why, size_t why_size, EsError *error);
