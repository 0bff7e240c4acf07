/* SPDX-License-Identifier: MIT */
/* Internal to the Python extension _entroscope: what its files share. */
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL es_py_numpy_api
#ifndef ES_PY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <stdbool.h>

#include "es-engine.h"
#include "es-load.h"
#include "es-pipeline.h"

/* "×" for messages: PyErr_Format takes an ASCII format, so non-ASCII text
 * goes through %s. */
#define TIMES "\xc3\x97"

/* ---- errors (es-py-module.c) ---- */

/* entroscope.Cancelled: a job stopped by Engine.cancel() or by SIGINT
 * whose Python handler did not raise. */
extern PyObject *es_py_cancelled_error;

/* Raises the Python exception of an EsError and returns NULL:
 * ES_ERROR_IO -> OSError (FileNotFoundError... when the reason is an errno's
 * text), INVALID, FORMAT, LIMIT -> ValueError, NO_MEMORY -> MemoryError,
 * CANCELLED -> entroscope.Cancelled, others -> RuntimeError. A file name,
 * when given, prefixes the message as the CLI does ("photo.png: reason"). */
PyObject *es_py_raise (const EsError *error, PyObject *filename);
/* NumPy's name of the dtype that holds samples of format: "uint8", "uint16", "float32". */
const char *es_py_dtype_name (EsFormat format);

/* The ndarray subclass entroscope.Image (its depth and levels), registered
 * by the pure-Python layer; NULL until then. */
extern PyTypeObject *es_py_image_type;

/* ---- inputs and outputs (es-py-image.c) ---- */

typedef enum {
  ES_PY_INPUT_WRAP, /* the engine reads the caller's memory */
  ES_PY_INPUT_COPY, /* one copy: strided, reversed or byte-swapped rows */
  ES_PY_INPUT_LUMA, /* one pass: colour reduced to gray (BT.709 on stored values) */
} EsPyInputMode;

typedef struct {
  Py_buffer view;
  bool have_view;
  EsPyInputMode mode;
  int channels; /* 1, 3 or 4 */
  bool swap;    /* 16-bit samples in the other byte order */
  /* A 3-D array (planes, rows, columns): a volume, even of one plane;
   * a 2-D array is one plane and gives 2-D results. */
  bool volume;
  int planes, height, width;
  /* The caller's sides and the bytes between neighbouring planes, rows and
   * columns (planes 1 and step 0 for a 2-D array), and between channels. */
  Py_ssize_t sides[3], steps[3];
  Py_ssize_t channel_step;
  EsImage image; /* what the engine reads; pixels set by es_py_input_materialize */
  void *owned;   /* the copy, if any */
  /* > 0: every sample must be below this (a depth below the dtype's bits,
   * or an image that already holds levels), checked while materializing so
   * that no kernel ever indexes past its histogram. */
  unsigned limit;
  /* A device array (es-py-device.c): image lies on its CUDA device. */
  bool device;
  PyObject *device_owner; /* a DLPack capsule held for the call, or NULL */
  uintptr_t wait_stream;  /* the producer's stream to wait for, or 0 */
} EsPyInput;

/* With the GIL: the buffer, its dtype, shape and size (checked against
 * ES_MAX_SIDE and the pixel budget before anything is allocated), and how it
 * will be read. depth <= 0 takes the depth of an entroscope.Image, else the
 * dtype's bits. As in scikit-image, a 2-D array is an image and a 3-D array
 * a volume; channel_axis (an int) names the axis of colour channels (3 or
 * 4, reduced to gray), None says there is none, and NULL (not given)
 * refuses the (H, W, 3|4) arrays that meant colour before volumes, which
 * are ambiguous now. Sets a Python exception and returns false on failure. */
bool es_py_input_open (PyObject *object, int depth, PyObject *channel_axis, EsPyInput *input);
/* Without the GIL: makes input->image point at gray samples (the caller's
 * or a copy) and checks the sample limit. */
bool es_py_input_materialize (EsPyInput *input, EsError *error);
/* With the GIL. */
void es_py_input_close (EsPyInput *input);

typedef struct {
  Py_buffer view; /* of out= */
  bool have_view;
  PyObject *result; /* new reference: out= itself or a new array */
  EsImage image;    /* what the engine writes */
  void *owned;      /* a temporary, copied into view afterwards */
  bool copy_back;
  bool device; /* as EsPyInput's */
  PyObject *device_owner;
  uintptr_t wait_stream;
} EsPyOutput;

/* With the GIL: out= (None for a new array) for a result of the input's
 * shape (planes, rows, columns for a volume) and format, checked against the input's memory (overlap -> a temporary). */
bool es_py_output_open (PyObject *out, const EsPyInput *input, EsFormat format, EsPyOutput *output);
/* Without the GIL: copies a temporary into out=. */
bool es_py_output_finish (EsPyOutput *output, EsError *error);
/* With the GIL; keeps output->result when keep is set (returned to the caller). */
void es_py_output_close (EsPyOutput *output, bool keep);

/* The sample type of a buffer as NumPy names it ("uint8", "float32"), and
 * whether it is one of EsFormat's (uint8, uint16, float32) in native or
 * swapped order. */
bool es_py_buffer_format (const Py_buffer *view, EsFormat *format, bool *swap, char *name, size_t size);

/* ---- device arrays (es-py-device.c) ----
 * Objects exposing __cuda_array_interface__ (read first) or DLPack with a
 * CUDA device: read and written where they lie, never copied through the
 * host. A result comes from the registered allocator (the input's own
 * library: entroscope/_device.py) unless out= gives one. */

