/* SPDX-License-Identifier: MIT */
/* Every operation on every backend and kernel variant against the slow
 * references, on random images of awkward sizes; and the engine's checks.
 * The CPU backend's bands and entropy methods: test-compute-cpu.c. */
#include <omp.h>

#include "test-compute-common.h"
#include "test-cuda-engine.h"

static const char *const pattern_names[N_PATTERNS] = { "random", "blocks", "low-contrast", "constant" };

static const int window_choices[] = { 3, 5, 31, 0 }; /* 0: random */

/* Large windows on large images only slow the reference down; the small
 * sizes cover windows wider than the image. */
static int
pick_window (int i, int width, int height)
{
  int window = window_choices[i % 4];
  if (window == 0)
    window = random_odd_window ();
  if ((long) width * height > 100000 && window > 11)
    window = 3 + 2 * random_int (0, 4);
  return window;
}

static void
test_operations (Backend *backends, int n_backends)
{
  int sizes[][2] = {
    { 1, 1 },     { 1, 0 },   { 0, 1 },    { 2, 2 },   { 7, 13 },    { 31, 97 },
    { 127, 129 }, { 33, 17 }, { 257, 65 }, { 513, 3 }, { 601, 401 }, { 0, 0 },
  };
  int n_sizes = (int) (sizeof sizes / sizeof sizes[0]);
  int counter = random_int (0, 59);

  /* 0 stands for a random length: 1×N, N×1 and one ~600×400 image. */
  sizes[1][1] = random_int (2, 300);
  sizes[2][0] = random_int (2, 300);
  sizes[11][0] = random_int (560, 640);
  sizes[11][1] = random_int (380, 420);

  for (int s = 0; s < n_sizes; s++)
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
      for (int p = 0; p < N_PATTERNS; p++)
        {
          int w = sizes[s][0], h = sizes[s][1];
          const Kind *kind = &kinds[k];
          /* A levels image holds levels for image_levels, which its
           * quantize and entropy jobs must then use. */
          int image_levels = pick_levels (counter);
          EsImage in;
          char what[200];

          if (!make_image (&in, w, h, kind, image_levels, (Pattern) p))
            {
              tap_ok (false, "%d×%d %s: no memory for the input", w, h, kind->name);
              continue;
            }

          {
            EsJob job = ES_JOB_INIT (ES_OP_QUANTIZE);
            job.levels = kind->levels ? image_levels : pick_levels (counter + 1);
            snprintf (what, sizeof what, "quantize %d×%d %s %s L=%d", w, h, kind->name, pattern_names[p], job.levels);
            check (backends, n_backends, &job, &in, what);
          }

          for (int e = 0; e < 2; e++)
            {
              /* The defaults (5×5, 16 levels) first, then random choices. */
              EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
              if (e == 1)
                {
                  job.window = pick_window (counter, w, h);
                  job.levels = pick_levels (counter + 2);
                }
              if (kind->levels)
                job.levels = image_levels;
              snprintf (what, sizeof what, "entropy %d×%d %s %s window=%d L=%d", w, h, kind->name, pattern_names[p],
                        job.window, job.levels);
              check (backends, n_backends, &job, &in, what);
            }

          {
            EsJob job = ES_JOB_INIT (ES_OP_EQUALIZE);
            snprintf (what, sizeof what, "equalize %d×%d %s %s", w, h, kind->name, pattern_names[p]);
            check (backends, n_backends, &job, &in, what);
          }

          for (int a = 0; a < 2; a++)
            {
              EsJob job = ES_JOB_INIT (ES_OP_SHARPEN);
              job.amount = pick_amount (counter + 3 * a);
              snprintf (what, sizeof what, "sharpen %d×%d %s %s amount=%g", w, h, kind->name, pattern_names[p],
                        job.amount);
              check (backends, n_backends, &job, &in, what);
            }

          {
            EsJob job = ES_JOB_INIT (ES_OP_CLAHE);
            job.clip = pick_clip (counter);
            pick_tiles (counter / 5 + counter, in.format, &job);
            snprintf (what, sizeof what, "clahe %d×%d %s %s clip=%g tiles=%dx%d", w, h, kind->name, pattern_names[p],
                      job.clip, job.tile_columns, job.tile_rows);
            check (backends, n_backends, &job, &in, what);
          }

          es_image_clear (&in);
          counter++;
        }
}

