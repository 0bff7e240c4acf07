/* SPDX-License-Identifier: MIT */
/* UI tests of the window's basics (GTest, under Xvfb): the layout at 640×420 and at 1360×860 through
 * widget allocations, no arrow, wheel or Ctrl+C traps, the empty state, windows with their own
 * parameters, shortcuts, volumes and their 3-D windows. (test-ui-files.c: exports, errors, undo, files.) */
#include "test-ui-common.h"

#include <tiffio.h>

#include "es-sidebar.h"
#include "es-sidebar-definition.h"
#include "es-tools-private.h"

/* Allocations */

/* Under Xvfb without a window manager, nothing else decides the size. The
 * default size counts the client-side decorations; the window widget is
 * what is left inside them. */
static gboolean
window_has_size (gpointer data)
{
  const int *size = data;

  return gtk_widget_get_width (GTK_WIDGET (window)) == size[0] && gtk_widget_get_height (GTK_WIDGET (window)) == size[1]
         && !g_main_context_pending (NULL);
}

static gboolean
window_allocated (gpointer data)
{
  return gtk_widget_get_width (GTK_WIDGET (window)) > 0 && !g_main_context_pending (NULL);
}

static void
resize (int width, int height)
{
  int size[2] = { width, height };
  int default_width, default_height;

  wait_until (window_allocated, NULL, NULL, NULL);

  /* The decorations: the default size beyond the widget's. */
  gtk_window_get_default_size (GTK_WINDOW (window), &default_width, &default_height);
  default_width -= gtk_widget_get_width (GTK_WIDGET (window));
  default_height -= gtk_widget_get_height (GTK_WIDGET (window));
  gtk_window_set_default_size (GTK_WINDOW (window), width + default_width, height + default_height);
  g_test_message ("resizing to %d×%d", width, height);
  wait_until (window_has_size, size, NULL, NULL);
  wait_idle ();
}

/* Where a widget is drawn, in the window's coordinates; FALSE when it is
 * not on screen. */
static gboolean
bounds (GtkWidget *widget, graphene_rect_t *rect)
{
  return gtk_widget_get_mapped (widget) && gtk_widget_get_width (widget) > 0
         && gtk_widget_compute_bounds (widget, GTK_WIDGET (window), rect);
}

static void
assert_apart (const char *name_a, GtkWidget *a, const char *name_b, GtkWidget *b)
{
  graphene_rect_t ra, rb, overlap;

  if (!bounds (a, &ra) || !bounds (b, &rb))
    return;
  if (graphene_rect_intersection (&ra, &rb, &overlap) && overlap.size.width > 0.5 && overlap.size.height > 0.5)
    g_error ("%s (%g,%g %g×%g) overlaps %s (%g,%g %g×%g)", name_a, ra.origin.x, ra.origin.y, ra.size.width,
             ra.size.height, name_b, rb.origin.x, rb.origin.y, rb.size.width, rb.size.height);
}

/* Within the window, give or take the pixel of a border or a separator. */
static void
assert_inside_window (const char *name, GtkWidget *widget)
{
  graphene_rect_t rect;

  if (!bounds (widget, &rect))
    return;
  if (rect.origin.x < -1.5 || rect.origin.y < -1.5
      || rect.origin.x + rect.size.width > gtk_widget_get_width (GTK_WIDGET (window)) + 1.5
      || rect.origin.y + rect.size.height > gtk_widget_get_height (GTK_WIDGET (window)) + 1.5)
    g_error ("%s (%g,%g %g×%g) is cut by the window's edge", name, rect.origin.x, rect.origin.y, rect.size.width,
             rect.size.height);
}

static GtkWidget *
canvas_viewport (void)
{
  return gtk_widget_get_ancestor (GTK_WIDGET (es_window_get_canvas (window)), GTK_TYPE_SCROLLED_WINDOW);
}

/* The readout of a pixel near the middle, as the pointer would give it. */
static void
hover_middle (void)
{
  EsSource *source = es_window_get_source (window);

  g_signal_emit_by_name (es_window_get_canvas (window), "hover", 0, source->image.width / 2 + 123,
                         source->image.height / 2 + 45);
  wait_idle ();
}

/* What a person reads must not overlap or be cut: the image, the colorbar,
 * the status bar's labels, the panel's timings, the header. */
static void
assert_readable (void)
{
  struct {
    const char *name;
    GtkWidget *widget;
  } parts[] = {
    { "canvas", canvas_viewport () },
    { "colorbar", GTK_WIDGET (window->colorbar) },
    { "readout", GTK_WIDGET (window->position_label) },
    { "notice", GTK_WIDGET (window->notice_label) },
    { "job", GTK_WIDGET (window->info_label) },
    { "timings", GTK_WIDGET (window->timings) },
  };
  GtkWidget *header = gtk_widget_get_ancestor (GTK_WIDGET (window->view_dropdown), ADW_TYPE_HEADER_BAR);

  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      assert_inside_window (parts[i].name, parts[i].widget);
      assert_apart (parts[i].name, parts[i].widget, "header", header);
      for (guint j = i + 1; j < G_N_ELEMENTS (parts); j++)
        assert_apart (parts[i].name, parts[i].widget, parts[j].name, parts[j].widget);
    }
  /* The error banner lies over the image (it never moves it), inside the window, below the header. */
  assert_inside_window ("error banner", GTK_WIDGET (window->error_revealer));
  assert_apart ("error banner", GTK_WIDGET (window->error_revealer), "header", header);
  /* The readout is whole: wrapped if need be, never ellipsized. */
  g_assert_cmpstr (gtk_label_get_label (window->position_label), !=, " ");
  g_assert_false (pango_layout_is_ellipsized (gtk_label_get_layout (window->position_label)));
  /* The header's buttons are all there, none cut by the window's edge. */
  assert_inside_window ("the header", header);
  assert_inside_window ("the zoom button", GTK_WIDGET (window->zoom_button));
  assert_inside_window ("the view switcher", GTK_WIDGET (window->view_dropdown));
}

