/* SPDX-License-Identifier: MIT */
/* The engine: picks a backend once, runs jobs, and falls back to the CPU when CUDA fails. */
#include "es-engine.h"

#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "es-auto.h"
#include "es-i18n.h"
#include "cpu/es-cpu.h"

#ifdef ES_HAVE_CUDA
#include "cuda/es-cuda.h"
#include "es-test-hooks.h"
#endif

struct EsEngine {
  EsBackendChoice active; /* ES_BACKEND_CPU or ES_BACKEND_CUDA */
  EsBackendChoice choice; /* what the caller asked for: AUTO picks per job */
  char cuda_reason[256];  /* why CUDA is not in use; "" while it is */
  char description[512];
  char notice[640]; /* the last fallback, until taken */
  bool has_notice;
#ifdef ES_HAVE_CUDA
  EsCuda *cuda;
  /* An AUTO engine opens CUDA on a thread of its own (context creation
   * takes a third of a second), so that the caller decodes meanwhile and
   * small jobs need not wait for it. */
  pthread_mutex_t open_lock;
  pthread_t opener;
  bool opening;       /* the opener was started and not joined yet */
  atomic_bool opened; /* the opener has finished */
  int *open_devices;
  int n_open_devices;
  EsCuda *open_result;
  char open_reason[256];
  double open_start_ms; /* when the opener started */
  bool cuda_warm;       /* a job ran on the device: its kernels are loaded */
  double cuda_copy_gbs; /* es_engine_measure_peak on CUDA; 0 until then */
#endif
  double cpu_copy_gbs; /* es_engine_measure_peak on the CPU; 0 until then */
  bool counters;       /* es_engine_set_counters: hardware counters for every run */
};

/* A sticky device error poisons the CUDA context for the whole process, so
 * every engine created afterwards stays on the CPU. */
static char cuda_poisoned_reason[256];

double
es_monotonic_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

const char *
es_backend_name (EsBackendChoice backend)
{
  switch (backend)
    {
    case ES_BACKEND_AUTO: return "auto";
    case ES_BACKEND_CPU: return "cpu";
    case ES_BACKEND_CUDA: return "cuda";
    }
  return "?";
}

bool
es_backend_from_name (const char *name, EsBackendChoice *backend)
{
  static const EsBackendChoice all[] = { ES_BACKEND_AUTO, ES_BACKEND_CPU, ES_BACKEND_CUDA };

  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (strcmp (name, es_backend_name (all[i])) == 0)
      {
        *backend = all[i];
        return true;
      }
  return false;
}

int
es_cpu_thread_count (void)
{
  return omp_get_max_threads ();
}

bool
es_engine_cuda_compiled (void)
{
#ifdef ES_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

static void
engine_update_description (EsEngine *engine)
{
#ifdef ES_HAVE_CUDA
  if (engine->active == ES_BACKEND_CUDA)
    {
      snprintf (engine->description, sizeof engine->description, "CUDA: %s", es_cuda_device_name (engine->cuda));
      return;
    }
#endif
  snprintf (engine->description, sizeof engine->description, "CPU: OpenMP, %d thread%s (%s)", es_cpu_thread_count (),
            es_cpu_thread_count () == 1 ? "" : "s", engine->cuda_reason);
}

#ifdef ES_HAVE_CUDA
static void *
opener_main (void *data)
{
  EsEngine *engine = data;

  engine->open_result = es_cuda_open_devices (engine->open_devices, engine->n_open_devices, engine->open_reason,
                                              sizeof engine->open_reason);
  atomic_store (&engine->opened, true);
  return NULL;
}
#endif

/* Waits for a CUDA open in progress and takes its outcome. */
static void
engine_settle (EsEngine *engine)
{
#ifdef ES_HAVE_CUDA
  pthread_mutex_lock (&engine->open_lock);
  if (engine->opening)
    {
      pthread_join (engine->opener, NULL);
      engine->opening = false;
      engine->cuda = engine->open_result;
      if (engine->cuda != NULL)
        {
          engine->active = ES_BACKEND_CUDA;
          engine->cuda_reason[0] = '\0';
        }
      else
        snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s", engine->open_reason);
      engine_update_description (engine);
    }
  pthread_mutex_unlock (&engine->open_lock);
#else
  (void) engine;
#endif
}

bool
es_engine_opening (EsEngine *engine)
{
#ifdef ES_HAVE_CUDA
  bool opening;

  pthread_mutex_lock (&engine->open_lock);
  opening = engine->opening && !atomic_load (&engine->opened);
  pthread_mutex_unlock (&engine->open_lock);
  return opening;
#else
  (void) engine;
  return false;
#endif
}

EsEngine *
es_engine_new (EsBackendChoice choice, EsError *error)
{
  return es_engine_new_with_devices (choice, NULL, 0, error);
}

EsEngine *
es_engine_new_with_devices (EsBackendChoice choice, const int *devices, int n_devices, EsError *error)
{
  EsEngine *engine = calloc (1, sizeof *engine);

  if (engine == NULL)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the compute engine");
      return NULL;
    }
  engine->active = ES_BACKEND_CPU;
  engine->choice = choice;
#ifndef ES_HAVE_CUDA
  (void) devices;
  (void) n_devices;
#else
  pthread_mutex_init (&engine->open_lock, NULL);
#endif

  if (choice == ES_BACKEND_CPU)
    snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s", N_ ("the CPU backend was chosen"));
  else if (!es_engine_cuda_compiled ())
    snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s",
              N_ ("this build has no CUDA backend: nvcc was not found when it was built"));
  else if (cuda_poisoned_reason[0] != '\0')
    snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s", cuda_poisoned_reason);
