/* SPDX-License-Identifier: MIT */
/* UI tests of the window's files and settings (GTest, under Xvfb): a failed export keeps the remembered
 * folder, export names follow the format, PNG compression, closing mid-export, the error banner, the
 * export dialog's saved choices, the size-limit message in megapixels, undo/redo/reset, recent files, reopening the last image, image
 * information, New Window, the time opening an image took in the timings card, a JPEG opened upright. */
#include "es-sandbox.h"
#include "test-ui-common.h"

/* Exports, errors */

static void
test_export_folder (void)
{
  g_autofree char *bad = g_build_filename (tmpdir, "no-such-folder", "out.png", NULL);
  g_autofree char *good = g_build_filename (tmpdir, "exported.png", NULL);
  g_autoptr (GFile) bad_file = g_file_new_for_path (bad);
  g_autoptr (GFile) good_file = g_file_new_for_path (good);
  g_autoptr (GFile) folder = g_file_new_for_path (tmpdir);
  g_autofree char *folder_uri = g_file_get_uri (folder);
  g_autofree char *remembered = NULL;

  ensure_image ();
  g_settings_set_string (settings, "last-folder", "file:///before");
  _es_window_export_file (window, bad_file, ES_EXPORT_PNG, FALSE);
  wait_until (message_starts, "Could not export “out.png”: ", NULL, NULL);
  remembered = g_settings_get_string (settings, "last-folder");
  g_assert_cmpstr (remembered, ==, "file:///before");
  /* The error stays in the banner, whole. */
  g_assert_cmpstr (es_window_get_error (window), ==, es_window_get_last_message (window));
  g_assert_true (gtk_revealer_get_reveal_child (window->error_revealer));

  _es_window_export_file (window, good_file, ES_EXPORT_PNG, FALSE);
  wait_until (message_starts, "Exported “exported.png”", NULL, NULL);
  g_free (remembered);
  remembered = g_settings_get_string (settings, "last-folder");
  g_assert_cmpstr (remembered, ==, folder_uri);
  g_assert_cmpint (g_unlink (good), ==, 0);
  /* A success does not hide the last error; dismissing does. */
  g_assert_nonnull (es_window_get_error (window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.dismiss-error", NULL));
  g_assert_null (es_window_get_error (window));
}

/* The CLAHE view of a 16-bit image is exported as a 16-bit PNG of the
 * result's own values (its absolute range is 0..65535), and the readout
 * shows them as they are. */
static void
test_export_clahe16 (void)
{
  g_autofree char *image = test_image ("pngsuite", "basn0g16.png");
  g_autofree char *path = g_build_filename (tmpdir, "clahe16.png", NULL);
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autofree char *view_before = g_settings_get_string (settings, "view");
  g_autofree char *range_before = g_settings_get_string (settings, "range");
  EsImage read = { 0 };
  EsError error = { 0 };
  EsLayer *layer;
  int wrong = 0;

  open_path (image);
  g_settings_set_string (settings, "range", "absolute");
  set_view ("clahe");
  layer = es_window_get_layer (window, ES_VIEW_CLAHE);
  g_assert_nonnull (layer);
  g_assert_cmpint (layer->result.values.format, ==, ES_FORMAT_U16);
  g_assert_cmpfloat (layer->result.scale.hi, ==, 65535.0);
  export_shown (path, ES_EXPORT_PNG, FALSE);
  g_assert_true (es_load_file (path, 0, &read, &error));
  g_assert_cmpint (read.format, ==, ES_FORMAT_U16);
  g_assert_cmpint (read.width, ==, layer->result.values.width);
  g_assert_cmpint (read.height, ==, layer->result.values.height);
  for (int y = 0; y < read.height; y++)
    for (int x = 0; x < read.width; x++)
      wrong += es_image_sample (&read, x, y) != es_layer_value (layer, x, y);
  g_assert_cmpint (wrong, ==, 0);
  es_image_clear (&read);
  g_assert_cmpint (g_unlink (path), ==, 0);
  /* The next tests expect ensure_image's photograph in the view they left. */
  open_path (camera);
  g_settings_set_string (settings, "range", range_before);
  set_view (view_before);
}

static goffset
export_size (const char *compression)
{
  g_autofree char *path = g_build_filename (tmpdir, "compressed.png", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GFileInfo) info = NULL;

  g_settings_set_string (settings, "export-compression", compression);
  _es_window_export_file (window, file, ES_EXPORT_PNG, TRUE);
  wait_until (message_starts, "Exported “compressed.png”", NULL, NULL);
  g_assert_cmpstr (es_compression_name (es_save_get_compression ()), ==, compression);
  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_SIZE, G_FILE_QUERY_INFO_NONE, NULL, NULL);
  g_assert_nonnull (info);
  g_assert_cmpint (g_unlink (path), ==, 0);
  /* Each export's own message: the next wait sees the next one. */
  _es_window_show_message (window, "");
  return g_file_info_get_size (info);
}

/* The PNG compression setting reaches the encoder. */
static void
test_export_compression (void)
{
  goffset fast, small;

  ensure_image ();
  fast = export_size ("fast");
  small = export_size ("small");
  g_test_message ("fast %" G_GOFFSET_FORMAT " bytes, small %" G_GOFFSET_FORMAT, fast, small);
  g_assert_cmpint (small, <, fast);
  g_settings_reset (settings, "export-compression");
}

/* The export dialog opens on the saved format and compression (GTK 4.8
 * ignored them: every export reset both to the first option), showing the
 * format's files. */
static void
test_export_dialog_remembers (void)
{
  static const char *const formats[] = { "raw16", "text", "png" };
  static const char *const compressions[] = { "small", "default", "fast" };
  static const char *const filters[] = { "Raw 16-bit PNG", "Text matrix", "Colormapped PNG" };

  ensure_image ();
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_settings_set_string (settings, "export-format", formats[i]);
      g_settings_set_string (settings, "export-compression", compressions[i]);
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
      g_assert_nonnull (window->chooser);
      g_assert_cmpstr (gtk_file_chooser_get_choice (GTK_FILE_CHOOSER (window->chooser), "compression"), ==,
                       compressions[i]);
      /* The filter is the format: the files shown are the format's. */
      g_assert_cmpstr (gtk_file_filter_get_name (gtk_file_chooser_get_filter (GTK_FILE_CHOOSER (window->chooser))), ==,
                       filters[i]);
      gtk_native_dialog_destroy (window->chooser);
      g_clear_object (&window->chooser);
    }
  g_settings_reset (settings, "export-format");
  g_settings_reset (settings, "export-compression");
}

