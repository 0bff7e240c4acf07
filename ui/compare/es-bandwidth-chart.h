/* SPDX-License-Identifier: MIT */
/* EsBandwidthChart: every variant's achieved bandwidth on a log axis, against the copy floor and the datasheet peak. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ES_TYPE_BANDWIDTH_CHART (es_bandwidth_chart_get_type ())
G_DECLARE_FINAL_TYPE (EsBandwidthChart, es_bandwidth_chart, ES, BANDWIDTH_CHART, GtkWidget)

/* One bar. */
typedef struct {
  const char *name; /* the variant's id, written left of its bar (copied) */
  /* Modelled bytes over the median kernel time, GB/s (EsMetrics.achieved_gbs);
   * NAN: not timed; 0: no model. */
  double gbs;
  gboolean is_default;
} EsBandwidthBar;

GtkWidget *es_bandwidth_chart_new (void);
/* The bars, in the order given, and the reference lines: the copy floor's
 * bandwidth (NAN or <= 0: none) and the datasheet peak (<= 0: none). The
 * accessible description lists every figure. */
void es_bandwidth_chart_set (EsBandwidthChart *self, const EsBandwidthBar *bars, int n_bars, double floor_gbs,
                             double datasheet_gbs);
/* The accessible description es_bandwidth_chart_set gave it: every figure, in words. */
const char *es_bandwidth_chart_get_description (EsBandwidthChart *self);
/* "1210 GB/s", "96.4 GB/s": the precision the chart and the cards write bandwidths with. */
char *es_bandwidth_format (double gbs);

G_END_DECLS
