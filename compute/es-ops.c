/* SPDX-License-Identifier: MIT */
/* The operation and parameter tables: one row per operation, one per parameter. */
#include "es-ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/es-cpu.h"
#ifdef ES_HAVE_CUDA
#include "cuda/es-cuda.h"
#define ES_CUDA_ENTRY(entry) (&(entry))
#else
#define ES_CUDA_ENTRY(entry) NULL
#endif

static const EsParam params[ES_N_PARAMS] = {
  [ES_PARAM_WINDOW] = {
    ES_PARAM_WINDOW, "window", "Window size",
    "side of the square window around each pixel, in pixels", "K",
    ES_WINDOW_MIN, ES_WINDOW_MAX, ES_WINDOW_DEFAULT, 2, 0, true },
  [ES_PARAM_LEVELS] = {
    ES_PARAM_LEVELS, "levels", "Levels",
    "quantization levels: level = floor(v · L / 2^depth)", "L",
    ES_LEVELS_MIN, ES_LEVELS_MAX, ES_LEVELS_DEFAULT, 1, 0, false },
  [ES_PARAM_AMOUNT] = {
    ES_PARAM_AMOUNT, "amount", "Amount",
    "sharpen amount a: c + a · (4c − N − S − E − W)", "A",
    ES_AMOUNT_MIN, ES_AMOUNT_MAX, ES_AMOUNT_DEFAULT, 0.05, 2, false },
};

const EsParam *
es_param (EsParamId id)
{
  return (unsigned) id < ES_N_PARAMS ? &params[id] : NULL;
}

bool
es_param_from_name (const char *name, EsParamId *id)
{
  for (int i = 0; i < ES_N_PARAMS; i++)
    if (strcmp (name, params[i].name) == 0)
      {
        *id = (EsParamId) i;
        return true;
      }
  return false;
}

void
es_param_describe_range (const EsParam *param, char *text, size_t size)
{
  snprintf (text, size, "%s%g..%g (default %g)", param->odd ? "odd, " : "", param->min, param->max,
            param->default_value);
}

bool
es_param_check (const EsParam *param, double value, EsError *error)
{
  char range[64];

  /* The negated comparison also rejects NaN. */
  if (!(value >= param->min && value <= param->max)
      || (param->digits == 0 && value != floor (value))
      || (param->odd && fmod (value, 2.0) == 0.0))
    {
      es_param_describe_range (param, range, sizeof range);
      return es_error_set (error, ES_ERROR_INVALID, "%s %g is out of range: %s", param->name, value, range);
    }
  return true;
}

double
es_job_get_param (const EsJob *job, EsParamId id)
{
  switch (id)
    {
    case ES_PARAM_WINDOW: return job->window;
    case ES_PARAM_LEVELS: return job->levels;
    case ES_PARAM_AMOUNT: return job->amount;
    case ES_N_PARAMS: break;
    }
  return NAN;
}

void
es_job_set_param (EsJob *job, EsParamId id, double value)
{
  switch (id)
    {
    case ES_PARAM_WINDOW: job->window = (int) value; break;
    case ES_PARAM_LEVELS: job->levels = (int) value; break;
    case ES_PARAM_AMOUNT: job->amount = (float) value; break;
    case ES_N_PARAMS: break;
    }
}

/* ---- the operations ---------------------------------------------------------- */

static int
no_halo (const EsJob *job)
{
  (void) job;
  return 0;
}

static int
window_halo (const EsJob *job)
{
  return job->window / 2;
}

/* The 4-neighbour Laplacian reads the rows above and below. */
static int
stencil_halo (const EsJob *job)
{
  (void) job;
  return 1;
}

/* H ≤ ln(min(L, n)) and n ≤ k². */
static double
entropy_range_max (const EsJob *job)
{
  int window_pixels = job->window * job->window;

  return log ((double) (job->levels < window_pixels ? job->levels : window_pixels));
}

static double
levels_range_max (const EsJob *job)
{
  return job->levels - 1;
}

static double
gray_range_max (const EsJob *job)
{
  (void) job;
  return 255.0;
}

