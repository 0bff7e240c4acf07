/* SPDX-License-Identifier: MIT */
/* entroscope.Engine: one EsEngine behind a lock, operations read from the tables, the GIL released while computing. */
#include "es-py.h"

#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  PyObject_HEAD
  EsEngine *engine;           /* NULL once closed */
  /* One job at a time: EsEngine keeps device buffers, streams and a
   * notice that are not safe to share between threads. Taken with the GIL
   * released and never held while waiting for the GIL. */
  PyThread_type_lock lock;
  EsControl *control;         /* the job in flight, for cancel() and SIGINT */
  EsBackendChoice requested;
  PyObject *devices;          /* tuple of ints, or None */
  PyObject *weakrefs;
  struct ResultPool *pool;    /* page-locked results of a CUDA engine */
} EsPyEngine;

/* ---- page-locked results ----
 * A CUDA engine downloads a result straight into page-locked memory by DMA,
 * but into a fresh NumPy array through its pinned staging buffer plus the
 * page faults of memory never touched: at 8192² that was 25 ms against 6.4
 * (H200). So a CUDA engine's large results are page-locked arrays that go
 * back to a small pool of the engine when Python frees them, ready for the
 * next call of the same size (a loop over images that drops each result
 * reuses two buffers). Only touched with the GIL held. */

#define POOL_SIZE 4
#define POOL_MIN_BYTES (1u << 20)

typedef struct ResultPool {
  long refs;       /* the engine, and every array that came from it */
  bool closed;     /* the engine is closed: buffers coming back are freed */
  int n;
  EsImage free[POOL_SIZE];
} ResultPool;

typedef struct {
  ResultPool *pool;
  EsImage image;
} PooledImage;

static void
pool_release (ResultPool *pool)
{
  if (--pool->refs > 0)
    return;
  for (int i = 0; i < pool->n; i++)
    es_image_clear (&pool->free[i]);
  PyMem_RawFree (pool);
}

static void
pool_close (ResultPool *pool)
{
  pool->closed = true;
  for (int i = 0; i < pool->n; i++)
    es_image_clear (&pool->free[i]);
  pool->n = 0;
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
  if (!pool->closed && pool->n < POOL_SIZE)
    pool->free[pool->n++] = held->image;
  else
    es_image_clear (&held->image);
  pool_release (pool);
  PyMem_RawFree (held);
}

static PyTypeObject timing_type;

static PyStructSequence_Field timing_fields[] = {
  { "upload_ms", "host -> device (CUDA events); 0 on the CPU" },
  { "kernel_ms", "the kernels alone (CUDA events, or wall time on the CPU)" },
  { "download_ms", "device -> host (CUDA events); 0 on the CPU" },
  { "wall_ms", "the whole engine run (es_run), as the CLI's --timings reports it" },
  { "backend", "the backend that produced the result: 'cpu' or 'cuda'" },
  { "variant", "the kernel variant that ran ('openmp' on the CPU)" },
  { "fell_back", "CUDA failed during the job and the CPU finished it" },
  { "call_ms", "the whole Python call: checks, copies, the run and the result" },
  { "input_copied", "the input was copied (strided, Fortran order, byte-swapped, colour) rather than read in place" },
  { "output_copied", "the result went through a temporary into out= (non-contiguous or overlapping the input)" },
  { NULL, NULL },
};

static PyStructSequence_Desc timing_desc = {
  "entroscope.Timing", "Where the time of one call went (return_timing=True).", timing_fields, 10,
};

/* ---- SIGINT ----
 * A long job on the main thread stops on Ctrl+C: while it runs, a handler
 * cancels it and then calls the handler it replaced (Python's, which trips
 * its flag), so that the Python-level handler still decides what happens
 * (KeyboardInterrupt by default). Only the main thread receives Python's
 * signals, so one job at a time is concerned. */

#define SIGINT_PIXELS (1 << 16)

/* Jobs this small run on the calling thread alone: waking an OpenMP team
 * costs more than such a job (tens of microseconds on a busy machine, for a
 * 1×1 image that takes two), and the CPU runners start a team of every
 * thread whatever the image's size. omp_set_num_threads() changes only the
 * calling thread's setting, which is restored after the job. */
