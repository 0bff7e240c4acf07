/* SPDX-License-Identifier: MIT */
/* Internal to the general entropy variant's files (entropy-general.cu, entropy-sort.cu, entropy-slide.cu): a job's parameters, the rule of a window cell, the kernels' launchers. */
#pragma once

#include "entropy-internal.h"

#define GENERAL_BLOCK 128
/* The sliding kernel's c ln c table: round(c ln c · 2^32). */
#define GENERAL_FIX_BITS 32
/* A cell that counts nowhere, in a 16-bit binned frame. */
#define GENERAL_VOID 0xffffu
/* Windows of at most this many cells are sorted (entropy-sort.cu); larger
 * ones slide (entropy-slide.cu). */
#define SMALL_CELLS 32

typedef struct {
  const void *in;
  unsigned in_pitch;
  int width, height;
  bool u16;
  const uint8_t *mask; /* the frame's rows of the mask, or NULL: every pixel counts */
  unsigned mask_pitch;
  const uint16_t *bin_of; /* the bin of every sample value, or NULL: bin = sample (a levels image) */
  const EsSpan *spans;    /* column spans: dy from x0 to x1 at column offset dx = span.dy */
  int n_spans;
  EsBorder border;
  uint32_t border_bin; /* ES_BORDER_CONSTANT */
  uint32_t bins;       /* B */
  bool normalized;
  double unit_scale;              /* es_entropy_unit_scale: 1/ln 2 for bits */
  const unsigned long long *diff; /* round(c ln c · 2^32) differences: D[c] = T[c + 1] − T[c] */
  int n_diffs;
  uint16_t *counts; /* global counts: bin b of thread t at b · threads + t */
  /* The frame's bins, padded by the window's half extents, 16-bit; all
   * ones (the void mark) where a cell counts nowhere. With 65536 bins the
   * mark is also bin 0xffff: only the sort kernel reads such a frame, and
   * it tells the two apart itself. NULL where the sort kernel reads the
   * samples (square windows, bins that are the samples, no mask). For
   * the span-counts kernel, 8-bit where its bins and void mark fit a byte
   * (bin_frame's `bytes`). */
  uint16_t *binned;
  unsigned binned_pitch; /* in bins */
  uint16_t void_mark;    /* a void cell: GENERAL_VOID; for the span-counts kernel B (a mask) or 0 (clip) */
  int half_h, half_w;
  const EsCudaTables *tables;
  unsigned threads; /* threads of the grid */
  float *out;
  unsigned out_pitch;
  int strip;  /* output rows a thread slides down */
  int strips; /* strips of the frame */
  /* Windows of at most SMALL_CELLS cells, for the sort kernel: their
   * cells relative to the centre, and as offsets in the binned frame. */
  int n_cells;
  int cell_offset[32];
  signed char cell_dy[32], cell_dx[32];
} GeneralParams;

/* The bin of the window cell at image row yy, column xx, or −1 when it
 * counts nowhere (outside the image with clip, or masked). */
static __device__ __forceinline__ int
cell_bin (const GeneralParams &p, const uint16_t *bin_of, int yy, int xx)
{
  const int ry = es_border_index (yy, p.height, p.border);
  const int rx = es_border_index (xx, p.width, p.border);

  if (ry < 0 || rx < 0)
    return p.border == ES_BORDER_CONSTANT ? (int) p.border_bin : -1;
  if (p.mask != NULL && __ldg (p.mask + (size_t) ry * p.mask_pitch + rx) == 0)
    return -1;
  const char *row = (const char *) p.in + (size_t) ry * p.in_pitch;
  const uint32_t v = p.u16 ? __ldg ((const uint16_t *) row + rx) : __ldg ((const uint8_t *) row + rx);
  return bin_of != NULL ? (int) bin_of[v] : (int) v;
}

/* entropy-general.cu: bins the frame into cuda->general_binned, padded by
 * the window's half extents, with one row more; 8-bit cells where `bytes`. */
bool es_cuda_general_bin_frame (EsCuda *cuda, const EsJob *job, GeneralParams *p, bool bytes, EsError *error);

/* entropy-sort.cu: windows of at most SMALL_CELLS cells, each one's bins
 * sorted. */
bool es_cuda_general_sort (EsCuda *cuda, const EsJob *job, GeneralParams *p, EsError *error);

/* entropy-ranks.cu: whether the rank kernel computes a job (a full 3×3
 * square of 8-bit samples that are their own bins, no mask): the general
 * variant's dispatch and memory model both ask; and its launch, which
 * reads p's frame, output, tables and bins only. *ran is false where it
 * cannot take the frame (rows not 4-byte aligned, too many strips). */
bool es_cuda_general_ranks_take (const EsJob *job, const EsExtent *extent);
bool es_cuda_general_ranks (EsCuda *cuda, GeneralParams *p, bool *ran, EsError *error);

/* entropy-slide.cu: any window, its histogram slid down strips of rows; and
 * the kernel's shared-memory limit, set once per device. */
bool es_cuda_general_slide (EsCuda *cuda, const EsJob *job, GeneralParams *p, EsError *error);
bool es_cuda_general_slide_init (EsCuda *cuda, EsError *error);
