/* SPDX-License-Identifier: MIT */
/* How a test that needs CUDA gets it: required on the GPU machine (ES_TEST_REQUIRE_CUDA=1), skipped elsewhere. */
#pragma once

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "es-engine.h"
#include "tap.h"

/* Whether this run must have CUDA: tests/gpu/run.sh sets ES_TEST_REQUIRE_CUDA=1. */
static inline bool
test_cuda_required (void)
{
  const char *require = getenv ("ES_TEST_REQUIRE_CUDA");

  return require != NULL && strcmp (require, "1") == 0;
}

/* A CUDA engine, or NULL when CUDA cannot be used: then one failing line
 * where CUDA is required, else a skip of `what`. */
static inline EsEngine *
test_cuda_engine (const char *what)
{
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CUDA, &error);

  if (engine == NULL)
    {
      if (test_cuda_required ())
        tap_ok (false, "ES_TEST_REQUIRE_CUDA=1 but CUDA is unavailable: %s", error.message);
      else
        tap_skip (error.message, what);
    }
  return engine;
}
