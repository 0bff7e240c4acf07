/* SPDX-License-Identifier: MIT */
/* One CUDA job: the frame, transfers (direct, staged, overlapped in streams) and their timing, the kernels of a variant. */
#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "es-cuda-internal.h"
#include "es-i18n.h"

/* ---- transfers --------------------------------------------------------------- */

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

void
es_cuda_copy_rows (void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, int y0, int y1)
{
  char *d = (char *) dst;
  const char *s = (const char *) src;
  const size_t total = (size_t) (y1 - y0) * row_bytes;
  /* A piece for every thread, none under 256 KiB: one core copies about
   * 5 GB/s into pinned memory on an H200's host, and a 4 MiB chunk in 1 MiB
   * pieces kept 4 of its 16 cores busy (12–17 GB/s, against 36 now). */
  size_t piece = es_cuda_div_up (total, (size_t) omp_get_max_threads ());
  if (piece < ((size_t) 256 << 10))
    piece = (size_t) 256 << 10;

  if (dst_stride == src_stride && row_bytes == dst_stride)
    {
      size_t offset = (size_t) y0 * dst_stride;
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

/* Rows of row_bytes from a host image into device rows of `pitch` bytes,
 * the padding after each row set to zero: the kernels read whole 16-sample
 * vectors (ES_CUDA_VECTOR), so a copy of the samples alone would leave them
 * reading memory that nothing wrote (compute-sanitizer's initcheck saw it). */
bool
es_cuda_upload_2d (EsCuda *cuda, void *device, size_t pitch, const void *host, size_t stride, size_t row_bytes,
                   size_t rows, cudaStream_t stream, const char *what, EsError *error)
{
  ES_CUDA_TRY (cuda, cudaMemcpy2DAsync (device, pitch, host, stride, row_bytes, rows, cudaMemcpyDefault,
                                        stream), what, error);
  if (pitch > row_bytes && rows > 0)
    ES_CUDA_TRY (cuda, cudaMemset2DAsync ((char *) device + row_bytes, pitch, 0, pitch - row_bytes, rows, stream),
                 what, error);
  return true;
}

/* Enqueues the upload of input rows [y0, y1) on `stream`. Staged rows are
 * first copied into the pinned buffer, their padding zeroed (the host waits
 * for that copy, while the DMA of earlier rows goes on). */
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
                                            cudaMemcpyDefault, stream), "upload", error);
      else if (!es_cuda_upload_2d (cuda, device, f->in_pitch, host, m->in->stride, m->in_row, (size_t) (y1 - y0),
                                   stream, "upload", error))
        return false;
      return true;
    }
  es_cuda_copy_rows (cuda->h_in.ptr, f->in_pitch, m->in->pixels, m->in->stride, m->in_row, y0, y1);
  if (f->in_pitch > m->in_row)
    for (int y = y0; y < y1; y++)
      memset ((char *) cuda->h_in.ptr + (size_t) y * f->in_pitch + m->in_row, 0, f->in_pitch - m->in_row);
  ES_CUDA_TRY (cuda, cudaMemcpyAsync (device, (char *) cuda->h_in.ptr + offset, (size_t) (y1 - y0) * f->in_pitch,
                                      cudaMemcpyHostToDevice, stream), "upload", error);
  return true;
}

/* Enqueues the upload of all of f's input rows on cuda's stream, in one
 * piece where it goes direct, else in staged chunks, so that the host's
 * copy of a chunk runs while the DMA of the one before does. */
static bool
upload_frame (EsCuda *cuda, const EsMove *m, const EsCudaFrame *f, EsError *error)
{
  const int h = f->height, step = m->in_direct ? h : chunk_rows (f->in_pitch, h);

  for (int y0 = 0; y0 < h; y0 += step)
    if (!upload_rows (cuda, m, f, y0, y0 + step < h ? y0 + step : h, cuda->stream, error))
      return false;
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
                                            cudaMemcpyDefault, stream), "download", error);
      else
        ES_CUDA_TRY (cuda, cudaMemcpy2DAsync (host, m->out->stride, device, f->out_pitch, m->out_row,
                                              (size_t) (y1 - y0), cudaMemcpyDefault, stream),
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
  es_cuda_copy_rows (m->out->pixels, m->out->stride, cuda->h_out.ptr, f->out_pitch, m->out_row, y0, y1);
  return true;
}

/* ---- frames ------------------------------------------------------------------ */

bool
es_cuda_run_kernels (EsCuda *cuda, const EsVariant *variant, const EsCudaFrame *frame, const EsJob *job,
                     EsError *error)
{
  if (!es_cuda_inject_launch_fault (cuda, error))
    return false;
  return variant->launch (cuda, frame, job, error);
}

