/* SPDX-License-Identifier: MIT */
/* Local entropy over 3-D windows (box, ball, 3-D footprint) on the GPU: bands of planes, a histogram slid down y. */
#include "entropy-internal.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <utility>

/* Why this method: a window is a list of spans along y, one per (dz, dx)
 * column of it. Each thread owns one output column x of one plane and slides
 * its window's histogram down a strip of rows: one cell leaves and one enters
 * each span, so a voxel costs two updates a span, growing with the window's
 * cross-section (D·W for a box, about π r² for a ball), not its volume. The
 * threads of a warp hold neighbouring columns, so every update is one
 * coalesced load of 32 neighbouring bins that the L1 cache mostly serves
 * (the window's re-reads are a few rows apart in time).
 *
 * Σ c·ln c moves with each update by one entry of a table of differences,
 * in integer fixed point: exact, so the order of updates and the band or
 * device that computes a voxel never change its bits. Windows up to 961
 * cells sum in uint32, at the finest scale 2^s at which cells · ln cells
 * fits (vol_narrow_scale: 2^25 for cube 3 and ball 2, 2^19 at 961 cells);
 * larger ones in int64 scaled by 2^32 (the CPU path's).
 *
 * A first kernel bins the band's planes into a padded block: the window's
 * half extents of border on every side, filled as the border mode says, and
 * the bin VOID (= B) for a cell that counts nowhere (outside with clip, or
 * masked). The sliding kernel then has no border or mask test; VOID's count
 * is the window's void cells, left out of n and of the sum. */

/* Threads a block of the sliding kernel: 128 neighbouring columns. */
#define VOL_THREADS 128
/* Rows a thread slides down before it starts a new window: filling one
 * costs its cells in updates, a slide two a span. */
#define VOL_STRIP 64
/* Spans a block stages in shared memory (32 bytes each). */
#define VOL_STAGED_SPANS 512
/* Windows up to this many cells sum in uint32 (see above). */
#define VOL_NARROW_CELLS ES_CUDA_MAX_COUNT
/* Shared memory that the sliding kernel's counts may take in a block. */
#define VOL_SHARED_COUNTS_MAX ((size_t) 160 << 10)
/* Device memory for counts held in global memory (more bins than shared
 * memory holds, such as exact 16-bit binning): at most this much. */
#define VOL_GLOBAL_COUNTS_MAX ((size_t) 1 << 30)

/* The teaching kernel's cube of outputs, T a side. */
#define VOL_TILE 8
/* Shared memory that its tile with halo and counts may take. */
#define VOL_TILE_SHARED_MAX ((size_t) 96 << 10)

/* One (dz, dx) column run of the window, dy from y0 to y0 + length − 1, as
 * offsets in cells of a padded block from the window's centre: `first` its
 * first cell, `leave` the cell that leaves and `enter` the one that enters
 * when the centre moves down one row. */
typedef struct {
  long long first, leave, enter;
  int length;
} VolSpan;

/* The slide's leaving and entering cells of each span, as 32-bit offsets
 * from the window centre's index in a band that 32 bits index, in the
 * kernel's parameters: every thread of a warp reads the same constant,
 * where spans in shared memory cost two 64-bit loads and 64-bit address
 * arithmetic a span (docs/performance/volumes.md). 160 hold balls to
 * radius 7 (149 spans) in 1.25 KiB of parameters; windows of more spans,
 * and larger bands, slide by the spans. The register kernel was slower
 * with a 64-bit pointer plus a sign-extended offset (ball 3 at 16 bins,
 * 4.91 ms against 4.72). */
#define VOL_MOVES 160
typedef struct {
  int leave[VOL_MOVES], enter[VOL_MOVES];
} VolMoves;

/* The fixed-point tables of a window of `cells` cells, one after the other
 * in one device buffer: the differences c_ln_c[c + 1] − c_ln_c[c] and
 * c_ln_c (as Sum), then ln n, the scale over n and the threshold below which
 * an entropy of n cells is 0 (doubles), each for c, n = 0..cells. */
template <typename Sum> struct VolTables {
  const Sum *delta, *c_ln_c;
  const double *ln_n, *inv_n, *zero_below;
};

/* What the sliding kernels read of a band. */
typedef struct {
  const void *binned;          /* (planes + 2·hd) × (height + 2·hh) × (width + 2·hw) bins */
  long long plane_cells, row_cells;
  int width, height, planes;   /* of the band's output */
  int hd, hh, hw;
  const VolSpan *spans;        /* in the padded block's strides */
  int n_spans;
  int cells;
  uint32_t bins;               /* B; the bin VOID is B */
  /* Cells can be void (a mask, or clip): without, VOID never occurs and
   * 256 bins still fit bytes, in which VOID would read as bin 0. */
  bool voids;
  /* Centres can be void, and their value NaN: only under a mask (clip
   * voids only the padding), so that a clipped row does not load its
   * centre's cell to test it. */
  bool masked;
  bool normalized;
  double unit_scale;           /* es_entropy_unit_scale */
  float *out;                  /* planes × height × width, dense */
  const void *tables;
  unsigned long long *global_counts;  /* counts in global memory, or NULL */
} VolBand;

/* ---- the value of a window ---------------------------------------------------- */

template <typename Sum>
static __device__ __forceinline__ VolTables<Sum>
vol_tables (const void *buffer, int cells)
{
  VolTables<Sum> t;
  const size_t n = (size_t) cells + 1;

  t.delta = (const Sum *) buffer;
  t.c_ln_c = t.delta + n;
  t.ln_n = (const double *) (t.c_ln_c + n);
  t.inv_n = t.ln_n + n;
  t.zero_below = t.inv_n + n;
  return t;
}

/* The constants of es_entropy_value for windows of n counted cells. */
typedef struct {
  double ln_n, inv_n, zero_below;
  int n;
} VolCounted;

template <typename Sum>
static __device__ __forceinline__ VolCounted
vol_counted (const VolTables<Sum> &t, int n)
{
  return { __ldg (&t.ln_n[n]), __ldg (&t.inv_n[n]), __ldg (&t.zero_below[n]), n };
}

/* es_entropy_value of a window of c.n counted cells whose fixed-point
 * Σ c ln c over the counted bins is `counted_sum`. */
template <typename Sum>
static __device__ __forceinline__ float
vol_value_of (const VolTables<Sum> &t, const VolCounted &c, Sum counted_sum, uint32_t bins, bool normalized,
              double unit_scale)
{
  if (c.n <= 0)
    return __int_as_float (0x7fc00000);
  const double h = c.ln_n - (double) counted_sum * c.inv_n;
  if (h < c.zero_below)
    return 0.0f;
  if (!normalized)
    return es_entropy_store (h, unit_scale);
  const uint32_t most = bins < (uint32_t) c.n ? bins : (uint32_t) c.n;
  return most <= 1 ? 0.0f : (float) (h / __ldg (&t.ln_n[most]));
}

/* The constants for n counted cells: `whole`'s (the window's cells, read
 * once a strip) where none is void. That is most windows even where cells
 * can be void (clipped borders reach only the windows at the volume's
 * edges), whose rows then wait on no table load. */
template <typename Sum>
static __device__ __forceinline__ VolCounted
vol_counted_of (const VolTables<Sum> &t, const VolCounted &whole, int n)
{
  return n == whole.n ? whole : vol_counted (t, n);
}

/* es_entropy_value of a window of n counted cells, as vol_value_of but
 * with the constants read as they are needed, after the test of n: the
 * form the short slides and the teaching kernel keep (vol_strip). */
template <typename Sum>
static __device__ __forceinline__ float
vol_value_counted (const VolTables<Sum> &t, Sum counted_sum, int n, uint32_t bins, bool normalized, double unit_scale)
{
  if (n <= 0)
    return __int_as_float (0x7fc00000);
  const double h = __ldg (&t.ln_n[n]) - (double) counted_sum * __ldg (&t.inv_n[n]);
  if (h < __ldg (&t.zero_below[n]))
    return 0.0f;
  if (!normalized)
    return es_entropy_store (h, unit_scale);
  const uint32_t most = bins < (uint32_t) n ? bins : (uint32_t) n;
  return most <= 1 ? 0.0f : (float) (h / __ldg (&t.ln_n[most]));
}

/* es_entropy_value of a window whose fixed-point sum over every bin,
 * VOID's included, is `sum`, with `voids` cells in VOID. */
template <typename Sum>
static __device__ __forceinline__ float
vol_value (const VolTables<Sum> &t, Sum sum, unsigned voids, int cells, uint32_t bins, bool normalized,
           double unit_scale)
{
  return vol_value_counted<Sum> (t, (Sum) (sum - __ldg (&t.c_ln_c[voids])), cells - (int) voids, bins, normalized,
                                 unit_scale);
}

/* ---- counts ---------------------------------------------------------------------
 * A thread's count of bin b. In shared memory a bin is one row of the
 * block's counts, laid out so that the 32 threads of a warp hit 32 banks
 * whatever their bins; in global memory a bin is a row of every thread's. */

template <typename Count>
static __device__ __forceinline__ unsigned
vol_count_lane (int t)
{
  if (sizeof (Count) == 1)
    return 4u * (unsigned) (t & 31) + (unsigned) (t >> 5);
  if (sizeof (Count) == 2)
    return es_cuda_count_lane (t);
  return 4u * (unsigned) t;
}

/* Counts in shared memory, `Threads` counts a bin. The row stride is a
 * constant and the pointer is known to be shared, so that an update is one
 * 32-bit address, a shared load and a shared store (a generic pointer, or a
 * stride read at run time, cost several instructions an update and kept the
 * compiler from moving the window's loads ahead of the stores).
 *
 * With `Atomic`, an update is instead one shared atomic add on the 32-bit
 * word that holds the count, which returns the word before it: one
 * operation of the load/store pipe where a load and a store take two, but
 * with a longer latency on the update's chain. A word's other counts
 * belong to other threads, and a count never leaves [0, 255] (or
 * [0, 65535]), so no carry or borrow crosses into them. Every other
 * access of a count is then whole-word too: the void count's read is a
 * relaxed load of its word and the emptying at a strip's end an atomic,
 * since a plain byte access would overlap other threads' atomics on the
 * word, a data race in the PTX memory model. Which slides it pays for:
 * vol_atomic_updates.
 *
 * With `Quads` (byte counts of windows up to VOL_REG_QUAD_CELLS cells), a
 * count c is kept as 4c, the byte offset of c's entry in the table of
 * differences: the update's table read then takes the count as its
 * address, where 4c cost a shift-add a read (26 of ball 2's 320
 * instructions a row). */
template <typename Count, int Threads, bool Atomic = false, bool Quads = false> struct VolSharedCounts {
  Count *mine;      /* this thread's count of bin 0 */

  __device__ __forceinline__ Count &operator[] (uint32_t bin) const
  {
    __builtin_assume (__isShared (mine));
    return mine[bin * Threads];
  }

  /* The word that holds bin's count, as a pointer the compiler knows to be
   * shared (an atomic through a generic one is a slower generic atomic). */
  __device__ __forceinline__ uint32_t *word (uint32_t bin) const
  {
    const uint32_t first = (uint32_t) __cvta_generic_to_shared (mine) & ~3u;
    return (uint32_t *) __cvta_shared_to_generic (first + bin * (uint32_t) (Threads * sizeof (Count)));
  }
  /* The count in word w: its byte (or half) picked by one byte permutation. */
  __device__ __forceinline__ uint32_t count_in (uint32_t w) const
  {
    const uint32_t k = (uint32_t) ((uintptr_t) mine & 3);
    if (sizeof (Count) == 4)
      return w;
    return __byte_perm (w, 0, sizeof (Count) == 1 ? 0x4440u | k : 0x4410u + 0x11u * k);
  }
  __device__ __forceinline__ uint32_t one () const { return step << (8u * (uint32_t) ((uintptr_t) mine & 3)); }

  /* The count before adding one (as stored: times `step`). */
  __device__ __forceinline__ uint32_t atomic_add (uint32_t bin) const
  {
    return count_in (atomicAdd (word (bin), one ()));
  }
  /* The count after taking one away (as stored). */
  __device__ __forceinline__ uint32_t atomic_remove (uint32_t bin) const
  {
    return count_in (atomicSub (word (bin), one ())) - step;
  }
  /* The count as stored, read as the atomics write it: its whole word. */
  __device__ __forceinline__ uint32_t load (uint32_t bin) const
  {
    uint32_t w;

    asm volatile ("ld.relaxed.cta.shared.u32 %0, [%1];"
                  : "=r"(w)
                  : "r"((uint32_t) __cvta_generic_to_shared (word (bin))));
    return count_in (w);
  }
  static constexpr bool atomic = Atomic;
  static constexpr uint32_t step = Quads ? 4u : 1u;
};

/* Counts in global memory, a row of every thread's a bin. */
template <typename Count> struct VolGlobalCounts {
  Count *mine;
  size_t stride;    /* counts from one bin to the next */

  __device__ __forceinline__ Count &operator[] (uint32_t bin) const { return mine[(size_t) bin * stride]; }
  static constexpr bool atomic = false;
  static constexpr uint32_t step = 1u;
};

/* Zeroes a block's counts: `bytes`, a multiple of 16 from a 16-byte
 * boundary, in 16-byte stores. Each block clears its own (a block a tile),
 * which at 256 bins is 16 KiB or more. */
static __device__ __forceinline__ void
vol_clear_shared (unsigned char *counts, size_t bytes, int t, int threads)
{
  for (size_t i = (size_t) t; i < bytes / 16; i += (size_t) threads)
    ((uint4 *) counts)[i] = make_uint4 (0, 0, 0, 0);
}

/* ---- the sliding kernel ---------------------------------------------------------- */

/* The difference for a count as stored (Counts::step times the count). */
template <typename Counts, typename Sum>
static __device__ __forceinline__ Sum
vol_delta (const Sum *delta, uint32_t stored)
{
  if constexpr (Counts::step == 4 && sizeof (Sum) == 4)
    return *(const Sum *) ((const char *) delta + stored);
  else
    return delta[stored / Counts::step];
}

template <typename Counts, typename Sum, typename Bin>
static __device__ __forceinline__ Sum
vol_add (const Counts &counts, const Sum *delta, Bin b, Sum sum)
{
  if constexpr (Counts::atomic)
    return sum + vol_delta<Counts> (delta, counts.atomic_add (b));
  const uint32_t c = counts[b];
  counts[b] = c + Counts::step;
  return sum + vol_delta<Counts> (delta, c);
}

template <typename Counts, typename Sum, typename Bin>
static __device__ __forceinline__ Sum
vol_remove (const Counts &counts, const Sum *delta, Bin b, Sum sum)
{
  if constexpr (Counts::atomic)
    return sum - vol_delta<Counts> (delta, counts.atomic_remove (b));
  const uint32_t c = counts[b] - Counts::step;
  counts[b] = c;
  return sum - vol_delta<Counts> (delta, c);
}

