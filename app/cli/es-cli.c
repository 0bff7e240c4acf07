/* SPDX-License-Identifier: MIT */
/* entroscope-cli: its commands, one per operation of compute/es-ops.h (over files), info and bench. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-auto.h"
#include "es-cli-batch.h"
#include "es-cli-files.h"
#include "es-cli.h"
#include "es-definitions.h"
#include "es-load.h"
#include "es-test-hooks.h"

/* A variant must exist for the operation; listing the valid ones saves a
 * trip to 'info'. */
static bool
check_variant (EsOp op, const char *id)
{
  char list[512] = "";
  size_t n, len = 0;
  const EsVariant *variants;

  if (es_variant_find (op, id))
    return true;
  variants = es_variants (op, &n);
  for (size_t i = 0; i < n && len < sizeof list; i++)
    len += (size_t) snprintf (list + len, sizeof list - len, "%s%s", i ? ", " : "", variants[i].id);
  if (n == 0)
    es_cli_usage_error (_ ("--variant=%s: this build has no CUDA kernel variants"), id);
  else
    es_cli_usage_error (_ ("--variant=%s: %s has no such variant (%s)"), id, es_op_name (op), list);
  return false;
}

/* ---- interruption ---- */

/* SIGINT, SIGTERM, SIGHUP and SIGPIPE cancel the job in flight, every
 * atomic file being written and every load waiting on a read (all poll the
 * same control), so that a batch stops within a row of work and leaves
 * neither the current output nor a temporary file. SIGPIPE (a reader of
 * stdout went away) ends the program as quietly as it would have killed it. */
static const int interrupt_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
static EsControl *interrupt;
static volatile sig_atomic_t interrupt_signal;
/* Test hook: ES_CLI_TEST_INTERRUPT=N:F[:SIG] raises SIG (SIGINT by default)
 * once the N-th job (from 1) reaches the fraction F, so that tests
 * interrupt mid-job without relying on timing (ES_INJECT_WRITE_SIGNAL does
 * it mid-write). */
static int interrupt_test_job;
static double interrupt_test_at;
static int interrupt_test_signal = SIGINT;
static int jobs_started;

static void
on_interrupt (int signal_number)
{
  /* The first signal names the interruption. */
  if (interrupt_signal == 0)
    interrupt_signal = signal_number;
  es_control_cancel (interrupt);
}

static const char *
signal_name (int signal_number)
{
  switch (signal_number)
    {
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGPIPE: return "SIGPIPE";
    default: return "SIGINT";
    }
}

static void
on_progress (double done, void *user_data)
{
  (void) user_data;
  /* Every job reports 0 first (es_control_begin). */
  if (done == 0.0)
    jobs_started++;
  if (interrupt_test_job > 0 && jobs_started == interrupt_test_job && done >= interrupt_test_at)
    {
      interrupt_test_job = 0;
      raise (interrupt_test_signal);
    }
}

static void
interrupt_install (void)
{
  struct sigaction action = { 0 };

  interrupt = es_control_new (on_progress, NULL);
  if (interrupt == NULL)
    return;
  if (!es_test_hook_cli_interrupt (&interrupt_test_job, &interrupt_test_at, &interrupt_test_signal))
    interrupt_test_job = 0;
  es_atomic_file_set_interrupt (interrupt);
  es_load_set_interrupt (interrupt);
  /* No SA_RESTART: a blocking open() or read() of a FIFO, or a write() into
   * a full pipe, returns EINTR so that the code waiting in it sees the
   * cancellation. */
  action.sa_handler = on_interrupt;
  sigemptyset (&action.sa_mask);
  for (size_t i = 0; i < sizeof interrupt_signals / sizeof interrupt_signals[0]; i++)
    sigaddset (&action.sa_mask, interrupt_signals[i]);
  for (size_t i = 0; i < sizeof interrupt_signals / sizeof interrupt_signals[0]; i++)
    sigaction (interrupt_signals[i], &action, NULL);
}

/* Set when the program should end without waiting for CUDA to finish opening. */
static bool exit_without_cleanup;

