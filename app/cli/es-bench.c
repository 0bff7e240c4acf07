/* SPDX-License-Identifier: MIT */
/* entroscope-cli bench: medians per operation, size, parameters, backend and variant beside the copy floor, or on one image. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-bench.h"
#include "es-cli.h"
#include "es-cli-metrics.h"
#include "es-cli-report.h"
#include "es-compare.h"
#include "es-load.h"
#include "es-save.h"

/* A fixed seed so that runs on different machines time the same pixels. */
#define BENCH_SEED 0x5EED2024ull

typedef struct {
  EsBackendChoice choice;
  EsEngine *engine;
  EsImage out;          /* reused between runs, as the window does (page-locked on CUDA) */
  EsImage out_pageable; /* plain malloc'd output for the pageable-transfers lesson */
  int repeats;
  bool usable; /* false after CUDA failed once: later rows would time the CPU */
} BenchBackend;

/* One input image: the bench's own (page-locked where CUDA runs) and a
 * pageable copy of it, and the CPU's result to check every variant against. */
typedef struct {
  const char *name; /* "random", "16-level" */
  const EsImage *in;
  const EsImage *pageable;
  const EsImage *expected; /* NULL when the CPU did not run */
} BenchInput;

typedef struct {
  double kernel_ms; /* medians */
  double wall_ms;
  EsTiming timing; /* the last run's, with the medians (es_compare_measure) */
} Measure;

typedef struct {
  EsOp op;
  const EsJob *job; /* its parameters */
  int size;
  const char *image;
  const BenchBackend *backend;
  const char *variant;
  Measure m;
  double floor_ms; /* NAN where not measured (CPU) */
  double xfer_ms;  /* page-locked upload + download of the image and result; NAN on the CPU */
  double naive_ms; /* NAN where not measured */
  size_t bytes;    /* read + written by the operation */
  bool metrics;    /* --metrics: m.timing.metrics beside the times */
} BenchRow;

/* Never time on zeros: uniform samples in base..base+span-1 (xorshift64*):
 * 1..255 for the random image, 16 neighbouring grays for the low-contrast one. */
static void
fill_random (EsImage *image, unsigned long long seed, unsigned base, unsigned span)
{
  unsigned long long x = seed ? seed : 1;

  for (int y = 0; y < image->height; y++)
    {
      uint8_t *row = es_image_row (image, y);
      for (int i = 0; i < image->width; i++)
        {
          x ^= x >> 12;
          x ^= x << 25;
          x ^= x >> 27;
          row[i] = (uint8_t) (base + ((x * 2685821657736338717ull) >> 32) % span);
        }
    }
}

/* The values of parameter id that op is timed at: those listed, else the
 * job's own one (1 for a parameter that op does not read). */
static int
param_values (const EsBenchOptions *options, EsOp op, EsParamId id)
{
  return es_op_uses (op, id) && options->n_values[id] > 0 ? options->n_values[id] : 1;
}

/* How many parameter combinations op is timed at. */
static int
combinations (const EsBenchOptions *options, EsOp op)
{
  int n = 1;

  for (int id = 0; id < ES_N_PARAMS; id++)
    n *= param_values (options, op, (EsParamId) id);
  return n;
}

/* options->job with the operation and the parameter values of op's
 * combination `index` (the table's last parameter varies fastest); each
 * variant is set where it is timed. */
static EsJob
bench_job (const EsBenchOptions *options, EsOp op, int index)
{
  EsJob job = options->job;

  job.op = op;
  job.variant = NULL;
  for (int id = ES_N_PARAMS - 1; id >= 0; id--)
    {
      int n = param_values (options, op, (EsParamId) id);

      if (es_op_uses (op, (EsParamId) id) && options->n_values[id] > 0)
        es_job_set_param (&job, (EsParamId) id, options->values[id][index % n]);
      index /= n;
    }
  return job;
}