/* The count of the void bin (p.bins), read as the updates write it. */
template <typename Counts>
static __device__ __forceinline__ uint32_t
vol_void_count (const VolBand &p, const Counts &counts)
{
  if constexpr (Counts::atomic)
    return counts.load (p.bins) / Counts::step;
  else
    return counts[p.bins] / Counts::step;
}

/* Takes a cell of bin b out of the counts, outside any sum: emptying
 * them at a strip's end. */
template <typename Counts, typename Bin>
static __device__ __forceinline__ void
vol_take_out (const Counts &counts, Bin b)
{
  if constexpr (Counts::atomic)
    counts.atomic_remove (b);
  else
    counts[b] = counts[b] - Counts::step;
}

/* The value of a window whose sum over every bin is `sum` (NaN where its
 * centre is `masked`), with the window's constants `whole` read once a
 * strip and a table load only where cells are void. */
template <typename Sum, typename Counts>
static __device__ __forceinline__ float
vol_counts_value (const VolBand &p, const Counts &counts, const VolTables<Sum> &t, const VolCounted &whole, Sum sum,
                  bool masked)
{
  const unsigned voids = p.voids ? vol_void_count (p, counts) : 0u;
  const Sum counted_sum = voids != 0 ? (Sum) (sum - __ldg (&t.c_ln_c[voids])) : sum;

  return masked ? __int_as_float (0x7fc00000)
                : vol_value_of<Sum> (t, vol_counted_of (t, whole, p.cells - (int) voids), counted_sum, p.bins,
                                     p.normalized, p.unit_scale);
}

/* The value of row y of a strip, NaN where its centre is `masked`. Where
 * the strip's windows can hold void cells (Edge: vol_strip_edge) it is
 * vol_counts_value's. Elsewhere no centre is masked and only the rows
 * within hh of the top and bottom can hold void cells (a choice for the
 * whole block); the others read no void count and choose no constants: at
 * ball 2 and 256 bins such a row issues 228 instructions where every row
 * issued 322. */
template <bool Edge, typename Sum, typename Counts>
static __device__ __forceinline__ float
vol_row_value (const VolBand &p, const Counts &counts, const VolTables<Sum> &t, const VolCounted &whole, Sum sum,
               bool masked, int y)
{
  if constexpr (Edge)
    return vol_counts_value<Sum> (p, counts, t, whole, sum, masked);
  if (p.voids && (y < p.hh || y >= p.height - p.hh))
    return vol_counts_value<Sum> (p, counts, t, whole, sum, false);
  return vol_value_of<Sum> (t, whole, sum, p.bins, p.normalized, p.unit_scale);
}

/* The bytes of shared memory that a window's spans take when staged
 * there: up to VOL_STAGED_SPANS of them (balls to radius 11, boxes to
 * 21×21 columns); the rest of footprints up to 63 a side read them
 * through the cache. */
static __host__ __device__ __forceinline__ size_t
vol_staged_span_bytes (int n_spans)
{
  return n_spans <= VOL_STAGED_SPANS ? (size_t) n_spans * sizeof (VolSpan) : 0;
}

/* The window's spans as seen by a block, staged in `staged` where they
 * fit: every thread of a warp reads the same span at once, one shared
 * broadcast a span a row. Callers synchronize before the first use. */
static __device__ __forceinline__ const VolSpan *
vol_stage_spans (const VolBand &p, VolSpan *staged)
{
  if (vol_staged_span_bytes (p.n_spans) == 0)
    return p.spans;
  for (int i = threadIdx.x; i < p.n_spans; i += blockDim.x)
    staged[i] = p.spans[i];
  return staged;
}

/* Calls step (std::integral_constant<int, I> ()) for I = 0 … N − 1, each
 * index a constant, while step returns true. */
template <typename Step, int... I>
static __device__ __forceinline__ bool
vol_for_each (const Step &step, std::integer_sequence<int, I...>)
{
  return (step (std::integral_constant<int, I> ()) && ...);
}

template <int N, typename Step>
static __device__ __forceinline__ bool
vol_for (const Step &step)
{
  return vol_for_each (step, std::make_integer_sequence<int, N> ());
}

/* move (0) … move (count − 1): with N > 0 spans compiled in, unrolled so
 * that a span's offsets are constants of the kernel's parameters (a loop,
 * even under `#pragma unroll N`, was left rolled by 4, and read each
 * offset with an indexed constant load); else a loop. */
template <int N, typename Move>
static __device__ __forceinline__ void
vol_each_move (int count, const Move &move)
{
  if constexpr (N > 0)
    vol_for<N> ([&] (auto i) {
      move (decltype (i)::value);
      return true;
    });
  else
    {
#pragma unroll 4
      for (int i = 0; i < count; i++)
        move (i);
    }
}

/* One thread's strip: rows [y0, y1) of column x of output plane z, read
 * from `binned` (a padded block with row stride row_cells, whose cell
 * `centre` is the window centre of (x, y0, z)), the window's counts in
 * `counts`, all zero on entry and on return. Nothing the kernel writes
 * aliases the bins, so their loads can run ahead of the count updates.
 *
 * Two forms, by the length of the slide (H200, 512³, 256 bins, medians
 * of 5; docs/performance/volumes.md):
 * - Ball 3's 29 unrolled moves (a long slide, more than
 *   VOL_SHORT_SLIDE spans) add their offsets to a 64-bit pointer,
 *   sign-extended, two address instructions a cell: as 32-bit offsets of
 *   a 32-bit index they outgrew the kernel's 64 registers and ran slower
 *   than the loop (6.54 against 6.15 ms). And the window's constants of
 *   es_entropy_value are read once a strip: occupancy is 37.5 % there,
 *   and the three table loads of each row were on the critical path
 *   (6.78 ms with them, 5.48 without).
 * - Short slides (cube 3, ball 2) and the loops read the offsets onto a
 *   32-bit index, for which the compiler keeps a pointer a move from row
 *   to row, and read the constants each row: cube 3 and ball 2 took
 *   2.31 and 2.82 ms so, 2.33 and 2.99 in the long slide's form. */
#define VOL_SHORT_SLIDE 13
template <int N, typename Bin, typename Counts, typename Sum>
static __device__ __forceinline__ void
vol_strip (const VolBand &p, const Bin *__restrict__ binned, long long centre, long long row_cells,
           const VolSpan *spans, const VolMoves *moves, const Counts &counts, const Sum *delta,
           const VolTables<Sum> &t, float *out, size_t out_row, int y0, int y1, bool more, bool edge)
{
  constexpr bool long_slide = N > VOL_SHORT_SLIDE;
  const Bin void_bin = (Bin) p.bins;
  const Bin *__restrict__ here = binned + centre;
  unsigned at = (unsigned) centre;
  const VolCounted whole = long_slide ? vol_counted (t, p.cells) : VolCounted{};
  Sum sum = 0;

  for (int i = 0; i < p.n_spans; i++)
    {
      const Bin *__restrict__ first = here + spans[i].first;
      const int length = spans[i].length;
      for (int k = 0; k < length; k++)
        sum = vol_add (counts, delta, first[(long long) k * row_cells], sum);
    }
  /* The rows, compiled twice for the long slides: where windows can hold
   * void cells, and where only those of the top and bottom rows can
   * (vol_strip_edge, vol_row_value). */
  const auto slide = [&] (auto edge_c) {
    for (int y = y0;; y++)
      {
        const bool masked = p.masked && *here == void_bin;
        /* A streaming store (evict first): the output is written once and
         * never read here, and at 512³ the ~50 planes of tiles in flight
         * write about an L2 of it, whose dirty lines would push out the
         * binned planes that neighbouring tiles read next. */
        if constexpr (long_slide)
          __stcs (out, vol_row_value<decltype (edge_c)::value, Sum> (p, counts, t, whole, sum, masked, y));
        else
          __stcs (&out[(size_t) (y - y0) * out_row],
                  masked ? __int_as_float (0x7fc00000)
                         : vol_value<Sum> (t, sum, p.voids ? vol_void_count (p, counts) : 0u, p.cells, p.bins,
                                           p.normalized, p.unit_scale));
        if (y + 1 == y1)
          break;
        here += row_cells;
        at += (unsigned) row_cells;
        if constexpr (long_slide)
          out += out_row;
        const auto move = [&] (int i) {
          const Bin leaving = N < 0 ? here[spans[i].leave]
                              : long_slide ? here[moves->leave[i]]
                                           : binned[at + (unsigned) moves->leave[i]];
          const Bin entering = N < 0 ? here[spans[i].enter]
                               : long_slide ? here[moves->enter[i]]
                                            : binned[at + (unsigned) moves->enter[i]];
          sum = vol_remove (counts, delta, leaving, sum);
          sum = vol_add (counts, delta, entering, sum);
        };
        vol_each_move<N> (p.n_spans, move);
      }
  };
  if (!long_slide || edge)
    slide (std::true_type ());
  else
    slide (std::false_type ());
  /* Empty the counts for the block's next tile by taking the last window
   * out: as cheap as filling them, whatever the number of bins. Blocks
   * launched a tile each have none (ball 5: 515 cells a strip of 64 rows). */
  if (!more)
    return;
  for (int i = 0; i < p.n_spans; i++)
    {
      const Bin *__restrict__ first = here + spans[i].first;
      for (int k = 0; k < spans[i].length; k++)
        vol_take_out (counts, first[(long long) k * row_cells]);
    }
}

/* The fast variant's walk over the band: blocks of 128 neighbouring
 * columns take tiles of 128 columns × VOL_STRIP rows of one plane, in
 * order of x, y, then z; strip (centre, out, y0, y1, more, edge) slides
 * one thread's column: `more` if its block takes another tile after
 * (counts in memory are then emptied for it), `edge` if its windows can
 * hold void cells away from the top and bottom rows (vol_strip_edge).
 * The kernels with counts in shared memory or registers launch a
 * block a tile (vol_tile_blocks), the one with global counts a block a
 * slot of them, grid-stride. */
/* Whether the windows of the warp whose first column is x, in plane z of
 * the band, can hold void cells other than in rows near the top and
 * bottom (vol_row_value): anywhere under a mask, and with clipped
 * borders where the warp's columns or the plane reach the padding. The
 * same for the whole warp, which a choice per thread would split. A
 * band's padding planes are its neighbours' where it has them, so its
 * first and last planes count as edges too: a few more strips than need
 * it take the general value. */
static __device__ __forceinline__ bool
vol_strip_edge (const VolBand &p, int x, int z)
{
  return p.masked
         || (p.voids && (x < p.hw || x + 31 >= p.width - p.hw || z < p.hd || z >= p.planes - p.hd));
}

template <typename Strip>
static __device__ __forceinline__ void
vol_band_walk (const VolBand &p, const Strip &strip)
{
  const int tiles_x = (p.width + VOL_THREADS - 1) / VOL_THREADS;
  const int tiles_y = (p.height + VOL_STRIP - 1) / VOL_STRIP;
  const long long units = (long long) tiles_x * tiles_y * p.planes;

  for (long long unit = blockIdx.x; unit < units; unit += gridDim.x)
    {
      const int tx = (int) (unit % tiles_x);
      const int ty = (int) (unit / tiles_x % tiles_y);
      const int z = (int) (unit / tiles_x / tiles_y);
      const int x = tx * VOL_THREADS + (int) threadIdx.x;
      const int y0 = ty * VOL_STRIP;
      const int y1 = min (y0 + VOL_STRIP, p.height);

      if (x >= p.width)
        continue;
      const long long centre = (long long) (z + p.hd) * p.plane_cells + (long long) (y0 + p.hh) * p.row_cells + x + p.hw;
      float *out = p.out + ((size_t) z * p.height + y0) * p.width + x;
      strip (centre, out, y0, y1, unit + gridDim.x < units, vol_strip_edge (p, x - (int) (threadIdx.x & 31), z));
    }
}

/* The walk with counts in memory (shared or global). */
template <int N, typename Bin, typename Counts, typename Sum>
static __device__ __forceinline__ void
vol_band_walk_counts (const VolBand &p, const VolSpan *spans, const VolMoves *moves, const Counts &counts,
                      const Sum *delta, const VolTables<Sum> &tables)
{
  const Bin *binned = (const Bin *) p.binned;

  vol_band_walk (p, [&] (long long centre, float *out, int y0, int y1, bool more, bool edge) {
    vol_strip<N, Bin> (p, binned, centre, p.row_cells, spans, moves, counts, delta, tables, out, (size_t) p.width,
                       y0, y1, more, edge);
  });
}

/* The fast variant with counts in shared memory, sliding by `moves`
 * where they hold the window: N of them (N > 0), or p.n_spans (N = 0);
 * N = −1 slides by the spans; counts updated by shared atomics with
 * `Atomic`. Shared memory holds, in order, the staged spans, the
 * differences of narrow sums, and the counts. */
template <typename Bin, typename Count, typename Sum, int N, bool Atomic>
static __global__ void __launch_bounds__ (VOL_THREADS, 8)
vol_entropy_kernel (VolBand p, const __grid_constant__ VolMoves moves)
{
  extern __shared__ __align__ (16) unsigned char vol_shared[];
  const int t = threadIdx.x;
  const bool narrow = sizeof (Sum) == 4;
  const VolTables<Sum> tables = vol_tables<Sum> (p.tables, p.cells);
  const size_t span_bytes = vol_staged_span_bytes (p.n_spans);
  const size_t table_bytes = narrow ? ((size_t) p.cells * sizeof (Sum) + 15) / 16 * 16 : 0;
  const VolSpan *spans = vol_stage_spans (p, (VolSpan *) vol_shared);
  Sum *shared_delta = (Sum *) (vol_shared + span_bytes);
  unsigned char *shared_counts = vol_shared + span_bytes + table_bytes;
  VolSharedCounts<Count, VOL_THREADS, Atomic> counts;

  if (narrow)
    for (int c = t; c < p.cells; c += VOL_THREADS)
      shared_delta[c] = tables.delta[c];
  counts.mine = (Count *) (shared_counts + vol_count_lane<Count> (t));
  vol_clear_shared (shared_counts, ((size_t) p.bins + 1) * VOL_THREADS * sizeof (Count), t, VOL_THREADS);
  __syncthreads ();
  vol_band_walk_counts<N, Bin> (p, spans, &moves, counts, narrow ? (const Sum *) shared_delta : tables.delta,
                                tables);
}

/* The fast variant with counts in global memory (more bins than shared
 * memory holds, such as exact 16-bit binning); narrow sums keep their
 * differences in shared memory after the staged spans. */
