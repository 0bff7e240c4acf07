/* SPDX-License-Identifier: MIT */
/* entroscope.Engine's page-locked results: a small pool of CUDA buffers that arrays give back when freed. */
#include "es-py-engine-private.h"

typedef struct {
  ResultPool *pool;
  EsImage image;
} PooledImage;

static size_t
image_bytes (const EsImage *image)
{
  return image->stride * (size_t) image->height * (size_t) es_image_planes (image);
}

static void
pool_release (ResultPool *pool)
{
  if (--pool->refs > 0)
    return;
  for (int i = 0; i < pool->n; i++)
    es_image_clear (&pool->free[i]);
  PyMem_RawFree (pool);
}

void
es_py_result_pool_close (ResultPool *pool)
{
  pool->closed = true;
  for (int i = 0; i < pool->n; i++)
    es_image_clear (&pool->free[i]);
  pool->n = 0;
  pool->bytes = 0;
  pool_release (pool);
}

static void
pooled_capsule_free (PyObject *capsule)
{
  PooledImage *held = PyCapsule_GetPointer (capsule, "entroscope.PooledImage");
  ResultPool *pool;

  if (held == NULL)
    return;
  pool = held->pool;
  if (!pool->closed && pool->n < POOL_SIZE && pool->bytes + image_bytes (&held->image) <= POOL_MAX_BYTES)
    {
      pool->bytes += image_bytes (&held->image);
      pool->free[pool->n++] = held->image;
    }
  else
    es_image_clear (&held->image);
  pool_release (pool);
  PyMem_RawFree (held);
}

PyObject *
es_py_pooled_result (EsPyEngine *self, int width, int height, int planes, EsFormat format)
{
  const size_t sample = es_format_size (format);
  const int n_planes = planes > 1 ? planes : 1;
  const size_t bytes = (size_t) width * height * sample * (size_t) n_planes;
  npy_intp dims[3] = { planes, height, width };
  npy_intp strides[3] = { (npy_intp) ((size_t) width * height * sample), (npy_intp) ((size_t) width * sample),
                          (npy_intp) sample };
  const int ndim = planes > 0 ? 3 : 2;
  PooledImage *held;
  PyObject *capsule, *array;
  EsImage image = { 0 };
  EsError error;
  bool cuda = false, ok = false;

  if (bytes < POOL_MIN_BYTES || self->pool == NULL)
    return NULL;
  for (int i = 0; i < self->pool->n; i++)
    if (self->pool->free[i].width == width && self->pool->free[i].height == height
        && es_image_planes (&self->pool->free[i]) == n_planes && self->pool->free[i].format == format)
      {
        image = self->pool->free[i];
        self->pool->bytes -= image_bytes (&image);
        self->pool->free[i] = self->pool->free[--self->pool->n];
        ok = true;
        break;
      }
  if (!ok)
    {
      es_error_clear (&error);
      Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock (self->lock, WAIT_LOCK);
      cuda = self->engine != NULL && es_engine_backend (self->engine) == ES_BACKEND_CUDA;
      if (cuda)
        ok = es_engine_volume_alloc (self->engine, &image, width, height, n_planes, format, es_format_depth (format),
                                     &error);
      PyThread_release_lock (self->lock);
      Py_END_ALLOW_THREADS if (
        !ok) return NULL; /* no CUDA (any more) or no page-locked memory: a plain array will do */
    }

  held = PyMem_RawMalloc (sizeof *held);
  if (held == NULL)
    {
      es_image_clear (&image);
      return PyErr_NoMemory ();
    }
  held->pool = self->pool;
  held->image = image;
  self->pool->refs++;
  capsule = PyCapsule_New (held, "entroscope.PooledImage", pooled_capsule_free);
  if (capsule == NULL)
    {
      es_image_clear (&held->image);
      pool_release (held->pool);
      PyMem_RawFree (held);
      return NULL;
    }
  array = PyArray_New (&PyArray_Type, ndim, dims + 3 - ndim, format == ES_FORMAT_F32 ? NPY_FLOAT32 : NPY_UINT8,
                       strides + 3 - ndim, image.pixels, 0, NPY_ARRAY_CARRAY, NULL);
  if (array == NULL || PyArray_SetBaseObject ((PyArrayObject *) array, capsule) != 0)
    {
      Py_XDECREF (array);
      if (array == NULL)
        Py_DECREF (capsule);
      return NULL;
    }
  return array;
}