/* A parameter's value as --help shows it: "5", "0.5". */
static void
format_param (char *text, size_t size, EsParamId id, double value)
{
  const EsParam *param = es_param (id);

  snprintf (text, size, "%.*f", param->digits, value);
  if (param->digits > 0 && strchr (text, '.'))
    {
      /* "0.50" → "0.5", "1.00" → "1". */
      char *end = text + strlen (text) - 1;
      while (*end == '0')
        *end-- = '\0';
      if (*end == '.')
        *end = '\0';
    }
}

/* A parameter's column in the table: its name's width, at least 6. */
static int
param_width (EsParamId id)
{
  int len = (int) strlen (es_param (id)->name);

  return len > 6 ? len : 6;
}

/* Each parameter's value in a row, in the table's order: "-" (an empty CSV
 * field) for one the operation does not read. */
static void
print_params (const EsJob *job, FILE *table, FILE *csv)
{
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      char text[32] = "";

      if (es_op_uses (job->op, (EsParamId) id))
        format_param (text, sizeof text, (EsParamId) id, es_job_get_param (job, (EsParamId) id));
      if (table)
        fprintf (table, " %*s", param_width ((EsParamId) id), text[0] ? text : "-");
      if (csv)
        fprintf (csv, ",%s", text);
    }
}

/* The parameters' names as column headings of the table, or CSV fields. */
static void
print_param_headings (FILE *table, FILE *csv)
{
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      if (table)
        fprintf (table, " %*s", param_width ((EsParamId) id), es_param ((EsParamId) id)->name);
      if (csv)
        fprintf (csv, ",%s", es_param ((EsParamId) id)->name);
    }
}

/* An operation that builds a histogram of the whole image (equalize) is
 * also timed on 16 neighbouring grays: there its atomic increments pile
 * onto a few bins, which is what the privatized-histogram variants are
 * about, while on uniform noise they spread over all 256. */
static bool
low_contrast_too (EsOp op)
{
  return es_op_info (op)->whole_image;
}

/* "; equalize also on 16 neighbouring grays" for the header, or "". */
static void
describe_low_contrast (const EsBenchOptions *options, char *text, size_t size)
{
  size_t len = 0;

  text[0] = '\0';
  for (int i = 0; i < options->n_ops && len < size; i++)
    if (low_contrast_too (options->ops[i]))
      len += (size_t) snprintf (text + len, size - len, "%s%s", len ? ", " : "; ", es_op_name (options->ops[i]));
  if (len > 0 && len < size)
    snprintf (text + len, size - len, " also on 16 neighbouring grays");
}

/* "window 5, levels 16, amount 1" (with lists, "window 3/5/7, levels
 * 16"): the parameters that the timed operations read, or "" when none
 * reads any. */
static void
describe_params (const EsBenchOptions *options, char *text, size_t size)
{
  unsigned used = 0;
  size_t len = 0;

  for (int i = 0; i < options->n_ops; i++)
    used |= es_op_info (options->ops[i])->params;
  text[0] = '\0';
  for (int id = 0; id < ES_N_PARAMS && len < size; id++)
    if (used & ES_PARAM_BIT (id))
      {
        int n = options->n_values[id];

        len += (size_t) snprintf (text + len, size - len, "%s%s ", len ? ", " : "", es_param ((EsParamId) id)->name);
        for (int v = 0; v < (n > 0 ? n : 1) && len < size; v++)
          {
            char value[32];

            format_param (value, sizeof value, (EsParamId) id,
                          n > 0 ? options->values[id][v] : es_job_get_param (&options->job, (EsParamId) id));
            len += (size_t) snprintf (text + len, size - len, "%s%s", v ? "/" : "", value);
          }
      }
}

/* Between host and device, the image goes up once and the result down once. */
static void
transfer_bytes (const EsJob *job, const EsImage *image, size_t *in, size_t *out)
{
  size_t n = (size_t) image->width * (size_t) image->height;

  *in = n * es_format_size (image->format);
  *out = n * es_format_size (es_job_output_format (job, image->format));
}

/* The baseline of the speed-up column: the naive variant by name, else the
 * first listed. */
