/* Sharpening on the GPU: a 5-point Laplacian stencil with replicated borders, five memory strategies. */
#include <string.h>

#include "es-cuda-internal.h"

static const EsVariant sharpen_variants[] = {
  { "global", "Global memory only",
    "Each thread reads its pixel and four neighbours straight from global memory; every pixel is "
    "loaded five times, and only the L1 and L2 caches keep that from costing five times the bandwidth.",
    "NVIDIA CUDA C++ Best Practices Guide, §Device memory spaces", false },
  { "constant-mask", "3×3 mask in constant memory",
    "The stencil weights live in __constant__ memory and the kernel loops over all nine taps: every "
    "thread of a warp reads the same weight at the same time, which the constant cache broadcasts.",
    "NVIDIA CUDA C++ Programming Guide, §Constant memory; cuda-samples convolutionSeparable", false },
  { "shared-tile", "Shared-memory tile with halo",
    "Each block loads its 32×8 tile plus a one-pixel halo into shared memory once, then every "
    "neighbour read hits shared memory; the halo costs 36% extra loads for a 32×8 tile.",
    "NVIDIA CUDA C++ Programming Guide, §Shared memory (tiled stencil)", false },
  { "l2-halo", "Tile interior in shared, halo from L2",
    "The block loads only its interior into shared memory (no divergent halo loads) and reads the "
    "few neighbours outside the tile from global memory, where the L1 and L2 caches usually hold them.",
    "NVIDIA CUDA C++ Best Practices Guide, §L2 cache; \"halo from cache\" stencil variants", false },
  { "fast", "Fast: 16 pixels per thread",
    "Each thread sharpens 16 consecutive pixels: three aligned 16-byte loads bring the row and its "
    "upper and lower neighbours, two more loads the left and right pixels, and one 16-byte store writes the result.",
    "NVIDIA CUDA C++ Best Practices Guide, §Coalesced access; vectorized memory access (uint4)", true },
};

const EsVariant *
es_cuda_sharpen_variants (size_t *n)
{
  *n = sizeof sharpen_variants / sizeof sharpen_variants[0];
  return sharpen_variants;
}

/* The Laplacian part of the kernel; out = c + amount · Σ mask · pixels. */
static __constant__ int c_mask[3][3] = {
  { 0, -1, 0 },
  { -1, 4, -1 },
  { 0, -1, 0 },
};

template <typename T>
static __device__ __forceinline__ int
view_at (const void *in, size_t in_pitch, int x, int y, EsSampleMap map)
{
  return (int) es_dev_view (__ldg (es_dev_row<T> (in, in_pitch, y) + x), map);
}

/* One pixel from global memory, the nearest edge pixel standing in for a
 * missing neighbour. */
template <typename T>
static __device__ __forceinline__ uint32_t
sharpen_at (const void *in, size_t in_pitch, int width, int height, EsSampleMap map, float amount, int x, int y)
{
  int c = view_at<T> (in, in_pitch, x, y, map);
  int laplacian = 4 * c - view_at<T> (in, in_pitch, x, max (y - 1, 0), map)
                  - view_at<T> (in, in_pitch, x, min (y + 1, height - 1), map)
                  - view_at<T> (in, in_pitch, max (x - 1, 0), y, map)
                  - view_at<T> (in, in_pitch, min (x + 1, width - 1), y, map);
  return es_dev_sharpen (c, laplacian, amount);
}

static __device__ __forceinline__ void
put (void *out, size_t out_pitch, int x, int y, uint32_t value)
{
  es_dev_row_mut<uint8_t> (out, out_pitch, y)[x] = (uint8_t) value;
}

#define TILE_W 32
#define TILE_H 8

template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_global_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                       float amount, void *out, size_t out_pitch)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    put (out, out_pitch, x, y, sharpen_at<T> (in, in_pitch, width, height, map, amount, x, y));
}

