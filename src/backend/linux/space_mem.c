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

/* Sums each node's zones' high watermarks from <procfs>/zoneinfo ("Node N,
 * zone Z" then "        high     PAGES"). A missing or unreadable file
 * leaves no reserve. */
static void read_reserves(struct tier_linux_space *s)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
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
		int n;

		if (sscanf(line, "Node %d, zone", &n) == 1)
			node = n >= 0 && n < TIER_MAX_NODES ? n : -1;
		else if (node >= 0 && sscanf(line, " high %llu", &v) == 1)
			s->reserve_4k[node] += v;
	}
	free(line);
	fclose(f);
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
