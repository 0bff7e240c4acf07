/* SPDX-License-Identifier: MIT */
/* entroscope-cli's options and --help; the operations and their parameters come from compute/es-ops.h. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "es-cli.h"

/* ---- --help ---- */

/* Lines of --help stay below this width. */
#define HELP_WIDTH 80
/* Where the text of a command's and of an option's entry starts. */
#define COMMAND_COLUMN 12
#define OPTION_COLUMN 26

/* Columns on a terminal: UTF-8 continuation bytes take none (the table's
 * texts hold "×" and "·"). */
static int
text_width (const char *text, size_t len)
{
  int width = 0;

  for (size_t i = 0; i < len; i++)
    if (((unsigned char) text[i] & 0xC0) != 0x80)
      width++;
  return width;
}

/* Prints TERM, then TEXT from COLUMN on, its words wrapped before
 * HELP_WIDTH onto lines indented to COLUMN. A TERM that reaches COLUMN puts
 * TEXT on the next line, as in the hand-written entries. */
static void
print_entry (FILE *out, const char *term, int column, const char *text)
{
  int x = text_width (term, strlen (term));
  const char *p = text;

  fputs (term, out);
  if (x > 0 && x + 1 >= column)
    {
      fputc ('\n', out);
      x = 0;
    }
  fprintf (out, "%*s", column - x, "");
  x = column;
  while (*p)
    {
      size_t len = strcspn (p, " ");
      int width = text_width (p, len);

      if (x > column)
        {
          if (x + 1 + width >= HELP_WIDTH)
            {
              fprintf (out, "\n%*s", column, "");
              x = column;
            }
          else
            {
              fputc (' ', out);
              x++;
            }
        }
      fwrite (p, 1, len, out);
      x += width;
      p += len;
      while (*p == ' ')
        p++;
    }
  fputc ('\n', out);
}

/* "quantize, entropy and sharpen": the operations whose bit is in ops,
 * joined with `last` before the last one ("|" joins them all). */
static void
op_list (unsigned ops, const char *separator, const char *last, char *text, size_t size)
{
  int n = 0, count = 0;
  size_t len = 0;

  for (int op = 0; op < ES_N_OPS; op++)
    count += (ops >> op) & 1;
  text[0] = '\0';
  for (int op = 0; op < ES_N_OPS && len < size; op++)
    if (ops & (1u << op))
      {
        n++;
        len += (size_t) snprintf (text + len, size - len, "%s%s",
                                  n == 1 ? "" : n == count ? last : separator, es_op_name ((EsOp) op));
      }
}

static unsigned
ops_using (EsParamId id)
{
  unsigned ops = 0;

  for (int op = 0; op < ES_N_OPS; op++)
    if (es_op_uses ((EsOp) op, id))
      ops |= 1u << op;
  return ops;
}

#define ALL_OPS ((1u << ES_N_OPS) - 1)

static void
print_commands (FILE *out)
{
  for (int op = 0; op < ES_N_OPS; op++)
    {
      char term[32];

      snprintf (term, sizeof term, "  %s", es_op_name ((EsOp) op));
      print_entry (out, term, COMMAND_COLUMN, es_op_info ((EsOp) op)->summary);
    }
}

/* "gray for quantize, equalize and sharpen; viridis for entropy". */
static void
describe_default_colormaps (char *text, size_t size)
{
  unsigned done = 0;
  size_t len = 0;

  text[0] = '\0';
  for (int op = 0; op < ES_N_OPS && len < size; op++)
    {
      const char *map = es_op_info ((EsOp) op)->colormap;
      unsigned same = 0;
      char ops[128];

      if (done & (1u << op))
        continue;
      for (int other = op; other < ES_N_OPS; other++)
        if (strcmp (es_op_info ((EsOp) other)->colormap, map) == 0)
          same |= 1u << other;
      done |= same;
      op_list (same, ", ", " and ", ops, sizeof ops);
      len += (size_t) snprintf (text + len, size - len, "%s%s for %s", len ? "; " : "", map, ops);
    }
}

