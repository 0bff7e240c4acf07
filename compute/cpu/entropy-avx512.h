/* SPDX-License-Identifier: MIT */
/* Internal to the AVX-512 entropy loops: their target and the finish of 16 window sums. */
#pragma once

#include "entropy-internal.h"

#ifdef ES_HAVE_AVX512_PATH
#include <immintrin.h>

#define ES_AVX512 __attribute__ ((target ("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512vnni")))

/* finish_value_masked for the 16 sums of pixels x..x+15 (those below w are
 * stored): a multiplication and a subtraction, never fused, since the
 * scalar and AVX2 finishes round the product; then float, 0 below the
 * threshold. */
static inline __attribute__ ((always_inline)) ES_AVX512 void
es_finish16_avx512 (__m512i sum, __m512d ln_n, __m512d inv_n, float *dst, int x, int w)
{
  const __m512d zero_below = _mm512_set1_pd (ES_ENTROPY_ZERO_BELOW);
  __m512d h0 = _mm512_cvtepi32_pd (_mm512_castsi512_si256 (sum));
  __m512d h1 = _mm512_cvtepi32_pd (_mm512_extracti64x4_epi64 (sum, 1));
  __m256 lo, hi;
  __m512 out;

  h0 = _mm512_sub_round_pd (ln_n, _mm512_mul_round_pd (h0, inv_n, _MM_FROUND_CUR_DIRECTION), _MM_FROUND_CUR_DIRECTION);
  h1 = _mm512_sub_round_pd (ln_n, _mm512_mul_round_pd (h1, inv_n, _MM_FROUND_CUR_DIRECTION), _MM_FROUND_CUR_DIRECTION);
  lo = _mm512_maskz_cvtpd_ps (_mm512_cmp_pd_mask (h0, zero_below, _CMP_GE_OQ), h0);
  hi = _mm512_maskz_cvtpd_ps (_mm512_cmp_pd_mask (h1, zero_below, _CMP_GE_OQ), h1);
  out = _mm512_insertf32x8 (_mm512_castps256_ps512 (lo), hi, 1);
  if (x + 16 <= w)
    _mm512_storeu_ps (dst + x, out);
  else if (x < w)
    _mm512_mask_storeu_ps (dst + x, (__mmask16) ((1u << (w - x)) - 1), out);
}
#endif
