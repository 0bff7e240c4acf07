/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the "fast" variant: pair counters in registers for small windows, column histograms or shared counts for the rest. */
#include <stddef.h>

#include "entropy-internal.h"

/* ---- fast: pair counters in registers (k ≤ 7, L ≤ 16) ------------------ */

/* A warp covers 64 input columns, two per lane, and writes the 64 − 4h
 * columns whose windows lie inside them (h = ⌈r/2⌉ halo lanes a side), down
 * a strip of rows. Levels 2i and 2i+1 share one counter c_even + R·c_odd
 * (R = k² + 1, so the pair is recovered exactly), which indexes a table of
 * c_even ln c_even + c_odd ln c_odd: 8 lookups per pixel for 16 levels.
 * A pixel's level becomes a one-hot vector of 8 such counters in two words
 * (looked up in a shared table),
 * shuffles add the k columns of a window row, and the window's counters
 * (16-bit halves of 4 words) slide down the strip: the row that enters is
 * added, the one that entered k steps before is subtracted (a ring of k
 * rows in registers). A block is one warp: every branch around a shuffle
 * then depends on block-uniform values only, and the compiler emits plain
 * SHFL instead of guarding each one for a possibly diverged warp. */
#define FAST_STRIP 64

template <int K>
struct FastShape
{
  static constexpr int R = K / 2;
  static constexpr int HALO = (R + 1) / 2;     /* halo lanes a side */
  static constexpr int OUT_W = 64 - 4 * HALO;  /* output columns a warp */
  static constexpr int RADIX = K * K + 1;
  static constexpr int PAIRS = RADIX * RADIX;
  /* A window row's pair counters fit bytes (n_even + R·n_odd ≤ k·R < 256)
   * for k ≤ 5; for k = 7 rows are counted in nibbles (n ≤ 7) and converted. */
  static constexpr bool BYTES = K * RADIX < 256;
};

/* The one-hot counters of one pixel as a 64-bit lo:hi pair: pair i = level/2
 * in byte i (value 1 or R) or, for nibbles, level l in nibble l. A pixel
 * outside the image counts nothing: a shift of 64 clears both words. */
template <int K>
static __device__ __forceinline__ void
one_hot (uint32_t level, bool inside, uint32_t &lo, uint32_t &hi)
{
  uint32_t pos, value;

  if (FastShape<K>::BYTES)
    {
      pos = (level & 14u) * 4u;
      value = level & 1u ? (uint32_t) FastShape<K>::RADIX : 1u;
    }
  else
    {
      pos = level * 4u;
      value = 1u;
    }
  pos = inside ? pos : 64u;
  /* The clamping funnel shift yields 0 for shifts of 32 or more (and the
   * "negative" ones, which wrap to large unsigned values). */
  lo = __funnelshift_lc (0u, value, pos);
  hi = __funnelshift_lc (0u, value, pos - 32u);
}

/* The counters of the window rows of this lane's two columns 2j (a) and
 * 2j+1 (b), from the one-hots of the even (e) and odd (o) columns. */
template <int K>
static __device__ __forceinline__ void
window_row (uint32_t e, uint32_t o, uint32_t &a, uint32_t &b)
{
  const unsigned all = 0xffffffffu;
  const uint32_t p = e + o;

  if (FastShape<K>::R == 1)
    {
      a = __shfl_up_sync (all, o, 1) + p;
      b = p + __shfl_down_sync (all, e, 1);
    }
  else if (FastShape<K>::R == 2)
    {
      a = __shfl_up_sync (all, p, 1) + p + __shfl_down_sync (all, e, 1);
      b = __shfl_up_sync (all, o, 1) + p + __shfl_down_sync (all, p, 1);
    }
  else
    {
      uint32_t q = __shfl_up_sync (all, p, 1) + p + __shfl_down_sync (all, p, 1);
      a = __shfl_up_sync (all, o, 2) + q;
      b = q + __shfl_down_sync (all, e, 2);
    }
}