static const EsVariant *
naive_variant (const EsVariant *variants, size_t n)
{
  static const char *const names[] = { "naive", "global", "global-atomics" };

  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    for (size_t i = 0; i < n; i++)
      if (strcmp (variants[i].id, names[k]) == 0)
        return &variants[i];
  return n ? &variants[0] : NULL;
}

static bool
measure (BenchBackend *b, const EsJob *job, const EsImage *in, EsImage *out, Measure *m, EsError *error)
{
  if (!es_compare_measure (b->engine, job, in, b->repeats, out, &m->timing, error))
    return false;
  m->kernel_ms = m->timing.kernel_ms;
  m->wall_ms = m->timing.wall_ms;
  return true;
}

static void
format_number (char *buffer, size_t size, const char *format, double value)
{
  if (isfinite (value))
    snprintf (buffer, size, format, value);
  else
    snprintf (buffer, size, "-");
}

static void
csv_number (FILE *csv, const char *format, double value)
{
  fputc (',', csv);
  if (isfinite (value))
    fprintf (csv, format, value);
}

static void
print_row (const BenchRow *row, FILE *csv)
{
  double pixels = (double) row->size * row->size;
  double mpx = pixels / 1e6 / (row->m.kernel_ms / 1e3);
  bool cuda = row->backend->choice == ES_BACKEND_CUDA;
  double multiple = cuda ? row->m.kernel_ms / row->floor_ms : NAN;
  double gbs = cuda ? (double) row->bytes / 1e6 / row->m.kernel_ms : NAN;
  double speedup = cuda ? row->naive_ms / row->m.kernel_ms : NAN;
  double e2e = cuda ? row->m.wall_ms / row->xfer_ms : NAN;
  char floor_text[32], multiple_text[32], gbs_text[32], speedup_text[32], xfer_text[32], e2e_text[32];

  format_number (floor_text, sizeof floor_text, "%.3f", cuda ? row->floor_ms : NAN);
  format_number (multiple_text, sizeof multiple_text, "%.2fx", multiple);
  format_number (gbs_text, sizeof gbs_text, "%.1f", gbs);
  format_number (speedup_text, sizeof speedup_text, "%.2fx", speedup);
  format_number (xfer_text, sizeof xfer_text, "%.3f", cuda ? row->xfer_ms : NAN);
  format_number (e2e_text, sizeof e2e_text, "%.2fx", e2e);
  printf ("%-9s %6d %-8s %-7s %-22s %7d %10.3f %10.3f %10.1f %9s %8s %8s %8s %9s %8s", es_op_name (row->op), row->size,
          row->image, es_backend_name (row->backend->choice), row->variant, row->backend->repeats, row->m.kernel_ms,
          row->m.wall_ms, mpx, floor_text, multiple_text, gbs_text, speedup_text, xfer_text, e2e_text);
  if (row->metrics)
    {
      putchar (' ');
      es_cli_metrics_columns (stdout, &row->m.timing.metrics);
    }
  print_params (row->job, stdout, NULL);
  putchar ('\n');
  if (row->metrics)
    es_cli_metrics_counters (stdout, &row->m.timing.metrics);
  fflush (stdout);

  if (csv)
    {
      fprintf (csv, "%s,%d,%s,%s,%d", es_op_name (row->op), row->size, es_backend_name (row->backend->choice),
               row->variant, row->backend->repeats);
      csv_number (csv, "%.4f", row->m.kernel_ms);
      csv_number (csv, "%.4f", row->m.wall_ms);
      csv_number (csv, "%.2f", mpx);
      csv_number (csv, "%.4f", cuda ? row->floor_ms : NAN);
      csv_number (csv, "%.3f", multiple);
      csv_number (csv, "%.2f", gbs);
      csv_number (csv, "%.3f", speedup);
      csv_number (csv, "%.4f", cuda ? row->xfer_ms : NAN);
      csv_number (csv, "%.3f", e2e);
      fprintf (csv, ",%s", row->image);
      print_params (row->job, NULL, csv);
      fputc ('\n', csv);
    }
}

/* Every CUDA variant must give the CPU's result within its operation's
 * tolerance (EsOpInfo.tolerance; 0 is bit for bit). This also covers the
 * transfer paths that the tests' small pageable images never take at this
 * size. */
