/* SPDX-License-Identifier: MIT */
/* Deflate decoding from any block boundary, for es-inflate-parallel.c. At least as strict as zlib
 * and libdeflate both (what either refuses is refused here), so that a stream this accepts decodes
 * the same everywhere; a failure only makes the caller inflate serially. */
#include "es-inflate-chunk.h"

#include <stdlib.h>
#include <string.h>

#include "es-inflate-bits.h"

/* ---- decoding ---------------------------------------------------------------- */

/* Room for one more match (or three literals) without a bounds check: the
 * longest match plus what copy_bytes and copy_symbols write past its end. */
#define FAST_ROOM 320

typedef struct {
  Bits bits;
  Tables tables;
  EsInflateChunk *chunk;
  size_t marker_end; /* symbols from here on hold no marker */
} Decoder;

/* How a block's decoding loop ended; SYMBOL_DONE: one symbol done, go on. */
enum { BLOCK_DONE, BLOCK_TO_BYTES, BLOCK_ERROR, SYMBOL_DONE };

size_t
es_inflate_chunk_size (const EsInflateChunk *c)
{
  return c->symbol_count + (c->bytes_end - c->bytes_begin);
}

/* Takes `bytes` from the budget shared by all chunks; false when it has not
 * that much left. */
static bool
take_memory (EsInflateChunk *c, size_t bytes)
{
  size_t left;

  if (c->budget == NULL)
    return true;
  left = __atomic_load_n (c->budget, __ATOMIC_RELAXED);
  do
    if (left < bytes)
      return false;
  while (!__atomic_compare_exchange_n (c->budget, &left, left - bytes, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return true;
}

static void
give_memory (EsInflateChunk *c, size_t bytes)
{
  if (c->budget != NULL)
    __atomic_fetch_add (c->budget, bytes, __ATOMIC_RELAXED);
}

/* What the chunk holds of the budget. */
static size_t
memory_held (const EsInflateChunk *c)
{
  return c->symbol_capacity * sizeof *c->symbols + (c->into == NULL ? c->bytes_capacity : 0);
}

/* Room for `need` more symbols, up to max_out. */
static bool
grow_symbols (EsInflateChunk *c, size_t need)
{
  size_t capacity = c->symbol_capacity * 2;
  uint16_t *grown;

  if (es_inflate_chunk_size (c) > c->max_out)
    return false;
  if (capacity < c->symbol_count + need)
    capacity = c->symbol_count + need;
  if (!take_memory (c, (capacity - c->symbol_capacity) * sizeof *grown))
    return false;
  grown = realloc (c->symbols, capacity * sizeof *grown);
  if (grown == NULL)
    {
      give_memory (c, (capacity - c->symbol_capacity) * sizeof *grown);
      return false;
    }
  c->symbols = grown;
  c->symbol_capacity = capacity;
  return true;
}

/* Room for `need` more bytes in a buffer of the chunk's own, up to max_out. */
static bool
grow_bytes (EsInflateChunk *c, size_t need)
{
  size_t capacity = c->bytes_capacity * 2;
  uint8_t *grown;

  if (c->into != NULL || es_inflate_chunk_size (c) > c->max_out)
    return false;
  if (capacity < c->bytes_end + need)
    capacity = c->bytes_end + need;
  if (!take_memory (c, capacity - c->bytes_capacity))
    return false;
  grown = realloc (c->bytes, capacity);
  if (grown == NULL)
    {
      give_memory (c, capacity - c->bytes_capacity);
      return false;
    }
  c->bytes = grown;
  c->bytes_capacity = capacity;
  return true;
}

/* A match of `length` at `dist` (<= what is written) with FAST_ROOM room:
 * 16 or 8 bytes at a time, past the end if need be. */
static inline void
copy_bytes (uint8_t *dst, size_t dist, size_t length)
{
  const uint8_t *src = dst - dist;
  uint8_t *end = dst + length;

  if (dist >= 16)
    do
      {
        memcpy (dst, src, 16);
        dst += 16;
        src += 16;
      }
    while (dst < end);
  else if (dist >= 8)
    do
      {
        memcpy (dst, src, 8);
        dst += 8;
        src += 8;
      }
    while (dst < end);
  else if (dist == 1)
    {
      uint64_t run = *src * 0x0101010101010101ull;
      do
        {
          memcpy (dst, &run, 8);
          dst += 8;
        }
      while (dst < end);
    }
  else
    do
      *dst++ = *src++;
    while (dst < end);
}

/* One symbol near the end of `into`, every write checked. */
static int
inflate_byte_checked (Bits *b, const Tables *t, uint8_t *out, size_t *pos, size_t capacity)
{
  if (!refill (b))
    return BLOCK_ERROR;
  uint32_t e = decode_entry (&b->buf, &b->count, t->litlen, LITLEN_BITS);
  if (e & ENTRY_LITERAL)
    {
      if (*pos >= capacity)
        return BLOCK_ERROR;
      out[(*pos)++] = (uint8_t) (e >> 16);
      return SYMBOL_DONE;
    }
  if (e & (ENTRY_END | ENTRY_INVALID))
    return e & ENTRY_END ? BLOCK_DONE : BLOCK_ERROR;
  size_t length = (e >> 16) + pop (b, ENTRY_EXTRA (e));
  e = decode_entry (&b->buf, &b->count, t->dist, DIST_BITS);
  if (e & ENTRY_INVALID)
    return BLOCK_ERROR;
  size_t dist = (e >> 16) + pop (b, ENTRY_EXTRA (e));
  if (dist > *pos || length > capacity - *pos)
    return BLOCK_ERROR;
  for (size_t i = 0; i < length; i++)
    out[*pos + i] = out[*pos + i - dist];
  *pos += length;
  return SYMBOL_DONE;
}

/* Decodes the current block's symbols as bytes until its end. Up to three
 * literals of the first-level table per refill (11 bits each at most), the
 * next lookup started before the byte is stored: literals are the chain of
 * dependent loads that sets the speed. */
static int
inflate_bytes (Decoder *d)
{
  EsInflateChunk *c = d->chunk;
  const uint32_t *litlen = d->tables.litlen, *dists = d->tables.dist;
  uint8_t *out = c->bytes;
  size_t pos = c->bytes_end, capacity = c->bytes_capacity;
  Bits b = d->bits;
  int result = BLOCK_ERROR;

  for (;;)
    {
      if (UNLIKELY (capacity - pos < FAST_ROOM))
        {
          if (c->into != NULL)
            {
              result = inflate_byte_checked (&b, &d->tables, out, &pos, capacity);
              if (result != SYMBOL_DONE)
                break;
              continue;
            }
          c->bytes_end = pos;
          if (!grow_bytes (c, FAST_ROOM))
            break;
          out = c->bytes;
          capacity = c->bytes_capacity;
        }
      if (UNLIKELY (!refill (&b)))
        break;
      uint32_t e = litlen[b.buf & ((1u << LITLEN_BITS) - 1)];
      if (e & ENTRY_LITERAL)
        {
          b.buf >>= ENTRY_DROP (e);
          b.count -= ENTRY_DROP (e);
          uint32_t next = litlen[b.buf & ((1u << LITLEN_BITS) - 1)];
          out[pos++] = (uint8_t) (e >> 16);
          e = next;
          if (e & ENTRY_LITERAL)
            {
              b.buf >>= ENTRY_DROP (e);
              b.count -= ENTRY_DROP (e);
              next = litlen[b.buf & ((1u << LITLEN_BITS) - 1)];
              out[pos++] = (uint8_t) (e >> 16);
              e = next;
              if (e & ENTRY_LITERAL)
                {
                  b.buf >>= ENTRY_DROP (e);
                  b.count -= ENTRY_DROP (e);
                  out[pos++] = (uint8_t) (e >> 16);
                  continue;
                }
            }
          /* 34 bits or more left: enough for any litlen codeword. */
        }
      if (UNLIKELY (e & ENTRY_SUBTABLE))
        {
          b.buf >>= LITLEN_BITS;
          b.count -= LITLEN_BITS;
          e = litlen[(e >> 16) + (b.buf & ((1u << (ENTRY_EXTRA (e))) - 1))];
        }
      b.buf >>= ENTRY_DROP (e);
      b.count -= ENTRY_DROP (e);
      if (e & ENTRY_LITERAL)
        {
          out[pos++] = (uint8_t) (e >> 16);
          continue;
        }
      if (UNLIKELY (e & (ENTRY_END | ENTRY_INVALID)))
        {
          if (e & ENTRY_END)
            result = BLOCK_DONE;
          break;
        }
      /* Length extra, distance codeword and extra: 33 bits at most. */
      if (UNLIKELY (!refill (&b)))
        break;
      size_t length = (e >> 16) + pop (&b, ENTRY_EXTRA (e));
      e = decode_entry (&b.buf, &b.count, dists, DIST_BITS);
      if (UNLIKELY (e & ENTRY_INVALID))
        break;
      size_t dist = (e >> 16) + pop (&b, ENTRY_EXTRA (e));
      if (UNLIKELY (dist > pos))
        break;
      copy_bytes (out + pos, dist, length);
      pos += length;
    }
  d->bits = b;
  c->bytes_end = pos;
  return result;
}

/* A match of `length` at `dist` (<= what is written) with FAST_ROOM room,
 * four symbols at a time where it can, past the end if need be. Returns
 * whether it copied a marker (or, past the end, may have). A flat region
 * copied row after row carries the markers of its first row all the way,
 * so this loop can be most of a chunk. */
static inline bool
copy_symbols (uint16_t *dst, size_t dist, size_t length)
{
  const uint16_t *src = dst - dist;
  uint16_t *end = dst + length;
  uint64_t seen = 0;

  if (dist >= 4)
    do
      {
        uint64_t four;
        memcpy (&four, src, 8);
        memcpy (dst, &four, 8);
        seen |= four;
        dst += 4;
        src += 4;
      }
    while (dst < end);
  else
    do
      seen |= *dst++ = *src++;
    while (dst < end);
  return (seen & 0x8000800080008000ull) != 0;
}

/* Decodes the current block's symbols as 16-bit symbols, a match reaching
 * before the chunk giving markers, until its end or until the last 32 KiB
 * hold no marker (then bytes are enough). */
static int
inflate_symbols (Decoder *d)
{
  EsInflateChunk *c = d->chunk;
  const uint32_t *litlen = d->tables.litlen, *dists = d->tables.dist;
  uint16_t *out = c->symbols;
  size_t pos = c->symbol_count, capacity = c->symbol_capacity, marker_end = d->marker_end;
  Bits b = d->bits;
  int result = BLOCK_ERROR;

  for (;;)
    {
      if (pos - marker_end >= ES_INFLATE_WINDOW)
        {
          result = BLOCK_TO_BYTES;
          break;
        }
      if (UNLIKELY (capacity - pos < FAST_ROOM))
        {
          c->symbol_count = pos;
          if (!grow_symbols (c, FAST_ROOM))
            break;
          out = c->symbols;
          capacity = c->symbol_capacity;
        }
      if (UNLIKELY (!refill (&b)))
        break;
      uint32_t e = decode_entry (&b.buf, &b.count, litlen, LITLEN_BITS);
      if (LIKELY (e & ENTRY_LITERAL))
        {
          out[pos++] = (uint16_t) (e >> 16);
          continue;
        }
      if (UNLIKELY (e & (ENTRY_END | ENTRY_INVALID)))
        {
          if (e & ENTRY_END)
            result = BLOCK_DONE;
          break;
        }
      size_t length = (e >> 16) + pop (&b, ENTRY_EXTRA (e));
      e = decode_entry (&b.buf, &b.count, dists, DIST_BITS);
      if (UNLIKELY (e & ENTRY_INVALID))
        break;
      size_t dist = (e >> 16) + pop (&b, ENTRY_EXTRA (e)), i = 0;
      if (dist > pos)
        {
          /* The first dist - pos bytes of the source lie in the window. */
          size_t before = dist - pos;
          for (; i < length && i < before; i++)
            out[pos + i] = (uint16_t) (ES_INFLATE_MARKER + ES_INFLATE_WINDOW - before + i);
          for (; i < length; i++)
            out[pos + i] = out[pos + i - dist];
          marker_end = pos + length;
        }
      else if (copy_symbols (out + pos, dist, length))
        marker_end = pos + length;
      pos += length;
    }
  d->bits = b;
  d->marker_end = marker_end;
  c->symbol_count = pos;
  return result;
}

/* From symbols to bytes: a buffer of the chunk's own starting with the last
 * 32 KiB of symbols (none a marker) as the window. */
static bool
switch_to_bytes (Decoder *d)
{
  EsInflateChunk *c = d->chunk;
  size_t here = position (&d->bits), stop = c->stop_bit < d->bits.size * 8 ? c->stop_bit : d->bits.size * 8;
  /* Photographs inflate to about 1.5 times their size: twice is seldom grown. */
  size_t guess = (stop > here ? (stop - here) / 8 : 0) * 2 + 65536, capacity;
  const uint16_t *window = c->symbols + c->symbol_count - ES_INFLATE_WINDOW;

  if (guess > c->max_out + FAST_ROOM)
    guess = c->max_out + FAST_ROOM;
  capacity = ES_INFLATE_WINDOW + guess;
  if (!take_memory (c, capacity))
    return false;
  c->bytes = malloc (capacity);
  if (c->bytes == NULL)
    {
      give_memory (c, capacity);
      return false;
    }
  c->bytes_capacity = capacity;
  for (size_t i = 0; i < ES_INFLATE_WINDOW; i++)
    c->bytes[i] = (uint8_t) window[i];
  c->bytes_begin = c->bytes_end = ES_INFLATE_WINDOW;
  return true;
}

/* A stored block's bytes, after its BTYPE. */
static bool
copy_stored (Decoder *d, bool as_symbols)
{
  EsInflateChunk *c = d->chunk;
  Bits *b = &d->bits;
  size_t at, length;

  pop (b, b->count % 8);
  if (!refill (b))
    return false;
  length = pop (b, 16);
  if (length != (~pop (b, 16) & 0xffff))
    return false;
  at = position (b) / 8;
  if (at > b->size || length > b->size - at)
    return false;
  if (as_symbols)
    {
      if (c->symbol_capacity - c->symbol_count < length && !grow_symbols (c, length))
        return false;
      for (size_t i = 0; i < length; i++)
        c->symbols[c->symbol_count + i] = b->data[at + i];
      c->symbol_count += length;
    }
  else
    {
      if (c->bytes_capacity - c->bytes_end < length && !grow_bytes (c, length))
        return false;
      memcpy (c->bytes + c->bytes_end, b->data + at, length);
      c->bytes_end += length;
    }
  *b = (Bits){ .data = b->data, .size = b->size, .next = at + length };
  return true;
}

void
es_inflate_chunk_clear (EsInflateChunk *c)
{
  give_memory (c, memory_held (c));
  free (c->symbols);
  if (c->into == NULL)
    free (c->bytes);
  c->symbols = NULL;
  c->bytes = NULL;
  c->symbol_count = c->symbol_capacity = 0;
  c->bytes_begin = c->bytes_end = c->bytes_capacity = 0;
  c->end_bit = 0;
  c->final = c->ok = false;
}

bool
es_inflate_chunk_decode (EsInflateChunk *c, const uint8_t *data, size_t size)
{
  Decoder d = { .chunk = c };
  bool as_symbols = c->into == NULL;

  es_inflate_chunk_clear (c);
  if (as_symbols)
    {
      if (!take_memory (c, 65536 * sizeof *c->symbols))
        return false;
      c->symbols = malloc (65536 * sizeof *c->symbols);
      if (c->symbols == NULL)
        {
          give_memory (c, 65536 * sizeof *c->symbols);
          return false;
        }
      c->symbol_capacity = 65536;
    }
  else
    {
      c->bytes = c->into;
      c->bytes_capacity = c->into_capacity;
    }
  if (!bits_start (&d.bits, data, size, c->start_bit))
    return false;

  while (!c->final && position (&d.bits) < c->stop_bit)
    {
      if (!refill (&d.bits))
        return false;
      c->final = pop (&d.bits, 1);
      unsigned type = pop (&d.bits, 2);
      if (type == 0)
        {
          if (!copy_stored (&d, as_symbols))
            return false;
          if (as_symbols && c->symbol_count - d.marker_end >= ES_INFLATE_WINDOW)
            {
              if (!switch_to_bytes (&d))
                return false;
              as_symbols = false;
            }
          continue;
        }
      if (type == 1 && !d.tables.fixed)
        es_inflate_build_fixed (&d.tables);
      else if (type == 2 && !es_inflate_read_dynamic (&d.bits, &d.tables))
        return false;
      else if (type == 3)
        return false;
      for (;;)
        {
          int result = as_symbols ? inflate_symbols (&d) : inflate_bytes (&d);
          if (result == BLOCK_ERROR)
            return false;
          if (result == BLOCK_DONE)
            break;
          if (!switch_to_bytes (&d))
            return false;
          as_symbols = false;
        }
      if (es_inflate_chunk_size (c) > c->max_out)
        return false;
    }
  c->end_bit = position (&d.bits);
  c->ok = c->end_bit <= size * 8;
  return c->ok;
}
