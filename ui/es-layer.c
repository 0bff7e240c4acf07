/* SPDX-License-Identifier: MIT */
/* Views, sources and layers: values, mips, range and display scale (drawn by es-layer-render.c). */
#include "es-layer.h"

#include <math.h>
#include <string.h>
#include <glib/gi18n-lib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "es-intl.h"
#include "es-calibration.h"

/* The view table: one row per view. Titles of operation views come from the
 * operation table (result_title), so that a new operation needs only a row. */
typedef struct {
  const char *name;   /* GSettings nick of "view", export file names */
  int op;             /* the EsOp behind it; -1 for the original */
  const char *title;  /* only for a view without an operation */
  gboolean heatmap;   /* takes the user's colormap */
  gboolean grid;      /* one of the grid's panes, in table order */
  gboolean histogram; /* charted in the side panel */
} EsViewRow;

static const EsViewRow view_rows[ES_N_VIEWS] = {
  [ES_VIEW_ORIGINAL] = { "original", -1, N_ ("Original"), FALSE, TRUE, FALSE },
  [ES_VIEW_QUANTIZED] = { "quantized", ES_OP_QUANTIZE, NULL, TRUE, FALSE, TRUE },
  [ES_VIEW_ENTROPY] = { "entropy", ES_OP_ENTROPY, NULL, TRUE, TRUE, FALSE },
  [ES_VIEW_EQUALIZED] = { "equalized", ES_OP_EQUALIZE, NULL, FALSE, TRUE, TRUE },
  [ES_VIEW_SHARPENED] = { "sharpened", ES_OP_SHARPEN, NULL, FALSE, TRUE, FALSE },
  [ES_VIEW_CLAHE] = { "clahe", ES_OP_CLAHE, NULL, FALSE, FALSE, TRUE },
};

const char *
es_view_name (EsView view)
{
  g_return_val_if_fail (view < ES_N_VIEWS, NULL);
  return view_rows[view].name;
}

const char *
es_view_title (EsView view)
{
  g_return_val_if_fail (view < ES_N_VIEWS, NULL);
  return _ (view_rows[view].op < 0 ? view_rows[view].title : es_op_info (view_rows[view].op)->result_title);
}

gboolean
es_view_from_name (const char *name, EsView *view)
{
  for (int i = 0; i < ES_N_VIEWS; i++)
    if (g_strcmp0 (name, view_rows[i].name) == 0)
      {
        *view = i;
        return TRUE;
      }
  return FALSE;
}

gboolean
es_view_is_heatmap (EsView view)
{
  g_return_val_if_fail (view < ES_N_VIEWS, FALSE);
  return view_rows[view].heatmap;
}

gboolean
es_view_get_op (EsView view, EsOp *op)
{
  g_return_val_if_fail (view < ES_N_VIEWS, FALSE);
  if (view_rows[view].op < 0)
    return FALSE;
  *op = view_rows[view].op;
  return TRUE;
}

EsView
es_view_for_op (EsOp op)
{
  for (int i = 0; i < ES_N_VIEWS; i++)
    if (view_rows[i].op == (int) op)
      return i;
  g_return_val_if_reached (ES_VIEW_ORIGINAL);
}

int
es_view_get_grid (EsView *views, int max_views)
{
  int n = 0;

  for (int i = 0; i < ES_N_VIEWS && n < max_views; i++)
    if (view_rows[i].grid)
      views[n++] = i;
  return n;
}

gboolean
es_view_has_histogram (EsView view)
{
  g_return_val_if_fail (view < ES_N_VIEWS, FALSE);
  return view_rows[view].histogram;
}

char *
es_job_describe_params (const EsJob *job, const char *separator)
{
  GString *text = g_string_new (NULL);

  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (job->op, id))
      {
        const EsParam *param = es_param (id);

        if (text->len)
          g_string_append (text, separator);
        g_string_append_printf (text, "%s %.*f", param->name, param->digits, es_job_get_param (job, id));
      }
  return g_string_free (text, FALSE);
}

/* Sources */

static gsize source_serials;

EsSource *
es_source_new (GFile *file, const char *name, EsImage *image)
{
  EsSource *source = g_atomic_rc_box_new0 (EsSource);

  source->image = *image;
  memset (image, 0, sizeof *image);
  source->file = file ? g_object_ref (file) : NULL;
  source->name = g_strdup (name);
  source->serial = g_atomic_pointer_add (&source_serials, 1) + 1;
  es_image_summarize (&source->image, source->histogram, &source->sample_lo, &source->sample_hi);
  return source;
}

