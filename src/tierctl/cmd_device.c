/* cmd_device.c - memory devices as tiered nodes (docs/devices.md):
 *   tierctl device list [--json]
 *   tierctl device online DEV [--tier RANK]
 *   tierctl node drain NODE [--offline] [--json]
 * The devices through libdaxctl and libcxl (backend/linux/devices.h); the
 * tier placement and the drain by tierd over its socket. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/devices.h"
#include "backend/linux/topology.h"
#include "common/client.h"
#include "common/topology_out.h"
#include "core/ops.h"
#include "tierctl/tierctl.h"

#define CALL_TIMEOUT_MS 10000
#define SYSFS "/sys"

/* The rank tierd places node in, from its status; -1 when in none, -2
 * when tierd does not answer. *nr_tiers gets its number of tiers. */
static int tierd_rank(struct json_object *status, int node, int *nr_tiers)
{
	struct json_object *tiers, *t, *nodes;
	size_t r, k;

	if (!status)
		return -2;
	if (!json_object_object_get_ex(status, "tiers", &tiers))
		return -1;
	if (nr_tiers)
		*nr_tiers = (int)json_object_array_length(tiers);
	for (r = 0; r < json_object_array_length(tiers); r++) {
		t = json_object_array_get_idx(tiers, r);
		if (!json_object_object_get_ex(t, "nodes", &nodes))
			continue;
		for (k = 0; k < json_object_array_length(nodes); k++)
			if (json_object_get_int(json_object_array_get_idx(nodes, k)) == node)
				return (int)r;
	}
	return -1;
}

static struct json_object *tierd_status(void)
{
	struct json_object *res = NULL;
	struct tier_err err = { "" };

	if (tier_client_call(tierctl_socket(), TIER_CMD_STATUS, NULL, CALL_TIMEOUT_MS, &res, &err))
		return NULL;
	return res;
}

/* --- device list ------------------------------------------------------------ */

static struct json_object *hmat_json(const struct tier_node *n)
{
	struct json_object *h;

	if (!n || !n->has_hmat)
		return NULL;
	h = json_object_new_object();
	json_object_object_add(h, "read_latency_ns", json_object_new_int64(n->hmat.read_latency_ns));
	json_object_object_add(h, "write_latency_ns", json_object_new_int64(n->hmat.write_latency_ns));
	json_object_object_add(h, "read_bandwidth_mbps", json_object_new_int64(n->hmat.read_bw_mbps));
	json_object_object_add(h, "write_bandwidth_mbps", json_object_new_int64(n->hmat.write_bw_mbps));
	return h;
}

static struct json_object *int_or_null(int v)
{
	return v < 0 ? NULL : json_object_new_int(v);
}