/* The output name that means stdout. */
static bool
is_stdout_name (const char *output)
{
  return output != NULL && strcmp (output, "-") == 0;
}

/* ---- the operations ---- */

static bool
ends_with (const char *text, const char *suffix)
{
  size_t n = strlen (text), m = strlen (suffix);
  return n >= m && strcmp (text + n - m, suffix) == 0;
}

/* DIR/STEM-OP.EXT, where STEM is the input's name without its last
 * extension (a leading dot is part of the name, not an extension). */
static char *
output_path_for (const char *dir, const char *input, EsOp op, const char *ext)
{
  const char *name = es_cli_base_name (input);
  const char *dot = strrchr (name, '.');
  int stem_len = (int) (dot && dot != name ? (size_t) (dot - name) : strlen (name));
  const char *sep = dir && dir[0] && !ends_with (dir, "/") ? "/" : "";
  char *path = NULL;

  if (asprintf (&path, "%s%s%.*s-%s.%s", dir ? dir : "", sep, stem_len, name, es_op_name (op), ext) < 0)
    return NULL;
  return path;
}

static void
free_outputs (char **outputs, int n)
{
  for (int i = 0; outputs != NULL && i < n; i++)
    free (outputs[i]);
  free (outputs);
}

/* Names every output before anything is written, and refuses the whole
 * command when an output is a file it reads, an input, a mask or a
 * footprint (by file identity, so that ./x.png, a hard link or a symbolic
 * link to it all count): a batch must not overwrite what it reads, nor read
 * an output of its own as an input. *to_stdout: the outputs go to stdout
 * (-o -, or a name of it). */
static int
plan_outputs (EsOp op, const EsCliOptions *o, EsExportFormat format, bool to_dir, char **inputs, int n_inputs,
              const EsCliReadFiles *reads, char ***outputs_out, bool *to_stdout)
{
  const char *ext = format == ES_EXPORT_TEXT ? "txt" : format == ES_EXPORT_TIFF ? "tif" : "png";
  char **outputs = calloc ((size_t) n_inputs, sizeof *outputs);
  EsCliFileKey out_key;
  int status = ES_EXIT_OK;

  if (!outputs)
    {
      es_cli_report (NULL, _ ("out of memory"));
      *outputs_out = NULL;
      return ES_EXIT_COMPUTE;
    }
  es_cli_stdout_key (&out_key);
  *to_stdout = is_stdout_name (o->output);
  for (int i = 0; i < n_inputs && status != ES_EXIT_COMPUTE; i++)
    {
      EsCliFileKey output_key;

      outputs[i] = o->output && !to_dir ? strdup (o->output) : output_path_for (o->output, inputs[i], op, ext);
      if (!outputs[i])
        {
          es_cli_report (inputs[i], _ ("out of memory"));
          status = ES_EXIT_COMPUTE;
          break;
        }
      if (is_stdout_name (outputs[i]))
        output_key = out_key;
      else
        es_cli_file_key (outputs[i], &output_key);
      /* -o /dev/stdout, or any other name of what stdout is. */
      if (output_key.exists && out_key.exists && output_key.dev == out_key.dev && output_key.ino == out_key.ino)
        *to_stdout = true;
      for (int j = 0; j < reads->n; j++)
        {
          const EsCliReadFile *read = &reads->files[j];

          if (!es_cli_same_file (&read->key, &output_key))
            continue;
          if (read->role != NULL)
            es_cli_report (read->path, _ ("is the %s and also the output%s; nothing was written"), read->role,
                           is_stdout_name (outputs[i]) ? " (stdout)" : "");
          else if (read->index == i)
            es_cli_report (read->path, _ ("is also the output%s; nothing was written"),
                           is_stdout_name (outputs[i]) ? " (stdout)" : "");
          else
            es_cli_report (read->path, _ ("is also the output of %s; nothing was written"), inputs[i]);
          status = ES_EXIT_DATA;
        }
      if (!is_stdout_name (outputs[i]))
        es_cli_file_key_clear (&output_key);
    }
  if (status != ES_EXIT_OK)
    {
      free_outputs (outputs, n_inputs);
      outputs = NULL;
    }
  *outputs_out = outputs;
  return status;
}