#ifdef ES_HAVE_CUDA
  else if (choice == ES_BACKEND_AUTO && n_devices >= 0
           && (n_devices == 0 || (engine->open_devices = malloc ((size_t) n_devices * sizeof *devices)) != NULL))
    {
      if (n_devices > 0)
        memcpy (engine->open_devices, devices, (size_t) n_devices * sizeof *devices);
      engine->n_open_devices = n_devices;
      snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s", N_ ("CUDA is still being opened"));
      engine->open_start_ms = es_monotonic_ms ();
      engine->opening = pthread_create (&engine->opener, NULL, opener_main, engine) == 0;
      if (!engine->opening)
        engine->cuda = es_cuda_open_devices (devices, n_devices, engine->cuda_reason, sizeof engine->cuda_reason);
      if (engine->cuda != NULL)
        {
          engine->active = ES_BACKEND_CUDA;
          engine->cuda_reason[0] = '\0';
        }
    }
#endif
  else
    {
#ifdef ES_HAVE_CUDA
      engine->cuda = es_cuda_open_devices (devices, n_devices, engine->cuda_reason, sizeof engine->cuda_reason);
      if (engine->cuda != NULL)
        {
          engine->active = ES_BACKEND_CUDA;
          engine->cuda_reason[0] = '\0';
        }
#endif
    }

  if (choice == ES_BACKEND_CUDA && engine->active != ES_BACKEND_CUDA)
    {
      es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA cannot be used: %s", engine->cuda_reason);
      free (engine);
      return NULL;
    }
  engine_update_description (engine);
  return engine;
}

void
es_engine_free (EsEngine *engine)
{
  if (engine == NULL)
    return;
#ifdef ES_HAVE_CUDA
  engine_settle (engine);
  es_cuda_close (engine->cuda);
  pthread_mutex_destroy (&engine->open_lock);
  free (engine->open_devices);
#endif
  free (engine);
}

const char *
es_engine_describe (EsEngine *engine)
{
  engine_settle (engine);
  return engine->description;
}

EsBackendChoice
es_engine_backend (EsEngine *engine)
{
  engine_settle (engine);
  return engine->active;
}

const char *
es_engine_cuda_reason (EsEngine *engine)
{
  engine_settle (engine);
  return engine->cuda_reason;
}

const char *
es_engine_take_notice (EsEngine *engine)
{
  if (!engine->has_notice)
    return NULL;
  engine->has_notice = false;
  return engine->notice;
}

const EsVariant *
es_variants (EsOp op, size_t *n)
{
  const EsOpInfo *info = es_op_info (op);

#ifdef ES_HAVE_CUDA
  if (info != NULL && info->cuda != NULL)
    {
      *n = info->cuda->n_variants;
      return info->cuda->variants;
    }
#endif
  (void) info;
  *n = 0;
  return NULL;
}

const EsVariant *
es_variant_find (EsOp op, const char *id)
{
  size_t n;
  const EsVariant *variants = es_variants (op, &n);

  for (size_t i = 0; i < n; i++)
    if (id == NULL ? variants[i].is_default : strcmp (variants[i].id, id) == 0)
      return &variants[i];
  return NULL;
}

const char *
es_variant_unsupported (const EsVariant *variant, const EsJob *job)
{
  return variant->unsupported != NULL ? variant->unsupported (job) : NULL;
}

const char *
es_variant_slow_path (const EsVariant *variant, const EsJob *job)
{
#ifdef ES_HAVE_CUDA
  const EsOpInfo *info = es_op_info (job->op);

  if (info != NULL && info->cuda != NULL && info->cuda->slow_path != NULL)
    return info->cuda->slow_path (job, variant);
#endif
  (void) variant;
  (void) job;
  return NULL;
}

const EsVariant *
es_variant_for_job (const EsJob *job)
{
  size_t n;
  const EsVariant *variants = es_variants (job->op, &n);
  const EsVariant *named = es_variant_find (job->op, job->variant);

  if (named == NULL || es_variant_unsupported (named, job) == NULL)
    return named;
  for (size_t i = 0; i < n; i++)
    if (es_variant_unsupported (&variants[i], job) == NULL)
      return &variants[i];
  return named;
}

/* What of an entropy definition depends on the input: the mask's size and
 * a constant border's value, which is a sample of this image. */
static bool
validate_definition_input (const EsEntropyDefinition *d, const EsImage *in, EsError *error)
{
  uint32_t largest = in->levels != 0 ? (uint32_t) in->levels - 1 : (1u << in->depth) - 1;

  if (d->mask != NULL && (es_image_planes (in) > 1 || es_image_planes (d->mask) > 1)
      && (d->mask->width != in->width || d->mask->height != in->height
          || es_image_planes (d->mask) != es_image_planes (in)))
    return es_error_set (error, ES_ERROR_INVALID, "the mask is %d×%d×%d, the volume %d×%d×%d: they must match",
                         d->mask->width, d->mask->height, es_image_planes (d->mask), in->width, in->height,
                         es_image_planes (in));
  if (d->mask != NULL && (d->mask->width != in->width || d->mask->height != in->height))
    return es_error_set (error, ES_ERROR_INVALID, "the mask is %d×%d, the image %d×%d: they must match", d->mask->width,
                         d->mask->height, in->width, in->height);
  if (d->border == ES_BORDER_CONSTANT && d->border_value > largest)
    return es_error_set (error, ES_ERROR_INVALID, "border value %u is not a sample of this image (0..%u)",
                         d->border_value, largest);
  return true;
}