static struct json_object *list_json(const struct tier_devices *devs,
				     const struct tier_topology *topo, struct json_object *status)
{
	struct json_object *o = json_object_new_object(), *dax = json_object_new_array();
	struct json_object *cxl = json_object_new_object(), *mds = json_object_new_array();
	struct json_object *regs = json_object_new_array();
	size_t i;

	for (i = 0; i < devs->nr_dax; i++) {
		const struct tier_dax_dev *x = &devs->dax[i];
		const struct tier_node *n = topo ? tier_topology_node(topo, x->target_node) : NULL;
		struct json_object *e = json_object_new_object();
		bool ram = !strcmp(x->mode, "system-ram");
		int blocks = 0, online = 0;

		json_object_object_add(e, "name", json_object_new_string(x->name));
		json_object_object_add(e, "region", json_object_new_int(x->region_id));
		json_object_object_add(e, "mode", json_object_new_string(x->mode));
		json_object_object_add(e, "size_bytes", json_object_new_uint64(x->size_bytes));
		json_object_object_add(e, "target_node", int_or_null(x->target_node));
		if (ram && x->target_node >= 0)
			tier_linux_node_blocks(SYSFS, x->target_node, &blocks, &online);
		json_object_object_add(e, "node", ram ? int_or_null(x->target_node) : NULL);
		json_object_object_add(e, "memory_blocks", json_object_new_int(ram ? x->blocks : 0));
		json_object_object_add(e, "online_blocks", json_object_new_int(ram ? x->online_blocks : 0));
		json_object_object_add(e, "block_bytes", json_object_new_uint64(x->block_bytes));
		json_object_object_add(e, "movable", json_object_new_boolean(ram && x->movable));
		json_object_object_add(e, "hmat", hmat_json(ram ? n : NULL));
		json_object_object_add(e, "kernel_tier",
				       int_or_null(ram && n ? n->kernel_tier : -1));
		json_object_object_add(e, "tier",
				       int_or_null(ram ? tierd_rank(status, x->target_node, NULL) : -1));
		json_object_array_add(dax, e);
	}
	for (i = 0; i < devs->nr_memdevs; i++) {
		const struct tier_cxl_memdev *m = &devs->memdevs[i];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "name", json_object_new_string(m->name));
		json_object_object_add(e, "host", json_object_new_string(m->host));
		json_object_object_add(e, "ram_bytes", json_object_new_uint64(m->ram_bytes));
		json_object_object_add(e, "pmem_bytes", json_object_new_uint64(m->pmem_bytes));
		json_object_object_add(e, "numa_node", int_or_null(m->numa_node));
		json_object_object_add(e, "serial", json_object_new_uint64(m->serial));
		json_object_object_add(e, "firmware", json_object_new_string(m->firmware));
		json_object_array_add(mds, e);
	}
	for (i = 0; i < devs->nr_regions; i++) {
		const struct tier_cxl_region *r = &devs->regions[i];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "name", json_object_new_string(r->name));
		json_object_object_add(e, "decoder", json_object_new_string(r->decoder));
		json_object_object_add(e, "mode", json_object_new_string(r->mode));
		json_object_object_add(e, "size_bytes", json_object_new_uint64(r->size_bytes));
		json_object_object_add(e, "enabled", json_object_new_boolean(r->enabled));
		json_object_array_add(regs, e);
	}
	json_object_object_add(cxl, "memdevs", mds);
	json_object_object_add(cxl, "regions", regs);
	if (devs->cxl_note[0])
		json_object_object_add(cxl, "note", json_object_new_string(devs->cxl_note));
	json_object_object_add(o, "dax", dax);
	json_object_object_add(o, "cxl", cxl);
	json_object_object_add(o, "tierd", json_object_new_boolean(status != NULL));
	return o;
}

