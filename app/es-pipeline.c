/* SPDX-License-Identifier: MIT */
/* The user job without a display, shared by entroscope-cli and the window. */
#include "es-pipeline.h"
#include "es-save-gated.h"

#include <math.h>
#include <string.h>

void
es_view_params_init (EsViewParams *params, EsOp op)
{
  *params = (EsViewParams){
    .job = ES_JOB_INIT (op),
    .colormap = ES_COLORMAP_GRAY,
    .reversed = false,
    .range = ES_RANGE_ABSOLUTE,
    .units = ES_UNITS_NATS,
  };
  es_view_params_default_colormap (params);
}

void
es_view_params_default_colormap (EsViewParams *params)
{
  /* The table names a colormap this build knows; a test checks it. */
  (void) es_colormap_from_name (es_op_info (params->job.op)->colormap, &params->colormap, &params->reversed);
}

EsValueInfo
es_value_info_for (const EsJob *job, EsUnits units)
{
  const EsOpInfo *op = es_op_info (job->op);
  const bool entropy = job->op == ES_OP_ENTROPY;
  bool normalized = entropy && job->definition.normalized;
  bool bits = es_units_convertible (job->op) && units == ES_UNITS_BITS && !normalized;
  /* The window size and the level count are recorded only where they shape
   * the values: a rectangle, disk, box, ball or footprint has its own size
   * in the definition, and exact bins take no level count. */
  bool square = !entropy || job->definition.shape == ES_SHAPE_SQUARE;
  bool leveled = !entropy || job->definition.binning != ES_BINNING_EXACT;
  EsValueInfo info = {
    .operation = op->name,
    .window = es_op_uses (job->op, ES_PARAM_WINDOW) && square ? job->window : 0,
    .levels = es_op_uses (job->op, ES_PARAM_LEVELS) && leveled ? job->levels : 0,
    .amount = es_op_uses (job->op, ES_PARAM_AMOUNT) ? job->amount : 0.0f,
    .clip = es_op_uses (job->op, ES_PARAM_CLIP) ? job->clip : 0.0,
    .tile_columns = es_op_uses (job->op, ES_PARAM_TILE_COLUMNS) ? job->tile_columns : 0,
    .tile_rows = es_op_uses (job->op, ES_PARAM_TILE_ROWS) ? job->tile_rows : 0,
    .units = normalized ? "normalized"
             : bits     ? "bits"
                        : op->units,
    .unit_scale = bits ? 1.0 / M_LN2 : 1.0,
  };

  es_job_describe_definition (job, info.units, info.definition, sizeof info.definition);
  info.may_have_no_data = job->op == ES_OP_ENTROPY
                          && (job->definition.mask != NULL || job->definition.shape == ES_SHAPE_FOOTPRINT);
  return info;
}

void
es_pipeline_auto_range (const EsImage *values, double *lo, double *hi)
{
  EsImage whole = *values;

  /* A volume's planes lie one after the other: its range is that of one
   * image as tall as all of them, so that every plane is drawn on the
   * same scale. */
  if (es_image_planes (values) > 1 && values->plane_stride == values->stride * (size_t) values->height)
    {
      whole.height = values->height * es_image_planes (values);
      whole.planes = 0;
    }
  es_image_min_max (&whole, lo, hi);
  /* Float results are exact only to ES_VALUE_ACCURACY: a span narrower than
   * that is rounding noise (a constant image's entropy, 0 up to a few 1e-7),
   * which stretched to full scale would draw patterns that are not there.
   * It is drawn flat, with one colorbar label, and a raw 16-bit export
   * records a ValueScale of 0. */
  if (values->format == ES_FORMAT_F32 && *hi - *lo < ES_VALUE_ACCURACY)
    *hi = *lo;
}

bool
es_pipeline_run (EsEngine *engine, const EsImage *source, const EsViewParams *params, EsResult *result, EsError *error)
{
  return es_pipeline_run_controlled (engine, source, params, result, NULL, error);
}

