/* SPDX-License-Identifier: MIT */
/* Local entropy of every definition (DESIGN.md §1): sliding histograms over the window's row spans. */
#include "es-cpu.h"
#include "entropy-internal.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* A cell that counts in no histogram (outside the image with clip, or
 * masked) holds the bin B, one past the last: its count is kept like the
 * others', so that a step needs no branch, but adds nothing to the sum or n. */
#define SKIP (g->bins)
/* Where the window has fewer than PARK cells, the SKIP bin's count is
 * parked at PARK, far from every real count (0..most), and the table of
 * differences is zero out there: a SKIP cell then moves its count like any
 * other and adds nothing, with no test at all (n is the window's cells less
 * the SKIP cells, the parked count's distance from PARK). */
#define PARK 32768u
#define DELTA_PARKED 65536u
/* Fixed-point bits of T[c] = c ln c: T[255²] · 2^32 ≈ 3.1e15 < 2^53, so a
 * window's sum converts to double exactly, and (1/n) Σ is off by < 2^-33. */
#define GENERAL_BITS 32

/* What every thread reads: the job's bins, window and tables. */
typedef struct {
  const EsImage *in, *mask;
  EsBorder border;
  uint32_t border_bin;
  uint32_t *lut; /* bin of each sample value */
  uint32_t bins; /* B */
  bool normalized;
  double unit_scale; /* es_entropy_unit_scale */
  EsSpan *spans;
  int n_spans, half_height, half_width;
  int reach_left, reach_right; /* the spans' smallest x0 and largest x1 */
  int most;                    /* cells in the window: the largest n */
  bool parked;                 /* SKIP's count lives at PARK (most < PARK / 2) */
  uint64_t *delta;             /* T[c + 1] − T[c] for c < most; zero after, up to DELTA_PARKED when parked */
  uint64_t *table;             /* T[c] for c ≤ most, for the packed path */
  bool packed;                 /* B ≤ 16, enough spans, AVX2: the counts in a register */
  struct Finish *finish;       /* by n, 0..most */
} General;

/* The finish's constants for a window of n counted cells, a table by n:
 * borders and masks change n from one pixel to the next. */
typedef struct Finish {
  int n;
  double ln_n, inv_n, zero;
  double scale; /* 1 / ln(min(B, n)) when normalized, else 1 */
  double unit;  /* es_entropy_unit_scale */
} Finish;

static void
finish_set (Finish *f, const General *g, int n)
{
  uint32_t most = g->bins < (uint32_t) n ? g->bins : (uint32_t) n;

  f->n = n;
  f->ln_n = n > 0 ? log (n) : 0.0;
  f->inv_n = n > 0 ? ldexp (1.0 / n, -GENERAL_BITS) : 0.0;
  f->zero = es_entropy_zero_below (n);
  f->scale = !g->normalized ? 1.0 : most <= 1 ? 0.0 : 1.0 / log ((double) most);
  f->unit = g->unit_scale;
}

/* es_entropy_value from the window's scaled sum, with the constants of f. */
static inline float
finish_value_n (const Finish *f, uint64_t sum)
{
  double h;

  if (f->n == 0)
    return NAN;
  /* sum < 2^53: the signed conversion is one instruction and exact. */
  h = f->ln_n - (double) (int64_t) sum * f->inv_n;
  return h < f->zero ? 0.0f : es_entropy_store (h * f->scale, f->unit);
}

/* Virtual row v (any integer) as bins with half_width cells of border on
 * each side, or NULL when the row counts nothing (outside with clip). */
