/* linux_mm.c - Linux memory-management figures for the peer policies. */
#include "core/policies/linux_mm.h"

#include <string.h>

uint64_t tier__lmm_int_sqrt(uint64_t x)
{
	uint64_t r = 0, bit = UINT64_C(1) << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

void tier__lmm_node_pages(const struct tier_env *env, int node, uint64_t *total,
			  uint64_t *free)
{
	if (env->mem->node_pages(env->mem_priv, node, total, free)) {
		*total = 0;
		*free = 0;
	}
}

int tier__lmm_wmarks_init(const struct tier_env *env, unsigned wsf,
			  struct tier__lmm_wmarks wm[TIER_MAX_NODES])
{
	const struct tier_topology *topo = env->topo;
	const unsigned kb_per_page = (1u << env->page_shift) >> 10;
	uint64_t lowmem_pages = 0, min_free_kbytes, pages_min;
	size_t i;

	memset(wm, 0, TIER_MAX_NODES * sizeof(*wm));
	for (i = 0; i < topo->nr_nodes; i++) {
		uint64_t total, free;
		int ret;

		if (topo->nodes[i].id < 0 || topo->nodes[i].id >= TIER_MAX_NODES)
			continue;
		ret = env->mem->node_pages(env->mem_priv, topo->nodes[i].id, &total, &free);
		if (ret)
			return ret;
		lowmem_pages += total;
	}
	if (!lowmem_pages)
		return 0;
	/* calculate_min_free_kbytes() */
	min_free_kbytes = tier__lmm_int_sqrt(lowmem_pages * kb_per_page * 16);
	if (min_free_kbytes < 128)
		min_free_kbytes = 128;
	if (min_free_kbytes > 262144)
		min_free_kbytes = 262144;
	pages_min = min_free_kbytes / kb_per_page;	/* >> (PAGE_SHIFT - 10) */
	/* __setup_per_zone_wmarks() */
	for (i = 0; i < topo->nr_nodes; i++) {
		uint64_t managed, free, tmp, scale;
		int id = topo->nodes[i].id;

		if (id < 0 || id >= TIER_MAX_NODES)
			continue;
		tier__lmm_node_pages(env, id, &managed, &free);
		tmp = pages_min * managed / lowmem_pages;
		wm[id].min = tmp;
		scale = managed * wsf / 10000;
		tmp = tmp / 4 > scale ? tmp / 4 : scale;
		wm[id].low = wm[id].min + tmp;
		wm[id].high = wm[id].low + tmp;
		wm[id].promo = wm[id].high + tmp;
	}
	return 0;
}

int tier__lmm_cpu_node(const struct tier_env *env)
{
	const struct tier_topology *topo = env->topo;
	size_t r, k;

	for (r = 0; r < topo->nr_tiers; r++)
		for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
			const struct tier_node *n = tier_topology_node(topo, topo->tiers[r].nodes[k]);

			if (n && n->nr_cpus)
				return n->id;
		}
	return topo->nr_tiers && topo->tiers[0].nr_nodes ? topo->tiers[0].nodes[0] : -1;
}

int tier__lmm_demotion_target(const struct tier_env *env, int node)
{
	const struct tier_topology *topo = env->topo;
	int rank = tier_topology_node_rank(topo, node), best = -1, best_d = 0;
	size_t k;

	if (rank < 0 || (size_t)rank + 1 >= topo->nr_tiers)
		return -1;
	for (k = 0; k < topo->tiers[rank + 1].nr_nodes; k++) {
		int cand = topo->tiers[rank + 1].nodes[k];
		int d = tier_topology_distance(topo, node, cand);

		if (d < 0)
			d = 255;
		if (best < 0 || d < best_d || (d == best_d && cand < best)) {
			best = cand;
			best_d = d;
		}
	}
	return best;
}
