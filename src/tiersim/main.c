/* main.c - tiersim: the simulated tiered machine's command line. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/engine.h"
#include "backend/sim/machine.h"
#include "backend/sim/workload.h"
#include "core/policy.h"
#include "tiersim/machine_file.h"
#include "tiersim/tiersim.h"
#include "common/cli.h"
#include "common/topology_out.h"

static const struct option list_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int cmd_list(int argc, char **argv)
{
	const struct tier_sim_preset *p;
	struct json_object *root, *arr;
	bool json = false;
	size_t i;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", list_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: tiersim list [--json]\n"
			       "  The machine presets, workloads, policies and trackers.\n");
			return 0;
		default:	/* getopt said what */
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tiersim list: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!json) {
		printf("machine presets (tiers fastest first; latency ns, read/write MB/s, capacity share;\n"
		       "                 CPU costs as the cost model's unless a cpu_slowdown is shown):\n");
		for (p = tier_sim_presets; p->name; p++) {
			printf("  %-14s %s", p->name, p->description);
			if (tier_sim_preset_cpu_slowdown(p) != 1.0)
				printf(" (cpu_slowdown %g)", tier_sim_preset_cpu_slowdown(p));
			printf("\n");
			for (i = 0; i < p->nr_nodes; i++) {
				printf("  %-14s   node %zu %-5s %4u ns %7u/%-7u x%u%s", "", i,
				       p->nodes[i].kind, p->nodes[i].latency_ns,
				       p->nodes[i].read_bw_mbps, p->nodes[i].write_bw_mbps,
				       p->nodes[i].ratio, p->nodes[i].nr_cpus ? " cpus" : "");
				if (p->nodes[i].size_mb)	/* fixed unless --ratio */
					printf(" %llu MiB", (unsigned long long)p->nodes[i].size_mb);
				printf("\n");
			}
		}
		printf("\nworkloads (F = the fastest tier's capacity; also trace:FILE;\n"
		       "           parameters as NAME:key=value[:key=value]):\n");
		for (i = 0; tier_sim_workloads[i]; i++) {
			printf("  %-22s %s\n", tier_sim_workloads[i]->name,
			       tier_sim_workloads[i]->description);
			if (tier_sim_workloads[i]->params)
				printf("  %-22s   parameters (defaults): %s\n", "",
				       tier_sim_workloads[i]->params);
		}
		printf("\npolicies:\n");
		for (i = 0; tier_policies[i]; i++) {
			printf("  %-22s %s (tracker %s)\n", tier_policies[i]->name,
			       tier_policies[i]->description, tier_policies[i]->default_tracker);
			if (tier_policies[i]->variant_of)
				printf("  %-22s   variant of %s: compare runs it only when named\n", "",
				       tier_policies[i]->variant_of);
		}
		printf("  %-22s %s\n", "oracle",
		       "lower bound: each epoch's hottest pages in the fastest tiers, moved for free");
		printf("\ntrackers: none");
		for (i = 0; tier_sim_trackers[i]; i++)
			printf(", %s", tier_sim_trackers[i]);
		printf("\n");
		return 0;
	}
	root = json_object_new_object();
	arr = json_object_new_array();
	for (p = tier_sim_presets; p->name; p++) {
		struct json_object *o = json_object_new_object(), *nodes = json_object_new_array();

		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(o, "description", json_object_new_string(p->description));
		json_object_object_add(o, "cpu_slowdown",
				       json_object_new_double(tier_sim_preset_cpu_slowdown(p)));
		for (i = 0; i < p->nr_nodes; i++) {
			struct json_object *n = json_object_new_object();

			json_object_object_add(n, "kind", json_object_new_string(p->nodes[i].kind));
			json_object_object_add(n, "latency_ns", json_object_new_int64(p->nodes[i].latency_ns));
			json_object_object_add(n, "read_bandwidth_mbps", json_object_new_int64(p->nodes[i].read_bw_mbps));
			json_object_object_add(n, "write_bandwidth_mbps", json_object_new_int64(p->nodes[i].write_bw_mbps));
			json_object_object_add(n, "ratio", json_object_new_int64(p->nodes[i].ratio));
			json_object_object_add(n, "cpus", json_object_new_int(p->nodes[i].nr_cpus));
			if (p->nodes[i].size_mb)
				json_object_object_add(n, "size_mb",
						       json_object_new_uint64(p->nodes[i].size_mb));
			json_object_array_add(nodes, n);
		}
		json_object_object_add(o, "nodes", nodes);
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "machines", arr);
	arr = json_object_new_array();
	for (i = 0; tier_sim_workloads[i]; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(tier_sim_workloads[i]->name));
		json_object_object_add(o, "description",
				       json_object_new_string(tier_sim_workloads[i]->description));
		json_object_object_add(o, "params", tier_sim_workloads[i]->params ?
				       json_object_new_string(tier_sim_workloads[i]->params) : NULL);
		json_object_object_add(o, "named_only",
				       json_object_new_boolean(tier_sim_workloads[i]->named_only));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "workloads", arr);
	arr = json_object_new_array();
	for (i = 0; tier_policies[i]; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(tier_policies[i]->name));
		json_object_object_add(o, "description",
				       json_object_new_string(tier_policies[i]->description));
		json_object_object_add(o, "tracker",
				       json_object_new_string(tier_policies[i]->default_tracker));
		json_object_object_add(o, "variant_of", tier_policies[i]->variant_of ?
				       json_object_new_string(tier_policies[i]->variant_of) : NULL);
		json_object_array_add(arr, o);
	}
	{
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string("oracle"));
		json_object_object_add(o, "description", json_object_new_string("lower bound"));
		json_object_object_add(o, "tracker", json_object_new_string("future"));
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "policies", arr);
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	json_object_put(root);
	return 0;
}

