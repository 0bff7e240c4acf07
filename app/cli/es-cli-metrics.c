/* SPDX-License-Identifier: MIT */
/* The --metrics columns: why a run took its time, from its EsTiming.metrics. */
#include "es-cli-metrics.h"

#include <math.h>

#include "es-cli-report.h"
#include "es-intl.h"

/* "-" for a figure the backend does not have (0, or not finite). */
static const char *
figure (char *text, size_t size, const char *format, double value)
{
  if (isfinite (value) && value > 0)
    snprintf (text, size, format, value);
  else
    snprintf (text, size, "-");
  return text;
}

static const EsKernelInfo *
main_kernel (const EsMetrics *m)
{
  return m->n_kernels > 0 && m->main_kernel >= 0 && m->main_kernel < m->n_kernels ? &m->kernels[m->main_kernel] : NULL;
}

void
es_cli_metrics_heading (FILE *out)
{
  fprintf (out, "%8s %8s %9s %8s %6s %6s %9s %5s %4s %7s %6s %-14s %-8s %7s %7s", "rd B/px", "wr B/px", "model MB",
           "ach GB/s", "%copy", "%peak", "shr B/px", "occ%", "regs", "smem B", "lmem B", "launch", "host", "up GB/s",
           "dn GB/s");
}

void
es_cli_metrics_columns (FILE *out, const EsMetrics *m)
{
  const EsKernelInfo *k = main_kernel (m);
  const double pixels = m->pixels > 0 ? m->pixels : 1;
  char rd[32], wr[32], mb[32], gbs[32], copy[32], peak[32], shared[32], occ[32], regs[32], smem[32], lmem[32];
  char launch[32], up[32], down[32];

  figure (rd, sizeof rd, "%.2f", m->model.read_bytes / pixels);
  figure (wr, sizeof wr, "%.2f", m->model.write_bytes / pixels);
  figure (mb, sizeof mb, "%.3f", (m->model.read_bytes + m->model.write_bytes) / 1e6);
  figure (gbs, sizeof gbs, "%.1f", m->achieved_gbs);
  figure (copy, sizeof copy, "%.0f", 100 * m->copy_share);
  figure (peak, sizeof peak, "%.0f", 100 * m->datasheet_share);
  figure (shared, sizeof shared, "%.1f", m->model.shared_bytes / pixels);
  figure (occ, sizeof occ, "%.0f", k != NULL ? 100 * k->occupancy : 0);
  figure (regs, sizeof regs, "%.0f", k != NULL ? k->registers : 0);
  /* A kernel's shared memory and spills may be 0 for real: "0", not "-". */
  snprintf (smem, sizeof smem, k != NULL ? "%zu" : "-", k != NULL ? k->static_shared + k->dynamic_shared : 0);
  snprintf (lmem, sizeof lmem, k != NULL ? "%zu" : "-", k != NULL ? k->local_bytes : 0);
  if (k != NULL)
    snprintf (launch, sizeof launch, "%u×%u", k->grid[0] * k->grid[1] * k->grid[2],
              k->block[0] * k->block[1] * k->block[2]);
  else
    snprintf (launch, sizeof launch, "-");
  figure (up, sizeof up, "%.1f", m->upload_gbs);
  figure (down, sizeof down, "%.1f", m->download_gbs);
  /* "×" is two bytes and one column: pad by what the terminal shows. */
  fprintf (out, "%8s %8s %9s %8s %6s %6s %9s %5s %4s %7s %6s %-*s %-8s %7s %7s", rd, wr, mb, gbs, copy, peak, shared,
           occ, regs, smem, lmem, k != NULL ? 15 : 14, launch, es_host_memory_name (m->host_memory), up, down);
}

void
es_cli_metrics_kernels (FILE *out, const EsMetrics *m)
{

  for (int i = 0; i < m->n_kernels; i++)
    {
      const EsKernelInfo *k = &m->kernels[i];
      fprintf (out,
               "  %s %s: grid %u×%u×%u, block %u×%u×%u, %d registers, %zu + %zu B shared, %zu B local, "
               "%d blocks/SM (occupancy %.0f%%)\n",
               i == m->main_kernel ? "*" : "-", k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
               k->block[2], k->registers, k->static_shared, k->dynamic_shared, k->local_bytes, k->blocks_per_sm,
               100 * k->occupancy);
    }
}

void
es_cli_metrics_counters (FILE *out, const EsMetrics *m)
{
  static bool unavailable_said;
  const EsCounters *c = &m->counters;

  if (!c->measured)
    {
      if (m->counters_note[0] != '\0' && !unavailable_said)
        fprintf (out, _ ("  hardware counters: not available: %s; the model alone is shown\n"), _ (m->counters_note));
      unavailable_said |= m->counters_note[0] != '\0';
      return;
    }
  fprintf (out,
           _ ("  measured by the hardware: DRAM %.2f MB read, %.2f MB written (model %.2f, %.2f), "
              "L2 hit rate %.1f %%, %.0f shared-memory bank conflicts, achieved occupancy %.1f %%, "
              "local memory %.3f MB, %d launches\n"),
           c->dram_read_bytes / 1e6, c->dram_write_bytes / 1e6, m->model.read_bytes / 1e6, m->model.write_bytes / 1e6,
           100 * c->l2_hit_rate, c->shared_bank_conflicts, 100 * c->achieved_occupancy, c->local_bytes / 1e6,
           c->launches);
  for (int i = 0; i < m->n_kernels; i++)
    {
      const EsCounters *k = &m->kernels[i].counters;
      if (k->measured)
        fprintf (out,
                 _ ("    %s: DRAM %.2f MB read, %.2f MB written, L2 hit rate %.1f %%, %.0f bank conflicts, "
                    "achieved occupancy %.1f %%, local memory %.3f MB, %d launches\n"),
                 m->kernels[i].name, k->dram_read_bytes / 1e6, k->dram_write_bytes / 1e6, 100 * k->l2_hit_rate,
                 k->shared_bank_conflicts, 100 * k->achieved_occupancy, k->local_bytes / 1e6, k->launches);
    }
}

void
es_cli_metrics_measure_peak (EsEngine *engine)
{
  EsError error;

  es_error_clear (&error);
  if (!es_engine_measure_peak (engine, &error))
    es_cli_report_error ("metrics: the peak bandwidth", &error);
}
