/* SPDX-License-Identifier: MIT */
/* CLAHE on the CPU, as OpenCV's CLAHE_Impl::apply: per-tile clipped histograms to LUTs, then each pixel blended. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "../es-definitions.h"

/* The tiles' geometry, as OpenCV derives it from the image and the grid. */
typedef struct {
  const EsImage *in;
  EsImage *out;
  int bins;              /* 256 for 8-bit input, 65536 for 16-bit */
  int tile_w, tile_h;    /* of the padded image */
  int columns, rows;     /* the grid */
  int clip;              /* a bin's largest count; 0: no clipping */
  float lut_scale;       /* (bins − 1) / a tile's pixels */
  const int *source_col; /* padded column → image column (reflect-101) */
  void *luts;            /* columns × rows LUTs of `bins` samples, row-major by tile */
} Clahe;

/* One tile's histogram, clipped and redistributed, summed into its LUT. */
static void
tile_lut (const Clahe *c, int tx, int ty, int *hist)
{
  const EsImage *in = c->in;
  int bins = c->bins, x0 = tx * c->tile_w, x1 = x0 + c->tile_w;
  /* Columns x0..x_inside−1 lie in the image, the rest in its padding. */
  int x_inside = x1 < in->width ? x1 : in->width > x0 ? in->width : x0;
  int clip = c->clip, sum = 0;

  memset (hist, 0, (size_t) bins * sizeof *hist);
  for (int y = ty * c->tile_h; y < (ty + 1) * c->tile_h; y++)
    {
      int sy = es_border_index (y, in->height, ES_BORDER_MIRROR);

      if (in->format == ES_FORMAT_U8)
        {
          const uint8_t *p = es_image_row (in, sy);
          for (int x = x0; x < x_inside; x++)
            hist[p[x]]++;
          for (int x = x_inside; x < x1; x++)
            hist[p[c->source_col[x]]]++;
        }
      else
        {
          const uint16_t *p = es_image_row (in, sy);
          for (int x = x0; x < x_inside; x++)
            hist[p[x]]++;
          for (int x = x_inside; x < x1; x++)
            hist[p[c->source_col[x]]]++;
        }
    }
  if (clip > 0)
    {
      int clipped = 0, batch, residual;

      for (int i = 0; i < bins; i++)
        if (hist[i] > clip)
          {
            clipped += hist[i] - clip;
            hist[i] = clip;
          }
      /* Every bin gets an equal share, then the remainder goes one count
       * each to bins a stride apart from bin 0. */
      batch = clipped / bins;
      residual = clipped - batch * bins;
      for (int i = 0; i < bins; i++)
        hist[i] += batch;
      if (residual != 0)
        {
          int step = bins / residual > 1 ? bins / residual : 1;
          for (int i = 0; i < bins && residual > 0; i += step, residual--)
            hist[i]++;
        }
    }
  if (bins == 256)
    {
      uint8_t *lut = (uint8_t *) c->luts + ((size_t) ty * c->columns + tx) * 256;
      for (int i = 0; i < 256; i++)
        {
          sum += hist[i];
          lut[i] = es_saturate_u8 ((float) sum * c->lut_scale);
        }
    }
  else
    {
      uint16_t *lut = (uint16_t *) c->luts + ((size_t) ty * c->columns + tx) * 65536;
      for (int i = 0; i < 65536; i++)
        {
          sum += hist[i];
          lut[i] = es_saturate_u16 ((float) sum * c->lut_scale);
        }
    }
}

/* Where a column falls between tile centres: the two tiles' LUT offsets and
 * the weight of the right one, in OpenCV's float arithmetic. */
typedef struct {
  int left, right; /* tile columns */
  float weight, weight_left;
} Blend;

static void
blend_for (int x, int tile_side, int tiles, Blend *b)
{
  float inverse = 1.0f / (float) tile_side;
  float t = (float) x * inverse - 0.5f;
  int left = (int) floorf (t);

  b->weight = t - (float) left;
  b->weight_left = 1.0f - b->weight;
  b->right = left + 1 < tiles - 1 ? left + 1 : tiles - 1;
  b->left = left > 0 ? left : 0;
}

