/* cmd_status.c - `tierctl status`, `tierctl top` and `tierctl reload`:
 * the daemon's state over its control socket. `top` on a terminal is the
 * full-screen view of top.c; into a pipe, or with --json, it prints one
 * status block (or JSON line) per refresh. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/client.h"
#include "common/topology_out.h"
#include "core/config.h"
#include "tierctl/tierctl.h"

#define CALL_TIMEOUT_MS 5000

uint64_t tierctl_json_u64(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v) : 0;
}

double tierctl_json_dbl(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : 0;
}

const char *tierctl_json_str(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : "?";
}

static void print_status(struct json_object *st)
{
	struct json_object *tiers;
	char b1[32], b2[32];
	size_t i, n;

	printf("machine %s, policy %s, tracker %s, %llu process%s, up %.0f s\n",
	       tierctl_json_str(st, "machine"), tierctl_json_str(st, "policy"), tierctl_json_str(st, "tracker"),
	       (unsigned long long)tierctl_json_u64(st, "processes"), tierctl_json_u64(st, "processes") == 1 ? "" : "es",
	       tierctl_json_dbl(st, "uptime_seconds"));
	if (json_object_object_get_ex(st, "tiers", &tiers)) {
		n = json_object_array_length(tiers);
		for (i = 0; i < n; i++) {
			struct json_object *t = json_object_array_get_idx(tiers, i), *nodes;
			char list[128] = "";
			size_t k, len = 0;

			if (json_object_object_get_ex(t, "nodes", &nodes))
				for (k = 0; k < json_object_array_length(nodes); k++)
					len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d",
								k ? "," : "",
								json_object_get_int(json_object_array_get_idx(nodes, k)));
			printf("  tier %llu (node%s %s): %s managed\n",
			       (unsigned long long)tierctl_json_u64(t, "rank"),
			       json_object_array_length(nodes) == 1 ? "" : "s", list,
			       tier_format_bytes(tierctl_json_u64(t, "managed_bytes"), b1, sizeof(b1)));
		}
	}
	printf("  promoted %s, demoted %s, failed moves %llu\n",
	       tier_format_bytes(tierctl_json_u64(st, "promoted_bytes"), b1, sizeof(b1)),
	       tier_format_bytes(tierctl_json_u64(st, "demoted_bytes"), b2, sizeof(b2)),
	       (unsigned long long)tierctl_json_u64(st, "failed_moves"));
	if (tierctl_json_u64(st, "huge_pages") || tierctl_json_u64(st, "split_huge_pages"))
		printf("  huge pages %llu managed, %llu split\n",
		       (unsigned long long)tierctl_json_u64(st, "huge_pages"),
		       (unsigned long long)tierctl_json_u64(st, "split_huge_pages"));
	printf("  tierd CPU %.2f s, metadata %s\n", tierctl_json_dbl(st, "cpu_seconds"),
	       tier_format_bytes(tierctl_json_u64(st, "metadata_bytes"), b1, sizeof(b1)));
	if (json_object_object_get_ex(st, "thread_cpu_seconds", &tiers) &&
	    json_object_get_type(tiers) == json_type_object &&
	    json_object_object_length(tiers) > 0) {
		const char *sep = "  by thread: ";

		json_object_object_foreach(tiers, name, secs) {
			printf("%s%s %.2f s", sep, name, json_object_get_double(secs));
			sep = ", ";
		}
		printf("\n");
	}
	if (json_object_object_get_ex(st, "step_cpu_seconds", &tiers) &&
	    json_object_object_get_ex(tiers, "policy", NULL))
		printf("  steps' CPU %.2f s: tracker %.2f, maps %.2f, placement check %.2f, "
		       "node query %.2f, moves %.2f, policy %.2f\n",
		       tierctl_json_dbl(tiers, "total"), tierctl_json_dbl(tiers, "tracker"),
		       tierctl_json_dbl(tiers, "maps"), tierctl_json_dbl(tiers, "placement_check"),
		       tierctl_json_dbl(tiers, "node_query"), tierctl_json_dbl(tiers, "moves"),
		       tierctl_json_dbl(tiers, "policy"));
	if (tierctl_json_dbl(st, "refresh_interval_ms") > 0)
		printf("  processes and their mappings re-read every %.1f s\n",
		       tierctl_json_dbl(st, "refresh_interval_ms") / 1000);
	if (tierctl_json_dbl(st, "move_page_ns") > 0)
		printf("  a page move costs %.1f us of tierd's CPU here\n",
		       tierctl_json_dbl(st, "move_page_ns") / 1000);
	if (json_object_object_get_ex(st, "kdamond_cpu_seconds", &tiers))
		printf("  kdamond CPU %.2f s, together %.2f s\n", tierctl_json_dbl(st, "kdamond_cpu_seconds"),
		       tierctl_json_dbl(st, "system_cpu_seconds"));
	if (json_object_object_get_ex(st, "tracker_workload_faults", &tiers))
		printf("  tracking cost the managed processes %llu faults, %.2f s of their CPU (rounds of %llu ms)\n",
		       (unsigned long long)tierctl_json_u64(st, "tracker_workload_faults"),
		       tierctl_json_dbl(st, "tracker_workload_fault_seconds"),
		       (unsigned long long)tierctl_json_u64(st, "tracker_period_ms"));
	if (json_object_object_get_ex(st, "amat_ns", &tiers))
		printf("  simulated application: AMAT %.1f ns, %.1f%% of accesses served by tier 0\n",
		       tierctl_json_dbl(st, "amat_ns"), tierctl_json_dbl(st, "fast_access_ratio") * 100);
	/* Nodes being drained (docs/devices.md). */
	if (json_object_object_get_ex(st, "drains", &tiers))
		for (i = 0; i < json_object_array_length(tiers); i++) {
			struct json_object *dr = json_object_array_get_idx(tiers, i);

			printf("  node %llu %s: %s moved off, %s left, %.1f s\n",
			       (unsigned long long)tierctl_json_u64(dr, "node"),
			       !strcmp(tierctl_json_str(dr, "state"), "done") ? "drained" : "draining",
			       tier_format_bytes(tierctl_json_u64(dr, "moved_bytes"), b1, sizeof(b1)),
			       tier_format_bytes(tierctl_json_u64(dr, "left_bytes"), b2, sizeof(b2)),
			       tierctl_json_dbl(dr, "seconds"));
		}
}

