/* SPDX-License-Identifier: MIT */
/* CUDA entropy under each definition (issue 13's speed targets): kernel median against the copy floor of its bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es-engine.h"
#include "es-ops.h"

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

typedef struct {
  const char *name;
  EsShape shape;
  int window, radius, levels;
  EsBorder border;
  EsBinning binning;
  bool u16;
  const char *preset; /* applied last: the preset's own definition */
  int height, width;  /* ES_SHAPE_RECT */
} Case;

/* A ring of outer radius 12 and inner radius 6 (ES_SHAPE_FOOTPRINT rows):
 * two column spans in the columns that cross the hole. */
#define RING_SIDE 25
static uint8_t ring_cells[RING_SIDE * RING_SIDE];
static const EsFootprint ring = { RING_SIDE, RING_SIDE, ring_cells, 0 };

static const Case cases[] = {
  { "square 5, L=16 (default)", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 31, L=16", ES_SHAPE_SQUARE, 31, 0, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 31, L=256", ES_SHAPE_SQUARE, 31, 0, 256, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 5, symmetric", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_SYMMETRIC, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 5, mirror", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_MIRROR, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 5, replicate", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_REPLICATE, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 5, constant", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_CONSTANT, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 9, symmetric, L=256", ES_SHAPE_SQUARE, 9, 0, 256, ES_BORDER_SYMMETRIC, ES_BINNING_DEPTH, false, NULL, 0,
    0 },
  { "square 31, symmetric", ES_SHAPE_SQUARE, 31, 0, 16, ES_BORDER_SYMMETRIC, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=5", ES_SHAPE_DISK, 5, 5, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=15", ES_SHAPE_DISK, 5, 15, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=15, L=256", ES_SHAPE_DISK, 5, 15, 256, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=1, L=16", ES_SHAPE_DISK, 5, 1, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=2, L=16", ES_SHAPE_DISK, 5, 2, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=10, L=16", ES_SHAPE_DISK, 5, 10, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=5, L=256", ES_SHAPE_DISK, 5, 5, 256, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=2, L=256", ES_SHAPE_DISK, 5, 2, 256, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "disk r=15, L=64", ES_SHAPE_DISK, 5, 15, 64, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "fiji preset (disk r=3)", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, "fiji", 0, 0 },
  { "skimage preset (3x3, 8-bit)", ES_SHAPE_SQUARE, 3, 0, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, "skimage", 0,
    0 },
  { "skimage preset (5x5, 8-bit)", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, "skimage", 0,
    0 },
  { "rect 15x31, L=256", ES_SHAPE_RECT, 5, 0, 256, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 15, 31 },
  { "rect 15x31, L=16", ES_SHAPE_RECT, 5, 0, 16, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 15, 31 },
  { "ring 25 footprint, L=256", ES_SHAPE_FOOTPRINT, 5, 0, 256, ES_BORDER_CLIP, ES_BINNING_DEPTH, false, NULL, 0, 0 },
  { "square 5, exact, 16-bit", ES_SHAPE_SQUARE, 5, 0, 16, ES_BORDER_CLIP, ES_BINNING_EXACT, true, NULL, 0, 0 },
};

/* Whether a case's name holds one of the '|'-separated substrings of `only` (NULL: every case). */
static bool
selected (const char *name, const char *only)
{
  if (only == NULL)
    return true;
  for (const char *part = only; *part != '\0';)
    {
      const size_t length = strcspn (part, "|");
      for (const char *at = name; *at != '\0'; at++)
        if (strncmp (at, part, length) == 0)
          return true;
      part += length + (part[length] == '|');
    }
  return false;
}

