/* SPDX-License-Identifier: MIT */
/* es_inflate_parallel against zlib's uncompress, byte for byte, with chunks of a few hundred bytes
 * on 1 to 8 threads: zlib's every level and strategy, flush points, stored blocks, hand-made
 * streams whose matches reach exactly 32768 back across chunk cuts; and damaged streams, which
 * must give false (or, where zlib takes them too, zlib's bytes). The chunk decoder's markers are
 * checked directly on a stream whose block starts are known. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "es-inflate-chunk.h"
#include "es-inflate-parallel.h"
#include "tap.h"

typedef struct {
  uint8_t *data;
  size_t size, capacity;
} Buffer;

static void
buffer_reserve (Buffer *b, size_t more)
{
  if (b->size + more <= b->capacity)
    return;
  b->capacity = (b->size + more) * 2;
  b->data = realloc (b->data, b->capacity);
  if (b->data == NULL)
    abort ();
}

static void
buffer_put (Buffer *b, const void *p, size_t n)
{
  buffer_reserve (b, n);
  memcpy (b->data + b->size, p, n);
  b->size += n;
}

static unsigned long long rng;

/* ---- data ---------------------------------------------------------------- */

static Buffer
random_bytes (size_t size)
{
  Buffer b = { 0 };
  buffer_reserve (&b, size + 1);
  for (size_t i = 0; i < size; i++)
    b.data[i] = (uint8_t) (tap_random (&rng) >> 56);
  b.size = size;
  return b;
}

static Buffer
text_like (size_t size)
{
  static const char *const words[] = { "entropy", "window", "the",   "of",   "a",  "histogram", "levels", "pixel",
                                       "and",     "local",  "image", "band", "\n", "CUDA",      "is" };
  Buffer b = { 0 };
  while (b.size < size)
    {
      const char *w = words[tap_random (&rng) % (sizeof words / sizeof words[0])];
      buffer_put (&b, w, strlen (w));
      buffer_put (&b, " ", 1);
    }
  b.size = size;
  return b;
}

/* Rows of a smooth picture with noise, each with PNG's Sub filter and its
 * filter byte in front, as an 8-bit gray PNG's IDAT holds them. */
static Buffer
photo_rows (int width, int height)
{
  Buffer b = { 0 };
  buffer_reserve (&b, (size_t) (width + 1) * height + 1);
  for (int y = 0; y < height; y++)
    {
      uint8_t left = 0;
      b.data[b.size++] = 1;
      for (int x = 0; x < width; x++)
        {
          int v = 128 + (x * 3 + y * 2) % 97 - (x * y / 31) % 23 + (int) (tap_random (&rng) % 9) - 4;
          uint8_t pixel = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v);
          b.data[b.size++] = (uint8_t) (pixel - left);
          left = pixel;
        }
    }
  return b;
}

/* Runs and short periods: matches at distances 1 to 7 and long lengths. */
static Buffer
runs (size_t size)
{
  Buffer b = { 0 };
  buffer_reserve (&b, size + 300);
  while (b.size < size)
    {
      size_t period = 1 + tap_random (&rng) % 7, length = 3 + tap_random (&rng) % 290;
      for (size_t i = 0; i < length; i++)
        b.data[b.size + i] = i < period ? (uint8_t) tap_random (&rng) : b.data[b.size + i - period];
      b.size += length;
    }
  b.size = size;
  return b;
}

/* ---- zlib ---------------------------------------------------------------- */

/* The zlib stream of data; flush_every > 0 puts a Z_SYNC_FLUSH and a
 * Z_FULL_FLUSH in turn after every so many bytes. */
