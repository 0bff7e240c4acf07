/* SPDX-License-Identifier: MIT */
/* Entropy over 3-D windows (box, ball, 3-D footprint) on the CPU: a histogram slid along x, two updates a span,
 * or up to 16 bins the counts packed in a vector, moved by groups of spans. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../es-definitions.h"

/* Why this method: a window is a list of x spans, one per (dz, dy) row of
 * it (es_window_spans_3d). Sliding the histogram one voxel along x drops
 * the leaving cell and adds the entering cell of each span, so a voxel
 * costs two updates a span: its cost grows with the window's cross-section
 * (D·H spans for a box, about π r² for a ball), not its volume. The sum
 * Σ c·ln c moves with each update by a table difference in 32.32 fixed
 * point, exact integer arithmetic whose result does not depend on the
 * order of the updates (no drift along a row, the same bits on any thread
 * count).
 *
 * Borders, masks and binning are folded into a band of binned rows: each
 * source row is padded in x by the window's half width with what its
 * border mode puts there, and a cell that does not count (outside the
 * volume with clip, or masked out) gets the extra bin SKIP, whose count is
 * left out of n and of the sum. Rows and planes outside the volume map
 * through the border rule to a source row, or (clip, constant) to one
 * virtual row of SKIP or of the constant's bin. The inner loop then has no
 * border or mask test at all.
 *
 * Up to 16 bins and 255 cells (the default 16 levels), packed_row keeps
 * the counts in one vector instead, and reads the same sum from them. */

/* Fixed-point scale of c·ln c: 2^32. c ≤ 63³ makes c·ln c < 2^22, so sums
 * stay below 2^54. */
#define FIXED_ONE 4294967296.0
/* Bins a packed window's counts take, one byte each (see packed_row). */
#define PACKED_BINS 16
/* Binned cells a band holds at most (2 or 4 bytes each): 32 or 64 MiB. */
#define BAND_CELLS ((size_t) 16 << 20)

typedef struct {
  const EsJob *job;
  const EsImage *in;
  EsImage *out;
  EsBinner binner;
  bool narrow;      /* binned cells as uint16_t: SKIP < 2^16 */
  uint32_t *lut;    /* the bin of every sample value of the format */
  uint32_t skip;    /* the bin of cells that count nowhere: binner.bins */
  uint32_t outside; /* what clip or constant puts outside the volume */
  int hd, hh, hw;   /* half depth, height and width of the window */
  int padded;       /* w + 2·hw */
  int n_spans;
  EsSpan3 *spans;
  int cells;       /* cells of the window */
  int64_t *c_ln_c; /* round(c·ln c · 2^32), c = 0..cells */
  int64_t *delta;  /* c_ln_c[c + 1] − c_ln_c[c] */
  /* Per count n = 0..cells, so that a voxel's value takes no logarithm:
   * ln n, 1 / (n · 2^32), es_entropy_zero_below (n), and the normalizing
   * factor 1 / ln(min(B, n)) (0 where that minimum is 1). */
  double *ln_n, *inv_n, *zero_below, *inv_ln_most;
  double unit_scale; /* es_entropy_unit_scale, for values that are not normalized */
  /* Packed counts (see packed_row): up to PACKED_BINS bins and 255 cells,
   * the spans sorted into groups of equal [x0, x1], group g being spans
   * group_start[g] … group_start[g + 1] − 1 and its ring the slots
   * ring_at[g] … ring_at[g + 1] − 1 (as many as its spans' cells). */
  bool packed;
  int n_groups;
  int *group_start, *ring_at;
  /* The one-hot counts of each bin, zero for SKIP (packed only). */
  uint8_t one[PACKED_BINS + 1][PACKED_BINS] __attribute__ ((aligned (PACKED_BINS)));
} Volume;

/* One band: output planes [z0, z1) and rows [y0, y1), with the source
 * planes [s0, s1] and rows [r0, r1] that their windows map to, binned and
 * padded in `rows`; `virtual_row` stands for rows outside the volume. */
typedef struct {
  int z0, z1, y0, y1;
  int s0, s1, r0, r1;
  void *rows; /* uint16_t or uint32_t cells (Volume.narrow) */
  const void *virtual_row;
} Band;

/* The source index range that indices [i0, i1) map to, or an empty one. */
static void
mapped_range (int i0, int i1, int n, EsBorder border, int *lo, int *hi)
{
  *lo = n, *hi = -1;
  for (int i = i0; i < i1; i++)
    {
      int m = es_border_index (i, n, border);

      if (m >= 0)
        {
          *lo = m < *lo ? m : *lo;
          *hi = m > *hi ? m : *hi;
        }
    }
}

