/* SPDX-License-Identifier: MIT */
/* The memory models of every variant and CPU runner against bytes counted by hand, and the metrics of a run. */
#include <math.h>
#include <string.h>

#include "es-engine.h"
#include "tap.h"

static EsExtent
extent_2d (int width, int height, EsFormat format, int depth)
{
  EsExtent extent = { width, height, 1, format, depth, 0 };
  return extent;
}

/* Whether `model` gives exactly these bytes (the models add small integers
 * in double: exact). */
static bool
traffic_is (EsMemoryModel model, const EsJob *job, const EsExtent *extent, double read, double write, double shared,
            const char *what)
{
  EsTraffic t;

  model (job, extent, &t);
  if (!tap_ok (fabs (t.read_bytes - read) < 1e-6 && fabs (t.write_bytes - write) < 1e-6
                 && fabs (t.shared_bytes - shared) < 1e-3,
               "%s: read %.0f, written %.0f, shared %.2f", what, read, write, shared))
    {
      tap_diag ("got read %.3f, written %.3f, shared %.3f", t.read_bytes, t.write_bytes, t.shared_bytes);
      return false;
    }
  return true;
}

/* The CPU runners: the input and output once each, and the second pass of
 * equalize and CLAHE. */
static void
test_cpu_models (void)
{
  const EsExtent u8 = extent_2d (10, 7, ES_FORMAT_U8, 8), u16 = extent_2d (10, 7, ES_FORMAT_U16, 12);
  EsJob job = ES_JOB_INIT (ES_OP_QUANTIZE);

  traffic_is (es_op_info (ES_OP_QUANTIZE)->cpu_memory, &job, &u16, 140, 70, 0, "cpu quantize, 10×7 16-bit");
  job.op = ES_OP_ENTROPY;
  traffic_is (es_op_info (ES_OP_ENTROPY)->cpu_memory, &job, &u8, 70, 280, 0, "cpu entropy, 10×7 8-bit");
  job.op = ES_OP_EQUALIZE;
  traffic_is (es_op_info (ES_OP_EQUALIZE)->cpu_memory, &job, &u8, 140, 70, 0,
              "cpu equalize, 8-bit: read twice, written once");
  traffic_is (es_op_info (ES_OP_EQUALIZE)->cpu_memory, &job, &u16, 210, 140, 0,
              "cpu equalize, 12-bit: the view written, then read and rewritten");
  job.op = ES_OP_SHARPEN;
  traffic_is (es_op_info (ES_OP_SHARPEN)->cpu_memory, &job, &u16, 140, 70, 0, "cpu sharpen, 10×7 16-bit");
  job.op = ES_OP_CLAHE;
  traffic_is (es_op_info (ES_OP_CLAHE)->cpu_memory, &job, &u16, 280, 140, 0, "cpu clahe, 16-bit in and out");
  job.clahe.kind = ES_CLAHE_SKIMAGE;
  traffic_is (es_op_info (ES_OP_CLAHE)->cpu_memory, &job, &u8, 140, 280, 0, "cpu clahe like skimage: floats out");
}

static EsMemoryModel
model_of (EsOp op, const char *id)
{
  const EsVariant *v = es_variant_find (op, id);
  return v != NULL ? v->memory : NULL;
}

/* Every variant has a model (a variant without one would fail here), and
 * it counts some bytes of a job it computes. */
static void
test_every_variant_has_a_model (void)
{
  for (int op = 0; op < ES_N_OPS; op++)
    {
      size_t n;
      const EsVariant *variants = es_variants ((EsOp) op, &n);
      for (size_t i = 0; i < n; i++)
        {
          EsJob job = ES_JOB_INIT ((EsOp) op);
          const EsExtent extent = extent_2d (64, 48, ES_FORMAT_U8, 8);
          EsTraffic t = { 0, 0, 0 };

          if (strncmp (variants[i].id, "volume", 6) == 0)
            {
              job.definition.shape = ES_SHAPE_BALL;
              job.definition.radius = 1;
            }
          if (variants[i].memory != NULL)
            variants[i].memory (&job, &extent, &t);
          tap_ok (variants[i].memory != NULL && t.read_bytes >= 64 * 48 && t.write_bytes >= 64 * 48,
                  "%s %s has a memory model that reads and writes every pixel", es_op_name ((EsOp) op), variants[i].id);
        }
    }
}