template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_mask_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                     float amount, void *out, size_t out_pitch)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (x >= width)
    return;
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += gridDim.y * blockDim.y)
    {
      int laplacian = 0;
#pragma unroll
      for (int dy = -1; dy <= 1; dy++)
#pragma unroll
        for (int dx = -1; dx <= 1; dx++)
          laplacian += c_mask[dy + 1][dx + 1]
                       * view_at<T> (in, in_pitch, min (max (x + dx, 0), width - 1),
                                     min (max (y + dy, 0), height - 1), map);
      put (out, out_pitch, x, y, es_dev_sharpen (view_at<T> (in, in_pitch, x, y, map), laplacian, amount));
    }
}

/* The tile covers image columns ox−1..ox+TILE_W and rows oy−1..oy+TILE_H,
 * each read at its clamped position: halo cells beyond an edge hold the
 * replicated edge pixel, so the stencil needs no border tests. */
template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_tile_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                     float amount, void *out, size_t out_pitch)
{
  __shared__ uint8_t tile[TILE_H + 2][TILE_W + 2];
  const int tid = threadIdx.y * TILE_W + threadIdx.x;
  const int ox = blockIdx.x * TILE_W;
  const int tiles_y = (height + TILE_H - 1) / TILE_H;

  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y)
    {
      const int oy = ty * TILE_H;

      __syncthreads ();  /* the previous tile is no longer read */
      for (int i = tid; i < (TILE_H + 2) * (TILE_W + 2); i += TILE_W * TILE_H)
        {
          int cx = i % (TILE_W + 2), cy = i / (TILE_W + 2);
          int gx = min (max (ox - 1 + cx, 0), width - 1);
          int gy = min (max (oy - 1 + cy, 0), height - 1);
          tile[cy][cx] = (uint8_t) view_at<T> (in, in_pitch, gx, gy, map);
        }
      __syncthreads ();

      const int x = ox + threadIdx.x, y = oy + threadIdx.y;
      if (x < width && y < height)
        {
          const int tx = threadIdx.x + 1, ty_ = threadIdx.y + 1;
          int c = tile[ty_][tx];
          int laplacian = 4 * c - tile[ty_ - 1][tx] - tile[ty_ + 1][tx] - tile[ty_][tx - 1] - tile[ty_][tx + 1];
          put (out, out_pitch, x, y, es_dev_sharpen (c, laplacian, amount));
        }
    }
}

/* Only the tile's own pixels go to shared memory; a neighbour whose
 * (clamped) position lies outside the tile is read from global memory. */
template <typename T>
static __global__ void __launch_bounds__ (TILE_W * TILE_H)
sharpen_l2_halo_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, EsSampleMap map,
                        float amount, void *out, size_t out_pitch)
{
  __shared__ uint8_t tile[TILE_H][TILE_W];
  const int ox = blockIdx.x * TILE_W;
  const int tiles_y = (height + TILE_H - 1) / TILE_H;
  const int x = ox + threadIdx.x;

  for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y)
    {
      const int oy = ty * TILE_H;
      const int y = oy + threadIdx.y;
      const bool inside = x < width && y < height;

      __syncthreads ();
      if (inside)
        tile[threadIdx.y][threadIdx.x] = (uint8_t) view_at<T> (in, in_pitch, x, y, map);
      __syncthreads ();

      if (inside)
        {
          /* Clamped neighbour positions are always inside the image, and
           * every image pixel of the tile has been loaded. */
          const int nx[4] = { x, x, max (x - 1, 0), min (x + 1, width - 1) };
          const int ny[4] = { max (y - 1, 0), min (y + 1, height - 1), y, y };
          int c = tile[threadIdx.y][threadIdx.x];
          int laplacian = 4 * c;
#pragma unroll
          for (int i = 0; i < 4; i++)
            {
              int lx = nx[i] - ox, ly = ny[i] - oy;
              laplacian -= lx >= 0 && lx < TILE_W && ly >= 0 && ly < TILE_H
                             ? tile[ly][lx] : view_at<T> (in, in_pitch, nx[i], ny[i], map);
            }
          put (out, out_pitch, x, y, es_dev_sharpen (c, laplacian, amount));
        }
    }
}

/* 16 pixels per thread. Interior vectors (the right neighbour x0+16 exists)
 * use vector loads; the last vector of a row takes the clamped scalar path,
 * and its lanes beyond the width land in the row's padding. */