EsSource *
es_source_new_plane (EsSource *volume, int z)
{
  EsSource *source = g_atomic_rc_box_new0 (EsSource);

  g_return_val_if_fail (z >= 0 && z < es_source_planes (volume), NULL);
  source->image = es_image_plane (&volume->image, z);
  source->file = volume->file ? g_object_ref (volume->file) : NULL;
  source->name = g_strdup (volume->name);
  source->serial = g_atomic_pointer_add (&source_serials, 1) + 1;
  memcpy (source->histogram, volume->histogram, sizeof source->histogram);
  source->sample_lo = volume->sample_lo;
  source->sample_hi = volume->sample_hi;
  source->volume.source = es_source_ref (volume);
  source->volume.z = z;
  return source;
}

int
es_source_planes (const EsSource *source)
{
  return es_image_planes (&source->image);
}

EsSource *
es_source_ref (EsSource *source)
{
  return source ? g_atomic_rc_box_acquire (source) : NULL;
}

static void
es_source_free (gpointer data)
{
  EsSource *source = data;

  if (source->volume.source) /* a plane: the pixels are the volume's */
    es_source_unref (source->volume.source);
  else
    es_image_clear (&source->image);
  g_clear_object (&source->file);
  g_free (source->name);
}

void
es_source_unref (EsSource *source)
{
  if (source)
    g_atomic_rc_box_release_full (source, es_source_free);
}

guint32
es_source_sample (const EsSource *source, int x, int y)
{
  return (guint32) es_image_sample (&source->image, x, y);
}

/* Spare buffers. A new result and its mips need hundreds of megabytes
 * (an 8192² entropy: 256 MB of values, 85 MB of mips), and the first touch
 * of freshly mapped memory costs about 0.5 ms per megabyte here: half of
 * the time it takes to build the mips. The buffers of a layer that is gone
 * are kept for the next one of the same size, up to SPARE_LIMIT bytes, as
 * long as the image on screen has the size of the image they were made for
 * (es_layer_keep_spares_for): after a large image, a small one does not
 * hold the large one's memory. */

#define SPARE_MIN ((size_t) 4 << 20) /* smaller ones are cheap to map */
#define SPARE_LIMIT ((size_t) 768 << 20)

static GMutex spare_lock;
static GQueue spares; /* Spare*, newest first */
static size_t spare_bytes;
static int spare_width, spare_height; /* of the image on screen; 0: any */
static gboolean trim_scheduled;

typedef struct {
  void *pixels;
  size_t bytes;
  int width, height; /* of the image the buffer was made for */
} Spare;

/* glibc keeps freed memory below its (dynamic, up to 32 MiB) mmap threshold
 * in its arenas: once large buffers are really freed, the pages go back. */
static void
trim_heap (gpointer data)
{
  g_mutex_lock (&spare_lock);
  trim_scheduled = FALSE;
  g_mutex_unlock (&spare_lock);
#ifdef __GLIBC__
  malloc_trim (0);
#endif
}

/* Called with spare_lock held, after a large free. */
static void
schedule_trim_locked (void)
{
  if (!trim_scheduled)
    {
      trim_scheduled = TRUE;
      g_idle_add_once (trim_heap, NULL);
    }
}

static void
free_spare_locked (Spare *spare)
{
  spare_bytes -= spare->bytes;
  free (spare->pixels);
  g_free (spare);
  schedule_trim_locked ();
}

static void *
take_spare (size_t bytes)
{
  void *pixels = NULL;

  g_mutex_lock (&spare_lock);
  for (GList *l = spares.head; l; l = l->next)
    {
      Spare *spare = l->data;

      if (spare->bytes == bytes)
        {
          pixels = spare->pixels;
          spare_bytes -= bytes;
          g_queue_delete_link (&spares, l);
          g_free (spare);
          break;
        }
    }
  g_mutex_unlock (&spare_lock);
  return pixels;
}

/* The bytes of image's buffer, if the pool can keep it (plain host memory
 * of SPARE_MIN to SPARE_LIMIT bytes); else 0. */
static size_t
spare_bytes_of (const EsImage *image)
{
  size_t bytes = image->stride * (size_t) image->height * (size_t) es_image_planes (image);

  return image->pixels != NULL && image->release == NULL && !es_image_on_device (image) && bytes >= SPARE_MIN
             && bytes <= SPARE_LIMIT
           ? bytes
           : 0;
}

/* Whether the pool keeps buffers made for an image of width × height (the
 * size on screen, or any before one is shown). Called with spare_lock held. */
static gboolean
keeps_size_locked (int width, int height)
{
  return spare_width == 0 || (width == spare_width && height == spare_height);
}

