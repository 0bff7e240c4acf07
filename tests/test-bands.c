/* SPDX-License-Identifier: MIT */
/* Bands under a device-memory budget and over several GPUs: every operation and variant gives the one-shot result;
 * the tile passes of an operation whose halo is a tile (CLAHE) give the whole run's bits, on the CPU and on CUDA. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "es-definitions.h"
#include "es-engine.h"
#include "cuda/es-cuda.h"
#include "tap.h"
#include "test-cuda-engine.h"
#include "test-image-common.h"

static unsigned long long rng;

static int
random_in (int lo, int hi)
{
  return lo + (int) (tap_random (&rng) % (unsigned long long) (hi - lo + 1));
}

/* An image with a stride longer than its rows (as a view into a larger
 * buffer would have), random samples below 2^depth, or levels below `levels`. */
static bool
make_image (EsImage *image, int width, int height, EsFormat format, int depth, int levels)
{
  size_t sample = es_format_size (format);
  size_t stride = (size_t) width * sample + sample * (size_t) random_in (0, 9);
  uint8_t *pixels = malloc (stride * (size_t) height);

  if (pixels == NULL)
    return false;
  memset (pixels, 0xa5, stride * (size_t) height);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        uint32_t v = levels ? (uint32_t) (tap_random (&rng) % (unsigned) levels)
                            : (uint32_t) (tap_random (&rng) >> 20) & ((1u << depth) - 1u);
        if (format == ES_FORMAT_U8)
          pixels[(size_t) y * stride + x] = (uint8_t) v;
        else
          ((uint16_t *) (pixels + (size_t) y * stride))[x] = (uint16_t) v;
      }
  *image = (EsImage){ .width = width,
                      .height = height,
                      .stride = stride,
                      .format = format,
                      .depth = depth,
                      .levels = levels,
                      .pixels = pixels,
                      .release = free };
  return true;
}

/* The largest difference of two F32 images. */
static double
max_difference (const EsImage *a, const EsImage *b)
{
  double worst = 0;

  for (int y = 0; y < a->height; y++)
    {
      const float *p = (const float *) ((const uint8_t *) a->pixels + (size_t) y * a->stride);
      const float *q = (const float *) ((const uint8_t *) b->pixels + (size_t) y * b->stride);
      for (int x = 0; x < a->width; x++)
        if (fabs ((double) p[x] - q[x]) > worst)
          worst = fabs ((double) p[x] - q[x]);
    }
  return worst;
}

static void
set_budget (size_t bytes)
{
  char text[32];

  if (bytes == 0)
    {
      unsetenv ("ES_GPU_MEMORY_BUDGET");
      return;
    }
  snprintf (text, sizeof text, "%zu", bytes);
  setenv ("ES_GPU_MEMORY_BUDGET", text, 1);
}

/* Device bytes per image row of one run, as the CUDA backend pads rows. */
static size_t
device_row_bytes (const EsJob *job, const EsImage *in)
{
  size_t padded = ((size_t) in->width + 15) / 16 * 16;

  const EsCudaOp *cuda_op = es_op_info (job->op)->cuda;

  return padded * es_format_size (in->format) + (cuda_op != NULL && cuda_op->uses_levels ? padded : 0)
         + padded * es_format_size (es_job_output_format (job, in->format));
}

/* Device bytes that a job's tile passes hold besides the bands (the tiles'
 * counts and maps, EsCudaOp.tile_sizes), or 0. */
static size_t
tile_state_bytes (const EsJob *job, const EsImage *in)
{
  const EsCudaOp *cuda_op = es_op_info (job->op)->cuda;
  size_t counts, map_bytes;

  if (es_job_tile_passes (job) == NULL || cuda_op == NULL || cuda_op->tile_sizes == NULL)
    return 0;
  cuda_op->tile_sizes (job, in->width, in->height, in->format, &counts, &map_bytes);
  return counts * sizeof (uint32_t) + map_bytes;
}

