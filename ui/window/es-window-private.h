/* SPDX-License-Identifier: MIT */
/* EsWindow's insides, shared by es-window.c and its parts: -status.c, -open.c, -export.c, -compare.c,
 * -layout.c, -settings.c, -files.c, -tools.c. */
#pragma once

#include "es-colorbar.h"
#include "es-comparer.h"
#include "es-sidebar.h"
#include "es-timings.h"
#include "es-tools.h"
#include "es-window.h"

G_BEGIN_DECLS

struct _EsWindow {
  AdwApplicationWindow parent_instance;

  AdwToastOverlay *toast_overlay;
  GtkRevealer *error_revealer;
  GtkLabel *error_label;
  GMenu *recent_menu;
  GtkDropDown *view_dropdown;
  GtkSpinner *spinner;
  AdwWindowTitle *window_title;
  GtkMenuButton *zoom_button;
  AdwFlap *flap;
  GtkStack *stack;
  EsCanvas *canvas;
  GtkWidget *timings_group; /* the side panel's, with the timings */
  EsTimings *timings;
  GtkRevealer *progress_revealer;
  GtkLabel *progress_title;
  GtkLabel *progress_detail;
  GtkProgressBar *progress_bar;
  EsColorbar *colorbar;
  GtkLabel *position_label;
  GtkLabel *notice_label;
  GtkLabel *info_label;
  GtkLabel *definition_label; /* over the canvas: the entropy definition in force */
  EsSidebar *sidebar;

  GSettings *app_settings;       /* the application's: defaults for new windows */
  GSettings *settings;           /* this window's own copy (es-window-settings.c) */
  GVariant **undoable_values;    /* the values of the undoable keys before a change */
  GQueue undo_stack, redo_stack; /* SettingChange */
  gboolean undoing;              /* applying an undo or redo: not recorded */
  EsWorker *worker;
  GCancellable *cancellable; /* cancelled when the window goes away */
  GtkNativeDialog *chooser;

  GtkWindow *compare_window; /* weak; an EsCompareWindow (es-window-compare.c) */
  gboolean compare_when_open;

  /* The image on screen, and the one opened after it: that one becomes
   * the image on screen (title, readout and views at once) when its first
   * views are computed. */
  EsSource *source;
  EsSource *pending_source;
  char *loading_name;             /* the file being read and decoded, or NULL */
  GCancellable *load_cancellable; /* of that load */
  guint64 load_serial;            /* the newest load wins */
  int tasks;                      /* exports and copies */
  int exports;                    /* of those, exports */
  int comparisons;                /* Compare Variants runs (their window shows them) */
  gboolean busy;
  gboolean hardware_counters; /* win.hardware-counters: the views' jobs read them (es_engine_set_counters) */

  guint64 generation;           /* of the newest request */
  guint64 answered_generation;  /* of the newest complete response, or cancel */
  guint64 shown_generation;     /* of the newest response shown */
  guint64 cancelled_generation; /* of the newest request the user cancelled */
  GQueue requested_keys;        /* RequestedKeys of requests not yet shown, oldest first */
  GVariant *shown_keys;         /* the job keys of the response on screen (a{sv}), or NULL */
  EsLayer *shown[ES_N_VIEWS];
  /* The worker's pixels of shown[view], until the canvas takes them. */
  EsRendering renderings[ES_N_VIEWS];
  char *engine_description;
  gboolean cuda_in_use;

  /* Waiting for work: the progress overlay, the spinner and Escape. */
  gint64 waiting_since;     /* monotonic µs; 0 when nothing is waited for */
  guint progress_tick;      /* polls the worker's progress while waiting */
  guint progress_delay_ms;  /* before the overlay shows (ES_WINDOW_PROGRESS_DELAY_MS) */
  double progress_fraction; /* on the bar; -1 when it pulses */

  /* The last runs of each job, for the medians in the side panel's timings. */
  GQueue timing_history; /* TimingRecord */
  /* The newest decoded image waiting to be shown, until the first frame
   * painted with it tells how long opening it took (es-window-timings.c). */
  struct {
    guint64 source_serial; /* 0: none waits */
    gint64 requested;      /* monotonic µs of the open request */
    double decode_ms;
    double compute_ms; /* the worker's, once the image is on screen; <0 before */
  } opening;

  guint update_idle;
  GString *changes;           /* what changed since the last request */
  GQueue pending_log;         /* PendingChange, for ENTROSCOPE_DEBUG=timing */
  gulong after_paint_handler; /* for the log and the opening's time */
  GdkFrameClock *paint_clock;
  double last_worker_ms;
  double last_jobs_ms;
  /* ENTROSCOPE_DEBUG=timing: when the last response was handled, and when
   * the last frame's update (or before-paint), layout and paint phases
   * ended (monotonic µs), to split the time between a result and its frame. */
  gint64 response_handled;
  gint64 phase_end[3];

