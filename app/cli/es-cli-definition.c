/* SPDX-License-Identifier: MIT */
/* entroscope-cli's entropy definition options (DESIGN.md §1): shape, border, binning, mask, presets. */
#include <string.h>

#include "es-cli.h"
#include "es-load.h"
#include "es-sandbox.h"

const char *const es_cli_reads_name[ES_CLI_N_READS] = {
  [ES_CLI_READS_FOOTPRINT] = "footprint",
  [ES_CLI_READS_MASK] = "mask",
};

/* K (a square) or HxW / H×W, skimage's kernel_size in pixels (rows ×
 * columns). */
static bool
parse_kernel_size (const char *text, EsClaheDefinition *c)
{
  const char *x = strpbrk (text, "x×");
  unsigned long height, width;
  char rows[16];

  if (x == NULL)
    {
      if (!es_definition_parse_uint (text, 1, ES_MAX_SIDE, &height))
        return false;
      width = height;
    }
  else
    {
      if ((size_t) (x - text) >= sizeof rows)
        return false;
      memcpy (rows, text, (size_t) (x - text));
      rows[x - text] = '\0';
      if (!es_definition_parse_uint (rows, 1, ES_MAX_SIDE, &height)
          || !es_definition_parse_uint (x + (*x == 'x' ? 1 : strlen ("×")), 1, ES_MAX_SIDE, &width))
        return false;
    }
  c->kernel_height = (int) height, c->kernel_width = (int) width;
  return true;
}

bool
es_cli_claim_shape (EsCliOptions *o, const char *name, const char *text)
{
  if (o->shape_name != NULL && strcmp (o->shape_name, name) != 0)
    {
      es_cli_usage_error (_ ("--%s=%s: the window's shape is already given by --%s=%s; give one of --window, "
                             "--rect, --disk, --footprint, --box and --ball"),
                          name, text, o->shape_name, o->shape_text);
      return false;
    }
  o->shape_name = name;
  o->shape_text = text;
  return true;
}