static const uint32_t *
map_row (const General *g, int v, uint32_t *dst)
{
  const EsImage *in = g->in;
  int w = in->width, hw = g->half_width, padded = w + 2 * hw;
  int sy = es_border_index (v, in->height, g->border);
  const uint8_t *mask;

  if (sy < 0)
    {
      if (g->border == ES_BORDER_CLIP)
        return NULL;
      for (int i = 0; i < padded; i++)
        dst[i] = g->border_bin;
      return dst;
    }
  if (in->format == ES_FORMAT_U8)
    {
      const uint8_t *src = es_image_row (in, sy);
      for (int x = 0; x < w; x++)
        dst[hw + x] = g->lut[src[x]];
    }
  else
    {
      const uint16_t *src = es_image_row (in, sy);
      for (int x = 0; x < w; x++)
        dst[hw + x] = g->lut[src[x]];
    }
  mask = g->mask ? es_image_row (g->mask, sy) : NULL;
  if (mask != NULL)
    for (int x = 0; x < w; x++)
      if (mask[x] == 0)
        dst[hw + x] = SKIP;
  for (int i = 0; i < hw; i++)
    {
      int left = es_border_index (i - hw, w, g->border), right = es_border_index (w + i, w, g->border);

      dst[i] = left >= 0 ? dst[hw + left] : g->border == ES_BORDER_CLIP ? SKIP : g->border_bin;
      dst[hw + w + i] = right >= 0 ? dst[hw + right] : g->border == ES_BORDER_CLIP ? SKIP : g->border_bin;
    }
  return dst;
}

/* One sliding histogram along a row: its counts, the scaled Σ T[c] and n. */
typedef struct {
  uint16_t *counts;
  uint64_t sum;
  int n;
} Chain;

/* Adds (sign 1) or removes (−1) the window's cells at x; SKIP cells move
 * their count only. */
static void
chain_window (Chain *c, const General *g, const uint32_t *const *left, const uint32_t *const *right, int spans, int x,
              int sign)
{
  for (int s = 0; s < spans; s++)
    for (const uint32_t *p = left[s] + x; p < right[s] + x; p++)
      {
        uint64_t d = sign > 0 ? g->delta[c->counts[*p]++] : g->delta[--c->counts[*p]];

        if (*p != SKIP)
          {
            c->sum += sign > 0 ? d : -d;
            c->n += sign;
          }
      }
}

/* Moves the window from x to x + 1, where a cell may be SKIP (the bin
 * `skip`): its count moves, its sum and n are masked off, without a branch
 * (a mask's holes are unpredictable). */
static inline void
chain_step_checked (Chain *c, const uint64_t *delta, const uint32_t *const *left, const uint32_t *const *right,
                    int spans, int x, uint32_t skip)
{
  for (int s = 0; s < spans; s++)
    {
      uint32_t leave = left[s][x], enter = right[s][x];
      uint64_t out = delta[--c->counts[leave]], in = delta[c->counts[enter]++];
      uint64_t keep_out = -(uint64_t) (leave != skip), keep_in = -(uint64_t) (enter != skip);

      c->sum += (in & keep_in) - (out & keep_out);
      c->n += (int) (enter != skip) - (int) (leave != skip);
    }
}

/* Moves the window from x to x + 1, where no cell is SKIP. */
static inline void
chain_step (Chain *c, const uint64_t *delta, const uint32_t *const *left, const uint32_t *const *right, int spans,
            int x)
{
  /* Two sums, so that a late table load delays only half the chain. */
  uint64_t in = 0, out = 0;

  for (int s = 0; s < spans; s++)
    {
      out += delta[--c->counts[left[s][x]]];
      in += delta[c->counts[right[s][x]]++];
    }
  c->sum += in - out;
}

static inline void
chain_write (Chain *c, const General *g, int cells, const uint8_t *own_mask, float *dst, int x)
{
  int n = g->parked ? cells - (int) (c->counts[SKIP] - PARK) : c->n;
  float value = finish_value_n (&g->finish[n], c->sum);

  dst[x] = own_mask != NULL && own_mask[x] == 0 ? NAN : value;
}

/* How a row is stepped, by general_row and packed_row: wide rows as two
 * chains, their halves (`steps` each at most), and the steps x → x + 1 for
 * x in [plain0, plain1) need no SKIP test: every step without a mask and
 * with a border that fills the outside, and with clip the steps whose cells
 * all lie in the image. */
typedef struct {
  bool two;
  int half, steps, plain0, plain1;
} RowPlan;

static RowPlan
row_plan (const General *g)
{
  int w = g->in->width;
  RowPlan plan = { .two = w >= 256, .plain0 = w, .plain1 = w };

  plan.half = plan.two ? w / 2 : w;
  plan.steps = w - plan.half > plan.half ? w - plan.half : plan.half;
  if (g->mask == NULL)
    {
      int p0 = g->border == ES_BORDER_CLIP ? -g->reach_left : 0;
      int p1 = g->border == ES_BORDER_CLIP ? w - 1 - g->reach_right : w;
      plan.plain0 = p0 < 0 ? 0 : p0 > w ? w : p0;
      plan.plain1 = p1 < plan.plain0 ? plan.plain0 : p1 > w ? w : p1;
    }
  return plan;
}

