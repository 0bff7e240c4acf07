/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for es_pgm_decode, from memory and streamed from a descriptor in small pieces:
 * both must give the same image or the same error. */
#include "es-fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  es_fuzz_decode_both (data, size, es_pgm_decode, es_pgm_decode_reader);
  return 0;
}
