/* SPDX-License-Identifier: MIT */
/* The environment variables through which tests reach paths that no input can (es-test-hooks.c lists them). */
#pragma once

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ES_CUDA_FAULT: the CUDA fault a test injects. */
typedef enum {
  ES_TEST_CUDA_FAULT_NONE,   /* unset */
  ES_TEST_CUDA_FAULT_OTHER,  /* set to a value that names no fault: nothing fires, jobs still go to CUDA */
  ES_TEST_CUDA_FAULT_ALLOC,  /* the next device allocation fails */
  ES_TEST_CUDA_FAULT_LAUNCH, /* the first kernel launch of a run fails cleanly */
  ES_TEST_CUDA_FAULT_STICKY, /* the first kernel launch of a run breaks the context */
} EsTestCudaFault;

EsTestCudaFault es_test_hook_cuda_fault (void);

/* ES_INJECT_WRITE_FAILURE=N: the N-th write into an atomic file fails; 0
 * when unset or not a positive number. */
int es_test_hook_write_failure (void);

/* ES_INJECT_WRITE_SIGNAL=N:SIG: true, with *nth_write and *signal_number
 * set, when a signal is to be raised before the N-th write into an atomic
 * file. */
bool es_test_hook_write_signal (int *nth_write, int *signal_number);

/* ES_CLI_TEST_INTERRUPT=N:F[:SIG]: true, with *job and *fraction set (and
 * *signal_number when SIG is given; it is left as it is otherwise), when
 * the CLI is to raise a signal once its N-th job reaches the fraction F. */
bool es_test_hook_cli_interrupt (int *job, double *fraction, int *signal_number);

/* ES_TEST_STREAM_BAND_ROWS=N: the rows of each band of a streamed job, so
 * that small images go in many bands; 0 when unset or not positive. */
int es_test_hook_stream_band_rows (void);

/* ES_TEST_PNG_ZLIB (any value): PNGs are inflated by zlib as they are read,
 * even in a build with libdeflate. */
bool es_test_hook_png_zlib (void);

/* ES_TEST_DECODER_FAULT: how the sandbox's decoding helper misbehaves once
 * its filter is in place (read by the helper alone). */
typedef enum {
  ES_TEST_DECODER_FAULT_NONE,
  ES_TEST_DECODER_FAULT_CRASH,   /* "crash": a segmentation fault */
  ES_TEST_DECODER_FAULT_HANG,    /* "hang": an endless loop */
  ES_TEST_DECODER_FAULT_OPEN,    /* "open": opens /etc/passwd and reads it */
  ES_TEST_DECODER_FAULT_MEMORY,  /* "memory": allocates until memory runs out */
  ES_TEST_DECODER_FAULT_FOREIGN, /* "foreign": sends its standard error as its pixel file */
} EsTestDecoderFault;

EsTestDecoderFault es_test_hook_decoder_fault (void);

/* ES_TEST_SANDBOX_TIMEOUT_MS=N: the sandbox's time limit in ms; 0 when
 * unset or not positive (the limit then follows the file size). */
int es_test_hook_sandbox_timeout_ms (void);

/* ES_TEST_SANDBOX_MEMORY_FILE (any value): the sandbox's helper writes the
 * pixels into the parent's memory file (4 KiB pages), as where it cannot
 * mount a tmpfs of 2 MiB pages (read by the helper alone). */
bool es_test_hook_sandbox_memory_file (void);

#ifdef __cplusplus
}
#endif