static void
test_validation (void)
{
  static const int bad_windows[] = { -1, 0, 1, 2, 4, 30, 32, 257 };
  static const int bad_levels[] = { -1, 0, 1, 65537, 100000 };
  static const float bad_amounts[] = { -0.5f, -1e-30f, -INFINITY, NAN, 10.01f, 1e6f, INFINITY };

  for (size_t i = 0; i < sizeof bad_windows / sizeof bad_windows[0]; i++)
    {
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      EsError error = { 0 };
      job.window = bad_windows[i];
      tap_ok (!es_job_validate (&job, &error) && error.code == ES_ERROR_INVALID && error.message[0],
              "validate rejects entropy window %d (%s)", bad_windows[i], error.message);
    }
  for (size_t i = 0; i < sizeof bad_levels / sizeof bad_levels[0]; i++)
    for (EsOp op = ES_OP_QUANTIZE; op <= ES_OP_ENTROPY; op++)
      {
        EsJob job = ES_JOB_INIT (op);
        EsError error = { 0 };
        job.levels = bad_levels[i];
        tap_ok (!es_job_validate (&job, &error) && error.code == ES_ERROR_INVALID, "validate rejects %s levels %d (%s)",
                es_op_name (op), bad_levels[i], error.message);
      }
  for (size_t i = 0; i < sizeof bad_amounts / sizeof bad_amounts[0]; i++)
    {
      EsJob job = ES_JOB_INIT (ES_OP_SHARPEN);
      EsError error = { 0 };
      job.amount = bad_amounts[i];
      tap_ok (!es_job_validate (&job, &error) && error.code == ES_ERROR_INVALID,
              "validate rejects sharpen amount %g (%s)", bad_amounts[i], error.message);
    }

  for (EsOp op = 0; op < ES_N_OPS; op++)
    {
      EsJob job = ES_JOB_INIT (op);
      EsError error = { 0 };
      tap_ok (es_job_validate (&job, &error), "validate accepts the default %s job", es_op_name (op));
    }
  {
    static const int edges[][2] = { { 3, 2 }, { 31, 256 }, { 17, 17 } };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
      {
        EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
        EsError error = { 0 };
        job.window = edges[i][0];
        job.levels = edges[i][1];
        tap_ok (es_job_validate (&job, &error), "validate accepts entropy window %d, levels %d (%s)", job.window,
                job.levels, error.message);
      }
  }
  {
    EsJob job = ES_JOB_INIT (ES_OP_SHARPEN);
    EsError error = { 0 };
    job.amount = 0.0f;
    tap_ok (es_job_validate (&job, &error), "validate accepts sharpen amount 0");
    job.amount = (float) ES_AMOUNT_MAX;
    tap_ok (es_job_validate (&job, &error), "validate accepts sharpen amount %g", ES_AMOUNT_MAX);
  }
  {
    /* An op ignores the parameters it does not use, whatever their values. */
    EsJob job = ES_JOB_INIT (ES_OP_EQUALIZE);
    EsError error = { 0 };
    job.window = 4;
    job.levels = 0;
    job.amount = NAN;
    tap_ok (es_job_validate (&job, &error), "validate ignores parameters equalize does not use");
  }
}

/* The tables every layer reads: complete rows, defaults inside their ranges,
 * one default variant per operation with a launcher each. */
