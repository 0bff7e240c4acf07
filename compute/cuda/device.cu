/* SPDX-License-Identifier: MIT */
/* The CUDA devices: errors, grid sizes, the shared tables, kept buffers, opening and closing, fault injection, page-locked images. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "es-cuda-internal.h"
#include "../es-test-hooks.h"

/* ---- errors ---------------------------------------------------------------- */

/* Errors after which the context cannot be used again (the CUDA runtime
 * documents them as sticky: every later call returns them). */
static bool
error_is_sticky (cudaError_t status)
{
  switch (status)
    {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
    }
}

bool
es_cuda_check (EsCuda *cuda, cudaError_t status, const char *what, EsError *error)
{
  if (status == cudaSuccess)
    return true;

  /* Clear a non-sticky error, then wait for work already queued so that no
   * copy still reads a staging buffer that the next run refills. A sticky
   * error shows again here, whatever the first error was. */
  (void) cudaGetLastError ();
  cudaError_t drained = cudaDeviceSynchronize ();
  (void) cudaGetLastError ();
  if (error_is_sticky (status) || error_is_sticky (drained) || drained != cudaSuccess)
    cuda->broken = true;

  es_error_set (error, status == cudaErrorMemoryAllocation ? ES_ERROR_NO_MEMORY : ES_ERROR_COMPUTE,
                "CUDA %s: %s (%s)", what, cudaGetErrorString (status), cudaGetErrorName (status));
  return false;
}

unsigned
es_cuda_blocks (const EsCuda *cuda, size_t items, int block)
{
  /* One wave of resident blocks: grid-stride loops need no more, and the
   * histogram kernels merge once per block. */
  size_t wanted = es_cuda_div_up (items, (size_t) block);
  size_t cap = (size_t) cuda->sm_count * (size_t) (block < 2048 ? 2048 / block : 1);

  if (wanted > cap)
    wanted = cap;
  return wanted > 0 ? (unsigned) wanted : 1u;
}

/* ---- kernel resources ----------------------------------------------------- */

/* The cached resources of `kernel` at this shape, read from the driver the
 * first time; NULL when the driver does not answer or memory runs out (the
 * metrics then show no resources: never an error of the run). */
static const EsKernelResources *
kernel_resources (EsCuda *cuda, const void *kernel, unsigned threads, size_t dynamic_shared)
{
  for (int i = 0; i < cuda->n_resources; i++)
    {
      const EsKernelResources *r = &cuda->resources[i];
      if (r->kernel == kernel && r->threads == threads && r->dynamic_shared == dynamic_shared)
        return r;
    }
  cudaFuncAttributes attributes;
  int per_sm = 0;
  if (cudaFuncGetAttributes (&attributes, kernel) != cudaSuccess
      || cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel, (int) threads, dynamic_shared) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return NULL;
    }
  if (cuda->n_resources == cuda->resources_capacity)
    {
      const int capacity = cuda->resources_capacity > 0 ? 2 * cuda->resources_capacity : 32;
      EsKernelResources *grown
        = (EsKernelResources *) realloc (cuda->resources, (size_t) capacity * sizeof *grown);
      if (grown == NULL)
        return NULL;
      cuda->resources = grown;
      cuda->resources_capacity = capacity;
    }
  EsKernelResources *r = &cuda->resources[cuda->n_resources++];
  *r = (EsKernelResources){ kernel, threads, dynamic_shared, attributes.numRegs, attributes.sharedSizeBytes,
                            attributes.localSizeBytes, per_sm };
  return r;
}

/* The blocks of `kernel` an SM holds at once, from the cache (1 when the
 * driver does not say): asked of the driver at every launch, it took
 * microseconds of a call's host time before its kernels. */
static int
blocks_per_sm (EsCuda *cuda, const void *kernel, int block, size_t smem)
{
  const EsKernelResources *r = kernel_resources (cuda, kernel, (unsigned) block, smem);

  return r != NULL && r->blocks_per_sm > 0 ? r->blocks_per_sm : 1;
}

