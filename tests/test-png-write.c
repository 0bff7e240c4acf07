/* SPDX-License-Identifier: MIT */
/* Tests of the parallel PNG encoder: libpng round trips bit for bit, one valid zlib stream, libpng's filter choice, size.
 * With --samples DIR it writes sample PNGs and their expected bytes for test-png-decoders.sh (OpenCV, Pillow). */
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "es-colormap.h"
#include "es-load.h"
#include "es-png-write.h"
#include "tap.h"

/* ---- pictures ---------------------------------------------------------- */

/* A picture whose rows mix smooth gradients, flat runs and noise, so that
 * every filter wins somewhere; sample (x, y, c) depends only on its place. */
typedef struct {
  int width, height, bit_depth, channels;
  unsigned long long seed;
} Pattern;

static uint16_t
pattern_sample (const Pattern *p, int x, int y, int c)
{
  unsigned long long h = p->seed ^ ((unsigned long long) y << 32) ^ ((unsigned long long) x << 8) ^ (unsigned) c;
  uint16_t max = p->bit_depth == 8 ? 255 : 65535;

  switch ((y / 3 + c) % 4)
    {
    case 0: return (uint16_t) ((x * 7 + y * 3 + c * 50) % (max + 1));
    case 1: return (uint16_t) (x < p->width / 2 ? max / 3 : max);
    case 2: return (uint16_t) (tap_random (&h) % (max + 1u));
    default: return (uint16_t) ((x * x + y) % (max + 1));
    }
}

static size_t
row_bytes_of (const Pattern *p)
{
  return (size_t) p->width * (size_t) p->channels * (size_t) (p->bit_depth / 8);
}

static void
pattern_row (const Pattern *p, int y, uint8_t *row)
{
  uint8_t *o = row;

  for (int x = 0; x < p->width; x++)
    for (int c = 0; c < p->channels; c++)
      {
        uint16_t v = pattern_sample (p, x, y, c);
        if (p->bit_depth == 16)
          *o++ = (uint8_t) (v >> 8);
        *o++ = (uint8_t) v;
      }
}

static void
pattern_fill_rows (void *data, int y, int n, uint8_t *rows, size_t stride)
{
  for (int i = 0; i < n; i++)
    pattern_row (data, y + i, rows + (size_t) i * stride);
}

/* ---- reading back ------------------------------------------------------ */

static uint8_t *
read_file (const char *path, size_t *size)
{
  FILE *f = fopen (path, "rb");
  uint8_t *data = NULL;
  long n;

  if (!f)
    return NULL;
  if (fseek (f, 0, SEEK_END) == 0 && (n = ftell (f)) > 0 && fseek (f, 0, SEEK_SET) == 0 && (data = malloc ((size_t) n))
      && fread (data, 1, (size_t) n, f) == (size_t) n)
    *size = (size_t) n;
  else
    {
      free (data);
      data = NULL;
    }
  fclose (f);
  return data;
}

