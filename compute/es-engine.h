/* SPDX-License-Identifier: MIT */
/* The compute API: jobs, backends (CPU/OpenMP and CUDA), variants, timings. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-error.h"
#include "es-image.h"
#include "es-ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ES_BACKEND_AUTO,
  ES_BACKEND_CPU,
  ES_BACKEND_CUDA,
} EsBackendChoice;

const char *es_backend_name (EsBackendChoice backend); /* "auto", "cpu", "cuda" */
bool es_backend_from_name (const char *name, EsBackendChoice *backend);

/* How a run's images crossed PCIe (none on the CPU backend). */
typedef enum {
  ES_HOST_NONE,     /* no transfer: the CPU backend */
  ES_HOST_PINNED,   /* DMA straight from and to page-locked images */
  ES_HOST_STAGED,   /* pageable images copied through the engine's pinned staging */
  ES_HOST_PAGEABLE, /* cudaMemcpy from and to pageable images (the driver stages them) */
  ES_HOST_MIXED,    /* one side pinned, the other staged */
} EsHostMemory;

const char *es_host_memory_name (EsHostMemory memory); /* "none", "pinned", "staged", "pageable", "mixed" */

/* What the hardware counted while a run's kernels ran (CUPTI's range
 * profiler, one range a kernel launch: DESIGN.md §3), over one kernel's
 * launches or over every kernel of the run. Read only when the engine was
 * asked for them (es_engine_set_counters); all 0 otherwise. */
typedef struct {
  bool measured;                /* the figures below were read from the hardware */
  int launches;                 /* kernel launches (profiler ranges) they cover */
  double dram_read_bytes;       /* dram__bytes_read.sum */
  double dram_write_bytes;      /* dram__bytes_write.sum */
  double l2_hit_rate;           /* lts__t_sector_hit_rate, 0..1 */
  double shared_bank_conflicts; /* l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld + _op_st */
  double achieved_occupancy;    /* sm__warps_active.avg.pct_of_peak_sustained_active, 0..1 */
  double local_bytes;           /* l1tex__t_bytes_pipe_lsu_mem_local_op_ld + _op_st: spills, local arrays */
  /* What the two rates are over, which weighs them when launches are
   * added: the L2 sectors looked up (lts__t_sectors.sum) and the SMs'
   * active cycles (sm__cycles_active.sum). */
  double l2_sectors, active_cycles;
} EsCounters;

/* Adds `part`'s launches into `sum`: bytes, conflicts, sectors and cycles
 * summed, the L2 hit rate weighed by the sectors and the occupancy by the
 * active cycles, so that the sum's rates are those of all its launches. */
void es_counters_add (EsCounters *sum, const EsCounters *part);

/* One kernel of a CUDA run as the device holds it: cudaFuncGetAttributes
 * and the occupancy API, read once per kernel and launch shape and cached. */
typedef struct {
  const char *name; /* "pair-counter entropy kernel" (static) */
  unsigned grid[3], block[3];
  size_t dynamic_shared; /* bytes a block, given at launch */
  size_t static_shared;  /* bytes a block, declared in the kernel */
  int registers;         /* a thread */
  size_t local_bytes;    /* local memory a thread: spills and local arrays */
  int blocks_per_sm;     /* resident blocks an SM holds */
  double occupancy;      /* resident threads over the SM's most, 0..1 */
  EsCounters counters;   /* over every launch of this kernel in the run, when asked for */
} EsKernelInfo;

/* The kernels one run's metrics keep (the first launched of each). */
#define ES_METRICS_KERNELS 4

/* Why a run took its time, beside the time (DESIGN.md §3): the variant's
 * memory model, the bandwidth it achieved against the device's peak, the
 * kernels' resources and the transfers. Filled by every es_run; the
 * figures a backend does not have are 0. */
