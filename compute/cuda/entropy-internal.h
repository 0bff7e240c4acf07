/* SPDX-License-Identifier: MIT */
/* Internal to the entropy .cu files: the launchers that the variant table in entropy.cu names. */
#pragma once

#include "es-cuda-internal.h"

/* entropy-teaching.cu: one EsCudaLaunch per teaching variant, and their
 * device setup (the constant table, shared-memory limits). */
bool es_cuda_entropy_naive (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_per_thread_histogram (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_table_global (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_table_constant (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_table_shared (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_shared_tile (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_teaching_init (EsCuda *cuda, EsError *error);
/* Their memory models (EsVariant.memory). */
void es_cuda_entropy_naive_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cuda_entropy_per_thread_histogram_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cuda_entropy_table_cached_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cuda_entropy_table_shared_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cuda_entropy_shared_tile_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);

/* entropy-fast.cu: the fast variant on every row (its EsCudaLaunch), on
 * output rows [y_first, y_last) (EsCudaOp.launch_rows), and its setup. */
bool es_cuda_entropy_fast (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_launch_rows (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, int y_first, int y_last,
                                  int q_first, int q_last, EsError *error);
bool es_cuda_entropy_fast_init (EsCuda *cuda, EsError *error);
/* The memory model of "fast" and of its transfer lessons. */
void es_cuda_entropy_fast_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);

/* entropy-general.cu: every definition (EsEntropyDefinition), and its table
 * (its kernels in entropy-span-counts.cu, entropy-sort.cu and entropy-slide.cu). */
bool es_cuda_entropy_general (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error);
bool es_cuda_entropy_general_init (EsCuda *cuda, EsError *error);
/* Its memory model, following the path it takes for the job. */
void es_cuda_entropy_general_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);

/* entropy-3d.cu: 3-D windows on a volume (or a 2-D image, a volume of one
 * plane) in bands of planes over every device, EsCudaOp.run_volume of
 * the "volume" and "volume-tile" variants; why each cannot compute a job. */
bool es_cuda_entropy_volume (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out,
                             float times[3], EsControl *control, EsError *error);
const char *es_cuda_entropy_volume_unsupported (const EsJob *job);
const char *es_cuda_entropy_volume_tile_unsupported (const EsJob *job);
/* Their memory models. */
void es_cuda_entropy_volume_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);
void es_cuda_entropy_volume_tile_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);

/* A job on a frame that the general kernel's first pass binned, padded by
 * the window's half extents, with one more row (a row's words may be read
 * past its last cell): 8-bit bins where they and the void mark fit a byte,
 * else 16-bit. */
typedef struct {
  const void *binned;
  unsigned binned_pitch; /* in bins */
  bool bytes;            /* 8-bit bins */
  int half_h, half_w;
  int width, height;
  uint32_t bins; /* B */
  bool normalized;
  double unit_scale; /* es_entropy_unit_scale */
  bool masked;       /* a mask: void cells (masked, or clipped) are bin B, a void centre is masked out */
  bool clipped;      /* clip without a mask: cells outside the image are bin 0, counted out by position */
  float *out;
  unsigned out_pitch;
  const EsSpan *column_spans; /* host: cells (dx, y0..y1) as EsSpan { dx, y0, y1 } */
  int n_spans;
  int cells; /* es_window_pixels */
} EsCudaBinnedJob;

/* entropy-span-counts.cu: the window's column spans, the cells (dx, dy) of
 * column dx with y0 ≤ dy ≤ y1 as EsSpan { dx, y0, y1 }, in a malloc'd
 * array (*out); returns their count, or −1 without memory. */
int es_cuda_column_spans (const EsJob *job, EsSpan **out);

/* entropy-span-counts.cu: the general variant's path for up to 256 bins,
 * 961 cells and 256 column spans, counts in shared memory. Sets *ran when it
 * launched; left false (and no error), the job goes to the other kernels. */
#define ES_CUDA_SPAN_COUNTS_MAX_BINS 256
#define ES_CUDA_SPAN_COUNTS_MAX_SPANS 256
bool es_cuda_entropy_span_counts (EsCuda *cuda, const EsCudaBinnedJob *job, bool *ran, EsError *error);
bool es_cuda_entropy_span_counts_init (EsCuda *cuda, EsError *error);

/* 16-bit counts of a block of 128 threads in shared memory, 256 bytes a
 * bin: thread t's count of bin b lies at byte 256·b + es_cuda_count_lane (t),
 * so that the 32 threads of a warp hit 32 banks whatever their bins. */
static __device__ __forceinline__ unsigned
es_cuda_count_lane (int t)
{
  return 4u * (unsigned) (t & 63) + 2u * (unsigned) (t >> 6);
}

/* The general variant's 2-D kernels (span counts, sort, ranks) sum
 * round(c ln c · 2^29) in uint64 (ES_CUDA_FINE_BITS); H of such a sum over
 * n cells, whose { ln n, 2^-29 / n } are `li`: */
static __device__ __forceinline__ double2
ln_inv_fine (int n, const EsCudaTables *__restrict__ tables)
{
  return make_double2 (__ldg (&tables->ln_n[n]), __ldg (&tables->inv_n_fine[n]));
}

static __device__ __forceinline__ double
entropy_from_fine (unsigned long long sum, double2 li)
{
  return __fma_rn (-(double) sum, li.y, li.x);
}
