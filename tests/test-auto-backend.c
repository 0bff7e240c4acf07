/* SPDX-License-Identifier: MIT */
/* The `auto` engine's choice of backend (compute/es-auto.c): the cases measured in PERFORMANCE.md go where they ran fastest. */
#include <math.h>
#include <stdio.h>

#include "es-auto.h"
#include "es-image.h"
#include "tap.h"

/* An entropy job on a side×side 8-bit image, as the engine describes it. */
static EsAutoCase
entropy_case (const EsJob *job, int side, int threads, double open_left_ms, bool warm)
{
  uint64_t pixels = (uint64_t) side * (uint64_t) side;

  return (EsAutoCase){
    .job = job,
    .pixels = pixels,
    .in_bytes = pixels,
    .out_bytes = 4 * pixels,
    .cpu_threads = threads,
    .cuda_open_left_ms = open_left_ms,
    .cuda_warm = warm,
  };
}

static EsJob
entropy_job (int window, int levels)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

  job.window = window;
  job.levels = levels;
  return job;
}

static bool
expect (const EsAutoCase *c, bool cpu, const char *what)
{
  return tap_ok (es_auto_prefers_cpu (c) == cpu, "%s: %s (CPU %.1f ms, CUDA %.1f ms)", what, cpu ? "CPU" : "CUDA",
                 es_auto_cpu_ms (c), es_auto_cuda_ms (c));
}

