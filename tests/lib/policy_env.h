/* policy_env.h - an in-memory environment for policy unit tests: a
 * simulated machine's topology, a page array, a migrator that honours node
 * capacities, a settable clock. Header-only; include in one test file.
 *
 *   struct test_env te;
 *   test_env_init(&te, "dram-cxl", "1:4", 64, 1000);   // 64 pages per ratio unit, 1000 pages
 *   test_env_place(&te, page, node);                   // initial placement
 *   test_env_hint(&te, page, TIER_HINT_COLD);          // optional: advice per page
 *   test_env_huge(&te, 9);                             // optional: every 512 pages one huge page
 *   policy->create(&te.env, &priv, &err); ... te.now_us += 100000; policy->tick(priv, te.now_us);
 *   test_env_release(&te);
 */
#ifndef TIER_TEST_POLICY_ENV_H
#define TIER_TEST_POLICY_ENV_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/machine.h"
#include "core/policy.h"

struct test_env {
	struct tier_sim_machine machine;
	struct tier_topology topo;
	struct tier_env env;
	uint8_t *page_node;
	uint32_t *node_gen;		/* env->node_gen, as both backends keep
					 * it; NULL after test_env_no_node_gen() */
	uint8_t *page_hint;		/* NULL until test_env_hint() */
	uint8_t *page_huge;		/* NULL until test_env_huge() */
	uint64_t splits;		/* huge pages split */
	uint64_t cap[TIER_SIM_MAX_NODES];
	uint64_t used[TIER_SIM_MAX_NODES];
	uint64_t now_us;
	uint64_t work_units;
	uint64_t moves;			/* pages moved so far */
	uint64_t move_calls;
	uint64_t max_call_pages;	/* largest batch seen */
};

static int test_env_node_pages(void *priv, int node, uint64_t *total, uint64_t *free)
{
	struct test_env *te = priv;

	if (node < 0 || (size_t)node >= te->machine.nr_nodes)
		return -ENOENT;
	*total = te->cap[node];
	*free = te->cap[node] - te->used[node];
	return 0;
}

static uint64_t test_env_now(void *priv)
{
	return ((struct test_env *)priv)->now_us;
}

static long test_env_move(void *priv, const uint64_t *pages, const int *nodes, int *status,
			  size_t n)
{
	struct test_env *te = priv;
	long moved = 0;
	size_t i;

	te->move_calls++;
	if (n > te->max_call_pages)
		te->max_call_pages = n;
	for (i = 0; i < n; i++) {
		uint8_t from;

		if (pages[i] >= te->env.nr_pages) {
			status[i] = -EFAULT;
			continue;
		}
		from = te->page_node[pages[i]];
		if (from == TIER_NODE_NONE) {
			status[i] = -ENOENT;
			continue;
		}
		if (nodes[i] == from) {
			status[i] = from;
			continue;
		}
		if (te->used[nodes[i]] >= te->cap[nodes[i]]) {
			status[i] = -ENOMEM;
			continue;
		}
		te->used[from]--;
		te->used[nodes[i]]++;
		te->page_node[pages[i]] = (uint8_t)nodes[i];
		if (te->node_gen)
			te->node_gen[pages[i] >> TIER_NODE_GEN_SHIFT]++;
		status[i] = nodes[i];
		te->moves++;
		moved++;
	}
	return moved;
}

/* Splits the huge page holding page (the migrator's split op). */
static int test_env_split(void *priv, uint64_t page)
{
	struct test_env *te = priv;
	uint64_t k;

	if (page >= te->env.nr_pages)
		return -EFAULT;
	k = page >> te->env.huge_shift;
	if (!te->page_huge || !te->page_huge[k])
		return -EINVAL;
	te->page_huge[k] = 0;
	te->splits++;
	return 0;
}

static const struct tier_mem_ops test_env_mem_ops = { .name = "test", .node_pages = test_env_node_pages };
static const struct tier_clock_ops test_env_clock_ops = { "test", test_env_now };
static const struct tier_migrator_ops test_env_migrator_ops = {
	.name = "test", .move = test_env_move, .split = test_env_split,
};

/* Places page on node (initial placement; no capacity check beyond the
 * counters). */
static inline void test_env_place(struct test_env *te, uint64_t page, int node)
{
	if (te->page_node[page] != TIER_NODE_NONE)
		te->used[te->page_node[page]]--;
	te->page_node[page] = (uint8_t)node;
	if (te->node_gen)
		te->node_gen[page >> TIER_NODE_GEN_SHIFT]++;
	te->used[node]++;
}

