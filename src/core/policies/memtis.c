/* memtis.c - MEMTIS (Lee et al., "MEMTIS: Efficient Memory Tiering with
 * Dynamic Page Classification and Page Size Determination", SOSP'23)
 * re-implemented as a core policy, after its kernel code:
 * github.com/cosmoss-jigu/memtis linux/mm/htmm_core.c (update_base_page,
 * check_base_cooling, __cooling, __adjust_active_threshold, update_pginfo),
 * linux/mm/htmm_migrater.c (kmigraterd: need_toptier_demotion, demote_node,
 * promote_node, promotion_available, cooling_node, adjusting_node),
 * linux/mm/rmap.c (cooling_page, page_check_hotness), linux/mm/mempolicy.c
 * (sysfs defaults) and linux/mm/memcontrol.c (initial thresholds).
 *
 * What MEMTIS does, and what this file does the same way:
 *  - Each sampled access adds HPAGE_PMD_NR (512) to the base page's
 *    total_accesses (so a base page and a huge page are on one scale), after
 *    lazily halving it once per cooling it missed.
 *  - A 16-bin log2 histogram of pages by get_idx(total_accesses) =
 *    min(floor(log2(n + 1)), 15) is kept up to date on every sample.
 *  - Hot threshold: every htmm_adaptation_period samples, the highest bin
 *    such that the pages at or above it fit the fast tier minus the
 *    promotion watermark (3%); it only rises between coolings, drops by one
 *    after a cooling, and is at least htmm_thres_hot (1). The warm threshold
 *    is one bin below while the hot pages fill < 75% of the fast tier.
 *  - Cooling every htmm_cooling_period samples: the histogram restarts, the
 *    cooling clock advances and kmigraterd walks every page of every node,
 *    halving counts (cooling_page: still hot at >= threshold - 1).
 *  - A sampled page at or above the hot threshold joins the active LRU list,
 *    otherwise the inactive one; threshold changes make kmigraterd re-sort
 *    the lists (adjusting_node).
 *  - kmigraterd every 500 ms (htmm_demotion/promotion_period_in_ms): the
 *    fast node demotes inactive pages below the warm threshold, oldest
 *    first, when used + pending promotions + 3% exceeds its size (or used +
 *    2% without pending promotions); a slow node promotes its active pages,
 *    oldest first, into the room above the fast node's 3% watermark.
 *  - New pages start at 2^(hot threshold + 1) accesses and skip the next
 *    cooling (set_page_coolstatus, htmm_skip_cooling = true), on the
 *    inactive list. Pages present when the policy starts are treated so.
 *
 * Published defaults (the htmm sysfs knobs in mm/mempolicy.c):
 * htmm_sample_period 199 (the policy asks the sampling tracker for one
 * sample per 199 misses), htmm_adaptation_period 100000 and
 * htmm_cooling_period 2000000 samples, htmm_thres_hot 1, htmm_nowarm 0
 * (warm band on), 500 ms kmigraterd periods. The watermarks keep their
 * percentages (3% promotion, 2% demotion) but not their absolute clamps
 * (50 MB .. 1.5 GB), which exceed a simulated fast tier.
 *
 * Not modelled: huge pages and their splitting (tiersim pages are 4 KiB;
 * the ebp histogram and skewness only matter for splitting), the adaptive
 * sample period (ksampled raises it to stay under 3% of a CPU; the period
 * stays 199), allocation-triggered cooling (htmm_thres_cooling_alloc; nothing
 * is allocated after start), direct demotion on allocation failure, store
 * sampling at its own period (a tiersim store also samples its load).
 * LRU order is kept as a per-page sequence number of when the page joined
 * its list; pages staying on a list keep their place.
 * More than two tiers: as MEMTIS, only top-tier nodes demote (to the next
 * tier); every slower tier promotes into the next faster one. The nodes of
 * one tier act as one (MEMTIS sums the top-tier nodes' limits into
 * max_nr_dram_pages).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policies/peers.h"
#include "core/policy.h"

#define HPAGE_PMD_NR 512
#define NR_BINS 16
#define HTMM_THRES_HOT 1		/* mempolicy.c htmm_thres_hot */
#define HTMM_SAMPLE_PERIOD 199		/* htmm_sample_period, load misses */
#define ADAPTATION_SAMPLES 100000	/* htmm_adaptation_period */
#define COOLING_SAMPLES 2000000		/* htmm_cooling_period */
#define KMIGRATED_PERIOD_US 500000	/* htmm_{promotion,demotion}_period_in_ms */
#define PROMOTION_WMARK_PCT 3		/* get_memcg_promotion_watermark */
#define DEMOTION_WMARK_PCT 2		/* get_memcg_demotion_watermark */
#define WARM_FILL_PCT 75		/* __adjust_active_threshold */
#define MAX_TIERS 8

