/* SPDX-License-Identifier: MIT */
/* Entropy definitions (DESIGN.md §1): every shape × border × binning × units ×
 * mask against the float64 reference, on every backend and kernel variant;
 * the shared helpers; the 8-bit view. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-definitions.h"
#include "es-engine.h"
#include "cpu/es-cpu-internal.h"
#include "es-reference.h"
#include "tap.h"

#define ENTROPY_TOLERANCE 1e-5

static unsigned long long rng;

static int
random_int (int lo, int hi)
{
  return tap_random_int (&rng, lo, hi);
}

/* A random image with a few spare bytes at each row's end; about one value
 * in four repeats its left neighbour, so windows hold runs. */
static bool
make_image (EsImage *image, int width, int height, EsFormat format, int depth, int levels)
{
  size_t sample = format == ES_FORMAT_U16 ? 2 : 1;
  uint32_t max = levels ? (uint32_t) levels - 1 : (1u << depth) - 1;
  /* Narrow images of 16-bit samples: a few values only, so that exact bins repeat. */
  uint32_t spread = random_int (0, 1) ? max : (max < 7 ? max : 7);
  uint32_t base = (uint32_t) random_int (0, (int) (max - spread));

  *image = (EsImage){ .width = width, .height = height, .format = format, .depth = depth, .levels = levels };
  image->stride = (size_t) width * sample + sample * (size_t) random_int (0, 3);
  image->pixels = calloc (image->stride, (size_t) height);
  if (image->pixels == NULL)
    return false;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        uint32_t v = base + (uint32_t) (tap_random (&rng) % (spread + 1));
        if (x > 0 && random_int (0, 3) == 0)
          v = es_reference_sample (image, x - 1, y);
        if (format == ES_FORMAT_U16)
          ((uint16_t *) es_image_row (image, y))[x] = (uint16_t) v;
        else
          ((uint8_t *) es_image_row (image, y))[x] = (uint8_t) v;
      }
  return true;
}

static bool
make_mask (EsImage *mask, int width, int height)
{
  if (!es_image_alloc (mask, width, height, ES_FORMAT_U8, 8, NULL))
    return false;
  /* Mostly in, with holes and a fully masked band: pixels whose windows
   * count nothing. */
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      ((uint8_t *) es_image_row (mask, y))[x] = (uint8_t) (random_int (0, 4) != 0 && y % 11 != 5
                                                             ? 1 + random_int (0, 254)
                                                             : 0);
  return true;
}

/* ---- the runners: the CPU, then every CUDA variant ----------------------------
 * The CUDA side hooks in here: every entropy variant of a CUDA engine runs
 * every combination below. A variant that cannot run one must hand it to a
 * kernel that can (the engine's rule), never return a wrong result. */

typedef struct {
  EsEngine *engine;
  const char *variant; /* NULL: the default */
  char name[64];
} Runner;

static int
open_runners (Runner *runners, int capacity)
{
  EsError error = { 0 };
  int n = 0;
  EsEngine *cuda;

  runners[n].engine = es_engine_new (ES_BACKEND_CPU, &error);
  snprintf (runners[n].name, sizeof runners[n].name, "cpu");
  n++;
  cuda = es_engine_new (ES_BACKEND_CUDA, &error);
  if (cuda == NULL)
    tap_diag ("no CUDA runners: %s", error.message);
  else
    {
      size_t n_variants;
      const EsVariant *variants = es_variants (ES_OP_ENTROPY, &n_variants);

      for (size_t v = 0; v < n_variants && n < capacity; v++)
        {
          runners[n].engine = cuda;
          runners[n].variant = variants[v].id;
          snprintf (runners[n].name, sizeof runners[n].name, "cuda %s", variants[v].id);
          n++;
        }
    }
  return n;
}

