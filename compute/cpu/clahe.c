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

/* Where each column falls between tile centres, as OpenCV's tables: the
 * left and right tiles' LUT offsets and their weights, in its float
 * arithmetic. */
typedef struct {
  int32_t *left, *right; /* tile column × bins */
  float *weight, *weight_left;
} Columns;

/* Where coordinate i falls between the centres of tiles `side` apart. */
static void
blend_at (int i, int side, int tiles, int *first, int *second, float *weight)
{
  float t = (float) i * (1.0f / (float) side) - 0.5f;
  int below = (int) floorf (t);

  *weight = t - (float) below;
  *first = below > 0 ? below : 0;
  *second = below + 1 < tiles - 1 ? below + 1 : tiles - 1;
}

/* One row: (top_l · (1 − xa) + top_r · xa) · (1 − ya) + (bottom_l · (1 − xa)
 * + bottom_r · xa) · ya, each product and sum rounded to float in that
 * order (no FMA), then saturate_cast. */
#define BLEND_PIXEL(top, bottom, x, v)                                                                                 \
  (((float) (top)[cols->left[x] + (v)] * cols->weight_left[x] + (float) (top)[cols->right[x] + (v)] * cols->weight[x]) \
     * ya1                                                                                                             \
   + ((float) (bottom)[cols->left[x] + (v)] * cols->weight_left[x]                                                     \
      + (float) (bottom)[cols->right[x] + (v)] * cols->weight[x])                                                      \
       * ya)

#ifdef ES_HAVE_AVX2_PATH
#include <immintrin.h>

/* Eight pixels at a time: four gathers of 32 bits whose low byte is the
 * LUT's (the LUTs are allocated 4 bytes long), then the same float steps
 * as BLEND_PIXEL, lane by lane; cvtps rounds half to even as rintf does. */
ES_AVX2 static void
blend_row_u8_avx2 (const uint8_t *src, uint8_t *dst, int w, const uint8_t *top, const uint8_t *bottom,
                   const Columns *cols, float ya, float ya1)
{
  const __m256i low = _mm256_set1_epi32 (0xff);
  const __m256 vya = _mm256_set1_ps (ya), vya1 = _mm256_set1_ps (ya1);
  int x = 0;

  for (; x + 8 <= w; x += 8)
    {
      __m256i v = _mm256_cvtepu8_epi32 (_mm_loadl_epi64 ((const __m128i *) (src + x)));
      __m256i l = _mm256_add_epi32 (_mm256_loadu_si256 ((const __m256i *) (cols->left + x)), v);
      __m256i r = _mm256_add_epi32 (_mm256_loadu_si256 ((const __m256i *) (cols->right + x)), v);
      __m256 xa = _mm256_loadu_ps (cols->weight + x), xa1 = _mm256_loadu_ps (cols->weight_left + x);
      __m256 tl = _mm256_cvtepi32_ps (_mm256_and_si256 (_mm256_i32gather_epi32 ((const int *) top, l, 1), low));
      __m256 tr = _mm256_cvtepi32_ps (_mm256_and_si256 (_mm256_i32gather_epi32 ((const int *) top, r, 1), low));
      __m256 bl = _mm256_cvtepi32_ps (_mm256_and_si256 (_mm256_i32gather_epi32 ((const int *) bottom, l, 1), low));
      __m256 br = _mm256_cvtepi32_ps (_mm256_and_si256 (_mm256_i32gather_epi32 ((const int *) bottom, r, 1), low));
      __m256 upper = _mm256_mul_ps (_mm256_add_ps (_mm256_mul_ps (tl, xa1), _mm256_mul_ps (tr, xa)), vya1);
      __m256 lower = _mm256_mul_ps (_mm256_add_ps (_mm256_mul_ps (bl, xa1), _mm256_mul_ps (br, xa)), vya);
      __m256i n = _mm256_cvtps_epi32 (_mm256_add_ps (upper, lower));
      __m128i words = _mm_packs_epi32 (_mm256_castsi256_si128 (n), _mm256_extracti128_si256 (n, 1));

      _mm_storel_epi64 ((__m128i *) (dst + x), _mm_packus_epi16 (words, words));
    }
  for (; x < w; x++)
    dst[x] = es_saturate_u8 (BLEND_PIXEL (top, bottom, x, src[x]));
}
#endif

