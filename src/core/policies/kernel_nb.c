/* kernel_nb.c - Linux's own memory tiering, re-implemented as a peer:
 * NUMA balancing in memory-tiering mode (kernel.numa_balancing = 2, 5.18+)
 * promotes slow-tier pages from the NUMA hint-fault path, kswapd demotes
 * the top tier in reclaim (demotion_enabled). The `tpp` policy adds TPP's
 * active-LRU promotion filter and demotion watermark, never merged.
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
 *    not merged upstream: 6.12 has WMARK_PROMO instead; both only in the
 *    `tpp` policy, see knb_tpp).
 *
 * What it sees: NUMA hint faults from the scanner (tracker "hintfault",
 * which like task_numa_work() in tiering mode unmaps only pages off the top
 * tier) and the accessed bits the LRU reads in reclaim: the page-table
 * young bits that folio_referenced() tests and clears, read through the
 * backend's test_and_clear_young for each page kswapd looks at, and only
 * then (mm/vmscan.c shrink_active_list() and folio_check_references() call
 * folio_referenced() per folio they take off the LRU; nothing in the
 * kernel's tiering scans accessed bits on a timer). So the cost is
 * kswapd's, per page it ages, while it runs; nothing between reclaims.
 * The tracker "young" hands over the bits the hardware set during each
 * tick at no cost (no software scans them), so that a tick's accesses
 * count after the kswapd runs its hint faults start, replayed at the
 * tick's end: the kernel's kswapd runs beside the application and a hot
 * page is touched again between its deactivation and its turn at the
 * inactive tail. (Without it, with the bits read only at the checks, tpp
 * demoted hot pages it had just deactivated in the same instant: zipf
 * 163.8 -> 201.5 ns.) Until now the default tracker was "hintfault,idle",
 * the same bits from an accessed-bit scan of every page at each 1 ms tick,
 * charged as policy CPU (50 ns a page: 1.65 ms of CPU per 1 ms tick on
 * the suite's 128 MiB, 33 s in a 20 s run), a cost the kernel never pays.
 * The per-page LRU state (active/inactive list, PG_referenced, young)
 * mirrors struct page; the lists are real lists in LRU order.
 *
 * One promotion, step by step (a fault on a page off the top tier):
 *   1. `tpp` only: not on the active LRU -> folio_mark_accessed() (first call sets
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
 * to the tracker ("hintfault": per run 256 MB of ranges that unmap
 * something, as task_numa_work() counts them; a run a second, the period
 * doubling at each full pass). Also not modelled: MGLRU, THP, file
 * pages, watermark boosting.
 *
 * The modules (kernel_nb_impl.h has the state they share): this file holds
 * the knobs' defaults, the state's life, the observations and the ops
 * table; kernel_nb_lru.c the LRU lists; kernel_nb_promote.c the hint-fault
 * path; kernel_nb_demote.c kswapd.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/policies/kernel_nb_impl.h"

/* The knobs' values as upstream Linux has them (torvalds/linux at
 * 04026c23c8d8, the same in 6.12; each field's meaning: struct
 * knb_config). */
static const struct knb_config knb_defaults = {
	/* kernel/sched/fair.c: sysctl_numa_balancing_hot_threshold =
	 * MSEC_PER_SEC */
	.hot_threshold_ms = 1000,
	/* kernel/sched/fair.c: sysctl_numa_balancing_promote_rate_limit =
	 * 65536 */
	.promote_rate_limit_mbps = 65536,
	/* kernel/sched/fair.c: sysctl_numa_balancing_scan_period_max = 60000 */
	.scan_period_max_ms = 60000,
	/* mm/page_alloc.c: watermark_scale_factor = 10 */
	.watermark_scale_factor = TIER_LMM_WATERMARK_SCALE_FACTOR,
	/* Upstream promotes on the fault path without looking at the LRU:
	 * mm/memory.c do_numa_page() -> numa_migrate_check() and
	 * kernel/sched/fair.c should_numa_migrate_memory() test the node's
	 * free space, the fault latency and the rate limit, never
	 * folio_test_active(). TPP's filter was not merged: the `tpp` policy
	 * has it. */
	.tpp_active_filter = false,
	/* Not upstream (TPP's vm.demote_scale_factor): kswapd balances to
	 * WMARK_PROMO, mm/vmscan.c pgdat_balanced(). */
	.tpp_demote_scale_factor = 0,
	.kswapd_page_ns = 2000,
};

