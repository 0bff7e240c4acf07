/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the "fast" variant: which kernel runs a job, and the column-histogram kernel (k ≥ 11, L ≤ 16). */
#include <stddef.h>

#include "entropy-fast-internal.h"

/* ---- fast, general path ----------------------------------------------------- */

/* Windows above 9×9 or more than 16 levels, on levels that a quantize pass
 * wrote first, with the exact fixed-point sums of entropy-fast-internal.h;
 * the pair-counter kernel (up to 9×9, 16 levels) is in entropy-pairs.cu. */

/* -- L ≤ 16, any window: column histograms in packed counters ----------------
 *
 * Perreault & Hébert's constant-time median filter, with entropy in place of
 * the median. A warp owns 512 columns, 16 consecutive ones a lane, and keeps
 * their histograms over the k rows of the window in registers: 8-bit fields
 * of NB words (4·NB levels), holding 4·count (≤ 124). Per output row the row
 * that enters is added and the one that leaves subtracted, as one-hot words.
 * The histograms go to shared memory; lanes 1..30 then slide a window
 * histogram (16-bit fields of 4·count: the byte offset of the count's table
 * entry) across their own 16 columns, one column histogram in and one out,
 * and sum the 4·NB table entries of every pixel. Per pixel the work grows
 * with L, not with k: k only sets the halo and each lane's first window. */
#define BINS_COLS 512     /* column histograms a warp keeps */
#define BINS_LEFT 16      /* halo columns on either side of the outputs (≥ r) */
#define BINS_OUT (BINS_COLS - 2 * BINS_LEFT)
/* One padding word every 16 columns: lane i storing column 16i + q and lane
 * i reading column 16i + b then both hit 32 banks. */
#define BINS_SLOT(c) ((c) + ((c) >> 4))

/* Adds the pixel at one-hot position pin (8 · level) to a column histogram and
 * removes the one at pout, 4 each. The clamping funnel shift yields 0 for
 * positions outside the word, the wrapped negative ones included, so a level
 * of 4·NB or more (a masked pixel) counts nowhere. */
template <int NB>
static __device__ __forceinline__ void
bins_move (uint32_t (&col)[NB], uint32_t pin, uint32_t pout)
{
#pragma unroll
  for (int w = 0; w < NB; w++)
    col[w] += __funnelshift_lc (0u, 4u, pin - 32u * w) - __funnelshift_lc (0u, 4u, pout - 32u * w);
}

/* 8 · byte q of a 16-byte vector. */
static __device__ __forceinline__ uint32_t
bins_pos (uint4 v, int q)
{
  const uint32_t w = q < 4 ? v.x : q < 8 ? v.y : q < 12 ? v.z : v.w;
  const int s = 8 * (q & 3) - 3;
  return (s < 0 ? w << 3 : w >> s) & 0x7f8u;
}

/* Output rows [y_first, y_last) in strips of strip_rows; one warp a block,
 * one (column tile, strip) a block. */