typedef struct {
  double pixels;       /* pixels (voxels) the run computed */
  EsTraffic model;     /* the memory model of the code that ran (EsVariant.memory, EsOpInfo.cpu_memory) */
  double achieved_gbs; /* (model read + write bytes) / kernel time, GB/s (10^9 bytes) */
  /* The peak: the measured copy bandwidth (CUDA: es_engine_floor's copy
   * kernel; CPU: a parallel memcpy), 0 until es_engine_measure_peak has
   * run; and the datasheet's (CUDA: 2 × memory clock × bus width). */
  double copy_gbs, datasheet_gbs;
  double copy_share, datasheet_share; /* achieved over each peak, 0..~1; 0 without it */
  int n_kernels;
  EsKernelInfo kernels[ES_METRICS_KERNELS];
  int main_kernel; /* the kernel that carries the variant's lesson (an index of kernels) */
  EsHostMemory host_memory;
  double upload_bytes, download_bytes; /* what crossed PCIe */
  double upload_gbs, download_gbs;     /* over upload_ms and download_ms */
  /* The hardware counters over every kernel of the run, when the engine
   * was asked for them; else (or where they could not be read) `measured`
   * is false and, when they were asked for, counters_note says why in one
   * sentence (an English msgid where it is one of compute/'s own, so that
   * a caller can translate it; CUPTI's own words otherwise). */
  EsCounters counters;
  char counters_note[192];
} EsMetrics;

typedef struct {
  double upload_ms;        /* host -> device (CUDA events); 0 on the CPU */
  double kernel_ms;        /* the kernels alone (CUDA events, or wall on the CPU) */
  double download_ms;      /* device -> host (CUDA events); 0 on the CPU */
  double wall_ms;          /* the whole es_run, as the caller sees it */
  EsBackendChoice backend; /* the backend that produced the result */
  const char *variant;     /* id of the variant that ran ("cpu" on the CPU) */
  bool fell_back;          /* CUDA failed during the job and the CPU finished it */
  EsMetrics metrics;
} EsTiming;

/* Adds a part of a run (a plane, a chunk) into `total`: times, bytes and
 * transfers summed, bandwidths recomputed from the sums, the resources and
 * peaks of the latest part kept. */
void es_timing_accumulate (EsTiming *total, const EsTiming *part);
/* Recomputes the metrics' rates (achieved GB/s and its shares, PCIe GB/s)
 * from the bytes and times, after a caller replaced the times (medians). */
void es_timing_update_rates (EsTiming *timing);

/* Milliseconds of the monotonic clock: every wall time the program reports
 * (EsTiming, the CLI's stages, the Python module's calls) is a difference of two. */
double es_monotonic_ms (void);

/* How a CUDA variant moves an image between host and device: the transfer
 * lessons differ from the default only in this. */
typedef enum {
  ES_TRANSFER_DEFAULT,  /* page-locked images by DMA, others through pinned staging */
  ES_TRANSFER_PAGEABLE, /* cudaMemcpy straight from and to the image, whatever its memory */
  ES_TRANSFER_PER_CALL, /* device buffers allocated and freed by every run */
  ES_TRANSFER_STREAMS,  /* bands of rows: upload, kernels and download overlap */
} EsTransfer;

/* Launches one variant's kernels on a frame (compute/cuda only). */
struct EsCuda;
struct EsCudaFrame;
typedef bool (*EsCudaLaunch) (struct EsCuda *cuda, const struct EsCudaFrame *frame, const EsJob *job, EsError *error);

/* One kernel variant: one lesson about GPU memory, one row of its
 * operation's variant table. Static storage. */
typedef struct {
  const char *id;     /* "shared-tile" */
  const char *label;  /* "Shared-memory tile" */
  const char *lesson; /* one sentence, shown as a tooltip */
  const char *source; /* where the lesson comes from */
  bool is_default;
  EsTransfer transfer;
  /* NULL for the variants of 3-D windows: they move a volume's planes
   * themselves (EsCudaOp.run_volume). */
  EsCudaLaunch launch;
  /* Why the variant cannot compute `job` (one static sentence), or NULL when
   * it can; a NULL hook: every job of its operation. */
  const char *(*unsupported) (const EsJob *job);
  /* The bytes its kernels move for a job it can compute (DRAM and, where
   * that is the bound, shared memory), as counted from its code: every
   * variant has one, written beside its kernels. */
  EsMemoryModel memory;
} EsVariant;

