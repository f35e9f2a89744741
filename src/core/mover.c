/* mover.c - batched, budgeted, multi-destination page moves. */
#include "core/mover.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum tier_move_fail tier_move_fail_of(int status)
{
	switch (status) {
	case -ENOMEM:
		return TIER_MOVE_FAIL_NOMEM;
	case -EBUSY:
	case -EAGAIN:
		return TIER_MOVE_FAIL_BUSY;
	case -ENOENT:
	case -EFAULT:
		return TIER_MOVE_FAIL_GONE;
	case -EACCES:
	case -EPERM:
		return TIER_MOVE_FAIL_SHARED;
	default:
		return TIER_MOVE_FAIL_OTHER;
	}
}

const char *tier_move_fail_name(enum tier_move_fail f)
{
	static const char *const names[TIER_MOVE_FAIL__COUNT] = {
		[TIER_MOVE_FAIL_NOMEM] = "nomem", [TIER_MOVE_FAIL_BUSY] = "busy",
		[TIER_MOVE_FAIL_GONE] = "gone", [TIER_MOVE_FAIL_SHARED] = "shared",
		[TIER_MOVE_FAIL_OTHER] = "other",
	};

	return (unsigned)f < TIER_MOVE_FAIL__COUNT ? names[f] : "other";
}

int tier_mover_init(struct tier_mover *m, const struct tier_env *env,
		    struct tier_budget *budget)
{
	memset(m, 0, sizeof(*m));
	m->env = env;
	m->budget = budget;
	tier_node_rank_map(env->topo, m->node_rank);
	m->cap = env->max_batch ? env->max_batch : 1024;
	m->pages = calloc(m->cap, sizeof(*m->pages));
	m->nodes = calloc(m->cap, sizeof(*m->nodes));
	m->ranks = calloc(m->cap, sizeof(*m->ranks));
	m->from_ranks = calloc(m->cap, sizeof(*m->from_ranks));
	m->status = calloc(m->cap, sizeof(*m->status));
	m->node_free = calloc(TIER_MAX_NODES, sizeof(*m->node_free));
	if (!m->pages || !m->nodes || !m->ranks || !m->from_ranks || !m->status || !m->node_free) {
		tier_mover_release(m);
		return -ENOMEM;
	}
	return 0;
}

void tier_mover_release(struct tier_mover *m)
{
	free(m->pages);
	free(m->nodes);
	free(m->ranks);
	free(m->from_ranks);
	free(m->status);
	free(m->node_free);
	m->pages = NULL;
	m->nodes = m->ranks = m->from_ranks = m->status = NULL;
	m->node_free = NULL;
	m->nr = m->cap = 0;
}

void tier_mover_begin(struct tier_mover *m)
{
	tier_node_free_pages(m->env, m->node_free);
}

static int roomiest(const struct tier_mover *m, int rank)
{
	const struct tier_tier *t;
	int best = -1;
	size_t i;

	if (rank < 0 || (size_t)rank >= m->env->topo->nr_tiers)
		return -1;
	t = &m->env->topo->tiers[rank];
	for (i = 0; i < t->nr_nodes; i++) {
		int n = t->nodes[i];

		if (n < 0 || n >= TIER_MAX_NODES)
			continue;
		if (best < 0 || m->node_free[n] > m->node_free[best])
			best = n;
	}
	return best;
}

int64_t tier_mover_tier_free(const struct tier_mover *m, int rank)
{
	const struct tier_tier *t;
	int64_t sum = 0;
	size_t i;

	if (rank < 0 || (size_t)rank >= m->env->topo->nr_tiers)
		return 0;
	t = &m->env->topo->tiers[rank];
	for (i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i] >= 0 && t->nodes[i] < TIER_MAX_NODES)
			sum += m->node_free[t->nodes[i]];
	return sum;
}

uint64_t tier_mover_budget_left(const struct tier_mover *m)
{
	return m->budget ? tier_budget_available(m->budget) : UINT64_MAX;
}

