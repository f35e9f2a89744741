/* migrator.c - the simulated migrator: moves of 4 KiB pages and of whole
 * 2 MiB units, THP splits, each with the costs the model charges (see
 * engine.h), and the counts the results report (per tier pair, ping-pong).
 */
#include <errno.h>
#include <string.h>

#include "backend/sim/engine_internal.h"

#define PINGPONG_WINDOW_MS 2000

/* One budget for every policy (tier_sim_params.budget_every_policy): a
 * token bucket refilled at the budget's rate, holding at most one second
 * of it, so a policy that moves once a second (damon's apply interval)
 * gets the same bytes as one that moves every tick. Takes bytes and
 * returns true when the bucket holds them; false: the move waits (-EBUSY,
 * "try later", as a migrator at its limit answers). */
static bool budget_take(struct tier_sim *s, uint64_t bytes)
{
	double t;

	if (!s->budget.on)
		return true;
	t = s->budget.tokens + s->budget.rate_bps * (s->app_ns - s->budget.last_ns) / 1e9;
	s->budget.tokens = t < s->budget.rate_bps ? t : s->budget.rate_bps;
	s->budget.last_ns = s->app_ns;
	if (s->budget.tokens < (double)bytes)
		return false;
	s->budget.tokens -= (double)bytes;
	return true;
}

void tier__sim_shootdown(struct tier_sim *s)
{
	s->app_ns += s->cpu_ns.shootdown;
	s->cost.stall_ns += s->cpu_ns.shootdown;
}

/* Moves one page with its costs: 4 KiB read on the source and written on
 * the target, the mover's CPU, the per-tier-pair count, and ping-pong
 * (back to the tier it left within the window). */
static void move_one(struct tier_sim *s, uint64_t page, int to, uint32_t now_ms)
{
	uint8_t from = s->page_node[page];
	int fr = s->node_rank[from], tr = s->node_rank[to];

	tier__sim_place_page(s, page, to);
	s->q_rd[from] += PAGE_BYTES;
	s->q_wr[to] += PAGE_BYTES;
	s->policy_cpu_ns += s->cpu_ns.migrate_page;
	s->cost.move_cpu_ns += s->cpu_ns.migrate_page;
	/* A move in the fault path (kernel-nb's promotion in
	 * do_numa_page()) runs in the faulting task. */
	if (s->in_task)
		s->cost.task_cpu_ns += s->cpu_ns.migrate_page;
	s->moved[fr][tr]++;
	if (tr < fr)
		s->ep.promoted++;
	else
		s->ep.demoted++;
	if (s->last_move_ms[page] && now_ms - s->last_move_ms[page] < PINGPONG_WINDOW_MS &&
	    s->prev_rank[page] == tr)
		s->pingpong++;
	s->last_move_ms[page] = now_ms ? now_ms : 1;
	s->prev_rank[page] = (uint8_t)fr;
}

/* Moves the 2 MiB unit holding page p to node `to`, as the kernel migrates
 * a THP: all its pages, 2 MiB read and written, the mover's CPU for each
 * page. Returns the status every page of the unit gets; *did says whether
 * anything moved. */
static int move_unit(struct tier_sim *s, uint64_t p, int to, uint32_t now_ms, bool *did)
{
	uint64_t base, len = tier__sim_unit_range(s, p, &base), need = 0, present = 0, q;

	*did = false;
	if (to < 0 || (size_t)to >= s->nr_nodes)
		return -EINVAL;
	for (q = base; q < base + len; q++) {
		uint8_t from = s->page_node[q];

		present += from != TIER_NODE_NONE;
		need += from != TIER_NODE_NONE && from != to;
	}
	if (!present)
		return -ENOENT;
	if (!need)
		return to;
	if (s->cap_pages[to] - s->used_pages[to] < need)
		return -ENOMEM;
	if (!budget_take(s, need * PAGE_BYTES))
		return -EBUSY;
	for (q = base; q < base + len; q++) {
		uint8_t from = s->page_node[q];

		if (from == TIER_NODE_NONE || from == to)
			continue;
		move_one(s, q, to, now_ms);
	}
	*did = true;
	return to;
}

