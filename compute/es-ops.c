/* SPDX-License-Identifier: MIT */
/* The operation and parameter tables: one row per operation, one per parameter. */
#include "es-ops.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/es-cpu.h"
#include "es-definitions.h"
#include "es-i18n.h"
#ifdef ES_HAVE_CUDA
#include "cuda/es-cuda.h"
#define ES_CUDA_ENTRY(entry) (&(entry))
#else
#define ES_CUDA_ENTRY(entry) NULL
#endif

static const EsParam params[ES_N_PARAMS] = {
  [ES_PARAM_WINDOW] = { ES_PARAM_WINDOW, "window", N_ ("Window size"),
                        N_ ("side of the square window around each pixel, in pixels"), "K", ES_WINDOW_MIN,
                        ES_WINDOW_MAX, ES_WINDOW_DEFAULT, 2, 0, true },
  [ES_PARAM_LEVELS] = { ES_PARAM_LEVELS, "levels", N_ ("Levels"),
                        N_ ("levels: bins of the depth, range, minmax and byte binnings; quantize's floor(v · L / "
                            "2^depth)"),
                        "L", ES_LEVELS_MIN, ES_LEVELS_MAX, ES_LEVELS_DEFAULT, 1, 0, false },
  [ES_PARAM_AMOUNT] = { ES_PARAM_AMOUNT, "amount", N_ ("Amount"), N_ ("sharpen amount a: c + a · (4c − N − S − E − W)"),
                        "A", ES_AMOUNT_MIN, ES_AMOUNT_MAX, ES_AMOUNT_DEFAULT, 0.05, 2, false },
  [ES_PARAM_CLIP] = { ES_PARAM_CLIP, "clip", N_ ("Clip limit"),
                      N_ ("CLAHE's clip limit, OpenCV's clipLimit: bins are clipped at C times a tile's mean count "
                          "(0: no clipping)"),
                      "C", ES_CLIP_MIN, ES_CLIP_MAX, ES_CLIP_DEFAULT, 0.5, 2, false },
  [ES_PARAM_TILE_COLUMNS] = { ES_PARAM_TILE_COLUMNS, "tile-columns", N_ ("Tile columns"),
                              N_ ("CLAHE's tiles across the image (OpenCV's tileGridSize.width)"), "X", ES_TILES_MIN,
                              ES_TILES_MAX, ES_TILES_DEFAULT, 1, 0, false },
  [ES_PARAM_TILE_ROWS] = { ES_PARAM_TILE_ROWS, "tile-rows", N_ ("Tile rows"),
                           N_ ("CLAHE's tiles down the image (OpenCV's tileGridSize.height)"), "Y", ES_TILES_MIN,
                           ES_TILES_MAX, ES_TILES_DEFAULT, 1, 0, false },
};

const EsParam *
es_param (EsParamId id)
{
  return (unsigned) id < ES_N_PARAMS ? &params[id] : NULL;
}

/* Whether name is the parameter's, with '_' standing for '-' (Python's
 * keyword tile_columns for tile-columns). */
static bool
param_name_is (const char *name, const char *param_name)
{
  for (; *name != '\0' && *param_name != '\0'; name++, param_name++)
    if (*name != *param_name && !(*name == '_' && *param_name == '-'))
      return false;
  return *name == *param_name;
}

bool
es_param_from_name (const char *name, EsParamId *id)
{
  for (int i = 0; i < ES_N_PARAMS; i++)
    if (param_name_is (name, params[i].name))
      {
        *id = (EsParamId) i;
        return true;
      }
  return false;
}

static const char *
untranslated (const char *text)
{
  return text;
}

void
es_param_describe_range_in (const EsParam *param, EsTranslate translate, char *text, size_t size)
{
  const EsTranslate t = translate ? translate : untranslated;

  if (param->odd)
    snprintf (text, size, t (N_ ("odd, %g..%g (default %g)")), param->min, param->max, param->default_value);
  else
    snprintf (text, size, t (N_ ("%g..%g (default %g)")), param->min, param->max, param->default_value);
}

void
es_param_describe_range (const EsParam *param, char *text, size_t size)
{
  es_param_describe_range_in (param, NULL, text, size);
}

bool
es_param_check (const EsParam *param, double value, EsError *error)
{
  char range[64];

  /* The negated comparison also rejects NaN. */
  if (!(value >= param->min && value <= param->max) || (param->digits == 0 && value != floor (value))
      || (param->odd && fmod (value, 2.0) == 0.0))
    {
      es_param_describe_range (param, range, sizeof range);
      return es_error_set (error, ES_ERROR_INVALID, "%s %g is out of range: %s", param->name, value, range);
    }
  return true;
}

double
es_job_get_param (const EsJob *job, EsParamId id)
{
  switch (id)
    {
    case ES_PARAM_WINDOW: return job->window;
    case ES_PARAM_LEVELS: return job->levels;
    case ES_PARAM_AMOUNT: return job->amount;
    case ES_PARAM_CLIP: return job->clip;
    case ES_PARAM_TILE_COLUMNS: return job->tile_columns;
    case ES_PARAM_TILE_ROWS: return job->tile_rows;
    case ES_N_PARAMS: break;
    }
  return NAN;
}

