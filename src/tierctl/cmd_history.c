/* cmd_history.c - `tierctl history`: the daemon's last hour (managed
 * bytes per tier, bytes promoted and demoted) as a table, JSON or a PNG. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/client.h"
#include "common/topology_out.h"
#include "tierctl/history.h"
#include "tierctl/tierctl.h"

#define CALL_TIMEOUT_MS 5000
/* Rows of the table when --points is not given. */
#define TEXT_POINTS 20

static bool get_u64(struct json_object *o, const char *k, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return false;
	*out = (uint64_t)json_object_get_int64(v);
	return true;
}

static struct json_object *get_array(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_array) ? v : NULL;
}

int tierctl_history_parse(struct json_object *res, struct tierctl_history *h,
			  struct tier_err *err)
{
	struct json_object *tiers = get_array(res, "tiers"), *pts = get_array(res, "points");
	size_t i, r;

	memset(h, 0, sizeof(*h));
	if (!tiers || !pts || !get_u64(res, "seconds", &h->seconds) || !get_u64(res, "step_s", &h->step_s) ||
	    !h->step_s)
		return tier_err_set(err, -EPROTO, "tierd's history lacks 'tiers', 'points', 'seconds' or 'step_s'");
	h->nr_tiers = json_object_array_length(tiers);
	if (h->nr_tiers > TIER_MAX_TIERS)
		return tier_err_set(err, -EPROTO, "tierd's history has %zu tiers (at most %d)", h->nr_tiers,
				    TIER_MAX_TIERS);
	for (r = 0; r < h->nr_tiers; r++)
		if (!get_u64(json_object_array_get_idx(tiers, r), "capacity_bytes", &h->capacity_bytes[r]))
			return tier_err_set(err, -EPROTO, "tierd's history: tier %zu lacks 'capacity_bytes'", r);
	h->nr_points = json_object_array_length(pts);
	h->end_s = calloc(h->nr_points + 1, sizeof(*h->end_s));
	h->tier_bytes = calloc(h->nr_points * h->nr_tiers + 1, sizeof(*h->tier_bytes));
	h->promoted_bytes = calloc(h->nr_points + 1, sizeof(*h->promoted_bytes));
	h->demoted_bytes = calloc(h->nr_points + 1, sizeof(*h->demoted_bytes));
	if (!h->end_s || !h->tier_bytes || !h->promoted_bytes || !h->demoted_bytes) {
		tierctl_history_release(h);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < h->nr_points; i++) {
		struct json_object *p = json_object_array_get_idx(pts, i), *e, *tb = get_array(p, "tier_bytes");

		if (!json_object_object_get_ex(p, "end_s", &e) || !tb ||
		    json_object_array_length(tb) != h->nr_tiers ||
		    !get_u64(p, "promoted_bytes", &h->promoted_bytes[i]) ||
		    !get_u64(p, "demoted_bytes", &h->demoted_bytes[i])) {
			tierctl_history_release(h);
			return tier_err_set(err, -EPROTO, "tierd's history: point %zu is incomplete", i);
		}
		h->end_s[i] = json_object_get_double(e);
		for (r = 0; r < h->nr_tiers; r++)
			h->tier_bytes[i * h->nr_tiers + r] =
				(uint64_t)json_object_get_int64(json_object_array_get_idx(tb, r));
	}
	return 0;
}

void tierctl_history_release(struct tierctl_history *h)
{
	free(h->end_s);
	free(h->tier_bytes);
	free(h->promoted_bytes);
	free(h->demoted_bytes);
	memset(h, 0, sizeof(*h));
}

