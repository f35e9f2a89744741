/* heatmap_png.c - `tierctl heatmap --png FILE`: the heatmap drawn with
 * cairo. Time runs across (oldest left, now at the right edge), addresses
 * down (lowest at the top, as the terminal prints them); a colour scale of
 * the access rate (log), and a strip with each bin's tier. */
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/plot.h"
#include "tierctl/heatmap.h"

/* Dark to bright (after matplotlib's "inferno"): rate level 0..1. */
static const double ramp[][3] = {
	{ 0.00, 0.00, 0.02 }, { 0.34, 0.06, 0.43 }, { 0.73, 0.21, 0.33 },
	{ 0.98, 0.56, 0.04 }, { 0.99, 1.00, 0.64 },
};

static void set_level(cairo_t *cr, double level)
{
	double x = level < 0 ? 0 : level * (double)(sizeof(ramp) / sizeof(ramp[0]) - 1);
	size_t i = (size_t)x;
	double f;

	if (i >= sizeof(ramp) / sizeof(ramp[0]) - 1)
		i = sizeof(ramp) / sizeof(ramp[0]) - 2;
	f = x - (double)i;
	cairo_set_source_rgb(cr, ramp[i][0] + f * (ramp[i + 1][0] - ramp[i][0]),
			     ramp[i][1] + f * (ramp[i + 1][1] - ramp[i][1]),
			     ramp[i][2] + f * (ramp[i + 1][2] - ramp[i][2]));
}

struct geometry {
	double left, top, cell_w, cell_h, plot_w, plot_h;
};

static void draw_cells(cairo_t *cr, const struct tierctl_heatmap *hm, const struct geometry *g)
{
	size_t b, k;

	for (b = 0; b < hm->nr_bins; b++)
		for (k = 0; k < hm->nr_slices; k++) {
			set_level(cr, tierctl_heat_level(hm, hm->rates[b * hm->nr_slices + k]));
			cairo_rectangle(cr, g->left + g->cell_w * (double)k, g->top + g->cell_h * (double)b,
					g->cell_w, g->cell_h);
			cairo_fill(cr);
		}
}

static void draw_axes(cairo_t *cr, const struct tierctl_heatmap *hm, const struct geometry *g)
{
	double slice_s = (double)hm->slice_ms / 1000, step_s, t;
	size_t b, every = hm->nr_bins / 16 + 1;
	char buf[48];

	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_rectangle(cr, g->left - 0.5, g->top - 0.5, g->plot_w + 1, g->plot_h + 1);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 10);
	/* Addresses: the first of every few bins. */
	for (b = 0; b < hm->nr_bins; b += every) {
		double y = g->top + g->cell_h * (double)b;

		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)hm->bins[b].start);
		tier_plot_text(cr, g->left - 6, y + 8, buf, 1);
		cairo_move_to(cr, g->left - 4, y);
		cairo_line_to(cr, g->left, y);
		cairo_stroke(cr);
	}
	/* Time: a tick every 10 s (5 s, 1 s on shorter spans), now = 0. */
	step_s = hm->last_s - hm->first_s > 30 ? 10 : hm->last_s - hm->first_s > 10 ? 5 : 1;
	for (t = ceil(hm->first_s / step_s) * step_s; t <= hm->last_s + 1e-9; t += step_s) {
		double x = g->left + (t - hm->first_s) / slice_s * g->cell_w;

		cairo_move_to(cr, x, g->top + g->plot_h);
		cairo_line_to(cr, x, g->top + g->plot_h + 4);
		cairo_stroke(cr);
		snprintf(buf, sizeof(buf), "%.0f", t);
		tier_plot_text(cr, x, g->top + g->plot_h + 16, buf, 0.5);
	}
	cairo_set_font_size(cr, 12);
	tier_plot_text(cr, g->left + g->plot_w / 2, g->top + g->plot_h + 36, "time (s, now = 0)", 0.5);
	cairo_save(cr);
	cairo_translate(cr, 16, g->top + g->plot_h / 2);
	cairo_rotate(cr, -M_PI / 2);
	tier_plot_text(cr, 0, 0, "address (managed ranges, gaps left out)", 0.5);
	cairo_restore(cr);
}

