/* SPDX-License-Identifier: MIT */
/* The `auto` engine's cost model (DESIGN.md §2). Its constants are measured
 * figures (docs/performance/cpu-entropy.md; PERFORMANCE.md, "Entropy `fast`
 * at every window and level count"; docs/performance/files.md); a model
 * within a factor of two is enough to avoid the bad picks. */
#include "es-auto.h"

#include "es-image.h"

#include <math.h>

/* CPU nanoseconds a pixel on one core (Zen 4, photographs and random
 * images), entropy at 16 levels by window side, then each operation. */
static const struct { int side; double ns; } entropy_ns[] = {
  { 1, 1.5 }, { 3, 2.4 }, { 5, 3.1 }, { 9, 6.7 }, { 15, 13.8 }, { 31, 104.0 },
};
#define EQUALIZE_NS 0.9
#define SHARPEN_NS 0.5
#define QUANTIZE_NS 0.3
/* Cores share memory bandwidth: 16 threads did 8192² entropy 5×5 in 37 ms,
 * about 0.6 of a core each. */
#define CPU_EFFICIENCY 0.6
/* Entropy with a definition of its own (shape, border, binning, mask) goes
 * through the general path: about three times the work. */
#define DEFINITION_FACTOR 3.0

/* CUDA: host-device copies through pageable or registered memory, registration
 * included (8192² entropy: 64 + 256 MB in 28 ms); the first launch of a
 * process loads the kernels (96 ms alone, 40 ms of es_run's wall beside
 * the transfers at 8192²); kernels run at a few times the memory floor. */
#define CUDA_BYTES_PER_MS 12.0e6
#define CUDA_FIRST_LAUNCH_MS 40.0
#define CUDA_LAUNCH_MS 0.05
#define CUDA_KERNEL_NS 0.005

/* The window's side, whatever its shape. */
static int
window_side (const EsJob *job)
{
  const EsEntropyDefinition *d = &job->definition;

  switch (d->shape)
    {
    case ES_SHAPE_RECT:
      return d->height > d->width ? d->height : d->width;
    case ES_SHAPE_DISK:
      return 2 * d->radius + 1;
    case ES_SHAPE_FOOTPRINT:
      if (!d->footprint)
        return job->window;
      return d->footprint->height > d->footprint->width ? d->footprint->height : d->footprint->width;
    case ES_SHAPE_SQUARE:
    default:
      return job->window;
    }
}

/* Entropy's ns a pixel: interpolated by side, more with many levels. */
static double
entropy_pixel_ns (const EsJob *job)
{
  int n = (int) (sizeof entropy_ns / sizeof entropy_ns[0]);
  double side = window_side (job), ns = entropy_ns[n - 1].ns * (side / 31.0) * (side / 31.0);
  double levels = job->levels > 16 ? job->levels : 16;

  for (int i = 1; i < n; i++)
    if (side <= entropy_ns[i].side)
      {
        double t = (side - entropy_ns[i - 1].side) / (entropy_ns[i].side - entropy_ns[i - 1].side);
        ns = entropy_ns[i - 1].ns + (t > 0 ? t : 0) * (entropy_ns[i].ns - entropy_ns[i - 1].ns);
        break;
      }
  /* 5×5 at 256 levels took 2.8 times 16 levels' time. */
  ns *= 1.0 + (levels - 16) / 133.0;
  return es_job_is_default_definition (job) ? ns : ns * DEFINITION_FACTOR;
}

static double
pixel_ns (const EsJob *job)
{
  switch (job->op)
    {
    case ES_OP_ENTROPY:
      return entropy_pixel_ns (job);
    case ES_OP_EQUALIZE:
      return EQUALIZE_NS;
    case ES_OP_SHARPEN:
      return SHARPEN_NS;
    default:
      return QUANTIZE_NS;
    }
}

double
es_auto_cpu_ms (const EsAutoCase *c)
{
  double threads = c->cpu_threads > 1 ? 1.0 + CPU_EFFICIENCY * (c->cpu_threads - 1) : 1.0;

  return (double) c->pixels * pixel_ns (c->job) / threads * 1e-6;
}

double
es_auto_cuda_ms (const EsAutoCase *c)
{
  /* Kernels grow more slowly with the window than the CPU does (8192²:
   * 0.26 ms at 5×5, 16 levels; 2.7 ms at 31×31, 256 levels). */
  double kernel = (double) c->pixels * CUDA_KERNEL_NS * sqrt (pixel_ns (c->job) / entropy_ns[2].ns) * 1e-6;

  return (c->cuda_open_left_ms > 0 ? c->cuda_open_left_ms : 0) + (c->cuda_warm ? 0 : CUDA_FIRST_LAUNCH_MS)
         + CUDA_LAUNCH_MS + (double) (c->in_bytes + c->out_bytes) / CUDA_BYTES_PER_MS + kernel;
}

bool
es_auto_prefers_cpu (const EsAutoCase *c)
{
  return es_auto_cpu_ms (c) <= es_auto_cuda_ms (c);
}

bool
es_auto_cuda_can_win (const EsJob *job, size_t in_bytes_per_pixel, int cpu_threads)
{
  /* A large image makes the fixed costs vanish: compare a pixel's share. */
  enum { PIXELS = 1 << 30 };
  EsAutoCase c = {
    .job = job, .pixels = PIXELS, .in_bytes = (size_t) PIXELS * in_bytes_per_pixel,
    .out_bytes = (size_t) PIXELS * es_format_size (es_op_output_format (job->op)),
    .cpu_threads = cpu_threads, .cuda_warm = true,
  };

  return !es_auto_prefers_cpu (&c);
}
