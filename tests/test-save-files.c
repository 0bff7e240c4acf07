/* SPDX-License-Identifier: MIT */
/* Tests of output files: atomic writes, injected failures, special targets, long names, interruption. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <png.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "es-colorbar-layout.h"
#include "es-colormap.h"
#include "es-pipeline.h"
#include "es-save.h"
#include "tap.h"
#include "test-save-common.h"

/* ---- Atomic files ------------------------------------------------------ */

static EsImage noise; /* big enough that its PNG takes several buffer flushes */

static bool
save_noise (const char *path, EsError *error)
{
  EsColorScale scale = { ES_COLORMAP_INFERNO, false, 0, 255 };
  es_error_clear (error);
  return es_save_heatmap_png (path, &noise, &scale, false, NULL, error);
}

static void
test_atomic (void)
{
  static const char old_bytes[] = "old contents\n";
  char *target = tmp_path ("target.png");
  EsError error;
  struct stat st;
  bool ok;
  FILE *f;

  remove_all ();
  random_image (&noise, 700, 600, ES_FORMAT_U8);

  /* The environment variable is read once at first use; main sets it. */
  ok = save_noise (target, &error);
  tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, target)
            && strstr (error.message, strerror (ENOSPC)) && access (target, F_OK) != 0 && count_strays (NULL) == 0,
          "ES_INJECT_WRITE_FAILURE=1 fails the first export: %s", error.message);

  f = fopen (target, "w");
  fputs (old_bytes, f);
  fclose (f);

  for (int round = 0; round < 3; round++)
    {
      int nth = round == 0 ? 1 : 2 + rand_int (4);
      const char *what = round == 2 ? "text matrix" : "heatmap PNG";
      es_atomic_file_inject_failure (nth);
      if (round == 2)
        {
          es_error_clear (&error);
          ok = es_save_text_matrix (target, &noise, NULL, &error);
        }
      else
        ok = save_noise (target, &error);
      tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, target)
                && strstr (error.message, strerror (ENOSPC)),
              "%s with write %d failing reports it: %s", what, nth, error.message);
      tap_ok (file_equals (target, old_bytes, strlen (old_bytes)) && count_strays ("target.png") == 0,
              "%s with write %d failing: the old target is untouched, no temporary file is left", what, nth);
    }
  es_atomic_file_inject_failure (0);

  /* A successful write replaces the target and keeps its mode. */
  chmod (target, 0600);
  ok = save_noise (target, &error) && stat (target, &st) == 0;
  tap_ok (ok && (st.st_mode & 07777) == 0600 && st.st_size > 100000 && count_strays ("target.png") == 0,
          "a successful export replaces the target and keeps its mode (%o)", st.st_mode & 07777);
  {
    mode_t old = umask (027);
    char *fresh = tmp_path ("fresh.png");
    ok = save_noise (fresh, &error) && stat (fresh, &st) == 0;
    tap_ok (ok && (st.st_mode & 07777) == 0640, "a new file gets 0644 less the umask (umask 027: %o)",
            st.st_mode & 07777);
    umask (old);
    unlink (fresh);
  }

  /* Abort leaves nothing behind. */
  {
    EsAtomicFile *file = es_atomic_file_open (target, &error);
    fputs ("partial", es_atomic_file_stream (file));
    es_atomic_file_abort (file);
    tap_ok (count_strays ("target.png") == 0 && stat (target, &st) == 0 && st.st_size > 100000,
            "es_atomic_file_abort removes the temporary file");
  }

  /* Large files: their writeback starts every 8 MiB as they are written
   * (write-behind); the bytes, the commit and an abort are unchanged. Beside
   * it the folder holds target.png alone. */
  {
    const size_t piece = 3u << 20, pieces = 7; /* 21 MiB, past the threshold twice */
    uint8_t *bytes = malloc (piece * pieces), *back = malloc (piece * pieces);
    char *large = tmp_path ("large.bin");
    EsAtomicFile *file;
    size_t got = 0;

    for (size_t i = 0; i < piece * pieces; i++)
      bytes[i] = (uint8_t) (i * 2654435761u >> 13);
    file = es_atomic_file_open (large, &error);
    for (size_t i = 0; file != NULL && i < pieces; i++)
      fwrite (bytes + i * piece, 1, piece, es_atomic_file_stream (file));
    ok = file != NULL && es_atomic_file_commit (file, &error);
    f = fopen (large, "rb");
    if (f != NULL)
      {
        got = fread (back, 1, piece * pieces, f);
        fclose (f);
      }
    tap_ok (ok && got == piece * pieces && memcmp (bytes, back, got) == 0 && count_strays ("large.bin") == 1,
            "a 21 MiB file written through write-behind has every byte, and no temporary file is left");
    file = es_atomic_file_open (large, &error);
    for (size_t i = 0; file != NULL && i < pieces; i++)
      fwrite (back, 1, piece, es_atomic_file_stream (file));
    es_atomic_file_abort (file);
    tap_ok (file_equals (large, bytes, piece * pieces) && count_strays ("large.bin") == 1,
            "aborting a 21 MiB file after its writeback started keeps the old file whole and leaves nothing");
    unlink (large);
    free (bytes);
    free (back);
  }

  {
    char *missing = tmp_path ("no-such-folder/out.png");
    ok = save_noise (missing, &error);
    tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, missing)
              && strstr (error.message, strerror (ENOENT)),
            "a missing folder: %s", error.message);
  }

  {
    char *folder = tmp_path ("a-folder");
    mkdir (folder, 0755);
    ok = save_noise (folder, &error);
    tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, folder) && count_strays ("target.png") == 1,
            "a folder as target: %s", error.message);
    rmdir (folder);
  }

  if (geteuid () == 0)
    tap_skip ("running as root, which ignores folder permissions", "a read-only folder");
  else
    {
      char *folder = tmp_path ("read-only");
      char path[600];
      mkdir (folder, 0555);
      snprintf (path, sizeof path, "%s/out.png", folder);
      ok = save_noise (path, &error);
      tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, path)
                && strstr (error.message, strerror (EACCES)),
              "a read-only folder: %s", error.message);
      rmdir (folder);
    }

  free (noise.pixels);
}

