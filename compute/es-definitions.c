/* SPDX-License-Identifier: MIT */
/* The equalization LUT of DESIGN.md §1, shared by the CPU backend and CUDA's banded runs. */
#include "es-definitions.h"

int
es_equalize_lut (const uint64_t hist[256], uint64_t n, uint8_t lut[256])
{
  int first = 0;
  uint64_t sum = 0;
  float scale;

  while (first < 255 && hist[first] == 0)
    first++;
  if (hist[first] == n)
    {
      for (int k = 0; k < 256; k++)
        lut[k] = (uint8_t) k;
      return 0;
    }
  /* As cv::equalizeHist: float32 scale, the count converted to float, then
   * rounded half to even and saturated. */
  scale = 255.0f / (float) (n - hist[first]);
  for (int k = 0; k <= first; k++)
    lut[k] = 0;
  for (int k = first + 1; k < 256; k++)
    {
      float value;

      sum += hist[k];
      value = rintf ((float) sum * scale);
      lut[k] = (uint8_t) (value > 255.0f ? 255.0f : value);
    }
  return 1;
}