static gboolean exports_done (gpointer data);

static GtkFileFilter *
export_filter (GtkFileChooser *chooser, const char *name)
{
  g_autoptr (GListModel) filters = gtk_file_chooser_get_filters (chooser);

  for (guint i = 0; i < g_list_model_get_n_items (filters); i++)
    {
      g_autoptr (GtkFileFilter) filter = g_list_model_get_item (filters, i);

      if (g_strcmp0 (gtk_file_filter_get_name (filter), name) == 0)
        return filter;
    }
  g_error ("no filter “%s”", name);
}

/* The file chooser dialog on screen (GtkFileChooserNative's, without a portal). */
static GtkFileChooser *
shown_chooser (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) shown = g_list_model_get_item (toplevels, i);

      if (GTK_IS_FILE_CHOOSER_DIALOG (shown) && gtk_widget_get_visible (GTK_WIDGET (shown)))
        return GTK_FILE_CHOOSER (shown);
    }
  g_error ("no file chooser on screen");
}

/* The name in the export dialog follows the format chosen in it. */
static void
test_export_dialog_names (void)
{
  static const struct {
    const char *filter, *extension;
  } steps[] = {
    { "Text matrix", ".txt" },
#ifdef ES_HAVE_TIFF
    { "TIFF (the values as they are)", ".tif" },
#endif
    { "Raw 16-bit PNG", ".png" },
  };
  g_autoptr (GFile) folder = g_file_new_for_path (tmpdir);
  g_autofree char *folder_uri = g_file_get_uri (folder);
  g_autofree char *written = g_build_filename (tmpdir, "picked.txt", NULL);
  g_autofree char *text = NULL;
  GtkFileChooser *chooser, *shown;

  ensure_image ();
  g_settings_set_string (settings, "export-format", "png");
  g_settings_set_string (settings, "last-folder", folder_uri);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.export", NULL));
  chooser = GTK_FILE_CHOOSER (window->chooser);
  shown = shown_chooser ();
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      g_autofree char *name = NULL;

      /* As the user picks it: in the dialog shown (the chooser's own copy
       * of the filter follows only at the response). */
      gtk_file_chooser_set_filter (shown, export_filter (shown, steps[i].filter));
      name = gtk_file_chooser_get_current_name (chooser);
      g_assert_true (g_str_has_suffix (name, steps[i].extension));
      g_assert_true (g_str_has_prefix (name, "camera-"));
    }
  /* Export: the format written is the one picked last, under its name. */
  gtk_file_chooser_set_filter (shown, export_filter (shown, "Text matrix"));
  gtk_file_chooser_set_current_name (shown, "picked.png");
  /* Its Export button, as a click. */
  wait_idle ();
  g_assert_true (gtk_widget_activate (gtk_dialog_get_widget_for_response (GTK_DIALOG (shown), GTK_RESPONSE_ACCEPT)));
  wait_until (message_starts, "Exported “picked.txt”", NULL, NULL);
  g_assert_cmpstr (g_settings_get_string (settings, "export-format"), ==, "text");
  g_assert_true (g_file_get_contents (written, &text, NULL, NULL));
  g_assert_true (g_ascii_isdigit (text[0]));
  g_assert_cmpint (g_unlink (written), ==, 0);
  g_assert_null (window->chooser);
  g_settings_reset (settings, "export-format");
}

static char *
contents_of (const char *path)
{
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return text;
}

/* The chooser asked about “kept.png”; the text format writes “kept.txt”,
 * which exists: nothing is replaced before the user says so. */
