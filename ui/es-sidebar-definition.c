/* SPDX-License-Identifier: MIT */
/* EsSidebarDefinition: the preset menu of the operation on screen and the entropy definition's rows (DESIGN.md
 * §1), bound to GSettings; the mask and footprint images the window's jobs point at; entropy's presets set every
 * key and turn "custom" once one changes. */
#include "es-sidebar-definition.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "es-sandbox.h"
#include "es-settings.h"

/* A mask or footprint image as 0/1 cells. Jobs, layers and the worker's
 * cache point at them, so every one loaded stays until the widget goes. */
typedef struct {
  EsImage cells;
  EsFootprint footprint;
  char *name;
} CellsFile;

struct _EsSidebarDefinition {
  AdwPreferencesGroup parent_instance;

  AdwComboRow *preset_row;
  AdwComboRow *volume_window_row;
  AdwComboRow *shape_3d_row;
  GtkWidget *box_planes_row;
  GtkWidget *box_height_row;
  GtkWidget *box_width_row;
  GtkSpinButton *box_planes_spin;
  GtkSpinButton *box_height_spin;
  GtkSpinButton *box_width_spin;
  GtkWidget *ball_radius_row;
  GtkSpinButton *ball_radius_spin;
  AdwComboRow *shape_row;
  GtkWidget *rect_height_row;
  GtkWidget *rect_width_row;
  GtkSpinButton *rect_height_spin;
  GtkSpinButton *rect_width_spin;
  GtkWidget *radius_row;
  GtkSpinButton *radius_spin;
  AdwActionRow *footprint_row;
  GtkWidget *footprint_button;
  AdwComboRow *border_row;
  GtkWidget *border_value_row;
  GtkSpinButton *border_value_spin;
  AdwComboRow *binning_row;
  GtkWidget *range_lo_row;
  GtkWidget *range_hi_row;
  GtkSpinButton *range_lo_spin;
  GtkSpinButton *range_hi_spin;
  AdwActionRow *mask_row;
  GtkWidget *mask_button;
  GtkWidget *mask_clear_button;

  GSettings *settings;
  int op;                                 /* whose preset menu and rows are shown; -1: none */
  GtkStringList *preset_titles[ES_N_OPS]; /* each op's menu; NULL without presets */
  GPtrArray *files;                       /* CellsFile, every one loaded */
  CellsFile *mask;                        /* NULL: every pixel counts */
  char *mask_loading;                     /* the name of the mask being read, or NULL */
  guint mask_generation;                  /* of the last mask asked for: older reads are dropped */
  CellsFile *footprint;                   /* of "footprint-file"; NULL when none could be read */
  int image_width, image_height, image_planes;
  gboolean normalized; /* units were "normalized" at the last change */
  gboolean applying;   /* a preset is setting the keys */
  GtkNativeDialog *chooser;
};

G_DEFINE_FINAL_TYPE (EsSidebarDefinition, es_sidebar_definition, ADW_TYPE_PREFERENCES_GROUP)

