/* SPDX-License-Identifier: MIT */
/* What test-compute and test-compute-cpu share: random images of every kind, and
 * running a job on backends against the slow references. Header-only, so that
 * the checks count in the including program's tap.h tally. */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-engine.h"
#include "es-reference.h"
#include "tap.h"

#define ENTROPY_TOLERANCE 1e-5

static unsigned long long rng;

static inline int
random_int (int lo, int hi)
{
  return tap_random_int (&rng, lo, hi);
}

static inline int
random_odd_window (void)
{
  return ES_WINDOW_MIN + 2 * random_int (0, (ES_FAST_WINDOW_MAX - ES_WINDOW_MIN) / 2);
}

typedef enum {
  PATTERN_RANDOM,
  PATTERN_BLOCKS,       /* flat patches with noisy ones: entropy from 0 to its maximum */
  PATTERN_LOW_CONTRAST, /* a few neighbouring values: equalize must stretch them */
  PATTERN_CONSTANT,     /* equalize returns it unchanged, entropy is 0 */
  N_PATTERNS
} Pattern;

typedef struct {
  EsFormat format;
  int depth;
  bool levels; /* a text matrix: the samples are levels already */
  const char *name;
} Kind;

static const Kind kinds[] = {
  { ES_FORMAT_U8, 8, false, "u8 depth 8" },     { ES_FORMAT_U8, 4, false, "u8 depth 4" },
  { ES_FORMAT_U16, 16, false, "u16 depth 16" }, { ES_FORMAT_U16, 10, false, "u16 depth 10" },
  { ES_FORMAT_U8, 8, true, "u8 levels" },       { ES_FORMAT_U16, 16, true, "u16 levels" },
};

/* A random image whose rows have a few spare bytes at their end, so that a
 * backend that ignores the stride is caught. Samples lie below 2^depth, or
 * below `levels` for a levels image. */
static bool
make_image (EsImage *image, int width, int height, const Kind *kind, int levels, Pattern pattern)
{
  size_t sample = kind->format == ES_FORMAT_U16 ? 2 : 1;
  uint32_t max = kind->levels ? (uint32_t) levels - 1 : (1u << kind->depth) - 1;
  uint32_t base = (uint32_t) random_int (0, (int) max);
  uint32_t span = max / 64 + 1;
  int block = random_int (2, 9);
  unsigned long long salt = tap_random (&rng) | 1;

  *image = (EsImage){ 0 };
  image->width = width;
  image->height = height;
  image->format = kind->format;
  image->depth = kind->depth;
  image->levels = kind->levels ? levels : 0;
  image->stride = (size_t) width * sample + sample * (size_t) random_int (0, 3);
  image->pixels = malloc (image->stride * (size_t) height);
  if (image->pixels == NULL)
    return false;
  memset (image->pixels, 0xA5, image->stride * (size_t) height);

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        uint32_t v;
        switch (pattern)
          {
            case PATTERN_BLOCKS: {
              unsigned long long cell = (unsigned long long) (y / block) * 7919u + (unsigned long long) (x / block) + 1;
              unsigned long long state = cell * salt;
              bool noisy = tap_random (&state) % 3 == 0;
              v = (uint32_t) ((noisy ? tap_random (&rng) : tap_random (&state)) % (max + 1ull));
              break;
            }
          case PATTERN_LOW_CONTRAST:
            v = base + (uint32_t) random_int (0, (int) span);
            v = v > max ? max : v;
            break;
          case PATTERN_CONSTANT: v = base; break;
          case PATTERN_RANDOM:
          case N_PATTERNS:
          default: v = (uint32_t) random_int (0, (int) max); break;
          }
        if (kind->format == ES_FORMAT_U16)
          ((uint16_t *) es_image_row (image, y))[x] = (uint16_t) v;
        else
          ((uint8_t *) es_image_row (image, y))[x] = (uint8_t) v;
      }
  return true;
}

