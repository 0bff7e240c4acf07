/* SPDX-License-Identifier: MIT */
/* Internal to the CPU backend and its tests: row bands, the ring of mapped rows, and the AVX2 dispatch macros. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../es-error.h"
#include "../es-image.h"
#include "../es-ops.h"

/* Hot row loops get an AVX2 clone picked at load time, so that a generic
 * x86-64 build still vectorizes them (rintf becomes vroundps) on CPUs that
 * have it. The small-window entropy path is written for AVX2 directly.
 * target_clones dispatches through an ifunc, which cannot be inlined, so it
 * belongs on functions that do a whole row per call, never on the small
 * helpers below. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define ES_HOT __attribute__ ((target_clones ("avx2", "default")))
#define ES_HAVE_AVX2_PATH 1
#define ES_AVX2 __attribute__ ((target ("avx2")))
#else
#define ES_HOT
#endif
/* Clang wants a multiversioned function declared so wherever it is declared
 * before a use; GCC wants the attribute on the definition only (on the
 * declaration too, its ifunc resolver is emitted twice and the link fails). */
#if defined(__clang__)
#define ES_HOT_DECL ES_HOT
#else
#define ES_HOT_DECL
#endif

/* ---- bands ------------------------------------------------------------------ */

/* Every CPU operation works in bands of rows, mapping each band's rows (and
 * its halo) into per-thread buffers, so that its working memory is bounded
 * by the bands and the threads, not by the image. rows = 0 (the default)
 * lets the backend choose from the image and the thread count; tests choose
 * small bands so that band edges fall inside the windows. Set it before
 * running jobs, not during one. */
void es_cpu_set_band_rows (int rows);

/* The rows of each band of an image `height` rows high: the override set
 * above, else about eight bands a thread of at least 16 rows. */
int es_cpu_band_rows (int height);

static inline int
es_cpu_band_count (int height, int rows)
{
  return (height + rows - 1) / rows;
}

/* One working buffer for every thread, `per_thread` bytes each, starting on
 * 64 bytes; NULL (and `error` set, naming `what`) when there is no memory
 * for it. */
uint8_t *es_cpu_scratch_alloc (size_t per_thread, int threads, const char *what, EsError *error);

/* Cancellation and progress: every runner calls es_control_begin with its
 * rows, polls es_control_cancelled before each row (a cancelled job stops
 * within a row per thread), reports each row with es_control_advance, and
 * returns es_cpu_finish: false with ES_ERROR_CANCELLED once cancelled.
 * es_cpu_run_bands does all but the row polling and reporting for the
 * operations that work in bands. */
bool es_cpu_finish (EsControl *control, EsError *error);

/* What an operation that works in bands gives es_cpu_run_bands: its
 * per-thread scratch and the work of one band. */
typedef struct {
  const char *what;     /* names the scratch in an out-of-memory error */
  size_t scratch_bytes; /* a thread's scratch, 0 when the bands need none */
  const void *context;  /* the job's read-only state: tables, images */
  /* Once per thread before its first band, may be NULL: fills the parts of
   * the scratch that no band overwrites (padding, constant rows). */
  void (*start_thread) (const void *context, uint8_t *scratch);
  /* Rows y0..y1−1, each polled for cancellation and reported with
   * es_control_advance. A band depends on nothing an earlier band left in
   * the scratch: any thread may have run the band before it. */
  void (*band) (const void *context, uint8_t *scratch, int y0, int y1, EsControl *control);
} EsCpuBands;

/* Runs `work` over the rows 0..height−1 of a job: es_control_begin with
 * height rows, one scratch of work->scratch_bytes (64-byte aligned) per
 * OpenMP thread, the bands handed to threads as they come free, no band
 * started once the job is cancelled, then es_cpu_finish. False with
 * `error` set when there is no memory for the scratch or the job was
 * cancelled. */
bool es_cpu_run_bands (const EsCpuBands *work, int height, EsControl *control, EsError *error);

/* ---- entropy methods -------------------------------------------------------- */

/* The CPU computes local entropy in one of four ways, chosen per job from
 * the window and the level count by a cost model (compute/cpu/entropy.c).
 * Tests and benchmarks may force one; a forced method that cannot run the
 * job (shuffle beyond 15×15, with 255 or 256 levels or without AVX2;
 * columns without AVX2 or on rows too wide for its per-thread counts; sort
 * on windows other than 5×5 or without AVX-512)
 * falls back to the model's choice. Set it before running jobs, not during
 * one. */
typedef enum {
  ES_CPU_ENTROPY_AUTO,    /* the cost model decides */
  ES_CPU_ENTROPY_SLIDING, /* per-row sliding histogram: O(k) scalar updates a pixel */
  ES_CPU_ENTROPY_COLUMNS, /* column histograms: O(L) a pixel, whatever the window */
  ES_CPU_ENTROPY_SHUFFLE, /* byte shuffles over 32 pixels (AVX2) or 16 pixels × 4 levels (AVX-512): small windows */
  ES_CPU_ENTROPY_SORT,    /* AVX-512 sorting networks, 5×5 only: the same cost for any level count */
  ES_CPU_N_ENTROPY_METHODS
} EsCpuEntropyMethod;

