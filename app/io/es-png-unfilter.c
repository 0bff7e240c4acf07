/* SPDX-License-Identifier: MIT */
/* PNG rows unfiltered and converted to gray, for es-png-inflate.c: a row at a time as zlib inflates,
 * or a whole inflated image on every core, four rows at a time. Filters go by spans of a row (the
 * bytes left of a span already unfiltered), so that the rows below can follow a span behind on
 * another thread. */
#include "es-png-unfilter.h"

#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "es-load-internal.h"

/* Images of fewer filtered bytes are unfiltered on the calling thread: a
 * team's start and the rows' hand-over cost more than they save
 * (docs/performance/files.md, "Decoding PNG"). */
#define ES_PNG_PARALLEL_MIN (1u << 20)

static size_t parallel_min = ES_PNG_PARALLEL_MIN, forced_span_pixels;

void
es_png_unfilter_set_parallel (size_t min_bytes, size_t span_pixels)
{
  parallel_min = min_bytes != 0 ? min_bytes : ES_PNG_PARALLEL_MIN;
  forced_span_pixels = span_pixels;
}

/* The Paeth predictor in stb_image's form: the specification's choice
 * for every a, b and c (an exhaustive check of all 2^24 found no
 * difference), with fewer steps after a, which on one-byte pixels is the
 * byte just unfiltered. */
static inline uint8_t
paeth (uint8_t a, uint8_t b, uint8_t c)
{
  int threshold = 3 * c - (a + b), low = a < b ? a : b, high = a < b ? b : a;
  int not_high = high <= threshold ? low : c, take_high = -(threshold <= low);
  /* A mask rather than a branch, which photographs would mispredict half
   * the time (GCC makes one of `?:` here). */
  return (uint8_t) ((high & take_high) | (not_high & ~take_high));
}

/* Inlined into each caller, where bpp and the filter type are constants. */
#define ES_INLINE static inline __attribute__ ((always_inline))

#ifdef __SSE2__
#include <emmintrin.h>

/* Sub, Average and Paeth depend on the pixel to the left, so they go pixel
 * by pixel, with the pixel's bpp bytes (2 to 8) side by side in 16-bit
 * lanes. */

/* Loads 4 or 8 bytes, whole moves: up to bpp bytes past the pixel are
 * read, which is the rest of the span except after its last pixel. Lanes
 * past bpp are ignored. */
ES_INLINE __m128i
load_pixel (const uint8_t *p, size_t bpp)
{
  uint64_t v = 0;
  memcpy (&v, p, bpp <= 4 ? 4 : 8);
  return _mm_unpacklo_epi8 (_mm_cvtsi64_si128 ((long long) v), _mm_setzero_si128 ());
}

/* The pixel's own bytes only: past a span's end lie bytes that another
 * thread may be writing (the next row, or the rest of the row above). */
ES_INLINE __m128i
load_pixel_exact (const uint8_t *p, size_t bpp)
{
  uint64_t v = 0;
  memcpy (&v, p, bpp);
  return _mm_unpacklo_epi8 (_mm_cvtsi64_si128 ((long long) v), _mm_setzero_si128 ());
}

ES_INLINE void
store_pixel (uint8_t *p, __m128i v, size_t bpp)
{
  uint64_t out = (uint64_t) _mm_cvtsi128_si64 (
    _mm_packus_epi16 (_mm_and_si128 (v, _mm_set1_epi16 (0xff)), _mm_setzero_si128 ()));
  memcpy (p, &out, bpp);
}

static inline __m128i
abs16 (__m128i x)
{
  return _mm_max_epi16 (x, _mm_sub_epi16 (_mm_setzero_si128 (), x));
}

/* One pixel: x its filtered bytes, a the unfiltered pixel to the left, b
 * the one above, c above the left one. */