static bool
validate_input (const EsJob *job, const EsImage *in, EsError *error)
{
  if (in == NULL || in->pixels == NULL || in->width <= 0 || in->height <= 0)
    return es_error_set (error, ES_ERROR_INVALID, "no input image");
  if (in->width > ES_MAX_SIDE || in->height > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_LIMIT, "a %d×%d image is larger than %d pixels a side", in->width, in->height,
                         ES_MAX_SIDE);
  if (in->format != ES_FORMAT_U8 && in->format != ES_FORMAT_U16)
    return es_error_set (error, ES_ERROR_INVALID, "%s input cannot be processed; gray U8 or U16 is needed",
                         es_format_name (in->format));
  if (in->stride < (size_t) in->width * es_format_size (in->format))
    return es_error_set (error, ES_ERROR_INVALID, "the input's rows (%zu bytes) are shorter than its width",
                         in->stride);
  if (in->planes < 0 || in->planes > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_LIMIT, "a volume of %d planes is out of range: 0..%d", in->planes,
                         ES_MAX_SIDE);
  if (in->planes > 1 && in->plane_stride < in->stride * (size_t) in->height)
    return es_error_set (error, ES_ERROR_INVALID, "the input's planes (%zu bytes) are shorter than its rows",
                         in->plane_stride);
  if (in->levels < 0 || in->levels > ES_LEVELS_MAX)
    return es_error_set (error, ES_ERROR_INVALID, "the input holds %d levels; %d is the most", in->levels,
                         ES_LEVELS_MAX);
  if (in->depth < 1 || in->depth > (in->format == ES_FORMAT_U8 ? 8 : 16))
    return es_error_set (error, ES_ERROR_INVALID, "sample depth %d does not fit %s samples", in->depth,
                         es_format_name (in->format));
  if (in->levels != 0 && es_op_uses (job->op, ES_PARAM_LEVELS) && in->levels != job->levels)
    return es_error_set (error, ES_ERROR_INVALID,
                         "the image holds quantized levels for %d levels, but the job asks for %d; "
                         "load it again with %d levels",
                         in->levels, job->levels, job->levels);
  return job->op != ES_OP_ENTROPY || validate_definition_input (&job->definition, in, error);
}

/* A job on device memory (es_image_on_device) computes on that device,
 * straight from and into it: its result, and its mask if any, lie on the
 * same device, and the result is the caller's, of the right shape and
 * format (the engine allocates no device memory for results). Nothing the
 * host would have to read is allowed: minmax binning reads the image's
 * range, so the caller resolves it first (range:LO:HI). */
static bool
validate_device_images (const EsJob *job, const EsImage *in, const EsImage *out, EsError *error)
{
  const EsImage *mask = job->op == ES_OP_ENTROPY ? job->definition.mask : NULL;
  const EsFormat format = es_job_output_format (job, in->format);

  if (!es_image_on_device (in) && !es_image_on_device (out) && !es_image_on_device (mask))
    return true;
  if (!es_image_on_device (in) || !es_image_on_device (out) || (mask != NULL && !es_image_on_device (mask)))
    return es_error_set (error, ES_ERROR_INVALID,
                         "the image, its result%s must all lie in host memory or all on the same CUDA device",
                         mask != NULL ? " and its mask" : "");
  if (out->cuda_device != in->cuda_device || (mask != NULL && mask->cuda_device != in->cuda_device))
    return es_error_set (error, ES_ERROR_INVALID, "the image is on CUDA device %d, its %s on device %d",
                         in->cuda_device, out->cuda_device != in->cuda_device ? "result" : "mask",
                         out->cuda_device != in->cuda_device ? out->cuda_device : mask->cuda_device);
  if (out->pixels == NULL || out->width != in->width || out->height != in->height
      || es_image_planes (out) != es_image_planes (in) || out->format != format
      || out->stride < (size_t) out->width * es_format_size (format)
      || (es_image_planes (out) > 1 && out->plane_stride < out->stride * (size_t) out->height))
    return es_error_set (error, ES_ERROR_INVALID, "the result on the device must be a %d×%d%s %s image", in->width,
                         in->height, es_image_planes (in) > 1 ? "×planes" : "", es_format_name (format));
  if (job->op == ES_OP_ENTROPY && job->definition.binning == ES_BINNING_MINMAX && in->levels == 0)
    return es_error_set (error, ES_ERROR_INVALID,
                         "minmax binning reads the image's range on the host; on a device array give "
                         "binning range:LO:HI");
  return true;
}

