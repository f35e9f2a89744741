/* heatmap.h - `tierctl heatmap`: the daemon's answer to a `heatmap`
 * request (docs/protocol.md) as tierctl draws it, on a terminal
 * (cmd_heatmap.c) or into a PNG (heatmap_png.c). */
#ifndef TIERCTL_HEATMAP_H
#define TIERCTL_HEATMAP_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct tierctl_heat_bin {
	uint64_t start, end;		/* first address, end of the last */
	uint64_t bytes;			/* on the axis (gaps left out) */
	int tier;			/* where most of its pages are; -1 none */
	double mean_rate;
};

struct tierctl_heatmap {
	int pid;
	char tracker[64];
	uint64_t slice_ms;
	uint64_t bin_bytes;
	uint64_t managed_bytes;		/* the ranges' sum */
	size_t nr_ranges;
	size_t nr_bins, nr_slices;
	struct tierctl_heat_bin *bins;	/* [nr_bins], lowest address first */
	double *rates;			/* [bin * nr_slices + slice], accesses/s per page */
	double first_s, last_s;		/* start of the oldest slice, end of the newest
					 * (seconds, now = 0) */
	double max_rate;
};

/* Reads a `heatmap` result. Returns 0, -EPROTO (err says what is
 * missing) or -ENOMEM. Release with tierctl_heatmap_release. */
int tierctl_heatmap_parse(struct json_object *res, struct tierctl_heatmap *hm,
			  struct tier_err *err);
void tierctl_heatmap_release(struct tierctl_heatmap *hm);

/* The intensity scale both drawings share: rates from max_rate down to
 * max_rate / 10^TIERCTL_HEAT_DECADES on a log scale, as a fraction in
 * [0, 1]; below it (and no access at all) -1. */
#define TIERCTL_HEAT_DECADES 3
double tierctl_heat_level(const struct tierctl_heatmap *hm, double rate);

/* Draws hm into a PNG at path (cairo): time across, addresses down, a
 * colour scale, each bin's tier. Returns 0 or -errno with err naming the
 * file and why. */
int tierctl_heatmap_png(const struct tierctl_heatmap *hm, const char *path,
			struct tier_err *err);

#endif
