/* SPDX-License-Identifier: MIT */
/* Shared by the TIFF tests (test-tiff.c, test-tiff-write.c): a scratch folder, test images, comparisons. */
#pragma once

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-image.h"
#include "tap.h"
#include "test-image-common.h"

static char dir[64];
static unsigned long long rng;

static inline char *
temp_path (const char *name)
{
  static char paths[8][384];
  static int next;
  char *path = paths[next++ % 8];

  snprintf (path, sizeof paths[0], "%s/%s", dir, name);
  return path;
}

/* A test image: random samples of the format (depth 8 or 16), or floats. */
static inline EsImage
random_image (int width, int height, EsFormat format)
{
  EsImage image = { 0 };

  es_image_alloc (&image, width, height, format, format == ES_FORMAT_U8 ? 8 : 16, NULL);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        void *row = es_image_row (&image, y);
        unsigned long long r = tap_random (&rng);
        if (format == ES_FORMAT_U8)
          ((uint8_t *) row)[x] = (uint8_t) r;
        else if (format == ES_FORMAT_U16)
          ((uint16_t *) row)[x] = (uint16_t) r;
        else
          ((float *) row)[x] = (float) ((double) (r >> 11) / 9007199254740992.0 * 2.9);
      }
  return image;
}

static inline size_t
file_size (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 ? (size_t) st.st_size : 0;
}

/* Only the expected files are in the test folder (no temporary leftovers). */
static inline int
files_in_dir (void)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  int n = 0;

  while (d != NULL && (e = readdir (d)) != NULL)
    n += e->d_name[0] != '.' || (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0);
  if (d != NULL)
    closedir (d);
  return n;
}

/* ---- our writer, read back by libtiff ---- */

/* Page `page` of a TIFF read by libtiff into an image of the stored type. */
/* Makes the scratch folder and seeds rng; false when it cannot. */
static inline bool
tiff_tests_init (void)
{
  snprintf (dir, sizeof dir, "/tmp/es-test-tiff-XXXXXX");
  if (mkdtemp (dir) == NULL)
    return false;
  rng = tap_seed ();
  return true;
}

/* Removes the scratch folder and what is left in it. */
static inline void
tiff_tests_cleanup (void)
{
  DIR *d = opendir (dir);
  struct dirent *e;

  while (d != NULL && (e = readdir (d)) != NULL)
    if (e->d_name[0] != '.')
      unlink (temp_path (e->d_name));
  if (d != NULL)
    closedir (d);
  rmdir (dir);
}
