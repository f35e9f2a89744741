/* hemem.c - HeMem (Raybuck et al., "HeMem: Scalable Tiered Memory Management
 * for Big Data Applications and Real NVM", SOSP'21) re-implemented as a core
 * policy, after its PEBS policy: github.com/cuhk-mass/hemem src/pebs.c,
 * src/pebs.h, src/hemem.h (checked at commit 57fb561).
 *
 * What HeMem does, and what this file does the same way:
 *  - Memory is managed in 2 MiB pages (hemem.h PAGE_SIZE = HUGEPAGE_SIZE);
 *    here a region of 512 pages of 4 KiB (2 MiB / page size).
 *  - PEBS samples from separate perf events, each with its own
 *    sample_period of SAMPLE_PERIOD (19997) events (pebs.c perf_setup(),
 *    pebs_init()): loads served by DRAM (MEM_LOAD_L3_MISS_RETIRED.
 *    LOCAL_DRAM), loads served by NVM (MEM_LOAD_RETIRED.LOCAL_PMM) and
 *    stores (MEM_INST_RETIRED.ALL_STORES). The policy asks the sampling
 *    tracker for two streams, loads and stores, each of that period
 *    (sample_period_lines, sample_period_store_lines). The two load events
 *    are one load stream here: each fires once per 19997 loads of its own
 *    tier, which gives every page the same sample rate as one stream over
 *    all loads. Samples are counted per region in three counters by event:
 *    DRAM loads, NVM loads, stores (pebs_scan_thread(): accesses[j]++).
 *  - Hot once stores >= HOT_WRITE_THRESHOLD (4) or loads >= HOT_READ_THRESHOLD
 *    (4); the check runs on the raw counts before the lazy cooling below,
 *    and sends a hot or cold request through a ring to the policy thread.
 *  - Cooling: after the check, the sampled counter (only that one) is
 *    shifted right by the global clock's advance since the region's last
 *    sample; when it then exceeds PEBS_COOLING_THRESHOLD (10) the global
 *    clock advances and both hot lists are marked for cooling.
 *  - Policy thread (pebs_policy_thread()), here every PEBS_KSWAPD_INTERVAL
 *    (10 ms; the checked loop does not even sleep between passes): apply
 *    the hot ring (up to 1 Mi requests) and the cold ring (up
 *    to 128), then move each NVM-hot region to DRAM, up to
 *    PEBS_KSWAPD_MIGRATE_RATE (10 GB) per pass: a region whose raw counts
 *    fell below the thresholds goes to the NVM cold list instead; without a
 *    free DRAM page the oldest DRAM-cold region is demoted first; with no
 *    DRAM-cold region left the hot region goes back to the tail of its list
 *    and the pass ends (skipping cooling). Then partial cooling walks up to
 *    COOLING_PAGES (8192) entries of each hot list, moving regions whose
 *    cooled counts are below the thresholds to the cold list.
 *  - Lists are FIFO: dequeue from the head, enqueue at the tail.
 *  - New pages go to DRAM first (pebs_allocate_page()); in tiersim that is
 *    the engine's first touch, and every region starts on a cold list.
 *
 * Scaled to the simulated machine: 10 GB per pass is 10/128 of HeMem's DRAM
 * (DRAMSIZE 128 GB), so a pass here moves at most 10/128 of tier 0's
 * capacity (at least one region). HeMem has no other rate limit (it copies
 * with DMA); the loop's migration budget is not applied.
 *
 * Deviations, forced by the model:
 *  - HeMem's pages are physically 2 MiB, wholly in DRAM or NVM. tiersim
 *    places 4 KiB pages at first touch in random order, so a region may sit
 *    partly in each tier. Each region is therefore two list entries: its
 *    DRAM part and its NVM part; a promotion moves the whole NVM part, a
 *    demotion the whole DRAM part, after which regions are whole again.
 *    "A free DRAM page" becomes "room in tier 0 for the NVM part", so
 *    several cold regions may be demoted for one hot one (HeMem tries twice).
 *  - HeMem is two-tier (DRAM, NVM). With more tiers, tier 0 is DRAM and all
 *    slower tiers together are NVM: hot regions go to tier 0, demoted ones
 *    to tier 1, spilling to slower tiers when tier 1 is full.
 *  - HeMem's policy thread spins on its hot and cold rings and so meets
 *    requests about in the order they were made; a tick here sees 10 ms of
 *    them at once, so both rings are one queue in arrival order (a stale
 *    cold request must not undo a later hot one), with the same per-pass
 *    limits.
 *  - The partial-cooling cursor restarts at the list head for each cooling
 *    round instead of resuming HeMem's static cursor; with lists shorter
 *    than 8192 regions (below 16 GiB) both walk the whole list once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/policies/peers.h"
#include "core/policy.h"

#define HUGE_BYTES (UINT64_C(2) << 20)		/* hemem.h HUGEPAGE_SIZE */
/* pebs.h SAMPLE_PERIOD, the sample_period perf_setup() gives each of
 * the three events (DRAMREAD, NVMREAD, WRITE) */
