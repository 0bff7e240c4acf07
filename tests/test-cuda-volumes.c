/* SPDX-License-Identifier: MIT */
/* The CUDA 3-D variants ("volume", "volume-tile") against the float64 reference on awkward volumes, every border,
 * binning, unit and mask, 16-bit exact, windows larger than the volume; bands of planes equal one pass. Skips
 * without CUDA unless ES_TEST_REQUIRE_CUDA=1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-definitions.h"
#include "es-engine.h"
#include "es-reference.h"
#include "tap.h"
#include "test-cuda-engine.h"
#include "test-volumes-common.h"

/* Runs `job` on CUDA with `variant`: false, with a diagnostic, if it failed
 * or fell back to the CPU. */
static bool
run_on_cuda (EsEngine *engine, EsJob *job, const char *variant, const EsImage *volume, EsImage *out, const char *what)
{
  EsTiming timing = { 0 };
  EsError error = { 0 };

  job->variant = variant;
  if (!es_run (engine, job, volume, out, &timing, &error))
    {
      tap_diag ("%s %s: %s", variant, what, error.message);
      return false;
    }
  if (timing.backend != ES_BACKEND_CUDA || timing.fell_back)
    {
      tap_diag ("%s %s: ran on the CPU (%s)", variant, what, es_engine_take_notice (engine));
      return false;
    }
  return true;
}

/* Runs `job` on CUDA with `variant` and compares with the float64
 * reference, raising *worst to the largest difference. */
static bool
matches_reference (EsEngine *engine, EsJob *job, const char *variant, const EsImage *volume, const char *what,
                   double *worst)
{
  EsImage out = { 0 };
  char named[240];
  bool ok;

  snprintf (named, sizeof named, "%s %s", variant, what);
  ok = run_on_cuda (engine, job, variant, volume, &out, what) && equals_reference (&out, job, volume, named, worst);
  es_image_clear (&out);
  return ok;
}

static void
check_variant (EsEngine *engine, const char *variant)
{
  static const int sizes[][3] = {
    { 1, 1, 1 },  { 1, 9, 1 },  { 9, 1, 1 },  { 1, 1, 9 },    { 7, 5, 3 },
    { 13, 6, 9 }, { 4, 11, 2 }, { 3, 3, 17 }, { 131, 70, 5 }, { 37, 129, 3 },
  };
  int failures = 0, checks = 0;
  double worst = 0.0;

  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int border = 0; border < ES_N_BORDERS; border++)
      for (int binning = 0; binning < ES_N_BINNINGS; binning++)
        for (int trial = 0; trial < 2; trial++)
          {
            RandomCase c;

            checks++;
            if (!make_random_case (&c, sizes[s][0], sizes[s][1], sizes[s][2], (EsBorder) border, (EsBinning) binning,
                                   true)
                || !matches_reference (engine, &c.job, variant, &c.volume, c.what, &worst))
              failures++;
            random_case_clear (&c);
          }
  tap_ok (failures == 0,
          "%s: 3-D windows equal the reference on awkward volumes, every border, binning, unit "
          "and mask: %d of %d (worst %.2g)",
          variant, checks - failures, checks, worst);
}

/* Runs `job` (its window and levels set) on `variant` over a random
 * volume of `size`, 8- or 16-bit samples binned by depth, with `border`, a
 * random border value and normalization, and a mask half the time: true
 * where it equals the reference. */
static bool
depth_binned_matches (EsEngine *engine, const char *variant, EsJob *job, const int size[3], bool wide, EsBorder border,
                      double *worst)
{
  EsEntropyDefinition *d = &job->definition;
  EsImage volume, mask = { 0 };
  char what[200], definition[160];
  bool ok;

  if (!make_volume (&volume, size[0], size[1], size[2], wide ? ES_FORMAT_U16 : ES_FORMAT_U8, wide ? 16 : 8))
    return false;
  d->border = border;
  d->border_value = (uint32_t) random_int (0, wide ? 65535 : 255);
  d->binning = ES_BINNING_DEPTH;
  d->normalized = random_int (0, 1);
  if (random_int (0, 1) && make_mask (&mask, size[0], size[1], size[2]))
    d->mask = &mask;
  es_job_describe_definition (job, "nats", definition, sizeof definition);
  snprintf (what, sizeof what, "%s %d×%d×%d %s", wide ? "u16" : "u8", size[0], size[1], size[2], definition);
  ok = matches_reference (engine, job, variant, &volume, what, worst);
  es_image_clear (&mask);
  es_image_clear (&volume);
  return ok;
}