static bool
agrees (EsOp op, const EsImage *got, const EsImage *expected, EsError *error)
{
  double tolerance = es_op_info (op)->tolerance;

  for (int y = 0; y < got->height; y++)
    {
      const void *g = es_image_row (got, y), *e = es_image_row (expected, y);
      for (int x = 0; x < got->width; x++)
        {
          bool same = got->format == ES_FORMAT_F32
                        ? fabsf (((const float *) g)[x] - ((const float *) e)[x]) <= (float) tolerance
                        : abs (((const uint8_t *) g)[x] - ((const uint8_t *) e)[x]) <= tolerance;
          if (!same)
            return es_error_set (error, ES_ERROR_COMPUTE, "differs from the CPU result at (%d,%d)", x, y);
        }
    }
  return true;
}

static int
worse (int a, int b)
{
  return a > b ? a : b;
}

static int
report (const char *what, int size, const char *variant, const EsError *error)
{
  char subject[128];

  snprintf (subject, sizeof subject, "bench %s %dx%d %s", what, size, size, variant);
  return es_cli_report_error (subject, error);
}

/* After a sticky device error CUDA stays off for the process and later
 * rows would time the CPU under a CUDA label: stop timing CUDA. */
static bool
cuda_broken (BenchBackend *b)
{
  if (es_engine_cuda_reason (b->engine)[0] != '\0')
    b->usable = false;
  return !b->usable;
}

/* The pageable lesson moves plain malloc'd images; every other variant the
 * page-locked ones, as es_run's own outputs are. */
static bool
measure_variant (BenchBackend *b, const EsJob *job, const BenchInput *input, Measure *m, EsError *error)
{
  bool pageable = strcmp (job->variant, "pageable-transfers") == 0;
  EsImage *out = pageable ? &b->out_pageable : &b->out;
  const EsImage *in = pageable ? input->pageable : input->in;
  EsFormat format = es_job_output_format (job, in->format);

  /* es_run keeps an output of the right shape, and would allocate a
   * page-locked one. */
  if (pageable && (out->width != in->width || out->height != in->height || out->format != format))
    {
      es_image_clear (out);
      if (!es_image_alloc (out, in->width, in->height, format, es_format_depth (format), error))
        return false;
    }
  if (!measure (b, job, in, out, m, error))
    return false;
  return input->expected == NULL || agrees (job->op, out, input->expected, error);
}

/* The CUDA rows of one operation, size and image: the copy and transfer
 * floors, the naive baseline, then each variant asked for. */
