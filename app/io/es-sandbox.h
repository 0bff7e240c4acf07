/* SPDX-License-Identifier: MIT */
/* Decoding an untrusted file in a sandboxed child process, its pixels returned in shared memory. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "es-image.h"
#include "es-volume.h"

/* What to decode from a file, in a sandbox or in-process alike. */
typedef struct {
  int levels; /* as es_load_fd's */
  /* A multi-page TIFF is read whole, as a volume: choice picks an
   * OME-TIFF's channel and time (page by page: es_sandbox_decode_stack). */
  EsVolumeChoice choice;
  /* The file as 0/1 cells, a mask or a footprint (es_load_cells_fd): levels
   * and choice do not apply. */
  bool cells;
  /* Set when the result may stop being wanted (the window opened another
   * file): cancel_fd (a GCancellable's descriptor) turns readable then, and
   * es_sandbox_decode_fd stops its child at once (ES_ERROR_CANCELLED). */
  bool cancellable;
  int cancel_fd;
} EsDecodeRequest;

/* Decodes the file open on fd (not closed) in this process, as the sandbox
 * decodes it: the same recognition, limits, images and messages as
 * es_pages_open_fd, then its one page, or every page as a volume (the
 * first page alone, with a notice, where the pages differ in size or
 * format); or as es_load_cells_fd for cells. `notice` gets what the loader
 * says beside the image (NaN samples, the page shown), or "". */
bool es_decode_fd (int fd, const EsDecodeRequest *request, EsImage *image, char *notice, size_t notice_size,
                   EsError *error);

/* Whether sandboxed decoding works here: built with libseccomp, and its
 * helper entroscope-decode found (in the build tree when this program runs
 * from it, else in libexecdir). When not, *reason (if given) says why. */
bool es_sandbox_available (const char **reason);

/* The same as es_decode_fd, with the decoding in a child process that can
 * only read fd, write the shared memory that comes back as the image's
 * pixels, and answer through a pipe: no other file, no network, no new
 * process. The image, notice and messages are byte for byte those of
 * es_decode_fd. The child is held to the pixel budget
 * (es_image_get_max_pixels) and the file size limit of this process, to an
 * address space of 1 GiB plus 4 bytes per byte of file plus 12 bytes per
 * pixel of the budget, and to a time limit of 10 s plus 1 s per 16 MiB of
 * file: a crash, a hang or a forbidden system call becomes an error
 * (ES_ERROR_FORMAT; a hang ES_ERROR_LIMIT) that says so, and the child is
 * gone when this returns. Once the control set with es_load_set_interrupt
 * is cancelled, a signal that interrupts the wait stops the child
 * (ES_ERROR_CANCELLED). ES_ERROR_UNAVAILABLE when es_sandbox_available is
 * false or the child could not be started. The pixels are a shared mapping
 * that es_image_clear unmaps. */
bool es_sandbox_decode_fd (int fd, const EsDecodeRequest *request, EsImage *image, char *notice, size_t notice_size,
                           EsError *error);
/* Opens path (an interruption of the process's control ends the wait of a
 * FIFO for its writer) and decodes it: with es_sandbox_decode_fd when
 * sandboxed, else with es_decode_fd. */
bool es_decode_path (const char *path, bool sandboxed, const EsDecodeRequest *request, EsImage *image, char *notice,
                     size_t notice_size, EsError *error);
/* The same on bytes in memory (the window reads remote files through
 * GIO): they are copied into a memory file, which es_sandbox_decode_fd or
 * es_decode_fd reads, so that a stack is a volume here too. */
bool es_decode_memory (const void *data, size_t size, bool sandboxed, const EsDecodeRequest *request, EsImage *image,
                       char *notice, size_t notice_size, EsError *error);
/* A multi-page file read page by page in the sandbox (entroscope-cli's
 * stacks with --sandbox), a batch of pages a helper: as many from `first`
 * as take less than 64 MiB (one at least) and at most 4096, so that small
 * pages come in few batches and large ones one at a time. */
typedef struct {
  int width, height;
  EsFormat format;
  int depth;
} EsPageShape;

typedef struct {
  int count;           /* pages in the file */
  EsPageShape *shapes; /* every page's, as es_pages_size and es_pages_format give them */
  int first, decoded;  /* the batch: pages first .. first + decoded - 1 */
  EsImage *images;     /* its images, as es_pages_load gives them; the caller may take them */
  char (*notices)[256];
} EsSandboxStack;

/* Decodes the batch from page `first` (0: the first batch, which also
 * fills count and shapes; the stack starts zeroed) of the file on fd, read
 * from its start each time (es_sandbox_open_stack), replacing the batch
 * before. Errors, limits and the child's end as es_sandbox_decode_fd's. */
bool es_sandbox_decode_stack (int fd, const EsDecodeRequest *request, int first, EsSandboxStack *stack, EsError *error);
void es_sandbox_stack_clear (EsSandboxStack *stack);
/* Opens path for es_sandbox_decode_stack: a regular file as it is, else
 * (a pipe, a FIFO) its bytes held in a memory file, within the loader's
 * size limit. -1 with error set when it cannot. */
int es_sandbox_open_stack (const char *path, EsError *error);
