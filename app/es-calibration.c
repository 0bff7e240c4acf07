/* SPDX-License-Identifier: MIT */
/* The physical size of pixels: units by name, and lengths and areas in the image's unit. */
#include "es-calibration.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 72 dpi in whole pixels a metre, as PNG writers store it. */
#define ES_DEFAULT_PIXELS_PER_METRE 2835

static const struct {
  const char *symbol;
  double metres;
} units[ES_N_LENGTH_UNITS] = {
  [ES_LENGTH_NONE] = { "px", 0 },      [ES_LENGTH_NM] = { "nm", 1e-9 }, [ES_LENGTH_UM] = { "µm", 1e-6 },
  [ES_LENGTH_MM] = { "mm", 1e-3 },     [ES_LENGTH_CM] = { "cm", 1e-2 }, [ES_LENGTH_M] = { "m", 1 },
  [ES_LENGTH_INCH] = { "in", 0.0254 },
};

bool
es_length_unit_from_name (const char *name, EsLengthUnit *unit)
{
  static const struct {
    const char *name;
    EsLengthUnit unit;
  } names[] = {
    { "nm", ES_LENGTH_NM }, { "µm", ES_LENGTH_UM },     { "\xce\xbcm", ES_LENGTH_UM }, /* U+03BC, Greek mu */
    { "um", ES_LENGTH_UM }, { "micron", ES_LENGTH_UM }, { "microns", ES_LENGTH_UM },   { "mm", ES_LENGTH_MM },
    { "cm", ES_LENGTH_CM }, { "m", ES_LENGTH_M },       { "in", ES_LENGTH_INCH },      { "inch", ES_LENGTH_INCH },
  };

  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (name, names[i].name) == 0)
      {
        *unit = names[i].unit;
        return true;
      }
  return false;
}

double
es_length_unit_metres (EsLengthUnit unit)
{
  return unit < ES_N_LENGTH_UNITS ? units[unit].metres : 0;
}

const char *
es_length_unit_symbol (EsLengthUnit unit)
{
  return unit < ES_N_LENGTH_UNITS ? units[unit].symbol : units[ES_LENGTH_NONE].symbol;
}

static bool
positive (double v)
{
  return isfinite (v) && v > 0;
}

void
es_image_meta_set_pixel_size (EsImageMeta *meta, double width, double height, double depth, EsLengthUnit unit)
{
  double metres = es_length_unit_metres (unit);

  if (metres == 0 || !positive (width) || !positive (height))
    {
      meta->pixel_width = meta->pixel_height = meta->pixel_depth = 0;
      meta->length_unit = ES_LENGTH_NONE;
      return;
    }
  meta->pixel_width = width * metres;
  meta->pixel_height = height * metres;
  meta->pixel_depth = positive (depth) ? depth * metres : 0;
  meta->length_unit = unit;
}

void
es_image_meta_set_metric_pixel_size (EsImageMeta *meta, double width, double height, double depth)
{
  static const EsLengthUnit metric[] = { ES_LENGTH_M, ES_LENGTH_CM, ES_LENGTH_MM, ES_LENGTH_UM, ES_LENGTH_NM };
  EsLengthUnit unit = ES_LENGTH_NM;

  for (size_t i = 0; i < sizeof metric / sizeof metric[0]; i++)
    if (width >= 0.1 * units[metric[i]].metres)
      {
        unit = metric[i];
        break;
      }
  es_image_meta_set_pixel_size (meta, width / units[unit].metres, height / units[unit].metres,
                                depth / units[unit].metres, unit);
}

void
es_image_meta_set_pixels_per_metre (EsImageMeta *meta, double x, double y)
{
  if (!positive (x) || !positive (y) || (x == ES_DEFAULT_PIXELS_PER_METRE && y == ES_DEFAULT_PIXELS_PER_METRE))
    return;
  es_image_meta_set_metric_pixel_size (meta, 1.0 / x, 1.0 / y, 0);
}

bool
es_image_meta_density (const EsImageMeta *meta, EsLengthUnit unit, double *x, double *y)
{
  if (!es_image_meta_calibrated (meta))
    return false;
  *x = es_length_unit_metres (unit) / meta->pixel_width;
  *y = es_length_unit_metres (unit) / meta->pixel_height;
  return true;
}

const char *
es_image_meta_length_symbol (const EsImageMeta *meta)
{
  return es_length_unit_symbol (es_image_meta_calibrated (meta) ? meta->length_unit : ES_LENGTH_NONE);
}

double
es_image_meta_length (const EsImageMeta *meta, double dx, double dy)
{
  double metres;

  if (!es_image_meta_calibrated (meta))
    return hypot (dx, dy);
  metres = es_length_unit_metres (meta->length_unit);
  return hypot (dx * meta->pixel_width, dy * meta->pixel_height) / metres;
}

double
es_image_meta_area (const EsImageMeta *meta, double width, double height)
{
  double metres;

  if (!es_image_meta_calibrated (meta))
    return width * height;
  metres = es_length_unit_metres (meta->length_unit);
  return width * meta->pixel_width / metres * (height * meta->pixel_height / metres);
}

bool
es_image_meta_pixel_size (const EsImageMeta *meta, double *width, double *height, double *depth)
{
  double metres;

  if (!es_image_meta_calibrated (meta))
    return false;
  metres = es_length_unit_metres (meta->length_unit);
  *width = meta->pixel_width / metres;
  *height = meta->pixel_height / metres;
  *depth = meta->pixel_depth / metres;
  return true;
}

void
es_format_significant (char *buffer, size_t size, double value, int digits)
{
  snprintf (buffer, size, "%.*g", digits, value);
}

int
es_image_meta_value_decimals (const EsImageMeta *meta)
{
  int decimals;

  if (meta->stored != ES_STORED_FLOAT || !(meta->value_scale > 0))
    return meta->stored == ES_STORED_FLOAT ? 6 : 0;
  decimals = (int) ceil (-log10 (meta->value_scale));
  return decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
}

static locale_t c_numeric;

static void
make_c_numeric (void)
{
  c_numeric = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
}

bool
es_parse_decimal (const char *text, double *value)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  char *stop;

  pthread_once (&once, make_c_numeric);
  if (c_numeric == (locale_t) 0)
    return false;
  *value = strtod_l (text, &stop, c_numeric);
  return stop != text && *stop == '\0';
}
