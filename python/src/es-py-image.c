/* SPDX-License-Identifier: MIT */
/* NumPy arrays and other buffers as EsImage: zero-copy when rows are contiguous, one copy otherwise, colour to gray. */
#include "es-py.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Below this many pixels a pass stays on one thread: starting an OpenMP
 * team costs more than it saves. */
#define PARALLEL_PIXELS 65536

static void
no_release (void *pixels)
{
  (void) pixels;
}

bool
es_py_buffer_format (const Py_buffer *view, EsFormat *format, bool *swap, char *name, size_t size)
{
  const char *f = view->format ? view->format : "B";
  char order = '@';
  bool little;
  int bits = (int) view->itemsize * 8;

  if (*f != '\0' && strchr ("@=<>!", *f) != NULL)
    order = *f++;
  little = order == '<' || (order != '>' && order != '!' && PY_LITTLE_ENDIAN);
  *swap = false;
  if (f[0] == '\0' || f[1] != '\0')
    {
      snprintf (name, size, "buffer format '%s'", view->format ? view->format : "");
      return false;
    }
  switch (f[0])
    {
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
      snprintf (name, size, "uint%d", bits);
      if (view->itemsize == 1 || view->itemsize == 2)
        {
          *format = view->itemsize == 1 ? ES_FORMAT_U8 : ES_FORMAT_U16;
          *swap = view->itemsize == 2 && little != PY_LITTLE_ENDIAN;
          return true;
        }
      return false;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n': snprintf (name, size, "int%d", bits); return false;
    case 'f':
      snprintf (name, size, "float%d", bits);
      if (view->itemsize != 4)
        return false;
      /* float32: a result (out=, save); no operation takes it as input. */
      *format = ES_FORMAT_F32;
      *swap = little != PY_LITTLE_ENDIAN;
      return true;
    case 'e':
    case 'd': snprintf (name, size, "float%d", bits); return false;
    case 'g': snprintf (name, size, "longdouble"); return false;
    case '?': snprintf (name, size, "bool"); return false;
    default: snprintf (name, size, "buffer format '%s'", view->format); return false;
    }
}

/* "(2, 3, 5)" */
static void
shape_text (const Py_buffer *view, char *text, size_t size)
{
  size_t len = (size_t) snprintf (text, size, "(");

  for (int i = 0; i < view->ndim && len < size; i++)
    len += (size_t) snprintf (text + len, size - len, "%s%zd", i ? ", " : "", view->shape[i]);
  if (len < size)
    snprintf (text + len, size - len, "%s)", view->ndim == 1 ? "," : "");
}

/* Checks the sides against ES_MAX_SIDE and the pixel budget with the
 * messages of es_image_check_volume_size, before any allocation; a 2-D
 * image (volume false) is named by two sides, a volume by three. */
static bool
check_size (bool volume, Py_ssize_t planes, Py_ssize_t height, Py_ssize_t width, EsFormat format)
{
  EsError error;
  char size[96];

  if (volume)
    snprintf (size, sizeof size, "volume size %zd%s%zd%s%zd", width, TIMES, height, TIMES, planes);
  else
    snprintf (size, sizeof size, "image size %zd%s%zd", width, TIMES, height);
  if (height <= 0 || width <= 0 || planes <= 0)
    {
      PyErr_Format (PyExc_ValueError, "%s is empty", size);
      return false;
    }
  if (height > ES_MAX_SIDE || width > ES_MAX_SIDE || planes > ES_MAX_SIDE)
    {
      PyErr_Format (PyExc_ValueError, "%s: a side is over the limit of %d pixels", size, ES_MAX_SIDE);
      return false;
    }
  es_error_clear (&error);
  if (!es_image_check_volume_size ((int) width, (int) height, (int) planes, format, &error))
    {
      es_py_raise (&error, NULL);
      return false;
    }
  return true;
}

