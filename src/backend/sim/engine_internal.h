/* engine_internal.h - what the engine's modules share: the simulator's
 * state (struct tier_sim), the model's costs with their sources, and the
 * internal calls between the modules:
 *
 *   engine.c          constructor, the run loop, results (engine.h)
 *   memory.c          the machine model: capacity, placement, first touch,
 *                     bandwidth and loaded latency; the mem ops
 *   replay.c          a batch of accesses against the model
 *   migrator.c        moves and THP splits with their costs; the migrator ops
 *   tracker.c         the simulated trackers and their ops
 *   tracker_damon.c   DAMON-like adaptive regions
 *   tracker_sd.c      the daemon's soft-dirty rounds and damon+softdirty merge
 *   oracle.c          the lower bound: each epoch's hottest pages placed free
 *   timeline.c        the per-epoch CSV and per-tenant page census
 *
 * Not for use outside src/backend/sim/.
 */
#ifndef TIER_SIM_ENGINE_INTERNAL_H
#define TIER_SIM_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/linux/softdirty_picture.h"
#include "backend/linux/tracker_util.h"
#include "backend/sim/engine.h"
#include "backend/sim/rng.h"
#include "backend/sim/workload.h"
#include "core/policy.h"
#include "core/topology.h"

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
 * (HeMem-like period), or the period the policy asks for. A policy with a
 * store period gets two streams, each with its own countdown: loads, and
 * stores counted one per cache line written (LINES_PER_ACCESS per store
 * access; the PMU's store event counts store instructions, which the model
 * does not have). */
#define SAMPLE_NS 200.0
#define SAMPLE_PERIOD_LINES 20000
/* A policy's own work: ~5 ns per page or observation it visits. */
#define WORK_UNIT_NS 5.0
/* The costs above are CPU work of the cost model's machine. A machine
 * whose CPU runs slower (cpu_slowdown in its file: the test guest under
 * QEMU TCG) has each of them, and kernel-nb's kswapd rate, times its
 * factor: struct tier_sim's cpu_ns, set with the machine. PAGE_WALK_NS
 * stays: a TLB miss is the memory system's, as the accesses' latency is
 * (a workload with a measured rate of its own, access_ns, has its page
 * walks in that rate). */

/* Accesses the workload hands over per call. */
#define BATCH 1024

/* Per-page (per huge unit while it is one) bits. */
enum {
	F_ACCESSED = 1,
	F_DIRTY = 2,
	F_PROTNONE = 4,
};

/* The trackers, as bits of tier_sim.trackers, in tier_sim_trackers[]
 * order. */
enum {
	TRK_DAMON = 1,
	TRK_IDLE = 2,
	TRK_SOFTDIRTY = 4,
	TRK_SAMPLES = 8,
	TRK_HINT = 16,
	TRK_YOUNG = 32,
	TRK_SDROUNDS = 64,
};

struct tier__sim_damon_region {
	uint64_t start, end;
	uint64_t sample;
	uint32_t nr_accesses;
	uint32_t last_nr_accesses;
	uint32_t age;
};

struct tier_sim {
	/* The machine (memory.c). */
	struct tier_sim_machine machine;
	struct tier_topology topo;
	int node_rank[TIER_MAX_NODES];
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
	double q_start_ns;
	double next_quantum;
	uint64_t acc_node[TIER_SIM_MAX_NODES];
	uint64_t wr_node[TIER_SIM_MAX_NODES];
	uint64_t last_acc[TIER_SIM_MAX_NODES], last_wr[TIER_SIM_MAX_NODES];
	int fast_node;			/* a node of tier 0: antagonist's */
	int alloc_order[TIER_SIM_MAX_NODES];
	uint64_t antagonist_bps;

	/* The pages. */
	uint64_t nr_pages;
	uint8_t *page_node;
	uint32_t *node_gen;		/* tier_env.node_gen */
	uint64_t placed_gen;		/* pages placed or moved, ever */
	uint8_t *page_owner;
	uint8_t *flags;			/* THP: a huge unit's on its first page */
	bool thp;
	uint8_t *huge;			/* THP: [units] 1 while one huge page */
	uint64_t *tlb;			/* THP: [TLB_ENTRIES] page + 1 of 4 KiB entries */
	uint64_t tlb_misses;

