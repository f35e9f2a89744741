/* engine.c - tiersim's engine: the machine model, the simulated trackers,
 * migrator, memory and clock ops, the oracle, and the run loop.
 * See engine.h for the model.
 */
#include "backend/sim/engine.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/rng.h"
#include "backend/sim/workload.h"
#include "core/loop.h"
#include "core/policy.h"

/* --- Costs (nanoseconds) and model constants, with their sources. ------- */

/* One simulated access = this many cache-line misses, with as many in
 * flight: an access advances application time by one loaded latency. */
#define LINES_PER_ACCESS 8
#define LINE_BYTES 64
#define PAGE_SHIFT 12
#define PAGE_BYTES (1u << PAGE_SHIFT)
/* Migration of a 4 KiB page: ~1-2 us of CPU (kernel migrate_pages);
 * TLB shootdown ~4 us, once per batch in current kernels' batched
 * migration, stalling the application. */
#define MIGRATE_PAGE_CPU_NS 1500.0
/* THP: a 2 MiB unit of 512 pages (x86-64 PMD). Its migration copies 2 MiB
 * and costs 512 pages' mover CPU; one TLB shootdown per batch as above. */
#define THP_SHIFT 9
#define THP_PAGES (1u << THP_SHIFT)
#define TLB_SHOOTDOWN_NS 4000.0
/* Splitting a THP in place (split_huge_page: freeze, remap 512 PTEs):
 * ~30 us of the splitting thread, plus a TLB shootdown stalling the
 * application. */
#define SPLIT_CPU_NS 30000.0
/* What the huge mapping saves. With THP the second-level TLB (1536
 * entries, x86 since Skylake, shared by 4 KiB and 2 MiB translations)
 * reaches 3 GiB, taken here as every huge translation hitting. A split
 * unit's pages are 4 KiB translations: they go through a 1536-entry TLB
 * (direct-mapped here; the real one is 12-way, so conflicts are
 * overstated a little) and a miss walks the page table: 20-40 cycles when
 * the page-walk and data caches hold the entries, a memory access (~100
 * ns) when they do not (Basu et al., ISCA 2013; Bhattacharjee, MICRO
 * 2013); 30 ns is taken. 4 KiB runs leave the TLB out: there it costs every
 * policy the same. */
#define TLB_ENTRIES 1536
#define PAGE_WALK_NS 30.0
/* NUMA hint fault ~1.5 us in the faulting task; change_prot_numa() ~10 ns
 * per page scanned, also in task context. */
#define HINT_FAULT_NS 1500.0
#define HINT_SCAN_PAGE_NS 10.0
/* Accessed-bit scan through pagemap + idle bitmap: ~50 ns per page. */
#define IDLE_SCAN_PAGE_NS 50.0
/* Soft-dirty: clear_refs ~20 ns per page; the first write after a clear
 * takes a write-protect fault, ~1 us. */
#define SOFTDIRTY_CLEAR_PAGE_NS 20.0
#define SOFTDIRTY_FAULT_NS 1000.0
/* DAMON: one page-table check and mkold per region per sample, ~100 ns. */
#define DAMON_CHECK_NS 100.0
/* Sampled accesses: the PMU's assist plus reading the sample, ~200 ns of
 * the collecting thread; by default one sample per 20000 misses
 * (HeMem-like period), or the period the policy asks for. */
#define SAMPLE_NS 200.0
#define SAMPLE_PERIOD_LINES 20000
/* A policy's own work: ~5 ns per page or observation it visits. */
#define WORK_UNIT_NS 5.0
/* The loaded-latency curve's knee and cap. */
#define QUEUE_GAIN 0.5
#define UTIL_CAP 0.95

#define QUANTUM_NS 1000000.0		/* latency model update: 1 ms */
#define EPOCH_NS 100000000.0		/* timeline row and oracle epoch: 100 ms */
#define PINGPONG_WINDOW_MS 2000
#define BATCH 1024

/* DAMON defaults (Documentation/admin-guide/mm/damon/usage.rst). */
#define DAMON_SAMPLE_NS 5000000.0
#define DAMON_AGGR_NS 100000000.0
#define DAMON_MIN_REGIONS 10
#define DAMON_MAX_REGIONS 1000

/* Kernel NUMA balancing defaults (debugfs sched/numa_balancing). */
#define HINT_SCAN_PERIOD_NS 1000000000.0		/* scan_period_min_ms 1000 */
#define HINT_SCAN_PERIOD_MAX_NS 60000000000.0	/* scan_period_max_ms 60000 */
#define HINT_SCAN_PAGES (256u << (20 - PAGE_SHIFT))	/* scan_size_mb 256 */
#define HINT_CHUNK_SHIFT 9				/* unmap time per 2 MiB */

enum {
	F_ACCESSED = 1,
	F_DIRTY = 2,
	F_PROTNONE = 4,
};

enum {
	TRK_DAMON = 1,
	TRK_IDLE = 2,
	TRK_SOFTDIRTY = 4,
	TRK_SAMPLES = 8,
	TRK_HINT = 16,
};

const char *const tier_sim_trackers[] = {
	"damon", "idle", "softdirty", "samples", "hintfault", NULL,
};

struct damon_region {
	uint64_t start, end;
	uint64_t sample;
	uint32_t nr_accesses;
	uint32_t last_nr_accesses;
	uint32_t age;
};

struct tier_sim {
	struct tier_sim_machine machine;
	struct tier_topology topo;
	int node_rank[256];
	size_t nr_nodes;		/* nodes are ids 0..nr_nodes-1 */
	size_t nr_tiers;
	uint64_t cap_pages[TIER_SIM_MAX_NODES];
	uint64_t used_pages[TIER_SIM_MAX_NODES];
	double idle_ns[TIER_SIM_MAX_NODES];
	double lat_ns[TIER_SIM_MAX_NODES];
	double rd_bw[TIER_SIM_MAX_NODES];	/* bytes per ns */
	double wr_bw[TIER_SIM_MAX_NODES];
	double q_rd[TIER_SIM_MAX_NODES];	/* bytes this quantum */
	double q_wr[TIER_SIM_MAX_NODES];
	uint64_t acc_node[TIER_SIM_MAX_NODES];
	uint64_t wr_node[TIER_SIM_MAX_NODES];
	int fast_node;			/* a node of tier 0: antagonist's */
	int alloc_order[TIER_SIM_MAX_NODES];

	uint64_t nr_pages;
	uint8_t *page_node;
	uint8_t *page_owner;
	uint8_t *flags;			/* THP: a huge unit's on its first page */
	bool thp;
	uint8_t *huge;			/* THP: [units] 1 while one huge page */
	uint64_t *tlb;			/* THP: [TLB_ENTRIES] page + 1 of 4 KiB entries */
	uint64_t tlb_misses;
	uint64_t splits;
	uint32_t move_gen;		/* THP: sim_move call, for the statuses */
	uint32_t *unit_gen;		/* [units] call that last decided a unit */
	int *unit_status;		/* [units] its status in that call */
	uint32_t *last_move_ms;
	uint8_t *prev_rank;

	double app_ns;
	double q_start_ns;
	double policy_cpu_ns;
	uint64_t work_units;
	uint64_t accesses, writes;
	struct tier_rng rng;

	unsigned trackers;
	char tracker_names[64];
	struct tier_obs *obs;
	size_t nr_obs, cap_obs;
	/* damon */
	struct damon_region *regions;
	size_t nr_regions;
	double next_damon_sample, next_damon_aggr;
	/* samples */
	uint64_t sample_countdown;
	uint64_t sample_period;		/* simulated accesses per sample */
	/* hint faults */
	double next_hint_scan;
	double hint_period_ns;
	uint64_t hint_pos;
	double *chunk_unmap_ns;

	/* policy */
	const struct tier_policy_ops *pol;
	void *pol_priv;
	struct tier_env env;
	bool oracle;
	double *weights, *prev_weights;
	double oracle_wfrac;		/* store share the last placement assumed */
	uint64_t *order;

