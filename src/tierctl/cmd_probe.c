/* cmd_probe.c - `tierctl probe`: measure each memory node's latency and
 * bandwidth, and say where the firmware's claims or the kernel's tier order
 * disagree with the measurement. See docs/probe.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/probe.h"
#include "backend/linux/topology.h"
#include "common/probe_out.h"
#include "tierctl/tierctl.h"

static void probe_usage(FILE *out)
{
	fprintf(out,
		"usage: tierctl probe [--nodes LIST] [--json] [--quick] [--repeats N]\n"
		"                     [--buffer-size SIZE] [--chase-steps N] [--tolerance PCT]\n"
		"                     [--seed N] [--output PATH | --no-save]\n"
		"       tierctl probe --load PATH [--json]\n"
		"  Measures each memory node's idle load latency and streaming read and write\n"
		"  bandwidth from each CPU node, next to the firmware's claims (HMAT, SLIT),\n"
		"  and flags claims and tier orders that the measurement contradicts.\n"
		"  --nodes LIST       nodes to probe, e.g. 1-2 (default: every node with memory;\n"
		"                     each CPU node's reference node is always probed too)\n"
		"  --json             print JSON instead of a table\n"
		"  --quick            small buffer, few samples: for emulators and tests\n"
		"  --repeats N        samples per figure, 1 to 100 (default 11; quick 15)\n"
		"  --buffer-size SIZE buffer per node, K/M/G suffixes (default 8 x LLC,\n"
		"                     256M..1G; quick 32M)\n"
		"  --chase-steps N    dependent loads per latency sample (default 500000)\n"
		"  --tolerance PCT    how far a claimed ratio may be off (default %d)\n"
		"  --seed N           seed of the pointer chain\n"
		"  --output PATH      save the results to PATH (default " TIER_PROBE_DEFAULT_FILE ")\n"
		"  --no-save          do not save the results\n"
		"  --load PATH        show saved results instead of measuring\n",
		TIER_PROBE_TOLERANCE_BP / 100);
}

/* A whole number in [min, max]. */
static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* "64M", "1G", "4096" (bytes). */
static bool parse_size(const char *s, uint64_t *out)
{
	char num[32];
	size_t len = strlen(s);
	unsigned shift = 0;
	uint64_t v;

	if (!len || len >= sizeof(num))
		return false;
	memcpy(num, s, len + 1);
	switch (num[len - 1]) {
	case 'K': case 'k':
		shift = 10;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	default:
		break;
	}
	if (shift)
		num[len - 1] = '\0';
	if (!parse_u64(num, 1, UINT64_MAX >> 30, &v))
		return false;
	*out = v << shift;
	return true;
}

struct progress_ctx {
	bool shown;
};

static void show_progress(void *ctx, const struct tier_probe_progress *p)
{
	struct progress_ctx *pc = ctx;
	unsigned pct = p->nr_steps ? (unsigned)(p->step * 100 / p->nr_steps) : 0;

	if (p->repeat)
		fprintf(stderr, "\r\033[Kprobing node %d from node %d: %s %u/%u (%u%%)",
			p->node, p->initiator, p->stage, p->repeat, p->nr_repeats, pct);
	else
		fprintf(stderr, "\r\033[Kprobing node %d from node %d: %s (%u%%)",
			p->node, p->initiator, p->stage, pct);
	fflush(stderr);
	pc->shown = true;
}

static int print_report(const struct tier_probe_report *r, bool json)
{
	if (json) {
		struct json_object *o = tier_probe_report_to_json(r);

		if (!o) {
			fprintf(stderr, "tierctl probe: out of memory\n");
			return 1;
		}
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		tier_probe_report_print(r, stdout);
	}
	return fflush(stdout) ? 1 : 0;
}

struct probe_args {
	const char *nodes;
	const char *output;
	const char *load;
	bool json, quick, no_save;
	uint64_t repeats, buffer_bytes, chase_steps, seed, tolerance_pct;
	bool have_repeats, have_buffer, have_steps, have_seed, have_tolerance;
};

