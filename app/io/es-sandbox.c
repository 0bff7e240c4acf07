/* SPDX-License-Identifier: MIT */
/* es_decode_fd, and the parent's side of the sandbox: spawning entroscope-decode, bounding it, mapping its pixels. */
#include "es-sandbox.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "es-load.h"
#include "es-sandbox-protocol.h"
#include "es-test-hooks.h"

extern char **environ;

bool
es_decode_fd (int fd, const EsDecodeRequest *request, EsImage *image, char *notice, size_t notice_size, EsError *error)
{
  EsPages *pages = es_pages_open_fd (fd, request->levels, error);
  bool ok;

  *image = (EsImage){ 0 };
  if (notice_size > 0)
    notice[0] = '\0';
  if (pages == NULL)
    return false;
  if (es_pages_count (pages) > 1 && request->stack_as_volume)
    ok = es_pages_load_volume (pages, &request->choice, image, notice, notice_size, error);
  else if (es_pages_count (pages) > 1)
    ok = es_error_set (error, ES_ERROR_INVALID,
                       "a multi-page TIFF (%d pages) is decoded in the sandbox only as a volume, by a 3-D job",
                       es_pages_count (pages));
  else
    {
      ok = es_pages_load (pages, 0, image, error);
      if (es_pages_notice (pages) != NULL && notice_size > 0)
        snprintf (notice, notice_size, "%s", es_pages_notice (pages));
    }
  es_pages_close (pages);
  return ok;
}

/* ---- finding the helper ---- */

/* The helper next to this build's programs when the running program is one
 * of them (tests, ./dev run), else the installed one: a build never runs an
 * older installed helper, nor an installed program a build's. */
static const char *
helper_path (void)
{
#ifdef ES_HAVE_SECCOMP
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  size_t root = strlen (ES_BUILD_ROOT);

  if (n > 0 && (size_t) n > root && strncmp (self, ES_BUILD_ROOT, root) == 0 && self[root] == '/')
    return ES_DECODE_HELPER_BUILD;
  return ES_DECODE_HELPER;
#else
  return NULL;
#endif
}

bool
es_sandbox_available (const char **reason)
{
  const char *helper = helper_path ();
  static char missing[PATH_MAX + 64];

  if (helper == NULL)
    {
      if (reason)
        *reason = "built without libseccomp";
      return false;
    }
  if (access (helper, X_OK) != 0)
    {
      snprintf (missing, sizeof missing, "its helper %s is missing", helper);
      if (reason)
        *reason = missing;
      return false;
    }
  return true;
}

/* ---- limits ---- */

/* Decoding runs at 40–170 MB of file a second here (a text matrix at the
 * slow end, a PNG at the fast one), and a small file can hold at most the
 * pixel budget: 10 s, plus 1 s per 16 MiB, leaves a margin of ten at least
 * for honest files on a loaded machine, and ends a hang in seconds. */
static int64_t
time_limit_ms (uint64_t file_bytes)
{
  int test_ms = es_test_hook_sandbox_timeout_ms ();

  return test_ms > 0 ? test_ms : 10000 + (int64_t) (file_bytes >> 24) * 1000;
}

/* Room for the largest image (a float page held as F32 while its U16 is
 * made: 6 bytes a pixel; a volume's planes: 2 more), the file itself
 * (libdeflate inflates a PNG's IDAT whole; a TIFF not in a regular file is
 * held in memory) and the libraries, threads and stacks. */
static uint64_t
address_space_limit (uint64_t file_bytes)
{
  return (1ull << 30) + 4 * file_bytes + 12 * es_image_get_max_pixels ();
}

/* The memory file holds the image and, for a float page, its F32 copy. */
static uint64_t
pixel_file_limit (void)
{
  return (64ull << 20) + 8 * es_image_get_max_pixels ();
}

static int64_t
monotonic_ms (void)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---- the pixels, mapped from the memory file ---- */

/* A private page in front of the shared pixels holds the mapping's length,
 * which es_image_clear's release (given only the pixels) needs to unmap,
 * where the child cannot write it. */
static void
release_mapped (void *pixels)
{
  uint8_t *base = (uint8_t *) pixels - sysconf (_SC_PAGESIZE);
  size_t length;

  memcpy (&length, base, sizeof length);
  munmap (base, length);
}

/* Checks the child's answer against the memory file, sealed by now, and
 * maps the pixels copy-on-write: the caller may write into its image, and
 * nothing can change it behind the caller's back. */
/* Whether a value map and pixel size can be what a decoder gives: known
 * kinds and units, finite numbers, sizes not negative. */
