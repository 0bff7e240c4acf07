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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
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
  EsPages *pages;
  bool ok;

  *image = (EsImage){ 0 };
  if (notice_size > 0)
    notice[0] = '\0';
  if (request->cells)
    return es_load_cells_fd (fd, image, error);
  if ((pages = es_pages_open_fd (fd, request->levels, error)) == NULL)
    return false;
  if (es_pages_count (pages) > 1)
    {
      char why[160] = "";
      EsError unreadable = { 0 };

      ok = es_pages_load_volume (pages, &request->choice, image, notice, notice_size, error);
      /* Pages that make no volume (a thumbnail or a reduced-resolution
       * copy beside the image, pages of other formats): the first page
       * alone, with a notice that says why. A damaged page still fails,
       * and an OME-TIFF's channel or time point asks for the volume. */
      if (!ok && error->code == ES_ERROR_FORMAT && !request->choice.channel_given && !request->choice.time_given
          && !es_pages_alike (pages, why, sizeof why, &unreadable) && why[0] != '\0')
        {
          es_error_clear (error);
          ok = es_pages_load (pages, 0, image, error);
          if (ok && notice_size > 0)
            snprintf (notice, notice_size, "page 1 of %d shown; %s", es_pages_count (pages), why);
        }
    }
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

/* A private page in front of the shared pixels holds where the mapping
 * starts and its length, which es_image_clear's release (given only the
 * pixels) needs to unmap, where the child cannot write them. */
typedef struct {
  void *base;
  size_t length;
} MappingFrame;

static void
release_mapped (void *pixels)
{
  MappingFrame frame;

  memcpy (&frame, (uint8_t *) pixels - sysconf (_SC_PAGESIZE), sizeof frame);
  munmap (frame.base, frame.length);
}

/* Whether a value map and pixel size can be what a decoder gives: known
 * kinds and units, finite numbers, sizes not negative. */
static bool
meta_valid (const EsImageMeta *meta)
{
  return meta->stored >= ES_STORED_UNSIGNED && meta->stored <= ES_STORED_FLOAT && meta->length_unit >= ES_LENGTH_NONE
         && meta->length_unit < ES_N_LENGTH_UNITS && isfinite (meta->value_offset) && isfinite (meta->value_scale)
         && isfinite (meta->pixel_width) && meta->pixel_width >= 0 && isfinite (meta->pixel_height)
         && meta->pixel_height >= 0 && isfinite (meta->pixel_depth)
         && meta->pixel_depth >= 0
         /* Only floats have NaN and infinities to count. */
         && (meta->stored == ES_STORED_FLOAT || (meta->nan_samples == 0 && meta->infinite_samples == 0));
}

/* One image as the child describes it: its answer's, or a stack page's. */
typedef struct {
  int32_t width, height, planes, format, depth, levels;
  uint32_t maxval;
  uint64_t stride, plane_stride, pixel_offset;
  EsImageMeta meta;
} ImageHeader;

static ImageHeader
answer_header (const EsSandboxAnswer *answer)
{
  return (ImageHeader){ answer->width,        answer->height,       answer->planes, answer->format,
                        answer->depth,        answer->levels,       answer->maxval, answer->stride,
                        answer->plane_stride, answer->pixel_offset, answer->meta };
}

/* Checks the child's description against the pixel file, final by now,
 * and gives the image: mapped copy-on-write (the caller may write into
 * it, and nothing can change it behind the caller's back), or, under
 * 2 MiB, read into memory of its own (cheaper than a mapping of its own). */
