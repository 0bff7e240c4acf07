/* SPDX-License-Identifier: MIT */
/* Every entropy definition on the CUDA backend (DESIGN.md §1): random shapes,
 * borders, binnings, units and masks on random images of awkward sizes, run
 * as the engine picks the variant and on "general", one shot and in bands,
 * against the float64 reference. Skips without a CUDA device, unless
 * ES_TEST_REQUIRE_CUDA=1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-definitions.h"
#include "es-engine.h"
#include "es-reference.h"
#include "test-cuda-common.h"
#include "test-cuda-engine.h"

#define CASES 160
#define SMALL_CASES 60
#define SPAN_CASES 120
#define RANK_CASES 96
#define FOOTPRINT_SIDE 31

/* Which random definitions a case draws: any; a window of at most 32
 * cells on crowded 16-bit samples; or one that the general variant slides
 * down column spans (up to 256 bins, up to 961 cells). */
typedef enum { FAMILY_ANY, FAMILY_SMALL, FAMILY_SPANS } Family;

static const Kind kinds[] = {
  { "8-bit", ES_FORMAT_U8, 8, false }, { "16-bit", ES_FORMAT_U16, 16, false }, { "10-bit", ES_FORMAT_U16, 10, false },
  { "4-bit", ES_FORMAT_U8, 4, false }, { "levels", ES_FORMAT_U8, 8, true },
};

/* A random odd × odd footprint of at most max_side a side, never empty. */
static void
random_footprint (EsFootprint *footprint, uint8_t *cells, int max_side)
{
  footprint->height = random_odd (1, max_side);
  footprint->width = random_odd (1, max_side);
  for (int i = 0; i < footprint->width * footprint->height; i++)
    cells[i] = random_int (0, 2) != 0;
  cells[footprint->width * footprint->height / 2] = 1;
  footprint->cells = cells;
}

/* A random definition whose window stays small enough for the reference. */
static void
random_definition (EsJob *job, EsFootprint *footprint, uint8_t *cells, const EsImage *mask, uint32_t top, char *what,
                   size_t size)
{
  static const char *const shapes[] = { "square", "rect", "disk", "footprint" };
  static const char *const borders[] = { "clip", "symmetric", "mirror", "replicate", "constant" };
  static const char *const binnings[] = { "depth", "range", "minmax", "exact", "byte" };
  static const int level_choices[] = { 2, 5, 16, 17, 256, 300, 4096, 65536 };
  EsEntropyDefinition *d = &job->definition;

  *d = (EsEntropyDefinition){ 0 };
  d->shape = (EsShape) random_int (0, ES_N_SHAPES_2D - 1);
  d->border = (EsBorder) random_int (0, ES_N_BORDERS - 1);
  d->binning = (EsBinning) random_int (0, ES_N_BINNINGS - 1);
  job->window = random_odd (3, 41);
  job->levels = level_choices[random_int (0, 7)];
  switch (d->shape)
    {
    case ES_SHAPE_RECT:
      d->height = random_odd (1, 21);
      d->width = random_odd (1, 33);
      break;
    case ES_SHAPE_DISK: d->radius = random_int (0, 12); break;
    case ES_SHAPE_FOOTPRINT:
      random_footprint (footprint, cells, 15);
      d->footprint = footprint;
      break;
    default: break;
    }
  d->border_value = (uint32_t) random_int (0, (int) top - 1);
  if (d->binning == ES_BINNING_RANGE)
    {
      d->range_lo = (uint32_t) random_int (0, (int) top - 1);
      d->range_hi = (uint32_t) random_int ((int) d->range_lo, (int) top - 1);
    }
  d->normalized = random_int (0, 2) == 0;
  d->bits = !d->normalized && random_int (0, 1) == 0;
  d->mask = random_int (0, 2) == 0 ? mask : NULL;
  snprintf (what, size, "%s k=%d %dx%d r=%d, %s, %s %d levels%s%s", shapes[d->shape], job->window, d->height, d->width,
            d->radius, borders[d->border], binnings[d->binning], job->levels,
            d->normalized ? ", normalized"
            : d->bits     ? ", bits"
                          : "",
            d->mask ? ", masked" : "");
}