	/* workload */
	const struct tier_sim_workload_ops *wl;
	void *wl_priv;
	uint64_t antagonist_bps;

	/* results */
	uint64_t moved[TIER_SIM_MAX_TIERS][TIER_SIM_MAX_TIERS];
	uint64_t pingpong;
	uint64_t fast_accesses;
	size_t nr_tenants;
	uint64_t tenant_acc[TIER_SIM_MAX_TENANTS];
	double tenant_ns[TIER_SIM_MAX_TENANTS];
	uint64_t tenant_peak[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];
	struct tier_groups groups;
	/* run state */
	struct tier_sim_params p;
	double duration_ns;
	double next_quantum, next_epoch, next_progress;
	uint64_t last_acc[TIER_SIM_MAX_NODES], last_wr[TIER_SIM_MAX_NODES];
	struct tier_sim_access *buf;
	bool ended;
	bool oracle_ready;
	/* timeline */
	double ep_start_ns;
	uint64_t ep_acc, ep_fast;
	double ep_app_ns;
	uint64_t ep_promoted, ep_demoted;
};

/* --- memory model -------------------------------------------------------- */

static double loaded_latency(double idle, double util)
{
	double r = util < UTIL_CAP ? util : UTIL_CAP;

	return idle * (1.0 + QUEUE_GAIN * r / (1.0 - r));
}

static void end_quantum(struct tier_sim *s, double span_ns)
{
	size_t n;

	if (span_ns <= 0)
		return;
	/* The antagonist streams reads on the fast tier. */
	if (s->fast_node >= 0)
		s->q_rd[s->fast_node] += (double)s->antagonist_bps * span_ns / 1e9;
	for (n = 0; n < s->nr_nodes; n++) {
		double util = (s->q_rd[n] / s->rd_bw[n] + s->q_wr[n] / s->wr_bw[n]) / span_ns;
		double target = loaded_latency(s->idle_ns[n], util);

		/* Damped, so the closed loop (latency -> rate -> load) settles. */
		s->lat_ns[n] = 0.5 * s->lat_ns[n] + 0.5 * target;
		s->q_rd[n] = s->q_wr[n] = 0;
	}
	s->q_start_ns = s->app_ns;
}

/* --- ops for the policy: mem, clock, migrator ---------------------------- */

static int sim_node_pages(void *priv, int node, uint64_t *total, uint64_t *free)
{
	struct tier_sim *s = priv;

	if (node < 0 || (size_t)node >= s->nr_nodes)
		return -ENOENT;
	*total = s->cap_pages[node];
	*free = s->cap_pages[node] - s->used_pages[node];
	return 0;
}

/* The loaded latency of the last quantum, as a policy with memory
 * controller counters would read it. */
static int sim_node_latency(void *priv, int node, double *ns)
{
	struct tier_sim *s = priv;

	if (node < 0 || (size_t)node >= s->nr_nodes)
		return -ENOENT;
	*ns = s->lat_ns[node];
	return 0;
}

static const struct tier_mem_ops sim_mem_ops = {
	.name = "sim",
	.node_pages = sim_node_pages,
	.node_latency_ns = sim_node_latency,
};

static uint64_t sim_now_us(void *priv)
{
	return (uint64_t)(((struct tier_sim *)priv)->app_ns / 1000.0);
}

static const struct tier_clock_ops sim_clock_ops = {
	.name = "sim",
	.now_us = sim_now_us,
};

/* Moves one page; no cost accounting (the oracle's free moves use it). */
static void place_page(struct tier_sim *s, uint64_t page, int node)
{
	uint8_t from = s->page_node[page];

	if (from != TIER_NODE_NONE)
		s->used_pages[from]--;
	s->page_node[page] = (uint8_t)node;
	s->used_pages[node]++;
}

/* Moves one page with its costs: 4 KiB read on the source and written on
 * the target, the mover's CPU, the per-tier-pair count, and ping-pong
 * (back to the tier it left within the window). */
static void move_one(struct tier_sim *s, uint64_t page, int to, uint32_t now_ms)
{
	uint8_t from = s->page_node[page];
	int fr = s->node_rank[from], tr = s->node_rank[to];

	place_page(s, page, to);
	s->q_rd[from] += PAGE_BYTES;
	s->q_wr[to] += PAGE_BYTES;
	s->policy_cpu_ns += MIGRATE_PAGE_CPU_NS;
	s->moved[fr][tr]++;
	if (tr < fr)
		s->ep_promoted++;
	else
		s->ep_demoted++;
	if (s->last_move_ms[page] && now_ms - s->last_move_ms[page] < PINGPONG_WINDOW_MS &&
	    s->prev_rank[page] == tr)
		s->pingpong++;
	s->last_move_ms[page] = now_ms ? now_ms : 1;
	s->prev_rank[page] = (uint8_t)fr;
}

/* Index of page p's accessed/dirty/protnone flags: its unit's first page
 * while the unit is one huge page (the bits sit in the PMD). */
static inline uint64_t flag_idx(const struct tier_sim *s, uint64_t p)
{
	return s->thp && s->huge[p >> THP_SHIFT] ? p & ~(uint64_t)(THP_PAGES - 1) : p;
}

/* Pages of the 2 MiB unit holding page p: [*base, *base + return). */
static uint64_t unit_range(const struct tier_sim *s, uint64_t p, uint64_t *base)
{
	uint64_t b = p & ~(uint64_t)(THP_PAGES - 1);

	*base = b;
	return s->nr_pages - b < THP_PAGES ? s->nr_pages - b : THP_PAGES;
}

/* Moves the 2 MiB unit holding page p to node `to`, as the kernel migrates
 * a THP: all its pages, 2 MiB read and written, the mover's CPU for each
 * page. Returns the status every page of the unit gets; *did says whether
 * anything moved. */
static int move_unit(struct tier_sim *s, uint64_t p, int to, uint32_t now_ms, bool *did)
{
	uint64_t base, len = unit_range(s, p, &base), need = 0, present = 0, q;

	*did = false;
	if (to < 0 || (size_t)to >= s->nr_nodes)
		return -EINVAL;
	for (q = base; q < base + len; q++) {
		uint8_t from = s->page_node[q];

		present += from != TIER_NODE_NONE;
		need += from != TIER_NODE_NONE && from != to;
	}
	if (!present)
		return -ENOENT;
	if (!need)
		return to;
	if (s->cap_pages[to] - s->used_pages[to] < need)
		return -ENOMEM;
	for (q = base; q < base + len; q++) {
		uint8_t from = s->page_node[q];

		if (from == TIER_NODE_NONE || from == to)
			continue;
		move_one(s, q, to, now_ms);
	}
	*did = true;
	return to;
}

/* Moves one 4 KiB page (or a page of a split unit); returns its status. */
static int move_page(struct tier_sim *s, uint64_t p, int to, uint32_t now_ms, bool *did)
{
	uint8_t from = s->page_node[p];

	*did = false;
	if (from == TIER_NODE_NONE)
		return -ENOENT;
	if (to < 0 || (size_t)to >= s->nr_nodes)
		return -EINVAL;
	if (to == from)
		return to;
	if (s->used_pages[to] >= s->cap_pages[to])
		return -ENOMEM;
	move_one(s, p, to, now_ms);
	*did = true;
	return to;
}

/* THP: a move of any page moves its unit; every page of a unit named in
 * one call gets the status the unit got first (the kernel reports a THP's
 * pages together). */
static long sim_move_thp(struct tier_sim *s, const uint64_t *pages, const int *nodes,
			 int *status, size_t n)
{
	uint32_t now_ms = (uint32_t)(s->app_ns / 1e6);
	bool any = false, did;
	long moved = 0;
	size_t i;

	if (++s->move_gen == 0) {
		memset(s->unit_gen, 0, ((s->nr_pages >> THP_SHIFT) + 1) * sizeof(*s->unit_gen));
		s->move_gen = 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t p = pages[i], u;

		if (p >= s->nr_pages) {
			status[i] = -EFAULT;
			continue;
		}
		u = p >> THP_SHIFT;
		if (!s->huge[u]) {
			status[i] = move_page(s, p, nodes[i], now_ms, &did);
			any |= did;
			moved += did;
			continue;
		}
		if (s->unit_gen[u] != s->move_gen) {
			s->unit_status[u] = move_unit(s, p, nodes[i], now_ms, &did);
			s->unit_gen[u] = s->move_gen;
			any |= did;
			moved += did;
		}
		status[i] = s->unit_status[u];
	}
	if (any)
		s->app_ns += TLB_SHOOTDOWN_NS;
	return moved;
}

