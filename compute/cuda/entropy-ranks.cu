/* SPDX-License-Identifier: MIT */
/* The general entropy variant on full 3×3 squares of 8-bit bins: no histogram and no sort, each cell's rank among the equal cells before it. */
#include "entropy-general-internal.h"

#define RANK_ROWS 32 /* output rows a thread walks down */
static constexpr int K = 3; /* the window's side */

/* With D[r] = T[r + 1] − T[r] (T[c] = round(c ln c · 2^19), D[0] = 0), a
 * bin counted c times adds D[0] + … + D[c − 1] = T[c] over its cells, so
 * Σ_bins T[c] = Σ_cells D[rank], where a cell's rank is the number of cells
 * before it (row by row) with the same bin: the sort kernel's exact
 * fixed-point sum, without counts or a sort. Ranks come from equality
 * compares of packed bytes: a thread computes four neighbouring windows at
 * once, each 32-bit register holding one window cell of the four (bytes
 * x0 + dx … x0 + dx + 3 of a row), and walks down RANK_ROWS rows. A row's
 * compares with the rows above it are kept while it stays in the window,
 * so each step down compares only the entering row: 3 pairs within it
 * and 9 with each of the 2 rows above, 21 compares of four windows
 * (against 36 for windows from scratch). Windows that reach past the
 * image resolve each cell (cell_bin) and compare pairs one by one.
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
 * Only the lanes whose windows leave the image take that path: a warp
 * that resolved its whole edge column every row held its block (and the
 * occupancy, 28 % of 50 %) back. The same scheme on 5×5 squares (110
 * compares of four windows a row, 160 registers) took 3.3 ms against the
 * span-counts kernel's 1.08, so 5×5 stays there (PERFORMANCE.md). */

/* The weight of each rank in a window's key (rank 8, all nine cells in
 * one bin, adds 1 more, as its byte-permute selector wraps to rank 0). */
static constexpr uint8_t RANK_WEIGHT[8] = { 0, 1, 4, 7, 8, 9, 11, 12 };
static constexpr int N_PARTITIONS = 30; /* of 9 */
static constexpr int N_KEYS = 64;       /* keys are below this */

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
            key += RANK_WEIGHT[r % 8] + (r == 8);
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
      if (t.key[i] >= N_KEYS || t.parts[i][0] == 0)
        return false;
      for (int j = 0; j < i; j++)
        if (t.key[i] == t.key[j])
          return false;
    }
  return true;
}
static_assert (rank_keys_distinct (), "every partition of 9 needs a key of its own");
static __constant__ RankPartitions rank_partition_table = rank_partitions ();

/* 1 in each byte where a and b differ, else 0: four instructions and the
 * add that sums it (a shift and add in one), where counting the equal
 * bytes costs a negation, a shift and a mask more. A rank is the count of
 * compares less the unequal ones. */
