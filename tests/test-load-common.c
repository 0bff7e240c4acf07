/* SPDX-License-Identifier: MIT */
/* Helpers shared by the decoder tests. */
#include "test-load-common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

const char *testdata;
unsigned long long rng;

void
load_tests_init (void)
{
  testdata = getenv ("ES_TESTDATA");
  if (testdata == NULL)
    testdata = "tests/data";
  rng = tap_seed ();
}

void
buffer_append (Buffer *b, const void *data, size_t size)
{
  if (b->size + size > b->capacity)
    {
      b->capacity = (b->size + size) * 2 + 64;
      b->data = realloc (b->data, b->capacity);
      if (b->data == NULL)
        abort ();
    }
  memcpy (b->data + b->size, data, size);
  b->size += size;
}

void
buffer_printf (Buffer *b, const char *format, ...)
{
  char text[256];
  va_list args;
  int n;

  va_start (args, format);
  n = vsnprintf (text, sizeof text, format, args);
  va_end (args);
  buffer_append (b, text, (size_t) n);
}

uint32_t
random_below (uint32_t n)
{
  return (uint32_t) (tap_random (&rng) >> 32) % n;
}

bool
read_file (const char *path, uint8_t **data, size_t *size)
{
  FILE *f = fopen (path, "rb");
  long n;

  *data = NULL;
  *size = 0;
  if (f == NULL)
    return false;
  fseek (f, 0, SEEK_END);
  n = ftell (f);
  fseek (f, 0, SEEK_SET);
  if (n >= 0)
    {
      *data = malloc ((size_t) n + 1);
      *size = fread (*data, 1, (size_t) n, f);
    }
  fclose (f);
  if (n < 0 || *size != (size_t) n)
    {
      free (*data);
      *data = NULL;
      return false;
    }
  return true;
}

uint32_t
sample_at (const EsImage *image, int x, int y)
{
  if (image->format == ES_FORMAT_U8)
    return ((const uint8_t *) es_image_row (image, y))[x];
  return ((const uint16_t *) es_image_row (image, y))[x];
}

bool
same_samples (const EsImage *image, const uint32_t *values)
{
  for (int y = 0; y < image->height; y++)
    for (int x = 0; x < image->width; x++)
      if (sample_at (image, x, y) != values[(size_t) y * image->width + x])
        return false;
  return true;
}

unsigned long long
image_hash (const EsImage *image)
{
  unsigned long long h = 0xcbf29ce484222325ull;

  for (int y = 0; y < image->height; y++)
    for (int x = 0; x < image->width; x++)
      {
        uint32_t v = sample_at (image, x, y);

        h = (h ^ (v & 255)) * 0x100000001b3ull;
        if (image->format == ES_FORMAT_U16)
          h = (h ^ (v >> 8)) * 0x100000001b3ull;
      }
  return h;
}

/* Messages go on one line after the file name, so they must not be empty
 * or contain a newline. */
bool
one_line (const EsError *error)
{
  return error->message[0] != '\0' && strchr (error->message, '\n') == NULL;
}
