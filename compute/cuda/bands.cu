/* SPDX-License-Identifier: MIT */
/* Jobs in bands of rows: under a device memory budget, and spread over several devices. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "es-cuda-internal.h"

/* Device memory kept free for the tables, the kernels' own needs and the
 * driver, when the budget comes from cudaMemGetInfo. */
#define ES_CUDA_MEMORY_MARGIN ((size_t) 256 << 20)
/* Bands of about this many bytes of device buffers overlap well: large
 * enough that launches and halos cost little, small enough that the first
 * upload and the last download, which nothing hides, are short. */
#define ES_CUDA_BAND_BYTES ((size_t) 128 << 20)

typedef enum {
  ES_BAND_KERNELS,  /* the variant's kernels, band by band */
  /* Ops with EsOpInfo.whole_image: first the statistic over the bands
   * (EsCudaOp.reduce_band), then its table applied to them (apply_band). */
  ES_BAND_REDUCE,
  ES_BAND_APPLY,
  /* Ops with EsOpInfo.tile_passes: first every band's rows added to the
   * tiles' counts (EsCudaOp.count_band), then, once the maps are built
   * from them, every band blended (blend_band). */
  ES_BAND_COUNT,
  ES_BAND_BLEND,
} EsBandPass;

/* One device's share of a banded run: bands [b_begin, b_end) of `step`
 * output rows, each uploaded with `halo` rows above and below, through
 * `slots` sets of band buffers. */
typedef struct {
  const EsJob *job;
  const EsVariant *variant;
  EsBandPass pass;
  const EsCudaFrame *whole;  /* the geometry; its buffers are unused */
  const EsMove *move;
  int step, halo, slots, b_begin, b_end;
  const uint8_t *table;      /* ES_BAND_APPLY: the 256-entry table to upload */
  unsigned long long *bins;  /* ES_BAND_REDUCE: this device's 256 bins, filled */
} EsBandWork;

static size_t
held_bytes (const EsCuda *cuda)
{
  size_t held = cuda->d_in.size + cuda->d_lev.size + cuda->d_out.size;

  for (int s = 0; s < ES_CUDA_OVERLAP_SLOTS; s++)
    held += cuda->band_in[s].size + cuda->band_lev[s].size + cuda->band_out[s].size;
  return held;
}

size_t
es_cuda_forced_budget (void)
{
  const char *env = getenv ("ES_GPU_MEMORY_BUDGET");
  char *end;
  unsigned long long value;

  if (env == NULL || env[0] == '\0')
    return 0;
  value = strtoull (env, &end, 10);
  return *end == '\0' && value <= SIZE_MAX ? (size_t) value : 0;
}

/* The device memory that one run may use on every device: the smallest free
 * memory (counting the buffers already held, which the run may reuse), less
 * a margin, or the forced budget when that is smaller. */
size_t
es_cuda_memory_budget (EsCuda *cuda)
{
  size_t budget = SIZE_MAX;
  const size_t forced = es_cuda_forced_budget ();

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
  if (forced > 0 && forced < budget)
    budget = forced;
  return budget;
}

/* Band b's output rows [y0, y1) and the input rows [iy0, iy1) that it reads. */
typedef struct {
  int y0, y1, iy0, iy1;
} BandRows;

static BandRows
band_rows_of (const EsBandWork *w, int b)
{
  const int h = w->whole->height, y0 = b * w->step, y1 = y0 + w->step < h ? y0 + w->step : h;

  return (BandRows){ y0, y1, y0 - w->halo > 0 ? y0 - w->halo : 0, y1 + w->halo < h ? y1 + w->halo : h };
}

/* Input rows [iy0, iy1) of band i into its slot's pinned staging, once the
 * upload of the band that used the slot before has left it. */
static bool
stage_band (EsCuda *cuda, const EsBandWork *w, int i, EsError *error)
{
  const int s = i % w->slots;
  const BandRows r = band_rows_of (w, w->b_begin + i);

  if (i >= w->slots)
    ES_CUDA_TRY (cuda, cudaEventSynchronize (cuda->ev_up[s]), "band upload", error);
  es_cuda_copy_rows (cuda->band_h_in[s].ptr, w->whole->in_pitch,
                     (const char *) w->move->in->pixels + (size_t) r.iy0 * w->move->in->stride, w->move->in->stride,
                     w->move->in_row, 0, r.iy1 - r.iy0);
  return true;
}