/* Runs the job and compares with the reference; NaN must meet NaN. */
static bool
check_job (const Runner *runner, EsJob job, const EsImage *in, const double *expected, const char *what)
{
  EsImage out = { 0 };
  EsError error = { 0 };
  double worst = 0.0;
  int wx = -1, wy = -1;
  bool ok;

  job.variant = runner->variant;
  ok = es_run (runner->engine, &job, in, &out, NULL, &error);
  if (!ok)
    return tap_ok (false, "%s: %s: %s", runner->name, what, error.message);
  for (int y = 0; y < in->height; y++)
    for (int x = 0; x < in->width; x++)
      {
        double want = expected[(size_t) y * in->width + x];
        float got = ((const float *) es_image_row (&out, y))[x];
        double off = isnan (want) != isnan (got) ? INFINITY : isnan (want) ? 0.0 : fabs (got - want);

        /* A single-bin window is exactly 0, never rounding noise. */
        if (want == 0.0 && got != 0.0f)
          off = INFINITY;
        if (off > worst)
          worst = off, wx = x, wy = y;
      }
  ok = tap_ok (worst <= ENTROPY_TOLERANCE, "%s: %s: worst error %.3g", runner->name, what, worst);
  if (!ok)
    tap_diag ("at (%d, %d): expected %.9g, got %.9g", wx, wy, expected[(size_t) wy * in->width + wx],
              ((const float *) es_image_row (&out, wy))[wx]);
  es_image_clear (&out);
  return ok;
}

/* ---- every combination ------------------------------------------------------------ */

static const int sizes[][2] = { { 1, 1 }, { 1, 23 }, { 19, 1 }, { 2, 3 }, { 37, 23 }, { 61, 45 }, { 29, 64 } };

typedef struct {
  EsFormat format;
  int depth;
  bool levels;
  const char *name;
} Kind;

static const Kind kinds[] = {
  { ES_FORMAT_U8, 8, false, "u8" },
  { ES_FORMAT_U16, 16, false, "u16" },
  { ES_FORMAT_U16, 12, false, "u16 depth 12" },
  { ES_FORMAT_U8, 3, false, "u8 depth 3" },
  { ES_FORMAT_U8, 8, true, "u8 levels" },
};

static void
set_shape (EsJob *job, EsShape shape, EsFootprint *footprint, uint8_t *cells)
{
  EsEntropyDefinition *d = &job->definition;

  d->shape = shape;
  switch (shape)
    {
    case ES_SHAPE_SQUARE: job->window = 3 + 2 * random_int (0, 3); break;
    case ES_SHAPE_RECT:
      d->height = 1 + 2 * random_int (0, 4);
      d->width = 1 + 2 * random_int (0, 5);
      break;
    case ES_SHAPE_DISK: d->radius = random_int (0, 6); break;
    default:
      /* A lopsided footprint with holes, never empty. */
      footprint->height = 1 + 2 * random_int (0, 4);
      footprint->width = 1 + 2 * random_int (0, 4);
      for (int i = 0; i < footprint->height * footprint->width; i++)
        cells[i] = (uint8_t) (random_int (0, 2) != 0 ? random_int (1, 255) : 0);
      cells[random_int (0, footprint->height * footprint->width - 1)] = 1;
      footprint->cells = cells;
      d->footprint = footprint;
      break;
    }
}

static void
set_binning (EsJob *job, EsBinning binning, const EsImage *in)
{
  static const int level_choices[] = { 2, 16, 256, 300, 4096, 65536 };
  uint32_t max = in->levels ? (uint32_t) in->levels - 1 : (1u << in->depth) - 1;
  EsEntropyDefinition *d = &job->definition;

  d->binning = binning;
  if (!in->levels)
    job->levels = level_choices[random_int (0, 5)];
  if (binning == ES_BINNING_RANGE)
    {
      d->range_lo = (uint32_t) random_int (0, (int) max);
      d->range_hi = (uint32_t) random_int ((int) d->range_lo, (int) max);
    }
  d->border_value = (uint32_t) random_int (0, (int) max);
}

