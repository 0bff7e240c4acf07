/* SPDX-License-Identifier: MIT */
/* Slow, obviously-correct references for the compute tests (DESIGN.md §1). */
#include "es-reference.h"

#include <math.h>
#include <string.h>

uint32_t
es_reference_sample (const EsImage *image, int x, int y)
{
  const uint8_t *row = (const uint8_t *) image->pixels + (size_t) y * image->stride;

  if (image->format == ES_FORMAT_U16)
    return ((const uint16_t *) row)[x];
  return row[x];
}

/* floor(v · L / 2^depth), in 64 bits so that nothing can overflow. */
static uint32_t
level_of (const EsImage *image, int x, int y, int levels)
{
  uint64_t v = es_reference_sample (image, x, y);

  if (image->levels)
    return (uint32_t) v;
  return (uint32_t) ((v * (uint64_t) levels) / ((uint64_t) 1 << image->depth));
}

/* The 8-bit view is the quantization to 256 levels: v >> 8 for 16-bit
 * samples, v itself for 8-bit ones, v · 16 for 4-bit ones. */
static int
view_of (const EsImage *image, int x, int y)
{
  return (int) level_of (image, x, y, 256);
}

void
es_reference_quantize (const EsImage *image, int levels, uint8_t *out)
{
  for (int y = 0; y < image->height; y++)
    for (int x = 0; x < image->width; x++)
      out[(size_t) y * image->width + x] = (uint8_t) level_of (image, x, y, levels);
}

void
es_reference_entropy (const EsImage *image, int levels, int window, double *out)
{
  int r = window / 2;
  int count[256];

  for (int y = 0; y < image->height; y++)
    for (int x = 0; x < image->width; x++)
      {
        int n = 0;
        double h = 0.0;

        memset (count, 0, sizeof count);
        for (int yy = y - r; yy <= y + r; yy++)
          for (int xx = x - r; xx <= x + r; xx++)
            if (yy >= 0 && yy < image->height && xx >= 0 && xx < image->width)
              {
                count[level_of (image, xx, yy, levels)]++;
                n++;
              }
        for (int i = 0; i < 256; i++)
          if (count[i] > 0)
            {
              double p = (double) count[i] / n;
              h -= p * log (p);
            }
        out[(size_t) y * image->width + x] = h;
      }
}

static uint8_t
saturate_u8 (float v)
{
  return v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t) v;
}

/* OpenCV's equalizeHist: a float32 scale and cvRound (round half to even). */
void
es_reference_equalize (const EsImage *image, uint8_t *out)
{
  long long hist[256] = { 0 };
  long long total = (long long) image->width * image->height;
  long long sum = 0;
  uint8_t lut[256];
  int i0 = 0;
  float scale;

  for (int y = 0; y < image->height; y++)
    for (int x = 0; x < image->width; x++)
      hist[view_of (image, x, y)]++;
  while (hist[i0] == 0)
    i0++;

  for (int i = 0; i < 256; i++)
    lut[i] = (uint8_t) i;
  if (hist[i0] != total)
    {
      scale = 255.0f / (float) (total - hist[i0]);
      lut[i0] = 0;
      for (int i = i0 + 1; i < 256; i++)
        {
          float value;
          sum += hist[i];
          value = (float) sum * scale;
          lut[i] = saturate_u8 (nearbyintf (value));
        }
    }

  for (int y = 0; y < image->height; y++)
    for (int x = 0; x < image->width; x++)
      out[(size_t) y * image->width + x] = lut[view_of (image, x, y)];
}

static int
clamp (int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

void
es_reference_sharpen (const EsImage *image, float amount, uint8_t *out)
{
  int w = image->width, h = image->height;

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        int c = view_of (image, x, y);
        int north = view_of (image, x, clamp (y - 1, 0, h - 1));
        int south = view_of (image, x, clamp (y + 1, 0, h - 1));
        int west = view_of (image, clamp (x - 1, 0, w - 1), y);
        int east = view_of (image, clamp (x + 1, 0, w - 1), y);
        /* c + a · laplacian, each step rounded to float as the backends do. */
        float laplacian = (float) (4 * c - north - south - east - west);
        float product = amount * laplacian;
        float value = (float) c + product;
        out[(size_t) y * w + x] = saturate_u8 (nearbyintf (value));
      }
}
