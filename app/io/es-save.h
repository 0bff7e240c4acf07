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

/* How hard PNG and TIFF exports are compressed: --compression, the
 * window's setting. fast and small trade size for time; a default PNG
 * stays within 1.15× the size of libpng's level 6
 * (docs/performance/files.md, "Encoding PNG"); a fast TIFF is
 * uncompressed, default and small deflate it. */
typedef enum {
  ES_COMPRESSION_FAST,
  ES_COMPRESSION_DEFAULT,
  ES_COMPRESSION_SMALL,
} EsCompression;

#define ES_N_COMPRESSIONS 3
const char *es_compression_name (EsCompression compression); /* "fast", "default", "small" */
bool es_compression_from_name (const char *name, EsCompression *compression);
/* The compression of every PNG and TIFF written from now on, by any thread (the
 * process has one setting, as it has one interrupt). */
void es_save_set_compression (EsCompression compression);
/* What the calling thread's exports use: its own choice while one is set
 * (es_save_set_thread_compression: entroscope.save(compression=), which
 * must not change another thread's exports), else the process's. The
 * encoders read it once, on the thread that calls them. */
EsCompression es_save_get_compression (void);
/* Sets (compression ≥ 0) or clears (−1) the calling thread's own choice. */
void es_save_set_thread_compression (int compression);

/* What a raw 16-bit PNG and a text matrix record about their values. */
typedef struct {
  const char *operation; /* "entropy" */
  int window;            /* 0 when not applicable */
  int levels;            /* 0 when not applicable */
  float amount;          /* sharpen only */
  double clip;           /* CLAHE only, as its clip parameter */
  int tile_columns;      /* CLAHE's grid; 0 when not applicable */
  int tile_rows;
  const char *units; /* "nats", "bits", "normalized", "level", "gray" */
  double unit_scale; /* values are multiplied by this before writing (1/ln 2 for bits) */
  /* Shown values are value_offset + value × unit_scale: 0 for results; an
   * original's samples of a float or signed TIFF stand for their values so
   * (EsImageMeta), which the colorbar and the readout show. */
  double value_offset;
  /* The size of a pixel, which exports record (TIFF resolution, PNG pHYs):
   * the input's (EsImageMeta; its value map is not used here). */
  EsImageMeta pixel_size;
  /* The entropy definition in force, es_job_describe_definition's line
   * ("disk r=5 · symmetric · 256 bins · bits"); empty for other ops. */
  char definition[128];
  /* Some pixels may have no value (NaN: a mask, or a footprint that can
   * lie wholly outside the image), drawn as no-data magenta. */
  bool may_have_no_data;
} EsValueInfo;

/* Calls item (data, key, value) for each fact that every export records
 * about its values, in order: Software, Operation, Window, Levels, Amount,
 * Units, Definition (each only where it applies). */
typedef void (*EsValueInfoItem) (void *data, const char *key, const char *value);
void es_value_info_each (const EsValueInfo *info, EsValueInfoItem item, void *data);

/* 8-bit RGB PNG of the heatmap; with colorbar, a labelled colorbar (ticks,
 * units) is drawn to the right of the image. Without one, the gray map
 * gives a gray PNG of the values' depth: 8 bits for U8, 16 for U16 (over
 * the absolute range of a 16-bit CLAHE result, its values as they are). */
bool es_save_heatmap_png (const char *path, const EsImage *values, const EsColorScale *scale, bool colorbar,
                          const EsValueInfo *info, EsError *error);
/* 16-bit gray PNG: raw values scaled linearly so that lo..hi maps to
 * 0..65535, with tEXt chunks (Software, Operation, Window, Levels, Units,
 * ValueOffset, ValueScale: value = ValueOffset + sample * ValueScale).
 * Where pixels may have no value (info->may_have_no_data, or NaN among
 * the values), lo..hi maps to 0..65534 and NoData says 65535 marks them. */
bool es_save_raw16_png (const char *path, const EsImage *values, double lo, double hi, const EsValueInfo *info,
                        EsError *error);
/* "H W" then H lines of W values printed with %.5f (F32) or %d (U8/U16). */
bool es_save_text_matrix (const char *path, const EsImage *values, const EsValueInfo *info, EsError *error);
/* Gray TIFF of the values as they are (es-tiff-write.c), its strips
 * deflated as es_save_get_compression says (none for fast): F32
 * as 32-bit float (times info->unit_scale), U8 and U16 as 8- and 16-bit;
 * the keys of the PNG tEXt chunks as "Key=value" lines in ImageDescription;
 * BigTIFF when the file could pass 4 GiB. */
bool es_save_tiff (const char *path, const EsImage *values, const EsValueInfo *info, EsError *error);
/* The colour picture of es_save_heatmap_png (the heatmap, with its
 * colorbar when asked), in memory, for a caller that draws over it (the
 * window's timing overlays on slides) before es_save_heatmap_canvas_png. */
typedef struct {
  uint8_t *rgb; /* packed RGB, stride bytes a row; free() */
  int width, height;
  size_t stride;
  int image_x, image_y; /* where the heatmap lies in it */
} EsHeatmapCanvas;

bool es_heatmap_canvas_render (const EsImage *values, const EsColorScale *scale, bool colorbar, const EsValueInfo *info,
                               EsHeatmapCanvas *canvas, EsError *error);
/* An RGB PNG of the canvas with the tEXt chunks of es_save_heatmap_png:
 * with nothing drawn over a canvas with a colorbar, the same file. */
bool es_save_heatmap_canvas_png (const char *path, const EsHeatmapCanvas *canvas, const EsColorScale *scale,
                                 const EsValueInfo *info, EsError *error);
/* An 8-bit RGB PNG of packed pixels (3 bytes each), written atomically. */
bool es_save_rgb_png (const char *path, const uint8_t *rgb, int width, int height, size_t stride, EsError *error);

/* Test hook: when set, the N-th write into an atomic file fails (ENOSPC). */
void es_atomic_file_inject_failure (int nth_write);
