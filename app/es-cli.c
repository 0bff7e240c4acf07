/* entroscope-cli: local entropy, equalization, sharpening and quantization from a shell. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-bench.h"
#include "es-compare.h"
#include "es-load.h"
#include "es-pipeline.h"

/* ES_VERSION comes from project() in meson.build. */

#define PROGRAM "entroscope-cli"

static const char help_text[] =
  "Usage:\n"
  "  " PROGRAM " entropy|equalize|sharpen|quantize [OPTION...] INPUT...\n"
  "  " PROGRAM " info [--backend=auto|cpu|cuda]\n"
  "  " PROGRAM " bench [OPTION...]\n"
  "  " PROGRAM " bench --image=FILE [OPTION...]\n"
  "  " PROGRAM " help | -h | --help | --version\n"
  "\n"
  "Commands:\n"
  "  entropy   local entropy (nats) of the image quantized to L levels, in a KxK\n"
  "            window clipped to the image\n"
  "  equalize  histogram equalization, bit-identical to OpenCV's equalizeHist\n"
  "  sharpen   c + A*(4c - N - S - E - W), borders replicated (at A = 1 the 3x3\n"
  "            kernel [0 -1 0; -1 5 -1; 0 -1 0], as OpenCV's filter2D)\n"
  "  quantize  the image reduced to L levels: level = floor(v * L / 2^depth)\n"
  "  info      version, backends compiled and in use, device, CPU threads, and\n"
  "            the kernel variants of each operation with their lessons\n"
  "  bench     times each operation, size, backend and kernel variant; with\n"
  "            --image, every variant on that image, as the window's Compare\n"
  "            Variants view does\n"
  "\n"
  "Inputs: PNG (every colour type and bit depth; colour becomes gray with BT.709\n"
  "weights, alpha is ignored), PGM (P2/P5) and text matrices (\"H W\" then H rows of\n"
  "W integer levels, each < L). Equalize and sharpen work on 8 bits (16-bit\n"
  "samples are reduced with v >> 8).\n"
  "\n"
  "Output options:\n"
  "  -o, --output=OUT        the file to write; or a folder (one that exists, or\n"
  "                          OUT ending in /) that receives OUT/STEM-COMMAND.EXT.\n"
  "                          Default: STEM-COMMAND.png in the current folder\n"
  "                          (STEM: the input's name without its extension).\n"
  "                          Several inputs need a folder; one failing input is\n"
  "                          reported and the others are still processed.\n"
  "      --format=png|txt    png (default): an 8-bit RGB PNG through the colormap;\n"
  "                          txt: a text matrix, \"H W\" then one row per line\n"
  "                          (%.5f for entropy, integers otherwise). An OUT ending\n"
  "                          in .txt implies txt.\n"
  "      --raw16             a 16-bit gray PNG of the values with tEXt metadata\n"
  "                          (value = ValueOffset + sample * ValueScale)\n"
  "      --colormap=NAME     viridis, magma, inferno, cividis or gray; NAME_r\n"
  "                          reverses it. Default: viridis for entropy, gray for\n"
  "                          the others (with the absolute range a gray PNG holds\n"
  "                          exactly the equalized or sharpened pixels)\n"
  "      --range=absolute|auto\n"
  "                          absolute (default): entropy 0..ln(min(L, K*K)),\n"
  "                          quantize 0..L-1, equalize and sharpen 0..255;\n"
  "                          auto: the result's own minimum..maximum\n"
  "      --units=nats|bits   entropy units of txt, raw16 and the colorbar (nats)\n"
  "      --colorbar          draws a labelled colorbar right of the PNG\n"
  "  -q, --quiet             prints neither \"wrote PATH\" nor the progress line\n"
  "\n"
  "Computation options:\n"
  "      --window=K          entropy window, odd, 3..31 (default 5)\n"
  "      --levels=L          quantization levels, 2..256 (default 16)\n"
  "      --amount=A          sharpen amount, a number >= 0 (default 1)\n"
  "      --backend=auto|cpu|cuda\n"
  "                          auto (default): CUDA when a usable device exists,\n"
  "                          else the CPU (OpenMP); cuda fails without a device\n"
  "      --devices=N,N,...   the CUDA devices to spread bands over (default: the\n"
  "                          ES_DEVICES variable, else every usable device)\n"
  "      --variant=ID        CUDA kernel variant (see 'info'); default: the\n"
  "                          fastest one known. The CPU has one implementation.\n"
  "      --timings           prints upload, kernel, download and wall ms, the\n"
  "                          backend, the variant and Mpx/s per image on stderr\n"
  "      --max-pixels=N      refuses images of more than N pixels (default 2^30)\n"
  "\n"
  "Bench options (with --backend, --variant, --window, --levels, --amount,\n"
  "--max-pixels):\n"
  "      --sizes=N,N,...     sides of the square random images\n"
  "                          (default 1024,4096,8192)\n"
  "      --ops=OP,OP,...     operations (default entropy,equalize,sharpen)\n"
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
  "     output not writable)\n"
  "  3  compute error (a backend failed, out of memory, --backend=cuda without\n"
  "     a usable CUDA device)\n"
  "  With several inputs: the worst status. Each error is one line on stderr,\n"
  "  \"" PROGRAM ": FILE: reason\".\n"
  "\n"
  "Examples:\n"
  "  " PROGRAM " entropy photo.png                  # writes photo-entropy.png\n"
  "  " PROGRAM " entropy --window=9 --colormap=magma --colorbar photo.png \\\n"
  "      -o heat.png\n"
  "  " PROGRAM " entropy --units=bits exercise.txt -o entropy.txt\n"
  "  " PROGRAM " equalize scans/*.png -o out/\n"
  "  " PROGRAM " sharpen --amount=0.5 --timings --backend=cpu photo.png\n"
  "  " PROGRAM " bench --sizes=1024,4096 --csv=bench.csv\n"
  "  " PROGRAM " bench --image=photo.png --ops=entropy --repeats=20\n";

