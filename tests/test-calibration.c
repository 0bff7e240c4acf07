/* SPDX-License-Identifier: MIT */
/* What numbers stand for: the values of float and signed TIFF samples, and the pixel size that TIFF
 * resolution tags, ImageJ and OME descriptions and PNG pHYs give, read, carried through the sandbox
 * and written back by our TIFF and PNG exports. */
#include <fcntl.h>
#include <math.h>
#include <png.h>

#include "es-calibration.h"
#include "es-inspect.h"
#include "es-load.h"
#include "es-sandbox.h"
#include "es-save.h"
#include "es-volume-export.h"
#include "es-volume.h"
#include "test-tiff-common.h"

#ifdef ES_HAVE_TIFF
#include <tiffio.h>
#endif

/* Whether a and b agree to a relative 1e-6 (densities pass through
 * RATIONALs and whole pixels a metre). */
static bool
near (double a, double b)
{
  return fabs (a - b) <= 1e-6 * fabs (b);
}

/* The image's pixel size in its own unit, and that unit's symbol. */
static bool
pixel_size_is (const EsImage *image, double width, double height, double depth, const char *unit)
{
  double w, h, d;

  return es_image_meta_pixel_size (&image->meta, &w, &h, &d) && near (w, width) && near (h, height)
         && (depth == 0 ? d == 0 : near (d, depth)) && strcmp (es_image_meta_length_symbol (&image->meta), unit) == 0;
}

static void
test_units (void)
{
  EsLengthUnit unit = ES_LENGTH_NONE;
  EsImageMeta meta = { 0 };
  char text[32];
  double v = 0;

  tap_ok (es_length_unit_from_name ("micron", &unit) && unit == ES_LENGTH_UM && es_length_unit_from_name ("µm", &unit)
            && unit == ES_LENGTH_UM && es_length_unit_from_name ("inch", &unit) && unit == ES_LENGTH_INCH
            && !es_length_unit_from_name ("parsec", &unit) && !es_length_unit_from_name ("pixel", &unit),
          "unit names: OME's, ImageJ's and plain symbols, nothing else");
  es_image_meta_set_pixel_size (&meta, 0.5, 0.25, 0, ES_LENGTH_MM);
  tap_ok (es_image_meta_calibrated (&meta) && near (es_image_meta_length (&meta, 3, 4), hypot (1.5, 1.0))
            && near (es_image_meta_area (&meta, 4, 8), 0.5 * 4 * 0.25 * 8)
            && strcmp (es_image_meta_length_symbol (&meta), "mm") == 0,
          "lengths and areas in the unit of a 0.5 × 0.25 mm pixel");
  es_image_meta_set_pixel_size (&meta, NAN, 1, 0, ES_LENGTH_MM);
  tap_ok (!es_image_meta_calibrated (&meta) && es_image_meta_length (&meta, 3, 4) == 5
            && strcmp (es_image_meta_length_symbol (&meta), "px") == 0,
          "a size that is not a number leaves it uncalibrated: lengths in pixels");
  meta = (EsImageMeta){ 0 };
  es_image_meta_set_pixels_per_metre (&meta, 2835, 2835);
  tap_ok (!es_image_meta_calibrated (&meta), "72 dpi, what writers put in by default, leaves a PNG uncalibrated");
  es_image_meta_set_pixels_per_metre (&meta, 3937, 3937);
  tap_ok (strcmp (es_image_meta_length_symbol (&meta), "mm") == 0
            && near (es_image_meta_length (&meta, 1, 0), 1 / 3.937),
          "100 dpi in pixels a metre is shown in mm");
  es_image_meta_set_pixels_per_metre (&meta, 1538462, 1538462);
  tap_ok (strcmp (es_image_meta_length_symbol (&meta), "µm") == 0, "0.65 µm pixels are shown in µm");
  es_format_significant (text, sizeof text, 0.65000000001, 5);
  tap_ok (strcmp (text, "0.65") == 0 && es_parse_decimal ("2.5e-3", &v) && v == 2.5e-3 && !es_parse_decimal ("2,5", &v)
            && !es_parse_decimal ("1 µm", &v),
          "numbers written and read with a point, whatever the locale");
}

