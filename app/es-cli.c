/* entroscope-cli: its commands, one per operation of compute/es-ops.h (over files), info and bench. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-cli.h"
#include "es-load.h"

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
    es_cli_usage_error ("--variant=%s: this build has no CUDA kernel variants", id);
  else
    es_cli_usage_error ("--variant=%s: %s has no such variant (%s)", id, es_op_name (op), list);
  return false;
}

/* ---- interruption ---- */

/* SIGINT and SIGTERM cancel the job in flight and every atomic file being
 * written (both poll it), so that a batch stops within a row of work and
 * leaves neither the current output nor a temporary file. */
static EsControl *interrupt;
static volatile sig_atomic_t interrupt_signal;
/* Test hook: ES_CLI_TEST_INTERRUPT=N:F raises SIGINT once the N-th job
 * (from 1) reaches the fraction F, so that tests interrupt mid-job without
 * relying on timing. */
static int interrupt_test_job;
static double interrupt_test_at;
static int jobs_started;

static void
on_interrupt (int signal_number)
{
  interrupt_signal = signal_number;
  es_control_cancel (interrupt);
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
      raise (SIGINT);
    }
}

static void
interrupt_install (void)
{
  struct sigaction action = { 0 };
  const char *test = getenv ("ES_CLI_TEST_INTERRUPT");

  interrupt = es_control_new (on_progress, NULL);
  if (interrupt == NULL)
    return;
  if (test != NULL && sscanf (test, "%d:%lf", &interrupt_test_job, &interrupt_test_at) != 2)
    interrupt_test_job = 0;
  es_atomic_file_set_interrupt (interrupt);
  action.sa_handler = on_interrupt;
  sigemptyset (&action.sa_mask);
  sigaction (SIGINT, &action, NULL);
  sigaction (SIGTERM, &action, NULL);
}

/* ---- the operations ---- */

/* A fallback's reason is said once per process, not once per image. */
static bool notice_shown;

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

  if (asprintf (&path, "%s%s%.*s-%s.%s", dir ? dir : "", sep, stem_len, name,
                es_op_name (op), ext) < 0)
    return NULL;
  return path;
}

static void
print_timings (const char *input, const EsResult *result)
{
  const EsTiming *t = &result->timing;
  double mpx = (double) result->values.width * result->values.height / 1e6;

  es_cli_progress_clear ();
  fprintf (stderr,
           "%s: upload %.3f ms, kernel %.3f ms, download %.3f ms, wall %.3f ms, "
           "backend %s, variant %s, %.1f Mpx/s\n",
           input, t->upload_ms, t->kernel_ms, t->download_ms, t->wall_ms,
           es_backend_name (t->backend), t->variant ? t->variant : "-",
           t->kernel_ms > 0.0 ? mpx / (t->kernel_ms / 1e3) : 0.0);
}

/* Loads, runs and writes one input; returns its exit status. */
static int
process_one (EsEngine *engine, const EsViewParams *params, const EsCliOptions *o,
             EsExportFormat format, const char *input, const char *output, EsResult *result)
{
  EsImage image = { 0 };
  EsError error;
  const char *notice;
  int status = ES_EXIT_OK;

  es_error_clear (&error);
  if (!es_load_file (input, params->job.levels, &image, &error))
    return es_cli_report_error (input, &error);

  if (!es_pipeline_run_controlled (engine, &image, params, result, interrupt, &error))
    status = error.code == ES_ERROR_CANCELLED ? ES_EXIT_SIGNAL_BASE : es_cli_report_error (input, &error);
  es_image_clear (&image);

  notice = es_engine_take_notice (engine);
  if (notice && !notice_shown)
    {
      es_cli_report (NULL, "note: %s", notice);
      notice_shown = true;
    }
  if (status != ES_EXIT_OK)
    return status;

  if (o->timings)
    print_timings (input, result);

  if (!es_pipeline_export (output, format, result, o->colorbar, &error))
    return es_control_cancelled (interrupt) ? ES_EXIT_SIGNAL_BASE : es_cli_report_error (output, &error);

  if (!o->quiet)
    {
      es_cli_progress_clear ();
      printf ("wrote %s\n", output);
      fflush (stdout);
    }
  return ES_EXIT_OK;
}

