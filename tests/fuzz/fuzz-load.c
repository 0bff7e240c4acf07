/* libFuzzer harness for es_load_memory: format detection, then whichever decoder it picks. */
#include "es-fuzz.h"

/* The level count the command line and the window use by default. */
#define ES_FUZZ_LEVELS 16

static const uint8_t png_signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

static void
load (const uint8_t *data, size_t size)
{
  EsImage image = { 0 };
  EsError error = { 0 };
  bool is_png = size >= 8 && memcmp (data, png_signature, 8) == 0;
  bool is_pgm = size >= 2 && data[0] == 'P' && (data[1] == '2' || data[1] == '5');

  /* Only a text matrix carries levels; PNG and PGM give raw samples. */
  es_fuzz_check (es_load_memory (data, size, ES_FUZZ_LEVELS, &image, &error), &image, &error,
                 is_png || is_pgm ? 0 : ES_FUZZ_LEVELS);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  load (data, size);
  /* A PNG goes through a second time with its chunk CRCs repaired. */
  if (size >= 8 && memcmp (data, png_signature, 8) == 0)
    {
      uint8_t *repaired = malloc (size);
      if (repaired != NULL)
        {
          memcpy (repaired, data, size);
          if (es_fuzz_fix_png_crcs (repaired, size))
            load (repaired, size);
          free (repaired);
        }
    }
  return 0;
}
