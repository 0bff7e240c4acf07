/* SPDX-License-Identifier: MIT */
/* CLAHE's presets on the CPU: scikit-image's equalize_adapthist and MATLAB's adapthisteq (DESIGN.md §1). */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../es-definitions.h"

/* skimage's NR_OF_GRAY: the input is rescaled to 0..2^14 − 1 first. */
#define SKIMAGE_GRAYS 16384

static uint32_t
sample_at (const EsImage *in, int x, int y)
{
  const void *row = es_image_row (in, y);

  return in->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x] : ((const uint16_t *) row)[x];
}

/* Two rows of tile LUTs at a time: a block of pixels between tile centres
 * reads the tile row above it and the one below, so memory stays at two
 * rows of the grid however many tiles a small kernel makes. */
typedef struct {
  void *rows[2];
  int index[2]; /* the tile row each slot holds; -1: none */
} LutRing;

static bool
ring_alloc (LutRing *ring, size_t row_bytes, EsError *error)
{
  ring->rows[0] = malloc (row_bytes);
  ring->rows[1] = malloc (row_bytes);
  ring->index[0] = ring->index[1] = -1;
  if (ring->rows[0] == NULL || ring->rows[1] == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory for CLAHE's tile maps (%zu bytes)", 2 * row_bytes);
  return true;
}

static void
ring_free (LutRing *ring)
{
  free (ring->rows[0]);
  free (ring->rows[1]);
}

/* ---- scikit-image ------------------------------------------------------------- */

typedef struct {
  const EsImage *in;
  int kh, kw;           /* kernel_size */
  int tiles_y, tiles_x; /* ceil(side / kernel) */
  int bins, bin_size;   /* nbins; 1 + 2^14 / nbins */
  int64_t clip;         /* clim */
  double lo, span;      /* the input's min and max − min (0: constant) */
  uint16_t *bin_of;     /* a sample's bin, by sample value */
} Skimage;

/* rescale_intensity (image, out_range = (0, 2^14 − 1)), rounded half to
 * even: (v − lo) / (hi − lo) · 16383 in double. A constant image is
 * clipped to the range instead (img_as_uint has made 8-bit samples v · 257). */
static int
skimage_gray (const Skimage *s, uint32_t v)
{
  if (s->span == 0)
    {
      double u = s->in->format == ES_FORMAT_U8 ? v * 257.0 : (double) v;
      return (int) (u < SKIMAGE_GRAYS - 1 ? u : SKIMAGE_GRAYS - 1);
    }
  return (int) nearbyint (((double) v - s->lo) / s->span * (double) (SKIMAGE_GRAYS - 1));
}

/* clip_histogram of skimage 0.19, step for step: its mid bins are those
 * between upper and the limit *after* the low bins got their increment, and
 * a pass of the redistribution adds to every bin of its slice at once, so
 * the excess may end below zero. */
static void
skimage_clip (int64_t *hist, int bins, int64_t clip)
{
  int64_t excess = 0, increment, upper;
  int under;

  for (int i = 0; i < bins; i++)
    if (hist[i] > clip)
      {
        excess += hist[i] - clip;
        hist[i] = clip;
      }
  increment = excess / bins;
  upper = clip - increment;
  for (int i = 0; i < bins; i++)
    if (hist[i] < upper)
      {
        hist[i] += increment;
        excess -= increment;
      }
  for (int i = 0; i < bins; i++)
    if (hist[i] >= upper && hist[i] < clip)
      {
        excess -= clip - hist[i];
        hist[i] = clip;
      }
  under = 0;
  for (int i = 0; i < bins; i++)
    under += hist[i] < clip;
  while (excess > 0)
    {
      int64_t before = excess;

      /* No bin below the limit: no pass can add anything, which skimage
       * finds out after a pass over every start. */
      if (under == 0)
        break;
      for (int start = 0; start < bins && excess > 0; start++)
        {
          int64_t step = under / excess > 1 ? under / excess : 1, added = 0;

          for (int64_t i = start; i < bins; i += step)
            if (hist[i] < clip)
              {
                under -= ++hist[i] == clip;
                added++;
              }
          excess -= added;
        }
      if (excess == before)
        break;
    }
}

/* One tile's map: the histogram of its kernel_size pixels (reflected past
 * the image), clipped, summed and scaled to 0..16383 (map_histogram). */
static void
skimage_tile_map (const Skimage *s, int ty, int tx, int64_t *hist, uint16_t *map)
{
  const EsImage *in = s->in;
  int64_t pixels = (int64_t) s->kh * s->kw, sum = 0;
  double scale = (double) (SKIMAGE_GRAYS - 1) / (double) pixels;

  memset (hist, 0, (size_t) s->bins * sizeof *hist);
  for (int y = ty * s->kh; y < (ty + 1) * s->kh; y++)
    {
      int sy = es_border_index (y, in->height, ES_BORDER_MIRROR);
      for (int x = tx * s->kw; x < (tx + 1) * s->kw; x++)
        hist[s->bin_of[sample_at (in, es_border_index (x, in->width, ES_BORDER_MIRROR), sy)]]++;
    }
  skimage_clip (hist, s->bins, s->clip);
  for (int b = 0; b < s->bins; b++)
    {
      double mapped;

      sum += hist[b];
      mapped = (double) sum * scale;
      map[b] = (uint16_t) (mapped < SKIMAGE_GRAYS - 1 ? mapped : SKIMAGE_GRAYS - 1);
    }
}

static void
skimage_ensure_row (const Skimage *s, LutRing *ring, int row, int64_t *hists)
{
  int slot = row & 1;

  if (ring->index[slot] == row)
    return;
#pragma omp parallel for schedule(dynamic)
  for (int tx = 0; tx < s->tiles_x; tx++)
    skimage_tile_map (s, row, tx, hists + (size_t) omp_get_thread_num () * (size_t) s->bins,
                      (uint16_t *) ring->rows[slot] + (size_t) tx * (size_t) s->bins);
  ring->index[slot] = row;
}

static int
clamp_tile (int t, int n)
{
  return t < 0 ? 0 : t >= n ? n - 1 : t;
}

/* The blend of one block row: pixels whose padded row lies in block
 * `block` read the maps of tile rows block − 1 and block (edge-extended);
 * the four terms are rounded to float32 and summed in float32 in
 * skimage's order, then truncated to an integer as its astype(uint16). */
static void
skimage_blend_rows (const Skimage *s, const LutRing *ring, int block, int y0, int y1, EsImage *out)
{
  const EsImage *in = s->in;
  int top = clamp_tile (block - 1, s->tiles_y), bottom = clamp_tile (block, s->tiles_y);
  const uint16_t *maps[2] = { (const uint16_t *) ring->rows[top & 1], (const uint16_t *) ring->rows[bottom & 1] };

#pragma omp parallel for schedule(static)
  for (int y = y0; y < y1; y++)
    {
      double fy = (double) ((y + s->kh / 2) % s->kh) / (double) s->kh, weight_y[2] = { 1.0 - fy, fy };
      float *o = es_image_row (out, y);

      for (int x = 0; x < in->width; x++)
        {
          int px = x + s->kw / 2, bx = px / s->kw, bin = s->bin_of[sample_at (in, x, y)];
          double fx = (double) (px % s->kw) / (double) s->kw, weight_x[2] = { 1.0 - fx, fx };
          int columns[2] = { clamp_tile (bx - 1, s->tiles_x), clamp_tile (bx, s->tiles_x) };
          float sum = 0.0f;

          for (int ey = 0; ey < 2; ey++)
            for (int ex = 0; ex < 2; ex++)
              {
                double mapped = maps[ey][(size_t) columns[ex] * (size_t) s->bins + (size_t) bin];
                sum += (float) (mapped * (weight_x[ex] * weight_y[ey]));
              }
          o[x] = (float) (uint16_t) sum;
        }
    }
}

static bool
clahe_skimage (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  Skimage s = { .in = in };
  uint32_t lo, hi;
  LutRing ring;
  int64_t *hists;
  float result_lo = INFINITY, result_hi = -INFINITY;
  bool ok = false;

  assert (out->format == ES_FORMAT_F32);
  s.kh = job->clahe.kernel_height ? job->clahe.kernel_height : in->height / job->tile_rows;
  s.kw = job->clahe.kernel_width ? job->clahe.kernel_width : in->width / job->tile_columns;
  s.kh = s.kh > 0 ? s.kh : 1, s.kw = s.kw > 0 ? s.kw : 1;
  s.tiles_y = (in->height + s.kh - 1) / s.kh, s.tiles_x = (in->width + s.kw - 1) / s.kw;
  s.bins = job->clahe.bins ? job->clahe.bins : ES_CLAHE_BINS_DEFAULT;
  s.bin_size = 1 + SKIMAGE_GRAYS / s.bins;
  /* int(np.clip(clip_limit · prod(kernel_size), 1, None)); 0 clips at the
   * tile's pixel count, which nothing exceeds. */
  if (job->clip > 0)
    {
      double limit = job->clip * (double) ((int64_t) s.kh * s.kw);
      s.clip = (int64_t) (limit > 1 ? limit : 1);
    }
  else
    s.clip = (int64_t) s.kh * s.kw;
  es_image_sample_range (in, &lo, &hi);
  s.lo = lo, s.span = (double) hi - (double) lo;

  hists = malloc ((size_t) omp_get_max_threads () * (size_t) s.bins * sizeof *hists);
  s.bin_of = malloc ((in->format == ES_FORMAT_U8 ? 256 : 65536) * sizeof *s.bin_of);
  if (!ring_alloc (&ring, (size_t) s.tiles_x * (size_t) s.bins * sizeof (uint16_t), error))
    goto done;
  if (hists == NULL || s.bin_of == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory for CLAHE's histograms");
      goto done;
    }
  for (uint32_t v = lo; v <= hi; v++)
    s.bin_of[v] = (uint16_t) (skimage_gray (&s, v) / s.bin_size);
  es_control_begin (control, (long long) s.tiles_y + 2);
  for (int block = 0; block <= s.tiles_y; block++)
    {
      int y0 = block * s.kh - s.kh / 2, y1 = y0 + s.kh;

      y0 = y0 > 0 ? y0 : 0, y1 = y1 < in->height ? y1 : in->height;
      if (y0 >= y1)
        continue;
      if (es_control_cancelled (control))
        break;
      skimage_ensure_row (&s, &ring, clamp_tile (block - 1, s.tiles_y), hists);
      skimage_ensure_row (&s, &ring, clamp_tile (block, s.tiles_y), hists);
      skimage_blend_rows (&s, &ring, block, y0, y1, out);
      es_control_advance (control, 1);
    }
  if (!es_cpu_finish (control, error))
    goto done;
    /* rescale_intensity of the float64 result to 0..1 by its own min and max
   * (a constant result is clipped to 0..1), evaluated in double and rounded
   * to float32 once. */
#pragma omp parallel for reduction(min : result_lo) reduction(max : result_hi)
  for (int y = 0; y < in->height; y++)
    {
      const float *o = (const float *) es_image_row (out, y);
      for (int x = 0; x < in->width; x++)
        {
          result_lo = o[x] < result_lo ? o[x] : result_lo;
          result_hi = o[x] > result_hi ? o[x] : result_hi;
        }
    }
#pragma omp parallel for
  for (int y = 0; y < in->height; y++)
    {
      float *o = es_image_row (out, y);
      for (int x = 0; x < in->width; x++)
        o[x] = result_hi > result_lo ? (float) (((double) o[x] - result_lo) / ((double) result_hi - result_lo))
                                     : (o[x] > 1.0f ? 1.0f : o[x]);
    }
  es_control_advance (control, 2);
  ok = es_cpu_finish (control, error);
done:
  ring_free (&ring);
  free (hists);
  free (s.bin_of);
  return ok;
}

/* ---- MATLAB -------------------------------------------------------------------- */

typedef struct {
  const EsImage *in;
  int rows, columns;     /* NumTiles */
  int th, tw;            /* a tile's sides in the padded image: even */
  int pad_top, pad_left; /* floor(pad / 2) before, the rest after */
  int bins, bin_size;    /* NBins; Zuiderveld's 1 + maxval / NBins */
  int64_t clip;          /* in counts */
  double maxval;         /* 'Range' 'full': 255 or 65535 */
} Matlab;

/* A tile's side: the image's share, one more when the grid does not divide
 * it, one more again to make it even (a tile's centre falls between pixels). */
static int
matlab_tile_side (int side, int tiles)
{
  int t = side % tiles == 0 ? side / tiles : side / tiles + 1;

  return t % 2 == 0 ? t : t + 1;
}

/* Zuiderveld's ClipHistogram as adapthisteq writes it: clip, hand every
 * bin the mean increment (a bin between upper and the limit only what
 * fills it), then one count at a time, a stride apart, from each start. */
static void
matlab_clip (int64_t *hist, int bins, int64_t clip)
{
  int64_t excess = 0, increment, upper;

  for (int i = 0; i < bins; i++)
    excess += hist[i] > clip ? hist[i] - clip : 0;
  increment = excess / bins;
  upper = clip - increment;
  for (int i = 0; i < bins; i++)
    if (hist[i] > clip)
      hist[i] = clip;
    else if (hist[i] > upper)
      {
        excess -= clip - hist[i];
        hist[i] = clip;
      }
    else
      {
        excess -= increment;
        hist[i] += increment;
      }
  for (int start = 0; excess != 0; start = start + 1 < bins ? start + 1 : 0)
    {
      int64_t step = bins / excess > 1 ? bins / excess : 1;

      for (int64_t m = start; m < bins && excess != 0; m += step)
        if (hist[m] < clip)
          {
            hist[m]++;
            excess--;
          }
    }
}

/* 'Distribution' 'uniform': min(cdf · (maxval / pixels), maxval), in double. */
static void
matlab_tile_map (const Matlab *m, int ty, int tx, int64_t *hist, double *map)
{
  const EsImage *in = m->in;
  double scale = m->maxval / (double) ((int64_t) m->th * m->tw);
  int64_t sum = 0;

  memset (hist, 0, (size_t) m->bins * sizeof *hist);
  for (int y = ty * m->th; y < (ty + 1) * m->th; y++)
    {
      int sy = es_border_index (y - m->pad_top, in->height, ES_BORDER_SYMMETRIC);
      for (int x = tx * m->tw; x < (tx + 1) * m->tw; x++)
        hist[sample_at (in, es_border_index (x - m->pad_left, in->width, ES_BORDER_SYMMETRIC), sy) / m->bin_size]++;
    }
  matlab_clip (hist, m->bins, m->clip);
  for (int b = 0; b < m->bins; b++)
    {
      double mapped;

      sum += hist[b];
      mapped = (double) sum * scale;
      map[b] = mapped < m->maxval ? mapped : m->maxval;
    }
}

static void
matlab_ensure_row (const Matlab *m, LutRing *ring, int row, int64_t *hists)
{
  int slot = row & 1;

  if (ring->index[slot] == row)
    return;
#pragma omp parallel for schedule(dynamic)
  for (int tx = 0; tx < m->columns; tx++)
    matlab_tile_map (m, row, tx, hists + (size_t) omp_get_thread_num () * (size_t) m->bins,
                     (double *) ring->rows[slot] + (size_t) tx * (size_t) m->bins);
  ring->index[slot] = row;
}

/* Region r of R + 1 along a side of tiles t: half a tile at each end,
 * whole tiles between, so that region r lies between the centres of tiles
 * r − 1 and r (the end regions see one tile only). */
static void
matlab_region (int r, int tiles, int t, int *start, int *size)
{
  *start = r == 0 ? 0 : t / 2 + (r - 1) * t;
  *size = r == 0 || r == tiles ? t / 2 : t;
}

/* The blend, as adapthisteq's makeClaheImage: integer weights counted from
 * each side of the region, (rev_y·(rev_x·UL + x·UR) + y·(rev_x·BL + x·BR))
 * / (region pixels) in double, rounded half away from zero and saturated
 * into the input's class. */
static void
matlab_blend_region_row (const Matlab *m, const LutRing *ring, int region_y, EsImage *out)
{
  const EsImage *in = m->in;
  int top = clamp_tile (region_y - 1, m->rows), bottom = clamp_tile (region_y, m->rows), ry0, rh;
  const double *upper = ring->rows[top & 1], *lower = ring->rows[bottom & 1];
  int y0, y1;

  matlab_region (region_y, m->rows, m->th, &ry0, &rh);
  y0 = ry0 - m->pad_top, y1 = y0 + rh;
  y0 = y0 > 0 ? y0 : 0, y1 = y1 < in->height ? y1 : in->height;
#pragma omp parallel for schedule(static)
  for (int y = y0; y < y1; y++)
    {
      double row_weight = (double) (y + m->pad_top - ry0), row_reverse = (double) rh - row_weight;
      void *o = es_image_row (out, y);

      for (int x = 0; x < in->width; x++)
        {
          int px = x + m->pad_left, region_x = px < m->tw / 2 ? 0 : (px - m->tw / 2) / m->tw + 1, rx0, rw;
          int left, right;
          size_t bin = sample_at (in, x, y) / (uint32_t) m->bin_size;
          double column_weight, column_reverse, norm, value;

          region_x = region_x < m->columns ? region_x : m->columns;
          matlab_region (region_x, m->columns, m->tw, &rx0, &rw);
          left = clamp_tile (region_x - 1, m->columns), right = clamp_tile (region_x, m->columns);
          column_weight = (double) (px - rx0), column_reverse = (double) rw - column_weight;
          norm = (double) rh * (double) rw;
          value = (row_reverse
                     * (column_reverse * upper[(size_t) left * m->bins + bin]
                        + column_weight * upper[(size_t) right * m->bins + bin])
                   + row_weight
                       * (column_reverse * lower[(size_t) left * m->bins + bin]
                          + column_weight * lower[(size_t) right * m->bins + bin]))
                  / norm;
          value = round (value);
          value = value < 0 ? 0 : value > m->maxval ? m->maxval : value;
          if (in->format == ES_FORMAT_U8)
            ((uint8_t *) o)[x] = (uint8_t) value;
          else
            ((uint16_t *) o)[x] = (uint16_t) value;
        }
    }
}

static bool
clahe_matlab (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  Matlab m = { .in = in, .rows = job->tile_rows, .columns = job->tile_columns };
  int64_t pixels, min_clip, *hists;
  LutRing ring;
  bool ok = false;

  assert (out->format == in->format);
  m.th = matlab_tile_side (in->height, m.rows), m.tw = matlab_tile_side (in->width, m.columns);
  m.pad_top = (m.th * m.rows - in->height) / 2, m.pad_left = (m.tw * m.columns - in->width) / 2;
  m.bins = job->clahe.bins ? job->clahe.bins : ES_CLAHE_BINS_DEFAULT;
  m.maxval = in->format == ES_FORMAT_U8 ? 255.0 : 65535.0;
  m.bin_size = 1 + (int) m.maxval / m.bins;
  /* ClipLimit is a fraction of the span from the smallest limit that can
   * hold a tile's pixels (ceil(pixels / bins)) to the pixels themselves. */
  pixels = (int64_t) m.th * m.tw;
  min_clip = (pixels + m.bins - 1) / m.bins;
  m.clip = min_clip + (int64_t) round (job->clip * (double) (pixels - min_clip));

  hists = malloc ((size_t) omp_get_max_threads () * (size_t) m.bins * sizeof *hists);
  if (!ring_alloc (&ring, (size_t) m.columns * (size_t) m.bins * sizeof (double), error))
    goto done;
  if (hists == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory for CLAHE's histograms");
      goto done;
    }
  es_control_begin (control, (long long) m.rows + 1);
  for (int region_y = 0; region_y <= m.rows; region_y++)
    {
      if (es_control_cancelled (control))
        break;
      matlab_ensure_row (&m, &ring, clamp_tile (region_y - 1, m.rows), hists);
      matlab_ensure_row (&m, &ring, clamp_tile (region_y, m.rows), hists);
      matlab_blend_region_row (&m, &ring, region_y, out);
      es_control_advance (control, 1);
    }
  ok = es_cpu_finish (control, error);
done:
  ring_free (&ring);
  free (hists);
  return ok;
}

bool
es_cpu_clahe_preset (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  return job->clahe.kind == ES_CLAHE_SKIMAGE ? clahe_skimage (job, in, out, control, error)
                                             : clahe_matlab (job, in, out, control, error);
}
