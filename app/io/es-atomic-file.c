/* SPDX-License-Identifier: MIT */
/* Atomic file output: write a temporary file beside the target, then rename it over; special files are written straight. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-path.h"
#include "es-save.h"
#include "es-test-hooks.h"

struct EsAtomicFile {
  char *path;     /* the target as given, for messages */
  char *tmp_path; /* ".name.XXXXXX" in the target's folder; NULL when direct */
  char *target;   /* what the temporary file is renamed to: path, or the file a link points to */
  char *dir;      /* the target's folder, synced after the rename */
  bool direct;    /* a device, a FIFO or one of our descriptors: written straight, no rename */
  int fd;
  FILE *stream;
  int write_errno; /* the first write error, kept because stdio may lose errno */
  off_t written;   /* bytes written so far (the stream only appends) */
  off_t sent;      /* bytes handed to the disk's writeback by write_behind */
};

/* Bytes of a regular file handed to the disk as they are written, rather
 * than all at the fsync of commit: the disk then writes while the encoder
 * makes the next part (docs/performance/files.md, "Write-behind"). */
#define WRITE_BEHIND_BYTES ((off_t) 8 << 20)

/* "cannot write 'PATH': reason", the path shortened so that the reason
 * always fits in the message. */
static bool __attribute__ ((format (printf, 4, 5)))
fail (EsError *error, EsErrorCode code, const char *path, const char *format, ...)
{
  char shown[ES_PATH_MESSAGE_MAX + 1], reason[256];
  va_list args;

  va_start (args, format);
  vsnprintf (reason, sizeof reason, format, args);
  va_end (args);
  return es_error_set (error, code, "cannot write '%s': %s",
                       es_path_shorten (path, ES_PATH_MESSAGE_MAX, shown, sizeof shown), reason);
}

static EsControl *interrupt_control;

void
es_atomic_file_set_interrupt (EsControl *control)
{
  interrupt_control = control;
}

/* Failure injection (tests): 0 = off, n > 0 = the n-th write from now fails. */
static atomic_int inject_countdown;
static atomic_flag inject_env_read = ATOMIC_FLAG_INIT;

void
es_atomic_file_inject_failure (int nth_write)
{
  /* An explicit setting wins over the environment, so mark it as read. */
  atomic_flag_test_and_set (&inject_env_read);
  atomic_store (&inject_countdown, nth_write > 0 ? nth_write : 0);
}

static void
inject_read_env_once (void)
{
  if (atomic_flag_test_and_set (&inject_env_read))
    return;
  atomic_store (&inject_countdown, es_test_hook_write_failure ());
}

/* Test hook: ES_INJECT_WRITE_SIGNAL=N:SIG raises SIG just before the N-th
 * write into an atomic file, so that tests interrupt an export in the
 * middle of writing it (PNG or text) without relying on timing. */
static int signal_write_countdown;
static int signal_write_number;

static void
signal_read_env_once (void)
{
  static bool read;

  if (read)
    return;
  read = true;
  if (!es_test_hook_write_signal (&signal_write_countdown, &signal_write_number))
    signal_write_countdown = 0;
}

static void
signal_before_write (void)
{
  if (signal_write_countdown > 0 && --signal_write_countdown == 0)
    raise (signal_write_number);
}

/* True when this write must fail: counts down an armed injection. */
static bool
inject_should_fail (void)
{
  int n = atomic_load (&inject_countdown);
  while (n > 0)
    {
      if (atomic_compare_exchange_weak (&inject_countdown, &n, n - 1))
        return n == 1;
    }
  return false;
}

/* Starts the writeback of what was written since the last call, once that
 * is WRITE_BEHIND_BYTES, without waiting for it. A temporary file only: a
 * device or a pipe has no writeback. Failures are left to commit's fsync. */
static void
write_behind (EsAtomicFile *file)
{
  if (file->direct || file->written - file->sent < WRITE_BEHIND_BYTES)
    return;
#ifdef SYNC_FILE_RANGE_WRITE
  sync_file_range (file->fd, file->sent, file->written - file->sent, SYNC_FILE_RANGE_WRITE);
#endif
  file->sent = file->written;
}

