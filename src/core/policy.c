/* policy.c - the policy registry and helpers shared by policies. */
#include "core/policy.h"

#include <errno.h>
#include <math.h>
#include <string.h>

extern const struct tier_policy_ops tier_policy_static;
extern const struct tier_policy_ops tier_policy_tierd;
extern const struct tier_policy_ops tier_policy_hemem;
extern const struct tier_policy_ops tier_policy_memtis;
extern const struct tier_policy_ops tier_policy_memtierd_heat;
extern const struct tier_policy_ops tier_policy_kernel_nb;
extern const struct tier_policy_ops tier_policy_tpp;
extern const struct tier_policy_ops tier_policy_memtierd_heat_gated;
extern const struct tier_policy_ops tier_policy_damon;
extern const struct tier_policy_ops tier_policy_damon_fixed_quota;

const struct tier_policy_ops *const tier_policies[] = {
	&tier_policy_tierd,
	&tier_policy_static,
	&tier_policy_hemem,
	&tier_policy_memtis,
	&tier_policy_memtierd_heat,
	&tier_policy_kernel_nb,
	&tier_policy_damon,
	&tier_policy_tpp,
	&tier_policy_memtierd_heat_gated,
	&tier_policy_damon_fixed_quota,
	NULL,
};

const struct tier_policy_ops *tier_policy_find(const char *name)
{
	size_t i;

	for (i = 0; tier_policies[i]; i++)
		if (!strcmp(tier_policies[i]->name, name))
			return tier_policies[i];
	return NULL;
}

void tier_node_rank_map(const struct tier_topology *topo, int map[TIER_MAX_NODES])
{
	size_t i;

	for (i = 0; i < TIER_MAX_NODES; i++)
		map[i] = -1;
	for (i = 0; i < topo->nr_nodes; i++)
		if (topo->nodes[i].id >= 0 && topo->nodes[i].id < TIER_MAX_NODES)
			map[topo->nodes[i].id] = topo->nodes[i].rank;
}

void tier_node_free_pages(const struct tier_env *env, int64_t free[TIER_MAX_NODES])
{
	const struct tier_topology *topo = env->topo;
	size_t i;

	for (i = 0; i < topo->nr_nodes; i++) {
		uint64_t t, f;
		int id = topo->nodes[i].id;

		if (id < 0 || id >= TIER_MAX_NODES)
			continue;
		if (env->mem->node_pages(env->mem_priv, id, &t, &f))
			f = 0;
		free[id] = (int64_t)f;
	}
}

int tier_tier_pages(const struct tier_env *env, int rank, uint64_t *total,
		    uint64_t *free)
{
	size_t i;

	*total = 0;
	*free = 0;
	if (rank < 0 || (size_t)rank >= env->topo->nr_tiers)
		return -ENOENT;
	for (i = 0; i < env->topo->tiers[rank].nr_nodes; i++) {
		uint64_t t, f;
		int ret = env->mem->node_pages(env->mem_priv,
					       env->topo->tiers[rank].nodes[i], &t, &f);

		if (ret)
			return ret;
		*total += t;
		*free += f;
	}
	return 0;
}

int tier_tier_roomiest_node(const struct tier_env *env, int rank)
{
	uint64_t best_free = 0;
	int best = -1;
	size_t i;

	if (rank < 0 || (size_t)rank >= env->topo->nr_tiers)
		return -1;
	for (i = 0; i < env->topo->tiers[rank].nr_nodes; i++) {
		int node = env->topo->tiers[rank].nodes[i];
		uint64_t t, f;

		if (env->mem->node_pages(env->mem_priv, node, &t, &f))
			continue;
		if (best < 0 || f > best_free) {
			best = node;
			best_free = f;
		}
	}
	return best;
}

double tier_obs_accesses(const struct tier_obs *o)
{
	/* The last count's answer: a tracker hands over runs of the same
	 * count (soft-dirty's picture: all 1 of 2), and a logarithm a run
	 * is most of what tens of thousands of them cost where floating
	 * point is emulated (a guest under TCG). */
	static __thread uint32_t last_count, last_max;
	static __thread double last_acc;

	switch (o->kind) {
	case TIER_OBS_ACCESSED:
	case TIER_OBS_WRITTEN: {
		double m = o->max ? o->max : 1, f = o->count / m;

		if (!o->count)
			return 0;
		if (o->count == last_count && o->max == last_max)
			return last_acc;
		if (f > 1 - 0.5 / m)
			f = 1 - 0.5 / m;
		last_count = o->count;
		last_max = o->max;
		last_acc = -log(1 - f) * m;
		return last_acc;
	}
	case TIER_OBS_SAMPLE:
		return o->count;
	case TIER_OBS_HINT_FAULT:
		return 1.0 + 1e5 / (o->latency_us + 1.0);
	default:
		return 0;
	}
}