/* The lowest and one past the highest byte a strided buffer touches. */
static void
buffer_extent (const Py_buffer *view, uintptr_t *lo, uintptr_t *hi)
{
  intptr_t low = 0, high = view->itemsize;

  for (int i = 0; i < view->ndim; i++)
    {
      intptr_t span = (intptr_t) (view->shape[i] - 1) * (intptr_t) view->strides[i];
      if (span < 0)
        low += span;
      else
        high += span;
    }
  *lo = (uintptr_t) view->buf + (uintptr_t) low;
  *hi = (uintptr_t) view->buf + (uintptr_t) high;
}

/* Whether the engine can read or write a buffer of planes × height × width
 * samples with these steps (bytes between neighbouring planes, rows and
 * columns) in place: samples adjacent, rows and then planes at positive,
 * aligned distances that do not overlap. Sides of 1 have no meaningful
 * step, so they do not decide. Sets the row and plane strides. */
static bool
direct_strides (const void *buf, const Py_ssize_t sides[3], const Py_ssize_t steps[3], size_t sample, size_t *stride,
                size_t *plane_stride)
{
  Py_ssize_t s = (Py_ssize_t) sample;
  Py_ssize_t column = sides[2] == 1 ? s : steps[2];
  Py_ssize_t row = sides[1] == 1 ? sides[2] * s : steps[1];
  Py_ssize_t plane = sides[0] == 1 ? sides[1] * row : steps[0];

  if (column != s || row < sides[2] * s || row % s != 0 || plane < sides[1] * row || plane % s != 0
      || (uintptr_t) buf % sample != 0)
    return false;
  *stride = (size_t) row;
  *plane_stride = (size_t) plane;
  return true;
}

/* A buffer's spatial sides and steps as (planes, rows, columns): a 2-D
 * buffer is one plane. */
static void
buffer_sides (const Py_buffer *view, Py_ssize_t sides[3], Py_ssize_t steps[3])
{
  int first = view->ndim == 2 ? 1 : 0;

  sides[0] = 1, steps[0] = 0;
  for (int i = 0; i < view->ndim; i++)
    sides[first + i] = view->shape[i], steps[first + i] = view->strides[i];
}

/* Reads an entroscope.Image's nan_samples (None or missing: 0): with any,
 * its sample 0 stands for a float TIFF's NaN. */
static bool
image_nan_samples (PyObject *object, uint64_t *count)
{
  PyObject *attr = PyObject_GetAttrString (object, "nan_samples");

  *count = 0;
  if (attr == NULL)
    {
      if (!PyErr_ExceptionMatches (PyExc_AttributeError))
        return false;
      PyErr_Clear ();
      return true;
    }
  if (attr != Py_None)
    *count = PyLong_AsUnsignedLongLong (attr);
  Py_DECREF (attr);
  return !PyErr_Occurred ();
}

/* Reads an int attribute of an entroscope.Image (None or missing: 0). */
static bool
image_attribute (PyObject *object, const char *name, int *value)
{
  PyObject *attr = PyObject_GetAttrString (object, name);
  long v;

  *value = 0;
  if (attr == NULL)
    {
      if (!PyErr_ExceptionMatches (PyExc_AttributeError))
        return false;
      PyErr_Clear ();
      return true;
    }
  if (attr == Py_None)
    {
      Py_DECREF (attr);
      return true;
    }
  v = PyLong_AsLong (attr);
  Py_DECREF (attr);
  if (v == -1 && PyErr_Occurred ())
    return false;
  *value = v < 0 || v > 65536 ? -1 : (int) v;
  return true;
}

/* The axis that channel_axis names in an array of ndim dimensions, or -1
 * with a ValueError. */
static int
channel_axis_of (PyObject *channel_axis, int ndim)
{
  long axis;

  if (!PyIndex_Check (channel_axis) || PyBool_Check (channel_axis))
    {
      PyErr_Format (PyExc_TypeError, "channel_axis must be an integer or None, not %.100s",
                    Py_TYPE (channel_axis)->tp_name);
      return -1;
    }
  axis = PyLong_AsLong (channel_axis);
  if (axis == -1 && PyErr_Occurred ())
    return -1;
  if (axis < -ndim || axis >= ndim)
    {
      PyErr_Format (PyExc_ValueError, "channel_axis=%ld is out of range for an array of %d dimensions", axis, ndim);
      return -1;
    }
  return (int) (axis < 0 ? axis + ndim : axis);
}