#define SMALL_JOB_PIXELS 1024

static unsigned long main_thread;
static struct sigaction sigint_previous;
static EsControl *volatile sigint_control;
static volatile sig_atomic_t sigint_seen;

static void
on_sigint (int number, siginfo_t *info, void *context)
{
  sigint_seen = 1;
  es_control_cancel (sigint_control);
  if (sigint_previous.sa_flags & SA_SIGINFO)
    sigint_previous.sa_sigaction (number, info, context);
  else if (sigint_previous.sa_handler != SIG_DFL && sigint_previous.sa_handler != SIG_IGN)
    sigint_previous.sa_handler (number);
}

static bool
sigint_install (EsControl *control)
{
  struct sigaction action;

  if (PyThread_get_thread_ident () != main_thread || sigaction (SIGINT, NULL, &sigint_previous) != 0)
    return false;
  /* Default (the process dies) and ignored need nothing from us. */
  if (!(sigint_previous.sa_flags & SA_SIGINFO)
      && (sigint_previous.sa_handler == SIG_DFL || sigint_previous.sa_handler == SIG_IGN))
    return false;
  sigint_seen = 0;
  sigint_control = control;
  memset (&action, 0, sizeof action);
  action.sa_sigaction = on_sigint;
  action.sa_flags = SA_SIGINFO | (sigint_previous.sa_flags & SA_ONSTACK);
  sigemptyset (&action.sa_mask);
  return sigaction (SIGINT, &action, NULL) == 0;
}

static void
sigint_restore (void)
{
  sigaction (SIGINT, &sigint_previous, NULL);
  sigint_control = NULL;
}

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
  Py_BEGIN_ALLOW_THREADS
  engine = es_engine_new_with_devices ((EsBackendChoice) choice, n_devices ? devices : NULL, n_devices, &error);
  Py_END_ALLOW_THREADS
  if (engine == NULL)
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

  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock (self->lock, WAIT_LOCK);
  engine = self->engine;
  self->engine = NULL;
  PyThread_release_lock (self->lock);
  es_engine_free (engine);
  Py_END_ALLOW_THREADS
  /* Arrays still alive keep their memory and free it when they go. */
  if (self->pool != NULL)
    pool_close (self->pool);
  self->pool = NULL;
}

static void
engine_dealloc (EsPyEngine *self)
{
  if (self->weakrefs != NULL)
    PyObject_ClearWeakRefs ((PyObject *) self);
  /* No call can be running: a call holds a reference to the engine. */
  if (self->pool != NULL)
    pool_close (self->pool);
  es_engine_free (self->engine);
  if (self->lock != NULL)
    PyThread_free_lock (self->lock);
  es_control_free (self->control);
  Py_XDECREF (self->devices);
  Py_TYPE (self)->tp_free ((PyObject *) self);
}

/* ---- running a job ---- */

static PyObject *
engine_closed_error (void)
{
  return PyErr_Format (PyExc_ValueError, "the engine is closed");
}

/* A new result for a CUDA engine: a page-locked array from the pool (or
 * newly allocated), or NULL without an error where a plain NumPy array is
 * better (the CPU, small images). */
