/* tiercount.h - the managed pages present in each tier (env->page_node
 * by the topology's ranks), kept for a reader that asks again and again -
 * the daemon's status, published after every step and every second while
 * the steps pause - at the cost of what changed since it last asked.
 *
 * The pages are counted in chunks of 2^TIER_NODE_GEN_SHIFT (the backend's
 * env->node_gen counters, which it bumps whenever it changes a page_node
 * byte of a chunk, core/policy.h): a chunk is read again only when its
 * counter moved, the last one also when the number of managed pages
 * changed, every chunk when a node's rank did. A read costs one counter a
 * chunk plus the pages of the chunks that changed, not one byte a managed
 * page (at 64 GiB managed, 16 million bytes read after every step). Without
 * node_gen every chunk is read every time. Pure: no clock, no lock; one
 * reader at a time.
 */
#ifndef TIER_CORE_TIERCOUNT_H
#define TIER_CORE_TIERCOUNT_H

#include <stdint.h>

#include "core/policy.h"
#include "core/topology.h"

struct tier_tiercount {
	uint64_t nr_pages;		/* env->nr_pages at the last read */
	uint64_t nr_chunks, cap_chunks;
	uint32_t *seen;			/* [chunk] node_gen when counted */
	uint16_t *cnt;			/* [chunk][nr_slots] */
	uint64_t *total;		/* [nr_slots] */
	size_t nr_slots;		/* the tiers' nodes, then one for pages elsewhere */
	int16_t slot[TIER_MAX_NODES];	/* node -> slot, -1: on no tier */
	int node[TIER_MAX_NODES];	/* slot -> node */
	int8_t rank[TIER_MAX_NODES];	/* slot -> the node's tier rank */
	uint64_t read_pages;		/* page_node bytes read, all reads (for tests) */
};

void tier_tiercount_init(struct tier_tiercount *tc);
void tier_tiercount_release(struct tier_tiercount *tc);

/* Pages of env present in each tier of topo, into tier[rank] (ranks from
 * topo->nr_tiers on: 0), and on each node of a tier into node[id] when
 * node is not NULL (other nodes: 0). A node that joins or leaves a tier,
 * or changes tiers, has every chunk counted again. 0, or -ENOMEM: the
 * figures then come from a read of every page, and the counts kept are
 * dropped. */
int tier_tiercount_read(struct tier_tiercount *tc, const struct tier_env *env,
			const struct tier_topology *topo, uint64_t tier[TIER_MAX_TIERS],
			uint64_t *node);

#endif