/* The image inside a padded frame (EsCudaFrame.pad): what transfers move. */
static EsCudaFrame
image_view (const EsCudaFrame *frame)
{
  EsCudaFrame view = *frame;
  const size_t r = (size_t) frame->pad, samples = (size_t) frame->vectors * ES_CUDA_VECTOR;

  view.width -= 2 * frame->pad;
  view.height -= 2 * frame->pad;
  view.in = (const char *) frame->in + r * frame->in_pitch + r * es_format_size (frame->in_format);
  view.out = (char *) frame->out + r * frame->out_pitch + r * (frame->out_pitch / samples);
  return view;
}

/* Whether a job's result is stream-ordered: a device result that names its
 * array library's stream, with no counted pass (which waits on the host).
 * Such a job runs on that stream (caller_stream) or that stream waits for
 * it on the device (run_frame), and the host does not wait. */
static bool
stream_ordered (const EsCuda *cuda, const EsImage *out)
{
  return es_image_on_device (out) && out->cuda_stream != 0 && !cuda->counters_wanted;
}

/* Upload, kernels, download, one after the other on one stream, each between
 * two events; staged chunks go in and out while the DMA of their neighbours
 * runs. The frame's device buffers are ready. A padded frame gets its
 * border between the upload and the kernels (in the kernel time). A side
 * borrowed from a device image moves nothing and records no event of its
 * own (the two records took 2.6 µs of a call on a device array, before its
 * kernels). */
static bool
run_frame (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsMove *m, EsCudaFrame *frame,
           float times[3], EsError *error)
{
  const EsCudaFrame image = image_view (frame);
  const int h = image.height;
  const int out_step = m->out_direct ? h : chunk_rows (image.out_pitch, h);
  /* A device result that names its library's stream: the job runs there
   * (run_one_shot_on), or that stream waits for it on the device, and the
   * host does not wait, as for the library's own kernels, so that the
   * caller's work after the call overlaps the job's. Its times are then
   * not known (the kernels' NaN), and not recorded. */
  const bool ordered = stream_ordered (cuda, m->out);

  if (!m->in_borrowed)
    {
      if (!ordered)
        ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error);
      if (!upload_frame (cuda, m, &image, error))
        return false;
    }
  if (!ordered)
    ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_uploaded, cuda->stream), "event record", error);
  if (frame->pad > 0
      && !es_cuda_fill_border (cuda, frame, job->definition.border, job->definition.border_value, error))
    return false;
  if (!es_cuda_run_kernels (cuda, variant, frame, job, error))
    return false;
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_computed, cuda->stream), "event record", error);
  if (!m->out_borrowed)
    {
      for (int y0 = 0, i = 0; y0 < h; y0 += out_step, i++)
        {
          if (!download_rows (cuda, m, &image, y0, y0 + out_step < h ? y0 + out_step : h, cuda->stream, error))
            return false;
          ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_down[i], cuda->stream), "event record", error);
        }
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error);
      for (int y0 = 0, i = 0; y0 < h; y0 += out_step, i++)
        if (!finish_rows (cuda, m, &image, y0, y0 + out_step < h ? y0 + out_step : h, cuda->ev_down[i], error))
          return false;
    }
  cudaEvent_t last = m->out_borrowed ? cuda->ev_computed : cuda->ev_done;
  if (ordered)
    {
      /* The stream that did not run the job waits for it: the caller's, or,
       * when the job ran there, the engine's own, for its next job. */
      const cudaStream_t caller = es_cuda_array_stream (m->out->cuda_stream);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_handover, cuda->stream), "event record", error);
      ES_CUDA_TRY (cuda,
                   cudaStreamWaitEvent (cuda->stream == caller ? cuda->home_stream : caller, cuda->ev_handover, 0),
                   "result stream wait", error);
      cuda->unwaited = true;
      times[0] = times[2] = 0;
      times[1] = NAN;
      return true;
    }
  ES_CUDA_TRY (cuda, cudaEventSynchronize (last), "kernel run or download", error);
  cuda->unwaited = false;

  times[0] = times[2] = 0;
  if (!m->in_borrowed)
    ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[0], cuda->ev_start, cuda->ev_uploaded), "timing", error);
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[1], cuda->ev_uploaded, cuda->ev_computed), "timing", error);
  if (!m->out_borrowed)
    ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[2], cuda->ev_computed, cuda->ev_done), "timing", error);
  return true;
}

/* Output rows per band of ES_TRANSFER_STREAMS: about 16 MiB of output each,
 * at most ES_CUDA_MAX_CHUNKS bands, whole 64-row strips (those of the
 * entropy kernels), and never fewer rows than a window reaches beyond them. */
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