static PyObject *
pooled_result (EsPyEngine *self, int width, int height, EsFormat format)
{
  size_t bytes = (size_t) width * height * es_format_size (format);
  npy_intp dims[2] = { height, width }, strides[2] = { (npy_intp) ((size_t) width * es_format_size (format)),
                                                       (npy_intp) es_format_size (format) };
  PooledImage *held;
  PyObject *capsule, *array;
  EsImage image = { 0 };
  EsError error;
  bool cuda = false, ok = false;

  if (bytes < POOL_MIN_BYTES || self->pool == NULL)
    return NULL;
  for (int i = 0; i < self->pool->n; i++)
    if (self->pool->free[i].width == width && self->pool->free[i].height == height
        && self->pool->free[i].format == format)
      {
        image = self->pool->free[i];
        self->pool->free[i] = self->pool->free[--self->pool->n];
        ok = true;
        break;
      }
  if (!ok)
    {
      es_error_clear (&error);
      Py_BEGIN_ALLOW_THREADS
      PyThread_acquire_lock (self->lock, WAIT_LOCK);
      cuda = self->engine != NULL && es_engine_backend (self->engine) == ES_BACKEND_CUDA;
      if (cuda)
        ok = es_engine_image_alloc (self->engine, &image, width, height, format,
                                    format == ES_FORMAT_U8 ? 8 : 0, &error);
      PyThread_release_lock (self->lock);
      Py_END_ALLOW_THREADS
      if (!ok)
        return NULL;  /* no CUDA (any more) or no page-locked memory: a plain array will do */
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
  array = PyArray_New (&PyArray_Type, 2, dims, format == ES_FORMAT_F32 ? NPY_FLOAT32 : NPY_UINT8, strides,
                       image.pixels, 0, NPY_ARRAY_CARRAY, NULL);
  if (array == NULL || PyArray_SetBaseObject ((PyArrayObject *) array, capsule) != 0)
    {
      Py_XDECREF (array);
      if (array == NULL)
        Py_DECREF (capsule);
      return NULL;
    }
  return array;
}

/* The keyword arguments every operation takes besides its parameters. */
enum { KW_VARIANT, KW_UNITS, KW_DEPTH, KW_OUT, KW_RETURN_TIMING, N_KW };
static const char *const kw_names[N_KW] = { "variant", "units", "depth", "out", "return_timing" };
/* normalized is part of the entropy's definition, not a display unit. */
static const char *const unit_names[] = { "nats", "bits", "normalized", NULL };
#define UNITS_NORMALIZED 2

/* op(image, <its parameters in table order>, *, <its parameters>, variant=None,
 * [units='nats' where the op's values are nats], depth=None, out=None,
 * return_timing=False): parsed from the operation and parameter tables, so
 * that a new row of either is a new argument here without code. */
static PyObject *
engine_call_held (EsPyEngine *self, EsOp op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  EsPyDefinition *definition)
{
  double start = es_py_now_ms ();
  const char *name = es_op_name (op);
  EsParamId order[ES_N_PARAMS];
  PyObject *values[ES_N_PARAMS] = { NULL }, *kw[N_KW] = { NULL }, *definition_kw[ES_PY_N_DEFINITION_KW] = { NULL };
  int n_params = 0, depth = 0, units = -1;
  bool return_timing = false, ok, closed = false, sigint = false, sigint_cancelled = false;
  EsJob job = ES_JOB_INIT (op);
  EsPyInput input;
  EsPyOutput output;
  EsError error;
  EsTiming timing = { 0 };
  char notice[700] = "";

  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (op, (EsParamId) id))
      order[n_params++] = (EsParamId) id;
  if (nargs < 1)
    return PyErr_Format (PyExc_TypeError, "%s() missing its image argument", name);
  if (nargs > 1 + n_params)
    return PyErr_Format (PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", name,
                         1 + n_params, nargs);
  for (Py_ssize_t i = 1; i < nargs; i++)
    values[order[i - 1]] = args[i];

  for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE (kwnames); k++)
    {
      PyObject *key = PyTuple_GET_ITEM (kwnames, k), *value = args[nargs + k];
      const char *key_text = PyUnicode_AsUTF8 (key);
      EsParamId id;
      int j;

      if (key_text == NULL)
        return NULL;
      if (es_param_from_name (key_text, &id) && es_op_uses (op, id))
        {
          if (values[id] != NULL)
            return PyErr_Format (PyExc_TypeError, "%s() got multiple values for argument '%s'", name, key_text);
          values[id] = value;
          continue;
        }
      for (j = 0; j < N_KW; j++)
        if (strcmp (key_text, kw_names[j]) == 0 && (j != KW_UNITS || es_units_convertible (op)))
          break;
      if (j == N_KW && op == ES_OP_ENTROPY)
        {
          for (j = 0; j < ES_PY_N_DEFINITION_KW; j++)
            if (strcmp (key_text, es_py_definition_keywords[j]) == 0)
              break;
          if (j < ES_PY_N_DEFINITION_KW)
            {
              definition_kw[j] = value != Py_None ? value : NULL;
              continue;
            }
          j = N_KW;
        }
      if (j == N_KW)
        {
          if (es_param_from_name (key_text, &id) || strcmp (key_text, "units") == 0)
            return PyErr_Format (PyExc_TypeError, "%s() got an unexpected keyword argument '%s' (%s has no %s)",
                                 name, key_text, name, key_text);
          return PyErr_Format (PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", name, key_text);
        }
      kw[j] = value;
    }

  if (!es_py_parse_variant (kw[KW_VARIANT], op, &job.variant))
    return NULL;
  /* units=None: nats, or the preset's. */
  if (kw[KW_UNITS] != NULL && kw[KW_UNITS] != Py_None
      && !es_py_parse_choice (kw[KW_UNITS], "units", unit_names, &units))
    return NULL;
  job.definition.normalized = units == UNITS_NORMALIZED;
  /* The definition (a preset's window and levels) first: given parameters win. */
  if (!es_py_parse_definition (definition_kw, &job, values[ES_PARAM_WINDOW] != NULL, &units, definition))
    return NULL;
  /* The job, checked as the CLI checks its options: by the tables. */
  for (int i = 0; i < n_params; i++)
    if (values[order[i]] != NULL && !es_py_parse_param (es_param (order[i]), values[order[i]], &job))
      return NULL;
  if (units < 0 || units == UNITS_NORMALIZED)
    units = ES_UNITS_NATS;
  es_error_clear (&error);
  if (!es_job_validate (&job, &error))
    return es_py_raise (&error, NULL);
  if (kw[KW_DEPTH] != NULL && kw[KW_DEPTH] != Py_None)
    {
      long d = PyIndex_Check (kw[KW_DEPTH]) && !PyBool_Check (kw[KW_DEPTH]) ? PyLong_AsLong (kw[KW_DEPTH]) : -2;

      if (d == -2 || (d == -1 && PyErr_Occurred ()))
        {
          PyErr_Clear ();
          return PyErr_Format (PyExc_TypeError, "depth must be an integer or None, not %.100s",
                               Py_TYPE (kw[KW_DEPTH])->tp_name);
        }
      if (d < 1 || d > 16)
        return PyErr_Format (PyExc_ValueError, "depth %ld is out of range: 1..16 bits", d);
      depth = (int) d;
    }
  if (kw[KW_RETURN_TIMING] != NULL)
    {
      int t = PyObject_IsTrue (kw[KW_RETURN_TIMING]);
      if (t < 0)
        return NULL;
      return_timing = t;
    }

  if (self->engine == NULL)
    return engine_closed_error ();
  if (!es_py_input_open (args[0], depth, &input))
    return NULL;
  {
    PyObject *out = kw[KW_OUT] != NULL && kw[KW_OUT] != Py_None ? kw[KW_OUT] : NULL, *pooled = NULL;

    if (out == NULL)
      {
        pooled = pooled_result (self, input.width, input.height, es_op_output_format (op));
        if (pooled == NULL && PyErr_Occurred ())
          {
            es_py_input_close (&input);
            return NULL;
          }
      }
    ok = es_py_output_open (out != NULL ? out : pooled, &input, es_op_output_format (op), &output);
    Py_XDECREF (pooled);
    if (!ok)
      {
        es_py_input_close (&input);
        return NULL;
      }
  }

  if ((long long) input.width * input.height >= SIGINT_PIXELS)
    sigint = sigint_install (self->control);
  es_error_clear (&error);
  Py_BEGIN_ALLOW_THREADS
  ok = es_py_input_materialize (&input, &error);
  if (ok)
    {
      PyThread_acquire_lock (self->lock, WAIT_LOCK);
      if (self->engine == NULL)
        closed = true, ok = false;
      else
        {
          const char *text;

          int threads = (long long) input.width * input.height <= SMALL_JOB_PIXELS ? omp_get_max_threads () : 0;

          if (threads > 1)
            omp_set_num_threads (1);
          es_control_reset (self->control);
          ok = es_run_controlled (self->engine, &job, &input.image, &output.image, &timing, self->control, &error);
          if (threads > 1)
            omp_set_num_threads (threads);
          text = es_engine_take_notice (self->engine);
          if (text != NULL)
            snprintf (notice, sizeof notice, "%s", text);
        }
      PyThread_release_lock (self->lock);
    }
  if (ok && units == ES_UNITS_BITS)
    {
      const EsImage *values_image = &output.image;
      long long pixels = (long long) values_image->width * values_image->height;

#pragma omp parallel for schedule(static) if (pixels > 65536)
      for (int y = 0; y < values_image->height; y++)
        {
          float *row = es_image_row (values_image, y);
          for (int x = 0; x < values_image->width; x++)
            row[x] = (float) (row[x] * (1.0 / M_LN2));
        }
    }
  if (ok)
    ok = es_py_output_finish (&output, &error);
  Py_END_ALLOW_THREADS
  if (sigint)
    {
      sigint_restore ();
      sigint_cancelled = sigint_seen;
    }
  es_py_input_close (&input);

  if (notice[0] != '\0' && PyErr_WarnEx (PyExc_RuntimeWarning, notice, 1) < 0)
    ok = false, closed = false, error.code = ES_OK;
  if (!ok)
    {
      es_py_output_close (&output, false);
      if (PyErr_Occurred ())
        return NULL;
      if (closed)
        return engine_closed_error ();
      /* Ctrl+C: Python's handler decides (KeyboardInterrupt by default). */
      if (error.code == ES_ERROR_CANCELLED && sigint_cancelled && PyErr_CheckSignals () < 0)
        return NULL;
      return es_py_raise (&error, NULL);
    }
  es_py_output_close (&output, true);

  if (return_timing)
    {
      PyObject *t = PyStructSequence_New (&timing_type);

      if (t == NULL)
        {
          Py_DECREF (output.result);
          return NULL;
        }
      PyStructSequence_SET_ITEM (t, 0, PyFloat_FromDouble (timing.upload_ms));
      PyStructSequence_SET_ITEM (t, 1, PyFloat_FromDouble (timing.kernel_ms));
      PyStructSequence_SET_ITEM (t, 2, PyFloat_FromDouble (timing.download_ms));
      PyStructSequence_SET_ITEM (t, 3, PyFloat_FromDouble (timing.wall_ms));
      PyStructSequence_SET_ITEM (t, 4, PyUnicode_FromString (es_backend_name (timing.backend)));
      PyStructSequence_SET_ITEM (t, 5, PyUnicode_FromString (timing.variant ? timing.variant : ""));
      PyStructSequence_SET_ITEM (t, 6, PyBool_FromLong (timing.fell_back));
      PyStructSequence_SET_ITEM (t, 7, PyFloat_FromDouble (es_py_now_ms () - start));
      PyStructSequence_SET_ITEM (t, 8, PyBool_FromLong (input.mode != ES_PY_INPUT_WRAP));
      PyStructSequence_SET_ITEM (t, 9, PyBool_FromLong (output.copy_back));
      if (PyErr_Occurred ())
        {
          Py_DECREF (t);
          Py_DECREF (output.result);
          return NULL;
        }
      return Py_BuildValue ("(NN)", output.result, t);
    }
  return output.result;
}

