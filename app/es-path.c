/* SPDX-License-Identifier: MIT */
/* Shortening file names for one-line messages. */
#include <string.h>

#include "es-path.h"

/* Moves a cut at p back to the start of the UTF-8 character it falls in. */
static size_t
char_start (const char *text, size_t p)
{
  while (p > 0 && ((unsigned char) text[p] & 0xc0) == 0x80)
    p--;
  return p;
}

const char *
es_path_shorten (const char *path, size_t max, char *out, size_t out_size)
{
  size_t length = strlen (path), head, tail;

  if (out_size == 0)
    return out;
  if (max > out_size - 1)
    max = out_size - 1;
  if (length <= max)
    {
      memcpy (out, path, length + 1);
      return out;
    }
  if (max < 5)
    {
      /* No room to say anything useful but that it was cut. */
      memcpy (out, "...", max < 3 ? max : 3);
      out[max < 3 ? max : 3] = '\0';
      return out;
    }
  /* A third for the start, the rest for the end: the file name matters most. */
  head = char_start (path, (max - 3) / 3);
  tail = length - (max - 3 - head);
  while (tail < length && ((unsigned char) path[tail] & 0xc0) == 0x80)
    tail++;
  memcpy (out, path, head);
  memcpy (out + head, "...", 3);
  memcpy (out + head + 3, path + tail, length - tail + 1);
  return out;
}
