/* SPDX-License-Identifier: MIT */
/* Between es-sandbox.c and its helper entroscope-decode: the descriptors, the arguments, the answer. */
#pragma once

#include <stdint.h>

#include "es-error.h"
#include "es-image.h"

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

/* argv: entroscope-decode LEVELS MAX_PIXELS MAX_FILE_SIZE
 *       CHANNEL TIME CHANNEL_GIVEN TIME_GIVEN ADDRESS_SPACE_BYTES PIXEL_FILE_BYTES
 *       CELLS BATCH
 * BATCH 0 decodes one image (or volume); N > 0, a batch of a stack's pages
 * from page N - 1 (es_sandbox_decode_stack). Every argument is a decimal
 * number of at least 0. */
#define ES_SANDBOX_ARGC 12

/* A batch holds pages from the first asked for while they take less than
 * this, one page at least, and at most ES_SANDBOX_BATCH_PAGES of them: a
 * stack's small pages come in few batches, its large ones one at a time. */
#define ES_SANDBOX_BATCH_BYTES ((uint64_t) 64 << 20)
#define ES_SANDBOX_BATCH_PAGES 4096

#define ES_SANDBOX_MAGIC 0x45534442u /* "ESDB" */

/* Sent once, at the end, as one message. The parent trusts none of it: every field is checked against the memory
 * file before anything is mapped. */
typedef struct {
  uint32_t magic;
  int32_t error_code; /* EsErrorCode; ES_OK: the image is in the memory file */
  int32_t width, height, planes, format, depth, levels;
  uint32_t maxval;
  uint64_t stride, plane_stride;
  EsImageMeta meta;      /* what the samples and pixels stand for; checked as the rest */
  uint64_t pixel_offset; /* where the pixels start in the pixel file: a multiple of the page size */
  /* A stack's batch: the file's pages, and the table of EsSandboxPage at
   * table_offset in the pixel file: every page when the batch starts at 0
   * (the caller checks them all before it writes anything), else the
   * batch's pages, from table_first. */
  int32_t page_count, table_first, table_count;
  uint64_t table_offset;
  char notice[256];
  char message[sizeof ((EsError *) 0)->message];
} EsSandboxAnswer;

/* A stack's page in the table: its size and format, and for a page of the
 * batch (decoded) its image's header and pixels' offset. */
typedef struct {
  int32_t width, height, format, depth, levels, decoded;
  uint32_t maxval;
  uint64_t pixel_offset;
  EsImageMeta meta;
  char notice[256];
} EsSandboxPage;
