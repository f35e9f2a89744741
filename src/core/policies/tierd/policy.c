/* policy.c - tierd's placement policy: its state's life, the tick, and
 * its ops table.
 *
 * Hotness (heat.c): every observation kind is turned into an estimate of
 * accesses (tier_obs_accesses(), core/policy.h: a DAMON region accessed in
 * k of m samples: -ln(1 - k/m) * m accesses per page, a sample: its
 * period, a hint fault: one access plus a rate from its latency) and added
 * to two exponentially decaying per-page scores:
 *   long  - time constant 2 s: frequency, what deserves the fast tier;
 *   short - time constant 0.25 s: momentum, what just became hot.
 * Decay is in time (per tick, by the elapsed microseconds), not in counts.
 * Samples are sparse per page, so they are also pooled per 2 MiB region:
 * toward the region's mean where its pages are alike, and as the region's
 * own momentum (its recent sampled rate against its long one, beyond the
 * noise of 512 pages' samples), which sees a hot set move within a tick.
 *
 * Thresholds (thresholds.c) are fitted to the tiers' capacities: a log
 * histogram of scores (16 bins per octave) gives, for each tier, the score
 * above which the hottest pages fill it (tier 0 keeps a headroom free for
 * promotions). Each page's target tier follows from its score directly,
 * so a cold page in tier 0 may go straight to the slowest tier and a hot
 * page straight to the top. Huge pages (huge.c) are placed as units.
 *
 * Moves (fill.c): demotions of the coldest pages first, as far as needed
 * to keep the headroom and make room for promotions; then promotions of
 * the hottest. A move must pay for itself (expected latency saved over the
 * long time constant > its cost), must clear the threshold by a margin
 * (hysteresis), and a page that moved waits a cool-down before it may move
 * back (ping-pong damping). Everything within the migration budget.
 *
 * Control groups (groups.c, core/groups.h): a group's cap on a tier
 * demotes its coldest pages there first and blocks promotions past it, and
 * its pages spilling from a faster tier skip a tier whose cap it reached;
 * a group at or below its min in a tier is no other group's victim there;
 * with weights, shares of each tier are split by weighted max-min fairness
 * over the pages each group has in use, and a group below its share
 * displaces the coldest pages of a group above its share.
 *
 * Cost (chunks.c): a tick visits the 2 MiB chunks that hold any state
 * (or a hint), not every page; a DAMON region covering whole chunks
 * updates each as one; idle pages count into the histogram by per-tier
 * counts, and the coldest victims come from idle chunks as far as a tick
 * needs them. So a step grows with what was observed and what moves.
 *
 * What it is tuned by: struct tier_tierd_params (core/policies/tierd.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policies/tierd/internal.h"

static void free_state(struct tier__tierd *t)
{
	free(t->pages);
	free(t->hist);
	free(t->cand);
	free(t->down);
	free(t->score);
	free(t->bin);
	free(t->reg_mean);
	free(t->reg_shrink);
	free(t->reg_sshort);
	free(t->reg_since_ms);
	free(t->reg_boost);
	free(t->gs);
	tier__tierd_chunks_free(t);
	free(t);
}

/* Grows every per-page and per-region array to n pages (new pages start
 * with no heat, score 0, in idle chunks; the new chunks' pages are
 * counted). On -ENOMEM the policy keeps working on its old size. */
static int grow(struct tier__tierd *t, uint64_t n)
{
	/* At least one slot: a daemon may start with nothing managed yet. */
	size_t slots = n ? n : 1, nr_regions = (n >> TIERD_REGION_SHIFT) + 1;
	size_t old_slots = t->pages ? (t->nr_pages ? t->nr_pages : 1) : 0;
	uint64_t old = t->nr_pages;

	if (t->pages && n <= t->nr_pages)
		return 0;
	/* The last chunk grows: its pages take their own rates first (the
	 * new ones start at none). */
	if (t->nr_pages & (TIERD_CHUNK_PAGES - 1))
		tier__tierd_chunk_split(t, t->nr_chunks - 1);
#define GROW(field, count)                                                \
	do {                                                              \
		void *q = realloc(t->field, (count) * sizeof(*t->field)); \
		if (!q)                                                   \
			return -ENOMEM;                                   \
		t->field = q;                                             \
	} while (0)
	GROW(score, slots);
	GROW(bin, slots);
	GROW(reg_mean, nr_regions);
	GROW(reg_shrink, nr_regions);
	GROW(reg_boost, nr_regions);
	{
		size_t old_regions = t->pages ? (size_t)(t->nr_pages >> TIERD_REGION_SHIFT) + 1 : 0;
		size_t r;

		GROW(reg_sshort, nr_regions);
		memset(t->reg_sshort + old_regions, 0,
		       (nr_regions - old_regions) * sizeof(*t->reg_sshort));
		GROW(reg_since_ms, nr_regions);
		memset(t->reg_since_ms + old_regions, 0,
		       (nr_regions - old_regions) * sizeof(*t->reg_since_ms));
		/* An idle region's figures: what pooling its zeros gives. */
		for (r = old_regions; r < nr_regions; r++) {
			t->reg_mean[r] = 0;
			t->reg_shrink[r] = 1.0f;
			t->reg_boost[r] = 0;
		}
	}
	if (tier__tierd_chunks_grow(t, n))
		return -ENOMEM;
	GROW(pages, slots);
#undef GROW
	memset(t->score + old_slots, 0, (slots - old_slots) * sizeof(*t->score));
	memset(t->bin + old_slots, 0, (slots - old_slots) * sizeof(*t->bin));
	memset(t->pages + t->nr_pages, 0, (slots - t->nr_pages) * sizeof(*t->pages));
	t->nr_pages = n;
	tier__tierd_chunks_count_new(t, old);
	return 0;
}

