/* kernel_nb.c - Linux's own memory tiering, re-implemented as a peer:
 * NUMA balancing in memory-tiering mode (kernel.numa_balancing = 2, 5.18+)
 * promotes slow-tier pages from the NUMA hint-fault path, kswapd demotes
 * the top tier in reclaim (demotion_enabled), plus TPP's active-LRU
 * promotion filter.
 *
 * Sources (Linux 6.12 unless said otherwise):
 *  - kernel/sched/fair.c should_numa_migrate_memory(), tiering branch, with
 *    pgdat_free_space_enough(), numa_hint_fault_latency(),
 *    numa_promotion_rate_limit() and numa_promotion_adjust_threshold();
 *  - mm/migrate.c migrate_misplaced_folio_prepare() and
 *    migrate_balanced_pgdat(): the watermark check and the kswapd wake-up;
 *  - mm/vmscan.c balance_pgdat()/pgdat_balanced() (WMARK_PROMO in tiering
 *    mode), shrink_active_list(), shrink_folio_list()/
 *    folio_check_references(), demote_folio_list()/alloc_demote_folio(),
 *    inactive_is_low(); mm/swap.c folio_mark_accessed();
 *  - mm/page_alloc.c watermarks (see linux_mm.h);
 *  - TPP (Maruf et al., "TPP: Transparent Page Placement for CXL-Enabled
 *    Tiered-Memory", ASPLOS'23, section 5), patch "active LRU-based
 *    promotion to avoid ping-pong" (mm/memory.c do_numa_page(): a faulting
 *    page off the top tier that is not on the active LRU gets
 *    mark_page_accessed() and stays; only active pages are promoted), and
 *    its decoupled demotion watermark (vm.demote_scale_factor, 2% in TPP,
 *    not merged upstream: 6.12 has WMARK_PROMO instead; off by default
 *    here, see knb_defaults).
 *
 * What it sees: NUMA hint faults from the scanner (tracker "hintfault",
 * which like task_numa_work() in tiering mode unmaps only pages off the top
 * tier) and the accessed bits the LRU reads in reclaim (tracker "idle": the
 * page-table young bits that folio_referenced() tests and clears). The
 * per-page LRU state (active/inactive list, PG_referenced, young) mirrors
 * struct page; the lists are real lists in LRU order.
 *
 * One promotion, step by step (a fault on a page off the top tier):
 *   1. TPP: not on the active LRU -> folio_mark_accessed() (first call sets
 *      PG_referenced, the second activates) and no promotion. A fresh
 *      inactive page is promoted at its third fault, a page already
 *      PG_referenced (reclaim saw it young) at its second.
 *   2. fast node free > WMARK_PROMO + max(1 GiB, node / 16): promote, no
 *      threshold (pgdat_free_space_enough()).
 *   3. hint-fault latency (fault time - unmap time) >= threshold (1000 ms,
 *      adjusted every 60 s toward the rate limit): not a candidate.
 *   4. more than numa_balancing_promote_rate_limit_MBps candidates in the
 *      current second: not promoted.
 *   5. free <= WMARK_HIGH + 1 on the fast node: the page stays and kswapd
 *      is woken (migrate_balanced_pgdat()); else it migrates, one page per
 *      fault (its own TLB flush), keeping its LRU flags.
 * kswapd (its own thread, so it runs as soon as it is woken, within the
 * demotions one tick of its CPU allows): woken by a failed promotion or by
 * its node under the low watermark, it ages the LRU (deactivation when the
 * inactive list is low, a second chance for referenced pages) and demotes
 * unreferenced inactive pages to the preferred next-tier node, falling
 * back to other lower tiers above their min watermark, until free >
 * WMARK_PROMO.
 *
 * Not modelled here: the scanner's adaptive period. In tiering mode
 * task_numa_fault() counts only faults on top-tier memory (the promoted
 * ones), all remote and private, so update_task_scan_period() finds
 * local + shared == 0 and doubles the period at every pass that promoted
 * something, up to scan_period_max (60 s): scans at 1, 3, 7, 15, 31 s...,
 * the likely cause of the ~30 s stall measured in the guest. That belongs
 * to the tracker ("hintfault" scans at a fixed 256 MB per second). Also
 * not modelled: MGLRU, THP, file pages, watermark boosting.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policies/linux_mm.h"
#include "core/policy.h"

#define NIL UINT32_MAX
/* include/linux/swap.h: reclaim batch. */
#define SWAP_CLUSTER_MAX 32
/* kernel/sched/fair.c */
#define NUMA_MIGRATION_ADJUST_STEPS 16
/* mm/internal.h */
#define MAX_RECLAIM_RETRIES 16

