/* SPDX-License-Identifier: MIT */
/* The viewport renderer: crisp blocks zoomed in, a bilinear mip level zoomed out, into cairo surfaces. */
#include "es-layer.h"

#include <math.h>
#include <string.h>

/* Pixels are cairo's RGB24: one native 32-bit word each, 0xAARRGGBB, with
 * A = 255 so that the same bytes are an opaque premultiplied BGRA texture
 * for the GL renderers (es_render_heatmap_words). The bilinear filter
 * blends the words. */
static inline void
store_row (const guint32 *pixels, int width, guint8 *dst)
{
  guint32 *out = (guint32 *) dst;

  for (int i = 0; i < width; i++)
    out[i] = pixels[i] | 0xff000000u;
}

/* Colours the rectangle x0..x1 × y0..y1 (inclusive) of a level into
 * pixel words, crop_width a row, on the calling thread (the worker's bands
 * are already on its team; the main thread must not start a second). */
static guint32 *
render_crop (const EsImage *level, const EsColorScale *scale, int x0, int y0, int x1, int y1)
{
  EsImage crop = *level;
  guint32 *words;

  crop.width = x1 - x0 + 1;
  crop.height = y1 - y0 + 1;
  crop.pixels = (guint8 *) es_image_row (level, y0) + (size_t) x0 * es_format_size (level->format);
  words = g_new (guint32, (size_t) crop.width * crop.height);
  es_render_heatmap_words (&crop, scale, words, (size_t) crop.width * sizeof *words);
  return words;
}

