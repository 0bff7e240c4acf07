/* SPDX-License-Identifier: MIT */
/* The general entropy variant on windows of more than 32 cells: each thread slides one column's histogram down a strip of rows. */
#include "entropy-general-internal.h"

/* Windows of more than SMALL_CELLS cells slide: each thread owns the histogram of one output
 * column's window and slides it down a strip of rows, per step, for every
 * column span of the window (any shape), the pixel that leaves at the top
 * and the one that enters at the bottom. Consecutive threads take
 * consecutive columns, so a warp's loads of a row coalesce. Σ c ln c moves
 * by exact differences of a table of round(c ln c · 2^32) in uint64, so a
 * long slide accumulates no error, and the number of occupied bins makes a
 * single-bin window exactly 0. The work per pixel is two updates per column
 * span, whatever the number of bins. Counts are 16-bit (a window holds at
 * most 255² = 65025 pixels): in shared memory up to 256 bins, laid out so
 * that a warp's 32 threads hit 32 banks whatever their bins; beyond, in a
 * global scratch buffer, interleaved by thread. With 65536 bins there is no
 * room for the void mark in 16 bits: that case resolves each cell inside
 * the sliding kernel instead. */
#define GENERAL_SHARED_BINS 256
/* Differences of the c ln c table kept in shared memory up to this count. */
#define GENERAL_SHARED_DIFFS 1024
/* Global counts: at least 4096 threads' worth of histograms, up to 512 MiB
 * (exact 16-bit bins: 128 KiB a thread). */
#define GENERAL_SCRATCH_MAX ((size_t) 512 << 20)

template <bool SHARED, bool BINNED>
static __global__ void __launch_bounds__ (GENERAL_BLOCK)
entropy_general_kernel (GeneralParams p)
{
  extern __shared__ unsigned long long smem[];
  unsigned long long *s_diff = smem;  /* up to GENERAL_SHARED_DIFFS */
  uint16_t *s_bin_of = (uint16_t *) (s_diff + (p.n_diffs <= GENERAL_SHARED_DIFFS ? p.n_diffs : 0));
  const bool u8_table = !BINNED && !p.u16 && p.bin_of != NULL;
  char *s_counts = (char *) (s_bin_of + (u8_table ? 256 : 0));
  const int t = threadIdx.x;

  if (p.n_diffs <= GENERAL_SHARED_DIFFS)
    for (int i = t; i < p.n_diffs; i += GENERAL_BLOCK)
      s_diff[i] = __ldg (p.diff + i);
  if (u8_table)
    for (int i = t; i < 256; i += GENERAL_BLOCK)
      s_bin_of[i] = __ldg (p.bin_of + i);
  __syncthreads ();
  const unsigned long long *diff = p.n_diffs <= GENERAL_SHARED_DIFFS ? s_diff : p.diff;
  const uint16_t *bin_of = u8_table ? s_bin_of : p.bin_of;

  /* Shared: bin b of thread t at byte 256·b + es_cuda_count_lane (t). */
  char *const mine = s_counts + es_cuda_count_lane (t);
  const unsigned gt = blockIdx.x * GENERAL_BLOCK + t;
  auto count = [&] (int bin) -> uint16_t * {
    return SHARED ? (uint16_t *) (mine + 256 * bin) : p.counts + (size_t) bin * p.threads + gt;
  };
  if (SHARED)
    for (uint32_t b = 0; b < p.bins; b++)
      *count ((int) b) = 0;
  /* The bin of a window cell, −1 where it counts nowhere. */
  auto bin_at = [&] (int yy, int xx) -> int {
    if (!BINNED)
      return cell_bin (p, bin_of, yy, xx);
    const uint32_t bin
      = p.binned[(size_t) (yy + p.half_h) * p.binned_pitch + (unsigned) (xx + p.half_w)];
    return bin == GENERAL_VOID ? -1 : (int) bin;
  };

  const size_t items = (size_t) p.width * (size_t) p.strips;
  for (size_t item = gt; item < items; item += p.threads)
    {
      const int x = (int) (item % (size_t) p.width);
      const int y_begin = (int) (item / (size_t) p.width) * p.strip;
      const int y_end = min (y_begin + p.strip, p.height);
      int n = 0, occupied = 0, last_n = -1;
      unsigned long long sum = 0;
      double ln_n = 0.0, ln_most = 0.0;

      auto add = [&] (int bin) {
        if (bin < 0)
          return;
        uint16_t *c = count (bin);
        const unsigned was = *c;
        *c = (uint16_t) (was + 1u);
        sum += diff[was];
        n++;
        occupied += was == 0u;
      };
      auto remove = [&] (int bin) {
        if (bin < 0)
          return;
        uint16_t *c = count (bin);
        const unsigned was = *c;
        *c = (uint16_t) (was - 1u);
        sum -= diff[was - 1u];
        n--;
        occupied -= was == 1u;
      };

      for (int s = 0; s < p.n_spans; s++)
        {
          const EsSpan span = p.spans[s];
          for (int dy = span.x0; dy <= span.x1; dy++)
            add (bin_at (y_begin + dy, x + span.dy));
        }
      float *out_column = p.out + x;
      for (int y = y_begin;; y++)
        {
          /* es_entropy_value, with its threshold replaced by the exact
           * test of a single occupied bin; logs only when n changes. */
          float value;
          if (p.mask != NULL && __ldg (p.mask + (size_t) y * p.mask_pitch + x) == 0)
            value = __int_as_float (0x7fc00000);
          else if (n == 0)
            value = __int_as_float (0x7fc00000);
          else if (occupied <= 1)
            value = 0.0f;
          else
            {
              if (n != last_n)
                {
                  const uint32_t most = p.bins < (uint32_t) n ? p.bins : (uint32_t) n;
                  last_n = n;
                  ln_n = log ((double) n);
                  ln_most = log ((double) most);
                }
              double h = ln_n - ldexp ((double) sum, -GENERAL_FIX_BITS) / (double) n;
              value = (float) (p.normalized ? h / ln_most : es_entropy_store (h, p.unit_scale));
            }
          *(float *) ((char *) out_column + (size_t) y * p.out_pitch) = value;
          if (y + 1 >= y_end)
            break;
          for (int s = 0; s < p.n_spans; s++)
            {
              const EsSpan span = p.spans[s];
              remove (bin_at (y + span.x0, x + span.dy));
              add (bin_at (y + 1 + span.x1, x + span.dy));
            }
        }
      /* Leave the histogram empty for the thread's next item. */
      for (int s = 0; s < p.n_spans; s++)
        {
          const EsSpan span = p.spans[s];
          for (int dy = span.x0; dy <= span.x1; dy++)
            remove (bin_at (y_end - 1 + dy, x + span.dy));
        }
    }
}

