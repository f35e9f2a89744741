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
 * Published defaults (the htmm sysfs knobs in mm/mempolicy.c:3031-3048):
 * htmm_sample_period 199 (the policy asks the sampling tracker for one
 * sample per 199 misses), htmm_adaptation_period 100000 and
 * htmm_cooling_period 2000000 samples, htmm_thres_hot 1, htmm_nowarm 0
 * (warm band on), 500 ms kmigraterd periods. The watermarks keep their
 * percentages (3% promotion, 2% demotion) but not their absolute clamps
 * (50 MB .. 1.5 GB), which exceed a simulated fast tier.
 *
 * Huge pages (env->page_huge, tiersim --thp), as MEMTIS tracks and splits
 * them (upstream 92487b9: htmm_core.c, htmm_migrater.c, huge_memory.c):
 *  - A huge page is one LRU entry with a meta count (the third tail page:
 *    total_accesses, idx, skewness_idx, hot_utils, cooling_clock) and a
 *    count per 4 KiB subpage. A sample adds HPAGE_PMD_NR to the subpage and
 *    1 to the huge page (update_huge_page, htmm_core.c:922-924): the huge
 *    page's hotness is its subpages' mean, on the base pages' scale; it
 *    stands in the histogram as 512 pages at get_idx(meta count) and is hot
 *    at or above the hot threshold like a base page.
 *  - A second histogram (ebp_hotness_hg) counts every base page and every
 *    subpage by its own count; its fitted threshold is bp_active_threshold.
 *    A sample of a page or subpage that was at or above it (may_hot) counts
 *    as a fast-tier hit an ideal base-page placement would have had; a
 *    sample of a fast-tier page is a real one.
 *  - Cooling a huge page (check_transhuge_cooling, htmm_core.c:147-234):
 *    hot_utils = subpages at or above min(hot, bp threshold); skewness =
 *    sum of squared subpage counts (as upstream, each square in 32 bits,
 *    htmm_core.c:185) / 11 / hot_utils^2, 0 for a huge page in bin >= 13,
 *    bucketed by get_skew_idx() into access_map[21]; the hot subpages' mean
 *    count feeds sum_util/num_util.
 *  - Split decision at a cooling (update_pginfo, htmm_core.c:1380-1427):
 *    once more samples than max(usage >> htmm_split_period, fast tier)
 *    were taken since the last decision, the next threshold adaptation
 *    sets the pages to split (set_memcg_nr_split, htmm_core.c:1133-1178):
 *    nr_split = (eHR - rHR) * sum_util / nr_records / avg_util *
 *    (270 - 80) / 80 * 512 * gamma (0.4), eHR = 95% of the decayed
 *    may_hot hits, rHR the decayed fast-tier hits; and the skewness bin
 *    from which to split (set_memcg_split_thres, htmm_core.c:1105-1131:
 *    the most skewed bins first, the last bin only in part). If a split
 *    happened and the real hits did not grow by 3% by the next decision,
 *    splitting stops for good (htmm_thres_split = 0).
 *  - Candidates: kmigraterd's cooling and adjusting walks (the huge pages
 *    of each LRU list, oldest first; htmm_migrater.c:698-708, 827-840, as
 *    DEFERRED_SPLIT_ISOLATED is defined in htmm.h:3) queue a huge page whose
 *    skewness bin reaches the threshold, while nr_split lasts; a queued
 *    page leaves the LRU. Each kmigraterd pass first splits up to 50 queued
 *    huge pages of its node (deferred_split_scan_for_htmm, nr_max,
 *    htmm_core.c:394).
 *  - After a split (huge_memory.c:2133-2165, 2830-2845): each subpage keeps
 *    its count and the tail's cooling_clock, which __prep_transhuge_page_
 *    for_htmm sets to 0 and nothing advances (htmm_core.c:48), so the
 *    subpage's next look halves its count once per cooling so far; it goes
 *    to the active list if its bin is >= hot threshold - 1; the huge page
 *    leaves the histogram and its subpages enter it. After a split the
 *    hot threshold may also fall at an adaptation (htmm_core.c:1299).
 *  - A move of a huge page moves all 512 pages; it needs room for them all.
 * htmm_cxl_mode is off, its default (mempolicy.c:3046, and
 * memtis-userspace/scripts/run_bench.sh CONFIG_CXL_MODE=off): the split
 * formula's slow-tier latency is NVM_ACCESS_LATENCY (270 ns, htmm.h:27),
 * not the machine's.
 *
 * Not modelled: the adaptive sample period (ksampled raises it to stay
 * under 3% of a CPU; the period stays 199), allocation-triggered cooling
 * (htmm_thres_cooling_alloc; nothing is allocated after start), direct
 * demotion on allocation failure, store sampling at its own period (a
 * tiersim store also samples its load), a THP move that fails for want of
 * room being split and retried as base pages, the deferred-split shrinker
 * under memory pressure, and a huge page collapsed after it was first seen
 * (its pages stay base pages to the policy).
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

/* Huge-page splitting (upstream 92487b9). */
/* mempolicy.c:3041 htmm_thres_split = 2 (run_bench.sh writes 1; only
 * zero, splitting off, differs). */