unsigned
es_cuda_resident_blocks (EsCuda *cuda, const void *kernel, int block, size_t smem, size_t items)
{
  size_t wanted = es_cuda_div_up (items, (size_t) block);
  size_t cap = (size_t) cuda->sm_count * (size_t) blocks_per_sm (cuda, kernel, block, smem);

  if (wanted > cap)
    wanted = cap;
  return wanted > 0 ? (unsigned) wanted : 1u;
}

int
es_cuda_strip_rows (EsCuda *cuda, const void *kernel, int block, size_t smem, int rows, int tiles,
                    int items_per_block, int min_rows)
{
  int per_wave = cuda->sm_count * blocks_per_sm (cuda, kernel, block, smem) * items_per_block / tiles;
  if (per_wave < 1)
    per_wave = 1;
  int strip = (int) es_cuda_div_up ((size_t) rows, (size_t) per_wave);
  return strip < min_rows ? min_rows : strip;
}

void
es_cuda_begin_kernels (EsCuda *cuda)
{
  cuda->n_run_kernels = 0;
  cuda->run_main_kernel = -1;
  cuda->run_counters = (EsCounters){};
  cuda->counters_note[0] = '\0';
}

void
es_cuda_want_counters (EsCuda *cuda, bool on)
{
  cuda->counters_wanted = on;
}


void
es_cuda_note_kernel (EsCuda *cuda, const void *kernel, dim3 grid, dim3 block, size_t dynamic_shared,
                     const char *name, bool main)
{
  const unsigned threads = block.x * block.y * block.z;
  int slot = 0;

  /* A kernel launched again (bands, strips of rows) keeps its first slot;
   * kernels past the first ES_METRICS_KERNELS are not kept. */
  while (slot < cuda->n_run_kernels && strcmp (cuda->run_kernels[slot].name, name) != 0)
    slot++;
#ifdef ES_HAVE_CUPTI
  if (cuda->counting)
    es_cuda_counted_launch (cuda, slot < ES_METRICS_KERNELS ? slot : -1);
#endif
  if (slot == ES_METRICS_KERNELS)
    return;
  EsKernelInfo *info = &cuda->run_kernels[slot];
  const EsKernelResources *r = kernel_resources (cuda, kernel, threads, dynamic_shared);
  *info = (EsKernelInfo){ name, { grid.x, grid.y, grid.z }, { block.x, block.y, block.z }, dynamic_shared, 0, 0, 0,
                          0, 0, {} };
  if (r != NULL)
    {
      info->static_shared = r->static_shared;
      info->registers = r->registers;
      info->local_bytes = r->local_bytes;
      info->blocks_per_sm = r->blocks_per_sm;
      info->occupancy = (double) r->blocks_per_sm * threads / (double) cuda->max_threads_per_sm;
    }
  if (slot == cuda->n_run_kernels)
    cuda->n_run_kernels++;
  if (main)
    cuda->run_main_kernel = slot;
}

/* ---- tables ---------------------------------------------------------------- */

static void
tables_compute (EsCudaTables *t)
{
  memset (t, 0, sizeof *t);
  for (int c = 1; c <= ES_CUDA_MAX_COUNT; c++)
    {
      double clnc = c * log ((double) c);
      t->clnc_fix[c] = (uint32_t) llround (ldexp (clnc, ES_CUDA_FIX_BITS));
      t->ln_n[c] = log ((double) c);
      t->inv_n_fix[c] = ldexp (1.0 / c, -ES_CUDA_FIX_BITS);
      t->clnc_fine[c] = (unsigned long long) llround (ldexp (clnc, ES_CUDA_FINE_BITS));
      t->inv_n_fine[c] = ldexp (1.0 / c, -ES_CUDA_FINE_BITS);
      if (c <= ES_CUDA_FAST_MAX_COUNT)
        t->ln_inv_f[c] = make_float2 ((float) log ((double) c), (float) (1.0 / c));
    }
  for (int k = 3; k <= ES_CUDA_FAST_MAX_WINDOW; k += 2)
    {
      const int radix = k * k + 1;
      float *pair = t->pair_f + ES_CUDA_PAIR_OFFSET (k);
      for (int e = 0; e < radix * radix; e++)
        {
          int even = e % radix, odd = e / radix;
          pair[e] = (float) ((even > 1 ? even * log ((double) even) : 0.0)
                             + (odd > 1 ? odd * log ((double) odd) : 0.0));
        }
    }
}

