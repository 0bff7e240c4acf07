/* SPDX-License-Identifier: MIT */
/* UI tests of the timing overlays (GTest, under Xvfb): shown and hidden with the timings card (Ctrl+T),
 * one a pane in the grid, out of the way of the image, the pointer and a tool's shape, in Copy View,
 * and in the export with overlays, which leaves every other pixel and every other export as it was. */
#include "test-ui-common.h"

#include "es-tools-private.h"

static EsCanvas *canvas;

/* Frames go by: an overlay that must move does so in the frame after the one that showed why. */
static void
wait_frames (void)
{
  gint64 until = g_get_monotonic_time () + 250 * G_TIME_SPAN_MILLISECOND;

  while (g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE);
  wait_idle ();
}

static gboolean
overlay_bounds (int pane, graphene_rect_t *bounds, const char **text)
{
  return es_canvas_get_overlay (canvas, pane, bounds, text);
}

/* Whether any point of rect (canvas coordinates, every 2 px) shows a pixel of the image. */
static gboolean
covers_image (const graphene_rect_t *rect)
{
  for (double y = rect->origin.y; y <= rect->origin.y + rect->size.height; y += 2)
    for (double x = rect->origin.x; x <= rect->origin.x + rect->size.width; x += 2)
      {
        int pane;
        double ix, iy;

        if (es_canvas_widget_to_image (canvas, x, y, &pane, &ix, &iy) && ix >= 0 && iy >= 0
            && ix < es_layer_width (canvas->panes[pane].layer) && iy < es_layer_height (canvas->panes[pane].layer))
          return TRUE;
      }
  return FALSE;
}

static void
toggle_timings (void)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-timings", NULL));
  wait_frames ();
}

/* Ctrl+T shows and hides the card and the overlay together; the overlay says what the card says. */
static void
test_toggle (void)
{
  EsLayer *layer;
  graphene_rect_t bounds;
  const char *text;
  g_autofree char *expected = NULL, *backend = NULL;

  /* Room around the sample at its size (the docked tools panel takes
   * height), so that the overlay has a margin to sit in. */
  gtk_window_set_default_size (GTK_WINDOW (window), 1600, 1000);
  ensure_image ();
  set_view ("entropy");
  wait_frames ();
  g_assert_true (g_settings_get_boolean (settings, "show-timings"));
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  g_assert_true (overlay_bounds (0, &bounds, &text));
  expected = _es_window_overlay_text (window, layer);
  g_assert_cmpstr (text, ==, expected);
  backend = g_ascii_strup (es_backend_name (layer->result.timing.backend), -1);
  g_assert_true (g_str_has_prefix (text, backend));
  g_assert_nonnull (strstr (text, "\nkernel "));
  g_assert_nonnull (strstr (text, " · end to end "));
  /* The bandwidth that the Timings card gives, beside the kernel's time. */
  g_assert_cmpfloat (layer->result.timing.metrics.achieved_gbs, >, 0);
  g_assert_nonnull (strstr (text, " GB/s · end to end "));
  /* A label under the canvas, so that screen readers read it. */
  g_assert_true (GTK_IS_LABEL (canvas->overlay_labels[0]));
  g_assert_true (gtk_widget_get_parent (canvas->overlay_labels[0]) == GTK_WIDGET (canvas));
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (canvas->overlay_labels[0])), ==, text);
  g_assert_true (gtk_widget_get_child_visible (canvas->overlay_labels[0]));
  /* The sample fits the canvas with room around it: the overlay stays in that margin. */
  g_assert_false (covers_image (&bounds));
  g_assert_true (gtk_widget_get_visible (window->timings_group));

  toggle_timings ();
  g_assert_false (g_settings_get_boolean (settings, "show-timings"));
  g_assert_false (overlay_bounds (0, &bounds, &text));
  g_assert_false (gtk_widget_get_child_visible (canvas->overlay_labels[0]));
  g_assert_false (gtk_widget_get_visible (window->timings_group));

  toggle_timings ();
  g_assert_true (overlay_bounds (0, &bounds, &text));
  g_assert_true (gtk_widget_get_visible (window->timings_group));
}

