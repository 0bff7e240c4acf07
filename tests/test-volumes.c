/* SPDX-License-Identifier: MIT */
/* Volumes (DESIGN.md §1): 3-D windows against the float64 reference on awkward sizes, every border,
 * binning, unit and mask; 2-D jobs plane by plane; equalize's one histogram; sizes and parsing. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-definitions.h"
#include "es-engine.h"
#include "es-reference.h"
#include "tap.h"
#include "test-volumes-common.h"

/* Runs `job` on the CPU engine and compares with the float64 reference,
 * raising *worst to the largest difference. */
static bool
matches_reference (EsEngine *engine, const EsJob *job, const EsImage *volume, const char *what, double *worst)
{
  EsImage out = { 0 };
  EsError error = { 0 };
  bool ok = es_run (engine, job, volume, &out, NULL, &error);

  if (!ok)
    tap_diag ("%s: %s", what, error.message);
  else
    ok = equals_reference (&out, job, volume, what, worst);
  es_image_clear (&out);
  return ok;
}

/* Every border and binning, units and masks, on awkward sizes, against the
 * reference. */
static void
check_against_reference (EsEngine *engine)
{
  static const int sizes[][3] = {
    { 1, 1, 1 },
    { 1, 9, 1 },
    { 9, 1, 1 },
    { 1, 1, 9 },
    { 7, 5, 3 },
    { 13, 6, 9 },
    { 4, 11, 2 },
    { 3, 3, 17 },
    /* Rows of 32 voxels and more are computed as two halves: even, odd, and
     * halves narrower than the window. */
    { 32, 3, 4 },
    { 33, 5, 3 },
    { 70, 2, 5 },
  };
  int failures = 0, checks = 0;
  double worst = 0.0;

  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int border = 0; border < ES_N_BORDERS; border++)
      for (int binning = 0; binning < ES_N_BINNINGS; binning++)
        for (int trial = 0; trial < 3; trial++)
          {
            RandomCase c;

            checks++;
            if (!make_random_case (&c, sizes[s][0], sizes[s][1], sizes[s][2], (EsBorder) border, (EsBinning) binning,
                                   false)
                || !matches_reference (engine, &c.job, &c.volume, c.what, &worst))
              failures++;
            random_case_clear (&c);
          }
  tap_ok (failures == 0,
          "3-D windows (box, ball, footprint) equal the reference on awkward volumes, every border, "
          "binning, unit and mask: %d of %d (worst %.2g)",
          checks - failures, checks, worst);
}

/* Binned cells are 16 bits wide where every bin and the one past them (a
 * cell that counts nowhere) fit, 32 bits else: 65535 bins are the widest
 * narrow case, 65536 the first wide one. Both, on rows computed as two
 * halves, with clipped borders and a mask, against the reference. */
static void
check_cell_widths (EsEngine *engine)
{
  static const int levels[] = { 65535, 65536 };
  int failures = 0;
  double worst = 0.0;

  for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++)
    for (int masked = 0; masked < 2; masked++)
      {
        EsImage volume, mask = { 0 };
        EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
        char what[32];

        if (!make_volume (&volume, 40, 6, 5, ES_FORMAT_U16, 16))
          {
            failures++;
            continue;
          }
        job.levels = levels[l];
        job.definition = (EsEntropyDefinition){
          .shape = ES_SHAPE_BALL,
          .radius = 2,
          .border = ES_BORDER_CLIP,
          .binning = ES_BINNING_DEPTH,
        };
        if (masked && make_mask (&mask, 40, 6, 5))
          job.definition.mask = &mask;
        snprintf (what, sizeof what, "%d levels%s", levels[l], masked ? ", masked" : "");
        if (!matches_reference (engine, &job, &volume, what, &worst))
          failures++;
        es_image_clear (&mask);
        es_image_clear (&volume);
      }
  tap_ok (failures == 0,
          "65535 bins (16-bit cells) and 65536 (32-bit) equal the reference, with and without a "
          "mask (worst %.2g)",
          worst);
}

