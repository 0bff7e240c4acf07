/* SPDX-License-Identifier: MIT */
/* entroscope.load and entroscope.save: app/'s decoders and the CLI's exports, with their limits and messages. */
#include "es-py.h"
#include "es-calibration.h"
#include "es-volume-export.h"
#include "es-volume.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- load ---- */

static void
capsule_free_image (PyObject *capsule)
{
  EsImage *image = PyCapsule_GetPointer (capsule, "entroscope.EsImage");

  if (image != NULL)
    {
      es_image_clear (image);
      PyMem_RawFree (image);
    }
}

PyObject *
es_py_array_from_image (EsImage *image)
{
  size_t sample = es_format_size (image->format);
  const int ndim = es_image_planes (image) > 1 ? 3 : 2;
  npy_intp dims[3] = { es_image_planes (image), image->height, image->width };
  npy_intp strides[3] = { (npy_intp) image->plane_stride, (npy_intp) image->stride, (npy_intp) sample };
  EsImage *held;
  PyObject *array, *capsule;

  held = PyMem_RawMalloc (sizeof *held);
  if (held == NULL)
    return PyErr_NoMemory ();
  *held = *image;
  *image = (EsImage){ 0 };
  capsule = PyCapsule_New (held, "entroscope.EsImage", capsule_free_image);
  if (capsule == NULL)
    {
      es_image_clear (held);
      PyMem_RawFree (held);
      return NULL;
    }
  array = PyArray_New (&PyArray_Type, ndim, dims + 3 - ndim,
                       held->format == ES_FORMAT_U8    ? NPY_UINT8
                       : held->format == ES_FORMAT_U16 ? NPY_UINT16
                                                       : NPY_FLOAT32,
                       strides + 3 - ndim, held->pixels, 0, NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE, NULL);
  if (array == NULL)
    {
      Py_DECREF (capsule);
      return NULL;
    }
  if (PyArray_SetBaseObject ((PyArrayObject *) array, capsule) != 0)
    {
      Py_DECREF (array);
      return NULL;
    }
  return array;
}

/* A file's image: page `page` (>= 0), else the file's only page, or all
 * its pages as a volume (an OME-TIFF's Z planes of `choice`), as
 * entroscope-cli reads a stack for a 3-D window. */
static bool
load_pages (const char *path, int levels, int page, const EsVolumeChoice *choice, EsImage *image, EsError *error)
{
  EsPages *pages = es_pages_open (path, levels, error);
  char notice[256];
  bool ok;

  if (pages == NULL)
    return false;
  if (page < 0 && (es_pages_count (pages) > 1 || choice->channel_given || choice->time_given))
    {
      ok = es_pages_load_volume (pages, choice, image, notice, sizeof notice, error);
      /* Pages that cannot make one volume can still be read one by one. */
      if (!ok && error->code == ES_ERROR_FORMAT && es_pages_count (pages) > 1)
        {
          size_t length = strlen (error->message);

          snprintf (error->message + length, sizeof error->message - length, " (page=N reads page N of the %d alone)",
                    es_pages_count (pages));
        }
    }
  else if (page >= es_pages_count (pages))
    ok = es_error_set (error, ES_ERROR_INVALID, "page=%d: the file has %d page%s (0..%d)", page, es_pages_count (pages),
                       es_pages_count (pages) == 1 ? "" : "s", es_pages_count (pages) - 1);
  else
    ok = es_pages_load (pages, page < 0 ? 0 : page, image, error);
  es_pages_close (pages);
  return ok;
}

/* An optional integer keyword (an int, or anything with __index__, such
 * as NumPy's integers): false, with the exception set, unless it is None
 * (*given stays false) or an integer in 0..INT_MAX. */
static bool
optional_index (PyObject *object, const char *name, int *value, bool *given)
{
  PyObject *index;
  long v;

  *given = object != NULL && object != Py_None;
  if (!*given)
    return true;
  index = PyBool_Check (object) ? NULL : PyNumber_Index (object);
  if (index == NULL)
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_TypeError, "%s must be an integer or None, not %s", name, Py_TYPE (object)->tp_name);
      return false;
    }
  v = PyLong_AsLong (index);
  Py_DECREF (index);
  if (v == -1 && PyErr_Occurred ())
    PyErr_Clear ();
  if (v < 0 || v > INT_MAX)
    {
      PyObject *text = PyObject_Repr (object);
      PyErr_Format (PyExc_ValueError, "%s=%s: expected 0..%d (the first is 0)", name,
                    text ? PyUnicode_AsUTF8 (text) : "?", INT_MAX);
      Py_XDECREF (text);
      return false;
    }
  *value = (int) v;
  return true;
}