void
es_job_set_param (EsJob *job, EsParamId id, double value)
{
  switch (id)
    {
    case ES_PARAM_WINDOW: job->window = (int) value; break;
    case ES_PARAM_LEVELS: job->levels = (int) value; break;
    case ES_PARAM_AMOUNT: job->amount = (float) value; break;
    case ES_PARAM_CLIP: job->clip = value; break;
    case ES_PARAM_TILE_COLUMNS: job->tile_columns = (int) value; break;
    case ES_PARAM_TILE_ROWS: job->tile_rows = (int) value; break;
    case ES_N_PARAMS: break;
    }
}

/* ---- entropy definitions --------------------------------------------------------- */

static const char *const shape_names[ES_N_SHAPES] = { "square", "rect", "disk", "footprint", "box", "ball" };
/* Marked: the window's definition line says them in the reader's language
 * (es_job_describe_definition_in); the CLI takes and writes them as they are. */
static const char *const border_names[ES_N_BORDERS] = { N_ ("clip"), N_ ("symmetric"), N_ ("mirror"), N_ ("replicate"),
                                                        N_ ("constant") };
static const char *const binning_names[ES_N_BINNINGS] = { "depth", "range", "minmax", "exact", "byte" };

static int
name_index (const char *const *names, int n, const char *name)
{
  for (int i = 0; i < n; i++)
    if (strcmp (names[i], name) == 0)
      return i;
  return -1;
}

const char *
es_shape_name (EsShape shape)
{
  return (unsigned) shape < ES_N_SHAPES ? shape_names[shape] : "?";
}

const char *
es_border_name (EsBorder border)
{
  return (unsigned) border < ES_N_BORDERS ? border_names[border] : "?";
}

const char *
es_binning_name (EsBinning binning)
{
  return (unsigned) binning < ES_N_BINNINGS ? binning_names[binning] : "?";
}

bool
es_border_from_name (const char *name, EsBorder *border)
{
  int i = name_index (border_names, ES_N_BORDERS, name);

  if (i >= 0)
    *border = (EsBorder) i;
  return i >= 0;
}

bool
es_binning_from_name (const char *name, EsBinning *binning)
{
  int i = name_index (binning_names, ES_N_BINNINGS, name);

  if (i >= 0)
    *binning = (EsBinning) i;
  return i >= 0;
}

/* DESIGN.md §1's preset tables, with their sources; one operation's rows together. */
static const EsPreset presets[] = {
  { ES_OP_ENTROPY, "matlab", "MATLAB entropyfilt", ES_SHAPE_SQUARE, 9, 0, ES_BORDER_SYMMETRIC, ES_BINNING_BYTE, 256,
    "bits", ES_CLAHE_OPENCV, 0 },
  { ES_OP_ENTROPY, "skimage", "scikit-image rank.entropy", ES_SHAPE_SQUARE, 0, 0, ES_BORDER_CLIP, ES_BINNING_EXACT, 0,
    "bits", ES_CLAHE_OPENCV, 0 },
  { ES_OP_ENTROPY, "fiji", "Fiji Entropy_Filter", ES_SHAPE_DISK, 0, 3, ES_BORDER_CLIP, ES_BINNING_BYTE, 256, "bits",
    ES_CLAHE_OPENCV, 0 },
  /* Both peers' default clip limit is 0.01, a fraction (not OpenCV's multiple). */
  { ES_OP_CLAHE, "skimage", "scikit-image equalize_adapthist", .clahe = ES_CLAHE_SKIMAGE, .clip = 0.01 },
  { ES_OP_CLAHE, "matlab", "MATLAB adapthisteq", .clahe = ES_CLAHE_MATLAB, .clip = 0.01 },
};

const EsPreset *
es_presets (EsOp op, size_t *n)
{
  const EsPreset *first = NULL;

  *n = 0;
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (presets[i].op == op)
      {
        if (first == NULL)
          first = &presets[i];
        (*n)++;
      }
  return first;
}

const EsPreset *
es_preset_find (EsOp op, const char *name)
{
  size_t n;
  const EsPreset *list = es_presets (op, &n);

  for (size_t i = 0; i < n; i++)
    if (strcmp (list[i].name, name) == 0)
      return &list[i];
  return NULL;
}

void
es_presets_describe (EsOp op, char *text, size_t size)
{
  size_t n, used = 0;
  const EsPreset *list = es_presets (op, &n);

  text[0] = '\0';
  if (n == 0)
    snprintf (text, size, "none (%s has no presets)", es_op_name (op));
  for (size_t i = 0; i < n && used < size; i++)
    used += (size_t) snprintf (text + used, size - used, "%s%s",
                               i == 0       ? ""
                               : i + 1 == n ? " or "
                                            : ", ",
                               list[i].name);
}

void
es_preset_apply (const EsPreset *preset, EsJob *job, bool keep_shape)
{
  EsEntropyDefinition *d = &job->definition;

  if (preset->op == ES_OP_CLAHE)
    {
      job->clahe = (EsClaheDefinition){ .kind = preset->clahe };
      job->clip = preset->clip;
      job->tile_columns = job->tile_rows = ES_TILES_DEFAULT;
      return;
    }
  if (!keep_shape && (preset->window != 0 || preset->radius != 0))
    {
      d->shape = preset->shape;
      if (preset->window != 0)
        job->window = preset->window;
      if (preset->radius != 0)
        d->radius = preset->radius;
    }
  d->border = preset->border;
  d->binning = preset->binning;
  if (preset->levels != 0)
    job->levels = preset->levels;
}