/* The entropy definition's caption lies over the canvas's top left
 * corner: the grid's pane badges (the active one in the accent colour)
 * start below it, whichever pane is active. */
static void
assert_caption_clear_of_badges (void)
{
  EsCanvas *canvas = es_window_get_canvas (window);
  graphene_rect_t caption;

  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window->definition_label)));
  g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (window->definition_label), GTK_WIDGET (canvas), &caption));
  for (int pane = 0; pane < canvas->n_panes; pane++)
    {
      es_canvas_set_active_pane (canvas, pane);
      wait_idle ();
      g_assert_cmpfloat (caption.origin.y + caption.size.height, <=, canvas->label_top);
    }
  es_canvas_set_active_pane (canvas, _es_window_first_grid_heatmap ());
}

/* No timing overlay covers the caption or a pane's label ("XY · z 12"):
 * where a pane is too small for one in any corner, it shows none. */
static void
assert_overlays_clear_of_labels (void)
{
  EsCanvas *canvas = es_window_get_canvas (window);
  graphene_rect_t caption, label, overlay;
  const char *text;
  gboolean has_caption = gtk_widget_get_visible (GTK_WIDGET (window->definition_label));

  if (has_caption)
    g_assert_true (gtk_widget_compute_bounds (GTK_WIDGET (window->definition_label), GTK_WIDGET (canvas), &caption));
  for (int pane = 0; pane < canvas->n_panes; pane++)
    {
      if (!es_canvas_get_overlay (canvas, pane, &overlay, &text))
        continue;
      if (has_caption)
        g_assert_false (graphene_rect_intersection (&overlay, &caption, NULL));
      for (int other = 0; other < canvas->n_panes; other++)
        if (_es_canvas_pane_label_bounds (canvas, other, &label))
          g_assert_false (graphene_rect_intersection (&overlay, &label, NULL));
    }
}

static void
test_layout_wide (void)
{
  g_autofree char *path = test_image ("images", "camera.png");

  open_path (path);
  g_settings_set_boolean (settings, "show-sidebar", TRUE);
  g_settings_set_boolean (settings, "show-timings", TRUE);
  resize (1360, 860);
  hover_middle ();
  g_assert_false (adw_flap_get_folded (window->flap));
  g_assert_true (adw_flap_get_reveal_flap (window->flap));
  assert_readable ();
  /* The panel is beside the image, the timings in it. */
  assert_apart ("side panel", GTK_WIDGET (window->sidebar), "canvas", canvas_viewport ());
  g_assert_true (gtk_widget_is_ancestor (GTK_WIDGET (window->timings), GTK_WIDGET (window->sidebar)));
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (window->timings)));

  /* In the grid the timings cover no pane, the caption no badge, the
   * overlays neither. */
  set_view ("grid");
  assert_readable ();
  assert_caption_clear_of_badges ();
  assert_overlays_clear_of_labels ();
  set_view ("entropy");
}

/* The sheet has slid in: the panel lies wholly inside the window. */
static gboolean
sheet_open (gpointer data)
{
  graphene_rect_t rect;

  return bounds (GTK_WIDGET (window->sidebar), &rect)
         && rect.origin.x + rect.size.width <= gtk_widget_get_width (GTK_WIDGET (window)) + 0.5;
}

static void
test_layout_narrow (void)
{
  ensure_image ();
  resize (640, 420);
  hover_middle ();
  /* The panel folds away, the setting stays as it was for wide windows. */
  g_assert_true (adw_flap_get_folded (window->flap));
  g_assert_false (adw_flap_get_reveal_flap (window->flap));
  g_assert_true (g_settings_get_boolean (settings, "show-sidebar"));
  assert_readable ();
  set_view ("grid");
  assert_caption_clear_of_badges ();
  assert_overlays_clear_of_labels ();
  set_view ("entropy");

  /* Asked for, it is a sheet with its own background over the image (modal:
   * a click beside it closes it), and the setting is left alone. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-sidebar", NULL));
  wait_until (sheet_open, NULL, NULL, NULL);
  g_assert_true (adw_flap_get_reveal_flap (window->flap));
  g_assert_true (adw_flap_get_modal (window->flap));
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (window->sidebar), "background"));
  assert_inside_window ("side panel", GTK_WIDGET (window->sidebar));
  g_assert_true (g_settings_get_boolean (settings, "show-sidebar"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-sidebar", NULL));
  wait_idle ();
  g_assert_false (adw_flap_get_reveal_flap (window->flap));

  /* Back to wide, the panel comes back beside the image. */
  resize (1240, 820);
  g_assert_false (adw_flap_get_folded (window->flap));
  g_assert_true (adw_flap_get_reveal_flap (window->flap));
}

/* The image stays under the pointer */

/* Where the image lies in the window: the canvas's allocation and zoom,
 * and the image's top left corner. */
typedef struct {
  graphene_rect_t canvas;
  double zoom;
  int ox, oy;
} ImagePlace;

static void
set_flag (gboolean *flag)
{
  *flag = TRUE;
}

/* Runs the main loop through one whole frame. A resize that the readout's
 * new lines queue is laid out at the frame clock's next frame, which a
 * loop with nothing pending (wait_idle) may not have reached yet on a
 * loaded machine. */
static void
wait_frame (void)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (window));
  gboolean painted = FALSE;
  gulong id = g_signal_connect_swapped (clock, "after-paint", G_CALLBACK (set_flag), &painted);

  gdk_frame_clock_request_phase (clock, GDK_FRAME_CLOCK_PHASE_LAYOUT);
  wait_for (&painted);
  g_signal_handler_disconnect (clock, id);
}

