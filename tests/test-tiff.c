/* SPDX-License-Identifier: MIT */
/* TIFF input: our reader on files that libtiff writes (every sample type, strips and tiles, planes,
 * codecs, byte orders, BigTIFF, stacks), the float definition of DESIGN.md §1, pipes and offsets,
 * and hostile files; without libtiff, TIFF is refused by name. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/wait.h>

#include "es-load.h"
#include "es-sandbox.h"
#include "es-volume.h"
#include "test-tiff-common.h"

#ifndef ES_HAVE_TIFF

int
main (void)
{
  EsImage image = { 0 };
  EsError error = { 0 };

#ifdef ES_HAVE_JPEG
  const char *says = "TIFF is not supported (PNG, PGM, JPEG, text matrix are)";
#else
  const char *says = "TIFF is not supported (PNG, PGM, text matrix are)";
#endif

  tap_ok (!es_load_memory ("II*\0\x08\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32, 16, &image, &error)
            && strcmp (error.message, says) == 0,
          "without libtiff a TIFF is refused by name (%s)", error.message);
  tap_skip ("built without libtiff (-Dtiff=auto found no libtiff-dev)", "reading TIFF");
  return tap_done ();
}

#else

#include <tiffio.h>

/* How a test file is written. */
typedef struct {
  const char *name;
  uint16_t bits, sample_format, spp, photometric, planar, compression, predictor;
  uint32_t tile; /* 0: strips */
  uint32_t rows_per_strip;
  const char *mode; /* "w", "w8" (BigTIFF), "wb" (big-endian) */
  bool lossy;
} Layout;

/* Unnamed fields are 0 (the defaults). */
#define L(...)                                                                                                         \
  {                                                                                                                    \
    __VA_ARGS__                                                                                                        \
  }

/* Sample c of pixel (x, y), as stored: integers within `bits`, or floats. */
static double
stored_sample (const Layout *l, int x, int y, int c, unsigned seed)
{
  unsigned h = (unsigned) x * 73856093u ^ (unsigned) y * 19349663u ^ (unsigned) c * 83492791u ^ seed;
  h = (h ^ (h >> 13)) * 0x5bd1e995u;
  h ^= h >> 15;
  if (l->sample_format == SAMPLEFORMAT_IEEEFP)
    return (double) (float) ((double) (h % 100000) / 997.0 - 40.0);
  if (l->lossy) /* smooth, so that JPEG stays close */
    return (double) (x * 2 + y * 3 + c * 20 + 8);
  return (double) (h & ((1u << (l->bits < 32 ? l->bits : 16)) - 1));
}

static void
pack (const Layout *l, uint8_t *row, size_t index, double v)
{
  switch (l->bits)
    {
    case 8: row[index] = l->sample_format == SAMPLEFORMAT_INT ? (uint8_t) (int8_t) ((int) v - 128) : (uint8_t) v; break;
      case 16: {
        uint16_t u = l->sample_format == SAMPLEFORMAT_INT ? (uint16_t) (int16_t) ((int) v - 32768) : (uint16_t) v;
        memcpy (row + 2 * index, &u, 2);
        break;
      }
      case 32: {
        float f = (float) v;
        memcpy (row + 4 * index, &f, 4);
        break;
      }
    case 64: memcpy (row + 8 * index, &v, 8); break;
    default: row[index * l->bits / 8] |= (uint8_t) ((unsigned) v << (8 - l->bits - index * l->bits % 8)); break;
    }
}

/* Writes width×height pixels of `pages` pages as the layout says. */
static bool
write_layout (const char *path, const Layout *l, int width, int height, int pages)
{
  TIFF *tif = TIFFOpen (path, l->mode ? l->mode : "w");
  bool ok = tif != NULL;

  for (int p = 0; ok && p < pages; p++)
    {
      int planes = l->planar == PLANARCONFIG_SEPARATE ? l->spp : 1;
      int per = l->planar == PLANARCONFIG_SEPARATE ? 1 : l->spp;
      uint32_t cw = l->tile ? l->tile : (uint32_t) width;
      uint32_t ch = l->tile ? l->tile : (uint32_t) height;
      size_t row_bytes = ((size_t) cw * per * l->bits + 7) / 8;
      uint8_t *chunk = calloc (1, row_bytes * ch);

      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (uint32_t) width);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (uint32_t) height);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, l->bits);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, l->spp);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, l->sample_format ? l->sample_format : SAMPLEFORMAT_UINT);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, l->photometric);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, l->planar ? l->planar : PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_COMPRESSION, l->compression ? l->compression : COMPRESSION_NONE);
      if (l->spp == 2 || l->spp == 4)
        {
          uint16_t extra = EXTRASAMPLE_UNASSALPHA;
          TIFFSetField (tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
        }
      if (l->predictor)
        TIFFSetField (tif, TIFFTAG_PREDICTOR, l->predictor);
      if (l->compression == COMPRESSION_WEBP)
        TIFFSetField (tif, TIFFTAG_WEBP_LOSSLESS, 1);
      if (pages > 1)
        {
          TIFFSetField (tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
          TIFFSetField (tif, TIFFTAG_PAGENUMBER, (uint16_t) p, (uint16_t) pages);
        }
      if (l->tile)
        {
          TIFFSetField (tif, TIFFTAG_TILEWIDTH, l->tile);
          TIFFSetField (tif, TIFFTAG_TILELENGTH, l->tile);
        }
      else
        TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, l->rows_per_strip ? l->rows_per_strip : (uint32_t) height);
      for (int plane = 0; ok && plane < planes; plane++)
        for (uint32_t y0 = 0; ok && y0 < (uint32_t) height; y0 += ch)
          for (uint32_t x0 = 0; ok && x0 < (uint32_t) width; x0 += cw)
            {
              memset (chunk, 0, row_bytes * ch);
              for (uint32_t r = 0; r < ch && y0 + r < (uint32_t) height; r++)
                for (uint32_t c = 0; c < cw && x0 + c < (uint32_t) width; c++)
                  for (int s = 0; s < per; s++)
                    pack (l, chunk + r * row_bytes, (size_t) c * per + s,
                          stored_sample (l, (int) (x0 + c), (int) (y0 + r), plane + s, (unsigned) p * 7919u));
              if (l->tile)
                ok = TIFFWriteTile (tif, chunk, x0, y0, 0, (uint16_t) plane) >= 0;
              else
                for (uint32_t r = 0; ok && r < (uint32_t) height; r++)
                  ok = TIFFWriteScanline (tif, chunk + r * row_bytes, r, (uint16_t) plane) >= 0;
            }
      free (chunk);
      ok = ok && TIFFWriteDirectory (tif);
    }
  if (tif != NULL)
    TIFFClose (tif);
  return ok;
}