bool
es_engine_volume_alloc (EsEngine *engine, EsImage *image, int width, int height, int planes, EsFormat format, int depth,
                        EsError *error)
{
#ifdef ES_HAVE_CUDA
  engine_settle (engine);
  if (engine->active == ES_BACKEND_CUDA)
    {
      size_t stride = (size_t) width * es_format_size (format);
      void *pixels;

      *image = (EsImage){ 0 };
      if (!es_image_check_volume_size (width, height, planes, format, error))
        return false;
      pixels = es_cuda_host_alloc (engine->cuda, stride * (size_t) height * (size_t) planes, error);
      if (pixels == NULL)
        return false;
      *image = (EsImage){
        .width = width,
        .height = height,
        .stride = stride,
        .planes = planes > 1 ? planes : 0,
        .plane_stride = planes > 1 ? stride * (size_t) height : 0,
        .format = format,
        .depth = depth,
        .pixels = pixels,
        .release = es_cuda_host_free,
      };
      return true;
    }
#endif
  (void) engine;
  return es_image_alloc_volume (image, width, height, planes, format, depth, error);
}

bool
es_engine_image_alloc (EsEngine *engine, EsImage *image, int width, int height, EsFormat format, int depth,
                       EsError *error)
{
  return es_engine_volume_alloc (engine, image, width, height, 1, format, depth, error);
}

/* Host memory a job needs beyond its input: the output (the CPU path works
 * in bands, so its own working memory is small). Checked against the
 * machine's memory before anything is allocated, so that an impossible job
 * is a clean error rather than a process killed by the kernel halfway. */
static bool
check_host_memory (const EsJob *job, const EsImage *in, EsError *error)
{
  uint64_t pixels = (uint64_t) in->width * (uint64_t) in->height * (uint64_t) es_image_planes (in);
  uint64_t needed = pixels * es_format_size (es_job_output_format (job, in->format));
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGESIZE);
  uint64_t physical = pages > 0 && page_size > 0 ? (uint64_t) pages * (uint64_t) page_size : 0;

  if (physical != 0 && needed + pixels * es_format_size (in->format) > physical)
    return es_error_set (error, ES_ERROR_NO_MEMORY,
                         "a %d×%d %s job needs %.1f GiB of memory; this machine has %.1f GiB", in->width, in->height,
                         es_op_name (job->op), (double) (needed + pixels * es_format_size (in->format)) / (1 << 30),
                         (double) physical / (1 << 30));
  return true;
}

#ifdef ES_HAVE_CUDA
static void
registered_free (void *pixels)
{
  es_cuda_host_unregister (pixels);
  free (pixels);
}

/* A result for the CUDA backend: plain memory that every core touches first,
 * then page-locked in place, which costs a tenth of fresh page-locked memory
 * (a one-shot run paid 100 ms for 256 MB of it; see
 * docs/performance/files.md, "Batches and one-shot runs"). Only for large
 * results: below 32 MiB the OpenMP team's start and the registration cost
 * more than the cache of page-locked blocks. A volume's planes follow each
 * other tightly packed in one block, so that the 3-D path downloads every
 * plane by DMA. False, with nothing allocated, when small or when CUDA
 * refuses: the caller takes es_engine_volume_alloc's memory then. */
static bool
registered_alloc (EsEngine *engine, EsImage *image, int width, int height, int planes, EsFormat format, int depth)
{
  enum { PAGE = 4096 };
  size_t stride = (size_t) width * es_format_size (format);
  size_t bytes, plane_bytes;
  uint8_t *pixels;

  if (!es_image_check_volume_size (width, height, planes, format, NULL))
    return false;
  plane_bytes = stride * (size_t) height;
  bytes = (plane_bytes * (size_t) planes + PAGE - 1) / PAGE * PAGE;
  if (bytes < ((size_t) 32 << 20) || (pixels = aligned_alloc (PAGE, bytes)) == NULL)
    return false;
#pragma omp parallel for schedule(static)
  for (size_t page = 0; page < bytes / PAGE; page++)
    pixels[page * PAGE] = 0;
  if (!es_cuda_host_register (engine->cuda, pixels, bytes))
    {
      free (pixels);
      return false;
    }
  *image = (EsImage){
    .width = width,
    .height = height,
    .stride = stride,
    .planes = planes > 1 ? planes : 0,
    .plane_stride = planes > 1 ? plane_bytes : 0,
    .format = format,
    .depth = depth,
    .pixels = pixels,
    .release = registered_free,
  };
  return true;
}
#endif

/* Makes `out` the right size and format, reusing its buffer when it already is. */
static bool
prepare_output (EsEngine *engine, bool on_cpu, const EsJob *job, const EsImage *in, EsImage *out, EsError *error)
{
  EsFormat format = es_job_output_format (job, in->format);
  int depth = es_format_depth (format);

  if (out->pixels != NULL && out->width == in->width && out->height == in->height
      && es_image_planes (out) == es_image_planes (in) && out->format == format)
    {
      out->depth = depth;
      out->levels = 0;
      return true;
    }
  es_image_clear (out);
  /* The CPU writes plain memory; a CUDA job (a 2-D image, or a volume that
   * the 3-D path moves whole) downloads by DMA into page-locked memory. */
  if (on_cpu)
    return es_image_alloc_volume (out, in->width, in->height, es_image_planes (in), format, depth, error);
#ifdef ES_HAVE_CUDA
  if (registered_alloc (engine, out, in->width, in->height, es_image_planes (in), format, depth))
    return true;
#endif
  return es_engine_volume_alloc (engine, out, in->width, in->height, es_image_planes (in), format, depth, error);
}

bool
es_run (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing, EsError *error)
{
  return es_run_controlled (engine, job, in, out, timing, NULL, error);
}

/* Whether `job` on `in` needs a kernel that takes the volume whole: a 3-D
 * window (on a volume or on a one-plane image), or a whole-image statistic
 * of several planes. */
