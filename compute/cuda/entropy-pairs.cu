/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the "fast" variant's pair-counter kernel (k ≤ 9, L ≤ 16): four columns a lane, window counters slid by one-hot differences. */
#include <type_traits>

#include "entropy-fast-internal.h"

/* Levels 2i and 2i+1 share one window counter c_even + R·c_odd (R = k² + 1,
 * so the pair is recovered exactly), which indexes a table of
 * c_even ln c_even + c_odd ln c_odd: 8 lookups a pixel for 16 levels, 4 for
 * 8, 2 for 4, 1 for 2 (the pairs of levels ≥ L are always empty, and their
 * table entries 0, so leaving them out of the sum changes no bit). A
 * pixel's window is up to 4 words of two 16-bit counters each, held as
 * 4·counter (the counter's byte offset in the table): pairs 0 and 2 in word
 * 0, 1 and 3 in word 1, 4 and 6 in word 2, 5 and 7 in word 3.
 *
 * A warp covers 128 input columns, four per lane, and writes the 128 − 8h
 * columns whose windows lie inside them (h halo lanes a side), down a strip
 * of rows. Per row, each column's change (the one-hot counters of the row
 * that enters less those of the row that leaves, k rows up) comes from one
 * shared-memory lookup indexed by both levels, 16·in + out; shuffles of
 * partial sums add the k columns of the window row, and one add a word moves
 * each window. The arithmetic is modulo 2^32 over whole words: every counter
 * of a window ends each row in 0 .. 4·k²·R < 2^16, so borrows between the
 * halves of a word cancel. Per pixel and row at 16 levels: one 8-byte
 * lookup, r/2 shuffles a word for the window row, 8 table lookups and 7
 * adds for the sum (Nsight Compute: bound by the shared-memory pipe, which
 * serves the lookups and shuffles; docs/performance/cuda-entropy-default.md).
 *
 * Up to 7×7 the results are those of the two-columns-a-lane kernel this
 * replaced, bit for bit (the same counters, float table and order of
 * adds); at 9×9 those of the column-histogram kernel, which ran it before. */
#define PAIRS_WARPS 8
/* The difference table: entry (in, out) at byte 256·(16·in + out), then
 * one copy for each lane (up to 256 bytes), so that one byte permute of the
 * levels and the lane's offset is the address and a warp's lookup hits
 * distinct banks. */
#define PAIRS_DIFF_BYTES 65536
/* Entry of the one-hot table that counts nothing. */
#define PAIRS_NONE 16u

template <int K, int NP>
struct PairShape
{
  static constexpr int R = K / 2;
  static constexpr int HALO = (R + 3) / 4;     /* halo lanes a side */
  static constexpr int OUT_W = 128 - 8 * HALO;  /* output columns a warp */
  static constexpr int RADIX = K * K + 1;
  static constexpr int PAIRS = RADIX * RADIX;
  /* Up to 7×7 the table holds floats of c ln c + c' ln c', rounded once
   * (es_cuda_tables), and the sum is taken in float as it always was; past
   * 7×7 it holds round(c ln c · 2^19) + round(c' ln c' · 2^19), summed exactly
   * in uint32 and finished in double, as the column-histogram kernel does. */
  static constexpr bool FIX = K > ES_CUDA_FAST_MAX_WINDOW;
  typedef typename std::conditional<FIX, uint32_t, float>::type Entry;
  typedef typename std::conditional<FIX, double2, float2>::type LnInv;
  static constexpr int WORDS = NP == 1 ? 1 : NP <= 4 ? 2 : 4;  /* window words in use */
  /* A column's change, as signed bytes of its fields (4·R fits a byte up
   * to 5×5) or of its fields / 4 (R ≤ 82 up to 9×9), then times 4: 4 or 8
   * bytes a lookup instead of 16, half the shared-memory traffic. */
  static constexpr int SCALE = 4 * RADIX <= 127 ? 1 : 4;
  static constexpr int ENTRY = WORDS <= 2 ? 4 : 8;  /* bytes a copy */
  static constexpr int COPIES = 32;
};

/* How a row's samples become levels: per sample (16-bit samples, levels
 * images, depths below 8), or four 8-bit samples at once by a shift (L a
 * power of two) or by two multiplies. */
