/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for es_png_decode: the input as it is, then with its chunk CRCs repaired; each
 * from memory and streamed from a descriptor in small pieces, which must agree. */
#include "es-fuzz.h"
#include "es-load-internal.h"

static void
decode (const uint8_t *data, size_t size)
{
  EsImage image = { 0 }, streamed = { 0 };
  EsError error = { 0 }, streamed_error = { 0 };
  EsReader reader;
  bool ok, streamed_ok;
  int fd;

  ok = es_png_decode (data, size, &image, &error);
  fd = es_fuzz_memfd (data, size);
  if (fd >= 0 && es_reader_init_fd (&reader, fd, es_load_get_max_file_size (), &streamed_error))
    {
      es_reader_set_piece_max (es_fuzz_piece (data, size));
      streamed_ok = es_png_decode_reader (&reader, &streamed, &streamed_error);
      es_reader_set_piece_max (0);
      es_reader_clear (&reader);
      es_fuzz_require_same (ok, &image, &error, streamed_ok, &streamed, &streamed_error);
      es_fuzz_check (streamed_ok, &streamed, &streamed_error, 0);
    }
  if (fd >= 0)
    close (fd);
  es_fuzz_check (ok, &image, &error, 0);
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
