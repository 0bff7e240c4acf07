/* SPDX-License-Identifier: MIT */
/* The GPU machine's timing of 3-D windows: tests/gpu/bench-volumes [SIDE [REPEATS]] runs a SIDE³ uint8 volume
 * (512 unless told) at cube 3, ball 2, ball 3 and ball 5, 16 and 256 bins, on "volume" and "volume-tile", and
 * prints the median kernel time against the copy floor of the same bytes (uint8 in, float out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-engine.h"

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

int
main (int argc, char **argv)
{
  const int side = argc > 1 ? atoi (argv[1]) : 512;
  const int repeats = argc > 2 ? atoi (argv[2]) : 7;
  static const struct {
    const char *name;
    EsShape shape;
    int size;
  } windows[] = {
    { "cube 3", ES_SHAPE_BOX, 3 },
    { "ball 2", ES_SHAPE_BALL, 2 },
    { "ball 3", ES_SHAPE_BALL, 3 },
    { "ball 5", ES_SHAPE_BALL, 5 },
  };
  static const char *variants[] = { "volume", "volume-tile" };
  static const int bins[] = { 16, 256 };
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CUDA, &error);
  EsImage volume = { 0 }, out = { 0 };
  unsigned long long state = 88172645463325252ull;
  double floor_ms, *ms = malloc ((size_t) repeats * sizeof *ms);
  const size_t voxels = (size_t) side * side * side;

  if (engine == NULL || ms == NULL || side < 1 || repeats < 1)
    {
      fprintf (stderr, "bench-volumes: %s\n", engine == NULL ? error.message : "bad arguments");
      return 1;
    }
  if (!es_image_alloc_volume (&volume, side, side, side, ES_FORMAT_U8, 8, &error)
      || !es_engine_floor (engine, ES_FLOOR_COPY, voxels, voxels * 4, repeats, &floor_ms, &error))
    {
      fprintf (stderr, "bench-volumes: %s\n", error.message);
      return 1;
    }
  /* Noise with runs: a third of the voxels repeat their left neighbour. */
  for (size_t i = 0; i < voxels; i++)
    {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      ((uint8_t *) volume.pixels)[i] = i > 0 && state % 3 == 0 ? ((uint8_t *) volume.pixels)[i - 1]
                                                               : (uint8_t) (state >> 24);
    }
  printf ("# %s, %d³ uint8, kernel time (binning + entropy), median of %d\n", es_engine_describe (engine), side,
          repeats);
  printf ("| variant | footprint | bins | ms median | copy floor ms | × floor |\n|---|---|---|---|---|---|\n");
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
      for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++)
        {
          EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
          EsTiming timing;

          job.variant = variants[v];
          job.levels = bins[b];
          job.definition.shape = windows[w].shape;
          job.definition.radius = windows[w].size;
          job.definition.planes = job.definition.height = job.definition.width = windows[w].size;
          for (int r = 0; r < repeats; r++)
            {
              if (!es_run (engine, &job, &volume, &out, &timing, &error))
                {
                  fprintf (stderr, "bench-volumes: %s %s: %s\n", variants[v], windows[w].name, error.message);
                  return 1;
                }
              ms[r] = timing.kernel_ms;
            }
          qsort (ms, (size_t) repeats, sizeof *ms, compare_doubles);
          printf ("| %s | %s | %d | %.3f | %.3f | %.1f |\n", timing.variant, windows[w].name, bins[b], ms[repeats / 2],
                  floor_ms, ms[repeats / 2] / floor_ms);
        }
  es_image_clear (&out);
  es_image_clear (&volume);
  es_engine_free (engine);
  free (ms);
  return 0;
}
