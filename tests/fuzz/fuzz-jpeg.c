/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for JPEG through libjpeg-turbo: the input from memory and streamed from a descriptor in small
 * pieces, as an image and as cells, which must agree and keep the decoder contract; and the input as an APP1
 * payload for the EXIF orientation parser. Without libjpeg-turbo a JPEG must be refused by name. */
#include "es-fuzz.h"

#ifdef ES_HAVE_JPEG
#include "es-jpeg.h"

static bool
decode_reader (EsReader *reader, EsImage *image, EsError *error)
{
  return es_jpeg_decode_reader (reader, image, ES_SAMPLES_IMAGE, error);
}

/* Cells from memory, to compare with cells streamed. */
static bool
decode_cells (const void *data, size_t size, EsImage *image, EsError *error)
{
  EsReader reader;

  es_reader_init_memory (&reader, data, size);
  return es_jpeg_decode_reader (&reader, image, ES_SAMPLES_CELLS, error);
}

static bool
decode_cells_reader (EsReader *reader, EsImage *image, EsError *error)
{
  return es_jpeg_decode_reader (reader, image, ES_SAMPLES_CELLS, error);
}
#endif

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
#ifdef ES_HAVE_JPEG
  int orientation = es_jpeg_exif_orientation (data, size);

  ES_FUZZ_REQUIRE (orientation >= 1 && orientation <= 8);
  es_fuzz_decode_both (data, size, es_jpeg_decode, decode_reader);
  es_fuzz_decode_both (data, size, decode_cells, decode_cells_reader);
#else
  EsImage image = { 0 };
  EsError error = { 0 };

  if (size >= 3 && memcmp (data, "\xff\xd8\xff", 3) == 0)
    {
      ES_FUZZ_REQUIRE (!es_load_memory (data, size, 0, &image, &error));
      ES_FUZZ_REQUIRE (strstr (error.message, "JPEG is not supported") != NULL);
    }
  es_image_clear (&image);
#endif
  return 0;
}
