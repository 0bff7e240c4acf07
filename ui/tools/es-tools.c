/* SPDX-License-Identifier: MIT */
/* EsTools: the tool palette, the panel, the "tools.*" actions and shortcuts, the canvas gesture and
 * the shared channels; each tool's drawing and results are in es-profile.c, es-roi.c,
 * es-inspector.c, es-swipe.c and es-tools-contrast.c, the CSV in es-tools-csv.c, the icons in
 * es-tools-icons.c. */
#include "es-tools-private.h"

#include <math.h>
#include <glib/gi18n-lib.h>

G_DEFINE_FINAL_TYPE (EsTools, es_tools, G_TYPE_OBJECT)

/* The space under the panel's page. */
#define PANEL_MARGIN_BOTTOM 8

/* One row per tool: its action target, name, shortcut and what it does. */
static const struct {
  const char *id;
  const char *title;
  guint key;
  const char *key_label;
  const char *panel_title;
} tool_rows[ES_N_TOOLS] = {
  [ES_TOOL_POINTER] = { "pointer", N_ ("Pan and Select Pane"), GDK_KEY_v, "V", N_ ("Pan and Select Pane") },
  [ES_TOOL_LINE] = { "line", N_ ("Line Profile"), GDK_KEY_l, "L", N_ ("Line Profile") },
  [ES_TOOL_RECT] = { "rectangle", N_ ("Rectangle Statistics"), GDK_KEY_r, "R", N_ ("Rectangle Statistics") },
  [ES_TOOL_INSPECT] = { "inspect", N_ ("Pixel Inspector"), GDK_KEY_i, "I", N_ ("Pixel Inspector") },
  [ES_TOOL_SWIPE] = { "swipe", N_ ("Swipe Compare"), GDK_KEY_s, "S", N_ ("Swipe Compare") },
};

/* Channels */

void
_es_tools_channels_clear (EsToolsChannels *channels)
{
  for (int i = 0; i < channels->n; i++)
    {
      g_free (channels->names[i]);
      es_layer_unref (channels->layers[i]);
    }
  memset (channels, 0, sizeof *channels);
}

EsLayer *
_es_tools_get_layer (EsTools *self, EsView view)
{
  EsSource *source = es_tools_host_get_source (self->host);
  EsLayer *layer = es_tools_host_get_layer (self->host, view);

  if (layer || view != ES_VIEW_ORIGINAL || source == NULL)
    return layer;
  /* The original is its image: made here when the window has not. */
  if (self->swipe_original == NULL || self->swipe_original->source != source)
    {
      g_clear_pointer (&self->swipe_original, es_layer_unref);
      self->swipe_original = es_layer_new_original (source);
    }
  return self->swipe_original;
}

static void
add_channel (EsToolsChannels *channels, EsLayer *layer, EsView view, char *name, int levels, double scale,
             double offset)
{
  int i = channels->n++;

  channels->names[i] = name;
  channels->layers[i] = es_layer_ref (layer);
  channels->views[i] = view;
  channels->heatmap[i] = view != ES_VIEW_ORIGINAL && es_view_is_heatmap (view);
  channels->channels[i] = (EsChannel){ name, &layer->result.values, levels, scale, offset };
}

/* Gray, level, then each operation view on screen in its display units. */
static void
build_channels (EsTools *self, EsToolsChannels *channels)
{
  EsView views[ES_CANVAS_MAX_PANES];
  EsLayer *original = _es_tools_get_layer (self, ES_VIEW_ORIGINAL);
  EsDisplay display;
  EsChannel values;
  EsJob job;
  int n;

  _es_tools_channels_clear (channels);
  if (original == NULL)
    return;
  es_tools_host_get_display (self->host, &display);
  es_tools_host_get_view_job (self->host, ES_VIEW_QUANTIZED, &job);
  /* The original as the file's values: a float TIFF's, not their 16-bit samples. */
  values = es_channel_of_values (&original->result.values);
  add_channel (channels, original, ES_VIEW_ORIGINAL, g_strdup (values.name), 0, values.scale, values.offset);
  add_channel (channels, original, ES_VIEW_ORIGINAL, g_strdup ("level"), job.levels, 1.0, 0);
  n = es_tools_host_get_views (self->host, views);
  for (int i = 0; i < n; i++)
    {
      EsLayer *layer = es_tools_host_get_layer (self->host, views[i]);
      EsValueInfo info;

      /* The original is gray, and the quantized view holds the levels. */
      if (views[i] == ES_VIEW_ORIGINAL || views[i] == ES_VIEW_QUANTIZED || layer == NULL
          || es_layer_width (layer) != es_layer_width (original)
          || es_layer_height (layer) != es_layer_height (original))
        continue;
      es_layer_display_info (layer, &display, &info);
      add_channel (channels, layer, views[i],
                   layer->result.values.format == ES_FORMAT_F32
                     ? g_strdup_printf ("%s (%s)", es_view_name (views[i]), info.units)
                     : g_strdup (es_view_name (views[i])),
                   0, info.unit_scale > 0 ? info.unit_scale : 1.0, 0);
    }
}

