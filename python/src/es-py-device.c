/* SPDX-License-Identifier: MIT */
/* Device arrays (CuPy, PyTorch, Numba, JAX): read and written where they lie, through __cuda_array_interface__ or DLPack. */
#include "es-py.h"

#include <stdint.h>
#include <string.h>

/* The DLPack ABI (dmlc/dlpack, dlpack.h v0.8, stable since v0.6): what a
 * "dltensor" capsule holds. Only the fields read here are named. */
typedef struct {
  int32_t device_type;
  int32_t device_id;
} DLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL: compact row-major */
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter) (struct DLManagedTensor *self);
} DLManagedTensor;

enum { DL_CUDA = 2, DL_UINT = 1 };

PyObject *es_py_device_allocator;

/* The CUDA device of an object's __dlpack_device__(), or -1 (with no
 * exception) when it has none or names another kind of device. */
static int
dlpack_cuda_device (PyObject *object)
{
  PyObject *device = PyObject_CallMethod (object, "__dlpack_device__", NULL);
  long type = -1, id = -1;

  if (device == NULL)
    {
      PyErr_Clear ();
      return -1;
    }
  if (PyTuple_Check (device) && PyTuple_GET_SIZE (device) == 2)
    {
      type = PyLong_AsLong (PyTuple_GET_ITEM (device, 0));
      id = PyLong_AsLong (PyTuple_GET_ITEM (device, 1));
    }
  Py_DECREF (device);
  if (PyErr_Occurred ())
    {
      PyErr_Clear ();
      return -1;
    }
  return type == DL_CUDA && id >= 0 ? (int) id : -1;
}

bool
es_py_is_device_array (PyObject *object)
{
  /* NumPy arrays are host memory; CuPy's arrays do have a buffer slot
   * (which refuses), so the slot says nothing. */
  if (PyArray_Check (object))
    return false;
  /* DLPack's device first: CuPy builds its __cuda_array_interface__ dict
   * at every read, and a PyTorch CPU tensor's type has that property too,
   * which raises for it. */
  if (dlpack_cuda_device (object) >= 0)
    return true;
  return PyObject_HasAttrString (object, "__cuda_array_interface__");
}

/* One integer of a __cuda_array_interface__ tuple or dict. */
static bool
cai_integer (PyObject *value, Py_ssize_t *out)
{
  *out = PyLong_Check (value) ? PyLong_AsSsize_t (value) : -1;
  if (!PyLong_Check (value) || (*out == -1 && PyErr_Occurred ()))
    {
      PyErr_Clear ();
      PyErr_SetString (PyExc_TypeError, "__cuda_array_interface__ holds a value that is not an integer");
      return false;
    }
  return true;
}

/* The layout of a device array: data, dtype, shape and byte strides, its
 * device, and the stream its producer last wrote it on. */
typedef struct {
  char *data;
  char kind;    /* 'u' for unsigned integers, else refused */
  int itemsize; /* bytes a sample */
  bool swapped; /* the other byte order */
  bool readonly;
  int ndim;
  Py_ssize_t shape[4], strides[4];
  int device;
  uintptr_t stream; /* 0: nothing to wait for */
  PyObject *owner;  /* a DLPack capsule kept for the length of the call */
} DeviceLayout;

/* Axis i's stride in bytes in C order, from the axes after it, which are
 * filled first (the protocols' layout where they give no strides). */
static Py_ssize_t
c_order_stride (const DeviceLayout *layout, int i)
{
  return i == layout->ndim - 1 ? layout->itemsize : layout->strides[i + 1] * layout->shape[i + 1];
}