ES_INLINE __m128i
unfilter_pixel (__m128i x, __m128i a, __m128i b, __m128i c, uint8_t type)
{
  __m128i predicted;

  if (type == 1)
    predicted = a;
  else if (type == 3)
    predicted = _mm_srli_epi16 (_mm_add_epi16 (a, b), 1);
  else
    {
      __m128i pa = _mm_sub_epi16 (b, c), pb = _mm_sub_epi16 (a, c), pc, smallest, pick_a, pick_b;
      pc = abs16 (_mm_add_epi16 (pa, pb));
      pa = abs16 (pa);
      pb = abs16 (pb);
      smallest = _mm_min_epi16 (pc, _mm_min_epi16 (pa, pb));
      pick_a = _mm_cmpeq_epi16 (pa, smallest);
      pick_b = _mm_andnot_si128 (pick_a, _mm_cmpeq_epi16 (pb, smallest));
      predicted = _mm_or_si128 (
        _mm_and_si128 (pick_a, a),
        _mm_or_si128 (_mm_and_si128 (pick_b, b), _mm_andnot_si128 (_mm_or_si128 (pick_a, pick_b), c)));
    }
  return _mm_and_si128 (_mm_add_epi16 (x, predicted), _mm_set1_epi16 (0xff));
}

/* Bytes [start, end) of the row, whole pixels, start < end. */
ES_INLINE void
unfilter_pixels (uint8_t *row, const uint8_t *prev, size_t start, size_t end, size_t bpp, uint8_t type)
{
  __m128i a = _mm_setzero_si128 (), c = _mm_setzero_si128 (), b;
  size_t i = start;

  if (start > 0)
    {
      a = load_pixel_exact (row + start - bpp, bpp);
      c = load_pixel_exact (prev + start - bpp, bpp);
    }
  for (; i + bpp < end; i += bpp)
    {
      b = type == 1 ? a : load_pixel (prev + i, bpp);
      a = unfilter_pixel (load_pixel (row + i, bpp), a, b, c, type);
      c = b;
      store_pixel (row + i, a, bpp);
    }
  b = type == 1 ? a : load_pixel_exact (prev + i, bpp);
  store_pixel (row + i, unfilter_pixel (load_pixel_exact (row + i, bpp), a, b, c, type), bpp);
}

ES_INLINE void
unfilter_pixels_of (uint8_t *row, const uint8_t *prev, size_t start, size_t end, size_t bpp, uint8_t type)
{
  switch (type)
    {
    case 1: unfilter_pixels (row, prev, start, end, bpp, 1); return;
    case 3: unfilter_pixels (row, prev, start, end, bpp, 3); return;
    default: unfilter_pixels (row, prev, start, end, bpp, 4); return;
    }
}
#endif

/* One-byte pixels (8-bit gray): each byte depends on the one before, so
 * the left neighbour stays in a register rather than being reloaded from
 * the byte just stored (a store-to-load round trip a byte, 5× slower); Sub,
 * a running sum, goes 16 bytes at a time as a prefix sum. */
static void
unfilter_bytes (uint8_t *row, const uint8_t *prev, size_t start, size_t end, uint8_t type)
{
  size_t i = start;
  uint8_t a = start > 0 ? row[start - 1] : 0, c = start > 0 ? prev[start - 1] : 0;

  switch (type)
    {
      case 1:
#ifdef __SSE2__
      {
        __m128i carry = _mm_set1_epi8 ((char) a);
        for (; i + 16 <= end; i += 16)
          {
            __m128i x = _mm_loadu_si128 ((const __m128i *) (row + i));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 1));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 2));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 4));
            x = _mm_add_epi8 (x, _mm_slli_si128 (x, 8));
            x = _mm_add_epi8 (x, carry);
            _mm_storeu_si128 ((__m128i *) (row + i), x);
            /* The last byte, in every lane, for the next 16. */
            carry = _mm_shuffle_epi32 (_mm_shufflehi_epi16 (_mm_srli_epi16 (_mm_unpackhi_epi8 (x, x), 8), 0xff), 0xff);
            carry = _mm_packus_epi16 (carry, carry);
          }
        if (i > start)
          a = row[i - 1];
      }
