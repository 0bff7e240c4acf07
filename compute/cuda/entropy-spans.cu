/* SPDX-License-Identifier: MIT */
/* The general variant's path for up to 16 bins: any window shape, its histogram packed in registers. */
#include <string.h>

#include "entropy-internal.h"

/* Each thread slides the windows of two adjacent output columns down a
 * strip of rows, as the general sliding kernel slides one (per step and
 * column span of the window, the cell that leaves at the top and the one
 * that enters at the bottom), but keeps the 16 counts in registers: 8-bit
 * counters, bin b at bit 8b of four 32-bit words, so a step of a span is
 * eight clamped shifts and four adds, with no memory traffic but the two
 * cells' loads; the two columns share the spans' offsets. An 8-bit counter
 * holds 255: the column spans go into up to SPANS_GROUPS groups of at most
 * 255 cells, each with its own packed histogram, added bytewise into
 * 16-bit counts when a value is due. Σ c ln c is then 16 lookups of
 * round(c ln c · 2^19) in shared memory (the sort kernel's fixed point, so
 * windows up to 961 cells), finished in double as the other table kernels
 * do; one occupied bin is the exact test Σ = T[n]. It reads the frame
 * binned by the general kernel's first pass (borders, mask and binning
 * resolved once a cell; void cells all ones, which match no counter). */
#define SPANS_BLOCK 128
#define SPANS_MAX 128
#define SPANS_GROUPS 4
#define SPANS_GROUP_CELLS 255
#define SPANS_VOID 0xffffu

typedef struct {
  const uint16_t *binned;
  unsigned pitch;  /* in bins */
  int width, height;
  uint32_t bins;
  bool normalized;
  const EsCudaTables *tables;
  float *out;
  unsigned out_pitch;
  int strip, strips;
  unsigned threads;
  int group_end[SPANS_GROUPS];    /* spans [group_end[g − 1], group_end[g]) count into group g */
  int leave[SPANS_MAX];           /* the cell that leaves on a step down, as an offset from the centre */
  int enter[SPANS_MAX];           /* the cell that enters, from the old centre */
  short dx[SPANS_MAX], y0[SPANS_MAX], y1[SPANS_MAX];
} SpansParams;

/* 1 << n, and 0 for n ≥ 32: PTX clamps the shift amount (C leaves it
 * undefined), and the hardware shift does so in one instruction. */
static __device__ __forceinline__ uint32_t
shift_clamped (uint32_t n)
{
  uint32_t r;
  asm ("shl.b32 %0, %1, %2;" : "=r"(r) : "r"(1u), "r"(n));
  return r;
}

/* One cell of bin `in` enters and one of bin `out` leaves: ±1 at bit 8b
 * of the 128-bit histogram h; in word k the shift is 8b − 32k, past the
 * word (0) unless b / 4 = k, and a void cell (b = 0xffff) matches no word.
 * The packed sum is exact integer arithmetic, so it holds 8-bit counts
 * whatever the order of the updates, as long as each count ends ≤ 255. */
static __device__ __forceinline__ void
count_cells (uint32_t (&h)[4], uint32_t in, uint32_t out)
{
#pragma unroll
  for (int k = 0; k < 4; k++)
    h[k] += shift_clamped (in * 8u - 32u * k) - shift_clamped (out * 8u - 32u * k);
}

/* The entropy of a window from its packed histograms: bytes b and b + 2 of
 * each word, summed over the groups, as 16-bit counts (the order of the
 * bins does not matter); es_entropy_value with the exact single-bin test,
 * as the sort kernel. The centre is void only where the mask leaves it out. */