/* The edges of the register-count kernel's domain (up to 16 bins, 255
 * cells, counting in fours up to 63) on either side: 16 and 17 levels,
 * footprints of 63, 64, 255 and 256 cells, and the windows slid by
 * groups of runs (cube 3, ball 2, ball 3), every border, with and without
 * a mask, 8-bit samples and 16-bit ones binned by depth, on a volume
 * smaller than the window and one of several strips of rows. */
static void
check_register_edges (EsEngine *engine)
{
  static const int sizes[][3] = { { 5, 4, 3 }, { 70, 131, 9 } };
  static const int levels[] = { 16, 17 };
  /* Footprints of 63, 64, 255 and 256 cells (run_footprint). */
  static const int footprint_cells[] = { 63, 64, 255, 256 };
  const int n_footprints = (int) (sizeof footprint_cells / sizeof footprint_cells[0]);
  uint8_t cells[RUN_FOOTPRINT_CELLS];
  int failures = 0, checks = 0;
  double worst = 0.0;

  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++)
      for (int window = 0; window < n_footprints + 3; window++)
        for (int border = 0; border < ES_N_BORDERS; border++)
          {
            const bool wide = random_int (0, 1);
            EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
            EsEntropyDefinition *d = &job.definition;
            EsFootprint footprint;

            if (window < n_footprints)
              {
                footprint = run_footprint (cells, footprint_cells[window]);
                d->shape = ES_SHAPE_FOOTPRINT;
                d->footprint = &footprint;
              }
            else if (window == n_footprints)
              d->shape = ES_SHAPE_BALL, d->radius = 2;
            else if (window == n_footprints + 1)
              d->shape = ES_SHAPE_BALL, d->radius = 3;
            else
              d->shape = ES_SHAPE_BOX, d->planes = d->height = d->width = 3;
            job.levels = levels[l];
            checks++;
            if (!depth_binned_matches (engine, "volume", &job, sizes[s], wide, (EsBorder) border, &worst))
              failures++;
          }
  tap_ok (failures == 0,
          "volume: 16 and 17 levels, 63, 64, 255 and 256 cells, cube 3, balls 2 and 3, every border, masks, 8 and 16 "
          "bits equal the reference: %d of %d (worst %.2g)",
          checks - failures, checks, worst);
}

/* Both forms of a slide's count updates (shared atomics, or a load and a
 * store: vol_atomic_updates), on each variant: ball 3 (29 spans) at 256
 * levels in atomics and at 512 (where its counts leave too few warps) in
 * loads and stores; ball 5 (16-bit counts) at 16 and 256 levels likewise;
 * cube 3 and ball 2, slid by groups of runs, in atomics at 256 and 300
 * levels and in loads and stores at 1000; a 3×5×3 box (9 spans, slid by
 * its moves) in loads and stores. Every border, with and without a
 * mask, 8- and 16-bit samples, on a volume smaller than the window and
 * one of several strips of rows. */
static void
check_update_forms (EsEngine *engine, const char *variant)
{
  static const int sizes[][3] = { { 5, 4, 3 }, { 70, 131, 9 } };
  /* A ball's radius, or a box's depth and width and its height. */
  static const struct {
    EsShape shape;
    int size, height;
    int levels[2];
  } windows[] = {
    { ES_SHAPE_BALL, 3, 0, { 256, 512 } },  { ES_SHAPE_BALL, 5, 0, { 16, 256 } }, { ES_SHAPE_BOX, 3, 3, { 256, 300 } },
    { ES_SHAPE_BALL, 2, 0, { 256, 1000 } }, { ES_SHAPE_BOX, 3, 5, { 256, 300 } },
  };
  int failures = 0, checks = 0;
  double worst = 0.0;

  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
      for (int l = 0; l < 2; l++)
        for (int border = 0; border < ES_N_BORDERS; border++)
          {
            const bool wide = windows[w].levels[l] > 256 || random_int (0, 1);
            EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
            EsEntropyDefinition *d = &job.definition;

            d->shape = windows[w].shape;
            if (d->shape == ES_SHAPE_BALL)
              d->radius = windows[w].size;
            else
              d->planes = d->width = windows[w].size, d->height = windows[w].height;
            job.levels = windows[w].levels[l];
            checks++;
            if (!depth_binned_matches (engine, variant, &job, sizes[s], wide, (EsBorder) border, &worst))
              failures++;
          }
  tap_ok (failures == 0,
          "%s: ball 3 at 256 and 512 levels, ball 5 at 16 and 256, cube 3 and box 3×5×3 at 256 and 300, ball 2 "
          "at 256 and 1000, every border, masks, 8 and 16 bits equal the reference: %d of %d (worst %.2g)",
          variant, checks - failures, checks, worst);
}

