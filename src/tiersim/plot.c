/* plot.c - `tiersim compare --plot FILE.png`: AMAT per workload and policy
 * as grouped bars, drawn with cairo. */
#include <cairo.h>
#include <errno.h>
#include <stdio.h>

#include "common/plot.h"
#include "tiersim/tiersim.h"

int tiersim_plot(const char *path, const char *machine, const char **workloads, size_t nw,
		 const char **policies, size_t np, const struct tier_sim_result *res,
		 struct tier_err *err)
{
	const double left = 70, right = 20, top = 50, bottom = 130;
	const double group_w = 30.0 + 14.0 * (double)np;
	const double width = left + right + group_w * (double)nw + 160;
	const double height = 480;
	double plot_h = height - top - bottom, ymax = 0;
	cairo_surface_t *surf;
	cairo_t *cr;
	char buf[128];
	size_t i, j;
	int k, ret;

	for (i = 0; i < nw * np; i++)
		if (res[i].amat_ns > ymax)
			ymax = res[i].amat_ns;
	ymax = ymax > 0 ? ymax * 1.1 : 1;
	cr = tier_plot_canvas((int)width, (int)height, &surf);
	cairo_set_font_size(cr, 14);
	snprintf(buf, sizeof(buf), "AMAT (ns) per workload and policy, machine %s", machine);
	cairo_move_to(cr, left, 25);
	cairo_show_text(cr, buf);
	cairo_set_font_size(cr, 10);
	/* Axis and grid. */
	for (k = 0; k <= 5; k++) {
		double y = top + plot_h - plot_h * k / 5.0;

		cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
		cairo_move_to(cr, left, y);
		cairo_line_to(cr, left + group_w * (double)nw, y);
		cairo_stroke(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		snprintf(buf, sizeof(buf), "%.0f", ymax * k / 5.0);
		cairo_move_to(cr, 10, y + 4);
		cairo_show_text(cr, buf);
	}
	for (i = 0; i < nw; i++) {
		double x0 = left + group_w * (double)i + 15;

		for (j = 0; j < np; j++) {
			double h = plot_h * res[i * np + j].amat_ns / ymax;

			tier_plot_series_colour(cr, j);
			cairo_rectangle(cr, x0 + 14.0 * (double)j, top + plot_h - h, 12, h);
			cairo_fill(cr);
		}
		cairo_set_source_rgb(cr, 0, 0, 0);
		cairo_save(cr);
		cairo_move_to(cr, x0, top + plot_h + 12);
		cairo_rotate(cr, 0.6);
		cairo_show_text(cr, workloads[i]);
		cairo_restore(cr);
	}
	for (j = 0; j < np; j++) {
		double x = left + group_w * (double)nw + 20, y = top + 16.0 * (double)j;

		tier_plot_series_colour(cr, j);
		cairo_rectangle(cr, x, y, 10, 10);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		cairo_move_to(cr, x + 16, y + 9);
		cairo_show_text(cr, policies[j]);
	}
	cairo_destroy(cr);
	ret = tier_plot_write(surf, "--plot", path, err);
	cairo_surface_destroy(surf);
	return ret;
}