static int
run_operation (EsOp op, EsCliOptions *o, char **inputs, int n_inputs)
{
  EsViewParams params;
  EsExportFormat format;
  EsEngine *engine;
  EsResult result = { 0 };
  EsError error;
  struct stat st;
  bool to_dir = false;
  bool show_progress;
  char **written;
  int n_written = 0;
  int worst = ES_EXIT_OK;
  const char *cut = NULL;  /* the input an interruption stopped */

  if (n_inputs == 0)
    return es_cli_usage_error ("%s: no input file", es_op_name (op));

  if (o->output)
    to_dir = ends_with (o->output, "/") || (stat (o->output, &st) == 0 && S_ISDIR (st.st_mode));
  if (n_inputs > 1 && o->output && !to_dir)
    return es_cli_usage_error ("%d inputs need -o DIR/ (a folder), not the file '%s'", n_inputs,
                               o->output);
  /* One line for a missing folder rather than one per input. */
  if (to_dir && stat (o->output, &st) != 0)
    {
      es_cli_report (o->output, "%s", errno == ENOENT || errno == ENOTDIR ? "no such folder"
                                                                           : strerror (errno));
      return ES_EXIT_DATA;
    }

  if (o->format_set)
    format = o->format;
  else if (o->output && !to_dir && ends_with (o->output, ".txt"))
    format = ES_EXPORT_TEXT;
  else
    format = ES_EXPORT_PNG;
  if (o->raw16)
    {
      if (format == ES_EXPORT_TEXT)
        return es_cli_usage_error ("--raw16 writes a PNG; it cannot be combined with a text matrix");
      format = ES_EXPORT_RAW16;
    }
  if (o->colorbar && format != ES_EXPORT_PNG)
    return es_cli_usage_error ("--colorbar applies to PNG heatmaps only, not to %s",
                               format == ES_EXPORT_TEXT ? "text matrices" : "--raw16");
  if (o->variant && !check_variant (op, o->variant))
    return ES_EXIT_USAGE;

  /* The operation's defaults (its colormap among them), then what was given. */
  es_view_params_init (&params, op);
  for (int id = 0; id < ES_N_PARAMS; id++)
    es_job_set_param (&params.job, (EsParamId) id, es_job_get_param (&o->job, (EsParamId) id));
  params.job.variant = o->variant;
  params.range = o->range;
  params.units = o->units;
  if (o->colormap)
    es_colormap_from_name (o->colormap, &params.colormap, &params.reversed);

  es_error_clear (&error);
  if (!es_job_validate (&params.job, &error))
    return es_cli_usage_error ("%s", error.message);
  if (o->max_pixels)
    es_image_set_max_pixels (o->max_pixels);

  engine = es_engine_new (o->backend, &error);
  if (!engine)
    return es_cli_report_error (NULL, &error);

  written = calloc ((size_t) n_inputs, sizeof *written);
  if (!written)
    {
      es_engine_free (engine);
      es_cli_report (NULL, "out of memory");
      return ES_EXIT_COMPUTE;
    }

  show_progress = n_inputs > 1 && !o->quiet && isatty (STDERR_FILENO);
  for (int i = 0; i < n_inputs; i++)
    {
      if (es_control_cancelled (interrupt))
        break;

      const char *ext = format == ES_EXPORT_TEXT ? "txt" : "png";
      char *output;
      bool clash = false;
      int status;

      if (show_progress)
        es_cli_progress_show (i + 1, n_inputs, inputs[i]);

      output = o->output && !to_dir ? strdup (o->output)
                                    : output_path_for (o->output, inputs[i], op, ext);
      if (!output)
        {
          es_cli_report (inputs[i], "out of memory");
          worst = ES_EXIT_COMPUTE > worst ? ES_EXIT_COMPUTE : worst;
          continue;
        }
      /* Two inputs of the same stem (a/x.png, b/x.png) would overwrite each other. */
      for (int j = 0; j < n_written && !clash; j++)
        clash = strcmp (written[j], output) == 0;
      if (clash)
        {
          es_cli_report (inputs[i], "not processed: %s was already written from an earlier input",
                         output);
          status = ES_EXIT_DATA;
          free (output);
        }
      else
        {
          status = process_one (engine, &params, o, format, inputs[i], output, &result);
          if (status == ES_EXIT_SIGNAL_BASE)
            cut = inputs[i];
          if (status == ES_EXIT_OK)
            written[n_written++] = output;
          else
            free (output);
        }
      if (status > worst && status != ES_EXIT_SIGNAL_BASE)
        worst = status;
    }
  es_cli_progress_clear ();
  if (es_control_cancelled (interrupt))
    {
      int sig = interrupt_signal ? interrupt_signal : SIGINT;
      es_cli_report (NULL, "interrupted by %s: %d of %d input%s written%s%s%s", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                     n_written, n_inputs, n_inputs == 1 ? "" : "s", cut ? "; " : "", cut ? cut : "",
                     cut ? " was not written" : "");
      worst = ES_EXIT_SIGNAL_BASE + sig;
    }

  for (int j = 0; j < n_written; j++)
    free (written[j]);
  free (written);
  es_result_clear (&result);
  es_engine_free (engine);
  return worst;
}

