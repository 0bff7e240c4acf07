/* SPDX-License-Identifier: MIT */
/* Private to es-inflate-parallel.c: a deflate (RFC 1951) decoder that starts at any block boundary
 * of a stream, not knowing the 32 KiB before it, and the search for a dynamic block's header. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deflate's window: a match reaches at most this far back. */
#define ES_INFLATE_WINDOW 32768u
/* A symbol s >= ES_INFLATE_MARKER stands for byte (s - ES_INFLATE_MARKER) of the
 * ES_INFLATE_WINDOW bytes before the chunk; a symbol below 256 is that byte. */
#define ES_INFLATE_MARKER 0x8000u

/* One stretch of the stream. The caller sets the first group of fields (the
 * rest zero); es_inflate_chunk_decode fills in the second. The output is
 * symbols[0..symbol_count) followed by bytes[bytes_begin..bytes_end): the
 * decoder writes symbols while a match can still reach before the chunk and
 * switches to plain bytes once the last 32 KiB it wrote hold no marker. */
typedef struct {
  size_t start_bit; /* where to start: a block boundary, or a guess at one */
  size_t stop_bit;  /* stop at the first block boundary at or past this */
  size_t max_out;   /* more output than this is a failure */
  size_t *budget;   /* NULL, or bytes that all chunks may still allocate (atomic) */
  uint8_t *into;    /* the stream's start only: decode bytes straight into into[0..into_capacity) */
  size_t into_capacity;

  uint16_t *symbols;
  size_t symbol_count, symbol_capacity;
  uint8_t *bytes; /* into, or a buffer of its own whose first 32 KiB are the window */
  size_t bytes_begin, bytes_end, bytes_capacity;
  size_t end_bit; /* the block boundary where it stopped */
  bool final;     /* it stopped after the stream's final block */
  bool ok;        /* false: the data is not deflate from start_bit on (or no memory) */
} EsInflateChunk;

/* Decodes data[0..size) (a deflate stream and whatever follows it) from
 * chunk->start_bit; returns chunk->ok. Never reads outside data. */
bool es_inflate_chunk_decode (EsInflateChunk *chunk, const uint8_t *data, size_t size);

/* The chunk's output size: symbols and bytes. */
size_t es_inflate_chunk_size (const EsInflateChunk *chunk);

/* Frees what the decode allocated and clears the results (the caller's fields stay). */
void es_inflate_chunk_clear (EsInflateChunk *chunk);

/* The first bit offset in [from_bit, to_bit) where a dynamic Huffman block
 * header parses fully and validly (zlib's rules, complete codes), or
 * SIZE_MAX. */
size_t es_inflate_find_block (const uint8_t *data, size_t size, size_t from_bit, size_t to_bit);
