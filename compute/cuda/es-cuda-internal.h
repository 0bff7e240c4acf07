/* SPDX-License-Identifier: MIT */
/* What the CUDA translation units share: the EsCuda state, frames, error checks, buffers and device helpers. */
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "es-cuda.h"
#include "../es-definitions.h"

/* Every device row holds whole vectors of 16 samples (the row is padded), so
 * that kernels can load and store 16 samples at a time without a ragged
 * tail; the padding is zero on upload (es_cuda_upload_2d), computed on and
 * never downloaded. */
#define ES_CUDA_VECTOR 16

/* Entropy tables cover every window of the fast kernels, up to 31×31. Sums of c·ln c are kept as
 * uint32 scaled by 2^19: 961·ln 961·2^19 ≈ 3.46e9 fits, sliding updates are
 * exact, and each entry's rounding (2^-20) stays far below the 1e-5 budget. */
#define ES_CUDA_MAX_COUNT (ES_FAST_WINDOW_MAX * ES_FAST_WINDOW_MAX)
#define ES_CUDA_FIX_BITS 19
/* The general variant's 2-D kernels (any definition) sum c·ln c in uint64
 * scaled by 2^29 instead: the differences T[c + 1] − T[c] still fit uint32
 * up to c = 961 (7.87·2^29 < 2^32), so their shared tables keep 32-bit
 * entries, and a window's H is within 2^-30 nats of its float64 value.
 * At 2^19, 64 equal roundings moved H by 2.8e-7 nats, over half a float32
 * ulp: a window of 64 values each counted twice gave 6.0000005 bits, not
 * scikit-image's 6. */
#define ES_CUDA_FINE_BITS 29
/* The pair-counter kernel (entropy-pairs.cu, windows up to 9×9, 16 levels)
 * counts levels 2i and 2i+1 in one pair counter c_even + (k²+1)·c_odd, which
 * indexes a table of c_even ln c_even + c_odd ln c_odd: (k²+1)² float entries
 * for k = 3, 5, 7, one after the other, kept here; k = 9 builds an exact
 * integer table of its own in the kernel. */
#define ES_CUDA_FAST_MAX_WINDOW 7
#define ES_CUDA_FAST_MAX_COUNT (ES_CUDA_FAST_MAX_WINDOW * ES_CUDA_FAST_MAX_WINDOW)
#define ES_CUDA_PAIR_OFFSET(k) ((k) == 3 ? 0 : (k) == 5 ? 100 : 776)
#define ES_CUDA_PAIR_ENTRIES (100 + 676 + 2500)

/* Uploaded once at open; computed on the host in double precision. */
typedef struct {
  uint32_t clnc_fix[ES_CUDA_MAX_COUNT + 1];            /* round(c ln c · 2^19) */
  double ln_n[ES_CUDA_MAX_COUNT + 1];                  /* ln n (0 for n = 0) */
  double inv_n_fix[ES_CUDA_MAX_COUNT + 1];             /* 2^-19 / n (0 for n = 0) */
  unsigned long long clnc_fine[ES_CUDA_MAX_COUNT + 1]; /* round(c ln c · 2^29) */
  double inv_n_fine[ES_CUDA_MAX_COUNT + 1];            /* 2^-29 / n (0 for n = 0) */
  float pair_f[ES_CUDA_PAIR_ENTRIES];                  /* the fast kernel's pair tables, rounded once */
  float2 ln_inv_f[ES_CUDA_FAST_MAX_COUNT + 1];         /* { ln n, 1/n }, for the fast kernel */
} EsCudaTables;

typedef struct {
  void *ptr;
  size_t size;
} EsCudaBuffer;

/* Staged transfers go in up to this many chunks, so that the host copy of
 * one chunk overlaps the DMA of the next; the streams-overlap variant splits
 * the image into up to this many bands of rows. */
#define ES_CUDA_MAX_CHUNKS 16

/* The most GPUs that one engine spreads bands over. */
#define ES_CUDA_MAX_DEVICES 16

/* Bands under a memory budget, or over several GPUs, cycle through this many
 * sets of band buffers: band b+1 uploads while band b computes and band b−1
 * downloads from the other set. */