static void
test_export_asks_before_replacing (void)
{
  g_autofree char *asked = g_build_filename (tmpdir, "kept.png", NULL);
  g_autofree char *kept = g_build_filename (tmpdir, "kept.txt", NULL);
  g_autofree char *fresh = g_build_filename (tmpdir, "fresh.png", NULL);
  g_autofree char *fresh_txt = g_build_filename (tmpdir, "fresh.txt", NULL);
  g_autoptr (GFile) asked_file = g_file_new_for_path (asked);
  g_autoptr (GFile) kept_file = g_file_new_for_path (kept);
  g_autoptr (GFile) fresh_file = g_file_new_for_path (fresh);
  g_autofree char *after_cancel = NULL, *after_replace = NULL;
  GtkWidget *dialog;

  ensure_image ();
  g_assert_true (g_file_set_contents (kept, "notes worth keeping\n", -1, NULL));
  _es_window_show_message (window, "");

  dialog = _es_window_export_chosen (window, asked_file, ES_EXPORT_TEXT, FALSE);
  g_assert_nonnull (dialog);
  g_assert_true (ADW_IS_MESSAGE_DIALOG (dialog));
  g_assert_cmpstr (adw_message_dialog_get_heading (ADW_MESSAGE_DIALOG (dialog)), ==, "Replace “kept.txt”?");
  g_assert_cmpstr (adw_message_dialog_get_default_response (ADW_MESSAGE_DIALOG (dialog)), ==, "cancel");
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  wait_until (window_idle, window, NULL, NULL);
  after_cancel = contents_of (kept);
  g_assert_cmpstr (after_cancel, ==, "notes worth keeping\n");
  g_assert_false (g_file_test (asked, G_FILE_TEST_EXISTS));
  g_assert_cmpstr (es_window_get_last_message (window), ==, "");

  dialog = _es_window_export_chosen (window, asked_file, ES_EXPORT_TEXT, FALSE);
  g_assert_nonnull (dialog);
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), "replace");
  wait_until (message_starts, "Exported “kept.txt”", NULL, NULL);
  after_replace = contents_of (kept);
  g_assert_cmpstr (after_replace, !=, "notes worth keeping\n");

  /* The name the chooser asked about: no second question. */
  g_assert_null (_es_window_export_chosen (window, kept_file, ES_EXPORT_TEXT, FALSE));
  wait_until (exports_done, window, NULL, NULL);
  /* A new name: nothing to ask. */
  g_assert_null (_es_window_export_chosen (window, fresh_file, ES_EXPORT_TEXT, FALSE));
  wait_until (message_starts, "Exported “fresh.txt”", NULL, NULL);
  g_assert_cmpint (g_unlink (kept), ==, 0);
  g_assert_cmpint (g_unlink (fresh_txt), ==, 0);
}

static gboolean
exports_done (gpointer data)
{
  return ES_WINDOW (data)->exports == 0 && !g_main_context_pending (NULL);
}

/* A window closed while it exports: the export stops and its temporary
 * file goes; the target is never written. */
static void
test_close_mid_export (void)
{
  g_autofree char *image = g_build_filename (tmpdir, "large.pgm", NULL);
  g_autofree char *target = g_build_filename (tmpdir, "large.txt", NULL);
  g_autoptr (GFile) image_file = g_file_new_for_path (image);
  g_autoptr (GFile) target_file = g_file_new_for_path (target);
  const int side = 2000;
  g_autofree guint8 *pgm = g_malloc (64 + side * side);
  int header = g_snprintf ((char *) pgm, 64, "P5\n%d %d\n255\n", side, side);
  EsWindow *other = es_window_new (ADW_APPLICATION (application), app_settings);
  g_autoptr (GDir) dir = NULL;
  const char *name;

  for (int i = 0; i < side * side; i++)
    pgm[header + i] = (guint8) (i * 7919u >> 3);
  g_assert_true (g_file_set_contents (image, (const char *) pgm, header + side * side, NULL));
  g_settings_set_string (other->settings, "view", "original");
  gtk_window_present (GTK_WINDOW (other));
  es_window_open (other, image_file);
  wait_until (window_idle, other, NULL, NULL);
  g_assert_nonnull (es_window_get_layer (other, ES_VIEW_ORIGINAL));

  g_object_ref (other);
  _es_window_export_file (other, target_file, ES_EXPORT_TEXT, FALSE);
  gtk_window_close (GTK_WINDOW (other));
  wait_until (exports_done, other, NULL, NULL);
  g_object_unref (other);

  g_assert_false (g_file_test (target, G_FILE_TEST_EXISTS));
  dir = g_dir_open (tmpdir, 0, NULL);
  while ((name = g_dir_read_name (dir)))
    if (g_str_has_prefix (name, ".large"))
      g_error ("left behind: %s", name);
  g_assert_cmpint (g_unlink (image), ==, 0);
}

