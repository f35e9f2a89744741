/* damon.c - DAMON-based tiering (DAMOS migrate_hot / migrate_cold),
 * re-implemented as a peer, configured as damo's reference two-tier setup
 * does it (damo scripts/mem_tier.sh, kernel >= 6.16):
 *
 *   node 0: migrate_cold 1, access rate 0%..0%, apply interval 1 s,
 *           quota 200 MB per 1 s, goal node_mem_free_bp 0.5% of node 0,
 *           filter "reject young";
 *   node 1: migrate_hot 0, access rate 5%..max, apply interval 1 s,
 *           quota 200 MB per 1 s, goal node_mem_used_bp 99.7% of node 0,
 *           filter "allow young".
 * No age limits, no weights given: damo then sets the quota weights (size,
 * nr_accesses, age) to 1, 1, 1 (damo src/_damon_args.py).
 *
 * Sources (mm/damon/core.c unless said otherwise):
 *  - damos_adjust_quota(): a charge window per reset interval; the score
 *    histogram and min_score so that the highest-scoring regions fill the
 *    effective quota first;
 *  - damos_set_effective_quota(), damos_quota_score(),
 *    damon_feed_loop_next_input() (the default "consist" goal tuner):
 *    esz_bp starts at 0, next = max(last, 10000) * (1 + (goal - score) /
 *    goal) below the goal, shrinks above it (to 10000 at twice the goal);
 *    esz = esz_bp / 10000 bytes, capped by the 200 MB size quota. The
 *    effective quota thus starts at 1 byte and grows each second by the
 *    relative shortfall (~14%/s at 86% of the goal, as measured in the
 *    guest; see ../shared/notes/tiered-guest.md);
 *  - damos_get_node_mem_bp(): used or free pages * 10000 / total of a node;
 *  - damos_apply_scheme(): a region that would overflow the quota is cut
 *    to the page-aligned remainder; the whole tried size is charged, moved
 *    or not; the next window resumes after the last charged address
 *    (damos_skip_charged_region());
 *  - mm/damon/ops-common.c damon_hot_score() / damon_cold_score();
 *  - mm/damon/paddr.c: the young filter tests and clears the accessed bit
 *    (damos_pa_filter_match()); migration allocates on the target node
 *    only, without reclaim (GFP_NOWAIT: fails under its min watermark);
 *  - filter defaults (6.15+): a page matching no filter gets the opposite
 *    of the last filter's verdict.
 *
 * Mapping onto the simulator: the tracker's DAMON regions (5 ms sampling,
 * 100 ms aggregation, 10..1000 regions, no interval auto-tuning) span the
 * workload's pages, whatever node they sit on; a scheme of node N applies
 * to the pages of each region that are on N (paddr monitors N's physical
 * range). Region age is rebuilt per page from the aggregations (DAMON's
 * rule: +1 while nr_accesses stays within max/10, else 0). The young
 * filter reads per-page accessed bits from the "idle" tracker; without
 * them a page counts as young when its region was accessed.
 *
 * More than two tiers: the reference setup is two-tier; here each pair of
 * adjacent tiers (r, r+1) gets the pair of schemes, cold from each node of
 * tier r to its nearest node of tier r+1 (goal: free space on the source),
 * hot from each node of tier r+1 to its nearest node of tier r (goal: use
 * of that node). A middle tier thus runs both a hot and a cold scheme.
 *
 * What it does in the simulator (dram-cxl, gups-hotset, 20 s; measured by
 * printing each scheme's state at each apply):
 *  - Regions do read 0%: 3 to 10 of the ~28 regions, 1k to 14k of the 32k
 *    pages, at each aggregation. That is sampling noise, not cold memory:
 *    a cold page here takes ~17 accesses a second (the suite's 128 MiB at
 *    one core's full rate), so the page a region samples is seen accessed
 *    in a 5 ms sample with p ~ 0.08 and in none of 20 samples with p ~ 0.18.
 *  - The young filter rejects nearly everything: 8100 to 8190 of node 0's
 *    8192 pages are young at every apply, since a page idle for the whole
 *    second before (the idle tracker's period) has p = e^-17. So
 *    migrate_cold finds ~20 pages a second, and migrate_hot cannot promote
 *    into a node kept under its min watermark. In the kernel the bit is
 *    older still (cleared only by DAMON's own sampling and by the filter),
 *    so it rejects even more. At a server's density (cold pages touched
 *    well under once a second) most cold pages would pass it: a density
 *    question, not a modelling one.
 *  - With the goals (the default), the effective quota of migrate_cold
 *    starts at one byte and at most doubles per second while node 0 has no
 *    free room (score 0): 512 KiB in the 20th second, 200 MB only after
 *    ~28 s. Whatever the density, a run that starts with node 0 full moves
 *    at most ~1 MiB in 20 s. damon-fixed-quota removes that limit, not the
 *    filter's: it moved 360 KiB in the same run.
 *
 * Not modelled: the interval auto-tuning (monitoring_intervals_goal 4% 3
 * 5ms 10s) and its interaction measured on 7.2 (damon_set_attrs() resetting
 * the apply countdown so the schemes never ran); the kernel's own reclaim
 * (the setup leaves demotion to DAMON).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policies/linux_mm.h"
#include "core/policies/peers.h"
#include "core/policy.h"

/* include/linux/damon.h */
#define DAMOS_MAX_SCORE 99
#define DAMON_MAX_SUBSCORE 100
#define DAMON_MAX_AGE_IN_LOG 32