const struct option tierctl_probe_opts[] = {
	{ "nodes", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "quick", no_argument, NULL, 'q' },
	{ "repeats", required_argument, NULL, 'r' },
	{ "buffer-size", required_argument, NULL, 'b' },
	{ "chase-steps", required_argument, NULL, 's' },
	{ "tolerance", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 'S' },
	{ "output", required_argument, NULL, 'o' },
	{ "no-save", no_argument, NULL, 'N' },
	{ "load", required_argument, NULL, 'l' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct probe_args *a)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:jqr:b:s:t:S:o:Nl:h", tierctl_probe_opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			a->nodes = optarg;
			break;
		case 'j':
			a->json = true;
			break;
		case 'q':
			a->quick = true;
			break;
		case 'r':
			if (!parse_u64(optarg, 1, TIER_PROBE_MAX_SAMPLES, &a->repeats)) {
				fprintf(stderr, "tierctl probe: --repeats: '%s' is not a number from 1 to %d\n",
					optarg, TIER_PROBE_MAX_SAMPLES);
				return 2;
			}
			a->have_repeats = true;
			break;
		case 'b':
			if (!parse_size(optarg, &a->buffer_bytes) ||
			    a->buffer_bytes < (uint64_t)TIER_LINUX_PROBE_LEAST_BUFFER_MB << 20) {
				fprintf(stderr, "tierctl probe: --buffer-size: '%s' is not a size of at least %dM (e.g. 64M, 1G)\n",
					optarg, TIER_LINUX_PROBE_LEAST_BUFFER_MB);
				return 2;
			}
			a->have_buffer = true;
			break;
		case 's':
			if (!parse_u64(optarg, 1, UINT64_MAX, &a->chase_steps)) {
				fprintf(stderr, "tierctl probe: --chase-steps: '%s' is not a positive number\n",
					optarg);
				return 2;
			}
			a->have_steps = true;
			break;
		case 't':
			if (!parse_u64(optarg, 0, 1000, &a->tolerance_pct)) {
				fprintf(stderr, "tierctl probe: --tolerance: '%s' is not a percentage from 0 to 1000\n",
					optarg);
				return 2;
			}
			a->have_tolerance = true;
			break;
		case 'S':
			if (!parse_u64(optarg, 0, UINT64_MAX, &a->seed)) {
				fprintf(stderr, "tierctl probe: --seed: '%s' is not a number\n", optarg);
				return 2;
			}
			a->have_seed = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'N':
			a->no_save = true;
			break;
		case 'l':
			a->load = optarg;
			break;
		case 'h':
			probe_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "tierctl probe: see tierctl probe --help\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tierctl probe: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (a->output && a->no_save) {
		fprintf(stderr, "tierctl probe: --output and --no-save exclude each other\n");
		return 2;
	}
	if (a->output && !*a->output) {
		fprintf(stderr, "tierctl probe: --output: empty path\n");
		return 2;
	}
	if (a->load && (a->nodes || a->output || a->no_save || a->quick || a->have_repeats ||
			a->have_buffer || a->have_steps || a->have_seed || a->have_tolerance)) {
		fprintf(stderr, "tierctl probe: --load only shows saved results; it takes --json alone\n");
		return 2;
	}
	return -1;
}

static int show_saved(const char *path, bool json)
{
	struct tier_probe_report r;
	struct tier_err err = { "" };
	int status;

	tier_probe_report_init(&r);
	if (tier_probe_report_load(path, &r, &err)) {
		fprintf(stderr, "tierctl probe: %s\n", err.msg);
		return 1;
	}
	status = print_report(&r, json);
	tier_probe_report_release(&r);
	return status;
}

int tierctl_probe(int argc, char **argv)
{
	struct probe_args a = { 0 };
	struct tier_linux_topology lt = { .sysfs_root = "/sys" };
	struct progress_ctx pc = { false };
	struct tier_linux_probe lp;
	struct tier_probe_report r;
	struct tier_topology topo;
	struct tier_err err = { "" };
	int *ids = NULL;
	size_t nr_ids = 0;
	int ret, status = 1;

	ret = parse_args(argc, argv, &a);
	if (ret >= 0)
		return ret;
	if (a.load)
		return show_saved(a.load, a.json);

	tier_probe_report_init(&r);
	ret = tier_topology_discover(&tier_linux_topology_ops, &lt, NULL, 0, &topo, &err);
	if (ret) {
		fprintf(stderr, "tierctl probe: %s\n", err.msg);
		return 1;
	}
	if (a.nodes) {
		ret = tier_probe_select_nodes(&topo, a.nodes, &ids, &nr_ids, &err);
		if (ret) {
			fprintf(stderr, "tierctl probe: --nodes: %s\n",
				ret == -ENOMEM ? "out of memory" : err.msg);
			status = ret == -ENOMEM ? 1 : 2;
			goto out_topo;
		}
	}
	ret = tier_probe_plan(&r, &topo, ids, nr_ids, &err);
	if (ret) {
		fprintf(stderr, "tierctl probe: %s\n", err.msg);
		goto out_topo;
	}
	if (a.have_tolerance)
		r.tolerance_bp = (uint32_t)(a.tolerance_pct * 100);

	tier_linux_probe_init(&lp, a.quick);
	if (a.have_repeats)
		lp.nr_repeats = (unsigned)a.repeats;
	if (a.have_buffer)
		lp.buffer_bytes = a.buffer_bytes;
	if (a.have_steps)
		lp.nr_chase_steps = a.chase_steps;
	if (a.have_seed)
		lp.seed = a.seed;
	/* Progress on a terminal only: a pipe or a log file gets the result. */
	if (isatty(STDERR_FILENO)) {
		lp.progress = show_progress;
		lp.progress_ctx = &pc;
	}
	ret = tier_linux_probe_run(&lp, &topo, &r, &err);
	if (pc.shown)
		fprintf(stderr, "\r\033[K");
	if (ret) {
		fprintf(stderr, "tierctl probe: %s\n", err.msg);
		goto out_report;
	}
	tier_probe_judge(&r);

	ret = 0;
	if (!a.no_save)
		ret = tier_probe_report_save(&r, a.output ? a.output : TIER_PROBE_DEFAULT_FILE,
					     &err);
	/* The figures took a while to get: show them even when they could
	 * not be saved. Failing to save where asked (--output) is an error;
	 * at the default place (not root, say) a warning. */
	status = print_report(&r, a.json);
	if (ret) {
		fprintf(stderr, "tierctl probe: not saved: %s%s\n", err.msg,
			a.output ? "" : " (see --output, --no-save)");
		if (a.output)
			status = 1;
	}
out_report:
	tier_probe_report_release(&r);
out_topo:
	free(ids);
	tier_topology_release(&topo);
	return status;
}
