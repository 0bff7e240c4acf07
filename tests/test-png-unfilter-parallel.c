/* SPDX-License-Identifier: MIT */
/* The PNG decoder's unfiltering on several threads (a wavefront: a row of Up, Average or Paeth
 * follows the row above a span behind) against the specification's filters: images whose rows mix
 * the five filter types, every layout es-png-inflate.c takes, 1, 2, 3 and 8 threads, spans from
 * one pixel up, each decoded with a watch that must hear of final rows only, in increasing order;
 * then a stream that es_inflate_parallel inflates, whole and damaged. In a build without
 * libdeflate the rows are unfiltered as zlib inflates them, one thread. */
#include <omp.h>
#include <string.h>
#include <zlib.h>

#include "es-inflate-parallel.h"
#include "es-load-internal.h"
#include "es-png-unfilter.h"
#include "tap.h"

typedef struct {
  int width, height, channels, depth;
  uint8_t *samples;   /* big-endian samples, as PNG stores them */
  uint8_t *filters;   /* a filter type a row */
  uint32_t *expected; /* the gray image the decoder must give */
} Case;

static void
put32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

static size_t
put_chunk (uint8_t *out, const char *type, const uint8_t *data, uint32_t n)
{
  put32 (out, n);
  memcpy (out + 4, type, 4);
  if (n > 0)
    memcpy (out + 8, data, n);
  put32 (out + 8 + n, (uint32_t) crc32 (0, out + 4, n + 4));
  return n + 12;
}

/* The specification's predictor, written out as the PNG standard gives it. */
static int
predict (int type, int a, int b, int c)
{
  int p = a + b - c, pa = abs (p - a), pb = abs (p - b), pc = abs (p - c);

  switch (type)
    {
    case 1: return a;
    case 2: return b;
    case 3: return (a + b) / 2;
    case 4: return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    default: return 0;
    }
}

/* Filters the samples row by row and writes the PNG; returns its size. */
static size_t
write_png (const Case *c, uint8_t **png)
{
  size_t bpp = (size_t) c->channels * (size_t) c->depth / 8, row_bytes = (size_t) c->width * bpp;
  size_t raw_size = (size_t) c->height * (row_bytes + 1);
  uLongf packed_size = compressBound ((uLong) raw_size);
  uint8_t *raw = malloc (raw_size), *packed = malloc (packed_size), ihdr[13];
  size_t size = 8;

  for (int y = 0; y < c->height; y++)
    {
      const uint8_t *row = c->samples + (size_t) y * row_bytes, *above = y > 0 ? row - row_bytes : NULL;
      uint8_t *out = raw + (size_t) y * (row_bytes + 1);

      out[0] = c->filters[y];
      for (size_t i = 0; i < row_bytes; i++)
        {
          int a = i >= bpp ? row[i - bpp] : 0, b = above ? above[i] : 0, cc = above && i >= bpp ? above[i - bpp] : 0;
          out[1 + i] = (uint8_t) (row[i] - predict (c->filters[y], a, b, cc));
        }
    }
  compress2 (packed, &packed_size, raw, (uLong) raw_size, 1);
  *png = malloc (packed_size + 100);
  memcpy (*png, "\x89PNG\r\n\x1a\n", 8);
  put32 (ihdr, (uint32_t) c->width);
  put32 (ihdr + 4, (uint32_t) c->height);
  ihdr[8] = (uint8_t) c->depth;
  ihdr[9] = (uint8_t) (c->channels == 1 ? 0 : c->channels == 2 ? 4 : c->channels == 3 ? 2 : 6);
  ihdr[10] = ihdr[11] = ihdr[12] = 0;
  size += put_chunk (*png + size, "IHDR", ihdr, 13);
  size += put_chunk (*png + size, "IDAT", packed, (uint32_t) packed_size);
  size += put_chunk (*png + size, "IEND", NULL, 0);
  free (raw);
  free (packed);
  return size;
}

/* Smooth rows with noise (as photographs have, so that Paeth picks each
 * of its three neighbours), the filter types mixed as the pattern says,
 * and the gray image: the first sample, or the BT.709 luma (DESIGN.md §1). */