static const char *const clahe_kind_names[ES_N_CLAHE_KINDS] = { "opencv", "skimage", "matlab" };

const char *
es_clahe_kind_name (EsClaheKind kind)
{
  return (unsigned) kind < ES_N_CLAHE_KINDS ? clahe_kind_names[kind] : "?";
}

static bool
clahe_definition_validate (const EsJob *job, EsError *error)
{
  const EsClaheDefinition *c = &job->clahe;

  if (c->kind == ES_CLAHE_MATLAB && job->clip > 1)
    return es_error_set (error, ES_ERROR_INVALID, "clip %g is out of range: MATLAB's ClipLimit is 0..1", job->clip);
  if ((unsigned) c->kind >= ES_N_CLAHE_KINDS)
    return es_error_set (error, ES_ERROR_INVALID, "unknown CLAHE definition %d", (int) c->kind);
  if (c->kind == ES_CLAHE_OPENCV && (c->kernel_height != 0 || c->kernel_width != 0 || c->bins != 0))
    return es_error_set (error, ES_ERROR_INVALID,
                         "OpenCV's CLAHE has no kernel size or bins (its bins are the depth's): use like skimage or "
                         "matlab");
  if (c->kind != ES_CLAHE_SKIMAGE && (c->kernel_height != 0 || c->kernel_width != 0))
    return es_error_set (error, ES_ERROR_INVALID, "a kernel size is scikit-image's: use the tile grid");
  if (c->kernel_height < 0 || c->kernel_height > ES_MAX_SIDE || c->kernel_width < 0 || c->kernel_width > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_INVALID, "kernel size %d×%d is out of range: 1..%d a side", c->kernel_height,
                         c->kernel_width, ES_MAX_SIDE);
  if (c->bins != 0 && (c->bins < ES_CLAHE_BINS_MIN || c->bins > ES_CLAHE_BINS_MAX))
    return es_error_set (error, ES_ERROR_INVALID, "bins %d is out of range: %d..%d", c->bins, ES_CLAHE_BINS_MIN,
                         ES_CLAHE_BINS_MAX);
  return true;
}

/* ---- the definitions' text, shared by the CLI and the Python module ---- */

bool
es_definition_parse_uint (const char *text, unsigned long lo, unsigned long hi, unsigned long *value)
{
  char *end;

  if (text[0] < '0' || text[0] > '9')
    return false;
  errno = 0;
  *value = strtoul (text, &end, 10);
  return *end == '\0' && errno == 0 && *value >= lo && *value <= hi;
}

bool
es_definition_parse_rect (const char *text, EsEntropyDefinition *d)
{
  char height[16];
  const char *x = strpbrk (text, "x×");
  unsigned long h, w;
  size_t skip;

  if (x == NULL || (size_t) (x - text) >= sizeof height)
    return false;
  memcpy (height, text, (size_t) (x - text));
  height[x - text] = '\0';
  skip = *x == 'x' ? 1 : strlen ("×");
  if (!es_definition_parse_uint (height, 1, ES_SIDE_MAX, &h) || !es_definition_parse_uint (x + skip, 1, ES_SIDE_MAX, &w)
      || h % 2 == 0 || w % 2 == 0)
    return false;
  d->shape = ES_SHAPE_RECT;
  d->height = (int) h, d->width = (int) w;
  return true;
}

bool
es_definition_parse_box (const char *text, EsEntropyDefinition *d)
{
  unsigned long sides[3];
  const char *start = text;

  for (int i = 0; i < 3; i++)
    {
      const char *x = i < 2 ? strpbrk (start, "x×") : start + strlen (start);
      char side[16];

      if (x == NULL || (size_t) (x - start) >= sizeof side)
        return false;
      memcpy (side, start, (size_t) (x - start));
      side[x - start] = '\0';
      if (!es_definition_parse_uint (side, 1, ES_SIDE_3D_MAX, &sides[i]) || sides[i] % 2 == 0)
        return false;
      if (i < 2)
        start = x + (*x == 'x' ? 1 : strlen ("×"));
    }
  d->shape = ES_SHAPE_BOX;
  d->planes = (int) sides[0], d->height = (int) sides[1], d->width = (int) sides[2];
  return true;
}

bool
es_definition_parse_border (const char *text, EsEntropyDefinition *d)
{
  const char *colon = strchr (text, ':');
  char name[16];
  unsigned long value = 0;
  EsBorder border;

  if (colon ? (size_t) (colon - text) >= sizeof name : strlen (text) >= sizeof name)
    return false;
  snprintf (name, sizeof name, "%.*s", colon ? (int) (colon - text) : (int) strlen (text), text);
  if (!es_border_from_name (name, &border) || (colon && border != ES_BORDER_CONSTANT)
      || (colon && !es_definition_parse_uint (colon + 1, 0, 65535, &value)))
    return false;
  d->border = border;
  d->border_value = (uint32_t) value;
  return true;
}