/* TPP as its patches run (Maruf et al., "TPP: Transparent Page Placement
 * for CXL-Enabled Tiered-Memory", ASPLOS'23, sec. 5, and its linux-mm
 * series): promotion only of pages on the active LRU (the patch "active
 * LRU-based promotion to avoid ping-pong") and a demotion watermark
 * decoupled from allocation: kswapd on a top tier keeps WMARK_HIGH +
 * vm.demote_scale_factor free, 2% (200 basis points) by default. The rest
 * as upstream. */
static const struct knb_config knb_tpp = {
	.hot_threshold_ms = 1000,
	.promote_rate_limit_mbps = 65536,
	.scan_period_max_ms = 60000,
	.watermark_scale_factor = TIER_LMM_WATERMARK_SCALE_FACTOR,
	.tpp_active_filter = true,
	.tpp_demote_scale_factor = 200,
	.kswapd_page_ns = 2000,
};

/* --- observations --------------------------------------------------------- */

/* The hardware sets young bits; reclaim reads them later. Nothing for the
 * kernel to do per access. */
static void accessed(struct knb *k, const struct tier_obs *o)
{
	uint64_t p = o->page, end = o->page + o->nr_pages;

	if (!o->count)
		return;
	if (end > k->nr_pages)
		end = k->nr_pages;
	for (; p < end; p++) {
		k->flags[p] |= PG_YOUNG;
		if (!(k->flags[p] & PG_ONLRU))
			tier__knb_lru_sync(k, p);	/* a page new to us */
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
		case TIER_OBS_ACCESSED:
			accessed(k, o);
			break;
		case TIER_OBS_HINT_FAULT:
			tier__knb_hint_fault(k, o, now_ms);
			(*env->work_units)++;
			break;
		default:
			break;
		}
	}
}

static int knb_tick(void *priv, uint64_t now_us)
{
	(void)now_us;
	tier__knb_kswapd_tick(priv);
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
		k->next[p] = k->prev[p] = KNB_NIL;
		if (page_node[p] == TIER_NODE_NONE || !k->node[page_node[p]].present)
			continue;
		k->flags[p] = PG_YOUNG;
		tier__knb_lru_add(k, p, page_node[p], false);
	}
}

/* The per-page arrays for env->nr_pages (at least one) and the reclaim
 * batch. Returns 0 or -ENOMEM (what was allocated is freed by
 * knb_destroy()). */
static int alloc_arrays(struct knb *k)
{
	const struct tier_env *env = k->env;

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
	    !k->batch_status)
		return -ENOMEM;
	return 0;
}

/* Each node of the topology: its watermarks wm[id], its demotion target,
 * kswapd's marks and the NUMA-balancing windows starting at now_ms. */
static void init_nodes(struct knb *k, const struct tier__lmm_wmarks wm[TIER_MAX_NODES], uint64_t now_ms)
{
	const struct tier_env *env = k->env;
	const struct tier_topology *topo = env->topo;
	size_t i;

	for (i = 0; i < TIER_MAX_NODES; i++) {
		k->node[i].lru[0].head = k->node[i].lru[0].tail = KNB_NIL;
		k->node[i].lru[1].head = k->node[i].lru[1].tail = KNB_NIL;
		k->node[i].demote_to = -1;
	}
	for (i = 0; i < topo->nr_nodes; i++) {
		int id = topo->nodes[i].id;
		struct knb_node *n;
		uint64_t total, free;

		if (id < 0 || id >= TIER_MAX_NODES || k->node_rank[id] < 0)
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
		if (k->cfg.tpp_demote_scale_factor && knb_toptier(k, id)) {
			n->balance_mark = wm[id].high + total * k->cfg.tpp_demote_scale_factor / 10000;
			n->wake_mark = n->balance_mark;
		}
		/* reset_memory_tiering() when the mode is switched on. */
		n->nbp_th_start_ms = now_ms;
		n->nbp_rl_start_ms = now_ms;
	}
}

