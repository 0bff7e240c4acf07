/* SPDX-License-Identifier: MIT */
/* entroscope.Engine: one EsEngine behind a lock, its construction, methods and properties (operations: es-py-engine-call.c). */
#include "es-py-engine-private.h"

#include <stdio.h>

/* ---- construction ---- */

static const char *const backend_names[] = { "auto", "cpu", "cuda", NULL };

static PyObject *
engine_new (PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "backend", "devices", NULL };
  PyObject *backend_obj = NULL, *devices_obj = Py_None;
  int choice = ES_BACKEND_AUTO, devices[64], n_devices = 0;
  EsPyEngine *self;
  EsEngine *engine;
  EsError error;

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "|OO:Engine", keywords, &backend_obj, &devices_obj))
    return NULL;
  if (backend_obj != NULL && !es_py_parse_choice (backend_obj, "backend", backend_names, &choice))
    return NULL;

  if (devices_obj != Py_None)
    {
      PyObject *seq;

      if (choice == ES_BACKEND_CPU)
        return PyErr_Format (PyExc_ValueError, "devices= chooses CUDA devices; backend='cpu' uses none");
      if (PyIndex_Check (devices_obj))
        seq = PyTuple_Pack (1, devices_obj);
      else
        seq = PySequence_Tuple (devices_obj);
      if (seq == NULL)
        {
          PyErr_Clear ();
          return PyErr_Format (PyExc_TypeError, "devices= must be a device number or a sequence of them, not %.100s",
                               Py_TYPE (devices_obj)->tp_name);
        }
      n_devices = (int) PyTuple_GET_SIZE (seq);
      if (n_devices == 0 || n_devices > (int) (sizeof devices / sizeof devices[0]))
        {
          Py_DECREF (seq);
          return PyErr_Format (PyExc_ValueError, "devices= lists %d devices; 1..64 are allowed", n_devices);
        }
      for (int i = 0; i < n_devices; i++)
        {
          PyObject *item = PyTuple_GET_ITEM (seq, i);
          long d = PyIndex_Check (item) ? PyLong_AsLong (item) : -2;

          if (d == -1 && PyErr_Occurred ())
            PyErr_Clear ();
          if (d < 0 || d > 1024)
            {
              PyErr_Format (PyExc_ValueError, "devices=: %R is not a CUDA device number", item);
              Py_DECREF (seq);
              return NULL;
            }
          for (int j = 0; j < i; j++)
            if (devices[j] == (int) d)
              {
                PyErr_Format (PyExc_ValueError, "devices=: device %ld is listed twice", d);
                Py_DECREF (seq);
                return NULL;
              }
          devices[i] = (int) d;
        }
      devices_obj = seq;
    }
  else
    Py_INCREF (devices_obj);

  self = (EsPyEngine *) type->tp_alloc (type, 0);
  if (self == NULL)
    {
      Py_DECREF (devices_obj);
      return NULL;
    }
  self->devices = devices_obj;
  self->requested = (EsBackendChoice) choice;
  self->lock = PyThread_allocate_lock ();
  self->control = es_control_new (NULL, NULL);
  if (self->lock == NULL || self->control == NULL)
    {
      Py_DECREF (self);
      return PyErr_NoMemory ();
    }

  /* Opening CUDA devices can take a while: other threads may run. */
  es_error_clear (&error);
  Py_BEGIN_ALLOW_THREADS engine = es_engine_new_with_devices ((EsBackendChoice) choice, n_devices ? devices : NULL,
                                                              n_devices, &error);
  Py_END_ALLOW_THREADS if (engine == NULL)
  {
    Py_DECREF (self);
    return es_py_raise (&error, NULL);
  }
  self->engine = engine;
  if (es_engine_backend (engine) == ES_BACKEND_CUDA)
    {
      self->pool = PyMem_RawCalloc (1, sizeof *self->pool);
      if (self->pool == NULL)
        {
          Py_DECREF (self);
          return PyErr_NoMemory ();
        }
      self->pool->refs = 1;
    }
  return (PyObject *) self;
}