bool
es_definition_parse_binning (const char *text, EsEntropyDefinition *d)
{
  unsigned long lo, hi;
  char los[16];
  const char *second;
  EsBinning binning;

  if (strncmp (text, "range:", 6) == 0)
    {
      second = strchr (text + 6, ':');
      if (second == NULL || (size_t) (second - text - 6) >= sizeof los)
        return false;
      snprintf (los, sizeof los, "%.*s", (int) (second - text - 6), text + 6);
      if (!es_definition_parse_uint (los, 0, 65535, &lo) || !es_definition_parse_uint (second + 1, 0, 65535, &hi)
          || lo > hi)
        return false;
      d->binning = ES_BINNING_RANGE;
      d->range_lo = (uint32_t) lo, d->range_hi = (uint32_t) hi;
      return true;
    }
  if (!es_binning_from_name (text, &binning) || binning == ES_BINNING_RANGE)
    return false;
  d->binning = binning;
  return true;
}

bool
es_job_format_definition_options (const EsJob *job, char *text, size_t size)
{
  const EsEntropyDefinition *d = &job->definition;
  size_t n = 0;

#define ADD(...) n += (size_t) snprintf (text + (n < size ? n : size), n < size ? size - n : 0, __VA_ARGS__)
  if (size > 0)
    text[0] = '\0';
  if (job->op == ES_OP_CLAHE)
    return job->clahe.kind == ES_CLAHE_OPENCV;
  if (job->op != ES_OP_ENTROPY)
    return true;
  switch (d->shape)
    {
    case ES_SHAPE_RECT: ADD (" --rect=%dx%d", d->height, d->width); break;
    case ES_SHAPE_DISK: ADD (" --disk=%d", d->radius); break;
    case ES_SHAPE_BOX: ADD (" --box=%dx%dx%d", d->planes, d->height, d->width); break;
    case ES_SHAPE_BALL: ADD (" --ball=%d", d->radius); break;
    default: break;
    }
  if (d->border == ES_BORDER_CONSTANT)
    ADD (" --border=constant:%u", d->border_value);
  else if (d->border != ES_BORDER_CLIP)
    ADD (" --border=%s", es_border_name (d->border));
  if (d->binning == ES_BINNING_RANGE)
    ADD (" --binning=range:%u:%u", d->range_lo, d->range_hi);
  else if (d->binning != ES_BINNING_DEPTH)
    ADD (" --binning=%s", es_binning_name (d->binning));
  if (d->normalized)
    ADD (" --units=normalized");
#undef ADD
  return n < size && d->shape != ES_SHAPE_FOOTPRINT && d->mask == NULL;
}

static bool
check_side_max (const char *what, int side, int max, EsError *error)
{
  if (side < 1 || side > max || side % 2 == 0)
    return es_error_set (error, ES_ERROR_INVALID, "%s %d is out of range: odd, 1..%d", what, side, max);
  return true;
}

static bool
check_side (const char *what, int side, EsError *error)
{
  return check_side_max (what, side, ES_SIDE_MAX, error);
}

bool
es_definition_is_3d (const EsEntropyDefinition *d)
{
  return d->shape == ES_SHAPE_BOX || d->shape == ES_SHAPE_BALL
         || (d->shape == ES_SHAPE_FOOTPRINT && d->footprint != NULL && d->footprint->planes > 1);
}

static bool
definition_validate (const EsJob *job, EsError *error)
{
  const EsEntropyDefinition *d = &job->definition;

  switch (d->shape)
    {
    case ES_SHAPE_SQUARE: break;
    case ES_SHAPE_RECT:
      if (!check_side ("window height", d->height, error) || !check_side ("window width", d->width, error))
        return false;
      break;
    case ES_SHAPE_DISK:
      if (d->radius < 0 || d->radius > ES_RADIUS_MAX)
        return es_error_set (error, ES_ERROR_INVALID, "disk radius %d is out of range: 0..%d", d->radius,
                             ES_RADIUS_MAX);
      break;
    case ES_SHAPE_FOOTPRINT:
      if (d->footprint == NULL || d->footprint->cells == NULL)
        return es_error_set (error, ES_ERROR_INVALID, "the footprint shape needs a footprint");
      if (d->footprint->planes > 1
          && (!check_side_max ("footprint depth", d->footprint->planes, ES_SIDE_3D_MAX, error)
              || !check_side_max ("footprint height", d->footprint->height, ES_SIDE_3D_MAX, error)
              || !check_side_max ("footprint width", d->footprint->width, ES_SIDE_3D_MAX, error)))
        return false;
      if (!check_side ("footprint height", d->footprint->height, error)
          || !check_side ("footprint width", d->footprint->width, error))
        return false;
      if (es_window_pixels (job) == 0)
        return es_error_set (error, ES_ERROR_INVALID, "the footprint has no cell in it (nonzero = in)");
      break;
    case ES_SHAPE_BOX:
      if (!check_side_max ("box depth", d->planes, ES_SIDE_3D_MAX, error)
          || !check_side_max ("box height", d->height, ES_SIDE_3D_MAX, error)
          || !check_side_max ("box width", d->width, ES_SIDE_3D_MAX, error))
        return false;
      break;
    case ES_SHAPE_BALL:
      if (d->radius < 0 || d->radius > ES_RADIUS_3D_MAX)
        return es_error_set (error, ES_ERROR_INVALID, "ball radius %d is out of range: 0..%d", d->radius,
                             ES_RADIUS_3D_MAX);
      break;
    default: return es_error_set (error, ES_ERROR_INVALID, "unknown window shape %d", (int) d->shape);
    }
  if ((unsigned) d->border >= ES_N_BORDERS)
    return es_error_set (error, ES_ERROR_INVALID, "unknown border mode %d", (int) d->border);
  if (d->border == ES_BORDER_CONSTANT && d->border_value > 65535)
    return es_error_set (error, ES_ERROR_INVALID, "border value %u is out of range: 0..65535", d->border_value);
  if ((unsigned) d->binning >= ES_N_BINNINGS)
    return es_error_set (error, ES_ERROR_INVALID, "unknown binning %d", (int) d->binning);
  if (d->binning == ES_BINNING_RANGE && (d->range_lo > d->range_hi || d->range_hi > 65535))
    return es_error_set (error, ES_ERROR_INVALID, "range %u:%u is out of range: LO ≤ HI ≤ 65535", d->range_lo,
                         d->range_hi);
  if (d->mask != NULL && (d->mask->format != ES_FORMAT_U8 || d->mask->pixels == NULL))
    return es_error_set (error, ES_ERROR_INVALID, "a mask must be an 8-bit image");
  return true;
}