static ssize_t
cookie_write (void *cookie, const char *buf, size_t size)
{
  EsAtomicFile *file = cookie;
  size_t done = 0;

  signal_before_write ();
  if (inject_should_fail ())
    {
      file->write_errno = ENOSPC;
      errno = ENOSPC;
      return 0;
    }
  if (es_control_cancelled (interrupt_control))
    {
      file->write_errno = ECANCELED;
      errno = ECANCELED;
      return 0;
    }
  while (done < size)
    {
      ssize_t n = write (file->fd, buf + done, size - done);
      /* A pipe whose reader is slow blocks a write; a signal that cancels
       * the process's control ends the wait rather than restarting it. */
      if (n < 0 && errno == EINTR && es_control_cancelled (interrupt_control))
        errno = ECANCELED;
      else if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = EIO;
          if (!file->write_errno)
            file->write_errno = errno;
          /* stdio treats a short count as an error; report nothing partial. */
          return 0;
        }
      done += (size_t) n;
      file->written += n;
      /* A signal that arrives after part of the data went in makes write
       * return that part; the rest would block again on a stalled reader. */
      if (done < size && es_control_cancelled (interrupt_control))
        {
          file->write_errno = ECANCELED;
          errno = ECANCELED;
          return 0;
        }
    }
  write_behind (file);
  return (ssize_t) size;
}

static int
cookie_close (void *cookie)
{
  EsAtomicFile *file = cookie;
  int fd = file->fd;

  file->fd = -1;
  return close (fd);
}

/* The process umask, read without umask(2), which would briefly change it
 * for every thread. */
static mode_t
current_umask (void)
{
  mode_t mask = 022;
  FILE *status = fopen ("/proc/self/status", "re");
  char line[256];

  if (!status)
    return mask;
  while (fgets (line, sizeof line, status))
    {
      unsigned int value;
      if (sscanf (line, "Umask: %o", &value) == 1)
        {
          mask = (mode_t) value;
          break;
        }
    }
  fclose (status);
  return mask;
}

static void
file_free (EsAtomicFile *file)
{
  free (file->path);
  free (file->tmp_path);
  free (file->target);
  free (file->dir);
  free (file);
}

/* The descriptor that a path names, when it names one of ours: /dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N or /proc/PID/fd/N with our PID,
 * also through symbolic links to them. Writing into the descriptor itself
 * keeps what the shell opened (its offset, its append mode), where opening
 * the path anew would truncate a redirected file or replace the link. */
static int
own_descriptor (const char *path)
{
  char current[PATH_MAX], next[PATH_MAX];

  if (strlen (path) >= sizeof current)
    return -1;
  strcpy (current, path);
  for (int hop = 0; hop < 40; hop++)
    {
      char prefix[64];
      struct stat st;
      const char *number = NULL;
      ssize_t n;
      int fd, end = 0;

      if (strcmp (current, "/dev/stdout") == 0)
        return STDOUT_FILENO;
      if (strcmp (current, "/dev/stderr") == 0)
        return STDERR_FILENO;
      snprintf (prefix, sizeof prefix, "/proc/%ld/fd/", (long) getpid ());
      if (strncmp (current, "/dev/fd/", 8) == 0)
        number = current + 8;
      else if (strncmp (current, "/proc/self/fd/", 14) == 0)
        number = current + 14;
      else if (strncmp (current, "/proc/thread-self/fd/", 21) == 0)
        number = current + 21;
      else if (strncmp (current, prefix, strlen (prefix)) == 0)
        number = current + strlen (prefix);
      if (number != NULL && sscanf (number, "%d%n", &fd, &end) == 1 && number[end] == '\0' && fd >= 0)
        return fd;

      if (lstat (current, &st) != 0 || !S_ISLNK (st.st_mode))
        return -1;
      n = readlink (current, next, sizeof next - 1);
      if (n < 0)
        return -1;
      next[n] = '\0';
      if (next[0] != '/')
        {
          /* Relative to the link's folder. */
          char *slash = strrchr (current, '/');
          size_t keep = slash ? (size_t) (slash - current) + 1 : 0;

          if (keep + (size_t) n >= sizeof next)
            return -1;
          memmove (next + keep, next, (size_t) n + 1);
          memcpy (next, current, keep);
        }
      strcpy (current, next);
    }
  return -1;
}

/* Sets up a direct file: no temporary file, no rename. */
static EsAtomicFile *
direct_file (EsAtomicFile *file, int fd)
{
  file->direct = true;
  file->fd = fd;
  return file;
}

/* Opens a target that is not a regular file for writing straight into it:
 * a device, a FIFO (which waits for a reader; a cancelling signal ends the
 * wait) or one of our own descriptors. Never replaces it. */