template <typename Bin, typename Count, typename Sum>
static __global__ void __launch_bounds__ (VOL_THREADS)
vol_entropy_global_kernel (VolBand p)
{
  extern __shared__ __align__ (16) unsigned char vol_shared[];
  const bool narrow = sizeof (Sum) == 4;
  const VolTables<Sum> tables = vol_tables<Sum> (p.tables, p.cells);
  const VolSpan *spans = vol_stage_spans (p, (VolSpan *) vol_shared);
  Sum *shared_delta = (Sum *) (vol_shared + vol_staged_span_bytes (p.n_spans));
  VolGlobalCounts<Count> counts;

  if (narrow)
    for (int c = threadIdx.x; c < p.cells; c += VOL_THREADS)
      shared_delta[c] = tables.delta[c];
  counts.mine = (Count *) p.global_counts + (size_t) blockIdx.x * VOL_THREADS + threadIdx.x;
  counts.stride = (size_t) gridDim.x * VOL_THREADS;
  __syncthreads ();
  vol_band_walk_counts<-1, Bin> (p, spans, NULL, counts, narrow ? (const Sum *) shared_delta : tables.delta,
                                 tables);
}

/* ---- counts in registers ----------------------------------------------------------
 * Up to 16 bins and 255 cells, a thread's counts fit the bytes of two
 * 64-bit registers (bins 0–7, then 8–15), so that an update touches no
 * memory but the cell it reads. The slide was bound by the integer pipe,
 * so an update is a square on the FMA pipe: the binning pass writes each
 * cell's code 4·b, and (1 << code)² = 1 << 8·b is the first bit of b's
 * count. In the half that holds b the root is 1 << (code − 32·half); in
 * the other, PTX's shift clamps it to 0, with no select and no indexing
 * of registers. A move of one cell out and one in is one wide
 * multiply-add a half, (in − out)(in + out) = in² − out², and the
 * compiler puts the sum and difference on the FMA pipe too: about 10
 * integer instructions a move, where four 32-bit words updated by
 * shifts and adds took 20 (H200, 512³, 16 bins: ball 3 4.78 → 4.51 ms,
 * ball 2 2.44 → 2.37, cube 3 1.92 → 1.93; two products a half, in·in
 * and −out·out, took 5.25, 2.76 and 2.08). VOL_REG_VOID lies past both
 * halves and adds nothing: void cells are the window's cells less the
 * counted ones. Σ c ln c is summed once a row over the 16 counts (16
 * table reads) instead of being moved by a difference every update (a
 * count to extract and a table to read an update), which pays from 8
 * updates a row: cube 3 makes 18, ball 3 58.
 *
 * Windows of at most VOL_REG_QUAD_CELLS cells count in fours: the codes
 * are 4·b + 1, so each byte holds 4c, which is the byte offset of c's
 * entry in the 32-bit table of c ln c, and a row's 16 reads take one
 * byte permute and one shared load each, without a multiply-add for the
 * address. */
#define VOL_REG_BINS 16
#define VOL_REG_CELLS 255
#define VOL_REG_QUAD_CELLS 63
#define VOL_REG_VOID 0xffu

/* 1 << (code − 32·half) where code lies in half, else 0 (a code below
 * the half wraps to a large unsigned shift, also clamped). */
static __device__ __forceinline__ uint32_t
vol_reg_root (uint32_t code, int half)
{
  uint32_t root;

  asm ("shl.b32 %0, %1, %2;" : "=r"(root) : "r"(1u), "r"(code - 32u * (uint32_t) half));
  return root;
}

/* half += a · b, signed 32-bit factors. */
static __device__ __forceinline__ void
vol_reg_mad (uint64_t &half, uint32_t a, uint32_t b)
{
  asm ("mad.wide.s32 %0, %1, %2, %0;" : "+l"(half) : "r"(a), "r"(b));
}

static __device__ __forceinline__ void
vol_reg_add (uint64_t (&counts)[2], uint32_t code)
{
#pragma unroll
  for (int h = 0; h < 2; h++)
    {
      const uint32_t root = vol_reg_root (code, h);
      vol_reg_mad (counts[h], root, root);
    }
}

/* Exact whatever the order: the result is the window's packed counts, so
 * no byte borrows or carries in the sum as a whole. */
static __device__ __forceinline__ void
vol_reg_move (uint64_t (&counts)[2], uint32_t leaving, uint32_t entering)
{
#pragma unroll
  for (int h = 0; h < 2; h++)
    {
      const uint32_t in = vol_reg_root (entering, h), out = vol_reg_root (leaving, h);
      vol_reg_mad (counts[h], in - out, in + out);
    }
}

/* The 32-bit word of the counts that holds bins 4·w … 4·w + 3. */
static __device__ __forceinline__ uint32_t
vol_reg_word (const uint64_t (&counts)[2], int w)
{
  return (uint32_t) (counts[w >> 1] >> (32 * (w & 1)));
}

/* The entropy of the window whose packed counts are `counts` (4c a byte
 * with Quads), centred on the code at `here`: NaN where that is void. */
template <bool Quads>
static __device__ __forceinline__ float
vol_reg_value (const VolBand &p, const uint64_t (&counts)[2], const uint8_t *here, const uint32_t *c_ln_c,
               const VolTables<uint32_t> &tables, const VolCounted &whole)
{
  uint32_t counted_sum = 0;
#pragma unroll
  for (int b = 0; b < VOL_REG_BINS; b++)
    {
      const uint32_t count = __byte_perm (vol_reg_word (counts, b >> 2), 0, 0x4440 | (b & 3));
      counted_sum += Quads ? *(const uint32_t *) ((const char *) c_ln_c + count) : c_ln_c[count];
    }
  const int n = p.voids ? (int) __dp4a (vol_reg_word (counts, 0), 0x01010101u,
                                        __dp4a (vol_reg_word (counts, 1), 0x01010101u,
                                                __dp4a (vol_reg_word (counts, 2), 0x01010101u,
                                                        __dp4a (vol_reg_word (counts, 3), 0x01010101u, 0u))))
                                >> (Quads ? 2 : 0)
                        : p.cells;
  /* Under p.voids, not p.masked (a clipped centre is never void, so the
   * test is only redundant there): testing under the mask alone made
   * ptxas spill cube 3's registers (1.245 → 1.261 ms at 512³). */
  if (p.voids && *here == VOL_REG_VOID)
    return __int_as_float (0x7fc00000);
  return vol_value_of<uint32_t> (tables, vol_counted_of (tables, whole, n), counted_sum, p.bins, p.normalized,
                                 p.unit_scale);
}

/* One thread's strip, as vol_strip, from the window centre `centre` of
 * (x, y0, z) in the padded block of codes; c_ln_c holds the window's
 * fixed-point c ln c for c = 0..cells. The slide reads `moves` with
 * N > 0 spans (a count known at compile time) or N = 0 (p.n_spans of
 * them); with N = −1 it reads `spans` from a 64-bit pointer instead, for
 * bands past 2^32 cells and windows of more than VOL_MOVES spans. Quads:
 * the counts are 4c (VOL_REG_QUAD_CELLS). */
template <int N, bool Quads>
static __device__ __forceinline__ void
vol_reg_strip (const VolBand &p, const uint8_t *__restrict__ codes, long long centre, const VolSpan *spans,
               const VolMoves &moves, const uint32_t *c_ln_c, const VolTables<uint32_t> &tables, float *out,
               size_t out_row, int y0, int y1)
{
  const uint8_t *__restrict__ here = codes + centre;
  unsigned at = (unsigned) centre;
  const VolCounted whole = vol_counted (tables, p.cells);
  uint64_t counts[2] = { 0, 0 };

  for (int i = 0; i < p.n_spans; i++)
    {
      const uint8_t *__restrict__ first = here + spans[i].first;
      const int length = spans[i].length;
      for (int k = 0; k < length; k++)
        vol_reg_add (counts, first[(long long) k * p.row_cells]);
    }
  for (int y = y0;; y++)
    {
      /* Streaming, as in vol_strip. */
      __stcs (out, vol_reg_value<Quads> (p, counts, here, c_ln_c, tables, whole));
      if (y + 1 == y1)
        break;
      here += p.row_cells;
      at += (unsigned) p.row_cells;
      out += out_row;
      const auto move = [&] (int i) {
        if (N >= 0)
          vol_reg_move (counts, codes[at + (unsigned) moves.leave[i]], codes[at + (unsigned) moves.enter[i]]);
        else
          vol_reg_move (counts, here[spans[i].leave], here[spans[i].enter]);
      };
      vol_each_move<N> (p.n_spans, move);
    }
}

/* The fast variant with counts in registers, N and Quads as in
 * vol_reg_strip. Shared memory holds the staged spans, then c ln c. */
template <int N, bool Quads>
static __global__ void __launch_bounds__ (VOL_THREADS)
vol_register_kernel (VolBand p, const __grid_constant__ VolMoves moves)
{
  extern __shared__ __align__ (16) unsigned char vol_shared[];
  const VolTables<uint32_t> tables = vol_tables<uint32_t> (p.tables, p.cells);
  const VolSpan *spans = vol_stage_spans (p, (VolSpan *) vol_shared);
  uint32_t *c_ln_c = (uint32_t *) (vol_shared + vol_staged_span_bytes (p.n_spans));
  const uint8_t *codes = (const uint8_t *) p.binned;

  for (int c = threadIdx.x; c <= p.cells; c += VOL_THREADS)
    c_ln_c[c] = tables.c_ln_c[c];
  __syncthreads ();
  vol_band_walk (p, [&] (long long centre, float *out, int y0, int y1, bool, bool) {
    vol_reg_strip<N, Quads> (p, codes, centre, spans, moves, c_ln_c, tables, out, (size_t) p.width, y0, y1);
  });
}

/* ---- compiled windows, slid by groups of runs ---------------------------------
 * Cube 3, ball 2 and ball 3 are compiled in whole. The runs of a group,
 * those with the same rows [y0, y1], enter and leave at the same rows, so
 * what enters a group at one step leaves it L = y1 − y0 + 1 steps later.
 * A group keeps what entered in its last L steps in a ring (registers, or
 * shared memory where they would spill: VolRings), and a step loads only
 * its entering cells, each at a row pointer of (dz, dy) with dx the
 * load's offset:
 * - counts in registers (vol_group_kernel, up to 16 bins): the ring holds
 *   each step's sum of the entering one-hot counts, P, and the counts move
 *   by P_in − P_out;
 * - counts in shared memory (vol_group_counts_kernel, the short slides):
 *   the ring holds the codes, which leave through the usual updates.
 * Cube 3 loads 9 cells a row where the moves loaded 18. A group of one
 * run is moved, not ringed: a second load costs less than L slots.
 * H200, 512³, against the moves: cube 3 1.82 → 1.25 ms (16 bins) and
 * 2.21 → 1.81 (256), ball 2 2.26 → 1.72 and 2.72 → 2.10, ball 3 at 16
 * bins 4.40 → 3.29 (docs/performance/volumes.md). */

/* One column run of a compiled window: rows [y0, y1] of column (dz, dx). */
struct VolRun {
  int dz, dx, y0, y1;
};

/* The runs of a compiled window, in vol_column_runs' order (dz, then dx). */
#define VOL_SHAPE_RUNS 32
struct VolShapeRuns {
  VolRun run[VOL_SHAPE_RUNS];
  int n;
};

static constexpr __host__ __device__ int
vol_isqrt (int m)
{
  int h = 0;
  while ((h + 1) * (h + 1) <= m)
    h++;
  return h;
}

/* A ball of radius r: the cells with dz² + dy² + dx² ≤ r² (es_window_spans_3d). */
static constexpr __host__ __device__ VolShapeRuns
vol_ball_runs (int r)
{
  VolShapeRuns s{};
  for (int dz = -r; dz <= r; dz++)
    for (int dx = -r; dx <= r; dx++)
      if (dz * dz + dx * dx <= r * r)
        {
          const int h = vol_isqrt (r * r - dz * dz - dx * dx);
          s.run[s.n++] = VolRun{ dz, dx, -h, h };
        }
  return s;
}

/* A box of d × h × w cells, each odd. */
static constexpr __host__ __device__ VolShapeRuns
vol_box_runs (int d, int h, int w)
{
  VolShapeRuns s{};
  for (int dz = -(d / 2); dz <= d / 2; dz++)
    for (int dx = -(w / 2); dx <= w / 2; dx++)
      s.run[s.n++] = VolRun{ dz, dx, -(h / 2), h / 2 };
  return s;
}

/* A compiled window: its runs, its groups of runs with equal rows, the
 * blocks an SM that the register kernel's launch bounds ask for, and
 * whether that kernel keeps its rings of more than one slot in shared
 * memory (VolRings). */
#define VOL_SHAPE_GROUPS 8
struct VolShape {
  VolShapeRuns runs;
  int register_blocks;
  bool shared_rings;
  int n_groups;
  int y0[VOL_SHAPE_GROUPS], y1[VOL_SHAPE_GROUPS], size[VOL_SHAPE_GROUPS];
  int group_of[VOL_SHAPE_RUNS];
};

static constexpr __host__ __device__ VolShape
vol_shape (const VolShapeRuns &runs, int register_blocks, bool shared_rings)
{
  VolShape s{};
  s.runs = runs;
  s.register_blocks = register_blocks;
  s.shared_rings = shared_rings;
  for (int i = 0; i < runs.n; i++)
    {
      int g = 0;
      while (g < s.n_groups && (s.y0[g] != runs.run[i].y0 || s.y1[g] != runs.run[i].y1))
        g++;
      if (g == s.n_groups)
        s.y0[s.n_groups] = runs.run[i].y0, s.y1[s.n_groups] = runs.run[i].y1, s.n_groups++;
      s.size[g]++;
      s.group_of[i] = g;
    }
  return s;
}

static constexpr __host__ __device__ int
vol_gcd (int a, int b)
{
  return b == 0 ? a : vol_gcd (b, a % b);
}

/* The windows compiled in. The register kernel's blocks an SM bound its
 * registers (65536 / (128 · blocks)), traded against the rings and the
 * loads in flight; H200, 512³, 16 bins, `bench-volumes 512 5`, ms
 * unbounded (69, 118 and 124 registers) and at 6, 7, 8 and 10 blocks:
 * cube 3 1.45, 1.36, 1.32, 1.25, 1.26; ball 2 1.88, 1.74, 1.71, 1.73,
 * 1.73; ball 3 4.29, 3.35, 3.40, 3.53 (spilling), 5.38. Ball 3's rings
 * in shared memory free 36 registers: no spills at 6 blocks, 3.29 ms
 * (3.28 at 7, spilling again). */
