/* SPDX-License-Identifier: MIT */
/* GPU fault injection (ES_CUDA_FAULT=alloc|launch|sticky): a failing CUDA job is finished on the CPU, exactly. */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "es-engine.h"
#include "tap.h"
#include "test-cuda-engine.h"
#include "test-image-common.h"

extern char **environ;

static const char *const fault_modes[] = { "alloc", "launch", "sticky" };

/* ": message" after a description when an error is set, else nothing. */
static const char *
why (const EsError *error)
{
  static char text[sizeof error->message + 2];

  snprintf (text, sizeof text, "%s%s", error->message[0] ? ": " : "", error->message);
  return text;
}

/* A random gray image of an awkward size, 8- or 16-bit. */
static bool
random_image (unsigned long long *state, EsImage *image)
{
  int width = 1 + (int) (tap_random (state) % 300);
  int height = 1 + (int) (tap_random (state) % 200);
  bool wide = tap_random (state) % 2;
  EsError error = { 0 };

  if (!es_image_alloc (image, width, height, wide ? ES_FORMAT_U16 : ES_FORMAT_U8, wide ? 16 : 8, &error))
    return tap_ok (false, "allocate a %dx%d image: %s", width, height, error.message);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        unsigned long long r = tap_random (state);
        if (wide)
          ((uint16_t *) es_image_row (image, y))[x] = (uint16_t) r;
        else
          ((uint8_t *) es_image_row (image, y))[x] = (uint8_t) r;
      }
  return true;
}

/* Entropy is only promised within 1e-5 between backends (DESIGN.md §1). */
static float
max_difference (const EsImage *a, const EsImage *b)
{
  float worst = 0;

  for (int y = 0; y < a->height; y++)
    for (int x = 0; x < a->width; x++)
      worst = fmaxf (worst,
                     fabsf (((const float *) es_image_row (a, y))[x] - ((const float *) es_image_row (b, y))[x]));
  return worst;
}

/* The error message inside the engine's notice "CUDA failed (MESSAGE); ...". */
static void
notice_message (const char *notice, char *out, size_t out_size)
{
  const char *open = strchr (notice, '(');
  const char *close = strrchr (notice, ')');

  if (open == NULL || close == NULL || close <= open)
    snprintf (out, out_size, "%s", notice);
  else
    snprintf (out, out_size, "%.*s", (int) (close - open - 1), open + 1);
}

/* One fault mode, in a process of its own: a sticky error poisons CUDA for
 * the whole process. Prints its own TAP, which the parent relays. The parent
 * passes expect_cuda when it found CUDA usable: then a fault that keeps the
 * engine off CUDA from the start is a failure, not a reason to skip. */