/* ---- PNG ---- */

/* An interlaced 8-bit gray PNG with a pHYs chunk, which libpng decodes
 * (es-png-read.c; the common layouts go through es-png-inflate.c). */
static bool
write_interlaced_png (const char *path, uint32_t x_density, uint32_t y_density, int unit)
{
  FILE *file = fopen (path, "wb");
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  uint8_t row[16] = { 0 };
  bool ok = file != NULL && info != NULL && !setjmp (png_jmpbuf (png));

  if (ok)
    {
      png_init_io (png, file);
      png_set_IHDR (png, info, 16, 4, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_ADAM7, PNG_COMPRESSION_TYPE_DEFAULT,
                    PNG_FILTER_TYPE_DEFAULT);
      png_set_pHYs (png, info, x_density, y_density, unit);
      png_write_info (png, info);
      for (int pass = 0; pass < png_set_interlace_handling (png); pass++)
        for (int y = 0; y < 4; y++)
          png_write_row (png, row);
      png_write_end (png, NULL);
    }
  png_destroy_write_struct (&png, &info);
  if (file != NULL)
    fclose (file);
  return ok;
}

static void
test_png (void)
{
  const char *path = temp_path ("calibrated.png");
  EsImage values = random_image (24, 16, ES_FORMAT_F32), image = { 0 };
  EsColorScale scale = { .map = ES_COLORMAP_VIRIDIS, .lo = 0, .hi = 3 };
  EsValueInfo info = { .operation = "entropy", .units = "nats", .unit_scale = 1 };
  EsError error = { 0 };

  es_image_meta_set_pixel_size (&info.pixel_size, 0.65, 0.65, 0, ES_LENGTH_UM);
  tap_ok (es_save_heatmap_png (path, &values, &scale, false, &info, &error) && es_load_file (path, 16, &image, &error)
            && pixel_size_is (&image, 0.65, 0.65, 0, "µm"),
          "a heatmap PNG of a 0.65 µm input writes pHYs, read back as 0.65 µm pixels (%s)", error.message);
  es_image_clear (&image);
  info.pixel_size = (EsImageMeta){ 0 };
  tap_ok (es_save_heatmap_png (path, &values, &scale, true, &info, &error) && es_load_file (path, 16, &image, &error)
            && !es_image_meta_calibrated (&image.meta),
          "an uncalibrated input's PNG has no pHYs (%s)", error.message);
  es_image_clear (&image);
  tap_ok (write_interlaced_png (path, 4000, 2000, PNG_RESOLUTION_METER) && es_load_file (path, 16, &image, &error)
            && pixel_size_is (&image, 0.25, 0.5, 0, "mm"),
          "an interlaced PNG's pHYs (libpng's decoder): 4000 × 2000 pixels a metre are 0.25 × 0.5 mm (%s)",
          error.message);
  es_image_clear (&image);
  tap_ok (write_interlaced_png (path, 4000, 2000, PNG_RESOLUTION_UNKNOWN) && es_load_file (path, 16, &image, &error)
            && !es_image_meta_calibrated (&image.meta),
          "pHYs without a unit is only an aspect ratio: uncalibrated (%s)", error.message);
  es_image_clear (&image);
  es_image_clear (&values);
  unlink (path);
}

#ifdef ES_HAVE_TIFF

/* A TIFF of one row of n samples, with resolution tags and a description
 * when given (unit 0: no ResolutionUnit tag). */
static bool
write_tiff (const char *path, uint16_t bits, uint16_t format, const void *row, int n, float x_res, float y_res,
            uint16_t unit, const char *description, int pages)
{
  TIFF *tif = TIFFOpen (path, "w");
  bool ok = tif != NULL;

  for (int p = 0; ok && p < pages; p++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (uint32_t) n);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 1u);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, bits);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, format);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 1u);
      if (x_res > 0)
        {
          TIFFSetField (tif, TIFFTAG_XRESOLUTION, x_res);
          TIFFSetField (tif, TIFFTAG_YRESOLUTION, y_res);
        }
      if (unit != 0)
        TIFFSetField (tif, TIFFTAG_RESOLUTIONUNIT, unit);
      if (description != NULL && p == 0)
        TIFFSetField (tif, TIFFTAG_IMAGEDESCRIPTION, description);
      ok = TIFFWriteScanline (tif, (void *) row, 0, 0) >= 0 && TIFFWriteDirectory (tif);
    }
  if (tif != NULL)
    TIFFClose (tif);
  return ok;
}

