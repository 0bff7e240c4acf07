/* SPDX-License-Identifier: MIT */
/* entroscope-cli's inputs: decode (a thread), compute (the main thread) and encode (a thread) overlapped over a ring of images. */
#include "es-cli-batch.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "es-cli-metrics.h"
#include "es-cli-volume.h"
#include "es-load.h"
#include "es-sandbox.h"
#include "es-stack.h"
#include "es-stream.h"

/* Images in flight: one decoding, one computing, one encoding. */
enum { RING = 3 };

typedef enum {
  SLOT_FREE,
  SLOT_DECODED,
  SLOT_COMPUTED,
} SlotState;

/* One input on its way through the stages. Everything the encoder reports
 * is kept here, so that reports come out in the inputs' order. */
typedef struct {
  SlotState state;
  EsImage image;
  EsResult result;
  bool is_stack;      /* a multi-page input: the main thread runs it whole */
  EsStackPages stack; /* its pages, kept open: a pipe can be read only once */
  bool done;          /* already reported and written (a stack) */
  bool failed;        /* error holds why, unless cancelled */
  bool cancelled;
  int status; /* of a stack */
  EsError error;
  const char *error_subject; /* the file error is about; NULL: the input */
  char page_notice[256];     /* what the loader had to say (NaN in float pages) */
  char notice[640];          /* the engine's fallback notice */
  double decode_ms, compute_ms, encode_ms;
  uint64_t bytes; /* the input file's size, 0 for a pipe */
} Slot;

typedef struct {
  const EsCliBatch *b;
  Slot slots[RING];
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int stop_at; /* the first input not to take: n_inputs unless interrupted */
  int encoded; /* inputs the encoder has finished */
  bool decoder_done, encoder_done;
  pthread_t decoder, encoder;
  double start_ms;
  double busy_ms[3]; /* decode, compute, encode */
  uint64_t bytes_done;
  char **written; /* outputs written so far (the encoder's) */
  bool notice_shown;
  bool metrics_heading_shown;
  bool streamed; /* the one input went band by band (run_streamed) */
  EsCliBatchOutcome *outcome;
} Batch;

static bool
is_stdout_name (const char *output)
{
  return strcmp (output, "-") == 0;
}

/* An interruption seen while handling input i: nothing after it starts. */
static void
stop_after (Batch *batch, int i)
{
  pthread_mutex_lock (&batch->lock);
  if (batch->stop_at > i + 1)
    batch->stop_at = i + 1;
  pthread_cond_broadcast (&batch->changed);
  pthread_mutex_unlock (&batch->lock);
}

/* Waits for the condition a little; once interrupted, re-sends the signal
 * to the stage threads still running, so that a read or a write blocked on
 * a pipe returns (EINTR) and sees the interruption. Called locked. */
