/* SPDX-License-Identifier: MIT */
/* CLAHE on the CPU, as OpenCV's CLAHE_Impl::apply: per-tile clipped histograms to LUTs, then each pixel blended. */
#include "es-cpu.h"
#include "es-cpu-internal.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "../es-definitions.h"

/* Where each column falls between tile centres, as OpenCV's tables: the
 * left and right tiles' LUT offsets and their weights, in its float
 * arithmetic. */
typedef struct {
  int32_t *left, *right; /* tile column × bins */
  float *weight, *weight_left;
} Columns;

/* The tiles' geometry, as OpenCV derives it from the image and the grid,
 * and what every pass shares: the padded columns' sources, the blend's
 * column tables and the LUTs. */
typedef struct {
  int width, height;
  EsFormat format;
  int bins;           /* 256 for 8-bit input, 65536 for 16-bit */
  int tile_w, tile_h; /* of the padded image */
  int columns, rows;  /* the grid */
  int padded_height;
  int clip;        /* a bin's largest count; 0: no clipping */
  float lut_scale; /* (bins − 1) / a tile's pixels */
  int *source_col; /* padded column → image column (reflect-101) */
  Columns cols;
  void *luts; /* columns × rows LUTs of `bins` samples, row-major by tile */
  bool avx2;
} Clahe;

/* Adds the columns of tile column tx in one row (an image row's samples)
 * to a histogram: the image's columns, then those of the padding. */
static void
add_tile_row (const Clahe *c, const void *row, int tx, int *hist)
{
  int x0 = tx * c->tile_w, x1 = x0 + c->tile_w;
  /* Columns x0..x_inside−1 lie in the image, the rest in its padding. */
  int x_inside = x1 < c->width ? x1 : c->width > x0 ? c->width : x0;

  if (c->format == ES_FORMAT_U8)
    {
      const uint8_t *p = row;
      for (int x = x0; x < x_inside; x++)
        hist[p[x]]++;
      for (int x = x_inside; x < x1; x++)
        hist[p[c->source_col[x]]]++;
    }
  else
    {
      const uint16_t *p = row;
      for (int x = x0; x < x_inside; x++)
        hist[p[x]]++;
      for (int x = x_inside; x < x1; x++)
        hist[p[c->source_col[x]]]++;
    }
}

/* A tile's histogram, clipped and redistributed (in place), summed into its LUT. */
static void
histogram_lut (const Clahe *c, int tx, int ty, int *hist)
{
  int bins = c->bins, clip = c->clip, sum = 0;

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

/* One tile's LUT from the whole image in memory. */
static void
tile_lut (const Clahe *c, const EsImage *in, int tx, int ty, int *hist)
{
  memset (hist, 0, (size_t) c->bins * sizeof *hist);
  for (int y = ty * c->tile_h; y < (ty + 1) * c->tile_h; y++)
    add_tile_row (c, es_image_row (in, es_border_index (y, c->height, ES_BORDER_MIRROR)), tx, hist);
  histogram_lut (c, tx, ty, hist);
}

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

static void
clahe_clear (Clahe *c)
{
  free (c->source_col);
  free (c->cols.left);
  free (c->cols.right);
  free (c->cols.weight);
  free (c->cols.weight_left);
  free (c->luts);
  *c = (Clahe){ 0 };
}

/* The geometry of a width × height image of `format` and the tables every
 * pass reads; the LUTs allocated, not filled. */
static bool
clahe_init (Clahe *c, const EsJob *job, int width, int height, EsFormat format, EsError *error)
{
  EsClaheGeometry g;
  size_t sample = format == ES_FORMAT_U8 ? 1 : 2;

  es_clahe_geometry (job, width, height, &g);
  *c = (Clahe){ .width = width,
                .height = height,
                .format = format,
                .bins = format == ES_FORMAT_U8 ? 256 : 65536,
                .tile_w = g.tile_width,
                .tile_h = g.tile_height,
                .columns = job->tile_columns,
                .rows = job->tile_rows,
                .padded_height = g.padded_height };
  c->clip = es_clahe_clip_count (job->clip, g.tile_width * g.tile_height, c->bins);
  c->lut_scale = (float) (c->bins - 1) / (float) (g.tile_width * g.tile_height);
#ifdef ES_HAVE_AVX2_PATH
  c->avx2 = __builtin_cpu_supports ("avx2");
#endif
  c->source_col = malloc ((size_t) g.padded_width * sizeof *c->source_col);
  c->cols.left = malloc ((size_t) width * sizeof *c->cols.left);
  c->cols.right = malloc ((size_t) width * sizeof *c->cols.right);
  c->cols.weight = malloc ((size_t) width * sizeof *c->cols.weight);
  c->cols.weight_left = malloc ((size_t) width * sizeof *c->cols.weight_left);
  /* 4 bytes more for the AVX2 blend's 32-bit gathers of the last LUT's end. */
  c->luts = malloc ((size_t) c->columns * (size_t) c->rows * (size_t) c->bins * sample + 4);
  if (c->source_col == NULL || c->cols.left == NULL || c->cols.right == NULL || c->cols.weight == NULL
      || c->cols.weight_left == NULL || c->luts == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate CLAHE's %d LUTs of %d bins", c->columns * c->rows,
                    c->bins);
      clahe_clear (c);
      return false;
    }
  for (int x = 0; x < g.padded_width; x++)
    c->source_col[x] = es_border_index (x, width, ES_BORDER_MIRROR);
  for (int x = 0; x < width; x++)
    {
      int left, right;

      blend_at (x, g.tile_width, c->columns, &left, &right, &c->cols.weight[x]);
      c->cols.weight_left[x] = 1.0f - c->cols.weight[x];
      c->cols.left[x] = left * c->bins, c->cols.right[x] = right * c->bins;
    }
  return true;
}

