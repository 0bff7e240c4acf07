/* SPDX-License-Identifier: MIT */
/* One zlib stream inflated on several threads: the PNG decoder's answer to a
 * single-threaded inflate being most of a large file's decode. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the stream is cut. Zero fields take the defaults chosen by
 * measurement (docs/performance/files.md); tests set small chunks so that a
 * few KiB of stream already goes through every path. */
typedef struct {
  int threads;      /* at most this many; 0: omp_get_max_threads () */
  size_t min_chunk; /* compressed bytes a chunk at least; 0: the default */
} EsInflateSplit;

/* True when es_inflate_parallel is worth calling for a stream of in_size
 * compressed bytes with this split (enough threads and data). */
bool es_inflate_parallel_pays (size_t in_size, const EsInflateSplit *split);

/* Inflates the zlib stream in[0..in_size) into out[0..out_capacity).
 * Returns true, with *used_out the bytes inflated, only when the whole
 * stream decoded, ended with a final block, fitted in out_capacity and its
 * Adler-32 matched; then out holds exactly what a serial inflater writes.
 * Returns false in every other case (damaged data, a preset dictionary, no
 * place to cut, too much output, no memory): the caller then inflates
 * serially, which finds and names the error. Never reads outside in or
 * writes outside out. Bytes after the Adler-32 are ignored. */
bool es_inflate_parallel (const uint8_t *in, size_t in_size, uint8_t *out, size_t out_capacity, size_t *used_out,
                          const EsInflateSplit *split);