static void
test_export_names (void)
{
  const struct {
    const char *name;
    EsExportFormat format;
    const char *expected;
  } cases[] = {
    { "camera-entropy.png", ES_EXPORT_TEXT, "camera-entropy.txt" },
    { "camera-entropy.txt", ES_EXPORT_PNG, "camera-entropy.png" },
    { "camera-entropy.txt", ES_EXPORT_RAW16, "camera-entropy.png" },
    { "scan.TIF", ES_EXPORT_PNG, "scan.png" },
    { "notes", ES_EXPORT_TEXT, "notes.txt" },
    { "archive.tar.gz", ES_EXPORT_PNG, "archive.tar.gz.png" },
    { ".png", ES_EXPORT_TEXT, ".png.txt" },
    { "camera-entropy.png", ES_EXPORT_TIFF, "camera-entropy.tif" },
    { "camera-entropy.tiff", ES_EXPORT_TEXT, "camera-entropy.txt" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = _es_window_export_name (cases[i].name, cases[i].format);

      g_assert_cmpstr (name, ==, cases[i].expected);
    }
}

static gboolean
banner_shown (gpointer data)
{
  return gtk_revealer_get_child_revealed (window->error_revealer) && !g_main_context_pending (NULL);
}

/* A file that cannot be opened: a short toast, the whole reason in the
 * banner until it is dismissed or another image is on screen. The banner
 * lies over the top of the image: the canvas keeps its place (the image
 * does not move under the pointer). */
static void
test_error_banner (void)
{
  g_autofree char *corrupt = test_image ("pngsuite", "xcrn0g04.png");
  g_autofree char *camera = test_image ("images", "camera.png");
  graphene_rect_t before, after;
  const char *error;

  ensure_image ();
  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (window->canvas), GTK_WIDGET (window), &before));
  open_path (corrupt);
  wait_until (banner_shown, NULL, NULL, NULL);
  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (window->canvas), GTK_WIDGET (window), &after));
  g_assert_true (graphene_rect_equal (&before, &after));
  error = es_window_get_error (window);
  g_assert_nonnull (error);
  g_assert_true (g_str_has_prefix (error, "Could not open “xcrn0g04.png”: "));
  g_assert_cmpstr (gtk_label_get_label (window->error_label), ==, error);
  /* Dismissed. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.dismiss-error", NULL));
  g_assert_null (es_window_get_error (window));
  /* Or another image on screen: the error was about the one before. */
  open_path (corrupt);
  g_assert_nonnull (es_window_get_error (window));
  open_path (camera);
  g_assert_null (es_window_get_error (window));
}

/* A decoder that crashes or hangs in the sandbox (test hooks read by the
 * helper): the banner names the file and the cause, and the window opens
 * the next file as usual. */
static void
test_sandbox_faults (void)
{
  const struct {
    const char *fault, *cause;
  } cases[] = {
    { "crash", "the decoder crashed (SIGSEGV" },
    { "hang", "the decoder took longer than its time limit of 1.0 s" },
    { "open", "the sandbox stopped the decoder" },
  };
  g_autofree char *camera = test_image ("images", "camera.png");
  const char *reason;

  if (!es_sandbox_available (&reason))
    {
      g_test_skip (reason);
      return;
    }
  g_setenv ("ES_TEST_SANDBOX_TIMEOUT_MS", "1000", TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *expected = g_strdup_printf ("Could not open “camera.png”: %s", cases[i].cause);
      const char *error;

      g_setenv ("ES_TEST_DECODER_FAULT", cases[i].fault, TRUE);
      open_path (camera);
      error = es_window_get_error (window);
      g_assert_nonnull (error);
      g_assert_true (g_str_has_prefix (error, expected));
      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.dismiss-error", NULL));
    }
  g_unsetenv ("ES_TEST_DECODER_FAULT");
  g_unsetenv ("ES_TEST_SANDBOX_TIMEOUT_MS");
  open_path (camera);
  g_assert_null (es_window_get_error (window));
  g_assert_nonnull (window->source);
  g_assert_cmpstr (window->source->name, ==, "camera.png");
}

/* Whether this process has a child (a sandbox's decoder), exited or not:
 * read from /proc, so that the load thread alone reaps it. */
static gboolean
has_children (void)
{
  g_autoptr (GDir) tasks = g_dir_open ("/proc/self/task", 0, NULL);
  gboolean found = FALSE;
  const char *task;

  while (tasks != NULL && !found && (task = g_dir_read_name (tasks)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/self/task/%s/children", task);
      g_autofree char *children = NULL;

      found = g_file_get_contents (path, &children, NULL, NULL) && *g_strstrip (children) != '\0';
    }
  return found;
}

/* Runs the main loop until has_children () is `wanted`, or `seconds` pass:
 * whether it became so. */
static gboolean
children_become (gboolean wanted, double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  while (has_children () != wanted && g_get_monotonic_time () < end)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (5 * G_TIME_SPAN_MILLISECOND);
    }
  return has_children () == wanted;
}

/* A decoder whose result is no longer wanted, the user having opened
 * another file while it hangs, is stopped (killed and reaped) at once,
 * not at its time limit of a minute; the other file opens as usual. */
static void
test_sandbox_superseded (void)
{
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autofree char *gravel = test_image ("images", "gravel.png");
  g_autoptr (GFile) hanging = g_file_new_for_path (gravel);
  const char *reason;
  gint64 start;

  if (!es_sandbox_available (&reason))
    {
      g_test_skip (reason);
      return;
    }
  g_assert_false (has_children ());
  g_setenv ("ES_TEST_SANDBOX_TIMEOUT_MS", "60000", TRUE);
  g_setenv ("ES_TEST_DECODER_FAULT", "hang", TRUE);
  es_window_open (window, hanging);
  g_assert_true (children_become (TRUE, 30));
  g_unsetenv ("ES_TEST_DECODER_FAULT");
  g_unsetenv ("ES_TEST_SANDBOX_TIMEOUT_MS");
  start = g_get_monotonic_time ();
  open_path (camera);
  g_assert_true (children_become (FALSE, 10));
  g_test_message ("the hanging decoder was gone %.0f ms after the next file was asked for",
                  (g_get_monotonic_time () - start) / 1000.0);
  g_assert_null (es_window_get_error (window));
  g_assert_nonnull (window->source);
  g_assert_cmpstr (window->source->name, ==, "camera.png");
}

