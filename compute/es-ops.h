/* SPDX-License-Identifier: MIT */
/* The operation table: what each operation reads, writes and needs, declared once for every layer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "es-control.h"
#include "es-error.h"
#include "es-image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ES_OP_QUANTIZE, /* U8/U16 in -> U8 levels out */
  ES_OP_ENTROPY,  /* U8/U16 (or levels) in -> F32 nats out */
  ES_OP_EQUALIZE, /* U8/U16 in -> U8 out, bit-identical to cv::equalizeHist */
  ES_OP_SHARPEN,  /* U8/U16 in -> U8 out */
  ES_OP_CLAHE,    /* U8 -> U8, U16 -> U16, bit-identical to cv::CLAHE::apply */
  ES_N_OPS
} EsOp;

/* ---- parameters -------------------------------------------------------------
 * Every tunable of a job, declared once: the job validator, the CLI's options
 * and --help, the window's side panel and the GSettings schema (checked by a
 * test) all follow this table. The limits are macros too because kernels size
 * static tables by them. */

#define ES_WINDOW_MIN 3
#define ES_WINDOW_MAX 255
#define ES_WINDOW_DEFAULT 5
#define ES_LEVELS_MIN 2
#define ES_LEVELS_MAX 65536
#define ES_LEVELS_DEFAULT 16
/* The default definition's fast kernels (square, clip, depth binning, no
 * mask) size their static tables by these; larger jobs take the general
 * kernels (es_entropy_definition_is_default). Quantize writes U8 levels, so
 * it keeps L ≤ ES_FAST_LEVELS_MAX. */
#define ES_FAST_WINDOW_MAX 31
#define ES_FAST_LEVELS_MAX 256
/* Sides of a rectangle or footprint (odd) and the disk's radius. */
#define ES_SIDE_MAX 255
#define ES_RADIUS_MAX 127
/* The same for 3-D windows (box, 3-D footprint) and the ball's radius: a
 * 63³ window holds 250047 cells. */
#define ES_SIDE_3D_MAX 63
#define ES_RADIUS_3D_MAX 31
/* Beyond 10 every pixel whose 4-neighbour Laplacian exceeds 26 gray levels
 * saturates, so the result is a black-and-white edge map; 0 is the identity. */
#define ES_AMOUNT_MIN 0.0
#define ES_AMOUNT_MAX 10.0
#define ES_AMOUNT_DEFAULT 1.0
/* CLAHE's clip limit is OpenCV's clipLimit: a multiple of a tile's mean bin
 * count (0: no clipping). At 65536 no bin of a 16-bit tile can exceed the
 * limit, so a larger value would change nothing. */
#define ES_CLIP_MIN 0.0
#define ES_CLIP_MAX 65536.0
#define ES_CLIP_DEFAULT 40.0
/* CLAHE's tile grid, columns and rows (OpenCV's tileGridSize). OpenCV sets
 * no bound; 64 keeps a 16-bit job's LUTs (tiles × 65536 × 2 bytes) within
 * 512 MiB and is far past any grid in use (8×8 is the default). */
#define ES_TILES_MIN 1
#define ES_TILES_MAX 64
#define ES_TILES_DEFAULT 8

typedef enum {
  ES_PARAM_WINDOW,
  ES_PARAM_LEVELS,
  ES_PARAM_AMOUNT,
  ES_PARAM_CLIP,
  ES_PARAM_TILE_COLUMNS,
  ES_PARAM_TILE_ROWS,
  ES_N_PARAMS
} EsParamId;

#define ES_PARAM_BIT(id) (1u << (id))

typedef struct {
  EsParamId id;
  const char *name;        /* "window": CLI option, settings key, export metadata */
  const char *title;       /* "Window size" */
  const char *description; /* one line, for --help and tooltips */
  const char *metavar;     /* "K", for --help */
  double min, max, default_value;
  double step; /* the window's increment (2 for odd integers) */
  int digits;  /* decimals a value is shown with; 0: an integer */
  bool odd;    /* odd integers only */
} EsParam;

