/* SPDX-License-Identifier: MIT */
/* Encoders (colormapped PNG, raw 16-bit PNG, text matrix) and atomic files. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "es-colormap.h"
#include "es-control.h"
#include "es-image.h"

/* Atomic output: a temporary file in the target's folder, written, flushed,
 * fsync'd, renamed over the target, then the folder fsync'd. Any failure
 * removes the temporary file and leaves an existing target untouched. */
typedef struct EsAtomicFile EsAtomicFile;
EsAtomicFile *es_atomic_file_open (const char *path, EsError *error);
FILE *es_atomic_file_stream (EsAtomicFile *file);
bool es_atomic_file_commit (EsAtomicFile *file, EsError *error); /* frees file */
void es_atomic_file_abort (EsAtomicFile *file);                  /* frees file */
/* Once `control` is cancelled (a signal handler may do it), every atomic
 * file of the process stops taking writes and fails to commit with
 * ES_ERROR_CANCELLED, removing its temporary file: an interrupted program
 * leaves no partial output. NULL turns it off. */
void es_atomic_file_set_interrupt (EsControl *control);

/* What a raw 16-bit PNG and a text matrix record about their values. */
typedef struct {
  const char *operation;  /* "entropy" */
  int window;             /* 0 when not applicable */
  int levels;             /* 0 when not applicable */
  float amount;           /* sharpen only */
  const char *units;      /* "nats", "bits", "level", "gray" */
  double unit_scale;      /* values are multiplied by this before writing (1/ln 2 for bits) */
} EsValueInfo;

/* 8-bit RGB PNG of the heatmap; with colorbar, a labelled colorbar (ticks,
 * units) is drawn to the right of the image. */
bool es_save_heatmap_png (const char *path, const EsImage *values, const EsColorScale *scale,
                          bool colorbar, const EsValueInfo *info, EsError *error);
/* 16-bit gray PNG: raw values scaled linearly so that lo..hi maps to
 * 0..65535, with tEXt chunks (Software, Operation, Window, Levels, Units,
 * ValueOffset, ValueScale: value = ValueOffset + sample * ValueScale). */
bool es_save_raw16_png (const char *path, const EsImage *values, double lo, double hi,
                        const EsValueInfo *info, EsError *error);
/* "H W" then H lines of W values printed with %.5f (F32) or %d (U8/U16). */
bool es_save_text_matrix (const char *path, const EsImage *values, const EsValueInfo *info,
                          EsError *error);
/* An 8-bit RGB PNG of packed pixels (3 bytes each), written atomically. */
bool es_save_rgb_png (const char *path, const uint8_t *rgb, int width, int height, size_t stride,
                      EsError *error);

/* Test hook: when set, the N-th write into an atomic file fails (ENOSPC). */
void es_atomic_file_inject_failure (int nth_write);