static int
bench_cuda (BenchBackend *b, const EsBenchOptions *options, EsJob *job, const BenchInput *input, FILE *csv)
{
  const EsImage *in = input->in;
  size_t n_variants, in_bytes, out_bytes, up_bytes, down_bytes;
  const EsVariant *variants = es_variants (job->op, &n_variants);
  const EsVariant *naive = naive_variant (variants, n_variants);
  const char *op = es_op_name (job->op);
  BenchRow row = { .op = job->op,
                   .job = job,
                   .size = in->width,
                   .image = input->name,
                   .backend = b,
                   .naive_ms = NAN,
                   .metrics = options->metrics };
  Measure naive_m = { .kernel_ms = NAN, .wall_ms = NAN };
  EsError error;
  int status = ES_EXIT_OK;

  es_compare_op_bytes (job, (size_t) in->width * in->height, &in_bytes, &out_bytes);
  row.bytes = in_bytes + out_bytes;
  transfer_bytes (job, in, &up_bytes, &down_bytes);

  es_error_clear (&error);
  if (!es_engine_floor (b->engine, ES_FLOOR_COPY, in_bytes, out_bytes, b->repeats, &row.floor_ms, &error))
    {
      status = report (op, in->width, "copy floor", &error);
      row.floor_ms = NAN;
    }
  es_error_clear (&error);
  if (!es_engine_floor (b->engine, ES_FLOOR_TRANSFER, up_bytes, down_bytes, b->repeats, &row.xfer_ms, &error))
    {
      status = worse (status, report (op, in->width, "transfer floor", &error));
      row.xfer_ms = NAN;
    }

  if (naive)
    {
      job->variant = naive->id;
      es_error_clear (&error);
      if (measure_variant (b, job, input, &naive_m, &error))
        row.naive_ms = naive_m.kernel_ms;
      else
        {
          status = worse (status, report (op, in->width, naive->id, &error));
          if (cuda_broken (b))
            return status;
        }
    }

  for (size_t i = 0; i < n_variants; i++)
    {
      const EsVariant *v = &variants[i];

      if (options->variant && strcmp (options->variant, v->id) != 0)
        continue;
      /* A variant that cannot compute the job would time the one the
       * engine runs in its place (the volume variants on a 2-D window). */
      const char *why_not = es_variant_unsupported (v, job);
      if (why_not != NULL)
        {
          printf ("# %s %s: not timed: %s\n", op, v->id, _ (why_not));
          continue;
        }
      row.variant = v->id;
      if (v == naive && !isfinite (row.naive_ms))
        continue; /* its failure is reported above */
      if (v == naive)
        row.m = naive_m; /* measured above for the speed-up column */
      else
        {
          job->variant = v->id;
          es_error_clear (&error);
          if (!measure_variant (b, job, input, &row.m, &error))
            {
              status = worse (status, report (op, in->width, v->id, &error));
              if (cuda_broken (b))
                return status;
              continue;
            }
        }
      print_row (&row, csv);
    }
  return status;
}

/* The table's heading: the images, the engines and the columns. */
static void
print_heading (const EsBenchOptions *options, const BenchBackend *cpu, const BenchBackend *cuda, const char *cuda_note)
{
  char low_contrast[128], params[128];

  describe_low_contrast (options, low_contrast, sizeof low_contrast);
  describe_params (options, params, sizeof params);
  printf ("# random 8-bit images (seed 0x%llx%s)%s%s; medians after a warm-up\n", BENCH_SEED, low_contrast,
          params[0] ? ", " : "", params);
  printf ("# x floor: kernel / copy kernel of the same bytes; e2e x: wall / page-locked upload + download\n");
  if (cpu->engine)
    printf ("# cpu:  %s\n", es_engine_describe (cpu->engine));
  if (options->backend != ES_BACKEND_CPU)
    printf ("# cuda: %s\n", cuda->engine ? es_engine_describe (cuda->engine) : cuda_note);
  printf ("%-9s %6s %-8s %-7s %-22s %7s %10s %10s %10s %9s %8s %8s %8s %9s %8s", "op", "size", "image", "backend",
          "variant", "repeats", "kernel ms", "wall ms", "Mpx/s", "floor ms", "x floor", "GB/s", "speed-up", "xfer ms",
          "e2e x");
  if (options->metrics)
    {
      putchar (' ');
      es_cli_metrics_heading (stdout);
    }
  print_param_headings (stdout, NULL);
  putchar ('\n');
  fflush (stdout);
}

/* Every combination of the options for one operation on one random image
 * (kind 1: the low-contrast one), on the CPU and every CUDA variant. */