/* -o: a folder (one that exists, or a name ending in /) or a file; several
 * inputs need a folder. Returns the exit status, ES_EXIT_OK to go on. */
static int
check_output_target (const EsCliOptions *o, int n_inputs, bool *to_dir)
{
  struct stat st;

  *to_dir = false;
  if (o->output && !is_stdout_name (o->output))
    *to_dir = ends_with (o->output, "/") || (stat (o->output, &st) == 0 && S_ISDIR (st.st_mode));
  if (n_inputs > 1 && o->output && !*to_dir)
    return es_cli_usage_error (_ ("%d inputs need -o DIR/ (a folder), not the file '%s'"), n_inputs, o->output);
  /* One line for a missing folder rather than one per input. */
  if (*to_dir && stat (o->output, &st) != 0)
    {
      es_cli_report (o->output, "%s", errno == ENOENT || errno == ENOTDIR ? _ ("no such folder") : strerror (errno));
      return ES_EXIT_DATA;
    }
  return ES_EXIT_OK;
}

/* Whether text ends in suffix, whatever the case of its letters (.TIF, .Txt). */
static bool
ends_with_nocase (const char *text, const char *suffix)
{
  size_t n = strlen (text), m = strlen (suffix);
  return n >= m && strcasecmp (text + n - m, suffix) == 0;
}

/* The formats an output name says, by its suffix, in any case of letters. */
static const struct {
  const char *suffix;
  EsExportFormat format;
} output_suffixes[] = {
  { ".png", ES_EXPORT_PNG },
  { ".txt", ES_EXPORT_TEXT },
  { ".tif", ES_EXPORT_TIFF },
  { ".tiff", ES_EXPORT_TIFF },
};

/* Suffixes of image formats this program does not write: a name that asks
 * for one is refused rather than given a PNG under that name. */
static const struct {
  const char *suffix, *name;
} unwritten_suffixes[] = {
  { ".jpg", "JPEG" },    { ".jpeg", "JPEG" }, { ".pgm", "PGM" },   { ".ppm", "PPM" },     { ".pnm", "PNM" },
  { ".pbm", "PBM" },     { ".gif", "GIF" },   { ".bmp", "BMP" },   { ".webp", "WebP" },   { ".jp2", "JPEG 2000" },
  { ".jxl", "JPEG XL" }, { ".heic", "HEIF" }, { ".avif", "AVIF" }, { ".exr", "OpenEXR" },
};

/* --format, else the output's suffix, else PNG; --raw16 and --colorbar
 * where they apply. Returns the exit status, ES_EXIT_OK to go on. */
static int
choose_export_format (const EsCliOptions *o, bool to_dir, EsExportFormat *format)
{
  bool named = o->output && !to_dir && !is_stdout_name (o->output);

  *format = o->format_set ? o->format : ES_EXPORT_PNG;
  for (size_t i = 0; named && !o->format_set && i < sizeof output_suffixes / sizeof output_suffixes[0]; i++)
    if (ends_with_nocase (o->output, output_suffixes[i].suffix))
      *format = output_suffixes[i].format;
  for (size_t i = 0; named && !o->format_set && i < sizeof unwritten_suffixes / sizeof unwritten_suffixes[0]; i++)
    if (ends_with_nocase (o->output, unwritten_suffixes[i].suffix))
      return es_cli_usage_error (_ ("-o %s: %s output is not supported; use .png, .tif or .txt"), o->output,
                                 unwritten_suffixes[i].name);
  if (o->raw16)
    {
      if (*format == ES_EXPORT_TEXT || *format == ES_EXPORT_TIFF)
        return es_cli_usage_error (_ ("--raw16 writes a PNG; it cannot be combined with a %s"),
                                   *format == ES_EXPORT_TEXT ? _ ("text matrix") : "TIFF");
      *format = ES_EXPORT_RAW16;
    }
  if (o->colorbar && *format != ES_EXPORT_PNG)
    return es_cli_usage_error (_ ("--colorbar applies to PNG heatmaps only, not to %s"),
                               *format == ES_EXPORT_TEXT   ? _ ("text matrices")
                               : *format == ES_EXPORT_TIFF ? "TIFF"
                                                           : "--raw16");
  return ES_EXIT_OK;
}