/* Copies a band's staged output rows out of the slot's pinned buffer into
 * the image, once their download has fired. */
static bool
finish_band (EsCuda *cuda, const EsBandWork *w, int i, EsError *error)
{
  const int s = i % w->slots;
  const BandRows r = band_rows_of (w, w->b_begin + i);

  ES_CUDA_TRY (cuda, cudaEventSynchronize (cuda->ev_down[s]), "band download", error);
  es_cuda_copy_rows ((char *) w->move->out->pixels + (size_t) r.y0 * w->move->out->stride, w->move->out->stride,
                     cuda->band_h_out[s].ptr, w->whole->out_pitch, w->move->out_row, 0, r.y1 - r.y0);
  return true;
}

/* One device's bands on its three streams, through w->slots sets of
 * fixed buffers: the upload of a band waits until the slot's previous
 * band has left the device, its kernels wait for its upload, its download
 * for its kernels. Every band is a frame of its own, so the one-shot kernels
 * run on it unchanged; rows within `halo` of a band's cut edge read rows
 * that are not there and are not downloaded, the band beside recomputes
 * them. A pageable side goes through the slot's pinned staging, copied on
 * every core: band b+1's rows go in and band b−1's come out once band b is
 * queued, so that the host's copies overlap the copy engines instead of
 * the driver staging them on one core. `ms` is the span from the first upload to the last download;
 * `times`: upload until the last band is on the device, the bands' kernels
 * summed (the span when more bands than events ran), download from the
 * last kernels to the end, as the streams lesson reports them. */