static void
check_combinations (const Runner *runners, int n_runners)
{
  EsFootprint footprint = { 0 };
  uint8_t cells[9 * 9];
  int counter = 0;

  for (int shape = 0; shape < ES_N_SHAPES_2D; shape++)
    for (int border = 0; border < ES_N_BORDERS; border++)
      for (int binning = 0; binning < ES_N_BINNINGS; binning++)
        for (int variant = 0; variant < 4; variant++)
          {
            const Kind *kind = &kinds[counter % (int) (sizeof kinds / sizeof kinds[0])];
            const int *size = sizes[counter % (int) (sizeof sizes / sizeof sizes[0])];
            bool normalized = variant & 1, masked = variant & 2;
            EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
            EsImage in, mask = { 0 };
            double *expected;
            char what[256], description[160];

            counter++;
            job.levels = kind->levels ? (random_int (0, 1) ? 16 : 256) : 16;
            if (!make_image (&in, size[0], size[1], kind->format, kind->depth, kind->levels ? job.levels : 0)
                || (masked && !make_mask (&mask, size[0], size[1])))
              {
                tap_ok (false, "allocating a test image");
                return;
              }
            set_shape (&job, (EsShape) shape, &footprint, cells);
            set_binning (&job, (EsBinning) binning, &in);
            job.definition.border = (EsBorder) border;
            job.definition.normalized = normalized;
            /* Bits where not normalized, on every other case. */
            job.definition.bits = !normalized && counter % 2 == 0;
            job.definition.mask = masked ? &mask : NULL;
            expected = malloc (sizeof *expected * (size_t) in.width * (size_t) in.height);
            es_reference_entropy_defined (&in, job.levels, job.window, &job.definition, expected);
            es_job_describe_definition (&job, job.definition.bits ? "bits" : "nats", description, sizeof description);
            snprintf (what, sizeof what, "%s %d×%d, %s", kind->name, in.width, in.height, description);
            for (int r = 0; r < n_runners; r++)
              check_job (&runners[r], job, &in, expected, what);
            free (expected);
            es_image_clear (&mask);
            free (in.pixels);
          }
}

/* The default definition in bits runs the fast path (the CUDA kernels scale
 * as they store, the CPU scales its nats after), and equals the nats result
 * scaled as es_entropy_store does, bit for bit, on the CPU and on every
 * CUDA variant that takes it. */
static void
check_default_in_bits (const Runner *runners, int n_runners)
{
  static const int windows[][2] = { { 3, 16 }, { 5, 16 }, { 9, 8 }, { 15, 16 }, { 31, 256 }, { 7, 256 } };

  for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++)
    {
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      EsImage in;
      int w = 67 + random_int (0, 190), h = 41 + random_int (0, 90);

      if (!make_image (&in, w, h, ES_FORMAT_U8, 8, 0))
        return;
      job.window = windows[i][0];
      job.levels = windows[i][1];
      for (int r = 0; r < n_runners; r++)
        {
          EsImage nats = { 0 }, bits = { 0 };
          EsTiming timing = { 0 };
          EsError error = { 0 };
          EsJob in_bits = job;
          bool same = true;

          const EsVariant *variant = runners[r].variant ? es_variant_find (ES_OP_ENTROPY, runners[r].variant) : NULL;

          job.variant = in_bits.variant = runners[r].variant;
          in_bits.definition.bits = true;
          /* The teaching variants compute nats only. */
          if (variant != NULL && es_variant_unsupported (variant, &in_bits) != NULL)
            continue;
          if (!es_run (runners[r].engine, &job, &in, &nats, NULL, &error)
              || !es_run (runners[r].engine, &in_bits, &in, &bits, &timing, &error))
            {
              tap_ok (false, "%s: %d×%d default %d×%d, %d levels, in bits: %s", runners[r].name, w, h, job.window,
                      job.window, job.levels, error.message);
              continue;
            }
          for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
              {
                float want = es_entropy_store (((const float *) es_image_row (&nats, y))[x], ES_BITS_PER_NAT);
                same &= memcmp (&want, (const float *) es_image_row (&bits, y) + x, sizeof want) == 0;
              }
          tap_ok (same && (variant == NULL || strcmp (timing.variant, variant->id) == 0),
                  "%s: %d×%d default %d×%d, %d levels: bits are nats scaled bit for bit, run on %s", runners[r].name, w,
                  h, job.window, job.window, job.levels, timing.variant);
          es_image_clear (&nats);
          es_image_clear (&bits);
        }
      free (in.pixels);
    }
}

