/* plot.c - `tiersim compare --plot FILE.png`: AMAT per workload and policy
 * as grouped bars, drawn with cairo. */
#include <cairo.h>
#include <errno.h>
#include <stdio.h>

#include "tiersim/tiersim.h"

static const double palette[][3] = {
	{ 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 },
	{ 0.84, 0.15, 0.16 }, { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 },
	{ 0.89, 0.47, 0.76 }, { 0.50, 0.50, 0.50 }, { 0.74, 0.74, 0.13 },
	{ 0.09, 0.75, 0.81 },
};

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
	cairo_status_t st;
	cairo_t *cr;
	char buf[128];
	size_t i, j;
	int k;

	for (i = 0; i < nw * np; i++)
		if (res[i].amat_ns > ymax)
			ymax = res[i].amat_ns;
	ymax = ymax > 0 ? ymax * 1.1 : 1;
	surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
	cr = cairo_create(surf);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, 14);
	cairo_set_source_rgb(cr, 0, 0, 0);
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
			const double *c = palette[j % (sizeof(palette) / sizeof(palette[0]))];
			double h = plot_h * res[i * np + j].amat_ns / ymax;

			cairo_set_source_rgb(cr, c[0], c[1], c[2]);
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
		const double *c = palette[j % (sizeof(palette) / sizeof(palette[0]))];
		double x = left + group_w * (double)nw + 20, y = top + 16.0 * (double)j;

		cairo_set_source_rgb(cr, c[0], c[1], c[2]);
		cairo_rectangle(cr, x, y, 10, 10);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, 0, 0, 0);
		cairo_move_to(cr, x + 16, y + 9);
		cairo_show_text(cr, policies[j]);
	}
	cairo_destroy(cr);
	st = cairo_surface_write_to_png(surf, path);
	cairo_surface_destroy(surf);
	if (st != CAIRO_STATUS_SUCCESS)
		return tier_err_set(err, -EIO, "%s: cannot write PNG: %s", path,
				    cairo_status_to_string(st));
	return 0;
}