static bool
run_bands (EsCuda *cuda, const EsBandWork *w, float *ms, float times[3], EsError *error)
{
  const EsCudaFrame *f = w->whole;
  const EsMove *m = w->move;
  const int h = f->height;
  const size_t slot_rows = (size_t) (w->step + 2 * w->halo < h ? w->step + 2 * w->halo : h);
  const EsCudaOp *cuda_op = es_op_info (w->job->op)->cuda;
  const bool levels = w->pass == ES_BAND_KERNELS && cuda_op->uses_levels;
  const bool output = w->pass != ES_BAND_REDUCE && w->pass != ES_BAND_COUNT;
  /* A device whose bands all fit its slots still holds them from the count
   * pass (cut alike, in the same slots): the blend reads them again
   * without a second upload. */
  const bool resident = w->pass == ES_BAND_BLEND && w->b_end - w->b_begin <= w->slots;
  cudaStream_t up = cuda->up_stream, compute = cuda->stream, down = cuda->down_stream;
  const bool uploads = !resident && m->in_on_device == NULL;
  const bool stage_in = uploads && !m->in_direct, stage_out = output && !m->out_direct;
  const bool timed = w->b_end - w->b_begin <= ES_CUDA_MAX_CHUNKS;

  *ms = 0;
  times[0] = times[1] = times[2] = 0;
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  /* Every device's counts are summed, so a device without bands clears
   * its own too; the maps are copied to every device. */
  if (w->pass == ES_BAND_COUNT)
    {
      size_t counts, map_bytes;

      cuda_op->tile_sizes (w->job, f->width, f->height, f->in_format, &counts, &map_bytes);
      if (!es_cuda_device_reserve (cuda, &cuda->tile_counts, counts * sizeof (uint32_t), "tile counts", error)
          || !es_cuda_device_reserve (cuda, &cuda->tile_maps, map_bytes, "tile maps", error))
        return false;
      ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->tile_counts.ptr, 0, counts * sizeof (uint32_t), compute),
                   "tile counts reset", error);
    }
  if (w->b_begin >= w->b_end)
    return true;
  for (int s = 0; s < w->slots; s++)
    if ((m->in_on_device == NULL
         && !es_cuda_device_reserve (cuda, &cuda->band_in[s], slot_rows * f->in_pitch, "band input buffer", error))
        || (levels && !es_cuda_device_reserve (cuda, &cuda->band_lev[s], slot_rows * f->lev_pitch,
                                               "band levels buffer", error))
        || (output && !es_cuda_device_reserve (cuda, &cuda->band_out[s], slot_rows * f->out_pitch,
                                               "band output buffer", error))
        || (stage_in && !es_cuda_host_reserve (cuda, &cuda->band_h_in[s], slot_rows * f->in_pitch,
                                               "pinned band input staging", error))
        || (stage_out && !es_cuda_host_reserve (cuda, &cuda->band_h_out[s], (size_t) w->step * f->out_pitch,
                                                "pinned band output staging", error)))
      return false;

  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_start, compute), "event record", error);
  /* The bins and the table of the whole-image passes live in the device's
   * histogram and LUT buffers. */
  if (w->pass == ES_BAND_REDUCE)
    ES_CUDA_TRY (cuda, cudaMemsetAsync (cuda->histogram, 0, 256 * sizeof *cuda->histogram, compute),
                 "histogram reset", error);
  if (w->pass == ES_BAND_APPLY)
    ES_CUDA_TRY (cuda, cudaMemcpyAsync (cuda->lut, w->table, 256, cudaMemcpyHostToDevice, compute), "LUT upload",
                 error);
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_uploaded, compute), "event record", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (up, cuda->ev_uploaded, 0), "stream wait", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_uploaded, 0), "stream wait", error);

  if (stage_in && !stage_band (cuda, w, 0, error))
    return false;
  for (int b = w->b_begin; b < w->b_end; b++)
    {
      const int i = b - w->b_begin, s = i % w->slots, e = i % ES_CUDA_MAX_CHUNKS;
      const BandRows r = band_rows_of (w, b);
      const int y0 = r.y0, y1 = r.y1, iy0 = r.iy0, iy1 = r.iy1;
      EsCudaFrame band = *f;

      if (uploads)
        {
          const char *rows = stage_in ? (const char *) cuda->band_h_in[s].ptr
                                      : (const char *) m->in->pixels + (size_t) iy0 * m->in->stride;
          const size_t stride = stage_in ? f->in_pitch : m->in->stride;
          if (i >= w->slots)
            ES_CUDA_TRY (cuda, cudaStreamWaitEvent (up, cuda->ev_down[s], 0), "stream wait", error);
          if (!es_cuda_upload_2d (cuda, cuda->band_in[s].ptr, f->in_pitch, rows, stride, m->in_row,
                                  (size_t) (iy1 - iy0), up, "band upload", error))
            return false;
          ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_up[s], up), "event record", error);
          ES_CUDA_TRY (cuda, cudaStreamWaitEvent (compute, cuda->ev_up[s], 0), "stream wait", error);
        }
      else if (m->in_on_device != NULL && i >= w->slots)
        /* No upload orders the slot's reuse: its kernels wait for the
         * download of the band that held it. */
        ES_CUDA_TRY (cuda, cudaStreamWaitEvent (compute, cuda->ev_down[s], 0), "stream wait", error);

      band.height = iy1 - iy0;
      band.y_origin = iy0;
      band.in = m->in_on_device != NULL ? (const char *) m->in_on_device + (size_t) iy0 * f->in_pitch
                                         : cuda->band_in[s].ptr;
      band.lev = (uint8_t *) cuda->band_lev[s].ptr;
      band.out = cuda->band_out[s].ptr;
      bool ok = false;
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_k0[e], compute), "event record", error);
      switch (w->pass)
        {
        case ES_BAND_KERNELS:
          ok = es_cuda_run_kernels (cuda, w->variant, &band, w->job, error);
          break;
        case ES_BAND_REDUCE:
          ok = cuda_op->reduce_band (cuda, &band, error);
          break;
        case ES_BAND_APPLY:
          ok = cuda_op->apply_band (cuda, &band, error);
          break;
        case ES_BAND_COUNT:
          ok = cuda_op->count_band (cuda, w->variant, w->job, f, &band, error);
          break;
        case ES_BAND_BLEND:
          ok = cuda_op->blend_band (cuda, w->job, f, &band, error);
          break;
        }
      if (!ok)
        return false;
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_k1[e], compute), "event record", error);
      /* While this band computes: the next one's rows go in (and, below,
       * the one before's come out). */
      if (stage_in && b + 1 < w->b_end && !stage_band (cuda, w, i + 1, error))
        return false;
      if (!output)
        {
          ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_down[s], compute), "event record", error);
          continue;
        }
      ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_k1[e], 0), "stream wait", error);
      const char *band_rows = (const char *) cuda->band_out[s].ptr + (size_t) (y0 - iy0) * f->out_pitch;
      if (stage_out)
        ES_CUDA_TRY (cuda, cudaMemcpyAsync (cuda->band_h_out[s].ptr, band_rows, (size_t) (y1 - y0) * f->out_pitch,
                                            cudaMemcpyDeviceToHost, down), "band download", error);
      else
        ES_CUDA_TRY (cuda, cudaMemcpy2DAsync ((char *) m->out->pixels + (size_t) y0 * m->out->stride,
                                              m->out->stride, band_rows, f->out_pitch, m->out_row, (size_t) (y1 - y0),
                                              cudaMemcpyDefault, down), "band download", error);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_down[s], down), "event record", error);
      if (stage_out && i > 0 && !finish_band (cuda, w, i - 1, error))
        return false;
    }
  if (stage_out && !finish_band (cuda, w, w->b_end - 1 - w->b_begin, error))
    return false;
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_computed, compute), "event record", error);
  ES_CUDA_TRY (cuda, cudaStreamWaitEvent (down, cuda->ev_computed, 0), "stream wait", error);
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_done, down), "event record", error);
  ES_CUDA_TRY (cuda, cudaEventSynchronize (cuda->ev_done), "band run", error);
  if (w->pass == ES_BAND_REDUCE)
    ES_CUDA_TRY (cuda, cudaMemcpy (w->bins, cuda->histogram, 256 * sizeof *w->bins, cudaMemcpyDeviceToHost),
                 "histogram download", error);
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (ms, cuda->ev_start, cuda->ev_done), "timing", error);
  if (!timed)
    {
      times[1] = *ms;
      return true;
    }
  const int n = w->b_end - w->b_begin;
  for (int i = 0; i < n; i++)
    {
      float k = 0;
      ES_CUDA_TRY (cuda, cudaEventElapsedTime (&k, cuda->ev_k0[i], cuda->ev_k1[i]), "timing", error);
      times[1] += k;
    }
  if (uploads)
    ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[0], cuda->ev_start, cuda->ev_up[(n - 1) % w->slots]),
                 "timing", error);
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[2], cuda->ev_k1[n - 1], cuda->ev_done), "timing", error);
  return true;
}