/* Undo, reset, files */

static void
test_undo (void)
{
  int window_before = g_settings_get_int (settings, "window");
  int levels_before = g_settings_get_int (settings, "levels");
  int window_after = window_before == 11 ? 13 : 11;
  int levels_after = levels_before == 8 ? 9 : 8;

  ensure_image ();
  /* Changes of one key within 0.8 s are one step (a spin button held
   * down): this test's first change is not part of an earlier test's. */
  g_usleep (900 * G_TIME_SPAN_MILLISECOND);
  g_settings_set_int (settings, "window", window_after);
  g_settings_set_int (settings, "levels", levels_after);
  g_settings_set_string (settings, "colormap", "gray");
  wait_idle ();

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  g_assert_cmpstr (g_settings_get_string (settings, "colormap"), !=, "gray");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  g_assert_cmpint (g_settings_get_int (settings, "levels"), ==, levels_before);
  g_assert_cmpint (g_settings_get_int (settings, "window"), ==, window_after);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  g_assert_cmpint (g_settings_get_int (settings, "window"), ==, window_before);
  wait_idle ();
  g_assert_cmpint (es_window_get_layer (window, ES_VIEW_ENTROPY)->job.window, ==, window_before);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
  g_assert_cmpint (g_settings_get_int (settings, "window"), ==, window_after);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.redo", NULL));
  g_assert_cmpint (g_settings_get_int (settings, "levels"), ==, levels_after);
  wait_idle ();
  g_assert_cmpint (es_window_get_layer (window, ES_VIEW_ENTROPY)->job.levels, ==, levels_after);

  /* A new change drops what could be redone. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  g_settings_set_double (settings, "amount", 2.5);
  g_assert_false (action_enabled (window, "win.redo"));

  /* Reset: the defaults, each a step Undo can take back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.reset", NULL));
  for (int id = 0; id < ES_N_PARAMS; id++)
    g_assert_cmpfloat (es_settings_get_number (settings, es_param (id)->name), ==, es_param (id)->default_value);
  for (int steps = 0; steps < 10 && g_settings_get_double (settings, "amount") != 2.5; steps++)
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo", NULL));
  g_assert_cmpfloat (g_settings_get_double (settings, "amount"), ==, 2.5);
  wait_idle ();
}

/* The process's resident memory, from /proc/self/status, in MiB. */
static double
resident_mib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, "\nVmRSS:");
  g_assert_nonnull (line);
  return g_ascii_strtod (line + strlen ("\nVmRSS:"), NULL) / 1024.0;
}

/* From a large image back to a small one: the memory the large one took
 * (its values, results, mips, spare buffers, the worker's cache, the
 * canvas's textures) is given back to the system. */
static void
test_memory_returned (void)
{
  g_autofree char *large = g_build_filename (tmpdir, "large-memory.pgm", NULL);
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autofree char *view_before = g_settings_get_string (settings, "view");
  const int side = 5000;
  g_autofree guint8 *pgm = g_malloc (64 + (gsize) side * side);
  int header = g_snprintf ((char *) pgm, 64, "P5\n%d %d\n255\n", side, side);
  double small_rss, large_rss, back_rss;

  for (gsize i = 0; i < (gsize) side * side; i++)
    pgm[header + i] = (guint8) ((i * 2654435761u) >> 13);
  g_assert_true (g_file_set_contents (large, (const char *) pgm, header + (gsize) side * side, NULL));
  g_clear_pointer (&pgm, g_free);

  g_settings_set_boolean (settings, "show-sidebar", TRUE);
  set_view ("grid");
  open_path (camera);
  small_rss = resident_mib ();
  open_path (large);
  /* Every view of it once (the worker keeps one result a view). */
  set_view ("entropy");
  set_view ("grid");
  large_rss = resident_mib ();
  open_path (camera);
  /* Large layers are freed on a thread of their own, the heap trimmed
   * after: what is given back is given back within seconds. */
  for (int tries = 0; tries < 100 && (back_rss = resident_mib ()) - small_rss >= 60; tries++)
    {
      g_usleep (50000);
      wait_idle ();
    }
  g_test_message ("resident: %.0f MiB with the photograph, %.0f MiB with %d², %.0f MiB back", small_rss, large_rss,
                  side, back_rss);
  /* The large image took hundreds of MiB; all but a few are back. */
  g_assert_cmpfloat (large_rss - small_rss, >, 300);
  g_assert_cmpfloat (back_rss - small_rss, <, 60);
  g_assert_cmpint (g_unlink (large), ==, 0);
  set_view (view_before);
}

/* A fact's value by its name. */
static const char *
fact (char **facts, const char *name)
{
  for (int i = 0; facts[i]; i += 2)
    if (g_str_equal (facts[i], name))
      return facts[i + 1];
  g_error ("no fact “%s”", name);
}

static char *
recent_label (int i)
{
  char *label = NULL;

  g_assert_true (
    g_menu_model_get_item_attribute (G_MENU_MODEL (window->recent_menu), i, G_MENU_ATTRIBUTE_LABEL, "s", &label));
  return label;
}

/* Two files of one name in two folders: Open Recent says each one's
 * folder; a name seen once stays plain. */