/* The spatial sides (planes, rows, columns) and channels of the buffer, as
 * the convention of scikit-image reads them: a 2-D array is an image, a
 * 3-D array a volume, and colour has its channel_axis (3 or 4 channels,
 * reduced to gray). NULL: not given, None: no channels. */
static bool
input_shape (EsPyInput *input, PyObject *channel_axis)
{
  const Py_buffer *view = &input->view;
  Py_ssize_t shape[3], strides[3];
  char text[128];
  int ndim = 0, axis = -1;

  shape_text (view, text, sizeof text);
  if (channel_axis != NULL && channel_axis != Py_None)
    {
      if ((axis = channel_axis_of (channel_axis, view->ndim)) < 0)
        return false;
      if (view->ndim != 3 && view->ndim != 4)
        {
          PyErr_Format (PyExc_ValueError,
                        "with channel_axis, expected a colour image (rows, columns, channels) or a colour volume "
                        "(planes, rows, columns, channels), not an array of shape %s",
                        text);
          return false;
        }
      if (view->shape[axis] != 3 && view->shape[axis] != 4)
        {
          PyErr_Format (PyExc_ValueError,
                        "channel_axis=%d of an array of shape %s has %zd channels; 3 (RGB) or 4 (RGBA) are "
                        "reduced to gray",
                        axis, text, view->shape[axis]);
          return false;
        }
      input->channels = (int) view->shape[axis];
      input->channel_step = view->strides[axis];
    }
  else
    {
      input->channels = 1;
      /* (H, W, 3) was a colour image before volumes: it is ambiguous now. */
      if (channel_axis == NULL && view->ndim == 3 && (view->shape[2] == 3 || view->shape[2] == 4))
        {
          PyErr_Format (PyExc_ValueError,
                        "an array of shape %s is ambiguous: a 3-D array is a volume (planes, rows, columns); pass "
                        "channel_axis=-1 for a colour image (reduced to gray with BT.709), or channel_axis=None "
                        "for a volume of %zd planes",
                        text, view->shape[0]);
          return false;
        }
    }
  for (int i = 0; i < view->ndim; i++)
    if (i != axis && ndim < 3)
      shape[ndim] = view->shape[i], strides[ndim++] = view->strides[i];
  if (view->ndim - (axis >= 0) != ndim || (ndim != 2 && ndim != 3))
    {
      PyErr_Format (PyExc_ValueError,
                    "expected a 2-D image (rows, columns) or a 3-D volume (planes, rows, columns), with "
                    "channel_axis for colour, not an array of shape %s",
                    text);
      return false;
    }
  input->volume = ndim == 3;
  input->sides[0] = 1, input->steps[0] = 0;
  for (int i = 0; i < ndim; i++)
    input->sides[3 - ndim + i] = shape[i], input->steps[3 - ndim + i] = strides[i];
  return true;
}

