/* SPDX-License-Identifier: MIT */
/* A minimal TAP producer for the plain-C tests (no GLib: they run on GPU machines). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int tap_count;
static int tap_failed;

/* Records one test point; the description is printf-style. Returns ok. */
static inline bool
tap_ok (bool ok, const char *format, ...)
{
  va_list args;
  tap_count++;
  if (!ok)
    tap_failed++;
  printf ("%s %d - ", ok ? "ok" : "not ok", tap_count);
  va_start (args, format);
  vprintf (format, args);
  va_end (args);
  printf ("\n");
  fflush (stdout);
  return ok;
}

static inline void
tap_diag (const char *format, ...)
{
  va_list args;
  printf ("# ");
  va_start (args, format);
  vprintf (format, args);
  va_end (args);
  printf ("\n");
}

static inline void
tap_skip (const char *reason, const char *what)
{
  tap_count++;
  printf ("ok %d - %s # SKIP %s\n", tap_count, what, reason);
}

/* Prints the plan and returns the exit status. */
static inline int
tap_done (void)
{
  printf ("1..%d\n", tap_count);
  return tap_failed ? 1 : 0;
}

/* A fresh seed each run unless ES_TEST_SEED is set; always printed so that a
 * failure can be replayed. */
static inline unsigned long
tap_seed (void)
{
  const char *env = getenv ("ES_TEST_SEED");
  unsigned long seed = env ? strtoul (env, NULL, 0) : (unsigned long) time (NULL) ^ (unsigned long) clock ();
  tap_diag ("seed %lu (replay with ES_TEST_SEED=%lu)", seed, seed);
  return seed;
}

/* xorshift64*: small, fast and good enough for test images. */
static inline unsigned long long
tap_random (unsigned long long *state)
{
  unsigned long long x = *state ? *state : 0x9E3779B97F4A7C15ull;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 2685821657736338717ull;
}

/* A random integer in lo..hi, both included. */
static inline int
tap_random_int (unsigned long long *state, int lo, int hi)
{
  return lo + (int) (tap_random (state) % (unsigned long long) (hi - lo + 1));
}