ES_HOT static void
blend_row_u8 (const uint8_t *src, uint8_t *dst, int w, const uint8_t *top, const uint8_t *bottom, const Blend *cols,
              float ya, float ya1)
{
  for (int x = 0; x < w; x++)
    {
      const Blend *b = &cols[x];
      int v = src[x];
      int l = b->left * 256 + v, r = b->right * 256 + v;
      float res = ((float) top[l] * b->weight_left + (float) top[r] * b->weight) * ya1
                  + ((float) bottom[l] * b->weight_left + (float) bottom[r] * b->weight) * ya;
      dst[x] = es_saturate_u8 (res);
    }
}

ES_HOT static void
blend_row_u16 (const uint16_t *src, uint16_t *dst, int w, const uint16_t *top, const uint16_t *bottom,
               const Blend *cols, float ya, float ya1)
{
  for (int x = 0; x < w; x++)
    {
      const Blend *b = &cols[x];
      int v = src[x];
      size_t l = (size_t) b->left * 65536 + (size_t) v, r = (size_t) b->right * 65536 + (size_t) v;
      float res = ((float) top[l] * b->weight_left + (float) top[r] * b->weight) * ya1
                  + ((float) bottom[l] * b->weight_left + (float) bottom[r] * b->weight) * ya;
      dst[x] = es_saturate_u16 (res);
    }
}

bool
es_cpu_clahe (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  int w = in->width, h = in->height, tiles;
  EsClaheGeometry g;
  Clahe c = { .in = in, .out = out };
  int *source_col = NULL, *hists = NULL;
  Blend *cols = NULL;
  size_t sample;
  bool ok = false;

  assert (out->format == in->format && out->width == w && out->height == h);
  es_clahe_geometry (job, w, h, &g);
  c.bins = in->format == ES_FORMAT_U8 ? 256 : 65536;
  c.tile_w = g.tile_width, c.tile_h = g.tile_height;
  c.columns = job->tile_columns, c.rows = job->tile_rows;
  c.clip = es_clahe_clip_count (job->clip, g.tile_width * g.tile_height, c.bins);
  c.lut_scale = (float) (c.bins - 1) / (float) (g.tile_width * g.tile_height);
  tiles = c.columns * c.rows;
  sample = in->format == ES_FORMAT_U8 ? 1 : 2;
  es_control_begin (control, (long long) tiles + h);

  source_col = malloc ((size_t) g.padded_width * sizeof *source_col);
  cols = malloc ((size_t) w * sizeof *cols);
  c.luts = malloc ((size_t) tiles * (size_t) c.bins * sample);
  hists = malloc ((size_t) omp_get_max_threads () * (size_t) c.bins * sizeof *hists);
  if (source_col == NULL || cols == NULL || c.luts == NULL || hists == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate CLAHE's %d LUTs of %d bins", tiles, c.bins);
      goto done;
    }
  for (int x = 0; x < g.padded_width; x++)
    source_col[x] = es_border_index (x, w, ES_BORDER_MIRROR);
  c.source_col = source_col;
  for (int x = 0; x < w; x++)
    blend_for (x, g.tile_width, c.columns, &cols[x]);

#pragma omp parallel
  {
    int *hist = hists + (size_t) omp_get_thread_num () * (size_t) c.bins;

#pragma omp for schedule(dynamic)
    for (int t = 0; t < tiles; t++)
      if (!es_control_cancelled (control))
        {
          tile_lut (&c, t % c.columns, t / c.columns, hist);
          es_control_advance (control, 1);
        }
  }
  if (es_control_cancelled (control))
    {
      ok = es_cpu_finish (control, error);
      goto done;
    }

#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++)
    if (!es_control_cancelled (control))
      {
        Blend b;

        blend_for (y, g.tile_height, c.rows, &b);
        if (in->format == ES_FORMAT_U8)
          {
            const uint8_t *luts = c.luts;
            blend_row_u8 (es_image_row (in, y), es_image_row (out, y), w, luts + (size_t) b.left * c.columns * 256,
                          luts + (size_t) b.right * c.columns * 256, cols, b.weight, b.weight_left);
          }
        else
          {
            const uint16_t *luts = c.luts;
            blend_row_u16 (es_image_row (in, y), es_image_row (out, y), w, luts + (size_t) b.left * c.columns * 65536,
                           luts + (size_t) b.right * c.columns * 65536, cols, b.weight, b.weight_left);
          }
        es_control_advance (control, 1);
      }
  ok = es_cpu_finish (control, error);

done:
  free (source_col);
  free (cols);
  free (c.luts);
  free (hists);
  return ok;
}
