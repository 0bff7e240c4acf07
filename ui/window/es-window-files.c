/* SPDX-License-Identifier: MIT */
/* EsWindow: the files around the image: Open Recent (the "recent-files" setting) and Image Information. */
#include "es-window-private.h"

#include <string.h>
#include <glib/gi18n-lib.h>

#include "es-calibration.h"

#define MAX_RECENT 10

/* Recent files */

/* A menu label shows a file name as it is: its underscores are not mnemonics. */
static char *
menu_label (const char *name)
{
  g_auto (GStrv) parts = g_strsplit (name, "_", -1);

  return g_strjoinv ("__", parts);
}

/* The name a recent file is listed by: its file name, or its full name
 * where that is not valid text. */
static char *
recent_name (GFile *file)
{
  char *name = g_file_get_basename (file);

  if (name == NULL || !g_utf8_validate (name, -1, NULL))
    {
      g_free (name);
      name = g_file_get_parse_name (file);
    }
  return name;
}

/* The folder a recent file is in, "~/scans" under the home folder; with
 * whole FALSE, only its last part ("scans"). */
static char *
recent_folder (GFile *file, gboolean whole)
{
  g_autoptr (GFile) parent = g_file_get_parent (file);
  g_autoptr (GFile) home = g_file_new_for_path (g_get_home_dir ());
  g_autofree char *relative = NULL, *folder = NULL;

  if (parent == NULL)
    return g_file_get_parse_name (file);
  if (g_file_equal (parent, home))
    return g_strdup ("~");
  if (!whole && (folder = g_file_get_basename (parent)) && g_utf8_validate (folder, -1, NULL))
    return g_steal_pointer (&folder);
  if ((relative = g_file_get_relative_path (home, parent)) && g_utf8_validate (relative, -1, NULL))
    return g_build_filename ("~", relative, NULL);
  return g_file_get_parse_name (parent);
}

static void
rebuild_recent_menu (EsWindow *self)
{
  g_auto (GStrv) uris = g_settings_get_strv (self->settings, "recent-files");
  guint n = MIN (g_strv_length (uris), MAX_RECENT);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) folders = g_ptr_array_new_with_free_func (g_free);

  g_menu_remove_all (self->recent_menu);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_uri (uris[i]);

      g_ptr_array_add (names, recent_name (file));
      g_ptr_array_add (folders, recent_folder (file, FALSE));
    }
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_uri (uris[i]);
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *whole = NULL, *shown = NULL, *label = NULL;
      g_autoptr (GMenuItem) item = NULL;
      gboolean repeated = FALSE, same_folder_name = FALSE;

      /* Files of one name in several folders each say their folder: its
       * name, or its path where the folders' names are alike too. */
      for (guint j = 0; j < n; j++)
        if (j != i && g_str_equal (name, g_ptr_array_index (names, j)))
          {
            repeated = TRUE;
            same_folder_name |= g_str_equal (g_ptr_array_index (folders, i), g_ptr_array_index (folders, j));
          }
      if (same_folder_name)
        whole = recent_folder (file, TRUE);
      if (repeated)
        shown = g_strdup_printf ("%s — %s", name, whole ? whole : (char *) g_ptr_array_index (folders, i));
      label = menu_label (shown ? shown : name);
      item = g_menu_item_new (label, NULL);
      g_menu_item_set_action_and_target_value (item, "win.open-recent", g_variant_new_string (uris[i]));
      g_menu_append_item (self->recent_menu, item);
    }
  if (n == 0)
    g_menu_append (self->recent_menu, "No Recent Files", "win.no-recent");
}

void
_es_window_add_recent (EsWindow *self, GFile *file)
{
  g_autofree char *uri = g_file_get_uri (file);
  g_auto (GStrv) uris = g_settings_get_strv (self->settings, "recent-files");
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_auto (GStrv) recent = NULL;
  guint n = 1;

  g_strv_builder_add (builder, uri);
  for (guint i = 0; uris[i] && n < MAX_RECENT; i++)
    if (!g_str_equal (uris[i], uri))
      {
        g_strv_builder_add (builder, uris[i]);
        n++;
      }
  recent = g_strv_builder_end (builder);
  g_settings_set_strv (self->settings, "recent-files", (const char *const *) recent);
}

static void
open_recent_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  es_window_open (ES_WINDOW (widget), file);
}

static void
on_recent_files (GSettings *settings, const char *key, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  rebuild_recent_menu (self);
}

/* Image information */