/* A budget of a few planes forces bands of planes: the result is the one
 * pass's, bit for bit (the sums are exact integers). */
static void
check_bands (EsEngine *engine)
{
  static const struct {
    EsShape shape;
    int radius, side;
    EsBorder border;
  } cases[] = {
    { ES_SHAPE_BALL, 3, 0, ES_BORDER_CLIP },
    { ES_SHAPE_BALL, 2, 0, ES_BORDER_SYMMETRIC },
    { ES_SHAPE_BOX, 0, 5, ES_BORDER_MIRROR },
    { ES_SHAPE_BOX, 0, 3, ES_BORDER_CONSTANT },
  };

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      EsImage volume, one = { 0 }, banded = { 0 };
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      bool ok;

      if (!make_volume (&volume, 200, 150, 41, ES_FORMAT_U8, 8))
        {
          tap_ok (false, "bands: a test volume");
          continue;
        }
      job.levels = 256;
      job.definition.shape = cases[c].shape;
      job.definition.radius = cases[c].radius;
      job.definition.planes = job.definition.height = job.definition.width = cases[c].side;
      job.definition.border = cases[c].border;
      job.definition.border_value = 17;
      unsetenv ("ES_GPU_MEMORY_BUDGET");
      ok = run_on_cuda (engine, &job, "volume", &volume, &one, "one pass");
      /* About 9 planes of input, binned input and output a band. */
      setenv ("ES_GPU_MEMORY_BUDGET", "3000000", 1);
      ok = ok && run_on_cuda (engine, &job, "volume", &volume, &banded, "in bands");
      unsetenv ("ES_GPU_MEMORY_BUDGET");
      tap_ok (ok && memcmp (one.pixels, banded.pixels, voxels (&volume) * sizeof (float)) == 0,
              "bands of planes under a 3 MB budget equal one pass bit for bit (%s, border %s)",
              es_shape_name (cases[c].shape), es_border_name (cases[c].border));
      es_image_clear (&one);
      es_image_clear (&banded);
      es_image_clear (&volume);
    }
}

/* Equalize takes one histogram of the whole volume: a volume whose planes
 * lie end to end is one tall image to every 2-D equalize kernel, in one
 * piece and in bands, bit for bit the CPU's. A volume with a gap between
 * its planes is left to the CPU, with a notice. */
static void
check_equalize (EsEngine *engine)
{
  static const int sizes[][3] = { { 1, 1, 2 }, { 33, 17, 5 }, { 1, 40, 3 }, { 200, 150, 41 } };
  EsEngine *cpu = es_engine_new (ES_BACKEND_CPU, NULL);
  size_t n_variants;
  const EsVariant *variants = es_variants (ES_OP_EQUALIZE, &n_variants);

  for (size_t c = 0; cpu != NULL && c < sizeof sizes / sizeof sizes[0]; c++)
    for (int deep = 0; deep < 2; deep++)
      {
        EsImage volume, want = { 0 };
        EsJob job = ES_JOB_INIT (ES_OP_EQUALIZE);
        EsError error = { 0 };
        const int width = sizes[c][0], height = sizes[c][1], planes = sizes[c][2];

        if (!make_volume (&volume, width, height, planes, deep ? ES_FORMAT_U16 : ES_FORMAT_U8, deep ? 12 : 8))
          {
            tap_ok (false, "equalize: a test volume");
            continue;
          }
        if (!tap_ok (es_run (cpu, &job, &volume, &want, NULL, &error), "equalize %d×%d×%d on the CPU (%s)", width,
                     height, planes, error.message))
          {
            es_image_clear (&volume);
            continue;
          }
        for (size_t v = 0; v <= n_variants; v++)
          for (int banded = 0; banded < 2; banded++)
            {
              EsImage got = { 0 };
              const char *id = v < n_variants ? variants[v].id : "the engine's choice";

              if (banded)
                setenv ("ES_GPU_MEMORY_BUDGET", "20000", 1);
              const bool ok = run_on_cuda (engine, &job, v < n_variants ? variants[v].id : NULL, &volume, &got,
                                           "equalize");
              unsetenv ("ES_GPU_MEMORY_BUDGET");
              tap_ok (ok && memcmp (got.pixels, want.pixels, voxels (&volume)) == 0,
                      "equalize %d×%d×%d, %d-bit, %s%s: one histogram of the volume, the CPU's bits", width, height,
                      planes, volume.depth, id, banded ? ", in bands under 20 kB" : "");
              es_image_clear (&got);
            }
        job.variant = NULL;

        /* The same volume with a gap after each plane. */
        EsImage gapped = volume, got = { 0 };
        EsTiming timing = { 0 };
        const size_t plane = volume.stride * (size_t) height, gap = 64;
        uint8_t *pixels = malloc ((plane + gap) * (size_t) planes);
        if (pixels != NULL)
          for (int z = 0; z < planes; z++)
            memcpy (pixels + (size_t) z * (plane + gap), (const uint8_t *) volume.pixels + (size_t) z * plane, plane);
        gapped.pixels = pixels;
        gapped.plane_stride = plane + gap;
        gapped.release = NULL;
        tap_ok (pixels != NULL && es_run (engine, &job, &gapped, &got, &timing, &error)
                  && timing.backend == ES_BACKEND_CPU && memcmp (got.pixels, want.pixels, voxels (&volume)) == 0,
                "equalize %d×%d×%d with gaps between its planes runs on the CPU: %s", width, height, planes,
                pixels != NULL ? es_engine_take_notice (engine) : "no memory");
        free (pixels);
        es_image_clear (&got);
        es_image_clear (&want);
        es_image_clear (&volume);
      }
  es_engine_free (cpu);
}

