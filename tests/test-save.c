/* SPDX-License-Identifier: MIT */
/* Tests of the encoders: colormaps, heatmap rendering, colormapped and raw 16-bit PNGs, text matrices, the automatic range. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <png.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "es-colorbar-layout.h"
#include "es-colormap.h"
#include "es-pipeline.h"
#include "es-save.h"
#include "tap.h"
#include "test-save-common.h"

/* ---- Colormaps ------------------------------------------------------- */

/* Entries and sums generated from matplotlib 3.6.3 with
 * (cm(np.linspace(0, 1, 256))[:, :3] * 255).round(). */
static const struct {
  const char *name;
  uint8_t entry[6][3]; /* at 0, 1, 64, 128, 192, 255 */
  long sum, weighted;  /* sum of all; sum of (i + 1) * (r + 3g + 7b) */
} reference_maps[] = {
  { "viridis",
    { { 68, 1, 84 }, { 68, 2, 86 }, { 59, 82, 139 }, { 33, 145, 140 }, { 94, 201, 98 }, { 253, 231, 37 } },
    84586,
    42919533 },
  { "magma",
    { { 0, 0, 4 }, { 1, 0, 5 }, { 81, 18, 124 }, { 183, 55, 121 }, { 252, 137, 97 }, { 252, 253, 191 } },
    90119,
    47273006 },
  { "inferno",
    { { 0, 0, 4 }, { 1, 0, 5 }, { 87, 16, 110 }, { 188, 55, 84 }, { 249, 142, 9 }, { 252, 255, 164 } },
    80870,
    35066770 },
  { "cividis",
    { { 0, 34, 78 }, { 0, 35, 79 }, { 67, 78, 108 }, { 125, 124, 120 }, { 188, 174, 108 }, { 254, 232, 56 } },
    91097,
    44374239 },
};