/* The format by the first bytes, as the loader recognises it. */
static const char *
file_format (EsSource *source)
{
  g_autoptr (GFileInputStream) stream = NULL;
  guint8 magic[8] = { 0 };
  gsize n = 0;

  if (source->image.levels > 0)
    return _ ("Text matrix");
  if (source->file == NULL || !(stream = g_file_read (source->file, NULL, NULL))
      || !g_input_stream_read_all (G_INPUT_STREAM (stream), magic, sizeof magic, &n, NULL, NULL))
    return _ ("unknown (the file cannot be read now)");
  if (n >= 8 && memcmp (magic, "\x89PNG\r\n\x1a\n", 8) == 0)
    return "PNG";
  if (n >= 2 && magic[0] == 'P' && (magic[1] == '2' || magic[1] == '5'))
    return magic[1] == '2' ? _ ("PGM (plain, P2)") : _ ("PGM (binary, P5)");
  if (n >= 4 && (memcmp (magic, "II*\0", 4) == 0 || memcmp (magic, "MM\0*", 4) == 0))
    return "TIFF";
  if (n >= 3 && memcmp (magic, "\xff\xd8\xff", 3) == 0)
    return "JPEG";
  return _ ("unknown (the file changed since it was opened)");
}

static void
add_fact (GPtrArray *facts, const char *name, char *value)
{
  g_ptr_array_add (facts, g_strdup (name));
  g_ptr_array_add (facts, value);
}

/* Depth, and for a float or signed TIFF the values its samples stand for:
 * the 16-bit samples are how they are quantized, not what they are. */
static void
add_value_facts (GPtrArray *facts, const EsImage *image)
{
  const EsImageMeta *meta = &image->meta;
  int decimals = es_image_meta_value_decimals (meta);
  double top = (double) ((1u << image->depth) - 1);
  /* With NaN, sample 0 stands for it and the finite values start at 1. */
  double bottom = meta->nan_samples > 0 ? 1 : 0;

  switch (meta->stored)
    {
    case ES_STORED_UNSIGNED:
      add_fact (facts, _ ("Depth"),
                g_strdup_printf (image->levels > 0 ? _ ("%d-bit levels") : _ ("%d-bit gray"), image->depth));
      return;
    case ES_STORED_SIGNED:
      add_fact (facts, _ ("Depth"), g_strdup_printf (_ ("%d-bit signed integers"), image->depth));
      break;
    case ES_STORED_FLOAT:
      add_fact (facts, _ ("Depth"), g_strdup (_ ("floating point, quantized to 65536 steps")));
      break;
    }
  add_fact (facts, _ ("Values"),
            g_strdup_printf (_ ("%.*f … %.*f"), decimals,
                             es_image_meta_value (meta, meta->value_scale < 0 ? top : bottom), decimals,
                             es_image_meta_value (meta, meta->value_scale < 0 ? bottom : top)));
  if (meta->stored == ES_STORED_FLOAT)
    {
      /* Apart from the messages: xgettext cannot read G_GUINT64_FORMAT. */
      g_autofree char *nan = g_strdup_printf ("%" G_GUINT64_FORMAT, meta->nan_samples);
      g_autofree char *infinite = g_strdup_printf ("%" G_GUINT64_FORMAT, meta->infinite_samples);

      add_fact (facts, _ ("Step"), g_strdup_printf ("%.6g", meta->value_scale));
      add_fact (facts, _ ("NaN"),
                /* TRANSLATORS: %s counts samples that are NaN; they have no value */
                g_strdup_printf (_ ("%s samples, without a value"), nan));
      add_fact (facts, _ ("Infinite"),
                /* TRANSLATORS: %s counts samples that are +∞ or −∞, read as the smallest or largest value */
                g_strdup_printf (_ ("%s samples, read as the ends of the values"), infinite));
    }
}

char *
_es_window_describe_samples (const EsImage *image)
{
  switch (image->meta.stored)
    {
    case ES_STORED_FLOAT: return g_strdup (_ ("float"));
    case ES_STORED_SIGNED: return g_strdup_printf (_ ("%d-bit signed"), image->depth);
    case ES_STORED_UNSIGNED: break;
    }
  return g_strdup_printf (_ ("%d-bit"), image->depth);
}

/* "0.65 × 0.65 µm, planes 2 µm apart", or that lengths are in pixels. */
static char *
pixel_size_text (const EsImage *image)
{
  double width, height, depth;
  char w[32], h[32], d[32];
  const char *unit = es_image_meta_length_symbol (&image->meta);

  if (!es_image_meta_pixel_size (&image->meta, &width, &height, &depth))
    return g_strdup (_ ("not calibrated (lengths in pixels)"));
  es_format_significant (w, sizeof w, width, 6);
  es_format_significant (h, sizeof h, height, 6);
  if (es_image_planes (image) > 1 && depth > 0)
    {
      es_format_significant (d, sizeof d, depth, 6);
      /* TRANSLATORS: a voxel's width × height, then the spacing of a volume's planes */
      return g_strdup_printf (_ ("%s × %s %s, planes %s %s apart"), w, h, unit, d, unit);
    }
  return g_strdup_printf ("%s × %s %s", w, h, unit);
}