/* `cai`: the object's __cuda_array_interface__, a reference this takes. */
static bool
layout_from_cai (PyObject *object, PyObject *cai, EsEngine *engine, DeviceLayout *layout)
{
  PyObject *shape, *typestr, *data, *strides, *stream, *mask;
  Py_ssize_t value;
  const char *type;
  bool ok = false;

  if (!PyDict_Check (cai))
    {
      PyErr_SetString (PyExc_TypeError, "__cuda_array_interface__ is not a dict");
      goto done;
    }
  shape = PyDict_GetItemString (cai, "shape");
  typestr = PyDict_GetItemString (cai, "typestr");
  data = PyDict_GetItemString (cai, "data");
  strides = PyDict_GetItemString (cai, "strides");
  stream = PyDict_GetItemString (cai, "stream");
  mask = PyDict_GetItemString (cai, "mask");
  if (shape == NULL || !PyTuple_Check (shape) || typestr == NULL || !PyUnicode_Check (typestr) || data == NULL
      || !PyTuple_Check (data) || PyTuple_GET_SIZE (data) != 2)
    {
      PyErr_SetString (PyExc_TypeError, "__cuda_array_interface__ lacks its shape, typestr or data");
      goto done;
    }
  if (mask != NULL && mask != Py_None)
    {
      PyErr_SetString (PyExc_TypeError, "masked device arrays are not supported; pass mask= instead");
      goto done;
    }
  type = PyUnicode_AsUTF8 (typestr);
  if (type == NULL || strlen (type) < 3)
    goto done;
  layout->kind = type[1];
  layout->itemsize = atoi (type + 2);
  layout->swapped = layout->itemsize > 1 && type[0] == (PY_LITTLE_ENDIAN ? '>' : '<');
  layout->ndim = (int) PyTuple_GET_SIZE (shape);
  if (layout->ndim < 1 || layout->ndim > 4)
    {
      PyErr_Format (PyExc_ValueError, "expected a 2-D image or a 3-D volume, not a %d-D device array", layout->ndim);
      goto done;
    }
  if (!cai_integer (PyTuple_GET_ITEM (data, 0), &value))
    goto done;
  layout->data = (char *) (uintptr_t) value;
  layout->readonly = PyObject_IsTrue (PyTuple_GET_ITEM (data, 1)) == 1;
  for (int i = layout->ndim - 1; i >= 0; i--)
    {
      if (!cai_integer (PyTuple_GET_ITEM (shape, i), &layout->shape[i]))
        goto done;
      if (strides != NULL && strides != Py_None)
        {
          if (!PyTuple_Check (strides) || PyTuple_GET_SIZE (strides) != layout->ndim
              || !cai_integer (PyTuple_GET_ITEM (strides, i), &layout->strides[i]))
            goto done;
        }
      else
        layout->strides[i] = c_order_stride (layout, i);
    }
  /* The producer's stream, as the protocol's version 3 gives it. */
  layout->stream = 0;
  if (stream != NULL && stream != Py_None)
    {
      if (!cai_integer (stream, &value))
        goto done;
      layout->stream = (uintptr_t) value;
    }
  /* The protocol has no device: ask DLPack, else CUDA about the pointer.
   * Where CUDA cannot tell (no driver, a CPU engine), the engine refuses
   * the job for want of CUDA, which is the message that helps. */
  layout->device = dlpack_cuda_device (object);
  if (layout->device < 0 && !es_engine_pointer_device (layout->data, &layout->device))
    {
      if (engine == NULL || es_engine_backend (engine) == ES_BACKEND_CUDA)
        {
          PyErr_SetString (PyExc_ValueError, "__cuda_array_interface__ points at memory that CUDA does not know");
          goto done;
        }
      layout->device = 0;
    }
  ok = true;
done:
  Py_DECREF (cai);
  return ok;
}

/* obj.__dlpack__(stream=stream), or obj.__dlpack__() for a producer that
 * predates the keyword. */
