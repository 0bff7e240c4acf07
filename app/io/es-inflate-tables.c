/* SPDX-License-Identifier: MIT */
/* Deflate's Huffman codes: decoding tables from code lengths (with zlib's checks), dynamic block
 * headers, and the search for one at an unknown place in a stream (es_inflate_find_block). */
#include <limits.h>

#include "es-inflate-bits.h"
#include "es-inflate-chunk.h"

static const uint16_t length_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                          31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t length_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                          2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t dist_base[30] = { 1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                        33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                        1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
static const uint8_t codelen_order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

/* Symbols 286, 287 (litlen) and 30, 31 (distance) exist only in the fixed
 * code and are errors, as zlib has them. */
static uint32_t
litlen_payload (unsigned symbol)
{
  if (symbol < 256)
    return ENTRY_LITERAL | symbol << 16;
  if (symbol == 256)
    return ENTRY_END;
  if (symbol < 286)
    return (uint32_t) length_base[symbol - 257] << 16 | (uint32_t) length_extra[symbol - 257] << 8;
  return ENTRY_INVALID;
}

static uint32_t
dist_payload (unsigned symbol)
{
  if (symbol < 30)
    return (uint32_t) dist_base[symbol] << 16 | (uint32_t) dist_extra[symbol] << 8;
  return ENTRY_INVALID;
}

static uint32_t
codelen_payload (unsigned symbol)
{
  return symbol << 16;
}

static unsigned
reverse_bits (unsigned code, unsigned length)
{
  code = (code & 0x5555) << 1 | (code >> 1 & 0x5555);
  code = (code & 0x3333) << 2 | (code >> 2 & 0x3333);
  code = (code & 0x0f0f) << 4 | (code >> 4 & 0x0f0f);
  code = (code & 0x00ff) << 8 | (code >> 8 & 0x00ff);
  return code >> (16 - length);
}

/* The code space a set of lengths leaves unused, in units of 2^-15: 0 for a
 * complete code, -1 for an over-subscribed one. */
static int
code_space_left (const uint8_t *lens, unsigned n, unsigned count[16])
{
  int left = 1;

  memset (count, 0, 16 * sizeof count[0]);
  for (unsigned i = 0; i < n; i++)
    count[lens[i]]++;
  for (unsigned len = 1; len <= 15; len++)
    {
      left = left * 2 - (int) count[len];
      if (left < 0)
        return -1;
    }
  return left;
}

/* A decoding table for the code of lens[0..n) (n <= 288). A complete code,
 * or where lenient what zlib also takes: one code of one bit, or none (the
 * missing codewords decode as invalid). False for any other lengths. */
static bool
build_table (const uint8_t *lens, unsigned n, uint32_t (*payload) (unsigned), uint32_t *table, unsigned table_bits,
             unsigned enough, bool lenient)
{
  unsigned count[16], offset[16], next_code[16], sorted[288], codes[288];
  unsigned size = 1u << table_bits, used, end = size, sub_prefix = UINT_MAX, sub_start = 0, sub_bits = 0;
  int left = code_space_left (lens, n, count);

  used = n - count[0];
  if (left < 0)
    return false;
  if (left > 0)
    {
      if (!lenient || used > 1 || (used == 1 && count[1] != 1))
        return false;
      for (unsigned i = 0; i < size; i++)
        table[i] = ENTRY_INVALID | 1;
      for (unsigned symbol = 0; symbol < n; symbol++)
        if (lens[symbol] != 0)
          {
            uint32_t entry = payload (symbol) | 1;
            for (unsigned i = 0; i < size; i += 2)
              table[i] = entry;
          }
      return true;
    }

  /* Canonical codes in order of (length, symbol): increasing codewords. */
  offset[1] = 0;
  for (unsigned len = 1; len < 15; len++)
    offset[len + 1] = offset[len] + count[len];
  for (unsigned symbol = 0; symbol < n; symbol++)
    if (lens[symbol] != 0)
      sorted[offset[lens[symbol]]++] = symbol;
  next_code[1] = 0;
  for (unsigned len = 2; len <= 15; len++)
    next_code[len] = (next_code[len - 1] + count[len - 1]) << 1;
  for (unsigned k = 0; k < used; k++)
    codes[k] = next_code[lens[sorted[k]]]++;

  for (unsigned k = 0; k < used; k++)
    {
      unsigned symbol = sorted[k], len = lens[symbol], code = codes[k];
      if (len <= table_bits)
        {
          uint32_t entry = payload (symbol) | len;
          for (unsigned i = reverse_bits (code, len); i < size; i += 1u << len)
            table[i] = entry;
          continue;
        }
      /* Longer codewords with the same first table_bits share a subtable;
       * they follow each other here, and the last is the longest. */
      unsigned prefix = code >> (len - table_bits), drop = len - table_bits;
      if (prefix != sub_prefix)
        {
          unsigned last = k;
          while (last + 1 < used && codes[last + 1] >> (lens[sorted[last + 1]] - table_bits) == prefix)
            last++;
          sub_bits = lens[sorted[last]] - table_bits;
          sub_start = end;
          end += 1u << sub_bits;
          if (end > enough)
            return false;
          sub_prefix = prefix;
          table[reverse_bits (prefix, table_bits)] = ENTRY_SUBTABLE | sub_start << 16 | sub_bits << 8 | table_bits;
        }
      uint32_t entry = payload (symbol) | drop;
      for (unsigned i = reverse_bits (code & ((1u << drop) - 1), drop); i < 1u << sub_bits; i += 1u << drop)
        table[sub_start + i] = entry;
    }
  return true;
}

void
es_inflate_build_fixed (Tables *t)
{
  uint8_t lens[288];

  memset (lens, 8, 144);
  memset (lens + 144, 9, 112);
  memset (lens + 256, 7, 24);
  memset (lens + 280, 8, 8);
  build_table (lens, 288, litlen_payload, t->litlen, LITLEN_BITS, LITLEN_ENOUGH, false);
  memset (lens, 5, 32);
  build_table (lens, 32, dist_payload, t->dist, DIST_BITS, DIST_ENOUGH, false);
  t->fixed = true;
}

/* After BTYPE 2: the code lengths of the literal/length code (lens[0..*nlen))
 * and of the distance code (then *ndist), with zlib's checks: at most 286 and
 * 30 symbols, a complete code-length code, no repeat before the first length
 * or past the last. */
static bool
read_code_lengths (Bits *b, uint8_t lens[320], unsigned *nlen, unsigned *ndist)
{
  uint8_t codelen_lens[19] = { 0 };
  uint32_t codelen_table[1u << CODELEN_BITS];
  unsigned hclen, total;

  if (!refill (b))
    return false;
  *nlen = 257 + pop (b, 5);
  *ndist = 1 + pop (b, 5);
  hclen = 4 + pop (b, 4);
  if (*nlen > 286 || *ndist > 30)
    return false;
  for (unsigned i = 0; i < hclen; i++)
    {
      if (i == 10 && !refill (b))
        return false;
      codelen_lens[codelen_order[i]] = (uint8_t) pop (b, 3);
    }
  if (!build_table (codelen_lens, 19, codelen_payload, codelen_table, CODELEN_BITS, 1u << CODELEN_BITS, false))
    return false;
  total = *nlen + *ndist;
  for (unsigned i = 0; i < total;)
    {
      if (!refill (b))
        return false;
      uint32_t e = codelen_table[b->buf & ((1u << CODELEN_BITS) - 1)];
      unsigned symbol = e >> 16, repeat;
      uint8_t value = 0;
      pop (b, ENTRY_DROP (e));
      if (symbol < 16)
        {
          lens[i++] = (uint8_t) symbol;
          continue;
        }
      if (symbol == 16)
        {
          if (i == 0)
            return false;
          value = lens[i - 1];
          repeat = 3 + pop (b, 2);
        }
      else if (symbol == 17)
        repeat = 3 + pop (b, 3);
      else
        repeat = 11 + pop (b, 7);
      if (repeat > total - i)
        return false;
      memset (lens + i, value, repeat);
      i += repeat;
    }
  return true;
}

bool
es_inflate_read_dynamic (Bits *b, Tables *t)
{
  uint8_t lens[320];
  unsigned nlen, ndist;

  t->fixed = false;
  if (!read_code_lengths (b, lens, &nlen, &ndist) || lens[256] == 0)
    return false;
  return build_table (lens, nlen, litlen_payload, t->litlen, LITLEN_BITS, LITLEN_ENOUGH, true)
         && build_table (lens + nlen, ndist, dist_payload, t->dist, DIST_BITS, DIST_ENOUGH, true);
}

/* ---- the block finder ------------------------------------------------------ */

/* 56 or more bits from bit offset `bit`, zeros past the data. */
static inline uint64_t
peek_at (const uint8_t *data, size_t size, size_t bit)
{
  size_t byte = bit / 8;
  uint64_t v = 0;

  if (size >= 8 && byte <= size - 8)
    v = load_le64 (data + byte);
  else
    for (unsigned i = 0; i < 8 && byte + i < size; i++)
      v |= (uint64_t) data[byte + i] << 8 * i;
  return v >> (bit % 8);
}

/* A dynamic header at `bit` parses and its codes are complete (a distance
 * code may also be a single one-bit code), with an end-of-block code. */
static bool
dynamic_header_valid (const uint8_t *data, size_t size, size_t bit)
{
  uint8_t lens[320];
  unsigned nlen, ndist, count[16];
  Bits b;

  if (!bits_start (&b, data, size, bit))
    return false;
  pop (&b, 3);
  if (!read_code_lengths (&b, lens, &nlen, &ndist) || lens[256] == 0 || position (&b) > size * 8)
    return false;
  if (code_space_left (lens, nlen, count) != 0)
    return false;
  int left = code_space_left (lens + nlen, ndist, count);
  return left == 0 || (left > 0 && count[1] == 1 && ndist - count[0] == 1);
}

/* The Kraft sums of four 3-bit code-length-code lengths, in units of 2^-7
 * (a complete code sums to 128): the finder's second rejection, five
 * lookups instead of nineteen steps. */
#define KRAFT_1(l) ((l) ? 128 >> (l) : 0)
#define KRAFT_4(i) (KRAFT_1 ((i) &7) + KRAFT_1 ((i) >> 3 & 7) + KRAFT_1 ((i) >> 6 & 7) + KRAFT_1 ((i) >> 9 & 7))
#define KRAFT_16(i)                                                                                                    \
  KRAFT_4 (i), KRAFT_4 ((i) + 1), KRAFT_4 ((i) + 2), KRAFT_4 ((i) + 3), KRAFT_4 ((i) + 4), KRAFT_4 ((i) + 5),          \
    KRAFT_4 ((i) + 6), KRAFT_4 ((i) + 7), KRAFT_4 ((i) + 8), KRAFT_4 ((i) + 9), KRAFT_4 ((i) + 10),                    \
    KRAFT_4 ((i) + 11), KRAFT_4 ((i) + 12), KRAFT_4 ((i) + 13), KRAFT_4 ((i) + 14), KRAFT_4 ((i) + 15)
#define KRAFT_256(i)                                                                                                   \
  KRAFT_16 (i), KRAFT_16 ((i) + 16), KRAFT_16 ((i) + 32), KRAFT_16 ((i) + 48), KRAFT_16 ((i) + 64),                    \
    KRAFT_16 ((i) + 80), KRAFT_16 ((i) + 96), KRAFT_16 ((i) + 112), KRAFT_16 ((i) + 128), KRAFT_16 ((i) + 144),        \
    KRAFT_16 ((i) + 160), KRAFT_16 ((i) + 176), KRAFT_16 ((i) + 192), KRAFT_16 ((i) + 208), KRAFT_16 ((i) + 224),      \
    KRAFT_16 ((i) + 240)
static const uint16_t kraft_of_4[4096] = {
  KRAFT_256 (0),    KRAFT_256 (256),  KRAFT_256 (512),  KRAFT_256 (768),  KRAFT_256 (1024), KRAFT_256 (1280),
  KRAFT_256 (1536), KRAFT_256 (1792), KRAFT_256 (2048), KRAFT_256 (2304), KRAFT_256 (2560), KRAFT_256 (2816),
  KRAFT_256 (3072), KRAFT_256 (3328), KRAFT_256 (3584), KRAFT_256 (3840),
};

size_t
es_inflate_find_block (const uint8_t *data, size_t size, size_t from_bit, size_t to_bit)
{
  if (to_bit > size * 8)
    to_bit = size * 8;
  for (size_t byte = from_bit / 8; byte < (to_bit + 7) / 8; byte++)
    {
      /* Cheap rejections first, eight bit offsets at once: BTYPE 2 (its
       * first bit clear, its second set); then HLIT and HDIST at most 29, a
       * complete code-length code. */
      uint64_t v = peek_at (data, size, byte * 8);
      unsigned offsets = (unsigned) (~v >> 1 & v >> 2) & 0xff;
      for (; offsets != 0; offsets &= offsets - 1)
        {
          unsigned shift = (unsigned) __builtin_ctz (offsets);
          size_t bit = byte * 8 + shift;
          uint64_t header = v >> shift;
          if (bit < from_bit || bit >= to_bit || (header >> 3 & 31) > 29 || (header >> 8 & 31) > 29)
            continue;
          unsigned hclen = (unsigned) (header >> 13 & 15) + 4;
          uint64_t w = peek_at (data, size, bit + 17) & ((1ull << 3 * hclen) - 1);
          unsigned kraft = kraft_of_4[w & 4095] + kraft_of_4[w >> 12 & 4095] + kraft_of_4[w >> 24 & 4095]
                           + kraft_of_4[w >> 36 & 4095] + kraft_of_4[w >> 48 & 4095];
          if (kraft == 128 && dynamic_header_valid (data, size, bit))
            return bit;
        }
    }
  return SIZE_MAX;
}