#define ES_CUDA_BAND_SLOTS 2
/* Bands that overlap the transfers of an image that fits (es_cuda_run) take
 * one set more: band b+1 then uploads and computes while bands b and b−1
 * download, instead of waiting for band b−1's download to free its set. */
#define ES_CUDA_OVERLAP_SLOTS 3

/* The kernel launches that one counted pass can attribute: the range
 * profiler's ranges a pass (one a launch). */
#define ES_CUDA_MAX_RANGES 256
/* A range of the L2 sweep between two counted kernels: not the run's. */
#define ES_CUDA_SWEEP_RANGE (-2)

/* What cudaFuncGetAttributes and the occupancy API say of one kernel at one
 * launch shape: read once, kept for the life of the device. */
typedef struct {
  const void *kernel;
  unsigned threads;
  size_t dynamic_shared;
  int registers;
  size_t static_shared, local_bytes;
  int blocks_per_sm;
} EsKernelResources;

struct EsCuda {
  int device;
  int sm_count;
  char name[256];
  /* The engine's first device holds the others: each with its own streams,
   * buffers and tables, driven by a host thread of its own. */
  EsCuda *peers[ES_CUDA_MAX_DEVICES - 1];
  int n_peers;
  char description[512]; /* every device, for es_cuda_device_name */
  size_t total_memory;
  /* The stream of the job in progress, its kernels and the plain paths'
   * copies: home_stream, the engine's own, or a stream-ordered job's
   * caller's (run_one_shot_on in run.cu). */
  cudaStream_t stream;
  cudaStream_t home_stream;
  cudaStream_t up_stream, down_stream; /* the copies of the streams-overlap variant */
  cudaEvent_t ev_start, ev_uploaded, ev_computed, ev_done;
  cudaEvent_t ev_staged[2]; /* around a whole staged upload before bands (run.cu) */
  cudaEvent_t ev_producer;  /* es_cuda_wait_stream: the work queued on a device array's stream */
  /* A stream-ordered job (EsImage.cuda_stream) returned before its work was
   * done; ev_handover, recorded after it, marks its end. Until the host has
   * waited for that event, the engine's buffers may still be in use:
   * es_cuda_device_release waits for it before freeing, and the next job
   * waits for it on the device. */
  cudaEvent_t ev_handover;
  bool unwaited;
  /* Per chunk or band: uploaded, kernels began, kernels ended, downloaded. */
  cudaEvent_t ev_up[ES_CUDA_MAX_CHUNKS], ev_k0[ES_CUDA_MAX_CHUNKS];
  cudaEvent_t ev_k1[ES_CUDA_MAX_CHUNKS], ev_down[ES_CUDA_MAX_CHUNKS];
  /* Device buffers and pinned staging, grown as needed and kept. */
  EsCudaBuffer d_in, d_lev, d_out;
  EsCudaBuffer h_in, h_out;
  /* The fixed-size buffers of the band path, per slot. */
  EsCudaBuffer band_in[ES_CUDA_OVERLAP_SLOTS], band_lev[ES_CUDA_OVERLAP_SLOTS], band_out[ES_CUDA_OVERLAP_SLOTS];
  /* Pinned staging of the bands of a pageable side, kept. */
  EsCudaBuffer band_h_in[ES_CUDA_OVERLAP_SLOTS], band_h_out[ES_CUDA_OVERLAP_SLOTS];
  EsCudaTables *tables;          /* device */
  unsigned long long *histogram; /* device: 256 bins, then the blocks-done counter */
  /* The general entropy variant's buffers (entropy-general.cu, -sort.cu,
   * -slide.cu): its c ln c table, uploaded once at open and read by every
   * sliding job after; then, per job, the bin of every sample value, the
   * window's spans, the mask rows of a frame, the frame's bins and the
   * threads' counts (3-D jobs fill these too: entropy-3d.cu). */
  EsCudaBuffer general_clnc, general_bins, general_spans, general_mask, general_binned, general_counts;
  /* A 3-D job's c ln c tables, uploaded per job (entropy-3d.cu): apart
   * from general_clnc, which the 2-D sliding jobs after it still read. */
  EsCudaBuffer volume_tables;
  uint8_t *lut; /* device: 256 entries */
  /* The tile passes' buffers (EsCudaOp.tile_sizes; CLAHE's in clahe.cu):
   * the tiles' 32-bit counts, and the maps built from them. */
  EsCudaBuffer tile_counts, tile_maps;
  /* The metrics (es-engine.h, EsMetrics): the datasheet bandwidth and the
   * SM's thread limit, read at open; the resources of every kernel and
   * launch shape seen, read once (es_cuda_note_kernel); the kernels of the
   * run in progress. */
  double datasheet_gbs;
  int max_threads_per_sm;
  EsKernelResources *resources;
  int n_resources, resources_capacity;
  EsKernelInfo run_kernels[ES_METRICS_KERNELS];
  int n_run_kernels, run_main_kernel;
  /* Hardware counters (counters.cu): asked for by the engine
   * (es_cuda_want_counters); while a counted pass runs, what each launch
   * was in launch order, which is the order of the profiler's ranges (the
   * run_kernels slot of a kernel, -1 past the kept kernels, or
   * ES_CUDA_SWEEP_RANGE); the run's counters, or why there are none. */
  bool counters_wanted, counting;
  EsCudaBuffer counters_sweep; /* read before a counted pass, to empty the L2 of dirty lines */
  int counted_slots[ES_CUDA_MAX_RANGES];
  int n_counted;
  EsCounters run_counters;
  char counters_note[sizeof ((EsMetrics *) 0)->counters_note];
  bool broken;
  /* ES_CUDA_FAULT, read at open; each fires once. */
  bool fault_alloc, fault_launch, fault_sticky;
};