bool
es_py_input_open (PyObject *object, int depth, PyObject *channel_axis, EsPyInput *input)
{
  Py_buffer *view = &input->view;
  EsFormat format;
  char name[64];
  int bits, levels = 0;
  uint64_t nan_samples = 0;
  size_t sample, stride, plane_stride;

  memset (input, 0, sizeof *input);
  if (!es_py_refuse_masked (object, "the image",
                            "entroscope.entropy honours it (masked pixels count in no window); elsewhere pass "
                            "its filled(value) or its data"))
    return false;
  if (PyObject_GetBuffer (object, view, PyBUF_RECORDS_RO) != 0)
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_TypeError,
                    "expected an image: a uint8 or uint16 array that exposes the buffer protocol "
                    "(a NumPy array), not %.200s",
                    Py_TYPE (object)->tp_name);
      return false;
    }
  input->have_view = true;

  if (!es_py_buffer_format (view, &format, &input->swap, name, sizeof name) || format == ES_FORMAT_F32)
    {
      if (strncmp (name, "float", 5) == 0)
        PyErr_Format (PyExc_TypeError,
                      "%s input cannot be processed; gray uint8 or uint16 is needed (float samples have no "
                      "definition here: scale them to integers first, e.g. "
                      "np.round(image * 65535).astype(np.uint16) for values in 0..1)",
                      name);
      else
        PyErr_Format (PyExc_TypeError, "%s input cannot be processed; gray uint8 or uint16 is needed", name);
      goto fail;
    }
  sample = es_format_size (format);
  bits = (int) sample * 8;

  if (!input_shape (input, channel_axis)
      || !check_size (input->volume, input->sides[0], input->sides[1], input->sides[2], format))
    goto fail;
  input->planes = (int) input->sides[0];
  input->height = (int) input->sides[1];
  input->width = (int) input->sides[2];

  /* An entroscope.Image says how many bits its samples use and whether
   * they already are levels (a text matrix); a plain array uses them all. */
  if (es_py_image_type != NULL && PyObject_TypeCheck (object, es_py_image_type))
    {
      int image_depth;

      if (!image_attribute (object, "levels", &levels) || !image_nan_samples (object, &nan_samples))
        goto fail;
      if (depth <= 0)
        {
          if (!image_attribute (object, "depth", &image_depth))
            goto fail;
          depth = image_depth;
        }
      if (levels < 0 || levels > ES_LEVELS_MAX)
        {
          PyErr_Format (PyExc_ValueError, "the image's levels attribute must be 0 or 2..%d", ES_LEVELS_MAX);
          goto fail;
        }
    }
  if (depth <= 0)
    depth = bits;
  if (depth > bits)
    {
      PyErr_Format (PyExc_ValueError, "depth %d does not fit %s samples (1..%d)", depth, name, bits);
      goto fail;
    }

  input->image = (EsImage){
    .width = input->width,
    .height = input->height,
    .stride = (size_t) input->width * sample,
    .planes = input->volume ? input->planes : 0,
    .plane_stride = (size_t) input->width * input->height * sample,
    .format = format,
    .depth = depth,
    .levels = levels,
    /* Entropy masks its NaN out (es_job_mask_nan), as the CLI's does. */
    .meta = { .stored = nan_samples > 0 ? ES_STORED_FLOAT : ES_STORED_UNSIGNED, .nan_samples = nan_samples },
    .release = no_release,
  };
  if (levels > 0)
    input->limit = (unsigned) levels;
  else if (depth < bits)
    input->limit = 1u << depth;

  if (input->channels == 1 && !input->swap
      && direct_strides (view->buf, input->sides, input->steps, sample, &stride, &plane_stride))
    {
      input->mode = ES_PY_INPUT_WRAP;
      input->image.stride = stride;
      input->image.plane_stride = input->volume ? plane_stride : 0;
    }
  else
    input->mode = input->channels == 1 ? ES_PY_INPUT_COPY : ES_PY_INPUT_LUMA;
  return true;

fail:
  es_py_input_close (input);
  return false;
}

/* BT.709 luma of stored values rounded half away from zero, in the order and
 * precision of app/io/es-png-read.c (DESIGN.md §1), so that an RGB array and
 * the same PNG loaded by the CLI give the same gray samples. */
static inline long
luma (double r, double g, double b)
{
  return lround (0.2126 * r + 0.7152 * g + 0.0722 * b);
}

#define SAMPLE_AT(type, base, offset) (*(const type *) ((const char *) (base) + (offset)))

/* The caller's row y of the volume's rows (plane y / height, row y % height). */
static const char *
source_row (const EsPyInput *input, long long y)
{
  return (const char *) input->view.buf + (y / input->height) * input->steps[0] + (y % input->height) * input->steps[1];
}