static void
image_place (ImagePlace *place)
{
  EsCanvas *canvas = es_window_get_canvas (window);
  double pw, ph;

  wait_idle ();
  wait_frame ();
  wait_idle ();
  pw = gtk_widget_get_width (GTK_WIDGET (canvas));
  ph = gtk_widget_get_height (GTK_WIDGET (canvas));
  g_assert_true (bounds (GTK_WIDGET (canvas), &place->canvas));
  place->zoom = es_canvas_get_zoom (canvas);
  /* Centred in the canvas (a single view, smaller than the canvas). */
  place->ox = (int) round ((pw - canvas->image_width * place->zoom) / 2);
  place->oy = (int) round ((ph - canvas->image_height * place->zoom) / 2);
}

static void
assert_same_place (const char *what, const ImagePlace *a, const ImagePlace *b)
{
  if (!graphene_rect_equal (&a->canvas, &b->canvas) || a->zoom != b->zoom || a->ox != b->ox || a->oy != b->oy)
    g_error ("%s moved the image: canvas %g,%g %g×%g zoom %g at %d,%d, then %g,%g %g×%g zoom %g at %d,%d", what,
             a->canvas.origin.x, a->canvas.origin.y, a->canvas.size.width, a->canvas.size.height, a->zoom, a->ox, a->oy,
             b->canvas.origin.x, b->canvas.origin.y, b->canvas.size.width, b->canvas.size.height, b->zoom, b->ox,
             b->oy);
}

/* In a 640×420 window with a tool open, the canvas keeps a usable height
 * and every button of the palette can be scrolled into view. */
static void
assert_tools_usable (void)
{
  EsTools *tools = es_window_get_tools (window);
  GtkWidget *palette = es_tools_get_palette (tools);
  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (palette));
  double reach = gtk_widget_get_height (palette) + gtk_adjustment_get_upper (adjustment)
                 - gtk_adjustment_get_page_size (adjustment) - gtk_adjustment_get_value (adjustment);
  graphene_rect_t rect;

  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (es_window_get_canvas (window))), >=,
                   gtk_widget_get_height (GTK_WIDGET (window)) / 2);
  for (int tool = 0; tool < ES_N_TOOLS; tool++)
    {
      g_assert_true (gtk_widget_compute_bounds (tools->tool_buttons[tool], palette, &rect));
      g_assert_cmpfloat (rect.origin.y + rect.size.height, <=, reach + 0.5);
    }
}

/* At 640×420 a tool's results fit the panel whole, once it has some (a
 * shape from the canvas's middle): the line profile's axis, the
 * inspector's lower cells and the rectangle's histogram and caption were
 * scrolled out of sight. The page's least height for the panel's width is
 * what its scroller must show; its adjustment follows only at the next
 * frame. */
static void
assert_panel_whole (const char *tool)
{
  EsTools *tools = es_window_get_tools (window);
  GtkWidget *canvas = GTK_WIDGET (es_window_get_canvas (window));
  double x = gtk_widget_get_width (canvas) / 2.0, y = gtk_widget_get_height (canvas) / 2.0;
  int needed;

  /* The pointer's drag would pan: it has no results. */
  if (strcmp (tool, "pointer") != 0)
    {
      es_tools_press (tools, x - 30, y - 20);
      es_tools_motion (tools, x, y);
      es_tools_release (tools, x + 30, y + 20);
      wait_idle ();
    }
  gtk_widget_measure (tools->panel_stack, GTK_ORIENTATION_VERTICAL, gtk_widget_get_width (tools->panel_scroller),
                      &needed, NULL, NULL, NULL);
  if (needed > gtk_widget_get_height (tools->panel_scroller))
    g_error ("%s: the panel scrolls, %d px in %d", tool, needed, gtk_widget_get_height (tools->panel_scroller));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "tools.clear", NULL));
}

/* Choosing a tool (its results panel), its results, the readout's lines
 * coming and going: the image under the pointer stays where it was, at
 * the screen's size and at the smallest. A fit keeps its zoom while a
 * button is held, and fits the new size once it is released. */
static void
test_image_stays (void)
{
  static const char *const tools[] = { "line", "rectangle", "inspect", "swipe", "pointer" };
  static const int sizes[][2] = { { 1360, 860 }, { 640, 420 } };
  EsCanvas *canvas;
  ImagePlace before, after;

  ensure_image ();
  canvas = es_window_get_canvas (window);
  set_view ("entropy");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-fit", NULL));
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      resize (sizes[s][0], sizes[s][1]);
      g_assert_true (es_canvas_get_fit (canvas));
      image_place (&before);
      for (guint t = 0; t < G_N_ELEMENTS (tools); t++)
        {
          g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "tools.tool", "s", tools[t]));
          image_place (&after);
          assert_same_place (tools[t], &before, &after);
          if (sizes[s][1] == 420)
            assert_tools_usable ();
          if (sizes[s][1] == 420)
            assert_panel_whole (tools[t]);
        }
      /* The pointer out of the image and back, in the grid's longer
       * readout: once it has wrapped, it keeps its lines. */
      set_view ("grid");
      hover_middle ();
      image_place (&before);
      g_signal_emit_by_name (canvas, "hover", -1, -1, -1);
      image_place (&after);
      assert_same_place ("the readout", &before, &after);
      hover_middle ();
      image_place (&after);
      assert_same_place ("the readout", &before, &after);
      set_view ("entropy");
    }

  /* Held, the fit keeps its zoom through a resize; released, it fits. */
  resize (1360, 860);
  image_place (&before);
  es_canvas_hold_fit (canvas, TRUE);
  resize (1000, 640);
  image_place (&after);
  g_assert_cmpfloat (after.zoom, ==, before.zoom);
  g_assert_true (es_canvas_get_fit (canvas));
  es_canvas_hold_fit (canvas, FALSE);
  image_place (&after);
  g_assert_cmpfloat (after.zoom, <, before.zoom);
  resize (1360, 860);
}

/* Keys and the wheel */