enum {
	PG_ACTIVE = 1,		/* on the active list */
	PG_REFERENCED = 2,	/* PG_referenced */
	PG_YOUNG = 4,		/* a PTE young bit set since reclaim last looked */
	PG_ONLRU = 8,
};

/* The knobs, with the kernel's defaults. */
struct knb_config {
	/* debugfs sched/numa_balancing/hot_threshold_ms (fair.c
	 * sysctl_numa_balancing_hot_threshold = MSEC_PER_SEC). */
	uint32_t hot_threshold_ms;
	/* kernel.numa_balancing_promote_rate_limit_MBps, 65536. */
	uint64_t promote_rate_limit_mbps;
	/* debugfs scan_period_max_ms, 60000: the threshold adjustment period. */
	uint32_t scan_period_max_ms;
	/* vm.watermark_scale_factor, 10 (0.1%). */
	unsigned watermark_scale_factor;
	/* TPP's active-LRU promotion filter. */
	bool tpp_active_filter;
	/* TPP's vm.demote_scale_factor in basis points (TPP default 200):
	 * kswapd on a top-tier node keeps WMARK_HIGH + this share free. 0:
	 * upstream, kswapd balances to WMARK_PROMO. */
	unsigned tpp_demote_scale_factor;
	/* kswapd CPU per demoted page, ns: migration ~1.5 us per 4 KiB page
	 * plus rmap and LRU work; bounds demotions per tick (one thread per
	 * node). */
	uint32_t kswapd_page_ns;
};

static const struct knb_config knb_defaults = {
	.hot_threshold_ms = 1000,
	.promote_rate_limit_mbps = 65536,
	.scan_period_max_ms = 60000,
	.watermark_scale_factor = TIER_LMM_WATERMARK_SCALE_FACTOR,
	.tpp_active_filter = true,
	.tpp_demote_scale_factor = 0,
	.kswapd_page_ns = 2000,
};

struct knb_list {
	uint32_t head, tail;	/* head = most recently added */
	uint64_t nr;
};

struct knb_node {
	bool present;
	bool kswapd_woken;
	unsigned kswapd_failures;	/* ticks in a row without a demotion */
	bool kswapd_progress;		/* demoted since the last tick */
	uint64_t kswapd_scan_left;	/* LRU pages it may still look at, this tick */
	uint64_t kswapd_demote_left;	/* pages it may still demote, this tick */
	int demote_to;			/* preferred demotion target, -1 */
	struct tier__lmm_wmarks wm;
	uint64_t balance_mark;		/* kswapd stops above this */
	uint64_t wake_mark;		/* kswapd wakes below this */
	struct knb_list lru[2];		/* [0] inactive, [1] active */
	/* pglist_data NUMA-balancing state (promotion target) */
	uint32_t nbp_threshold;		/* ms, 0 = the default */
	uint64_t nbp_th_start_ms, nbp_th_nr_cand;
	uint64_t nbp_rl_start_ms, nbp_rl_nr_cand;
	uint64_t pgpromote_candidate;
};

struct knb_stats {
	uint64_t hint_faults;
	uint64_t tpp_deferred;		/* not active: marked accessed instead */
	uint64_t over_threshold;	/* latency >= threshold */
	uint64_t rate_limited;
	uint64_t promote_wmark_fail;	/* stayed, kswapd woken */
	uint64_t promoted;
	uint64_t demoted;
	uint64_t demote_fail;
};

struct knb {
	const struct tier_env *env;
	struct knb_config cfg;
	uint64_t nr_pages;		/* size of the per-page arrays */
	int node_rank[256];
	int cpu_node;
	int top_rank;			/* ranks <= this are "toptier" */
	uint8_t *flags;
	uint8_t *lru_node;
	uint32_t *next, *prev;
	uint64_t *batch;
	int *batch_nodes;
	int *batch_status;
	size_t batch_cap;
	struct knb_node node[256];
	struct knb_stats stats;
};

