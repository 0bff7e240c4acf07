/* SPDX-License-Identifier: MIT */
/* ENTROSCOPE_DEBUG=timing: a timing log on stderr and a main-loop stall watchdog. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* True when ENTROSCOPE_DEBUG names "timing" (or "all"). */
gboolean es_debug_timing (void);
/* Writes one line to stderr, prefixed with the time since start, when timing is on. */
void es_debug_log (const char *format, ...) G_GNUC_PRINTF (1, 2);
/* Logs every main-loop stall longer than 50 ms (a high-priority 10 ms tick
 * that arrives late), and a summary when stopped. No-op without timing. */
void es_debug_watch_main_loop (void);
void es_debug_unwatch_main_loop (void);

G_END_DECLS