static long sim_move(void *priv, const uint64_t *pages, const int *nodes, int *status,
		     size_t n)
{
	struct tier_sim *s = priv;
	uint32_t now_ms = (uint32_t)(s->app_ns / 1e6);
	long moved = 0;
	bool did;
	size_t i;

	if (s->thp)
		return sim_move_thp(s, pages, nodes, status, n);
	for (i = 0; i < n; i++) {
		if (pages[i] >= s->nr_pages) {
			status[i] = -EFAULT;
			continue;
		}
		status[i] = move_page(s, pages[i], nodes[i], now_ms, &did);
		moved += did;
	}
	if (moved)
		s->app_ns += TLB_SHOOTDOWN_NS;
	return moved;
}

/* Splits the huge unit holding page into 4 KiB pages in place: each page
 * takes the unit's accessed/dirty/protnone bits. */
static int sim_split(void *priv, uint64_t page)
{
	struct tier_sim *s = priv;
	uint64_t base, len, q;

	if (page >= s->nr_pages)
		return -EFAULT;
	if (!s->thp || !s->huge[page >> THP_SHIFT])
		return -EINVAL;
	len = unit_range(s, page, &base);
	for (q = base + 1; q < base + len; q++)
		s->flags[q] = s->flags[base];
	s->huge[page >> THP_SHIFT] = 0;
	s->splits++;
	s->policy_cpu_ns += SPLIT_CPU_NS;
	s->app_ns += TLB_SHOOTDOWN_NS;
	return 0;
}

static const struct tier_migrator_ops sim_migrator_ops = {
	.name = "sim",
	.move = sim_move,
	.split = sim_split,
};

/* --- trackers ------------------------------------------------------------ */

static int obs_push(struct tier_sim *s, const struct tier_obs *o)
{
	if (s->nr_obs == s->cap_obs) {
		size_t cap = s->cap_obs ? s->cap_obs * 2 : 4096;
		struct tier_obs *n = realloc(s->obs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->obs = n;
		s->cap_obs = cap;
	}
	s->obs[s->nr_obs++] = *o;
	return 0;
}

static void damon_pick_samples(struct tier_sim *s)
{
	size_t i;

	for (i = 0; i < s->nr_regions; i++) {
		struct damon_region *r = &s->regions[i];

		r->sample = r->start + tier_rng_below(&s->rng, r->end - r->start);
		s->flags[flag_idx(s, r->sample)] &= (uint8_t)~F_ACCESSED;	/* mkold */
	}
}

static int damon_init(struct tier_sim *s)
{
	size_t i, n = DAMON_MIN_REGIONS;

	if (s->nr_pages < n)
		n = s->nr_pages;
	s->regions = calloc(DAMON_MAX_REGIONS * 2, sizeof(*s->regions));
	if (!s->regions)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s->regions[i].start = s->nr_pages * i / n;
		s->regions[i].end = s->nr_pages * (i + 1) / n;
	}
	s->nr_regions = n;
	damon_pick_samples(s);
	s->next_damon_sample = DAMON_SAMPLE_NS;
	s->next_damon_aggr = DAMON_AGGR_NS;
	return 0;
}

static void damon_sample(struct tier_sim *s)
{
	size_t i;

	for (i = 0; i < s->nr_regions; i++) {
		struct damon_region *r = &s->regions[i];

		if (s->flags[flag_idx(s, r->sample)] & F_ACCESSED)
			r->nr_accesses++;
	}
	s->policy_cpu_ns += DAMON_CHECK_NS * (double)s->nr_regions;
	damon_pick_samples(s);
}

/* Aggregation: report, merge similar neighbours, split (DAMON's
 * kdamond_merge_regions / kdamond_split_regions). */
static int damon_aggregate(struct tier_sim *s)
{
	const uint32_t max = (uint32_t)(DAMON_AGGR_NS / DAMON_SAMPLE_NS);
	const uint32_t thres = max / 10 ? max / 10 : 1;
	uint64_t sz_limit;
	size_t i, j;
	int ret;

	for (i = 0; i < s->nr_regions; i++) {
		struct damon_region *r = &s->regions[i];
		struct tier_obs o = {
			.page = r->start,
			.nr_pages = (uint32_t)(r->end - r->start),
			.kind = TIER_OBS_ACCESSED,
			.count = r->nr_accesses,
			.max = max,
			.interval_us = (uint32_t)(DAMON_AGGR_NS / 1000),
		};

		ret = obs_push(s, &o);
		if (ret)
			return ret;
	}
	/* Merge neighbours whose access counts differ by at most thres. */
	sz_limit = s->nr_pages / DAMON_MIN_REGIONS;
	for (i = 0, j = 0; i < s->nr_regions; i++) {
		struct damon_region *r = &s->regions[i];

		if (j) {
			struct damon_region *l = &s->regions[j - 1];
			uint32_t d = l->nr_accesses > r->nr_accesses ? l->nr_accesses - r->nr_accesses
								     : r->nr_accesses - l->nr_accesses;

			if (d <= thres && r->end - l->start <= sz_limit) {
				uint64_t ls = l->end - l->start, rs = r->end - r->start;

				l->nr_accesses = (uint32_t)((l->nr_accesses * ls + r->nr_accesses * rs) /
							    (ls + rs));
				l->age = (uint32_t)((l->age * ls + r->age * rs) / (ls + rs));
				l->end = r->end;
				continue;
			}
		}
		s->regions[j++] = *r;
	}
	s->nr_regions = j;
	for (i = 0; i < s->nr_regions; i++) {
		struct damon_region *r = &s->regions[i];
		uint32_t d = r->nr_accesses > r->last_nr_accesses ?
			     r->nr_accesses - r->last_nr_accesses :
			     r->last_nr_accesses - r->nr_accesses;

		r->age = d <= thres ? r->age + 1 : 0;
		r->last_nr_accesses = r->nr_accesses;
		r->nr_accesses = 0;
	}
	/* Split each region in two at a random point while there is room. */
	if (s->nr_regions * 2 <= DAMON_MAX_REGIONS) {
		size_t n = s->nr_regions;

		for (i = n; i-- > 0;) {
			struct damon_region *r = &s->regions[i];
			uint64_t len = r->end - r->start, cut;

			s->regions[2 * i] = *r;
			if (len < 2)
				continue;
			cut = r->start + 1 + tier_rng_below(&s->rng, len - 1);
			s->regions[2 * i + 1] = s->regions[2 * i];
			s->regions[2 * i].end = cut;
			s->regions[2 * i + 1].start = cut;
		}
		/* Compact: unsplit regions left a hole at 2i+1. */
		for (i = 0, j = 0; i < 2 * n; i++) {
			if (i % 2 == 1 && (s->regions[i - 1].end != s->regions[i].start ||
					   s->regions[i].start >= s->regions[i].end))
				continue;
			s->regions[j++] = s->regions[i];
		}
		s->nr_regions = j;
	}
	damon_pick_samples(s);
	return 0;
}