/* --- LRU lists ------------------------------------------------------------ */

static struct knb_list *page_list(struct knb *k, uint64_t p)
{
	return &k->node[k->lru_node[p]].lru[k->flags[p] & PG_ACTIVE ? 1 : 0];
}

static void lru_del(struct knb *k, uint64_t p)
{
	struct knb_list *l;

	if (!(k->flags[p] & PG_ONLRU))
		return;
	l = page_list(k, p);
	if (k->prev[p] != NIL)
		k->next[k->prev[p]] = k->next[p];
	else
		l->head = k->next[p];
	if (k->next[p] != NIL)
		k->prev[k->next[p]] = k->prev[p];
	else
		l->tail = k->prev[p];
	l->nr--;
	k->flags[p] &= (uint8_t)~PG_ONLRU;
}

/* Puts p at the head of node's active or inactive list. */
static void lru_add(struct knb *k, uint64_t p, int node, bool active)
{
	struct knb_list *l;

	lru_del(k, p);
	k->lru_node[p] = (uint8_t)node;
	if (active)
		k->flags[p] |= PG_ACTIVE;
	else
		k->flags[p] &= (uint8_t)~PG_ACTIVE;
	l = page_list(k, p);
	k->prev[p] = NIL;
	k->next[p] = l->head;
	if (l->head != NIL)
		k->prev[l->head] = (uint32_t)p;
	else
		l->tail = (uint32_t)p;
	l->head = (uint32_t)p;
	l->nr++;
	k->flags[p] |= PG_ONLRU;
}

/* Follows the backend's page_node: a page that appeared, moved or went. */
static void lru_sync(struct knb *k, uint64_t p)
{
	uint8_t n = k->env->page_node[p];

	if (n == TIER_NODE_NONE) {
		lru_del(k, p);
		return;
	}
	if ((k->flags[p] & PG_ONLRU) && k->lru_node[p] == n)
		return;
	lru_add(k, p, n, k->flags[p] & PG_ACTIVE);
}

/* mm/swap.c folio_mark_accessed(): inactive,unreferenced -> referenced;
 * inactive,referenced -> active (and PG_referenced cleared). */
static void mark_page_accessed(struct knb *k, uint64_t p)
{
	if (!(k->flags[p] & PG_REFERENCED)) {
		k->flags[p] |= PG_REFERENCED;
	} else if (!(k->flags[p] & PG_ACTIVE)) {
		lru_add(k, p, k->lru_node[p], true);
		k->flags[p] &= (uint8_t)~PG_REFERENCED;
	}
}

/* --- node state ----------------------------------------------------------- */

static uint64_t node_free(const struct knb *k, int node)
{
	uint64_t total, free;

	tier__lmm_node_pages(k->env, node, &total, &free);
	return free;
}

static bool toptier(const struct knb *k, int node)
{
	return k->node_rank[node] >= 0 && k->node_rank[node] <= k->top_rank;
}

/* --- promotion (the hint-fault path) -------------------------------------- */

static void wakeup_kswapd(struct knb *k, int node);

/* pgdat_free_space_enough(): so much free memory that every recently
 * accessed slow page may come up, hot threshold or not. */
static bool free_space_enough(const struct knb *k, int node)
{
	uint64_t total, free, enough;

	tier__lmm_node_pages(k->env, node, &total, &free);
	enough = (UINT64_C(1) << 30) >> k->env->page_shift;
	if (total >> 4 > enough)
		enough = total >> 4;
	return free > k->node[node].wm.promo + enough;
}

/* numa_promotion_adjust_threshold(): once per scan_period_max, move the
 * threshold one step (2 * default / 16) so that the candidates of the last
 * period track rate_limit * period. */