bool
es_cli_parse_definition_option (EsCliDefinitionOption option, const char *text, EsCliOptions *o)
{
  EsEntropyDefinition *d = &o->job.definition;
  unsigned long number;

  switch (option)
    {
    case ES_CLI_RECT:
      if (!es_definition_parse_rect (text, d))
        {
          es_cli_usage_error (_ ("--rect=%s: expected HxW, odd sides 1..%d (9x5)"), text, ES_SIDE_MAX);
          return false;
        }
      o->shape_given = true;
      return es_cli_claim_shape (o, "rect", text);
    case ES_CLI_DISK:
      if (!es_definition_parse_uint (text, 0, ES_RADIUS_MAX, &number))
        {
          es_cli_usage_error (_ ("--disk=%s: expected a radius in 0..%d"), text, ES_RADIUS_MAX);
          return false;
        }
      d->shape = ES_SHAPE_DISK;
      d->radius = (int) number;
      o->shape_given = true;
      return es_cli_claim_shape (o, "disk", text);
    case ES_CLI_FOOTPRINT:
      if (text[0] == '\0')
        {
          es_cli_usage_error (_ ("--footprint: the file name is empty"));
          return false;
        }
      d->shape = ES_SHAPE_FOOTPRINT;
      o->reads[ES_CLI_READS_FOOTPRINT] = text;
      o->shape_given = true;
      return es_cli_claim_shape (o, "footprint", text);
    case ES_CLI_BORDER:
      if (!es_definition_parse_border (text, d))
        {
          es_cli_usage_error (_ ("--border=%s: expected clip, symmetric, mirror, replicate or constant[:V] "
                                 "(V a sample value, 0..65535)"),
                              text);
          return false;
        }
      return true;
    case ES_CLI_BINNING:
      if (!es_definition_parse_binning (text, d))
        {
          es_cli_usage_error (_ ("--binning=%s: expected depth, range:LO:HI (0 ≤ LO ≤ HI ≤ 65535), minmax, "
                                 "exact or byte"),
                              text);
          return false;
        }
      return true;
    case ES_CLI_MASK:
      if (text[0] == '\0')
        {
          es_cli_usage_error (_ ("--mask: the file name is empty"));
          return false;
        }
      o->reads[ES_CLI_READS_MASK] = text;
      return true;
    case ES_CLI_BOX:
      if (!es_definition_parse_box (text, d))
        {
          es_cli_usage_error (_ ("--box=%s: expected DxHxW, odd sides 1..%d (3x5x5)"), text, ES_SIDE_3D_MAX);
          return false;
        }
      o->shape_given = true;
      return es_cli_claim_shape (o, "box", text);
    case ES_CLI_BALL:
      if (!es_definition_parse_uint (text, 0, ES_RADIUS_3D_MAX, &number))
        {
          es_cli_usage_error (_ ("--ball=%s: expected a radius in 0..%d"), text, ES_RADIUS_3D_MAX);
          return false;
        }
      d->shape = ES_SHAPE_BALL;
      d->radius = (int) number;
      o->shape_given = true;
      return es_cli_claim_shape (o, "ball", text);
    case ES_CLI_VOLUME: o->volume = true; return true;
    case ES_CLI_CHANNEL:
    case ES_CLI_TIME:
      if (!es_definition_parse_uint (text, 0, 65535, &number))
        {
          es_cli_usage_error (_ ("--%s=%s: expected a number in 0..65535"),
                              option == ES_CLI_CHANNEL ? "channel" : "time", text);
          return false;
        }
      if (option == ES_CLI_CHANNEL)
        o->volume_choice.channel = (int) number, o->volume_choice.channel_given = true;
      else
        o->volume_choice.time = (int) number, o->volume_choice.time_given = true;
      return true;
    case ES_CLI_LIKE:
      /* Checked once the options are read: the presets are the operation's. */
      o->like = text;
      return true;
    case ES_CLI_KERNEL_SIZE:
      if (!parse_kernel_size (text, &o->job.clahe))
        {
          es_cli_usage_error (_ ("--kernel-size=%s: expected K or HxW (rows × columns), 1..%d a side"), text,
                              ES_MAX_SIDE);
          return false;
        }
      return true;
    case ES_CLI_NBINS:
      if (!es_definition_parse_uint (text, ES_CLAHE_BINS_MIN, ES_CLAHE_BINS_MAX, &number))
        {
          es_cli_usage_error (_ ("--nbins=%s: expected a number of bins in %d..%d"), text, ES_CLAHE_BINS_MIN,
                              ES_CLAHE_BINS_MAX);
          return false;
        }
      o->job.clahe.bins = (int) number;
      return true;
    }
  return false;
}

/* --kernel-size's presets: scikit-image's alone has a kernel. --nbins':
 * scikit-image's nbins and MATLAB's NBins. */
static bool
check_clahe_options (const EsCliOptions *o, const EsPreset *preset)
{
  EsClaheKind kind = preset && preset->op == ES_OP_CLAHE ? preset->clahe : ES_CLAHE_OPENCV;

  if (o->job.clahe.kernel_height != 0 && kind != ES_CLAHE_SKIMAGE)
    return es_cli_usage_error (_ ("--kernel-size is scikit-image's kernel_size: it applies to clahe --like skimage "
                                  "(OpenCV's and MATLAB's tiles are --tiles)")),
           false;
  if (o->job.clahe.bins != 0 && kind == ES_CLAHE_OPENCV)
    return es_cli_usage_error (_ ("--nbins applies to clahe --like skimage or --like matlab (OpenCV's bins are the "
                                  "depth's)")),
           false;
  return true;
}

