/* kernel_nb_promote.c - the kernel-nb peer's promotion path: what
 * do_numa_page() and should_numa_migrate_memory() (kernel/sched/fair.c,
 * memory-tiering branch) do with a NUMA hint fault on a page off the top
 * tier, step by step in kernel_nb.c's header comment: TPP's active-LRU
 * filter, pgdat_free_space_enough(), the hot threshold on the hint-fault
 * latency (numa_hint_fault_latency()) and its adjustment
 * (numa_promotion_adjust_threshold()), the rate limit
 * (numa_promotion_rate_limit()), then migrate_misplaced_folio_prepare()'s
 * watermark check (mm/migrate.c migrate_balanced_pgdat()).
 */
#include <errno.h>

#include "core/policies/kernel_nb_impl.h"

/* kernel/sched/fair.c */
#define NUMA_MIGRATION_ADJUST_STEPS 16

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

void tier__knb_hint_fault(struct knb *k, const struct tier_obs *o, uint64_t now_ms)
{
	const struct tier_env *env = k->env;
	uint64_t p = o->page;
	int node, target = k->cpu_node, status = 0;
	long moved;

	if (p >= k->nr_pages || env->page_node[p] == TIER_NODE_NONE)
		return;
	tier__knb_lru_sync(k, p);
	node = env->page_node[p];
	k->stats.hint_faults++;
	if (knb_toptier(k, node) || target < 0)
		return;
	/* TPP: promote only pages on the active LRU; others get one more
	 * step towards it. */
	if (k->cfg.tpp_active_filter && !(k->flags[p] & PG_ACTIVE)) {
		tier__knb_mark_page_accessed(k, p);
		k->stats.tpp_deferred++;
		return;
	}
	if (!should_promote(k, target, o->latency_us / 1000, now_ms))
		return;
	/* migrate_balanced_pgdat(): free above WMARK_HIGH + the page, else
	 * wake kswapd and leave the page where it is. */
	if (knb_node_free(k, target) <= k->node[target].wm.high + 1) {
		tier__knb_wakeup_kswapd(k, target);
		k->stats.promote_wmark_fail++;
		return;
	}
	/* migrate_misplaced_folio() runs in the faulting task. */
	if (env->in_task)
		*env->in_task = true;
	moved = env->migrator->move(env->migrator_priv, &p, &target, &status, 1);
	if (env->in_task)
		*env->in_task = false;
	if (moved == 1 && status == target) {
		/* folio_migrate_flags() keeps active/referenced. */
		tier__knb_lru_add(k, p, target, k->flags[p] & PG_ACTIVE);
		k->stats.promoted++;
	} else if (status == -ENOMEM) {
		tier__knb_wakeup_kswapd(k, target);
		k->stats.promote_wmark_fail++;
	}
}