static PyObject *
dlpack_capsule (PyObject *object, uintptr_t stream)
{
  PyObject *method = PyObject_GetAttrString (object, "__dlpack__"), *args = PyTuple_New (0), *kwargs, *capsule = NULL;

  kwargs = Py_BuildValue ("{s:K}", "stream", (unsigned long long) stream);
  if (method != NULL && args != NULL && kwargs != NULL)
    {
      capsule = PyObject_Call (method, args, kwargs);
      if (capsule == NULL && PyErr_ExceptionMatches (PyExc_TypeError))
        {
          PyErr_Clear ();
          capsule = PyObject_CallNoArgs (method);
        }
    }
  Py_XDECREF (method);
  Py_XDECREF (args);
  Py_XDECREF (kwargs);
  return capsule;
}

/* DLPack: the producer orders its work before `stream` (the engine's own on
 * that device), as the protocol's consumer stream says. */
static bool
layout_from_dlpack (PyObject *object, EsEngine *engine, DeviceLayout *layout)
{
  const int device = dlpack_cuda_device (object);
  uintptr_t stream = 0;
  DLManagedTensor *managed;
  const DLTensor *t;

  if (engine == NULL)
    {
      PyErr_SetString (PyExc_TypeError, "a device mask= must expose __cuda_array_interface__ (CuPy, PyTorch)");
      return false;
    }
  if (!es_engine_cuda_stream (engine, device, &stream))
    {
      PyErr_Format (PyExc_RuntimeError, "the array lies on CUDA device %d, and this engine computes nothing there (%s)",
                    device, es_engine_describe (engine));
      return false;
    }
  layout->owner = dlpack_capsule (object, stream);
  if (layout->owner == NULL)
    return false;
  managed = (DLManagedTensor *) PyCapsule_GetPointer (layout->owner, "dltensor");
  if (managed == NULL)
    return false;
  t = &managed->dl_tensor;
  if (t->ndim < 1 || t->ndim > 4 || t->dtype.lanes != 1)
    {
      PyErr_Format (PyExc_ValueError, "expected a 2-D image or a 3-D volume, not a %d-D device array", (int) t->ndim);
      return false;
    }
  layout->data = (char *) t->data + t->byte_offset;
  layout->kind = t->dtype.code == DL_UINT ? 'u' : '?';
  layout->itemsize = t->dtype.bits / 8;
  layout->ndim = t->ndim;
  for (int i = t->ndim - 1; i >= 0; i--)
    {
      layout->shape[i] = (Py_ssize_t) t->shape[i];
      layout->strides[i] = t->strides != NULL ? (Py_ssize_t) t->strides[i] * layout->itemsize
                                              : c_order_stride (layout, i);
    }
  layout->device = device;
  /* DLPack has no read-only flag before v1.0: the consumer promises. */
  layout->readonly = false;
  return true;
}

/* The interface read once: CuPy builds it anew at every read. */
static bool
device_layout (PyObject *object, EsEngine *engine, DeviceLayout *layout)
{
  PyObject *cai = PyObject_GetAttrString (object, "__cuda_array_interface__");

  memset (layout, 0, sizeof *layout);
  if (cai != NULL)
    return layout_from_cai (object, cai, engine, layout);
  if (!PyErr_ExceptionMatches (PyExc_AttributeError))
    return false;
  PyErr_Clear ();
  return layout_from_dlpack (object, engine, layout);
}

/* The layout as an EsImage on the device, or a Python exception: unsigned
 * 8- or 16-bit samples in native order, columns next to each other, rows
 * and planes at nonnegative steps that do not overlap. `what` names the
 * array in messages ("the image", "out=", "mask="). */
