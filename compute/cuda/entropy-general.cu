/* SPDX-License-Identifier: MIT */
/* Local entropy on the GPU for every definition (DESIGN.md §1): any window shape, border, binning, units and mask. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "entropy-general-internal.h"

/* Two kernels, after a first pass that bins the frame once per cell:
 * borders as index mappings (es_border_index), the bin of every sample value
 * from a table filled on the host by es_bin_sample, masked and clipped cells
 * marked void (squares of 3 and 5 whose bins are the samples, without a
 * mask, skip that pass). Masked pixels get NaN, windows that count nothing
 * too.
 *
 * Full 3×3 squares of 8-bit samples that are their own bins,
 * without a mask, rank each cell among the equal cells before it
 * (entropy-ranks.cu). Up to 256 bins and 961 cells (windows of more than 9
 * cells, or up to 16 bins), the shared-memory counts of the fast variant slide down the
 * window's column spans: entropy-span-counts.cu. Else windows of at most
 * 32 cells are sorted, two windows a thread (entropy-sort.cu), and larger
 * ones slide a histogram down strips of rows (entropy-slide.cu). */

#define GENERAL_MAX_CELLS (ES_SIDE_MAX * ES_SIDE_MAX)
#define BIN_ROWS 8  /* rows of the binned frame a thread of the bin pass fills */
#define SORT_ONLY_CELLS 9  /* windows this small with more than 16 bins sort rather than count (below) */

/* The frame's bins, padded: cell (x, y) of the padded frame is image cell
 * (x − half_w, y − half_h) as the window sees it. Four cells a thread, one
 * store, whole rows of the pitch and one row more (the span-counts kernel
 * reads words past a row's last cell), the cells past the padded frame
 * void. Inside the image and without a mask, the four samples are binned
 * straight (8-bit samples through a table in shared memory); elsewhere each
 * cell resolves its border and mask. Cell: 16-bit, or 8-bit where the
 * span-counts kernel's bins and void mark fit a byte (p.binned holds
 * those). */
template <typename Cell>
static __global__ void __launch_bounds__ (GENERAL_BLOCK)
bin_cells_kernel (GeneralParams p)
{
  __shared__ uint16_t s_bin_of[256];
  const bool u8_table = !p.u16 && p.bin_of != NULL;
  if (u8_table)
    for (int i = threadIdx.x; i < 256; i += GENERAL_BLOCK)
      s_bin_of[i] = __ldg (p.bin_of + i);
  __syncthreads ();
  const uint16_t *bin_of = u8_table ? s_bin_of : p.bin_of;

  const int x = 4 * (int) (blockIdx.x * GENERAL_BLOCK + threadIdx.x);
  const int padded_w = p.width + 2 * p.half_w, padded_h = p.height + 2 * p.half_h;
  if (x >= (int) p.binned_pitch)
    return;
  const int xx = x - p.half_w;
  const bool columns_inside = p.mask == NULL && xx >= 0 && xx + 4 <= p.width;
  for (int y = blockIdx.y; y <= padded_h; y += gridDim.y)
    {
      const int yy = y - p.half_h;
      uint32_t bin[4];
      if (columns_inside && yy >= 0 && yy < p.height)
        {
          const char *row = (const char *) p.in + (size_t) yy * p.in_pitch;
#pragma unroll
          for (int i = 0; i < 4; i++)
            {
              const uint32_t v
                = p.u16 ? __ldg ((const uint16_t *) row + xx + i) : __ldg ((const uint8_t *) row + xx + i);
              bin[i] = bin_of != NULL ? bin_of[v] : v;
            }
        }
      else
#pragma unroll
        for (int i = 0; i < 4; i++)
          {
            const int b = y < padded_h && x + i < padded_w ? cell_bin (p, bin_of, yy, xx + i) : -1;
            bin[i] = b < 0 ? p.void_mark : (uint32_t) b;
          }
      if (sizeof (Cell) == 1)
        *(uint32_t *) ((uint8_t *) p.binned + (size_t) y * p.binned_pitch + x)
          = (bin[0] & 0xffu) | (bin[1] & 0xffu) << 8 | (bin[2] & 0xffu) << 16 | bin[3] << 24;
      else
        *(uint2 *) (p.binned + (size_t) y * p.binned_pitch + x)
          = make_uint2 (bin[0] | bin[1] << 16, bin[2] | bin[3] << 16);
    }
}