#endif
      for (; i < end; i++)
        row[i] = a = (uint8_t) (row[i] + a);
      return;
    case 3:
      for (; i < end; i++)
        row[i] = a = (uint8_t) (row[i] + ((a + prev[i]) >> 1));
      return;
    default:
      for (; i < end; i++)
        {
          uint8_t b = prev[i];
          row[i] = a = (uint8_t) (row[i] + paeth (a, b, c));
          c = b;
        }
      return;
    }
}

/* Undoes the filter of bytes [start, end) of a row (whole pixels, start <
 * end), those left of start already unfiltered; prev is the previous
 * unfiltered row, read only left of end. */
static void
unfilter_span (uint8_t *row, const uint8_t *prev, size_t start, size_t end, size_t bpp, uint8_t type)
{
  if (type == 0)
    return;
  if (type == 2)
    {
      for (size_t i = start; i < end; i++)
        row[i] = (uint8_t) (row[i] + prev[i]);
      return;
    }
  if (bpp == 1)
    {
      unfilter_bytes (row, prev, start, end, type);
      return;
    }
#ifdef __SSE2__
  switch (bpp)
    {
    case 2: unfilter_pixels_of (row, prev, start, end, 2, type); return;
    case 3: unfilter_pixels_of (row, prev, start, end, 3, type); return;
    case 4: unfilter_pixels_of (row, prev, start, end, 4, type); return;
    case 6: unfilter_pixels_of (row, prev, start, end, 6, type); return;
    case 8: unfilter_pixels_of (row, prev, start, end, 8, type); return;
    default: break;
    }
#endif
  {
    /* Left of bpp there is no pixel to the left (start is 0 or past it). */
    size_t first = start < bpp ? bpp : start;

    switch (type)
      {
      case 1:
        for (size_t i = first; i < end; i++)
          row[i] = (uint8_t) (row[i] + row[i - bpp]);
        return;
      case 3:
        for (size_t i = start; i < bpp && i < end; i++)
          row[i] = (uint8_t) (row[i] + (prev[i] >> 1));
        for (size_t i = first; i < end; i++)
          row[i] = (uint8_t) (row[i] + ((row[i - bpp] + prev[i]) >> 1));
        return;
      default:
        for (size_t i = start; i < bpp && i < end; i++)
          row[i] = (uint8_t) (row[i] + prev[i]);
        for (size_t i = first; i < end; i++)
          row[i] = (uint8_t) (row[i] + paeth (row[i - bpp], prev[i], prev[i - bpp]));
        return;
      }
  }
}

void
es_png_unfilter_row (uint8_t *row, const uint8_t *prev, size_t n, size_t bpp, uint8_t type)
{
  unfilter_span (row, prev, 0, n, bpp, type);
}

void
es_png_convert_row (const uint8_t *src, int width, int channels, bool sixteen, void *out)
{
  if (!sixteen)
    {
      uint8_t *dst = out;
      if (channels == 1)
        memcpy (dst, src, (size_t) width);
      else if (channels == 2)
        for (int x = 0; x < width; x++)
          dst[x] = src[2 * x];
      else
        for (int x = 0; x < width; x++, src += channels)
          dst[x] = (uint8_t) es_luma_int (src[0], src[1], src[2]);
    }
  else
    {
      uint16_t *dst = out;
      size_t step = (size_t) channels * 2;
      if (channels <= 2)
        for (int x = 0; x < width; x++, src += step)
          dst[x] = (uint16_t) (src[0] << 8 | src[1]);
      else
        for (int x = 0; x < width; x++, src += step)
          dst[x] = (uint16_t) es_luma_int ((uint32_t) (src[0] << 8 | src[1]), (uint32_t) (src[2] << 8 | src[3]),
                                           (uint32_t) (src[4] << 8 | src[5]));
    }
}

/* ---- a whole image ---- */

/* Rows go in groups of this many, taken by one thread. */
#define ES_PNG_GROUP 4

/* One byte of row k of a group at j: a, b, c its left, upper and upper-left
 * neighbours, the byte above made one step earlier by row k − 1. */
