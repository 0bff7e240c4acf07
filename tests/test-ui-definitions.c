/* SPDX-License-Identifier: MIT */
/* UI tests of the entropy definition in the side panel (GTest, under Xvfb): each control runs a job
 * with its definition, whose values equal es_run's for that job; nats ↔ bits runs nothing; presets
 * set every key; masks of the wrong size are refused with a message; masked pixels read "no data";
 * the overlay, the status bar and exports name the definition. The CLAHE view's panel: its own
 * preset menu and parameters, no entropy rows, its presets in its jobs. */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gsettingsbackend.h>

#include "test-ui-common.h"

#include "es-definitions.h"
#include "es-inspect.h"
#include "es-sandbox.h"
#include "es-sidebar-definition.h"

static EsSidebarDefinition *
definition_panel (void)
{
  return es_sidebar_get_definition (window->sidebar);
}

static gboolean
mask_read (gpointer data)
{
  return !es_sidebar_definition_is_reading_mask (definition_panel ());
}

/* A PGM of width×height whose pixel (x, y) is cell (x, y). */
static char *
write_pgm (const char *name, int width, int height, guint8 (*cell) (int x, int y))
{
  char *path = g_build_filename (tmpdir, name, NULL);
  g_autoptr (GString) data = g_string_new (NULL);

  g_string_append_printf (data, "P5\n%d %d\n255\n", width, height);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      g_string_append_c (data, (char) cell (x, y));
  g_assert_true (g_file_set_contents (path, data->str, data->len, NULL));
  return path;
}

/* A diagonal cross: the footprint is not a shape the other controls make. */
static guint8
cross_cell (int x, int y)
{
  return x == y || x == 4 - y || (x == 2 && y == 2) ? 1 : 0;
}

/* The left third of the image is masked out. */
static guint8
mask_cell (int x, int y)
{
  return x >= 170 ? 255 : 0;
}

static guint8
one_cell (int x, int y)
{
  return 1;
}

static EsLayer *
entropy_layer (void)
{
  EsLayer *layer = es_window_get_layer (window, ES_VIEW_ENTROPY);

  g_assert_nonnull (layer);
  return layer;
}

/* The layer on screen holds exactly what es_run gives for its job on the image (bit for bit, NaN
 * where NaN), and that job carries `expected`'s definition, window and levels. */
static void
assert_layer_is_job (const EsJob *expected)
{
  EsLayer *layer = entropy_layer ();
  const EsImage *shown = &layer->result.values;
  const EsEntropyDefinition *d = &layer->job.definition, *e = &expected->definition;
  EsError error = { 0 };
  EsEngine *engine = es_engine_new (ES_BACKEND_CPU, &error);
  EsImage values = { 0 };
  EsTiming timing;

  g_assert_nonnull (engine);
  g_assert_cmpint (layer->job.window, ==, expected->window);
  g_assert_cmpint (layer->job.levels, ==, expected->levels);
  g_assert_cmpint (d->shape, ==, e->shape);
  g_assert_cmpint (d->height, ==, e->height);
  g_assert_cmpint (d->width, ==, e->width);
  g_assert_cmpint (d->radius, ==, e->radius);
  g_assert_cmpint (d->border, ==, e->border);
  g_assert_cmpuint (d->border_value, ==, e->border_value);
  g_assert_cmpint (d->binning, ==, e->binning);
  g_assert_cmpuint (d->range_lo, ==, e->range_lo);
  g_assert_cmpuint (d->range_hi, ==, e->range_hi);
  g_assert_cmpint (d->normalized, ==, e->normalized);
  g_assert_true ((d->mask != NULL) == (e->mask != NULL));
  if (e->footprint)
    {
      g_assert_nonnull (d->footprint);
      g_assert_cmpint (d->footprint->width, ==, e->footprint->width);
      g_assert_cmpint (d->footprint->height, ==, e->footprint->height);
      g_assert_cmpmem (d->footprint->cells, e->footprint->width * e->footprint->height, e->footprint->cells,
                       e->footprint->width * e->footprint->height);
    }

  g_assert_true (es_run (engine, &layer->job, &es_window_get_source (window)->image, &values, &timing, &error));
  g_assert_cmpint (values.width, ==, shown->width);
  g_assert_cmpint (values.height, ==, shown->height);
  g_assert_cmpint (values.format, ==, shown->format);
  for (int y = 0; y < values.height; y++)
    g_assert_cmpmem (es_image_row (&values, y), values.width * sizeof (float), es_image_row (shown, y),
                     shown->width * sizeof (float));
  es_image_clear (&values);
  es_engine_free (engine);
}

