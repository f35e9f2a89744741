/* space_mem.c - the node memory ops (priv: the address space, for its
 * roots and page size): a node's MemTotal and MemFree through the one
 * meminfo reader (topology.h), MemFree less the kernel's reserve read from
 * <procfs>/zoneinfo. Contracts in space.h.
 */
#include "backend/linux/space.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/space_impl.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/topology.h"

/* Calls of the ops between two readings of zoneinfo. */
#define RESERVE_REREAD 1000

/* Each node's reserve from its zones' watermarks in <procfs>/zoneinfo
 * ("Node N, zone Z" then "        min      PAGES", "        high     PAGES"):
 * the high watermark, where kswapd stops, and as much again as lies
 * between min and high. tierd fills a fast node up to it, and the
 * workloads and tierd itself allocate there too; below the low watermark
 * kswapd wakes, and while tierd has the kernel's demotion off it cannot
 * reclaim anonymous memory without swap: after 16 runs that reclaim
 * nothing the kernel marks the node unreclaimable (zoneinfo's
 * node_unreclaimable) and stops waking kswapd for it - which also stopped
 * the kernel's own tiering from demoting there after tierd had exited
 * (the 6.12 guest: a node of 768 MiB, high 45 MiB, low 38, min 30; filled
 * to high + 0.5%, its free memory went down to 34 MiB). A missing or
 * unreadable file leaves no reserve. */
static void read_reserves(struct tier_linux_space *s)
{
	uint64_t min_4k[TIER_MAX_NODES] = { 0 }, high_4k[TIER_MAX_NODES] = { 0 };
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0, n;
	int node = -1;
	FILE *f;

	memset(s->reserve_4k, 0, sizeof(s->reserve_4k));
	if (tier_sysfs_path(path, sizeof(path), s->ctx->procfs_root, "zoneinfo"))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long v;
		int nd;

		if (sscanf(line, "Node %d, zone", &nd) == 1)
			node = nd >= 0 && nd < TIER_MAX_NODES ? nd : -1;
		else if (node >= 0 && sscanf(line, " high %llu", &v) == 1)
			high_4k[node] += v;
		else if (node >= 0 && sscanf(line, " min %llu", &v) == 1)
			min_4k[node] += v;
	}
	free(line);
	fclose(f);
	for (n = 0; n < TIER_MAX_NODES; n++)
		s->reserve_4k[n] = high_4k[n] + (high_4k[n] > min_4k[n] ? high_4k[n] - min_4k[n] : 0);
}

static int mem_node_pages(void *priv, int node, uint64_t *total, uint64_t *free_pages)
{
	struct tier_linux_space *s = priv;
	uint64_t total_bytes, free_bytes;
	int ret;

	ret = tier_linux_node_meminfo(s->ctx->sysfs_root, node, &total_bytes, &free_bytes, NULL);
	if (ret)
		return ret;
	*total = total_bytes >> s->page_shift;
	*free_pages = free_bytes >> s->page_shift;
	/* What the kernel keeps free is not room for migrations: a move into
	 * a node at its watermark fails (ENOMEM) or waits for reclaim. */
	if (s->reserve_calls++ % RESERVE_REREAD == 0)
		read_reserves(s);
	if (node < TIER_MAX_NODES) {
		uint64_t r = (s->reserve_4k[node] << 12) >> s->page_shift;

		*free_pages = *free_pages > r ? *free_pages - r : 0;
	}
	return 0;
}

const struct tier_mem_ops tier_linux_mem_ops = {
	.name = "node-meminfo",
	.node_pages = mem_node_pages,
};
