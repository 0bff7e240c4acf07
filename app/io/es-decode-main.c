/* SPDX-License-Identifier: MIT */
/* entroscope-decode: decodes one file under a seccomp filter, its pixels into shared memory (es-sandbox.c starts it). */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "es-load.h"
#include "es-sandbox-protocol.h"
#include "es-sandbox.h"
#include "es-test-hooks.h"

/* ---- the pixels ---- */

/* The image goes into the memory file by pwrite: the kernel allocates its
 * pages as it copies, and this process never maps them. Decoding straight
 * into a shared mapping of it was twice as slow here (memory files get
 * 4 KiB pages, where the decoders' own buffers get 2 MiB ones: every page
 * then costs a fault to map and again to unmap, PERFORMANCE.md "Files");
 * and with no mapping left, the parent can seal the file against writes
 * the moment it has the answer. */
static bool
write_pixels (const EsImage *image)
{
  size_t bytes = image->stride * (size_t) image->height * (size_t) es_image_planes (image);
  size_t done = 0;

  while (done < bytes)
    {
      ssize_t n = pwrite (ES_SANDBOX_FD_PIXELS, (const uint8_t *) image->pixels + done, bytes - done, (off_t) done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      done += (size_t) n;
    }
  return true;
}

/* ---- the filter ---- */

static bool
allow (scmp_filter_ctx filter, int call, unsigned int count, ...)
{
  struct scmp_arg_cmp rules[3];
  va_list args;

  va_start (args, count);
  for (unsigned int i = 0; i < count; i++)
    rules[i] = va_arg (args, struct scmp_arg_cmp);
  va_end (args);
  return seccomp_rule_add_array (filter, SCMP_ACT_ALLOW, call, count, rules) == 0;
}

/* From here on the process can read its file, write its memory file, map
 * memory, run threads and answer: anything else (opening a file, a socket,
 * another process, a write elsewhere, executable memory) kills it with
 * SIGSYS, which the parent reports. */
static bool
install_filter (void)
{
  scmp_filter_ctx filter = seccomp_init (SCMP_ACT_KILL_PROCESS);
  const struct scmp_arg_cmp input = SCMP_A0 (SCMP_CMP_EQ, ES_SANDBOX_FD_INPUT);
  const struct scmp_arg_cmp pixels = SCMP_A0 (SCMP_CMP_EQ, ES_SANDBOX_FD_PIXELS);
  const struct scmp_arg_cmp no_exec_mmap = SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
  bool ok = filter != NULL;

  /* The file, and fstat on it and on the memory file (glibc's fstat is
   * newfstatat with an empty path). */
  ok = ok && allow (filter, SCMP_SYS (read), 1, input) && allow (filter, SCMP_SYS (pread64), 1, input)
       && allow (filter, SCMP_SYS (lseek), 1, input) && allow (filter, SCMP_SYS (fstat), 1, input)
       && allow (filter, SCMP_SYS (fstat), 1, pixels)
       && allow (filter, SCMP_SYS (newfstatat), 2, input, SCMP_A3 (SCMP_CMP_EQ, AT_EMPTY_PATH))
       && allow (filter, SCMP_SYS (newfstatat), 2, pixels, SCMP_A3 (SCMP_CMP_EQ, AT_EMPTY_PATH));
  /* Memory: the heap, the pixels, thread stacks; never executable. */
  ok = ok && allow (filter, SCMP_SYS (mmap), 1, no_exec_mmap) && allow (filter, SCMP_SYS (mprotect), 1, no_exec_mmap)
       && allow (filter, SCMP_SYS (munmap), 0) && allow (filter, SCMP_SYS (mremap), 0)
       && allow (filter, SCMP_SYS (brk), 0) && allow (filter, SCMP_SYS (madvise), 0);
  /* The pixels, the answer, and the decoders' warnings on standard error. */
  ok = ok && allow (filter, SCMP_SYS (pwrite64), 1, pixels)
       && allow (filter, SCMP_SYS (write), 1, SCMP_A0 (SCMP_CMP_EQ, ES_SANDBOX_FD_ANSWER))
       && allow (filter, SCMP_SYS (write), 1, SCMP_A0 (SCMP_CMP_EQ, STDERR_FILENO));
  /* Threads (OpenMP's pool, decoding a PNG's bands) and the end. clone3's
   * arguments lie in memory that a filter cannot read: ENOSYS makes glibc
   * fall back to clone, whose flags it can. */
  ok = ok && allow (filter, SCMP_SYS (clone), 1, SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD))
       && seccomp_rule_add (filter, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (clone3), 0) == 0
       && allow (filter, SCMP_SYS (futex), 0) && allow (filter, SCMP_SYS (set_robust_list), 0)
       && allow (filter, SCMP_SYS (rseq), 0) && allow (filter, SCMP_SYS (sched_yield), 0)
       && allow (filter, SCMP_SYS (sched_getaffinity), 0) && allow (filter, SCMP_SYS (sysinfo), 0)
       && allow (filter, SCMP_SYS (gettid), 0) && allow (filter, SCMP_SYS (getpid), 0)
       && allow (filter, SCMP_SYS (rt_sigprocmask), 0) && allow (filter, SCMP_SYS (rt_sigreturn), 0)
       && allow (filter, SCMP_SYS (rt_sigaction), 0) && allow (filter, SCMP_SYS (clock_gettime), 0)
       && allow (filter, SCMP_SYS (clock_nanosleep), 0) && allow (filter, SCMP_SYS (nanosleep), 0)
       && allow (filter, SCMP_SYS (exit), 0) && allow (filter, SCMP_SYS (exit_group), 0);
#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer's runtime swaps signal stacks as threads end. */
  ok = ok && allow (filter, SCMP_SYS (sigaltstack), 0);
#endif
  /* abort() raises SIGABRT at itself: an assertion in a library is a crash. */
  ok = ok && allow (filter, SCMP_SYS (tgkill), 1, SCMP_A0 (SCMP_CMP_EQ, (scmp_datum_t) getpid ()));
  ok = ok && seccomp_load (filter) == 0;
  if (filter != NULL)
    seccomp_release (filter);
  return ok;
}