	/* The migrator (migrator.c). */
	uint64_t splits;
	struct {
		bool on;		/* params' budget_every_policy */
		double rate_bps;	/* bytes per second */
		double tokens;		/* bytes that may move now */
		double last_ns;		/* application time of the last refill */
	} budget;
	uint32_t move_gen;		/* THP: sim_move call, for the statuses */
	uint32_t *unit_gen;		/* [units] call that last decided a unit */
	int *unit_status;		/* [units] its status in that call */
	uint32_t *last_move_ms;
	uint8_t *prev_rank;

	/* Time and work. app_ns is the application's time, stalls included
	 * (AMAT's); policy_cpu_ns is the tiering CPU of trackers, mover and
	 * splits wherever it runs. The cost model (engine.c, results) splits
	 * them by the core each runs on: */
	double app_ns;
	double policy_cpu_ns;
	struct {
		/* Stalls in app_ns: faults, TLB shootdowns, task-context scans
		 * (app_ns less this is the application's time with no cost). */
		double stall_ns;
		/* Work in the application's threads that app_ns leaves out:
		 * moves in the fault path (policy_cpu_ns holds their CPU too),
		 * the oracle's shootdowns (its moves are free for AMAT). */
		double task_ns;
		/* Of policy_cpu_ns, the part that ran in the application's
		 * threads (the fault path's moves): not a daemon's. */
		double task_cpu_ns;
		/* Of policy_cpu_ns, the mover's (pages moved, huge pages
		 * split): what a paced policy's steps leave out of their
		 * steady cost (core/pace.h). */
		double move_cpu_ns;
	} cost;
	uint64_t work_units;
	/* The CPU costs above (MIGRATE_PAGE_CPU_NS ...) times the machine's
	 * cpu_slowdown, ns (memory.c, with the machine). */
	struct {
		double migrate_page, shootdown, split;
		double hint_fault, hint_scan_page;
		double idle_scan_page, softdirty_clear_page, softdirty_fault;
		double damon_check, sample, work_unit;
	} cpu_ns;
	uint64_t accesses, writes;
	struct tier_rng rng;

	/* The trackers (tracker.c, tracker_damon.c). */
	unsigned trackers;		/* TRK_* */
	char tracker_names[64];
	struct tier_obs *obs;		/* collected since the last collect() */
	size_t nr_obs, cap_obs;
	struct {
		struct tier__sim_damon_region *regions;
		size_t nr_regions;
		double next_sample_ns, next_aggr_ns;
		/* The policy reads DAMON as tierd's Linux backend does: one
		 * snapshot a collect, the latest aggregation's regions
		 * (tried_regions), not every aggregation since the last
		 * (struct tier_policy_ops's damon_snapshot). The last one
		 * still undelivered is obs[snap_first, snap_first + snap_n). */
		bool snapshot;
		size_t snap_first, snap_n;
	} damon;
	struct {
		/* [0] loads, or every access when the policy has no store
		 * stream; [1] stores when it has (store_stream). */
		uint64_t countdown[2];
		uint64_t period[2];	/* simulated accesses per sample */
		bool store_stream;
	} sample;
	/* The daemon's soft-dirty rounds (tracker_sd.c). */
	struct {
		bool started;
		double t0_ns;			/* the round's clear */
		uint64_t period_us;		/* the round's */
		uint64_t brk_us[TIER__SD_MAX_BRK], prev_brk_us[TIER__SD_MAX_BRK];
		unsigned nbrk, nprev;		/* reads this round, in the last whole one */
		unsigned whole_rounds;
		uint64_t written_last;		/* pages the last round saw written */
		uint64_t faults, faults_t0;	/* write-protect faults taken, ever; at the clear */
		double cpu_round_ns;		/* its reads' CPU this round */
		struct tier__sd_scan scan;
		struct tier__sd_runs seen, prev, scratch;
		struct tier__sd_pairs pairs;	/* the picture, made at the last read */
		uint64_t pic_gen;
		struct tier__sd_fits fits;
		struct tier__sd_pic pic;	/* ... rated at a collect */
		struct tier__obs_sums sums;	/* its runs per DAMON region (the merge) */
		struct tier_linux_addr_obs *acc;	/* DAMON's regions for the merge */
		size_t cap_acc;
		bool obs_valid;
		uint64_t obs_gen, obs_placed;	/* pic_gen, placed_gen rated at */
		bool damon_seen;
		double damon_first_ns;		/* DAMON's first report (the hold) */
		uint64_t lost;			/* observations with no room */
	} sd;
	struct {
		double next_scan_ns;
		double period_ns;
		uint64_t pos;
		double *chunk_unmap_ns;	/* [chunks] when the scan last unmapped it */
	} hint;