/* Accessed-bit (idle) or soft-dirty scan of every page, reported as runs. */
static int bit_scan(struct tier_sim *s, uint8_t bit, uint16_t kind, uint32_t interval_us)
{
	uint64_t p = 0;
	int ret;

	while (p < s->nr_pages) {
		uint8_t v = s->flags[flag_idx(s, p)] & bit;
		uint64_t q = p + 1;
		struct tier_obs o;

		while (q < s->nr_pages && (s->flags[flag_idx(s, q)] & bit) == v && q - p < UINT32_MAX)
			q++;
		memset(&o, 0, sizeof(o));
		o.page = p;
		o.nr_pages = (uint32_t)(q - p);
		o.kind = kind;
		o.count = v ? 1 : 0;
		o.max = 1;
		o.interval_us = interval_us;
		ret = obs_push(s, &o);
		if (ret)
			return ret;
		p = q;
	}
	for (p = 0; p < s->nr_pages; p++)
		s->flags[p] &= (uint8_t)~bit;
	if (bit == F_ACCESSED) {
		s->policy_cpu_ns += IDLE_SCAN_PAGE_NS * (double)s->nr_pages;
	} else {
		s->policy_cpu_ns += IDLE_SCAN_PAGE_NS * (double)s->nr_pages;
		s->app_ns += SOFTDIRTY_CLEAR_PAGE_NS * (double)s->nr_pages;
	}
	return 0;
}

static void hint_scan(struct tier_sim *s)
{
	uint64_t n = HINT_SCAN_PAGES < s->nr_pages ? HINT_SCAN_PAGES : s->nr_pages;
	uint64_t i;

	for (i = 0; i < n; i++) {
		uint64_t p = s->hint_pos;
		uint8_t node = s->page_node[p];

		/* Tiering mode skips pages already on the top tier. */
		if (node != TIER_NODE_NONE && s->node_rank[node] > 0) {
			s->flags[flag_idx(s, p)] |= F_PROTNONE;
			s->chunk_unmap_ns[p >> HINT_CHUNK_SHIFT] = s->app_ns;
		}
		s->hint_pos = (p + 1) % s->nr_pages;
		if (s->hint_pos == 0 && s->hint_period_ns < HINT_SCAN_PERIOD_MAX_NS) {
			/* A full pass done: the scan period backs off, as
			 * task_numa_work's does when the task's faults give no
			 * reason to scan faster (in tiering mode only faults
			 * that promote count): measured in the test guest as
			 * scans at about 1, 3, 7, 15, 31 s. */
			s->hint_period_ns *= 2;
			if (s->hint_period_ns > HINT_SCAN_PERIOD_MAX_NS)
				s->hint_period_ns = HINT_SCAN_PERIOD_MAX_NS;
		}
	}
	/* change_prot_numa() changes one PMD for a THP. */
	s->app_ns += HINT_SCAN_PAGE_NS * (double)(s->thp ? (n + THP_PAGES - 1) >> THP_SHIFT : n);
}

static int sim_collect(void *priv, void (*sink)(void *, const struct tier_obs *, size_t),
		       void *ctx, struct tier_err *err)
{
	struct tier_sim *s = priv;
	uint32_t interval_us = (uint32_t)s->env.interval_us;
	int ret = 0;

	/* Scanning trackers look at the bits right before the policy runs. */
	if (s->trackers & TRK_IDLE)
		ret = bit_scan(s, F_ACCESSED, TIER_OBS_ACCESSED, interval_us);
	if (!ret && (s->trackers & TRK_SOFTDIRTY))
		ret = bit_scan(s, F_DIRTY, TIER_OBS_WRITTEN, interval_us);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	if (s->nr_obs)
		sink(ctx, s->obs, s->nr_obs);
	s->nr_obs = 0;
	return 0;
}

static const struct tier_tracker_ops sim_tracker_ops = {
	.name = "sim",
	.kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE | TIER_OBS_HINT_FAULT,
	.collect = sim_collect,
};

/* --- the access loop ----------------------------------------------------- */

/* First touch of page p by tenant: the CPUs' node, then by distance. With
 * THP the whole 2 MiB unit is allocated on the first node with room for it;
 * when none has, its pages go one by one (the kernel falls back to 4 KiB
 * pages). Returns 0 or -ENOMEM. */
/* The tenant a page belongs to, for the first touch before the run. */
static uint8_t owner_at(const struct tier_sim *s, uint64_t p)
{
	return s->wl->page_tenant ? (uint8_t)s->wl->page_tenant(s->wl_priv, p) : 0;
}

static int first_touch(struct tier_sim *s, uint64_t p, uint8_t tenant)
{
	uint64_t base = p, len = 1, need = 0, q;
	size_t k;

	if (s->thp)
		len = unit_range(s, p, &base);
	for (q = base; q < base + len; q++)
		need += s->page_node[q] == TIER_NODE_NONE;
	for (k = 0; k < s->nr_nodes; k++) {
		int c = s->alloc_order[k];

		if (s->cap_pages[c] - s->used_pages[c] >= need) {
			for (q = base; q < base + len; q++)
				if (s->page_node[q] == TIER_NODE_NONE) {
					place_page(s, q, c);
					s->page_owner[q] = tenant;
				}
			return 0;
		}
	}
	if (s->thp)
		s->huge[base >> THP_SHIFT] = 0;
	for (q = base; q < base + len; q++) {
		if (s->page_node[q] != TIER_NODE_NONE)
			continue;
		for (k = 0; k < s->nr_nodes; k++) {
			int c = s->alloc_order[k];

			if (s->used_pages[c] < s->cap_pages[c]) {
				place_page(s, q, c);
				s->page_owner[q] = tenant;
				break;
			}
		}
		if (k == s->nr_nodes)
			return -ENOMEM;
	}
	return 0;
}

/* The access loop, compiled twice (thp a constant) so that the 4 KiB path
 * pays nothing for THP. */
static inline __attribute__((always_inline)) int
process_pages(struct tier_sim *s, const struct tier_sim_access *a, size_t n, const bool thp)
{
	const unsigned trk = s->trackers;
	const uint64_t mask = thp ? ~(uint64_t)(THP_PAGES - 1) : ~(uint64_t)0;
	double t = 0, stall = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t p = a[i].page, fp;
		uint8_t node, f;

		if (p >= s->nr_pages)
			return -ERANGE;
		node = s->page_node[p];
		if (node == TIER_NODE_NONE) {
			if (first_touch(s, p, a[i].tenant))
				return -ENOMEM;
			node = s->page_node[p];
		}
		t += s->lat_ns[node];
		s->acc_node[node]++;
		s->tenant_acc[a[i].tenant & (TIER_SIM_MAX_TENANTS - 1)]++;
		s->tenant_ns[a[i].tenant & (TIER_SIM_MAX_TENANTS - 1)] += s->lat_ns[node];
		fp = p;
		if (thp) {
			if (s->huge[p >> THP_SHIFT]) {
				fp = p & mask;
			} else {
				uint64_t *e = &s->tlb[p % TLB_ENTRIES];

				if (*e != p + 1) {
					*e = p + 1;
					t += PAGE_WALK_NS;
					s->tlb_misses++;
				}
			}
		}
		f = s->flags[fp];
		if (a[i].write) {
			s->wr_node[node]++;
			if ((trk & TRK_SOFTDIRTY) && !(f & F_DIRTY))
				stall += SOFTDIRTY_FAULT_NS;
			f |= F_DIRTY;
		}
		if (f & F_PROTNONE) {
			struct tier_obs o;

			f &= (uint8_t)~F_PROTNONE;
			stall += HINT_FAULT_NS;
			memset(&o, 0, sizeof(o));
			/* A THP faults as a whole (task_numa_fault of 512 pages). */
			o.page = fp;
			o.nr_pages = thp && s->huge[p >> THP_SHIFT] ? (uint32_t)unit_range(s, p, &fp) : 1;
			o.kind = TIER_OBS_HINT_FAULT;
			o.write = a[i].write;
			o.count = 1;
			o.latency_us = (uint32_t)((s->app_ns + t - s->chunk_unmap_ns[p >> HINT_CHUNK_SHIFT]) /
						  1000.0);
			if (obs_push(s, &o))
				return -ENOMEM;
		}
		s->flags[fp] = f | F_ACCESSED;
		if ((trk & TRK_SAMPLES) && --s->sample_countdown == 0) {
			struct tier_obs o;
			uint64_t period = s->sample_period;

			memset(&o, 0, sizeof(o));
			o.page = p;
			o.nr_pages = 1;
			o.kind = TIER_OBS_SAMPLE;
			o.write = a[i].write;
			o.count = (uint32_t)period;
			if (obs_push(s, &o))
				return -ENOMEM;
			s->policy_cpu_ns += SAMPLE_NS;
			/* Jitter of +-1/8 so periodic patterns do not alias. */
			s->sample_countdown = period - period / 8 + tier_rng_below(&s->rng, period / 4 + 1);
		}
	}
	/* Traffic per node is added per batch by the caller, from the
	 * per-node counters. */
	s->app_ns += t + stall;
	s->accesses += n;
	return 0;
}