const EsParam *es_param (EsParamId id);
/* By name; '_' stands for '-' ("tile_columns", a Python keyword). */
bool es_param_from_name (const char *name, EsParamId *id);
/* Whether value is allowed: in range, an integer where digits is 0, odd
 * where odd is set, never NaN. The message names the parameter and its range. */
bool es_param_check (const EsParam *param, double value, EsError *error);
/* "odd, 3..31 (default 5)" or "0..10 (default 1)": what --help says. */
void es_param_describe_range (const EsParam *param, char *text, size_t size);

/* ---- entropy definitions (DESIGN.md §1) --------------------------------------
 * What "local entropy" means: the window's shape, what counts beyond the
 * border, how samples become bins, the units, and which pixels count at all.
 * All zero is today's definition: a K×K square (K = EsJob.window) clipped to
 * the image, depth binning, nats, no mask. */

/* The 2-D windows, then the 3-D ones (es_definition_is_3d). */
typedef enum {
  ES_SHAPE_SQUARE,
  ES_SHAPE_RECT,
  ES_SHAPE_DISK,
  ES_SHAPE_FOOTPRINT,
  ES_SHAPE_BOX,
  ES_SHAPE_BALL,
  ES_N_SHAPES
} EsShape;
/* The 2-D shapes are those before the first 3-D one. */
#define ES_N_SHAPES_2D ES_SHAPE_BOX
/* On a row `a b c d`: clip counts only in-image pixels; symmetric
 * `d c b a | a b c d | d c b a`; mirror `d c b | a b c d | c b a`;
 * replicate `a a | a b c d | d d`; constant `v v | a b c d | v v`. */
typedef enum {
  ES_BORDER_CLIP,
  ES_BORDER_SYMMETRIC,
  ES_BORDER_MIRROR,
  ES_BORDER_REPLICATE,
  ES_BORDER_CONSTANT,
  ES_N_BORDERS
} EsBorder;
/* Planes map in z exactly as rows and columns do (DESIGN.md §1).
 * depth: floor(v·L / 2^depth); range: clamp(floor((v − LO)·L / (HI − LO + 1)), 0, L − 1);
 * minmax: range with the image's own (a volume's: all its planes') min and max; exact: bin = v (2^depth bins);
 * byte: floor(u·L / 256) of the 8-bit view u = round(v·255 / maxval)
 * (es_sample_to_u8; MATLAB's im2uint8), for the matlab and fiji presets. */
typedef enum {
  ES_BINNING_DEPTH,
  ES_BINNING_RANGE,
  ES_BINNING_MINMAX,
  ES_BINNING_EXACT,
  ES_BINNING_BYTE,
  ES_N_BINNINGS
} EsBinning;

/* A window given as an image: odd sides ≤ ES_SIDE_MAX, row-major, nonzero = in;
 * its centre is the centre cell. With planes > 1 a 3-D window: odd sides
 * ≤ ES_SIDE_3D_MAX, planes of height × width cells one after the other. */
typedef struct {
  int width, height;
  const uint8_t *cells;
  int planes; /* 0 or 1: a 2-D footprint */
} EsFootprint;

