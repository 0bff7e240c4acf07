/* SPDX-License-Identifier: MIT */
/* What GTK's renderer takes to paint a frame of a window that does nothing
 * else: a 1600×1000 window whose one child, a drawing area, changes colour
 * every 100 ms and paints it with one cairo_paint. The child fills the
 * window less MARGIN pixels at its top and left, so MARGIN 0 damages the
 * whole window and MARGIN 1 all but a strip of one pixel. Prints the
 * paint phase's minimum, median and maximum over 40 frames (the first four
 * left out).
 *   usage: paint-floor MARGIN   (docs/performance/paint-floor.sh builds and runs it) */
#include <gtk/gtk.h>
#include <stdlib.h>

#define FRAMES 40
#define SKIPPED 4

static GtkWidget *area;
static gint64 paint_started;
static int frame, colour;
static double paint_ms[FRAMES];

static void
draw (GtkDrawingArea *drawing_area, cairo_t *cr, int width, int height, gpointer data)
{
  cairo_set_source_rgb (cr, colour & 1, (colour >> 1) & 1, 0.5);
  cairo_paint (cr);
}

/* Connected after GTK's own handlers: the paint phase is what lies between
 * the end of before-paint and the end of paint (no layout is asked for). */
static void
on_before_paint (GdkFrameClock *clock, gpointer data)
{
  paint_started = g_get_monotonic_time ();
}

static void
on_paint (GdkFrameClock *clock, gpointer data)
{
  if (frame >= SKIPPED && frame < SKIPPED + FRAMES)
    paint_ms[frame - SKIPPED] = (g_get_monotonic_time () - paint_started) / 1000.0;
  frame++;
}

static int
compare_ms (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static gboolean
next_colour (gpointer data)
{
  if (frame >= SKIPPED + FRAMES)
    {
      qsort (paint_ms, FRAMES, sizeof *paint_ms, compare_ms);
      printf ("margin %s: paint of a frame, %d frames: min %.1f, median %.1f, max %.1f ms\n", (const char *) data,
              FRAMES, paint_ms[0], paint_ms[FRAMES / 2], paint_ms[FRAMES - 1]);
      exit (0);
    }
  colour++;
  gtk_widget_queue_draw (area);
  return G_SOURCE_CONTINUE;
}

static void
on_realize (GtkWidget *widget, gpointer data)
{
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);

  g_signal_connect_after (clock, "before-paint", G_CALLBACK (on_before_paint), NULL);
  g_signal_connect_after (clock, "paint", G_CALLBACK (on_paint), NULL);
}

static void
activate (GtkApplication *app, gpointer data)
{
  const int margin = atoi (data);
  GtkWidget *window = gtk_application_window_new (app);

  gtk_window_set_default_size (GTK_WINDOW (window), 1600, 1000);
  area = gtk_drawing_area_new ();
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), draw, NULL, NULL);
  gtk_widget_set_margin_start (area, margin);
  gtk_widget_set_margin_top (area, margin);
  gtk_window_set_child (GTK_WINDOW (window), area);
  g_signal_connect (area, "realize", G_CALLBACK (on_realize), NULL);
  gtk_window_present (GTK_WINDOW (window));
  g_timeout_add (100, next_colour, data);
}

int
main (int argc, char **argv)
{
  GtkApplication *app = gtk_application_new (NULL, G_APPLICATION_NON_UNIQUE);
  const char *margin = argc > 1 ? argv[1] : "0";

  g_signal_connect (app, "activate", G_CALLBACK (activate), (gpointer) margin);
  return g_application_run (G_APPLICATION (app), 1, argv);
}