/* Adds a row's counters to the window and removes the row that leaves. The
 * window holds pairs 0 and 2 in word 0, 1 and 3 in word 1, 4 and 6 in word
 * 2, 5 and 7 in word 3, one per 16-bit half, times 4: each half is the byte
 * offset of its table entry. Every half ends in 0..4·(k²·R + k²) < 2^16, so
 * the word arithmetic never carries or borrows between halves. */
template <int K>
static __device__ __forceinline__ void
slide (uint32_t win[4], uint32_t in_lo, uint32_t in_hi, uint32_t out_lo, uint32_t out_hi)
{
  if (FastShape<K>::BYTES)
    {
      win[0] += (__byte_perm (in_lo, 0u, 0x4240) - __byte_perm (out_lo, 0u, 0x4240)) * 4u;
      win[1] += (__byte_perm (in_lo, 0u, 0x4341) - __byte_perm (out_lo, 0u, 0x4341)) * 4u;
      win[2] += (__byte_perm (in_hi, 0u, 0x4240) - __byte_perm (out_hi, 0u, 0x4240)) * 4u;
      win[3] += (__byte_perm (in_hi, 0u, 0x4341) - __byte_perm (out_hi, 0u, 0x4341)) * 4u;
      return;
    }
  /* Nibbles: the difference plus 8 stays within 1..15 in every nibble; a
   * byte n_even + 16·n_odd becomes n_even + R·n_odd, less the bias. */
  constexpr uint32_t R = FastShape<K>::RADIX;
  constexpr uint32_t BIAS = (8u + 8u * R) * 0x00010001u;
  const uint32_t d_lo = in_lo + 0x88888888u - out_lo, d_hi = in_hi + 0x88888888u - out_hi;
  const uint32_t halves[4] = { __byte_perm (d_lo, 0u, 0x4240), __byte_perm (d_lo, 0u, 0x4341),
                               __byte_perm (d_hi, 0u, 0x4240), __byte_perm (d_hi, 0u, 0x4341) };
#pragma unroll
  for (int q = 0; q < 4; q++)
    win[q] += (halves[q] + (R - 16u) * ((halves[q] >> 4) & 0x000f000fu) - BIAS) * 4u;
}

/* Σ c ln c of the window: 8 pair lookups (the halves are byte offsets),
 * added as a balanced tree. */
static __device__ __forceinline__ float
pair_sum (const uint32_t win[4], const float *pair)
{
  float p[8];

#pragma unroll
  for (int q = 0; q < 4; q++)
    {
      p[2 * q] = *(const float *) ((const char *) pair + (win[q] & 0xffffu));
      p[2 * q + 1] = *(const float *) ((const char *) pair + (win[q] >> 16));
    }
  return __fadd_rn (__fadd_rn (__fadd_rn (p[0], p[1]), __fadd_rn (p[2], p[3])),
                    __fadd_rn (__fadd_rn (p[4], p[5]), __fadd_rn (p[6], p[7])));
}

/* Two samples of type T as one load: u8 pairs as 16 bits, u16 as 32. */
template <typename T> struct SamplePair;
template <> struct SamplePair<uint8_t> { typedef uint16_t Word; enum { BITS = 8 }; };
template <> struct SamplePair<uint16_t> { typedef uint32_t Word; enum { BITS = 16 }; };

static __device__ __forceinline__ float
entropy_from_sum (float sum, float2 ln_inv)
{
  float h = __fmaf_rn (-sum, ln_inv.y, ln_inv.x);
  return h >= (float) ES_ENTROPY_ZERO_BELOW ? h : 0.0f;
}

