/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the "fast" variant's column-histogram kernel (11×11 to 31×31, L ≤ 16): packed column histograms in registers, window histograms slid through warp shuffles. */
#include "entropy-fast-internal.h"

/* Perreault & Hébert's constant-time median filter, with entropy in place of
 * the median. A warp owns 512 columns, 16 consecutive ones a lane, and keeps
 * their histograms over the k rows of the window in registers: 8-bit fields
 * of NB words (4·NB levels), holding 4·count (≤ 124). Per output row the row
 * that enters is added and the one that leaves subtracted, as one-hot words.
 * Each lane then slides a window histogram (16-bit fields of 4·count: the
 * byte offset of the count's table entry) across its own 16 columns, one
 * column histogram in and one out, and sums the 4·NB table entries of every
 * pixel (lanes 1..30 write theirs). The radius is a template parameter, so
 * every column a step needs is a register of the lane or of a neighbour (a
 * shuffle): nothing goes through shared memory but the table lookups. A
 * lane's first window is its first r + 1 columns plus the last r columns of
 * the lane before (one shuffle a word). Windows that the image's edges cut
 * are finished by a second, small pass (entropy_bins_edges_kernel), so the
 * loop has one body, small enough for the instruction cache. Per pixel the
 * work grows with L, not with k: k only sets the shuffles (2r words a lane
 * and row) and the rows a strip starts with
 * (docs/performance/cuda-entropy-default.md, "Column histograms"). */
#define BINS_WARPS 4      /* warps a block, each its own (tile, strip) */
#define BINS_COLS 512     /* column histograms a warp keeps */
#define BINS_LEFT 16      /* halo columns on either side of the outputs (≥ r) */
#define BINS_OUT (BINS_COLS - 2 * BINS_LEFT)

/* Adds the pixel at one-hot position pin (8 · level) to a column histogram and
 * removes the one at pout, 4 each. The clamping funnel shift yields 0 for
 * positions outside the word, the wrapped negative ones included, so a level
 * of 4·NB or more (a column outside the image) counts nowhere. */
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

/* Columns [A, B] of the lane (A > B: none) added into NW 16-bit field
 * pairs: pairs first in the 8-bit fields (2 · 124 fits a byte), then
 * widened. */
template <int A, int B, int NB, int NW>
static __device__ __forceinline__ void
bins_sum_cols (const uint32_t (&col)[16][NB], uint32_t (&sum)[NW])
{
#pragma unroll
  for (int v = 0; v < NW; v++)
    sum[v] = 0;
#pragma unroll
  for (int c = A; c <= B; c += 2)
#pragma unroll
    for (int w = 0; w < NB; w++)
      {
        const uint32_t g = c < B ? col[c][w] + col[c + 1 < 16 ? c + 1 : 15][w] : col[c][w];
        sum[2 * w] += __byte_perm (g, 0u, 0x4140);
        if (2 * w + 1 < NW)
          sum[2 * w + 1 < NW ? 2 * w + 1 : 0] += __byte_perm (g, 0u, 0x4342);
      }
}

/* Windows that the image's edges cut hold fewer than k² cells. The main
 * kernel leaves their fixed-point sums in the output, as bits; this pass
 * turns them into entropy with their own n: one block a row of [y_first,
 * y_last), every column of the first and last r rows of the image, the first
 * and last r columns of the others. */
static __global__ void __launch_bounds__ (128)
entropy_bins_edges_kernel (void *out, unsigned out_pitch, int width, int height, int r,
                           const EsCudaTables *__restrict__ tables, double unit_scale, int y_first)
{
  const int y = y_first + (int) blockIdx.x;
  const int rows = min (y + r, height - 1) - max (y - r, 0) + 1;
  uint32_t *row = (uint32_t *) ((char *) out + (size_t) (unsigned) y * out_pitch);
  auto fix = [&] (int x) {
    const int cols = min (x + r, width - 1) - max (x - r, 0) + 1;
    row[x] = __float_as_uint (
      fast_stored (entropy_from_fix_li (row[x], ln_inv_fix (max (rows * cols, 1), tables)), unit_scale));
  };

  if (rows != 2 * r + 1)
    for (int x = (int) threadIdx.x; x < width; x += (int) blockDim.x)
      fix (x);
  else if ((int) threadIdx.x < 2 * r)
    {
      /* Columns r of the left edge, then the r of the right one that the
       * left ones do not hold already. */
      const int c = (int) threadIdx.x;
      const int x = c < r ? c : width - 2 * r + c;
      if (x < width && (c < r || x >= r))
        fix (x);
    }
}