#define VOL_N_SHAPES 3
static constexpr VolShape vol_shapes[VOL_N_SHAPES] = {
  vol_shape (vol_box_runs (3, 3, 3), 8, false),
  vol_shape (vol_ball_runs (2), 8, false),
  vol_shape (vol_ball_runs (3), 6, true),
};

/* A group's ring length (0: moved, not ringed) and the rows a step loop
 * unrolls so that every ring's slots are constants (their LCM). */
static constexpr __host__ __device__ int
vol_ring (const VolShape &s, int g)
{
  return s.size[g] > 1 ? s.y1[g] - s.y0[g] + 1 : 0;
}

static constexpr __host__ __device__ int
vol_shape_unroll (const VolShape &s)
{
  int u = 1;
  for (int g = 0; g < s.n_groups; g++)
    if (vol_ring (s, g) > 0)
      u = u / vol_gcd (u, vol_ring (s, g)) * vol_ring (s, g);
  return u;
}

static constexpr __host__ __device__ int
vol_shape_cells (const VolShape &s)
{
  int cells = 0;
  for (int i = 0; i < s.runs.n; i++)
    cells += s.runs.run[i].y1 - s.runs.run[i].y0 + 1;
  return cells;
}

static constexpr __host__ __device__ int
vol_shape_longest_ring (const VolShape &s)
{
  int l = 1;
  for (int g = 0; g < s.n_groups; g++)
    l = vol_ring (s, g) > l ? vol_ring (s, g) : l;
  return l;
}

/* Whether group g's ring lies in shared memory: a ring of one slot is
 * two registers where shared memory would cost a load and a store a step. */
static constexpr __host__ __device__ bool
vol_ring_shared (const VolShape &s, int g)
{
  return s.shared_rings && vol_ring (s, g) > 1;
}

/* The first shared slot of group g's ring, and the shared slots of all. */
static constexpr __host__ __device__ int
vol_ring_start (const VolShape &s, int g)
{
  int slots = 0;
  for (int e = 0; e < g; e++)
    slots += vol_ring_shared (s, e) ? vol_ring (s, e) : 0;
  return slots;
}

static constexpr __host__ __device__ int
vol_shape_shared_slots (const VolShape &s)
{
  return vol_ring_start (s, s.n_groups);
}

/* The rings of compiled window S, a slot the two words of one P: in
 * registers, or where the window's row says so in shared memory, each
 * slot the block's threads side by side (a warp's 16-byte slots are four
 * conflict-free wavefronts). In registers ball 3's rings take 36 of its
 * 80 registers and spill 500 bytes a thread, whose stores reach the L2
 * and DRAM (docs/performance/volumes.md). */
template <int S> struct VolRings {
  uint64_t in_registers[VOL_SHAPE_GROUPS][vol_shape_longest_ring (vol_shapes[S])][2];
  ulonglong2 *in_shared;  /* this thread's slot 0 */

  template <int G, int Slot>
  __device__ __forceinline__ void put (const uint64_t (&p)[2])
  {
    if constexpr (vol_ring_shared (vol_shapes[S], G))
      in_shared[(vol_ring_start (vol_shapes[S], G) + Slot) * VOL_THREADS] = make_ulonglong2 (p[0], p[1]);
    else
      in_registers[G][Slot][0] = p[0], in_registers[G][Slot][1] = p[1];
  }

  template <int G, int Slot>
  __device__ __forceinline__ void take (uint64_t (&p)[2]) const
  {
    if constexpr (vol_ring_shared (vol_shapes[S], G))
      {
        const ulonglong2 slot = in_shared[(vol_ring_start (vol_shapes[S], G) + Slot) * VOL_THREADS];
        p[0] = slot.x, p[1] = slot.y;
      }
    else
      p[0] = in_registers[G][Slot][0], p[1] = in_registers[G][Slot][1];
  }
};

/* The bytes of a block's shared rings for window `shape`. */
static size_t
vol_shared_ring_bytes (int shape)
{
  return (size_t) vol_shape_shared_slots (vol_shapes[shape]) * VOL_THREADS * sizeof (ulonglong2);
}

static constexpr __host__ __device__ int
vol_first_run (const VolShape &s, int g)
{
  int i = 0;
  while (s.group_of[i] != g)
    i++;
  return i;
}

/* counts = (or +=, past the group's first run) the one-hot counts of `code`. */
static __device__ __forceinline__ void
vol_reg_accumulate (uint64_t (&counts)[2], uint32_t code, bool first)
{
#pragma unroll
  for (int h = 0; h < 2; h++)
    {
      const uint32_t root = vol_reg_root (code, h);
      if (first)
        counts[h] = (uint64_t) root * root;
      else
        vol_reg_mad (counts[h], root, root);
    }
}

/* P of group G of window S at row dy of the window centred at `here`: the
 * sum of the one-hot counts of its runs' cells there. A (dz, dy) is a row
 * pointer, dx the loads' offset. */
template <int S, int G, int Dy>
static __device__ __forceinline__ void
vol_group_cells (const uint8_t *__restrict__ here, long long plane_cells, long long row_cells, uint64_t (&sum)[2])
{
  vol_for<vol_shapes[S].runs.n> ([&] (auto i) {
    constexpr int I = decltype (i)::value;
    constexpr VolRun run = vol_shapes[S].runs.run[I];
    if constexpr (vol_shapes[S].group_of[I] == G)
      {
        const uint8_t *__restrict__ row = here + (run.dz * plane_cells + Dy * row_cells);
        vol_reg_accumulate (sum, row[run.dx], I == vol_first_run (vol_shapes[S], G));
      }
    return true;
  });
}

/* vol_reg_strip for compiled window S: the same counts, codes and values,
 * slid by groups. */
template <int S>
static __device__ __forceinline__ void
vol_group_strip (const VolBand &p, const uint8_t *__restrict__ codes, long long centre, const uint32_t *c_ln_c,
                 ulonglong2 *shared_rings, const VolTables<uint32_t> &tables, float *out, size_t out_row, int y0,
                 int y1)
{
  constexpr VolShape shape = vol_shapes[S];
  constexpr bool Quads = vol_shape_cells (shape) <= VOL_REG_QUAD_CELLS;
  const long long plane_cells = p.plane_cells, row_cells = p.row_cells;
  const uint8_t *__restrict__ here = codes + centre;
  const VolCounted whole = vol_counted (tables, p.cells);
  uint64_t counts[2] = { 0, 0 };
  VolRings<S> ring;
  ring.in_shared = shared_rings;

  /* The first window: a ringed group's rows go to their slots (row j of
   * its L to slot (j + 1) mod L, the slot of the step that drops it), a
   * moved group's cells straight into the counts. */
  vol_for<shape.n_groups> ([&] (auto gc) {
    constexpr int G = decltype (gc)::value, length = vol_shapes[S].y1[G] - vol_shapes[S].y0[G] + 1;
    vol_for<length> ([&] (auto jc) {
      constexpr int J = decltype (jc)::value, ring_length = vol_ring (vol_shapes[S], G);
      uint64_t rows[2];
      vol_group_cells<S, G, vol_shapes[S].y0[G] + J> (here, plane_cells, row_cells, rows);
      counts[0] += rows[0];
      counts[1] += rows[1];
      if constexpr (ring_length > 0)
        ring.template put<G, (J + 1) % ring_length> (rows);
      return true;
    });
    return true;
  });
  for (int y = y0;;)
    {
      const bool more = vol_for<vol_shape_unroll (shape)> ([&] (auto phase) {
        __stcs (out, vol_reg_value<Quads> (p, counts, here, c_ln_c, tables, whole));
        if (++y == y1)
          return false;
        here += row_cells;
        out += out_row;
        vol_for<vol_shapes[S].n_groups> ([&] (auto gc) {
          constexpr int G = decltype (gc)::value, ring_length = vol_ring (vol_shapes[S], G);
          if constexpr (ring_length > 0)
            {
              constexpr int slot = (decltype (phase)::value + 1) % ring_length;
              uint64_t entering[2], leaving[2];
              vol_group_cells<S, G, vol_shapes[S].y1[G]> (here, plane_cells, row_cells, entering);
              ring.template take<G, slot> (leaving);
              counts[0] += entering[0] - leaving[0];
              counts[1] += entering[1] - leaving[1];
              ring.template put<G, slot> (entering);
            }
          else
            {
              constexpr VolRun run = vol_shapes[S].runs.run[vol_first_run (vol_shapes[S], G)];
              const uint8_t *__restrict__ column = here + (run.dz * plane_cells + run.dx);
              vol_reg_move (counts, column[(run.y0 - 1) * row_cells], column[run.y1 * row_cells]);
            }
          return true;
        });
        return true;
      });
      if (!more)
        return;
    }
}

/* The fast variant with counts in registers for compiled window S; shared
 * memory holds the window's shared rings, then c ln c. */
template <int S>
static __global__ void __launch_bounds__ (VOL_THREADS, vol_shapes[S].register_blocks)
vol_group_kernel (VolBand p)
{
  extern __shared__ __align__ (16) unsigned char vol_shared[];
  const VolTables<uint32_t> tables = vol_tables<uint32_t> (p.tables, p.cells);
  ulonglong2 *rings = (ulonglong2 *) vol_shared;
  uint32_t *c_ln_c = (uint32_t *) (rings + vol_shape_shared_slots (vol_shapes[S]) * VOL_THREADS);

  for (int c = threadIdx.x; c <= p.cells; c += VOL_THREADS)
    c_ln_c[c] = tables.c_ln_c[c];
  __syncthreads ();
  vol_band_walk (p, [&] (long long centre, float *out, int y0, int y1, bool, bool) {
    vol_group_strip<S> (p, (const uint8_t *) p.binned, centre, c_ln_c, rings + threadIdx.x, tables, out,
                        (size_t) p.width, y0, y1);
  });
}

/* vol_strip for compiled window S, slid by groups: the same counts,
 * updates and values, but a ringed group's leaving cells are the codes it
 * loaded L steps before, kept in registers, so that a step loads only the
 * entering cells (cube 3: 9 loads a row where the moves took 18), each at
 * a row pointer and dx as the load's offset. The window's constants of
 * es_entropy_value are read once a strip, as in the long slide. */
template <int S, typename Bin, typename Counts, typename Sum>
static __device__ __forceinline__ void
vol_group_counts_strip (const VolBand &p, const Bin *__restrict__ binned, long long centre, const Counts &counts,
                        const Sum *delta, const VolTables<Sum> &t, float *out, size_t out_row, int y0, int y1,
                        bool more, bool edge)
{
  constexpr VolShape shape = vol_shapes[S];
  const long long plane_cells = p.plane_cells, row_cells = p.row_cells;
  const Bin void_bin = (Bin) p.bins;
  const Bin *__restrict__ here = binned + centre;
  const VolCounted whole = vol_counted (t, p.cells);
  /* Bins zero-extended, as loaded: a ring of Bin masked each use. */
  uint32_t ring[vol_shape_longest_ring (shape)][shape.runs.n];
  Sum sum = 0;

  /* The first window; a ringed run's cell at row j of its L goes to slot
   * (j + 1) mod L, the slot of the step that drops it. */
  vol_for<shape.runs.n> ([&] (auto i) {
    constexpr int I = decltype (i)::value;
    constexpr VolRun run = vol_shapes[S].runs.run[I];
    constexpr int ring_length = vol_ring (vol_shapes[S], vol_shapes[S].group_of[I]);
    vol_for<run.y1 - run.y0 + 1> ([&] (auto jc) {
      constexpr int J = decltype (jc)::value;
      const uint32_t b = (here + (run.dz * plane_cells + (run.y0 + J) * row_cells))[run.dx];
      sum = vol_add (counts, delta, b, sum);
      if constexpr (ring_length > 0)
        ring[(J + 1) % ring_length][I] = b;
      return true;
    });
    return true;
  });
  /* The rows, compiled twice: where windows can hold void cells, and
   * where only those of the top and bottom rows can (vol_strip_edge,
   * vol_row_value). */
  const auto slide = [&] (auto edge_c) {
    for (int y = y0;;)
      {
        const bool more_rows = vol_for<vol_shape_unroll (shape)> ([&] (auto phase) {
          /* Streaming, as in vol_strip. */
          __stcs (out, vol_row_value<decltype (edge_c)::value, Sum> (p, counts, t, whole, sum,
                                                                     p.masked && *here == void_bin, y));
          if (++y == y1)
            return false;
          here += row_cells;
          out += out_row;
          vol_for<vol_shapes[S].runs.n> ([&] (auto i) {
            constexpr int I = decltype (i)::value;
            constexpr VolRun run = vol_shapes[S].runs.run[I];
            constexpr int ring_length = vol_ring (vol_shapes[S], vol_shapes[S].group_of[I]);
            const uint32_t entering = (here + (run.dz * plane_cells + run.y1 * row_cells))[run.dx];
            uint32_t leaving;
            if constexpr (ring_length > 0)
              {
                constexpr int slot = (decltype (phase)::value + 1) % ring_length;
                leaving = ring[slot][I];
                ring[slot][I] = entering;
              }
            else
              leaving = (here + (run.dz * plane_cells + (run.y0 - 1) * row_cells))[run.dx];
            sum = vol_remove (counts, delta, leaving, sum);
            sum = vol_add (counts, delta, entering, sum);
            return true;
          });
          return true;
        });
        if (!more_rows)
          break;
      }
  };
  if (edge)
    slide (std::true_type ());
  else
    slide (std::false_type ());
  /* Empty the counts for the block's next tile, if any, by taking the
   * last window out. */
  if (!more)
    return;
  vol_for<shape.runs.n> ([&] (auto i) {
    constexpr VolRun run = vol_shapes[S].runs.run[decltype (i)::value];
    vol_for<run.y1 - run.y0 + 1> ([&] (auto jc) {
      vol_take_out (counts, (here + (run.dz * plane_cells + (run.y0 + decltype (jc)::value) * row_cells))[run.dx]);
      return true;
    });
    return true;
  });
}

/* The fast variant with counts in shared memory for compiled window S
 * (the short slides: byte counts of at most VOL_REG_QUAD_CELLS cells,
 * counted in fours; narrow sums). Shared memory holds the differences,
 * then the counts. */