static int tierd_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	struct tier__tierd *t = calloc(1, sizeof(*t));
	size_t r;

	if (!t)
		return tier_err_set(err, -ENOMEM, "out of memory");
	t->env = env;
	t->prm = &tier_tierd_params_default;
	t->nr_tiers = env->topo->nr_tiers < 8 ? env->topo->nr_tiers : 8;
	t->hist = calloc(TIERD_NR_BINS, sizeof(*t->hist));
	t->gs = calloc(1, sizeof(*t->gs));
	/* The ranks first: grow() counts the pages present per tier. */
	tier_node_rank_map(env->topo, t->node_rank);
	if (!t->hist || !t->gs || grow(t, env->nr_pages) || tier_mover_init(&t->mover, env, &t->budget)) {
		free_state(t);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	tier__tierd_bins_init(t);
	for (r = 0; r < TIER_MAX_TIERS; r++)
		t->fill[r] = 1.0;
	t->pinned_bin = tier__tierd_score_bin(t, TIERD_PINNED_SCORE);
	for (r = 0; r < t->nr_tiers; r++) {
		const struct tier_node *n = tier_topology_node(env->topo, env->topo->tiers[r].nodes[0]);

		t->tier_lat_ns[r] = n && n->has_hmat && n->hmat.read_latency_ns ?
				    n->hmat.read_latency_ns : 100.0 * (double)(r + 1);
	}
	t->last_us = env->clock->now_us(env->clock_priv);
	t->long_tau_us = t->prm->long_tau_us;
	tier_budget_init(&t->budget, env->budget_bytes_per_s,
			 env->budget_bytes_per_s * env->interval_us / 1000000 * 2, t->last_us);
	*priv = t;
	return 0;
}

static void tierd_destroy(void *priv)
{
	struct tier__tierd *t = priv;

	tier_mover_release(&t->mover);
	free_state(t);
}

/* The moves of a tick (or a resume): the budget brought up to date, then
 * each tier filled in turn. Records whether the budget held moves back. */
static int fill_all(struct tier__tierd *t, uint64_t now_us)
{
	int r, ret;

	/* The budget may change (a reload): its burst with it. The burst is
	 * two ticks' worth, or what accrued since the last tick (at most a
	 * second's) when ticks came further apart than the interval (the
	 * daemon's CPU share spaces them out): the rate, not the tick
	 * count, is the limit. Where the world asks for it (the daemon: its
	 * first step comes after it catalogued the address space) the bucket
	 * starts full, a second's worth at the first tick, so that the hot
	 * pages found then do not wait for the budget to accrue. */
	{
		uint64_t span = 2 * t->env->interval_us, since = now_us - t->last_tick_us;
		bool first = !t->ticked && t->env->budget_starts_full;

		if (first || since > span)
			span = first || since >= 1000000 ? 1000000 : since;
		t->budget.rate_bytes_per_s = t->env->budget_bytes_per_s;
		t->budget.burst_bytes = t->env->budget_bytes_per_s * span / 1000000;
		t->last_tick_us = now_us;
		t->ticked = true;
		tier_budget_refill(&t->budget, now_us);
		if (first)
			t->budget.tokens = t->budget.burst_bytes;
	}
	t->held_back = false;
	tier_mover_begin(&t->mover);
	for (r = 0; r + 1 < (int)t->nr_tiers; r++) {
		bool more = tier__tierd_fill_tier(t, r, now_us);

		/* Moves queued for r must land before r + 1 is planned. */
		ret = tier_mover_flush(&t->mover);
		tier__tierd_recount_moved(t);
		if (ret && ret != -EBUSY)
			return ret;
		if (!more) {
			t->held_back = true;
			break;
		}
	}
	return 0;
}

