/* SPDX-License-Identifier: MIT */
/* EsImage: a plain 2-D pixel buffer, the currency of every layer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ES_FORMAT_U8,
  ES_FORMAT_U16,
  ES_FORMAT_F32,
} EsFormat;

/* Largest side accepted anywhere, checked before any allocation. */
#define ES_MAX_SIDE 1000000
/* Default pixel budget (2^30); es_image_set_max_pixels() changes it per process. */
#define ES_DEFAULT_MAX_PIXELS (1ull << 30)

typedef struct {
  int width;
  int height;
  size_t stride;     /* bytes from one row to the next */
  EsFormat format;
  /* For U8/U16: significant bits of a sample (1..16); a sample v lies in
   * 0..2^depth-1. Quantization uses it: level = (v * L) >> depth. */
  int depth;
  /* Nonzero when the samples already are quantization levels 0..levels-1
   * (a text matrix): quantization is then skipped. */
  int levels;
  void *pixels;
  /* Frees pixels; NULL means free(). Page-locked images from
   * es_engine_image_alloc() set it. */
  void (*release) (void *pixels);
} EsImage;

size_t es_format_size (EsFormat format);
const char *es_format_name (EsFormat format);

/* Validates the size against ES_MAX_SIDE and the pixel budget, checks every
 * product for overflow, and allocates a zeroed, tightly packed buffer. */
bool es_image_alloc (EsImage *image, int width, int height, EsFormat format, int depth, EsError *error);
/* Frees the pixels (if any) and zeroes the struct. Safe on a zeroed struct. */
void es_image_clear (EsImage *image);
/* Only the size checks of es_image_alloc, for decoders that want to refuse
 * early (before reading pixel data). */
bool es_image_check_size (int width, int height, EsFormat format, EsError *error);

void es_image_set_max_pixels (uint64_t max_pixels);
uint64_t es_image_get_max_pixels (void);

static inline void *
es_image_row (const EsImage *image, int y)
{
  return (uint8_t *) image->pixels + (size_t) y * image->stride;
}

/* The 8-bit view of a sample used by equalize and sharpen (DESIGN.md §1):
 * depth > 8 drops low bits (v >> 8 for 16-bit), depth < 8 shifts up. */
static inline uint8_t
es_sample_to_u8 (uint32_t v, int depth)
{
  return (uint8_t) (depth >= 8 ? v >> (depth - 8) : v << (8 - depth));
}

#ifdef __cplusplus
}
#endif
