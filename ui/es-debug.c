/* SPDX-License-Identifier: MIT */
/* The timing log and the main-loop stall watchdog behind ENTROSCOPE_DEBUG=timing. */
#include "es-debug.h"

#include <stdio.h>

#define TICK_MS 10
#define STALL_MS 50

static gint64 start_time;
static guint watchdog_id;
static gint64 last_tick;
static guint n_stalls;
static double longest_stall;

gboolean
es_debug_timing (void)
{
  static gsize initialized;
  static gboolean timing;

  if (g_once_init_enter (&initialized))
    {
      const GDebugKey keys[] = { { "timing", 1 } };
      const char *value = g_getenv ("ENTROSCOPE_DEBUG");

      timing = value && g_parse_debug_string (value, keys, G_N_ELEMENTS (keys)) != 0;
      start_time = g_get_monotonic_time ();
      g_once_init_leave (&initialized, 1);
    }
  return timing;
}

void
es_debug_log (const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list args;

  if (!es_debug_timing ())
    return;
  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  fprintf (stderr, "entroscope[timing] %9.1f ms  %s\n", (g_get_monotonic_time () - start_time) / 1000.0, message);
}

static gboolean
watchdog_tick (gpointer data)
{
  gint64 now = g_get_monotonic_time ();
  double late = (now - last_tick) / 1000.0 - TICK_MS;

  if (late > STALL_MS)
    {
      n_stalls++;
      longest_stall = MAX (longest_stall, late);
      es_debug_log ("main loop stalled for %.1f ms", late);
    }
  last_tick = now;
  return G_SOURCE_CONTINUE;
}

void
es_debug_watch_main_loop (void)
{
  if (!es_debug_timing () || watchdog_id)
    return;
  last_tick = g_get_monotonic_time ();
  watchdog_id = g_timeout_add_full (G_PRIORITY_HIGH, TICK_MS, watchdog_tick, NULL, NULL);
  es_debug_log ("watching the main loop for stalls over %d ms", STALL_MS);
}

void
es_debug_unwatch_main_loop (void)
{
  if (!watchdog_id)
    return;
  g_clear_handle_id (&watchdog_id, g_source_remove);
  es_debug_log ("main loop: %u stalls over %d ms, longest %.1f ms", n_stalls, STALL_MS, longest_stall);
}
