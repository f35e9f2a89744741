/* tiercount.c - the managed pages of each tier and node, counted again
 * only where the backend changed them (contract in tiercount.h). */
#include "core/tiercount.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (UINT64_C(1) << TIER_NODE_GEN_SHIFT)

void tier_tiercount_init(struct tier_tiercount *tc)
{
	memset(tc, 0, sizeof(*tc));
	memset(tc->slot, -1, sizeof(tc->slot));
}

/* The counts kept, dropped: the next read counts every chunk. */
static void drop(struct tier_tiercount *tc)
{
	free(tc->seen);
	free(tc->cnt);
	free(tc->total);
	tc->seen = NULL;
	tc->cnt = NULL;
	tc->total = NULL;
	tc->nr_chunks = tc->cap_chunks = 0;
}

void tier_tiercount_release(struct tier_tiercount *tc)
{
	drop(tc);
	tier_tiercount_init(tc);
}

/* The slots of topo's nodes: false when they differ from those the counts
 * were made with (which are then dropped, and the new slots taken). */
static bool slots_same(struct tier_tiercount *tc, const struct tier_topology *topo)
{
	int16_t slot[TIER_MAX_NODES];
	int node[TIER_MAX_NODES];
	int8_t rank[TIER_MAX_NODES];
	size_t r, k, n = 0;

	memset(slot, -1, sizeof(slot));
	for (r = 0; r < topo->nr_tiers && r < TIER_MAX_TIERS; r++)
		for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
			int id = topo->tiers[r].nodes[k];

			if (id < 0 || id >= TIER_MAX_NODES || slot[id] >= 0)
				continue;
			slot[id] = (int16_t)n;
			node[n] = id;
			rank[n++] = (int8_t)r;
		}
	if (n + 1 == tc->nr_slots && !memcmp(slot, tc->slot, sizeof(slot)) &&
	    !memcmp(rank, tc->rank, n * sizeof(*rank)))
		return true;
	memcpy(tc->slot, slot, sizeof(slot));
	memcpy(tc->node, node, n * sizeof(*node));
	memcpy(tc->rank, rank, n * sizeof(*rank));
	tc->nr_slots = n + 1;
	drop(tc);
	return false;
}

/* Chunk c's pages by slot into its counts and the totals. */
static void recount(struct tier_tiercount *tc, const struct tier_env *env, uint64_t c)
{
	uint16_t *cnt = &tc->cnt[c * tc->nr_slots];
	uint64_t i, end = (c + 1) * CHUNK < env->nr_pages ? (c + 1) * CHUNK : env->nr_pages;
	uint16_t now[TIER_MAX_NODES + 1] = { 0 };
	size_t k, other = tc->nr_slots - 1;

	for (i = c * CHUNK; i < end; i++) {
		uint8_t nd = env->page_node[i];

		if (nd != TIER_NODE_NONE)
			now[tc->slot[nd] >= 0 ? (size_t)tc->slot[nd] : other]++;
	}
	for (k = 0; k < tc->nr_slots; k++) {
		tc->total[k] += (uint64_t)now[k] - cnt[k];
		cnt[k] = now[k];
	}
	if (env->node_gen)
		tc->seen[c] = env->node_gen[c];
	tc->read_pages += end - c * CHUNK;
}

/* Room for n chunks and the totals. */
static int grow(struct tier_tiercount *tc, uint64_t n)
{
	uint64_t cap = tc->cap_chunks ? tc->cap_chunks : 64;
	uint32_t *seen;
	uint16_t *cnt;

	if (!tc->total && !(tc->total = calloc(tc->nr_slots, sizeof(*tc->total))))
		return -ENOMEM;
	if (n <= tc->cap_chunks)
		return 0;
	while (cap < n)
		cap *= 2;
	if (cap > SIZE_MAX / (tc->nr_slots * sizeof(*cnt)))
		return -ENOMEM;
	seen = realloc(tc->seen, cap * sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	tc->seen = seen;
	cnt = realloc(tc->cnt, cap * tc->nr_slots * sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	tc->cnt = cnt;
	tc->cap_chunks = cap;
	return 0;
}

/* Out of memory: every page read, nothing kept. */
static void read_all(struct tier_tiercount *tc, const struct tier_env *env, uint64_t *per_slot)
{
	uint64_t i;

	for (i = 0; i < env->nr_pages; i++) {
		uint8_t nd = env->page_node[i];

		if (nd != TIER_NODE_NONE && tc->slot[nd] >= 0)
			per_slot[tc->slot[nd]]++;
	}
	tc->read_pages += env->nr_pages;
	drop(tc);
}

int tier_tiercount_read(struct tier_tiercount *tc, const struct tier_env *env,
			const struct tier_topology *topo, uint64_t tier[TIER_MAX_TIERS],
			uint64_t *node)
{
	uint64_t n = (env->nr_pages + CHUNK - 1) / CHUNK, c;
	uint64_t fallback[TIER_MAX_NODES + 1] = { 0 };
	const uint64_t *per_slot;
	size_t k;
	int ret;

	slots_same(tc, topo);
	ret = grow(tc, n);
	if (ret) {
		read_all(tc, env, fallback);
		per_slot = fallback;
	} else {
		/* Chunks no longer managed leave the totals. */
		for (c = n; c < tc->nr_chunks; c++)
			for (k = 0; k < tc->nr_slots; k++)
				tc->total[k] -= tc->cnt[c * tc->nr_slots + k];
		for (c = tc->nr_chunks; c < n; c++) {
			memset(&tc->cnt[c * tc->nr_slots], 0, tc->nr_slots * sizeof(*tc->cnt));
			recount(tc, env, c);
		}
		/* The last chunk also when the number of pages changed. */
		for (c = 0; c < n && c < tc->nr_chunks; c++)
			if (!env->node_gen || env->node_gen[c] != tc->seen[c] ||
			    ((c + 1 == n || c + 1 == tc->nr_chunks) && env->nr_pages != tc->nr_pages))
				recount(tc, env, c);
		tc->nr_chunks = n;
		tc->nr_pages = env->nr_pages;
		per_slot = tc->total;
	}
	memset(tier, 0, sizeof(uint64_t) * TIER_MAX_TIERS);
	if (node)
		memset(node, 0, sizeof(uint64_t) * TIER_MAX_NODES);
	for (k = 0; k + 1 < tc->nr_slots; k++) {
		tier[tc->rank[k]] += per_slot[k];
		if (node)
			node[tc->node[k]] = per_slot[k];
	}
	return ret;
}