/* One output row. left[s] and right[s] point at span s's first cell and the
 * cell after its last for x = 0; moving right removes left[s][x] and adds
 * right[s][x]. Counts fit 16 bits: n ≤ 255². A wide row is two chains, its
 * halves, stepped together: two independent chains of table loads and
 * counts keep more of the core busy than one, and share the span pointers. */
static void
general_row (const General *g, const uint32_t *const *left, const uint32_t *const *right, int spans,
             uint16_t *counts[2], const uint8_t *own_mask, float *dst)
{
  int w = g->in->width;
  const uint64_t *delta = g->delta;
  const RowPlan plan = row_plan (g);
  const bool two = plan.two;
  const int half = plan.half, steps = plan.steps;
  /* A parked SKIP count needs no test anywhere (PARK above). */
  const int plain0 = g->parked ? 0 : plan.plain0, plain1 = g->parked ? w : plan.plain1;
  Chain a = { counts[0], 0, 0 }, b = { counts[1], 0, 0 };
  int cells = 0;

  for (int s = 0; s < spans; s++)
    cells += (int) (right[s] - left[s]);
  chain_window (&a, g, left, right, spans, 0, 1);
  if (two)
    chain_window (&b, g, left, right, spans, half, 1);
  /* Chain a covers 0..half − 1, chain b half..w − 1 (one more when w is odd). */
  for (int x = 0;; x++)
    {
      int xb = half + x;
      bool step_a = x + 1 < half, step_b = two && xb + 1 < w;

      if (x < half)
        chain_write (&a, g, cells, own_mask, dst, x);
      if (two)
        chain_write (&b, g, cells, own_mask, dst, xb);
      if (x + 1 == steps)
        break;
      if (step_a && step_b && x >= plain0 && xb < plain1)
        {
          /* Both steps plain (plain steps form one interval): interleaved. */
          uint64_t in_a = 0, out_a = 0, in_b = 0, out_b = 0;

          for (int s = 0; s < spans; s++)
            {
              const uint32_t *l = left[s], *r = right[s];
              out_a += delta[--a.counts[l[x]]];
              out_b += delta[--b.counts[l[xb]]];
              in_a += delta[a.counts[r[x]]++];
              in_b += delta[b.counts[r[xb]]++];
            }
          a.sum += in_a - out_a;
          b.sum += in_b - out_b;
          continue;
        }
      if (step_a && step_b && g->mask != NULL)
        {
          /* A mask: both steps checked, still interleaved. */
          const uint32_t skip = g->bins;

          for (int s = 0; s < spans; s++)
            {
              const uint32_t *l = left[s], *r = right[s];
              uint32_t la = l[x], ra = r[x], lb = l[xb], rb = r[xb];
              uint64_t oa = delta[--a.counts[la]], ob = delta[--b.counts[lb]];
              uint64_t ia = delta[a.counts[ra]++], ib = delta[b.counts[rb]++];

              a.sum += (ia & -(uint64_t) (ra != skip)) - (oa & -(uint64_t) (la != skip));
              b.sum += (ib & -(uint64_t) (rb != skip)) - (ob & -(uint64_t) (lb != skip));
              a.n += (int) (ra != skip) - (int) (la != skip);
              b.n += (int) (rb != skip) - (int) (lb != skip);
            }
          continue;
        }
      if (step_a && x >= plain0 && x < plain1)
        chain_step (&a, delta, left, right, spans, x);
      else if (step_a)
        chain_step_checked (&a, delta, left, right, spans, x, g->bins);
      if (step_b)
        {
          if (xb >= plain0 && xb < plain1)
            chain_step (&b, delta, left, right, spans, xb);
          else
            chain_step_checked (&b, delta, left, right, spans, xb, g->bins);
        }
    }
  /* Empty the histograms for the next row: the last windows' cells. */
  chain_window (&a, g, left, right, spans, half - 1, -1);
  if (two)
    chain_window (&b, g, left, right, spans, w - 1, -1);
}

#ifdef ES_HAVE_AVX2_PATH
#include <immintrin.h>

