/* SPDX-License-Identifier: MIT */
/* The fast CUDA entropy variant at every odd window from 9×9 to 31×31 and
 * level counts up to 16 (the pair-counter kernel at 9×9, the
 * column-histogram kernel beyond), on images wider than one warp's tile and
 * on tiny ones, with every border mode at 11×11 and 31×31 and in bands of a
 * few rows, against the float64 reference. Skips without a CUDA device,
 * unless ES_TEST_REQUIRE_CUDA=1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-engine.h"
#include "es-reference.h"
#include "test-cuda-common.h"
#include "test-cuda-engine.h"

/* 8-bit samples are read by the kernel itself where L is a power of two;
 * the others go through the quantize pass. */
static const Kind kinds[] = {
  { "8-bit", ES_FORMAT_U8, 8, false },
  { "12-bit", ES_FORMAT_U16, 12, false },
  { "4-bit", ES_FORMAT_U8, 4, false },
  { "levels", ES_FORMAT_U8, 8, true },
};

static double worst_overall;

static void
run_case (EsEngine *engine, int width, int height, const Kind *kind, int window, int levels, EsBorder border)
{
  static const char *const border_names[] = { "clip", "symmetric", "mirror", "replicate", "constant" };
  const uint32_t top = kind->levels ? (uint32_t) levels : 1u << kind->depth;
  EsImage in, out = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsError error = { 0 };
  char detail[160] = "";
  double *ref;

  if (!make_image (&in, width, height, kind, top, 40, 23))
    {
      tap_ok (false, "no memory");
      return;
    }
  job.window = window;
  job.levels = levels;
  job.variant = "fast";
  job.definition.border = border;
  job.definition.border_value = (uint32_t) random_int (0, (int) top - 1);
  ref = malloc (sizeof *ref * (size_t) width * (size_t) height);
  if (ref == NULL)
    {
      tap_ok (false, "no memory");
      free (in.pixels);
      return;
    }
  es_reference_entropy_defined (&in, levels, window, &job.definition, ref);

  /* One shot, then (clip only: padded frames are one-shot) bands of a few rows. */
  const size_t padded = (size_t) (width + 15) / 16 * 16;
  const size_t row_bytes = padded * (es_format_size (in.format) + 1 + 4);
  char budget[32];
  snprintf (budget, sizeof budget, "%zu", 2 * row_bytes * (size_t) (2 * (window / 2) + 7));
  for (int pass = 0; pass < (border == ES_BORDER_CLIP ? 2 : 1); pass++)
    {
      EsTiming timing;

      if (pass == 1)
        setenv ("ES_GPU_MEMORY_BUDGET", budget, 1);
      bool ok = es_run (engine, &job, &in, &out, &timing, &error);
      unsetenv ("ES_GPU_MEMORY_BUDGET");
      if (ok && (timing.backend != ES_BACKEND_CUDA || timing.fell_back || strcmp (timing.variant, "fast") != 0))
        {
          ok = false;
          snprintf (detail, sizeof detail, "ran %s on %s", timing.variant ? timing.variant : "(none)",
                    es_backend_name (timing.backend));
        }
      else if (!ok)
        snprintf (detail, sizeof detail, "%.150s", error.message);
      else
        {
          const double worst = reference_error (&out, ref, true, detail, sizeof detail);
          ok = worst <= TOLERANCE;
          if (worst > worst_overall)
            worst_overall = worst;
        }
      tap_ok (ok, "%dx%d %s, %d×%d, %d levels, %s%s%s%s", width, height, kind->name, window, window, levels,
              border_names[border], pass == 1 ? ", in bands" : "", ok ? "" : ": ", ok ? "" : detail);
      es_image_clear (&out);
    }
  free (ref);
  free (in.pixels);
}

int
main (void)
{
  static const int sizes[][2] = { { 1, 1 }, { 3, 40 }, { 37, 29 }, { 481, 45 }, { 1001, 37 }, { 530, 71 } };
  static const int level_choices[] = { 2, 3, 4, 5, 8, 9, 16 };
  EsEngine *engine;
  int n = 0;

  rng = tap_seed ();
  engine = test_cuda_engine ("the fast entropy kernels at large windows");
  if (engine == NULL)
    {
      return tap_done ();
    }
  /* Every window with every level count, clipped, on sizes and kinds in turn. */
  for (int window = 9; window <= 31; window += 2)
    for (size_t l = 0; l < sizeof level_choices / sizeof level_choices[0]; l++, n++)
      {
        const int *size = sizes[n % 6];
        const Kind *kind = &kinds[l == 6 ? 0 : (size_t) random_int (0, 3)];
        run_case (engine, size[0], size[1], kind, window, level_choices[l], ES_BORDER_CLIP);
      }
  /* Every border mode at 11×11 and 31×31, 16 levels, 8-bit and 12-bit. */
  for (int window = 11; window <= 31; window += 20)
    for (int border = 1; border < ES_N_BORDERS; border++)
      for (int k = 0; k < 2; k++)
        run_case (engine, k == 0 ? 530 : 37, k == 0 ? 41 : 29, &kinds[k], window, 16, (EsBorder) border);
  tap_diag ("largest error %.3g", worst_overall);
  es_engine_free (engine);
  return tap_done ();
}