static int
bench_image (const EsBenchOptions *options, EsOp op_id, int size, int kind, BenchBackend *cpu, BenchBackend *cuda,
             FILE *csv)
{
  const char *op = es_op_name (op_id);
  EsImage in = { 0 }, pageable = { 0 };
  /* Where CUDA runs the bench's image is page-locked, as the window's
   * are: uploads then need no staging copy. */
  EsEngine *owner = cuda->engine ? cuda->engine : cpu->engine;
  EsError error;
  int status = ES_EXIT_OK;

  es_error_clear (&error);
  if (!es_engine_image_alloc (owner, &in, size, size, ES_FORMAT_U8, 8, &error)
      || !es_image_alloc (&pageable, size, size, ES_FORMAT_U8, 8, &error))
    {
      es_image_clear (&in);
      return report (op, size, "input", &error);
    }
  fill_random (&in, BENCH_SEED ^ (unsigned long long) size, kind ? 120 : 1, kind ? 16 : 255);
  memcpy (pageable.pixels, in.pixels, (size_t) size * size);

  /* Every combination on the same pixels. */
  for (int c = 0; c < combinations (options, op_id); c++)
    {
      EsJob job = bench_job (options, op_id, c);
      BenchInput input = { kind ? "16-level" : "random", &in, &pageable, NULL };

      es_error_clear (&error);
      if (!es_job_validate (&job, &error))
        {
          status = worse (status, report (op, size, "job", &error));
          continue;
        }
      if (cpu->engine)
        {
          BenchRow row = { .op = job.op,
                           .job = &job,
                           .size = size,
                           .image = input.name,
                           .backend = cpu,
                           .variant = "cpu",
                           .floor_ms = NAN,
                           .xfer_ms = NAN,
                           .naive_ms = NAN,
                           .metrics = options->metrics };
          if (measure (cpu, &job, &in, &cpu->out, &row.m, &error))
            {
              print_row (&row, csv);
              input.expected = &cpu->out;
            }
          else
            status = worse (status, report (op, size, "cpu", &error));
        }
      if (cuda->engine && cuda->usable)
        status = worse (status, bench_cuda (cuda, options, &job, &input, csv));
    }
  es_image_clear (&in);
  es_image_clear (&pageable);
  return status;
}

int
es_bench_run (const EsBenchOptions *options)
{
  BenchBackend cpu = { .choice = ES_BACKEND_CPU }, cuda = { .choice = ES_BACKEND_CUDA };
  char cuda_note[600] = "";
  EsAtomicFile *csv_file = NULL;
  FILE *csv = NULL;
  EsError error;
  int status = ES_EXIT_OK;

  es_error_clear (&error);
  if (options->backend != ES_BACKEND_CUDA)
    {
      cpu.engine = es_engine_new (ES_BACKEND_CPU, &error);
      if (!cpu.engine)
        return es_cli_report_error ("bench", &error);
      es_engine_set_counters (cpu.engine, options->counters);
      cpu.repeats = options->repeats ? options->repeats : 5;
      cpu.usable = true;
    }
  if (options->backend != ES_BACKEND_CPU)
    {
      cuda.engine = es_compare_engine_new (ES_BACKEND_CUDA, &error);
      if (!cuda.engine && options->backend == ES_BACKEND_CUDA)
        return es_cli_report_error ("bench", &error);
      if (cuda.engine)
        {
          es_engine_set_counters (cuda.engine, options->counters);
          cuda.repeats = options->repeats ? options->repeats : 20;
          cuda.usable = true;
        }
      else
        snprintf (cuda_note, sizeof cuda_note, "not used (%s)", error.message);
    }

  if (options->csv_path)
    {
      es_error_clear (&error);
      csv_file = es_atomic_file_open (options->csv_path, &error);
      if (!csv_file)
        {
          status = es_cli_report_error (options->csv_path, &error);
          goto out;
        }
      csv = es_atomic_file_stream (csv_file);
      fputs ("op,size,backend,variant,repeats,kernel_ms,wall_ms,mpx_per_s,floor_ms,"
             "floor_multiple,gb_per_s,speedup_vs_naive,transfer_floor_ms,end_to_end_multiple,image",
             csv);
      print_param_headings (NULL, csv);
      fputc ('\n', csv);
    }

  /* The shares need the peaks: measured once, before the first row. */
  if (options->metrics)
    {
      if (cpu.engine)
        es_cli_metrics_measure_peak (cpu.engine);
      if (cuda.engine)
        es_cli_metrics_measure_peak (cuda.engine);
    }
  print_heading (options, &cpu, &cuda, cuda_note);
  for (int o = 0; o < options->n_ops; o++)
    for (int s = 0; s < options->n_sizes; s++)
      for (int kind = 0; kind < (low_contrast_too (options->ops[o]) ? 2 : 1); kind++)
        status = worse (status, bench_image (options, options->ops[o], options->sizes[s], kind, &cpu, &cuda, csv));

  if (csv_file)
    {
      es_error_clear (&error);
      if (!es_atomic_file_commit (csv_file, &error))
        status = worse (status, es_cli_report_error (options->csv_path, &error));
    }

out:
  es_image_clear (&cpu.out);
  es_image_clear (&cuda.out);
  es_image_clear (&cuda.out_pageable);
  if (cpu.engine)
    es_engine_free (cpu.engine);
  if (cuda.engine)
    es_engine_free (cuda.engine);
  return status;
}