/* Moves one 4 KiB page (or a page of a split unit); returns its status. */
static int move_page(struct tier_sim *s, uint64_t p, int to, uint32_t now_ms, bool *did)
{
	uint8_t from = s->page_node[p];

	*did = false;
	if (from == TIER_NODE_NONE)
		return -ENOENT;
	if (to < 0 || (size_t)to >= s->nr_nodes)
		return -EINVAL;
	if (to == from)
		return to;
	if (s->used_pages[to] >= s->cap_pages[to])
		return -ENOMEM;
	if (!budget_take(s, PAGE_BYTES))
		return -EBUSY;
	move_one(s, p, to, now_ms);
	*did = true;
	return to;
}

/* THP: a move of any page moves its unit; every page of a unit named in
 * one call gets the status the unit got first (the kernel reports a THP's
 * pages together). */
static long sim_move_thp(struct tier_sim *s, const uint64_t *pages, const int *nodes,
			 int *status, size_t n)
{
	uint32_t now_ms = (uint32_t)(s->app_ns / 1e6);
	bool any = false, did;
	long moved = 0;
	size_t i;

	if (++s->move_gen == 0) {
		memset(s->unit_gen, 0, ((s->nr_pages >> THP_SHIFT) + 1) * sizeof(*s->unit_gen));
		s->move_gen = 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t p = pages[i], u;

		if (p >= s->nr_pages) {
			status[i] = -EFAULT;
			continue;
		}
		u = p >> THP_SHIFT;
		if (!s->huge[u]) {
			status[i] = move_page(s, p, nodes[i], now_ms, &did);
			any |= did;
			moved += did;
			continue;
		}
		if (s->unit_gen[u] != s->move_gen) {
			s->unit_status[u] = move_unit(s, p, nodes[i], now_ms, &did);
			s->unit_gen[u] = s->move_gen;
			any |= did;
			moved += did;
		}
		status[i] = s->unit_status[u];
	}
	if (any)
		tier__sim_shootdown(s);
	return moved;
}

static long sim_move(void *priv, const uint64_t *pages, const int *nodes, int *status,
		     size_t n)
{
	struct tier_sim *s = priv;
	uint32_t now_ms = (uint32_t)(s->app_ns / 1e6);
	long moved = 0;
	bool did;
	size_t i;

	if (s->thp)
		return sim_move_thp(s, pages, nodes, status, n);
	for (i = 0; i < n; i++) {
		if (pages[i] >= s->nr_pages) {
			status[i] = -EFAULT;
			continue;
		}
		status[i] = move_page(s, pages[i], nodes[i], now_ms, &did);
		moved += did;
	}
	if (moved)
		tier__sim_shootdown(s);
	return moved;
}

/* Splits the huge unit holding page into 4 KiB pages in place: each page
 * takes the unit's accessed/dirty/protnone bits. */
static int sim_split(void *priv, uint64_t page)
{
	struct tier_sim *s = priv;
	uint64_t base, len, q;

	if (page >= s->nr_pages)
		return -EFAULT;
	if (!s->thp || !s->huge[page >> THP_SHIFT])
		return -EINVAL;
	len = tier__sim_unit_range(s, page, &base);
	for (q = base + 1; q < base + len; q++)
		s->flags[q] = s->flags[base];
	s->huge[page >> THP_SHIFT] = 0;
	s->splits++;
	s->policy_cpu_ns += s->cpu_ns.split;
	s->cost.move_cpu_ns += s->cpu_ns.split;
	tier__sim_shootdown(s);
	return 0;
}

const struct tier_migrator_ops tier__sim_migrator_ops = {
	.name = "sim",
	.move = sim_move,
	.split = sim_split,
};
