/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for loading: format recognition, then whichever decoder it picks, from memory
 * and streamed from a descriptor in bounded pieces. Differential: the streamed load (a memory
 * file, read a few bytes at a time) must say exactly what the memory load says, and a load from a
 * pipe under a size limit below the input's size must agree too or say the file is too large. */
#include "es-fuzz.h"
#include "es-load-internal.h"

/* The level count the command line and the window use by default. */
#define ES_FUZZ_LEVELS 16

static const uint8_t png_signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

/* Only a text matrix carries levels; PNG and PGM give raw samples. */
static int
levels_of (const uint8_t *data, size_t size)
{
  const char *name;
  size_t head = size < ES_SNIFF_MAX ? size : ES_SNIFF_MAX;

  return es_load_sniff (data, head, size <= ES_SNIFF_MAX, &name) == ES_INPUT_TEXT_MATRIX ? ES_FUZZ_LEVELS : 0;
}

static void
load (const uint8_t *data, size_t size)
{
  EsImage image = { 0 }, streamed = { 0 }, limited = { 0 };
  EsError error = { 0 }, streamed_error = { 0 }, limited_error = { 0 };
  bool ok, streamed_ok, limited_ok;
  int fd;

  ok = es_load_memory (data, size, ES_FUZZ_LEVELS, &image, &error);

  /* The same bytes from a regular file, in pieces. */
  fd = es_fuzz_memfd (data, size);
  if (fd >= 0)
    {
      es_reader_set_piece_max (es_fuzz_piece (data, size));
      streamed_ok = es_load_fd (fd, ES_FUZZ_LEVELS, &streamed, &streamed_error);
      es_reader_set_piece_max (0);
      close (fd);
      es_fuzz_require_same (ok, &image, &error, streamed_ok, &streamed, &streamed_error);
      es_fuzz_check (streamed_ok, &streamed, &streamed_error, levels_of (data, size));
    }

  /* From a pipe (no size to trust) with a limit below the size. */
  if (size >= 2 && (fd = es_fuzz_pipe (data, size)) >= 0)
    {
      es_load_set_max_file_size (size / 2 + size % 7);
      es_reader_set_piece_max (es_fuzz_piece (data, size / 2));
      limited_ok = es_load_fd (fd, ES_FUZZ_LEVELS, &limited, &limited_error);
      es_reader_set_piece_max (0);
      es_load_set_max_file_size (0);
      close (fd);
      es_fuzz_require_same_or_limit (ok, &image, &error, limited_ok, &limited, &limited_error);
      es_fuzz_check (limited_ok, &limited, &limited_error, levels_of (data, size));
    }

  es_fuzz_check (ok, &image, &error, levels_of (data, size));
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