static void list_print(struct json_object *o)
{
	struct json_object *dax, *cxl, *a, *e, *v;
	char sz[32];
	size_t i;

	json_object_object_get_ex(o, "dax", &dax);
	printf("device-DAX:%s\n", json_object_array_length(dax) ? "" : " none");
	for (i = 0; i < json_object_array_length(dax); i++) {
		e = json_object_array_get_idx(dax, i);
		printf("  %-8s %-10s %9s", json_object_get_string(json_object_object_get(e, "name")),
		       json_object_get_string(json_object_object_get(e, "mode")),
		       tier_format_bytes(tierctl_json_u64(e, "size_bytes"), sz, sizeof(sz)));
		v = json_object_object_get(e, "target_node");
		if (v)
			printf("  target node %d", json_object_get_int(v));
		if (json_object_object_get(e, "node")) {
			printf(", %d/%d blocks online%s",
			       json_object_get_int(json_object_object_get(e, "online_blocks")),
			       json_object_get_int(json_object_object_get(e, "memory_blocks")),
			       json_object_get_boolean(json_object_object_get(e, "movable")) ?
				       " (movable)" : "");
			v = json_object_object_get(e, "hmat");
			if (v)
				printf(", HMAT %lld ns %lld MB/s",
				       (long long)tierctl_json_u64(v, "read_latency_ns"),
				       (long long)tierctl_json_u64(v, "read_bandwidth_mbps"));
			v = json_object_object_get(e, "kernel_tier");
			if (v)
				printf(", memory_tier%d", json_object_get_int(v));
			v = json_object_object_get(e, "tier");
			if (v)
				printf(", tierd tier %d", json_object_get_int(v));
		}
		printf("\n");
	}
	json_object_object_get_ex(o, "cxl", &cxl);
	json_object_object_get_ex(cxl, "memdevs", &a);
	printf("CXL memory devices:%s\n", json_object_array_length(a) ? "" : " none");
	for (i = 0; i < json_object_array_length(a); i++) {
		e = json_object_array_get_idx(a, i);
		printf("  %-8s ram %s", json_object_get_string(json_object_object_get(e, "name")),
		       tier_format_bytes(tierctl_json_u64(e, "ram_bytes"), sz, sizeof(sz)));
		printf(", pmem %s, %s\n", tier_format_bytes(tierctl_json_u64(e, "pmem_bytes"), sz, sizeof(sz)),
		       json_object_get_string(json_object_object_get(e, "host")));
	}
	json_object_object_get_ex(cxl, "regions", &a);
	printf("CXL regions:%s\n", json_object_array_length(a) ? "" : " none");
	for (i = 0; i < json_object_array_length(a); i++) {
		e = json_object_array_get_idx(a, i);
		printf("  %-8s %s %s in %s%s\n", json_object_get_string(json_object_object_get(e, "name")),
		       json_object_get_string(json_object_object_get(e, "mode")),
		       tier_format_bytes(tierctl_json_u64(e, "size_bytes"), sz, sizeof(sz)),
		       json_object_get_string(json_object_object_get(e, "decoder")),
		       json_object_get_boolean(json_object_object_get(e, "enabled")) ? "" : " (disabled)");
	}
	if (json_object_object_get_ex(cxl, "note", &v))
		printf("  (%s)\n", json_object_get_string(v));
	if (!json_object_get_boolean(json_object_object_get(o, "tierd")))
		printf("tierd is not running: no tier placement shown\n");
}

const struct option tierctl_device_list_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int device_list(int argc, char **argv)
{
	const struct option *opts = tierctl_device_list_opts;
	struct tier_linux_topology lt = { .sysfs_root = SYSFS };
	struct tier_devices devs;
	struct tier_topology topo;
	struct tier_err err = { "" }, terr = { "" };
	struct json_object *status, *o;
	bool json = false, have_topo;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: tierctl device list [--json]\n"
			       "  the memory devices that are or could be tiered nodes: device-DAX\n"
			       "  devices (mode, node, memory blocks, firmware figures, tier) and\n"
			       "  CXL memory devices and regions\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tierctl device list: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	ret = tier_linux_devices_read(&devs, &err);
	if (ret) {
		fprintf(stderr, "tierctl device list: %s\n", err.msg);
		tier_linux_devices_release(&devs);
		return 1;
	}
	have_topo = !tier_topology_build(&tier_linux_topology_ops, &lt, NULL, &topo, &terr);
	status = tierd_status();
	o = list_json(&devs, have_topo ? &topo : NULL, status);
	if (json)
		tierctl_print_json(o);
	else
		list_print(o);
	json_object_put(o);
	if (status)
		json_object_put(status);
	if (have_topo)
		tier_topology_release(&topo);
	tier_linux_devices_release(&devs);
	return 0;
}

/* --- device online ----------------------------------------------------------- */

static bool parse_int(const char *s, long max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return false;
	*out = (int)v;
	return true;
}

