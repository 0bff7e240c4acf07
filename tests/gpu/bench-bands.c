/* SPDX-License-Identifier: MIT */
/* Entropy end to end on a large image: one GPU one shot, one GPU in bands, every GPU in bands, against the transfer floor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-engine.h"

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Median wall time of `repeats` runs after one warm-up; 0 on failure. */
static double
median_wall (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, int repeats)
{
  double samples[32];
  EsTiming timing;
  EsError error = { 0 };

  for (int i = 0; i <= repeats; i++)
    {
      if (!es_run (engine, job, in, out, &timing, &error) || timing.fell_back)
        {
          fprintf (stderr, "run failed: %s %s\n", error.message, es_engine_take_notice (engine) ?: "");
          return 0;
        }
      if (i > 0)
        samples[i - 1] = timing.wall_ms;
    }
  qsort (samples, (size_t) repeats, sizeof *samples, compare);
  return samples[repeats / 2];
}

/* usage: bench-bands SIDE REPEATS DEVICES... (each a list such as 0 or 0,1) */
int
main (int argc, char **argv)
{
  const int side = argc > 1 ? atoi (argv[1]) : 32768;
  int repeats = argc > 2 ? atoi (argv[2]) : 5;
  EsImage reference = { 0 };
  bool have_reference = false;
  int status = 0;

  if (repeats < 1 || repeats > 32 || side < 16)
    return fprintf (stderr, "usage: bench-bands SIDE REPEATS DEVICES...\n"), 2;
  for (int a = 3; a < argc; a++)
    {
      int devices[16], n = 0;
      EsError error = { 0 };
      for (char *p = argv[a]; *p && n < 16; p++)
        {
          devices[n++] = (int) strtol (p, &p, 10);
          if (*p == '\0')
            break;
        }
      EsEngine *engine = es_engine_new_with_devices (ES_BACKEND_CUDA, devices, n, &error);
      if (engine == NULL)
        {
          fprintf (stderr, "devices %s: %s\n", argv[a], error.message);
          status = 1;
          continue;
        }
      EsImage in = { 0 }, out = { 0 };
      if (!es_engine_image_alloc (engine, &in, side, side, ES_FORMAT_U8, 8, &error))
        {
          fprintf (stderr, "%s\n", error.message);
          return 1;
        }
      unsigned long long x = 0x9E3779B97F4A7C15ull;
      for (size_t i = 0; i < (size_t) side * side; i++)
        {
          x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
          ((uint8_t *) in.pixels)[i] = (uint8_t) ((x * 2685821657736338717ull) >> 56);
        }
      double floor_ms = 0;
      if (!es_engine_floor (engine, ES_FLOOR_TRANSFER, (size_t) side * side, (size_t) side * side * 4, repeats,
                            &floor_ms, &error))
        fprintf (stderr, "transfer floor: %s\n", error.message);
      printf ("%s\n  transfer floor (one GPU, 1 B in + 4 B out a pixel): %.1f ms\n", es_engine_describe (engine),
              floor_ms);

      const char *variants[] = { "fast", "streams-overlap" };
      for (int v = 0; v < 2; v++)
        for (int banded = 0; banded < 2; banded++)
          {
            EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
            job.variant = variants[v];
            /* 2 GiB: the image's 6 GiB of device buffers go in bands. */
            if (banded)
              setenv ("ES_GPU_MEMORY_BUDGET", "2147483648", 1);
            double ms = median_wall (engine, &job, &in, &out, repeats);
            unsetenv ("ES_GPU_MEMORY_BUDGET");
            printf ("  entropy %-16s %-22s %9.1f ms  %.2fx floor\n", variants[v], banded ? "budget 2 GiB" : "no budget",
                    ms, floor_ms > 0 ? ms / floor_ms : 0);
            if (ms == 0)
              status = 1;
            else if (!have_reference)
              {
                have_reference = es_image_alloc (&reference, side, side, ES_FORMAT_F32, 0, &error);
                if (have_reference)
                  memcpy (reference.pixels, out.pixels, (size_t) side * side * 4);
              }
            else if (memcmp (reference.pixels, out.pixels, (size_t) side * side * 4) != 0)
              {
                printf ("  MISMATCH with the first result\n");
                status = 1;
              }
          }
      es_image_clear (&in);
      es_image_clear (&out);
      es_engine_free (engine);
    }
  es_image_clear (&reference);
  return status;
}