static int process(struct tier_sim *s, const struct tier_sim_access *a, size_t n)
{
	return s->thp ? process_pages(s, a, n, true) : process_pages(s, a, n, false);
}

/* --- the oracle ---------------------------------------------------------- */

struct weight_order {
	const double *w;
	const struct tier_sim *s;
};

/* Heaviest first; among equal weights the page already in the faster tier
 * first, so that ties never move pages (on a uniform workload the oracle
 * then keeps first touch: it cannot gain from noise, nor lose to it). */
static int cmp_weight_desc(const void *a, const void *b, void *ctx)
{
	const struct weight_order *o = ctx;
	uint64_t pa = *(const uint64_t *)a, pb = *(const uint64_t *)b;
	double x = o->w[pa], y = o->w[pb];
	int ra, rb;

	if (x != y)
		return x > y ? -1 : 1;
	ra = o->s->page_node[pa] == TIER_NODE_NONE ? 255 : o->s->node_rank[o->s->page_node[pa]];
	rb = o->s->page_node[pb] == TIER_NODE_NONE ? 255 : o->s->node_rank[o->s->page_node[pb]];
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (pa > pb) - (pa < pb);
}

static uint64_t tier_cap(const struct tier_sim *s, size_t rank)
{
	uint64_t c = 0;
	size_t i;

	for (i = 0; i < s->topo.tiers[rank].nr_nodes; i++)
		c += s->cap_pages[s->topo.tiers[rank].nodes[i]];
	return c;
}

/* Expected AMAT when tier r serves share[r] of accesses (closed loop:
 * the access rate follows the latency, the latency the load). */
static double model_amat(const struct tier_sim *s, const double *share, double wfrac)
{
	double amat = 0, lat[TIER_SIM_MAX_TIERS];
	size_t r, it;

	for (r = 0; r < s->nr_tiers; r++) {
		lat[r] = s->idle_ns[s->topo.tiers[r].nodes[0]];
		amat += share[r] * lat[r];
	}
	for (it = 0; it < 40; it++) {
		double rate = 1.0 / amat, next = 0;	/* accesses per ns */

		for (r = 0; r < s->nr_tiers; r++) {
			int node = s->topo.tiers[r].nodes[0];
			double nn = (double)s->topo.tiers[r].nr_nodes;
			double bytes = rate * share[r] * LINES_PER_ACCESS * LINE_BYTES / nn;
			/* As the engine counts it: every access reads, a store also
			 * writes back. */
			double util = bytes * (1.0 / s->rd_bw[node] + wfrac / s->wr_bw[node]);

			if (r == 0)
				util += (double)s->antagonist_bps / 1e9 / s->rd_bw[node];
			lat[r] = 0.5 * lat[r] + 0.5 * loaded_latency(s->idle_ns[node], util);
			next += share[r] * lat[r];
		}
		amat = next;
	}
	return amat;
}

/* Pages sorted by weight; cum[i] = share of the first i pages. Chooses how
 * many of the hottest pages each tier gets, trying fills below capacity on
 * the faster tiers (to balance loaded latency), and places them. */
static void oracle_place(struct tier_sim *s, const double *cum, uint64_t n)
{
	uint64_t cap[TIER_SIM_MAX_TIERS], best_cnt[TIER_SIM_MAX_TIERS] = { 0 };
	double best = INFINITY, wfrac = s->accesses ? (double)s->writes / (double)s->accesses : 0.2;
	const int steps = 24;
	size_t r;
	int a, b;

	for (r = 0; r < s->nr_tiers; r++)
		cap[r] = tier_cap(s, r);
	/* Fill fraction a/steps of tier 0's capacity, b/steps of tier 1's
	 * (three or more tiers), the rest top-down. */
	for (a = 0; a <= steps; a++) {
		for (b = 0; b <= (s->nr_tiers > 2 ? steps : steps - 1) ; b++) {
			uint64_t cnt[TIER_SIM_MAX_TIERS], left = n, used = 0;
			double share[TIER_SIM_MAX_TIERS], amat;

			if (s->nr_tiers <= 2 && b > 0)
				break;
			for (r = 0; r < s->nr_tiers; r++) {
				uint64_t c = cap[r];

				if (r == 0)
					c = cap[0] * (uint64_t)a / steps;
				else if (r == 1 && s->nr_tiers > 2)
					c = cap[1] * (uint64_t)b / steps;
				if (r + 1 == s->nr_tiers)
					c = left;
				if (c > left)
					c = left;
				cnt[r] = c;
				share[r] = cum[used + c] - cum[used];
				used += c;
				left -= c;
			}
			if (left || cnt[s->nr_tiers - 1] > cap[s->nr_tiers - 1])
				continue;	/* does not fit */
			amat = model_amat(s, share, wfrac);
			if (amat < best - 1e-9) {
				best = amat;
				memcpy(best_cnt, cnt, sizeof(cnt));
			}
		}
	}
	/* Place: clear, then fill each tier's nodes in weight order. */
	{
		uint64_t i = 0;

		for (r = 0; r < s->nr_nodes; r++)
			s->used_pages[r] = 0;
		for (i = 0; i < s->nr_pages; i++)
			s->page_node[i] = TIER_NODE_NONE;
		i = 0;
		for (r = 0; r < s->nr_tiers; r++) {
			uint64_t k;

			for (k = 0; k < best_cnt[r]; k++, i++) {
				const struct tier_tier *t = &s->topo.tiers[r];
				int node = t->nodes[k % t->nr_nodes];
				size_t m;

				for (m = 0; m < t->nr_nodes && s->used_pages[node] >= s->cap_pages[node]; m++)
					node = t->nodes[(k + m + 1) % t->nr_nodes];
				place_page(s, s->order[i], node);
			}
		}
	}
}

static int oracle_epoch(struct tier_sim *s, const double *w)
{
	double *cum;
	uint64_t i, n = s->nr_pages;
	double wfrac = s->accesses ? (double)s->writes / (double)s->accesses : 0.2;

	/* Same distribution and the same mix of stores (which load the tiers'
	 * write bandwidth), same placement. The store share is only known once
	 * the workload ran, so it is re-checked every epoch. */
	if (s->prev_weights && !memcmp(w, s->prev_weights, n * sizeof(*w)) &&
	    fabs(wfrac - s->oracle_wfrac) < 0.02)
		return 0;
	s->oracle_wfrac = wfrac;
	cum = malloc((n + 1) * sizeof(*cum));
	if (!cum)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		s->order[i] = i;
	{
		struct weight_order wo = { w, s };

		qsort_r(s->order, n, sizeof(*s->order), cmp_weight_desc, &wo);
	}
	cum[0] = 0;
	{
		double total = 0;

		for (i = 0; i < n; i++)
			total += w[i];
		for (i = 0; i < n; i++)
			cum[i + 1] = cum[i] + (total > 0 ? w[s->order[i]] / total : 0);
	}
	oracle_place(s, cum, n);
	free(cum);
	if (s->prev_weights)
		memcpy(s->prev_weights, w, n * sizeof(*w));
	return 0;
}

/* Traces: count every page's accesses over the whole run (one pass), then
 * rewind; the placement is static (one epoch). */
