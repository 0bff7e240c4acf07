/* Image loading: reads a file whole and picks the decoder from its first bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "es-load.h"

/* Larger inputs are refused before reading: no accepted image needs them
 * (2^30 pixels of 16-bit PGM is 2 GiB) and a text matrix that large would
 * take minutes. */
#define ES_LOAD_MAX_FILE_SIZE (4ull << 30)

static bool
es_load_too_large (EsError *error)
{
  return es_error_set (error, ES_ERROR_IO, "file is larger than 4 GiB");
}

/* Reads all of fd; st_size is only a hint, so that pipes and files that
 * grow while being read are handled too. */
static bool
es_load_read_all (int fd, uint8_t **data, size_t *size, EsError *error)
{
  struct stat st;
  size_t capacity, length = 0;
  uint8_t *buffer;

  if (fstat (fd, &st) != 0)
    return es_error_set (error, ES_ERROR_IO, "%s", strerror (errno));
  if (S_ISDIR (st.st_mode))
    return es_error_set (error, ES_ERROR_IO, "%s", strerror (EISDIR));
  if (S_ISREG (st.st_mode) && (unsigned long long) st.st_size > ES_LOAD_MAX_FILE_SIZE)
    return es_load_too_large (error);
  capacity = S_ISREG (st.st_mode) && st.st_size > 0 ? (size_t) st.st_size + 1 : 65536;
  buffer = malloc (capacity);
  if (buffer == NULL)
    return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to read the file", capacity >> 20);

  for (;;)
    {
      ssize_t n;

      if (length == capacity)
        {
          uint8_t *bigger;

          if (capacity > ES_LOAD_MAX_FILE_SIZE)
            {
              free (buffer);
              return es_load_too_large (error);
            }
          capacity *= 2;
          bigger = realloc (buffer, capacity);
          if (bigger == NULL)
            {
              free (buffer);
              return es_error_set (error, ES_ERROR_NO_MEMORY, "cannot allocate %zu MiB to read the file",
                                   capacity >> 20);
            }
          buffer = bigger;
        }
      n = read (fd, buffer + length, capacity - length);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;

          free (buffer);
          return es_error_set (error, ES_ERROR_IO, "%s", strerror (saved));
        }
      if (n == 0)
        break;
      length += (size_t) n;
    }
  if (length > ES_LOAD_MAX_FILE_SIZE)
    {
      free (buffer);
      return es_load_too_large (error);
    }
  *data = buffer;
  *size = length;
  return true;
}

bool
es_load_file (const char *path, int levels, EsImage *image, EsError *error)
{
  uint8_t *data = NULL;
  size_t size = 0;
  bool ok;
  int fd;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return es_error_set (error, ES_ERROR_IO, "%s", strerror (errno));
  ok = es_load_read_all (fd, &data, &size, error);
  close (fd);
  if (!ok)
    return false;
  ok = es_load_memory (data, size, levels, image, error);
  free (data);
  return ok;
}

bool
es_load_memory (const void *data, size_t size, int levels, EsImage *image, EsError *error)
{
  const uint8_t *bytes = data;

  /* The PNG signature starts with 0x89 "PNG". A damaged one (a flipped bit,
   * text-mode line ending conversion) still goes to the PNG decoder, which
   * then says what is wrong with it, rather than to the text matrix parser,
   * which could only call it junk. */
  if ((size >= 1 && bytes[0] == 0x89) || (size >= 4 && memcmp (bytes + 1, "PNG", 3) == 0))
    return es_png_decode (data, size, image, error);
  if (size >= 2 && bytes[0] == 'P' && (bytes[1] == '2' || bytes[1] == '5'))
    return es_pgm_decode (data, size, image, error);
  return es_text_matrix_decode (data, size, levels, image, error);
}