static int
clampi (int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* Each device pixel takes the image pixel under its centre: crisp blocks. */
static void
render_nearest (const EsImage *level, const EsColorScale *scale, double zoom, double origin_x, double origin_y,
                int width, int height, guint8 *out, size_t stride)
{
  g_autofree int *xmap = g_new (int, width);
  g_autofree guint32 *crop = NULL;
  int x0, x1, y0, y1, previous = -1;

  for (int i = 0; i < width; i++)
    xmap[i] = clampi ((int) floor ((i + 0.5 - origin_x) / zoom), 0, level->width - 1);
  x0 = xmap[0];
  x1 = xmap[width - 1];
  y0 = clampi ((int) floor ((0.5 - origin_y) / zoom), 0, level->height - 1);
  y1 = clampi ((int) floor ((height - 0.5 - origin_y) / zoom), 0, level->height - 1);
  crop = render_crop (level, scale, x0, y0, x1, y1);
  for (int i = 0; i < width; i++)
    xmap[i] -= x0;

  for (int j = 0; j < height; j++)
    {
      int sy = clampi ((int) floor ((j + 0.5 - origin_y) / zoom), 0, level->height - 1);
      guint32 *dst = (guint32 *) (out + (size_t) j * stride);

      if (sy == previous)
        {
          memcpy (dst, out + (size_t) (j - 1) * stride, (size_t) width * sizeof *dst);
          continue;
        }
      const guint32 *src = crop + (size_t) (sy - y0) * (size_t) (x1 - x0 + 1);
      for (int i = 0; i < width; i++)
        dst[i] = src[xmap[i]];
      previous = sy;
    }
}

typedef struct {
  int a, b;   /* neighbouring sample indices (already relative to the crop) */
  guint32 wb; /* weight of b in 1/256 */
} Tap;

static Tap *
bilinear_taps (int n, double origin, double step, int limit, int *lo, int *hi)
{
  Tap *taps = g_new (Tap, n);

  *lo = G_MAXINT;
  *hi = G_MININT;
  for (int i = 0; i < n; i++)
    {
      double u = (i + 0.5 - origin) * step - 0.5;
      double f = floor (u);
      taps[i].a = clampi ((int) f, 0, limit - 1);
      taps[i].b = clampi ((int) f + 1, 0, limit - 1);
      taps[i].wb = (guint32) ((u - f) * 256.0 + 0.5);
      *lo = MIN (*lo, taps[i].a);
      *hi = MAX (*hi, taps[i].b);
    }
  for (int i = 0; i < n; i++)
    {
      taps[i].a -= *lo;
      taps[i].b -= *lo;
    }
  return taps;
}

/* Blends two packed pixels, weight wb/256 for b: red and blue in one
 * multiply, green in another. */
static inline guint32
blend (guint32 a, guint32 b, guint32 wb)
{
  guint32 wa = 256 - wb;
  guint32 rb = ((a & 0xff00ffu) * wa + (b & 0xff00ffu) * wb + 0x800080u) >> 8;
  guint32 g = (a >> 8 & 0xff00ffu) * wa + (b >> 8 & 0xff00ffu) * wb + 0x800080u;

  return (rb & 0xff00ffu) | (g & 0xff00u);
}

/* One crop row filtered horizontally to the output width. */
static void
filter_row (const guint32 *words, const Tap *xs, int width, guint32 *out)
{
  for (int i = 0; i < width; i++)
    out[i] = blend (words[xs[i].a], words[xs[i].b], xs[i].wb);
}

/* Two horizontally filtered rows, kept while consecutive output rows share them. */
typedef struct {
  int rows[2];
  guint32 *slots[2];
} RowCache;

static const guint32 *
cached_row (RowCache *cache, int row, int keep, const guint32 *crop, int crop_width, const Tap *xs, int width)
{
  int slot;

  if (cache->rows[0] == row || cache->rows[1] == row)
    return cache->slots[cache->rows[0] == row ? 0 : 1];
  slot = cache->rows[0] == keep ? 1 : 0;
  filter_row (crop + (size_t) row * crop_width, xs, width, cache->slots[slot]);
  cache->rows[slot] = row;
  return cache->slots[slot];
}

/* Zoomed out: a mip level between 1× and 2× the display size, sampled
 * bilinearly at each device pixel's centre. */
static void
render_bilinear (const EsImage *level, const EsColorScale *scale, double zoom, double origin_x, double origin_y,
                 int width, int height, guint8 *out, size_t stride)
{
  int x0, x1, y0, y1;
  g_autofree Tap *xs = bilinear_taps (width, origin_x, 1.0 / zoom, level->width, &x0, &x1);
  g_autofree Tap *ys = bilinear_taps (height, origin_y, 1.0 / zoom, level->height, &y0, &y1);
  g_autofree guint32 *crop = render_crop (level, scale, x0, y0, x1, y1);
  g_autofree guint32 *slots = g_new (guint32, 3 * (size_t) width);
  guint32 *blended = slots + 2 * (size_t) width;
  RowCache cache = { { -1, -1 }, { slots, slots + width } };

  for (int j = 0; j < height; j++)
    {
      const guint32 *ha = cached_row (&cache, ys[j].a, ys[j].b, crop, x1 - x0 + 1, xs, width);
      const guint32 *hb = cached_row (&cache, ys[j].b, ys[j].a, crop, x1 - x0 + 1, xs, width);
      for (int i = 0; i < width; i++)
        blended[i] = blend (ha[i], hb[i], ys[j].wb);
      store_row (blended, width, out + (size_t) j * stride);
    }
}

/* Each output pixel depends on its own position only, so that bands of rows
 * rendered apart give the very pixels of one pass. */
static void
render_pixels (const EsLayer *layer, const EsColorScale *scale, double zoom, double origin_x, double origin_y,
               int width, int height, guint8 *pixels, size_t stride)
{
  if (zoom >= 0.999)
    render_nearest (&layer->mips[0], scale, zoom, origin_x, origin_y, width, height, pixels, stride);
  else
    {
      /* The level whose scale r = zoom·2^m lies in (0.5, 1]. */
      int m = MIN ((int) floor (log2 (1.0 / zoom)), layer->n_mips - 1);
      double r = ldexp (zoom, m);

      render_bilinear (&layer->mips[m], scale, r, origin_x, origin_y, width, height, pixels, stride);
    }
}

/* Rows a band: each band colours its own crop, and the rows that two
 * bands share are coloured twice, under 2 % more work at this height. */
#define BAND_ROWS 64

static gboolean
render_surface (const EsLayer *layer, const EsColorScale *scale, double zoom, double origin_x, double origin_y,
                int width, int height, gboolean parallel, EsPixels *out)
{
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  size_t stride = (size_t) cairo_image_surface_get_stride (surface);
  guint8 *pixels = cairo_image_surface_get_data (surface);
  int n_bands = (height + BAND_ROWS - 1) / BAND_ROWS;

  memset (out, 0, sizeof *out);
  if (cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surface);
      return FALSE;
    }
  es_layer_ensure_mips (layer);

  /* The worker's bands go over every core; on the main thread one serial
   * pass, since a second OpenMP team would fight the worker's for them. */
#pragma omp parallel for schedule(dynamic) if (parallel && n_bands > 1)
  for (int band = 0; band < n_bands; band++)
    {
      int y0 = band * BAND_ROWS;

      render_pixels (layer, scale, zoom, origin_x, origin_y - y0, width, MIN (BAND_ROWS, height - y0),
                     pixels + (size_t) y0 * stride, stride);
    }
  cairo_surface_mark_dirty (surface);
  out->surface = surface;
  return TRUE;
}