char *
_es_nan_skipped_text (guint64 nan)
{
  char count[24];

  g_snprintf (count, sizeof count, "%" G_GUINT64_FORMAT, nan);
  /* TRANSLATORS: %s counts values left out of statistics and plots because they are NaN (no value) */
  return g_strdup_printf (dngettext (GETTEXT_PACKAGE, "%s NaN skipped", "%s NaN skipped", (unsigned long) nan), count);
}

char *
_es_tools_describe_rect (const EsImageMeta *meta, int width, int height)
{
  char w[32], h[32], area[32];
  const char *unit = es_image_meta_length_symbol (meta);

  if (!es_image_meta_calibrated (meta))
    return g_strdup_printf (_ ("%d × %d px"), width, height);
  es_format_significant (w, sizeof w, es_image_meta_length (meta, width, 0), 5);
  es_format_significant (h, sizeof h, es_image_meta_length (meta, 0, height), 5);
  es_format_significant (area, sizeof area, es_image_meta_area (meta, width, height), 5);
  /* TRANSLATORS: a rectangle in pixels, then in the image's unit (µm…) and its area */
  return g_strdup_printf (_ ("%d × %d px = %s × %s %s, area %s %s²"), width, height, w, h, unit, area, unit);
}

/* Results */

static void
update_profile (EsTools *self)
{
  EsError error = { 0 };

  es_profile_clear (&self->profile);
  if (self->has_line && self->channels.n > 0)
    es_profile_sample (&self->profile, self->channels.channels, self->channels.n, self->line[0], self->line[1],
                       self->line[2], self->line[3], &error);
}

void
es_tools_update (EsTools *self)
{
  g_return_if_fail (ES_IS_TOOLS (self));

  g_clear_handle_id (&self->update_idle, g_source_remove);
  /* Another image: the shapes were drawn on the one before. */
  if (es_tools_host_get_source (self->host) != NULL
      && es_tools_host_get_source (self->host)->serial != self->source_serial)
    {
      self->source_serial = es_tools_host_get_source (self->host)->serial;
      self->has_line = self->has_rect = self->inspect_pinned = FALSE;
      self->hover_x = self->hover_y = -1;
    }
  build_channels (self, &self->channels);
  update_profile (self);
  _es_profile_plot_update (self->profile_plot);
  _es_roi_update (self);
  _es_inspector_update (self);
  _es_contrast_update (self);
  _es_tools_shape_update (self);
  gtk_widget_set_sensitive (self->copy_button, (self->tool == ES_TOOL_LINE && self->has_line)
                                                 || (self->tool == ES_TOOL_RECT && self->has_rect));
  gtk_widget_set_sensitive (self->export_button, gtk_widget_get_sensitive (self->copy_button));
  gtk_widget_queue_draw (GTK_WIDGET (self->canvas));
}

static gboolean
update_idle (gpointer data)
{
  EsTools *self = data;

  self->update_idle = 0;
  es_tools_update (self);
  return G_SOURCE_REMOVE;
}

void
_es_tools_schedule_update (EsTools *self)
{
  if (self->update_idle == 0)
    self->update_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 20, update_idle, self, NULL);
}

void
es_tools_views_changed (EsTools *self)
{
  if (self)
    _es_tools_schedule_update (self);
}

void
es_tools_adjust_scale (EsTools *self, EsView view, EsColorScale *scale)
{
  if (self == NULL || view >= ES_N_VIEWS || !self->contrast[view].enabled)
    return;
  scale->lo = self->contrast[view].lo;
  scale->hi = self->contrast[view].hi;
}