#define HTMM_THRES_SPLIT 2
#define HTMM_SPLIT_PERIOD 2		/* mempolicy.c:3036: usage >> 2 (htmm_core.c:1403) */
#define HTMM_GAMMA 4			/* mempolicy.c:3045: 0.4, in tenths (htmm_core.c:1176-1177) */
#define DRAM_ACCESS_LATENCY 80		/* htmm.h:26 */
#define NVM_ACCESS_LATENCY 270		/* htmm.h:27, htmm_cxl_mode off (htmm_core.c:1136) */
#define SPLIT_MAX_PER_PASS 50		/* htmm_core.c:394 nr_max, per node and pass */
#define NR_SKEW_BINS 21			/* memcg->access_map[21] (include/linux/memcontrol.h:384) */
#define SPLIT_THRES_NONE 21		/* memcontrol.c:5252, htmm_core.c:1111: no split */
#define SKEW_VERY_HOT_IDX 13		/* htmm_core.c:212: meta idx >= 13, skewness 0 */
#define SKEW_SCALE 11			/* htmm_core.c:215 */
#define EHR_PCT 95			/* htmm_core.c:1144 */
#define RHR_GAIN_PCT 103		/* htmm_core.c:1411: a split must gain 3% */

enum {
	F_SEEN = 1,		/* initialised as a new page */
	F_ACTIVE = 2,		/* PageActive: on the active LRU list */
	F_MAY_HOT = 4,		/* pginfo->may_hot (huge pages only) */
};

enum {
	H_SEEN = 1,		/* the unit was initialised */
	H_HUGE = 2,		/* one huge page: the meta count decides */
	H_ACTIVE = 4,		/* the huge page is on the active list */
	H_QUEUED = 8,		/* on the deferred split queue, off the LRU */
};

/* A cand[] entry naming a huge page (its unit number) rather than a page. */
#define CAND_UNIT (UINT64_C(1) << 63)

struct mt_page {
	uint64_t seq;		/* when it joined its LRU list */
	uint32_t total;		/* pginfo->total_accesses */
	uint16_t clock;		/* pginfo->cooling_clock */
	uint8_t flags;
};

/* A huge page's meta data (its third tail page). */
struct mt_huge {
	uint64_t seq;		/* when it joined its LRU list */
	uint32_t total;		/* total_accesses: samples of any subpage */
	uint16_t clock;		/* cooling_clock */
	uint16_t hot_utils;	/* subpages at or above the threshold at cooling */
	uint8_t idx;		/* get_idx(total) as last counted */
	uint8_t skew;		/* skewness_idx */
	uint8_t flags;		/* H_* */
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