/* The op's launch_rows in bands of rows on three streams: band b+1 uploads
 * while band b computes and band b−1 downloads, so the copy engines of both
 * directions and the SMs work at once. A band's kernels wait for the next
 * band's upload too: their windows reach up to the op's halo into it (no
 * further than a band's rows). Times: upload until the last band is on the
 * device, kernels summed over the bands, download from the last band's
 * kernels to the end (the part that no overlap hides). */
static bool
run_frame_streams (EsCuda *cuda, const EsJob *job, const EsMove *m, EsCudaFrame *frame, float times[3],
                   EsError *error)
{
  const int h = frame->height, step = band_rows (frame);
  const int n = (int) es_cuda_div_up ((size_t) h, (size_t) step);
  cudaStream_t up = cuda->up_stream, compute = cuda->stream, down = cuda->down_stream;
  const EsCudaOp *cuda_op = es_op_info (job->op)->cuda;

  assert (cuda_op->launch_rows != NULL && es_op_info (job->op)->halo (job) <= step && frame->pad == 0);
  if (!es_cuda_inject_launch_fault (cuda, error))
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
      /* Levels, for ops that read them: bands 0 and 1 first, then one ahead. */
      const int q0 = k == 0 ? 0 : y1, q1 = (b + 1) * step < h ? (b + 1) * step : h;
      ES_CUDA_TRY (cuda, cudaStreamWaitEvent (compute, cuda->ev_up[b < n ? b : n - 1], 0), "stream wait", error);
      ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_k0[k], compute), "event record", error);
      if (!cuda_op->launch_rows (cuda, frame, job, y0, y1, q0, q1, error))
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

/* ---- volumes ----------------------------------------------------------------- */

/* The op's 3-D path (run_volume) copies planes with cudaMemcpy2DAsync
 * straight from the host images: by DMA when they are page-locked (es_run's
 * results, es_engine_volume_alloc), through the driver's own staging, on one
 * core, when pageable (a NumPy volume, a decoded file). A pageable side goes
 * through the engine's pinned staging buffers instead, as a 2-D one-shot
 * run's rows do: the input and a mask copied in on every core before the
 * job, the result copied out after it. */

/* The bytes from an image's first sample to past its last, padding included. */
static size_t
volume_extent (const EsImage *image)
{
  return (size_t) (es_image_planes (image) - 1) * image->plane_stride + (size_t) (image->height - 1) * image->stride
         + (size_t) image->width * es_format_size (image->format);
}

/* The bytes of an image's samples, rows and planes tightly packed. */
static size_t
packed_bytes (const EsImage *image)
{
  return (size_t) image->width * es_format_size (image->format) * (size_t) image->height
         * (size_t) es_image_planes (image);
}

/* `image`'s geometry over `pixels`, rows and planes tightly packed. */
static EsImage
packed_view (const EsImage *image, void *pixels)
{
  EsImage view = *image;

  view.stride = (size_t) image->width * es_format_size (image->format);
  view.plane_stride = es_image_planes (image) > 1 ? view.stride * (size_t) image->height : 0;
  view.pixels = pixels;
  view.release = NULL;
  return view;
}

/* Every row of every plane, on every core past 1 MiB. */
static void
copy_volume (const EsImage *dst, const EsImage *src)
{
  const size_t row = (size_t) src->width * es_format_size (src->format);
  const long long rows = (long long) src->height * es_image_planes (src);

#pragma omp parallel for schedule(static) if ((size_t) rows * row > ((size_t) 1 << 20))
  for (long long r = 0; r < rows; r++)
    memcpy (es_image_voxel_row (dst, (int) (r / src->height), (int) (r % src->height)),
            es_image_voxel_row (src, (int) (r / src->height), (int) (r % src->height)), row);
}

/* run_volume with its pageable sides staged; the staging copies count in
 * the upload and download times, as a 2-D run's do. */
static bool
run_volume_staged (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out,
                   float times[3], EsControl *control, EsError *error)
{
  const EsImage *mask = job->definition.mask;
  const bool stage_in = !es_image_on_device (in) && !is_page_locked (in->pixels, volume_extent (in));
  const bool stage_mask = mask != NULL && !es_image_on_device (mask)
                          && !is_page_locked (mask->pixels, volume_extent (mask));
  const bool stage_out = !es_image_on_device (out) && !is_page_locked (out->pixels, volume_extent (out));
  /* The mask follows the input in one buffer, at a 256-byte boundary. */
  const size_t in_bytes = stage_in ? es_cuda_div_up (packed_bytes (in), 256) * 256 : 0;
  const size_t mask_bytes = stage_mask ? packed_bytes (mask) : 0;
  EsImage in_view = *in, out_view = *out, mask_view;
  EsJob staged = *job;
  double t0 = es_monotonic_ms (), in_ms, out_ms = 0;

  if ((stage_in || stage_mask)
      && !es_cuda_host_reserve (cuda, &cuda->h_in, in_bytes + mask_bytes, "pinned volume staging", error))
    return false;
  if (stage_out && !es_cuda_host_reserve (cuda, &cuda->h_out, packed_bytes (out),
                                          "pinned volume staging", error))
    return false;
  if (stage_in)
    {
      in_view = packed_view (in, cuda->h_in.ptr);
      copy_volume (&in_view, in);
    }
  if (stage_mask)
    {
      mask_view = packed_view (mask, (char *) cuda->h_in.ptr + in_bytes);
      copy_volume (&mask_view, mask);
      staged.definition.mask = &mask_view;
    }
  if (stage_out)
    out_view = packed_view (out, cuda->h_out.ptr);
  in_ms = es_monotonic_ms () - t0;
  if (!es_op_info (job->op)->cuda->run_volume (cuda, &staged, variant, &in_view, &out_view, times, control, error))
    return false;
  if (stage_out)
    {
      t0 = es_monotonic_ms ();
      copy_volume (out, &out_view);
      out_ms = es_monotonic_ms () - t0;
    }
  times[0] += (float) in_ms;
  times[2] += (float) out_ms;
  return true;
}