/* ---- Special targets, long names, interruption (issue 15) -------------- */

static bool
is_char_device (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISCHR (st.st_mode);
}

static bool
is_link_to (const char *path, const char *target)
{
  char buffer[PATH_MAX];
  ssize_t n = readlink (path, buffer, sizeof buffer - 1);

  if (n < 0)
    return false;
  buffer[n] = '\0';
  return strcmp (buffer, target) == 0;
}

/* A child that copies what arrives at fifo into copy; returns its pid. */
static pid_t
fifo_reader (const char *fifo, const char *copy, bool never_read)
{
  pid_t pid = fork ();

  if (pid == 0)
    {
      char buffer[4096];
      int in;

      /* Bounded: if the FIFO was replaced, no writer ever comes. */
      alarm (20);
      in = open (fifo, O_RDONLY);
      int out = never_read ? -1 : open (copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ssize_t n;

      if (never_read)
        {
          sleep (30);
          _exit (0);
        }
      while (in >= 0 && out >= 0 && (n = read (in, buffer, sizeof buffer)) > 0)
        if (write (out, buffer, (size_t) n) != n)
          _exit (1);
      _exit (0);
    }
  return pid;
}

static EsControl *alarm_control;

static void
on_alarm (int signal_number)
{
  (void) signal_number;
  es_control_cancel (alarm_control);
}

/* Issue 15, items 2, 6 and 7 at the library's level. */
static void
test_special_targets (void)
{
  EsImage values;
  EsError error;
  const char *reference = tmp_path ("reference.txt");
  uint8_t *expected;
  size_t expected_size;
  bool ok;

  remove_all ();
  random_image (&values, 61, 37, ES_FORMAT_F32);
  es_error_clear (&error);
  ok = es_save_text_matrix (reference, &values, NULL, &error) && read_file (reference, &expected, &expected_size);
  tap_ok (ok, "a reference text matrix is written");

  /* Devices are written straight, never replaced. As root the tests use
   * nodes of their own, so that code that would replace them cannot harm
   * /dev. */
  {
    const char *null_path = "/dev/null", *full_path = "/dev/full";

    if (geteuid () == 0)
      {
        null_path = tmp_path ("null");
        full_path = tmp_path ("full");
        if (mknod (null_path, S_IFCHR | 0666, makedev (1, 3)) != 0
            || mknod (full_path, S_IFCHR | 0666, makedev (1, 7)) != 0)
          null_path = full_path = NULL;
      }
    if (null_path == NULL)
      tap_skip ("cannot make device nodes", "devices are written straight");
    else
      {
        es_error_clear (&error);
        ok = es_save_text_matrix (null_path, &values, NULL, &error);
        tap_ok (ok && is_char_device (null_path), "a null device is written into and stays a device: %s",
                error.message);
        es_error_clear (&error);
        ok = es_save_text_matrix (full_path, &values, NULL, &error);
        tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, strerror (ENOSPC))
                  && is_char_device (full_path),
                "a full device reports ENOSPC and stays a device: %s", error.message);
        if (geteuid () == 0)
          {
            unlink (null_path);
            unlink (full_path);
          }
      }
  }

  /* A FIFO: its reader gets exactly what a file gets, and it stays a FIFO. */
  {
    const char *fifo = tmp_path ("out.fifo"), *copy = tmp_path ("copy.txt");
    struct stat st;
    pid_t reader;

    mkfifo (fifo, 0644);
    reader = fifo_reader (fifo, copy, false);
    es_error_clear (&error);
    ok = es_save_text_matrix (fifo, &values, NULL, &error);
    waitpid (reader, NULL, 0);
    tap_ok (ok && file_equals (copy, expected, expected_size) && stat (fifo, &st) == 0 && S_ISFIFO (st.st_mode),
            "a FIFO is written straight and stays a FIFO: %s", error.message);
    unlink (fifo);
    unlink (copy);
  }

  /* A link to /proc/self/fd/N writes into our descriptor N as it is: here
   * a file opened for appending, so what it held stays before the export. */
  {
    const char *log = tmp_path ("log.txt"), *link = tmp_path ("to-fd.txt");
    char fd_path[64];
    int fd = open (log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    uint8_t *got = NULL;
    size_t got_size;

    ok = fd >= 0 && write (fd, "head\n", 5) == 5;
    snprintf (fd_path, sizeof fd_path, "/proc/self/fd/%d", fd);
    ok = ok && symlink (fd_path, link) == 0;
    es_error_clear (&error);
    ok = ok && es_save_text_matrix (link, &values, NULL, &error);
    if (fd >= 0)
      close (fd);
    ok = ok && read_file (log, &got, &got_size) && got_size == expected_size + 5 && memcmp (got, "head\n", 5) == 0
         && memcmp (got + 5, expected, expected_size) == 0;
    tap_ok (ok && is_link_to (link, fd_path),
            "a link to /proc/self/fd/N appends to that descriptor and stays a link: %s", error.message);
    free (got);
    unlink (link);
    unlink (log);
  }

  /* /dev/fd/N of a pipe. */
  {
    int fds[2];
    char fd_path[64];
    pid_t reader;
    const char *copy = tmp_path ("pipe-copy.txt");

    ok = pipe (fds) == 0;
    reader = fork ();
    if (reader == 0)
      {
        char buffer[4096];
        int out = open (copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ssize_t n;

        close (fds[1]);
        while ((n = read (fds[0], buffer, sizeof buffer)) > 0)
          if (write (out, buffer, (size_t) n) != n)
            _exit (1);
        _exit (0);
      }
    close (fds[0]);
    snprintf (fd_path, sizeof fd_path, "/dev/fd/%d", fds[1]);
    es_error_clear (&error);
    ok = ok && es_save_text_matrix (fd_path, &values, NULL, &error);
    close (fds[1]);
    waitpid (reader, NULL, 0);
    tap_ok (ok && file_equals (copy, expected, expected_size), "/dev/fd/N of a pipe is written into: %s",
            error.message);
    unlink (copy);
  }

  /* A descriptor that is not open, or open only for reading. */
  {
    char fd_path[64];
    int fd = open ("/dev/null", O_RDONLY);

    snprintf (fd_path, sizeof fd_path, "/dev/fd/%d", fd);
    es_error_clear (&error);
    ok = es_save_text_matrix (fd_path, &values, NULL, &error);
    tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, "not open for writing"),
            "a descriptor open for reading only is refused: %s", error.message);
    close (fd);
    es_error_clear (&error);
    ok = es_save_text_matrix (fd_path, &values, NULL, &error);
    tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, strerror (EBADF)),
            "a closed descriptor is refused: %s", error.message);
  }

  /* A link to a regular file stays a link; its target gets the export. */
  {
    const char *real = tmp_path ("real.txt"), *link = tmp_path ("link.txt");
    FILE *f = fopen (real, "w");

    fputs ("old\n", f);
    fclose (f);
    symlink ("real.txt", link);
    es_error_clear (&error);
    ok = es_save_text_matrix (link, &values, NULL, &error);
    tap_ok (ok && is_link_to (link, "real.txt") && file_equals (real, expected, expected_size)
              && count_strays (NULL) == 3,
            "a link to a file stays a link and its target is replaced: %s", error.message);
    unlink (real);
    es_error_clear (&error);
    ok = es_save_text_matrix (link, &values, NULL, &error);
    tap_ok (!ok && error.code == ES_ERROR_IO && is_link_to (link, "real.txt") && access (real, F_OK) != 0
              && count_strays (NULL) == 2,
            "a dangling link is refused and left alone: %s", error.message);
    unlink (link);
  }

  /* Long names: a valid 255-byte name works (the temporary name is cut
   * short), a longer one says so, and a long path never cuts the reason. */
  {
    char name[300], path[1024];

    memset (name, 'n', sizeof name);
    strcpy (name + 251, ".txt");
    snprintf (path, sizeof path, "%s/%s", tmpdir, name);
    es_error_clear (&error);
    ok = es_save_text_matrix (path, &values, NULL, &error);
    tap_ok (ok && file_equals (path, expected, expected_size) && count_strays (NULL) == 2,
            "a 255-byte output name is written (no temporary file left): %s", error.message);
    unlink (path);
    memset (name, 'n', sizeof name);
    strcpy (name + 252, ".txt");
    snprintf (path, sizeof path, "%s/%s", tmpdir, name);
    es_error_clear (&error);
    ok = es_save_text_matrix (path, &values, NULL, &error);
    tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, strerror (ENAMETOOLONG))
              && count_strays (NULL) == 1,
            "a 256-byte name says it is too long: %.60s...", error.message);
  }
  {
    char *path = malloc (4000);
    size_t n = (size_t) snprintf (path, 4000, "%s", tmpdir);

    while (n < 3000)
      n += (size_t) snprintf (path + n, 4000 - n, "/%s", "a-long-folder-name-that-does-not-exist");
    snprintf (path + n, 4000 - n, "/out.txt");
    es_error_clear (&error);
    ok = es_save_text_matrix (path, &values, NULL, &error);
    tap_ok (!ok && strstr (error.message, strerror (ENOENT)) && strstr (error.message, "out.txt")
              && strstr (error.message, "...") && strlen (error.message) < 300,
            "a 3000-byte path is shortened in the middle, the reason kept: %s", error.message);
    es_error_clear (&error);
    ok = es_save_heatmap_png (path, &values, &(EsColorScale){ ES_COLORMAP_GRAY, false, 0, 3 }, false, NULL, &error);
    tap_ok (!ok && strstr (error.message, strerror (ENOENT)) && strlen (error.message) < 300, "the same for a PNG: %s",
            error.message);
    free (path);
  }

  /* Interruption: a cancelled control fails the export without a
   * temporary file, even when the write waits on a FIFO that nobody reads
   * (the signal's EINTR must end the wait, not restart it). */
  {
    struct sigaction action = { 0 }, old_action;
    const char *fifo = tmp_path ("stuck.fifo"), *target = tmp_path ("kept.png");
    struct timespec start, end;
    pid_t reader;
    EsImage big;

    alarm_control = es_control_new (NULL, NULL);
    es_atomic_file_set_interrupt (alarm_control);
    es_control_cancel (alarm_control);
    es_error_clear (&error);
    ok = es_save_text_matrix (target, &values, NULL, &error);
    tap_ok (!ok && error.code == ES_ERROR_CANCELLED && access (target, F_OK) != 0 && count_strays (NULL) == 1,
            "a cancelled text export leaves nothing: %s", error.message);
    es_control_reset (alarm_control);

    random_image (&big, 900, 700, ES_FORMAT_U8);
    mkfifo (fifo, 0644);
    reader = fifo_reader (fifo, NULL, true);
    action.sa_handler = on_alarm;
    sigemptyset (&action.sa_mask);
    sigaction (SIGALRM, &action, &old_action);
    alarm (1);
    clock_gettime (CLOCK_MONOTONIC, &start);
    es_error_clear (&error);
    ok = es_save_heatmap_png (fifo, &big, &(EsColorScale){ ES_COLORMAP_GRAY, false, 0, 255 }, false, NULL, &error);
    clock_gettime (CLOCK_MONOTONIC, &end);
    alarm (0);
    sigaction (SIGALRM, &old_action, NULL);
    kill (reader, SIGKILL);
    waitpid (reader, NULL, 0);
    tap_ok (!ok && error.code == ES_ERROR_CANCELLED && end.tv_sec - start.tv_sec < 5,
            "a signal ends a write blocked on a FIFO (%lds): %s", (long) (end.tv_sec - start.tv_sec), error.message);
    unlink (fifo);
    es_atomic_file_set_interrupt (NULL);
    es_control_free (alarm_control);
    free (big.pixels);
  }

  free (expected);
  free (values.pixels);
  remove_all ();
}

int
main (void)
{
  /* Before any atomic file is opened: the hook reads this once. */
  setenv ("ES_INJECT_WRITE_FAILURE", "1", 1);
  rng = tap_seed ();
  if (!mkdtemp (tmpdir))
    {
      tap_ok (false, "cannot create a temporary folder: %s", strerror (errno));
      return tap_done ();
    }

  test_atomic ();
  test_special_targets ();

  remove_all ();
  rmdir (tmpdir);
  return tap_done ();
}
