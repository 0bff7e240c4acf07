/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the "fast" variant: which kernel runs a job (pair counters in entropy-pairs.cu, column histograms in entropy-bins.cu, shared counts in entropy-counts.cu). */
#include <stddef.h>

#include "entropy-fast-internal.h"

/* ---- launchers ----------------------------------------------------------- */

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
  /* The kernels store bits as es_entropy_store scales nats: a scale pass
   * after them cost 0.23 ms at 8192² on an H200, more than the kernel. */
  EsCudaFrame scaled = *frame;
  scaled.unit_scale = es_entropy_unit_scale (&job->definition);

  /* No columns: nothing to launch (a grid of zero blocks is an error). */
  if (frame->width <= 0)
    return true;
  if (levels <= 16 && es_cuda_entropy_pairs_launch (cuda, &scaled, window, y_first, y_last))
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
  if (!(levels <= 16 && es_cuda_entropy_bins_launch (cuda, &scaled, window, y_first, y_last)))
    es_cuda_entropy_counts_launch (cuda, &scaled, window, y_first, y_last);
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

/* ---- memory model ------------------------------------------------------------- */

/* The pair-counter kernel's shared-memory bytes a pixel (entropy-pairs.cu):
 * one lookup of the column's change (4 bytes up to 4 pairs of levels, else
 * 8), done for the halo lanes' columns too (128 columns a warp for 128 − 8h
 * outputs), and one 4-byte table lookup a pair of levels. */
static double
pairs_shared_bytes (int window, int levels)
{
  const int pairs = levels <= 2 ? 1 : levels <= 4 ? 2 : levels <= 8 ? 4 : 8;
  const int entry = pairs <= 4 ? 4 : 8;
  const int halo_lanes = (window / 2 + 3) / 4;

  return entry * 128.0 / (128 - 8 * halo_lanes) + 4.0 * pairs;
}

/* "fast" and its transfer lessons, as es_cuda_entropy_launch_rows picks the
 * kernel. A border other than clip runs on the frame padded by r
 * (EsCudaOp.frame_pad): the border fill writes the pad (reading the rows
 * beside it from L2) and every kernel runs on the padded frame. The pair
 * counters quantize as they load: the samples once, a float out. Past 9×9
 * or 16 levels the column-histogram kernel reads 8-bit samples itself
 * where L is a power of two; otherwise a quantize pass writes levels that
 * the kernel (column histograms, or shared counts past 16 levels) reads
 * back. A strip's first k − 1 rows are read again by the strip above at
 * its end, a wave later, from DRAM: under 3% at strips of a few hundred
 * rows, left out. */
void
es_cuda_entropy_fast_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const int window = job->window, pad = job->definition.border != ES_BORDER_CLIP ? window / 2 : 0;
  const int levels = extent->levels != 0 ? extent->levels : job->levels;
  const double image = (double) extent->width * extent->height;
  const double frame = (double) (extent->width + 2 * pad) * (extent->height + 2 * pad);
  const double sample = es_model_sample_bytes (extent);

  *traffic = (EsTraffic){ 0, 0, 0 };
  traffic->write_bytes += (frame - image) * sample;
  if (levels <= 16 && window <= 9)
    {
      traffic->read_bytes += frame * sample;
      traffic->shared_bytes = frame * pairs_shared_bytes (window, levels);
    }
  else
    {
      const bool reads_samples = levels <= 16 && extent->format == ES_FORMAT_U8 && extent->depth == 8
                                 && extent->levels == 0 && (levels & (levels - 1)) == 0;
      if (!reads_samples)
        es_model_quantize_pass (extent, frame, traffic);
      traffic->read_bytes += frame;
    }
  traffic->write_bytes += frame * sizeof (float);
}
