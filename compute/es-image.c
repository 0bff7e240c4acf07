/* SPDX-License-Identifier: MIT */
/* EsImage allocation with every size product checked before memory is touched. */
#include "es-image.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint64_t max_pixels = ES_DEFAULT_MAX_PIXELS;

void
es_image_set_max_pixels (uint64_t pixels)
{
  max_pixels = pixels ? pixels : ES_DEFAULT_MAX_PIXELS;
}

uint64_t
es_image_get_max_pixels (void)
{
  return max_pixels;
}

int
es_format_depth (EsFormat format)
{
  switch (format)
    {
    case ES_FORMAT_U8: return 8;
    case ES_FORMAT_U16: return 16;
    case ES_FORMAT_F32: return 0;
    }
  return 0;
}

size_t
es_format_size (EsFormat format)
{
  switch (format)
    {
    case ES_FORMAT_U8: return 1;
    case ES_FORMAT_U16: return 2;
    case ES_FORMAT_F32: return 4;
    }
  return 0;
}

const char *
es_format_name (EsFormat format)
{
  switch (format)
    {
    case ES_FORMAT_U8: return "u8";
    case ES_FORMAT_U16: return "u16";
    case ES_FORMAT_F32: return "f32";
    }
  return "?";
}

bool
es_image_check_size (int width, int height, EsFormat format, EsError *error)
{
  return es_image_check_volume_size (width, height, 1, format, error);
}

/* A 2-D image's messages name two sides, a volume's three. */
bool
es_image_check_volume_size (int width, int height, int planes, EsFormat format, EsError *error)
{
  char size[80];
  uint64_t pixels;

  if (planes > 1)
    snprintf (size, sizeof size, "%d×%d×%d", width, height, planes);
  else
    snprintf (size, sizeof size, "%d×%d", width, height);
  if (width <= 0 || height <= 0 || planes <= 0)
    return es_error_set (error, ES_ERROR_FORMAT, "%s size %s is empty", planes > 1 ? "volume" : "image", size);
  if (width > ES_MAX_SIDE || height > ES_MAX_SIDE || planes > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_LIMIT, "%s size %s: a side is over the limit of %d pixels",
                         planes > 1 ? "volume" : "image", size, ES_MAX_SIDE);
  /* The sides are ≤ 10^6; the product of two fits in 64 bits, and the
   * third is checked against the budget by division. */
  pixels = (uint64_t) width * (uint64_t) height;
  if (pixels > max_pixels / (uint64_t) planes)
    {
      if (planes > 1)
        return es_error_set (error, ES_ERROR_LIMIT, "volume size %s (%llu pixels) is over the limit of %llu pixels",
                             size, (unsigned long long) (pixels * (uint64_t) planes), (unsigned long long) max_pixels);
      return es_error_set (error, ES_ERROR_LIMIT, "image size %s is over the limit of %llu pixels", size,
                           (unsigned long long) max_pixels);
    }
  pixels *= (uint64_t) planes;
  if (pixels > SIZE_MAX / 4 / es_format_size (format))
    return es_error_set (error, ES_ERROR_LIMIT, "%s size %s does not fit in memory", planes > 1 ? "volume" : "image",
                         size);
  return true;
}

void
es_memory_prefer_huge_pages (void *block, size_t size)
{
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t) 2 << 20;
  uintptr_t first = ((uintptr_t) block + huge - 1) & ~(huge - 1);
  uintptr_t end = ((uintptr_t) block + size) & ~(huge - 1);

  /* Only whole 2 MiB pages inside the block; a refusal changes nothing. */
  if (block != NULL && end > first)
    (void) madvise ((void *) first, end - first, MADV_HUGEPAGE);
#else
  (void) block;
  (void) size;
#endif
}

static const EsPixelAllocator *pixel_allocator;

void
es_image_set_allocator (const EsPixelAllocator *allocator)
{
  pixel_allocator = allocator;
}

bool
es_image_alloc (EsImage *image, int width, int height, EsFormat format, int depth, EsError *error)
{
  return es_image_alloc_volume (image, width, height, 1, format, depth, error);
}

bool
es_image_alloc_volume (EsImage *image, int width, int height, int planes, EsFormat format, int depth, EsError *error)
{
  size_t stride, plane_stride;

  *image = (EsImage){ 0 };
  if (!es_image_check_volume_size (width, height, planes, format, error))
    return false;
  stride = (size_t) width * es_format_size (format);
  plane_stride = stride * (size_t) height;
  if (pixel_allocator != NULL && (image->pixels = pixel_allocator->take ((size_t) planes * plane_stride)) != NULL)
    image->release = pixel_allocator->release;
  else
    image->pixels = calloc ((size_t) planes, plane_stride);
  if (image->pixels == NULL)
    {
      if (planes > 1)
        return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB for a %d×%d×%d volume",
                             ((size_t) planes * plane_stride) >> 20, width, height, planes);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB for a %d×%d image", plane_stride >> 20,
                           width, height);
    }
  if (image->release == NULL)
    es_memory_prefer_huge_pages (image->pixels, (size_t) planes * plane_stride);
  image->width = width;
  image->height = height;
  image->stride = stride;
  image->planes = planes > 1 ? planes : 0;
  image->plane_stride = planes > 1 ? plane_stride : 0;
  image->format = format;
  image->depth = depth;
  return true;
}