static bool
meta_valid (const EsImageMeta *meta)
{
  return meta->stored >= ES_STORED_UNSIGNED && meta->stored <= ES_STORED_FLOAT && meta->length_unit >= ES_LENGTH_NONE
         && meta->length_unit < ES_N_LENGTH_UNITS && isfinite (meta->value_offset) && isfinite (meta->value_scale)
         && isfinite (meta->pixel_width) && meta->pixel_width >= 0 && isfinite (meta->pixel_height)
         && meta->pixel_height >= 0 && isfinite (meta->pixel_depth) && meta->pixel_depth >= 0;
}

static bool
map_image (int pixels_fd, const EsSandboxAnswer *answer, EsImage *image, EsError *error)
{
  size_t page = sysconf (_SC_PAGESIZE);
  size_t sample, bytes, length;
  int planes = answer->planes > 1 ? answer->planes : 1;
  struct stat st;
  uint8_t *base;

  if (answer->format < ES_FORMAT_U8 || answer->format > ES_FORMAT_F32 || answer->width < 1 || answer->height < 1
      || answer->planes < 0 || answer->depth < 1 || answer->depth > 16 || answer->levels < 0)
    return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an invalid image header");
  if (!meta_valid (&answer->meta))
    return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an invalid value map or pixel size");
  if (!es_image_check_volume_size (answer->width, answer->height, planes, (EsFormat) answer->format, error))
    return false;
  sample = es_format_size ((EsFormat) answer->format);
  bytes = (size_t) answer->width * sample * (size_t) answer->height * (size_t) planes;
  if (answer->stride != (uint64_t) answer->width * sample
      || answer->plane_stride != (planes > 1 ? answer->stride * (uint64_t) answer->height : 0)
      || fstat (pixels_fd, &st) != 0 || bytes > (uint64_t) st.st_size)
    return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an image that its memory does not hold");
  length = page + bytes;
  base = mmap (NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot map %zu MiB of decoded pixels", bytes >> 20);
  if (mmap (base + page, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, pixels_fd, 0) == MAP_FAILED)
    {
      munmap (base, length);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot map %zu MiB of decoded pixels", bytes >> 20);
    }
  /* Not populated: the caller's first pass maps the pages 16 to a fault
   * (fault-around), which here is faster than MADV_POPULATE_READ, page
   * by page, followed by that pass. */
  memcpy (base, &length, sizeof length);
  *image = (EsImage){
    .width = answer->width,
    .height = answer->height,
    .stride = answer->stride,
    .planes = answer->planes > 1 ? answer->planes : 0,
    .plane_stride = answer->plane_stride,
    .format = (EsFormat) answer->format,
    .depth = answer->depth,
    .levels = answer->levels,
    .maxval = answer->maxval,
    .meta = answer->meta,
    .pixels = base + page,
    .release = release_mapped,
  };
  return true;
}

/* Seals the memory file against any change: it fails while a writable
 * mapping of it is left (EBUSY). */
static bool
seal_pixels (int fd)
{
  return fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
}

/* ---- the child ---- */

/* How the child ended, as the error a user reads. */
static bool
child_failed (int status, int64_t limit_ms, bool timed_out, EsError *error)
{
  if (timed_out)
    return es_error_set (error, ES_ERROR_LIMIT,
                         "the decoder took longer than its time limit of %.1f s, and was stopped", limit_ms / 1000.0);
  if (WIFSIGNALED (status) && WTERMSIG (status) == SIGSYS)
    return es_error_set (error, ES_ERROR_FORMAT,
                         "the sandbox stopped the decoder: it made a system call that decoding never needs "
                         "(a file, the network, a process)");
  if (WIFSIGNALED (status) && WTERMSIG (status) == SIGXFSZ)
    return es_error_set (error, ES_ERROR_LIMIT, "the decoder wrote more pixels than the pixel budget allows");
  if (WIFSIGNALED (status))
    return es_error_set (error, ES_ERROR_FORMAT, "the decoder crashed (SIG%s, %s)",
                         sigabbrev_np (WTERMSIG (status)) ? sigabbrev_np (WTERMSIG (status)) : "?",
                         strsignal (WTERMSIG (status)));
  return es_error_set (error, ES_ERROR_FORMAT, "the decoder ended (status %d) without an answer",
                       WIFEXITED (status) ? WEXITSTATUS (status) : -1);
}

/* Moves a descriptor to 10 or above, close-on-exec, so that putting the
 * three in place as 3, 4 and 5 in the child never overwrites one with another. */
static int
high_fd (int fd)
{
  return fcntl (fd, F_DUPFD_CLOEXEC, 10);
}

static bool
spawn_helper (const char *helper, int input, int pixels, int answer, uint64_t file_bytes,
              const EsDecodeRequest *request, pid_t *pid, EsError *error)
{
  char args[ES_SANDBOX_ARGC - 1][32];
  char *argv[ES_SANDBOX_ARGC + 1];
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  sigset_t none, all;
  int err;

  snprintf (args[0], sizeof args[0], "%d", request->levels);
  snprintf (args[1], sizeof args[1], "%llu", (unsigned long long) es_image_get_max_pixels ());
  snprintf (args[2], sizeof args[2], "%llu", (unsigned long long) es_load_get_max_file_size ());
  snprintf (args[3], sizeof args[3], "%d", request->stack_as_volume);
  snprintf (args[4], sizeof args[4], "%d", request->choice.channel);
  snprintf (args[5], sizeof args[5], "%d", request->choice.time);
  snprintf (args[6], sizeof args[6], "%d", request->choice.channel_given);
  snprintf (args[7], sizeof args[7], "%d", request->choice.time_given);
  snprintf (args[8], sizeof args[8], "%llu", (unsigned long long) address_space_limit (file_bytes));
  snprintf (args[9], sizeof args[9], "%llu", (unsigned long long) pixel_file_limit ());
  argv[0] = (char *) "entroscope-decode";
  for (int i = 0; i < ES_SANDBOX_ARGC - 1; i++)
    argv[i + 1] = args[i];
  argv[ES_SANDBOX_ARGC] = NULL;

  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, input, ES_SANDBOX_FD_INPUT);
  posix_spawn_file_actions_adddup2 (&actions, pixels, ES_SANDBOX_FD_PIXELS);
  posix_spawn_file_actions_adddup2 (&actions, answer, ES_SANDBOX_FD_ANSWER);
  /* Whatever else this process has open (a window's sockets) stays here. */
  posix_spawn_file_actions_addclosefrom_np (&actions, ES_SANDBOX_FD_ANSWER + 1);
  /* The calling thread may block signals (the CLI's decoder thread does);
   * the helper starts with none blocked and every handler at its default. */
  posix_spawnattr_init (&attributes);
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attributes, &none);
  posix_spawnattr_setsigdefault (&attributes, &all);
  posix_spawnattr_setflags (&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  err = posix_spawn (pid, helper, &actions, &attributes, argv, environ);
  posix_spawnattr_destroy (&attributes);
  posix_spawn_file_actions_destroy (&actions);
  if (err != 0)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "cannot start the sandbox's decoder %s: %s", helper,
                         strerror (err));
  return true;
}