/* ---- buffers --------------------------------------------------------------- */

void
es_cuda_device_release (EsCuda *cuda, EsCudaBuffer *buffer)
{
  if (buffer->ptr != NULL && cuda->unwaited)
    {
      (void) cudaEventSynchronize (cuda->ev_handover);
      cuda->unwaited = false;
    }
  if (buffer->ptr != NULL)
    (void) cudaFree (buffer->ptr);
  buffer->ptr = NULL;
  buffer->size = 0;
}

static void
host_release (EsCudaBuffer *buffer)
{
  if (buffer->ptr != NULL)
    (void) cudaFreeHost (buffer->ptr);
  buffer->ptr = NULL;
  buffer->size = 0;
}

/* Every device allocation of a run goes through here, so that
 * ES_CUDA_FAULT=alloc can make the next one fail. */
static bool
device_alloc (EsCuda *cuda, void **ptr, size_t size, const char *what, EsError *error)
{
  void *p = NULL;

  *ptr = NULL;
  if (cuda->fault_alloc)
    {
      cuda->fault_alloc = false;
      char message[128];
      snprintf (message, sizeof message, "allocation of the %s (injected fault)", what);
      return es_cuda_check (cuda, cudaErrorMemoryAllocation, message, error);
    }
  ES_CUDA_TRY (cuda, cudaMalloc (&p, size), what, error);
  *ptr = p;
  return true;
}

bool
es_cuda_device_reserve (EsCuda *cuda, EsCudaBuffer *buffer, size_t size, const char *what, EsError *error)
{
  if (size == 0)
    size = 1;
  if (buffer->size >= size)
    return true;
  es_cuda_device_release (cuda, buffer);
  if (!device_alloc (cuda, &buffer->ptr, size, what, error))
    return false;
  buffer->size = size;
  return true;
}

void
es_cuda_release_band_buffers (EsCuda *cuda)
{
  for (int s = 0; s < ES_CUDA_OVERLAP_SLOTS; s++)
    {
      es_cuda_device_release (cuda, &cuda->band_in[s]);
      es_cuda_device_release (cuda, &cuda->band_lev[s]);
      es_cuda_device_release (cuda, &cuda->band_out[s]);
    }
}

bool
es_cuda_host_reserve (EsCuda *cuda, EsCudaBuffer *buffer, size_t size, const char *what, EsError *error)
{
  void *p = NULL;

  if (buffer->size >= size)
    return true;
  host_release (buffer);
  ES_CUDA_TRY (cuda, cudaHostAlloc (&p, size, cudaHostAllocDefault), what, error);
  buffer->ptr = p;
  buffer->size = size;
  return true;
}

/* ---- open and close -------------------------------------------------------- */

/* A kernel that proves the build has code for the device. */
static __global__ void
probe_kernel (void)
{
}

/* ES_CUDA_FAULT=launch launches it with an invalid block size (a clean,
 * non-sticky launch error); =sticky makes it write to an unmapped address,
 * an error that poisons the context. */
static __global__ void
fault_kernel (int *target)
{
  *(volatile int *) target = 1;
}

static void
version_text (int version, char *text, size_t size)
{
  snprintf (text, size, "%d.%d", version / 1000, (version % 1000) / 10);
}

