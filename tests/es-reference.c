/* SPDX-License-Identifier: MIT */
/* Slow, obviously-correct references for the compute tests (DESIGN.md §1). */
#include "es-reference.h"

#include <math.h>
#include <stdlib.h>
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

/* The full scale: a PGM's maxval, else 2^depth − 1. */
static uint32_t
full_scale (const EsImage *image)
{
  return image->maxval ? image->maxval : (uint32_t) ((1u << image->depth) - 1);
}

uint32_t
es_reference_view (uint32_t v, uint32_t maxval)
{
  /* round(v · 255 / maxval), halves up: floor of the exact rational + 1/2. */
  return (uint32_t) (((uint64_t) v * 510 + maxval) / (2 * (uint64_t) maxval));
}

/* The 8-bit view; a levels image's levels stand for it. */
static int
view_of (const EsImage *image, int x, int y)
{
  if (image->levels)
    return (int) es_reference_sample (image, x, y);
  return (int) es_reference_view (es_reference_sample (image, x, y), full_scale (image));
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

/* ---- entropy under a definition ------------------------------------------------- */

/* Whether cell (dx, dy) of the window is in it, from the shapes' words. */
static bool
in_window (const EsEntropyDefinition *d, int window, int dx, int dy)
{
  switch (d->shape)
    {
    case ES_SHAPE_RECT: return abs (dx) <= d->width / 2 && abs (dy) <= d->height / 2;
    case ES_SHAPE_DISK: return dx * dx + dy * dy <= d->radius * d->radius;
      case ES_SHAPE_FOOTPRINT: {
        int hw = d->footprint->width / 2, hh = d->footprint->height / 2;
        if (abs (dx) > hw || abs (dy) > hh)
          return false;
        return d->footprint->cells[(size_t) (dy + hh) * d->footprint->width + (dx + hw)] != 0;
      }
    default: return abs (dx) <= window / 2 && abs (dy) <= window / 2;
    }
}

/* Coordinate i of a row of n, folded back into it by reflecting again and
 * again as the pattern says; -1 for clip and constant outside. */
static int
fold (int i, int n, EsBorder border)
{
  while (i < 0 || i >= n)
    switch (border)
      {
      case ES_BORDER_SYMMETRIC: i = i < 0 ? -1 - i : 2 * n - 1 - i; break;
      case ES_BORDER_MIRROR:
        if (n == 1)
          return 0;
        i = i < 0 ? -i : 2 * n - 2 - i;
        break;
      case ES_BORDER_REPLICATE: i = i < 0 ? 0 : n - 1; break;
      default: return -1;
      }
  return i;
}

static uint32_t
bin_of (const EsImage *image, uint32_t v, int levels, const EsEntropyDefinition *d, uint32_t lo, uint32_t hi)
{
  if (image->levels)
    return v;
  switch (d->binning)
    {
    case ES_BINNING_EXACT: return v;
    case ES_BINNING_BYTE: return es_reference_view (v, full_scale (image)) * (uint32_t) levels / 256;
    case ES_BINNING_RANGE:
      case ES_BINNING_MINMAX: {
        double level = floor (((double) v - lo) * levels / ((double) hi - lo + 1));
        return level < 0 ? 0 : level > levels - 1 ? (uint32_t) levels - 1 : (uint32_t) level;
      }
    default: return (uint32_t) ((uint64_t) v * (uint64_t) levels >> image->depth);
    }
}

void
es_reference_entropy_defined (const EsImage *image, int levels, int window, const EsEntropyDefinition *d, double *out)
{
  int w = image->width, h = image->height, reach = 0;
  uint32_t lo = d->range_lo, hi = d->range_hi;
  uint32_t bins = image->levels                    ? (uint32_t) image->levels
                  : d->binning == ES_BINNING_EXACT ? 1u << image->depth
                                                   : (uint32_t) levels;
  int *count = calloc (bins, sizeof *count);
  uint32_t *touched = malloc (sizeof *touched * (size_t) 256 * 256);

  if (d->binning == ES_BINNING_MINMAX)
    {
      lo = UINT32_MAX, hi = 0;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            uint32_t v = es_reference_sample (image, x, y);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
          }
    }
  reach = d->shape == ES_SHAPE_RECT   ? (d->width > d->height ? d->width : d->height) / 2
          : d->shape == ES_SHAPE_DISK ? d->radius
          : d->shape == ES_SHAPE_FOOTPRINT
            ? (d->footprint->width > d->footprint->height ? d->footprint->width : d->footprint->height) / 2
            : window / 2;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        int n = 0, n_touched = 0;
        double hsum = 0.0;

        if (d->mask && ((const uint8_t *) d->mask->pixels)[(size_t) y * d->mask->stride + x] == 0)
          {
            out[(size_t) y * w + x] = NAN;
            continue;
          }
        for (int dy = -reach; dy <= reach; dy++)
          for (int dx = -reach; dx <= reach; dx++)
            {
              int xx = fold (x + dx, w, d->border), yy = fold (y + dy, h, d->border);
              uint32_t bin;

              if (!in_window (d, window, dx, dy))
                continue;
              if (xx < 0 || yy < 0)
                {
                  if (d->border != ES_BORDER_CONSTANT)
                    continue;
                  bin = bin_of (image, d->border_value, levels, d, lo, hi);
                }
              else
                {
                  if (d->mask && ((const uint8_t *) d->mask->pixels)[(size_t) yy * d->mask->stride + xx] == 0)
                    continue;
                  bin = bin_of (image, es_reference_sample (image, xx, yy), levels, d, lo, hi);
                }
              if (count[bin]++ == 0)
                touched[n_touched++] = bin;
              n++;
            }
        for (int i = 0; i < n_touched; i++)
          {
            double p = (double) count[touched[i]] / n;
            hsum -= p * log (p);
            count[touched[i]] = 0;
          }
        if (n == 0)
          hsum = NAN;
        else if (d->normalized)
          {
            uint32_t most = bins < (uint32_t) n ? bins : (uint32_t) n;
            hsum = most <= 1 ? 0.0 : hsum / log ((double) most);
          }
        else if (d->bits)
          hsum /= log (2.0);
        out[(size_t) y * w + x] = hsum;
      }
  free (count);
  free (touched);
}