static void
wait_a_little (Batch *batch)
{
  struct timespec until;

  if (es_control_cancelled (batch->b->interrupt))
    {
      int sig = *batch->b->interrupt_signal ? *batch->b->interrupt_signal : SIGINT;
      if (!batch->decoder_done)
        pthread_kill (batch->decoder, sig);
      if (!batch->encoder_done)
        pthread_kill (batch->encoder, sig);
    }
  clock_gettime (CLOCK_REALTIME, &until);
  until.tv_nsec += 20 * 1000000;
  if (until.tv_nsec >= 1000000000)
    {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
  pthread_cond_timedwait (&batch->changed, &batch->lock, &until);
}

/* ---- the stages: one input each ---- */

/* --sandbox: the input decoded in the sandbox: whole as a volume for a
 * 3-D job, else page by page, the first batch of pages here (a stack's
 * others as it is processed). */
static void
decode_sandboxed (const EsCliBatch *b, const char *input, Slot *slot)
{
  const EsDecodeRequest request = {
    .levels = b->params->job.levels,
    .choice = b->options->volume_choice,
  };
  EsSandboxStack batch = { 0 };
  int fd;

  if (es_cli_reads_volumes (b->options, &b->params->job))
    {
      slot->failed = !es_decode_path (input, true, &request, &slot->image, slot->page_notice, sizeof slot->page_notice,
                                      &slot->error)
                     || (es_image_planes (&slot->image) > 1
                         && !es_cli_volume_check_output (b->format, b->to_stdout, es_image_planes (&slot->image),
                                                         &slot->error));
      return;
    }
  if ((fd = es_sandbox_open_stack (input, &slot->error)) < 0
      || !es_sandbox_decode_stack (fd, &request, 0, &batch, &slot->error))
    {
      slot->failed = true;
      es_sandbox_stack_clear (&batch);
      if (fd >= 0)
        close (fd);
    }
  else if (batch.count > 1)
    {
      slot->is_stack = true;
      slot->stack = (EsStackPages){ .sandboxed = true, .fd = fd, .request = request, .batch = batch };
    }
  else
    {
      slot->image = batch.images[0];
      batch.images[0] = (EsImage){ 0 };
      snprintf (slot->page_notice, sizeof slot->page_notice, "%s", batch.notices[0]);
      es_sandbox_stack_clear (&batch);
      close (fd);
    }
}

/* Loads input i into the slot; with a watch, telling it of rows as they are decoded. */
static void
decode (Batch *batch, int i, Slot *slot, EsRowWatch *watch)
{
  const EsCliBatch *b = batch->b;
  const char *input = b->inputs[i];
  double start = es_monotonic_ms ();
  struct stat st;
  EsPages *pages;

  slot->bytes = stat (input, &st) == 0 && S_ISREG (st.st_mode) ? (uint64_t) st.st_size : 0;
  if (b->options->sandbox)
    {
      decode_sandboxed (b, input, slot);
      pages = NULL;
    }
  else if ((pages = es_pages_open_watched (input, b->params->job.levels, watch, &slot->error)) == NULL)
    slot->failed = true;
  else if (es_pages_count (pages) > 1 && es_cli_reads_volumes (b->options, &b->params->job))
    {
      /* A 3-D job reads the stack whole; what cannot be written is refused
       * before anything is computed. */
      slot->failed = !es_pages_load_volume (pages, &b->options->volume_choice, &slot->image, slot->page_notice,
                                            sizeof slot->page_notice, &slot->error)
                     || !es_cli_volume_check_output (b->format, b->to_stdout, es_image_planes (&slot->image),
                                                     &slot->error);
    }
  else if (es_pages_count (pages) > 1)
    {
      slot->is_stack = true;
      slot->stack.pages = pages;
      pages = NULL;
    }
  else
    {
      slot->failed = !es_pages_load (pages, 0, &slot->image, &slot->error);
      if (es_pages_notice (pages) != NULL)
        snprintf (slot->page_notice, sizeof slot->page_notice, "%s", es_pages_notice (pages));
    }
  if (pages != NULL)
    es_pages_close (pages);
  if (slot->failed && (slot->error.code == ES_ERROR_CANCELLED || es_control_cancelled (b->interrupt)))
    slot->cancelled = true;
  slot->decode_ms = es_monotonic_ms () - start;
}

static void
compute (Batch *batch, int i, Slot *slot)
{
  const EsCliBatch *b = batch->b;
  double start = es_monotonic_ms ();
  const char *notice;

  if (slot->failed || slot->cancelled)
    return;
  if (slot->is_stack)
    {
      /* Processed, written and reported whole, once every earlier input is
       * out: the stack's lines keep their place. */
      pthread_mutex_lock (&batch->lock);
      while (batch->encoded < i)
        wait_a_little (batch);
      pthread_mutex_unlock (&batch->lock);
      slot->status = es_cli_stack_process (b->engine, b->params, b->options, b->format, &slot->stack, b->inputs[i],
                                           b->outputs[i], b->to_stdout, b->interrupt, &slot->result);
      es_stack_pages_close (&slot->stack);
      slot->done = true;
      slot->cancelled = slot->status == ES_EXIT_SIGNAL_BASE;
      return;
    }
  if (!es_cli_check_mask (b->options->reads[ES_CLI_READS_MASK], &b->params->job, b->inputs[i], &slot->image,
                          &slot->error))
    {
      slot->failed = true;
      slot->error_subject = b->options->reads[ES_CLI_READS_MASK];
    }
  else if (!es_pipeline_run_controlled (b->engine, &slot->image, b->params, &slot->result, b->interrupt, &slot->error))
    {
      slot->failed = true;
      slot->cancelled = slot->error.code == ES_ERROR_CANCELLED;
    }
  es_image_clear (&slot->image);
  notice = es_engine_take_notice (b->engine);
  if (notice)
    snprintf (slot->notice, sizeof slot->notice, "%s", notice);
  slot->compute_ms = es_monotonic_ms () - start;
}

static void
print_timings (const char *input, const EsResult *result)
{
  const EsTiming *t = &result->timing;
  double mpx = (double) result->values.width * result->values.height * es_image_planes (&result->values) / 1e6;

  es_cli_progress_clear ();
  fprintf (stderr,
           "%s: upload %.3f ms, kernel %.3f ms, download %.3f ms, wall %.3f ms, "
           "backend %s, variant %s, %.1f Mpx/s\n",
           input, t->upload_ms, t->kernel_ms, t->download_ms, t->wall_ms, es_backend_name (t->backend),
           t->variant ? t->variant : "-", t->kernel_ms > 0.0 ? mpx / (t->kernel_ms / 1e3) : 0.0);
}

/* --metrics: the heading once, then a row an input and its kernels. */
static void
print_metrics (Batch *batch, const char *input, const EsResult *result)
{
  es_cli_progress_clear ();
  if (!batch->metrics_heading_shown)
    {
      fprintf (stderr, "%-24s ", "metrics");
      es_cli_metrics_heading (stderr);
      fputc ('\n', stderr);
      batch->metrics_heading_shown = true;
    }
  fprintf (stderr, "%-24s ", input);
  es_cli_metrics_columns (stderr, &result->timing.metrics);
  fputc ('\n', stderr);
  es_cli_metrics_kernels (stderr, &result->timing.metrics);
  es_cli_metrics_counters (stderr, &result->timing.metrics);
}

/* Reports and writes input i; returns its exit status. With `exported`,
 * a streamed run has already written it and export_error says how. */
static int
encode (Batch *batch, int i, Slot *slot, const bool *exported, const EsError *export_error)
{
  const EsCliBatch *b = batch->b;
  const EsCliOptions *o = b->options;
  const char *input = b->inputs[i], *output = b->outputs[i];
  EsCliBatchOutcome *outcome = batch->outcome;
  bool clash = false, volume = es_image_planes (&slot->result.values) > 1;
  double start = es_monotonic_ms ();
  char wrote[PATH_MAX + 64];
  EsError error;

  /* Two inputs of the same stem (a/x.png, b/x.png) would overwrite each other. */
  for (int j = 0; j < outcome->n_written && !clash; j++)
    clash = strcmp (batch->written[j], output) == 0;
  if (clash)
    {
      es_cli_report (input, _ ("not processed: %s was already written from an earlier input"), output);
      return ES_EXIT_DATA;
    }
  if (slot->done)
    return slot->status;
  if (slot->page_notice[0])
    es_cli_report (input, "note: %s", slot->page_notice);
  if (slot->cancelled)
    return ES_EXIT_SIGNAL_BASE;
  if (slot->failed)
    {
      int status = es_cli_report_error (slot->error_subject != NULL ? slot->error_subject : input, &slot->error);
      /* A job that failed still says why CUDA gave up, as before. */
      if (slot->notice[0] && !batch->notice_shown)
        {
          es_cli_report (NULL, "note: %s", slot->notice);
          batch->notice_shown = true;
        }
      return status;
    }
  if (slot->notice[0] && !batch->notice_shown)
    {
      es_cli_report (NULL, "note: %s", slot->notice);
      batch->notice_shown = true;
    }
  if (o->timings)
    print_timings (input, &slot->result);
  if (o->metrics)
    print_metrics (batch, input, &slot->result);

  es_error_clear (&error);
  snprintf (wrote, sizeof wrote, "%s", output);
  if (exported != NULL ? (error = *export_error, !*exported)
      : volume
        ? !es_cli_volume_export (output, b->format, &slot->result, o->colorbar, b->reads, wrote, sizeof wrote, &error)
        : !es_pipeline_export (is_stdout_name (output) ? "/dev/stdout" : output, b->format, &slot->result, o->colorbar,
                               &error))
    return es_control_cancelled (b->interrupt)
             ? ES_EXIT_SIGNAL_BASE
             : es_cli_report_error (is_stdout_name (output) ? "stdout" : output, &error);
  slot->encode_ms = es_monotonic_ms () - start;

  /* "wrote" would land inside the output itself. */
  if (!o->quiet && !b->to_stdout)
    {
      es_cli_progress_clear ();
      printf ("wrote %s\n", wrote);
      fflush (stdout);
    }
  return ES_EXIT_OK;
}

/* The encoder's bookkeeping of input i, whatever its status. */
static void
finish (Batch *batch, int i, Slot *slot, int status)
{
  EsCliBatchOutcome *outcome = batch->outcome;

  if (status == ES_EXIT_OK)
    batch->written[outcome->n_written++] = batch->b->outputs[i];
  else if (status == ES_EXIT_SIGNAL_BASE)
    {
      if (!outcome->cut)
        outcome->cut = batch->b->inputs[i];
    }
  else if (status > outcome->worst)
    outcome->worst = status;
  batch->busy_ms[0] += slot->decode_ms;
  batch->busy_ms[1] += slot->compute_ms;
  batch->busy_ms[2] += slot->encode_ms;
  batch->bytes_done += slot->bytes;
}

static void
clear_slot (Slot *slot)
{
  EsResult result = slot->result;

  es_image_clear (&slot->image);
  es_stack_pages_close (&slot->stack);
  *slot = (Slot){ .result = result };
}

/* "[3/10] name.png · 4.1 files/s · 96 MB/s" before input i is reported. */
static void
show_progress (Batch *batch, int i)
{
  double seconds = (es_monotonic_ms () - batch->start_ms) / 1e3;

  if (!batch->b->show_progress)
    return;
  if (i == 0 || seconds <= 0)
    es_cli_progress_show (i + 1, batch->b->n_inputs, batch->b->inputs[i], -1, -1);
  else
    es_cli_progress_show (i + 1, batch->b->n_inputs, batch->b->inputs[i], i / seconds,
                          (double) batch->bytes_done / 1e6 / seconds);
}

/* ---- threads ---- */

static void *
decoder_main (void *data)
{
  Batch *batch = data;

  for (int i = 0; i < batch->b->n_inputs; i++)
    {
      Slot *slot = &batch->slots[i % RING];
      bool go;

      pthread_mutex_lock (&batch->lock);
      while (slot->state != SLOT_FREE && batch->stop_at > i)
        pthread_cond_wait (&batch->changed, &batch->lock);
      go = batch->stop_at > i && !es_control_cancelled (batch->b->interrupt);
      if (!go && batch->stop_at > i)
        batch->stop_at = i;
      pthread_mutex_unlock (&batch->lock);
      if (!go)
        break;

      decode (batch, i, slot, NULL);
      if (slot->cancelled)
        stop_after (batch, i);
      pthread_mutex_lock (&batch->lock);
      slot->state = SLOT_DECODED;
      pthread_cond_broadcast (&batch->changed);
      pthread_mutex_unlock (&batch->lock);
    }
  pthread_mutex_lock (&batch->lock);
  batch->decoder_done = true;
  pthread_cond_broadcast (&batch->changed);
  pthread_mutex_unlock (&batch->lock);
  return NULL;
}

static void *
encoder_main (void *data)
{
  Batch *batch = data;

  for (int i = 0; i < batch->b->n_inputs; i++)
    {
      Slot *slot = &batch->slots[i % RING];
      int status;

      pthread_mutex_lock (&batch->lock);
      while (slot->state != SLOT_COMPUTED && batch->stop_at > i)
        pthread_cond_wait (&batch->changed, &batch->lock);
      if (slot->state != SLOT_COMPUTED || batch->stop_at <= i)
        {
          pthread_mutex_unlock (&batch->lock);
          break;
        }
      pthread_mutex_unlock (&batch->lock);

      show_progress (batch, i);
      status = encode (batch, i, slot, NULL, NULL);
      finish (batch, i, slot, status);
      if (status == ES_EXIT_SIGNAL_BASE)
        stop_after (batch, i);
      pthread_mutex_lock (&batch->lock);
      clear_slot (slot);
      batch->encoded = i + 1;
      pthread_cond_broadcast (&batch->changed);
      pthread_mutex_unlock (&batch->lock);
    }
  pthread_mutex_lock (&batch->lock);
  batch->encoder_done = true;
  pthread_cond_broadcast (&batch->changed);
  pthread_mutex_unlock (&batch->lock);
  return NULL;
}

static void
run_threaded (Batch *batch)
{
  int n = batch->b->n_inputs;

  pthread_create (&batch->decoder, NULL, decoder_main, batch);
  pthread_create (&batch->encoder, NULL, encoder_main, batch);
  for (int i = 0; i < n; i++)
    {
      Slot *slot = &batch->slots[i % RING];
      bool go;

      pthread_mutex_lock (&batch->lock);
      while (slot->state != SLOT_DECODED && batch->stop_at > i)
        wait_a_little (batch);
      go = slot->state == SLOT_DECODED && batch->stop_at > i;
      pthread_mutex_unlock (&batch->lock);
      if (!go)
        break;

      compute (batch, i, slot);
      if (slot->cancelled)
        stop_after (batch, i);
      pthread_mutex_lock (&batch->lock);
      slot->state = SLOT_COMPUTED;
      pthread_cond_broadcast (&batch->changed);
      pthread_mutex_unlock (&batch->lock);
    }
  pthread_mutex_lock (&batch->lock);
  while (!batch->decoder_done || !batch->encoder_done)
    wait_a_little (batch);
  pthread_mutex_unlock (&batch->lock);
  pthread_join (batch->decoder, NULL);
  pthread_join (batch->encoder, NULL);
}

/* ---- one input ---- */

typedef struct {
  Batch *batch;
  EsStream *stream;
  bool exported;
  EsError export_error;
  double encode_ms;
} Streamed;

static void *
stream_decoder_main (void *data)
{
  Streamed *st = data;
  Slot *slot = &st->batch->slots[0];

  decode (st->batch, 0, slot, es_stream_watch (st->stream));
  es_stream_decoded (st->stream, !slot->failed);
  return NULL;
}

static void *
stream_encoder_main (void *data)
{
  Streamed *st = data;
  const EsCliBatch *b = st->batch->b;
  double start = es_monotonic_ms ();

  st->exported = es_pipeline_export (b->outputs[0], b->format, &st->batch->slots[0].result, b->options->colorbar,
                                     &st->export_error);
  st->encode_ms = es_monotonic_ms () - start;
  return NULL;
}

/* A regular file into a regular file (or a new one), by a job that can go
 * band by band, where rows arrive while the file is read: anything else
 * runs whole (a pipe would need the batch's signal forwarding to threads
 * blocked in I/O; with libdeflate, decoding first and then computing and
 * encoding on every core is faster). */
static bool
can_stream (const EsCliBatch *b)
{
  struct stat st;

  /* The sandbox hands the image over whole. */
  if (b->to_stdout || b->options->sandbox || !es_load_png_rows_while_reading ()
      || !es_pipeline_streams (b->engine, b->params, b->format))
    return false;
  if (stat (b->inputs[0], &st) != 0 || !S_ISREG (st.st_mode))
    return false;
  return stat (b->outputs[0], &st) != 0 || S_ISREG (st.st_mode);
}

/* Decoding (a thread), computing (this one) and encoding (a thread) the
 * same input at once, a band of rows at a time (es-stream.h). Inputs
 * that are not decoded row by row run whole, as run_inline does. */
static int
run_streamed (Batch *batch)
{
  Slot *slot = &batch->slots[0];
  Streamed st = { .batch = batch, .stream = es_stream_new () };
  pthread_t decoder, encoder;
  bool decode_failed = false, encoding = false, computed = false;
  EsError compute_error = { 0 };
  const char *notice;
  int status;

  if (st.stream == NULL)
    return -1;
  pthread_create (&decoder, NULL, stream_decoder_main, &st);
  if (!es_stream_start (st.stream))
    {
      pthread_join (decoder, NULL);
      es_stream_free (st.stream);
      compute (batch, 0, slot);
      return encode (batch, 0, slot, NULL, NULL);
    }
  /* The decoder thread owns slot->error and slot->failed until it is joined. */
  batch->streamed = true;
  if (es_stream_prepare (st.stream, batch->b->params, &slot->result, &compute_error))
    {
      double start = es_monotonic_ms ();

      encoding = pthread_create (&encoder, NULL, stream_encoder_main, &st) == 0;
      if (!encoding)
        es_error_set (&compute_error, ES_ERROR_NO_MEMORY, _ ("cannot start the encoding thread"));
      else
        computed = es_stream_run (st.stream, batch->b->engine, batch->b->params, &slot->result, batch->b->interrupt,
                                  &decode_failed, &compute_error);
      slot->compute_ms = es_monotonic_ms () - start;
    }
  pthread_join (decoder, NULL);
  if (encoding)
    pthread_join (encoder, NULL);
  /* A decoding error is the one to report; else the computing one. */
  if (!slot->failed && !computed && !decode_failed)
    {
      slot->failed = true;
      slot->error = compute_error;
    }
  if (slot->failed)
    slot->cancelled = slot->error.code == ES_ERROR_CANCELLED || es_control_cancelled (batch->b->interrupt);
  notice = es_engine_take_notice (batch->b->engine);
  if (notice)
    snprintf (slot->notice, sizeof slot->notice, "%s", notice);
  es_image_clear (&slot->image);
  slot->result.gate = NULL;
  status = encode (batch, 0, slot, &st.exported, &st.export_error);
  slot->encode_ms = st.encode_ms;
  es_stream_free (st.stream);
  return status;
}

/* One input: the same stages, overlapped within the input where it can go
 * band by band, else one after the other in this thread. */
static void
run_inline (Batch *batch)
{
  Slot *slot = &batch->slots[0];
  int status = -1;

  if (es_control_cancelled (batch->b->interrupt))
    return;
  if (can_stream (batch->b))
    status = run_streamed (batch);
  if (status < 0)
    {
      decode (batch, 0, slot, NULL);
      compute (batch, 0, slot);
      status = encode (batch, 0, slot, NULL, NULL);
    }
  finish (batch, 0, slot, status);
  clear_slot (slot);
}

void
es_cli_batch_run (const EsCliBatch *b, EsCliBatchOutcome *outcome)
{
  Batch batch = { .b = b, .stop_at = b->n_inputs, .outcome = outcome };

  *outcome = (EsCliBatchOutcome){ 0 };
  batch.written = calloc ((size_t) b->n_inputs, sizeof *batch.written);
  if (!batch.written)
    {
      es_cli_report (NULL, _ ("out of memory"));
      outcome->worst = ES_EXIT_COMPUTE;
      return;
    }
  pthread_mutex_init (&batch.lock, NULL);
  pthread_cond_init (&batch.changed, NULL);
  /* Before the first job, so that its shares have their peak. */
  if (b->options->metrics)
    es_cli_metrics_measure_peak (b->engine);
  batch.start_ms = es_monotonic_ms ();
  if (b->n_inputs == 1)
    run_inline (&batch);
  else
    run_threaded (&batch);
  es_cli_progress_clear ();

  if (b->options->timings)
    {
      double seconds = (es_monotonic_ms () - batch.start_ms) / 1e3;
      fprintf (stderr,
               "files: %d input%s in %.3f s, %.2f files/s, %.1f MB/s read; busy: decode %.3f s, "
               "compute %.3f s, encode %.3f s%s\n",
               b->n_inputs, b->n_inputs == 1 ? "" : "s", seconds, b->n_inputs / seconds,
               (double) batch.bytes_done / 1e6 / seconds, batch.busy_ms[0] / 1e3, batch.busy_ms[1] / 1e3,
               batch.busy_ms[2] / 1e3, batch.streamed ? " (overlapped, band by band)" : "");
    }
  for (int i = 0; i < RING; i++)
    {
      clear_slot (&batch.slots[i]);
      es_result_clear (&batch.slots[i].result);
    }
  pthread_cond_destroy (&batch.changed);
  pthread_mutex_destroy (&batch.lock);
  free (batch.written);
}
