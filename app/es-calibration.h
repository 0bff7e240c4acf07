/* SPDX-License-Identifier: MIT */
/* The physical size of pixels (EsImageMeta): units by name, and lengths and areas in the image's unit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "es-image.h"

/* The unit a name gives ("µm", "um", "micron", "nm", "mm", "cm", "m",
 * "in", "inch": the spellings of OME's UnitsLength, TIFF's ImageJ
 * descriptions and PNG's metres); false for any other name. */
bool es_length_unit_from_name (const char *name, EsLengthUnit *unit);
/* Metres in one unit (0 for ES_LENGTH_NONE). */
double es_length_unit_metres (EsLengthUnit unit);
/* The unit's symbol: "nm", "µm", "mm", "cm", "m", "in"; "px" for none. */
const char *es_length_unit_symbol (EsLengthUnit unit);

/* Sets the size of a pixel, width × height (and the planes' spacing,
 * depth, 0 when unknown) given in `unit`: meta's lengths in metres and its
 * unit; sizes that are not finite and positive leave the image
 * uncalibrated (depth alone is then dropped too). */
void es_image_meta_set_pixel_size (EsImageMeta *meta, double width, double height, double depth, EsLengthUnit unit);

/* Sets the size of a pixel given in metres, shown in the largest of nm,
 * µm, mm, cm and m in which a pixel measures at least 0.1 (a 100 dpi
 * pixel, 0.25 mm, in mm; 0.65 µm in µm), as ImageJ shows a TIFF's tiny
 * centimetres in µm. */
void es_image_meta_set_metric_pixel_size (EsImageMeta *meta, double width, double height, double depth);
/* The same from a density in pixels a metre (PNG's pHYs). 2835
 * pixels a metre, the 72 dpi that writers put in by default, says nothing
 * of a pixel's size and leaves it uncalibrated (as ImageJ ignores 72 dpi
 * in a TIFF). */
void es_image_meta_set_pixels_per_metre (EsImageMeta *meta, double x, double y);

/* The density that exports record, in pixels a `unit` (PNG's pHYs counts
 * a metre, TIFF's resolution a centimetre) along x and y; false when
 * uncalibrated. */
bool es_image_meta_density (const EsImageMeta *meta, EsLengthUnit unit, double *x, double *y);

/* The symbol of the unit that lengths of this image are given in: its
 * unit, or "px" when uncalibrated. */
const char *es_image_meta_length_symbol (const EsImageMeta *meta);
/* The length of a step of dx × dy pixels, in the image's unit (in pixels
 * when uncalibrated): hypot (dx · pixel width, dy · pixel height). */
double es_image_meta_length (const EsImageMeta *meta, double dx, double dy);
/* The area of width × height pixels in the image's unit squared (pixels
 * when uncalibrated). */
double es_image_meta_area (const EsImageMeta *meta, double width, double height);
/* A pixel's width, height and (0 when unknown) the planes' spacing in the
 * image's unit; false when uncalibrated. */
bool es_image_meta_pixel_size (const EsImageMeta *meta, double *width, double *height, double *depth);
/* The decimals that show a value of the image to the step between two of
 * its samples: 0 for integers, for floats ceil(−log10 step), 0 to 9 (a
 * float TIFF of −1 … 2.5 steps by 5.3e-5: 5 decimals). */
int es_image_meta_value_decimals (const EsImageMeta *meta);

/* A whole text that is one number as files write them ("0.65", "1e-3"),
 * with a point whatever the process's locale (the window sets LC_NUMERIC,
 * which may want a comma). */
bool es_parse_decimal (const char *text, double *value);
/* A number with `digits` significant digits and no trailing zeros ("0.65",
 * "1.5e-05"), the way calibrated lengths are shown and recorded. */
void es_format_significant (char *buffer, size_t size, double value, int digits);
