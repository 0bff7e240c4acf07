/* SPDX-License-Identifier: MIT */
/* Tests of reading files: missing files and folders, recognition by content, bounded reading of endless and huge inputs, streamed decoding. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "es-load-internal.h"
#include "es-text-matrix-internal.h"
#include "tap.h"
#include "test-load-common.h"
#include <time.h>

/* Files: recognition by content, bounded reading ---------------------- */

static double
seconds_since (const struct timespec *start)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
}

static bool
write_file (const char *path, const void *data, size_t size)
{
  FILE *f = fopen (path, "wb");
  bool ok = f != NULL && fwrite (data, 1, size, f) == size;

  if (f != NULL && fclose (f) != 0)
    ok = false;
  return ok;
}

/* es_load_memory and es_load_file of the same bytes: the same verdict. */
static bool
load_both (const void *data, size_t size, const char *name, EsError *error)
{
  char path[1024];
  EsImage image = { 0 }, from_file = { 0 };
  EsError file_error = { 0 };
  bool ok, file_ok;

  snprintf (path, sizeof path, "/tmp/es-test-load-%ld-%s", (long) getpid (), name);
  ok = es_load_memory (data, size, 16, &image, error);
  file_ok = write_file (path, data, size) && es_load_file (path, 16, &from_file, &file_error);
  unlink (path);
  es_image_clear (&image);
  es_image_clear (&from_file);
  if (ok != file_ok || file_error.code != error->code || strcmp (file_error.message, error->message) != 0)
    {
      tap_diag ("%s: memory says \"%s\", the file \"%s\"", name, error->message, file_error.message);
      return false;
    }
  return !ok;
}

/* Issue 15, item 4: the format comes from the content, and what is not ours
 * is named, not parsed as a text matrix. */
/* What refusals list as readable, and what a TIFF header with no directory
 * and a JPEG that ends after its JFIF marker get: the decoder's verdict when
 * the format is read, else a refusal by name. */
#ifdef ES_HAVE_TIFF
#define FORMATS_TIFF ", TIFF"
#else
#define FORMATS_TIFF ""
#endif
#ifdef ES_HAVE_JPEG
#define FORMATS_JPEG ", JPEG"
#else
#define FORMATS_JPEG ""
#endif
#define FORMATS "PNG, PGM" FORMATS_TIFF FORMATS_JPEG ", text matrix"
#ifdef ES_HAVE_TIFF
#define TIFF_SAYS "TIFF: not a readable TIFF file: Can not read TIFF directory"
#else
#define TIFF_SAYS "TIFF is not supported (" FORMATS " are)"
#endif
#ifdef ES_HAVE_JPEG
#define JPEG_SAYS "JPEG: file is truncated"
#else
#define JPEG_SAYS "JPEG is not supported (" FORMATS " are)"
#endif