/* Packed counts (up to 16 bins and 255 cells, the bytes of one vector)
 * on either side of their edges: 16 and 17 levels, and 2 (where SKIP takes
 * a lane of no bin); footprints of 255 and 256 cells, several spans to a
 * group of equal x ranges and groups of one span; every border, with and
 * without a mask, on rows narrower than the window and wider. */
static void
check_packed_edges (EsEngine *engine)
{
  static const int levels[] = { 2, 16, 17 };
  static const int footprint_cells[] = { 255, 256 };
  static const int sizes[][3] = { { 5, 4, 3 }, { 40, 7, 4 } };
  uint8_t cells[RUN_FOOTPRINT_CELLS];
  int failures = 0, checks = 0;
  double worst = 0.0;

  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++)
      for (size_t f = 0; f < sizeof footprint_cells / sizeof footprint_cells[0]; f++)
        for (int border = 0; border < ES_N_BORDERS; border++)
          {
            EsImage volume, mask = { 0 };
            EsFootprint footprint = run_footprint (cells, footprint_cells[f]);
            EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
            char what[96];

            checks++;
            if (!make_volume (&volume, sizes[s][0], sizes[s][1], sizes[s][2], ES_FORMAT_U8, 8))
              {
                failures++;
                continue;
              }
            job.levels = levels[l];
            job.definition.shape = ES_SHAPE_FOOTPRINT;
            job.definition.footprint = &footprint;
            job.definition.border = (EsBorder) border;
            job.definition.border_value = (uint32_t) random_int (0, 255);
            if (random_int (0, 1) && make_mask (&mask, sizes[s][0], sizes[s][1], sizes[s][2]))
              job.definition.mask = &mask;
            snprintf (what, sizeof what, "%d×%d×%d, %d levels, %d cells, border %d%s", sizes[s][0], sizes[s][1],
                      sizes[s][2], levels[l], footprint_cells[f], border, job.definition.mask ? ", masked" : "");
            if (!matches_reference (engine, &job, &volume, what, &worst))
              failures++;
            es_image_clear (&mask);
            es_image_clear (&volume);
          }
  tap_ok (failures == 0,
          "2, 16 and 17 levels, footprints of 255 and 256 cells, every border, masks: equal the reference "
          "%d of %d (worst %.2g)",
          checks - failures, checks, worst);
}

/* A 2-D window over a volume is the 2-D result of each plane, bit for bit,
 * mask planes included; so are sharpen and quantize. */
static void
check_planes (EsEngine *engine)
{
  static const EsOp ops[] = { ES_OP_ENTROPY, ES_OP_SHARPEN, ES_OP_QUANTIZE };
  int failures = 0;

  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int trial = 0; trial < 4; trial++)
      {
        int w = random_int (1, 40), h = random_int (1, 30), planes = random_int (2, 6);
        EsImage volume, mask = { 0 }, out = { 0 }, plane_out = { 0 };
        EsJob job = ES_JOB_INIT (ops[o]);
        EsError error = { 0 };

        if (!make_volume (&volume, w, h, planes, trial % 2 ? ES_FORMAT_U16 : ES_FORMAT_U8, trial % 2 ? 16 : 8))
          {
            failures++;
            continue;
          }
        if (ops[o] == ES_OP_ENTROPY && trial >= 2)
          {
            job.definition.shape = ES_SHAPE_DISK;
            job.definition.radius = 2;
            job.definition.border = ES_BORDER_MIRROR;
            job.definition.binning = ES_BINNING_MINMAX;
            if (make_mask (&mask, w, h, planes))
              job.definition.mask = &mask;
          }
        if (!es_run (engine, &job, &volume, &out, NULL, &error) || es_image_planes (&out) != planes)
          failures++;
        else
          for (int z = 0; z < planes; z++)
            {
              EsImage in_plane = es_image_plane (&volume, z), mask_plane;
              EsJob plane_job = job;

              if (job.definition.mask != NULL)
                {
                  mask_plane = es_image_plane (&mask, z);
                  plane_job.definition.mask = &mask_plane;
                }
              /* Minmax binning reads the whole volume's range, so the
               * plane's job gets that range. */
              es_job_resolve_minmax (&plane_job, &volume);
              if (!es_run (engine, &plane_job, &in_plane, &plane_out, NULL, &error))
                {
                  failures++;
                  continue;
                }
              for (int y = 0; y < h; y++)
                if (memcmp (es_image_voxel_row (&out, z, y), es_image_row (&plane_out, y),
                            (size_t) w * es_format_size (out.format))
                    != 0)
                  {
                    failures++;
                    tap_diag ("%s %d×%d×%d: plane %d row %d differs", es_op_name (ops[o]), w, h, planes, z, y);
                    break;
                  }
            }
        es_image_clear (&plane_out);
        es_image_clear (&out);
        es_image_clear (&mask);
        es_image_clear (&volume);
      }
  tap_ok (failures == 0, "entropy with 2-D windows, sharpen and quantize on a volume equal their 2-D results "
                         "plane by plane");
}

