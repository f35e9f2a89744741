/* kernel_nb_demote.c - the kernel-nb peer's kswapd: LRU aging and
 * demotion to the lower tiers.
 *
 * Sources (Linux 6.12): mm/vmscan.c balance_pgdat()/pgdat_balanced()
 * (WMARK_PROMO in tiering mode), shrink_active_list(),
 * shrink_folio_list()/folio_check_references(), demote_folio_list()/
 * alloc_demote_folio(), inactive_is_low(); the watermarks come from
 * linux_mm.h. kswapd is a thread per node: woken by a failed promotion or
 * by its node under the low watermark, it ages the LRU and demotes
 * unreferenced inactive pages until free > its balance mark, within what
 * one tick of its CPU allows.
 */
#include "core/policies/kernel_nb_impl.h"

/* mm/internal.h */
#define MAX_RECLAIM_RETRIES 16

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

	while (nr-- && l->tail != KNB_NIL) {
		uint64_t p = l->tail;

		scanned++;
		if (k->env->page_node[p] != node) {
			tier__knb_lru_sync(k, p);
			continue;
		}
		knb_test_clear_young(k, p);
		tier__knb_lru_add(k, p, node, false);
	}
	return scanned;
}

/* Picks where a demoted page goes: the preferred target above its min
 * watermark (alloc_demote_folio(), __GFP_THISNODE first), else any node
 * of a slower tier above its min (the allowed demotion targets). room[]
 * holds free-page estimates. */
static int demote_dest(const struct knb *k, int node, int64_t room[TIER_MAX_NODES])
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

/* shrink_folio_list()'s first pass over up to nr pages from the inactive
 * tail: young pages get a second chance (PG_referenced, then activation),
 * the others are isolated into k->batch. Returns how many were isolated;
 * *scanned counts the pages looked at. */
static size_t isolate_inactive(struct knb *k, int node, unsigned nr, uint64_t *scanned)
{
	const struct tier_env *env = k->env;
	struct knb_list *l = &k->node[node].lru[0];
	size_t n = 0;

	while (nr-- && l->tail != KNB_NIL && n < k->batch_cap) {
		uint64_t p = l->tail;
		uint8_t f;
		bool young;

		(*scanned)++;
		if (env->page_node[p] != node) {
			tier__knb_lru_sync(k, p);
			continue;
		}
		young = knb_test_clear_young(k, p);
		f = k->flags[p];
		k->flags[p] = (uint8_t)(f & ~PG_REFERENCED);
		if (young) {
			/* folio_check_references(): referenced PTEs set
			 * PG_referenced; referenced before too -> activate,
			 * else keep for another trip. */
			k->flags[p] |= PG_REFERENCED;
			tier__knb_lru_add(k, p, node, f & PG_REFERENCED);
			continue;
		}
		tier__knb_lru_del(k, p);	/* isolated for demotion */
		k->batch[n++] = p;
	}
	return n;
}

/* Fills k->batch_nodes[i] with the destination of each of the n isolated
 * pages (-1: none), counting each page against its target's free pages. */
static void pick_demote_dests(struct knb *k, int node, size_t n)
{
	const struct tier_topology *topo = k->env->topo;
	int64_t room[TIER_MAX_NODES];
	size_t i;

	for (i = 0; i < topo->nr_nodes; i++) {
		int id = topo->nodes[i].id;

		if (id >= 0 && id < TIER_MAX_NODES)
			room[id] = (int64_t)knb_node_free(k, id);
	}
	for (i = 0; i < n; i++) {
		int t = demote_dest(k, node, room);

		k->batch_nodes[i] = t;
		if (t >= 0)
			room[t]--;
	}
}

/* Pages with nowhere to go are not sent: with no swap they go back to the
 * active list (activate_locked). Compacts the batch to the others and
 * returns how many remain. */
static size_t drop_stranded(struct knb *k, int node, size_t n)
{
	size_t m = 0, i;

	for (i = 0; i < n; i++) {
		uint64_t p = k->batch[i];
		int t = k->batch_nodes[i];

		if (t < 0) {
			/* No swap: activate_locked. */
			tier__knb_lru_add(k, p, node, true);
			k->stats.demote_fail++;
			continue;
		}
		k->batch[m] = p;
		k->batch_nodes[m] = t;
		m++;
	}
	return m;
}

/* demote_folio_list(): the n batched pages go in one call (migrate_pages()
 * batches the TLB flush); a demoted page joins its new node's inactive
 * list, one that stayed goes back to the active list. *demoted counts the
 * successes. */