/* ---- one job ----------------------------------------------------------------- */

/* The frame of a job on `in`, padded by `pad` pixels on every side: its
 * geometry and pitches; the device buffers are set once they are reserved. */
static EsCudaFrame
frame_for (const EsJob *job, const EsImage *in, EsFormat out_format, int pad)
{
  EsCudaFrame frame;

  memset (&frame, 0, sizeof frame);
  frame.pad = pad;
  frame.width = in->width + 2 * pad;
  frame.height = in->height + 2 * pad;
  frame.vectors = (int) es_cuda_div_up ((size_t) frame.width, ES_CUDA_VECTOR);
  frame.in_format = in->format;
  frame.depth = in->depth;
  frame.maxval = es_image_maxval (in);
  if (job->op == ES_OP_ENTROPY)
    es_binner_init (&frame.binner, job, in);
  frame.levels = in->levels != 0 ? in->levels : job->levels;
  frame.is_levels = in->levels != 0;
  const size_t padded = (size_t) frame.vectors * ES_CUDA_VECTOR;
  frame.in_pitch = padded * es_format_size (in->format);
  frame.lev_pitch = padded;
  frame.out_pitch = padded * es_format_size (out_format);
  return frame;
}

/* Whether a device image can be the frame's buffer itself: laid out as the
 * frame (rows of `pitch` bytes, whole vectors of samples with no padding to
 * zero or to write past its rows, no border pad) and aligned for the
 * kernels' 16-byte loads and stores. */
static bool
can_borrow (const EsImage *image, size_t pitch, const EsCudaFrame *frame)
{
  return es_image_on_device (image) && frame->pad == 0 && image->width % ES_CUDA_VECTOR == 0
         && image->stride == pitch && (es_image_planes (image) == 1 || image->plane_stride == pitch * image->height)
         && (uintptr_t) image->pixels % 16 == 0;
}

/* ---- hardware counters ------------------------------------------------------- */

/* The kernels of a frame's timed pass, to launch again. */
typedef struct {
  const EsJob *job;
  const EsVariant *variant;
  const EsCudaFrame *frame;
  bool streams; /* the timed pass ran them band by band (run_frame_streams) */
} FrameKernels;

/* The same launches as the timed pass, on the frame it left on the device:
 * the border, then the variant's kernels, or the op's kernels band by band
 * as run_frame_streams launched them (on one stream: the input is all
 * there). */
static bool
launch_frame_kernels (EsCuda *cuda, const void *data, EsError *error)
{
  const FrameKernels *k = (const FrameKernels *) data;
  const EsCudaFrame *frame = k->frame;

  if (!k->streams)
    {
      if (frame->pad > 0
          && !es_cuda_fill_border (cuda, frame, k->job->definition.border, k->job->definition.border_value, error))
        return false;
      return es_cuda_run_kernels (cuda, k->variant, frame, k->job, error);
    }
  const int h = frame->height, step = band_rows (frame);
  const EsCudaOp *cuda_op = es_op_info (k->job->op)->cuda;
  for (int y0 = 0; y0 < h; y0 += step)
    {
      const int y1 = y0 + step < h ? y0 + step : h;
      const int q0 = y0 == 0 ? 0 : y1, q1 = y1 + step < h ? y1 + step : h;
      if (!cuda_op->launch_rows (cuda, frame, k->job, y0, y1, q0, q1, error))
        return false;
    }
  return true;
}

/* After the timed pass, when the engine asks for counters: the same
 * kernels once more under the range profiler, so that the times stay
 * those of the normal path. */
static bool
count_frame_kernels (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsCudaFrame *frame,
                     bool streams, EsError *error)
{
  const FrameKernels kernels = { job, variant, frame, streams };
  return es_cuda_count_pass (cuda, launch_frame_kernels, &kernels, error);
}

