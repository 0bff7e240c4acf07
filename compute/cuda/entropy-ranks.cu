/* SPDX-License-Identifier: MIT */
/* The general entropy variant on full 3×3 squares of 8-bit bins: no histogram and no sort, each cell's rank among the equal cells before it. */
#include "entropy-general-internal.h"

#define RANK_ROWS 32 /* the fewest output rows a thread walks down */
static constexpr int K = 3; /* the window's side */

/* With D[r] = T[r + 1] − T[r] (T[c] = round(c ln c · 2^29), D[0] = 0), a
 * bin counted c times adds D[0] + … + D[c − 1] = T[c] over its cells, so
 * Σ_bins T[c] = Σ_cells D[rank], where a cell's rank is the number of cells
 * before it (row by row) with the same bin: the sort kernel's exact
 * fixed-point sum, without counts or a sort. Ranks come from equality
 * compares of packed bytes: a thread computes four neighbouring windows at
 * once, each 32-bit register holding one window cell of the four (bytes
 * x0 + dx … x0 + dx + 3 of a row), and walks down a strip of rows. A
 * row's compares with the rows above it are kept while it stays in the
 * window, so each step down compares only the entering row: 3 pairs
 * within it and 9 with each of the 2 rows above, 21 compares of four
 * windows (against 36 for windows from scratch).
 *
 * A full window's value depends only on its counts, a partition of 9, of
 * which there are 30; so does the multiset of its ranks. Each rank adds a
 * small weight to a byte (a byte-permute of the four windows' ranks is
 * the table lookup, all four at once), the window's sum of weights is a
 * key unique to its partition (checked at compile time), and the block's
 * table of the 30 values, computed once by the finish that resolved
 * windows use (rank_value), turns a key into the stored value. A row of
 * four windows finishes with nine permutes and four shared loads, where
 * it took 36 shared loads and four float64 finishes.
 *
 * The loop is bound by the ALU pipe (ncu: 70 % of its peak, the FMA pipe
 * at 13 %), so what it issues there is what it costs: the compares' adds
 * are multiply-adds by a 1 the compiler cannot see (FMA pipe), the rows
 * turn three at a time so that the window's rows move by renaming, and a
 * row's words load a row ahead. The windows that reach past the image
 * (its first and last rows and columns, and a row's last partial word)
 * are resolved cell by cell by blocks of their own, after one wave of
 * strips: where the edge lanes were resolved by the threads that hold
 * them, their blocks (and first the warps, at 28 % occupancy of 50 %)
 * lagged behind the rest. The same scheme on 5×5 squares (110 compares
 * of four windows a row, 160 registers) took 3.3 ms against the
 * span-counts kernel's 1.08, so 5×5 stays there (PERFORMANCE.md). */

/* The weight of each rank in a window's key, times 4 so that a key is
 * the byte offset of its value in the block's table (rank 8, all nine
 * cells in one bin, adds 4 more, as its byte-permute selector wraps to
 * rank 0). */
static constexpr uint8_t RANK_WEIGHT[8] = { 0, 4, 16, 28, 32, 36, 44, 48 };
static constexpr int N_PARTITIONS = 30; /* of 9 */
static constexpr int N_KEYS = 256;      /* keys are byte offsets below this */

/* The partitions of 9, largest part first, in reverse lexicographic
 * order; each with the key its window's ranks sum to. */
struct RankPartitions {
  uint8_t parts[N_PARTITIONS][K * K]; /* counts, 0 after the last */
  uint8_t key[N_PARTITIONS];
};

static __host__ __device__ constexpr RankPartitions
rank_partitions ()
{
  RankPartitions t{};
  int a[K * K] = { K * K }, parts = 1;

  for (int n = 0; n < N_PARTITIONS; n++)
    {
      int key = 0;
      for (int i = 0; i < parts; i++)
        {
          t.parts[n][i] = (uint8_t) a[i];
          for (int r = 0; r < a[i]; r++)
            key += RANK_WEIGHT[r % 8] + 4 * (r == 8);
        }
      t.key[n] = (uint8_t) key;
      /* The next partition: the last part above 1 less one, the rest
       * spread in parts no larger. */
      int rest = 0;
      while (parts > 0 && a[parts - 1] == 1)
        rest++, parts--;
      if (parts == 0)
        break;
      a[parts - 1]--;
      rest++;
      const int most = a[parts - 1];
      while (rest > most)
        a[parts++] = most, rest -= most;
      a[parts++] = rest;
    }
  return t;
}

