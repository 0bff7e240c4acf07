/* SPDX-License-Identifier: MIT */
/* Timing of 3-D entropy on the CPU (PERFORMANCE.md, "CPU 3-D entropy"):
 *   bench-volumes-cpu [RUNS] [WxHxD...]
 * Cube 3 and ball 3 on uniformly random uint8 volumes, 64×128×128 and 256³ unless sizes are given, at
 * scikit-image's definition (like="skimage": clip, exact bins of uint8) and at Entroscope's default
 * binning (16 levels). Prints the best and the
 * median of RUNS (default 7) in ms and Mvox/s, the least CPU time of the process (all threads: less
 * inflated than wall time by other processes on a shared machine), and a hash of the output's bytes (a change of method must
 * keep it); OMP_NUM_THREADS sets the threads. scikit-image's times for the same volumes and footprints:
 * tests/bench-volumes-skimage.py. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "es-engine.h"

static double
now_ms (clockid_t clock)
{
  struct timespec t;
  clock_gettime (clock, &t);
  return (double) t.tv_sec * 1e3 + (double) t.tv_nsec * 1e-6;
}

/* FNV-1a over the output's voxels, plane by plane. */
static unsigned long long
output_hash (const EsImage *out)
{
  unsigned long long hash = 14695981039346656037ull;

  for (int z = 0; z < es_image_planes (out); z++)
    for (int y = 0; y < out->height; y++)
      {
        const unsigned char *row = es_image_voxel_row (out, z, y);

        for (size_t i = 0; i < (size_t) out->width * sizeof (float); i++)
          hash = (hash ^ row[i]) * 1099511628211ull;
      }
  return hash;
}

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  static const char *default_sizes[] = { "128x128x64", "256x256x256" };
  int runs = argc > 1 ? atoi (argv[1]) : 7;
  const char *const *sizes = argc > 2 ? (const char *const *) argv + 2 : default_sizes;
  int n_sizes = argc > 2 ? argc - 2 : 2;
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  unsigned long long state = 88172645463325252ull;

  if (engine == NULL || runs < 1)
    {
      fprintf (stderr, "bench-volumes-cpu: %s\n", engine == NULL ? error.message : "RUNS must be positive");
      return 1;
    }
  for (int s = 0; s < n_sizes; s++)
    {
      int w, h, d;
      EsImage volume, out = { 0 };

      if (sscanf (sizes[s], "%dx%dx%d", &w, &h, &d) != 3
          || !es_image_alloc_volume (&volume, w, h, d, ES_FORMAT_U8, 8, &error))
        {
          fprintf (stderr, "bench-volumes-cpu: %s: expected WxHxD that fits memory\n", sizes[s]);
          return 1;
        }
      for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++)
            {
              state ^= state << 13, state ^= state >> 7, state ^= state << 17;
              ((uint8_t *) es_image_voxel_row (&volume, z, y))[x] = (uint8_t) (state >> 24);
            }
      for (int job_index = 0; job_index < 4; job_index++)
        {
          const int shape = job_index % 2;
          const bool exact = job_index < 2;
          EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
          double *t = malloc ((size_t) runs * sizeof *t), *cpu = malloc ((size_t) runs * sizeof *cpu),
                 mvox = (double) w * h * d * 1e-6;

          job.levels = exact ? 256 : 16;
          job.definition.border = ES_BORDER_CLIP;
          if (exact)
            job.definition.binning = ES_BINNING_EXACT;
          if (shape == 0)
            job.definition.shape = ES_SHAPE_BOX,
            job.definition.planes = job.definition.height = job.definition.width = 3;
          else
            job.definition.shape = ES_SHAPE_BALL, job.definition.radius = 3;
          for (int r = 0; r < runs; r++)
            {
              double start = now_ms (CLOCK_MONOTONIC), cpu_start = now_ms (CLOCK_PROCESS_CPUTIME_ID);

              if (!es_run (engine, &job, &volume, &out, NULL, &error))
                {
                  fprintf (stderr, "bench-volumes-cpu: %s\n", error.message);
                  return 1;
                }
              t[r] = now_ms (CLOCK_MONOTONIC) - start;
              cpu[r] = now_ms (CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
            }
          qsort (t, (size_t) runs, sizeof *t, compare);
          qsort (cpu, (size_t) runs, sizeof *cpu, compare);
          printf ("%dx%dx%d %s, %s: best %.1f ms (%.1f Mvox/s), median %.1f ms (%.1f Mvox/s), CPU time best %.1f ms, "
                  "output %016llx\n",
                  w, h, d, shape == 0 ? "cube 3" : "ball 3", exact ? "exact 256 bins" : "16 levels", t[0],
                  mvox / t[0] * 1e3, t[runs / 2], mvox / t[runs / 2] * 1e3, cpu[0], output_hash (&out));
          fflush (stdout);
          free (t);
          free (cpu);
        }
      es_image_clear (&out);
      es_image_clear (&volume);
    }
  es_engine_free (engine);
  return 0;
}