/* Output rows [y_first, y_last) in strips of strip_rows, items (column tile,
 * strip) one a warp. Levels come from src: bytes (v >> shift) & mask, 4 a
 * word (the levels themselves with 0 and ~0, or 8-bit samples for L a
 * power of two). The window histogram is NW words of two 16-bit fields:
 * 2·NB, or 1 for two levels, whose other word would only ever count 0
 * (half the table lookups). */
template <int NB, int R, int NW>
static __global__ void __launch_bounds__ (32 * BINS_WARPS, 4)
entropy_bins_kernel (const uint8_t *__restrict__ src, unsigned src_pitch, uint32_t shift, uint32_t mask, int width,
                     int height, const EsCudaTables *__restrict__ tables, void *out, unsigned out_pitch,
                     double unit_scale, int y_first, int y_last, int strip_rows, int tiles, int items)
{
  constexpr int K = 2 * R + 1;
  static_assert (NW == 2 * NB || (NB == 1 && NW == 1), "a window word for each level pair");
  static_assert (R >= 1 && R <= BINS_LEFT - 1, "a lane's neighbours hold every column a window needs");
  __shared__ uint32_t s_fix[K * K + 1];

  for (int i = threadIdx.x; i <= K * K; i += blockDim.x)
    s_fix[i] = __ldg (&tables->clnc_fix[i]);
  __syncthreads ();

  const int item = (int) blockIdx.x * BINS_WARPS + (int) (threadIdx.x >> 5);
  if (item >= items)
    return;
  const int lane = (int) (threadIdx.x & 31);
  const int tile = item % tiles;
  const int y_begin = y_first + (item / tiles) * strip_rows;
  const int y_end = min (y_begin + strip_rows, y_last);
  /* This lane's 16 columns start at image column x0, a multiple of 16: the
   * group lies inside the padded row or wholly right of it. */
  const int x0 = tile * BINS_OUT - BINS_LEFT + 16 * lane;
  const bool loads = x0 >= 0 && (unsigned) x0 < src_pitch;
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
  const uint8_t *src_group = src + (ptrdiff_t) (loads ? x0 : 0);
  const uint4 none = make_uint4 (~0u, ~0u, ~0u, ~0u);
  /* The 16 levels of row e (none for a row outside the image). */
  auto fetch = [&] (int e) -> uint4 {
    if (!loads || (unsigned) e >= (unsigned) height)
      return none;
    const uint4 s = __ldg ((const uint4 *) (src_group + (size_t) (unsigned) e * src_pitch));
    return make_uint4 (((s.x >> shift) & mask) | outside.x, ((s.y >> shift) & mask) | outside.y,
                       ((s.z >> shift) & mask) | outside.z, ((s.w >> shift) & mask) | outside.w);
  };

  uint32_t col[16][NB];
#pragma unroll
  for (int q = 0; q < 16; q++)
#pragma unroll
    for (int w = 0; w < NB; w++)
      col[q][w] = 0;
  auto move = [&] (uint4 in, uint4 gone) {
#pragma unroll
    for (int q = 0; q < 16; q++)
      bins_move<NB> (col[q], bins_pos (in, q), bins_pos (gone, q));
  };

  /* The strip's first window rows, each loaded one row ahead of its use. */
  {
    const int e_last = min (y_begin + R, height - 1);
    int e = max (y_begin - R, 0);
    uint4 row = fetch (e);
    for (; e <= e_last; e++)
      {
        const uint4 next = fetch (e + 1);
        move (row, none);
        row = next;
      }
  }

  /* Lanes 0 and 31 hold halo columns and write nothing, but slide windows
   * too: their neighbours are taken round the warp (lane 31's right one is
   * lane 0), so that every lane's window is a sum of 2r + 1 column
   * histograms, whose table entries exist, and no lane branches away from
   * the shuffles. */
  const bool writes = lane >= 1 && lane <= 30 && x0 < width;
  const int left = (lane + 31) & 31, right = (lane + 1) & 31;
  const unsigned all = 0xffffffffu;
  /* The lane's columns whose windows the left or right edge cuts, a bit
   * each: their sums go out as bits, for entropy_bins_edges_kernel. */
  uint32_t edge_columns = 0;
#pragma unroll
  for (int j = 0; j < 16; j++)
    edge_columns |= (x0 + j < R || x0 + j > width - 1 - R) ? 1u << j : 0u;
  const double2 li_full = ln_inv_fix (K * K, tables);
  /* entropy_from_fix_li (sum, li_full) is 0 exactly for sums above this
   * (H falls as the sum grows): an integer compare instead of a double one. */
  uint32_t zero_above = 0;
  for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1)
    if (__fma_rn (-(double) (zero_above | bit), li_full.y, li_full.x) >= ES_ENTROPY_ZERO_BELOW)
      zero_above |= bit;
  float *out_group = es_dev_row_mut<float> (out, out_pitch, 0) + (writes ? x0 : 0);
  /* The rows of the next step, loaded a row ahead. */
  uint4 next_in = fetch (y_begin + 1 + R), next_gone = fetch (y_begin - R);

  /* One output row: 16 windows a lane. */
  auto row_pass = [&] (uint32_t edges, int y) {
    uint32_t win[NW], tail[NW];
    /* The window of column x0: columns 0..r of this lane and 16 − r..15 of
     * the lane before; where the two ranges overlap (r ≥ 8) their common
     * columns are added once. */
    if constexpr (R >= 8)
      {
        uint32_t mid[NW];
        bins_sum_cols<16 - R, R, NB, NW> (col, mid);
        bins_sum_cols<R + 1, 15, NB, NW> (col, tail);
#pragma unroll
        for (int v = 0; v < NW; v++)
          tail[v] = __shfl_sync (all, tail[v] + mid[v], left);
        bins_sum_cols<0, 15 - R, NB, NW> (col, win);
#pragma unroll
        for (int v = 0; v < NW; v++)
          win[v] += mid[v] + tail[v];
      }
    else
      {
        bins_sum_cols<16 - R, 15, NB, NW> (col, tail);
#pragma unroll
        for (int v = 0; v < NW; v++)
          tail[v] = __shfl_sync (all, tail[v], left);
        bins_sum_cols<0, R, NB, NW> (col, win);
#pragma unroll
        for (int v = 0; v < NW; v++)
          win[v] += tail[v];
      }

    float *out_row = (float *) ((char *) out_group + (size_t) (unsigned) y * out_pitch);
    float h[4];
#pragma unroll
    for (int j = 0; j < 16; j++)
      {
        if (j > 0)
          {
            /* Column j + r enters, j − 1 − r leaves: right of the lane's
             * columns they are the next lane's, left of them the last's. */
#pragma unroll
            for (int w = 0; w < NB; w++)
              {
                const int qi = j + R, qo = j - 1 - R;
                const uint32_t c_in = qi < 16 ? col[qi < 16 ? qi : 0][w] : __shfl_sync (all, col[qi >= 16 ? qi - 16 : 0][w], right);
                const uint32_t c_out = qo >= 0 ? col[qo >= 0 ? qo : 0][w] : __shfl_sync (all, col[qo < 0 ? qo + 16 : 0][w], left);
                /* Each byte 4·in + 128 − 4·out stays within 4..252. */
                const uint32_t d = c_in + 0x80808080u - c_out;
                win[2 * w] += __byte_perm (d, 0u, 0x4140) - 0x00800080u;
                if (2 * w + 1 < NW)
                  win[2 * w + 1 < NW ? 2 * w + 1 : 0] += __byte_perm (d, 0u, 0x4342) - 0x00800080u;
              }
          }
        /* The fields are the byte offsets of their table entries. */
        uint32_t sum = 0;
#pragma unroll
        for (int v = 0; v < NW; v++)
          {
            const uint32_t hi = win[v] >> 16, lo = win[v] & 0xffffu;
            sum += *(const uint32_t *) ((const char *) s_fix + lo) + *(const uint32_t *) ((const char *) s_fix + hi);
          }
        const float hj
          = sum <= zero_above ? fast_stored ((float) __fma_rn (-(double) sum, li_full.y, li_full.x), unit_scale) : 0.0f;
        h[j & 3] = edges & (1u << j) ? __uint_as_float (sum) : hj;
        /* The group may end in the row's padding, never past it. */
        if ((j & 3) == 3 && writes)
          *(float4 *) (out_row + j - 3) = make_float4 (h[0], h[1], h[2], h[3]);
      }
  };

  for (int y = y_begin; y < y_end; y++)
    {
      if (y > y_begin)
        {
          move (next_in, next_gone);
          next_in = fetch (y + 1 + R);
          next_gone = fetch (y - R);
        }
      const bool edge_row = y < R || y > height - 1 - R;
      row_pass (edge_row ? 0xffffu : edge_columns, y);
    }
}

