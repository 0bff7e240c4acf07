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
  es_result_calibrate (result, &stream->input);
  result->gate = &stream->computed;
  return true;
}

/* A job whose halo is a tile (es_job_tile_passes): each band's rows go
 * into the tiles' statistics as soon as they are decoded; once every row
 * is in and the file has proved valid, the maps are built and the bands
 * blended into the result, the encoder following. On the CPU, which the
 * caller checked the engine uses (es_pipeline_streams). */
static bool
run_tile_passes (EsStream *stream, const EsTilePasses *passes, const EsViewParams *params, EsResult *result, int band,
                 EsControl *control, bool *decode_failed, EsError *error)
{
  const EsImage *input = &stream->input;
  int height = input->height;
  EsTileState *state;
  double start = es_monotonic_ms (), computing = 0, since;
  bool ok;

  if (!es_job_validate (&params->job, error)
      || (state = passes->begin (&params->job, input->width, height, input->format, error)) == NULL)
    return false;
  ok = true;
  for (int y0 = 0; y0 < height && ok; y0 += band)
    {
      int y1 = y0 + band < height ? y0 + band : height;
      EsImage rows = es_image_rows (input, y0, y1 - y0);

      /* The last rows only once the whole file has proved valid. */
      if (!es_row_gate_wait (&stream->decoded, y1))
        {
          *decode_failed = true;
          ok = false;
          break;
        }
      since = es_monotonic_ms ();
      ok = passes->add_rows (state, &rows, y0, control, error);
      computing += es_monotonic_ms () - since;
    }
  since = es_monotonic_ms ();
  ok = ok && passes->finish (state, control, error);
  /* Progress is the blend's, a row at a time. */
  es_control_begin (control, height);
  for (int y0 = 0; y0 < height && ok; y0 += band)
    {
      int y1 = y0 + band < height ? y0 + band : height;
      EsImage rows = es_image_rows (input, y0, y1 - y0), out = es_image_rows (&result->values, y0, y1 - y0);

      ok = passes->apply_rows (state, &rows, y0, &out, control, error);
      if (ok && y1 < height)
        es_row_gate_advance (&stream->computed, y1);
    }
  computing += es_monotonic_ms () - since;
  passes->free (state);
  result->timing = (EsTiming){
    .kernel_ms = computing, .wall_ms = es_monotonic_ms () - start, .backend = ES_BACKEND_CPU, .variant = "openmp"
  };
  if (ok)
    es_row_gate_finish (&stream->computed);
  else
    es_row_gate_fail (&stream->computed);
  return ok;
}

bool
es_stream_run (EsStream *stream, EsEngine *engine, const EsViewParams *params, EsResult *result, EsControl *control,
               bool *decode_failed, EsError *error)
{
  const EsTilePasses *passes = es_job_whole_image (&params->job) ? es_job_tile_passes (&params->job) : NULL;
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
  if (passes != NULL)
    return run_tile_passes (stream, passes, params, result, band, control, decode_failed, error);
  result->timing = (EsTiming){ 0 };
  for (int y0 = 0; y0 < height && ok; y0 += band)
    {
      int y1 = y0 + band < height ? y0 + band : height;
      int in0 = y0 - halo > 0 ? y0 - halo : 0;
      int in1 = y1 + halo < height ? y1 + halo : height;
      EsImage view = es_image_rows (input, in0, in1 - in0);
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
