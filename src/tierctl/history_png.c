/* history_png.c - `tierctl history --png FILE`: the daemon's last hour
 * drawn with cairo. Above, the managed bytes in each tier over time (one
 * line per tier, in the tier colours of the heatmap, each tier's capacity
 * dashed when it is in range); below, the bytes promoted (up) and demoted
 * (down) per second, one bar per point. Time runs across, now at the
 * right edge. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/plot.h"
#include "common/topology_out.h"
#include "tierctl/history.h"

#define WIDTH 960
#define HEIGHT 640
#define LEFT 90.0
#define RIGHT 170.0
#define PLOT_W (WIDTH - LEFT - RIGHT)

struct panel {
	double top, h;		/* pixels */
	double lo, hi;		/* values at the bottom and top edges */
};

static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };

/* The binary unit max is best shown in: its exponent of 1024. */
static int unit_of(double max)
{
	int u = 0;

	while (max >= 1024 && u < 4) {
		max /= 1024;
		u++;
	}
	return u;
}

/* A round step for about n ticks over span: 1, 2 or 5 times a power of
 * ten. */
static double nice_step(double span, int n)
{
	double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static double x_of(const struct tierctl_history *h, double t)
{
	return LEFT + PLOT_W * (t + (double)h->seconds) / (double)h->seconds;
}

static double y_of(const struct panel *p, double v)
{
	return p->top + p->h - p->h * (v - p->lo) / (p->hi - p->lo);
}

/* Frame, value ticks (labels in unit u, suffix after the unit), title.
 * Values below zero are labelled by their size: the moves panel draws
 * demotions downwards. */
static void draw_frame(cairo_t *cr, const struct panel *p, int u, const char *suffix,
		       const char *title)
{
	double div = pow(1024, u), step = nice_step((p->hi - p->lo) / div, 5), v;
	char buf[48];

	cairo_set_line_width(cr, 1);
	cairo_set_font_size(cr, 10);
	for (v = ceil(p->lo / div / step) * step; v <= p->hi / div + 1e-9; v += step) {
		double y = floor(y_of(p, v * div)) + 0.5;

		cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
		cairo_move_to(cr, LEFT, y);
		cairo_line_to(cr, LEFT + PLOT_W, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(buf, sizeof(buf), "%g %s%s", fabs(v) < step / 2 ? 0 : fabs(v), units[u], suffix);
		tier_plot_text(cr, LEFT - 6, y + 4, buf, 1);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_rectangle(cr, LEFT - 0.5, p->top - 0.5, PLOT_W + 1, p->h + 1);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 12);
	tier_plot_text(cr, LEFT, p->top - 8, title, 0);
}

/* Time ticks under panel p: seconds or minutes before now. */
static void draw_time(cairo_t *cr, const struct tierctl_history *h, const struct panel *p)
{
	bool minutes = h->seconds > 600;
	double scale = minutes ? 60 : 1, step = nice_step((double)h->seconds / scale, 8), t;
	char buf[32];

	cairo_set_font_size(cr, 10);
	cairo_set_source_rgb(cr, 0, 0, 0);
	for (t = -floor((double)h->seconds / scale / step) * step; t <= 1e-9; t += step) {
		double x = floor(x_of(h, t * scale)) + 0.5;

		cairo_move_to(cr, x, p->top + p->h);
		cairo_line_to(cr, x, p->top + p->h + 4);
		cairo_stroke(cr);
		snprintf(buf, sizeof(buf), "%g", fabs(t) < step / 2 ? 0 : t);
		tier_plot_text(cr, x, p->top + p->h + 16, buf, 0.5);
	}
	cairo_set_font_size(cr, 12);
	tier_plot_text(cr, LEFT + PLOT_W / 2, p->top + p->h + 34,
		       minutes ? "time (minutes, now = 0)" : "time (s, now = 0)", 0.5);
}

static void draw_occupancy(cairo_t *cr, const struct tierctl_history *h, const struct panel *p)
{
	char buf[64], b[32];
	size_t i, r;

	cairo_save(cr);
	cairo_rectangle(cr, LEFT, p->top, PLOT_W, p->h);
	cairo_clip(cr);
	for (r = 0; r < h->nr_tiers; r++) {
		double cap = (double)h->capacity_bytes[r];

		tier_plot_tier_colour(cr, (int)r);
		if (cap > 0 && cap <= p->hi) {
			double dash[] = { 6, 4 };

			cairo_set_dash(cr, dash, 2, 0);
			cairo_set_line_width(cr, 1);
			cairo_move_to(cr, LEFT, y_of(p, cap));
			cairo_line_to(cr, LEFT + PLOT_W, y_of(p, cap));
			cairo_stroke(cr);
			cairo_set_dash(cr, NULL, 0, 0);
		}
		cairo_set_line_width(cr, 2);
		for (i = 0; i < h->nr_points; i++) {
			double x = x_of(h, h->end_s[i]), y = y_of(p, (double)h->tier_bytes[i * h->nr_tiers + r]);

			/* A step: the value holds over the point's span. */
			if (i == 0)
				cairo_move_to(cr, x_of(h, h->end_s[i] - (double)h->step_s), y);
			else
				cairo_line_to(cr, x_of(h, h->end_s[i] - (double)h->step_s), y);
			cairo_line_to(cr, x, y);
		}
		cairo_stroke(cr);
	}
	cairo_restore(cr);
	/* Legend right of the panel. */
	cairo_set_font_size(cr, 11);
	for (r = 0; r < h->nr_tiers; r++) {
		double y = p->top + 10 + 34.0 * (double)r;

		tier_plot_tier_colour(cr, (int)r);
		cairo_rectangle(cr, LEFT + PLOT_W + 12, y - 9, 12, 10);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(buf, sizeof(buf), "tier %zu", r);
		tier_plot_text(cr, LEFT + PLOT_W + 30, y, buf, 0);
		snprintf(buf, sizeof(buf), "capacity %s", tier_format_bytes(h->capacity_bytes[r], b, sizeof(b)));
		tier_plot_text(cr, LEFT + PLOT_W + 30, y + 14, buf, 0);
	}
}

static void draw_moves(cairo_t *cr, const struct tierctl_history *h, const struct panel *p)
{
	double w = PLOT_W * (double)h->step_s / (double)h->seconds;
	size_t i;

	for (i = 0; i < h->nr_points; i++) {
		double x = x_of(h, h->end_s[i]) - w;
		double up = (double)h->promoted_bytes[i] / (double)h->step_s;
		double down = (double)h->demoted_bytes[i] / (double)h->step_s;

		tier_plot_series_colour(cr, 2);
		cairo_rectangle(cr, x, y_of(p, up), w > 2 ? w - 1 : w, y_of(p, 0) - y_of(p, up));
		cairo_fill(cr);
		tier_plot_series_colour(cr, 3);
		cairo_rectangle(cr, x, y_of(p, 0), w > 2 ? w - 1 : w, y_of(p, -down) - y_of(p, 0));
		cairo_fill(cr);
	}
	cairo_set_source_rgb(cr, 0, 0, 0);
	cairo_set_line_width(cr, 1);
	cairo_move_to(cr, LEFT, floor(y_of(p, 0)) + 0.5);
	cairo_line_to(cr, LEFT + PLOT_W, floor(y_of(p, 0)) + 0.5);
	cairo_stroke(cr);
	cairo_set_font_size(cr, 11);
	tier_plot_series_colour(cr, 2);
	cairo_rectangle(cr, LEFT + PLOT_W + 12, p->top + 1, 12, 10);
	cairo_fill(cr);
	tier_plot_series_colour(cr, 3);
	cairo_rectangle(cr, LEFT + PLOT_W + 12, p->top + 19, 12, 10);
	cairo_fill(cr);
	cairo_set_source_rgb(cr, 0, 0, 0);
	tier_plot_text(cr, LEFT + PLOT_W + 30, p->top + 10, "promoted (up)", 0);
	tier_plot_text(cr, LEFT + PLOT_W + 30, p->top + 28, "demoted (down)", 0);
}

int tierctl_history_png(const struct tierctl_history *h, const char *path, struct tier_err *err)
{
	struct panel occ = { 60, 300, 0, 0 }, mv = { 420, 160, 0, 0 };
	double max_occ = 0, max_mv = 0;
	cairo_surface_t *surf;
	cairo_t *cr;
	char title[160];
	size_t i;
	int ret;

	if (!h->nr_points)
		return tier_err_set(err, -EAGAIN, "%s: nothing to draw yet: tierd has no sample (one a second from its first step)",
				    path);
	for (i = 0; i < h->nr_points * h->nr_tiers; i++)
		max_occ = fmax(max_occ, (double)h->tier_bytes[i]);
	for (i = 0; i < h->nr_tiers; i++)	/* a capacity close above the lines shows */
		if ((double)h->capacity_bytes[i] <= max_occ * 1.5)
			max_occ = fmax(max_occ, (double)h->capacity_bytes[i]);
	for (i = 0; i < h->nr_points; i++)
		max_mv = fmax(max_mv, fmax((double)h->promoted_bytes[i], (double)h->demoted_bytes[i]) /
					      (double)h->step_s);
	occ.hi = max_occ > 0 ? max_occ * 1.08 : 1024;
	mv.hi = max_mv > 0 ? max_mv * 1.1 : 1024;
	mv.lo = -mv.hi;
	cr = tier_plot_canvas(WIDTH, HEIGHT, &surf);
	cairo_set_font_size(cr, 15);
	snprintf(title, sizeof(title), "tierd on %s: the last %llu %s", h->machine,
		 (unsigned long long)(h->seconds > 600 ? h->seconds / 60 : h->seconds),
		 h->seconds > 600 ? "minutes" : "seconds");
	tier_plot_text(cr, LEFT, 26, title, 0);
	draw_frame(cr, &occ, unit_of(occ.hi), "", "managed memory per tier");
	draw_occupancy(cr, h, &occ);
	draw_frame(cr, &mv, unit_of(mv.hi), "/s", "migrations: bytes per second");
	draw_moves(cr, h, &mv);
	draw_time(cr, h, &mv);
	cairo_destroy(cr);
	ret = tier_plot_write(surf, "--png", path, err);
	cairo_surface_destroy(surf);
	return ret;
}