enum damos_action {
	DAMOS_MIGRATE_HOT,
	DAMOS_MIGRATE_COLD,
};

enum damos_goal_metric {
	DAMOS_QUOTA_NODE_MEM_USED_BP,
	DAMOS_QUOTA_NODE_MEM_FREE_BP,
};

/* damo scripts/mem_tier.sh (damonitor/damo 7e1d3afcf9b9), the lines of
 * its `damo start` command; the same for both schemes unless said. */
static const struct tier_damon_config damon_defaults = {
	.apply_interval_us = 1000000,		/* --damos_apply_interval 1s */
	.quota_reset_us = 1000000,		/* --damos_quota_interval 1s */
	.quota_sz_bytes = UINT64_C(200) << 20,	/* --damos_quota_space 200MB */
	/* No --damos_quota_weights given: damo's default 1 1 1
	 * (src/_damon_args.py, not re-checked here). */
	.weight_sz = 1,
	.weight_nr_accesses = 1,
	.weight_age = 1,
	.hot_min_access_pct = 5,		/* migrate_hot: --damos_access_rate 5% max */
	.cold_max_access_pct = 0,		/* migrate_cold: --damos_access_rate 0% 0% */
	.free_goal_bp = 50,			/* --damos_quota_goal node_mem_free_bp 0.5% 0 */
	.used_goal_bp = 9970,			/* --damos_quota_goal node_mem_used_bp 99.7% 0 */
	.quota_goals = true,
};

/* damon-fixed-quota: the same schemes, access patterns and young filters
 * with the 200 MB/s size quotas alone, no quota goals. The setup measured
 * in the test guest before the goals (../shared/notes/peers.md: 90% of the
 * hot set on node 0 at 8 s, ~97% of the cold pages promoted too). Without
 * goals mm/damon/core.c damos_set_effective_quota() (6.12, the same in
 * 6.16) takes `if (!quota->ms && list_empty(&quota->goals)) quota->esz =
 * quota->sz;`: every window may charge the full 200 MB at once. */
static const struct tier_damon_config damon_fixed_quota = {
	.apply_interval_us = 1000000,
	.quota_reset_us = 1000000,
	.quota_sz_bytes = UINT64_C(200) << 20,
	.weight_sz = 1,
	.weight_nr_accesses = 1,
	.weight_age = 1,
	.hot_min_access_pct = 5,
	.cold_max_access_pct = 0,
	.free_goal_bp = 50,
	.used_goal_bp = 9970,
	.quota_goals = false,
};

struct damos_scheme {
	enum damos_action action;
	int src_node;			/* the monitored node (paddr context) */
	int target_nid;
	bool allow_young;		/* filter: allow young / reject young */
	enum damos_goal_metric goal_metric;
	int goal_nid;
	uint64_t goal_bp;
	/* quota state (struct damos_quota) */
	bool started;
	uint64_t charged_from_us;
	uint64_t esz_bp, esz, charged_sz, total_charged_sz;
	bool charge_from_set;
	uint64_t charge_addr_from;	/* page index */
	unsigned min_score;
	uint64_t next_apply_us;
	/* stats (schemes/N/stats) */
	uint64_t nr_tried, sz_tried, nr_applied, sz_applied, qt_exceeds;
};