/* The reason why CUDA cannot be used, from cudaGetDeviceCount's error. */
static void
open_failure_reason (cudaError_t status, char *reason, size_t reason_size)
{
  int driver = 0, runtime = 0;
  char driver_text[16], runtime_text[16];

  (void) cudaDriverGetVersion (&driver);
  (void) cudaRuntimeGetVersion (&runtime);
  (void) cudaGetLastError ();
  version_text (driver, driver_text, sizeof driver_text);
  version_text (runtime, runtime_text, sizeof runtime_text);

  if (driver == 0 && (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice
                      || status == cudaErrorInitializationError || status == cudaErrorStubLibrary))
    snprintf (reason, reason_size, "no CUDA driver");
  else if (status == cudaErrorStubLibrary)
    snprintf (reason, reason_size, "no CUDA driver (only its stub library is installed)");
  else if (status == cudaErrorInsufficientDriver)
    snprintf (reason, reason_size, "CUDA driver too old (driver %s, runtime %s)", driver_text, runtime_text);
  else if (status == cudaErrorNoDevice)
    snprintf (reason, reason_size, "no CUDA device");
  else
    snprintf (reason, reason_size, "CUDA error: %s", cudaGetErrorString (status));
}

/* True when this build has code for `device`; otherwise says why in reason. */
static bool
device_usable (int device, char *reason, size_t reason_size)
{
  cudaFuncAttributes attributes;
  cudaDeviceProp prop;

  if (cudaSetDevice (device) == cudaSuccess && cudaFuncGetAttributes (&attributes, probe_kernel) == cudaSuccess)
    return true;
  (void) cudaGetLastError ();
  if (cudaGetDeviceProperties (&prop, device) == cudaSuccess)
    snprintf (reason, reason_size, "no usable CUDA device (%s is sm_%d%d; this build needs a newer GPU)",
              prop.name, prop.major, prop.minor);
  else
    snprintf (reason, reason_size, "no usable CUDA device");
  (void) cudaGetLastError ();
  return false;
}

/* Parses "0,1" into devices; false on anything else. */
static bool
parse_devices (const char *text, int *devices, int *n)
{
  *n = 0;
  while (*text != '\0')
    {
      char *end;
      long d = strtol (text, &end, 10);
      if (end == text || d < 0 || d > 1023 || *n == ES_CUDA_MAX_DEVICES || (*end != ',' && *end != '\0'))
        return false;
      devices[(*n)++] = (int) d;
      text = *end == ',' ? end + 1 : end;
    }
  return *n > 0;
}

static void
read_faults (EsCuda *cuda)
{
  EsTestCudaFault fault = es_test_hook_cuda_fault ();

  cuda->fault_alloc = fault == ES_TEST_CUDA_FAULT_ALLOC;
  cuda->fault_launch = fault == ES_TEST_CUDA_FAULT_LAUNCH;
  cuda->fault_sticky = fault == ES_TEST_CUDA_FAULT_STICKY;
}

