/* Shared by the fuzz harnesses and the replay driver: the entry point and the decoder contract checks. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-load.h"

/* Small enough that a claimed size of a few gigapixels is refused instead of
 * allocated (libFuzzer's RSS limit), large enough for every seed. */
#define ES_FUZZ_MAX_PIXELS (1u << 22)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A broken contract is a finding: say which and stop, so that libFuzzer
 * saves the input and the replay driver names it. */
#define ES_FUZZ_REQUIRE(condition)                                                   \
  do                                                                                 \
    {                                                                                \
      if (!(condition))                                                              \
        {                                                                            \
          fprintf (stderr, "%s:%d: decoder contract broken: %s\n", __FILE__, __LINE__, \
                   #condition);                                                      \
          __builtin_trap ();                                                         \
        }                                                                            \
    }                                                                                \
  while (0)

/* CRC-32 of PNG chunks (ISO 3309), bit by bit: inputs are small. */
static inline uint32_t
es_fuzz_crc32 (const uint8_t *data, size_t size)
{
  uint32_t c = 0xffffffffu;

  for (size_t i = 0; i < size; i++)
    {
      c ^= data[i];
      for (int k = 0; k < 8; k++)
        c = c >> 1 ^ (0xedb88320u & -(c & 1));
    }
  return ~c;
}

/* Rewrites the CRC of every whole chunk after the 8-byte signature. Returns
 * whether anything changed. libpng rejects a chunk with a bad CRC before
 * looking inside, and libpng is not instrumented, so without this almost
 * every mutation would die at the first CRC check. */
static inline bool
es_fuzz_fix_png_crcs (uint8_t *data, size_t size)
{
  bool changed = false;

  for (size_t pos = 8; size >= 12 && pos <= size - 12;)
    {
      uint32_t length = (uint32_t) data[pos] << 24 | (uint32_t) data[pos + 1] << 16
                        | (uint32_t) data[pos + 2] << 8 | data[pos + 3];
      if (length > size - 12 - pos)
        break;
      uint32_t crc = es_fuzz_crc32 (data + pos + 4, (size_t) length + 4);
      uint8_t *out = data + pos + 8 + length;
      uint8_t want[4] = { crc >> 24, crc >> 16, crc >> 8, crc };
      if (memcmp (out, want, 4) != 0)
        {
          memcpy (out, want, 4);
          changed = true;
        }
      pos += (size_t) length + 12;
    }
  return changed;
}

/* Checks what es-load.h promises about a decode, reads every sample (so that
 * AddressSanitizer sees a buffer shorter than the size claims) and frees the
 * image. levels is the text-matrix level count, or 0 for PNG and PGM. */
static inline void
es_fuzz_check (bool ok, EsImage *image, const EsError *error, int levels)
{
  if (!ok)
    {
      ES_FUZZ_REQUIRE (error->code != ES_OK);
      ES_FUZZ_REQUIRE (error->message[0] != '\0');
      ES_FUZZ_REQUIRE (memchr (error->message, '\0', sizeof error->message) != NULL);
      ES_FUZZ_REQUIRE (image->pixels == NULL);
      es_image_clear (image);
      return;
    }

  ES_FUZZ_REQUIRE (image->pixels != NULL);
  ES_FUZZ_REQUIRE (image->width >= 1 && image->height >= 1);
  ES_FUZZ_REQUIRE ((uint64_t) image->width * (uint64_t) image->height <= ES_FUZZ_MAX_PIXELS);
  ES_FUZZ_REQUIRE (image->format == ES_FORMAT_U8 || image->format == ES_FORMAT_U16);
  ES_FUZZ_REQUIRE (image->stride >= (size_t) image->width * es_format_size (image->format));
  ES_FUZZ_REQUIRE (image->depth >= 1 && image->depth <= (image->format == ES_FORMAT_U8 ? 8 : 16));
  ES_FUZZ_REQUIRE (image->levels == levels);

  /* Every sample fits its depth, and a text matrix holds only levels. */
  uint32_t limit = levels ? (uint32_t) levels : 1u << image->depth;
  for (int y = 0; y < image->height; y++)
    {
      const void *row = es_image_row (image, y);
      for (int x = 0; x < image->width; x++)
        {
          uint32_t v = image->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x]
                                                     : ((const uint16_t *) row)[x];
          ES_FUZZ_REQUIRE (v < limit && v < 1u << image->depth);
        }
    }
  es_image_clear (image);
}