/* A window of at most 32 cells (the sort kernel's) on 16-bit data with
 * 65536 or nearly as many bins: exact bins mostly, where a bin 0xffff and
 * a void cell share the kernel's key. */
static void
small_window_definition (EsJob *job, EsFootprint *footprint, uint8_t *cells, const EsImage *mask, char *what,
                         size_t size)
{
  static const char *const shapes[] = { "square", "rect", "disk", "footprint" };
  static const int level_choices[] = { 65536, 65535, 65000, 1000 };
  EsEntropyDefinition *d = &job->definition;

  d->shape = (EsShape) random_int (0, ES_N_SHAPES_2D - 1);
  job->window = random_odd (3, 5);
  d->binning = random_int (0, 2) != 0 ? ES_BINNING_EXACT : ES_BINNING_DEPTH;
  job->levels = d->binning == ES_BINNING_EXACT ? 65536 : level_choices[random_int (0, 3)];
  switch (d->shape)
    {
    case ES_SHAPE_RECT:
      d->height = random_odd (1, 7);
      d->width = random_odd (1, 32 / d->height);
      break;
    case ES_SHAPE_DISK: d->radius = random_int (0, 3); break;
    case ES_SHAPE_FOOTPRINT:
      random_footprint (footprint, cells, 5);
      d->footprint = footprint;
      break;
    default: break;
    }
  d->border_value = random_int (0, 1) ? 0xffffu : (uint32_t) random_int (0, 7);
  d->mask = random_int (0, 2) == 0 ? mask : NULL;
  snprintf (what, size, "small %s k=%d %dx%d r=%d, border %d, %s %d levels%s%s", shapes[d->shape], job->window,
            d->height, d->width, d->radius, (int) d->border, d->binning == ES_BINNING_EXACT ? "exact" : "depth",
            job->levels, d->normalized ? ", normalized" : "", d->mask ? ", masked" : "");
}

/* A window of up to 961 cells with up to 256 bins, where the general
 * variant slides shared counts down the window's column spans
 * (entropy-span-counts.cu): disks of radius 1 to 15, rectangles and squares
 * up to 31 a side, footprints up to 31 a side; bins 2 to 256, every
 * binning, border, unit, with and without a mask. The bins follow the
 * image's kind; 16-bit exact bins (65536) are left to the other cases. */
static void
span_counts_definition (EsJob *job, EsFootprint *footprint, uint8_t *cells, const Kind *kind, char *what, size_t size)
{
  static const char *const shapes[] = { "square", "rect", "disk", "footprint" };
  static const int level_choices[] = { 2, 9, 16, 17, 64, 200, 255, 256 };
  EsEntropyDefinition *d = &job->definition;

  d->shape = (EsShape) random_int (0, ES_N_SHAPES_2D - 1);
  if (random_int (0, 2) == 0)
    d->shape = ES_SHAPE_DISK;
  job->window = random_odd (3, 31);
  job->levels = level_choices[random_int (0, 7)];
  if (d->binning == ES_BINNING_EXACT && kind->format == ES_FORMAT_U16)
    d->binning = ES_BINNING_DEPTH;
  switch (d->shape)
    {
    case ES_SHAPE_RECT:
      d->height = random_odd (1, 31);
      d->width = random_odd (1, 31);
      break;
    case ES_SHAPE_DISK: d->radius = random_int (1, 15); break;
    case ES_SHAPE_FOOTPRINT:
      random_footprint (footprint, cells, FOOTPRINT_SIDE);
      d->footprint = footprint;
      break;
    default: break;
    }
  snprintf (what, size, "spans %s k=%d %dx%d r=%d, border %d, binning %d, %d levels%s%s", shapes[d->shape], job->window,
            d->height, d->width, d->radius, (int) d->border, (int) d->binning, job->levels,
            d->normalized ? ", normalized" : "", d->mask ? ", masked" : "");
}