/* ---- error reporting (shared with es-bench.c) ---- */

static bool progress_shown;
static bool notice_shown;

static void
progress_clear (void)
{
  if (progress_shown)
    {
      fputs ("\r\033[K", stderr);
      progress_shown = false;
    }
}

void
es_cli_report (const char *subject, const char *format, ...)
{
  char line[1024];
  size_t len = 0;
  va_list args;

  progress_clear ();
  if (subject)
    len = (size_t) snprintf (line, sizeof line, "%s: ", subject);
  if (len < sizeof line)
    {
      va_start (args, format);
      vsnprintf (line + len, sizeof line - len, format, args);
      va_end (args);
    }
  /* One line, whatever a file name or a message holds. */
  for (char *c = line; *c; c++)
    if (iscntrl ((unsigned char) *c))
      *c = ' ';
  fprintf (stderr, PROGRAM ": %s\n", line);
}

int
es_cli_exit_status (EsErrorCode code)
{
  switch (code)
    {
    case ES_OK:
      return ES_EXIT_OK;
    case ES_ERROR_INVALID:
      return ES_EXIT_USAGE;
    case ES_ERROR_IO:
    case ES_ERROR_FORMAT:
    case ES_ERROR_LIMIT:
      return ES_EXIT_DATA;
    case ES_ERROR_NO_MEMORY:
    case ES_ERROR_COMPUTE:
    case ES_ERROR_UNAVAILABLE:
    default:
      return ES_EXIT_COMPUTE;
    }
}

int
es_cli_report_error (const char *subject, const EsError *error)
{
  size_t len = subject ? strlen (subject) : 0;

  if (subject && strncmp (error->message, subject, len) == 0 && error->message[len] == ':')
    es_cli_report (NULL, "%s", error->message);
  else
    es_cli_report (subject, "%s", error->message);
  return es_cli_exit_status (error->code);
}

static int
usage_error (const char *format, ...) __attribute__ ((format (printf, 1, 2)));