/* The operation's defaults (its colormap among them), then what was given;
 * the entropy definition is added once its files are loaded. */
static void
view_params_from_options (EsOp op, const EsCliOptions *o, EsViewParams *params)
{
  es_view_params_init (params, op);
  for (int id = 0; id < ES_N_PARAMS; id++)
    es_job_set_param (&params->job, (EsParamId) id, es_job_get_param (&o->job, (EsParamId) id));
  params->job.variant = o->variant;
  params->range = o->range;
  params->units = o->units;
  if (o->colormap)
    es_colormap_from_name (o->colormap, &params->colormap, &params->reversed);
}

/* A job that CUDA cannot finish first at any size (the copies cost more
 * than the CPU's work) runs on the CPU without opening the device, whose
 * opening and closing alone would add 60-100 ms to the process. */
static EsEngine *
open_engine (const EsCliOptions *o, const EsJob *job, EsError *error)
{
  if (o->backend == ES_BACKEND_AUTO && job->variant == NULL && es_engine_cuda_compiled ()
      && !es_auto_cuda_can_win (job, 1, es_cpu_thread_count ()))
    return es_engine_new (ES_BACKEND_CPU, error);
  return es_engine_new (o->backend, error);
}

/* After a batch that a signal stopped: one line on what was written (none
 * for SIGPIPE, whose reader is gone) and the signal's exit status. */
static int
report_interrupted (const EsCliBatchOutcome *outcome, int n_inputs)
{
  int sig = interrupt_signal ? interrupt_signal : SIGINT;

  if (sig != SIGPIPE)
    es_cli_report (NULL, _ ("interrupted by %s: %d of %d input%s written%s%s%s"), signal_name (sig), outcome->n_written,
                   n_inputs, n_inputs == 1 ? "" : "s", outcome->cut ? "; " : "", outcome->cut ? outcome->cut : "",
                   outcome->cut ? _ (" was not written") : "");
  return ES_EXIT_SIGNAL_BASE + sig;
}

