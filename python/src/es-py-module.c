/* SPDX-License-Identifier: MIT */
/* The extension module entroscope._entroscope: errors, the tables (operations, parameters, variants) and limits. */
#define ES_PY_IMPORT_ARRAY
#include "es-py.h"

#include <errno.h>

#include "es-definitions.h"
#include <math.h>
#include <string.h>

PyObject *es_py_cancelled_error;
PyTypeObject *es_py_image_type;
static PyTypeObject variant_type;

/* ---- errors ---- */

/* The errno whose strerror() text is the message, so that a missing file
 * raises FileNotFoundError as open() would; 0 when none is. */
static int
errno_of_message (const char *message)
{
  static const int candidates[] = { ENOENT, EACCES,       EPERM, EISDIR, ENOTDIR, ENOSPC, EROFS, EEXIST,
                                    ELOOP,  ENAMETOOLONG, EIO,   EMFILE, EINVAL,  EFBIG,  EDQUOT };

  size_t n = strlen (message);

  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
    {
      const char *text = strerror (candidates[i]);
      size_t m = strlen (text);

      /* "No such file or directory", or "cannot write 'x': No such file or directory". */
      if (strcmp (message, text) == 0
          || (n > m + 2 && strcmp (message + n - m, text) == 0 && strncmp (message + n - m - 2, ": ", 2) == 0))
        return candidates[i];
    }
  return 0;
}

PyObject *
es_py_raise (const EsError *error, PyObject *filename)
{
  PyObject *type;
  const char *message = error->message[0] ? error->message : es_error_code_name (error->code);

  switch (error->code)
    {
      case ES_ERROR_IO: {
        int code = errno_of_message (message);
        PyObject *name = filename ? PyOS_FSPath (filename) : NULL, *exc;

        if (filename != NULL && name == NULL)
          return NULL;
        /* OSError(errno, text, filename) picks FileNotFoundError,
         * PermissionError, ... and keeps errno and filename. */
        if (code != 0)
          exc = PyObject_CallFunction (PyExc_OSError, "isO", code, message, name ? name : Py_None);
        else if (name != NULL)
          {
            exc = PyUnicode_Check (name)
                    ? PyObject_CallFunction (PyExc_OSError, "N", PyUnicode_FromFormat ("%U: %s", name, message))
                    : PyObject_CallFunction (PyExc_OSError, "s", message);
            if (exc != NULL && PyObject_SetAttrString (exc, "filename", name) != 0)
              Py_CLEAR (exc);
          }
        else
          exc = PyObject_CallFunction (PyExc_OSError, "s", message);
        Py_XDECREF (name);
        if (exc != NULL)
          {
            PyErr_SetObject ((PyObject *) Py_TYPE (exc), exc);
            Py_DECREF (exc);
          }
        return NULL;
      }
    case ES_ERROR_INVALID:
    case ES_ERROR_FORMAT:
    case ES_ERROR_LIMIT: type = PyExc_ValueError; break;
    case ES_ERROR_NO_MEMORY: type = PyExc_MemoryError; break;
    case ES_ERROR_CANCELLED: type = es_py_cancelled_error; break;
    case ES_OK:
    case ES_ERROR_COMPUTE:
    case ES_ERROR_UNAVAILABLE:
    default: type = PyExc_RuntimeError; break;
    }
  if (filename != NULL)
    PyErr_Format (type, "%S: %s", filename, message);
  else
    PyErr_SetString (type, message);
  return NULL;
}

/* ---- parsing helpers ---- */

bool
es_py_parse_choice (PyObject *value, const char *what, const char *const *names, int *index)
{
  char list[256] = "";
  size_t len = 0;
  int n = 0;

  if (PyUnicode_Check (value))
    {
      const char *text = PyUnicode_AsUTF8 (value);
      if (text == NULL)
        return false;
      for (n = 0; names[n] != NULL; n++)
        if (strcmp (text, names[n]) == 0)
          {
            *index = n;
            return true;
          }
    }
  else
    for (n = 0; names[n] != NULL; n++)
      ;
  for (int i = 0; i < n && len < sizeof list; i++)
    len += (size_t) snprintf (list + len, sizeof list - len, "%s%s",
                              i == 0       ? ""
                              : i == n - 1 ? " or "
                                           : ", ",
                              names[i]);
  PyErr_Format (PyUnicode_Check (value) ? PyExc_ValueError : PyExc_TypeError, "%s=%R: expected %s", what, value, list);
  return false;
}