template <int G>
static __device__ __forceinline__ float
window_value (const SpansParams &p, const uint32_t *s_clnc, const uint32_t (&h)[G][4], uint32_t centre_bin)
{
  uint32_t sum = 0u, n = 0u;

#pragma unroll
  for (int k = 0; k < 4; k++)
    {
      uint32_t even = 0u, odd = 0u;
#pragma unroll
      for (int g = 0; g < G; g++)
        {
          even += h[g][k] & 0x00ff00ffu;
          odd += (h[g][k] >> 8) & 0x00ff00ffu;
        }
      const uint32_t c0 = even & 0xffffu, c2 = even >> 16, c1 = odd & 0xffffu, c3 = odd >> 16;
      sum += s_clnc[c0] + s_clnc[c1] + s_clnc[c2] + s_clnc[c3];
      n += c0 + c1 + c2 + c3;
    }
  if (centre_bin == SPANS_VOID || n == 0u)
    return __int_as_float (0x7fc00000);
  if (sum == s_clnc[n])
    return 0.0f;
  const double h_nats = __fma_rn (-(double) sum, __ldg (&p.tables->inv_n_fix[n]), __ldg (&p.tables->ln_n[n]));
  const uint32_t most = p.bins < n ? p.bins : n;
  return (float) (p.normalized ? h_nats / __ldg (&p.tables->ln_n[most]) : h_nats);
}

/* A last odd column repeats its left neighbour's loads and stores nothing. */
template <int G>
static __global__ void __launch_bounds__ (SPANS_BLOCK)
entropy_spans_kernel (const SpansParams p)
{
  __shared__ uint32_t s_clnc[ES_CUDA_MAX_COUNT + 1];
  const int t = threadIdx.x;

  for (int i = t; i <= ES_CUDA_MAX_COUNT; i += SPANS_BLOCK)
    s_clnc[i] = __ldg (&p.tables->clnc_fix[i]);
  __syncthreads ();

  const size_t pairs = ((size_t) p.width + 1) / 2, items = pairs * (size_t) p.strips;
  for (size_t item = blockIdx.x * SPANS_BLOCK + t; item < items; item += p.threads)
    {
      const int x = 2 * (int) (item % pairs);
      const bool right = x + 1 < p.width;
      const int y_begin = (int) (item / pairs) * p.strip;
      const int y_end = min (y_begin + p.strip, p.height);
      const uint16_t *left_centre = p.binned + (size_t) y_begin * p.pitch + (unsigned) x;
      const uint16_t *right_centre = left_centre + (right ? 1 : 0);
      uint32_t hl[G][4], hr[G][4];

#pragma unroll
      for (int g = 0; g < G; g++)
        {
          for (int k = 0; k < 4; k++)
            hl[g][k] = hr[g][k] = 0u;
          for (int s = g ? p.group_end[g - 1] : 0; s < p.group_end[g]; s++)
            for (int dy = p.y0[s]; dy <= p.y1[s]; dy++)
              {
                const int offset = dy * (int) p.pitch + p.dx[s];
                count_cells (hl[g], __ldg (left_centre + offset), SPANS_VOID);
                count_cells (hr[g], __ldg (right_centre + offset), SPANS_VOID);
              }
        }
      float *out = (float *) ((char *) (p.out + x) + (size_t) y_begin * p.out_pitch);
      for (int y = y_begin;; y++)
        {
          out[0] = window_value<G> (p, s_clnc, hl, *left_centre);
          if (right)
            out[1] = window_value<G> (p, s_clnc, hr, *right_centre);
          if (y + 1 >= y_end)
            break;
#pragma unroll
          for (int g = 0; g < G; g++)
            for (int s = g ? p.group_end[g - 1] : 0; s < p.group_end[g]; s++)
              {
                const int enter = p.enter[s], leave = p.leave[s];
                count_cells (hl[g], __ldg (left_centre + enter), __ldg (left_centre + leave));
                count_cells (hr[g], __ldg (right_centre + enter), __ldg (right_centre + leave));
              }
          left_centre += p.pitch;
          right_centre += p.pitch;
          out = (float *) ((char *) out + p.out_pitch);
        }
    }
}

typedef void (*SpansKernel) (SpansParams);
static const SpansKernel spans_kernels[SPANS_GROUPS] = {
  entropy_spans_kernel<1>, entropy_spans_kernel<2>, entropy_spans_kernel<3>, entropy_spans_kernel<4>,
};

/* Packs the column spans into groups of at most 255 cells, tallest first
 * into the first group with room (first fit decreasing); fills p's spans
 * in group order. Returns the number of groups, 0 when they do not fit. */