enum { SIGNAL_CHANGED, SIGNAL_MESSAGE, SIGNAL_ROWS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Entropy's "custom": a definition key changed by hand. */
#define PRESET_CUSTOM "custom"

/* The combo rows' nicks, in the order of their items and of the schema's enums. */
static const char *const shape_nicks[] = { "square", "rect", "disk", "footprint", NULL };
static const char *const volume_window_nicks[] = { "3d", "per-plane", NULL };
static const char *const shape_3d_nicks[] = { "box", "ball", NULL };
/* "shape-3d"'s values as shapes. */
static const EsShape shapes_3d[] = { ES_SHAPE_BOX, ES_SHAPE_BALL };
static const char *const border_nicks[] = { "clip", "symmetric", "mirror", "replicate", "constant", NULL };
static const char *const binning_nicks[] = { "depth", "range", "minmax", "exact", "byte", NULL };
/* Each operation's preset menu as its key's nicks: its own definition's
 * name, every es_presets name, and for entropy "custom"; filled in
 * class_init, empty for an operation without presets. */
static const char *preset_nicks[ES_N_OPS][8];

/* What each border mode and binning does, on a row a b c d. */
static const char *const border_subtitles[] = {
  N_ ("Only in-image pixels count"),
  "d c b a | a b c d | d c b a",
  "d c b | a b c d | c b a",
  "a a | a b c d | d d",
  "v v | a b c d | v v",
};
static const char *const binning_subtitles[] = {
  "⌊v·L / 2^depth⌋",
  N_ ("L bins over lo … hi, clamped"),
  N_ ("L bins over the image’s own min … max"),
  N_ ("Every sample value its own bin (all 16 bits)"),
  N_ ("L bins of the 8-bit view, as MATLAB’s im2uint8"),
};

/* The keys of the definition beyond the parameters; a change of any of them
 * (or of the window, levels or units) leaves a preset for "custom", except
 * a volume's window: a preset's shape is 2-D, and with a 3-D window it sets
 * the border and binning only, as entroscope-cli --like with --box/--ball. */
static const char *const definition_keys[] = {
  "shape",     "rect-height", "rect-width", "radius",        "footprint-file", "border",     "border-value",
  "binning",   "range-lo",    "range-hi",   "volume-window", "shape-3d",       "box-planes", "box-height",
  "box-width", "ball-radius", NULL,
};

static void
cells_file_free (gpointer data)
{
  CellsFile *file = data;

  es_image_clear (&file->cells);
  g_free (file->name);
  g_free (file);
}

/* Reads an image as 0/1 cells (nonzero = in), as entroscope-cli's --mask and --footprint do. */
static CellsFile *
load_cells (GFile *file, EsError *error)
{
  g_autofree char *path = g_file_get_path (file);
  const EsDecodeRequest request = { .cells = TRUE };
  char notice[8];
  CellsFile *cells;

  if (path == NULL)
    {
      es_error_set (error, ES_ERROR_IO, _ ("not a local file"));
      return NULL;
    }
  cells = g_new0 (CellsFile, 1);
  /* In the sandbox, as the window's images, where this build has one. */
  if (!es_decode_path (path, es_sandbox_available (NULL), &request, &cells->cells, notice, sizeof notice, error))
    {
      g_free (cells);
      return NULL;
    }
  cells->footprint = (EsFootprint){ .width = cells->cells.width,
                                    .height = cells->cells.height,
                                    .cells = cells->cells.pixels };
  cells->name = g_file_get_basename (file);
  return cells;
}

static void message (EsSidebarDefinition *self, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
message (EsSidebarDefinition *self, const char *format, ...)
{
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  g_signal_emit (self, signals[SIGNAL_MESSAGE], 0, text);
}

static gboolean
mask_fits (EsSidebarDefinition *self, const CellsFile *mask)
{
  return self->image_width == 0
         || (mask->cells.width == self->image_width && mask->cells.height == self->image_height
             && es_image_planes (&mask->cells) == MAX (self->image_planes, 1));
}

/* Whether the window counts across planes: a volume with "volume-window" 3-D. */
static gboolean
window_is_3d (EsSidebarDefinition *self, int planes)
{
  return planes > 1 && g_settings_get_enum (self->settings, "volume-window") == 0;
}

/* Rows that the choices do not use are hidden, and the entropy
 * definition's rows while entropy is not on screen; subtitles say what a
 * choice means. */
static void
update_rows (EsSidebarDefinition *self)
{
  int shape = g_settings_get_enum (self->settings, "shape");
  gboolean entropy = self->op == ES_OP_ENTROPY;
  gboolean volume = entropy && self->image_planes > 1;
  gboolean in_3d = entropy && window_is_3d (self, self->image_planes);
  gboolean flat = entropy && !in_3d;
  EsShape shape_3d = shapes_3d[g_settings_get_enum (self->settings, "shape-3d")];
  int border = g_settings_get_enum (self->settings, "border");
  int binning = g_settings_get_enum (self->settings, "binning");
  g_autofree char *mask_text = NULL, *footprint_text = NULL;

  /* A 2-D image keeps the 2-D rows alone; a volume chooses 3-D or per plane first. */
  gtk_widget_set_visible (GTK_WIDGET (self->volume_window_row), volume);
  gtk_widget_set_visible (GTK_WIDGET (self->shape_3d_row), in_3d);
  gtk_widget_set_visible (self->box_planes_row, in_3d && shape_3d == ES_SHAPE_BOX);
  gtk_widget_set_visible (self->box_height_row, in_3d && shape_3d == ES_SHAPE_BOX);
  gtk_widget_set_visible (self->box_width_row, in_3d && shape_3d == ES_SHAPE_BOX);
  gtk_widget_set_visible (self->ball_radius_row, in_3d && shape_3d == ES_SHAPE_BALL);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->volume_window_row), in_3d
                                                                           ? _ ("Counted across neighbouring planes")
                                                                           : _ ("The 2-D shape, on each plane alone"));
  gtk_widget_set_visible (GTK_WIDGET (self->shape_row), flat);
  gtk_widget_set_visible (self->rect_height_row, flat && shape == ES_SHAPE_RECT);
  gtk_widget_set_visible (self->rect_width_row, flat && shape == ES_SHAPE_RECT);
  gtk_widget_set_visible (self->radius_row, flat && shape == ES_SHAPE_DISK);
  gtk_widget_set_visible (GTK_WIDGET (self->footprint_row), flat && shape == ES_SHAPE_FOOTPRINT);
  gtk_widget_set_visible (GTK_WIDGET (self->border_row), entropy);
  gtk_widget_set_visible (self->border_value_row, entropy && border == ES_BORDER_CONSTANT);
  gtk_widget_set_visible (GTK_WIDGET (self->binning_row), entropy);
  gtk_widget_set_visible (self->range_lo_row, entropy && binning == ES_BINNING_RANGE);
  gtk_widget_set_visible (self->range_hi_row, entropy && binning == ES_BINNING_RANGE);
  gtk_widget_set_visible (GTK_WIDGET (self->mask_row), entropy);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->border_row), _ (border_subtitles[border]));
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self->binning_row), _ (binning_subtitles[binning]));

  if (self->footprint)
    footprint_text = g_strdup_printf ("%s · %d × %d", self->footprint->name, self->footprint->cells.width,
                                      self->footprint->cells.height);
  adw_action_row_set_subtitle (self->footprint_row,
                               footprint_text ? footprint_text : _ ("None chosen: the square is used"));

  if (self->mask_loading)
    mask_text = g_strdup_printf (_ ("Reading %s…"), self->mask_loading);
  else if (self->mask == NULL)
    mask_text = g_strdup (_ ("None: every pixel counts"));
  else if (mask_fits (self, self->mask))
    mask_text = g_strdup_printf (_ ("%s · only its nonzero pixels count"), self->mask->name);
  else if (self->image_planes > 1)
    mask_text = g_strdup_printf (_ ("%s is %d × %d × %d, the volume %d × %d × %d: not used"), self->mask->name,
                                 self->mask->cells.width, self->mask->cells.height,
                                 es_image_planes (&self->mask->cells), self->image_width, self->image_height,
                                 self->image_planes);
  else
    mask_text = g_strdup_printf (_ ("%s is %d × %d, the image %d × %d: not used"), self->mask->name,
                                 self->mask->cells.width, self->mask->cells.height, self->image_width,
                                 self->image_height);
  adw_action_row_set_subtitle (self->mask_row, mask_text);
  gtk_widget_set_sensitive (self->mask_clear_button, self->mask != NULL);
}