static GtkEventController *
find_controller (GtkWidget *widget, GType type, GtkPropagationPhase phase)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GtkEventController) controller = g_list_model_get_item (controllers, i);

      if (G_TYPE_CHECK_INSTANCE_TYPE (controller, type)
          && gtk_event_controller_get_propagation_phase (controller) == phase)
        return controller;
    }
  return NULL;
}

static gboolean
focus_in_side_panel (void)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (window));

  return focus && gtk_widget_is_ancestor (focus, GTK_WIDGET (window->sidebar));
}

/* Right ×5 then Down ×3 on the canvas pan it and change nothing else: the
 * canvas takes them, and the arrow focus moves that GTK makes when nobody
 * takes them never enter the side panel either. */
static void
test_arrow_keys (void)
{
  EsCanvas *canvas = es_window_get_canvas (window);
  GtkEventController *keys = find_controller (GTK_WIDGET (canvas), GTK_TYPE_EVENT_CONTROLLER_KEY, GTK_PHASE_BUBBLE);
  GtkAdjustment *h = gtk_scrollable_get_hadjustment (GTK_SCROLLABLE (canvas));
  GtkAdjustment *v = gtk_scrollable_get_vadjustment (GTK_SCROLLABLE (canvas));
  const guint presses[] = { GDK_KEY_Right, GDK_KEY_Right, GDK_KEY_Right, GDK_KEY_Right,
                            GDK_KEY_Right, GDK_KEY_Down,  GDK_KEY_Down,  GDK_KEY_Down };
  const GtkDirectionType moves[] = { GTK_DIR_RIGHT, GTK_DIR_RIGHT, GTK_DIR_RIGHT, GTK_DIR_RIGHT,
                                     GTK_DIR_RIGHT, GTK_DIR_DOWN,  GTK_DIR_DOWN,  GTK_DIR_DOWN };
  int window_size = g_settings_get_int (settings, "window");
  guint64 generation;
  double h0, v0;

  ensure_image ();
  set_view ("entropy");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom", "d", 4.0));
  wait_idle ();
  generation = window->generation;
  gtk_widget_grab_focus (GTK_WIDGET (canvas));
  gtk_adjustment_set_value (h, (gtk_adjustment_get_upper (h) - gtk_adjustment_get_page_size (h)) / 2);
  gtk_adjustment_set_value (v, (gtk_adjustment_get_upper (v) - gtk_adjustment_get_page_size (v)) / 2);
  h0 = gtk_adjustment_get_value (h);
  v0 = gtk_adjustment_get_value (v);
  g_assert_nonnull (keys);
  for (guint i = 0; i < G_N_ELEMENTS (presses); i++)
    {
      gboolean handled = FALSE;

      g_signal_emit_by_name (keys, "key-pressed", presses[i], 0, (GdkModifierType) 0, &handled);
      g_assert_true (handled);
      g_assert_true (gtk_widget_has_focus (GTK_WIDGET (canvas)));
    }
  g_assert_cmpfloat (gtk_adjustment_get_value (h), >, h0);
  g_assert_cmpfloat (gtk_adjustment_get_value (v), >, v0);

  /* GTK's own arrow navigation, from the canvas and onwards. */
  for (guint i = 0; i < G_N_ELEMENTS (moves); i++)
    {
      gtk_widget_child_focus (GTK_WIDGET (window), moves[i]);
      g_assert_false (focus_in_side_panel ());
    }
  wait_idle ();
  g_assert_cmpint (g_settings_get_int (settings, "window"), ==, window_size);
  g_assert_cmpuint (window->generation, ==, generation);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.zoom-fit", NULL));
  wait_idle ();
}

/* A scroll event over widget as GTK delivers it to the widget's own
 * controllers: the capture phase first, then the bubble phase, until one
 * takes it. */
static gboolean
scroll_over (GtkWidget *widget, double dy)
{
  const GtkPropagationPhase phases[] = { GTK_PHASE_CAPTURE, GTK_PHASE_TARGET, GTK_PHASE_BUBBLE };
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint p = 0; p < G_N_ELEMENTS (phases); p++)
    for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
      {
        g_autoptr (GtkEventController) controller = g_list_model_get_item (controllers, i);
        gboolean handled = FALSE;

        if (!GTK_IS_EVENT_CONTROLLER_SCROLL (controller)
            || gtk_event_controller_get_propagation_phase (controller) != phases[p])
          continue;
        g_signal_emit_by_name (controller, "scroll", 0.0, dy, &handled);
        if (handled)
          return TRUE;
      }
  return FALSE;
}

static GtkWidget *
sidebar_child (const char *id)
{
  return GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (window->sidebar), ES_TYPE_SIDEBAR, id));
}

/* The wheel over the spin buttons and the Amount slider scrolls the panel. */
static void
test_wheel (void)
{
  const char *const controls[] = { "window_control", "levels_control", "amount_control" };
  GtkWidget *scroller;
  GtkAdjustment *panel;

  resize (1240, 620);
  scroller = gtk_widget_get_ancestor (sidebar_child ("window_control"), GTK_TYPE_SCROLLED_WINDOW);
  g_assert_nonnull (scroller);
  panel = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  for (guint i = 0; i < G_N_ELEMENTS (controls); i++)
    {
      GtkWidget *control = sidebar_child (controls[i]);
      GtkAdjustment *adjustment = GTK_IS_SPIN_BUTTON (control)
                                    ? gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (control))
                                    : gtk_range_get_adjustment (GTK_RANGE (control));
      double value = gtk_adjustment_get_value (adjustment);
      double scrolled = gtk_adjustment_get_value (panel);

      gtk_adjustment_set_value (panel, gtk_adjustment_get_upper (panel) / 3);
      scrolled = gtk_adjustment_get_value (panel);
      g_assert_true (scroll_over (control, 1.0));
      g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, value);
      if (gtk_adjustment_get_upper (panel) > gtk_adjustment_get_page_size (panel) + 1)
        g_assert_cmpfloat (gtk_adjustment_get_value (panel), !=, scrolled);
    }
  wait_idle ();
}

