/* SPDX-License-Identifier: MIT */
/* Compare variants: the medians of every kernel variant of a job on one image, and the copy floor. */
#include "es-compare.h"
#include "es-intl.h"

#include <math.h>
#include <stdlib.h>

static const char *const cpu_label = N_ ("CPU (OpenMP)");
static const char *const cpu_lesson = N_ (
  "The CPU backend has a single implementation of each operation; the variants are CUDA "
  "kernels.");

EsEngine *
es_compare_engine_new (EsBackendChoice choice, EsError *error)
{
  static const int first_device[] = { 0 };

  if (choice != ES_BACKEND_CPU && getenv ("ES_DEVICES") == NULL)
    {
      EsEngine *engine = es_engine_new_with_devices (choice, first_device, 1, error);

      if (engine != NULL || choice == ES_BACKEND_CUDA)
        return engine;
      es_error_clear (error);
    }
  return es_engine_new (choice, error);
}

void
es_compare_op_bytes (const EsJob *job, size_t pixels, size_t *in_bytes, size_t *out_bytes)
{
  /* An 8-bit input, as the benchmarks use. */
  *in_bytes = (size_t) es_op_info (job->op)->input_reads * pixels;
  *out_bytes = es_format_size (es_job_output_format (job, ES_FORMAT_U8)) * pixels;
}

void
es_compare_row_init (EsCompareRow *row, const EsVariant *variant)
{
  *row = (EsCompareRow){
    .id = variant ? variant->id : "openmp",
    .label = variant ? variant->label : cpu_label,
    .lesson = variant ? variant->lesson : cpu_lesson,
    .source = variant ? variant->source : "",
    .is_default = variant ? variant->is_default : false,
    .backend = variant ? ES_BACKEND_CUDA : ES_BACKEND_CPU,
    /* Untimed until es_compare_row_record. */
    .kernel_ms = NAN,
    .wall_ms = NAN,
    .floor_multiple = NAN,
  };
}

void
es_compare_row_record (EsCompareRow *row, const EsTiming *timing, int repeats, double floor_ms)
{
  row->kernel_ms = timing->kernel_ms;
  row->wall_ms = timing->wall_ms;
  row->metrics = timing->metrics;
  row->repeats = repeats;
  row->floor_multiple = floor_ms > 0.0 ? row->kernel_ms / floor_ms : NAN;
}