enum {
	F_SEEN = 1,		/* initialised as a new page */
	F_ACTIVE = 2,		/* PageActive: on the active LRU list */
};

struct mt_page {
	uint64_t seq;		/* when it joined its LRU list */
	uint32_t total;		/* pginfo->total_accesses */
	uint16_t clock;		/* pginfo->cooling_clock */
	uint8_t flags;
};

struct memtis {
	const struct tier_env *env;
	int node_rank[TIER_MAX_NODES];
	int64_t node_free[TIER_MAX_NODES];
	size_t nr_tiers;
	struct mt_page *pages;
	uint64_t hg[NR_BINS];		/* memcg->hotness_hg */
	uint16_t cooling_clock;
	unsigned active_thr, warm_thr;
	bool cooled;
	uint64_t nr_sampled;
	bool need_cooling[MAX_TIERS];
	bool need_adjusting[MAX_TIERS];
	bool need_adjusting_all[MAX_TIERS];
	uint64_t seq;
	uint64_t max_nr_dram;		/* memcg->max_nr_dram_pages */
	uint64_t *cand;
	/* per-tier figures of the current pass */
	uint64_t used[MAX_TIERS], nr_active[MAX_TIERS];
	/* move batch */
	uint64_t *mv_pages;
	int *mv_nodes;
	int *mv_status;
	size_t batch;
	int move_err;
};

/* get_idx() */
static unsigned get_idx(uint64_t num)
{
	unsigned cnt = 0;

	num++;
	for (;;) {
		num >>= 1;
		if (num)
			cnt++;
		else
			return cnt;
		if (cnt == NR_BINS - 1)
			break;
	}
	return cnt;
}

static uint32_t halve(uint32_t v, unsigned times)
{
	return times >= 32 ? 0 : v >> times;
}

static void set_active(struct memtis *m, struct mt_page *pg, bool active)
{
	if (!!(pg->flags & F_ACTIVE) == active)
		return;
	pg->flags = (uint8_t)(active ? pg->flags | F_ACTIVE : pg->flags & ~F_ACTIVE);
	pg->seq = ++m->seq;	/* list_move to the head of the other list */
}

/* set_page_coolstatus() for a page that appears. */
static void init_page(struct memtis *m, struct mt_page *pg)
{
	pg->total = m->active_thr + 1 >= 32 ? UINT32_MAX : UINT32_C(1) << (m->active_thr + 1);
	pg->clock = (uint16_t)(m->cooling_clock + 1);	/* htmm_skip_cooling */
	pg->flags = F_SEEN;
	pg->seq = ++m->seq;
}

/* check_base_cooling() */
static void base_cooling(struct memtis *m, struct mt_page *pg)
{
	if ((int16_t)(m->cooling_clock - pg->clock) > 0) {
		pg->total = halve(pg->total, (uint16_t)(m->cooling_clock - pg->clock));
		m->hg[get_idx(pg->total)]++;
	}
	pg->clock = m->cooling_clock;
}

