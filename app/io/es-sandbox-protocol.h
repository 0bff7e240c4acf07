/* SPDX-License-Identifier: MIT */
/* Between es-sandbox.c and its helper entroscope-decode: the descriptors, the arguments, the answer. */
#pragma once

#include <stdint.h>

#include "es-error.h"

/* The helper finds these open (posix_spawn's file actions put them there;
 * nothing else is open but 0, 1 and 2). */
enum {
  ES_SANDBOX_FD_INPUT = 3, /* the file, read only */
  /* An empty memory file for the pixels. The helper replaces it with a
   * file of its own where it can give that one 2 MiB pages (a tmpfs
   * mounted in a user namespace of its own), and then sends that file
   * along with its answer. */
  ES_SANDBOX_FD_PIXELS = 4,
  ES_SANDBOX_FD_ANSWER = 5, /* a SOCK_SEQPACKET socket: one EsSandboxAnswer */
};

/* argv: entroscope-decode LEVELS MAX_PIXELS MAX_FILE_SIZE STACK_AS_VOLUME
 *       CHANNEL TIME CHANNEL_GIVEN TIME_GIVEN ADDRESS_SPACE_BYTES PIXEL_FILE_BYTES
 *       CELLS */
#define ES_SANDBOX_ARGC 12

#define ES_SANDBOX_MAGIC 0x45534442u /* "ESDB" */

/* Sent once, at the end, as one message. The parent trusts none of it: every field is checked against the memory
 * file before anything is mapped. */
typedef struct {
  uint32_t magic;
  int32_t error_code; /* EsErrorCode; ES_OK: the image is in the memory file */
  int32_t width, height, planes, format, depth, levels;
  uint32_t maxval;
  uint64_t stride, plane_stride;
  uint64_t pixel_offset; /* where the pixels start in the pixel file: a multiple of the page size */
  char notice[256];
  char message[sizeof ((EsError *) 0)->message];
} EsSandboxAnswer;