#define SAMPLE_PERIOD 19997
#define HOT_READ_THRESHOLD 4			/* pebs.h */
#define HOT_WRITE_THRESHOLD 4			/* pebs.h */
#define PEBS_COOLING_THRESHOLD 10		/* pebs.h */
#define PEBS_KSWAPD_INTERVAL_US 10000		/* pebs.h: 10 ms */
#define HOT_RING_REQS_THRESHOLD (1024 * 1024)	/* pebs.h */
#define COLD_RING_REQS_THRESHOLD 128		/* pebs.h */
#define COOLING_PAGES 8192			/* pebs.h */
/* PEBS_KSWAPD_MIGRATE_RATE (10 GB) over DRAMSIZE (128 GB). */
#define MIGRATE_RATE_NUM 10
#define MIGRATE_RATE_DEN 128
#define RESYNC_US 1000000			/* recount region parts */
#define COLD_REQ UINT32_C(0x80000000)

enum { DRAMREAD, NVMREAD, WRITE, NPBUFTYPES };	/* pebs.h enum pbuftype */
enum { DOM_DRAM, DOM_NVM };			/* a region's two parts */
enum { L_NONE, L_DRAM_HOT, L_DRAM_COLD, L_NVM_HOT, L_NVM_COLD, L_NR };

struct hm_region {
	uint32_t acc[NPBUFTYPES];	/* page->accesses[] */
	uint64_t local_clock;
	uint32_t nr[2];			/* pages in DRAM / NVM */
	bool hot;
	bool ring_present;
};

struct hm_list {
	int64_t head, tail;		/* part ids, -1 = none */
	uint64_t len;
};

struct hm_ring {
	uint32_t *q;
	size_t head, len, cap;
};

struct hemem {
	const struct tier_env *env;
	int node_rank[TIER_MAX_NODES];
	int64_t node_free[TIER_MAX_NODES];
	uint64_t region_pages;
	uint64_t nr_regions;
	struct hm_region *regions;
	/* parts: id = region * 2 + domain */
	int64_t *next, *prev;
	uint8_t *list;
	struct hm_list lists[L_NR];
	/* hot_ring and cold_ring as one queue in arrival order (COLD_REQ
	 * marks a cold request): HeMem's policy thread drains its rings
	 * continuously, so it meets requests in about the order they came; a
	 * tick here sees 10 ms of them at once. */
	struct hm_ring reqs;
	uint64_t global_clock;
	bool need_cool[2];		/* need_cool_dram, need_cool_nvm */
	bool cool_active[2];
	int64_t cool_cur[2];
	uint64_t cool_left[2];
	uint64_t pass_cap_bytes;
	uint64_t last_resync_us;
	/* move batch */
	uint64_t *pages;
	int *nodes;
	int *srcs;
	int *status;
	size_t batch;
	int move_err;
};

static int hot_list(int dom)
{
	return dom == DOM_DRAM ? L_DRAM_HOT : L_NVM_HOT;
}

static int cold_list(int dom)
{
	return dom == DOM_DRAM ? L_DRAM_COLD : L_NVM_COLD;
}

/* --- FIFO lists (fifo.c: enqueue at the tail, dequeue from the head) ---- */

static void l_remove(struct hemem *h, int64_t part)
{
	uint8_t l = h->list[part];
	struct hm_list *li;
	int d;

	if (l == L_NONE)
		return;
	li = &h->lists[l];
	/* update_current_cool_page(): a cooling cursor on this entry moves on. */
	for (d = 0; d < 2; d++)
		if (h->cool_active[d] && h->cool_cur[d] == part)
			h->cool_cur[d] = h->next[part];
	if (h->prev[part] >= 0)
		h->next[h->prev[part]] = h->next[part];
	else
		li->head = h->next[part];
	if (h->next[part] >= 0)
		h->prev[h->next[part]] = h->prev[part];
	else
		li->tail = h->prev[part];
	h->next[part] = h->prev[part] = -1;
	h->list[part] = L_NONE;
	li->len--;
}