PyObject *
es_py_load (PyObject *module, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "path", "levels", "page", "channel", "time", NULL };
  PyObject *path_obj, *path_bytes = NULL, *levels_obj = NULL, *page_obj = NULL, *channel_obj = NULL, *time_obj = NULL,
                      *array, *pixel_size, *value_map;
  EsJob job = ES_JOB_INIT (ES_OP_QUANTIZE);
  EsImage image = { 0 };
  EsVolumeChoice choice = { 0 };
  EsImageMeta meta;
  double width, height, spacing;
  EsError error;
  bool ok, page_given;
  int depth, levels, page = -1;

  (void) module;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O|$OOOO:load", keywords, &path_obj, &levels_obj, &page_obj,
                                    &channel_obj, &time_obj))
    return NULL;
  if (levels_obj != NULL && !es_py_parse_param (es_param (ES_PARAM_LEVELS), levels_obj, &job))
    return NULL;
  if (!optional_index (page_obj, "page", &page, &page_given)
      || !optional_index (channel_obj, "channel", &choice.channel, &choice.channel_given)
      || !optional_index (time_obj, "time", &choice.time, &choice.time_given))
    return NULL;
  if (page_given && (choice.channel_given || choice.time_given))
    {
      PyErr_SetString (PyExc_TypeError, "page= reads one page; channel= and time= choose a volume's planes: give one");
      return NULL;
    }
  if (!PyUnicode_FSConverter (path_obj, &path_bytes))
    return NULL;

  es_error_clear (&error);
  Py_BEGIN_ALLOW_THREADS ok = load_pages (PyBytes_AS_STRING (path_bytes), job.levels, page, &choice, &image, &error);
  Py_END_ALLOW_THREADS Py_DECREF (path_bytes);
  if (!ok)
    {
      es_image_clear (&image);
      return es_py_raise (&error, path_obj);
    }
  depth = image.depth;
  levels = image.levels;
  meta = image.meta;
  array = es_py_array_from_image (&image);
  if (array == NULL)
    return NULL;
  /* The pixel size in the file's unit (None when uncalibrated, its depth
   * None when unknown), and what samples stand for (None: themselves). */
  if (es_image_meta_pixel_size (&meta, &width, &height, &spacing))
    pixel_size = spacing > 0 ? Py_BuildValue ("(ddds)", width, height, spacing, es_image_meta_length_symbol (&meta))
                             : Py_BuildValue ("(ddOs)", width, height, Py_None, es_image_meta_length_symbol (&meta));
  else
    pixel_size = Py_BuildValue ("");
  value_map = meta.stored == ES_STORED_UNSIGNED ? Py_BuildValue ("")
                                                : Py_BuildValue ("(dd)", meta.value_offset, meta.value_scale);
  if (pixel_size == NULL || value_map == NULL)
    {
      Py_DECREF (array);
      Py_XDECREF (pixel_size);
      Py_XDECREF (value_map);
      return NULL;
    }
  return Py_BuildValue ("(NiiNNK)", array, depth, levels, pixel_size, value_map, (unsigned long long) meta.nan_samples);
}

/* ---- save ---- */

static const char *const export_names[] = { "png", "raw16", "txt", "tif", NULL };
static const EsExportFormat export_formats[] = { ES_EXPORT_PNG, ES_EXPORT_RAW16, ES_EXPORT_TEXT, ES_EXPORT_TIFF };
static const char *const range_names[] = { "absolute", "auto", NULL };
/* In EsCompression's order. */
static const char *const compression_names[] = { "fast", "default", "small", NULL };

/* The values to write as an EsImage: a 2-D array, or a 3-D one (planes,
 * rows, columns) as a volume; the caller's samples when they are
 * contiguous and native, else one copy (*owned). */