/* ---- info ---- */

static int
run_info (const EsCliOptions *o)
{
  EsEngine *engine;
  EsError error;
  const char *reason;

  es_error_clear (&error);
  engine = es_engine_new (o->backend, &error);
  if (!engine)
    return es_cli_report_error (NULL, &error);

  printf (ES_CLI_PROGRAM " " ES_VERSION "\n");
  printf ("Backends compiled: cpu (OpenMP)%s\n", es_engine_cuda_compiled () ? ", cuda" : "");
  reason = es_engine_cuda_reason (engine);
  if (es_engine_backend (engine) == ES_BACKEND_CUDA)
    printf ("Backend in use:    cuda (%s)\n", o->backend == ES_BACKEND_CUDA
            ? "requested with --backend=cuda" : "a usable CUDA device was found");
  else if (o->backend == ES_BACKEND_CPU)
    printf ("Backend in use:    cpu (requested with --backend=cpu)\n");
  else
    printf ("Backend in use:    cpu (%s)\n", reason[0] ? reason
            : es_engine_cuda_compiled () ? "CUDA is not usable" : "this build has no CUDA backend");
  printf ("Device:            %s\n", es_engine_describe (engine));
  printf ("CPU threads:       %d\n", es_cpu_thread_count ());

  printf ("\nCUDA kernel variants (* the default):\n");
  for (int op = 0; op < ES_N_OPS; op++)
    {
      size_t n;
      const EsVariant *variants = es_variants ((EsOp) op, &n);

      printf ("  %s:%s\n", es_op_name ((EsOp) op), n ? "" : " none in this build (CPU only)");
      for (size_t i = 0; i < n; i++)
        printf ("  %c %-20s %s\n                         %s\n", variants[i].is_default ? '*' : ' ',
                variants[i].id, variants[i].label, variants[i].lesson);
    }

  es_engine_free (engine);
  return fflush (stdout) == 0 ? ES_EXIT_OK : ES_EXIT_DATA;
}

/* ---- bench ---- */

static int
run_bench (EsCliOptions *o, int n_operands)
{
  EsBenchOptions *bench = &o->bench;

  if (n_operands > 0)
    return es_cli_usage_error ("bench takes no input files; --image=FILE times the variants on one");
  bench->backend = o->backend;
  bench->job = o->job;
  if (bench->image)
    {
      if (o->sizes_given)
        return es_cli_usage_error ("--image and --sizes exclude each other: the image sets the size");
      if (o->variant && strcmp (o->variant, "all") != 0)
        return es_cli_usage_error ("--image compares every variant; --variant=%s does not apply",
                                   o->variant);
      if (o->max_pixels)
        es_image_set_max_pixels (o->max_pixels);
      return es_bench_image_run (bench);
    }
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

/* Reads the command word, then its options, then runs it. */
int
main (int argc, char **argv)
{
  EsCliOptions options;
  EsCliCommand command;
  EsOp op = (EsOp) 0;  /* the operation of an ES_CLI_COMMAND_OP */
  const char *word;
  int status;

  if (argc < 2)
    return es_cli_usage_error ("no command given");
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
    return es_cli_usage_error ("expected a command before '%s'", word);
  else
    return es_cli_usage_error ("unknown command '%s'", word);

  interrupt_install ();
  es_cli_options_init (&options);
  status = es_cli_parse_options (argc - 1, argv + 1, command, &options);
  if (status >= 0)
    return status;
  /* getopt_long permuted the operands to the end of argv + 1. */
  argc -= 1 + optind;
  argv += 1 + optind;

  switch (command)
    {
    case ES_CLI_COMMAND_INFO:
      if (argc > 0)
        return es_cli_usage_error ("info takes no input files");
      return run_info (&options);
    case ES_CLI_COMMAND_BENCH:
      return run_bench (&options, argc);
    case ES_CLI_COMMAND_OP:
    default:
      return run_operation (op, &options, argv, argc);
    }
}