static int
run_operation (EsOp op, EsCliOptions *o, char **inputs, int n_inputs)
{
  EsViewParams params;
  EsExportFormat format;
  EsEngine *engine;
  EsError error;
  bool to_dir, to_stdout = false;
  char **outputs = NULL;
  int worst, status;
  EsCliBatchOutcome outcome;
  EsCliDefinitionFiles definition_files = { 0 };
  EsCliReadFiles reads = { 0 };

  if (n_inputs == 0)
    return es_cli_usage_error (_ ("%s: no input file"), es_op_name (op));
  if ((status = check_output_target (o, n_inputs, &to_dir)) != ES_EXIT_OK)
    return status;
  if ((status = choose_export_format (o, to_dir, &format)) != ES_EXIT_OK)
    return status;
  if (o->variant && !check_variant (op, o->variant))
    return ES_EXIT_USAGE;
  /* Binary on a terminal is noise, and no one meant it. */
  if (is_stdout_name (o->output) && format != ES_EXPORT_TEXT && isatty (STDOUT_FILENO))
    return es_cli_usage_error (_ ("-o -: stdout is a terminal; redirect it to write a PNG there, "
                                  "or use --format txt"));

  /* The files of the entropy definition mean nothing to another
   * operation: saying so beats computing as if they were not there. */
  for (int role = 0; role < ES_CLI_N_READS; role++)
    if (op != ES_OP_ENTROPY && o->reads[role] != NULL)
      return es_cli_usage_error (_ ("--%s belongs to the entropy definition; %s takes no %s"), es_cli_reads_name[role],
                                 es_op_name (op), es_cli_reads_name[role]);

  view_params_from_options (op, o, &params);
  es_error_clear (&error);
  if (op == ES_OP_ENTROPY && !es_cli_definition_load (o, &definition_files, &error))
    {
      es_cli_definition_clear (&definition_files);
      return es_cli_report_error (NULL, &error);
    }
  params.job.definition = o->job.definition;
  params.job.clahe = o->job.clahe;
  if (!es_job_validate (&params.job, &error))
    {
      es_cli_definition_clear (&definition_files);
      return es_cli_usage_error ("%s", error.message);
    }
  if ((o->volume_choice.channel_given || o->volume_choice.time_given) && !es_cli_reads_volumes (o, &params.job))
    {
      es_cli_definition_clear (&definition_files);
      return es_cli_usage_error (_ ("--%s chooses the planes of a volume: give a 3-D window (--box, --ball, a "
                                    "multi-page --footprint) or --volume"),
                                 o->volume_choice.channel_given ? "channel" : "time");
    }
  if (o->max_pixels)
    es_image_set_max_pixels (o->max_pixels);
  es_save_set_compression (o->compression);

  engine = open_engine (o, &params.job, &error);
  if (!engine)
    {
      es_cli_definition_clear (&definition_files);
      return es_cli_report_error (NULL, &error);
    }
  es_engine_set_counters (engine, o->counters);

  if (!es_cli_read_files_init (&reads, o, inputs, n_inputs))
    {
      es_cli_report (NULL, _ ("out of memory"));
      status = ES_EXIT_COMPUTE;
    }
  else
    status = plan_outputs (op, o, format, to_dir, inputs, n_inputs, &reads, &outputs, &to_stdout);
  if (status != ES_EXIT_OK)
    {
      es_cli_read_files_clear (&reads);
      es_engine_free (engine);
      es_cli_definition_clear (&definition_files);
      return status;
    }
  es_cli_batch_run (
    &(EsCliBatch){
      .engine = engine,
      .params = &params,
      .options = o,
      .format = format,
      .inputs = inputs,
      .outputs = outputs,
      .n_inputs = n_inputs,
      .reads = &reads,
      .to_stdout = to_stdout,
      .show_progress = n_inputs > 1 && !o->quiet && isatty (STDERR_FILENO),
      .interrupt = interrupt,
      .interrupt_signal = &interrupt_signal,
    },
    &outcome);
  worst = es_control_cancelled (interrupt) ? report_interrupted (&outcome, n_inputs) : outcome.worst;

  free_outputs (outputs, n_inputs);
  es_cli_read_files_clear (&reads);
  /* Every output is committed: an AUTO engine still opening CUDA (the jobs
   * were small enough for the CPU) is left to the end of the process
   * rather than waited for. */
  if (es_engine_opening (engine))
    exit_without_cleanup = true;
  else
    es_engine_free (engine);
  es_cli_definition_clear (&definition_files);
  return worst;
}

/* ---- info ---- */

/* The 8-bit image info runs each variant on to learn its kernels: the
 * mask's extent where the job has one (a mask must fit its input), else
 * 1024², which every variant runs in milliseconds. Registers, shared and
 * local memory are the kernels' own; the occupancy is that of the launch
 * shapes the launchers pick for the job at this size. */
static bool
probe_image_new (EsEngine *engine, const EsJob *job, EsImage *probe, EsError *error)
{
  const EsImage *mask = job->op == ES_OP_ENTROPY ? job->definition.mask : NULL;
  const int width = mask ? mask->width : 1024, height = mask ? mask->height : 1024;
  const int planes = mask ? es_image_planes (mask) : 1;
  uint8_t *pixels;
  size_t count;

  if (!es_engine_volume_alloc (engine, probe, width, height, planes, ES_FORMAT_U8, 8, error))
    return false;
  /* Varied samples, so that no kernel sees the flat image of a special case. */
  pixels = probe->pixels;
  count = planes > 1 ? (size_t) planes * probe->plane_stride : (size_t) height * probe->stride;
  for (size_t i = 0; i < count; i++)
    pixels[i] = (uint8_t) ((i * 2654435761u) >> 13);
  return true;
}

/* The kernels `variant` launches for `job` and their resources (registers,
 * shared and local memory, occupancy), printed under its entry. A launcher
 * picks its kernels, their launch shapes and dynamic shared memory from the
 * job, so one run of the variant on the probe image is what tells them;
 * cudaFuncGetAttributes and the occupancy API then give the figures
 * (EsMetrics.kernels). */