static EsAtomicFile *
open_direct (EsAtomicFile *file, const char *path, int own, EsError *error)
{
  int fd;

  if (own >= 0)
    {
      int flags = fcntl (own, F_GETFL);

      if (flags < 0)
        {
          fail (error, ES_ERROR_IO, path, "%s", strerror (errno));
          return NULL;
        }
      if ((flags & O_ACCMODE) == O_RDONLY)
        {
          fail (error, ES_ERROR_IO, path, "descriptor %d is not open for writing", own);
          return NULL;
        }
      fd = fcntl (own, F_DUPFD_CLOEXEC, 3);
      if (fd < 0)
        {
          fail (error, ES_ERROR_IO, path, "%s", strerror (errno));
          return NULL;
        }
      return direct_file (file, fd);
    }
  while ((fd = open (path, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0 && errno == EINTR)
    if (es_control_cancelled (interrupt_control))
      {
        es_error_set (error, ES_ERROR_CANCELLED, "'%s' was not written: interrupted", file->path);
        return NULL;
      }
  if (fd < 0)
    {
      fail (error, ES_ERROR_IO, path, "%s", strerror (errno));
      return NULL;
    }
  return direct_file (file, fd);
}

/* The temporary name: ".NAME.XXXXXX" beside the target, with NAME cut short
 * (between UTF-8 characters) where the whole would be longer than the
 * folder allows a name to be, so that any valid target name works. */
static char *
temporary_name (const char *dir, const char *target_dir_prefix, const char *base)
{
  long name_max = pathconf (dir, _PC_NAME_MAX);
  size_t keep = strlen (base);
  char *name;

  if (name_max <= 0)
    name_max = NAME_MAX;
  if (keep + 8 > (size_t) name_max)
    {
      keep = name_max > 8 ? (size_t) name_max - 8 : 0;
      while (keep > 0 && ((unsigned char) base[keep] & 0xc0) == 0x80)
        keep--;
    }
  if (asprintf (&name, "%s.%.*s.XXXXXX", target_dir_prefix, (int) keep, base) < 0)
    return NULL;
  return name;
}

/* An existing target is replaced only when it is a regular file or a link
 * to one. */
static bool
check_replaceable (const char *path, bool exists, const struct stat *st, bool is_link, EsError *error)
{
  if (exists && S_ISDIR (st->st_mode))
    {
      fail (error, ES_ERROR_IO, path, "%s", strerror (EISDIR));
      return false;
    }
  if (exists && !S_ISREG (st->st_mode))
    {
      /* A block device: an image written over a disk is never what was meant. */
      fail (error, ES_ERROR_IO, path, "not a regular file (a block device)");
      return false;
    }
  if (is_link && !exists)
    {
      fail (error, ES_ERROR_IO, path, "a dangling symbolic link");
      return false;
    }
  return true;
}

/* Where the replacement goes: file->target (a link to a regular file stays
 * a link: its target is replaced), its folder file->dir and the template
 * of the temporary file beside it, file->tmp_path. */
static bool
plan_replacement (EsAtomicFile *file, const char *path, bool is_link, EsError *error)
{
  const char *slash, *base, *target;
  char *resolved = NULL, *prefix;
  long name_max;

  if (is_link)
    {
      resolved = realpath (path, NULL);
      if (resolved == NULL)
        {
          fail (error, ES_ERROR_IO, path, "%s", strerror (errno));
          return false;
        }
    }
  target = resolved ? resolved : path;
  slash = strrchr (target, '/');
  base = slash ? slash + 1 : target;
  if (!*base || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    {
      fail (error, ES_ERROR_INVALID, path, "not a file name");
      free (resolved);
      return false;
    }
  file->target = resolved ? resolved : strdup (path);
  file->dir = slash ? (slash > target ? strndup (target, (size_t) (slash - target)) : strdup ("/")) : strdup (".");
  if (file->target && slash)
    prefix = strndup (target, (size_t) (slash - target) + 1);
  else
    prefix = strdup ("");
  if (!file->target || !file->dir || !prefix || !(file->tmp_path = temporary_name (file->dir, prefix, base)))
    {
      free (prefix);
      fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
      return false;
    }
  free (prefix);

  /* A name longer than the folder allows fails now, not at the rename. */
  name_max = pathconf (file->dir, _PC_NAME_MAX);
  if (strlen (base) > (size_t) (name_max > 0 ? name_max : NAME_MAX))
    {
      fail (error, ES_ERROR_IO, path, "%s", strerror (ENAMETOOLONG));
      return false;
    }
  return true;
}

/* Gives the open file its buffered stream; on failure, aborts it. */
static EsAtomicFile *
attach_stream (EsAtomicFile *file, const char *path, EsError *error)
{
  file->stream = fopencookie (file, "w",
                              (cookie_io_functions_t){
                                .write = cookie_write,
                                .close = cookie_close,
                              });
  if (!file->stream)
    {
      fail (error, ES_ERROR_NO_MEMORY, path, "%s", strerror (errno));
      es_atomic_file_abort (file);
      return NULL;
    }
  /* Large buffers: fewer system calls for multi-megabyte exports. */
  setvbuf (file->stream, NULL, _IOFBF, 1 << 16);
  return file;
}

EsAtomicFile *
es_atomic_file_open (const char *path, EsError *error)
{
  EsAtomicFile *file;
  struct stat st, lst;
  bool exists, is_link;
  mode_t mode;
  int own;

  inject_read_env_once ();
  signal_read_env_once ();
  if (!path || !*path)
    {
      es_error_set (error, ES_ERROR_INVALID, "no output file name given");
      return NULL;
    }

  file = calloc (1, sizeof *file);
  if (!file || !(file->path = strdup (path)))
    {
      free (file);
      fail (error, ES_ERROR_NO_MEMORY, path, "out of memory");
      return NULL;
    }
  file->fd = -1;

  /* Special targets are written straight, never replaced: a device, a FIFO
   * (-o /dev/stdout into a pipe), one of our own descriptors. */
  own = own_descriptor (path);
  exists = stat (path, &st) == 0;
  is_link = lstat (path, &lst) == 0 && S_ISLNK (lst.st_mode);
  if (own >= 0 || (exists && (S_ISCHR (st.st_mode) || S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode))))
    {
      if (open_direct (file, path, own, error) == NULL)
        {
          file_free (file);
          return NULL;
        }
      return attach_stream (file, path, error);
    }
  if (!check_replaceable (path, exists, &st, is_link, error) || !plan_replacement (file, path, is_link, error))
    {
      file_free (file);
      return NULL;
    }

  file->fd = mkostemp (file->tmp_path, O_CLOEXEC);
  if (file->fd < 0)
    {
      fail (error, ES_ERROR_IO, path, "%s", strerror (errno));
      file_free (file);
      return NULL;
    }
  /* mkstemp creates 0600; an export should get what a plain creat() would
   * give (0644 less the umask), or keep the mode of the file it replaces. */
  if (exists)
    mode = st.st_mode & 07777;
  else
    mode = 0644 & ~current_umask ();
  if (fchmod (file->fd, mode) != 0)
    {
      fail (error, ES_ERROR_IO, path, "%s", strerror (errno));
      es_atomic_file_abort (file);
      return NULL;
    }
  return attach_stream (file, path, error);
}

FILE *
es_atomic_file_stream (EsAtomicFile *file)
{
  return file->stream;
}

void
es_atomic_file_abort (EsAtomicFile *file)
{
  if (!file)
    return;
  if (file->stream)
    {
      /* Drop buffered bytes: they would only be written to be deleted. */
      __fpurge (file->stream);
      fclose (file->stream);
    }
  else if (file->fd >= 0)
    close (file->fd);
  /* What went straight into a device or a pipe cannot be taken back. */
  if (!file->direct)
    unlink (file->tmp_path);
  file_free (file);
}

bool
es_atomic_file_commit (EsAtomicFile *file, EsError *error)
{
  FILE *stream = file->stream;
  int err = 0;
  int dir_fd;

  if (fflush (stream) != 0 || ferror (stream))
    err = file->write_errno ? file->write_errno : (errno ? errno : EIO);
  /* A device or a pipe has nothing to sync (and refuses fsync). */
  else if (!file->direct && fsync (file->fd) != 0)
    err = errno;

  file->stream = NULL;
  if (fclose (stream) != 0 && !err)
    err = file->write_errno ? file->write_errno : (errno ? errno : EIO);
  if (!err && es_control_cancelled (interrupt_control))
    err = ECANCELED;
  if (!err && !file->direct && rename (file->tmp_path, file->target) != 0)
    err = errno;
  if (err == ECANCELED)
    {
      char shown[ES_PATH_MESSAGE_MAX + 1];

      es_error_set (error, ES_ERROR_CANCELLED, "'%s' was not written: interrupted",
                    es_path_shorten (file->path, ES_PATH_MESSAGE_MAX, shown, sizeof shown));
      if (!file->direct)
        unlink (file->tmp_path);
      file_free (file);
      return false;
    }
  if (err)
    {
      fail (error, ES_ERROR_IO, file->path, "%s", strerror (err));
      if (!file->direct)
        unlink (file->tmp_path);
      file_free (file);
      return false;
    }

  /* Make the rename itself durable. The new file is already in place, so a
   * failure here (some file systems refuse to sync folders) is not reported:
   * saying "could not write" about a file that was written would mislead. */
  if (!file->direct)
    {
      dir_fd = open (file->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd >= 0)
        {
          fsync (dir_fd);
          close (dir_fd);
        }
    }
  file_free (file);
  return true;
}