/* Output rows [y_first, y_last) of the image, in strips of FAST_STRIP. */
template <int K, typename T>
static __global__ void __launch_bounds__ (32, K == 3 ? 32 : K == 5 ? 24 : 16)
entropy_fast_kernel (const void *__restrict__ in, unsigned in_pitch, int width, int height, EsSampleMap map,
                     const EsCudaTables *__restrict__ tables, void *out, unsigned out_pitch,
                     int y_first, int y_last, int groups)
{
  typedef FastShape<K> S;
  typedef typename SamplePair<T>::Word Word;
  constexpr int R = S::R;
  __shared__ float s_pair[S::PAIRS];
  __shared__ float2 s_ln_inv[K * K + 1];
  /* The one-hot counters of a pixel come from a table: indexed by the
   * sample itself for 8-bit samples (no level arithmetic at all), else by
   * its level; the entry OUTSIDE, zeros, stands for pixels outside the
   * image. On the H100 the sample-indexed table makes the kernel 3–4 % faster
   * than computing the one-hots, despite its bank conflicts on random
   * samples; a level-indexed one, conflict-free, only ties (it still needs
   * the level's multiply, shift and clamp). */
  constexpr bool BY_VALUE = sizeof (T) == 1;
  constexpr uint32_t OUTSIDE = BY_VALUE ? 256 : 16;
  __shared__ uint2 s_hot[OUTSIDE + 1];

  for (int i = threadIdx.x; i < S::PAIRS; i += 32)
    s_pair[i] = tables->pair_f[ES_CUDA_PAIR_OFFSET (K) + i];
  for (int i = threadIdx.x; i <= K * K; i += 32)
    s_ln_inv[i] = tables->ln_inv_f[i];
  for (int i = threadIdx.x; i <= (int) OUTSIDE; i += 32)
    {
      uint2 hot;
      one_hot<K> (BY_VALUE ? es_dev_level ((uint32_t) i, map) : (uint32_t) i, i < (int) OUTSIDE, hot.x, hot.y);
      s_hot[i] = hot;
    }
  __syncthreads ();

  /* One work item (column group × strip) per block. */
  const unsigned item = blockIdx.x;
  const int lane = threadIdx.x;
  const int x = (int) (item % (unsigned) groups) * S::OUT_W - 2 * S::HALO + 2 * lane;  /* even */
  const int strip = (int) (item / (unsigned) groups);
  /* A pair that starts inside the image ends inside the padded row. */
  const bool loads = x >= 0 && x < width;
  const bool second = x + 1 < width;
  const bool writer = lane >= S::HALO && lane < 32 - S::HALO && x >= 0 && x < width;
  const int cols0 = writer ? min (x + R, width - 1) - max (x - R, 0) + 1 : 0;
  const int cols1 = writer ? min (x + 1 + R, width - 1) - max (x + 1 - R, 0) + 1 : 0;
  const float2 full0 = s_ln_inv[K * cols0], full1 = s_ln_inv[K * cols1];
  const int y_begin = y_first + strip * FAST_STRIP;
  const int y_end = min (y_begin + FAST_STRIP, y_last);
  const int steps = y_end - y_begin + 2 * R;
  const Word *column = (const Word *) ((const T *) in + (loads ? x : 0));
  float2 *out_column = (float2 *) out + (writer ? x / 2 : 0);

  /* The rows this lane reads, 0 ≤ e < e_inside, and those it loads, below
   * e_loaded as well (none outside the image): as unsigned compares, one
   * test each also rejects the rows above the image (e < 0). */
  const unsigned e_inside = loads ? (unsigned) height : 0u;
  const unsigned e_loaded = min (e_inside, (unsigned) (y_end + R));

  /* Row e's samples for step s are loaded K steps ahead into ring slot
   * s mod K, so that a load's latency overlaps K rows of work. */
  auto fetch = [&] (int step) -> uint32_t {
    const unsigned e = (unsigned) (y_begin - R + step);
    if (e < e_loaded)
      /* Pitches fit 32 bits (ES_MAX_SIDE): one wide multiply. */
      return __ldg ((const Word *) ((const char *) column + (unsigned long long) e * in_pitch));
    return 0u;
  };
  uint32_t ahead[K];
  uint32_t win0[4] = { 0, 0, 0, 0 }, win1[4] = { 0, 0, 0, 0 };
  uint32_t ring[K][4];
#pragma unroll
  for (int j = 0; j < K; j++)
    {
      ahead[j] = fetch (j);
#pragma unroll
      for (int q = 0; q < 4; q++)
        ring[j][q] = 0;
    }

  for (int base = 0; base < steps; base += K)
    {
#pragma unroll
      for (int j = 0; j < K; j++)
        {
          const int step = base + j;
          if (step >= steps)
            break;
          /* Row e enters; ring[j] holds the row that entered K steps ago. */
          const int e = y_begin - R + step;
          const bool row_in = (unsigned) e < e_inside;
          const uint32_t v = ahead[j];
          ahead[j] = fetch (step + K);

          uint32_t e_lo, e_hi, o_lo, o_hi, a_lo, a_hi, b_lo, b_hi;
          const uint32_t v_even = v & ((1u << SamplePair<T>::BITS) - 1u), v_odd = v >> SamplePair<T>::BITS;
          {
            const uint32_t i_even = BY_VALUE ? v_even : es_dev_level (v_even, map);
            const uint32_t i_odd = BY_VALUE ? v_odd : es_dev_level (v_odd, map);
            const uint2 hot_even = s_hot[row_in ? i_even : OUTSIDE];
            const uint2 hot_odd = s_hot[row_in && second ? i_odd : OUTSIDE];
            e_lo = hot_even.x, e_hi = hot_even.y, o_lo = hot_odd.x, o_hi = hot_odd.y;
          }
          window_row<K> (e_lo, o_lo, a_lo, b_lo);
          window_row<K> (e_hi, o_hi, a_hi, b_hi);
          slide<K> (win0, a_lo, a_hi, ring[j][0], ring[j][1]);
          slide<K> (win1, b_lo, b_hi, ring[j][2], ring[j][3]);
          ring[j][0] = a_lo;
          ring[j][1] = a_hi;
          ring[j][2] = b_lo;
          ring[j][3] = b_hi;

          const int y = e - R;
          if (y >= y_begin && writer)
            {
              float2 li0 = full0, li1 = full1;
              /* y is the same across the warp: a uniform branch, taken only
               * where the top or bottom edge cuts the window. */
              if (y < R || y >= height - R)
                {
                  const int rows = min (y + R, height - 1) - max (y - R, 0) + 1;
                  li0 = s_ln_inv[rows * cols0];
                  li1 = s_ln_inv[rows * cols1];
                }
              /* The pair's second column may lie in the row's padding. */
              float2 h = make_float2 (entropy_from_sum (pair_sum (win0, s_pair), li0),
                                      entropy_from_sum (pair_sum (win1, s_pair), li1));
              *(float2 *) ((char *) out_column + (unsigned long long) (unsigned) y * out_pitch) = h;
            }
        }
    }
}