static void adjust_threshold(struct knb *k, struct knb_node *t, uint64_t rate_limit,
			     uint64_t now_ms)
{
	const uint32_t ref_th = k->cfg.hot_threshold_ms;
	uint64_t ref_cand, diff_cand;
	uint32_t unit_th, th;

	if (now_ms - t->nbp_th_start_ms <= k->cfg.scan_period_max_ms)
		return;
	t->nbp_th_start_ms = now_ms;
	ref_cand = rate_limit * k->cfg.scan_period_max_ms / 1000;
	diff_cand = t->pgpromote_candidate - t->nbp_th_nr_cand;
	unit_th = ref_th * 2 / NUMA_MIGRATION_ADJUST_STEPS;
	th = t->nbp_threshold ? t->nbp_threshold : ref_th;
	if (diff_cand > ref_cand * 11 / 10)
		th = th - unit_th > unit_th ? th - unit_th : unit_th;
	else if (diff_cand < ref_cand * 9 / 10)
		th = th + unit_th < ref_th * 2 ? th + unit_th : ref_th * 2;
	t->nbp_th_nr_cand = t->pgpromote_candidate;
	t->nbp_threshold = th;
}

/* numa_promotion_rate_limit(): counts the candidate; true when the
 * current one-second window already had rate_limit candidates. */
static bool rate_limited(struct knb_node *t, uint64_t rate_limit, uint64_t now_ms)
{
	t->pgpromote_candidate++;
	if (now_ms - t->nbp_rl_start_ms > 1000) {
		t->nbp_rl_start_ms = now_ms;
		t->nbp_rl_nr_cand = t->pgpromote_candidate;
	}
	return t->pgpromote_candidate - t->nbp_rl_nr_cand >= rate_limit;
}

/* should_numa_migrate_memory(), memory-tiering branch. */
static bool should_promote(struct knb *k, int target, uint64_t latency_ms, uint64_t now_ms)
{
	struct knb_node *t = &k->node[target];
	uint64_t rate_limit = k->cfg.promote_rate_limit_mbps << (20 - k->env->page_shift);
	uint32_t th;

	if (free_space_enough(k, target)) {
		t->nbp_threshold = 0;	/* workload changed: reset */
		return true;
	}
	adjust_threshold(k, t, rate_limit, now_ms);
	th = t->nbp_threshold ? t->nbp_threshold : k->cfg.hot_threshold_ms;
	if (latency_ms >= th) {
		k->stats.over_threshold++;
		return false;
	}
	if (rate_limited(t, rate_limit, now_ms)) {
		k->stats.rate_limited++;
		return false;
	}
	return true;
}

static void hint_fault(struct knb *k, const struct tier_obs *o, uint64_t now_ms)
{
	const struct tier_env *env = k->env;
	uint64_t p = o->page;
	int node, target = k->cpu_node, status = 0;
	long moved;

	if (p >= k->nr_pages || env->page_node[p] == TIER_NODE_NONE)
		return;
	lru_sync(k, p);
	node = env->page_node[p];
	k->stats.hint_faults++;
	if (toptier(k, node) || target < 0)
		return;
	/* TPP: promote only pages on the active LRU; others get one more
	 * step towards it. */
	if (k->cfg.tpp_active_filter && !(k->flags[p] & PG_ACTIVE)) {
		mark_page_accessed(k, p);
		k->stats.tpp_deferred++;
		return;
	}
	if (!should_promote(k, target, o->latency_us / 1000, now_ms))
		return;
	/* migrate_balanced_pgdat(): free above WMARK_HIGH + the page, else
	 * wake kswapd and leave the page where it is. */
	if (node_free(k, target) <= k->node[target].wm.high + 1) {
		wakeup_kswapd(k, target);
		k->stats.promote_wmark_fail++;
		return;
	}
	moved = env->migrator->move(env->migrator_priv, &p, &target, &status, 1);
	if (moved == 1 && status == target) {
		/* folio_migrate_flags() keeps active/referenced. */
		lru_add(k, p, target, k->flags[p] & PG_ACTIVE);
		k->stats.promoted++;
	} else if (status == -ENOMEM) {
		wakeup_kswapd(k, target);
		k->stats.promote_wmark_fail++;
	}
}

static void knb_observe(void *priv, const struct tier_obs *obs, size_t n)
{
	struct knb *k = priv;
	const struct tier_env *env = k->env;
	uint64_t now_ms = env->clock->now_us(env->clock_priv) / 1000;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tier_obs *o = &obs[i];

		switch (o->kind) {
		case TIER_OBS_ACCESSED: {
			uint64_t p = o->page, end = o->page + o->nr_pages;

			/* The hardware sets young bits; reclaim reads them
			 * later. Nothing for the kernel to do per access. */
			if (!o->count)
				break;
			if (end > k->nr_pages)
				end = k->nr_pages;
			for (; p < end; p++) {
				k->flags[p] |= PG_YOUNG;
				if (!(k->flags[p] & PG_ONLRU))
					lru_sync(k, p);	/* a page new to us */
			}
			break;
		}
		case TIER_OBS_HINT_FAULT:
			hint_fault(k, o, now_ms);
			(*env->work_units)++;
			break;
		default:
			break;
		}
	}
}