static bool
load_first (const char *path, EsImage *image, EsError *error)
{
  return es_load_file (path, 16, image, error);
}

static void
test_tiff_values (void)
{
  static const float floats[] = { -1.0f, 2.5f, 0.75f, 0.0f };
  static const int16_t shorts[] = { -32768, -1, 0, 32767 };
  static const int8_t bytes[] = { -128, -1, 0, 127 };
  static const uint16_t words[] = { 0, 1, 4095, 65535 };
  const char *path = temp_path ("values.tif");
  EsImage image = { 0 };
  EsError error = { 0 };
  EsChannel channel;
  EsStats stats;
  bool ok;

  ok = write_tiff (path, 32, SAMPLEFORMAT_IEEEFP, floats, 4, 0, 0, 0, NULL, 1) && load_first (path, &image, &error)
       && image.format == ES_FORMAT_U16 && image.meta.stored == ES_STORED_FLOAT;
  channel = es_channel_of_values (&image);
  es_roi_stats (&channel, (EsRect){ 0, 0, 4, 1 }, &stats);
  tap_ok (ok && strcmp (channel.name, "value") == 0 && fabs (es_channel_value (&channel, 0, 0) + 1) < 1e-12
            && fabs (es_channel_value (&channel, 1, 0) - 2.5) < 1e-12
            && fabs (es_channel_value (&channel, 2, 0) - 0.75) <= 0.5 * 3.5 / 65535 && fabs (stats.min + 1) < 1e-12
            && fabs (stats.max - 2.5) < 1e-12 && es_image_meta_value_decimals (&image.meta) == 5,
          "a float TIFF of −1 … 2.5 shows its values, to 5 decimals, not its 16-bit samples (%s)", error.message);
  es_image_clear (&image);

  ok = write_tiff (path, 16, SAMPLEFORMAT_INT, shorts, 4, 0, 0, 0, NULL, 1) && load_first (path, &image, &error);
  channel = es_channel_of_values (&image);
  for (int x = 0; ok && x < 4; x++)
    ok = es_channel_value (&channel, x, 0) == shorts[x];
  tap_ok (ok && image.meta.stored == ES_STORED_SIGNED && es_image_meta_value_decimals (&image.meta) == 0,
          "a signed 16-bit TIFF shows its integers, −32768 … 32767 (%s)", error.message);
  es_image_clear (&image);

  ok = write_tiff (path, 8, SAMPLEFORMAT_INT, bytes, 4, 0, 0, 0, NULL, 1) && load_first (path, &image, &error);
  channel = es_channel_of_values (&image);
  for (int x = 0; ok && x < 4; x++)
    ok = es_channel_value (&channel, x, 0) == bytes[x];
  tap_ok (ok, "a signed 8-bit TIFF shows its integers, −128 … 127 (%s)", error.message);
  es_image_clear (&image);

  ok = write_tiff (path, 16, SAMPLEFORMAT_UINT, words, 4, 0, 0, 0, NULL, 1) && load_first (path, &image, &error);
  channel = es_channel_of_values (&image);
  for (int x = 0; ok && x < 4; x++)
    ok = es_channel_value (&channel, x, 0) == words[x];
  tap_ok (ok && image.meta.stored == ES_STORED_UNSIGNED && strcmp (channel.name, "gray") == 0,
          "an unsigned 16-bit TIFF's samples are its values, named gray (%s)", error.message);
  es_image_clear (&image);
  unlink (path);
}