/* One job three ways: one shot on CUDA, in bands under `budget` on CUDA, on
 * the CPU. The bands must give the one-shot bits; u8 and u16 results the
 * CPU's bits, entropy within 1e-5 nats of the CPU. */
static void
check_job (EsEngine *cuda, EsEngine *cpu, const EsJob *job, const EsImage *in, size_t budget, const char *what)
{
  EsImage one_shot = { 0 }, banded = { 0 }, reference = { 0 };
  EsTiming timing;
  EsError error = { 0 };
  bool ok;

  set_budget (0);
  ok = es_run (cuda, job, in, &one_shot, &timing, &error) && !timing.fell_back;
  if (!tap_ok (ok, "%s: one shot on CUDA%s%s", what, error.message[0] ? ": " : "", error.message))
    goto out;
  set_budget (budget);
  ok = es_run (cuda, job, in, &banded, &timing, &error);
  set_budget (0);
  ok = ok && !timing.fell_back && timing.backend == ES_BACKEND_CUDA;
  if (!tap_ok (ok, "%s: in bands under %zu bytes%s%s", what, budget, error.message[0] ? ": " : "", error.message))
    goto out;
  /* In bands the transfers overlap the kernels and are not timed apart. */
  tap_ok (timing.upload_ms == 0 && timing.download_ms == 0 && timing.kernel_ms > 0,
          "%s: the run went in bands (upload %.3f, kernels %.3f, download %.3f ms)", what, timing.upload_ms,
          timing.kernel_ms, timing.download_ms);
  tap_ok (images_equal (&one_shot, &banded), "%s: bands give the one-shot bits", what);
  if (!tap_ok (es_run (cpu, job, in, &reference, NULL, &error), "%s: CPU reference%s%s", what,
               error.message[0] ? ": " : "", error.message))
    goto out;
  if (es_job_output_format (job, in->format) == ES_FORMAT_F32)
    {
      double worst = max_difference (&banded, &reference);
      tap_ok (worst <= 1e-5, "%s: bands within 1e-5 nats of the CPU (worst %.3g)", what, worst);
    }
  else
    tap_ok (images_equal (&banded, &reference), "%s: bands give the CPU's bits", what);
out:
  es_image_clear (&one_shot);
  es_image_clear (&banded);
  es_image_clear (&reference);
}

/* Cuts height rows into bands of random heights: starts[0..n] (starts[n] ==
 * height), in a random order of the n bands (order[]). */
static int
random_bands (int height, int *starts, int *order)
{
  int n = 0;

  for (int y = 0; y < height; n++)
    {
      starts[n] = y;
      y += random_in (1, random_in (0, 3) == 0 ? height : 1 + height / 5);
    }
  starts[n] = height;
  for (int i = 0; i < n; i++)
    order[i] = i;
  for (int i = n - 1; i > 0; i--)
    {
      int j = random_in (0, i), t = order[i];
      order[i] = order[j], order[j] = t;
    }
  return n;
}

/* One job in bands through its operation's tile passes (EsTilePasses): the
 * statistics of bands of random heights added in a random order, into two
 * states whose counts are then summed (as dask's chunks are), then other
 * bands blended in a random order, must give the whole run's bits. */