bool
es_job_is_default_definition (const EsJob *job)
{
  const EsEntropyDefinition *d = &job->definition;

  return job->op != ES_OP_ENTROPY
         || (d->shape == ES_SHAPE_SQUARE && job->window <= ES_FAST_WINDOW_MAX && d->border == ES_BORDER_CLIP
             && d->binning == ES_BINNING_DEPTH && job->levels <= ES_FAST_LEVELS_MAX && !d->normalized
             && d->mask == NULL);
}

const EsTilePasses *
es_job_tile_passes (const EsJob *job)
{
  const EsTilePasses *passes = es_op_info (job->op)->tile_passes;

  return passes != NULL && (passes->takes == NULL || passes->takes (job)) ? passes : NULL;
}

bool
es_job_whole_image (const EsJob *job)
{
  const EsOpInfo *info = es_op_info (job->op);

  return info->whole_image || info->image_grid
         || (job->op == ES_OP_ENTROPY && job->definition.binning == ES_BINNING_MINMAX);
}

void
es_job_resolve_minmax (EsJob *job, const EsImage *in)
{
  if (job->op != ES_OP_ENTROPY || job->definition.binning != ES_BINNING_MINMAX || in->levels != 0)
    return;
  es_image_sample_range (in, &job->definition.range_lo, &job->definition.range_hi);
  job->definition.binning = ES_BINNING_RANGE;
}

void
es_job_describe_definition (const EsJob *job, const char *units, char *text, size_t size)
{
  es_job_describe_definition_in (job, units, NULL, text, size);
}

void
es_job_describe_definition_in (const EsJob *job, const char *units, EsTranslate translate, char *text, size_t size)
{
  const EsEntropyDefinition *d = &job->definition;
  const EsTranslate t = translate ? translate : untranslated;
  char shape[64], border[48], bins[64];

  /* A CLAHE preset names its peer, so that an export says which CLAHE made it. */
  if (job->op == ES_OP_CLAHE && job->clahe.kind != ES_CLAHE_OPENCV)
    {
      char kernel[64] = "";

      if (job->clahe.kernel_height != 0)
        snprintf (kernel, sizeof kernel, t (N_ (" · kernel %d×%d")), job->clahe.kernel_height, job->clahe.kernel_width);
      snprintf (text, size, t (N_ ("like %s%s · %d bins")), es_clahe_kind_name (job->clahe.kind), kernel,
                job->clahe.bins ? job->clahe.bins : ES_CLAHE_BINS_DEFAULT);
      return;
    }
  if (job->op != ES_OP_ENTROPY)
    {
      snprintf (text, size, "%s", "");
      return;
    }
  switch (d->shape)
    {
    case ES_SHAPE_RECT: snprintf (shape, sizeof shape, "%d×%d", d->height, d->width); break;
    case ES_SHAPE_DISK: snprintf (shape, sizeof shape, t (N_ ("disk r=%d")), d->radius); break;
    case ES_SHAPE_FOOTPRINT:
      if (d->footprint != NULL && d->footprint->planes > 1)
        snprintf (shape, sizeof shape, t (N_ ("footprint %d×%d×%d")), d->footprint->planes, d->footprint->height,
                  d->footprint->width);
      else
        snprintf (shape, sizeof shape, t (N_ ("footprint %d×%d")), d->footprint ? d->footprint->height : 0,
                  d->footprint ? d->footprint->width : 0);
      break;
    case ES_SHAPE_BOX: snprintf (shape, sizeof shape, t (N_ ("box %d×%d×%d")), d->planes, d->height, d->width); break;
    case ES_SHAPE_BALL: snprintf (shape, sizeof shape, t (N_ ("ball r=%d")), d->radius); break;
    default: snprintf (shape, sizeof shape, "%d×%d", job->window, job->window); break;
    }
  if (d->border == ES_BORDER_CONSTANT)
    snprintf (border, sizeof border, t (N_ ("constant %u")), d->border_value);
  else
    snprintf (border, sizeof border, "%s", t (es_border_name (d->border)));
  switch (d->binning)
    {
    case ES_BINNING_RANGE:
      snprintf (bins, sizeof bins, t (N_ ("%d bins of %u..%u")), job->levels, d->range_lo, d->range_hi);
      break;
    case ES_BINNING_MINMAX: snprintf (bins, sizeof bins, t (N_ ("%d bins of min..max")), job->levels); break;
    case ES_BINNING_EXACT: snprintf (bins, sizeof bins, "%s", t (N_ ("exact bins"))); break;
    case ES_BINNING_BYTE: snprintf (bins, sizeof bins, t (N_ ("%d bins of 8-bit values")), job->levels); break;
    default: snprintf (bins, sizeof bins, t (N_ ("%d bins")), job->levels); break;
    }
  snprintf (text, size, "%s · %s · %s · %s%s%s", shape, border, bins, d->normalized ? t (N_ ("normalized")) : units,
            d->mask ? " · " : "", d->mask ? t (N_ ("masked")) : "");
}