bool
es_py_parse_param (const EsParam *param, PyObject *value, EsJob *job)
{
  double v;
  EsError error;

  if (PyBool_Check (value))
    {
      PyErr_Format (PyExc_TypeError, "%s must be a number, not bool", param->name);
      return false;
    }
  if (param->digits == 0)
    {
      /* A count: an int (or a NumPy integer), never 5.0, as the CLI
       * refuses "--window=5.0". */
      PyObject *index;
      int overflow;
      long long n;

      if (!PyIndex_Check (value))
        {
          PyErr_Format (PyExc_TypeError, "%s must be an integer, not %.100s", param->name, Py_TYPE (value)->tp_name);
          return false;
        }
      index = PyNumber_Index (value);
      if (index == NULL)
        return false;
      n = PyLong_AsLongLongAndOverflow (index, &overflow);
      if (n == -1 && PyErr_Occurred ())
        {
          Py_DECREF (index);
          return false;
        }
      if (overflow != 0)
        {
          /* Past long long: the table's message, with the number as given (not "inf"). */
          char range[64];

          es_param_describe_range (param, range, sizeof range);
          PyErr_Format (PyExc_ValueError, "%s %S is out of range: %s", param->name, index, range);
          Py_DECREF (index);
          return false;
        }
      Py_DECREF (index);
      v = (double) n;
    }
  else
    {
      v = PyFloat_AsDouble (value);
      if (v == -1.0 && PyErr_Occurred ())
        {
          PyErr_Clear ();
          PyErr_Format (PyExc_TypeError, "%s must be a number, not %.100s", param->name, Py_TYPE (value)->tp_name);
          return false;
        }
    }
  es_error_clear (&error);
  if (!es_param_check (param, v, &error))
    {
      es_py_raise (&error, NULL);
      return false;
    }
  es_job_set_param (job, param->id, v);
  return true;
}

static void
op_names (char *text, size_t size)
{
  size_t len = 0;

  text[0] = '\0';
  for (int op = 0; op < ES_N_OPS && len < size; op++)
    len += (size_t) snprintf (text + len, size - len, "%s%s", op ? ", " : "", es_op_name ((EsOp) op));
}

bool
es_py_parse_op (PyObject *value, EsOp *op)
{
  char list[128];
  const char *text;

  if (!PyUnicode_Check (value))
    {
      PyErr_Format (PyExc_TypeError, "the operation must be a str, not %.100s", Py_TYPE (value)->tp_name);
      return false;
    }
  text = PyUnicode_AsUTF8 (value);
  if (text == NULL)
    return false;
  if (es_op_from_name (text, op))
    return true;
  op_names (list, sizeof list);
  PyErr_Format (PyExc_ValueError, "unknown operation %R (%s)", value, list);
  return false;
}

bool
es_py_parse_variant (PyObject *value, EsOp op, const char **variant)
{
  char list[512] = "";
  size_t n, len = 0;
  const EsVariant *variants;
  const char *id;

  *variant = NULL;
  if (value == NULL || value == Py_None)
    return true;
  if (!PyUnicode_Check (value))
    {
      PyErr_Format (PyExc_TypeError, "variant must be a str or None, not %.100s", Py_TYPE (value)->tp_name);
      return false;
    }
  id = PyUnicode_AsUTF8 (value);
  if (id == NULL)
    return false;
  if (es_variant_find (op, id) != NULL)
    {
      *variant = id;
      return true;
    }
  /* As entroscope-cli's check_variant says it. */
  variants = es_variants (op, &n);
  for (size_t i = 0; i < n && len < sizeof list; i++)
    len += (size_t) snprintf (list + len, sizeof list - len, "%s%s", i ? ", " : "", variants[i].id);
  if (n == 0)
    PyErr_Format (PyExc_ValueError, "variant=%R: this build has no CUDA kernel variants", value);
  else
    PyErr_Format (PyExc_ValueError, "variant=%R: %s has no such variant (%s)", value, es_op_name (op), list);
  return false;
}

/* ---- module functions ---- */

static PyStructSequence_Field variant_fields[] = {
  { "id", "the id that variant= takes" },
  { "label", "a short title" },
  { "lesson", "the one sentence about GPU memory that it teaches" },
  { "source", "where the lesson comes from" },
  { "is_default", "whether it is the operation's default" },
  { "transfer", "how it moves images: default, pageable, per-call or streams" },
  { NULL, NULL },
};

static PyStructSequence_Desc variant_desc = {
  "entroscope.Variant",
  "One CUDA kernel variant of an operation (a row of its variant table).",
  variant_fields,
  6,
};

static const char *
transfer_name (EsTransfer transfer)
{
  switch (transfer)
    {
    case ES_TRANSFER_DEFAULT: return "default";
    case ES_TRANSFER_PAGEABLE: return "pageable";
    case ES_TRANSFER_PER_CALL: return "per-call";
    case ES_TRANSFER_STREAMS: return "streams";
    }
  return "?";
}

static PyObject *
module_variants (PyObject *module, PyObject *arg)
{
  EsOp op;
  size_t n;
  const EsVariant *variants;
  PyObject *list;

  (void) module;
  if (!es_py_parse_op (arg, &op))
    return NULL;
  variants = es_variants (op, &n);
  list = PyList_New ((Py_ssize_t) n);
  if (list == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++)
    {
      const EsVariant *v = &variants[i];
      PyObject *row = PyStructSequence_New (&variant_type);

      if (row == NULL)
        {
          Py_DECREF (list);
          return NULL;
        }
      PyStructSequence_SET_ITEM (row, 0, PyUnicode_FromString (v->id));
      PyStructSequence_SET_ITEM (row, 1, PyUnicode_FromString (v->label ? v->label : ""));
      PyStructSequence_SET_ITEM (row, 2, PyUnicode_FromString (v->lesson ? v->lesson : ""));
      PyStructSequence_SET_ITEM (row, 3, PyUnicode_FromString (v->source ? v->source : ""));
      PyStructSequence_SET_ITEM (row, 4, PyBool_FromLong (v->is_default));
      PyStructSequence_SET_ITEM (row, 5, PyUnicode_FromString (transfer_name (v->transfer)));
      if (PyErr_Occurred ())
        {
          Py_DECREF (row);
          Py_DECREF (list);
          return NULL;
        }
      PyList_SET_ITEM (list, (Py_ssize_t) i, row);
    }
  return list;
}