/* A mask of the image's size, about one pixel in five masked out, its
 * rows padded past the width. False without memory. */
static bool
random_mask (EsImage *mask, int width, int height)
{
  *mask = (EsImage){ 0 };
  mask->width = width, mask->height = height, mask->format = ES_FORMAT_U8, mask->depth = 8;
  mask->stride = (size_t) width + 5;
  mask->pixels = malloc (mask->stride * (size_t) height);
  if (mask->pixels == NULL)
    return false;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      ((uint8_t *) es_image_row (mask, y))[x] = (uint8_t) (random_int (0, 4) != 0 ? random_int (1, 255) : 0);
  return true;
}

/* A random definition on a random image of a family; FAMILY_SMALL: a
 * small window on 16-bit samples crowded at 0, 1, 0xfffe and 0xffff (runs,
 * and bins that share the void key); FAMILY_SPANS also on 1001 × 37 and on
 * images narrower or shorter than the window. */
static void
run_case (EsEngine *engine, int index, Family family)
{
  static const int sizes[][2] = { { 1, 1 }, { 2, 3 }, { 17, 5 }, { 33, 17 }, { 70, 41 }, { 131, 67 }, { 257, 19 } };
  static const int span_sizes[][2] = { { 1, 1 },   { 3, 2 },    { 5, 40 },    { 29, 7 },
                                       { 129, 3 }, { 131, 67 }, { 1001, 37 }, { 257, 19 } };
  const bool small = family == FAMILY_SMALL;
  const int *size = family == FAMILY_SPANS ? span_sizes[random_int (0, 7)] : sizes[random_int (0, 6)];
  const Kind *kind = small ? &kinds[1] : &kinds[random_int (0, 4)];
  uint32_t top = kind->levels ? (uint32_t) random_int (2, 256) : 1u << kind->depth;
  EsImage in, mask = { 0 }, out = { 0 };
  EsFootprint footprint = { 0 };
  uint8_t cells[FOOTPRINT_SIDE * FOOTPRINT_SIDE];
  char what[200], detail[160];
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsError error = { 0 };
  double *ref;

  if (!make_image (&in, size[0], size[1], kind, top, 6, 5))
    {
      tap_ok (false, "case %d: no memory", index);
      return;
    }
  random_mask (&mask, size[0], size[1]);
  random_definition (&job, &footprint, cells, &mask, top, what, sizeof what);
  if (family == FAMILY_SPANS)
    span_counts_definition (&job, &footprint, cells, kind, what, sizeof what);
  if (small)
    {
      small_window_definition (&job, &footprint, cells, &mask, what, sizeof what);
      for (int y = 0; y < size[1]; y++)
        for (int x = 0; x < size[0]; x++)
          {
            static const uint16_t crowd[] = { 0, 1, 0xfffe, 0xffff, 0xffff };
            uint16_t *row = es_image_row (&in, y);
            row[x] = random_int (0, 3) != 0 ? crowd[random_int (0, 4)] : (uint16_t) random_int (0, 0xffff);
          }
    }
  if (kind->levels)
    job.levels = (int) top; /* a levels image is binned already: the job must say its levels */
  ref = malloc (sizeof *ref * (size_t) size[0] * (size_t) size[1]);
  if (ref == NULL || mask.pixels == NULL)
    {
      tap_ok (false, "case %d: no memory", index);
      return;
    }
  es_reference_entropy_defined (&in, job.levels, job.window, &job.definition, ref);

  /* Bands of a few rows each: two slots of the window's rows and two more
   * (input, levels and output rows of the padded width). */
  const size_t padded = (size_t) (size[0] + 15) / 16 * 16;
  const size_t row_bytes = padded * (es_format_size (in.format) + 1 + 4);
  char budget[32];
  snprintf (budget, sizeof budget, "%zu", 2 * row_bytes * (size_t) (2 * es_op_info (ES_OP_ENTROPY)->halo (&job) + 3));

  /* As the engine picks (a variant that can), then "general" by name, each
   * once in one shot and once in bands of a few rows. */
  for (int pass = 0; pass < 4; pass++)
    {
      EsTiming timing;
      const EsVariant *expected;

      job.variant = pass % 2 == 0 ? NULL : "general";
      if (pass >= 2)
        setenv ("ES_GPU_MEMORY_BUDGET", budget, 1);
      else
        unsetenv ("ES_GPU_MEMORY_BUDGET");
      expected = es_variant_for_job (&job);
      bool ok = es_run (engine, &job, &in, &out, &timing, &error);
      if (!ok)
        {
          tap_ok (false, "case %d, %dx%d %s%s: %s: %s", index, size[0], size[1], what, pass >= 2 ? " in bands" : "",
                  job.variant ? job.variant : "default", error.message);
          continue;
        }
      ok = timing.backend == ES_BACKEND_CUDA && !timing.fell_back && expected != NULL
           && strcmp (timing.variant, expected->id) == 0;
      if (!ok)
        snprintf (detail, sizeof detail, "ran %s on %s, expected %s", timing.variant ? timing.variant : "(none)",
                  es_backend_name (timing.backend), expected ? expected->id : "(none)");
      else
        ok = reference_error (&out, ref, false, detail, sizeof detail) <= TOLERANCE;
      tap_ok (ok, "case %d, %dx%d %s%s: %s%s%s", index, size[0], size[1], what, pass >= 2 ? " in bands" : "",
              timing.variant, ok ? "" : ": ", ok ? "" : detail);
    }
  unsetenv ("ES_GPU_MEMORY_BUDGET");
  es_image_clear (&out);
  free (ref);
  free (mask.pixels);
  free (in.pixels);
}