/* Runs one pass on every device at once, one host thread each; device i
 * takes the i-th run of consecutive bands. `ms`: the slowest device's span;
 * `times`: one device's upload, kernels and download (run_bands), or on
 * several devices the slowest span as kernel time. */
static bool
run_pass (EsCuda *cuda, const EsBandWork *pattern, int n_bands, unsigned long long (*bins)[256], float *ms,
          float times[3], EsError *error)
{
  const int n = 1 + cuda->n_peers;
  const int per_device = (n_bands + n - 1) / n;
  EsError errors[ES_CUDA_MAX_DEVICES];
  float spans[ES_CUDA_MAX_DEVICES], split[ES_CUDA_MAX_DEVICES][3];
  bool ok[ES_CUDA_MAX_DEVICES];

#pragma omp parallel for num_threads(n) schedule(static, 1) if (n > 1)
  for (int i = 0; i < n; i++)
    {
      EsBandWork w = *pattern;
      w.b_begin = i * per_device < n_bands ? i * per_device : n_bands;
      w.b_end = (i + 1) * per_device < n_bands ? (i + 1) * per_device : n_bands;
      w.bins = bins != NULL ? bins[i] : NULL;
      errors[i] = (EsError) { ES_OK, "" };
      ok[i] = run_bands (i == 0 ? cuda : cuda->peers[i - 1], &w, &spans[i], split[i], &errors[i]);
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
  for (int k = 0; k < 3; k++)
    times[k] = n == 1 ? split[0][k] : k == 1 ? *ms : 0;
  return true;
}

/* Counts summed on the host this many at a time: a 16-bit job under a
 * 64 × 64 grid has a GiB of them on each device. */
#define ES_CUDA_SUM_COUNTS ((size_t) 4 << 20)

/* Between the two tile passes: the devices' counts summed into the first
 * device's (on the host, a slice at a time), the maps built there once and
 * copied to every other device. */
static bool
build_shared_maps (EsCuda *cuda, const EsJob *job, const EsCudaFrame *frame, EsError *error)
{
  const EsCudaOp *cuda_op = es_op_info (job->op)->cuda;
  size_t counts, map_bytes;

  cuda_op->tile_sizes (job, frame->width, frame->height, frame->in_format, &counts, &map_bytes);
  if (cuda->n_peers > 0)
    {
      const size_t slice = counts < ES_CUDA_SUM_COUNTS ? counts : ES_CUDA_SUM_COUNTS;
      uint32_t *sum = (uint32_t *) malloc (slice * sizeof *sum), *part = (uint32_t *) malloc (slice * sizeof *part);
      bool ok = sum != NULL && part != NULL;

      if (!ok)
        es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to sum the tiles' counts",
                      (2 * slice * sizeof *sum) >> 20);
      for (size_t at = 0; ok && at < counts; at += slice)
        {
          const size_t n = counts - at < slice ? counts - at : slice;
          /* The devices' streams do not wait for the legacy stream: every
           * copy goes on the device's own stream, and the host waits. */
          for (int i = 0; ok && i <= cuda->n_peers; i++)
            {
              EsCuda *c = i == 0 ? cuda : cuda->peers[i - 1];
              ok = es_cuda_check (c, cudaSetDevice (c->device), "device selection", error)
                   && es_cuda_check (c, cudaMemcpyAsync (i == 0 ? sum : part,
                                                         (const uint32_t *) c->tile_counts.ptr + at, n * sizeof *sum,
                                                         cudaMemcpyDeviceToHost, c->stream),
                                     "tile counts download", error)
                   && es_cuda_check (c, cudaStreamSynchronize (c->stream), "tile counts download", error);
              for (size_t k = 0; ok && i > 0 && k < n; k++)
                sum[k] += part[k];
            }
          ok = ok && es_cuda_check (cuda, cudaSetDevice (cuda->device), "device selection", error)
               && es_cuda_check (cuda, cudaMemcpyAsync ((uint32_t *) cuda->tile_counts.ptr + at, sum,
                                                        n * sizeof *sum, cudaMemcpyHostToDevice, cuda->stream),
                                 "tile counts upload", error)
               && es_cuda_check (cuda, cudaStreamSynchronize (cuda->stream), "tile counts upload", error);
        }
      free (sum);
      free (part);
      if (!ok)
        return false;
    }
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  if (!cuda_op->build_maps (cuda, job, frame, error))
    return false;
  ES_CUDA_TRY (cuda, cudaStreamSynchronize (cuda->stream), "tile maps", error);
  /* On the peer's stream, before its blend pass; through the host where
   * the devices have no peer access. */
  for (int i = 0; i < cuda->n_peers; i++)
    ES_CUDA_TRY (cuda, cudaMemcpyPeerAsync (cuda->peers[i]->tile_maps.ptr, cuda->peers[i]->device,
                                            cuda->tile_maps.ptr, cuda->device, map_bytes, cuda->peers[i]->stream),
                 "tile maps copy", error);
  return true;
}