/* dict[key] = row, taking the reference to row (which may be NULL after a
 * failed Py_BuildValue); false with the exception set on failure. */
static bool
set_row (PyObject *dict, const char *key, PyObject *row)
{
  bool ok = row != NULL && PyDict_SetItemString (dict, key, row) == 0;

  Py_XDECREF (row);
  return ok;
}
/* The operation table, as a dict per operation. */
static PyObject *
module_ops (PyObject *module, PyObject *unused)
{
  PyObject *result = PyDict_New ();

  (void) module, (void) unused;
  if (result == NULL)
    return NULL;
  for (int i = 0; i < ES_N_OPS; i++)
    {
      const EsOpInfo *info = es_op_info ((EsOp) i);
      PyObject *params = PyTuple_New (0), *row;
      EsJob job = ES_JOB_INIT ((EsOp) i);

      for (int id = 0; id < ES_N_PARAMS && params != NULL; id++)
        if (es_op_uses ((EsOp) i, (EsParamId) id))
          {
            PyObject *name = PyUnicode_FromString (es_param ((EsParamId) id)->name);
            Py_ssize_t size = PyTuple_GET_SIZE (params);
            if (name == NULL || _PyTuple_Resize (&params, size + 1) != 0)
              {
                Py_XDECREF (name);
                Py_CLEAR (params);
                break;
              }
            PyTuple_SET_ITEM (params, size, name);
          }
      if (params == NULL)
        {
          Py_DECREF (result);
          return NULL;
        }
      /* dtype and range_max: of an 8-bit input's result; dtype_16 and range_max_16: of a 16-bit input's. */
      row = Py_BuildValue (
        "{s:s,s:s,s:s,s:s,s:s,s:N,s:s,s:i,s:O,s:s,s:s,s:s,s:d,s:d}", "name", info->name, "title", info->title,
        "summary", info->summary, "dtype", es_py_dtype_name (es_job_output_format (&job, ES_FORMAT_U8)), "dtype_16",
        es_py_dtype_name (es_job_output_format (&job, ES_FORMAT_U16)), "params", params, "units", info->units, "halo",
        info->halo (&job), "whole_image", es_job_whole_image (&job) ? Py_True : Py_False, "colormap", info->colormap,
        "range", info->range_text, "result_title", info->result_title, "range_max",
        es_job_range_max (&job, es_job_output_format (&job, ES_FORMAT_U8)), "range_max_16",
        es_job_range_max (&job, es_job_output_format (&job, ES_FORMAT_U16)));
      if (!set_row (result, info->name, row))
        {
          Py_DECREF (result);
          return NULL;
        }
    }
  return result;
}

/* The job of `function (op, **job)` (the same parser as entropy()'s):
 * halo(), extent(), extent_3d() and tile_passes(). *held keeps what the
 * definition borrows until es_py_definition_release. */
static bool
op_job (PyObject *args, PyObject *kwargs, const char *function, EsJob *job, EsPyDefinition *held)
{
  static char *keywords[] = { "op", NULL };
  PyObject *op_name, *rest;
  EsPyJobKeywords kw = { .units = NULL };
  EsUnits units;
  EsOp op;
  bool ok;
  char format[32];

  snprintf (format, sizeof format, "O:%s", function);
  if (!es_py_split_job_keywords (function, keywords, kwargs, &kw, &rest))
    return false;
  ok = PyArg_ParseTupleAndKeywords (args, rest, format, keywords, &op_name) && es_py_parse_op (op_name, &op);
  Py_XDECREF (rest);
  if (!ok)
    return false;
  *job = (EsJob) ES_JOB_INIT (op);
  if (es_py_parse_job (op, &kw, job, &units, held))
    return true;
  es_py_definition_release (held);
  return false;
}

/* halo(), extent() and extent_3d(): the half depth, half height and half
 * width of what a result of the job reads (half depth 0 for 2-D windows
 * and for the operations that run plane by plane on a volume). */
static bool
job_extent (PyObject *args, PyObject *kwargs, const char *function, int *half_depth, int *half_height, int *half_width)
{
  EsPyDefinition held = { 0 };
  EsJob job;

  if (!op_job (args, kwargs, function, &job, &held))
    return false;
  if (job.op == ES_OP_ENTROPY)
    es_window_extent_3d (&job, half_depth, half_height, half_width);
  else
    {
      *half_depth = es_op_info (job.op)->plane_halo (&job);
      *half_height = *half_width = es_op_info (job.op)->halo (&job);
    }
  es_py_definition_release (&held);
  return true;
}

/* The halo of an operation for given parameters: the rows (and columns) of
 * input beyond a tile that a tile's result depends on. */
