/* SPDX-License-Identifier: MIT */
/* The engine: picks a backend once, runs jobs, and falls back to the CPU when CUDA fails. */
#include "es-engine.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef ES_HAVE_CUDA
#include "cuda/es-cuda.h"
#endif

struct EsEngine
{
  EsBackendChoice active;     /* ES_BACKEND_CPU or ES_BACKEND_CUDA */
  char cuda_reason[256];      /* why CUDA is not in use; "" while it is */
  char description[512];
  char notice[640];           /* the last fallback, until taken */
  bool has_notice;
#ifdef ES_HAVE_CUDA
  EsCuda *cuda;
#endif
};

/* A sticky device error poisons the CUDA context for the whole process, so
 * every engine created afterwards stays on the CPU. */
static char cuda_poisoned_reason[256];

static double
now_ms (void)
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
      snprintf (engine->description, sizeof engine->description, "CUDA: %s",
                es_cuda_device_name (engine->cuda));
      return;
    }
#endif
  snprintf (engine->description, sizeof engine->description, "CPU: OpenMP, %d thread%s (%s)",
            es_cpu_thread_count (), es_cpu_thread_count () == 1 ? "" : "s", engine->cuda_reason);
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
#ifndef ES_HAVE_CUDA
  (void) devices;
  (void) n_devices;
#endif

  if (choice == ES_BACKEND_CPU)
    snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "the CPU backend was chosen");
  else if (!es_engine_cuda_compiled ())
    snprintf (engine->cuda_reason, sizeof engine->cuda_reason,
              "this build has no CUDA backend: nvcc was not found when it was built");
  else if (cuda_poisoned_reason[0] != '\0')
    snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s", cuda_poisoned_reason);
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
  es_cuda_close (engine->cuda);
#endif
  free (engine);
}

const char *
es_engine_describe (EsEngine *engine)
{
  return engine->description;
}

EsBackendChoice
es_engine_backend (EsEngine *engine)
{
  return engine->active;
}

const char *
es_engine_cuda_reason (EsEngine *engine)
{
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

static bool
validate_input (const EsJob *job, const EsImage *in, EsError *error)
{
  if (in == NULL || in->pixels == NULL || in->width <= 0 || in->height <= 0)
    return es_error_set (error, ES_ERROR_INVALID, "no input image");
  if (in->width > ES_MAX_SIDE || in->height > ES_MAX_SIDE)
    return es_error_set (error, ES_ERROR_LIMIT, "a %d×%d image is larger than %d pixels a side",
                         in->width, in->height, ES_MAX_SIDE);
  if (in->format != ES_FORMAT_U8 && in->format != ES_FORMAT_U16)
    return es_error_set (error, ES_ERROR_INVALID, "%s input cannot be processed; gray U8 or U16 is needed",
                         es_format_name (in->format));
  if (in->stride < (size_t) in->width * es_format_size (in->format))
    return es_error_set (error, ES_ERROR_INVALID, "the input's rows (%zu bytes) are shorter than its width",
                         in->stride);
  if (in->levels < 0 || in->levels > ES_LEVELS_MAX)
    return es_error_set (error, ES_ERROR_INVALID, "the input holds %d levels; %d is the most",
                         in->levels, ES_LEVELS_MAX);
  if (in->depth < 1 || in->depth > (in->format == ES_FORMAT_U8 ? 8 : 16))
    return es_error_set (error, ES_ERROR_INVALID, "sample depth %d does not fit %s samples",
                         in->depth, es_format_name (in->format));
  if (in->levels != 0 && es_op_uses (job->op, ES_PARAM_LEVELS) && in->levels != job->levels)
    return es_error_set (error, ES_ERROR_INVALID,
                         "the image holds quantized levels for %d levels, but the job asks for %d; "
                         "load it again with %d levels", in->levels, job->levels, job->levels);
  return true;
}

bool
es_engine_image_alloc (EsEngine *engine, EsImage *image, int width, int height,
                       EsFormat format, int depth, EsError *error)
{
#ifdef ES_HAVE_CUDA
  if (engine->active == ES_BACKEND_CUDA)
    {
      void *pixels;

      *image = (EsImage) { 0 };
      if (!es_image_check_size (width, height, format, error))
        return false;
      pixels = es_cuda_host_alloc (engine->cuda, (size_t) width * height * es_format_size (format), error);
      if (pixels == NULL)
        return false;
      *image = (EsImage) {
        .width = width, .height = height, .stride = (size_t) width * es_format_size (format),
        .format = format, .depth = depth, .pixels = pixels, .release = es_cuda_host_free,
      };
      return true;
    }
#endif
  (void) engine;
  return es_image_alloc (image, width, height, format, depth, error);
}

/* Host memory a job needs beyond its input: the output (the CPU path works
 * in bands, so its own working memory is small). Checked against the
 * machine's memory before anything is allocated, so that an impossible job
 * is a clean error rather than a process killed by the kernel halfway. */
static bool
check_host_memory (const EsJob *job, const EsImage *in, EsError *error)
{
  uint64_t pixels = (uint64_t) in->width * (uint64_t) in->height;
  uint64_t needed = pixels * es_format_size (es_op_output_format (job->op));
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGESIZE);
  uint64_t physical = pages > 0 && page_size > 0 ? (uint64_t) pages * (uint64_t) page_size : 0;

  if (physical != 0 && needed + pixels * es_format_size (in->format) > physical)
    return es_error_set (error, ES_ERROR_NO_MEMORY,
                         "a %d×%d %s job needs %.1f GiB of memory; this machine has %.1f GiB",
                         in->width, in->height, es_op_name (job->op),
                         (double) (needed + pixels * es_format_size (in->format)) / (1 << 30),
                         (double) physical / (1 << 30));
  return true;
}