void
es_pixels_clear (EsPixels *pixels)
{
  g_clear_object (&pixels->texture);
  g_clear_pointer (&pixels->surface, cairo_surface_destroy);
}

gboolean
es_layer_visible_rect (const EsLayer *layer, const EsViewport *viewport, int *x, int *y, int *width, int *height)
{
  int x0 = MAX (viewport->origin_x, 0), y0 = MAX (viewport->origin_y, 0);
  int x1 = MIN ((int) ceil (viewport->origin_x + es_layer_width (layer) * viewport->zoom), viewport->pane_width);
  int y1 = MIN ((int) ceil (viewport->origin_y + es_layer_height (layer) * viewport->zoom), viewport->pane_height);

  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  *x = x0;
  *y = y0;
  *width = x1 - x0;
  *height = y1 - y0;
  return TRUE;
}

gboolean
es_layer_render (const EsLayer *layer, const EsColorScale *scale, double zoom, double origin_x, double origin_y,
                 int width, int height, EsPixels *pixels)
{
  g_return_val_if_fail (width > 0 && height > 0 && zoom > 0, FALSE);
  return render_surface (layer, scale, zoom, origin_x, origin_y, width, height, FALSE, pixels);
}

gboolean
es_layer_render_viewport (const EsLayer *layer, const EsColorScale *scale, const EsViewport *viewport,
                          gboolean parallel, EsRendering *rendering)
{
  int x, y, width, height;

  memset (rendering, 0, sizeof *rendering);
  if (!es_layer_visible_rect (layer, viewport, &x, &y, &width, &height))
    return FALSE;
  if (!render_surface (layer, scale, viewport->zoom, viewport->origin_x - x, viewport->origin_y - y, width, height,
                       parallel, &rendering->pixels))
    return FALSE;
  rendering->x = x;
  rendering->y = y;
  rendering->viewport = *viewport;
  rendering->scale = *scale;
  return TRUE;
}

gboolean
es_rendering_matches (const EsRendering *rendering, const EsViewport *viewport, const EsColorScale *scale)
{
  /* The pixels cover the visible rectangle, which zoom, origin and pane
   * size fix together with the layer's size. */
  return rendering->pixels.surface != NULL && rendering->viewport.zoom == viewport->zoom
         && rendering->viewport.origin_x == viewport->origin_x && rendering->viewport.origin_y == viewport->origin_y
         && rendering->viewport.pane_width == viewport->pane_width
         && rendering->viewport.pane_height == viewport->pane_height && rendering->scale.map == scale->map
         && rendering->scale.reversed == scale->reversed && rendering->scale.lo == scale->lo
         && rendering->scale.hi == scale->hi;
}

void
es_rendering_clear (EsRendering *rendering)
{
  es_pixels_clear (&rendering->pixels);
  memset (rendering, 0, sizeof *rendering);
}

GBytes *
es_layer_render_rgb (const EsLayer *layer, const EsColorScale *scale, gsize *stride)
{
  const EsImage *values = &layer->result.values;
  guint8 *rgb;

  *stride = (gsize) values->width * 3;
  rgb = g_malloc (*stride * values->height);
  es_render_heatmap (values, scale, rgb, *stride);
  return g_bytes_new_take (rgb, *stride * values->height);
}
