/* SPDX-License-Identifier: MIT */
/* A padded frame's border: the pixels around the image filled by a border mode, so that clipping kernels compute it. */
#include "es-cuda-internal.h"

#define BORDER_BLOCK 256

/* One block a row (grid-stride over rows): a pad row is filled across its
 * whole pitch, an image row only in its pad columns; samples beyond the
 * padded width are zeroed, as es_cuda_upload_2d zeroes them. */
template <typename T>
static __global__ void __launch_bounds__ (BORDER_BLOCK)
fill_border_kernel (void *in, size_t pitch, int width, int height, int pad, EsBorder border, uint32_t value)
{
  const int padded_w = width + 2 * pad, padded_h = height + 2 * pad;
  const int row_samples = (int) (pitch / sizeof (T));

  for (int y = blockIdx.x; y < padded_h; y += gridDim.x)
    {
      T *row = (T *) ((char *) in + (size_t) y * pitch);
      const int sy = es_border_index (y - pad, height, border);
      const bool pad_row = y < pad || y >= pad + height;
      const T *source = sy >= 0 ? (const T *) ((const char *) in + (size_t) (sy + pad) * pitch) + pad : NULL;
      /* Pad columns of an image row: [0, pad) and [pad + width, row_samples). */
      const int cells = pad_row ? row_samples : pad + (row_samples - pad - width);
      for (int i = threadIdx.x; i < cells; i += BORDER_BLOCK)
        {
          const int x = pad_row || i < pad ? i : i + width;
          T v = 0;
          if (x < padded_w)
            {
              const int sx = es_border_index (x - pad, width, border);
              v = source != NULL && sx >= 0 ? source[sx] : (T) value;
            }
          row[x] = v;
        }
    }
}

bool
es_cuda_fill_border (EsCuda *cuda, const EsCudaFrame *frame, EsBorder border, uint32_t value, EsError *error)
{
  const int width = frame->width - 2 * frame->pad, height = frame->height - 2 * frame->pad;
  const unsigned blocks = es_cuda_grid_y ((size_t) frame->height);

  if (frame->in_format == ES_FORMAT_U16)
    fill_border_kernel<uint16_t><<<blocks, BORDER_BLOCK, 0, cuda->stream>>> (
      (void *) frame->in, frame->in_pitch, width, height, frame->pad, border, value);
  else
    fill_border_kernel<uint8_t><<<blocks, BORDER_BLOCK, 0, cuda->stream>>> (
      (void *) frame->in, frame->in_pitch, width, height, frame->pad, border, value);
  ES_CUDA_LAUNCHED (cuda, "border fill kernel", error);
  es_cuda_note_kernel (cuda,
                       frame->in_format == ES_FORMAT_U16 ? (const void *) fill_border_kernel<uint16_t>
                                                         : (const void *) fill_border_kernel<uint8_t>,
                       blocks, BORDER_BLOCK, 0, "border fill kernel", false);
  return true;
}