static void
test_colormaps (void)
{
  static const int at[6] = { 0, 1, 64, 128, 192, 255 };

  for (size_t m = 0; m < sizeof reference_maps / sizeof reference_maps[0]; m++)
    {
      EsColormap map;
      bool reversed = true, ok;
      const uint8_t (*table)[3];
      long sum = 0, weighted = 0;
      char name[32];

      ok = es_colormap_from_name (reference_maps[m].name, &map, &reversed);
      tap_ok (ok && !reversed && strcmp (es_colormap_name (map), reference_maps[m].name) == 0, "%s: name round trip",
              reference_maps[m].name);
      snprintf (name, sizeof name, "%s_r", reference_maps[m].name);
      tap_ok (es_colormap_from_name (name, &map, &reversed) && reversed
                && strcmp (es_colormap_name (map), reference_maps[m].name) == 0,
              "%s: reversed name", name);
      table = es_colormap_table (map);
      ok = true;
      for (int i = 0; i < 6; i++)
        ok &= memcmp (table[at[i]], reference_maps[m].entry[i], 3) == 0;
      for (int i = 0; i < 256; i++)
        {
          sum += table[i][0] + table[i][1] + table[i][2];
          weighted += (i + 1) * (table[i][0] + 3 * table[i][1] + 7 * table[i][2]);
        }
      tap_ok (ok, "%s: entries match matplotlib", reference_maps[m].name);
      tap_ok (sum == reference_maps[m].sum && weighted == reference_maps[m].weighted,
              "%s: all 256 entries match matplotlib (sums %ld, %ld)", reference_maps[m].name, sum, weighted);
    }

  {
    const uint8_t (*gray)[3] = es_colormap_table (ES_COLORMAP_GRAY);
    bool ok = true;
    EsColormap map;
    bool reversed;
    for (int i = 0; i < 256; i++)
      ok &= gray[i][0] == i && gray[i][1] == i && gray[i][2] == i;
    tap_ok (ok && es_colormap_from_name ("gray", &map, &reversed) && map == ES_COLORMAP_GRAY,
            "gray is the identity ramp");
  }

  {
    static const char *bad[] = { "", "viridis_", "viridis_rr", "viridisx", "Viridis", "r", "_r", "gray_x" };
    bool ok = !es_colormap_from_name (NULL, NULL, NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
      ok &= !es_colormap_from_name (bad[i], NULL, NULL);
    tap_ok (ok, "unknown colormap names are refused");
  }
}

/* ---- Heatmap rendering ------------------------------------------------- */

/* The slow reference: the definition in long double. A disagreement is only
 * allowed by one step where the exact position is within 1e-6 of a rounding
 * boundary (the renderer multiplies by 255 / (hi - lo) instead of dividing). */
static bool
reference_pixel_ok (double v, const EsColorScale *scale, const uint8_t *got)
{
  const uint8_t (*table)[3] = es_colormap_table (scale->map);
  long double t;
  int index, alt;

  if (!(scale->hi > scale->lo))
    t = 0;
  else
    t = ((long double) v - scale->lo) / ((long double) scale->hi - scale->lo) * 255.0L;
  t = t < 0 ? 0 : t > 255 ? 255 : t;
  index = (int) floorl (t + 0.5L);
  alt = fabsl (t - floorl (t) - 0.5L) < 1e-6L ? (int) floorl (t) + (index == (int) floorl (t)) : index;
  if (scale->reversed)
    {
      index = 255 - index;
      alt = 255 - alt;
    }
  return memcmp (got, table[index], 3) == 0 || memcmp (got, table[alt], 3) == 0;
}

static void
test_render (void)
{
  static const int sizes[][2] = { { 1, 1 }, { 1, 37 }, { 53, 1 }, { 17, 13 }, { 257, 3 }, { 300, 257 }, { 511, 129 } };
  static const EsFormat formats[] = { ES_FORMAT_U8, ES_FORMAT_U16, ES_FORMAT_F32 };

  for (size_t f = 0; f < 3; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      {
        EsImage image;
        EsColorScale scale;
        double lo, hi, ref_lo = INFINITY, ref_hi = -INFINITY;
        size_t stride;
        uint8_t *rgb;
        long bad = 0;

        random_image (&image, sizes[s][0], sizes[s][1], formats[f]);
        es_image_min_max (&image, &lo, &hi);
        for (int y = 0; y < image.height; y++)
          for (int x = 0; x < image.width; x++)
            {
              double v = value_at (&image, x, y);
              ref_lo = v < ref_lo ? v : ref_lo;
              ref_hi = v > ref_hi ? v : ref_hi;
            }
        tap_ok (lo == ref_lo && hi == ref_hi, "min_max %s %dx%d: %g..%g", es_format_name (formats[f]), image.width,
                image.height, lo, hi);

        scale.map = (EsColormap) rand_int (ES_N_COLORMAPS);
        scale.reversed = rand_int (2);
        /* A range inside the data (so both clamps happen), the data's own
         * range, or an empty one (everything maps to the first entry). */
        switch (rand_int (3))
          {
          case 0:
            scale.lo = lo + (hi - lo) * 0.2 * rand_unit ();
            scale.hi = hi - (hi - lo) * 0.2 * rand_unit ();
            break;
          case 1:
            scale.lo = lo;
            scale.hi = hi;
            break;
          default: scale.lo = scale.hi = lo + (hi - lo) * rand_unit (); break;
          }
        stride = 3 * (size_t) image.width + (size_t) rand_int (7);
        rgb = malloc (stride * (size_t) image.height);
        es_render_heatmap (&image, &scale, rgb, stride);
        for (int y = 0; y < image.height; y++)
          for (int x = 0; x < image.width; x++)
            bad += !reference_pixel_ok (value_at (&image, x, y), &scale, rgb + (size_t) y * stride + 3 * (size_t) x);
        tap_ok (bad == 0, "render %s %dx%d %s%s %g..%g matches the reference (%ld bad)", es_format_name (formats[f]),
                image.width, image.height, es_colormap_name (scale.map), scale.reversed ? "_r" : "", scale.lo, scale.hi,
                bad);

        /* The window's words: the same colours as opaque 0xFFRRGGBB, NaN
         * (a float's, or 16-bit sample 0 standing for one) included. */
        {
          const size_t words_stride = 4 * (size_t) image.width + 4 * (size_t) rand_int (3);
          uint32_t *words = malloc (words_stride * (size_t) image.height);
          long differ = 0;

          if (formats[f] == ES_FORMAT_F32)
            ((float *) image.pixels)[rand_int (image.width * image.height)] = NAN;
          if (formats[f] == ES_FORMAT_U16)
            {
              ((uint16_t *) es_image_row (&image, 0))[0] = 0;
              image.meta.nan_samples = 1;
            }
          es_render_heatmap (&image, &scale, rgb, stride);
          es_render_heatmap_words (&image, &scale, words, words_stride);
          for (int y = 0; y < image.height; y++)
            for (int x = 0; x < image.width; x++)
              {
                const uint8_t *p = rgb + (size_t) y * stride + 3 * (size_t) x;
                uint32_t w = *(const uint32_t *) ((const uint8_t *) words + (size_t) y * words_stride + 4 * (size_t) x);

                differ += w != (0xff000000u | (uint32_t) p[0] << 16 | (uint32_t) p[1] << 8 | p[2]);
              }
          tap_ok (differ == 0, "render %s %dx%d as words: the colours of the RGB render (%ld differ)",
                  es_format_name (formats[f]), image.width, image.height, differ);
          free (words);
        }
        free (rgb);
        free (image.pixels);
      }
}

/* ---- PNG round trips --------------------------------------------------- */

/* Reads pixels with libpng's simplified API. */
static void *
read_png_pixels (const char *path, png_uint_32 format, int *width, int *height)
{
  png_image image;
  void *pixels;

  memset (&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file (&image, path))
    return NULL;
  image.format = format;
  pixels = malloc (PNG_IMAGE_SIZE (image));
  if (!png_image_finish_read (&image, NULL, pixels, 0, NULL))
    {
      free (pixels);
      return NULL;
    }
  *width = (int) image.width;
  *height = (int) image.height;
  return pixels;
}

/* Reads the tEXt chunks and header with the full libpng API (the simplified
 * one does not expose text). Returns the value of key or NULL. */
typedef struct {
  int bit_depth, color_type, n;
  char keys[16][80];
  char values[16][128];
} PngTexts;

static bool
read_png_texts (const char *path, PngTexts *texts)
{
  FILE *f = fopen (path, "rb");
  png_structp png;
  png_infop info;
  png_textp text;
  int n;

  memset (texts, 0, sizeof *texts);
  if (!f)
    return false;
  png = png_create_read_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  info = png_create_info_struct (png);
  if (setjmp (png_jmpbuf (png)))
    {
      png_destroy_read_struct (&png, &info, NULL);
      fclose (f);
      return false;
    }
  png_init_io (png, f);
  png_read_png (png, info, PNG_TRANSFORM_IDENTITY, NULL);
  texts->bit_depth = png_get_bit_depth (png, info);
  texts->color_type = png_get_color_type (png, info);
  n = png_get_text (png, info, &text, NULL);
  for (int i = 0; i < n && i < 16; i++)
    {
      snprintf (texts->keys[i], sizeof texts->keys[i], "%s", text[i].key);
      snprintf (texts->values[i], sizeof texts->values[i], "%s", text[i].text);
    }
  texts->n = n < 16 ? n : 16;
  png_destroy_read_struct (&png, &info, NULL);
  fclose (f);
  return true;
}

static const char *
text_value (const PngTexts *texts, const char *key)
{
  for (int i = 0; i < texts->n; i++)
    if (strcmp (texts->keys[i], key) == 0)
      return texts->values[i];
  return NULL;
}

static bool
text_is (const PngTexts *texts, const char *key, const char *value)
{
  const char *v = text_value (texts, key);
  return v && strcmp (v, value) == 0;
}

/* A label is the value rounded to the decimals it shows. */
static bool
label_near (const char *label, double value)
{
  const char *dot = strchr (label, '.');
  int decimals = dot ? (int) strlen (dot + 1) : 0;
  return fabs (strtod (label, NULL) - value) <= 0.5 * pow (10, -decimals) + 1e-12;
}

static void
test_heatmap_png (void)
{
  EsImage image;
  EsColorScale scale = { .map = ES_COLORMAP_VIRIDIS, .reversed = false, .lo = 0, .hi = 0 };
  EsValueInfo info = {
    .operation = "entropy", .window = 5, .levels = 16, .amount = 0, .units = "bits", .unit_scale = 1 / M_LN2
  };
  EsError error;
  char *path = tmp_path ("heat.png"), *path_bar = tmp_path ("heat-bar.png"), *path2 = tmp_path ("heat2.png");
  uint8_t *expected, *got, *bytes1 = NULL, *bytes2 = NULL;
  size_t n1 = 0, n2 = 0;
  int w = 0, h = 0;
  long bad = 0;
  PngTexts texts;
  char range[64];
  bool ok;

  random_image (&image, 97, 61, ES_FORMAT_F32);
  es_image_min_max (&image, &scale.lo, &scale.hi);
  scale.map = (EsColormap) rand_int (ES_N_COLORMAPS);
  scale.reversed = rand_int (2);
  expected = malloc (3 * 97 * 61);
  es_render_heatmap (&image, &scale, expected, 3 * 97);

  es_error_clear (&error);
  ok = es_save_heatmap_png (path, &image, &scale, false, &info, &error);
  tap_ok (ok, "heatmap PNG written (%s)", ok ? "ok" : error.message);
  got = read_png_pixels (path, PNG_FORMAT_RGB, &w, &h);
  tap_ok (got && w == 97 && h == 61 && memcmp (got, expected, 3 * 97 * 61) == 0,
          "heatmap PNG pixels read back unchanged");
  free (got);
  read_png_texts (path, &texts);
  snprintf (range, sizeof range, "%.9g..%.9g", scale.lo / M_LN2, scale.hi / M_LN2);
  tap_ok (texts.bit_depth == 8 && texts.color_type == PNG_COLOR_TYPE_PALETTE
            && text_is (&texts, "Software", "Entroscope") && text_is (&texts, "Operation", "entropy")
            && text_is (&texts, "Window", "5") && text_is (&texts, "Levels", "16") && text_is (&texts, "Units", "bits")
            && text_is (&texts, "Range", range),
          "heatmap PNG: 8-bit palette (the map's 256 colours) with Software, Operation, Window, Levels, "
          "Units, Range (%s)",
          range);

  ok = es_save_heatmap_png (path2, &image, &scale, false, &info, &error) && read_file (path, &bytes1, &n1)
       && read_file (path2, &bytes2, &n2);
  tap_ok (ok && n1 == n2 && memcmp (bytes1, bytes2, n1) == 0, "heatmap PNG output is deterministic (%zu bytes)", n1);
  free (bytes1);
  free (bytes2);

  /* Values that may be NaN (a mask) need no-data magenta, a 257th colour: RGB then. */
  {
    EsValueInfo gaps = info;
    uint8_t *with_gaps = malloc (3 * 97 * 61);
    float kept = ((float *) es_image_row (&image, 3))[5];

    gaps.may_have_no_data = true;
    ((float *) es_image_row (&image, 3))[5] = NAN;
    es_render_heatmap (&image, &scale, with_gaps, 3 * 97);
    ok = es_save_heatmap_png (path2, &image, &scale, false, &gaps, &error);
    got = ok ? read_png_pixels (path2, PNG_FORMAT_RGB, &w, &h) : NULL;
    read_png_texts (path2, &texts);
    tap_ok (got && texts.color_type == PNG_COLOR_TYPE_RGB && memcmp (got, with_gaps, 3 * 97 * 61) == 0
              && memcmp (got + 3 * (3 * 97 + 5), es_no_data_rgb, 3) == 0,
            "a heatmap that may have no-data pixels is 8-bit RGB, NaN in magenta");
    free (got);
    free (with_gaps);
    ((float *) es_image_row (&image, 3))[5] = kept;
  }

  /* With a colorbar the heatmap sits unchanged at (margin, margin). */
  ok = es_save_heatmap_png (path_bar, &image, &scale, true, &info, &error);
  tap_ok (ok, "heatmap PNG with colorbar written (%s)", ok ? "ok" : error.message);
  got = read_png_pixels (path_bar, PNG_FORMAT_RGB, &w, &h);
  if (got)
    {
      EsColorbarLayout bar;
      const uint8_t (*table)[3] = es_colormap_table (scale.map);
      int mid_x;

      es_colorbar_layout_init (&bar, 97, 61, &scale, &info);
      tap_ok (w == bar.width && h == bar.height && w > 97 + 40 && h >= 61,
              "colorbar canvas %dx%d is wider than the image", w, h);
      for (int y = 0; y < 61; y++)
        bad += memcmp (got + ((size_t) (y + bar.margin) * w + bar.margin) * 3, expected + (size_t) y * 97 * 3, 97 * 3)
               != 0;
      tap_ok (bad == 0, "the heatmap inside the colorbar export is pixel-identical");
      mid_x = bar.bar_x + 6;
      tap_ok (memcmp (got + ((size_t) bar.bar_top * w + mid_x) * 3, table[255 ^ (scale.reversed ? 255 : 0)], 3) == 0
                && memcmp (got + ((size_t) (bar.bar_top + bar.bar_height - 1) * w + mid_x) * 3,
                           table[scale.reversed ? 255 : 0], 3)
                     == 0,
              "the bar runs from the last colour at the top to the first at the bottom");
      tap_ok (label_near (bar.labels[0], scale.lo / M_LN2)
                && label_near (bar.labels[ES_COLORBAR_LAYOUT_TICKS - 1], scale.hi / M_LN2),
              "the labels run from lo to hi in bits: '%s' .. '%s'", bar.labels[0],
              bar.labels[ES_COLORBAR_LAYOUT_TICKS - 1]);
      tap_ok (memcmp (got, (uint8_t[]){ 250, 250, 250 }, 3) == 0
                && memcmp (got + ((size_t) h * w - 1) * 3, (uint8_t[]){ 250, 250, 250 }, 3) == 0,
              "the canvas corners are background");
    }
  else
    tap_ok (false, "colorbar PNG could not be read");
  free (got);

  /* Labels as the brief's example: 0..ln 16 nats. */
  {
    EsColorbarLayout bar;
    EsColorScale s = { ES_COLORMAP_MAGMA, false, 0, log (16) };
    EsValueInfo nats = {
      .operation = "entropy", .window = 5, .levels = 16, .amount = 0, .units = "nats", .unit_scale = 1
    };
    es_colorbar_layout_init (&bar, 10, 10, &s, &nats);
    tap_ok (strcmp (bar.labels[0], "0.00") == 0 && strcmp (bar.labels[1], "0.69") == 0
              && strcmp (bar.labels[2], "1.39") == 0 && strcmp (bar.labels[4], "2.77") == 0
              && strcmp (bar.units, "nats") == 0 && bar.height >= 64,
            "entropy labels: %s %s %s %s %s %s", bar.labels[0], bar.labels[1], bar.labels[2], bar.labels[3],
            bar.labels[4], bar.units);
    s = (EsColorScale){ ES_COLORMAP_GRAY, false, 0, 255 };
    es_colorbar_layout_init (&bar, 10, 10, &s, NULL);
    tap_ok (strcmp (bar.labels[0], "0") == 0 && strcmp (bar.labels[2], "128") == 0 && strcmp (bar.labels[4], "255") == 0
              && bar.units[0] == 0,
            "8-bit labels: %s %s %s", bar.labels[0], bar.labels[2], bar.labels[4]);
  }

  free (expected);
  free (image.pixels);
}

static void
test_raw16_png (void)
{
  static const EsFormat formats[] = { ES_FORMAT_F32, ES_FORMAT_U8, ES_FORMAT_U16 };

  for (int f = 0; f < 3; f++)
    {
      EsImage image;
      EsValueInfo info = {
        .operation = "entropy", .window = 7, .levels = 16, .amount = 0, .units = "bits", .unit_scale = 1 / M_LN2
      };
      EsError error;
      char *path = tmp_path ("raw16.png");
      double lo, hi, offset, step, worst = 0;
      uint16_t *got;
      PngTexts texts;
      int w = 0, h = 0;
      bool ok;
      char expect[32];

      random_image (&image, 1 + rand_int (200), 1 + rand_int (100), formats[f]);
      es_image_min_max (&image, &lo, &hi);
      /* Sometimes a narrower range, so that clamping is exercised. */
      if (rand_int (2))
        {
          lo += (hi - lo) * 0.1;
          hi -= (hi - lo) * 0.1;
        }
      if (formats[f] != ES_FORMAT_F32)
        {
          info = (EsValueInfo){
            .operation = "sharpen", .window = 0, .levels = 0, .amount = 1.5f, .units = "gray", .unit_scale = 1
          };
        }
      es_error_clear (&error);
      ok = es_save_raw16_png (path, &image, lo, hi, &info, &error);
      tap_ok (ok, "raw16 %s PNG written (%s)", es_format_name (formats[f]), ok ? "ok" : error.message);
      read_png_texts (path, &texts);
      got = read_png_pixels (path, PNG_FORMAT_LINEAR_Y, &w, &h);
      ok = got && w == image.width && h == image.height && texts.bit_depth == 16
           && texts.color_type == PNG_COLOR_TYPE_GRAY && text_value (&texts, "ValueOffset")
           && text_value (&texts, "ValueScale");
      tap_ok (ok, "raw16 %s PNG is 16-bit gray %dx%d with ValueOffset and ValueScale", es_format_name (formats[f]), w,
              h);
      if (!ok)
        {
          free (got);
          free (image.pixels);
          continue;
        }
      if (formats[f] == ES_FORMAT_F32)
        tap_ok (text_is (&texts, "Software", "Entroscope") && text_is (&texts, "Operation", "entropy")
                  && text_is (&texts, "Window", "7") && text_is (&texts, "Levels", "16")
                  && text_is (&texts, "Units", "bits") && !text_value (&texts, "Amount"),
                "raw16 entropy metadata");
      else
        tap_ok (text_is (&texts, "Operation", "sharpen") && text_is (&texts, "Amount", "1.5")
                  && text_is (&texts, "Units", "gray") && !text_value (&texts, "Window"),
                "raw16 sharpen metadata (Amount)");

      /* value_in_units = ValueOffset + sample * ValueScale, within half a
       * step for values inside lo..hi (clamped outside). */
      offset = strtod (text_value (&texts, "ValueOffset"), NULL);
      step = strtod (text_value (&texts, "ValueScale"), NULL);
      snprintf (expect, sizeof expect, "%.9g", lo * info.unit_scale);
      ok = strcmp (text_value (&texts, "ValueOffset"), expect) == 0;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            double v = value_at (&image, x, y);
            double clamped = v < lo ? lo : v > hi ? hi : v;
            double err = fabs (offset + got[(size_t) y * w + x] * step - clamped * info.unit_scale);
            worst = err > worst ? err : worst;
          }
      /* ValueScale is printed with 9 significant digits, so sample * step
       * can be off by ~65535 * 1e-9 steps beyond the half step of rounding. */
      tap_ok (ok && worst <= step * (0.5 + 1e-4) + 1e-9 * fabs (offset),
              "raw16 %s values reconstruct within half a step (worst %.3g, step %.3g)", es_format_name (formats[f]),
              worst, step);
      free (got);
      free (image.pixels);
    }
}

/* Pixels with no value (NaN: a mask) get sample 65535, which NoData names;
 * the values span 0..65534 and still reconstruct within half a step. */
static void
test_raw16_no_data (void)
{
  EsImage image;
  EsValueInfo info = { .operation = "entropy", .units = "nats", .unit_scale = 1, .may_have_no_data = true };
  EsError error = { 0 };
  char *path = tmp_path ("raw16-nodata.png");
  double lo, hi, offset, step, worst = 0;
  uint16_t *got;
  PngTexts texts;
  int w = 0, h = 0, holes = 0, marked = 0, others_below = 0;
  bool ok;

  random_image (&image, 37, 23, ES_FORMAT_F32);
  es_image_min_max (&image, &lo, &hi);
  for (int i = 0; i < 40; i++)
    ((float *) es_image_row (&image, rand_int (23)))[rand_int (37)] = NAN;
  ok = es_save_raw16_png (path, &image, lo, hi, &info, &error);
  got = ok ? read_png_pixels (path, PNG_FORMAT_LINEAR_Y, &w, &h) : NULL;
  read_png_texts (path, &texts);
  ok = got && w == 37 && h == 23 && text_is (&texts, "NoData", "65535");
  offset = ok ? strtod (text_value (&texts, "ValueOffset"), NULL) : 0;
  step = ok ? strtod (text_value (&texts, "ValueScale"), NULL) : 0;
  for (int y = 0; ok && y < h; y++)
    for (int x = 0; x < w; x++)
      {
        double v = value_at (&image, x, y);
        uint16_t s = got[(size_t) y * w + x];
        if (isnan (v))
          {
            holes++;
            marked += s == 65535;
          }
        else
          {
            others_below += s <= 65534;
            worst = fmax (worst, fabs (offset + s * step - v));
          }
      }
  tap_ok (ok && holes > 0 && marked == holes && others_below == w * h - holes
            && worst <= step * (0.5 + 1e-4) + 1e-9 * fabs (offset) && fabs (step - (hi - lo) / 65534) <= 1e-8 * step,
          "raw16 with no-data pixels: NoData 65535 marks all %d, the rest span 0..65534 within half a step", holes);
  free (got);
  free (image.pixels);
}

static void
test_rgb_png (void)
{
  int width = 1 + rand_int (150), height = 1 + rand_int (90), w, h;
  size_t stride = 3 * (size_t) width + (size_t) rand_int (9);
  uint8_t *rgb = malloc (stride * (size_t) height), *got;
  char *path = tmp_path ("gray.png");
  EsError error;
  long bad = 0;
  bool ok;

  /* Gray levels spread over 0..255 as the UI exports them, plus some colour. */
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        uint8_t *p = rgb + (size_t) y * stride + 3 * (size_t) x;
        p[0] = p[1] = p[2] = (uint8_t) (rand_int (16) * 17);
        if (y % 3 == 0)
          p[rand_int (3)] = (uint8_t) rand_int (256);
      }
  es_error_clear (&error);
  ok = es_save_rgb_png (path, rgb, width, height, stride, &error);
  tap_ok (ok, "RGB PNG %dx%d written (%s)", width, height, ok ? "ok" : error.message);
  got = read_png_pixels (path, PNG_FORMAT_RGB, &w, &h);
  if (got && w == width && h == height)
    for (int y = 0; y < height; y++)
      bad += memcmp (got + (size_t) y * width * 3, rgb + (size_t) y * stride, 3 * (size_t) width) != 0;
  tap_ok (got && w == width && h == height && bad == 0, "RGB PNG read back unchanged");
  free (got);
  free (rgb);
}

