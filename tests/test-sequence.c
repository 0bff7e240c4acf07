/* SPDX-License-Identifier: MIT */
/* Jobs of every kind (each entropy kernel, 3-D windows, equalize, sharpen, CLAHE) in random orders on one engine
 * equal, byte for byte, the same jobs each run on an engine of its own: no job may depend on what ran before it. On
 * the CPU, and on CUDA where it can be used (required with ES_TEST_REQUIRE_CUDA=1). The per-kernel tests run each
 * kind on a fresh engine or beside jobs of its own kind, so they cannot see one kind of job overwrite a buffer that
 * another reads in a later job (DESIGN.md: a device buffer outliving a job belongs to one kernel family). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-engine.h"
#include "tap.h"
#include "test-cuda-engine.h"
#include "test-image-common.h"

static unsigned long long rng;

#define ROUNDS 3

/* The inputs every kind reads: 8-bit and 12-bit images, an 8-bit volume, a mask. */
typedef struct {
  EsImage u8, u16, volume, mask;
} Inputs;

typedef struct {
  const char *name;
  EsOp op;
  char input;          /* '8', 'w' (12-bit), 'v' (volume) */
  const char *variant; /* on CUDA */
  EsShape shape;
  int side, planes; /* square or box sides; disk radius in side */
  EsBinning binning;
  bool masked;
} Kind;

static const Kind kinds[] = {
  { "default definition (fast)", ES_OP_ENTROPY, '8', NULL, ES_SHAPE_SQUARE, 0, 0, ES_BINNING_DEPTH, false },
  { "disk 5, 256 bins (span counts)", ES_OP_ENTROPY, '8', NULL, ES_SHAPE_DISK, 5, 0, ES_BINNING_EXACT, false },
  { "disk 5, 256 bins, masked", ES_OP_ENTROPY, '8', NULL, ES_SHAPE_DISK, 5, 0, ES_BINNING_EXACT, true },
  { "square 3, 8-bit exact (ranks)", ES_OP_ENTROPY, '8', NULL, ES_SHAPE_SQUARE, 3, 0, ES_BINNING_EXACT, false },
  { "square 3, 12-bit exact (sort)", ES_OP_ENTROPY, 'w', NULL, ES_SHAPE_SQUARE, 3, 0, ES_BINNING_EXACT, false },
  { "square 33, 256 bins (slide)", ES_OP_ENTROPY, '8', NULL, ES_SHAPE_SQUARE, 33, 0, ES_BINNING_EXACT, false },
  { "square 7, 12-bit exact (slide, global counts)", ES_OP_ENTROPY, 'w', NULL, ES_SHAPE_SQUARE, 7, 0, ES_BINNING_EXACT,
    false },
  { "box 3x3x3 (narrow sums)", ES_OP_ENTROPY, 'v', "volume", ES_SHAPE_BOX, 3, 3, ES_BINNING_EXACT, false },
  { "box 9x11x11 (wide sums)", ES_OP_ENTROPY, 'v', "volume", ES_SHAPE_BOX, 11, 9, ES_BINNING_EXACT, false },
  { "equalize", ES_OP_EQUALIZE, '8', NULL, 0, 0, 0, 0, false },
  { "sharpen", ES_OP_SHARPEN, '8', NULL, 0, 0, 0, 0, false },
  { "CLAHE", ES_OP_CLAHE, '8', NULL, 0, 0, 0, 0, false },
};
#define N_KINDS ((int) (sizeof kinds / sizeof kinds[0]))

static bool
random_image (EsImage *image, int width, int height, int planes, EsFormat format, int depth)
{
  if (planes > 1 ? !es_image_alloc_volume (image, width, height, planes, format, depth, NULL)
                 : !es_image_alloc (image, width, height, format, depth, NULL))
    return false;
  for (int z = 0; z < es_image_planes (image); z++)
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++)
        {
          /* Runs of equal samples as well as noise, so windows hold repeated bins. */
          const int v = tap_random_int (&rng, 0, 3) == 0 ? (x / 5 + y / 3) % 7
                                                         : tap_random_int (&rng, 0, (1 << depth) - 1);
          if (format == ES_FORMAT_U16)
            ((uint16_t *) es_image_voxel_row (image, z, y))[x] = (uint16_t) v;
          else
            ((uint8_t *) es_image_voxel_row (image, z, y))[x] = (uint8_t) v;
        }
  return true;
}

