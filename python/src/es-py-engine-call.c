/* SPDX-License-Identifier: MIT */
/* entroscope.Engine's operations: arguments converted from the operation and parameter tables, SIGINT, Timing. */
#include "es-py-engine-private.h"

#include <omp.h>

#include "es-pipeline.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>

PyTypeObject es_py_timing_type;

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
  { "metrics", "why the run took its time (a dict; by name only, not in the tuple): the memory model's bytes, "
               "the achieved GB/s and its shares of the peaks, the kernels' resources, the transfers, and the "
               "hardware counters when Engine.counters is on" },
  { NULL, NULL },
};

static PyStructSequence_Desc timing_desc = {
  "entroscope.Timing",
  "Where the time of one call went (return_timing=True).",
  timing_fields,
  10,
};

bool
es_py_timing_type_init (void)
{
  return es_py_timing_type.tp_name != NULL || PyStructSequence_InitType2 (&es_py_timing_type, &timing_desc) == 0;
}

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

unsigned long es_py_main_thread;
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

  if (PyThread_get_thread_ident () != es_py_main_thread || sigaction (SIGINT, NULL, &sigint_previous) != 0)
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

/* The keyword arguments every operation takes besides its parameters. */
enum { KW_VARIANT, KW_UNITS, KW_DEPTH, KW_OUT, KW_RETURN_TIMING, KW_CHANNEL_AXIS, N_KW };
static const char *const kw_names[N_KW] = { "variant", "units", "depth", "out", "return_timing", "channel_axis" };

/* One call's arguments, sorted: the job's (parameters, units, entropy's
 * definition) and the call's own keywords (kw[KW_UNITS] unused: units
 * goes to the job). */
typedef struct {
  EsPyJobKeywords job;
  PyObject *kw[N_KW];
} CallArguments;

/* Sorts positional arguments into the op's parameters in table order and
 * keywords into parameters, call keywords and definition keywords, with
 * Python's messages for a missing image, too many, repeated or unknown
 * arguments. */
static bool
sort_arguments (EsOp op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, CallArguments *sorted)
{
  const char *name = es_op_name (op);
  EsParamId order[ES_N_PARAMS];
  int n_params = 0;

  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (op, (EsParamId) id))
      order[n_params++] = (EsParamId) id;
  if (nargs < 1)
    {
      PyErr_Format (PyExc_TypeError, "%s() missing its image argument", name);
      return false;
    }
  if (nargs > 1 + n_params)
    {
      PyErr_Format (PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", name, 1 + n_params,
                    nargs);
      return false;
    }
  for (Py_ssize_t i = 1; i < nargs; i++)
    sorted->job.values[order[i - 1]] = args[i];

  for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE (kwnames); k++)
    {
      PyObject *key = PyTuple_GET_ITEM (kwnames, k), *value = args[nargs + k];
      const char *key_text = PyUnicode_AsUTF8 (key);
      EsParamId id;
      int j;

      if (key_text == NULL)
        return false;
      if (es_param_from_name (key_text, &id) && es_op_uses (op, id))
        {
          if (sorted->job.values[id] != NULL)
            {
              PyErr_Format (PyExc_TypeError, "%s() got multiple values for argument '%s'", name, key_text);
              return false;
            }
          sorted->job.values[id] = value;
          continue;
        }
      for (j = 0; j < N_KW; j++)
        if (strcmp (key_text, kw_names[j]) == 0 && (j != KW_UNITS || es_units_convertible (op)))
          break;
      if (j == N_KW)
        {
          for (j = 0; j < ES_PY_N_DEFINITION_KW; j++)
            if (strcmp (key_text, es_py_definition_keywords[j]) == 0)
              break;
          if (j < ES_PY_N_DEFINITION_KW)
            {
              sorted->job.definition[j] = value != Py_None ? value : NULL;
              continue;
            }
          j = N_KW;
        }
      if (j == N_KW)
        {
          if (es_param_from_name (key_text, &id) || strcmp (key_text, "units") == 0)
            {
              PyErr_Format (PyExc_TypeError, "%s() got an unexpected keyword argument '%s' (%s has no %s)", name,
                            key_text, name, key_text);
              return false;
            }
          {
            PyErr_Format (PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", name, key_text);
            return false;
          }
        }
      sorted->kw[j] = value;
    }
  sorted->job.units = sorted->kw[KW_UNITS];
  return true;
}