/* Keeps an image's plain (malloc'ed) buffer for later, or frees it; the
 * buffer was made for an image of width × height (the layer's source). */
static void
give_spare (EsImage *image, int width, int height)
{
  size_t bytes = spare_bytes_of (image);
  gboolean keep;
  Spare *spare;

  if (bytes == 0)
    {
      es_image_clear (image);
      return;
    }
  g_mutex_lock (&spare_lock);
  keep = keeps_size_locked (width, height);
  if (!keep)
    schedule_trim_locked ();
  g_mutex_unlock (&spare_lock);
  if (!keep)
    {
      es_image_clear (image);
      return;
    }
  spare = g_new (Spare, 1);
  spare->pixels = image->pixels;
  spare->bytes = bytes;
  spare->width = width;
  spare->height = height;
  memset (image, 0, sizeof *image);
  g_mutex_lock (&spare_lock);
  g_queue_push_head (&spares, spare);
  spare_bytes += bytes;
  while (spare_bytes > SPARE_LIMIT)
    free_spare_locked (g_queue_pop_tail (&spares));
  g_mutex_unlock (&spare_lock);
}

void
es_layer_keep_spares_for (int width, int height)
{
  g_mutex_lock (&spare_lock);
  spare_width = width;
  spare_height = height;
  for (GList *l = spares.head, *next; l; l = next)
    {
      Spare *spare = l->data;

      next = l->next;
      if (spare->width != width || spare->height != height)
        {
          g_queue_delete_link (&spares, l);
          free_spare_locked (spare);
        }
    }
  g_mutex_unlock (&spare_lock);
}

/* A tightly packed image, on a spare buffer when there is one of its size
 * (its contents are then stale: the caller overwrites every pixel). */
static gboolean
alloc_image (EsImage *image, int width, int height, EsFormat format, int depth)
{
  size_t bytes = (size_t) width * es_format_size (format) * (size_t) height;
  void *pixels = bytes >= SPARE_MIN ? take_spare (bytes) : NULL;

  if (pixels == NULL)
    return es_image_alloc (image, width, height, format, depth, NULL);
  *image = (EsImage){
    .width = width,
    .height = height,
    .stride = (size_t) width * es_format_size (format),
    .format = format,
    .depth = depth,
    .pixels = pixels,
  };
  return TRUE;
}

gboolean
es_layer_prepare_values (EsImage *values, int width, int height, EsFormat format)
{
  size_t bytes = (size_t) width * es_format_size (format) * (size_t) height;
  void *pixels = bytes >= SPARE_MIN ? take_spare (bytes) : NULL;

  if (pixels == NULL)
    return FALSE;
  *values = (EsImage){
    .width = width,
    .height = height,
    .stride = (size_t) width * es_format_size (format),
    .format = format,
    .depth = es_format_depth (format),
    .pixels = pixels,
  };
  return TRUE;
}

void
es_layer_recycle_values (EsImage *values)
{
  give_spare (values, values->width, values->height);
}

/* The pool's buffers of `bytes`. */
static int
count_spares_locked (size_t bytes)
{
  int n = 0;

  for (GList *l = spares.head; l; l = l->next)
    n += ((Spare *) l->data)->bytes == bytes;
  return n;
}

void
es_layer_stock_spares (const EsLayer *layer, gboolean (*stop) (gpointer data), gpointer data)
{
  const EsImage *buffers[ES_LAYER_MAX_MIPS];
  int n = 0, width = layer->source->image.width, height = layer->source->image.height;

  /* The values and the mips below them, as the layer holds them. Only
   * the CPU writes results into spare buffers (CUDA into page-locked
   * ones of its own). */
  if (layer->result.timing.backend == ES_BACKEND_CPU)
    buffers[n++] = &layer->result.values;
  for (int i = 1; i < layer->n_mips && n < ES_LAYER_MAX_MIPS; i++)
    buffers[n++] = &layer->mips[i];
  for (int i = 0; i < n; i++)
    {
      size_t bytes = spare_bytes_of (buffers[i]);
      int wanted = 0, held;
      gboolean room;
      EsImage image;

      if (bytes == 0 || stop (data))
        continue;
      for (int k = 0; k < n; k++)
        wanted += spare_bytes_of (buffers[k]) == bytes;
      g_mutex_lock (&spare_lock);
      /* Never past the pool's limit, where give_spare would free it again. */
      room = keeps_size_locked (width, height) && spare_bytes + bytes <= SPARE_LIMIT;
      held = count_spares_locked (bytes);
      g_mutex_unlock (&spare_lock);
      if (!room || held >= wanted
          || !es_image_alloc_volume (&image, buffers[i]->width, buffers[i]->height, es_image_planes (buffers[i]),
                                     buffers[i]->format, buffers[i]->depth, NULL))
        continue;
      if (spare_bytes_of (&image) != bytes)
        {
          es_image_clear (&image); /* another allocator's memory, or another layout */
          continue;
        }
      /* Map every page now (one write a page; a whole 2 MiB page where the
       * kernel gives them), so that the result that takes it does not. */
      for (size_t offset = 0; offset < bytes; offset += 4096)
        ((volatile guint8 *) image.pixels)[offset] = 0;
      give_spare (&image, width, height);
    }
}