static void
check_tile_passes (EsEngine *cpu, const EsJob *job, const EsImage *in, const char *what)
{
  const EsTilePasses *passes = es_job_tile_passes (job);
  EsImage whole = { 0 }, banded = { 0 };
  EsError error = { 0 };
  EsTileState *state = NULL, *other = NULL;
  int *starts = malloc ((size_t) (in->height + 1) * sizeof *starts);
  int *order = malloc ((size_t) in->height * sizeof *order);
  int n;
  bool ok;

  if (!tap_ok (passes != NULL && starts != NULL && order != NULL, "%s: the row's tile passes take the job", what))
    goto out;
  ok = es_run (cpu, job, in, &whole, NULL, &error)
       && es_image_alloc (&banded, in->width, in->height, whole.format, whole.depth, &error)
       && (state = passes->begin (job, in->width, in->height, in->format, &error)) != NULL
       && (other = passes->begin (job, in->width, in->height, in->format, &error)) != NULL;
  n = random_bands (in->height, starts, order);
  for (int i = 0; ok && i < n; i++)
    {
      EsImage rows = es_image_rows (in, starts[order[i]], starts[order[i] + 1] - starts[order[i]]);
      ok = passes->add_rows (i % 2 ? other : state, &rows, starts[order[i]], NULL, &error);
    }
  if (ok)
    {
      size_t count, other_count;
      int *sum = passes->counts (state, &count);
      const int *part = passes->counts (other, &other_count);

      ok = tap_ok (count == other_count && count > 0, "%s: two states of one job hold as many counts", what);
      for (size_t i = 0; ok && i < count; i++)
        sum[i] += part[i];
    }
  ok = ok && passes->finish (state, NULL, &error);
  n = random_bands (in->height, starts, order);
  for (int i = 0; ok && i < n; i++)
    {
      int y0 = starts[order[i]], count = starts[order[i] + 1] - y0;
      EsImage rows = es_image_rows (in, y0, count), out = es_image_rows (&banded, y0, count);
      ok = passes->apply_rows (state, &rows, y0, &out, NULL, &error);
    }
  if (tap_ok (ok, "%s: runs whole and in bands%s%s", what, error.message[0] ? ": " : "", error.message))
    tap_ok (images_equal (&whole, &banded), "%s: %d bands give the whole run's bits", what, n);
out:
  if (state)
    passes->free (state);
  if (other)
    passes->free (other);
  free (starts);
  free (order);
  es_image_clear (&whole);
  es_image_clear (&banded);
}

/* Every operation with tile passes, on the CPU: awkward sizes (1×N, N×1,
 * sizes the grid does not divide, grids larger than the image), every
 * depth, random parameters from the table's ranges; and the jobs the
 * passes do not take (CLAHE's presets) run whole. */
static void
test_tile_passes (EsEngine *cpu)
{
  static const int depths[] = { 8, 12, 16 };

  for (int op = 0; op < ES_N_OPS; op++)
    {
      const EsTilePasses *passes = es_op_info ((EsOp) op)->tile_passes;

      if (passes == NULL)
        continue;
      for (int round = 0; round < 24; round++)
        {
          int depth = depths[round % 3];
          int width = round == 0 ? 1 : round == 1 ? random_in (1, 300) : random_in (1, 260);
          int height = round == 1 ? 1 : random_in (1, 260);
          EsJob job = ES_JOB_INIT ((EsOp) op);
          EsImage in;
          char what[160];

          for (int id = 0; id < ES_N_PARAMS; id++)
            if (es_op_uses ((EsOp) op, (EsParamId) id))
              {
                const EsParam *param = es_param ((EsParamId) id);
                /* Small grids and clip limits mostly, now and then the largest. */
                double top = random_in (0, 5) == 0 ? es_op_param_max ((EsOp) op, (EsParamId) id) : param->min + 12;
                double value = param->min + (top - param->min) * (double) random_in (0, 1000) / 1000.0;
                es_job_set_param (&job, (EsParamId) id, param->digits ? value : floor (value));
              }
          if (!es_job_validate (&job, NULL)
              || !make_image (&in, width, height, depth == 8 ? ES_FORMAT_U8 : ES_FORMAT_U16, depth, 0))
            {
              tap_ok (false, "%s: a valid job and its image", es_op_name ((EsOp) op));
              continue;
            }
          snprintf (what, sizeof what, "%s %d×%d %d-bit, clip %g, %d×%d tiles", es_op_name ((EsOp) op), width, height,
                    depth, job.clip, job.tile_columns, job.tile_rows);
          check_tile_passes (cpu, &job, &in, what);
          es_image_clear (&in);
        }
    }
  {
    EsJob preset = ES_JOB_INIT (ES_OP_CLAHE);

    es_preset_apply (es_preset_find (ES_OP_CLAHE, "skimage"), &preset, false);
    tap_ok (es_job_tile_passes (&preset) == NULL && es_job_whole_image (&preset),
            "CLAHE's skimage preset (a range over the whole image) runs whole");
  }
}

