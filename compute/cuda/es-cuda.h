/* SPDX-License-Identifier: MIT */
/* The CUDA backend behind a C interface; implemented by the .cu files beside it. */
#pragma once

#include "../es-engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct EsCuda EsCuda;

/* Opens the listed devices (n_devices > 0), or, with none listed, those of
 * the environment variable ES_DEVICES ("0,1"), else every usable device.
 * Jobs then run in row bands spread over all of them. NULL when none
 * opens, with a reason such as "no CUDA driver", "no CUDA device", "CUDA
 * driver too old (driver 12.2, runtime 13.0)" written to reason. */
EsCuda *es_cuda_open_devices (const int *devices, int n_devices, char *reason, size_t reason_size);
void es_cuda_close (EsCuda *cuda);
/* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 80 GiB)", or with several devices
 * "2 × NVIDIA H200 (sm_90, 132 SMs, 140 GiB)" */
const char *es_cuda_device_name (EsCuda *cuda);

/* The CUDA entry of an operation, referenced by its row of the operation
 * table (es-ops.c); each .cu file of an operation defines one. */
struct EsCudaOp {
  const EsVariant *variants; /* the variant table: exactly one is_default */
  size_t n_variants;
  /* The kernels read a u8 levels buffer that a first kernel fills. */
  bool uses_levels;
  /* Once per device, at open: what the op's kernels need on the device
   * beyond the shared tables (constant memory, shared-memory limits), or
   * NULL. */
  bool (*init) (EsCuda *cuda, EsError *error);
  /* ES_TRANSFER_STREAMS: the default kernels on output rows [y_begin,
   * y_end) only, reading input rows up to the op's halo beyond them; with
   * uses_levels, first quantizing input rows [q_begin, q_end). NULL when no
   * variant overlaps transfers in streams. */
  bool (*launch_rows) (EsCuda *cuda, const struct EsCudaFrame *frame, const EsJob *job, int y_begin, int y_end,
                       int q_begin, int q_end, EsError *error);
  /* Ops with EsOpInfo.whole_image, in bands: add a band's 256-bin
   * statistic into the device's bins (cuda->histogram, cleared before the
   * first band); turn the devices' bins, summed on the host, into a
   * 256-entry table; map a band through that table (uploaded into
   * cuda->lut). */
  bool (*reduce_band) (EsCuda *cuda, const struct EsCudaFrame *frame, EsError *error);
  void (*combine) (const uint64_t bins[256], uint64_t pixels, uint8_t table[256]);
  bool (*apply_band) (EsCuda *cuda, const struct EsCudaFrame *frame, EsError *error);
  /* Ops with EsOpInfo.tile_passes (a halo of tiles), in bands: the CPU's
   * two passes (EsTilePasses) on the devices. `whole` is the image's
   * frame (its geometry), `band` a frame of image rows [y_origin,
   * y_origin + height). tile_sizes: the 32-bit counts of the tiles'
   * statistics (cuda->tile_counts, cleared before the first band) and the
   * bytes of their maps (cuda->tile_maps) for a job on a width × height
   * image of `format`, which one device holds besides its bands (a
   * one-shot run besides the image); count_band adds a band's rows,
   * the variant's way, to its device's counts; build_maps turns the
   * counts, summed over the devices, into the maps on one device, which
   * are then copied to the others; blend_band computes a band's output
   * rows from its input rows and the maps. */
  void (*tile_sizes) (const EsJob *job, int width, int height, EsFormat format, size_t *counts, size_t *map_bytes);
  bool (*count_band) (EsCuda *cuda, const EsVariant *variant, const EsJob *job, const struct EsCudaFrame *whole,
                      const struct EsCudaFrame *band, EsError *error);
  bool (*build_maps) (EsCuda *cuda, const EsJob *job, const struct EsCudaFrame *whole, EsError *error);
  bool (*blend_band) (EsCuda *cuda, const EsJob *job, const struct EsCudaFrame *whole, const struct EsCudaFrame *band,
                      EsError *error);
  /* Pixels of border to pad the frame with on every side (0: none) when
   * `variant` computes `job`'s border mode as clip on a padded frame (the
   * frame's pad, filled by es_cuda_fill_border); NULL: never. */
  int (*frame_pad) (const EsJob *job, const EsVariant *variant);
  /* Why `variant`, which can compute `job`, computes it on a slow path (one
   * static clause, from the figures of PERFORMANCE.md), or NULL; a NULL
   * hook: no variant of the op has one (es_variant_slow_path). */
  const char *(*slow_path) (const EsJob *job, const EsVariant *variant);
  /* The launchers compute volumetric jobs (es_job_is_volumetric: a 3-D
   * window, one histogram of a whole volume) on a volume as a whole. False:
   * the engine computes those on the CPU and says why; 2-D jobs on a
   * volume run here plane by plane either way. */
  bool volumes;
  /* With volumes: runs a volumetric job (a 3-D window on a volume or on a
   * one-plane image) with `variant`, one of those whose launch is NULL,
   * moving the planes itself; times as es_cuda_run's upload, kernels,
   * download. */
  bool (*run_volume) (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out,
                      float times[3], EsControl *control, EsError *error);
};

