/* SPDX-License-Identifier: MIT */
/* EsWindow: the layout at every size (the side panel beside the canvas, or a sheet over it when narrow),
 * the error banner, the actions that need an image, zoom, fullscreen and the arrow keys on the canvas. */
#include "es-window-private.h"

/* The side panel */

gboolean
_es_window_get_panel_shown (EsWindow *self)
{
  return self->flap && adw_flap_get_reveal_flap (self->flap);
}

/* Wide, the panel follows "show-sidebar". Narrow (folded), it is a sheet
 * over the canvas that starts closed and leaves the setting alone; the
 * status bar then gives the readout the whole line. */
static void
apply_panel (EsWindow *self)
{
  gboolean folded = adw_flap_get_folded (self->flap);

  adw_flap_set_reveal_flap (self->flap, !folded && g_settings_get_boolean (self->settings, "show-sidebar"));
  gtk_widget_set_visible (GTK_WIDGET (self->info_label), !folded);
}

void
_es_window_set_panel_shown (EsWindow *self, gboolean shown)
{
  if (self->flap == NULL)
    return;
  if (adw_flap_get_folded (self->flap))
    adw_flap_set_reveal_flap (self->flap, shown);
  else
    g_settings_set_boolean (self->settings, "show-sidebar", shown);
}

static void
on_folded (AdwFlap *flap, GParamSpec *pspec, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  apply_panel (self);
}

static void
on_reveal (AdwFlap *flap, GParamSpec *pspec, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  g_object_notify (G_OBJECT (self), "show-sidebar");
  /* The panel's histograms need their views, and only while it is shown. */
  _es_window_schedule_update (self, adw_flap_get_reveal_flap (flap) ? "side panel shown" : "side panel hidden");
}

static void
on_show_sidebar (GSettings *settings, const char *key, EsWindow *self)
{
  g_assert (ES_IS_WINDOW (self));
  if (!adw_flap_get_folded (self->flap))
    apply_panel (self);
}

/* The error banner */

