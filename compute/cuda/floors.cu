/* HEAD */
/* ---- the copy floor -------------------------------------------------------- */

/* Reads nin and writes nout 16-byte words; words read beyond nout feed a
 * checksum that is stored only on an impossible match, so that no read is
 * optimized away. Four words per thread and trip keep loads in flight. */
static __global__ void __launch_bounds__ (256)
copy_kernel (const uint4 *__restrict__ in, size_t nin, uint4 *__restrict__ out, size_t nout, unsigned *sink)
{
  const size_t n = nin > nout ? nin : nout;
  const size_t stride = (size_t) gridDim.x * blockDim.x;
  unsigned check = 0;

  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * stride)
    {
      uint4 v[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          size_t j = i + k * stride;
          v[k] = j < nin ? __ldcs (&in[j]) : make_uint4 ((unsigned) j, 1u, 2u, 3u);
        }
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          size_t j = i + k * stride;
          if (j < nout)
            __stcs (&out[j], v[k]);
          else if (j < n)
            check ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
        }
    }
  if (check == 0x9e3779b9u)
    *sink = check;
}

/* Fills n 16-byte words with a hash of their index, no byte zero. */
static __global__ void __launch_bounds__ (256)
fill_kernel (uint4 *out, size_t n)
{
  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      unsigned h[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          unsigned x = (unsigned) (i * 4 + k) * 0x9e3779b9u;
          x ^= x >> 16;
          x *= 0x85ebca6bu;
          x ^= x >> 13;
          h[k] = x | 0x01010101u;
        }
      out[i] = make_uint4 (h[0], h[1], h[2], h[3]);
    }
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Sorts samples in place. */
static double
median (double *samples, int n)
{
  qsort (samples, (size_t) n, sizeof *samples, compare_doubles);
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

bool
es_cuda_copy_floor (EsCuda *cuda, size_t in_bytes, size_t out_bytes, int repeats, double *median_ms,
                    EsError *error)
{
  const int warmups = 3;
  double *samples;
  size_t nin, nout;
  unsigned blocks;

  if (cuda == NULL || median_ms == NULL || repeats < 1 || (in_bytes == 0 && out_bytes == 0))
    return es_error_set (error, ES_ERROR_INVALID, "copy floor: bad arguments");
  if (cuda->broken)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA is unusable after an earlier device error");
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);

  nin = es_cuda_div_up (in_bytes, 16);
  nout = es_cuda_div_up (out_bytes, 16);
  if (!device_reserve (cuda, &cuda->d_in, nin * 16, "input buffer", error)
      || !device_reserve (cuda, &cuda->d_out, nout * 16, "output buffer", error))
    return false;
  samples = (double *) malloc ((size_t) repeats * sizeof *samples);
  if (samples == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "copy floor: out of host memory");

  const uint4 *in = (const uint4 *) cuda->d_in.ptr;
  uint4 *out = (uint4 *) cuda->d_out.ptr;
  unsigned *sink = (unsigned *) cuda->histogram;
  bool ok = true;

  if (nin > 0)
    {
      fill_kernel<<<es_cuda_blocks (cuda, nin, 256), 256, 0, cuda->stream>>> ((uint4 *) cuda->d_in.ptr, nin);
      ok = es_cuda_check (cuda, cudaGetLastError (), "fill kernel", error);
    }
  blocks = es_cuda_blocks (cuda, es_cuda_div_up (nin > nout ? nin : nout, 4), 256);
  for (int i = 0; ok && i < warmups + repeats; i++)
    {
      float ms = 0;
      ok = es_cuda_check (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error);
      if (ok)
        {
          copy_kernel<<<blocks, 256, 0, cuda->stream>>> (in, nin, out, nout, sink);
          ok = es_cuda_check (cuda, cudaGetLastError (), "copy kernel", error)
               && es_cuda_check (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error)
               && es_cuda_check (cuda, cudaEventSynchronize (cuda->ev_done), "copy kernel run", error)
               && es_cuda_check (cuda, cudaEventElapsedTime (&ms, cuda->ev_start, cuda->ev_done), "timing", error);
        }
      if (ok && i >= warmups)
        samples[i - warmups] = ms;
    }
  if (ok)
    *median_ms = median (samples, repeats);
  free (samples);
  return ok;
}

bool
es_cuda_transfer_floor (EsCuda *cuda, size_t in_bytes, size_t out_bytes, int repeats, double *median_ms,
                        EsError *error)
{
  const int warmups = 2;
  double *samples;
  bool ok;

  if (cuda == NULL || median_ms == NULL || repeats < 1)
    return es_error_set (error, ES_ERROR_INVALID, "transfer floor: bad arguments");
  if (cuda->broken)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "CUDA is unusable after an earlier device error");
  ES_CUDA_TRY (cuda, cudaSetDevice (cuda->device), "device selection", error);
  if (!device_reserve (cuda, &cuda->d_in, in_bytes, "input buffer", error)
      || !device_reserve (cuda, &cuda->d_out, out_bytes, "output buffer", error)
      || !host_reserve (cuda, &cuda->h_in, in_bytes, "pinned input staging", error)
      || !host_reserve (cuda, &cuda->h_out, out_bytes, "pinned output staging", error))
    return false;
  samples = (double *) malloc ((size_t) repeats * sizeof *samples);
  if (samples == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "transfer floor: out of host memory");
  /* Never time on zeros. */
  memset (cuda->h_in.ptr, 0x5a, in_bytes);

  ok = true;
  for (int i = 0; ok && i < warmups + repeats; i++)
    {
      float ms = 0;
      ok = es_cuda_check (cuda, cudaEventRecord (cuda->ev_start, cuda->stream), "event record", error)
           && es_cuda_check (cuda, cudaMemcpyAsync (cuda->d_in.ptr, cuda->h_in.ptr, in_bytes,
                                                    cudaMemcpyHostToDevice, cuda->stream), "upload", error)
           && es_cuda_check (cuda, cudaMemcpyAsync (cuda->h_out.ptr, cuda->d_out.ptr, out_bytes,
                                                    cudaMemcpyDeviceToHost, cuda->stream), "download", error)
           && es_cuda_check (cuda, cudaEventRecord (cuda->ev_done, cuda->stream), "event record", error)
           && es_cuda_check (cuda, cudaEventSynchronize (cuda->ev_done), "transfers", error)
           && es_cuda_check (cuda, cudaEventElapsedTime (&ms, cuda->ev_start, cuda->ev_done), "timing", error);
      if (ok && i >= warmups)
        samples[i - warmups] = ms;
    }
  if (ok)
    *median_ms = median (samples, repeats);
  free (samples);
  return ok;
}