/* One job's geometry and device buffers. Pitches are in bytes. Named, so
 * that es-engine.h can declare the variants' launch functions without it. */
typedef struct EsCudaFrame {
  int width, height;
  int vectors;        /* ES_CUDA_VECTOR-sample vectors per padded row */
  EsFormat in_format; /* ES_FORMAT_U8 or ES_FORMAT_U16 */
  int depth;          /* significant bits of a sample */
  uint32_t maxval;    /* full scale (es_image_maxval), for the 8-bit view */
  int levels;         /* the job's levels, or the input's own for a levels image */
  EsBinner binner;    /* entropy: how samples become bins (es_binner_init) */
  /* entropy: the factor that the fast kernels apply as they store
   * (es_entropy_store: 1 for nats), set by es_cuda_entropy_launch_rows. */
  double unit_scale;
  int y_origin; /* the image row of the frame's first row (bands) */
  /* Border pixels on every side (EsCudaOp.frame_pad): the frame is the
   * image padded by them, and transfers move its interior only. */
  int pad;
  bool is_levels; /* the samples are levels already */
  const void *in;
  size_t in_pitch;
  uint8_t *lev; /* u8 levels (EsCudaOp.uses_levels) */
  size_t lev_pitch;
  void *out;
  size_t out_pitch;
} EsCudaFrame;

/* Returns true for cudaSuccess; otherwise drains the stream, decides whether
 * the error poisoned the context (cuda->broken), sets `error` and returns
 * false. */
bool es_cuda_check (EsCuda *cuda, cudaError_t status, const char *what, EsError *error);

#define ES_CUDA_TRY(cuda, call, what, error)                                                                           \
  do                                                                                                                   \
    {                                                                                                                  \
      if (!es_cuda_check ((cuda), (call), (what), (error)))                                                            \
        return false;                                                                                                  \
    }                                                                                                                  \
  while (0)

/* After every kernel launch: a bad configuration shows up here at once. */
#define ES_CUDA_LAUNCHED(cuda, what, error) ES_CUDA_TRY ((cuda), cudaGetLastError (), (what), (error))

/* Blocks for a grid-stride loop over `items` with `block` threads: at most
 * what the device holds at once (2048 threads per SM), never zero. */
unsigned es_cuda_blocks (const EsCuda *cuda, size_t items, int block);
/* The same for `kernel`, capped at the blocks that its registers and shared
 * memory let the device hold at once: a grid-stride grid larger than that
 * runs in two waves, the second one alone on a half-empty device. */
unsigned es_cuda_resident_blocks (EsCuda *cuda, const void *kernel, int block, size_t smem, size_t items);
/* Rows a strip so that the grid is one full wave of resident
 * blocks (items_per_block items each, `tiles` items a strip), each item with
 * the same work (a second, partial wave would leave most of the device idle),
 * but no fewer than min_rows. */