static void
changed (EsSidebarDefinition *self, const char *what)
{
  update_rows (self);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, what);
}

/* Presets */

/* The job the keys describe (window, levels and the definition; no files). */
static void
settings_job (EsSidebarDefinition *self, EsJob *job)
{
  *job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  job->window = g_settings_get_int (self->settings, "window");
  job->levels = g_settings_get_int (self->settings, "levels");
  job->definition.shape = g_settings_get_enum (self->settings, "shape");
  job->definition.radius = g_settings_get_int (self->settings, "radius");
  job->definition.border = g_settings_get_enum (self->settings, "border");
  job->definition.binning = g_settings_get_enum (self->settings, "binning");
}

/* Whether the keys hold the preset's definition (what it sets, no more). */
static gboolean
keys_match_preset (EsSidebarDefinition *self, const char *name)
{
  const EsPreset *preset = es_preset_find (ES_OP_ENTROPY, name);
  g_autofree char *units = g_settings_get_string (self->settings, "units");
  EsJob now, wanted;

  settings_job (self, &now);
  if (preset == NULL)
    {
      wanted = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
      return g_str_equal (name, es_op_info (ES_OP_ENTROPY)->definition_name) && g_str_equal (units, "nats")
             && now.window == wanted.window && now.levels == wanted.levels && now.definition.shape == ES_SHAPE_SQUARE
             && now.definition.border == ES_BORDER_CLIP && now.definition.binning == ES_BINNING_DEPTH;
    }
  wanted = now;
  es_preset_apply (preset, &wanted, FALSE);
  return g_str_equal (units, preset->units) && now.window == wanted.window && now.levels == wanted.levels
         && now.definition.shape == wanted.definition.shape && now.definition.radius == wanted.definition.radius
         && now.definition.border == wanted.definition.border && now.definition.binning == wanted.definition.binning;
}

/* Another operation's preset (CLAHE's) is a definition of the job, which
 * jobs read from its key (es_sidebar_definition_get); choosing one sets the
 * peer's defaults of the parameters it sets, which the user may change
 * afterwards without leaving it. */
static void
apply_op_preset (EsSidebarDefinition *self, EsOp op, const char *name)
{
  const EsPreset *preset = es_preset_find (op, name);
  EsJob job = ES_JOB_INIT (op);

  if (preset)
    es_preset_apply (preset, &job, FALSE);
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (op, id))
      es_settings_set_number (self->settings, es_param (id)->name, es_job_get_param (&job, id));
}