/* What DESIGN.md §1 says the reader gives for pixel (x, y) of page p,
 * computed here from the written samples, independently of the reader. */
static double
expected_gray (const Layout *l, int x, int y, int p)
{
  double s[3];
  int n = l->photometric == PHOTOMETRIC_RGB ? 3 : 1;

  for (int c = 0; c < n; c++)
    {
      s[c] = stored_sample (l, x, y, c, (unsigned) p * 7919u);
      if (l->photometric == PHOTOMETRIC_MINISWHITE)
        s[c] = l->sample_format == SAMPLEFORMAT_IEEEFP ? -s[c] : (double) ((1u << l->bits) - 1) - s[c];
    }
  if (n == 1)
    return s[0];
  if (l->sample_format == SAMPLEFORMAT_IEEEFP)
    return (float) (0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2]);
  return (double) lround (0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2]);
}

/* Compares page p with the expectation: exact for integers, the float
 * mapping for floats (min..max of the expected values to 0..65535). */
static bool
check_page (const Layout *l, const EsImage *image, int width, int height, int p, double *worst)
{
  bool floats = l->sample_format == SAMPLEFORMAT_IEEEFP;
  double lo = INFINITY, hi = -INFINITY;

  *worst = 0;
  if (image->width != width || image->height != height
      || image->format != (floats || l->bits > 8 ? ES_FORMAT_U16 : ES_FORMAT_U8)
      || image->depth != (floats ? 16 : l->bits))
    return false;
  for (int y = 0; floats && y < height; y++)
    for (int x = 0; x < width; x++)
      {
        double v = expected_gray (l, x, y, p);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        double want = expected_gray (l, x, y, p);
        double got = image->format == ES_FORMAT_U8 ? ((uint8_t *) es_image_row (image, y))[x]
                                                   : ((uint16_t *) es_image_row (image, y))[x];
        if (floats)
          want = (double) lround ((want - lo) * 65535.0 / (hi - lo));
        if (fabs (got - want) > *worst)
          *worst = fabs (got - want);
      }
  return l->lossy ? *worst <= 12 : *worst == 0;
}