/* Output rows [y0, y0 + in->height) of the image, from the same input rows
 * (row 0 of `in` and `out` is image row y0) and the LUTs. */
static void
blend_rows (const Clahe *c, const EsImage *in, EsImage *out, int y0, EsControl *control)
{
  const Columns *cols = &c->cols;

#pragma omp parallel for schedule(static)
  for (int r = 0; r < in->height; r++)
    if (!es_control_cancelled (control))
      {
        int top, bottom;
        float ya;

        blend_at (y0 + r, c->tile_h, c->rows, &top, &bottom, &ya);
        if (c->format == ES_FORMAT_U8)
          {
            const uint8_t *luts = c->luts, *top_luts = luts + (size_t) top * c->columns * 256;
            const uint8_t *bottom_luts = luts + (size_t) bottom * c->columns * 256;
#ifdef ES_HAVE_AVX2_PATH
            if (c->avx2)
              blend_row_u8_avx2 (es_image_row (in, r), es_image_row (out, r), c->width, top_luts, bottom_luts, cols, ya,
                                 1.0f - ya);
            else
#endif
              blend_row_u8 (es_image_row (in, r), es_image_row (out, r), c->width, top_luts, bottom_luts, cols, ya,
                            1.0f - ya);
          }
        else
          {
            const uint16_t *luts = c->luts;
            blend_row_u16 (es_image_row (in, r), es_image_row (out, r), c->width,
                           luts + (size_t) top * c->columns * 65536, luts + (size_t) bottom * c->columns * 65536, cols,
                           ya, 1.0f - ya);
          }
        es_control_advance (control, 1);
      }
}

/* The whole image in memory: each tile's histogram in turn on one thread's
 * scratch (one histogram a thread besides the LUTs), then every row. */
bool
es_cpu_clahe (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error)
{
  Clahe c;
  int *hists, tiles;
  bool ok = false;

  if (job->clahe.kind != ES_CLAHE_OPENCV)
    return es_cpu_clahe_preset (job, in, out, control, error);
  assert (out->format == in->format && out->width == in->width && out->height == in->height);
  if (!clahe_init (&c, job, in->width, in->height, in->format, error))
    return false;
  tiles = c.columns * c.rows;
  es_control_begin (control, (long long) tiles + in->height);
  hists = malloc ((size_t) omp_get_max_threads () * (size_t) c.bins * sizeof *hists);
  if (hists == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate CLAHE's histograms of %d bins", c.bins);
      goto done;
    }

#pragma omp parallel
  {
    int *hist = hists + (size_t) omp_get_thread_num () * (size_t) c.bins;

#pragma omp for schedule(dynamic)
    for (int t = 0; t < tiles; t++)
      if (!es_control_cancelled (control))
        {
          tile_lut (&c, in, t % c.columns, t / c.columns, hist);
          es_control_advance (control, 1);
        }
  }
  if (!es_control_cancelled (control))
    blend_rows (&c, in, out, 0, control);
  ok = es_cpu_finish (control, error);

done:
  free (hists);
  clahe_clear (&c);
  return ok;
}

/* ---- in bands: the tile passes ---- */

/* The geometry and LUTs, and until finish every tile's histogram (tiles ×
 * bins counts: 16 MiB for a 16-bit image under 8 × 8 tiles). */