void
es_sidebar_definition_apply_preset (EsSidebarDefinition *self, EsOp op, const char *name)
{
  const EsPreset *preset = es_preset_find (op, name);
  g_autofree char *key = NULL;
  EsJob job;

  g_return_if_fail (ES_IS_SIDEBAR_DEFINITION (self));
  g_return_if_fail (self->settings != NULL);

  if (preset == NULL && !g_str_equal (name, es_op_info (op)->definition_name))
    return;
  key = es_settings_preset_key (op);
  if (op != ES_OP_ENTROPY)
    {
      g_settings_set_string (self->settings, key, name);
      return;
    }
  /* Entroscope's own: the job's defaults. */
  job = (EsJob) ES_JOB_INIT (ES_OP_ENTROPY);
  if (preset)
    {
      settings_job (self, &job);
      es_preset_apply (preset, &job, FALSE);
    }
  /* The keys change together: the window sees one request (its updates
   * wait for the main loop), and none of them turns the preset to custom. */
  self->applying = TRUE;
  g_settings_set_int (self->settings, "window", job.window);
  g_settings_set_int (self->settings, "levels", job.levels);
  g_settings_set_enum (self->settings, "shape", job.definition.shape);
  g_settings_set_int (self->settings, "radius", job.definition.radius);
  g_settings_set_enum (self->settings, "border", job.definition.border);
  g_settings_set_enum (self->settings, "binning", job.definition.binning);
  g_settings_set_string (self->settings, "units", preset ? preset->units : "nats");
  g_settings_set_string (self->settings, key, name);
  self->applying = FALSE;
}

/* Settings */

/* Reads "footprint-file" (none: NULL, and the square is used). */
static void
load_footprint (EsSidebarDefinition *self)
{
  g_autofree char *path = g_settings_get_string (self->settings, "footprint-file");
  g_autoptr (GFile) file = *path ? g_file_new_for_path (path) : NULL;
  EsError error = { 0 };
  CellsFile *footprint = file ? load_cells (file, &error) : NULL;

  if (file && footprint == NULL)
    {
      message (self, _ ("The footprint %s could not be read: %s"), path, error.message);
      es_error_clear (&error);
    }
  else if (footprint
           && (footprint->cells.width % 2 == 0 || footprint->cells.height % 2 == 0
               || footprint->cells.width > ES_SIDE_MAX || footprint->cells.height > ES_SIDE_MAX))
    {
      message (self, _ ("A footprint needs odd sides up to %d; %s is %d × %d"), ES_SIDE_MAX, footprint->name,
               footprint->cells.width, footprint->cells.height);
      g_clear_pointer (&footprint, cells_file_free);
    }
  if (footprint)
    g_ptr_array_add (self->files, footprint);
  self->footprint = footprint;
}

/* The operation whose preset a key holds ("preset-clahe"). */
static gboolean
preset_key_op (const char *key, EsOp *op)
{
  return g_str_has_prefix (key, "preset-") && es_op_from_name (key + strlen ("preset-"), op);
}

static void
on_setting (GSettings *settings, const char *key, EsSidebarDefinition *self)
{
  g_autofree char *preset = NULL, *entropy_key = es_settings_preset_key (ES_OP_ENTROPY);
  gboolean definition = g_strv_contains (definition_keys, key);
  EsOp op;

  g_assert (ES_IS_SIDEBAR_DEFINITION (self));
  if (preset_key_op (key, &op))
    {
      preset = g_settings_get_string (settings, key);
      if (op != ES_OP_ENTROPY)
        {
          apply_op_preset (self, op, preset);
          changed (self, key);
        }
      /* Its own write of the key comes back here: nothing left to do. */
      else if (!self->applying && !g_str_equal (preset, PRESET_CUSTOM) && !keys_match_preset (self, preset))
        es_sidebar_definition_apply_preset (self, op, preset);
      return;
    }
  if (!definition && !g_str_equal (key, "units") && !g_str_equal (key, "window") && !g_str_equal (key, "levels"))
    return;

  /* A change by hand leaves the preset (a preset's own keys never do). */
  preset = g_settings_get_string (settings, entropy_key);
  if (!self->applying && !g_str_equal (preset, PRESET_CUSTOM) && !keys_match_preset (self, preset))
    g_settings_set_string (settings, entropy_key, PRESET_CUSTOM);

  if (g_str_equal (key, "footprint-file"))
    load_footprint (self);
  if (g_str_equal (key, "units"))
    {
      g_autofree char *units = g_settings_get_string (settings, key);
      gboolean normalized = g_str_equal (units, "normalized");

      /* Bits are nats shown otherwise: only normalized values need a job. */
      if (normalized == self->normalized)
        return;
      self->normalized = normalized;
    }
  if (definition || g_str_equal (key, "units"))
    {
      g_autoptr (GVariant) value = g_settings_get_value (settings, key);
      g_autofree char *printed = g_variant_print (value, FALSE);
      g_autofree char *what = g_strdup_printf ("%s=%s", key, printed);

      changed (self, what);
    }
}