static void
test_read_layouts (void)
{
  static const Layout layouts[] = {
    L (.name = "gray 8-bit", .bits = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "gray 16-bit", .bits = 16, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "gray 16-bit big-endian", .bits = 16, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK, .mode = "wb"),
    L (.name = "gray 1-bit", .bits = 1, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "gray 2-bit", .bits = 2, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "gray 4-bit", .bits = 4, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "MinIsWhite 8-bit", .bits = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISWHITE),
    L (.name = "MinIsWhite 1-bit, CCITT G4", .bits = 1, .spp = 1, .photometric = PHOTOMETRIC_MINISWHITE,
       .compression = COMPRESSION_CCITTFAX4),
    L (.name = "signed 8-bit", .bits = 8, .sample_format = SAMPLEFORMAT_INT, .spp = 1,
       .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "signed 16-bit", .bits = 16, .sample_format = SAMPLEFORMAT_INT, .spp = 1,
       .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "float32", .bits = 32, .sample_format = SAMPLEFORMAT_IEEEFP, .spp = 1,
       .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "float64", .bits = 64, .sample_format = SAMPLEFORMAT_IEEEFP, .spp = 1,
       .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "float32 big-endian, tiles", .bits = 32, .sample_format = SAMPLEFORMAT_IEEEFP, .spp = 1,
       .photometric = PHOTOMETRIC_MINISBLACK, .tile = 16, .mode = "wb"),
    L (.name = "float32 MinIsWhite", .bits = 32, .sample_format = SAMPLEFORMAT_IEEEFP, .spp = 1,
       .photometric = PHOTOMETRIC_MINISWHITE),
    L (.name = "gray+alpha 8-bit", .bits = 8, .spp = 2, .photometric = PHOTOMETRIC_MINISBLACK),
    L (.name = "RGB 8-bit", .bits = 8, .spp = 3, .photometric = PHOTOMETRIC_RGB),
    L (.name = "RGBA 8-bit", .bits = 8, .spp = 4, .photometric = PHOTOMETRIC_RGB),
    L (.name = "RGB 16-bit", .bits = 16, .spp = 3, .photometric = PHOTOMETRIC_RGB),
    L (.name = "RGB float32", .bits = 32, .sample_format = SAMPLEFORMAT_IEEEFP, .spp = 3,
       .photometric = PHOTOMETRIC_RGB),
    L (.name = "RGB 8-bit, separate planes", .bits = 8, .spp = 3, .photometric = PHOTOMETRIC_RGB,
       .planar = PLANARCONFIG_SEPARATE),
    L (.name = "RGB 16-bit, separate planes, tiles", .bits = 16, .spp = 3, .photometric = PHOTOMETRIC_RGB,
       .planar = PLANARCONFIG_SEPARATE, .tile = 32),
    L (.name = "gray 8-bit, tiles", .bits = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK, .tile = 16),
    L (.name = "gray 16-bit, strips of 3 rows", .bits = 16, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
       .rows_per_strip = 3),
    L (.name = "gray 8-bit, LZW", .bits = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
       .compression = COMPRESSION_LZW),
    L (.name = "gray 16-bit, Deflate + horizontal predictor", .bits = 16, .spp = 1,
       .photometric = PHOTOMETRIC_MINISBLACK, .compression = COMPRESSION_ADOBE_DEFLATE, .predictor = 2),
    L (.name = "float32, Deflate + float predictor, tiles", .bits = 32, .sample_format = SAMPLEFORMAT_IEEEFP, .spp = 1,
       .photometric = PHOTOMETRIC_MINISBLACK, .compression = COMPRESSION_ADOBE_DEFLATE, .predictor = 3, .tile = 16),
    L (.name = "gray 8-bit, PackBits", .bits = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
       .compression = COMPRESSION_PACKBITS),
    L (.name = "RGB 8-bit, LZMA", .bits = 8, .spp = 3, .photometric = PHOTOMETRIC_RGB, .compression = COMPRESSION_LZMA),
    L (.name = "gray 16-bit, ZSTD", .bits = 16, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
       .compression = COMPRESSION_ZSTD),
    L (.name = "RGB 8-bit, WebP lossless", .bits = 8, .spp = 3, .photometric = PHOTOMETRIC_RGB,
       .compression = COMPRESSION_WEBP),
    L (.name = "gray 8-bit, JPEG", .bits = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
       .compression = COMPRESSION_JPEG, .rows_per_strip = 16, .lossy = true),
    L (.name = "RGB 8-bit, JPEG", .bits = 8, .spp = 3, .photometric = PHOTOMETRIC_RGB, .compression = COMPRESSION_JPEG,
       .rows_per_strip = 16, .lossy = true),
    L (.name = "gray 16-bit, BigTIFF", .bits = 16, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK, .mode = "w8"),
    L (.name = "RGB 8-bit, BigTIFF big-endian, tiles, Deflate", .bits = 8, .spp = 3, .photometric = PHOTOMETRIC_RGB,
       .compression = COMPRESSION_ADOBE_DEFLATE, .tile = 16, .mode = "w8b"),
  };
  const int width = 45, height = 37;

  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    {
      const Layout *l = &layouts[i];
      const char *path = temp_path ("layout.tif");
      EsImage image = { 0 };
      EsError error = { 0 };
      double worst = 0;
      bool ok;

      if (l->compression && !TIFFIsCODECConfigured (l->compression))
        {
          tap_skip ("this libtiff lacks the codec", l->name);
          continue;
        }
      ok = write_layout (path, l, width, height, 1);
      if (!tap_ok (ok, "%s: libtiff writes the test file", l->name))
        continue;
      ok = es_load_file (path, 16, &image, &error);
      ok = ok && check_page (l, &image, width, height, 0, &worst);
      if (!tap_ok (ok, "%s: read as DESIGN.md §1 says (largest difference %g%s%s)", l->name, worst, ok ? "" : ": ",
                   ok ? "" : error.message))
        tap_diag ("got %d×%d %s depth %d", image.width, image.height, es_format_name (image.format), image.depth);
      es_image_clear (&image);
    }
}

/* A one-row TIFF of n pixels, spp samples of `bits` each, as `row` holds them. */
static bool
write_row (const char *path, uint16_t bits, uint16_t format, uint16_t spp, uint16_t photometric, const void *row, int n)
{
  TIFF *tif = TIFFOpen (path, "w");
  bool ok = tif != NULL;

  if (ok)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (uint32_t) n);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 1u);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, bits);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, spp);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, format);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, photometric);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 1u);
      ok = TIFFWriteScanline (tif, (void *) row, 0, 0) >= 0 && TIFFWriteDirectory (tif);
      TIFFClose (tif);
    }
  return ok;
}

