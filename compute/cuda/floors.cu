/* SPDX-License-Identifier: MIT */
/* The floors of the performance method: a plain copy kernel and plain transfers of a kernel's bytes, timed as medians. */
#include <stdlib.h>
#include <string.h>

#include "es-cuda-internal.h"

/* ---- the copy kernel ------------------------------------------------------- */

/* Reads nin and writes nout 16-byte words; words read beyond nout feed a
 * checksum that is stored only on an impossible match, so that no read is
 * optimized away. Four words per thread and trip keep loads in flight. */
static __global__ void __launch_bounds__ (256)
copy_kernel (const uint4 *__restrict__ in, size_t nin, uint4 *__restrict__ out, size_t nout, unsigned *sink)
{
  const size_t n = nin > nout ? nin : nout;
  const size_t stride = (size_t) gridDim.x * blockDim.x;
  unsigned check = 0;

  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * stride)
    {
      uint4 v[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          size_t j = i + k * stride;
          v[k] = j < nin ? __ldcs (&in[j]) : make_uint4 ((unsigned) j, 1u, 2u, 3u);
        }
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          size_t j = i + k * stride;
          if (j < nout)
            __stcs (&out[j], v[k]);
          else if (j < n)
            check ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
        }
    }
  if (check == 0x9e3779b9u)
    *sink = check;
}

/* Fills n 16-byte words with a hash of their index, no byte zero. */
static __global__ void __launch_bounds__ (256)
fill_kernel (uint4 *out, size_t n)
{
  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      unsigned h[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          unsigned x = (unsigned) (i * 4 + k) * 0x9e3779b9u;
          x ^= x >> 16;
          x *= 0x85ebca6bu;
          x ^= x >> 13;
          h[k] = x | 0x01010101u;
        }
      out[i] = make_uint4 (h[0], h[1], h[2], h[3]);
    }
}