template <int NB>
static __global__ void __launch_bounds__ (32, 12)
entropy_bins_kernel (const uint8_t *__restrict__ lev, unsigned lev_pitch, int width, int height, int r,
                     const EsCudaTables *__restrict__ tables, void *out, unsigned out_pitch,
                     int y_first, int y_last, int strip_rows, int tiles)
{
  __shared__ uint32_t s_col[NB][BINS_SLOT (BINS_COLS)];
  __shared__ uint32_t s_fix[ES_CUDA_MAX_COUNT + 1];
  const int k = 2 * r + 1;
  const int lane = threadIdx.x;

  for (int i = lane; i <= k * k; i += 32)
    s_fix[i] = __ldg (&tables->clnc_fix[i]);
  __syncwarp ();

  const int tile = (int) (blockIdx.x % (unsigned) tiles);
  const int y_begin = y_first + (int) (blockIdx.x / (unsigned) tiles) * strip_rows;
  if (y_begin >= y_last)
    return;
  const int y_end = min (y_begin + strip_rows, y_last);
  /* This lane's 16 columns start at image column x0, a multiple of 16: the
   * group lies inside the padded row or wholly right of it. */
  const int x0 = tile * BINS_OUT - BINS_LEFT + 16 * lane;
  const bool loads = x0 >= 0 && (unsigned) x0 < lev_pitch;
  /* Bytes of columns outside the image become 0xff: level 255 counts nowhere. */
  uint4 outside;
  {
    uint32_t m[4];
#pragma unroll
    for (int j = 0; j < 4; j++)
      {
        m[j] = 0;
#pragma unroll
        for (int b = 0; b < 4; b++)
          if ((unsigned) (x0 + 4 * j + b) >= (unsigned) width)
            m[j] |= 0xffu << (8 * b);
      }
    outside = make_uint4 (m[0], m[1], m[2], m[3]);
  }
  const uint8_t *lev_group = lev + (ptrdiff_t) (loads ? x0 : 0);
  /* The 16 bytes of row e (all 0xff for a row outside the image). */
  auto fetch = [&] (int e) -> uint4 {
    if (loads && (unsigned) e < (unsigned) height)
      return __ldg ((const uint4 *) (lev_group + (size_t) (unsigned) e * lev_pitch));
    return make_uint4 (~0u, ~0u, ~0u, ~0u);
  };

  uint32_t col[16][NB];
#pragma unroll
  for (int q = 0; q < 16; q++)
#pragma unroll
    for (int w = 0; w < NB; w++)
      col[q][w] = 0;

  auto move = [&] (uint4 in, uint4 gone) {
    in.x |= outside.x, in.y |= outside.y, in.z |= outside.z, in.w |= outside.w;
    gone.x |= outside.x, gone.y |= outside.y, gone.z |= outside.z, gone.w |= outside.w;
#pragma unroll
    for (int q = 0; q < 16; q++)
      bins_move<NB> (col[q], bins_pos (in, q), bins_pos (gone, q));
  };

  const uint4 none = make_uint4 (~0u, ~0u, ~0u, ~0u);
  for (int e = max (y_begin - r, 0); e <= min (y_begin + r, height - 1); e++)
    move (fetch (e), none);

  const double2 li_full = ln_inv_fix (k * k, tables);
  const bool computes = lane >= 1 && lane <= 30;
  float *out_group = es_dev_row_mut<float> (out, out_pitch, 0) + (computes ? x0 : 0);
  /* The rows of the next step, loaded a row ahead. */
  uint4 next_in = fetch (y_begin + 1 + r), next_gone = fetch (y_begin - r);

  for (int y = y_begin; y < y_end; y++)
    {
      if (y > y_begin)
        {
          move (next_in, next_gone);
          next_in = fetch (y + 1 + r);
          next_gone = fetch (y - r);
        }

#pragma unroll
      for (int q = 0; q < 16; q++)
#pragma unroll
        for (int w = 0; w < NB; w++)
          s_col[w][BINS_SLOT (16 * lane + q)] = col[q][w];
      __syncwarp ();

      if (computes)
        {
          /* The window of column 16·lane − 1, in pairs of column histograms
           * (2 · 124 fits a byte), then one step right per output. */
          const int c0 = 16 * lane - 1;
          uint32_t win[2 * NB];
#pragma unroll
          for (int v = 0; v < 2 * NB; v++)
            win[v] = 0;
          for (int c = c0 - r; c <= c0 + r; c += 2)
            {
#pragma unroll
              for (int w = 0; w < NB; w++)
                {
                  uint32_t g = s_col[w][BINS_SLOT (c)];
                  if (c < c0 + r)
                    g += s_col[w][BINS_SLOT (c + 1)];
                  win[2 * w] += __byte_perm (g, 0u, 0x4140);
                  win[2 * w + 1] += __byte_perm (g, 0u, 0x4342);
                }
            }

          const int rows = min (y + r, height - 1) - max (y - r, 0) + 1;
          float *out_row = (float *) ((char *) out_group + (size_t) (unsigned) y * out_pitch);
#pragma unroll 1
          for (int j4 = 0; j4 < 16; j4 += 4)
            {
              float h[4];
#pragma unroll
              for (int j1 = 0; j1 < 4; j1++)
                {
                  const int j = j4 + j1;
                  const int c_in = c0 + 1 + j + r, c_out = c0 + j - r;
#pragma unroll
                  for (int w = 0; w < NB; w++)
                    {
                      /* Each byte 4·in + 128 − 4·out stays within 4..252. */
                      const uint32_t d = s_col[w][BINS_SLOT (c_in)] + 0x80808080u - s_col[w][BINS_SLOT (c_out)];
                      win[2 * w] += __byte_perm (d, 0u, 0x4140) - 0x00800080u;
                      win[2 * w + 1] += __byte_perm (d, 0u, 0x4342) - 0x00800080u;
                    }
                  uint32_t sum = 0;
#pragma unroll
                  for (int v = 0; v < 2 * NB; v++)
                    sum += *(const uint32_t *) ((const char *) s_fix + (win[v] & 0xffffu))
                           + *(const uint32_t *) ((const char *) s_fix + (win[v] >> 16));

                  const int x = x0 + j;
                  double2 li = li_full;
                  if (rows != k || x < r || x + r >= width)
                    {
                      const int cols = min (x + r, width - 1) - max (x - r, 0) + 1;
                      li = ln_inv_fix (max (rows * cols, 1), tables);
                    }
                  h[j1] = entropy_from_fix_li (sum, li);
                }
              /* The group may end in the row's padding, never past it. */
              if (x0 < width)
                *(float4 *) (out_row + j4) = make_float4 (h[0], h[1], h[2], h[3]);
            }
        }
      __syncwarp ();
    }
}

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

template <int NB>
static void
launch_bins (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last)
{
  if (y_last <= y_first)
    return;
  const int tiles = (int) es_cuda_div_up ((size_t) frame->width, BINS_OUT);
  const int rows = y_last - y_first;
  const int strip = es_cuda_strip_rows (cuda, (const void *) entropy_bins_kernel<NB>, 32, 0, rows, tiles, 1, 16);
  const size_t items = (size_t) tiles * es_cuda_div_up ((size_t) rows, (size_t) strip);

  entropy_bins_kernel<NB><<<(unsigned) items, 32, 0, cuda->stream>>> (
    frame->lev, (unsigned) frame->lev_pitch, frame->width, frame->height, window / 2, cuda->tables, frame->out,
    (unsigned) frame->out_pitch, y_first, y_last, strip, tiles);
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

  if (q_last > q_first)
    {
      EsCudaFrame rows = *frame;
      rows.in = (const char *) frame->in + (size_t) q_first * frame->in_pitch;
      rows.lev = frame->lev + (size_t) q_first * frame->lev_pitch;
      rows.height = q_last - q_first;
      if (!es_cuda_quantize_levels (cuda, &rows, error))
        return false;
    }
  if (levels <= 4)
    launch_bins<1> (cuda, frame, window, y_first, y_last);
  else if (levels <= 8)
    launch_bins<2> (cuda, frame, window, y_first, y_last);
  else if (levels <= 16)
    launch_bins<4> (cuda, frame, window, y_first, y_last);
  else
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
