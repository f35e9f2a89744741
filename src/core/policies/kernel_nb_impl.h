/* kernel_nb_impl.h - the kernel-nb peer's state and the contracts between
 * its modules (what the policy is and where its sources are: kernel_nb.c):
 *   kernel_nb.c          the knobs' defaults, the state's life, the
 *                        observations, the ops table
 *   kernel_nb_lru.c      the per-page LRU state struct page holds: the
 *                        active/inactive lists, PG_referenced, young bits
 *   kernel_nb_promote.c  the hint-fault path: TPP's filter, the hot
 *                        threshold and its adjustment, the rate limit, the
 *                        watermark check before a promotion
 *   kernel_nb_demote.c   kswapd: LRU aging and demotion to lower tiers
 * Not for use outside src/core/policies/kernel_nb*.c and their unit test
 * (tests/unit/test_peer_kernel_nb.c, which pins the knobs' defaults).
 */
#ifndef TIER_CORE_POLICIES_KERNEL_NB_IMPL_H
#define TIER_CORE_POLICIES_KERNEL_NB_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/policies/linux_mm.h"
#include "core/policy.h"

/* End of an LRU list (next/prev of the first and last page). */
#define KNB_NIL UINT32_MAX
/* include/linux/swap.h: reclaim batch. */
#define SWAP_CLUSTER_MAX 32

enum {
	PG_ACTIVE = 1,		/* on the active list */
	PG_REFERENCED = 2,	/* PG_referenced */
	PG_YOUNG = 4,		/* a PTE young bit set since reclaim last looked */
	PG_ONLRU = 8,
};

/* The knobs, with the kernel's defaults (the values: knb_defaults in
 * kernel_nb.c). */
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
	 * node). On a machine with a slower CPU (env->cpu_slowdown) the
	 * state's copy holds this times the slowdown. */
	uint32_t kswapd_page_ns;
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
	int node_rank[TIER_MAX_NODES];
	int cpu_node;
	int top_rank;			/* ranks <= this are "toptier" */
	uint8_t *flags;
	uint8_t *lru_node;
	uint32_t *next, *prev;
	uint64_t *batch;
	int *batch_nodes;
	int *batch_status;
	size_t batch_cap;
	struct knb_node node[TIER_MAX_NODES];
	struct knb_stats stats;
};

/* Free pages of node (0 when the backend cannot tell). */
static inline uint64_t knb_node_free(const struct knb *k, int node)
{
	uint64_t total, free;

	tier__lmm_node_pages(k->env, node, &total, &free);
	return free;
}

/* folio_referenced() as reclaim calls it on a page it looks at: whether
 * a PTE maps p young, clearing it. The bit is read from the page table
 * through env->mem's test_and_clear_young where the backend has one (the
 * simulator: charged per page looked at, as kswapd pays), and from the
 * young bits an accessed-bit tracker delivered (PG_YOUNG) otherwise or
 * as well. */
static inline bool knb_test_clear_young(struct knb *k, uint64_t p)
{
	const struct tier_env *env = k->env;
	bool young = k->flags[p] & PG_YOUNG;

	k->flags[p] &= (uint8_t)~PG_YOUNG;
	if (env->mem->test_and_clear_young &&
	    env->mem->test_and_clear_young(env->mem_priv, p) > 0)
		young = true;
	return young;
}

/* Whether node is in the top tier (node_is_toptier()). */
static inline bool knb_toptier(const struct knb *k, int node)
{
	return k->node_rank[node] >= 0 && k->node_rank[node] <= k->top_rank;
}

/* --- kernel_nb_lru.c: the LRU lists --------------------------------------- */

/* Takes page p off its list (nothing when it is on none). */
void tier__knb_lru_del(struct knb *k, uint64_t p);
/* Puts p at the head of node's active or inactive list. */
void tier__knb_lru_add(struct knb *k, uint64_t p, int node, bool active);
/* Follows the backend's page_node: a page that appeared, moved or went. */
void tier__knb_lru_sync(struct knb *k, uint64_t p);
/* mm/swap.c folio_mark_accessed(): inactive,unreferenced -> referenced;
 * inactive,referenced -> active (and PG_referenced cleared). */
void tier__knb_mark_page_accessed(struct knb *k, uint64_t p);

/* --- kernel_nb_promote.c: the hint-fault path ----------------------------- */

/* One NUMA hint fault o at now_ms (do_numa_page()): promotes its page to
 * the CPU's node if TPP's filter, the hot threshold, the rate limit and
 * the watermarks let it, waking kswapd when the node is short of memory. */
void tier__knb_hint_fault(struct knb *k, const struct tier_obs *o, uint64_t now_ms);

/* --- kernel_nb_demote.c: kswapd ------------------------------------------- */

/* wakeup_kswapd(): only when the node is not balanced; kswapd then runs
 * at once (it has a CPU of its own). */
void tier__knb_wakeup_kswapd(struct knb *k, int node);
/* A new tick of kswapd's CPU: one look at each LRU page, and the
 * demotions it has time for. */
void tier__knb_kswapd_refill(const struct knb *k, struct knb_node *n);
/* One tick of every node's kswapd, faster tiers first. */
void tier__knb_kswapd_tick(struct knb *k);

#endif