static bool
needs_volume_kernel (const EsJob *job, const EsImage *in)
{
  return es_definition_is_3d (&job->definition) || (es_image_planes (in) > 1 && es_job_is_volumetric (job));
}

static bool run_validated (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing,
                           EsControl *control, double start, EsError *error);

#ifdef ES_HAVE_CUDA
/* A volume of an op whose result maps each pixel through one statistic of
 * every pixel (whole_image, no halo in x, y or z: equalize) is one image of
 * height · planes rows when its planes lie end to end, as the engine's own
 * volumes do: CUDA then computes it with its 2-D kernels. `tall` is that
 * image; false when the job or the layout is not so. */
static bool
tall_image_of (const EsJob *job, const EsImage *image, EsImage *tall)
{
  const EsOpInfo *info = es_op_info (job->op);
  const int planes = es_image_planes (image);

  if (planes <= 1 || !info->whole_image || info->image_grid || info->halo (job) != 0
      || (info->plane_halo != NULL && info->plane_halo (job) != 0)
      || image->plane_stride != (size_t) image->height * image->stride
      || (long long) image->height * planes > ES_MAX_SIDE)
    return false;
  *tall = *image;
  tall->height *= planes;
  tall->planes = 0;
  tall->plane_stride = 0;
  return true;
}

/* es_cuda_run on `device`, a volume that is a tall image given as that
 * image. Both tall, or neither: prepare_output lays a new volume's planes
 * end to end, and cuda_takes_volume checked a given one. */
static bool
cuda_run (EsCuda *device, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out, EsTiming *timing,
          EsControl *control, EsError *error)
{
  EsImage tall_in, tall_out;
  const bool tall = tall_image_of (job, in, &tall_in) && tall_image_of (job, out, &tall_out);

  return es_cuda_run (device, job, variant, tall ? &tall_in : in, tall ? &tall_out : out, timing, control, error);
}

/* Whether CUDA computes `job` on `in` into `out` (not yet allocated when
 * its pixels are NULL): a 2-D job, a volume its 3-D kernels take, or a
 * volume that is a tall image (tall_image_of). */
static bool
cuda_takes_volume (const EsJob *job, const EsImage *in, const EsImage *out)
{
  EsImage tall;

  return !needs_volume_kernel (job, in) || es_op_info (job->op)->cuda->volumes
         || (tall_image_of (job, in, &tall) && (out->pixels == NULL || tall_image_of (job, out, &tall)));
}
#endif

const char *
es_host_memory_name (EsHostMemory memory)
{
  static const char *const names[] = { "none", "pinned", "staged", "pageable", "mixed" };
  return (unsigned) memory < sizeof names / sizeof names[0] ? names[memory] : "?";
}

void
es_timing_update_rates (EsTiming *timing)
{
  EsMetrics *m = &timing->metrics;
  const double bytes = m->model.read_bytes + m->model.write_bytes;

  m->achieved_gbs = timing->kernel_ms > 0 ? bytes / 1e6 / timing->kernel_ms : 0;
  m->copy_share = m->copy_gbs > 0 ? m->achieved_gbs / m->copy_gbs : 0;
  m->datasheet_share = m->datasheet_gbs > 0 ? m->achieved_gbs / m->datasheet_gbs : 0;
  m->upload_gbs = timing->upload_ms > 0 ? m->upload_bytes / 1e6 / timing->upload_ms : 0;
  m->download_gbs = timing->download_ms > 0 ? m->download_bytes / 1e6 / timing->download_ms : 0;
}

/* The model of the code that ran (the variant's, or the CPU runner's) on
 * this run's input, and the rates from it. */
static void
finish_metrics (EsEngine *engine, const EsJob *job, const EsVariant *variant, const EsImage *in, EsTiming *timing)
{
  EsMetrics *m = &timing->metrics;
  const EsExtent extent = es_extent_of (in);
  const EsMemoryModel model = variant != NULL ? variant->memory : es_op_info (job->op)->cpu_memory;

  m->pixels = es_extent_pixels (&extent);
  model (job, &extent, &m->model);
#ifdef ES_HAVE_CUDA
  m->copy_gbs = variant != NULL ? engine->cuda_copy_gbs : engine->cpu_copy_gbs;
#else
  m->copy_gbs = engine->cpu_copy_gbs;
#endif
  es_timing_update_rates (timing);
}

void
es_counters_add (EsCounters *sum, const EsCounters *part)
{
  if (!part->measured)
    return;
  const double sectors = sum->l2_sectors + part->l2_sectors, cycles = sum->active_cycles + part->active_cycles;

  if (sectors > 0)
    sum->l2_hit_rate = (sum->l2_hit_rate * sum->l2_sectors + part->l2_hit_rate * part->l2_sectors) / sectors;
  if (cycles > 0)
    sum->achieved_occupancy = (sum->achieved_occupancy * sum->active_cycles
                               + part->achieved_occupancy * part->active_cycles)
                              / cycles;
  sum->dram_read_bytes += part->dram_read_bytes;
  sum->dram_write_bytes += part->dram_write_bytes;
  sum->shared_bank_conflicts += part->shared_bank_conflicts;
  sum->local_bytes += part->local_bytes;
  sum->l2_sectors = sectors;
  sum->active_cycles = cycles;
  sum->launches += part->launches;
  sum->measured = true;
}