/* Equalize builds one histogram of the whole volume: its result is that of
 * the planes stacked into one tall image. */
static void
check_equalize (EsEngine *engine)
{
  int failures = 0;

  for (int trial = 0; trial < 6; trial++)
    {
      int w = random_int (1, 30), h = random_int (1, 20), planes = random_int (2, 5);
      EsImage volume, tall, out = { 0 };
      EsJob job = ES_JOB_INIT (ES_OP_EQUALIZE);
      uint8_t *expected;
      EsError error = { 0 };

      if (!make_volume (&volume, w, h, planes, trial % 2 ? ES_FORMAT_U16 : ES_FORMAT_U8, trial % 2 ? 12 : 8))
        {
          failures++;
          continue;
        }
      /* The volume's planes follow each other tightly packed. */
      tall = es_image_plane (&volume, 0);
      tall.height = h * planes;
      expected = malloc (voxels (&volume));
      if (expected == NULL || !es_run (engine, &job, &volume, &out, NULL, &error))
        failures++;
      else
        {
          es_reference_equalize (&tall, expected);
          if (memcmp (out.pixels, expected, voxels (&volume)) != 0)
            {
              failures++;
              tap_diag ("equalize %d×%d×%d differs from one histogram of the volume", w, h, planes);
            }
        }
      free (expected);
      es_image_clear (&out);
      es_image_clear (&volume);
    }
  tap_ok (failures == 0, "equalize on a volume uses one histogram of every plane");
}

/* A 3-D window on a 2-D image is the one-plane volume: box 1×H×W is the
 * rectangle H×W, computed by the 2-D paths. */
static void
check_one_plane (EsEngine *engine)
{
  int failures = 0;

  for (int border = 0; border < ES_N_BORDERS; border++)
    for (int binning = 0; binning < ES_N_BINNINGS; binning++)
      {
        int w = random_int (1, 50), h = random_int (1, 40);
        EsImage image, out_box = { 0 }, out_rect = { 0 };
        EsJob box = ES_JOB_INIT (ES_OP_ENTROPY), rect;
        EsError error = { 0 };
        double diff = 0.0;

        if (!make_volume (&image, w, h, 1, ES_FORMAT_U8, 8))
          {
            failures++;
            continue;
          }
        box.definition = (EsEntropyDefinition){
          .shape = ES_SHAPE_BOX,
          .planes = 1,
          .height = random_odd (1, 9),
          .width = random_odd (1, 9),
          .border = (EsBorder) border,
          .border_value = 7,
          .binning = (EsBinning) binning,
          .range_lo = 20,
          .range_hi = 200,
        };
        box.levels = 64;
        rect = box;
        rect.definition.shape = ES_SHAPE_RECT;
        if (!es_run (engine, &box, &image, &out_box, NULL, &error)
            || !es_run (engine, &rect, &image, &out_rect, NULL, &error))
          failures++;
        else
          for (size_t i = 0; i < voxels (&image); i++)
            {
              double a = ((float *) out_box.pixels)[i], b = ((float *) out_rect.pixels)[i];
              diff = fabs (a - b) > diff ? fabs (a - b) : diff;
            }
        if (!(diff <= ENTROPY_TOLERANCE))
          {
            failures++;
            tap_diag ("box 1x%dx%d against rect on %d×%d, %s, %s: off by %g", box.definition.height,
                      box.definition.width, w, h, es_border_name (border), es_binning_name (binning), diff);
          }
        es_image_clear (&out_box);
        es_image_clear (&out_rect);
        es_image_clear (&image);
      }
  tap_ok (failures == 0, "a one-plane image with box 1xHxW equals the rectangle HxW, every border and binning");
}