static void
make_case (Case *c, int pattern, unsigned long long *rng)
{
  size_t samples = (size_t) c->width * (size_t) c->height * (size_t) c->channels, bytes = c->depth / 8;

  c->samples = malloc (samples * bytes);
  c->filters = malloc ((size_t) c->height);
  c->expected = malloc ((size_t) c->width * (size_t) c->height * sizeof *c->expected);
  for (size_t i = 0; i < samples; i++)
    {
      unsigned v = i >= (size_t) c->channels ? c->samples[(i - (size_t) c->channels) * bytes] : 0;
      v = (v + (unsigned) (tap_random (rng) % 9) + 252u) & 255u; /* the left neighbour ± 4 */
      c->samples[i * bytes] = (uint8_t) v;
      if (bytes == 2)
        c->samples[i * bytes + 1] = (uint8_t) tap_random (rng);
    }
  for (int y = 0; y < c->height; y++)
    {
      /* 0: any type; 1: Paeth; 2: runs of a type, None and Sub rows between dependent ones. */
      uint8_t random_type = (uint8_t) (tap_random (rng) % 5);
      c->filters[y] = pattern == 0   ? random_type
                      : pattern == 1 ? 4
                                     : (uint8_t) ((y / 3) % 2 == 0 ? (y % 2) : 2 + y % 3);
    }
  for (size_t p = 0; p < (size_t) c->width * (size_t) c->height; p++)
    {
      uint32_t s[3] = { 0 };
      for (int k = 0; k < 3 && k < c->channels; k++)
        {
          const uint8_t *q = c->samples + (p * (size_t) c->channels + (size_t) k) * bytes;
          s[k] = bytes == 2 ? (uint32_t) (q[0] << 8 | q[1]) : q[0];
        }
      c->expected[p] = c->channels <= 2 ? s[0] : (uint32_t) es_luma (s[0], s[1], s[2]);
    }
}

static void
free_case (Case *c)
{
  free (c->samples);
  free (c->filters);
  free (c->expected);
}

static bool
row_matches (const Case *c, const EsImage *image, int y)
{
  for (int x = 0; x < c->width; x++)
    {
      const uint8_t *row = es_image_row (image, y);
      uint32_t got = c->depth == 16 ? ((const uint16_t *) row)[x] : row[x];
      if (got != c->expected[(size_t) y * (size_t) c->width + (size_t) x])
        return false;
    }
  return true;
}

typedef struct {
  EsRowWatch watch;
  const Case *c;
  int told;
  bool in_order, final; /* every call told more rows; the rows told were the right ones */
} Watch;

static void
rows_decoded (EsRowWatch *watch, const EsImage *image, int rows)
{
  Watch *w = (Watch *) watch;

  w->in_order &= rows > w->told && rows <= w->c->height;
  for (int y = w->told; y < rows && y < w->c->height; y++)
    w->final &= row_matches (w->c, image, y);
  w->told = rows;
}

static void
check (const Case *c, const uint8_t *png, size_t size, int threads, size_t span, const char *pattern)
{
  Watch w = { .watch = { .rows_decoded = rows_decoded }, .c = c, .in_order = true, .final = true };
  EsReader reader;
  EsImage image = { 0 };
  EsError error = { 0 };
  bool ok, same = true;

  omp_set_num_threads (threads);
  es_png_unfilter_set_parallel (1, span);
  es_reader_init_memory (&reader, png, size);
  ok = es_png_decode_reader (&reader, &image, &w.watch, ES_SAMPLES_IMAGE, &error);
  for (int y = 0; ok && y < c->height; y++)
    same &= row_matches (c, &image, y);
  tap_ok (ok && same && w.in_order && w.final && w.told == c->height,
          "%dx%d, %d channel(s), %d-bit, %s filters, %d thread(s), span %zu pixel(s)%s%s", c->width, c->height,
          c->channels, c->depth, pattern, threads, span, ok ? "" : ": ", ok ? "" : error.message);
  es_image_clear (&image);
  es_image_clear (&w.watch.kept);
}

/* Where IDAT's data lies in a PNG of write_png: after the signature, IHDR
 * and IDAT's length and type; before IDAT's CRC and IEND. */
#define IDAT_DATA 41

static size_t
idat_size (size_t png_size)
{
  return png_size - IDAT_DATA - 4 - 12;
}

static void
fix_idat_crc (uint8_t *png, size_t png_size)
{
  size_t n = idat_size (png_size);
  put32 (png + IDAT_DATA + n, (uint32_t) crc32 (0, png + IDAT_DATA - 4, (uInt) (n + 4)));
}