/* Copies every row of every plane, tightly packed. */
static void
copy_rows (EsPyInput *input)
{
  Py_ssize_t s1 = input->steps[2], s2 = input->channel_step;
  int width = input->width;
  long long height = (long long) input->height * input->planes;
  bool swap = input->swap;
  long long pixels = (long long) width * height;

  if (input->image.format == ES_FORMAT_U8)
    {
      uint8_t *dst = input->owned;

#pragma omp parallel for schedule(static) if (pixels > PARALLEL_PIXELS)
      for (long long y = 0; y < height; y++)
        {
          const char *row = source_row (input, y);
          uint8_t *out = dst + (size_t) y * width;

          if (input->mode == ES_PY_INPUT_COPY)
            for (int x = 0; x < width; x++)
              out[x] = SAMPLE_AT (uint8_t, row, x * s1);
          else
            for (int x = 0; x < width; x++)
              {
                const char *p = row + x * s1;
                long v = luma (SAMPLE_AT (uint8_t, p, 0), SAMPLE_AT (uint8_t, p, s2), SAMPLE_AT (uint8_t, p, 2 * s2));
                out[x] = (uint8_t) (v > 255 ? 255 : v);
              }
        }
    }
  else
    {
      uint16_t *dst = input->owned;

#pragma omp parallel for schedule(static) if (pixels > PARALLEL_PIXELS)
      for (long long y = 0; y < height; y++)
        {
          const char *row = source_row (input, y);
          uint16_t *out = dst + (size_t) y * width;

          for (int x = 0; x < width; x++)
            {
              const char *p = row + x * s1;
              uint16_t c[3];

              for (int k = 0; k < (input->mode == ES_PY_INPUT_COPY ? 1 : 3); k++)
                {
                  uint16_t v;
                  memcpy (&v, p + k * s2, sizeof v); /* the buffer need not be aligned */
                  c[k] = swap ? (uint16_t) (v >> 8 | v << 8) : v;
                }
              if (input->mode == ES_PY_INPUT_COPY)
                out[x] = c[0];
              else
                {
                  long v = luma (c[0], c[1], c[2]);
                  out[x] = (uint16_t) (v > 65535 ? 65535 : v);
                }
            }
        }
    }
}

/* The first sample at or above input->limit, if any. */
static bool
check_limit (const EsPyInput *input, EsError *error)
{
  const EsImage *image = &input->image;
  unsigned limit = input->limit, max = 0;
  long long rows = (long long) image->height * es_image_planes (image);
  long long pixels = (long long) image->width * rows;

#pragma omp parallel for schedule(static) reduction(max : max) if (pixels > PARALLEL_PIXELS)
  for (long long r = 0; r < rows; r++)
    {
      const void *row = es_image_voxel_row (image, (int) (r / image->height), (int) (r % image->height));
      for (int x = 0; x < image->width; x++)
        {
          unsigned v = image->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x] : ((const uint16_t *) row)[x];
          max = v > max ? v : max;
        }
    }
  if (max < limit)
    return true;
  for (int z = 0; z < es_image_planes (image); z++)
    for (int y = 0; y < image->height; y++)
      {
        const void *row = es_image_voxel_row (image, z, y);
        char where[48] = "";

        for (int x = 0; x < image->width; x++)
          {
            unsigned v = image->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x] : ((const uint16_t *) row)[x];
            if (v < limit)
              continue;
            if (input->volume)
              snprintf (where, sizeof where, "plane %d, ", z);
            if (image->levels > 0)
              return es_error_set (error, ES_ERROR_INVALID,
                                   "%srow %d, column %d: value %u is not below %d levels (the image holds "
                                   "quantized levels)",
                                   where, y, x, v, image->levels);
            return es_error_set (error, ES_ERROR_INVALID,
                                 "%srow %d, column %d: sample %u does not fit depth %d (0..%u)", where, y, x, v,
                                 image->depth, limit - 1);
          }
      }
  return true;
}

