/* Names, job validation and the equalization LUT: shared by both backends. */
#include "es-engine.h"
#include "es-ops.h"

#include <string.h>

static const char *const op_names[ES_N_OPS] = { "quantize", "entropy", "equalize", "sharpen" };

const char *
es_op_name (EsOp op)
{
  return (unsigned) op < ES_N_OPS ? op_names[op] : "?";
}

bool
es_op_from_name (const char *name, EsOp *op)
{
  for (int i = 0; i < ES_N_OPS; i++)
    if (strcmp (name, op_names[i]) == 0)
      {
        *op = (EsOp) i;
        return true;
      }
  return false;
}

const char *
es_backend_name (EsBackendChoice backend)
{
  switch (backend)
    {
    case ES_BACKEND_AUTO: return "auto";
    case ES_BACKEND_CPU: return "cpu";
    case ES_BACKEND_CUDA: return "cuda";
    }
  return "?";
}

bool
es_backend_from_name (const char *name, EsBackendChoice *backend)
{
  static const EsBackendChoice all[] = { ES_BACKEND_AUTO, ES_BACKEND_CPU, ES_BACKEND_CUDA };

  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (strcmp (name, es_backend_name (all[i])) == 0)
      {
        *backend = all[i];
        return true;
      }
  return false;
}

EsFormat
es_op_output_format (EsOp op)
{
  return op == ES_OP_ENTROPY ? ES_FORMAT_F32 : ES_FORMAT_U8;
}

bool
es_job_validate (const EsJob *job, EsError *error)
{
  if ((unsigned) job->op >= ES_N_OPS)
    return es_error_set (error, ES_ERROR_INVALID, "unknown operation %d", (int) job->op);
  if (job->op == ES_OP_ENTROPY
      && (job->window < ES_WINDOW_MIN || job->window > ES_WINDOW_MAX || job->window % 2 == 0))
    return es_error_set (error, ES_ERROR_INVALID, "window %d must be odd, from %d to %d",
                         job->window, ES_WINDOW_MIN, ES_WINDOW_MAX);
  if ((job->op == ES_OP_ENTROPY || job->op == ES_OP_QUANTIZE)
      && (job->levels < ES_LEVELS_MIN || job->levels > ES_LEVELS_MAX))
    return es_error_set (error, ES_ERROR_INVALID, "levels %d must be from %d to %d",
                         job->levels, ES_LEVELS_MIN, ES_LEVELS_MAX);
  /* The negated comparison also rejects NaN. */
  if (job->op == ES_OP_SHARPEN && !(job->amount >= 0.0f && job->amount <= 1e6f))
    return es_error_set (error, ES_ERROR_INVALID, "sharpen amount %g must be 0 or more", job->amount);
  return true;
}

int
es_equalize_lut (const uint64_t hist[256], uint64_t n, uint8_t lut[256])
{
  int first = 0;
  uint64_t sum = 0;
  float scale;

  while (first < 255 && hist[first] == 0)
    first++;
  if (hist[first] == n)
    {
      for (int k = 0; k < 256; k++)
        lut[k] = (uint8_t) k;
      return 0;
    }
  /* As cv::equalizeHist: float32 scale, the count converted to float, then
   * rounded half to even and saturated. */
  scale = 255.0f / (float) (n - hist[first]);
  for (int k = 0; k <= first; k++)
    lut[k] = 0;
  for (int k = first + 1; k < 256; k++)
    {
      float value;

      sum += hist[k];
      value = rintf ((float) sum * scale);
      lut[k] = (uint8_t) (value > 255.0f ? 255.0f : value);
    }
  return 1;
}
