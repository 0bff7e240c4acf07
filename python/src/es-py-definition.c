/* SPDX-License-Identifier: MIT */
/* The one parser of a job's keywords (entropy(), save(), halo(), extent()): parameters, units and the
 * entropy definition (DESIGN.md §1): rect, disk, footprint, border, binning, mask, like, and the 3-D
 * windows box and ball. */
#include "es-py.h"

#include <math.h>
#include <string.h>

const char *const es_py_definition_keywords[ES_PY_N_DEFINITION_KW] = {
  "rect", "disk", "footprint", "border", "binning", "mask", "like", "box", "ball", "kernel_size", "nbins",
};

/* Whether an operation takes a definition keyword: like= every operation
 * with presets, kernel_size and nbins CLAHE, the others entropy. */
static bool
keyword_applies (int keyword, EsOp op)
{
  size_t n;

  switch (keyword)
    {
    case ES_PY_KW_LIKE: return es_presets (op, &n) != NULL;
    case ES_PY_KW_KERNEL_SIZE:
    case ES_PY_KW_NBINS: return op == ES_OP_CLAHE;
    default: return op == ES_OP_ENTROPY;
    }
}

/* kernel_size=k or (rows, columns), skimage's pixels of a contextual region. */
static bool
parse_kernel_size (PyObject *value, EsClaheDefinition *c)
{
  long sides[2];

  if (PyTuple_Check (value) || PyList_Check (value))
    {
      if (PySequence_Size (value) != 2)
        {
          PyErr_SetString (PyExc_TypeError, "kernel_size must be an int or a pair (rows, columns)");
          return false;
        }
      for (int i = 0; i < 2; i++)
        {
          PyObject *side = PySequence_GetItem (value, i);
          sides[i] = side != NULL ? PyLong_AsLong (side) : -1;
          Py_XDECREF (side);
        }
    }
  else
    sides[0] = sides[1] = PyLong_AsLong (value);
  if (PyErr_Occurred ())
    return false;
  if (sides[0] < 1 || sides[1] < 1 || sides[0] > ES_MAX_SIDE || sides[1] > ES_MAX_SIDE)
    {
      PyErr_Format (PyExc_ValueError, "kernel_size (%ld, %ld) is out of range: 1..%d a side", sides[0], sides[1],
                    ES_MAX_SIDE);
      return false;
    }
  c->kernel_height = (int) sides[0], c->kernel_width = (int) sides[1];
  return true;
}

/* Floats as cells: in where nonzero and not NaN, as a mask file is read
 * (DESIGN.md §1); NumPy's cast to bool would count NaN in. */