/* The entropy of a window of n counted cells whose sum over their bins is
 * `counted_sum`, as the output value. */
static inline float
counted_value (const Volume *v, int64_t counted_sum, int n)
{
  double h;

  if (n <= 0)
    return NAN;
  /* es_entropy_value, with its logarithms from the tables. */
  h = v->ln_n[n] - (double) counted_sum * v->inv_n[n];
  if (h < v->zero_below[n])
    return 0.0f;
  return v->job->definition.normalized ? (float) (h * v->inv_ln_most[n]) : es_entropy_store (h, v->unit_scale);
}

/* The same, of a window whose sum over every bin is `sum`, with `skipped`
 * cells in SKIP. */
static inline float
window_value (const Volume *v, int64_t sum, uint32_t skipped)
{
  return counted_value (v, sum - v->c_ln_c[skipped], v->cells - (int) skipped);
}

/* Rows at least this wide are computed as two chains, their halves. */
#define TWO_CHAINS_MIN_WIDTH 32

/* One sliding histogram: its counts (bins + 1, the last SKIP's) and Σ T[c]. */
typedef struct {
  uint32_t *hist;
  int64_t sum;
} Chain;

static inline void
chain_write (const Chain *c, const Volume *v, const uint8_t *mask_row, float *dst, int x)
{
  dst[x] = mask_row != NULL && mask_row[x] == 0 ? NAN : window_value (v, c->sum, c->hist[v->skip]);
}

#define CELL uint16_t
#define CELLS(name) name##_narrow
#include "entropy-3d-cells.h"
#undef CELL
#undef CELLS
#define CELL uint32_t
#define CELLS(name) name##_wide
#include "entropy-3d-cells.h"
#undef CELL
#undef CELLS

/* ---- packed counts ------------------------------------------------------------------
 * Up to 16 bins and 255 cells, a window's counts are the 16 bytes of one
 * vector, and a cell's count a one-hot vector from a table (zero for
 * SKIP). The spans with the same [x0, x1] form a group, whose cells enter
 * together at x1 and leave together at x0 − 1: what enters a group at x
 * leaves it L = x1 − x0 + 1 steps later. So each group keeps its last L
 * entering sums in a ring, and a step loads only the entering cells, one a
 * span, and moves the counts by P_in − P_out: no update goes through
 * memory. Σ c·ln c is then read once a voxel from the 16 counts, the same
 * integer as the slid sum, so the bits are the slide's. */

typedef uint8_t Packed __attribute__ ((vector_size (PACKED_BINS)));

static inline float
packed_value (const Volume *v, Packed counts, const uint8_t *mask_row, int x)
{
  typedef uint64_t Words __attribute__ ((vector_size (PACKED_BINS)));
  const Words words = (Words) counts;
  const int64_t *c_ln_c = v->c_ln_c;
  int64_t sum = 0;
  int n;

  if (mask_row != NULL && mask_row[x] == 0)
    return NAN;
  /* Every lane: those of no bin stay 0, and c_ln_c[0] is 0. */
  for (int b = 0; b < 8; b++)
    sum += c_ln_c[(words[0] >> (8 * b)) & 0xff] + c_ln_c[(words[1] >> (8 * b)) & 0xff];
  /* The bytes' sum (at most 255, so no byte of it carries) lands in the
   * top byte of each product. */
  n = (int) ((words[0] * 0x0101010101010101ull) >> 56) + (int) ((words[1] * 0x0101010101010101ull) >> 56);
  return counted_value (v, sum, n);
}

/* Output row y of plane z with packed counts: `first` and `last` hold a
 * pointer a span, `ring` the groups' rings (Volume.ring_at) and `slot`
 * each group's next slot. */