extern const EsCudaOp es_cuda_quantize;
extern const EsCudaOp es_cuda_entropy;
extern const EsCudaOp es_cuda_equalize;
extern const EsCudaOp es_cuda_sharpen;
extern const EsCudaOp es_cuda_clahe;

/* Runs a job; `out` is preallocated by the engine. Device buffers, pinned
 * staging and events are kept in `cuda` and reused between runs. On failure
 * returns false with the error set; es_cuda_is_broken() then says whether
 * the context is unusable for the rest of the process (a sticky error).
 * The engine has validated the job and the images and resolved the variant
 * (a row of the op's table, never NULL); this only asserts them. */
bool es_cuda_run (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out,
                  EsTiming *timing, EsControl *control, EsError *error);
bool es_cuda_is_broken (EsCuda *cuda);
/* Whether es_cuda_run reads the hardware counters of its kernels
 * (es_engine_set_counters): a pass of them after the timed one. */
void es_cuda_want_counters (EsCuda *cuda, bool on);

/* The engine's handle of CUDA device `device` (the first one or one of its
 * peers), or NULL when it did not open that device. */
EsCuda *es_cuda_on_device (EsCuda *cuda, int device);
/* The stream that runs this device's jobs, as an integer (a DLPack
 * consumer's stream). */
uintptr_t es_cuda_stream_handle (EsCuda *cuda);
/* Makes this device's next job wait for the work queued so far on the
 * producer's stream (a cudaStream_t as an integer; 1 and 2 name the legacy
 * and per-thread default streams, 0 nothing to wait for, as
 * __cuda_array_interface__ says). */
bool es_cuda_wait_stream (EsCuda *cuda, uintptr_t producer, EsError *error);
/* es_engine_pointer_device. */
bool es_cuda_pointer_device (const void *pointer, int *device);

/* Page-locked host memory for EsImage pixels (es_engine_image_alloc), freed
 * blocks cached process-wide for reuse;
 * es_cuda_host_free is the image's release function. */
void *es_cuda_host_alloc (EsCuda *cuda, size_t bytes, EsError *error);
void es_cuda_host_free (void *pixels);
/* Page-locks plain memory in place (false, and nothing changed, when it
 * is page-locked already or CUDA refuses), and undoes it. */
bool es_cuda_host_register (EsCuda *cuda, void *pixels, size_t bytes);
void es_cuda_host_unregister (void *pixels);

/* es_engine_floor on this device. */
bool es_cuda_floor (EsCuda *cuda, EsFloorKind kind, size_t in_bytes, size_t out_bytes, int repeats, double *median_ms,
                    EsError *error);

#ifdef __cplusplus
}
#endif