/* Every pane of the grid has its own overlay, with its own view's figures, inside the pane. */
static void
test_grid (void)
{
  int n;
  double pane_width, pane_height;
  gboolean original = FALSE;

  ensure_image ();
  set_view ("grid");
  wait_frames ();
  n = es_canvas_get_n_panes (canvas);
  g_assert_cmpint (n, >, 1);
  pane_width = (gtk_widget_get_width (GTK_WIDGET (canvas)) - 4) / 2.0;
  pane_height = (gtk_widget_get_height (GTK_WIDGET (canvas)) - 4) / 2.0;
  for (int i = 0; i < n; i++)
    {
      graphene_rect_t bounds, pane;
      const char *text;
      g_autofree char *expected = _es_window_overlay_text (window, canvas->panes[i].layer);

      g_assert_true (overlay_bounds (i, &bounds, &text));
      g_assert_cmpstr (text, ==, expected);
      original |= canvas->panes[i].layer->view == ES_VIEW_ORIGINAL;
      graphene_rect_init (&pane, (i % 2) * (pane_width + 4), (i / 2) * (pane_height + 4), pane_width, pane_height);
      g_assert_true (graphene_rect_contains_rect (&pane, &bounds));
    }
  g_assert_true (original);
  set_view ("entropy");
}

/* The pointer comes to the overlay: it goes to another corner. */
static void
test_pointer (void)
{
  graphene_rect_t before, after;
  graphene_point_t centre;
  const char *text;

  ensure_image ();
  set_view ("entropy");
  wait_frames ();
  g_assert_true (overlay_bounds (0, &before, &text));
  graphene_rect_get_center (&before, &centre);
  canvas->pointer_inside = TRUE;
  canvas->pointer_x = centre.x;
  canvas->pointer_y = centre.y;
  _es_canvas_pointer_moved (canvas);
  wait_frames ();
  g_assert_true (overlay_bounds (0, &after, &text));
  g_assert_false (graphene_rect_contains_point (&after, &centre));
  g_assert_false (graphene_rect_intersection (&before, &after, NULL));
  canvas->pointer_inside = FALSE;
  _es_canvas_pointer_moved (canvas);
  wait_frames ();
}

/* The entropy view zoomed in, so that the image fills the pane, and its overlay's bounds, which lie
 * over the image. */
static void
zoom_in_on_entropy (graphene_rect_t *overlay)
{
  const char *text;

  ensure_image ();
  set_view ("entropy");
  es_canvas_set_zoom (canvas, 4);
  wait_frames ();
  g_assert_true (overlay_bounds (0, overlay, &text));
  g_assert_true (covers_image (overlay));
}

/* Back to the pointer tool and the fitted image. */
static void
end_tool (EsTools *tools)
{
  es_tools_set_tool (tools, ES_TOOL_POINTER);
  es_canvas_zoom_fit (canvas);
  wait_frames ();
}

/* Zoomed in, the image fills the pane and the overlay lies over it: a rectangle drawn there sends
 * it to a corner away from the rectangle. */
static void
test_tool_shape (void)
{
  EsTools *tools = es_window_get_tools (window);
  graphene_rect_t before, after, shape;
  const char *text;

  zoom_in_on_entropy (&before);
  es_tools_set_tool (tools, ES_TOOL_RECT);
  graphene_rect_inset_r (&before, -4, -4, &shape);
  es_tools_press (tools, shape.origin.x, shape.origin.y);
  es_tools_motion (tools, shape.origin.x + shape.size.width / 2, shape.origin.y + shape.size.height / 2);
  es_tools_release (tools, shape.origin.x + shape.size.width, shape.origin.y + shape.size.height);
  wait_frames ();
  g_assert_true (overlay_bounds (0, &after, &text));
  g_assert_false (graphene_rect_intersection (&after, &shape, NULL));
  g_action_group_activate_action (G_ACTION_GROUP (tools->actions), "clear", NULL);
  end_tool (tools);
}

/* Swipe's side names, at the foot of the split, send the overlay to another corner as a tool's shape
 * does: the overlay had covered them. */
static void
test_swipe_labels (void)
{
  EsTools *tools = es_window_get_tools (window);
  graphene_rect_t before, after;
  const char *text;

  zoom_in_on_entropy (&before);
  /* At the foot of the pane, where the names are drawn. */
  g_assert_cmpfloat (before.origin.y, >, gtk_widget_get_height (GTK_WIDGET (canvas)) / 2.0);
  es_tools_set_tool (tools, ES_TOOL_SWIPE);
  /* The left side's name ends 6 px left of the split: over the overlay's right end. */
  tools->swipe_split = (before.origin.x + before.size.width + 6) / gtk_widget_get_width (GTK_WIDGET (canvas));
  gtk_widget_queue_draw (GTK_WIDGET (canvas));
  wait_frames ();
  g_assert_true (overlay_bounds (0, &after, &text));
  g_assert_false (graphene_rect_intersection (&before, &after, NULL));
  end_tool (tools);
}