/* Layers */

static void
row_to_float (const EsImage *image, int y, float *out)
{
  const void *row = es_image_row (image, y);

  switch (image->format)
    {
    case ES_FORMAT_U8:
      for (int x = 0; x < image->width; x++)
        out[x] = ((const guint8 *) row)[x];
      break;
      case ES_FORMAT_U16: {
        /* A float TIFF's NaN (sample 0, EsImageMeta) becomes NaN again, so
         * that the mips draw it as no data, as the full-size level does:
         * zoomed out, a block that holds a NaN shows as no data. */
        float zero = image->meta.nan_samples > 0 ? NAN : 0.0f;

        for (int x = 0; x < image->width; x++)
          {
            guint16 v = ((const guint16 *) row)[x];

            out[x] = v == 0 ? zero : v;
          }
        break;
      }
    case ES_FORMAT_F32: memcpy (out, row, image->width * sizeof (float)); break;
    }
}

/* Row y of an image as floats: the row itself for F32 images (no copy),
 * else converted into buffer. */
static const float *
float_row (const EsImage *image, int y, float *buffer)
{
  if (image->format == ES_FORMAT_F32)
    return es_image_row (image, y);
  row_to_float (image, y, buffer);
  return buffer;
}

/* One output row of a 2×2 average: a and b are two input rows of width w
 * (an odd last column is paired with itself). With lo and hi, also the
 * minimum and maximum of both rows, skipping NaN as es_image_min_max does:
 * one pass over the values for both, vectorized. */
static void
halve_row (const float *a, const float *b, int w, float *dst, int out_width, float *lo, float *hi)
{
  int pairs = w / 2;

  if (lo)
    {
      float l = *lo, h = *hi;

#pragma omp simd reduction(min : l) reduction(max : h)
      for (int x = 0; x < pairs; x++)
        {
          float a0 = a[2 * x], a1 = a[2 * x + 1], b0 = b[2 * x], b1 = b[2 * x + 1];

          dst[x] = 0.25f * (a0 + a1 + b0 + b1);
          l = a0 < l ? a0 : l;
          l = a1 < l ? a1 : l;
          l = b0 < l ? b0 : l;
          l = b1 < l ? b1 : l;
          h = a0 > h ? a0 : h;
          h = a1 > h ? a1 : h;
          h = b0 > h ? b0 : h;
          h = b1 > h ? b1 : h;
        }
      if (out_width > pairs)
        {
          l = a[w - 1] < l ? a[w - 1] : l;
          l = b[w - 1] < l ? b[w - 1] : l;
          h = a[w - 1] > h ? a[w - 1] : h;
          h = b[w - 1] > h ? b[w - 1] : h;
        }
      *lo = l;
      *hi = h;
    }
  else
    for (int x = 0; x < pairs; x++)
      dst[x] = 0.25f * (a[2 * x] + a[2 * x + 1] + b[2 * x] + b[2 * x + 1]);
  if (out_width > pairs)
    dst[pairs] = 0.25f * (a[w - 1] + a[w - 1] + b[w - 1] + b[w - 1]);
}

/* Whether a level is small enough to stop halving. */
static gboolean
mip_is_last (const EsImage *level)
{
  return level->width <= 16 && level->height <= 16;
}

static gboolean
alloc_half (EsImage *out, const EsImage *in)
{
  if (!alloc_image (out, (in->width + 1) / 2, (in->height + 1) / 2, ES_FORMAT_F32, in->depth))
    return FALSE;
  out->levels = in->levels;
  return TRUE;
}

/* The halvings' share of the range: a thread's minimum and maximum. */
static void
merge_range (double *range, float lo, float hi)
{
#pragma omp critical
  {
    range[0] = MIN (range[0], lo);
    range[1] = MAX (range[1], hi);
  }
}