void
es_metrics_take_counters (EsMetrics *metrics, const EsMetrics *counted)
{
  metrics->counters = counted->counters;
  memcpy (metrics->counters_note, counted->counters_note, sizeof metrics->counters_note);
  for (int i = 0; i < metrics->n_kernels && i < counted->n_kernels; i++)
    if (strcmp (metrics->kernels[i].name, counted->kernels[i].name) == 0)
      metrics->kernels[i].counters = counted->kernels[i].counters;
}

void
es_engine_set_counters (EsEngine *engine, bool on)
{
  engine->counters = on;
}

bool
es_engine_counters (EsEngine *engine)
{
  return engine->counters;
}

/* Why a run that asked for hardware counters has none: they are the
 * device's, and this run was on the CPU. */
static void
note_no_counters_on_cpu (EsEngine *engine, EsTiming *timing)
{
  if (engine->counters)
    snprintf (timing->metrics.counters_note, sizeof timing->metrics.counters_note, "%s",
              N_ ("hardware counters are read on a CUDA GPU, and this run was on the CPU"));
}

void
es_timing_accumulate (EsTiming *total, const EsTiming *part)
{
  EsMetrics sum = total->metrics;

  total->upload_ms += part->upload_ms;
  total->kernel_ms += part->kernel_ms;
  total->download_ms += part->download_ms;
  total->backend = part->backend;
  total->variant = part->variant;
  total->fell_back |= part->fell_back;
  total->metrics = part->metrics;
  total->metrics.pixels += sum.pixels;
  total->metrics.model.read_bytes += sum.model.read_bytes;
  total->metrics.model.write_bytes += sum.model.write_bytes;
  total->metrics.model.shared_bytes += sum.model.shared_bytes;
  total->metrics.upload_bytes += sum.upload_bytes;
  total->metrics.download_bytes += sum.download_bytes;
  total->metrics.counters = sum.counters;
  es_counters_add (&total->metrics.counters, &part->metrics.counters);
  if (part->metrics.counters_note[0] == '\0')
    memcpy (total->metrics.counters_note, sum.counters_note, sizeof sum.counters_note);
  es_timing_update_rates (total);
}

/* A job whose planes are independent (a 2-D window, sharpen, quantize) on
 * a volume: today's 2-D path on each plane, on any backend, so that every
 * plane's result and speed are those of the same 2-D image. */
static bool
run_planes (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing, EsControl *control,
            double start, EsError *error)
{
  if (!es_image_on_device (in)
      && (!check_host_memory (job, in, error) || !prepare_output (engine, true, job, in, out, error)))
    return false;
  for (int z = 0; z < es_image_planes (in); z++)
    {
      EsImage in_plane = es_image_plane (in, z), out_plane = es_image_plane (out, z), mask_plane;
      EsJob plane_job = *job;
      EsTiming plane_timing;

      if (job->definition.mask != NULL)
        {
          mask_plane = es_image_plane (job->definition.mask, z);
          plane_job.definition.mask = &mask_plane;
        }
      if (!run_validated (engine, &plane_job, &in_plane, &out_plane, &plane_timing, control, es_monotonic_ms (), error))
        return false;
      es_timing_accumulate (timing, &plane_timing);
    }
  timing->wall_ms = es_monotonic_ms () - start;
  return true;
}

bool
es_run_controlled (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing,
                   EsControl *control, EsError *error)
{
  EsTiming local_timing;
  double start = es_monotonic_ms ();
  EsJob resolved;

  if (timing == NULL)
    timing = &local_timing;
  *timing = (EsTiming){ 0 };

  /* The one gate: past it the job, the input and the variant are valid, and
   * the backends only assert. */
  if (!es_job_validate (job, error) || !validate_input (job, in, error)
      || !validate_device_images (job, in, out, error))
    return false;
  /* One whole-image statistic before any band or plane: minmax binning's
   * range, over every plane of a volume. */
  resolved = *job;
  es_job_resolve_minmax (&resolved, in);
  job = &resolved;
  if (job->variant != NULL && es_variant_find (job->op, job->variant) == NULL)
    return es_error_set (error, ES_ERROR_INVALID, "%s has no kernel variant \"%s\"%s", es_op_name (job->op),
                         job->variant, es_engine_cuda_compiled () ? "" : " (this build has no CUDA backend)");
  if (es_image_planes (in) > 1 && !needs_volume_kernel (job, in))
    return run_planes (engine, job, in, out, timing, control, start, error);
  return run_validated (engine, job, in, out, timing, control, start, error);
}

#ifdef ES_HAVE_CUDA
/* After a sticky device error: CUDA off for this engine and, through
 * cuda_poisoned_reason, for every engine made afterwards. */
static void
engine_turn_cuda_off (EsEngine *engine, const char *message)
{
  snprintf (cuda_poisoned_reason, sizeof cuda_poisoned_reason,
            "CUDA is off for this session after a device error: %.180s", message);
  snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s", cuda_poisoned_reason);
  es_cuda_close (engine->cuda);
  engine->cuda = NULL;
  engine->active = ES_BACKEND_CPU;
  engine_update_description (engine);
}
#endif

/* A job on device memory: on that device or not at all. It never goes
 * to the CPU (which would read device memory, or copy it silently), so a
 * definition that only the CPU computes, a CPU engine and a failing
 * kernel are errors. */
