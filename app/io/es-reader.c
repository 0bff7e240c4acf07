/* SPDX-License-Identifier: MIT */
/* Bounded, buffered reading of an input in pieces: decoders never trust a file's claimed size. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-reader.h"

static EsControl *interrupt_control;
static size_t piece_max;

void
es_reader_set_interrupt (EsControl *control)
{
  interrupt_control = control;
}

void
es_reader_set_piece_max (size_t bytes)
{
  piece_max = bytes;
}

void
es_reader_init_memory (EsReader *reader, const void *data, size_t size)
{
  *reader = (EsReader){ .data = data, .end = size, .fd = -1, .eof = true };
}

bool
es_reader_init_fd (EsReader *reader, int fd, uint64_t limit, EsError *error)
{
  *reader = (EsReader){ .fd = fd, .limit = limit };
  reader->buffer = malloc (ES_READER_BUFFER);
  if (reader->buffer == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate a read buffer");
  reader->data = reader->buffer;
  return true;
}

uint64_t
es_reader_left_hint (const EsReader *reader)
{
  struct stat st;
  off_t at;

  if (reader->fd < 0)
    return reader->end - reader->pos;
  if (fstat (reader->fd, &st) != 0 || !S_ISREG (st.st_mode) || (at = lseek (reader->fd, 0, SEEK_CUR)) < 0
      || st.st_size < at)
    return 0;
  return (uint64_t) (st.st_size - at) + (reader->end - reader->pos);
}

void
es_reader_clear (EsReader *reader)
{
  free (reader->buffer);
  *reader = (EsReader){ .fd = -1, .eof = true };
}

/* One read() of at most `want` bytes into dst, never past limit + 1 bytes in
 * all. Returns the bytes read; 0 means the input has ended (reader->eof),
 * normally or with reader->error. A byte past the limit is counted but not
 * returned. */
static size_t
es_reader_read_piece (EsReader *reader, uint8_t *dst, size_t want)
{
  uint64_t room = reader->limit + 1 - reader->total;

  if (reader->eof)
    return 0;
  if (want > room)
    want = (size_t) room;
  if (piece_max > 0 && want > piece_max)
    want = piece_max;
  for (;;)
    {
      ssize_t got;

      /* A signal handler cancels the control; the read it interrupted (or
       * the next one) stops here instead of being restarted. */
      if (es_control_cancelled (interrupt_control))
        {
          reader->error = ECANCELED;
          reader->eof = true;
          return 0;
        }
      got = read (reader->fd, dst, want);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        {
          reader->error = errno;
          reader->eof = true;
          return 0;
        }
      if (got == 0)
        {
          reader->eof = true;
          return 0;
        }
      reader->total += (uint64_t) got;
      if (reader->total > reader->limit)
        {
          /* The one byte past the limit: the input is too large. */
          reader->error = EFBIG;
          reader->eof = true;
          return (size_t) got - 1;
        }
      return (size_t) got;
    }
}

size_t
es_reader_fill (EsReader *reader, size_t n)
{
  size_t available = reader->end - reader->pos;

  if (available >= n || reader->fd < 0 || reader->eof)
    return available;
  if (n > ES_READER_BUFFER)
    n = ES_READER_BUFFER;
  /* Keep the unread bytes at the start of the buffer. */
  if (reader->pos > 0)
    {
      memmove (reader->buffer, reader->buffer + reader->pos, available);
      reader->base += reader->pos;
      reader->pos = 0;
      reader->end = available;
    }
  while (reader->end < n && !reader->eof)
    reader->end += es_reader_read_piece (reader, reader->buffer + reader->end, ES_READER_BUFFER - reader->end);
  return reader->end - reader->pos;
}

size_t
es_reader_read (EsReader *reader, void *out, size_t n)
{
  uint8_t *dst = out;
  size_t done = reader->end - reader->pos < n ? reader->end - reader->pos : n;

  /* What is buffered first; then a large remainder goes from the
   * descriptor straight into out, a read() at a time, sparing a copy
   * through the buffer (a raw raster of gigabytes reads at the page
   * cache's speed). The offsets count those bytes as read through. */
  memcpy (dst, reader->data + reader->pos, done);
  reader->pos += done;
  while (reader->fd >= 0 && n - done >= ES_READER_BUFFER && !reader->eof)
    {
      reader->base += reader->pos;
      reader->pos = reader->end = 0;
      size_t got = es_reader_read_piece (reader, dst + done, n - done);
      reader->base += got;
      done += got;
    }
  while (done < n)
    {
      size_t available = es_reader_fill (reader, n - done);
      size_t take = available < n - done ? available : n - done;

      if (take == 0)
        break;
      memcpy (dst + done, reader->data + reader->pos, take);
      reader->pos += take;
      done += take;
    }
  return done;
}

void
es_reader_format_size (uint64_t bytes, char *out, size_t out_size)
{
  static const char *units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
  int unit = 0;

  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0)
    {
      bytes /= 1024;
      unit++;
    }
  snprintf (out, out_size, "%llu %s", (unsigned long long) bytes, units[unit]);
}

bool
es_reader_failed (const EsReader *reader, EsError *error)
{
  char size[32];

  switch (reader->error)
    {
    case 0: return false;
    case EFBIG:
      es_reader_format_size (reader->limit, size, sizeof size);
      es_error_set (error, ES_ERROR_IO, "file is larger than %s", size);
      return true;
    case ECANCELED: es_error_set (error, ES_ERROR_CANCELLED, "interrupted"); return true;
    default: es_error_set (error, ES_ERROR_IO, "%s", strerror (reader->error)); return true;
    }
}

/* The first block is large enough for most text inputs without a copy, and
 * small enough that a huge file announcing itself costs nothing up front. */
#define ES_READER_REST_FIRST (1u << 20)
/* One read() is never asked for more than this. */
#define ES_READER_REST_PIECE (16u << 20)

bool
es_reader_read_rest (EsReader *reader, EsReaderNeeded needed, void *state, uint8_t **data, size_t *size, EsError *error)
{
  size_t length = reader->end - reader->pos;
  size_t capacity = length > ES_READER_REST_FIRST ? length : ES_READER_REST_FIRST;
  uint8_t *block = malloc (capacity);
  bool done = false;

  if (block == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to read the file", capacity >> 20);
  memcpy (block, reader->data + reader->pos, length);
  reader->base += reader->end;
  reader->pos = reader->end = 0;
  length = needed (state, block, length, &done);

  while (!done && !reader->eof)
    {
      size_t got, want;

      if (length == capacity)
        {
          /* Grows geometrically, but never past the limit plus the one
           * byte that shows a file is too long (length stays within the
           * limit, so the block is never full at that size). */
          size_t bigger = capacity * 2 < capacity ? SIZE_MAX : capacity * 2;
          uint8_t *grown;

          if ((uint64_t) bigger > reader->limit + 1)
            bigger = (size_t) (reader->limit + 1);
          grown = realloc (block, bigger);
          if (grown == NULL)
            {
              free (block);
              return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to read the file", bigger >> 20);
            }
          block = grown;
          capacity = bigger;
        }
      want = capacity - length < ES_READER_REST_PIECE ? capacity - length : ES_READER_REST_PIECE;
      got = es_reader_read_piece (reader, block + length, want);
      length += needed (state, block + length, got, &done);
    }
  /* What the decoder needs was all read: a later failure does not matter. */
  if (!done && es_reader_failed (reader, error))
    {
      free (block);
      return false;
    }
  *data = block;
  *size = length;
  return true;
}
