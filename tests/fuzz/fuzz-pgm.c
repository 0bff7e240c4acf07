/* libFuzzer harness for es_pgm_decode. */
#include "es-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  EsImage image = { 0 };
  EsError error = { 0 };

  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  es_fuzz_check (es_pgm_decode (data, size, &image, &error), &image, &error, 0);
  return 0;
}