static PyObject *
module_halo (PyObject *module, PyObject *args, PyObject *kwargs)
{
  int half_depth, half_height, half_width;

  (void) module;
  if (!job_extent (args, kwargs, "halo", &half_depth, &half_height, &half_width))
    return NULL;
  return PyLong_FromLong (half_height);
}

/* (rows, columns) of input beyond a tile on each side that a tile's result
 * reads: a rectangle's or a footprint's half height and half width. */
static PyObject *
module_extent (PyObject *module, PyObject *args, PyObject *kwargs)
{
  int half_depth, half_height, half_width;

  (void) module;
  if (!job_extent (args, kwargs, "extent", &half_depth, &half_height, &half_width))
    return NULL;
  return Py_BuildValue ("(ii)", half_height, half_width);
}

/* (planes, rows, columns) of input beyond a block of a volume, on each
 * side, that its result reads: a 3-D window's half depth, half height and
 * half width; 0 planes for a 2-D window, which runs plane by plane. */
static PyObject *
module_extent_3d (PyObject *module, PyObject *args, PyObject *kwargs)
{
  int half_depth, half_height, half_width;

  (void) module;
  if (!job_extent (args, kwargs, "extent_3d", &half_depth, &half_height, &half_width))
    return NULL;
  return Py_BuildValue ("(iii)", half_depth, half_height, half_width);
}

/* The parameter table: name -> dict. */
static PyObject *
module_params (PyObject *module, PyObject *unused)
{
  PyObject *result = PyDict_New ();

  (void) module, (void) unused;
  if (result == NULL)
    return NULL;
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      const EsParam *p = es_param ((EsParamId) id);
      char range[64];
      PyObject *row;

      es_param_describe_range (p, range, sizeof range);
      row = Py_BuildValue ("{s:s,s:s,s:s,s:d,s:d,s:d,s:O,s:O,s:s}", "name", p->name, "title", p->title, "description",
                           p->description, "min", p->min, "max", p->max, "default", p->default_value, "integer",
                           p->digits == 0 ? Py_True : Py_False, "odd", p->odd ? Py_True : Py_False, "range", range);
      if (!set_row (result, p->name, row))
        {
          Py_DECREF (result);
          return NULL;
        }
    }
  return result;
}

/* gray(image, *, depth=None, channel_axis=<not given>) -> array: the gray
 * samples the operations read, colour reduced as the CLI reduces it (BT.709
 * on stored values), in the image's dtype: (rows, columns) or (planes, rows,
 * columns); a gray image or volume is copied. */
static PyObject *
module_gray (PyObject *module, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "image", "depth", "channel_axis", NULL };
  PyObject *image, *depth_obj = Py_None, *channel_axis = NULL, *result;
  EsPyInput input;
  EsError error;
  int depth = 0;
  bool ok;

  (void) module;
  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O|$OO:gray", keywords, &image, &depth_obj, &channel_axis))
    return NULL;
  if (depth_obj != Py_None)
    {
      depth = (int) PyLong_AsLong (depth_obj);
      if (depth == -1 && PyErr_Occurred ())
        return NULL;
      if (depth < 1 || depth > 16)
        return PyErr_Format (PyExc_ValueError, "depth %d is out of range: 1..16 bits", depth);
    }
  if (!es_py_input_open (image, depth, channel_axis, &input))
    return NULL;
  {
    npy_intp dims[3] = { input.planes, input.height, input.width };
    result = PyArray_SimpleNew (input.volume ? 3 : 2, input.volume ? dims : dims + 1,
                                input.image.format == ES_FORMAT_U8 ? NPY_UINT8 : NPY_UINT16);
  }
  if (result == NULL)
    {
      es_py_input_close (&input);
      return NULL;
    }
  es_error_clear (&error);
  Py_BEGIN_ALLOW_THREADS ok = es_py_input_materialize (&input, &error);
  if (ok)
    {
      size_t row = (size_t) input.width * es_format_size (input.image.format);
      char *dst = PyArray_DATA ((PyArrayObject *) result);

      for (int z = 0; z < input.planes; z++)
        for (int y = 0; y < input.height; y++, dst += row)
          memcpy (dst, es_image_voxel_row (&input.image, z, y), row);
    }
  Py_END_ALLOW_THREADS es_py_input_close (&input);
  if (!ok)
    {
      Py_DECREF (result);
      return es_py_raise (&error, NULL);
    }
  return result;
}

/* A histogram of signed or float counts, refused where a count is negative
 * or NaN: the cast to uint64 below would turn -1 into 2^64 - 1. */