/* The CUDA variants of an operation compiled into this build (n = 0 without
 * CUDA). The CPU backend has a single implementation per operation. */
const EsVariant *es_variants (EsOp op, size_t *n);
/* The variant named id, the default one for id == NULL, or NULL. */
const EsVariant *es_variant_find (EsOp op, const char *id);
/* Why `variant` cannot compute `job` (for example a window shape its
 * kernels do not have), or NULL when it can: for `info` and the window. */
const char *es_variant_unsupported (const EsVariant *variant, const EsJob *job);
/* Why `variant` (one of job->op's) runs `job`, which it can compute, far
 * from its best speed (for example "fast" beyond its pair counters), or
 * NULL: one clause for `info` and the window. */
const char *es_variant_slow_path (const EsVariant *variant, const EsJob *job);
/* The variant that runs `job`: the one it names (or the default) when that
 * one can, else the first of the table that can (the general kernel), so
 * that no job gets a wrong result; NULL for an unknown name or no CUDA. */
const EsVariant *es_variant_for_job (const EsJob *job);

typedef struct EsEngine EsEngine;

/* AUTO picks CUDA when a usable device exists, else the CPU, keeping the
 * reason. CUDA fails with ES_ERROR_UNAVAILABLE (and that reason) when CUDA
 * cannot be used. CPU never fails for lack of a GPU. */
EsEngine *es_engine_new (EsBackendChoice choice, EsError *error);
/* The same on the CUDA devices listed (n_devices > 0; numbered as CUDA
 * numbers them), or with n_devices = 0 on those of the environment variable
 * ES_DEVICES ("0,1"), else on every usable device. With several devices a
 * job runs in row bands spread over them, one host thread per device; an
 * image whose device buffers exceed a GPU's free memory (or the budget in
 * bytes that ES_GPU_MEMORY_BUDGET sets) runs in bands too. Results are the
 * same either way. */
EsEngine *es_engine_new_with_devices (EsBackendChoice choice, const int *devices, int n_devices, EsError *error);
void es_engine_free (EsEngine *engine);
/* An AUTO engine opens CUDA on a thread of its own from es_engine_new on,
 * and runs jobs under 8192² pixels on the CPU until CUDA is open; the
 * functions below that report the backend wait for the open. True while it
 * is still opening: es_engine_free then waits for it, which a program about
 * to exit may skip (entroscope-cli ends with _exit then). */
bool es_engine_opening (EsEngine *engine);

/* "CUDA: NVIDIA H100 80GB HBM3 (sm_90)", "CUDA: 2 × NVIDIA H200 (...)" or
 * "CPU: OpenMP, 2 threads (no CUDA device: ...)" */
const char *es_engine_describe (EsEngine *engine);
EsBackendChoice es_engine_backend (EsEngine *engine);
/* Why CUDA is not in use (never NULL; "" while CUDA is in use). After a
 * sticky device error it says so: CUDA stays off for the process. */
const char *es_engine_cuda_reason (EsEngine *engine);
/* True when this build contains the CUDA backend at all. */
bool es_engine_cuda_compiled (void);

/* Runs one job. `out` is (re)allocated by es_run to the right size and
 * format; pass a zeroed EsImage the first time and reuse it afterwards.
 * A CUDA failure during the job finishes it on the CPU (timing->fell_back,
 * and es_engine_take_notice() returns the reason once). */
bool es_run (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing, EsError *error);
/* The same, cancellable and reporting progress through `control` (may be
 * NULL): once it is cancelled, the run stops within a band or a row and
 * fails with ES_ERROR_CANCELLED; `out` then holds nothing meaningful. */
bool es_run_controlled (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing,
                        EsControl *control, EsError *error);