  int hover_pane, hover_x, hover_y;
  int readout_width, readout_height; /* the readout's tallest at this width (hold_readout_height) */
  guint status_idle;
  char *last_message;
  char *last_error;

  EsTools *tools; /* the inspection tools (es-window-tools.c) */
  /* A volume on screen (es-window-volume.c): the plane shown, and what is
   * drawn of the views' volume results for it. */
  GtkWidget *z_bar;
  GtkAdjustment *z_adjustment;
  GtkLabel *z_count_label;
  GtkToggleButton *ortho_button;
  int z;
  gboolean setting_z;          /* configuring the slider for a new image */
  EsSource *plane_source;      /* plane z of the source */
  EsLayer *planes[ES_N_VIEWS]; /* plane z of shown[view] */
  gboolean orthogonal;         /* XY, YZ and XZ of one view */
  EsView orthogonal_view;
  int cross_x, cross_y; /* the crosshair: the YZ slice's column, the XZ slice's row */
  EsLayer *slices[2];   /* XZ and YZ of shown[orthogonal_view] */
  int slice_at[2];      /* the row and the column they go through */
  char *pane_labels[3];
};

/* Long work shows its progress in the canvas after this long. */
#define ES_WINDOW_PROGRESS_DELAY_MS 500
/* Timings are the median of up to this many runs of the same job. */
#define ES_WINDOW_TIMING_RUNS 5

/* es-window.c: the core. */

/* The views on screen (ES_CANVAS_MAX_PANES at most): one, or the grid's;
 * returns how many. */
int _es_window_get_views (EsWindow *self, EsView *views);

/* Shows a toast and keeps its text (es_window_get_last_message). */
void _es_window_show_message (EsWindow *self, const char *message);
/* An error: "summary: reason" stays in the error banner until dismissed,
 * the toast says the summary alone, and the whole is the last message. */
void _es_window_show_error (EsWindow *self, const char *summary, const char *reason);
/* The banner goes (Dismiss, or another image on screen: the error was about what came before). */
void _es_window_clear_error (EsWindow *self);
void _es_window_update_busy (EsWindow *self);
/* Counts the task as busy work until it completes; an export or a copy
 * shows the spinner, a comparison its own window's progress. */
void _es_window_track_task (EsWindow *self, GTask *task, gboolean comparison);
/* Asks the worker for the current views after this main-loop iteration;
 * `what` names the change for the timing log. */
void _es_window_schedule_update (EsWindow *self, const char *what);
EsBackendChoice _es_window_get_backend (EsWindow *self);
/* How results are shown (colormap, range, units): no job depends on it. */
void _es_window_get_display (EsWindow *self, EsDisplay *display);
/* Shows the views again with the current display (the inspection tools'
 * contrast limits changed): no job runs. */
void _es_window_refresh (EsWindow *self);
/* The image that requests are for: the one being opened, else the one on screen. */
EsSource *_es_window_get_request_source (EsWindow *self);
/* The image on screen changes: title, subtitle, the Compare action. */
void _es_window_show_source (EsWindow *self, EsSource *source);
/* The title's subtitle: the image on screen, or the one being opened. */
void _es_window_update_subtitle (EsWindow *self);
/* Starts the progress tick (the overlay, the spinner) if work is waited for. */
void _es_window_update_progress (EsWindow *self);
/* es-window.c: whether the window waits for a job, an opening or a task;
 * whether what it waits for can be cancelled. */
gboolean _es_window_waiting (EsWindow *self);
gboolean _es_window_cancellable_work (EsWindow *self);
/* es-window-progress.c: the win.cancel action. */
void _es_window_cancel_action (GtkWidget *widget, const char *action_name, GVariant *parameter);
/* es-window-timings.c: the runs of each job, and their medians for the timings
 * (*n_runs 0: the layer's own timing, for the original, which runs nothing). */
void _es_window_record_timing (EsWindow *self, const EsLayer *layer);
void _es_window_forget_timings (EsWindow *self);
void _es_window_median_timing (EsWindow *self, const EsLayer *layer, EsTiming *median, int *n_runs);
/* The timing overlay's text for layer (es_timings_overlay_text of the
 * card's medians). Free with g_free. */
char *_es_window_overlay_text (EsWindow *self, const EsLayer *layer);
/* Opening, timed from the request (requested, monotonic µs) to the first
 * frame painted with the image: decoded replaces any opening still waiting
 * (a superseded one never reports); waits_for_paint says whether a frame
 * is awaited (once the image is on screen it keeps the worker's time for
 * it); painted, from the frame clock's after-paint, shows the time in the
 * card once that frame showed the image, and drops an opening whose image
 * was replaced, cancelled or failed. */