static void
print_compare_row (const EsJob *job, const EsCompareRow *row, double floor_ms, bool metrics, FILE *csv)
{
  EsOp op = job->op;
  char floor_text[32] = "-", multiple_text[32] = "-";

  if (row->unsupported != NULL)
    {
      printf ("%-9s %-7s %-22s not timed: %s\n", es_op_name (op), es_backend_name (row->backend), row->id,
              row->unsupported);
      return;
    }
  if (isfinite (floor_ms))
    snprintf (floor_text, sizeof floor_text, "%.4f", floor_ms);
  if (isfinite (row->floor_multiple))
    snprintf (multiple_text, sizeof multiple_text, "%.2fx", row->floor_multiple);
  /* The parameters go before the label, which is free text. */
  printf ("%-9s %-7s %-22s %7d %10.4f %10.4f %9s %8s", es_op_name (op), es_backend_name (row->backend), row->id,
          row->repeats, row->kernel_ms, row->wall_ms, floor_text, multiple_text);
  if (metrics)
    {
      putchar (' ');
      es_cli_metrics_columns (stdout, &row->metrics);
    }
  print_params (job, stdout, NULL);
  printf ("  %s%s\n", row->label, row->is_default ? " (default)" : "");
  if (metrics)
    es_cli_metrics_counters (stdout, &row->metrics);
  if (csv)
    {
      fprintf (csv, "%s,%s,%s,%d,%.4f,%.4f,", es_op_name (op), es_backend_name (row->backend), row->id, row->repeats,
               row->kernel_ms, row->wall_ms);
      if (isfinite (floor_ms))
        fprintf (csv, "%.4f", floor_ms);
      fputc (',', csv);
      if (isfinite (row->floor_multiple))
        fprintf (csv, "%.3f", row->floor_multiple);
      fprintf (csv, ",\"%s\"", row->label);
      print_params (job, NULL, csv);
      fputc ('\n', csv);
    }
}

/* The entropy definition the entropy rows time, where it takes options
 * beyond the parameters (not a plain square, whose side they give). */
static void
print_definition (const EsBenchOptions *options)
{
  EsJob job = options->job;
  char definition[192], given[256];
  bool entropy = false;

  for (int i = 0; i < options->n_ops; i++)
    entropy = entropy || options->ops[i] == ES_OP_ENTROPY;
  job.op = ES_OP_ENTROPY;
  if (!entropy || (es_job_format_definition_options (&job, given, sizeof given) && given[0] == '\0'))
    return;
  es_job_describe_definition (&job, "nats", definition, sizeof definition);
  printf ("# entropy definition: %s\n", definition);
}