/* One level from the one above it; range as in build_mips. */
static void
halve_once (const EsImage *in, EsImage *out, double *range)
{
  /* This runs on the worker thread, beside the jobs' own OpenMP teams. */
#pragma omp parallel if ((long long) out->width * out->height > 65536)
  {
    float *a = g_new (float, in->width);
    float *b = g_new (float, in->width);
    float lo = INFINITY, hi = -INFINITY;

#pragma omp for schedule(static)
    for (int y = 0; y < out->height; y++)
      {
        const float *ra = float_row (in, 2 * y, a);
        const float *rb = 2 * y + 1 < in->height ? float_row (in, 2 * y + 1, b) : ra;

        halve_row (ra, rb, in->width, es_image_row (out, y), out->width, range ? &lo : NULL, range ? &hi : NULL);
      }
    if (range)
      merge_range (range, lo, hi);
    g_free (a);
    g_free (b);
  }
}

/* Levels 1 and 2 from the values in one pass: each thread halves four
 * rows of the values into two rows of level 1 and, while those are in
 * its cache, into one row of level 2, so that level 1 (a quarter of the
 * values' bytes) is written but never read back from memory. The same
 * halve_row makes the same floats as two passes. range as in build_mips. */
static void
halve_twice (const EsImage *in, EsImage *half, EsImage *quarter, double *range)
{
  /* This runs on the worker thread, beside the jobs' own OpenMP teams. */
#pragma omp parallel if ((long long) half->width * half->height > 65536)
  {
    float *a = g_new (float, in->width);
    float *b = g_new (float, in->width);
    float lo = INFINITY, hi = -INFINITY;

#pragma omp for schedule(static)
    for (int y = 0; y < quarter->height; y++)
      {
        /* Rows 2y and 2y + 1 of level 1; an odd last row pairs with itself. */
        float *h0 = es_image_row (half, 2 * y);
        float *h1 = 2 * y + 1 < half->height ? es_image_row (half, 2 * y + 1) : h0;

        for (int k = 0; k < 2 && 2 * y + k < half->height; k++)
          {
            int row = 2 * (2 * y + k);
            const float *ra = float_row (in, row, a);
            const float *rb = row + 1 < in->height ? float_row (in, row + 1, b) : ra;

            halve_row (ra, rb, in->width, k ? h1 : h0, half->width, range ? &lo : NULL, range ? &hi : NULL);
          }
        halve_row (h0, h1, half->width, es_image_row (quarter, y), quarter->width, NULL, NULL);
      }
    if (range)
      merge_range (range, lo, hi);
    g_free (a);
    g_free (b);
  }
}

/* Halves the image until it is small, averaging 2×2 blocks (an odd last
 * row or column is paired with itself). The first halving reads every
 * value: when range is given, it also finds their minimum and maximum
 * (skipping NaN, as es_image_min_max does), so that the values are read
 * once, not twice; range[0] > range[1] when there was none. */
static void
build_mips (EsLayer *layer, double *range)
{
  layer->mips[0] = layer->result.values;
  layer->n_mips = 1;
  if (range)
    {
      range[0] = INFINITY;
      range[1] = -INFINITY;
    }

  /* The first two levels together, where both are made. */
  {
    const EsImage *values = &layer->mips[0];
    const EsImage half = { .width = (values->width + 1) / 2, .height = (values->height + 1) / 2 };

    if (!mip_is_last (values) && !mip_is_last (&half) && alloc_half (&layer->mips[1], values))
      {
        if (alloc_half (&layer->mips[2], &layer->mips[1]))
          {
            halve_twice (values, &layer->mips[1], &layer->mips[2], range);
            layer->n_mips = 3;
            range = NULL;
          }
        else
          es_image_clear (&layer->mips[1]);
      }
  }

  while (layer->n_mips < ES_LAYER_MAX_MIPS)
    {
      const EsImage *in = &layer->mips[layer->n_mips - 1];
      double *find = layer->n_mips == 1 ? range : NULL;
      EsImage out = { 0 };

      if (mip_is_last (in) || !alloc_half (&out, in))
        break;
      halve_once (in, &out, find);
      layer->mips[layer->n_mips++] = out;
      if (find)
        range = NULL;
    }
  /* Too small to halve: the values were not read yet. */
  if (range)
    es_image_min_max (&layer->result.values, &range[0], &range[1]);
}

/* The automatic range of the values as es_pipeline_auto_range gives it,
 * from their minimum and maximum: it is asked about an image of just
 * those two values, so that its rules (a flat span) apply unchanged. */