void _es_window_open_decoded (EsWindow *self, const EsSource *source, gint64 requested, double decode_ms);
gboolean _es_window_open_waits_for_paint (EsWindow *self);
void _es_window_open_painted (EsWindow *self, gint64 now);

/* es-window-status.c: the status bar, the timing log and the watch on the frame clock. */

void _es_window_class_status_init (EsWindowClass *klass);
void _es_window_status_init (EsWindow *self);
void _es_window_status_dispose (EsWindow *self);
void _es_window_status_finalize (EsWindow *self);
void _es_window_update_position (EsWindow *self);
void _es_window_update_zoom_label (EsWindow *self);
void _es_window_update_job_label (EsWindow *self, const EsLayer *layer, const EsValueInfo *info);
/* ENTROSCOPE_DEBUG=timing: a change, then the first frame painted with the
 * result of its request (the response's generation) after a response;
 * generation 0 for a display-only change (the next frame shows it). */
void _es_window_log_change (EsWindow *self, guint64 generation, const char *what);
/* After a response or a display change: the next frame's after-paint ends
 * the waits of the log and of an opening (_es_window_open_painted). */
void _es_window_watch_next_paint (EsWindow *self);

/* es-window-open.c: opening files, drag and drop, the sample. */

void _es_window_class_open_init (EsWindowClass *klass);
void _es_window_open_init (EsWindow *self);
/* Sets the process-wide pixel budget from "max-pixels" and the open images. */
void _es_window_apply_max_pixels (EsWindow *self);
/* File choosers start in the last folder and offer filters by pattern. */
void _es_window_set_chooser_folder (EsWindow *self, GtkFileChooser *chooser);
void _es_window_add_chooser_filter (GtkFileChooser *chooser, const char *name, const char *pattern);

/* es-window-export.c: export and copy. */

void _es_window_class_export_init (EsWindowClass *klass);
/* The file name for an export in that format: the extension of the format
 * replaces a known image or text extension, or is added. */
char *_es_window_export_name (const char *name, EsExportFormat format);
/* Exports the file as the chooser's Export does: the folder is remembered
 * once the file is written, the outcome is a toast (or the error banner). */
void _es_window_export_file (EsWindow *self, GFile *file, EsExportFormat format, gboolean colorbar);
/* Exports the file the chooser picked, named for the format (4: a volume's
 * every plane); when that name is another file that exists, first asks
 * whether to replace it: returns that question's dialog, else NULL. */
GtkWidget *_es_window_export_chosen (EsWindow *self, GFile *chosen, int format, gboolean colorbar);
/* The window closes: exports still writing stop and remove their
 * temporary files (each export holds the window and the application
 * until its thread is done, so that nothing is left half written). */
void _es_window_export_close (EsWindow *self);

/* es-window-layout.c: the side panel beside the canvas or as a sheet, the
 * error banner, the actions that need an image, fullscreen. */

void _es_window_class_layout_init (EsWindowClass *klass);
void _es_window_layout_init (EsWindow *self);
/* After the settings arrive (constructed). */
void _es_window_layout_bind (EsWindow *self);
/* Whether the side panel is on screen, beside the canvas or as a sheet. */
gboolean _es_window_get_panel_shown (EsWindow *self);
void _es_window_set_panel_shown (EsWindow *self, gboolean shown);
/* Export, copy, zoom and the rest follow whether an image is on screen;
 * Colormap and Reversed whether a heatmap is. */
void _es_window_update_actions (EsWindow *self);

/* es-window.c: the grid's first heatmap pane, where the active pane starts. */
int _es_window_first_grid_heatmap (void);

/* es-window-settings.c: this window's own settings, what a change does, undo and redo, reset. */

void _es_window_on_settings_changed (GSettings *settings, const char *key, EsWindow *self);

void _es_window_class_settings_init (EsWindowClass *klass);
/* A copy of defaults that this window alone reads and writes; what it
 * writes becomes the default for new windows, and the application-wide
 * keys (folders, limits, recent files) follow every window. */
void _es_window_settings_create (EsWindow *self, GSettings *defaults);
void _es_window_settings_dispose (EsWindow *self);
/* Copies another window's parameters, colours, view and backend. */
void _es_window_settings_copy_from (EsWindow *self, EsWindow *other);
/* The keys that jobs read (parameters, definition, variants, backend): noted
 * as a request goes (its generation), kept once its response is on screen,
 * and set back to those when the user cancels a newer request, so that the
 * side panel shows what the result on screen was computed with. */
void _es_window_note_requested_keys (EsWindow *self, guint64 generation);
void _es_window_note_shown_keys (EsWindow *self, guint64 generation);
void _es_window_restore_shown_keys (EsWindow *self);