void
es_compare_bandwidth (const EsJob *job, size_t pixels, const EsCompareRow *rows, size_t n_rows, double floor_ms,
                      EsCompareBandwidth *bandwidth)
{
  size_t in_bytes, out_bytes;

  es_compare_op_bytes (job, pixels, &in_bytes, &out_bytes);
  bandwidth->floor_gbs = floor_ms > 0.0 ? (double) (in_bytes + out_bytes) / 1e6 / floor_ms : NAN;
  bandwidth->datasheet_gbs = 0;
  bandwidth->fastest_gbs = 0;
  for (size_t i = 0; i < n_rows; i++)
    if (rows[i].unsupported == NULL && rows[i].repeats > 0)
      {
        bandwidth->datasheet_gbs = fmax (bandwidth->datasheet_gbs, rows[i].metrics.datasheet_gbs);
        bandwidth->fastest_gbs = fmax (bandwidth->fastest_gbs, rows[i].metrics.achieved_gbs);
      }
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *values, int n)
{
  qsort (values, (size_t) n, sizeof *values, compare_double);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static bool
run_once (EsEngine *engine, const EsJob *job, const EsImage *image, EsImage *out, EsTiming *timing, EsError *error)
{
  const char *notice;

  if (!es_run (engine, job, image, out, timing, error))
    return false;
  if (timing->fell_back || (es_engine_backend (engine) == ES_BACKEND_CUDA && timing->backend != ES_BACKEND_CUDA))
    {
      notice = es_engine_take_notice (engine);
      return es_error_set (error, ES_ERROR_COMPUTE, "%s: %s", job->variant ? job->variant : "default",
                           notice ? notice : "CUDA failed and the CPU finished the job");
    }
  return true;
}

bool
es_compare_measure (EsEngine *engine, const EsJob *job, const EsImage *image, int repeats, EsImage *out,
                    EsTiming *timing, EsError *error)
{
  double *kernel = calloc (2 * (size_t) repeats, sizeof *kernel);
  double *wall = kernel + repeats;
  const bool counters = es_engine_counters (engine);
  EsTiming counted;
  bool ok = kernel != NULL;

  if (!ok)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
  /* The counters' pass would be in every wall time: the warm-up run counts
   * them, and the timed runs go without. */
  ok = run_once (engine, job, image, out, &counted, error);
  es_engine_set_counters (engine, false);
  for (int i = 0; ok && i < repeats; i++)
    {
      ok = run_once (engine, job, image, out, timing, error);
      kernel[i] = timing->kernel_ms;
      wall[i] = timing->wall_ms;
    }
  es_engine_set_counters (engine, counters);
  if (ok)
    {
      timing->kernel_ms = median (kernel, repeats);
      timing->wall_ms = median (wall, repeats);
      es_timing_update_rates (timing);
      es_metrics_take_counters (&timing->metrics, &counted.metrics);
    }
  free (kernel);
  return ok;
}

bool
es_compare_variants (EsEngine *engine, const EsImage *image, const EsJob *job, int repeats, EsCompareProgress progress,
                     void *user_data, EsCompareRow **rows, size_t *n_rows, double *floor_ms, EsError *error)
{
  bool cuda = es_engine_backend (engine) == ES_BACKEND_CUDA;
  size_t n_variants = 0, in_bytes, out_bytes, n, step = 0, total;
  const EsVariant *variants = cuda ? es_variants (job->op, &n_variants) : NULL;
  EsJob variant_job = *job;
  EsCompareRow *result = NULL;
  EsImage out = { 0 };
  double floor = NAN;
  bool ok = false;

  *rows = NULL;
  *n_rows = 0;
  *floor_ms = NAN;
  if (repeats < 1)
    return es_error_set (error, ES_ERROR_INVALID, "repeats must be at least 1, not %d", repeats);
  if (!es_job_validate (job, error))
    return false;
  if (cuda && n_variants == 0)
    return es_error_set (error, ES_ERROR_INVALID, "%s has no CUDA kernel variants", es_op_name (job->op));

  n = cuda ? n_variants : 1;
  total = cuda ? n + 1 : n;
  result = calloc (n, sizeof *result);
  if (result == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "out of memory");
      goto out;
    }

  if (cuda)
    {
      if (progress && !progress (step, total, "Copy floor", user_data))
        goto out;
      es_compare_op_bytes (job, (size_t) image->width * (size_t) image->height, &in_bytes, &out_bytes);
      if (!es_engine_floor (engine, ES_FLOOR_COPY, in_bytes, out_bytes, repeats, &floor, error))
        goto out;
      step++;
    }

  for (size_t i = 0; i < n; i++, step++)
    {
      EsCompareRow *row = &result[i];

      es_compare_row_init (row, cuda ? &variants[i] : NULL);
      variant_job.variant = cuda ? variants[i].id : NULL;
      if (progress && !progress (step, total, row->label, user_data))
        goto out;
      row->unsupported = cuda ? es_variant_unsupported (&variants[i], job) : NULL;
      if (row->unsupported != NULL)
        continue;
      EsTiming timing;
      if (!es_compare_measure (engine, &variant_job, image, repeats, &out, &timing, error))
        goto out;
      es_compare_row_record (row, &timing, repeats, floor);
    }
  if (progress && !progress (total, total, NULL, user_data))
    goto out;

  *rows = result;
  *n_rows = n;
  *floor_ms = floor;
  result = NULL;
  ok = true;

out:
  es_image_clear (&out);
  free (result);
  return ok;
}