/* The clipboard's texture as packed RGB. */
static guint8 *
copied_rgb (int *width, int *height)
{
  GdkClipboard *clipboard = gtk_widget_get_clipboard (GTK_WIDGET (window));
  GValue value = G_VALUE_INIT;
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *bgra = NULL;
  GdkTexture *texture;
  guint8 *rgb;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.copy", NULL));
  wait_until (message_starts, "Copied the view", NULL, NULL);
  g_value_init (&value, GDK_TYPE_TEXTURE);
  g_assert_true (gdk_content_provider_get_value (gdk_clipboard_get_content (clipboard), &value, &error));
  g_assert_no_error (error);
  texture = g_value_get_object (&value);
  *width = gdk_texture_get_width (texture);
  *height = gdk_texture_get_height (texture);
  bgra = g_malloc ((size_t) *width * *height * 4);
  gdk_texture_download (texture, bgra, (size_t) *width * 4);
  rgb = g_malloc ((size_t) *width * *height * 3);
  for (size_t i = 0; i < (size_t) *width * *height; i++)
    {
      guint32 pixel = ((guint32 *) bgra)[i];

      rgb[3 * i] = pixel >> 16;
      rgb[3 * i + 1] = pixel >> 8;
      rgb[3 * i + 2] = pixel;
    }
  g_value_unset (&value);
  _es_window_show_message (window, "");
  return rgb;
}

/* Where two pictures of the same size differ: the box around every differing pixel of bpp bytes
 * (FALSE: none). */
static gboolean
difference (const guint8 *a, const guint8 *b, int width, int height, size_t stride, int bpp, int *box)
{
  box[0] = width, box[1] = height, box[2] = -1, box[3] = -1;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      if (memcmp (a + y * stride + bpp * x, b + y * stride + bpp * x, bpp) != 0)
        {
          box[0] = MIN (box[0], x), box[1] = MIN (box[1], y);
          box[2] = MAX (box[2], x), box[3] = MAX (box[3], y);
        }
  return box[2] >= 0;
}

/* Copy View carries the overlay while it shows, in the bottom left corner, and is the rendering
 * of the layer pixel for pixel elsewhere, and everywhere while it is hidden. */
static void
test_copy (void)
{
  EsLayer *layer;
  EsDisplay display;
  EsColorScale scale;
  g_autoptr (GBytes) expected = NULL;
  g_autofree guint8 *with = NULL, *without = NULL;
  int width, height, box[4];
  gsize stride;

  ensure_image ();
  set_view ("entropy");
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  _es_window_get_display (window, &display);
  es_layer_display_scale (layer, &display, &scale);
  expected = es_layer_render_rgb (layer, &scale, &stride);

  with = copied_rgb (&width, &height);
  g_assert_cmpint (width, ==, es_layer_width (layer));
  g_assert_cmpint (height, ==, es_layer_height (layer));
  g_assert_true (difference (with, g_bytes_get_data (expected, NULL), width, height, stride, 3, box));
  g_test_message ("the overlay covers %d..%d × %d..%d", box[0], box[2], box[1], box[3]);
  g_assert_cmpint (box[0], <, width / 8);
  g_assert_cmpint (box[1], >, height / 2);

  toggle_timings ();
  without = copied_rgb (&width, &height);
  g_assert_false (difference (without, g_bytes_get_data (expected, NULL), width, height, stride, 3, box));
  toggle_timings ();
}

static void
load_rgb_png (const char *path, EsImage *image)
{
  EsError error = { 0 };

  g_assert_true (es_load_file (path, 0, image, &error));
  g_assert_cmpint (image->format, ==, ES_FORMAT_U8);
}

/* "Include overlays": a colormapped PNG gets the overlay over the image's bottom left corner and
 * nothing else changes; raw values and a PNG without the option stay the CLI's files. */