/* ---- the operations ---------------------------------------------------------- */

static EsFormat
u8_output (const EsJob *job, EsFormat input)
{
  (void) job, (void) input;
  return ES_FORMAT_U8;
}

static EsFormat
f32_output (const EsJob *job, EsFormat input)
{
  (void) job, (void) input;
  return ES_FORMAT_F32;
}

/* CLAHE maps each sample through a LUT of its own depth, as OpenCV and
 * MATLAB do; scikit-image's result is a float in 0..1. */
static EsFormat
clahe_output (const EsJob *job, EsFormat input)
{
  return job->clahe.kind == ES_CLAHE_SKIMAGE ? ES_FORMAT_F32 : input;
}

static int
no_halo (const EsJob *job)
{
  (void) job;
  return 0;
}

static int
window_halo (const EsJob *job)
{
  int half_height, half_width;

  es_window_extent (job, &half_height, &half_width);
  return half_height;
}

/* A 3-D window reads half its depth of planes above and below. */
static int
window_plane_halo (const EsJob *job)
{
  int half_depth, half_height, half_width;

  es_window_extent_3d (job, &half_depth, &half_height, &half_width);
  return half_depth;
}

/* The 4-neighbour Laplacian reads the rows above and below. */
static int
stencil_halo (const EsJob *job)
{
  (void) job;
  return 1;
}

/* H ≤ ln(min(B, n)) with n ≤ the window's cells and B ≤ L (2^16 for exact
 * bins, whose depth the job does not know); normalized values ≤ 1. */
static double
entropy_range_max (const EsJob *job, EsFormat result)
{
  int window_pixels = es_window_pixels (job);
  int bins = job->definition.binning == ES_BINNING_EXACT ? 65536 : job->levels;

  (void) result;
  if (job->definition.normalized)
    return 1.0;
  return log ((double) (bins < window_pixels ? bins : window_pixels)) * es_entropy_unit_scale (&job->definition);
}

static double
levels_range_max (const EsJob *job, EsFormat result)
{
  (void) result;
  return job->levels - 1;
}

/* Gray results span their samples' full scale: 0..255, and 0..65535 where
 * the result keeps a 16-bit input's depth (CLAHE). */
static double
gray_range_max (const EsJob *job, EsFormat result)
{
  (void) job;
  return result == ES_FORMAT_U16 ? 65535.0 : 255.0;
}

/* skimage's preset gives floats in 0..1; the others the result format's full scale. */
static double
clahe_range_max (const EsJob *job, EsFormat result)
{
  return job->clahe.kind == ES_CLAHE_SKIMAGE ? 1.0 : gray_range_max (job, result);
}

/* Entropy reads the window only as the square's side (the other shapes
 * carry their own size) and no levels with exact bins. */
static unsigned
entropy_params_read (const EsJob *job)
{
  unsigned read = ES_PARAM_BIT (ES_PARAM_WINDOW) | ES_PARAM_BIT (ES_PARAM_LEVELS);

  if (job->definition.shape != ES_SHAPE_SQUARE)
    read &= ~ES_PARAM_BIT (ES_PARAM_WINDOW);
  if (job->definition.binning == ES_BINNING_EXACT)
    read &= ~ES_PARAM_BIT (ES_PARAM_LEVELS);
  return read;
}

/* ---- CPU costs for the `auto` engine -------------------------------------------
 * Nanoseconds a pixel on one core (Zen 4, photographs and random images),
 * measured (docs/performance/cpu-entropy.md; PERFORMANCE.md, "This
 * machine"); compute/es-auto.c turns them into milliseconds for the cores at
 * hand. A figure within a factor of two is enough to avoid the bad picks. */

static double
quantize_pixel_ns (const EsJob *job)
{
  (void) job;
  return 0.3;
}

static double
equalize_pixel_ns (const EsJob *job)
{
  (void) job;
  return 0.9;
}

static double
sharpen_pixel_ns (const EsJob *job)
{
  (void) job;
  return 0.5;
}

/* 8-bit, clip 2, 8×8 tiles, 4096² on this machine (PERFORMANCE.md): the
 * histograms and the blend each read every pixel once. */
static double
clahe_pixel_ns (const EsJob *job)
{
  (void) job;
  return 1.5;
}

/* Entropy at 16 levels by window side. */
static const struct {
  int side;
  double ns;
} entropy_ns[] = {
  { 1, 1.5 }, { 3, 2.4 }, { 5, 3.1 }, { 9, 6.7 }, { 15, 13.8 }, { 31, 104.0 },
};
/* Entropy with a definition of its own (shape, border, binning, mask) goes
 * through the general path: about three times the work. */