static void
engine_close_locked (EsPyEngine *self)
{
  EsEngine *engine;

  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock (self->lock, WAIT_LOCK);
  engine = self->engine;
  self->engine = NULL;
  PyThread_release_lock (self->lock);
  es_engine_free (engine);
  Py_END_ALLOW_THREADS
    /* Arrays still alive keep their memory and free it when they go. */
    if (self->pool != NULL) es_py_result_pool_close (self->pool);
  self->pool = NULL;
}

static void
engine_dealloc (EsPyEngine *self)
{
  if (self->weakrefs != NULL)
    PyObject_ClearWeakRefs ((PyObject *) self);
  /* No call can be running: a call holds a reference to the engine. */
  if (self->pool != NULL)
    es_py_result_pool_close (self->pool);
  es_engine_free (self->engine);
  if (self->lock != NULL)
    PyThread_free_lock (self->lock);
  es_control_free (self->control);
  Py_XDECREF (self->devices);
  Py_TYPE (self)->tp_free ((PyObject *) self);
}

PyObject *
es_py_engine_closed_error (void)
{
  return PyErr_Format (PyExc_ValueError, "the engine is closed");
}

/* ---- methods ---- */

#define OP_METHOD(fn, op)                                                                                              \
  static PyObject *fn (EsPyEngine *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)                   \
  {                                                                                                                    \
    return es_py_engine_call (self, op, args, nargs, kwnames);                                                         \
  }

OP_METHOD (engine_quantize, ES_OP_QUANTIZE)
OP_METHOD (engine_entropy, ES_OP_ENTROPY)
OP_METHOD (engine_equalize, ES_OP_EQUALIZE)
OP_METHOD (engine_sharpen, ES_OP_SHARPEN)
OP_METHOD (engine_clahe, ES_OP_CLAHE)

/* run(op, image, ...): any row of the operation table by name. */
static PyObject *
engine_run (EsPyEngine *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
  EsOp op;

  if (nargs < 1)
    return PyErr_Format (PyExc_TypeError, "run() missing the operation");
  if (!es_py_parse_op (args[0], &op))
    return NULL;
  return es_py_engine_call (self, op, args + 1, nargs - 1, kwnames);
}

/* zeros(shape, dtype=numpy.uint8): a zeroed array in the memory this
 * engine moves fastest (page-locked on CUDA: uploads and downloads need no
 * staging copy), for inputs and out= reused over many calls. */
static PyObject *
engine_zeros (EsPyEngine *self, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "shape", "dtype", NULL };
  PyObject *shape, *dtype_obj = Py_None;
  PyArray_Descr *descr = NULL;
  Py_ssize_t height, width;
  EsFormat format;
  EsImage image = { 0 };
  EsError error;
  bool ok, closed = false;

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O|O:zeros", keywords, &shape, &dtype_obj))
    return NULL;
  if (!PyTuple_Check (shape) || PyTuple_GET_SIZE (shape) != 2)
    return PyErr_Format (PyExc_ValueError, "shape must be a tuple (height, width)");
  height = PyNumber_AsSsize_t (PyTuple_GET_ITEM (shape, 0), PyExc_OverflowError);
  width = PyNumber_AsSsize_t (PyTuple_GET_ITEM (shape, 1), PyExc_OverflowError);
  if (PyErr_Occurred ())
    return NULL;
  if (!PyArray_DescrConverter2 (dtype_obj, &descr))
    return NULL;
  if (descr == NULL || descr->type_num == NPY_UINT8)
    format = ES_FORMAT_U8;
  else if (descr->type_num == NPY_UINT16)
    format = ES_FORMAT_U16;
  else if (descr->type_num == NPY_FLOAT32)
    format = ES_FORMAT_F32;
  else
    {
      Py_DECREF (descr);
      return PyErr_Format (PyExc_TypeError, "dtype must be uint8, uint16 or float32");
    }
  Py_XDECREF (descr);
  if (height <= 0 || width <= 0 || height > ES_MAX_SIDE || width > ES_MAX_SIDE)
    return PyErr_Format (PyExc_ValueError, "image size %zd%s%zd is empty or over the limit of %d pixels a side", width,
                         TIMES, height, ES_MAX_SIDE);

  es_error_clear (&error);
  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock (self->lock, WAIT_LOCK);
  if (self->engine == NULL)
    closed = true, ok = false;
  else
    ok = es_engine_image_alloc (self->engine, &image, (int) width, (int) height, format,
                                format == ES_FORMAT_U8    ? 8
                                : format == ES_FORMAT_U16 ? 16
                                                          : 0,
                                &error);
  PyThread_release_lock (self->lock);
  Py_END_ALLOW_THREADS if (closed) return es_py_engine_closed_error ();
  if (!ok)
    return es_py_raise (&error, NULL);
  return es_py_array_from_image (&image);
}

