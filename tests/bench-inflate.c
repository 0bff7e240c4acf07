/* SPDX-License-Identifier: MIT */
/* Timing of es_inflate_parallel (docs/performance/files.md, "Decoding PNG"):
 *   bench-inflate FILE [THREADS...]
 * FILE is a PNG (its IDAT run) or a zlib stream. Prints medians of 7 of libdeflate (zlib without it)
 * and of our decoder on one thread and one chunk (the per-core speed), of es_inflate_parallel at each
 * thread count, and a prediction for 16 threads from its 64 chunks timed one by one on this thread
 * (find, decode and join, scheduled greedily as OpenMP's dynamic schedule does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#ifdef ES_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "es-inflate-chunk.h"
#include "es-inflate-parallel.h"

#define RUNS 7

static double
now (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *t)
{
  qsort (t, RUNS, sizeof *t, compare);
  return t[RUNS / 2];
}

static uint32_t
be32 (const uint8_t *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* The file, or its IDAT chunks joined when it is a PNG. */
static uint8_t *
load_stream (const char *path, size_t *size)
{
  FILE *file = fopen (path, "rb");
  uint8_t *data, *idat;
  long n;
  size_t joined = 0;

  if (file == NULL || fseek (file, 0, SEEK_END) != 0 || (n = ftell (file)) < 0 || fseek (file, 0, SEEK_SET) != 0)
    return NULL;
  data = malloc ((size_t) n + 1);
  if (data == NULL || fread (data, 1, (size_t) n, file) != (size_t) n)
    return NULL;
  fclose (file);
  *size = (size_t) n;
  if (n < 8 || memcmp (data, "\x89PNG\r\n\x1a\n", 8) != 0)
    return data;
  idat = malloc ((size_t) n);
  for (size_t pos = 8; idat != NULL && pos + 12 <= (size_t) n;)
    {
      size_t length = be32 (data + pos);
      if (length > (size_t) n - pos - 12)
        break;
      if (memcmp (data + pos + 4, "IDAT", 4) == 0)
        {
          memcpy (idat + joined, data + pos + 8, length);
          joined += length;
        }
      pos += length + 12;
    }
  free (data);
  *size = joined;
  return idat;
}

/* The reference inflater; returns the bytes inflated or 0. */
static size_t
reference (const uint8_t *in, size_t size, uint8_t *out, size_t capacity)
{
#ifdef ES_HAVE_LIBDEFLATE
  static struct libdeflate_decompressor *inflater;
  size_t used = 0;
  if (inflater == NULL)
    inflater = libdeflate_alloc_decompressor ();
  return libdeflate_zlib_decompress (inflater, in, size, out, capacity, &used) == LIBDEFLATE_SUCCESS ? used : 0;
#else
  uLongf used = capacity;
  return uncompress (out, &used, in, size) == Z_OK ? used : 0;
#endif
}

/* The most any of `workers` is busy when tasks go, in order, to whichever
 * is free first. */
static double
makespan (const double *task, size_t count, int workers)
{
  double busy[64] = { 0 }, most = 0;
  for (size_t i = 0; i < count; i++)
    {
      int first = 0;
      for (int w = 1; w < workers; w++)
        first = busy[w] < busy[first] ? w : first;
      busy[first] += task[i];
    }
  for (int w = 0; w < workers; w++)
    most = busy[w] > most ? busy[w] : most;
  return most;
}