/* usage: bench-definitions [SIDE [REPEATS [CASE-SUBSTRING[|CASE-SUBSTRING...]]]] */
int
main (int argc, char **argv)
{
  const int side = argc > 1 ? atoi (argv[1]) : 8192;
  const int repeats = argc > 2 ? atoi (argv[2]) : 20;
  const char *only = argc > 3 ? argv[3] : NULL;
  EsError error = { 0 };
  EsImage in8 = { 0 }, in16 = { 0 }, out = { 0 };
  int status = 0;

  for (int y = 0; y < RING_SIDE; y++)
    for (int x = 0; x < RING_SIDE; x++)
      {
        const int dx = x - RING_SIDE / 2, dy = y - RING_SIDE / 2;
        ring_cells[y * RING_SIDE + x] = dx * dx + dy * dy <= 144 && dx * dx + dy * dy > 36;
      }

  if (repeats < 1 || repeats > 64 || side < 16)
    return fprintf (stderr, "usage: bench-definitions [SIDE [REPEATS [CASE]]]\n"), 2;
  EsEngine *engine = es_engine_new (ES_BACKEND_CUDA, &error);
  if (engine == NULL)
    return fprintf (stderr, "%s\n", error.message), 1;
  if (!es_engine_image_alloc (engine, &in8, side, side, ES_FORMAT_U8, 8, &error)
      || !es_engine_image_alloc (engine, &in16, side, side, ES_FORMAT_U16, 16, &error))
    return fprintf (stderr, "%s\n", error.message), 1;
  unsigned long long x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < (size_t) side * side; i++)
    {
      x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
      unsigned long long r = x * 2685821657736338717ull;
      ((uint8_t *) in8.pixels)[i] = (uint8_t) (r >> 56);
      ((uint16_t *) in16.pixels)[i] = (uint16_t) (r >> 48);
    }
  double floor8 = 0, floor16 = 0;
  const size_t pixels = (size_t) side * side;
  if (!es_engine_floor (engine, ES_FLOOR_COPY, pixels, pixels * 4, repeats, &floor8, &error)
      || !es_engine_floor (engine, ES_FLOOR_COPY, pixels * 2, pixels * 4, repeats, &floor16, &error))
    return fprintf (stderr, "copy floor: %s\n", error.message), 1;
  printf ("%s, %d², median of %d kernel runs after a warm-up\n", es_engine_describe (engine), side, repeats);
  printf ("copy floor: %.3f ms (u8 in, f32 out), %.3f ms (u16 in)\n", floor8, floor16);
  printf ("%-28s %-10s %10s %9s\n", "definition", "variant", "kernel ms", "x floor");

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      const Case *k = &cases[c];
      EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
      double samples[64];
      EsTiming timing = { 0 };

      if (!selected (k->name, only))
        continue;
      job.window = k->window;
      job.levels = k->levels;
      job.definition.shape = k->shape;
      job.definition.radius = k->radius;
      job.definition.height = k->height;
      job.definition.width = k->width;
      job.definition.footprint = k->shape == ES_SHAPE_FOOTPRINT ? &ring : NULL;
      job.definition.border = k->border;
      job.definition.border_value = 7;
      job.definition.binning = k->binning;
      if (k->preset != NULL)
        es_preset_apply (es_preset_find (ES_OP_ENTROPY, k->preset), &job, false);
      for (int i = 0; i <= repeats; i++)
        {
          if (!es_run (engine, &job, k->u16 ? &in16 : &in8, &out, &timing, &error) || timing.fell_back)
            {
              printf ("%-28s failed: %s\n", k->name, error.message);
              status = 1;
              break;
            }
          if (i > 0)
            samples[i - 1] = timing.kernel_ms;
        }
      if (status)
        continue;
      qsort (samples, (size_t) repeats, sizeof *samples, compare);
      const double ms = samples[repeats / 2], fl = k->u16 ? floor16 : floor8;
      printf ("%-28s %-10s %10.3f %8.2fx\n", k->name, timing.variant, ms, ms / fl);
    }
  es_image_clear (&in8);
  es_image_clear (&in16);
  es_image_clear (&out);
  es_engine_free (engine);
  return status;
}