static PyObject *
engine_cancel (EsPyEngine *self, PyObject *unused)
{
  (void) unused;
  es_control_cancel (self->control);
  Py_RETURN_NONE;
}

static PyObject *
engine_close (EsPyEngine *self, PyObject *unused)
{
  (void) unused;
  engine_close_locked (self);
  Py_RETURN_NONE;
}

static PyObject *
engine_enter (EsPyEngine *self, PyObject *unused)
{
  (void) unused;
  Py_INCREF (self);
  return (PyObject *) self;
}

static PyObject *
engine_exit (EsPyEngine *self, PyObject *args)
{
  (void) args;
  engine_close_locked (self);
  Py_RETURN_FALSE;
}

/* ---- properties ---- */

/* A string of the engine read under its lock (a fallback rewrites them). */
typedef enum { TEXT_DESCRIPTION, TEXT_CUDA_REASON, TEXT_BACKEND } TextKind;

static PyObject *
engine_text (EsPyEngine *self, TextKind kind)
{
  char text[640] = "";
  bool closed = false;

  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock (self->lock, WAIT_LOCK);
  if (self->engine == NULL)
    closed = true;
  else if (kind == TEXT_DESCRIPTION)
    snprintf (text, sizeof text, "%s", es_engine_describe (self->engine));
  else if (kind == TEXT_CUDA_REASON)
    snprintf (text, sizeof text, "%s", es_engine_cuda_reason (self->engine));
  else
    snprintf (text, sizeof text, "%s", es_backend_name (es_engine_backend (self->engine)));
  PyThread_release_lock (self->lock);
  Py_END_ALLOW_THREADS if (closed) return es_py_engine_closed_error ();
  return PyUnicode_FromString (text);
}

static PyObject *
engine_get_description (EsPyEngine *self, void *closure)
{
  (void) closure;
  return engine_text (self, TEXT_DESCRIPTION);
}

static PyObject *
engine_get_cuda_reason (EsPyEngine *self, void *closure)
{
  (void) closure;
  return engine_text (self, TEXT_CUDA_REASON);
}

static PyObject *
engine_get_backend (EsPyEngine *self, void *closure)
{
  (void) closure;
  return engine_text (self, TEXT_BACKEND);
}

static PyObject *
engine_get_requested (EsPyEngine *self, void *closure)
{
  (void) closure;
  return PyUnicode_FromString (es_backend_name (self->requested));
}

static PyObject *
engine_get_devices (EsPyEngine *self, void *closure)
{
  (void) closure;
  Py_INCREF (self->devices);
  return self->devices;
}

static PyObject *
engine_get_closed (EsPyEngine *self, void *closure)
{
  (void) closure;
  return PyBool_FromLong (self->engine == NULL);
}

static PyObject *
engine_get_counters (EsPyEngine *self, void *closure)
{
  bool on = false;

  (void) closure;
  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock (self->lock, WAIT_LOCK);
  on = self->engine != NULL && es_engine_counters (self->engine);
  PyThread_release_lock (self->lock);
  Py_END_ALLOW_THREADS return PyBool_FromLong (on);
}