/* Random awkward sizes, formats and parameters, every variant of every
 * operation, each under a budget that holds only a few bands. */
static void
test_random_jobs (EsEngine *cuda, EsEngine *cpu)
{
  for (int op = 0; op < ES_N_OPS; op++)
    {
      size_t n_variants;
      const EsVariant *variants = es_variants ((EsOp) op, &n_variants);

      for (size_t v = 0; v <= n_variants; v++)
        {
          EsJob job = ES_JOB_INIT ((EsOp) op);
          EsImage in = { 0 };
          char what[200];

          job.variant = v < n_variants ? variants[v].id : NULL;
          job.window = 2 * random_in (1, es_op_uses ((EsOp) op, ES_PARAM_WINDOW) && random_in (0, 1) ? 15 : 3) + 1;
          /* Quantize writes 8-bit levels; entropy's variants take up to 256. */
          job.levels = random_in (0, 2) ? 16 : random_in (ES_LEVELS_MIN, ES_FAST_LEVELS_MAX);
          job.amount = (float) random_in (0, 400) / 100.0f;
          /* The naive kernel loops over the window once per level. */
          if (job.variant != NULL && strcmp (job.variant, "naive") == 0)
            {
              job.window = 2 * random_in (1, 3) + 1;
              job.levels = 16;
            }

          /* At least one row, so that equalize's bands are cut too. */
          const int halo = es_op_info (job.op)->halo (&job) > 0 ? es_op_info (job.op)->halo (&job) : 1;
          const int width = random_in (1, 700);
          const int height = random_in (4 * halo + 6, 500);
          const bool wide = random_in (0, 1);
          const EsFormat format = wide ? ES_FORMAT_U16 : ES_FORMAT_U8;
          const int depth = wide ? random_in (9, 16) : random_in (1, 8);
          const bool levels_image = es_op_uses (job.op, ES_PARAM_LEVELS) && random_in (0, 3) == 0;

          if (!make_image (&in, width, height, levels_image ? ES_FORMAT_U8 : format, levels_image ? 8 : depth,
                           levels_image ? job.levels : 0))
            {
              tap_ok (false, "test image %d×%d allocated", width, height);
              return;
            }
          /* Two slots of band rows plus halos, far below the whole image,
           * besides the tiles' counts and maps of a halo of tiles. */
          const int band = random_in (1, (height - 4 * halo - 2) / 2);
          const size_t budget = tile_state_bytes (&job, &in)
                                + 2 * (size_t) (band + 2 * halo) * device_row_bytes (&job, &in);
          snprintf (what, sizeof what, "%s/%s %d×%d %s%s depth %d, window %d, levels %d, amount %.2f, %d-row bands",
                    es_op_name (job.op), job.variant ? job.variant : "default", width, height,
                    es_format_name (in.format), levels_image ? " levels" : "", in.depth, job.window, job.levels,
                    job.amount, band);
          check_job (cuda, cpu, &job, &in, budget, what);
          es_image_clear (&in);
        }
    }
}

/* A larger image under a few MB, the default variants: many bands; with
 * several devices, spread over all of them. */
static void
test_few_megabytes (EsEngine *cuda, EsEngine *cpu)
{
  const int width = random_in (2500, 3100), height = random_in (1900, 2300);

  for (int op = 0; op < ES_N_OPS; op++)
    {
      EsJob job = ES_JOB_INIT ((EsOp) op);
      EsImage in = { 0 };
      char what[160];

      if (!make_image (&in, width, height, ES_FORMAT_U16, 12, 0))
        {
          tap_ok (false, "test image %d×%d allocated", width, height);
          return;
        }
      snprintf (what, sizeof what, "%s %d×%d u16 under 4 MB", es_op_name (job.op), width, height);
      check_job (cuda, cpu, &job, &in, ((size_t) 4 << 20) + tile_state_bytes (&job, &in), what);
      es_image_clear (&in);
    }
}