/* The ball is exactly scikit-image's morphology.ball: its cell counts for
 * radii 0..7 (counted with scikit-image), and its spans are the cells with
 * z² + y² + x² ≤ r². */
static void
check_shapes (void)
{
  static const int ball_cells[] = { 1, 7, 33, 123, 257, 515, 925, 1419 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  bool counts = true, spans_ok = true;

  job.definition.shape = ES_SHAPE_BALL;
  for (int r = 0; r <= ES_RADIUS_3D_MAX; r++)
    {
      int n = 0, n_spans;
      EsSpan3 *spans;

      job.definition.radius = r;
      if (r < 8)
        counts &= es_window_pixels (&job) == ball_cells[r];
      n_spans = es_window_spans_3d (&job, NULL, 0);
      spans = malloc ((size_t) n_spans * sizeof *spans);
      if (spans == NULL)
        {
          spans_ok = false;
          continue;
        }
      es_window_spans_3d (&job, spans, n_spans);
      for (int i = 0; i < n_spans; i++)
        {
          const EsSpan3 *s = &spans[i];
          int q = r * r - s->dz * s->dz - s->dy * s->dy;
          /* The span is every x with x² ≤ q: its ends are in, one step beyond is out. */
          spans_ok &= s->x0 == -s->x1 && s->x1 * s->x1 <= q && (s->x1 + 1) * (s->x1 + 1) > q;
          n += s->x1 - s->x0 + 1;
        }
      spans_ok &= n == es_window_pixels (&job) && es_op_info (ES_OP_ENTROPY)->plane_halo (&job) == r;
      free (spans);
    }
  tap_ok (counts, "ball r: 1, 7, 33, 123, 257, 515, 925, 1419 cells for r = 0..7, as scikit-image's ball");
  tap_ok (spans_ok, "ball spans hold exactly the cells with z² + y² + x² ≤ r², r = 0..%d, plane halo r",
          ES_RADIUS_3D_MAX);

  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_BOX, .planes = 3, .height = 5, .width = 7 };
  tap_ok (es_window_pixels (&job) == 105 && es_op_info (ES_OP_ENTROPY)->plane_halo (&job) == 1
            && es_op_info (ES_OP_ENTROPY)->halo (&job) == 2 && es_definition_is_3d (&job.definition),
          "box 3x5x7: 105 cells, plane halo 1, row halo 2");
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_DISK, .radius = 4 };
  tap_ok (es_op_info (ES_OP_ENTROPY)->plane_halo (&job) == 0 && !es_definition_is_3d (&job.definition),
          "2-D windows read no other plane");
}

/* A translation that says a few words loud, and leaves the rest. */
static const char *
shout (const char *text)
{
  static const char *const words[][2] = {
    { "ball r=%d", "BALL r=%d" },   { "clip", "CLIP" },     { "%d bins", "%d BINS" },
    { "normalized", "NORMALIZED" }, { "masked", "MASKED" },
  };

  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strcmp (text, words[i][0]) == 0)
      return words[i][1];
  return text;
}