/* Stream, events, tables and the small fixed buffers. */
static bool
open_resources (EsCuda *cuda, EsError *error)
{
  EsCudaTables *host_tables;
  cudaDeviceProp prop;
  void *p;

  ES_CUDA_TRY (cuda, cudaGetDeviceProperties (&prop, cuda->device), "device query", error);
  cuda->sm_count = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
  cuda->total_memory = prop.totalGlobalMem;
  snprintf (cuda->name, sizeof cuda->name, "%.200s (sm_%d%d, %d SMs, %.0f GiB)", prop.name, prop.major, prop.minor,
            prop.multiProcessorCount, (double) prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  /* The datasheet bandwidth: two transfers a clock (DDR/HBM) of the bus.
   * cudaDeviceProp's memoryClockRate and memoryBusWidth are gone from
   * CUDA 13; the attributes remain. */
  int memory_khz = 0, bus_bits = 0, threads_per_sm = 0;
  if (cudaDeviceGetAttribute (&memory_khz, cudaDevAttrMemoryClockRate, cuda->device) != cudaSuccess
      || cudaDeviceGetAttribute (&bus_bits, cudaDevAttrGlobalMemoryBusWidth, cuda->device) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      memory_khz = bus_bits = 0;
    }
  cuda->datasheet_gbs = 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  if (cudaDeviceGetAttribute (&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, cuda->device) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      threads_per_sm = 2048;
    }
  cuda->max_threads_per_sm = threads_per_sm > 0 ? threads_per_sm : 2048;

  cudaStream_t *streams[] = { &cuda->stream, &cuda->up_stream, &cuda->down_stream };
  for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
    ES_CUDA_TRY (cuda, cudaStreamCreateWithFlags (streams[i], cudaStreamNonBlocking), "stream creation", error);
  cuda->home_stream = cuda->stream;
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_start), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_uploaded), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_computed), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_done), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_staged[0]), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_staged[1]), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreateWithFlags (&cuda->ev_producer, cudaEventDisableTiming), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreateWithFlags (&cuda->ev_handover, cudaEventDisableTiming), "event creation", error);
  for (int i = 0; i < ES_CUDA_MAX_CHUNKS; i++)
    {
      /* Uploads and band kernels are timed; downloads only order work. */
      ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_up[i]), "event creation", error);
      ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_k0[i]), "event creation", error);
      ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_k1[i]), "event creation", error);
      ES_CUDA_TRY (cuda, cudaEventCreateWithFlags (&cuda->ev_down[i], cudaEventDisableTiming), "event creation",
                   error);
    }

  ES_CUDA_TRY (cuda, cudaMalloc (&p, sizeof (EsCudaTables)), "allocation of the entropy tables", error);
  cuda->tables = (EsCudaTables *) p;
  ES_CUDA_TRY (cuda, cudaMalloc (&p, 257 * sizeof (unsigned long long)), "allocation of the histogram", error);
  cuda->histogram = (unsigned long long *) p;
  ES_CUDA_TRY (cuda, cudaMalloc (&p, 256), "allocation of the LUT", error);
  cuda->lut = (uint8_t *) p;

  host_tables = (EsCudaTables *) malloc (sizeof *host_tables);
  if (host_tables == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the entropy tables");
  tables_compute (host_tables);
  cudaError_t status = cudaMemcpy (cuda->tables, host_tables, sizeof *host_tables, cudaMemcpyHostToDevice);
  free (host_tables);
  ES_CUDA_TRY (cuda, status, "upload of the entropy tables", error);

  /* Each operation's own setup, such as entropy's constant-memory table. */
  for (int op = 0; op < ES_N_OPS; op++)
    {
      const EsCudaOp *entry = es_op_info ((EsOp) op)->cuda;
      if (entry->init != NULL && !entry->init (cuda, error))
        return false;
    }
  return true;
}

/* One device's context: streams, events, tables; NULL with a reason. */
static EsCuda *
open_one (int device, char *reason, size_t reason_size)
{
  EsError error = { ES_OK, "" };
  EsCuda *cuda = (EsCuda *) calloc (1, sizeof *cuda);

  if (cuda == NULL)
    {
      snprintf (reason, reason_size, "out of host memory");
      return NULL;
    }
  cuda->device = device;
  if (!es_cuda_check (cuda, cudaSetDevice (device), "device selection", &error) || !open_resources (cuda, &error))
    {
      snprintf (reason, reason_size, "%s", error.message);
      es_cuda_close (cuda);
      return NULL;
    }
  return cuda;
}