struct EsTileState {
  Clahe c;
  int *hists;
};

static bool
passes_take (const EsJob *job)
{
  return job->clahe.kind == ES_CLAHE_OPENCV;
}

static EsTileState *
passes_begin (const EsJob *job, int width, int height, EsFormat format, EsError *error)
{
  EsTileState *state = calloc (1, sizeof *state);

  assert (passes_take (job) && (format == ES_FORMAT_U8 || format == ES_FORMAT_U16));
  if (state == NULL || !clahe_init (&state->c, job, width, height, format, error))
    {
      if (state)
        free (state);
      else
        es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate CLAHE's state");
      return NULL;
    }
  state->hists = calloc ((size_t) state->c.columns * state->c.rows * state->c.bins, sizeof *state->hists);
  if (state->hists == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate CLAHE's %d histograms of %d bins",
                    state->c.columns * state->c.rows, state->c.bins);
      clahe_clear (&state->c);
      free (state);
      return NULL;
    }
  return state;
}

/* Each padded row p of a tile row counts image row mirror(p): the band's
 * rows are added to the tiles of the tile rows that hold them and of those
 * that hold padding (which may mirror them), each tile by one thread. */
static bool
passes_add_rows (EsTileState *state, const EsImage *rows, int y0, EsControl *control, EsError *error)
{
  const Clahe *c = &state->c;
  int y1 = y0 + rows->height;
  int first = y0 / c->tile_h, last = (y1 - 1) / c->tile_h;
  /* The tile rows after `last` that hold padding: none when the grid
   * divides the image. */
  int padding = c->padded_height > c->height ? c->height / c->tile_h : c->rows;
  int after = padding > last + 1 ? padding : last + 1;
  int tile_rows = last - first + 1 + (after < c->rows ? c->rows - after : 0);

  assert (y0 >= 0 && y1 <= c->height && rows->width == c->width && rows->format == c->format);

#pragma omp parallel for schedule(dynamic)
  for (int t = 0; t < tile_rows * c->columns; t++)
    if (!es_control_cancelled (control))
      {
        int k = t / c->columns, tx = t % c->columns;
        int ty = k <= last - first ? first + k : after + k - (last - first + 1);
        int p0 = ty * c->tile_h, p1 = p0 + c->tile_h;
        int *hist = state->hists + ((size_t) ty * c->columns + tx) * c->bins;

        /* The tile row's image rows within the band, then its padding. */
        for (int p = p0 > y0 ? p0 : y0; p < (p1 < y1 ? p1 : y1); p++)
          add_tile_row (c, es_image_row (rows, p - y0), tx, hist);
        for (int p = p0 > c->height ? p0 : c->height; p < p1; p++)
          {
            int source = es_border_index (p, c->height, ES_BORDER_MIRROR);

            if (source >= y0 && source < y1)
              add_tile_row (c, es_image_row (rows, source - y0), tx, hist);
          }
      }
  return es_cpu_finish (control, error);
}

static bool
passes_finish (EsTileState *state, EsControl *control, EsError *error)
{
  const Clahe *c = &state->c;
  int tiles = c->columns * c->rows;

#pragma omp parallel for schedule(dynamic)
  for (int t = 0; t < tiles; t++)
    if (!es_control_cancelled (control))
      histogram_lut (c, t % c->columns, t / c->columns, state->hists + (size_t) t * c->bins);
  /* The LUTs are all that pass 2 reads. */
  free (state->hists);
  state->hists = NULL;
  return es_cpu_finish (control, error);
}

static int *
passes_counts (EsTileState *state, size_t *n)
{
  *n = (size_t) state->c.columns * state->c.rows * state->c.bins;
  return state->hists;
}

static bool
passes_apply_rows (const EsTileState *state, const EsImage *rows, int y0, EsImage *out, EsControl *control,
                   EsError *error)
{
  assert (state->hists == NULL && y0 >= 0 && y0 + rows->height <= state->c.height && out->height == rows->height
          && out->format == state->c.format);
  blend_rows (&state->c, rows, out, y0, control);
  return es_cpu_finish (control, error);
}

static void
passes_free (EsTileState *state)
{
  if (state == NULL)
    return;
  free (state->hists);
  clahe_clear (&state->c);
  free (state);
}

const EsTilePasses es_cpu_clahe_passes = {
  .takes = passes_take,
  .begin = passes_begin,
  .add_rows = passes_add_rows,
  .finish = passes_finish,
  .counts = passes_counts,
  .apply_rows = passes_apply_rows,
  .free = passes_free,
};
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