/* The preset row shows the menu of the operation on screen, bound to its
 * key; the group shows while that operation has presets. */
static void
bind_preset_row (EsSidebarDefinition *self)
{
  gboolean has_menu = self->op >= 0 && self->preset_titles[self->op] != NULL;
  g_autofree char *key = NULL, *description = NULL;

  g_settings_unbind (self->preset_row, "selected");
  gtk_widget_set_visible (GTK_WIDGET (self), has_menu);
  if (!has_menu || self->settings == NULL)
    return;
  key = es_settings_preset_key (self->op);
  /* TRANSLATORS: %s is "local entropy" or an operation's title ("CLAHE"). */
  description = g_strdup_printf (_ ("What %s means here; presets match other tools"),
                                 self->op == ES_OP_ENTROPY ? _ ("local entropy") : _ (es_op_info (self->op)->title));
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (self), description);
  adw_combo_row_set_model (self->preset_row, G_LIST_MODEL (self->preset_titles[self->op]));
  es_settings_bind_choice (self->settings, key, self->preset_row, preset_nicks[self->op]);
}

void
es_sidebar_definition_set_op (EsSidebarDefinition *self, gboolean has_op, EsOp op)
{
  int shown = has_op ? (int) op : -1;

  g_return_if_fail (ES_IS_SIDEBAR_DEFINITION (self));

  if (shown == self->op)
    return;
  self->op = shown;
  bind_preset_row (self);
  if (self->settings)
    update_rows (self);
}

static void
bind_spin (GSettings *settings, const char *key, GtkSpinButton *spin)
{
  g_settings_bind (settings, key, gtk_spin_button_get_adjustment (spin), "value", G_SETTINGS_BIND_DEFAULT);
}

void
es_sidebar_definition_bind (EsSidebarDefinition *self, GSettings *settings)
{
  g_autofree char *units = NULL, *entropy_key = es_settings_preset_key (ES_OP_ENTROPY), *preset = NULL;

  g_return_if_fail (ES_IS_SIDEBAR_DEFINITION (self));
  g_return_if_fail (G_IS_SETTINGS (settings));

  g_set_object (&self->settings, settings);
  units = g_settings_get_string (settings, "units");
  self->normalized = g_str_equal (units, "normalized");
  es_settings_bind_choice (settings, "volume-window", self->volume_window_row, volume_window_nicks);
  es_settings_bind_choice (settings, "shape-3d", self->shape_3d_row, shape_3d_nicks);
  es_settings_bind_choice (settings, "shape", self->shape_row, shape_nicks);
  es_settings_bind_choice (settings, "border", self->border_row, border_nicks);
  es_settings_bind_choice (settings, "binning", self->binning_row, binning_nicks);
  bind_spin (settings, "rect-height", self->rect_height_spin);
  bind_spin (settings, "rect-width", self->rect_width_spin);
  bind_spin (settings, "radius", self->radius_spin);
  bind_spin (settings, "box-planes", self->box_planes_spin);
  bind_spin (settings, "box-height", self->box_height_spin);
  bind_spin (settings, "box-width", self->box_width_spin);
  bind_spin (settings, "ball-radius", self->ball_radius_spin);
  bind_spin (settings, "border-value", self->border_value_spin);
  bind_spin (settings, "range-lo", self->range_lo_spin);
  bind_spin (settings, "range-hi", self->range_hi_spin);
  g_signal_connect_object (settings, "changed", G_CALLBACK (on_setting), self, 0);
  /* Keys written elsewhere (dconf-editor, gsettings, an older version)
   * may not be the stored preset's definition: the jobs compute what the
   * keys say, so the menu says Custom rather than name a peer. */
  preset = g_settings_get_string (settings, entropy_key);
  if (!g_str_equal (preset, PRESET_CUSTOM) && !keys_match_preset (self, preset))
    g_settings_set_string (settings, entropy_key, PRESET_CUSTOM);
  /* The footprint of the last session is read again. */
  load_footprint (self);
  update_rows (self);
  bind_preset_row (self);
}

gboolean
es_sidebar_definition_has_key (const char *key)
{
  EsOp op;

  return g_strv_contains (definition_keys, key) || preset_key_op (key, &op);
}

void
es_sidebar_definition_set_image_size (EsSidebarDefinition *self, int width, int height, int planes)
{
  gboolean was_volume;

  g_return_if_fail (ES_IS_SIDEBAR_DEFINITION (self));

  was_volume = self->image_planes > 1;
  self->image_width = width;
  self->image_height = height;
  self->image_planes = planes;
  if (self->settings == NULL)
    return;
  update_rows (self);
  /* The rows that depend on whether a volume is open (the side panel's
   * window size with a 3-D window) follow; the image's own request runs
   * the jobs. */
  if (was_volume != (planes > 1))
    g_signal_emit (self, signals[SIGNAL_ROWS_CHANGED], 0);
}

