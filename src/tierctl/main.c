/* main.c - tierctl: the tierd command line. Dispatches to one verb. */
#include <stdio.h>
#include <string.h>

#include "tierctl/tierctl.h"

static const struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} verbs[] = {
	{ "topology", tierctl_topology, "nodes, tiers and firmware figures" },
	{ "probe", tierctl_probe, "measured latency and bandwidth, against firmware claims" },
	{ "status", tierctl_status, "the daemon: managed bytes per tier, migrations, tracker, CPU" },
	{ "top", tierctl_top, "the daemon's status, refreshed" },
	{ "reload", tierctl_reload, "the daemon re-reads its configuration" },
	{ "hint", tierctl_hint, "intent for a process's range: hot, cold, pin-fast, default" },
	{ "cgroup", tierctl_cgroup, "control groups' shares of each tier: set, show" },
	{ "heatmap", tierctl_heatmap, "a managed process's accesses over its addresses and time" },
	{ "explain", tierctl_explain, "why tierd placed a process's pages where they are" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	const struct verb *v;

	fprintf(out, "usage: tierctl VERB [OPTIONS]   (tierctl VERB --help for a verb's options)\n\nverbs:\n");
	for (v = verbs; v->name; v++)
		fprintf(out, "  %-10s %s\n", v->name, v->summary);
}

int main(int argc, char **argv)
{
	const struct verb *v;

	if (argc < 2) {
		fprintf(stderr, "tierctl: expected a verb (see tierctl --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (v = verbs; v->name; v++)
		if (!strcmp(argv[1], v->name))
			return v->fn(argc - 1, argv + 1);
	fprintf(stderr, "tierctl: unknown verb '%s' (see tierctl --help)\n", argv[1]);
	return 2;
}