static int
group_spans (const EsSpan *spans, int n, SpansParams *p)
{
  int order[SPANS_MAX], group_of[SPANS_MAX], room[SPANS_GROUPS], n_groups = 0;

  for (int i = 0; i < n; i++)
    order[i] = i;
  /* Insertion sort by height, tallest first (n ≤ SPANS_MAX). */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && spans[order[j]].x1 - spans[order[j]].x0 > spans[order[j - 1]].x1 - spans[order[j - 1]].x0;
         j--)
      {
        const int swap = order[j];
        order[j] = order[j - 1], order[j - 1] = swap;
      }
  for (int i = 0; i < n; i++)
    {
      const int cells = spans[order[i]].x1 - spans[order[i]].x0 + 1;
      int g = 0;
      while (g < n_groups && room[g] < cells)
        g++;
      if (g == n_groups)
        {
          if (n_groups == SPANS_GROUPS)
            return 0;
          room[n_groups++] = SPANS_GROUP_CELLS;
        }
      room[g] -= cells;
      group_of[order[i]] = g;
    }
  int next = 0;
  for (int g = 0; g < n_groups; g++)
    {
      for (int i = 0; i < n; i++)
        if (group_of[i] == g)
          {
            const EsSpan *s = &spans[i];
            p->dx[next] = (short) s->dy, p->y0[next] = (short) s->x0, p->y1[next] = (short) s->x1;
            p->leave[next] = s->x0 * (int) p->pitch + s->dy;
            p->enter[next] = (s->x1 + 1) * (int) p->pitch + s->dy;
            next++;
          }
      p->group_end[g] = next;
    }
  return n_groups;
}

bool
es_cuda_entropy_spans (EsCuda *cuda, const EsCudaBinnedJob *job, bool *ran, EsError *error)
{
  SpansParams p;

  *ran = false;
  if (job->bins > ES_CUDA_SPANS_MAX_BINS || job->cells > ES_CUDA_MAX_COUNT || job->n_spans > SPANS_MAX
      || job->n_spans < 1)
    return true;
  memset (&p, 0, sizeof p);
  p.pitch = job->binned_pitch;
  const int n_groups = group_spans (job->column_spans, job->n_spans, &p);
  if (n_groups == 0)
    return true;
  /* The centre of output (0, 0) in the padded frame. */
  p.binned = job->binned + (size_t) job->half_h * job->binned_pitch + (unsigned) job->half_w;
  p.width = job->width;
  p.height = job->height;
  p.bins = job->bins;
  p.normalized = job->normalized;
  p.tables = cuda->tables;
  p.out = job->out;
  p.out_pitch = job->out_pitch;

  const SpansKernel kernel = spans_kernels[n_groups - 1];
  size_t threads
    = (size_t) es_cuda_resident_blocks (cuda, (const void *) kernel, SPANS_BLOCK, 0, (size_t) 1 << 40) * SPANS_BLOCK;
  /* Strips as the general sliding kernel's: filling a window costs no more
   * than sliding it, and every thread gets work. */
  int strip = 2 * job->cells / job->n_spans;
  strip = strip < 16 ? 16 : strip;
  const size_t pairs = ((size_t) p.width + 1) / 2;
  const size_t fill = es_cuda_div_up (pairs * (size_t) p.height, threads);
  if ((size_t) strip < fill)
    strip = (int) fill;
  p.strip = strip < p.height ? strip : p.height;
  p.strips = (int) es_cuda_div_up ((size_t) p.height, (size_t) p.strip);
  const size_t items = pairs * (size_t) p.strips;
  if (threads > es_cuda_div_up (items, SPANS_BLOCK) * SPANS_BLOCK)
    threads = es_cuda_div_up (items, SPANS_BLOCK) * SPANS_BLOCK;
  p.threads = (unsigned) threads;

  kernel<<<(unsigned) (threads / SPANS_BLOCK), SPANS_BLOCK, 0, cuda->stream>>> (p);
  ES_CUDA_LAUNCHED (cuda, "packed-span entropy kernel", error);
  *ran = true;
  return true;
}