static bool
values_open (PyObject *object, Py_buffer *view, EsImage *image, void **owned)
{
  EsFormat format;
  bool swap = false;
  char name[64];
  size_t sample, row, plane_bytes;
  Py_ssize_t planes, height, width, plane_step, row_step, column_step;

  *owned = NULL;
  if (!es_py_refuse_masked (object, "the result", "pass its filled(numpy.nan) to write masked pixels as no value"))
    return false;
  if (PyObject_GetBuffer (object, view, PyBUF_RECORDS_RO) != 0)
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_TypeError, "expected a result array (float32 or uint8), not %.200s",
                    Py_TYPE (object)->tp_name);
      return false;
    }
  if (!es_py_buffer_format (view, &format, &swap, name, sizeof name) || swap)
    {
      PyErr_Format (PyExc_TypeError, "a result to save is float32 or uint8 in native byte order, not %s%s",
                    swap ? "byte-swapped " : "", name);
      goto fail;
    }
  if (view->ndim != 2 && view->ndim != 3)
    {
      PyErr_Format (PyExc_ValueError, "a result to save is a 2-D array or a 3-D one (a volume), not %d-D", view->ndim);
      goto fail;
    }
  /* Axes from the last: columns, rows, then planes. */
  planes = view->ndim == 3 ? view->shape[0] : 1;
  height = view->shape[view->ndim - 2];
  width = view->shape[view->ndim - 1];
  row_step = view->strides[view->ndim - 2];
  column_step = view->strides[view->ndim - 1];
  plane_step = view->ndim == 3 ? view->strides[0] : 0;
  if (planes <= 0 || height <= 0 || width <= 0 || height > ES_MAX_SIDE || width > ES_MAX_SIDE)
    {
      if (view->ndim == 3)
        PyErr_Format (PyExc_ValueError, "volume size %zd%s%zd%s%zd is empty or over the limit of %d pixels a side",
                      width, TIMES, height, TIMES, planes, ES_MAX_SIDE);
      else
        PyErr_Format (PyExc_ValueError, "image size %zd%s%zd is empty or over the limit of %d pixels a side", width,
                      TIMES, height, ES_MAX_SIDE);
      goto fail;
    }
  sample = es_format_size (format);
  *image = (EsImage){
    .width = (int) width,
    .height = (int) height,
    .planes = (int) planes,
    .format = format,
    .depth = format == ES_FORMAT_U8    ? 8
             : format == ES_FORMAT_U16 ? 16
                                       : 0,
  };
  row = height == 1 ? (size_t) width * sample : (size_t) row_step;
  plane_bytes = planes == 1 ? row * (size_t) height : (size_t) plane_step;
  if ((width == 1 || column_step == (Py_ssize_t) sample) && row_step > 0 && row >= (size_t) width * sample
      && row % sample == 0 && (planes == 1 || (plane_step > 0 && plane_bytes >= row * (size_t) height))
      && (uintptr_t) view->buf % sample == 0)
    {
      image->pixels = view->buf;
      image->stride = row;
      image->plane_stride = plane_bytes;
      return true;
    }
  *owned = PyMem_RawMalloc ((size_t) planes * height * width * sample);
  if (*owned == NULL)
    {
      PyErr_NoMemory ();
      goto fail;
    }
  for (Py_ssize_t z = 0; z < planes; z++)
    for (Py_ssize_t y = 0; y < height; y++)
      for (Py_ssize_t x = 0; x < width; x++)
        memcpy ((char *) *owned + (((size_t) z * height + y) * width + x) * sample,
                (const char *) view->buf + z * plane_step + y * row_step + x * column_step, sample);
  image->pixels = *owned;
  image->stride = (size_t) width * sample;
  image->plane_stride = image->stride * (size_t) height;
  return true;

fail:
  PyBuffer_Release (view);
  return false;
}

static bool
ends_with (const char *text, const char *suffix)
{
  size_t n = strlen (text), m = strlen (suffix);
  return n >= m && strcmp (text + n - m, suffix) == 0;
}

/* Whether op makes results of this format from some input, 8- or 16-bit. */
static bool
op_makes_format (EsOp op, EsFormat format)
{
  EsJob job = ES_JOB_INIT (op);

  return es_job_output_format (&job, ES_FORMAT_U8) == format || es_job_output_format (&job, ES_FORMAT_U16) == format;
}

/* The operation that made values of this format when op= was not given:
 * the only one whose results have this dtype. */
static bool
op_from_format (EsFormat format, EsOp *op)
{
  int found = -1, count = 0;
  char list[128] = "";
  size_t len = 0;

  for (int i = 0; i < ES_N_OPS; i++)
    if (op_makes_format ((EsOp) i, format))
      {
        found = i, count++;
        len += (size_t) snprintf (list + len, sizeof list - len, "%s%s", len ? ", " : "", es_op_name ((EsOp) i));
      }
  if (count != 1)
    {
      PyErr_Format (PyExc_ValueError, "op= is needed to save a %s array (%s)", es_py_dtype_name (format),
                    count ? list : "no operation gives one");
      return false;
    }
  *op = (EsOp) found;
  return true;
}

/* format= when given (*format_index ≥ 0), else from the path's suffix (.txt,
 * .tif, .tiff; PNG otherwise, but TIFF for a volume unless named .png);
 * colorbar= only on a PNG heatmap; a volume only as a multi-page TIFF. */
