/* main.c - tierctl: the tierd command line. Dispatches to one verb; its
 * table of verbs and their options is also what --help lists and what the
 * completion script (tierctl --completion bash) offers. */
#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "common/protocol.h"
#include "tierctl/tierctl.h"

static const struct tier_cli_verb cgroup_verbs[] = {
	{ "set", NULL, "CGROUP [--tier-max RANK=SIZE|PCT]... [--tier-min ...] [--weight N]",
	  "set a control group's shares", tierctl_cgroup_set_opts, NULL },
	{ "show", NULL, "[--json]", "the control groups' rules and usage",
	  tierctl_socket_json_opts, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct tier_cli_verb device_verbs[] = {
	{ "list", NULL, "[--json]", "memory devices: CXL, device-DAX, the nodes they became",
	  tierctl_device_list_opts, NULL },
	{ "online", NULL, "DEV [--tier RANK]", "a devdax device becomes system RAM in a tier",
	  tierctl_device_online_opts, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct tier_cli_verb node_verbs[] = {
	{ "drain", NULL, "NODE [--offline] [--json]",
	  "move every managed page off a node, then offline it", tierctl_node_drain_opts, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct tier_cli_verb verbs[] = {
	{ "topology", tierctl_topology, NULL, "nodes, tiers and firmware figures",
	  tierctl_topology_opts, NULL },
	{ "probe", tierctl_probe, NULL, "measured latency and bandwidth, against firmware claims",
	  tierctl_probe_opts, NULL },
	{ "status", tierctl_status, NULL,
	  "the daemon: managed bytes per tier, migrations, tracker, CPU", tierctl_status_opts,
	  NULL },
	{ "top", tierctl_top, NULL,
	  "live view: tiers, migrations, processes (full screen on a terminal)", tierctl_top_opts,
	  NULL },
	{ "history", tierctl_history, NULL,
	  "the daemon's last hour: tiers' bytes and migrations (--png)", tierctl_history_opts,
	  NULL },
	{ "reload", tierctl_reload, NULL, "the daemon re-reads its configuration",
	  tierctl_reload_opts, NULL },
	{ "hint", tierctl_hint, NULL, "intent for a process's range: hot, cold, pin-fast, default",
	  tierctl_hint_opts, NULL },
	{ "cgroup", tierctl_cgroup, NULL, "control groups' shares of each tier: set, show", NULL,
	  cgroup_verbs },
	{ "heatmap", tierctl_heatmap, NULL,
	  "a managed process's accesses over its addresses and time", tierctl_heatmap_opts, NULL },
	{ "explain", tierctl_explain, NULL, "why tierd placed a process's pages where they are",
	  tierctl_socket_json_opts, NULL },
	{ "device", tierctl_device, NULL, "memory devices (CXL, DAX): list, online into a tier",
	  NULL, device_verbs },
	{ "node", tierctl_node, NULL, "a node: drain (move every managed page off, then offline)",
	  NULL, node_verbs },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

/* Completion words: hint's advice, its fourth operand (offered for any). */
static void words(FILE *out, const char *verb, const char *opt)
{
	const char *name;
	int i;

	if (opt || strcmp(verb, "hint"))
		return;
	for (i = 0; (name = tier_proto_advice_name(i)); i++)
		fprintf(out, "%s%s", i ? " " : "", name);
}

static const struct tier_cli cli = { "tierctl", verbs, words };

int main(int argc, char **argv)
{
	const struct tier_cli_verb *v;

	if (argc < 2) {
		fprintf(stderr, "tierctl: expected a verb (see tierctl --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		tier_cli_usage(&cli, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--completion"))
		return tier_cli_completion(&cli, argc, argv);
	v = tier_cli_find(&cli, argv[1]);
	if (v)
		return v->fn(argc - 1, argv + 1);
	fprintf(stderr, "tierctl: unknown verb '%s' (see tierctl --help)\n", argv[1]);
	return 2;
}