bool
es_cuda_general_bin_frame (EsCuda *cuda, const EsJob *job, GeneralParams *p, bool bytes, EsError *error)
{
  int half_h, half_w;

  es_window_extent (job, &half_h, &half_w);
  p->half_h = half_h, p->half_w = half_w;
  p->binned_pitch = (unsigned) (es_cuda_div_up ((size_t) (p->width + 2 * half_w), ES_CUDA_VECTOR) * ES_CUDA_VECTOR);
  const size_t rows = (size_t) p->height + 2 * (size_t) half_h + 1;
  if (!es_cuda_device_reserve (cuda, &cuda->general_binned, rows * p->binned_pitch * (bytes ? 1 : 2), "binned frame",
                               error))
    return false;
  p->binned = (uint16_t *) cuda->general_binned.ptr;
  /* Eight rows and four cells a thread: with one cell and row, the
   * thread's setup cost more than its cell (Nsight Compute: 90
   * instructions a cell, 0.33 ms at 8192²); eight rows took 0.17 ms, four
   * cells and one store a thread 0.07 ms less
   * (docs/performance/cuda-entropy-definitions.md). */
  const dim3 grid ((unsigned) es_cuda_div_up (p->binned_pitch / 4, GENERAL_BLOCK),
                   es_cuda_grid_y (es_cuda_div_up (rows, BIN_ROWS)));
  if (bytes)
    bin_cells_kernel<uint8_t><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  else
    bin_cells_kernel<uint16_t><<<grid, GENERAL_BLOCK, 0, cuda->stream>>> (*p);
  ES_CUDA_LAUNCHED (cuda, "bin kernel", error);
  es_cuda_note_kernel (cuda, bytes ? (const void *) bin_cells_kernel<uint8_t> : (const void *) bin_cells_kernel<uint16_t>,
                       grid, GENERAL_BLOCK, 0, "bin kernel", false);
  return true;
}

/* Host staging of the small per-job tables: pageable memory, which
 * cudaMemcpyAsync has copied out of by the time it returns. */
static bool
upload_table (EsCuda *cuda, EsCudaBuffer *buffer, const void *host, size_t bytes, const char *what, EsError *error)
{
  if (!es_cuda_device_reserve (cuda, buffer, bytes, what, error))
    return false;
  ES_CUDA_TRY (cuda, cudaMemcpyAsync (buffer->ptr, host, bytes, cudaMemcpyHostToDevice, cuda->stream), what, error);
  return true;
}

/* The bin of every sample value and the mask rows of the frame, on the device. */
static bool
general_prepare (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, GeneralParams *p, EsError *error)
{
  const EsEntropyDefinition *d = &job->definition;
  const EsBinner *binner = &frame->binner;
  bool ok;

  /* The bin of every sample value (B ≤ 65536: 16 bits); exact bins are the
   * samples themselves. */
  if (!binner->identity && binner->mode != ES_BINNING_EXACT)
    {
      const size_t values = (size_t) 1 << frame->depth;
      uint16_t *bin_of = (uint16_t *) malloc (values * sizeof *bin_of);
      if (bin_of == NULL)
        return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the bin table");
      for (size_t v = 0; v < values; v++)
        bin_of[v] = (uint16_t) es_bin_sample (binner, (uint32_t) v);
      ok = upload_table (cuda, &cuda->general_bins, bin_of, values * sizeof *bin_of, "bin table", error);
      free (bin_of);
      if (!ok)
        return false;
      p->bin_of = (const uint16_t *) cuda->general_bins.ptr;
    }

  /* The mask rows of this frame (a band starts at image row y_origin). */
  if (d->mask != NULL)
    {
      const size_t pitch = (size_t) frame->vectors * ES_CUDA_VECTOR;
      if (!es_cuda_device_reserve (cuda, &cuda->general_mask, pitch * (size_t) frame->height, "mask buffer", error)
          || !es_cuda_upload_2d (cuda, cuda->general_mask.ptr, pitch,
                                 (const char *) d->mask->pixels + (size_t) frame->y_origin * d->mask->stride,
                                 d->mask->stride, (size_t) frame->width, (size_t) frame->height, cuda->stream,
                                 "mask upload", error))
        return false;
      p->mask = (const uint8_t *) cuda->general_mask.ptr;
      p->mask_pitch = (unsigned) pitch;
    }

  p->tables = cuda->tables;
  return true;
}

