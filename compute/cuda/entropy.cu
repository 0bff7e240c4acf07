/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU: the variant table and the operation's CUDA entry; the kernels are in the other entropy-*.cu files. */
#include "entropy-internal.h"
#include "es-i18n.h"

/* Once per device: the teaching kernels' constant table and shared-memory
 * limits, and those of the fast variant's general path. */
static bool
entropy_init (EsCuda *cuda, EsError *error)
{
  return es_cuda_entropy_teaching_init (cuda, error) && es_cuda_entropy_fast_init (cuda, error)
         && es_cuda_entropy_general_init (cuda, error);
}

/* ---- the operation --------------------------------------------------------- */

/* The teaching kernels compute today's definition only, in nats (their
 * tables stop at 31×31 and 256 levels); the engine gives every other job
 * to "general" (es_variant_for_job). */
static const char *
default_definition_only (const EsJob *job)
{
  return es_job_is_default_definition (job) && !job->definition.bits
           ? NULL
           : "computes only the default definition (a square window up to 31×31, clipped, depth binning up to "
             "256 levels, nats, no mask)";
}

/* The default definition under any border mode and in either unit: clip
 * at the image's edge, the other modes as clip on a frame padded by that
 * mode; bits as the kernels store them (entropy-fast.cu). */
static bool
default_but_border (const EsJob *job)
{
  EsJob clipped = *job;

  clipped.definition.border = ES_BORDER_CLIP;
  return es_job_is_default_definition (&clipped);
}

static const char *
square_depth_any_border (const EsJob *job)
{
  return default_but_border (job) ? NULL
                                  : "computes a square window up to 31×31 with depth binning up to 256 levels, "
                                    "in nats or bits, without a mask (any border mode)";
}

/* The 2-D kernels: a 3-D window goes to the volume variants. */
static const char *
two_d_windows (const EsJob *job)
{
  return es_definition_is_3d (&job->definition) ? "computes 2-D windows only (a 3-D window runs on \"volume\")"
                                                : NULL;
}

/* EsCudaOp.frame_pad: the fast kernels, one shot, with a border mode other
 * than clip run on the image padded by half the window. */
static int
entropy_frame_pad (const EsJob *job, const EsVariant *variant)
{
  if (variant->launch != es_cuda_entropy_fast || variant->transfer == ES_TRANSFER_STREAMS
      || job->definition.border == ES_BORDER_CLIP || !default_but_border (job))
    return 0;
  return job->window / 2;
}

/* EsCudaOp.slow_path: the fast kernels stay near the copy floor (≤ 3×)
 * with their pair counters, at k ≤ 9 and L ≤ 16; beyond, they slide column
 * histograms or shared counts at 4–28× (PERFORMANCE.md, "Entropy `fast`
 * at every window and level count"). */
static const char *
entropy_slow_path (const EsJob *job, const EsVariant *variant)
{
  enum { NEAR_FLOOR_WINDOW = 9, NEAR_FLOOR_LEVELS = 16 };

  if (variant->launch != es_cuda_entropy_fast || es_variant_unsupported (variant, job) != NULL
      || (job->window <= NEAR_FLOOR_WINDOW && job->levels <= NEAR_FLOOR_LEVELS))
    return NULL;
  return "slow path: past 9×9 or 16 levels, 4–28× the copy floor (PERFORMANCE.md)";
}

/* Every variant computes H = ln n − (1/n) Σ c ln c over the clipped window
 * (DESIGN.md §1). The table variants and the general path of "fast" sum
 * round(c ln c · 2^19) exactly in uint32 and finish in double, so they agree
 * bit for bit (so does the fast kernel at 9×9); "naive" and
 * "per-thread-histogram" take logs in double; the fast kernel up to 7×7 sums
 * 8 float entries of c ln c + c' ln c' (each rounded once).
 * All stay within 3e-6 of a float64 evaluation. The transfer lessons run the
 * fast kernels and differ from "fast" only in how the image moves. */