/* Each way the span-counts kernel reads its frame, on "general" against the
 * reference: 8-bit cells with masked cells in bin B (B ≤ 255), 16-bit cells
 * (a mask and 256 bins), cells clipped off the image in bin 0 and counted
 * out by position (clip without a mask, 17 and 256 bins), no void cells
 * (mirror, constant); 8-, 10- and 16-bit samples, through a bin table and
 * as they are; a rectangle (every four spans side by side, read as such
 * with 17 and 64 bins, where the loads do not go ahead), a disk (a few
 * fours) and a ring, on an image whose width is not a whole word. */
static void
test_span_frames (EsEngine *engine)
{
  static const struct {
    EsBorder border;
    bool masked;
    int levels;
    EsBinning binning;
    int kind; /* in kinds[] */
  } frames[] = {
    { ES_BORDER_CLIP, true, 200, ES_BINNING_DEPTH, 0 },     { ES_BORDER_SYMMETRIC, true, 255, ES_BINNING_MINMAX, 1 },
    { ES_BORDER_CLIP, true, 256, ES_BINNING_DEPTH, 1 },     { ES_BORDER_REPLICATE, true, 256, ES_BINNING_EXACT, 0 },
    { ES_BORDER_CLIP, false, 256, ES_BINNING_EXACT, 0 },    { ES_BORDER_CLIP, false, 256, ES_BINNING_DEPTH, 1 },
    { ES_BORDER_CLIP, false, 17, ES_BINNING_RANGE, 2 },     { ES_BORDER_MIRROR, false, 256, ES_BINNING_DEPTH, 0 },
    { ES_BORDER_CONSTANT, false, 64, ES_BINNING_DEPTH, 1 },
  };
  static const EsShape shapes[] = { ES_SHAPE_RECT, ES_SHAPE_DISK, ES_SHAPE_FOOTPRINT };
  uint8_t ring_cells[FOOTPRINT_SIDE * FOOTPRINT_SIDE];
  const EsFootprint ring = { 21, 21, ring_cells, 0 };
  const int width = 133, height = 41;

  for (int y = 0; y < ring.height; y++)
    for (int x = 0; x < ring.width; x++)
      ring_cells[y * ring.width + x] = (x - 10) * (x - 10) + (y - 10) * (y - 10) <= 100
                                       && (x - 10) * (x - 10) + (y - 10) * (y - 10) > 16;
  for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++)
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
      {
        const Kind *kind = &kinds[frames[f].kind];
        EsImage in, mask = { 0 }, out = { 0 };
        EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
        EsError error = { 0 };
        EsTiming timing;
        char detail[160] = "";
        double *ref = malloc (sizeof *ref * (size_t) width * height);

        mask.width = width, mask.height = height, mask.format = ES_FORMAT_U8, mask.depth = 8;
        mask.stride = (size_t) width;
        mask.pixels = malloc (mask.stride * (size_t) height);
        if (ref == NULL || mask.pixels == NULL || !make_image (&in, width, height, kind, 1u << kind->depth, 6, 5))
          {
            tap_ok (false, "span frames: no memory");
            return;
          }
        for (size_t i = 0; i < mask.stride * (size_t) height; i++)
          ((uint8_t *) mask.pixels)[i] = (uint8_t) (random_int (0, 5) != 0);
        job.variant = "general";
        job.levels = frames[f].levels;
        job.definition.shape = shapes[k];
        job.definition.height = 7, job.definition.width = 31;
        job.definition.radius = 12;
        job.definition.footprint = shapes[k] == ES_SHAPE_FOOTPRINT ? &ring : NULL;
        job.definition.border = frames[f].border;
        job.definition.border_value = 3;
        job.definition.binning = frames[f].binning;
        job.definition.range_lo = 100, job.definition.range_hi = 900;
        job.definition.mask = frames[f].masked ? &mask : NULL;
        es_reference_entropy_defined (&in, job.levels, job.window, &job.definition, ref);
        bool ok = es_run (engine, &job, &in, &out, &timing, &error) && !timing.fell_back;
        if (ok)
          ok = reference_error (&out, ref, true, detail, sizeof detail) <= TOLERANCE;
        else
          snprintf (detail, sizeof detail, "%.150s", error.message);
        tap_ok (ok, "span frames: %s, border %d%s, %d levels, binning %d, shape %d%s%s", kind->name,
                (int) frames[f].border, frames[f].masked ? ", masked" : "", frames[f].levels, (int) frames[f].binning,
                (int) shapes[k], ok ? "" : ": ", ok ? "" : detail);
        es_image_clear (&out);
        free (ref);
        free (mask.pixels);
        free (in.pixels);
      }
}