#define DEFINITION_FACTOR 3.0

/* The window's side, whatever its shape. */
static int
window_side (const EsJob *job)
{
  const EsEntropyDefinition *d = &job->definition;

  switch (d->shape)
    {
    case ES_SHAPE_RECT: return d->height > d->width ? d->height : d->width;
    case ES_SHAPE_DISK: return 2 * d->radius + 1;
    case ES_SHAPE_FOOTPRINT:
      if (!d->footprint)
        return job->window;
      return d->footprint->height > d->footprint->width ? d->footprint->height : d->footprint->width;
    case ES_SHAPE_SQUARE:
    default: return job->window;
    }
}

/* A 3-D window's voxel: the CPU slides a histogram along x, two updates
 * for each of the window's spans (dz, dy), beside the voxel's value.
 * Measured on 2 threads (PERFORMANCE.md, "Volumes"), as ns a voxel and
 * effective thread: cube 3 (9 spans) 13-15, ball 3 (29) 28-35 at 16 and
 * 256 levels, ball 5 (81, slid) 146; this line is within a factor of
 * two of each. The side of a 2-D window would say 9 ns for all of them. */
#define VOLUME_VOXEL_NS 8.0
#define VOLUME_SPAN_NS 1.4

/* Interpolated by side, more with many levels. */
static double
entropy_pixel_ns (const EsJob *job)
{
  if (es_definition_is_3d (&job->definition))
    return VOLUME_VOXEL_NS + VOLUME_SPAN_NS * es_window_spans_3d (job, NULL, 0);

  int n = (int) (sizeof entropy_ns / sizeof entropy_ns[0]);
  double side = window_side (job), ns = entropy_ns[n - 1].ns * (side / 31.0) * (side / 31.0);
  double levels = job->levels > 16 ? job->levels : 16;

  for (int i = 1; i < n; i++)
    if (side <= entropy_ns[i].side)
      {
        double t = (side - entropy_ns[i - 1].side) / (entropy_ns[i].side - entropy_ns[i - 1].side);
        ns = entropy_ns[i - 1].ns + (t > 0 ? t : 0) * (entropy_ns[i].ns - entropy_ns[i - 1].ns);
        break;
      }
  /* 5×5 at 256 levels took 2.8 times 16 levels' time. */
  ns *= 1.0 + (levels - 16) / 133.0;
  return es_job_is_default_definition (job) ? ns : ns * DEFINITION_FACTOR;
}

/* The CUDA variants' sums and logarithms differ from the CPU's in the last
 * bits of a float: within the tests' 1e-5 nats. */
#define ENTROPY_TOLERANCE 1e-5