struct damon_region {
	uint64_t start, end;		/* pages */
	uint32_t nr_accesses, max;
	uint32_t aggr_us;
};

struct damon_regions {
	struct damon_region *r;
	size_t nr, cap;
};

struct damon {
	const struct tier_env *env;
	struct tier_damon_config cfg;
	uint64_t nr_pages;		/* size of the per-page arrays */
	struct tier__lmm_wmarks wm[TIER_MAX_NODES];
	uint8_t *young;			/* per page: accessed bit seen */
	uint8_t *last_nr;		/* per page: region nr_accesses last aggregation */
	uint16_t *age;			/* per page: aggregations at that frequency */
	bool have_page_bits;		/* idle tracker present */
	struct damon_regions regs[2];	/* [cur]: being filled, [!cur]: previous */
	int cur;
	struct damos_scheme *schemes;
	size_t nr_schemes;
	uint64_t hist[DAMOS_MAX_SCORE + 1];
	uint64_t *batch;
	int *batch_nodes;
	int *batch_status;
	size_t batch_cap;
};

/* --- observations ----------------------------------------------------------- */

static int region_push(struct damon_regions *rs, const struct tier_obs *o, uint64_t end)
{
	if (rs->nr == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 256;
		struct damon_region *n = realloc(rs->r, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rs->r = n;
		rs->cap = cap;
	}
	rs->r[rs->nr].start = o->page;
	rs->r[rs->nr].end = end;
	rs->r[rs->nr].nr_accesses = o->count;
	rs->r[rs->nr].max = o->max;
	rs->r[rs->nr].aggr_us = o->interval_us;
	rs->nr++;
	return 0;
}

static void damon_observe(void *priv, const struct tier_obs *obs, size_t n)
{
	struct damon *d = priv;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tier_obs *o = &obs[i];
		uint64_t p, end = o->page + o->nr_pages;

		if (o->kind != TIER_OBS_ACCESSED || o->page >= d->nr_pages)
			continue;
		if (end > d->nr_pages)
			end = d->nr_pages;
		if (o->max <= 1) {
			/* An accessed-bit scan of single pages. */
			d->have_page_bits = true;
			if (o->count)
				for (p = o->page; p < end; p++)
					d->young[p] = 1;
			continue;
		}
		/* A DAMON region of one aggregation; regions arrive in address
		 * order, a new aggregation starts again at the first page. */
		if (o->page == 0 && d->regs[d->cur].nr) {
			d->cur = !d->cur;
			d->regs[d->cur].nr = 0;
		}
		if (region_push(&d->regs[d->cur], o, end))
			continue;	/* out of memory: the region is not seen */
		{
			uint32_t thres = o->max / 10 ? o->max / 10 : 1;
			uint8_t nr = o->count > 255 ? 255 : (uint8_t)o->count;

			for (p = o->page; p < end; p++) {
				uint8_t last = d->last_nr[p];
				uint8_t diff = last > nr ? last - nr : nr - last;

				if (diff <= thres) {
					if (d->age[p] < UINT16_MAX)
						d->age[p]++;
				} else {
					d->age[p] = 0;
				}
				d->last_nr[p] = nr;
			}
		}
	}
}

/* The latest complete aggregation. */
static const struct damon_regions *last_regions(const struct damon *d)
{
	const struct damon_regions *c = &d->regs[d->cur];

	if (c->nr && c->r[c->nr - 1].end >= d->nr_pages)
		return c;
	return &d->regs[!d->cur];
}

/* --- scoring and quotas --------------------------------------------------------- */

/* Pages of [start, end) on node, and their mean age (aggregations). */
static uint64_t pages_on(const struct damon *d, uint64_t start, uint64_t end, int node,
			 uint64_t *mean_age)
{
	uint64_t p, n = 0, age = 0;

	for (p = start; p < end; p++)
		if (d->env->page_node[p] == node) {
			n++;
			age += d->age[p];
		}
	*mean_age = n ? age / n : 0;
	return n;
}

/* damon_hot_score(): frequency and log2 age (in seconds) subscores,
 * weighted; age counts against hotness when the region was not accessed. */