static void
test_tables (void)
{
  const EsJob defaults = ES_JOB_INIT (ES_OP_ENTROPY);

  for (int i = 0; i < ES_N_PARAMS; i++)
    {
      const EsParam *param = es_param ((EsParamId) i);
      EsParamId found;
      EsJob job = defaults;
      EsError error = { 0 };

      tap_ok (param != NULL && param->id == (EsParamId) i && param->name && param->title && param->description
                && param->metavar && param->min < param->max && param->step > 0,
              "parameter %d has a complete row", i);
      tap_ok (es_param_from_name (param->name, &found) && found == (EsParamId) i, "parameter %s is found by name",
              param->name);
      tap_ok (es_param_check (param, param->default_value, &error) && es_param_check (param, param->min, &error)
                && es_param_check (param, param->max, &error),
              "%s: the default and both limits are allowed (%s)", param->name, error.message);
      tap_ok (!es_param_check (param, param->min - param->step, &error)
                && !es_param_check (param, param->max + param->step, &error),
              "%s: one step beyond either limit is refused (%s)", param->name, error.message);
      tap_ok (es_job_get_param (&defaults, (EsParamId) i) == (double) (float) param->default_value,
              "%s: ES_JOB_INIT holds the table's default %g", param->name, param->default_value);
      es_job_set_param (&job, (EsParamId) i, param->max);
      tap_ok (es_job_get_param (&job, (EsParamId) i) == (double) (float) param->max,
              "%s: set and get address the same job field", param->name);
    }

  for (int op = 0; op < ES_N_OPS; op++)
    {
      const EsOpInfo *info = es_op_info ((EsOp) op);
      EsJob job = ES_JOB_INIT ((EsOp) op);
      EsOp found;
      size_t n;
      const EsVariant *variants = es_variants ((EsOp) op, &n);
      int defaults_found = 0;

      tap_ok (info != NULL && info->op == (EsOp) op && info->name && info->title && info->result_title && info->summary
                && info->units && info->colormap && info->halo && info->range_max && info->range_text && info->cpu
                && info->cpu_pixel_ns && info->tolerance >= 0 && info->input_reads >= 1
                && (info->params & ~((1u << ES_N_PARAMS) - 1)) == 0,
              "operation %d has a complete row", op);
      tap_ok (es_op_from_name (info->name, &found) && found == (EsOp) op, "operation %s is found by name", info->name);
      tap_ok ((info->cuda != NULL) == es_engine_cuda_compiled (), "%s: a CUDA entry exactly in a CUDA build",
              info->name);
      tap_ok (info->halo (&job) >= 0 && es_job_range_max (&job, es_job_output_format (&job, ES_FORMAT_U8)) > 0,
              "%s: halo %d, range 0..%g at the defaults", info->name, info->halo (&job),
              es_job_range_max (&job, es_job_output_format (&job, ES_FORMAT_U8)));
      /* Exports write an integer result's absolute range as its samples:
       * the range fits the result's format, and a gray one spans it, so
       * that a 16-bit CLAHE result is written with its own values. */
      for (int wide = 0; wide < 2; wide++)
        {
          EsFormat result = es_job_output_format (&job, wide ? ES_FORMAT_U16 : ES_FORMAT_U8);
          double full = result == ES_FORMAT_U16 ? 65535.0 : result == ES_FORMAT_U8 ? 255.0 : INFINITY;
          double range_max = es_job_range_max (&job, result);

          tap_ok (range_max <= full && (strcmp (info->units, "gray") != 0 || range_max == full),
                  "%s: a %d-bit input's result spans 0..%g of its format's 0..%g", info->name, wide ? 16 : 8, range_max,
                  full);
        }
      tap_ok (info->cpu_pixel_ns (&job) > 0 && (es_job_params_read (&job) & ~info->params) == 0,
              "%s: %.2g CPU ns a pixel, reads only its own parameters, at the defaults", info->name,
              info->cpu_pixel_ns (&job));
      if (info->cap.why)
        {
          const EsParam *capped = es_param (info->cap.id);
          EsError error = { 0 };

          es_job_set_param (&job, info->cap.id, info->cap.max + 1);
          tap_ok (es_op_uses ((EsOp) op, info->cap.id) && info->cap.max > capped->min && info->cap.max < capped->max
                    && es_op_param_max ((EsOp) op, info->cap.id) == info->cap.max && !es_job_validate (&job, &error)
                    && strstr (error.message, info->cap.why),
                  "%s: %s capped at %g (%s)", info->name, capped->name, info->cap.max, error.message);
          es_error_clear (&error);
          job = (EsJob) ES_JOB_INIT ((EsOp) op);
        }
      for (size_t v = 0; v < n; v++)
        {
          defaults_found += variants[v].is_default;
          tap_ok (variants[v].id && variants[v].label && variants[v].lesson && variants[v].source
                    && (variants[v].launch != NULL
                        || (variants[v].unsupported != NULL && variants[v].unsupported (&job) != NULL)),
                  "%s/%s: a complete variant row (without launch: a volume variant that declines 2-D jobs)", info->name,
                  variants[v].id);
          for (size_t w = 0; w < v; w++)
            if (strcmp (variants[v].id, variants[w].id) == 0)
              tap_ok (false, "%s: variant id %s is unique", info->name, variants[v].id);
        }
      if (n > 0)
        tap_ok (defaults_found == 1 && es_variant_find ((EsOp) op, NULL) != NULL
                  && es_variant_find ((EsOp) op, NULL)->is_default,
                "%s: exactly one default variant among %zu", info->name, n);
    }
}

