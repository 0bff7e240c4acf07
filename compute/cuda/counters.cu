/* SPDX-License-Identifier: MIT */
/* Hardware counters of a run's kernels: CUPTI's range profiler, opened at run time by the first run that asks. */
#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "es-cuda-internal.h"
#include "es-i18n.h"

/* What EsCounters holds, in the order of the evaluated values; the last
 * two weigh the rates when launches are added (es_counters_add). */
static const char *metric_names[] = {
  "dram__bytes_read.sum",
  "dram__bytes_write.sum",
  "lts__t_sector_hit_rate.pct",
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
  "sm__warps_active.avg.pct_of_peak_sustained_active",
  "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
  "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
  "lts__t_sectors.sum",
  "sm__cycles_active.sum",
};
#define N_METRICS (sizeof metric_names / sizeof metric_names[0])

static EsCounters
counters_of (const double v[N_METRICS])
{
  EsCounters c = {};

  c.measured = true;
  c.launches = 1;
  c.dram_read_bytes = v[0];
  c.dram_write_bytes = v[1];
  c.l2_hit_rate = v[2] / 100;
  c.shared_bank_conflicts = v[3] + v[4];
  c.achieved_occupancy = v[5] / 100;
  c.local_bytes = v[6] + v[7];
  c.l2_sectors = v[8];
  c.active_cycles = v[9];
  return c;
}

/* CUPTI's parameter blocks: zeroed, with their size (which is how CUPTI
 * tells the fields a caller knows). */
template <typename Params>
static Params
params (size_t size)
{
  Params p;

  memset (&p, 0, sizeof p);
  p.structSize = size;
  return p;
}
#define CUPTI_PARAMS(type) params<type> (type##_STRUCT_SIZE)

/* ---- the library ------------------------------------------------------------- */

/* The entry points, resolved from libcupti once: nothing links it, so that
 * a run that asks for no counters never loads it. */
#define CUPTI_FUNCTIONS(X)                                                                                             \
  X (cuptiGetResultString)                                                                                             \
  X (cuptiProfilerInitialize)                                                                                          \
  X (cuptiDeviceGetChipName)                                                                                           \
  X (cuptiProfilerHostInitialize)                                                                                      \
  X (cuptiProfilerHostConfigAddMetrics)                                                                                \
  X (cuptiProfilerHostGetConfigImageSize)                                                                              \
  X (cuptiProfilerHostGetConfigImage)                                                                                  \
  X (cuptiProfilerHostEvaluateToGpuValues)                                                                             \
  X (cuptiRangeProfilerEnable)                                                                                         \
  X (cuptiRangeProfilerDisable)                                                                                        \
  X (cuptiRangeProfilerGetCounterDataSize)                                                                             \
  X (cuptiRangeProfilerCounterDataImageInitialize)                                                                     \
  X (cuptiRangeProfilerSetConfig)                                                                                      \
  X (cuptiRangeProfilerStart)                                                                                          \
  X (cuptiRangeProfilerStop)                                                                                           \
  X (cuptiRangeProfilerDecodeData)                                                                                     \
  X (cuptiRangeProfilerGetCounterDataInfo)

static struct {
#define CUPTI_POINTER(name) decltype (&::name) name;
  CUPTI_FUNCTIONS (CUPTI_POINTER)
#undef CUPTI_POINTER
  CUresult (*ctx_get_current) (CUcontext *ctx);
} cupti;

/* Set once, by the first run that asks: NULL when CUPTI is usable, else
 * why not (a static sentence, or `why_text`); it never changes after. */
static pthread_once_t cupti_once = PTHREAD_ONCE_INIT;
static const char *cupti_unusable;
static char cupti_why_text[160];

/* The privileges refusal, which the user can act on, in words of its own;
 * any other failure in CUPTI's. */
static const char *
cupti_failure (CUptiResult result, const char *what, char *text, size_t size)
{
  const char *words = NULL;

  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || result == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
    return N_ ("the driver reserves the GPU's performance counters to administrators "
               "(NVreg_RestrictProfilingToAdminUsers)");
  if (cupti.cuptiGetResultString == NULL || cupti.cuptiGetResultString (result, &words) != CUPTI_SUCCESS)
    words = NULL;
  snprintf (text, size, "CUPTI's %s failed: %s", what, words != NULL ? words : "unknown error");
  return text;
}