int
main (void)
{
  EsJob small = entropy_job (5, 16), wide = entropy_job (31, 256), tall = entropy_job (31, 16);
  EsJob nine = entropy_job (9, 16), disk = entropy_job (5, 16);
  EsJob equalize = ES_JOB_INIT (ES_OP_EQUALIZE);
  EsAutoCase c;

  /* One-shot runs on the 16-core H200 host: CUDA still opening, or open
   * but cold (its first launch loads the kernels). */
  c = entropy_case (&small, 1, 16, ES_AUTO_CUDA_OPEN_MS, false);
  expect (&c, true, "1×1 entropy while CUDA opens");
  c = entropy_case (&small, 1024, 16, ES_AUTO_CUDA_OPEN_MS, false);
  expect (&c, true, "1024² entropy 5×5, 16 levels while CUDA opens");
  c = entropy_case (&small, 8192, 16, 0, false);
  expect (&c, true, "8192² entropy 5×5, 16 levels, CUDA open but cold (CPU 37 ms against 70 ms measured)");
  c = entropy_case (&wide, 8192, 16, 0, false);
  expect (&c, false, "8192² entropy 31×31, 256 levels, 16 threads");
  c = entropy_case (&tall, 8192, 2, ES_AUTO_CUDA_OPEN_MS, false);
  expect (&c, false, "8192² entropy 31×31 on 2 threads, even while CUDA opens");
  c = entropy_case (&tall, 4096, 16, 0, true);
  expect (&c, false, "4096² entropy 31×31, 16 threads, CUDA warm");
  c = entropy_case (&small, 256, 16, 0, true);
  expect (&c, true, "256² entropy 5×5, CUDA warm: the copies alone cost more");
  c = entropy_case (&equalize, 8192, 16, 0, true);
  c.out_bytes = c.in_bytes;
  expect (&c, true, "8192² equalize, CUDA warm");

  /* The estimates move the right way. */
  {
    EsAutoCase a = entropy_case (&small, 4096, 8, 0, false), b = a;
    bool ok = true;

    b.job = &nine;
    ok &= es_auto_cpu_ms (&b) > es_auto_cpu_ms (&a);
    b = a, b.job = &wide;
    ok &= es_auto_cpu_ms (&b) > es_auto_cpu_ms (&a);
    b = a, b.pixels *= 4;
    ok &= es_auto_cpu_ms (&b) > es_auto_cpu_ms (&a);
    b = a, b.cpu_threads = 16;
    ok &= es_auto_cpu_ms (&b) < es_auto_cpu_ms (&a);
    b = a, b.cuda_warm = true;
    ok &= es_auto_cuda_ms (&b) < es_auto_cuda_ms (&a);
    b = a, b.cuda_open_left_ms = 100;
    ok &= fabs (es_auto_cuda_ms (&b) - (es_auto_cuda_ms (&a) + 100)) < 1e-9;
    b = a, b.out_bytes *= 2;
    ok &= es_auto_cuda_ms (&b) > es_auto_cuda_ms (&a);
    tap_ok (ok, "more window, levels or pixels cost the CPU more, more threads less; opening and copies cost CUDA");
  }

  /* A definition of its own takes the general path, and its window is the
   * shape's side: a disk of radius 7 is a 15-wide window. */
  disk.definition.shape = ES_SHAPE_DISK;
  disk.definition.radius = 7;
  {
    EsJob fifteen = entropy_job (15, 16);
    EsAutoCase d = entropy_case (&disk, 2048, 4, 0, false), s = entropy_case (&fifteen, 2048, 4, 0, false);
    tap_ok (es_auto_cpu_ms (&d) > es_auto_cpu_ms (&s),
            "a disk of radius 7 costs the CPU more than a 15×15 square "
            "(%.1f > %.1f ms)",
            es_auto_cpu_ms (&d), es_auto_cpu_ms (&s));
  }
  /* 3-D windows cost the CPU by their spans, not by a 2-D side: a cold
   * process with a 512³ volume waits for CUDA rather than spend 0.65-0.75 s
   * of 16 cores on ball 3 (the H200 host, files.md), where a small volume
   * does not wait. */
  {
    EsJob cube = entropy_job (5, 16), ball3 = entropy_job (5, 16), ball5 = entropy_job (5, 16);
    EsAutoCase v;

    cube.definition.shape = ES_SHAPE_BOX;
    cube.definition.planes = cube.definition.height = cube.definition.width = 3;
    ball3.definition.shape = ball5.definition.shape = ES_SHAPE_BALL;
    ball3.definition.radius = 3;
    ball5.definition.radius = 5;
    v = entropy_case (&ball3, 1, 16, ES_AUTO_CUDA_OPEN_MS - 70, false);
    v.pixels = (uint64_t) 512 * 512 * 512, v.in_bytes = v.pixels, v.out_bytes = 4 * v.pixels;
    expect (&v, false, "512³ ball 3 while CUDA opens, 16 threads");
    v.pixels = (uint64_t) 64 * 128 * 128, v.in_bytes = v.pixels, v.out_bytes = 4 * v.pixels;
    v.job = &cube;
    expect (&v, true, "64×128×128 cube 3 while CUDA opens, 16 threads");
    {
      EsAutoCase a = v, b = v, c = v;

      b.job = &ball3, c.job = &ball5;
      tap_ok (es_auto_cpu_ms (&a) < es_auto_cpu_ms (&b) && es_auto_cpu_ms (&b) < es_auto_cpu_ms (&c),
              "cube 3, ball 3, ball 5 cost the CPU more and more (%.1f, %.1f, %.1f ms)", es_auto_cpu_ms (&a),
              es_auto_cpu_ms (&b), es_auto_cpu_ms (&c));
    }
  }
  /* Whether opening the device can pay off at any size. */
  tap_ok (!es_auto_cuda_can_win (&small, 1, 16) && !es_auto_cuda_can_win (&equalize, 1, 16),
          "on 16 threads CUDA can never win entropy 5×5, 16 levels, or equalize: its copies cost more a pixel");
  tap_ok (es_auto_cuda_can_win (&small, 1, 2) && es_auto_cuda_can_win (&tall, 1, 16)
            && es_auto_cuda_can_win (&wide, 2, 64),
          "it can on 2 threads, and at 31×31 on 16 or 64");
  return tap_done ();
}