static void l_push(struct hemem *h, int l, int64_t part)
{
	struct hm_list *li = &h->lists[l];

	l_remove(h, part);
	h->prev[part] = li->tail;
	h->next[part] = -1;
	if (li->tail >= 0)
		h->next[li->tail] = part;
	else
		li->head = part;
	li->tail = part;
	h->list[part] = (uint8_t)l;
	li->len++;
}

static int64_t l_pop(struct hemem *h, int l)
{
	int64_t part = h->lists[l].head;

	if (part >= 0)
		l_remove(h, part);
	return part;
}

/* Puts a region's non-empty parts on the lists its hotness says. */
static void place_parts(struct hemem *h, uint64_t r)
{
	int d;

	for (d = 0; d < 2; d++) {
		int64_t part = (int64_t)(r * 2 + (uint64_t)d);
		int want = h->regions[r].hot ? hot_list(d) : cold_list(d);

		if (!h->regions[r].nr[d])
			l_remove(h, part);
		else if (h->list[part] != want)
			l_push(h, want, part);
	}
}

/* make_hot() / make_cold(): move between the lists of the same tier. */
static void make_hot(struct hemem *h, uint64_t r)
{
	if (h->regions[r].hot)
		return;
	h->regions[r].hot = true;
	place_parts(h, r);
}

static void make_cold(struct hemem *h, uint64_t r)
{
	if (!h->regions[r].hot)
		return;
	h->regions[r].hot = false;
	place_parts(h, r);
}

/* --- request rings (spsc-ring.c) ------------------------------------------ */

static int ring_put(struct hm_ring *q, uint32_t v)
{
	if (q->head + q->len == q->cap) {
		if (q->head) {
			memmove(q->q, q->q + q->head, q->len * sizeof(*q->q));
			q->head = 0;
		} else {
			size_t cap = q->cap ? q->cap * 2 : 1024;
			uint32_t *n = realloc(q->q, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			q->q = n;
			q->cap = cap;
		}
	}
	q->q[q->head + q->len++] = v;
	return 0;
}

static bool ring_get(struct hm_ring *q, uint32_t *v)
{
	if (!q->len)
		return false;
	*v = q->q[q->head++];
	if (!--q->len)
		q->head = 0;
	return true;
}

/* --- placement bookkeeping ------------------------------------------------ */

static void count_region(struct hemem *h, uint64_t r)
{
	const struct tier_env *env = h->env;
	uint64_t p = r * h->region_pages, end = p + h->region_pages;

	if (end > env->nr_pages)
		end = env->nr_pages;
	h->regions[r].nr[0] = h->regions[r].nr[1] = 0;
	for (; p < end; p++) {
		int rank = tier_page_rank(env, h->node_rank, p);

		if (rank >= 0)
			h->regions[r].nr[rank > 0 ? DOM_NVM : DOM_DRAM]++;
	}
	*env->work_units += end - r * h->region_pages;
}

/* Recounts every region (pages first touched since, pages freed) and keeps
 * the lists in step: HeMem learns of new pages at their page fault. */
static void resync(struct hemem *h)
{
	uint64_t r;

	for (r = 0; r < h->nr_regions; r++) {
		count_region(h, r);
		place_parts(h, r);
	}
}

static void refresh_free(struct hemem *h)
{
	tier_node_free_pages(h->env, h->node_free);
}

static int64_t tier_free(const struct hemem *h, int rank)
{
	const struct tier_tier *t = &h->env->topo->tiers[rank];
	int64_t sum = 0;
	size_t i;

	for (i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i] >= 0 && t->nodes[i] < TIER_MAX_NODES && h->node_free[t->nodes[i]] > 0)
			sum += h->node_free[t->nodes[i]];
	return sum;
}

/* The node with the most room in tier `rank`, or (allow_lower) the first
 * slower tier with room; -1 when none. */
static int room_node(const struct hemem *h, int rank, bool allow_lower)
{
	const struct tier_topology *topo = h->env->topo;

	for (; rank >= 0 && (size_t)rank < topo->nr_tiers; rank++) {
		const struct tier_tier *t = &topo->tiers[rank];
		int best = -1;
		size_t i;

		for (i = 0; i < t->nr_nodes; i++) {
			int n = t->nodes[i];

			if (n < 0 || n >= TIER_MAX_NODES || h->node_free[n] <= 0)
				continue;
			if (best < 0 || h->node_free[n] > h->node_free[best])
				best = n;
		}
		if (best >= 0 || !allow_lower)
			return best;
	}
	return -1;
}