/* The float definition on known values: finite min..max to 0..65535,
 * rounded half up, or to 1..65535 with NaN at 0 when there is NaN; −∞ and
 * +∞ to the ends of the finite range; NaN and infinities counted, and the
 * value map gives back each finite value (value_of_first: the value of
 * out[0]'s sample). */
static void
test_float_definition (void)
{
  static const struct {
    const char *what;
    float in[8];
    uint16_t out[8];
    int n;
    const char *notice;
    uint64_t nan, infinite;
  } cases[] = {
    { "0, 1 and the halves between",
      { 0.f, 1.f, 0.5f, 0.25f, 0.75f },
      { 0, 65535, 32768, 16384, 49151 },
      5,
      NULL,
      0,
      0 },
    { "NaN at 0, the finite range at 1..65535, infinities at its ends",
      { -2.f, NAN, 2.f, INFINITY, -INFINITY, 0.f },
      { 1, 0, 65535, 65535, 1, 32768 },
      6,
      "1 NaN sample (no value), 2 infinite samples (the finite range's end)",
      1,
      2 },
    { "infinities without NaN keep 0..65535",
      { -1.f, INFINITY, -INFINITY, 1.f },
      { 0, 65535, 0, 65535 },
      4,
      "2 infinite samples (the finite range's end)",
      0,
      2 },
    { "a constant image is all 0", { 7.5f, 7.5f, 7.5f }, { 0, 0, 0 }, 3, NULL, 0, 0 },
    { "a constant image with NaN is 1 and NaN 0",
      { 7.5f, NAN, 7.5f },
      { 1, 0, 1 },
      3,
      "1 NaN sample (no value)",
      1,
      0 },
    { "only NaN is all 0", { NAN, NAN }, { 0, 0 }, 2, "2 NaN samples (no value)", 2, 0 },
    { "negative and tiny values", { -1e-30f, 1e-30f, 0.f }, { 0, 65535, 32768 }, 3, NULL, 0, 0 },
    /* Over 0..65535 a sample is its value: halves round away from zero
     * (lround), and the float just below a half rounds down. */
    { "halves round up, not to even",
      { 0.f, 0.5f, 0.49999997f, 2.5f, 3.5f, 65534.5f, 65535.f },
      { 0, 1, 0, 3, 4, 65535, 65535 },
      7,
      NULL,
      0,
      0 },
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      const char *path = temp_path ("floats.tif");
      EsImage image = { 0 };
      EsError error = { 0 };
      EsPages *pages;
      char notice_text[200] = "";
      const char *notice = NULL;
      bool ok = write_row (path, 32, SAMPLEFORMAT_IEEEFP, 1, PHOTOMETRIC_MINISBLACK, cases[i].in, cases[i].n)
                && (pages = es_pages_open (path, 16, &error)) != NULL;

      if (ok)
        {
          ok = es_pages_load (pages, 0, &image, &error);
          if (es_pages_notice (pages) != NULL)
            notice = strncpy (notice_text, es_pages_notice (pages), sizeof notice_text - 1);
          ok = ok
               && (cases[i].notice == NULL ? notice == NULL
                                           : notice != NULL && strstr (notice, cases[i].notice) == notice);
          es_pages_close (pages);
        }
      ok = ok && image.format == ES_FORMAT_U16 && image.depth == 16 && image.width == cases[i].n
           && image.meta.nan_samples == cases[i].nan && image.meta.infinite_samples == cases[i].infinite;
      for (int x = 0; ok && x < cases[i].n; x++)
        {
          uint16_t sample = ((uint16_t *) image.pixels)[x];
          double value = es_image_meta_value (&image.meta, sample);

          ok = sample == cases[i].out[x] && es_image_meta_is_nan (&image.meta, sample) == isnan (cases[i].in[x]);
          /* Every finite value comes back within half a step. */
          if (isfinite (cases[i].in[x]))
            ok = ok && fabs (value - cases[i].in[x]) <= 0.5 * image.meta.value_scale + 1e-12;
        }
      tap_ok (ok, "float input: %s (%s)", cases[i].what,
              notice             ? notice
              : error.message[0] ? error.message
                                 : "no notice");
      es_image_clear (&image);
    }
}

static void
test_read_stack (void)
{
  static const Layout l = L (.name = "stack", .bits = 16, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
                             .compression = COMPRESSION_LZW);
  const char *path = temp_path ("stack-in.tif");
  EsError error = { 0 };
  EsPages *pages;
  EsImage first = { 0 };
  bool ok = write_layout (path, &l, 21, 17, 4) && (pages = es_pages_open (path, 16, &error)) != NULL;
  bool all = ok;

  tap_ok (ok && es_pages_count (pages) == 4, "a 4-page TIFF opens as a stack of 4 pages");
  for (int p = 0; ok && p < 4; p++)
    {
      EsImage image = { 0 };
      double worst;
      int w = 0, h = 0;
      all &= es_pages_size (pages, p, &w, &h, NULL) && w == 21 && h == 17 && es_pages_load (pages, p, &image, NULL)
             && check_page (&l, &image, 21, 17, p, &worst);
      es_image_clear (&image);
    }
  tap_ok (all, "each page has its own samples, and its size is known before it is decoded");
  if (ok)
    {
      tap_ok (!es_pages_load (pages, 4, &first, &error) && error.code == ES_ERROR_INVALID,
              "a page past the last is an error (%s)", error.message);
      es_pages_close (pages);
    }
  error = (EsError){ 0 };
  ok = es_load_file (path, 16, &first, &error);
  {
    double worst;
    tap_ok (ok && check_page (&l, &first, 21, 17, 0, &worst), "es_load_file gives the first page of a stack");
  }
  es_image_clear (&first);
}