static uint32_t
be32 (const uint8_t *b)
{
  return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

/* Every IDAT's data of a PNG in memory, joined; NULL when a chunk's CRC is wrong. */
static uint8_t *
join_idat (const uint8_t *png, size_t size, size_t *joined_size)
{
  uint8_t *joined = malloc (size);
  size_t at = 8, n = 0;

  if (!joined)
    return NULL;
  while (at + 12 <= size)
    {
      uint32_t length = be32 (png + at);
      if (at + 12 + (size_t) length > size || crc32 (0, png + at + 4, length + 4) != be32 (png + at + 8 + length))
        {
          free (joined);
          return NULL;
        }
      if (memcmp (png + at + 4, "IDAT", 4) == 0)
        {
          memcpy (joined + n, png + at + 8, length);
          n += length;
        }
      at += 12 + (size_t) length;
    }
  *joined_size = n;
  return joined;
}

/* The filtered rows (filter byte first) of the zlib stream of a PNG file,
 * inflated by zlib, which checks the stream's Adler-32; NULL if it fails. */
static uint8_t *
inflate_png (const char *path, size_t expected, bool *adler_ok)
{
  size_t size = 0, idat_size = 0;
  uint8_t *png = read_file (path, &size), *idat = png ? join_idat (png, size, &idat_size) : NULL;
  uint8_t *rows = malloc (expected + 1);
  z_stream z = { 0 };
  int status = Z_DATA_ERROR;

  *adler_ok = false;
  if (idat && rows && inflateInit (&z) == Z_OK)
    {
      z.next_in = idat;
      z.avail_in = (uInt) idat_size;
      z.next_out = rows;
      z.avail_out = (uInt) expected + 1;
      status = inflate (&z, Z_FINISH);
      *adler_ok = status == Z_STREAM_END && z.total_out == expected && z.avail_in == 0;
      inflateEnd (&z);
    }
  free (png);
  free (idat);
  if (!*adler_ok)
    {
      free (rows);
      return NULL;
    }
  return rows;
}

/* libpng's decode of the file, row by row, against the pattern; also its text. */
static bool
libpng_matches (const char *path, const Pattern *p, const EsPngText *text, int n_text, char *why, size_t why_size)
{
  FILE *f = fopen (path, "rb");
  png_structp png = NULL;
  png_infop info = NULL;
  size_t n = row_bytes_of (p);
  uint8_t *row = malloc (n), *expected = malloc (n);
  bool ok = false;
  png_textp chunks;
  int n_chunks = 0;

  snprintf (why, why_size, "cannot open");
  if (!f || !row || !expected)
    goto done;
  png = png_create_read_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  info = png ? png_create_info_struct (png) : NULL;
  if (!info)
    goto done;
  if (setjmp (png_jmpbuf (png)))
    {
      snprintf (why, why_size, "libpng failed");
      ok = false;
      goto done;
    }
  png_set_user_limits (png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  png_init_io (png, f);
  png_read_info (png, info);
  if ((int) png_get_image_width (png, info) != p->width || (int) png_get_image_height (png, info) != p->height
      || png_get_bit_depth (png, info) != p->bit_depth
      || png_get_color_type (png, info) != (p->channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY))
    {
      snprintf (why, why_size, "header differs");
      goto done;
    }
  for (int y = 0; y < p->height; y++)
    {
      png_read_row (png, row, NULL);
      pattern_row (p, y, expected);
      if (memcmp (row, expected, n) != 0)
        {
          snprintf (why, why_size, "row %d differs", y);
          goto done;
        }
    }
  png_read_end (png, info);
  png_get_text (png, info, &chunks, &n_chunks);
  if (n_chunks != n_text)
    {
      snprintf (why, why_size, "%d text chunks, expected %d", n_chunks, n_text);
      goto done;
    }
  for (int i = 0; i < n_text; i++)
    if (strcmp (chunks[i].key, text[i].key) != 0 || strcmp (chunks[i].text, text[i].value) != 0)
      {
        snprintf (why, why_size, "text chunk %d differs", i);
        goto done;
      }
  ok = true;

done:
  png_destroy_read_struct (&png, &info, NULL);
  if (f)
    fclose (f);
  free (row);
  free (expected);
  return ok;
}

/* ---- libpng's own encoding, for the filter choice and the size ---------- */

static bool
libpng_write (const char *path, const EsPngPicture *p, int level)
{
  FILE *f = fopen (path, "wb");
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  uint8_t *row = malloc ((size_t) p->width * (size_t) p->channels * (size_t) (p->bit_depth / 8));
  bool ok = false;

  if (f && info && row && !setjmp (png_jmpbuf (png)))
    {
      png_init_io (png, f);
      png_set_compression_level (png, level);
      png_set_IHDR (png, info, (png_uint_32) p->width, (png_uint_32) p->height, p->bit_depth,
                    p->channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                    PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
      png_write_info (png, info);
      for (int y = 0; y < p->height; y++)
        {
          p->fill_rows (p->data, y, 1, row, 0);
          png_write_row (png, row);
        }
      png_write_end (png, info);
      ok = true;
    }
  png_destroy_write_struct (&png, &info);
  if (f)
    fclose (f);
  free (row);
  return ok;
}

static EsPngPicture
pattern_picture (const Pattern *p, EsCompression compression, int band_rows)
{
  return (EsPngPicture){
    .width = p->width,
    .height = p->height,
    .bit_depth = p->bit_depth,
    .channels = p->channels,
    .compression = compression,
    .band_rows = band_rows,
    .fill_rows = pattern_fill_rows,
    .data = (void *) p,
  };
}

static long
file_size (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 ? (long) st.st_size : -1;
}

/* ---- the tests ---------------------------------------------------------- */

static char dir[] = "/tmp/es-test-png-write-XXXXXX";

static void
test_round_trips (unsigned long long seed)
{
  /* Awkward sizes: one pixel, one row, one column, odd sides, a band of one
   * row, one band for the whole picture, bands that do not divide it. */
  static const struct {
    int width, height, band_rows;
  } sizes[] = {
    { 1, 1, 0 },     { 1, 1, 1 },     { 1, 37, 1 },    { 1, 37, 0 },    { 37, 1, 0 },   { 1000, 1, 0 },
    { 5, 7, 1 },     { 5, 7, 2 },     { 5, 7, 7 },     { 5, 7, 100 },   { 129, 67, 0 }, { 129, 67, 1 },
    { 129, 67, 13 }, { 129, 67, 67 }, { 700, 900, 0 }, { 700, 900, 7 }, { 3001, 5, 2 },
  };
  static const EsPngText text[] = { { "Software", "Entroscope" }, { "Operation", "entropy" } };
  char path[PATH_MAX];
  int tried = 0, passed = 0;

  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int kind = 0; kind < 4; kind++)
      for (int c = 0; c < ES_N_COMPRESSIONS; c++)
        {
          Pattern p = { sizes[i].width, sizes[i].height, kind & 1 ? 16 : 8, kind & 2 ? 3 : 1, seed + i };
          size_t filtered_size = (size_t) p.height * (row_bytes_of (&p) + 1);
          EsError error = { 0 };
          char why[600] = "";
          bool adler_ok = false, ok;
          uint8_t *rows;

          snprintf (path, sizeof path, "%s/rt.png", dir);
          EsPngPicture picture = pattern_picture (&p, (EsCompression) c, sizes[i].band_rows);

          picture.text = text;
          picture.n_text = 2;
          ok = es_png_write (path, &picture, &error);
          if (!ok)
            snprintf (why, sizeof why, "not written: %s", error.message);
          ok = ok && libpng_matches (path, &p, text, 2, why, sizeof why);
          rows = ok ? inflate_png (path, filtered_size, &adler_ok) : NULL;
          if (ok && !adler_ok)
            snprintf (why, sizeof why, "zlib: not one stream with a valid Adler-32");
          ok = ok && adler_ok;
          free (rows);
          tried++;
          passed += ok;
          if (!ok)
            tap_ok (false, "%d×%d, %d-bit, %d channel(s), band rows %d, %s: %s", p.width, p.height, p.bit_depth,
                    p.channels, sizes[i].band_rows, es_compression_name ((EsCompression) c), why);
        }
  tap_ok (passed == tried,
          "libpng reads %d of %d pictures back bit for bit, each one zlib stream with "
          "a valid Adler-32 (sizes 1×1 to 3001×5, 8/16-bit, gray/RGB, 1 band to one a row, every compression)",
          passed, tried);
}

/* The filter of every row is the one libpng's adaptive heuristic picks. */
static void
test_filters_match_libpng (unsigned long long seed)
{
  Pattern pictures[] = { { 300, 200, 8, 3, seed }, { 257, 99, 16, 1, seed + 1 }, { 64, 64, 8, 1, seed + 2 } };
  char ours[PATH_MAX], theirs[PATH_MAX];

  snprintf (ours, sizeof ours, "%s/ours.png", dir);
  snprintf (theirs, sizeof theirs, "%s/libpng.png", dir);
  for (size_t i = 0; i < sizeof pictures / sizeof pictures[0]; i++)
    {
      Pattern *p = &pictures[i];
      size_t n = row_bytes_of (p) + 1, expected = (size_t) p->height * n;
      EsError error = { 0 };
      bool a = false, b = false;
      uint8_t *rows_ours = NULL, *rows_libpng = NULL;
      int differ = -1;

      EsPngPicture picture = pattern_picture (p, ES_COMPRESSION_DEFAULT, 7);

      if (es_png_write (ours, &picture, &error) && libpng_write (theirs, &picture, 6))
        {
          rows_ours = inflate_png (ours, expected, &a);
          rows_libpng = inflate_png (theirs, expected, &b);
        }
      if (a && b)
        {
          differ = 0;
          for (int y = 0; y < p->height; y++)
            differ += memcmp (rows_ours + (size_t) y * n, rows_libpng + (size_t) y * n, n) != 0;
        }
      tap_ok (differ == 0, "%d×%d %d-bit %s: every row filtered as libpng filters it (%d rows differ)", p->width,
              p->height, p->bit_depth, p->channels == 3 ? "RGB" : "gray", differ);
      free (rows_ours);
      free (rows_libpng);
    }
}

static void
image_fill_rows (void *data, int y, int n, uint8_t *rows, size_t stride)
{
  const EsImage *image = data;

  for (int i = 0; i < n; i++)
    memcpy (rows + (size_t) i * stride, es_image_row (image, y + i), (size_t) image->width);
}

/* At the default compression a photograph's PNG is at most 1.15× libpng's
 * level 6 (the default's target), and fast, default and small get smaller
 * in that order. */
static void
test_sizes (void)
{
  const char *sample = getenv ("ES_SAMPLE");
  char ours[ES_N_COMPRESSIONS][PATH_MAX], theirs[PATH_MAX];
  long sizes[ES_N_COMPRESSIONS], libpng;
  EsImage image = { 0 };
  EsError error = { 0 };
  EsPngPicture picture;
  bool ok = true;

  if (!sample || !es_load_file (sample, 0, &image, &error) || image.format != ES_FORMAT_U8)
    {
      tap_skip ("no 8-bit ES_SAMPLE image", "default compression within 1.15× of libpng level 6");
      es_image_clear (&image);
      return;
    }
  picture = (EsPngPicture){ .width = image.width,
                            .height = image.height,
                            .bit_depth = 8,
                            .channels = 1,
                            .fill_rows = image_fill_rows,
                            .data = &image };
  snprintf (theirs, sizeof theirs, "%s/size-libpng.png", dir);
  ok = libpng_write (theirs, &picture, 6);
  libpng = file_size (theirs);
  for (int c = 0; c < ES_N_COMPRESSIONS; c++)
    {
      picture.compression = (EsCompression) c;
      snprintf (ours[c], sizeof ours[c], "%s/size-%s.png", dir, es_compression_name ((EsCompression) c));
      ok = ok && es_png_write (ours[c], &picture, &error);
      sizes[c] = file_size (ours[c]);
    }
  tap_ok (ok && sizes[ES_COMPRESSION_DEFAULT] <= 1.15 * (double) libpng,
          "%s: default %ld bytes ≤ 1.15 × libpng level 6 (%ld bytes)", sample, sizes[ES_COMPRESSION_DEFAULT], libpng);
  tap_ok (ok && sizes[ES_COMPRESSION_SMALL] <= sizes[ES_COMPRESSION_DEFAULT]
            && sizes[ES_COMPRESSION_DEFAULT] <= sizes[ES_COMPRESSION_FAST],
          "small %ld ≤ default %ld ≤ fast %ld bytes", sizes[ES_COMPRESSION_SMALL], sizes[ES_COMPRESSION_DEFAULT],
          sizes[ES_COMPRESSION_FAST]);
  es_image_clear (&image);
}

/* The names of the choices, both ways. */
static void
test_compression_names (void)
{
  bool ok = true;
  EsCompression c;

  for (int i = 0; i < ES_N_COMPRESSIONS; i++)
    ok = ok && es_compression_from_name (es_compression_name ((EsCompression) i), &c) && c == (EsCompression) i;
  ok = ok && !es_compression_from_name ("fastest", &c) && !es_compression_from_name ("", &c);
  es_save_set_compression (ES_COMPRESSION_SMALL);
  ok = ok && es_save_get_compression () == ES_COMPRESSION_SMALL;
  es_save_set_compression (ES_COMPRESSION_DEFAULT);
  tap_ok (ok && strcmp (es_compression_name (ES_COMPRESSION_FAST), "fast") == 0,
          "compression names fast, default, small round-trip; others are refused");
}

/* --samples DIR: PNGs for other decoders, each with NAME.raw holding its
 * rows as PNG stores them and a line "NAME WIDTH HEIGHT DEPTH CHANNELS" in
 * DIR/manifest.txt. */
static int
write_samples (const char *out)
{
  static const struct {
    int width, height, bit_depth, channels, band_rows;
  } samples[] = {
    { 1, 1, 8, 1, 0 },      { 1, 1, 16, 3, 0 },       { 1, 50, 8, 3, 1 },     { 50, 1, 16, 1, 0 },
    { 333, 211, 8, 1, 0 },  { 333, 211, 8, 3, 5 },    { 333, 211, 16, 1, 1 }, { 333, 211, 16, 3, 211 },
    { 1024, 700, 8, 3, 0 }, { 2048, 1500, 16, 1, 0 },
  };
  char path[PATH_MAX];
  FILE *manifest;

  snprintf (path, sizeof path, "%s/manifest.txt", out);
  manifest = fopen (path, "w");
  if (!manifest)
    return 1;
  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
    for (int c = 0; c < ES_N_COMPRESSIONS; c++)
      {
        Pattern p = { samples[i].width, samples[i].height, samples[i].bit_depth, samples[i].channels, i };
        EsPngPicture picture = pattern_picture (&p, (EsCompression) c, samples[i].band_rows);
        size_t n = row_bytes_of (&p);
        uint8_t *row = malloc (n);
        EsError error = { 0 };
        char name[64];
        FILE *raw;

        snprintf (name, sizeof name, "s%zu-%s", i, es_compression_name ((EsCompression) c));
        snprintf (path, sizeof path, "%s/%s.png", out, name);
        if (!row || !es_png_write (path, &picture, &error))
          return 1;
        snprintf (path, sizeof path, "%s/%s.raw", out, name);
        raw = fopen (path, "wb");
        for (int y = 0; raw && y < p.height; y++)
          {
            pattern_row (&p, y, row);
            fwrite (row, 1, n, raw);
          }
        if (!raw || fclose (raw) != 0)
          return 1;
        free (row);
        fprintf (manifest, "%s %d %d %d %d\n", name, p.width, p.height, p.bit_depth, p.channels);
      }
  /* Heatmaps, which are palette PNGs: their RGB is es_render_heatmap's. */
  for (int i = 0; i < 3; i++)
    {
      static const int sides[3][2] = { { 1, 1 }, { 333, 211 }, { 1024, 700 } };
      int w = sides[i][0], h = sides[i][1];
      EsColorScale scale = { .map = (EsColormap) (i % ES_N_COLORMAPS), .reversed = i == 1, .lo = 0, .hi = 3 };
      EsValueInfo info = { .operation = "entropy", .units = "nats", .unit_scale = 1 };
      EsImage values = { 0 };
      EsError error = { 0 };
      uint8_t *rgb = malloc ((size_t) w * h * 3);
      unsigned long long seed = (unsigned long long) i + 1;
      char name[64];
      FILE *raw;

      if (!rgb || !es_image_alloc (&values, w, h, ES_FORMAT_F32, 0, &error))
        return 1;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          ((float *) es_image_row (&values, y))[x] = (float) (tap_random (&seed) % 3100) / 1000.0f;
      es_render_heatmap (&values, &scale, rgb, (size_t) w * 3);
      snprintf (name, sizeof name, "heatmap%d", i);
      snprintf (path, sizeof path, "%s/%s.png", out, name);
      if (!es_save_heatmap_png (path, &values, &scale, false, &info, &error))
        return 1;
      snprintf (path, sizeof path, "%s/%s.raw", out, name);
      raw = fopen (path, "wb");
      if (!raw || fwrite (rgb, 3, (size_t) w * h, raw) != (size_t) w * h || fclose (raw) != 0)
        return 1;
      fprintf (manifest, "%s %d %d 8 3\n", name, w, h);
      es_image_clear (&values);
      free (rgb);
    }
  return fclose (manifest) == 0 ? 0 : 1;
}

/* A heatmap of U8 values in the gray map is written as 8-bit gray, one
 * sample a pixel, each one the R, G and B that es_render_heatmap gives it;
 * F32 values (which may hold no-data NaN) and colorbars stay RGB. U16
 * values keep 16 bits (test_gray16_heatmap). */
static void
test_gray_heatmap (unsigned long long seed)
{
  static const EsFormat formats[] = { ES_FORMAT_U8, ES_FORMAT_F32 };
  char path[PATH_MAX];

  snprintf (path, sizeof path, "%s/gray.png", dir);
  for (int f = 0; f < 2; f++)
    for (int reversed = 0; reversed < 2; reversed++)
      {
        EsImage values = { 0 };
        EsColorScale scale = { ES_COLORMAP_GRAY, reversed, 3, formats[f] == ES_FORMAT_U8 ? 250 : 60000 };
        EsError error = { 0 };
        png_image read = { .version = PNG_IMAGE_VERSION };
        int width = 97 + f, height = 61;
        uint8_t *expected = malloc (3 * (size_t) width * height), *got = NULL;
        bool ok = es_image_alloc (&values, width, height, formats[f], formats[f] == ES_FORMAT_U8 ? 8 : 16, &error);

        for (int y = 0; ok && y < height; y++)
          for (int x = 0; x < width; x++)
            {
              unsigned v = (unsigned) (tap_random (&seed) % (formats[f] == ES_FORMAT_U8 ? 256 : 65536));
              if (formats[f] == ES_FORMAT_U8)
                ((uint8_t *) es_image_row (&values, y))[x] = (uint8_t) v;
              else if (formats[f] == ES_FORMAT_U16)
                ((uint16_t *) es_image_row (&values, y))[x] = (uint16_t) v;
              else
                ((float *) es_image_row (&values, y))[x] = (float) v;
            }
        ok = ok && expected && es_save_heatmap_png (path, &values, &scale, false, NULL, &error);
        if (ok)
          {
            es_render_heatmap (&values, &scale, expected, 3 * (size_t) width);
            ok = png_image_begin_read_from_file (&read, path) && read.width == (png_uint_32) width;
            bool gray = ok && (read.format & PNG_FORMAT_FLAG_COLOR) == 0;
            read.format = PNG_FORMAT_RGB;
            got = ok ? malloc (PNG_IMAGE_SIZE (read)) : NULL;
            ok = ok && got && png_image_finish_read (&read, NULL, got, 0, NULL)
                 && memcmp (got, expected, 3 * (size_t) width * height) == 0 && gray == (formats[f] != ES_FORMAT_F32);
          }
        tap_ok (ok, "%s heatmap in the gray map%s: %s, the same pixels as the RGB rendering%s",
                es_format_name (formats[f]), reversed ? " (reversed)" : "",
                formats[f] == ES_FORMAT_F32 ? "RGB" : "8-bit gray", error.message[0] ? error.message : "");
        png_image_free (&read);
        free (got);
        free (expected);
        es_image_clear (&values);
      }
}

/* A heatmap of U16 values (a 16-bit CLAHE result) in the gray map is a
 * 16-bit gray PNG: over 0..65535 the values themselves, over another
 * range round ((v − lo) · 65535 / (hi − lo)) clamped, reversed as
 * 65535 − that. */
static void
test_gray16_heatmap (unsigned long long seed)
{
  static const EsColorScale scales[] = {
    { ES_COLORMAP_GRAY, false, 0, 65535 },
    { ES_COLORMAP_GRAY, true, 0, 65535 },
    { ES_COLORMAP_GRAY, false, 300, 60000 },
  };
  char path[PATH_MAX];

  snprintf (path, sizeof path, "%s/gray16.png", dir);
  for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
    {
      const EsColorScale *scale = &scales[i];
      EsImage values = { 0 }, read = { 0 };
      EsError error = { 0 };
      int width = 131, height = 37, wrong = 0;
      bool ok = es_image_alloc (&values, width, height, ES_FORMAT_U16, 16, &error);

      for (int y = 0; ok && y < height; y++)
        for (int x = 0; x < width; x++)
          ((uint16_t *) es_image_row (&values, y))[x] = (uint16_t) (tap_random (&seed) % 65536);
      ok = ok && es_save_heatmap_png (path, &values, scale, false, NULL, &error)
           && es_load_file (path, 0, &read, &error) && read.format == ES_FORMAT_U16 && read.depth == 16;
      for (int y = 0; ok && y < height; y++)
        for (int x = 0; x < width; x++)
          {
            double t = (((const uint16_t *) es_image_row (&values, y))[x] - scale->lo) * 65535.0
                       / (scale->hi - scale->lo);
            unsigned expected = (unsigned) (fmin (fmax (t, 0.0), 65535.0) + 0.5);

            expected = scale->reversed ? 65535 - expected : expected;
            wrong += ((const uint16_t *) es_image_row (&read, y))[x] != expected;
          }
      tap_ok (ok && wrong == 0, "u16 heatmap in the gray map over %g..%g%s: 16-bit gray, %d samples wrong%s%s",
              scale->lo, scale->hi, scale->reversed ? " (reversed)" : "", wrong, error.message[0] ? ": " : "",
              error.message);
      es_image_clear (&values);
      es_image_clear (&read);
    }
}

int
main (int argc, char **argv)
{
  unsigned long long seed;

  if (argc == 3 && strcmp (argv[1], "--samples") == 0)
    return write_samples (argv[2]);
  if (!mkdtemp (dir))
    {
      printf ("Bail out! cannot create %s: %s\n", dir, strerror (errno));
      return 1;
    }
  seed = tap_seed ();
  test_round_trips (seed);
  test_filters_match_libpng (seed);
  test_sizes ();
  test_compression_names ();
  test_gray_heatmap (seed);
  test_gray16_heatmap (seed);
  {
    char cmd[PATH_MAX + 16];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system (cmd) != 0)
      tap_diag ("could not remove %s", dir);
  }
  return tap_done ();
}