static void
auto_range (const EsImage *values, const double *range, double *lo, double *hi)
{
  guint8 pixels[2 * sizeof (float)];
  EsImage two = *values;

  if (!(range[0] <= range[1])) /* no values, or only NaN */
    {
      *lo = *hi = 0;
      return;
    }
  two.width = 2;
  two.height = 1;
  two.stride = sizeof pixels;
  two.pixels = pixels;
  switch (values->format)
    {
    case ES_FORMAT_U8:
      pixels[0] = (guint8) range[0];
      pixels[1] = (guint8) range[1];
      break;
      case ES_FORMAT_U16: {
        guint16 two_samples[2] = { (guint16) range[0], (guint16) range[1] };
        memcpy (pixels, two_samples, sizeof two_samples);
        break;
      }
      case ES_FORMAT_F32: {
        float two_samples[2] = { (float) range[0], (float) range[1] };
        memcpy (pixels, two_samples, sizeof two_samples);
        break;
      }
    }
  es_pipeline_auto_range (&two, lo, hi);
}

/* The smallest and largest value of every plane of a volume, skipping NaN
 * (no data) as build_mips does; range[0] > range[1] when there is none. */
static void
volume_range (const EsImage *values, double *range)
{
  int planes = es_image_planes (values);
  double lo = INFINITY, hi = -INFINITY;

#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
  for (int z = 0; z < planes; z++)
    {
      EsImage plane = es_image_plane (values, z);
      float *buffer = g_new (float, plane.width);

      for (int y = 0; y < plane.height; y++)
        {
          const float *row = float_row (&plane, y, buffer);

          for (int x = 0; x < plane.width; x++)
            {
              lo = row[x] < lo ? row[x] : lo;
              hi = row[x] > hi ? row[x] : hi;
            }
        }
      g_free (buffer);
    }
  range[0] = lo;
  range[1] = hi;
}

/* Of every plane of a volume. */
static void
count_histogram (EsLayer *layer, guint n_bins)
{
  const EsImage *values = &layer->result.values;

  if (values->format != ES_FORMAT_U8)
    return;
  layer->histogram = g_new0 (guint64, 256);
  layer->n_bins = n_bins;
  for (int z = 0; z < es_image_planes (values); z++)
    for (int y = 0; y < values->height; y++)
      {
        const guint8 *row = es_image_voxel_row (values, z, y);

        for (int x = 0; x < values->width; x++)
          layer->histogram[row[x]]++;
      }
}

EsLayer *
es_layer_new_original (EsSource *source)
{
  EsLayer *layer = g_atomic_rc_box_new0 (EsLayer);
  const EsImage *image = &source->image;

  layer->view = ES_VIEW_ORIGINAL;
  layer->source = es_source_ref (source);
  layer->job = (EsJob) ES_JOB_INIT (ES_OP_QUANTIZE);
  /* The values are the source's pixels; es_layer_unref never frees them. */
  layer->result.values = *image;
  layer->result.scale.map = ES_COLORMAP_GRAY;
  layer->result.scale.lo = 0;
  layer->result.scale.hi = image->levels > 0 ? image->levels - 1 : (1 << image->depth) - 1;
  layer->result.info.operation = "original";
  layer->result.info.units = image->levels > 0 ? "level" : image->meta.stored == ES_STORED_FLOAT ? "value" : "gray";
  /* A float or signed TIFF's samples stand for its values: the colorbar
   * and every readout show those (a constant float page steps by 0, shown
   * as its one value). */
  layer->result.info.unit_scale = image->meta.stored == ES_STORED_UNSIGNED || image->meta.value_scale == 0
                                    ? 1.0
                                    : image->meta.value_scale;
  layer->result.info.value_offset = image->meta.stored == ES_STORED_UNSIGNED ? 0 : image->meta.value_offset;
  es_result_calibrate (&layer->result, image);
  layer->min = layer->result.scale.lo;
  layer->max = layer->result.scale.hi;
  /* A volume's planes get their mips when shown (es_layer_new_plane); a
   * 2-D original's are made when it is first drawn: the tools take the
   * original for its values on every change of the views, on the main
   * thread, and an 8192² image's mips are 85 MB of fresh memory. */
  if (es_image_planes (image) > 1)
    {
      layer->mips[0] = layer->result.values;
      layer->n_mips = 1;
      layer->mips_made = 1;
    }
  return layer;
}

void
es_layer_ensure_mips (const EsLayer *layer)
{
  /* Made once, before any reader sees them (g_once's barrier): the
   * layer stays immutable to everyone who draws it. */
  EsLayer *cache = (EsLayer *) layer;

  if (g_once_init_enter (&cache->mips_made))
    {
      build_mips (cache, NULL);
      g_once_init_leave (&cache->mips_made, 1);
    }
}

