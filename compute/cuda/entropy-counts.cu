/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU, the "fast" variant's path for more than 16 levels: counts in shared memory, any window. */
#include "entropy-fast-internal.h"

/* -- any L, any window: one histogram per column in shared memory ------------
 *
 * Each thread owns one output column and slides its window's histogram down
 * a strip: per row, the k pixels of the row that enters and the k of the row
 * that leaves, taken in pairs from the same column (equal levels cancel), and
 * the sum moves by differences of the fixed-point table, exact in uint32.
 * The counts are 16-bit in shared memory after the table of differences,
 * level l of thread t at byte 256·l + es_cuda_count_lane (t): the 32
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
                       const EsCudaTables *__restrict__ tables, void *out, unsigned out_pitch, double unit_scale,
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
  char *const cbase = (char *) (smem + DWORDS) + es_cuda_count_lane (t);
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
    *(float *) ((char *) out_column + (size_t) (unsigned) y * out_pitch)
      = fast_stored (entropy_from_fix_li (sum, li), unit_scale);
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

template <int K>
static void
launch_counts (EsCuda *cuda, const EsCudaFrame *frame, int y_first, int y_last)
{
  if (y_last <= y_first)
    return;
  const int tiles = (int) es_cuda_div_up ((size_t) frame->width, COUNTS_BLOCK);
  const int rows = y_last - y_first;
  const size_t smem = (size_t) frame->levels * 256 + (size_t) (K * K + 1) * 4;
  const int strip = es_cuda_strip_rows (cuda, (const void *) entropy_counts_kernel<K>, COUNTS_BLOCK, smem, rows,
                                        tiles, 1, 16);
  const size_t items = (size_t) tiles * es_cuda_div_up ((size_t) rows, (size_t) strip);

  entropy_counts_kernel<K><<<(unsigned) items, COUNTS_BLOCK, smem, cuda->stream>>> (
    frame->lev, (unsigned) frame->lev_pitch, frame->width, frame->height, frame->levels, cuda->tables,
    frame->out, (unsigned) frame->out_pitch, frame->unit_scale, y_first, y_last, strip, tiles);
  es_cuda_note_kernel (cuda, (const void *) entropy_counts_kernel<K>, (unsigned) items, COUNTS_BLOCK, smem,
                       "shared-count entropy kernel", true);
}

/* Every window size, as a function pointer table and for es_cuda_entropy_counts_init. */
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

void
es_cuda_entropy_counts_launch (EsCuda *cuda, const EsCudaFrame *frame, int window, int y_first, int y_last)
{
  counts_launches[(window - 3) / 2](cuda, frame, y_first, y_last);
}

/* 256 levels of 16-bit counts for 128 threads: 64 KiB and the table, more
 * than the default 48 KiB of dynamic shared memory. */
bool
es_cuda_entropy_counts_init (EsCuda *cuda, EsError *error)
{
  for (size_t i = 0; i < sizeof counts_kernels / sizeof counts_kernels[0]; i++)
    ES_CUDA_TRY (cuda, cudaFuncSetAttribute (counts_kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             COUNTS_SMEM_MAX), "shared memory limit", error);
  return true;
}