/* Sets the keys (NULL-terminated name, GVariant pairs; the variants are sunk) and waits for the
 * new views: at least one job must have run. */
static void
change (const char *key, ...)
{
  int started = gate_get (&gate.started);
  va_list args;

  va_start (args, key);
  for (; key; key = va_arg (args, const char *))
    g_settings_set_value (settings, key, va_arg (args, GVariant *));
  va_end (args);
  wait_idle ();
  g_assert_cmpint (gate_get (&gate.started), >, started);
}

/* Back to Entroscope's own definition, with this run's window and levels. */
static void
reset_definition (void)
{
  es_sidebar_definition_load_mask (definition_panel (), NULL);
  es_sidebar_definition_apply_preset (definition_panel (), ES_OP_ENTROPY, "entroscope");
  set_params (test_params);
  g_settings_set_string (settings, "units", "nats");
  wait_idle ();
}

static EsJob
base_job (void)
{
  EsJob job = ES_JOB_INIT (ES_OP_ENTROPY);

  job.window = test_window;
  job.levels = test_levels;
  return job;
}

static void
test_controls (void)
{
  g_autofree char *cross = write_pgm ("cross.pgm", 5, 5, cross_cell);
  g_autoptr (GFile) cross_file = g_file_new_for_path (cross);
  static const guint8 cross_cells[25] = { 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1 };
  static const EsFootprint cross_footprint = { .width = 5, .height = 5, .cells = cross_cells };
  EsJob job;

  ensure_image ();
  set_view ("entropy");
  reset_definition ();
  job = base_job ();
  assert_layer_is_job (&job);

  change ("shape", g_variant_new_string ("rect"), "rect-height", g_variant_new_int32 (3), "rect-width",
          g_variant_new_int32 (7), NULL);
  job = base_job ();
  job.window = ES_WINDOW_DEFAULT;
  job.definition.shape = ES_SHAPE_RECT;
  job.definition.height = 3;
  job.definition.width = 7;
  assert_layer_is_job (&job);

  change ("shape", g_variant_new_string ("disk"), "radius", g_variant_new_int32 (4), NULL);
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_DISK, .radius = 4 };
  assert_layer_is_job (&job);

  {
    int started = gate_get (&gate.started);

    es_sidebar_definition_choose_footprint (definition_panel (), cross_file);
    wait_idle ();
    g_assert_cmpint (gate_get (&gate.started), >, started);
  }
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_FOOTPRINT, .footprint = &cross_footprint };
  assert_layer_is_job (&job);

  /* Square windows past the fast kernels' 31, and every border mode. */
  change ("shape", g_variant_new_string ("square"), "window", g_variant_new_int32 (41), NULL);
  job = base_job ();
  job.window = 41;
  assert_layer_is_job (&job);
  for (EsBorder border = ES_BORDER_SYMMETRIC; border < ES_N_BORDERS; border++)
    {
      change ("border", g_variant_new_string (es_border_name (border)), "border-value", g_variant_new_int32 (200),
              NULL);
      job.definition = (EsEntropyDefinition){
        .border = border,
        .border_value = border == ES_BORDER_CONSTANT ? 200 : 0,
      };
      assert_layer_is_job (&job);
    }

  /* Every binning, with levels beyond 256. */
  change ("border", g_variant_new_string ("clip"), "window", g_variant_new_int32 (test_window), "levels",
          g_variant_new_int32 (1000), "binning", g_variant_new_string ("range"), "range-lo", g_variant_new_int32 (50),
          "range-hi", g_variant_new_int32 (180), NULL);
  job = base_job ();
  job.levels = 1000;
  job.definition = (EsEntropyDefinition){ .binning = ES_BINNING_RANGE, .range_lo = 50, .range_hi = 180 };
  assert_layer_is_job (&job);
  for (EsBinning binning = ES_BINNING_MINMAX; binning < ES_N_BINNINGS; binning++)
    {
      change ("binning", g_variant_new_string (es_binning_name (binning)), NULL);
      job.definition = (EsEntropyDefinition){ .binning = binning };
      /* Exact binning uses no levels: the job keeps the default. */
      job.levels = binning == ES_BINNING_EXACT ? ES_LEVELS_DEFAULT : 1000;
      assert_layer_is_job (&job);
    }
  /* A key a choice does not use runs nothing. */
  {
    int started = gate_get (&gate.started);

    g_settings_set_int (settings, "radius", 9);
    g_settings_set_int (settings, "range-lo", 3);
    wait_idle ();
    g_assert_cmpint (gate_get (&gate.started), ==, started);
  }
  reset_definition ();
}

