/* SPDX-License-Identifier: MIT */
/* Quantization on the GPU: samples to levels, 16 samples per thread. */
#include "es-cuda-internal.h"
#include "es-i18n.h"

/* Grid-stride over the 16-sample vectors of the padded image. */
template <typename T>
static __global__ void __launch_bounds__ (256)
quantize_kernel (const void *__restrict__ in, size_t in_pitch, int vectors, int height, EsSampleMap map,
                 uint8_t *__restrict__ out, size_t out_pitch)
{
  for (EsVectorWalk walk (vectors); walk.y < height; walk.next ())
    {
      int x0 = walk.x * ES_CUDA_VECTOR;
      uint32_t v[16];

      EsVec16<T>::load (es_dev_row<T> (in, in_pitch, walk.y), x0, v);
#pragma unroll
      for (int k = 0; k < 16; k++)
        v[k] = es_dev_level (v[k], map);
      es_dev_store16 (es_dev_row_mut<uint8_t> (out, out_pitch, walk.y), x0, v);
    }
}

static bool
quantize_into (EsCuda *cuda, const EsCudaFrame *frame, uint8_t *out, size_t out_pitch, EsError *error)
{
  const int block = 256;
  unsigned blocks = es_cuda_blocks (cuda, (size_t) frame->vectors * (size_t) frame->height, block);
  EsSampleMap map = es_cuda_sample_map (frame);

  const void *kernel;
  if (frame->in_format == ES_FORMAT_U8)
    {
      quantize_kernel<uint8_t><<<blocks, block, 0, cuda->stream>>> (frame->in, frame->in_pitch, frame->vectors,
                                                                    frame->height, map, out, out_pitch);
      kernel = (const void *) quantize_kernel<uint8_t>;
    }
  else
    {
      quantize_kernel<uint16_t><<<blocks, block, 0, cuda->stream>>> (frame->in, frame->in_pitch, frame->vectors,
                                                                     frame->height, map, out, out_pitch);
      kernel = (const void *) quantize_kernel<uint16_t>;
    }
  ES_CUDA_LAUNCHED (cuda, "quantize kernel", error);
  es_cuda_note_kernel (cuda, kernel, blocks, block, 0, "quantize kernel", false);
  return true;
}

bool
es_cuda_quantize_levels (EsCuda *cuda, const EsCudaFrame *frame, EsError *error)
{
  return quantize_into (cuda, frame, frame->lev, frame->lev_pitch, error);
}

static bool
launch_elementwise (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, EsError *error)
{
  (void) job;
  return quantize_into (cuda, frame, (uint8_t *) frame->out, frame->out_pitch, error);
}

/* One 16-byte vector of samples in, one of levels out: a copy's bytes. */
static void
elementwise_memory (const EsJob *job, const EsExtent *extent, EsTraffic *traffic)
{
  (void) job;
  *traffic = (EsTraffic){ 0, 0, 0 };
  es_model_quantize_pass (extent, es_model_vector_pixels (extent), traffic);
}

/* ---- the operation --------------------------------------------------------- */

static const EsVariant quantize_variants[] = {
  { "elementwise", N_ ("Elementwise, 16 samples per thread"),
    N_ ("Each thread turns one 16-byte vector of samples into levels: with one aligned load and one "
    "store per 16 pixels, the kernel runs at the speed of a copy."),
    "NVIDIA CUDA C++ Best Practices Guide, §Coalesced access to global memory",
    true, ES_TRANSFER_DEFAULT, launch_elementwise, NULL, elementwise_memory },
};

const EsCudaOp es_cuda_quantize = ES_CUDA_OP_VARIANTS_ONLY (quantize_variants);
