/* SPDX-License-Identifier: MIT */
/* entroscope-cli's option table and parser; the operations and their parameters come from compute/es-ops.h. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "es-cli.h"
#include "es-cli-options-private.h"

/* ---- the option table ---- */

enum {
  OPT_PARAM = 256, /* OPT_PARAM + EsParamId: --window, --levels, --amount */
  OPT_COLORMAP = OPT_PARAM + ES_N_PARAMS,
  OPT_RAW16,
  OPT_FORMAT,
  OPT_COMPRESSION,
  OPT_RANGE,
  OPT_UNITS,
  OPT_COLORBAR,
  OPT_BACKEND,
  OPT_VARIANT,
  OPT_DEVICES,
  OPT_TIMINGS,
  OPT_METRICS,
  OPT_SANDBOX,
  OPT_MAX_PIXELS,
  OPT_SIZES,
  OPT_WINDOWS,
  OPT_OPS,
  OPT_REPEATS,
  OPT_CSV,
  OPT_IMAGE,
  OPT_VERSION,
  OPT_TILES,
  OPT_DEFINITION, /* OPT_DEFINITION + EsCliDefinitionOption: --rect ... --like */
};

static const struct option fixed_options[] = {
  { "output", required_argument, NULL, 'o' },
  { "quiet", no_argument, NULL, 'q' },
  { "help", no_argument, NULL, 'h' },
  { "colormap", required_argument, NULL, OPT_COLORMAP },
  { "raw16", no_argument, NULL, OPT_RAW16 },
  { "format", required_argument, NULL, OPT_FORMAT },
  { "compression", required_argument, NULL, OPT_COMPRESSION },
  { "range", required_argument, NULL, OPT_RANGE },
  { "units", required_argument, NULL, OPT_UNITS },
  { "colorbar", no_argument, NULL, OPT_COLORBAR },
  { "backend", required_argument, NULL, OPT_BACKEND },
  { "variant", required_argument, NULL, OPT_VARIANT },
  { "devices", required_argument, NULL, OPT_DEVICES },
  { "timings", no_argument, NULL, OPT_TIMINGS },
  { "metrics", optional_argument, NULL, OPT_METRICS },
  { "sandbox", no_argument, NULL, OPT_SANDBOX },
  { "max-pixels", required_argument, NULL, OPT_MAX_PIXELS },
  { "sizes", required_argument, NULL, OPT_SIZES },
  { "windows", required_argument, NULL, OPT_WINDOWS },
  { "ops", required_argument, NULL, OPT_OPS },
  { "repeats", required_argument, NULL, OPT_REPEATS },
  { "csv", required_argument, NULL, OPT_CSV },
  { "image", required_argument, NULL, OPT_IMAGE },
  { "version", no_argument, NULL, OPT_VERSION },
  { "tiles", required_argument, NULL, OPT_TILES },
  { "rect", required_argument, NULL, OPT_DEFINITION + ES_CLI_RECT },
  { "disk", required_argument, NULL, OPT_DEFINITION + ES_CLI_DISK },
  { "footprint", required_argument, NULL, OPT_DEFINITION + ES_CLI_FOOTPRINT },
  { "border", required_argument, NULL, OPT_DEFINITION + ES_CLI_BORDER },
  { "binning", required_argument, NULL, OPT_DEFINITION + ES_CLI_BINNING },
  { "mask", required_argument, NULL, OPT_DEFINITION + ES_CLI_MASK },
  { "like", required_argument, NULL, OPT_DEFINITION + ES_CLI_LIKE },
  { "box", required_argument, NULL, OPT_DEFINITION + ES_CLI_BOX },
  { "ball", required_argument, NULL, OPT_DEFINITION + ES_CLI_BALL },
  { "volume", no_argument, NULL, OPT_DEFINITION + ES_CLI_VOLUME },
  { "channel", required_argument, NULL, OPT_DEFINITION + ES_CLI_CHANNEL },
  { "time", required_argument, NULL, OPT_DEFINITION + ES_CLI_TIME },
  { "kernel-size", required_argument, NULL, OPT_DEFINITION + ES_CLI_KERNEL_SIZE },
  { "nbins", required_argument, NULL, OPT_DEFINITION + ES_CLI_NBINS },
};