static void
test_units (void)
{
  EsLayer *nats;
  guint64 generation;
  int started;
  double lo, hi;

  ensure_image ();
  set_view ("entropy");
  reset_definition ();
  nats = es_layer_ref (entropy_layer ());

  /* Bits are nats shown otherwise: no request, no job, the same values. */
  started = gate_get (&gate.started);
  generation = window->generation;
  g_settings_set_string (settings, "units", "bits");
  wait_idle ();
  g_assert_cmpint (gate_get (&gate.started), ==, started);
  g_assert_cmpuint (window->generation, ==, generation);
  g_assert_true (entropy_layer () == nats);
  g_assert_nonnull (strstr (gtk_label_get_label (window->definition_label), "· bits"));
  g_settings_set_string (settings, "units", "nats");
  wait_idle ();
  g_assert_cmpint (gate_get (&gate.started), ==, started);
  g_assert_cmpuint (window->generation, ==, generation);

  /* Normalized values are computed: H / ln(min(B, n)), within 0..1. */
  change ("units", g_variant_new_string ("normalized"), NULL);
  {
    EsJob job = base_job ();

    job.definition.normalized = TRUE;
    assert_layer_is_job (&job);
  }
  es_image_min_max (&entropy_layer ()->result.values, &lo, &hi);
  g_assert_cmpfloat (lo, >=, 0.0);
  g_assert_cmpfloat (hi, <=, 1.0 + 1e-6);
  g_assert_cmpfloat (hi, >, 0.5);
  g_assert_nonnull (strstr (gtk_label_get_label (window->info_label), "· normalized"));
  /* Back to nats: a job again, nats values. */
  change ("units", g_variant_new_string ("nats"), NULL);
  {
    EsJob job = base_job ();

    assert_layer_is_job (&job);
  }
  es_layer_unref (nats);
}

static void
assert_keys (const char *preset, const char *shape, int window_size, int radius, const char *border,
             const char *binning, int levels, const char *units)
{
  g_autofree char *got_preset = g_settings_get_string (settings, "preset-entropy");
  g_autofree char *got_shape = g_settings_get_string (settings, "shape");
  g_autofree char *got_border = g_settings_get_string (settings, "border");
  g_autofree char *got_binning = g_settings_get_string (settings, "binning");
  g_autofree char *got_units = g_settings_get_string (settings, "units");

  g_assert_cmpstr (got_preset, ==, preset);
  g_assert_cmpstr (got_shape, ==, shape);
  if (window_size)
    g_assert_cmpint (g_settings_get_int (settings, "window"), ==, window_size);
  if (radius)
    g_assert_cmpint (g_settings_get_int (settings, "radius"), ==, radius);
  g_assert_cmpstr (got_border, ==, border);
  g_assert_cmpstr (got_binning, ==, binning);
  if (levels)
    g_assert_cmpint (g_settings_get_int (settings, "levels"), ==, levels);
  g_assert_cmpstr (got_units, ==, units);
}