/* __cooling() */
static void cooling(struct memtis *m)
{
	size_t t;

	for (t = 0; t < m->nr_tiers; t++)
		if (m->need_cooling[t]) {
			/* The previous cooling is not done yet. */
			m->cooling_clock++;
			return;
		}
	memset(m->hg, 0, sizeof(m->hg));
	m->cooling_clock++;
	m->cooled = true;
	for (t = 0; t < m->nr_tiers; t++)
		m->need_cooling[t] = true;
}

static void set_lru_adjusting(struct memtis *m)
{
	size_t t;

	for (t = 0; t < m->nr_tiers; t++)
		m->need_adjusting[t] = m->need_adjusting_all[t] = true;
}

/* __adjust_active_threshold() */
static void adjust_threshold(struct memtis *m)
{
	uint64_t max = m->max_nr_dram - m->max_nr_dram * PROMOTION_WMARK_PCT / 100;
	uint64_t nr_active = 0;
	bool need_warm;
	int idx_hot;

	for (idx_hot = NR_BINS - 1; idx_hot >= 0; idx_hot--) {
		if (nr_active + m->hg[idx_hot] > max)
			break;
		nr_active += m->hg[idx_hot];
	}
	if (idx_hot != NR_BINS - 1)
		idx_hot++;
	need_warm = nr_active < max * WARM_FILL_PCT / 100;
	if (idx_hot < HTMM_THRES_HOT)
		idx_hot = HTMM_THRES_HOT;
	if (m->cooled) {
		/* After a cooling the threshold drops by at most one. */
		if ((unsigned)idx_hot < m->active_thr && m->active_thr > 1)
			m->active_thr--;
		m->cooled = false;
		set_lru_adjusting(m);
	} else if ((unsigned)idx_hot > m->active_thr) {
		m->active_thr = (unsigned)idx_hot;
		set_lru_adjusting(m);
	}
	m->warm_thr = need_warm ? m->active_thr - 1 : m->active_thr;
}

/* update_base_page() and the sample accounting of update_pginfo(). */
static void sample(struct memtis *m, uint64_t page)
{
	struct mt_page *pg = &m->pages[page];
	unsigned prev_idx, cur_idx;

	if (!(pg->flags & F_SEEN))
		init_page(m, pg);
	base_cooling(m, pg);
	prev_idx = get_idx(pg->total);
	pg->total = pg->total > UINT32_MAX - HPAGE_PMD_NR ? UINT32_MAX : pg->total + HPAGE_PMD_NR;
	cur_idx = get_idx(pg->total);
	if (prev_idx != cur_idx) {
		if (m->hg[prev_idx] > 0)
			m->hg[prev_idx]--;
		m->hg[cur_idx]++;
	}
	set_active(m, pg, cur_idx >= m->active_thr);

	m->nr_sampled++;
	if (m->nr_sampled % COOLING_SAMPLES == 0)
		cooling(m);
	else if (m->nr_sampled % ADAPTATION_SAMPLES == 0)
		adjust_threshold(m);
}

static void memtis_observe(void *priv, const struct tier_obs *obs, size_t n)
{
	struct memtis *m = priv;
	size_t i;

	for (i = 0; i < n; i++)
		if (obs[i].kind == TIER_OBS_SAMPLE && obs[i].page < m->env->nr_pages &&
		    m->env->page_node[obs[i].page] != TIER_NODE_NONE)
			sample(m, obs[i].page);
	*m->env->work_units += n;
}

/* --- kmigraterd ----------------------------------------------------------- */

/* cooling_node(): cooling_page() on every page of the tier. */
static void cooling_walk(struct memtis *m, int tier)
{
	const struct tier_env *env = m->env;
	uint64_t p;

	for (p = 0; p < env->nr_pages; p++) {
		struct mt_page *pg = &m->pages[p];
		unsigned idx;

		if (tier_page_rank(env, m->node_rank, p) != tier)
			continue;
		*env->work_units += 1;
		if ((int16_t)(m->cooling_clock - pg->clock) <= 0)
			continue;	/* already cooled: stays where it is */
		pg->total = halve(pg->total, (uint16_t)(m->cooling_clock - pg->clock));
		pg->clock = m->cooling_clock;
		idx = get_idx(pg->total);
		m->hg[idx]++;
		/* The threshold will drop by one after this cooling. */
		set_active(m, pg, idx + 1 >= m->active_thr);
	}
}