/* ---- fast, general path ----------------------------------------------------- */

/* Windows above 7×7 or more than 16 levels. Both kernels keep the exact
 * fixed-point sum of the table variants (round(c ln c · 2^19) in uint32) and
 * finish it in double, so they agree bit for bit with log-table-*; they read
 * levels that a quantize pass wrote first. */

/* H from a fixed-point sum, with ln n and 2^-19/n already at hand. */
static __device__ __forceinline__ float
entropy_from_fix_li (uint32_t sum, double2 li)
{
  double h = __fma_rn (-(double) sum, li.y, li.x);
  return h >= ES_ENTROPY_ZERO_BELOW ? (float) h : 0.0f;
}

static __device__ __forceinline__ double2
ln_inv_fix (int n, const EsCudaTables *__restrict__ tables)
{
  return make_double2 (__ldg (&tables->ln_n[n]), __ldg (&tables->inv_n_fix[n]));
}

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

/* -- any L, any window: one histogram per column in shared memory ------------
 *
 * Each thread owns one output column and slides its window's histogram down
 * a strip: per row, the k pixels of the row that enters and the k of the row
 * that leaves, taken in pairs from the same column (equal levels cancel), and
 * the sum moves by differences of the fixed-point table, exact in uint32.
 * The counts are 16-bit in shared memory after the table of differences,
 * level l of thread t at byte 256·l + 4·(t mod 64) + 2·(t / 64): the 32
 * threads of a warp hit 32 banks whatever their levels, and a level's offset
 * is one byte permute. Each count is kept as 4·count, the byte offset of its
 * difference. Rows are read as aligned words, loaded ahead and realigned
 * with a funnel shift. 2k updates a pixel, each a dependent load, store and
 * table load in shared memory: the work grows with k, not with L, and the
 * shared-memory pipe bounds it (Nsight Compute: L1/TEX 74 % busy at k = 31). */