/* libcupti of this toolkit's major version: from the library path (the
 * CUDA toolkit's lib64 in LD_LIBRARY_PATH or ld.so.conf), else where the
 * build found its headers. */
static void *
cupti_open (void)
{
  char name[64], path[512];
  void *library;

  snprintf (name, sizeof name, "libcupti.so.%d", CUDART_VERSION / 1000);
  library = dlopen (name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL)
    {
      snprintf (path, sizeof path, "%s/../lib64/%s", ES_CUPTI_INCLUDE, name);
      library = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    }
  return library;
}

static void
cupti_load (void)
{
  void *library = cupti_open ();
  void *entry = NULL;
  cudaDriverEntryPointQueryResult found;

  if (library == NULL)
    {
      cupti_unusable = N_ ("CUPTI (libcupti, from the CUDA toolkit) is not installed on this machine");
      return;
    }
#define CUPTI_RESOLVE(name)                                                                                            \
  cupti.name = (decltype (cupti.name)) dlsym (library, #name);                                                         \
  if (cupti.name == NULL)                                                                                              \
    {                                                                                                                  \
      snprintf (cupti_why_text, sizeof cupti_why_text, "libcupti has no %s: CUDA 12.6 or later is needed", #name);     \
      cupti_unusable = cupti_why_text;                                                                                 \
      return;                                                                                                          \
    }
  CUPTI_FUNCTIONS (CUPTI_RESOLVE)
#undef CUPTI_RESOLVE
  /* The range profiler takes the driver's context; the static runtime
   * hands out the driver's own entry point for it. */
  if (cudaGetDriverEntryPointByVersion ("cuCtxGetCurrent", &entry, 12000, cudaEnableDefault, &found) != cudaSuccess
      || found != cudaDriverEntryPointSuccess)
    {
      cupti_unusable = N_ ("the CUDA driver does not give its context to CUPTI");
      return;
    }
  cupti.ctx_get_current = (CUresult (*) (CUcontext *)) entry;

  auto init = CUPTI_PARAMS (CUpti_Profiler_Initialize_Params);
  CUptiResult result = cupti.cuptiProfilerInitialize (&init);
  if (result != CUPTI_SUCCESS)
    cupti_unusable = cupti_failure (result, "profiler initialization", cupti_why_text, sizeof cupti_why_text);
}

/* ---- the chips' configurations ------------------------------------------------ */

/* The metrics' configuration image and the host object that evaluates
 * them, made once per chip ("GH100") and kept for the process. */
typedef struct {
  char chip[64];
  CUpti_Profiler_Host_Object *host;
  std::vector<uint8_t> *config;
} ChipConfig;

static pthread_mutex_t chips_lock = PTHREAD_MUTEX_INITIALIZER;
static ChipConfig chips[ES_CUDA_MAX_DEVICES];
static int n_chips;

static const ChipConfig *
chip_config (int device, const char **why, char *text, size_t size)
{
  auto name = CUPTI_PARAMS (CUpti_Device_GetChipName_Params);
  CUptiResult result;
  ChipConfig *found = NULL;

  name.deviceIndex = (size_t) device;
  result = cupti.cuptiDeviceGetChipName (&name);
  if (result != CUPTI_SUCCESS)
    {
      *why = cupti_failure (result, "chip query", text, size);
      return NULL;
    }
  pthread_mutex_lock (&chips_lock);
  for (int i = 0; i < n_chips && found == NULL; i++)
    if (strcmp (chips[i].chip, name.pChipName) == 0)
      found = &chips[i];
  if (found == NULL && n_chips < ES_CUDA_MAX_DEVICES)
    {
      auto host = CUPTI_PARAMS (CUpti_Profiler_Host_Initialize_Params);
      host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
      host.pChipName = name.pChipName;
      result = cupti.cuptiProfilerHostInitialize (&host);

      auto add = CUPTI_PARAMS (CUpti_Profiler_Host_ConfigAddMetrics_Params);
      add.pHostObject = host.pHostObject;
      add.ppMetricNames = metric_names;
      add.numMetrics = N_METRICS;
      if (result == CUPTI_SUCCESS)
        result = cupti.cuptiProfilerHostConfigAddMetrics (&add);

      auto config_size = CUPTI_PARAMS (CUpti_Profiler_Host_GetConfigImageSize_Params);
      config_size.pHostObject = host.pHostObject;
      if (result == CUPTI_SUCCESS)
        result = cupti.cuptiProfilerHostGetConfigImageSize (&config_size);

      const size_t config_bytes = result == CUPTI_SUCCESS ? config_size.configImageSize : 0;
      std::vector<uint8_t> *config = new std::vector<uint8_t> (config_bytes);
      auto image = CUPTI_PARAMS (CUpti_Profiler_Host_GetConfigImage_Params);
      image.pHostObject = host.pHostObject;
      image.configImageSize = config->size ();
      image.pConfigImage = config->data ();
      if (result == CUPTI_SUCCESS)
        result = cupti.cuptiProfilerHostGetConfigImage (&image);

      if (result == CUPTI_SUCCESS)
        {
          found = &chips[n_chips++];
          snprintf (found->chip, sizeof found->chip, "%s", name.pChipName);
          found->host = host.pHostObject;
          found->config = config;
        }
      else
        {
          /* A chip this CUPTI does not know, or a metric it lacks. */
          delete config;
          *why = cupti_failure (result, "metric configuration", text, size);
        }
    }
  pthread_mutex_unlock (&chips_lock);
  return found;
}

/* ---- a clean L2 ---------------------------------------------------------------- */

/* Reads the sweep buffer, 16 bytes a thread a step; the store that never
 * happens (a sweep of zeros never sums to ~0) keeps the loads. */
__global__ static void
sweep_kernel (const uint4 *buffer, size_t n, unsigned *never)
{
  unsigned sum = 0;

  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      const uint4 v = buffer[i];
      sum += v.x ^ v.y ^ v.z ^ v.w;
    }
  if (sum == ~0u)
    *never = sum;
}

/* Reads twice the L2's size of zeros, so that the lines that earlier work
 * left dirty in the L2 (the timed pass's output, the previous kernel's)
 * are written back now rather than during the next counted kernel, whose
 * DRAM writes would include them, and that none of its input is still
 * there. */
static void
launch_sweep (EsCuda *cuda)
{
  const size_t n = cuda->counters_sweep.size / sizeof (uint4);

  sweep_kernel<<<es_cuda_blocks (cuda, n, 256), 256, 0, cuda->stream>>> (
      (const uint4 *) cuda->counters_sweep.ptr, n, (unsigned *) cuda->counters_sweep.ptr);
}

/* The sweep buffer, zeroed once, then a sweep before the pass's first
 * kernel. */
static bool
clean_l2 (EsCuda *cuda, EsError *error)
{
  int l2_bytes = 0;

  ES_CUDA_TRY (cuda, cudaDeviceGetAttribute (&l2_bytes, cudaDevAttrL2CacheSize, cuda->device), "L2 size", error);
  const size_t bytes = 2 * (size_t) (l2_bytes > 0 ? l2_bytes : 64 << 20);
  if (cuda->counters_sweep.size < bytes)
    {
      if (!es_cuda_device_reserve (cuda, &cuda->counters_sweep, bytes, "L2 sweep buffer", error))
        return false;
      ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->counters_sweep.ptr, 0, bytes, cuda->stream), "L2 sweep buffer", error);
    }
  launch_sweep (cuda);
  ES_CUDA_LAUNCHED (cuda, "L2 sweep", error);
  ES_CUDA_TRY (cuda, cudaStreamSynchronize (cuda->stream), "L2 sweep", error);
  return true;
}