static int knb_create_with(const struct tier_env *env, const struct knb_config *cfg,
			   void **priv, struct tier_err *err)
{
	struct tier__lmm_wmarks wm[TIER_MAX_NODES];
	struct knb *k;
	size_t i;
	int ret;

	if (env->nr_pages >= KNB_NIL)
		return tier_err_set(err, -EINVAL, "kernel-nb: more than %u pages", KNB_NIL - 1);
	k = calloc(1, sizeof(*k));
	if (!k)
		return tier_err_set(err, -ENOMEM, "out of memory");
	k->env = env;
	k->cfg = *cfg;
	/* kswapd's CPU per page on this machine's CPU (a slower one demotes
	 * fewer pages per tick). */
	if (env->cpu_slowdown > 0 && env->cpu_slowdown != 1.0)
		k->cfg.kswapd_page_ns = (uint32_t)(cfg->kswapd_page_ns * env->cpu_slowdown + 0.5);
	if (alloc_arrays(k)) {
		knb_destroy(k);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	ret = tier__lmm_wmarks_init(env, k->cfg.watermark_scale_factor, wm);
	if (ret) {
		knb_destroy(k);
		return tier_err_set(err, ret, "kernel-nb: cannot read node sizes");
	}
	tier_node_rank_map(env->topo, k->node_rank);
	k->cpu_node = tier__lmm_cpu_node(env);
	k->top_rank = k->cpu_node >= 0 ? k->node_rank[k->cpu_node] : 0;
	init_nodes(k, wm, env->clock->now_us(env->clock_priv) / 1000);
	k->nr_pages = env->nr_pages;
	init_pages(k, 0, env->nr_pages);
	for (i = 0; i < TIER_MAX_NODES; i++)
		if (k->node[i].present)
			tier__knb_kswapd_refill(k, &k->node[i]);
	*priv = k;
	return 0;
}

static int knb_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	return knb_create_with(env, &knb_defaults, priv, err);
}

static int tpp_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	return knb_create_with(env, &knb_tpp, priv, err);
}

static int knb_resize(void *priv)
{
	struct knb *k = priv;
	uint64_t nr = k->env->nr_pages;
	uint8_t *f, *ln;
	uint32_t *nx, *pv;

	if (nr <= k->nr_pages)
		return 0;
	if (nr >= KNB_NIL)
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
		tier__knb_lru_del(k, p);
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
	.description = "Linux NUMA balancing tiering mode 2 + kswapd demotion, as upstream",
	.obs_kinds = TIER_OBS_HINT_FAULT | TIER_OBS_ACCESSED,
	/* Hint faults; reclaim reads young bits itself, paying per page
	 * (above). */
	.default_tracker = "hintfault,young",
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

const struct tier_policy_ops tier_policy_tpp = {
	.name = "tpp",
	.variant_of = "kernel-nb",
	.description = "kernel-nb with TPP's patches: active-LRU promotion filter, demotion watermark",
	.obs_kinds = TIER_OBS_HINT_FAULT | TIER_OBS_ACCESSED,
	.default_tracker = "hintfault,young",
	.interval_us = 1000,
	.create = tpp_create,
	.destroy = knb_destroy,
	.observe = knb_observe,
	.tick = knb_tick,
	.resize = knb_resize,
	.forget = knb_forget,
	.metadata_bytes = knb_metadata_bytes,
};