#define N_FIXED_OPTIONS (sizeof fixed_options / sizeof fixed_options[0])

/* The fixed options, one per parameter of the table, and the terminator. */
static struct option long_options[N_FIXED_OPTIONS + ES_N_PARAMS + 1];

static void
long_options_init (void)
{
  memcpy (long_options, fixed_options, sizeof fixed_options);
  for (int id = 0; id < ES_N_PARAMS; id++)
    long_options[N_FIXED_OPTIONS + id] = (struct option){ es_param ((EsParamId) id)->name, required_argument, NULL,
                                                          OPT_PARAM + id };
  long_options[N_FIXED_OPTIONS + ES_N_PARAMS] = (struct option){ NULL, 0, NULL, 0 };
}

static const char *
option_name (int opt)
{
  for (const struct option *o = long_options; o->name; o++)
    if (o->val == opt)
      return o->name;
  return "?";
}

/* Which commands accept an option; anything else is a usage error. Every
 * command that runs jobs takes every parameter: one its operation does not
 * read is accepted and has no effect (bench runs several operations with
 * one set of parameters). info takes the job's parameters and definition
 * to say which kernel variants run that job; bench --image takes the
 * definition too, to time the variants of that job (run_bench refuses it
 * without --image). */
static unsigned
option_commands (int opt)
{
  if ((opt >= OPT_PARAM && opt < OPT_PARAM + ES_N_PARAMS) || opt == OPT_TILES)
    return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
  if (opt >= OPT_DEFINITION)
    return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
  switch (opt)
    {
    case OPT_UNITS: return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
    case 'h':
    case OPT_VERSION: return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
    case OPT_BACKEND:
    case OPT_DEVICES: return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
    case OPT_VARIANT:
    case OPT_METRICS:
    case OPT_MAX_PIXELS: return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_BENCH;
    case OPT_SIZES:
    case OPT_WINDOWS:
    case OPT_OPS:
    case OPT_REPEATS:
    case OPT_CSV:
    case OPT_IMAGE: return ES_CLI_COMMAND_BENCH;
    default: return ES_CLI_COMMAND_OP;
    }
}

/* ---- values ---- */

/* strtol with every check: the whole text, no blanks, no overflow, in range. */
static bool
parse_long (const char *option, const char *text, long min, long max, long *value)
{
  char *end;
  long v;

  errno = 0;
  v = strtol (text, &end, 10);
  if (isspace ((unsigned char) text[0]) || end == text || *end != '\0' || errno == ERANGE || v < min || v > max)
    {
      es_cli_usage_error (_ ("--%s=%s: expected an integer in %ld..%ld"), option, text, min, max);
      return false;
    }
  *value = v;
  return true;
}

static bool
parse_max_pixels (const char *text, unsigned long long *value)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull (text, &end, 10);
  /* strtoull accepts "-1" as a huge number: only digits are allowed. */
  if (!isdigit ((unsigned char) text[0]) || *end != '\0' || errno == ERANGE || v == 0)
    {
      es_cli_usage_error (_ ("--max-pixels=%s: expected a positive integer"), text);
      return false;
    }
  *value = v;
  return true;
}

/* The values of an option that takes one of a few names. */
typedef struct {
  const char *name;
  int value;
} Choice;

static const Choice formats[] = { { "png", ES_EXPORT_PNG },
                                  { "txt", ES_EXPORT_TEXT },
                                  { "tif", ES_EXPORT_TIFF },
                                  { "tiff", ES_EXPORT_TIFF },
                                  { NULL, 0 } };
static const Choice ranges[] = { { "absolute", ES_RANGE_ABSOLUTE }, { "auto", ES_RANGE_AUTO }, { NULL, 0 } };
/* normalized is part of the entropy's definition, not a display unit. */
#define UNITS_NORMALIZED (-1)
static const Choice units[] = {
  { "nats", ES_UNITS_NATS }, { "bits", ES_UNITS_BITS }, { "normalized", UNITS_NORMALIZED }, { NULL, 0 }
};