/* es_inflate_parallel's steps for 16 threads (64 chunks), one at a time. */
static void
predict (const uint8_t *in, size_t size, uint8_t *out, size_t total, double serial)
{
  enum { CUTS = 64 };
  const uint8_t *data = in + 2;
  size_t deflate = size - 2, offset = 0;
  EsInflateChunk chunks[CUTS] = { 0 };
  double find[CUTS] = { 0 }, decode[CUTS] = { 0 }, join[CUTS] = { 0 }, t;

  for (size_t k = 1; k < CUTS; k++)
    {
      t = now ();
      chunks[k].start_bit = es_inflate_find_block (data, deflate, k * deflate / CUTS * 8, (k + 1) * deflate / CUTS * 8);
      find[k] = now () - t;
    }
  for (size_t k = 0; k < CUTS; k++)
    {
      chunks[k].stop_bit = k + 1 < CUTS ? chunks[k + 1].start_bit : SIZE_MAX;
      chunks[k].max_out = total;
      if (k == 0)
        chunks[k].into = out, chunks[k].into_capacity = total;
      t = now ();
      es_inflate_chunk_decode (&chunks[k], data, deflate);
      decode[k] = now () - t;
      if (!chunks[k].ok || chunks[k].start_bit == SIZE_MAX
          || (k + 1 < CUTS && chunks[k].end_bit != chunks[k + 1].start_bit))
        {
          printf ("prediction: chunk %zu does not join its neighbour (no start found, or a false one)\n", k);
          return;
        }
    }
  /* Joining: markers resolved and bytes copied, as es_inflate_parallel does. */
  for (size_t k = 0; k < CUTS; k++)
    {
      size_t length = es_inflate_chunk_size (&chunks[k]);
      t = now ();
      for (size_t i = 0; k > 0 && i < chunks[k].symbol_count; i++)
        {
          unsigned s = chunks[k].symbols[i];
          out[offset + i] = s < 256 ? (uint8_t) s : out[offset - ES_INFLATE_WINDOW + (s - ES_INFLATE_MARKER)];
        }
      if (k > 0)
        memcpy (out + offset + chunks[k].symbol_count, chunks[k].bytes + chunks[k].bytes_begin,
                chunks[k].bytes_end - chunks[k].bytes_begin);
      t = now () - t;
      join[k] = t;
      offset += length;
      es_inflate_chunk_clear (&chunks[k]);
    }
  t = now ();
#ifdef ES_HAVE_LIBDEFLATE
  volatile uint32_t adler = libdeflate_adler32 (1, out, offset);
#else
  volatile uint32_t adler = (uint32_t) adler32_z (1, out, offset);
#endif
  t = now () - t;
  (void) adler;
  for (int threads = 1; threads <= 16; threads *= 2)
    {
      double p = makespan (find, CUTS, threads) + makespan (decode, CUTS, threads) + makespan (join, CUTS, threads)
                 + t / threads;
      printf ("predicted, %2d threads, 64 chunks: %.1f ms (%.1fx the reference's speed)\n", threads, p * 1e3,
              serial / p);
    }
}

int
main (int argc, char **argv)
{
  size_t size = 0, total, capacity;
  uint8_t *in, *out, *ref;
  double t[RUNS], serial, one;

  if (argc < 2 || (in = load_stream (argv[1], &size)) == NULL || size < 2)
    {
      fprintf (stderr, "usage: bench-inflate FILE.png|FILE.z [THREADS...]\n");
      return 2;
    }
  capacity = size * 8 + (1u << 20);
  out = malloc (capacity);
  ref = malloc (capacity);
  memset (out, 0, capacity);
  memset (ref, 0, capacity);
  total = reference (in, size, ref, capacity);
  if (total == 0)
    {
      fprintf (stderr, "%s: not a zlib stream inflating to at most %zu bytes\n", argv[1], capacity);
      return 1;
    }
  for (int r = 0; r < RUNS; r++)
    {
      t[r] = now ();
      reference (in, size, ref, capacity);
      t[r] = now () - t[r];
    }
  serial = median (t);
  for (int r = 0; r < RUNS; r++)
    {
      EsInflateChunk whole = { .stop_bit = SIZE_MAX, .max_out = total, .into = out, .into_capacity = total };
      t[r] = now ();
      bool ok = es_inflate_chunk_decode (&whole, in + 2, size - 2) && es_inflate_chunk_size (&whole) == total;
      t[r] = now () - t[r];
      if (!ok || memcmp (out, ref, total) != 0)
        printf ("our decoder disagrees\n");
    }
  one = median (t);
#ifdef ES_HAVE_LIBDEFLATE
  const char *name = "libdeflate";
#else
  const char *name = "zlib";
#endif
  printf ("%s: %zu bytes -> %zu; %s %.1f ms; our decoder, one thread, one chunk %.1f ms (%.2fx %s's time)\n", argv[1],
          size, total, name, serial * 1e3, one * 1e3, one / serial, name);
  for (int a = 2; a < argc; a++)
    {
      EsInflateSplit split = { atoi (argv[a]), 0 };
      size_t used = 0;
      bool ok = true;
      for (int r = 0; r < RUNS; r++)
        {
          t[r] = now ();
          ok &= es_inflate_parallel (in, size, out, total, &used, &split);
          t[r] = now () - t[r];
        }
      ok &= used == total && memcmp (out, ref, total) == 0;
      size_t chunks = (size - 2) / (256u << 10);
      chunks = chunks > (size_t) split.threads * 4 ? (size_t) split.threads * 4 : chunks ? chunks : 1;
      printf ("es_inflate_parallel, %d threads, up to %zu chunks: %.1f ms (%.2fx %s's speed)%s\n", split.threads,
              chunks, median (t) * 1e3, serial / median (t), name, ok ? "" : " WRONG");
    }
  predict (in, size, out, total, serial);
  free (in);
  free (out);
  free (ref);
  return 0;
}