template <typename T>
static __global__ void __launch_bounds__ (256)
sharpen_fast_kernel (const void *__restrict__ in, size_t in_pitch, int width, int height, int vectors,
                     EsSampleMap map, float amount, void *out, size_t out_pitch)
{
  for (EsVectorWalk walk (vectors); walk.y < height; walk.next ())
    {
      const int x0 = walk.x * ES_CUDA_VECTOR;
      const int y = walk.y;
      uint32_t result[16];

      if (x0 + ES_CUDA_VECTOR < width)
        {
          uint32_t up[16], mid[16], down[16];
          EsVec16<T>::load (es_dev_row<T> (in, in_pitch, max (y - 1, 0)), x0, up);
          EsVec16<T>::load (es_dev_row<T> (in, in_pitch, y), x0, mid);
          EsVec16<T>::load (es_dev_row<T> (in, in_pitch, min (y + 1, height - 1)), x0, down);
          int left = view_at<T> (in, in_pitch, max (x0 - 1, 0), y, map);
          int right = view_at<T> (in, in_pitch, x0 + ES_CUDA_VECTOR, y, map);
#pragma unroll
          for (int k = 0; k < 16; k++)
            {
              up[k] = es_dev_view (up[k], map);
              mid[k] = es_dev_view (mid[k], map);
              down[k] = es_dev_view (down[k], map);
            }
#pragma unroll
          for (int k = 0; k < 16; k++)
            {
              int c = (int) mid[k];
              int w = k == 0 ? left : (int) mid[k - 1];
              int e = k == 15 ? right : (int) mid[k + 1];
              int laplacian = 4 * c - (int) up[k] - (int) down[k] - w - e;
              result[k] = es_dev_sharpen (c, laplacian, amount);
            }
        }
      else
        {
#pragma unroll
          for (int k = 0; k < 16; k++)
            result[k] = sharpen_at<T> (in, in_pitch, width, height, map, amount, min (x0 + k, width - 1), y);
        }
      es_dev_store16 (es_dev_row_mut<uint8_t> (out, out_pitch, y), x0, result);
    }
}

template <typename T>
static bool
run_typed (EsCuda *cuda, const EsCudaFrame *f, float amount, const char *variant, EsError *error)
{
  const EsSampleMap map = es_cuda_sample_map (f);
  const dim3 block (TILE_W, TILE_H);
  const dim3 grid ((unsigned) es_cuda_div_up ((size_t) f->width, TILE_W),
                   es_cuda_grid_y (es_cuda_div_up ((size_t) f->height, TILE_H)));

  if (strcmp (variant, "fast") == 0)
    {
      size_t cells = (size_t) f->vectors * (size_t) f->height;
      sharpen_fast_kernel<T><<<es_cuda_blocks (cuda, cells, 256), 256, 0, cuda->stream>>> (
        f->in, f->in_pitch, f->width, f->height, f->vectors, map, amount, f->out, f->out_pitch);
    }
  else if (strcmp (variant, "global") == 0)
    sharpen_global_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                amount, f->out, f->out_pitch);
  else if (strcmp (variant, "constant-mask") == 0)
    sharpen_mask_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                              amount, f->out, f->out_pitch);
  else if (strcmp (variant, "shared-tile") == 0)
    sharpen_tile_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                              amount, f->out, f->out_pitch);
  else if (strcmp (variant, "l2-halo") == 0)
    sharpen_l2_halo_kernel<T><<<grid, block, 0, cuda->stream>>> (f->in, f->in_pitch, f->width, f->height, map,
                                                                 amount, f->out, f->out_pitch);
  else
    return es_error_set (error, ES_ERROR_INVALID, "unknown sharpen variant \"%s\"", variant);
  ES_CUDA_LAUNCHED (cuda, "sharpen kernel", error);
  return true;
}

bool
es_cuda_sharpen_run (EsCuda *cuda, const EsCudaFrame *frame, const EsJob *job, const char *variant,
                     EsError *error)
{
  if (frame->in_format == ES_FORMAT_U8)
    return run_typed<uint8_t> (cuda, frame, job->amount, variant, error);
  return run_typed<uint16_t> (cuda, frame, job->amount, variant, error);
}