static constexpr bool
rank_keys_distinct ()
{
  constexpr RankPartitions t = rank_partitions ();
  for (int i = 0; i < N_PARTITIONS; i++)
    {
      if (t.key[i] >= N_KEYS || t.key[i] % 4 != 0 || t.parts[i][0] == 0)
        return false;
      for (int j = 0; j < i; j++)
        if (t.key[i] == t.key[j])
          return false;
    }
  return true;
}
static_assert (rank_keys_distinct (), "every partition of 9 needs a key of its own, a word offset in a byte");
static __constant__ RankPartitions rank_partition_table = rank_partitions ();

/* 1 in each byte where a and b differ, else 0: four instructions and the
 * add that sums it (a shift and add in one), where counting the equal
 * bytes costs a negation, a shift and a mask more. A rank is the count of
 * compares less the unequal ones. `one` is 1, which the compiler cannot
 * see: its add becomes a multiply-add, on the FMA pipe, which the loop
 * leaves nearly idle while the ALU pipe bounds it. */
static __device__ __forceinline__ uint32_t
unequal_bytes (uint32_t a, uint32_t b, uint32_t one)
{
  const uint32_t x = a ^ b;
  /* Bit 7 of a byte set where the byte of x is nonzero, no carry across. */
  return ((((x & 0x7f7f7f7fu) * one + 0x7f7f7f7fu) | x) & 0x80808080u) >> 7;
}

/* PTX's prmt, whose selector nibbles keep their sign-replicate bit:
 * __byte_perm clears it first, an instruction a lookup. */
