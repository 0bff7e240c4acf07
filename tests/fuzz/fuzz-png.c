/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for es_png_decode: the input as it is, then with its chunk CRCs repaired; each
 * from memory and streamed from a descriptor in small pieces, which must agree. */
#include "es-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t *repaired = malloc (size);

  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  es_fuzz_decode_both (data, size, es_png_decode, es_png_decode_reader);
  if (repaired != NULL)
    {
      memcpy (repaired, data, size);
      if (es_fuzz_fix_png_crcs (repaired, size))
        es_fuzz_decode_both (repaired, size, es_png_decode, es_png_decode_reader);
      free (repaired);
    }
  return 0;
}