typedef struct {
  EsControl *control;
  double cancel_at; /* cancels once this fraction is reported; > 1: never */
  double last;      /* the largest fraction reported */
  int reports;
} ProgressProbe;

static void
probe_progress (double done, void *user_data)
{
  ProgressProbe *probe = user_data;

#pragma omp critical(probe)
  {
    probe->reports++;
    if (done > probe->last)
      probe->last = done;
    if (done >= probe->cancel_at)
      es_control_cancel (probe->control);
  }
}

/* Every operation on the CPU reports its progress up to 1, stops with
 * ES_ERROR_CANCELLED when cancelled halfway or before it starts, and runs
 * again normally after es_control_reset. */
static void
test_cancellation (EsEngine *cpu)
{
  const Kind *kind = &kinds[2];

  for (int op = 0; op < ES_N_OPS; op++)
    {
      EsJob job = ES_JOB_INIT ((EsOp) op);
      EsImage in = { 0 }, out = { 0 };
      EsError error = { 0 };
      ProgressProbe probe = { NULL, 2.0, 0.0, 0 };
      bool ok;

      probe.control = es_control_new (probe_progress, &probe);
      if (probe.control == NULL
          || !make_image (&in, random_int (200, 300), random_int (300, 400), kind, 0, PATTERN_RANDOM))
        {
          tap_ok (false, "cancellation test setup");
          es_control_free (probe.control);
          continue;
        }
      ok = es_run_controlled (cpu, &job, &in, &out, NULL, probe.control, &error);
      tap_ok (ok && probe.last == 1.0 && probe.reports > 2, "%s: progress reaches 1 in %d reports (%s)",
              es_op_name (job.op), probe.reports, error.message);

      es_control_reset (probe.control);
      probe = (ProgressProbe){ probe.control, 0.3, 0.0, 0 };
      ok = es_run_controlled (cpu, &job, &in, &out, NULL, probe.control, &error);
      tap_ok (!ok && error.code == ES_ERROR_CANCELLED && probe.last < 1.0,
              "%s: cancelled at 30%% stops with ES_ERROR_CANCELLED at %.0f%% (%s)", es_op_name (job.op),
              100 * probe.last, error.message);

      es_control_reset (probe.control);
      es_error_clear (&error);
      es_control_cancel (probe.control);
      probe.cancel_at = 2.0;
      tap_ok (!es_run_controlled (cpu, &job, &in, &out, NULL, probe.control, &error)
                && error.code == ES_ERROR_CANCELLED,
              "%s: cancelled before it starts, it does not run", es_op_name (job.op));

      es_control_reset (probe.control);
      es_error_clear (&error);
      tap_ok (es_run_controlled (cpu, &job, &in, &out, NULL, probe.control, &error),
              "%s: after a reset the control runs a job again (%s)", es_op_name (job.op), error.message);
      es_control_free (probe.control);
      es_image_clear (&in);
      es_image_clear (&out);
    }
}

/* The halo in the table is what the banded CUDA runs upload around each
 * band: an output row must depend on no input row farther away than that.
 * Randomizing every row beyond the halo of one output row leaves that row
 * as it was. */