static void demote_batch(struct knb *k, int node, size_t n, uint64_t *demoted)
{
	const struct tier_env *env = k->env;
	long moved;
	size_t i;

	moved = env->migrator->move(env->migrator_priv, k->batch, k->batch_nodes,
				    k->batch_status, n);
	for (i = 0; i < n; i++) {
		uint64_t p = k->batch[i];
		int st = moved < 0 ? (int)moved : k->batch_status[i];

		if (st >= 0 && st == k->batch_nodes[i]) {
			tier__knb_lru_add(k, p, st, false);
			(*demoted)++;
			k->stats.demoted++;
		} else {
			tier__knb_lru_sync(k, p);
			if (env->page_node[p] == node)
				tier__knb_lru_add(k, p, node, true);
			k->stats.demote_fail++;
		}
	}
	/* GFP_NOWAIT allocations wake the target's kswapd below its low
	 * watermark: demotion cascades down the tiers. */
	for (i = 0; i < n; i++) {
		int t = k->batch_nodes[i];

		if (knb_node_free(k, t) < k->node[t].wm.low)
			k->node[t].kswapd_woken = true;	/* runs in its tick */
	}
}

/* shrink_inactive_list() + shrink_folio_list() on up to nr pages from the
 * tail: young pages get a second chance (PG_referenced, then activation),
 * the others are demoted in one batch. Returns pages scanned; *demoted
 * counts successful demotions. */
static uint64_t shrink_inactive(struct knb *k, int node, unsigned nr, uint64_t *demoted)
{
	uint64_t scanned = 0;
	size_t n;

	n = isolate_inactive(k, node, nr, &scanned);
	if (!n)
		return scanned;
	pick_demote_dests(k, node, n);
	n = drop_stranded(k, node, n);
	if (!n)
		return scanned;
	demote_batch(k, node, n, demoted);
	return scanned;
}

/* balance_pgdat(): reclaim until the node is balanced (free above its
 * balance mark). kswapd is a thread of its own: it runs as soon as it is
 * woken, within what one tick of its CPU allows (kswapd_demote_left).
 * Accessed bits only arrive between ticks, so within a tick it looks at
 * each LRU page at most once (kswapd_scan_left). An unbalanced node keeps
 * kswapd awake into the next tick, until MAX_RECLAIM_RETRIES ticks in a row
 * demoted nothing (see tier__knb_kswapd_tick()). */
static void kswapd_balance(struct knb *k, int node)
{
	struct knb_node *n = &k->node[node];
	uint64_t scanned = 0, demoted = 0;

	while (knb_node_free(k, node) <= n->balance_mark && n->kswapd_demote_left &&
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
	if (knb_node_free(k, node) > n->balance_mark)
		n->kswapd_woken = false;
}

void tier__knb_wakeup_kswapd(struct knb *k, int node)
{
	struct knb_node *n = &k->node[node];

	if (knb_node_free(k, node) > n->balance_mark || n->demote_to < 0)
		return;
	n->kswapd_woken = true;
	kswapd_balance(k, node);
}

void tier__knb_kswapd_refill(const struct knb *k, struct knb_node *n)
{
	uint64_t d = k->env->interval_us * 1000 / k->cfg.kswapd_page_ns;

	n->kswapd_scan_left = n->lru[0].nr + n->lru[1].nr;
	n->kswapd_demote_left = d ? d : 1;
}

/* One node's kswapd in a tick: woken under its wake mark, it balances the
 * node; kswapd_failures counts the ticks it could not. */
static void kswapd_node_tick(struct knb *k, int node)
{
	struct knb_node *n = &k->node[node];

	tier__knb_kswapd_refill(k, n);
	/* The allocator wakes kswapd under the low watermark (the
	 * simulator's first touch fills nodes without the allocator's
	 * watermarks: this catches up). */
	if (knb_node_free(k, node) < n->wake_mark)
		n->kswapd_woken = true;
	if (!n->kswapd_woken)
		return;
	if (n->demote_to < 0) {
		/* Slowest tier, no swap: nothing to reclaim. */
		n->kswapd_woken = false;
		return;
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

void tier__knb_kswapd_tick(struct knb *k)
{
	const struct tier_topology *topo = k->env->topo;
	size_t r, i;

	/* Faster tiers first: their demotions may wake the next tier's
	 * kswapd in the same tick. */
	for (r = 0; r < topo->nr_tiers; r++)
		for (i = 0; i < topo->tiers[r].nr_nodes; i++) {
			int node = topo->tiers[r].nodes[i];

			if (node < 0 || node >= TIER_MAX_NODES || !k->node[node].present)
				continue;
			kswapd_node_tick(k, node);
		}
}
