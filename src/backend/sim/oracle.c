/* oracle.c - the lower bound tiersim compares policies with: at the start
 * of each epoch it knows the workload's access distribution in that epoch
 * (a generator's weights every 100 ms of simulated time; a trace's counts
 * over its next TIER_SIM_ORACLE_EPOCH_ACCESSES accesses, read ahead of the
 * replay) and places the hottest pages in the fastest tiers, filling them
 * only as far as the loaded-latency model says pays, and moves pages for
 * free.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/engine_internal.h"

struct weight_order {
	const double *w;
	const struct tier_sim *s;
};

/* Heaviest first; among equal weights the page already in the faster tier
 * first, so that ties never move pages (on a uniform workload the oracle
 * then keeps first touch: it cannot gain from noise, nor lose to it). */
static int cmp_weight_desc(const void *a, const void *b, void *ctx)
{
	const struct weight_order *o = ctx;
	uint64_t pa = *(const uint64_t *)a, pb = *(const uint64_t *)b;
	double x = o->w[pa], y = o->w[pb];
	int ra, rb;

	if (x != y)
		return x > y ? -1 : 1;
	ra = o->s->page_node[pa] == TIER_NODE_NONE ? 255 : o->s->node_rank[o->s->page_node[pa]];
	rb = o->s->page_node[pb] == TIER_NODE_NONE ? 255 : o->s->node_rank[o->s->page_node[pb]];
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (pa > pb) - (pa < pb);
}

/* Expected AMAT when tier r serves share[r] of accesses (closed loop:
 * the access rate follows the latency, the latency the load). */
static double model_amat(const struct tier_sim *s, const double *share, double wfrac)
{
	double amat = 0, lat[TIER_SIM_MAX_TIERS];
	size_t r, it;

	for (r = 0; r < s->nr_tiers; r++) {
		lat[r] = s->idle_ns[s->topo.tiers[r].nodes[0]];
		amat += share[r] * lat[r];
	}
	for (it = 0; it < 40; it++) {
		double rate = 1.0 / amat, next = 0;	/* accesses per ns */

		for (r = 0; r < s->nr_tiers; r++) {
			int node = s->topo.tiers[r].nodes[0];
			double nn = (double)s->topo.tiers[r].nr_nodes;
			double bytes = rate * share[r] * LINES_PER_ACCESS * LINE_BYTES / nn;
			/* As the engine counts it: every access reads, a store also
			 * writes back. */
			double util = bytes * (1.0 / s->rd_bw[node] + wfrac / s->wr_bw[node]);

			if (r == 0)
				util += (double)s->antagonist_bps / 1e9 / s->rd_bw[node];
			lat[r] = 0.5 * lat[r] + 0.5 * tier__sim_loaded_latency(s->idle_ns[node], util);
			next += share[r] * lat[r];
		}
		amat = next;
	}
	return amat;
}

/* Pages sorted by weight; cum[i] = share of the first i pages. Chooses how
 * many of the hottest pages each tier gets (best_cnt), trying fills below
 * capacity on the faster tiers to balance loaded latency: a/steps of tier
 * 0's capacity, b/steps of tier 1's (three or more tiers), the rest
 * top-down. */
static void choose_counts(const struct tier_sim *s, const double *cum, uint64_t n,
			  uint64_t best_cnt[TIER_SIM_MAX_TIERS])
{
	uint64_t cap[TIER_SIM_MAX_TIERS];
	double best = INFINITY, wfrac = s->accesses ? (double)s->writes / (double)s->accesses : 0.2;
	const int steps = 24;
	size_t r;
	int a, b;

	for (r = 0; r < s->nr_tiers; r++)
		cap[r] = tier__sim_tier_cap(s, r);
	for (a = 0; a <= steps; a++) {
		for (b = 0; b <= (s->nr_tiers > 2 ? steps : steps - 1) ; b++) {
			uint64_t cnt[TIER_SIM_MAX_TIERS], left = n, used = 0;
			double share[TIER_SIM_MAX_TIERS], amat;

			if (s->nr_tiers <= 2 && b > 0)
				break;
			for (r = 0; r < s->nr_tiers; r++) {
				uint64_t c = cap[r];

				if (r == 0)
					c = cap[0] * (uint64_t)a / steps;
				else if (r == 1 && s->nr_tiers > 2)
					c = cap[1] * (uint64_t)b / steps;
				if (r + 1 == s->nr_tiers)
					c = left;
				if (c > left)
					c = left;
				cnt[r] = c;
				share[r] = cum[used + c] - cum[used];
				used += c;
				left -= c;
			}
			if (left || cnt[s->nr_tiers - 1] > cap[s->nr_tiers - 1])
				continue;	/* does not fit */
			amat = model_amat(s, share, wfrac);
			if (amat < best - 1e-9) {
				best = amat;
				memcpy(best_cnt, cnt, sizeof(cnt));
			}
		}
	}
}

/* Clears the placement, then fills each tier's nodes in weight order,
 * cnt[r] pages to tier r. */
static void place_in_order(struct tier_sim *s, const uint64_t cnt[TIER_SIM_MAX_TIERS])
{
	uint64_t i = 0;
	size_t r;

	for (r = 0; r < s->nr_nodes; r++)
		s->used_pages[r] = 0;
	for (i = 0; i < s->nr_pages; i++)
		s->page_node[i] = TIER_NODE_NONE;
	for (i = 0; i <= s->nr_pages >> TIER_NODE_GEN_SHIFT; i++)
		s->node_gen[i]++;
	i = 0;
	for (r = 0; r < s->nr_tiers; r++) {
		uint64_t k;

		for (k = 0; k < cnt[r]; k++, i++) {
			const struct tier_tier *t = &s->topo.tiers[r];
			int node = t->nodes[k % t->nr_nodes];
			size_t m;

			for (m = 0; m < t->nr_nodes && s->used_pages[node] >= s->cap_pages[node]; m++)
				node = t->nodes[(k + m + 1) % t->nr_nodes];
			tier__sim_place_page(s, s->oracle.order[i], node);
		}
	}
}

