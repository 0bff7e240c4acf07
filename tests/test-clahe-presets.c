/* SPDX-License-Identifier: MIT */
/* CLAHE's presets in C against their peers' results (tests/clahe-presets-expected.h): like=skimage within 1e-6 of
 * scikit-image's float64, like=matlab exactly the NumPy transcription of adapthisteq, on every backend the engine
 * has (CUDA runs them on the CPU); then what the definitions promise whatever the image. */
#include <math.h>
#include <string.h>

#include "clahe-presets-expected.h"
#include "es-engine.h"
#include "tap.h"

/* DESIGN.md §1: skimage's float32 output is within 1e-6 of its float64. */
#define SKIMAGE_TOLERANCE 1e-6

static EsJob
case_job (const ClahePresetCase *c)
{
  EsJob job = ES_JOB_INIT (ES_OP_CLAHE);

  es_preset_apply (es_preset_find (ES_OP_CLAHE, es_clahe_kind_name (c->kind)), &job, false);
  job.clip = c->clip;
  job.tile_columns = c->tile_columns;
  job.tile_rows = c->tile_rows;
  job.clahe.kernel_height = c->kernel_height;
  job.clahe.kernel_width = c->kernel_width;
  job.clahe.bins = c->bins;
  return job;
}

static bool
case_image (const ClahePresetCase *c, EsImage *image)
{
  EsError error = { 0 };

  if (!es_image_alloc (image, c->width, c->height, c->depth == 8 ? ES_FORMAT_U8 : ES_FORMAT_U16, c->depth, &error))
    {
      tap_diag ("%s", error.message);
      es_error_clear (&error);
      return false;
    }
  for (int y = 0; y < c->height; y++)
    for (int x = 0; x < c->width; x++)
      {
        uint16_t v = c->input[(size_t) y * c->width + x];

        if (image->format == ES_FORMAT_U8)
          ((uint8_t *) es_image_row (image, y))[x] = (uint8_t) v;
        else
          ((uint16_t *) es_image_row (image, y))[x] = v;
      }
  return true;
}

static double
result_value (const EsImage *out, int x, int y)
{
  const void *row = es_image_row (out, y);

  switch (out->format)
    {
    case ES_FORMAT_F32: return ((const float *) row)[x];
    case ES_FORMAT_U16: return ((const uint16_t *) row)[x];
    default: return ((const uint8_t *) row)[x];
    }
}

/* Every case of the header on one engine: the result's format, then every
 * value within the peer's tolerance (0 for MATLAB's integers). */
static void
check_cases (EsEngine *engine, const char *backend)
{
  for (size_t i = 0; i < sizeof clahe_preset_cases / sizeof clahe_preset_cases[0]; i++)
    {
      const ClahePresetCase *c = &clahe_preset_cases[i];
      EsJob job = case_job (c);
      EsFormat want = c->kind == ES_CLAHE_SKIMAGE ? ES_FORMAT_F32 : c->depth == 8 ? ES_FORMAT_U8 : ES_FORMAT_U16;
      double tolerance = c->kind == ES_CLAHE_SKIMAGE ? SKIMAGE_TOLERANCE : 0, worst = 0;
      EsImage in = { 0 }, out = { 0 };
      EsTiming timing;
      EsError error = { 0 };
      int bad_x = -1, bad_y = -1;

      if (!case_image (c, &in))
        {
          tap_ok (false, "%s: %s: the input", backend, c->name);
          continue;
        }
      if (!es_run (engine, &job, &in, &out, &timing, &error))
        {
          tap_ok (false, "%s: %s runs: %s", backend, c->name, error.message);
          es_error_clear (&error);
          es_image_clear (&in);
          continue;
        }
      for (int y = 0; y < c->height; y++)
        for (int x = 0; x < c->width; x++)
          {
            double difference = fabs (result_value (&out, x, y) - c->expected[(size_t) y * c->width + x]);

            if (!(difference <= worst))
              {
                worst = difference;
                bad_x = x, bad_y = y;
              }
          }
      tap_ok (out.format == want && out.width == c->width && out.height == c->height,
              "%s: %s gives a %s result of the input's size", backend, c->name, es_format_name (want));
      if (!tap_ok (worst <= tolerance, "%s: %s (%d×%d, %d-bit) is its peer's within %g (largest difference %g)",
                   backend, c->name, c->width, c->height, c->depth, tolerance, worst))
        tap_diag ("at (%d, %d): %.9g, expected %.17g", bad_x, bad_y, result_value (&out, bad_x, bad_y),
                  c->expected[(size_t) bad_y * c->width + bad_x]);
      es_image_clear (&in);
      es_image_clear (&out);
    }
}

typedef struct {
  uint16_t input;
  double output;
} Pair;