/* Reads the answer until it is whole, the child closes the pipe (by
 * ending), the time limit passes, or an interruption cancels the load.
 * Returns the bytes read, or -1 with *timed_out or *cancelled set. */
static ssize_t
read_answer (int fd, EsSandboxAnswer *answer, int64_t deadline, bool *timed_out, bool *cancelled)
{
  size_t got = 0;

  for (;;)
    {
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      int64_t left = deadline - monotonic_ms ();
      ssize_t n;
      int ready;

      if (left <= 0)
        {
          *timed_out = true;
          return -1;
        }
      ready = poll (&pfd, 1, left > INT_MAX ? INT_MAX : (int) left);
      if (ready < 0 && errno == EINTR && es_control_cancelled (es_load_get_interrupt ()))
        {
          *cancelled = true;
          return -1;
        }
      if (ready <= 0)
        continue;
      n = read (fd, (uint8_t *) answer + got, sizeof *answer - got);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
        return (ssize_t) got;
      if (n > 0)
        got += (size_t) n;
      /* The whole answer: the child ends next, or reap stops it. */
      if (got == sizeof *answer)
        return (ssize_t) got;
    }
}

/* Waits for the child to end: it already has (its answer's pipe is
 * closed), or it is stopped here. The child is always reaped. */
static int
reap (pid_t pid, bool stop, int64_t deadline)
{
  int status = 0;

  if (!stop)
    while (waitpid (pid, &status, WNOHANG) == 0)
      {
        /* Only a child that closed its pipe and went on running gets here
         * more than once. */
        if (monotonic_ms () >= deadline)
          {
            stop = true;
            break;
          }
        nanosleep (&(struct timespec){ .tv_nsec = 1000000 }, NULL);
      }
  if (stop)
    {
      kill (pid, SIGKILL);
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    }
  return status;
}