static int
usage_error (const char *format, ...)
{
  char message[512];
  va_list args;

  va_start (args, format);
  vsnprintf (message, sizeof message, format, args);
  va_end (args);
  es_cli_report (NULL, "%s (see '" PROGRAM " --help')", message);
  return ES_EXIT_USAGE;
}

/* ---- options ---- */

typedef enum {
  COMMAND_OP = 1 << 0,
  COMMAND_INFO = 1 << 1,
  COMMAND_BENCH = 1 << 2,
} CommandKind;

enum {
  OPT_WINDOW = 256,
  OPT_LEVELS,
  OPT_AMOUNT,
  OPT_COLORMAP,
  OPT_RAW16,
  OPT_FORMAT,
  OPT_RANGE,
  OPT_UNITS,
  OPT_COLORBAR,
  OPT_BACKEND,
  OPT_VARIANT,
  OPT_DEVICES,
  OPT_TIMINGS,
  OPT_MAX_PIXELS,
  OPT_SIZES,
  OPT_OPS,
  OPT_REPEATS,
  OPT_CSV,
  OPT_IMAGE,
  OPT_VERSION,
};

static const struct option long_options[] = {
  { "output", required_argument, NULL, 'o' },
  { "quiet", no_argument, NULL, 'q' },
  { "help", no_argument, NULL, 'h' },
  { "window", required_argument, NULL, OPT_WINDOW },
  { "levels", required_argument, NULL, OPT_LEVELS },
  { "amount", required_argument, NULL, OPT_AMOUNT },
  { "colormap", required_argument, NULL, OPT_COLORMAP },
  { "raw16", no_argument, NULL, OPT_RAW16 },
  { "format", required_argument, NULL, OPT_FORMAT },
  { "range", required_argument, NULL, OPT_RANGE },
  { "units", required_argument, NULL, OPT_UNITS },
  { "colorbar", no_argument, NULL, OPT_COLORBAR },
  { "backend", required_argument, NULL, OPT_BACKEND },
  { "variant", required_argument, NULL, OPT_VARIANT },
  { "devices", required_argument, NULL, OPT_DEVICES },
  { "timings", no_argument, NULL, OPT_TIMINGS },
  { "max-pixels", required_argument, NULL, OPT_MAX_PIXELS },
  { "sizes", required_argument, NULL, OPT_SIZES },
  { "ops", required_argument, NULL, OPT_OPS },
  { "repeats", required_argument, NULL, OPT_REPEATS },
  { "csv", required_argument, NULL, OPT_CSV },
  { "image", required_argument, NULL, OPT_IMAGE },
  { "version", no_argument, NULL, OPT_VERSION },
  { NULL, 0, NULL, 0 },
};

/* Which commands accept an option; anything else is a usage error. */
static unsigned
option_commands (int opt)
{
  switch (opt)
    {
    case 'h':
    case OPT_VERSION:
      return COMMAND_OP | COMMAND_INFO | COMMAND_BENCH;
    case OPT_BACKEND:
      return COMMAND_OP | COMMAND_INFO | COMMAND_BENCH;
    case OPT_WINDOW:
    case OPT_LEVELS:
    case OPT_AMOUNT:
    case OPT_VARIANT:
    case OPT_MAX_PIXELS:
      return COMMAND_OP | COMMAND_BENCH;
    case OPT_SIZES:
    case OPT_OPS:
    case OPT_REPEATS:
    case OPT_CSV:
    case OPT_IMAGE:
      return COMMAND_BENCH;
    default:
      return COMMAND_OP;
    }
}

typedef struct {
  const char *output;
  bool quiet;
  bool timings;
  bool colorbar;
  bool raw16;
  bool format_set;
  EsExportFormat format;
  const char *colormap;
  EsRangeMode range;
  EsUnits units;
  int window;
  int levels;
  float amount;
  EsBackendChoice backend;
  const char *variant;
  unsigned long long max_pixels;  /* 0: the default budget */
  EsBenchOptions bench;
  const char *bench_image;        /* bench --image: compare variants on this file */
} CliOptions;

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
      usage_error ("--%s=%s: expected an integer in %ld..%ld", option, text, min, max);
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
      usage_error ("--max-pixels=%s: expected a positive integer", text);
      return false;
    }
  *value = v;
  return true;
}