static int
by_input_then_output (const void *a, const void *b)
{
  const Pair *p = a, *q = b;

  if (p->input != q->input)
    return p->input < q->input ? -1 : 1;
  return (p->output > q->output) - (p->output < q->output);
}

/* Whether a larger input never gives a smaller output. */
static bool
monotone (const ClahePresetCase *c, const EsImage *out)
{
  size_t n = (size_t) c->width * c->height;
  Pair *pairs = malloc (n * sizeof *pairs);
  bool ok = true;

  for (int y = 0; y < c->height; y++)
    for (int x = 0; x < c->width; x++)
      pairs[(size_t) y * c->width + x] = (Pair){ c->input[(size_t) y * c->width + x], result_value (out, x, y) };
  qsort (pairs, n, sizeof *pairs, by_input_then_output);
  for (size_t i = 1; i < n; i++)
    ok &= pairs[i].output >= pairs[i - 1].output;
  free (pairs);
  return ok;
}

/* What the definitions promise on any image (random sizes, clip limits and
 * bins): skimage's float output spans exactly 0..1 unless every pixel maps
 * alike, MATLAB's keeps the input's format; and MATLAB's with one tile,
 * whose map is a CDF that every pixel blends with itself in exact
 * arithmetic, never gives a larger input a smaller output. (skimage's
 * float32 sum of four equal maps may lose one below them, as scikit-image
 * itself does, so it is not monotone to the last level.) */
static void
check_invariants (EsEngine *engine, unsigned long long *state)
{
  for (int round = 0; round < 16; round++)
    {
      bool skimage = round % 2 == 0, u16 = round % 3 == 0, one_tile = round % 4 == 1;
      ClahePresetCase c = {
        .name = skimage ? "skimage" : "matlab",
        .kind = skimage ? ES_CLAHE_SKIMAGE : ES_CLAHE_MATLAB,
        .depth = u16 ? 16 : 8,
        .width = (int) (tap_random (state) % 90) + 2,
        .height = (int) (tap_random (state) % 70) + 2,
        .clip = (double) (tap_random (state) % 100) / 100.0,
        .tile_columns = one_tile ? 1 : (int) (tap_random (state) % 8) + 1,
        .tile_rows = one_tile ? 1 : (int) (tap_random (state) % 8) + 1,
        .bins = (int) (tap_random (state) % 500) + 2,
      };
      size_t n = (size_t) c.width * c.height;
      uint16_t *input = malloc (n * sizeof *input);
      EsJob job;
      EsImage in = { 0 }, out = { 0 };
      EsTiming timing;
      EsError error = { 0 };
      double lo = INFINITY, hi = -INFINITY;
      char what[160];

      for (size_t i = 0; i < n; i++)
        input[i] = (uint16_t) (tap_random (state) % (u16 ? 65536 : 256));
      c.input = input;
      job = case_job (&c);
      snprintf (what, sizeof what, "%s %d×%d %d-bit, %d×%d tiles, clip %g, %d bins", c.name, c.width, c.height, c.depth,
                c.tile_columns, c.tile_rows, c.clip, c.bins);
      if (!case_image (&c, &in) || !es_run (engine, &job, &in, &out, &timing, &error))
        {
          tap_ok (false, "%s runs: %s", what, error.message[0] ? error.message : "no input");
          es_error_clear (&error);
          es_image_clear (&in);
          free (input);
          continue;
        }
      for (int y = 0; y < c.height; y++)
        for (int x = 0; x < c.width; x++)
          lo = fmin (lo, result_value (&out, x, y)), hi = fmax (hi, result_value (&out, x, y));
      if (skimage)
        tap_ok (out.format == ES_FORMAT_F32 && ((lo == 0 && hi == 1) || lo == hi),
                "%s: float output from 0 to 1 (got %g..%g)", what, lo, hi);
      else
        tap_ok (out.format == in.format, "%s: the input's format", what);
      if (one_tile)
        tap_ok (monotone (&c, &out), "%s: a larger input never gives a smaller output", what);
      es_image_clear (&in);
      es_image_clear (&out);
      free (input);
    }
}

int
main (void)
{
  static const EsBackendChoice backends[] = { ES_BACKEND_CPU, ES_BACKEND_CUDA };
  unsigned long long state = tap_seed ();

  for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++)
    {
      EsError error = { 0 };
      EsEngine *engine = es_engine_new (backends[b], &error);
      const char *name = backends[b] == ES_BACKEND_CPU ? "cpu" : "cuda";

      if (engine == NULL)
        {
          tap_skip (error.message, "the presets on the CUDA engine");
          es_error_clear (&error);
          continue;
        }
      check_cases (engine, name);
      if (backends[b] == ES_BACKEND_CPU)
        check_invariants (engine, &state);
      es_engine_free (engine);
    }
  return tap_done ();
}