static uint64_t flush_moves(struct hemem *h, size_t n)
{
	long ret;
	uint64_t moved = 0;
	size_t i;

	ret = h->env->migrator->move(h->env->migrator_priv, h->pages, h->nodes, h->status, n);
	if (ret < 0) {
		if (ret != -EBUSY)
			h->move_err = (int)ret;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (h->status[i] == h->nodes[i]) {
			h->node_free[h->srcs[i]]++;
			moved++;
			continue;
		}
		/* Not moved: give the reserved room back; a full node is full. */
		if (h->status[i] == -ENOMEM)
			h->node_free[h->nodes[i]] = 0;
		else
			h->node_free[h->nodes[i]]++;
	}
	*h->env->work_units += n;
	return moved;
}

/* Moves region r's part `dom` out of its domain: the NVM part to tier 0,
 * the DRAM part to tier 1 (or slower). Returns the pages moved. */
static uint64_t move_part(struct hemem *h, uint64_t r, int dom)
{
	const struct tier_env *env = h->env;
	uint64_t p = r * h->region_pages, end = p + h->region_pages, moved = 0;
	size_t n = 0;

	if (end > env->nr_pages)
		end = env->nr_pages;
	for (; p < end; p++) {
		int rank = tier_page_rank(env, h->node_rank, p), node;

		if (rank < 0 || (rank > 0) != (dom == DOM_NVM))
			continue;
		node = dom == DOM_NVM ? room_node(h, 0, false) : room_node(h, 1, true);
		if (node < 0)
			break;
		h->node_free[node]--;
		h->pages[n] = p;
		h->nodes[n] = node;
		h->srcs[n] = env->page_node[p];
		if (++n == h->batch) {
			moved += flush_moves(h, n);
			n = 0;
		}
	}
	if (n)
		moved += flush_moves(h, n);
	count_region(h, r);
	return moved;
}

static bool below_thresholds(const uint32_t acc[NPBUFTYPES])
{
	return acc[WRITE] < HOT_WRITE_THRESHOLD &&
	       acc[DRAMREAD] + acc[NVMREAD] < HOT_READ_THRESHOLD;
}

static uint32_t cooled(const struct hemem *h, const struct hm_region *rg, int j)
{
	uint64_t shift = h->global_clock - rg->local_clock;

	return shift >= 32 ? 0 : rg->acc[j] >> shift;
}

/* partial_cool_peek_and_move() for the hot list of one domain. */
static void partial_cool(struct hemem *h, int dom)
{
	int l = hot_list(dom);
	int i;

	if (!h->need_cool[dom])
		return;
	if (!h->cool_active[dom]) {
		h->cool_active[dom] = true;
		h->cool_cur[dom] = h->lists[l].head;
		h->cool_left[dom] = h->lists[l].len;
	}
	for (i = 0; i < COOLING_PAGES && h->cool_left[dom] && h->cool_cur[dom] >= 0; i++) {
		int64_t part = h->cool_cur[dom];
		struct hm_region *rg = &h->regions[part / 2];
		uint32_t tmp[NPBUFTYPES];
		int j;

		h->cool_cur[dom] = h->next[part];
		h->cool_left[dom]--;
		for (j = 0; j < NPBUFTYPES; j++)
			tmp[j] = cooled(h, rg, j);
		if (below_thresholds(tmp))
			make_cold(h, (uint64_t)part / 2);
	}
	*h->env->work_units += (uint64_t)i;
	if (!h->cool_left[dom] || h->cool_cur[dom] < 0) {
		h->need_cool[dom] = false;
		h->cool_active[dom] = false;
	}
}

/* --- the policy ops -------------------------------------------------------- */

static void hemem_destroy(void *priv)
{
	struct hemem *h = priv;

	if (!h)
		return;
	free(h->regions);
	free(h->next);
	free(h->prev);
	free(h->list);
	free(h->reqs.q);
	free(h->pages);
	free(h->nodes);
	free(h->srcs);
	free(h->status);
	free(h);
}