static const EsOpInfo ops[ES_N_OPS] = {
  [ES_OP_QUANTIZE] = {
    .op = ES_OP_QUANTIZE, .name = "quantize", .title = N_ ("Quantize"), .result_title = N_ ("Quantized"),
    .summary = N_ ("the quantization levels floor(v · L / 2^depth), 0..L−1"),
    .output_format = u8_output, .input_reads = 1,
    .params = ES_PARAM_BIT (ES_PARAM_LEVELS),
    .cap = { ES_PARAM_LEVELS, ES_FAST_LEVELS_MAX, "quantize writes 8-bit levels" },
    .halo = no_halo, .plane_halo = no_halo, .units = "level", .colormap = "gray",
    .range_max = levels_range_max, .range_text = "0..L−1",
    .cpu_pixel_ns = quantize_pixel_ns,
    .cpu = es_cpu_quantize, .cpu_memory = es_cpu_quantize_memory, .cuda = ES_CUDA_ENTRY (es_cuda_quantize),
  },
  [ES_OP_ENTROPY] = {
    .op = ES_OP_ENTROPY, .name = "entropy", .title = N_ ("Entropy"), .result_title = N_ ("Entropy"),
    .summary = N_ ("local entropy in nats of the bins in a window around each pixel (K×K clipped to the image by "
               "default)"),
    .definition_name = "entroscope", .definition_title = N_ ("Entroscope"),
    .output_format = f32_output, .input_reads = 1,
    .params = ES_PARAM_BIT (ES_PARAM_WINDOW) | ES_PARAM_BIT (ES_PARAM_LEVELS),
    .params_read = entropy_params_read,
    .halo = window_halo, .plane_halo = window_plane_halo, .units = "nats", .colormap = "viridis",
    .range_max = entropy_range_max, .range_text = "0..ln(min(B, n)), 0..1 normalized",
    .tolerance = ENTROPY_TOLERANCE, .cpu_pixel_ns = entropy_pixel_ns,
    .cpu = es_cpu_entropy, .cpu_memory = es_cpu_entropy_memory, .cuda = ES_CUDA_ENTRY (es_cuda_entropy),
  },
  [ES_OP_EQUALIZE] = {
    .op = ES_OP_EQUALIZE, .name = "equalize", .title = N_ ("Equalize"), .result_title = N_ ("Equalized"),
    .summary = N_ ("histogram equalization, bit-identical to OpenCV's equalizeHist"),
    .output_format = u8_output, .input_reads = 2,
    .params = 0,
    .halo = no_halo, .plane_halo = no_halo, .whole_image = true, .units = "gray", .colormap = "gray",
    .range_max = gray_range_max, .range_text = "0..255",
    .cpu_pixel_ns = equalize_pixel_ns,
    .cpu = es_cpu_equalize, .cpu_memory = es_cpu_equalize_memory, .cuda = ES_CUDA_ENTRY (es_cuda_equalize),
  },
  [ES_OP_SHARPEN] = {
    .op = ES_OP_SHARPEN, .name = "sharpen", .title = N_ ("Sharpen"), .result_title = N_ ("Sharpened"),
    .summary = N_ ("c + A · (4c − N − S − E − W), replicated borders; at A = 1 bit-identical to "
               "OpenCV's filter2D with [0 −1 0; −1 5 −1; 0 −1 0]"),
    .output_format = u8_output, .input_reads = 1,
    .params = ES_PARAM_BIT (ES_PARAM_AMOUNT),
    .halo = stencil_halo, .plane_halo = no_halo, .units = "gray", .colormap = "gray",
    .range_max = gray_range_max, .range_text = "0..255",
    .cpu_pixel_ns = sharpen_pixel_ns,
    .cpu = es_cpu_sharpen, .cpu_memory = es_cpu_sharpen_memory, .cuda = ES_CUDA_ENTRY (es_cuda_sharpen),
  },
  [ES_OP_CLAHE] = {
    .op = ES_OP_CLAHE, .name = "clahe", .title = N_ ("CLAHE"), .result_title = N_ ("CLAHE"),
    .summary = N_ ("contrast-limited adaptive histogram equalization over a grid of tiles, bit-identical to OpenCV's "
               "createCLAHE(clipLimit, tileGridSize).apply()"),
    .definition_name = "opencv", .definition_title = N_ ("OpenCV createCLAHE"),
    .output_format = clahe_output, .input_reads = 2,
    .params = ES_PARAM_BIT (ES_PARAM_CLIP) | ES_PARAM_BIT (ES_PARAM_TILE_COLUMNS) | ES_PARAM_BIT (ES_PARAM_TILE_ROWS),
    .halo = no_halo, .plane_halo = no_halo, .image_grid = true, .tile_passes = &es_cpu_clahe_passes,
    .units = "gray", .colormap = "gray",
    .range_max = clahe_range_max, .range_text = "0..255 (8-bit input; 16-bit input's 0..65535; like skimage 0..1)",
    .cpu_pixel_ns = clahe_pixel_ns,
    .cpu = es_cpu_clahe, .cpu_memory = es_cpu_clahe_memory, .cuda = ES_CUDA_ENTRY (es_cuda_clahe),
  },
};

EsExtent
es_extent_of (const EsImage *in)
{
  EsExtent extent = { in->width, in->height, es_image_planes (in), in->format, in->depth, in->levels };
  return extent;
}

const EsOpInfo *
es_op_info (EsOp op)
{
  return (unsigned) op < ES_N_OPS ? &ops[op] : NULL;
}

const char *
es_op_name (EsOp op)
{
  return (unsigned) op < ES_N_OPS ? ops[op].name : "?";
}

bool
es_op_from_name (const char *name, EsOp *op)
{
  for (int i = 0; i < ES_N_OPS; i++)
    if (strcmp (name, ops[i].name) == 0)
      {
        *op = (EsOp) i;
        return true;
      }
  return false;
}

EsFormat
es_job_output_format (const EsJob *job, EsFormat input)
{
  return ops[job->op].output_format (job, input);
}

double
es_job_range_max (const EsJob *job, EsFormat result)
{
  return ops[job->op].range_max (job, result);
}

unsigned
es_job_params_read (const EsJob *job)
{
  const EsOpInfo *info = &ops[job->op];

  return info->params_read ? info->params_read (job) & info->params : info->params;
}

double
es_op_param_max (EsOp op, EsParamId id)
{
  const EsParamCap *cap = &ops[op].cap;

  return cap->why != NULL && cap->id == id ? cap->max : params[id].max;
}

bool
es_job_is_volumetric (const EsJob *job)
{
  return es_op_info (job->op)->whole_image || (job->op == ES_OP_ENTROPY && es_definition_is_3d (&job->definition));
}

bool
es_job_validate (const EsJob *job, EsError *error)
{
  const EsParamCap *cap;

  if (job == NULL || (unsigned) job->op >= ES_N_OPS)
    return es_error_set (error, ES_ERROR_INVALID, "unknown operation %d", job ? (int) job->op : -1);
  for (int i = 0; i < ES_N_PARAMS; i++)
    if (es_op_uses (job->op, (EsParamId) i)
        && !es_param_check (&params[i], es_job_get_param (job, (EsParamId) i), error))
      return false;
  cap = &ops[job->op].cap;
  if (cap->why != NULL && es_job_get_param (job, cap->id) > cap->max)
    return es_error_set (error, ES_ERROR_INVALID, "%s: %s %g is out of range: %g..%g", cap->why, params[cap->id].name,
                         es_job_get_param (job, cap->id), params[cap->id].min, cap->max);
  if (job->op == ES_OP_CLAHE)
    return clahe_definition_validate (job, error);
  return job->op != ES_OP_ENTROPY || definition_validate (job, error);
}