static Buffer
zlib_stream (const Buffer *data, int level, int strategy, size_t flush_every)
{
  Buffer z = { 0 };
  z_stream s = { 0 };
  size_t done = 0;
  int flushes = 0, ret = Z_OK;

  deflateInit2 (&s, level, Z_DEFLATED, 15, 8, strategy);
  buffer_reserve (&z, deflateBound (&s, data->size) + (flush_every ? data->size / flush_every + 1 : 1) * 16 + 64);
  s.next_out = z.data;
  s.avail_out = (uInt) z.capacity;
  while (ret != Z_STREAM_END)
    {
      size_t piece = flush_every && data->size - done > flush_every ? flush_every : data->size - done;
      int flush = piece < data->size - done ? (flushes++ % 2 ? Z_FULL_FLUSH : Z_SYNC_FLUSH) : Z_FINISH;
      s.next_in = data->data + done;
      s.avail_in = (uInt) piece;
      ret = deflate (&s, flush);
      done += piece;
      if (ret != Z_OK && ret != Z_STREAM_END)
        abort ();
    }
  z.size = s.total_out;
  deflateEnd (&s);
  return z;
}

/* ---- the checks ------------------------------------------------------------ */

/* Inflates z with every split of the table and compares with what zlib
 * makes of it; also an output buffer one byte short (false) and longer (true). */
static void
check_agrees (const char *what, const Buffer *z, const Buffer *expect)
{
  static const int threads[] = { 1, 2, 3, 8 };
  static const size_t chunks[] = { 64, 509, 4096 };
  uint8_t *out = malloc (expect->size + 16), *ref = malloc (expect->size + 16);
  uLongf ref_size = expect->size + 16;
  bool ok = uncompress (ref, &ref_size, z->data, z->size) == Z_OK && ref_size == expect->size
            && memcmp (ref, expect->data, expect->size) == 0;
  char failure[160] = "";

  for (size_t t = 0; ok && t < sizeof threads / sizeof threads[0]; t++)
    for (size_t c = 0; ok && c < sizeof chunks / sizeof chunks[0]; c++)
      {
        EsInflateSplit split = { threads[t], chunks[c] };
        size_t used = 0;
        memset (out, 0xa5, expect->size + 16);
        ok = es_inflate_parallel (z->data, z->size, out, expect->size, &used, &split) && used == expect->size
             && memcmp (out, expect->data, used) == 0;
        if (!ok)
          snprintf (failure, sizeof failure, " (threads %d, chunks of %zu)", threads[t], chunks[c]);
      }
  if (ok)
    {
      EsInflateSplit split = { 2, 64 };
      size_t used = 0;
      ok = es_inflate_parallel (z->data, z->size, out, expect->size + 16, &used, &split) && used == expect->size;
      if (!ok)
        snprintf (failure, sizeof failure, " (a larger buffer)");
      if (ok && expect->size > 0 && es_inflate_parallel (z->data, z->size, out, expect->size - 1, &used, &split))
        {
          ok = false;
          snprintf (failure, sizeof failure, " (true with one byte too little room)");
        }
    }
  tap_ok (ok, "%s: %zu bytes from %zu, as zlib%s", what, expect->size, z->size, failure);
  free (out);
  free (ref);
}

/* The cuts of es_inflate_parallel with chunks of `min_chunk` on 8 threads at
 * which a block start is found: a stream with none never goes parallel. */
static size_t
starts_found (const Buffer *z, size_t min_chunk)
{
  size_t size = z->size - 2, cuts = size / min_chunk, found = 0;
  if (cuts > 32)
    cuts = 32;
  for (size_t k = 1; k < cuts; k++)
    found += es_inflate_find_block (z->data + 2, size, k * size / cuts * 8, (k + 1) * size / cuts * 8) != SIZE_MAX;
  return found;
}

