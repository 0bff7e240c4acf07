/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for es_pgm_decode, from memory and streamed from a descriptor in small pieces:
 * both must give the same image or the same error. */
#include "es-fuzz.h"
#include "es-load-internal.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  EsImage image = { 0 }, streamed = { 0 };
  EsError error = { 0 }, streamed_error = { 0 };
  EsReader reader;
  bool ok, streamed_ok;
  int fd;

  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  ok = es_pgm_decode (data, size, &image, &error);
  fd = es_fuzz_memfd (data, size);
  if (fd >= 0 && es_reader_init_fd (&reader, fd, es_load_get_max_file_size (), &streamed_error))
    {
      es_reader_set_piece_max (es_fuzz_piece (data, size));
      streamed_ok = es_pgm_decode_reader (&reader, &streamed, &streamed_error);
      es_reader_set_piece_max (0);
      es_reader_clear (&reader);
      es_fuzz_require_same (ok, &image, &error, streamed_ok, &streamed, &streamed_error);
      es_fuzz_check (streamed_ok, &streamed, &streamed_error, 0);
    }
  if (fd >= 0)
    close (fd);
  es_fuzz_check (ok, &image, &error, 0);
  return 0;
}