/* The same TIFF from a pipe (read into memory under the limit) and from a
 * descriptor that is not at the start of its file. */
static void
test_read_descriptors (void)
{
  static const Layout l = L (.name = "pipe", .bits = 8, .spp = 3, .photometric = PHOTOMETRIC_RGB,
                             .compression = COMPRESSION_ADOBE_DEFLATE, .tile = 16);
  const char *path = temp_path ("pipe.tif"), *shifted = temp_path ("shifted.bin");
  EsImage reference = { 0 }, image = { 0 };
  uint8_t *data = NULL;
  size_t size = 0;
  int fds[2];
  bool ok = write_layout (path, &l, 70, 33, 1) && es_load_file (path, 16, &reference, NULL);
  FILE *f = fopen (path, "rb");

  if (f != NULL)
    {
      size = file_size (path);
      data = malloc (size);
      if (data == NULL || fread (data, 1, size, f) != size)
        ok = false;
      fclose (f);
    }
  if (ok && pipe (fds) == 0)
    {
      pid_t child = fork ();
      if (child == 0)
        {
          close (fds[0]);
          _exit (write (fds[1], data, size) == (ssize_t) size ? 0 : 1);
        }
      close (fds[1]);
      ok = es_load_fd (fds[0], 16, &image, NULL) && images_equal (&reference, &image);
      close (fds[0]);
      waitpid (child, NULL, 0);
    }
  tap_ok (ok, "a TIFF from a pipe gives the same image as from its file");
  es_image_clear (&image);

  ok = data != NULL;
  if (ok && (f = fopen (shifted, "wb")) != NULL)
    {
      int fd;
      ok = fwrite ("junk!", 1, 5, f) == 5 && fwrite (data, 1, size, f) == size;
      fclose (f);
      fd = open (shifted, O_RDONLY);
      ok = ok && fd >= 0 && lseek (fd, 5, SEEK_SET) == 5 && es_load_fd (fd, 16, &image, NULL)
           && images_equal (&reference, &image);
      if (fd >= 0)
        close (fd);
    }
  tap_ok (ok, "a descriptor past the start of its file reads the TIFF from there on");
  es_image_clear (&image);

  {
    EsError error = { 0 };
    es_load_set_max_file_size (size - 1);
    ok = !es_load_file (path, 16, &image, &error) && error.code == ES_ERROR_IO && strstr (error.message, "larger than");
    es_load_set_max_file_size (0);
    tap_ok (ok, "a TIFF over the size limit is refused unread (%s)", error.message);
  }
  free (data);
  es_image_clear (&reference);
  unlink (shifted);
}

/* A classic little-endian TIFF of one 8-bit strip with these fields. */
static size_t
hostile_tiff (uint8_t *out, uint32_t width, uint32_t height, uint32_t strip_offset, uint32_t strip_bytes, uint32_t tile)
{
  uint16_t tags[12][2] = { { 256, 4 }, { 257, 4 }, { 258, 3 }, { 259, 3 }, { 262, 3 },
                           { 273, 4 }, { 277, 3 }, { 278, 4 }, { 279, 4 } };
  uint32_t values[12] = { width, height, 8, 1, 1, strip_offset, 1, height, strip_bytes };
  uint16_t n = 9;
  size_t at = 10;

  if (tile)
    {
      /* Tiles instead of strips: 322, 323 (size), 324, 325 (offsets, counts). */
      uint16_t tile_tags[4] = { 322, 323, 324, 325 };
      uint32_t tile_values[4] = { tile, tile, strip_offset, strip_bytes };
      n = 0;
      for (int i = 0; i < 9; i++)
        if (tags[i][0] != 273 && tags[i][0] != 278 && tags[i][0] != 279)
          {
            tags[n][0] = tags[i][0], tags[n][1] = tags[i][1], values[n] = values[i];
            n++;
          }
      for (int i = 0; i < 4; i++, n++)
        tags[n][0] = tile_tags[i], tags[n][1] = 4, values[n] = tile_values[i];
    }
  memcpy (out, "II*\0\x08\0\0\0", 8);
  memcpy (out + 8, &n, 2);
  for (int i = 0; i < n; i++, at += 12)
    {
      uint32_t one = 1;
      memcpy (out + at, &tags[i][0], 2);
      memcpy (out + at + 2, &tags[i][1], 2);
      memcpy (out + at + 4, &one, 4);
      memset (out + at + 8, 0, 4);
      if (tags[i][1] == 3)
        {
          uint16_t v = (uint16_t) values[i];
          memcpy (out + at + 8, &v, 2);
        }
      else
        memcpy (out + at + 8, &values[i], 4);
    }
  memset (out + at, 0, 4);
  return at + 4;
}