/* Every operation with tile passes in bands on CUDA (CLAHE): random sizes
 * (one column, sizes no grid divides, grids of more tiles than rows, one
 * large enough to spread over several GPUs),
 * grids from 1×1 to 64×64, clip limits from none to the largest, 8 and 16
 * bits, every variant, under budgets that leave room, beside the tiles'
 * counts and maps, for bands of one tile row or of one image row. The
 * bands give the one-shot and the CPU's bits (check_job). */
static void
test_tile_bands (EsEngine *cuda, EsEngine *cpu)
{
  for (int op = 0; op < ES_N_OPS; op++)
    {
      size_t n_variants;
      const EsVariant *variants = es_variants ((EsOp) op, &n_variants);

      if (es_op_info ((EsOp) op)->tile_passes == NULL)
        continue;
      for (int round = 0; round < 11; round++)
        for (size_t v = 0; v < n_variants; v++)
          {
            const bool wide = round % 2 == 1;
            /* A 16-bit grid of 64 × 64 tiles holds a GiB of counts: one round. */
            const int most_tiles = wide && round != 9 ? 16 : 64;
            EsJob job = ES_JOB_INIT ((EsOp) op);
            EsClaheGeometry geometry;
            EsImage in = { 0 };
            char what[200];

            job.variant = variants[v].id;
            job.tile_columns = random_in (0, 2) == 0 ? most_tiles : random_in (1, most_tiles);
            job.tile_rows = random_in (0, 2) == 0 ? most_tiles : random_in (1, most_tiles);
            job.clip = random_in (0, 3) == 0   ? 0
                       : random_in (0, 4) == 0 ? random_in (1, 65536)
                                               : random_in (1, 80) / 8.0;
            /* The last round past ES_CUDA_SPREAD_MIN_PIXELS: with several
             * GPUs the one-shot run spreads, each device's band kept on it
             * between the passes. */
            const bool large = round == 10;
            const int width = round == 0 ? 1 : large ? random_in (2100, 2600) : random_in (1, 900);
            const int height = large ? random_in (2000, 2400) : random_in (3, 600);
            if (!make_image (&in, width, height, wide ? ES_FORMAT_U16 : ES_FORMAT_U8, wide ? random_in (9, 16) : 8, 0))
              {
                tap_ok (false, "test image %d×%d allocated", width, height);
                return;
              }
            /* Bands of one tile row where the image has room for three of
             * them, else of one row. */
            es_clahe_geometry (&job, width, height, &geometry);
            const int band = round % 3 != 2 && 3 * geometry.tile_height < height ? geometry.tile_height : 1;
            const size_t budget = tile_state_bytes (&job, &in) + 2 * (size_t) band * device_row_bytes (&job, &in);
            snprintf (what, sizeof what, "%s/%s %d×%d %d-bit, clip %g, %d×%d tiles, %d-row bands", es_op_name (job.op),
                      job.variant, width, height, in.depth, job.clip, job.tile_columns, job.tile_rows, band);
            check_job (cuda, cpu, &job, &in, budget, what);
            es_image_clear (&in);
          }
    }
}

/* A budget too small for a single band: CUDA cannot run the job, the CPU
 * finishes it, and the user hears why. */
static void
test_budget_too_small (EsEngine *cuda)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsImage in = { 0 }, out = { 0 };
  EsTiming timing;
  EsError error = { 0 };
  const char *notice;

  if (!make_image (&in, 300, 200, ES_FORMAT_U8, 8, 0))
    return;
  set_budget (1000);
  bool ok = es_run (cuda, &job, &in, &out, &timing, &error);
  set_budget (0);
  notice = es_engine_take_notice (cuda);
  tap_ok (ok && timing.fell_back && notice != NULL && strstr (notice, "band") != NULL,
          "a 1000-byte budget holds no band: the CPU finishes the job (%s)", notice ? notice : error.message);
  tap_ok (es_engine_backend (cuda) == ES_BACKEND_CUDA, "CUDA stays in use after a budget too small");
  es_image_clear (&in);
  es_image_clear (&out);
}