/* 2-D jobs after a volume on the same engine, on the kernel that slides
 * 2-D windows of more than 961 cells or 256 bins: that kernel reads a
 * c ln c table uploaded once, when the engine opens, so a volume that
 * wrote its own tables there would leave every such 2-D job after it near
 * −2^20 bits. */
static void
check_planes_after_a_volume (EsEngine *engine)
{
  static const struct {
    EsFormat format;
    int depth, side;
  } planes[] = { { ES_FORMAT_U16, 12, 5 }, { ES_FORMAT_U8, 8, 33 } };
  RandomCase c;
  double worst = 0.0;
  bool ok = make_random_case (&c, 13, 6, 9, ES_BORDER_CLIP, ES_BINNING_EXACT, true)
            && matches_reference (engine, &c.job, "volume", &c.volume, c.what, &worst);

  random_case_clear (&c);
  for (size_t i = 0; ok && i < sizeof planes / sizeof planes[0]; i++)
    {
      EsImage image = { 0 }, out = { 0 };
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      double *expected = malloc (sizeof *expected * 61 * 47);

      ok = expected != NULL && es_image_alloc (&image, 61, 47, planes[i].format, planes[i].depth, NULL);
      for (int y = 0; ok && y < image.height; y++)
        for (int x = 0; x < image.width; x++)
          if (planes[i].format == ES_FORMAT_U16)
            ((uint16_t *) es_image_row (&image, y))[x] = (uint16_t) random_int (0, (1 << planes[i].depth) - 1);
          else
            ((uint8_t *) es_image_row (&image, y))[x] = (uint8_t) random_int (0, 255);
      job.levels = 256;
      job.window = planes[i].side;
      job.definition.shape = ES_SHAPE_SQUARE;
      job.definition.height = job.definition.width = planes[i].side;
      job.definition.binning = ES_BINNING_EXACT;
      job.definition.bits = true;
      if (ok)
        {
          es_reference_entropy_defined (&image, job.levels, job.window, &job.definition, expected);
          ok = run_on_cuda (engine, &job, "general", &image, &out, "a 2-D job after a volume");
          const double diff = ok ? max_difference (&out, expected) : NAN;
          if (ok && !(diff <= ENTROPY_TOLERANCE))
            tap_diag ("%d-bit %d×%d square after a volume: off by %g", planes[i].depth, planes[i].side, planes[i].side,
                      diff);
          ok = ok && diff <= ENTROPY_TOLERANCE;
        }
      es_image_clear (&out);
      es_image_clear (&image);
      free (expected);
    }
  tap_ok (ok, "2-D windows slid after a volume on the same engine equal the reference (12-bit exact 5×5, "
              "8-bit 33×33)");
}

/* Windows whose occupied bins are all counted alike (k bins, c cells each)
 * have H = ln k exactly, and both variants must store that value's float32
 * as es_entropy_store rounds it: narrow sums at 2^19 put 9 values counted
 * 3 times each (cube 3) at 3.1699247 bits, not float(log2 9). Volumes tile
 * t × t values in x and y; boxes of t × t × d cells, clip, so the windows
 * cut by the sides count alike where whole tiles remain. */