static uint64_t page_bytes(const struct tier_mover *m)
{
	return UINT64_C(1) << m->env->page_shift;
}

bool tier_mover_add(struct tier_mover *m, uint64_t page, int rank)
{
	int cur, node;
	uint8_t from;

	if (page >= m->env->nr_pages)
		return false;
	from = m->env->page_node[page];
	if (from == TIER_NODE_NONE)
		return false;
	cur = m->node_rank[from];
	if (cur == rank || rank < 0 || (size_t)rank >= m->env->topo->nr_tiers)
		return false;
	if (m->budget && !tier_budget_take(m->budget, page_bytes(m)))
		return false;
	if (m->nr == m->cap && tier_mover_flush(m) < 0) {
		if (m->budget)
			tier_budget_refund(m->budget, page_bytes(m));
		return false;
	}
	node = roomiest(m, rank);
	if (node < 0) {
		if (m->budget)
			tier_budget_refund(m->budget, page_bytes(m));
		return false;
	}
	m->node_free[node]--;
	m->node_free[from]++;
	m->pages[m->nr] = page;
	m->nodes[m->nr] = node;
	m->ranks[m->nr] = rank;
	m->from_ranks[m->nr] = cur;
	m->nr++;
	return true;
}

/* The next tier to try after `rank` failed for a page now at `cur`:
 * promotions settle for a less fast tier (still faster than now),
 * demotions go further down. -1 when none is left. */
static int next_rank(const struct tier_mover *m, int cur, int rank)
{
	if (rank < cur)
		return rank + 1 < cur ? rank + 1 : -1;
	return (size_t)(rank + 1) < m->env->topo->nr_tiers ? rank + 1 : -1;
}

int tier_mover_flush(struct tier_mover *m)
{
	int ret = 0;

	while (m->nr) {
		size_t n = m->nr, i, retry = 0;
		long moved;

		moved = m->env->migrator->move(m->env->migrator_priv, m->pages, m->nodes,
					       m->status, n);
		if (m->env->pause)
			m->env->pause(m->env->pause_ctx);
		if (moved < 0) {
			/* The whole call failed: nothing moved; give the budget back. */
			if (m->budget)
				tier_budget_refund(m->budget, n * page_bytes(m));
			m->stats.failed_other += n;
			m->nr = 0;
			return (int)moved;
		}
		for (i = 0; i < n; i++) {
			int st = m->status[i];
			uint8_t now = m->env->page_node[m->pages[i]];
			int cur = now == TIER_NODE_NONE ? -1 : m->node_rank[now];

			if (st >= 0) {
				int got = st < TIER_MAX_NODES ? m->node_rank[st] : -1;

				m->stats.moved_pages++;
				if (got != m->ranks[i])
					m->stats.spilled_pages++;
				if (got < m->from_ranks[i])
					m->stats.promoted_pages++;
				else
					m->stats.demoted_pages++;
				continue;
			}
			if (st == -ENOMEM && cur >= 0) {
				int r = next_rank(m, cur, m->ranks[i]);
				int node = r >= 0 ? roomiest(m, r) : -1;

				m->node_free[m->nodes[i]] = 0;	/* it is full */
				if (node >= 0) {
					/* Retry at the front of the array. */
					m->pages[retry] = m->pages[i];
					m->nodes[retry] = node;
					m->ranks[retry] = r;
					m->from_ranks[retry] = m->from_ranks[i];
					m->node_free[node]--;
					retry++;
					continue;
				}
				m->stats.failed_nomem++;
			} else if (st == -EBUSY) {
				m->stats.failed_busy++;
			} else if (st == -ENOENT || st == -EFAULT) {
				m->stats.failed_gone++;
			} else if (st == -EACCES) {
				/* Shared with another process (needs MPOL_MF_MOVE_ALL):
				 * not ours to move; counted, not an error. */
				m->stats.failed_shared++;
			} else {
				m->stats.failed_other++;
				ret = st;
			}
			if (m->budget)
				tier_budget_refund(m->budget, page_bytes(m));
		}
		m->nr = retry;
	}
	return ret;
}
