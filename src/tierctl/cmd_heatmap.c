/* cmd_heatmap.c - `tierctl heatmap PID`: a managed process's accesses over
 * its address space and the last minute, from tierd's heatmap of it
 * (docs/protocol.md), as characters on a terminal, as JSON, or as a PNG
 * (heatmap_png.c). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/client.h"
#include "common/topology_out.h"
#include "core/heatmap.h"
#include "tierctl/heatmap.h"
#include "tierctl/tierctl.h"

#define CALL_TIMEOUT_MS 5000
/* Bins when none is asked for: a screen's rows, a picture's. */
#define TERM_BINS 32
#define PNG_BINS 128

/* Intensity characters, none to most. */
static const char ramp[] = " .:-=+*#%@";

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tierctl heatmap [--socket PATH] [--json] [--png FILE] [--bins N]\n"
		"                       [--slices N] [--start ADDR] [--end ADDR] PID\n"
		"  Access heatmap of a process tierd manages: its managed address ranges\n"
		"  (gaps left out) in N bins (default %d on a terminal, %d in a PNG; 1..256)\n"
		"  down, the last N slices of 1 s (default all, up to 60) across, the access\n"
		"  rate (accesses/s per page, as the tracker sees it) as intensity, and the\n"
		"  tier where most of each bin's pages are now.\n"
		"  --json        print the daemon's data (docs/protocol.md)\n"
		"  --png FILE    draw it into FILE (axes, colour scale, tiers)\n"
		"  --start ADDR, --end ADDR  only that part of the address space\n",
		TERM_BINS, PNG_BINS);
}

/* --- the result ------------------------------------------------------------ */

static struct json_object *member(struct json_object *o, const char *k, enum json_type t)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !v)
		return NULL;
	/* json-c reads 3.0 as a double and 3 as an int: both are numbers. */
	if (t == json_type_double && json_object_is_type(v, json_type_int))
		return v;
	return json_object_is_type(v, t) ? v : NULL;
}

static bool hex_of(struct json_object *o, const char *k, uint64_t *out)
{
	struct json_object *v = member(o, k, json_type_string);
	char *end;

	if (!v)
		return false;
	errno = 0;
	*out = strtoull(json_object_get_string(v), &end, 16);
	return !errno && !*end;
}

int tierctl_heatmap_parse(struct json_object *res, struct tierctl_heatmap *hm,
			  struct tier_err *err)
{
	struct json_object *bins = member(res, "bins", json_type_array);
	struct json_object *slices = member(res, "slices", json_type_array);
	struct json_object *ranges = member(res, "ranges", json_type_array), *v;
	size_t b, k;