static bool
layout_image (const DeviceLayout *layout, const char *what, EsImage *image)
{
  const Py_ssize_t planes = layout->ndim == 3 ? layout->shape[0] : 1;
  const Py_ssize_t height = layout->shape[layout->ndim - 2], width = layout->shape[layout->ndim - 1];
  const Py_ssize_t row_step = layout->strides[layout->ndim - 2], column_step = layout->strides[layout->ndim - 1];
  const Py_ssize_t plane_step = layout->ndim == 3 ? layout->strides[0] : 0;
  EsFormat format;

  if (layout->ndim != 2 && layout->ndim != 3)
    {
      PyErr_Format (PyExc_ValueError,
                    "%s: expected a 2-D image or a 3-D volume on the device, not a %d-D array (colour device "
                    "arrays are not read: reduce them to gray on the device first)",
                    what, layout->ndim);
      return false;
    }
  if (layout->kind == 'u' && layout->itemsize == 1)
    format = ES_FORMAT_U8;
  else if (layout->kind == 'u' && layout->itemsize == 2)
    format = ES_FORMAT_U16;
  else if (layout->kind == 'f' && layout->itemsize == 4)
    format = ES_FORMAT_F32;
  else
    {
      PyErr_Format (PyExc_TypeError,
                    "%s: a device array of %c%d samples cannot be processed; uint8 or uint16 is "
                    "needed",
                    what, layout->kind, layout->itemsize * 8);
      return false;
    }
  if (layout->swapped)
    {
      PyErr_Format (PyExc_TypeError, "%s: byte-swapped device arrays are not read; make it native order", what);
      return false;
    }
  if (width < 1 || height < 1 || planes < 1 || width > ES_MAX_SIDE || height > ES_MAX_SIDE || planes > ES_MAX_SIDE)
    {
      PyErr_Format (PyExc_ValueError, "%s: a device array of %zd" TIMES "%zd" TIMES "%zd is out of range: 1..%d a side",
                    what, planes, height, width, ES_MAX_SIDE);
      return false;
    }
  if (column_step != layout->itemsize || row_step < width * layout->itemsize
      || (layout->ndim == 3 && plane_step < height * row_step) || (uintptr_t) layout->data % layout->itemsize != 0)
    {
      PyErr_Format (PyExc_ValueError,
                    "%s: a device array's columns must be next to each other and its rows and planes in order "
                    "(strides %zd, %zd, %zd bytes); make it contiguous on the device first "
                    "(cupy.ascontiguousarray, tensor.contiguous())",
                    what, plane_step, row_step, column_step);
      return false;
    }
  *image = (EsImage){
    .width = (int) width,
    .height = (int) height,
    .stride = (size_t) row_step,
    .planes = layout->ndim == 3 ? (int) planes : 0,
    .plane_stride = layout->ndim == 3 ? (size_t) plane_step : 0,
    .format = format,
    .depth = (int) layout->itemsize * 8,
    .pixels = layout->data,
    .memory = ES_MEMORY_CUDA,
    .cuda_device = layout->device,
  };
  return true;
}

/* The bytes [lo, hi) an image spans. */
static void
image_span (const EsImage *image, uintptr_t *lo, uintptr_t *hi)
{
  *lo = (uintptr_t) image->pixels;
  *hi = *lo + (size_t) (es_image_planes (image) - 1) * image->plane_stride
        + (size_t) (image->height - 1) * image->stride + (size_t) image->width * es_format_size (image->format);
}

/* array.min() or array.max() as an unsigned integer, computed where the
 * array lies by its own library. */
static bool
device_extreme (PyObject *array, const char *which, unsigned long *value)
{
  PyObject *result = PyObject_CallMethod (array, which, NULL), *number;

  if (result == NULL)
    return false;
  number = PyNumber_Long (result);
  Py_DECREF (result);
  if (number == NULL)
    return false;
  *value = PyLong_AsUnsignedLong (number);
  Py_DECREF (number);
  return !PyErr_Occurred ();
}

bool
es_py_device_resolve_minmax (PyObject *array, EsJob *job)
{
  unsigned long lo, hi;

  if (job->op != ES_OP_ENTROPY || job->definition.binning != ES_BINNING_MINMAX)
    return true;
  if (!device_extreme (array, "min", &lo) || !device_extreme (array, "max", &hi))
    return false;
  job->definition.range_lo = (uint32_t) lo;
  job->definition.range_hi = (uint32_t) hi;
  job->definition.binning = ES_BINNING_RANGE;
  return true;
}