static const EsVariant entropy_variants[] = {
  { "naive", N_ ("Naive: one pass over the window per level"),
    N_ ("For every level the thread scans its whole window again in global memory, so a 5×5 window "
    "with 16 levels costs 400 loads per pixel. On an H200 at 8192² it moves the same 7 bytes a pixel of DRAM traffic as "
    "the table variants, yet takes 16.9 ms, 175× the copy floor: the caches serve the loads, and issuing them "
    "is the cost. The classroom baseline that the other variants improve on."),
    "Classroom local-entropy exercise (one loop per level)",
    false, ES_TRANSFER_DEFAULT, es_cuda_entropy_naive, default_definition_only, es_cuda_entropy_naive_memory },
  { "per-thread-histogram", N_ ("Per-thread histogram in local memory"),
    N_ ("Each thread counts its window once into a private array in local memory, trading space for "
    "time: k² loads per pixel instead of L·k², but the array is 512 bytes of local memory a thread, and a warp's 32 "
    "increments land on 32 different addresses of that cached, DRAM-backed memory. On an H200 at 8192²: 11.9 ms, only 1.4× "
    "faster than naive."),
    "NVIDIA CUDA C++ Programming Guide, §Local memory",
    false, ES_TRANSFER_DEFAULT, es_cuda_entropy_per_thread_histogram, default_definition_only, es_cuda_entropy_per_thread_histogram_memory },
  { "log-table-global", N_ ("c·ln c table in global memory"),
    N_ ("Counts move to shared memory (one bank per thread) and the logarithms become a table of c·ln c "
    "read from global memory. On an H200 at 8192²: 1.42 ms, 8.4× faster than counting in local memory and a tie with the "
    "shared-memory table, because the L1 cache serves a warp's different entries from one or two cache lines. "
    "It moves 7 bytes a pixel of DRAM at 332 GB/s, far from the bandwidth: 328 bytes a pixel of shared-memory "
    "traffic bound it."),
    "NVIDIA CUDA C++ Best Practices Guide, §Device memory spaces",
    false, ES_TRANSFER_DEFAULT, es_cuda_entropy_table_global, default_definition_only, es_cuda_entropy_table_cached_memory },
  { "log-table-constant", N_ ("c·ln c table in constant memory"),
    /* xgettext:no-c-format */
    N_ ("The same table in __constant__ memory: one address per warp would be a broadcast, but each "
    "thread looks up its own count, and the constant cache serves the different addresses one after another. "
    "On an H200 at 8192²: 1.86 ms, 31% slower than with the table in global or shared memory (1.42 ms), for the same "
    "bytes of DRAM and shared-memory traffic."),
    "NVIDIA CUDA C++ Programming Guide, §Constant memory",
    false, ES_TRANSFER_DEFAULT, es_cuda_entropy_table_constant, default_definition_only, es_cuda_entropy_table_cached_memory },
  { "log-table-shared", N_ ("c·ln c table in shared memory"),
    N_ ("The same table copied into shared memory by each block: 32 banks serve a warp's different "
    "entries in one pass, so divergent lookups cost no more than uniform ones. On an H200 at 8192²: 1.42 ms, a tie with the "
    "L1-cached global table and well ahead of constant memory, for 392 bytes a pixel of shared-memory traffic "
    "instead of 328."),
    "NVIDIA CUDA C++ Programming Guide, §Shared memory",
    false, ES_TRANSFER_DEFAULT, es_cuda_entropy_table_shared, default_definition_only, es_cuda_entropy_table_shared_memory },
  { "shared-tile", N_ ("Shared-memory tile with halo"),
    N_ ("As log-table-shared, and each block also stages its 32×2 tile of levels plus a halo of k/2 "
    "cells per side in shared memory. The L1 cache already served those window re-reads, so the halo loads "
    "(3× the tile for 5×5) and barriers only cost: on an H200 at 8192², 1.92 ms against 1.42, for the same 7 bytes a pixel "
    "of DRAM traffic and 420 bytes of shared-memory traffic instead of 392. A tile pays only where caches miss."),
    "NVIDIA CUDA C++ Programming Guide, §Shared memory (tiled stencil); cuda-samples convolutionSeparable",
    false, ES_TRANSFER_DEFAULT, es_cuda_entropy_shared_tile, default_definition_only, es_cuda_entropy_shared_tile_memory },
  { "fast", N_ ("Fast: pair counters in registers, sliding windows"),
    /* xgettext:no-c-format */
    N_ ("Four columns per thread; levels 2i and 2i+1 share one packed counter, the windows slide down the "
    "image one row in and one out, each column's change comes from one shared-memory lookup indexed "
    "by both rows' levels, warp shuffles add the k columns of a window row, and each counter pair "
    "indexes a shared table of c ln c + c' ln c': 8 lookups per pixel, quantization fused into the "
    "load (up to 9×9); larger windows or more levels slide packed column histograms (up to 16 "
    "levels) or per-thread counts in shared memory. On an H200 at 8192²: 0.188 ms, 1.9× the copy floor, 5 bytes a pixel "
    "of DRAM traffic (the levels never reach memory) at 1.79 TB/s; 116 registers a thread hold occupancy "
    "at 25%, and the work in registers, not more threads, hides the latency."),
    "NVIDIA CUDA C++ Programming Guide, §Warp shuffle functions; packed (SWAR) counters as in CUB BlockRadixRank; "
    "Perreault & Hébert, Median Filtering in Constant Time (2007)",
    true, ES_TRANSFER_DEFAULT, es_cuda_entropy_fast, square_depth_any_border, es_cuda_entropy_fast_memory },
  { "streams-overlap", N_ ("Fast kernel, transfers overlapped in streams"),
    N_ ("The fast kernel on bands of rows in three streams: while one band computes, the next uploads "
    "and the previous downloads, so both copy directions and the SMs work at once. On an H200 at 8192²: 5.2 ms end to end "
    "against 6.3 ms for fast, 0.85× upload + download, although the 16 bands' kernels add up to 0.44 ms "
    "against one 0.19 ms launch."),
    "NVIDIA CUDA C++ Best Practices Guide, §Asynchronous and overlapping transfers with computation",
    false, ES_TRANSFER_STREAMS, es_cuda_entropy_fast, default_definition_only, es_cuda_entropy_fast_memory },
  { "pageable-transfers", N_ ("Fast kernel, pageable host memory"),
    N_ ("The fast kernel, with the image in ordinary pageable memory (malloc) copied by plain cudaMemcpy: "
    "the driver stages it through its own small pinned buffer. On an H200 at 8192²: 29 ms end to end against 6.3 ms from "
    "page-locked memory, the copies running at 6.8 GB/s up and 11.9 GB/s down against 54 GB/s by DMA."),
    "NVIDIA CUDA C++ Best Practices Guide, §Pinned memory",
    false, ES_TRANSFER_PAGEABLE, es_cuda_entropy_fast, square_depth_any_border, es_cuda_entropy_fast_memory },
  { "per-call-alloc", N_ ("Fast kernel, buffers allocated per call"),
    N_ ("The fast kernel, but the device buffers are allocated and freed on every run: cudaMalloc "
    "and cudaFree synchronize and cost far more than the kernel. On an H200 at 8192²: 7.5 ms end to end against 6.3 ms "
    "for fast, around the same 0.19 ms kernel (the time shows in upload and download)."),
    "NVIDIA CUDA C++ Best Practices Guide, §Memory allocation",
    false, ES_TRANSFER_PER_CALL, es_cuda_entropy_fast, square_depth_any_border, es_cuda_entropy_fast_memory },
  { "general", N_ ("General: every window shape, border, binning and mask"),
    N_ ("A first pass bins the frame once a cell (border, mask, a table of every sample value, up to 65536 "
    "bins); then each thread slides the histogram of one output column's window down a strip of rows, "
    "one cell out and one in for each column span of the window (any shape). Up to 256 bins and 961 "
    "cells the counts sit in shared memory as the fast variant's do; windows of a few cells over many "
    "bins are sorted in registers instead, and the rest count in shared or global memory with Σ c ln c "
    "exact in 64-bit fixed point. It runs every definition, and the jobs that the other variants cannot. "
    "On an H200 at 8192², 5×5 and 16 levels: 0.69 ms against fast's 0.19, with 7 bytes a pixel of DRAM traffic instead of 5 "
    "(the bins are written and read back) at 684 GB/s: one count update a span and pixel, not memory, is its bound."),
    "Huang, Yang & Tang, A fast two-dimensional median filtering algorithm (1979): the sliding histogram",
    false, ES_TRANSFER_DEFAULT, es_cuda_entropy_general, two_d_windows, es_cuda_entropy_general_memory },
  { "volume", N_ ("Volume: 3-D windows, a histogram slid down each column"),
    N_ ("For box, ball and 3-D footprint windows: each thread slides one output column's histogram down a "
    "strip of rows of a plane, one cell out and one in for each (dz, dx) column of the window, so a voxel "
    "costs two updates a column of the window, not its volume; a warp's 32 neighbouring columns read "
    "32 neighbouring bins, which the L1 cache serves, and Σ c ln c moves exactly in fixed point. Volumes "
    "larger than a GPU run in bands of planes, over every GPU. Each block takes one tile, and tiles start "
    "in order as others finish, so the 50 or so planes in flight stay in the L2 and DRAM sees each bin "
    "once: 512³ with a ball of radius 3 read 273 MB of DRAM (the 134 MB volume, then its 139 MB of bins), "
    "as the model says, where resident blocks striding over the tiles read the bins 2.1 times and took an "
    "eighth longer (the warp schedulers favour an SM's oldest warps, some blocks ran many planes ahead, "
    "and the planes in flight outgrew the L2). Cube 3 and balls 2 and 3 are compiled in, their columns "
    "grouped by rows: what enters a group leaves it a group's length of rows later, so a ring keeps it, "
    "and a row loads only the entering cells, 9 for cube 3 where the moves load 18. The rings sit in "
    "registers, but ball 3's in shared memory: in 36 more registers they spilled, and the spills' stores "
    "reached DRAM, 270 MB beyond the model. On an H200, that ball at 16 bins takes 3.3 ms, 4.4 ms by moves."),
    "Huang, Yang & Tang, A fast two-dimensional median filtering algorithm (1979), extended to 3-D",
    false, ES_TRANSFER_DEFAULT, NULL, es_cuda_entropy_volume_unsupported, es_cuda_entropy_volume_memory },
  { "volume-tile", N_ ("Volume, shared-memory tile with halo"),
    N_ ("As volume, but each block of 8×8 columns first stages its 8³ cube of outputs with the window's halo "
    "in shared memory: the halo grows as (T+2r)³/T³, 5.4× the outputs' cells for a ball of radius 3, "
    "so the staging loads, the shared memory they take from the counts, and the barriers cost more "
    "than the L1 and L2 caches, which already serve the sliding window's re-reads. On an H200, 512³ with a "
    "ball of radius 3 and 16 bins: 7.1 ms against 3.3 ms for volume, reading 412 MB of DRAM against 273 MB "
    "(its bins are 16-bit: 278 MB)."),
    "NVIDIA CUDA C++ Programming Guide, §Shared memory (tiled stencil); Micikevicius, 3D finite difference "
    "computation on GPUs using CUDA (2009)",
    false, ES_TRANSFER_DEFAULT, NULL, es_cuda_entropy_volume_tile_unsupported,
    es_cuda_entropy_volume_tile_memory },
};

const EsCudaOp es_cuda_entropy = {
  .variants = entropy_variants,
  .n_variants = ES_CUDA_N_VARIANTS (entropy_variants),
  .uses_levels = true,
  .init = entropy_init,
  .launch_rows = es_cuda_entropy_launch_rows,
  .reduce_band = NULL,
  .combine = NULL,
  .apply_band = NULL,
  .tile_sizes = NULL,
  .count_band = NULL,
  .build_maps = NULL,
  .blend_band = NULL,
  .frame_pad = entropy_frame_pad,
  .slow_path = entropy_slow_path,
  .volumes = true,
  .run_volume = es_cuda_entropy_volume,
};