static bool
run_on_device (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing,
               EsControl *control, double start, EsError *error)
{
#ifdef ES_HAVE_CUDA
  const EsVariant *variant = es_variant_for_job (job);
  const EsCudaOp *cuda_op = es_op_info (job->op)->cuda;
  const char *no_variant = variant != NULL ? es_variant_unsupported (variant, job) : "this build has no CUDA kernel";
  EsCuda *device;

  if (cuda_op == NULL || !cuda_takes_volume (job, in, out))
    return es_error_set (error, ES_ERROR_UNAVAILABLE,
                         cuda_op == NULL
                           ? "CUDA has no kernel for %s, and a device array is computed on its device only"
                           : "CUDA has no 3-D kernel for %s, and a device volume is computed on its device "
                             "only: give a volume whose planes lie end to end",
                         es_op_name (job->op));
  if (no_variant != NULL)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "%s: %s, and a device array is computed on its device only",
                         es_op_name (job->op), no_variant);
  if (engine->choice != ES_BACKEND_CPU)
    engine_settle (engine);
  if (engine->active != ES_BACKEND_CUDA)
    return es_error_set (error, ES_ERROR_UNAVAILABLE,
                         "a CUDA device array needs the CUDA backend; this engine computes on the CPU (%s)",
                         engine->choice == ES_BACKEND_CPU ? "backend cpu was asked for" : engine->cuda_reason);
  device = es_cuda_on_device (engine->cuda, in->cuda_device);
  if (device == NULL)
    return es_error_set (error, ES_ERROR_UNAVAILABLE,
                         "the array is on CUDA device %d, which this engine did not "
                         "open (%s)",
                         in->cuda_device, es_engine_describe (engine));
  engine->cuda_warm = true;
  es_cuda_want_counters (device, engine->counters);
  if (!cuda_run (device, job, variant, in, out, timing, control, error))
    {
      if (es_cuda_is_broken (engine->cuda))
        engine_turn_cuda_off (engine, error->message);
      return false;
    }
  timing->wall_ms = es_monotonic_ms () - start;
  return true;
#else
  (void) engine, (void) job, (void) out, (void) timing, (void) control, (void) start;
  return es_error_set (error, ES_ERROR_UNAVAILABLE,
                       "the array lies on CUDA device %d, and this build has no CUDA backend", in->cuda_device);
#endif
}

/* Runs a job that passed the gate on a 2-D image, or on a volume as a whole. */
static bool
run_validated (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsTiming *timing,
               EsControl *control, double start, EsError *error)
{
  double cpu_start;
  bool on_cpu = true;

  *timing = (EsTiming){ 0 };
  if (es_image_on_device (in))
    return run_on_device (engine, job, in, out, timing, control, start, error);
#ifdef ES_HAVE_CUDA
  /* A variant that cannot compute this definition gives way to one that can. */
  const EsVariant *variant = es_variant_for_job (job);

  const EsCudaOp *cuda_op = es_op_info (job->op)->cuda;
  /* No variant computes this definition (CLAHE's presets): the CPU does. */
  const char *no_variant = variant != NULL ? es_variant_unsupported (variant, job) : NULL;

  if (no_variant != NULL)
    {
      if (engine->choice == ES_BACKEND_CUDA)
        {
          snprintf (engine->notice, sizeof engine->notice, "%s: %s; the result was computed on the CPU",
                    es_op_name (job->op), no_variant);
          engine->has_notice = true;
        }
    }
  else if (cuda_op == NULL || !cuda_takes_volume (job, in, out))
    {
      /* Said once where the user expects CUDA: an AUTO engine picks the CPU
       * for such jobs anyway. An operation whose row has no CUDA entry
       * (cuda NULL) runs on the CPU on every backend. */
      if (engine->choice == ES_BACKEND_CUDA)
        {
          snprintf (engine->notice, sizeof engine->notice,
                    cuda_op == NULL ? "CUDA has no kernel for %s; the result was computed on the CPU"
                                    : "CUDA has no 3-D kernel for %s on a volume; the result was computed on the CPU",
                    es_op_name (job->op));
          engine->has_notice = true;
        }
    }
  else
    {
      /* An AUTO engine runs a job where it is expected to be done first,
     * counting what CUDA has still to open and load (es-auto.c). A named
     * variant is a CUDA kernel, and injected faults must reach the device. */
      bool opening = es_engine_opening (engine);
      bool prefer_cpu = false;

      if (engine->choice == ES_BACKEND_AUTO && job->variant == NULL
          && es_test_hook_cuda_fault () == ES_TEST_CUDA_FAULT_NONE)
        {
          double open_left = opening ? ES_AUTO_CUDA_OPEN_MS - (es_monotonic_ms () - engine->open_start_ms) : 0;
          EsAutoCase c = {
            .job = job,
            .pixels = (uint64_t) in->width * (uint64_t) in->height * (uint64_t) es_image_planes (in),
            .in_bytes = in->stride * (size_t) in->height * (size_t) es_image_planes (in),
            .out_bytes = (size_t) in->width * (size_t) in->height * (size_t) es_image_planes (in)
                         * es_format_size (es_job_output_format (job, in->format)),
            .cpu_threads = es_cpu_thread_count (),
            .cuda_open_left_ms = open_left > 0 ? open_left : 0,
            .cuda_warm = engine->cuda_warm,
          };
          prefer_cpu = es_auto_prefers_cpu (&c);
        }
      if (!prefer_cpu)
        engine_settle (engine);
      on_cpu = prefer_cpu || engine->active != ES_BACKEND_CUDA;
    }
#endif
  if (!check_host_memory (job, in, error) || !prepare_output (engine, on_cpu, job, in, out, error))
    return false;
  if (es_control_cancelled (control))
    return es_error_set (error, ES_ERROR_CANCELLED, "cancelled");

#ifdef ES_HAVE_CUDA
  if (!on_cpu)
    {
      EsError cuda_error = { 0 };

      engine->cuda_warm = true;
      es_cuda_want_counters (engine->cuda, engine->counters);
      if (cuda_run (engine->cuda, job, variant, in, out, timing, control, &cuda_error))
        {
          finish_metrics (engine, job, variant, in, timing);
          timing->wall_ms = es_monotonic_ms () - start;
          return true;
        }
      /* A cancelled job is not a CUDA failure: nothing to finish. */
      if (cuda_error.code == ES_ERROR_CANCELLED)
        {
          *error = cuda_error;
          return false;
        }
      /* Finish the job on the CPU; the user hears about it once. */
      if (es_cuda_is_broken (engine->cuda))
        {
          engine_turn_cuda_off (engine, cuda_error.message);
          snprintf (engine->notice, sizeof engine->notice,
                    "CUDA failed (%.400s); the result was computed on the CPU, which is used from now on",
                    cuda_error.message);
        }
      else
        snprintf (engine->notice, sizeof engine->notice, "CUDA failed (%.400s); the result was computed on the CPU",
                  cuda_error.message);
      engine->has_notice = true;
      *timing = (EsTiming){ 0 };
      timing->fell_back = true;
    }
#endif

  cpu_start = es_monotonic_ms ();
  if (!es_op_info (job->op)->cpu (job, in, out, control, error))
    return false;
  timing->kernel_ms = es_monotonic_ms () - cpu_start;
  timing->backend = ES_BACKEND_CPU;
  timing->variant = "openmp";
  finish_metrics (engine, job, NULL, in, timing);
  note_no_counters_on_cpu (engine, timing);
  timing->wall_ms = es_monotonic_ms () - start;
  return true;
}