template <int S, typename Bin, bool Atomic>
static __global__ void __launch_bounds__ (VOL_THREADS, 6)
vol_group_counts_kernel (VolBand p)
{
  extern __shared__ __align__ (16) unsigned char vol_shared[];
  const int t = threadIdx.x;
  const VolTables<uint32_t> tables = vol_tables<uint32_t> (p.tables, p.cells);
  const size_t table_bytes = ((size_t) p.cells * sizeof (uint32_t) + 15) / 16 * 16;
  uint32_t *shared_delta = (uint32_t *) vol_shared;
  unsigned char *shared_counts = vol_shared + table_bytes;
  VolSharedCounts<uint8_t, VOL_THREADS, Atomic, true> counts;

  static_assert (vol_shape_cells (vol_shapes[S]) <= VOL_REG_QUAD_CELLS, "counts in fours overflow a byte");
  for (int c = t; c < p.cells; c += VOL_THREADS)
    shared_delta[c] = tables.delta[c];
  counts.mine = (uint8_t *) (shared_counts + vol_count_lane<uint8_t> (t));
  vol_clear_shared (shared_counts, ((size_t) p.bins + 1) * VOL_THREADS, t, VOL_THREADS);
  __syncthreads ();
  vol_band_walk (p, [&] (long long centre, float *out, int y0, int y1, bool more, bool edge) {
    vol_group_counts_strip<S, Bin> (p, (const Bin *) p.binned, centre, counts, (const uint32_t *) shared_delta,
                                    tables, out, (size_t) p.width, y0, y1, more, edge);
  });
}

/* The teaching variant: the same slide, but each block first stages its
 * cube of T³ outputs with the window's halo, (T + 2hw)(T + 2hh)(T + 2hd)
 * bins, in shared memory, and the 64 threads (T columns × T planes) slide
 * down T rows of it. Spans are in the tile's strides. Narrow sums, 16-bit
 * counts, 16-bit staged bins. */
template <typename Bin, bool Atomic>
static __global__ void __launch_bounds__ (VOL_TILE * VOL_TILE)
vol_tile_kernel (VolBand p, long long tile_plane, long long tile_row)
{
  extern __shared__ __align__ (16) unsigned char vol_shared[];
  const int t = threadIdx.x;
  const VolTables<uint32_t> tables = vol_tables<uint32_t> (p.tables, p.cells);
  const int tw = VOL_TILE + 2 * p.hw, th = VOL_TILE + 2 * p.hh, td = VOL_TILE + 2 * p.hd;
  const size_t tile_cells = (size_t) tw * th * td;
  uint32_t *delta = (uint32_t *) vol_shared;
  const size_t table_bytes = ((size_t) p.cells * 4 + 15) / 16 * 16;
  uint16_t *tile = (uint16_t *) (vol_shared + table_bytes);
  unsigned char *count_rows = vol_shared + table_bytes + (tile_cells * 2 + 15) / 16 * 16;
  const int threads = VOL_TILE * VOL_TILE;
  VolSharedCounts<uint16_t, VOL_TILE * VOL_TILE, Atomic> counts;

  for (int c = t; c < p.cells; c += threads)
    delta[c] = tables.delta[c];
  /* 64 threads, 2-byte counts: 128 bytes a bin, threads t and t + 32 in
   * the two halves of word t mod 32. */
  counts.mine = (uint16_t *) (count_rows + 4 * (t & 31) + 2 * (t >> 5));
  vol_clear_shared (count_rows, ((size_t) p.bins + 1) * threads * 2, t, threads);

  const Bin *binned = (const Bin *) p.binned;
  const int tiles_x = (p.width + VOL_TILE - 1) / VOL_TILE;
  const int tiles_y = (p.height + VOL_TILE - 1) / VOL_TILE;
  const int tiles_z = (p.planes + VOL_TILE - 1) / VOL_TILE;
  const long long units = (long long) tiles_x * tiles_y * tiles_z;

  for (long long unit = blockIdx.x; unit < units; unit += gridDim.x)
    {
      const int x0 = (int) (unit % tiles_x) * VOL_TILE;
      const int y0 = (int) (unit / tiles_x % tiles_y) * VOL_TILE;
      const int z0 = (int) (unit / tiles_x / tiles_y) * VOL_TILE;

      /* The previous tile's slides are done before its cells are replaced. */
      __syncthreads ();
      for (size_t i = (size_t) t; i < tile_cells; i += threads)
        {
          const int lx = (int) (i % tw), ly = (int) (i / tw % th), lz = (int) (i / tw / th);
          const int px = min (x0 + lx, p.width + 2 * p.hw - 1);
          const int py = min (y0 + ly, p.height + 2 * p.hh - 1);
          const int pz = min (z0 + lz, p.planes + 2 * p.hd - 1);
          tile[i] = (uint16_t) binned[(long long) pz * p.plane_cells + (long long) py * p.row_cells + px];
        }
      __syncthreads ();

      const int x = x0 + (t % VOL_TILE), z = z0 + (t / VOL_TILE);
      if (x < p.width && z < p.planes)
        {
          const long long centre = (long long) (t / VOL_TILE + p.hd) * tile_plane + (long long) p.hh * tile_row
                                   + (t % VOL_TILE) + p.hw;
          float *out = p.out + ((size_t) z * p.height + y0) * p.width + x;
          vol_strip<-1, uint16_t> (p, tile, centre, tile_row, p.spans, NULL, counts, delta, tables, out,
                                   (size_t) p.width, y0, min (y0 + VOL_TILE, p.height), unit + gridDim.x < units,
                                   true);
        }
    }
}

/* ---- binning a band ------------------------------------------------------------ */

/* What the binning kernel reads: the band's source planes [s0, s1] of the
 * input (and mask), dense, and how every padded cell maps to them. */
typedef struct {
  const void *raw;
  const uint8_t *mask;        /* or NULL */
  int sample_bytes;
  int width, height, volume_planes;
  int z_first;                /* the volume plane of the block's padded plane 0: z0 − hd */
  int s0;
  int padded_w, padded_h, padded_planes;
  int hd, hh, hw;
  EsBorder border;
  const uint32_t *bin_of;     /* the bin of every sample value */
  uint32_t table_size;
  uint32_t void_bin, outside_bin;
} VolBinning;

/* Threads a block of the binning kernel, side by side along a padded row
 * (518 cells at 512³ with ball 3's halo: five passes of them). */
#define VOL_BIN_THREADS 128
/* Bin tables of at most this many entries (every 8-bit one) are staged in
 * shared memory, where a warp's 32 lookups cost one access; larger ones are
 * read through the read-only cache. */
#define VOL_BIN_SHARED_TABLE 1024

/* es_border_index with its rule out of line: an index inside, the usual
 * case, costs a compare, where the rule inlined had its divisions
 * predicated into every row's start. */
static __device__ __noinline__ int
vol_border_rule (int i, int n, EsBorder border)
{
  return es_border_index (i, n, border);
}

static __device__ __forceinline__ int
vol_border_index (int i, int n, EsBorder border)
{
  return i >= 0 && i < n ? i : vol_border_rule (i, n, border);
}

/* A block a padded row at a time (grid-stride over rows in x and planes
 * in y), its threads along x: the row's source row and plane, and whether
 * it lies outside, are found once a row. The row's cells inside the
 * source row take a loop of their own, with no border rule, which loads
 * four samples a thread before it bins any. Written as one loop with the
 * rule as a choice, and the sample size, mask and table as choices in
 * it, the compiler predicated the rule's divisions into every cell (about
 * 40 instructions a cell) and kept one load a thread in flight: 0.36 ms at
 * 512³ on an H200, against 0.23 ms (docs/performance/volumes.md). The
 * halo's cells follow the rule one by one. */
template <typename Bin, typename Sample, bool Masked, bool Staged>
static __device__ __forceinline__ void
vol_bin_rows (const VolBinning &b, Bin *__restrict__ binned, const uint32_t *staged_table)
{
  const int t = (int) threadIdx.x;
  const Sample *samples = (const Sample *) b.raw;
  const auto bin_of_sample = [&] (uint32_t v) -> uint32_t {
    v = min (v, b.table_size - 1);
    return Staged ? staged_table[v] : __ldg (&b.bin_of[v]);
  };

  for (int pz = (int) blockIdx.y; pz < b.padded_planes; pz += (int) gridDim.y)
    for (int py = (int) blockIdx.x; py < b.padded_h; py += (int) gridDim.x)
      {
        const int ys = vol_border_index (py - b.hh, b.height, b.border);
        const int zs = vol_border_index (b.z_first + pz, b.volume_planes, b.border);
        Bin *row = binned + ((size_t) pz * b.padded_h + py) * b.padded_w;

        if (ys < 0 || zs < 0)
          {
            for (int px = t; px < b.padded_w; px += VOL_BIN_THREADS)
              row[px] = (Bin) b.outside_bin;
            continue;
          }
        const size_t source_row = ((size_t) (zs - b.s0) * b.height + ys) * b.width;
        for (int x0 = t; x0 < b.width; x0 += 4 * VOL_BIN_THREADS)
          {
            uint32_t v[4], kept[4];

#pragma unroll
            for (int j = 0; j < 4; j++)
              {
                const int x = x0 + j * VOL_BIN_THREADS;
                v[j] = x < b.width ? __ldg (&samples[source_row + x]) : 0u;
                kept[j] = Masked && x < b.width ? __ldg (&b.mask[source_row + x]) : 1u;
              }
#pragma unroll
            for (int j = 0; j < 4; j++)
              {
                const int x = x0 + j * VOL_BIN_THREADS;
                if (x < b.width)
                  row[b.hw + x] = (Bin) (kept[j] == 0 ? b.void_bin : bin_of_sample (v[j]));
              }
          }
        for (int h = t; h < 2 * b.hw; h += VOL_BIN_THREADS)
          {
            const int x = h < b.hw ? h - b.hw : b.width + h - b.hw;
            const int xs = vol_border_rule (x, b.width, b.border);
            const size_t cell = source_row + (size_t) xs;
            row[b.hw + x] = (Bin) (xs < 0                                 ? b.outside_bin
                                   : Masked && __ldg (&b.mask[cell]) == 0 ? b.void_bin
                                                                          : bin_of_sample (__ldg (&samples[cell])));
          }
      }
}

/* Whether the band is binned a warp a row (vol_bin_rows_u8): 8-bit
 * samples, no mask, and a table of every 8-bit value (staged in shared
 * memory), as most volumes are. */
static __host__ __device__ __forceinline__ bool
vol_bin_by_warps (const VolBinning &b)
{
  return b.sample_bytes == 1 && b.mask == NULL && b.table_size == 256;
}

/* Rows a block bins at once. */
static __host__ __device__ __forceinline__ int
vol_bin_rows_a_block (const VolBinning &b)
{
  return vol_bin_by_warps (b) ? VOL_BIN_THREADS / 32 : 1;
}

/* vol_bin_rows for 8-bit samples, no mask and a staged table: a warp a
 * padded row, VOL_BIN_RUN cells a lane in a run of 32 · VOL_BIN_RUN, so
 * that each of a lane's loads, lookups and stores takes its offset from
 * the instruction and each of the warp's touches 32 neighbouring cells.
 * With four cells a thread and the block sharing a row, the row's setup
 * (its source row and plane, the border rule, the halo) was paid for
 * every four cells: about 35 instructions a cell, where this takes 14
 * (ncu, 512³ on an H200: 0.228 → 0.118 ms). */
#define VOL_BIN_RUN 16
template <typename Bin>
static __device__ __forceinline__ void
vol_bin_rows_u8 (const VolBinning &b, Bin *__restrict__ binned, const uint32_t *table)
{
  const int lane = (int) threadIdx.x & 31;
  const int rows = vol_bin_rows_a_block (b);
  const uint8_t *samples = (const uint8_t *) b.raw;

  for (int pz = (int) blockIdx.y; pz < b.padded_planes; pz += (int) gridDim.y)
    for (int py = (int) blockIdx.x * rows + ((int) threadIdx.x >> 5); py < b.padded_h; py += (int) gridDim.x * rows)
      {
        const int ys = vol_border_index (py - b.hh, b.height, b.border);
        const int zs = vol_border_index (b.z_first + pz, b.volume_planes, b.border);
        Bin *row = binned + ((size_t) pz * b.padded_h + py) * b.padded_w;

        if (ys < 0 || zs < 0)
          {
            for (int px = lane; px < b.padded_w; px += 32)
              row[px] = (Bin) b.outside_bin;
            continue;
          }
        const uint8_t *source = samples + ((size_t) (zs - b.s0) * b.height + ys) * b.width;
        Bin *cells = row + b.hw;
        for (int x0 = lane; x0 < b.width; x0 += 32 * VOL_BIN_RUN)
          {
            const uint8_t *in = source + x0;
            Bin *out = cells + x0;
            uint8_t v[VOL_BIN_RUN];

            if (x0 + 32 * (VOL_BIN_RUN - 1) < b.width)
              {
#pragma unroll
                for (int j = 0; j < VOL_BIN_RUN; j++)
                  v[j] = __ldg (&in[32 * j]);
#pragma unroll
                for (int j = 0; j < VOL_BIN_RUN; j++)
                  out[32 * j] = (Bin) table[v[j]];
              }
            else
              for (int x = x0; x < b.width; x += 32)
                cells[x] = (Bin) table[__ldg (&source[x])];
          }
        for (int h = lane; h < 2 * b.hw; h += 32)
          {
            const int x = h < b.hw ? h - b.hw : b.width + h - b.hw;
            const int xs = vol_border_rule (x, b.width, b.border);
            cells[x] = (Bin) (xs < 0 ? b.outside_bin : table[__ldg (&source[xs])]);
          }
      }
}

/* The kernel picks the rows' loop for its sample size, mask and table
 * once (uniform branches), so that none of them is a choice per cell.
 * Held to 64 registers, eight blocks resident: ptxas otherwise chose 40
 * and spilled. */
template <typename Bin>
static __global__ void __launch_bounds__ (VOL_BIN_THREADS, 8)
vol_bin_kernel (const __grid_constant__ VolBinning b, Bin *__restrict__ binned)
{
  extern __shared__ uint32_t vol_bin_table[];
  const bool staged = b.table_size <= VOL_BIN_SHARED_TABLE;
  const bool masked = b.mask != NULL;

  if (staged)
    {
      for (uint32_t v = threadIdx.x; v < b.table_size; v += VOL_BIN_THREADS)
        vol_bin_table[v] = b.bin_of[v];
      __syncthreads ();
    }
  if (vol_bin_by_warps (b))
    vol_bin_rows_u8<Bin> (b, binned, vol_bin_table);
  else if (b.sample_bytes == 1)
    {
      if (staged)
        masked ? vol_bin_rows<Bin, uint8_t, true, true> (b, binned, vol_bin_table)
               : vol_bin_rows<Bin, uint8_t, false, true> (b, binned, vol_bin_table);
      else
        masked ? vol_bin_rows<Bin, uint8_t, true, false> (b, binned, vol_bin_table)
               : vol_bin_rows<Bin, uint8_t, false, false> (b, binned, vol_bin_table);
    }
  else if (staged)
    masked ? vol_bin_rows<Bin, uint16_t, true, true> (b, binned, vol_bin_table)
           : vol_bin_rows<Bin, uint16_t, false, true> (b, binned, vol_bin_table);
  else
    masked ? vol_bin_rows<Bin, uint16_t, true, false> (b, binned, vol_bin_table)
           : vol_bin_rows<Bin, uint16_t, false, false> (b, binned, vol_bin_table);
}