/* "--units=grams: expected nats or bits" when the text names no choice. */
static bool
parse_choice (const char *option, const char *text, const Choice *choices, int *value)
{
  char names[128] = "";
  size_t len = 0;
  int n = 0;

  for (const Choice *c = choices; c->name; c++, n++)
    if (strcmp (text, c->name) == 0)
      {
        *value = c->value;
        return true;
      }
  for (int i = 0; i < n && len < sizeof names; i++)
    len += (size_t) snprintf (names + len, sizeof names - len, "%s%s",
                              i == 0       ? ""
                              : i == n - 1 ? _ (" or ")
                                           : ", ",
                              choices[i].name);
  es_cli_usage_error (_ ("--%s=%s: expected %s"), option, text, names);
  return false;
}

/* An optional sign and decimal digits: strtod alone would also take "5.0",
 * "0x5" and "5e0" for a parameter that is a count. */
static bool
is_integer_text (const char *text)
{
  if (*text == '+' || *text == '-')
    text++;
  if (!isdigit ((unsigned char) *text))
    return false;
  while (isdigit ((unsigned char) *text))
    text++;
  return *text == '\0';
}

/* Any parameter of the table: the text must be a number (an integer where
 * the parameter shows no decimals), and the table says whether it is allowed. */
static bool
parse_param (const EsParam *param, const char *text, EsJob *job)
{
  char range[64];
  char *end;
  double v;
  EsError error;

  errno = 0;
  v = strtod (text, &end);
  if (isspace ((unsigned char) text[0]) || end == text || *end != '\0' || errno == ERANGE || !isfinite (v)
      || (param->digits == 0 && !is_integer_text (text)))
    {
      es_param_describe_range_in (param, es_tr, range, sizeof range);
      es_cli_usage_error (_ ("--%s=%s: expected %s, %s"), param->name, text,
                          param->digits == 0 ? _ ("an integer") : _ ("a number"), range);
      return false;
    }
  es_error_clear (&error);
  if (!es_param_check (param, v, &error))
    {
      es_cli_usage_error ("--%s=%s: %s", param->name, text, error.message);
      return false;
    }
  es_job_set_param (job, param->id, v);
  return true;
}

/* Parses one item of a comma-separated list; reports its own errors. */
typedef bool (*ListItemFunc) (const char *list, const char *item, void *data);

/* --sizes=N,N,..., --ops=OP,OP,... and bench's parameter lists
 * (--windows=K,K,...): every item non-empty and short. */
static bool
parse_list (const char *option, const char *text, const char *items, ListItemFunc parse_item, void *data)
{
  const char *p = text;

  for (;;)
    {
      char item[32];
      size_t len = strcspn (p, ",");

      if (len == 0 || len >= sizeof item)
        {
          es_cli_usage_error (_ ("--%s=%s: expected %s separated by commas"), option, text, items);
          return false;
        }
      memcpy (item, p, len);
      item[len] = '\0';
      if (!parse_item (text, item, data))
        return false;
      if (p[len] == '\0')
        return true;
      p += len + 1;
    }
}

static bool
parse_size (const char *list, const char *item, void *data)
{
  EsBenchOptions *bench = data;
  long side;

  if (bench->n_sizes == ES_BENCH_MAX_SIZES)
    {
      es_cli_usage_error (_ ("--sizes=%s: at most %d sizes"), list, ES_BENCH_MAX_SIZES);
      return false;
    }
  if (!parse_long ("sizes", item, 1, ES_MAX_SIDE, &side))
    return false;
  bench->sizes[bench->n_sizes++] = (int) side;
  return true;
}