static int oracle_trace_counts(struct tier_sim *s, struct tier_err *err)
{
	struct tier_sim_access *buf = malloc(BATCH * sizeof(*buf));
	long n;
	size_t i;
	int ret = 0;

	if (!buf)
		return tier_err_set(err, -ENOMEM, "out of memory");
	memset(s->weights, 0, s->nr_pages * sizeof(*s->weights));
	while ((n = s->wl->next(s->wl_priv, 0, buf, BATCH, err)) > 0)
		for (i = 0; i < (size_t)n; i++)
			if (buf[i].page < s->nr_pages)
				s->weights[buf[i].page] += 1;
	if (n < 0)
		ret = (int)n;
	else if (s->wl->rewind)
		ret = s->wl->rewind(s->wl_priv, err);
	free(buf);
	return ret;
}

/* --- setup and run ------------------------------------------------------- */

static int parse_trackers(struct tier_sim *s, const char *list, struct tier_err *err)
{
	char buf[64], *save = NULL, *tok;
	size_t k;

	if (strlen(list) >= sizeof(buf))
		return tier_err_set(err, -EINVAL, "tracker list '%s' too long", list);
	snprintf(buf, sizeof(buf), "%s", list);
	snprintf(s->tracker_names, sizeof(s->tracker_names), "%s", list);
	if (!strcmp(list, "none"))
		return 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; tier_sim_trackers[k]; k++)
			if (!strcmp(tok, tier_sim_trackers[k]))
				break;
		if (!tier_sim_trackers[k])
			return tier_err_set(err, -EINVAL,
					    "unknown tracker '%s' (none, damon, idle, softdirty, samples, hintfault)",
					    tok);
		s->trackers |= 1u << k;
	}
	if (!s->trackers)
		return tier_err_set(err, -EINVAL, "no tracker named in '%s'", list);
	return 0;
}

static int setup_machine(struct tier_sim *s, const struct tier_sim_params *p, struct tier_err *err)
{
	size_t i, j;
	int ret;

	uint64_t unit = p->unit_bytes ? p->unit_bytes : TIER_SIM_DEFAULT_UNIT_BYTES;

	ret = p->preset ? tier_sim_machine_from_preset(&s->machine, p->preset, p->ratio, unit, err)
			: tier_sim_machine_init(&s->machine, p->machine, p->ratio, unit, err);
	if (ret)
		return ret;
	ret = tier_topology_discover(&tier_sim_topology_ops, &s->machine, NULL, 0, &s->topo, err);
	if (ret)
		return ret;
	if (s->topo.nr_tiers > TIER_SIM_MAX_TIERS)
		return tier_err_set(err, -EINVAL, "more than %d tiers", TIER_SIM_MAX_TIERS);
	s->nr_nodes = s->machine.nr_nodes;
	s->nr_tiers = s->topo.nr_tiers;
	tier_node_rank_map(&s->topo, s->node_rank);
	s->fast_node = s->topo.tiers[0].nodes[0];
	for (i = 0; i < s->nr_nodes; i++) {
		const struct tier_sim_node_spec *n = &s->machine.nodes[i];

		s->cap_pages[i] = s->machine.node_bytes[i] >> PAGE_SHIFT;
		s->idle_ns[i] = n->latency_ns;
		s->lat_ns[i] = n->latency_ns;
		s->rd_bw[i] = n->read_bw_mbps * 1e6 / 1e9;	/* MB/s -> bytes/ns */
		s->wr_bw[i] = n->write_bw_mbps * 1e6 / 1e9;
	}
	/* First-touch order: the node with CPUs, then by distance from it. */
	{
		int cpu = 0;

		for (i = 0; i < s->nr_nodes; i++)
			if (s->topo.nodes[i].nr_cpus) {
				cpu = (int)i;
				break;
			}
		for (i = 0; i < s->nr_nodes; i++)
			s->alloc_order[i] = (int)i;
		for (i = 0; i < s->nr_nodes; i++)
			for (j = i + 1; j < s->nr_nodes; j++) {
				int a = s->alloc_order[i], b = s->alloc_order[j];
				int da = tier_topology_distance(&s->topo, cpu, a);
				int db = tier_topology_distance(&s->topo, cpu, b);

				if (db < da || (db == da && b < a)) {
					s->alloc_order[i] = b;
					s->alloc_order[j] = a;
				}
			}
	}
	return 0;
}

static int setup_pages(struct tier_sim *s, struct tier_err *err)
{
	uint64_t total = 0, i, *perm;
	size_t k;

	for (k = 0; k < s->nr_nodes; k++)
		total += s->cap_pages[k];
	s->nr_pages = s->wl->footprint_pages(s->wl_priv);
	if (!s->nr_pages)
		return tier_err_set(err, -EINVAL, "workload has no pages");
	if (s->nr_pages > total)
		return tier_err_set(err, -EINVAL,
				    "workload footprint (%llu pages) exceeds the machine (%llu pages)",
				    (unsigned long long)s->nr_pages, (unsigned long long)total);
	s->page_node = malloc(s->nr_pages);
	s->page_owner = calloc(s->nr_pages, 1);
	s->flags = calloc(s->nr_pages, 1);
	s->last_move_ms = calloc(s->nr_pages, sizeof(*s->last_move_ms));
	s->prev_rank = calloc(s->nr_pages, 1);
	s->chunk_unmap_ns = calloc((s->nr_pages >> HINT_CHUNK_SHIFT) + 1, sizeof(double));
	perm = malloc(s->nr_pages * sizeof(*perm));
	if (!s->page_node || !s->page_owner || !s->flags || !s->last_move_ms || !s->prev_rank ||
	    !s->chunk_unmap_ns || !perm) {
		free(perm);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	memset(s->page_node, TIER_NODE_NONE, s->nr_pages);
	/* The application first touches its pages in a random order (it
	 * initialises its data structures), so the fastest node holds a random
	 * subset at the start; with THP a random subset of 2 MiB units. */
	if (s->thp) {
		uint64_t units = (s->nr_pages + THP_PAGES - 1) >> THP_SHIFT;

		s->unit_gen = calloc(units + 1, sizeof(*s->unit_gen));
		s->unit_status = calloc(units + 1, sizeof(*s->unit_status));
		s->huge = malloc(units + 1);
		s->tlb = calloc(TLB_ENTRIES, sizeof(*s->tlb));
		if (!s->unit_gen || !s->unit_status || !s->huge || !s->tlb) {
			free(perm);
			return tier_err_set(err, -ENOMEM, "out of memory");
		}
		memset(s->huge, 1, units + 1);
		for (i = 0; i < units; i++)
			perm[i] = i;
		for (i = units - 1; i > 0; i--) {
			uint64_t j = tier_rng_below(&s->rng, i + 1), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0; i < units; i++)
			first_touch(s, perm[i] << THP_SHIFT, owner_at(s, perm[i] << THP_SHIFT));
		free(perm);
		return 0;
	}
	for (i = 0; i < s->nr_pages; i++)
		perm[i] = i;
	for (i = s->nr_pages - 1; i > 0; i--) {
		uint64_t j = tier_rng_below(&s->rng, i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < s->nr_pages; i++) {
		for (k = 0; k < s->nr_nodes; k++) {
			int c = s->alloc_order[k];

			if (s->used_pages[c] < s->cap_pages[c]) {
				place_page(s, perm[i], c);
				s->page_owner[perm[i]] = owner_at(s, perm[i]);
				break;
			}
		}
	}
	free(perm);
	return 0;
}

static void timeline_header(const struct tier_sim *s, FILE *f)
{
	size_t r;

	fprintf(f, "time_s,amat_ns,fast_access_ratio,promoted_pages,demoted_pages");
	for (r = 0; r < s->nr_tiers; r++)
		fprintf(f, ",tier%zu_used_pages,tier%zu_latency_ns", r, r);
	fprintf(f, "\n");
}

/* Pages per tenant and tier now. */
static void tenant_pages(const struct tier_sim *s,
			 uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS])
{
	uint64_t p;

	memset(pages, 0, sizeof(uint64_t) * TIER_SIM_MAX_TENANTS * TIER_SIM_MAX_TIERS);
	for (p = 0; p < s->nr_pages; p++) {
		uint8_t n = s->page_node[p];

		if (n != TIER_NODE_NONE && s->page_owner[p] < TIER_SIM_MAX_TENANTS)
			pages[s->page_owner[p]][s->node_rank[n]]++;
	}
}

/* Keeps each tenant's most pages per tier after the settling time. */
static void tenant_census(struct tier_sim *s)
{
	uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];
	size_t k, r;

	if (s->nr_tenants < 2 || s->app_ns < TIER_SIM_SETTLE_US * 1e3)
		return;
	tenant_pages(s, pages);
	for (k = 0; k < s->nr_tenants; k++)
		for (r = 0; r < s->nr_tiers; r++)
			if (pages[k][r] > s->tenant_peak[k][r])
				s->tenant_peak[k][r] = pages[k][r];
}