bool
es_py_input_materialize (EsPyInput *input, EsError *error)
{
  if (input->device)
    return true;
  if (input->mode == ES_PY_INPUT_WRAP)
    input->image.pixels = input->view.buf;
  else
    {
      size_t stride = (size_t) input->width * es_format_size (input->image.format);
      size_t bytes = stride * input->height * input->planes;

      input->owned = malloc (bytes);
      if (input->owned == NULL && input->volume)
        return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to copy a %d×%d×%d volume",
                             bytes >> 20, input->width, input->height, input->planes);
      if (input->owned == NULL)
        return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to copy a %d×%d image", bytes >> 20,
                             input->width, input->height);
      copy_rows (input);
      input->image.pixels = input->owned;
      input->image.stride = stride;
      input->image.plane_stride = input->volume ? stride * input->height : 0;
    }
  return input->limit == 0 || check_limit (input, error);
}

void
es_py_input_close (EsPyInput *input)
{
  free (input->owned);
  input->owned = NULL;
  if (input->have_view)
    PyBuffer_Release (&input->view);
  input->have_view = false;
  Py_CLEAR (input->device_owner);
}

/* ---- outputs ---- */

const char *
es_py_dtype_name (EsFormat format)
{
  switch (format)
    {
    case ES_FORMAT_U8: return "uint8";
    case ES_FORMAT_U16: return "uint16";
    case ES_FORMAT_F32: return "float32";
    }
  return "?";
}

/* Host memory for a new result plus the input, against the machine's, as
 * the engine checks it (but before the result is allocated). */
static bool
check_memory (const EsPyInput *input, EsFormat format)
{
  uint64_t pixels = (uint64_t) input->width * (uint64_t) input->height * (uint64_t) input->planes;
  uint64_t needed = pixels * (es_format_size (format) + es_format_size (input->image.format));
  long pages, page_size;

  if (pixels < (1u << 24))
    return true;
  pages = sysconf (_SC_PHYS_PAGES);
  page_size = sysconf (_SC_PAGESIZE);
  if (pages > 0 && page_size > 0 && needed > (uint64_t) pages * (uint64_t) page_size)
    {
      char size[64];

      if (input->volume)
        snprintf (size, sizeof size, "%d%s%d%s%d", input->width, TIMES, input->height, TIMES, input->planes);
      else
        snprintf (size, sizeof size, "%d%s%d", input->width, TIMES, input->height);
      PyErr_Format (PyExc_MemoryError, "a %s job needs %.1f GiB of memory; this machine has %.1f GiB", size,
                    (double) needed / (1 << 30), (double) pages * (double) page_size / (1 << 30));
      return false;
    }
  return true;
}