typedef struct {
  EsShape shape;
  int height, width;            /* ES_SHAPE_RECT: odd, 1..ES_SIDE_MAX; ES_SHAPE_BOX: odd, 1..ES_SIDE_3D_MAX */
  int planes;                   /* ES_SHAPE_BOX: its depth D, odd, 1..ES_SIDE_3D_MAX */
  int radius;                   /* ES_SHAPE_DISK: x² + y² ≤ r², 0..ES_RADIUS_MAX;
                                   * ES_SHAPE_BALL: z² + y² + x² ≤ r², 0..ES_RADIUS_3D_MAX */
  const EsFootprint *footprint; /* ES_SHAPE_FOOTPRINT (borrowed) */
  EsBorder border;
  uint32_t border_value; /* ES_BORDER_CONSTANT: a sample value, binned like any sample */
  EsBinning binning;
  uint32_t range_lo, range_hi; /* ES_BINNING_RANGE; for MINMAX the engine's gate fills them
                                   * from the image and hands the backends ES_BINNING_RANGE */
  bool normalized;             /* H / ln(min(B, n)); else nats, or bits where `bits` is set */
  bool bits;                   /* H / ln 2, applied by the kernels as they store (ignored when normalized) */
  const EsImage *mask;         /* U8, the input's size (and planes), nonzero = counted; NULL = every pixel */
} EsEntropyDefinition;

/* Whether the window is 3-D: a box, a ball or a footprint of several
 * planes. Over a volume it counts cells of neighbouring planes; a 2-D
 * window over a volume is computed plane by plane; a 3-D window over a
 * 2-D image treats it as a volume of one plane. */
bool es_definition_is_3d (const EsEntropyDefinition *d);

/* Names of the parts, for options, settings and metadata: "square", "rect",
 * "disk", "footprint", "box", "ball"; "clip", "symmetric", "mirror", "replicate",
 * "constant"; "depth", "range", "minmax", "exact", "byte". */
const char *es_shape_name (EsShape shape);
const char *es_border_name (EsBorder border);
const char *es_binning_name (EsBinning binning);
bool es_border_from_name (const char *name, EsBorder *border);
bool es_binning_from_name (const char *name, EsBinning *binning);

/* ---- CLAHE definitions (DESIGN.md §1) ------------------------------------------
 * Which peer's CLAHE a job computes. Zero is OpenCV's createCLAHE().apply(),
 * the operation's own definition; the others are the presets of the same
 * names, computed on the CPU only. */
typedef enum {
  ES_CLAHE_OPENCV,  /* cv::CLAHE: clip a multiple of the mean bin, reflect-101, output in the input's depth */
  ES_CLAHE_SKIMAGE, /* skimage.exposure.equalize_adapthist 0.19: clip a fraction, F32 output in 0..1 */
  ES_CLAHE_MATLAB,  /* adapthisteq as documented: clip a fraction, 'uniform', output in the input's depth */
  ES_N_CLAHE_KINDS
} EsClaheKind;

#define ES_CLAHE_BINS_MIN 2
#define ES_CLAHE_BINS_MAX 65536
#define ES_CLAHE_BINS_DEFAULT 256

typedef struct {
  EsClaheKind kind;
  /* ES_CLAHE_SKIMAGE: kernel_size in pixels, rows × columns; 0: from the
   * grid, max(side / tiles, 1), which at 8 × 8 is skimage's default. */
  int kernel_height, kernel_width;
  int bins; /* skimage's nbins, MATLAB's NBins; 0: 256. OpenCV's bins are the depth's. */
} EsClaheDefinition;

const char *es_clahe_kind_name (EsClaheKind kind); /* "opencv", "skimage", "matlab" */

/* ---- jobs ------------------------------------------------------------------ */

typedef struct {
  EsOp op;
  int window;                     /* ES_PARAM_WINDOW */
  int levels;                     /* ES_PARAM_LEVELS */
  float amount;                   /* ES_PARAM_AMOUNT */
  const char *variant;            /* CUDA kernel variant id; NULL = the default */
  EsEntropyDefinition definition; /* ES_OP_ENTROPY only; zero = the default definition */
  double clip;                    /* ES_PARAM_CLIP: a double, as OpenCV's clipLimit, so that 0.01 means the same */
  int tile_columns, tile_rows;    /* ES_PARAM_TILE_COLUMNS, ES_PARAM_TILE_ROWS */
  EsClaheDefinition clahe;        /* ES_OP_CLAHE only; zero = OpenCV's */
} EsJob;

