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
  /* A multi-page TIFF: true reads it whole as a volume (choice picks an
   * OME-TIFF's channel and time), false refuses it (a caller that reads
   * stacks page by page, which the sandbox does not do). */
  bool stack_as_volume;
  EsVolumeChoice choice;
  /* The file as 0/1 cells, a mask or a footprint (es_load_cells_fd): levels,
   * stack_as_volume and choice do not apply. */
  bool cells;
  /* Set when the result may stop being wanted (the window opened another
   * file): cancel_fd (a GCancellable's descriptor) turns readable then, and
   * es_sandbox_decode_fd stops its child at once (ES_ERROR_CANCELLED). */
  bool cancellable;
  int cancel_fd;
} EsDecodeRequest;

/* Decodes the file open on fd (not closed) in this process, as the sandbox
 * decodes it: the same recognition, limits, images and messages as
 * es_pages_open_fd, then page 0, or every page as a volume; or as
 * es_load_cells_fd for cells. `notice` gets what the loader says beside
 * the image (NaN samples), or "". */
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
/* The same on bytes in memory (the window reads remote files through GIO):
 * they are copied into a memory file that the child reads. */
/* Opens path (an interruption of the process's control ends the wait of a
 * FIFO for its writer) and decodes it: with es_sandbox_decode_fd when
 * sandboxed, else with es_decode_fd. */
bool es_decode_path (const char *path, bool sandboxed, const EsDecodeRequest *request, EsImage *image, char *notice,
                     size_t notice_size, EsError *error);
bool es_sandbox_decode_memory (const void *data, size_t size, const EsDecodeRequest *request, EsImage *image,
                               char *notice, size_t notice_size, EsError *error);