/* ---- the test faults ---- */

/* What a decoder gone wrong would do, once the filter is in place. A
 * decoder that runs out of memory fails as es_image_alloc does. */
static void
misbehave (EsTestDecoderFault fault, EsError *error)
{
  size_t allocated = 0;

  /* An address in the first page, which is never mapped (and not NULL,
   * which UndefinedBehaviorSanitizer would catch first). */
  static int *volatile unmapped = (int *) 64;
  static volatile uint64_t spins;
  char head[64];
  int fd;

  switch (fault)
    {
    case ES_TEST_DECODER_FAULT_CRASH: *unmapped = 1; break;
    case ES_TEST_DECODER_FAULT_HANG:
      for (;;)
        spins++;
    case ES_TEST_DECODER_FAULT_OPEN:
      /* The filter kills the process here; if it ever did not, the answer
       * would carry the file's first bytes, for the tests to refuse. */
      fd = open ("/etc/passwd", O_RDONLY);
      if (fd >= 0 && read (fd, head, sizeof head - 1) > 0)
        {
          head[sizeof head - 1] = '\0';
          es_error_set (error, ES_ERROR_FORMAT, "read /etc/passwd: %s", head);
        }
      break;
    case ES_TEST_DECODER_FAULT_MEMORY:
      for (;;)
        {
          void *block = malloc (64 << 20);
          if (block == NULL)
            break;
          memset (block, 1, 64 << 20);
          allocated += 64 << 20;
        }
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate more than %zu MiB", allocated >> 20);
      break;
    case ES_TEST_DECODER_FAULT_NONE: break;
    }
}

/* ---- main ---- */

