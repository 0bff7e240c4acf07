/* The CUDA backend: device choice, buffers kept between runs, transfers (direct, staged, overlapped in streams) and their timing, fault injection, the floors. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "es-cuda-internal.h"
#include "../es-definitions.h"

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

unsigned
es_cuda_resident_blocks (const EsCuda *cuda, const void *kernel, int block, size_t smem, size_t items)
{
  int per_sm = 0;
  size_t wanted = es_cuda_div_up (items, (size_t) block);
  size_t cap;

  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, kernel, block, smem) != cudaSuccess || per_sm < 1)
    {
      (void) cudaGetLastError ();
      per_sm = 1;
    }
  cap = (size_t) cuda->sm_count * (size_t) per_sm;
  if (wanted > cap)
    wanted = cap;
  return wanted > 0 ? (unsigned) wanted : 1u;
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

static void
device_release (EsCudaBuffer *buffer)
{
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

/* Grows a kept device buffer; the old contents are not preserved. */
static bool
device_reserve (EsCuda *cuda, EsCudaBuffer *buffer, size_t size, const char *what, EsError *error)
{
  if (size == 0)
    size = 1;
  if (buffer->size >= size)
    return true;
  device_release (buffer);
  if (!device_alloc (cuda, &buffer->ptr, size, what, error))
    return false;
  buffer->size = size;
  return true;
}