struct common_opts {
	const char *socket;
	bool json;
	int interval_ms;
	long iterations;
};

const struct option tierctl_status_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option tierctl_top_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "interval", required_argument, NULL, 'i' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option tierctl_reload_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parses the options of status, top or reload (opts, the verb's table). */
static int parse(const char *verb, int argc, char **argv, struct common_opts *o,
		 const struct option *opts)
{
	bool top = opts == tierctl_top_opts;
	char *end;
	int c;

	o->socket = tierctl_socket();
	o->json = false;
	o->interval_ms = 1000;
	o->iterations = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'i':
			if ((o->interval_ms = (int)strtol(optarg, &end, 10), *end) ||
			    o->interval_ms < 100) {
				fprintf(stderr, "tierctl %s: --interval '%s': expected milliseconds >= 100\n",
					verb, optarg);
				return 2;
			}
			break;
		case 'n':
			if ((o->iterations = strtol(optarg, &end, 10), *end) || o->iterations < 1) {
				fprintf(stderr, "tierctl %s: --iterations '%s': expected a count >= 1\n",
					verb, optarg);
				return 2;
			}
			break;
		case 'h':
			printf("usage: tierctl %s [--socket PATH]%s%s\n", verb,
			       top ? " [--interval MS] [--iterations N]" : "",
			       opts != tierctl_reload_opts ? " [--json]" : "");
			if (top)
				printf("  on a terminal: a full-screen view (keys: q quit, m/h/p/c sort by managed\n"
				       "  bytes, hot bytes, pid, CPU; + and - slow and quicken the refresh);\n"
				       "  otherwise, or with --json, one status block (JSON line) per refresh.\n"
				       "  --iterations N: stop after N refreshes. Exit status 1 when tierd\n"
				       "  is gone, with one line on stderr (a slow answer is waited for).\n");
			return -1;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tierctl %s: unexpected argument '%s'\n", verb, argv[optind]);
		return 2;
	}
	return 0;
}

int tierctl_status(int argc, char **argv)
{
	struct common_opts o;
	struct json_object *res;
	struct tier_err err = { "" };
	int ret = parse("status", argc, argv, &o, tierctl_status_opts);

	if (ret)
		return ret < 0 ? 0 : ret;
	ret = tier_client_call(o.socket, TIER_CMD_STATUS, NULL, CALL_TIMEOUT_MS, &res, &err);
	if (ret) {
		fprintf(stderr, "tierctl status: %s\n", err.msg);
		return 1;
	}
	if (o.json)
		printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
	else
		print_status(res);
	json_object_put(res);
	return 0;
}

