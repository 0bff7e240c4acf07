/* SPDX-License-Identifier: MIT */
/* entroscope-cli's --help and --version, written from the operation and parameter tables. */
#include <stdbool.h>
#include <string.h>

#include "es-cli.h"
#include "es-cli-options-private.h"

/* Lines of --help stay below this width. */
#define HELP_WIDTH 80
/* Where the text of a command's and of an option's entry starts. */
#define COMMAND_COLUMN 12
#define OPTION_COLUMN 26

/* Whether the UTF-8 character at `text` is East Asian wide: the CJK blocks
 * and full-width forms that a translation's text is written in. Terminals
 * give such a character two columns, and a line may break after it, as
 * Chinese text has no spaces to break at. */
static bool
is_wide (const char *text)
{
  const unsigned char *u = (const unsigned char *) text;
  unsigned c;

  if ((u[0] & 0xF0) != 0xE0 || (u[1] & 0xC0) != 0x80 || (u[2] & 0xC0) != 0x80)
    return false;
  c = ((u[0] & 0x0Fu) << 12) | ((u[1] & 0x3Fu) << 6) | (u[2] & 0x3Fu);
  return (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF)
         || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6);
}

/* Columns on a terminal: UTF-8 continuation bytes take none (the table's
 * texts hold "×" and "·"), wide characters two. */
static int
text_width (const char *text, size_t len)
{
  int width = 0;

  for (size_t i = 0; i < len; i++)
    if (((unsigned char) text[i] & 0xC0) != 0x80)
      width += i + 3 <= len && is_wide (text + i) ? 2 : 1;
  return width;
}

/* The bytes of the next unit that a line may break after: a word up to a
 * space or a wide character, or one wide character. */
static size_t
unit_length (const char *p)
{
  size_t len = 0;

  if (is_wide (p))
    return 3;
  while (p[len] != '\0' && p[len] != ' ' && !is_wide (p + len))
    len++;
  return len;
}

/* Prints TERM, then TEXT from COLUMN on, wrapped before HELP_WIDTH (at
 * spaces, and after wide characters) onto lines indented to COLUMN. A TERM
 * that reaches COLUMN puts TEXT on the next line, as in the hand-written
 * entries. */
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
      bool spaced = false;
      size_t len;
      int width;

      while (*p == ' ')
        {
          p++;
          spaced = true;
        }
      if (*p == '\0')
        break;
      len = unit_length (p);
      width = text_width (p, len);
      if (x > column && x + (spaced ? 1 : 0) + width >= HELP_WIDTH)
        {
          fprintf (out, "\n%*s", column, "");
          x = column;
        }
      else if (x > column && spaced)
        {
          fputc (' ', out);
          x++;
        }
      fwrite (p, 1, len, out);
      x += width;
      p += len;
    }
  fputc ('\n', out);
}

void
es_cli_op_list (unsigned ops, const char *separator, const char *last, char *text, size_t size)
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
                                  n == 1       ? ""
                                  : n == count ? last
                                               : separator,
                                  es_op_name ((EsOp) op));
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

static void
print_commands (FILE *out)
{
  for (int op = 0; op < ES_N_OPS; op++)
    {
      char term[32];

      snprintf (term, sizeof term, "  %s", es_op_name ((EsOp) op));
      print_entry (out, term, COMMAND_COLUMN, _ (es_op_info ((EsOp) op)->summary));
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
      es_cli_op_list (same, ", ", " and ", ops, sizeof ops);
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
      es_param_describe_range_in (param, es_tr, range, sizeof range);
      es_cli_op_list (ops_using ((EsParamId) id), ", ", _ (" and "), ops, sizeof ops);
      snprintf (text, sizeof text, _ ("%s; %s. Used by %s"), _ (param->description), range,
                ops[0] ? ops : _ ("no operation"));
      print_entry (out, term, OPTION_COLUMN, text);
    }
  print_entry (out, "      --tiles=XxY", OPTION_COLUMN,
               _ ("--tile-columns=X and --tile-rows=Y at once, OpenCV's tileGridSize (columns × rows)"));
}

