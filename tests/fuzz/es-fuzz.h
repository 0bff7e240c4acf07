/* SPDX-License-Identifier: MIT */
/* Shared by the fuzz harnesses and the replay driver: the entry point and the decoder contract checks. */
#pragma once

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "es-load.h"
#include "es-load-internal.h"

/* Small enough that a claimed size of a few gigapixels is refused instead of
 * allocated (libFuzzer's RSS limit), large enough for every seed. */
#define ES_FUZZ_MAX_PIXELS (1u << 22)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A broken contract is a finding: say which and stop, so that libFuzzer
 * saves the input and the replay driver names it. */
#define ES_FUZZ_REQUIRE(condition)                                                                                     \
  do                                                                                                                   \
    {                                                                                                                  \
      if (!(condition))                                                                                                \
        {                                                                                                              \
          fprintf (stderr, "%s:%d: decoder contract broken: %s\n", __FILE__, __LINE__, #condition);                    \
          __builtin_trap ();                                                                                           \
        }                                                                                                              \
    }                                                                                                                  \
  while (0)

/* CRC-32 of PNG chunks (ISO 3309), bit by bit: inputs are small. */
static inline uint32_t
es_fuzz_crc32 (const uint8_t *data, size_t size)
{
  uint32_t c = 0xffffffffu;

  for (size_t i = 0; i < size; i++)
    {
      c ^= data[i];
      for (int k = 0; k < 8; k++)
        c = c >> 1 ^ (0xedb88320u & -(c & 1));
    }
  return ~c;
}

/* Rewrites the CRC of every whole chunk after the 8-byte signature. Returns
 * whether anything changed. libpng rejects a chunk with a bad CRC before
 * looking inside, and libpng is not instrumented, so without this almost
 * every mutation would die at the first CRC check. */
static inline bool
es_fuzz_fix_png_crcs (uint8_t *data, size_t size)
{
  bool changed = false;

  for (size_t pos = 8; size >= 12 && pos <= size - 12;)
    {
      uint32_t length = (uint32_t) data[pos] << 24 | (uint32_t) data[pos + 1] << 16 | (uint32_t) data[pos + 2] << 8
                        | data[pos + 3];
      if (length > size - 12 - pos)
        break;
      uint32_t crc = es_fuzz_crc32 (data + pos + 4, (size_t) length + 4);
      uint8_t *out = data + pos + 8 + length;
      uint8_t want[4] = { crc >> 24, crc >> 16, crc >> 8, crc };
      if (memcmp (out, want, 4) != 0)
        {
          memcpy (out, want, 4);
          changed = true;
        }
      pos += (size_t) length + 12;
    }
  return changed;
}

/* Checks what es-load.h promises about a decode, reads every sample (so that
 * AddressSanitizer sees a buffer shorter than the size claims) and frees the
 * image. levels is the text-matrix level count, or 0 for PNG and PGM. */
static inline void
es_fuzz_check (bool ok, EsImage *image, const EsError *error, int levels)
{
  if (!ok)
    {
      ES_FUZZ_REQUIRE (error->code != ES_OK);
      ES_FUZZ_REQUIRE (error->message[0] != '\0');
      ES_FUZZ_REQUIRE (memchr (error->message, '\0', sizeof error->message) != NULL);
      ES_FUZZ_REQUIRE (image->pixels == NULL);
      es_image_clear (image);
      return;
    }

  ES_FUZZ_REQUIRE (image->pixels != NULL);
  ES_FUZZ_REQUIRE (image->width >= 1 && image->height >= 1);
  ES_FUZZ_REQUIRE ((uint64_t) image->width * (uint64_t) image->height <= ES_FUZZ_MAX_PIXELS);
  ES_FUZZ_REQUIRE (image->format == ES_FORMAT_U8 || image->format == ES_FORMAT_U16);
  ES_FUZZ_REQUIRE (image->stride >= (size_t) image->width * es_format_size (image->format));
  ES_FUZZ_REQUIRE (image->depth >= 1 && image->depth <= (image->format == ES_FORMAT_U8 ? 8 : 16));
  ES_FUZZ_REQUIRE (image->levels == levels);

  /* Every sample fits its depth, and a text matrix holds only levels. */
  uint32_t limit = levels ? (uint32_t) levels : 1u << image->depth;
  for (int y = 0; y < image->height; y++)
    {
      const void *row = es_image_row (image, y);
      for (int x = 0; x < image->width; x++)
        {
          uint32_t v = image->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x] : ((const uint16_t *) row)[x];
          ES_FUZZ_REQUIRE (v < limit && v < 1u << image->depth);
        }
    }
  es_image_clear (image);
}

/* ---- the streaming path: the same bytes from a descriptor, in pieces ---- */