static void
test_presets (void)
{
  EsJob job;

  ensure_image ();
  set_view ("entropy");
  reset_definition ();
  /* Away from every preset first: each key the preset sets must move. */
  change ("shape", g_variant_new_string ("rect"), "border", g_variant_new_string ("replicate"), "binning",
          g_variant_new_string ("minmax"), "window", g_variant_new_int32 (7), NULL);
  assert_keys ("custom", "rect", 7, 0, "replicate", "minmax", 0, "nats");

  /* As the preset row sets it. */
  change ("preset-entropy", g_variant_new_string ("matlab"), NULL);
  assert_keys ("matlab", "square", 9, 0, "symmetric", "byte", 256, "bits");
  job = base_job ();
  es_preset_apply (es_preset_find (ES_OP_ENTROPY, "matlab"), &job, FALSE);
  assert_layer_is_job (&job);
  g_assert_cmpstr (gtk_label_get_label (window->definition_label), ==,
                   "9×9 · symmetric · 256 bins of 8-bit values · bits");

  change ("preset-entropy", g_variant_new_string ("fiji"), NULL);
  assert_keys ("fiji", "disk", 0, 3, "clip", "byte", 256, "bits");
  job = base_job ();
  es_preset_apply (es_preset_find (ES_OP_ENTROPY, "fiji"), &job, FALSE);
  job.window = ES_WINDOW_DEFAULT;
  assert_layer_is_job (&job);

  /* scikit-image keeps the shape the user gave. */
  change ("preset-entropy", g_variant_new_string ("skimage"), NULL);
  assert_keys ("skimage", "disk", 0, 3, "clip", "exact", 0, "bits");

  /* Any change by hand leaves the preset. */
  change ("border", g_variant_new_string ("mirror"), NULL);
  assert_keys ("custom", "disk", 0, 3, "mirror", "exact", 0, "bits");

  change ("preset-entropy", g_variant_new_string ("entroscope"), NULL);
  assert_keys ("entroscope", "square", ES_WINDOW_DEFAULT, 0, "clip", "depth", ES_LEVELS_DEFAULT, "nats");
  job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  assert_layer_is_job (&job);

  /* Reset Settings to Defaults puts the definition back too. */
  change ("shape", g_variant_new_string ("disk"), "border", g_variant_new_string ("constant"), "binning",
          g_variant_new_string ("exact"), NULL);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.reset", NULL));
  wait_idle ();
  assert_keys ("entroscope", "square", ES_WINDOW_DEFAULT, 0, "clip", "depth", ES_LEVELS_DEFAULT, "nats");
  assert_layer_is_job (&job);
  reset_definition ();
}

/* The stored preset names the definition only where the keys hold it:
 * keys written by another tool (gsettings, dconf-editor) leave the menu
 * on Custom when the panel starts, and the definition as written. */
static void
test_preset_at_start (void)
{
  g_autoptr (GSettingsSchema) schema = NULL;
  g_autoptr (GSettingsBackend) backend = g_memory_settings_backend_new ();
  g_autoptr (GSettings) keys = NULL;
  g_autofree char *preset = NULL, *shape = NULL;
  EsSidebarDefinition *panel;

  g_object_get (settings, "settings-schema", &schema, NULL);
  keys = g_settings_new_full (schema, backend, NULL);
  panel = g_object_ref_sink (g_object_new (ES_TYPE_SIDEBAR_DEFINITION, NULL));
  es_sidebar_definition_bind (panel, keys);
  preset = g_settings_get_string (keys, "preset-entropy");
  g_assert_cmpstr (preset, ==, "entroscope");
  g_object_unref (panel);

  g_settings_set_string (keys, "shape", "disk");
  panel = g_object_ref_sink (g_object_new (ES_TYPE_SIDEBAR_DEFINITION, NULL));
  es_sidebar_definition_bind (panel, keys);
  g_clear_pointer (&preset, g_free);
  preset = g_settings_get_string (keys, "preset-entropy");
  shape = g_settings_get_string (keys, "shape");
  g_assert_cmpstr (preset, ==, "custom");
  g_assert_cmpstr (shape, ==, "disk");
  g_object_unref (panel);
}