#define ES_JOB_INIT(operation)                                                                                         \
  {                                                                                                                    \
    (operation), ES_WINDOW_DEFAULT, ES_LEVELS_DEFAULT, (float) ES_AMOUNT_DEFAULT, NULL, { 0 }, ES_CLIP_DEFAULT,        \
      ES_TILES_DEFAULT, ES_TILES_DEFAULT,                                                                              \
    {                                                                                                                  \
      0                                                                                                                \
    }                                                                                                                  \
  }

double es_job_get_param (const EsJob *job, EsParamId id);
void es_job_set_param (EsJob *job, EsParamId id, double value);

/* Checks the operation and every parameter it uses against the table, and an
 * entropy job's definition (shape sizes, range, footprint); the mask's size
 * is checked against the input by the engine. The engine does this once per
 * run, at its gate; the backends assert. */
bool es_job_validate (const EsJob *job, EsError *error);

/* Whether the job computes today's definition (square ≤ ES_FAST_WINDOW_MAX,
 * clip, depth binning, L ≤ ES_FAST_LEVELS_MAX, nats or bits, no mask): the
 * fast kernels' domain (they compute nats, and scale a job in bits after
 * them). Always true for the other operations. */
bool es_job_is_default_definition (const EsJob *job);
/* Whether the output depends on the whole image: the op's whole_image
 * (a statistic) or image_grid (its tiles), or an entropy job with minmax
 * binning. Banded and chunked runs must use this, not EsOpInfo.whole_image
 * alone. */
bool es_job_whole_image (const EsJob *job);
/* Minmax binning becomes range binning with the image's min and max (an
 * entropy job; other jobs are left as they are). The engine's gate does this,
 * so that bands and chunks see one statistic of the whole image. */
void es_job_resolve_minmax (EsJob *job, const EsImage *in);
/* One line naming the definition in force, shared by the CLI, exports and the
 * window: "disk r=5 · symmetric · 256 bins · bits" ("box 3×5×5", "ball r=3",
 * "footprint 3×5×5" for 3-D windows). `units` is the display
 * unit ("nats", "bits"; ignored when normalized). A CLAHE preset: "like
 * skimage · 256 bins". Other ops: "". */
void es_job_describe_definition (const EsJob *job, const char *units, char *text, size_t size);
/* Turns a marked word or format of the definition line into the reader's
 * language (gettext in the window); it must keep a format's conversions. */
typedef const char *(*EsTranslate) (const char *text) __attribute__ ((format_arg (1)));
/* es_job_describe_definition with its words through `translate`, for a
 * line that people read; files and the CLI keep the words above (NULL). */
void es_job_describe_definition_in (const EsJob *job, const char *units, EsTranslate translate, char *text,
                                    size_t size);
/* es_param_describe_range in the reader's language: the CLI's help and
 * usage errors, the window's tooltips (NULL: English). */
void es_param_describe_range_in (const EsParam *param, EsTranslate translate, char *text, size_t size);

/* The text forms of the CLI and the Python module: "9x5" (or "9×5", odd
 * sides ≤ ES_SIDE_MAX) sets a rectangle; "clip" … "constant:V"; "depth",
 * "range:LO:HI", "minmax", "exact", "byte". False, leaving d as it was, on
 * anything else. es_definition_parse_uint: digits only, within lo..hi. */
bool es_definition_parse_uint (const char *text, unsigned long lo, unsigned long hi, unsigned long *value);
bool es_definition_parse_rect (const char *text, EsEntropyDefinition *d);
/* "DxHxW" (or with "×"; odd sides ≤ ES_SIDE_3D_MAX) sets a box. */
bool es_definition_parse_box (const char *text, EsEntropyDefinition *d);
bool es_definition_parse_border (const char *text, EsEntropyDefinition *d);
bool es_definition_parse_binning (const char *text, EsEntropyDefinition *d);
/* The other way: the CLI options that give job's definition beyond its
 * parameters, " --disk=3 --border=symmetric --binning=exact" (with a
 * leading space each; "" for the default definition). False where a
 * command line cannot give all of it: a footprint or mask (their files
 * are not known here), a CLAHE preset (entroscope-cli bench's --like is
 * entropy's). */