const struct option tierctl_device_online_opts[] = {
	{ "tier", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int device_online(int argc, char **argv)
{
	const struct option *opts = tierctl_device_online_opts;
	struct tier_err err = { "" };
	struct json_object *status, *args, *res;
	int c, ret, rank = -1, node = -1, nr_tiers = 0, kernel_tier = -1;
	const char *dev;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!parse_int(optarg, TIER_MAX_TIERS - 1, &rank)) {
				fprintf(stderr, "tierctl device online: bad --tier '%s': a tier rank 0..%d\n",
					optarg, TIER_MAX_TIERS - 1);
				return 2;
			}
			break;
		case 'h':
			printf("usage: tierctl device online DEV [--tier RANK]\n"
			       "  makes devdax device DEV (dax0.0) system RAM on its node, movable,\n"
			       "  and has tierd place the node in tier RANK (default: the kernel's\n"
			       "  tier; RANK = the number of tiers makes a new slowest tier)\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "tierctl device online: %s (usage: tierctl device online DEV [--tier RANK])\n",
			optind == argc ? "no device given" : "one device at a time");
		return 2;
	}
	dev = argv[optind];
	/* What can be checked comes before anything changes: the tier asked
	 * for must exist (or be the next new one). */
	status = tierd_status();
	if (status && rank >= 0) {
		tierd_rank(status, -1, &nr_tiers);
		if (rank > nr_tiers) {
			fprintf(stderr, "tierctl device online: tierd has %d tiers: --tier %d must be 0..%d (%d: a new slowest tier)\n",
				nr_tiers, rank, nr_tiers, nr_tiers);
			json_object_put(status);
			return 1;
		}
	}
	ret = tier_linux_dax_online(SYSFS, dev, &node, &err);
	if (ret) {
		fprintf(stderr, "tierctl device online: %s\n", err.msg);
		if (status)
			json_object_put(status);
		return 1;
	}
	{
		struct tier_linux_topology lt = { .sysfs_root = SYSFS };
		struct tier_topology topo;
		struct tier_err terr;

		if (!tier_topology_build(&tier_linux_topology_ops, &lt, NULL, &topo, &terr)) {
			const struct tier_node *n = tier_topology_node(&topo, node);

			kernel_tier = n ? n->kernel_tier : -1;
			tier_topology_release(&topo);
		}
	}
	printf("%s: system RAM on node %d, movable", dev, node);
	if (kernel_tier >= 0)
		printf("; the kernel put it in its memory_tier%d", kernel_tier);
	printf("\n");
	if (!status) {
		printf("tierd is not running: node %d is in the kernel's tier; to have tierd place it in a tier at start, list %s under devices: in its configuration\n",
		       node, dev);
		return 0;
	}
	json_object_put(status);
	args = json_object_new_object();
	json_object_object_add(args, "node", json_object_new_int(node));
	json_object_object_add(args, "rank", json_object_new_int(rank));
	ret = tier_client_call(tierctl_socket(), TIER_CMD_NODE_TIER, args, CALL_TIMEOUT_MS, &res, &err);
	if (ret) {
		fprintf(stderr, "tierctl device online: %s is online on node %d, but tierd did not place it: %s\n",
			dev, node, err.msg);
		return 1;
	}
	json_object_put(res);
	status = tierd_status();
	rank = tierd_rank(status, node, NULL);
	if (status)
		json_object_put(status);
	printf("tierd places node %d in tier %d and uses it from its next step", node, rank);
	if (kernel_tier >= 0)
		printf(" (tierd's own placement: the kernel offers no way to move a node between its memory tiers from user space, so its own demotion still sees memory_tier%d)",
		       kernel_tier);
	printf("\n");
	return 0;
}

int tierctl_device(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout,
			"usage: tierctl device list [--json]\n"
			"       tierctl device online DEV [--tier RANK]\n");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "list"))
		return device_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "online"))
		return device_online(argc - 1, argv + 1);
	fprintf(stderr, "tierctl device: unknown action '%s' (list, online)\n", argv[1]);
	return 2;
}

/* --- node drain ----------------------------------------------------------- */

static void progress_bar(struct json_object *p)
{
	uint64_t start = tierctl_json_u64(p, "start_bytes"), moved = tierctl_json_u64(p, "moved_bytes");
	uint64_t left = tierctl_json_u64(p, "left_bytes"), total = moved + left;
	char a[32], b[32];
	int pct = total ? (int)(moved * 100 / total) : 100, k;

	(void)start;
	printf("\rnode %d [", json_object_get_int(json_object_object_get(p, "node")));
	for (k = 0; k < 30; k++)
		putchar(k < pct * 30 / 100 ? '#' : '.');
	printf("] %3d%%  %s moved, %s left  %.1f s ", pct, tier_format_bytes(moved, a, sizeof(a)),
	       tier_format_bytes(left, b, sizeof(b)),
	       json_object_get_double(json_object_object_get(p, "seconds")));
	fflush(stdout);
}