static void
print_variant_kernels (EsEngine *engine, const EsJob *job, const EsVariant *variant, const EsImage *probe, EsImage *out)
{
  EsJob variant_job = *job;
  EsTiming timing;
  EsError error = { 0 };

  variant_job.variant = variant->id;
  if (!es_run (engine, &variant_job, probe, out, &timing, &error))
    {
      printf (_ ("                         Kernels not measured: %s\n"), error.message);
      return;
    }
  /* Another variant ran it, or the CPU after a CUDA failure: its kernels are not this variant's. */
  if (timing.backend != ES_BACKEND_CUDA || timing.variant == NULL || strcmp (timing.variant, variant->id) != 0)
    return;
  for (int i = 0; i < timing.metrics.n_kernels; i++)
    {
      const EsKernelInfo *k = &timing.metrics.kernels[i];

      printf (_ ("                         %s%s: %d registers, %zu B shared, %zu B local a thread, "
                 "%d blocks of %u threads an SM, occupancy %.0f%%\n"),
              k->name, i == timing.metrics.main_kernel ? _ (" (the lesson's)") : "", k->registers,
              k->static_shared + k->dynamic_shared, k->local_bytes, k->blocks_per_sm,
              k->block[0] * k->block[1] * k->block[2], 100 * k->occupancy);
    }
}

/* Under each variant of `job`'s operation: why it cannot run the job (and
 * the variant that runs it instead), or why it runs it on a slow path; with
 * `engine` on CUDA, the kernels it launches for the job and their resources. */
static void
print_variants_for_job (EsEngine *engine, const EsJob *job, EsUnits units, const EsVariant *variants, size_t n)
{
  const bool cuda = es_engine_backend (engine) == ES_BACKEND_CUDA;
  EsImage probe = { 0 }, out = { 0 };
  EsError error = { 0 };
  const EsVariant *runs = es_variant_for_job (job);
  char definition[160];

  es_job_describe_definition (job, units == ES_UNITS_BITS ? "bits" : "nats", definition, sizeof definition);
  printf (_ ("    This job%s%s%s runs on %s by default.\n"), definition[0] ? " (" : "", definition,
          definition[0] ? ")" : "", runs != NULL ? runs->id : _ ("the CPU"));
  if (job->op == ES_OP_ENTROPY && es_definition_is_3d (&job->definition))
    printf (_ ("    Its window is 3-D (%d cells): a multi-page TIFF is read as one volume, not a stack of planes.\n"),
            es_window_pixels (job));
  for (size_t i = 0; i < n; i++)
    {
      const char *why = es_variant_unsupported (&variants[i], job);
      const char *slow = why == NULL ? es_variant_slow_path (&variants[i], job) : NULL;

      printf ("  %c %-20s %s\n                         %s\n", variants[i].is_default ? '*' : ' ', variants[i].id,
              _ (variants[i].label), _ (variants[i].lesson));
      if (why != NULL)
        printf (_ ("                         Not for this job: %s; %s runs it.\n"), why,
                runs != NULL ? runs->id : _ ("the CPU"));
      else if (slow != NULL)
        printf (_ ("                         Runs this job on a %s.\n"), slow);
      if (why != NULL || !cuda)
        continue;
      if (probe.pixels == NULL && !probe_image_new (engine, job, &probe, &error))
        {
          printf (_ ("                         Kernels not measured: %s\n"), error.message);
          continue;
        }
      print_variant_kernels (engine, job, &variants[i], &probe, &out);
    }
  es_image_clear (&out);
  es_image_clear (&probe);
}