static int hot_score(const struct damon *d, const struct damon_region *r, uint64_t age)
{
	unsigned fw = d->cfg.weight_nr_accesses, aw = d->cfg.weight_age;
	int freq = r->max ? (int)(r->nr_accesses * DAMON_MAX_SUBSCORE / r->max) : 0;
	uint64_t age_in_sec = age * r->aggr_us / 1000000;
	int age_in_log, age_sub, hotness;

	for (age_in_log = 0; age_in_log < DAMON_MAX_AGE_IN_LOG && age_in_sec;
	     age_in_log++, age_in_sec >>= 1)
		;
	if (freq == 0)
		age_in_log *= -1;
	age_in_log += DAMON_MAX_AGE_IN_LOG;
	age_sub = age_in_log * DAMON_MAX_SUBSCORE / DAMON_MAX_AGE_IN_LOG / 2;
	hotness = (int)(fw * (unsigned)freq + aw * (unsigned)age_sub);
	if (fw + aw)
		hotness /= (int)(fw + aw);
	return hotness * DAMOS_MAX_SCORE / DAMON_MAX_SUBSCORE;
}

static unsigned scheme_score(const struct damon *d, const struct damos_scheme *s,
			     const struct damon_region *r, uint64_t age)
{
	int h = hot_score(d, r, age);

	return (unsigned)(s->action == DAMOS_MIGRATE_HOT ? h : DAMOS_MAX_SCORE - h);
}

/* __damos_valid_target(): the access pattern. damo turns the access-rate
 * percentages into nr_accesses with the aggregation's maximum. */
static bool pattern_ok(const struct damon *d, const struct damos_scheme *s,
		       const struct damon_region *r)
{
	if (s->action == DAMOS_MIGRATE_HOT)
		return r->nr_accesses >= d->cfg.hot_min_access_pct * r->max / 100;
	return r->nr_accesses <= d->cfg.cold_max_access_pct * r->max / 100;
}

/* damon_feed_loop_next_input(): the goal is a score of 10000. */
static uint64_t feed_loop_next_input(uint64_t last_input, uint64_t score)
{
	const uint64_t goal = 10000, min_input = 10000;
	uint64_t diff, comp;

	if (score == goal)
		return last_input;
	if (score >= goal * 2)
		return min_input;
	diff = score > goal ? score - goal : goal - score;
	comp = last_input < UINT64_MAX / diff ? last_input * diff / goal : last_input / goal * diff;
	if (score > goal)
		return last_input - comp > min_input ? last_input - comp : min_input;
	return last_input < UINT64_MAX - comp ? last_input + comp : UINT64_MAX;
}

/* damos_get_node_mem_bp() */
static uint64_t node_mem_bp(const struct damon *d, int nid, enum damos_goal_metric m)
{
	uint64_t total, free;

	tier__lmm_node_pages(d->env, nid, &total, &free);
	if (!total)
		return 0;
	return (m == DAMOS_QUOTA_NODE_MEM_USED_BP ? total - free : free) * 10000 / total;
}

static void set_effective_quota(struct damon *d, struct damos_scheme *s)
{
	uint64_t cur, score, esz;

	if (!d->cfg.quota_goals) {
		s->esz = d->cfg.quota_sz_bytes;	/* quota->esz = quota->sz */
		return;
	}
	cur = node_mem_bp(d, s->goal_nid, s->goal_metric);
	score = cur * 10000 / s->goal_bp;	/* damos_quota_score() */
	s->esz_bp = feed_loop_next_input(s->esz_bp > 10000 ? s->esz_bp : 10000, score);
	esz = s->esz_bp / 10000;
	if (d->cfg.quota_sz_bytes && d->cfg.quota_sz_bytes < esz)
		esz = d->cfg.quota_sz_bytes;
	s->esz = esz;
}

