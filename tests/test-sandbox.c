/* SPDX-License-Identifier: MIT */
/* The decoding sandbox: the same images and messages as in-process decoding, and every fault of a decoder an error. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "es-sandbox.h"
#include "tap.h"

static const EsDecodeRequest request = { .levels = 256 };

static bool
same_image (const EsImage *a, const EsImage *b)
{
  size_t bytes = a->stride * (size_t) a->height * (size_t) es_image_planes (a);

  return a->width == b->width && a->height == b->height && a->stride == b->stride && a->planes == b->planes
         && a->plane_stride == b->plane_stride && a->format == b->format && a->depth == b->depth
         && a->levels == b->levels && a->maxval == b->maxval && memcmp (a->pixels, b->pixels, bytes) == 0;
}

/* One file both ways: the same verdict, image, notice and message. */
static bool
same_both_ways (int fd, const char *what)
{
  EsImage here = { 0 }, there = { 0 };
  EsError here_error = { 0 }, there_error = { 0 };
  char here_notice[256], there_notice[256];
  bool here_ok, there_ok, same;

  lseek (fd, 0, SEEK_SET);
  here_ok = es_decode_fd (fd, &request, &here, here_notice, sizeof here_notice, &here_error);
  lseek (fd, 0, SEEK_SET);
  there_ok = es_sandbox_decode_fd (fd, &request, &there, there_notice, sizeof there_notice, &there_error);
  same = here_ok == there_ok && here_error.code == there_error.code
         && strcmp (here_error.message, there_error.message) == 0 && strcmp (here_notice, there_notice) == 0
         && (!here_ok || same_image (&here, &there));
  if (!same)
    tap_diag ("%s: in-process %s \"%s\", sandboxed %s \"%s\"", what, here_ok ? "ok" : "failed", here_error.message,
              there_ok ? "ok" : "failed", there_error.message);
  es_image_clear (&here);
  es_image_clear (&there);
  return same;
}

static void
test_files (const char *testdata)
{
  const char *folders[] = { "images", "pngsuite" };

  for (size_t f = 0; f < sizeof folders / sizeof *folders; f++)
    {
      char path[4096];
      int files = 0, same = 0, refused = 0;
      struct dirent *entry;
      DIR *dir;

      snprintf (path, sizeof path, "%s/%s", testdata, folders[f]);
      dir = opendir (path);
      if (dir == NULL)
        {
          tap_ok (false, "%s: cannot read the folder", path);
          continue;
        }
      while ((entry = readdir (dir)) != NULL)
        {
          int fd;

          if (strlen (entry->d_name) < 5 || strcmp (entry->d_name + strlen (entry->d_name) - 4, ".png") != 0)
            continue;
          snprintf (path, sizeof path, "%s/%s/%s", testdata, folders[f], entry->d_name);
          fd = open (path, O_RDONLY | O_CLOEXEC);
          files++;
          refused += entry->d_name[0] == 'x';
          same += fd >= 0 && same_both_ways (fd, path);
          if (fd >= 0)
            close (fd);
        }
      closedir (dir);
      tap_ok (files > 0 && same == files, "%s/: %d of %d files the same in the sandbox (corrupt ones: %d)", folders[f],
              same, files, refused);
    }
}

/* Inputs held in memory (a text matrix, a PGM, bytes no decoder reads):
 * es_decode_memory in the sandbox gives what es_decode_fd gives on the same bytes. */
