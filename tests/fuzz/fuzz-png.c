/* libFuzzer harness for es_png_decode: the input as it is, then with its chunk CRCs repaired. */
#include "es-fuzz.h"

static void
decode (const uint8_t *data, size_t size)
{
  EsImage image = { 0 };
  EsError error = { 0 };

  es_fuzz_check (es_png_decode (data, size, &image, &error), &image, &error, 0);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t *repaired = malloc (size);

  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  decode (data, size);
  if (repaired != NULL)
    {
      memcpy (repaired, data, size);
      if (es_fuzz_fix_png_crcs (repaired, size))
        decode (repaired, size);
      free (repaired);
    }
  return 0;
}