/* ---- up to 16 bins: the counts in an AVX2 register ----------------------------
 * With few bins the scalar steps above keep hitting the same few counts, and
 * each such update waits for the one before it through store-to-load
 * forwarding. Here the window's 16 counts are the 16-bit lanes of one
 * register: a cell moves its bin's lane by a compare with the lane numbers
 * (−1 where equal), the updates of a step meet only in a tree of adds, and
 * Σ T[c] is gathered afresh from the lanes each pixel. On one core of this
 * Zen 4 that costs about 11 ns a pixel plus 0.6 ns a span, against about
 * 3 ns plus 1.7 ns a span for the scalar steps on random bins, more with
 * fewer bins or on a photograph (docs/performance/cpu-entropy.md): it wins
 * from about five spans (PACKED_MIN_SPANS). The sums are the scalar path's (Σ T[c] exactly,
 * which its differences telescope to), so the values are bit for bit its.
 * A SKIP cell (bin B) counts in lane B when B < 16 and in none when B = 16;
 * n is counted apart, only on the steps where a cell can be SKIP. */
#define PACKED_MAX_BINS 16
#define PACKED_MIN_SPANS 5

typedef struct {
  __m256i counts;
  int n;
} PackedChain;

/* −1 in the lane of `bin`, 0 elsewhere. */
ES_AVX2 static inline __m256i
packed_hit (uint32_t bin, __m256i lanes)
{
  return _mm256_cmpeq_epi16 (_mm256_set1_epi16 ((short) bin), lanes);
}

/* The window's cells at x, counted into an empty chain. */
ES_AVX2 static inline void
packed_window (PackedChain *c, const uint32_t *const *left, const uint32_t *const *right, int spans, int x,
               __m256i lanes, uint32_t skip)
{
  __m256i hits = _mm256_setzero_si256 ();

  c->n = 0;
  for (int s = 0; s < spans; s++)
    for (const uint32_t *p = left[s] + x; p < right[s] + x; p++)
      {
        hits = _mm256_add_epi16 (hits, packed_hit (*p, lanes));
        c->n += *p != skip;
      }
  c->counts = _mm256_sub_epi16 (_mm256_setzero_si256 (), hits);
}

/* Moves the window from x to x + 1: two partial sums each of the leaving
 * and the entering hits, so that a step's updates are not one chain of adds. */
ES_AVX2 static inline void
packed_step (PackedChain *c, const uint32_t *const *left, const uint32_t *const *right, int spans, int x, __m256i lanes,
             bool count_n, uint32_t skip)
{
  __m256i out0 = _mm256_setzero_si256 (), out1 = out0, in0 = out0, in1 = out0;
  int s = 0;

  for (; s + 1 < spans; s += 2)
    {
      uint32_t l0 = left[s][x], r0 = right[s][x], l1 = left[s + 1][x], r1 = right[s + 1][x];
      out0 = _mm256_add_epi16 (out0, packed_hit (l0, lanes));
      in0 = _mm256_add_epi16 (in0, packed_hit (r0, lanes));
      out1 = _mm256_add_epi16 (out1, packed_hit (l1, lanes));
      in1 = _mm256_add_epi16 (in1, packed_hit (r1, lanes));
      if (count_n)
        c->n += (int) (r0 != skip) - (int) (l0 != skip) + (int) (r1 != skip) - (int) (l1 != skip);
    }
  if (s < spans)
    {
      uint32_t l0 = left[s][x], r0 = right[s][x];
      out0 = _mm256_add_epi16 (out0, packed_hit (l0, lanes));
      in0 = _mm256_add_epi16 (in0, packed_hit (r0, lanes));
      if (count_n)
        c->n += (int) (r0 != skip) - (int) (l0 != skip);
    }
  /* Hits are −1: leaving cells add them, entering cells subtract them. */
  c->counts = _mm256_add_epi16 (c->counts,
                                _mm256_sub_epi16 (_mm256_add_epi16 (out0, out1), _mm256_add_epi16 (in0, in1)));
}

/* Σ T[c] over the lanes below B (`real`; the others are zeroed, and T[0] =
 * 0): four gathers of the 64-bit terms. */