/* The CUDA models at sizes where every byte can be counted on paper. */
static void
test_cuda_models (void)
{
  if (!es_engine_cuda_compiled ())
    {
      tap_skip ("no CUDA backend in this build", "CUDA variants' memory models");
      return;
    }
  const EsExtent u8 = extent_2d (8, 8, ES_FORMAT_U8, 8);
  EsJob job = ES_JOB_INIT (ES_OP_QUANTIZE);

  /* 20 columns are two 16-sample vectors a row: 32 × 3 in and out. */
  const EsExtent narrow = extent_2d (20, 3, ES_FORMAT_U8, 8);
  traffic_is (model_of (ES_OP_QUANTIZE, "elementwise"), &job, &narrow, 96, 96, 0,
              "quantize elementwise, 20×3: whole vectors");

  job.op = ES_OP_ENTROPY;
  /* Quantize (64 in, 64 levels out), the levels read once, 4-byte floats out. */
  traffic_is (model_of (ES_OP_ENTROPY, "naive"), &job, &u8, 128, 320, 0, "entropy naive, 8×8, 5×5, 16 levels");
  /* Counts: 16 zeroed and read (8 bytes each), 25 cells counted (8 each);
   * the shared table's 16 lookups (4 each): 392 bytes a pixel. */
  traffic_is (model_of (ES_OP_ENTROPY, "log-table-shared"), &job, &u8, 128, 320, 64 * 392.0,
              "entropy log-table-shared: 392 shared bytes a pixel");
  traffic_is (model_of (ES_OP_ENTROPY, "log-table-global"), &job, &u8, 128, 320, 64 * 328.0,
              "entropy log-table-global: 328 shared bytes a pixel");
  /* The tile adds 25 level reads and (32 + 4)(2 + 4) / 64 staged bytes. */
  traffic_is (model_of (ES_OP_ENTROPY, "shared-tile"), &job, &u8, 128, 320, 64 * (392.0 + 25 + 216.0 / 64),
              "entropy shared-tile: the tile's staging and reads");
  traffic_is (model_of (ES_OP_ENTROPY, "per-thread-histogram"), &job, &u8, 128, 320, 0,
              "entropy per-thread-histogram at 16 levels: the counts stay on chip");
  /* The pair counters read the samples and write floats; a change lookup
   * of 8 bytes for 128 columns of 120 outputs, 8 pair lookups of 4. */
  traffic_is (model_of (ES_OP_ENTROPY, "fast"), &job, &u8, 64, 256, 64 * (8.0 * 128 / 120 + 32),
              "entropy fast, pair counters: samples in, floats out");
  job.definition.border = ES_BORDER_SYMMETRIC;
  /* A 12×12 frame padded by 2: its 80 border bytes written, then computed whole. */
  traffic_is (model_of (ES_OP_ENTROPY, "fast"), &job, &u8, 144, 80 + 576, 144 * (8.0 * 128 / 120 + 32),
              "entropy fast, symmetric border: the padded frame");
  job.definition.border = ES_BORDER_CLIP;
  job.window = 11;
  traffic_is (model_of (ES_OP_ENTROPY, "fast"), &job, &u8, 64, 256, 0,
              "entropy fast, 11×11, 16 levels: column histograms read the samples");
  job.levels = 12;
  traffic_is (model_of (ES_OP_ENTROPY, "fast"), &job, &u8, 128, 320, 0,
              "entropy fast, 11×11, 12 levels: a quantize pass first");
  job.window = 5;
  job.levels = 16;
  /* The bin pass: 64 samples, the 256-entry bin table (512 bytes), and the
   * 16 × 13 padded frame of 8-bit cells written; the kernel reads it back. */
  traffic_is (model_of (ES_OP_ENTROPY, "general"), &job, &u8, 64 + 512 + 208, 208 + 256, 0,
              "entropy general, 5×5: the bin pass, then the cells");

  /* Both 3-D variants: a ball of radius 1 over 8³ voxels pads to 10³ bins,
   * 8-bit for the register kernel, 16-bit for the tile kernel. */
  const EsExtent cube = { 8, 8, 8, ES_FORMAT_U8, 8, 0 };
  job.definition.shape = ES_SHAPE_BALL;
  job.definition.radius = 1;
  traffic_is (model_of (ES_OP_ENTROPY, "volume"), &job, &cube, 512 + 1000, 1000 + 2048, 0,
              "entropy volume, ball r=1 over 8³");
  traffic_is (model_of (ES_OP_ENTROPY, "volume-tile"), &job, &cube, 512 + 2000, 2000 + 2048, 0,
              "entropy volume-tile, ball r=1 over 8³: 16-bit bins");

  const EsExtent small = extent_2d (10, 7, ES_FORMAT_U8, 8), wide = extent_2d (10, 7, ES_FORMAT_U16, 12);
  job = (EsJob) ES_JOB_INIT (ES_OP_EQUALIZE);
  traffic_is (model_of (ES_OP_EQUALIZE, "global-atomics"), &job, &small, 140, 70, 0,
              "equalize global-atomics: histogram pass and apply pass");
  traffic_is (model_of (ES_OP_EQUALIZE, "fused"), &job, &small, 224, 112, 0, "equalize fused: whole vectors");
  job.op = ES_OP_SHARPEN;
  traffic_is (model_of (ES_OP_SHARPEN, "shared-tile"), &job, &wide, 140, 70, 0,
              "sharpen shared-tile: the halo from L2");
  traffic_is (model_of (ES_OP_SHARPEN, "fast"), &job, &small, 112, 112, 0, "sharpen fast: whole vectors");

  /* CLAHE on 16×16 in 2×2 tiles: counts (4 × 257 words), LUTs (4 × 256),
   * cells (3 × 3 × 256 words), the image twice and the result. */
  const EsExtent tile = extent_2d (16, 16, ES_FORMAT_U8, 8);
  job = (EsJob) ES_JOB_INIT (ES_OP_CLAHE);
  job.tile_columns = job.tile_rows = 2;
  traffic_is (model_of (ES_OP_CLAHE, "fast"), &job, &tile, 256 + 1024 + 9216 + 256, 4112 * 2 + 1024 + 9216 + 256, 0,
              "clahe fast: the LUTs from L2 by the last chunk");
  traffic_is (model_of (ES_OP_CLAHE, "global-atomics"), &job, &tile, 256 + 4112 + 1024 + 9216 + 256,
              4112 * 2 + 1024 + 9216 + 256, 0, "clahe global-atomics: the counts read back");
  traffic_is (model_of (ES_OP_CLAHE, "tile-block"), &job, &tile, 256 + 1024 + 9216 + 256, 4112 + 1024 + 9216 + 256, 0,
              "clahe tile-block: the counts stay in shared memory");
}

