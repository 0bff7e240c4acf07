/* SPDX-License-Identifier: MIT */
/* Helpers shared by the encoder and output-file tests: a temporary folder, random images, file checks. */
#include "test-save-common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

unsigned long long rng;
char tmpdir[] = "/tmp/es-test-save-XXXXXX";

int
rand_int (int n)
{
  return (int) (tap_random (&rng) % (unsigned long long) n);
}

double
rand_unit (void)
{
  return (double) (tap_random (&rng) >> 11) / 9007199254740992.0;
}

char *
tmp_path (const char *name)
{
  static char path[8][512];
  static int next;
  char *p = path[next++ % 8];
  snprintf (p, sizeof path[0], "%s/%s", tmpdir, name);
  return p;
}

/* A random image with a padded stride, so that row addressing is exercised. */
void
random_image (EsImage *image, int width, int height, EsFormat format)
{
  size_t size = es_format_size (format);

  memset (image, 0, sizeof *image);
  image->width = width;
  image->height = height;
  image->format = format;
  image->depth = format == ES_FORMAT_U8 ? 8 : 16;
  image->stride = ((size_t) width + (size_t) rand_int (5)) * size;
  image->pixels = malloc (image->stride * (size_t) height + 1);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        void *row = es_image_row (image, y);
        if (format == ES_FORMAT_U8)
          ((uint8_t *) row)[x] = (uint8_t) rand_int (256);
        else if (format == ES_FORMAT_U16)
          ((uint16_t *) row)[x] = (uint16_t) rand_int (65536);
        else
          ((float *) row)[x] = (float) (rand_unit () * 3.0 - 0.2);
      }
}

double
value_at (const EsImage *image, int x, int y)
{
  const void *row = es_image_row (image, y);
  return image->format == ES_FORMAT_U8    ? ((const uint8_t *) row)[x]
         : image->format == ES_FORMAT_U16 ? ((const uint16_t *) row)[x]
                                          : ((const float *) row)[x];
}

bool
read_file (const char *path, uint8_t **data, size_t *size)
{
  FILE *f = fopen (path, "rb");
  long n;

  *data = NULL;
  *size = 0;
  if (!f)
    return false;
  fseek (f, 0, SEEK_END);
  n = ftell (f);
  fseek (f, 0, SEEK_SET);
  *data = malloc ((size_t) n + 1);
  *size = fread (*data, 1, (size_t) n, f);
  fclose (f);
  return *size == (size_t) n;
}

bool
file_equals (const char *path, const void *bytes, size_t size)
{
  uint8_t *data;
  size_t n;
  bool same = read_file (path, &data, &n) && n == size && memcmp (data, bytes, size) == 0;
  free (data);
  return same;
}

/* Counts entries of the temporary folder that are not in the keep list
 * (leftover temporary files of failed writes would show up here). */
int
count_strays (const char *keep)
{
  DIR *dir = opendir (tmpdir);
  struct dirent *e;
  int n = 0;

  while ((e = readdir (dir)))
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, "..") && (!keep || strcmp (e->d_name, keep)))
      n++;
  closedir (dir);
  return n;
}

void
remove_all (void)
{
  DIR *dir = opendir (tmpdir);
  struct dirent *e;

  while ((e = readdir (dir)))
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      {
        char *p = tmp_path (e->d_name);
        chmod (p, 0700);
        if (rmdir (p) != 0)
          unlink (p);
      }
  closedir (dir);
}