static void
packed_row (const Volume *v, const Band *band, int z, int y, Packed *ring, int *slot, const uint16_t **first,
            const uint16_t **last)
{
  const EsImage *mask = v->job->definition.mask;
  const uint8_t *mask_row = mask != NULL ? es_image_voxel_row (mask, z, y) : NULL;
  const Packed *one = (const Packed *) v->one;
  float *dst = es_image_voxel_row (v->out, z, y);
  const int w = v->in->width;
  Packed counts = { 0 };

  span_rows_narrow (v, band, z, y, first, last);
  /* The first window: a group's column j (the entering sum of step
   * j − L + 1) goes to slot (j + 1) mod L, the step that drops it. */
  for (int g = 0; g < v->n_groups; g++)
    {
      const int length = v->ring_at[g + 1] - v->ring_at[g];

      for (int j = 0; j < length; j++)
        {
          Packed p = { 0 };

          for (int i = v->group_start[g]; i < v->group_start[g + 1]; i++)
            p += one[first[i][j]];
          counts += p;
          ring[v->ring_at[g] + (j + 1) % length] = p;
        }
      slot[g] = v->ring_at[g] + (length > 1 ? 1 : 0);
    }
  dst[0] = packed_value (v, counts, mask_row, 0);
  for (int x = 1; x < w; x++)
    {
      for (int g = 0; g < v->n_groups; g++)
        {
          Packed p = { 0 };

          for (int i = v->group_start[g]; i < v->group_start[g + 1]; i++)
            p += one[last[i][x]];
          /* Exact whatever the order: the result is the window's counts,
           * so no byte wraps in the sum as a whole. */
          counts += p - ring[slot[g]];
          ring[slot[g]] = p;
          slot[g] = slot[g] + 1 == v->ring_at[g + 1] ? v->ring_at[g] : slot[g] + 1;
        }
      dst[x] = packed_value (v, counts, mask_row, x);
    }
}

/* Planes and rows a band computes: as many planes as fit BAND_CELLS with
 * their halo, and of a plane too large for that, as many rows. */
static void
band_shape (const Volume *v, int *band_planes, int *band_rows)
{
  const EsImage *in = v->in;
  size_t row_cells = (size_t) v->padded;
  size_t plane_cells = row_cells * (size_t) (in->height + 2 * v->hh);
  size_t fit = BAND_CELLS / plane_cells;

  if (fit > (size_t) (2 * v->hd + 1))
    {
      size_t planes = fit - (size_t) (2 * v->hd);
      *band_planes = planes < (size_t) es_image_planes (in) ? (int) planes : es_image_planes (in);
      *band_rows = in->height;
      return;
    }
  *band_planes = 1;
  fit = BAND_CELLS / (row_cells * (size_t) (2 * v->hd + 1));
  *band_rows = fit > (size_t) (2 * v->hh + 1) ? (int) (fit - (size_t) (2 * v->hh)) : 1;
  if (*band_rows > in->height)
    *band_rows = in->height;
}

static int
span_order (const void *a, const void *b)
{
  const EsSpan3 *s = a, *t = b;

  return s->x0 != t->x0 ? (s->x0 > t->x0) - (s->x0 < t->x0) : (s->x1 > t->x1) - (s->x1 < t->x1);
}

/* Sorts the spans into groups of equal [x0, x1] (the sum does not depend
 * on their order) and makes the one-hot table. */