/* Device arrays (EsImage.memory ES_MEMORY_CUDA): es_run computes a job on
 * them on their own device, with the result (allocated by the caller) and
 * any mask on the same device, and never through the host; see
 * validate_device_images in es-engine.c for what is refused. Where the
 * result names its library's stream (EsImage.cuda_stream), es_run orders
 * the job on that stream (it runs there, or the stream waits for it) and
 * returns without waiting itself (the Timing's kernel_ms is then NaN);
 * otherwise it waits for its own work, so that the result is ready for any
 * stream. These make its next job on `device` wait for the work
 * queued so far on a producer's stream (`stream` as
 * __cuda_array_interface__ gives it: 1 the legacy default, 2 the
 * per-thread default stream), and give the stream it runs on (a DLPack
 * consumer's stream; false when it does not compute on that device). */
bool es_engine_wait_stream (EsEngine *engine, int device, uintptr_t stream, EsError *error);
bool es_engine_cuda_stream (EsEngine *engine, int device, uintptr_t *stream);
/* The CUDA device whose memory `pointer` points into; false for host
 * memory, an unknown pointer, or a build without CUDA. */
bool es_engine_pointer_device (const void *pointer, int *device);

/* Allocates a zeroed volume of `planes` tightly packed planes (1: a 2-D
 * image) in the memory the active backend moves fastest: page-locked host
 * memory on CUDA (uploads and downloads then need no staging copy), plain
 * memory (es_image_alloc_volume) on the CPU. Freed with es_image_clear(),
 * also after the engine is gone. es_run() allocates its outputs this way. */
bool es_engine_volume_alloc (EsEngine *engine, EsImage *image, int width, int height, int planes, EsFormat format,
                             int depth, EsError *error);
/* The one-plane case of es_engine_volume_alloc. */
bool es_engine_image_alloc (EsEngine *engine, EsImage *image, int width, int height, EsFormat format, int depth,
                            EsError *error);

/* A message for the user about the last fallback, returned once, else NULL. */
const char *es_engine_take_notice (EsEngine *engine);

typedef enum {
  /* A plain copy kernel that reads in_bytes and writes out_bytes on the
   * device: the floor that a memory-bound kernel cannot beat. */
  ES_FLOOR_COPY,
  /* A page-locked upload of in_bytes followed by a download of out_bytes:
   * the floor of an end-to-end run. */
  ES_FLOOR_TRANSFER,
} EsFloorKind;

/* Benchmark helper: the median time (CUDA events, after a warm-up) of
 * `repeats` runs of a floor. Fails without CUDA. */
bool es_engine_floor (EsEngine *engine, EsFloorKind kind, size_t in_bytes, size_t out_bytes, int repeats,
                      double *median_ms, EsError *error);

/* Measures the backend's peak bandwidth once (CUDA: the copy floor of
 * 256 MiB in and out; CPU: a parallel memcpy of 64 MiB) and keeps it,
 * so that every later run's metrics carry copy_gbs and copy_share. It
 * takes a fraction of a second, and never happens unless asked for:
 * `--metrics`, `bench`. */
bool es_engine_measure_peak (EsEngine *engine, EsError *error);

/* Hardware counters (EsCounters) for this engine's runs from now on (on)
 * or no more (off). A CUDA run then launches its kernels again after the
 * timed pass, on the same buffers, under CUPTI's range profiler (one range
 * a launch), once for each pass that the counters take, each pass from an
 * L2 emptied of dirty lines; its times stay those of the normal path (the
 * wall time includes the passes). CUPTI is loaded and opened at the first
 * run that asks, never before. Where the counters cannot be read (a CPU run, no CUPTI in the
 * build or on the machine, counters reserved to administrators by the
 * driver, a run in bands or over several GPUs), the run still succeeds
 * and its metrics' counters_note says why. */
void es_engine_set_counters (EsEngine *engine, bool on);
bool es_engine_counters (EsEngine *engine);
/* Copies the counters of `counted` (a run of the same job with counters
 * on) into `timing`'s metrics, for callers that time runs without them
 * and count one run apart (the benchmark's medians). */
void es_metrics_take_counters (EsMetrics *metrics, const EsMetrics *counted);

/* Number of OpenMP threads the CPU backend uses. */
int es_cpu_thread_count (void);

#ifdef __cplusplus
}
#endif