bool
es_cli_definition_finish (EsCliOptions *o)
{
  const EsPreset *preset;
  EsJob given = o->job;
  char names[64];

  if (o->like == NULL)
    return check_clahe_options (o, NULL);
  if ((preset = es_preset_find (o->job.op, o->like)) == NULL)
    {
      es_presets_describe (o->job.op, names, sizeof names);
      es_cli_usage_error (_ ("--like=%s: expected %s"), o->like, names);
      return false;
    }
  if (!check_clahe_options (o, preset))
    return false;
  /* A preset sets its operation's definition (entropy: border, binning,
   * levels, units and, unless a shape or --window was given, the window;
   * CLAHE: the peer's CLAHE, clip limit and grid); the parameters given
   * win. */
  es_preset_apply (preset, &o->job, o->shape_given || o->window_given);
  o->job.clahe.kernel_height = given.clahe.kernel_height;
  o->job.clahe.kernel_width = given.clahe.kernel_width;
  o->job.clahe.bins = given.clahe.bins;
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (o->params_given & ES_PARAM_BIT (id))
      es_job_set_param (&o->job, (EsParamId) id, es_job_get_param (&given, (EsParamId) id));
  if (!o->units_given && preset->units != NULL)
    o->units = strcmp (preset->units, "bits") == 0 ? ES_UNITS_BITS : ES_UNITS_NATS;
  return true;
}

/* A mask or footprint: in the sandbox with --sandbox, as every input. */
static bool
load_cells (const EsCliOptions *o, const char *what, const char *path, EsImage *cells, EsError *error)
{
  const EsDecodeRequest request = { .cells = true };
  char notice[8];

  if (es_decode_path (path, o->sandbox, &request, cells, notice, sizeof notice, error))
    return true;
  es_error_prefix (error, "%s %s", what, path);
  return false;
}

/* Whether a footprint is one the entropy definition takes: the job's
 * validator on a job that has nothing else. */
static bool
footprint_fits (const EsFootprint *footprint, EsError *error)
{
  EsJob probe = ES_JOB_INIT (ES_OP_ENTROPY);

  probe.definition.shape = ES_SHAPE_FOOTPRINT;
  probe.definition.footprint = footprint;
  if (es_job_validate (&probe, error))
    return true;
  error->code = ES_ERROR_FORMAT;
  return false;
}

bool
es_cli_check_mask (const char *mask_path, const EsJob *job, const char *input_path, const EsImage *in, EsError *error)
{
  const EsImage *mask = job->definition.mask;

  if (job->op != ES_OP_ENTROPY || mask == NULL || mask_path == NULL)
    return true;
  if (mask->width == in->width && mask->height == in->height && es_image_planes (mask) == es_image_planes (in))
    return true;
  if (es_image_planes (mask) > 1 || es_image_planes (in) > 1)
    return es_error_set (error, ES_ERROR_FORMAT, _ ("the mask is %d×%d×%d, the input %s %d×%d×%d: they must match"),
                         mask->width, mask->height, es_image_planes (mask), input_path, in->width, in->height,
                         es_image_planes (in));
  return es_error_set (error, ES_ERROR_FORMAT, _ ("the mask is %d×%d, the input %s %d×%d: they must match"),
                       mask->width, mask->height, input_path, in->width, in->height);
}

bool
es_cli_reads_volumes (const EsCliOptions *o, const EsJob *job)
{
  return o->volume || (job->op == ES_OP_ENTROPY && es_definition_is_3d (&job->definition));
}

bool
es_cli_definition_load (EsCliOptions *o, EsCliDefinitionFiles *files, EsError *error)
{
  EsEntropyDefinition *d = &o->job.definition;

  if (o->reads[ES_CLI_READS_FOOTPRINT] != NULL)
    {
      if (!load_cells (o, "footprint", o->reads[ES_CLI_READS_FOOTPRINT], &files->footprint_cells, error))
        return false;
      files->footprint = (EsFootprint){
        files->footprint_cells.width,
        files->footprint_cells.height,
        files->footprint_cells.pixels,
        es_image_planes (&files->footprint_cells),
      };
      d->footprint = &files->footprint;
      /* Sides out of range or no cell in: the file is wrong, not the
       * command line, and the error names it. */
      if (!footprint_fits (&files->footprint, error))
        {
          es_error_prefix (error, "footprint %s", o->reads[ES_CLI_READS_FOOTPRINT]);
          return false;
        }
    }
  if (o->reads[ES_CLI_READS_MASK] != NULL)
    {
      if (!load_cells (o, "mask", o->reads[ES_CLI_READS_MASK], &files->mask, error))
        return false;
      d->mask = &files->mask;
    }
  return true;
}

void
es_cli_definition_clear (EsCliDefinitionFiles *files)
{
  es_image_clear (&files->footprint_cells);
  es_image_clear (&files->mask);
}