/* Large windows, many levels and 16-bit exact bins, on a larger image, and
 * small bands so that band edges fall inside the windows. */
static void
check_large (const Runner *runners, int n_runners)
{
  static const struct {
    EsShape shape;
    int size;
    EsBinning binning;
    int levels;
    EsBorder border;
    int width; /* 0: about 128; ≥ 256 makes the CPU slide two halves of each row */
  } cases[] = {
    { ES_SHAPE_SQUARE, 255, ES_BINNING_DEPTH, 16, ES_BORDER_CLIP, 0 },
    { ES_SHAPE_SQUARE, 45, ES_BINNING_EXACT, 0, ES_BORDER_SYMMETRIC, 0 },
    { ES_SHAPE_DISK, 15, ES_BINNING_EXACT, 0, ES_BORDER_CLIP, 0 },
    { ES_SHAPE_DISK, 40, ES_BINNING_RANGE, 65536, ES_BORDER_MIRROR, 0 },
    { ES_SHAPE_RECT, 33, ES_BINNING_MINMAX, 1000, ES_BORDER_REPLICATE, 0 },
    { ES_SHAPE_SQUARE, 5, ES_BINNING_DEPTH, 65536, ES_BORDER_CLIP, 0 },
    { ES_SHAPE_SQUARE, 9, ES_BINNING_BYTE, 256, ES_BORDER_SYMMETRIC, 0 },
    { ES_SHAPE_DISK, 3, ES_BINNING_EXACT, 0, ES_BORDER_CLIP, 301 },
    { ES_SHAPE_DISK, 4, ES_BINNING_DEPTH, 300, ES_BORDER_MIRROR, 300 },
    { ES_SHAPE_RECT, 5, ES_BINNING_EXACT, 0, ES_BORDER_CONSTANT, 257 },
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      EsImage in, mask = { 0 };
      double *expected;
      char what[256], description[160];
      int w = cases[i].width ? cases[i].width : 120 + random_int (0, 17), h = 70 + random_int (0, 13);

      if (!make_image (&in, w, h, ES_FORMAT_U16, 16, 0))
        return;
      job.definition.shape = cases[i].shape;
      job.window = cases[i].shape == ES_SHAPE_SQUARE ? cases[i].size : 5;
      job.definition.radius = cases[i].size;
      job.definition.height = cases[i].size, job.definition.width = 7;
      job.definition.binning = cases[i].binning;
      job.definition.border = cases[i].border;
      job.definition.range_lo = 1000, job.definition.range_hi = 60000;
      if (cases[i].levels)
        job.levels = cases[i].levels;
      /* An odd wide row with a mask: both halves' edges and holes. */
      if (w % 2 == 1 && w > 256 && make_mask (&mask, w, h))
        job.definition.mask = &mask;
      expected = malloc (sizeof *expected * (size_t) w * (size_t) h);
      es_reference_entropy_defined (&in, job.levels, job.window, &job.definition, expected);
      es_job_describe_definition (&job, "nats", description, sizeof description);
      snprintf (what, sizeof what, "u16 %d×%d, %s, bands of 7 rows", w, h, description);
      es_cpu_set_band_rows (7);
      for (int r = 0; r < n_runners; r++)
        check_job (&runners[r], job, &in, expected, what);
      es_cpu_set_band_rows (0);
      free (expected);
      es_image_clear (&mask);
      free (in.pixels);
    }
}

/* ---- the shared helpers ------------------------------------------------------------ */