#define COUNTS_BLOCK 128
/* Steps a row's words are loaded ahead: enough updates to cover a load from
 * memory (a few hundred cycles) between issue and use. */
#define COUNTS_PREFETCH(k) ((k) <= 5 ? 4 : (k) <= 9 ? 2 : 1)
#define COUNTS_SMEM_MAX (ES_FAST_LEVELS_MAX * 256 + (ES_CUDA_MAX_COUNT + 1) * 4)

template <int K>
static __global__ void __launch_bounds__ (COUNTS_BLOCK, 6)
entropy_counts_kernel (const uint8_t *__restrict__ lev, unsigned lev_pitch, int width, int height, int levels,
                       const EsCudaTables *__restrict__ tables, void *out, unsigned out_pitch,
                       int y_first, int y_last, int strip_rows, int tiles)
{
  constexpr int R = K / 2, KK = K * K;
  constexpr int UW = (K + 3) / 4;  /* realigned words of a window row */
  constexpr int DWORDS = KK + 1;
  extern __shared__ uint32_t smem[];
  uint32_t *s_diff = smem;  /* D[c] = T[c+1] − T[c], c ≤ k²; D[k²] unused; then the counts */
  const int t = threadIdx.x;

  for (int i = t; i <= KK; i += COUNTS_BLOCK)
    s_diff[i] = i < KK ? __ldg (&tables->clnc_fix[i + 1]) - __ldg (&tables->clnc_fix[i]) : 0u;
  __syncthreads ();

  const int x = (int) (blockIdx.x % (unsigned) tiles) * COUNTS_BLOCK + t;
  const int y_begin = y_first + (int) (blockIdx.x / (unsigned) tiles) * strip_rows;
  if (x >= width || y_begin >= y_last)
    return;
  const int y_end = min (y_begin + strip_rows, y_last);

  /* Counts are kept as 4·count: the byte offset of their D entry. */
  char *const cbase = (char *) (smem + DWORDS) + 4 * (t & 63) + 2 * (t >> 6);
  const char *const dbase = (const char *) s_diff;

  /* Window columns x − R .. x + R, read from the aligned word at wb on. */
  const int bx = x - R;
  const int wb = bx & ~3;
  const unsigned shift = 8u * (unsigned) (bx & 3);
  uint32_t keep[UW];  /* bytes of window columns inside the image */
#pragma unroll
  for (int j = 0; j < UW; j++)
    {
      keep[j] = 0;
#pragma unroll
      for (int b = 0; b < 4; b++)
        if (4 * j + b < K && (unsigned) (bx + 4 * j + b) < (unsigned) width)
          keep[j] |= 0xffu << (8 * b);
    }
  const int cols = min (x + R, width - 1) - max (x - R, 0) + 1;

  /* The aligned words that hold row e's window (zeros for a row outside
   * the image), and the window's levels from them, 4 a word, outside
   * columns as level 0 (masked out of every update). Loads are issued PREFETCH
   * steps before their words are used, so that their latency overlaps the
   * updates of the rows in between. */
  const bool whole = wb >= 0 && wb + 4 * (UW + 1) <= (int) lev_pitch;  /* every word inside the row */
  auto fetch = [&] (int e, uint32_t (&w)[UW + 1]) {
    const uint8_t *row = lev + (size_t) (unsigned) e * lev_pitch;
    const bool inside = (unsigned) e < (unsigned) height;
    if (whole)
      {
        const uint32_t *p = (const uint32_t *) (row + wb);
#pragma unroll
        for (int j = 0; j <= UW; j++)
          w[j] = inside ? __ldg (p + j) : 0u;
      }
    else
#pragma unroll
      for (int j = 0; j <= UW; j++)
        {
          const int a = wb + 4 * j;
          w[j] = inside && (unsigned) a <= lev_pitch - 4u ? __ldg ((const uint32_t *) (row + a)) : 0u;
        }
  };
  auto align = [&] (const uint32_t (&w)[UW + 1], uint32_t (&u)[UW]) {
#pragma unroll
    for (int j = 0; j < UW; j++)
      u[j] = __funnelshift_r (w[j], w[j + 1], shift) & keep[j];
  };
  /* 256 · level of byte i: the level's byte offset in the counts. */
  auto offset = [] (const uint32_t (&u)[UW], int i) -> uint32_t {
    return __byte_perm (u[i >> 2], 0u, 0x4404u | ((unsigned) (i & 3) << 4));
  };
  auto valid = [&] (int i) -> bool { return (keep[i >> 2] >> (8 * (i & 3))) & 1u; };
  auto count = [&] (uint32_t off) -> uint16_t * { return (uint16_t *) (cbase + off); };
  auto diff = [&] (uint32_t c4) -> uint32_t { return *(const uint32_t *) (dbase + c4); };

  for (int l = 0; l < levels; l++)
    *count (256u * l) = 0;
  uint32_t sum = 0;

  auto add_row = [&] (const uint32_t (&u)[UW]) {
#pragma unroll
    for (int i = 0; i < K; i++)
      if (valid (i))
        {
          uint16_t *p = count (offset (u, i));
          const uint32_t c4 = *p;
          *p = (uint16_t) (c4 + 4u);
          sum += diff (c4);
        }
  };
  auto remove_row = [&] (const uint32_t (&u)[UW]) {
#pragma unroll
    for (int i = 0; i < K; i++)
      if (valid (i))
        {
          uint16_t *p = count (offset (u, i));
          const uint32_t c4 = *p;
          *p = (uint16_t) (c4 - 4u);
          sum -= diff (c4 - 4u);
        }
  };
  /* Pixel i of the row that enters and of the row that leaves: with equal
   * levels (d4 = 0) both counts stay and the two differences cancel. Outside
   * columns are level 0 in both rows. */
  auto swap_rows = [&] (const uint32_t (&u_in)[UW], const uint32_t (&u_out)[UW]) {
#pragma unroll
    for (int i = 0; i < K; i++)
      {
        const uint32_t oa = offset (u_in, i), ob = offset (u_out, i);
        uint16_t *pa = count (oa), *pb = count (ob);
        const uint32_t ca4 = *pa, cb4 = *pb;
        const uint32_t d4 = oa != ob ? 4u : 0u;
        *pa = (uint16_t) (ca4 + d4);
        *pb = (uint16_t) (cb4 - d4);
        sum += diff (ca4) - diff (cb4 - d4);
      }
  };

  for (int e = max (y_begin - R, 0); e <= min (y_begin + R, height - 1); e++)
    {
      uint32_t w[UW + 1], u[UW];
      fetch (e, w);
      align (w, u);
      add_row (u);
    }

  const double2 li_body = ln_inv_fix (K * cols, tables);
  float *out_column = es_dev_row_mut<float> (out, out_pitch, 0) + x;
  auto emit = [&] (int y) {
    const bool body = y >= R && y + R < height;
    const double2 li = body ? li_body
                            : ln_inv_fix ((min (y + R, height - 1) - max (y - R, 0) + 1) * cols, tables);
    *(float *) ((char *) out_column + (size_t) (unsigned) y * out_pitch) = entropy_from_fix_li (sum, li);
  };

  /* Step s moves the window from row y_begin + s − 1 to y_begin + s: row
   * y + R enters, row y − R − 1 leaves. Ring slot (s − 1) mod PREFETCH holds
   * their words, loaded PREFETCH steps earlier. */
  constexpr int PREFETCH = COUNTS_PREFETCH (K);
  uint32_t ring_in[PREFETCH][UW + 1], ring_out[PREFETCH][UW + 1];
#pragma unroll
  for (int p = 0; p < PREFETCH; p++)
    {
      fetch (y_begin + 1 + p + R, ring_in[p]);
      fetch (y_begin + p - R, ring_out[p]);
    }
  emit (y_begin);
  const int steps = y_end - y_begin;
  for (int base = 1; base < steps; base += PREFETCH)
    {
#pragma unroll
      for (int p = 0; p < PREFETCH; p++)
        {
          const int s = base + p;
          if (s >= steps)
            break;
          const int y = y_begin + s;
          uint32_t u_in[UW], u_out[UW];
          align (ring_in[p], u_in);
          align (ring_out[p], u_out);
          fetch (y + PREFETCH + R, ring_in[p]);
          fetch (y + PREFETCH - R - 1, ring_out[p]);
          /* Uniform across the block: only strips at the image's top or
           * bottom take the one-sided branches. */
          if (y + R < height && y - R - 1 >= 0)
            swap_rows (u_in, u_out);
          else if (y + R < height)
            add_row (u_in);
          else if (y - R - 1 >= 0)
            remove_row (u_out);
          emit (y);
        }
    }
}