static void
test_recent_folders (void)
{
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autofree char *first = g_build_filename (tmpdir, "scans", NULL);
  g_autofree char *second = g_build_filename (tmpdir, "prints", NULL);
  g_autofree char *first_image = g_build_filename (first, "camera.png", NULL);
  g_autofree char *second_image = g_build_filename (second, "camera.png", NULL);
  g_autofree char *brick = test_image ("images", "brick.png");
  g_autofree char *contents = NULL;
  g_autofree char *label0 = NULL, *label1 = NULL, *label2 = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (camera, &contents, &length, NULL));
  g_assert_cmpint (g_mkdir_with_parents (first, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (second, 0700), ==, 0);
  g_assert_true (g_file_set_contents (first_image, contents, length, NULL));
  g_assert_true (g_file_set_contents (second_image, contents, length, NULL));
  g_settings_set_strv (settings, "recent-files", NULL);

  open_path (brick);
  open_path (first_image);
  open_path (second_image);
  label0 = recent_label (0);
  label1 = recent_label (1);
  label2 = recent_label (2);
  g_assert_cmpstr (label0, ==, "camera.png — prints");
  g_assert_cmpstr (label1, ==, "camera.png — scans");
  g_assert_cmpstr (label2, ==, "brick.png");
  /* Folders of one name too: their paths. */
  {
    g_autofree char *deeper = g_build_filename (first, "prints", NULL);
    g_autofree char *deeper_image = g_build_filename (deeper, "camera.png", NULL);
    g_autofree char *label = NULL, *expected = g_strdup_printf ("camera.png — %s", deeper);

    g_assert_cmpint (g_mkdir_with_parents (deeper, 0700), ==, 0);
    g_assert_true (g_file_set_contents (deeper_image, contents, length, NULL));
    open_path (deeper_image);
    label = recent_label (0);
    g_assert_cmpstr (label, ==, expected);
    g_assert_cmpint (g_unlink (deeper_image), ==, 0);
    g_assert_cmpint (g_rmdir (deeper), ==, 0);
  }
  g_assert_cmpint (g_unlink (first_image), ==, 0);
  g_assert_cmpint (g_unlink (second_image), ==, 0);
  g_assert_cmpint (g_rmdir (first), ==, 0);
  g_assert_cmpint (g_rmdir (second), ==, 0);
}

static void
test_files (void)
{
  g_autofree char *brick = test_image ("images", "brick.png");
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autoptr (GFile) brick_file = g_file_new_for_path (brick);
  g_autoptr (GFile) camera_file = g_file_new_for_path (camera);
  g_autofree char *brick_uri = g_file_get_uri (brick_file);
  g_autofree char *camera_uri = g_file_get_uri (camera_file);
  g_auto (GStrv) recent = NULL, facts = NULL;
  g_autofree char *expected_size = NULL;
  GtkWidget *table;
  GStatBuf stat_buf;

  open_path (brick);
  open_path (camera);
  recent = g_settings_get_strv (settings, "recent-files");
  g_assert_cmpstr (recent[0], ==, camera_uri);
  g_assert_cmpstr (recent[1], ==, brick_uri);
  g_assert_cmpint (g_menu_model_get_n_items (G_MENU_MODEL (window->recent_menu)), ==, g_strv_length (recent));

  /* The image's facts, the file size from the file system. */
  g_assert_cmpint (g_stat (camera, &stat_buf), ==, 0);
  expected_size = g_strdup_printf ("(%" G_GINT64_FORMAT " bytes)", (gint64) stat_buf.st_size);
  facts = _es_window_source_facts (window);
  g_assert_nonnull (facts);
  g_assert_cmpstr (fact (facts, "Size"), ==, "512 × 512 pixels (0.26 megapixels)");
  g_assert_cmpstr (fact (facts, "Depth"), ==, "8-bit gray");
  g_assert_cmpstr (fact (facts, "Format"), ==, "PNG");
  g_assert_true (g_str_has_suffix (fact (facts, "File size"), expected_size));
  g_assert_cmpstr (fact (facts, "Path"), ==, camera);
  /* In the dialog: a table, a row a fact, the name left of its value. */
  table = _es_window_facts_table ((const char *const *) facts);
  g_object_ref_sink (table);
  g_assert_true (GTK_IS_GRID (table));
  for (int row = 0; facts[2 * row]; row++)
    {
      GtkWidget *name = gtk_grid_get_child_at (GTK_GRID (table), 0, row);
      GtkWidget *value = gtk_grid_get_child_at (GTK_GRID (table), 1, row);

      g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (name)), ==, facts[2 * row]);
      g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (value)), ==, facts[2 * row + 1]);
      g_assert_true (gtk_label_get_selectable (GTK_LABEL (value)));
    }
  g_object_unref (table);

  /* New Window: the same image and settings, in a window of its own. */
  {
    GList *before = gtk_application_get_windows (GTK_APPLICATION (application));
    guint n = g_list_length (before);
    GList *windows;
    EsWindow *another;
    EsJob mine, its;

    g_settings_set_int (settings, "levels", 12);
    wait_idle ();
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-window", NULL));
    windows = gtk_application_get_windows (GTK_APPLICATION (application));
    g_assert_cmpuint (g_list_length (windows), ==, n + 1);
    another = ES_WINDOW (windows->data);
    g_assert_true (another != window);
    wait_until (window_idle, another, NULL, NULL);
    g_assert_cmpstr (es_window_get_source (another)->name, ==, "camera.png");
    es_window_get_view_job (window, ES_VIEW_ENTROPY, &mine);
    es_window_get_view_job (another, ES_VIEW_ENTROPY, &its);
    g_assert_cmpint (its.levels, ==, 12);
    g_assert_cmpint (its.window, ==, mine.window);
    gtk_window_destroy (GTK_WINDOW (another));
    wait_idle ();
  }
}