static bool
parse_op (const char *list, const char *item, void *data)
{
  EsBenchOptions *bench = data;
  char ops[128];
  EsOp op;

  (void) list;
  if (!es_op_from_name (item, &op))
    {
      es_cli_op_list (ES_CLI_ALL_OPS, ", ", ", ", ops, sizeof ops);
      es_cli_usage_error (_ ("--ops: unknown operation '%s' (%s)"), item, ops);
      return false;
    }
  for (int i = 0; i < bench->n_ops; i++)
    if (bench->ops[i] == op)
      {
        es_cli_usage_error (_ ("--ops: '%s' is listed twice"), item);
        return false;
      }
  bench->ops[bench->n_ops++] = op;
  return true;
}

/* One value of a parameter's list: checked by the parameter table as a
 * single value would be, and kept in the bench's list. */
typedef struct {
  const char *option; /* as given: "windows" or "window" */
  const EsParam *param;
  EsCliOptions *options;
} ParamList;

static bool
parse_param_value (const char *list, const char *item, void *data)
{
  ParamList *pl = data;
  EsBenchOptions *bench = &pl->options->bench;
  EsParamId id = pl->param->id;
  EsJob job = pl->options->job;
  double value;

  if (bench->n_values[id] == ES_BENCH_MAX_VALUES)
    {
      es_cli_usage_error (_ ("--%s=%s: at most %d values"), pl->option, list, ES_BENCH_MAX_VALUES);
      return false;
    }
  if (!parse_param (pl->param, item, &job))
    return false;
  value = es_job_get_param (&job, id);
  for (int i = 0; i < bench->n_values[id]; i++)
    if (bench->values[id][i] == value)
      {
        es_cli_usage_error (_ ("--%s: '%s' is listed twice"), pl->option, item);
        return false;
      }
  bench->values[id][bench->n_values[id]++] = value;
  return true;
}

/* bench's --window=K,K,... (and --windows), --levels=L,L,..., --amount=A,A,...:
 * the job keeps the first value, the bench all of them. */
static bool
parse_param_list (const char *option, const EsParam *param, const char *text, EsCliOptions *options)
{
  ParamList pl = { option, param, options };

  options->bench.n_values[param->id] = 0;
  if (!parse_list (option, text, "values", parse_param_value, &pl))
    return false;
  es_job_set_param (&options->job, param->id, options->bench.values[param->id][0]);
  return true;
}

static bool
parse_sizes (const char *text, EsBenchOptions *bench)
{
  bench->n_sizes = 0;
  return parse_list ("sizes", text, "sides", parse_size, bench);
}

static bool
parse_ops (const char *text, EsBenchOptions *bench)
{
  bench->n_ops = 0;
  return parse_list ("ops", text, "operations", parse_op, bench);
}

/* ---- the command line ---- */

void
es_cli_options_init (EsCliOptions *options)
{
  *options = (EsCliOptions){
    .format = ES_EXPORT_PNG,
    .compression = ES_COMPRESSION_DEFAULT,
    .range = ES_RANGE_ABSOLUTE,
    .units = ES_UNITS_NATS,
    .backend = ES_BACKEND_AUTO,
  };
  for (int id = 0; id < ES_N_PARAMS; id++)
    es_job_set_param (&options->job, (EsParamId) id, es_param ((EsParamId) id)->default_value);
  /* The defaults are lists in the syntax of --ops and --sizes so that
   * --help shows them as they are; they always parse. */
  parse_ops (ES_BENCH_DEFAULT_OPS, &options->bench);
  parse_sizes (ES_BENCH_DEFAULT_SIZES, &options->bench);
}

/* What the option-applying functions return when an option was taken:
 * es_cli_parse_options's "go on". */
#define OPTION_TAKEN (-1)

/* An option refused before its value is read: unknown, missing its value,
 * or not one of the command's. Returns the exit status, or OPTION_TAKEN. */
static int
refuse_option (int opt, char **argv, EsCliCommand command)
{
  if (opt == '?')
    {
      if (optopt > 0 && optopt < 256)
        return es_cli_usage_error (_ ("unknown option '-%c'"), optopt);
      return es_cli_usage_error (_ ("unknown option '%s'"), argv[optind - 1]);
    }
  if (opt == ':')
    {
      if (optopt > 0 && optopt < 256)
        return es_cli_usage_error (_ ("option '-%c' needs a value"), optopt);
      return es_cli_usage_error (_ ("option '%s' needs a value"), argv[optind - 1]);
    }
  if (!(option_commands (opt) & command))
    {
      if (opt == 'o' || opt == 'q')
        return es_cli_usage_error (_ ("option '-%c' does not apply to '%s'"), opt, argv[0]);
      return es_cli_usage_error (_ ("option '--%s' does not apply to '%s'"), option_name (opt), argv[0]);
    }
  return OPTION_TAKEN;
}

