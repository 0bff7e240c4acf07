/* SPDX-License-Identifier: MIT */
/* The labelled colorbar beside an exported heatmap, drawn with a built-in 5x7 font. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "es-colorbar-layout.h"

/* A 5x7 bitmap font: each glyph is 7 rows, bit 4 the leftmost column.
 * Digits and the signs for the labels, lowercase letters for the units;
 * anything else is drawn as a space. */
static const char font_chars[] = "0123456789.-+abcdefghijklmnopqrstuvwxyz";
static const uint8_t font_glyphs[][7] = {
  { 0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E }, /* 0 */
  { 0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E }, /* 1 */
  { 0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F }, /* 2 */
  { 0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E }, /* 3 */
  { 0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02 }, /* 4 */
  { 0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E }, /* 5 */
  { 0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E }, /* 6 */
  { 0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 }, /* 7 */
  { 0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E }, /* 8 */
  { 0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C }, /* 9 */
  { 0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C }, /* . */
  { 0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00 }, /* - */
  { 0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00 }, /* + */
  { 0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F }, /* a */
  { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E }, /* b */
  { 0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E }, /* c */
  { 0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F }, /* d */
  { 0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E }, /* e */
  { 0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08 }, /* f */
  { 0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E }, /* g */
  { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11 }, /* h */
  { 0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E }, /* i */
  { 0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0C }, /* j */
  { 0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12 }, /* k */
  { 0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E }, /* l */
  { 0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11 }, /* m */
  { 0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11 }, /* n */
  { 0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E }, /* o */
  { 0x00, 0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10 }, /* p */
  { 0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x01 }, /* q */
  { 0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10 }, /* r */
  { 0x00, 0x00, 0x0F, 0x10, 0x0E, 0x01, 0x1E }, /* s */
  { 0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06 }, /* t */
  { 0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D }, /* u */
  { 0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04 }, /* v */
  { 0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A }, /* w */
  { 0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11 }, /* x */
  { 0x00, 0x11, 0x11, 0x11, 0x0F, 0x01, 0x0E }, /* y */
  { 0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F }, /* z */
};

#define GLYPH_W 5
#define GLYPH_H 7
#define ADVANCE 6

static const uint8_t background[3] = { 250, 250, 250 };
static const uint8_t ink[3] = { 32, 32, 32 };
static const uint8_t frame[3] = { 96, 96, 96 };

static const uint8_t *
glyph (char c)
{
  const char *p = c ? strchr (font_chars, c) : NULL;
  return p ? font_glyphs[p - font_chars] : NULL;
}

static int
text_width (const char *text, int s)
{
  size_t n = strlen (text);
  return n ? (int) n * ADVANCE * s - s : 0;
}

static void
fill (uint8_t *out, int x0, int x1, const uint8_t color[3])
{
  for (int x = x0; x < x1; x++)
    memcpy (out + 3 * (size_t) x, color, 3);
}

/* One pixel row (0..6) of a text drawn left to right from x. */
static void
draw_text_row (uint8_t *out, int x, const char *text, int row, int s)
{
  for (int i = 0; text[i]; i++)
    {
      const uint8_t *g = glyph (text[i]);
      if (!g)
        continue;
      for (int c = 0; c < GLYPH_W; c++)
        if (g[row] & (0x10 >> c))
          fill (out, x + (i * ADVANCE + c) * s, x + (i * ADVANCE + c + 1) * s, ink);
    }
}

/* Labels with enough decimals to tell neighbouring ticks apart: two for a
 * step between 0.1 and 1 ("0.69", "1.39"), none for steps of 10 or more. */
static int
label_decimals (double step)
{
  int d;

  if (!(step > 0) || !isfinite (step))
    return 2;
  d = 1 + (int) ceil (-log10 (step));
  return d < 0 ? 0 : d > 6 ? 6 : d;
}

static void
format_label (char *buf, size_t size, double v, int decimals)
{
  snprintf (buf, size, "%.*f", decimals, v);
  /* A tiny negative value rounds to "-0.00"; the sign would only confuse. */
  if (buf[0] == '-' && strspn (buf + 1, "0.") == strlen (buf + 1))
    memmove (buf, buf + 1, strlen (buf));
}