bool
es_sandbox_decode_fd (int fd, const EsDecodeRequest *request, EsImage *image, char *notice, size_t notice_size,
                      EsError *error)
{
  const char *reason, *helper;
  int input = -1, pixels = -1, pipe_fds[2] = { -1, -1 }, answer_fd = -1;
  EsSandboxAnswer answer = { 0 };
  bool timed_out = false, cancelled = false, complete, reaped = false, mapped = false, ok = false;
  uint64_t file_bytes;
  int64_t limit_ms, deadline;
  struct stat st;
  ssize_t got;
  pid_t pid;
  int status = 0;

  *image = (EsImage){ 0 };
  if (notice_size > 0)
    notice[0] = '\0';
  if (!es_sandbox_available (&reason) || (helper = helper_path ()) == NULL)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "cannot decode in a sandbox: %s", reason);
  file_bytes = fstat (fd, &st) == 0 && S_ISREG (st.st_mode) ? (uint64_t) st.st_size : es_load_get_max_file_size ();
  limit_ms = time_limit_ms (file_bytes);

  input = high_fd (fd);
  pixels = memfd_create ("entroscope-pixels", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (pixels >= 0)
    {
      int high = high_fd (pixels);
      close (pixels);
      pixels = high;
    }
  if (pipe2 (pipe_fds, O_CLOEXEC) == 0)
    answer_fd = high_fd (pipe_fds[1]);
  if (input < 0 || pixels < 0 || answer_fd < 0)
    {
      es_error_set (error, ES_ERROR_UNAVAILABLE, "cannot prepare the sandbox: %s", strerror (errno));
      goto out;
    }
  if (!spawn_helper (helper, input, pixels, answer_fd, file_bytes, request, &pid, error))
    goto out;
  deadline = monotonic_ms () + limit_ms;
  /* The child holds the writing end now: its end is the pipe's end. */
  close (answer_fd);
  close (pipe_fds[1]);
  answer_fd = pipe_fds[1] = -1;
  got = read_answer (pipe_fds[0], &answer, deadline, &timed_out, &cancelled);
  complete = got == (ssize_t) sizeof answer && answer.magic == ES_SANDBOX_MAGIC;
  if (complete && answer.error_code == ES_OK)
    {
      /* The child wrote its pixels before it answered, and never mapped
       * them: sealed, they are final while it ends, and are mapped
       * meanwhile. A child that mapped them (it could only be a subverted
       * one) is waited for. */
      bool sealed = seal_pixels (pixels);

      if (!sealed)
        {
          status = reap (pid, false, deadline);
          reaped = true;
          sealed = seal_pixels (pixels);
        }
      mapped = sealed && map_image (pixels, &answer, image, error);
    }
  if (!reaped)
    status = reap (pid, got < 0, deadline);

  if (cancelled)
    es_error_set (error, ES_ERROR_CANCELLED, "interrupted");
  else if (!complete || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    child_failed (status, limit_ms, timed_out, error);
  else if (answer.error_code != ES_OK)
    {
      answer.message[sizeof answer.message - 1] = '\0';
      es_error_set (error,
                    answer.error_code > ES_OK && answer.error_code <= ES_ERROR_CANCELLED
                      ? (EsErrorCode) answer.error_code
                      : ES_ERROR_FORMAT,
                    "%s", answer.message);
    }
  else if (!mapped)
    es_error_set (error, ES_ERROR_FORMAT, "the decoder's pixels could not be sealed");
  else
    {
      answer.notice[sizeof answer.notice - 1] = '\0';
      if (notice_size > 0)
        snprintf (notice, notice_size, "%s", answer.notice);
      ok = true;
    }
  if (!ok)
    es_image_clear (image);
out:
  if (input >= 0)
    close (input);
  if (pixels >= 0)
    close (pixels);
  if (answer_fd >= 0)
    close (answer_fd);
  for (int i = 0; i < 2; i++)
    if (pipe_fds[i] >= 0)
      close (pipe_fds[i]);
  return ok;
}

bool
es_sandbox_decode_memory (const void *data, size_t size, const EsDecodeRequest *request, EsImage *image, char *notice,
                          size_t notice_size, EsError *error)
{
  int fd = memfd_create ("entroscope-input", MFD_CLOEXEC);
  size_t done = 0;
  bool ok;

  *image = (EsImage){ 0 };
  if (fd < 0)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "cannot prepare the sandbox: %s", strerror (errno));
  while (done < size)
    {
      ssize_t n = write (fd, (const uint8_t *) data + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          close (fd);
          return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot hold the file for the sandbox: %s", strerror (errno));
        }
      done += (size_t) n;
    }
  lseek (fd, 0, SEEK_SET);
  ok = es_sandbox_decode_fd (fd, request, image, notice, notice_size, error);
  close (fd);
  return ok;
}