ES_INLINE void
paeth_step (uint8_t *const *rows, const uint8_t *above, uint8_t *a, uint8_t *c, int k, size_t j)
{
  uint8_t b = k == 0 ? above[j] : a[k - 1];

  a[k] = rows[k][j] = (uint8_t) (rows[k][j] + paeth (a[k], b, c[k]));
  c[k] = b;
}

/* Bytes [start, end) of a group of Paeth rows of one-byte pixels at once,
 * row k a byte behind row k − 1 (whose bytes it needs): one row is a chain
 * of dependent steps that leaves most of the processor idle, the group's
 * four chains overlap (1.7× on one thread). Rows go from the last, so that
 * a[k − 1] is still the byte above. */
static void
paeth_group (uint8_t *const *rows, const uint8_t *above, size_t start, size_t end)
{
  enum { K = ES_PNG_GROUP };
  uint8_t a[K], c[K];
  size_t i = start;

  for (int k = 0; k < K; k++)
    {
      a[k] = start > 0 ? rows[k][start - 1] : 0;
      c[k] = start > 0 ? (k > 0 ? rows[k - 1] : above)[start - 1] : 0;
    }
  for (; i < start + K - 1; i++)
    for (int k = K - 1; k >= 0; k--)
      if (i >= start + (size_t) k && i - (size_t) k < end)
        paeth_step (rows, above, a, c, k, i - (size_t) k);
  for (; i < end; i++)
    for (int k = K - 1; k >= 0; k--)
      paeth_step (rows, above, a, c, k, i - (size_t) k);
  for (; i < end + K - 1; i++)
    for (int k = K - 1; k >= 0; k--)
      if (i >= start + (size_t) k && i - (size_t) k < end)
        paeth_step (rows, above, a, c, k, i - (size_t) k);
}

/* Unfilters and converts bytes [start, end) of rows y0 .. y0 + count − 1,
 * the row above them done that far. */
static void
unfilter_group (const EsPngFiltered *f, EsImage *out, uint32_t y0, uint32_t count, size_t start, size_t end)
{
  size_t step = f->row_bytes + 1, sample = f->sixteen ? 2 : 1;
  uint8_t *first = f->raw + (size_t) y0 * step + 1;
  const uint8_t *above = y0 > 0 ? first - step : f->zeros;
  bool all_paeth = f->bpp == 1 && count == ES_PNG_GROUP;

  for (uint32_t k = 0; k < count; k++)
    all_paeth &= f->raw[(size_t) (y0 + k) * step] == 4;
  if (all_paeth)
    {
      uint8_t *rows[ES_PNG_GROUP];
      for (int k = 0; k < ES_PNG_GROUP; k++)
        rows[k] = first + (size_t) k * step;
      paeth_group (rows, above, start, end);
    }
  for (uint32_t k = 0; k < count; k++)
    {
      uint8_t *row = first + (size_t) k * step;

      if (!all_paeth)
        unfilter_span (row, k > 0 ? row - step : above, start, end, f->bpp, row[-1]);
      es_png_convert_row (row + start, (int) ((end - start) / f->bpp), f->channels, f->sixteen,
                          (uint8_t *) es_image_row (out, (int) (y0 + k)) + start / f->bpp * sample);
    }
}

static void
unfilter_serial (const EsPngFiltered *f, EsImage *out, EsRowWatch *watch)
{
  for (uint32_t y = 0; y < f->height; y += ES_PNG_GROUP)
    {
      uint32_t count = f->height - y < ES_PNG_GROUP ? f->height - y : ES_PNG_GROUP;

      unfilter_group (f, out, y, count, 0, f->row_bytes);
      if (watch != NULL && ((y + count) % 32 == 0 || y + count == f->height))
        watch->rows_decoded (watch, out, (int) (y + count));
    }
}

/* How far a group of rows is unfiltered and converted (bytes), on a cache
 * line of its own: the thread of the group below polls it while this
 * group's thread advances it. */