void
es_layer_job_params (const EsJob *job, EsViewParams *params)
{
  es_view_params_init (params, job->op);
  params->job = *job;
}

EsLayer *
es_layer_new (EsView view, EsSource *source, const EsJob *job, EsBackendChoice backend, EsResult *result)
{
  EsLayer *layer = g_atomic_rc_box_new0 (EsLayer);
  double range[2];

  layer->view = view;
  layer->source = es_source_ref (source);
  layer->job = *job;
  layer->backend = backend;
  layer->result = *result;
  memset (result, 0, sizeof *result);
  /* The automatic range is found here, off the main thread and in the same
   * pass as the first mip level, so that switching to it later costs
   * nothing and it costs no extra pass over the values now. A volume is
   * drawn plane by plane (es_layer_new_plane makes each plane's mips):
   * its range is that of all its planes, so that every plane shares it. */
  if (es_image_planes (&layer->result.values) > 1)
    volume_range (&layer->result.values, range);
  else
    build_mips (layer, range);
  layer->mips_made = 1;
  auto_range (&layer->result.values, range, &layer->min, &layer->max);
  /* The values of these views are whole numbers 0..range_max. */
  if (es_view_has_histogram (view))
    count_histogram (layer, (guint) es_job_range_max (job, layer->result.values.format) + 1);
  return layer;
}

/* A layer over part of a volume's layer: everything but the values and the
 * mips is the volume's, so that the colours, the readout's units and the
 * histograms do not change from one plane to the next. */
static EsLayer *
part_layer (EsLayer *volume, EsSource *plane_source, const EsImage *values, gboolean owns_values)
{
  EsLayer *layer = g_atomic_rc_box_new0 (EsLayer);

  layer->view = volume->view;
  layer->source = es_source_ref (plane_source);
  layer->job = volume->job;
  layer->backend = volume->backend;
  layer->result = volume->result;
  layer->result.values = *values;
  layer->result.gate = NULL;
  layer->min = volume->min;
  layer->max = volume->max;
  if (volume->histogram)
    layer->histogram = g_memdup2 (volume->histogram, 256 * sizeof *volume->histogram);
  layer->n_bins = volume->n_bins;
  layer->volume = es_layer_ref (volume);
  layer->owns_values = owns_values;
  build_mips (layer, NULL);
  layer->mips_made = 1;
  return layer;
}

EsLayer *
es_layer_new_plane (EsLayer *volume, EsSource *plane_source, int z)
{
  EsImage plane;

  g_return_val_if_fail (z >= 0 && z < es_image_planes (&volume->result.values), NULL);
  plane = es_image_plane (&volume->result.values, z);
  return part_layer (volume, plane_source, &plane, FALSE);
}

EsLayer *
es_layer_new_slice (EsLayer *volume, EsSource *plane_source, EsSliceAxis axis, int at)
{
  const EsImage *from = &volume->result.values;
  int planes = es_image_planes (from);
  size_t sample = es_format_size (from->format);
  EsImage slice = { 0 };

  if (axis == ES_SLICE_XY)
    return es_layer_new_plane (volume, plane_source, at);
  g_return_val_if_fail (at >= 0 && at < (axis == ES_SLICE_XZ ? from->height : from->width), NULL);
  if (!alloc_image (&slice, axis == ES_SLICE_XZ ? from->width : planes, axis == ES_SLICE_XZ ? planes : from->height,
                    from->format, from->depth))
    return NULL;
  slice.levels = from->levels;
  slice.maxval = from->maxval;
  /* The slice's pixels measure a voxel's width (or height) by the planes'
   * spacing: calibrated only where that is known. */
  slice.meta = from->meta;
  if (es_image_meta_calibrated (&from->meta))
    {
      double unit = es_length_unit_metres (from->meta.length_unit);

      es_image_meta_set_pixel_size (
        &slice.meta, (axis == ES_SLICE_XZ ? from->meta.pixel_width : from->meta.pixel_depth) / unit,
        (axis == ES_SLICE_XZ ? from->meta.pixel_depth : from->meta.pixel_height) / unit, 0, from->meta.length_unit);
    }
  if (axis == ES_SLICE_XZ) /* row z of the slice: row `at` of plane z */
    for (int z = 0; z < planes; z++)
      memcpy (es_image_row (&slice, z), es_image_voxel_row (from, z, at), (size_t) from->width * sample);
  else /* row y of the slice: column `at` of row y, plane after plane */
    for (int y = 0; y < from->height; y++)
      {
        guint8 *row = es_image_row (&slice, y);

        for (int z = 0; z < planes; z++)
          memcpy (row + (size_t) z * sample, (const guint8 *) es_image_voxel_row (from, z, y) + (size_t) at * sample,
                  sample);
      }
  return part_layer (volume, plane_source, &slice, TRUE);
}