int es_cuda_strip_rows (EsCuda *cuda, const void *kernel, int block, size_t smem, int rows, int tiles,
                        int items_per_block, int min_rows);

/* The largest gridDim.y; kernels with more row tiles loop over them. */
#define ES_CUDA_GRID_Y_MAX 65535u

static inline unsigned
es_cuda_grid_y (size_t tiles)
{
  return tiles < ES_CUDA_GRID_Y_MAX ? (unsigned) tiles : ES_CUDA_GRID_Y_MAX;
}

static inline size_t
es_cuda_div_up (size_t a, size_t b)
{
  return (a + b - 1) / b;
}

/* ---- kernel resources (device.cu) ------------------------------------------ */

/* Records a launch of `kernel` for the run's metrics (EsMetrics.kernels):
 * its shape, and its registers, shared and local memory and occupancy,
 * read from the driver the first time this kernel and shape are seen and
 * from a cache after that. `main`: the kernel carries the variant's lesson
 * (else the last kernel launched stands for the run). Called after the
 * launch, off the device's critical path: it never synchronizes. */
void es_cuda_note_kernel (EsCuda *cuda, const void *kernel, dim3 grid, dim3 block, size_t dynamic_shared,
                          const char *name, bool main);
/* Forgets the kernels of the previous run (es_cuda_run, before any launch). */
void es_cuda_begin_kernels (EsCuda *cuda);

/* ---- hardware counters (counters.cu, in a build with CUPTI) ------------------ */

/* Launches a run's kernels once more, on buffers that still hold its input. */
typedef bool (*EsCudaKernelPass) (EsCuda *cuda, const void *data, EsError *error);

/* Runs `pass` under CUPTI's range profiler (auto ranges: one range a
 * launch; user replay: `pass` again for each pass that the counters take,
 * each kernel from an L2 emptied of dirty lines) and fills cuda->run_counters and
 * the counters of cuda->run_kernels, or cuda->counters_note with why it
 * could not. libcupti is opened by the first call. False only when the
 * pass itself failed (a CUDA error). */
bool es_cuda_count_kernels (EsCuda *cuda, EsCudaKernelPass pass, const void *data, EsError *error);
/* es_cuda_count_kernels where the build has CUPTI; without, the note
 * that says so (run.cu). */
bool es_cuda_count_pass (EsCuda *cuda, EsCudaKernelPass pass, const void *data, EsError *error);
/* The note of a run that asked for counters and went in bands or over
 * several GPUs, which are not counted (run.cu). */
void es_cuda_note_uncounted_run (EsCuda *cuda);
/* After each launch of a counted pass (es_cuda_note_kernel): logs the
 * launch's kernel slot for its range, then reads the L2 sweep, so that the
 * next kernel starts from an L2 with no dirty lines and none of this
 * one's, as Nsight Compute's --cache-control all and the memory models
 * have it. */
void es_cuda_counted_launch (EsCuda *cuda, int slot);

/* ---- buffers and fault injection (device.cu) ------------------------------- */

/* Device and pinned host buffers kept in EsCuda: grown when a run needs more,
 * never shrunk (the old contents are not preserved), released at close. */
bool es_cuda_device_reserve (EsCuda *cuda, EsCudaBuffer *buffer, size_t size, const char *what, EsError *error);
void es_cuda_device_release (EsCuda *cuda, EsCudaBuffer *buffer);
/* The stream a device array's library names (EsImage.cuda_stream, nonzero). */
cudaStream_t es_cuda_array_stream (uintptr_t handle);
bool es_cuda_host_reserve (EsCuda *cuda, EsCudaBuffer *buffer, size_t size, const char *what, EsError *error);
/* Frees the band buffers of every slot (a one-shot run does not use them). */
void es_cuda_release_band_buffers (EsCuda *cuda);

/* ES_CUDA_FAULT=launch|sticky fires at the first kernel launch of a run. */
bool es_cuda_inject_launch_fault (EsCuda *cuda, EsError *error);

/* ---- one job (run.cu) -------------------------------------------------------- */