static void
test_hostile (void)
{
  uint8_t file[512] = { 0 };
  EsImage image = { 0 };
  EsError error = { 0 };
  size_t n;
  bool ok;

  /* 2^40 pixels claimed by a 130-byte file: refused from the header. */
  n = hostile_tiff (file, 1000000, 1000000, 200, 1u << 30, 0);
  ok = es_load_memory (file, n, 16, &image, &error);
  tap_ok (!ok && error.code == ES_ERROR_LIMIT && strstr (error.message, "over the limit"),
          "a huge claimed size is refused before anything is allocated (%s)", error.message);

  error = (EsError){ 0 };
  es_image_set_max_pixels (1000);
  n = hostile_tiff (file, 100, 11, 200, 1100, 0);
  ok = es_load_memory (file, sizeof file, 16, &image, &error);
  es_image_set_max_pixels (0);
  tap_ok (!ok && error.code == ES_ERROR_LIMIT, "the pixel budget applies to TIFF (%s)", error.message);

  error = (EsError){ 0 };
  n = hostile_tiff (file, 16, 16, 0x7ffffff0u, 256, 0);
  ok = es_load_memory (file, sizeof file, 16, &image, &error);
  tap_ok (!ok && error.code == ES_ERROR_FORMAT && strncmp (error.message, "TIFF: ", 6) == 0,
          "a strip offset past the end is an error (%s)", error.message);

  error = (EsError){ 0 };
  n = hostile_tiff (file, 16, 16, 300, 256, 0);
  ok = es_load_memory (file, 400, 16, &image, &error);
  tap_ok (!ok && error.code == ES_ERROR_FORMAT, "a truncated strip is an error (%s)", error.message);

  error = (EsError){ 0 };
  n = hostile_tiff (file, 16, 16, 300, 256, 1u << 16);
  ok = es_load_memory (file, sizeof file, 16, &image, &error);
  tap_ok (!ok && error.code == ES_ERROR_LIMIT && strstr (error.message, "tiles"),
          "a 65536×65536 tile on a 16×16 image is refused before it is allocated (%s)", error.message);

  error = (EsError){ 0 };
  n = hostile_tiff (file, 4, 4, 200, 16, 0);
  memcpy (file + n - 4, "\x08\0\0\0", 4); /* the IFD's next is itself */
  {
    EsPages *pages = es_pages_open_memory (file, sizeof file, 16, &error);
    tap_ok (pages != NULL && es_pages_count (pages) == 1, "an IFD that links to itself is one page, not a loop");
    es_pages_close (pages);
  }

  error = (EsError){ 0 };
  ok = es_load_memory ("II*\0\xff\xff\xff\x7f", 8, 16, &image, &error);
  tap_ok (!ok && error.code == ES_ERROR_FORMAT && strchr (error.message, '\n') == NULL,
          "a first IFD past the end is an error on one line (%s)", error.message);
  es_image_clear (&image);
}

/* Masks and footprints are read as cells: in where a sample as stored is
 * nonzero and not NaN, in any channel. Neither the float range mapping
 * (ones would all become 0), nor the signed offset (0 would become 128),
 * nor luma (RGB (0, 0, 1) rounds to 0) may decide. */
static void
test_read_cells (void)
{
  static const float ones[] = { 1, 1, 1, 1 }, halves[] = { 0.5f, 1, 0.5f, 1 };
  static const int8_t signed8[] = { 0, 1, -1, -128 };
  static const uint8_t rgb8[] = { 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0 };
  static const uint16_t gray16[] = { 0, 1, 65535, 0 };
  const float mixed[] = { NAN, 0.0f, 2.5f, -1.0f, INFINITY, -0.0f };
  const float rgb_floats[] = { 0, 0, NAN, 0, 0, 1e-3f, 0, 0, 0, -INFINITY, 0, 0 };
  const struct {
    const char *what;
    uint16_t bits, format, spp, photometric;
    const void *row;
    int n;
    const char *in; /* '1': in, '0': out, per pixel */
  } cases[] = {
    { "float ones", 32, SAMPLEFORMAT_IEEEFP, 1, PHOTOMETRIC_MINISBLACK, ones, 4, "1111" },
    { "float 0.5 and 1.0", 32, SAMPLEFORMAT_IEEEFP, 1, PHOTOMETRIC_MINISBLACK, halves, 4, "1111" },
    { "float NaN, 0, 2.5, -1, inf, -0", 32, SAMPLEFORMAT_IEEEFP, 1, PHOTOMETRIC_MINISBLACK, mixed, 6, "001110" },
    { "signed 8-bit 0, 1, -1, -128", 8, SAMPLEFORMAT_INT, 1, PHOTOMETRIC_MINISBLACK, signed8, 4, "0111" },
    { "16-bit 0, 1, 65535, 0", 16, SAMPLEFORMAT_UINT, 1, PHOTOMETRIC_MINISBLACK, gray16, 4, "0110" },
    { "RGB (0,0,1) (0,0,0) (1,0,0) (0,2,0)", 8, SAMPLEFORMAT_UINT, 3, PHOTOMETRIC_RGB, rgb8, 4, "1011" },
    { "float RGB (0,0,NaN) (0,0,1e-3) (0,0,0) (-inf,0,0)", 32, SAMPLEFORMAT_IEEEFP, 3, PHOTOMETRIC_RGB, rgb_floats, 4,
      "0101" },
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      const char *path = temp_path ("cells.tif");
      EsImage cells = { 0 };
      EsError error = { 0 };
      char got[16] = "";
      bool ok = write_row (path, cases[i].bits, cases[i].format, cases[i].spp, cases[i].photometric, cases[i].row,
                           cases[i].n)
                && es_load_cells (path, &cells, &error);

      for (int x = 0; ok && x < cells.width && x < 15; x++)
        got[x] = ((const uint8_t *) es_image_row (&cells, 0))[x] ? '1' : '0';
      tap_ok (ok && cells.format == ES_FORMAT_U8 && cells.width == cases[i].n && strcmp (got, cases[i].in) == 0,
              "a mask of %s reads as cells %s (%s)", cases[i].what, cases[i].in, ok ? got : error.message);
      es_image_clear (&cells);
      remove (path);
    }
}