static int
run_mode (const char *mode, bool expect_cuda)
{
  unsigned long long state = tap_seed ();
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsImage in = { 0 }, expected = { 0 }, out = { 0 };
  EsError error = { 0 };
  EsTiming timing;
  EsEngine *cpu, *engine, *again;
  const char *notice;
  char message[512];
  bool sticky = strcmp (mode, "sticky") == 0;

  for (const char *c = mode; *c; c++)
    state = state * 31 + (unsigned char) *c;
  job.window = 3 + 2 * (int) (tap_random (&state) % 15);
  job.levels = 2 + (int) (tap_random (&state) % 255);

  cpu = es_engine_new (ES_BACKEND_CPU, &error);
  if (!tap_ok (cpu != NULL, "CPU engine%s", why (&error)) || !random_image (&state, &in))
    return tap_done ();
  tap_diag ("%s fault, entropy %dx%d %s, window %d, %d levels", mode, in.width, in.height, es_format_name (in.format),
            job.window, job.levels);
  if (!tap_ok (es_run (cpu, &job, &in, &expected, NULL, &error), "CPU reference%s", why (&error)))
    return tap_done ();

  setenv ("ES_CUDA_FAULT", mode, 1);
  engine = es_engine_new (ES_BACKEND_AUTO, &error);
  if (engine == NULL || es_engine_backend (engine) != ES_BACKEND_CUDA)
    {
      const char *reason = engine ? es_engine_cuda_reason (engine) : error.message;
      if (expect_cuda || test_cuda_required ())
        tap_ok (false, "CUDA is in use with ES_CUDA_FAULT=%s (the fault must fire in a job): %s", mode, reason);
      else
        tap_skip (reason, "CUDA fault injection");
      es_engine_free (engine);
      es_engine_free (cpu);
      es_image_clear (&in);
      es_image_clear (&expected);
      return tap_done ();
    }
  tap_diag ("%s", es_engine_describe (engine));

  /* The faulty job: CUDA fails, the CPU finishes it, the user hears once. */
  error = (EsError){ 0 };
  tap_ok (es_run (engine, &job, &in, &out, &timing, &error), "the faulty job succeeds%s", why (&error));
  tap_ok (timing.fell_back, "it fell back to the CPU");
  tap_ok (timing.backend == ES_BACKEND_CPU, "the CPU produced the result");
  tap_ok (images_equal (&out, &expected), "the result equals the CPU engine's exactly");
  notice = es_engine_take_notice (engine);
  tap_ok (notice != NULL && notice[0] != '\0', "a notice tells the user: %s", notice ? notice : "(none)");
  notice_message (notice ? notice : "", message, sizeof message);
  /* The engine keeps a shorter reason than notice: compare the start. */
  if (strlen (message) > 100)
    message[100] = '\0';
  tap_ok (es_engine_take_notice (engine) == NULL, "the notice is given once");

  if (sticky)
    {
      const char *reason = es_engine_cuda_reason (engine);

      tap_ok (es_engine_backend (engine) == ES_BACKEND_CPU, "after a sticky error the engine is on the CPU");
      tap_ok (reason[0] != '\0' && message[0] != '\0' && strstr (reason, message) != NULL,
              "the CUDA reason names the error: \"%s\" in \"%s\"", message, reason);
      tap_ok (strstr (es_engine_describe (engine), reason) != NULL, "the description shows it: %s",
              es_engine_describe (engine));

      error = (EsError){ 0 };
      again = es_engine_new (ES_BACKEND_AUTO, &error);
      tap_ok (again != NULL && es_engine_backend (again) == ES_BACKEND_CPU && es_engine_cuda_reason (again)[0] != '\0',
              "a new auto engine stays on the CPU for the process: %s",
              again ? es_engine_cuda_reason (again) : error.message);
      es_engine_free (again);
      error = (EsError){ 0 };
      again = es_engine_new (ES_BACKEND_CUDA, &error);
      tap_ok (again == NULL && error.code == ES_ERROR_UNAVAILABLE, "a new CUDA engine is refused: %s", error.message);
      es_engine_free (again);

      error = (EsError){ 0 };
      tap_ok (es_run (engine, &job, &in, &out, &timing, &error) && !timing.fell_back && timing.backend == ES_BACKEND_CPU
                && images_equal (&out, &expected),
              "the next job runs on the CPU, no fallback, same result%s", why (&error));
    }
  else
    {
      tap_ok (es_engine_backend (engine) == ES_BACKEND_CUDA, "after a one-off %s error the engine keeps CUDA", mode);
      error = (EsError){ 0 };
      tap_ok (es_run (engine, &job, &in, &out, &timing, &error), "the next job succeeds%s", why (&error));
      tap_ok (!timing.fell_back && timing.backend == ES_BACKEND_CUDA, "it runs on CUDA (fell_back %d, backend %s)",
              timing.fell_back, es_backend_name (timing.backend));
      float worst = max_difference (&out, &expected);
      tap_ok (worst <= 1e-5f, "it matches the CPU within 1e-5 (max difference %.3g)", worst);
    }
  tap_ok (es_engine_take_notice (engine) == NULL, "no notice after a clean job");

  es_engine_free (engine);
  es_engine_free (cpu);
  es_image_clear (&in);
  es_image_clear (&expected);
  es_image_clear (&out);
  return tap_done ();
}

/* Re-runs this program with --mode MODE and relays its TAP points, prefixed
 * with the mode, as points of this run. */
