/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for es_png_decode: the input as it is, then with its chunk CRCs repaired; each
 * from memory and streamed from a descriptor in small pieces, also with a watch (rows told as they
 * complete) and with zlib inflating as it reads, which must all agree. */
#include "es-fuzz.h"
#include "es-png-inflate.h"

static bool
decode_reader (EsReader *reader, EsImage *image, EsError *error)
{
  return es_png_decode_reader (reader, image, NULL, ES_SAMPLES_IMAGE, error);
}

typedef struct {
  EsRowWatch watch;
  int told;
} Watch;

/* Rows are told in order, never past the image. */
static void
rows_decoded (EsRowWatch *watch, const EsImage *image, int rows)
{
  Watch *w = (Watch *) watch;

  if (rows <= w->told || rows > image->height)
    abort ();
  w->told = rows;
}

static bool
decode_reader_watched (EsReader *reader, EsImage *image, EsError *error)
{
  Watch w = { .watch = { .rows_decoded = rows_decoded } };
  bool ok = es_png_decode_reader (reader, image, &w.watch, ES_SAMPLES_IMAGE, error);

  if (ok && w.watch.kept.pixels != NULL)
    abort ();
  es_image_clear (&w.watch.kept);
  return ok;
}

/* zlib inflating as it reads, whether or not libdeflate is built in. */
static bool
decode_reader_zlib (EsReader *reader, EsImage *image, EsError *error)
{
  bool ok;

  es_png_inflate_force_streamed (true);
  ok = decode_reader_watched (reader, image, error);
  es_png_inflate_force_streamed (false);
  return ok;
}

static void
decode_all (const uint8_t *data, size_t size)
{
  es_fuzz_decode_both (data, size, es_png_decode, decode_reader);
  es_fuzz_decode_both (data, size, es_png_decode, decode_reader_watched);
  es_fuzz_decode_both (data, size, es_png_decode, decode_reader_zlib);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t *repaired = malloc (size);

  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  decode_all (data, size);
  if (repaired != NULL)
    {
      memcpy (repaired, data, size);
      if (es_fuzz_fix_png_crcs (repaired, size))
        decode_all (repaired, size);
      free (repaired);
    }
  return 0;
}
