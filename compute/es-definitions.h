/* SPDX-License-Identifier: MIT */
/* Exact definitions shared by every backend (DESIGN.md §1): one place each. */
#pragma once

#include <stdint.h>
#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* level = floor(v * L / 2^depth); v * L fits in 32 bits for v < 2^16, L <= 256. */
static inline uint32_t
es_quantize_sample (uint32_t v, int levels, int depth)
{
  return (v * (uint32_t) levels) >> depth;
}

/* Below this, a computed entropy is exactly 0. The smallest nonzero local
 * entropy, a window of n ≤ 31² pixels with one pixel of another level, is
 * ((n − 1)·ln(n / (n − 1)) + ln n) / n > 0.0081 nats, so anything under
 * 1e-3 is rounding in H = ln n − (1/n) Σ c ln c of a window that holds one
 * level: writing it as 0 makes such windows exact (not 1e-7 noise that an
 * automatic colour range would stretch into patterns). */
#define ES_ENTROPY_ZERO_BELOW 1e-3

/* The equalization LUT of cv::equalizeHist from a 256-bin histogram of n
 * pixels. Returns 0 when the image has a single value (then it is returned
 * unchanged: the LUT is the identity), 1 otherwise. Float32 arithmetic with
 * round-half-even, exactly as OpenCV does it; the CUDA kernels that build the
 * LUT on the device mirror this function. */
int es_equalize_lut (const uint64_t hist[256], uint64_t n, uint8_t lut[256]);

/* One sharpened sample: sat_u8(round_half_even(c + a * (4c - N - S - E - W))),
 * evaluated as float(c) + a * float(laplacian) with two roundings (no FMA), so
 * that every backend gets the same bits. */
static inline uint8_t
es_sharpen_sample (int c, int laplacian, float amount)
{
  float product = amount * (float) laplacian;
  float value = (float) c + product;
  float r = rintf (value);   /* round half to even in the default FP mode */
  return (uint8_t) (r < 0.0f ? 0.0f : r > 255.0f ? 255.0f : r);
}

#ifdef __cplusplus
}
#endif