static bool
host_reserve (EsCuda *cuda, EsCudaBuffer *buffer, size_t size, const char *what, EsError *error)
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
  const char *fault = getenv ("ES_CUDA_FAULT");

  if (fault == NULL)
    return;
  cuda->fault_alloc = strcmp (fault, "alloc") == 0;
  cuda->fault_launch = strcmp (fault, "launch") == 0;
  cuda->fault_sticky = strcmp (fault, "sticky") == 0;
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

  cudaStream_t *streams[] = { &cuda->stream, &cuda->up_stream, &cuda->down_stream };
  for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
    ES_CUDA_TRY (cuda, cudaStreamCreateWithFlags (streams[i], cudaStreamNonBlocking), "stream creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_start), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_uploaded), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_computed), "event creation", error);
  ES_CUDA_TRY (cuda, cudaEventCreate (&cuda->ev_done), "event creation", error);
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
  return es_cuda_entropy_init (cuda, error);
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
es_cuda_open (char *reason, size_t reason_size)
{
  return es_cuda_open_devices (NULL, 0, reason, reason_size);
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
  cudaStream_t streams[] = { cuda->stream, cuda->up_stream, cuda->down_stream };
  for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
    if (streams[i] != NULL)
      (void) cudaStreamSynchronize (streams[i]);
  device_release (&cuda->d_in);
  device_release (&cuda->d_lev);
  device_release (&cuda->d_out);
  host_release (&cuda->h_in);
  host_release (&cuda->h_out);
  for (int i = 0; i < ES_CUDA_BAND_SLOTS; i++)
    {
      device_release (&cuda->band_in[i]);
      device_release (&cuda->band_lev[i]);
      device_release (&cuda->band_out[i]);
    }
  if (cuda->tables != NULL)
    (void) cudaFree (cuda->tables);
  if (cuda->histogram != NULL)
    (void) cudaFree (cuda->histogram);
  if (cuda->lut != NULL)
    (void) cudaFree (cuda->lut);
  cudaEvent_t *events[] = { &cuda->ev_start, &cuda->ev_uploaded, &cuda->ev_computed, &cuda->ev_done };
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
  free (cuda);
}

const char *
es_cuda_device_name (EsCuda *cuda)
{
  return cuda != NULL ? cuda->description : "";
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

const EsVariant *
es_cuda_variants (EsOp op, size_t *n)
{
  switch (op)
    {
    case ES_OP_QUANTIZE: return es_cuda_quantize_variants (n);
    case ES_OP_ENTROPY: return es_cuda_entropy_variants (n);
    case ES_OP_EQUALIZE: return es_cuda_equalize_variants (n);
    case ES_OP_SHARPEN: return es_cuda_sharpen_variants (n);
    case ES_N_OPS: break;
    }
  *n = 0;
  return NULL;
}

/* ---- one job --------------------------------------------------------------- */

static double
host_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The variant of `op` named `id` in this build, or NULL. */
static const EsVariant *
find_variant (EsOp op, const char *id)
{
  size_t n;
  const EsVariant *variants = es_cuda_variants (op, &n);

  for (size_t i = 0; i < n; i++)
    if (strcmp (variants[i].id, id) == 0)
      return &variants[i];
  return NULL;
}

/* Rows per transfer chunk: about 4 MiB each, at most ES_CUDA_MAX_CHUNKS. */
static int
chunk_rows (size_t pitch, int height)
{
  size_t total = pitch * (size_t) height;
  size_t chunks = es_cuda_div_up (total, (size_t) 4 << 20);

  if (chunks > ES_CUDA_MAX_CHUNKS)
    chunks = ES_CUDA_MAX_CHUNKS;
  if (chunks < 1)
    chunks = 1;
  return (int) es_cuda_div_up ((size_t) height, chunks);
}

/* Copies rows [y0, y1) between an image with its own stride and a buffer
 * with the device pitch. One core copies about 10 GB/s, well under what the
 * PCIe link moves, so a large copy is split among the OpenMP threads. */
static void
copy_rows (void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, int y0, int y1)
{
  const size_t piece = (size_t) 1 << 20;
  char *d = (char *) dst;
  const char *s = (const char *) src;

  if (dst_stride == src_stride && row_bytes == dst_stride)
    {
      size_t offset = (size_t) y0 * dst_stride, total = (size_t) (y1 - y0) * row_bytes;
      long pieces = (long) es_cuda_div_up (total, piece);
#pragma omp parallel for schedule(static) if (pieces > 1)
      for (long i = 0; i < pieces; i++)
        {
          size_t begin = (size_t) i * piece;
          size_t size = total - begin < piece ? total - begin : piece;
          memcpy (d + offset + begin, s + offset + begin, size);
        }
      return;
    }
#pragma omp parallel for schedule(static) if ((size_t) (y1 - y0) * row_bytes > piece)
  for (int y = y0; y < y1; y++)
    memcpy (d + (size_t) y * dst_stride, s + (size_t) y * src_stride, row_bytes);
}

/* True when [p, p + bytes) is page-locked host memory (es_engine_image_alloc,
 * cudaHostAlloc, cudaHostRegister): the copy engines then reach it by DMA
 * and no staging copy is needed. Pageable memory reads as unregistered. */
static bool
is_page_locked (const void *p, size_t bytes)
{
  const char *ends[2] = { (const char *) p, (const char *) p + bytes - 1 };

  for (int i = 0; i < 2; i++)
    {
      cudaPointerAttributes attributes;
      if (cudaPointerGetAttributes (&attributes, ends[i]) != cudaSuccess)
        {
          (void) cudaGetLastError ();
          return false;
        }
      if (attributes.type != cudaMemoryTypeHost)
        return false;
    }
  return true;
}

static size_t
image_bytes (const EsImage *image, size_t row_bytes)
{
  return (size_t) (image->height - 1) * image->stride + row_bytes;
}

/* How one run moves the image. A direct side is copied by cudaMemcpy from
 * the image itself: by DMA when it is page-locked, through the driver's own
 * staging when it is pageable (the pageable lesson). Otherwise the rows go
 * through the engine's pinned staging buffers, chunk by chunk. */
typedef struct {
  const EsImage *in;
  EsImage *out;
  size_t in_row, out_row;  /* bytes per image row */
  bool in_direct, out_direct;
} EsMove;

/* Enqueues the upload of input rows [y0, y1) on `stream`. Staged rows are
 * first copied into the pinned buffer (the host waits for that copy, while
 * the DMA of earlier rows goes on). */
static bool
upload_rows (EsCuda *cuda, const EsMove *m, const EsCudaFrame *f, int y0, int y1, cudaStream_t stream,
             EsError *error)
{
  const size_t offset = (size_t) y0 * f->in_pitch;
  char *device = (char *) f->in + offset;

  if (m->in_direct)
    {
      const char *host = (const char *) m->in->pixels + (size_t) y0 * m->in->stride;
      if (m->in->stride == f->in_pitch && m->in_row == f->in_pitch)
        ES_CUDA_TRY (cuda, cudaMemcpyAsync (device, host, (size_t) (y1 - y0) * f->in_pitch,
                                            cudaMemcpyHostToDevice, stream), "upload", error);
      else
        ES_CUDA_TRY (cuda, cudaMemcpy2DAsync (device, f->in_pitch, host, m->in->stride, m->in_row,
                                              (size_t) (y1 - y0), cudaMemcpyHostToDevice, stream),
                     "upload", error);
      return true;
    }
  copy_rows (cuda->h_in.ptr, f->in_pitch, m->in->pixels, m->in->stride, m->in_row, y0, y1);
  ES_CUDA_TRY (cuda, cudaMemcpyAsync (device, (char *) cuda->h_in.ptr + offset, (size_t) (y1 - y0) * f->in_pitch,
                                      cudaMemcpyHostToDevice, stream), "upload", error);
  return true;
}

/* Enqueues the download of output rows [y0, y1); staged rows land in the
 * pinned buffer, and finish_rows() copies them out once `done` fired. */
static bool
download_rows (EsCuda *cuda, const EsMove *m, const EsCudaFrame *f, int y0, int y1, cudaStream_t stream,
               EsError *error)
{
  const size_t offset = (size_t) y0 * f->out_pitch;
  const char *device = (const char *) f->out + offset;

  if (m->out_direct)
    {
      char *host = (char *) m->out->pixels + (size_t) y0 * m->out->stride;
      if (m->out->stride == f->out_pitch && m->out_row == f->out_pitch)
        ES_CUDA_TRY (cuda, cudaMemcpyAsync (host, device, (size_t) (y1 - y0) * f->out_pitch,
                                            cudaMemcpyDeviceToHost, stream), "download", error);
      else
        ES_CUDA_TRY (cuda, cudaMemcpy2DAsync (host, m->out->stride, device, f->out_pitch, m->out_row,
                                              (size_t) (y1 - y0), cudaMemcpyDeviceToHost, stream),
                     "download", error);
      return true;
    }
  ES_CUDA_TRY (cuda, cudaMemcpyAsync ((char *) cuda->h_out.ptr + offset, device, (size_t) (y1 - y0) * f->out_pitch,
                                      cudaMemcpyDeviceToHost, stream), "download", error);
  return true;
}

static bool
finish_rows (EsCuda *cuda, const EsMove *m, const EsCudaFrame *f, int y0, int y1, cudaEvent_t done,
             EsError *error)
{
  if (m->out_direct)
    return true;
  ES_CUDA_TRY (cuda, cudaEventSynchronize (done), "kernel run or download", error);
  copy_rows (m->out->pixels, m->out->stride, cuda->h_out.ptr, f->out_pitch, m->out_row, y0, y1);
  return true;
}

/* ES_CUDA_FAULT=launch|sticky fires at the first kernel launch of a run. */
static bool
inject_launch_fault (EsCuda *cuda, EsError *error)
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

static bool
run_kernels (EsCuda *cuda, const EsJob *job, const char *variant, const EsCudaFrame *frame, EsError *error)
{
  if (!inject_launch_fault (cuda, error))
    return false;
  switch (job->op)
    {
    case ES_OP_QUANTIZE: return es_cuda_quantize_run (cuda, frame, variant, error);
    case ES_OP_ENTROPY: return es_cuda_entropy_run (cuda, frame, job, variant, error);
    case ES_OP_EQUALIZE: return es_cuda_equalize_run (cuda, frame, variant, error);
    case ES_OP_SHARPEN: return es_cuda_sharpen_run (cuda, frame, job, variant, error);
    case ES_N_OPS: break;
    }
  return es_error_set (error, ES_ERROR_INVALID, "unknown operation %d", (int) job->op);
}

/* Upload, kernels, download, one after the other on one stream, each between
 * two events; staged chunks go in and out while the DMA of their neighbours
 * runs. The frame's device buffers are ready. */
static bool
run_frame (EsCuda *cuda, const EsJob *job, const char *variant, const EsMove *m, EsCudaFrame *frame,
           float times[3], EsError *error)
{
  const int h = frame->height;
  const int in_step = m->in_direct ? h : chunk_rows (frame->in_pitch, h);
  const int out_step = m->out_direct ? h : chunk_rows (frame->out_pitch, h);

  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error);
  for (int y0 = 0; y0 < h; y0 += in_step)
    if (!upload_rows (cuda, m, frame, y0, y0 + in_step < h ? y0 + in_step : h, cuda->stream, error))
      return false;
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_uploaded, cuda->stream), "event record", error);
  if (!run_kernels (cuda, job, variant, frame, error))
    return false;
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_computed, cuda->stream), "event record", error);
  for (int y0 = 0, i = 0; y0 < h; y0 += out_step, i++)
    {
      if (!download_rows (cuda, m, frame, y0, y0 + out_step < h ? y0 + out_step : h, cuda->stream, error))
        return false;
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_down[i], cuda->stream), "event record", error);
    }
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error);
  for (int y0 = 0, i = 0; y0 < h; y0 += out_step, i++)
    if (!finish_rows (cuda, m, frame, y0, y0 + out_step < h ? y0 + out_step : h, cuda->ev_down[i], error))
      return false;
  ES_CUDA_TRY (cuda, cudaEventSynchronize (cuda->ev_done), "kernel run or download", error);

  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[0], cuda->ev_start, cuda->ev_uploaded), "timing", error);
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[1], cuda->ev_uploaded, cuda->ev_computed), "timing", error);
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[2], cuda->ev_computed, cuda->ev_done), "timing", error);
  return true;
}