static void
test_devices (EsEngine *cuda)
{
  const char *devices = getenv ("ES_DEVICES");
  const int missing[] = { 999 };
  EsError error = { 0 };
  EsEngine *engine;

  tap_diag ("engine: %s", es_engine_describe (cuda));
  if (devices != NULL && strchr (devices, ',') != NULL)
    {
      int n = 1;
      char expected[32];
      for (const char *p = devices; *p; p++)
        n += *p == ',';
      snprintf (expected, sizeof expected, "CUDA: %d × ", n);
      tap_ok (strstr (es_engine_describe (cuda), expected) != NULL || strstr (es_engine_describe (cuda), " + ") != NULL,
              "ES_DEVICES=%s: the description lists %d devices", devices, n);
    }
  engine = es_engine_new_with_devices (ES_BACKEND_CUDA, missing, 1, &error);
  tap_ok (engine == NULL && error.code == ES_ERROR_UNAVAILABLE && strstr (error.message, "999") != NULL,
          "a device that does not exist is refused: %s", error.message);
  es_engine_free (engine);
}

/* A large job of the engine's own choosing between page-locked images goes
 * in bands whose transfers overlap the kernels: each 2-D definition the
 * PCIe figures of PERFORMANCE.md cover, on an image over the overlap's
 * pixel threshold whose rows no band count divides. A pageable input into
 * a page-locked result is staged whole and then overlapped; every pairing
 * of pageable and page-locked sides also runs in bands under a budget, so
 * that the bands' staging of either side is checked too. Every run gives
 * the bits of the one-shot run of the same variant (named, so that it runs
 * in one piece). */
static void
test_overlapped_bands (EsEngine *cuda)
{
  static const struct {
    const char *preset;
    EsShape shape;
    int window, radius, levels;
  } cases[] = {
    { NULL, ES_SHAPE_SQUARE, 5, 0, 16 },      { NULL, ES_SHAPE_SQUARE, 5, 0, 256 },
    { "skimage", ES_SHAPE_SQUARE, 3, 0, 16 }, { "skimage", ES_SHAPE_SQUARE, 31, 0, 16 },
    { "skimage", ES_SHAPE_DISK, 0, 5, 16 },   { "skimage", ES_SHAPE_DISK, 0, 15, 16 },
    { "matlab", ES_SHAPE_SQUARE, 9, 0, 256 },
  };
  const int width = 2048 + random_in (1, 40), height = 2048 + random_in (1, 40);
  EsImage pageable = { 0 }, pinned = { 0 };
  EsError error = { 0 };

  if (!make_image (&pageable, width, height, ES_FORMAT_U8, 8, 0)
      || !tap_ok (es_engine_image_alloc (cuda, &pinned, width, height, ES_FORMAT_U8, 8, &error),
                  "a page-locked %d×%d input (%s)", width, height, error.message))
    {
      es_image_clear (&pageable);
      return;
    }
  for (int y = 0; y < height; y++)
    memcpy ((uint8_t *) pinned.pixels + (size_t) y * pinned.stride,
            (const uint8_t *) pageable.pixels + (size_t) y * pageable.stride, (size_t) width);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      EsImage one_shot = { 0 };
      EsTiming timing;

      if (cases[c].preset != NULL)
        es_preset_apply (es_preset_find (ES_OP_ENTROPY, cases[c].preset), &job, false);
      job.definition.shape = cases[c].shape;
      job.definition.radius = cases[c].radius;
      if (cases[c].window > 0)
        job.window = cases[c].window;
      if (cases[c].preset == NULL)
        job.levels = cases[c].levels;
      const EsVariant *chosen = es_variant_for_job (&job);
      EsJob named = job;
      named.variant = chosen->id;
      if (!tap_ok (es_run (cuda, &named, &pageable, &one_shot, &timing, &error), "case %zu: %s one shot (%s)", c,
                   chosen->id, error.message))
        continue;
      /* k: bit 0 a page-locked input, bit 1 a pageable result, bit 2
       * no budget (the engine's overlapped bands). */
      static const int runs[] = { 5, 4, 0, 1, 2, 3 };
      for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
        {
          const int k = runs[r];
          const EsImage *in = k & 1 ? &pinned : &pageable;
          EsImage out = { 0 };
          bool ok = true;
          if (k & 2)
            {
              /* A pageable result: the bands' output goes through staging. */
              const size_t stride = (size_t) width * sizeof (float) + 12;
              out = (EsImage){ .width = width,
                               .height = height,
                               .stride = stride,
                               .format = ES_FORMAT_F32,
                               .depth = 32,
                               .pixels = malloc (stride * (size_t) height) };
              ok = out.pixels != NULL;
            }
          const bool overlapped = k & 4;
          set_budget (overlapped ? 0 : (size_t) 8 << 20);
          ok = ok && es_run (cuda, &job, in, &out, &timing, &error) && !timing.fell_back;
          set_budget (0);
          tap_ok (ok && images_equal (&one_shot, &out),
                  "case %zu: %s, %s input, %s result %s gives the one-shot bits%s%s", c, chosen->id,
                  k & 1 ? "page-locked" : "pageable", k & 2 ? "pageable" : "page-locked",
                  !overlapped ? "in bands under 8 MiB"
                  : k & 1     ? "in overlapped bands"
                              : "staged whole, then in overlapped bands",
                  ok ? "" : ": ", ok ? "" : error.message);
          es_image_clear (&out);
        }
      es_image_clear (&one_shot);
    }
  es_image_clear (&pageable);
  es_image_clear (&pinned);
}