/* --- kswapd: LRU aging and demotion --------------------------------------- */

/* inactive_is_low(): inactive * ratio < active, ratio = sqrt(10 * GB)
 * of the node's LRU (1 under 1 GB). */
static bool inactive_is_low(const struct knb *k, int node)
{
	const struct knb_node *n = &k->node[node];
	uint64_t gb = (n->lru[0].nr + n->lru[1].nr) >> (30 - k->env->page_shift);
	uint64_t ratio = gb ? tier__lmm_int_sqrt(10 * gb) : 1;

	return n->lru[0].nr * ratio < n->lru[1].nr;
}

/* shrink_active_list() for anon pages: deactivated whether referenced or
 * not; folio_referenced() clears their young bits. */
static uint64_t shrink_active(struct knb *k, int node, unsigned nr)
{
	struct knb_list *l = &k->node[node].lru[1];
	uint64_t scanned = 0;

	while (nr-- && l->tail != NIL) {
		uint64_t p = l->tail;

		scanned++;
		if (k->env->page_node[p] != node) {
			lru_sync(k, p);
			continue;
		}
		k->flags[p] &= (uint8_t)~PG_YOUNG;
		lru_add(k, p, node, false);
	}
	return scanned;
}

/* Picks where a demoted page goes: the preferred target above its min
 * watermark (alloc_demote_folio(), __GFP_THISNODE first), else any node
 * of a slower tier above its min (the allowed demotion targets). room[]
 * holds free-page estimates. */
static int demote_dest(const struct knb *k, int node, int64_t room[256])
{
	const struct tier_topology *topo = k->env->topo;
	int pref = k->node[node].demote_to;
	size_t r, i;

	if (pref >= 0 && room[pref] > (int64_t)k->node[pref].wm.min)
		return pref;
	for (r = (size_t)k->node_rank[node] + 1; r < topo->nr_tiers; r++)
		for (i = 0; i < topo->tiers[r].nr_nodes; i++) {
			int t = topo->tiers[r].nodes[i];

			if (room[t] > (int64_t)k->node[t].wm.min)
				return t;
		}
	return -1;
}

/* shrink_inactive_list() + shrink_folio_list() on up to nr pages from the
 * tail: young pages get a second chance (PG_referenced, then activation),
 * the others are demoted in one batch. Returns pages scanned; *demoted
 * counts successful demotions. */