/* Tools and shapes */

static void
update_clear_action (EsTools *self)
{
  GAction *clear = g_action_map_lookup_action (G_ACTION_MAP (self->actions), "clear");

  /* Disabled when there is nothing to clear, so that Escape goes on to
   * the window (cancelling a computation). */
  g_simple_action_set_enabled (G_SIMPLE_ACTION (clear), self->tool != ES_TOOL_POINTER);
}

void
es_tools_set_tool (EsTools *self, EsTool tool)
{
  GAction *action;

  g_return_if_fail (ES_IS_TOOLS (self));
  g_return_if_fail (tool < ES_N_TOOLS);

  self->tool = tool;
  self->dragging = FALSE;
  self->inspect_pinned = FALSE;
  action = g_action_map_lookup_action (G_ACTION_MAP (self->actions), "tool");
  g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_string (tool_rows[tool].id));
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self->canvas), tool == ES_TOOL_POINTER ? NULL
                                                              : tool == ES_TOOL_SWIPE ? "col-resize"
                                                                                      : "crosshair");
  gtk_label_set_label (GTK_LABEL (self->panel_title), _ (tool_rows[tool].panel_title));
  gtk_stack_set_visible_child_name (GTK_STACK (self->panel_stack), tool_rows[tool].id);
  gtk_widget_set_visible (self->copy_button, tool == ES_TOOL_LINE || tool == ES_TOOL_RECT);
  gtk_widget_set_visible (self->export_button, tool == ES_TOOL_LINE || tool == ES_TOOL_RECT);
  /* Hidden but measured: the header keeps its height. */
  gtk_widget_set_child_visible (self->close_button, tool != ES_TOOL_POINTER);
  update_clear_action (self);
  _es_tools_schedule_update (self);
}

static void
tool_action (GSimpleAction *action, GVariant *parameter, gpointer data)
{
  EsTools *self = data;
  const char *id = g_variant_get_string (parameter, NULL);

  /* Without an image there is nothing to inspect (the palette is hidden). */
  if (es_tools_host_get_source (self->host) == NULL && !g_str_equal (id, tool_rows[ES_TOOL_POINTER].id))
    return;
  for (int tool = 0; tool < ES_N_TOOLS; tool++)
    if (g_str_equal (id, tool_rows[tool].id))
      es_tools_set_tool (self, tool);
}

/* Escape: the tool's shape goes first, then the tool itself. */
static void
clear_action (GSimpleAction *action, GVariant *parameter, gpointer data)
{
  EsTools *self = data;

  if (self->tool == ES_TOOL_LINE && self->has_line)
    self->has_line = FALSE;
  else if (self->tool == ES_TOOL_RECT && self->has_rect)
    self->has_rect = FALSE;
  else if (self->tool == ES_TOOL_INSPECT && self->inspect_pinned)
    self->inspect_pinned = FALSE;
  else
    {
      es_tools_set_tool (self, ES_TOOL_POINTER);
      return;
    }
  es_tools_update (self);
}

/* The image pixel under a canvas point, clamped to the image. */
static gboolean
pixel_at (EsTools *self, double x, double y, int *pane, int *px, int *py)
{
  EsSource *source = es_tools_host_get_source (self->host);
  double ix, iy;

  if (source == NULL || !es_canvas_widget_to_image (self->canvas, x, y, pane, &ix, &iy))
    return FALSE;
  *px = CLAMP ((int) floor (ix), 0, source->image.width - 1);
  *py = CLAMP ((int) floor (iy), 0, source->image.height - 1);
  return TRUE;
}

/* The split follows a drag (never the hover, so that the readout can read
 * both sides): the same fraction of every pane's width
 * (the grid's panes are half the canvas less the 4 px gap). */
static void
set_swipe (EsTools *self, double x)
{
  double width = gtk_widget_get_width (GTK_WIDGET (self->canvas));

  if (es_canvas_get_n_panes (self->canvas) > 1)
    {
      width = (width - 4) / 2;
      if (x >= width + 2)
        x -= width + 4;
    }
  self->swipe_split = CLAMP (x / MAX (width, 1), 0, 1);
  gtk_adjustment_set_value (self->swipe_adjustment, self->swipe_split * 100);
  gtk_widget_queue_draw (GTK_WIDGET (self->canvas));
}