/* Output rows per band of the streams-overlap variant: about 16 MiB of
 * output each, at most ES_CUDA_MAX_CHUNKS bands, whole 64-row strips of the
 * entropy kernels, and never fewer rows than a window reaches beyond them. */
static int
band_rows (const EsCudaFrame *f)
{
  size_t bands = es_cuda_div_up (f->out_pitch * (size_t) f->height, (size_t) 16 << 20);
  size_t rows;

  if (bands > ES_CUDA_MAX_CHUNKS)
    bands = ES_CUDA_MAX_CHUNKS;
  if (bands < 1)
    bands = 1;
  rows = es_cuda_div_up (es_cuda_div_up ((size_t) f->height, bands), 64) * 64;
  return (int) rows;
}

/* Entropy in bands of rows on three streams: band b+1 uploads while band b
 * computes and band b−1 downloads, so the copy engines of both directions
 * and the SMs work at once. A band's kernels wait for the next band's upload
 * too: their windows reach window/2 rows into it. Times: upload until the
 * last band is on the device, kernels summed over the bands, download from
 * the last band's kernels to the end (the part that no overlap hides). */
static bool
run_frame_streams (EsCuda *cuda, const EsJob *job, const EsMove *m, EsCudaFrame *frame, float times[3],
                   EsError *error)
{
  const int h = frame->height, step = band_rows (frame);
  const int n = (int) es_cuda_div_up ((size_t) h, (size_t) step);
  cudaStream_t up = cuda->up_stream, compute = cuda->stream, down = cuda->down_stream;

  if (!inject_launch_fault (cuda, error))
    return false;
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_start, compute), "event record", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (up, cuda->ev_start, 0), "stream wait", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_start, 0), "stream wait", error);

  for (int b = 0; b <= n; b++)
    {
      /* Uploads run one band ahead of the kernels. */
      if (b < n)
        {
          if (!upload_rows (cuda, m, frame, b * step, (b + 1) * step < h ? (b + 1) * step : h, up, error))
            return false;
          ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_up[b], up), "event record", error);
        }
      if (b == 0)
        continue;

      const int k = b - 1;
      const int y0 = k * step, y1 = b * step < h ? b * step : h;
      /* Levels for the general path: bands 0 and 1 first, then one ahead. */
      const int q0 = k == 0 ? 0 : y1, q1 = (b + 1) * step < h ? (b + 1) * step : h;
      ES_CUDA_TRY (cuda, cudaStreamWaitEvent (compute, cuda->ev_up[b < n ? b : n - 1], 0), "stream wait", error);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_k0[k], compute), "event record", error);
      if (!es_cuda_entropy_band (cuda, frame, job->window, y0, y1, q0, q1, error))
        return false;
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_k1[k], compute), "event record", error);
      ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_k1[k], 0), "stream wait", error);
      if (!download_rows (cuda, m, frame, y0, y1, down, error))
        return false;
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_down[k], down), "event record", error);
    }
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_done, down), "event record", error);
  for (int b = 0; b < n; b++)
    if (!finish_rows (cuda, m, frame, b * step, (b + 1) * step < h ? (b + 1) * step : h, cuda->ev_down[b], error))
      return false;
  ES_CUDA_TRY (cuda, cudaEventSynchronize (cuda->ev_done), "kernel run or download", error);

  float ms = 0;
  times[1] = 0;
  for (int b = 0; b < n; b++)
    {
      ES_CUDA_TRY (cuda, cudaEventElapsedTime (&ms, cuda->ev_k0[b], cuda->ev_k1[b]), "timing", error);
      times[1] += ms;
    }
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[0], cuda->ev_start, cuda->ev_up[n - 1]), "timing", error);
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[2], cuda->ev_k1[n - 1], cuda->ev_done), "timing", error);
  return true;
}

