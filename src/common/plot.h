/* plot.h - what the project's PNG drawings share (cairo): a white canvas
 * with the house font, text placed by alignment, the colours of tier ranks
 * and of series, and the file written with one clear error. Used by
 * tierctl (heatmap, history) and tiersim (compare --plot). */
#ifndef TIER_COMMON_PLOT_H
#define TIER_COMMON_PLOT_H

#include <cairo.h>

#include "core/err.h"

/* A width x height RGB canvas painted white, sans-serif, black ink.
 * *surf and the returned context are the caller's (cairo_destroy,
 * cairo_surface_destroy). */
cairo_t *tier_plot_canvas(int width, int height, cairo_surface_t **surf);

/* s with its left (align 0), middle (0.5) or right (1) edge at x, its
 * baseline at y. */
void tier_plot_text(cairo_t *cr, double x, double y, const char *s, double align);

/* Tier ranks have this many colours; past them they cycle. */
#define TIER_PLOT_TIER_COLOURS 8

/* The source colour of tier rank `rank` (the same in every drawing);
 * rank < 0: grey, for no tier. */
void tier_plot_tier_colour(cairo_t *cr, int rank);

/* The source colour of series i of a legend. */
void tier_plot_series_colour(cairo_t *cr, size_t i);

/* Writes surf to path as PNG. Returns 0 or -errno with err set
 * ("--png FILE: ..."; what names the option); a partial file is removed. */
int tier_plot_write(cairo_surface_t *surf, const char *what, const char *path,
		    struct tier_err *err);

#endif