bool
es_py_output_open (PyObject *out, const EsPyInput *input, EsFormat format, EsPyOutput *output)
{
  size_t sample = es_format_size (format);
  int depth = format == ES_FORMAT_U8 ? 8 : format == ES_FORMAT_U16 ? 16 : 0;

  memset (output, 0, sizeof *output);
  output->image = (EsImage){
    .width = input->width,
    .height = input->height,
    .stride = (size_t) input->width * sample,
    .planes = input->image.planes,
    .plane_stride = input->volume ? (size_t) input->width * input->height * sample : 0,
    .format = format,
    .depth = depth,
    .release = no_release,
  };

  if (out == NULL || out == Py_None)
    {
      npy_intp dims[3] = { input->planes, input->height, input->width };

      if (!check_size (input->volume, input->planes, input->height, input->width, format)
          || !check_memory (input, format))
        return false;
      output->result = PyArray_SimpleNew (input->volume ? 3 : 2, input->volume ? dims : dims + 1,
                                          format == ES_FORMAT_F32  ? NPY_FLOAT32
                                          : format == ES_FORMAT_U8 ? NPY_UINT8
                                                                   : NPY_UINT16);
      if (output->result == NULL)
        return false;
      output->image.pixels = PyArray_DATA ((PyArrayObject *) output->result);
      return true;
    }

  {
    Py_buffer *view = &output->view;
    EsFormat out_format;
    bool swap;
    char name[64], shape[128];
    Py_ssize_t sides[3], steps[3];
    size_t stride, plane_stride;
    bool direct;

    if (PyObject_GetBuffer (out, view, PyBUF_RECORDS) != 0)
      {
        PyErr_Clear ();
        if (PyObject_CheckBuffer (out))
          PyErr_Format (PyExc_ValueError, "out= is read-only; the result needs a writable %s array",
                        es_py_dtype_name (format));
        else
          PyErr_Format (PyExc_TypeError, "out= must be a writable %s array, not %.200s", es_py_dtype_name (format),
                        Py_TYPE (out)->tp_name);
        return false;
      }
    output->have_view = true;
    if (!es_py_buffer_format (view, &out_format, &swap, name, sizeof name) || out_format != format || swap)
      {
        PyErr_Format (PyExc_TypeError, "out= must be a %s array in native byte order, not %s%s",
                      es_py_dtype_name (format), swap ? "byte-swapped " : "", name);
        goto fail;
      }
    if (view->ndim != (input->volume ? 3 : 2) || view->shape[view->ndim - 2] != input->height
        || view->shape[view->ndim - 1] != input->width || (input->volume && view->shape[0] != input->planes))
      {
        shape_text (view, shape, sizeof shape);
        if (input->volume)
          PyErr_Format (PyExc_ValueError, "out= has shape %s; the result needs (%d, %d, %d)", shape, input->planes,
                        input->height, input->width);
        else
          PyErr_Format (PyExc_ValueError, "out= has shape %s; the result needs (%d, %d)", shape, input->height,
                        input->width);
        goto fail;
      }
    buffer_sides (view, sides, steps);
    direct = direct_strides (view->buf, sides, steps, sample, &stride, &plane_stride);
    /* In place over the caller's input (sharpen into its own image) would
     * read rows already written: such a result goes through a temporary. */
    if (direct && input->mode == ES_PY_INPUT_WRAP)
      {
        uintptr_t in_lo, in_hi, out_lo, out_hi;

        buffer_extent (&input->view, &in_lo, &in_hi);
        buffer_extent (view, &out_lo, &out_hi);
        if (in_lo < out_hi && out_lo < in_hi)
          direct = false;
      }
    if (direct)
      {
        output->image.pixels = view->buf;
        output->image.stride = stride;
        output->image.plane_stride = input->volume ? plane_stride : 0;
      }
    else
      {
        output->owned = PyMem_RawMalloc ((size_t) input->width * input->height * input->planes * sample);
        if (output->owned == NULL)
          {
            PyErr_NoMemory ();
            goto fail;
          }
        output->image.pixels = output->owned;
        output->copy_back = true;
      }
    Py_INCREF (out);
    output->result = out;
    return true;
  }

fail:
  es_py_output_close (output, false);
  return false;
}

bool
es_py_output_finish (EsPyOutput *output, EsError *error)
{
  const Py_buffer *view = &output->view;
  const EsImage *image = &output->image;
  size_t sample = es_format_size (image->format);
  Py_ssize_t sides[3], steps[3];

  (void) error;
  if (!output->copy_back)
    return true;
  buffer_sides (view, sides, steps);
  for (int z = 0; z < es_image_planes (image); z++)
    for (int y = 0; y < image->height; y++)
      {
        const char *src = es_image_voxel_row (image, z, y);
        char *dst = (char *) view->buf + z * steps[0] + y * steps[1];
        for (int x = 0; x < image->width; x++)
          memcpy (dst + x * steps[2], src + x * sample, sample);
      }
  return true;
}

void
es_py_output_close (EsPyOutput *output, bool keep)
{
  PyMem_RawFree (output->owned);
  output->owned = NULL;
  if (output->have_view)
    PyBuffer_Release (&output->view);
  output->have_view = false;
  Py_CLEAR (output->device_owner);
  if (!keep)
    Py_CLEAR (output->result);
}