static void
check_text_and_limits (void)
{
  EsEntropyDefinition d = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsImage image;
  EsError error = { 0 };
  char text[128];
  bool parsed;

  parsed = es_definition_parse_box ("3x5x7", &d) && d.shape == ES_SHAPE_BOX && d.planes == 3 && d.height == 5
           && d.width == 7 && es_definition_parse_box ("1×1×63", &d) && d.width == 63;
  tap_ok (parsed, "es_definition_parse_box reads DxHxW and D×H×W");
  tap_ok (!es_definition_parse_box ("2x5x5", &d) && !es_definition_parse_box ("3x5", &d)
            && !es_definition_parse_box ("3x5x65", &d) && !es_definition_parse_box ("3x5x5x5", &d)
            && !es_definition_parse_box ("", &d) && d.width == 63,
          "es_definition_parse_box refuses even, missing, extra and too large sides, leaving d as it was");

  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_BOX, .planes = 3, .height = 5, .width = 5 };
  es_job_describe_definition (&job, "bits", text, sizeof text);
  tap_ok (strncmp (text, "box 3×5×5 · clip", strlen ("box 3×5×5 · clip")) == 0, "described as \"%s\"", text);
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_BALL, .radius = 3 };
  es_job_describe_definition (&job, "bits", text, sizeof text);
  tap_ok (strncmp (text, "ball r=3 · ", strlen ("ball r=3 · ")) == 0
            && strcmp (es_shape_name (ES_SHAPE_BALL), "ball") == 0 && strcmp (es_shape_name (ES_SHAPE_BOX), "box") == 0,
          "described as \"%s\"; shapes named box and ball", text);

  job.levels = 16;
  es_job_describe_definition_in (&job, "bits", shout, text, sizeof text);
  tap_ok (strcmp (text, "BALL r=3 · CLIP · 16 BINS · bits") == 0,
          "es_job_describe_definition_in passes every word through translate: \"%s\"", text);
  job.definition.normalized = true;
  job.definition.mask = &image;
  es_job_describe_definition_in (&job, "bits", shout, text, sizeof text);
  tap_ok (strcmp (text, "BALL r=3 · CLIP · 16 BINS · NORMALIZED · MASKED") == 0, "normalized and masked: \"%s\"", text);
  job.definition.normalized = false;
  job.definition.mask = NULL;

  job.definition.radius = ES_RADIUS_3D_MAX + 1;
  tap_ok (!es_job_validate (&job, &error) && strstr (error.message, "0..31") != NULL, "ball radius 32: %s",
          error.message);
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_BOX, .planes = 65, .height = 1, .width = 1 };
  error = (EsError){ 0 };
  tap_ok (!es_job_validate (&job, &error) && strstr (error.message, "box depth 65") != NULL, "box 65x1x1: %s",
          error.message);
  job.definition.planes = 4;
  error = (EsError){ 0 };
  tap_ok (!es_job_validate (&job, &error), "box 4x1x1: %s", error.message);

  es_image_set_max_pixels (1000);
  error = (EsError){ 0 };
  tap_ok (!es_image_alloc_volume (&image, 10, 10, 11, ES_FORMAT_U8, 8, &error) && image.pixels == NULL
            && strstr (error.message, "10×10×11") != NULL && strstr (error.message, "1100") != NULL
            && strstr (error.message, "1000") != NULL,
          "a volume over the pixel budget is refused with its numbers: %s", error.message);
  tap_ok (es_image_alloc_volume (&image, 10, 10, 10, ES_FORMAT_U16, 16, &error) && image.planes == 10
            && image.plane_stride == 200 && es_image_planes (&image) == 10,
          "a volume at the budget is allocated, planes packed");
  es_image_clear (&image);
  es_image_set_max_pixels (0);
  error = (EsError){ 0 };
  tap_ok (!es_image_alloc_volume (&image, 1, 1, ES_MAX_SIDE + 1, ES_FORMAT_U8, 8, &error),
          "a volume of more planes than ES_MAX_SIDE is refused: %s", error.message);
  tap_ok (es_image_alloc (&image, 3, 2, ES_FORMAT_U8, 8, NULL) && image.planes == 0 && es_image_planes (&image) == 1,
          "es_image_alloc makes a 2-D image of one plane");
  es_image_clear (&image);
}