static bool
choose_export_format (const char *path, int *format_index, bool colorbar, int planes)
{
  if (*format_index < 0)
    *format_index = ends_with (path, ".txt")                                ? 2
                    : ends_with (path, ".tif") || ends_with (path, ".tiff") ? 3
                    : planes > 1 && !ends_with (path, ".png")               ? 3
                                                                            : 0;
  if (planes > 1 && export_formats[*format_index] != ES_EXPORT_TIFF)
    {
      PyErr_Format (PyExc_ValueError, "a volume of %d planes is saved as a multi-page TIFF (format='tif'), not %s",
                    planes, export_names[*format_index]);
      return false;
    }
  if (colorbar && export_formats[*format_index] != ES_EXPORT_PNG)
    {
      PyErr_Format (PyExc_ValueError, "colorbar applies to PNG heatmaps only, not to %s",
                    export_formats[*format_index] == ES_EXPORT_TEXT   ? "text matrices"
                    : export_formats[*format_index] == ES_EXPORT_TIFF ? "TIFF"
                                                                      : "raw16");
      return false;
    }
  return true;
}

/* The scale and metadata es_pipeline_describe gives the CLI, except that
 * the values are already in the units named: bits arrive as bits (the CLI
 * keeps nats and converts as it writes), so the range is in bits and
 * nothing is converted again. */
static bool
describe_values (EsOp op, PyObject *colormap_obj, const EsJob *job, EsUnits units, EsRangeMode range, EsResult *result)
{
  EsViewParams params;

  es_view_params_init (&params, op);
  if (colormap_obj != Py_None)
    {
      const char *name = PyUnicode_Check (colormap_obj) ? PyUnicode_AsUTF8 (colormap_obj) : NULL;

      if (name == NULL || !es_colormap_from_name (name, &params.colormap, &params.reversed))
        {
          PyErr_Clear ();
          PyErr_Format (PyExc_ValueError,
                        "colormap=%R: unknown colormap (viridis, magma, inferno, cividis, gray, or one of them "
                        "with _r)",
                        colormap_obj);
          return false;
        }
    }
  params.job = *job;
  params.units = units;
  params.range = range;
  es_pipeline_describe (&params, result);
  if (range == ES_RANGE_ABSOLUTE)
    result->scale.hi *= result->info.unit_scale;
  result->info.unit_scale = 1.0;
  return true;
}

/* The job that made these values, parsed as entropy() parses it, with a
 * mask of the values' size. */
static bool
parse_values_job (EsOp op, const EsPyJobKeywords *kw, const EsImage *values, EsJob *job, EsUnits *units,
                  EsPyDefinition *held)
{
  *job = (EsJob) ES_JOB_INIT (op);
  if (!es_py_parse_job (op, kw, job, units, held))
    return false;
  if (job->definition.mask != NULL
      && (job->definition.mask->width != values->width || job->definition.mask->height != values->height
          || es_image_planes (job->definition.mask) != es_image_planes (values)))
    {
      if (es_image_planes (values) > 1 || es_image_planes (job->definition.mask) > 1)
        PyErr_Format (PyExc_ValueError, "mask size %d%s%d%s%d differs from the values' %d%s%d%s%d",
                      job->definition.mask->width, TIMES, job->definition.mask->height, TIMES,
                      es_image_planes (job->definition.mask), values->width, TIMES, values->height, TIMES,
                      es_image_planes (values));
      else
        PyErr_Format (PyExc_ValueError, "mask size %d%s%d differs from the values' %d%s%d", job->definition.mask->width,
                      TIMES, job->definition.mask->height, values->width, TIMES, values->height);
      return false;
    }
  return true;
}

/* save's pixel_size=: (width, height, depth or None, unit) as Image.pixel_size
 * gives it, recorded as the CLI records an input's (TIFF resolution, pHYs). */
static bool
parse_pixel_size (PyObject *object, EsImageMeta *meta)
{
  double width, height, depth = 0;
  PyObject *depth_obj;
  const char *unit_name;
  EsLengthUnit unit;

  if (!PyTuple_Check (object) || !PyArg_ParseTuple (object, "ddOs", &width, &height, &depth_obj, &unit_name))
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_TypeError,
                    "pixel_size=%R: expected (width, height, depth or None, unit), as "
                    "Image.pixel_size gives it",
                    object);
      return false;
    }
  if (depth_obj != Py_None && ((depth = PyFloat_AsDouble (depth_obj)) == -1.0 && PyErr_Occurred ()))
    return false;
  if (!es_length_unit_from_name (unit_name, &unit))
    {
      PyErr_Format (PyExc_ValueError, "pixel_size=%R: unknown unit %s (nm, µm, mm, cm, m, in)", object, unit_name);
      return false;
    }
  es_image_meta_set_pixel_size (meta, width, height, depth, unit);
  if (!es_image_meta_calibrated (meta))
    {
      PyErr_Format (PyExc_ValueError, "pixel_size=%R: the width and height must be positive", object);
      return false;
    }
  return true;
}