/* ---- bands under a memory budget, over several devices ---------------------- */

/* Smaller images stay on one device: spreading them costs more in launches
 * and synchronization than it saves. */
#define ES_CUDA_SPREAD_MIN_PIXELS ((size_t) 1 << 22)
/* Device memory kept free for the tables, the kernels' own needs and the
 * driver, when the budget comes from cudaMemGetInfo. */
#define ES_CUDA_MEMORY_MARGIN ((size_t) 256 << 20)
/* Bands of about this many bytes of device buffers overlap well: large
 * enough that launches and halos cost little, small enough that the first
 * upload and the last download, which nothing hides, are short. */
#define ES_CUDA_BAND_BYTES ((size_t) 128 << 20)

typedef enum {
  ES_BAND_KERNELS,    /* the operation's kernels, band by band */
  ES_BAND_HISTOGRAM,  /* equalize, first pass: the histogram over the bands */
  ES_BAND_APPLY,      /* equalize, second pass: the LUT over the bands */
} EsBandPass;

/* One device's share of a banded run: bands [b_begin, b_end) of `step`
 * output rows, each uploaded with `halo` rows above and below. */
typedef struct {
  const EsJob *job;
  const char *variant;
  EsBandPass pass;
  const EsCudaFrame *whole;  /* the geometry; its buffers are unused */
  const EsMove *move;
  int step, halo, b_begin, b_end;
  const uint8_t *lut;              /* ES_BAND_APPLY: the LUT to map through */
  unsigned long long *histogram;   /* ES_BAND_HISTOGRAM: 256 bins, filled */
} EsBandWork;

static void
release_band_buffers (EsCuda *cuda)
{
  for (int s = 0; s < ES_CUDA_BAND_SLOTS; s++)
    {
      device_release (&cuda->band_in[s]);
      device_release (&cuda->band_lev[s]);
      device_release (&cuda->band_out[s]);
    }
}

static size_t
held_bytes (const EsCuda *cuda)
{
  size_t held = cuda->d_in.size + cuda->d_lev.size + cuda->d_out.size;

  for (int s = 0; s < ES_CUDA_BAND_SLOTS; s++)
    held += cuda->band_in[s].size + cuda->band_lev[s].size + cuda->band_out[s].size;
  return held;
}

/* The device memory that one run may use on every device: the smallest free
 * memory (counting the buffers already held, which the run may reuse), less
 * a margin, or ES_GPU_MEMORY_BUDGET bytes when that is smaller. */
static size_t
memory_budget (EsCuda *cuda)
{
  size_t budget = SIZE_MAX;
  const char *env = getenv ("ES_GPU_MEMORY_BUDGET");

  for (int i = 0; i <= cuda->n_peers; i++)
    {
      EsCuda *c = i == 0 ? cuda : cuda->peers[i - 1];
      size_t free_bytes = 0, total = 0, available;

      if (cudaSetDevice (c->device) != cudaSuccess || cudaMemGetInfo (&free_bytes, &total) != cudaSuccess)
        {
          (void) cudaGetLastError ();
          free_bytes = c->total_memory / 2;
        }
      available = free_bytes + held_bytes (c);
      available = available > ES_CUDA_MEMORY_MARGIN ? available - ES_CUDA_MEMORY_MARGIN : 0;
      if (available < budget)
        budget = available;
    }
  (void) cudaSetDevice (cuda->device);
  if (env != NULL && env[0] != '\0')
    {
      char *end;
      unsigned long long value = strtoull (env, &end, 10);
      if (*end == '\0' && value > 0 && value < budget)
        budget = (size_t) value;
    }
  return budget;
}

/* One device's bands on its three streams, through ES_CUDA_BAND_SLOTS sets
 * of fixed buffers: the upload of a band waits until the slot's previous
 * band has left the device, its kernels wait for its upload, its download
 * for its kernels. Every band is a frame of its own, so the one-shot kernels
 * run on it unchanged; rows within `halo` of a band's cut edge read rows
 * that are not there and are not downloaded, the band beside recomputes
 * them. `ms` is the span from the first upload to the last download. */