void
_es_window_show_error (EsWindow *self, const char *summary, const char *reason)
{
  g_autofree char *markup = g_markup_escape_text (summary, -1);
  AdwToast *toast;

  g_free (self->last_error);
  self->last_error = g_strdup_printf ("%s: %s", summary, reason);
  g_free (self->last_message);
  self->last_message = g_strdup (self->last_error);
  if (self->toast_overlay == NULL) /* disposed: a late export result */
    return;
  gtk_label_set_label (self->error_label, self->last_error);
  gtk_revealer_set_reveal_child (self->error_revealer, TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.dismiss-error", TRUE);
  /* The toast says what failed in a few words; the banner says why. */
  toast = adw_toast_new (markup);
  adw_toast_set_timeout (toast, 4);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

const char *
es_window_get_error (EsWindow *self)
{
  g_return_val_if_fail (ES_IS_WINDOW (self), NULL);
  return gtk_revealer_get_reveal_child (self->error_revealer) ? self->last_error : NULL;
}

void
_es_window_clear_error (EsWindow *self)
{
  gtk_revealer_set_reveal_child (self->error_revealer, FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.dismiss-error", FALSE);
  g_clear_pointer (&self->last_error, g_free);
}

static void
dismiss_error_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  _es_window_clear_error (ES_WINDOW (widget));
}

/* Actions that need an image */

void
_es_window_update_actions (EsWindow *self)
{
  static const char *const image_actions[] = {
    "win.compare", "win.image-info", "win.zoom-in", "win.zoom-out", "win.zoom-fit", "win.zoom",
  };
  EsView views[ES_CANVAS_MAX_PANES];
  gboolean has_image = self->source != NULL;
  gboolean has_view = has_image && es_window_get_layer (self, es_window_get_active_view (self));
  gboolean heatmap = FALSE;
  int n = _es_window_get_views (self, views);

  if (self->sidebar == NULL) /* disposed */
    return;
  for (guint i = 0; i < G_N_ELEMENTS (image_actions); i++)
    gtk_widget_action_set_enabled (GTK_WIDGET (self), image_actions[i], has_image);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export", has_view);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.copy", has_view);
  gtk_widget_set_sensitive (GTK_WIDGET (self->zoom_button), has_image);
  _es_window_update_zoom_label (self);
  for (int i = 0; i < n; i++)
    heatmap |= es_view_is_heatmap (views[i]);
  es_sidebar_set_colors_sensitive (self->sidebar, heatmap);
}

/* Zoom, fullscreen, arrow keys */

static void
zoom_action (GtkWidget *widget, const char *action_name, GVariant *parameter)
{
  EsWindow *self = ES_WINDOW (widget);

  g_assert (ES_IS_WINDOW (self));
  if (g_str_equal (action_name, "win.zoom-in"))
    es_canvas_zoom_in (self->canvas);
  else if (g_str_equal (action_name, "win.zoom-out"))
    es_canvas_zoom_out (self->canvas);
  else if (g_str_equal (action_name, "win.zoom-fit"))
    es_canvas_zoom_fit (self->canvas);
  else
    es_canvas_set_zoom (self->canvas, g_variant_get_double (parameter));
}

/* Arrow keys on the canvas pan it; they never move the focus away (into
 * the side panel, where the next arrow would change a parameter). */
static gboolean
on_canvas_key (GtkEventControllerKey *controller, guint keyval, guint keycode, GdkModifierType state, EsWindow *self)
{
  GtkScrollable *scrollable = GTK_SCROLLABLE (self->canvas);
  GtkAdjustment *adjustment;
  double direction;

  g_assert (ES_IS_WINDOW (self));
  if (state & (GDK_CONTROL_MASK | GDK_ALT_MASK))
    return FALSE;
  switch (keyval)
    {
    case GDK_KEY_Left:
    case GDK_KEY_KP_Left: adjustment = gtk_scrollable_get_hadjustment (scrollable), direction = -1; break;
    case GDK_KEY_Right:
    case GDK_KEY_KP_Right: adjustment = gtk_scrollable_get_hadjustment (scrollable), direction = 1; break;
    case GDK_KEY_Up:
    case GDK_KEY_KP_Up: adjustment = gtk_scrollable_get_vadjustment (scrollable), direction = -1; break;
    case GDK_KEY_Down:
    case GDK_KEY_KP_Down: adjustment = gtk_scrollable_get_vadjustment (scrollable), direction = 1; break;
    default: return FALSE;
    }
  /* A tenth of the view per press, a whole view with Shift. */
  if (adjustment)
    gtk_adjustment_set_value (adjustment, gtk_adjustment_get_value (adjustment)
                                            + direction * gtk_adjustment_get_page_size (adjustment)
                                                * (state & GDK_SHIFT_MASK ? 0.9 : 0.1));
  return TRUE;
}

void
_es_window_class_layout_init (EsWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_install_action (widget_class, "win.dismiss-error", NULL, dismiss_error_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom", "d", zoom_action);
  gtk_widget_class_install_property_action (widget_class, "win.fullscreen", "fullscreened");

  /* Plain keys act only when no text field has the focus (they bubble up
   * from the focus widget); their Ctrl forms are application accelerators.
   * The zoom menu names the plain keys (its "accel" attributes). */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_0, 0, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, 0, "win.zoom", "d", 1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_1, 0, "win.zoom", "d", 1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_2, 0, "win.zoom", "d", 2.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_2, 0, "win.zoom", "d", 2.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "win.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "win.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "win.zoom-out", NULL);
}

void
_es_window_layout_init (EsWindow *self)
{
  GtkEventController *keys = gtk_event_controller_key_new ();

  g_signal_connect (keys, "key-pressed", G_CALLBACK (on_canvas_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self->canvas), keys);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.dismiss-error", FALSE);
}

void
_es_window_layout_bind (EsWindow *self)
{
  g_signal_connect_object (self->flap, "notify::folded", G_CALLBACK (on_folded), self, 0);
  g_signal_connect_object (self->flap, "notify::reveal-flap", G_CALLBACK (on_reveal), self, 0);
  g_signal_connect_object (self->settings, "changed::show-sidebar", G_CALLBACK (on_show_sidebar), self, 0);
  apply_panel (self);
}