bool
es_cuda_count_pass (EsCuda *cuda, EsCudaKernelPass pass, const void *data, EsError *error)
{
#ifdef ES_HAVE_CUPTI
  return es_cuda_count_kernels (cuda, pass, data, error);
#else
  (void) pass, (void) data, (void) error;
  snprintf (cuda->counters_note, sizeof cuda->counters_note, "%s",
            N_ ("this build has no CUPTI (built without the CUDA toolkit's CUPTI headers)"));
  return true;
#endif
}

void
es_cuda_note_uncounted_run (EsCuda *cuda)
{
  if (cuda->counters_wanted)
    snprintf (cuda->counters_note, sizeof cuda->counters_note, "%s",
              N_ ("hardware counters are read for a run on one GPU in one piece, and this one went in bands "
                  "or over several GPUs"));
}

/* The whole image at once on the first device, in buffers kept between runs
 * (or, for the per-call lesson, allocated and freed by this run: allocating
 * belongs to the upload, freeing to the download, in alloc_ms and free_ms). */
static bool
run_one_shot (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsMove *move, EsCudaFrame *frame,
              float times[3], double *alloc_ms, double *free_ms, EsError *error)
{
  const size_t rows = (size_t) frame->height;
  const bool levels = es_op_info (job->op)->cuda->uses_levels;
  const bool per_call = variant->transfer == ES_TRANSFER_PER_CALL;
  EsCudaBuffer d_in = { NULL, 0 }, d_lev = { NULL, 0 }, d_out = { NULL, 0 };
  EsCudaBuffer *b_in = &cuda->d_in, *b_lev = &cuda->d_lev, *b_out = &cuda->d_out;
  double t0 = es_monotonic_ms ();
  bool ok;

  es_cuda_release_band_buffers (cuda);
  if (per_call)
    {
      b_in = &d_in;
      b_lev = &d_lev;
      b_out = &d_out;
    }
  ok = (move->in_borrowed || es_cuda_device_reserve (cuda, b_in, frame->in_pitch * rows, "input buffer", error))
       && (!levels || es_cuda_device_reserve (cuda, b_lev, frame->lev_pitch * rows, "levels buffer", error))
       && (move->out_borrowed
           || es_cuda_device_reserve (cuda, b_out, frame->out_pitch * rows, "output buffer", error));
  if (per_call)
    *alloc_ms = es_monotonic_ms () - t0;
  if (ok && !move->in_direct)
    ok = es_cuda_host_reserve (cuda, &cuda->h_in, frame->in_pitch * rows, "pinned input staging", error);
  if (ok && !move->out_direct)
    ok = es_cuda_host_reserve (cuda, &cuda->h_out, frame->out_pitch * rows, "pinned output staging", error);

  if (ok)
    {
      frame->in = move->in_borrowed ? move->in->pixels : b_in->ptr;
      frame->lev = (uint8_t *) b_lev->ptr;
      frame->out = move->out_borrowed ? move->out->pixels : b_out->ptr;
      /* Overlapping transfers is a lesson about host images. */
      const bool streams = variant->transfer == ES_TRANSFER_STREAMS && !es_image_on_device (move->in);
      ok = streams ? run_frame_streams (cuda, job, move, frame, times, error)
                   : run_frame (cuda, job, variant, move, frame, times, error);
      if (ok && cuda->counters_wanted)
        ok = count_frame_kernels (cuda, job, variant, frame, streams, error);
    }

  if (per_call)
    {
      t0 = es_monotonic_ms ();
      es_cuda_device_release (cuda, &d_in);
      es_cuda_device_release (cuda, &d_lev);
      es_cuda_device_release (cuda, &d_out);
      *free_ms = es_monotonic_ms () - t0;
    }
  return ok;
}

/* A pageable input into a page-locked result, in overlapped bands: the
 * input goes up whole through the pinned staging (the host copies each
 * chunk on every core while the DMA of the one before runs), then the bands
 * compute from it, each downloading while the next computes. Staging each
 * band instead made the host's copies compete with the downloads for the
 * host's memory (8.3–9.7 ms at 8192² on an H200, against 7.2–10.7 for one
 * piece, whose kernels nothing hides). `times`: the staged upload, the
 * bands' kernels, the download after the last kernels. */