/* How one run moves the image. A direct side is copied by cudaMemcpy from
 * the image itself: by DMA when it is page-locked, through the driver's own
 * staging when it is pageable (the pageable lesson), device to device when
 * it lies on the device (every image copy says cudaMemcpyDefault, and
 * unified addressing tells which). Otherwise the rows go through the
 * engine's pinned staging buffers, chunk by chunk. A borrowed side is a
 * device image laid out as the frame's buffer: the kernels read or write
 * it in place, and nothing is copied. */
typedef struct EsMove {
  const EsImage *in;
  EsImage *out;
  size_t in_row, out_row; /* bytes per image row */
  bool in_direct, out_direct;
  bool in_borrowed, out_borrowed;
  /* Bands only: the whole input, already uploaded into the first device's
   * frame (in_pitch rows), which the bands read instead of uploading. */
  const void *in_on_device;
} EsMove;

/* Copies rows [y0, y1) of row_bytes between two host buffers with their
 * own strides, on every core when large: one core copies about 5 GB/s
 * into pinned memory, well under what the PCIe link moves. */
void es_cuda_copy_rows (void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, int y0,
                        int y1);

/* Uploads `rows` rows of row_bytes into device rows of `pitch` bytes and
 * zeroes each row's padding: every device row is whole vectors, and the
 * kernels read the padding (never using its values, but reading memory that
 * nothing wrote is a bug of its own). Every upload goes through this or
 * copies whole padded rows from zeroed staging. */
bool es_cuda_upload_2d (EsCuda *cuda, void *device, size_t pitch, const void *host, size_t stride, size_t row_bytes,
                        size_t rows, cudaStream_t stream, const char *what, EsError *error);

/* Fills the frame's pad (frame->pad pixels on every side of the image in
 * its input) as `border` says, the constant with `value`, and zeroes each
 * row's padding (border.cu). */
bool es_cuda_fill_border (EsCuda *cuda, const EsCudaFrame *frame, EsBorder border, uint32_t value, EsError *error);

/* The variant's kernels on a frame whose input is on the device, after the
 * injected launch fault, if one is due. */
bool es_cuda_run_kernels (EsCuda *cuda, const EsVariant *variant, const EsCudaFrame *frame, const EsJob *job,
                          EsError *error);

/* ---- bands under a memory budget, over several devices (bands.cu) ------------ */

/* Smaller images stay on one device: spreading them costs more in launches
 * and synchronization than it saves. */
#define ES_CUDA_SPREAD_MIN_PIXELS ((size_t) 1 << 22)

/* The device memory that one run may use on every device. */
size_t es_cuda_memory_budget (EsCuda *cuda);
/* ES_GPU_MEMORY_BUDGET in bytes (tests and sanitizer runs force bands
 * with it), 0 when it is unset, empty or not a number. Read at each run:
 * the tests change it within a process. */
size_t es_cuda_forced_budget (void);
/* Page-locked host images of at least this many pixels, on a row-local op,
 * go in bands whose upload, kernels and download overlap (es_cuda_run):
 * about 8 bands hide all but an eighth of the shorter transfer and of the
 * kernels behind the longer transfer, and cost 8 launches and 2·halo rows
 * a band (at 8192² on an H200, every 2-D definition in nats: 0.87–0.95×
 * the transfer floor; the default in one piece 1.05×). */
#define ES_CUDA_OVERLAP_BANDS 8
#define ES_CUDA_OVERLAP_MIN_PIXELS ES_CUDA_SPREAD_MIN_PIXELS

/* The whole job in bands of rows over every device, within `budget`
 * bytes of device buffers each, in at least `min_bands` bands (1: as few
 * as the budget allows; more to overlap transfers on an image that fits,
 * and the one-shot buffers are then kept); the frame gives the geometry
 * only. */
bool es_cuda_run_banded (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsMove *m,
                         const EsCudaFrame *frame, size_t budget, int min_bands, float times[3], EsControl *control,
                         EsError *error);

/* ---- helpers of the operations ----------------------------------------------- */

#define ES_CUDA_N_VARIANTS(table) (sizeof (table) / sizeof (table)[0])

/* The EsCudaOp of an operation that has a variant table and nothing else: no
 * levels buffer, no device setup, no rows in streams, no whole-image
 * statistic. */