static void print_table(const struct tierctl_history *h)
{
	char b[32];
	size_t i, r;

	printf("tierd on %s: the last %llu s, %zu point%s of %llu s\n", h->machine,
	       (unsigned long long)h->seconds, h->nr_points, h->nr_points == 1 ? "" : "s",
	       (unsigned long long)h->step_s);
	if (!h->nr_points) {
		printf("  no sample yet (one a second from the first step)\n");
		return;
	}
	printf("%8s", "ago (s)");
	for (r = 0; r < h->nr_tiers; r++) {
		char head[16];

		snprintf(head, sizeof(head), "tier %zu", r);
		printf("  %10s", head);
	}
	printf("  %12s  %12s\n", "promoted/s", "demoted/s");
	for (i = 0; i < h->nr_points; i++) {
		printf("%8.0f", h->end_s[i]);
		for (r = 0; r < h->nr_tiers; r++)
			printf("  %10s", tier_format_bytes(h->tier_bytes[i * h->nr_tiers + r], b, sizeof(b)));
		printf("  %12s", tier_format_bytes(h->promoted_bytes[i] / h->step_s, b, sizeof(b)));
		printf("  %12s\n", tier_format_bytes(h->demoted_bytes[i] / h->step_s, b, sizeof(b)));
	}
}

const struct option tierctl_history_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "png", required_argument, NULL, 'p' },
	{ "seconds", required_argument, NULL, 'S' },
	{ "points", required_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int tierctl_history(int argc, char **argv)
{
	const struct option *opts = tierctl_history_opts;
	const char *socket = tierctl_socket(), *png = NULL;
	long seconds = 0, points = 0;
	struct json_object *args, *res, *st;
	struct tier_err err = { "" };
	struct tierctl_history h;
	bool json = false;
	char *end;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			png = optarg;
			break;
		case 'S':
			seconds = strtol(optarg, &end, 10);
			if (*end || seconds < 1 || seconds > 3600) {
				fprintf(stderr, "tierctl history: --seconds '%s': expected 1..3600\n", optarg);
				return 2;
			}
			break;
		case 'P':
			points = strtol(optarg, &end, 10);
			if (*end || points < 1 || points > 720) {
				fprintf(stderr, "tierctl history: --points '%s': expected 1..720\n", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: tierctl history [--socket PATH] [--seconds N] [--points N] [--json] [--png FILE]\n"
			       "  the daemon's last hour (or N seconds): managed bytes per tier and the\n"
			       "  bytes promoted and demoted, in N points (a table of %d rows; 360 for\n"
			       "  --json and --png)\n", TEXT_POINTS);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tierctl history: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (json && png) {
		fprintf(stderr, "tierctl history: --json and --png exclude each other\n");
		return 2;
	}
	args = json_object_new_object();
	if (seconds)
		json_object_object_add(args, "seconds", json_object_new_int64(seconds));
	if (points || (!json && !png))
		json_object_object_add(args, "points", json_object_new_int64(points ? points : TEXT_POINTS));
	if (tier_client_call(socket, TIER_CMD_HISTORY, args, CALL_TIMEOUT_MS, &res, &err)) {
		fprintf(stderr, "tierctl history: %s\n", err.msg);
		return 1;
	}
	if (json) {
		tierctl_print_json(res);
		json_object_put(res);
		return 0;
	}
	ret = tierctl_history_parse(res, &h, &err);
	json_object_put(res);
	if (ret) {
		fprintf(stderr, "tierctl history: %s\n", err.msg);
		return 1;
	}
	/* The machine's name for the title: the status has it. */
	snprintf(h.machine, sizeof(h.machine), "?");
	if (!tier_client_call(socket, TIER_CMD_STATUS, NULL, CALL_TIMEOUT_MS, &st, &err)) {
		struct json_object *m;

		if (json_object_object_get_ex(st, "machine", &m))
			snprintf(h.machine, sizeof(h.machine), "%s", json_object_get_string(m));
		json_object_put(st);
	}
	ret = 0;
	if (png) {
		if (tierctl_history_png(&h, png, &err)) {
			fprintf(stderr, "tierctl history: %s\n", err.msg);
			ret = 1;
		}
	} else {
		print_table(&h);
	}
	tierctl_history_release(&h);
	return ret;
}