/* adjusting_node(): page_check_hotness() on one list of the tier. */
static void adjusting_walk(struct memtis *m, int tier, bool active_list)
{
	const struct tier_env *env = m->env;
	uint64_t p;

	for (p = 0; p < env->nr_pages; p++) {
		struct mt_page *pg = &m->pages[p];

		if (tier_page_rank(env, m->node_rank, p) != tier ||
		    !!(pg->flags & F_ACTIVE) != active_list)
			continue;
		set_active(m, pg, get_idx(pg->total) >= m->active_thr);
		*env->work_units += 1;
	}
}

static int cmp_seq(const void *a, const void *b, void *ctx)
{
	const struct memtis *m = ctx;
	uint64_t x = m->pages[*(const uint64_t *)a].seq, y = m->pages[*(const uint64_t *)b].seq;

	return (x > y) - (x < y);
}

static void refresh(struct memtis *m)
{
	const struct tier_env *env = m->env;
	uint64_t p;

	memset(m->used, 0, sizeof(m->used));
	memset(m->nr_active, 0, sizeof(m->nr_active));
	for (p = 0; p < env->nr_pages; p++) {
		int r = tier_page_rank(env, m->node_rank, p);

		if (r < 0 || (size_t)r >= m->nr_tiers)
			continue;
		if (!(m->pages[p].flags & F_SEEN))
			init_page(m, &m->pages[p]);	/* first touched since */
		m->used[r]++;
		if (m->pages[p].flags & F_ACTIVE)
			m->nr_active[r]++;
	}
	tier_node_free_pages(env, m->node_free);
}

static int room_node(const struct memtis *m, int rank)
{
	const struct tier_tier *t = &m->env->topo->tiers[rank];
	int best = -1;
	size_t i;

	for (i = 0; i < t->nr_nodes; i++) {
		int n = t->nodes[i];

		if (n < 0 || n >= TIER_MAX_NODES || m->node_free[n] <= 0)
			continue;
		if (best < 0 || m->node_free[n] > m->node_free[best])
			best = n;
	}
	return best;
}

static uint64_t flush_moves(struct memtis *m, size_t n, int from, int to)
{
	long ret;
	uint64_t moved = 0;
	size_t i;

	ret = m->env->migrator->move(m->env->migrator_priv, m->mv_pages, m->mv_nodes,
				     m->mv_status, n);
	if (ret < 0) {
		if (ret != -EBUSY)
			m->move_err = (int)ret;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (m->mv_status[i] != m->mv_nodes[i]) {
			if (m->mv_status[i] == -ENOMEM)
				m->node_free[m->mv_nodes[i]] = 0;
			continue;
		}
		/* Migrated pages go to the head of the target's list. */
		m->pages[m->mv_pages[i]].seq = ++m->seq;
		m->used[from]--;
		m->used[to]++;
		if (m->pages[m->mv_pages[i]].flags & F_ACTIVE) {
			m->nr_active[from]--;
			m->nr_active[to]++;
		}
		moved++;
	}
	*m->env->work_units += n;
	return moved;
}

/* migrate_page_list(): moves cand[0..nr) from tier `from` to tier `to`,
 * up to `limit` pages. Returns pages moved. */
static uint64_t migrate_list(struct memtis *m, size_t nr, uint64_t limit, int from, int to)
{
	uint64_t moved = 0;
	size_t i, n = 0;

	for (i = 0; i < nr && moved + n < limit; i++) {
		int node = room_node(m, to);

		if (node < 0)
			break;	/* __GFP_THISNODE allocation fails */
		m->node_free[node]--;
		m->mv_pages[n] = m->cand[i];
		m->mv_nodes[n] = node;
		if (++n == m->batch) {
			moved += flush_moves(m, n, from, to);
			n = 0;
		}
	}
	if (n)
		moved += flush_moves(m, n, from, to);
	return moved;
}