/* ---- What an export records ------------------------------------------- */

/* An export records the window size and the level count only where they
 * shape the values: a square's side, not a disk's or a ball's (whose size
 * the definition gives), and no level count for exact bins. */
static void
test_value_info_parameters (void)
{
  static const struct {
    EsOp op;
    EsShape shape;
    EsBinning binning;
    int window, levels; /* expected, 0: not recorded */
  } cases[] = {
    { ES_OP_ENTROPY, ES_SHAPE_SQUARE, ES_BINNING_DEPTH, 7, 32 },
    { ES_OP_ENTROPY, ES_SHAPE_DISK, ES_BINNING_DEPTH, 0, 32 },
    { ES_OP_ENTROPY, ES_SHAPE_RECT, ES_BINNING_RANGE, 0, 32 },
    { ES_OP_ENTROPY, ES_SHAPE_BALL, ES_BINNING_EXACT, 0, 0 },
    { ES_OP_ENTROPY, ES_SHAPE_BOX, ES_BINNING_DEPTH, 0, 32 },
    { ES_OP_ENTROPY, ES_SHAPE_SQUARE, ES_BINNING_EXACT, 7, 0 },
    { ES_OP_QUANTIZE, ES_SHAPE_SQUARE, ES_BINNING_DEPTH, 0, 32 },
    { ES_OP_SHARPEN, ES_SHAPE_SQUARE, ES_BINNING_DEPTH, 0, 0 },
  };
  int wrong = 0;

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsJob job = ES_JOB_INIT (cases[i].op);
      EsValueInfo info;

      job.window = 7;
      job.levels = 32;
      job.definition.shape = cases[i].shape;
      job.definition.binning = cases[i].binning;
      job.definition.radius = 3;
      job.definition.planes = job.definition.height = job.definition.width = 3;
      info = es_value_info_for (&job, ES_UNITS_NATS);
      if (info.window != cases[i].window || info.levels != cases[i].levels)
        {
          tap_diag ("%s %s: Window %d Levels %d, expected %d %d", es_op_info (cases[i].op)->name, info.definition,
                    info.window, info.levels, cases[i].window, cases[i].levels);
          wrong++;
        }
    }
  tap_ok (wrong == 0, "exports record Window only for squares and Levels only for binned levels (%d wrong)", wrong);
}