static bool
run_bands (EsCuda *cuda, const EsBandWork *w, float *ms, EsError *error)
{
  const EsCudaFrame *f = w->whole;
  const EsMove *m = w->move;
  const int h = f->height;
  const size_t slot_rows = (size_t) (w->step + 2 * w->halo < h ? w->step + 2 * w->halo : h);
  const bool levels = w->pass == ES_BAND_KERNELS && w->job->op == ES_OP_ENTROPY;
  const bool output = w->pass != ES_BAND_HISTOGRAM;
  cudaStream_t up = cuda->up_stream, compute = cuda->stream, down = cuda->down_stream;

  *ms = 0;
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  if (w->b_begin >= w->b_end)
    return true;
  for (int s = 0; s < ES_CUDA_BAND_SLOTS; s++)
    if (!device_reserve (cuda, &cuda->band_in[s], slot_rows * f->in_pitch, "band input buffer", error)
        || (levels && !device_reserve (cuda, &cuda->band_lev[s], slot_rows * f->lev_pitch, "band levels buffer",
                                       error))
        || (output && !device_reserve (cuda, &cuda->band_out[s], slot_rows * f->out_pitch, "band output buffer",
                                       error)))
      return false;

  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_start, compute), "event record", error);
  if (w->pass == ES_BAND_HISTOGRAM)
    ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->histogram, 0, 256 * sizeof *cuda->histogram, compute),
                 "histogram reset", error);
  if (w->pass == ES_BAND_APPLY)
    ES_CUDA_TRY (cuda, cudaMemcpyAsync (cuda->lut, w->lut, 256, cudaMemcpyHostToDevice, compute), "LUT upload",
                 error);
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_uploaded, compute), "event record", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (up, cuda->ev_uploaded, 0), "stream wait", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_uploaded, 0), "stream wait", error);

  for (int b = w->b_begin; b < w->b_end; b++)
    {
      const int s = (b - w->b_begin) % ES_CUDA_BAND_SLOTS;
      const int y0 = b * w->step, y1 = y0 + w->step < h ? y0 + w->step : h;
      const int iy0 = y0 - w->halo > 0 ? y0 - w->halo : 0, iy1 = y1 + w->halo < h ? y1 + w->halo : h;
      EsCudaFrame band = *f;

      if (b - w->b_begin >= ES_CUDA_BAND_SLOTS)
        ES_CUDA_TRY (cuda, cudaStreamWaitEvent (up, cuda->ev_down[s], 0), "stream wait", error);
      ES_CUDA_TRY (cuda, cudaMemcpy2DAsync (cuda->band_in[s].ptr, f->in_pitch,
                                            (const char *) m->in->pixels + (size_t) iy0 * m->in->stride,
                                            m->in->stride, m->in_row, (size_t) (iy1 - iy0),
                                            cudaMemcpyHostToDevice, up), "band upload", error);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_up[s], up), "event record", error);
      ES_CUDA_TRY (cuda, cudaStreamWaitEvent (compute, cuda->ev_up[s], 0), "stream wait", error);

      band.height = iy1 - iy0;
      band.in = cuda->band_in[s].ptr;
      band.lev = (uint8_t *) cuda->band_lev[s].ptr;
      band.out = cuda->band_out[s].ptr;
      bool ok = w->pass == ES_BAND_KERNELS ? run_kernels (cuda, w->job, w->variant, &band, error)
                : w->pass == ES_BAND_HISTOGRAM ? es_cuda_equalize_histogram_band (cuda, &band, error)
                : es_cuda_equalize_apply_band (cuda, &band, error);
      if (!ok)
        return false;
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_k1[s], compute), "event record", error);
      if (!output)
        {
          ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_down[s], compute), "event record", error);
          continue;
        }
      ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_k1[s], 0), "stream wait", error);
      ES_CUDA_TRY (cuda, cudaMemcpy2DAsync ((char *) m->out->pixels + (size_t) y0 * m->out->stride, m->out->stride,
                                            (const char *) cuda->band_out[s].ptr + (size_t) (y0 - iy0) * f->out_pitch,
                                            f->out_pitch, m->out_row, (size_t) (y1 - y0), cudaMemcpyDeviceToHost,
                                            down), "band download", error);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_down[s], down), "event record", error);
    }
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_computed, compute), "event record", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_computed, 0), "stream wait", error);
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_done, down), "event record", error);
  ES_CUDA_TRY (cuda, cudaEventSynchronize (cuda->ev_done), "band run", error);
  if (w->pass == ES_BAND_HISTOGRAM)
    ES_CUDA_TRY (cuda, cudaMemcpy (w->histogram, cuda->histogram, 256 * sizeof *w->histogram,
                                   cudaMemcpyDeviceToHost), "histogram download", error);
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (ms, cuda->ev_start, cuda->ev_done), "timing", error);
  return true;
}

/* Runs one pass on every device at once, one host thread each; device i
 * takes the i-th run of consecutive bands. `ms`: the slowest device's span. */
static bool
run_pass (EsCuda *cuda, const EsBandWork *pattern, int n_bands, unsigned long long (*histograms)[256],
          float *ms, EsError *error)
{
  const int n = 1 + cuda->n_peers;
  const int per_device = (n_bands + n - 1) / n;
  EsError errors[ES_CUDA_MAX_DEVICES];
  float spans[ES_CUDA_MAX_DEVICES];
  bool ok[ES_CUDA_MAX_DEVICES];

#pragma omp parallel for num_threads(n) schedule(static, 1) if (n > 1)
  for (int i = 0; i < n; i++)
    {
      EsBandWork w = *pattern;
      w.b_begin = i * per_device < n_bands ? i * per_device : n_bands;
      w.b_end = (i + 1) * per_device < n_bands ? (i + 1) * per_device : n_bands;
      w.histogram = histograms != NULL ? histograms[i] : NULL;
      errors[i] = (EsError) { ES_OK, "" };
      ok[i] = run_bands (i == 0 ? cuda : cuda->peers[i - 1], &w, &spans[i], &errors[i]);
    }
  (void) cudaSetDevice (cuda->device);
  *ms = 0;
  for (int i = 0; i < n; i++)
    {
      if (!ok[i])
        {
          *error = errors[i];
          return false;
        }
      if (spans[i] > *ms)
        *ms = spans[i];
    }
  return true;
}