#ifdef ES_HAVE_JPEG
/* A JPEG opens as any image does (decoded in the sandbox helper), upright:
 * the seed corpus's 37×75 photograph, stored turned, with EXIF orientation
 * 6, is shown 75 wide and 37 high. */
static void
test_open_jpeg (void)
{
  g_autofree char *photo = g_build_filename (g_getenv ("ES_TESTDATA"), "..", "fuzz", "corpus", "jpeg",
                                             "orientation-6.jpg", NULL);
  g_auto (GStrv) facts = NULL;

  open_path (photo);
  g_assert_null (es_window_get_error (window));
  facts = _es_window_source_facts (window);
  g_assert_nonnull (facts);
  g_assert_cmpstr (fact (facts, "Format"), ==, "JPEG");
  g_assert_cmpstr (fact (facts, "Size"), ==, "75 × 37 pixels (0.00 megapixels)");
  g_assert_cmpstr (fact (facts, "Depth"), ==, "8-bit gray");
}
#endif

/* The size-limit message gives one unit, the setting's. */
static void
test_size_limit_message (void)
{
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autofree char *brick = test_image ("images", "brick.png");
  const char *message;

  open_path (brick);
  g_settings_set_uint64 (settings, "max-pixels", 200000);
  open_path (camera);
  message = es_window_get_last_message (window);
  g_test_message ("%s", message);
  g_assert_cmpstr (message, ==,
                   "Could not open “camera.png”: the image is 512 × 512, 0.26 megapixels: "
                   "over the Maximum Image Size of 0.20 megapixels (side panel)");
  g_settings_reset (settings, "max-pixels");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.dismiss-error", NULL));
}

static gboolean
shows_image (gpointer data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (data));
  EsWindow *shown = windows ? ES_WINDOW (windows->data) : NULL;

  return shown && es_window_get_source (shown) && !es_window_get_busy (shown) && !g_main_context_pending (NULL);
}

/* "Reopen the Last Image at Start": an application started with nothing
 * to open shows the newest recent file instead of the sample. */
static void
test_reopen_last (void)
{
  g_autofree char *brick = test_image ("images", "brick.png");
  g_autoptr (GFile) file = g_file_new_for_path (brick);
  g_autofree char *uri = g_file_get_uri (file);
  const char *recent[] = { uri, NULL };
  g_autoptr (EsApplication) started = NULL;
  g_autoptr (GError) error = NULL;
  GList *windows;

  g_settings_set_strv (app_settings, "recent-files", recent);
  g_settings_set_boolean (app_settings, "reopen-last", TRUE);
  started = es_application_new (app_settings, G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (started), NULL, &error));
  g_assert_no_error (error);
  g_application_activate (G_APPLICATION (started));
  wait_until (shows_image, started, NULL, NULL);
  windows = gtk_application_get_windows (GTK_APPLICATION (started));
  g_assert_cmpstr (es_window_get_source (ES_WINDOW (windows->data))->name, ==, "brick.png");
  gtk_window_destroy (GTK_WINDOW (windows->data));
  g_settings_reset (app_settings, "reopen-last");
  wait_idle ();
}

/* Opening times in the timings card */

static void
on_painted (GdkFrameClock *clock, gboolean *painted)
{
  *painted = TRUE;
}

/* Runs the main loop until `which` has painted a frame. */
static void
wait_for_paint (EsWindow *which)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (which));
  gboolean painted = FALSE;
  gulong handler = g_signal_connect (clock, "after-paint", G_CALLBACK (on_painted), &painted);

  gtk_widget_queue_draw (GTK_WIDGET (which));
  wait_for (&painted);
  g_signal_handler_disconnect (clock, handler);
}

static gboolean
shows_open_time (gpointer data)
{
  const char *name;
  EsOpenTiming open;

  return es_timings_get_open (ES_WINDOW (data)->timings, &name, &open);
}

/* The card tells how long the image on screen took to open, once its
 * first heatmap is painted; an image that failed to open tells nothing,
 * and leaves the figures of the one on screen as they were. */