int tierctl_top(int argc, char **argv)
{
	struct common_opts o;
	bool tty = isatty(1) && isatty(0);
	long i;
	int ret = parse("top", argc, argv, &o, tierctl_top_opts);

	if (ret)
		return ret < 0 ? 0 : ret;
	if (tty && !o.json)
		return tierctl_top_screen(o.socket, o.interval_ms, o.iterations);
	for (i = 0; o.iterations < 0 || i < o.iterations; i++) {
		struct json_object *res;
		struct tier_err err = { "" };
		struct timespec ts = { o.interval_ms / 1000, (o.interval_ms % 1000) * 1000000L };

		if (i)
			nanosleep(&ts, NULL);
		ret = tier_client_call(o.socket, TIER_CMD_STATUS, NULL, CALL_TIMEOUT_MS, &res, &err);
		if (ret) {
			fprintf(stderr, "tierctl top: %s\n", err.msg);
			return 1;
		}
		if (o.json) {
			printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
		} else {
			print_status(res);
			printf("\n");
		}
		fflush(stdout);
		json_object_put(res);
	}
	return 0;
}

int tierctl_reload(int argc, char **argv)
{
	struct common_opts o;
	struct json_object *res;
	struct tier_err err = { "" };
	int ret = parse("reload", argc, argv, &o, tierctl_reload_opts);

	if (ret)
		return ret < 0 ? 0 : ret;
	ret = tier_client_call(o.socket, TIER_CMD_RELOAD, NULL, CALL_TIMEOUT_MS, &res, &err);
	if (ret) {
		fprintf(stderr, "tierctl reload: %s\n", err.msg);
		return 1;
	}
	json_object_put(res);
	printf("tierd reloaded its configuration\n");
	return 0;
}

const char *tierctl_socket(void)
{
	return getenv("TIERD_SOCKET") ? getenv("TIERD_SOCKET") : TIER_CONFIG_DEFAULT_SOCKET;
}

void tierctl_print_json(struct json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
}

int tierctl_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s[0] || s[0] == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	default: break;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

const struct option tierctl_hint_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int tierctl_hint(int argc, char **argv)
{
	const char *socket = tierctl_socket();
	struct json_object *args, *res;
	struct tier_err err = { "" };
	uint64_t pid, addr, len;
	int i, c, first, advice;

	optind = 1;
	/* '+': stop at the first operand (an ADDR never starts with '-'). */
	while ((c = getopt_long(argc, argv, "+h", tierctl_hint_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket = optarg;
			break;
		case 'h':
			printf("usage: tierctl hint [--socket PATH] PID ADDR LEN hot|cold|pin-fast|latency|bandwidth|default\n"
			       "  ADDR: 0x-prefixed hex or decimal; LEN: bytes with K/M/G suffixes\n");
			return 0;
		default:
			fprintf(stderr, "tierctl hint: see tierctl hint --help\n");
			return 2;
		}
	}
	first = optind;
	if (argc - first != 4) {
		fprintf(stderr, "tierctl hint: expected PID ADDR LEN ADVICE (see tierctl hint --help)\n");
		return 2;
	}
	if (tierctl_parse_size(argv[first], &pid) || !pid || pid > INT32_MAX) {
		fprintf(stderr, "tierctl hint: PID '%s' is not a process id\n", argv[first]);
		return 2;
	}
	if (tierctl_parse_size(argv[first + 1], &addr)) {
		fprintf(stderr, "tierctl hint: ADDR '%s' is not an address\n", argv[first + 1]);
		return 2;
	}
	if (tierctl_parse_size(argv[first + 2], &len) || !len) {
		fprintf(stderr, "tierctl hint: LEN '%s' is not a positive size\n", argv[first + 2]);
		return 2;
	}
	if (addr + len < addr) {
		fprintf(stderr, "tierctl hint: ADDR %s + LEN %s runs past the end of the address space\n",
			argv[first + 1], argv[first + 2]);
		return 2;
	}
	advice = tier_proto_advice_parse(argv[first + 3]);
	if (advice < 0) {
		fprintf(stderr, "tierctl hint: unknown advice '%s' (" TIER_PROTO_ADVICES ")\n",
			argv[first + 3]);
		return 2;
	}
	args = json_object_new_object();
	json_object_object_add(args, "pid", json_object_new_uint64(pid));
	json_object_object_add(args, "addr", json_object_new_uint64(addr));
	json_object_object_add(args, "len", json_object_new_uint64(len));
	json_object_object_add(args, "advice", json_object_new_string(tier_proto_advice_name(advice)));
	i = tier_client_call(socket, TIER_CMD_HINT, args, CALL_TIMEOUT_MS, &res, &err);
	if (i) {
		fprintf(stderr, "tierctl hint: %s\n", err.msg);
		return 1;
	}
	json_object_put(res);
	return 0;
}