static void
test_export (void)
{
  g_autofree char *image = test_image ("images", "camera.png");
  g_autofree char *slide = g_build_filename (tmpdir, "slide.png", NULL);
  g_autofree char *plain = g_build_filename (tmpdir, "plain.png", NULL);
  g_autofree char *picture = g_build_filename (tmpdir, "picture.png", NULL);
  g_autofree char *raw = g_build_filename (tmpdir, "raw.png", NULL);
  g_autofree char *expected = NULL, *expected_raw = NULL;
  EsImage with = { 0 }, without = { 0 };
  EsHeatmapCanvas drawn;
  EsResult result;
  EsDisplay display;
  EsError error = { 0 };
  int box[4];

  open_path (image);
  set_test_settings ();
  expected = expected_export (image, ES_VIEW_ENTROPY, ES_EXPORT_PNG, TRUE);

  g_settings_set_boolean (settings, "export-overlays", FALSE);
  export_shown (plain, ES_EXPORT_PNG, TRUE);
  assert_same_files (plain, expected);
  /* The picture in memory, written with nothing over it, is that file. */
  _es_window_get_display (window, &display);
  es_layer_export_result (es_window_get_layer (window, ES_VIEW_ENTROPY), &display, &result);
  g_assert_true (es_heatmap_canvas_render (&result.values, &result.scale, TRUE, &result.info, &drawn, &error));
  g_assert_true (es_save_heatmap_canvas_png (picture, &drawn, &result.scale, &result.info, &error));
  free (drawn.rgb);
  assert_same_files (picture, expected);

  g_settings_set_boolean (settings, "export-overlays", TRUE);
  export_shown (slide, ES_EXPORT_PNG, TRUE);
  load_rgb_png (slide, &with);
  load_rgb_png (plain, &without);
  g_assert_cmpint (with.width, ==, without.width);
  g_assert_cmpint (with.height, ==, without.height);
  /* Gray through the luma: enough to see where the two differ. */
  g_assert_true (difference (with.pixels, without.pixels, with.width, with.height, with.stride, 1, box));
  g_test_message ("the overlay covers %d..%d × %d..%d", box[0], box[2], box[1], box[3]);
  g_assert_cmpint (box[0], >=, drawn.image_x);
  g_assert_cmpint (box[0], <, drawn.image_x + result.values.width / 8);
  g_assert_cmpint (box[1], >, drawn.image_y + result.values.height / 2);
  g_assert_cmpint (box[3], <, drawn.image_y + result.values.height);

  expected_raw = expected_export (image, ES_VIEW_ENTROPY, ES_EXPORT_RAW16, FALSE);
  export_shown (raw, ES_EXPORT_RAW16, FALSE);
  assert_same_files (raw, expected_raw);
  g_settings_set_boolean (settings, "export-overlays", FALSE);
  es_image_clear (&with);
  es_image_clear (&without);
}

/* The worker renders a pane's texture in bands on every core: the very pixels of the canvas's one
 * pass, zoomed out (a mip level, bilinear), at 1:1 and zoomed in (blocks), at odd origins. */
static void
test_render_bands (void)
{
  static const EsViewport viewports[] = {
    { 0.37, 13, -7, 301, 283 },
    { 0.5, 0, 0, 256, 256 },
    { 1, -3, 5, 517, 200 },
    { 3, -101, -77, 640, 401 },
  };
  EsLayer *layer;
  EsDisplay display;
  EsColorScale scale;

  ensure_image ();
  set_view ("entropy");
  layer = es_window_get_layer (window, ES_VIEW_ENTROPY);
  _es_window_get_display (window, &display);
  es_layer_display_scale (layer, &display, &scale);
  for (guint i = 0; i < G_N_ELEMENTS (viewports); i++)
    {
      EsRendering bands, one;
      int width, height, stride;

      g_assert_true (es_layer_render_viewport (layer, &scale, &viewports[i], TRUE, &bands));
      g_assert_true (es_layer_render_viewport (layer, &scale, &viewports[i], FALSE, &one));
      g_assert_true (es_rendering_matches (&bands, &viewports[i], &scale));
      width = cairo_image_surface_get_width (one.pixels.surface);
      height = cairo_image_surface_get_height (one.pixels.surface);
      g_assert_cmpint (cairo_image_surface_get_width (bands.pixels.surface), ==, width);
      g_assert_cmpint (cairo_image_surface_get_height (bands.pixels.surface), ==, height);
      stride = cairo_image_surface_get_stride (one.pixels.surface);
      g_assert_cmpint (cairo_image_surface_get_stride (bands.pixels.surface), ==, stride);
      g_assert_cmpmem (cairo_image_surface_get_data (bands.pixels.surface), (size_t) stride * height,
                       cairo_image_surface_get_data (one.pixels.surface), (size_t) stride * height);
      es_rendering_clear (&bands);
      es_rendering_clear (&one);
    }
}

int
main (int argc, char *argv[])
{
  int status;

  ui_test_setup (&argc, &argv);
  canvas = es_window_get_canvas (window);
  g_test_add_func ("/overlay/toggle", test_toggle);
  g_test_add_func ("/overlay/grid", test_grid);
  g_test_add_func ("/overlay/pointer", test_pointer);
  g_test_add_func ("/overlay/tool-shape", test_tool_shape);
  g_test_add_func ("/overlay/swipe-labels", test_swipe_labels);
  g_test_add_func ("/overlay/copy", test_copy);
  g_test_add_func ("/overlay/export", test_export);
  g_test_add_func ("/overlay/render-bands", test_render_bands);
  status = g_test_run ();
  ui_test_teardown ();
  return status;
}
