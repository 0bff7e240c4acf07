/* SPDX-License-Identifier: MIT */
/* entroscope-cli's stacks: a multi-page TIFF in, every page through the job, one multi-page TIFF out. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "es-load.h"
#include "es-stack.h"
#include "es-tiff.h"

static int
es_stack_failed (const char *input, EsControl *interrupt, const EsError *error)
{
  if (error->code == ES_ERROR_CANCELLED || es_control_cancelled (interrupt))
    return ES_EXIT_SIGNAL_BASE;
  return es_cli_report_error (input, error);
}

static void
es_stack_notice (const char *input, const char *notice)
{
  if (notice != NULL)
    es_cli_report (input, "note: %s", notice);
}

void
es_stack_pages_close (EsStackPages *stack)
{
  if (stack->pages != NULL)
    es_pages_close (stack->pages);
  if (stack->sandboxed)
    {
      close (stack->fd);
      es_sandbox_stack_clear (&stack->batch);
    }
  *stack = (EsStackPages){ 0 };
}

static int
es_stack_count (const EsStackPages *stack)
{
  return stack->pages != NULL ? es_pages_count (stack->pages) : stack->batch.count;
}

/* Page i's size and the format es_pages_load gives it. */
static bool
es_stack_shape (EsStackPages *stack, int i, int *width, int *height, EsFormat *format, EsError *error)
{
  const EsPageShape *shape;
  int depth;
  bool floats;

  if (stack->pages != NULL)
    return es_pages_size (stack->pages, i, width, height, error)
           && es_pages_format (stack->pages, i, format, &depth, &floats, error);
  shape = &stack->batch.shapes[i];
  *width = shape->width;
  *height = shape->height;
  *format = shape->format;
  return true;
}

/* Page i's image, and what the loader said of it (NULL: nothing); in the
 * sandbox, taken from the batch that holds it, decoded when none does. */
static bool
es_stack_load (EsStackPages *stack, int i, EsImage *image, const char **notice, EsError *error)
{
  EsSandboxStack *batch = &stack->batch;
  bool ok;

  if (stack->pages != NULL)
    {
      ok = es_pages_load (stack->pages, i, image, error);
      *notice = es_pages_notice (stack->pages);
      return ok;
    }
  if ((i < batch->first || i >= batch->first + batch->decoded)
      && !es_sandbox_decode_stack (stack->fd, &stack->request, i, batch, error))
    return false;
  *image = batch->images[i - batch->first];
  batch->images[i - batch->first] = (EsImage){ 0 };
  *notice = batch->notices[i - batch->first][0] != '\0' ? batch->notices[i - batch->first] : NULL;
  return true;
}

/* A stack whose decoded pages take no more than this in all is decoded as
 * its pages are checked and held until written: each page's directory is
 * then read once, which is most of the time of a stack of small pages (a
 * TIFF of 65535 one-pixel pages). Larger pages are decoded as they are
 * written, one at a time. */
#define ES_STACK_HELD_BYTES ((uint64_t) 64 << 20)

static void
es_stack_release (EsImage *held, int count)
{
  if (held == NULL)
    return;
  for (int i = 0; i < count; i++)
    es_image_clear (&held[i]);
  free (held);
}

/* Every page's size and format, and the output's bytes from them, before
 * anything is written (they decide between TIFF and BigTIFF); the pages
 * that fit ES_STACK_HELD_BYTES are decoded into held[] on the way, while
 * libtiff holds their directory. */
