/* SPDX-License-Identifier: MIT */
/* EsImage: a plain 2-D pixel buffer or a volume of planes, the currency of every layer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "es-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ES_FORMAT_U8,
  ES_FORMAT_U16,
  ES_FORMAT_F32,
} EsFormat;

/* Largest side accepted anywhere, checked before any allocation. */
#define ES_MAX_SIDE 1000000
/* Default pixel budget (2^30); es_image_set_max_pixels() changes it per process. */
#define ES_DEFAULT_MAX_PIXELS (1ull << 30)

/* How a file stored the samples that became an image's unsigned samples
 * (DESIGN.md §1): as they are, or mapped from signed integers or floats. */
typedef enum {
  ES_STORED_UNSIGNED, /* the sample is the value (a zeroed struct) */
  ES_STORED_SIGNED,   /* a signed integer, offset by 2^(bits−1) */
  ES_STORED_FLOAT,    /* a float, mapped linearly from its finite range */
} EsStoredType;

/* The unit a file gives its pixel size in, kept to show lengths in it. */
typedef enum {
  ES_LENGTH_NONE, /* uncalibrated: lengths are in pixels */
  ES_LENGTH_NM,
  ES_LENGTH_UM,
  ES_LENGTH_MM,
  ES_LENGTH_CM,
  ES_LENGTH_M,
  ES_LENGTH_INCH,
} EsLengthUnit;

#define ES_N_LENGTH_UNITS (ES_LENGTH_INCH + 1)

/* What an image's numbers stand for, for the people who read them: compute/
 * never reads it (kernels work on the samples), the loaders fill it and the
 * inspection, the window and the exports show and record it. A zeroed
 * struct: samples are the values, the size of a pixel is unknown. */
typedef struct {
  /* value = value_offset + sample · value_scale, unless stored is
   * ES_STORED_UNSIGNED (then the sample is the value). A float page whose
   * finite samples are all one value has value_scale 0. */
  EsStoredType stored;
  double value_offset;
  double value_scale;
  /* A float image's samples that were NaN, and those that were +∞ or −∞
   * (DESIGN.md §1). With any NaN, sample 0 stands for NaN (no value) and
   * the finite values lie in 1..65535; infinities take the ends of the
   * finite range. Both 0 for every other image. */
  uint64_t nan_samples, infinite_samples;
  /* The size of a pixel along x and y, and the spacing of a volume's planes
   * along z, in metres; 0 where the file does not say. */
  double pixel_width, pixel_height, pixel_depth;
  EsLengthUnit length_unit; /* ES_LENGTH_NONE when pixel_width or pixel_height is 0 */
} EsImageMeta;

/* Where an image's pixels lie. */
typedef enum {
  ES_MEMORY_HOST, /* host memory, pageable or page-locked (a zeroed struct) */
  ES_MEMORY_CUDA, /* device memory of CUDA device cuda_device (a CuPy or PyTorch array) */
} EsMemory;

typedef struct {
  int width;
  int height;
  size_t stride; /* bytes from one row to the next */
  /* A volume's planes (its depth in z); 0 or 1: a 2-D image, so that a
   * zeroed struct stays 2-D. es_image_planes() reads it. */
  int planes;
  size_t plane_stride; /* bytes from one plane to the next (volumes only) */
  EsFormat format;
  /* For U8/U16: significant bits of a sample (1..16); a sample v lies in
   * 0..2^depth-1. Quantization uses it: level = (v * L) >> depth. */
  int depth;
  /* Nonzero when the samples already are quantization levels 0..levels-1
   * (a text matrix): quantization is then skipped. */
  int levels;
  /* For U8/U16: the largest sample a full-scale white has (a PGM's maxval);
   * 0 means 2^depth − 1. Only the 8-bit view reads it. */
  uint32_t maxval;
  /* What the samples and the pixels stand for (values, physical size). */
  EsImageMeta meta;
  void *pixels;
  /* Frees pixels; NULL means free(). Page-locked images from
   * es_engine_image_alloc() set it. */
  void (*release) (void *pixels);
  /* Device memory is only ever borrowed (release NULL, never freed here):
   * es_run computes on that device, straight from and into it, and never
   * copies it through the host. */
  EsMemory memory;
  int cuda_device;
  /* A device result may name the stream on which its array's library
   * orders work (as __cuda_array_interface__ names it: 1 the legacy
   * default, 2 the per-thread default; 0 none). es_run then orders the job
   * after the work queued there so far, and, where the job's path allows
   * (DESIGN.md, "Device memory"), runs it on that stream, or makes that
   * stream wait for it on the device, and returns without waiting for it;
   * otherwise, and for 0, it returns once the result is computed. */
  uintptr_t cuda_stream;
} EsImage;