static void
print_parameters (FILE *out)
{
  for (int id = 0; id < ES_N_PARAMS; id++)
    {
      const EsParam *param = es_param ((EsParamId) id);
      char term[64], range[64], ops[128], text[512];

      snprintf (term, sizeof term, "      --%s=%s", param->name, param->metavar);
      es_param_describe_range (param, range, sizeof range);
      op_list (ops_using ((EsParamId) id), ", ", " and ", ops, sizeof ops);
      snprintf (text, sizeof text, "%s; %s. Used by %s", param->description, range,
                ops[0] ? ops : "no operation");
      print_entry (out, term, OPTION_COLUMN, text);
    }
}

void
es_cli_print_help (FILE *out)
{
  char ops[128], text[512];
  size_t len;
  unsigned nats = 0;

  op_list (ALL_OPS, "|", "|", ops, sizeof ops);
  fprintf (out,
           "Usage:\n"
           "  " ES_CLI_PROGRAM " %s [OPTION...] INPUT...\n"
           "  " ES_CLI_PROGRAM " info [OPERATION] [--backend=auto|cpu|cuda] [JOB OPTION...]\n"
           "  " ES_CLI_PROGRAM " bench [OPTION...]\n"
           "  " ES_CLI_PROGRAM " bench --image=FILE [OPTION...]\n"
           "  " ES_CLI_PROGRAM " help | -h | --help | --version\n"
           "\n"
           "Commands:\n", ops);
  print_commands (out);
  fputs ("  info      version, backends compiled and in use, device, CPU threads, and\n"
         "            the kernel variants of each operation (or of OPERATION) with\n"
         "            their lessons; with the parameters and definition options of\n"
         "            a job, which variants run it, which cannot and why, and which\n"
         "            run it on a slow path\n"
         "  bench     times each operation, size, backend and kernel variant; with\n"
         "            --image, every variant on that image, as the window's Compare\n"
         "            Variants view does\n"
         "\n"
         "Inputs: PNG (every colour type and bit depth; colour becomes gray with BT.709\n"
         "weights, alpha is ignored), PGM (P2/P5) and text matrices (\"H W\" then H rows of\n"
         "W integer levels, each < L), and TIFF when built with libtiff (gray or RGB,\n"
         "1-16-bit integers, 32/64-bit floats mapped from their finite min..max to 16\n"
         "bits, strips or tiles, any codec libtiff has, BigTIFF, pages). Equalize and\n"
         "sharpen work on 8 bits: a sample v becomes round(v * 255 / maxval), maxval\n"
         "being the full scale (2^depth - 1, or a PGM's maxval). The format\n"
         "comes from the content: an empty file or another format (JPEG, PPM...) is\n"
         "refused at once; inputs\n"
         "may be pipes; a file over 4 GiB is refused.\n"
         "\n"
         "Output options:\n"
         "  -o, --output=OUT        the file to write; or a folder (one that exists, or\n"
         "                          OUT ending in /) that receives OUT/STEM-COMMAND.EXT.\n"
         "                          Default: STEM-COMMAND.png in the current folder\n"
         "                          (STEM: the input's name without its extension).\n"
         "                          Several inputs need a folder; one failing input is\n"
         "                          reported and the others are still processed.\n"
         "                          - (or /dev/stdout) writes to stdout; a FIFO or a\n"
         "                          device is written into, never replaced; an OUT\n"
         "                          that is one of the inputs is refused before\n"
         "                          anything is written.\n"
         "      --format=png|txt|tif\n"
         "                          png (default): an 8-bit RGB PNG through the colormap;\n"
         "                          txt: a text matrix, \"H W\" then one row per line\n"
         "                          (%.5f for entropy, integers otherwise); tif: the\n"
         "                          values as they are, uncompressed (32-bit float for\n"
         "                          entropy, 8-bit gray otherwise; BigTIFF past 4 GiB),\n"
         "                          the job in ImageDescription. An OUT ending in .txt\n"
         "                          implies txt, in .tif or .tiff tif. A multi-page TIFF\n"
         "                          input is a stack: each page is processed, into one\n"
         "                          multi-page TIFF (tif output only).\n"
         "      --raw16             a 16-bit gray PNG of the values with tEXt metadata\n"
         "                          (value = ValueOffset + sample * ValueScale)\n"
         "      --compression=fast|default|small\n"
         "                          how hard PNGs are compressed, on every core; default\n"
         "                          stays within 1.15x the size of libpng's level 6\n", out);
  describe_default_colormaps (ops, sizeof ops);
  snprintf (text, sizeof text,
            "viridis, magma, inferno, cividis or gray; NAME_r reverses it. Default: %s (with "
            "the absolute range 0..255 a gray PNG holds exactly the result's pixels)", ops);
  print_entry (out, "      --colormap=NAME", OPTION_COLUMN, text);
  len = 0;
  text[0] = '\0';
  for (int op = 0; op < ES_N_OPS; op++)
    len += (size_t) snprintf (text + len, sizeof text - len, "%s%s %s", op ? ", " : "absolute (default): ",
                              es_op_name ((EsOp) op), es_op_info ((EsOp) op)->range_text);
  snprintf (text + len, sizeof text - len,
            "; auto: the result's own minimum..maximum (a span under 1e-5 is drawn flat)");
  print_entry (out, "      --range=absolute|auto", OPTION_COLUMN, text);
  for (int op = 0; op < ES_N_OPS; op++)
    if (es_units_convertible ((EsOp) op))
      nats |= 1u << op;
  op_list (nats, ", ", " and ", ops, sizeof ops);
  snprintf (text, sizeof text, "units of %s in txt, raw16 and the colorbar (default nats); normalized: "
            "entropy divided by ln(min(B, n)), 0..1, computed per pixel", ops);
  print_entry (out, "      --units=nats|bits|normalized", OPTION_COLUMN, text);
  fputs ("      --colorbar          draws a labelled colorbar right of the PNG\n"
         "  -q, --quiet             prints neither \"wrote PATH\" nor the progress line\n"
         "\n"
         "Computation options:\n", out);
  print_parameters (out);
  es_cli_print_definition_help (out);
  fputs ("      --backend=auto|cpu|cuda\n"
         "                          auto (default): CUDA when a usable device exists,\n"
         "                          else the CPU (OpenMP); cuda fails without a device\n"
         "      --devices=N,N,...   the CUDA devices to spread bands over (default: the\n"
         "                          ES_DEVICES variable, else every usable device)\n"
         "      --variant=ID        CUDA kernel variant (see 'info'); default: the\n"
         "                          fastest one known. The CPU has one implementation.\n"
         "      --timings           prints upload, kernel, download and wall ms, the\n"
         "                          backend, the variant and Mpx/s per image on stderr\n"
         "      --max-pixels=N      refuses images of more than N pixels (default 2^30)\n"
         "\n", out);
  len = (size_t) snprintf (text, sizeof text, "Bench options (with --backend, --variant,");
  for (int id = 0; id < ES_N_PARAMS && len < sizeof text; id++)
    len += (size_t) snprintf (text + len, sizeof text - len, " --%s,", es_param ((EsParamId) id)->name);
  if (len < sizeof text)
    snprintf (text + len, sizeof text - len, " --max-pixels):");
  print_entry (out, "", 0, text);
  fputs ("      --windows=K,K,...   windows to time (the same as --window=K,K,...: in\n"
         "                          bench, --window, --levels and --amount take\n"
         "                          comma-separated lists); each operation is timed at\n"
         "                          every combination of the values of the parameters\n"
         "                          it reads, and the table gives them in columns\n"
         "      --sizes=N,N,...     sides of the square random images\n"
         "                          (default " ES_BENCH_DEFAULT_SIZES ")\n"
         "      --ops=OP,OP,...     operations (default " ES_BENCH_DEFAULT_OPS ")\n"
         "      --variant=all|ID    every CUDA variant (default) or one\n"
         "      --repeats=N         timed runs after a warm-up run (default 20 on CUDA,\n"
         "                          5 on the CPU); medians are reported\n"
         "      --csv=FILE          also writes the table as CSV with a header row\n"
         "      --image=FILE        times every variant of each operation on FILE\n"
         "                          instead of random images (no --sizes; --repeats\n"
         "                          defaults to 10), with the backend's engine as\n"
         "                          the window uses it: on the CPU its single\n"
         "                          implementation, on CUDA each variant and the floor\n"
         "  The table gives the median kernel and end-to-end (wall) ms, Mpx/s from the\n"
         "  kernel time and, on CUDA, the copy floor (a plain copy of the operation's\n"
         "  bytes), the kernel's multiple of it, effective GB/s, and the speed-up over\n"
         "  the operation's naive variant.\n"
         "\n"
         "Other options:\n"
         "  -h, --help              this help\n"
         "      --version           the version\n"
         "\n"
         "Exit status:\n"
         "  0  success\n"
         "  1  usage error (unknown option, bad number, missing input)\n"
         "  2  input or output error (unreadable, malformed or too large input,\n"
         "     output not writable, stdout included)\n"
         "  3  compute error (a backend failed, out of memory, --backend=cuda without\n"
         "     a usable CUDA device)\n"
         "  128+N  stopped by signal N: SIGINT (130), SIGTERM, SIGHUP; the output in\n"
         "     progress is not written and no temporary file stays; SIGPIPE: 141,\n"
         "     silently\n"
         "  With several inputs: the worst status. Each error is one line on stderr,\n"
         "  \"" ES_CLI_PROGRAM ": FILE: reason\".\n"
         "\n"
         "Examples:\n"
         "  " ES_CLI_PROGRAM " entropy photo.png                  # writes photo-entropy.png\n"
         "  " ES_CLI_PROGRAM " entropy --window=9 --colormap=magma --colorbar photo.png \\\n"
         "      -o heat.png\n"
         "  " ES_CLI_PROGRAM " entropy --units=bits exercise.txt -o entropy.txt\n"
         "  " ES_CLI_PROGRAM " equalize scans/*.png -o out/\n"
         "  " ES_CLI_PROGRAM " sharpen --amount=0.5 --timings --backend=cpu photo.png\n"
         "  " ES_CLI_PROGRAM " bench --sizes=1024,4096 --csv=bench.csv\n"
         "  " ES_CLI_PROGRAM " bench --backend=cpu --ops=entropy --sizes=4096 \\\n"
         "      --windows=3,5,9,17,31 --levels=16,256\n"
         "  " ES_CLI_PROGRAM " bench --image=photo.png --ops=entropy --repeats=20\n", out);
}