/* The whole job in bands. Equalize takes two passes: the histograms of
 * every device's bands, summed here into the LUT, then the LUT over the
 * bands. The span of the passes is reported as kernel time: in bands the
 * transfers and the kernels overlap. */
static bool
run_banded (EsCuda *cuda, const EsJob *job, const char *variant, const EsMove *m, const EsCudaFrame *frame,
            size_t budget, float times[3], EsError *error)
{
  const int n = 1 + cuda->n_peers;
  const int h = frame->height;
  const int halo = job->op == ES_OP_ENTROPY ? job->window / 2 : job->op == ES_OP_SHARPEN ? 1 : 0;
  const size_t row_bytes = frame->in_pitch + (job->op == ES_OP_ENTROPY ? frame->lev_pitch : 0) + frame->out_pitch;
  const size_t budget_rows = budget / (ES_CUDA_BAND_SLOTS * row_bytes);

  if (budget_rows < (size_t) (2 * halo + 1))
    return es_error_set (error, ES_ERROR_NO_MEMORY,
                         "CUDA %s: %zu bytes of device memory hold no band of a %d-pixel-wide image",
                         es_op_name (job->op), budget, frame->width);
  size_t cap = budget_rows - (size_t) (2 * halo);
  size_t good = ES_CUDA_BAND_BYTES / row_bytes;
  if (good < (size_t) (halo + 1))
    good = (size_t) (halo + 1);
  if (good < cap)
    cap = good;
  /* Equal shares: as many bands on each device. */
  const size_t per_device = es_cuda_div_up ((size_t) h, (size_t) n * cap);
  const int step = (int) es_cuda_div_up ((size_t) h, (size_t) n * per_device);
  const int n_bands = (int) es_cuda_div_up ((size_t) h, (size_t) step);

  for (int i = 0; i <= cuda->n_peers; i++)
    {
      EsCuda *c = i == 0 ? cuda : cuda->peers[i - 1];
      (void) cudaSetDevice (c->device);
      device_release (&c->d_in);
      device_release (&c->d_lev);
      device_release (&c->d_out);
    }
  (void) cudaSetDevice (cuda->device);
  if (!inject_launch_fault (cuda, error))
    return false;

  EsBandWork w = { job, variant, ES_BAND_KERNELS, frame, m, step, halo, 0, 0, NULL, NULL };
  float ms = 0;
  times[0] = times[2] = 0;
  if (job->op != ES_OP_EQUALIZE)
    {
      if (!run_pass (cuda, &w, n_bands, NULL, &ms, error))
        return false;
      times[1] = ms;
      return true;
    }

  unsigned long long histograms[ES_CUDA_MAX_DEVICES][256];
  uint64_t histogram[256] = { 0 };
  uint8_t lut[256];
  w.pass = ES_BAND_HISTOGRAM;
  if (!run_pass (cuda, &w, n_bands, histograms, &ms, error))
    return false;
  times[1] = ms;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 256; k++)
      histogram[k] += histograms[i][k];
  (void) es_equalize_lut (histogram, (uint64_t) frame->width * (uint64_t) h, lut);
  w.pass = ES_BAND_APPLY;
  w.lut = lut;
  if (!run_pass (cuda, &w, n_bands, NULL, &ms, error))
    return false;
  times[1] += ms;
  return true;
}

static bool
check_image (const EsImage *image, const char *what, size_t sample_bytes, EsError *error)
{
  if (image->width < 0 || image->height < 0 || image->width > ES_MAX_SIDE || image->height > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_INVALID, "CUDA: the %s image is %d×%d", what, image->width,
                         image->height);
  if (image->width > 0 && image->height > 0
      && (image->pixels == NULL || image->stride < (size_t) image->width * sample_bytes))
    return es_error_set (error, ES_ERROR_INVALID, "CUDA: the %s image has no pixels or a short stride", what);
  return true;
}