static bool
run_staged_bands (EsCuda *cuda, const EsJob *job, const EsVariant *variant, EsMove *move, EsCudaFrame *frame,
                  size_t budget, float times[3], EsControl *control, EsError *error)
{
  const int h = frame->height;
  float band_times[3];

  if (!es_cuda_device_reserve (cuda, &cuda->d_in, frame->in_pitch * (size_t) h, "input buffer", error)
      || !es_cuda_host_reserve (cuda, &cuda->h_in, frame->in_pitch * (size_t) h, "pinned input staging", error))
    return false;
  frame->in = cuda->d_in.ptr;
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_staged[0], cuda->stream), "event record", error);
  if (!upload_frame (cuda, move, frame, error))
    return false;
  ES_CUDA_TRY (cuda, cudaEventRecord (cuda->ev_staged[1], cuda->stream), "event record", error);
  move->in_on_device = frame->in;
  if (!es_cuda_run_banded (cuda, job, variant, move, frame, budget, ES_CUDA_OVERLAP_BANDS, band_times, control,
                           error))
    return false;
  ES_CUDA_TRY (cuda, cudaEventElapsedTime (&times[0], cuda->ev_staged[0], cuda->ev_staged[1]), "timing", error);
  times[1] = band_times[1];
  times[2] = band_times[2];
  return true;
}

/* A run's share of the metrics that the device knows (EsMetrics): the
 * datasheet bandwidth, the kernels it launched, how its images crossed
 * PCIe and how many bytes did in the upload time (a volume's mask goes
 * with its planes; a 2-D mask is uploaded by the general kernels, in the
 * kernel time); the engine adds the model and the rates. */
static void
device_metrics (const EsCuda *cuda, const EsImage *in, const EsImage *mask, const EsImage *out, EsHostMemory host,
                EsTiming *timing)
{
  EsMetrics *m = &timing->metrics;

  m->datasheet_gbs = cuda->datasheet_gbs;
  m->n_kernels = cuda->n_run_kernels;
  memcpy (m->kernels, cuda->run_kernels, sizeof m->kernels);
  m->main_kernel = cuda->run_main_kernel >= 0 ? cuda->run_main_kernel : cuda->n_run_kernels - 1;
  m->counters = cuda->run_counters;
  memcpy (m->counters_note, cuda->counters_note, sizeof m->counters_note);
  m->host_memory = host;
  m->upload_bytes = (double) packed_bytes (in) + (mask != NULL ? (double) packed_bytes (mask) : 0);
  m->download_bytes = (double) packed_bytes (out);
}

static EsHostMemory
host_memory (const EsMove *move, bool pageable)
{
  if (pageable)
    return ES_HOST_PAGEABLE;
  if (move->in_direct && move->out_direct)
    return ES_HOST_PINNED;
  return move->in_direct || move->out_direct ? ES_HOST_MIXED : ES_HOST_STAGED;
}

/* Whether a run of device images on one device finds the buffers of its
 * one shot held already: then it allocates nothing and cannot go in bands,
 * and needs no memory budget, whose question to the driver
 * (cudaMemGetInfo) took 7 µs of a call on a device array (H200). */
static bool
one_shot_held (const EsCuda *cuda, const EsCudaOp *cuda_op, const EsVariant *variant, const EsMove *move,
               const EsCudaFrame *frame)
{
  const size_t rows = (size_t) frame->height;

  if (!es_image_on_device (move->in) || !es_image_on_device (move->out) || cuda->n_peers > 0
      || cuda_op->tile_sizes != NULL || variant->transfer == ES_TRANSFER_PER_CALL
      || es_cuda_forced_budget () != 0)
    return false;
  return (move->in_borrowed || cuda->d_in.size >= frame->in_pitch * rows)
         && (!cuda_op->uses_levels || cuda->d_lev.size >= frame->lev_pitch * rows)
         && (move->out_borrowed || cuda->d_out.size >= frame->out_pitch * rows);
}

/* The stream of the result's array library (EsImage.cuda_stream), when a
 * stream-ordered job in one piece can run on it: a stream of this device,
 * or a default stream (which names this device's after cudaSetDevice).
 * Run on the engine's own stream, the job followed the caller's work
 * through an event, and the caller's next work followed the job through
 * another. */
static bool
caller_stream (EsCuda *cuda, const EsImage *out, cudaStream_t *stream)
{
  int device;

  if (!stream_ordered (cuda, out))
    return false;
  *stream = es_cuda_array_stream (out->cuda_stream);
  if (out->cuda_stream > 2 && (cudaStreamGetDevice (*stream, &device) != cudaSuccess || device != cuda->device))
    {
      (void) cudaGetLastError ();
      return false;
    }
  return true;
}

/* run_one_shot on the caller's stream: a job left unwaited by the one
 * before, on whatever stream, goes first on the device, as it would on the
 * engine's own stream (which waits for each such job: run_frame). */
static bool
run_one_shot_on (EsCuda *cuda, cudaStream_t caller, const EsJob *job, const EsVariant *variant, const EsMove *move,
                 EsCudaFrame *frame, float times[3], double *alloc_ms, double *free_ms, EsError *error)
{
  if (cuda->unwaited)
    ES_CUDA_TRY (cuda, cudaStreamWaitEvent (caller, cuda->ev_handover, 0), "stream wait", error);
  cuda->stream = caller;
  const bool ok = run_one_shot (cuda, job, variant, move, frame, times, alloc_ms, free_ms, error);
  cuda->stream = cuda->home_stream;
  return ok;
}