int
es_sidebar_definition_get_image_planes (EsSidebarDefinition *self)
{
  g_return_val_if_fail (ES_IS_SIDEBAR_DEFINITION (self), 1);
  return MAX (self->image_planes, 1);
}

/* A preset of an operation other than entropy is a definition of the job
 * (CLAHE's kind): applied, then the parameters the panel holds win. */
static void
get_op_preset (EsSidebarDefinition *self, EsJob *job)
{
  g_autofree char *key = NULL, *name = NULL;
  const EsPreset *preset;
  EsJob parameters = *job;

  if (self->preset_titles[job->op] == NULL)
    return;
  key = es_settings_preset_key (job->op);
  name = g_settings_get_string (self->settings, key);
  preset = es_preset_find (job->op, name);
  if (preset == NULL)
    return;
  es_preset_apply (preset, job, FALSE);
  for (int id = 0; id < ES_N_PARAMS; id++)
    if (es_op_uses (job->op, id))
      es_job_set_param (job, id, es_job_get_param (&parameters, id));
}

void
es_sidebar_definition_get (EsSidebarDefinition *self, int width, int height, int planes, EsJob *job)
{
  EsEntropyDefinition *d = &job->definition;
  GSettings *settings = self->settings;

  g_return_if_fail (ES_IS_SIDEBAR_DEFINITION (self));

  *d = (EsEntropyDefinition){ 0 };
  if (settings == NULL)
    return;
  if (job->op != ES_OP_ENTROPY)
    {
      get_op_preset (self, job);
      return;
    }
  /* Only what the choices use is set, so that a value the job ignores (a
   * radius while the shape is a square) never looks like a new job. */
  d->shape = window_is_3d (self, planes) ? shapes_3d[g_settings_get_enum (settings, "shape-3d")]
                                         : (EsShape) g_settings_get_enum (settings, "shape");
  switch (d->shape)
    {
    case ES_SHAPE_RECT:
      d->height = g_settings_get_int (settings, "rect-height") | 1;
      d->width = g_settings_get_int (settings, "rect-width") | 1;
      break;
    case ES_SHAPE_DISK: d->radius = g_settings_get_int (settings, "radius"); break;
    case ES_SHAPE_BOX:
      d->planes = g_settings_get_int (settings, "box-planes") | 1;
      d->height = g_settings_get_int (settings, "box-height") | 1;
      d->width = g_settings_get_int (settings, "box-width") | 1;
      break;
    case ES_SHAPE_BALL: d->radius = g_settings_get_int (settings, "ball-radius"); break;
    case ES_SHAPE_FOOTPRINT:
      /* None could be read: the square the overlay then names. */
      if (self->footprint)
        d->footprint = &self->footprint->footprint;
      else
        d->shape = ES_SHAPE_SQUARE;
      break;
    default: break;
    }
  if (d->shape != ES_SHAPE_SQUARE)
    job->window = ES_WINDOW_DEFAULT;
  d->border = g_settings_get_enum (settings, "border");
  if (d->border == ES_BORDER_CONSTANT)
    d->border_value = g_settings_get_int (settings, "border-value");
  d->binning = g_settings_get_enum (settings, "binning");
  if (d->binning == ES_BINNING_RANGE)
    {
      d->range_lo = g_settings_get_int (settings, "range-lo");
      d->range_hi = MAX (g_settings_get_int (settings, "range-hi"), (int) d->range_lo);
    }
  if (d->binning == ES_BINNING_EXACT)
    job->levels = ES_LEVELS_DEFAULT;
  d->normalized = self->normalized;
  if (self->mask && self->mask->cells.width == width && self->mask->cells.height == height
      && es_image_planes (&self->mask->cells) == MAX (planes, 1))
    d->mask = &self->mask->cells;
}

/* The mask and the footprint */

/* A mask is the image's size: decoding it takes as long as opening the
 * image, so it is read on a worker thread and the window stays live. */
static void
read_mask_thread (GTask *task, gpointer source, gpointer file, GCancellable *cancellable)
{
  EsError error = { 0 };
  CellsFile *mask = load_cells (file, &error);

  if (mask)
    g_task_return_pointer (task, mask, (GDestroyNotify) cells_file_free);
  else
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s", error.message);
      es_error_clear (&error);
    }
}