/* The most pages a file may have, one pixel each (page p holds p mod 256),
 * written by libtiff: the pages are indexed once, so that the stack and the
 * volume read in linear time (es_tiff_page_count; PERFORMANCE.md). */
static void
test_read_many_pages (void)
{
  enum { PAGES = 65535 };
  const char *path = temp_path ("pages.tif");
  TIFF *tif = TIFFOpen (path, "w");
  bool written = tif != NULL, stack = true, volume_ok;
  EsPages *pages = NULL;
  EsImage volume = { 0 };
  EsError error = { 0 };
  char notice[256];

  for (int p = 0; written && p < PAGES; p++)
    {
      uint8_t v = (uint8_t) p;
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 1);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 1);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      written = TIFFWriteScanline (tif, &v, 0, 0) == 1 && TIFFWriteDirectory (tif);
    }
  if (tif != NULL)
    TIFFClose (tif);
  pages = written ? es_pages_open (path, 256, &error) : NULL;
  tap_ok (pages != NULL && es_pages_count (pages) == PAGES,
          "a TIFF of %d one-pixel pages opens as a stack of them (%s)", PAGES, error.message);
  if (pages == NULL)
    return;
  for (int p = 0; stack && p < PAGES; p++)
    {
      EsImage image = { 0 };
      int w = 0, h = 0;
      stack = es_pages_size (pages, p, &w, &h, &error) && w == 1 && h == 1 && es_pages_load (pages, p, &image, &error)
              && *(uint8_t *) es_image_row (&image, 0) == (uint8_t) p;
      es_image_clear (&image);
    }
  tap_ok (stack, "each of its pages reads as a stack's page, in order (%s)", error.message);
  volume_ok = es_pages_load_volume (pages, &(EsVolumeChoice){ 0 }, &volume, notice, sizeof notice, &error)
              && es_image_planes (&volume) == PAGES;
  for (int z = 0; volume_ok && z < PAGES; z++)
    volume_ok = *(uint8_t *) es_image_voxel_row (&volume, z, 0) == (uint8_t) z;
  tap_ok (volume_ok, "and as a volume of %d planes (%s)", PAGES, error.message);
  es_image_clear (&volume);
  es_pages_close (pages);
  unlink (path);
}

/* A stack cut short: the file ends where its second page's directory
 * would start, so the first page's link points past the end. Reading the
 * first page alone would pass one page for the whole stack or volume. */
static void
test_read_truncated_stack (void)
{
  enum { PAGES = 3, SIDE = 16 };
  const char *path = temp_path ("truncated.tif");
  TIFF *tif = TIFFOpen (path, "w");
  bool written = tif != NULL;
  uint8_t row[SIDE], *bytes = NULL;
  uint32_t first = 0, second = 0;
  uint16_t entries = 0;
  size_t size = 0;
  EsPages *pages;
  EsError error = { 0 };
  char expected[160];
  FILE *f;

  memset (row, 7, sizeof row);
  for (int p = 0; written && p < PAGES; p++)
    {
      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, SIDE);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, SIDE);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      for (int y = 0; written && y < SIDE; y++)
        written = TIFFWriteScanline (tif, row, (uint32_t) y, 0) == 1;
      written = written && TIFFWriteDirectory (tif);
    }
  if (tif != NULL)
    TIFFClose (tif);
  /* Little-endian classic TIFF: the header's first directory, its entry
   * count, and its link to the second, where the file is cut. */
  f = written ? fopen (path, "rb") : NULL;
  if (f != NULL)
    {
      bytes = malloc (1 << 16);
      size = bytes != NULL ? fread (bytes, 1, 1 << 16, f) : 0;
      fclose (f);
    }
  if (size >= 8)
    memcpy (&first, bytes + 4, 4);
  if (first + 2 <= size)
    memcpy (&entries, bytes + first, 2);
  if (first + 2 + 12 * (size_t) entries + 4 <= size)
    memcpy (&second, bytes + first + 2 + 12 * (size_t) entries, 4);
  if (!tap_ok (written && bytes != NULL && bytes[0] == 'I' && second > first && second < size,
               "libtiff writes a %d-page stack whose second directory follows the first", PAGES))
    {
      free (bytes);
      return;
    }
  pages = es_pages_open_memory (bytes, second, 16, &error);
  snprintf (expected, sizeof expected,
            "TIFF: page 2's directory lies at byte %u, past the end of the file (%u bytes): the file is truncated",
            second, second);
  tap_ok (pages == NULL && error.code == ES_ERROR_FORMAT && strcmp (error.message, expected) == 0,
          "a stack cut before its second page is refused as truncated, not read as one page (%s)", error.message);
  es_pages_close (pages);
  error = (EsError){ 0 };
  pages = es_pages_open_memory (bytes, size, 16, &error);
  tap_ok (pages != NULL && es_pages_count (pages) == PAGES, "the whole file reads as its %d pages (%s)", PAGES,
          error.message);
  es_pages_close (pages);
  free (bytes);
  unlink (path);
}