bool
es_cuda_run (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out,
             EsTiming *timing, EsError *error)
{
  if (cuda == NULL || job == NULL || in == NULL || out == NULL)
    return es_error_set (error, ES_ERROR_INVALID, "CUDA: missing engine, job or image");
  if (!es_job_validate (job, error))
    return false;
  if (es_cuda_is_broken (cuda))
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA is unusable after an earlier device error");

  const char *id = variant != NULL ? variant->id : NULL;
  if (id == NULL)
    {
      size_t n;
      const EsVariant *all = es_cuda_variants (job->op, &n);
      for (size_t i = 0; i < n; i++)
        if (all[i].is_default)
          id = all[i].id;
    }
  if (id == NULL || find_variant (job->op, id) == NULL)
    return es_error_set (error, ES_ERROR_INVALID, "no CUDA %s variant \"%s\"", es_op_name (job->op),
                         id ? id : "(none)");

  if (in->format != ES_FORMAT_U8 && in->format != ES_FORMAT_U16)
    return es_error_set (error, ES_ERROR_INVALID, "CUDA %s needs u8 or u16 samples", es_op_name (job->op));
  const size_t in_bytes = in->format == ES_FORMAT_U16 ? 2 : 1;
  const EsFormat out_format = es_op_output_format (job->op);
  const size_t out_bytes = out_format == ES_FORMAT_F32 ? 4 : 1;
  if (!check_image (in, "input", in_bytes, error) || !check_image (out, "output", out_bytes, error))
    return false;
  if (out->format != out_format || out->width != in->width || out->height != in->height)
    return es_error_set (error, ES_ERROR_INVALID, "CUDA %s: the output buffer does not match the input",
                         es_op_name (job->op));
  if (in->levels != 0 ? in->levels < 1 || in->levels > ES_LEVELS_MAX
                      : in->depth < 1 || in->depth > 8 * (int) in_bytes)
    return es_error_set (error, ES_ERROR_INVALID, "CUDA: bad sample depth %d or levels %d", in->depth,
                         in->levels);

  const EsCudaTransfer transfer = job->op == ES_OP_ENTROPY ? es_cuda_entropy_transfer (id)
                                                            : ES_CUDA_TRANSFER_DEFAULT;
  float times[3] = { 0, 0, 0 };
  double alloc_ms = 0, free_ms = 0;
  bool ok = true;

  if (in->width > 0 && in->height > 0)
    {
      ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);

      EsCudaFrame frame;
      memset (&frame, 0, sizeof frame);
      frame.width = in->width;
      frame.height = in->height;
      frame.vectors = (int) es_cuda_div_up ((size_t) in->width, ES_CUDA_VECTOR);
      frame.in_format = in->format;
      frame.depth = in->depth;
      frame.levels = in->levels != 0 ? in->levels : job->levels;
      frame.is_levels = in->levels != 0;
      const size_t padded = (size_t) frame.vectors * ES_CUDA_VECTOR;
      frame.in_pitch = padded * in_bytes;
      frame.lev_pitch = padded;
      frame.out_pitch = padded * out_bytes;
      const size_t rows = (size_t) in->height;
      const bool levels_needed = job->op == ES_OP_ENTROPY;
      const bool pageable = transfer == ES_CUDA_TRANSFER_PAGEABLE;
      EsMove move = { in, out, (size_t) in->width * in_bytes, (size_t) in->width * out_bytes, false, false };
      move.in_direct = pageable || is_page_locked (in->pixels, image_bytes (in, move.in_row));
      move.out_direct = pageable || is_page_locked (out->pixels, image_bytes (out, move.out_row));
      EsCudaBuffer d_in = { NULL, 0 }, d_lev = { NULL, 0 }, d_out = { NULL, 0 };
      EsCudaBuffer *b_in = &cuda->d_in, *b_lev = &cuda->d_lev, *b_out = &cuda->d_out;
      const bool per_call = transfer == ES_CUDA_TRANSFER_PER_CALL;
      double t0 = host_ms ();

      /* Bands when the one-shot buffers do not fit, or to spread a large
       * image over several devices (the pageable and per-call lessons are
       * about one device's transfers and keep to it when they fit). */
      const size_t budget = memory_budget (cuda);
      const size_t footprint = (frame.in_pitch + (levels_needed ? frame.lev_pitch : 0) + frame.out_pitch) * rows;
      const bool spread = cuda->n_peers > 0 && !pageable && !per_call
                          && (size_t) in->width * rows >= ES_CUDA_SPREAD_MIN_PIXELS;
      if (spread || footprint > budget)
        ok = run_banded (cuda, job, id, &move, &frame, budget, times, error);
      else
        {
          release_band_buffers (cuda);

          /* The per-call lesson: allocating belongs to the upload, freeing to the download. */
          if (per_call)
            {
              b_in = &d_in;
              b_lev = &d_lev;
              b_out = &d_out;
            }
          ok = device_reserve (cuda, b_in, frame.in_pitch * rows, "input buffer", error)
               && (!levels_needed || device_reserve (cuda, b_lev, frame.lev_pitch * rows, "levels buffer", error))
               && device_reserve (cuda, b_out, frame.out_pitch * rows, "output buffer", error);
          if (per_call)
            alloc_ms = host_ms () - t0;
          if (ok && !move.in_direct)
            ok = host_reserve (cuda, &cuda->h_in, frame.in_pitch * rows, "pinned input staging", error);
          if (ok && !move.out_direct)
            ok = host_reserve (cuda, &cuda->h_out, frame.out_pitch * rows, "pinned output staging", error);

          if (ok)
            {
              frame.in = b_in->ptr;
              frame.lev = (uint8_t *) b_lev->ptr;
              frame.out = b_out->ptr;
              ok = transfer == ES_CUDA_TRANSFER_STREAMS ? run_frame_streams (cuda, job, &move, &frame, times, error)
                                                        : run_frame (cuda, job, id, &move, &frame, times, error);
            }

          if (per_call)
            {
              t0 = host_ms ();
              device_release (&d_in);
              device_release (&d_lev);
              device_release (&d_out);
              free_ms = host_ms () - t0;
            }
        }
    }

  if (ok && timing != NULL)
    {
      timing->upload_ms = times[0] + alloc_ms;
      timing->kernel_ms = times[1];
      timing->download_ms = times[2] + free_ms;
      timing->backend = ES_BACKEND_CUDA;
      timing->variant = find_variant (job->op, id)->id;
    }
  return ok;
}

/* ---- the copy floor -------------------------------------------------------- */

/* Reads nin and writes nout 16-byte words; words read beyond nout feed a
 * checksum that is stored only on an impossible match, so that no read is
 * optimized away. Four words per thread and trip keep loads in flight. */
static __global__ void __launch_bounds__ (256)
copy_kernel (const uint4 *__restrict__ in, size_t nin, uint4 *__restrict__ out, size_t nout, unsigned *sink)
{
  const size_t n = nin > nout ? nin : nout;
  const size_t stride = (size_t) gridDim.x * blockDim.x;
  unsigned check = 0;

  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * stride)
    {
      uint4 v[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          size_t j = i + k * stride;
          v[k] = j < nin ? __ldcs (&in[j]) : make_uint4 ((unsigned) j, 1u, 2u, 3u);
        }
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          size_t j = i + k * stride;
          if (j < nout)
            __stcs (&out[j], v[k]);
          else if (j < n)
            check ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
        }
    }
  if (check == 0x9e3779b9u)
    *sink = check;
}