/* depth=: None (0: the input's own) or 1..16 bits. */
static bool
parse_depth (PyObject *value, int *depth)
{
  long d;

  if (value == NULL || value == Py_None)
    return true;
  d = PyIndex_Check (value) && !PyBool_Check (value) ? PyLong_AsLong (value) : -2;
  if (d == -2 || (d == -1 && PyErr_Occurred ()))
    {
      PyErr_Clear ();
      PyErr_Format (PyExc_TypeError, "depth must be an integer or None, not %.100s", Py_TYPE (value)->tp_name);
      return false;
    }
  if (d < 1 || d > 16)
    {
      PyErr_Format (PyExc_ValueError, "depth %ld is out of range: 1..16 bits", d);
      return false;
    }
  *depth = (int) d;
  return true;
}

/* The input, and where the result goes: out= when given, else a pooled or
 * new array. channel_axis: the keyword, NULL when not given. Raises and
 * returns false with nothing left open. */
static bool
open_buffers (EsPyEngine *self, const EsJob *job, PyObject *image, int depth, PyObject *channel_axis, PyObject *out,
              EsPyInput *input, EsPyOutput *output)
{
  PyObject *pooled = NULL;
  bool ok;

  if (es_py_is_device_array (image))
    {
      if (!es_py_device_input_open (self->engine, image, depth, channel_axis, input))
        return false;
      ok = es_py_device_output_open (self->engine, out, image, input, es_job_output_format (job, input->image.format),
                                     output);
      if (!ok)
        es_py_input_close (input);
      return ok;
    }
  if (!es_py_input_open (image, depth, channel_axis, input))
    return false;
  if (out == NULL)
    {
      pooled = es_py_pooled_result (self, input->width, input->height, input->volume ? input->planes : 0,
                                    es_job_output_format (job, input->image.format));
      if (pooled == NULL && PyErr_Occurred ())
        {
          es_py_input_close (input);
          return false;
        }
    }
  ok = es_py_output_open (out != NULL ? out : pooled, input, es_job_output_format (job, input->image.format), output);
  Py_XDECREF (pooled);
  if (!ok)
    es_py_input_close (input);
  return ok;
}

/* The stream on which a call on device arrays is ordered instead of waited
 * for (EsImage.cuda_stream): the one stream that the image, the result
 * and a device mask all name through __cuda_array_interface__ (CuPy's
 * current stream), or 0. DLPack's producers (PyTorch) name none: their
 * arrays' memory could be given back to another stream before the job
 * read it, so those calls return once the result is computed. */
static uintptr_t
ordering_stream (const EsPyInput *input, const EsPyOutput *output, const EsJob *job, const EsPyDefinition *definition)
{
  const uintptr_t stream = input->wait_stream;

  if (!input->device || !output->device || stream == 0 || output->wait_stream != stream)
    return 0;
  if (es_image_on_device (job->definition.mask) && definition->mask_stream != stream)
    return 0;
  return stream;
}

/* Runs the job under the engine's lock, with the GIL held by no one; the
 * engine's notice, if any, lands in notice. *closed: the engine was closed
 * by another thread before the job could start. */
static bool
run_job (EsPyEngine *self, const EsJob *job, EsPyInput *input, EsImage *output, const uintptr_t wait_streams[3],
         EsTiming *timing, char *notice, size_t notice_size, bool *closed, EsError *error)
{
  const char *text;
  EsJob masked = *job;
  EsImage nan_mask = { 0 };
  int threads;
  bool ok;

  PyThread_acquire_lock (self->lock, WAIT_LOCK);
  if (self->engine == NULL)
    {
      PyThread_release_lock (self->lock);
      *closed = true;
      return false;
    }
  /* A device array's producers: their work so far comes first, each
   * stream once (CuPy's image and out= name the same one). es_run orders
   * the job after the result's stream itself (EsImage.cuda_stream), on
   * that stream where it can. */
  for (int i = 0; i < 3; i++)
    {
      bool seen = wait_streams[i] == 0 || wait_streams[i] == output->cuda_stream;
      for (int j = 0; j < i; j++)
        seen |= wait_streams[j] == wait_streams[i];
      if (!seen && !es_engine_wait_stream (self->engine, input->image.cuda_device, wait_streams[i], error))
        {
          PyThread_release_lock (self->lock);
          return false;
        }
    }
  threads = (long long) input->width * input->height * input->planes <= SMALL_JOB_PIXELS ? omp_get_max_threads () : 0;
  if (threads > 1)
    omp_set_num_threads (1);
  es_control_reset (self->control);
  ok = es_job_mask_nan (&masked, &input->image, &nan_mask, error)
       && es_run_controlled (self->engine, &masked, &input->image, output, timing, self->control, error);
  es_image_clear (&nan_mask);
  if (threads > 1)
    omp_set_num_threads (threads);
  text = es_engine_take_notice (self->engine);
  if (text != NULL)
    snprintf (notice, notice_size, "%s", text);
  PyThread_release_lock (self->lock);
  return ok;
}