/* ---- entropy over volumes ---------------------------------------------------- */

/* Whether cell (dx, dy, dz) is in the window: 3-D shapes from their words,
 * 2-D ones on their plane only. */
static bool
in_window_3d (const EsEntropyDefinition *d, int window, int dx, int dy, int dz)
{
  switch (d->shape)
    {
    case ES_SHAPE_BOX: return abs (dz) <= d->planes / 2 && abs (dy) <= d->height / 2 && abs (dx) <= d->width / 2;
    case ES_SHAPE_BALL: return dx * dx + dy * dy + dz * dz <= d->radius * d->radius;
    case ES_SHAPE_FOOTPRINT:
      if (d->footprint->planes > 1)
        {
          int hd = d->footprint->planes / 2, hh = d->footprint->height / 2, hw = d->footprint->width / 2;
          if (abs (dz) > hd || abs (dy) > hh || abs (dx) > hw)
            return false;
          return d->footprint
                   ->cells[((size_t) (dz + hd) * d->footprint->height + (size_t) (dy + hh)) * d->footprint->width
                           + (size_t) (dx + hw)]
                 != 0;
        }
      return dz == 0 && in_window (d, window, dx, dy);
    default: return dz == 0 && in_window (d, window, dx, dy);
    }
}

static uint32_t
volume_sample (const EsImage *volume, int x, int y, int z)
{
  EsImage plane = es_image_plane (volume, z);

  return es_reference_sample (&plane, x, y);
}

static bool
mask_in (const EsImage *mask, int x, int y, int z)
{
  return mask == NULL || ((const uint8_t *) es_image_voxel_row (mask, z, y))[x] != 0;
}