static void
blend_row_u8 (const uint8_t *src, uint8_t *dst, int w, const uint8_t *top, const uint8_t *bottom, const Columns *cols,
              float ya, float ya1)
{
  for (int x = 0; x < w; x++)
    dst[x] = es_saturate_u8 (BLEND_PIXEL (top, bottom, x, src[x]));
}

static void
blend_row_u16 (const uint16_t *src, uint16_t *dst, int w, const uint16_t *top, const uint16_t *bottom,
               const Columns *cols, float ya, float ya1)
{
  for (int x = 0; x < w; x++)
    dst[x] = es_saturate_u16 (BLEND_PIXEL (top, bottom, x, src[x]));
}

bool
es_cpu_clahe (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  int w = in->width, h = in->height, tiles;
  EsClaheGeometry g;
  Clahe c = { .in = in, .out = out };
  int *source_col = NULL, *hists = NULL;
  Columns cols = { 0 };
#ifdef ES_HAVE_AVX2_PATH
  bool avx2 = __builtin_cpu_supports ("avx2");
#endif
  size_t sample;
  bool ok = false;

  if (job->clahe.kind != ES_CLAHE_OPENCV)
    return es_cpu_clahe_preset (job, in, out, control, error);
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
  cols.left = malloc ((size_t) w * sizeof *cols.left);
  cols.right = malloc ((size_t) w * sizeof *cols.right);
  cols.weight = malloc ((size_t) w * sizeof *cols.weight);
  cols.weight_left = malloc ((size_t) w * sizeof *cols.weight_left);
  /* 4 bytes more for the AVX2 blend's 32-bit gathers of the last LUT's end. */
  c.luts = malloc ((size_t) tiles * (size_t) c.bins * sample + 4);
  hists = malloc ((size_t) omp_get_max_threads () * (size_t) c.bins * sizeof *hists);
  if (source_col == NULL || cols.left == NULL || cols.right == NULL || cols.weight == NULL || cols.weight_left == NULL
      || c.luts == NULL || hists == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate CLAHE's %d LUTs of %d bins", tiles, c.bins);
      goto done;
    }
  for (int x = 0; x < g.padded_width; x++)
    source_col[x] = es_border_index (x, w, ES_BORDER_MIRROR);
  c.source_col = source_col;
  for (int x = 0; x < w; x++)
    {
      int left, right;

      blend_at (x, g.tile_width, c.columns, &left, &right, &cols.weight[x]);
      cols.weight_left[x] = 1.0f - cols.weight[x];
      cols.left[x] = left * c.bins, cols.right[x] = right * c.bins;
    }

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
        int top, bottom;
        float ya;

        blend_at (y, g.tile_height, c.rows, &top, &bottom, &ya);
        if (in->format == ES_FORMAT_U8)
          {
            const uint8_t *luts = c.luts, *top_luts = luts + (size_t) top * c.columns * 256;
            const uint8_t *bottom_luts = luts + (size_t) bottom * c.columns * 256;
#ifdef ES_HAVE_AVX2_PATH
            if (avx2)
              blend_row_u8_avx2 (es_image_row (in, y), es_image_row (out, y), w, top_luts, bottom_luts, &cols, ya,
                                 1.0f - ya);
            else
#endif
              blend_row_u8 (es_image_row (in, y), es_image_row (out, y), w, top_luts, bottom_luts, &cols, ya,
                            1.0f - ya);
          }
        else
          {
            const uint16_t *luts = c.luts;
            blend_row_u16 (es_image_row (in, y), es_image_row (out, y), w, luts + (size_t) top * c.columns * 65536,
                           luts + (size_t) bottom * c.columns * 65536, &cols, ya, 1.0f - ya);
          }
        es_control_advance (control, 1);
      }
  ok = es_cpu_finish (control, error);

done:
  free (source_col);
  free (cols.left);
  free (cols.right);
  free (cols.weight);
  free (cols.weight_left);
  free (c.luts);
  free (hists);
  return ok;
}

/* Two passes: the tiles' histograms read every sample, the blend reads it
 * again and writes the result (the input's depth, or floats for the skimage
 * preset); the tiles' histograms and LUTs stay in cache. */
void
es_cpu_clahe_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const double pixels = es_extent_pixels (extent);
  const double sample = (double) es_format_size (extent->format);

  *traffic = (EsTraffic){ 2 * pixels * sample,
                          pixels * (double) es_format_size (es_job_output_format (job, extent->format)), 0 };
}