#define ES_CUDA_OP_VARIANTS_ONLY(table)                                                                                \
  {                                                                                                                    \
    .variants = (table), .n_variants = ES_CUDA_N_VARIANTS (table), .uses_levels = false, .init = NULL,                 \
    .launch_rows = NULL, .reduce_band = NULL, .combine = NULL, .apply_band = NULL, .tile_sizes = NULL,                 \
    .count_band = NULL, .build_maps = NULL, .blend_band = NULL, .frame_pad = NULL, .slow_path = NULL,                  \
    .volumes = false, .run_volume = NULL,                                                                              \
  }

/* ---- memory models (EsVariant.memory) -----------------------------------------
 * The DRAM bytes of a variant's kernels for a job, counted from its code
 * under one assumption about L2 (DESIGN.md §3): a kernel that walks the
 * image in order reads each byte from DRAM once, because the re-reads of a
 * window's halo by neighbouring threads and blocks come a few rows later,
 * while the rows are still in L2; every byte written reaches DRAM once; a
 * buffer that one kernel writes and the next reads (levels, bins) goes to
 * DRAM and back, as it does at the sizes where bandwidth matters (64 MiB of
 * levels at 8192² against 50–60 MiB of L2; Nsight Compute flushes L2
 * between kernels besides). Tables of a few KiB, read once by each SM from
 * L2, are left out. */

/* Bytes of the input's samples. */
static inline double
es_model_sample_bytes (const EsExtent *extent)
{
  return (double) es_format_size (extent->format);
}

/* Pixels of the padded device rows (whole ES_CUDA_VECTOR vectors) that
 * the kernels walking vectors read and write. */
static inline double
es_model_vector_pixels (const EsExtent *extent)
{
  const double row = (double) ((extent->width + ES_CUDA_VECTOR - 1) / ES_CUDA_VECTOR * ES_CUDA_VECTOR);
  return row * extent->height * (extent->planes > 1 ? extent->planes : 1);
}

/* The quantize pass (quantize.cu): every sample read, every level written. */
static inline void
es_model_quantize_pass (const EsExtent *extent, double pixels, EsTraffic *traffic)
{
  traffic->read_bytes += pixels * es_model_sample_bytes (extent);
  traffic->write_bytes += pixels;
}

/* The nominal device of the models that depend on what a device holds at
 * once (local arrays, scratch histograms): an H100's 132 SMs of 2048
 * threads and its 50 MiB of L2. */
#define ES_MODEL_RESIDENT_THREADS (132.0 * 2048.0)
#define ES_MODEL_L2_BYTES (50.0 * 1024.0 * 1024.0)

/* Quantizes frame->in into frame->lev (quantize.cu; the first step of the
 * entropy kernels that read levels). */
bool es_cuda_quantize_levels (EsCuda *cuda, const EsCudaFrame *frame, EsError *error);

#ifdef __CUDACC__

/* How samples become levels (quantize, entropy) or the 8-bit view (equalize,
 * sharpen); the device twin of es_quantize_sample and es_sample_to_u8. */
typedef struct {
  int levels;
  int depth;
  int is_levels;
  uint32_t maxval;
} EsSampleMap;

static inline EsSampleMap
es_cuda_sample_map (const EsCudaFrame *frame)
{
  EsSampleMap map = { frame->levels, frame->depth, frame->is_levels ? 1 : 0, frame->maxval };
  return map;
}

/* (v·L) >> depth, or the level itself for a levels image. The clamp only
 * matters for samples outside 0..2^depth-1 (never produced by the loaders)
 * and keeps every histogram index in range. */
static __device__ __forceinline__ uint32_t
es_dev_level (uint32_t v, EsSampleMap map)
{
  uint32_t level = map.is_levels ? v : (v * (uint32_t) map.levels) >> map.depth;
  return min (level, (uint32_t) map.levels - 1u);
}

/* es_sample_to_u8_max, or the level itself for a levels image. */
static __device__ __forceinline__ uint32_t
es_dev_view (uint32_t v, EsSampleMap map)
{
  if (map.is_levels)
    return v & 0xffu;
  return es_sample_to_u8_max (v, map.maxval);
}

/* Whether the 8-bit view of every sample is the sample itself (8-bit full
 * scale, or levels): then kernels may skip es_dev_view on packed bytes. */
static __device__ __forceinline__ bool
es_dev_view_is_identity (EsSampleMap map)
{
  return map.is_levels || map.maxval == 255u;
}