	memset(hm, 0, sizeof(*hm));
	if (!bins || !slices || !ranges || !member(res, "pid", json_type_int) ||
	    !member(res, "max_rate", json_type_double))
		return tier_err_set(err, -EPROTO, "the daemon's heatmap lacks pid, bins, slices, ranges or max_rate");
	hm->pid = json_object_get_int(member(res, "pid", json_type_int));
	hm->max_rate = json_object_get_double(member(res, "max_rate", json_type_double));
	v = member(res, "tracker", json_type_string);
	snprintf(hm->tracker, sizeof(hm->tracker), "%s", v ? json_object_get_string(v) : "?");
	v = member(res, "slice_ms", json_type_int);
	hm->slice_ms = v ? (uint64_t)json_object_get_int64(v) : 1000;
	v = member(res, "bin_bytes", json_type_int);
	hm->bin_bytes = v ? (uint64_t)json_object_get_int64(v) : 0;
	hm->nr_ranges = json_object_array_length(ranges);
	for (k = 0; k < hm->nr_ranges; k++) {
		uint64_t s, e;

		if (hex_of(json_object_array_get_idx(ranges, k), "start", &s) &&
		    hex_of(json_object_array_get_idx(ranges, k), "end", &e) && e > s)
			hm->managed_bytes += e - s;
	}
	hm->nr_bins = json_object_array_length(bins);
	hm->nr_slices = json_object_array_length(slices);
	if (hm->nr_slices) {
		v = member(json_object_array_get_idx(slices, 0), "start_s", json_type_double);
		hm->first_s = v ? json_object_get_double(v) : 0;
		v = member(json_object_array_get_idx(slices, hm->nr_slices - 1), "end_s", json_type_double);
		hm->last_s = v ? json_object_get_double(v) : 0;
	}
	hm->bins = calloc(hm->nr_bins ? hm->nr_bins : 1, sizeof(*hm->bins));
	hm->rates = calloc(hm->nr_bins * hm->nr_slices + 1, sizeof(*hm->rates));
	if (!hm->bins || !hm->rates) {
		tierctl_heatmap_release(hm);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	for (b = 0; b < hm->nr_bins; b++) {
		struct json_object *o = json_object_array_get_idx(bins, b);
		struct json_object *rates = member(o, "rates", json_type_array);
		struct tierctl_heat_bin *hb = &hm->bins[b];

		if (!hex_of(o, "start", &hb->start) || !hex_of(o, "end", &hb->end) || !rates ||
		    json_object_array_length(rates) != hm->nr_slices) {
			tierctl_heatmap_release(hm);
			return tier_err_set(err, -EPROTO, "the daemon's heatmap bin %zu is malformed", b);
		}
		v = member(o, "bytes", json_type_int);
		hb->bytes = v ? (uint64_t)json_object_get_int64(v) : hb->end - hb->start;
		v = member(o, "tier", json_type_int);
		hb->tier = v ? json_object_get_int(v) : -1;
		v = member(o, "mean_rate", json_type_double);
		hb->mean_rate = v ? json_object_get_double(v) : 0;
		for (k = 0; k < hm->nr_slices; k++)
			hm->rates[b * hm->nr_slices + k] = json_object_get_double(
				json_object_array_get_idx(rates, k));
	}
	return 0;
}

void tierctl_heatmap_release(struct tierctl_heatmap *hm)
{
	free(hm->bins);
	free(hm->rates);
	hm->bins = NULL;
	hm->rates = NULL;
}

double tierctl_heat_level(const struct tierctl_heatmap *hm, double rate)
{
	double lo = hm->max_rate / pow(10, TIERCTL_HEAT_DECADES);

	if (!(hm->max_rate > 0) || !(rate > 0) || rate < lo)
		return -1;
	return log(rate / lo) / log(hm->max_rate / lo);
}

/* --- on a terminal ----------------------------------------------------------- */

static char ramp_char(const struct tierctl_heatmap *hm, double rate)
{
	double level = tierctl_heat_level(hm, rate);
	int i;

	if (level < 0)
		return ramp[0];
	/* Levels 1..9 of equal width on the log scale. */
	i = 1 + (int)(level * (double)(sizeof(ramp) - 2));
	return ramp[i < (int)sizeof(ramp) - 1 ? i : (int)sizeof(ramp) - 2];
}

static void print_legend(const struct tierctl_heatmap *hm)
{
	double lo = hm->max_rate / pow(10, TIERCTL_HEAT_DECADES);
	size_t i, n = sizeof(ramp) - 2;

	if (!(hm->max_rate > 0)) {
		printf("scale: no access seen in these slices\n");
		return;
	}
	printf("scale, accesses/s per page (log): ' ' <%.3g", lo);
	for (i = 0; i < n; i++)
		printf("  '%c' %.3g", ramp[i + 1], lo * pow(hm->max_rate / lo, (double)i / (double)n));
	printf("  (max %.3g)\n", hm->max_rate);
}

static void print_heatmap(const struct tierctl_heatmap *hm)
{
	char managed[32], bin[32];
	size_t b, k;

	tier_format_bytes(hm->managed_bytes, managed, sizeof(managed));
	tier_format_bytes(hm->bin_bytes, bin, sizeof(bin));
	printf("process %d, tracker %s: %s managed in %zu range%s shown, %zu bins of %s\n", hm->pid,
	       hm->tracker, managed, hm->nr_ranges, hm->nr_ranges == 1 ? "" : "s", hm->nr_bins, bin);
	if (!hm->nr_slices) {
		printf("no time slice has ended yet (slices are %llu ms): try again in a moment\n",
		       (unsigned long long)hm->slice_ms);
		return;
	}
	printf("rows: addresses, low to high; columns: %zu slices of %llu ms, oldest left\n\n",
	       hm->nr_slices, (unsigned long long)hm->slice_ms);
	{
		/* The time axis over the bar: its oldest edge and now. */
		char axis[TIER_HEATMAP_SLICES + 3], first[16];
		size_t w = hm->nr_slices + 2, n;

		memset(axis, ' ', w);
		axis[w] = '\0';
		n = (size_t)snprintf(first, sizeof(first), "%.0fs", hm->first_s);
		memcpy(axis + 1, first, n < w - 1 ? n : w - 1);
		if (w >= n + 5)
			memcpy(axis + w - 4, "now", 3);
		printf("%-18s %-4s%s %s\n", "address", "tier", axis, "mean/s");
	}
	for (b = 0; b < hm->nr_bins; b++) {
		const struct tierctl_heat_bin *hb = &hm->bins[b];
		char tier[8];

		snprintf(tier, sizeof(tier), hb->tier < 0 ? "-" : "t%d", hb->tier);
		printf("0x%-16llx %-4s|", (unsigned long long)hb->start, tier);
		for (k = 0; k < hm->nr_slices; k++)
			putchar(ramp_char(hm, hm->rates[b * hm->nr_slices + k]));
		printf("| %.3g\n", hb->mean_rate);
	}
	printf("\n");
	print_legend(hm);
}

/* --- the verb ----------------------------------------------------------------- */

static bool parse_pid(const char *s, uint64_t *pid)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*pid = strtoull(s, &end, 10);
	return !errno && !*end && *pid && *pid <= INT32_MAX;
}