static void
test_halo (EsEngine *cpu)
{
  for (int op = 0; op < ES_N_OPS; op++)
    {
      const EsOpInfo *info = es_op_info ((EsOp) op);
      const Kind *kind = &kinds[0];

      /* A whole-image statistic, or tiles placed by the image's size. */
      if (info->whole_image || info->image_grid)
        continue;
      for (int trial = 0; trial < 3; trial++)
        {
          EsJob job = ES_JOB_INIT ((EsOp) op);
          EsImage in = { 0 }, before = { 0 }, after = { 0 };
          EsError error = { 0 };
          int halo, width, height, row;
          bool same = true;

          job.window = random_odd_window ();
          job.levels = random_int (ES_LEVELS_MIN, 64);
          job.amount = (float) random_int (1, 400) / 100.0f;
          halo = info->halo (&job);
          width = random_int (1, 90);
          height = 2 * halo + random_int (3, 40);
          row = random_int (0, height - 1);
          if (!make_image (&in, width, height, kind, 0, PATTERN_RANDOM)
              || !es_run (cpu, &job, &in, &before, NULL, &error))
            {
              tap_ok (false, "%s: halo test setup (%s)", info->name, error.message);
              es_image_clear (&in);
              continue;
            }
          for (int y = 0; y < height; y++)
            if (y < row - halo || y > row + halo)
              for (int x = 0; x < width; x++)
                ((uint8_t *) es_image_row (&in, y))[x] = (uint8_t) random_int (0, 255);
          if (es_run (cpu, &job, &in, &after, NULL, &error))
            same = memcmp (es_image_row (&before, row), es_image_row (&after, row),
                           (size_t) width * es_format_size (before.format))
                   == 0;
          tap_ok (same && error.code == ES_OK,
                  "%s: output row %d of %d×%d depends only on input rows within the halo %d (window %d)", info->name,
                  row, width, height, halo, job.window);
          es_image_clear (&in);
          es_image_clear (&before);
          es_image_clear (&after);
        }
    }
}

static void
test_engine (EsEngine *cpu)
{
  const char *describe = es_engine_describe (cpu);
  EsImage in, out = { 0 };
  EsError error = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

  tap_ok (describe != NULL && strstr (describe, "CPU") != NULL, "CPU engine describes itself: %s",
          describe ? describe : "(null)");
  tap_ok (es_engine_backend (cpu) == ES_BACKEND_CPU, "CPU engine uses the CPU backend");

  /* A text matrix made for 16 levels cannot be read with 8. */
  if (!make_image (&in, 9, 5, &kinds[4], 16, PATTERN_RANDOM))
    {
      tap_ok (false, "mismatched levels: no memory for the input");
      return;
    }
  job.levels = 8;
  tap_ok (!es_run (cpu, &job, &in, &out, NULL, &error) && error.code == ES_ERROR_INVALID,
          "entropy of a 16-level text matrix with 8 levels fails (%s)", error.message);
  error = (EsError){ 0 };
  job.op = ES_OP_QUANTIZE;
  tap_ok (!es_run (cpu, &job, &in, &out, NULL, &error) && error.code == ES_ERROR_INVALID,
          "quantize of a 16-level text matrix with 8 levels fails (%s)", error.message);
  error = (EsError){ 0 };
  job.levels = 16;
  tap_ok (es_run (cpu, &job, &in, &out, NULL, &error), "quantize of it with 16 levels works (%s)", error.message);

  error = (EsError){ 0 };
  job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  job.window = 4;
  tap_ok (!es_run (cpu, &job, &in, &out, NULL, &error) && error.code == ES_ERROR_INVALID,
          "es_run refuses an even window (%s)", error.message);
  es_image_clear (&in);
  es_image_clear (&out);

  /* 10^12 pixels: the memory estimate refuses the job before the output is
   * allocated or a single input pixel is read (the pointer is never used). */
  {
    static uint8_t never_read;
    EsImage huge = { .width = ES_MAX_SIDE,
                     .height = ES_MAX_SIDE,
                     .stride = ES_MAX_SIDE,
                     .format = ES_FORMAT_U8,
                     .depth = 8,
                     .pixels = &never_read };

    error = (EsError){ 0 };
    job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
    tap_ok (!es_run (cpu, &job, &huge, &out, NULL, &error) && error.code == ES_ERROR_NO_MEMORY && out.pixels == NULL,
            "a job larger than the machine's memory is refused up front (%s)", error.message);
  }
}