EsCuda *
es_cuda_open_devices (const int *devices, int n_devices, char *reason, size_t reason_size)
{
  EsCuda *cuda = NULL;
  int count = 0, list[ES_CUDA_MAX_DEVICES], n = 0;
  const char *env = getenv ("ES_DEVICES");
  cudaError_t status;

  if (reason_size > 0)
    reason[0] = '\0';
  if (n_devices < 0 || n_devices > ES_CUDA_MAX_DEVICES)
    {
      snprintf (reason, reason_size, "cannot use %d CUDA devices (at most %d)", n_devices, ES_CUDA_MAX_DEVICES);
      return NULL;
    }
  status = cudaGetDeviceCount (&count);
  if (status != cudaSuccess)
    {
      open_failure_reason (status, reason, reason_size);
      return NULL;
    }
  if (count == 0)
    {
      snprintf (reason, reason_size, "no CUDA device");
      return NULL;
    }

  if (n_devices > 0)
    memcpy (list, devices, (size_t) n_devices * sizeof *list), n = n_devices;
  else if (env != NULL && env[0] != '\0' && !parse_devices (env, list, &n))
    {
      snprintf (reason, reason_size, "ES_DEVICES=\"%.60s\" is not a list of device numbers such as 0,1", env);
      return NULL;
    }
  if (n > 0)
    {
      for (int i = 0; i < n; i++)
        {
          for (int j = 0; j < i; j++)
            if (list[j] == list[i])
              {
                snprintf (reason, reason_size, "CUDA device %d is listed twice", list[i]);
                return NULL;
              }
          if (list[i] < 0 || list[i] >= count)
            {
              snprintf (reason, reason_size, "there is no CUDA device %d (this host has %d)", list[i], count);
              return NULL;
            }
          if (!device_usable (list[i], reason, reason_size))
            return NULL;
        }
    }
  else
    for (int device = 0; device < count && n < ES_CUDA_MAX_DEVICES; device++)
      if (device_usable (device, n == 0 && device == 0 ? reason : NULL, n == 0 && device == 0 ? reason_size : 0))
        list[n++] = device;
  if (n == 0)
    return NULL;

  for (int i = 0; i < n; i++)
    {
      EsCuda *one = open_one (list[i], reason, reason_size);
      if (one == NULL)
        {
          es_cuda_close (cuda);
          return NULL;
        }
      if (cuda == NULL)
        cuda = one;
      else
        cuda->peers[cuda->n_peers++] = one;
    }
  if (reason_size > 0)
    reason[0] = '\0';

  /* "2 × NVIDIA H200 (...)" when the devices are alike, else each one. */
  bool alike = true;
  for (int i = 0; i < cuda->n_peers; i++)
    alike = alike && strcmp (cuda->peers[i]->name, cuda->name) == 0;
  if (cuda->n_peers == 0)
    snprintf (cuda->description, sizeof cuda->description, "%s", cuda->name);
  else if (alike)
    snprintf (cuda->description, sizeof cuda->description, "%d × %s", cuda->n_peers + 1, cuda->name);
  else
    {
      size_t used = (size_t) snprintf (cuda->description, sizeof cuda->description, "%s", cuda->name);
      for (int i = 0; i < cuda->n_peers && used < sizeof cuda->description; i++)
        used += (size_t) snprintf (cuda->description + used, sizeof cuda->description - used, " + %s",
                                   cuda->peers[i]->name);
    }
  read_faults (cuda);
  (void) cudaSetDevice (cuda->device);
  return cuda;
}