static void
answer_with (const EsSandboxAnswer *answer)
{
  size_t done = 0;

  while (done < sizeof *answer)
    {
      ssize_t n = write (ES_SANDBOX_FD_ANSWER, (const uint8_t *) answer + done, sizeof *answer - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        _exit (1);
      done += (size_t) n;
    }
}

/* Written from the warm-up region, so that the compiler keeps it. */
static volatile int threads_started;

static bool
parse_u64 (const char *text, unsigned long long *value)
{
  char *end;

  errno = 0;
  *value = strtoull (text, &end, 10);
  return errno == 0 && end != text && *end == '\0';
}

static bool
set_limit (int resource, unsigned long long bytes)
{
  struct rlimit limit = { bytes, bytes };

  return setrlimit (resource, &limit) == 0;
}

int
main (int argc, char **argv)
{
  unsigned long long v[ES_SANDBOX_ARGC - 1];
  EsSandboxAnswer answer = { .magic = ES_SANDBOX_MAGIC };
  EsDecodeRequest request;
  EsError error = { 0 };
  EsImage image = { 0 };
  EsTestDecoderFault fault = es_test_hook_decoder_fault ();

  if (argc != ES_SANDBOX_ARGC)
    {
      fprintf (stderr, "entroscope-decode is started by entroscope and entroscope-cli --sandbox, not by hand\n");
      return 2;
    }
  for (int i = 0; i < ES_SANDBOX_ARGC - 1; i++)
    if (!parse_u64 (argv[i + 1], &v[i]))
      return 2;
  request = (EsDecodeRequest){
    .levels = (int) v[0],
    .stack_as_volume = v[3] != 0,
    .choice = { .channel = (int) v[4], .time = (int) v[5], .channel_given = v[6] != 0, .time_given = v[7] != 0 },
  };
  es_image_set_max_pixels (v[1]);
  es_load_set_max_file_size (v[2]);

  /* No core file of a crash (the file that made it could be in it), a
   * bounded address space, and a bounded memory file (a write past
   * RLIMIT_FSIZE raises SIGXFSZ). */
  if (prctl (PR_SET_DUMPABLE, 0) != 0 || !set_limit (RLIMIT_CORE, 0) || !set_limit (RLIMIT_FSIZE, v[9]))
    return 3;
#ifndef __SANITIZE_ADDRESS__
  /* AddressSanitizer reserves terabytes of address space for its shadow:
   * a sanitizer build goes without this limit. */
  if (!set_limit (RLIMIT_AS, v[8]))
    return 3;
#endif
    /* OpenMP starts its threads before the filter: the first parallel
   * region of a decode would otherwise make them under it. */
#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer's handler of a crash would read /proc to describe
   * it, which the filter forbids: a crash ends the process, as in a
   * normal build. */
  signal (SIGSEGV, SIG_DFL);
  signal (SIGBUS, SIG_DFL);
  signal (SIGFPE, SIG_DFL);
  signal (SIGILL, SIG_DFL);
#endif
#pragma omp parallel
  threads_started = omp_get_num_threads ();
  if (!install_filter ())
    return 3;
  misbehave (fault, &error);

  if (error.code == ES_OK
      && es_decode_fd (ES_SANDBOX_FD_INPUT, &request, &image, answer.notice, sizeof answer.notice, &error)
      && (write_pixels (&image)
          || es_error_set (&error, ES_ERROR_NO_MEMORY, "cannot hand over the pixels: %s", strerror (errno))))
    {
      answer.width = image.width;
      answer.height = image.height;
      answer.planes = image.planes;
      answer.format = (int32_t) image.format;
      answer.depth = image.depth;
      answer.levels = image.levels;
      answer.maxval = image.maxval;
      answer.meta = image.meta;
      answer.stride = image.stride;
      answer.plane_stride = image.plane_stride;
    }
  else
    {
      answer.error_code = error.code;
      memcpy (answer.message, error.message, sizeof answer.message);
    }
  answer_with (&answer);
  /* No exit handlers: a leak checker's would need calls the filter forbids. */
  _exit (0);
}