/* The sliding kernel by where its counts live and whether the frame is binned. */
typedef void (*GeneralKernel) (GeneralParams);
static const GeneralKernel general_kernels[2][2] = {
  { entropy_general_kernel<false, false>, entropy_general_kernel<false, true> },
  { entropy_general_kernel<true, false>, entropy_general_kernel<true, true> },
};

bool
es_cuda_general_slide (EsCuda *cuda, const EsJob *job, GeneralParams *p, EsError *error)
{
  const int cells = es_window_pixels (job);

  /* Counts in shared memory when they fit, else in the global scratch; the
   * frame binned first (borders, mask and bins resolved once a cell, not
   * once a window) when the bins leave room for the void mark. */
  const bool shared = p->bins <= GENERAL_SHARED_BINS, binned = p->bins <= GENERAL_VOID;
  const size_t smem = (p->n_diffs <= GENERAL_SHARED_DIFFS ? (size_t) p->n_diffs * 8 : 0)
                      + (!binned && !p->u16 && p->bin_of != NULL ? 512 : 0) + (shared ? (size_t) p->bins * 256 : 0);
  const GeneralKernel kernel = general_kernels[shared][binned];
  if (binned && !es_cuda_general_bin_frame (cuda, job, p, false, error))
    return false;
  size_t threads
    = (size_t) es_cuda_resident_blocks (cuda, (const void *) kernel, GENERAL_BLOCK, smem, (size_t) 1 << 40)
      * GENERAL_BLOCK;
  if (!shared)
    {
      const size_t per_thread = (size_t) p->bins * sizeof (uint16_t);
      const size_t most = GENERAL_SCRATCH_MAX / per_thread / GENERAL_BLOCK * GENERAL_BLOCK;
      threads = threads < most ? threads : most;
    }

  /* Strips long enough that filling and emptying a window (2 updates a
   * cell) costs no more than sliding it (2 a span and row), short enough to
   * give every thread work. */
  int strip = p->n_spans > 0 ? 2 * cells / p->n_spans : 16;
  strip = strip < 16 ? 16 : strip;
  const size_t fill = es_cuda_div_up ((size_t) p->width * (size_t) p->height, threads);
  if ((size_t) strip < fill)
    strip = (int) fill;
  p->strip = strip < p->height ? strip : p->height;
  p->strips = (int) es_cuda_div_up ((size_t) p->height, (size_t) p->strip);
  const size_t items = (size_t) p->width * (size_t) p->strips;
  if (threads > es_cuda_div_up (items, GENERAL_BLOCK) * GENERAL_BLOCK)
    threads = es_cuda_div_up (items, GENERAL_BLOCK) * GENERAL_BLOCK;
  p->threads = (unsigned) threads;

  if (!shared)
    {
      const size_t bytes = (size_t) p->bins * sizeof (uint16_t) * threads;
      if (!es_cuda_device_reserve (cuda, &cuda->general_counts, bytes, "histogram scratch", error))
        return false;
      /* Every launch starts from empty histograms, whatever a failed one left. */
      ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->general_counts.ptr, 0, bytes, cuda->stream), "histogram scratch",
                   error);
      p->counts = (uint16_t *) cuda->general_counts.ptr;
    }

  kernel<<<(unsigned) (threads / GENERAL_BLOCK), GENERAL_BLOCK, smem, cuda->stream>>> (*p);
  ES_CUDA_LAUNCHED (cuda, "general entropy kernel", error);
  es_cuda_note_kernel (cuda, (const void *) kernel, (unsigned) (threads / GENERAL_BLOCK), GENERAL_BLOCK, smem,
                       "general entropy kernel", true);
  return true;
}

/* Once per device: the kernel's shared-memory limit (256 bins of 128
 * threads' counts, the differences and the 8-bit bin table). */
bool
es_cuda_general_slide_init (EsCuda *cuda, EsError *error)
{
  const int smem = GENERAL_SHARED_DIFFS * 8 + 512 + GENERAL_SHARED_BINS * 256;

  for (int shared = 0; shared < 2; shared++)
    for (int binned = 0; binned < 2; binned++)
      ES_CUDA_TRY (cuda, cudaFuncSetAttribute ((const void *) general_kernels[shared][binned],
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   "shared memory limit", error);
  return true;
}