static bool
parse_amount (const char *text, float *value)
{
  char *end;
  double v;

  errno = 0;
  v = strtod (text, &end);
  if (isspace ((unsigned char) text[0]) || end == text || *end != '\0' || errno == ERANGE
      || !isfinite (v) || v < 0.0 || v > 1e6)
    {
      usage_error ("--amount=%s: expected a number in 0..1000000", text);
      return false;
    }
  *value = (float) v;
  return true;
}

static bool
parse_sizes (const char *text, EsBenchOptions *bench)
{
  const char *p = text;

  bench->n_sizes = 0;
  for (;;)
    {
      char item[32];
      size_t len = strcspn (p, ",");
      long side;

      if (bench->n_sizes == ES_BENCH_MAX_SIZES)
        {
          usage_error ("--sizes=%s: at most %d sizes", text, ES_BENCH_MAX_SIZES);
          return false;
        }
      if (len == 0 || len >= sizeof item)
        {
          usage_error ("--sizes=%s: expected sides separated by commas", text);
          return false;
        }
      memcpy (item, p, len);
      item[len] = '\0';
      if (!parse_long ("sizes", item, 1, ES_MAX_SIDE, &side))
        return false;
      bench->sizes[bench->n_sizes++] = (int) side;
      if (p[len] == '\0')
        return true;
      p += len + 1;
    }
}

static bool
parse_ops (const char *text, EsBenchOptions *bench)
{
  const char *p = text;

  bench->n_ops = 0;
  for (;;)
    {
      char item[32];
      size_t len = strcspn (p, ",");
      EsOp op;

      if (len == 0 || len >= sizeof item)
        {
          usage_error ("--ops=%s: expected operations separated by commas", text);
          return false;
        }
      memcpy (item, p, len);
      item[len] = '\0';
      if (!es_op_from_name (item, &op))
        {
          usage_error ("--ops: unknown operation '%s' (entropy, equalize, sharpen, quantize)", item);
          return false;
        }
      for (int i = 0; i < bench->n_ops; i++)
        if (bench->ops[i] == op)
          {
            usage_error ("--ops: '%s' is listed twice", item);
            return false;
          }
      bench->ops[bench->n_ops++] = op;
      if (p[len] == '\0')
        return true;
      p += len + 1;
    }
}

static const char *
option_name (int opt)
{
  for (const struct option *o = long_options; o->name; o++)
    if (o->val == opt)
      return o->name;
  return "?";
}

/* Parses argv (argv[0] is the command word) into options and the remaining
 * operands. Returns -1 to go on, else the exit status (for --help too). */