static const struct option topology_opts[] = {
	{ "machine", required_argument, NULL, 'm' },
	{ "ratio", required_argument, NULL, 'r' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void topology_usage(FILE *out)
{
	fprintf(out, "usage: tiersim topology [--machine M] [--ratio R] [--json]\n"
		     "  The nodes and tiers of machine M (default dram-cxl): a preset (tiersim\n"
		     "  list) or file:PATH, a machine file (docs/tiersim.md).\n");
}

static int cmd_topology(int argc, char **argv)
{
	const char *machine = "dram-cxl", *ratio = NULL;
	struct tier_machine_file mf;
	struct tier_sim_machine m;
	struct tier_topology topo;
	struct tier_err err = { "" };
	bool json = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "m:r:jh", topology_opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			machine = optarg;
			break;
		case 'r':
			ratio = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			topology_usage(stdout);
			return 0;
		default:	/* getopt said what */
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tiersim topology: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (tier_machine_file_arg(machine)) {
		int ret = tier_machine_file_load(tier_machine_file_arg(machine), &mf, &err);

		if (ret) {
			fprintf(stderr, "tiersim topology: %s\n", err.msg);
			return ret == -ENOENT || ret == -EINVAL ? 2 : 1;
		}
		machine = mf.name;
		if (tier_sim_machine_from_preset(&m, &mf.preset, ratio, TIER_SIM_UNIT_BYTES_DEFAULT,
						 &err)) {
			fprintf(stderr, "tiersim topology: %s\n", err.msg);
			return 2;
		}
	} else if (tier_sim_machine_init(&m, machine, ratio, TIER_SIM_UNIT_BYTES_DEFAULT, &err)) {
		fprintf(stderr, "tiersim topology: %s\n", err.msg);
		return 2;
	}
	if (tier_topology_discover(&tier_sim_topology_ops, &m, NULL, 0, &topo, &err)) {
		fprintf(stderr, "tiersim topology: %s\n", err.msg);
		return 1;
	}
	if (json) {
		struct json_object *o = tier_topology_to_json(&topo);

		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		printf("machine %s (%s)", machine, m.preset->description);
		if (m.cpu_slowdown != 1.0)
			printf(", CPU costs x%g (cpu_slowdown)", m.cpu_slowdown);
		printf("\n\n");
		tier_topology_print(&topo, stdout);
	}
	tier_topology_release(&topo);
	return 0;
}

static const struct tier_cli_verb verbs[] = {
	{ "list", cmd_list, "[--json]", "machines, workloads, policies, trackers", list_opts,
	  NULL },
	{ "topology", cmd_topology, "[--machine M] [--ratio R] [--json]",
	  "a machine's nodes and tiers (M: a preset, or file:PATH)", topology_opts, NULL },
	{ "run", tiersim_run, "--machine M --workload W --policy P ...",
	  "one simulation (run --help)", tiersim_run_opts, NULL },
	{ "compare", tiersim_compare, "[--machine M] [--ratio R] ...",
	  "workloads x policies (compare --help)", tiersim_compare_opts, NULL },
	{ "convert", tiersim_convert, "--from lackey IN OUT",
	  "valgrind lackey trace -> trace file", tiersim_convert_opts, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

/* Completion words of an option's argument, from the simulator's tables. */
static void words(FILE *out, const char *verb, const char *opt)
{
	const char *sep = "";
	size_t i;

	(void)verb;
	if (!opt)
		return;
	if (!strcmp(opt, "--machine")) {
		const struct tier_sim_preset *p;

		for (p = tier_sim_presets; p->name; p++, sep = " ")
			fprintf(out, "%s%s", sep, p->name);
		fprintf(out, " file:");
	} else if (!strcmp(opt, "--workload") || !strcmp(opt, "--workloads")) {
		for (i = 0; tier_sim_workloads[i]; i++, sep = " ")
			fprintf(out, "%s%s", sep, tier_sim_workloads[i]->name);
		fprintf(out, " trace:");
	} else if (!strcmp(opt, "--policy") || !strcmp(opt, "--policies")) {
		for (i = 0; tier_policies[i]; i++)
			fprintf(out, "%s ", tier_policies[i]->name);
		fprintf(out, "oracle");
	} else if (!strcmp(opt, "--tracker")) {
		fprintf(out, "none");
		for (i = 0; tier_sim_trackers[i]; i++)
			fprintf(out, " %s", tier_sim_trackers[i]);
	} else if (!strcmp(opt, "--from")) {
		fprintf(out, "lackey");
	}
}

static const struct tier_cli cli = { "tiersim", verbs, words };

int main(int argc, char **argv)
{
	const struct tier_cli_verb *v;

	if (argc < 2) {
		fprintf(stderr, "tiersim: expected a verb (see tiersim --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		tier_cli_usage(&cli, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--completion"))
		return tier_cli_completion(&cli, argc, argv);
	v = tier_cli_find(&cli, argv[1]);
	if (v)
		return v->fn(argc - 1, argv + 1);
	fprintf(stderr, "tiersim: unknown verb '%s' (see tiersim --help)\n", argv[1]);
	return 2;
}