/* EsCounters as a dict (the C fields' names, the rates 0..1), or None when
 * nothing was measured; a new reference, NULL when it raised. */
static PyObject *
counters_dict (const EsCounters *c)
{
  if (!c->measured)
    Py_RETURN_NONE;
  return Py_BuildValue ("{s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "launches", c->launches, "dram_read_bytes",
                        c->dram_read_bytes, "dram_write_bytes", c->dram_write_bytes, "l2_hit_rate", c->l2_hit_rate,
                        "shared_bank_conflicts", c->shared_bank_conflicts, "achieved_occupancy", c->achieved_occupancy,
                        "local_bytes", c->local_bytes, "l2_sectors", c->l2_sectors, "active_cycles", c->active_cycles);
}

/* EsMetrics as a dict, the names of the C fields; NULL when it raised. */
static PyObject *
metrics_dict (const EsMetrics *m)
{
  PyObject *kernels = PyList_New (0);

  for (int i = 0; kernels != NULL && i < m->n_kernels; i++)
    {
      const EsKernelInfo *k = &m->kernels[i];
      PyObject *kernel = Py_BuildValue (
        "{s:s,s:(III),s:(III),s:i,s:n,s:n,s:n,s:i,s:d,s:O,s:N}", "name", k->name, "grid", k->grid[0], k->grid[1],
        k->grid[2], "block", k->block[0], k->block[1], k->block[2], "registers", k->registers, "static_shared",
        (Py_ssize_t) k->static_shared, "dynamic_shared", (Py_ssize_t) k->dynamic_shared, "local_bytes",
        (Py_ssize_t) k->local_bytes, "blocks_per_sm", k->blocks_per_sm, "occupancy", k->occupancy, "main",
        i == m->main_kernel ? Py_True : Py_False, "counters", counters_dict (&k->counters));
      if (kernel == NULL || PyList_Append (kernels, kernel) < 0)
        Py_CLEAR (kernels);
      Py_XDECREF (kernel);
    }
  if (kernels == NULL)
    return NULL;
  return Py_BuildValue (
    "{s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:N,s:s,s:d,s:d,s:d,s:d,s:N,s:s}", "pixels", m->pixels, "read_bytes",
    m->model.read_bytes, "write_bytes", m->model.write_bytes, "shared_bytes", m->model.shared_bytes, "achieved_gbs",
    m->achieved_gbs, "copy_gbs", m->copy_gbs, "datasheet_gbs", m->datasheet_gbs, "copy_share", m->copy_share,
    "datasheet_share", m->datasheet_share, "kernels", kernels, "host_memory", es_host_memory_name (m->host_memory),
    "upload_bytes", m->upload_bytes, "download_bytes", m->download_bytes, "upload_gbs", m->upload_gbs, "download_gbs",
    m->download_gbs, "counters", counters_dict (&m->counters), "counters_note", m->counters_note);
}

/* (result, Timing) for return_timing=True; steals result, NULL when it raised. */
static PyObject *
result_with_timing (PyObject *result, const EsTiming *timing, double start, const EsPyInput *input,
                    const EsPyOutput *output)
{
  PyObject *t = PyStructSequence_New (&es_py_timing_type);

  if (t == NULL)
    {
      Py_DECREF (result);
      return NULL;
    }
  PyStructSequence_SET_ITEM (t, 0, PyFloat_FromDouble (timing->upload_ms));
  PyStructSequence_SET_ITEM (t, 1, PyFloat_FromDouble (timing->kernel_ms));
  PyStructSequence_SET_ITEM (t, 2, PyFloat_FromDouble (timing->download_ms));
  PyStructSequence_SET_ITEM (t, 3, PyFloat_FromDouble (timing->wall_ms));
  PyStructSequence_SET_ITEM (t, 4, PyUnicode_FromString (es_backend_name (timing->backend)));
  PyStructSequence_SET_ITEM (t, 5, PyUnicode_FromString (timing->variant ? timing->variant : ""));
  PyStructSequence_SET_ITEM (t, 6, PyBool_FromLong (timing->fell_back));
  PyStructSequence_SET_ITEM (t, 7, PyFloat_FromDouble (es_monotonic_ms () - start));
  PyStructSequence_SET_ITEM (t, 8, PyBool_FromLong (input->mode != ES_PY_INPUT_WRAP));
  PyStructSequence_SET_ITEM (t, 9, PyBool_FromLong (output->copy_back));
  PyStructSequence_SET_ITEM (t, 10, metrics_dict (&timing->metrics));
  if (PyErr_Occurred ())
    {
      Py_DECREF (t);
      Py_DECREF (result);
      return NULL;
    }
  return Py_BuildValue ("(NN)", result, t);
}