/* damos_adjust_quota(): charge windows and the minimum score. */
static void adjust_quota(struct damon *d, struct damos_scheme *s, uint64_t now_us)
{
	const struct damon_regions *rs = last_regions(d);
	uint64_t cumulated = 0, page_bytes = UINT64_C(1) << d->env->page_shift;
	unsigned score, max_score = 0;
	size_t i;

	if (!s->started) {
		s->started = true;
		s->charged_from_us = now_us;
		set_effective_quota(d, s);
	} else if (now_us >= s->charged_from_us + d->cfg.quota_reset_us) {
		if (s->esz && s->charged_sz >= s->esz)
			s->qt_exceeds++;
		s->total_charged_sz += s->charged_sz;
		s->charged_from_us = now_us;
		s->charged_sz = 0;
		set_effective_quota(d, s);
	}
	memset(d->hist, 0, sizeof(d->hist));
	for (i = 0; i < rs->nr; i++) {
		const struct damon_region *r = &rs->r[i];
		uint64_t age, n;

		if (!pattern_ok(d, s, r))
			continue;
		n = pages_on(d, r->start, r->end, s->src_node, &age);
		if (!n)
			continue;
		score = scheme_score(d, s, r, age);
		d->hist[score] += n * page_bytes;
		if (score > max_score)
			max_score = score;
	}
	*d->env->work_units += rs->nr;
	for (score = max_score;; score--) {
		cumulated += d->hist[score];
		if (cumulated >= s->esz || !score)
			break;
	}
	s->min_score = score;
}

/* --- applying a scheme -------------------------------------------------------- */

static void flush_moves(struct damon *d, struct damos_scheme *s, size_t n)
{
	const struct tier_env *env = d->env;
	long moved;
	size_t i;

	if (!n)
		return;
	moved = env->migrator->move(env->migrator_priv, d->batch, d->batch_nodes,
				    d->batch_status, n);
	if (moved < 0)
		return;
	for (i = 0; i < n; i++)
		if (d->batch_status[i] == s->target_nid)
			s->sz_applied += UINT64_C(1) << env->page_shift;
}

/* damon_pa_migrate() on the first nr on-node pages from start; returns
 * the page index after the last one tried. */
static uint64_t migrate_pages(struct damon *d, struct damos_scheme *s,
			      const struct damon_region *r, uint64_t start, uint64_t nr)
{
	const struct tier_env *env = d->env;
	uint64_t total, free, p;
	int64_t room;
	size_t n = 0;

	tier__lmm_node_pages(env, s->target_nid, &total, &free);
	room = (int64_t)free;
	for (p = start; p < r->end && nr; p++) {
		bool young;

		if (env->page_node[p] != s->src_node)
			continue;
		nr--;
		(*env->work_units)++;
		/* The young filter tests and clears the accessed bit. */
		young = d->have_page_bits ? d->young[p] : r->nr_accesses > 0;
		d->young[p] = 0;
		if (young != s->allow_young)
			continue;
		/* GFP_NOWAIT on the target node only: fails under min. */
		if (room <= (int64_t)d->wm[s->target_nid].min)
			continue;
		room--;
		d->batch[n] = p;
		d->batch_nodes[n] = s->target_nid;
		if (++n == d->batch_cap) {
			flush_moves(d, s, n);
			n = 0;
		}
	}
	flush_moves(d, s, n);
	return p;
}

/* kdamond_apply_schemes() for one scheme: regions in address order,
 * resuming after the last charged address, those at or above min_score,
 * until the quota is charged. */
static void apply_scheme(struct damon *d, struct damos_scheme *s, uint64_t now_us)
{
	const struct damon_regions *rs = last_regions(d);
	const uint64_t page_bytes = UINT64_C(1) << d->env->page_shift;
	size_t i;

	adjust_quota(d, s, now_us);
	for (i = 0; i < rs->nr; i++) {
		const struct damon_region *r = &rs->r[i];
		uint64_t start = r->start, age, n, sz, end, applied;

		if (s->esz && s->charged_sz >= s->esz)
			break;
		/* damos_skip_charged_region() */
		if (s->charge_from_set) {
			if (i + 1 == rs->nr) {
				s->charge_from_set = false;
				continue;
			}
			if (r->end <= s->charge_addr_from)
				continue;
			if (r->start < s->charge_addr_from)
				start = s->charge_addr_from;
			s->charge_from_set = false;
		}
		if (!pattern_ok(d, s, r))
			continue;
		n = pages_on(d, start, r->end, s->src_node, &age);
		if (!n || scheme_score(d, s, r, age) < s->min_score)
			continue;
		sz = n * page_bytes;
		if (s->esz && s->charged_sz + sz > s->esz) {
			sz = (s->esz - s->charged_sz) / page_bytes * page_bytes;
			if (!sz)
				continue;
		}
		applied = s->sz_applied;
		end = migrate_pages(d, s, r, start, sz / page_bytes);
		s->nr_tried++;
		s->sz_tried += sz;
		if (s->sz_applied != applied)
			s->nr_applied++;
		s->charged_sz += sz;
		if (s->esz && s->charged_sz >= s->esz) {
			s->charge_from_set = true;
			s->charge_addr_from = end;
		}
	}
}

