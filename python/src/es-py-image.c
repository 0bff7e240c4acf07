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
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
      snprintf (name, size, "uint%d", bits);
      if (view->itemsize == 1 || view->itemsize == 2)
        {
          *format = view->itemsize == 1 ? ES_FORMAT_U8 : ES_FORMAT_U16;
          *swap = view->itemsize == 2 && little != PY_LITTLE_ENDIAN;
          return true;
        }
      return false;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
      snprintf (name, size, "int%d", bits);
      return false;
    case 'f':
      snprintf (name, size, "float%d", bits);
      if (view->itemsize != 4)
        return false;
      /* float32: a result (out=, save); no operation takes it as input. */
      *format = ES_FORMAT_F32;
      *swap = little != PY_LITTLE_ENDIAN;
      return true;
    case 'e': case 'd':
      snprintf (name, size, "float%d", bits);
      return false;
    case 'g':
      snprintf (name, size, "longdouble");
      return false;
    case '?':
      snprintf (name, size, "bool");
      return false;
    default:
      snprintf (name, size, "buffer format '%s'", view->format);
      return false;
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

/* Checks a side pair against ES_MAX_SIDE and the pixel budget with the
 * messages of es_image_check_size, before any allocation. */
static bool
check_size (Py_ssize_t height, Py_ssize_t width, EsFormat format)
{
  EsError error;

  if (height <= 0 || width <= 0)
    {
      PyErr_Format (PyExc_ValueError, "image size %zd%s%zd is empty", width, TIMES, height);
      return false;
    }
  if (height > ES_MAX_SIDE || width > ES_MAX_SIDE)
    {
      PyErr_Format (PyExc_ValueError, "image size %zd%s%zd: a side is over the limit of %d pixels", width, TIMES,
                    height, ES_MAX_SIDE);
      return false;
    }
  es_error_clear (&error);
  if (!es_image_check_size ((int) width, (int) height, format, &error))
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

/* The row stride of a 2-D buffer the engine can read or write in place
 * (samples adjacent, rows at a positive, aligned distance), else 0. Sides
 * of 1 have no meaningful stride, so they do not decide. */
static size_t
direct_stride (const Py_buffer *view, size_t sample)
{
  Py_ssize_t height = view->shape[0], width = view->shape[1];
  Py_ssize_t column = width == 1 ? (Py_ssize_t) sample : view->strides[1];
  Py_ssize_t row = height == 1 ? width * (Py_ssize_t) sample : view->strides[0];

  if (column != (Py_ssize_t) sample || row < width * (Py_ssize_t) sample || row % (Py_ssize_t) sample != 0
      || (uintptr_t) view->buf % sample != 0)
    return 0;
  return (size_t) row;
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

bool
es_py_input_open (PyObject *object, int depth, EsPyInput *input)
{
  Py_buffer *view = &input->view;
  EsFormat format;
  char name[64], shape[128];
  int bits, levels = 0;
  size_t sample, stride;

  memset (input, 0, sizeof *input);
  if (PyObject_GetBuffer (object, view, PyBUF_RECORDS_RO) != 0)
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_TypeError,
                    "expected an image: a uint8 or uint16 array that exposes the buffer protocol "
                    "(a NumPy array), not %.200s", Py_TYPE (object)->tp_name);
      return false;
    }
  input->have_view = true;

  if (!es_py_buffer_format (view, &format, &input->swap, name, sizeof name) || format == ES_FORMAT_F32)
    {
      if (strncmp (name, "float", 5) == 0)
        PyErr_Format (PyExc_TypeError,
                      "%s input cannot be processed; gray uint8 or uint16 is needed (float samples have no "
                      "definition here: scale them to integers first, e.g. "
                      "np.round(image * 65535).astype(np.uint16) for values in 0..1)", name);
      else
        PyErr_Format (PyExc_TypeError, "%s input cannot be processed; gray uint8 or uint16 is needed", name);
      goto fail;
    }
  sample = es_format_size (format);
  bits = (int) sample * 8;

  if (view->ndim == 2)
    input->channels = 1;
  else if (view->ndim == 3 && (view->shape[2] == 3 || view->shape[2] == 4))
    input->channels = (int) view->shape[2];
  else
    {
      shape_text (view, shape, sizeof shape);
      PyErr_Format (PyExc_ValueError,
                    "expected a 2-D gray image or an (H, W, 3) or (H, W, 4) colour image, not an array of "
                    "shape %s", shape);
      goto fail;
    }
  if (!check_size (view->shape[0], view->shape[1], format))
    goto fail;
  input->height = (int) view->shape[0];
  input->width = (int) view->shape[1];

  /* An entroscope.Image says how many bits its samples use and whether
   * they already are levels (a text matrix); a plain array uses them all. */
  if (es_py_image_type != NULL && PyObject_TypeCheck (object, es_py_image_type))
    {
      int image_depth;

      if (!image_attribute (object, "levels", &levels))
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

  input->image = (EsImage) {
    .width = input->width, .height = input->height, .stride = (size_t) input->width * sample,
    .format = format, .depth = depth, .levels = levels, .release = no_release,
  };
  if (levels > 0)
    input->limit = (unsigned) levels;
  else if (depth < bits)
    input->limit = 1u << depth;

  stride = input->channels == 1 && !input->swap ? direct_stride (view, sample) : 0;
  if (stride != 0)
    {
      input->mode = ES_PY_INPUT_WRAP;
      input->image.stride = stride;
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

static void
copy_rows (EsPyInput *input)
{
  const Py_buffer *view = &input->view;
  const char *base = view->buf;
  Py_ssize_t s0 = view->strides[0], s1 = view->strides[1];
  Py_ssize_t s2 = view->ndim == 3 ? view->strides[2] : 0;
  int width = input->width, height = input->height;
  bool swap = input->swap;
  long long pixels = (long long) width * height;

  if (input->image.format == ES_FORMAT_U8)
    {
      uint8_t *dst = input->owned;

#pragma omp parallel for schedule(static) if (pixels > PARALLEL_PIXELS)
      for (int y = 0; y < height; y++)
        {
          const char *row = base + y * s0;
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
      for (int y = 0; y < height; y++)
        {
          const char *row = base + y * s0;
          uint16_t *out = dst + (size_t) y * width;

          for (int x = 0; x < width; x++)
            {
              const char *p = row + x * s1;
              uint16_t c[3];

              for (int k = 0; k < (input->mode == ES_PY_INPUT_COPY ? 1 : 3); k++)
                {
                  uint16_t v;
                  memcpy (&v, p + k * s2, sizeof v);  /* the buffer need not be aligned */
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
  long long pixels = (long long) image->width * image->height;

#pragma omp parallel for schedule(static) reduction(max : max) if (pixels > PARALLEL_PIXELS)
  for (int y = 0; y < image->height; y++)
    {
      const void *row = es_image_row (image, y);
      for (int x = 0; x < image->width; x++)
        {
          unsigned v = image->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x] : ((const uint16_t *) row)[x];
          max = v > max ? v : max;
        }
    }
  if (max < limit)
    return true;
  for (int y = 0; y < image->height; y++)
    {
      const void *row = es_image_row (image, y);
      for (int x = 0; x < image->width; x++)
        {
          unsigned v = image->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x] : ((const uint16_t *) row)[x];
          if (v < limit)
            continue;
          if (image->levels > 0)
            return es_error_set (error, ES_ERROR_INVALID,
                                 "row %d, column %d: value %u is not below %d levels (the image holds "
                                 "quantized levels)", y, x, v, image->levels);
          return es_error_set (error, ES_ERROR_INVALID, "row %d, column %d: sample %u does not fit depth %d (0..%u)",
                               y, x, v, image->depth, limit - 1);
        }
    }
  return true;
}

bool
es_py_input_materialize (EsPyInput *input, EsError *error)
{
  if (input->mode == ES_PY_INPUT_WRAP)
    input->image.pixels = input->view.buf;
  else
    {
      size_t bytes = (size_t) input->width * input->height * es_format_size (input->image.format);

      input->owned = malloc (bytes);
      if (input->owned == NULL)
        return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to copy a %d×%d image", bytes >> 20,
                             input->width, input->height);
      copy_rows (input);
      input->image.pixels = input->owned;
      input->image.stride = (size_t) input->width * es_format_size (input->image.format);
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
}

/* ---- outputs ---- */

static const char *
numpy_name (EsFormat format)
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
  uint64_t pixels = (uint64_t) input->width * (uint64_t) input->height;
  uint64_t needed = pixels * (es_format_size (format) + es_format_size (input->image.format));
  long pages, page_size;

  if (pixels < (1u << 24))
    return true;
  pages = sysconf (_SC_PHYS_PAGES);
  page_size = sysconf (_SC_PAGESIZE);
  if (pages > 0 && page_size > 0 && needed > (uint64_t) pages * (uint64_t) page_size)
    {
      PyErr_Format (PyExc_MemoryError, "a %d%s%d job needs %.1f GiB of memory; this machine has %.1f GiB",
                    input->width, TIMES, input->height, (double) needed / (1 << 30),
                    (double) pages * (double) page_size / (1 << 30));
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
  output->image = (EsImage) {
    .width = input->width, .height = input->height, .stride = (size_t) input->width * sample,
    .format = format, .depth = depth, .release = no_release,
  };

  if (out == NULL || out == Py_None)
    {
      npy_intp dims[2] = { input->height, input->width };

      if (!check_size (input->height, input->width, format) || !check_memory (input, format))
        return false;
      output->result = PyArray_SimpleNew (2, dims, format == ES_FORMAT_F32 ? NPY_FLOAT32
                                                   : format == ES_FORMAT_U8 ? NPY_UINT8 : NPY_UINT16);
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
    size_t stride;

    if (PyObject_GetBuffer (out, view, PyBUF_RECORDS) != 0)
      {
        PyErr_Clear ();
        if (PyObject_CheckBuffer (out))
          PyErr_Format (PyExc_ValueError, "out= is read-only; the result needs a writable %s array",
                        numpy_name (format));
        else
          PyErr_Format (PyExc_TypeError, "out= must be a writable %s array, not %.200s", numpy_name (format),
                        Py_TYPE (out)->tp_name);
        return false;
      }
    output->have_view = true;
    if (!es_py_buffer_format (view, &out_format, &swap, name, sizeof name) || out_format != format || swap)
      {
        PyErr_Format (PyExc_TypeError, "out= must be a %s array in native byte order, not %s%s", numpy_name (format),
                      swap ? "byte-swapped " : "", name);
        goto fail;
      }
    if (view->ndim != 2 || view->shape[0] != input->height || view->shape[1] != input->width)
      {
        shape_text (view, shape, sizeof shape);
        PyErr_Format (PyExc_ValueError, "out= has shape %s; the result needs (%d, %d)", shape, input->height,
                      input->width);
        goto fail;
      }
    stride = direct_stride (view, sample);
    /* In place over the caller's input (sharpen into its own image) would
     * read rows already written: such a result goes through a temporary. */
    if (stride != 0 && input->mode == ES_PY_INPUT_WRAP)
      {
        uintptr_t in_lo, in_hi, out_lo, out_hi;

        buffer_extent (&input->view, &in_lo, &in_hi);
        buffer_extent (view, &out_lo, &out_hi);
        if (in_lo < out_hi && out_lo < in_hi)
          stride = 0;
      }
    if (stride != 0)
      {
        output->image.pixels = view->buf;
        output->image.stride = stride;
      }
    else
      {
        output->owned = PyMem_RawMalloc ((size_t) input->width * input->height * sample);
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

  (void) error;
  if (!output->copy_back)
    return true;
  for (int y = 0; y < image->height; y++)
    {
      const char *src = es_image_row (image, y);
      char *dst = (char *) view->buf + y * view->strides[0];
      for (int x = 0; x < image->width; x++)
        memcpy (dst + x * view->strides[1], src + x * sample, sample);
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
  if (!keep)
    Py_CLEAR (output->result);
}