static void
print_usage (FILE *out)
{
  char ops[128];

  es_cli_op_list (ES_CLI_ALL_OPS, "|", "|", ops, sizeof ops);
  fputs (_ ("Usage:\n"), out);
  fprintf (out,
           "  " ES_CLI_PROGRAM " %s [OPTION...] INPUT...\n"
           "  " ES_CLI_PROGRAM " info [OPERATION] [--backend=auto|cpu|cuda] [JOB OPTION...]\n"
           "  " ES_CLI_PROGRAM " bench [OPTION...]\n"
           "  " ES_CLI_PROGRAM " bench --image=FILE [OPTION...]\n"
           "  " ES_CLI_PROGRAM " help | -h | --help | --version\n"
           "\n",
           ops);
  fputs (_ ("Commands:\n"), out);
  print_commands (out);
  fputs (_ ("  info      version, backends compiled and in use, device, CPU threads, and\n"
            "            the kernel variants of each operation (or of OPERATION) with\n"
            "            their lessons; with the parameters and definition options of\n"
            "            a job, which variants run it, which cannot and why, and which\n"
            "            run it on a slow path\n"
            "  bench     times each operation, size, backend and kernel variant; with\n"
            "            --image, every variant on that image, as the window's Compare\n"
            "            Variants view does\n"),
         out);
}

static void
print_inputs (FILE *out)
{
  fputs (_ ("\n"
            "Inputs: PNG (every colour type and bit depth; colour becomes gray with BT.709\n"
            "weights, alpha is ignored), PGM (P2/P5) and text matrices (\"H W\" then H rows of\n"
            "W integer levels, each < L), and TIFF when built with libtiff (gray or RGB,\n"
            "1-16-bit integers, 32/64-bit floats mapped from their finite min..max to 16\n"
            "bits, strips or tiles, any codec libtiff has, BigTIFF, pages), and JPEG when\n"
            "built with libjpeg-turbo (8-bit gray, colour by the weights above, CMYK;\n"
            "baseline, progressive or arithmetic; turned upright by its EXIF orientation).\n"
            "Equalize and sharpen work on 8 bits: a sample v becomes round(v * 255 / maxval),\n"
            "maxval being the full scale (2^depth - 1, or a PGM's maxval). The format comes\n"
            "from the content: an empty file or another format (PPM, GIF...) is refused at\n"
            "once; inputs may be pipes; a file over 4 GiB is refused.\n"),
         out);
}

/* --colormap, --range and --units: their defaults and ranges come from the
 * operation table. */
static void
print_view_options (FILE *out)
{
  char ops[128], text[512];
  size_t len;
  unsigned nats = 0;

  describe_default_colormaps (ops, sizeof ops);
  snprintf (text, sizeof text,
            _ ("viridis, magma, inferno, cividis or gray; NAME_r reverses it. Default: %s (with "
               "the absolute range 0..255 a gray PNG holds exactly the result's pixels)"),
            ops);
  print_entry (out, "      --colormap=NAME", OPTION_COLUMN, text);
  len = 0;
  text[0] = '\0';
  for (int op = 0; op < ES_N_OPS; op++)
    len += (size_t) snprintf (text + len, sizeof text - len, "%s%s %s", op ? ", " : _ ("absolute (default): "),
                              es_op_name ((EsOp) op), es_op_info ((EsOp) op)->range_text);
  snprintf (text + len, sizeof text - len,
            _ ("; auto: the result's own minimum..maximum (a span under 1e-5 is drawn flat)"));
  print_entry (out, "      --range=absolute|auto", OPTION_COLUMN, text);
  for (int op = 0; op < ES_N_OPS; op++)
    if (es_units_convertible ((EsOp) op))
      nats |= 1u << op;
  es_cli_op_list (nats, ", ", " and ", ops, sizeof ops);
  snprintf (text, sizeof text,
            _ ("units of %s in txt, raw16 and the colorbar (default nats); normalized: "
               "entropy divided by ln(min(B, n)), 0..1, computed per pixel"),
            ops);
  print_entry (out, "      --units=nats|bits|normalized", OPTION_COLUMN, text);
}