static gboolean
is_set (gpointer data)
{
  return *(char **) data != NULL;
}

static void
on_text_read (GObject *clipboard, GAsyncResult *result, gpointer data)
{
  *(char **) data = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (clipboard), result, NULL);
  if (*(char **) data == NULL)
    *(char **) data = g_strdup ("(not text)");
}

/* Ctrl+C (win.copy) in a text field copies its text, not the view. */
static void
test_copy_in_field (void)
{
  GtkWidget *spin = sidebar_child ("levels_control");
  GtkWidget *text = gtk_widget_get_first_child (spin);
  GdkClipboard *clipboard = gtk_widget_get_clipboard (GTK_WIDGET (window));
  g_autofree char *copied = NULL;

  ensure_image ();
  while (text && !GTK_IS_TEXT (text))
    text = gtk_widget_get_next_sibling (text);
  g_assert_nonnull (text);
  gdk_clipboard_set_text (clipboard, "before");
  gtk_widget_grab_focus (spin);
  g_assert_true (gtk_widget_has_focus (text));
  gtk_editable_select_region (GTK_EDITABLE (text), 0, -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.copy", NULL));
  wait_idle ();
  gdk_clipboard_read_text_async (clipboard, NULL, on_text_read, &copied);
  wait_until (is_set, &copied, NULL, NULL);
  g_assert_cmpstr (copied, ==, gtk_editable_get_text (GTK_EDITABLE (text)));
  gtk_widget_grab_focus (GTK_WIDGET (es_window_get_canvas (window)));
}

/* Actions and shortcuts */

static void
test_empty_state (void)
{
  g_assert_null (es_window_get_source (window));
  wait_idle ();
  g_assert_false (action_enabled (window, "win.export"));
  g_assert_false (action_enabled (window, "win.copy"));
  g_assert_false (action_enabled (window, "win.zoom-in"));
  g_assert_false (action_enabled (window, "win.image-info"));
  g_assert_true (action_enabled (window, "win.open"));
  g_assert_null (strstr (gtk_menu_button_get_label (window->zoom_button), "100"));
}

/* Two windows: a parameter changed in one recomputes that one only, and
 * becomes the default of the next window. */
static void
test_two_windows (void)
{
  g_autofree char *path = test_image ("images", "brick.png");
  g_autoptr (GFile) file = g_file_new_for_path (path);
  EsWindow *other = es_window_new (ADW_APPLICATION (application), app_settings);
  EsWindow *third;
  int size = g_settings_get_int (settings, "window") == 7 ? 9 : 7;
  guint64 generation;
  EsJob job;

  ensure_image ();
  gtk_window_present (GTK_WINDOW (other));
  es_window_open (other, file);
  wait_until (window_idle, other, NULL, NULL);
  generation = other->generation;
  es_window_get_view_job (other, ES_VIEW_ENTROPY, &job);
  g_assert_cmpint (job.window, !=, size);

  g_settings_set_int (settings, "window", size);
  wait_until (window_idle, other, NULL, NULL);
  g_assert_cmpint (es_window_get_layer (window, ES_VIEW_ENTROPY)->job.window, ==, size);
  g_assert_cmpuint (other->generation, ==, generation);
  es_window_get_view_job (other, ES_VIEW_ENTROPY, &job);
  g_assert_cmpint (job.window, !=, size);
  g_assert_cmpint (g_settings_get_int (app_settings, "window"), ==, size);

  third = es_window_new (ADW_APPLICATION (application), app_settings);
  es_window_get_view_job (third, ES_VIEW_ENTROPY, &job);
  g_assert_cmpint (job.window, ==, size);
  gtk_window_destroy (GTK_WINDOW (third));

  /* Ctrl+W closes a window: the built-in window.close. */
  {
    g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (application), "window.close");
    GtkWindow *weak = NULL;

    g_assert_true (g_strv_contains ((const char *const *) accels, "<Control>w"));
    g_set_weak_pointer (&weak, GTK_WINDOW (other));
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (other), "window.close", NULL));
    wait_until (window_idle, window, NULL, NULL);
    g_assert_null (weak);
  }
}

/* The header's main menu (the primary menu button) under widget. */
static GMenuModel *
main_menu_under (GtkWidget *widget)
{
  if (GTK_IS_MENU_BUTTON (widget) && gtk_menu_button_get_primary (GTK_MENU_BUTTON (widget)))
    return gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget));
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GMenuModel *menu = main_menu_under (child);

      if (menu)
        return menu;
    }
  return NULL;
}

/* Whether menu, its sections or its submenus hold an item for action. */
static gboolean
menu_has_action (GMenuModel *menu, const char *action)
{
  for (int i = 0; i < g_menu_model_get_n_items (menu); i++)
    {
      g_autofree char *item_action = NULL;
      const char *const links[] = { G_MENU_LINK_SECTION, G_MENU_LINK_SUBMENU };

      if (g_menu_model_get_item_attribute (menu, i, G_MENU_ATTRIBUTE_ACTION, "s", &item_action)
          && g_str_equal (item_action, action))
        return TRUE;
      for (guint l = 0; l < G_N_ELEMENTS (links); l++)
        {
          g_autoptr (GMenuModel) linked = g_menu_model_get_item_link (menu, i, links[l]);

          if (linked && menu_has_action (linked, action))
            return TRUE;
        }
    }
  return FALSE;
}