static int
parse_options (int argc, char **argv, CommandKind kind, CliOptions *o)
{
  long number;
  int opt;

  opterr = 0;  /* our own one-line messages */
  optind = 1;
  while ((opt = getopt_long (argc, argv, ":o:qh", long_options, NULL)) != -1)
    {
      if (opt == '?')
        {
          if (optopt > 0 && optopt < 256)
            return usage_error ("unknown option '-%c'", optopt);
          return usage_error ("unknown option '%s'", argv[optind - 1]);
        }
      if (opt == ':')
        {
          if (optopt > 0 && optopt < 256)
            return usage_error ("option '-%c' needs a value", optopt);
          return usage_error ("option '%s' needs a value", argv[optind - 1]);
        }
      if (!(option_commands (opt) & kind))
        {
          if (opt == 'o' || opt == 'q')
            return usage_error ("option '-%c' does not apply to '%s'", opt, argv[0]);
          return usage_error ("option '--%s' does not apply to '%s'", option_name (opt), argv[0]);
        }

      switch (opt)
        {
        case 'h':
          fputs (help_text, stdout);
          return ES_EXIT_OK;
        case OPT_VERSION:
          puts (PROGRAM " " ES_VERSION);
          return ES_EXIT_OK;
        case 'o':
          if (optarg[0] == '\0')
            return usage_error ("-o: the output name is empty");
          o->output = optarg;
          break;
        case 'q':
          o->quiet = true;
          break;
        case OPT_WINDOW:
          if (!parse_long ("window", optarg, ES_WINDOW_MIN, ES_WINDOW_MAX, &number))
            return ES_EXIT_USAGE;
          if (number % 2 == 0)
            return usage_error ("--window=%s: the window must be odd (3, 5, ... 31)", optarg);
          o->window = (int) number;
          break;
        case OPT_LEVELS:
          if (!parse_long ("levels", optarg, ES_LEVELS_MIN, ES_LEVELS_MAX, &number))
            return ES_EXIT_USAGE;
          o->levels = (int) number;
          break;
        case OPT_AMOUNT:
          if (!parse_amount (optarg, &o->amount))
            return ES_EXIT_USAGE;
          break;
        case OPT_COLORMAP:
          {
            EsColormap map;
            bool reversed;
            if (!es_colormap_from_name (optarg, &map, &reversed))
              return usage_error ("--colormap=%s: unknown colormap (viridis, magma, inferno, "
                                  "cividis, gray, or one of them with _r)", optarg);
            o->colormap = optarg;
          }
          break;
        case OPT_RAW16:
          o->raw16 = true;
          break;
        case OPT_FORMAT:
          if (strcmp (optarg, "png") == 0)
            o->format = ES_EXPORT_PNG;
          else if (strcmp (optarg, "txt") == 0)
            o->format = ES_EXPORT_TEXT;
          else
            return usage_error ("--format=%s: expected png or txt", optarg);
          o->format_set = true;
          break;
        case OPT_RANGE:
          if (strcmp (optarg, "absolute") == 0)
            o->range = ES_RANGE_ABSOLUTE;
          else if (strcmp (optarg, "auto") == 0)
            o->range = ES_RANGE_AUTO;
          else
            return usage_error ("--range=%s: expected absolute or auto", optarg);
          break;
        case OPT_UNITS:
          if (strcmp (optarg, "nats") == 0)
            o->units = ES_UNITS_NATS;
          else if (strcmp (optarg, "bits") == 0)
            o->units = ES_UNITS_BITS;
          else
            return usage_error ("--units=%s: expected nats or bits", optarg);
          break;
        case OPT_COLORBAR:
          o->colorbar = true;
          break;
        case OPT_BACKEND:
          if (!es_backend_from_name (optarg, &o->backend))
            return usage_error ("--backend=%s: expected auto, cpu or cuda", optarg);
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
            return usage_error ("--csv: the file name is empty");
          o->bench.csv_path = optarg;
          break;
        case OPT_IMAGE:
          if (optarg[0] == '\0')
            return usage_error ("--image: the file name is empty");
          o->bench_image = optarg;
          break;
        default:
          return usage_error ("unknown option '%s'", argv[optind - 1]);
        }
    }
  return -1;
}

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
    usage_error ("--variant=%s: this build has no CUDA kernel variants", id);
  else
    usage_error ("--variant=%s: %s has no such variant (%s)", id, es_op_name (op), list);
  return false;
}

/* ---- entropy, equalize, sharpen, quantize ---- */