bool
es_py_device_input_open (EsEngine *engine, PyObject *object, int depth, PyObject *channel_axis, EsPyInput *input)
{
  DeviceLayout layout;
  unsigned long max;

  memset (input, 0, sizeof *input);
  if (es_engine_backend (engine) != ES_BACKEND_CUDA)
    {
      const char *reason = es_engine_cuda_reason (engine);

      PyErr_Format (PyExc_RuntimeError,
                    "a %.100s is a CUDA device array, and this engine computes on the CPU (%s); device arrays "
                    "are never copied through the host: use a CUDA engine, or pass a host array",
                    Py_TYPE (object)->tp_name, reason[0] != '\0' ? reason : "backend 'cpu' was asked for");
      return false;
    }
  if (channel_axis != NULL && channel_axis != Py_None)
    {
      PyErr_SetString (PyExc_TypeError,
                       "channel_axis: colour device arrays are not read; reduce them to gray on the device first");
      return false;
    }
  if (!device_layout (object, engine, &layout))
    {
      Py_CLEAR (layout.owner);
      return false;
    }
  input->device_owner = layout.owner;
  if (!layout_image (&layout, "the image", &input->image))
    goto fail;
  if (input->image.format == ES_FORMAT_F32)
    {
      PyErr_SetString (PyExc_TypeError,
                       "float32 input cannot be processed; gray uint8 or uint16 is needed (scale it to integers on "
                       "the device first)");
      goto fail;
    }
  if (depth > input->image.depth)
    {
      PyErr_Format (PyExc_ValueError, "depth %d does not fit uint%d samples (1..%d)", depth, input->image.depth,
                    input->image.depth);
      goto fail;
    }
  /* A depth below the dtype's bits: every sample must fit it, so that no
   * kernel indexes past its histogram; the array's own library checks. */
  if (depth > 0 && depth < input->image.depth)
    {
      if (!device_extreme (object, "max", &max))
        goto fail;
      if (max >> depth != 0)
        {
          PyErr_Format (PyExc_ValueError, "sample %lu does not fit depth %d (0..%u)", max, depth, (1u << depth) - 1);
          goto fail;
        }
      input->image.depth = depth;
    }
  input->device = true;
  input->mode = ES_PY_INPUT_WRAP;
  input->channels = 1;
  input->volume = input->image.planes > 0;
  input->planes = es_image_planes (&input->image);
  input->height = input->image.height;
  input->width = input->image.width;
  input->wait_stream = layout.stream;
  return true;

fail:
  Py_CLEAR (input->device_owner);
  return false;
}

/* A new result from the registered allocator (entroscope/_device.py), which
 * gives an array of the library of `like` (the input) and the address of its first
 * sample: a C-contiguous array on the input's device, whose work is ordered
 * on the input's stream (CuPy allocates on its current stream, which the
 * input's interface named a moment ago). */
static bool
allocated_layout (PyObject *like, const EsPyInput *input, EsFormat format, PyObject **result, DeviceLayout *layout)
{
  PyObject *made, *address;
  Py_ssize_t value;

  if (es_py_device_allocator == NULL)
    {
      PyErr_SetString (PyExc_RuntimeError, "no allocator of device results is registered");
      return false;
    }
  made = PyObject_CallFunction (es_py_device_allocator, "O(iii)si", like, input->planes, input->height, input->width,
                                es_py_dtype_name (format), input->volume ? 3 : 2);
  if (made == NULL)
    return false;
  if (!PyTuple_Check (made) || PyTuple_GET_SIZE (made) != 2)
    {
      Py_DECREF (made);
      PyErr_SetString (PyExc_TypeError, "the device allocator must return (array, address)");
      return false;
    }
  *result = Py_NewRef (PyTuple_GET_ITEM (made, 0));
  address = PyTuple_GET_ITEM (made, 1);
  const bool ok = cai_integer (address, &value);
  Py_DECREF (made);
  if (!ok)
    return false;
  memset (layout, 0, sizeof *layout);
  layout->data = (char *) (uintptr_t) value;
  layout->kind = format == ES_FORMAT_F32 ? 'f' : 'u';
  layout->itemsize = (int) es_format_size (format);
  layout->ndim = input->volume ? 3 : 2;
  const Py_ssize_t sides[3] = { input->planes, input->height, input->width };
  for (int i = layout->ndim - 1, k = 2; i >= 0; i--, k--)
    {
      layout->shape[i] = sides[k];
      layout->strides[i] = c_order_stride (layout, i);
    }
  layout->device = input->image.cuda_device;
  layout->stream = input->wait_stream;
  return true;
}