ES_AVX2 static inline void
packed_write (const PackedChain *c, const General *g, __m256i real, const uint8_t *own_mask, float *dst, int x)
{
  const long long *table = (const long long *) g->table;
  const __m256i counts = _mm256_and_si256 (c->counts, real);
  const __m256i low = _mm256_cvtepu16_epi32 (_mm256_castsi256_si128 (counts));
  const __m256i high = _mm256_cvtepu16_epi32 (_mm256_extracti128_si256 (counts, 1));
  const __m256i sum = _mm256_add_epi64 (
    _mm256_add_epi64 (_mm256_i32gather_epi64 (table, _mm256_castsi256_si128 (low), 8),
                      _mm256_i32gather_epi64 (table, _mm256_extracti128_si256 (low, 1), 8)),
    _mm256_add_epi64 (_mm256_i32gather_epi64 (table, _mm256_castsi256_si128 (high), 8),
                      _mm256_i32gather_epi64 (table, _mm256_extracti128_si256 (high, 1), 8)));
  const __m128i half = _mm_add_epi64 (_mm256_castsi256_si128 (sum), _mm256_extracti128_si256 (sum, 1));
  const uint64_t total = (uint64_t) _mm_cvtsi128_si64 (_mm_add_epi64 (half, _mm_unpackhi_epi64 (half, half)));

  dst[x] = own_mask != NULL && own_mask[x] == 0 ? NAN : finish_value_n (&g->finish[c->n], total);
}

/* general_row for B ≤ 16, on the same row_plan. */
ES_AVX2 static void
packed_row (const General *g, const uint32_t *const *left, const uint32_t *const *right, int spans,
            const uint8_t *own_mask, float *dst)
{
  const __m256i lanes = _mm256_setr_epi16 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m256i real = _mm256_cmpgt_epi16 (_mm256_set1_epi16 ((short) g->bins), lanes);
  int w = g->in->width;
  const RowPlan plan = row_plan (g);
  const bool two = plan.two;
  const int half = plan.half, steps = plan.steps, plain0 = plan.plain0, plain1 = plan.plain1;
  PackedChain a = { 0 }, b = { 0 };

  packed_window (&a, left, right, spans, 0, lanes, SKIP);
  if (two)
    packed_window (&b, left, right, spans, half, lanes, SKIP);
  for (int x = 0;; x++)
    {
      int xb = half + x;

      if (x < half)
        packed_write (&a, g, real, own_mask, dst, x);
      if (two)
        packed_write (&b, g, real, own_mask, dst, xb);
      if (x + 1 == steps)
        break;
      if (x + 1 < half)
        packed_step (&a, left, right, spans, x, lanes, x < plain0 || x >= plain1, SKIP);
      if (two && xb + 1 < w)
        packed_step (&b, left, right, spans, xb, lanes, xb < plain0 || xb >= plain1, SKIP);
    }
}
#endif

/* The job of general_band, and the layout of a thread's scratch: two
 * histograms, the ring of mapped rows, and the row pointers of the window. */
typedef struct {
  const General *g;
  const EsImage *out;
  int ring_rows;
  size_t padded; /* a mapped row with its border cells */
  size_t counts_bytes, ring_bytes;
} GeneralRun;

static void
general_start_thread (const void *context, uint8_t *scratch)
{
  const GeneralRun *c = context;
  const General *g = c->g; /* SKIP names g */
  uint16_t *counts[2] = { (uint16_t *) scratch, (uint16_t *) (scratch + c->counts_bytes) };

  memset (scratch, 0, 2 * c->counts_bytes);
  if (g->parked)
    counts[0][SKIP] = counts[1][SKIP] = PARK;
}

