/* SPDX-License-Identifier: MIT */
/* Internal to the fast entropy variant's files (entropy-fast.cu, entropy-pairs.cu, entropy-bins.cu, entropy-counts.cu): their launchers and shared helpers. */
#pragma once

#include "entropy-internal.h"

/* entropy-pairs.cu: the pair-counter kernel on output rows [y_first,
 * y_last), for windows up to 9×9 and up to 16 levels; it quantizes as it
 * loads. False (nothing launched) for other windows. */
bool es_cuda_entropy_pairs_launch (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last);
bool es_cuda_entropy_pairs_init (EsCuda *cuda, EsError *error);

/* entropy-bins.cu: the column-histogram kernel on output rows [y_first,
 * y_last), for windows 11×11 to 31×31 and up to 16 levels. It reads 8-bit
 * samples itself where L is a power of two
 * (es_cuda_entropy_bins_reads_samples), else the levels that a quantize
 * pass wrote. False (nothing launched) for other windows or levels. */
bool es_cuda_entropy_bins_launch (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last);
bool es_cuda_entropy_bins_reads_samples (const EsCudaFrame *frame);

/* entropy-counts.cu: counts in shared memory, any window and level count,
 * on levels that a quantize pass wrote; and its shared-memory limits. */
void es_cuda_entropy_counts_launch (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last);
bool es_cuda_entropy_counts_init (EsCuda *cuda, EsError *error);

/* The general path's kernels keep the exact fixed-point sum of the table
 * variants (round(c ln c · 2^19) in uint32) and finish it in double, so
 * they agree bit for bit with log-table-*. H from such a sum, with ln n and
 * 2^-19/n already at hand: */
static __device__ __forceinline__ float
entropy_from_fix_li (uint32_t sum, double2 li)
{
  double h = __fma_rn (-(double) sum, li.y, li.x);
  return h >= ES_ENTROPY_ZERO_BELOW ? (float) h : 0.0f;
}

/* A fast kernel's value as it is stored: nats, or scaled as es_entropy_store
 * scales them (bits), so that the result equals the nats scaled after. */
static __device__ __forceinline__ float
fast_stored (float h, double unit_scale)
{
  return unit_scale == 1.0 ? h : es_entropy_store (h, unit_scale);
}

static __device__ __forceinline__ double2
ln_inv_fix (int n, const EsCudaTables *__restrict__ tables)
{
  return make_double2 (__ldg (&tables->ln_n[n]), __ldg (&tables->inv_n_fix[n]));
}