/* `only`: the operation named after 'info', or ES_N_OPS for every one. */
static int
run_info (EsCliOptions *o, EsOp only)
{
  EsEngine *engine;
  EsError error;
  const char *reason;
  EsCliDefinitionFiles definition_files = { 0 };

  es_error_clear (&error);
  /* A mask or footprint file is part of the job: read it as a job would. */
  if ((only == ES_N_OPS || only == ES_OP_ENTROPY) && !es_cli_definition_load (o, &definition_files, &error))
    {
      es_cli_definition_clear (&definition_files);
      return es_cli_report_error (NULL, &error);
    }
  engine = es_engine_new (o->backend, &error);
  if (!engine)
    {
      es_cli_definition_clear (&definition_files);
      return es_cli_report_error (NULL, &error);
    }

  printf (ES_CLI_PROGRAM " " ES_VERSION "\n");
  printf (_ ("Backends compiled: cpu (OpenMP)%s\n"), es_engine_cuda_compiled () ? ", cuda" : "");
  reason = es_engine_cuda_reason (engine);
  if (es_engine_backend (engine) == ES_BACKEND_CUDA)
    printf (_ ("Backend in use:    cuda (%s)\n"),
            o->backend == ES_BACKEND_CUDA ? _ ("requested with --backend=cuda") : _ ("a usable CUDA device was found"));
  else if (o->backend == ES_BACKEND_CPU)
    printf (_ ("Backend in use:    cpu (requested with --backend=cpu)\n"));
  else
    printf (_ ("Backend in use:    cpu (%s)\n"), reason[0]                    ? reason
                                                 : es_engine_cuda_compiled () ? _ ("CUDA is not usable")
                                                                              : _ ("this build has no CUDA backend"));
  printf ("Device:            %s\n", es_engine_describe (engine));
  printf (_ ("CPU threads:       %d\n"), es_cpu_thread_count ());

  printf (_ ("\nCUDA kernel variants (* the default):\n"));
  /* Their kernels' resources come from the device (print_variant_kernels). */
  if (es_engine_cuda_compiled () && es_engine_backend (engine) != ES_BACKEND_CUDA)
    printf (_ ("  Their kernels' registers, shared and local memory and occupancy need a CUDA device: %s.\n"),
            o->backend == ES_BACKEND_CPU ? _ ("--backend=cpu is in use")
            : reason[0]                  ? reason
                                         : _ ("CUDA is not usable"));
  for (int op = 0; op < ES_N_OPS; op++)
    {
      size_t n;
      const EsVariant *variants = es_variants ((EsOp) op, &n);
      /* The job that the given options describe. */
      EsJob job = o->job;

      if (only != ES_N_OPS && op != (int) only)
        continue;
      job.op = (EsOp) op;
      job.variant = NULL;
      printf ("  %s:%s\n", es_op_name ((EsOp) op), n ? "" : _ (" none in this build (CPU only)"));
      print_variants_for_job (engine, &job, o->units, variants, n);
    }

  es_engine_free (engine);
  es_cli_definition_clear (&definition_files);
  /* A failure to write all this is reported by main, once. */
  return ES_EXIT_OK;
}

/* ---- bench ---- */

static int
run_bench (EsCliOptions *o, int n_operands)
{
  EsBenchOptions *bench = &o->bench;

  if (n_operands > 0)
    return es_cli_usage_error (_ ("bench takes no input files; --image=FILE times the variants on one"));
  bench->backend = o->backend;
  bench->job = o->job;
  if (bench->image)
    {
      EsCliDefinitionFiles definition_files = { 0 };
      EsError error = { 0 };
      int status;

      if (o->sizes_given)
        return es_cli_usage_error (_ ("--image and --sizes exclude each other: the image sets the size"));
      if (o->variant && strcmp (o->variant, "all") != 0)
        return es_cli_usage_error (_ ("--image compares every variant; --variant=%s does not apply"), o->variant);
      if (o->max_pixels)
        es_image_set_max_pixels (o->max_pixels);
      /* The entropy definition's files, read as a job reads them. */
      if (!es_cli_definition_load (o, &definition_files, &error))
        {
          es_cli_definition_clear (&definition_files);
          return es_cli_report_error (NULL, &error);
        }
      bench->job = o->job;
      bench->mask = o->reads[ES_CLI_READS_MASK];
      bench->volume = es_cli_reads_volumes (o, &o->job);
      bench->volume_choice = o->volume_choice;
      status = es_bench_image_run (bench);
      es_cli_definition_clear (&definition_files);
      return status;
    }
  /* Random images of every size: a mask or footprint file, or any other
   * definition, belongs to one image. */
  if (o->definition_given)
    return es_cli_usage_error (_ ("bench takes the entropy definition (--disk, --border, --like…) only with "
                                  "--image=FILE"));
  if (o->variant && strcmp (o->variant, "all") != 0)
    {
      for (int i = 0; i < bench->n_ops; i++)
        if (!check_variant (bench->ops[i], o->variant))
          return ES_EXIT_USAGE;
      bench->variant = o->variant;
    }
  if (o->max_pixels)
    es_image_set_max_pixels (o->max_pixels);
  return es_bench_run (bench);
}

