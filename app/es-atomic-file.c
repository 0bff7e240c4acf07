/* Atomic file output: write a temporary file beside the target, then rename it over. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-save.h"

struct EsAtomicFile {
  char *path;      /* the target */
  char *tmp_path;  /* ".name.XXXXXX" in the target's folder */
  char *dir;       /* the folder, synced after the rename */
  int fd;
  FILE *stream;
  int write_errno; /* the first write error, kept because stdio may lose errno */
};

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
  const char *env = getenv ("ES_INJECT_WRITE_FAILURE");
  int n = env ? atoi (env) : 0;
  atomic_store (&inject_countdown, n > 0 ? n : 0);
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

static ssize_t
cookie_write (void *cookie, const char *buf, size_t size)
{
  EsAtomicFile *file = cookie;
  size_t done = 0;

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
      if (n < 0 && errno == EINTR)
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
    }
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
  free (file->dir);
  free (file);
}

EsAtomicFile *
es_atomic_file_open (const char *path, EsError *error)
{
  EsAtomicFile *file;
  const char *slash, *base;
  size_t dir_len;
  struct stat st;
  mode_t mode;

  inject_read_env_once ();
  if (!path || !*path)
    {
      es_error_set (error, ES_ERROR_INVALID, "no output file name given");
      return NULL;
    }
  slash = strrchr (path, '/');
  base = slash ? slash + 1 : path;
  if (!*base || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    {
      es_error_set (error, ES_ERROR_INVALID, "cannot write '%s': not a file name", path);
      return NULL;
    }

  file = calloc (1, sizeof *file);
  if (!file)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot write '%s': out of memory", path);
      return NULL;
    }
  file->fd = -1;
  dir_len = slash ? (size_t) (slash - path) : 0;
  file->path = strdup (path);
  file->dir = slash ? (dir_len ? strndup (path, dir_len) : strdup ("/")) : strdup (".");
  file->tmp_path = malloc (dir_len + strlen (base) + 16);
  if (!file->path || !file->dir || !file->tmp_path)
    {
      file_free (file);
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot write '%s': out of memory", path);
      return NULL;
    }
  sprintf (file->tmp_path, "%.*s%s.%s.XXXXXX", (int) dir_len, path, slash ? "/" : "", base);

  file->fd = mkostemp (file->tmp_path, O_CLOEXEC);
  if (file->fd < 0)
    {
      es_error_set (error, ES_ERROR_IO, "cannot write '%s': %s", path, strerror (errno));
      file_free (file);
      return NULL;
    }

  /* mkstemp creates 0600; an export should get what a plain creat() would
   * give (0644 less the umask), or keep the mode of the file it replaces. */
  if (stat (path, &st) == 0 && S_ISREG (st.st_mode))
    mode = st.st_mode & 07777;
  else
    mode = 0644 & ~current_umask ();
  if (fchmod (file->fd, mode) != 0)
    {
      es_error_set (error, ES_ERROR_IO, "cannot write '%s': %s", path, strerror (errno));
      es_atomic_file_abort (file);
      return NULL;
    }

  file->stream = fopencookie (file, "w", (cookie_io_functions_t) {
    .write = cookie_write,
    .close = cookie_close,
  });
  if (!file->stream)
    {
      es_error_set (error, ES_ERROR_NO_MEMORY, "cannot write '%s': %s", path, strerror (errno));
      es_atomic_file_abort (file);
      return NULL;
    }
  /* Large buffers: fewer system calls for multi-megabyte exports. */
  setvbuf (file->stream, NULL, _IOFBF, 1 << 16);
  return file;
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
  else if (fsync (file->fd) != 0)
    err = errno;

  file->stream = NULL;
  if (fclose (stream) != 0 && !err)
    err = file->write_errno ? file->write_errno : (errno ? errno : EIO);
  if (!err && es_control_cancelled (interrupt_control))
    err = ECANCELED;
  if (!err && rename (file->tmp_path, file->path) != 0)
    err = errno;
  if (err == ECANCELED)
    {
      es_error_set (error, ES_ERROR_CANCELLED, "'%s' was not written: interrupted", file->path);
      unlink (file->tmp_path);
      file_free (file);
      return false;
    }
  if (err)
    {
      es_error_set (error, ES_ERROR_IO, "cannot write '%s': %s", file->path, strerror (err));
      unlink (file->tmp_path);
      file_free (file);
      return false;
    }

  /* Make the rename itself durable. The new file is already in place, so a
   * failure here (some file systems refuse to sync folders) is not reported:
   * saying "could not write" about a file that was written would mislead. */
  dir_fd = open (file->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0)
    {
      fsync (dir_fd);
      close (dir_fd);
    }
  file_free (file);
  return true;
}