	/* The policy, or the oracle (oracle.c). */
	const struct tier_policy_ops *pol;
	void *pol_priv;
	struct tier_env env;
	struct {
		bool enabled;
		uint64_t next_acc;	/* a trace's next epoch starts here */
		double *weights, *prev_weights;
		double wfrac;		/* store share the last placement assumed */
		uint64_t *order;
		uint8_t *prev_node;	/* [pages] placement before an epoch's */
	} oracle;

	/* The workload. */
	const struct tier_sim_workload_ops *wl;
	void *wl_priv;
	struct tier_sim_access *buf;	/* [BATCH] */
	double access_ns;		/* the workload's own time per access; 0: latency */

	/* Results. */
	uint64_t moved[TIER_SIM_MAX_TIERS][TIER_SIM_MAX_TIERS];
	uint64_t pingpong;
	uint64_t fast_accesses;
	size_t nr_tenants;
	uint64_t tenant_acc[TIER_SIM_MAX_TENANTS];
	double tenant_ns[TIER_SIM_MAX_TENANTS];
	uint64_t tenant_peak[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];
	struct tier_groups groups;

	/* Run state (engine.c). */
	struct tier_sim_params p;
	unsigned machine_cores, app_cores;	/* the cost model's */
	bool in_task;				/* env.in_task: the policy works
						 * in the application's thread */
	double duration_ns;
	double next_epoch, next_progress;
	bool ended;
	/* Where the run stood at half its duration: the second half's AMAT
	 * (result's amat_second_half_ns) leaves the warm-up out. */
	struct {
		bool taken;
		double app_ns;
		uint64_t acc;
	} half;
	/* The current epoch (timeline.c): where it started. */
	struct {
		double start_ns;
		uint64_t acc, fast;
		double app_ns;
		uint64_t promoted, demoted;
	} ep;
};

/* Index of page p's accessed/dirty/protnone flags: its unit's first page
 * while the unit is one huge page (the bits sit in the PMD). */
static inline uint64_t tier__sim_flag_idx(const struct tier_sim *s, uint64_t p)
{
	return s->thp && s->huge[p >> THP_SHIFT] ? p & ~(uint64_t)(THP_PAGES - 1) : p;
}

/* Pages of the 2 MiB unit holding page p: [*base, *base + return). */
static inline uint64_t tier__sim_unit_range(const struct tier_sim *s, uint64_t p,
					    uint64_t *base)
{
	uint64_t b = p & ~(uint64_t)(THP_PAGES - 1);

	*base = b;
	return s->nr_pages - b < THP_PAGES ? s->nr_pages - b : THP_PAGES;
}

/* --- memory.c ------------------------------------------------------------ */

extern const struct tier_mem_ops tier__sim_mem_ops;

/* Builds the machine of p (preset or machine file, ratio, unit) and its
 * topology, and the model's per-node figures. fit_pages, when not 0, is
 * the footprint of a workload with a size of its own (a trace): without
 * p->unit_bytes the ratio units are sized from it (tier_sim_machine_fit).
 * Returns 0 or -errno, err set. */
int tier__sim_machine_setup(struct tier_sim *s, const struct tier_sim_params *p,
			    uint64_t fit_pages, struct tier_err *err);
/* Sizes the pages to the workload's footprint and first-touches them all
 * in a random order (s->wl and s->thp set). Returns 0 or -errno, err set. */
int tier__sim_pages_setup(struct tier_sim *s, struct tier_err *err);
/* Capacity of tier rank, in pages. */
uint64_t tier__sim_tier_cap(const struct tier_sim *s, size_t rank);
/* Loaded latency of a node of idle latency idle_ns at utilisation util. */
double tier__sim_loaded_latency(double idle_ns, double util);
/* Puts page on node, keeping the nodes' counts; no costs. */
void tier__sim_place_page(struct tier_sim *s, uint64_t page, int node);
/* First touch of page p by tenant (with THP, of its unit). Returns 0 or
 * -ENOMEM. */