typedef struct {
  EsEngine *engine;
  EsBackendChoice backend;
  const char *name;
  EsImage out; /* reused across jobs, as the window does */
} Backend;

/* An integer result's sample (x, y), 8- or 16-bit. */
static uint32_t
result_sample (const EsImage *out, int x, int y)
{
  return out->format == ES_FORMAT_U16 ? ((const uint16_t *) es_image_row (out, y))[x]
                                      : ((const uint8_t *) es_image_row (out, y))[x];
}

/* Compares one result of `job` on an input of format `input` with the
 * reference (ref_u16 for CLAHE, whose results keep the input's depth);
 * `detail` says what went wrong. */
static bool
compare (const EsJob *job, EsFormat input, const EsImage *out, const double *ref_f, const uint8_t *ref_u8,
         const uint16_t *ref_u16, char *detail, size_t detail_size)
{
  int w = out->width, h = out->height;
  double worst = 0.0;
  long mismatches = 0;
  int wx = 0, wy = 0;

  detail[0] = '\0';
  if (out->format != es_job_output_format (job, input))
    {
      snprintf (detail, detail_size, "output format %s", es_format_name (out->format));
      return false;
    }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        size_t i = (size_t) y * w + x;
        if (job->op == ES_OP_ENTROPY)
          {
            float got = ((const float *) es_image_row (out, y))[x];
            /* A window of one level has exactly zero entropy, not rounding
             * noise (DESIGN.md §1): count a miss there as a full error. */
            double err = ref_f[i] == 0.0 && got != 0.0f ? INFINITY : fabs ((double) got - ref_f[i]);
            /* NaN compares false, so test the good case. */
            if (!(err <= worst))
              {
                worst = isnan (err) ? INFINITY : err;
                wx = x, wy = y;
              }
          }
        else if (result_sample (out, x, y) != (ref_u16 ? ref_u16[i] : ref_u8[i]))
          {
            if (mismatches++ == 0)
              wx = x, wy = y;
          }
      }

  if (job->op == ES_OP_ENTROPY)
    {
      snprintf (detail, detail_size, "max error %.3g at (%d,%d)", worst, wx, wy);
      return worst <= ENTROPY_TOLERANCE;
    }
  if (mismatches)
    snprintf (detail, detail_size, "%ld samples differ, first at (%d,%d): %u, expected %u", mismatches, wx, wy,
              result_sample (out, wx, wy), ref_u16 ? ref_u16[(size_t) wy * w + wx] : ref_u8[(size_t) wy * w + wx]);
  return mismatches == 0;
}