static void
test_recognition (void)
{
  static const uint8_t bmp[] = "BM\x46\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\x18\0";
  static const struct {
    const char *what, *data;
    size_t size;
    const char *says;
  } cases[] = {
    { "an empty file", "", 0, "empty file" },
    { "a JPEG", "\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0", 20, JPEG_SAYS },
    { "a little-endian TIFF", "II*\0\x08\0\0\0\x0e\0\0\x01\x03\0\x01\0\0\0", 18, TIFF_SAYS },
    { "a big-endian TIFF", "MM\0*\0\0\0\x08\0\x0e\x01\0\0\x03\0\0\0\x01", 18, TIFF_SAYS },
    { "a PPM (P6)", "P6\n2 2\n255\n\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 23, "PPM (P6) is not supported" },
    { "a PPM (P3)", "P3 1 1 255 1 2 3\n", 0, "PPM (P3) is not supported" },
    { "a PBM (P1)", "P1\n2 2\n0 1\n1 0\n", 0, "PBM (P1) is not supported" },
    { "a PBM (P4)", "P4\n8 1\n\x55", 0, "PBM (P4) is not supported" },
    { "a GIF", "GIF89a\x01\0\x01\0\x80\0\0\0\0\0\xff\xff\xff", 19, "GIF is not supported" },
    { "a BMP", (const char *) bmp, sizeof bmp - 1, "BMP is not supported" },
    { "a WebP", "RIFF\x24\0\0\0WEBPVP8 \x18\0\0\0", 20, "WebP is not supported" },
    { "random bytes", "\x01\x9c\xf3\x42\x00\x7f\xee\x10\x55\xaa\x03\x81\xc4\x22\x90\x01\x02", 17,
      "not an image this program reads" },
    { "text", "hello, this is not an image\n", 0, "not an image this program reads" },
    { "a text matrix with junk", "2 2\n0 1\n1 x\n", 0, "text matrix: line 3, column 3" },
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      EsError error = { 0 };
      size_t size = cases[i].size ? cases[i].size : strlen (cases[i].data);
      char name[32];
      bool refused;

      snprintf (name, sizeof name, "case%zu.png", i);
      refused = load_both (cases[i].data, size, name, &error);
      tap_ok (refused && error.code == ES_ERROR_FORMAT && one_line (&error) && strstr (error.message, cases[i].says),
              "%s is refused by its content: %s", cases[i].what, error.message);
    }

  /* Blank lines may come before a text matrix's "H W", but not 64 KiB of them. */
  {
    size_t size = 70000;
    char *blank = malloc (size);
    EsError error = { 0 };

    memset (blank, ' ', size);
    memcpy (blank + size - 8, "1 1\n0\n", 6);
    tap_ok (blank && load_both (blank, size - 2, "blank.txt", &error)
              && strstr (error.message, "not an image this program reads"),
            "64 KiB of blanks before anything is no text matrix: %s", error.message);
    memset (blank, '\n', 100);
    memcpy (blank + 100, "1 1\n0\n", 6);
    {
      EsImage image = { 0 };

      es_error_clear (&error);
      tap_ok (es_load_memory (blank, 106, 16, &image, &error) && image.width == 1,
              "a text matrix after 100 blank lines loads %s", error.message);
      es_image_clear (&image);
    }
    free (blank);
  }
}

/* A child that writes prefix, then filler forever, into fd; it reports how
 * many bytes it got written before the reader went away. */
typedef struct {
  pid_t pid;
  int count_fd;
} Writer;

static bool
writer_start (Writer *w, int fd, int read_end, const void *prefix, size_t prefix_size, char filler)
{
  int counts[2];

  if (pipe (counts) != 0)
    return false;
  w->pid = fork ();
  if (w->pid < 0)
    return false;
  if (w->pid == 0)
    {
      static char chunk[65536];
      unsigned long long written = 0;
      ssize_t n = 0;

      signal (SIGPIPE, SIG_IGN);
      close (counts[0]);
      /* Only the loader may hold the read end: its close ends the writes. */
      close (read_end);
      memset (chunk, filler, sizeof chunk);
      if (write (fd, prefix, prefix_size) == (ssize_t) prefix_size)
        for (written = prefix_size; (n = write (fd, chunk, sizeof chunk)) > 0;)
          written += (unsigned long long) n;
      if (write (counts[1], &written, sizeof written) != (ssize_t) sizeof written)
        _exit (1);
      _exit (0);
    }
  close (counts[1]);
  w->count_fd = counts[0];
  return true;
}

/* Waits for the writer and returns the bytes it wrote. */
static unsigned long long
writer_finish (Writer *w)
{
  unsigned long long written = ~0ull;

  if (read (w->count_fd, &written, sizeof written) != (ssize_t) sizeof written)
    written = ~0ull;
  close (w->count_fd);
  waitpid (w->pid, NULL, 0);
  return written;
}

/* Loads an endless stream (prefix, then filler) from a pipe under a 1 MiB
 * limit; returns whether it ended in time, and how much the writer wrote. */
static bool
load_endless (const void *prefix, size_t prefix_size, char filler, EsImage *image, EsError *error,
              unsigned long long *written, double *seconds)
{
  struct timespec start;
  Writer w;
  int fds[2];
  bool ok;

  if (pipe (fds) != 0 || !writer_start (&w, fds[1], fds[0], prefix, prefix_size, filler))
    return false;
  close (fds[1]);
  clock_gettime (CLOCK_MONOTONIC, &start);
  ok = es_load_fd (fds[0], 16, image, error);
  *seconds = seconds_since (&start);
  close (fds[0]);
  *written = writer_finish (&w);
  return ok;
}

/* Issue 15, item 3: endless and huge inputs are refused from their first
 * bytes, or after the limit plus one byte, never read whole. */
static void
test_bounded_reading (void)
{
  EsImage image = { 0 };
  EsError error = { 0 };
  struct timespec start;
  char path[] = "/tmp/es-test-load-XXXXXX";
  double seconds;
  bool ok;
  int fd;

  clock_gettime (CLOCK_MONOTONIC, &start);
  ok = es_load_file ("/dev/zero", 16, &image, &error);
  seconds = seconds_since (&start);
  tap_ok (!ok && error.code == ES_ERROR_FORMAT && strstr (error.message, "not an image") && seconds < 1,
          "/dev/zero is refused from its first bytes in %.3f s: %s", seconds, error.message);

  /* Sparse files: a 3 GiB hole, a text matrix in front of one, a PGM header
   * in front of one that makes the file larger than 4 GiB. */
  static const struct {
    const char *what, *head;
    long long size;
    const char *says;
    EsErrorCode code;
  } holes[] = {
    { "3 GiB of zeros", "", 3ll << 30, "not an image this program reads", ES_ERROR_FORMAT },
    { "a text matrix, then a 3 GiB hole", "2 2\n0 1\n", 3ll << 30,
      "text matrix: line 3, column 1: expected a value, found '?'", ES_ERROR_FORMAT },
    { "a PNG signature, then a 3 GiB hole", "\x89PNG\r\n\x1a\n", 3ll << 30, "PNG: ", ES_ERROR_FORMAT },
    { "a PGM header, then a hole to over 4 GiB", "P5 1 1 255\n", (4ll << 30) + 1, "file is larger than 4 GiB",
      ES_ERROR_IO },
  };
  for (size_t i = 0; i < sizeof holes / sizeof holes[0]; i++)
    {
      strcpy (path, "/tmp/es-test-load-XXXXXX");
      fd = mkstemp (path);
      if (fd < 0 || write (fd, holes[i].head, strlen (holes[i].head)) != (ssize_t) strlen (holes[i].head)
          || ftruncate (fd, (off_t) holes[i].size) != 0)
        tap_skip ("cannot make a sparse file in /tmp", holes[i].what);
      else
        {
          es_error_clear (&error);
          clock_gettime (CLOCK_MONOTONIC, &start);
          ok = es_load_file (path, 16, &image, &error);
          seconds = seconds_since (&start);
          tap_ok (!ok && error.code == holes[i].code && strstr (error.message, holes[i].says) && seconds < 1,
                  "a file of %s is refused in %.3f s: %s", holes[i].what, seconds, error.message);
        }
      if (fd >= 0)
        {
          close (fd);
          unlink (path);
        }
    }

  /* Endless pipes under a 1 MiB limit: only what the decoder needs is read,
   * and never more than the limit plus one byte (plus what the pipe and the
   * writer's last chunk hold). */
  {
    static const struct {
      const char *what, *prefix;
      size_t size;
      char filler;
      bool ok;
      const char *says;
    } pipes[] = {
      { "zeros", "", 0, '\0', false, "not an image this program reads" },
      { "a P2 PGM, then blanks", "P2 1 1 255\n7", 0, ' ', false, "PGM: file is larger than 1 MiB" },
      { "a P2 PGM, then a comment", "P2 1 1 255\n7 #", 0, 'c', false, "PGM: file is larger than 1 MiB" },
      { "a text matrix, then blank lines", "3 3\n", 0, '\n', false, "file is larger than 1 MiB" },
      { "a text matrix, then rows", "1 2\n0 1\n", 0, '1', false, "text matrix: line 3, column 1: more than 1 rows" },
      { "a text matrix, then a NUL", "1 2\n0 1", 0, '\0', false, "text matrix: line 2, column 4" },
      { "a P5 PGM, then anything", "P5 2 1 255\n\x01\x02", 0, '\xff', true, "" },
      { "a P5 PGM whose raster outgrows the limit", "P5 2048 1024 255\n", 0, 'x', false,
        "PGM: file is larger than 1 MiB" },
    };
    unsigned long long limit = 1 << 20, slack = 1 << 20;

    es_load_set_max_file_size (limit);
    for (size_t i = 0; i < sizeof pipes / sizeof pipes[0]; i++)
      {
        unsigned long long written = 0;
        bool small = strstr (pipes[i].says, "larger") == NULL;

        es_error_clear (&error);
        ok = load_endless (pipes[i].prefix, strlen (pipes[i].prefix), pipes[i].filler, &image, &error, &written,
                           &seconds);
        tap_diag ("%s: %s; the writer wrote %llu bytes in %.3f s", pipes[i].what, ok ? "loaded" : error.message,
                  written, seconds);
        tap_ok (ok == pipes[i].ok && (ok || strstr (error.message, pipes[i].says)) && written != ~0ull
                  && written <= (small ? slack : limit + 1 + slack),
                "an endless pipe of %s %s after %llu bytes", pipes[i].what, ok ? "loads" : "is refused", written);
        es_image_clear (&image);
      }

    /* A valid PNG followed by anything: decoding ends at IEND. */
    {
      uint8_t *png;
      size_t size;
      unsigned long long written = 0;

      {
        char name[1024];
        snprintf (name, sizeof name, "%s/pngsuite/basn0g08.png", testdata);
        ok = read_file (name, &png, &size);
      }
      if (ok)
        {
          es_error_clear (&error);
          ok = load_endless (png, size, 'x', &image, &error, &written, &seconds);
          tap_ok (ok && image.width == 32 && written <= slack,
                  "a PNG followed by an endless stream loads after %llu bytes", written);
          es_image_clear (&image);
          free (png);
        }
      else
        tap_ok (false, "read basn0g08.png");
    }
    es_load_set_max_file_size (0);
  }

  /* A load waiting on a read stops once the interrupt control is cancelled. */
  {
    EsControl *control = es_control_new (NULL, NULL);

    es_control_cancel (control);
    es_load_set_interrupt (control);
    es_error_clear (&error);
    ok = es_load_file ("/dev/zero", 16, &image, &error);
    es_load_set_interrupt (NULL);
    es_control_free (control);
    tap_ok (!ok && error.code == ES_ERROR_CANCELLED, "a cancelled load stops: %s", error.message);
  }
}

/* The streamed decoders against the memory ones, on every PngSuite file
 * (valid and corrupt), the sample images and PGMs, read a few bytes at a
 * time so that every buffer boundary falls inside a chunk, a header or a
 * 16-bit sample. */
static void
test_streamed (void)
{
  static const char *folders[] = { "pngsuite", "images" };
  size_t compared = 0, differ = 0;

  for (size_t f = 0; f < 2; f++)
    {
      char path[1024];
      struct dirent *entry;
      DIR *dir;

      snprintf (path, sizeof path, "%s/%s", testdata, folders[f]);
      dir = opendir (path);
      while (dir != NULL && (entry = readdir (dir)) != NULL)
        {
          EsImage a = { 0 }, b = { 0 };
          EsError ea = { 0 }, eb = { 0 };
          uint8_t *data;
          size_t size;
          bool ok_a, ok_b;
          int fd;

          if (entry->d_name[0] == '.')
            continue;
          snprintf (path, sizeof path, "%s/%s/%s", testdata, folders[f], entry->d_name);
          if (!read_file (path, &data, &size))
            continue;
          ok_a = es_load_memory (data, size, 16, &a, &ea);
          fd = open (path, O_RDONLY);
          es_reader_set_piece_max (1 + compared % 7 + (f ? 4096 : 0));
          ok_b = fd >= 0 && es_load_fd (fd, 16, &b, &eb);
          es_reader_set_piece_max (0);
          if (fd >= 0)
            close (fd);
          compared++;
          if (ok_a != ok_b || strcmp (ea.message, eb.message) != 0
              || (ok_a && (a.width != b.width || a.height != b.height || image_hash (&a) != image_hash (&b))))
            {
              tap_diag ("%s: memory %s, streamed %s", entry->d_name, ok_a ? "ok" : ea.message,
                        ok_b ? "ok" : eb.message);
              differ++;
            }
          es_image_clear (&a);
          es_image_clear (&b);
          free (data);
        }
      if (dir != NULL)
        closedir (dir);
    }
  tap_ok (compared > 150 && differ == 0,
          "%zu files streamed in pieces of 1..7 bytes decode as from memory (%zu differ)", compared, differ);
}

/* Large binary PGMs, whose rasters the reader moves straight from the
 * descriptor into the image, a read() at a time, and which are checked and
 * byte-swapped on every core: read from a file in pieces of every size and
 * from memory, each gives the same pixels or the same message, and the
 * messages name the first bad sample's byte and the bytes present. */
static void
test_large_binary_pgm (void)
{
  enum { WIDTH = 1031, HEIGHT = 517 };
  static const struct {
    const char *what;
    int maxval;
    long cut;         /* bytes of the raster left out from its end */
    long bad;         /* the sample set over maxval, or -1 */
    const char *says; /* "" for a file that loads */
  } cases[] = {
    { "8-bit, maxval 255", 255, 0, -1, "" },
    { "8-bit, maxval 200", 200, 0, -1, "" },
    { "8-bit, a sample over maxval near the end", 200, 0, WIDTH * HEIGHT - 3,
      "PGM: byte 533040: sample 201 is over maxval 200" },
    { "8-bit, truncated", 255, 1001, -1, "PGM: byte 532042: raster is truncated: 532026 of 533027 bytes present" },
    { "16-bit, maxval 65535", 65535, 0, -1, "" },
    { "16-bit, maxval 4095", 4095, 0, -1, "" },
    { "16-bit, a sample over maxval", 4095, 0, 77777, "PGM: byte 155571: sample 4096 is over maxval 4095" },
    { "16-bit, truncated in a sample", 65535, 1001, -1,
      "PGM: byte 1065071: raster is truncated: 1065053 of 1066054 bytes present" },
    { "16-bit, a sample over maxval before the truncation", 4095, 999, 5,
      "PGM: byte 27: sample 4096 is over maxval 4095" },
  };
  const char *header_format = "P5\n%d %d\n%d\n";
  unsigned long long rng = 0x9e3779b97f4a7c15ull;

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      const int bytes_per_sample = cases[c].maxval < 256 ? 1 : 2;
      const size_t raster = (size_t) WIDTH * HEIGHT * bytes_per_sample;
      char header[64], path[] = "/tmp/entroscope-large-pgm-XXXXXX";
      const int header_size = snprintf (header, sizeof header, header_format, WIDTH, HEIGHT, cases[c].maxval);
      /* Whatever follows the raster is not read: a second image's bytes. */
      const size_t size = (size_t) header_size + raster - (size_t) cases[c].cut + (cases[c].cut ? 0 : 4096);
      uint8_t *data = malloc (size);
      uint64_t expected = 0;
      bool same = true;

      if (data == NULL)
        {
          tap_ok (false, "%s: allocated", cases[c].what);
          continue;
        }
      memcpy (data, header, (size_t) header_size);
      for (size_t i = 0; i < size - (size_t) header_size; i++)
        data[header_size + i] = (uint8_t) (tap_random (&rng) >> 33);
      for (size_t k = 0; k < (size_t) WIDTH * HEIGHT && (k + 1) * bytes_per_sample <= raster - (size_t) cases[c].cut;
           k++)
        {
          uint8_t *sample = data + header_size + k * bytes_per_sample;
          uint32_t v = bytes_per_sample == 1 ? sample[0] : (uint32_t) sample[0] << 8 | sample[1];
          v = (long) k == cases[c].bad ? (uint32_t) cases[c].maxval + 1 : v % ((uint32_t) cases[c].maxval + 1);
          if (bytes_per_sample == 1)
            sample[0] = (uint8_t) v;
          else
            sample[0] = (uint8_t) (v >> 8), sample[1] = (uint8_t) v;
          expected = expected * 1000003u + v;
        }

      EsImage memory = { 0 };
      EsError memory_error = { 0 };
      const bool memory_ok = es_load_memory (data, size, 16, &memory, &memory_error);
      uint64_t got = 0;
      for (int y = 0; memory_ok && y < memory.height; y++)
        for (int x = 0; x < memory.width; x++)
          {
            const uint8_t *row = (const uint8_t *) memory.pixels + (size_t) y * memory.stride;
            got = got * 1000003u + (bytes_per_sample == 1 ? row[x] : ((const uint16_t *) row)[x]);
          }
      if (cases[c].says[0] == '\0')
        tap_ok (memory_ok && memory.width == WIDTH && memory.height == HEIGHT && got == expected,
                "%s: loads from memory, every sample as stored%s%s", cases[c].what, memory_ok ? "" : ": ",
                memory_error.message);
      else
        tap_ok (!memory_ok && strcmp (memory_error.message, cases[c].says) == 0, "%s: refused from memory: %s",
                cases[c].what, memory_error.message);

      const int fd = mkstemp (path);
      const bool written = fd >= 0 && write (fd, data, size) == (ssize_t) size;
      /* Pieces of one byte, odd sizes, the buffer's and no cap at all. */
      static const size_t pieces[] = { 1, 4093, 65536, 0 };
      for (size_t p = 0; written && p < sizeof pieces / sizeof pieces[0]; p++)
        {
          EsImage streamed = { 0 };
          EsError streamed_error = { 0 };
          lseek (fd, 0, SEEK_SET);
          es_reader_set_piece_max (pieces[p]);
          const bool streamed_ok = es_load_fd (fd, 16, &streamed, &streamed_error);
          es_reader_set_piece_max (0);
          same = same && streamed_ok == memory_ok && strcmp (streamed_error.message, memory_error.message) == 0
                 && (!memory_ok || image_hash (&streamed) == image_hash (&memory));
          es_image_clear (&streamed);
        }
      tap_ok (written && same, "%s: read from a file in pieces of 1, 4093, 65536 bytes and whole, as from memory",
              cases[c].what);
      if (fd >= 0)
        {
          close (fd);
          unlink (path);
        }
      es_image_clear (&memory);
      free (data);
    }
}

static void
test_files (void)
{
  EsImage image = { 0 };
  EsError error = { 0 };
  bool ok;

  ok = es_load_file ("/nonexistent/entroscope.png", 16, &image, &error);
  tap_ok (!ok && error.code == ES_ERROR_IO && strstr (error.message, "No such file") != NULL,
          "a missing file is an I/O error: %s", error.message);
  es_error_clear (&error);
  ok = es_load_file (testdata, 16, &image, &error);
  tap_ok (!ok && error.code == ES_ERROR_IO && one_line (&error), "a folder is an I/O error: %s", error.message);
}

int
main (void)
{
  load_tests_init ();
  test_files ();
  test_recognition ();
  test_bounded_reading ();
  test_streamed ();
  test_large_binary_pgm ();
  return tap_done ();
}