static int damon_tick(void *priv, uint64_t now_us)
{
	struct damon *d = priv;
	size_t i;

	if (!last_regions(d)->nr)
		return 0;	/* no aggregation yet */
	for (i = 0; i < d->nr_schemes; i++) {
		struct damos_scheme *s = &d->schemes[i];

		if (now_us < s->next_apply_us)
			continue;
		/* On the apply interval's own clock, so that charge windows
		 * are whole intervals whatever the tick's jitter. */
		apply_scheme(d, s, s->next_apply_us);
		while (s->next_apply_us <= now_us)
			s->next_apply_us += d->cfg.apply_interval_us;
	}
	return 0;
}

/* --- lifecycle -------------------------------------------------------------- */

static void damon_destroy(void *priv)
{
	struct damon *d = priv;

	if (!d)
		return;
	free(d->young);
	free(d->last_nr);
	free(d->age);
	free(d->regs[0].r);
	free(d->regs[1].r);
	free(d->schemes);
	free(d->batch);
	free(d->batch_nodes);
	free(d->batch_status);
	free(d);
}

/* Nearest node of tier rank to node (SLIT distance, then id). */
static int nearest_in_tier(const struct tier_env *env, int rank, int node)
{
	const struct tier_tier *t = &env->topo->tiers[rank];
	int best = -1, best_d = 0;
	size_t k;

	for (k = 0; k < t->nr_nodes; k++) {
		int d = tier_topology_distance(env->topo, node, t->nodes[k]);

		if (d < 0)
			d = 255;
		if (best < 0 || d < best_d) {
			best = t->nodes[k];
			best_d = d;
		}
	}
	return best;
}

static int add_schemes(struct damon *d)
{
	const struct tier_topology *topo = d->env->topo;
	size_t r, k, n = 0, cap = 0;

	for (r = 0; r + 1 < topo->nr_tiers; r++)
		cap += topo->tiers[r].nr_nodes + topo->tiers[r + 1].nr_nodes;
	d->schemes = calloc(cap ? cap : 1, sizeof(*d->schemes));
	if (!d->schemes)
		return -ENOMEM;
	for (r = 0; r + 1 < topo->nr_tiers; r++) {
		for (k = 0; k < topo->tiers[r].nr_nodes; k++) {
			struct damos_scheme *s = &d->schemes[n++];

			s->action = DAMOS_MIGRATE_COLD;
			s->src_node = topo->tiers[r].nodes[k];
			s->target_nid = nearest_in_tier(d->env, (int)r + 1, s->src_node);
			s->allow_young = false;
			s->goal_metric = DAMOS_QUOTA_NODE_MEM_FREE_BP;
			s->goal_nid = s->src_node;
			s->goal_bp = d->cfg.free_goal_bp;
		}
		for (k = 0; k < topo->tiers[r + 1].nr_nodes; k++) {
			struct damos_scheme *s = &d->schemes[n++];

			s->action = DAMOS_MIGRATE_HOT;
			s->src_node = topo->tiers[r + 1].nodes[k];
			s->target_nid = nearest_in_tier(d->env, (int)r, s->src_node);
			s->allow_young = true;
			s->goal_metric = DAMOS_QUOTA_NODE_MEM_USED_BP;
			s->goal_nid = s->target_nid;
			s->goal_bp = d->cfg.used_goal_bp;
		}
	}
	d->nr_schemes = n;
	return 0;
}

