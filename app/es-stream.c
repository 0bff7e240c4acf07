/* SPDX-License-Identifier: MIT */
/* Bands of a job computed while their input is decoded and their output encoded. */
#include "es-stream.h"

#include <stdlib.h>
#include <string.h>

#include "es-row-gate.h"
#include "es-test-hooks.h"

/* Output rows a band: about two million pixels (a few milliseconds of
 * compute, a few of decoding), and at least four halos, so that the rows
 * computed twice at band edges cost little. */
#define ES_STREAM_BAND_PIXELS (2u << 20)

struct EsStream {
  EsRowWatch watch; /* first: the decoder's callback finds the stream from it */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  bool started; /* the decoder told of rows: input and decoded are set */
  bool decode_over;
  EsImage input;      /* the decoder's image: its pixels, not ours */
  EsRowGate decoded;  /* input rows decoded */
  EsRowGate computed; /* result rows computed, for the encoder */
};

static void
rows_decoded (EsRowWatch *watch, const EsImage *image, int rows)
{
  EsStream *stream = (EsStream *) watch;

  pthread_mutex_lock (&stream->lock);
  if (!stream->started)
    {
      stream->input = *image;
      stream->input.release = NULL;
      es_row_gate_init (&stream->decoded, image->height);
      es_row_gate_init (&stream->computed, image->height);
      stream->started = true;
      pthread_cond_broadcast (&stream->changed);
    }
  pthread_mutex_unlock (&stream->lock);
  es_row_gate_advance (&stream->decoded, rows);
}

EsStream *
es_stream_new (void)
{
  EsStream *stream = calloc (1, sizeof *stream);

  if (stream == NULL)
    return NULL;
  stream->watch.rows_decoded = rows_decoded;
  pthread_mutex_init (&stream->lock, NULL);
  pthread_cond_init (&stream->changed, NULL);
  return stream;
}

void
es_stream_free (EsStream *stream)
{
  if (stream == NULL)
    return;
  if (stream->started)
    {
      es_row_gate_clear (&stream->decoded);
      es_row_gate_clear (&stream->computed);
    }
  es_image_clear (&stream->watch.kept);
  pthread_cond_destroy (&stream->changed);
  pthread_mutex_destroy (&stream->lock);
  free (stream);
}

EsRowWatch *
es_stream_watch (EsStream *stream)
{
  return &stream->watch;
}

void
es_stream_decoded (EsStream *stream, bool ok)
{
  pthread_mutex_lock (&stream->lock);
  stream->decode_over = true;
  pthread_cond_broadcast (&stream->changed);
  pthread_mutex_unlock (&stream->lock);
  if (stream->started)
    {
      if (ok)
        es_row_gate_finish (&stream->decoded);
      else
        es_row_gate_fail (&stream->decoded);
    }
}

bool
es_stream_start (EsStream *stream)
{
  bool started;

  pthread_mutex_lock (&stream->lock);
  while (!stream->started && !stream->decode_over)
    pthread_cond_wait (&stream->changed, &stream->lock);
  started = stream->started;
  pthread_mutex_unlock (&stream->lock);
  return started;
}

bool
es_stream_prepare (EsStream *stream, const EsViewParams *params, EsResult *result, EsError *error)
{
  EsFormat format = es_job_output_format (&params->job, stream->input.format);

  es_image_clear (&result->values);
  if (!es_image_alloc (&result->values, stream->input.width, stream->input.height, format, es_format_depth (format),
                       error))
    return false;
  es_pipeline_describe (params, result);
  result->gate = &stream->computed;
  return true;
}

/* Rows first .. first + count - 1 of image, as an image of their own. */
static EsImage
rows_view (const EsImage *image, int first, int count)
{
  EsImage view = *image;

  view.pixels = (uint8_t *) image->pixels + (size_t) first * image->stride;
  view.height = count;
  view.release = NULL;
  return view;
}

bool
es_stream_run (EsStream *stream, EsEngine *engine, const EsViewParams *params, EsResult *result, EsControl *control,
               bool *decode_failed, EsError *error)
{
  const EsImage *input = &stream->input;
  int height = input->height;
  int halo = es_op_info (params->job.op)->halo (&params->job);
  int band = (int) (ES_STREAM_BAND_PIXELS / (unsigned) input->width);
  size_t row_bytes = (size_t) input->width * es_format_size (result->values.format);
  int test_rows = es_test_hook_stream_band_rows ();
  EsImage out = { 0 };
  double start = es_monotonic_ms ();
  bool ok = true;

  *decode_failed = false;
  band = band > 4 * halo ? band : 4 * halo;
  band = band > 16 ? band : 16;
  /* Tests make small images go in many bands. */
  if (test_rows > 0)
    band = test_rows;
  result->timing = (EsTiming){ 0 };
  for (int y0 = 0; y0 < height && ok; y0 += band)
    {
      int y1 = y0 + band < height ? y0 + band : height;
      int in0 = y0 - halo > 0 ? y0 - halo : 0;
      int in1 = y1 + halo < height ? y1 + halo : height;
      EsImage view = rows_view (input, in0, in1 - in0);
      EsTiming timing;

      /* The rows under this band's windows; the last ones only once the
       * whole file has proved valid. */
      if (!es_row_gate_wait (&stream->decoded, in1))
        {
          *decode_failed = true;
          ok = false;
          break;
        }
      if (!es_run_controlled (engine, &params->job, &view, &out, &timing, control, error))
        {
          ok = false;
          break;
        }
      /* The band's halo rows come out too, clipped at the band's edge, so it
       * is computed apart and only its own rows go into the result. */
      for (int y = y0; y < y1; y++)
        memcpy (es_image_row (&result->values, y), es_image_row (&out, y - in0), row_bytes);
      es_timing_accumulate (&result->timing, &timing);
      if (y1 < height)
        es_row_gate_advance (&stream->computed, y1);
    }
  es_image_clear (&out);
  result->timing.wall_ms = es_monotonic_ms () - start;
  if (ok)
    es_row_gate_finish (&stream->computed);
  else
    es_row_gate_fail (&stream->computed);
  return ok;
}
