/* cmd_cgroup.c - `tierctl cgroup set|show` and `tierctl explain`: control
 * groups' shares of each tier, and why a page is where it is. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/client.h"
#include "common/topology_out.h"
#include "core/groups.h"
#include "tierctl/tierctl.h"

#define CALL_TIMEOUT_MS 5000

static void cgroup_usage(FILE *out)
{
	fprintf(out,
		"usage: tierctl cgroup set [--socket PATH] CGROUP [--tier-max RANK=SIZE|PCT]...\n"
		"                          [--tier-min RANK=SIZE|PCT]... [--weight N] [--clear]\n"
		"       tierctl cgroup show [--socket PATH] [--json]\n"
		"  CGROUP: a cgroup v2 directory, absolute or relative to the cgroup2 mount\n"
		"  --tier-max 0=128M  cap on the group's bytes in tier 0 (excess demoted)\n"
		"  --tier-min 0=25%%   bytes of tier 0 protected from other groups\n"
		"  RANK=none removes a limit; --weight N (1..%d, 0 removes) splits a contended\n"
		"  tier by weight; --clear drops the rule set with tierctl. See docs/cgroups.md.\n",
		TIER_GROUP_MAX_WEIGHT);
}

const struct option tierctl_cgroup_set_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "tier-max", required_argument, NULL, 'M' },
	{ "tier-min", required_argument, NULL, 'm' },
	{ "weight", required_argument, NULL, 'w' },
	{ "clear", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int cgroup_set(int argc, char **argv)
{
	struct json_object *args = json_object_new_object(), *res;
	struct json_object *mx = json_object_new_array(), *mn = json_object_new_array();
	struct tier_group_rule check;
	struct tier_err err = { "" };
	const char *socket = tierctl_socket();
	bool clear = false, any = false;
	int c, ret = 2;

	memset(&check, 0, sizeof(check));
	optind = 1;
	while ((c = getopt_long(argc, argv, "", tierctl_cgroup_set_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket = optarg;
			break;
		case 'M':
		case 'm':
			if (tier_group_rule_set(&check, c == 'M' ? "max" : "min", optarg, &err)) {
				fprintf(stderr, "tierctl cgroup set: --tier-%s %s\n", c == 'M' ? "max" : "min",
					err.msg);
				goto out;
			}
			json_object_array_add(c == 'M' ? mx : mn, json_object_new_string(optarg));
			any = true;
			break;
		case 'w': {
			uint64_t w;

			if (tierctl_parse_size(optarg, &w) || w > TIER_GROUP_MAX_WEIGHT) {
				fprintf(stderr, "tierctl cgroup set: --weight '%s': expected 0..%d\n", optarg,
					TIER_GROUP_MAX_WEIGHT);
				goto out;
			}
			json_object_object_add(args, "weight", json_object_new_int((int)w));
			any = true;
			break;
		}
		case 'c':
			clear = true;
			break;
		case 'h':
			cgroup_usage(stdout);
			ret = 0;
			goto out;
		default:
			fprintf(stderr, "tierctl cgroup set: see tierctl cgroup --help\n");
			goto out;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "tierctl cgroup set: expected one CGROUP (see tierctl cgroup --help)\n");
		goto out;
	}
	if (!any && !clear) {
		fprintf(stderr, "tierctl cgroup set: nothing to set: give --tier-max, --tier-min, --weight or --clear\n");
		goto out;
	}
	if (clear && any) {
		fprintf(stderr, "tierctl cgroup set: --clear takes no limits\n");
		goto out;
	}
	json_object_object_add(args, "path", json_object_new_string(argv[optind]));
	json_object_object_add(args, "tier_max", json_object_get(mx));
	json_object_object_add(args, "tier_min", json_object_get(mn));
	if (clear)
		json_object_object_add(args, "clear", json_object_new_boolean(true));
	ret = tier_client_call(socket, TIER_CMD_CGROUP_SET, args, CALL_TIMEOUT_MS, &res, &err);
	args = NULL;	/* the call took it */
	if (ret) {
		fprintf(stderr, "tierctl cgroup set: %s\n", err.msg);
		ret = 1;
		goto out;
	}
	json_object_put(res);
	ret = 0;
out:
	json_object_put(args);
	json_object_put(mx);
	json_object_put(mn);
	return ret;
}