/* The whole job in bands. Ops with EsOpInfo.whole_image take two passes:
 * the statistic of every device's bands, combined here into the table, then
 * the table over the bands; ops with tile passes count the tiles over the
 * bands, build the maps once, then blend the bands. The span of the
 * passes is reported as kernel time, except where bands overlap transfers
 * on one device (min_bands > 1): upload, kernels and download as run_bands
 * splits them. */
bool
es_cuda_run_banded (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsMove *m,
                    const EsCudaFrame *frame, size_t budget, int min_bands, float times[3], EsControl *control,
                    EsError *error)
{
  const EsOpInfo *info = es_op_info (job->op);
  const EsCudaOp *cuda_op = info->cuda;
  const int n = 1 + cuda->n_peers;
  const int h = frame->height;
  const int halo = info->halo (job);
  const size_t row_bytes = frame->in_pitch + (cuda_op->uses_levels ? frame->lev_pitch : 0) + frame->out_pitch;
  const bool tile_passes = es_job_tile_passes (job) != NULL;
  /* The tiles' counts and maps stay on every device through both passes. */
  size_t tile_state = 0;
  if (tile_passes)
    {
      size_t counts, map_bytes;

      assert (cuda_op->tile_sizes != NULL && cuda_op->count_band != NULL && cuda_op->build_maps != NULL
              && cuda_op->blend_band != NULL);
      cuda_op->tile_sizes (job, frame->width, frame->height, frame->in_format, &counts, &map_bytes);
      tile_state = counts * sizeof (uint32_t) + map_bytes;
    }
  const size_t budget_rows = budget > tile_state ? (budget - tile_state) / (ES_CUDA_BAND_SLOTS * row_bytes) : 0;

  if (budget_rows < (size_t) (2 * halo + 1))
    return es_error_set (error, ES_ERROR_NO_MEMORY,
                         "CUDA %s: %zu bytes of device memory hold no band of a %d-pixel-wide image",
                         info->name, budget, frame->width);
  size_t cap = budget_rows - (size_t) (2 * halo);
  size_t good = ES_CUDA_BAND_BYTES / row_bytes;
  if (good < (size_t) (halo + 1))
    good = (size_t) (halo + 1);
  if (good < cap)
    cap = good;
  const size_t overlap_rows = es_cuda_div_up ((size_t) h, (size_t) (min_bands > 1 ? min_bands : 1));
  if (overlap_rows < cap && overlap_rows > (size_t) halo)
    cap = overlap_rows;
  /* Equal shares: as many bands on each device. */
  const size_t per_device = es_cuda_div_up ((size_t) h, (size_t) n * cap);
  const int step = (int) es_cuda_div_up ((size_t) h, (size_t) n * per_device);
  const int n_bands = (int) es_cuda_div_up ((size_t) h, (size_t) step);

  /* The one-shot buffers make room for the bands, unless the bands are
   * there to overlap transfers on an image that fits beside them. */
  for (int i = 0; i <= cuda->n_peers && min_bands <= 1; i++)
    {
      EsCuda *c = i == 0 ? cuda : cuda->peers[i - 1];
      (void) cudaSetDevice (c->device);
      es_cuda_device_release (c, &c->d_in);
      es_cuda_device_release (c, &c->d_lev);
      es_cuda_device_release (c, &c->d_out);
    }
  (void) cudaSetDevice (cuda->device);
  if (!es_cuda_inject_launch_fault (cuda, error))
    return false;

  EsBandWork w = { job, variant, ES_BAND_KERNELS, frame, m, step, halo,
                   min_bands > 1 ? ES_CUDA_OVERLAP_SLOTS : ES_CUDA_BAND_SLOTS, 0, 0, NULL, NULL };
  float ms = 0, pass_times[3];
  times[0] = times[2] = 0;
  if (tile_passes)
    {
      w.pass = ES_BAND_COUNT;
      if (!run_pass (cuda, &w, n_bands, NULL, &ms, pass_times, error))
        return false;
      times[1] = ms;
      const double maps_start = es_monotonic_ms ();
      if (!build_shared_maps (cuda, job, frame, error))
        return false;
      times[1] += (float) (es_monotonic_ms () - maps_start);
      if (es_control_cancelled (control))
        return es_error_set (error, ES_ERROR_CANCELLED, "cancelled");
      w.pass = ES_BAND_BLEND;
      if (!run_pass (cuda, &w, n_bands, NULL, &ms, pass_times, error))
        return false;
      times[1] += ms;
      return true;
    }
  if (!info->whole_image)
    {
      if (!run_pass (cuda, &w, n_bands, NULL, &ms, pass_times, error))
        return false;
      /* Bands that overlap transfers report them as the streams lesson
       * does; other banded runs their span. */
      for (int k = 0; k < 3; k++)
        times[k] = min_bands > 1 ? pass_times[k] : k == 1 ? ms : 0;
      return true;
    }

  assert (cuda_op->reduce_band != NULL && cuda_op->combine != NULL && cuda_op->apply_band != NULL);
  unsigned long long bins[ES_CUDA_MAX_DEVICES][256];
  uint64_t sum[256] = { 0 };
  uint8_t table[256];
  w.pass = ES_BAND_REDUCE;
  if (!run_pass (cuda, &w, n_bands, bins, &ms, pass_times, error))
    return false;
  times[1] = ms;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 256; k++)
      sum[k] += bins[i][k];
  cuda_op->combine (sum, (uint64_t) frame->width * (uint64_t) h, table);
  if (es_control_cancelled (control))
    return es_error_set (error, ES_ERROR_CANCELLED, "cancelled");
  w.pass = ES_BAND_APPLY;
  w.table = table;
  if (!run_pass (cuda, &w, n_bands, NULL, &ms, pass_times, error))
    return false;
  times[1] += ms;
  return true;
}