static void
print_output_options (FILE *out)
{
  fputs (_ ("\n"
            "Output options:\n"
            "  -o, --output=OUT        the file to write; or a folder (one that exists, or\n"
            "                          OUT ending in /) that receives OUT/STEM-COMMAND.EXT.\n"
            "                          Default: STEM-COMMAND.png in the current folder\n"
            "                          (STEM: the input's name without its extension).\n"
            "                          Several inputs need a folder; one failing input is\n"
            "                          reported and the others are still processed.\n"
            "                          - (or /dev/stdout) writes to stdout; a FIFO or a\n"
            "                          device is written into, never replaced; an OUT\n"
            "                          that is a file the command reads (an input, the\n"
            "                          --mask, the --footprint) is refused before\n"
            "                          anything is written.\n"
            "      --format=png|txt|tif\n"
            "                          png (default): a PNG through the colormap (its 256\n"
            "                          colours as a palette; RGB with a colorbar or masks);\n"
            "                          txt: a text matrix, \"H W\" then one row per line (%.5f\n"
            "                          for entropy, integers otherwise); tif: the values as\n"
            "                          they are (32-bit float for entropy, 8-bit gray\n"
            "                          otherwise; deflated unless --compression=fast; BigTIFF\n"
            "                          past 4 GiB), the job in ImageDescription. An OUT\n"
            "                          ending in .txt implies txt, in .tif or .tiff tif, in\n"
            "                          .png png, in any case of letters; a name of a format\n"
            "                          not written (.jpg, .jpeg, .pgm, .gif, .bmp, .webp...)\n"
            "                          is refused unless --format says what to write. A\n"
            "                          multi-page TIFF input is a stack: each page is\n"
            "                          processed, into one multi-page TIFF (tif output only).\n"
            "                          With a 3-D window (or --volume) it is a volume\n"
            "                          instead: its result is a multi-page float TIFF, or one\n"
            "                          PNG per plane, OUT-z0000.png ... (OUT without .png; -o\n"
            "                          DIR/ puts them in DIR), never a text matrix\n"
            "      --raw16             a 16-bit gray PNG of the values with tEXt metadata\n"
            "                          (value = ValueOffset + sample * ValueScale; NoData:\n"
            "                          the sample of pixels with no value, where masked)\n"
            "      --compression=fast|default|small\n"
            "                          how hard PNGs and TIFFs are compressed, on every core;\n"
            "                          a default PNG stays within 1.15x the size of libpng's\n"
            "                          level 6; a fast TIFF is uncompressed, default and\n"
            "                          small deflate its strips\n"),
         out);
  print_view_options (out);
  fputs (_ ("      --colorbar          draws a labelled colorbar right of the PNG\n"
            "  -q, --quiet             prints neither \"wrote PATH\" nor the progress line\n"),
         out);
}

static void
print_computation_options (FILE *out)
{
  fputs (_ ("\n"
            "Computation options:\n"),
         out);
  print_parameters (out);
  es_cli_print_definition_help (out);
  fputs (_ ("      --backend=auto|cpu|cuda\n"
            "                          auto (default): CUDA when a usable device exists,\n"
            "                          else the CPU (OpenMP); cuda fails without a device\n"
            "      --devices=N,N,...   the CUDA devices to spread bands over (default: the\n"
            "                          ES_DEVICES variable, else every usable device)\n"
            "      --variant=ID        CUDA kernel variant (see 'info'); default: the\n"
            "                          fastest one known. The CPU has one implementation.\n"
            "      --timings           prints upload, kernel, download and wall ms, the\n"
            "                          backend, the variant and Mpx/s per image on stderr\n"
            "      --metrics           prints why each run took its time, on stderr: the\n"
            "                          memory model's bytes a pixel, the achieved GB/s and\n"
            "                          its share of the measured copy peak and of the\n"
            "                          datasheet's, and on CUDA each kernel's occupancy,\n"
            "                          registers, shared and local memory and launch, and\n"
            "                          the transfers (pinned or pageable, PCIe GB/s)\n"
            "      --metrics=hw        the same, and the hardware counters of the run's\n"
            "                          kernels (CUPTI), beside the model: DRAM bytes read\n"
            "                          and written, L2 hit rate, shared-memory bank\n"
            "                          conflicts, achieved occupancy, local-memory bytes;\n"
            "                          the kernels run once more to count them, after the\n"
            "                          timed pass (the wall time includes it)\n"
            "      --max-pixels=N      refuses images of more than N pixels (default 2^30)\n"
            "      --sandbox           decodes each input in a child process that can read\n"
            "                          only that file (seccomp: no other file, no network):\n"
            "                          a decoder crash, hang or memory blow-up on a hostile\n"
            "                          file becomes an error (exit 2); its masks and\n"
            "                          footprints alike\n"
            "\n"),
         out);
}