static void
test_memory (void)
{
  const struct {
    const char *what, *bytes;
  } cases[] = {
    { "text matrix", "2 3\n0 1 2\n3 4 5\n" },
    { "text matrix over its levels", "1 2\n0 300\n" },
    { "PGM", "P2 2 2 65535\n0 1000\n65535 7\n" },
    { "JPEG cut short", "\xff\xd8\xff\xe0 JFIF" },
    { "empty file", "" },
  };

  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      EsImage here = { 0 }, there = { 0 };
      EsError here_error = { 0 }, there_error = { 0 };
      char notice[256];
      size_t size = strlen (cases[i].bytes);
      int fd = memfd_create ("test", MFD_CLOEXEC);
      bool here_ok, there_ok;

      if (fd < 0 || write (fd, cases[i].bytes, size) != (ssize_t) size || lseek (fd, 0, SEEK_SET) != 0)
        {
          tap_ok (false, "%s: cannot make the memory file", cases[i].what);
          continue;
        }
      here_ok = es_decode_fd (fd, &request, &here, notice, sizeof notice, &here_error);
      close (fd);
      there_ok = es_decode_memory (cases[i].bytes, size, true, &request, &there, notice, sizeof notice, &there_error);
      tap_ok (here_ok == there_ok && strcmp (here_error.message, there_error.message) == 0
                && (!here_ok || same_image (&here, &there)),
              "%s from memory: %s", cases[i].what, here_ok ? "the same image" : there_error.message);
      es_image_clear (&here);
      es_image_clear (&there);
    }
}

/* Images of 2 MiB and more are decoded straight into the helper's pixel
 * file, in blocks that the parent then maps (es-decode-main.c): PGMs of
 * 8 and 16 bits, each also written into, as a caller may. */
static void
test_large (void)
{
  const struct {
    const char *what;
    int width, height, maxval;
  } cases[] = {
    { "8-bit PGM of 4100 × 1000", 4100, 1000, 255 },
    { "16-bit PGM of 2048 × 1536", 2048, 1536, 65535 },
  };
  int fd;

  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      int sample = cases[i].maxval > 255 ? 2 : 1;
      size_t pixels = (size_t) cases[i].width * (size_t) cases[i].height * sample;
      char header[64];
      int header_size = snprintf (header, sizeof header, "P5 %d %d %d\n", cases[i].width, cases[i].height,
                                  cases[i].maxval);
      uint8_t *bytes = malloc (header_size + pixels);
      EsImage image = { 0 };
      EsError error = { 0 };
      char notice[256];
      bool ok;

      memcpy (bytes, header, header_size);
      for (size_t p = 0; p < pixels; p++)
        bytes[header_size + p] = (uint8_t) (p * 2654435761u >> 13);
      fd = memfd_create ("test", MFD_CLOEXEC);
      ok = fd >= 0 && write (fd, bytes, header_size + pixels) == (ssize_t) (header_size + pixels)
           && same_both_ways (fd, cases[i].what);
      if (fd >= 0)
        close (fd);
      ok = ok && es_decode_memory (bytes, header_size + pixels, true, &request, &image, notice, sizeof notice, &error);
      if (ok)
        memset (image.pixels, 7, pixels);
      tap_ok (ok, "%s: the same in the sandbox, writable %s", cases[i].what, error.message);
      es_image_clear (&image);
      free (bytes);
    }
}