	/* Huge pages: NULL/false without env->page_huge. */
	bool thp;
	unsigned hshift;
	uint64_t nr_units;
	struct mt_huge *huge;
	uint64_t usage;			/* present pages (the memcg's usage) */
	uint64_t ebp_hg[NR_BINS];	/* memcg->ebp_hotness_hg */
	unsigned bp_thr;		/* memcg->bp_active_threshold */
	uint64_t access_map[NR_SKEW_BINS];
	uint64_t sum_util, num_util;
	unsigned split_threshold;
	int64_t nr_split, nr_split_tail;
	bool split_happen, need_split;
	unsigned thres_split;		/* htmm_thres_split (0: stopped) */
	uint64_t nr_sampled_for_split;
	uint64_t nr_dram_sampled, prev_dram_sampled;
	uint64_t max_dram_sampled, prev_max_dram_sampled;
	uint64_t nr_max_sampled;
	uint64_t *queue;		/* deferred split queue: unit numbers, FIFO */
	size_t nr_queued;
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

/* get_skew_idx() (htmm_core.c:560-582): 0, 1-3, 4-15, ... by bit length
 * up to 1023, then 11 + one bin per 1024 up to 20. */
static unsigned get_skew_idx(uint64_t num)
{
	unsigned cnt = 0;
	uint64_t tmp = num;

	if (tmp >= 1024) {
		while (tmp > 1024 && cnt < 9) {
			tmp -= 1024;
			cnt++;
		}
		cnt += 11;
	} else {
		while (tmp) {
			tmp >>= 1;
			cnt++;
		}
	}
	return cnt;
}

static uint32_t halve(uint32_t v, unsigned times)
{
	return times >= 32 ? 0 : v >> times;
}

static void hg_dec(uint64_t *hg, unsigned idx, uint64_t n)
{
	hg[idx] = hg[idx] >= n ? hg[idx] - n : 0;
}

static void set_active(struct memtis *m, struct mt_page *pg, bool active)
{
	if (!!(pg->flags & F_ACTIVE) == active)
		return;
	pg->flags = (uint8_t)(active ? pg->flags | F_ACTIVE : pg->flags & ~F_ACTIVE);
	pg->seq = ++m->seq;	/* list_move to the head of the other list */
}

static void set_unit_active(struct memtis *m, struct mt_huge *h, bool active)
{
	if (!!(h->flags & H_ACTIVE) == active)
		return;
	h->flags = (uint8_t)(active ? h->flags | H_ACTIVE : h->flags & ~H_ACTIVE);
	h->seq = ++m->seq;
}

/* Whether page is a subpage of a huge page the policy tracks as one. */
static inline bool in_huge(const struct memtis *m, uint64_t p)
{
	return m->thp && (m->huge[p >> m->hshift].flags & H_HUGE);
}

static uint64_t unit_first(const struct memtis *m, uint64_t u)
{
	return u << m->hshift;
}

static uint64_t unit_end(const struct memtis *m, uint64_t u)
{
	uint64_t end = (u + 1) << m->hshift;

	return end < m->env->nr_pages ? end : m->env->nr_pages;
}

/* The tier of a huge page: of its first present page (its pages move
 * together). -1 when none is present. */
static int unit_rank(const struct memtis *m, uint64_t u)
{
	uint64_t p;

	for (p = unit_first(m, u); p < unit_end(m, u); p++)
		if (m->env->page_node[p] != TIER_NODE_NONE)
			return tier_page_rank(m->env, m->node_rank, p);
	return -1;
}

static bool page_active(const struct memtis *m, uint64_t p)
{
	if (in_huge(m, p))
		return m->huge[p >> m->hshift].flags & H_ACTIVE;
	return m->pages[p].flags & F_ACTIVE;
}

/* set_page_coolstatus() for a page that appears. */
static void init_page(struct memtis *m, struct mt_page *pg)
{
	pg->total = m->active_thr + 1 >= 32 ? UINT32_MAX : UINT32_C(1) << (m->active_thr + 1);
	pg->clock = (uint16_t)(m->cooling_clock + 1);	/* htmm_skip_cooling */
	pg->flags = F_SEEN;
	pg->seq = ++m->seq;
}

/* A unit's pages appear. A huge one: __prep_transhuge_page_for_htmm()
 * (htmm_core.c:44-79): meta and subpage counts at 2^(hot threshold + 1),
 * meta idx 0, the meta page skipping the next cooling, the subpages'
 * cooling_clock 0 (the pginfo initialiser, htmm_core.c:48), inactive. */
static void init_unit(struct memtis *m, uint64_t u)
{
	struct mt_huge *h = &m->huge[u];
	uint32_t factor = m->active_thr + 1 >= 32 ? UINT32_MAX : UINT32_C(1) << (m->active_thr + 1);
	uint64_t p;

	h->flags = H_SEEN;
	if (!m->env->page_huge[u])
		return;	/* base pages: each initialised when it appears */
	h->flags |= H_HUGE;
	h->total = factor;
	h->clock = (uint16_t)(m->cooling_clock + 1);
	h->idx = 0;
	h->skew = 0;
	h->hot_utils = 0;
	h->seq = ++m->seq;
	for (p = unit_first(m, u); p < unit_end(m, u); p++) {
		m->pages[p].total = factor;
		m->pages[p].clock = 0;
		m->pages[p].flags = F_SEEN;
		m->pages[p].seq = 0;
	}
}

/* check_base_cooling() */
static void base_cooling(struct memtis *m, struct mt_page *pg)
{
	if ((int16_t)(m->cooling_clock - pg->clock) > 0) {
		if (m->thp) {
			/* may_hot from the count before the halving */
			if (get_idx(pg->total) >= m->bp_thr)
				pg->flags |= F_MAY_HOT;
			else
				pg->flags &= (uint8_t)~F_MAY_HOT;
		}
		pg->total = halve(pg->total, (uint16_t)(m->cooling_clock - pg->clock));
		m->hg[get_idx(pg->total)]++;
		if (m->thp)
			m->ebp_hg[get_idx(pg->total)]++;
	}
	pg->clock = m->cooling_clock;
}

/* check_transhuge_cooling() (htmm_core.c:147-234): halves the huge page's
 * and its subpages' counts once per cooling missed, and computes the
 * huge page's hot_utils and skewness. */
static void huge_cooling(struct memtis *m, uint64_t u)
{
	struct mt_huge *h = &m->huge[u];
	unsigned diff, bp_hot = m->active_thr < m->bp_thr ? m->active_thr : m->bp_thr;
	uint64_t skew = 0, p;
	uint32_t refs = 0;

	if ((int16_t)(m->cooling_clock - h->clock) <= 0) {
		h->clock = m->cooling_clock;
		return;
	}
	diff = (uint16_t)(m->cooling_clock - h->clock);
	h->hot_utils = 0;
	for (p = unit_first(m, u); p < unit_end(m, u); p++) {
		struct mt_page *sp = &m->pages[p];
		unsigned prev_idx = get_idx(sp->total);

		if (prev_idx >= bp_hot) {
			h->hot_utils++;
			refs += sp->total;
		}
		/* The square of a 32-bit count, in 32 bits (htmm_core.c:185). */
		skew += (uint32_t)(sp->total * sp->total);
		if (prev_idx >= m->bp_thr)
			sp->flags |= F_MAY_HOT;
		else
			sp->flags &= (uint8_t)~F_MAY_HOT;
		sp->total = halve(sp->total, diff);
		m->ebp_hg[get_idx(sp->total)]++;
	}
	*m->env->work_units += unit_end(m, u) - unit_first(m, u);
	h->total = halve(h->total, diff);
	h->idx = (uint8_t)get_idx(h->total);
	m->hg[h->idx] += HPAGE_PMD_NR;
	if (h->hot_utils == 0 || h->idx >= SKEW_VERY_HOT_IDX) {
		skew = 0;
	} else {
		skew /= SKEW_SCALE;
		skew /= h->hot_utils;
		skew /= h->hot_utils;
		skew = get_skew_idx(skew);
	}
	h->skew = (uint8_t)skew;
	m->access_map[skew]++;
	if (h->hot_utils) {
		refs /= HPAGE_PMD_NR;
		m->sum_util += refs;
		m->num_util++;
	}
	h->clock = m->cooling_clock;
}

/* __cooling(): false when the previous cooling is not done yet. */
static bool cooling(struct memtis *m)
{
	size_t t;

	for (t = 0; t < m->nr_tiers; t++)
		if (m->need_cooling[t]) {
			/* The previous cooling is not done yet. */
			m->cooling_clock++;
			return false;
		}
	/* reset_memcg_stat() */
	memset(m->hg, 0, sizeof(m->hg));
	memset(m->ebp_hg, 0, sizeof(m->ebp_hg));
	memset(m->access_map, 0, sizeof(m->access_map));
	m->sum_util = m->num_util = 0;
	m->cooling_clock++;
	m->bp_thr--;	/* unsigned, as upstream */
	m->cooled = true;
	for (t = 0; t < m->nr_tiers; t++)
		m->need_cooling[t] = true;
	return true;
}

static void set_lru_adjusting(struct memtis *m)
{
	size_t t;

	for (t = 0; t < m->nr_tiers; t++)
		m->need_adjusting[t] = m->need_adjusting_all[t] = true;
}

/* set_memcg_split_thres() (htmm_core.c:1105-1131): the skewness bin from
 * which huge pages are split, taking the most skewed bins first; the last
 * bin only for nr_split_tail pages. */
static void set_split_thres(struct memtis *m)
{
	int64_t nr_split = m->nr_split;
	int i;

	if (m->nr_split == 0) {
		m->split_threshold = SPLIT_THRES_NONE;
		return;
	}
	for (i = NR_SKEW_BINS - 1; i > 0; i--) {
		int64_t nr_pages = (int64_t)m->access_map[i] * HPAGE_PMD_NR;

		if (nr_split < nr_pages) {
			m->nr_split_tail = nr_split;
			m->nr_split -= nr_split;
			break;
		}
		nr_split -= nr_pages;
	}
	if (i != NR_SKEW_BINS - 1)
		m->split_threshold = (unsigned)i + 1;
}

/* set_memcg_nr_split() (htmm_core.c:1133-1178): how many pages to split,
 * from the hits an ideal base-page placement would have had over the real
 * ones, the huge pages' mean count and the latency gap. */
static void set_nr_split(struct memtis *m)
{
	uint64_t ehr, rhr, nr_records, avg, n, shift;

	m->nr_split = 0;
	m->nr_split_tail = 0;
	ehr = m->prev_max_dram_sampled * EHR_PCT / 100;
	rhr = m->prev_dram_sampled;
	if (ehr <= rhr || m->num_util == 0)
		return;
	avg = (uint32_t)(m->sum_util / m->num_util);	/* unsigned int */
	if (avg == 0)
		return;
	/* Samples a count holds after clock coolings; a shift of 32 or more
	 * (past 33 coolings) is taken as 0. */
	shift = (uint16_t)(m->cooling_clock - 1);
	nr_records = ((uint64_t)COOLING_SAMPLES << 1) -
		     (shift >= 32 ? 0 : (uint64_t)COOLING_SAMPLES >> shift);
	n = (ehr - rhr) * m->sum_util / nr_records;
	n /= avg;
	n *= NVM_ACCESS_LATENCY - DRAM_ACCESS_LATENCY;
	n /= DRAM_ACCESS_LATENCY;
	n *= HPAGE_PMD_NR;
	n *= HTMM_GAMMA;
	n /= 10;
	m->nr_split = (int64_t)n;
}

/* __adjust_active_threshold() */
static void adjust_threshold(struct memtis *m)
{
	uint64_t max = m->max_nr_dram - m->max_nr_dram * PROMOTION_WMARK_PCT / 100;
	uint64_t nr_active = 0;
	bool need_warm;
	int idx_hot, idx_bp;

	for (idx_hot = NR_BINS - 1; idx_hot >= 0; idx_hot--) {
		if (nr_active + m->hg[idx_hot] > max)
			break;
		nr_active += m->hg[idx_hot];
	}
	if (idx_hot != NR_BINS - 1)
		idx_hot++;
	need_warm = nr_active < max * WARM_FILL_PCT / 100;
	/* The estimated base-page histogram. */
	nr_active = 0;
	for (idx_bp = NR_BINS - 1; idx_bp >= 0; idx_bp--) {
		if (nr_active + m->ebp_hg[idx_bp] > max)
			break;
		nr_active += m->ebp_hg[idx_bp];
	}
	if (idx_bp != NR_BINS - 1)
		idx_bp++;
	if (idx_hot < HTMM_THRES_HOT)
		idx_hot = HTMM_THRES_HOT;
	if (idx_bp < HTMM_THRES_HOT)
		idx_bp = HTMM_THRES_HOT;
	if (m->cooled) {
		/* After a cooling the threshold drops by at most one. */
		if ((unsigned)idx_hot < m->active_thr && m->active_thr > 1)
			m->active_thr--;
		if ((unsigned)idx_bp < m->bp_thr)
			m->bp_thr = (unsigned)idx_bp;
		m->cooled = false;
		set_lru_adjusting(m);
		if (m->need_split) {
			set_nr_split(m);
			set_split_thres(m);
			m->nr_sampled_for_split = 0;
			m->need_split = false;
		}
	} else {
		if ((unsigned)idx_hot > m->active_thr) {
			m->active_thr = (unsigned)idx_hot;
			set_lru_adjusting(m);
		} else if (m->split_happen && m->thres_split &&
			   (unsigned)idx_hot < m->active_thr) {
			/* Splits change the histogram: the threshold may fall. */
			m->active_thr = (unsigned)idx_hot;
			set_lru_adjusting(m);
		}
		m->bp_thr = (unsigned)idx_bp;
	}
	m->warm_thr = need_warm ? m->active_thr - 1 : m->active_thr;
}

/* The split decision after a cooling (update_pginfo, htmm_core.c:1384-1425). */
static void split_decision(struct memtis *m)
{
	uint64_t temp_rhr = m->prev_dram_sampled, usage;

	m->prev_dram_sampled = (m->prev_dram_sampled >> 1) + m->nr_dram_sampled;
	m->nr_dram_sampled = 0;
	m->prev_max_dram_sampled = (m->prev_max_dram_sampled >> 1) + m->max_dram_sampled;
	m->max_dram_sampled = 0;
	if (!m->need_split && m->thres_split) {
		usage = m->usage >> HTMM_SPLIT_PERIOD;
		if (usage < m->max_nr_dram)
			usage = m->max_nr_dram;
		if (m->nr_sampled_for_split > usage) {
			/* Splits that did not raise the real hits by 3%
			 * stop splitting for good. */
			if (m->split_happen &&
			    m->prev_dram_sampled < temp_rhr * RHR_GAIN_PCT / 100) {
				m->thres_split = 0;
				return;
			}
			m->split_happen = false;
			m->need_split = true;
		} else {
			/* Re-computes the threshold after the cooling. */
			m->nr_split += m->nr_split_tail;
			m->nr_split_tail = 0;
			set_split_thres(m);
		}
	}
	m->nr_max_sampled >>= 1;
}

/* check_split_huge_page() (htmm_core.c:708-755) + queueing
 * (deferred_split_huge_page_for_htmm): whether huge page u goes to the
 * split queue, taking its pages from nr_split. */
static bool check_split(struct memtis *m, uint64_t u)
{
	struct mt_huge *h = &m->huge[u];
	unsigned tail_thr = m->split_threshold - 1;
	bool tail;

	if (!m->thres_split || m->split_threshold == 0 || (h->flags & H_QUEUED))
		return false;
	if (h->skew < tail_thr)
		return false;
	tail = h->skew == tail_thr || m->nr_split == 0;
	if (tail && m->nr_split_tail == 0)
		return false;
	if (tail)
		m->nr_split_tail = m->nr_split_tail >= HPAGE_PMD_NR ? m->nr_split_tail - HPAGE_PMD_NR : 0;
	else
		m->nr_split = m->nr_split >= HPAGE_PMD_NR ? m->nr_split - HPAGE_PMD_NR : 0;
	if (m->access_map[h->skew])
		m->access_map[h->skew]--;
	h->flags |= H_QUEUED;
	m->queue[m->nr_queued++] = u;
	return true;
}

/* Huge page u is base pages from now on: split by the policy, or by
 * someone else. Its subpages keep their counts and the tail's cooling
 * clock; each goes to the active list if its bin is at least the hot
 * threshold - 1 (__split_huge_pmd_locked, huge_memory.c:2133-2165); the
 * huge page leaves the histogram (split_huge_page_to_list,
 * huge_memory.c:2830-2845). */
static void unit_to_base(struct memtis *m, uint64_t u)
{
	struct mt_huge *h = &m->huge[u];
	uint64_t p;

	hg_dec(m->hg, h->idx, HPAGE_PMD_NR);
	for (p = unit_first(m, u); p < unit_end(m, u); p++) {
		struct mt_page *sp = &m->pages[p];
		unsigned idx = get_idx(sp->total);

		sp->flags = (uint8_t)((sp->flags & (F_SEEN | F_MAY_HOT)) |
				      (idx + 1 >= m->active_thr ? F_ACTIVE : 0));
		sp->seq = ++m->seq;	/* putback_split_pages(): list heads */
		m->hg[idx]++;
	}
	h->flags &= (uint8_t)~(H_HUGE | H_ACTIVE | H_QUEUED);
}

/* update_huge_page() (htmm_core.c:904-979), without the split check that
 * DEFERRED_SPLIT_ISOLATED compiles out. */
static void sample_huge(struct memtis *m, uint64_t u, uint64_t page)
{
	struct mt_huge *h = &m->huge[u];
	struct mt_page *sp = &m->pages[page];
	unsigned prev_idx, cur_idx;

	huge_cooling(m, u);
	prev_idx = get_idx(sp->total);
	sp->total = sp->total > UINT32_MAX - HPAGE_PMD_NR ? UINT32_MAX : sp->total + HPAGE_PMD_NR;
	if (h->total < UINT32_MAX)
		h->total++;
	cur_idx = get_idx(sp->total);
	if (prev_idx != cur_idx) {
		hg_dec(m->ebp_hg, prev_idx, 1);
		m->ebp_hg[cur_idx]++;
	}
	if (sp->flags & F_MAY_HOT)
		m->max_dram_sampled++;
	if (cur_idx >= m->bp_thr)
		sp->flags |= F_MAY_HOT;
	else
		sp->flags &= (uint8_t)~F_MAY_HOT;
	prev_idx = h->idx;
	cur_idx = get_idx(h->total);
	if (prev_idx != cur_idx) {
		hg_dec(m->hg, prev_idx, HPAGE_PMD_NR);
		m->hg[cur_idx] += HPAGE_PMD_NR;
	}
	h->idx = (uint8_t)cur_idx;
	/* A queued page is off the LRU: the list moves fail. */
	if (!(h->flags & H_QUEUED))
		set_unit_active(m, h, cur_idx >= m->active_thr);
}

/* update_base_page() and the sample accounting of update_pginfo(). */
static void sample(struct memtis *m, uint64_t page)
{
	struct mt_page *pg = &m->pages[page];
	unsigned prev_idx, cur_idx;

	if (m->thp) {
		uint64_t u = page >> m->hshift;

		if (!(m->huge[u].flags & H_SEEN))
			init_unit(m, u);
		m->nr_sampled_for_split++;
		m->nr_max_sampled++;
		if (tier_page_rank(m->env, m->node_rank, page) == 0)
			m->nr_dram_sampled++;
		if (m->huge[u].flags & H_HUGE) {
			sample_huge(m, u, page);
			goto count;
		}
	}
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
		if (m->thp) {
			hg_dec(m->ebp_hg, prev_idx, 1);
			m->ebp_hg[cur_idx]++;
		}
	}
	if (m->thp) {
		if (pg->flags & F_MAY_HOT)
			m->max_dram_sampled++;
		if (cur_idx >= m->bp_thr)
			pg->flags |= F_MAY_HOT;
		else
			pg->flags &= (uint8_t)~F_MAY_HOT;
	}
	set_active(m, pg, cur_idx >= m->active_thr);

count:
	m->nr_sampled++;
	if (m->nr_sampled % COOLING_SAMPLES == 0) {
		if (cooling(m) && m->thp)
			split_decision(m);
	} else if (m->nr_sampled % ADAPTATION_SAMPLES == 0) {
		adjust_threshold(m);
	}
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

static int cmp_seq(const void *a, const void *b, void *ctx)
{
	const struct memtis *m = ctx;
	uint64_t ca = *(const uint64_t *)a, cb = *(const uint64_t *)b;
	uint64_t x = ca & CAND_UNIT ? m->huge[ca & ~CAND_UNIT].seq : m->pages[ca].seq;
	uint64_t y = cb & CAND_UNIT ? m->huge[cb & ~CAND_UNIT].seq : m->pages[cb].seq;

	return (x > y) - (x < y);
}

/* The huge pages of tier `tier` on one LRU list, oldest first, into
 * cand[]; returns how many. */
static size_t huge_list(struct memtis *m, int tier, bool active_list)
{
	size_t nr = 0;
	uint64_t u;

	for (u = 0; u < m->nr_units; u++) {
		const struct mt_huge *h = &m->huge[u];

		if (!(h->flags & H_HUGE) || (h->flags & H_QUEUED) ||
		    !!(h->flags & H_ACTIVE) != active_list || unit_rank(m, u) != tier)
			continue;
		m->cand[nr++] = u | CAND_UNIT;
	}
	qsort_r(m->cand, nr, sizeof(*m->cand), cmp_seq, m);
	*m->env->work_units += m->nr_units;
	return nr;
}

/* cooling_active_list() on the huge pages of one list: a split candidate
 * is queued (and cooled); the others are cooled and stay active while
 * their bin is at least the hot threshold (htmm_migrater.c:692-715). */
static void cooling_huge(struct memtis *m, int tier, bool active_list)
{
	size_t i, nr = huge_list(m, tier, active_list);

	for (i = 0; i < nr; i++) {
		uint64_t u = m->cand[i] & ~CAND_UNIT;

		if (check_split(m, u)) {
			huge_cooling(m, u);
			continue;
		}
		huge_cooling(m, u);
		set_unit_active(m, &m->huge[u], m->huge[u].idx >= m->active_thr);
	}
}

/* cooling_node(): cooling_page() on every page of the tier. */
static void cooling_walk(struct memtis *m, int tier)
{
	const struct tier_env *env = m->env;
	uint64_t p;

	for (p = 0; p < env->nr_pages; p++) {
		struct mt_page *pg = &m->pages[p];
		unsigned idx;

		if (tier_page_rank(env, m->node_rank, p) != tier || in_huge(m, p))
			continue;
		*env->work_units += 1;
		if ((int16_t)(m->cooling_clock - pg->clock) <= 0)
			continue;	/* already cooled: stays where it is */
		if (m->thp) {
			if (get_idx(pg->total) >= m->bp_thr)
				pg->flags |= F_MAY_HOT;
			else
				pg->flags &= (uint8_t)~F_MAY_HOT;
		}
		pg->total = halve(pg->total, (uint16_t)(m->cooling_clock - pg->clock));
		pg->clock = m->cooling_clock;
		idx = get_idx(pg->total);
		m->hg[idx]++;
		if (m->thp)
			m->ebp_hg[idx]++;
		/* The threshold will drop by one after this cooling. */
		set_active(m, pg, idx + 1 >= m->active_thr);
	}
	if (m->thp) {
		/* The active list, then the inactive one (which now holds
		 * the pages the first walk deactivated). */
		cooling_huge(m, tier, true);
		cooling_huge(m, tier, false);
	}
}

/* adjusting_node(): page_check_hotness() on one list of the tier; a huge
 * page that is a split candidate is queued instead
 * (adjusting_lru_list(), htmm_migrater.c:827-849). */
static void adjusting_walk(struct memtis *m, int tier, bool active_list)
{
	const struct tier_env *env = m->env;
	uint64_t p;

	for (p = 0; p < env->nr_pages; p++) {
		struct mt_page *pg = &m->pages[p];

		if (tier_page_rank(env, m->node_rank, p) != tier ||
		    !!(pg->flags & F_ACTIVE) != active_list || in_huge(m, p))
			continue;
		set_active(m, pg, get_idx(pg->total) >= m->active_thr);
		*env->work_units += 1;
	}
	if (m->thp) {
		size_t i, nr = huge_list(m, tier, active_list);

		for (i = 0; i < nr; i++) {
			uint64_t u = m->cand[i] & ~CAND_UNIT;

			if (!check_split(m, u))
				set_unit_active(m, &m->huge[u], m->huge[u].idx >= m->active_thr);
		}
	}
}

/* deferred_split_scan_for_htmm() for the nodes of tier `tier`: splits up
 * to SPLIT_MAX_PER_PASS queued huge pages per node, oldest first; the
 * others stay queued. A failed split puts the page back on its list. */
static void split_scan(struct memtis *m, int tier)
{
	const struct tier_env *env = m->env;
	unsigned done[TIER_MAX_NODES] = { 0 };
	size_t i, kept = 0;
	bool split = false;

	for (i = 0; i < m->nr_queued; i++) {
		uint64_t u = m->queue[i], first = unit_first(m, u), p;
		struct mt_huge *h = &m->huge[u];
		int node = -1;

		for (p = first; p < unit_end(m, u) && node < 0; p++)
			if (env->page_node[p] != TIER_NODE_NONE)
				node = env->page_node[p];
		if (node < 0 || node >= TIER_MAX_NODES) {
			h->flags &= (uint8_t)~H_QUEUED;	/* gone */
			continue;
		}
		if (m->node_rank[node] != tier || done[node] >= SPLIT_MAX_PER_PASS) {
			m->queue[kept++] = u;
			continue;
		}
		*env->work_units += 1;
		if (!env->page_huge[u] ||
		    (env->migrator->split && env->migrator->split(env->migrator_priv, first) == 0)) {
			unit_to_base(m, u);
			done[node]++;
			split = true;
		} else {
			/* check_failed_list(): back in the histogram and on
			 * its list. */
			m->hg[h->idx] += HPAGE_PMD_NR;
			h->flags &= (uint8_t)~H_QUEUED;
		}
	}
	m->nr_queued = kept;
	if (split)
		m->split_happen = true;
}

static void refresh(struct memtis *m)
{
	const struct tier_env *env = m->env;
	uint64_t p;

	memset(m->used, 0, sizeof(m->used));
	memset(m->nr_active, 0, sizeof(m->nr_active));
	m->usage = 0;
	for (p = 0; p < env->nr_pages; p++) {
		int r = tier_page_rank(env, m->node_rank, p);

		if (r < 0 || (size_t)r >= m->nr_tiers)
			continue;
		m->usage++;
		if (m->thp) {
			uint64_t u = p >> m->hshift;
			struct mt_huge *h = &m->huge[u];

			if (!(h->flags & H_SEEN))
				init_unit(m, u);	/* first touched since */
			else if ((h->flags & H_HUGE) && !env->page_huge[u])
				unit_to_base(m, u);	/* split by someone else */
			if (h->flags & H_HUGE) {
				if (h->flags & H_QUEUED)
					continue;	/* off the LRU */
				m->used[r]++;
				if (h->flags & H_ACTIVE)
					m->nr_active[r]++;
				continue;
			}
		}
		if (!(m->pages[p].flags & F_SEEN))
			init_page(m, &m->pages[p]);	/* first touched since */
		m->used[r]++;
		if (m->pages[p].flags & F_ACTIVE)
			m->nr_active[r]++;
	}
	tier_node_free_pages(env, m->node_free);
}

/* The node of tier `rank` with the most free pages, at least `need`;
 * -1 if none. */
static int room_node(const struct memtis *m, int rank, uint64_t need)
{
	const struct tier_tier *t = &m->env->topo->tiers[rank];
	int best = -1;
	size_t i;

	for (i = 0; i < t->nr_nodes; i++) {
		int n = t->nodes[i];

		if (n < 0 || n >= TIER_MAX_NODES || m->node_free[n] <= 0 ||
		    (uint64_t)m->node_free[n] < need)
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
		uint64_t p = m->mv_pages[i];

		if (m->mv_status[i] != m->mv_nodes[i]) {
			if (m->mv_status[i] == -ENOMEM)
				m->node_free[m->mv_nodes[i]] = 0;
			continue;
		}
		/* Migrated pages go to the head of the target's list. */
		if (in_huge(m, p))
			m->huge[p >> m->hshift].seq = ++m->seq;
		else
			m->pages[p].seq = ++m->seq;
		m->used[from]--;
		m->used[to]++;
		if (page_active(m, p)) {
			m->nr_active[from]--;
			m->nr_active[to]++;
		}
		moved++;
	}
	*m->env->work_units += n;
	return moved;
}

/* migrate_page_list(): moves cand[0..nr) (pages, or huge pages: all their
 * present pages) from tier `from` to tier `to`, taking entries while fewer
 * than `limit` pages are moved or pending. Returns pages moved. */
static uint64_t migrate_list(struct memtis *m, size_t nr, uint64_t limit, int from, int to)
{
	uint64_t moved = 0;
	size_t i, n = 0;

	for (i = 0; i < nr && moved + n < limit; i++) {
		uint64_t c = m->cand[i], p, first = c, end = c + 1, need = 1;
		int node;

		if (c & CAND_UNIT) {
			first = unit_first(m, c & ~CAND_UNIT);
			end = unit_end(m, c & ~CAND_UNIT);
			need = 0;
			for (p = first; p < end; p++)
				need += m->env->page_node[p] != TIER_NODE_NONE;
		}
		node = room_node(m, to, need);
		if (node < 0)
			break;	/* __GFP_THISNODE allocation fails */
		m->node_free[node] -= (int64_t)need;
		for (p = first; p < end; p++) {
			if (m->env->page_node[p] == TIER_NODE_NONE)
				continue;
			m->mv_pages[n] = p;
			m->mv_nodes[n] = node;
			if (++n == m->batch) {
				moved += flush_moves(m, n, from, to);
				n = 0;
			}
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
	uint64_t p, u;

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

		if (tier_page_rank(env, m->node_rank, p) != 0 || (pg->flags & F_ACTIVE) ||
		    in_huge(m, p))
			continue;
		if (get_idx(pg->total) >= m->warm_thr)
			continue;	/* warm pages are not demoted */
		m->cand[nr++] = p;
	}
	/* Huge pages by their meta bin (shrink_page_list()). */
	for (u = 0; m->thp && u < m->nr_units; u++) {
		const struct mt_huge *h = &m->huge[u];

		if ((h->flags & (H_HUGE | H_ACTIVE | H_QUEUED)) != H_HUGE ||
		    h->idx >= m->warm_thr || unit_rank(m, u) != 0)
			continue;
		m->cand[nr++] = u | CAND_UNIT;
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
	uint64_t nr_to_promote, p, u;
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
		if (tier_page_rank(env, m->node_rank, p) == t && (m->pages[p].flags & F_ACTIVE) &&
		    !in_huge(m, p))
			m->cand[nr++] = p;
	for (u = 0; m->thp && u < m->nr_units; u++)
		if ((m->huge[u].flags & (H_HUGE | H_ACTIVE | H_QUEUED)) == (H_HUGE | H_ACTIVE) &&
		    unit_rank(m, u) == t)
			m->cand[nr++] = u | CAND_UNIT;
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
	/* One kmigraterd per node: it splits the queued huge pages first;
	 * the top tier demotes, the others promote. */
	for (t = 0; t < m->nr_tiers; t++) {
		if (m->nr_queued)
			split_scan(m, (int)t);
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
	free(m->huge);
	free(m->queue);
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
	if (env->page_huge) {
		m->thp = true;
		m->hshift = env->huge_shift;
		m->nr_units = (env->nr_pages >> m->hshift) + 1;
		m->huge = calloc(m->nr_units, sizeof(*m->huge));
		m->queue = calloc(m->nr_units, sizeof(*m->queue));
		if (!m->huge || !m->queue) {
			memtis_destroy(m);
			return tier_err_set(err, -ENOMEM, "out of memory");
		}
	}
	/* memcontrol.c mem_cgroup_alloc() (memcontrol.c:5246-5269): thresholds
	 * start at htmm_thres_hot, no split threshold yet. */
	m->active_thr = m->warm_thr = m->bp_thr = HTMM_THRES_HOT;
	m->split_threshold = SPLIT_THRES_NONE;
	m->thres_split = HTMM_THRES_SPLIT;
	/* The fast tier's size is the memcg's DRAM limit (max_at_node). */
	if (tier_tier_pages(env, 0, &total0, &free0)) {
		memtis_destroy(m);
		return tier_err_set(err, -EIO, "memtis: cannot read the fast tier's size");
	}
	m->max_nr_dram = total0;
	for (p = 0; p < env->nr_pages; p++) {
		if (env->page_node[p] == TIER_NODE_NONE)
			continue;
		if (m->thp && !(m->huge[p >> m->hshift].flags & H_SEEN))
			init_unit(m, p >> m->hshift);
		if (!in_huge(m, p))
			init_page(m, &m->pages[p]);
	}
	*priv = m;
	return 0;
}

static size_t memtis_metadata_bytes(void *priv)
{
	const struct memtis *m = priv;

	return sizeof(*m) + m->env->nr_pages * (sizeof(*m->pages) + sizeof(*m->cand)) +
	       m->nr_units * (sizeof(*m->huge) + sizeof(*m->queue));
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

void tier__memtis_split_defaults(struct tier_memtis_split_params *sp)
{
	sp->thres_split = HTMM_THRES_SPLIT;
	sp->split_period = HTMM_SPLIT_PERIOD;
	sp->gamma_tenths = HTMM_GAMMA;
	sp->dram_latency_ns = DRAM_ACCESS_LATENCY;
	sp->slow_latency_ns = NVM_ACCESS_LATENCY;
	sp->max_splits_per_pass = SPLIT_MAX_PER_PASS;
	sp->nr_skew_bins = NR_SKEW_BINS;
	sp->no_split_threshold = SPLIT_THRES_NONE;
	sp->very_hot_idx = SKEW_VERY_HOT_IDX;
	sp->skew_scale = SKEW_SCALE;
	sp->ehr_pct = EHR_PCT;
	sp->rhr_gain_pct = RHR_GAIN_PCT;
}

unsigned tier__memtis_skew_idx(uint64_t num)
{
	return get_skew_idx(num);
}

bool tier__memtis_huge(const void *priv, uint64_t unit, struct tier_memtis_huge *out)
{
	const struct memtis *m = priv;
	const struct mt_huge *h;

	if (!m->thp || unit >= m->nr_units || !(m->huge[unit].flags & H_HUGE))
		return false;
	h = &m->huge[unit];
	out->accesses = h->total;
	out->idx = h->idx;
	out->skewness_idx = h->skew;
	out->hot_utils = h->hot_utils;
	out->active = h->flags & H_ACTIVE;
	out->queued = h->flags & H_QUEUED;
	return true;
}

void tier__memtis_split_state(const void *priv, unsigned *split_threshold, int64_t *nr_split,
			      int64_t *nr_split_tail, unsigned *thres_split)
{
	const struct memtis *m = priv;

	*split_threshold = m->split_threshold;
	*nr_split = m->nr_split;
	*nr_split_tail = m->nr_split_tail;
	*thres_split = m->thres_split;
}

const struct tier_policy_ops tier_policy_memtis = {
	.name = "memtis",
	.description = "MEMTIS (SOSP'23): log2 access histogram, capacity-fitted hot threshold, periodic cooling, warm band, skewness-based huge page splits",
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
