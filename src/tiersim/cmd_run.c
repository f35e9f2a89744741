/* cmd_run.c - `tiersim run` and `tiersim compare`. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/sim/engine.h"
#include "backend/sim/workload.h"
#include "common/topology_out.h"
#include "core/policy.h"
#include "tiersim/machine_file.h"
#include "tiersim/tiersim.h"

struct progress {
	bool tty;
	const char *label;
	size_t idx, total;
};

static void show_progress(void *ctx, double done)
{
	const struct progress *pg = ctx;

	if (!pg->tty)
		return;
	if (pg->total > 1)
		fprintf(stderr, "\r[%zu/%zu] %-44s %3.0f%%", pg->idx + 1, pg->total, pg->label,
			done * 100);
	else
		fprintf(stderr, "\r%-50s %3.0f%%", pg->label, done * 100);
	fflush(stderr);
}

static void clear_progress(const struct progress *pg)
{
	if (pg->tty)
		fprintf(stderr, "\r%80s\r", "");
}

struct json_object *tiersim_result_json(const struct tier_sim_result *r)
{
	struct json_object *o = json_object_new_object(), *m = json_object_new_array();
	size_t i, j;

	json_object_object_add(o, "machine", json_object_new_string(r->machine));
	json_object_object_add(o, "workload", json_object_new_string(r->workload));
	json_object_object_add(o, "policy", json_object_new_string(r->policy));
	json_object_object_add(o, "tracker", json_object_new_string(r->tracker));
	json_object_object_add(o, "amat_ns", json_object_new_double(r->amat_ns));
	json_object_object_add(o, "amat_second_half_ns",
			       r->amat_second_half_ns > 0 ? json_object_new_double(r->amat_second_half_ns)
							  : NULL);
	json_object_object_add(o, "fast_access_ratio", json_object_new_double(r->fast_access_ratio));
	json_object_object_add(o, "migrated_bytes", json_object_new_uint64(r->migrated_bytes));
	json_object_object_add(o, "promoted_bytes", json_object_new_uint64(r->promoted_bytes));
	json_object_object_add(o, "demoted_bytes", json_object_new_uint64(r->demoted_bytes));
	for (i = 0; i < r->nr_tiers; i++) {
		struct json_object *row = json_object_new_array();

		for (j = 0; j < r->nr_tiers; j++)
			json_object_array_add(row, json_object_new_uint64(r->moved_bytes[i][j]));
		json_object_array_add(m, row);
	}
	json_object_object_add(o, "moved_bytes_by_tier", m);
	json_object_object_add(o, "pingpong_pages", json_object_new_uint64(r->pingpong_pages));
	json_object_object_add(o, "policy_cpu_seconds", json_object_new_double(r->policy_cpu_s));
	json_object_object_add(o, "slowdown", json_object_new_double(r->slowdown));
	json_object_object_add(o, "machine_cores", json_object_new_uint64(r->machine_cores));
	json_object_object_add(o, "app_cores", json_object_new_uint64(r->app_cores));
	json_object_object_add(o, "access_seconds", json_object_new_double(r->access_s));
	json_object_object_add(o, "app_stall_seconds", json_object_new_double(r->app_stall_s));
	json_object_object_add(o, "daemon_cpu_seconds", json_object_new_double(r->daemon_cpu_s));
	json_object_object_add(o, "daemon_cpu_on_app_seconds",
			       json_object_new_double(r->daemon_on_app_s));
	json_object_object_add(o, "policy_work_units", json_object_new_uint64(r->policy_work_units));
	json_object_object_add(o, "policy_steps", json_object_new_uint64(r->policy_steps));
	json_object_object_add(o, "policy_resumes", json_object_new_uint64(r->policy_resumes));
	if (r->step_cpu)
		json_object_object_add(o, "policy_step_cpu_seconds",
				       json_object_new_double(r->policy_step_cpu_s));
	json_object_object_add(o, "metadata_bytes", json_object_new_uint64(r->metadata_bytes));
	json_object_object_add(o, "sim_seconds", json_object_new_double(r->sim_time_s));
	json_object_object_add(o, "accesses", json_object_new_uint64(r->accesses));
	json_object_object_add(o, "footprint_pages", json_object_new_uint64(r->footprint_pages));
	json_object_object_add(o, "fast_tier_pages", json_object_new_uint64(r->fast_tier_pages));
	json_object_object_add(o, "thp", json_object_new_boolean(r->thp));
	if (r->thp) {
		json_object_object_add(o, "split_huge_pages", json_object_new_uint64(r->split_units));
		json_object_object_add(o, "tlb_misses", json_object_new_uint64(r->tlb_misses));
	}
	if (r->nr_tenants > 1) {
		struct json_object *ts = json_object_new_array();

		for (i = 0; i < r->nr_tenants; i++) {
			const struct tier_sim_tenant_result *t = &r->tenant[i];
			struct json_object *to = json_object_new_object();
			struct json_object *pg = json_object_new_array(), *pk = json_object_new_array();

			json_object_object_add(to, "tenant", json_object_new_int((int)i));
			json_object_object_add(to, "accesses", json_object_new_uint64(t->accesses));
			json_object_object_add(to, "amat_ns", json_object_new_double(t->amat_ns));
			for (j = 0; j < r->nr_tiers; j++) {
				json_object_array_add(pg, json_object_new_uint64(t->pages[j]));
				json_object_array_add(pk, json_object_new_uint64(t->peak_pages[j]));
			}
			json_object_object_add(to, "pages_by_tier", pg);
			json_object_object_add(to, "peak_pages_by_tier", pk);
			json_object_array_add(ts, to);
		}
		json_object_object_add(o, "tenants", ts);
	}
	return o;
}

/* One line when the fast tier holds the whole footprint: every policy
 * then leaves every page there and gives the same AMAT, which a table of
 * equal figures does not say by itself. */