static uint64_t shrink_inactive(struct knb *k, int node, unsigned nr, uint64_t *demoted)
{
	const struct tier_env *env = k->env;
	const struct tier_topology *topo = env->topo;
	struct knb_list *l = &k->node[node].lru[0];
	int64_t room[256];
	uint64_t scanned = 0;
	size_t n = 0, i;
	long moved;

	while (nr-- && l->tail != NIL && n < k->batch_cap) {
		uint64_t p = l->tail;
		uint8_t f = k->flags[p];

		scanned++;
		if (env->page_node[p] != node) {
			lru_sync(k, p);
			continue;
		}
		k->flags[p] = (uint8_t)(f & ~(PG_YOUNG | PG_REFERENCED));
		if (f & PG_YOUNG) {
			/* folio_check_references(): referenced PTEs set
			 * PG_referenced; referenced before too -> activate,
			 * else keep for another trip. */
			k->flags[p] |= PG_REFERENCED;
			lru_add(k, p, node, f & PG_REFERENCED);
			continue;
		}
		lru_del(k, p);		/* isolated for demotion */
		k->batch[n++] = p;
	}
	if (!n)
		return scanned;
	for (i = 0; i < topo->nr_nodes; i++) {
		int id = topo->nodes[i].id;

		if (id >= 0 && id < 256)
			room[id] = (int64_t)node_free(k, id);
	}
	for (i = 0; i < n; i++) {
		int t = demote_dest(k, node, room);

		k->batch_nodes[i] = t;
		if (t >= 0)
			room[t]--;
	}
	/* Pages with nowhere to go are not sent; the rest go in one call
	 * (migrate_pages() batches the TLB flush). */
	{
		size_t m = 0;

		for (i = 0; i < n; i++) {
			uint64_t p = k->batch[i];
			int t = k->batch_nodes[i];

			if (t < 0) {
				/* No swap: activate_locked. */
				lru_add(k, p, node, true);
				k->stats.demote_fail++;
				continue;
			}
			k->batch[m] = p;
			k->batch_nodes[m] = t;
			m++;
		}
		n = m;
	}
	if (!n)
		return scanned;
	moved = env->migrator->move(env->migrator_priv, k->batch, k->batch_nodes,
				    k->batch_status, n);
	for (i = 0; i < n; i++) {
		uint64_t p = k->batch[i];
		int st = moved < 0 ? (int)moved : k->batch_status[i];

		if (st >= 0 && st == k->batch_nodes[i]) {
			lru_add(k, p, st, false);
			(*demoted)++;
			k->stats.demoted++;
		} else {
			lru_sync(k, p);
			if (env->page_node[p] == node)
				lru_add(k, p, node, true);
			k->stats.demote_fail++;
		}
	}
	/* GFP_NOWAIT allocations wake the target's kswapd below its low
	 * watermark: demotion cascades down the tiers. */
	for (i = 0; i < n; i++) {
		int t = k->batch_nodes[i];

		if (node_free(k, t) < k->node[t].wm.low)
			k->node[t].kswapd_woken = true;	/* runs in its tick */
	}
	return scanned;
}

/* balance_pgdat(): reclaim until the node is balanced (free above its
 * balance mark). kswapd is a thread of its own: it runs as soon as it is
 * woken, within what one tick of its CPU allows (kswapd_demote_left).
 * Accessed bits only arrive between ticks, so within a tick it looks at
 * each LRU page at most once (kswapd_scan_left). An unbalanced node keeps
 * kswapd awake into the next tick, until MAX_RECLAIM_RETRIES ticks in a row
 * demoted nothing (see knb_tick()). */
static void kswapd_balance(struct knb *k, int node)
{
	struct knb_node *n = &k->node[node];
	uint64_t scanned = 0, demoted = 0;

	while (node_free(k, node) <= n->balance_mark && n->kswapd_demote_left &&
	       n->kswapd_scan_left) {
		uint64_t s = 0, d = 0;
		unsigned batch = n->kswapd_scan_left < SWAP_CLUSTER_MAX ?
				 (unsigned)n->kswapd_scan_left : SWAP_CLUSTER_MAX;

		if (inactive_is_low(k, node))
			s += shrink_active(k, node, batch);
		if (s < batch)
			s += shrink_inactive(k, node, batch - (unsigned)s, &d);
		demoted += d;
		scanned += s;
		n->kswapd_scan_left -= s < n->kswapd_scan_left ? s : n->kswapd_scan_left;
		n->kswapd_demote_left -= d < n->kswapd_demote_left ? d : n->kswapd_demote_left;
		if (!s)
			break;		/* nothing left on the LRU */
	}
	*k->env->work_units += scanned;
	if (demoted)
		n->kswapd_progress = true;
	if (node_free(k, node) > n->balance_mark)
		n->kswapd_woken = false;
}

/* wakeup_kswapd(): only when the node is not balanced; kswapd then runs
 * at once (it has a CPU of its own). */
static void wakeup_kswapd(struct knb *k, int node)
{
	struct knb_node *n = &k->node[node];

	if (node_free(k, node) > n->balance_mark || n->demote_to < 0)
		return;
	n->kswapd_woken = true;
	kswapd_balance(k, node);
}

/* A new tick of kswapd's CPU: one look at each LRU page, and the
 * demotions it has time for. */
static void kswapd_refill(const struct knb *k, struct knb_node *n)
{
	uint64_t d = k->env->interval_us * 1000 / k->cfg.kswapd_page_ns;

	n->kswapd_scan_left = n->lru[0].nr + n->lru[1].nr;
	n->kswapd_demote_left = d ? d : 1;
}

