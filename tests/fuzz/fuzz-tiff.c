/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for TIFF through libtiff: every page (up to a few) decoded from memory, from a
 * regular file read with pread(), and from a pipe read into memory in pieces; all three
 * must agree and keep the decoder contract. Without libtiff a TIFF must be refused by name. */
#include "es-fuzz.h"

/* Enough pages to reach the multi-page paths; more only repeat them. */
#define ES_FUZZ_TIFF_PAGES 4

/* Page i of pages, or the opening error when pages is NULL. */
static bool
load_page (EsPages *pages, const EsError *open_error, int i, EsImage *image, EsError *error)
{
  if (pages == NULL)
    {
      *error = *open_error;
      return false;
    }
  return es_pages_load (pages, i, image, error);
}

/* Loads from a descriptor and compares every page with the memory load. */
static void
compare_fd (int fd, EsPages *reference, const EsError *reference_error)
{
  EsError error = { 0 };
  EsPages *pages = es_pages_open_fd (fd, 0, &error);
  int count = reference != NULL ? es_pages_count (reference) : 1;

  ES_FUZZ_REQUIRE ((pages == NULL) == (reference == NULL));
  if (pages != NULL)
    ES_FUZZ_REQUIRE (es_pages_count (pages) == count);
  else
    {
      ES_FUZZ_REQUIRE (error.code == reference_error->code);
      ES_FUZZ_REQUIRE (strcmp (error.message, reference_error->message) == 0);
    }
  for (int i = 0; pages != NULL && i < count && i < ES_FUZZ_TIFF_PAGES; i++)
    {
      EsImage a = { 0 }, b = { 0 };
      EsError ea = { 0 }, eb = { 0 };
      bool ok_a = load_page (reference, reference_error, i, &a, &ea);
      bool ok_b = load_page (pages, &error, i, &b, &eb);

      es_fuzz_require_same (ok_a, &a, &ea, ok_b, &b, &eb);
      es_fuzz_check (ok_a, &a, &ea, 0);
      es_fuzz_check (ok_b, &b, &eb, 0);
    }
  es_pages_close (pages);
}

/* A fresh memory load: pages are decoded once each. */
static EsPages *
open_memory (const uint8_t *data, size_t size, EsError *error)
{
  *error = (EsError){ 0 };
  return es_pages_open_memory (data, size, 0, error);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  EsError error;
  EsPages *pages;
  int fd;

  es_image_set_max_pixels (ES_FUZZ_MAX_PIXELS);
  pages = open_memory (data, size, &error);
  if (pages == NULL)
    ES_FUZZ_REQUIRE (error.code != ES_OK && error.message[0] != '\0');
  else
    ES_FUZZ_REQUIRE (es_pages_count (pages) >= 1);
#ifndef ES_HAVE_TIFF
  if (size >= 4 && (memcmp (data, "II*", 4) == 0 || memcmp (data, "MM\0*", 4) == 0))
    ES_FUZZ_REQUIRE (pages == NULL && strstr (error.message, "TIFF is not supported") != NULL);
#endif
  es_pages_close (pages);

  /* A regular file, which libtiff reads where it lies in pread() calls,
   * then a pipe, read into memory in pieces first (fuzz-load tries limits):
   * both must agree with the memory decode. */
  for (int kind = 0; kind < 2; kind++)
    if ((fd = kind == 0 ? es_fuzz_memfd (data, size) : es_fuzz_pipe (data, size)) >= 0)
      {
        pages = open_memory (data, size, &error);
        es_reader_set_piece_max (es_fuzz_piece (data, size));
        compare_fd (fd, pages, &error);
        es_reader_set_piece_max (0);
        es_pages_close (pages);
        close (fd);
      }
  return 0;
}
