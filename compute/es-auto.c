/* SPDX-License-Identifier: MIT */
/* The `auto` engine's cost model (DESIGN.md §2). A pixel's CPU cost is each
 * operation's (EsOpInfo.cpu_pixel_ns); the constants here are measured
 * figures (PERFORMANCE.md, "Entropy `fast` at every window and level
 * count"; docs/performance/cpu-entropy.md and files.md); a model within a
 * factor of two is enough to avoid the bad picks. */
#include "es-auto.h"

#include "es-image.h"

#include <math.h>

/* Cores share memory bandwidth: 16 threads did 8192² entropy 5×5 in 37 ms,
 * about 0.6 of a core each. */
#define CPU_EFFICIENCY 0.6
/* CUDA: host-device copies through pageable or registered memory, registration
 * included (8192² entropy: 64 + 256 MB in 28 ms); the first launch of a
 * process loads the kernels (96 ms alone, 40 ms of es_run's wall beside
 * the transfers at 8192²); kernels run at a few times the memory floor. */
#define CUDA_BYTES_PER_MS 12.0e6
#define CUDA_FIRST_LAUNCH_MS 40.0
#define CUDA_LAUNCH_MS 0.05
#define CUDA_KERNEL_NS 0.005
/* The CPU's ns a pixel for the job CUDA_KERNEL_NS was measured on (entropy
 * 5×5 at 16 levels): kernels scale from it. */
#define CUDA_KERNEL_REFERENCE_NS 3.1

/* Each operation's row says what a pixel of the job costs the CPU. */
static double
pixel_ns (const EsJob *job)
{
  return es_op_info (job->op)->cpu_pixel_ns (job);
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
  double kernel = (double) c->pixels * CUDA_KERNEL_NS * sqrt (pixel_ns (c->job) / CUDA_KERNEL_REFERENCE_NS) * 1e-6;

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
    .job = job,
    .pixels = PIXELS,
    .in_bytes = (size_t) PIXELS * in_bytes_per_pixel,
    .out_bytes = (size_t) PIXELS
                 * es_format_size (es_job_output_format (job, in_bytes_per_pixel == 1 ? ES_FORMAT_U8 : ES_FORMAT_U16)),
    .cpu_threads = cpu_threads,
    .cuda_warm = true,
  };

  return !es_auto_prefers_cpu (&c);
}
