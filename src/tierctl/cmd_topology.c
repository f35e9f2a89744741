/* cmd_topology.c - `tierctl topology`: the machine's nodes and tiers. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend/linux/topology.h"
#include "common/config_yaml.h"
#include "common/topology_config.h"
#include "common/topology_out.h"
#include "tierctl/tierctl.h"

static void topology_usage(FILE *out)
{
	fprintf(out,
		"usage: tierctl topology [--sysfs-root DIR] [--config FILE] [--json]\n"
		"  Shows the memory nodes (CPUs, memory, SLIT distances, HMAT latency and\n"
		"  bandwidth, the kernel's memory tier) and how they rank into tiers.\n"
		"  --sysfs-root DIR  read sysfs from DIR instead of the configured root (/sys)\n"
		"  --config FILE     configuration whose tier override applies\n"
		"                    (default " TIERCTL_DEFAULT_CONFIG " when it exists)\n"
		"  --json            print JSON instead of a table\n");
}

const struct option tierctl_topology_opts[] = {
	{ "sysfs-root", required_argument, NULL, 'r' },
	{ "config", required_argument, NULL, 'c' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int tierctl_topology(int argc, char **argv)
{
	const char *root = NULL, *config = NULL;
	struct tier_linux_topology lt;
	struct tier_topology topo;
	struct tier_config cfg;
	struct tier_err err = { "" };
	bool json = false;
	int c, ret, status = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:c:jh", tierctl_topology_opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			root = optarg;
			break;
		case 'c':
			config = optarg;
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
		fprintf(stderr, "tierctl topology: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!config && access(TIERCTL_DEFAULT_CONFIG, F_OK) == 0)
		config = TIERCTL_DEFAULT_CONFIG;
	if (config)
		ret = tier_config_load_file(config, &cfg, &err);
	else
		ret = tier_config_init(&cfg);
	if (ret) {
		fprintf(stderr, "tierctl topology: %s\n", err.msg[0] ? err.msg : "out of memory");
		tier_config_release(&cfg);
		return 1;
	}
	lt.sysfs_root = root ? root : cfg.sysfs_root;
	ret = tier_config_topology_discover(&cfg, &tier_linux_topology_ops, &lt, &topo, &err);
	if (ret) {
		fprintf(stderr, "tierctl topology: %s%s%s\n",
			config && (cfg.nr_tiers || cfg.rank_by == TIER_CONFIG_RANK_MEASURED) ? config : "",
			config && (cfg.nr_tiers || cfg.rank_by == TIER_CONFIG_RANK_MEASURED) ? ": " : "",
			err.msg);
		goto out_cfg;
	}
	if (json) {
		struct json_object *o = tier_topology_to_json(&topo);

		if (!o) {
			fprintf(stderr, "tierctl topology: out of memory\n");
			goto out_topo;
		}
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		tier_topology_print(&topo, stdout);
	}
	status = fflush(stdout) ? 1 : 0;
out_topo:
	tier_topology_release(&topo);
out_cfg:
	tier_config_release(&cfg);
	return status;
}