void
es_cli_print_version (FILE *out)
{
  fputs (ES_CLI_PROGRAM " " ES_VERSION "\n", out);
}

/* ---- the option table ---- */

enum {
  OPT_PARAM = 256,  /* OPT_PARAM + EsParamId: --window, --levels, --amount */
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
  OPT_MAX_PIXELS,
  OPT_SIZES,
  OPT_WINDOWS,
  OPT_OPS,
  OPT_REPEATS,
  OPT_CSV,
  OPT_IMAGE,
  OPT_VERSION,
  OPT_DEFINITION,   /* OPT_DEFINITION + EsCliDefinitionOption: --rect ... --like */
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
  { "max-pixels", required_argument, NULL, OPT_MAX_PIXELS },
  { "sizes", required_argument, NULL, OPT_SIZES },
  { "windows", required_argument, NULL, OPT_WINDOWS },
  { "ops", required_argument, NULL, OPT_OPS },
  { "repeats", required_argument, NULL, OPT_REPEATS },
  { "csv", required_argument, NULL, OPT_CSV },
  { "image", required_argument, NULL, OPT_IMAGE },
  { "version", no_argument, NULL, OPT_VERSION },
  { "rect", required_argument, NULL, OPT_DEFINITION + ES_CLI_RECT },
  { "disk", required_argument, NULL, OPT_DEFINITION + ES_CLI_DISK },
  { "footprint", required_argument, NULL, OPT_DEFINITION + ES_CLI_FOOTPRINT },
  { "border", required_argument, NULL, OPT_DEFINITION + ES_CLI_BORDER },
  { "binning", required_argument, NULL, OPT_DEFINITION + ES_CLI_BINNING },
  { "mask", required_argument, NULL, OPT_DEFINITION + ES_CLI_MASK },
  { "like", required_argument, NULL, OPT_DEFINITION + ES_CLI_LIKE },
};