static const EsOpInfo ops[ES_N_OPS] = {
  [ES_OP_QUANTIZE] = {
    .op = ES_OP_QUANTIZE, .name = "quantize", .title = "Quantize", .result_title = "Quantized",
    .summary = "the quantization levels floor(v · L / 2^depth), 0..L−1",
    .output_format = ES_FORMAT_U8, .input_reads = 1,
    .params = ES_PARAM_BIT (ES_PARAM_LEVELS),
    .halo = no_halo, .units = "level", .colormap = "gray",
    .range_max = levels_range_max, .range_text = "0..L−1",
    .cpu = es_cpu_quantize, .cuda = ES_CUDA_ENTRY (es_cuda_quantize),
  },
  [ES_OP_ENTROPY] = {
    .op = ES_OP_ENTROPY, .name = "entropy", .title = "Entropy", .result_title = "Entropy",
    .summary = "local entropy in nats of the levels in a K×K window clipped to the image",
    .output_format = ES_FORMAT_F32, .input_reads = 1,
    .params = ES_PARAM_BIT (ES_PARAM_WINDOW) | ES_PARAM_BIT (ES_PARAM_LEVELS),
    .halo = window_halo, .units = "nats", .colormap = "viridis",
    .range_max = entropy_range_max, .range_text = "0..ln(min(L, K²))",
    .cpu = es_cpu_entropy, .cuda = ES_CUDA_ENTRY (es_cuda_entropy),
  },
  [ES_OP_EQUALIZE] = {
    .op = ES_OP_EQUALIZE, .name = "equalize", .title = "Equalize", .result_title = "Equalized",
    .summary = "histogram equalization, bit-identical to OpenCV's equalizeHist",
    .output_format = ES_FORMAT_U8, .input_reads = 2,
    .params = 0,
    .halo = no_halo, .whole_image = true, .units = "gray", .colormap = "gray",
    .range_max = gray_range_max, .range_text = "0..255",
    .cpu = es_cpu_equalize, .cuda = ES_CUDA_ENTRY (es_cuda_equalize),
  },
  [ES_OP_SHARPEN] = {
    .op = ES_OP_SHARPEN, .name = "sharpen", .title = "Sharpen", .result_title = "Sharpened",
    .summary = "c + A · (4c − N − S − E − W), replicated borders; at A = 1 bit-identical to "
               "OpenCV's filter2D with [0 −1 0; −1 5 −1; 0 −1 0]",
    .output_format = ES_FORMAT_U8, .input_reads = 1,
    .params = ES_PARAM_BIT (ES_PARAM_AMOUNT),
    .halo = stencil_halo, .units = "gray", .colormap = "gray",
    .range_max = gray_range_max, .range_text = "0..255",
    .cpu = es_cpu_sharpen, .cuda = ES_CUDA_ENTRY (es_cuda_sharpen),
  },
};

const EsOpInfo *
es_op_info (EsOp op)
{
  return (unsigned) op < ES_N_OPS ? &ops[op] : NULL;
}

const char *
es_op_name (EsOp op)
{
  return (unsigned) op < ES_N_OPS ? ops[op].name : "?";
}

bool
es_op_from_name (const char *name, EsOp *op)
{
  for (int i = 0; i < ES_N_OPS; i++)
    if (strcmp (name, ops[i].name) == 0)
      {
        *op = (EsOp) i;
        return true;
      }
  return false;
}

EsFormat
es_op_output_format (EsOp op)
{
  return ops[op].output_format;
}

bool
es_job_validate (const EsJob *job, EsError *error)
{
  if (job == NULL || (unsigned) job->op >= ES_N_OPS)
    return es_error_set (error, ES_ERROR_INVALID, "unknown operation %d", job ? (int) job->op : -1);
  for (int i = 0; i < ES_N_PARAMS; i++)
    if (es_op_uses (job->op, (EsParamId) i)
        && !es_param_check (&params[i], es_job_get_param (job, (EsParamId) i), error))
      return false;
  return true;
}
