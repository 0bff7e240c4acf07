/* SPDX-License-Identifier: MIT */
/* entroscope-cli's stacks: a multi-page TIFF in, every page through the job, one multi-page TIFF out. */
#include <stdio.h>
#include <string.h>

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
es_stack_notice (const char *input, const EsPages *pages)
{
  if (es_pages_notice (pages) != NULL)
    es_cli_report (input, "note: %s", es_pages_notice (pages));
}

/* Every page through the job, each written as soon as it is done: the
 * stack holds one page and its result at a time. */
static int
es_stack_process (EsEngine *engine, const EsViewParams *params, const EsCliOptions *options, EsPages *pages,
                  const char *input, const char *target, EsControl *interrupt, EsResult *result)
{
  size_t sample = es_format_size (es_op_output_format (params->job.op));
  int count = es_pages_count (pages);
  uint64_t bytes = 0;
  EsTiffWriter *writer;
  EsError error = { 0 };

  /* The pages' sizes, before anything is written, decide between TIFF and
   * BigTIFF. */
  for (int i = 0; i < count; i++)
    {
      int width, height;
      if (!es_pages_size (pages, i, &width, &height, &error))
        return es_stack_failed (input, interrupt, &error);
      bytes += (uint64_t) width * (uint64_t) height * sample;
    }
  writer = es_tiff_writer_open (target, count, bytes, &error);
  if (writer == NULL)
    return es_stack_failed (input, interrupt, &error);
  for (int i = 0; i < count; i++)
    {
      EsImage image = { 0 };
      bool ok = es_pages_load (pages, i, &image, &error);

      es_stack_notice (input, pages);
      if (ok && !es_cli_check_mask (options, &params->job, input, &image, &error))
        {
          es_image_clear (&image);
          es_tiff_writer_abort (writer);
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
          return es_stack_failed (input, interrupt, &error);
        }
    }
  if (!es_tiff_writer_commit (writer, &error))
    return es_stack_failed (target, interrupt, &error);
  return ES_EXIT_OK;
}

int
es_cli_stack_process (EsEngine *engine, const EsViewParams *params, const EsCliOptions *options, EsExportFormat format,
                      EsPages *pages, const char *input, const char *output, bool to_stdout, EsControl *interrupt,
                      EsResult *result)
{
  int status;

  if (format != ES_EXPORT_TIFF)
    {
      es_cli_report (input, "a stack of %d pages is written only as a multi-page TIFF (--format tif, or -o NAME.tif)",
                     es_pages_count (pages));
      return ES_EXIT_DATA;
    }
  status = es_stack_process (engine, params, options, pages, input, strcmp (output, "-") == 0 ? "/dev/stdout" : output,
                             interrupt, result);
  if (status == ES_EXIT_OK && !options->quiet && !to_stdout)
    {
      es_cli_progress_clear ();
      printf ("wrote %s (%d pages)\n", output, es_pages_count (pages));
      fflush (stdout);
    }
  return status;
}