static int tierd_tick(void *priv, uint64_t now_us)
{
	struct tier__tierd *t = priv;

	if (!t->decayed)
		tier__tierd_decay(t, now_us);
	t->decayed = false;
	tier__tierd_pool_samples(t);
	tier__tierd_compute_scores(t);
	/* The scores, a pass over every live page, done: the world may be
	 * read (tier_env.pause). */
	if (t->env->pause)
		t->env->pause(t->env->pause_ctx);
	tier__tierd_balance_loaded(t);
	tier__tierd_fit_thresholds(t);
	tier__tierd_groups_update(t);
	return fill_all(t, now_us);
}

/* The last tick's scores and thresholds, filled again with the budget
 * accrued since: the moves the budget held back, without a new look. */
static int tierd_resume(void *priv, uint64_t now_us)
{
	struct tier__tierd *t = priv;

	if (!t->ticked)
		return 0;
	return fill_all(t, now_us);
}

static bool tierd_held_back(void *priv)
{
	const struct tier__tierd *t = priv;

	return t->held_back;
}

static int tierd_resize(void *priv)
{
	struct tier__tierd *t = priv;

	return grow(t, t->env->nr_pages);
}

static void tierd_forget(void *priv, uint64_t first, uint64_t nr)
{
	struct tier__tierd *t = priv;

	if (first >= t->nr_pages)
		return;
	if (nr > t->nr_pages - first)
		nr = t->nr_pages - first;
	{
		uint64_t c;

		for (c = first >> TIERD_REGION_SHIFT; c < t->nr_chunks &&
						     (c << TIERD_REGION_SHIFT) < first + nr; c++)
			tier__tierd_chunk_split(t, c);
	}
	memset(t->pages + first, 0, nr * sizeof(*t->pages));
	/* Their chunks go idle in the next decay if nothing else is left;
	 * their pages are counted again now. */
	{
		uint64_t c;

		for (c = first >> TIERD_REGION_SHIFT; c < t->nr_chunks &&
						     (c << TIERD_REGION_SHIFT) < first + nr; c++)
			tier__tierd_chunk_recount(t, c);
	}
}

static size_t tierd_metadata_bytes(void *priv)
{
	const struct tier__tierd *t = priv;

	return sizeof(*t) + t->nr_pages * (sizeof(*t->pages) + sizeof(*t->score) + sizeof(*t->bin)) +
	       (t->cap_cand + t->cap_down) * sizeof(*t->cand) +
	       ((t->nr_pages >> TIERD_REGION_SHIFT) + 1) *
		       (sizeof(*t->reg_mean) + sizeof(*t->reg_shrink) + sizeof(*t->reg_sshort) +
			sizeof(*t->reg_boost) + sizeof(*t->reg_since_ms)) +
	       TIERD_NR_BINS * sizeof(*t->hist) +
	       ((t->nr_chunks + 63) / 64) * 5 * sizeof(*t->live) +
	       t->nr_chunks * (sizeof(*t->dirty_list) + TIERD_CNT_SLOTS * sizeof(*t->cnt) +
			       sizeof(*t->ulng) + sizeof(*t->ushrt) + sizeof(*t->uborn) +
			       sizeof(*t->flat));
}

const struct tier_policy_ops tier_policy_tierd = {
	.name = "tierd",
	.description = "tierd: frequency + momentum, capacity-fitted thresholds, budgeted moves",
	.obs_kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE | TIER_OBS_HINT_FAULT,
	.default_tracker = "damon,samples",
	.interval_us = 100000,
	/* One sample per 2000 cache-line misses: ~2% of a CPU at tiersim's
	 * access rate (MEMTIS keeps sampling under 3%); ten times HeMem's
	 * rate, which pays on skewed workloads whose hot pages are scattered
	 * (zipf). */
	.sample_period_lines = 2000,
	.paced = true,
	.damon_snapshot = true,
	.create = tierd_create,
	.destroy = tierd_destroy,
	.observe = tier__tierd_observe,
	.tick = tierd_tick,
	.resume = tierd_resume,
	.held_back = tierd_held_back,
	.resize = tierd_resize,
	.forget = tierd_forget,
	.explain = tier__tierd_explain,
	.metadata_bytes = tierd_metadata_bytes,
};