static const char *str_or(struct json_object *o, const char *k, const char *dflt)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !v)
		return dflt;
	return json_object_get_string(v);
}

static uint64_t u64_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && v ? (uint64_t)json_object_get_int64(v) : 0;
}

static void print_cgroups(struct json_object *res)
{
	struct json_object *arr;
	size_t i, r;

	if (!json_object_object_get_ex(res, "cgroups", &arr) || !json_object_array_length(arr)) {
		printf("no control-group rules (tierctl cgroup set, or cgroups: in the config)\n");
		return;
	}
	for (i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *g = json_object_array_get_idx(arr, i), *tiers, *v;

		printf("%s%s (%s): %llu managed process%s", i ? "\n" : "", str_or(g, "path", "?"),
		       str_or(g, "dir", "?"), (unsigned long long)u64_of(g, "processes"),
		       u64_of(g, "processes") == 1 ? "" : "es");
		if (json_object_object_get_ex(g, "weight", &v) && v)
			printf(", weight %d", json_object_get_int(v));
		printf("\n");
		if (json_object_object_get_ex(g, "error", &v) && v)
			printf("  %s\n", json_object_get_string(v));
		printf("  %-5s %-12s %-12s %-12s %-16s %-16s\n", "tier", "used", "(anon)", "managed",
		       "max", "min");
		if (!json_object_object_get_ex(g, "tiers", &tiers))
			continue;
		for (r = 0; r < json_object_array_length(tiers); r++) {
			struct json_object *t = json_object_array_get_idx(tiers, r);
			char used[32], anon[32], man[32], mx[48], mn[48], b[32];

			tier_format_bytes(u64_of(t, "used_bytes"), used, sizeof(used));
			tier_format_bytes(u64_of(t, "anon_bytes"), anon, sizeof(anon));
			tier_format_bytes(u64_of(t, "managed_bytes"), man, sizeof(man));
			if (json_object_object_get_ex(t, "max", &v) && v)
				snprintf(mx, sizeof(mx), "%s (%s)", json_object_get_string(v),
					 tier_format_bytes(u64_of(t, "max_bytes"), b, sizeof(b)));
			else
				snprintf(mx, sizeof(mx), "-");
			if (json_object_object_get_ex(t, "min", &v) && v)
				snprintf(mn, sizeof(mn), "%s (%s)", json_object_get_string(v),
					 tier_format_bytes(u64_of(t, "min_bytes"), b, sizeof(b)));
			else
				snprintf(mn, sizeof(mn), "-");
			printf("  %-5d %-12s %-12s %-12s %-16s %-16s%s\n",
			       (int)u64_of(t, "rank"), used, anon, man, mx, mn,
			       json_object_object_get_ex(t, "max_bytes", &v) && v &&
					       u64_of(t, "used_bytes") > u64_of(t, "max_bytes") ? "  over max" : "");
		}
	}
}

const struct option tierctl_socket_json_opts[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parses the options of a verb that has only --socket, --json and --help,
 * leaving optind at its operands; a bad option points at `tierctl HELP
 * --help`. Returns -1 to go on, else the exit status (0 after --help). */
static int parse_socket_json(const char *verb, const char *help, void (*usage)(FILE *out),
			     int argc, char **argv, const char **socket, bool *json)
{
	int c;

	*socket = tierctl_socket();
	*json = false;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", tierctl_socket_json_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			*socket = optarg;
			break;
		case 'j':
			*json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "tierctl %s: see tierctl %s --help\n", verb, help);
			return 2;
		}
	}
	return -1;
}

