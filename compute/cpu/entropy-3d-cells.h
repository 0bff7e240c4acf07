/* SPDX-License-Identifier: MIT */
/* The band and row functions of entropy-3d.c for one width of binned cell,
 * included once a width: CELL is the cell type (uint16_t where every bin
 * and SKIP fit, uint32_t else), CELLS (name) the function's name for it.
 * Narrow cells halve the rows a window reads: a ball of radius 3 over a
 * 256-voxel row reads 29 rows, 30 KiB of 4-byte cells, about the whole L1. */

static CELL *
CELLS (band_row) (const Band *band, const Volume *v, int z, int y)
{
  return (CELL *) band->rows
         + ((size_t) (z - band->s0) * (size_t) (band->r1 - band->r0 + 1) + (size_t) (y - band->r0))
             * (size_t) v->padded;
}

/* Source row y of plane z, binned and padded in x. The row's own cells are
 * a table look-up each; only the padding asks the border rule. */
static void
CELLS (bin_row) (const Volume *v, int z, int y, CELL *dst)
{
  const EsImage *in = v->in;
  const EsImage *mask = v->job->definition.mask;
  const void *row = es_image_voxel_row (in, z, y);
  const uint8_t *mask_row = mask != NULL ? es_image_voxel_row (mask, z, y) : NULL;
  const uint32_t *lut = v->lut;
  EsBorder border = v->job->definition.border;
  int w = in->width;
  CELL *inside = dst + v->hw;

  /* The padding, left and right: what the border rule puts there. */
  for (int side = 0; side < 2; side++)
    for (int p = side == 0 ? -v->hw : w; p < (side == 0 ? 0 : w + v->hw); p++)
      {
        int x = es_border_index (p, w, border);

        if (x < 0)
          inside[p] = (CELL) v->outside;
        else if (mask_row != NULL && mask_row[x] == 0)
          inside[p] = (CELL) v->skip;
        else
          inside[p] = (CELL) lut[in->format == ES_FORMAT_U8 ? ((const uint8_t *) row)[x] : ((const uint16_t *) row)[x]];
      }
  /* The row's own cells: a look-up each. */
  if (in->format == ES_FORMAT_U8)
    for (int x = 0; x < w; x++)
      inside[x] = (CELL) lut[((const uint8_t *) row)[x]];
  else
    for (int x = 0; x < w; x++)
      inside[x] = (CELL) lut[((const uint16_t *) row)[x]];
  if (mask_row != NULL)
    for (int x = 0; x < w; x++)
      inside[x] = mask_row[x] != 0 ? inside[x] : (CELL) v->skip;
}

/* The spans of output row y of plane z: first[i] at span i's first cell
 * for x = 0, last[i] at its last. */
static void
CELLS (span_rows) (const Volume *v, const Band *band, int z, int y, const CELL **first, const CELL **last)
{
  const EsImage *in = v->in;

  for (int i = 0; i < v->n_spans; i++)
    {
      const EsSpan3 *s = &v->spans[i];
      int zs = es_border_index (z + s->dz, es_image_planes (in), v->job->definition.border);
      int ys = es_border_index (y + s->dy, in->height, v->job->definition.border);
      const CELL *row = zs < 0 || ys < 0 ? (const CELL *) band->virtual_row : CELLS (band_row) (band, v, zs, ys);

      /* Padded index of the span's first cell for x = 0 is x0 + hw. */
      first[i] = row + s->x0 + v->hw;
      last[i] = row + s->x1 + v->hw;
    }
}

/* Adds (sign 1) or removes (sign −1) the cells of the window at x. */
static inline void
CELLS (chain_window) (Chain *c, const Volume *v, const CELL *const *first, const CELL *const *last, int x, int sign)
{
  for (int i = 0; i < v->n_spans; i++)
    for (const CELL *p = first[i] + x; p <= last[i] + x; p++)
      c->sum += sign > 0 ? v->delta[c->hist[*p]++] : -v->delta[--c->hist[*p]];
}

/* Moves the window from x − 1 to x. */
static inline void
CELLS (chain_step) (Chain *c, const int64_t *delta, const CELL *const *first, const CELL *const *last, int n_spans,
                    int x)
{
  /* Two sums, so that a late table load delays only half the chain. */
  int64_t in = 0, out = 0;

  for (int i = 0; i < n_spans; i++)
    {
      out += delta[--c->hist[first[i][x - 1]]];
      in += delta[c->hist[last[i][x]]++];
    }
  c->sum += in - out;
}

/* One output row: plane z, row y. `hists` holds two histograms of bins + 1
 * counts, all zero on entry and on return; `first` and `last` hold a pointer
 * a span. A wide row is two chains, its halves, stepped together: each step
 * is a chain of updates through memory (the same bin entering and leaving
 * waits for the store before it), and two independent ones keep more of the
 * core busy. Sums are exact integers, so the halves give the bits of one
 * chain. */
static void
CELLS (entropy_row) (const Volume *v, const Band *band, int z, int y, uint32_t *const hists[2], const CELL **first,
                     const CELL **last)
{
  const EsImage *in = v->in;
  const EsImage *mask = v->job->definition.mask;
  const uint8_t *mask_row = mask != NULL ? es_image_voxel_row (mask, z, y) : NULL;
  float *dst = es_image_voxel_row (v->out, z, y);
  const int64_t *delta = v->delta;
  const int n_spans = v->n_spans;
  const int w = in->width;
  /* Chain a covers [0, half), chain b [half, w), one more when w is odd. */
  const int half = w >= TWO_CHAINS_MIN_WIDTH ? w / 2 : w;
  Chain a = { hists[0], 0 }, b = { hists[1], 0 };

  CELLS (span_rows) (v, band, z, y, first, last);
  CELLS (chain_window) (&a, v, first, last, 0, 1);
  chain_write (&a, v, mask_row, dst, 0);
  if (half < w)
    {
      CELLS (chain_window) (&b, v, first, last, half, 1);
      chain_write (&b, v, mask_row, dst, half);
    }
  for (int x = 1; x < half; x++)
    {
      const int xb = half + x;

      if (xb < w)
        {
          /* Both chains, their updates interleaved; chain b's cells lie
           * `half` after chain a's, so one pointer a span end serves both. */
          int64_t change_a = 0, change_b = 0;

          for (int i = 0; i < n_spans; i++)
            {
              const CELL *leave = first[i] + (x - 1), *enter = last[i] + x;

              change_a -= delta[--a.hist[leave[0]]];
              change_b -= delta[--b.hist[leave[half]]];
              change_a += delta[a.hist[enter[0]]++];
              change_b += delta[b.hist[enter[half]]++];
            }
          a.sum += change_a;
          b.sum += change_b;
          chain_write (&b, v, mask_row, dst, xb);
        }
      else
        CELLS (chain_step) (&a, delta, first, last, n_spans, x);
      chain_write (&a, v, mask_row, dst, x);
    }
  if (2 * half < w)
    {
      CELLS (chain_step) (&b, delta, first, last, n_spans, w - 1);
      chain_write (&b, v, mask_row, dst, w - 1);
    }
  /* Empty the histograms by taking the last windows out again: as cheap as
   * filling them, and independent of the number of bins. */
  CELLS (chain_window) (&a, v, first, last, half - 1, -1);
  if (half < w)
    CELLS (chain_window) (&b, v, first, last, w - 1, -1);
}