void
es_cli_print_definition_help (FILE *out)
{
  fputs (_ ("      --rect=HxW          entropy over an H×W rectangle (odd sides 1..255)\n"
            "                          instead of the K×K square\n"
            "      --disk=R            over a disk of radius R (0..127): the cells with\n"
            "                          x² + y² ≤ R², as scikit-image's morphology.disk\n"
            "      --footprint=FILE    over the nonzero cells of an image (odd sides up to\n"
            "                          255), centred on its centre cell; a multi-page TIFF\n"
            "                          is a 3-D footprint (odd sides up to 63)\n"
            "      --box=DxHxW         over a D×H×W box of a volume (odd sides 1..63)\n"
            "      --ball=R            over a ball of radius R (0..31): the cells with\n"
            "                          z² + y² + x² ≤ R², as scikit-image's morphology.ball\n"
            "      --border=MODE       outside the image, on a row a b c d: clip (default:\n"
            "                          only in-image pixels count), symmetric (dcba|abcd|\n"
            "                          dcba), mirror (dcb|abcd|cba), replicate (aa|abcd|dd)\n"
            "                          or constant:V (the sample value V, binned as any)\n"
            "      --binning=RULE      how samples become bins: depth (default,\n"
            "                          floor(v * L / 2^depth)), range:LO:HI (L bins over\n"
            "                          LO..HI, clamped), minmax (range over the image's own\n"
            "                          min..max), exact (every value its own bin, all 16\n"
            "                          bits), byte (L bins of the 8-bit view)\n"
            "      --mask=FILE         counts only the pixels where FILE (the input's size)\n"
            "                          is nonzero as stored: not NaN, any channel of a\n"
            "                          colour pixel, a float TIFF's values as they are;\n"
            "                          the others get no value: NaN in txt and tif, the\n"
            "                          no-data colour (magenta) in PNG heatmaps; a volume's\n"
            "                          mask is a multi-page TIFF of its size (entropy only)\n"
            "      --like=PEER         the definition of matlab (entropyfilt: 9x9,\n"
            "                          symmetric, 256 bins of 8-bit values, bits), skimage\n"
            "                          (rank.entropy: clip, exact bins, bits) or fiji\n"
            "                          (Entropy_Filter: disk 3, clip, 256 bins of 8-bit\n"
            "                          values, bits); --window and the shape options win.\n"
            "                          On a stack, matlab keeps entropyfilt's default 9x9\n"
            "                          on every plane, as entropyfilt does on an N-D array;\n"
            "                          with --box, --ball or a 3-D footprint a preset's\n"
            "                          border and binning apply in 3-D (skimage: clip and\n"
            "                          exact bins over the footprint given). clahe:\n"
            "                          skimage (equalize_adapthist: clip 0.01, kernel\n"
            "                          side/tiles, float 0..1) or matlab (adapthisteq:\n"
            "                          8x8, clip 0.01, 256 bins); --clip, --tiles win\n"
            "      --kernel-size=K, --kernel-size=HxW\n"
            "                          clahe --like skimage: equalize_adapthist's\n"
            "                          kernel_size, H×W pixels a tile (K: K×K; default\n"
            "                          the image's side / --tiles)\n"
            "      --nbins=B           clahe --like skimage or matlab: nbins (NBins), the\n"
            "                          histogram's bins, 2..65536 (default 256)\n"
            "Volumes (a multi-page TIFF read whole, for a 3-D window or with --volume):\n"
            "      --volume            read a multi-page TIFF as one volume whatever the\n"
            "                          window: equalize then uses one histogram for the\n"
            "                          whole volume; sharpen, quantize and 2-D windows\n"
            "                          work plane by plane. The pages must agree in size\n"
            "                          and format, and the volume must fit --max-pixels\n"
            "                          (width × height × planes), checked before decoding\n"
            "      --channel=C, --time=T\n"
            "                          the planes of channel C at time T of an OME-TIFF\n"
            "                          (default 0 and 0; SizeZ/C/T and DimensionOrder come\n"
            "                          from the OME-XML of its first page)\n"),
         out);
}
