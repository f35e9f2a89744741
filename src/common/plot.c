/* plot.c - the PNG drawings' shared parts (common/plot.h). */
#include "common/plot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Tier ranks 0, 1, 2, ... */
static const double tier_colour[TIER_PLOT_TIER_COLOURS][3] = {
	{ 0.17, 0.63, 0.17 }, { 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 },
	{ 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 }, { 0.89, 0.47, 0.76 },
	{ 0.74, 0.74, 0.13 }, { 0.09, 0.75, 0.81 },
};

static const double palette[][3] = {
	{ 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 },
	{ 0.84, 0.15, 0.16 }, { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 },
	{ 0.89, 0.47, 0.76 }, { 0.50, 0.50, 0.50 }, { 0.74, 0.74, 0.13 },
	{ 0.09, 0.75, 0.81 },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

cairo_t *tier_plot_canvas(int width, int height, cairo_surface_t **surf)
{
	cairo_t *cr;

	*surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
	cr = cairo_create(*surf);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_source_rgb(cr, 0, 0, 0);
	return cr;
}

void tier_plot_text(cairo_t *cr, double x, double y, const char *s, double align)
{
	cairo_text_extents_t ext;

	cairo_text_extents(cr, s, &ext);
	cairo_move_to(cr, x - ext.x_advance * align, y);
	cairo_show_text(cr, s);
}

void tier_plot_tier_colour(cairo_t *cr, int rank)
{
	const double *c;

	if (rank < 0) {
		cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
		return;
	}
	c = tier_colour[(size_t)rank % N(tier_colour)];
	cairo_set_source_rgb(cr, c[0], c[1], c[2]);
}

void tier_plot_series_colour(cairo_t *cr, size_t i)
{
	const double *c = palette[i % N(palette)];

	cairo_set_source_rgb(cr, c[0], c[1], c[2]);
}

static cairo_status_t write_file(void *closure, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

int tier_plot_write(cairo_surface_t *surf, const char *what, const char *path,
		    struct tier_err *err)
{
	cairo_status_t st;
	FILE *f = fopen(path, "wb");

	if (!f)
		return tier_err_set(err, -errno, "%s%s%s: %s", what, *what ? " " : "", path,
				    strerror(errno));
	st = cairo_surface_write_to_png_stream(surf, write_file, f);
	if (fclose(f) && st == CAIRO_STATUS_SUCCESS)
		st = CAIRO_STATUS_WRITE_ERROR;
	if (st != CAIRO_STATUS_SUCCESS) {
		unlink(path);
		return tier_err_set(err, -EIO, "%s%s%s: cannot write the PNG: %s", what, *what ? " " : "",
				    path, cairo_status_to_string(st));
	}
	return 0;
}