static void
test_shortcuts (void)
{
  GtkApplication *app = GTK_APPLICATION (application);
  const char *const expected[][2] = {
    { "win.fullscreen", "F11" },
    { "win.undo", "<Control>z" },
    { "win.redo", "<Shift><Control>z" },
    { "win.new-window", "<Control>n" },
  };
  GMenuModel *zoom_menu = gtk_menu_button_get_menu_model (window->zoom_button);
  guint accels_shown = 0;

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_auto (GStrv) accels = gtk_application_get_accels_for_action (app, expected[i][0]);

      g_test_message ("%s: %s", expected[i][0], accels[0]);
      g_assert_true (g_strv_contains ((const char *const *) accels, expected[i][1]));
    }
  /* The zoom menu names the keys people press, not the keypad's. */
  for (int s = 0; s < g_menu_model_get_n_items (zoom_menu); s++)
    {
      GMenuModel *section = g_menu_model_get_item_link (zoom_menu, s, G_MENU_LINK_SECTION);

      for (int i = 0; section && i < g_menu_model_get_n_items (section); i++)
        {
          g_autofree char *accel = NULL;

          if (g_menu_model_get_item_attribute (section, i, "accel", "s", &accel))
            {
              g_assert_null (strstr (accel, "KP"));
              accels_shown++;
            }
        }
      g_clear_object (&section);
    }
  g_assert_cmpuint (accels_shown, >=, 5);

  /* The README's promise: the main menu holds these, their keys shown beside them. */
  {
    GMenuModel *main_menu = main_menu_under (GTK_WIDGET (window));
    const char *const in_menu[] = { "win.new-window", "window.close", "win.fullscreen", "win.image-info" };

    g_assert_nonnull (main_menu);
    for (guint i = 0; i < G_N_ELEMENTS (in_menu); i++)
      {
        g_test_message ("main menu: %s", in_menu[i]);
        g_assert_true (menu_has_action (main_menu, in_menu[i]));
      }
  }

  /* Fullscreen is asked of the window manager (Xvfb has none to grant it). */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.fullscreen", NULL));
  wait_idle ();
  gtk_window_unfullscreen (GTK_WINDOW (window));
  wait_idle ();

  /* The style: the system's (dark where it has no say), light, dark. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "style", g_variant_new_string ("light"));
  g_assert_cmpint (adw_style_manager_get_color_scheme (adw_style_manager_get_default ()), ==,
                   ADW_COLOR_SCHEME_FORCE_LIGHT);
  g_action_group_activate_action (G_ACTION_GROUP (app), "style", g_variant_new_string ("system"));
  g_assert_cmpint (adw_style_manager_get_color_scheme (adw_style_manager_get_default ()), ==,
                   ADW_COLOR_SCHEME_PREFER_DARK);
}

/* Colormap and Reversed do nothing on gray views: they are greyed out there. */
static void
test_colour_rows (void)
{
  GtkWidget *colormap = sidebar_child ("colormap_row");
  GtkWidget *reversed = sidebar_child ("reversed_row");

  set_view ("original");
  g_assert_false (gtk_widget_get_sensitive (colormap));
  g_assert_false (gtk_widget_get_sensitive (reversed));
  set_view ("sharpened");
  g_assert_false (gtk_widget_get_sensitive (colormap));
  set_view ("grid");
  g_assert_true (gtk_widget_get_sensitive (colormap));
  set_view ("entropy");
  g_assert_true (gtk_widget_get_sensitive (colormap));
  g_assert_true (gtk_widget_get_sensitive (reversed));
}

/* A volume of `planes` planes of width × height, 8-bit, as a multi-page
 * TIFF; calibrated, as ImageJ writes one of 0.5 µm pixels, planes 2 µm apart. */
static char *
write_volume (int width, int height, int planes, gboolean calibrated)
{
  char *path = g_build_filename (tmpdir, "volume.tif", NULL);
  TIFF *tiff = TIFFOpen (path, "w");
  guint8 *row = g_malloc (width);

  g_assert_nonnull (tiff);
  for (int z = 0; z < planes; z++)
    {
      TIFFSetField (tiff, TIFFTAG_IMAGEWIDTH, width);
      TIFFSetField (tiff, TIFFTAG_IMAGELENGTH, height);
      TIFFSetField (tiff, TIFFTAG_BITSPERSAMPLE, 8);
      TIFFSetField (tiff, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tiff, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tiff, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      TIFFSetField (tiff, TIFFTAG_ROWSPERSTRIP, height);
      TIFFSetField (tiff, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
      TIFFSetField (tiff, TIFFTAG_PAGENUMBER, z, planes);
      if (calibrated)
        {
          g_autofree char *imagej = g_strdup_printf ("ImageJ=1.54f\nimages=%d\nslices=%d\nunit=micron\nspacing=2\n",
                                                     planes, planes);

          if (z == 0)
            TIFFSetField (tiff, TIFFTAG_IMAGEDESCRIPTION, imagej);
          TIFFSetField (tiff, TIFFTAG_XRESOLUTION, 2.0);
          TIFFSetField (tiff, TIFFTAG_YRESOLUTION, 2.0);
          TIFFSetField (tiff, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
        }
      for (int y = 0; y < height; y++)
        {
          for (int x = 0; x < width; x++)
            row[x] = (guint8) ((x * 7 + y * 13 + z * 29 + ((x * y * (z + 1)) % 17)) & 0xff);
          g_assert_cmpint (TIFFWriteScanline (tiff, row, y, 0), ==, 1);
        }
      g_assert_true (TIFFWriteDirectory (tiff));
    }
  TIFFClose (tiff);
  g_free (row);
  return path;
}

/* Presses a key through the window's own shortcuts (its class bindings). */
static gboolean
press_window_key (const char *trigger)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (window));

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GtkEventController) controller = g_list_model_get_item (controllers, i);

      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (controller)); j++)
        {
          g_autoptr (GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), j);
          g_autofree char *name = gtk_shortcut_trigger_to_string (gtk_shortcut_get_trigger (shortcut));

          if (g_str_equal (name, trigger))
            return gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0, GTK_WIDGET (window),
                                                 gtk_shortcut_get_arguments (shortcut));
        }
    }
  return FALSE;
}

/* A multi-page TIFF opens as a volume: the Z slider's range is its planes;
 * Page Down, Page Up, the slider and the orthogonal views change what is
 * drawn, the readout and the status bar, and never start a job. */