/* op(image, <its parameters in table order>, *, <its parameters>, variant=None,
 * [units='nats' where the op's values are nats], depth=None, out=None,
 * return_timing=False): parsed from the operation and parameter tables, so
 * that a new row of either is a new argument here without code. */
static PyObject *
engine_call_held (EsPyEngine *self, EsOp op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  EsPyDefinition *definition)
{
  double start = es_monotonic_ms ();
  CallArguments sorted = { 0 };
  int depth = 0;
  EsUnits units = ES_UNITS_NATS;
  bool return_timing = false, ok, closed = false, sigint = false, sigint_cancelled = false;
  EsJob job = ES_JOB_INIT (op);
  EsPyInput input;
  EsPyOutput output;
  EsError error;
  EsTiming timing = { 0 };
  char notice[700] = "";

  if (!sort_arguments (op, args, nargs, kwnames, &sorted))
    return NULL;
  if (!es_py_parse_variant (sorted.kw[KW_VARIANT], op, &job.variant))
    return NULL;
  if (!es_py_parse_job (op, &sorted.job, &job, &units, definition))
    return NULL;
  /* units='bits': the kernels scale H as they store it, on the host and on
   * the device alike, so no pass over the result follows. */
  job.definition.bits = units == ES_UNITS_BITS && es_units_convertible (op);
  if (!parse_depth (sorted.kw[KW_DEPTH], &depth))
    return NULL;
  if (sorted.kw[KW_RETURN_TIMING] != NULL)
    {
      int t = PyObject_IsTrue (sorted.kw[KW_RETURN_TIMING]);
      if (t < 0)
        return NULL;
      return_timing = t;
    }

  if (self->engine == NULL)
    return es_py_engine_closed_error ();
  if (!open_buffers (self, &job, args[0], depth, sorted.kw[KW_CHANNEL_AXIS],
                     sorted.kw[KW_OUT] != Py_None ? sorted.kw[KW_OUT] : NULL, &input, &output))
    return NULL;

  if (input.device && !es_py_device_resolve_minmax (args[0], &job))
    {
      es_py_output_close (&output, false);
      es_py_input_close (&input);
      return NULL;
    }
  output.image.cuda_stream = return_timing ? 0 : ordering_stream (&input, &output, &job, definition);
  if ((long long) input.width * input.height * input.planes >= SIGINT_PIXELS)
    sigint = sigint_install (self->control);
  es_error_clear (&error);
  const uintptr_t wait_streams[3] = { input.wait_stream, output.wait_stream, definition->mask_stream };
  Py_BEGIN_ALLOW_THREADS ok = es_py_input_materialize (&input, &error)
                              && run_job (self, &job, &input, &output.image, wait_streams, &timing, notice,
                                          sizeof notice, &closed, &error);
  if (ok)
    ok = es_py_output_finish (&output, &error);
  Py_END_ALLOW_THREADS if (sigint)
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
        return es_py_engine_closed_error ();
      /* Ctrl+C: Python's handler decides (KeyboardInterrupt by default). */
      if (error.code == ES_ERROR_CANCELLED && sigint_cancelled && PyErr_CheckSignals () < 0)
        return NULL;
      return es_py_raise (&error, NULL);
    }
  es_py_output_close (&output, true);
  return return_timing ? result_with_timing (output.result, &timing, start, &input, &output) : output.result;
}

/* The arrays a definition borrows are held for the whole call. */
PyObject *
es_py_engine_call (EsPyEngine *self, EsOp op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
  EsPyDefinition definition = { 0 };
  PyObject *result = engine_call_held (self, op, args, nargs, kwnames, &definition);

  es_py_definition_release (&definition);
  return result;
}