static void
test_tiff_calibration (void)
{
  static const uint8_t row[4] = { 1, 2, 3, 4 };
  static const char imagej[] = "ImageJ=1.54f\nimages=2\nslices=2\nunit=micron\nspacing=2.5\nloop=false\n";
  static const char ome[]
    = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\">"
      "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"uint8\" SizeX=\"4\" SizeY=\"1\" "
      "SizeZ=\"2\" SizeC=\"1\" SizeT=\"1\" PhysicalSizeX=\"650\" PhysicalSizeXUnit=\"nm\" PhysicalSizeY=\"0.65\" "
      "PhysicalSizeZ=\"2\"><Channel ID=\"Channel:0:0\"/></Pixels></Image></OME>";
  const char *path = temp_path ("calibrated.tif");
  EsImage image = { 0 };
  EsError error = { 0 };
  EsPages *pages;
  char notice[256];

  tap_ok (write_tiff (path, 8, SAMPLEFORMAT_UINT, row, 4, 100, 50, RESUNIT_CENTIMETER, NULL, 1)
            && load_first (path, &image, &error) && pixel_size_is (&image, 0.1, 0.2, 0, "mm"),
          "XResolution 100, YResolution 50 a centimetre: 0.1 × 0.2 mm pixels (%s)", error.message);
  es_image_clear (&image);
  tap_ok (write_tiff (path, 8, SAMPLEFORMAT_UINT, row, 4, 300, 300, RESUNIT_INCH, NULL, 1)
            && load_first (path, &image, &error) && pixel_size_is (&image, 1 / 300.0, 1 / 300.0, 0, "in"),
          "300 pixels an inch: 1/300 in pixels (%s)", error.message);
  es_image_clear (&image);
  tap_ok (write_tiff (path, 8, SAMPLEFORMAT_UINT, row, 4, 72, 72, RESUNIT_INCH, NULL, 1)
            && load_first (path, &image, &error) && !es_image_meta_calibrated (&image.meta),
          "72 pixels an inch says nothing of the size: uncalibrated, as in ImageJ (%s)", error.message);
  es_image_clear (&image);
  tap_ok (write_tiff (path, 8, SAMPLEFORMAT_UINT, row, 4, 300, 300, RESUNIT_NONE, NULL, 1)
            && load_first (path, &image, &error) && !es_image_meta_calibrated (&image.meta),
          "ResolutionUnit none: uncalibrated, as in Fiji (%s)", error.message);
  es_image_clear (&image);
  tap_ok (write_tiff (path, 8, SAMPLEFORMAT_UINT, row, 4, 0, 0, 0, NULL, 1) && load_first (path, &image, &error)
            && !es_image_meta_calibrated (&image.meta),
          "no resolution tags: uncalibrated (%s)", error.message);
  es_image_clear (&image);

  /* ImageJ writes pixels a unit with ResolutionUnit none, and the unit in its description. */
  pages = write_tiff (path, 8, SAMPLEFORMAT_UINT, row, 4, 2, 4, RESUNIT_NONE, imagej, 2)
            ? es_pages_open (path, 16, &error)
            : NULL;
  tap_ok (pages != NULL && es_pages_load_volume (pages, &(EsVolumeChoice){ 0 }, &image, notice, sizeof notice, &error)
            && pixel_size_is (&image, 0.5, 0.25, 2.5, "µm"),
          "an ImageJ TIFF (unit=micron, spacing=2.5): 0.5 × 0.25 µm voxels 2.5 µm apart (%s)", error.message);
  es_image_clear (&image);
  if (pages != NULL)
    es_pages_close (pages);

  pages = write_tiff (path, 8, SAMPLEFORMAT_UINT, row, 4, 300, 300, RESUNIT_INCH, ome, 2)
            ? es_pages_open (path, 16, &error)
            : NULL;
  tap_ok (pages != NULL && es_pages_load_volume (pages, &(EsVolumeChoice){ 0 }, &image, notice, sizeof notice, &error)
            && pixel_size_is (&image, 650, 650, 2000, "nm"),
          "an OME-TIFF's PhysicalSizeX/Y/Z in nm and µm win over its resolution tags (%s)", error.message);
  es_image_clear (&image);
  if (pages != NULL)
    {
      tap_ok (es_pages_load (pages, 1, &image, &error) && pixel_size_is (&image, 650, 650, 2000, "nm"),
              "and its second page alone has them too (%s)", error.message);
      es_image_clear (&image);
      es_pages_close (pages);
    }
  unlink (path);
}