static void
test_zlib_streams (void)
{
  static const struct {
    const char *name;
    int strategy;
  } strategies[] = {
    { "filtered", Z_FILTERED }, { "Huffman only", Z_HUFFMAN_ONLY }, { "RLE", Z_RLE }, { "fixed", Z_FIXED }
  };
  Buffer data[5] = { random_bytes (150000), text_like (200000), photo_rows (613, 331), runs (180000), { 0 } };
  const char *names[5] = { "random", "text", "photo rows", "runs", "text and random (stored blocks between)" };

  for (int part = 0; part < 8; part++)
    {
      Buffer piece = part % 2 ? random_bytes (9000 + 3000 * part) : text_like (20000);
      buffer_put (&data[4], piece.data, piece.size);
      free (piece.data);
    }
  char what[128];

  for (int d = 0; d < 5; d++)
    {
      for (int level = 0; level <= 9; level++)
        {
          Buffer z = zlib_stream (&data[d], level, Z_DEFAULT_STRATEGY, 0);
          snprintf (what, sizeof what, "%s, level %d", names[d], level);
          check_agrees (what, &z, &data[d]);
          if (d == 2 && level == 6)
            tap_ok (starts_found (&z, 509) >= 3, "photo rows, level 6: block starts found at %zu cuts",
                    starts_found (&z, 509));
          free (z.data);
        }
      for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; s++)
        {
          Buffer z = zlib_stream (&data[d], 6, strategies[s].strategy, 0);
          snprintf (what, sizeof what, "%s, %s", names[d], strategies[s].name);
          check_agrees (what, &z, &data[d]);
          free (z.data);
        }
      Buffer z = zlib_stream (&data[d], 6, Z_DEFAULT_STRATEGY, 7777);
      snprintf (what, sizeof what, "%s, sync and full flushes", names[d]);
      check_agrees (what, &z, &data[d]);
      free (z.data);
    }
  for (int d = 0; d < 5; d++)
    free (data[d].data);

  /* Small ones. */
  Buffer empty = { 0 }, one = { 0 };
  empty.data = malloc (1);
  buffer_put (&one, "E", 1);
  Buffer z = zlib_stream (&empty, 6, Z_DEFAULT_STRATEGY, 0);
  check_agrees ("empty stream", &z, &empty);
  free (z.data);
  z = zlib_stream (&one, 9, Z_DEFAULT_STRATEGY, 0);
  check_agrees ("one byte", &z, &one);
  free (z.data);
  free (empty.data);
  free (one.data);
}

/* ---- hand-made streams: dynamic blocks with matches 32768 back ----------- */

typedef struct {
  Buffer out;
  uint64_t bits;
  unsigned count;
} BitWriter;

static void
put_bits (BitWriter *w, uint32_t value, unsigned n)
{
  w->bits |= (uint64_t) value << w->count;
  w->count += n;
  while (w->count >= 8)
    {
      uint8_t byte = (uint8_t) w->bits;
      buffer_put (&w->out, &byte, 1);
      w->bits >>= 8;
      w->count -= 8;
    }
}

/* Huffman codes go most significant bit first. */
static void
put_code (BitWriter *w, uint32_t code, unsigned length)
{
  uint32_t reversed = 0;
  for (unsigned i = 0; i < length; i++)
    reversed = reversed << 1 | (code >> i & 1);
  put_bits (w, reversed, length);
}

static size_t
bit_position (const BitWriter *w)
{
  return w->out.size * 8 + w->count;
}

/* A complete code over all 286 literal/length symbols (226 of 8 bits, 60 of
 * 9) and all 30 distances (28 of 5 bits, 2 of 4), and their canonical codes. */
static uint8_t hand_lens[316];
static uint32_t hand_codes[316];

static void
canonical_codes (const uint8_t *lens, unsigned n, uint32_t *codes)
{
  unsigned count[16] = { 0 }, next[16] = { 0 };
  for (unsigned i = 0; i < n; i++)
    count[lens[i]]++;
  count[0] = 0;
  for (unsigned len = 1; len < 16; len++)
    next[len] = (next[len - 1] + count[len - 1]) << 1;
  for (unsigned i = 0; i < n; i++)
    if (lens[i])
      codes[i] = next[lens[i]]++;
}

static void
hand_code_init (void)
{
  for (unsigned i = 0; i < 286; i++)
    hand_lens[i] = i < 226 ? 8 : 9;
  for (unsigned i = 0; i < 30; i++)
    hand_lens[286 + i] = i < 28 ? 5 : 4;
  canonical_codes (hand_lens, 286, hand_codes);
  canonical_codes (hand_lens + 286, 30, hand_codes + 286);
}