bool es_job_format_definition_options (const EsJob *job, char *text, size_t size);

/* ---- presets ------------------------------------------------------------------- */

/* A peer's definition of one operation (DESIGN.md §1 has the tables and
 * their sources): what `--like NAME`, Python's like= and the window's preset
 * menu set. The rows of one operation lie together in one table, so that a
 * layer lists an operation's presets without knowing which it has.
 * Entropy's: the window is the preset's default shape; units is the display
 * unit it implies ("bits"). CLAHE's: the definition, and the clip limit and
 * grid of the peer's defaults. */
typedef struct {
  EsOp op;
  const char *name;   /* "matlab" */
  const char *title;  /* "MATLAB entropyfilt" */
  EsShape shape;      /* ES_SHAPE_SQUARE (window) or ES_SHAPE_DISK (radius) */
  int window, radius; /* 0: keep the job's own */
  EsBorder border;
  EsBinning binning;
  int levels; /* 0: not used by the binning */
  const char *units;
  EsClaheKind clahe; /* ES_OP_CLAHE */
  double clip;       /* ES_OP_CLAHE: the peer's default clip limit */
} EsPreset;

/* The presets of one operation (none: *n = 0). */
const EsPreset *es_presets (EsOp op, size_t *n);
const EsPreset *es_preset_find (EsOp op, const char *name);
/* "matlab, skimage or fiji": the op's preset names, for messages. */
void es_presets_describe (EsOp op, char *text, size_t size);
/* Sets the job's definition to the preset's (entropy: border, binning,
 * levels and, unless keep_shape, the window and shape; CLAHE: the
 * definition, clip limit and an 8 × 8 grid). A caller that lets explicit
 * parameters win sets them again afterwards (es_job_set_param). */
void es_preset_apply (const EsPreset *preset, EsJob *job, bool keep_shape);

/* ---- memory models -------------------------------------------------------------
 * The bytes a run moves, counted from its kernels' code: every CUDA variant
 * (EsVariant.memory) and every CPU runner (EsOpInfo.cpu_memory) has a model
 * beside the code it describes, so that the achieved bandwidth of a run is
 * its modelled bytes over its kernel time. DESIGN.md §3 says what they
 * count and what they assume of the caches. */

/* What a run computes on, for the models: the input's geometry and samples. */
typedef struct {
  int width, height;
  int planes;      /* > 1 only for a volumetric job (a 3-D window): 2-D jobs run plane by plane */
  EsFormat format; /* ES_FORMAT_U8 or ES_FORMAT_U16 */
  int depth;       /* significant bits of a sample */
  int levels;      /* a levels image's own levels (EsImage.levels), else 0 */
} EsExtent;

/* The extent of `in` as a run sees it (every plane). */
EsExtent es_extent_of (const EsImage *in);

/* Pixels (voxels) of an extent. */
static inline double
es_extent_pixels (const EsExtent *e)
{
  return (double) e->width * (double) e->height * (double) (e->planes > 1 ? e->planes : 1);
}

typedef struct {
  double read_bytes, write_bytes; /* through device memory (CUDA: DRAM) or main memory (CPU) */
  /* Through shared memory, for kernels whose shared-memory pipe is the
   * bound (table lookups, counts); 0 where the model does not count it. */
  double shared_bytes;
} EsTraffic;

/* Fills `traffic` for a valid job on `extent`; a pure function of both. */
typedef void (*EsMemoryModel) (const EsJob *job, const EsExtent *extent, EsTraffic *traffic);

/* ---- operations -------------------------------------------------------------- */