/* ---- the host side ----------------------------------------------------------------- */

/* The window as column runs along y: a (dz, dx) column of the window can
 * hold several runs (a footprint with holes). */
static int
vol_column_runs (const EsJob *job, int hd, int hh, int hw, int **out)
{
  const int n3 = es_window_spans_3d (job, NULL, 0);
  const int dd = 2 * hd + 1, hh2 = 2 * hh + 1, ww = 2 * hw + 1;
  EsSpan3 *spans = (EsSpan3 *) malloc ((size_t) n3 * sizeof *spans);
  uint8_t *cells = (uint8_t *) calloc ((size_t) dd * hh2 * ww, 1);
  int *runs = (int *) malloc ((size_t) dd * ww * ((size_t) hh2 / 2 + 1) * 4 * sizeof *runs);
  int n = 0;

  if (spans == NULL || cells == NULL || runs == NULL)
    {
      free (spans);
      free (cells);
      free (runs);
      return -1;
    }
  es_window_spans_3d (job, spans, n3);
  for (int i = 0; i < n3; i++)
    for (int dx = spans[i].x0; dx <= spans[i].x1; dx++)
      cells[((size_t) (spans[i].dz + hd) * hh2 + (size_t) (spans[i].dy + hh)) * ww + (size_t) (dx + hw)] = 1;
  for (int dz = -hd; dz <= hd; dz++)
    for (int dx = -hw; dx <= hw; dx++)
      for (int dy = -hh; dy <= hh; dy++)
        {
          if (!cells[((size_t) (dz + hd) * hh2 + (size_t) (dy + hh)) * ww + (size_t) (dx + hw)])
            continue;
          int end = dy;
          while (end + 1 <= hh && cells[((size_t) (dz + hd) * hh2 + (size_t) (end + 1 + hh)) * ww + (size_t) (dx + hw)])
            end++;
          runs[4 * n] = dz, runs[4 * n + 1] = dx, runs[4 * n + 2] = dy, runs[4 * n + 3] = end;
          n++;
          dy = end;
        }
  free (spans);
  free (cells);
  *out = runs;
  return n;
}

static void
vol_spans_in (const int *runs, int n, long long plane, long long row, VolSpan *spans)
{
  for (int i = 0; i < n; i++)
    {
      const long long dz = runs[4 * i], dx = runs[4 * i + 1], y0 = runs[4 * i + 2], y1 = runs[4 * i + 3];
      spans[i].first = dz * plane + y0 * row + dx;
      spans[i].leave = dz * plane + (y0 - 1) * row + dx;
      spans[i].enter = dz * plane + y1 * row + dx;
      spans[i].length = (int) (y1 - y0 + 1);
    }
}

/* The scale of a narrow window's sums: the finest power of two at which
 * T[cells] = round(cells · ln cells · scale) fits uint32, so that a
 * window's H is as close to float64 as 32 bits allow (each entry's
 * rounding is half a unit: 2^-20 nats at 2^19 put 64 values counted twice
 * at 6.0000005 bits, not 6). */
static double
vol_narrow_scale (int cells)
{
  const double most = cells > 1 ? (double) cells * log ((double) cells) : 0.0;
  int bits = 31;

  while (bits > 0 && most * ldexp (1.0, bits) >= 4294967295.0)
    bits--;
  return ldexp (1.0, bits);
}

/* The tables of a window of `cells` cells, in the layout of VolTables. */
template <typename Sum>
static void *
vol_tables_host (int cells, double scale, size_t *bytes)
{
  const size_t n = (size_t) cells + 1;
  *bytes = 2 * n * sizeof (Sum) + 3 * n * sizeof (double);
  char *buffer = (char *) malloc (*bytes);
  if (buffer == NULL)
    return NULL;
  Sum *delta = (Sum *) buffer, *c_ln_c = delta + n;
  double *ln_n = (double *) (c_ln_c + n), *inv_n = ln_n + n, *zero_below = inv_n + n;

  for (size_t c = 0; c < n; c++)
    {
      c_ln_c[c] = c == 0 ? 0 : (Sum) llround ((double) c * log ((double) c) * scale);
      ln_n[c] = c == 0 ? 0.0 : log ((double) c);
      inv_n[c] = c == 0 ? 0.0 : 1.0 / (scale * (double) c);
      zero_below[c] = es_entropy_zero_below ((int) c);
    }
  for (size_t c = 0; c + 1 < n; c++)
    delta[c] = c_ln_c[c + 1] - c_ln_c[c];
  delta[n - 1] = 0;
  return buffer;
}

/* One device's share of a volume job. */
typedef struct {
  const EsJob *job;
  const EsImage *in;
  EsImage *out;
  bool tiled;                 /* the teaching variant */
  bool registers;             /* counts in registers: codes 4·b binned */
  bool quads;                 /* and counted in fours: codes 4·b + 1 */
  int band_planes;            /* output planes a band computes */
  int z_begin, z_end;         /* the device's planes */
  int hd, hh, hw;
  const int *runs;
  int n_runs;
  int shape;                  /* the compiled window (vol_shapes) the runs make, or −1 */
  const void *tables;         /* host tables, table_bytes */
  size_t table_bytes;
  const uint32_t *bin_of;     /* host */
  uint32_t table_size;
  EsBinner binner;
  uint32_t void_bin, outside_bin;
  bool voids;                 /* a cell can be void: a mask, or clip */
  int bin_bytes, count_bytes;
  bool narrow;
  size_t global_count_bytes;  /* 0: counts in shared memory */
  bool counted;               /* read the hardware counters of its one band */
  float times[3];
} VolWork;

/* The bytes of one band of `planes` output planes on a device. */
static size_t
vol_band_bytes (const VolWork *w, int planes)
{
  const EsImage *in = w->in;
  const size_t plane = (size_t) in->width * in->height;
  const size_t source = (size_t) planes + 2 * (size_t) w->hd;
  const size_t padded = (size_t) (in->width + 2 * w->hw) * (size_t) (in->height + 2 * w->hh);

  return source * plane * (es_format_size (in->format) + (w->job->definition.mask != NULL ? 1 : 0))
         + (source * padded + 64) * (size_t) w->bin_bytes + (size_t) planes * plane * sizeof (float);
}

/* The source planes [*s0, *s1] that planes [z0 − hd, z1 + hd) map to. */
static void
vol_source_planes (int z0, int z1, int hd, int planes, EsBorder border, int *s0, int *s1)
{
  *s0 = planes, *s1 = -1;
  for (int z = z0 - hd; z < z1 + hd; z++)
    {
      const int m = es_border_index (z, planes, border);
      if (m >= 0)
        {
          *s0 = m < *s0 ? m : *s0;
          *s1 = m > *s1 ? m : *s1;
        }
    }
}

/* A block a tile, so that the hardware starts tiles in order as earlier
 * ones finish: the tiles in flight stay a window about 50 planes deep at
 * 512³ whose planes of bins the L2 keeps, and each plane is read from
 * DRAM once. A grid of resident blocks striding over the tiles read the
 * bins 2.1 times at 512³ ball 3 (ncu, H200): the warp schedulers favour
 * the oldest warps of an SM, so in these compute-bound kernels some
 * blocks ran ahead of others by many planes, and the planes in flight
 * outgrew the L2. Starting a block (staging spans and tables, clearing
 * counts) costs little beside its tile's thousands of windows. */
static unsigned
vol_tile_blocks (size_t tiles)
{
  return tiles < (size_t) INT_MAX ? (unsigned) tiles : (unsigned) INT_MAX;
}

/* The band's slide as VolMoves: whether they hold it (a window of at most
 * VOL_MOVES spans in a band that 32 bits index), and then `moves`. */
static bool
vol_moves (const VolWork *w, const VolBand &band, VolMoves *moves)
{
  const long long band_cells = band.plane_cells * (band.planes + 2 * band.hd);

  *moves = VolMoves{};
  if (band.n_spans > VOL_MOVES || band_cells > (long long) UINT32_MAX)
    return false;
  for (int i = 0; i < band.n_spans; i++)
    {
      VolSpan span;

      vol_spans_in (w->runs + 4 * i, 1, band.plane_cells, band.row_cells, &span);
      moves->leave[i] = (int) span.leave;
      moves->enter[i] = (int) span.enter;
    }
  return true;
}

/* The span counts that the sliding kernels have compiled in, so that
 * every move is unrolled: those of cube 3 (9 spans), ball 2 (13) and
 * ball 3 (29), which other windows share (a 3×5×3 box has 9), and which
 * the compiled windows themselves take where their groups do not run
 * (vol_group_counts_kernel takes the short slides of byte counts).
 * `kernel` takes the count as a std::integral_constant: one of these, or
 * 0 for a count read at run time. */
template <typename Kernel>
static const void *
vol_compiled_spans (int n_spans, const Kernel &kernel)
{
  switch (n_spans)
    {
    case 9:
      return kernel (std::integral_constant<int, 9> ());
    case 13:
      return kernel (std::integral_constant<int, 13> ());
    case 29:
      return kernel (std::integral_constant<int, 29> ());
    default:
      return kernel (std::integral_constant<int, 0> ());
    }
}

/* Whether a slide of n_spans spans updates its shared counts by atomics
 * (VolSharedCounts): in the teaching kernel, or in the fast one with
 * `resident_warps` of its blocks on an SM. Measured on an H200 at 512³
 * (docs/performance/volumes.md), they pay where a step's updates keep the
 * load/store pipe busy, more than VOL_SHORT_SLIDE spans:
 * - ball 3 at 256 bins, 24 warps: 5.47 → 4.86 ms; ball 5 at 16 bins,
 *   32 warps: 13.66 → 11.30; the teaching kernel's ball 3 and ball 5,
 *   1–9 % faster at both bin counts;
 * - but the fast kernel's ball 5 at 256 bins, whose 64 KiB of counts a
 *   block leave 12 warps an SM to hide the atomics' longer latency,
 *   slowed 25.50 → 28.46, and ball 2 (13 spans) 2.82 → 2.89. */
#define VOL_ATOMIC_MIN_WARPS 16
static bool
vol_atomic_updates (int n_spans, int resident_warps, bool teaching)
{
  return n_spans > VOL_SHORT_SLIDE && (teaching || resident_warps >= VOL_ATOMIC_MIN_WARPS);
}

/* The shared-count kernel for a band: compiled span counts for byte
 * counts (windows of at most 255 cells, which all of those are), with
 * atomic updates where `atomic` asks and the slide is long enough to use
 * them (the short slides are compiled in one form). */
template <typename Bin, typename Count, typename Sum>
static const void *
vol_shared_kernel (const VolBand &band, bool moved, bool atomic)
{
  const auto form = [atomic] (auto n) {
    constexpr int N = decltype (n)::value;
    if constexpr (N > 0 && N <= VOL_SHORT_SLIDE)
      return (const void *) vol_entropy_kernel<Bin, Count, Sum, N, false>;
    else
      return atomic ? (const void *) vol_entropy_kernel<Bin, Count, Sum, N, true>
                    : (const void *) vol_entropy_kernel<Bin, Count, Sum, N, false>;
  };
  if (!moved)
    return form (std::integral_constant<int, -1> ());
  if constexpr (sizeof (Count) == 1)
    return vol_compiled_spans (band.n_spans, form);
  return form (std::integral_constant<int, 0> ());
}

/* Allows `kernel` `smem` bytes of dynamic shared memory a block, and
 * sets *warps to the warps of it that an SM then keeps resident (0 where
 * the driver does not say). */
static bool
vol_resident_warps (EsCuda *cuda, const void *kernel, size_t smem, int *warps, EsError *error)
{
  int per_sm = 0;

  ES_CUDA_TRY (cuda, cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem),
               "3-D entropy shared memory", error);
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel, VOL_THREADS, smem) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      per_sm = 0;
    }
  *warps = per_sm * (VOL_THREADS / 32);
  return true;
}

/* The compiled window (an index into vol_shapes) whose runs are the
 * job's, or −1. */
static int
vol_compiled_shape (const VolWork *w)
{
  for (int s = 0; s < VOL_N_SHAPES; s++)
    {
      const VolShapeRuns &runs = vol_shapes[s].runs;
      bool same = runs.n == w->n_runs;
      for (int i = 0; same && i < runs.n; i++)
        same = w->runs[4 * i] == runs.run[i].dz && w->runs[4 * i + 1] == runs.run[i].dx
               && w->runs[4 * i + 2] == runs.run[i].y0 && w->runs[4 * i + 3] == runs.run[i].y1;
      if (same)
        return s;
    }
  return -1;
}

template <int... S>
static const void *
vol_group_kernel_of (int shape, std::integer_sequence<int, S...>)
{
  const void *kernels[] = { (const void *) vol_group_kernel<S>... };
  return kernels[shape];
}

/* vol_group_counts_kernel for the compiled windows whose codes a ring
 * holds (short slides), else NULL. */
template <int S, typename Bin, bool Atomic>
static const void *
vol_group_counts_entry ()
{
  if constexpr (vol_shapes[S].runs.n <= VOL_SHORT_SLIDE)
    return (const void *) vol_group_counts_kernel<S, Bin, Atomic>;
  return NULL;
}

template <typename Bin, bool Atomic, int... S>
static const void *
vol_group_counts_kernel_of (int shape, std::integer_sequence<int, S...>)
{
  const void *kernels[] = { vol_group_counts_entry<S, Bin, Atomic> ()... };
  return kernels[shape];
}

/* Launches `kernel` with `args` (the band first), a block a tile. */
static bool
vol_launch_tiles (EsCuda *cuda, const void *kernel, void **args, const VolBand &band, size_t smem, const char *what,
                  EsError *error)
{
  const size_t tiles = es_cuda_div_up ((size_t) band.width, VOL_THREADS) * es_cuda_div_up ((size_t) band.height, VOL_STRIP)
                       * (size_t) band.planes;
  const unsigned blocks = vol_tile_blocks (tiles);

  ES_CUDA_TRY (cuda, cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem),
               "3-D entropy shared memory", error);
  ES_CUDA_TRY (cuda, cudaLaunchKernel (kernel, blocks, VOL_THREADS, args, smem, cuda->stream), "3-D entropy launch",
               error);
  ES_CUDA_LAUNCHED (cuda, what, error);
  es_cuda_note_kernel (cuda, kernel, blocks, VOL_THREADS, smem, what, true);
  return true;
}