static void
check_helpers (void)
{
  static const char *const patterns[] = {
    [ES_BORDER_SYMMETRIC] = "dcba|abcd|dcba",
    [ES_BORDER_MIRROR] = "dcb|abcd|cba",
    [ES_BORDER_REPLICATE] = "aa|abcd|dd",
  };
  bool ok = true;

  /* The patterns of DESIGN.md §1 on `a b c d`. */
  for (int border = ES_BORDER_SYMMETRIC; border <= ES_BORDER_REPLICATE; border++)
    {
      const char *pattern = patterns[border];
      int before = (int) (strchr (pattern, '|') - pattern);
      char got[32];
      int k = 0;

      for (int i = -before; i < 4 + before; i++)
        {
          if (i == 0 || i == 4)
            got[k++] = '|';
          got[k++] = (char) ('a' + es_border_index (i, 4, (EsBorder) border));
        }
      got[k] = '\0';
      tap_ok (strcmp (got, pattern) == 0, "%s border on a b c d: %s", es_border_name ((EsBorder) border), got);
    }
  tap_ok (es_border_index (-1, 4, ES_BORDER_CLIP) == -1 && es_border_index (4, 4, ES_BORDER_CONSTANT) == -1
            && es_border_index (-3, 1, ES_BORDER_MIRROR) == 0 && es_border_index (9, 2, ES_BORDER_SYMMETRIC) == 1,
          "clip and constant leave outside cells to the caller; tiny images fold");

  /* Disks: scikit-image's morphology.disk(r) counts. */
  {
    static const int disk_cells[] = { 1, 5, 13, 29, 49, 81, 113 };
    EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

    job.definition.shape = ES_SHAPE_DISK;
    for (int r = 0; r < 7; r++)
      {
        job.definition.radius = r;
        ok &= es_window_pixels (&job) == disk_cells[r];
      }
    tap_ok (ok, "disk(r) cells for r = 0..6: 1 5 13 29 49 81 113, as scikit-image");
  }

  /* The zero threshold lies between rounding noise and the smallest value. */
  ok = true;
  for (int n = 2; n <= 255 * 255; n += n < 100 ? 1 : 97)
    {
      double m = n, smallest = ((m - 1) * log (m / (m - 1)) + log (m)) / m;
      ok &= es_entropy_zero_below (n) < smallest && es_entropy_zero_below (n) > 1e-5;
    }
  tap_ok (ok, "es_entropy_zero_below (n) is below the smallest nonzero entropy and above 1e-5, n ≤ 255²");

  /* Normalized: 0 when min(B, n) is 1; NaN where nothing counts. */
  tap_ok (es_entropy_value (0.5, 4, 1, true, 1.0) == 0.0 && isnan (es_entropy_value (0.0, 0, 16, false, 1.0))
            && fabs (es_entropy_value (log (2.0), 2, 16, true, ES_BITS_PER_NAT) - 1.0) < 1e-12
            && fabs (es_entropy_value (log (2.0), 2, 16, false, ES_BITS_PER_NAT) - 1.0) < 1e-12,
          "normalized by ln(min(B, n)), 0 for one possible bin, NaN for n = 0; bits as H / ln 2");
}

/* ---- the 8-bit view (issue 15 item 9) --------------------------------------------- */