void
es_reference_entropy_volume (const EsImage *volume, int levels, int window, const EsEntropyDefinition *d, double *out)
{
  int w = volume->width, h = volume->height, planes = es_image_planes (volume);
  int reach;
  uint32_t lo = d->range_lo, hi = d->range_hi;
  uint32_t bins = volume->levels                   ? (uint32_t) volume->levels
                  : d->binning == ES_BINNING_EXACT ? 1u << volume->depth
                                                   : (uint32_t) levels;
  int *count = calloc (bins, sizeof *count);

  if (d->binning == ES_BINNING_MINMAX)
    {
      lo = UINT32_MAX, hi = 0;
      for (int z = 0; z < planes; z++)
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++)
            {
              uint32_t v = volume_sample (volume, x, y, z);
              lo = v < lo ? v : lo;
              hi = v > hi ? v : hi;
            }
    }
  /* Half the largest side of the window, in any direction. */
  switch (d->shape)
    {
    case ES_SHAPE_BOX: reach = d->planes > d->height ? d->planes : d->height; break;
    case ES_SHAPE_RECT: reach = d->height; break;
    case ES_SHAPE_BALL:
    case ES_SHAPE_DISK: reach = 2 * d->radius + 1; break;
    case ES_SHAPE_FOOTPRINT:
      reach = d->footprint->planes > d->footprint->height ? d->footprint->planes : d->footprint->height;
      break;
    default: reach = window; break;
    }
  if (d->shape == ES_SHAPE_BOX || d->shape == ES_SHAPE_RECT)
    reach = reach > d->width ? reach : d->width;
  if (d->shape == ES_SHAPE_FOOTPRINT)
    reach = reach > d->footprint->width ? reach : d->footprint->width;
  reach /= 2;
  for (int z = 0; z < planes; z++)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        {
          size_t at = ((size_t) z * h + y) * w + x;
          double hsum = 0.0;
          int n = 0;

          if (!mask_in (d->mask, x, y, z))
            {
              out[at] = NAN;
              continue;
            }
          for (int dz = -reach; dz <= reach; dz++)
            for (int dy = -reach; dy <= reach; dy++)
              for (int dx = -reach; dx <= reach; dx++)
                {
                  int xx, yy, zz;
                  uint32_t bin;

                  if (!in_window_3d (d, window, dx, dy, dz))
                    continue;
                  xx = fold (x + dx, w, d->border), yy = fold (y + dy, h, d->border);
                  zz = fold (z + dz, planes, d->border);
                  if (xx < 0 || yy < 0 || zz < 0)
                    {
                      if (d->border != ES_BORDER_CONSTANT)
                        continue;
                      bin = bin_of (volume, d->border_value, levels, d, lo, hi);
                    }
                  else
                    {
                      if (!mask_in (d->mask, xx, yy, zz))
                        continue;
                      bin = bin_of (volume, volume_sample (volume, xx, yy, zz), levels, d, lo, hi);
                    }
                  count[bin]++;
                  n++;
                }
          for (uint32_t b = 0; b < bins; b++)
            if (count[b] != 0)
              {
                double p = (double) count[b] / n;
                hsum -= p * log (p);
                count[b] = 0;
              }
          if (n == 0)
            hsum = NAN;
          else if (d->normalized)
            {
              uint32_t most = bins < (uint32_t) n ? bins : (uint32_t) n;
              hsum = most <= 1 ? 0.0 : hsum / log ((double) most);
            }
          else if (d->bits)
            hsum /= log (2.0);
          out[at] = hsum;
        }
  free (count);
}

/* ---- CLAHE ------------------------------------------------------------------------ */