static bool
es_stack_check (EsStackPages *pages, const EsViewParams *params, const char *input, EsImage *held, uint64_t *bytes,
                EsError *error)
{
  int count = es_stack_count (pages);
  uint64_t held_bytes = 0;

  *bytes = 0;
  for (int i = 0; i < count; i++)
    {
      int width, height;
      EsFormat format;
      const char *notice;
      uint64_t most;

      if (!es_stack_shape (pages, i, &width, &height, &format, error))
        return false;
      /* A page decodes to 16 bits a sample at most (floats too). */
      most = (uint64_t) width * (uint64_t) height * 2;
      if (held != NULL && held_bytes + most <= ES_STACK_HELD_BYTES)
        {
          if (!es_stack_load (pages, i, &held[i], &notice, error))
            return false;
          es_stack_notice (input, notice);
          held_bytes += most;
        }
      *bytes += (uint64_t) width * (uint64_t) height * es_format_size (es_job_output_format (&params->job, format));
    }
  return true;
}

/* Every page through the job, each written as soon as it is done: the
 * stack holds one page and its result at a time, besides the small pages
 * held from the check. */
static int
es_stack_process (EsEngine *engine, const EsViewParams *params, const EsCliOptions *options, EsStackPages *pages,
                  const char *input, const char *target, EsControl *interrupt, EsResult *result)
{
  int count = es_stack_count (pages);
  uint64_t bytes = 0;
  /* The sandbox's batches hold small pages already. */
  EsImage *held = pages->sandboxed ? NULL : calloc ((size_t) count, sizeof *held);
  EsTiffWriter *writer = NULL;
  EsError error = { 0 };

  /* Without memory for held[], every page is decoded as it is written. */
  if (!es_stack_check (pages, params, input, held, &bytes, &error)
      || (writer = es_tiff_writer_open (target, count, bytes, &error)) == NULL)
    {
      es_stack_release (held, count);
      return es_stack_failed (input, interrupt, &error);
    }
  for (int i = 0; i < count; i++)
    {
      EsImage image = { 0 };
      const char *notice = NULL;
      bool ok = true;

      if (held != NULL && held[i].pixels != NULL)
        {
          image = held[i];
          held[i] = (EsImage){ 0 };
        }
      else
        {
          ok = es_stack_load (pages, i, &image, &notice, &error);
          es_stack_notice (input, notice);
        }
      if (ok && !es_cli_check_mask (options->reads[ES_CLI_READS_MASK], &params->job, input, &image, &error))
        {
          es_image_clear (&image);
          es_tiff_writer_abort (writer);
          es_stack_release (held, count);
          es_error_prefix (&error, "page %d", i + 1);
          return es_stack_failed (options->reads[ES_CLI_READS_MASK], interrupt, &error);
        }
      if (ok)
        {
          ok = es_pipeline_run_controlled (engine, &image, params, result, interrupt, &error);
          if (!ok)
            es_error_prefix (&error, "page %d", i + 1);
        }
      es_image_clear (&image);
      if (ok)
        ok = es_tiff_writer_add (writer, &result->values, &result->info, &error);
      if (!ok)
        {
          es_tiff_writer_abort (writer);
          es_stack_release (held, count);
          return es_stack_failed (input, interrupt, &error);
        }
    }
  es_stack_release (held, count);
  if (!es_tiff_writer_commit (writer, &error))
    return es_stack_failed (target, interrupt, &error);
  return ES_EXIT_OK;
}

int
es_cli_stack_process (EsEngine *engine, const EsViewParams *params, const EsCliOptions *options, EsExportFormat format,
                      EsStackPages *pages, const char *input, const char *output, bool to_stdout, EsControl *interrupt,
                      EsResult *result)
{
  int status;

  if (format != ES_EXPORT_TIFF)
    {
      es_cli_report (input,
                     _ ("a stack of %d pages is written only as a multi-page TIFF (--format tif, or -o NAME.tif)"),
                     es_stack_count (pages));
      return ES_EXIT_DATA;
    }
  status = es_stack_process (engine, params, options, pages, input, strcmp (output, "-") == 0 ? "/dev/stdout" : output,
                             interrupt, result);
  if (status == ES_EXIT_OK && !options->quiet && !to_stdout)
    {
      es_cli_progress_clear ();
      printf ("wrote %s (%d pages)\n", output, es_stack_count (pages));
      fflush (stdout);
    }
  return status;
}