/* The rank kernel (entropy-ranks.cu): full 3×3 squares (as a
 * square, a rectangle or a footprint of ones) of 8-bit samples that are
 * their own bins (exact bins of 8- and 4-bit samples, levels images), on
 * images from 1×1 to wider and taller than a few of its strips, narrower
 * or shorter than the window, with widths on and off a whole word; values
 * crowded on a few samples (long runs of equal cells) or spread over all;
 * every border and unit. A mask sends the job to the other kernels, and
 * so do 5×5 squares (the span-counts kernel is faster there), which must
 * agree too. Against the reference, and each unmasked 3×3 case must have
 * launched the rank kernel. */
static void
test_rank_squares (EsEngine *engine)
{
  static const int sizes[][2] = { { 1, 1 },   { 1, 9 },    { 9, 1 },     { 2, 3 },   { 3, 3 },   { 4, 4 },
                                  { 5, 5 },   { 7, 6 },    { 8, 33 },    { 37, 5 },  { 12, 70 }, { 131, 67 },
                                  { 64, 64 }, { 257, 19 }, { 1001, 37 }, { 13, 129 } };
  static const int kind_choices[] = { 0, 3, 4 }; /* 8-bit, 4-bit, levels */
  static const char *const units[] = { "nats", "bits", "normalized" };

  for (int i = 0; i < RANK_CASES; i++)
    {
      const int *size = sizes[i % (int) (sizeof sizes / sizeof sizes[0])];
      const Kind *kind = &kinds[kind_choices[random_int (0, 2)]];
      const int side = random_int (0, 1) ? 5 : 3, unit = random_int (0, 2);
      const bool masked = random_int (0, 3) == 0;
      /* Crowded on 2 to 9 values, or spread over every sample. */
      const uint32_t top = kind->levels        ? (uint32_t) (random_int (0, 1) ? random_int (2, 9) : 256)
                           : random_int (0, 1) ? (uint32_t) random_int (2, 9)
                                               : 1u << kind->depth;
      uint8_t ones[25];
      const EsFootprint square = { side, side, ones, 0 };
      EsImage in, mask = { 0 }, out = { 0 };
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      EsError error = { 0 };
      EsTiming timing;
      char detail[160] = "";
      bool ok;

      memset (ones, 1, sizeof ones);
      if (!make_image (&in, size[0], size[1], kind, top, 6, 5) || !random_mask (&mask, size[0], size[1]))
        {
          tap_ok (false, "rank squares: no memory");
          return;
        }
      job.window = side;
      job.levels = kind->levels ? (int) top : 256;
      job.definition.shape = (EsShape) random_int (0, 2) == 0 ? ES_SHAPE_SQUARE
                             : random_int (0, 1) == 0         ? ES_SHAPE_RECT
                                                              : ES_SHAPE_FOOTPRINT;
      job.definition.height = job.definition.width = side;
      job.definition.footprint = job.definition.shape == ES_SHAPE_FOOTPRINT ? &square : NULL;
      job.definition.border = (EsBorder) random_int (0, ES_N_BORDERS - 1);
      job.definition.border_value = (uint32_t) random_int (0, (int) top - 1);
      job.definition.binning = ES_BINNING_EXACT;
      job.definition.normalized = unit == 2;
      job.definition.bits = unit == 1;
      job.definition.mask = masked ? &mask : NULL;
      double *ref = malloc (sizeof *ref * (size_t) size[0] * (size_t) size[1]);
      if (ref == NULL)
        {
          tap_ok (false, "rank squares: no memory");
          return;
        }
      es_reference_entropy_defined (&in, job.levels, job.window, &job.definition, ref);
      ok = es_run (engine, &job, &in, &out, &timing, &error) && timing.backend == ES_BACKEND_CUDA && !timing.fell_back;
      if (!ok)
        snprintf (detail, sizeof detail, "%.150s", error.message[0] ? error.message : "did not run on CUDA");
      if (ok && !masked && side == 3)
        {
          ok = false;
          for (int k = 0; k < timing.metrics.n_kernels; k++)
            ok |= strcmp (timing.metrics.kernels[k].name, "rank entropy kernel") == 0;
          if (!ok)
            snprintf (detail, sizeof detail, "the rank kernel did not run");
        }
      if (ok)
        ok = reference_error (&out, ref, true, detail, sizeof detail) <= TOLERANCE;
      tap_ok (ok, "rank squares %d: %s %dx%d, %dx%d %s, border %d, %u values, %s%s%s%s", i, kind->name, size[0],
              size[1], side, side, es_shape_name (job.definition.shape), (int) job.definition.border, top, units[unit],
              masked ? ", masked" : "", ok ? "" : ": ", ok ? "" : detail);
      es_image_clear (&out);
      free (ref);
      free (mask.pixels);
      free (in.pixels);
    }
}