static void
relay_mode (const char *mode)
{
  char *argv[] = { "test-faults", "--mode", (char *) mode, "--expect-cuda", NULL };
  posix_spawn_file_actions_t actions;
  int pipe_fds[2], status, err, plan = -1, relayed = 0;
  pid_t pid;
  FILE *child;
  char *line = NULL;
  size_t line_size = 0;
  ssize_t length;

  if (pipe (pipe_fds) != 0)
    {
      tap_ok (false, "%s: pipe: %s", mode, strerror (errno));
      return;
    }
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose (&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose (&actions, pipe_fds[1]);
  fflush (stdout);
  err = posix_spawn (&pid, "/proc/self/exe", &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  close (pipe_fds[1]);
  if (err != 0)
    {
      close (pipe_fds[0]);
      tap_ok (false, "%s: cannot start a child: %s", mode, strerror (err));
      return;
    }

  child = fdopen (pipe_fds[0], "r");
  while (child != NULL && (length = getline (&line, &line_size, child)) > 0)
    {
      const char *desc, *skip;
      bool ok = strncmp (line, "ok ", 3) == 0;

      if (line[length - 1] == '\n')
        line[length - 1] = '\0';
      if (ok || strncmp (line, "not ok ", 7) == 0)
        {
          relayed++;
          desc = strstr (line, " - ");
          desc = desc ? desc + 3 : line;
          skip = strstr (desc, " # SKIP ");
          if (skip != NULL)
            {
              char what[512];
              snprintf (what, sizeof what, "%s: %.*s", mode, (int) (skip - desc), desc);
              tap_skip (skip + 8, what);
            }
          else
            tap_ok (ok, "%s: %s", mode, desc);
        }
      else if (strncmp (line, "1..", 3) == 0)
        plan = atoi (line + 3);
      else if (strncmp (line, "# ", 2) == 0)
        tap_diag ("%s: %s", mode, line + 2);
      else
        tap_diag ("%s: %s", mode, line);
    }
  free (line);
  if (child != NULL)
    fclose (child);
  else
    close (pipe_fds[0]);

  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFSIGNALED (status))
    tap_ok (false, "%s: the child was killed by signal %d (%s)", mode, WTERMSIG (status),
            strsignal (WTERMSIG (status)));
  else
    tap_ok (WIFEXITED (status) && plan == relayed && relayed > 0,
            "%s: the child finished its plan (%d of %d points, exit status %d)", mode, relayed, plan,
            WEXITSTATUS (status));
}

/* Without a usable CUDA device the engine says why and keeps computing. */
static void
check_without_cuda (unsigned long long *state)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);
  EsImage in = { 0 }, expected = { 0 }, out = { 0 };
  EsError error = { 0 };
  EsTiming timing;
  EsEngine *engine = es_engine_new (ES_BACKEND_AUTO, &error), *cpu, *cuda;
  const char *reason;

  if (!tap_ok (engine != NULL, "an auto engine%s", why (&error)))
    return;
  tap_diag ("%s", es_engine_describe (engine));
  if (es_engine_backend (engine) == ES_BACKEND_CUDA)
    {
      tap_skip ("a CUDA device is in use", "auto engine without CUDA");
      es_engine_free (engine);
      return;
    }
  reason = es_engine_cuda_reason (engine);
  tap_ok (!test_cuda_required (), "CUDA is not required (ES_TEST_REQUIRE_CUDA=1 needs it): %s", reason);
  tap_ok (reason[0] != '\0', "the auto engine says why CUDA is off: %s", reason);
  tap_ok (strstr (es_engine_describe (engine), reason) != NULL, "the description contains the reason");

  cuda = es_engine_new (ES_BACKEND_CUDA, &error);
  tap_ok (cuda == NULL && error.code == ES_ERROR_UNAVAILABLE && error.message[0] != '\0',
          "a CUDA engine is refused with UNAVAILABLE (%s): %s", es_error_code_name (error.code), error.message);
  es_engine_free (cuda);

  /* The auto engine computes what the CPU engine computes, with no fallback. */
  error = (EsError){ 0 };
  cpu = es_engine_new (ES_BACKEND_CPU, &error);
  if (tap_ok (cpu != NULL, "a CPU engine%s", why (&error)) && random_image (state, &in))
    {
      tap_ok (es_run (cpu, &job, &in, &expected, NULL, &error) && es_run (engine, &job, &in, &out, &timing, &error),
              "entropy runs%s", why (&error));
      tap_ok (!timing.fell_back && timing.backend == ES_BACKEND_CPU && images_equal (&out, &expected),
              "on the CPU, no fallback, the CPU engine's result");
      tap_ok (es_engine_take_notice (engine) == NULL, "no notice");
    }
  es_engine_free (cpu);
  es_engine_free (engine);
  es_image_clear (&in);
  es_image_clear (&expected);
  es_image_clear (&out);
}

int
main (int argc, char **argv)
{
  unsigned long long state;
  char seed[32];
  EsEngine *engine;
  EsError error = { 0 };
  bool have_cuda;

  /* test-faults --mode MODE [--expect-cuda]: one mode, as the parent runs it. */
  if ((argc == 3 || argc == 4) && strcmp (argv[1], "--mode") == 0)
    return run_mode (argv[2], argc == 4 && strcmp (argv[3], "--expect-cuda") == 0);

  /* The children replay from the same seed. */
  state = tap_seed ();
  snprintf (seed, sizeof seed, "%llu", state);
  setenv ("ES_TEST_SEED", seed, 1);
  unsetenv ("ES_CUDA_FAULT");

  engine = es_engine_new (ES_BACKEND_AUTO, &error);
  have_cuda = engine != NULL && es_engine_backend (engine) == ES_BACKEND_CUDA;
  for (size_t i = 0; i < sizeof fault_modes / sizeof fault_modes[0]; i++)
    {
      if (have_cuda)
        relay_mode (fault_modes[i]);
      else
        {
          char what[64];
          snprintf (what, sizeof what, "%s: CUDA fault injection", fault_modes[i]);
          tap_skip (engine ? es_engine_cuda_reason (engine) : error.message, what);
        }
    }
  es_engine_free (engine);

  check_without_cuda (&state);
  return tap_done ();
}