/* A CPU run's metrics: the model's bytes, a finite bandwidth, and its share
 * of the memcpy peak once measured; no kernels, no transfers. */
static void
test_cpu_run_metrics (void)
{
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  EsImage in = { 0 }, out = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsTiming t, plane;
  unsigned long long state = 7;

  if (!tap_ok (engine != NULL && es_image_alloc (&in, 300, 200, ES_FORMAT_U8, 8, &error), "a CPU engine and image"))
    return;
  for (int y = 0; y < in.height; y++)
    for (int x = 0; x < in.width; x++)
      ((uint8_t *) es_image_row (&in, y))[x] = (uint8_t) tap_random (&state);
  tap_ok (es_run (engine, &job, &in, &out, &t, &error), "entropy runs on the CPU");
  const EsMetrics *m = &t.metrics;
  tap_ok (m->pixels == 60000 && m->model.read_bytes / m->pixels == 1 && m->model.write_bytes / m->pixels == 4,
          "the run's metrics carry the CPU model: 1 byte a pixel read, 4 written");
  tap_ok (isfinite (m->achieved_gbs) && m->achieved_gbs > 0,
          "the achieved bandwidth is finite and positive (%.3f GB/s)", m->achieved_gbs);
  tap_ok (m->copy_gbs == 0 && m->copy_share == 0 && m->datasheet_gbs == 0,
          "no peak until es_engine_measure_peak, and no datasheet on the CPU");
  tap_ok (m->n_kernels == 0 && m->host_memory == ES_HOST_NONE && m->upload_bytes == 0,
          "no kernels and no transfers on the CPU");
  tap_ok (es_engine_measure_peak (engine, &error), "es_engine_measure_peak measures a memcpy");
  bool ran = es_run (engine, &job, &in, &out, &t, &error);
  tap_ok (ran && t.metrics.copy_gbs > 0 && isfinite (t.metrics.copy_share) && t.metrics.copy_share > 0,
          "then every run has its share of the memcpy peak (%.1f GB/s, %.1f%%)", t.metrics.copy_gbs,
          100 * t.metrics.copy_share);

  /* Two parts add up: the bytes and times summed, the rate from the sums. */
  plane = t;
  es_timing_accumulate (&t, &plane);
  tap_ok (t.metrics.pixels == 120000 && t.metrics.model.read_bytes == 120000 && t.kernel_ms == 2 * plane.kernel_ms
            && fabs (t.metrics.achieved_gbs - plane.metrics.achieved_gbs) < 1e-9 * plane.metrics.achieved_gbs + 1e-12,
          "es_timing_accumulate sums bytes and times and keeps the rate");
  es_image_clear (&in);
  es_image_clear (&out);
  es_engine_free (engine);
}