/* Fills n 16-byte words with a hash of their index, no byte zero. */
static __global__ void __launch_bounds__ (256)
fill_kernel (uint4 *out, size_t n)
{
  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      unsigned h[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          unsigned x = (unsigned) (i * 4 + k) * 0x9e3779b9u;
          x ^= x >> 16;
          x *= 0x85ebca6bu;
          x ^= x >> 13;
          h[k] = x | 0x01010101u;
        }
      out[i] = make_uint4 (h[0], h[1], h[2], h[3]);
    }
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Sorts samples in place. */
static double
median (double *samples, int n)
{
  qsort (samples, (size_t) n, sizeof *samples, compare_doubles);
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

bool
es_cuda_copy_floor (EsCuda *cuda, size_t in_bytes, size_t out_bytes, int repeats, double *median_ms,
                    EsError *error)
{
  const int warmups = 3;
  double *samples;
  size_t nin, nout;
  unsigned blocks;

  if (cuda == NULL || median_ms == NULL || repeats < 1 || (in_bytes == 0 && out_bytes == 0))
    return es_error_set (error, ES_ERROR_INVALID, "copy floor: bad arguments");
  if (cuda->broken)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA is unusable after an earlier device error");
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);

  nin = es_cuda_div_up (in_bytes, 16);
  nout = es_cuda_div_up (out_bytes, 16);
  if (!device_reserve (cuda, &cuda->d_in, nin * 16, "input buffer", error)
      || !device_reserve (cuda, &cuda->d_out, nout * 16, "output buffer", error))
    return false;
  samples = (double *) malloc ((size_t) repeats * sizeof *samples);
  if (samples == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "copy floor: out of host memory");

  const uint4 *in = (const uint4 *) cuda->d_in.ptr;
  uint4 *out = (uint4 *) cuda->d_out.ptr;
  unsigned *sink = (unsigned *) cuda->histogram;
  bool ok = true;

  if (nin > 0)
    {
      fill_kernel<<<es_cuda_blocks (cuda, nin, 256), 256, 0, cuda->stream>>> ((uint4 *) cuda->d_in.ptr, nin);
      ok = es_cuda_check (cuda, cudaGetLastError (), "fill kernel", error);
    }
  blocks = es_cuda_blocks (cuda, es_cuda_div_up (nin > nout ? nin : nout, 4), 256);
  for (int i = 0; ok && i < warmups + repeats; i++)
    {
      float ms = 0;
      ok = es_cuda_check (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error);
      if (ok)
        {
          copy_kernel<<<blocks, 256, 0, cuda->stream>>> (in, nin, out, nout, sink);
          ok = es_cuda_check (cuda, cudaGetLastError (), "copy kernel", error)
               && es_cuda_check (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error)
               && es_cuda_check (cuda, cudaEventSynchronize (cuda->ev_done), "copy kernel run", error)
               && es_cuda_check (cuda, cudaEventElapsedTime (&ms, cuda->ev_start, cuda->ev_done), "timing", error);
        }
      if (ok && i >= warmups)
        samples[i - warmups] = ms;
    }
  if (ok)
    *median_ms = median (samples, repeats);
  free (samples);
  return ok;
}

/* ---- page-locked images and the transfer floor ------------------------------ */

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

bool
es_cuda_transfer_floor (EsCuda *cuda, size_t in_bytes, size_t out_bytes, int repeats, double *median_ms,
                        EsError *error)
{
  const int warmups = 2;
  double *samples;
  bool ok;

  if (cuda == NULL || median_ms == NULL || repeats < 1)
    return es_error_set (error, ES_ERROR_INVALID, "transfer floor: bad arguments");
  if (cuda->broken)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA is unusable after an earlier device error");
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  if (!device_reserve (cuda, &cuda->d_in, in_bytes, "input buffer", error)
      || !device_reserve (cuda, &cuda->d_out, out_bytes, "output buffer", error)
      || !host_reserve (cuda, &cuda->h_in, in_bytes, "pinned input staging", error)
      || !host_reserve (cuda, &cuda->h_out, out_bytes, "pinned output staging", error))
    return false;
  samples = (double *) malloc ((size_t) repeats * sizeof *samples);
  if (samples == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "transfer floor: out of host memory");
  /* Never time on zeros. */
  memset (cuda->h_in.ptr, 0x5a, in_bytes);

  ok = true;
  for (int i = 0; ok && i < warmups + repeats; i++)
    {
      float ms = 0;
      ok = es_cuda_check (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error)
           && es_cuda_check (cuda, cudaMemcpyAsync (cuda->d_in.ptr, cuda->h_in.ptr, in_bytes,
                                                    cudaMemcpyHostToDevice, cuda->stream), "upload", error)
           && es_cuda_check (cuda, cudaMemcpyAsync (cuda->h_out.ptr, cuda->d_out.ptr, out_bytes,
                                                    cudaMemcpyDeviceToHost, cuda->stream), "download", error)
           && es_cuda_check (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error)
           && es_cuda_check (cuda, cudaEventSynchronize (cuda->ev_done), "transfers", error)
           && es_cuda_check (cuda, cudaEventElapsedTime (&ms, cuda->ev_start, cuda->ev_done), "timing", error);
      if (ok && i >= warmups)
        samples[i - warmups] = ms;
    }
  if (ok)
    *median_ms = median (samples, repeats);
  free (samples);
  return ok;
}
