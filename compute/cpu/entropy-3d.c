/* SPDX-License-Identifier: MIT */
/* Entropy over 3-D windows (box, ball, 3-D footprint) on the CPU: a histogram slid along x, two updates a span. */
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
 * border or mask test at all. */

/* Fixed-point scale of c·ln c: 2^32. c ≤ 63³ makes c·ln c < 2^22, so sums
 * stay below 2^54. */
#define FIXED_ONE 4294967296.0
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

/* The entropy of a window whose sum over every bin is `sum`, with `skipped`
 * cells in SKIP, as the output value. */
static inline float
window_value (const Volume *v, int64_t sum, uint32_t skipped)
{
  int n = v->cells - (int) skipped;
  double h;

  if (n <= 0)
    return NAN;
  /* es_entropy_value, with its logarithms from the tables. */
  h = v->ln_n[n] - (double) (sum - v->c_ln_c[skipped]) * v->inv_n[n];
  if (h < v->zero_below[n])
    return 0.0f;
  return v->job->definition.normalized ? (float) (h * v->inv_ln_most[n]) : es_entropy_store (h, v->unit_scale);
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
  return true;
}

static void
volume_clear (Volume *v)
{
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

/* Bins the band's source rows, then computes its output rows. */
static void
run_band (const Volume *v, Band *band, uint32_t *hists, void *span_rows, EsControl *control)
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
          if (v->narrow)
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
  void *rows = NULL, *virtual_row = NULL, *span_rows = NULL;
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
  if (rows == NULL || virtual_row == NULL || hists == NULL || span_rows == NULL)
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
        run_band (&v, &band, hists, span_rows, control);
      }
  ok = es_cpu_finish (control, error);

done:
  free (rows);
  free (virtual_row);
  free (hists);
  free (span_rows);
  volume_clear (&v);
  return ok;
}
