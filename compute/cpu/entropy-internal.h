/* SPDX-License-Identifier: MIT */
/* Internal to the CPU entropy files: the c·ln c tables, finishing sums into entropies, and the three methods. */
#pragma once

#include "es-cpu-internal.h"
#include "../es-definitions.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ES_MAX_COUNT (ES_FAST_WINDOW_MAX * ES_FAST_WINDOW_MAX)

/* Rows copied for the vector loops run on to a multiple of this many bytes. */
#define ES_PAD 32

/* Sliding and columns: T[961] · 2^18 ≈ 1.73e9 < 2^31, and the rounding
 * leaves 2^-20 ≈ 1e-6 of the 1e-5 budget. */
#define ES_ENTROPY_BITS 18
/* Shuffle: four bytes hold T[225] · 2^17 ≈ 1.6e8. */
#define ES_SIMD_BITS 17

typedef struct {
  int window;
  /* value[c] = T[c]; delta[c] = T[c+1] − T[c]. */
  uint32_t value[ES_MAX_COUNT + 1];
  uint32_t delta[ES_MAX_COUNT];
  /* For a window of n pixels: ln n, and 2^-bits / n, which turns a scaled
   * sum into (1/n) Σ c ln c without a division per pixel. */
  double ln_n[ES_MAX_COUNT + 1];
  double inv_n[ES_MAX_COUNT + 1];
} EntropyTables;

static inline float
entropy_value (const EntropyTables *t, uint32_t sum, int n)
{
  double h = t->ln_n[n] - (double) sum * t->inv_n[n];
  /* A window of one level leaves only the rounding of T around zero: it is
   * exactly 0 (and never −0). */
  return h >= ES_ENTROPY_ZERO_BELOW ? (float) h : 0.0f;
}

/* What turns the scaled sum of a window of `rows` × k pixels into its
 * entropy. */
typedef struct {
  double ln_n, inv_n;
} RowFinish;

static inline RowFinish
row_finish (const EntropyTables *t, int rows)
{
  return (RowFinish){ t->ln_n[rows * t->window], t->inv_n[rows * t->window] };
}

/* For the scalar loops of the sliding and column methods, where the
 * finish fits between table loads and a predicted branch is cheapest. */
static inline float
finish_value (const RowFinish *f, uint32_t sum)
{
  /* Window sums are below 2^31: a signed conversion is one instruction. */
  double v = f->ln_n - (int32_t) sum * f->inv_n;

  return v >= ES_ENTROPY_ZERO_BELOW ? (float) v : 0.0f;
}

#ifdef ES_HAVE_AVX2_PATH
/* The same value for a loop that should vectorize: the choice is a mask,
 * not the branch GCC makes of the expression above (the conversion might
 * trap), so a photograph's runs of uniform windows cost no mispredictions. */
static inline float
finish_value_masked (const RowFinish *f, uint32_t sum)
{
  double v = f->ln_n - (int32_t) sum * f->inv_n;
  float h = (float) v;
  uint32_t bits;

  memcpy (&bits, &h, sizeof bits);
  bits &= -(uint32_t) (v >= ES_ENTROPY_ZERO_BELOW);
  memcpy (&h, &bits, sizeof h);
  return h;
}

#endif

/* The rows of output row y's window, clipped to the image. */
static inline void
window_rows (int y, int r, int h, int *top, int *bottom)
{
  *top = y - r > 0 ? y - r : 0;
  *bottom = y + r < h ? y + r : h - 1;
}