/* 1.5 · 2^23: a float in [2^23, 2^24) has a unit last place, so adding it
 * rounds to an integer (half to even) and the integer sits in the mantissa. */
#define ES_DEV_MAGIC 12582912.0f
#define ES_DEV_MAGIC_BITS 0x4b400000

/* es_sharpen_sample: two roundings, no FMA contraction, round half to even.
 * The int→float conversions, rintf and the float→int conversion would run
 * on the quarter-rate conversion unit, four per pixel, and bound the sharpen
 * kernels; exact magic-number additions do the same on the FP32 pipes: the
 * integers are below 2^22, and clamping the value to [−1, 256] before
 * rounding leaves the saturated result unchanged. */
static __device__ __forceinline__ uint32_t
es_dev_sharpen (int c, int laplacian, float amount)
{
  float fc = __fadd_rn (__int_as_float (ES_DEV_MAGIC_BITS + c), -ES_DEV_MAGIC);
  float fl = __fadd_rn (__int_as_float (ES_DEV_MAGIC_BITS + laplacian), -ES_DEV_MAGIC);
  float value = __fadd_rn (fc, __fmul_rn (amount, fl));
  value = fminf (fmaxf (value, -1.0f), 256.0f);
  int r = __float_as_int (__fadd_rn (value, ES_DEV_MAGIC)) - ES_DEV_MAGIC_BITS;
  return (uint32_t) min (max (r, 0), 255);
}

template <typename T>
static __device__ __forceinline__ const T *
es_dev_row (const void *base, size_t pitch, int y)
{
  return (const T *) ((const char *) base + (size_t) y * pitch);
}

template <typename T>
static __device__ __forceinline__ T *
es_dev_row_mut (void *base, size_t pitch, int y)
{
  return (T *) ((char *) base + (size_t) y * pitch);
}

/* 16 consecutive samples (x0 a multiple of 16) as 32-bit lanes. */
template <typename T> struct EsVec16;

template <> struct EsVec16<uint8_t> {
  static __device__ __forceinline__ void load (const void *row, int x0, uint32_t v[16])
  {
    uint4 q = __ldg ((const uint4 *) ((const uint8_t *) row + x0));
    uint32_t w[4] = { q.x, q.y, q.z, q.w };
#pragma unroll
    for (int i = 0; i < 16; i++)
      v[i] = (w[i >> 2] >> (8 * (i & 3))) & 0xffu;
  }
};

template <> struct EsVec16<uint16_t> {
  static __device__ __forceinline__ void load (const void *row, int x0, uint32_t v[16])
  {
    const uint4 *p = (const uint4 *) ((const uint16_t *) row + x0);
    uint4 a = __ldg (p), b = __ldg (p + 1);
    uint32_t w[8] = { a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w };
#pragma unroll
    for (int i = 0; i < 16; i++)
      v[i] = (w[i >> 1] >> (16 * (i & 1))) & 0xffffu;
  }
};

/* Walks the (vector, row) cells of a padded image in grid-stride order with
 * one division per thread instead of one per cell. The grid is capped by
 * es_cuda_blocks(), so the stride fits in an int. */
struct EsVectorWalk {
  int x, y;
  int dx, dy;
  int vectors;

  __device__ __forceinline__ explicit EsVectorWalk (int vectors_per_row)
  {
    size_t first = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
    int stride = (int) (gridDim.x * blockDim.x);
    vectors = vectors_per_row;
    x = (int) (first % (size_t) vectors);
    y = (int) (first / (size_t) vectors);
    dx = stride % vectors;
    dy = stride / vectors;
  }

  __device__ __forceinline__ void next ()
  {
    x += dx;
    y += dy;
    if (x >= vectors)
      {
        x -= vectors;
        y++;
      }
  }
};

/* Packs 16 bytes (each < 256) into one 16-byte store. */
static __device__ __forceinline__ void
es_dev_store16 (void *row, int x0, const uint32_t b[16])
{
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; i++)
    w[i] = b[4 * i] | (b[4 * i + 1] << 8) | (b[4 * i + 2] << 16) | (b[4 * i + 3] << 24);
  *(uint4 *) ((uint8_t *) row + x0) = make_uint4 (w[0], w[1], w[2], w[3]);
}

#endif /* __CUDACC__ */