static void
test_open_time (void)
{
  g_autofree char *corrupt = test_image ("pngsuite", "xcrn0g04.png");
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autoptr (GFile) corrupt_file = g_file_new_for_path (corrupt);
  g_autoptr (GFile) camera_file = g_file_new_for_path (camera);
  EsWindow *other = es_window_new (ADW_APPLICATION (application), app_settings);
  EsOpenTiming open, after;
  const char *name;

  g_settings_set_string (other->settings, "view", "entropy");
  g_settings_set_boolean (other->settings, "show-timings", TRUE);
  gtk_window_present (GTK_WINDOW (other));
  es_window_open (other, corrupt_file);
  wait_until (window_idle, other, NULL, NULL);
  g_assert_nonnull (es_window_get_error (other));
  wait_for_paint (other);
  g_assert_false (es_timings_get_open (other->timings, &name, &open));

  es_window_open (other, camera_file);
  wait_until (shows_open_time, other, NULL, NULL);
  g_assert_true (es_timings_get_open (other->timings, &name, &open));
  g_test_message ("%s: %.1f ms to the first heatmap, read and decode %.1f ms, compute %.1f ms", name, open.total_ms,
                  open.decode_ms, open.compute_ms);
  g_assert_cmpstr (name, ==, "camera.png");
  g_assert_true (es_window_get_source (other) != NULL);
  g_assert_cmpstr (es_window_get_source (other)->name, ==, "camera.png");
  g_assert_true (open.heatmap);
  g_assert_cmpfloat (open.total_ms, >, 0);
  g_assert_cmpfloat (open.decode_ms, >, 0);
  g_assert_cmpfloat (open.compute_ms, >, 0);
  /* Decoding, then computing, both between the request and the paint. */
  g_assert_cmpfloat (open.decode_ms + open.compute_ms, <=, open.total_ms);
  g_assert_true (gtk_widget_is_visible (GTK_WIDGET (other->timings)));

  es_window_open (other, corrupt_file);
  wait_until (window_idle, other, NULL, NULL);
  wait_for_paint (other);
  g_assert_true (es_timings_get_open (other->timings, &name, &after));
  g_assert_cmpstr (name, ==, "camera.png");
  g_assert_cmpfloat (after.total_ms, ==, open.total_ms);
  gtk_window_destroy (GTK_WINDOW (other));
  wait_idle ();
}

static gboolean
camera_pending (gpointer data)
{
  return window->pending_source && g_str_equal (window->pending_source->name, "camera.png");
}

/* A camera.png opened after the source of serial *data is on screen, and its time in the card. */
static gboolean
shows_camera_open_time (gpointer data)
{
  EsSource *source = es_window_get_source (window);
  const char *name;
  EsOpenTiming open;

  return source && source->serial > *(guint64 *) data && g_str_equal (source->name, "camera.png")
         && es_timings_get_open (window->timings, &name, &open) && g_str_equal (name, "camera.png");
}

static void
never_brick (gpointer data, gpointer unused)
{
  const char *name;
  EsOpenTiming open;

  if (es_timings_get_open (window->timings, &name, &open))
    g_assert_cmpstr (name, !=, "brick.png");
}

/* An image replaced by another before its views were shown never reports,
 * and the one shown is timed from its own request. */
static void
test_open_time_superseded (void)
{
  g_autofree char *brick = test_image ("images", "brick.png");
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autoptr (GFile) brick_file = g_file_new_for_path (brick);
  g_autoptr (GFile) camera_file = g_file_new_for_path (camera);
  EsOpenTiming open;
  const char *name;
  gint64 requested;
  guint64 serial;

  ensure_image ();
  serial = es_window_get_source (window)->serial;
  gate_set (TRUE, FALSE, -1);
  es_window_open (window, brick_file);
  wait_until (gate_holds, GINT_TO_POINTER (1), never_brick, NULL);
  requested = g_get_monotonic_time ();
  es_window_open (window, camera_file);
  wait_until (camera_pending, NULL, never_brick, NULL);
  gate_set (FALSE, FALSE, -1);
  wait_until (shows_camera_open_time, &serial, never_brick, NULL);
  g_assert_true (es_timings_get_open (window->timings, &name, &open));
  g_assert_cmpfloat (open.total_ms, >, 0);
  g_assert_cmpfloat (open.total_ms, <=, (g_get_monotonic_time () - requested) / 1000.0);
  wait_idle ();
}

int
main (int argc, char **argv)
{
  int status;

  ui_test_setup (&argc, &argv);
  g_test_add_func ("/ui-files/export-folder", test_export_folder);
  g_test_add_func ("/ui-files/export-names", test_export_names);
  g_test_add_func ("/ui-files/export-dialog-names", test_export_dialog_names);
  g_test_add_func ("/ui-files/export-asks-before-replacing", test_export_asks_before_replacing);
  g_test_add_func ("/ui-files/export-clahe16", test_export_clahe16);
  g_test_add_func ("/ui-files/export-compression", test_export_compression);
  g_test_add_func ("/ui-files/export-dialog-remembers", test_export_dialog_remembers);
  g_test_add_func ("/ui-files/close-mid-export", test_close_mid_export);
  g_test_add_func ("/ui-files/error-banner", test_error_banner);
  g_test_add_func ("/ui-files/sandbox-faults", test_sandbox_faults);
  g_test_add_func ("/ui-files/sandbox-superseded", test_sandbox_superseded);
  g_test_add_func ("/ui-files/size-limit-message", test_size_limit_message);
  g_test_add_func ("/ui-files/undo", test_undo);
  g_test_add_func ("/ui-files/files", test_files);
#ifdef ES_HAVE_JPEG
  g_test_add_func ("/ui-files/open-jpeg", test_open_jpeg);
#endif
  g_test_add_func ("/ui-files/recent-folders", test_recent_folders);
  g_test_add_func ("/ui-files/memory-returned", test_memory_returned);
  g_test_add_func ("/ui-files/reopen-last", test_reopen_last);
  g_test_add_func ("/ui-files/open-time", test_open_time);
  g_test_add_func ("/ui-files/open-time-superseded", test_open_time_superseded);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