/* The arrays a definition borrows are held for the whole call. */
static PyObject *
engine_call (EsPyEngine *self, EsOp op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
  EsPyDefinition definition = { 0 };
  PyObject *result = engine_call_held (self, op, args, nargs, kwnames, &definition);

  es_py_definition_release (&definition);
  return result;
}

#define OP_METHOD(fn, op)                                                                     \
  static PyObject *fn (EsPyEngine *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
  {                                                                                           \
    return engine_call (self, op, args, nargs, kwnames);                                      \
  }

OP_METHOD (engine_quantize, ES_OP_QUANTIZE)
OP_METHOD (engine_entropy, ES_OP_ENTROPY)
OP_METHOD (engine_equalize, ES_OP_EQUALIZE)
OP_METHOD (engine_sharpen, ES_OP_SHARPEN)

/* run(op, image, ...): any row of the operation table by name. */
static PyObject *
engine_run (EsPyEngine *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
  EsOp op;

  if (nargs < 1)
    return PyErr_Format (PyExc_TypeError, "run() missing the operation");
  if (!es_py_parse_op (args[0], &op))
    return NULL;
  return engine_call (self, op, args + 1, nargs - 1, kwnames);
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
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock (self->lock, WAIT_LOCK);
  if (self->engine == NULL)
    closed = true, ok = false;
  else
    ok = es_engine_image_alloc (self->engine, &image, (int) width, (int) height, format,
                                format == ES_FORMAT_U8 ? 8 : format == ES_FORMAT_U16 ? 16 : 0, &error);
  PyThread_release_lock (self->lock);
  Py_END_ALLOW_THREADS
  if (closed)
    return engine_closed_error ();
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

  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock (self->lock, WAIT_LOCK);
  if (self->engine == NULL)
    closed = true;
  else if (kind == TEXT_DESCRIPTION)
    snprintf (text, sizeof text, "%s", es_engine_describe (self->engine));
  else if (kind == TEXT_CUDA_REASON)
    snprintf (text, sizeof text, "%s", es_engine_cuda_reason (self->engine));
  else
    snprintf (text, sizeof text, "%s", es_backend_name (es_engine_backend (self->engine)));
  PyThread_release_lock (self->lock);
  Py_END_ALLOW_THREADS
  if (closed)
    return engine_closed_error ();
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
  { "entropy", FASTCALL (engine_entropy),
    "entropy(image, window=5, levels=16, *, variant=None, units='nats', depth=None, out=None, "
    "return_timing=False) -> float32 array: local entropy of the levels in a window x window window "
    "clipped to the image." },
  { "equalize", FASTCALL (engine_equalize),
    "equalize(image, *, variant=None, depth=None, out=None, return_timing=False) -> uint8 array: "
    "histogram equalization, bit-identical to cv2.equalizeHist." },
  { "sharpen", FASTCALL (engine_sharpen),
    "sharpen(image, amount=1.0, *, variant=None, depth=None, out=None, return_timing=False) -> uint8 array: "
    "c + amount * (4c - N - S - E - W), replicated borders." },
  { "quantize", FASTCALL (engine_quantize),
    "quantize(image, levels=16, *, variant=None, depth=None, out=None, return_timing=False) -> uint8 array: "
    "floor(v * levels / 2^depth)." },
  { "run", FASTCALL (engine_run), "run(op, image, ...): any operation by name, with its own arguments." },
  { "zeros", (PyCFunction) (void (*) (void)) engine_zeros, METH_VARARGS | METH_KEYWORDS,
    "zeros(shape, dtype=numpy.uint8) -> array: zeroed, in the memory this engine moves fastest (page-locked "
    "on CUDA), for inputs and out= reused over many calls." },
  { "cancel", (PyCFunction) engine_cancel, METH_NOARGS,
    "cancel(): stops the job this engine is running now (it raises entroscope.Cancelled); thread-safe." },
  { "close", (PyCFunction) engine_close, METH_NOARGS,
    "close(): frees the engine's device buffers now; later calls raise ValueError." },
  { "__enter__", (PyCFunction) engine_enter, METH_NOARGS, NULL },
  { "__exit__", (PyCFunction) engine_exit, METH_VARARGS, NULL },
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
  { NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject es_py_engine_type = {
  PyVarObject_HEAD_INIT (NULL, 0)
  .tp_name = "entroscope.Engine",
  .tp_basicsize = sizeof (EsPyEngine),
  .tp_dealloc = (destructor) engine_dealloc,
  .tp_repr = (reprfunc) engine_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Engine(backend='auto', devices=None): a compute engine that keeps its device buffers, streams "
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
  if (timing_type.tp_name == NULL && PyStructSequence_InitType2 (&timing_type, &timing_desc) != 0)
    return false;
  Py_INCREF (&es_py_engine_type);
  if (PyModule_AddObject (module, "Engine", (PyObject *) &es_py_engine_type) != 0)
    {
      Py_DECREF (&es_py_engine_type);
      return false;
    }
  Py_INCREF (&timing_type);
  if (PyModule_AddObject (module, "Timing", (PyObject *) &timing_type) != 0)
    {
      Py_DECREF (&timing_type);
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
  main_thread = PyLong_AsUnsignedLong (ident);
  Py_DECREF (ident);
  return !PyErr_Occurred ();
}