template <int NB, int R, int NW>
static void
launch_bins (EsCuda *cuda, const EsCudaFrame *frame, const uint8_t *src, unsigned src_pitch, uint32_t shift,
                  uint32_t mask, int y_first, int y_last)
{
  const void *kernel = (const void *) entropy_bins_kernel<NB, R, NW>;
  const int tiles = (int) es_cuda_div_up ((size_t) frame->width, BINS_OUT);
  const int rows = y_last - y_first;
  const int strip = es_cuda_strip_rows (cuda, kernel, 32 * BINS_WARPS, 0, rows, tiles, BINS_WARPS, 16);
  const int items = tiles * (int) es_cuda_div_up ((size_t) rows, (size_t) strip);

  entropy_bins_kernel<NB, R, NW><<<(unsigned) es_cuda_div_up ((size_t) items, BINS_WARPS), 32 * BINS_WARPS, 0,
                                     cuda->stream>>> (src, src_pitch, shift, mask, frame->width, frame->height,
                                                      cuda->tables, frame->out, (unsigned) frame->out_pitch,
                                                      frame->unit_scale, y_first, y_last, strip, tiles, items);
  entropy_bins_edges_kernel<<<(unsigned) rows, 128, 0, cuda->stream>>> (frame->out, (unsigned) frame->out_pitch,
                                                                         frame->width, frame->height, R,
                                                                         cuda->tables, frame->unit_scale, y_first);
  es_cuda_note_kernel (cuda, kernel, (unsigned) es_cuda_div_up ((size_t) items, BINS_WARPS), 32 * BINS_WARPS, 0,
                       "column-histogram entropy kernel", true);
  es_cuda_note_kernel (cuda, (const void *) entropy_bins_edges_kernel, (unsigned) rows, 128, 0,
                       "column-histogram edges kernel", false);
}