void es_cpu_set_entropy_method (EsCpuEntropyMethod method);
/* The method a job on an image this wide, with this window and level
 * count, runs with now. */
EsCpuEntropyMethod es_cpu_entropy_method (int width, int window, int levels);
/* "sliding", "columns", "shuffle", "sort" ("auto" for ES_CPU_ENTROPY_AUTO). */
const char *es_cpu_entropy_method_name (EsCpuEntropyMethod method);
/* Where the CPU has AVX-512 (F, BW, VL, DQ, VBMI, VNNI) the shuffle method
 * runs an AVX-512 loop, bit for bit the AVX2 loop's result, and the sort
 * method can run. Tests and benchmarks may turn AVX-512 off to cover the
 * AVX2 paths (so may ES_CPU_AVX512=0 in the environment). Set it before
 * running jobs, not during one. */
void es_cpu_set_entropy_avx512 (bool allowed);
/* Whether the AVX-512 entropy loops run now. */
bool es_cpu_entropy_avx512 (void);

/* Entropy over a 3-D window (es_definition_is_3d) on a volume or on a 2-D
 * image (a volume of one plane): es_cpu_entropy hands such jobs here. */
bool es_cpu_entropy_3d (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);

/* CLAHE's skimage and matlab presets (EsClaheDefinition.kind): es_cpu_clahe
 * hands such jobs here. */
bool es_cpu_clahe_preset (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);

/* ---- row mapping ------------------------------------------------------------ */

typedef enum {
  ES_CPU_MAP_LEVELS, /* quantization levels (entropy, quantize) */
  ES_CPU_MAP_VIEW,   /* the 8-bit view (equalize, sharpen) */
} EsCpuMap;

/* Input row y as u8 in dst (width bytes): its levels (with `levels` levels)
 * or its 8-bit view. Levels images already hold levels, which also serve as
 * their 8-bit view. */
ES_HOT_DECL void es_cpu_map_row (const EsImage *in, int y, EsCpuMap kind, int levels, uint8_t *dst);

/* Whether the input's rows already are what es_cpu_map_row would make of
 * them (8-bit samples for the view, a u8 levels image for levels). */
static inline bool
es_cpu_map_is_identity (const EsImage *in, EsCpuMap kind)
{
  return in->format == ES_FORMAT_U8 && (in->levels || (kind == ES_CPU_MAP_VIEW && es_image_maxval (in) == 255));
}

/* Row y mapped to u8: the input's own row when it already is one, else
 * `buffer` filled by es_cpu_map_row. */
static inline const uint8_t *
es_cpu_source_row (const EsImage *in, int y, EsCpuMap kind, int levels, uint8_t *buffer)
{
  if (es_cpu_map_is_identity (in, kind))
    return es_image_row (in, y);
  es_cpu_map_row (in, y, kind, levels, buffer);
  return buffer;
}

/* ---- the ring of rows --------------------------------------------------------
 * These run once per row inside the band loops; they stay inline here so
 * that each operation's loop compiles as it did when all lived in one file. */

/* A window of consecutive mapped rows kept in `size` slots of one thread's
 * buffer: row j lives in slot j mod size, so a band walks down the image
 * holding only the rows its window reaches. */
typedef struct {
  uint8_t *buffer;
  size_t stride;
  int size;
  int next; /* the next row to map */
  const uint8_t *rows[ES_FAST_WINDOW_MAX + 1];
} EsCpuRing;

/* Starts a band at row `first`; nothing mapped for an earlier band is
 * reused, so bands are independent whatever thread ran the one before. */
static inline void
es_cpu_ring_start (EsCpuRing *ring, int first)
{
  ring->next = first;
  memset (ring->rows, 0, sizeof ring->rows);
}

/* Maps the rows up to `last` that are not mapped yet. */
static inline void
es_cpu_ring_fill (EsCpuRing *ring, const EsImage *in, EsCpuMap kind, int levels, int last)
{
  for (; ring->next <= last; ring->next++)
    {
      int slot = ring->next % ring->size;
      ring->rows[slot] = es_cpu_source_row (in, ring->next, kind, levels, ring->buffer + (size_t) slot * ring->stride);
    }
}

/* Maps row y into its slot, copying even where the input's row would do. */
static inline const uint8_t *
es_cpu_ring_copy (EsCpuRing *ring, const EsImage *in, int y, EsCpuMap kind, int levels)
{
  uint8_t *slot = ring->buffer + (size_t) (y % ring->size) * ring->stride;

  es_cpu_map_row (in, y, kind, levels, slot);
  ring->rows[y % ring->size] = slot;
  ring->next = y + 1;
  return slot;
}

static inline const uint8_t *
es_cpu_ring_row (const EsCpuRing *ring, int y)
{
  return ring->rows[y % ring->size];
}