/* --window, --levels, --amount: bench times lists of values; the other
 * commands take one. */
/* --tiles CxR (or C×R): --tile-columns C --tile-rows R at once, as
 * OpenCV's tileGridSize (columns, rows). */
static bool
parse_tiles (const char *text, EsCliOptions *o)
{
  const char *x = strpbrk (text, "x×");
  char columns[16];

  if (x == NULL || (size_t) (x - text) >= sizeof columns)
    return es_cli_usage_error (_ ("--tiles=%s: expected COLUMNSxROWS, such as 8x8"), text), false;
  memcpy (columns, text, (size_t) (x - text));
  columns[x - text] = '\0';
  o->params_given |= ES_PARAM_BIT (ES_PARAM_TILE_COLUMNS) | ES_PARAM_BIT (ES_PARAM_TILE_ROWS);
  return parse_param (es_param (ES_PARAM_TILE_COLUMNS), columns, &o->job)
         && parse_param (es_param (ES_PARAM_TILE_ROWS), x + (*x == 'x' ? 1 : strlen ("×")), &o->job);
}

static bool
parse_param_option (const EsParam *param, EsCliCommand command, EsCliOptions *o)
{
  if (command == ES_CLI_COMMAND_BENCH ? !parse_param_list (param->name, param, optarg, o)
                                      : !parse_param (param, optarg, &o->job))
    return false;
  o->params_given |= ES_PARAM_BIT (param->id);
  if (param->id == ES_PARAM_WINDOW)
    {
      o->window_given = true;
      o->job.definition.shape = ES_SHAPE_SQUARE;
      return es_cli_claim_shape (o, "window", optarg);
    }
  return true;
}

/* The computation and bench options. Returns the exit status, or
 * OPTION_TAKEN. */
static int
apply_run_option (int opt, char **argv, EsCliOptions *o)
{
  long number;

  switch (opt)
    {
    case OPT_BACKEND:
      if (!es_backend_from_name (optarg, &o->backend))
        return es_cli_usage_error (_ ("--backend=%s: expected auto, cpu or cuda"), optarg);
      break;
    case OPT_VARIANT: o->variant = optarg; break;
    case OPT_TILES:
      if (!parse_tiles (optarg, o))
        return ES_EXIT_USAGE;
      break;
    case OPT_DEVICES:
      /* The engine reads the list (and says what is wrong with it). */
      setenv ("ES_DEVICES", optarg, 1);
      break;
    case OPT_TIMINGS: o->timings = true; break;
    case OPT_METRICS:
      if (optarg != NULL && strcmp (optarg, "hw") != 0)
        {
          es_cli_usage_error (_ ("--metrics=%s: expected hw (hardware counters), or no value"), optarg);
          return ES_EXIT_USAGE;
        }
      o->metrics = o->bench.metrics = true;
      o->counters = o->bench.counters = optarg != NULL;
      break;
    case OPT_SANDBOX: o->sandbox = true; break;
    case OPT_MAX_PIXELS:
      if (!parse_max_pixels (optarg, &o->max_pixels))
        return ES_EXIT_USAGE;
      break;
    case OPT_SIZES:
      if (!parse_sizes (optarg, &o->bench))
        return ES_EXIT_USAGE;
      o->sizes_given = true;
      break;
    case OPT_WINDOWS:
      if (!parse_param_list ("windows", es_param (ES_PARAM_WINDOW), optarg, o))
        return ES_EXIT_USAGE;
      break;
    case OPT_OPS:
      if (!parse_ops (optarg, &o->bench))
        return ES_EXIT_USAGE;
      break;
    case OPT_REPEATS:
      if (!parse_long ("repeats", optarg, 1, 100000, &number))
        return ES_EXIT_USAGE;
      o->bench.repeats = (int) number;
      break;
    case OPT_CSV:
      if (optarg[0] == '\0')
        return es_cli_usage_error (_ ("--csv: the file name is empty"));
      o->bench.csv_path = optarg;
      break;
    case OPT_IMAGE:
      if (optarg[0] == '\0')
        return es_cli_usage_error (_ ("--image: the file name is empty"));
      o->bench.image = optarg;
      break;
    default: return es_cli_usage_error (_ ("unknown option '%s'"), argv[optind - 1]);
    }
  return OPTION_TAKEN;
}