/* A 3-D mask must have the volume's planes. */
static void
check_mask_size (EsEngine *engine)
{
  EsImage volume, mask, out = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsError error = { 0 };

  if (!make_volume (&volume, 5, 4, 3, ES_FORMAT_U8, 8) || !make_mask (&mask, 5, 4, 2))
    {
      tap_ok (false, "mask planes: no memory");
      return;
    }
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_BALL, .radius = 1, .mask = &mask };
  tap_ok (!es_run (engine, &job, &volume, &out, NULL, &error) && strstr (error.message, "5×4×2") != NULL,
          "a mask of 2 planes on a volume of 3 is refused: %s", error.message);
  es_image_clear (&out);
  es_image_clear (&mask);
  es_image_clear (&volume);
}

/* A CUDA-less engine keeps volumes in plain memory: es_engine_volume_alloc
 * and es_run's results are es_image_alloc_volume's (no release function,
 * planes packed, zeroed), and a result is the same bytes whether es_run
 * allocates it or the caller hands it an engine-allocated volume. */
static void
check_engine_memory (EsEngine *engine)
{
  EsImage volume, given, image, out = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsError error = { 0 };
  bool zeroed = true;

  if (!tap_ok (es_engine_volume_alloc (engine, &image, 7, 5, 4, ES_FORMAT_U16, 16, &error), "engine volume: %s",
               error.message))
    return;
  for (size_t i = 0; i < image.plane_stride * 4; i++)
    zeroed &= ((const uint8_t *) image.pixels)[i] == 0;
  tap_ok (image.release == NULL && image.planes == 4 && image.stride == 14 && image.plane_stride == 70
            && image.depth == 16 && zeroed,
          "a CPU engine's volume is plain memory, planes packed and zeroed");
  es_image_clear (&image);
  tap_ok (es_engine_volume_alloc (engine, &image, 7, 5, 1, ES_FORMAT_U8, 8, &error) && image.planes == 0
            && image.plane_stride == 0 && image.release == NULL,
          "one plane is a 2-D image: %s", error.message);
  es_image_clear (&image);
  es_image_set_max_pixels (100);
  error = (EsError){ 0 };
  tap_ok (!es_engine_volume_alloc (engine, &image, 10, 10, 2, ES_FORMAT_U8, 8, &error) && image.pixels == NULL
            && strstr (error.message, "10×10×2") != NULL,
          "an engine volume over the pixel budget is refused: %s", error.message);
  es_image_set_max_pixels (0);

  if (!make_volume (&volume, 37, 29, 11, ES_FORMAT_U8, 8)
      || !es_engine_volume_alloc (engine, &given, 37, 29, 11, ES_FORMAT_F32, 0, &error))
    {
      tap_ok (false, "engine results: no memory");
      es_image_clear (&volume);
      return;
    }
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_BALL, .radius = 2 };
  error = (EsError){ 0 };
  if (tap_ok (es_run (engine, &job, &volume, &out, NULL, &error)
                && es_run (engine, &job, &volume, &given, NULL, &error),
              "a 3-D job into es_run's result and into an engine volume: %s", error.message))
    tap_ok (out.release == NULL && out.planes == 11 && out.plane_stride == given.plane_stride
              && memcmp (out.pixels, given.pixels, given.plane_stride * 11) == 0,
            "es_run's volume result is plain memory, and both results are the same bytes");
  es_image_clear (&given);
  es_image_clear (&out);
  es_image_clear (&volume);
}

int
main (void)
{
  EsError error = { 0 };
  EsEngine *engine;

  rng = tap_seed ();
  engine = es_engine_new (ES_BACKEND_CPU, &error);
  if (engine == NULL)
    {
      tap_ok (false, "CPU engine: %s", error.message);
      return tap_done ();
    }
  check_shapes ();
  check_text_and_limits ();
  check_against_reference (engine);
  check_cell_widths (engine);
  check_packed_edges (engine);
  check_planes (engine);
  check_equalize (engine);
  check_one_plane (engine);
  check_mask_size (engine);
  check_engine_memory (engine);
  es_engine_free (engine);
  return tap_done ();
}