static void
on_mask_read (GObject *source, GAsyncResult *result, gpointer generation)
{
  EsSidebarDefinition *self = ES_SIDEBAR_DEFINITION (source);
  GFile *file = g_task_get_task_data (G_TASK (result));
  g_autofree char *parse_name = g_file_get_parse_name (file);
  g_autoptr (GError) error = NULL;
  CellsFile *mask = g_task_propagate_pointer (G_TASK (result), &error);

  /* Another mask was asked for (or none) since: this one is not wanted. */
  if (GPOINTER_TO_UINT (generation) != self->mask_generation)
    {
      g_clear_pointer (&mask, cells_file_free);
      return;
    }
  g_clear_pointer (&self->mask_loading, g_free);
  if (mask == NULL)
    {
      update_rows (self);
      message (self, _ ("The mask %s could not be read: %s"), parse_name, error->message);
      return;
    }
  if (!mask_fits (self, mask))
    {
      update_rows (self);
      message (self, _ ("The mask is %d × %d, the image %d × %d: a mask must have the image’s size"), mask->cells.width,
               mask->cells.height, self->image_width, self->image_height);
      cells_file_free (mask);
      return;
    }
  g_ptr_array_add (self->files, mask);
  self->mask = mask;
  changed (self, "mask");
}

void
es_sidebar_definition_load_mask (EsSidebarDefinition *self, GFile *file)
{
  g_autoptr (GTask) task = NULL;

  g_return_if_fail (ES_IS_SIDEBAR_DEFINITION (self));

  self->mask_generation++;
  if (file == NULL)
    {
      gboolean had = self->mask != NULL || self->mask_loading != NULL;

      g_clear_pointer (&self->mask_loading, g_free);
      self->mask = NULL;
      if (had)
        changed (self, "mask=none");
      return;
    }
  g_free (self->mask_loading);
  self->mask_loading = g_file_get_basename (file);
  update_rows (self);
  task = g_task_new (self, NULL, on_mask_read, GUINT_TO_POINTER (self->mask_generation));
  g_task_set_task_data (task, g_object_ref (file), g_object_unref);
  g_task_run_in_thread (task, read_mask_thread);
}

gboolean
es_sidebar_definition_is_reading_mask (EsSidebarDefinition *self)
{
  g_return_val_if_fail (ES_IS_SIDEBAR_DEFINITION (self), FALSE);
  return self->mask_loading != NULL;
}

void
es_sidebar_definition_choose_footprint (EsSidebarDefinition *self, GFile *file)
{
  g_autofree char *path = g_file_get_path (file);

  g_return_if_fail (ES_IS_SIDEBAR_DEFINITION (self));
  g_return_if_fail (self->settings != NULL);

  if (path == NULL)
    {
      message (self, _ ("The footprint must be a local file"));
      return;
    }
  /* The same file again is read again: it may have changed. */
  if (g_settings_get_enum (self->settings, "shape") == ES_SHAPE_FOOTPRINT)
    g_settings_reset (self->settings, "footprint-file");
  g_settings_set_string (self->settings, "footprint-file", path);
  g_settings_set_enum (self->settings, "shape", ES_SHAPE_FOOTPRINT);
}

static void
on_chooser_response (GtkNativeDialog *chooser, int response, EsSidebarDefinition *self)
{
  g_autoptr (GFile) file = NULL;
  gboolean for_mask = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (chooser), "for-mask"));

  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  gtk_native_dialog_destroy (chooser);
  g_clear_object (&self->chooser);
  if (file == NULL)
    return;
  if (for_mask)
    es_sidebar_definition_load_mask (self, file);
  else
    es_sidebar_definition_choose_footprint (self, file);
}

static void
choose_file (EsSidebarDefinition *self, gboolean for_mask)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkFileChooserNative *chooser;
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();

  if (self->chooser)
    return;
  chooser = gtk_file_chooser_native_new (for_mask ? _ ("Choose a Mask") : _ ("Choose a Footprint"),
                                         GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, GTK_FILE_CHOOSER_ACTION_OPEN,
                                         "_Choose", "_Cancel");
  gtk_file_filter_set_name (filter, _ ("Images"));
  gtk_file_filter_add_mime_type (filter, "image/*");
  gtk_file_filter_add_pattern (filter, "*.txt");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  g_object_set_data (G_OBJECT (chooser), "for-mask", GINT_TO_POINTER (for_mask));
  g_signal_connect (chooser, "response", G_CALLBACK (on_chooser_response), self);
  self->chooser = GTK_NATIVE_DIALOG (chooser);
  gtk_native_dialog_show (self->chooser);
}

static void
on_mask_clicked (GtkButton *button, EsSidebarDefinition *self)
{
  choose_file (self, TRUE);
}

static void
on_mask_clear_clicked (GtkButton *button, EsSidebarDefinition *self)
{
  es_sidebar_definition_load_mask (self, NULL);
}

static void
on_footprint_clicked (GtkButton *button, EsSidebarDefinition *self)
{
  choose_file (self, FALSE);
}