bool
es_job_mask_nan (EsJob *job, const EsImage *input, EsImage *mask, EsError *error)
{
  const EsImage *given = job->definition.mask;
  int planes = es_image_planes (input);

  *mask = (EsImage){ 0 };
  if (job->op != ES_OP_ENTROPY || input->meta.nan_samples == 0 || es_image_on_device (input)
      || input->format != ES_FORMAT_U16)
    return true;
  /* A mask of another size is the engine's to refuse, with its message. */
  if (given != NULL
      && (given->width != input->width || given->height != input->height || es_image_planes (given) != planes
          || given->format != ES_FORMAT_U8))
    return true;
  if (!es_image_alloc_volume (mask, input->width, input->height, planes, ES_FORMAT_U8, 8, error))
    return false;
  for (int z = 0; z < planes; z++)
    for (int y = 0; y < input->height; y++)
      {
        const uint16_t *row = es_image_voxel_row (input, z, y);
        const uint8_t *in = given ? es_image_voxel_row (given, z, y) : NULL;
        uint8_t *out = es_image_voxel_row (mask, z, y);

        for (int x = 0; x < input->width; x++)
          out[x] = !es_image_meta_is_nan (&input->meta, row[x]) && (in == NULL || in[x] != 0);
      }
  job->definition.mask = mask;
  return true;
}

bool
es_pipeline_run_controlled (EsEngine *engine, const EsImage *source, const EsViewParams *params, EsResult *result,
                            EsControl *control, EsError *error)
{
  EsJob job = params->job;
  EsImage nan_mask;
  bool ok = es_job_mask_nan (&job, source, &nan_mask, error)
            && es_run_controlled (engine, &job, source, &result->values, &result->timing, control, error);

  es_image_clear (&nan_mask);
  if (!ok)
    return false;
  /* The job as the user gave it: its definition line names no mask of theirs. */
  es_pipeline_describe (params, result);
  result->info.may_have_no_data |= job.definition.mask != params->job.definition.mask;
  es_result_calibrate (result, source);
  return true;
}

void
es_result_calibrate (EsResult *result, const EsImage *input)
{
  const EsImageMeta *meta = &input->meta;

  result->info.pixel_size = (EsImageMeta){
    .pixel_width = meta->pixel_width,
    .pixel_height = meta->pixel_height,
    .pixel_depth = meta->pixel_depth,
    .length_unit = meta->length_unit,
  };
}

void
es_pipeline_describe (const EsViewParams *params, EsResult *result)
{
  result->scale.map = params->colormap;
  result->scale.reversed = params->reversed;
  if (params->range == ES_RANGE_AUTO)
    es_pipeline_auto_range (&result->values, &result->scale.lo, &result->scale.hi);
  else
    {
      /* The range every result of this job could take, so that colours mean
       * the same thing from one image to the next (a 16-bit result's
       * 0..65535, so that its exports hold its own values). */
      result->scale.lo = 0.0;
      result->scale.hi = es_job_range_max (&params->job, result->values.format);
    }
  result->info = es_value_info_for (&params->job, params->units);
}

bool
es_pipeline_streams (EsEngine *engine, const EsViewParams *params, EsExportFormat format)
{
  const EsJob *job = &params->job;
  bool banded = !es_job_whole_image (job)
                || (es_job_tile_passes (job) != NULL && es_engine_backend (engine) == ES_BACKEND_CPU);

  return params->range == ES_RANGE_ABSOLUTE && format != ES_EXPORT_TEXT && banded
         && !(job->op == ES_OP_ENTROPY && (job->definition.mask != NULL || es_definition_is_3d (&job->definition)));
}

bool
es_units_convertible (EsOp op)
{
  return strcmp (es_op_info (op)->units, "nats") == 0;
}

void
es_result_clear (EsResult *result)
{
  es_image_clear (&result->values);
  *result = (EsResult){ 0 };
}

bool
es_pipeline_export (const char *path, EsExportFormat format, const EsResult *result, bool colorbar, EsError *error)
{
  switch (format)
    {
    case ES_EXPORT_PNG:
      return es_save_heatmap_png_gated (path, &result->values, &result->scale, colorbar, &result->info, result->gate,
                                        error);
    case ES_EXPORT_RAW16:
      return es_save_raw16_png_gated (path, &result->values, result->scale.lo, result->scale.hi, &result->info,
                                      result->gate, error);
    case ES_EXPORT_TIFF: return es_save_tiff_gated (path, &result->values, &result->info, result->gate, error);
    case ES_EXPORT_TEXT: return es_save_text_matrix (path, &result->values, &result->info, error);
    }
  return es_error_set (error, ES_ERROR_INVALID, "unknown export format %d", (int) format);
}
