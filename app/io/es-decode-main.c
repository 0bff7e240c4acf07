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
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "es-load.h"
#include "es-sandbox-protocol.h"
#include "es-sandbox.h"
#include "es-test-hooks.h"

/* ---- the pixels ---- */

/* The memory file that the parent gives gets 4 KiB pages (Debian's
 * shmem_enabled is "never"): each costs a fault in this process and again,
 * twice, in the parent, 30 % of an 8192² PNG's decode. A tmpfs mounted with
 * huge=always gets 2 MiB pages whatever that setting says, and an
 * unprivileged process may mount one in a user and mount namespace of its
 * own. The mount is never attached anywhere (fsmount), its one file is
 * unnamed (O_TMPFILE), and both are made before the filter, which then
 * forbids any other. Where user namespaces are off (a sysctl, an LSM), the
 * parent's memory file stays. */
static bool
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && write (fd, text, strlen (text)) == (ssize_t) strlen (text);

  if (fd >= 0)
    close (fd);
  return ok;
}

static bool
use_huge_page_file (unsigned long long max_bytes)
{
  uid_t uid = getuid ();
  gid_t gid = getgid ();
  char map[64], size[32];
  int context = -1, mount = -1, file = -1;
  bool ok;

  /* The tmpfs's files belong to this user inside the namespace too:
   * O_TMPFILE refuses an owner that maps to nobody. */
  ok = unshare (CLONE_NEWUSER | CLONE_NEWNS) == 0 && write_file ("/proc/self/setgroups", "deny")
       && snprintf (map, sizeof map, "%u %u 1", (unsigned) uid, (unsigned) uid) > 0
       && write_file ("/proc/self/uid_map", map)
       && snprintf (map, sizeof map, "%u %u 1", (unsigned) gid, (unsigned) gid) > 0
       && write_file ("/proc/self/gid_map", map);
  snprintf (size, sizeof size, "%llu", max_bytes);
  ok = ok && (context = fsopen ("tmpfs", FSOPEN_CLOEXEC)) >= 0
       && fsconfig (context, FSCONFIG_SET_STRING, "huge", "always", 0) == 0
       && fsconfig (context, FSCONFIG_SET_STRING, "size", size, 0) == 0
       && fsconfig (context, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0
       && (mount = fsmount (context, FSMOUNT_CLOEXEC, 0)) >= 0
       && (file = openat (mount, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) >= 0
       && dup3 (file, ES_SANDBOX_FD_PIXELS, 0) == ES_SANDBOX_FD_PIXELS;
  if (context >= 0)
    close (context);
  if (mount >= 0)
    close (mount);
  if (file >= 0)
    close (file);
  return ok;
}

/* In the huge-page file, the decoders' images are allocated straight from
 * it (es_image_set_allocator), each a block at a 2 MiB boundary mapped
 * shared, so that the decoded image is already where the parent maps it.
 * A released block's pages go back (a hole punched) and the block is
 * reused. Blocks under 2 MiB, and any past the table or the file's limit,
 * come from calloc: the image is then written into the file at the end. */
enum { HUGE_PAGE = 2 << 20, MAX_BLOCKS = 64 };

typedef struct {
  uint8_t *address; /* NULL while free */
  uint64_t offset, length;
} PixelBlock;

static PixelBlock blocks[MAX_BLOCKS];
static int block_count;
static uint64_t file_end, file_limit;

static PixelBlock *
find_block (const void *pixels)
{
  for (int i = 0; i < block_count; i++)
    if (blocks[i].address != NULL && blocks[i].address == pixels)
      return &blocks[i];
  return NULL;
}

static uint64_t
round_up (uint64_t bytes, uint64_t unit)
{
  return (bytes + unit - 1) & ~(unit - 1);
}

static void *
take_block (size_t bytes)
{
  uint64_t length = round_up (bytes, HUGE_PAGE), offset = round_up (file_end, HUGE_PAGE);
  PixelBlock *block = NULL;
  void *address;

  if (bytes < HUGE_PAGE)
    return NULL;
  for (int i = 0; i < block_count && block == NULL; i++)
    if (blocks[i].address == NULL && blocks[i].length >= length)
      block = &blocks[i];
  if (block == NULL)
    {
      if (block_count == MAX_BLOCKS || offset + length > file_limit
          || ftruncate (ES_SANDBOX_FD_PIXELS, (off_t) (offset + length)) != 0)
        return NULL;
      block = &blocks[block_count++];
      *block = (PixelBlock){ .offset = offset, .length = length };
      file_end = offset + length;
    }
  address = mmap (NULL, block->length, PROT_READ | PROT_WRITE, MAP_SHARED, ES_SANDBOX_FD_PIXELS, (off_t) block->offset);
  if (address == MAP_FAILED)
    return NULL;
  block->address = address;
  return address;
}

/* A punched hole reads as zeros again: a reused block is zeroed, as
 * calloc's memory would be. */
static void
release_block (void *pixels)
{
  PixelBlock *block = find_block (pixels);

  munmap (block->address, block->length);
  fallocate (ES_SANDBOX_FD_PIXELS, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t) block->offset,
             (off_t) block->length);
  block->address = NULL;
}

static const EsPixelAllocator block_allocator = { .take = take_block, .release = release_block };

/* Writes bytes into the pixel file past everything in it, at a page
 * boundary, with pwrite, by which the kernel allocates the file's pages as
 * it copies; says where. */
static bool
append (const void *bytes, size_t size, uint64_t *offset)
{
  size_t done = 0;

  *offset = round_up (file_end, (uint64_t) sysconf (_SC_PAGESIZE));
  while (done < size)
    {
      ssize_t n = pwrite (ES_SANDBOX_FD_PIXELS, (const uint8_t *) bytes + done, size - done, (off_t) (*offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      done += (size_t) n;
    }
  file_end = *offset + size;
  return true;
}

/* Puts the image in the pixel file, and says where: it is there already
 * when it was decoded into a block; else it is appended. */
static bool
place_pixels (const EsImage *image, uint64_t *offset)
{
  size_t bytes = image->stride * (size_t) image->height * (size_t) es_image_planes (image);
  const PixelBlock *block = find_block (image->pixels);

  if (block != NULL)
    {
      *offset = block->offset;
      return true;
    }
  return append (image->pixels, bytes, offset);
}

/* ---- a stack's batch ---- */

static void
describe_page (const EsImage *image, uint64_t offset, const char *notice, EsSandboxPage *entry)
{
  entry->width = image->width;
  entry->height = image->height;
  entry->format = (int32_t) image->format;
  entry->depth = image->depth;
  entry->levels = image->levels;
  entry->maxval = image->maxval;
  entry->decoded = 1;
  entry->pixel_offset = offset;
  entry->meta = image->meta;
  snprintf (entry->notice, sizeof entry->notice, "%s", notice ? notice : "");
}

/* The pages of the stack on the input from `first` (ES_SANDBOX_BATCH_BYTES
 * and _PAGES), each image in the pixel file, then the table (every page's
 * size and format when first is 0), as es_sandbox_decode_stack reads them.
 * A decoded page's image stays where it is until this process ends. */
static bool
decode_stack (int levels, int first, EsSandboxAnswer *answer, EsError *error)
{
  EsPages *pages = es_pages_open_fd (ES_SANDBOX_FD_INPUT, levels, error);
  EsSandboxPage *table = NULL;
  uint64_t bytes = 0;
  int count, table_count, decoded = 0;
  bool ok;

  if (pages == NULL)
    return false;
  count = es_pages_count (pages);
  table_count = first == 0 ? count : count - first < ES_SANDBOX_BATCH_PAGES ? count - first : ES_SANDBOX_BATCH_PAGES;
  ok = first < count || es_error_set (error, ES_ERROR_FORMAT, "the file has %d pages, not %d", count, first + 1);
  ok = ok
       && ((table = calloc ((size_t) table_count, sizeof *table)) != NULL
           || es_error_set (error, ES_ERROR_NO_MEMORY, "cannot describe %d pages", table_count));
  for (int i = 0; ok && first == 0 && i < count; i++)
    {
      EsFormat format;
      bool floats;

      ok = es_pages_size (pages, i, &table[i].width, &table[i].height, error)
           && es_pages_format (pages, i, &format, &table[i].depth, &floats, error);
      table[i].format = (int32_t) format;
    }
  for (int i = first; ok && i < count && decoded < ES_SANDBOX_BATCH_PAGES && bytes < ES_SANDBOX_BATCH_BYTES; i++)
    {
      EsImage image = { 0 };
      uint64_t offset = 0;

      ok = es_pages_load (pages, i, &image, error)
           && (place_pixels (&image, &offset)
               || es_error_set (error, ES_ERROR_NO_MEMORY, "cannot hand over the pixels: %s", strerror (errno)));
      if (ok)
        describe_page (&image, offset, es_pages_notice (pages), &table[i - (first == 0 ? 0 : first)]);
      bytes += image.stride * (uint64_t) image.height;
      decoded++;
      /* An image in a block is where the parent maps it; one appended is
       * copied. */
      if (find_block (image.pixels) == NULL)
        es_image_clear (&image);
    }
  ok = ok
       && (append (table, (size_t) table_count * sizeof *table, &answer->table_offset)
           || es_error_set (error, ES_ERROR_NO_MEMORY, "cannot hand over the pages: %s", strerror (errno)));
  answer->page_count = count;
  answer->table_first = first == 0 ? 0 : first;
  answer->table_count = table_count;
  free (table);
  es_pages_close (pages);
  return ok;
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

  /* Leave speculative store bypass as it is: kernels before 5.16 disable
   * it in every filtered process by default (spec_store_bypass_disable=
   * seccomp), which slows each store-to-load forwarding in the decoders,
   * and this process holds nothing but the file it was given, so there is
   * nothing for it to leak to itself. A kernel that refuses the flag gets
   * the filter without it. */
  if (ok)
    (void) seccomp_attr_set (filter, SCMP_FLTATR_CTL_SSB, 1);
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
       && allow (filter, SCMP_SYS (sendmsg), 1, SCMP_A0 (SCMP_CMP_EQ, ES_SANDBOX_FD_ANSWER))
       && allow (filter, SCMP_SYS (write), 1, SCMP_A0 (SCMP_CMP_EQ, STDERR_FILENO));
  /* The images in the pixel file: grown for a new block, a released
   * block's pages given back (the file stays within RLIMIT_FSIZE and its
   * tmpfs's size). The answer goes with sendmsg, which may carry that file
   * (a descriptor this process holds: the parent accepts only one on a
   * file system that none of the descriptors it gave is on). */
  ok = ok && allow (filter, SCMP_SYS (ftruncate), 1, pixels) && allow (filter, SCMP_SYS (fallocate), 1, pixels);
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
    case ES_TEST_DECODER_FAULT_FOREIGN: /* at the answer */
    case ES_TEST_DECODER_FAULT_NONE: break;
    }
}

/* ---- main ---- */

/* One message: the answer, and a descriptor when `send` is one (the pixel
 * file when it is this process's own: the parent has the memory file it
 * gave). */
static void
answer_with (const EsSandboxAnswer *answer, int send)
{
  union {
    struct cmsghdr header;
    char bytes[CMSG_SPACE (sizeof (int))];
  } control = { 0 };
  struct iovec part = { .iov_base = (void *) answer, .iov_len = sizeof *answer };
  struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1 };
  ssize_t n;

  if (send >= 0)
    {
      message.msg_control = control.bytes;
      message.msg_controllen = sizeof control.bytes;
      control.header.cmsg_level = SOL_SOCKET;
      control.header.cmsg_type = SCM_RIGHTS;
      control.header.cmsg_len = CMSG_LEN (sizeof send);
      memcpy (CMSG_DATA (&control.header), &send, sizeof send);
    }
  while ((n = sendmsg (ES_SANDBOX_FD_ANSWER, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  if (n != (ssize_t) sizeof *answer)
    _exit (1);
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
  bool own_pixel_file;
  uint64_t offset = 0;

  if (argc != ES_SANDBOX_ARGC)
    {
      fprintf (stderr, "entroscope-decode is started by entroscope and entroscope-cli --sandbox, not by hand\n");
      return 2;
    }
  for (int i = 0; i < ES_SANDBOX_ARGC - 1; i++)
    if (!parse_u64 (argv[i + 1], &v[i]))
      return 2;
  if (v[10] > INT32_MAX)
    return 2;
  request = (EsDecodeRequest){
    .levels = (int) v[0],
    .choice = { .channel = (int) v[3], .time = (int) v[4], .channel_given = v[5] != 0, .time_given = v[6] != 0 },
    .cells = v[9] != 0,
  };
  es_image_set_max_pixels (v[1]);
  es_load_set_max_file_size (v[2]);

  /* While this process may still write its own /proc files (not once it
   * is no longer dumpable) and has one thread (unshare's condition). */
  own_pixel_file = !es_test_hook_sandbox_memory_file () && use_huge_page_file (v[8]);
  file_limit = v[8];
  if (own_pixel_file)
    es_image_set_allocator (&block_allocator);

  /* No core file of a crash (the file that made it could be in it), a
   * bounded address space, and a bounded memory file (a write past
   * RLIMIT_FSIZE raises SIGXFSZ). */
  if (prctl (PR_SET_DUMPABLE, 0) != 0 || !set_limit (RLIMIT_CORE, 0) || !set_limit (RLIMIT_FSIZE, v[8]))
    return 3;
#ifndef __SANITIZE_ADDRESS__
  /* AddressSanitizer reserves terabytes of address space for its shadow:
   * a sanitizer build goes without this limit. */
  if (!set_limit (RLIMIT_AS, v[7]))
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

  if (error.code == ES_OK && v[10] > 0)
    {
      if (!decode_stack (request.levels, (int) (v[10] - 1), &answer, &error))
        {
          answer.error_code = error.code;
          memcpy (answer.message, error.message, sizeof answer.message);
        }
    }
  else if (error.code == ES_OK
           && es_decode_fd (ES_SANDBOX_FD_INPUT, &request, &image, answer.notice, sizeof answer.notice, &error)
           && (place_pixels (&image, &offset)
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
      answer.pixel_offset = offset;
    }
  else
    {
      answer.error_code = error.code;
      memcpy (answer.message, error.message, sizeof answer.message);
    }
  answer_with (&answer, fault == ES_TEST_DECODER_FAULT_FOREIGN ? STDERR_FILENO
                        : own_pixel_file                       ? ES_SANDBOX_FD_PIXELS
                                                               : -1);
  /* No exit handlers: a leak checker's would need calls the filter forbids. */
  _exit (0);
}