static bool
map_image (int pixels_fd, const ImageHeader *h, EsImage *image, EsError *error)
{
  const size_t page = sysconf (_SC_PAGESIZE), huge = (size_t) 2 << 20;
  size_t sample, bytes, done = 0;
  int planes = h->planes > 1 ? h->planes : 1;
  struct stat st;
  MappingFrame frame;
  uint8_t *pixels;

  if (h->format < ES_FORMAT_U8 || h->format > ES_FORMAT_F32 || h->width < 1 || h->height < 1 || h->planes < 0
      || h->depth < 1 || h->depth > 16 || h->levels < 0)
    return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an invalid image header");
  if (!meta_valid (&h->meta))
    return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an invalid value map or pixel size");
  if (!es_image_check_volume_size (h->width, h->height, planes, (EsFormat) h->format, error))
    return false;
  sample = es_format_size ((EsFormat) h->format);
  bytes = (size_t) h->width * sample * (size_t) h->height * (size_t) planes;
  if (h->stride != (uint64_t) h->width * sample
      || h->plane_stride != (planes > 1 ? h->stride * (uint64_t) h->height : 0) || h->pixel_offset % page != 0
      || fstat (pixels_fd, &st) != 0 || h->pixel_offset > (uint64_t) st.st_size
      || bytes > (uint64_t) st.st_size - h->pixel_offset || h->meta.nan_samples > bytes / sample
      || h->meta.infinite_samples > bytes / sample - h->meta.nan_samples)
    return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an image that its memory does not hold");
  if (bytes < huge)
    {
      if (!es_image_alloc_volume (image, h->width, h->height, planes, (EsFormat) h->format, h->depth, error))
        return false;
      while (done < bytes)
        {
          ssize_t n = pread (pixels_fd, (uint8_t *) image->pixels + done, bytes - done,
                             (off_t) (h->pixel_offset + done));
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              es_image_clear (image);
              return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder's pixels cannot be read");
            }
          done += (size_t) n;
        }
      image->levels = h->levels;
      image->maxval = h->maxval;
      image->meta = h->meta;
      return true;
    }
  /* The pixels start at a 2 MiB boundary, as they do in the file, so that
   * a file of 2 MiB pages is mapped 2 MiB a fault; the frame's page is
   * just before. */
  frame.length = huge + bytes;
  frame.base = mmap (NULL, frame.length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (frame.base == MAP_FAILED)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot map %zu MiB of decoded pixels", bytes >> 20);
  pixels = (uint8_t *) (((uintptr_t) frame.base + page + huge - 1) & ~(uintptr_t) (huge - 1));
  if (mmap (pixels - page, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED
      || mmap (pixels, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, pixels_fd, (off_t) h->pixel_offset)
           == MAP_FAILED)
    {
      munmap (frame.base, frame.length);
      return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot map %zu MiB of decoded pixels", bytes >> 20);
    }
  /* Not populated: the caller's first pass maps the pages 16 to a fault
   * (fault-around) or 2 MiB to one, which here is faster than
   * MADV_POPULATE_READ followed by that pass. */
  memcpy (pixels - page, &frame, sizeof frame);
  *image = (EsImage){
    .width = h->width,
    .height = h->height,
    .stride = h->stride,
    .planes = h->planes > 1 ? h->planes : 0,
    .plane_stride = h->plane_stride,
    .format = (EsFormat) h->format,
    .depth = h->depth,
    .levels = h->levels,
    .maxval = h->maxval,
    .meta = h->meta,
    .pixels = pixels,
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

/* This process's environment, with OpenMP's threads told to sleep when
 * idle rather than spin: the helper's threads would otherwise spin through
 * its start, its answer and its end, which doubled its fixed cost (16 ms
 * of CPU against 8.5 for a 512² PNG), and its decoders' few parallel
 * regions lose nothing by it. NULL when out of memory. */
static char **
helper_environment (void)
{
  static const char passive[] = "OMP_WAIT_POLICY=passive";
  size_t count = 0, kept = 0;
  char **copy;

  while (environ[count] != NULL)
    count++;
  copy = malloc ((count + 2) * sizeof *copy);
  if (copy == NULL)
    return NULL;
  for (size_t i = 0; i < count; i++)
    if (strncmp (environ[i], "OMP_WAIT_POLICY=", 16) != 0 && strncmp (environ[i], "GOMP_SPINCOUNT=", 15) != 0)
      copy[kept++] = environ[i];
  copy[kept++] = (char *) passive;
  copy[kept] = NULL;
  return copy;
}

static bool
spawn_helper (const char *helper, int input, int pixels, int answer, uint64_t file_bytes,
              const EsDecodeRequest *request, int batch, pid_t *pid, EsError *error)
{
  char args[ES_SANDBOX_ARGC - 1][32];
  char *argv[ES_SANDBOX_ARGC + 1];
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  sigset_t none, all;
  char **environment = helper_environment ();
  int err;

  if (environment == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot start the sandbox's decoder: out of memory");

  snprintf (args[0], sizeof args[0], "%d", request->levels);
  snprintf (args[1], sizeof args[1], "%llu", (unsigned long long) es_image_get_max_pixels ());
  snprintf (args[2], sizeof args[2], "%llu", (unsigned long long) es_load_get_max_file_size ());
  snprintf (args[3], sizeof args[3], "%d", request->choice.channel);
  snprintf (args[4], sizeof args[4], "%d", request->choice.time);
  snprintf (args[5], sizeof args[5], "%d", request->choice.channel_given);
  snprintf (args[6], sizeof args[6], "%d", request->choice.time_given);
  snprintf (args[7], sizeof args[7], "%llu", (unsigned long long) address_space_limit (file_bytes));
  snprintf (args[8], sizeof args[8], "%llu", (unsigned long long) pixel_file_limit ());
  snprintf (args[9], sizeof args[9], "%d", request->cells);
  snprintf (args[10], sizeof args[10], "%d", batch);
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
  err = posix_spawn (pid, helper, &actions, &attributes, argv, environment);
  free (environment);
  posix_spawnattr_destroy (&attributes);
  posix_spawn_file_actions_destroy (&actions);
  if (err != 0)
    return es_error_set (error, ES_ERROR_UNAVAILABLE, "cannot start the sandbox's decoder %s: %s", helper,
                         strerror (err));
  return true;
}

/* Keeps the one descriptor that came with a message, closing any other. */
static void
take_descriptors (struct msghdr *message, int *sent_fd)
{
  for (struct cmsghdr *c = CMSG_FIRSTHDR (message); c != NULL; c = CMSG_NXTHDR (message, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN (0)) / sizeof (int); i++)
        {
          int fd;

          memcpy (&fd, CMSG_DATA (c) + i * sizeof fd, sizeof fd);
          if (*sent_fd < 0)
            *sent_fd = fd;
          else
            close (fd);
        }
}

/* Waits for the answer, one message, until the child ends without one
 * (its socket closes), the time limit passes, or the load is cancelled (an
 * interruption, or the request's cancel_fd). Returns the bytes received (0 for none, or for a message cut
 * short), or -1 with *timed_out or *cancelled set; *sent_fd gets the
 * descriptor that came with the answer, or stays -1. */
static ssize_t
read_answer (int fd, const EsDecodeRequest *request, EsSandboxAnswer *answer, int64_t deadline, int *sent_fd,
             bool *timed_out, bool *cancelled)
{
  for (;;)
    {
      struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
                               { .fd = request->cancellable ? request->cancel_fd : -1, .events = POLLIN } };
      int64_t left = deadline - monotonic_ms ();
      union {
        struct cmsghdr header;
        char bytes[CMSG_SPACE (sizeof (int))];
      } control;
      struct iovec part = { .iov_base = answer, .iov_len = sizeof *answer };
      struct msghdr message = {
        .msg_iov = &part, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof control.bytes
      };
      ssize_t n;
      int ready;

      if (left <= 0)
        {
          *timed_out = true;
          return -1;
        }
      ready = poll (pfd, 2, left > INT_MAX ? INT_MAX : (int) left);
      if ((ready < 0 && errno == EINTR && es_control_cancelled (es_load_get_interrupt ()))
          || (ready > 0 && pfd[1].revents != 0))
        {
          *cancelled = true;
          return -1;
        }
      if (ready <= 0 || pfd[0].revents == 0)
        continue;
      n = recvmsg (fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      take_descriptors (&message, sent_fd);
      if (n < 0 || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        return 0;
      return n;
    }
}

/* Waits for the child to end: it is about to (it answered, or its socket
 * closed), or it is stopped here, or at the deadline. The child is always
 * reaped. */
static int
reap (pid_t pid, int pidfd, bool stop, int64_t deadline)
{
  int status = 0;

  if (!stop)
    while (waitpid (pid, &status, WNOHANG) == 0)
      {
        int64_t left = deadline - monotonic_ms ();

        if (left <= 0)
          {
            stop = true;
            break;
          }
        /* The pidfd turns readable as the child ends; without one (a
         * kernel before 5.3), a nap of a millisecond. */
        if (pidfd >= 0)
          poll (&(struct pollfd){ .fd = pidfd, .events = POLLIN }, 1, left > INT_MAX ? INT_MAX : (int) left);
        else
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

/* Whether a descriptor that came with the answer is the child's own pixel
 * file: a regular, unnamed file on a file system that none of the
 * descriptors it was given lies on. A subverted child could otherwise send
 * one of those (this process's standard error, say) to be read as pixels. */
static bool
child_made (int sent, const int given[], int count)
{
  struct stat file, other;

  if (fstat (sent, &file) != 0 || !S_ISREG (file.st_mode) || file.st_nlink != 0)
    return false;
  for (int i = 0; i < count; i++)
    if (fstat (given[i], &other) == 0 && other.st_dev == file.st_dev)
      return false;
  return true;
}

/* Makes the pixel file final: the parent's memory file, which the child
 * wrote before it answered and never mapped, is sealed; the child's own
 * file cannot be sealed (only memory files can), and is final now that the
 * child, its only other holder, has ended. Returns the file to map, or -1. */
static int
final_pixels (int memory_file, int sent, int input, EsError *error)
{
  const int given[] = { STDOUT_FILENO, STDERR_FILENO, input, memory_file };

  if (sent >= 0 && !child_made (sent, given, (int) (sizeof given / sizeof *given)))
    {
      es_error_set (error, ES_ERROR_FORMAT, "the decoder handed over a file that is not its pixels");
      return -1;
    }
  if (sent < 0 && !seal_pixels (memory_file))
    {
      es_error_set (error, ES_ERROR_FORMAT, "the decoder's pixels could not be sealed");
      return -1;
    }
  return sent >= 0 ? sent : memory_file;
}

/* Runs the helper on fd (batch: 0 for one image, else a stack's batch from
 * page batch - 1) and waits for it to end. True when it answered with
 * success: *pixels is then the final pixel file (closed by the caller).
 * Otherwise error says why: the child's own error, or how it ended. */
static bool
run_helper (int fd, const EsDecodeRequest *request, int batch, EsSandboxAnswer *answer, int *pixels_out, EsError *error)
{
  const char *reason, *helper;
  int input = -1, pixels = -1, sockets[2] = { -1, -1 }, answer_fd = -1, sent = -1, pidfd = -1;
  bool timed_out = false, cancelled = false, complete, ok = false;
  uint64_t file_bytes;
  int64_t limit_ms, deadline;
  struct stat st;
  ssize_t got;
  pid_t pid;
  int status;

  *answer = (EsSandboxAnswer){ 0 };
  *pixels_out = -1;
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
  /* Sequenced packets: the answer arrives whole, in one message, with the
   * child's pixel file beside it. */
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) == 0)
    answer_fd = high_fd (sockets[1]);
  if (input < 0 || pixels < 0 || answer_fd < 0)
    {
      es_error_set (error, ES_ERROR_UNAVAILABLE, "cannot prepare the sandbox: %s", strerror (errno));
      goto out;
    }
  if (!spawn_helper (helper, input, pixels, answer_fd, file_bytes, request, batch, &pid, error))
    goto out;
  deadline = monotonic_ms () + limit_ms;
  pidfd = pidfd_open (pid, 0);
  /* The child holds the other end now: its end is the socket's end. */
  close (answer_fd);
  close (sockets[1]);
  answer_fd = sockets[1] = -1;
  got = read_answer (sockets[0], request, answer, deadline, &sent, &timed_out, &cancelled);
  complete = got == (ssize_t) sizeof *answer && answer->magic == ES_SANDBOX_MAGIC;
  status = reap (pid, pidfd, got < 0, deadline);

  if (cancelled)
    es_error_set (error, ES_ERROR_CANCELLED, "interrupted");
  else if (!complete || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    child_failed (status, limit_ms, timed_out, error);
  else if (answer->error_code != ES_OK)
    {
      answer->message[sizeof answer->message - 1] = '\0';
      es_error_set (error,
                    answer->error_code > ES_OK && answer->error_code <= ES_ERROR_CANCELLED
                      ? (EsErrorCode) answer->error_code
                      : ES_ERROR_FORMAT,
                    "%s", answer->message);
    }
  else if ((*pixels_out = final_pixels (pixels, sent, input, error)) >= 0)
    {
      answer->notice[sizeof answer->notice - 1] = '\0';
      /* The caller closes the one it maps. */
      if (*pixels_out == sent)
        sent = -1;
      else
        pixels = -1;
      ok = true;
    }
out:
  for (int i = 0; i < 2; i++)
    if (sockets[i] >= 0)
      close (sockets[i]);
  if (input >= 0)
    close (input);
  if (pixels >= 0)
    close (pixels);
  if (answer_fd >= 0)
    close (answer_fd);
  if (sent >= 0)
    close (sent);
  if (pidfd >= 0)
    close (pidfd);
  return ok;
}

bool
es_sandbox_decode_fd (int fd, const EsDecodeRequest *request, EsImage *image, char *notice, size_t notice_size,
                      EsError *error)
{
  EsSandboxAnswer answer;
  ImageHeader header;
  int pixels;
  bool ok;

  *image = (EsImage){ 0 };
  if (notice_size > 0)
    notice[0] = '\0';
  if (!run_helper (fd, request, 0, &answer, &pixels, error))
    return false;
  header = answer_header (&answer);
  ok = map_image (pixels, &header, image, error);
  close (pixels);
  if (ok && notice_size > 0)
    snprintf (notice, notice_size, "%s", answer.notice);
  return ok;
}

/* ---- a stack, a batch of pages at a time ---- */

void
es_sandbox_stack_clear (EsSandboxStack *stack)
{
  for (int i = 0; stack->images != NULL && i < stack->decoded; i++)
    es_image_clear (&stack->images[i]);
  free (stack->images);
  free (stack->notices);
  free (stack->shapes);
  *stack = (EsSandboxStack){ 0 };
}

/* Reads the batch's table from the pixel file and takes its pages: the
 * shapes of them all (first 0), and the decoded pages' images. */
static bool
take_batch (int pixels, const EsSandboxAnswer *answer, int first, EsSandboxStack *stack, EsError *error)
{
  size_t size = (size_t) answer->table_count * sizeof (EsSandboxPage), done = 0;
  EsSandboxPage *table;
  struct stat st;
  int decoded = 0;
  bool ok = true;

  if (answer->page_count < 1 || first >= answer->page_count || answer->table_first != first || answer->table_count < 1
      || answer->table_count > answer->page_count - first || (first == 0 && answer->table_count != answer->page_count)
      || (first > 0 && answer->page_count != stack->count) || fstat (pixels, &st) != 0
      || answer->table_offset > (uint64_t) st.st_size || size > (uint64_t) st.st_size - answer->table_offset)
    return es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an invalid table of pages");
  if ((table = malloc (size)) == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot read a table of %d pages", answer->table_count);
  while (ok && done < size)
    {
      ssize_t n = pread (pixels, (uint8_t *) table + done, size - done, (off_t) (answer->table_offset + done));
      ok = n > 0 || (n < 0 && errno == EINTR);
      done += n > 0 ? (size_t) n : 0;
    }
  if (!ok)
    es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder's table of pages cannot be read");
  /* The decoded pages come first in the table, one at least. */
  while (ok && decoded < answer->table_count && table[decoded].decoded)
    decoded++;
  ok = ok && (decoded > 0 || es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave no page"));
  if (ok && first == 0)
    {
      stack->count = answer->page_count;
      ok = (stack->shapes = calloc ((size_t) stack->count, sizeof *stack->shapes)) != NULL
           || es_error_set (error, ES_ERROR_NO_MEMORY, "cannot describe %d pages", stack->count);
      for (int i = 0; ok && i < stack->count; i++)
        {
          ok = table[i].format >= ES_FORMAT_U8 && table[i].format <= ES_FORMAT_F32
               && es_image_check_size (table[i].width, table[i].height, (EsFormat) table[i].format, error);
          stack->shapes[i] = (EsPageShape){ table[i].width, table[i].height, (EsFormat) table[i].format,
                                            table[i].depth };
        }
      if (!ok && error->code == ES_OK)
        es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave an invalid table of pages");
    }
  ok = ok
       && ((stack->images = calloc ((size_t) decoded, sizeof *stack->images)) != NULL
           && (stack->notices = calloc ((size_t) decoded, sizeof *stack->notices)) != NULL);
  if (ok)
    {
      stack->first = first;
      stack->decoded = decoded;
    }
  for (int i = 0; ok && i < decoded; i++)
    {
      const EsSandboxPage *entry = &table[i];
      ImageHeader header = {
        entry->width,        entry->height, 0, entry->format, entry->depth, entry->levels, entry->maxval, 0, 0,
        entry->pixel_offset, entry->meta
      };
      const EsPageShape *shape = &stack->shapes[first + i];

      if (entry->format >= ES_FORMAT_U8 && entry->format <= ES_FORMAT_F32)
        header.stride = (uint64_t) entry->width * es_format_size ((EsFormat) entry->format);
      /* The page is the one its shape promised. */
      ok = (entry->width == shape->width && entry->height == shape->height && entry->format == (int32_t) shape->format
            && entry->depth == shape->depth)
           || es_error_set (error, ES_ERROR_FORMAT, "the sandboxed decoder gave page %d unlike its description",
                            first + i + 1);
      ok = ok && map_image (pixels, &header, &stack->images[i], error);
      memcpy (stack->notices[i], entry->notice, sizeof stack->notices[i]);
      stack->notices[i][sizeof stack->notices[i] - 1] = '\0';
    }
  free (table);
  if (!ok && error->code == ES_OK)
    es_error_set (error, ES_ERROR_NO_MEMORY, "cannot hold a batch of %d pages", decoded);
  return ok;
}

bool
es_sandbox_decode_stack (int fd, const EsDecodeRequest *request, int first, EsSandboxStack *stack, EsError *error)
{
  EsSandboxAnswer answer;
  int pixels;
  bool ok;

  for (int i = 0; stack->images != NULL && i < stack->decoded; i++)
    es_image_clear (&stack->images[i]);
  free (stack->images);
  free (stack->notices);
  stack->images = NULL;
  stack->notices = NULL;
  stack->decoded = 0;
  if (first < 0 || (first > 0 && first >= stack->count))
    return es_error_set (error, ES_ERROR_INVALID, "page %d of a stack of %d", first + 1, stack->count);
  /* Each batch reads the file from its start. */
  if (lseek (fd, 0, SEEK_SET) != 0 && first > 0)
    return es_error_set (error, ES_ERROR_IO, "cannot read the stack again: %s", strerror (errno));
  if (!run_helper (fd, request, first + 1, &answer, &pixels, error))
    return false;
  ok = take_batch (pixels, &answer, first, stack, error);
  close (pixels);
  return ok;
}

bool
es_decode_path (const char *path, bool sandboxed, const EsDecodeRequest *request, EsImage *image, char *notice,
                size_t notice_size, EsError *error)
{
  int fd;
  bool ok;

  *image = (EsImage){ 0 };
  if (notice_size > 0)
    notice[0] = '\0';
  while ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR
         && !es_control_cancelled (es_load_get_interrupt ()))
    ;
  if (fd < 0 && errno == EINTR)
    return es_error_set (error, ES_ERROR_CANCELLED, "interrupted");
  if (fd < 0)
    return es_error_set (error, ES_ERROR_IO, "%s", strerror (errno));
  ok = sandboxed ? es_sandbox_decode_fd (fd, request, image, notice, notice_size, error)
                 : es_decode_fd (fd, request, image, notice, notice_size, error);
  close (fd);
  return ok;
}

int
es_sandbox_open_stack (const char *path, EsError *error)
{
  uint64_t limit = es_load_get_max_file_size (), held = 0;
  int fd, copy = -1;
  struct stat st;
  uint8_t piece[64 << 10];
  ssize_t n = 0;

  while ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR
         && !es_control_cancelled (es_load_get_interrupt ()))
    ;
  if (fd < 0)
    {
      es_error_set (error, errno == EINTR ? ES_ERROR_CANCELLED : ES_ERROR_IO, "%s",
                    errno == EINTR ? "interrupted" : strerror (errno));
      return -1;
    }
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    return fd;
  /* A pipe is read once: held in a memory file, within the size limit. */
  copy = memfd_create ("entroscope-input", MFD_CLOEXEC);
  while (copy >= 0 && (n = read (fd, piece, sizeof piece)) != 0)
    {
      if (n < 0 && errno == EINTR && !es_control_cancelled (es_load_get_interrupt ()))
        continue;
      if (n < 0 || (held += (uint64_t) n) > limit || write (copy, piece, (size_t) n) != n)
        {
          es_error_set (error, n < 0 && errno == EINTR ? ES_ERROR_CANCELLED : ES_ERROR_IO, "%s",
                        n < 0 && errno == EINTR ? "interrupted"
                        : held > limit          ? "file is larger than the limit"
                                                : strerror (errno));
          close (copy);
          copy = -1;
        }
    }
  if (copy < 0 && n == 0)
    es_error_set (error, ES_ERROR_NO_MEMORY, "cannot hold the file: %s", strerror (errno));
  close (fd);
  return copy;
}

bool
es_decode_memory (const void *data, size_t size, bool sandboxed, const EsDecodeRequest *request, EsImage *image,
                  char *notice, size_t notice_size, EsError *error)
{
  int fd = memfd_create ("entroscope-input", MFD_CLOEXEC);
  size_t done = 0;
  bool ok;

  *image = (EsImage){ 0 };
  if (notice_size > 0)
    notice[0] = '\0';
  if (fd < 0)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot hold the file: %s", strerror (errno));
  while (done < size)
    {
      ssize_t n = write (fd, (const uint8_t *) data + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          close (fd);
          return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot hold the file: %s", strerror (errno));
        }
      done += (size_t) n;
    }
  lseek (fd, 0, SEEK_SET);
  ok = sandboxed ? es_sandbox_decode_fd (fd, request, image, notice, notice_size, error)
                 : es_decode_fd (fd, request, image, notice, notice_size, error);
  close (fd);
  return ok;
}