/* --NAME N with N in 1..max; says what is wrong otherwise. */
static bool count_arg(const char *name, const char *s, uint64_t max, uint64_t *out)
{
	if (!tierctl_parse_size(s, out) && *out && *out <= max)
		return true;
	fprintf(stderr, "tierctl heatmap: --%s '%s': expected 1..%llu\n", name, s,
		(unsigned long long)max);
	return false;
}

struct opts {
	const char *socket, *png;
	bool json;
	uint64_t bins, slices, start, end;
	bool has_bins, has_start, has_end;
};

const struct option tierctl_heatmap_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "png", required_argument, NULL, 'p' },
	{ "bins", required_argument, NULL, 'b' },
	{ "slices", required_argument, NULL, 'n' },
	{ "start", required_argument, NULL, 'a' },
	{ "end", required_argument, NULL, 'e' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parses the options into o. Returns -1 to go on, else the exit status. */
static int parse_opts(int argc, char **argv, struct opts *o, uint64_t *pid)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", tierctl_heatmap_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'p':
			o->png = optarg;
			break;
		case 'b':
		case 'n':
			if (!count_arg(c == 'b' ? "bins" : "slices", optarg,
				       c == 'b' ? TIER_HEATMAP_BINS : TIER_HEATMAP_SLICES,
				       c == 'b' ? &o->bins : &o->slices))
				return 2;
			o->has_bins |= c == 'b';
			break;
		case 'a':
		case 'e':
			if (tierctl_parse_size(optarg, c == 'a' ? &o->start : &o->end)) {
				fprintf(stderr, "tierctl heatmap: --%s '%s' is not an address\n",
					c == 'a' ? "start" : "end", optarg);
				return 2;
			}
			*(c == 'a' ? &o->has_start : &o->has_end) = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "tierctl heatmap: see tierctl heatmap --help\n");
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "tierctl heatmap: expected one PID (see tierctl heatmap --help)\n");
		return 2;
	}
	if (!parse_pid(argv[optind], pid)) {
		fprintf(stderr, "tierctl heatmap: PID '%s' is not a process id\n", argv[optind]);
		return 2;
	}
	if (o->has_start && o->has_end && o->end <= o->start) {
		fprintf(stderr, "tierctl heatmap: --end must be above --start\n");
		return 2;
	}
	return -1;
}

int tierctl_heatmap(int argc, char **argv)
{
	struct opts o = { tierctl_socket(),
			  NULL, false, TERM_BINS, TIER_HEATMAP_SLICES, 0, 0, false, false, false };
	struct tier_err err = { "" };
	struct tierctl_heatmap hm;
	struct json_object *args, *res;
	uint64_t pid;
	int ret = parse_opts(argc, argv, &o, &pid);

	if (ret >= 0)
		return ret;
	if (o.png && !o.has_bins)
		o.bins = PNG_BINS;
	args = json_object_new_object();
	json_object_object_add(args, "pid", json_object_new_uint64(pid));
	json_object_object_add(args, "bins", json_object_new_uint64(o.bins));
	json_object_object_add(args, "slices", json_object_new_uint64(o.slices));
	if (o.has_start)
		json_object_object_add(args, "start", json_object_new_uint64(o.start));
	if (o.has_end)
		json_object_object_add(args, "end", json_object_new_uint64(o.end));
	if (tier_client_call(o.socket, TIER_CMD_HEATMAP, args, CALL_TIMEOUT_MS, &res, &err)) {
		/* The daemon's message names the request already. */
		fprintf(stderr, "tierctl heatmap: %s\n",
			strncmp(err.msg, "heatmap: ", 9) ? err.msg : err.msg + 9);
		return 1;
	}
	if (o.json)
		tierctl_print_json(res);
	ret = tierctl_heatmap_parse(res, &hm, &err);
	json_object_put(res);
	if (ret) {
		fprintf(stderr, "tierctl heatmap: %s\n", err.msg);
		return 1;
	}
	if (o.png) {
		ret = tierctl_heatmap_png(&hm, o.png, &err);
		if (ret)
			fprintf(stderr, "tierctl heatmap: %s\n", err.msg);
		else if (!o.json)
			printf("heatmap of process %d (%zu bins x %zu slices) written to %s\n", hm.pid,
			       hm.nr_bins, hm.nr_slices, o.png);
	} else if (!o.json) {
		print_heatmap(&hm);
	}
	tierctl_heatmap_release(&hm);
	return ret ? 1 : 0;
}