/* ---- launchers ----------------------------------------------------------- */

/* Rows a strip so that the grid is one full wave of resident blocks, each
 * with the same work (a second, partial wave would leave most of the device
 * idle), but no fewer than min_rows. */
static int
strip_rows_for (EsCuda *cuda, const void *kernel, int block, size_t smem, int rows, int tiles, int min_rows)
{
  int per_sm = 0;

  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel, block, smem) != cudaSuccess || per_sm < 1)
    {
      (void) cudaGetLastError ();
      per_sm = 1;
    }
  int per_wave = cuda->sm_count * per_sm / tiles;
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
  const int strip = strip_rows_for (cuda, (const void *) entropy_bins_kernel<NB>, 32, 0, rows, tiles, 16);
  const size_t items = (size_t) tiles * es_cuda_div_up ((size_t) rows, (size_t) strip);

  entropy_bins_kernel<NB><<<(unsigned) items, 32, 0, cuda->stream>>> (
    frame->lev, (unsigned) frame->lev_pitch, frame->width, frame->height, window / 2, cuda->tables, frame->out,
    (unsigned) frame->out_pitch, y_first, y_last, strip, tiles);
}

template <int K>
static void
launch_counts (EsCuda *cuda, const EsCudaFrame *frame, int y_first, int y_last)
{
  if (y_last <= y_first)
    return;
  const int tiles = (int) es_cuda_div_up ((size_t) frame->width, COUNTS_BLOCK);
  const int rows = y_last - y_first;
  const size_t smem = (size_t) frame->levels * 256 + (size_t) (K * K + 1) * 4;
  const int strip = strip_rows_for (cuda, (const void *) entropy_counts_kernel<K>, COUNTS_BLOCK, smem, rows,
                                    tiles, 16);
  const size_t items = (size_t) tiles * es_cuda_div_up ((size_t) rows, (size_t) strip);

  entropy_counts_kernel<K><<<(unsigned) items, COUNTS_BLOCK, smem, cuda->stream>>> (
    frame->lev, (unsigned) frame->lev_pitch, frame->width, frame->height, frame->levels, cuda->tables,
    frame->out, (unsigned) frame->out_pitch, y_first, y_last, strip, tiles);
}