enum { LEVELS_EACH, LEVELS_SHIFT, LEVELS_MULTIPLY };

/* Four samples of type T as one load. */
template <typename T> struct SampleQuad;
template <> struct SampleQuad<uint8_t> { typedef uint32_t Word; };
template <> struct SampleQuad<uint16_t> { typedef uint2 Word; };

static __device__ __forceinline__ uint32_t
quad_sample (uint32_t w, int c)
{
  return (w >> (8 * c)) & 0xffu;
}

static __device__ __forceinline__ uint32_t
quad_sample (uint2 w, int c)
{
  return ((c < 2 ? w.x : w.y) >> (16 * (c & 1))) & 0xffffu;
}

/* The levels of four samples, one a byte (each < 16). */
template <int MODE, typename Word>
static __device__ __forceinline__ uint32_t
quad_levels (Word w, EsSampleMap map, uint32_t shift, uint32_t mask)
{
  if constexpr (MODE == LEVELS_SHIFT)
    return (w >> shift) & mask;
  else if constexpr (MODE == LEVELS_MULTIPLY)
    {
      const uint32_t even = (((w & 0x00ff00ffu) * (uint32_t) map.levels) >> 8) & 0x00ff00ffu;
      const uint32_t odd = (((w >> 8) & 0x00ff00ffu) * (uint32_t) map.levels) & 0xff00ff00u;
      return even | odd;
    }
  else
    {
      uint32_t levels = 0;
#pragma unroll
      for (int c = 0; c < 4; c++)
        levels |= es_dev_level (quad_sample (w, c), map) << (8 * c);
      return levels;
    }
}

/* The counter field of pair p for one pixel of level l: 4 or 4·R (none for
 * PAIRS_NONE). Word q holds pairs (q & 1) + 4·(q >> 1) and that + 2. */
static __device__ int
pair_field (uint32_t level, int pair, int radix)
{
  return level < PAIRS_NONE && (int) (level >> 1) == pair ? 4 * (level & 1u ? radix : 1) : 0;
}

static __device__ int
word_pair (int q, int half)
{
  return (q & 1) + 4 * (q >> 1) + 2 * half;
}

/* The window counters of one pixel of level l. */
template <int K>
static __device__ uint4
pair_hot (uint32_t level)
{
  uint32_t w[4];
  for (int q = 0; q < 4; q++)
    w[q] = (uint32_t) pair_field (level, word_pair (q, 0), K * K + 1)
           + ((uint32_t) pair_field (level, word_pair (q, 1), K * K + 1) << 16);
  return make_uint4 (w[0], w[1], w[2], w[3]);
}