/* Windows whose occupied bins are all counted alike (k bins, c cells
 * each) have H = ln k exactly, and every general kernel must store that
 * value's float32 as es_entropy_store rounds it, as the CPU does: a 2^19
 * fixed-point sum gave 6.0000005 bits for 64 values counted twice
 * (scikit-image's test_entropy asserts 6). Images tile tw × th distinct
 * values; footprints are s × s ones in the top-left of an odd square, as
 * the drop-in centres an even footprint; clip borders, so the windows cut
 * by the image's sides count alike too where a whole number of tiles
 * remains. Each case names the kernel it must launch. */
#define TILE_VALUE(c, x, y) ((x) % (c).tile_w + (c).tile_w * ((y) % (c).tile_h))

static void
test_equal_counts (EsEngine *engine)
{
  static const struct {
    const char *kernel;
    int ones, tile_w, tile_h;
    bool u16; /* 16-bit samples, 65536 bins: windows of up to 32 cells sort */
    bool bits;
  } cases[] = {
    { "span-counts entropy kernel", 16, 8, 8, false, true }, /* scikit-image's 6 bits */
    { "span-counts entropy kernel", 16, 16, 16, false, true }, { "span-counts entropy kernel", 12, 4, 2, false, false },
    { "small-window entropy kernel", 4, 2, 2, true, true },    { "small-window entropy kernel", 4, 4, 1, true, false },
    { "rank entropy kernel", 3, 3, 1, false, true },           { "rank entropy kernel", 3, 3, 3, false, false },
    { "general entropy kernel", 32, 16, 16, false, true },
  };
  const int width = 70, height = 53;

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      const int ones = cases[i].ones, side = ones | 1, centre = side / 2;
      uint8_t cells[33 * 33];
      const EsFootprint footprint = { side, side, cells, 0 };
      EsImage in = { 0 }, out = { 0 };
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      EsError error = { 0 };
      EsTiming timing;
      bool launched = false;
      int checked = 0, wrong = 0;
      char detail[160] = "";

      for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
          cells[y * side + x] = y < ones && x < ones;
      in.width = width, in.height = height;
      in.format = cases[i].u16 ? ES_FORMAT_U16 : ES_FORMAT_U8, in.depth = cases[i].u16 ? 16 : 8;
      in.stride = (size_t) width * es_format_size (in.format);
      in.pixels = malloc (in.stride * (size_t) height);
      if (in.pixels == NULL)
        {
          tap_ok (false, "equal counts: no memory");
          return;
        }
      for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
          if (cases[i].u16)
            ((uint16_t *) es_image_row (&in, y))[x] = (uint16_t) TILE_VALUE (cases[i], x, y);
          else
            ((uint8_t *) es_image_row (&in, y))[x] = (uint8_t) TILE_VALUE (cases[i], x, y);
      job.variant = "general";
      job.levels = 256;
      job.window = side;
      job.definition.shape = ES_SHAPE_FOOTPRINT;
      job.definition.footprint = &footprint;
      job.definition.height = job.definition.width = side;
      job.definition.border = ES_BORDER_CLIP;
      job.definition.binning = ES_BINNING_EXACT;
      job.definition.bits = cases[i].bits;
      if (!es_run (engine, &job, &in, &out, &timing, &error) || timing.backend != ES_BACKEND_CUDA || timing.fell_back)
        snprintf (detail, sizeof detail, "%.150s", error.message[0] ? error.message : "did not run on CUDA");
      else
        for (int k = 0; k < timing.metrics.n_kernels; k++)
          launched |= strcmp (timing.metrics.kernels[k].name, cases[i].kernel) == 0;
      for (int y = 0; launched && y < height; y++)
        for (int x = 0; x < width; x++)
          {
            int count[256] = { 0 }, each;
            for (int dy = 0; dy < ones; dy++)
              for (int dx = 0; dx < ones; dx++)
                {
                  const int yy = y + dy - centre, xx = x + dx - centre;
                  if (yy >= 0 && yy < height && xx >= 0 && xx < width)
                    count[TILE_VALUE (cases[i], xx, yy)]++;
                }
            const int bins = es_reference_alike_bins (count, 256, &each);
            if (bins == 0)
              continue;
            const float want = es_entropy_store (log ((double) bins), cases[i].bits ? ES_BITS_PER_NAT : 1.0);
            const float got = ((const float *) es_image_row (&out, y))[x];
            checked++;
            if (got != want && wrong++ == 0)
              snprintf (detail, sizeof detail, "(%d, %d): %d bins of %d cells: %.9g, not %.9g", x, y, bins, each,
                        (double) got, (double) want);
          }
      if (launched && checked == 0)
        snprintf (detail, sizeof detail, "no window counted its bins alike");
      else if (!launched && detail[0] == '\0')
        snprintf (detail, sizeof detail, "the %s did not run", cases[i].kernel);
      tap_ok (launched && checked > 0 && wrong == 0,
              "equal counts: %s, %d×%d ones over %d×%d tiles, %s: %d windows%s%s", cases[i].kernel, ones, ones,
              cases[i].tile_w, cases[i].tile_h, cases[i].bits ? "bits" : "nats", checked, detail[0] ? ": " : "",
              detail);
      es_image_clear (&out);
      free (in.pixels);
    }
}

