/* SPDX-License-Identifier: MIT */
/* Private to es-inflate-chunk.c and es-inflate-tables.c: deflate's bit reader and the layout of
 * the Huffman decoding tables. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LIKELY(x) __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)

/* ---- bits, least significant first --------------------------------------- */

typedef struct {
  const uint8_t *data;
  size_t size;
  size_t next;  /* the next byte to load; past size, zeros are loaded */
  uint64_t buf; /* the stream's next `count` bits, then (partly) the byte at next, or zeros */
  unsigned count;
} Bits;

/* Zero bytes loaded past the data before a decode gives up: the buffer looks
 * at most 8 bytes ahead, so more means the stream ran out. */
#define MAX_OVERREAD 16

static inline uint64_t
load_le64 (const uint8_t *p)
{
  uint64_t v;
  memcpy (&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64 (v);
#endif
  return v;
}

static inline bool
refill_slow (Bits *b)
{
  while (b->count <= 56)
    {
      if (b->next < b->size)
        b->buf |= (uint64_t) b->data[b->next] << b->count;
      else if (b->next - b->size >= MAX_OVERREAD)
        return false;
      b->next++;
      b->count += 8;
    }
  return true;
}

/* At least 56 bits in the buffer afterwards (libdeflate's branchless refill). */
static inline bool
refill (Bits *b)
{
  if (LIKELY (b->size >= 8 && b->next <= b->size - 8))
    {
      b->buf |= load_le64 (b->data + b->next) << b->count;
      b->next += (63 - b->count) >> 3;
      b->count |= 56;
      return true;
    }
  return refill_slow (b);
}

static inline unsigned
pop (Bits *b, unsigned n)
{
  unsigned v = (unsigned) (b->buf & ((1ull << n) - 1));
  b->buf >>= n;
  b->count -= n;
  return v;
}

static inline size_t
position (const Bits *b)
{
  return b->next * 8 - b->count;
}

static inline bool
bits_start (Bits *b, const uint8_t *data, size_t size, size_t bit)
{
  *b = (Bits){ .data = data, .size = size, .next = bit / 8 };
  if (bit > size * 8 || !refill (b))
    return false;
  pop (b, bit % 8);
  return true;
}

/* ---- Huffman tables ---------------------------------------------------------- */

/* An entry: bits 0-3 the codeword bits to drop (4-7 clear, so that `e & 63`
 * is a bare shift count on x86: one step less on the literal chain), 8-11
 * the extra bits that follow (a subtable pointer: its index bits), flags in
 * 12-15, the value in 16-31 (a literal byte, a length or distance base, a
 * subtable's start). */
enum {
  ENTRY_LITERAL = 1u << 12,
  ENTRY_END = 1u << 13,
  ENTRY_SUBTABLE = 1u << 14,
  ENTRY_INVALID = 1u << 15,
};
#define ENTRY_DROP(e) ((e) &63)
#define ENTRY_EXTRA(e) ((e) >> 8 & 15)

/* First-level index bits, and the most entries a complete code can need
 * with them (zlib's `enough` for 288 and 32 symbols of up to 15 bits). */
#define LITLEN_BITS 11
#define LITLEN_ENOUGH 2342
#define DIST_BITS 8
#define DIST_ENOUGH 402
#define CODELEN_BITS 7

typedef struct {
  uint32_t litlen[LITLEN_ENOUGH];
  uint32_t dist[DIST_ENOUGH];
  bool fixed; /* they hold the fixed code */
} Tables;

/* Looks up the next symbol and drops its codeword; needs 15 bits buffered. */
static inline uint32_t
decode_entry (uint64_t *buf, unsigned *count, const uint32_t *table, unsigned table_bits)
{
  uint32_t e = table[*buf & ((1u << table_bits) - 1)];

  if (UNLIKELY (e & ENTRY_SUBTABLE))
    {
      *buf >>= table_bits;
      *count -= table_bits;
      e = table[(e >> 16) + (*buf & ((1u << ENTRY_EXTRA (e)) - 1))];
    }
  *buf >>= ENTRY_DROP (e);
  *count -= ENTRY_DROP (e);
  return e;
}

/* The fixed code's tables (RFC 1951, 3.2.6). */
void es_inflate_build_fixed (Tables *t);

/* A dynamic block's header, after BTYPE: its tables, with zlib's checks.
 * False for anything zlib or libdeflate would refuse. */
bool es_inflate_read_dynamic (Bits *b, Tables *t);