static int hemem_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	struct hemem *h = calloc(1, sizeof(*h));
	uint64_t total0 = 0, free0, r, nparts;
	int l;

	if (!h)
		return tier_err_set(err, -ENOMEM, "out of memory");
	h->env = env;
	if (!env->topo->nr_tiers) {
		free(h);
		return tier_err_set(err, -EINVAL, "hemem: no memory tiers");
	}
	tier_node_rank_map(env->topo, h->node_rank);
	h->region_pages = env->page_shift < 21 ? HUGE_BYTES >> env->page_shift : 1;
	h->nr_regions = (env->nr_pages + h->region_pages - 1) / h->region_pages;
	nparts = h->nr_regions * 2;
	h->batch = env->max_batch ? env->max_batch : 1024;
	h->regions = calloc(h->nr_regions ? h->nr_regions : 1, sizeof(*h->regions));
	h->next = malloc((nparts ? nparts : 1) * sizeof(*h->next));
	h->prev = malloc((nparts ? nparts : 1) * sizeof(*h->prev));
	h->list = calloc(nparts ? nparts : 1, 1);
	h->pages = calloc(h->batch, sizeof(*h->pages));
	h->nodes = calloc(h->batch, sizeof(*h->nodes));
	h->srcs = calloc(h->batch, sizeof(*h->srcs));
	h->status = calloc(h->batch, sizeof(*h->status));
	if (!h->regions || !h->next || !h->prev || !h->list || !h->pages || !h->nodes ||
	    !h->srcs || !h->status) {
		hemem_destroy(h);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	for (r = 0; r < nparts; r++)
		h->next[r] = h->prev[r] = -1;
	for (l = 0; l < L_NR; l++)
		h->lists[l].head = h->lists[l].tail = -1;
	/* 10 GB of 128 GB per pass, scaled to tier 0; at least one region. */
	tier_tier_pages(env, 0, &total0, &free0);
	h->pass_cap_bytes = (total0 << env->page_shift) / MIGRATE_RATE_DEN * MIGRATE_RATE_NUM;
	if (h->pass_cap_bytes < h->region_pages << env->page_shift)
		h->pass_cap_bytes = h->region_pages << env->page_shift;
	h->last_resync_us = env->clock->now_us(env->clock_priv);
	/* Every region starts cold (pebs_allocate_page() enqueues on the
	 * cold list of the tier it allocated from). */
	resync(h);
	*priv = h;
	return 0;
}

static void hemem_observe(void *priv, const struct tier_obs *obs, size_t n)
{
	struct hemem *h = priv;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tier_obs *o = &obs[i];
		struct hm_region *rg;
		int rank, j;

		if (o->kind != TIER_OBS_SAMPLE || o->page >= h->env->nr_pages)
			continue;
		rank = tier_page_rank(h->env, h->node_rank, o->page);
		if (rank < 0)
			continue;	/* page->va == 0: not a HeMem page */
		rg = &h->regions[o->page / h->region_pages];
		j = o->write ? WRITE : rank == 0 ? DRAMREAD : NVMREAD;
		rg->acc[j]++;
		/* pebs_scan_thread(): the hot check on the raw counts. */
		if (rg->acc[WRITE] >= HOT_WRITE_THRESHOLD ||
		    rg->acc[DRAMREAD] + rg->acc[NVMREAD] >= HOT_READ_THRESHOLD) {
			if (!rg->hot || !rg->ring_present) {
				rg->ring_present = true;
				if (ring_put(&h->reqs, (uint32_t)(o->page / h->region_pages)))
					rg->ring_present = false;
			}
		} else if (rg->hot || !rg->ring_present) {
			rg->ring_present = true;
			if (ring_put(&h->reqs, (uint32_t)(o->page / h->region_pages) | COLD_REQ))
				rg->ring_present = false;
		}
		/* Lazy cooling of the sampled counter only, then the clock. */
		rg->acc[j] = cooled(h, rg, j);
		rg->local_clock = h->global_clock;
		if (rg->acc[j] > PEBS_COOLING_THRESHOLD) {
			h->global_clock++;
			h->need_cool[DOM_DRAM] = h->need_cool[DOM_NVM] = true;
		}
	}
	*h->env->work_units += n;
}