/* Variants that cannot run a definition say why, and the engine names one
 * that can; the default definition keeps the default variant. */
static void
test_variant_choice (void)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  const EsVariant *fast = es_variant_find (ES_OP_ENTROPY, "fast");

  tap_ok (es_variant_for_job (&job) == es_variant_find (ES_OP_ENTROPY, NULL),
          "the default definition runs the default variant");
  tap_ok (fast != NULL && es_variant_unsupported (fast, &job) == NULL, "fast runs the default definition");
  job.definition.shape = ES_SHAPE_DISK;
  job.definition.radius = 4;
  job.variant = "fast";
  tap_ok (fast != NULL && es_variant_unsupported (fast, &job) != NULL, "fast says why it cannot run a disk: %s",
          fast ? es_variant_unsupported (fast, &job) : "(none)");
  tap_ok (es_variant_for_job (&job) != NULL && strcmp (es_variant_for_job (&job)->id, "general") == 0,
          "a disk asked of fast runs on general");
  tap_ok (fast != NULL && es_variant_slow_path (fast, &job) == NULL, "a job fast cannot run has no slow path");
}

/* The fast kernels are near the copy floor only at k ≤ 9 and L ≤ 16
 * (PERFORMANCE.md): beyond, they say so; the other variants have no note. */