/* The oracle's moves cost what anyone's do, in the cost model only: each
 * page that changed node takes a mover's CPU (a daemon's, as move_pages()
 * from a tiering daemon) and each batch of max_batch pages a TLB
 * shootdown in the application's threads. AMAT leaves them out (app_ns,
 * traffic), so the oracle stays a bound on it; the slowdown counts them.
 * Counted in the moves per tier pair too. */
static void charge_moves(struct tier_sim *s)
{
	uint64_t i, moved = 0;

	for (i = 0; i < s->nr_pages; i++) {
		uint8_t from = s->oracle.prev_node[i], to = s->page_node[i];

		if (from == to || from == TIER_NODE_NONE || to == TIER_NODE_NONE)
			continue;
		s->moved[s->node_rank[from]][s->node_rank[to]]++;
		moved++;
	}
	s->policy_cpu_ns += s->cpu_ns.migrate_page * (double)moved;
	s->cost.task_ns += s->cpu_ns.shootdown * (double)((moved + s->env.max_batch - 1) /
						      s->env.max_batch);
}

/* Places pages for weights w (one per page). */
static int oracle_epoch(struct tier_sim *s, const double *w)
{
	struct weight_order wo = { w, s };
	uint64_t best_cnt[TIER_SIM_MAX_TIERS] = { 0 };
	double *cum, total = 0;
	uint64_t i, n = s->nr_pages;
	double wfrac = s->accesses ? (double)s->writes / (double)s->accesses : 0.2;

	/* Same distribution and the same mix of stores (which load the tiers'
	 * write bandwidth), same placement. The store share is only known once
	 * the workload ran, so it is re-checked every epoch. */
	if (s->oracle.prev_weights && !memcmp(w, s->oracle.prev_weights, n * sizeof(*w)) &&
	    fabs(wfrac - s->oracle.wfrac) < 0.02)
		return 0;
	s->oracle.wfrac = wfrac;
	cum = malloc((n + 1) * sizeof(*cum));
	if (!cum)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		s->oracle.order[i] = i;
	qsort_r(s->oracle.order, n, sizeof(*s->oracle.order), cmp_weight_desc, &wo);
	cum[0] = 0;
	for (i = 0; i < n; i++)
		total += w[i];
	for (i = 0; i < n; i++)
		cum[i + 1] = cum[i] + (total > 0 ? w[s->oracle.order[i]] / total : 0);
	choose_counts(s, cum, n, best_cnt);
	memcpy(s->oracle.prev_node, s->page_node, n);
	place_in_order(s, best_cnt);
	charge_moves(s);
	free(cum);
	if (s->oracle.prev_weights)
		memcpy(s->oracle.prev_weights, w, n * sizeof(*w));
	return 0;
}

int tier__sim_oracle_init(struct tier_sim *s, struct tier_err *err)
{
	uint64_t i;

	if (!s->wl->weights && !s->wl->counts_ahead)
		return tier_err_set(err, -EINVAL,
				    "oracle: workload '%s' gives neither weights nor counts",
				    s->wl->name);
	s->oracle.enabled = true;
	s->oracle.weights = calloc(s->nr_pages, sizeof(*s->oracle.weights));
	s->oracle.prev_weights = calloc(s->nr_pages, sizeof(*s->oracle.prev_weights));
	s->oracle.order = calloc(s->nr_pages, sizeof(*s->oracle.order));
	s->oracle.prev_node = malloc(s->nr_pages);
	if (!s->oracle.weights || !s->oracle.prev_weights || !s->oracle.order ||
	    !s->oracle.prev_node)
		return tier_err_set(err, -ENOMEM, "out of memory");
	/* Never equal to real weights: the first epoch always places. */
	for (i = 0; i < s->nr_pages; i++)
		s->oracle.prev_weights[i] = -1;
	return 0;
}

/* A trace's epoch: the next epoch_acc accesses, counted ahead of the
 * replay. */
static int oracle_step_counts(struct tier_sim *s, struct tier_err *err)
{
	uint64_t epoch = s->p.oracle_epoch_accesses ? s->p.oracle_epoch_accesses
						    : TIER_SIM_ORACLE_EPOCH_ACCESSES;
	long n;

	if (s->accesses < s->oracle.next_acc)
		return 0;
	memset(s->oracle.weights, 0, s->nr_pages * sizeof(*s->oracle.weights));
	n = s->wl->counts_ahead(s->wl_priv, epoch, s->oracle.weights, err);
	if (n <= 0)
		return (int)n;	/* the end, or a corrupt trace */
	s->oracle.next_acc = s->accesses + (uint64_t)n;
	if (oracle_epoch(s, s->oracle.weights))
		return tier_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

int tier__sim_oracle_step(struct tier_sim *s, uint64_t now_us, struct tier_err *err)
{
	int ret;

	if (!s->oracle.enabled)
		return 0;
	if (!s->wl->weights)
		return oracle_step_counts(s, err);
	if (s->app_ns < s->ep.start_ns || s->accesses != s->ep.acc)
		return 0;
	/* Start of an epoch: place for this epoch's distribution. */
	s->wl->weights(s->wl_priv, now_us, s->oracle.weights);
	ret = oracle_epoch(s, s->oracle.weights);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	return 0;
}

void tier__sim_oracle_release(struct tier_sim *s)
{
	free(s->oracle.weights);
	free(s->oracle.prev_weights);
	free(s->oracle.order);
	free(s->oracle.prev_node);
}