void
es_tools_press (EsTools *self, double x, double y)
{
  int pane, px, py;

  g_return_if_fail (ES_IS_TOOLS (self));

  if (self->tool == ES_TOOL_SWIPE)
    {
      self->dragging = TRUE;
      set_swipe (self, x);
      return;
    }
  if (!pixel_at (self, x, y, &pane, &px, &py))
    return;
  self->dragging = TRUE;
  self->drag_pane = pane;
  if (self->tool == ES_TOOL_LINE)
    {
      self->has_line = TRUE;
      self->line[0] = self->line[2] = px;
      self->line[1] = self->line[3] = py;
    }
  else if (self->tool == ES_TOOL_RECT)
    {
      self->has_rect = TRUE;
      self->rect_corners[0] = self->rect_corners[2] = px;
      self->rect_corners[1] = self->rect_corners[3] = py;
    }
  else if (self->tool == ES_TOOL_INSPECT)
    {
      /* A click pins the inspected pixel, so that the table can be read. */
      self->inspect_pinned = !(self->inspect_pinned && self->hover_x == px && self->hover_y == py);
      self->hover_x = px;
      self->hover_y = py;
    }
  es_tools_update (self);
}

void
es_tools_motion (EsTools *self, double x, double y)
{
  int pane, px, py;

  g_return_if_fail (ES_IS_TOOLS (self));

  if (!self->dragging)
    return;
  if (self->tool == ES_TOOL_SWIPE)
    {
      set_swipe (self, x);
      return;
    }
  if (!pixel_at (self, x, y, &pane, &px, &py))
    return;
  if (self->tool == ES_TOOL_LINE)
    {
      self->line[2] = px;
      self->line[3] = py;
    }
  else if (self->tool == ES_TOOL_RECT)
    {
      self->rect_corners[2] = px;
      self->rect_corners[3] = py;
    }
  else
    return;
  /* Results follow on idle: a drag stays smooth on large images. */
  gtk_widget_queue_draw (GTK_WIDGET (self->canvas));
  _es_tools_schedule_update (self);
}

void
es_tools_release (EsTools *self, double x, double y)
{
  g_return_if_fail (ES_IS_TOOLS (self));

  es_tools_motion (self, x, y);
  self->dragging = FALSE;
  es_tools_update (self);
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, EsTools *self)
{
  /* The pointer tool leaves drags to the canvas: pan, choose a pane. */
  if (self->tool == ES_TOOL_POINTER || es_tools_host_get_source (self->host) == NULL)
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  gtk_widget_grab_focus (GTK_WIDGET (self->canvas));
  es_canvas_hold_fit (self->canvas, TRUE);
  self->holding_fit = TRUE;
  es_tools_press (self, x, y);
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, EsTools *self)
{
  double x, y;

  gtk_gesture_drag_get_start_point (gesture, &x, &y);
  es_tools_motion (self, x + dx, y + dy);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, EsTools *self)
{
  double x, y;

  gtk_gesture_drag_get_start_point (gesture, &x, &y);
  es_tools_release (self, x + dx, y + dy);
  if (self->holding_fit)
    es_canvas_hold_fit (self->canvas, FALSE);
  self->holding_fit = FALSE;
}

static void
on_hover (EsCanvas *canvas, int pane, int x, int y, EsTools *self)
{
  if (self->tool != ES_TOOL_INSPECT || self->inspect_pinned || pane < 0)
    return;
  self->hover_x = x;
  self->hover_y = y;
  _es_inspector_update (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->canvas));
}

void
_es_tools_to_pane (const EsCanvasPaneGeometry *geometry, double ix, double iy, double *px, double *py)
{
  *px = geometry->x + ix * geometry->zoom;
  *py = geometry->y + iy * geometry->zoom;
}

void
_es_tools_keep_clear (EsTools *self, const double *points, int n_points)
{
  double x0 = points[0], y0 = points[1], x1 = points[0], y1 = points[1];

  for (int i = 1; i < n_points; i++)
    {
      x0 = MIN (x0, points[2 * i]);
      x1 = MAX (x1, points[2 * i]);
      y0 = MIN (y0, points[2 * i + 1]);
      y1 = MAX (y1, points[2 * i + 1]);
    }
  es_canvas_keep_clear (self->canvas, &GRAPHENE_RECT_INIT (x0, y0, x1 - x0, y1 - y0));
}