#define N_FIXED_OPTIONS (sizeof fixed_options / sizeof fixed_options[0])

/* The fixed options, one per parameter of the table, and the terminator. */
static struct option long_options[N_FIXED_OPTIONS + ES_N_PARAMS + 1];

static void
long_options_init (void)
{
  memcpy (long_options, fixed_options, sizeof fixed_options);
  for (int id = 0; id < ES_N_PARAMS; id++)
    long_options[N_FIXED_OPTIONS + id] = (struct option) {
      es_param ((EsParamId) id)->name, required_argument, NULL, OPT_PARAM + id
    };
  long_options[N_FIXED_OPTIONS + ES_N_PARAMS] = (struct option) { NULL, 0, NULL, 0 };
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
 * to say which kernel variants run that job. */
static unsigned
option_commands (int opt)
{
  if (opt >= OPT_PARAM && opt < OPT_PARAM + ES_N_PARAMS)
    return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
  if (opt >= OPT_DEFINITION)
    return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO;
  switch (opt)
    {
    case OPT_UNITS:
      return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO;
    case 'h':
    case OPT_VERSION:
      return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
    case OPT_BACKEND:
      return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_INFO | ES_CLI_COMMAND_BENCH;
    case OPT_VARIANT:
    case OPT_MAX_PIXELS:
      return ES_CLI_COMMAND_OP | ES_CLI_COMMAND_BENCH;
    case OPT_SIZES:
    case OPT_WINDOWS:
    case OPT_OPS:
    case OPT_REPEATS:
    case OPT_CSV:
    case OPT_IMAGE:
      return ES_CLI_COMMAND_BENCH;
    default:
      return ES_CLI_COMMAND_OP;
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
  if (isspace ((unsigned char) text[0]) || end == text || *end != '\0' || errno == ERANGE
      || v < min || v > max)
    {
      es_cli_usage_error ("--%s=%s: expected an integer in %ld..%ld", option, text, min, max);
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
      es_cli_usage_error ("--max-pixels=%s: expected a positive integer", text);
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

static const Choice formats[] = {
  { "png", ES_EXPORT_PNG }, { "txt", ES_EXPORT_TEXT }, { "tif", ES_EXPORT_TIFF }, { "tiff", ES_EXPORT_TIFF }, { NULL, 0 }
};
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
                              i == 0 ? "" : i == n - 1 ? " or " : ", ", choices[i].name);
  es_cli_usage_error ("--%s=%s: expected %s", option, text, names);
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
  if (isspace ((unsigned char) text[0]) || end == text || *end != '\0' || errno == ERANGE
      || !isfinite (v) || (param->digits == 0 && !is_integer_text (text)))
    {
      es_param_describe_range (param, range, sizeof range);
      es_cli_usage_error ("--%s=%s: expected %s, %s", param->name, text,
                          param->digits == 0 ? "an integer" : "a number", range);
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
parse_list (const char *option, const char *text, const char *items, ListItemFunc parse_item,
            void *data)
{
  const char *p = text;

  for (;;)
    {
      char item[32];
      size_t len = strcspn (p, ",");

      if (len == 0 || len >= sizeof item)
        {
          es_cli_usage_error ("--%s=%s: expected %s separated by commas", option, text, items);
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
      es_cli_usage_error ("--sizes=%s: at most %d sizes", list, ES_BENCH_MAX_SIZES);
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
      op_list (ALL_OPS, ", ", ", ", ops, sizeof ops);
      es_cli_usage_error ("--ops: unknown operation '%s' (%s)", item, ops);
      return false;
    }
  for (int i = 0; i < bench->n_ops; i++)
    if (bench->ops[i] == op)
      {
        es_cli_usage_error ("--ops: '%s' is listed twice", item);
        return false;
      }
  bench->ops[bench->n_ops++] = op;
  return true;
}

/* One value of a parameter's list: checked by the parameter table as a
 * single value would be, and kept in the bench's list. */
typedef struct {
  const char *option;  /* as given: "windows" or "window" */
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
      es_cli_usage_error ("--%s=%s: at most %d values", pl->option, list, ES_BENCH_MAX_VALUES);
      return false;
    }
  if (!parse_param (pl->param, item, &job))
    return false;
  value = es_job_get_param (&job, id);
  for (int i = 0; i < bench->n_values[id]; i++)
    if (bench->values[id][i] == value)
      {
        es_cli_usage_error ("--%s: '%s' is listed twice", pl->option, item);
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
  *options = (EsCliOptions) {
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

int
es_cli_parse_options (int argc, char **argv, EsCliCommand command, EsCliOptions *o)
{
  long number;
  int opt, value;

  long_options_init ();
  opterr = 0;  /* our own one-line messages */
  optind = 1;
  while ((opt = getopt_long (argc, argv, ":o:qh", long_options, NULL)) != -1)
    {
      if (opt == '?')
        {
          if (optopt > 0 && optopt < 256)
            return es_cli_usage_error ("unknown option '-%c'", optopt);
          return es_cli_usage_error ("unknown option '%s'", argv[optind - 1]);
        }
      if (opt == ':')
        {
          if (optopt > 0 && optopt < 256)
            return es_cli_usage_error ("option '-%c' needs a value", optopt);
          return es_cli_usage_error ("option '%s' needs a value", argv[optind - 1]);
        }
      if (!(option_commands (opt) & command))
        {
          if (opt == 'o' || opt == 'q')
            return es_cli_usage_error ("option '-%c' does not apply to '%s'", opt, argv[0]);
          return es_cli_usage_error ("option '--%s' does not apply to '%s'", option_name (opt), argv[0]);
        }

      if (opt >= OPT_PARAM && opt < OPT_PARAM + ES_N_PARAMS)
        {
          const EsParam *param = es_param ((EsParamId) (opt - OPT_PARAM));

          /* bench times lists of values; the other commands take one. */
          if (command == ES_CLI_COMMAND_BENCH ? !parse_param_list (param->name, param, optarg, o)
                                              : !parse_param (param, optarg, &o->job))
            return ES_EXIT_USAGE;
          if (param->id == ES_PARAM_LEVELS)
            o->levels_given = true;
          if (param->id == ES_PARAM_WINDOW)
            {
              o->window_given = true;
              o->job.definition.shape = ES_SHAPE_SQUARE;
            }
          continue;
        }
      if (opt >= OPT_DEFINITION)
        {
          if (!es_cli_parse_definition_option ((EsCliDefinitionOption) (opt - OPT_DEFINITION), optarg, o))
            return ES_EXIT_USAGE;
          continue;
        }
      switch (opt)
        {
        case 'h':
          es_cli_print_help (stdout);
          return ES_EXIT_OK;
        case OPT_VERSION:
          es_cli_print_version (stdout);
          return ES_EXIT_OK;
        case 'o':
          if (optarg[0] == '\0')
            return es_cli_usage_error ("-o: the output name is empty");
          o->output = optarg;
          break;
        case 'q':
          o->quiet = true;
          break;
        case OPT_COLORMAP:
          {
            EsColormap map;
            bool reversed;
            if (!es_colormap_from_name (optarg, &map, &reversed))
              return es_cli_usage_error ("--colormap=%s: unknown colormap (viridis, magma, inferno, "
                                         "cividis, gray, or one of them with _r)", optarg);
            o->colormap = optarg;
          }
          break;
        case OPT_RAW16:
          o->raw16 = true;
          break;
        case OPT_FORMAT:
          if (!parse_choice ("format", optarg, formats, &value))
            return ES_EXIT_USAGE;
          o->format = (EsExportFormat) value;
          o->format_set = true;
          break;
        case OPT_COMPRESSION:
          if (!es_compression_from_name (optarg, &o->compression))
            return es_cli_usage_error ("--compression=%s: expected fast, default or small", optarg);
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
          o->units = value == UNITS_NORMALIZED ? ES_UNITS_NATS : (EsUnits) value;
          break;
        case OPT_COLORBAR:
          o->colorbar = true;
          break;
        case OPT_BACKEND:
          if (!es_backend_from_name (optarg, &o->backend))
            return es_cli_usage_error ("--backend=%s: expected auto, cpu or cuda", optarg);
          break;
        case OPT_VARIANT:
          o->variant = optarg;
          break;
        case OPT_DEVICES:
          /* The engine reads the list (and says what is wrong with it). */
          setenv ("ES_DEVICES", optarg, 1);
          break;
        case OPT_TIMINGS:
          o->timings = true;
          break;
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
            return es_cli_usage_error ("--csv: the file name is empty");
          o->bench.csv_path = optarg;
          break;
        case OPT_IMAGE:
          if (optarg[0] == '\0')
            return es_cli_usage_error ("--image: the file name is empty");
          o->bench.image = optarg;
          break;
        default:
          return es_cli_usage_error ("unknown option '%s'", argv[optind - 1]);
        }
    }
  es_cli_definition_finish (o);
  return -1;
}