static __device__ __forceinline__ uint32_t
permute_bytes (uint32_t a, uint32_t b, uint32_t selector)
{
  uint32_t d;
  asm ("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
}

/* The weights of four ranks (one a byte, each at most 8), four bytes
 * from one permute: the ranks packed into its selector's nibbles pick
 * bytes of the weight table, r + (r >> 4) putting ranks 0 and 1 in byte
 * 0, 2 and 3 in byte 2 (one shift-add). Rank 8 sets only a nibble's
 * sign-replicate bit: the sign of weight 0, which is 0. */
static __device__ __forceinline__ uint32_t
rank_weights (uint32_t r)
{
  constexpr uint32_t low = RANK_WEIGHT[0] | RANK_WEIGHT[1] << 8 | RANK_WEIGHT[2] << 16
                           | (uint32_t) RANK_WEIGHT[3] << 24;
  constexpr uint32_t high = RANK_WEIGHT[4] | RANK_WEIGHT[5] << 8 | RANK_WEIGHT[6] << 16
                            | (uint32_t) RANK_WEIGHT[7] << 24;
  const uint32_t nibbles = __byte_perm (r + (r >> 4), 0, 0x0020);
  return permute_bytes (low, high, nibbles);
}

/* es_entropy_value of a window of n counted cells with fixed-point sum
 * `sum`, with the sort kernel's exact single-bin test. */
static __device__ __forceinline__ float
rank_value (const GeneralParams &p, unsigned long long sum, int n)
{
  if (n == 0)
    return __int_as_float (0x7fc00000);
  if (sum == __ldg (&p.tables->clnc_fine[n]))
    return 0.0f;
  const double e = entropy_from_fine (sum, ln_inv_fine (n, p.tables));
  const uint32_t most = p.bins < (uint32_t) n ? p.bins : (uint32_t) n;
  return p.normalized ? (float) (e / __ldg (&p.tables->ln_n[most])) : es_entropy_store (e, p.unit_scale);
}

/* The window of (x, y) cell by cell: borders through cell_bin, void cells
 * left out of n and of the ranks. */
static __device__ float
rank_value_resolved (const GeneralParams &p, const uint32_t *s_diff, int x, int y)
{
  int bins[K * K];
  int n = 0;
  unsigned long long sum = 0;

#pragma unroll
  for (int i = 0; i < K * K; i++)
    {
      bins[i] = cell_bin (p, NULL, y + i / K - K / 2, x + i % K - K / 2);
      if (bins[i] < 0)
        continue;
      int rank = 0;
#pragma unroll
      for (int j = 0; j < i; j++)
        rank += bins[j] == bins[i];
      sum += s_diff[rank];
      n++;
    }
  return rank_value (p, sum, n);
}

/* A compile-time choice passed to a generic lambda. */
template <bool B> struct RankChoice {
  static constexpr bool value = B;
};

/* The windows that reach past the image, or whose pixel lies in a row's
 * last, partial word: the image's first and last H rows, and on the rows
 * between them its first H columns and those from `right` on. The packed
 * rows leave these pixels to blocks of their own (rank_edge_value). */
struct RankEdges {
  int top, bottom; /* rows [0, top) and [bottom, height) */
  int left, right; /* columns [0, left) and [right, width) of the rows between */
  long long row_pixels, pixels;
};

static __host__ __device__ RankEdges
rank_edges (int width, int height)
{
  constexpr int H = K / 2;
  RankEdges e;
  e.top = min (H, height);
  e.bottom = max (e.top, height - H);
  e.left = min (H, width);
  e.right = max (e.left, min (width - H, width / 4 * 4));
  e.row_pixels = (long long) (e.top + height - e.bottom) * width;
  e.pixels = e.row_pixels + (long long) (e.bottom - e.top) * (e.left + width - e.right);
  return e;
}

/* The value of edge pixel i (of RankEdges.pixels), cell by cell. */
static __device__ void
rank_edge_value (const GeneralParams &p, const uint32_t *s_diff, long long i)
{
  const RankEdges e = rank_edges (p.width, p.height);
  int x, y;

  if (i >= e.pixels)
    return;
  if (i < e.row_pixels)
    {
      const int row = (int) (i / p.width);
      x = (int) (i % p.width);
      y = row < e.top ? row : e.bottom + row - e.top;
    }
  else
    {
      const int columns = e.left + p.width - e.right;
      const long long j = i - e.row_pixels;
      const int column = (int) (j % columns);
      y = e.top + (int) (j / columns);
      x = column < e.left ? column : e.right + column - e.left;
    }
  float *out = (float *) ((char *) p.out + (size_t) y * p.out_pitch);
  out[x] = rank_value_resolved (p, s_diff, x, y);
}

/* Blocks with blockIdx.y < strips each walk a strip of `strip` rows (one
 * wave of them, so that no block waits for another's); the blocks after
 * them compute the edge pixels, one a thread. */
template <bool VectorStores>
static __global__ void __launch_bounds__ (GENERAL_BLOCK, 8)
entropy_ranks_kernel (GeneralParams p, int strip, unsigned strips, uint32_t one)
{
  constexpr int H = K / 2;
  __shared__ uint32_t s_diff[K * K];    /* D[r] = T[r + 1] − T[r] */
  __shared__ float s_value[N_KEYS / 4]; /* a full window's value at its key's byte offset */
  const int t = threadIdx.x;

  if (t < K * K)
    s_diff[t] = (uint32_t) (__ldg (&p.tables->clnc_fine[t + 1]) - __ldg (&p.tables->clnc_fine[t]));
  if (t < N_PARTITIONS)
    {
      unsigned long long sum = 0;
      for (int i = 0; i < K * K && rank_partition_table.parts[t][i] != 0; i++)
        sum += __ldg (&p.tables->clnc_fine[rank_partition_table.parts[t][i]]);
      s_value[rank_partition_table.key[t] / 4] = rank_value (p, sum, K * K);
    }
  __syncthreads ();

  if (blockIdx.y >= strips)
    {
      rank_edge_value (p, s_diff, ((long long) (blockIdx.y - strips) * gridDim.x + blockIdx.x) * GENERAL_BLOCK + t);
      return;
    }
  const RankEdges edges = rank_edges (p.width, p.height);
  const int x0 = 4 * (blockIdx.x * GENERAL_BLOCK + t);
  const int y_first = max (edges.top, (int) blockIdx.y * strip);
  const int y_last = min (edges.bottom, (int) (blockIdx.y + 1) * strip);
  /* The lanes this thread stores: pixels between the edge columns. */
  unsigned lanes = 0;
#pragma unroll
  for (int lane = 0; lane < 4; lane++)
    lanes |= (x0 + lane >= edges.left && x0 + lane < edges.right) << lane;
  if (lanes == 0 || y_first >= y_last)
    return;
  const uint8_t *column = (const uint8_t *) p.in + x0;
  /* The words at x0 − 4 and x0 + 4 where the row has them (0 at the
   * image's sides, whose lanes the edge blocks compute). */
  const bool has_left = x0 > 0, has_right = x0 + 4 < p.width;

  /* cell[r][c]: window row r (0 = top), column offset c − H, for the four
   * windows. rank[r][m][c]: that cell's rank among the cells of its own
   * row before it and of the m rows above it; a window reads rank[r][r]. */
  uint32_t cell[K][K], rank[K][K][K];
#pragma unroll
  for (int r = 0; r < K; r++)
#pragma unroll
    for (int c = 0; c < K; c++)
      {
        cell[r][c] = 0;
#pragma unroll
        for (int m = 0; m < K; m++)
          rank[r][m][c] = 0;
      }

  /* A row's three words, from x0 − 4 on. */
  struct Words {
    uint32_t left, middle, right;
  };
  auto load = [&] (const uint8_t *row_bytes) {
    const uint32_t *words = (const uint32_t *) row_bytes;
    return Words{ has_left ? __ldg (words - 1) : 0u, __ldg (words), has_right ? __ldg (words + 1) : 0u };
  };
  /* Shifts the window down one row and brings a row in as its bottom
   * row: its cells, then its compares within itself and with each row
   * above. */
  auto push = [&] (const Words &w) {
#pragma unroll
    for (int r = 0; r + 1 < K; r++)
#pragma unroll
      for (int c = 0; c < K; c++)
        {
          cell[r][c] = cell[r + 1][c];
#pragma unroll
          for (int m = 0; m <= r; m++)
            rank[r][m][c] = rank[r + 1][m][c];
        }
#pragma unroll
    for (int c = 0; c < K; c++)
      {
        /* Bytes x0 + c − H … x0 + c − H + 3 of the row. */
        const int shift = c - H;
        cell[K - 1][c] = shift < 0    ? __byte_perm (w.left, w.middle, (4 + shift) * 0x1111 + 0x3210)
                         : shift == 0 ? w.middle
                                      : __byte_perm (w.middle, w.right, shift * 0x1111 + 0x3210);
      }
#pragma unroll
    for (int c = 0; c < K; c++)
      {
        uint32_t unequal = 0;
#pragma unroll
        for (int e = 0; e < c; e++)
          unequal += unequal_bytes (cell[K - 1][c], cell[K - 1][e], one);
        rank[K - 1][0][c] = (uint32_t) c * 0x01010101u + unequal * (0u - one);
#pragma unroll
        for (int m = 1; m < K; m++)
          {
#pragma unroll
            for (int e = 0; e < K; e++)
              unequal += unequal_bytes (cell[K - 1][c], cell[K - 1 - m][e], one);
            rank[K - 1][m][c] = (uint32_t) (c + K * m) * 0x01010101u + unequal * (0u - one);
          }
      }
  };

  const uint8_t *next = column + (size_t) (y_first - H) * p.in_pitch;
  for (int row = 0; row < 2 * H; row++, next += p.in_pitch)
    push (load (next));
  /* The window's next row is loaded a row ahead (but for the strip's
   * last row, whose own row is the last to read). */
  Words ahead = load (next);
  float *out = (float *) ((char *) p.out + (size_t) y_first * p.out_pitch) + x0;
  /* One row: its windows' keys, a byte each (only the last cell's rank
   * can reach 8), and their values; all four stored, or the lanes. */
  auto row_values = [&] (auto all_lanes_choice, auto load_ahead_choice) {
    constexpr bool all_lanes = decltype (all_lanes_choice)::value;
    const Words here = ahead;
    if (decltype (load_ahead_choice)::value)
      {
        next += p.in_pitch;
        ahead = load (next);
      }
    push (here);
    uint32_t keys = (rank[K - 1][K - 1][K - 1] >> 1) & 0x04040404u; /* rank 8's 4 */
#pragma unroll
    for (int r = 0; r < K; r++)
#pragma unroll
      for (int c = 0; c < K; c++)
        keys += rank_weights (rank[r][r][c]);
    const float value[4] = { *(const float *) ((const char *) s_value + (keys & 0xffu)),
                             *(const float *) ((const char *) s_value + __byte_perm (keys, 0, 0x4441)),
                             *(const float *) ((const char *) s_value + __byte_perm (keys, 0, 0x4442)),
                             *(const float *) ((const char *) s_value + (keys >> 24)) };
    if (all_lanes && VectorStores)
      *(float4 *) out = make_float4 (value[0], value[1], value[2], value[3]);
    else
#pragma unroll
      for (int lane = 0; lane < 4; lane++)
        if (all_lanes || (lanes >> lane & 1))
          out[lane] = value[lane];
    out = (float *) ((char *) out + p.out_pitch);
  };
  /* Three rows a turn, so that the window's rows move by renaming; the
   * threads of whole words apart from those at the image's sides. */
  auto walk = [&] (auto all_lanes) {
    constexpr RankChoice<true> load_ahead;
    int y = y_first;
    for (; y + 3 < y_last; y += 3)
      {
        row_values (all_lanes, load_ahead);
        row_values (all_lanes, load_ahead);
        row_values (all_lanes, load_ahead);
      }
    for (; y + 1 < y_last; y++)
      row_values (all_lanes, load_ahead);
    row_values (all_lanes, RankChoice<false> ());
  };
  if (lanes == 0xfu)
    walk (RankChoice<true> ());
  else
    walk (RankChoice<false> ());
}

bool
es_cuda_general_ranks_take (const EsJob *job, const EsExtent *extent)
{
  int half_h, half_w;
  const EsEntropyDefinition *d = &job->definition;

  es_window_extent (job, &half_h, &half_w);
  const int side = 2 * half_h + 1;
  /* 8-bit samples that are their own bins (exact, or a levels image), no
   * mask, and a window that is the full square. */
  if (extent->format != ES_FORMAT_U8 || d->mask != NULL || es_definition_is_3d (d)
      || (extent->levels == 0 && d->binning != ES_BINNING_EXACT))
    return false;
  return half_h == half_w && side == K && es_window_pixels (job) == K * K;
}

bool
es_cuda_general_ranks (EsCuda *cuda, GeneralParams *p, bool *ran, EsError *error)
{
  /* Whole 4-byte words of every row; float4 stores where the output's
   * rows allow them (a device array's may not). */
  *ran = false;
  if (((uintptr_t) p->in | p->in_pitch) % 4 != 0)
    return true;
  const bool vector_stores = ((uintptr_t) p->out | p->out_pitch) % 16 == 0;
  const auto kernel = vector_stores ? entropy_ranks_kernel<true> : entropy_ranks_kernel<false>;
  const unsigned columns = (unsigned) es_cuda_div_up (es_cuda_div_up ((size_t) p->width, 4), GENERAL_BLOCK);
  /* One wave of strips at least RANK_ROWS rows tall, then the edge blocks. */
  const int strip = es_cuda_strip_rows (cuda, (const void *) kernel, GENERAL_BLOCK, 0, p->height, (int) columns, 1,
                                        RANK_ROWS);
  const unsigned strips = (unsigned) es_cuda_div_up ((size_t) p->height, (size_t) strip);
  const size_t edge_blocks = es_cuda_div_up ((size_t) rank_edges (p->width, p->height).pixels,
                                             (size_t) columns * GENERAL_BLOCK);
  if (strips + edge_blocks > ES_CUDA_GRID_Y_MAX)
    return true;
  const dim3 grid (columns, strips + (unsigned) edge_blocks);
  kernel<<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p, strip, strips, 1u);
  ES_CUDA_LAUNCHED (cuda, "rank entropy kernel", error);
  es_cuda_note_kernel (cuda, (const void *) kernel, grid, GENERAL_BLOCK, 0, "rank entropy kernel", true);
  *ran = true;
  return true;
}