static double
now_s (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* A decoder that crashes, hangs, opens a file or eats memory (the
 * helper's test hook): an error that says so, in bounded time, and no
 * child left behind. */
static void
test_faults (const char *camera)
{
  const struct {
    const char *fault;
    EsErrorCode code;
    const char *message;
  } cases[] = {
    { "crash", ES_ERROR_FORMAT, "the decoder crashed (SIGSEGV, Segmentation fault)" },
    { "hang", ES_ERROR_LIMIT, "the decoder took longer than its time limit of 0.5 s, and was stopped" },
    { "open", ES_ERROR_FORMAT,
      "the sandbox stopped the decoder: it made a system call that decoding never needs "
      "(a file, the network, a process)" },
#ifndef __SANITIZE_ADDRESS__
    /* 1 GiB of address space and 12 bytes a pixel of the budget (a
     * sanitizer build's helper has no such limit: see es-decode-main.c). */
    { "memory", ES_ERROR_NO_MEMORY, "cannot allocate more than" },
#endif
  };
  int fd = open (camera, O_RDONLY | O_CLOEXEC);

  es_image_set_max_pixels (1 << 20);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      EsImage image = { 0 };
      EsError error = { 0 };
      char notice[256];
      double start = now_s (), seconds;
      bool ok;

      setenv ("ES_TEST_DECODER_FAULT", cases[i].fault, 1);
      /* 0.5 s for the hang; the others keep the limit of the file's size (10 s). */
      setenv ("ES_TEST_SANDBOX_TIMEOUT_MS", cases[i].code == ES_ERROR_LIMIT ? "500" : "0", 1);
      lseek (fd, 0, SEEK_SET);
      ok = es_sandbox_decode_fd (fd, &request, &image, notice, sizeof notice, &error);
      seconds = now_s () - start;
      tap_ok (!ok && error.code == cases[i].code
                && strncmp (error.message, cases[i].message, strlen (cases[i].message)) == 0 && image.pixels == NULL
                && seconds < 9 && waitpid (-1, NULL, WNOHANG) < 0 && errno == ECHILD,
              "%s: \"%s\" (%s) in %.2f s, no child left", cases[i].fault, error.message,
              es_error_code_name (error.code), seconds);
    }
  unsetenv ("ES_TEST_DECODER_FAULT");
  unsetenv ("ES_TEST_SANDBOX_TIMEOUT_MS");
  es_image_set_max_pixels (0);
  close (fd);
}

/* A subverted helper that sends a descriptor it was given in place of its
 * pixel file (here standard error, made an unnamed memory file so that
 * only its file system gives it away) has it refused, not read as pixels. */
static void
test_foreign_file (const char *camera)
{
  EsImage image = { 0 };
  EsError error = { 0 };
  char notice[256];
  int fd = open (camera, O_RDONLY | O_CLOEXEC), saved = dup (STDERR_FILENO), fake = memfd_create ("stderr", 0);
  bool ok;

  dup2 (fake, STDERR_FILENO);
  setenv ("ES_TEST_DECODER_FAULT", "foreign", 1);
  ok = es_sandbox_decode_fd (fd, &request, &image, notice, sizeof notice, &error);
  unsetenv ("ES_TEST_DECODER_FAULT");
  dup2 (saved, STDERR_FILENO);
  tap_ok (!ok && strcmp (error.message, "the decoder handed over a file that is not its pixels") == 0
            && image.pixels == NULL,
          "a helper that sends its standard error as its pixels: \"%s\"", error.message);
  close (saved);
  close (fake);
  close (fd);
}

/* The pixels come back as a private mapping of a sealed memory file: the
 * caller may write into its image. */
static void
test_writable (const char *camera)
{
  EsImage image = { 0 };
  EsError error = { 0 };
  char notice[256];
  int fd = open (camera, O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && es_sandbox_decode_fd (fd, &request, &image, notice, sizeof notice, &error);

  if (ok)
    {
      ((uint8_t *) image.pixels)[0] ^= 0xff;
      ((uint8_t *) image.pixels)[image.stride * (size_t) image.height - 1] = 7;
    }
  tap_ok (ok && image.width == 512 && image.height == 512, "camera.png sandboxed: 512 × 512, writable %s",
          error.message);
  es_image_clear (&image);
  if (fd >= 0)
    close (fd);
}

int
main (void)
{
  const char *testdata = getenv ("ES_TESTDATA") ? getenv ("ES_TESTDATA") : "tests/data";
  const char *reason;
  char camera[4096];

  if (!es_sandbox_available (&reason))
    {
      tap_skip (reason, "the decoding sandbox");
      return tap_done ();
    }
  snprintf (camera, sizeof camera, "%s/images/camera.png", testdata);
  es_image_set_max_pixels (0);
  /* The helper's own pixel file (2 MiB pages) where it can mount one, then
   * the parent's memory file, as where user namespaces are off. */
  for (int memory_file = 0; memory_file < 2; memory_file++)
    {
      tap_diag ("the pixels in %s", memory_file ? "the parent's memory file" : "the helper's pixel file");
      if (memory_file)
        setenv ("ES_TEST_SANDBOX_MEMORY_FILE", "1", 1);
      test_files (testdata);
      test_large ();
      test_writable (camera);
    }
  unsetenv ("ES_TEST_SANDBOX_MEMORY_FILE");
  test_memory ();
  test_faults (camera);
  test_foreign_file (camera);
  return tap_done ();
}
