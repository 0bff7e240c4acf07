/* SPDX-License-Identifier: MIT */
/* Computing a job in bands of rows on an image that is still being decoded, for an export that writes rows as they are done. */
#pragma once

#include "es-load.h"
#include "es-pipeline.h"

/* One input on its way from file to file, three threads at once:
 *
 *   decoding thread   es_pages_open_watched (..., es_stream_watch (s), ...), then es_stream_decoded
 *   computing thread  es_stream_start, es_stream_prepare, es_stream_run
 *   encoding thread   es_pipeline_export of the result, whose rows arrive through result->gate
 *
 * A band of output rows is computed as soon as the input rows under its
 * windows are decoded, and released to the encoder at once; the last row
 * only once the decoder has checked the whole file, so a damaged file
 * never gets an output. */
typedef struct EsStream EsStream;

EsStream *es_stream_new (void);
/* Clears what a failed decode left (EsRowWatch.kept); call once every thread is done. */
void es_stream_free (EsStream *stream);

EsRowWatch *es_stream_watch (EsStream *stream);
/* The decoding thread, when es_pages_open_watched has returned: ok when it
 * gave a valid image. */
void es_stream_decoded (EsStream *stream, bool ok);

/* Waits for the decoder's first rows; false when it finished without any
 * (an input not decoded row by row, or one that failed early): run the
 * job the ordinary way then. */
bool es_stream_start (EsStream *stream);
/* Allocates result->values, describes them and sets result->gate, before
 * the encoder starts. */
bool es_stream_prepare (EsStream *stream, const EsViewParams *params, EsResult *result, EsError *error);
/* Computes the bands, releasing each. False when computing failed or was
 * cancelled (error says why) or when the decode failed (*decode_failed:
 * the decoder's own error says why); the gate has failed then. */
bool es_stream_run (EsStream *stream, EsEngine *engine, const EsViewParams *params, EsResult *result,
                    EsControl *control, bool *decode_failed, EsError *error);