/* ---- timing ------------------------------------------------------------------ */

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Sorts samples in place. */
static double
median (double *samples, int n)
{
  qsort (samples, (size_t) n, sizeof *samples, compare_doubles);
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

/* The sizes of one floor's work, worked out once so that nothing but the
 * work itself runs between the two events of a timed run. */
typedef struct {
  size_t in_bytes, out_bytes;
  size_t nin, nout;  /* the copy floor: 16-byte words */
  unsigned blocks;   /* the copy floor: the copy kernel's grid */
} EsFloorWork;

/* A floor: buffers and inputs prepared once, then work enqueued on
 * cuda->stream for each timed run. */
typedef struct {
  const char *name;      /* "copy floor", for errors */
  const char *run_what;  /* what a failed run is called: "copy kernel run" */
  int warmups;
  bool (*prepare) (EsCuda *cuda, EsFloorWork *work, EsError *error);
  bool (*enqueue) (EsCuda *cuda, const EsFloorWork *work, EsError *error);
} EsFloor;

/* The median time of `repeats` runs of a floor's work between two events,
 * after its warm-up runs (DESIGN.md §6). */
static bool
measure_floor (EsCuda *cuda, const EsFloor *spec, size_t in_bytes, size_t out_bytes, int repeats,
               double *median_ms, EsError *error)
{
  EsFloorWork work = { in_bytes, out_bytes, 0, 0, 0 };
  double *samples;
  bool ok;

  if (cuda == NULL || median_ms == NULL || repeats < 1)
    return es_error_set (error, ES_ERROR_INVALID, "%s: bad arguments", spec->name);
  if (cuda->broken)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA is unusable after an earlier device error");
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  samples = (double *) malloc ((size_t) repeats * sizeof *samples);
  if (samples == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "%s: out of host memory", spec->name);

  ok = spec->prepare (cuda, &work, error);
  for (int i = 0; ok && i < spec->warmups + repeats; i++)
    {
      float ms = 0;
      ok = es_cuda_check (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error)
           && spec->enqueue (cuda, &work, error)
           && es_cuda_check (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error)
           && es_cuda_check (cuda, cudaEventSynchronize (cuda->ev_done), spec->run_what, error)
           && es_cuda_check (cuda, cudaEventElapsedTime (&ms, cuda->ev_start, cuda->ev_done), "timing", error);
      if (ok && i >= spec->warmups)
        samples[i - spec->warmups] = ms;
    }
  if (ok)
    *median_ms = median (samples, repeats);
  free (samples);
  return ok;
}

/* ---- the copy floor --------------------------------------------------------- */

/* The device buffers, and an input that is not zeros. */
static bool
copy_prepare (EsCuda *cuda, EsFloorWork *work, EsError *error)
{
  work->nin = es_cuda_div_up (work->in_bytes, 16);
  work->nout = es_cuda_div_up (work->out_bytes, 16);
  work->blocks = es_cuda_blocks (cuda, es_cuda_div_up (work->nin > work->nout ? work->nin : work->nout, 4), 256);
  if (!es_cuda_device_reserve (cuda, &cuda->d_in, work->nin * 16, "input buffer", error)
      || !es_cuda_device_reserve (cuda, &cuda->d_out, work->nout * 16, "output buffer", error))
    return false;
  if (work->nin > 0)
    {
      fill_kernel<<<es_cuda_blocks (cuda, work->nin, 256), 256, 0, cuda->stream>>> ((uint4 *) cuda->d_in.ptr,
                                                                                     work->nin);
      ES_CUDA_LAUNCHED (cuda, "fill kernel", error);
    }
  return true;
}

/* The histogram buffer stands in as the sink of the kernel's checksum,
 * which is never stored. */
static bool
copy_enqueue (EsCuda *cuda, const EsFloorWork *work, EsError *error)
{
  copy_kernel<<<work->blocks, 256, 0, cuda->stream>>> ((const uint4 *) cuda->d_in.ptr, work->nin,
                                                       (uint4 *) cuda->d_out.ptr, work->nout,
                                                       (unsigned *) cuda->histogram);
  ES_CUDA_LAUNCHED (cuda, "copy kernel", error);
  return true;
}

static const EsFloor copy_floor = { "copy floor", "copy kernel run", 3, copy_prepare, copy_enqueue };

/* ---- the transfer floor ------------------------------------------------------ */

/* Device buffers and page-locked staging, which the copy engines reach by
 * DMA, holding an input that is not zeros. */
static bool
transfer_prepare (EsCuda *cuda, EsFloorWork *work, EsError *error)
{
  if (!es_cuda_device_reserve (cuda, &cuda->d_in, work->in_bytes, "input buffer", error)
      || !es_cuda_device_reserve (cuda, &cuda->d_out, work->out_bytes, "output buffer", error)
      || !es_cuda_host_reserve (cuda, &cuda->h_in, work->in_bytes, "pinned input staging", error)
      || !es_cuda_host_reserve (cuda, &cuda->h_out, work->out_bytes, "pinned output staging", error))
    return false;
  memset (cuda->h_in.ptr, 0x5a, work->in_bytes);
  return true;
}

static bool
transfer_enqueue (EsCuda *cuda, const EsFloorWork *work, EsError *error)
{
  ES_CUDA_TRY (cuda, cudaMemcpyAsync (cuda->d_in.ptr, cuda->h_in.ptr, work->in_bytes, cudaMemcpyHostToDevice,
                                      cuda->stream), "upload", error);
  ES_CUDA_TRY (cuda, cudaMemcpyAsync (cuda->h_out.ptr, cuda->d_out.ptr, work->out_bytes, cudaMemcpyDeviceToHost,
                                      cuda->stream), "download", error);
  return true;
}

static const EsFloor transfer_floor = { "transfer floor", "transfers", 2, transfer_prepare, transfer_enqueue };

bool
es_cuda_floor (EsCuda *cuda, EsFloorKind kind, size_t in_bytes, size_t out_bytes, int repeats, double *median_ms,
               EsError *error)
{
  const EsFloor *floor = kind == ES_FLOOR_COPY ? &copy_floor : &transfer_floor;

  /* A copy kernel of no bytes launches nothing worth timing. */
  if (kind == ES_FLOOR_COPY && in_bytes == 0 && out_bytes == 0)
    return es_error_set (error, ES_ERROR_INVALID, "%s: bad arguments", floor->name);
  return measure_floor (cuda, floor, in_bytes, out_bytes, repeats, median_ms, error);
}