static int cgroup_show(int argc, char **argv)
{
	const char *socket;
	struct tier_err err = { "" };
	struct json_object *res;
	bool json;
	int ret = parse_socket_json("cgroup show", "cgroup", cgroup_usage, argc, argv, &socket, &json);

	if (ret >= 0)
		return ret;
	if (optind < argc) {
		fprintf(stderr, "tierctl cgroup show: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (tier_client_call(socket, TIER_CMD_CGROUPS, NULL, CALL_TIMEOUT_MS, &res, &err)) {
		fprintf(stderr, "tierctl cgroup show: %s\n", err.msg);
		return 1;
	}
	if (json)
		tierctl_print_json(res);
	else
		print_cgroups(res);
	json_object_put(res);
	return 0;
}

int tierctl_cgroup(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "tierctl cgroup: expected an action, set or show (see tierctl cgroup --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cgroup_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "set"))
		return cgroup_set(argc - 1, argv + 1);
	if (!strcmp(argv[1], "show"))
		return cgroup_show(argc - 1, argv + 1);
	fprintf(stderr, "tierctl cgroup: unknown action '%s' (set, show)\n", argv[1]);
	return 2;
}

static void explain_usage(FILE *out)
{
	fprintf(out, "usage: tierctl explain [--socket PATH] [--json] PID ADDR [LEN]\n"
		     "  Why tierd placed the pages of [ADDR, ADDR+LEN) of PID (at most 64\n"
		     "  pages; LEN default one page): heat, target tier, last move and why.\n");
}

int tierctl_explain(int argc, char **argv)
{
	const char *socket;
	struct json_object *args, *res, *pages;
	struct tier_err err = { "" };
	uint64_t pid, addr, len = 4096;
	bool json;
	size_t i;
	int ret = parse_socket_json("explain", "explain", explain_usage, argc, argv, &socket, &json);

	if (ret >= 0)
		return ret;
	if (argc - optind < 2 || argc - optind > 3) {
		fprintf(stderr, "tierctl explain: expected PID ADDR [LEN] (see tierctl explain --help)\n");
		return 2;
	}
	if (tierctl_parse_size(argv[optind], &pid) || !pid || pid > INT32_MAX) {
		fprintf(stderr, "tierctl explain: PID '%s' is not a process id\n", argv[optind]);
		return 2;
	}
	if (tierctl_parse_size(argv[optind + 1], &addr)) {
		fprintf(stderr, "tierctl explain: ADDR '%s' is not an address\n", argv[optind + 1]);
		return 2;
	}
	if (argc - optind == 3 && (tierctl_parse_size(argv[optind + 2], &len) || !len)) {
		fprintf(stderr, "tierctl explain: LEN '%s' is not a positive size\n", argv[optind + 2]);
		return 2;
	}
	args = json_object_new_object();
	json_object_object_add(args, "pid", json_object_new_uint64(pid));
	json_object_object_add(args, "addr", json_object_new_uint64(addr));
	json_object_object_add(args, "len", json_object_new_uint64(len));
	if (tier_client_call(socket, TIER_CMD_EXPLAIN, args, CALL_TIMEOUT_MS, &res, &err)) {
		fprintf(stderr, "tierctl explain: %s\n", err.msg);
		return 1;
	}
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(res);
		return 0;
	}
	printf("process %llu, policy %s\n", (unsigned long long)pid, str_or(res, "policy", "?"));
	if (json_object_object_get_ex(res, "pages", &pages))
		for (i = 0; i < json_object_array_length(pages); i++) {
			struct json_object *p = json_object_array_get_idx(pages, i), *v;

			printf("%s", str_or(p, "addr", "?"));
			if (!json_object_object_get_ex(p, "managed", &v) || !json_object_get_boolean(v)) {
				printf("  not managed (not mapped, or not yet seen)\n");
				continue;
			}
			printf("  node %s tier %s, hint %s, group %s: heat %.3g/s (long %.3g, recent %.3g), wants tier %s\n",
			       str_or(p, "node", "-"), str_or(p, "tier", "-"), str_or(p, "hint", "?"),
			       str_or(p, "group", "0"),
			       json_object_object_get_ex(p, "heat", &v) ? json_object_get_double(v) : 0.0,
			       json_object_object_get_ex(p, "long_rate", &v) ? json_object_get_double(v) : 0.0,
			       json_object_object_get_ex(p, "short_rate", &v) ? json_object_get_double(v) : 0.0,
			       str_or(p, "target_tier", "-"));
			if (json_object_object_get_ex(p, "huge_page", &v) && json_object_get_boolean(v))
				printf("    in a huge page: moves with its 512 pages\n");
			printf("    %s", str_or(p, "verdict", ""));
			if (json_object_object_get_ex(p, "moved_ago_ms", &v) && v)
				printf("; last move %lld ms ago: %s", (long long)json_object_get_int64(v),
				       str_or(p, "last_move", ""));
			else
				printf("; never moved by tierd");
			printf("\n");
		}
	json_object_put(res);
	return 0;
}