/* Our TIFF writer records the input's pixel size in centimetres, which
 * libtiff and our reader read back. */
static void
test_tiff_write (void)
{
  const char *path = temp_path ("out.tif");
  EsImage values = random_image (20, 10, ES_FORMAT_F32), image = { 0 };
  EsValueInfo info = { .operation = "entropy", .units = "nats", .unit_scale = 1 };
  EsError error = { 0 };
  float x_res = 0;
  uint16_t unit = 0;
  EsPages *pages;
  TIFF *tif;
  bool ok;

  es_image_meta_set_pixel_size (&info.pixel_size, 0.65, 1.3, 0, ES_LENGTH_UM);
  ok = es_save_tiff (path, &values, &info, &error);
  tif = ok ? TIFFOpen (path, "r") : NULL;
  if (tif != NULL)
    {
      ok = TIFFGetField (tif, TIFFTAG_XRESOLUTION, &x_res) && TIFFGetField (tif, TIFFTAG_RESOLUTIONUNIT, &unit);
      TIFFClose (tif);
    }
  tap_ok (ok && unit == RESUNIT_CENTIMETER && near (x_res, 1e4 / 0.65),
          "a result TIFF of a 0.65 µm input: XResolution %g a centimetre (%s)", x_res, error.message);
  pages = ok ? es_pages_open (path, 16, &error) : NULL;
  ok = pages != NULL && es_pages_load_floats (pages, 0, &image, &error);
  if (pages != NULL)
    es_pages_close (pages);
  tap_ok (ok && pixel_size_is (&image, 0.65, 1.3, 0, "µm") && images_equal (&image, &values),
          "read back: 0.65 × 1.3 µm, the values unchanged (%s)", error.message);
  es_image_clear (&image);

  info.pixel_size = (EsImageMeta){ 0 };
  ok = es_save_tiff (path, &values, &info, &error);
  tif = ok ? TIFFOpen (path, "r") : NULL;
  if (tif != NULL)
    {
      ok = !TIFFGetField (tif, TIFFTAG_XRESOLUTION, &x_res);
      TIFFClose (tif);
    }
  tap_ok (ok, "an uncalibrated input's TIFF has no resolution tags (%s)", error.message);
  es_image_clear (&values);
  unlink (path);
}

/* A volume's result keeps its planes' spacing: the first page of its TIFF
 * starts with the ImageJ description that Fiji and tifffile read (unit=um
 * under a resolution in pixels a centimetre, spacing= in µm), and our
 * reader, which follows ImageJ's rule, gets the voxel back. */
