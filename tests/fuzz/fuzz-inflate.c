/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for es_inflate_parallel, differential against zlib's uncompress: the input as a
 * zlib stream (es_inflate_parallel either says false or gives zlib's bytes), and the input
 * compressed by zlib at a level and strategy the input picks (it must give the input back). Chunks
 * of 64 to 1 KiB bytes on 1 to 4 threads, so that a short input is cut several times. */
#include <zlib.h>

#include "es-fuzz.h"
#include "es-inflate-parallel.h"

/* Enough for every seed; a stream inflating to more is refused by both. */
#define FUZZ_INFLATE_MAX (1u << 20)

static uint32_t
input_hash (const uint8_t *data, size_t size)
{
  uint32_t h = 2166136261u;

  for (size_t i = 0; i < size && i < 256; i++)
    h = (h ^ data[i]) * 16777619u;
  return h ^ (uint32_t) size * 2654435761u;
}

static EsInflateSplit
split_for (uint32_t h)
{
  return (EsInflateSplit){ .threads = 1 + (int) (h % 4), .min_chunk = 64 + (h >> 2) % 961 };
}

static void
check_stream (const uint8_t *z, size_t z_size, uint32_t h)
{
  uint8_t *ref = malloc (FUZZ_INFLATE_MAX), *out = malloc (FUZZ_INFLATE_MAX);
  uLongf ref_size = FUZZ_INFLATE_MAX;
  int zlib_result;
  size_t used = 0;
  EsInflateSplit split = split_for (h);
  bool ok;

  ES_FUZZ_REQUIRE (ref != NULL && out != NULL);
  zlib_result = uncompress (ref, &ref_size, z, z_size);
  ok = es_inflate_parallel (z, z_size, out, FUZZ_INFLATE_MAX, &used, &split);
  if (ok)
    {
      ES_FUZZ_REQUIRE (zlib_result == Z_OK);
      ES_FUZZ_REQUIRE (used == ref_size);
      ES_FUZZ_REQUIRE (memcmp (out, ref, used) == 0);
      /* The same stream into a buffer of exactly its size, and one byte less. */
      ES_FUZZ_REQUIRE (es_inflate_parallel (z, z_size, out, used, &used, &split) && used == ref_size);
      if (used > 0)
        ES_FUZZ_REQUIRE (!es_inflate_parallel (z, z_size, out, used - 1, &used, &split));
    }
  free (ref);
  free (out);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const int strategies[] = { Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED };
  uint32_t h = input_hash (data, size);
  z_stream s = { 0 };
  uLong bound;
  uint8_t *z;
  size_t used = 0;

  if (size > FUZZ_INFLATE_MAX / 4)
    return 0;
  check_stream (data, size, h);

  /* The input compressed: zlib's own streams always inflate. */
  if (deflateInit2 (&s, (int) (h % 10), Z_DEFLATED, 15, 8, strategies[h / 10 % 5]) != Z_OK)
    return 0;
  bound = deflateBound (&s, size);
  z = malloc (bound);
  ES_FUZZ_REQUIRE (z != NULL);
  s.next_in = (Bytef *) data;
  s.avail_in = (uInt) size;
  s.next_out = z;
  s.avail_out = (uInt) bound;
  ES_FUZZ_REQUIRE (deflate (&s, Z_FINISH) == Z_STREAM_END);
  {
    uint8_t *out = malloc (size + 1);
    EsInflateSplit split = split_for (h >> 7);
    ES_FUZZ_REQUIRE (out != NULL);
    ES_FUZZ_REQUIRE (es_inflate_parallel (z, s.total_out, out, size, &used, &split));
    ES_FUZZ_REQUIRE (used == size && memcmp (out, data, size) == 0);
    free (out);
  }
  deflateEnd (&s);
  free (z);
  return 0;
}