/* ---- Text matrix ------------------------------------------------------- */

static void
test_text_matrix (void)
{
  static const EsFormat formats[] = { ES_FORMAT_F32, ES_FORMAT_F32, ES_FORMAT_U8, ES_FORMAT_U16, ES_FORMAT_F32 };

  for (int t = 0; t < 5; t++)
    {
      EsImage image;
      EsValueInfo info = { .operation = "entropy",
                           .window = 5,
                           .levels = 16,
                           .amount = 0,
                           .units = t == 1 ? "bits" : "nats",
                           .unit_scale = t == 1 ? 1 / M_LN2 : 0 };
      double unit_scale = info.unit_scale != 0 ? info.unit_scale : 1;
      char *path = tmp_path ("matrix.txt");
      char *ref_path = tmp_path ("matrix-ref.txt");
      /* Two large ones (bits and unscaled) check the formatter on many values. */
      bool large = t == 1 || t == 4;
      int width = large ? 400 : 1 + rand_int (60), height = large ? 300 : 1 + rand_int (40);
      EsError error;
      uint8_t *ref;
      size_t ref_size;
      FILE *f;
      bool ok;

      random_image (&image, width, height, formats[t]);
      if (formats[t] == ES_FORMAT_F32)
        for (int y = 0; y < height; y++)
          for (int x = 0; x < width; x++)
            {
              float *p = (float *) es_image_row (&image, y) + x;
              /* Awkward values for a hand-written formatter: exact ties at
               * the fifth decimal (k / 64), tiny negatives ("-0.00000"),
               * values just below a carry, large and random magnitudes. */
              switch (rand_int (8))
                {
                case 0: *p = (float) (rand_int (1 << 16) - (1 << 15)) / 64.0f; break;
                case 1: *p = -(float) rand_unit () * 1e-5f; break;
                case 2: *p = (float) rand_int (1000) + 0.999995f; break;
                case 3: *p = (float) ((rand_unit () - 0.5) * pow (10, rand_int (24) - 8)); break;
                case 4: *p = rand_int (2) ? -0.0f : 0.0f; break;
                case 5: *p = (float) ((rand_unit () - 0.5) * 1e12); break;
                default: *p = (float) (rand_unit () * log (16)); break;
                }
            }

      f = fopen (ref_path, "w");
      fprintf (f, "%d %d\n", height, width);
      for (int y = 0; y < height; y++)
        {
          for (int x = 0; x < width; x++)
            {
              if (x)
                fputc (' ', f);
              if (formats[t] == ES_FORMAT_F32)
                fprintf (f, "%.5f", (double) ((float *) es_image_row (&image, y))[x] * unit_scale);
              else
                fprintf (f, "%d", (int) value_at (&image, x, y));
            }
          fputc ('\n', f);
        }
      fclose (f);

      es_error_clear (&error);
      ok = es_save_text_matrix (path, &image, &info, &error);
      read_file (ref_path, &ref, &ref_size);
      tap_ok (ok && file_equals (path, ref, ref_size),
              "text matrix %s %dx%d (unit scale %g) equals fprintf's output (%zu bytes)%s%s",
              es_format_name (formats[t]), width, height, info.unit_scale, ref_size, ok ? "" : ": ",
              ok ? "" : error.message);
      free (ref);
      free (image.pixels);
    }
}