/* The sort kernel for windows of at most SMALL_CELLS cells, else the
 * sliding kernel. */
static bool
general_launch (EsCuda *cuda, const EsJob *job, const GeneralParams *p_in, EsError *error)
{
  GeneralParams p = *p_in;

  p.n_diffs = es_window_pixels (job);
  if (p.n_diffs <= SMALL_CELLS)
    return es_cuda_general_sort (cuda, job, &p, error);
  return es_cuda_general_slide (cuda, job, &p, error);
}

bool
es_cuda_entropy_general (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  const EsEntropyDefinition *d = &job->definition;
  const EsBinner *binner = &frame->binner;
  GeneralParams p;
  EsSpan *spans;
  bool ok;

  if (frame->width <= 0 || frame->height <= 0)
    return true;
  memset (&p, 0, sizeof p);
  p.void_mark = GENERAL_VOID;
  p.in = frame->in;
  p.in_pitch = (unsigned) frame->in_pitch;
  p.width = frame->width;
  p.height = frame->height;
  p.u16 = frame->in_format == ES_FORMAT_U16;
  p.border = d->border;
  p.border_bin = d->border == ES_BORDER_CONSTANT ? es_binner_border_bin (binner, job) : 0u;
  p.bins = binner->bins;
  p.normalized = d->normalized;
  p.unit_scale = es_entropy_unit_scale (d);
  p.diff = (const unsigned long long *) cuda->general_clnc.ptr;
  p.out = (float *) frame->out;
  p.out_pitch = (unsigned) frame->out_pitch;

  /* 3×3 squares of 8-bit bins: the rank kernel, which needs none of the
   * tables below (each a pageable copy on the host's side of a call). */
  const EsExtent extent = { p.width, p.height, 1, frame->in_format, frame->depth, frame->is_levels ? frame->levels : 0 };
  if (es_cuda_general_ranks_take (job, &extent))
    {
      bool ran;
      p.tables = cuda->tables;
      es_window_extent (job, &p.half_h, &p.half_w);
      if (!es_cuda_general_ranks (cuda, &p, &ran, error))
        return false;
      if (ran)
        return true;
    }

  /* The window's column spans. */
  p.n_spans = es_cuda_column_spans (job, &spans);
  if (p.n_spans < 0)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the window's spans");
  ok = upload_table (cuda, &cuda->general_spans, spans, sizeof *spans * (size_t) (p.n_spans > 0 ? p.n_spans : 1),
                     "window spans", error);
  p.spans = (const EsSpan *) cuda->general_spans.ptr;
  if (ok)
    ok = general_prepare (cuda, frame, job, &p, error);
  /* Up to 256 bins, 961 cells and 256 column spans: shared counts slid
   * down the column spans (entropy-span-counts.cu). Why, measured at 8192²
   * on the H200 (docs/performance/cuda-entropy-definitions.md): up to 16
   * bins it beat the kernel that packed the counts in registers at every
   * disk (r = 1 to 15, 9–15 % faster), which it replaces; with more bins, the sliding kernel 1.9–2.8×
   * and the sort kernel from 13 cells on (9 % at 13 and 25 cells, 2× at
   * 29). Windows of at most SORT_ONLY_CELLS cells with more than 16 bins
   * still sort: a 3×3 square sorts its samples in 0.59 ms, against 1.01. */
  const int cells = es_window_pixels (job);
  const bool span_counts = p.bins <= ES_CUDA_SPAN_COUNTS_MAX_BINS && cells <= ES_CUDA_MAX_COUNT
                           && p.n_spans <= ES_CUDA_SPAN_COUNTS_MAX_SPANS && (p.bins <= 16 || cells > SORT_ONLY_CELLS);
  bool ran = false;
  if (ok && span_counts)
    {
      /* The span-counts kernel counts void cells in a bin of their own, B,
       * where a mask makes them; cells clipped off the image without a
       * mask are bin 0, which it takes out by their position. So 8-bit
       * cells hold the bins unless a mask comes with 256 of them. */
      const bool masked = d->mask != NULL, clipped = !masked && d->border == ES_BORDER_CLIP;
      const bool bytes = !masked || p.bins <= 255;
      p.void_mark = (uint16_t) (masked ? p.bins : 0u);
      ok = es_cuda_general_bin_frame (cuda, job, &p, bytes, error);
      const EsCudaBinnedJob binned = {
        p.binned, p.binned_pitch, bytes, p.half_h, p.half_w, p.width, p.height, p.bins,
        p.normalized, p.unit_scale, masked, clipped, p.out, p.out_pitch,
        spans, p.n_spans, cells,
      };
      if (ok)
        ok = es_cuda_entropy_span_counts (cuda, &binned, &ran, error);
      p.void_mark = GENERAL_VOID;
    }
  free (spans);
  if (!ok || ran)
    return ok;
  return general_launch (cuda, job, &p, error);
}