static EsJob
kind_job (const Kind *k, const Inputs *in, EsBackendChoice backend)
{
  EsJob job = ES_JOB_INIT (k->op);

  job.variant = backend == ES_BACKEND_CUDA ? k->variant : NULL;
  if (k->op != ES_OP_ENTROPY || k->side == 0)
    return job;
  job.levels = 256;
  if (k->shape == ES_SHAPE_SQUARE)
    job.window = k->side;
  job.definition.shape = k->shape;
  job.definition.height = job.definition.width = k->side;
  job.definition.planes = k->planes;
  job.definition.radius = k->side;
  job.definition.binning = k->binning;
  job.definition.bits = true;
  job.definition.mask = k->masked ? &in->mask : NULL;
  return job;
}

static const EsImage *
kind_input (const Kind *k, const Inputs *in)
{
  return k->input == 'v' ? &in->volume : k->input == 'w' ? &in->u16 : &in->u8;
}

/* Runs kind k on `engine` (of `backend`): false, with a diagnostic, if it
 * failed or ran on another backend. */
static bool
run_kind (EsEngine *engine, EsBackendChoice backend, int k, const Inputs *in, EsImage *out)
{
  EsJob job = kind_job (&kinds[k], in, backend);
  EsTiming timing = { 0 };
  EsError error = { 0 };

  if (!es_run (engine, &job, kind_input (&kinds[k], in), out, &timing, &error))
    {
      tap_diag ("%s: %s", kinds[k].name, error.message);
      return false;
    }
  if (timing.backend != backend || timing.fell_back)
    {
      tap_diag ("%s: ran on another backend", kinds[k].name);
      return false;
    }
  return true;
}

/* Each kind alone on an engine of its own, then ROUNDS random orders on
 * one engine, each kind twice a round. */
static void
check_sequence (EsEngine *engine, EsBackendChoice backend, const char *name, const Inputs *in)
{
  EsImage alone[N_KINDS] = { { 0 } };
  bool ok = true;

  for (int k = 0; k < N_KINDS && ok; k++)
    {
      EsError error = { 0 };
      EsEngine *own = es_engine_new (backend, &error);
      ok = own != NULL && run_kind (own, backend, k, in, &alone[k]);
      es_engine_free (own);
    }
  tap_ok (ok, "%s: every kind of job runs alone (%d kinds)", name, N_KINDS);
  for (int round = 0; ok && round < ROUNDS; round++)
    {
      int order[2 * N_KINDS], differing = -1;
      for (int i = 0; i < 2 * N_KINDS; i++)
        order[i] = i % N_KINDS;
      for (int i = 2 * N_KINDS - 1; i > 0; i--)
        {
          const int j = tap_random_int (&rng, 0, i), t = order[i];
          order[i] = order[j], order[j] = t;
        }
      bool round_ok = true;
      for (int i = 0; i < 2 * N_KINDS && round_ok; i++)
        {
          EsImage out = { 0 };
          round_ok = run_kind (engine, backend, order[i], in, &out);
          if (round_ok && !images_equal (&out, &alone[order[i]]))
            round_ok = false, differing = i;
          es_image_clear (&out);
        }
      if (differing >= 0)
        tap_diag ("%s: %s differs from its run alone, after %s", name, kinds[order[differing]].name,
                  differing > 0 ? kinds[order[differing - 1]].name : "nothing");
      tap_ok (round_ok, "%s, round %d: %d jobs in a random order on one engine equal each job alone", name, round,
              2 * N_KINDS);
    }
  for (int k = 0; k < N_KINDS; k++)
    es_image_clear (&alone[k]);
}

int
main (void)
{
  Inputs in = { 0 };
  EsError error = { 0 };
  EsEngine *engine;

  rng = tap_seed ();
  if (!random_image (&in.u8, 131, 67, 1, ES_FORMAT_U8, 8) || !random_image (&in.u16, 97, 53, 1, ES_FORMAT_U16, 12)
      || !random_image (&in.volume, 29, 23, 13, ES_FORMAT_U8, 8)
      || !random_image (&in.mask, 131, 67, 1, ES_FORMAT_U8, 8))
    {
      tap_ok (false, "no memory for the inputs");
      return tap_done ();
    }
  engine = es_engine_new (ES_BACKEND_CPU, &error);
  if (engine == NULL)
    tap_ok (false, "no CPU engine: %s", error.message);
  else
    check_sequence (engine, ES_BACKEND_CPU, "CPU", &in);
  es_engine_free (engine);
  engine = test_cuda_engine ("jobs in any order on one CUDA engine");
  if (engine != NULL)
    check_sequence (engine, ES_BACKEND_CUDA, "CUDA", &in);
  es_engine_free (engine);
  es_image_clear (&in.u8);
  es_image_clear (&in.u16);
  es_image_clear (&in.volume);
  es_image_clear (&in.mask);
  return tap_done ();
}