/* Every window size, as a function pointer table and for entropy_init. */
typedef void (*CountsLaunch) (EsCuda *, const EsCudaFrame *, int, int);
static const CountsLaunch counts_launches[] = {
  launch_counts<3>,  launch_counts<5>,  launch_counts<7>,  launch_counts<9>,  launch_counts<11>,
  launch_counts<13>, launch_counts<15>, launch_counts<17>, launch_counts<19>, launch_counts<21>,
  launch_counts<23>, launch_counts<25>, launch_counts<27>, launch_counts<29>, launch_counts<31>,
};
static const void *const counts_kernels[] = {
  (const void *) entropy_counts_kernel<3>,  (const void *) entropy_counts_kernel<5>,
  (const void *) entropy_counts_kernel<7>,  (const void *) entropy_counts_kernel<9>,
  (const void *) entropy_counts_kernel<11>, (const void *) entropy_counts_kernel<13>,
  (const void *) entropy_counts_kernel<15>, (const void *) entropy_counts_kernel<17>,
  (const void *) entropy_counts_kernel<19>, (const void *) entropy_counts_kernel<21>,
  (const void *) entropy_counts_kernel<23>, (const void *) entropy_counts_kernel<25>,
  (const void *) entropy_counts_kernel<27>, (const void *) entropy_counts_kernel<29>,
  (const void *) entropy_counts_kernel<31>,
};