template <int NB, int NW>
static bool
launch_bins_for_window (EsCuda *cuda, const EsCudaFrame *frame, int window, const uint8_t *src, unsigned src_pitch,
                        uint32_t shift, uint32_t mask, int y_first, int y_last)
{
#define BINS_CASE(K)                                                                                               \
  case K: launch_bins<NB, K / 2, NW> (cuda, frame, src, src_pitch, shift, mask, y_first, y_last); return true
  switch (window)
    {
      BINS_CASE (11); BINS_CASE (13); BINS_CASE (15); BINS_CASE (17); BINS_CASE (19); BINS_CASE (21);
      BINS_CASE (23); BINS_CASE (25); BINS_CASE (27); BINS_CASE (29); BINS_CASE (31);
    default: return false;
    }
#undef BINS_CASE
}

bool
es_cuda_entropy_bins_reads_samples (const EsCudaFrame *frame)
{
  const int levels = frame->levels;
  return frame->in_format == ES_FORMAT_U8 && frame->depth == 8 && !frame->is_levels && levels <= 16
         && (levels & (levels - 1)) == 0;
}

bool
es_cuda_entropy_bins_launch (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last)
{
  const int levels = frame->levels;
  const uint8_t *src = frame->lev;
  unsigned src_pitch = (unsigned) frame->lev_pitch;
  uint32_t shift = 0, mask = ~0u;

  if (levels > 16)
    return false;
  if (es_cuda_entropy_bins_reads_samples (frame))
    {
      src = (const uint8_t *) frame->in;
      src_pitch = (unsigned) frame->in_pitch;
      shift = 8;
      while ((1 << (8 - shift)) < levels)
        shift--;
      mask = (uint32_t) (levels - 1) * 0x01010101u;
    }
  if (y_last <= y_first)
    return true;
  if (levels <= 2)
    return launch_bins_for_window<1, 1> (cuda, frame, window, src, src_pitch, shift, mask, y_first, y_last);
  if (levels <= 4)
    return launch_bins_for_window<1, 2> (cuda, frame, window, src, src_pitch, shift, mask, y_first, y_last);
  if (levels <= 8)
    return launch_bins_for_window<2, 4> (cuda, frame, window, src, src_pitch, shift, mask, y_first, y_last);
  return launch_bins_for_window<4, 8> (cuda, frame, window, src, src_pitch, shift, mask, y_first, y_last);
}