void
es_cuda_close (EsCuda *cuda)
{
  if (cuda == NULL)
    return;
  for (int i = 0; i < cuda->n_peers; i++)
    es_cuda_close (cuda->peers[i]);
  (void) cudaSetDevice (cuda->device);
  cudaStream_t streams[] = { cuda->home_stream, cuda->up_stream, cuda->down_stream };
  for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
    if (streams[i] != NULL)
      (void) cudaStreamSynchronize (streams[i]);
  es_cuda_device_release (cuda, &cuda->d_in);
  es_cuda_device_release (cuda, &cuda->d_lev);
  es_cuda_device_release (cuda, &cuda->d_out);
  host_release (&cuda->h_in);
  host_release (&cuda->h_out);
  for (int s = 0; s < ES_CUDA_OVERLAP_SLOTS; s++)
    {
      host_release (&cuda->band_h_in[s]);
      host_release (&cuda->band_h_out[s]);
    }
  es_cuda_release_band_buffers (cuda);
  EsCudaBuffer *scratch[] = { &cuda->general_clnc, &cuda->volume_tables, &cuda->general_bins, &cuda->general_spans,
                              &cuda->general_mask, &cuda->general_binned, &cuda->general_counts,
                              &cuda->tile_counts, &cuda->tile_maps, &cuda->counters_sweep };
  for (size_t i = 0; i < sizeof scratch / sizeof scratch[0]; i++)
    es_cuda_device_release (cuda, scratch[i]);
  if (cuda->tables != NULL)
    (void) cudaFree (cuda->tables);
  if (cuda->histogram != NULL)
    (void) cudaFree (cuda->histogram);
  if (cuda->lut != NULL)
    (void) cudaFree (cuda->lut);
  cudaEvent_t *events[] = { &cuda->ev_start,     &cuda->ev_uploaded,  &cuda->ev_computed, &cuda->ev_done,
                            &cuda->ev_staged[0], &cuda->ev_staged[1], &cuda->ev_producer, &cuda->ev_handover };
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
    if (*events[i] != NULL)
      (void) cudaEventDestroy (*events[i]);
  for (int i = 0; i < ES_CUDA_MAX_CHUNKS; i++)
    {
      cudaEvent_t band[] = { cuda->ev_up[i], cuda->ev_k0[i], cuda->ev_k1[i], cuda->ev_down[i] };
      for (size_t k = 0; k < sizeof band / sizeof band[0]; k++)
        if (band[k] != NULL)
          (void) cudaEventDestroy (band[k]);
    }
  for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
    if (streams[i] != NULL)
      (void) cudaStreamDestroy (streams[i]);
  (void) cudaGetLastError ();
  free (cuda->resources);
  free (cuda);
}

const char *
es_cuda_device_name (EsCuda *cuda)
{
  return cuda != NULL ? cuda->description : "";
}

EsCuda *
es_cuda_on_device (EsCuda *cuda, int device)
{
  if (cuda == NULL || cuda->device == device)
    return cuda;
  for (int i = 0; i < cuda->n_peers; i++)
    if (cuda->peers[i]->device == device)
      return cuda->peers[i];
  return NULL;
}

bool
es_cuda_pointer_device (const void *pointer, int *device)
{
  cudaPointerAttributes attributes;

  if (cudaPointerGetAttributes (&attributes, pointer) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return false;
    }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    return false;
  *device = attributes.device;
  return true;
}

uintptr_t
es_cuda_stream_handle (EsCuda *cuda)
{
  return (uintptr_t) cuda->home_stream;
}

cudaStream_t
es_cuda_array_stream (uintptr_t handle)
{
  return handle == 1 ? cudaStreamLegacy : handle == 2 ? cudaStreamPerThread : (cudaStream_t) handle;
}

bool
es_cuda_wait_stream (EsCuda *cuda, uintptr_t producer, EsError *error)
{
  cudaStream_t stream = es_cuda_array_stream (producer);

  if (producer == 0 || producer == (uintptr_t) cuda->stream)
    return true;
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_producer, stream), "producer stream event", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (cuda->stream, cuda->ev_producer, 0), "producer stream wait", error);
  return true;
}

bool
es_cuda_is_broken (EsCuda *cuda)
{
  if (cuda == NULL)
    return false;
  for (int i = 0; i < cuda->n_peers; i++)
    if (cuda->peers[i]->broken)
      return true;
  return cuda->broken;
}

/* ---- fault injection -------------------------------------------------------- */

bool
es_cuda_inject_launch_fault (EsCuda *cuda, EsError *error)
{
  if (cuda->fault_launch)
    {
      cuda->fault_launch = false;
      fault_kernel<<<1, 2048, 0, cuda->stream>>> (NULL);  /* more threads than a block may have */
      ES_CUDA_LAUNCHED (cuda, "kernel launch (injected fault)", error);
    }
  if (cuda->fault_sticky)
    {
      cuda->fault_sticky = false;
      fault_kernel<<<1, 1, 0, cuda->stream>>> ((int *) (uintptr_t) 0x10);  /* never mapped */
      ES_CUDA_LAUNCHED (cuda, "kernel launch (injected fault)", error);
    }
  return true;
}

/* ---- page-locked images ------------------------------------------------------ */

