/* libFuzzer harness for es_text_matrix_decode; the first byte picks the level count (2..256). */
#include "es-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  EsImage image = { 0 };
  EsError error = { 0 };
  int levels = 16;

  if (size > 0)
    {
      levels = 2 + data[0] % 255;
      data++;
      size--;
    }
  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  es_fuzz_check (es_text_matrix_decode (data, size, levels, &image, &error), &image, &error, levels);
  return 0;
}
