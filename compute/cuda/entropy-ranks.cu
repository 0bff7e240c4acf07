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
 * Only the lanes whose windows leave the image take that path: a warp
 * that resolved its whole edge column every row held its block (and the
 * occupancy, 28 % of 50 %) back. At 8192² on the H200 it takes 0.41 ms
 * where the sort kernel takes 0.58 (PERFORMANCE.md). The same scheme on
 * 5×5 squares (110 compares of four windows a row, 160 registers) took
 * 3.3 ms against the span-counts kernel's 1.08, so 5×5 stays there. */

/* 4 in each byte where a and b are equal, else 0 (ranks are kept times 4,
 * the byte offset of D[rank] in a table of uint32). */
static __device__ __forceinline__ uint32_t
equal_bytes_x4 (uint32_t a, uint32_t b)
{
  const uint32_t x = a ^ b;
  /* Bit 7 of a byte set where the byte of x is nonzero, no carry across. */
  const uint32_t nonzero = ((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x;
  return (~nonzero >> 5) & 0x04040404u;
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
  const int t = threadIdx.x;

  if (t < K * K)
    s_diff[t] = __ldg (&p.tables->clnc_fix[t + 1]) - __ldg (&p.tables->clnc_fix[t]);
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
  /* The finish of a full window, the same for every row. */
  const uint32_t full_single = __ldg (&p.tables->clnc_fix[K * K]);
  const double full_inv = __ldg (&p.tables->inv_n_fix[K * K]), full_ln = __ldg (&p.tables->ln_n[K * K]);
  const double full_norm = __ldg (&p.tables->ln_n[p.bins < K * K ? p.bins : K * K]);

  /* cell[r][c]: window row r (0 = top), column offset c − H, for the four
   * windows. rank[r][m][c]: that cell's rank ×4 among the cells of its own
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
        uint32_t acc = 0;
#pragma unroll
        for (int e = 0; e < c; e++)
          acc += equal_bytes_x4 (cell[K - 1][c], cell[K - 1][e]);
        rank[K - 1][0][c] = acc;
#pragma unroll
        for (int m = 1; m < K; m++)
          {
#pragma unroll
            for (int e = 0; e < K; e++)
              acc += equal_bytes_x4 (cell[K - 1][c], cell[K - 1 - m][e]);
            rank[K - 1][m][c] = acc;
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
              uint32_t sum[4] = { 0, 0, 0, 0 };
#pragma unroll
              for (int r = 0; r < K; r++)
#pragma unroll
                for (int c = 0; c < K; c++)
#pragma unroll
                  for (int lane = 0; lane < 4; lane++)
                    sum[lane] += *(const uint32_t *) ((const char *) s_diff + (rank[r][r][c] >> (8 * lane) & 0xffu));
#pragma unroll
              for (int lane = 0; lane < 4; lane++)
                {
                  /* es_entropy_value with the sort kernel's exact
                   * single-bin test. */
                  const double e = __fma_rn (-(double) sum[lane], full_inv, full_ln);
                  value[lane] = sum[lane] == full_single ? 0.0f
                                : p.normalized           ? (float) (e / full_norm)
                                                         : es_entropy_store (e, p.unit_scale);
                }
            }
          else
            warm = false;
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