/* A memory file (a regular file to fstat) holding the data, at offset 0. */
static inline int
es_fuzz_memfd (const uint8_t *data, size_t size)
{
  int fd = memfd_create ("es-fuzz", MFD_CLOEXEC);
  size_t done = 0;

  if (fd < 0)
    return -1;
  while (done < size)
    {
      ssize_t n = write (fd, data + done, size - done);
      if (n <= 0)
        {
          close (fd);
          return -1;
        }
      done += (size_t) n;
    }
  if (lseek (fd, 0, SEEK_SET) != 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* The read end of a pipe (not a regular file: no size to trust) that holds
 * the data and whose write end is closed; -1 when it does not fit. */
static inline int
es_fuzz_pipe (const uint8_t *data, size_t size)
{
  int fds[2];
  int capacity;
  size_t done = 0;

  if (pipe2 (fds, O_CLOEXEC) != 0)
    return -1;
  capacity = fcntl (fds[1], F_SETPIPE_SZ, 1 << 20);
  if (capacity < 0)
    capacity = fcntl (fds[1], F_GETPIPE_SZ);
  if (capacity < 0 || size > (size_t) capacity)
    {
      close (fds[0]);
      close (fds[1]);
      return -1;
    }
  while (done < size)
    {
      ssize_t n = write (fds[1], data + done, size - done);
      if (n <= 0)
        break;
      done += (size_t) n;
    }
  close (fds[1]);
  if (done < size)
    {
      close (fds[0]);
      return -1;
    }
  return fds[0];
}

/* The cap on one read() for this input, from a hash of it: pieces of a few
 * bytes put every boundary of the reader's buffer inside headers, samples
 * and chunks; 0 (no cap) now and then. Large inputs get larger pieces so
 * that a run stays fast. */
static inline size_t
es_fuzz_piece (const uint8_t *data, size_t size)
{
  uint32_t h = 2166136261u;

  for (size_t i = 0; i < size && i < 64; i++)
    h = (h ^ data[i]) * 16777619u;
  h ^= (uint32_t) size * 2654435761u;
  if (h % 8 == 0)
    return 0;
  return (size_t) (1 + h / 8 % 13) * (size > 16384 ? 512 : 1);
}

/* Two decodes of the same bytes must agree: verdict, code, message, image. */
static inline void
es_fuzz_require_same (bool ok_a, const EsImage *a, const EsError *error_a, bool ok_b, const EsImage *b,
                      const EsError *error_b)
{
  ES_FUZZ_REQUIRE (ok_a == ok_b);
  if (!ok_a)
    {
      if (error_a->code != error_b->code || strcmp (error_a->message, error_b->message) != 0)
        fprintf (stderr, "\"%s\" != \"%s\"\n", error_a->message, error_b->message);
      ES_FUZZ_REQUIRE (error_a->code == error_b->code);
      ES_FUZZ_REQUIRE (strcmp (error_a->message, error_b->message) == 0);
      return;
    }
  ES_FUZZ_REQUIRE (a->width == b->width && a->height == b->height);
  ES_FUZZ_REQUIRE (a->format == b->format && a->depth == b->depth && a->levels == b->levels);
  for (int y = 0; y < a->height; y++)
    ES_FUZZ_REQUIRE (memcmp (es_image_row (a, y), es_image_row (b, y), (size_t) a->width * es_format_size (a->format))
                     == 0);
}

/* A decoder from memory and its twin reading a descriptor in pieces. */
typedef bool (*EsFuzzMemoryDecode) (const void *data, size_t size, EsImage *image, EsError *error);
typedef bool (*EsFuzzReaderDecode) (EsReader *reader, EsImage *image, EsError *error);

/* Decodes the bytes from memory and streamed from a descriptor in pieces
 * whose size the input picks: both must agree, and each must keep the
 * decoder contract. */
static inline void
es_fuzz_decode_both (const uint8_t *data, size_t size, EsFuzzMemoryDecode from_memory, EsFuzzReaderDecode from_reader)
{
  EsImage image = { 0 }, streamed = { 0 };
  EsError error = { 0 }, streamed_error = { 0 };
  EsReader reader;
  bool ok, streamed_ok;
  int fd;

  ok = from_memory (data, size, &image, &error);
  fd = es_fuzz_memfd (data, size);
  if (fd >= 0 && es_reader_init_fd (&reader, fd, es_load_get_max_file_size (), &streamed_error))
    {
      es_reader_set_piece_max (es_fuzz_piece (data, size));
      streamed_ok = from_reader (&reader, &streamed, &streamed_error);
      es_reader_set_piece_max (0);
      es_reader_clear (&reader);
      es_fuzz_require_same (ok, &image, &error, streamed_ok, &streamed, &streamed_error);
      es_fuzz_check (streamed_ok, &streamed, &streamed_error, 0);
    }
  if (fd >= 0)
    close (fd);
  es_fuzz_check (ok, &image, &error, 0);
}

/* A decode with a size limit below the input's size either needed no more
 * than the limit (and agrees with the unlimited one) or says the file is
 * larger than the limit. */
static inline void
es_fuzz_require_same_or_limit (bool ok_a, const EsImage *a, const EsError *error_a, bool ok_limited,
                               const EsImage *limited, const EsError *error_limited)
{
  if (!ok_limited && error_limited->code == ES_ERROR_IO && strstr (error_limited->message, "larger than"))
    return;
  es_fuzz_require_same (ok_a, a, error_a, ok_limited, limited, error_limited);
}
