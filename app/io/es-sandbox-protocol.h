/* SPDX-License-Identifier: MIT */
/* Between es-sandbox.c and its helper entroscope-decode: the descriptors, the arguments, the answer. */
#pragma once

#include <stdint.h>

#include "es-error.h"
#include "es-image.h"

/* The helper finds these open (posix_spawn's file actions put them there;
 * nothing else is open but 0, 1 and 2). */
enum {
  ES_SANDBOX_FD_INPUT = 3,  /* the file, read only */
  ES_SANDBOX_FD_PIXELS = 4, /* an empty memory file: the pixels, from offset 0 */
  ES_SANDBOX_FD_ANSWER = 5, /* a pipe's writing end: one EsSandboxAnswer */
};

/* argv: entroscope-decode LEVELS MAX_PIXELS MAX_FILE_SIZE STACK_AS_VOLUME
 *       CHANNEL TIME CHANNEL_GIVEN TIME_GIVEN ADDRESS_SPACE_BYTES PIXEL_FILE_BYTES */
#define ES_SANDBOX_ARGC 11

#define ES_SANDBOX_MAGIC 0x45534442u /* "ESDB" */

/* Written once, at the end; less than PIPE_BUF so that it arrives whole.
 * The parent trusts none of it: every field is checked against the memory
 * file before anything is mapped. */
typedef struct {
  uint32_t magic;
  int32_t error_code; /* EsErrorCode; ES_OK: the image is in the memory file */
  int32_t width, height, planes, format, depth, levels;
  uint32_t maxval;
  uint64_t stride, plane_stride;
  EsImageMeta meta; /* what the samples and pixels stand for; checked as the rest */
  char notice[256];
  char message[sizeof ((EsError *) 0)->message];
} EsSandboxAnswer;