/* Waits for a job in progress, so that a run never changes its mind
 * half-way. */
static int
engine_set_counters (EsPyEngine *self, PyObject *value, void *closure)
{
  int on;

  (void) closure;
  if (value == NULL)
    {
      PyErr_SetString (PyExc_AttributeError, "counters cannot be deleted");
      return -1;
    }
  if ((on = PyObject_IsTrue (value)) < 0)
    return -1;
  if (self->engine == NULL)
    {
      es_py_engine_closed_error ();
      return -1;
    }
  Py_BEGIN_ALLOW_THREADS PyThread_acquire_lock (self->lock, WAIT_LOCK);
  if (self->engine != NULL)
    es_engine_set_counters (self->engine, on);
  PyThread_release_lock (self->lock);
  Py_END_ALLOW_THREADS return 0;
}

static PyObject *
engine_repr (EsPyEngine *self)
{
  PyObject *description, *result;

  if (self->engine == NULL)
    return PyUnicode_FromString ("<entroscope.Engine (closed)>");
  description = engine_text (self, TEXT_DESCRIPTION);
  if (description == NULL)
    return NULL;
  result = PyUnicode_FromFormat ("<entroscope.Engine %U>", description);
  Py_DECREF (description);
  return result;
}

#define FASTCALL(fn) (PyCFunction) (void (*) (void)) (fn), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef engine_methods[] = {
  /* Each docstring opens with its __text_signature__ (name(...), "--", a
   * blank line), which inspect.signature reads; None stands for "the
   * parameter table's default, or the like= preset's". */
  { "entropy", FASTCALL (engine_entropy),
    "entropy($self, image, /, window=None, levels=None, *, variant=None, units=None, depth=None, out=None, "
    "return_timing=False, channel_axis=..., rect=None, disk=None, footprint=None, box=None, ball=None, "
    "border=None, binning=None, mask=None, like=None)\n--\n\n"
    "Local entropy in a window around each pixel, float32 (DESIGN.md section 1); window 5 and levels 16 by "
    "default, or the like= preset's." },
  { "equalize", FASTCALL (engine_equalize),
    "equalize($self, image, /, *, variant=None, depth=None, out=None, return_timing=False, channel_axis=...)"
    "\n--\n\nHistogram equalization to uint8, bit-identical to cv2.equalizeHist." },
  { "sharpen", FASTCALL (engine_sharpen),
    "sharpen($self, image, /, amount=None, *, variant=None, depth=None, out=None, return_timing=False, "
    "channel_axis=...)\n--\n\n"
    "c + amount * (4c - N - S - E - W) to uint8 with replicated borders (amount 1.0 by default)." },
  { "clahe", FASTCALL (engine_clahe),
    "clahe($self, image, /, clip=None, tile_columns=None, tile_rows=None, *, variant=None, depth=None, out=None, "
    "return_timing=False, channel_axis=..., like=None, kernel_size=None, nbins=None)\n--\n\n"
    "Contrast-limited adaptive histogram equalization in the input's dtype, bit-identical to "
    "cv2.createCLAHE(clip, (tile_columns, tile_rows)).apply (clip 40, 8 x 8 tiles by default)." },
  { "quantize", FASTCALL (engine_quantize),
    "quantize($self, image, /, levels=None, *, variant=None, depth=None, out=None, return_timing=False, "
    "channel_axis=...)\n--\n\nfloor(v * levels / 2^depth) as uint8 (16 levels by default)." },
  { "run", FASTCALL (engine_run),
    "run($self, op, image, /, *args, **kwargs)\n--\n\nAny operation by name, with its own arguments." },
  { "zeros", (PyCFunction) (void (*) (void)) engine_zeros, METH_VARARGS | METH_KEYWORDS,
    "zeros($self, shape, dtype='uint8')\n--\n\nA zeroed array in the memory this engine moves fastest "
    "(page-locked on CUDA), for inputs and out= reused over many calls." },
  { "cancel", (PyCFunction) engine_cancel, METH_NOARGS,
    "cancel($self, /)\n--\n\nStops the job this engine is running now (it raises entroscope.Cancelled); "
    "thread-safe." },
  { "close", (PyCFunction) engine_close, METH_NOARGS,
    "close($self, /)\n--\n\nFrees the engine's device buffers now; later calls raise ValueError." },
  { "__enter__", (PyCFunction) engine_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nThe engine itself." },
  { "__exit__", (PyCFunction) engine_exit, METH_VARARGS,
    "__exit__($self, exc_type, exc_value, traceback, /)\n--\n\nCloses the engine." },
  { NULL, NULL, 0, NULL },
};