static PyArrayObject *
cells_of_floats (PyArrayObject *given)
{
  PyArrayObject *values = (PyArrayObject *) PyArray_FROM_OTF ((PyObject *) given, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
  PyArrayObject *cells;

  if (values == NULL)
    return NULL;
  cells = (PyArrayObject *) PyArray_SimpleNew (PyArray_NDIM (values), PyArray_DIMS (values), NPY_BOOL);
  if (cells != NULL)
    {
      const double *v = PyArray_DATA (values);
      npy_bool *in = PyArray_DATA (cells);

      for (npy_intp i = 0; i < PyArray_SIZE (values); i++)
        in[i] = v[i] != 0.0 && !isnan (v[i]);
    }
  Py_DECREF (values);
  return cells;
}

/* A 2-D or 3-D array-like as C-contiguous booleans (nonzero and not NaN =
 * in), one byte each: (rows, columns) or (planes, rows, columns). */
static PyArrayObject *
cells_of (PyObject *value, const char *what)
{
  PyArrayObject *given, *cells;

  if (!es_py_refuse_masked (value, what, "pass its filled(0) (masked cells out) or its data"))
    return NULL;
  given = (PyArrayObject *) PyArray_FROM_O (value);
  if (given == NULL)
    return NULL;
  cells = PyArray_ISFLOAT (given) ? cells_of_floats (given)
                                  : (PyArrayObject *) PyArray_FROM_OTF ((PyObject *) given, NPY_BOOL,
                                                                        NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
  Py_DECREF (given);
  if (cells == NULL)
    return NULL;
  if (PyArray_NDIM (cells) != 2 && PyArray_NDIM (cells) != 3)
    {
      PyErr_Format (PyExc_ValueError, "%s must be 2-D (rows, columns) or 3-D (planes, rows, columns), not %d-D", what,
                    PyArray_NDIM (cells));
      Py_DECREF (cells);
      return NULL;
    }
  return cells;
}

static const char *
text_of (PyObject *value, const char *what)
{
  if (!PyUnicode_Check (value))
    {
      PyErr_Format (PyExc_TypeError, "%s must be a string, not %.100s", what, Py_TYPE (value)->tp_name);
      return NULL;
    }
  return PyUnicode_AsUTF8 (value);
}

static bool
parse_rect (PyObject *value, EsEntropyDefinition *d)
{
  long h, w;

  if (!PyTuple_Check (value) || PyTuple_GET_SIZE (value) != 2)
    {
      PyErr_SetString (PyExc_TypeError, "rect must be a tuple (height, width)");
      return false;
    }
  h = PyLong_AsLong (PyTuple_GET_ITEM (value, 0));
  w = PyLong_AsLong (PyTuple_GET_ITEM (value, 1));
  if (PyErr_Occurred ())
    return false;
  if (h < 1 || w < 1 || h > ES_SIDE_MAX || w > ES_SIDE_MAX || h % 2 == 0 || w % 2 == 0)
    {
      PyErr_Format (PyExc_ValueError, "rect (%ld, %ld) is out of range: odd sides 1..%d", h, w, ES_SIDE_MAX);
      return false;
    }
  d->shape = ES_SHAPE_RECT;
  d->height = (int) h, d->width = (int) w;
  return true;
}

/* box=(depth, height, width): odd sides up to ES_SIDE_3D_MAX. */
static bool
parse_box (PyObject *value, EsEntropyDefinition *d)
{
  long sides[3];

  if (!PyTuple_Check (value) || PyTuple_GET_SIZE (value) != 3)
    {
      PyErr_SetString (PyExc_TypeError, "box must be a tuple (depth, height, width)");
      return false;
    }
  for (int i = 0; i < 3; i++)
    sides[i] = PyLong_AsLong (PyTuple_GET_ITEM (value, i));
  if (PyErr_Occurred ())
    return false;
  for (int i = 0; i < 3; i++)
    if (sides[i] < 1 || sides[i] > ES_SIDE_3D_MAX || sides[i] % 2 == 0)
      {
        PyErr_Format (PyExc_ValueError, "box (%ld, %ld, %ld) is out of range: odd sides 1..%d", sides[0], sides[1],
                      sides[2], ES_SIDE_3D_MAX);
        return false;
      }
  d->shape = ES_SHAPE_BOX;
  d->planes = (int) sides[0], d->height = (int) sides[1], d->width = (int) sides[2];
  return true;
}

/* A radius keyword (disk=, ball=) in 0..max. */
static bool
parse_radius (PyObject *value, const char *what, int max, int *radius)
{
  long r = PyLong_AsLong (value);

  if (r == -1 && PyErr_Occurred ())
    return false;
  if (r < 0 || r > max)
    {
      PyErr_Format (PyExc_ValueError, "%s radius %ld is out of range: 0..%d", what, r, max);
      return false;
    }
  *radius = (int) r;
  return true;
}

/* job->definition from the definition keywords (kw[i] NULL: not given),
 * like= first; *units (-1: not given) gets the preset's. */
static bool
parse_definition (PyObject *const *kw, EsJob *job, bool window_given, int *units, EsPyDefinition *held)
{
  EsEntropyDefinition *d = &job->definition;
  const char *text;
  static const int shape_keywords[] = { ES_PY_KW_RECT, ES_PY_KW_DISK, ES_PY_KW_FOOTPRINT, ES_PY_KW_BOX, ES_PY_KW_BALL };
  int shapes_given = 0;
  bool shape_given;

  for (size_t i = 0; i < sizeof shape_keywords / sizeof shape_keywords[0]; i++)
    shapes_given += kw[shape_keywords[i]] != NULL;
  if (shapes_given > 1)
    {
      PyErr_SetString (PyExc_TypeError, "give one of rect, disk, footprint, box and ball");
      return false;
    }
  shape_given = shapes_given == 1;
  if (shape_given && window_given)
    {
      /* Both would set the window: the shape would win and the window be dropped unseen. */
      PyErr_SetString (PyExc_TypeError, "window= and a shape (rect, disk, footprint, box or ball) both set the "
                                        "window: give one of them");
      return false;
    }
  /* The preset first: the other keywords override it. */
  if (kw[ES_PY_KW_LIKE] != NULL)
    {
      const EsPreset *preset;
      char names[64];

      if ((text = text_of (kw[ES_PY_KW_LIKE], "like")) == NULL)
        return false;
      if ((preset = es_preset_find (job->op, text)) == NULL)
        {
          es_presets_describe (job->op, names, sizeof names);
          PyErr_Format (PyExc_ValueError, "like='%s': expected %s", text, names);
          return false;
        }
      es_preset_apply (preset, job, shape_given || window_given);
      if (*units < 0 && preset->units != NULL)
        *units = strcmp (preset->units, "bits") == 0 ? ES_UNITS_BITS : ES_UNITS_NATS;
    }
  if (kw[ES_PY_KW_KERNEL_SIZE] != NULL && !parse_kernel_size (kw[ES_PY_KW_KERNEL_SIZE], &job->clahe))
    return false;
  if (kw[ES_PY_KW_NBINS] != NULL)
    {
      long bins = PyLong_AsLong (kw[ES_PY_KW_NBINS]);

      if (bins == -1 && PyErr_Occurred ())
        return false;
      if (bins < ES_CLAHE_BINS_MIN || bins > ES_CLAHE_BINS_MAX)
        {
          PyErr_Format (PyExc_ValueError, "nbins %ld is out of range: %d..%d", bins, ES_CLAHE_BINS_MIN,
                        ES_CLAHE_BINS_MAX);
          return false;
        }
      job->clahe.bins = (int) bins;
    }
  if (kw[ES_PY_KW_RECT] != NULL && !parse_rect (kw[ES_PY_KW_RECT], d))
    return false;
  if (kw[ES_PY_KW_DISK] != NULL)
    {
      if (!parse_radius (kw[ES_PY_KW_DISK], "disk", ES_RADIUS_MAX, &d->radius))
        return false;
      d->shape = ES_SHAPE_DISK;
    }
  if (kw[ES_PY_KW_BOX] != NULL && !parse_box (kw[ES_PY_KW_BOX], d))
    return false;
  if (kw[ES_PY_KW_BALL] != NULL)
    {
      if (!parse_radius (kw[ES_PY_KW_BALL], "ball", ES_RADIUS_3D_MAX, &d->radius))
        return false;
      d->shape = ES_SHAPE_BALL;
    }
  if (kw[ES_PY_KW_FOOTPRINT] != NULL)
    {
      PyArrayObject *cells = held->footprint_cells = cells_of (kw[ES_PY_KW_FOOTPRINT], "footprint");
      int ndim;

      if (cells == NULL)
        return false;
      ndim = PyArray_NDIM (cells);
      if (ndim == 2 && (PyArray_DIM (cells, 0) > ES_SIDE_MAX || PyArray_DIM (cells, 1) > ES_SIDE_MAX))
        {
          PyErr_Format (PyExc_ValueError, "a footprint has odd sides up to %d", ES_SIDE_MAX);
          return false;
        }
      if (ndim == 3
          && (PyArray_DIM (cells, 0) > ES_SIDE_3D_MAX || PyArray_DIM (cells, 1) > ES_SIDE_3D_MAX
              || PyArray_DIM (cells, 2) > ES_SIDE_3D_MAX))
        {
          PyErr_Format (PyExc_ValueError, "a 3-D footprint has odd sides up to %d", ES_SIDE_3D_MAX);
          return false;
        }
      /* A 3-D footprint of one plane is the 2-D footprint it holds. */
      held->footprint = (EsFootprint){
        .width = (int) PyArray_DIM (cells, ndim - 1),
        .height = (int) PyArray_DIM (cells, ndim - 2),
        .cells = PyArray_DATA (cells),
        .planes = ndim == 3 ? (int) PyArray_DIM (cells, 0) : 0,
      };
      d->shape = ES_SHAPE_FOOTPRINT;
      d->footprint = &held->footprint;
    }
  if (kw[ES_PY_KW_BORDER] != NULL)
    {
      if ((text = text_of (kw[ES_PY_KW_BORDER], "border")) == NULL)
        return false;
      if (!es_definition_parse_border (text, d))
        {
          PyErr_Format (PyExc_ValueError,
                        "border='%s': expected 'clip', 'symmetric', 'mirror', 'replicate' or "
                        "'constant:V' (V a sample value)",
                        text);
          return false;
        }
    }
  if (kw[ES_PY_KW_BINNING] != NULL)
    {
      if ((text = text_of (kw[ES_PY_KW_BINNING], "binning")) == NULL)
        return false;
      if (!es_definition_parse_binning (text, d))
        {
          PyErr_Format (PyExc_ValueError,
                        "binning='%s': expected 'depth', 'range:LO:HI', 'minmax', 'exact' or "
                        "'byte'",
                        text);
          return false;
        }
    }
  if (kw[ES_PY_KW_MASK] != NULL && kw[ES_PY_KW_MASK] != Py_None && es_py_is_device_array (kw[ES_PY_KW_MASK]))
    {
      if (!es_py_device_mask (NULL, kw[ES_PY_KW_MASK], &held->mask, &held->mask_owner, &held->mask_stream))
        return false;
      d->mask = &held->mask;
    }
  else if (kw[ES_PY_KW_MASK] != NULL && kw[ES_PY_KW_MASK] != Py_None)
    {
      PyArrayObject *cells = held->mask_cells = cells_of (kw[ES_PY_KW_MASK], "mask");
      int ndim;

      if (cells == NULL)
        return false;
      ndim = PyArray_NDIM (cells);
      /* A 3-D mask (planes, rows, columns) goes with a volume: the engine
       * checks that their shapes match. */
      held->mask = (EsImage){
        .width = (int) PyArray_DIM (cells, ndim - 1),
        .height = (int) PyArray_DIM (cells, ndim - 2),
        .stride = (size_t) PyArray_STRIDE (cells, ndim - 2),
        .format = ES_FORMAT_U8,
        .depth = 1,
        .planes = ndim == 3 ? (int) PyArray_DIM (cells, 0) : 0,
        .plane_stride = ndim == 3 ? (size_t) PyArray_STRIDE (cells, 0) : 0,
        .pixels = PyArray_DATA (cells),
      };
      d->mask = &held->mask;
    }
  return true;
}

/* normalized is part of the entropy's definition, not a display unit. */
static const char *const unit_names[] = { "nats", "bits", "normalized", NULL };
#define UNITS_NORMALIZED 2

/* A keyword's value, NULL when it was not given or is None. */
static PyObject *
given (PyObject *value)
{
  return value != Py_None ? value : NULL;
}

bool
es_py_parse_job (EsOp op, const EsPyJobKeywords *kw, EsJob *job, EsUnits *units_out, EsPyDefinition *held)
{
  PyObject *definition[ES_PY_N_DEFINITION_KW];
  int units = -1;
  EsError error;

  for (int i = 0; i < ES_PY_N_DEFINITION_KW; i++)
    {
      definition[i] = given (kw->definition[i]);
      if (definition[i] != NULL && !keyword_applies (i, op))
        {
          PyErr_Format (PyExc_TypeError, "%s has no %s (%s)", es_op_name (op), es_py_definition_keywords[i],
                        i == ES_PY_KW_LIKE                                 ? "it has no presets"
                        : i == ES_PY_KW_KERNEL_SIZE || i == ES_PY_KW_NBINS ? "a keyword of CLAHE's presets"
                                                                           : "an entropy definition keyword");
          return false;
        }
    }
  /* units=None: nats, or the preset's. */
  if (given (kw->units) != NULL && !es_py_parse_choice (kw->units, "units", unit_names, &units))
    return false;
  if (units == UNITS_NORMALIZED && op != ES_OP_ENTROPY)
    {
      PyErr_Format (PyExc_ValueError, "units='normalized' is an entropy definition, not one of %s's units",
                    es_op_name (op));
      return false;
    }
  job->definition.normalized = units == UNITS_NORMALIZED;
  /* The definition (a preset's window and levels) first: given parameters win. */
  if (!parse_definition (definition, job, given (kw->values[ES_PARAM_WINDOW]) != NULL, &units, held))
    return false;
  /* Checked as the CLI checks its options: by the tables. */
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (given (kw->values[id]) != NULL && es_op_uses (op, (EsParamId) id)
        && !es_py_parse_param (es_param ((EsParamId) id), kw->values[id], job))
      return false;
  *units_out = units == ES_UNITS_BITS ? ES_UNITS_BITS : ES_UNITS_NATS;
  es_error_clear (&error);
  if (!es_job_validate (job, &error))
    {
      es_py_raise (&error, NULL);
      return false;
    }
  return true;
}

void
es_py_definition_release (EsPyDefinition *held)
{
  Py_CLEAR (held->footprint_cells);
  Py_CLEAR (held->mask_cells);
  Py_CLEAR (held->mask_owner);
}

/* Whether name is one of the NULL-ended names. */
static bool
names_hold (char *const *names, const char *name)
{
  for (; *names != NULL; names++)
    if (strcmp (*names, name) == 0)
      return true;
  return false;
}

bool
es_py_split_job_keywords (const char *function, char *const *own, PyObject *kwargs, EsPyJobKeywords *kw,
                          PyObject **rest)
{
  PyObject *key, *value;
  Py_ssize_t position = 0;

  *rest = NULL;
  while (kwargs != NULL && PyDict_Next (kwargs, &position, &key, &value))
    {
      const char *name = PyUnicode_AsUTF8 (key);
      PyObject **slot = NULL;
      EsParamId id;

      if (name == NULL)
        goto fail;
      if (es_param_from_name (name, &id))
        slot = &kw->values[id];
      else if (strcmp (name, "units") == 0)
        slot = &kw->units;
      for (int i = 0; slot == NULL && i < ES_PY_N_DEFINITION_KW; i++)
        if (strcmp (name, es_py_definition_keywords[i]) == 0)
          slot = &kw->definition[i];
      if (slot != NULL)
        {
          *slot = value;
          continue;
        }
      if (!names_hold (own, name))
        {
          PyErr_Format (PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", function, name);
          goto fail;
        }
      if (*rest == NULL && (*rest = PyDict_New ()) == NULL)
        goto fail;
      if (PyDict_SetItem (*rest, key, value) != 0)
        goto fail;
    }
  return true;

fail:
  Py_CLEAR (*rest);
  return false;
}