static void
general_band (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control)
{
  const GeneralRun *c = context;
  const General *g = c->g;
  int hh = g->half_height, ring_rows = c->ring_rows;
  uint16_t *counts[2] = { (uint16_t *) scratch, (uint16_t *) (scratch + c->counts_bytes) };
  uint32_t *ring = (uint32_t *) (scratch + 2 * c->counts_bytes);
  const uint32_t **rows = (const uint32_t **) (scratch + 2 * c->counts_bytes + c->ring_bytes);
  int *row_of = (int *) (rows + ring_rows); /* the virtual row each slot holds */
  const uint32_t **left = rows + 2 * ring_rows, **right = left + g->n_spans;

  for (int i = 0; i < ring_rows; i++)
    row_of[i] = INT32_MIN;
  for (int y = y0; y < y1 && !es_control_cancelled (control); y++)
    {
      int spans = 0;

      for (int v = y - hh; v <= y + hh; v++)
        {
          int slot = ((v % ring_rows) + ring_rows) % ring_rows;
          if (row_of[slot] != v)
            {
              rows[slot] = map_row (g, v, ring + (size_t) slot * c->padded);
              row_of[slot] = v;
            }
        }
      for (int s = 0; s < g->n_spans; s++)
        {
          int v = y + g->spans[s].dy;
          const uint32_t *row = rows[((v % ring_rows) + ring_rows) % ring_rows];

          if (row == NULL)
            continue;
          left[spans] = row + g->half_width + g->spans[s].x0;
          right[spans] = row + g->half_width + g->spans[s].x1 + 1;
          spans++;
        }
#ifdef ES_HAVE_AVX2_PATH
      if (g->packed)
        packed_row (g, left, right, spans, g->mask ? es_image_row (g->mask, y) : NULL, es_image_row (c->out, y));
      else
#endif
        general_row (g, left, right, spans, counts, g->mask ? es_image_row (g->mask, y) : NULL,
                     es_image_row (c->out, y));
      es_control_advance (control, 1);
    }
}

static bool
general_run (const General *g, EsImage *out, EsControl *control, EsError *error)
{
  int ring_rows = 2 * g->half_height + 1;
  GeneralRun run = {
    .g = g,
    .out = out,
    .ring_rows = ring_rows,
    .padded = (size_t) g->in->width + 2 * (size_t) g->half_width,
    .counts_bytes = ((size_t) (g->bins + 1) * sizeof (uint16_t) + 63) / 64 * 64,
  };
  size_t pointer_bytes = (2 * (size_t) ring_rows + 2 * (size_t) g->n_spans) * sizeof (void *);
  EsCpuBands work = {
    .what = "entropy",
    .context = &run,
    .start_thread = general_start_thread,
    .band = general_band,
  };

  run.ring_bytes = ((size_t) ring_rows * run.padded * sizeof (uint32_t) + 63) / 64 * 64;
  work.scratch_bytes = 2 * run.counts_bytes + run.ring_bytes + pointer_bytes;
  return es_cpu_run_bands (&work, g->in->height, control, error);
}

/* ---- squares through the default definition's methods ---------------------------
 * A square of k ≤ 31 over at most 256 bins and no mask is the default
 * definition on another image: the bins themselves as a levels image, padded
 * by k/2 with the border's cells (clip needs none). The fast methods run on
 * it; the result is cropped and, for normalized units, divided per pixel. */

static bool
square_via_levels (const EsJob *job, const General *g, EsImage *out, EsControl *control, EsError *error)
{
  const EsImage *in = g->in;
  int w = in->width, h = in->height, k = job->window, r = k / 2;
  int pad = g->border == ES_BORDER_CLIP ? 0 : r;
  EsImage levels = { 0 }, padded_out = { 0 };
  EsImage *result = pad ? &padded_out : out;
  EsJob plain = ES_JOB_INIT (ES_OP_ENTROPY);
  int threads = omp_get_max_threads ();
  size_t row_bytes = ((size_t) w + 2 * (size_t) g->half_width) * sizeof (uint32_t);
  uint8_t *rows = es_cpu_scratch_alloc (row_bytes, threads, "entropy", error);
  bool ok = false;

  if (rows == NULL || !es_image_alloc (&levels, w + 2 * pad, h + 2 * pad, ES_FORMAT_U8, 8, error)
      || (pad && !es_image_alloc (&padded_out, w + 2 * pad, h + 2 * pad, ES_FORMAT_F32, 0, error)))
    goto out;
  levels.levels = (int) g->bins;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int v = -pad; v < h + pad; v++)
    {
      uint8_t *dst = es_image_row (&levels, v + pad);
      const uint32_t *bins = map_row (g, v, (uint32_t *) (rows + row_bytes * (size_t) omp_get_thread_num ()));

      for (int x = 0; x < w + 2 * pad; x++)
        dst[x] = (uint8_t) bins[g->half_width - pad + x];
    }
  plain.window = k;
  plain.levels = (int) g->bins;
  if (!es_cpu_entropy (&plain, &levels, result, control, error))
    goto out;
  if (pad || g->normalized || g->unit_scale != 1.0)
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++)
      {
        const float *src = (const float *) es_image_row (result, y + pad) + pad;
        float *dst = es_image_row (out, y);
        for (int x = 0; x < w; x++)
          {
            int n = k * k;

            if (g->border == ES_BORDER_CLIP)
              n = ((y + r < h ? y + r : h - 1) - (y - r > 0 ? y - r : 0) + 1)
                  * ((x + r < w ? x + r : w - 1) - (x - r > 0 ? x - r : 0) + 1);
            dst[x] = es_entropy_store (src[x] * g->finish[n].scale, g->finish[n].unit);
          }
      }
  ok = true;