static void
check_equal_counts (EsEngine *engine, const char *variant)
{
  static const struct {
    int tile, depth; /* box: tile × tile × depth cells */
  } boxes[] = { { 3, 3 }, { 3, 5 }, { 5, 5 }, { 11, 9 } };
  const int width = 23, height = 19, planes = 11;

  for (size_t i = 0; i < sizeof boxes / sizeof boxes[0]; i++)
    {
      const int t = boxes[i].tile, d = boxes[i].depth;
      EsImage volume = { 0 }, out = { 0 };
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      int checked = 0, wrong = 0;
      bool ok = es_image_alloc_volume (&volume, width, height, planes, ES_FORMAT_U8, 8, NULL);

      for (int z = 0; ok && z < planes; z++)
        for (int y = 0; y < height; y++)
          for (int x = 0; x < width; x++)
            ((uint8_t *) es_image_voxel_row (&volume, z, y))[x] = (uint8_t) (x % t + t * (y % t));
      job.levels = 256;
      job.definition.shape = ES_SHAPE_BOX;
      job.definition.planes = d, job.definition.height = job.definition.width = t;
      job.definition.border = ES_BORDER_CLIP;
      job.definition.binning = ES_BINNING_EXACT;
      job.definition.bits = true;
      ok = ok && run_on_cuda (engine, &job, variant, &volume, &out, "equal counts");
      for (int z = 0; ok && z < planes; z++)
        for (int y = 0; y < height; y++)
          for (int x = 0; x < width; x++)
            {
              int count[256] = { 0 }, each;
              for (int zz = z - d / 2; zz <= z + d / 2; zz++)
                for (int yy = y - t / 2; yy <= y + t / 2; yy++)
                  for (int xx = x - t / 2; xx <= x + t / 2; xx++)
                    if (zz >= 0 && zz < planes && yy >= 0 && yy < height && xx >= 0 && xx < width)
                      count[xx % t + t * (yy % t)]++;
              const int bins = es_reference_alike_bins (count, 256, &each);
              if (bins == 0)
                continue;
              const float want = es_entropy_store (log ((double) bins), ES_BITS_PER_NAT);
              const float got = ((const float *) es_image_voxel_row (&out, z, y))[x];
              checked++;
              if (got != want && wrong++ == 0)
                tap_diag ("%s box %d×%d×%d, (%d, %d, %d): %d bins of %d cells: %.9g, not %.9g", variant, d, t, t, x, y,
                          z, bins, each, (double) got, (double) want);
            }
      tap_ok (ok && checked > 0 && wrong == 0,
              "%s: equally counted windows are exactly log2 k bits, box %d×%d×%d "
              "(%d windows)",
              variant, d, t, t, checked);
      es_image_clear (&out);
      es_image_clear (&volume);
    }
}

/* 2-D jobs keep the 2-D kernels; 3-D jobs name a 3-D variant. */
static void
check_variant_choice (void)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  const EsVariant *v;

  job.definition.shape = ES_SHAPE_BALL;
  job.definition.radius = 3;
  v = es_variant_for_job (&job);
  tap_ok (v != NULL && strcmp (v->id, "volume") == 0, "a ball runs on \"volume\" (%s)", v ? v->id : "none");
  job.definition.shape = ES_SHAPE_DISK;
  v = es_variant_for_job (&job);
  tap_ok (v != NULL && strcmp (v->id, "general") == 0, "a disk stays on \"general\" (%s)", v ? v->id : "none");
  job.definition.shape = ES_SHAPE_SQUARE;
  job.variant = "volume";
  v = es_variant_for_job (&job);
  tap_ok (v != NULL && es_variant_unsupported (v, &job) == NULL && strcmp (v->id, "volume") != 0,
          "a square named on \"volume\" runs on a 2-D kernel (%s)", v ? v->id : "none");
}

int
main (void)
{
  EsEngine *engine;

  rng = tap_seed ();
  if (es_engine_cuda_compiled ())
    check_variant_choice ();
  engine = test_cuda_engine ("the CUDA 3-D variants");
  if (engine == NULL)
    {
      return tap_done ();
    }
  tap_diag ("CUDA: %s", es_engine_describe (engine));
  check_variant (engine, "volume");
  check_variant (engine, "volume-tile");
  check_register_edges (engine);
  check_update_forms (engine, "volume");
  check_update_forms (engine, "volume-tile");
  check_bands (engine);
  check_equalize (engine);
  check_equal_counts (engine, "volume");
  check_equal_counts (engine, "volume-tile");
  check_planes_after_a_volume (engine);
  es_engine_free (engine);
  return tap_done ();
}