/* Everything printed on stdout (help, version, info, bench's table, the
 * "wrote" lines) must have arrived: a failure to write it is an output
 * error like any other, said once, at the end. */
static int
finish (int status)
{
  int err;

  errno = 0;
  if (fflush (stdout) == 0 && !ferror (stdout))
    return status;
  err = errno;
  if (err == 0)
    {
      /* stdio dropped the bytes of an earlier failed flush (bench flushes
       * each row) and kept no errno: one more byte straight to the
       * descriptor tells why. The output is incomplete already. */
      err = write (STDOUT_FILENO, "\n", 1) < 0 ? errno : EIO;
    }
  /* A reader that went away ends the program as SIGPIPE would have. */
  if (interrupt_signal == SIGPIPE || err == EPIPE)
    return ES_EXIT_SIGNAL_BASE + SIGPIPE;
  es_cli_report ("stdout", "%s", strerror (err));
  return status == ES_EXIT_OK || status == ES_EXIT_USAGE ? ES_EXIT_DATA : status;
}

/* Reads the command word, then its options, then runs it. */
static int
run (int argc, char **argv)
{
  EsCliOptions options;
  EsCliCommand command;
  EsOp op = (EsOp) 0; /* the operation of an ES_CLI_COMMAND_OP */
  const char *word;
  int status;

  if (argc < 2)
    return es_cli_usage_error (_ ("no command given"));
  word = argv[1];
  if (strcmp (word, "--help") == 0 || strcmp (word, "-h") == 0 || strcmp (word, "help") == 0)
    {
      es_cli_print_help (stdout);
      return ES_EXIT_OK;
    }
  if (strcmp (word, "--version") == 0)
    {
      es_cli_print_version (stdout);
      return ES_EXIT_OK;
    }

  if (strcmp (word, "info") == 0)
    command = ES_CLI_COMMAND_INFO;
  else if (strcmp (word, "bench") == 0)
    command = ES_CLI_COMMAND_BENCH;
  else if (es_op_from_name (word, &op))
    command = ES_CLI_COMMAND_OP;
  else if (word[0] == '-')
    return es_cli_usage_error (_ ("expected a command before '%s'"), word);
  else
    return es_cli_usage_error (_ ("unknown command '%s'"), word);

  interrupt_install ();
  es_cli_options_init (&options);
  /* --like names a preset of this operation (info's: entropy's). */
  options.job.op = command == ES_CLI_COMMAND_OP ? op : ES_OP_ENTROPY;
  status = es_cli_parse_options (argc - 1, argv + 1, command, &options);
  if (status >= 0)
    return status;
  /* getopt_long permuted the operands to the end of argv + 1. */
  argc -= 1 + optind;
  argv += 1 + optind;

  switch (command)
    {
    case ES_CLI_COMMAND_INFO:
      if (argc > 1 || (argc == 1 && !es_op_from_name (argv[0], &op)))
        return es_cli_usage_error (_ ("info takes no input files, only an operation's name ('%s')"), argv[0]);
      return run_info (&options, argc == 1 ? op : ES_N_OPS);
    case ES_CLI_COMMAND_BENCH: return run_bench (&options, argc);
    case ES_CLI_COMMAND_OP:
    default: return run_operation (op, &options, argv, argc);
    }
}

int
main (int argc, char **argv)
{
  int status;

  /* Messages only: numbers in outputs and parsed options keep the C locale's
   * decimal point whatever the user's locale. */
  setlocale (LC_MESSAGES, "");
  es_intl_init ();
  status = finish (run (argc, argv));

  if (exit_without_cleanup)
    {
      fflush (stderr);
      _exit (status);
    }
  return status;
}