static void
draw_shapes (EsCanvas *canvas, GtkSnapshot *snapshot, const EsCanvasPaneGeometry *geometry, gpointer data)
{
  EsTools *self = data;

  switch (self->tool)
    {
    case ES_TOOL_LINE: _es_profile_draw (self, snapshot, geometry); break;
    case ES_TOOL_RECT: _es_roi_draw (self, snapshot, geometry); break;
    case ES_TOOL_INSPECT: _es_inspector_draw (self, snapshot, geometry); break;
    case ES_TOOL_SWIPE: _es_swipe_draw (self, snapshot, geometry); break;
    default: break;
    }
}

/* Widgets */

static GtkWidget *
make_palette (EsTools *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *scroller;

  gtk_widget_add_css_class (box, "tool-palette");
  gtk_widget_set_margin_start (box, 4);
  gtk_widget_set_margin_end (box, 4);
  gtk_widget_set_margin_top (box, 6);
  for (int tool = 0; tool < ES_N_TOOLS; tool++)
    {
      GtkWidget *button = gtk_toggle_button_new ();
      g_autofree char *tooltip = g_strdup_printf ("%s (%s)", _ (tool_rows[tool].title), tool_rows[tool].key_label);

      gtk_button_set_child (GTK_BUTTON (button), _es_tools_icon_new (tool));
      gtk_widget_add_css_class (button, "flat");
      gtk_widget_set_tooltip_text (button, tooltip);
      gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, _ (tool_rows[tool].title),
                                      -1);
      gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "tools.tool");
      gtk_actionable_set_action_target (GTK_ACTIONABLE (button), "s", tool_rows[tool].id);
      gtk_box_append (GTK_BOX (box), button);
      self->tool_buttons[tool] = button;
    }
  gtk_box_append (GTK_BOX (box), gtk_separator_new (GTK_ORIENTATION_HORIZONTAL));
  self->contrast_button = _es_contrast_button_new (self);
  gtk_box_append (GTK_BOX (box), self->contrast_button);
  /* A short window scrolls the palette rather than grow taller. */
  scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_propagate_natural_width (GTK_SCROLLED_WINDOW (scroller), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), box);
  return scroller;
}

/* The pointer's page: what it does, and the tools that the keys choose. */
static GtkWidget *
make_pointer_page (void)
{
  g_autoptr (GString) tools = g_string_new (NULL);
  g_autofree char *text = NULL;
  GtkWidget *label;

  for (int tool = ES_TOOL_POINTER + 1; tool < ES_N_TOOLS; tool++)
    {
      if (tools->len > 0)
        /* TRANSLATORS: between two tools of the list on the pointer's page. */
        g_string_append (tools, _ (", "));
      g_string_append_printf (tools, "%s (%s)", _ (tool_rows[tool].title), tool_rows[tool].key_label);
    }
  /* TRANSLATORS: %s lists the tools with their keys: "Line Profile (L), Rectangle Statistics (R), …". */
  text = g_strdup_printf (_ ("Drag to pan; click a pane of the grid to make it the active one. Tools: %s."),
                          tools->str);
  label = gtk_label_new (text);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_set_valign (label, GTK_ALIGN_START);
  gtk_widget_add_css_class (label, "dim-label");
  return label;
}

/* The panel is docked under the image while one is open, whatever the
 * tool, and keeps one height: choosing a tool, or its results arriving,
 * never resizes the canvas, so the image stays under the pointer. */