static bool
packed_init (Volume *v, EsError *error)
{
  qsort (v->spans, (size_t) v->n_spans, sizeof *v->spans, span_order);
  v->group_start = malloc (((size_t) v->n_spans + 1) * sizeof *v->group_start);
  v->ring_at = malloc (((size_t) v->n_spans + 1) * sizeof *v->ring_at);
  if (v->group_start == NULL || v->ring_at == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the groups of a %d-span window", v->n_spans);
  v->n_groups = 0;
  v->ring_at[0] = 0;
  for (int i = 0; i < v->n_spans; i++)
    if (i == 0 || span_order (&v->spans[i - 1], &v->spans[i]) != 0)
      {
        v->group_start[v->n_groups] = i;
        v->ring_at[v->n_groups + 1] = v->ring_at[v->n_groups] + v->spans[i].x1 - v->spans[i].x0 + 1;
        v->n_groups++;
      }
  v->group_start[v->n_groups] = v->n_spans;
  memset (v->one, 0, sizeof v->one);
  for (uint32_t b = 0; b < v->binner.bins; b++)
    v->one[b][b] = 1;
  return true;
}

static bool
volume_init (Volume *v, const EsJob *job, const EsImage *in, EsImage *out, EsError *error)
{
  *v = (Volume){ .job = job, .in = in, .out = out };
  es_binner_init (&v->binner, job, in);
  v->skip = v->binner.bins;
  v->narrow = v->skip <= UINT16_MAX;
  v->outside = job->definition.border == ES_BORDER_CONSTANT ? es_binner_border_bin (&v->binner, job) : v->skip;
  es_window_extent_3d (job, &v->hd, &v->hh, &v->hw);
  v->padded = in->width + 2 * v->hw;
  v->n_spans = es_window_spans_3d (job, NULL, 0);
  v->cells = es_window_pixels (job);
  v->unit_scale = es_entropy_unit_scale (&job->definition);
  v->spans = malloc ((size_t) v->n_spans * sizeof *v->spans);
  v->lut = malloc (((size_t) 1 << (8 * es_format_size (in->format))) * sizeof *v->lut);
  v->c_ln_c = malloc ((size_t) (v->cells + 1) * sizeof *v->c_ln_c);
  v->delta = malloc ((size_t) (v->cells + 1) * sizeof *v->delta);
  v->ln_n = malloc ((size_t) (v->cells + 1) * sizeof *v->ln_n);
  v->inv_n = malloc ((size_t) (v->cells + 1) * sizeof *v->inv_n);
  v->zero_below = malloc ((size_t) (v->cells + 1) * sizeof *v->zero_below);
  v->inv_ln_most = malloc ((size_t) (v->cells + 1) * sizeof *v->inv_ln_most);
  if (v->spans == NULL || v->lut == NULL || v->c_ln_c == NULL || v->delta == NULL || v->ln_n == NULL || v->inv_n == NULL
      || v->zero_below == NULL || v->inv_ln_most == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the tables of a %d-cell window", v->cells);
  es_window_spans_3d (job, v->spans, v->n_spans);
  for (uint32_t sample = 0; sample < (1u << (8 * es_format_size (in->format))); sample++)
    v->lut[sample] = es_bin_sample (&v->binner, sample);
  v->c_ln_c[0] = 0;
  v->ln_n[0] = v->inv_n[0] = v->zero_below[0] = v->inv_ln_most[0] = 0.0;
  for (int c = 1; c <= v->cells; c++)
    {
      uint32_t most = v->binner.bins < (uint32_t) c ? v->binner.bins : (uint32_t) c;

      v->c_ln_c[c] = llround ((double) c * log ((double) c) * FIXED_ONE);
      v->ln_n[c] = log ((double) c);
      v->inv_n[c] = 1.0 / ((double) c * FIXED_ONE);
      v->zero_below[c] = es_entropy_zero_below (c);
      v->inv_ln_most[c] = most <= 1 ? 0.0 : 1.0 / log ((double) most);
    }
  for (int c = 0; c < v->cells; c++)
    v->delta[c] = v->c_ln_c[c + 1] - v->c_ln_c[c];
  v->delta[v->cells] = 0;
  v->packed = v->narrow && v->binner.bins <= PACKED_BINS && v->cells <= UINT8_MAX;
  return !v->packed || packed_init (v, error);
}

static void
volume_clear (Volume *v)
{
  free (v->group_start);
  free (v->ring_at);
  free (v->spans);
  free (v->lut);
  free (v->c_ln_c);
  free (v->delta);
  free (v->ln_n);
  free (v->inv_n);
  free (v->zero_below);
  free (v->inv_ln_most);
}

/* Counts between one histogram and the next: bins + 1 rounded up to whole
 * cache lines, so that no two threads write the same line. */
static size_t
hist_stride (const Volume *v)
{
  return ((size_t) v->skip + 1 + 15) / 16 * 16;
}

/* Pointers between one thread's span rows (first and last) and the next's:
 * whole cache lines, for the same reason. */
static size_t
span_rows_stride (const Volume *v)
{
  return (2 * (size_t) v->n_spans + 7) / 8 * 8;
}

/* Bytes between one thread's packed rings and slots and the next's:
 * whole cache lines. */
static size_t
packed_stride (const Volume *v)
{
  if (!v->packed)
    return 0;
  return ((size_t) v->ring_at[v->n_groups] * sizeof (Packed) + (size_t) v->n_groups * sizeof (int) + 63) / 64 * 64;
}

/* Bins the band's source rows, then computes its output rows. */
static void
run_band (const Volume *v, Band *band, uint32_t *hists, void *span_rows, char *rings, EsControl *control)
{
  int source_rows = band->r1 - band->r0 + 1;
  int n_source = (band->s1 - band->s0 + 1) * source_rows;
  int rows = (band->z1 - band->z0) * (band->y1 - band->y0);
  size_t hist_size = hist_stride (v);
  /* No more threads than rows to share out: an idle one would only spin in
   * the team's barrier, which a thin volume's many small bands pay on every
   * band. */
  int most = n_source > rows ? n_source : rows;
  int threads = omp_get_max_threads () < most ? omp_get_max_threads () : most < 1 ? 1 : most;

#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num ();
    uint32_t *const pair[2] = { hists + (size_t) (2 * t) * hist_size, hists + (size_t) (2 * t + 1) * hist_size };
    /* This thread's span pointers, first then last, to cells of the band's width. */
    void *own_rows = (char *) span_rows + (size_t) t * span_rows_stride (v) * sizeof (void *);
    const uint16_t **first_narrow = own_rows, **last_narrow = first_narrow + v->n_spans;
    const uint32_t **first_wide = own_rows, **last_wide = first_wide + v->n_spans;
    Packed *ring = v->packed ? (Packed *) (rings + (size_t) t * packed_stride (v)) : NULL;
    int *slot = v->packed ? (int *) (ring + v->ring_at[v->n_groups]) : NULL;

#pragma omp for schedule(static)
    for (int i = 0; i < n_source; i++)
      {
        int z = band->s0 + i / source_rows, y = band->r0 + i % source_rows;
        if (v->narrow)
          bin_row_narrow (v, z, y, band_row_narrow (band, v, z, y));
        else
          bin_row_wide (v, z, y, band_row_wide (band, v, z, y));
      }
#pragma omp for schedule(dynamic, 4)
    for (int i = 0; i < rows; i++)
      if (!es_control_cancelled (control))
        {
          int z = band->z0 + i / (band->y1 - band->y0), y = band->y0 + i % (band->y1 - band->y0);
          if (v->packed)
            packed_row (v, band, z, y, ring, slot, first_narrow, last_narrow);
          else if (v->narrow)
            entropy_row_narrow (v, band, z, y, pair, first_narrow, last_narrow);
          else
            entropy_row_wide (v, band, z, y, pair, first_wide, last_wide);
          es_control_advance (control, 1);
        }
  }
}

bool
es_cpu_entropy_3d (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  Volume v;
  int planes = es_image_planes (in), band_planes, band_rows, threads = omp_get_max_threads ();
  EsBorder border = job->definition.border;
  void *rows = NULL, *virtual_row = NULL, *span_rows = NULL, *rings = NULL;
  uint32_t *hists = NULL;
  size_t cell_size;
  bool ok = false;

  assert (out->format == ES_FORMAT_F32 && out->width == in->width && out->height == in->height
          && es_image_planes (out) == planes);
  if (!volume_init (&v, job, in, out, error))
    goto done;
  band_shape (&v, &band_planes, &band_rows);
  cell_size = v.narrow ? sizeof (uint16_t) : sizeof (uint32_t);
  rows = malloc ((size_t) (band_planes + 2 * v.hd) * (size_t) (band_rows + 2 * v.hh) * (size_t) v.padded * cell_size);
  virtual_row = malloc ((size_t) v.padded * cell_size);
  hists = aligned_alloc (64, (size_t) threads * 2 * hist_stride (&v) * sizeof *hists);
  span_rows = aligned_alloc (64, (size_t) threads * span_rows_stride (&v) * sizeof (void *));
  rings = v.packed ? aligned_alloc (64, (size_t) threads * packed_stride (&v)) : NULL;
  if (rows == NULL || virtual_row == NULL || hists == NULL || span_rows == NULL || (v.packed && rings == NULL))
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the working memory of a %d×%d×%d band", in->width,
                    band_rows, band_planes);
      goto done;
    }
  memset (hists, 0, (size_t) threads * 2 * hist_stride (&v) * sizeof *hists);
  for (int p = 0; p < v.padded; p++)
    if (v.narrow)
      ((uint16_t *) virtual_row)[p] = (uint16_t) v.outside;
    else
      ((uint32_t *) virtual_row)[p] = v.outside;

  es_control_begin (control, (long long) planes * in->height);
  for (int z0 = 0; z0 < planes && !es_control_cancelled (control); z0 += band_planes)
    for (int y0 = 0; y0 < in->height && !es_control_cancelled (control); y0 += band_rows)
      {
        Band band = { .z0 = z0, .y0 = y0, .rows = rows, .virtual_row = virtual_row };

        band.z1 = z0 + band_planes < planes ? z0 + band_planes : planes;
        band.y1 = y0 + band_rows < in->height ? y0 + band_rows : in->height;
        mapped_range (band.z0 - v.hd, band.z1 + v.hd, planes, border, &band.s0, &band.s1);
        mapped_range (band.y0 - v.hh, band.y1 + v.hh, in->height, border, &band.r0, &band.r1);
        run_band (&v, &band, hists, span_rows, rings, control);
      }
  ok = es_cpu_finish (control, error);

done:
  free (rows);
  free (virtual_row);
  free (hists);
  free (span_rows);
  free (rings);
  volume_clear (&v);
  return ok;
}