EsLayer *
es_layer_ref (EsLayer *layer)
{
  return g_atomic_rc_box_acquire (layer);
}

static void
es_layer_free (gpointer data)
{
  EsLayer *layer = data;

  int width = layer->source->image.width, height = layer->source->image.height;

  for (int i = 1; i < layer->n_mips; i++)
    give_spare (&layer->mips[i], width, height);
  if (layer->volume)
    {
      /* The job, info and histogram are copies; the values the volume's or gathered. */
      if (layer->owns_values)
        give_spare (&layer->result.values, width, height);
      g_free (layer->histogram);
      es_source_unref (layer->source);
      es_layer_unref (layer->volume);
      return;
    }
  if (layer->view == ES_VIEW_ORIGINAL)
    memset (&layer->result.values, 0, sizeof layer->result.values);
  else
    give_spare (&layer->result.values, width, height);
  es_result_clear (&layer->result);
  g_free (layer->histogram);
  es_source_unref (layer->source);
}

/* Giving back the memory of a large result (hundreds of megabytes for an
 * 8192² entropy and its mips) is tens of milliseconds of page-table work:
 * a thread of its own does it, so that the main loop, which often drops
 * the last reference when a new result replaces it, does not stall. */
#define FREE_LATER_BYTES ((size_t) 16 << 20)

static void
free_later (gpointer data, gpointer unused)
{
  es_layer_free (data);
  g_free (data);
}

static GThreadPool *
free_pool (void)
{
  static GThreadPool *pool;

  if (g_once_init_enter (&pool))
    /* The pool lives as long as the process: it is kept in `pool`, not leaked. */
    /* cppcheck-suppress leakNoVarFunctionCall */
    g_once_init_leave (&pool, g_thread_pool_new (free_later, NULL, 1, FALSE, NULL));
  return pool;
}

static void
es_layer_clear (gpointer data)
{
  EsLayer *layer = data;
  const EsImage *values = &layer->result.values;

  if (layer->view != ES_VIEW_ORIGINAL
      && values->stride * (size_t) values->height * (size_t) es_image_planes (values) >= FREE_LATER_BYTES)
    {
      /* The box itself goes now; what it points to, later. */
      g_thread_pool_push (free_pool (), g_memdup2 (layer, sizeof *layer), NULL);
      return;
    }
  es_layer_free (layer);
}

void
es_layer_unref (EsLayer *layer)
{
  g_atomic_rc_box_release_full (layer, es_layer_clear);
}

int
es_layer_width (const EsLayer *layer)
{
  return layer->result.values.width;
}

int
es_layer_height (const EsLayer *layer)
{
  return layer->result.values.height;
}

double
es_layer_value (const EsLayer *layer, int x, int y)
{
  return es_image_sample (&layer->result.values, x, y);
}

void
es_layer_display_scale (const EsLayer *layer, const EsDisplay *display, EsColorScale *scale)
{
  *scale = layer->result.scale;
  if (es_view_is_heatmap (layer->view))
    {
      scale->map = display->colormap;
      scale->reversed = display->reversed;
    }
  /* As es_pipeline_run sets it for ES_RANGE_AUTO: the values' own extent. */
  if (layer->view != ES_VIEW_ORIGINAL && display->range == ES_RANGE_AUTO)
    {
      scale->lo = layer->min;
      scale->hi = layer->max;
    }
}

/* The words a file records: English, as the CLI writes them. */
static void
layer_info (const EsLayer *layer, const EsDisplay *display, EsValueInfo *info)
{
  /* Bits are a display conversion of nats: the values stay, unit_scale and
   * the words (the definition line too) follow the display's units. */
  *info = layer->view == ES_VIEW_ORIGINAL ? layer->result.info : es_value_info_for (&layer->job, display->units);
  info->pixel_size = layer->result.info.pixel_size;
}

void
es_layer_display_info (const EsLayer *layer, const EsDisplay *display, EsValueInfo *info)
{
  layer_info (layer, display, info);
  /* The definition line on screen is in the reader's language. */
  if (layer->view != ES_VIEW_ORIGINAL && info->definition[0])
    es_job_describe_definition_in (&layer->job, info->units, es_tr, info->definition, sizeof info->definition);
}

void
es_layer_export_result (const EsLayer *layer, const EsDisplay *display, EsResult *result)
{
  *result = layer->result;
  es_layer_display_scale (layer, display, &result->scale);
  layer_info (layer, display, &result->info);
}