/* --help, --version and the output options; the others go on to
 * apply_run_option. Returns the exit status, or OPTION_TAKEN. */
static int
apply_option (int opt, char **argv, EsCliOptions *o)
{
  int value;

  switch (opt)
    {
    case 'h': es_cli_print_help (stdout); return ES_EXIT_OK;
    case OPT_VERSION: es_cli_print_version (stdout); return ES_EXIT_OK;
    case 'o':
      if (optarg[0] == '\0')
        return es_cli_usage_error (_ ("-o: the output name is empty"));
      o->output = optarg;
      break;
    case 'q': o->quiet = true; break;
      case OPT_COLORMAP: {
        EsColormap map;
        bool reversed;
        if (!es_colormap_from_name (optarg, &map, &reversed))
          return es_cli_usage_error (_ ("--colormap=%s: unknown colormap (viridis, magma, inferno, "
                                        "cividis, gray, or one of them with _r)"),
                                     optarg);
        o->colormap = optarg;
      }
      break;
    case OPT_RAW16: o->raw16 = true; break;
    case OPT_FORMAT:
      if (!parse_choice ("format", optarg, formats, &value))
        return ES_EXIT_USAGE;
      o->format = (EsExportFormat) value;
      o->format_set = true;
      break;
    case OPT_COMPRESSION:
      if (!es_compression_from_name (optarg, &o->compression))
        return es_cli_usage_error (_ ("--compression=%s: expected fast, default or small"), optarg);
      break;
    case OPT_RANGE:
      if (!parse_choice ("range", optarg, ranges, &value))
        return ES_EXIT_USAGE;
      o->range = (EsRangeMode) value;
      break;
    case OPT_UNITS:
      if (!parse_choice ("units", optarg, units, &value))
        return ES_EXIT_USAGE;
      o->job.definition.normalized = value == UNITS_NORMALIZED;
      o->units_given = true;
      o->definition_given = true;
      o->units = value == UNITS_NORMALIZED ? ES_UNITS_NATS : (EsUnits) value;
      break;
    case OPT_COLORBAR: o->colorbar = true; break;
    default: return apply_run_option (opt, argv, o);
    }
  return OPTION_TAKEN;
}

int
es_cli_parse_options (int argc, char **argv, EsCliCommand command, EsCliOptions *o)
{
  int opt, status;

  long_options_init ();
  opterr = 0; /* our own one-line messages */
  optind = 1;
  while ((opt = getopt_long (argc, argv, ":o:qh", long_options, NULL)) != -1)
    {
      if ((status = refuse_option (opt, argv, command)) != OPTION_TAKEN)
        return status;
      if (opt >= OPT_PARAM && opt < OPT_PARAM + ES_N_PARAMS)
        {
          if (!parse_param_option (es_param ((EsParamId) (opt - OPT_PARAM)), command, o))
            return ES_EXIT_USAGE;
          continue;
        }
      if (opt >= OPT_DEFINITION)
        {
          if (!es_cli_parse_definition_option ((EsCliDefinitionOption) (opt - OPT_DEFINITION), optarg, o))
            return ES_EXIT_USAGE;
          o->definition_given = true;
          continue;
        }
      if ((status = apply_option (opt, argv, o)) != OPTION_TAKEN)
        return status;
    }
  return es_cli_definition_finish (o) ? OPTION_TAKEN : ES_EXIT_USAGE;
}