/* es-window-files.c: recent files, image information. */

void _es_window_class_files_init (EsWindowClass *klass);
void _es_window_files_init (EsWindow *self);
/* After the settings arrive (constructed). */
void _es_window_files_bind (EsWindow *self);
/* Puts a file opened by the user first in "recent-files". */
void _es_window_add_recent (EsWindow *self, GFile *file);
/* What Image Information shows: the facts of the image on screen as
 * name, value, name, value…, NULL-terminated ({ "Size", "512 × 512
 * pixels (0.26 megapixels)", "Depth", "8-bit gray", … }); NULL without
 * an image. */
GStrv _es_window_source_facts (EsWindow *self);
/* What the file stored, in a word or two: "8-bit", "16-bit signed",
 * "float" (whose 16-bit samples are only how it is quantized). */
char *_es_window_describe_samples (const EsImage *image);
/* Its dialog's table of them: a GtkGrid of names and values. */
GtkWidget *_es_window_facts_table (const char *const *facts);

/* es-window-compare.c: the Compare Variants window and the EsComparer interface. */

void _es_window_class_compare_init (EsWindowClass *klass);
void _es_window_comparer_iface_init (EsComparerInterface *iface);
/* An image was opened: a comparison asked for before runs now. */
void _es_window_compare_opened (EsWindow *self);
void _es_window_compare_dispose (EsWindow *self);

/* es-window-volume.c: the Z slider, plane stepping and the orthogonal views. */
void _es_window_class_volume_init (EsWindowClass *klass);
void _es_window_volume_init (EsWindow *self);
void _es_window_volume_dispose (EsWindow *self);
/* A new image is on screen: the slider's range, the middle plane. */
void _es_window_volume_source_changed (EsWindow *self);
/* What is shown of a view's result: plane z of a volume's layer (made
 * once per plane and result), the layer itself for a 2-D image. */
EsLayer *_es_window_plane_of (EsWindow *self, EsLayer *layer);
/* The image on screen as tools and the readout see it: plane z of a
 * volume (its pixels are the volume's), else the source itself. */
EsSource *_es_window_get_shown_source (EsWindow *self);
/* The plane shown: 0 for a 2-D image. */
int _es_window_get_plane (EsWindow *self);
/* Whether the orthogonal views are on screen, and of which view. */
gboolean _es_window_get_orthogonal (EsWindow *self, EsView *view);
/* Fills panes[1] and panes[2] with the YZ and XZ slices beside panes[0],
 * the plane, and the crosshairs of all three; returns 3. */
int _es_window_orthogonal_panes (EsWindow *self, EsCanvasPane *panes);

/* es-window-tools.c: the inspection tools and the EsToolsHost interface. */

void _es_window_tools_host_iface_init (EsToolsHostInterface *iface);
/* Makes the tools and places their palette and panel (after the template is built). */
void _es_window_tools_init (EsWindow *self);

/* Not part of the widget's API: the window's own files read its state
 * through these, and so does tests/test-ui.c. */

/* The newest result of a view for the current image, or NULL. */
EsLayer *es_window_get_layer (EsWindow *self, EsView view);
/* The view that export, copy, the colorbar and the timings follow. */
EsView es_window_get_active_view (EsWindow *self);
/* The job the window runs for a view with the current settings. */
void es_window_get_view_job (EsWindow *self, EsView view, EsJob *job);
/* The entropy job that the readout and the pixel inspector count under:
 * the one on screen, else the settings', minmax binning resolved from the
 * source's range (never a scan per pointer move). */
void es_window_get_readout_job (EsWindow *self, EsJob *job);

/* Only tests/test-ui.c calls these. */

/* Shows plane z of a volume (clamped; nothing for a 2-D image), as the slider does. */
void es_window_set_plane (EsWindow *self, int z);
/* Loading, computing, exporting, copying or comparing variants. */
gboolean es_window_get_busy (EsWindow *self);
EsSource *es_window_get_source (EsWindow *self);
EsCanvas *es_window_get_canvas (EsWindow *self);
/* The text of the last toast. */
const char *es_window_get_last_message (EsWindow *self);
/* The text of the error banner, or NULL when it is not shown. */
const char *es_window_get_error (EsWindow *self);
/* The Compare Variants window (win.compare), or NULL before it is opened. */
GtkWindow *es_window_get_compare_window (EsWindow *self);
/* The worker, for es_worker_set_job_hook. */
EsWorker *es_window_get_worker (EsWindow *self);
/* How long work runs before the progress overlay shows (0: at once). */
void es_window_set_progress_delay (EsWindow *self, guint ms);
/* The inspection tools, for tests/test-ui-tools.c (through es-tools-private.h). */
EsTools *es_window_get_tools (EsWindow *self);

G_END_DECLS