static void timeline_row(struct tier_sim *s, FILE *f)
{
	uint64_t acc = s->accesses - s->ep_acc;
	uint64_t fast = s->fast_accesses - s->ep_fast;
	double app = s->app_ns - s->ep_app_ns;
	size_t r, k;

	if (f && acc) {
		fprintf(f, "%.3f,%.2f,%.4f,%llu,%llu", s->app_ns / 1e9, app / (double)acc,
			(double)fast / (double)acc, (unsigned long long)s->ep_promoted,
			(unsigned long long)s->ep_demoted);
		for (r = 0; r < s->nr_tiers; r++) {
			uint64_t used = 0;
			double lat = 0;

			for (k = 0; k < s->topo.tiers[r].nr_nodes; k++) {
				used += s->used_pages[s->topo.tiers[r].nodes[k]];
				lat += s->lat_ns[s->topo.tiers[r].nodes[k]];
			}
			fprintf(f, ",%llu,%.1f", (unsigned long long)used,
				lat / (double)s->topo.tiers[r].nr_nodes);
		}
		fprintf(f, "\n");
	}
	s->ep_acc = s->accesses;
	s->ep_fast = s->fast_accesses;
	s->ep_app_ns = s->app_ns;
	s->ep_promoted = s->ep_demoted = 0;
	s->ep_start_ns = s->app_ns;
}

/* Runs accesses until simulated time until_ns, the duration or the end of
 * the workload. Returns 1 when there is more to run, 0 when the run is over,
 * -errno on failure. */
static int advance(struct tier_sim *s, double until_ns, struct tier_err *err)
{
	const struct tier_sim_params *p = &s->p;
	int ret;

	if (s->ended)
		return 0;
	if (s->oracle && !s->oracle_ready && !s->wl->weights) {
		ret = oracle_trace_counts(s, err);
		if (!ret)
			ret = oracle_epoch(s, s->weights);
		if (ret)
			return ret;
		s->oracle_ready = true;
	}
	if (until_ns > s->duration_ns)
		until_ns = s->duration_ns;
	while (s->app_ns < until_ns) {
		uint64_t now_us = (uint64_t)(s->app_ns / 1000);
		long n;
		size_t k;

		if (s->oracle && s->wl->weights && s->app_ns >= s->ep_start_ns &&
		    s->accesses == s->ep_acc) {
			/* Start of an epoch: place for this epoch's distribution. */
			s->wl->weights(s->wl_priv, now_us, s->weights);
			ret = oracle_epoch(s, s->weights);
			if (ret)
				return tier_err_set(err, ret, "out of memory");
		}
		n = s->wl->next(s->wl_priv, now_us, s->buf, BATCH, err);
		if (n < 0)
			return (int)n;
		if (n == 0) {
			s->ended = true;	/* a trace ended */
			break;
		}
		ret = process(s, s->buf, (size_t)n);
		if (ret)
			return tier_err_set(err, ret, ret == -ERANGE ?
					    "workload touched a page beyond its footprint" :
					    "simulated machine out of memory");
		if (s->antagonist_bps == 0 && s->wl->antagonist_bytes_per_s)
			s->antagonist_bps = s->wl->antagonist_bytes_per_s(s->wl_priv, now_us);
		/* Traffic of this batch. */
		for (k = 0; k < s->nr_nodes; k++) {
			uint64_t da = s->acc_node[k] - s->last_acc[k];
			uint64_t dw = s->wr_node[k] - s->last_wr[k];

			/* Loads read; a store is a read for ownership plus a
			 * write-back. */
			s->q_rd[k] += (double)da * LINES_PER_ACCESS * LINE_BYTES;
			s->q_wr[k] += (double)dw * LINES_PER_ACCESS * LINE_BYTES;
			if (s->node_rank[k] == 0)
				s->fast_accesses += da;
			s->writes += dw;
			s->last_acc[k] = s->acc_node[k];
			s->last_wr[k] = s->wr_node[k];
		}
		while (s->app_ns >= s->next_quantum) {
			end_quantum(s, s->app_ns - s->q_start_ns);
			s->next_quantum += QUANTUM_NS;
		}
		if (s->trackers & TRK_DAMON) {
			while (s->app_ns >= s->next_damon_sample) {
				damon_sample(s);
				s->next_damon_sample += DAMON_SAMPLE_NS;
			}
			if (s->app_ns >= s->next_damon_aggr) {
				ret = damon_aggregate(s);
				if (ret)
					return tier_err_set(err, ret, "out of memory");
				s->next_damon_aggr += DAMON_AGGR_NS;
			}
		}
		if ((s->trackers & TRK_HINT) && s->app_ns >= s->next_hint_scan) {
			hint_scan(s);
			s->next_hint_scan += s->hint_period_ns;
		}
		if (s->oracle)
			s->nr_obs = 0;
		if (s->app_ns >= s->next_epoch) {
			timeline_row(s, p->timeline);
			tenant_census(s);
			while (s->next_epoch <= s->app_ns)
				s->next_epoch += EPOCH_NS;
		}
		if (p->progress && s->app_ns >= s->next_progress) {
			p->progress(p->progress_ctx, s->app_ns / s->duration_ns);
			s->next_progress += s->duration_ns / 100;
		}
	}
	if (s->app_ns >= s->duration_ns)
		s->ended = true;
	if (s->ended && s->accesses != s->ep_acc)
		timeline_row(s, p->timeline);
	return s->ended ? 0 : 1;
}

int tier_sim_advance(struct tier_sim *s, uint64_t until_us, struct tier_err *err)
{
	return advance(s, (double)until_us * 1e3, err);
}

uint64_t tier_sim_now_us(const struct tier_sim *s)
{
	return (uint64_t)(s->app_ns / 1000);
}

struct tier_env *tier_sim_env(struct tier_sim *s)
{
	return &s->env;
}

const struct tier_tracker_ops *tier_sim_tracker(struct tier_sim *s, void **priv)
{
	*priv = s;
	return s->oracle ? NULL : &sim_tracker_ops;
}

const struct tier_policy_ops *tier_sim_policy(const struct tier_sim *s)
{
	return s->pol;
}

void tier_sim_destroy(struct tier_sim *s)
{
	if (!s)
		return;
	if (s->wl && s->wl_priv)
		s->wl->destroy(s->wl_priv);
	tier_topology_release(&s->topo);
	free(s->page_node);
	free(s->page_owner);
	free(s->flags);
	free(s->huge);
	free(s->tlb);
	free(s->unit_gen);
	free(s->unit_status);
	free(s->last_move_ms);
	free(s->prev_rank);
	free(s->obs);
	free(s->regions);
	free(s->chunk_unmap_ns);
	free(s->weights);
	free(s->prev_weights);
	free(s->order);
	free(s->buf);
	free(s);
}

int tier_sim_new(const struct tier_sim_params *p, struct tier_sim **out,
		 struct tier_err *err)
{
	struct tier_sim_workload_params wp;
	const char *wl_arg = NULL;
	struct tier_sim *s = calloc(1, sizeof(*s));
	size_t i;
	int ret;