static int knb_tick(void *priv, uint64_t now_us)
{
	struct knb *k = priv;
	const struct tier_topology *topo = k->env->topo;
	size_t r, i;

	(void)now_us;
	/* Faster tiers first: their demotions may wake the next tier's
	 * kswapd in the same tick. */
	for (r = 0; r < topo->nr_tiers; r++)
		for (i = 0; i < topo->tiers[r].nr_nodes; i++) {
			int node = topo->tiers[r].nodes[i];
			struct knb_node *n;

			if (node < 0 || node >= 256)
				continue;
			n = &k->node[node];
			if (!n->present)
				continue;
			kswapd_refill(k, n);
			/* The allocator wakes kswapd under the low watermark
			 * (the simulator's first touch fills nodes without
			 * the allocator's watermarks: this catches up). */
			if (node_free(k, node) < n->wake_mark)
				n->kswapd_woken = true;
			if (!n->kswapd_woken)
				continue;
			if (n->demote_to < 0) {
				/* Slowest tier, no swap: nothing to reclaim. */
				n->kswapd_woken = false;
				continue;
			}
			kswapd_balance(k, node);
			/* kswapd_failures: a node it cannot balance. */
			if (n->kswapd_progress || !n->kswapd_woken)
				n->kswapd_failures = 0;
			else if (++n->kswapd_failures >= MAX_RECLAIM_RETRIES) {
				n->kswapd_woken = false;	/* until woken again */
				n->kswapd_failures = 0;
			}
			n->kswapd_progress = false;
		}
	return 0;
}

/* --- lifecycle -------------------------------------------------------------- */

static void knb_destroy(void *priv)
{
	struct knb *k = priv;

	if (!k)
		return;
	free(k->flags);
	free(k->lru_node);
	free(k->next);
	free(k->prev);
	free(k->batch);
	free(k->batch_nodes);
	free(k->batch_status);
	free(k);
}

/* Every present page starts on its node's inactive list (anon pages
 * since 5.9), young from its instantiating fault. */
static void init_pages(struct knb *k, uint64_t first, uint64_t end)
{
	const uint8_t *page_node = k->env->page_node;
	uint64_t p;

	for (p = first; p < end; p++) {
		k->flags[p] = 0;
		k->next[p] = k->prev[p] = NIL;
		if (page_node[p] == TIER_NODE_NONE || !k->node[page_node[p]].present)
			continue;
		k->flags[p] = PG_YOUNG;
		lru_add(k, p, page_node[p], false);
	}
}