static bool
ends_with (const char *text, const char *suffix)
{
  size_t n = strlen (text), m = strlen (suffix);
  return n >= m && strcmp (text + n - m, suffix) == 0;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

/* DIR/STEM-OP.EXT, where STEM is the input's name without its last
 * extension (a leading dot is part of the name, not an extension). */
static char *
output_path_for (const char *dir, const char *input, EsOp op, const char *ext)
{
  const char *name = base_name (input);
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
progress_show (int index, int count, const char *input)
{
  char name[256];

  /* Keep the line from wrapping on a narrow terminal. */
  snprintf (name, sizeof name, "%s", base_name (input));
  for (char *c = name; *c; c++)
    if (iscntrl ((unsigned char) *c))
      *c = '?';
  fprintf (stderr, "\r\033[K[%d/%d] %.60s", index, count, name);
  fflush (stderr);
  progress_shown = true;
}

static void
print_timings (const char *input, const EsResult *result)
{
  const EsTiming *t = &result->timing;
  double mpx = (double) result->values.width * result->values.height / 1e6;

  progress_clear ();
  fprintf (stderr,
           "%s: upload %.3f ms, kernel %.3f ms, download %.3f ms, wall %.3f ms, "
           "backend %s, variant %s, %.1f Mpx/s\n",
           input, t->upload_ms, t->kernel_ms, t->download_ms, t->wall_ms,
           es_backend_name (t->backend), t->variant ? t->variant : "-",
           t->kernel_ms > 0.0 ? mpx / (t->kernel_ms / 1e3) : 0.0);
}

/* Loads, runs and writes one input; returns its exit status. */
static int
process_one (EsEngine *engine, const EsViewParams *params, const CliOptions *o,
             EsExportFormat format, const char *input, const char *output, EsResult *result)
{
  EsImage image = { 0 };
  EsError error;
  const char *notice;
  int status = ES_EXIT_OK;

  es_error_clear (&error);
  if (!es_load_file (input, params->job.levels, &image, &error))
    return es_cli_report_error (input, &error);

  if (!es_pipeline_run (engine, &image, params, result, &error))
    status = es_cli_report_error (input, &error);
  es_image_clear (&image);

  /* A fallback's reason is said once per process, not once per image. */
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
    return es_cli_report_error (output, &error);

  if (!o->quiet)
    {
      progress_clear ();
      printf ("wrote %s\n", output);
      fflush (stdout);
    }
  return ES_EXIT_OK;
}

static int
run_operation (EsOp op, CliOptions *o, char **inputs, int n_inputs)
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

  if (n_inputs == 0)
    return usage_error ("%s: no input file", es_op_name (op));

  if (o->output)
    to_dir = ends_with (o->output, "/") || (stat (o->output, &st) == 0 && S_ISDIR (st.st_mode));
  if (n_inputs > 1 && o->output && !to_dir)
    return usage_error ("%d inputs need -o DIR/ (a folder), not the file '%s'", n_inputs, o->output);
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
        return usage_error ("--raw16 writes a PNG; it cannot be combined with a text matrix");
      format = ES_EXPORT_RAW16;
    }
  if (o->colorbar && format != ES_EXPORT_PNG)
    return usage_error ("--colorbar applies to PNG heatmaps only, not to %s",
                        format == ES_EXPORT_TEXT ? "text matrices" : "--raw16");
  if (o->variant && !check_variant (op, o->variant))
    return ES_EXIT_USAGE;

  es_view_params_init (&params, op);
  params.job.window = o->window;
  params.job.levels = o->levels;
  params.job.amount = o->amount;
  params.job.variant = o->variant;
  params.range = o->range;
  params.units = o->units;
  params.reversed = false;
  if (o->colormap)
    es_colormap_from_name (o->colormap, &params.colormap, &params.reversed);
  else
    params.colormap = op == ES_OP_ENTROPY ? ES_COLORMAP_VIRIDIS : ES_COLORMAP_GRAY;

  es_error_clear (&error);
  if (!es_job_validate (&params.job, &error))
    return usage_error ("%s", error.message);
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
      const char *ext = format == ES_EXPORT_TEXT ? "txt" : "png";
      char *output;
      bool clash = false;
      int status;

      if (show_progress)
        progress_show (i + 1, n_inputs, inputs[i]);

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
          if (status == ES_EXIT_OK)
            written[n_written++] = output;
          else
            free (output);
        }
      if (status > worst)
        worst = status;
    }
  progress_clear ();

  for (int j = 0; j < n_written; j++)
    free (written[j]);
  free (written);
  es_result_clear (&result);
  es_engine_free (engine);
  return worst;
}

/* ---- info ---- */