/* need_toptier_demotion() + demote_node() for the top tier. */
static void demotion(struct memtis *m)
{
	const struct tier_env *env = m->env;
	uint64_t max = m->max_nr_dram, lru = m->used[0];
	uint64_t max_wm = max * PROMOTION_WMARK_PCT / 100, min_wm = max * DEMOTION_WMARK_PCT / 100;
	uint64_t need_promoted = m->nr_tiers > 1 ? m->nr_active[1] : 0;
	uint64_t nr_exceeded, reclaimed, lower_active;
	size_t nr = 0;
	uint64_t p;

	if (m->nr_tiers < 2)
		return;
	if (need_promoted) {
		if (lru + need_promoted + max_wm <= max)
			return;
	} else if (lru + min_wm <= max) {
		return;
	}
	nr_exceeded = lru + need_promoted + max_wm - max;
	/* Inactive pages below the warm threshold, oldest first. */
	for (p = 0; p < env->nr_pages; p++) {
		const struct mt_page *pg = &m->pages[p];

		if (tier_page_rank(env, m->node_rank, p) != 0 || (pg->flags & F_ACTIVE))
			continue;
		if (get_idx(pg->total) >= m->warm_thr)
			continue;	/* warm pages are not demoted */
		m->cand[nr++] = p;
	}
	*env->work_units += nr;
	qsort_r(m->cand, nr, sizeof(*m->cand), cmp_seq, m);
	reclaimed = migrate_list(m, nr, nr_exceeded, 0, 1);
	/* Could not make room for the slow tier's active pages: drop the
	 * warm band. */
	lower_active = need_promoted < nr_exceeded ? need_promoted : nr_exceeded;
	if (lower_active && reclaimed < lower_active)
		m->warm_thr = m->active_thr;
}

/* promotion_available() + promote_node() for tier `t` > 0. */
static void promotion(struct memtis *m, int t)
{
	const struct tier_env *env = m->env;
	uint64_t nr_to_promote, p;
	size_t nr = 0;

	if (!m->nr_active[t])
		return;
	if (t - 1 == 0) {
		uint64_t max = m->max_nr_dram, wm = max * PROMOTION_WMARK_PCT / 100;

		if (m->used[0] + wm >= max)
			return;
		nr_to_promote = max - wm - m->used[0];
	} else {
		/* No memcg limit on a lower tier: its free pages. */
		const struct tier_tier *tt = &env->topo->tiers[t - 1];
		size_t i;

		nr_to_promote = 0;
		for (i = 0; i < tt->nr_nodes; i++)
			if (tt->nodes[i] >= 0 && tt->nodes[i] < TIER_MAX_NODES && m->node_free[tt->nodes[i]] > 0)
				nr_to_promote += (uint64_t)m->node_free[tt->nodes[i]];
	}
	if (nr_to_promote > m->nr_active[t])
		nr_to_promote = m->nr_active[t];
	for (p = 0; p < env->nr_pages; p++)
		if (tier_page_rank(env, m->node_rank, p) == t && (m->pages[p].flags & F_ACTIVE))
			m->cand[nr++] = p;
	*env->work_units += nr;
	qsort_r(m->cand, nr, sizeof(*m->cand), cmp_seq, m);
	migrate_list(m, nr, nr_to_promote, t, t - 1);
}

static int memtis_tick(void *priv, uint64_t now_us)
{
	struct memtis *m = priv;
	size_t t;

	(void)now_us;
	m->move_err = 0;
	refresh(m);
	/* One kmigraterd per node: the top tier demotes, the others promote. */
	for (t = 0; t < m->nr_tiers; t++) {
		if (m->need_cooling[t]) {
			cooling_walk(m, (int)t);
			m->need_cooling[t] = false;
		} else if (m->need_adjusting[t]) {
			adjusting_walk(m, (int)t, true);
			m->need_adjusting[t] = false;
			if (m->need_adjusting_all[t]) {
				adjusting_walk(m, (int)t, false);
				m->need_adjusting_all[t] = false;
			}
		}
		refresh(m);
		if (t == 0)
			demotion(m);
		else
			promotion(m, (int)t);
	}
	return m->move_err;
}