/* Issue 15, item 5: an automatic range narrower than the stated accuracy is
 * drawn flat, with one colorbar label, and raw16 records no noise scale. */
static void
test_auto_range (void)
{
  EsImage values;
  EsResult result = { 0 };
  EsColorbarLayout bar;
  EsError error = { 0 };
  PngTexts texts = { 0 };
  const char *raw = tmp_path ("flat-raw16.png");
  double lo, hi;
  uint8_t *rgb;
  bool flat = true;

  random_image (&values, 40, 30, ES_FORMAT_F32);
  for (int y = 0; y < values.height; y++)
    for (int x = 0; x < values.width; x++)
      ((float *) es_image_row (&values, y))[x] = (x == 0 || y == 0) ? 1.7e-7f * (float) ((x + y) % 4) : 0.0f;
  es_pipeline_auto_range (&values, &lo, &hi);
  tap_ok (lo == 0.0 && hi == lo, "rounding noise of 1.7e-7 gets a flat range (%g..%g)", lo, hi);

  result.values = values;
  result.scale = (EsColorScale){ ES_COLORMAP_GRAY, false, lo, hi };
  result.info = (EsValueInfo){ .operation = "entropy", .window = 5, .levels = 16, .units = "nats", .unit_scale = 1 };
  rgb = malloc (3 * (size_t) values.width * (size_t) values.height);
  es_render_heatmap (&values, &result.scale, rgb, 3 * (size_t) values.width);
  for (size_t i = 3; i < 3 * (size_t) values.width * (size_t) values.height; i++)
    flat = flat && rgb[i] == rgb[i % 3];
  tap_ok (flat, "the heatmap of rounding noise is one colour");
  es_colorbar_layout_init (&bar, values.width, values.height, &result.scale, &result.info);
  tap_ok (bar.n_ticks == 1, "its colorbar has one label (%d: \"%s\")", bar.n_ticks, bar.labels[0]);
  tap_ok (es_pipeline_export (raw, ES_EXPORT_RAW16, &result, false, &error) && read_png_texts (raw, &texts)
            && text_is (&texts, "ValueScale", "0") && text_is (&texts, "ValueOffset", "0"),
          "raw16 records ValueScale 0, not the noise's span: %s (%s)", text_value (&texts, "ValueScale"),
          error.message);
  unlink (raw);

  /* A span of twice the accuracy is real, and integer results keep any span. */
  ((float *) es_image_row (&values, 5))[5] = 2e-5f;
  es_pipeline_auto_range (&values, &lo, &hi);
  tap_ok (hi > lo, "a span of 2e-5 is kept (%g..%g)", lo, hi);
  {
    EsImage levels;

    random_image (&levels, 9, 9, ES_FORMAT_U8);
    for (int y = 0; y < 9; y++)
      memset (es_image_row (&levels, y), 7, 9);
    ((uint8_t *) es_image_row (&levels, 4))[4] = 8;
    es_pipeline_auto_range (&levels, &lo, &hi);
    tap_ok (lo == 7 && hi == 8, "integer values keep a span of 1 (%g..%g)", lo, hi);
    free (levels.pixels);
  }
  free (rgb);
  free (values.pixels);
}

int
main (void)
{
  rng = tap_seed ();
  if (!mkdtemp (tmpdir))
    {
      tap_ok (false, "cannot create a temporary folder: %s", strerror (errno));
      return tap_done ();
    }

  test_colormaps ();
  test_render ();
  test_heatmap_png ();
  test_raw16_png ();
  test_raw16_no_data ();
  test_rgb_png ();
  test_text_matrix ();
  test_value_info_parameters ();
  test_auto_range ();

  remove_all ();
  rmdir (tmpdir);
  return tap_done ();
}