static bool
refuse_negative_counts (PyObject *arg)
{
  PyArrayObject *given = (PyArrayObject *) PyArray_FROM_O (arg), *values;
  bool ok = true;

  if (given == NULL)
    return false;
  if (!PyArray_ISSIGNED (given) && !PyArray_ISFLOAT (given))
    {
      Py_DECREF (given);
      return true;
    }
  values = (PyArrayObject *) PyArray_FROM_OTF ((PyObject *) given, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
  Py_DECREF (given);
  if (values == NULL)
    return false;
  for (npy_intp i = 0; ok && i < PyArray_SIZE (values); i++)
    {
      double count = ((const double *) PyArray_DATA (values))[i];

      if (!(count >= 0.0))
        {
          PyObject *shown = PyFloat_FromDouble (count);

          if (shown != NULL)
            PyErr_Format (PyExc_ValueError, "histogram bin %zd holds %R: counts are 0 or more", (Py_ssize_t) i, shown);
          Py_XDECREF (shown);
          ok = false;
        }
    }
  Py_DECREF (values);
  return ok;
}

bool
es_py_refuse_masked (PyObject *value, const char *what, const char *instead)
{
  static PyObject *masked_array_type;
  int masked;

  /* Only an ndarray subclass can be one: plain arrays cost one check. */
  if (!PyArray_Check (value) || PyArray_CheckExact (value))
    return true;
  if (masked_array_type == NULL)
    {
      PyObject *ma = PyImport_ImportModule ("numpy.ma");

      if (ma == NULL)
        return false;
      masked_array_type = PyObject_GetAttrString (ma, "MaskedArray");
      Py_DECREF (ma);
      if (masked_array_type == NULL)
        return false;
    }
  masked = PyObject_IsInstance (value, masked_array_type);
  if (masked < 0)
    return false;
  if (masked)
    PyErr_Format (PyExc_TypeError, "%s is a numpy.ma.MaskedArray, whose mask would be ignored here: %s", what, instead);
  return !masked;
}

/* equalize_lut(hist) -> uint8[256]: the LUT of cv::equalizeHist for a
 * 256-bin histogram (compute/es-definitions.h), so that equalization split
 * over chunks (entroscope.dask) is one histogram, then this, then a map. */
static PyObject *
module_equalize_lut (PyObject *module, PyObject *arg)
{
  PyArrayObject *hist;
  npy_intp dims[1] = { 256 };
  PyObject *lut;
  uint64_t counts[256], n = 0;

  (void) module;
  if (!refuse_negative_counts (arg))
    return NULL;
  hist = (PyArrayObject *) PyArray_FROMANY (arg, NPY_UINT64, 1, 1, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
  if (hist == NULL)
    return NULL;
  if (PyArray_DIM (hist, 0) != 256)
    {
      Py_DECREF (hist);
      return PyErr_Format (PyExc_ValueError, "expected a histogram of 256 bins, not %zd",
                           (Py_ssize_t) PyArray_DIM (hist, 0));
    }
  memcpy (counts, PyArray_DATA (hist), sizeof counts);
  Py_DECREF (hist);
  for (int i = 0; i < 256; i++)
    n += counts[i];
  if (n == 0)
    return PyErr_Format (PyExc_ValueError, "the histogram is empty");
  lut = PyArray_SimpleNew (1, dims, NPY_UINT8);
  if (lut == NULL)
    return NULL;
  es_equalize_lut (counts, n, PyArray_DATA ((PyArrayObject *) lut));
  return lut;
}

/* ---- tile passes split between processes (entroscope.dask) ---- */

/* The job of the keywords, its tile passes (EsTilePasses) and the rows
 * [y0, y0 + rows) of a `height`-row image that `rows_object` holds (2-D
 * uint8 or uint16, read in place): what tile_counts() and tile_apply()
 * share. *array is a new reference to the rows on success. */
static const EsTilePasses *
tile_rows_open (EsOp op, const EsPyJobKeywords *kw, PyObject *rows_object, int y0, int height, EsJob *job,
                PyArrayObject **array, EsImage *rows)
{
  EsPyDefinition held = { 0 };
  EsUnits units;
  EsError error = { 0 };
  const EsTilePasses *passes;
  bool ok;

  *job = (EsJob) ES_JOB_INIT (op);
  ok = es_py_parse_job (op, kw, job, &units, &held);
  es_py_definition_release (&held);
  if (!ok)
    return NULL;
  if (!es_job_validate (job, &error))
    {
      es_py_raise (&error, NULL);
      return NULL;
    }
  passes = es_job_tile_passes (job);
  if (passes == NULL)
    {
      PyErr_Format (PyExc_ValueError, "%s has no tile passes for this job: it runs on each plane whole",
                    es_op_name (op));
      return NULL;
    }
  *array = (PyArrayObject *) PyArray_FROMANY (rows_object, NPY_NOTYPE, 2, 2, NPY_ARRAY_CARRAY_RO);
  if (*array == NULL)
    return NULL;
  const int type = PyArray_TYPE (*array);
  const npy_intp count = PyArray_DIM (*array, 0), width = PyArray_DIM (*array, 1);
  if ((type != NPY_UINT8 && type != NPY_UINT16) || count < 1 || width < 1 || width > ES_MAX_SIDE || height < 1
      || height > ES_MAX_SIDE || y0 < 0 || y0 + count > height)
    {
      PyErr_Format (PyExc_ValueError,
                    "expected rows y0 .. y0 + n of a %d-row image as a 2-D uint8 or uint16 array, not %zd rows of "
                    "%zd %s samples from row %d",
                    height, (Py_ssize_t) count, (Py_ssize_t) width, PyArray_DESCR (*array)->typeobj->tp_name, y0);
      Py_CLEAR (*array);
      return NULL;
    }
  *rows = (EsImage){ .width = (int) width,
                     .height = (int) count,
                     .stride = (size_t) PyArray_STRIDE (*array, 0),
                     .format = type == NPY_UINT8 ? ES_FORMAT_U8 : ES_FORMAT_U16,
                     .depth = type == NPY_UINT8 ? 8 : 16,
                     .pixels = PyArray_DATA (*array) };
  return passes;
}

/* tile_passes(op, **job) -> bool: whether the job computes in bands of
 * rows through its operation's tile passes (es_job_tile_passes), so that
 * tile_counts() and tile_apply() take it. */
static PyObject *
module_tile_passes (PyObject *module, PyObject *args, PyObject *kwargs)
{
  EsPyDefinition held = { 0 };
  EsJob job;
  bool passes;

  (void) module;
  if (!op_job (args, kwargs, "tile_passes", &job, &held))
    return NULL;
  passes = es_job_tile_passes (&job) != NULL;
  es_py_definition_release (&held);
  return PyBool_FromLong (passes);
}

/* tile_counts(op, rows, y0, height, **job) -> int32 array: the statistics
 * that rows [y0, y0 + len(rows)) of a height-row image add to the tiles of
 * the job (its tile passes' first pass); the counts of disjoint rows add
 * up to those of the whole image. */
static PyObject *
module_tile_counts (PyObject *module, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "op", "rows", "y0", "height", NULL };
  PyObject *op_name, *rows_object, *rest, *result = NULL;
  EsPyJobKeywords kw = { .units = NULL };
  PyArrayObject *array = NULL;
  const EsTilePasses *passes;
  EsTileState *state;
  EsError error = { 0 };
  EsImage rows;
  EsJob job;
  EsOp op;
  int y0, height;
  bool ok;

  (void) module;
  if (!es_py_split_job_keywords ("tile_counts", keywords, kwargs, &kw, &rest))
    return NULL;
  ok = PyArg_ParseTupleAndKeywords (args, rest, "OOii:tile_counts", keywords, &op_name, &rows_object, &y0, &height)
       && es_py_parse_op (op_name, &op);
  Py_XDECREF (rest);
  if (!ok || (passes = tile_rows_open (op, &kw, rows_object, y0, height, &job, &array, &rows)) == NULL)
    return NULL;
  Py_BEGIN_ALLOW_THREADS;
  state = passes->begin (&job, rows.width, height, rows.format, &error);
  ok = state != NULL && passes->add_rows (state, &rows, y0, NULL, &error);
  Py_END_ALLOW_THREADS;
  if (ok)
    {
      size_t n;
      const int *counts = passes->counts (state, &n);
      npy_intp dims[1] = { (npy_intp) n };

      result = PyArray_SimpleNew (1, dims, NPY_INT32);
      if (result != NULL)
        memcpy (PyArray_DATA ((PyArrayObject *) result), counts, n * sizeof *counts);
    }
  else
    es_py_raise (&error, NULL);
  if (state != NULL)
    passes->free (state);
  Py_DECREF (array);
  return result;
}

/* tile_apply(op, rows, y0, height, counts, **job) -> the job's result on
 * rows [y0, y0 + len(rows)) of a height-row image, from those rows and the
 * sum of every row's tile_counts() (the second pass): the rows of the
 * whole image's result. */
static PyObject *
module_tile_apply (PyObject *module, PyObject *args, PyObject *kwargs)
{
  static char *keywords[] = { "op", "rows", "y0", "height", "counts", NULL };
  PyObject *op_name, *rows_object, *counts_object, *rest, *result = NULL;
  EsPyJobKeywords kw = { .units = NULL };
  PyArrayObject *array = NULL, *sum = NULL;
  const EsTilePasses *passes;
  EsTileState *state = NULL;
  EsError error = { 0 };
  EsImage rows, out;
  EsJob job;
  EsOp op;
  int y0, height;
  size_t n;
  bool ok;

  (void) module;
  if (!es_py_split_job_keywords ("tile_apply", keywords, kwargs, &kw, &rest))
    return NULL;
  ok = PyArg_ParseTupleAndKeywords (args, rest, "OOiiO:tile_apply", keywords, &op_name, &rows_object, &y0, &height,
                                    &counts_object)
       && es_py_parse_op (op_name, &op);
  Py_XDECREF (rest);
  if (!ok || (passes = tile_rows_open (op, &kw, rows_object, y0, height, &job, &array, &rows)) == NULL)
    return NULL;
  sum = (PyArrayObject *) PyArray_FROMANY (counts_object, NPY_INT32, 1, 1, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
  state = sum != NULL ? passes->begin (&job, rows.width, height, rows.format, &error) : NULL;
  if (sum != NULL && state == NULL)
    es_py_raise (&error, NULL);
  if (state != NULL)
    {
      int *counts = passes->counts (state, &n);
      if ((size_t) PyArray_DIM (sum, 0) != n)
        PyErr_Format (PyExc_ValueError, "expected %zu counts (tile_counts() of the same job and image), not %zd", n,
                      (Py_ssize_t) PyArray_DIM (sum, 0));
      else
        {
          npy_intp dims[2] = { rows.height, rows.width };
          const EsFormat format = es_job_output_format (&job, rows.format);

          memcpy (counts, PyArray_DATA (sum), n * sizeof *counts);
          result = PyArray_SimpleNew (2, dims,
                                      format == ES_FORMAT_U8    ? NPY_UINT8
                                      : format == ES_FORMAT_U16 ? NPY_UINT16
                                                                : NPY_FLOAT32);
        }
    }
  if (result != NULL)
    {
      out = (EsImage){ .width = rows.width,
                       .height = rows.height,
                       .stride = (size_t) PyArray_STRIDE ((PyArrayObject *) result, 0),
                       .format = es_job_output_format (&job, rows.format),
                       .depth = rows.depth,
                       .pixels = PyArray_DATA ((PyArrayObject *) result) };
      Py_BEGIN_ALLOW_THREADS;
      ok = passes->finish (state, NULL, &error) && passes->apply_rows (state, &rows, y0, &out, NULL, &error);
      Py_END_ALLOW_THREADS;
      if (!ok)
        {
          Py_CLEAR (result);
          es_py_raise (&error, NULL);
        }
    }
  if (state != NULL)
    passes->free (state);
  Py_XDECREF (sum);
  Py_DECREF (array);
  return result;
}

static PyObject *
module_set_max_pixels (PyObject *module, PyObject *arg)
{
  unsigned long long n;

  (void) module;
  if (!PyLong_Check (arg))
    return PyErr_Format (PyExc_TypeError, "max_pixels must be an int, not %.100s", Py_TYPE (arg)->tp_name);
  n = PyLong_AsUnsignedLongLong (arg);
  if (n == (unsigned long long) -1 && PyErr_Occurred ())
    {
      PyErr_Clear ();
      return PyErr_Format (PyExc_ValueError, "max_pixels=%R: expected a positive integer", arg);
    }
  if (n == 0)
    return PyErr_Format (PyExc_ValueError, "max_pixels=%R: expected a positive integer", arg);
  es_image_set_max_pixels (n);
  Py_RETURN_NONE;
}

static PyObject *
module_get_max_pixels (PyObject *module, PyObject *unused)
{
  (void) module, (void) unused;
  return PyLong_FromUnsignedLongLong (es_image_get_max_pixels ());
}

static PyObject *
module_cpu_threads (PyObject *module, PyObject *unused)
{
  (void) module, (void) unused;
  return PyLong_FromLong (es_cpu_thread_count ());
}

static PyObject *
module_cuda_compiled (PyObject *module, PyObject *unused)
{
  (void) module, (void) unused;
  return PyBool_FromLong (es_engine_cuda_compiled ());
}

static PyObject *
module_register_image_type (PyObject *module, PyObject *type)
{
  (void) module;
  if (!PyType_Check (type) || !PyType_IsSubtype ((PyTypeObject *) type, &PyArray_Type))
    return PyErr_Format (PyExc_TypeError, "expected a subclass of numpy.ndarray");
  Py_INCREF (type);
  Py_XDECREF (es_py_image_type);
  es_py_image_type = (PyTypeObject *) type;
  Py_RETURN_NONE;
}

/* The function that allocates device results: (like, (planes, rows,
 * columns), dtype name, ndim) -> an empty array of the input's library on
 * the input's device (entroscope/_device.py). */
static PyObject *
module_register_device_allocator (PyObject *module, PyObject *allocator)
{
  (void) module;
  if (!PyCallable_Check (allocator))
    return PyErr_Format (PyExc_TypeError, "expected a callable");
  Py_INCREF (allocator);
  Py_XSETREF (es_py_device_allocator, allocator);
  Py_RETURN_NONE;
}

/* Each docstring opens with its __text_signature__ (name(...), "--", a
 * blank line), which inspect.signature reads. */
static PyMethodDef module_methods[] = {
  { "variants", module_variants, METH_O,
    "variants($module, op, /)\n--\n\n"
    "The CUDA kernel variants of an operation, a list of Variant (empty without CUDA)." },
  { "ops", module_ops, METH_NOARGS, "ops($module, /)\n--\n\nThe operation table: a dict per operation." },
  { "params", module_params, METH_NOARGS,
    "params($module, /)\n--\n\nThe parameter table: a dict per parameter (ranges and defaults)." },
  { "halo", (PyCFunction) (void (*) (void)) module_halo, METH_VARARGS | METH_KEYWORDS,
    "halo($module, op, **job)\n--\n\n"
    "Input rows beyond a tile that its result reads (an int), for the job these keywords describe: the "
    "operation's parameters by the parameter table's names (params()), units and entropy()'s definition "
    "keywords." },
  { "extent", (PyCFunction) (void (*) (void)) module_extent, METH_VARARGS | METH_KEYWORDS,
    "extent($module, op, **job)\n--\n\n"
    "(rows, columns): input beyond a tile, on each side, that its result reads (a window's half height and half "
    "width), for halo()'s keywords." },
  { "extent_3d", (PyCFunction) (void (*) (void)) module_extent_3d, METH_VARARGS | METH_KEYWORDS,
    "extent_3d($module, op, **job)\n--\n\n"
    "(planes, rows, columns): input beyond a block of a volume, on each side, that its result reads (a 3-D "
    "window's half depth, height and width; 0 planes for a 2-D window), for halo()'s keywords." },
  { "load", (PyCFunction) (void (*) (void)) es_py_load, METH_VARARGS | METH_KEYWORDS,
    "load($module, path, *, levels=16)\n--\n\n"
    "(array, depth, levels): a PNG, PGM or text matrix as gray samples." },
  { "save", (PyCFunction) (void (*) (void)) es_py_save, METH_VARARGS | METH_KEYWORDS,
    "save($module, path, array, *, op=None, format=None, colormap=None, range='absolute', colorbar=False, "
    "compression=None, **job)\n--\n\n"
    "Writes a result as entroscope-cli does for the job the other keywords describe (halo()'s)." },
  { "gray", (PyCFunction) (void (*) (void)) module_gray, METH_VARARGS | METH_KEYWORDS,
    "gray($module, image, *, depth=None, channel_axis=...)\n--\n\n"
    "The gray samples the operations read (colour, along channel_axis, reduced with BT.709 on the stored values, "
    "as the CLI does); a volume stays 3-D." },
  { "equalize_lut", module_equalize_lut, METH_O,
    "equalize_lut($module, hist, /)\n--\n\n"
    "The uint8 LUT of cv2.equalizeHist for a 256-bin histogram of counts (DESIGN.md section 1)." },
  { "tile_passes", (PyCFunction) (void (*) (void)) module_tile_passes, METH_VARARGS | METH_KEYWORDS,
    "tile_passes($module, op, **job)\n--\n\n"
    "Whether the job (halo()'s keywords) computes in bands of rows through its operation's tile passes: "
    "tile_counts() over the bands, summed, then tile_apply() on each (CLAHE, but not its presets)." },
  { "tile_counts", (PyCFunction) (void (*) (void)) module_tile_counts, METH_VARARGS | METH_KEYWORDS,
    "tile_counts($module, op, rows, y0, height, **job)\n--\n\n"
    "The int32 counts that rows y0 .. y0 + len(rows) of a height-row image (2-D uint8 or uint16) add to the "
    "statistics of the job's tiles (CLAHE's histograms; halo()'s keywords): summed over rows that cover the image "
    "once, they are what tile_apply() takes." },
  { "tile_apply", (PyCFunction) (void (*) (void)) module_tile_apply, METH_VARARGS | METH_KEYWORDS,
    "tile_apply($module, op, rows, y0, height, counts, **job)\n--\n\n"
    "The job's result on rows y0 .. y0 + len(rows) of a height-row image, from those rows and the summed "
    "tile_counts() of every row: the same rows as the whole image's result." },
  { "set_max_pixels", module_set_max_pixels, METH_O,
    "set_max_pixels($module, n, /)\n--\n\n"
    "Refuse images of more than n pixels (the CLI's --max-pixels); process-wide." },
  { "get_max_pixels", module_get_max_pixels, METH_NOARGS,
    "get_max_pixels($module, /)\n--\n\nThe pixel budget (the CLI's --max-pixels)." },
  { "cpu_threads", module_cpu_threads, METH_NOARGS,
    "cpu_threads($module, /)\n--\n\nOpenMP threads of the CPU backend." },
  { "cuda_compiled", module_cuda_compiled, METH_NOARGS,
    "cuda_compiled($module, /)\n--\n\nWhether this build has CUDA." },
  { "_register_image_type", module_register_image_type, METH_O, NULL },
  { "_register_device_allocator", module_register_device_allocator, METH_O, NULL },
  { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT,
  "entroscope._entroscope",
  "Entroscope's compute engine and file formats (use the entroscope package).",
  -1,
  module_methods,
  NULL,
  NULL,
  NULL,
  NULL,
};

PyMODINIT_FUNC
PyInit__entroscope (void)
{
  PyObject *module;

  import_array ();
  module = PyModule_Create (&module_def);
  if (module == NULL)
    return NULL;
  if (variant_type.tp_name == NULL && PyStructSequence_InitType2 (&variant_type, &variant_desc) != 0)
    goto fail;
  Py_INCREF (&variant_type);
  if (PyModule_AddObject (module, "Variant", (PyObject *) &variant_type) != 0)
    {
      Py_DECREF (&variant_type);
      goto fail;
    }
  es_py_cancelled_error = PyErr_NewExceptionWithDoc (
    "entroscope.Cancelled", "A job stopped by Engine.cancel() (or by SIGINT when its handler did not raise).",
    PyExc_RuntimeError, NULL);
  if (es_py_cancelled_error == NULL)
    goto fail;
  Py_INCREF (es_py_cancelled_error);
  if (PyModule_AddObject (module, "Cancelled", es_py_cancelled_error) != 0)
    {
      Py_DECREF (es_py_cancelled_error);
      goto fail;
    }
  if (!es_py_engine_init_types (module))
    goto fail;
  if (PyModule_AddStringConstant (module, "__version__", ES_VERSION) != 0
      || PyModule_AddIntConstant (module, "MAX_SIDE", ES_MAX_SIDE) != 0
      || PyModule_AddIntConstant (module, "DEFAULT_MAX_PIXELS", (long) ES_DEFAULT_MAX_PIXELS) != 0)
    goto fail;
  return module;

fail:
  Py_DECREF (module);
  return NULL;
}