out:
  free (rows);
  es_image_clear (&levels);
  es_image_clear (&padded_out);
  return ok;
}

bool
es_cpu_entropy_general (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  EsBinner binner;
  General g = {
    .in = in,
    .mask = job->definition.mask,
    .border = job->definition.border,
    .normalized = job->definition.normalized,
    .unit_scale = es_entropy_unit_scale (&job->definition),
  };
  size_t samples = (size_t) 1 << in->depth;
  uint64_t previous = 0;
  bool ok = false;

  es_binner_init (&binner, job, in);
  g.bins = binner.bins;
  g.border_bin = es_binner_border_bin (&binner, job);
  es_window_extent (job, &g.half_height, &g.half_width);
  g.n_spans = es_window_spans (job, NULL, 0);
  g.most = es_window_pixels (job);
  g.parked = (uint32_t) g.most < PARK / 2;
  g.lut = malloc (samples * sizeof *g.lut);
  g.spans = malloc ((size_t) g.n_spans * sizeof *g.spans);
  g.delta = calloc (g.parked ? DELTA_PARKED : (size_t) g.most, sizeof *g.delta);
  g.finish = malloc (((size_t) g.most + 1) * sizeof *g.finish);
#ifdef ES_HAVE_AVX2_PATH
  g.packed = g.bins <= PACKED_MAX_BINS && g.n_spans >= PACKED_MIN_SPANS && __builtin_cpu_supports ("avx2");
#endif
  g.table = g.packed ? malloc (((size_t) g.most + 1) * sizeof *g.table) : NULL;
  if (g.lut == NULL || g.spans == NULL || g.delta == NULL || g.finish == NULL || (g.packed && g.table == NULL))
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the entropy tables");
      goto out;
    }
  /* A levels image holds bins already; a corrupt sample beyond them still
   * lands in a bin, never outside the histogram. */
  for (size_t v = 0; v < samples; v++)
    {
      uint32_t bin = es_bin_sample (&binner, (uint32_t) v);
      g.lut[v] = bin < g.bins ? bin : g.bins - 1;
    }
  if (g.border_bin >= g.bins)
    g.border_bin = g.bins - 1;
  es_window_spans (job, g.spans, g.n_spans);
  for (int s = 0; s < g.n_spans; s++)
    {
      g.reach_left = s == 0 || g.spans[s].x0 < g.reach_left ? g.spans[s].x0 : g.reach_left;
      g.reach_right = s == 0 || g.spans[s].x1 > g.reach_right ? g.spans[s].x1 : g.reach_right;
    }
  for (int n = 0; n <= g.most; n++)
    finish_set (&g.finish[n], &g, n);
  for (int c = 1; c <= g.most; c++)
    {
      uint64_t value = (uint64_t) entropy_scaled (c, GENERAL_BITS);
      g.delta[c - 1] = value - previous;
      previous = value;
    }
  if (g.packed)
    for (int c = 0; c <= g.most; c++)
      g.table[c] = (uint64_t) entropy_scaled (c, GENERAL_BITS);
  if (job->definition.shape == ES_SHAPE_SQUARE && job->window <= ES_FAST_WINDOW_MAX && g.bins <= ES_FAST_LEVELS_MAX
      && g.mask == NULL)
    {
      ok = square_via_levels (job, &g, out, control, error);
      goto out;
    }
  ok = general_run (&g, out, control, error);
out:
  free (g.lut);
  free (g.spans);
  free (g.delta);
  free (g.finish);
  free (g.table);
  return ok;
}