/* env->node_gen NULL: the policy sees page_node alone (a backend that
 * keeps no counters), before the policy is created. */
static inline void test_env_no_node_gen(struct test_env *te)
{
	free(te->node_gen);
	te->node_gen = NULL;
	te->env.node_gen = NULL;
}

/* Gives page the hint (enum tier_hint) env->page_hint reports. The first
 * call allocates the hint array, every other page TIER_HINT_NONE; without
 * a call env->page_hint stays NULL, as in a daemon nobody advised.
 * Returns 0 or -ENOMEM. */
static inline int test_env_hint(struct test_env *te, uint64_t page, uint8_t hint)
{
	if (!te->page_hint) {
		te->page_hint = calloc(te->env.nr_pages, 1);
		if (!te->page_hint)
			return -ENOMEM;
		te->env.page_hint = te->page_hint;
	}
	te->page_hint[page] = hint;
	return 0;
}

/* Makes every aligned block of 1 << shift pages one huge page
 * (env->page_huge), until the policy splits it. The fake migrator still
 * moves the pages it is given one by one: a policy must name them all.
 * Returns 0 or -ENOMEM. */
static inline int test_env_huge(struct test_env *te, unsigned shift)
{
	uint64_t n = (te->env.nr_pages >> shift) + 1;

	te->page_huge = malloc(n);
	if (!te->page_huge)
		return -ENOMEM;
	memset(te->page_huge, 1, n);
	te->env.huge_shift = shift;
	te->env.page_huge = te->page_huge;
	return 0;
}

/* unit_pages: pages per ratio unit. Returns 0 or -errno. */
static inline int test_env_init(struct test_env *te, const char *preset, const char *ratio,
				uint64_t unit_pages, uint64_t nr_pages)
{
	struct tier_err err;
	size_t i;
	int ret;

	memset(te, 0, sizeof(*te));
	ret = tier_sim_machine_init(&te->machine, preset, ratio, unit_pages << 12, &err);
	if (ret)
		return ret;
	ret = tier_topology_discover(&tier_sim_topology_ops, &te->machine, NULL, 0, &te->topo, &err);
	if (ret)
		return ret;
	for (i = 0; i < te->machine.nr_nodes; i++)
		te->cap[i] = te->machine.node_bytes[i] >> 12;
	te->page_node = malloc(nr_pages);
	if (!te->page_node)
		return -ENOMEM;
	memset(te->page_node, TIER_NODE_NONE, nr_pages);
	te->node_gen = calloc((nr_pages >> TIER_NODE_GEN_SHIFT) + 1, sizeof(*te->node_gen));
	if (!te->node_gen)
		return -ENOMEM;
	te->env.topo = &te->topo;
	te->env.nr_pages = nr_pages;
	te->env.page_node = te->page_node;
	te->env.node_gen = te->node_gen;
	te->env.page_shift = 12;
	te->env.obs_kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE |
			    TIER_OBS_HINT_FAULT;
	te->env.migrator = &test_env_migrator_ops;
	te->env.migrator_priv = te;
	te->env.mem = &test_env_mem_ops;
	te->env.mem_priv = te;
	te->env.clock = &test_env_clock_ops;
	te->env.clock_priv = te;
	te->env.budget_bytes_per_s = 0;
	te->env.max_batch = 64;
	te->env.interval_us = 100000;
	te->env.work_units = &te->work_units;
	return 0;
}

static inline void test_env_release(struct test_env *te)
{
	free(te->page_node);
	free(te->node_gen);
	free(te->page_hint);
	free(te->page_huge);
	tier_topology_release(&te->topo);
}

/* Delivers one observation to a policy. */
/* One observation of pages [page, page + nr): count of max over
 * interval_us. */
static inline void test_env_observe_over(const struct tier_policy_ops *ops, void *priv,
					 uint16_t kind, uint64_t page, uint32_t nr,
					 uint32_t count, uint32_t max, uint32_t interval_us)
{
	struct tier_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = kind;
	o.page = page;
	o.nr_pages = nr;
	o.count = count;
	o.max = max;
	o.interval_us = interval_us;
	ops->observe(priv, &o, 1);
}

/* The same over one 100 ms interval. */
static inline void test_env_observe(const struct tier_policy_ops *ops, void *priv,
				    uint16_t kind, uint64_t page, uint32_t nr, uint32_t count,
				    uint32_t max)
{
	test_env_observe_over(ops, priv, kind, page, nr, count, max, 100000);
}

#endif