static void memtis_destroy(void *priv)
{
	struct memtis *m = priv;

	if (!m)
		return;
	free(m->pages);
	free(m->cand);
	free(m->mv_pages);
	free(m->mv_nodes);
	free(m->mv_status);
	free(m);
}

static int memtis_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	struct memtis *m = calloc(1, sizeof(*m));
	uint64_t total0, free0, p;

	if (!m)
		return tier_err_set(err, -ENOMEM, "out of memory");
	m->env = env;
	m->nr_tiers = env->topo->nr_tiers < MAX_TIERS ? env->topo->nr_tiers : MAX_TIERS;
	if (!m->nr_tiers) {
		free(m);
		return tier_err_set(err, -EINVAL, "memtis: no memory tiers");
	}
	tier_node_rank_map(env->topo, m->node_rank);
	m->batch = env->max_batch ? env->max_batch : 1024;
	m->pages = calloc(env->nr_pages ? env->nr_pages : 1, sizeof(*m->pages));
	m->cand = calloc(env->nr_pages ? env->nr_pages : 1, sizeof(*m->cand));
	m->mv_pages = calloc(m->batch, sizeof(*m->mv_pages));
	m->mv_nodes = calloc(m->batch, sizeof(*m->mv_nodes));
	m->mv_status = calloc(m->batch, sizeof(*m->mv_status));
	if (!m->pages || !m->cand || !m->mv_pages || !m->mv_nodes || !m->mv_status) {
		memtis_destroy(m);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	/* memcontrol.c mem_cgroup_alloc(): thresholds start at htmm_thres_hot. */
	m->active_thr = m->warm_thr = HTMM_THRES_HOT;
	/* The fast tier's size is the memcg's DRAM limit (max_at_node). */
	if (tier_tier_pages(env, 0, &total0, &free0)) {
		memtis_destroy(m);
		return tier_err_set(err, -EIO, "memtis: cannot read the fast tier's size");
	}
	m->max_nr_dram = total0;
	for (p = 0; p < env->nr_pages; p++)
		if (env->page_node[p] != TIER_NODE_NONE)
			init_page(m, &m->pages[p]);
	*priv = m;
	return 0;
}

static size_t memtis_metadata_bytes(void *priv)
{
	const struct memtis *m = priv;

	return sizeof(*m) + m->env->nr_pages * (sizeof(*m->pages) + sizeof(*m->cand));
}

/* --- test hooks (peers.h) -------------------------------------------------- */

unsigned tier__memtis_hot_threshold(const void *priv)
{
	return ((const struct memtis *)priv)->active_thr;
}

unsigned tier__memtis_warm_threshold(const void *priv)
{
	return ((const struct memtis *)priv)->warm_thr;
}

uint32_t tier__memtis_accesses(const void *priv, uint64_t page)
{
	const struct memtis *m = priv;

	return page < m->env->nr_pages ? m->pages[page].total : 0;
}

unsigned tier__memtis_cooling_clock(const void *priv)
{
	return ((const struct memtis *)priv)->cooling_clock;
}

uint64_t tier__memtis_histogram(const void *priv, unsigned bin)
{
	return bin < NR_BINS ? ((const struct memtis *)priv)->hg[bin] : 0;
}

const struct tier_policy_ops tier_policy_memtis = {
	.name = "memtis",
	.description = "MEMTIS (SOSP'23): log2 access histogram, capacity-fitted hot threshold, periodic cooling, warm band",
	.obs_kinds = TIER_OBS_SAMPLE,
	.default_tracker = "samples",
	.interval_us = KMIGRATED_PERIOD_US,
	.sample_period_lines = HTMM_SAMPLE_PERIOD,
	.create = memtis_create,
	.destroy = memtis_destroy,
	.observe = memtis_observe,
	.tick = memtis_tick,
	.metadata_bytes = memtis_metadata_bytes,
};