/* A backend's implementation of one operation. `out` is already allocated
 * with the op's output format and the input's size, and the job is valid.
 * It polls `control` (may be NULL) between bands and reports progress; once
 * cancelled it returns false with ES_ERROR_CANCELLED. */
typedef bool (*EsCpuRunner) (const EsJob *job, const EsImage *in, EsImage *out, EsControl *control, EsError *error);

/* The CUDA entry of an operation: its variant table and launchers
 * (compute/cuda/es-cuda.h); NULL in a build without CUDA. */
typedef struct EsCudaOp EsCudaOp;

/* The two passes of an operation whose output depends on statistics of
 * the tiles of a grid that the image's own size places (CLAHE's clipped
 * histograms): its halo is a tile, not a count of rows, since a pixel
 * blends the maps of the tiles around it, and each map counts every row of
 * its tile (and, at the bottom and right, rows mirrored into the padding).
 * So a banded run first adds every band's input rows to the tiles'
 * statistics, then builds the maps once, then computes any band of output
 * rows from its own input rows and the maps, byte for byte as the whole
 * run. The state holds the statistics and maps, never the image. */
typedef struct EsTileState EsTileState;

typedef struct {
  /* Whether the passes compute `job` (NULL: every job of the operation). */
  bool (*takes) (const EsJob *job);
  /* For a width × height image of `format` (the job validated). */
  EsTileState *(*begin) (const EsJob *job, int width, int height, EsFormat format, EsError *error);
  /* Pass 1: input rows [y0, y0 + rows->height) of the image, each row once,
   * in bands of any height, in any order, from one thread at a time. */
  bool (*add_rows) (EsTileState *state, const EsImage *rows, int y0, EsControl *control, EsError *error);
  /* Between the passes, once every row is in: the tiles' maps. */
  bool (*finish) (EsTileState *state, EsControl *control, EsError *error);
  /* The statistics as *n counts, until finish: for passes split between
   * processes (entroscope.dask's chunks). The counts of states of one job
   * that added disjoint rows add up, bin by bin, to those of one state
   * that added them all; a fresh state given that sum (written here)
   * finishes as that one would. */
  int *(*counts) (EsTileState *state, size_t *n);
  /* Pass 2: output rows [y0, y0 + rows->height) into `out` (as many rows,
   * the job's output format) from the same input rows; bands in any order,
   * concurrently. */
  bool (*apply_rows) (const EsTileState *state, const EsImage *rows, int y0, EsImage *out, EsControl *control,
                      EsError *error);
  void (*free) (EsTileState *state);
} EsTilePasses;

/* A tighter bound than the parameter table's on one parameter an operation
 * reads, and why: quantize writes 8-bit levels, so its levels stop at 256. */
typedef struct {
  EsParamId id;
  double max;
  const char *why; /* NULL: the operation has no cap */
} EsParamCap;

