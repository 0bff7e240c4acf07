/* SPDX-License-Identifier: MIT */
/* The user job without a display: image -> job -> values -> colour scale -> export.
 * entroscope-cli and the window both go through here, so an export from the
 * window is byte-identical to the CLI's output for the same job. */
#pragma once

#include "es-colormap.h"
#include "es-engine.h"
#include "es-save.h"

typedef enum {
  ES_RANGE_ABSOLUTE, /* entropy 0..ln(min(L, k^2)); levels 0..L-1; u8 0..255 */
  ES_RANGE_AUTO,     /* the result's own min..max; a float span under ES_VALUE_ACCURACY is flat */
} EsRangeMode;

/* The accuracy that DESIGN.md §1 states for float results (entropy within
 * 1e-5 of a float64 evaluation): differences below it mean nothing. */
#define ES_VALUE_ACCURACY 1e-5

/* Units of entropy values (of any op whose table units are "nats"). */
typedef enum {
  ES_UNITS_NATS,
  ES_UNITS_BITS,
} EsUnits;

typedef enum {
  ES_EXPORT_PNG,   /* colormapped 8-bit RGB */
  ES_EXPORT_RAW16, /* 16-bit gray with tEXt metadata */
  ES_EXPORT_TEXT,  /* text matrix */
  ES_EXPORT_TIFF,  /* the values as they are: 32-bit float, or 8/16-bit gray */
} EsExportFormat;

typedef struct {
  EsJob job;
  EsColormap colormap;
  bool reversed;
  EsRangeMode range;
  EsUnits units;
} EsViewParams;

/* The job's defaults from the operation and parameter tables, the op's
 * default colormap, the absolute range, nats. */
void es_view_params_init (EsViewParams *params, EsOp op);
/* Sets params->colormap (and reversed) to the default of params->job.op. */
void es_view_params_default_colormap (EsViewParams *params);
/* Whether the op's values are in nats, so that ES_UNITS_BITS applies to them. */
bool es_units_convertible (EsOp op);
/* The metadata of a job's values shown or exported in `units`: what the
 * readout, the colorbar and every export say (the definition line too). */
EsValueInfo es_value_info_for (const EsJob *job, EsUnits units);

struct EsRowGate;

typedef struct {
  EsImage values;     /* what es_run produced */
  EsColorScale scale; /* lo/hi in the values' own units (nats for entropy) */
  EsValueInfo info;   /* metadata for exports and the colorbar */
  EsTiming timing;
  /* NULL, or the gate through which rows of values arrive while they are
   * still being computed (es-row-gate.h): exports wait for each row. */
  struct EsRowGate *gate;
} EsResult;

/* The range of ES_RANGE_AUTO: the values' minimum and maximum (over every
 * plane of a volume), except that
 * float values spanning less than ES_VALUE_ACCURACY get hi = lo (flat). */
void es_pipeline_auto_range (const EsImage *values, double *lo, double *hi);

/* Whether the job can be computed and exported in bands of rows as its
 * input arrives on `engine`: a job of 2-D local windows (no whole-image
 * statistic, no mask), or one whose halo is a tile (es_job_tile_passes,
 * CLAHE's) when the engine computes on the CPU, which has the passes; on
 * the absolute range, to any export but the text matrix. */
bool es_pipeline_streams (EsEngine *engine, const EsViewParams *params, EsExportFormat format);
/* Sets result's scale and info for params (what es_pipeline_run does
 * after computing; the absolute range needs no values). */
void es_pipeline_describe (const EsViewParams *params, EsResult *result);
/* Records the input's pixel size in result's info, for its exports (TIFF
 * resolution, PNG pHYs); results are computed on samples alone. */
void es_result_calibrate (EsResult *result, const EsImage *input);

/* An entropy job on an image with NaN samples (a float TIFF's, counted in
 * EsImageMeta.nan_samples) counts NaN pixels as masked-out cells, which
 * DESIGN.md §1 defines (counted in no window, no value of their own): *mask
 * gets the job's mask (if any) without them, and the job's definition
 * points at it until es_image_clear (mask). Any other job or image is left
 * as it is, and *mask empty. false only when the mask cannot be allocated. */
bool es_job_mask_nan (EsJob *job, const EsImage *input, EsImage *mask, EsError *error);

/* Runs params->job on source and fills result (reusing its buffers); NaN
 * samples of source are masked out (es_job_mask_nan). */
bool es_pipeline_run (EsEngine *engine, const EsImage *source, const EsViewParams *params, EsResult *result,
                      EsError *error);
/* The same, cancellable and reporting progress (es_run_controlled). */
bool es_pipeline_run_controlled (EsEngine *engine, const EsImage *source, const EsViewParams *params, EsResult *result,
                                 EsControl *control, EsError *error);
void es_result_clear (EsResult *result);

/* Writes a result as the CLI and the window's export do. */
bool es_pipeline_export (const char *path, EsExportFormat format, const EsResult *result, bool colorbar,
                         EsError *error);