static void
print_bench_options (FILE *out)
{
  char text[512];
  size_t len;

  len = (size_t) snprintf (text, sizeof text, _ ("Bench options (with --backend, --devices, --variant,"));
  for (int id = 0; id < ES_N_PARAMS && len < sizeof text; id++)
    len += (size_t) snprintf (text + len, sizeof text - len, " --%s,", es_param ((EsParamId) id)->name);
  if (len < sizeof text)
    snprintf (text + len, sizeof text - len, " --max-pixels):");
  print_entry (out, "", 0, text);
  fprintf (out,
           _ ("      --windows=K,K,...   windows to time (the same as --window=K,K,...: in\n"
              "                          bench, --window, --levels and --amount take\n"
              "                          comma-separated lists); each operation is timed at\n"
              "                          every combination of the values of the parameters\n"
              "                          it reads, and the table gives them in columns\n"
              "      --sizes=N,N,...     sides of the square random images\n"
              "                          (default %s)\n"
              "      --ops=OP,OP,...     operations (default %s)\n"
              "      --variant=all|ID    every CUDA variant (default) or one\n"
              "      --repeats=N         timed runs after a warm-up run (default 20 on CUDA,\n"
              "                          5 on the CPU); medians are reported\n"
              "      --csv=FILE          also writes the table as CSV with a header row\n"
              "      --metrics           adds the --metrics columns beside each time\n"
              "      --metrics=hw        and each row's hardware counters, from one more run\n"
              "      --image=FILE        times every variant of each operation on FILE (a\n"
              "                          multi-page file's first page, or all of it as a\n"
              "                          volume for a 3-D window or --volume) instead of\n"
              "                          random images (no --sizes; --repeats defaults to\n"
              "                          10), with the backend's engine as the window uses\n"
              "                          it: on the CPU its single implementation, on CUDA\n"
              "                          each variant and the floor. It takes the entropy\n"
              "                          definition's options (--disk, --border, --mask,\n"
              "                          --like...), as Compare Variants times the window's\n"
              "                          job\n"
              "  The table gives the median kernel and end-to-end (wall) ms, Mpx/s from the\n"
              "  kernel time and, on CUDA, the copy floor (a plain copy of the operation's\n"
              "  bytes), the kernel's multiple of it, effective GB/s, and the speed-up over\n"
              "  the operation's naive variant.\n"),
           ES_BENCH_DEFAULT_SIZES, ES_BENCH_DEFAULT_OPS);
}

static void
print_exit_status_and_examples (FILE *out)
{
  fprintf (out,
           _ ("\n"
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
              "  \"%s: FILE: reason\".\n"),
           ES_CLI_PROGRAM);
  fputs (_ ("\nExamples:\n"), out);
  fputs ("  " ES_CLI_PROGRAM " entropy photo.png                  # writes photo-entropy.png\n"
         "  " ES_CLI_PROGRAM " entropy --window=9 --colormap=magma --colorbar photo.png \\\n"
         "      -o heat.png\n"
         "  " ES_CLI_PROGRAM " entropy --units=bits exercise.txt -o entropy.txt\n"
         "  " ES_CLI_PROGRAM " equalize scans/*.png -o out/\n"
         "  " ES_CLI_PROGRAM " sharpen --amount=0.5 --timings --backend=cpu photo.png\n"
         "  " ES_CLI_PROGRAM " bench --sizes=1024,4096 --csv=bench.csv\n"
         "  " ES_CLI_PROGRAM " bench --backend=cpu --ops=entropy --sizes=4096 \\\n"
         "      --windows=3,5,9,17,31 --levels=16,256\n"
         "  " ES_CLI_PROGRAM " bench --image=photo.png --ops=entropy --repeats=20\n",
         out);
}

void
es_cli_print_help (FILE *out)
{
  print_usage (out);
  print_inputs (out);
  print_output_options (out);
  print_computation_options (out);
  print_bench_options (out);
  print_exit_status_and_examples (out);
}

void
es_cli_print_version (FILE *out)
{
  fputs (ES_CLI_PROGRAM " " ES_VERSION "\n", out);
}