size_t es_format_size (EsFormat format);
/* The bit depth a result of this format carries: 8, 16, or 0 for floats. */
int es_format_depth (EsFormat format);
const char *es_format_name (EsFormat format);

/* Validates the size against ES_MAX_SIDE and the pixel budget, checks every
 * product for overflow, and allocates a zeroed, tightly packed buffer. */
bool es_image_alloc (EsImage *image, int width, int height, EsFormat format, int depth, EsError *error);
/* The same for a volume of `planes` planes (es_image_alloc is the one-plane
 * case): the pixel budget counts width · height · planes, each of the three
 * sides is held to ES_MAX_SIDE, and a refusal names the numbers before
 * anything is allocated. Planes follow each other tightly packed. */
bool es_image_alloc_volume (EsImage *image, int width, int height, int planes, EsFormat format, int depth,
                            EsError *error);
/* Asks the kernel to back a large block (malloc'd, not yet touched) with
 * 2 MiB pages where it can (transparent huge pages in "madvise" mode, as
 * Debian and Ubuntu ship them): a 64 MiB image then takes 32 page faults
 * to fill instead of 16384, a tenth of a 8192² PNG decode. es_image_alloc
 * does it for every image; no effect on small blocks or elsewhere. */
void es_memory_prefer_huge_pages (void *block, size_t size);

/* Where es_image_alloc takes large pixel buffers from in place of calloc:
 * the decoding sandbox's helper decodes into the memory that it hands to
 * its parent, so that its images never need copying there. `take` returns
 * `bytes` zeroed bytes, or NULL for calloc's; the image's release is then
 * `release`. NULL (the default) is calloc for every image. */
typedef struct {
  void *(*take) (size_t bytes);
  void (*release) (void *pixels);
} EsPixelAllocator;
void es_image_set_allocator (const EsPixelAllocator *allocator);

/* The histogram of the image's 8-bit view (es_sample_to_u8_max of every
 * sample, DESIGN.md §1) and its smallest and largest sample (0 and 0 for an
 * empty image), counted on every core. */
void es_image_summarize (const EsImage *image, uint64_t histogram[256], uint32_t *lo, uint32_t *hi);
/* Frees the pixels (if any; never borrowed device memory) and zeroes the
 * struct. Safe on a zeroed struct. */
void es_image_clear (EsImage *image);
/* Only the size checks of es_image_alloc, for decoders that want to refuse
 * early (before reading pixel data). */
bool es_image_check_size (int width, int height, EsFormat format, EsError *error);
/* The same for a volume (decoders of multi-page files refuse with it). */
bool es_image_check_volume_size (int width, int height, int planes, EsFormat format, EsError *error);

void es_image_set_max_pixels (uint64_t max_pixels);
uint64_t es_image_get_max_pixels (void);

static inline void *
es_image_row (const EsImage *image, int y)
{
  return (uint8_t *) image->pixels + (size_t) y * image->stride;
}

/* Sample (x, y) of plane z of a U8, U16 or F32 image as a double, which
 * holds every sample of each format exactly. */
static inline double
es_image_voxel_sample (const EsImage *image, int x, int y, int z)
{
  const void *row = (const uint8_t *) image->pixels + (size_t) z * image->plane_stride + (size_t) y * image->stride;

  switch (image->format)
    {
    case ES_FORMAT_U8: return ((const uint8_t *) row)[x];
    case ES_FORMAT_U16: return ((const uint16_t *) row)[x];
    default: return ((const float *) row)[x];
    }
}