/* A result that names its library's stream, on a path that runs the job on
 * the engine's own: that stream's work so far goes first. */
static bool
wait_result_stream (EsCuda *cuda, const EsImage *out, EsError *error)
{
  return !es_image_on_device (out) || es_cuda_wait_stream (cuda, out->cuda_stream, error);
}

bool
es_cuda_run (EsCuda *cuda, const EsJob *job, const EsVariant *variant, const EsImage *in, EsImage *out,
             EsTiming *timing, EsControl *control, EsError *error)
{
  /* The engine's gate (es_run) checked all of this; a failure here is a bug
   * in the caller, not a user's mistake. */
  assert (cuda != NULL && job != NULL && variant != NULL && in != NULL && out != NULL);
  assert (es_job_validate (job, NULL));
  const EsOpInfo *info = es_op_info (job->op);
  const EsCudaOp *cuda_op = info->cuda;
  assert (variant >= cuda_op->variants && variant < cuda_op->variants + cuda_op->n_variants);
  assert (in->format == ES_FORMAT_U8 || in->format == ES_FORMAT_U16);
  assert (in->width > 0 && in->height > 0 && in->width <= ES_MAX_SIDE && in->height <= ES_MAX_SIDE);
  assert (in->pixels != NULL && in->stride >= (size_t) in->width * es_format_size (in->format));
  assert (in->levels != 0 ? in->levels <= ES_FAST_LEVELS_MAX
                          : in->depth >= 1 && in->depth <= 8 * (int) es_format_size (in->format));
  assert (out->format == es_job_output_format (job, in->format) && out->width == in->width && out->height == in->height);
  assert (out->pixels != NULL && out->stride >= (size_t) out->width * es_format_size (out->format));

  /* Not validation: an earlier run may have left the context unusable. */
  if (es_cuda_is_broken (cuda))
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA is unusable after an earlier device error");
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  es_cuda_begin_kernels (cuda);

  /* A 3-D window: the op's volume path moves the planes in bands itself. */
  if (cuda_op->run_volume != NULL && es_job_is_volumetric (job))
    {
      float volume_times[3] = { 0, 0, 0 };

      assert (variant->launch == NULL && es_image_planes (out) == es_image_planes (in));
      es_control_begin (control, 1);
      if (!wait_result_stream (cuda, out, error)
          || !run_volume_staged (cuda, job, variant, in, out, volume_times, control, error))
        return false;
      es_control_advance (control, 1);
      if (timing != NULL)
        {
          timing->upload_ms = volume_times[0];
          timing->kernel_ms = volume_times[1];
          timing->download_ms = volume_times[2];
          timing->backend = ES_BACKEND_CUDA;
          timing->variant = variant->id;
          const bool pinned_in = is_page_locked (in->pixels, volume_extent (in));
          const bool pinned_out = is_page_locked (out->pixels, volume_extent (out));
          device_metrics (cuda, in, job->definition.mask, out,
                          pinned_in && pinned_out   ? ES_HOST_PINNED
                          : pinned_in || pinned_out ? ES_HOST_MIXED
                                                    : ES_HOST_STAGED,
                          timing);
        }
      return true;
    }

  /* A border mode that the variant computes as clip on a padded frame. */
  const int pad = cuda_op->frame_pad != NULL ? cuda_op->frame_pad (job, variant) : 0;
  const EsFormat out_format = es_job_output_format (job, in->format);
  EsCudaFrame frame = frame_for (job, in, out_format, pad);
  const size_t rows = (size_t) frame.height;
  const bool pageable = variant->transfer == ES_TRANSFER_PAGEABLE;
  EsMove move = { in, out, (size_t) in->width * es_format_size (in->format),
                  (size_t) out->width * es_format_size (out->format), false, false, false, false, NULL };
  move.in_direct = pageable || es_image_on_device (in) || is_page_locked (in->pixels, image_bytes (in, move.in_row));
  move.out_direct = pageable || es_image_on_device (out)
                    || is_page_locked (out->pixels, image_bytes (out, move.out_row));
  move.in_borrowed = can_borrow (in, frame.in_pitch, &frame);
  move.out_borrowed = can_borrow (out, frame.out_pitch, &frame);
  float times[3] = { 0, 0, 0 };
  double alloc_ms = 0, free_ms = 0;
  bool ok;

  /* Bands when the one-shot buffers do not fit, or to spread a large image
   * over several devices (the pageable and per-call lessons are about one
   * device's transfers and keep to it when they fit). An op whose result
   * depends on the image's own tile grid (image_grid) runs in bands through
   * its tile passes (es_job_tile_passes); a job without them takes the
   * image whole on one device, and the engine finishes on the CPU when it
   * does not fit. */
  const size_t budget = one_shot_held (cuda, cuda_op, variant, &move, &frame) ? SIZE_MAX : es_cuda_memory_budget (cuda);
  size_t footprint = ((move.in_borrowed ? 0 : frame.in_pitch) + (cuda_op->uses_levels ? frame.lev_pitch : 0)
                      + (move.out_borrowed ? 0 : frame.out_pitch))
                     * rows;
  if (cuda_op->tile_sizes != NULL)
    {
      /* The tiles' counts and maps lie beside the image. */
      size_t counts, map_bytes;

      cuda_op->tile_sizes (job, in->width, in->height, in->format, &counts, &map_bytes);
      footprint += counts * sizeof (uint32_t) + map_bytes;
    }
  const bool whole_plane = info->image_grid && es_job_tile_passes (job) == NULL;
  const bool spread = cuda->n_peers > 0 && !pageable && variant->transfer != ES_TRANSFER_PER_CALL && !whole_plane
                      && !es_image_on_device (in) && (size_t) in->width * rows >= ES_CUDA_SPREAD_MIN_PIXELS;
  if (whole_plane && footprint > budget)
    return es_error_set (error, ES_ERROR_NO_MEMORY,
                         "CUDA %s takes the image whole: %zu MiB of buffers, %zu MiB of device memory to use",
                         info->name, footprint >> 20, budget >> 20);
  /* A one-shot job takes milliseconds, so it is cancelled before it starts
   * only; banded runs look again before each pass. */
  es_control_begin (control, 1);
  /* A large job of the engine's own choosing between page-locked host
   * images goes in bands whose upload, kernels and download overlap, for
   * every row-local op (its halo is what a band reads beyond its rows) on
   * an unpadded frame. A named variant is a kernel's lesson and runs in one
   * piece, so that its kernel time is the one launch's; so do the transfer
   * lessons, runs whose counters are read (one piece), device images
   * (nothing to hide), ops that need the whole image or its tile grid (two
   * passes would upload it twice). A pageable input into a page-locked
   * result goes up whole first, and only its kernels and downloads overlap
   * (run_staged_bands); a pageable result, whose copies out of the staging
   * would compete with the downloads, goes in one piece. */
  const bool overlappable = job->variant == NULL && variant->transfer == ES_TRANSFER_DEFAULT && pad == 0
                            && !info->whole_image && !info->image_grid && !cuda->counters_wanted
                            && !es_image_on_device (in) && !es_image_on_device (out)
                            && (size_t) in->width * rows >= ES_CUDA_OVERLAP_MIN_PIXELS;
  const bool overlap = overlappable && move.in_direct && move.out_direct;
  const bool staged_overlap = overlappable && !move.in_direct && move.out_direct && !spread && footprint <= budget;
  const bool banded = !staged_overlap && (spread || footprint > budget || overlap);
  /* A one-shot job ordered on the result's stream runs there when it can;
   * every other path runs on the engine's own stream, after that one. */
  cudaStream_t caller;
  const bool on_caller = !staged_overlap && !banded && caller_stream (cuda, out, &caller);
  if (!on_caller && !wait_result_stream (cuda, out, error))
    return false;
  if (staged_overlap)
    {
      ok = run_staged_bands (cuda, job, variant, &move, &frame, budget, times, control, error);
      es_cuda_note_uncounted_run (cuda);
    }
  else if (banded)
    {
      /* Bands are cut from the image itself: no pad (the kernels then take
       * the border mode by index mapping), and copied into band buffers. */
      frame = frame_for (job, in, out_format, 0);
      move.in_borrowed = move.out_borrowed = false;
      ok = es_cuda_run_banded (cuda, job, variant, &move, &frame, budget,
                               spread || footprint > budget ? 1 : ES_CUDA_OVERLAP_BANDS, times, control, error);
      es_cuda_note_uncounted_run (cuda);
    }
  else if (on_caller)
    ok = run_one_shot_on (cuda, caller, job, variant, &move, &frame, times, &alloc_ms, &free_ms, error);
  else
    ok = run_one_shot (cuda, job, variant, &move, &frame, times, &alloc_ms, &free_ms, error);

  if (ok)
    es_control_advance (control, 1);
  if (ok && timing != NULL)
    {
      timing->upload_ms = times[0] + alloc_ms;
      timing->kernel_ms = times[1];
      timing->download_ms = times[2] + free_ms;
      timing->backend = ES_BACKEND_CUDA;
      timing->variant = variant->id;
      device_metrics (cuda, in, NULL, out, host_memory (&move, pageable), timing);
    }
  return ok;
}