/* Makes `out` the right size and format, reusing its buffer when it already is. */
static bool
prepare_output (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out, EsError *error)
{
  EsFormat format = es_op_output_format (job->op);
  int depth = format == ES_FORMAT_U8 ? 8 : 0;

  if (out->pixels != NULL && out->width == in->width && out->height == in->height
      && out->format == format)
    {
      out->depth = depth;
      out->levels = 0;
      return true;
    }
  es_image_clear (out);
  return es_engine_image_alloc (engine, out, in->width, in->height, format, depth, error);
}

bool
es_run (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out,
        EsTiming *timing, EsError *error)
{
  return es_run_controlled (engine, job, in, out, timing, NULL, error);
}

bool
es_run_controlled (EsEngine *engine, const EsJob *job, const EsImage *in, EsImage *out,
                   EsTiming *timing, EsControl *control, EsError *error)
{
  EsTiming local_timing;
  double start = now_ms ();
  double cpu_start;
  const EsVariant *variant;

  if (timing == NULL)
    timing = &local_timing;
  *timing = (EsTiming) { 0 };

  /* The one gate: past it the job, the input and the variant are valid, and
   * the backends only assert. */
  if (!es_job_validate (job, error) || !validate_input (job, in, error))
    return false;
  variant = es_variant_find (job->op, job->variant);
  if (job->variant != NULL && variant == NULL)
    return es_error_set (error, ES_ERROR_INVALID, "%s has no kernel variant \"%s\"%s",
                         es_op_name (job->op), job->variant,
                         es_engine_cuda_compiled () ? "" : " (this build has no CUDA backend)");
  if (!check_host_memory (job, in, error) || !prepare_output (engine, job, in, out, error))
    return false;
  if (es_control_cancelled (control))
    return es_error_set (error, ES_ERROR_CANCELLED, "cancelled");

#ifdef ES_HAVE_CUDA
  if (engine->active == ES_BACKEND_CUDA)
    {
      EsError cuda_error = { 0 };

      if (es_cuda_run (engine->cuda, job, variant, in, out, timing, control, &cuda_error))
        {
          timing->wall_ms = now_ms () - start;
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
          snprintf (cuda_poisoned_reason, sizeof cuda_poisoned_reason,
                    "CUDA is off for this session after a device error: %.180s", cuda_error.message);
          snprintf (engine->cuda_reason, sizeof engine->cuda_reason, "%s", cuda_poisoned_reason);
          es_cuda_close (engine->cuda);
          engine->cuda = NULL;
          engine->active = ES_BACKEND_CPU;
          engine_update_description (engine);
          snprintf (engine->notice, sizeof engine->notice,
                    "CUDA failed (%.400s); the result was computed on the CPU, which is used from now on",
                    cuda_error.message);
        }
      else
        snprintf (engine->notice, sizeof engine->notice,
                  "CUDA failed (%.400s); the result was computed on the CPU", cuda_error.message);
      engine->has_notice = true;
      *timing = (EsTiming) { 0 };
      timing->fell_back = true;
    }
#endif

  cpu_start = now_ms ();
  if (!es_op_info (job->op)->cpu (job, in, out, control, error))
    return false;
  timing->kernel_ms = now_ms () - cpu_start;
  timing->backend = ES_BACKEND_CPU;
  timing->variant = "openmp";
  timing->wall_ms = now_ms () - start;
  return true;
}

bool
es_engine_floor (EsEngine *engine, EsFloorKind kind, size_t in_bytes, size_t out_bytes, int repeats,
                 double *median_ms, EsError *error)
{
#ifdef ES_HAVE_CUDA
  if (engine->active == ES_BACKEND_CUDA)
    return es_cuda_floor (engine->cuda, kind, in_bytes, out_bytes, repeats, median_ms, error);
#endif
  (void) kind, (void) in_bytes, (void) out_bytes, (void) repeats, (void) median_ms;
  return es_error_set (error, ES_ERROR_UNAVAILABLE, "the %s floor needs CUDA: %s",
                       kind == ES_FLOOR_COPY ? "copy" : "transfer", engine->cuda_reason);
}
