/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the text matrix decoder; the first byte picks the level count (2..256).
 * Differential: the serial parser is the reference, and the parallel one (line starts found and
 * rows parsed concurrently, forced whatever the size) must give the same image or the same error;
 * so must the text cut where es_text_matrix_scan says the parser needs nothing more (where
 * es_load_fd stops reading), and the file loader streaming it from a descriptor in pieces. */
#include "es-fuzz.h"
#include "es-load-internal.h"
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
  parallel_ok = es_text_matrix_decode_split (data, size, levels, ES_TEXT_SPLIT_PARALLEL, &parallel, &parallel_error);

  ES_FUZZ_REQUIRE (serial_ok == parallel_ok);
  if (serial_ok)
    {
      ES_FUZZ_REQUIRE (serial.width == parallel.width && serial.height == parallel.height);
      ES_FUZZ_REQUIRE (serial.format == parallel.format && serial.depth == parallel.depth);
      for (int y = 0; y < serial.height; y++)
        ES_FUZZ_REQUIRE (memcmp (es_image_row (&serial, y), es_image_row (&parallel, y),
                                 (size_t) serial.width * es_format_size (serial.format))
                         == 0);
    }
  else
    {
      ES_FUZZ_REQUIRE (serial_error.code == parallel_error.code);
      ES_FUZZ_REQUIRE (strcmp (serial_error.message, parallel_error.message) == 0);
    }

  /* Cut where es_text_matrix_scan says the decoder needs nothing more (fed
   * in pieces, as the loader reads): the same verdict. */
  {
    EsTextScan scan = { 0 };
    size_t piece = es_fuzz_piece (data, size), needed = 0;
    bool done = false;

    while (!done && needed < size)
      {
        size_t n = piece == 0 || size - needed < piece ? size - needed : piece;
        needed += es_text_matrix_scan (&scan, data + needed, n, &done);
      }
    if (needed < size)
      {
        EsImage cut = { 0 };
        EsError cut_error = { 0 };
        bool cut_ok = es_text_matrix_decode_split (data, needed, levels, ES_TEXT_SPLIT_SERIAL, &cut, &cut_error);

        es_fuzz_require_same (serial_ok, &serial, &serial_error, cut_ok, &cut, &cut_error);
        es_fuzz_check (cut_ok, &cut, &cut_error, levels);
      }
  }

  /* What the loader recognises as a text matrix, it streams to the same verdict. */
  {
    const char *name;
    size_t head = size < ES_SNIFF_MAX ? size : ES_SNIFF_MAX;
    int fd;

    if (es_load_sniff (data, head, size <= ES_SNIFF_MAX, &name) == ES_INPUT_TEXT_MATRIX
        && (fd = es_fuzz_memfd (data, size)) >= 0)
      {
        EsImage loaded = { 0 };
        EsError loaded_error = { 0 };
        bool loaded_ok;

        es_reader_set_piece_max (es_fuzz_piece (data, size));
        loaded_ok = es_load_fd (fd, levels, &loaded, &loaded_error);
        es_reader_set_piece_max (0);
        close (fd);
        es_fuzz_require_same (serial_ok, &serial, &serial_error, loaded_ok, &loaded, &loaded_error);
        es_fuzz_check (loaded_ok, &loaded, &loaded_error, levels);
      }
  }

  es_fuzz_check (parallel_ok, &parallel, &parallel_error, levels);
  es_fuzz_check (serial_ok, &serial, &serial_error, levels);
  return 0;
}