/* Counters are read only when asked for; where they cannot be (here, a
 * CPU run), the run succeeds, has none, and says why in one sentence. */
static void
test_counters_unavailable (void)
{
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  EsImage in = { 0 }, out = { 0 };
  EsJob job = ES_JOB_INIT (ES_OP_SHARPEN);
  EsTiming t;

  if (!tap_ok (engine != NULL && es_image_alloc (&in, 64, 48, ES_FORMAT_U8, 8, &error), "a CPU engine and image"))
    return;
  tap_ok (!es_engine_counters (engine), "an engine starts without counters");
  tap_ok (es_run (engine, &job, &in, &out, &t, &error) && !t.metrics.counters.measured
            && t.metrics.counters_note[0] == '\0',
          "a run that asks for none has none, and no note");
  es_engine_set_counters (engine, true);
  tap_ok (es_engine_counters (engine), "es_engine_set_counters turns them on");
  bool ran = es_run (engine, &job, &in, &out, &t, &error);
  tap_ok (ran && !t.metrics.counters.measured && t.metrics.counters.launches == 0,
          "a CPU run that asks for counters still runs, with none");
  tap_ok (strstr (t.metrics.counters_note, "CPU") != NULL && strchr (t.metrics.counters_note, '\n') == NULL,
          "and says why in one line: \"%s\"", t.metrics.counters_note);
  es_engine_set_counters (engine, false);
  tap_ok (es_run (engine, &job, &in, &out, &t, &error) && t.metrics.counters_note[0] == '\0',
          "turned off, the note goes");
  es_image_clear (&in);
  es_image_clear (&out);
  es_engine_free (engine);
}

/* Launches add: bytes and conflicts summed, the rates weighed by time;
 * what was not measured adds nothing. */
static void
test_counters_add (void)
{
  EsCounters sum = { 0 }, none = { 0 };
  const EsCounters a = { true, 1, 100, 50, 0.5, 3, 0.25, 8, 1000, 300 };
  const EsCounters b = { true, 2, 300, 150, 0.9, 1, 0.75, 0, 3000, 100 };

  es_counters_add (&sum, &none);
  tap_ok (!sum.measured && sum.launches == 0, "unmeasured counters add nothing");
  es_counters_add (&sum, &a);
  es_counters_add (&sum, &b);
  tap_ok (sum.measured && sum.launches == 3 && sum.dram_read_bytes == 400 && sum.dram_write_bytes == 200
            && sum.shared_bank_conflicts == 4 && sum.local_bytes == 8 && sum.l2_sectors == 4000
            && sum.active_cycles == 400,
          "bytes, conflicts, launches, sectors and cycles are summed");
  tap_ok (fabs (sum.l2_hit_rate - 0.8) < 1e-12 && fabs (sum.achieved_occupancy - 0.375) < 1e-12,
          "the L2 hit rate is weighed by the sectors (0.8), the occupancy by the active cycles (0.375)");

  /* The benchmark's medians take the counters of a counted run. */
  EsMetrics timed = { 0 }, counted = { 0 };
  timed.n_kernels = counted.n_kernels = 1;
  timed.kernels[0].name = counted.kernels[0].name = "copy kernel";
  counted.counters = sum;
  counted.kernels[0].counters = a;
  es_metrics_take_counters (&timed, &counted);
  tap_ok (timed.counters.launches == 3 && timed.kernels[0].counters.dram_read_bytes == 100,
          "es_metrics_take_counters copies the run's and each kernel's counters");
}

int
main (void)
{
  test_cpu_models ();
  test_every_variant_has_a_model ();
  test_cuda_models ();
  test_cpu_run_metrics ();
  test_counters_unavailable ();
  test_counters_add ();
  return tap_done ();
}