/* Runs `job` on `in` with every backend and every variant, against the reference. */
static void
check (Backend *backends, int n_backends, const EsJob *job, const EsImage *in, const char *what)
{
  size_t pixels = (size_t) in->width * (size_t) in->height;
  double *ref_f = NULL;
  uint8_t *ref_u8 = NULL;
  uint16_t *ref_u16 = NULL;

  if (job->op == ES_OP_ENTROPY)
    {
      ref_f = malloc (pixels * sizeof *ref_f);
      if (ref_f != NULL)
        es_reference_entropy (in, job->levels, job->window, ref_f);
    }
  else if (job->op == ES_OP_CLAHE)
    {
      ref_u16 = malloc (pixels * sizeof *ref_u16);
      if (ref_u16 != NULL)
        es_reference_clahe (in, job->clip, job->tile_columns, job->tile_rows, ref_u16);
    }
  else
    {
      ref_u8 = malloc (pixels);
      if (ref_u8 != NULL)
        switch (job->op)
          {
          case ES_OP_QUANTIZE: es_reference_quantize (in, job->levels, ref_u8); break;
          case ES_OP_EQUALIZE: es_reference_equalize (in, ref_u8); break;
          case ES_OP_SHARPEN: es_reference_sharpen (in, job->amount, ref_u8); break;
          case ES_OP_ENTROPY:
          case ES_OP_CLAHE:
          case ES_N_OPS: break;
          }
    }
  if (ref_f == NULL && ref_u8 == NULL && ref_u16 == NULL)
    {
      tap_ok (false, "%s: no memory for the reference", what);
      return;
    }

  for (int b = 0; b < n_backends; b++)
    {
      Backend *backend = &backends[b];
      size_t n_variants = 1;
      const EsVariant *variants = NULL;

      /* The CPU has one implementation; CUDA runs every variant. */
      if (backend->backend == ES_BACKEND_CUDA)
        variants = es_variants (job->op, &n_variants);

      for (size_t v = 0; v < n_variants; v++)
        {
          EsJob run = *job;
          EsTiming timing;
          EsError error = { 0 };
          char detail[160];
          const char *variant = variants ? variants[v].id : "default";
          bool ok;

          run.variant = variants ? variants[v].id : NULL;
          if (!es_run (backend->engine, &run, in, &backend->out, &timing, &error))
            {
              tap_ok (false, "%s [%s %s]: %s", what, backend->name, variant, error.message);
              continue;
            }
          /* A variant that cannot run the job hands it to the one es_variant_for_job names. */
          if (timing.fell_back || timing.backend != backend->backend
              || (run.variant != NULL
                  && (timing.variant == NULL || strcmp (timing.variant, es_variant_for_job (&run)->id) != 0)))
            {
              tap_ok (false, "%s [%s %s]: ran on %s, variant %s%s", what, backend->name, variant,
                      es_backend_name (timing.backend), timing.variant ? timing.variant : "(none)",
                      timing.fell_back ? " after a fallback" : "");
              continue;
            }
          ok = backend->out.width == in->width && backend->out.height == in->height
               && compare (&run, in->format, &backend->out, ref_f, ref_u8, ref_u16, detail, sizeof detail);
          tap_ok (ok, "%s [%s %s]%s%s", what, backend->name, variant, ok ? "" : ": ", ok ? "" : detail);
        }
    }
  free (ref_f);
  free (ref_u8);
  free (ref_u16);
}

static const int level_choices[] = { 2, 16, 17, 256, 0 };                 /* 0: random */
static const float amount_choices[] = { 0.0f, 1.0f, 0.37f, 2.5f, -1.0f }; /* −1: random */

static inline int
pick_levels (int i)
{
  int levels = level_choices[i % 5];
  return levels ? levels : random_int (ES_LEVELS_MIN, ES_FAST_LEVELS_MAX);
}

/* CLAHE's clip limits: none, the common 2, OpenCV's default 40, one that
 * clips to a single count, then random ones. */
static const double clip_choices[] = { 0.0, 2.0, 40.0, 0.01, -1.0 }; /* −1: random */

static inline double
pick_clip (int i)
{
  double clip = clip_choices[i % 5];
  return clip >= 0.0 ? clip : random_int (1, 10000) / 100.0;
}

/* Grids from 1×1 to 64×64, wider than small images on purpose. A 16-bit
 * input's 65536-bin LUTs make large grids slow in the reference, so its
 * grids stop at 8×8 here (the Python tests take 16-bit 64×64 against
 * OpenCV). */
static inline void
pick_tiles (int i, EsFormat input, EsJob *job)
{
  static const int choices[][2] = { { 8, 8 }, { 1, 1 }, { 3, 5 }, { 64, 64 }, { 0, 0 } }; /* 0: random */
  int most = input == ES_FORMAT_U8 ? ES_TILES_MAX : 8;

  job->tile_columns = choices[i % 5][0] ? choices[i % 5][0] : random_int (ES_TILES_MIN, most);
  job->tile_rows = choices[i % 5][1] ? choices[i % 5][1] : random_int (ES_TILES_MIN, most);
  job->tile_columns = job->tile_columns < most ? job->tile_columns : most;
  job->tile_rows = job->tile_rows < most ? job->tile_rows : most;
}

static inline float
pick_amount (int i)
{
  float amount = amount_choices[i % 5];
  return amount >= 0.0f ? amount : (float) random_int (0, 1000000) / 100000.0f;
}
