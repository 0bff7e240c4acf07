/* SPDX-License-Identifier: MIT */
/* One zlib stream inflated on several threads, as rapidgzip does it: the
 * deflate data is cut into chunks; each chunk after the first starts at the
 * first place from its cut on where a dynamic Huffman block header parses
 * (es_inflate_find_block) and is decoded with markers for the 32 KiB before
 * it that it cannot see (es-inflate-chunk.c); a serial pass checks that each
 * chunk ends where the next starts (else decodes the next again from there)
 * and resolves the markers in order; the Adler-32 then vouches for it all. */
#include "es-inflate-parallel.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef ES_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "es-inflate-chunk.h"

/* Chunks of at least this many compressed bytes, about four a thread so
 * that a slow chunk (one that is all symbols, or a false start decoded
 * twice) does not leave the others waiting. */
#define DEFAULT_MIN_CHUNK (256u * 1024)
#define CHUNKS_PER_THREAD 4

static int
split_threads (const EsInflateSplit *split)
{
  int threads = split != NULL && split->threads > 0 ? split->threads : omp_get_max_threads ();
  return threads > 0 ? threads : 1;
}

static size_t
split_min_chunk (const EsInflateSplit *split)
{
  return split != NULL && split->min_chunk > 0 ? split->min_chunk : DEFAULT_MIN_CHUNK;
}

/* Our decoder is 1.2 times slower than libdeflate on one core, and
 * cutting, finding and joining add 5-10 % (docs/performance/files.md,
 * "Decoding PNG"): two threads win only where they are two idle cores (not
 * one core's hyper-threads), three win about twice. With fewer than four chunks
 * threads wait on the last one and the team's start and the serial tails go
 * unpaid. */
#define PAYS_MIN_THREADS 3
#define PAYS_MIN_CHUNKS 4

bool
es_inflate_parallel_pays (size_t in_size, const EsInflateSplit *split)
{
  return split_threads (split) >= PAYS_MIN_THREADS && in_size / PAYS_MIN_CHUNKS >= split_min_chunk (split);
}

/* CM 8, a window of at most 32 KiB, the check bits, no preset dictionary. */
static bool
zlib_header_ok (const uint8_t *in, size_t in_size)
{
  return in_size >= 2 && (in[0] & 15) == 8 && in[0] >> 4 <= 7 && (in[0] << 8 | in[1]) % 31 == 0 && (in[1] & 0x20) == 0;
}

static uint32_t
adler_of (const uint8_t *data, size_t size)
{
#ifdef ES_HAVE_LIBDEFLATE
  return libdeflate_adler32 (1, data, size);
#else
  return (uint32_t) adler32 (1, data, (uInt) size);
#endif
}

/* Adler-32 of out[0..size): slices on every thread, joined with zlib's
 * adler32_combine. */
static bool
adler_matches (const uint8_t *out, size_t size, uint32_t expected, int threads)
{
  const size_t slice = 1u << 20;
  size_t slices = (size + slice - 1) / slice;
  uint32_t *parts, adler;

  if (slices <= 1)
    return (size ? adler_of (out, size) : 1) == expected;
  parts = malloc (slices * sizeof *parts);
  if (parts == NULL)
    return false;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (size_t i = 0; i < slices; i++)
    parts[i] = adler_of (out + i * slice, i + 1 < slices ? slice : size - i * slice);
  adler = parts[0];
  for (size_t i = 1; i < slices; i++)
    adler = (uint32_t) adler32_combine (adler, parts[i], (z_off_t) (i + 1 < slices ? slice : size - i * slice));
  free (parts);
  return adler == expected;
}

/* Writes the chunk's output [from, to) at out + offset + from, each marker
 * replaced by its byte of the 32 KiB before out + offset (already final).
 * False when a marker points before out. */
static bool
emit (const EsInflateChunk *c, size_t from, size_t to, uint8_t *out, size_t offset)
{
  size_t i = from;

  for (; i < to && i < c->symbol_count; i++)
    {
      unsigned symbol = c->symbols[i];
      if (symbol < 256)
        out[offset + i] = (uint8_t) symbol;
      else
        {
          size_t back = ES_INFLATE_WINDOW - (symbol - ES_INFLATE_MARKER);
          if (back > offset)
            return false;
          out[offset + i] = out[offset - back];
        }
    }
  if (i < to)
    memcpy (out + offset + i, c->bytes + c->bytes_begin + (i - c->symbol_count), to - i);
  return true;
}

/* Every chunk ends where the next begins, the last after the final block:
 * where one does not (the next began at a false start, or failed), the
 * next is decoded again, here, from where this one ended. Returns the
 * chunks up to the final block, or 0 when the stream is broken. */