/* es_image_summarize (the window's source histogram and range) against a
 * pixel-by-pixel count, for every kind of image, awkward sizes and strides,
 * on one thread and on several. */
static void
test_summarize (void)
{
  static const int sizes[][2] = { { 1, 1 }, { 3, 1 }, { 7, 5 }, { 300, 257 }, { 1031, 70 } };
  int failures = 0, checks = 0;

  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int p = 0; p < N_PATTERNS; p++)
        {
          EsImage image;
          uint64_t expected[256] = { 0 }, got[256];
          uint32_t lo = UINT32_MAX, hi = 0, got_lo, got_hi;

          if (!make_image (&image, sizes[s][0], sizes[s][1], &kinds[k], 16, (Pattern) p))
            continue;
          for (int y = 0; y < image.height; y++)
            for (int x = 0; x < image.width; x++)
              {
                const void *row = es_image_row (&image, y);
                uint32_t v = image.format == ES_FORMAT_U16 ? ((const uint16_t *) row)[x] : ((const uint8_t *) row)[x];
                expected[es_sample_to_u8_max (v, es_image_maxval (&image))]++;
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
              }
          for (int threads = 1; threads <= 3; threads += 2)
            {
              omp_set_num_threads (threads);
              es_image_summarize (&image, got, &got_lo, &got_hi);
              checks++;
              if (memcmp (got, expected, sizeof got) != 0 || got_lo != lo || got_hi != hi)
                {
                  failures++;
                  tap_diag ("%s %d×%d pattern %d, %d threads: range %u..%u, expected %u..%u", kinds[k].name,
                            image.width, image.height, p, threads, got_lo, got_hi, lo, hi);
                }
            }
          es_image_clear (&image);
        }
  omp_set_num_threads (omp_get_num_procs ());
  tap_ok (failures == 0 && checks > 0,
          "es_image_summarize: the 8-bit view's histogram and the sample range "
          "equal a pixel-by-pixel count (%d checks)",
          checks);
}

int
main (void)
{
  Backend backends[2] = { { 0 } };
  int n_backends = 0;
  EsError error = { 0 };
  EsEngine *cuda;
  bool require_cuda = test_cuda_required ();

  rng = tap_seed ();

  backends[0].engine = es_engine_new (ES_BACKEND_CPU, &error);
  if (!tap_ok (backends[0].engine != NULL, "CPU engine starts%s%s", error.message[0] ? ": " : "", error.message))
    return tap_done ();
  backends[0].backend = ES_BACKEND_CPU;
  backends[0].name = "cpu";
  n_backends = 1;

  error = (EsError){ 0 };
  cuda = es_engine_new (ES_BACKEND_CUDA, &error);
  if (cuda != NULL)
    {
      backends[n_backends++] = (Backend){ cuda, ES_BACKEND_CUDA, "cuda", { 0 } };
      tap_diag ("CUDA: %s", es_engine_describe (cuda));
    }
  else
    {
      tap_ok (error.code == ES_ERROR_UNAVAILABLE && error.message[0],
              "without a usable CUDA device, a CUDA engine is refused as unavailable: %s", error.message);
      if (require_cuda)
        tap_ok (false, "ES_TEST_REQUIRE_CUDA=1 but CUDA is unavailable: %s", error.message);
    }
  tap_diag ("backends: %s%s (CUDA compiled: %s)", es_engine_describe (backends[0].engine),
            cuda ? " and CUDA with every variant" : " only", es_engine_cuda_compiled () ? "yes" : "no");

  test_validation ();
  test_summarize ();
  test_tables ();
  test_halo (backends[0].engine);
  test_cancellation (backends[0].engine);
  test_engine (backends[0].engine);
  test_operations (backends, n_backends);

  for (int b = 0; b < n_backends; b++)
    {
      es_image_clear (&backends[b].out);
      es_engine_free (backends[b].engine);
    }
  tap_diag ("backends that ran: %s", n_backends == 2 ? "cpu, cuda" : "cpu");
  return tap_done ();
}