static int damon_create_with(const struct tier_env *env, const struct tier_damon_config *cfg,
			     void **priv, struct tier_err *err)
{
	struct damon *d = calloc(1, sizeof(*d));
	uint64_t now_us, nr = env->nr_pages ? env->nr_pages : 1;
	size_t i;
	int ret;

	if (!d)
		return tier_err_set(err, -ENOMEM, "out of memory");
	d->env = env;
	d->cfg = *cfg;
	d->batch_cap = env->max_batch ? env->max_batch : 1024;
	d->young = calloc(nr, 1);
	d->last_nr = calloc(nr, 1);
	d->age = calloc(nr, sizeof(*d->age));
	d->batch = calloc(d->batch_cap, sizeof(*d->batch));
	d->batch_nodes = calloc(d->batch_cap, sizeof(*d->batch_nodes));
	d->batch_status = calloc(d->batch_cap, sizeof(*d->batch_status));
	if (!d->young || !d->last_nr || !d->age || !d->batch || !d->batch_nodes ||
	    !d->batch_status || add_schemes(d)) {
		damon_destroy(d);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	ret = tier__lmm_wmarks_init(env, TIER_LMM_WATERMARK_SCALE_FACTOR, d->wm);
	if (ret) {
		damon_destroy(d);
		return tier_err_set(err, ret, "damon: cannot read node sizes");
	}
	d->nr_pages = env->nr_pages;
	now_us = env->clock->now_us(env->clock_priv);
	for (i = 0; i < d->nr_schemes; i++)
		d->schemes[i].next_apply_us = now_us + d->cfg.apply_interval_us;
	*priv = d;
	return 0;
}

static int damon_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	return damon_create_with(env, &damon_defaults, priv, err);
}

static int damon_fixed_quota_create(const struct tier_env *env, void **priv,
				    struct tier_err *err)
{
	return damon_create_with(env, &damon_fixed_quota, priv, err);
}

static int damon_resize(void *priv)
{
	struct damon *d = priv;
	uint64_t nr = d->env->nr_pages;
	uint8_t *y, *l;
	uint16_t *a;

	if (nr <= d->nr_pages)
		return 0;
	/* Each array that grew is kept: it works at the old size too. */
	y = realloc(d->young, nr);
	if (!y)
		return -ENOMEM;
	d->young = y;
	l = realloc(d->last_nr, nr);
	if (!l)
		return -ENOMEM;
	d->last_nr = l;
	a = realloc(d->age, nr * sizeof(*a));
	if (!a)
		return -ENOMEM;
	d->age = a;
	memset(d->young + d->nr_pages, 0, nr - d->nr_pages);
	memset(d->last_nr + d->nr_pages, 0, nr - d->nr_pages);
	memset(d->age + d->nr_pages, 0, (nr - d->nr_pages) * sizeof(*a));
	d->nr_pages = nr;
	return 0;
}

static void damon_forget(void *priv, uint64_t first, uint64_t nr)
{
	struct damon *d = priv;
	uint64_t end = first + nr < d->nr_pages ? first + nr : d->nr_pages;

	if (first >= end)
		return;
	memset(d->young + first, 0, end - first);
	memset(d->last_nr + first, 0, end - first);
	memset(d->age + first, 0, (end - first) * sizeof(*d->age));
}

static size_t damon_metadata_bytes(void *priv)
{
	const struct damon *d = priv;

	return sizeof(*d) + d->nr_pages * 4 +
	       (d->regs[0].cap + d->regs[1].cap) * sizeof(struct damon_region) +
	       d->nr_schemes * sizeof(*d->schemes);
}

const struct tier_damon_config *tier__damon_config(const void *priv)
{
	return &((const struct damon *)priv)->cfg;
}

const struct tier_policy_ops tier_policy_damon = {
	.name = "damon",
	.description = "DAMOS migrate_hot/migrate_cold as damo's mem_tier.sh (quota goals, 200 MB/s)",
	.obs_kinds = TIER_OBS_ACCESSED,
	/* DAMON regions, plus accessed bits for the young filter. */
	.default_tracker = "damon,idle",
	.interval_us = 1000000,
	.create = damon_create,
	.destroy = damon_destroy,
	.observe = damon_observe,
	.tick = damon_tick,
	.resize = damon_resize,
	.forget = damon_forget,
	.metadata_bytes = damon_metadata_bytes,
};

const struct tier_policy_ops tier_policy_damon_fixed_quota = {
	.name = "damon-fixed-quota",
	.variant_of = "damon",
	.description = "damon with fixed 200 MB/s quotas and no quota goals (the guest's earlier setup)",
	.obs_kinds = TIER_OBS_ACCESSED,
	.default_tracker = "damon,idle",
	.interval_us = 1000000,
	.create = damon_fixed_quota_create,
	.destroy = damon_destroy,
	.observe = damon_observe,
	.tick = damon_tick,
	.resize = damon_resize,
	.forget = damon_forget,
	.metadata_bytes = damon_metadata_bytes,
};