typedef struct {
  _Alignas(64) _Atomic size_t done;
} GroupProgress;

static inline void
cpu_relax (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

/* Waits until a group is done up to needed bytes: a span takes
 * microseconds, so spin first, then give the core away (a loaded machine
 * may have descheduled the thread being waited for). */
static size_t
wait_for (_Atomic size_t *done, size_t needed)
{
  size_t now;

  for (unsigned spins = 0; (now = atomic_load_explicit (done, memory_order_acquire)) < needed; spins++)
    if (spins < 512)
      cpu_relax ();
    else
      sched_yield ();
  return now;
}

/* Bytes a span: a few per thread in a row, so that the groups below can
 * start early, but long enough that polling costs little; whole pixels, a
 * multiple of 16 of them (Sub's 16-byte steps). */
static size_t
span_bytes (const EsPngFiltered *f, int threads)
{
  size_t target = f->row_bytes / (2 * (size_t) threads), pixels;

  if (forced_span_pixels != 0)
    return forced_span_pixels * f->bpp;
  target = target < 512 ? 512 : target > 4096 ? 4096 : target;
  pixels = target / f->bpp / 16 * 16;
  return (pixels < 16 ? 16 : pixels) * f->bpp;
}

void
es_png_unfilter_image (const EsPngFiltered *f, EsImage *out, EsRowWatch *watch)
{
  uint32_t groups = (f->height + ES_PNG_GROUP - 1) / ES_PNG_GROUP;
  int threads = omp_get_max_threads ();
  GroupProgress *progress = NULL;
  _Atomic uint32_t next_group = 0;
  size_t span;

  if (threads > 1 && groups > 1 && (uint64_t) f->height * (f->row_bytes + 1) >= parallel_min)
    progress = aligned_alloc (_Alignof(GroupProgress), (size_t) groups * sizeof *progress);
  if (progress == NULL)
    {
      unfilter_serial (f, out, watch);
      return;
    }
  for (uint32_t g = 0; g < groups; g++)
    atomic_init (&progress[g].done, 0);
  span = span_bytes (f, threads);

  /* Each thread takes the next group not taken and goes through it span by
   * span: a group whose first row is Up, Average or Paeth follows the group
   * above (another thread's) a span behind; None and Sub never wait. Taken
   * in order, a group waits only for groups taken before it, and a thread
   * that the system holds up keeps no group waiting but the one after its
   * own. The calling thread, 0, tells the watch as the groups done from the
   * top grow. */
#pragma omp parallel num_threads(threads)
  {
    bool teller = watch != NULL && omp_get_thread_num () == 0;
    uint32_t complete = 0, told = 0;

    for (uint32_t g; (g = atomic_fetch_add_explicit (&next_group, 1, memory_order_relaxed)) < groups;)
      {
        uint32_t y0 = g * ES_PNG_GROUP, count = f->height - y0 < ES_PNG_GROUP ? f->height - y0 : ES_PNG_GROUP;
        size_t above = g > 0 && f->raw[(size_t) y0 * (f->row_bytes + 1)] >= 2 ? 0 : SIZE_MAX;

        for (size_t start = 0, end; start < f->row_bytes; start = end)
          {
            end = f->row_bytes - start > span ? start + span : f->row_bytes;
            if (above < end)
              above = wait_for (&progress[g - 1].done, end);
            unfilter_group (f, out, y0, count, start, end);
            atomic_store_explicit (&progress[g].done, end, memory_order_release);
          }
        if (teller)
          {
            while (complete < groups
                   && atomic_load_explicit (&progress[complete].done, memory_order_acquire) == f->row_bytes)
              complete++;
            if ((complete - told) * ES_PNG_GROUP >= 32 && complete < groups)
              {
                watch->rows_decoded (watch, out, (int) (complete * ES_PNG_GROUP));
                told = complete;
              }
          }
      }
  }
  if (watch != NULL)
    watch->rows_decoded (watch, out, (int) f->height);
  free (progress);
}