static GtkWidget *
sidebar_child (GType type, GtkWidget *widget, const char *id)
{
  GtkWidget *child = GTK_WIDGET (gtk_widget_get_template_child (widget, type, id));

  g_assert_nonnull (child);
  return child;
}

/* The CLAHE layer on screen ran a job of this definition, clip and grid. */
static void
assert_clahe_job (EsClaheKind kind, double clip, EsFormat format)
{
  EsLayer *layer = es_window_get_layer (window, ES_VIEW_CLAHE);

  g_assert_nonnull (layer);
  g_assert_cmpint (layer->job.op, ==, ES_OP_CLAHE);
  g_assert_cmpint (layer->job.clahe.kind, ==, kind);
  g_assert_cmpfloat (layer->job.clip, ==, clip);
  g_assert_cmpint (layer->job.tile_columns, ==, g_settings_get_int (settings, "tile-columns"));
  g_assert_cmpint (layer->job.tile_rows, ==, g_settings_get_int (settings, "tile-rows"));
  g_assert_cmpint (layer->result.values.format, ==, format);
}

/* The CLAHE view lists CLAHE's presets, shows its parameters and none of
 * entropy's rows; a preset sets the peer's clip limit, which the user may
 * change without leaving it. */
static void
test_clahe_presets (void)
{
  GtkWidget *sidebar = GTK_WIDGET (window->sidebar), *panel = GTK_WIDGET (definition_panel ());
  AdwComboRow *preset_row;
  GListModel *menu;
  g_autofree char *chosen = NULL;
  size_t n_presets;
  const EsPreset *presets = es_presets (ES_OP_CLAHE, &n_presets);

  ensure_image ();
  set_view ("clahe");
  g_settings_set_string (settings, "preset-clahe", "opencv");
  wait_idle ();
  preset_row = ADW_COMBO_ROW (sidebar_child (ES_TYPE_SIDEBAR_DEFINITION, panel, "preset_row"));
  menu = adw_combo_row_get_model (preset_row);
  g_assert_cmpuint (g_list_model_get_n_items (menu), ==, 1 + n_presets);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (menu), 0), ==,
                   es_op_info (ES_OP_CLAHE)->definition_title);
  for (size_t i = 0; i < n_presets; i++)
    g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (menu), i + 1), ==, presets[i].title);
  g_assert_true (gtk_widget_get_visible (panel));
  g_assert_true (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "clip_row")));
  g_assert_true (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "tile-rows_row")));
  g_assert_false (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "window_row")));
  g_assert_false (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "levels_row")));
  g_assert_false (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "units_row")));
  g_assert_false (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "amount_row")));
  g_assert_false (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR_DEFINITION, panel, "border_row")));
  g_assert_false (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR_DEFINITION, panel, "mask_row")));

  /* The row picks a nick of the key by its index. */
  adw_combo_row_set_selected (preset_row, 1);
  wait_idle ();
  chosen = g_settings_get_string (settings, "preset-clahe");
  g_assert_cmpstr (chosen, ==, presets[0].name);
  g_assert_cmpfloat (g_settings_get_double (settings, "clip"), ==, presets[0].clip);

  change ("preset-clahe", g_variant_new_string ("skimage"), "clip", g_variant_new_double (0.03), NULL);
  assert_clahe_job (ES_CLAHE_SKIMAGE, 0.03, ES_FORMAT_F32);
  change ("preset-clahe", g_variant_new_string ("matlab"), NULL);
  assert_clahe_job (ES_CLAHE_MATLAB, 0.01, ES_FORMAT_U8);
  change ("preset-clahe", g_variant_new_string ("opencv"), NULL);
  assert_clahe_job (ES_CLAHE_OPENCV, ES_CLIP_DEFAULT, ES_FORMAT_U8);

  /* Back to entropy: its menu and rows. */
  set_view ("entropy");
  g_assert_cmpuint (g_list_model_get_n_items (adw_combo_row_get_model (preset_row)), ==,
                    2 + (es_presets (ES_OP_ENTROPY, &n_presets), n_presets));
  g_assert_true (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "window_row")));
  g_assert_true (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR_DEFINITION, panel, "border_row")));
  g_assert_false (gtk_widget_get_visible (sidebar_child (ES_TYPE_SIDEBAR, sidebar, "clip_row")));
}