static size_t
chain_chunks (EsInflateChunk *chunks, size_t count, const uint8_t *data, size_t size)
{
  for (size_t k = 0; k < count; k++)
    {
      if (!chunks[k].ok)
        return 0;
      if (chunks[k].final)
        return k + 1;
      if (k + 1 == count)
        return 0;
      EsInflateChunk *next = &chunks[k + 1];
      if (next->start_bit == chunks[k].end_bit)
        continue; /* a true block boundary: its decode, ok or not, stands */
      next->start_bit = chunks[k].end_bit;
      es_inflate_chunk_decode (next, data, size);
    }
  return 0;
}

bool
es_inflate_parallel (const uint8_t *in, size_t in_size, uint8_t *out, size_t out_capacity, size_t *used_out,
                     const EsInflateSplit *split)
{
  int threads = split_threads (split);
  size_t min_chunk = split_min_chunk (split);
  const uint8_t *data;
  size_t size, cuts, count = 0, used = 0, *offsets = NULL, total = 0, end, budget;
  EsInflateChunk *chunks = NULL;
  bool ok = false, emitted = true;
  static uint8_t no_room[1];

  if (in == NULL || !zlib_header_ok (in, in_size) || (out == NULL && out_capacity > 0))
    return false;
  if (out == NULL)
    out = no_room; /* chunk 0 needs a place: `into` set is what tells it from the others */
  data = in + 2;
  size = in_size - 2;
  cuts = size / min_chunk;
  if (cuts > (size_t) threads * CHUNKS_PER_THREAD)
    cuts = (size_t) threads * CHUNKS_PER_THREAD;
  if (cuts < 1)
    cuts = 1;
  chunks = calloc (cuts, sizeof *chunks);
  offsets = calloc (cuts, sizeof *offsets);
  if (chunks == NULL || offsets == NULL)
    goto done;

    /* Where each chunk starts: the first dynamic block header from its cut
   * on, before the next cut (else it joins the chunk before). */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (size_t k = 1; k < cuts; k++)
    chunks[k].start_bit = es_inflate_find_block (data, size, k * size / cuts * 8, (k + 1) * size / cuts * 8);
  for (size_t k = 0; k < cuts; k++)
    if (k == 0 || chunks[k].start_bit != SIZE_MAX)
      chunks[count++].start_bit = chunks[k].start_bit;
  /* A damaged stream can make every chunk inflate garbage up to
   * out_capacity: what they all allocate together is bounded instead. A true
   * chunk holds about what it inflates (doubling as it grows), plus 32 KiB
   * of symbols or a little more at its start. */
  budget = out_capacity < SIZE_MAX / 8 ? out_capacity * 4 + count * ((size_t) 1 << 20) : SIZE_MAX;
  for (size_t k = 0; k < count; k++)
    {
      chunks[k].stop_bit = k + 1 < count ? chunks[k + 1].start_bit : SIZE_MAX;
      chunks[k].max_out = out_capacity;
      chunks[k].budget = &budget;
    }
  chunks[0].into = out;
  chunks[0].into_capacity = out_capacity;

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (size_t k = 0; k < count; k++)
    es_inflate_chunk_decode (&chunks[k], data, size);

  used = chain_chunks (chunks, count, data, size);
  if (used == 0)
    goto done;
  for (size_t k = 0; k < used; k++)
    {
      size_t length = es_inflate_chunk_size (&chunks[k]);
      if (length > out_capacity - total)
        goto done;
      offsets[k] = total;
      total += length;
    }

  /* Markers: each chunk's last 32 KiB in order (the next one's window),
   * then the rest of every chunk at once. Chunk 0 is in place already. */
  for (size_t k = 1; k < used; k++)
    {
      size_t length = es_inflate_chunk_size (&chunks[k]);
      size_t tail = length < ES_INFLATE_WINDOW ? length : ES_INFLATE_WINDOW;
      if (!emit (&chunks[k], length - tail, length, out, offsets[k]))
        goto done;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(&& : emitted)
  for (size_t k = 1; k < used; k++)
    {
      size_t length = es_inflate_chunk_size (&chunks[k]);
      size_t tail = length < ES_INFLATE_WINDOW ? length : ES_INFLATE_WINDOW;
      emitted = emit (&chunks[k], 0, length - tail, out, offsets[k]) && emitted;
    }
  if (!emitted)
    goto done;

  /* The Adler-32 follows the final block, byte-aligned, big-endian. */
  end = (chunks[used - 1].end_bit + 7) / 8;
  if (end > size || size - end < 4)
    goto done;
  ok = adler_matches (out, total,
                      (uint32_t) data[end] << 24 | (uint32_t) data[end + 1] << 16 | (uint32_t) data[end + 2] << 8
                        | data[end + 3],
                      threads);
  if (ok)
    *used_out = total;

done:
  for (size_t k = 0; chunks != NULL && k < cuts; k++)
    es_inflate_chunk_clear (&chunks[k]);
  free (chunks);
  free (offsets);
  return ok;
}