static GtkWidget *
make_panel (EsTools *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *close = gtk_button_new_from_icon_name ("window-close-symbolic");

  /* The canvas takes the window's extra height, never the panel. */
  gtk_widget_set_vexpand (box, FALSE);
  gtk_widget_add_css_class (box, "tools-panel");
  gtk_widget_add_css_class (box, "view");

  gtk_widget_set_margin_start (header, 12);
  gtk_widget_set_margin_end (header, 6);
  gtk_widget_set_margin_top (header, 4);
  self->panel_title = gtk_label_new (NULL);
  gtk_widget_add_css_class (self->panel_title, "heading");
  gtk_widget_set_hexpand (self->panel_title, TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->panel_title), 0);
  gtk_box_append (GTK_BOX (header), self->panel_title);
  self->copy_button = gtk_button_new_from_icon_name ("edit-copy-symbolic");
  gtk_widget_set_tooltip_text (self->copy_button, _ ("Copy as CSV"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->copy_button), GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Copy as CSV"),
                                  -1);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->copy_button), "tools.copy");
  self->export_button = gtk_button_new_with_mnemonic (_ ("E_xport CSV…"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->export_button), "tools.export");
  gtk_widget_set_tooltip_text (close, _ ("Close the Tool (Esc)"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (close), GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Close the Tool"), -1);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (close), "tools.tool");
  gtk_actionable_set_action_target (GTK_ACTIONABLE (close), "s", tool_rows[ES_TOOL_POINTER].id);
  self->close_button = close;
  for (GtkWidget *const *b = (GtkWidget *const[]){ _es_tools_shape_button_new (self), self->copy_button,
                                                   self->export_button, close, NULL };
       *b; b++)
    {
      gtk_widget_add_css_class (*b, "flat");
      gtk_box_append (GTK_BOX (header), *b);
    }
  gtk_box_append (GTK_BOX (box), header);

  self->panel_stack = gtk_stack_new ();
  gtk_widget_set_margin_start (self->panel_stack, 12);
  gtk_widget_set_margin_end (self->panel_stack, 12);
  gtk_widget_set_margin_bottom (self->panel_stack, PANEL_MARGIN_BOTTOM);
  gtk_stack_set_hhomogeneous (GTK_STACK (self->panel_stack), FALSE);
  gtk_stack_set_vhomogeneous (GTK_STACK (self->panel_stack), FALSE);
  gtk_stack_add_named (GTK_STACK (self->panel_stack), make_pointer_page (), tool_rows[ES_TOOL_POINTER].id);
  self->profile_plot = _es_profile_plot_new (self);
  gtk_stack_add_named (GTK_STACK (self->panel_stack), self->profile_plot, tool_rows[ES_TOOL_LINE].id);
  gtk_stack_add_named (GTK_STACK (self->panel_stack), _es_roi_page_new (self), tool_rows[ES_TOOL_RECT].id);
  gtk_stack_add_named (GTK_STACK (self->panel_stack), _es_inspector_page_new (self), tool_rows[ES_TOOL_INSPECT].id);
  gtk_stack_add_named (GTK_STACK (self->panel_stack), _es_swipe_page_new (self), tool_rows[ES_TOOL_SWIPE].id);
  /* A page taller than the panel scrolls inside it (on_window_height sets the height). */
  self->panel_scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->panel_scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->panel_scroller), self->panel_stack);
  gtk_box_append (GTK_BOX (box), self->panel_scroller);
  return box;
}

/* Plain keys, as the window's own (they bubble up from the focus widget,
 * so a text field keeps its letters). */
static void
add_shortcuts (EsTools *self)
{
  GtkEventController *controller = gtk_shortcut_controller_new ();

  for (int tool = 0; tool < ES_N_TOOLS; tool++)
    {
      GtkShortcut *shortcut = gtk_shortcut_new (gtk_keyval_trigger_new (tool_rows[tool].key, 0),
                                                gtk_named_action_new ("tools.tool"));

      gtk_shortcut_set_arguments (shortcut, g_variant_new_string (tool_rows[tool].id));
      gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (controller), shortcut);
    }
  gtk_shortcut_controller_add_shortcut (
    GTK_SHORTCUT_CONTROLLER (controller),
    gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_Escape, 0), gtk_named_action_new ("tools.clear")));
  gtk_shortcut_controller_add_shortcut (
    GTK_SHORTCUT_CONTROLLER (controller),
    gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_c, 0), gtk_named_action_new ("tools.contrast")));
  gtk_widget_add_controller (GTK_WIDGET (self->host), controller);
}

static void
contrast_action (GSimpleAction *action, GVariant *parameter, gpointer data)
{
  EsTools *self = data;

  gtk_menu_button_popup (GTK_MENU_BUTTON (self->contrast_button));
}

/* A steady panel height, so that the canvas does not refit while a shape
 * is drawn: a line profile of the grid's five views whole, or in a short
 * window, where the image needs the room, of one view's three (gray,
 * level, value); taller pages scroll. */