static void
test_mask (void)
{
  const EsSource *source;
  g_autofree char *fits = NULL, *small = NULL;
  g_autoptr (GFile) fits_file = NULL, small_file = NULL;
  EsLayer *before;
  int started;
  EsJob job;

  ensure_image ();
  set_view ("entropy");
  reset_definition ();
  source = es_window_get_source (window);
  fits = write_pgm ("mask.pgm", source->image.width, source->image.height, mask_cell);
  small = write_pgm ("small-mask.pgm", 100, 80, one_cell);
  fits_file = g_file_new_for_path (fits);
  small_file = g_file_new_for_path (small);

  /* Read in the sandbox, as the window's images are: a decoder that
   * crashes on the mask (the helper's test hook) is a message. */
  if (es_sandbox_available (NULL))
    {
      g_autofree char *expected = g_strdup_printf ("The mask %s could not be read: the decoder crashed (SIGSEGV", fits);
      g_autofree char *head = NULL;
      const char *message;

      g_setenv ("ES_TEST_DECODER_FAULT", "crash", TRUE);
      es_sidebar_definition_load_mask (definition_panel (), fits_file);
      wait_until (message_starts, "The mask ", NULL, NULL);
      g_unsetenv ("ES_TEST_DECODER_FAULT");
      /* The text alone: message_starts also wants an idle main loop, which
       * a redraw queued since may not be. */
      message = es_window_get_last_message (window);
      g_assert_nonnull (message);
      head = g_strndup (message, strlen (expected));
      g_assert_cmpstr (head, ==, expected);
    }

  /* The wrong size: a message, no job, the result stays. */
  before = entropy_layer ();
  started = gate_get (&gate.started);
  es_sidebar_definition_load_mask (definition_panel (), small_file);
  /* Read on a worker thread: the row says so until it is done. */
  g_assert_true (es_sidebar_definition_is_reading_mask (definition_panel ()));
  wait_until (message_starts, "The mask is 100 × 80, the image ", NULL, NULL);
  g_assert_false (es_sidebar_definition_is_reading_mask (definition_panel ()));
  g_assert_cmpint (gate_get (&gate.started), ==, started);
  g_assert_true (entropy_layer () == before);

  /* The image's size: masked pixels have no value, and read "no data". */
  /* A mask asked for and at once superseded by another is never used. */
  _es_window_show_message (window, "");
  es_sidebar_definition_load_mask (definition_panel (), small_file);
  es_sidebar_definition_load_mask (definition_panel (), fits_file);
  wait_until (mask_read, NULL, NULL, NULL);
  wait_idle ();
  g_assert_false (message_starts ("The mask is 100 × 80"));
  g_assert_cmpint (gate_get (&gate.started), >, started);
  job = base_job ();
  job.definition.mask = &source->image; /* only its presence is compared */
  assert_layer_is_job (&job);
  g_assert_true (isnan (es_layer_value (entropy_layer (), 10, 10)));
  g_assert_false (isnan (es_layer_value (entropy_layer (), 400, 10)));
  g_assert_nonnull (strstr (gtk_label_get_label (window->definition_label), "· masked"));
  window->hover_pane = 0;
  window->hover_x = 10;
  window->hover_y = 10;
  _es_window_update_position (window);
  g_assert_nonnull (strstr (gtk_label_get_label (window->position_label), "Entropy no data"));
  window->hover_x = 400;
  _es_window_update_position (window);
  g_assert_null (strstr (gtk_label_get_label (window->position_label), "no data"));

  /* Statistics over masked and counted pixels skip the masked ones. */
  {
    const EsImage *values = &entropy_layer ()->result.values;
    EsChannel channel = { "entropy", values, 0, 1.0, 0 };
    EsRect rect = { 150, 100, 60, 50 };
    double sum = 0, squares = 0, mean;
    uint64_t n = 0;
    EsStats stats;

    for (int y = rect.y; y < rect.y + rect.height; y++)
      for (int x = rect.x; x < rect.x + rect.width; x++)
        {
          double v = ((const float *) es_image_row (values, y))[x];

          g_assert_true (isnan (v) == (x < 170));
          if (!isnan (v))
            {
              n++;
              sum += v;
            }
        }
    mean = sum / n;
    for (int y = rect.y; y < rect.y + rect.height; y++)
      for (int x = 170; x < rect.x + rect.width; x++)
        squares += pow (((const float *) es_image_row (values, y))[x] - mean, 2);
    es_roi_stats (&channel, rect, &stats);
    g_assert_cmpuint (stats.n, ==, n);
    g_assert_cmpuint (n, ==, 40 * 50);
    g_assert_cmpfloat_with_epsilon (stats.mean, mean, 1e-9);
    g_assert_cmpfloat_with_epsilon (stats.stddev, sqrt (squares / (n - 1)), 1e-9);
    g_assert_false (isnan (stats.min) || isnan (stats.max));
  }

  /* Cleared: every pixel counts again. */
  started = gate_get (&gate.started);
  es_sidebar_definition_load_mask (definition_panel (), NULL);
  wait_idle ();
  g_assert_cmpint (gate_get (&gate.started), >, started);
  job.definition.mask = NULL;
  assert_layer_is_job (&job);
  g_unlink (fits);
  g_unlink (small);
}