void
es_cuda_counted_launch (EsCuda *cuda, int slot)
{
  /* A kernel's range, then the sweep's (its launch is a range too). */
  for (int range : { slot, ES_CUDA_SWEEP_RANGE })
    {
      if (cuda->n_counted < ES_CUDA_MAX_RANGES)
        cuda->counted_slots[cuda->n_counted] = range;
      cuda->n_counted++;
    }
  launch_sweep (cuda);
}

/* More passes than a configuration of ten metrics takes on any chip. */
#define MAX_PASSES 16

/* ---- a counted pass ------------------------------------------------------------ */

/* The range profiler's steps between Enable and Disable, in order, each
 * one of CUPTI's calls; the first that fails names itself. */
static CUptiResult
profile_pass (EsCuda *cuda, CUpti_RangeProfiler_Object *profiler, const ChipConfig *chip,
              std::vector<uint8_t> &counter_data, EsCudaKernelPass pass, const void *data, bool *pass_ok,
              size_t *dropped, const char **step, EsError *error)
{
  CUptiResult result;

  *step = "counter data size";
  auto size = CUPTI_PARAMS (CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = metric_names;
  size.numMetrics = N_METRICS;
  size.maxNumOfRanges = ES_CUDA_MAX_RANGES;
  size.maxNumRangeTreeNodes = ES_CUDA_MAX_RANGES;
  if ((result = cupti.cuptiRangeProfilerGetCounterDataSize (&size)) != CUPTI_SUCCESS)
    return result;
  counter_data.assign (size.counterDataSize, 0);

  *step = "counter data";
  auto init = CUPTI_PARAMS (CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = counter_data.size ();
  init.pCounterData = counter_data.data ();
  if ((result = cupti.cuptiRangeProfilerCounterDataImageInitialize (&init)) != CUPTI_SUCCESS)
    return result;

  *step = "configuration";
  auto config = CUPTI_PARAMS (CUpti_RangeProfiler_SetConfig_Params);
  config.pRangeProfilerObject = profiler;
  config.configSize = chip->config->size ();
  config.pConfig = chip->config->data ();
  config.counterDataImageSize = counter_data.size ();
  config.pCounterDataImage = counter_data.data ();
  config.range = CUPTI_AutoRange;
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = ES_CUDA_MAX_RANGES;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  if ((result = cupti.cuptiRangeProfilerSetConfig (&config)) != CUPTI_SUCCESS)
    return result;

  /* The kernels run once a pass: every pass starts from a clean L2 and
   * launches them again, which gives the same result (a launcher computes
   * everything from the input). */
  auto stop = CUPTI_PARAMS (CUpti_RangeProfiler_Stop_Params);
  for (int passes = 0; !stop.isAllPassSubmitted; passes++)
    {
      if (passes == MAX_PASSES)
        {
          *step = "replay (more than 16 passes)";
          return CUPTI_ERROR_NOT_SUPPORTED;
        }
      if (!clean_l2 (cuda, error))
        {
          *pass_ok = false;
          return CUPTI_SUCCESS;
        }
      *step = "start";
      auto start = CUPTI_PARAMS (CUpti_RangeProfiler_Start_Params);
      start.pRangeProfilerObject = profiler;
      if ((result = cupti.cuptiRangeProfilerStart (&start)) != CUPTI_SUCCESS)
        return result;
      cuda->counting = true;
      cuda->n_counted = 0;
      *pass_ok = pass (cuda, data, error)
                 && es_cuda_check (cuda, cudaStreamSynchronize (cuda->stream), "counted pass", error);
      cuda->counting = false;

      *step = "stop";
      stop.pRangeProfilerObject = profiler;
      if ((result = cupti.cuptiRangeProfilerStop (&stop)) != CUPTI_SUCCESS || !*pass_ok)
        return result;
    }

  *step = "decoding";
  auto decode = CUPTI_PARAMS (CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = profiler;
  result = cupti.cuptiRangeProfilerDecodeData (&decode);
  *dropped = decode.numOfRangeDropped;
  return result;
}

/* Each range's counters into the run's total and, when the ranges are the
 * launches that es_cuda_note_kernel logged, into their kernels. */
static CUptiResult
attribute_ranges (EsCuda *cuda, const ChipConfig *chip, std::vector<uint8_t> &counter_data, const char **step)
{
  CUptiResult result;

  *step = "matching ranges with launches";
  auto info = CUPTI_PARAMS (CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data.data ();
  info.counterDataImageSize = counter_data.size ();
  if ((result = cupti.cuptiRangeProfilerGetCounterDataInfo (&info)) != CUPTI_SUCCESS)
    return result;
  /* Every launch is logged, so the ranges are the log's; a launch that
   * was not would leave the sweeps' ranges unknown. */
  if ((int) info.numTotalRanges != cuda->n_counted)
    return CUPTI_ERROR_UNKNOWN;

  *step = "evaluation";
  pthread_mutex_lock (&chips_lock);
  for (size_t r = 0; r < info.numTotalRanges && result == CUPTI_SUCCESS; r++)
    {
      double values[N_METRICS] = { 0 };
      auto evaluate = CUPTI_PARAMS (CUpti_Profiler_Host_EvaluateToGpuValues_Params);
      evaluate.pHostObject = chip->host;
      evaluate.pCounterDataImage = counter_data.data ();
      evaluate.counterDataImageSize = counter_data.size ();
      evaluate.rangeIndex = r;
      evaluate.ppMetricNames = metric_names;
      evaluate.numMetrics = N_METRICS;
      evaluate.pMetricValues = values;
      if ((result = cupti.cuptiProfilerHostEvaluateToGpuValues (&evaluate)) != CUPTI_SUCCESS)
        break;
      const int slot = cuda->counted_slots[r];
      const EsCounters range = counters_of (values);
      if (slot == ES_CUDA_SWEEP_RANGE)
        continue;
      es_counters_add (&cuda->run_counters, &range);
      if (slot >= 0)
        es_counters_add (&cuda->run_kernels[slot].counters, &range);
    }
  pthread_mutex_unlock (&chips_lock);
  return result;
}

bool
es_cuda_count_kernels (EsCuda *cuda, EsCudaKernelPass pass, const void *data, EsError *error)
{
  char text[sizeof cuda->counters_note];
  const char *why = NULL, *step = "enabling";
  const ChipConfig *chip = NULL;
  CUcontext context = NULL;
  bool pass_ok = true;
  size_t dropped = 0;

  pthread_once (&cupti_once, cupti_load);
  if (cupti_unusable != NULL)
    why = cupti_unusable;
  else if ((chip = chip_config (cuda->device, &why, text, sizeof text)) == NULL && why == NULL)
    why = N_ ("CUPTI's configurations are full: more kinds of GPU than devices");
  else if (chip != NULL && (cupti.ctx_get_current (&context) != CUDA_SUCCESS || context == NULL))
    why = N_ ("the CUDA driver does not give its context to CUPTI");
  if (why == NULL)
    {
      std::vector<uint8_t> counter_data;
      auto enable = CUPTI_PARAMS (CUpti_RangeProfiler_Enable_Params);
      enable.ctx = context;
      CUptiResult result = cupti.cuptiRangeProfilerEnable (&enable);
      if (result == CUPTI_SUCCESS)
        {
          result = profile_pass (cuda, enable.pRangeProfilerObject, chip, counter_data, pass, data, &pass_ok, &dropped,
                                 &step, error);
          auto disable = CUPTI_PARAMS (CUpti_RangeProfiler_Disable_Params);
          disable.pRangeProfilerObject = enable.pRangeProfilerObject;
          const CUptiResult disabled = cupti.cuptiRangeProfilerDisable (&disable);
          if (result == CUPTI_SUCCESS && disabled != CUPTI_SUCCESS)
            {
              step = "disabling";
              result = disabled;
            }
        }
      if (result != CUPTI_SUCCESS)
        why = cupti_failure (result, step, text, sizeof text);
      else if (dropped > 0 || cuda->n_counted > ES_CUDA_MAX_RANGES)
        why = N_ ("the run launched more kernels than the range profiler keeps with its sweeps (128)");
      else if (pass_ok && (result = attribute_ranges (cuda, chip, counter_data, &step)) != CUPTI_SUCCESS)
        why = cupti_failure (result, step, text, sizeof text);
    }
  if (why != NULL)
    {
      /* Partial figures would read as the run's: none, and why. */
      cuda->run_counters = (EsCounters){};
      for (int i = 0; i < cuda->n_run_kernels; i++)
        cuda->run_kernels[i].counters = (EsCounters){};
      snprintf (cuda->counters_note, sizeof cuda->counters_note, "%s", why);
    }
  return pass_ok;
}