GStrv
_es_window_source_facts (EsWindow *self)
{
  EsSource *source = self->source;
  g_autoptr (GFileInfo) info = NULL;
  GPtrArray *facts;

  if (source == NULL)
    return NULL;
  facts = g_ptr_array_new ();
  add_fact (facts, _ ("Size"),
            g_strdup_printf (_ ("%d × %d pixels (%.2f megapixels)"), source->image.width, source->image.height,
                             (double) source->image.width * source->image.height / 1e6));
  add_value_facts (facts, &source->image);
  add_fact (facts, _ ("Pixel size"), pixel_size_text (&source->image));
  if (source->image.levels > 0)
    add_fact (facts, _ ("Levels"), g_strdup_printf ("%d", source->image.levels));
  add_fact (facts, _ ("Format"), g_strdup (file_format (source)));
  if (source->file)
    info = g_file_query_info (source->file, G_FILE_ATTRIBUTE_STANDARD_SIZE, G_FILE_QUERY_INFO_NONE, NULL, NULL);
  if (info)
    {
      g_autofree char *human = g_format_size (g_file_info_get_size (info));
      /* Apart from the message: xgettext cannot read G_GINT64_FORMAT. */
      g_autofree char *bytes = g_strdup_printf ("%" G_GINT64_FORMAT, g_file_info_get_size (info));

      add_fact (facts, _ ("File size"), g_strdup_printf (_ ("%s (%s bytes)"), human, bytes));
    }
  else
    add_fact (facts, _ ("File size"), g_strdup (_ ("unknown")));
  add_fact (facts, _ ("Path"), source->file ? g_file_get_parse_name (source->file) : g_strdup (source->name));
  g_ptr_array_add (facts, NULL);
  return (GStrv) g_ptr_array_free (facts, FALSE);
}

/* A table of the facts: names on the left, values (selectable, each
 * labelled by its name for screen readers) on the right. */
GtkWidget *
_es_window_facts_table (const char *const *facts)
{
  GtkWidget *grid = gtk_grid_new ();

  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 18);
  gtk_widget_set_halign (grid, GTK_ALIGN_CENTER);
  for (int row = 0; facts[2 * row]; row++)
    {
      GtkWidget *name = gtk_label_new (facts[2 * row]);
      GtkWidget *value = gtk_label_new (facts[2 * row + 1]);

      gtk_label_set_xalign (GTK_LABEL (name), 1);
      gtk_widget_set_valign (name, GTK_ALIGN_START);
      gtk_widget_add_css_class (name, "dim-label");
      gtk_label_set_xalign (GTK_LABEL (value), 0);
      gtk_label_set_selectable (GTK_LABEL (value), TRUE);
      gtk_label_set_wrap (GTK_LABEL (value), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (value), PANGO_WRAP_WORD_CHAR);
      gtk_label_set_max_width_chars (GTK_LABEL (value), 40);
      gtk_accessible_update_relation (GTK_ACCESSIBLE (value), GTK_ACCESSIBLE_RELATION_LABELLED_BY, name, NULL, -1);
      gtk_grid_attach (GTK_GRID (grid), name, 0, row, 1, 1);
      gtk_grid_attach (GTK_GRID (grid), value, 1, row, 1, 1);
    }
  return grid;
}

static void
image_info_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);
  g_auto (GStrv) facts = _es_window_source_facts (self);
  GtkWidget *dialog;

  if (facts == NULL)
    return;
  dialog = adw_message_dialog_new (GTK_WINDOW (self), self->source->name, NULL);
  adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog),
                                      _es_window_facts_table ((const char *const *) facts));
  adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (dialog), "close", _ ("_Close"));
  gtk_window_present (GTK_WINDOW (dialog));
}

/* The placeholder of an empty Open Recent menu: never enabled. */
static void
no_recent_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{}

void
_es_window_class_files_init (EsWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.image-info", NULL, image_info_action);
  gtk_widget_class_install_action (widget_class, "win.no-recent", NULL, no_recent_action);
}

void
_es_window_files_init (EsWindow *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.no-recent", FALSE);
}

void
_es_window_files_bind (EsWindow *self)
{
  g_signal_connect_object (self->settings, "changed::recent-files", G_CALLBACK (on_recent_files), self, 0);
  rebuild_recent_menu (self);
}