static PyGetSetDef engine_getset[] = {
  { "backend", (getter) engine_get_backend, NULL, "the backend in use: 'cpu' or 'cuda'", NULL },
  { "requested", (getter) engine_get_requested, NULL, "the backend asked for: 'auto', 'cpu' or 'cuda'", NULL },
  { "description", (getter) engine_get_description, NULL,
    "'CUDA: NVIDIA H100 ... (sm_90)' or 'CPU: OpenMP, 2 threads (why not CUDA)'", NULL },
  { "cuda_reason", (getter) engine_get_cuda_reason, NULL, "why CUDA is not in use ('' while it is)", NULL },
  { "devices", (getter) engine_get_devices, NULL, "the CUDA devices asked for (None: ES_DEVICES or all)", NULL },
  { "closed", (getter) engine_get_closed, NULL, "whether close() was called", NULL },
  { "counters", (getter) engine_get_counters, (setter) engine_set_counters,
    "hardware counters (CUPTI) for every later run: timing.metrics['counters'] (measured by the hardware), "
    "or metrics['counters_note'] where they cannot be read; each CUDA run then runs its kernels once more, "
    "after the timed pass",
    NULL },
  { NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject es_py_engine_type = {
  PyVarObject_HEAD_INIT (NULL, 0).tp_name = "entroscope.Engine",
  .tp_basicsize = sizeof (EsPyEngine),
  .tp_dealloc = (destructor) engine_dealloc,
  .tp_repr = (reprfunc) engine_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Engine(backend='auto', devices=None)\n--\n\nA compute engine that keeps its device buffers, streams "
            "and pinned staging between calls. backend is 'auto' (CUDA when usable, else the CPU), 'cpu' "
            "or 'cuda' (RuntimeError when CUDA cannot be used); devices lists CUDA device numbers (None: "
            "ES_DEVICES, else every usable one). One job runs at a time per engine; calls from several "
            "threads wait for each other, with the GIL released.",
  .tp_weaklistoffset = offsetof (EsPyEngine, weakrefs),
  .tp_methods = engine_methods,
  .tp_getset = engine_getset,
  .tp_new = engine_new,
};

bool
es_py_engine_init_types (PyObject *module)
{
  PyObject *threading, *thread, *ident;

  if (PyType_Ready (&es_py_engine_type) != 0)
    return false;
  if (!es_py_timing_type_init ())
    return false;
  Py_INCREF (&es_py_engine_type);
  if (PyModule_AddObject (module, "Engine", (PyObject *) &es_py_engine_type) != 0)
    {
      Py_DECREF (&es_py_engine_type);
      return false;
    }
  Py_INCREF (&es_py_timing_type);
  if (PyModule_AddObject (module, "Timing", (PyObject *) &es_py_timing_type) != 0)
    {
      Py_DECREF (&es_py_timing_type);
      return false;
    }

  /* The thread that receives Python's signals. */
  threading = PyImport_ImportModule ("threading");
  if (threading == NULL)
    return false;
  thread = PyObject_CallMethod (threading, "main_thread", NULL);
  Py_DECREF (threading);
  if (thread == NULL)
    return false;
  ident = PyObject_GetAttrString (thread, "ident");
  Py_DECREF (thread);
  if (ident == NULL)
    return false;
  es_py_main_thread = PyLong_AsUnsignedLong (ident);
  Py_DECREF (ident);
  return !PyErr_Occurred ();
}