const struct option tierctl_node_drain_opts[] = {
	{ "offline", no_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int node_drain(int argc, char **argv)
{
	const struct option *opts = tierctl_node_drain_opts;
	struct tier_err err = { "" };
	struct json_object *args, *res = NULL;
	bool offline = false, json = false, bar;
	char devname[64];
	int c, ret, node, busy = 0;
	uint64_t last = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ojh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			offline = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: tierctl node drain NODE [--offline] [--json]\n"
			       "  tierd stops placing pages on NODE and moves every managed page off\n"
			       "  it to the next tiers; with --offline its memory blocks then go\n"
			       "  offline (a device-DAX device's go back to devdax)\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc || !parse_int(argv[optind], TIER_MAX_NODES - 1, &node)) {
		fprintf(stderr, "tierctl node drain: %s (usage: tierctl node drain NODE [--offline] [--json])\n",
			optind == argc ? "no node given" :
			optind + 1 != argc ? "one node at a time" : "NODE must be a node id");
		return 2;
	}
	bar = !json && isatty(STDOUT_FILENO);
	/* Checked before anything changes: the node's memory must be able to
	 * go (CPU-less, every online block movable). */
	if (offline && tier_linux_node_movable(SYSFS, node, &err)) {
		fprintf(stderr, "tierctl node drain: %s\n", err.msg);
		return 1;
	}
	for (;;) {
		args = json_object_new_object();
		json_object_object_add(args, "node", json_object_new_int(node));
		ret = tier_client_call(tierctl_socket(), TIER_CMD_DRAIN, args, CALL_TIMEOUT_MS, &res, &err);
		/* A daemon busy moving pages may answer late: a minute of
		 * silence is a failure, a slow answer is not. */
		if (ret == -ETIMEDOUT && ++busy < 6)
			continue;
		busy = 0;
		if (ret) {
			if (bar && last)
				printf("\n");
			fprintf(stderr, "tierctl node drain: %s\n", err.msg);
			return 1;
		}
		if (bar) {
			progress_bar(res);
		} else {
			uint64_t now = (uint64_t)time(NULL);
			bool done = !strcmp(json_object_get_string(json_object_object_get(res, "state")), "done");

			if (done || now != last)
				printf("%s\n", json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
			fflush(stdout);
			last = now;
		}
		last = last ? last : 1;
		if (!strcmp(json_object_get_string(json_object_object_get(res, "state")), "done"))
			break;
		json_object_put(res);
		usleep(200000);
	}
	json_object_put(res);
	if (bar)
		printf("\nnode %d drained: tierd manages no page on it\n", node);
	if (!offline)
		return 0;
	ret = tier_linux_node_offline(SYSFS, node, devname, sizeof(devname), &err);
	if (ret) {
		fprintf(stderr, "tierctl node drain: %s\n", err.msg);
		return 1;
	}
	if (!bar)
		printf("{\"node\":%d,\"state\":\"offline\",\"device\":%s%s%s}\n", node,
		       devname[0] ? "\"" : "", devname[0] ? devname : "null", devname[0] ? "\"" : "");
	else
		printf("node %d: memory blocks offline%s%s%s\n", node, devname[0] ? "; " : "",
		       devname, devname[0] ? " is devdax again" : "");
	return 0;
}

int tierctl_node(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout, "usage: tierctl node drain NODE [--offline] [--json]\n");
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "drain"))
		return node_drain(argc - 1, argv + 1);
	fprintf(stderr, "tierctl node: unknown action '%s' (drain)\n", argv[1]);
	return 2;
}