bool
es_engine_wait_stream (EsEngine *engine, int device, uintptr_t stream, EsError *error)
{
#ifdef ES_HAVE_CUDA
  EsCuda *cuda;

  engine_settle (engine);
  cuda = engine->active == ES_BACKEND_CUDA ? es_cuda_on_device (engine->cuda, device) : NULL;
  if (cuda != NULL)
    return es_cuda_wait_stream (cuda, stream, error);
#endif
  (void) stream;
  return es_error_set (error, ES_ERROR_UNAVAILABLE, "this engine computes nothing on CUDA device %d", device);
}

bool
es_engine_pointer_device (const void *pointer, int *device)
{
#ifdef ES_HAVE_CUDA
  return es_cuda_pointer_device (pointer, device);
#else
  (void) pointer, (void) device;
  return false;
#endif
}

bool
es_engine_cuda_stream (EsEngine *engine, int device, uintptr_t *stream)
{
#ifdef ES_HAVE_CUDA
  EsCuda *cuda;

  engine_settle (engine);
  cuda = engine->active == ES_BACKEND_CUDA ? es_cuda_on_device (engine->cuda, device) : NULL;
  if (cuda != NULL)
    {
      *stream = es_cuda_stream_handle (cuda);
      return true;
    }
#endif
  (void) engine, (void) device, (void) stream;
  return false;
}

bool
es_engine_floor (EsEngine *engine, EsFloorKind kind, size_t in_bytes, size_t out_bytes, int repeats, double *median_ms,
                 EsError *error)
{
#ifdef ES_HAVE_CUDA
  engine_settle (engine);
  if (engine->active == ES_BACKEND_CUDA)
    return es_cuda_floor (engine->cuda, kind, in_bytes, out_bytes, repeats, median_ms, error);
#endif
  (void) kind, (void) in_bytes, (void) out_bytes, (void) repeats, (void) median_ms;
  return es_error_set (error, ES_ERROR_UNAVAILABLE, "the %s floor needs CUDA: %s",
                       kind == ES_FLOOR_COPY ? "copy" : "transfer", engine->cuda_reason);
}

bool
es_engine_measure_peak (EsEngine *engine, EsError *error)
{
  /* Each way, CUDA: 256 MiB, four times an H200's L2, so that the copy
   * streams from DRAM as the jobs the metrics describe do; CPU: 64 MiB,
   * far past any last-level cache, at a quarter of the time. */
  const size_t cpu_bytes = (size_t) 64 << 20;

#ifdef ES_HAVE_CUDA
  engine_settle (engine);
  if (engine->active == ES_BACKEND_CUDA)
    {
      const size_t bytes = (size_t) 256 << 20;
      double ms = 0;

      if (engine->cuda_copy_gbs > 0)
        return true;
      if (!es_cuda_floor (engine->cuda, ES_FLOOR_COPY, bytes, bytes, 5, &ms, error))
        return false;
      engine->cuda_copy_gbs = ms > 0 ? 2.0 * (double) bytes / 1e6 / ms : 0;
    }
#endif
  if (engine->cpu_copy_gbs > 0)
    return true;
  engine->cpu_copy_gbs = es_cpu_copy_gbs (cpu_bytes, 5);
  if (engine->cpu_copy_gbs <= 0)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the 2 × %zu MiB of the memcpy peak",
                         cpu_bytes >> 20);
  return true;
}
