/* SPDX-License-Identifier: MIT */
/* Internal to app/: bounded, buffered reading of an input, from memory or from a descriptor, for the decoders. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-control.h"
#include "es-error.h"

/* The most a reader keeps buffered: es_reader_fill never makes more than
 * this available at once, and the format is recognised within it. */
#define ES_READER_BUFFER (64u << 10)

/* A window [pos, end) of the input is available at data. Memory readers see
 * the whole input at once; descriptor readers see at most ES_READER_BUFFER
 * bytes of it, read in pieces, and never read more than limit + 1 bytes: the
 * extra byte only tells that the input is longer than the limit, and is
 * never handed to a decoder. */
typedef struct {
  const uint8_t *data;
  size_t pos, end;
  uint64_t base;   /* input offset of data[0] */
  int fd;          /* -1 for memory */
  uint8_t *buffer; /* descriptor readers: ES_READER_BUFFER bytes */
  uint64_t limit;  /* descriptor readers: the most bytes an input may have */
  uint64_t total;  /* bytes read from fd so far */
  int error;       /* errno of the failure that ended the input early (EFBIG: over the limit,
                        * ECANCELED: interrupted), 0 when it ended normally or has not ended */
  bool eof;        /* nothing more will come */
} EsReader;

void es_reader_init_memory (EsReader *reader, const void *data, size_t size);
/* Reads fd (not closed here) up to limit bytes; allocates the buffer. */
bool es_reader_init_fd (EsReader *reader, int fd, uint64_t limit, EsError *error);
void es_reader_clear (EsReader *reader);

/* Makes up to n (at most ES_READER_BUFFER) bytes available at data + pos and
 * returns how many are: fewer than n only at the end of the input. */
size_t es_reader_fill (EsReader *reader, size_t n);
/* Copies up to n bytes out; fewer only at the end of the input. A
 * descriptor reader reads large amounts straight into out. */
size_t es_reader_read (EsReader *reader, void *out, size_t n);

/* The next byte, or -1 at the end of the input. */
static inline int
es_reader_peek (EsReader *reader)
{
  if (reader->pos < reader->end || es_reader_fill (reader, 1) > 0)
    return reader->data[reader->pos];
  return -1;
}

static inline int
es_reader_next (EsReader *reader)
{
  int c = es_reader_peek (reader);

  if (c >= 0)
    reader->pos++;
  return c;
}

/* The input offset of the next byte. */
static inline uint64_t
es_reader_offset (const EsReader *reader)
{
  return reader->base + reader->pos;
}

/* When the input ended early because of a read error, the limit or an
 * interruption, sets error to say so (ES_ERROR_IO, or ES_ERROR_CANCELLED)
 * and returns true; a decoder reports this rather than a truncated file. */
bool es_reader_failed (const EsReader *reader, EsError *error);

/* Tells how many of n new bytes a decoder needs: n to go on, or fewer with
 * *done set when nothing after them can change what it says. */
typedef size_t (*EsReaderNeeded) (void *state, const uint8_t *bytes, size_t n, bool *done);

/* How many bytes the input still has, as far as it can be known without
 * reading them: the rest of a memory input or of a regular file (fstat),
 * else 0. A hint for sizing a buffer once, never a promise: a file may
 * change while it is read, so the reads stay bounded as before. */
uint64_t es_reader_left_hint (const EsReader *reader);

/* Reads the rest of a descriptor reader's input into one malloc'd block
 * (*data, *size; free it), in pieces and never past the limit, stopping as
 * soon as needed (state, ...) says the decoder has all it needs. */
bool es_reader_read_rest (EsReader *reader, EsReaderNeeded needed, void *state, uint8_t **data, size_t *size,
                          EsError *error);

/* "4 GiB", "1 MiB", "1000 bytes": how messages give a size limit. */
void es_reader_format_size (uint64_t bytes, char *out, size_t out_size);

/* Process-wide settings of descriptor readers (es-load.h sets them):
 * the control whose cancellation interrupts a read, and, for tests and
 * fuzzers, the most bytes one read() call may ask for (0: no cap), so that
 * every boundary between pieces gets exercised. */
void es_reader_set_interrupt (EsControl *control);
void es_reader_set_piece_max (size_t bytes);