PyObject *
es_py_save (PyObject *module, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "path",  "array",    "op",          "format",     "colormap",
                              "range", "colorbar", "compression", "pixel_size", NULL };
  PyObject *path_obj, *array_obj, *op_obj = Py_None, *format_obj = Py_None, *colormap_obj = Py_None, *rest;
  PyObject *pixel_size_obj = Py_None;
  PyObject *range_obj = NULL, *compression_obj = NULL;
  PyObject *path_bytes = NULL;
  EsPyJobKeywords kw = { .units = NULL };
  EsPyDefinition held = { 0 };
  int colorbar = 0, format_index = -1, range = ES_RANGE_ABSOLUTE, compression = -1;
  EsUnits units;
  EsOp op = ES_OP_ENTROPY;
  EsJob job;
  EsResult result = { 0 };
  Py_buffer view;
  void *owned = NULL;
  EsError error;
  const char *path;
  bool ok;

  (void) module;
  /* The job's keywords follow the tables; save's own are parsed here. */
  if (!es_py_split_job_keywords ("save", keywords, kwargs, &kw, &rest))
    return NULL;
  ok = PyArg_ParseTupleAndKeywords (args, rest, "OO|$OOOOpOO:save", keywords, &path_obj, &array_obj, &op_obj,
                                    &format_obj, &colormap_obj, &range_obj, &colorbar, &compression_obj,
                                    &pixel_size_obj);
  Py_XDECREF (rest);
  if (!ok)
    return NULL;
  if (op_obj != Py_None && !es_py_parse_op (op_obj, &op))
    return NULL;
  if (format_obj != Py_None && !es_py_parse_choice (format_obj, "format", export_names, &format_index))
    return NULL;
  if (range_obj != NULL && !es_py_parse_choice (range_obj, "range", range_names, &range))
    return NULL;
  if (compression_obj != NULL && compression_obj != Py_None
      && !es_py_parse_choice (compression_obj, "compression", compression_names, &compression))
    return NULL;
  if (!values_open (array_obj, &view, &result.values, &owned))
    return NULL;

  if (op_obj == Py_None && !op_from_format (result.values.format, &op))
    goto fail;
  if (!op_makes_format (op, result.values.format))
    {
      EsJob job = ES_JOB_INIT (op);

      PyErr_Format (PyExc_TypeError, "%s results are %s arrays, not %s", es_op_name (op),
                    es_py_dtype_name (es_job_output_format (&job, ES_FORMAT_U8)),
                    es_py_dtype_name (result.values.format));
      goto fail;
    }
  if (!parse_values_job (op, &kw, &result.values, &job, &units, &held))
    goto fail;
  if (!PyUnicode_FSConverter (path_obj, &path_bytes))
    goto fail;
  path = PyBytes_AS_STRING (path_bytes);
  if (!choose_export_format (path, &format_index, colorbar, es_image_planes (&result.values)))
    goto fail;
  if (!describe_values (op, colormap_obj, &job, units, (EsRangeMode) range, &result))
    goto fail;
  if (pixel_size_obj != Py_None && !parse_pixel_size (pixel_size_obj, &result.info.pixel_size))
    goto fail;

  es_error_clear (&error);
  Py_BEGIN_ALLOW_THREADS
    /* This thread's choice only: other Python threads may be saving. */
    es_save_set_thread_compression (compression);
  ok = es_image_planes (&result.values) > 1
         ? es_volume_export_tiff (path, &result, &error)
         : es_pipeline_export (path, export_formats[format_index], &result, colorbar, &error);
  es_save_set_thread_compression (-1);
  Py_END_ALLOW_THREADS Py_DECREF (path_bytes);
  PyMem_RawFree (owned);
  PyBuffer_Release (&view);
  es_py_definition_release (&held);
  if (!ok)
    return es_py_raise (&error, path_obj);
  Py_RETURN_NONE;

fail:
  Py_XDECREF (path_bytes);
  PyMem_RawFree (owned);
  PyBuffer_Release (&view);
  es_py_definition_release (&held);
  return NULL;
}
