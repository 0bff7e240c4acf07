/* SPDX-License-Identifier: MIT */
/* The operation table: what each operation reads, writes and needs, declared once for every layer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "es-control.h"
#include "es-error.h"
#include "es-image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ES_OP_QUANTIZE,  /* U8/U16 in -> U8 levels out */
  ES_OP_ENTROPY,   /* U8/U16 (or levels) in -> F32 nats out */
  ES_OP_EQUALIZE,  /* U8/U16 in -> U8 out, bit-identical to cv::equalizeHist */
  ES_OP_SHARPEN,   /* U8/U16 in -> U8 out */
  ES_N_OPS
} EsOp;

/* ---- parameters -------------------------------------------------------------
 * Every tunable of a job, declared once: the job validator, the CLI's options
 * and --help, the window's side panel and the GSettings schema (checked by a
 * test) all follow this table. The limits are macros too because kernels size
 * static tables by them. */

#define ES_WINDOW_MIN 3
#define ES_WINDOW_MAX 31
#define ES_WINDOW_DEFAULT 5
#define ES_LEVELS_MIN 2
#define ES_LEVELS_MAX 256
#define ES_LEVELS_DEFAULT 16
/* Beyond 10 every pixel whose 4-neighbour Laplacian exceeds 26 gray levels
 * saturates, so the result is a black-and-white edge map; 0 is the identity. */
#define ES_AMOUNT_MIN 0.0
#define ES_AMOUNT_MAX 10.0
#define ES_AMOUNT_DEFAULT 1.0

typedef enum {
  ES_PARAM_WINDOW,
  ES_PARAM_LEVELS,
  ES_PARAM_AMOUNT,
  ES_N_PARAMS
} EsParamId;

#define ES_PARAM_BIT(id) (1u << (id))

typedef struct {
  EsParamId id;
  const char *name;         /* "window": CLI option, settings key, export metadata */
  const char *title;        /* "Window size" */
  const char *description;  /* one line, for --help and tooltips */
  const char *metavar;      /* "K", for --help */
  double min, max, default_value;
  double step;              /* the window's increment (2 for odd integers) */
  int digits;               /* decimals a value is shown with; 0: an integer */
  bool odd;                 /* odd integers only */
} EsParam;

const EsParam *es_param (EsParamId id);
bool es_param_from_name (const char *name, EsParamId *id);
/* Whether value is allowed: in range, an integer where digits is 0, odd
 * where odd is set, never NaN. The message names the parameter and its range. */
bool es_param_check (const EsParam *param, double value, EsError *error);
/* "odd, 3..31 (default 5)" or "0..10 (default 1)": what --help says. */
void es_param_describe_range (const EsParam *param, char *text, size_t size);

/* ---- jobs ------------------------------------------------------------------ */

typedef struct {
  EsOp op;
  int window;          /* ES_PARAM_WINDOW */
  int levels;          /* ES_PARAM_LEVELS */
  float amount;        /* ES_PARAM_AMOUNT */
  const char *variant; /* CUDA kernel variant id; NULL = the default */
} EsJob;

#define ES_JOB_INIT(operation) { (operation), ES_WINDOW_DEFAULT, ES_LEVELS_DEFAULT, (float) ES_AMOUNT_DEFAULT, NULL }

double es_job_get_param (const EsJob *job, EsParamId id);
void es_job_set_param (EsJob *job, EsParamId id, double value);

/* Checks the operation and every parameter it uses against the table. The
 * engine does this once per run, at its gate; the backends assert. */
bool es_job_validate (const EsJob *job, EsError *error);

/* ---- operations -------------------------------------------------------------- */

/* A backend's implementation of one operation. `out` is already allocated
 * with the op's output format and the input's size, and the job is valid.
 * It polls `control` (may be NULL) between bands and reports progress; once
 * cancelled it returns false with ES_ERROR_CANCELLED. */
typedef bool (*EsCpuRunner) (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control,
                             EsError *error);

/* The CUDA entry of an operation: its variant table and launchers
 * (compute/cuda/es-cuda.h); NULL in a build without CUDA. */
typedef struct EsCudaOp EsCudaOp;

typedef struct {
  EsOp op;
  const char *name;          /* "entropy": CLI command, file suffix, metadata */
  const char *title;         /* "Entropy" */
  const char *result_title;  /* "Entropy", "Quantized", "Equalized": its result as a view */
  const char *summary;       /* one line for --help */
  EsFormat output_format;
  /* Times an ideal kernel reads each input byte (equalize: twice, for the
   * histogram and then the LUT). The copy floor moves these bytes. */
  int input_reads;
  unsigned params;           /* ES_PARAM_BIT() of every parameter it reads */
  /* Input rows above and below an output row that the row depends on: a
   * band of rows is computed from the band plus this halo. */
  int (*halo) (const EsJob *job);
  /* The output depends on a statistic of the whole image (equalize's
   * histogram), so banded runs take two passes. */
  bool whole_image;
  const char *units;         /* of the values: "nats", "level", "gray" */
  /* Every result of a job lies in [0, range_max (job)]: the absolute colour
   * range; range_text says it for --help ("0..ln(min(L, K²))"). */
  double (*range_max) (const EsJob *job);
  const char *range_text;
  const char *colormap;      /* the default colormap's name: "viridis", "gray" */
  EsCpuRunner cpu;
  const EsCudaOp *cuda;
} EsOpInfo;

const EsOpInfo *es_op_info (EsOp op);
static inline bool
es_op_uses (EsOp op, EsParamId id)
{
  return (es_op_info (op)->params & ES_PARAM_BIT (id)) != 0;
}
const char *es_op_name (EsOp op);                 /* "entropy" */
bool es_op_from_name (const char *name, EsOp *op);
EsFormat es_op_output_format (EsOp op);

#ifdef __cplusplus
}
#endif