int
es_bench_image_run (const EsBenchOptions *options)
{
  int repeats = options->repeats ? options->repeats : ES_COMPARE_DEFAULT_REPEATS;
  int load_levels = options->job.levels;
  EsAtomicFile *csv_file = NULL;
  EsEngine *engine = NULL;
  EsImage image = { 0 };
  EsPages *pages;
  EsError error;
  FILE *csv = NULL;
  char params[128], page[48] = "", notice[256] = "";
  int status = ES_EXIT_OK;

  es_error_clear (&error);
  /* A text matrix holds levels below the count it is read with: the
   * largest one asked for. */
  for (int v = 0; v < options->n_values[ES_PARAM_LEVELS]; v++)
    if (options->values[ES_PARAM_LEVELS][v] > load_levels)
      load_levels = (int) options->values[ES_PARAM_LEVELS][v];
  /* A multi-page file is timed on its first page, as the header says,
   * or whole for a 3-D window (or --volume). */
  pages = es_pages_open (options->image, load_levels, &error);
  if (pages == NULL
      || !(options->volume
             ? es_pages_load_volume (pages, &options->volume_choice, &image, notice, sizeof notice, &error)
             : es_pages_load (pages, 0, &image, &error)))
    {
      es_pages_close (pages);
      return es_cli_report_error (options->image, &error);
    }
  if (options->volume)
    snprintf (page, sizeof page, "%d planes of ", es_image_planes (&image));
  else if (es_pages_count (pages) > 1)
    snprintf (page, sizeof page, "page 1 of %d, ", es_pages_count (pages));
  es_pages_close (pages);
  /* A mask of another size would fail every entropy row: said once,
   * before the table, as the entropy command says it. */
  EsJob entropy = options->job;
  entropy.op = ES_OP_ENTROPY;
  if (!es_cli_check_mask (options->mask, &entropy, options->image, &image, &error))
    {
      status = es_cli_report_error (options->mask, &error);
      goto out;
    }
  engine = es_compare_engine_new (options->backend, &error);
  if (!engine)
    {
      status = es_cli_report_error ("bench", &error);
      goto out;
    }
  es_engine_set_counters (engine, options->counters);
  if (options->csv_path)
    {
      csv_file = es_atomic_file_open (options->csv_path, &error);
      if (!csv_file)
        {
          status = es_cli_report_error (options->csv_path, &error);
          goto out;
        }
      csv = es_atomic_file_stream (csv_file);
      fputs ("op,backend,variant,repeats,kernel_ms,wall_ms,floor_ms,floor_multiple,label", csv);
      print_param_headings (NULL, csv);
      fputc ('\n', csv);
    }

  describe_params (options, params, sizeof params);
  printf ("# %s: %s%dx%d, %d-bit%s; %s%sa warm-up run, then medians of %d runs\n", es_cli_base_name (options->image),
          page, image.width, image.height, image.depth, image.levels ? " levels (text matrix)" : "", params,
          params[0] ? "; " : "", repeats);
  print_definition (options);
  printf ("# engine: %s\n", es_engine_describe (engine));
  if (es_engine_backend (engine) != ES_BACKEND_CUDA)
    printf ("# kernel variants and the copy floor need CUDA: %s\n",
            es_engine_cuda_reason (engine)[0] ? es_engine_cuda_reason (engine) : "the CPU backend was asked for");
  if (options->metrics)
    es_cli_metrics_measure_peak (engine);
  printf ("%-9s %-7s %-22s %7s %10s %10s %9s %8s", "op", "backend", "variant", "repeats", "kernel ms", "wall ms",
          "floor ms", "x floor");
  if (options->metrics)
    {
      putchar (' ');
      es_cli_metrics_heading (stdout);
    }
  print_param_headings (stdout, NULL);
  printf ("  label\n");
  fflush (stdout);

  for (int i = 0; i < options->n_ops; i++)
    for (int c = 0; c < combinations (options, options->ops[i]); c++)
      {
        EsJob job = bench_job (options, options->ops[i], c);
        EsCompareRow *rows;
        size_t n_rows;
        double floor_ms;

        es_error_clear (&error);
        if (!es_compare_variants (engine, &image, &job, repeats, NULL, NULL, &rows, &n_rows, &floor_ms, &error))
          {
            char subject[64];

            snprintf (subject, sizeof subject, "bench %s", es_op_name (job.op));
            status = worse (status, es_cli_report_error (subject, &error));
            continue;
          }
        for (size_t r = 0; r < n_rows; r++)
          print_compare_row (&job, &rows[r], floor_ms, options->metrics, csv);
        fflush (stdout);
        free (rows);
      }

  if (csv_file)
    {
      es_error_clear (&error);
      if (!es_atomic_file_commit (csv_file, &error))
        status = worse (status, es_cli_report_error (options->csv_path, &error));
      csv_file = NULL;
    }
out:
  if (csv_file)
    es_atomic_file_abort (csv_file);
  if (engine)
    es_engine_free (engine);
  es_image_clear (&image);
  return status;
}