/* PRMT with its sign-replicating selectors (selector nibble bit 3). */
static __device__ __forceinline__ uint32_t
prmt (uint32_t a, uint32_t b, uint32_t selector)
{
  uint32_t d;
  asm ("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
}

/* The change of a column as a row of level `in` enters and one of level
 * `out` leaves, in bytes (fields / scale): word q's low field as a signed
 * byte at byte (q & 1) of word q / 2, its high field at byte 2 + (q & 1),
 * less one where the low field is negative. Replicating each byte's sign
 * over the byte above it then gives the 32-bit sum of the two signed fields
 * (and times the scale, those of the change). */
template <int K>
static __device__ uint2
pair_diff_bytes (uint32_t in, uint32_t out, int scale)
{
  uint32_t b[2] = { 0, 0 };
  for (int q = 0; q < 4; q++)
    {
      const int lo
        = (pair_field (in, word_pair (q, 0), K * K + 1) - pair_field (out, word_pair (q, 0), K * K + 1)) / scale;
      const int hi
        = (pair_field (in, word_pair (q, 1), K * K + 1) - pair_field (out, word_pair (q, 1), K * K + 1)) / scale
          - (lo < 0 ? 1 : 0);
      b[q >> 1] |= (((uint32_t) lo & 0xffu) << (8 * (q & 1))) | (((uint32_t) hi & 0xffu) << (16 + 8 * (q & 1)));
    }
  return make_uint2 (b[0], b[1]);
}

/* Word q of a change in bytes. */
static __device__ __forceinline__ uint32_t
diff_word (uint32_t bytes, int q)
{
  return prmt (bytes, 0u, q & 1 ? 0xB391u : 0xA280u);
}

static __device__ __forceinline__ uint32_t
word_of (uint4 v, int q)
{
  return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
}

/* Moves the windows of the lane's four columns by one row: d[c] is column
 * c's change, h its word q. Window c adds the changes of columns c − r ..
 * c + r: those left of the lane are a suffix sum of the lane before, those
 * right of it a prefix sum of the lane after. */
template <int R, int WORDS>
static __device__ __forceinline__ void
slide_windows (uint32_t (&win)[4][4], const uint32_t (&d)[4][4])
{
  const unsigned all = 0xffffffffu;

#pragma unroll
  for (int q = 0; q < WORDS; q++)
    {
      const uint32_t h0 = d[0][q], h1 = d[1][q], h2 = d[2][q], h3 = d[3][q];
      const uint32_t s01 = h0 + h1, s23 = h2 + h3;
      if constexpr (R == 1)
        {
          win[0][q] += __shfl_up_sync (all, h3, 1) + s01;
          win[1][q] += s01 + h2;
          win[2][q] += h1 + s23;
          win[3][q] += s23 + __shfl_down_sync (all, h0, 1);
        }
      else if constexpr (R == 2)
        {
          const uint32_t m = s01 + s23;
          win[0][q] += __shfl_up_sync (all, s23, 1) + (m - h3);
          win[1][q] += __shfl_up_sync (all, h3, 1) + m;
          win[2][q] += m + __shfl_down_sync (all, h0, 1);
          win[3][q] += (m - h0) + __shfl_down_sync (all, s01, 1);
        }
      else if constexpr (R == 3)
        {
          const uint32_t m = s01 + s23;
          win[0][q] += __shfl_up_sync (all, m - h0, 1) + m;
          win[1][q] += __shfl_up_sync (all, s23, 1) + m + __shfl_down_sync (all, h0, 1);
          win[2][q] += __shfl_up_sync (all, h3, 1) + m + __shfl_down_sync (all, s01, 1);
          win[3][q] += m + __shfl_down_sync (all, m - h3, 1);
        }
      else
        {
          static_assert (R == 4, "windows up to 9×9");
          const uint32_t m = s01 + s23;
          win[0][q] += __shfl_up_sync (all, m, 1) + m + __shfl_down_sync (all, h0, 1);
          win[1][q] += __shfl_up_sync (all, m - h0, 1) + m + __shfl_down_sync (all, s01, 1);
          win[2][q] += __shfl_up_sync (all, s23, 1) + m + __shfl_down_sync (all, m - h3, 1);
          win[3][q] += __shfl_up_sync (all, h3, 1) + m + __shfl_down_sync (all, m, 1);
        }
    }
}

/* Σ c ln c of a window: NP pair lookups (the halves are byte offsets),
 * added as the balanced tree of all 8 (whose other entries are 0). */
template <int NP, typename Entry>
static __device__ __forceinline__ Entry
pair_sum (const uint32_t (&win)[4], const Entry *pair)
{
  auto lo = [&] (int q) { return *(const Entry *) ((const char *) pair + (win[q] & 0xffffu)); };
  auto hi = [&] (int q) { return *(const Entry *) ((const char *) pair + (win[q] >> 16)); };

  if constexpr (std::is_integral<Entry>::value)
    {
      /* Exact integers: any order. */
      Entry sum = lo (0);
      if constexpr (NP >= 2)
        sum += lo (1);
      if constexpr (NP >= 4)
        sum += hi (0) + hi (1);
      if constexpr (NP == 8)
        sum += lo (2) + hi (2) + lo (3) + hi (3);
      return sum;
    }
  else if constexpr (NP == 1)
    return lo (0);
  else if constexpr (NP == 2)
    return __fadd_rn (lo (0), lo (1));
  else if constexpr (NP == 4)
    return __fadd_rn (__fadd_rn (lo (0), hi (0)), __fadd_rn (lo (1), hi (1)));
  else
    return __fadd_rn (__fadd_rn (__fadd_rn (lo (0), hi (0)), __fadd_rn (lo (1), hi (1))),
                      __fadd_rn (__fadd_rn (lo (2), hi (2)), __fadd_rn (lo (3), hi (3))));
}

static __device__ __forceinline__ float
entropy_from_sum (float sum, float2 ln_inv)
{
  float h = __fmaf_rn (-sum, ln_inv.y, ln_inv.x);
  return h >= (float) ES_ENTROPY_ZERO_BELOW ? h : 0.0f;
}

static __device__ __forceinline__ float
entropy_from_sum (uint32_t sum, double2 ln_inv)
{
  return entropy_from_fix_li (sum, ln_inv);
}

/* Output rows [y_first, y_last) of the image, in strips of strip_rows; each
 * warp one (column group, strip) item. Two blocks an SM (64 KiB of
 * difference table each) leave up to 128 registers a thread: 116 at 5×5
 * and 16 levels, no spills; at 80 registers (three blocks) it spilled. */
template <int K, int NP, typename T, int MODE>
static __global__ void __launch_bounds__ (32 * PAIRS_WARPS, 2)
entropy_pairs_kernel (const void *__restrict__ in, unsigned in_pitch, int width, int height, EsSampleMap map,
                      uint32_t level_shift, uint32_t level_mask, const EsCudaTables *__restrict__ tables, void *out,
                      unsigned out_pitch, double unit_scale, int y_first, int y_last, int strip_rows, int groups,
                      int items)
{
  typedef PairShape<K, NP> S;
  typedef typename SampleQuad<T>::Word Word;
  constexpr int R = S::R;
  /* The change of a column's counters as row level `in` enters and `out`
   * leaves (a copy for each lane), then the counters of one level, for the
   * rows at the image's top and bottom edges, then the tables of the sum. */
  extern __shared__ uint4 smem4[];
  const char *s_diff = (const char *) smem4;
  uint4 *s_hot = smem4 + PAIRS_DIFF_BYTES / 16;
  typedef typename S::LnInv LnInv;
  LnInv *s_ln_inv = (LnInv *) (s_hot + PAIRS_NONE + 1);
  typename S::Entry *s_pair = (typename S::Entry *) (s_ln_inv + K * K + 1);
  const int t = threadIdx.x;

  for (int i = t; i < S::PAIRS; i += blockDim.x)
    if constexpr (S::FIX)
      s_pair[i] = __ldg (&tables->clnc_fix[i % S::RADIX]) + __ldg (&tables->clnc_fix[i / S::RADIX]);
    else
      s_pair[i] = tables->pair_f[ES_CUDA_PAIR_OFFSET (K) + i];
  for (int i = t; i <= K * K; i += blockDim.x)
    if constexpr (S::FIX)
      s_ln_inv[i] = make_double2 (__ldg (&tables->ln_n[i]), __ldg (&tables->inv_n_fix[i]));
    else
      s_ln_inv[i] = tables->ln_inv_f[i];
  /* Each thread one entry; its copies in an order that spreads the stores
   * of a warp over the banks. */
  for (int i = t; i < 256; i += blockDim.x)
    {
      const uint32_t in_level = (uint32_t) i >> 4, out_level = (uint32_t) i & 15u;
      const uint2 bytes = pair_diff_bytes<K> (in_level, out_level, S::SCALE);
      for (int c0 = 0; c0 < S::COPIES; c0++)
        {
          char *entry = (char *) smem4 + 256 * i + S::ENTRY * ((c0 + i) % S::COPIES);
          if (S::ENTRY == 4)
            *(uint32_t *) entry = bytes.x;
          else
            *(uint2 *) entry = bytes;
        }
    }
  for (int i = t; i <= (int) PAIRS_NONE; i += blockDim.x)
    s_hot[i] = pair_hot<K> ((uint32_t) i);
  __syncthreads ();

  const int item = (int) blockIdx.x * PAIRS_WARPS + (t >> 5);
  if (item >= items)
    return;
  const int lane = t & 31;
  const int x = (item % groups) * S::OUT_W - 4 * S::HALO + 4 * lane;  /* a multiple of 4 */
  const int y_begin = y_first + (item / groups) * strip_rows;
  const int y_end = min (y_begin + strip_rows, y_last);
  const int steps = y_end - y_begin + 2 * R;
  /* Four samples that start inside the image end inside the padded row.
   * Columns outside the image are level 0 in every row, so their changes
   * are nothing; at the edge rows they count as PAIRS_NONE. */
  const bool loads = x >= 0 && x < width;
  uint32_t keep = 0;
#pragma unroll
  for (int c = 0; c < 4; c++)
    keep |= loads && x + c < width ? 0xffu << (8 * c) : 0u;
  const uint32_t none = ~keep & (PAIRS_NONE * 0x01010101u);
  const bool writer = loads && lane >= S::HALO && lane < 32 - S::HALO;
  /* Only lanes whose windows the left or right edge cuts count columns. */
  const bool edge_columns = x - R < 0 || x + 3 + R >= width;
  /* ln n and 1/n of each column's window away from the top and bottom
   * edges (columns right of the image, in the row's padding, take any). */
  auto window_li = [&] (int rows, int c) -> LnInv {
    const int xc = x + c;
    const int cols = edge_columns ? max (min (xc + R, width - 1) - max (xc - R, 0) + 1, 1) : K;
    return s_ln_inv[rows * cols];
  };
  LnInv li_body[4];
#pragma unroll
  for (int c = 0; c < 4; c++)
    li_body[c] = window_li (K, c);
  /* The lane's copy of the difference table, in byte 0 for the permute. */
  const uint32_t copy = (uint32_t) S::ENTRY * ((uint32_t) lane % S::COPIES);

  const char *column = (const char *) in + (loads ? (size_t) x * sizeof (T) : 0);
  float4 *out_column = (float4 *) ((float *) out + (writer ? x : 0));
  /* Rows this lane loads: inside the image and the strip's windows. As
   * unsigned compares, one test also rejects the rows above the image. */
  const unsigned e_loaded = loads ? (unsigned) min (height, y_end + R) : 0u;
  auto fetch = [&] (int step) -> Word {
    const unsigned e = (unsigned) (y_begin - R + step);
    Word w = {};
    if (e < e_loaded)
      /* Pitches fit 32 bits (ES_MAX_SIDE): one wide multiply. */
      w = __ldg ((const Word *) (column + (unsigned long long) e * in_pitch));
    return w;
  };

  /* Row s's samples are loaded K steps ahead into ahead[s mod K]; ring[s mod
   * K] keeps the levels of the row that entered K steps before, which
   * leaves at step s. */
  Word ahead[K];
  uint32_t ring[K];
  uint32_t win[4][4];
#pragma unroll
  for (int j = 0; j < K; j++)
    {
      ahead[j] = fetch (j);
      ring[j] = 0;
    }
#pragma unroll
  for (int c = 0; c < 4; c++)
#pragma unroll
    for (int q = 0; q < 4; q++)
      win[c][q] = 0;

  auto store = [&] (int y, const LnInv (&li)[4]) {
    float h[4];
#pragma unroll
    for (int c = 0; c < 4; c++)
      h[c] = fast_stored (entropy_from_sum (pair_sum<NP> (win[c], s_pair), li[c]), unit_scale);
    /* The group may end in the row's padding, never past it. */
    if (writer)
      *(float4 *) ((char *) out_column + (unsigned long long) (unsigned) y * out_pitch)
        = make_float4 (h[0], h[1], h[2], h[3]);
  };

  /* Step s: row e = y_begin − r + s enters, e − k leaves, and from s = 2r
   * on row e − r is written. Steps s_fast ≤ s < s_end_fast have both rows
   * inside the image and a window clear of its top and bottom edges; runs
   * of k of them go through the branch-free path, which the compiler can
   * schedule as one block; the others (the strip's first k steps, whose
   * window is still filling, the image's top and bottom rows, a strip's
   * last steps) test each case. */
  const int s_fast = max (K, K + R - y_begin);
  const int s_end_fast = min (steps, height + R - y_begin);
  auto step = [&] (auto fast, int j, int s) {
    const uint32_t in_levels = quad_levels<MODE> (ahead[j], map, level_shift, level_mask) & keep;
    const uint32_t out_levels = ring[j];
    ahead[j] = fetch (s + K);
    ring[j] = in_levels;
    const int e = y_begin - R + s;

    uint32_t d[4][4];
    if (decltype (fast)::value
        || ((unsigned) e < (unsigned) height && s >= K && (unsigned) (e - K) < (unsigned) height))
      {
        const uint32_t index = in_levels * 16u + out_levels;  /* per byte, < 256 */
#pragma unroll
        for (int c = 0; c < 4; c++)
          {
            const char *entry = s_diff + __byte_perm (index, copy, 0x5504u + 16u * c);
            if constexpr (S::ENTRY == 8)
              {
                const uint2 v = *(const uint2 *) entry;
#pragma unroll
                for (int q = 0; q < S::WORDS; q++)
                  d[c][q] = diff_word (q < 2 ? v.x : v.y, q) * (uint32_t) S::SCALE;
              }
            else
              {
                const uint32_t v = *(const uint32_t *) entry;
#pragma unroll
                for (int q = 0; q < S::WORDS; q++)
                  d[c][q] = diff_word (v, q) * (uint32_t) S::SCALE;
              }
          }
      }
    else
      {
        const uint32_t a = (unsigned) e < (unsigned) height ? in_levels | none : PAIRS_NONE * 0x01010101u;
        const uint32_t b = s >= K && (unsigned) (e - K) < (unsigned) height ? out_levels | none
                                                                             : PAIRS_NONE * 0x01010101u;
#pragma unroll
        for (int c = 0; c < 4; c++)
          {
            const uint4 v_in = s_hot[__byte_perm (a, 0u, 0x4440u + c)], v_out = s_hot[__byte_perm (b, 0u, 0x4440u + c)];
#pragma unroll
            for (int q = 0; q < S::WORDS; q++)
              d[c][q] = word_of (v_in, q) - word_of (v_out, q);
          }
      }
    slide_windows<R, S::WORDS> (win, d);

    const int y = e - R;
    if (decltype (fast)::value)
      store (y, li_body);
    else if (s >= 2 * R)
      {
        /* y is the same across the warp: a uniform branch. */
        if (y < R || y >= height - R)
          {
            const int rows = min (y + R, height - 1) - max (y - R, 0) + 1;
            LnInv li[4];
#pragma unroll
            for (int c = 0; c < 4; c++)
              li[c] = window_li (rows, c);
            store (y, li);
          }
        else
          store (y, li_body);
      }
  };

  for (int base = 0; base < steps; base += K)
    {
      if (base >= s_fast && base + K <= s_end_fast)
        {
#pragma unroll
          for (int j = 0; j < K; j++)
            step (std::true_type (), j, base + j);
        }
      else
        {
#pragma unroll
          for (int j = 0; j < K; j++)
            if (base + j < steps)
              step (std::false_type (), j, base + j);
        }
    }
}

/* Shared memory of a block: over the default 48 KiB (es_cuda_entropy_pairs_init). */
static constexpr size_t
pairs_smem (int k)
{
  return PAIRS_DIFF_BYTES + (PAIRS_NONE + 1) * 16 + (size_t) (k * k + 1) * (k > ES_CUDA_FAST_MAX_WINDOW ? 16 : 8)
         + (size_t) (k * k + 1) * (k * k + 1) * 4;
}

template <int K, int NP, typename T, int MODE>
static void
launch_pairs (EsCuda *cuda, const EsCudaFrame *frame, int y_first, int y_last)
{
  const void *kernel = (const void *) entropy_pairs_kernel<K, NP, T, MODE>;
  const size_t smem = pairs_smem (K);
  const int groups = (int) es_cuda_div_up ((size_t) frame->width, PairShape<K, NP>::OUT_W);
  const int rows = y_last - y_first;
  /* Strips such that every warp of one full wave has an item. */
  const int strip = es_cuda_strip_rows (cuda, kernel, 32 * PAIRS_WARPS, smem, rows, groups, PAIRS_WARPS, 16);
  const int items = groups * (int) es_cuda_div_up ((size_t) rows, (size_t) strip);
  const int levels = frame->levels;
  uint32_t shift = 8;
  while ((1 << (8 - shift)) < levels)
    shift--;

  entropy_pairs_kernel<K, NP, T, MODE><<<(unsigned) es_cuda_div_up ((size_t) items, PAIRS_WARPS), 32 * PAIRS_WARPS,
                                         smem, cuda->stream>>> (
    frame->in, (unsigned) frame->in_pitch, frame->width, frame->height, es_cuda_sample_map (frame), shift,
    (uint32_t) (levels - 1) * 0x01010101u, cuda->tables, frame->out, (unsigned) frame->out_pitch, frame->unit_scale,
    y_first, y_last, strip, groups, items);
  es_cuda_note_kernel (cuda, kernel, (unsigned) es_cuda_div_up ((size_t) items, PAIRS_WARPS), 32 * PAIRS_WARPS, smem,
                       "pair-counter entropy kernel", true);
}

template <int K, int NP>
static void
launch_pairs_for_samples (EsCuda *cuda, const EsCudaFrame *frame, int y_first, int y_last)
{
  const int levels = frame->levels;

  if (frame->in_format != ES_FORMAT_U8)
    launch_pairs<K, NP, uint16_t, LEVELS_EACH> (cuda, frame, y_first, y_last);
  else if (frame->is_levels || frame->depth != 8)
    launch_pairs<K, NP, uint8_t, LEVELS_EACH> (cuda, frame, y_first, y_last);
  else if ((levels & (levels - 1)) == 0)
    launch_pairs<K, NP, uint8_t, LEVELS_SHIFT> (cuda, frame, y_first, y_last);
  else
    launch_pairs<K, NP, uint8_t, LEVELS_MULTIPLY> (cuda, frame, y_first, y_last);
}

/* The pairs in use: levels 2i and 2i+1 for 2i < L. */
template <int K>
static void
launch_pairs_for_levels (EsCuda *cuda, const EsCudaFrame *frame, int y_first, int y_last)
{
  if (frame->levels <= 2)
    launch_pairs_for_samples<K, 1> (cuda, frame, y_first, y_last);
  else if (frame->levels <= 4)
    launch_pairs_for_samples<K, 2> (cuda, frame, y_first, y_last);
  else if (frame->levels <= 8)
    launch_pairs_for_samples<K, 4> (cuda, frame, y_first, y_last);
  else
    launch_pairs_for_samples<K, 8> (cuda, frame, y_first, y_last);
}

bool
es_cuda_entropy_pairs_launch (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last)
{
  switch (window)
    {
    case 3: launch_pairs_for_levels<3> (cuda, frame, y_first, y_last); return true;
    case 5: launch_pairs_for_levels<5> (cuda, frame, y_first, y_last); return true;
    case 7: launch_pairs_for_levels<7> (cuda, frame, y_first, y_last); return true;
    case 9: launch_pairs_for_levels<9> (cuda, frame, y_first, y_last); return true;
    default: return false;
    }
}

#define PAIRS_KERNELS_OF(K, NP)                                                                                    \
  (const void *) entropy_pairs_kernel<K, NP, uint8_t, LEVELS_SHIFT>,                                               \
    (const void *) entropy_pairs_kernel<K, NP, uint8_t, LEVELS_MULTIPLY>,                                          \
    (const void *) entropy_pairs_kernel<K, NP, uint8_t, LEVELS_EACH>,                                              \
    (const void *) entropy_pairs_kernel<K, NP, uint16_t, LEVELS_EACH>
#define PAIRS_KERNELS(K) PAIRS_KERNELS_OF (K, 1), PAIRS_KERNELS_OF (K, 2), PAIRS_KERNELS_OF (K, 4), PAIRS_KERNELS_OF (K, 8)

/* The difference table alone is 64 KiB: more than the default 48 KiB of
 * dynamic shared memory. */
bool
es_cuda_entropy_pairs_init (EsCuda *cuda, EsError *error)
{
  static const void *const kernels[] = { PAIRS_KERNELS (3), PAIRS_KERNELS (5), PAIRS_KERNELS (7), PAIRS_KERNELS (9) };
  enum { PER_WINDOW = sizeof kernels / sizeof kernels[0] / 4 };

  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
    ES_CUDA_TRY (cuda, cudaFuncSetAttribute (kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int) pairs_smem (3 + 2 * (int) (i / PER_WINDOW))),
                 "shared memory limit", error);
  return true;
}
