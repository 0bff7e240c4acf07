/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the "fast" variant: which kernel runs a job (pair counters in entropy-pairs.cu, column histograms in entropy-bins.cu, shared counts in entropy-counts.cu). */
#include <stddef.h>

#include "entropy-fast-internal.h"

/* ---- launchers ----------------------------------------------------------- */

int
es_cuda_strip_rows (EsCuda *cuda, const void *kernel, int block, size_t smem, int rows, int tiles,
                    int items_per_block, int min_rows)
{
  int per_sm = 0;

  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel, block, smem) != cudaSuccess || per_sm < 1)
    {
      (void) cudaGetLastError ();
      per_sm = 1;
    }
  int per_wave = cuda->sm_count * per_sm * items_per_block / tiles;
  if (per_wave < 1)
    per_wave = 1;
  int strip = (int) es_cuda_div_up ((size_t) rows, (size_t) per_wave);
  return strip < min_rows ? min_rows : strip;
}

/* EsCudaOp.launch_rows: output rows [y_first, y_last). Windows up to 9×9
 * with up to 16 levels take the pair-counter kernel, which quantizes as it loads;
 * the general path reads levels: those of input rows [q_first, q_last) are
 * quantized first. Up to 16 levels it slides packed column histograms (the
 * work per pixel grows with L, not k); more levels count each window pixel
 * into shared memory (the work grows with k, not L). */
bool
es_cuda_entropy_launch_rows (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, int y_first, int y_last,
                             int q_first, int q_last, EsError *error)
{
  const int window = job->window;
  const int levels = frame->levels;

  /* No columns: nothing to launch (a grid of zero blocks is an error). */
  if (frame->width <= 0)
    return true;
  if (levels <= 16 && es_cuda_entropy_pairs_launch (cuda, frame, window, y_first, y_last))
    {
      ES_CUDA_LAUNCHED (cuda, "pair-counter entropy kernel", error);
      return true;
    }

  /* The column-histogram kernel reads 8-bit samples itself where L is a
   * power of two; otherwise levels, which a quantize pass writes first. */
  if (q_last > q_first && !(levels <= 16 && es_cuda_entropy_bins_reads_samples (frame)))
    {
      EsCudaFrame rows = *frame;
      rows.in = (const char *) frame->in + (size_t) q_first * frame->in_pitch;
      rows.lev = frame->lev + (size_t) q_first * frame->lev_pitch;
      rows.height = q_last - q_first;
      if (!es_cuda_quantize_levels (cuda, &rows, error))
        return false;
    }
  if (!(levels <= 16 && es_cuda_entropy_bins_launch (cuda, frame, window, y_first, y_last)))
    es_cuda_entropy_counts_launch (cuda, frame, window, y_first, y_last);
  ES_CUDA_LAUNCHED (cuda, levels <= 16 ? "column-histogram entropy kernel" : "shared-count entropy kernel",
                    error);
  return true;
}

/* The fast variant and its transfer lessons: every row at once. A border
 * mode other than clip is clip on a padded frame (EsCudaOp.frame_pad);
 * bands are not padded, and take the general kernel for it. */
bool
es_cuda_entropy_fast (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  if (job->definition.border != ES_BORDER_CLIP && frame->pad == 0)
    return es_cuda_entropy_general (cuda, frame, job, error);
  return es_cuda_entropy_launch_rows (cuda, frame, job, 0, frame->height, 0, frame->height, error);
}

bool
es_cuda_entropy_fast_init (EsCuda *cuda, EsError *error)
{
  return es_cuda_entropy_counts_init (cuda, error) && es_cuda_entropy_pairs_init (cuda, error);
}