extern PyObject *es_py_device_allocator;
bool es_py_is_device_array (PyObject *object);
/* With the GIL: the image as an EsImage on its device (uint8 or uint16, 2-D
 * or 3-D, columns contiguous), depth checked by the array's own max(). */
bool es_py_device_input_open (EsEngine *engine, PyObject *object, int depth, PyObject *channel_axis, EsPyInput *input);
/* With the GIL: out= (NULL: a new array like `like`) as the result on the
 * device, of the input's shape and `format`, not overlapping the input. */
bool es_py_device_output_open (EsEngine *engine, PyObject *out, PyObject *like, const EsPyInput *input, EsFormat format,
                               EsPyOutput *output);
/* minmax binning on a device array: its range, from its own library
 * (the engine reads no device memory on the host). */
bool es_py_device_resolve_minmax (PyObject *array, EsJob *job);
/* mask= on the device (bool or uint8; engine NULL: through
 * __cuda_array_interface__ only); *owner and *stream as the input's. */
bool es_py_device_mask (EsEngine *engine, PyObject *object, EsImage *mask, PyObject **owner, uintptr_t *stream);

/* ---- the engine type (es-py-engine.c) ---- */

extern PyTypeObject es_py_engine_type;
bool es_py_engine_init_types (PyObject *module);

/* ---- files (es-py-files.c) ---- */

PyObject *es_py_load (PyObject *module, PyObject *args, PyObject *kwargs);
/* An EsImage's pixels as a NumPy array that owns them, freed by
 * es_image_clear (page-locked memory too); *image is emptied. */
PyObject *es_py_array_from_image (EsImage *image);
PyObject *es_py_save (PyObject *module, PyObject *args, PyObject *kwargs);

/* ---- definitions: entropy's, CLAHE's, the presets (es-py-definition.c) ---- */

enum {
  ES_PY_KW_RECT,
  ES_PY_KW_DISK,
  ES_PY_KW_FOOTPRINT,
  ES_PY_KW_BORDER,
  ES_PY_KW_BINNING,
  ES_PY_KW_MASK,
  ES_PY_KW_LIKE,
  ES_PY_KW_BOX,
  ES_PY_KW_BALL,
  ES_PY_KW_KERNEL_SIZE, /* CLAHE like='skimage': kernel_size=k or (rows, columns) */
  ES_PY_KW_NBINS,       /* CLAHE's presets: nbins */
  ES_PY_N_DEFINITION_KW
};
extern const char *const es_py_definition_keywords[ES_PY_N_DEFINITION_KW];

/* What a definition borrows from Python for the length of one run. */
typedef struct {
  PyArrayObject *footprint_cells, *mask_cells;
  EsFootprint footprint;
  EsImage mask;
  PyObject *mask_owner;  /* a device mask's capsule, or NULL */
  uintptr_t mask_stream; /* a device mask's producer stream, or 0 */
} EsPyDefinition;

/* The keywords that make a job, as Python passes them (NULL or None: not
 * given): the op's parameters by EsParamId, units ('nats', 'bits',
 * 'normalized') and entropy's definition keywords by ES_PY_KW_*. */
typedef struct {
  PyObject *values[ES_N_PARAMS];
  PyObject *units;
  PyObject *definition[ES_PY_N_DEFINITION_KW];
} EsPyJobKeywords;

/* The one parser of a job for entropy(), save(), halo() and extent(), in the
 * CLI's order: like= first, then the shape, border, binning, mask and the
 * parameters given, checked by the tables and es_job_validate. job comes
 * from ES_JOB_INIT (op); *units gets nats or bits (normalized is
 * job->definition.normalized); held keeps the arrays the definition
 * borrows (es_py_definition_release). Raises and returns false on a bad
 * value or a definition keyword for another op. */
bool es_py_parse_job (EsOp op, const EsPyJobKeywords *kw, EsJob *job, EsUnits *units, EsPyDefinition *held);
void es_py_definition_release (EsPyDefinition *held);
/* The keywords of save(), halo(), extent() and extent_3d() that describe a
 * job, sorted into kw (borrowed from kwargs, which may be NULL): every
 * parameter of the parameter table by its name (`_` for `-`, so that each
 * operation's parameters are accepted by construction), units and the
 * definition keywords. The function's own keywords (`own`, NULL-ended) go
 * into a new dict *rest (NULL when there are none) for its
 * PyArg_ParseTupleAndKeywords; any other raises TypeError naming it. */
bool es_py_split_job_keywords (const char *function, char *const *own, PyObject *kwargs, EsPyJobKeywords *kw,
                               PyObject **rest);

/* ---- small helpers (es-py-module.c) ---- */

/* Parses "nats"/"bits", "auto"/"cpu"/"cuda", ... from a table of names. */
bool es_py_parse_choice (PyObject *value, const char *what, const char *const *names, int *index);
/* Checks a parameter value (int or float as the table says) against the
 * parameter table, with its messages; stores it into job. */
bool es_py_parse_param (const EsParam *param, PyObject *value, EsJob *job);
/* TypeError for a numpy.ma.MaskedArray (its buffer is its data alone, so
 * reading it would drop the mask), saying what to give instead. */
bool es_py_refuse_masked (PyObject *value, const char *what, const char *instead);
/* "entropy" -> ES_OP_ENTROPY, or ValueError naming the operations. */
bool es_py_parse_op (PyObject *value, EsOp *op);
/* A variant id valid for op (NULL for None), as the CLI checks it. The
 * returned string lives as long as value. */
bool es_py_parse_variant (PyObject *value, EsOp op, const char **variant);
