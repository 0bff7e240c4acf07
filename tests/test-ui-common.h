/* SPDX-License-Identifier: MIT */
/* Shared by the UI tests (test-ui.c, test-ui-loop.c): one window under Xvfb, the gate that holds the compute back, waiting helpers. */
#pragma once

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "es-application.h"
#include "es-bar.h"
#include "es-canvas-private.h"
#include "es-colorbar-private.h"
#include "es-compare-window-private.h"
#include "es-load.h"
#include "es-settings.h"
#include "es-window-private.h"

/* The window's own settings (each window has a copy), and the
 * application's, which hold the defaults for new windows. */
extern GSettings *settings;
extern GSettings *app_settings;
extern EsApplication *application;
extern EsWindow *window;
extern char *tmpdir;

/* Test parameters (by EsParamId), drawn afresh each run (GTest prints the seed). */
extern double test_params[ES_N_PARAMS];
#define test_window ((int) test_params[ES_PARAM_WINDOW])
#define test_levels ((int) test_params[ES_PARAM_LEVELS])

extern gboolean timed_out;

/* The compute, held back on purpose: every job that runs a kernel passes
 * this gate (es_worker_set_job_hook) on the worker thread. It counts the
 * jobs and, while the gate is shut, holds each one before its kernel runs,
 * polling the job's control so that a cancel still stops it (a "deaf" gate
 * holds it until it opens, as a job that is slow to notice would be). */
typedef struct {
  GMutex lock;
  GCond cond;
  gboolean shut;
  gboolean deaf;
  double report;   /* progress reported while held (es_control_advance); <0: none */
  int started;     /* jobs that reached the gate */
  int held;        /* jobs waiting at it now */
  int cancelled;   /* jobs whose control was cancelled when they left it */
  EsWorkItem last; /* the last job that reached it */
} TestGate;
extern TestGate gate;

typedef gboolean (*Predicate) (gpointer data);
typedef struct {
  int base, n;
} GateCount;

void gate_hook (const EsWorkItem *item, EsControl *control, gpointer user_data);
void gate_set (gboolean shut, gboolean deaf, double report);
int gate_get (const int *field);
gboolean on_timeout (gpointer data);
void wait_for (gboolean *flag);
void wait_idle (void);
void wait_until (Predicate predicate, gpointer data, GFunc check, gpointer check_data);
gboolean is_idle (gpointer data);
gboolean gate_holds (gpointer data);
gboolean gate_holds_job (gpointer data);
gboolean request_sent (gpointer data);
char *test_image (const char *folder, const char *name);
void open_path (const char *path);
void set_view (const char *view);
void set_params (const double *values);
/* The entropy view, this run's parameters, magma reversed, auto range, bits. */
void set_test_settings (void);
double random_value (const EsParam *param);
void assert_pane_range (int pane, double lo, double hi);
void assert_job_label (const char *format, ...) G_GNUC_PRINTF (1, 2);

/* Exports: what the window writes, what the pipeline writes for the same job, and
 * their comparison. */
char *expected_export_as (const char *image_path, EsView view, EsExportFormat format, gboolean colorbar,
                          EsRangeMode range, EsUnits units, EsColormap colormap, gboolean reversed);
char *expected_export (const char *image_path, EsView view, EsExportFormat format, gboolean colorbar);
void on_exported (GObject *object, GAsyncResult *result, gpointer user_data);
void export_shown (const char *path, EsExportFormat format, gboolean colorbar);
void assert_same_files (const char *a, const char *b);

/* Each test may run alone (-p): opens the image the suite shows when none is. */
void ensure_image (void);
/* Neither the window nor `data` (another EsWindow) is busy, nothing is pending. */
gboolean window_idle (gpointer data);
/* An action's enabled state, as a button bound to it shows it. */
gboolean action_enabled (EsWindow *which, const char *action);
/* The last message starts with `prefix`, and the window is idle. */
gboolean message_starts (gpointer prefix);

/* Starts GTest, draws the test parameters, makes the application, the
 * settings and the window and puts the gate in front of its worker; the
 * teardown destroys them and the temporary folder. */
void ui_test_setup (int *argc, char ***argv);
void ui_test_teardown (void);