	*out = NULL;
	if (!s)
		return tier_err_set(err, -ENOMEM, "out of memory");
	s->p = *p;
	s->duration_ns = (double)(p->duration_us ? p->duration_us : TIER_SIM_DEFAULT_DURATION_US) * 1e3;
	s->next_quantum = QUANTUM_NS;
	s->next_epoch = EPOCH_NS;
	s->next_progress = s->duration_ns / 100;
	tier_topology_init(&s->topo);
	tier_rng_seed(&s->rng, p->seed ^ UINT64_C(0x7469657273696d));	/* "tiersim" */
	s->buf = malloc(BATCH * sizeof(*s->buf));
	if (!s->buf) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = setup_machine(s, p, err);
	if (ret)
		goto out;

	s->wl = tier_sim_workload_find(p->workload, &wl_arg);
	if (!s->wl) {
		ret = tier_err_set(err, -ENOENT, "unknown workload '%s' (see 'tiersim list')",
				   p->workload);
		goto out;
	}
	memset(&wp, 0, sizeof(wp));
	wp.seed = p->seed;
	wp.fast_pages = tier_cap(s, 0);
	for (i = 0; i < s->nr_nodes; i++)
		wp.total_pages += s->cap_pages[i];
	wp.duration_us = (uint64_t)(s->duration_ns / 1e3);
	wp.fast_bw_bytes_per_s = (uint64_t)(s->rd_bw[s->fast_node] * 1e9);
	wp.arg = wl_arg;
	ret = s->wl->create(&wp, &s->wl_priv, err);
	if (ret) {
		s->wl_priv = NULL;
		goto out;
	}
	s->thp = p->thp;
	ret = setup_pages(s, err);
	if (ret)
		goto out;

	s->oracle = !strcmp(p->policy, "oracle");
	if (!s->oracle) {
		s->pol = tier_policy_find(p->policy);
		if (!s->pol) {
			ret = tier_err_set(err, -ENOENT, "unknown policy '%s' (see 'tiersim list')",
					   p->policy);
			goto out;
		}
		ret = parse_trackers(s, p->tracker ? p->tracker : s->pol->default_tracker, err);
		if (ret)
			goto out;
	} else {
		snprintf(s->tracker_names, sizeof(s->tracker_names), "future");
		s->weights = calloc(s->nr_pages, sizeof(*s->weights));
		s->prev_weights = calloc(s->nr_pages, sizeof(*s->prev_weights));
		s->order = calloc(s->nr_pages, sizeof(*s->order));
		if (!s->weights || !s->prev_weights || !s->order) {
			ret = tier_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		/* Never equal to real weights: the first epoch always places. */
		for (i = 0; i < s->nr_pages; i++)
			s->prev_weights[i] = -1;
	}
	if (s->trackers & TRK_DAMON) {
		ret = damon_init(s);
		if (ret) {
			tier_err_set(err, ret, "out of memory");
			goto out;
		}
	}
	s->sample_period = (s->pol && s->pol->sample_period_lines ? s->pol->sample_period_lines
							       : SAMPLE_PERIOD_LINES) / LINES_PER_ACCESS;
	if (!s->sample_period)
		s->sample_period = 1;
	s->sample_countdown = s->sample_period;
	s->next_hint_scan = HINT_SCAN_PERIOD_NS;
	s->hint_period_ns = HINT_SCAN_PERIOD_NS;

	s->env.topo = &s->topo;
	s->env.nr_pages = s->nr_pages;
	s->env.page_node = s->page_node;
	s->env.page_owner = s->page_owner;
	s->nr_tenants = s->wl->nr_tenants ? s->wl->nr_tenants(s->wl_priv) : 1;
	if (s->nr_tenants > TIER_SIM_MAX_TENANTS)
		s->nr_tenants = TIER_SIM_MAX_TENANTS;
	if (p->groups) {
		s->groups = *p->groups;
		s->env.groups = &s->groups;
	}
	s->env.page_shift = PAGE_SHIFT;
	if (s->thp) {
		s->env.huge_shift = THP_SHIFT;
		s->env.page_huge = s->huge;
	}
	s->env.obs_kinds = sim_tracker_ops.kinds;
	s->env.migrator = &sim_migrator_ops;
	s->env.migrator_priv = s;
	s->env.mem = &sim_mem_ops;
	s->env.mem_priv = s;
	s->env.clock = &sim_clock_ops;
	s->env.clock_priv = s;
	s->env.budget_bytes_per_s = p->budget_bytes_per_s ? p->budget_bytes_per_s
							   : TIER_SIM_DEFAULT_BUDGET;
	s->env.max_batch = 1024;
	s->env.interval_us = s->pol && s->pol->interval_us ? s->pol->interval_us : 100000;
	s->env.work_units = &s->work_units;
	if (p->timeline)
		timeline_header(s, p->timeline);
	*out = s;
	return 0;
out:
	tier_sim_destroy(s);
	return ret;
}

void tier_sim_result(struct tier_sim *s, size_t policy_metadata_bytes,
		     struct tier_sim_result *r)
{
	size_t i, j;

	memset(r, 0, sizeof(*r));
	snprintf(r->machine, sizeof(r->machine), "%s",
		 s->p.machine ? s->p.machine : s->machine.preset->name);
	snprintf(r->workload, sizeof(r->workload), "%s", s->p.workload);
	snprintf(r->policy, sizeof(r->policy), "%s", s->p.policy);
	snprintf(r->tracker, sizeof(r->tracker), "%s", s->tracker_names);
	r->accesses = s->accesses;
	r->amat_ns = s->accesses ? s->app_ns / (double)s->accesses : 0;
	r->fast_access_ratio = s->accesses ? (double)s->fast_accesses / (double)s->accesses : 0;
	r->nr_tiers = s->nr_tiers;
	for (i = 0; i < s->nr_tiers; i++)
		for (j = 0; j < s->nr_tiers; j++) {
			uint64_t b = s->moved[i][j] * PAGE_BYTES;

			r->moved_bytes[i][j] = b;
			r->migrated_bytes += b;
			if (j < i)
				r->promoted_bytes += b;
			else if (j > i)
				r->demoted_bytes += b;
		}
	r->pingpong_pages = s->pingpong;
	r->policy_cpu_s = (s->policy_cpu_ns + (double)s->work_units * WORK_UNIT_NS) / 1e9;
	r->sim_time_s = s->app_ns / 1e9;
	r->metadata_bytes = policy_metadata_bytes + s->nr_regions * sizeof(struct damon_region);
	r->thp = s->thp;
	r->split_units = s->splits;
	r->tlb_misses = s->tlb_misses;
	r->nr_tenants = s->nr_tenants;
	{
		uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];

		tenant_pages(s, pages);
		for (i = 0; i < s->nr_tenants; i++) {
			struct tier_sim_tenant_result *t = &r->tenant[i];

			t->accesses = s->tenant_acc[i];
			t->amat_ns = s->tenant_acc[i] ? s->tenant_ns[i] / (double)s->tenant_acc[i] : 0;
			for (j = 0; j < s->nr_tiers; j++) {
				t->pages[j] = pages[i][j];
				t->peak_pages[j] = s->tenant_peak[i][j];
			}
		}
	}
}

int tier_sim_run(const struct tier_sim_params *p, struct tier_sim_result *r,
		 struct tier_err *err)
{
	struct tier_loop loop;
	const struct tier_tracker_ops *trk;
	struct tier_sim *s;
	void *trk_priv;
	uint64_t next;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = tier_sim_new(p, &s, err);
	if (ret)
		return ret;
	memset(&loop, 0, sizeof(loop));
	trk = tier_sim_tracker(s, &trk_priv);
	if (s->pol) {
		ret = tier_loop_init(&loop, &s->env, s->pol, trk, trk_priv, err);
		if (ret)
			goto out;
	}
	next = s->env.interval_us;
	while ((ret = tier_sim_advance(s, next, err)) > 0) {
		if (s->pol) {
			ret = tier_loop_step(&loop, err);
			if (ret)
				goto out;
		}
		next += s->env.interval_us;
	}
	if (ret)
		goto out;
	tier_sim_result(s, s->pol && s->pol->metadata_bytes ?
			   s->pol->metadata_bytes(loop.policy_priv) : 0, r);
out:
	tier_loop_release(&loop);
	tier_sim_destroy(s);
	return ret;
}