/* The shared-count kernel of compiled window `shape` (a short slide):
 * its updates are atomics where VOL_ATOMIC_MIN_WARPS of it are resident
 * on an SM. With the ring's half of the loads, the atomics' single
 * operation an update pays even on the short slides (H200, 512³, 256
 * bins, 24 warps: ball 2 2.43 → 2.09 ms, cube 3 1.81 → 1.79), where the
 * moves' were slower (vol_atomic_updates). */
template <typename Bin>
static bool
vol_launch_group_counts (EsCuda *cuda, const VolBand &band, int shape, size_t table_bytes, EsError *error)
{
  const size_t smem = table_bytes + ((size_t) band.bins + 1) * VOL_THREADS;
  const auto seq = std::make_integer_sequence<int, VOL_N_SHAPES> ();
  const void *kernel = vol_group_counts_kernel_of<Bin, false> (shape, seq);
  void *args[] = { (void *) &band };
  int warps;

  if (!vol_resident_warps (cuda, kernel, smem, &warps, error))
    return false;
  if (warps >= VOL_ATOMIC_MIN_WARPS)
    kernel = vol_group_counts_kernel_of<Bin, true> (shape, seq);
  return vol_launch_tiles (cuda, kernel, args, band, smem, "3-D entropy kernel", error);
}

template <typename Bin, typename Count, typename Sum>
static bool
vol_launch_sliding (EsCuda *cuda, const VolWork *w, const VolBand &band, size_t global_counts, EsError *error)
{
  const size_t table_bytes = sizeof (Sum) == 4 ? ((size_t) band.cells * 4 + 15) / 16 * 16 : 0;

  if constexpr (sizeof (Count) == 1 && sizeof (Sum) == 4 && sizeof (Bin) <= 2)
    if (global_counts == 0 && w->shape >= 0 && vol_shapes[w->shape].runs.n <= VOL_SHORT_SLIDE)
      return vol_launch_group_counts<Bin> (cuda, band, w->shape, table_bytes, error);

  VolMoves moves;
  const bool moved = vol_moves (w, band, &moves);
  const size_t smem = vol_staged_span_bytes (band.n_spans) + table_bytes
                      + (global_counts == 0 ? ((size_t) band.bins + 1) * VOL_THREADS * sizeof (Count) : 0);

  if (global_counts == 0)
    {
      const void *kernel = vol_shared_kernel<Bin, Count, Sum> (band, moved, false);
      void *args[] = { (void *) &band, (void *) &moves };
      int warps;

      if (!vol_resident_warps (cuda, kernel, smem, &warps, error))
        return false;
      if (vol_atomic_updates (band.n_spans, warps, false))
        kernel = vol_shared_kernel<Bin, Count, Sum> (band, moved, true);
      return vol_launch_tiles (cuda, kernel, args, band, smem, "3-D entropy kernel", error);
    }

  const void *kernel = (const void *) vol_entropy_global_kernel<Bin, Count, Sum>;
  const size_t tiles = es_cuda_div_up ((size_t) band.width, VOL_THREADS) * es_cuda_div_up ((size_t) band.height, VOL_STRIP)
                       * (size_t) band.planes;
  VolBand p = band;
  unsigned blocks;

  ES_CUDA_TRY (cuda, cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem),
               "3-D entropy shared memory", error);
  blocks = es_cuda_resident_blocks (cuda, kernel, VOL_THREADS, smem, tiles * VOL_THREADS);
  const size_t per_block = ((size_t) band.bins + 1) * VOL_THREADS * sizeof (Count);
  const size_t most = global_counts / per_block;
  blocks = most < blocks ? (unsigned) most : blocks;
  if (!es_cuda_device_reserve (cuda, &cuda->general_counts, (size_t) blocks * per_block, "3-D entropy counts", error))
    return false;
  ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->general_counts.ptr, 0, (size_t) blocks * per_block, cuda->stream),
               "3-D entropy counts", error);
  p.global_counts = (unsigned long long *) cuda->general_counts.ptr;
  vol_entropy_global_kernel<Bin, Count, Sum><<<blocks, VOL_THREADS, smem, cuda->stream>>> (p);
  ES_CUDA_LAUNCHED (cuda, "3-D entropy kernel", error);
  es_cuda_note_kernel (cuda, kernel, blocks, VOL_THREADS, smem, "3-D entropy kernel", true);
  return true;
}

/* The register kernel for a band: by groups of runs for a compiled
 * window, else with its span count compiled in where vol_compiled_spans
 * has it. */
static bool
vol_launch_registers (EsCuda *cuda, const VolWork *w, const VolBand &band, EsError *error)
{
  if (w->shape >= 0)
    {
      void *args[] = { (void *) &band };

      assert (w->quads == (vol_shape_cells (vol_shapes[w->shape]) <= VOL_REG_QUAD_CELLS));
      return vol_launch_tiles (cuda, vol_group_kernel_of (w->shape, std::make_integer_sequence<int, VOL_N_SHAPES> ()),
                               args, band, vol_shared_ring_bytes (w->shape) + ((size_t) band.cells + 1) * sizeof (uint32_t),
                               "3-D register-count entropy kernel", error);
    }

  const size_t smem = vol_staged_span_bytes (band.n_spans) + ((size_t) band.cells + 1) * sizeof (uint32_t);
  VolMoves moves;
  const bool moved = vol_moves (w, band, &moves);
  const auto compiled = [&] (auto quads) {
    constexpr bool Quads = decltype (quads)::value;
    if (!moved)
      return (const void *) vol_register_kernel<-1, Quads>;
    return vol_compiled_spans (band.n_spans, [] (auto n) {
      return (const void *) vol_register_kernel<decltype (n)::value, Quads>;
    });
  };
  void *args[] = { (void *) &band, (void *) &moves };

  return vol_launch_tiles (cuda, w->quads ? compiled (std::true_type ()) : compiled (std::false_type ()), args, band,
                           smem, "3-D register-count entropy kernel", error);
}

template <typename Bin>
static bool
vol_launch_bin_type (EsCuda *cuda, const VolWork *w, const VolBand &band, EsError *error)
{
  if (w->tiled)
    {
      const long long tile_row = VOL_TILE + 2 * w->hw;
      const long long tile_plane = tile_row * (VOL_TILE + 2 * w->hh);
      const size_t tile_cells = (size_t) tile_plane * (VOL_TILE + 2 * w->hd);
      const size_t smem = ((size_t) band.cells * 4 + 15) / 16 * 16 + (tile_cells * 2 + 15) / 16 * 16
                          + ((size_t) band.bins + 1) * VOL_TILE * VOL_TILE * 2;
      const bool atomic = vol_atomic_updates (band.n_spans, 0, true);
      const auto launch = atomic ? vol_tile_kernel<Bin, true> : vol_tile_kernel<Bin, false>;
      const void *kernel = (const void *) launch;
      const size_t tiles = es_cuda_div_up ((size_t) band.width, VOL_TILE) * es_cuda_div_up ((size_t) band.height, VOL_TILE)
                           * es_cuda_div_up ((size_t) band.planes, VOL_TILE);
      VolBand p = band;

      p.spans = (const VolSpan *) ((const char *) cuda->general_spans.ptr + (size_t) w->n_runs * sizeof (VolSpan));
      ES_CUDA_TRY (cuda, cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem),
                   "3-D tile shared memory", error);
      const unsigned blocks = vol_tile_blocks (tiles);
      launch<<<blocks, VOL_TILE * VOL_TILE, smem, cuda->stream>>> (p, tile_plane, tile_row);
      ES_CUDA_LAUNCHED (cuda, "3-D tile kernel", error);
      es_cuda_note_kernel (cuda, kernel, blocks, VOL_TILE * VOL_TILE, smem, "3-D tile kernel", true);
      return true;
    }
  const size_t global = w->global_count_bytes;
  if (w->narrow)
    return w->count_bytes == 1 ? vol_launch_sliding<Bin, uint8_t, uint32_t> (cuda, w, band, global, error)
                               : vol_launch_sliding<Bin, uint16_t, uint32_t> (cuda, w, band, global, error);
  return vol_launch_sliding<Bin, uint32_t, long long> (cuda, w, band, global, error);
}

template <typename Bin>
static bool
vol_bin (EsCuda *cuda, const VolBinning &b, void *binned, EsError *error)
{
  /* One wave of resident blocks (es_cuda_blocks), rows across x and the
   * rest across planes. */
  const unsigned row_blocks = (unsigned) ((b.padded_h + vol_bin_rows_a_block (b) - 1) / vol_bin_rows_a_block (b));
  const unsigned wave = es_cuda_blocks (cuda, (size_t) row_blocks * b.padded_planes * VOL_BIN_THREADS, VOL_BIN_THREADS);
  const unsigned across_rows = wave < row_blocks ? wave : row_blocks;
  const unsigned across_planes = wave / across_rows < (unsigned) b.padded_planes ? wave / across_rows
                                                                                  : (unsigned) b.padded_planes;
  const dim3 grid (across_rows, across_planes < 65535u ? across_planes : 65535u);
  const size_t smem = b.table_size <= VOL_BIN_SHARED_TABLE ? (size_t) b.table_size * sizeof (uint32_t) : 0;

  vol_bin_kernel<Bin><<<grid, VOL_BIN_THREADS, smem, cuda->stream>>> (b, (Bin *) binned);
  ES_CUDA_LAUNCHED (cuda, "3-D binning kernel", error);
  es_cuda_note_kernel (cuda, (const void *) vol_bin_kernel<Bin>, grid.x * grid.y, VOL_BIN_THREADS, smem,
                       "3-D binning kernel", false);
  return true;
}

/* Uploads planes [s0, s1] of `image` densely into `device`. */
static bool
vol_upload_planes (EsCuda *cuda, const EsImage *image, int s0, int s1, void *device, EsError *error)
{
  const size_t row = (size_t) image->width * es_format_size (image->format);

  for (int z = s0; z <= s1; z++)
    ES_CUDA_TRY (cuda,
                 cudaMemcpy2DAsync ((char *) device + (size_t) (z - s0) * row * image->height, row,
                                    es_image_voxel_row (image, z, 0), image->stride, row, (size_t) image->height,
                                    cudaMemcpyDefault, cuda->stream),
                 "volume upload", error);
  return true;
}

/* A band's kernels: its binning, then the variant's slide. */
static bool
vol_launch_band (EsCuda *cuda, const VolWork *w, const VolBinning &b, const VolBand &band, EsError *error)
{
  void *binned = cuda->general_binned.ptr;

  if (w->registers)
    return vol_bin<uint8_t> (cuda, b, binned, error) && vol_launch_registers (cuda, w, band, error);
  if (w->bin_bytes == 1)
    return vol_bin<uint8_t> (cuda, b, binned, error) && vol_launch_bin_type<uint8_t> (cuda, w, band, error);
  if (w->bin_bytes == 2)
    return vol_bin<uint16_t> (cuda, b, binned, error) && vol_launch_bin_type<uint16_t> (cuda, w, band, error);
  return vol_bin<uint32_t> (cuda, b, binned, error) && vol_launch_bin_type<uint32_t> (cuda, w, band, error);
}

/* A band's launches, to run again under the range profiler. */
typedef struct {
  const VolWork *w;
  VolBinning binning;
  VolBand band;
} VolPass;

static bool
vol_launch_pass (EsCuda *cuda, const void *data, EsError *error)
{
  const VolPass *pass = (const VolPass *) data;

  return vol_launch_band (cuda, pass->w, pass->binning, pass->band, error);
}

/* The device's bands, one after the other on its stream; then, when its
 * counters are wanted, the one band's kernels again under the range
 * profiler, on the planes still on the device (they write the same
 * output), so that the times stay those of the normal path. */