static void warn_fits(const char *verb, const struct tier_sim_result *r)
{
	if (r->footprint_pages > r->fast_tier_pages)
		return;
	fprintf(stderr,
		"tiersim %s: warning: %s: the fast tier (%llu pages) holds the whole footprint"
		" (%llu pages), so every policy gives the same AMAT (a smaller --unit or --ratio"
		" shows differences)\n",
		verb, r->workload, (unsigned long long)r->fast_tier_pages,
		(unsigned long long)r->footprint_pages);
}

static void print_result(const struct tier_sim_result *r)
{
	char b1[32], b2[32], b3[32];
	size_t i, j;

	printf("machine %s, workload %s, policy %s (tracker %s)%s\n", r->machine, r->workload,
	       r->policy, r->tracker, r->thp ? ", 2 MiB pages (THP)" : "");
	printf("  AMAT               %.2f ns\n", r->amat_ns);
	if (r->amat_second_half_ns > 0)
		printf("  AMAT, second half  %.2f ns\n", r->amat_second_half_ns);
	printf("  slowdown           %.4f (application on %u of %u cores: %.3f s of accesses,"
	       " %.3f s of stalls, %.3f s of daemon CPU, %.3f s of it on its cores)\n",
	       r->slowdown, r->app_cores, r->machine_cores, r->access_s, r->app_stall_s,
	       r->daemon_cpu_s, r->daemon_on_app_s);
	printf("  fast-tier accesses %.2f%%\n", r->fast_access_ratio * 100);
	printf("  accesses           %llu over %.2f s simulated\n",
	       (unsigned long long)r->accesses, r->sim_time_s);
	printf("  migrated           %s (promoted %s, demoted %s)\n",
	       tier_format_bytes(r->migrated_bytes, b1, sizeof(b1)),
	       tier_format_bytes(r->promoted_bytes, b2, sizeof(b2)),
	       tier_format_bytes(r->demoted_bytes, b3, sizeof(b3)));
	for (i = 0; i < r->nr_tiers; i++)
		for (j = 0; j < r->nr_tiers; j++)
			if (r->moved_bytes[i][j])
				printf("    tier %zu -> tier %zu  %s\n", i, j,
				       tier_format_bytes(r->moved_bytes[i][j], b1, sizeof(b1)));
	printf("  ping-pong pages    %llu\n", (unsigned long long)r->pingpong_pages);
	if (r->thp)
		printf("  huge pages split   %llu (4 KiB TLB misses %llu)\n",
		       (unsigned long long)r->split_units, (unsigned long long)r->tlb_misses);
	printf("  policy CPU         %.3f s\n", r->policy_cpu_s);
	printf("  policy steps       %llu", (unsigned long long)r->policy_steps);
	if (r->policy_resumes)
		printf(" (and %llu resumes)", (unsigned long long)r->policy_resumes);
	printf("\n");
	printf("  policy metadata    %s\n", tier_format_bytes(r->metadata_bytes, b1, sizeof(b1)));
	for (i = 0; r->nr_tenants > 1 && i < r->nr_tenants; i++) {
		const struct tier_sim_tenant_result *t = &r->tenant[i];

		printf("  tenant %zu           AMAT %.2f ns over %llu accesses; pages per tier now (most after %llu s):",
		       i, t->amat_ns, (unsigned long long)t->accesses,
		       (unsigned long long)(TIER_SIM_SETTLE_US / 1000000));
		for (j = 0; j < r->nr_tiers; j++)
			printf(" %llu (%llu)", (unsigned long long)t->pages[j],
			       (unsigned long long)t->peak_pages[j]);
		printf("\n");
	}
}

