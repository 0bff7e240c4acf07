/* The user job without a display, shared by entroscope-cli and the window. */
#include "es-pipeline.h"

#include <math.h>

void
es_view_params_init (EsViewParams *params, EsOp op)
{
  *params = (EsViewParams) {
    .job = ES_JOB_INIT (op),
    /* Entropy is a heatmap; the other results are images best seen in gray. */
    .colormap = op == ES_OP_ENTROPY ? ES_COLORMAP_VIRIDIS : ES_COLORMAP_GRAY,
    .reversed = false,
    .range = ES_RANGE_ABSOLUTE,
    .units = ES_UNITS_NATS,
  };
}

/* The range every result of this job could take, so that colours mean the
 * same thing from one image to the next. */
static void
absolute_range (const EsJob *job, double *lo, double *hi)
{
  *lo = 0.0;
  switch (job->op)
    {
    case ES_OP_ENTROPY:
      {
        /* H ≤ ln(min(L, n)) and n ≤ k². */
        int window_pixels = job->window * job->window;
        *hi = log ((double) (job->levels < window_pixels ? job->levels : window_pixels));
        break;
      }
    case ES_OP_QUANTIZE:
      *hi = job->levels - 1;
      break;
    case ES_OP_EQUALIZE:
    case ES_OP_SHARPEN:
    default:
      *hi = 255.0;
      break;
    }
}

static EsValueInfo
value_info (const EsViewParams *params)
{
  const EsJob *job = &params->job;
  bool bits = job->op == ES_OP_ENTROPY && params->units == ES_UNITS_BITS;

  return (EsValueInfo) {
    .operation = es_op_name (job->op),
    .window = job->op == ES_OP_ENTROPY ? job->window : 0,
    .levels = job->op == ES_OP_ENTROPY || job->op == ES_OP_QUANTIZE ? job->levels : 0,
    .amount = job->op == ES_OP_SHARPEN ? job->amount : 0.0f,
    .units = job->op == ES_OP_ENTROPY ? (bits ? "bits" : "nats")
             : job->op == ES_OP_QUANTIZE ? "level" : "gray",
    .unit_scale = bits ? 1.0 / M_LN2 : 1.0,
  };
}

bool
es_pipeline_run (EsEngine *engine, const EsImage *source, const EsViewParams *params,
                 EsResult *result, EsError *error)
{
  if (!es_run (engine, &params->job, source, &result->values, &result->timing, error))
    return false;

  result->scale.map = params->colormap;
  result->scale.reversed = params->reversed;
  if (params->range == ES_RANGE_AUTO)
    es_image_min_max (&result->values, &result->scale.lo, &result->scale.hi);
  else
    absolute_range (&params->job, &result->scale.lo, &result->scale.hi);
  result->info = value_info (params);
  return true;
}

void
es_result_clear (EsResult *result)
{
  es_image_clear (&result->values);
  *result = (EsResult) { 0 };
}

bool
es_pipeline_export (const char *path, EsExportFormat format, const EsResult *result,
                    bool colorbar, EsError *error)
{
  switch (format)
    {
    case ES_EXPORT_PNG:
      return es_save_heatmap_png (path, &result->values, &result->scale, colorbar, &result->info, error);
    case ES_EXPORT_RAW16:
      return es_save_raw16_png (path, &result->values, result->scale.lo, result->scale.hi,
                                &result->info, error);
    case ES_EXPORT_TEXT:
      return es_save_text_matrix (path, &result->values, &result->info, error);
    }
  return es_error_set (error, ES_ERROR_INVALID, "unknown export format %d", (int) format);
}