static void
put_dynamic_header (BitWriter *w, bool final)
{
  /* The code-length code: lengths 4, 5, 8 and 9 get the 2-bit codes 00, 01, 10, 11. */
  static const uint8_t order_lens[12] = { 0, 0, 0, 0, 2, 0, 2, 0, 0, 2, 0, 2 };
  put_bits (w, final, 1);
  put_bits (w, 2, 2);
  put_bits (w, 29, 5);
  put_bits (w, 29, 5);
  put_bits (w, 8, 4);
  for (int i = 0; i < 12; i++)
    put_bits (w, order_lens[i], 3);
  for (int i = 0; i < 316; i++)
    put_code (w, hand_lens[i] == 4 ? 0 : hand_lens[i] == 5 ? 1 : hand_lens[i] == 8 ? 2 : 3, 2);
}

static void
put_literal (BitWriter *w, Buffer *expect, uint8_t byte)
{
  put_code (w, hand_codes[byte], hand_lens[byte]);
  buffer_put (expect, &byte, 1);
}

/* Distance code d's smallest distance (RFC 1951, 3.2.5). */
static unsigned
dist_base (unsigned d)
{
  return d < 4 ? d + 1 : ((2u + (d & 1)) << (d / 2 - 1)) + 1;
}

static void
put_match (BitWriter *w, Buffer *expect, unsigned length, unsigned dist)
{
  static const uint16_t lbase[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
  static const uint8_t lextra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
  unsigned l = 28, d = 29;
  while (lbase[l] > length)
    l--;
  while (dist_base (d) > dist)
    d--;
  unsigned dextra = d < 4 ? 0 : d / 2 - 1;
  put_code (w, hand_codes[257 + l], hand_lens[257 + l]);
  put_bits (w, length - lbase[l], lextra[l]);
  put_code (w, hand_codes[286 + d], hand_lens[286 + d]);
  put_bits (w, dist - dist_base (d), dextra);
  buffer_reserve (expect, length);
  for (unsigned i = 0; i < length; i++)
    expect->data[expect->size + i] = expect->data[expect->size + i - dist];
  expect->size += length;
}

#define HAND_BLOCKS 40

/* Blocks of matches 32768 back (258 long, and short ones), some literals
 * and short-distance matches: every chunk reaches into the window before it
 * and copies markers. Every tenth block is 32 KiB of random literals or a
 * little more, after which a chunk goes on in bytes. */
typedef struct {
  Buffer z, expect;
  size_t block_bit[HAND_BLOCKS + 1]; /* where each block starts; then where the last ends */
  size_t block_out[HAND_BLOCKS + 1];
} HandStream;

static HandStream
hand_stream (void)
{
  HandStream h = { 0 };
  BitWriter w = { 0 };
  static const uint8_t header[2] = { 0x78, 0x9c };

  buffer_put (&w.out, header, 2);
  for (int block = 0; block < HAND_BLOCKS; block++)
    {
      h.block_bit[block] = bit_position (&w) - 16;
      h.block_out[block] = h.expect.size;
      put_dynamic_header (&w, block == HAND_BLOCKS - 1);
      if (block % 10 == 0)
        for (int i = 0; i < 32768 + block * 10; i++)
          put_literal (&w, &h.expect, (uint8_t) (tap_random (&rng) >> 56));
      else
        for (int i = 0; i < 60; i++)
          {
            unsigned kind = (unsigned) (tap_random (&rng) % 8);
            if (kind < 4)
              put_match (&w, &h.expect, 258, 32768);
            else if (kind == 4)
              put_match (&w, &h.expect, 3 + (unsigned) (tap_random (&rng) % 256), 32768);
            else if (kind == 5)
              put_literal (&w, &h.expect, (uint8_t) tap_random (&rng));
            else
              put_match (&w, &h.expect, 3 + (unsigned) (tap_random (&rng) % 256),
                         1 + (unsigned) (tap_random (&rng) % 32768));
          }
      put_code (&w, hand_codes[256], hand_lens[256]);
    }
  h.block_bit[HAND_BLOCKS] = bit_position (&w) - 16;
  h.block_out[HAND_BLOCKS] = h.expect.size;
  if (w.count)
    put_bits (&w, 0, 8 - w.count);
  uint32_t adler = (uint32_t) adler32 (1, h.expect.data, (uInt) h.expect.size);
  uint8_t trailer[4] = { adler >> 24, adler >> 16, adler >> 8, adler };
  buffer_put (&w.out, trailer, 4);
  h.z = w.out;
  return h;
}

/* A chunk decoded from each true block start, its markers resolved with the
 * expected bytes before it, is the expected output; and the finder never
 * passes a true block start. */
static void
test_chunks (const HandStream *h)
{
  const uint8_t *data = h->z.data + 2;
  size_t size = h->z.size - 2;
  bool decoded = true, found = true, markers = false, switched = false;

  for (int block = 1; block < HAND_BLOCKS - 4; block += 3)
    {
      EsInflateChunk c = { .start_bit = h->block_bit[block],
                           .stop_bit = h->block_bit[block + 4],
                           .max_out = h->expect.size };
      size_t offset = h->block_out[block], length;
      bool ok = es_inflate_chunk_decode (&c, data, size) && !c.final && c.end_bit == h->block_bit[block + 4]
                && (length = es_inflate_chunk_size (&c)) == h->block_out[block + 4] - offset;
      for (size_t i = 0; ok && i < length; i++)
        {
          unsigned s = i < c.symbol_count ? c.symbols[i] : c.bytes[c.bytes_begin + i - c.symbol_count];
          markers |= s >= ES_INFLATE_MARKER;
          uint8_t byte = s < 256 ? (uint8_t) s : h->expect.data[offset - ES_INFLATE_WINDOW + (s - ES_INFLATE_MARKER)];
          ok = byte == h->expect.data[offset + i];
        }
      switched |= c.bytes_end > c.bytes_begin;
      decoded &= ok;
      es_inflate_chunk_clear (&c);
      size_t at = es_inflate_find_block (data, size, h->block_bit[block] + 1, size * 8);
      found &= at <= h->block_bit[block + 1];
    }
  tap_ok (decoded && markers && switched,
          "chunks from true block starts, markers resolved, are the stream's bytes (markers %d, bytes %d)", markers,
          switched);
  tap_ok (found, "the block finder never passes a true block start");

  /* The chunks' shared memory budget: too small, the decode fails; all of
   * it comes back when the chunk is cleared. */
  size_t budget = 100000;
  EsInflateChunk c = {
    .start_bit = h->block_bit[1], .stop_bit = SIZE_MAX, .max_out = h->expect.size, .budget = &budget
  };
  bool refused = !es_inflate_chunk_decode (&c, data, size);
  es_inflate_chunk_clear (&c);
  tap_ok (refused && budget == 100000, "a chunk that needs more than the memory budget fails and gives it back");
}

/* ---- damaged streams ------------------------------------------------------- */

/* es_inflate_parallel on a damaged stream: false, or (where zlib takes the
 * stream too) zlib's bytes. Returns whether it said true. */
static bool
damaged_ok (const uint8_t *z, size_t z_size, size_t capacity, bool *agrees)
{
  EsInflateSplit split = { 3, 64 };
  uint8_t *out = malloc (capacity + 1), *ref = malloc (capacity + 1);
  uLongf ref_size = capacity;
  size_t used = 0;
  bool ok = es_inflate_parallel (z, z_size, out, capacity, &used, &split);

  *agrees = !ok || (uncompress (ref, &ref_size, z, z_size) == Z_OK && ref_size == used && memcmp (ref, out, used) == 0);
  free (out);
  free (ref);
  return ok;
}

static void
test_damaged (void)
{
  Buffer data = photo_rows (97, 53), z = zlib_stream (&data, 6, Z_DEFAULT_STRATEGY, 0);
  Buffer copy = { 0 };
  size_t accepted = 0, truncated_ok = 0;
  bool agree = true, a;
  EsInflateSplit split = { 2, 64 };
  size_t used;

  buffer_put (&copy, z.data, z.size);
  tap_diag ("damaged copies of a %zu-byte stream (%zu bytes inflated)", z.size, data.size);
  for (size_t i = 0; i < z.size * 8; i++)
    {
      copy.data[i / 8] ^= (uint8_t) (1u << i % 8);
      accepted += damaged_ok (copy.data, copy.size, data.size + 64, &a);
      agree &= a;
      copy.data[i / 8] ^= (uint8_t) (1u << i % 8);
    }
  tap_ok (agree, "a flipped bit anywhere: false or zlib's bytes (%zu of %zu flips accepted, as by zlib)", accepted,
          z.size * 8);
  for (size_t n = 0; n < z.size; n++)
    {
      uint8_t *cut = malloc (n + 1);
      memcpy (cut, z.data, n);
      truncated_ok += damaged_ok (cut, n, data.size + 64, &a);
      free (cut);
    }
  tap_ok (truncated_ok == 0, "every truncation refused (%zu accepted)", truncated_ok);

  uint8_t *out = malloc (data.size + 64);
  copy.data[copy.size - 1] ^= 1;
  tap_ok (!es_inflate_parallel (copy.data, copy.size, out, data.size, &used, &split), "a wrong Adler-32 is refused");
  copy.data[copy.size - 1] ^= 1;
  buffer_put (&copy, "junk after the stream", 21);
  tap_ok (es_inflate_parallel (copy.data, copy.size, out, data.size, &used, &split) && used == data.size
            && memcmp (out, data.data, used) == 0,
          "bytes after the Adler-32 are ignored");
  tap_ok (es_inflate_parallel (z.data, z.size, out, data.size, &used, &split) && used == data.size,
          "output exactly as large as the buffer: true");
  tap_ok (!es_inflate_parallel (z.data, z.size, out, data.size - 1, &used, &split),
          "output one byte larger than the buffer: false");
  tap_ok (!es_inflate_parallel (z.data, z.size, NULL, 0, &used, &split), "no buffer: false");

  /* A preset dictionary (FDICT), and a stream that never ends with a final block. */
  {
    z_stream s = { 0 };
    uint8_t stream[4096];
    deflateInit (&s, 6);
    deflateSetDictionary (&s, (const Bytef *) "entropy", 7);
    s.next_in = data.data;
    s.avail_in = 1000;
    s.next_out = stream;
    s.avail_out = sizeof stream;
    deflate (&s, Z_FINISH);
    tap_ok ((stream[1] & 0x20) && !es_inflate_parallel (stream, s.total_out, out, data.size, &used, &split),
            "a preset dictionary is refused");
    deflateEnd (&s);

    s = (z_stream){ 0 };
    deflateInit (&s, 6);
    s.next_in = data.data;
    s.avail_in = 1000;
    s.next_out = stream;
    s.avail_out = sizeof stream;
    deflate (&s, Z_SYNC_FLUSH);
    uint32_t adler = (uint32_t) adler32 (1, data.data, 1000);
    size_t n = s.total_out;
    stream[n++] = (uint8_t) (adler >> 24), stream[n++] = (uint8_t) (adler >> 16);
    stream[n++] = (uint8_t) (adler >> 8), stream[n++] = (uint8_t) adler;
    tap_ok (!es_inflate_parallel (stream, n, out, data.size, &used, &split), "no final block: refused");
    deflateEnd (&s);
  }
  free (out);
  free (copy.data);
  free (z.data);
  free (data.data);
}

int
main (void)
{
  rng = tap_seed ();
  hand_code_init ();

  test_zlib_streams ();
  {
    HandStream h = hand_stream ();
    check_agrees ("hand-made, matches 32768 back", &h.z, &h.expect);
    test_chunks (&h);
    free (h.z.data);
    free (h.expect.data);
  }
  test_damaged ();

  EsInflateSplit two = { 2, 0 }, three = { 3, 0 }, small = { 16, 1000 };
  tap_ok (!es_inflate_parallel_pays (64u << 20, &two) && es_inflate_parallel_pays (1u << 20, &three)
            && !es_inflate_parallel_pays ((1u << 20) - 1, &three) && es_inflate_parallel_pays (4000, &small),
          "pays: from 3 threads and 4 chunks' worth of stream");
  printf ("# %d passed, %d failed\n", tap_count - tap_failed, tap_failed);
  return tap_done ();
}
