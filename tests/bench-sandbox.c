/* SPDX-License-Identifier: MIT */
/* The sandbox's overhead (PERFORMANCE.md, "Files"):
 *   bench-sandbox FILE... [-r RUNS]
 * Decodes each file in this process (es_decode_fd) and in the sandbox
 * (es_sandbox_decode_fd), alternating (each first every other run), RUNS times (7 by default), checks
 * that both give the same image, and prints the medians, the best runs and the overhead,
 * the decoded image's first touch by the caller included (a read of each
 * of its cache lines): the sandbox's pixels arrive as a shared mapping.
 * Beside the wall time, the CPU time of this process and its children
 * (getrusage), which a loaded machine disturbs less. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "es-sandbox.h"

#define MAX_RUNS 101

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec * 1e3 + (double) t.tv_nsec * 1e-6;
}

/* User and system time of this process and its reaped children. */
static double
cpu_ms (void)
{
  struct rusage self, children;

  getrusage (RUSAGE_SELF, &self);
  getrusage (RUSAGE_CHILDREN, &children);
  return (self.ru_utime.tv_sec + self.ru_stime.tv_sec + children.ru_utime.tv_sec + children.ru_stime.tv_sec) * 1e3
         + (self.ru_utime.tv_usec + self.ru_stime.tv_usec + children.ru_utime.tv_usec + children.ru_stime.tv_usec)
             * 1e-3;
}

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *t, int n)
{
  qsort (t, n, sizeof *t, compare);
  return t[n / 2];
}

static size_t
image_bytes (const EsImage *image)
{
  return image->stride * (size_t) image->height * (size_t) es_image_planes (image);
}

/* Reads every byte, as the caller's first pass over the image would. */
static uint64_t
touch (const EsImage *image)
{
  const uint8_t *p = image->pixels;
  uint64_t sum = 0;

  for (size_t i = 0; i < image_bytes (image); i += 64)
    sum += p[i];
  return sum;
}

static bool
decode (const char *path, bool sandboxed, EsImage *image, double *ms, double *cpu)
{
  EsDecodeRequest request = { .levels = 256 };
  EsError error = { 0 };
  char notice[256];
  double start = now_ms (), cpu_start = cpu_ms ();
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  bool ok;
  volatile uint64_t sink;

  if (fd < 0)
    {
      perror (path);
      return false;
    }
  ok = sandboxed ? es_sandbox_decode_fd (fd, &request, image, notice, sizeof notice, &error)
                 : es_decode_fd (fd, &request, image, notice, sizeof notice, &error);
  close (fd);
  if (!ok)
    {
      fprintf (stderr, "%s: %s\n", path, error.message);
      return false;
    }
  sink = touch (image);
  (void) sink;
  *ms = now_ms () - start;
  *cpu = cpu_ms () - cpu_start;
  return true;
}

int
main (int argc, char **argv)
{
  int runs = 7;
  const char *reason;

  for (int i = 1; i + 1 < argc; i++)
    if (strcmp (argv[i], "-r") == 0)
      runs = atoi (argv[i + 1]);
  if (argc < 2 || runs < 1 || runs > MAX_RUNS)
    {
      fprintf (stderr, "usage: bench-sandbox FILE... [-r RUNS (1..%d)]\n", MAX_RUNS);
      return 2;
    }
  if (!es_sandbox_available (&reason))
    {
      fprintf (stderr, "bench-sandbox: no sandbox here: %s\n", reason);
      return 1;
    }
  printf ("%-28s %11s %11s %9s %11s %11s %9s\n", "file (medians)", "wall", "sandboxed", "overhead", "CPU", "sandboxed",
          "overhead");
  for (int f = 1; f < argc; f++)
    {
      double in_process[MAX_RUNS], sandboxed[MAX_RUNS], in_process_cpu[MAX_RUNS], sandboxed_cpu[MAX_RUNS], a, b, c, d;

      if (strcmp (argv[f], "-r") == 0)
        {
          f++;
          continue;
        }
      for (int r = 0; r < runs; r++)
        {
          EsImage here = { 0 }, there = { 0 };

          /* Each goes first every other run, so that neither always
           * finds the memory the other has just given back. */
          bool ok = r % 2 == 0 ? decode (argv[f], false, &here, &in_process[r], &in_process_cpu[r])
                                   && decode (argv[f], true, &there, &sandboxed[r], &sandboxed_cpu[r])
                               : decode (argv[f], true, &there, &sandboxed[r], &sandboxed_cpu[r])
                                   && decode (argv[f], false, &here, &in_process[r], &in_process_cpu[r]);

          if (!ok)
            return 1;
          if (here.width != there.width || here.height != there.height || here.format != there.format
              || here.depth != there.depth || memcmp (here.pixels, there.pixels, image_bytes (&here)) != 0)
            {
              fprintf (stderr, "%s: the sandboxed image differs\n", argv[f]);
              return 1;
            }
          es_image_clear (&here);
          es_image_clear (&there);
        }
      a = median (in_process, runs);
      b = median (sandboxed, runs);
      c = median (in_process_cpu, runs);
      d = median (sandboxed_cpu, runs);
      printf ("%-28s %8.1f ms %8.1f ms %+8.1f%% %8.1f ms %8.1f ms %+8.1f%%\n", argv[f], a, b, 100.0 * (b - a) / a, c, d,
              100.0 * (d - c) / c);
      /* The best of the runs: what each costs when nothing else on the
       * machine gets in the way (the medians sorted the arrays). */
      a = in_process[0], b = sandboxed[0], c = in_process_cpu[0], d = sandboxed_cpu[0];
      printf ("%-28s %8.1f ms %8.1f ms %+8.1f%% %8.1f ms %8.1f ms %+8.1f%%\n", "  best of the runs", a, b,
              100.0 * (b - a) / a, c, d, 100.0 * (d - c) / c);
    }
  return 0;
}