/* Page-locked images are recycled rather than pinned anew on every job (the
 * window allocates a result per parameter change): a freed block comes back
 * for the next image of a similar size, zeroed like a fresh one. */
static void
test_page_locked_reuse (EsEngine *cuda)
{
  EsImage first = { 0 }, second = { 0 };
  EsError error = { 0 };
  void *pixels;
  bool zeroed = true;

  if (!tap_ok (es_engine_image_alloc (cuda, &first, 333, 77, ES_FORMAT_F32, 0, &error),
               "a page-locked image is allocated (%s)", error.message))
    return;
  memset (first.pixels, 0xAB, first.stride * (size_t) first.height);
  pixels = first.pixels;
  es_image_clear (&first);
  if (!tap_ok (es_engine_image_alloc (cuda, &second, 333, 70, ES_FORMAT_F32, 0, &error),
               "a second, slightly smaller one is allocated (%s)", error.message))
    return;
  tap_ok (second.pixels == pixels, "it reuses the freed block instead of pinning new memory");
  for (size_t i = 0; i < second.stride * (size_t) second.height; i++)
    zeroed = zeroed && ((uint8_t *) second.pixels)[i] == 0;
  tap_ok (zeroed, "the reused block is zeroed");
  es_image_clear (&second);
}

int
main (void)
{
  EsError error = { 0 };
  EsEngine *cpu, *cuda;

  rng = tap_seed ();
  cpu = es_engine_new (ES_BACKEND_CPU, &error);
  if (!tap_ok (cpu != NULL, "CPU engine starts"))
    return tap_done ();
  test_tile_passes (cpu);
  cuda = test_cuda_engine ("bands on CUDA");
  if (cuda == NULL)
    {
      es_engine_free (cpu);
      return tap_done ();
    }

  test_devices (cuda);
  test_page_locked_reuse (cuda);
  test_overlapped_bands (cuda);
  test_random_jobs (cuda, cpu);
  test_few_megabytes (cuda, cpu);
  test_tile_bands (cuda, cpu);
  test_budget_too_small (cuda);

  es_engine_free (cuda);
  es_engine_free (cpu);
  return tap_done ();
}
