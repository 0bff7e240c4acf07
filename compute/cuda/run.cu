/* HEAD */
/* ---- one job --------------------------------------------------------------- */

static double
host_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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