typedef struct {
  EsOp op;
  const char *name;         /* "entropy": CLI command, file suffix, metadata */
  const char *title;        /* "Entropy" */
  const char *result_title; /* "Entropy", "Quantized", "Equalized": its result as a view */
  const char *summary;      /* one line for --help */
  /* Its own definition, the first item of its preset menu before the
   * es_presets rows ("opencv", "OpenCV createCLAHE"); NULL for an operation
   * without presets. */
  const char *definition_name, *definition_title;
  /* The result's format for a job on an input of format `input`: F32 for
   * entropy, U8 for most, the input's own for CLAHE. */
  EsFormat (*output_format) (const EsJob *job, EsFormat input);
  /* Times an ideal kernel reads each input byte (equalize: twice, for the
   * histogram and then the LUT). The copy floor moves these bytes. */
  int input_reads;
  unsigned params; /* ES_PARAM_BIT() of every parameter it reads */
  /* The parameters of `params` that a given job reads (entropy's window
   * only for the square; its levels not with exact binning); NULL: all of
   * them. The side panel shows a parameter's row while some operation
   * reads it. */
  unsigned (*params_read) (const EsJob *job);
  EsParamCap cap; /* checked by es_job_validate; the window clamps to it */
  /* Input rows above and below an output row that the row depends on: a
   * band of rows is computed from the band plus this halo. */
  int (*halo) (const EsJob *job);
  /* The output depends on where the image's tile grid lies, which the
   * image's own size fixes (CLAHE): a band or a chunk computed as an image
   * of its own would have other tiles, so banded, streamed and chunked runs
   * go through the tile passes (below) or take each plane whole
   * (es_job_whole_image); without tile passes CUDA runs it on one device,
   * the engine finishing on the CPU when the plane does not fit. */
  bool image_grid;
  /* With image_grid: the two passes that compute a job in bands all the
   * same, its halo a tile (EsTilePasses; es_job_tile_passes); NULL: none. */
  const EsTilePasses *tile_passes;
  /* Input planes above and below an output plane that it reads: half the
   * depth of a 3-D window, 0 for 2-D windows and for the other ops, which
   * run plane by plane on a volume. */
  int (*plane_halo) (const EsJob *job);
  /* The output depends on a statistic of the whole image (equalize's
   * histogram; of the whole volume for a volume), so banded runs take two
   * passes. */
  bool whole_image;
  const char *units; /* of the values: "nats", "level", "gray" */
  /* Every result of a job in the format `result` (output_format's) lies in
   * [0, range_max (job, result)]: the absolute colour range, so that a
   * 16-bit CLAHE result spans 0..65535 and is written with its own values;
   * range_text says it for --help ("0..ln(min(L, K²))"). */
  double (*range_max) (const EsJob *job, EsFormat result);
  const char *range_text;
  const char *colormap; /* the default colormap's name: "viridis", "gray" */
  /* The largest absolute difference between two backends' results for one
   * job (the CPU, each CUDA variant, banded runs): 0 is bit for bit. The
   * benchmark holds every variant to it. */
  double tolerance;
  /* CPU nanoseconds a pixel of the job takes on one core: what the `auto`
   * engine's cost model (compute/es-auto.c) weighs against CUDA. */
  double (*cpu_pixel_ns) (const EsJob *job);
  EsCpuRunner cpu;
  /* What `cpu` moves through main memory (compute/cpu, beside the runner). */
  EsMemoryModel cpu_memory;
  const EsCudaOp *cuda;
} EsOpInfo;

const EsOpInfo *es_op_info (EsOp op);
static inline bool
es_op_uses (EsOp op, EsParamId id)
{
  return (es_op_info (op)->params & ES_PARAM_BIT (id)) != 0;
}
/* The ES_PARAM_BIT()s of the parameters the job reads (EsOpInfo.params_read). */
unsigned es_job_params_read (const EsJob *job);
/* The largest value of a parameter the operation takes: its cap if it has
 * one on the parameter, else the parameter table's max. */
double es_op_param_max (EsOp op, EsParamId id);
const char *es_op_name (EsOp op); /* "entropy" */
bool es_op_from_name (const char *name, EsOp *op);
/* The result's format of `job` on an input of format `input` (EsOpInfo.output_format). */
EsFormat es_job_output_format (const EsJob *job, EsFormat input);
/* The largest value of `job`'s result in the format `result` (EsOpInfo.range_max). */
double es_job_range_max (const EsJob *job, EsFormat result);
/* Whether a backend computes `job` on a volume as a whole (a 3-D window;
 * whole_image ops, whose statistic covers every plane) rather than as one
 * 2-D job a plane. */
bool es_job_is_volumetric (const EsJob *job);
/* The op's tile passes when they compute `job` (EsOpInfo.tile_passes and
 * its takes), else NULL: then a banded run takes each plane whole. */
const EsTilePasses *es_job_tile_passes (const EsJob *job);

#ifdef __cplusplus
}
#endif