void
es_colorbar_layout_init (EsColorbarLayout *bar, int image_width, int image_height, const EsColorScale *scale,
                         const EsValueInfo *info)
{
  double unit_scale = info && info->unit_scale != 0 ? info->unit_scale : 1.0;
  double offset = info ? info->value_offset : 0;
  int s, label_width = 0, decimals;

  memset (bar, 0, sizeof *bar);
  /* Taller images get a larger font so that the labels stay readable when
   * the image is shown scaled down to a screen. */
  s = image_height / 400;
  s = s < 1 ? 1 : s > 4 ? 4 : s;

  bar->scale = s;
  bar->image_width = image_width;
  bar->image_height = image_height;
  bar->margin = 6 * s;
  bar->bar_x = bar->margin + image_width + 8 * s;
  bar->bar_top = bar->margin;
  bar->bar_height = image_height > 64 * s ? image_height : 64 * s;
  bar->table = es_colormap_table (scale->map);
  bar->flip = scale->reversed ? 255 : 0;
  bar->solid = !(scale->hi > scale->lo);
  bar->n_ticks = bar->solid ? 1 : ES_COLORBAR_LAYOUT_TICKS;

  decimals = label_decimals ((scale->hi - scale->lo) * unit_scale / (ES_COLORBAR_LAYOUT_TICKS - 1));
  for (int k = 0; k < bar->n_ticks; k++)
    {
      int last = ES_COLORBAR_LAYOUT_TICKS - 1;
      double v = scale->lo + (scale->hi - scale->lo) * k / last;
      int w;

      /* Tick 0 (lo) at the bottom, the last (hi) at the top. */
      bar->tick_y[k] = bar->bar_top + ((last - k) * (bar->bar_height - 1) + last / 2) / last;
      format_label (bar->labels[k], sizeof bar->labels[k], offset != 0 ? offset + v * unit_scale : v * unit_scale,
                    decimals);
      w = text_width (bar->labels[k], s);
      label_width = w > label_width ? w : label_width;
    }

  if (info && info->units)
    snprintf (bar->units, sizeof bar->units, "%s", info->units);
  bar->label_x = bar->bar_x + 12 * s + 1 + 3 * s + 2 * s;
  bar->units_x = bar->label_x + label_width + 6 * s;
  bar->units_bottom = bar->bar_top + (bar->bar_height + text_width (bar->units, s)) / 2;
  bar->width = (bar->units[0] ? bar->units_x + GLYPH_H * s : bar->label_x + label_width) + bar->margin;
  bar->height = bar->bar_height + 2 * bar->margin;
}

void
es_colorbar_layout_row (const EsColorbarLayout *bar, int y, const uint8_t *image_row, uint8_t *out)
{
  const int s = bar->scale;
  const int bar_w = 12 * s;
  const int bar_bottom = bar->bar_top + bar->bar_height; /* exclusive */

  fill (out, 0, bar->width, background);
  if (image_row)
    memcpy (out + 3 * (size_t) bar->margin, image_row, 3 * (size_t) bar->image_width);

  /* The bar, framed by a one-pixel line; hi at the top. */
  if (y == bar->bar_top - 1 || y == bar_bottom)
    fill (out, bar->bar_x - 1, bar->bar_x + bar_w + 1, frame);
  else if (y >= bar->bar_top && y < bar_bottom)
    {
      int span = bar->bar_height - 1;
      int index = bar->solid ? 0 : ((bar_bottom - 1 - y) * 510 + span) / (2 * span);
      fill (out, bar->bar_x - 1, bar->bar_x, frame);
      fill (out, bar->bar_x, bar->bar_x + bar_w, bar->table[index ^ bar->flip]);
      fill (out, bar->bar_x + bar_w, bar->bar_x + bar_w + 1, frame);
    }

  for (int k = 0; k < bar->n_ticks; k++)
    {
      int tick_top = bar->tick_y[k] - s / 2;
      int text_top = bar->tick_y[k] - GLYPH_H * s / 2;
      if (y >= tick_top && y < tick_top + s)
        fill (out, bar->bar_x + bar_w + 1, bar->bar_x + bar_w + 1 + 3 * s, ink);
      if (y >= text_top && y < text_top + GLYPH_H * s)
        draw_text_row (out, bar->label_x, bar->labels[k], (y - text_top) / s, s);
    }

  /* The units, turned a quarter left to read upwards beside the labels: a
   * glyph's top row becomes its left column and its left column its bottom. */
  if (y <= bar->units_bottom && bar->units[0])
    {
      int u = (bar->units_bottom - y) / s;
      int i = u / ADVANCE, c = u % ADVANCE;
      const uint8_t *g = i < (int) strlen (bar->units) && c < GLYPH_W ? glyph (bar->units[i]) : NULL;
      for (int r = 0; g && r < GLYPH_H; r++)
        if (g[r] & (0x10 >> c))
          fill (out, bar->units_x + r * s, bar->units_x + (r + 1) * s, ink);
    }
}