/* Options shared by run and compare. */
struct sim_opts {
	struct tier_sim_params p;
	const char *workloads;
	const char *policies;
	const char *timeline;
	const char *plot;
	bool json;
	long jobs;			/* --jobs; 0: one per CPU this process may use */
	struct tier_groups groups;	/* --cgroup */
};

/* --cgroup TENANT[,tier-max=RANK=AMOUNT][,tier-min=RANK=AMOUNT][,weight=N]:
 * the tenant's rule, in a group of its own. Returns 0 or 2 after saying
 * what is wrong. */
static int parse_cgroup(const char *verb, const char *arg, struct tier_groups *g)
{
	char buf[256], *tok, *save = NULL, *end;
	struct tier_group_rule rule;
	struct tier_err err = { "" };
	unsigned long tenant;
	size_t k;

	if (strlen(arg) >= sizeof(buf)) {
		fprintf(stderr, "tiersim %s: --cgroup: too long\n", verb);
		return 2;
	}
	strcpy(buf, arg);
	memset(&rule, 0, sizeof(rule));
	tok = strtok_r(buf, ",", &save);
	errno = 0;
	tenant = tok ? strtoul(tok, &end, 10) : 0;
	if (!tok || *end || errno || tok[0] == '-' || tenant >= TIER_SIM_MAX_TENANTS) {
		fprintf(stderr, "tiersim %s: --cgroup '%s': expected a tenant 0..%d first\n", verb,
			arg, TIER_SIM_MAX_TENANTS - 1);
		return 2;
	}
	while ((tok = strtok_r(NULL, ",", &save))) {
		int ret = 0;

		if (!strncmp(tok, "tier-max=", 9)) {
			ret = tier_group_rule_set(&rule, "max", tok + 9, &err);
		} else if (!strncmp(tok, "tier-min=", 9)) {
			ret = tier_group_rule_set(&rule, "min", tok + 9, &err);
		} else if (!strncmp(tok, "weight=", 7)) {
			unsigned long w;

			errno = 0;
			w = strtoul(tok + 7, &end, 10);
			if (*end || errno || !w || w > TIER_GROUP_MAX_WEIGHT || tok[7] == '-')
				ret = tier_err_set(&err, -EINVAL, "weight must be 1..%d",
						   TIER_GROUP_MAX_WEIGHT);
			rule.weight = (uint32_t)w;
		} else {
			ret = tier_err_set(&err, -EINVAL, "'%s': expected tier-max=, tier-min= or weight=",
					   tok);
		}
		if (ret) {
			fprintf(stderr, "tiersim %s: --cgroup '%s': %s\n", verb, arg, err.msg);
			return 2;
		}
	}
	if (tier_group_rule_check(&rule, &err)) {
		fprintf(stderr, "tiersim %s: --cgroup '%s': %s\n", verb, arg, err.msg);
		return 2;
	}
	if (g->nr == 0)
		tier_groups_init(g);
	for (k = 1; k < g->nr; k++)
		if (g->owner_group[tenant] == k) {
			fprintf(stderr, "tiersim %s: --cgroup: tenant %lu given twice\n", verb, tenant);
			return 2;
		}
	g->rule[g->nr] = rule;
	g->owner_group[tenant] = (uint8_t)g->nr++;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s[0] || s[0] == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Seconds, possibly fractional ("20", "0.5"). */
static int parse_seconds(const char *s, uint64_t *us)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e6)
		return -EINVAL;
	*us = (uint64_t)(v * 1e6);
	return 0;
}

/* The options of run and compare: the same simulation parameters, one
 * workload and policy or lists of them, a timeline or a plot. */