/* Page-locking memory costs far more than the kernels (cudaHostAlloc maps
 * and pins every page), and the window allocates a fresh result on every
 * parameter change because its results are immutable. Freed blocks are
 * therefore kept in a small process-wide cache and handed out again. Each
 * block starts with a header that records its capacity; the pixels follow
 * at a 256-byte offset, which keeps them aligned for vector loads and DMA. */
enum { HOST_HEADER = 256, HOST_CACHE_BLOCKS = 8 };
static const size_t host_cache_cap = (size_t) 4 << 30;

typedef struct {
  size_t capacity;   /* bytes after the header */
} HostBlock;

static pthread_mutex_t host_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static HostBlock *host_cache[HOST_CACHE_BLOCKS];
static size_t host_cache_bytes;

/* The smallest cached block that holds `bytes` without wasting more than
 * half of it, or NULL. */
static HostBlock *
host_cache_take (size_t bytes)
{
  int best = -1;

  pthread_mutex_lock (&host_cache_lock);
  for (int i = 0; i < HOST_CACHE_BLOCKS; i++)
    if (host_cache[i] != NULL && host_cache[i]->capacity >= bytes && host_cache[i]->capacity / 2 <= bytes
        && (best < 0 || host_cache[i]->capacity < host_cache[best]->capacity))
      best = i;
  HostBlock *block = best >= 0 ? host_cache[best] : NULL;
  if (block != NULL)
    {
      host_cache[best] = NULL;
      host_cache_bytes -= block->capacity;
    }
  pthread_mutex_unlock (&host_cache_lock);
  return block;
}

static bool
host_cache_put (HostBlock *block)
{
  bool kept = false;

  pthread_mutex_lock (&host_cache_lock);
  for (int i = 0; i < HOST_CACHE_BLOCKS && !kept; i++)
    if (host_cache[i] == NULL && host_cache_bytes + block->capacity <= host_cache_cap)
      {
        host_cache[i] = block;
        host_cache_bytes += block->capacity;
        kept = true;
      }
  pthread_mutex_unlock (&host_cache_lock);
  return kept;
}

void *
es_cuda_host_alloc (EsCuda *cuda, size_t bytes, EsError *error)
{
  HostBlock *block = host_cache_take (bytes);

  if (block == NULL)
    {
      void *p = NULL;

      if (!es_cuda_check (cuda, cudaSetDevice (cuda->device), "device selection", error)
          || !es_cuda_check (cuda, cudaHostAlloc (&p, HOST_HEADER + bytes, cudaHostAllocPortable),
                             "page-locked image", error))
        return NULL;
      block = (HostBlock *) p;
      block->capacity = bytes;
    }
  memset ((char *) block + HOST_HEADER, 0, bytes);
  return (char *) block + HOST_HEADER;
}

void
es_cuda_host_free (void *pixels)
{
  HostBlock *block;

  if (pixels == NULL)
    return;
  block = (HostBlock *) ((char *) pixels - HOST_HEADER);
  /* The image may outlive a context poisoned by a sticky error: nothing to
   * report then, the process ends soon enough. */
  if (!host_cache_put (block) && cudaFreeHost (block) != cudaSuccess)
    (void) cudaGetLastError ();
}

/* ---- memory page-locked in place (es-engine.c's one-shot runs) ------------- */

/* Fresh page-locked memory costs about 0.5 ms per MB (cudaHostAlloc maps
 * and pins every page one by one); plain memory that the CPU has already
 * touched on every core is locked in place for a tenth of that. */
bool
es_cuda_host_register (EsCuda *cuda, void *pixels, size_t bytes)
{
  if (cudaSetDevice (cuda->device) == cudaSuccess
      && cudaHostRegister (pixels, bytes, cudaHostRegisterPortable) == cudaSuccess)
    return true;
  /* Already page-locked, or refused: the run stages it as before. */
  (void) cudaGetLastError ();
  return false;
}

void
es_cuda_host_unregister (void *pixels)
{
  if (cudaHostUnregister (pixels) != cudaSuccess)
    (void) cudaGetLastError ();
}