static void
check_view (void)
{
  static const uint32_t maxvals[] = { 1, 3, 15, 255, 1023, 4095, 65535, 100, 1000, 40000 };
  bool ok = true;

  for (size_t i = 0; i < sizeof maxvals / sizeof maxvals[0]; i++)
    {
      uint32_t maxval = maxvals[i];
      bool same = true;

      for (uint32_t v = 0; v <= maxval; v++)
        same &= es_sample_to_u8_max (v, maxval) == es_reference_view (v, maxval)
                && fabs ((double) es_sample_to_u8_max (v, maxval) - v * 255.0 / maxval) <= 0.5;
      same &= es_sample_to_u8_max (maxval, maxval) == 255 && es_sample_to_u8_max (0, maxval) == 0;
      ok &= tap_ok (same, "8-bit view of maxval %u: round(v · 255 / maxval), full scale → 255", maxval);
    }
  tap_ok (es_sample_to_u8 (1, 1) == 255 && es_sample_to_u8 (15, 4) == 255 && es_sample_to_u8 (200, 8) == 200
            && es_sample_to_u8 (65535, 16) == 255 && es_sample_to_u8 (128, 16) == 0 && es_sample_to_u8 (129, 16) == 1,
          "1-bit white, 4-bit 15 and 16-bit 65535 are 255; 8-bit unchanged; 16-bit 128 → 0, 129 → 1");

  /* The CPU's row mapping (no division) against the definition, every sample. */
  for (size_t i = 0; i < sizeof maxvals / sizeof maxvals[0]; i++)
    {
      uint32_t maxval = maxvals[i];
      int depth = 0;
      EsImage in;
      uint8_t *row;
      bool same = true;

      for (uint32_t m = maxval; m != 0; m >>= 1)
        depth++;
      if (!es_image_alloc (&in, (int) maxval + 1, 1, depth > 8 ? ES_FORMAT_U16 : ES_FORMAT_U8, depth, NULL))
        continue;
      in.maxval = maxval == (1u << depth) - 1 ? 0 : maxval;
      row = malloc (maxval + 1);
      for (uint32_t v = 0; v <= maxval; v++)
        if (depth > 8)
          ((uint16_t *) in.pixels)[v] = (uint16_t) v;
        else
          ((uint8_t *) in.pixels)[v] = (uint8_t) v;
      es_cpu_map_row (&in, 0, ES_CPU_MAP_VIEW, 16, row);
      for (uint32_t v = 0; v <= maxval; v++)
        same &= row[v] == es_reference_view (v, maxval);
      tap_ok (same, "the CPU's 8-bit rows match the definition for maxval %u", maxval);
      free (row);
      es_image_clear (&in);
    }
  (void) ok;
}

/* Equalize and sharpen read the 8-bit view: a 1-bit image is black and white. */
static void
check_view_in_ops (const Runner *runner)
{
  EsImage in, out = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_SHARPEN);
  EsError error = { 0 };
  bool ok;

  if (!es_image_alloc (&in, 4, 1, ES_FORMAT_U8, 1, NULL))
    return;
  ((uint8_t *) in.pixels)[1] = 1;
  ((uint8_t *) in.pixels)[2] = 1;
  job.amount = 0.0f;
  ok = es_run (runner->engine, &job, &in, &out, NULL, &error);
  tap_ok (ok && memcmp (out.pixels, "\0\377\377\0", 4) == 0,
          "%s: sharpen at amount 0 of a 1-bit 0 1 1 0 is 0 255 255 0", runner->name);
  es_image_clear (&out);
  es_image_clear (&in);
}

/* Parses the options es_job_format_definition_options gives, as
 * entroscope-cli's definition options do, into d. */
static bool
parse_options (const char *text, EsEntropyDefinition *d)
{
  char copy[256];
  unsigned long value;

  snprintf (copy, sizeof copy, "%s", text);
  for (char *save = NULL, *option = strtok_r (copy, " ", &save); option; option = strtok_r (NULL, " ", &save))
    {
      char *arg = strchr (option, '=');

      if (arg == NULL)
        return false;
      *arg++ = '\0';
      if (strcmp (option, "--rect") == 0      ? !es_definition_parse_rect (arg, d)
          : strcmp (option, "--box") == 0     ? !es_definition_parse_box (arg, d)
          : strcmp (option, "--border") == 0  ? !es_definition_parse_border (arg, d)
          : strcmp (option, "--binning") == 0 ? !es_definition_parse_binning (arg, d)
                                              : false)
        return false;
      if (strcmp (option, "--disk") == 0 || strcmp (option, "--ball") == 0)
        {
          if (!es_definition_parse_uint (arg, 0, 31, &value))
            return false;
          d->shape = option[2] == 'd' ? ES_SHAPE_DISK : ES_SHAPE_BALL;
          d->radius = (int) value;
        }
      else if (strcmp (option, "--units") == 0)
        d->normalized = strcmp (arg, "normalized") == 0;
    }
  return true;
}