static void
test_tiff_write_spacing (void)
{
  static const char imagej[] = "ImageJ=1.11a\nimages=3\nslices=3\nunit=um\nspacing=2.5\n";
  const char *path = temp_path ("volume-out.tif");
  EsResult result = { .info = { .operation = "entropy", .units = "nats", .unit_scale = 1 } };
  EsImage image = { 0 };
  EsError error = { 0 };
  char notice[256], *first = NULL, *second = NULL;
  EsPages *pages;
  TIFF *tif;
  bool ok;

  ok = es_image_alloc_volume (&result.values, 12, 9, 3, ES_FORMAT_F32, 0, &error);
  for (int z = 0; ok && z < 3; z++)
    for (int y = 0; y < 9; y++)
      for (int x = 0; x < 12; x++)
        ((float *) es_image_voxel_row (&result.values, z, y))[x] = (float) (x + 10 * y + 100 * z) / 7.0f;
  es_image_meta_set_pixel_size (&result.info.pixel_size, 0.65, 0.65, 2.5, ES_LENGTH_UM);
  ok = ok && es_volume_export_tiff (path, &result, &error);
  tif = ok ? TIFFOpen (path, "r") : NULL;
  if (tif != NULL)
    {
      char *text = NULL;

      if (TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &text))
        first = strdup (text);
      if (TIFFSetDirectory (tif, 1) && TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &text))
        second = strdup (text);
      TIFFClose (tif);
    }
  tap_ok (first != NULL && second != NULL && strncmp (first, imagej, sizeof imagej - 1) == 0
            && strstr (first, "Operation=entropy\n") != NULL && strncmp (second, "ImageJ=", 7) != 0,
          "a calibrated volume's TIFF: its first page starts with ImageJ's unit=um and spacing=2.5 (%s)",
          first ? first : error.message);
  free (first);
  free (second);
  pages = ok ? es_pages_open (path, 16, &error) : NULL;
  tap_ok (pages != NULL && es_pages_load_volume (pages, &(EsVolumeChoice){ 0 }, &image, notice, sizeof notice, &error)
            && pixel_size_is (&image, 0.65, 0.65, 2.5, "µm"),
          "read back: 0.65 × 0.65 µm voxels 2.5 µm apart (%s)", error.message);
  es_image_clear (&image);
  if (pages != NULL)
    es_pages_close (pages);

  /* Without a spacing, no ImageJ description: the file is as before. */
  es_image_meta_set_pixel_size (&result.info.pixel_size, 0.65, 0.65, 0, ES_LENGTH_UM);
  ok = es_volume_export_tiff (path, &result, &error);
  tif = ok ? TIFFOpen (path, "r") : NULL;
  if (tif != NULL)
    {
      char *text = NULL;

      ok = TIFFGetField (tif, TIFFTAG_IMAGEDESCRIPTION, &text) && strncmp (text, "ImageJ=", 7) != 0;
      TIFFClose (tif);
    }
  tap_ok (ok, "a volume without a planes' spacing gets no ImageJ description (%s)", error.message);
  es_result_clear (&result);
  unlink (path);
}

/* Field by field: the struct's padding is whatever each side's memory held. */
static bool
meta_equal (const EsImageMeta *a, const EsImageMeta *b)
{
  return a->stored == b->stored && a->value_offset == b->value_offset && a->value_scale == b->value_scale
         && a->pixel_width == b->pixel_width && a->pixel_height == b->pixel_height && a->pixel_depth == b->pixel_depth
         && a->length_unit == b->length_unit && a->nan_samples == b->nan_samples
         && a->infinite_samples == b->infinite_samples;
}

/* The sandbox hands back the value map and the pixel size as the
 * in-process decoder gives them. */
static void
test_sandbox (void)
{
  static const float floats[] = { -1.0f, 2.5f, 0.75f, 0.0f };
  const char *path = temp_path ("sandboxed.tif");
  const char *reason = NULL;
  EsDecodeRequest request = { .levels = 16 };
  EsImage here = { 0 }, there = { 0 };
  EsError error = { 0 };
  char notice[256];
  int fd;
  bool ok;

  if (!es_sandbox_available (&reason))
    {
      tap_skip (reason, "the sandbox carries the value map and the pixel size");
      return;
    }
  ok = write_tiff (path, 32, SAMPLEFORMAT_IEEEFP, floats, 4, 2000, 2000, RESUNIT_CENTIMETER, NULL, 1);
  fd = ok ? open (path, O_RDONLY | O_CLOEXEC) : -1;
  ok = fd >= 0 && es_decode_fd (fd, &request, &here, notice, sizeof notice, &error) && lseek (fd, 0, SEEK_SET) == 0
       && es_sandbox_decode_fd (fd, &request, &there, notice, sizeof notice, &error);
  tap_ok (ok && meta_equal (&here.meta, &there.meta) && here.meta.stored == ES_STORED_FLOAT
            && pixel_size_is (&there, 5, 5, 0, "µm"),
          "the sandbox hands back the float values' map and the pixel size (%s)", error.message);
  if (fd >= 0)
    close (fd);
  es_image_clear (&here);
  es_image_clear (&there);
  unlink (path);
}

#endif

int
main (void)
{
  if (!tiff_tests_init ())
    return 1;
  test_units ();
  test_png ();
#ifdef ES_HAVE_TIFF
  test_tiff_values ();
  test_tiff_calibration ();
  test_tiff_write ();
  test_tiff_write_spacing ();
  test_sandbox ();
#else
  tap_skip ("built without libtiff", "TIFF values and calibration");
#endif
  tiff_tests_cleanup ();
  return tap_done ();
}