static void
test_variant_slow_path (void)
{
  static const struct {
    int window, levels;
    bool slow;
  } cases[] = {
    { 5, 16, false }, { 3, 2, false },  { 7, 16, false }, { 9, 16, false }, { 9, 2, false },
    { 11, 2, true },  { 31, 16, true }, { 5, 17, true },  { 3, 256, true },
  };
  const EsVariant *fast = es_variant_find (ES_OP_ENTROPY, "fast");
  const EsVariant *general = es_variant_find (ES_OP_ENTROPY, "general");
  const EsVariant *naive = es_variant_find (ES_OP_ENTROPY, "naive");

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

      job.window = cases[i].window;
      job.levels = cases[i].levels;
      tap_ok (fast != NULL && (es_variant_slow_path (fast, &job) != NULL) == cases[i].slow, "fast at k=%d, L=%d: %s",
              job.window, job.levels,
              fast && es_variant_slow_path (fast, &job) ? es_variant_slow_path (fast, &job) : "no slow path");
      tap_ok (general != NULL && naive != NULL && es_variant_slow_path (general, &job) == NULL
                && es_variant_slow_path (naive, &job) == NULL,
              "general and naive have no slow-path note at k=%d, L=%d", job.window, job.levels);
    }
}

int
main (void)
{
  EsEngine *engine;

  rng = tap_seed ();
  if (es_engine_cuda_compiled ())
    {
      test_variant_choice ();
      test_variant_slow_path ();
    }
  engine = test_cuda_engine ("every entropy definition on CUDA");
  if (engine == NULL)
    {
      return tap_done ();
    }
  tap_diag ("CUDA: %s", es_engine_describe (engine));
  test_span_frames (engine);
  test_rank_squares (engine);
  test_equal_counts (engine);
  for (int i = 0; i < CASES; i++)
    run_case (engine, i, FAMILY_ANY);
  for (int i = 0; i < SMALL_CASES; i++)
    run_case (engine, CASES + i, FAMILY_SMALL);
  for (int i = 0; i < SPAN_CASES; i++)
    run_case (engine, CASES + SMALL_CASES + i, FAMILY_SPANS);
  es_engine_free (engine);
  return tap_done ();
}