static int hemem_tick(void *priv, uint64_t now_us)
{
	struct hemem *h = priv;
	const struct tier_env *env = h->env;
	uint64_t migrated = 0, page_bytes = UINT64_C(1) << env->page_shift;
	uint32_t r;
	int k, cold;

	h->move_err = 0;
	if (now_us - h->last_resync_us >= RESYNC_US) {
		resync(h);
		h->last_resync_us = now_us;
	}
	/* Up to HOT_RING_REQS_THRESHOLD hot and COLD_RING_REQS_THRESHOLD cold
	 * requests per pass; the rest wait for the next pass. */
	for (k = 0, cold = 0; k < HOT_RING_REQS_THRESHOLD && cold < COLD_RING_REQS_THRESHOLD &&
			      ring_get(&h->reqs, &r); k++) {
		bool is_cold = r & COLD_REQ;

		r &= ~COLD_REQ;
		h->regions[r].ring_present = false;
		if (is_cold) {
			make_cold(h, r);
			cold++;
		} else {
			make_hot(h, r);
		}
	}
	refresh_free(h);

	/* Move each hot NVM region to DRAM. */
	while (migrated < h->pass_cap_bytes) {
		int64_t part = l_pop(h, L_NVM_HOT);
		struct hm_region *rg;
		uint64_t reg;

		if (part < 0)
			break;	/* nothing in NVM is currently hot */
		reg = (uint64_t)part / 2;
		rg = &h->regions[reg];
		*env->work_units += 1;
		if (below_thresholds(rg->acc)) {
			/* It has been cooled: to the cold list. */
			rg->hot = false;
			place_parts(h, reg);
			continue;
		}
		for (;;) {
			int64_t cp;
			uint64_t need = rg->nr[DOM_NVM];

			if (!need) {
				place_parts(h, reg);
				break;
			}
			if (tier_free(h, 0) >= (int64_t)need) {
				migrated += move_part(h, reg, DOM_NVM) * page_bytes;
				/* enqueue_fifo(&dram_hot_list, p); a part that could
				 * not move stays hot in NVM. */
				if (rg->nr[DOM_DRAM])
					l_push(h, L_DRAM_HOT, (int64_t)(reg * 2 + DOM_DRAM));
				if (rg->nr[DOM_NVM]) {
					l_push(h, L_NVM_HOT, part);
					goto out;
				}
				break;
			}
			/* No free DRAM: demote the oldest cold DRAM region. */
			cp = l_pop(h, L_DRAM_COLD);
			if (cp < 0) {
				/* All DRAM is hot: back to the list, end the pass. */
				l_push(h, L_NVM_HOT, part);
				goto out;
			}
			if (!move_part(h, (uint64_t)cp / 2, DOM_DRAM)) {
				/* NVM is full (HeMem asserts here). */
				place_parts(h, (uint64_t)cp / 2);
				l_push(h, L_NVM_HOT, part);
				goto out;
			}
			/* enqueue_fifo(&nvm_cold_list, cp) */
			if (h->regions[cp / 2].nr[DOM_NVM])
				l_push(h, L_NVM_COLD, cp + 1);
			place_parts(h, (uint64_t)cp / 2);
		}
	}
	partial_cool(h, DOM_DRAM);
	partial_cool(h, DOM_NVM);
out:
	return h->move_err;
}

static size_t hemem_metadata_bytes(void *priv)
{
	const struct hemem *h = priv;

	return sizeof(*h) + h->nr_regions * (sizeof(*h->regions) + 2 * (2 * sizeof(int64_t) + 1)) +
	       h->reqs.cap * sizeof(uint32_t);
}

/* --- test hooks (peers.h) -------------------------------------------------- */

uint32_t tier__hemem_count(const void *priv, uint64_t region, enum tier_hemem_count which)
{
	const struct hemem *h = priv;
	const struct hm_region *rg;

	if (region >= h->nr_regions)
		return 0;
	rg = &h->regions[region];
	if (which == TIER_HEMEM_WRITES)
		return cooled(h, rg, WRITE);
	return cooled(h, rg, DRAMREAD) + cooled(h, rg, NVMREAD);
}

bool tier__hemem_is_hot(const void *priv, uint64_t region)
{
	const struct hemem *h = priv;

	return region < h->nr_regions && h->regions[region].hot;
}

uint64_t tier__hemem_clock(const void *priv)
{
	return ((const struct hemem *)priv)->global_clock;
}

const struct tier_policy_ops tier_policy_hemem = {
	.name = "hemem",
	.description = "HeMem (SOSP'21): sampled counts per 2 MiB, hot at 4 samples, cooling halves counts, FIFO hot/cold lists",
	.obs_kinds = TIER_OBS_SAMPLE,
	.default_tracker = "samples",
	.interval_us = PEBS_KSWAPD_INTERVAL_US,
	/* Loads and stores, each its own event and period (pebs_init()). */
	.sample_period_lines = SAMPLE_PERIOD,
	.sample_period_store_lines = SAMPLE_PERIOD,
	.create = hemem_create,
	.destroy = hemem_destroy,
	.observe = hemem_observe,
	.tick = hemem_tick,
	.metadata_bytes = hemem_metadata_bytes,
};