/* Four methods compute the same sums, each cheapest somewhere; a cost
 * model (method_cost, fitted on this project's Zen 4) picks one per window
 * k and level count L:
 *
 * - sliding (any job): per output row, the window histogram slides right
 *   one column at a time; each of the 2k pixels that leave or enter moves a
 *   count by one and the sum by a table difference. O(k) scalar updates a
 *   pixel, whatever L: the choice for many levels and small windows.
 * - columns (AVX2, any job): Perreault and Hébert's column histograms.
 *   Each image column keeps the counts of the k rows under the window;
 *   moving down a row adds one pixel to it and removes one. Along a row the
 *   window histogram adds the entering column and subtracts the leaving
 *   one, 16 u16 counts per AVX2 register, and Σ T[count] is summed afresh
 *   over the L levels, two pixels per table load (pairs below). O(L) a
 *   pixel, whatever the window: the choice for large windows, and the
 *   bound on every job's cost.
 * - shuffle (AVX2, k ≤ 15, L < 255): every level counted 32 pixels per
 *   vector, T looked up with vpshufb. O(L·k²/16) cheap vector work a pixel:
 *   the choice for small windows and few levels (5×5, 16 levels: the
 *   default job). With AVX-512 (entropy-shuffle512.c) a vector holds four
 *   levels of 16 pixels and vpermb looks T up whole: O(L·k/64), the choice
 *   up to 15×15 for all but the most levels.
 * - sort (AVX-512, 5×5 only): the 25 levels of 64 windows sorted by a
 *   network in byte lanes; equal levels form runs, whose terms come from a
 *   table by rank. The same cost for any L: the choice for 5×5 beyond
 *   about 24 levels.
 *
 * Each keeps its window sums of c·ln c as integers, T[c] = round(c ln c ·
 * 2^bits), so moving a window is exact, nothing drifts along a row, and
 * every run gives the same bits. A sum has at most n/2 terms with c ≥ 2
 * (T[0] = T[1] = 0), so the rounding moves (1/n)·Σ by at most 2^-bits / 4.
 * The sums are uint32: a window's sum is below 2^31 (ES_ENTROPY_BITS), and
 * modular arithmetic makes every partial sum on the way harmless. */

static inline int64_t
entropy_scaled (int c, int bits)
{
  return c > 1 ? llround (ldexp (c * log (c), bits)) : 0;
}

/* Finishes a row's sums (entropy.c): the columns within r of an edge, and
 * with AVX2 the whole row, where the inner columns share one n. */
void es_cpu_entropy_finish_edges (const EntropyTables *t, const uint32_t *sums, int w, int rows, float *dst);
#ifdef ES_HAVE_AVX2_PATH
ES_HOT_DECL void es_cpu_entropy_finish_row (const EntropyTables *t, const uint32_t *sums, int w, int rows, float *dst);
#endif

#define ES_COLUMNS_MAX_LEVELS 256
/* Each thread keeps every column's counts of L levels, w·L·2 bytes (2 MiB
 * for a 4096-pixel row and 256 levels). Wider rows with many levels go to
 * the sliding method, whose rows take w·2k bytes. */
#define ES_COLUMNS_MAX_BYTES ((size_t) 32 << 20)
/* The small-window path counts every level separately, 32 pixels per vector:
 * per-column counts of each level slide down the image (add the entering
 * row, subtract the leaving one), a window count is the sum of k column
 * counts, and T[count] is looked up with vpshufb. T is cut into bytes
 * (planes) and each plane into 16-entry slices, the most vpshufb indexes. A
 * pixel costs O(L) cheap vector work, which beats O(k) scalar updates for
 * small windows and few levels: 5×5 with 16 levels is the default. Window
 * counts must fit a byte (k ≤ 15: at most 225) and T[225] · 2^17 ≈ 1.6e8
 * fits four planes; the 2^-19 rounding error leaves most of the 1e-5 budget
 * to spare. */
#define ES_SIMD_MAX_WINDOW 15

#ifdef ES_HAVE_AVX2_PATH
/* entropy-columns.c: column histograms; the lanes of L levels and the
 * per-thread bytes a job needs, for the cost model. */
int es_cpu_columns_lanes (int levels);
size_t es_cpu_columns_bytes (int width, int window, int levels);
bool es_cpu_entropy_columns (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                             EsControl *control, EsError *error);
/* entropy-shuffle.c: AVX2 byte shuffles for small windows and few levels;
 * the same sums with AVX-512 where es_cpu_entropy_avx512 says so. */
bool es_cpu_entropy_shuffle (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                             EsControl *control, EsError *error);
#endif

/* GCC 8 and Clang 8 know the AVX-512 VBMI and VNNI intrinsics. */
#if defined(ES_HAVE_AVX2_PATH) && (__GNUC__ >= 8 || __clang_major__ >= 8)
#define ES_HAVE_AVX512_PATH 1
/* entropy-shuffle512.c: the shuffle method's AVX-512 loop. */
bool es_cpu_entropy_shuffle512 (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                                EsControl *control, EsError *error);
/* entropy-sort.c: 5×5 windows sorted by networks, for many levels. */
bool es_cpu_entropy_sort (const EsJob *job, const EntropyTables *t, const EsImage *in, const EsImage *out,
                          EsControl *control, EsError *error);
#endif

/* entropy-general.c: every definition the methods above do not take (shapes,
 * borders, binnings, more levels, masks, normalized units). */
bool es_cpu_entropy_general (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);
