/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: running the inputs, decode, compute and encode overlapped over a few images. */
#pragma once

#include <signal.h>

#include "es-cli-files.h"
#include "es-cli.h"

typedef struct {
  EsEngine *engine;
  const EsViewParams *params;
  const EsCliOptions *options;
  EsExportFormat format;
  char **inputs;
  char **outputs; /* planned, one per input */
  int n_inputs;
  const EsCliReadFiles *reads; /* the inputs and the options' files, which no output may be */
  bool to_stdout;
  bool show_progress;                      /* the "[3/10] name · files/s · MB/s" line */
  EsControl *interrupt;                    /* cancelled by SIGINT, SIGTERM, SIGHUP, SIGPIPE */
  volatile sig_atomic_t *interrupt_signal; /* the signal that did it, re-sent to a stage blocked in I/O */
} EsCliBatch;

typedef struct {
  int worst; /* the highest exit status of an input, interruptions aside */
  int n_written;
  const char *cut; /* the first input an interruption stopped, or NULL */
} EsCliBatchOutcome;

/* Loads, runs and writes every input; errors and "wrote" lines come out in
 * the inputs' order, as if one input were done after the other. With
 * several inputs, input i + 1 is decoded on a thread and input i − 1
 * encoded on another while input i computes: at most three images (input
 * and result) are held. Returns once every stage has stopped, also after
 * an interruption. */
void es_cli_batch_run (const EsCliBatch *batch, EsCliBatchOutcome *outcome);