static bool
vol_run_device (EsCuda *cuda, VolWork *w, EsControl *control, EsError *error)
{
  VolPass pass;

  const EsImage *in = w->in;
  const EsJob *job = w->job;
  const int planes = es_image_planes (in);
  const int pw = in->width + 2 * w->hw, ph = in->height + 2 * w->hh;
  const size_t plane = (size_t) in->width * in->height;
  const size_t source_planes = (size_t) w->band_planes + 2 * (size_t) w->hd;
  const long long tile_row = VOL_TILE + 2 * w->hw, tile_plane = tile_row * (VOL_TILE + 2 * w->hh);
  VolSpan *spans = (VolSpan *) malloc (2 * (size_t) w->n_runs * sizeof *spans);

  w->times[0] = w->times[1] = w->times[2] = 0;
  if (spans == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the spans of a 3-D window");
  vol_spans_in (w->runs, w->n_runs, (long long) pw * ph, pw, spans);
  vol_spans_in (w->runs, w->n_runs, tile_plane, tile_row, spans + w->n_runs);
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  bool ok = es_cuda_device_reserve (cuda, &cuda->general_spans, 2 * (size_t) w->n_runs * sizeof *spans, "3-D spans",
                                    error)
            && es_cuda_device_reserve (cuda, &cuda->volume_tables, w->table_bytes, "3-D tables", error)
            && es_cuda_device_reserve (cuda, &cuda->general_bins, (size_t) w->table_size * 4, "bin table", error)
            && es_cuda_device_reserve (cuda, &cuda->d_in, source_planes * plane * es_format_size (in->format),
                                       "volume input", error)
            && (job->definition.mask == NULL
                || es_cuda_device_reserve (cuda, &cuda->general_mask, source_planes * plane, "volume mask", error))
            && es_cuda_device_reserve (cuda, &cuda->general_binned, (source_planes * pw * ph + 64) * w->bin_bytes,
                                       "binned volume", error)
            && es_cuda_device_reserve (cuda, &cuda->d_out, (size_t) w->band_planes * plane * sizeof (float),
                                       "volume output", error);
  if (ok)
    ok = es_cuda_check (cuda,
                        cudaMemcpyAsync (cuda->general_spans.ptr, spans, 2 * (size_t) w->n_runs * sizeof *spans,
                                         cudaMemcpyHostToDevice, cuda->stream), "3-D spans upload", error)
         && es_cuda_check (cuda, cudaMemcpyAsync (cuda->volume_tables.ptr, w->tables, w->table_bytes,
                                                  cudaMemcpyHostToDevice, cuda->stream), "3-D tables upload", error)
         && es_cuda_check (cuda, cudaMemcpyAsync (cuda->general_bins.ptr, w->bin_of, (size_t) w->table_size * 4,
                                                  cudaMemcpyHostToDevice, cuda->stream), "bin table upload", error)
         /* Pageable sources: the copies above are staged before they return. */
         && es_cuda_check (cuda, cudaStreamSynchronize (cuda->stream), "3-D tables upload", error);
  free (spans);
  if (!ok)
    return false;

  for (int z0 = w->z_begin; z0 < w->z_end; z0 += w->band_planes)
    {
      const int z1 = z0 + w->band_planes < w->z_end ? z0 + w->band_planes : w->z_end;
      int s0, s1;
      float ms;

      if (es_control_cancelled (control))
        return es_error_set (error, ES_ERROR_CANCELLED, "cancelled");
      vol_source_planes (z0, z1, w->hd, planes, job->definition.border, &s0, &s1);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error);
      if (s1 >= s0
          && (!vol_upload_planes (cuda, in, s0, s1, cuda->d_in.ptr, error)
              || (job->definition.mask != NULL
                  && !vol_upload_planes (cuda, job->definition.mask, s0, s1, cuda->general_mask.ptr, error))))
        return false;
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_uploaded, cuda->stream), "event record", error);

      VolBinning b = { cuda->d_in.ptr, job->definition.mask != NULL ? (const uint8_t *) cuda->general_mask.ptr : NULL,
                       (int) es_format_size (in->format), in->width, in->height, planes, z0 - w->hd, s0,
                       pw, ph, z1 - z0 + 2 * w->hd, w->hd, w->hh, w->hw, job->definition.border,
                       (const uint32_t *) cuda->general_bins.ptr, w->table_size, w->void_bin, w->outside_bin };
      VolBand band = { cuda->general_binned.ptr, (long long) pw * ph, pw, in->width, in->height, z1 - z0,
                       w->hd, w->hh, w->hw, (const VolSpan *) cuda->general_spans.ptr, w->n_runs,
                       es_window_pixels (job), w->binner.bins, w->voids, job->definition.mask != NULL,
                       job->definition.normalized,
                       es_entropy_unit_scale (&job->definition), (float *) cuda->d_out.ptr,
                       cuda->volume_tables.ptr, NULL };
      if (!es_cuda_inject_launch_fault (cuda, error) || !vol_launch_band (cuda, w, b, band, error))
        return false;
      pass = (VolPass){ w, b, band };
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_computed, cuda->stream), "event record", error);
      for (int z = z0; z < z1; z++)
        ES_CUDA_TRY (cuda,
                     cudaMemcpy2DAsync (es_image_voxel_row (w->out, z, 0), w->out->stride,
                                        (const float *) cuda->d_out.ptr + (size_t) (z - z0) * plane,
                                        (size_t) in->width * sizeof (float), (size_t) in->width * sizeof (float),
                                        (size_t) in->height, cudaMemcpyDefault, cuda->stream),
                     "volume download", error);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error);
      ES_CUDA_TRY (cuda, cudaEventSynchronize (cuda->ev_done), "3-D entropy", error);
      ES_CUDA_TRY (cuda, cudaEventElapsedTime (&ms, cuda->ev_start, cuda->ev_uploaded), "timing", error);
      w->times[0] += ms;
      ES_CUDA_TRY (cuda, cudaEventElapsedTime (&ms, cuda->ev_uploaded, cuda->ev_computed), "timing", error);
      w->times[1] += ms;
      ES_CUDA_TRY (cuda, cudaEventElapsedTime (&ms, cuda->ev_computed, cuda->ev_done), "timing", error);
      w->times[2] += ms;
    }
  if (w->counted && w->z_end > w->z_begin)
    return es_cuda_count_pass (cuda, vol_launch_pass, &pass, error);
  return true;
}

/* Whether the teaching kernel's shared memory holds the window's table,
 * its 8³ tile with halo and the counts of `bins` bins. */
static bool
vol_tile_fits (const EsJob *job, uint32_t bins)
{
  int hd, hh, hw;

  es_window_extent_3d (job, &hd, &hh, &hw);
  const size_t tile_cells = (size_t) (VOL_TILE + 2 * hw) * (VOL_TILE + 2 * hh) * (VOL_TILE + 2 * hd);
  const size_t smem = (size_t) es_window_pixels (job) * 4 + tile_cells * 2 + ((size_t) bins + 1) * VOL_TILE * VOL_TILE * 2;
  return es_window_pixels (job) <= VOL_NARROW_CELLS && bins <= 256 && smem <= VOL_TILE_SHARED_MAX;
}

const char *
es_cuda_entropy_volume_unsupported (const EsJob *job)
{
  return es_definition_is_3d (&job->definition) ? NULL : "computes 3-D windows only (box, ball, 3-D footprint)";
}

/* Exact binning has 2^depth bins, more than the tile's counts hold past
 * 8-bit samples: the job's levels bound the others. */
const char *
es_cuda_entropy_volume_tile_unsupported (const EsJob *job)
{
  if (!es_definition_is_3d (&job->definition))
    return "computes 3-D windows only (box, ball, 3-D footprint)";
  if (job->definition.binning == ES_BINNING_EXACT || !vol_tile_fits (job, (uint32_t) job->levels))
    return "computes 3-D windows up to 961 cells and 256 bins (not exact binning) whose 8³ tile with halo fits in "
           "shared memory";
  return NULL;
}

bool
es_cuda_entropy_volume (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out,
                        float times[3], EsControl *control, EsError *error)
{
  const EsOpInfo *info = es_op_info (job->op);
  const int planes = es_image_planes (in);
  const int n_devices = 1 + cuda->n_peers;
  VolWork w;
  bool ok = false;

  memset (&w, 0, sizeof w);
  w.job = job;
  w.in = in;
  w.out = out;
  es_window_extent_3d (job, &w.hd, &w.hh, &w.hw);
  assert (w.hd == info->plane_halo (job));
  es_binner_init (&w.binner, job, in);
  /* A levels image brings its own number of bins. */
  const int cells = es_window_pixels (job);
  w.tiled = strcmp (variant->id, "volume-tile") == 0 && vol_tile_fits (job, w.binner.bins);
  w.registers = !w.tiled && w.binner.bins <= VOL_REG_BINS && cells <= VOL_REG_CELLS;
  w.quads = w.registers && cells <= VOL_REG_QUAD_CELLS;
  /* The register kernel reads codes 4·b (+ 1 counting in fours); the
   * others bins. */
  const uint32_t code_scale = w.registers ? 4 : 1, code_offset = w.quads ? 1 : 0;
  w.void_bin = w.registers ? VOL_REG_VOID : w.binner.bins;
  w.outside_bin = job->definition.border == ES_BORDER_CONSTANT
                    ? code_scale * es_binner_border_bin (&w.binner, job) + code_offset
                    : w.void_bin;
  w.voids = job->definition.mask != NULL || job->definition.border == ES_BORDER_CLIP;
  const uint32_t largest_bin = w.voids ? w.binner.bins : w.binner.bins - 1;
  w.bin_bytes = w.tiled ? 2 : w.registers || largest_bin < 256 ? 1 : largest_bin < 65536 ? 2 : 4;
  w.narrow = cells <= VOL_NARROW_CELLS;
  w.count_bytes = !w.narrow ? 4 : cells < 256 ? 1 : 2;
  const size_t shared_counts = ((size_t) w.binner.bins + 1) * VOL_THREADS * (size_t) w.count_bytes;
  const size_t budget = es_cuda_memory_budget (cuda);
  if (!w.tiled && !w.registers && shared_counts > VOL_SHARED_COUNTS_MAX)
    {
      /* A quarter of the budget, but never less than one block's counts
       * (shared_counts' bytes): under a small budget no block could be
       * launched, and the job would fail over to the CPU. */
      const size_t quarter = budget / 4 < VOL_GLOBAL_COUNTS_MAX ? budget / 4 : VOL_GLOBAL_COUNTS_MAX;
      w.global_count_bytes = quarter > shared_counts ? quarter : shared_counts;
    }

  w.n_runs = vol_column_runs (job, w.hd, w.hh, w.hw, (int **) &w.runs);
  w.shape = w.n_runs >= 0 ? vol_compiled_shape (&w) : -1;
  w.table_size = in->levels != 0 ? (uint32_t) in->levels : 1u << in->depth;
  uint32_t *bin_of = (uint32_t *) malloc ((size_t) w.table_size * sizeof *bin_of);
  w.tables = w.narrow ? vol_tables_host<uint32_t> (cells, vol_narrow_scale (cells), &w.table_bytes)
                      : vol_tables_host<long long> (cells, 4294967296.0, &w.table_bytes);
  if (w.n_runs < 0 || bin_of == NULL || w.tables == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the tables of a %d-cell window", cells);
      goto done;
    }
  for (uint32_t v = 0; v < w.table_size; v++)
    bin_of[v] = code_scale * es_bin_sample (&w.binner, v) + code_offset;
  w.bin_of = bin_of;

  {
    /* Bands of planes: as many as the budget holds with their halo, less the
     * working tables and counts; a large volume spreads over every device
     * in equal shares. */
    const size_t fixed = w.table_bytes + (size_t) w.table_size * 4 + 2 * (size_t) w.n_runs * sizeof (VolSpan)
                         + w.global_count_bytes;
    const size_t plane_bytes = vol_band_bytes (&w, 1) - vol_band_bytes (&w, 0);
    if (budget <= fixed + vol_band_bytes (&w, 1))
      {
        es_error_set (error, ES_ERROR_NO_MEMORY,
                      "CUDA %s: %zu bytes of device memory hold no band of a %d×%d volume with a %d-plane halo",
                      info->name, budget, in->width, in->height, w.hd);
        goto done;
      }
    size_t cap = (budget - fixed - vol_band_bytes (&w, 0)) / plane_bytes;
    const bool spread = n_devices > 1 && (size_t) in->width * in->height * planes >= ES_CUDA_SPREAD_MIN_PIXELS;
    const int devices = spread ? n_devices : 1;
    const size_t per_device_planes = es_cuda_div_up ((size_t) planes, (size_t) devices);
    const size_t bands_per_device = es_cuda_div_up (per_device_planes, cap);
    w.band_planes = (int) es_cuda_div_up (per_device_planes, bands_per_device);
    /* Counters are read for a volume in one band on one device, as a 2-D
     * run's in one piece. */
    w.counted = cuda->counters_wanted && devices == 1 && bands_per_device == 1;
    if (cuda->counters_wanted && !w.counted)
      es_cuda_note_uncounted_run (cuda);

    VolWork work[ES_CUDA_MAX_DEVICES];
    EsError errors[ES_CUDA_MAX_DEVICES];
    bool done_ok[ES_CUDA_MAX_DEVICES];

#pragma omp parallel for num_threads(devices) schedule(static, 1) if (devices > 1)
    for (int i = 0; i < devices; i++)
      {
        work[i] = w;
        work[i].z_begin = (int) ((size_t) i * per_device_planes < (size_t) planes ? (size_t) i * per_device_planes : (size_t) planes);
        work[i].z_end = (int) ((size_t) (i + 1) * per_device_planes < (size_t) planes ? (size_t) (i + 1) * per_device_planes
                                                                                       : (size_t) planes);
        errors[i] = (EsError) { ES_OK, "" };
        done_ok[i] = vol_run_device (i == 0 ? cuda : cuda->peers[i - 1], &work[i], control, &errors[i]);
      }
    (void) cudaSetDevice (cuda->device);
    ok = true;
    for (int i = 0; i < devices && ok; i++)
      if (!done_ok[i])
        {
          *error = errors[i];
          ok = false;
        }
    /* Times of the first device, whose share is the largest. */
    for (int k = 0; k < 3; k++)
      times[k] = work[0].times[k];
  }

done:
  free ((void *) w.runs);
  free (bin_of);
  free ((void *) w.tables);
  return ok;
}

/* ---- memory models ------------------------------------------------------------ */

/* Both 3-D variants, as es_cuda_entropy_volume picks their kernels, on a
 * volume that fits one band a device (a 512³ volume of 8-bit samples needs
 * under 1 GiB): the bin pass reads every voxel (and the mask) once and
 * writes the padded block of bins; the sliding (or tile) kernel reads the
 * block back once and writes a float a voxel. Its re-reads of a window's
 * rows and planes hit L2: blocks start tile after tile in order
 * (vol_tile_blocks), so the planes that a window spans are in flight
 * together (tens of planes of 512² bins, well within L2). Counts that outgrow shared
 * memory (exact 16-bit bins) live in a global scratch, cleared first,
 * whose misses past L2 cost a sector each way for each of the two updates
 * a span and voxel. */
static void
volume_memory (const EsJob *job, const EsExtent *extent, bool tile_variant, EsTraffic *traffic)
{
  const EsEntropyDefinition *d = &job->definition;
  const double voxels = es_extent_pixels (extent);
  const int planes = extent->planes > 1 ? extent->planes : 1;
  const int cells = es_window_pixels (job);
  const uint32_t bins = extent->levels != 0               ? (uint32_t) extent->levels
                        : d->binning == ES_BINNING_EXACT ? 1u << extent->depth
                                                         : (uint32_t) job->levels;
  int hd, hh, hw;

  es_window_extent_3d (job, &hd, &hh, &hw);
  const bool tiled = tile_variant && vol_tile_fits (job, bins);
  const bool registers = !tiled && bins <= VOL_REG_BINS && cells <= VOL_REG_CELLS;
  const bool voids = d->mask != NULL || d->border == ES_BORDER_CLIP;
  const uint32_t largest_bin = voids ? bins : bins - 1;
  const int bin_bytes = tiled ? 2 : registers || largest_bin < 256 ? 1 : largest_bin < 65536 ? 2 : 4;
  const double block = (double) (extent->width + 2 * hw) * (extent->height + 2 * hh) * (planes + 2 * hd) * bin_bytes;

  *traffic = (EsTraffic){ 0, 0, 0 };
  traffic->read_bytes = voxels * es_model_sample_bytes (extent) + (d->mask != NULL ? voxels : 0) + block;
  traffic->write_bytes = block + voxels * sizeof (float);

  const int count_bytes = cells > VOL_NARROW_CELLS ? 4 : cells < 256 ? 1 : 2;
  const double shared_counts = ((double) bins + 1) * VOL_THREADS * count_bytes;
  if (!tiled && !registers && shared_counts > (double) VOL_SHARED_COUNTS_MAX)
    {
      const double scratch = fmin (ES_MODEL_RESIDENT_THREADS / VOL_THREADS * shared_counts,
                                   (double) VOL_GLOBAL_COUNTS_MAX);
      const int n_runs = es_window_spans_3d (job, NULL, 0);
      traffic->write_bytes += scratch;
      if (scratch > ES_MODEL_L2_BYTES)
        {
          const double missed = 1.0 - ES_MODEL_L2_BYTES / scratch, updates = 2.0 * n_runs * voxels;
          traffic->read_bytes += missed * updates * 32;
          traffic->write_bytes += missed * updates * 32;
        }
    }
}

void
es_cuda_entropy_volume_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  volume_memory (job, extent, false, traffic);
}

void
es_cuda_entropy_volume_tile_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  volume_memory (job, extent, true, traffic);
}