/* Exports record the definition line, in the display's units. */
static void
test_export (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "shown.out", NULL);
  g_autofree char *contents = NULL;
  char expected[128];
  gsize length;
  EsJob job;

  ensure_image ();
  set_view ("entropy");
  reset_definition ();
  change ("shape", g_variant_new_string ("disk"), "radius", g_variant_new_int32 (2), "border",
          g_variant_new_string ("symmetric"), NULL);
  g_settings_set_string (settings, "units", "bits");
  wait_idle ();
  job = base_job ();
  job.window = ES_WINDOW_DEFAULT;
  job.definition = (EsEntropyDefinition){ .shape = ES_SHAPE_DISK, .radius = 2, .border = ES_BORDER_SYMMETRIC };
  es_job_describe_definition (&job, "bits", expected, sizeof expected);
  g_assert_cmpstr (gtk_label_get_label (window->definition_label), ==, expected);
  g_assert_true (g_str_has_suffix (gtk_label_get_label (window->info_label), expected));

  /* A text matrix is "H W" and the values: it has no place for metadata. */
  for (guint i = 0; i < 3; i++)
    {
      EsExportFormat format = (EsExportFormat[]){ ES_EXPORT_PNG, ES_EXPORT_RAW16, ES_EXPORT_TIFF }[i];

      export_shown (path, format, FALSE);
      g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
      g_test_message ("format %d: looking for “%s”", format, expected);
      g_assert_nonnull (memmem (contents, length, expected, strlen (expected)));
      g_clear_pointer (&contents, g_free);
    }
  reset_definition ();
}

int
main (int argc, char *argv[])
{
  int status;

  ui_test_setup (&argc, &argv);
  g_test_add_func ("/definitions/controls", test_controls);
  g_test_add_func ("/definitions/units", test_units);
  g_test_add_func ("/definitions/presets", test_presets);
  g_test_add_func ("/definitions/preset-at-start", test_preset_at_start);
  g_test_add_func ("/definitions/clahe-presets", test_clahe_presets);
  g_test_add_func ("/definitions/mask", test_mask);
  g_test_add_func ("/definitions/export", test_export);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