static int knb_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	const struct tier_topology *topo = env->topo;
	struct tier__lmm_wmarks wm[256];
	struct knb *k;
	uint64_t now_ms;
	size_t i;
	int ret;

	if (env->nr_pages >= NIL)
		return tier_err_set(err, -EINVAL, "kernel-nb: more than %u pages", NIL - 1);
	k = calloc(1, sizeof(*k));
	if (!k)
		return tier_err_set(err, -ENOMEM, "out of memory");
	k->env = env;
	k->cfg = knb_defaults;
	k->batch_cap = env->max_batch && env->max_batch < SWAP_CLUSTER_MAX ? env->max_batch
									   : SWAP_CLUSTER_MAX;
	k->flags = calloc(env->nr_pages ? env->nr_pages : 1, 1);
	k->lru_node = calloc(env->nr_pages ? env->nr_pages : 1, 1);
	k->next = malloc((env->nr_pages ? env->nr_pages : 1) * sizeof(*k->next));
	k->prev = malloc((env->nr_pages ? env->nr_pages : 1) * sizeof(*k->prev));
	k->batch = calloc(k->batch_cap, sizeof(*k->batch));
	k->batch_nodes = calloc(k->batch_cap, sizeof(*k->batch_nodes));
	k->batch_status = calloc(k->batch_cap, sizeof(*k->batch_status));
	if (!k->flags || !k->lru_node || !k->next || !k->prev || !k->batch || !k->batch_nodes ||
	    !k->batch_status) {
		knb_destroy(k);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	ret = tier__lmm_wmarks_init(env, k->cfg.watermark_scale_factor, wm);
	if (ret) {
		knb_destroy(k);
		return tier_err_set(err, ret, "kernel-nb: cannot read node sizes");
	}
	tier_node_rank_map(topo, k->node_rank);
	k->cpu_node = tier__lmm_cpu_node(env);
	k->top_rank = k->cpu_node >= 0 ? k->node_rank[k->cpu_node] : 0;
	now_ms = env->clock->now_us(env->clock_priv) / 1000;
	for (i = 0; i < 256; i++) {
		k->node[i].lru[0].head = k->node[i].lru[0].tail = NIL;
		k->node[i].lru[1].head = k->node[i].lru[1].tail = NIL;
		k->node[i].demote_to = -1;
	}
	for (i = 0; i < topo->nr_nodes; i++) {
		int id = topo->nodes[i].id;
		struct knb_node *n;
		uint64_t total, free;

		if (id < 0 || id >= 256 || k->node_rank[id] < 0)
			continue;
		n = &k->node[id];
		n->present = true;
		n->wm = wm[id];
		n->demote_to = tier__lmm_demotion_target(env, id);
		/* pgdat_balanced() uses WMARK_PROMO in tiering mode; kswapd
		 * wakes under WMARK_LOW. TPP: a top-tier node keeps
		 * demote_scale_factor free and wakes kswapd under it. */
		n->balance_mark = wm[id].promo;
		n->wake_mark = wm[id].low;
		tier__lmm_node_pages(env, id, &total, &free);
		if (k->cfg.tpp_demote_scale_factor && toptier(k, id)) {
			n->balance_mark = wm[id].high + total * k->cfg.tpp_demote_scale_factor / 10000;
			n->wake_mark = n->balance_mark;
		}
		/* reset_memory_tiering() when the mode is switched on. */
		n->nbp_th_start_ms = now_ms;
		n->nbp_rl_start_ms = now_ms;
	}
	k->nr_pages = env->nr_pages;
	init_pages(k, 0, env->nr_pages);
	for (i = 0; i < 256; i++)
		if (k->node[i].present)
			kswapd_refill(k, &k->node[i]);
	*priv = k;
	return 0;
}

static int knb_resize(void *priv)
{
	struct knb *k = priv;
	uint64_t nr = k->env->nr_pages;
	uint8_t *f, *ln;
	uint32_t *nx, *pv;

	if (nr <= k->nr_pages)
		return 0;
	if (nr >= NIL)
		return -ENOMEM;
	/* Each array that grew is kept: it works at the old size too. */
	f = realloc(k->flags, nr);
	if (!f)
		return -ENOMEM;
	k->flags = f;
	ln = realloc(k->lru_node, nr);
	if (!ln)
		return -ENOMEM;
	k->lru_node = ln;
	nx = realloc(k->next, nr * sizeof(*nx));
	if (!nx)
		return -ENOMEM;
	k->next = nx;
	pv = realloc(k->prev, nr * sizeof(*pv));
	if (!pv)
		return -ENOMEM;
	k->prev = pv;
	init_pages(k, k->nr_pages, nr);
	k->nr_pages = nr;
	return 0;
}

static void knb_forget(void *priv, uint64_t first, uint64_t nr)
{
	struct knb *k = priv;
	uint64_t p, end = first + nr < k->nr_pages ? first + nr : k->nr_pages;

	for (p = first; p < end; p++) {
		lru_del(k, p);
		k->flags[p] = 0;
	}
}

static size_t knb_metadata_bytes(void *priv)
{
	const struct knb *k = priv;

	/* The kernel keeps this state in struct page (flags, lru links);
	 * counted here as the model's own memory. */
	return sizeof(*k) + k->nr_pages * (2 + 2 * sizeof(uint32_t));
}

const struct tier_policy_ops tier_policy_kernel_nb = {
	.name = "kernel-nb",
	.description = "Linux NUMA balancing tiering mode 2 + kswapd demotion, TPP active-LRU filter",
	.obs_kinds = TIER_OBS_HINT_FAULT | TIER_OBS_ACCESSED,
	.default_tracker = "hintfault,idle",
	/* Promotion happens in the fault path; a short tick keeps the
	 * decision and kswapd's response within a millisecond of it. */
	.interval_us = 1000,
	.create = knb_create,
	.destroy = knb_destroy,
	.observe = knb_observe,
	.tick = knb_tick,
	.resize = knb_resize,
	.forget = knb_forget,
	.metadata_bytes = knb_metadata_bytes,
};