/* The tier strip right of the cells, and the colour scale beside it. */
static void draw_keys(cairo_t *cr, const struct tierctl_heatmap *hm, const struct geometry *g)
{
	double x = g->left + g->plot_w + 10, sx = x + 60, lo;
	bool seen[TIER_PLOT_TIER_COLOURS + 1] = { false };
	int i, row = 0, d;
	size_t b;
	char buf[32];

	for (b = 0; b < hm->nr_bins; b++) {
		tier_plot_tier_colour(cr, hm->bins[b].tier);
		cairo_rectangle(cr, x, g->top + g->cell_h * (double)b, 16, g->cell_h);
		cairo_fill(cr);
		seen[hm->bins[b].tier < 0 ? TIER_PLOT_TIER_COLOURS : (size_t)hm->bins[b].tier % TIER_PLOT_TIER_COLOURS] = true;
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_font_size(cr, 10);
	tier_plot_text(cr, x + 8, g->top - 6, "tier", 0.5);
	/* The scale: max at the top, TIERCTL_HEAT_DECADES decades down. */
	for (i = 0; i < 100; i++) {
		set_level(cr, 1 - i / 99.0);
		cairo_rectangle(cr, sx, g->top + 2.0 * i, 16, 2.0);
		cairo_fill(cr);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	tier_plot_text(cr, sx, g->top - 20, "accesses/s per page (log)", 0);
	lo = hm->max_rate / pow(10, TIERCTL_HEAT_DECADES);
	for (d = 0; d <= TIERCTL_HEAT_DECADES && hm->max_rate > 0; d++) {
		double y = g->top + 200.0 * d / TIERCTL_HEAT_DECADES;

		snprintf(buf, sizeof(buf), d == TIERCTL_HEAT_DECADES ? "<= %.3g" : "%.3g",
			 d == TIERCTL_HEAT_DECADES ? lo : hm->max_rate / pow(10, d));
		tier_plot_text(cr, sx + 20, y + 4, buf, 0);
	}
	if (!(hm->max_rate > 0))
		tier_plot_text(cr, sx + 20, g->top + 8, "no access seen", 0);
	/* Which colour is which tier. */
	for (i = 0; i <= (int)TIER_PLOT_TIER_COLOURS; i++) {
		double y = g->top + 220 + 14.0 * row;

		if (!seen[i])
			continue;
		tier_plot_tier_colour(cr, i == (int)TIER_PLOT_TIER_COLOURS ? -1 : i);
		cairo_rectangle(cr, sx, y, 10, 10);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		if (i == (int)TIER_PLOT_TIER_COLOURS)
			snprintf(buf, sizeof(buf), "no page present");
		else
			snprintf(buf, sizeof(buf), "tier %d", i);
		tier_plot_text(cr, sx + 14, y + 9, buf, 0);
		row++;
	}
}

int tierctl_heatmap_png(const struct tierctl_heatmap *hm, const char *path, struct tier_err *err)
{
	struct geometry g;
	cairo_surface_t *surf;
	cairo_t *cr;
	char title[160];
	int ret;

	if (!hm->nr_slices)
		return tier_err_set(err, -EAGAIN, "%s: nothing to draw yet: no time slice has ended (slices are %llu ms)",
				    path, (unsigned long long)hm->slice_ms);
	g.left = 140;
	g.top = 56;
	g.cell_w = floor(720.0 / (double)hm->nr_slices);
	g.cell_w = g.cell_w < 6 ? 6 : g.cell_w;
	g.cell_h = floor(512.0 / (double)(hm->nr_bins ? hm->nr_bins : 1));
	g.cell_h = g.cell_h < 2 ? 2 : g.cell_h;
	g.plot_w = g.cell_w * (double)hm->nr_slices;
	g.plot_h = g.cell_h * (double)hm->nr_bins;
	cr = tier_plot_canvas((int)(g.left + g.plot_w + 230),
			      (int)(g.top + (g.plot_h > 320 ? g.plot_h : 320) + 50), &surf);
	cairo_set_font_size(cr, 14);
	snprintf(title, sizeof(title), "access heatmap of process %d (tracker %s)", hm->pid,
		 hm->tracker);
	tier_plot_text(cr, g.left, 22, title, 0);
	draw_cells(cr, hm, &g);
	draw_axes(cr, hm, &g);
	draw_keys(cr, hm, &g);
	cairo_destroy(cr);
	ret = tier_plot_write(surf, "--png", path, err);
	cairo_surface_destroy(surf);
	return ret;
}