bool
es_py_device_output_open (EsEngine *engine, PyObject *out, PyObject *like, const EsPyInput *input, EsFormat format,
                          EsPyOutput *output)
{
  DeviceLayout layout;
  uintptr_t in_lo, in_hi, out_lo, out_hi;

  memset (output, 0, sizeof *output);
  output->device = true;
  if (out == NULL)
    {
      if (!allocated_layout (like, input, format, &output->result, &layout))
        goto fail;
    }
  else
    {
      Py_INCREF (out);
      output->result = out;
      if (!es_py_is_device_array (out))
        {
          PyErr_Format (PyExc_TypeError, "out= must be a device array on CUDA device %d, like the image, not %.200s",
                        input->image.cuda_device, Py_TYPE (out)->tp_name);
          goto fail;
        }
      if (!device_layout (out, engine, &layout))
        goto fail;
      output->device_owner = layout.owner;
    }
  if (layout.readonly)
    {
      PyErr_SetString (PyExc_ValueError, "out= is read-only");
      goto fail;
    }
  if (!layout_image (&layout, "out=", &output->image))
    goto fail;
  if (output->image.format != format || output->image.width != input->width || output->image.height != input->height
      || es_image_planes (&output->image) != input->planes || (output->image.planes > 0) != input->volume)
    {
      if (input->volume)
        PyErr_Format (PyExc_ValueError, "out= must be a %s device array of shape (%d, %d, %d)",
                      es_py_dtype_name (format), input->planes, input->height, input->width);
      else
        PyErr_Format (PyExc_ValueError, "out= must be a %s device array of shape (%d, %d)", es_py_dtype_name (format),
                      input->height, input->width);
      goto fail;
    }
  image_span (&input->image, &in_lo, &in_hi);
  image_span (&output->image, &out_lo, &out_hi);
  if (in_lo < out_hi && out_lo < in_hi)
    {
      PyErr_SetString (PyExc_ValueError, "out= overlaps the image on the device; give it an array of its own");
      goto fail;
    }
  output->image.depth = es_format_depth (format);
  output->wait_stream = layout.stream;
  return true;

fail:
  es_py_output_close (output, false);
  return false;
}

bool
es_py_device_mask (EsEngine *engine, PyObject *object, EsImage *mask, PyObject **owner, uintptr_t *stream)
{
  DeviceLayout layout;

  *owner = NULL;
  if (!device_layout (object, engine, &layout))
    {
      Py_CLEAR (layout.owner);
      return false;
    }
  *owner = layout.owner;
  *stream = layout.stream;
  /* Booleans are bytes of 0 and 1. */
  if (layout.kind == 'b' && layout.itemsize == 1)
    layout.kind = 'u';
  if (!layout_image (&layout, "mask=", mask))
    return false;
  if (mask->format != ES_FORMAT_U8)
    {
      PyErr_SetString (PyExc_TypeError, "mask= on the device must be a bool or uint8 array (nonzero: in)");
      return false;
    }
  mask->depth = 1;
  return true;
}