/* The GObject */

static void
es_sidebar_definition_dispose (GObject *object)
{
  EsSidebarDefinition *self = ES_SIDEBAR_DEFINITION (object);

  if (self->chooser)
    gtk_native_dialog_destroy (self->chooser);
  g_clear_object (&self->chooser);
  /* A mask still being read finds its rows gone: it is dropped. */
  self->mask_generation++;
  g_clear_pointer (&self->mask_loading, g_free);
  if (self->settings)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_clear_object (&self->settings);
  gtk_widget_dispose_template (GTK_WIDGET (object), ES_TYPE_SIDEBAR_DEFINITION);
  G_OBJECT_CLASS (es_sidebar_definition_parent_class)->dispose (object);
}

/* The images go last: a job of the window may point at them until it is gone. */
static void
es_sidebar_definition_finalize (GObject *object)
{
  EsSidebarDefinition *self = ES_SIDEBAR_DEFINITION (object);

  g_ptr_array_unref (self->files);
  for (int op = 0; op < ES_N_OPS; op++)
    g_clear_object (&self->preset_titles[op]);
  G_OBJECT_CLASS (es_sidebar_definition_parent_class)->finalize (object);
}

static void
es_sidebar_definition_class_init (EsSidebarDefinitionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = es_sidebar_definition_dispose;
  object_class->finalize = es_sidebar_definition_finalize;

  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_MESSAGE] = g_signal_new ("message", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_ROWS_CHANGED] = g_signal_new ("rows-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                               NULL, NULL, G_TYPE_NONE, 0);

  for (int op = 0; op < ES_N_OPS; op++)
    {
      size_t n_presets, n = 0;
      const EsPreset *presets = es_presets (op, &n_presets);

      if (n_presets == 0)
        continue;
      preset_nicks[op][n++] = es_op_info (op)->definition_name;
      for (size_t i = 0; i < n_presets && n < G_N_ELEMENTS (preset_nicks[op]) - 2; i++)
        preset_nicks[op][n++] = presets[i].name;
      if (op == ES_OP_ENTROPY)
        preset_nicks[op][n++] = PRESET_CUSTOM;
      preset_nicks[op][n] = NULL;
    }

  gtk_widget_class_set_template_from_resource (widget_class, "/org/entroscope/Entroscope/es-sidebar-definition.ui");
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, preset_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, volume_window_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, shape_3d_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, box_planes_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, box_height_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, box_width_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, box_planes_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, box_height_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, box_width_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, ball_radius_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, ball_radius_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, shape_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, rect_height_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, rect_width_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, rect_height_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, rect_width_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, radius_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, radius_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, footprint_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, footprint_button);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, border_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, border_value_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, border_value_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, binning_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, range_lo_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, range_hi_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, range_lo_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, range_hi_spin);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, mask_row);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, mask_button);
  gtk_widget_class_bind_template_child (widget_class, EsSidebarDefinition, mask_clear_button);
}

static void
es_sidebar_definition_init (EsSidebarDefinition *self)
{
  self->files = g_ptr_array_new_with_free_func (cells_file_free);
  self->op = ES_OP_ENTROPY;
  gtk_widget_init_template (GTK_WIDGET (self));

  /* Each menu in the order of its key's nicks (class_init). */
  for (int op = 0; op < ES_N_OPS; op++)
    {
      size_t n_presets;
      const EsPreset *list = es_presets (op, &n_presets);

      if (n_presets == 0)
        continue;
      self->preset_titles[op] = gtk_string_list_new (NULL);
      gtk_string_list_append (self->preset_titles[op], _ (es_op_info (op)->definition_title));
      for (size_t i = 0; i < n_presets; i++)
        gtk_string_list_append (self->preset_titles[op], list[i].title);
      if (op == ES_OP_ENTROPY)
        gtk_string_list_append (self->preset_titles[op], _ ("Custom"));
    }
  /* Odd sides: ticks are 1 + 2k. */
  gtk_spin_button_set_snap_to_ticks (self->rect_height_spin, TRUE);
  gtk_spin_button_set_snap_to_ticks (self->rect_width_spin, TRUE);
  gtk_spin_button_set_snap_to_ticks (self->box_planes_spin, TRUE);
  gtk_spin_button_set_snap_to_ticks (self->box_height_spin, TRUE);
  gtk_spin_button_set_snap_to_ticks (self->box_width_spin, TRUE);
  g_signal_connect (self->mask_button, "clicked", G_CALLBACK (on_mask_clicked), self);
  g_signal_connect (self->mask_clear_button, "clicked", G_CALLBACK (on_mask_clear_clicked), self);
  g_signal_connect (self->footprint_button, "clicked", G_CALLBACK (on_footprint_clicked), self);
}