/* A stream large enough that several threads inflate it (when there are
 * three or more): the same image, and when damaged the same error, as one
 * thread gives. */
static void
check_parallel_inflate (unsigned long long *rng)
{
  Case c = { .width = 2400, .height = 1400, .channels = 3, .depth = 8 };
  EsInflateSplit split = { 0 };
  EsError one = { 0 }, four = { 0 };
  EsImage image = { 0 };
  uint8_t *png, *out;
  size_t size, capacity, used = 0;
  bool ok, same = true;

  make_case (&c, 0, rng);
  size = write_png (&c, &png);
  capacity = (size_t) c.height * ((size_t) c.width * 3 + 1);
  out = malloc (capacity);
  omp_set_num_threads (4);
  es_png_unfilter_set_parallel (0, 0);
  tap_ok (es_inflate_parallel_pays (idat_size (size), &split)
            && es_inflate_parallel (png + IDAT_DATA, idat_size (size), out, capacity, &used, &split)
            && used == capacity,
          "a stream of %zu MiB inflates on 4 threads", idat_size (size) >> 20);
  ok = es_png_decode (png, size, &image, &four);
  for (int y = 0; ok && y < c.height; y++)
    same &= row_matches (&c, &image, y);
  tap_ok (ok && same, "%dx%d RGB decoded on 4 threads%s%s", c.width, c.height, ok ? "" : ": ", four.message);
  es_image_clear (&image);

  png[IDAT_DATA + idat_size (size) / 2] ^= 0x5a;
  fix_idat_crc (png, size);
  omp_set_num_threads (1);
  es_png_decode (png, size, &image, &one);
  es_image_clear (&image);
  omp_set_num_threads (4);
  four = (EsError){ 0 };
  ok = es_png_decode (png, size, &image, &four);
  es_image_clear (&image);
  tap_ok (!ok && one.message[0] != '\0' && strcmp (one.message, four.message) == 0,
          "a damaged stream: \"%s\" on 4 threads, \"%s\" on one", four.message, one.message);
  free (out);
  free (png);
  free_case (&c);
}

int
main (void)
{
  static const int layouts[][2] = {
    { 1, 8 }, { 2, 8 }, { 3, 8 }, { 4, 8 }, { 1, 16 }, { 2, 16 }, { 3, 16 }, { 4, 16 }
  };
  static const int sizes[][2] = { { 1, 9 }, { 37, 40 }, { 300, 64 } };
  static const char *patterns[] = { "mixed", "Paeth", "runs of" };
  static const int thread_counts[] = { 1, 2, 3, 8 };
  static const size_t spans[] = { 0, 1, 3, 16 };
  unsigned long long rng = tap_seed ();

  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int pattern = 0; pattern < 3; pattern++)
        {
          Case c = { .width = sizes[s][0], .height = sizes[s][1], .channels = layouts[l][0], .depth = layouts[l][1] };
          uint8_t *png;
          size_t size;

          make_case (&c, pattern, &rng);
          size = write_png (&c, &png);
          for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++)
            for (size_t k = 0; k < sizeof spans / sizeof spans[0]; k++)
              /* Every span and thread count on the largest size; a few on the others. */
              if (s == 2 || (t + k) % 3 == 0)
                check (&c, png, size, thread_counts[t], spans[k], patterns[pattern]);
          free (png);
          free_case (&c);
        }

  /* A bad filter type in the middle: refused before any thread starts. */
  {
    Case c = { .width = 300, .height = 64, .channels = 1, .depth = 8 };
    EsImage image = { 0 };
    EsError error = { 0 };
    uint8_t *png;
    size_t size;

    make_case (&c, 0, &rng);
    c.filters[40] = 5;
    size = write_png (&c, &png);
    omp_set_num_threads (8);
    es_png_unfilter_set_parallel (1, 1);
    tap_ok (!es_png_decode (png, size, &image, &error) && strcmp (error.message, "PNG: bad adaptive filter value") == 0,
            "a bad filter type on row 40: \"%s\"", error.message);
    es_image_clear (&image);
    free (png);
    free_case (&c);
  }
  check_parallel_inflate (&rng);
  es_png_unfilter_set_parallel (0, 0);
  printf ("# %d passed, %d failed\n", tap_count - tap_failed, tap_failed);
  return tap_done ();
}