const struct option tiersim_run_opts[] = {
	{ "machine", required_argument, NULL, 'm' },
	{ "ratio", required_argument, NULL, 'r' },
	{ "workload", required_argument, NULL, 'w' },
	{ "policy", required_argument, NULL, 'p' },
	{ "tracker", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 's' },
	{ "duration", required_argument, NULL, 'd' },
	{ "unit", required_argument, NULL, 'u' },
	{ "budget", required_argument, NULL, 'b' },
	{ "timeline", required_argument, NULL, 'T' },
	{ "json", no_argument, NULL, 'j' },
	{ "thp", no_argument, NULL, 'H' },
	{ "cgroup", required_argument, NULL, 'C' },
	{ "step-cpu", no_argument, NULL, 'S' },
	{ "app-cores", required_argument, NULL, 'A' },
	{ "max-cpu-percent", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option tiersim_compare_opts[] = {
	{ "machine", required_argument, NULL, 'm' },
	{ "ratio", required_argument, NULL, 'r' },
	{ "workloads", required_argument, NULL, 'W' },
	{ "policies", required_argument, NULL, 'P' },
	{ "tracker", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 's' },
	{ "duration", required_argument, NULL, 'd' },
	{ "unit", required_argument, NULL, 'u' },
	{ "budget", required_argument, NULL, 'b' },
	{ "plot", required_argument, NULL, 'L' },
	{ "json", no_argument, NULL, 'j' },
	{ "thp", no_argument, NULL, 'H' },
	{ "cgroup", required_argument, NULL, 'C' },
	{ "jobs", required_argument, NULL, 'J' },
	{ "app-cores", required_argument, NULL, 'A' },
	{ "max-cpu-percent", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parses run's or compare's options (opts, the verb's table) into o.
 * Returns 0 to go on, -1 after --help, 2 after a bad value (said), 3 after
 * an unknown option (getopt said it; the caller adds the usage). */
static int parse_opts(const char *verb, const struct option *opts, int argc, char **argv,
		      struct sim_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->p.machine = "dram-cxl";
	o->p.seed = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o->p.machine = optarg;
			break;
		case 'r':
			o->p.ratio = optarg;
			break;
		case 'w':
			o->p.workload = optarg;
			break;
		case 'W':
			o->workloads = optarg;
			break;
		case 'p':
			o->p.policy = optarg;
			break;
		case 'P':
			o->policies = optarg;
			break;
		case 't':
			o->p.tracker = optarg;
			break;
		case 's':
			if (parse_u64(optarg, &o->p.seed)) {
				fprintf(stderr, "tiersim %s: --seed '%s': expected an unsigned number\n",
					verb, optarg);
				return 2;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &o->p.duration_us)) {
				fprintf(stderr, "tiersim %s: --duration '%s': expected seconds > 0\n",
					verb, optarg);
				return 2;
			}
			break;
		case 'u':
			/* Page granularity: a trace of a few MiB needs units of
			 * a few pages to have a fast tier smaller than itself. */
			if (parse_u64(optarg, &o->p.unit_bytes) || o->p.unit_bytes < 4096 ||
			    o->p.unit_bytes % 4096) {
				fprintf(stderr,
					"tiersim %s: --unit '%s': expected bytes, a multiple of 4096\n",
					verb, optarg);
				return 2;
			}
			break;
		case 'b':
			if (parse_u64(optarg, &o->p.budget_bytes_per_s) || !o->p.budget_bytes_per_s) {
				fprintf(stderr, "tiersim %s: --budget '%s': expected bytes/s > 0\n",
					verb, optarg);
				return 2;
			}
			/* Given, it binds every policy, peers included. */
			o->p.budget_every_policy = true;
			break;
		case 'T':
			o->timeline = optarg;
			break;
		case 'L':
			o->plot = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'J': {
			uint64_t n;

			if (parse_u64(optarg, &n) || n < 1 || n > 1024) {
				fprintf(stderr, "tiersim %s: --jobs '%s': expected 1..1024\n", verb,
					optarg);
				return 2;
			}
			o->jobs = (long)n;
			break;
		}
		case 'S':
			o->p.step_cpu = true;
			break;
		case 'A': {
			uint64_t n;

			if (parse_u64(optarg, &n) || n < 1 || n > 4096) {
				fprintf(stderr, "tiersim %s: --app-cores '%s': expected 1..4096\n",
					verb, optarg);
				return 2;
			}
			o->p.app_cores = (unsigned)n;
			break;
		}
		case 'c': {
			uint64_t n;

			/* The daemon's daemon.max_cpu_percent, and its range. */
			if (parse_u64(optarg, &n) || n < 1 || n > 100) {
				fprintf(stderr, "tiersim %s: --max-cpu-percent '%s': expected 1..100\n",
					verb, optarg);
				return 2;
			}
			o->p.max_cpu_percent = (unsigned)n;
			break;
		}
		case 'H':
			o->p.thp = true;
			break;
		case 'C': {
			int ret = parse_cgroup(verb, optarg, &o->groups);

			if (ret)
				return ret;
			o->p.groups = &o->groups;
			break;
		}
		case 'h':
			return -1;
		default:
			return 3;	/* getopt said what; the caller adds the usage */
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tiersim %s: unexpected argument '%s'\n", verb, argv[optind]);
		return 2;
	}
	return 0;
}

int tiersim_machine_arg(const char *verb, struct tier_sim_params *p,
			struct tier_machine_file *mf)
{
	struct tier_err err = { "" };
	const char *path = tier_machine_file_arg(p->machine);
	const struct tier_sim_preset *m;
	int ret;

	if (path) {
		ret = tier_machine_file_load(path, mf, &err);
		if (ret) {
			fprintf(stderr, "tiersim %s: %s\n", verb, err.msg);
			return ret == -ENOENT || ret == -EINVAL ? 2 : 1;
		}
		p->preset = &mf->preset;
		p->machine = mf->name;
	}
	/* An unknown preset is the run's to report. */
	m = p->preset ? p->preset : tier_sim_preset_find(p->machine);
	if (m && p->app_cores > tier_sim_preset_cores(m)) {
		fprintf(stderr, "tiersim %s: --app-cores %u: the machine '%s' has %u cores\n", verb,
			p->app_cores, p->machine, tier_sim_preset_cores(m));
		return 2;
	}
	return 0;
}

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: tiersim run --machine M [--ratio R] --workload W --policy P [--seed N]\n"
		"                   [--duration SEC] [--tracker T] [--budget BYTES_PER_S]\n"
		"                   [--unit BYTES] [--timeline FILE.csv] [--thp] [--step-cpu] [--json]\n"
		"                   [--app-cores N] [--max-cpu-percent P]\n"
		"                   [--cgroup TENANT[,tier-max=RANK=SIZE|PCT][,tier-min=RANK=SIZE|PCT][,weight=N]]...\n"
		"  Simulates workload W on machine M under policy P (see tiersim list);\n"
		"  M is a preset or file:PATH, a machine file (docs/tiersim.md).\n"
		"  --thp       2 MiB pages (THP) instead of 4 KiB\n"
		"  --step-cpu  also measure this host's CPU in the policy's steps\n"
		"              (policy_step_cpu_seconds; differs from run to run)\n"
		"  --app-cores the machine's cores the application runs on (default: all);\n"
		"              tiering daemons and kernel threads run on the others, if any\n"
		"              (the slowdown's cost model, docs/tiersim.md)\n"
		"  --max-cpu-percent\n"
		"              tierd's CPU share, as the daemon's daemon.max_cpu_percent (default\n"
		"              5): its steps keep to it by their modelled CPU, half of it beside\n"
		"              DAMON; the peers step at their own intervals\n"
		"  --cgroup    a tenant's share of each tier, as tierctl cgroup set (docs/cgroups.md)\n"
		"  --duration  simulated seconds (default 20)\n"
		"  --unit      bytes per ratio unit, a multiple of 4096 (default 32 MiB; for a\n"
		"              trace, sized so the tiers hold its footprint and a quarter more)\n"
		"  --tracker   none|damon|idle|softdirty|samples|hintfault|young|softdirty-rounds[,...]\n"
		"              (default: the policy's); softdirty-rounds is tierd's soft-dirty\n"
		"              tracker (rounds of dated reads; with damon, the daemon's\n"
		"              damon+softdirty), softdirty a plain scan per interval\n"
		"  --budget    bytes/s every policy's moves share, peers' included (a token\n"
		"              bucket of one second); without it tierd keeps to 256 MiB/s\n"
		"              and each peer to its own limits\n");
}

int tiersim_run(int argc, char **argv)
{
	struct sim_opts o;
	struct tier_machine_file mf;
	struct tier_sim_result r;
	struct tier_err err = { "" };
	struct progress pg = { .tty = isatty(2) != 0, .total = 1 };
	char label[128];
	FILE *tl = NULL;
	int ret = parse_opts("run", tiersim_run_opts, argc, argv, &o);

	if (ret) {
		if (ret != 2)
			run_usage(ret < 0 ? stdout : stderr);
		return ret < 0 ? 0 : 2;
	}
	if (!o.p.workload || !o.p.policy) {
		fprintf(stderr, "tiersim run: --workload and --policy are required\n");
		return 2;
	}
	ret = tiersim_machine_arg("run", &o.p, &mf);
	if (ret)
		return ret;
	if (o.timeline) {
		tl = fopen(o.timeline, "w");
		if (!tl) {
			fprintf(stderr, "tiersim run: %s: %s\n", o.timeline, strerror(errno));
			return 1;
		}
		o.p.timeline = tl;
	}
	snprintf(label, sizeof(label), "%s/%s", o.p.workload, o.p.policy);
	pg.label = label;
	o.p.progress = show_progress;
	o.p.progress_ctx = &pg;
	ret = tier_sim_run(&o.p, &r, &err);
	clear_progress(&pg);
	if (tl && fclose(tl) && !ret) {
		fprintf(stderr, "tiersim run: %s: %s\n", o.timeline, strerror(errno));
		return 1;
	}
	if (ret) {
		fprintf(stderr, "tiersim run: %s\n", err.msg);
		return ret == -ENOENT || ret == -EINVAL ? 2 : 1;
	}
	warn_fits("run", &r);
	if (o.json) {
		struct json_object *j = tiersim_result_json(&r);

		printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
		json_object_put(j);
	} else {
		print_result(&r);
	}
	return 0;
}

/* Splits a comma list into a NULL-terminated array (strings in *buf). */
static const char **split_list(const char *list, char **buf, size_t *n)
{
	const char **v;
	char *save = NULL, *tok;
	size_t cap = 1;
	const char *c;

	for (c = list; *c; c++)
		cap += *c == ',';
	*buf = strdup(list);
	v = calloc(cap + 1, sizeof(*v));
	if (!*buf || !v) {
		free(*buf);
		free(v);
		return NULL;
	}
	*n = 0;
	for (tok = strtok_r(*buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		v[(*n)++] = tok;
	return v;
}

/* --- compare's runs, spread over the CPUs -------------------------------- */

/* The CPUs this process may run on (its affinity mask, as taskset or a
 * cpuset leaves it), else the online ones. */
static long usable_cpus(void)
{
	cpu_set_t set;
	long n;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

/* The runs of one compare, taken in order by its workers. Each run is
 * self-contained (its own machine, workload, trackers, policy and random
 * stream, all in its struct tier_sim; the parameters and the machine file
 * are only read), so a run gives the same result on any thread: res[k],
 * ret[k] and err[k] are written only by the worker that ran k, and the
 * table is printed from them in order once every worker is done. */
struct batch {
	const struct sim_opts *o;
	const char **wl, **pol;
	size_t np, total;
	struct tier_sim_result *res;
	int *ret;
	struct tier_err *err;
	bool tty;
	pthread_mutex_t lock;	/* guards next and stop, and stderr's progress line */
	size_t next;		/* the next run to start */
	size_t stop;		/* no run from here on starts (a run here failed) */
};

struct batch_progress {
	struct batch *b;
	struct progress pg;
};

static void batch_progress(void *ctx, double done)
{
	struct batch_progress *bp = ctx;

	pthread_mutex_lock(&bp->b->lock);
	show_progress(&bp->pg, done);
	pthread_mutex_unlock(&bp->b->lock);
}

static void batch_run_one(struct batch *b, size_t k)
{
	struct tier_sim_params p = b->o->p;
	char label[160];
	struct batch_progress bp = {
		.b = b,
		.pg = { .tty = b->tty, .label = label, .idx = k, .total = b->total },
	};

	p.workload = b->wl[k / b->np];
	p.policy = b->pol[k % b->np];
	snprintf(label, sizeof(label), "%s/%s", p.workload, p.policy);
	if (b->tty) {
		p.progress = batch_progress;
		p.progress_ctx = &bp;
	}
	b->ret[k] = tier_sim_run(&p, &b->res[k], &b->err[k]);
}

static void *batch_worker(void *arg)
{
	struct batch *b = arg;

	for (;;) {
		size_t k;

		pthread_mutex_lock(&b->lock);
		k = b->next < b->stop ? b->next++ : b->total;
		pthread_mutex_unlock(&b->lock);
		if (k == b->total)
			return NULL;
		batch_run_one(b, k);
		if (b->ret[k]) {
			pthread_mutex_lock(&b->lock);
			if (k < b->stop)
				b->stop = k;
			pthread_mutex_unlock(&b->lock);
		}
	}
}

/* Runs every workload under every policy into res (row-major, workload
 * by workload) on o->jobs threads (0: one per usable CPU), the calling
 * thread one of them. Runs start in table order and a failure starts no
 * later run, so the failure reported is the first in table order, as one
 * thread would meet it. Returns 0, or the exit status after saying what
 * failed. */
static int run_batch(const struct sim_opts *o, const char **wl, size_t nw, const char **pol,
		     size_t np, struct tier_sim_result *res)
{
	struct batch b = {
		.o = o, .wl = wl, .pol = pol, .np = np, .total = nw * np, .res = res,
		.tty = isatty(2) != 0, .stop = nw * np,
	};
	pthread_t *tids = NULL;
	size_t nthreads, started = 0, k;
	int status = 0;

	nthreads = (size_t)(o->jobs ? o->jobs : usable_cpus());
	if (nthreads > b.total)
		nthreads = b.total;
	b.ret = calloc(b.total, sizeof(*b.ret));
	b.err = calloc(b.total, sizeof(*b.err));
	if (nthreads > 1)
		tids = calloc(nthreads - 1, sizeof(*tids));
	if (!b.ret || !b.err || (nthreads > 1 && !tids)) {
		fprintf(stderr, "tiersim compare: out of memory\n");
		status = 1;
		goto out;
	}
	pthread_mutex_init(&b.lock, NULL);
	/* A thread that cannot be had leaves its share to the others. */
	while (started + 1 < nthreads && !pthread_create(&tids[started], NULL, batch_worker, &b))
		started++;
	batch_worker(&b);
	for (k = 0; k < started; k++)
		pthread_join(tids[k], NULL);
	pthread_mutex_destroy(&b.lock);
	if (b.tty)
		fprintf(stderr, "\r%80s\r", "");
	for (k = 0; k < b.total; k++) {
		if (!b.ret[k])
			continue;
		fprintf(stderr, "tiersim compare: %s on %s: %s\n", pol[k % np], wl[k / np],
			b.err[k].msg);
		status = b.ret[k] == -ENOENT || b.ret[k] == -EINVAL ? 2 : 1;
		break;
	}
out:
	free(tids);
	free(b.err);
	free(b.ret);
	return status;
}

static void compare_usage(FILE *out)
{
	fprintf(out,
		"usage: tiersim compare [--machine M] [--ratio R] [--workloads LIST] [--policies LIST]\n"
		"                       [--seed N] [--duration SEC] [--thp] [--json] [--plot FILE.png]\n"
		"                       [--tracker T] [--budget BYTES_PER_S] [--unit BYTES]\n"
		"                       [--cgroup TENANT[,...]]... [--jobs N] [--app-cores N]\n"
		"                       [--max-cpu-percent P]\n"
		"  Runs every workload under every policy (default: all built-in workloads and\n"
		"  every policy but the named variants, with the oracle) and prints AMAT side\n"
		"  by side; a variant (tpp, damon-fixed-quota, ...: see tiersim list) runs\n"
		"  when --policies names it. --tracker, --budget, --unit, --cgroup,\n"
		"  --app-cores and --max-cpu-percent as for tiersim run (run --help). Each\n"
		"  cell: AMAT in ns, and\n"
		"  the application's slowdown from the tiering work's costs (x1.000: none).\n"
		"  --jobs N    runs at once, each on a thread of its own (default: one per\n"
		"              CPU this process may use; 1 runs them one after another);\n"
		"              the output is the same whatever N\n");
}

int tiersim_compare(int argc, char **argv)
{
	struct sim_opts o;
	struct tier_machine_file mf;
	char *wbuf = NULL, *pbuf = NULL, all_w[1024] = "", all_p[512] = "";
	const char **wl = NULL, **pol = NULL;
	size_t nw = 0, np = 0, i, j;
	struct tier_sim_result *res = NULL;
	int ret = parse_opts("compare", tiersim_compare_opts, argc, argv, &o), status = 1;

	if (ret) {
		if (ret != 2)
			compare_usage(ret < 0 ? stdout : stderr);
		return ret < 0 ? 0 : 2;
	}
	ret = tiersim_machine_arg("compare", &o.p, &mf);
	if (ret)
		return ret;
	/* A workload sized for one machine (gups-guest) only when named. */
	for (i = 0; tier_sim_workloads[i]; i++)
		if (!tier_sim_workloads[i]->named_only)
			snprintf(all_w + strlen(all_w), sizeof(all_w) - strlen(all_w), "%s%s",
				 all_w[0] ? "," : "", tier_sim_workloads[i]->name);
	/* The variants (tpp, damon-fixed-quota, ...) only when named: the
	 * default table is each peer as its upstream runs it. */
	for (i = 0; tier_policies[i]; i++)
		if (!tier_policies[i]->variant_of)
			snprintf(all_p + strlen(all_p), sizeof(all_p) - strlen(all_p), "%s,",
				 tier_policies[i]->name);
	strncat(all_p, "oracle", sizeof(all_p) - strlen(all_p) - 1);
	wl = split_list(o.workloads ? o.workloads : all_w, &wbuf, &nw);
	pol = split_list(o.policies ? o.policies : all_p, &pbuf, &np);
	if (!wl || !pol || !nw || !np) {
		fprintf(stderr, "tiersim compare: empty --workloads or --policies list\n");
		status = 2;
		goto out;
	}
	/* Every name before the first run: a typo at the end of a list would
	 * otherwise show only after minutes of runs before it. */
	for (i = 0; i < nw; i++) {
		struct tier_err err = { "" };

		ret = tier_sim_workload_check(wl[i], &err);
		if (ret == -ENOENT)
			fprintf(stderr, "tiersim compare: unknown workload '%s' (see 'tiersim list')\n",
				wl[i]);
		else if (ret)
			fprintf(stderr, "tiersim compare: %s\n", err.msg);
		if (ret) {
			status = 2;
			goto out;
		}
	}
	for (j = 0; j < np; j++) {
		if (strcmp(pol[j], "oracle") && !tier_policy_find(pol[j])) {
			fprintf(stderr, "tiersim compare: unknown policy '%s' (see 'tiersim list')\n",
				pol[j]);
			status = 2;
			goto out;
		}
	}
	res = calloc(nw * np, sizeof(*res));
	if (!res) {
		fprintf(stderr, "tiersim compare: out of memory\n");
		goto out;
	}
	ret = run_batch(&o, wl, nw, pol, np, res);
	if (ret) {
		status = ret;
		goto out;
	}
	for (i = 0; i < nw; i++)
		warn_fits("compare", &res[i * np]);
	if (o.json) {
		struct json_object *root = json_object_new_object(), *arr = json_object_new_array();

		json_object_object_add(root, "machine", json_object_new_string(o.p.machine));
		json_object_object_add(root, "ratio",
				       o.p.ratio ? json_object_new_string(o.p.ratio) : NULL);
		json_object_object_add(root, "seed", json_object_new_uint64(o.p.seed));
		json_object_object_add(root, "thp", json_object_new_boolean(o.p.thp));
		for (i = 0; i < nw * np; i++)
			json_object_array_add(arr, tiersim_result_json(&res[i]));
		json_object_object_add(root, "results", arr);
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
		json_object_put(root);
	} else {
		printf("AMAT (ns) and the application's slowdown on %s%s%s%s, seed %llu,"
		       " the application on %u of %u cores\n", o.p.machine, o.p.ratio ? " at " : "",
		       o.p.ratio ? o.p.ratio : "", o.p.thp ? " with 2 MiB pages" : "",
		       (unsigned long long)o.p.seed, res[0].app_cores, res[0].machine_cores);
		printf("%-22s", "workload");
		for (j = 0; j < np; j++)
			printf(" %14s", pol[j]);
		printf("\n");
		for (i = 0; i < nw; i++) {
			printf("%-22s", wl[i]);
			for (j = 0; j < np; j++)
				printf(" %7.1f x%.3f", res[i * np + j].amat_ns,
				       res[i * np + j].slowdown);
			printf("\n");
		}
	}
	if (o.plot) {
		struct tier_err err = { "" };

		if (tiersim_plot(o.plot, o.p.machine, wl, nw, pol, np, res, &err)) {
			fprintf(stderr, "tiersim compare: %s\n", err.msg);
			goto out;
		}
	}
	status = 0;
out:
	free(res);
	free(wl);
	free(pol);
	free(wbuf);
	free(pbuf);
	return status;
}