int tier__sim_first_touch(struct tier_sim *s, uint64_t p, uint8_t tenant);
/* Adds the traffic of the accesses since the last call to the quantum's
 * bandwidth and the fast-tier and store counts. */
void tier__sim_account_traffic(struct tier_sim *s);
/* Ends every latency-model quantum that application time has passed. */
void tier__sim_quanta(struct tier_sim *s);

/* --- replay.c ------------------------------------------------------------ */

/* Replays n accesses: first touch, latency, trackers' bits and faults.
 * Returns 0, -ERANGE (a page beyond the footprint) or -ENOMEM. */
int tier__sim_replay(struct tier_sim *s, const struct tier_sim_access *a, size_t n);

/* --- migrator.c ---------------------------------------------------------- */

extern const struct tier_migrator_ops tier__sim_migrator_ops;

/* A TLB shootdown: the application stalls (app_ns, cost.stall_ns). */
void tier__sim_shootdown(struct tier_sim *s);

/* --- tracker.c, tracker_damon.c ----------------------------------------- */

extern const struct tier_tracker_ops tier__sim_tracker_ops;

/* Sets s->trackers from a list of tier_sim_trackers names ("none": no
 * tracker). Returns 0 or -EINVAL, err set. */
int tier__sim_trackers_parse(struct tier_sim *s, const char *list, struct tier_err *err);
/* Readies the trackers s->trackers names. Returns 0 or -errno, err set. */
int tier__sim_trackers_init(struct tier_sim *s, struct tier_err *err);
/* Runs the trackers' timed work due at the current application time.
 * Returns 0 or -errno, err set. */
int tier__sim_trackers_tick(struct tier_sim *s, struct tier_err *err);
/* Queues one observation for the next collect(). Returns 0 or -ENOMEM. */
int tier__sim_obs_push(struct tier_sim *s, const struct tier_obs *o);
/* A hint fault on page p (flags at fp) by an access t_ns into the batch.
 * Returns 0 or -ENOMEM. */
int tier__sim_hint_fault(struct tier_sim *s, uint64_t p, uint64_t fp, bool write, double t_ns);
/* A sampled access to page p; rearms the countdown of its stream (the
 * store stream for a store when the policy has one). Returns 0 or
 * -ENOMEM. */
int tier__sim_sample(struct tier_sim *s, uint64_t p, bool write);

/* DAMON-like regions over all pages, and their sampling and aggregation
 * due at the current application time. Return 0 or -ENOMEM. */
int tier__sim_damon_init(struct tier_sim *s);
int tier__sim_damon_tick(struct tier_sim *s);

/* --- tracker_sd.c -------------------------------------------------------- */

/* The soft-dirty rounds' reads and clears that are due. 0 or -ENOMEM. */
int tier__sim_sd_tick(struct tier_sim *s);
/* Pushes the picture's observations (merged with DAMON's latest regions
 * where DAMON runs in snapshot mode). 0 or -ENOMEM. */
int tier__sim_sd_collect(struct tier_sim *s);
void tier__sim_sd_release(struct tier_sim *s);

/* --- oracle.c ------------------------------------------------------------ */

/* Allocates the oracle's per-page state (s->wl set). Returns 0, -EINVAL
 * (a workload with neither weights nor counts_ahead) or -ENOMEM, err set. */
int tier__sim_oracle_init(struct tier_sim *s, struct tier_err *err);
/* Before each batch: at the start of an epoch (100 ms of simulated time
 * with weights; every TIER_SIM_ORACLE_EPOCH_ACCESSES accesses of a trace),
 * places pages for that epoch's access distribution. Returns 0 or -errno,
 * err set. */
int tier__sim_oracle_step(struct tier_sim *s, uint64_t now_us, struct tier_err *err);
void tier__sim_oracle_release(struct tier_sim *s);

/* --- timeline.c ---------------------------------------------------------- */

void tier__sim_timeline_header(const struct tier_sim *s, FILE *f);
/* Writes the epoch's row (f NULL: none) and starts the next epoch. */
void tier__sim_timeline_row(struct tier_sim *s, FILE *f);
/* Pages per tenant and tier now. */
void tier__sim_tenant_pages(const struct tier_sim *s,
			    uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS]);
/* Keeps each tenant's most pages per tier after the settling time. */
void tier__sim_tenant_census(struct tier_sim *s);

#endif