/* es_job_format_definition_options gives back what the CLI's options set,
 * for every shape, border and binning a command line can name, and says
 * where a file would be needed. */
static void
check_definition_options (void)
{
  const EsEntropyDefinition shapes[] = {
    { .shape = ES_SHAPE_SQUARE },
    { .shape = ES_SHAPE_RECT, .height = 9, .width = 3 },
    { .shape = ES_SHAPE_DISK, .radius = 4 },
    { .shape = ES_SHAPE_BOX, .planes = 3, .height = 5, .width = 7 },
    { .shape = ES_SHAPE_BALL, .radius = 2 },
  };
  const EsBinning binnings[] = { ES_BINNING_DEPTH, ES_BINNING_RANGE, ES_BINNING_MINMAX, ES_BINNING_EXACT,
                                 ES_BINNING_BYTE };
  int ok = 0, total = 0;
  char text[256];

  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int border = 0; border < ES_N_BORDERS; border++)
      for (size_t b = 0; b < sizeof binnings / sizeof *binnings; b++)
        for (int normalized = 0; normalized < 2; normalized++)
          {
            EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
            EsEntropyDefinition parsed = { 0 };
            EsEntropyDefinition *d = &job.definition;

            *d = shapes[s];
            d->border = (EsBorder) border;
            d->border_value = border == ES_BORDER_CONSTANT ? 17 : 0;
            d->binning = binnings[b];
            if (d->binning == ES_BINNING_RANGE)
              d->range_lo = 10, d->range_hi = 200;
            d->normalized = normalized;
            total++;
            if (es_job_format_definition_options (&job, text, sizeof text) && parse_options (text, &parsed)
                && parsed.shape == d->shape && parsed.height == d->height && parsed.width == d->width
                && parsed.planes == d->planes && parsed.radius == d->radius && parsed.border == d->border
                && parsed.border_value == d->border_value && parsed.binning == d->binning
                && parsed.range_lo == d->range_lo && parsed.range_hi == d->range_hi
                && parsed.normalized == d->normalized)
              ok++;
            else
              tap_diag ("definition options \"%s\" do not give back the definition", text);
          }
  tap_ok (ok == total, "the CLI options of %d definitions give them back (%d did)", total, ok);
  {
    EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
    EsImage mask = { 0 };

    tap_ok (es_job_format_definition_options (&job, text, sizeof text) && text[0] == '\0',
            "the default definition takes no option (\"%s\")", text);
    job.definition.mask = &mask;
    tap_ok (!es_job_format_definition_options (&job, text, sizeof text), "a mask needs its file");
    job.definition.mask = NULL;
    job.definition.shape = ES_SHAPE_FOOTPRINT;
    tap_ok (!es_job_format_definition_options (&job, text, sizeof text), "a footprint needs its file");
    job = (EsJob) ES_JOB_INIT (ES_OP_CLAHE);
    job.clahe.kind = ES_CLAHE_SKIMAGE;
    tap_ok (!es_job_format_definition_options (&job, text, sizeof text), "a CLAHE preset is not an option of bench");
  }
}

int
main (void)
{
  Runner runners[16] = { 0 };
  int n_runners;

  rng = tap_seed ();
  check_helpers ();
  check_view ();
  check_definition_options ();
  n_runners = open_runners (runners, 16);
  if (runners[0].engine == NULL)
    {
      tap_ok (false, "a CPU engine opens");
      return tap_done ();
    }
  for (int r = 0; r < n_runners; r++)
    check_view_in_ops (&runners[r]);
  check_combinations (runners, n_runners);
  check_default_in_bits (runners, n_runners);
  check_large (runners, n_runners);
  es_engine_free (runners[0].engine);
  if (n_runners > 1)
    es_engine_free (runners[1].engine);
  return tap_done ();
}
