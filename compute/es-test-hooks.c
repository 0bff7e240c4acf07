/* SPDX-License-Identifier: MIT */
/* Every environment variable that exists only for tests, read in one place. */
#include "es-test-hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each hook makes a path reachable that no input can reach on demand: a
 * failing device, a failing or interrupted write, an interruption at an
 * exact point of a job, many bands on a small image, the zlib decoder in a
 * libdeflate build. Their names and meanings are fixed by the tests.
 *
 *   variable                  effect                                      tests
 *   ES_CUDA_FAULT             alloc: the next device allocation fails;    test-faults (once per mode),
 *                             launch: the first launch of a run fails;    python/tests/test_engine.py
 *                             sticky: it breaks the context. Any value
 *                             keeps AUTO jobs on CUDA (es-engine.c).
 *   ES_INJECT_WRITE_FAILURE   N: the N-th write into an atomic file       test-cli.sh,
 *                             fails (es-atomic-file.c)                    test-save-files
 *   ES_INJECT_WRITE_SIGNAL    N:SIG: raises SIG before the N-th write     test-cli-hostile.sh
 *                             into an atomic file (es-atomic-file.c)
 *   ES_CLI_TEST_INTERRUPT     N:F[:SIG]: raises SIG (SIGINT) once the     test-cli-hostile.sh
 *                             N-th job (from 1) is F done (es-cli.c)
 *   ES_TEST_STREAM_BAND_ROWS  N: streamed jobs go in bands of N rows      test-cli-stream.sh,
 *                             (es-stream.c)                               test-png-unfilter.py
 *   ES_TEST_PNG_ZLIB          set: PNGs are inflated by zlib as they      test-cli-stream.sh
 *                             are read (es-png-inflate.c)
 *   ES_TEST_DECODER_FAULT     crash, hang, open, memory or foreign: the   test-cli-sandbox.sh,
 *                             sandbox's helper misbehaves so, once its    test-sandbox,
 *                             filter is in place (es-decode-main.c; read  test-ui-files
 *                             by the helper only)
 *   ES_TEST_SANDBOX_TIMEOUT_MS  N: the sandbox's time limit, in place of  test-cli-sandbox.sh,
 *                             the one it derives from the file size       test-sandbox,
 *                             (es-sandbox.c)                              test-ui-files
 *   ES_TEST_SANDBOX_MEMORY_FILE  set: the sandbox's helper keeps the     test-sandbox
 *                             parent's memory file, as where user
 *                             namespaces are off (es-decode-main.c)
 *
 * Variables that users set are not here: ES_DEVICES and
 * ES_GPU_MEMORY_BUDGET (README), ES_CPU_AVX512 (compute/cpu/entropy.c),
 * ENTROSCOPE_DEBUG (ui/es-debug.c). */

EsTestCudaFault
es_test_hook_cuda_fault (void)
{
  const char *fault = getenv ("ES_CUDA_FAULT");

  if (fault == NULL)
    return ES_TEST_CUDA_FAULT_NONE;
  if (strcmp (fault, "alloc") == 0)
    return ES_TEST_CUDA_FAULT_ALLOC;
  if (strcmp (fault, "launch") == 0)
    return ES_TEST_CUDA_FAULT_LAUNCH;
  if (strcmp (fault, "sticky") == 0)
    return ES_TEST_CUDA_FAULT_STICKY;
  return ES_TEST_CUDA_FAULT_OTHER;
}

int
es_test_hook_write_failure (void)
{
  const char *env = getenv ("ES_INJECT_WRITE_FAILURE");
  int n = env != NULL ? atoi (env) : 0;

  return n > 0 ? n : 0;
}

bool
es_test_hook_write_signal (int *nth_write, int *signal_number)
{
  const char *env = getenv ("ES_INJECT_WRITE_SIGNAL");

  return env != NULL && sscanf (env, "%d:%d", nth_write, signal_number) == 2;
}

bool
es_test_hook_cli_interrupt (int *job, double *fraction, int *signal_number)
{
  const char *env = getenv ("ES_CLI_TEST_INTERRUPT");

  return env != NULL && sscanf (env, "%d:%lf:%d", job, fraction, signal_number) >= 2;
}

int
es_test_hook_stream_band_rows (void)
{
  const char *env = getenv ("ES_TEST_STREAM_BAND_ROWS");
  int rows = env != NULL ? atoi (env) : 0;

  return rows > 0 ? rows : 0;
}

bool
es_test_hook_png_zlib (void)
{
  return getenv ("ES_TEST_PNG_ZLIB") != NULL;
}

EsTestDecoderFault
es_test_hook_decoder_fault (void)
{
  const char *fault = getenv ("ES_TEST_DECODER_FAULT");

  if (fault == NULL)
    return ES_TEST_DECODER_FAULT_NONE;
  if (strcmp (fault, "crash") == 0)
    return ES_TEST_DECODER_FAULT_CRASH;
  if (strcmp (fault, "hang") == 0)
    return ES_TEST_DECODER_FAULT_HANG;
  if (strcmp (fault, "open") == 0)
    return ES_TEST_DECODER_FAULT_OPEN;
  if (strcmp (fault, "memory") == 0)
    return ES_TEST_DECODER_FAULT_MEMORY;
  if (strcmp (fault, "foreign") == 0)
    return ES_TEST_DECODER_FAULT_FOREIGN;
  return ES_TEST_DECODER_FAULT_NONE;
}

bool
es_test_hook_sandbox_memory_file (void)
{
  return getenv ("ES_TEST_SANDBOX_MEMORY_FILE") != NULL;
}

int
es_test_hook_sandbox_timeout_ms (void)
{
  const char *env = getenv ("ES_TEST_SANDBOX_TIMEOUT_MS");
  int ms = env ? atoi (env) : 0;

  return ms > 0 ? ms : 0;
}