template <int K, typename T>
static void
launch_fast (EsCuda *cuda, const EsCudaFrame *frame, int y_first, int y_last)
{
  int groups = (int) es_cuda_div_up ((size_t) frame->width, FastShape<K>::OUT_W);
  size_t items = (size_t) groups * es_cuda_div_up ((size_t) (y_last - y_first), FAST_STRIP);

  entropy_fast_kernel<K, T><<<(unsigned) items, 32, 0, cuda->stream>>> (
    frame->in, (unsigned) frame->in_pitch, frame->width, frame->height, es_cuda_sample_map (frame), cuda->tables,
    frame->out, (unsigned) frame->out_pitch, y_first, y_last, groups);
}

template <typename T>
static bool
launch_fast_for_window (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last)
{
  switch (window)
    {
    case 3: launch_fast<3, T> (cuda, frame, y_first, y_last); return true;
    case 5: launch_fast<5, T> (cuda, frame, y_first, y_last); return true;
    case 7: launch_fast<7, T> (cuda, frame, y_first, y_last); return true;
    default: return false;
    }
}

/* EsCudaOp.launch_rows: output rows [y_first, y_last). Windows up to 7×7
 * with up to 16 levels take the fast kernel, which quantizes as it loads;
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
  if (levels <= 16 && window <= ES_CUDA_FAST_MAX_WINDOW)
    {
      bool launched = frame->in_format == ES_FORMAT_U8
                        ? launch_fast_for_window<uint8_t> (cuda, frame, window, y_first, y_last)
                        : launch_fast_for_window<uint16_t> (cuda, frame, window, y_first, y_last);
      if (launched)
        {
          ES_CUDA_LAUNCHED (cuda, "fast entropy kernel", error);
          return true;
        }
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
    counts_launches[(window - 3) / 2] (cuda, frame, y_first, y_last);
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

/* 256 levels of 16-bit counts for 128 threads: 64 KiB and the table, more
 * than the default 48 KiB of dynamic shared memory. */
bool
es_cuda_entropy_fast_init (EsCuda *cuda, EsError *error)
{
  for (size_t i = 0; i < sizeof counts_kernels / sizeof counts_kernels[0]; i++)
    ES_CUDA_TRY (cuda, cudaFuncSetAttribute (counts_kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             COUNTS_SMEM_MAX), "shared memory limit", error);
  return true;
}