static void
test_volume (void)
{
  const int width = 40, height = 24, planes = 7;
  g_autofree char *path = write_volume (width, height, planes, FALSE);
  EsCanvas *canvas = es_window_get_canvas (window);
  EsLayer *entropy, *plane;
  int started;
  guint64 generation;

  set_view ("entropy");
  open_path (path);
  wait_idle ();
  g_assert_cmpint (es_source_planes (es_window_get_source (window)), ==, planes);
  g_assert_true (gtk_widget_get_visible (window->z_bar));
  g_assert_cmpfloat (gtk_adjustment_get_lower (window->z_adjustment), ==, 0);
  g_assert_cmpfloat (gtk_adjustment_get_upper (window->z_adjustment), ==, planes - 1);
  g_assert_cmpint (window->z, ==, planes / 2);
  g_assert_cmpstr (gtk_label_get_label (window->z_count_label), ==, "of 7");

  /* The plane drawn is the volume's result at z, computed once. */
  entropy = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_nonnull (entropy);
  g_assert_nonnull (entropy->volume);
  g_assert_cmpint (es_layer_width (entropy), ==, width);
  g_assert_cmpint (es_layer_height (entropy), ==, height);
  g_assert_true (entropy->result.values.pixels == es_image_voxel_row (&entropy->volume->result.values, planes / 2, 0));

  started = gate_get (&gate.started);
  generation = window->generation;
  window->hover_pane = 0;
  window->hover_x = 3;
  window->hover_y = 2;
  g_assert_true (press_window_key ("Page_Down"));
  wait_idle ();
  g_assert_cmpint (window->z, ==, planes / 2 + 1);
  g_assert_cmpfloat (gtk_adjustment_get_value (window->z_adjustment), ==, planes / 2 + 1);
  _es_window_update_position (window);
  g_assert_nonnull (strstr (gtk_label_get_label (window->position_label), "z     4"));
  plane = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_true (plane->result.values.pixels == es_image_voxel_row (&plane->volume->result.values, planes / 2 + 1, 0));
  g_assert_true (press_window_key ("Page_Up"));
  g_assert_true (press_window_key ("Page_Up"));
  wait_idle ();
  g_assert_cmpint (window->z, ==, planes / 2 - 1);
  /* The ends hold. */
  es_window_set_plane (window, planes + 5);
  g_assert_cmpint (window->z, ==, planes - 1);
  g_assert_true (press_window_key ("Page_Down"));
  g_assert_cmpint (window->z, ==, planes - 1);

  /* Orthogonal views: XY, then YZ (planes wide, height high) and XZ
   * (width wide, planes high) through the crosshair. */
  gtk_toggle_button_set_active (window->ortho_button, TRUE);
  wait_idle ();
  g_assert_cmpint (es_canvas_get_n_panes (canvas), ==, 3);
  g_assert_cmpint (es_layer_width (canvas->panes[0].layer), ==, width);
  g_assert_cmpint (es_layer_height (canvas->panes[0].layer), ==, height);
  g_assert_cmpint (es_layer_width (canvas->panes[1].layer), ==, planes);
  g_assert_cmpint (es_layer_height (canvas->panes[1].layer), ==, height);
  g_assert_cmpint (es_layer_width (canvas->panes[2].layer), ==, width);
  g_assert_cmpint (es_layer_height (canvas->panes[2].layer), ==, planes);
  /* The YZ slice's column z is plane z's column cross_x. */
  for (int z = 0; z < planes; z++)
    for (int y = 0; y < height; y++)
      g_assert_cmpfloat (
        es_layer_value (canvas->panes[1].layer, z, y), ==,
        ((const float *) es_image_voxel_row (&canvas->panes[0].layer->volume->result.values, z, y))[window->cross_x]);
  _es_canvas_emit_clicked (canvas, 2, 5, 1); /* on XZ: column 5, plane 1 */
  wait_idle ();
  g_assert_cmpint (window->cross_x, ==, 5);
  g_assert_cmpint (window->z, ==, 1);
  g_assert_cmpfloat (canvas->panes[0].cross_x, ==, 5);
  g_assert_cmpfloat (canvas->panes[2].cross_y, ==, 1);
  assert_overlays_clear_of_labels ();
  gtk_toggle_button_set_active (window->ortho_button, FALSE);
  wait_idle ();
  g_assert_cmpint (es_canvas_get_n_panes (canvas), ==, 1);

  /* None of this ran a job. */
  g_assert_cmpint (gate_get (&gate.started), ==, started);
  g_assert_cmpuint (window->generation, ==, generation);

  /* In the smallest window the orthogonal views' panes are too short for
   * some overlays: those show none. */
  gtk_toggle_button_set_active (window->ortho_button, TRUE);
  resize (640, 420);
  assert_overlays_clear_of_labels ();
  resize (1240, 820);
  gtk_toggle_button_set_active (window->ortho_button, FALSE);
  wait_idle ();

  /* A 2-D image has no slider, and its layers are its own. */
  {
    g_autofree char *camera = test_image ("images", "camera.png");

    open_path (camera);
    wait_idle ();
    g_assert_false (gtk_widget_get_visible (window->z_bar));
    g_assert_null (es_window_get_layer (window, ES_VIEW_ENTROPY)->volume);
  }
}

static gboolean
definition_row_visible (const char *name)
{
  EsSidebarDefinition *definition = es_sidebar_get_definition (window->sidebar);

  return gtk_widget_get_visible (
    GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (definition), ES_TYPE_SIDEBAR_DEFINITION, name)));
}

/* A volume's 3-D window from the Definition section: the choice shows for
 * volumes only; Ball 2 runs one job whose values are es_run's 3-D ones;
 * changing the plane then computes nothing; the whole volume exports as
 * the multi-page TIFF that entroscope-cli writes, byte for byte. */