/* Once per device: the differences of round(c ln c · 2^32) for every count
 * a window can hold, then the setup of the span-counts and sliding kernels. */
bool
es_cuda_entropy_general_init (EsCuda *cuda, EsError *error)
{
  const size_t entries = GENERAL_MAX_CELLS;
  unsigned long long *diff = (unsigned long long *) malloc (entries * sizeof *diff);
  bool ok;

  if (diff == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate the c ln c table");
  for (size_t c = 0; c < entries; c++)
    {
      const double next = (double) (c + 1) * log ((double) (c + 1)), here = c ? (double) c * log ((double) c) : 0.0;
      diff[c] = (unsigned long long) llround (ldexp (next, GENERAL_FIX_BITS))
                - (unsigned long long) llround (ldexp (here, GENERAL_FIX_BITS));
    }
  ok = es_cuda_device_reserve (cuda, &cuda->general_clnc, entries * sizeof *diff, "c ln c table", error);
  if (ok)
    ok = es_cuda_check (cuda, cudaMemcpy (cuda->general_clnc.ptr, diff, entries * sizeof *diff,
                                          cudaMemcpyHostToDevice), "c ln c table", error);
  free (diff);
  ok = ok && es_cuda_entropy_span_counts_init (cuda, error);
  return ok && es_cuda_general_slide_init (cuda, error);
}

/* ---- memory model ------------------------------------------------------------- */

/* The bin pass (bin_cells_kernel): every sample read once (and the mask),
 * the bin table where there is one, the padded frame of cells written with
 * one row more; the kernel after it reads those cells back once (a
 * window's re-reads, a few rows apart, hit L2). */
static void
bin_pass_memory (const EsJob *job, const EsExtent *extent, bool table, int cell_bytes, EsTraffic *traffic)
{
  int half_h, half_w;
  const double pixels = es_extent_pixels (extent);

  es_window_extent (job, &half_h, &half_w);
  const double pitch = (double) es_cuda_div_up ((size_t) (extent->width + 2 * half_w), ES_CUDA_VECTOR) * ES_CUDA_VECTOR;
  const double cells = pitch * (extent->height + 2 * half_h + 1) * cell_bytes;
  traffic->read_bytes += pixels * es_model_sample_bytes (extent) + (job->definition.mask != NULL ? pixels : 0)
                         + (table ? (double) ((size_t) 2 << extent->depth) : 0) + cells;
  traffic->write_bytes += cells;
}

/* "general", as es_cuda_entropy_general picks its path: 3×3 squares of
 * 8-bit bins ranked from the samples; shared counts slid
 * down the column spans after the bin pass (8-bit cells unless a mask
 * comes with 256 bins); small windows sorted from the samples themselves
 * (full 3×3 and 5×5 squares of a levels image or exact bins, no mask) or
 * from 16-bit cells; larger windows slid over 16-bit cells, their counts in
 * a global scratch past 256 bins. One float written a pixel. */
void
es_cuda_entropy_general_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  const EsEntropyDefinition *d = &job->definition;
  const double pixels = es_extent_pixels (extent);
  const int cells = es_window_pixels (job);
  const uint32_t bins = extent->levels != 0               ? (uint32_t) extent->levels
                        : d->binning == ES_BINNING_EXACT ? 1u << extent->depth
                                                         : (uint32_t) job->levels;
  /* The bin table exists unless the bins are the samples. */
  const bool table = extent->levels == 0 && d->binning != ES_BINNING_EXACT;
  EsSpan *spans = NULL;
  const int n_spans = es_cuda_column_spans (job, &spans);

  free (spans);
  *traffic = (EsTraffic){ 0, 0, 0 };
  traffic->write_bytes = pixels * sizeof (float);
  /* The rank kernel reads the samples themselves. */
  if (es_cuda_general_ranks_take (job, extent))
    {
      traffic->read_bytes += pixels;
      return;
    }
  if (bins <= ES_CUDA_SPAN_COUNTS_MAX_BINS && cells <= ES_CUDA_MAX_COUNT && n_spans >= 0
      && n_spans <= ES_CUDA_SPAN_COUNTS_MAX_SPANS && (bins <= 16 || cells > SORT_ONLY_CELLS))
    {
      bin_pass_memory (job, extent, table, d->mask == NULL || bins <= 255 ? 1 : 2, traffic);
      return;
    }
  if (cells <= SMALL_CELLS)
    {
      int half_h, half_w;
      es_window_extent (job, &half_h, &half_w);
      const bool full_square = half_h == half_w && cells == (2 * half_h + 1) * (2 * half_h + 1)
                               && (half_h == 1 || half_h == 2);
      if (full_square && !table && d->mask == NULL)
        traffic->read_bytes += pixels * es_model_sample_bytes (extent);
      else
        bin_pass_memory (job, extent, table, 2, traffic);
      return;
    }
  if (bins <= GENERAL_VOID)
    bin_pass_memory (job, extent, table, 2, traffic);
  else
    traffic->read_bytes += pixels * es_model_sample_bytes (extent);
  /* Past 256 bins each thread's histogram lives in a global scratch
   * (bins × 2 bytes a thread, up to 512 MiB), cleared first. Where the
   * resident threads' histograms outgrow L2, each of the two count
   * updates a span and pixel misses in the share that does not fit: a
   * 32-byte sector read and written back. */
  if (bins > 256)
    {
      const double histogram = 2.0 * bins;
      const double threads = fmin (ES_MODEL_RESIDENT_THREADS, (double) ((size_t) 512 << 20) / histogram);
      const double scratch = threads * histogram;
      traffic->write_bytes += scratch;
      if (scratch > ES_MODEL_L2_BYTES)
        {
          const double missed = 1.0 - ES_MODEL_L2_BYTES / scratch, updates = 2.0 * n_spans * pixels;
          traffic->read_bytes += missed * updates * 32;
          traffic->write_bytes += missed * updates * 32;
        }
    }
}