static int
run_info (const CliOptions *o)
{
  EsEngine *engine;
  EsError error;
  const char *reason;

  es_error_clear (&error);
  engine = es_engine_new (o->backend, &error);
  if (!engine)
    return es_cli_report_error (NULL, &error);

  printf (PROGRAM " " ES_VERSION "\n");
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
worse_status (int a, int b)
{
  return a > b ? a : b;
}

static void
print_compare_row (EsOp op, const EsCompareRow *row, double floor_ms, FILE *csv)
{
  char floor_text[32] = "-", multiple_text[32] = "-";

  if (isfinite (floor_ms))
    snprintf (floor_text, sizeof floor_text, "%.4f", floor_ms);
  if (isfinite (row->floor_multiple))
    snprintf (multiple_text, sizeof multiple_text, "%.2fx", row->floor_multiple);
  printf ("%-9s %-7s %-22s %7d %10.4f %10.4f %9s %8s  %s%s\n", es_op_name (op),
          es_backend_name (row->backend), row->id, row->repeats, row->kernel_ms, row->wall_ms,
          floor_text, multiple_text, row->label, row->is_default ? " (default)" : "");
  if (csv)
    {
      fprintf (csv, "%s,%s,%s,%d,%.4f,%.4f,", es_op_name (op), es_backend_name (row->backend),
               row->id, row->repeats, row->kernel_ms, row->wall_ms);
      if (isfinite (floor_ms))
        fprintf (csv, "%.4f", floor_ms);
      fputc (',', csv);
      if (isfinite (row->floor_multiple))
        fprintf (csv, "%.3f", row->floor_multiple);
      fprintf (csv, ",\"%s\"\n", row->label);
    }
}

/* bench --image: es_compare_variants for each operation on one file, the
 * numbers the window's Compare Variants view shows for that image. */
static int
run_bench_image (CliOptions *o)
{
  const EsBenchOptions *bench = &o->bench;
  int repeats = bench->repeats ? bench->repeats : ES_COMPARE_DEFAULT_REPEATS;
  EsAtomicFile *csv_file = NULL;
  EsEngine *engine = NULL;
  EsImage image = { 0 };
  EsError error;
  FILE *csv = NULL;
  int status = ES_EXIT_OK;

  if (bench->n_sizes > 0)
    return usage_error ("--image and --sizes exclude each other: the image sets the size");
  if (o->variant && strcmp (o->variant, "all") != 0)
    return usage_error ("--image compares every variant; --variant=%s does not apply", o->variant);

  es_error_clear (&error);
  if (!es_load_file (o->bench_image, o->levels, &image, &error))
    return es_cli_report_error (o->bench_image, &error);
  engine = es_compare_engine_new (o->backend, &error);
  if (!engine)
    {
      status = es_cli_report_error ("bench", &error);
      goto out;
    }
  if (bench->csv_path)
    {
      csv_file = es_atomic_file_open (bench->csv_path, &error);
      if (!csv_file)
        {
          status = es_cli_report_error (bench->csv_path, &error);
          goto out;
        }
      csv = es_atomic_file_stream (csv_file);
      fputs ("op,backend,variant,repeats,kernel_ms,wall_ms,floor_ms,floor_multiple,label\n", csv);
    }

  printf ("# %s: %dx%d, %d-bit%s; window %d, levels %d, amount %g; a warm-up run, then "
          "medians of %d runs\n", base_name (o->bench_image), image.width, image.height,
          image.depth, image.levels ? " levels (text matrix)" : "", o->window, o->levels,
          (double) o->amount, repeats);
  printf ("# engine: %s\n", es_engine_describe (engine));
  if (es_engine_backend (engine) != ES_BACKEND_CUDA)
    printf ("# kernel variants and the copy floor need CUDA: %s\n",
            es_engine_cuda_reason (engine)[0] ? es_engine_cuda_reason (engine)
                                              : "the CPU backend was asked for");
  printf ("%-9s %-7s %-22s %7s %10s %10s %9s %8s  %s\n", "op", "backend", "variant", "repeats",
          "kernel ms", "wall ms", "floor ms", "x floor", "label");
  fflush (stdout);

  for (int i = 0; i < bench->n_ops; i++)
    {
      EsJob job = ES_JOB_INIT (bench->ops[i]);
      EsCompareRow *rows;
      size_t n_rows;
      double floor_ms;

      job.window = o->window;
      job.levels = o->levels;
      job.amount = o->amount;
      es_error_clear (&error);
      if (!es_compare_variants (engine, &image, &job, repeats, NULL, NULL, &rows, &n_rows,
                                &floor_ms, &error))
        {
          char subject[64];

          snprintf (subject, sizeof subject, "bench %s", es_op_name (job.op));
          status = worse_status (status, es_cli_report_error (subject, &error));
          continue;
        }
      for (size_t r = 0; r < n_rows; r++)
        print_compare_row (job.op, &rows[r], floor_ms, csv);
      fflush (stdout);
      free (rows);
    }

  if (csv_file)
    {
      es_error_clear (&error);
      if (!es_atomic_file_commit (csv_file, &error))
        status = worse_status (status, es_cli_report_error (bench->csv_path, &error));
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

static int
run_bench (CliOptions *o, int n_operands)
{
  EsBenchOptions *bench = &o->bench;

  if (n_operands > 0)
    return usage_error ("bench takes no input files; --image=FILE times the variants on one");
  if (bench->n_ops == 0)
    {
      static const EsOp ops[] = { ES_OP_ENTROPY, ES_OP_EQUALIZE, ES_OP_SHARPEN };
      for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        bench->ops[bench->n_ops++] = ops[i];
    }
  if (o->bench_image)
    {
      if (o->max_pixels)
        es_image_set_max_pixels (o->max_pixels);
      return run_bench_image (o);
    }
  if (bench->n_sizes == 0)
    {
      static const int sizes[] = { 1024, 4096, 8192 };
      for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bench->sizes[bench->n_sizes++] = sizes[i];
    }
  if (o->variant && strcmp (o->variant, "all") != 0)
    {
      for (int i = 0; i < bench->n_ops; i++)
        if (!check_variant (bench->ops[i], o->variant))
          return ES_EXIT_USAGE;
      bench->variant = o->variant;
    }
  bench->backend = o->backend;
  bench->window = o->window;
  bench->levels = o->levels;
  bench->amount = o->amount;
  if (o->max_pixels)
    es_image_set_max_pixels (o->max_pixels);
  return es_bench_run (bench);
}

int
main (int argc, char **argv)
{
  CliOptions options = {
    .format = ES_EXPORT_PNG,
    .range = ES_RANGE_ABSOLUTE,
    .units = ES_UNITS_NATS,
    .window = 5,
    .levels = 16,
    .amount = 1.0f,
    .backend = ES_BACKEND_AUTO,
  };
  const char *command;
  CommandKind kind;
  EsOp op = ES_OP_ENTROPY;
  int status;

  if (argc < 2)
    return usage_error ("no command given");
  command = argv[1];
  if (strcmp (command, "--help") == 0 || strcmp (command, "-h") == 0
      || strcmp (command, "help") == 0)
    {
      fputs (help_text, stdout);
      return ES_EXIT_OK;
    }
  if (strcmp (command, "--version") == 0)
    {
      puts (PROGRAM " " ES_VERSION);
      return ES_EXIT_OK;
    }

  if (strcmp (command, "info") == 0)
    kind = COMMAND_INFO;
  else if (strcmp (command, "bench") == 0)
    kind = COMMAND_BENCH;
  else if (es_op_from_name (command, &op))
    kind = COMMAND_OP;
  else if (command[0] == '-')
    return usage_error ("expected a command before '%s'", command);
  else
    return usage_error ("unknown command '%s'", command);

  status = parse_options (argc - 1, argv + 1, kind, &options);
  if (status >= 0)
    return status;
  /* getopt_long permuted the operands to the end of argv + 1. */
  argc -= 1 + optind;
  argv += 1 + optind;

  switch (kind)
    {
    case COMMAND_INFO:
      if (argc > 0)
        return usage_error ("info takes no input files");
      return run_info (&options);
    case COMMAND_BENCH:
      return run_bench (&options, argc);
    case COMMAND_OP:
    default:
      return run_operation (op, &options, argv, argc);
    }
}