/* OpenCV's BORDER_REFLECT_101, one reflection at a time: `d c b | a b c d | c b a`. */
static int
reflect_101 (int i, int n)
{
  if (n == 1)
    return 0;
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

static uint16_t
saturate_sample (float v, int bins)
{
  float r = nearbyintf (v);
  return (uint16_t) (r < 0.0f ? 0.0f : r > (float) (bins - 1) ? (float) (bins - 1) : r);
}

void
es_reference_clahe (const EsImage *image, double clip, int columns, int rows, uint16_t *out)
{
  int w = image->width, h = image->height;
  int bins = image->format == ES_FORMAT_U8 ? 256 : 65536;
  /* Padded to a multiple of the grid when either side is not one. */
  int pw = w % columns || h % rows ? w + columns - w % columns : w;
  int ph = w % columns || h % rows ? h + rows - h % rows : h;
  int tw = pw / columns, th = ph / rows, limit = 0;
  float scale = (float) (bins - 1) / (float) (tw * th);
  uint16_t *luts = malloc ((size_t) columns * rows * bins * sizeof *luts);
  long *hist = malloc ((size_t) bins * sizeof *hist);

  if (luts == NULL || hist == NULL)
    abort ();
  if (clip > 0.0)
    {
      limit = (int) (clip * (tw * th) / bins);
      if (limit < 1)
        limit = 1;
    }
  for (int ty = 0; ty < rows; ty++)
    for (int tx = 0; tx < columns; tx++)
      {
        long excess = 0, sum = 0;
        uint16_t *lut = luts + ((size_t) ty * columns + tx) * bins;

        memset (hist, 0, (size_t) bins * sizeof *hist);
        for (int y = ty * th; y < (ty + 1) * th; y++)
          for (int x = tx * tw; x < (tx + 1) * tw; x++)
            hist[es_reference_sample (image, reflect_101 (x, w), reflect_101 (y, h))]++;
        if (limit > 0)
          {
            long residual;
            for (int i = 0; i < bins; i++)
              if (hist[i] > limit)
                excess += hist[i] - limit, hist[i] = limit;
            for (int i = 0; i < bins; i++)
              hist[i] += excess / bins;
            residual = excess % bins;
            for (int i = 0, step = residual ? (bins / residual > 1 ? bins / (int) residual : 1) : 1;
                 i < bins && residual > 0; i += step, residual--)
              hist[i]++;
          }
        for (int i = 0; i < bins; i++)
          {
            sum += hist[i];
            lut[i] = saturate_sample ((float) sum * scale, bins);
          }
      }
  for (int y = 0; y < h; y++)
    {
      float fy = (float) y * (1.0f / (float) th) - 0.5f;
      int y1 = (int) floorf (fy);
      float ya = fy - (float) y1, ya1 = 1.0f - ya;
      int top = y1 < 0 ? 0 : y1, bottom = y1 + 1 > rows - 1 ? rows - 1 : y1 + 1;

      for (int x = 0; x < w; x++)
        {
          float fx = (float) x * (1.0f / (float) tw) - 0.5f;
          int x1 = (int) floorf (fx);
          float xa = fx - (float) x1, xa1 = 1.0f - xa;
          int left = x1 < 0 ? 0 : x1, right = x1 + 1 > columns - 1 ? columns - 1 : x1 + 1;
          uint32_t v = es_reference_sample (image, x, y);
#define LUT(tx, ty) ((float) luts[((size_t) (ty) *columns + (tx)) * bins + v])
          float res = (LUT (left, top) * xa1 + LUT (right, top) * xa) * ya1
                      + (LUT (left, bottom) * xa1 + LUT (right, bottom) * xa) * ya;
#undef LUT
          out[(size_t) y * w + x] = saturate_sample (res, bins);
        }
    }
  free (luts);
  free (hist);
}

int
es_reference_alike_bins (const int *count, int n, int *each)
{
  int bins = 0;

  *each = 0;
  for (int b = 0; b < n; b++)
    if (count[b] != 0)
      {
        if (*each != 0 && count[b] != *each)
          return 0;
        *each = count[b], bins++;
      }
  return bins >= 2 ? bins : 0;
}
