/* libFuzzer harness for the text matrix decoder; the first byte picks the level count (2..256).
 * Differential: the serial parser is the reference, and the parallel one (line starts found and
 * rows parsed concurrently, forced whatever the size) must give the same image or the same error. */
#include "es-fuzz.h"
#include "es-text-matrix-internal.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  EsImage serial = { 0 }, parallel = { 0 };
  EsError serial_error = { 0 }, parallel_error = { 0 };
  int levels = 16;
  bool serial_ok, parallel_ok;

  if (size > 0)
    {
      levels = 2 + data[0] % 255;
      data++;
      size--;
    }
  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  serial_ok = es_text_matrix_decode_split (data, size, levels, ES_TEXT_SPLIT_SERIAL, &serial, &serial_error);
  parallel_ok = es_text_matrix_decode_split (data, size, levels, ES_TEXT_SPLIT_PARALLEL, &parallel,
                                             &parallel_error);

  ES_FUZZ_REQUIRE (serial_ok == parallel_ok);
  if (serial_ok)
    {
      ES_FUZZ_REQUIRE (serial.width == parallel.width && serial.height == parallel.height);
      ES_FUZZ_REQUIRE (serial.format == parallel.format && serial.depth == parallel.depth);
      for (int y = 0; y < serial.height; y++)
        ES_FUZZ_REQUIRE (memcmp (es_image_row (&serial, y), es_image_row (&parallel, y),
                                 (size_t) serial.width * es_format_size (serial.format)) == 0);
    }
  else
    {
      ES_FUZZ_REQUIRE (serial_error.code == parallel_error.code);
      ES_FUZZ_REQUIRE (strcmp (serial_error.message, parallel_error.message) == 0);
    }
  es_fuzz_check (parallel_ok, &parallel, &parallel_error, levels);
  es_fuzz_check (serial_ok, &serial, &serial_error, levels);
  return 0;
}