void
es_image_clear (EsImage *image)
{
  if (image == NULL)
    return;
  if (image->release != NULL)
    image->release (image->pixels);
  else if (!es_image_on_device (image))
    free (image->pixels);
  *image = (EsImage){ 0 };
}

void
es_image_sample_range (const EsImage *image, uint32_t *min, uint32_t *max)
{
  uint32_t lo = UINT32_MAX, hi = 0;

  for (int z = 0; z < es_image_planes (image); z++)
    for (int y = 0; y < image->height; y++)
      if (image->format == ES_FORMAT_U8)
        {
          const uint8_t *row = es_image_voxel_row (image, z, y);
          for (int x = 0; x < image->width; x++)
            {
              lo = row[x] < lo ? row[x] : lo;
              hi = row[x] > hi ? row[x] : hi;
            }
        }
      else
        {
          const uint16_t *row = es_image_voxel_row (image, z, y);
          for (int x = 0; x < image->width; x++)
            {
              lo = row[x] < lo ? row[x] : lo;
              hi = row[x] > hi ? row[x] : hi;
            }
        }
  *min = lo <= hi ? lo : 0;
  *max = hi;
}

/* Counts the samples of rows y0..y1-1 into counts: 8-bit samples into
 * four interleaved tables of 256 (a run of equal pixels would otherwise
 * wait on one counter), 16-bit ones by value. */
static void
count_rows (const EsImage *image, int y0, int y1, uint64_t *counts)
{
  for (int y = y0; y < y1; y++)
    if (image->format != ES_FORMAT_U16)
      {
        const uint8_t *row = es_image_row (image, y);
        int x = 0;
        for (; x + 4 <= image->width; x += 4)
          {
            counts[row[x]]++;
            counts[256 + row[x + 1]]++;
            counts[512 + row[x + 2]]++;
            counts[768 + row[x + 3]]++;
          }
        for (; x < image->width; x++)
          counts[row[x]]++;
      }
    else
      {
        const uint16_t *row = es_image_row (image, y);
        for (int x = 0; x < image->width; x++)
          counts[row[x]]++;
      }
}

/* Each thread counts a band of rows into its own table; the 8-bit view and
 * the range are then read from the summed counts, one division per
 * distinct value instead of one per pixel. */
void
es_image_summarize (const EsImage *image, uint64_t histogram[256], uint32_t *lo, uint32_t *hi)
{
  const bool wide = image->format == ES_FORMAT_U16;
  const size_t table = wide ? 65536 : 4 * 256;
  const int threads = (int64_t) image->width * image->height > 65536 ? omp_get_max_threads () : 1;
  uint64_t *counts = calloc ((size_t) threads * table, sizeof *counts);
  int used = threads;

  memset (histogram, 0, 256 * sizeof *histogram);
  *lo = *hi = 0;
  if (image->pixels == NULL || image->height <= 0)
    {
      free (counts);
      return;
    }
  if (counts == NULL) /* no memory for every thread's table: one table, one thread */
    {
      counts = calloc (table, sizeof *counts);
      if (counts == NULL)
        return;
      used = 1;
    }
#pragma omp parallel num_threads(used) if (used > 1)
  {
    int t = omp_get_thread_num (), n = omp_get_num_threads ();
    count_rows (image, (int) ((int64_t) image->height * t / n), (int) ((int64_t) image->height * (t + 1) / n),
                counts + (size_t) t * table);
  }
  for (int t = 1; t < used; t++)
    for (size_t v = 0; v < table; v++)
      counts[v] += counts[(size_t) t * table + v];
  if (!wide)
    for (size_t v = 0; v < 256; v++)
      counts[v] += counts[256 + v] + counts[512 + v] + counts[768 + v];
  {
    const uint32_t maxval = es_image_maxval (image);
    bool first = true;
    for (uint32_t v = 0; v < (wide ? 65536u : 256u); v++)
      if (counts[v] != 0)
        {
          histogram[es_sample_to_u8_max (v, maxval)] += counts[v];
          if (first)
            *lo = v;
          first = false;
          *hi = v;
        }
  }
  free (counts);
}