/* The window's decode of `path`: from its descriptor, or (from_memory)
 * from its bytes, as a file that is not local is read. */
static bool
decode_for_window (const char *path, bool sandboxed, bool from_memory, EsImage *image, char *notice, size_t notice_size,
                   EsError *error)
{
  const EsDecodeRequest request = { .levels = 16 };
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  bool ok = false;

  if (fd < 0)
    return es_error_set (error, ES_ERROR_IO, "%s", strerror (errno));
  if (from_memory)
    {
      uint8_t bytes[4096];
      const ssize_t size = read (fd, bytes, sizeof bytes);

      ok = size > 0 && (size_t) size < sizeof bytes
           && es_decode_memory (bytes, (size_t) size, sandboxed, &request, image, notice, notice_size, error);
    }
  else
    ok = sandboxed ? es_sandbox_decode_fd (fd, &request, image, notice, notice_size, error)
                   : es_decode_fd (fd, &request, image, notice, notice_size, error);
  close (fd);
  return ok;
}

/* A stack whose pages make no volume (here a second page of another size,
 * as a thumbnail is): the window's decode shows its first page and says
 * why, in this process and in the sandbox alike, from a local file and
 * from the bytes of a remote one; a stack of alike pages is still a
 * volume. */
static void
test_decode_unlike_pages (void)
{
  enum { SIDE = 16 };
  const char *path = temp_path ("unlike.tif"), *alike = temp_path ("alike.tif");
  const char *expected = "page 1 of 2 shown; page 2 is 16×8, page 1 16×16";
  uint8_t row[SIDE];
  bool written = true;

  for (int file = 0; file < 2; file++)
    {
      TIFF *tif = TIFFOpen (file == 0 ? path : alike, "w");

      written = written && tif != NULL;
      for (int p = 0; written && p < 2; p++)
        {
          const int height = file == 0 && p == 1 ? SIDE / 2 : SIDE;

          TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, SIDE);
          TIFFSetField (tif, TIFFTAG_IMAGELENGTH, height);
          TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
          TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
          for (int y = 0; written && y < height; y++)
            {
              memset (row, 10 * p + y, sizeof row);
              written = TIFFWriteScanline (tif, row, (uint32_t) y, 0) == 1;
            }
          written = written && TIFFWriteDirectory (tif);
        }
      if (tif != NULL)
        TIFFClose (tif);
    }
  for (int mode = 0; mode < 4; mode++)
    {
      const bool sandboxed = mode & 1, from_memory = mode & 2;
      const char *reason = NULL;
      char how[64];
      EsImage image = { 0 }, volume = { 0 };
      EsError error = { 0 };
      char notice[256] = "", volume_notice[256] = "";
      bool ok;

      snprintf (how, sizeof how, "%s, %s", sandboxed ? "sandboxed" : "in this process",
                from_memory ? "from memory" : "from a file");
      if (sandboxed && !es_sandbox_available (&reason))
        {
          char what[128];

          snprintf (what, sizeof what, "%s: the first of unlike pages, and alike ones as a volume", how);
          tap_skip (reason, what);
          continue;
        }
      ok = written && decode_for_window (path, sandboxed, from_memory, &image, notice, sizeof notice, &error);
      tap_ok (ok && es_image_planes (&image) == 1 && image.width == SIDE && image.height == SIDE
                && *(uint8_t *) es_image_row (&image, 3) == 3 && strcmp (notice, expected) == 0,
              "%s: a stack of unlike pages shows its first page and says why (%s%s)", how, notice, error.message);
      ok = written
           && decode_for_window (alike, sandboxed, from_memory, &volume, volume_notice, sizeof volume_notice, &error);
      tap_ok (ok && es_image_planes (&volume) == 2 && volume_notice[0] == '\0'
                && *(uint8_t *) es_image_voxel_row (&volume, 1, 3) == 13,
              "%s: a stack of alike pages is still a volume (%s)", how, error.message);
      es_image_clear (&image);
      es_image_clear (&volume);
    }
  unlink (path);
  unlink (alike);
}

int
main (void)
{
  if (!tiff_tests_init ())
    return 1;
  test_read_layouts ();
  test_float_definition ();
  test_read_stack ();
  test_read_many_pages ();
  test_read_truncated_stack ();
  test_decode_unlike_pages ();
  test_read_descriptors ();
  test_read_cells ();
  test_hostile ();
  tiff_tests_cleanup ();
  return tap_done ();
}

#endif
