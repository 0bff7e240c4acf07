/* SPDX-License-Identifier: MIT */
/* Tests of PNG decoding: PngSuite, the sample images, truncated, damaged and oversized PNGs. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "es-load-internal.h"
#include "es-text-matrix-internal.h"
#include "tap.h"
#include "test-load-common.h"

/* Expected decodes of every valid PngSuite file: size, depth and the FNV-1a
 * hash of the gray samples (U8 bytes, or U16 as little-endian pairs). They
 * come from an independent pure-Python decoder (zlib, unfiltering, Adam7 and
 * palette expansion written from the PNG specification, BT.709 as
 * floor(x - floor(x) >= 0.5) in float64 with the same sum order), itself
 * checked against OpenCV's stored values for every 8- and 16-bit file. */
static const struct {
  const char *name;
  int width, height, depth;
  unsigned long long hash;
} pngsuite[] = {
  { "basi0g01.png", 32, 32, 1, 0xa32e0fd3124042ebull },  { "basi0g02.png", 32, 32, 2, 0x9b69b0f99f62d925ull },
  { "basi0g04.png", 32, 32, 4, 0x710716c04ddecca5ull },  { "basi0g08.png", 32, 32, 8, 0x41d4d925c29e1249ull },
  { "basi0g16.png", 32, 32, 16, 0x4f09e1627512967dull }, { "basi2c08.png", 32, 32, 8, 0xa02b503ca4d56747ull },
  { "basi2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull }, { "basi3p01.png", 32, 32, 8, 0x15f89dc065252b25ull },
  { "basi3p02.png", 32, 32, 8, 0xfc0392aa7dd80625ull },  { "basi3p04.png", 32, 32, 8, 0x45001bc1f05a0905ull },
  { "basi3p08.png", 32, 32, 8, 0xa653b6ea4de0c1edull },  { "basi4a08.png", 32, 32, 8, 0xa7e1a600e2c57f05ull },
  { "basi4a16.png", 32, 32, 16, 0xd74f8a4e1b9f87d5ull }, { "basi6a08.png", 32, 32, 8, 0x6cc0d4441caea205ull },
  { "basi6a16.png", 32, 32, 16, 0x1e984853a35b0ea8ull }, { "basn0g01.png", 32, 32, 1, 0xa32e0fd3124042ebull },
  { "basn0g02.png", 32, 32, 2, 0x9b69b0f99f62d925ull },  { "basn0g04.png", 32, 32, 4, 0x710716c04ddecca5ull },
  { "basn0g08.png", 32, 32, 8, 0x41d4d925c29e1249ull },  { "basn0g16.png", 32, 32, 16, 0x4f09e1627512967dull },
  { "basn2c08.png", 32, 32, 8, 0xa02b503ca4d56747ull },  { "basn2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull },
  { "basn3p01.png", 32, 32, 8, 0x15f89dc065252b25ull },  { "basn3p02.png", 32, 32, 8, 0xfc0392aa7dd80625ull },
  { "basn3p04.png", 32, 32, 8, 0x45001bc1f05a0905ull },  { "basn3p08.png", 32, 32, 8, 0xa653b6ea4de0c1edull },
  { "basn4a08.png", 32, 32, 8, 0xa7e1a600e2c57f05ull },  { "basn4a16.png", 32, 32, 16, 0xd74f8a4e1b9f87d5ull },
  { "basn6a08.png", 32, 32, 8, 0x6cc0d4441caea205ull },  { "basn6a16.png", 32, 32, 16, 0x1e984853a35b0ea8ull },
  { "bgai4a08.png", 32, 32, 8, 0xa7e1a600e2c57f05ull },  { "bgai4a16.png", 32, 32, 16, 0xd74f8a4e1b9f87d5ull },
  { "bgan6a08.png", 32, 32, 8, 0x6cc0d4441caea205ull },  { "bgan6a16.png", 32, 32, 16, 0x1e984853a35b0ea8ull },
  { "bgbn4a08.png", 32, 32, 8, 0xa7e1a600e2c57f05ull },  { "bggn4a16.png", 32, 32, 16, 0xd74f8a4e1b9f87d5ull },
  { "bgwn6a08.png", 32, 32, 8, 0x6cc0d4441caea205ull },  { "bgyn6a16.png", 32, 32, 16, 0x1e984853a35b0ea8ull },
  { "ccwn2c08.png", 32, 32, 8, 0xc4ad7956079d6a85ull },  { "ccwn3p08.png", 32, 32, 8, 0x1519fcfcaedc2fa2ull },
  { "cdfn2c08.png", 8, 32, 8, 0xa5b9f2520a825b84ull },   { "cdhn2c08.png", 32, 8, 8, 0xce771f30888b2d79ull },
  { "cdsn2c08.png", 8, 8, 8, 0x2ee62c656b4e8965ull },    { "cdun2c08.png", 32, 32, 8, 0x20221e3b930f8405ull },
  { "ch1n3p04.png", 32, 32, 8, 0x45001bc1f05a0905ull },  { "ch2n3p08.png", 32, 32, 8, 0xa653b6ea4de0c1edull },
  { "cm0n0g04.png", 32, 32, 4, 0xa6ea9a0d0c8143fcull },  { "cm7n0g04.png", 32, 32, 4, 0xa6ea9a0d0c8143fcull },
  { "cm9n0g04.png", 32, 32, 4, 0xa6ea9a0d0c8143fcull },  { "cs3n2c16.png", 32, 32, 16, 0x9c062eb788a9a925ull },
  { "cs3n3p08.png", 32, 32, 8, 0x83fa4e51705bae05ull },  { "cs5n2c08.png", 32, 32, 8, 0xf87980ee45b96c25ull },
  { "cs5n3p08.png", 32, 32, 8, 0xf87980ee45b96c25ull },  { "cs8n2c08.png", 32, 32, 8, 0x5bbc1e6b1e08eac5ull },
  { "cs8n3p08.png", 32, 32, 8, 0x5bbc1e6b1e08eac5ull },  { "ct0n0g04.png", 32, 32, 4, 0xa6ea9a0d0c8143fcull },
  { "ct1n0g04.png", 32, 32, 4, 0xa6ea9a0d0c8143fcull },  { "cten0g04.png", 32, 32, 4, 0x25ec8ca5a0240625ull },
  { "ctfn0g04.png", 32, 32, 4, 0x38d901d4d17f8ce5ull },  { "ctgn0g04.png", 32, 32, 4, 0xe69c4cab37616c65ull },
  { "cthn0g04.png", 32, 32, 4, 0xeb6d21097e1a47d5ull },  { "ctjn0g04.png", 32, 32, 4, 0x89cf3e87ce32f7d5ull },
  { "ctzn0g04.png", 32, 32, 4, 0xa6ea9a0d0c8143fcull },  { "exif2c08.png", 32, 32, 8, 0x028c818226226ff6ull },
  { "f00n0g08.png", 32, 32, 8, 0xb5bb976a59853b3bull },  { "f00n2c08.png", 32, 32, 8, 0xae0d2441e178ee38ull },
  { "f01n0g08.png", 32, 32, 8, 0x5e2f84caebe41c4aull },  { "f01n2c08.png", 32, 32, 8, 0xdb66cfd8eb5bd9bdull },
  { "f02n0g08.png", 32, 32, 8, 0x4d83713915f5dbfcull },  { "f02n2c08.png", 32, 32, 8, 0xedf25fc8e34171d1ull },
  { "f03n0g08.png", 32, 32, 8, 0xd2fd33ce29553aceull },  { "f03n2c08.png", 32, 32, 8, 0xcb5ab5299e9a7ffbull },
  { "f04n0g08.png", 32, 32, 8, 0x9b40f57498e0fa73ull },  { "f04n2c08.png", 32, 32, 8, 0x66fc0030d3aede9bull },
  { "f99n0g04.png", 32, 32, 4, 0x1a91f15a738e08e1ull },  { "g03n0g16.png", 32, 32, 16, 0x3ee43139592c661dull },
  { "g03n2c08.png", 32, 32, 8, 0x31089d825ed83f65ull },  { "g03n3p04.png", 32, 32, 8, 0xbf0a864fd1d79d89ull },
  { "g04n0g16.png", 32, 32, 16, 0x773dcc4c789fc6a7ull }, { "g04n2c08.png", 32, 32, 8, 0xc543a52662f1c89bull },
  { "g04n3p04.png", 32, 32, 8, 0xb129767bf87c29d3ull },  { "g05n0g16.png", 32, 32, 16, 0xd04f68ac27346541ull },
  { "g05n2c08.png", 32, 32, 8, 0x0279be9bc9cd3165ull },  { "g05n3p04.png", 32, 32, 8, 0xd7f6d1eedd24a8bbull },
  { "g07n0g16.png", 32, 32, 16, 0x72b49a0c81e74847ull }, { "g07n2c08.png", 32, 32, 8, 0x1943ac526d370a8eull },
  { "g07n3p04.png", 32, 32, 8, 0xe36a894dc68239a9ull },  { "g10n0g16.png", 32, 32, 16, 0x70114ee9bad059f1ull },
  { "g10n2c08.png", 32, 32, 8, 0x3114784536e06326ull },  { "g10n3p04.png", 32, 32, 8, 0xbfe8ae0cf2807998ull },
  { "g25n0g16.png", 32, 32, 16, 0xfc26ef1f179e824dull }, { "g25n2c08.png", 32, 32, 8, 0x382ec4070f1083a4ull },
  { "g25n3p04.png", 32, 32, 8, 0xd0e26ac19a0de7bdull },  { "oi1n0g16.png", 32, 32, 16, 0x4f09e1627512967dull },
  { "oi1n2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull }, { "oi2n0g16.png", 32, 32, 16, 0x4f09e1627512967dull },
  { "oi2n2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull }, { "oi4n0g16.png", 32, 32, 16, 0x4f09e1627512967dull },
  { "oi4n2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull }, { "oi9n0g16.png", 32, 32, 16, 0x4f09e1627512967dull },
  { "oi9n2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull }, { "pp0n2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull },
  { "pp0n6a08.png", 32, 32, 8, 0xa02b503ca4d56747ull },  { "ps1n0g08.png", 32, 32, 8, 0x41d4d925c29e1249ull },
  { "ps1n2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull }, { "ps2n0g08.png", 32, 32, 8, 0x41d4d925c29e1249ull },
  { "ps2n2c16.png", 32, 32, 16, 0xfb49dd7bd2791b18ull }, { "s01i3p01.png", 1, 1, 8, 0xaf63cf4c8601d675ull },
  { "s01n3p01.png", 1, 1, 8, 0xaf63cf4c8601d675ull },    { "s02i3p01.png", 2, 2, 8, 0x770446fe7c87fe29ull },
  { "s02n3p01.png", 2, 2, 8, 0x770446fe7c87fe29ull },    { "s03i3p01.png", 3, 3, 8, 0x238ea1be0b4335c2ull },
  { "s03n3p01.png", 3, 3, 8, 0x238ea1be0b4335c2ull },    { "s04i3p01.png", 4, 4, 8, 0xbac896b72ddb7ae5ull },
  { "s04n3p01.png", 4, 4, 8, 0xbac896b72ddb7ae5ull },    { "s05i3p02.png", 5, 5, 8, 0xa046913eb3cae6e4ull },
  { "s05n3p02.png", 5, 5, 8, 0xa046913eb3cae6e4ull },    { "s06i3p02.png", 6, 6, 8, 0x3304433bd17a6cc1ull },
  { "s06n3p02.png", 6, 6, 8, 0x3304433bd17a6cc1ull },    { "s07i3p02.png", 7, 7, 8, 0xa743c28d0cea7a46ull },
  { "s07n3p02.png", 7, 7, 8, 0xa743c28d0cea7a46ull },    { "s08i3p02.png", 8, 8, 8, 0xf4d5bfb375229ad1ull },
  { "s08n3p02.png", 8, 8, 8, 0xf4d5bfb375229ad1ull },    { "s09i3p02.png", 9, 9, 8, 0x644cd5a6127bd6b9ull },
  { "s09n3p02.png", 9, 9, 8, 0x644cd5a6127bd6b9ull },    { "s32i3p04.png", 32, 32, 8, 0x3465093c4154622cull },
  { "s32n3p04.png", 32, 32, 8, 0x3465093c4154622cull },  { "s33i3p04.png", 33, 33, 8, 0x998a5018917f35e7ull },
  { "s33n3p04.png", 33, 33, 8, 0x998a5018917f35e7ull },  { "s34i3p04.png", 34, 34, 8, 0x49d4f3457aefd979ull },
  { "s34n3p04.png", 34, 34, 8, 0x49d4f3457aefd979ull },  { "s35i3p04.png", 35, 35, 8, 0x03e1302ffcecb822ull },
  { "s35n3p04.png", 35, 35, 8, 0x03e1302ffcecb822ull },  { "s36i3p04.png", 36, 36, 8, 0xb74052c87abfbe68ull },
  { "s36n3p04.png", 36, 36, 8, 0xb74052c87abfbe68ull },  { "s37i3p04.png", 37, 37, 8, 0x6a60afd3cc5b1336ull },
  { "s37n3p04.png", 37, 37, 8, 0x6a60afd3cc5b1336ull },  { "s38i3p04.png", 38, 38, 8, 0xac6f765b00d3f8c4ull },
  { "s38n3p04.png", 38, 38, 8, 0xac6f765b00d3f8c4ull },  { "s39i3p04.png", 39, 39, 8, 0xc0d3180f4b041bdeull },
  { "s39n3p04.png", 39, 39, 8, 0xc0d3180f4b041bdeull },  { "s40i3p04.png", 40, 40, 8, 0x1ff6dc80fa0668f5ull },
  { "s40n3p04.png", 40, 40, 8, 0x1ff6dc80fa0668f5ull },  { "tbbn0g04.png", 32, 32, 4, 0x5bf34e6d2cd3b6ecull },
  { "tbbn2c16.png", 32, 32, 16, 0x2e1a0d90e59146bdull }, { "tbbn3p08.png", 32, 32, 8, 0xfb8cde990b2dc68full },
  { "tbgn2c16.png", 32, 32, 16, 0x2e1a0d90e59146bdull }, { "tbgn3p08.png", 32, 32, 8, 0xfb8cde990b2dc68full },
  { "tbrn2c08.png", 32, 32, 8, 0x695013022efd1e34ull },  { "tbwn0g16.png", 32, 32, 16, 0x980eb102ccd2310aull },
  { "tbwn3p08.png", 32, 32, 8, 0xfb8cde990b2dc68full },  { "tbyn3p08.png", 32, 32, 8, 0xfb8cde990b2dc68full },
  { "tm3n3p02.png", 32, 32, 8, 0x9ef8175ff722e325ull },  { "tp0n0g08.png", 32, 32, 8, 0xb8415f3c474a13ecull },
  { "tp0n2c08.png", 32, 32, 8, 0xb5fb0fd57ae1bfb4ull },  { "tp0n3p08.png", 32, 32, 8, 0x854f5af72588880full },
  { "tp1n3p08.png", 32, 32, 8, 0xfb8cde990b2dc68full },  { "z00n2c08.png", 32, 32, 8, 0x1761493ecd4333ceull },
  { "z03n2c08.png", 32, 32, 8, 0x1761493ecd4333ceull },  { "z06n2c08.png", 32, 32, 8, 0x1761493ecd4333ceull },
  { "z09n2c08.png", 32, 32, 8, 0x1761493ecd4333ceull },
};

/* The sample images: gray as decoded by OpenCV, colour reduced with
 * floor(BT.709 + 0.5) in float64 (the same hash as above). */
static const struct {
  const char *name;
  int width, height;
  unsigned long long hash;
} samples[] = {
  { "astronaut.png", 512, 512, 0x619be37564e2dd3aull }, { "brick.png", 512, 512, 0x78416a5af038a774ull },
  { "camera.png", 512, 512, 0x15fd86556e657c04ull },    { "gravel.png", 512, 512, 0x3a1b9a622d5d1e8cull },
  { "text.png", 448, 172, 0x182334ed69980d8aull },
};

/* The .png files of a test-data folder; without corrupt ones, those whose
 * names start with 'x' (PngSuite's convention) are left out. */
static size_t
count_pngs (const char *folder, bool with_corrupt)
{
  struct dirent *entry;
  char path[1024];
  size_t count = 0;
  DIR *dir;

  snprintf (path, sizeof path, "%s/%s", testdata, folder);
  dir = opendir (path);
  while (dir != NULL && (entry = readdir (dir)) != NULL)
    {
      size_t len = strlen (entry->d_name);
      count += len > 4 && strcmp (entry->d_name + len - 4, ".png") == 0 && (with_corrupt || entry->d_name[0] != 'x');
    }
  if (dir != NULL)
    closedir (dir);
  return count;
}

static void
test_pngsuite_valid (void)
{
  size_t n = sizeof pngsuite / sizeof pngsuite[0];
  size_t listed = count_pngs ("pngsuite", false);
  char path[1024];

  tap_ok (listed == n, "the table covers all %zu valid PngSuite files (%zu in the folder)", n, listed);

  for (size_t i = 0; i < n; i++)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      bool ok;

      snprintf (path, sizeof path, "%s/pngsuite/%s", testdata, pngsuite[i].name);
      ok = es_load_file (path, 16, &image, &error);
      if (!ok)
        tap_diag ("%s: %s", pngsuite[i].name, error.message);
      else if (image.width != pngsuite[i].width || image.height != pngsuite[i].height
               || image.depth != pngsuite[i].depth || image.levels != 0
               || image.format != (pngsuite[i].depth > 8 ? ES_FORMAT_U16 : ES_FORMAT_U8)
               || image.stride != (size_t) image.width * es_format_size (image.format))
        {
          tap_diag ("%s: got %d×%d depth %d %s", pngsuite[i].name, image.width, image.height, image.depth,
                    es_format_name (image.format));
          ok = false;
        }
      else if (image_hash (&image) != pngsuite[i].hash)
        {
          tap_diag ("%s: samples differ from the reference decode", pngsuite[i].name);
          ok = false;
        }
      tap_ok (ok, "PngSuite %s decodes to the reference gray", pngsuite[i].name);
      es_image_clear (&image);
    }
}

static void
test_pngsuite_corrupt (void)
{
  struct dirent *entry;
  char path[1024];
  int count = 0;
  DIR *dir;

  snprintf (path, sizeof path, "%s/pngsuite", testdata);
  dir = opendir (path);
  if (!tap_ok (dir != NULL, "open %s", path))
    return;
  while ((entry = readdir (dir)) != NULL)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      size_t len = strlen (entry->d_name);
      bool ok;

      if (entry->d_name[0] != 'x' || len < 5 || strcmp (entry->d_name + len - 4, ".png") != 0)
        continue;
      count++;
      snprintf (path, sizeof path, "%s/pngsuite/%s", testdata, entry->d_name);
      ok = es_load_file (path, 16, &image, &error);
      tap_diag ("%s: %s", entry->d_name, error.message);
      tap_ok (!ok && error.code == ES_ERROR_FORMAT && one_line (&error) && image.pixels == NULL,
              "corrupt %s is rejected with a message", entry->d_name);
    }
  closedir (dir);
  tap_ok (count == 14, "all 14 corrupt PngSuite files were tried (%d)", count);
}

/* The sample images against OpenCV's decode, and against a second decode
 * through libpng's simplified API with the BT.709 reduction done here. */
static void
test_samples (void)
{
  size_t listed = count_pngs ("images", true);
  char path[1024];

  tap_ok (listed == sizeof samples / sizeof samples[0], "every sample image is checked (%zu in the folder)", listed);

  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
    {
      png_image simple = { .version = PNG_IMAGE_VERSION };
      EsImage image = { 0 };
      EsError error = { 0 };
      uint8_t *rgb = NULL;
      bool ok, same = true;

      snprintf (path, sizeof path, "%s/images/%s", testdata, samples[i].name);
      ok = es_load_file (path, 16, &image, &error);
      if (!ok)
        tap_diag ("%s: %s", samples[i].name, error.message);
      tap_ok (ok && image.width == samples[i].width && image.height == samples[i].height && image.format == ES_FORMAT_U8
                && image.depth == 8,
              "%s loads as %d×%d 8-bit", samples[i].name, samples[i].width, samples[i].height);
      if (!ok)
        continue;
      tap_ok (image_hash (&image) == samples[i].hash, "%s matches the OpenCV reference", samples[i].name);

      if (png_image_begin_read_from_file (&simple, path))
        {
          simple.format = PNG_FORMAT_RGB;
          rgb = malloc (PNG_IMAGE_SIZE (simple));
          if (!png_image_finish_read (&simple, NULL, rgb, 0, NULL))
            same = false;
        }
      else
        same = false;
      for (int y = 0; same && y < image.height; y++)
        for (int x = 0; x < image.width; x++)
          {
            const uint8_t *p = rgb + ((size_t) y * image.width + x) * 3;
            long expected = lround (0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]);

            if (sample_at (&image, x, y) != (uint32_t) expected)
              {
                tap_diag ("%s (%d, %d): %u, expected %ld", samples[i].name, x, y, sample_at (&image, x, y), expected);
                same = false;
                break;
              }
          }
      tap_ok (same, "%s gray is round(BT.709) of its RGB from libpng's simplified API", samples[i].name);
      png_image_free (&simple);
      free (rgb);
      es_image_clear (&image);
    }
}

/* Every prefix of a few files must be refused (only the whole file loads),
 * and random byte damage must never crash. */
static void
test_png_truncated_and_damaged (void)
{
  static const char *names[] = { "basn0g01.png", "basi2c16.png", "basi3p04.png", "basn6a16.png", "ct1n0g04.png" };
  char path[1024];

  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      uint8_t *data, *copy;
      size_t size, wrong = 0, loaded = 0;

      snprintf (path, sizeof path, "%s/pngsuite/%s", testdata, names[i]);
      if (!tap_ok (read_file (path, &data, &size), "read %s", names[i]))
        continue;
      for (size_t length = 0; length < size; length++)
        {
          EsImage image = { 0 };
          EsError error = { 0 };

          /* A private copy of exactly length bytes lets ASan see any over-read. */
          copy = malloc (length ? length : 1);
          memcpy (copy, data, length);
          if (es_load_memory (copy, length, 16, &image, &error) || !one_line (&error))
            wrong++;
          es_image_clear (&image);
          free (copy);
        }
      tap_ok (wrong == 0, "all %zu truncations of %s are rejected (%zu not)", size, names[i], wrong);

      for (int trial = 0; trial < 300; trial++)
        {
          EsImage image = { 0 };
          EsError error = { 0 };

          copy = malloc (size);
          memcpy (copy, data, size);
          for (int flips = 1 + random_below (4); flips > 0; flips--)
            copy[random_below ((uint32_t) size)] ^= (uint8_t) (1 + random_below (255));
          if (es_load_memory (copy, size, 16, &image, &error))
            loaded++;
          else if (!one_line (&error))
            wrong++;
          es_image_clear (&image);
          free (copy);
        }
      tap_ok (wrong == 0, "300 damaged copies of %s decode or fail cleanly (%zu decoded)", names[i], loaded);
      free (data);
    }
}

static uint32_t
crc32_of (const uint8_t *data, size_t size)
{
  uint32_t crc = 0xffffffffu;

  for (size_t i = 0; i < size; i++)
    {
      crc ^= data[i];
      for (int k = 0; k < 8; k++)
        crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
  return crc ^ 0xffffffffu;
}

static void
put_be32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

/* Signature, an IHDR for an 8-bit gray image of the given size with a valid
 * CRC, a small IDAT and IEND: enough for a decoder to try to allocate. */
static size_t
make_png_header (uint8_t *out, uint32_t width, uint32_t height)
{
  static const uint8_t signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  static const uint8_t idat[] = { 0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01 };
  uint8_t *p = out;

  memcpy (p, signature, 8);
  p += 8;
  put_be32 (p, 13);
  memcpy (p + 4, "IHDR", 4);
  put_be32 (p + 8, width);
  put_be32 (p + 12, height);
  memcpy (p + 16, "\x08\x00\x00\x00\x00", 5);
  put_be32 (p + 21, crc32_of (p + 4, 17));
  p += 25;
  put_be32 (p, sizeof idat);
  memcpy (p + 4, "IDAT", 4);
  memcpy (p + 8, idat, sizeof idat);
  put_be32 (p + 8 + sizeof idat, crc32_of (p + 4, 4 + sizeof idat));
  p += 12 + sizeof idat;
  put_be32 (p, 0);
  memcpy (p + 4, "IEND", 4);
  put_be32 (p + 8, crc32_of (p + 4, 4));
  p += 12;
  return (size_t) (p - out);
}

static void
test_png_limits (void)
{
  static const struct {
    uint32_t width, height;
    EsErrorCode code;
  } cases[] = {
    { 2000000, 1, ES_ERROR_LIMIT },
    { 1, 2000000, ES_ERROR_LIMIT },
    { 100000, 100000, ES_ERROR_LIMIT },
    { 1000000, 1000000, ES_ERROR_LIMIT },
    { 0x7fffffff, 0x7fffffff, ES_ERROR_LIMIT },
    { 0xffffffff, 1, ES_ERROR_LIMIT },
    { 0, 1, ES_ERROR_FORMAT },
  };
  uint8_t png[128];
  char path[1024];

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      size_t size = make_png_header (png, cases[i].width, cases[i].height);
      bool ok = es_load_memory (png, size, 16, &image, &error);

      tap_diag ("%" PRIu32 "×%" PRIu32 ": %s", cases[i].width, cases[i].height, error.message);
      tap_ok (!ok && error.code == cases[i].code && one_line (&error),
              "an IHDR of %" PRIu32 "×%" PRIu32 " is refused as %s", cases[i].width, cases[i].height,
              es_error_code_name (cases[i].code));
    }

  /* The pixel budget applies too: 32×32 is refused under a 1000-pixel one. */
  snprintf (path, sizeof path, "%s/pngsuite/basn0g08.png", testdata);
  {
    EsImage image = { 0 };
    EsError error = { 0 };
    bool ok;

    es_image_set_max_pixels (1000);
    ok = es_load_file (path, 16, &image, &error);
    es_image_set_max_pixels (0);
    tap_ok (!ok && error.code == ES_ERROR_LIMIT, "the pixel budget refuses a 32×32 PNG (%s)", error.message);
  }

  /* Damaged ancillary chunks are errors, not silently dropped: flip a byte
   * inside ct1n0g04's tEXt chunk. */
  snprintf (path, sizeof path, "%s/pngsuite/ct1n0g04.png", testdata);
  {
    EsImage image = { 0 };
    EsError error = { 0 };
    uint8_t *data;
    size_t size;
    bool ok = false;

    if (read_file (path, &data, &size))
      {
        uint8_t *text = memmem (data, size, "tEXt", 4);

        if (text != NULL)
          {
            text[6] ^= 0x20;
            ok = !es_load_memory (data, size, 16, &image, &error) && strstr (error.message, "CRC") != NULL;
          }
        free (data);
      }
    tap_ok (ok, "a CRC error in an ancillary chunk is an error (%s)", error.message);
  }
}

/* ---- the fast path (libdeflate) against libpng's encoder ---- */

typedef struct {
  uint8_t *data;
  size_t size, capacity;
} PngBytes;

static void
png_bytes_write (png_structp png, png_bytep data, size_t length)
{
  PngBytes *b = png_get_io_ptr (png);

  if (b->size + length > b->capacity)
    {
      b->capacity = (b->size + length) * 2;
      b->data = realloc (b->data, b->capacity);
    }
  memcpy (b->data + b->size, data, length);
  b->size += length;
}

static void
png_bytes_flush (png_structp png)
{
  (void) png;
}

/* A PNG of `rows` (channels samples of depth bits a pixel, 16-bit ones
 * big-endian), every row with the given filter, in IDAT chunks of at most
 * 100 bytes. */
static bool
encode_png (PngBytes *out, const uint8_t *rows, int width, int height, int depth, int colour_type, int filter)
{
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct (png) : NULL;
  int channels = colour_type == 0 ? 1 : colour_type == 4 ? 2 : colour_type == 2 ? 3 : 4;
  size_t row_bytes = (size_t) width * channels * depth / 8;

  if (info == NULL || setjmp (png_jmpbuf (png)))
    {
      png_destroy_write_struct (&png, &info);
      return false;
    }
  png_set_write_fn (png, out, png_bytes_write, png_bytes_flush);
  png_set_IHDR (png, info, (png_uint_32) width, (png_uint_32) height, depth, colour_type, PNG_INTERLACE_NONE,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_filter (png, 0, filter);
  png_set_compression_buffer_size (png, 100);
  png_write_info (png, info);
  for (int y = 0; y < height; y++)
    png_write_row (png, rows + (size_t) y * row_bytes);
  png_write_end (png, info);
  png_destroy_write_struct (&png, &info);
  return true;
}

static void
test_png_fast_path (void)
{
  static const struct {
    int colour_type, depth;
    const char *name;
  } layouts[] = {
    { 0, 8, "gray 8" }, { 0, 16, "gray 16" }, { 4, 8, "gray+alpha 8" }, { 4, 16, "gray+alpha 16" },
    { 2, 8, "RGB 8" },  { 2, 16, "RGB 16" },  { 6, 8, "RGBA 8" },       { 6, 16, "RGBA 16" },
  };
  static const struct {
    int flag;
    const char *name;
  } filters[] = {
    { PNG_FILTER_NONE, "none" },   { PNG_FILTER_SUB, "sub" },     { PNG_FILTER_UP, "up" },
    { PNG_FILTER_AVG, "average" }, { PNG_FILTER_PAETH, "Paeth" }, { PNG_ALL_FILTERS, "adaptive" },
  };
  const int width = 61, height = 29;

  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    {
      int channels = layouts[l].colour_type == 0   ? 1
                     : layouts[l].colour_type == 4 ? 2
                     : layouts[l].colour_type == 2 ? 3
                                                   : 4;
      int bytes = layouts[l].depth / 8;
      size_t row_bytes = (size_t) width * channels * bytes;
      uint8_t *rows = malloc (row_bytes * height);
      size_t bad = 0;

      /* Smooth ramps with noise: every filter gets real work. */
      for (int y = 0; y < height; y++)
        for (size_t i = 0; i < row_bytes; i++)
          rows[y * row_bytes + i] = (uint8_t) (y * 3 + (int) i + (int) random_below (9));
      for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++)
        {
          PngBytes png = { 0 };
          EsImage image = { 0 };
          EsError error = { 0 };

          if (!encode_png (&png, rows, width, height, layouts[l].depth, layouts[l].colour_type, filters[f].flag)
              || !es_load_memory (png.data, png.size, 16, &image, &error))
            {
              tap_diag ("%s, %s: %s", layouts[l].name, filters[f].name, error.message);
              bad++;
            }
          for (int y = 0; y < image.height && image.width == width && image.height == height; y++)
            for (int x = 0; x < width; x++)
              {
                const uint8_t *p = rows + y * row_bytes + (size_t) x * channels * bytes;
                double s[3];
                long want;
                for (int c = 0; c < 3 && c < channels; c++)
                  s[c] = bytes == 1 ? p[c * bytes] : p[c * bytes] << 8 | p[c * bytes + 1];
                want = channels >= 3 ? lround (0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2]) : (long) s[0];
                bad += sample_at (&image, x, y) != (uint32_t) want;
              }
          bad += image.depth != layouts[l].depth;
          es_image_clear (&image);
          free (png.data);
        }
      tap_ok (bad == 0, "%s: every filter, in 100-byte IDAT chunks, decodes to the stored samples (%zu wrong)",
              layouts[l].name, bad);
      free (rows);
    }
}

/* Damage that only the chunk reader sees: each must be refused cleanly. */
static void
test_png_chunk_rules (void)
{
  uint8_t rows[16 * 8];
  PngBytes png = { 0 };

  for (size_t i = 0; i < sizeof rows; i++)
    rows[i] = (uint8_t) (i * 7);
  if (!tap_ok (encode_png (&png, rows, 16, 8, 8, 0, PNG_FILTER_SUB), "a 16×8 gray PNG for the chunk rules"))
    return;
  {
    /* The first IDAT chunk starts at 33; its filter byte is the first
     * byte of the stored zlib data, so a bad filter needs re-encoding:
     * flip the IDAT's chunk type to an unknown critical one instead. */
    uint8_t *copy = malloc (png.size);
    EsImage image = { 0 };
    EsError error = { 0 };
    uint32_t crc;

    memcpy (copy, png.data, png.size);
    memcpy (copy + 37, "IDAX", 4);
    crc = (uint32_t) crc32 (0, copy + 37,
                            (unsigned) (4 + (copy[33] << 24 | copy[34] << 16 | copy[35] << 8 | copy[36])));
    copy[41 + (copy[35] << 8 | copy[36])] = (uint8_t) (crc >> 24);
    copy[42 + (copy[35] << 8 | copy[36])] = (uint8_t) (crc >> 16);
    copy[43 + (copy[35] << 8 | copy[36])] = (uint8_t) (crc >> 8);
    copy[44 + (copy[35] << 8 | copy[36])] = (uint8_t) crc;
    tap_ok (!es_load_memory (copy, png.size, 16, &image, &error) && one_line (&error),
            "an unknown critical chunk is refused (%s)", error.message);
    free (copy);
  }
  {
    /* Claims 8000×8000 RGBA 16 with a few bytes of IDAT: refused before the
     * 512 MB image is allocated. */
    uint8_t *copy = malloc (png.size);
    EsImage image = { 0 };
    EsError error = { 0 };
    uint32_t crc;

    memcpy (copy, png.data, png.size);
    memcpy (copy + 16, "\0\0\x1f\x40\0\0\x1f\x40\x10\x06", 10);
    crc = (uint32_t) crc32 (0, copy + 12, 17);
    copy[29] = (uint8_t) (crc >> 24), copy[30] = (uint8_t) (crc >> 16), copy[31] = (uint8_t) (crc >> 8),
    copy[32] = (uint8_t) crc;
    tap_ok (!es_load_memory (copy, png.size, 16, &image, &error) && error.code == ES_ERROR_FORMAT
              && strcasestr (error.message, "not enough image data"),
            "a huge IHDR over a few bytes of IDAT is refused from the data's size (%s)", error.message);
    free (copy);
  }
  free (png.data);
}

int
main (void)
{
  load_tests_init ();
  test_pngsuite_valid ();
  test_pngsuite_corrupt ();
  test_samples ();
  test_png_truncated_and_damaged ();
  test_png_limits ();
  test_png_fast_path ();
  test_png_chunk_rules ();
  return tap_done ();
}