static __device__ __forceinline__ uint32_t
unequal_bytes (uint32_t a, uint32_t b)
{
  const uint32_t x = a ^ b;
  /* Bit 7 of a byte set where the byte of x is nonzero, no carry across. */
  return ((((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x) & 0x80808080u) >> 7;
}

/* The weights of four ranks (one a byte, each below 8 unless `wrap`),
 * four bytes from one permute: the ranks packed into its selector's
 * nibbles pick bytes of the weight table. */
static __device__ __forceinline__ uint32_t
rank_weights (uint32_t ranks, bool wrap)
{
  constexpr uint32_t low = RANK_WEIGHT[0] | RANK_WEIGHT[1] << 8 | RANK_WEIGHT[2] << 16
                           | (uint32_t) RANK_WEIGHT[3] << 24;
  constexpr uint32_t high = RANK_WEIGHT[4] | RANK_WEIGHT[5] << 8 | RANK_WEIGHT[6] << 16
                            | (uint32_t) RANK_WEIGHT[7] << 24;
  const uint32_t r = wrap ? ranks & 0x07070707u : ranks;
  const uint32_t nibbles = __byte_perm (r | r >> 4, 0, 0x0020);
  return __byte_perm (low, high, nibbles);
}

/* es_entropy_value of a window of n counted cells with fixed-point sum
 * `sum`, with the sort kernel's exact single-bin test. */
static __device__ __forceinline__ float
rank_value (const GeneralParams &p, uint32_t sum, int n)
{
  if (n == 0)
    return __int_as_float (0x7fc00000);
  if (sum == __ldg (&p.tables->clnc_fix[n]))
    return 0.0f;
  const double e = __fma_rn (-(double) sum, __ldg (&p.tables->inv_n_fix[n]), __ldg (&p.tables->ln_n[n]));
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
  uint32_t sum = 0;

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

static __global__ void __launch_bounds__ (GENERAL_BLOCK, 8)
entropy_ranks_kernel (GeneralParams p, bool vector_stores)
{
  constexpr int H = K / 2;
  __shared__ uint32_t s_diff[K * K]; /* D[r] = T[r + 1] − T[r] */
  __shared__ float s_value[N_KEYS];  /* a full window's value by its key */
  const int t = threadIdx.x;

  if (t < K * K)
    s_diff[t] = __ldg (&p.tables->clnc_fix[t + 1]) - __ldg (&p.tables->clnc_fix[t]);
  if (t < N_PARTITIONS)
    {
      uint32_t sum = 0;
      for (int i = 0; i < K * K && rank_partition_table.parts[t][i] != 0; i++)
        sum += __ldg (&p.tables->clnc_fix[rank_partition_table.parts[t][i]]);
      s_value[rank_partition_table.key[t]] = rank_value (p, sum, K * K);
    }
  __syncthreads ();

  const int x0 = 4 * (blockIdx.x * GENERAL_BLOCK + t);
  if (x0 >= p.width)
    return;
  const uint8_t *column = (const uint8_t *) p.in + x0;
  /* The words at x0 − 4 and x0 + 4 where the row has them (0 at the
   * image's sides, where the lanes they feed are resolved instead). */
  const bool has_left = x0 > 0, has_right = x0 + 4 < p.width;
  /* Lanes whose windows lie inside the image's columns. */
  unsigned inside_lanes = 0;
#pragma unroll
  for (int lane = 0; lane < 4; lane++)
    inside_lanes |= (x0 + lane - H >= 0 && x0 + lane + H < p.width) << lane;

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

  /* Shifts the window down one row and brings image row `row` in as its
   * bottom row: its cells, then its compares within itself and with each
   * row above. */
  auto push = [&] (int row) {
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
    const uint32_t *words = (const uint32_t *) (column + (size_t) row * p.in_pitch);
    const uint32_t left = has_left ? __ldg (words - 1) : 0u, middle = __ldg (words);
    const uint32_t right = has_right ? __ldg (words + 1) : 0u;
#pragma unroll
    for (int c = 0; c < K; c++)
      {
        /* Bytes x0 + c − H … x0 + c − H + 3 of the row. */
        const int shift = c - H;
        cell[K - 1][c] = shift < 0    ? __byte_perm (left, middle, (4 + shift) * 0x1111 + 0x3210)
                         : shift == 0 ? middle
                                      : __byte_perm (middle, right, shift * 0x1111 + 0x3210);
      }
#pragma unroll
    for (int c = 0; c < K; c++)
      {
        uint32_t unequal = 0;
#pragma unroll
        for (int e = 0; e < c; e++)
          unequal += unequal_bytes (cell[K - 1][c], cell[K - 1][e]);
        rank[K - 1][0][c] = (uint32_t) c * 0x01010101u - unequal;
#pragma unroll
        for (int m = 1; m < K; m++)
          {
#pragma unroll
            for (int e = 0; e < K; e++)
              unequal += unequal_bytes (cell[K - 1][c], cell[K - 1 - m][e]);
            rank[K - 1][m][c] = (uint32_t) (c + K * m) * 0x01010101u - unequal;
          }
      }
  };

  for (int y_begin = blockIdx.y * RANK_ROWS; y_begin < p.height; y_begin += gridDim.y * RANK_ROWS)
    {
      bool warm = false;
      for (int y = y_begin; y < min (y_begin + RANK_ROWS, p.height); y++)
        {
          float value[4];
          /* Rows whose windows lie inside the image: the packed windows,
           * then the lanes at the image's sides resolved. */
          const bool rows_inside = y >= H && y + H < p.height;
          if (rows_inside)
            {
              if (!warm)
#pragma unroll 1
                for (int row = y - H; row < y + H; row++)
                  push (row);
              warm = true;
              push (y + H);
              /* The four windows' keys, a byte each; only the last
               * cell's rank can reach 8. */
              uint32_t keys = (rank[K - 1][K - 1][K - 1] >> 3) & 0x01010101u;
#pragma unroll
              for (int r = 0; r < K; r++)
#pragma unroll
                for (int c = 0; c < K; c++)
                  keys += rank_weights (rank[r][r][c], r == K - 1 && c == K - 1);
#pragma unroll
              for (int lane = 0; lane < 4; lane++)
                value[lane] = s_value[keys >> (8 * lane) & 0xffu];
            }
          else
            warm = false;
          if (!rows_inside || inside_lanes != 0xfu)
#pragma unroll 1
            for (int lane = 0; lane < 4; lane++)
              if ((!rows_inside || !(inside_lanes >> lane & 1)) && x0 + lane < p.width)
                value[lane] = rank_value_resolved (p, s_diff, x0 + lane, y);
          float *out = (float *) ((char *) p.out + (size_t) y * p.out_pitch) + x0;
          if (vector_stores && x0 + 4 <= p.width)
            *(float4 *) out = make_float4 (value[0], value[1], value[2], value[3]);
          else
#pragma unroll
            for (int lane = 0; lane < 4; lane++)
              if (x0 + lane < p.width)
                out[lane] = value[lane];
        }
    }
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
es_cuda_general_ranks (EsCuda *cuda, const EsJob *job, GeneralParams *p, EsError *error)
{
  /* Whole 4-byte words of every row; float4 stores where the output's
   * rows allow them (a device array's may not). */
  if (((uintptr_t) p->in | p->in_pitch) % 4 != 0)
    return es_cuda_general_sort (cuda, job, p, error);
  const bool vector_stores = ((uintptr_t) p->out | p->out_pitch) % 16 == 0;
  const dim3 grid ((unsigned) es_cuda_div_up (es_cuda_div_up ((size_t) p->width, 4), GENERAL_BLOCK),
                   es_cuda_grid_y (es_cuda_div_up ((size_t) p->height, RANK_ROWS)));
  entropy_ranks_kernel<<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p, vector_stores);
  ES_CUDA_LAUNCHED (cuda, "rank entropy kernel", error);
  es_cuda_note_kernel (cuda, (const void *) entropy_ranks_kernel, grid, GENERAL_BLOCK, 0, "rank entropy kernel",
                       true);
  return true;
}