/* Sample (x, y) of a 2-D image (plane 0 of a volume). */
static inline double
es_image_sample (const EsImage *image, int x, int y)
{
  return es_image_voxel_sample (image, x, y, 0);
}

/* True for an image in CUDA device memory. */
static inline bool
es_image_on_device (const EsImage *image)
{
  return image != NULL && image->memory == ES_MEMORY_CUDA;
}

/* The planes of an image: 1 for a 2-D image. */
static inline int
es_image_planes (const EsImage *image)
{
  return image->planes > 1 ? image->planes : 1;
}

/* Row y of plane z. */
static inline void *
es_image_voxel_row (const EsImage *image, int z, int y)
{
  return (uint8_t *) image->pixels + (size_t) z * image->plane_stride + (size_t) y * image->stride;
}

/* Rows first .. first + count − 1 of a 2-D image as an image of their own
 * that shares its pixels (release is NULL: never clear the view): a band. */
static inline EsImage
es_image_rows (const EsImage *image, int first, int count)
{
  EsImage rows = *image;

  rows.pixels = (uint8_t *) image->pixels + (size_t) first * image->stride;
  rows.height = count;
  rows.release = NULL;
  return rows;
}

/* Plane z as a 2-D image that shares the volume's pixels (release is NULL:
 * never clear the view). Plane 0 of a 2-D image is the image itself. */
static inline EsImage
es_image_plane (const EsImage *image, int z)
{
  EsImage plane = *image;

  plane.pixels = es_image_voxel_row (image, z, 0);
  plane.planes = 0;
  plane.plane_stride = 0;
  plane.release = NULL;
  return plane;
}

/* The value that a sample of the image stands for (EsImageMeta). */
static inline double
es_image_meta_value (const EsImageMeta *meta, double sample)
{
  return meta->stored == ES_STORED_UNSIGNED ? sample : meta->value_offset + sample * meta->value_scale;
}

/* Whether a sample stands for NaN (a float TIFF's "no value"): sample 0
 * of an image whose meta counts NaN samples. */
static inline bool
es_image_meta_is_nan (const EsImageMeta *meta, uint32_t sample)
{
  return sample == 0 && meta->nan_samples > 0;
}

/* Whether the image knows the physical size of its pixels. */
static inline bool
es_image_meta_calibrated (const EsImageMeta *meta)
{
  return meta->length_unit != ES_LENGTH_NONE && meta->pixel_width > 0 && meta->pixel_height > 0;
}

#ifdef __CUDACC__
#define ES_IMAGE_FN static inline __host__ __device__
#else
#define ES_IMAGE_FN static inline
#endif

/* The smallest and largest sample of a U8/U16 image (of every plane of a volume). */
void es_image_sample_range (const EsImage *image, uint32_t *min, uint32_t *max);

/* The full-scale sample of an image: its maxval, or 2^depth − 1. */
ES_IMAGE_FN uint32_t
es_image_maxval (const EsImage *image)
{
  return image->maxval != 0 ? image->maxval : (1u << image->depth) - 1u;
}

/* The 8-bit view of a sample used by equalize, sharpen and byte binning
 * (DESIGN.md §1): round(v · 255 / maxval), halves up, as MATLAB's im2uint8,
 * so that full scale maps to 255 at every depth; 8-bit samples (maxval 255)
 * are unchanged. Integer arithmetic, identical on every backend. */
ES_IMAGE_FN uint8_t
es_sample_to_u8_max (uint32_t v, uint32_t maxval)
{
  return maxval == 255u ? (uint8_t) v : (uint8_t) ((v * 510u + maxval) / (2u * maxval));
}

/* The same for an image whose maxval is 2^depth − 1. */
ES_IMAGE_FN uint8_t
es_sample_to_u8 (uint32_t v, int depth)
{
  return es_sample_to_u8_max (v, (1u << depth) - 1u);
}

#ifdef __cplusplus
}
#endif