static void
on_window_height (GtkWindow *window, GParamSpec *pspec, EsTools *self)
{
  int width, height;

  gtk_window_get_default_size (window, &width, &height);
  /* Without natural height propagated, this is the scroller's height. */
  gtk_scrolled_window_set_min_content_height (GTK_SCROLLED_WINDOW (self->panel_scroller),
                                              _es_profile_plot_height (height > 0 && height < 640 ? 3 : 5)
                                                + PANEL_MARGIN_BOTTOM);
}

EsTools *
es_tools_new (EsToolsHost *host, EsCanvas *canvas)
{
  static const GActionEntry entries[] = {
    { "tool", NULL, "s", "'pointer'", NULL, { 0 } }, { "clear", NULL, NULL, NULL, NULL, { 0 } },
    { "copy", NULL, NULL, NULL, NULL, { 0 } },       { "export", NULL, NULL, NULL, NULL, { 0 } },
    { "contrast", NULL, NULL, NULL, NULL, { 0 } },
  };
  static const GCallback activate[] = { G_CALLBACK (tool_action), G_CALLBACK (clear_action),
                                        G_CALLBACK (_es_tools_copy_action), G_CALLBACK (_es_tools_export_action),
                                        G_CALLBACK (contrast_action) };
  EsTools *self;
  GtkGesture *gesture;

  g_return_val_if_fail (ES_IS_TOOLS_HOST (host), NULL);
  g_return_val_if_fail (ES_IS_CANVAS (canvas), NULL);

  self = g_object_new (ES_TYPE_TOOLS, NULL);
  self->host = host;
  self->canvas = canvas;
  self->actions = g_simple_action_group_new ();
  for (guint i = 0; i < G_N_ELEMENTS (entries); i++)
    {
      GSimpleAction *action = entries[i].parameter_type ? g_simple_action_new_stateful (
                                entries[i].name, G_VARIANT_TYPE_STRING, g_variant_new_string ("pointer"))
                                                        : g_simple_action_new (entries[i].name, NULL);

      g_signal_connect (action, "activate", activate[i], self);
      g_action_map_add_action (G_ACTION_MAP (self->actions), G_ACTION (action));
      g_object_unref (action);
    }
  gtk_widget_insert_action_group (GTK_WIDGET (host), "tools", G_ACTION_GROUP (self->actions));

  self->palette = make_palette (self);
  self->panel = make_panel (self);

  es_canvas_set_draw_func (self->canvas, draw_shapes, self);
  gesture = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (gesture), GDK_BUTTON_PRIMARY);
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (gesture), GTK_PHASE_CAPTURE);
  g_signal_connect (gesture, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (gesture, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (gesture, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self->canvas), GTK_EVENT_CONTROLLER (gesture));
  g_signal_connect_object (self->canvas, "hover", G_CALLBACK (on_hover), self, 0);
  add_shortcuts (self);
  g_signal_connect_object (host, "notify::default-height", G_CALLBACK (on_window_height), self, 0);
  on_window_height (GTK_WINDOW (host), NULL, self);
  es_tools_set_tool (self, ES_TOOL_POINTER);
  return self;
}

GtkWidget *
es_tools_get_palette (EsTools *self)
{
  g_return_val_if_fail (ES_IS_TOOLS (self), NULL);
  return self->palette;
}

GtkWidget *
es_tools_get_panel (EsTools *self)
{
  g_return_val_if_fail (ES_IS_TOOLS (self), NULL);
  return self->panel;
}

/* GObject */

static void
es_tools_dispose (GObject *object)
{
  EsTools *self = ES_TOOLS (object);

  g_clear_handle_id (&self->update_idle, g_source_remove);
  if (self->canvas)
    es_canvas_set_draw_func (self->canvas, NULL, NULL);
  self->canvas = NULL;
  _es_tools_channels_clear (&self->channels);
  es_profile_clear (&self->profile);
  _es_swipe_clear (self);
  g_clear_pointer (&self->swipe_original, es_layer_unref);
  g_clear_object (&self->actions);
  G_OBJECT_CLASS (es_tools_parent_class)->dispose (object);
}

static void
es_tools_class_init (EsToolsClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = es_tools_dispose;
}

static void
es_tools_init (EsTools *self)
{
  self->hover_x = self->hover_y = -1;
  self->swipe_split = 0.5;
  self->swipe_view = ES_VIEW_ORIGINAL;
}