static void
test_volume_window_3d (void)
{
  const int width = 21, height = 13, planes = 6;
  g_autofree char *camera = test_image ("images", "camera.png");
  g_autofree char *path = write_volume (width, height, planes, TRUE);
  g_autofree char *exported = g_build_filename (tmpdir, "window-volume.tif", NULL);
  g_autofree char *by_cli = g_build_filename (tmpdir, "cli-volume.tif", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (exported);
  const char *cli = g_getenv ("ES_CLI");
  EsError error = { 0 };
  EsEngine *engine;
  EsImage expected = { 0 };
  EsLayer *entropy;
  gboolean done = FALSE;
  int started, status = -1;

  set_view ("entropy");
  g_settings_reset (settings, "volume-window");
  open_path (camera);
  wait_idle ();
  g_assert_false (definition_row_visible ("volume_window_row"));
  g_assert_false (definition_row_visible ("shape_3d_row"));
  g_assert_true (definition_row_visible ("shape_row"));

  open_path (path);
  wait_idle ();
  g_assert_true (definition_row_visible ("volume_window_row"));
  g_assert_true (definition_row_visible ("shape_3d_row"));
  g_assert_false (definition_row_visible ("shape_row"));
  g_settings_set_string (settings, "volume-window", "per-plane");
  wait_idle ();
  g_assert_false (definition_row_visible ("shape_3d_row"));
  g_assert_true (definition_row_visible ("shape_row"));
  g_settings_set_string (settings, "volume-window", "3d");
  wait_idle ();

  /* Ball 2: one job, over the whole volume. */
  started = gate_get (&gate.started);
  g_settings_set_int (settings, "ball-radius", 2);
  g_settings_set_string (settings, "shape-3d", "ball");
  wait_idle ();
  g_assert_true (definition_row_visible ("ball_radius_row"));
  g_assert_false (definition_row_visible ("box_planes_row"));
  g_assert_cmpint (gate_get (&gate.started), ==, started + 1);
  entropy = es_window_get_layer (window, ES_VIEW_ENTROPY)->volume;
  g_assert_cmpint (entropy->job.definition.shape, ==, ES_SHAPE_BALL);
  g_assert_cmpint (entropy->job.definition.radius, ==, 2);
  g_assert_cmpint (es_image_planes (&entropy->result.values), ==, planes);
  engine = es_engine_new (ES_BACKEND_CPU, &error);
  g_assert_nonnull (engine);
  g_assert_true (es_run (engine, &entropy->job, &es_window_get_source (window)->image, &expected, NULL, &error));
  g_assert_cmpint (es_image_planes (&expected), ==, planes);
  for (int i = 0; i < 5; i++)
    {
      int x = (i * 7) % width, y = (i * 5) % height, z = (i * 3 + 1) % planes;

      g_assert_cmpfloat (((const float *) es_image_voxel_row (&entropy->result.values, z, y))[x], ==,
                         ((const float *) es_image_voxel_row (&expected, z, y))[x]);
    }
  es_image_clear (&expected);
  es_engine_free (engine);

  /* Another plane only redraws. */
  es_window_set_plane (window, 0);
  es_window_set_plane (window, planes - 1);
  wait_idle ();
  g_assert_cmpint (gate_get (&gate.started), ==, started + 1);
  g_assert_true (es_window_get_layer (window, ES_VIEW_ENTROPY)->volume == entropy);

  /* Every plane, as entroscope-cli entropy --ball 2 writes it. */
  es_window_export_volume_async (window, file, NULL, on_exported, &done);
  wait_for (&done);
  wait_idle ();
  if (cli == NULL)
    {
      g_test_skip ("ES_CLI is not set");
      return;
    }
  {
    const char *argv[] = { cli, "entropy", "--ball", "2", path, "-o", by_cli, NULL };

    g_assert_true (
      g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &status, NULL));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
  }
  assert_same_files (exported, by_cli);
  {
    TIFF *tiff = TIFFOpen (exported, "r");

    g_assert_nonnull (tiff);
    g_assert_cmpint (TIFFNumberOfDirectories (tiff), ==, planes);
    TIFFClose (tiff);
  }
  /* The voxel's size, its planes' spacing too, reads back from the export. */
  {
    EsImage back = { 0 };
    double voxel[3];

    g_assert_true (es_load_file (exported, 16, &back, &error));
    g_assert_true (es_image_meta_pixel_size (&back.meta, &voxel[0], &voxel[1], &voxel[2]));
    g_assert_cmpfloat_with_epsilon (voxel[0], 0.5, 1e-9);
    g_assert_cmpfloat_with_epsilon (voxel[2], 2, 1e-9);
    g_assert_cmpstr (es_image_meta_length_symbol (&back.meta), ==, "µm");
    es_image_clear (&back);
  }
  g_settings_reset (settings, "shape-3d");
  g_settings_reset (settings, "ball-radius");
}

int
main (int argc, char **argv)
{
  int status;

  ui_test_setup (&argc, &argv);
  /* Folding and revealing happen at once, not over a transition. */
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  g_test_add_func ("/ui-window/empty-state", test_empty_state);
  g_test_add_func ("/ui-window/layout-wide", test_layout_wide);
  g_test_add_func ("/ui-window/layout-narrow", test_layout_narrow);
  g_test_add_func ("/ui-window/image-stays", test_image_stays);
  g_test_add_func ("/ui-window/arrow-keys", test_arrow_keys);
  g_test_add_func ("/ui-window/wheel", test_wheel);
  g_test_add_func ("/ui-window/copy-in-field", test_copy_in_field);
  g_test_add_func ("/ui-window/two-windows", test_two_windows);
  g_test_add_func ("/ui-window/shortcuts", test_shortcuts);
  g_test_add_func ("/ui-window/colour-rows", test_colour_rows);
  g_test_add_func ("/ui-window/volume", test_volume);
  g_test_add_func ("/ui-window/volume-window-3d", test_volume_window_3d);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
