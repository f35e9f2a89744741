/* peers.h - internals of the peer policies (hemem.c, memtis.c,
 * memtierd_heat.c) that their unit tests inspect or configure. Not a public
 * interface: the policies are used through tier_policy_find() like any other.
 */
#ifndef TIER_CORE_POLICIES_PEERS_H
#define TIER_CORE_POLICIES_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/policy.h"

/* --- HeMem ---------------------------------------------------------------- */

enum tier_hemem_count {
	TIER_HEMEM_READS,	/* sampled loads (DRAM + NVM events) */
	TIER_HEMEM_WRITES,	/* sampled stores */
};

/* A 2 MiB region's sampled count as HeMem would see it after its lazy
 * cooling: the raw count shifted by the global clock's advance since the
 * region's last sample. */
uint32_t tier__hemem_count(const void *priv, uint64_t region, enum tier_hemem_count which);
/* Whether the region sits on a hot list. */
bool tier__hemem_is_hot(const void *priv, uint64_t region);
/* The global cooling clock (advances each time a count passes the cooling
 * threshold). */
uint64_t tier__hemem_clock(const void *priv);

/* --- MEMTIS --------------------------------------------------------------- */

/* Current hot and warm thresholds (histogram bin indices). */
unsigned tier__memtis_hot_threshold(const void *priv);
unsigned tier__memtis_warm_threshold(const void *priv);
/* A page's total_accesses as stored (cooling is applied lazily). */
uint32_t tier__memtis_accesses(const void *priv, uint64_t page);
/* The memcg cooling clock (one tick per cooling). */
unsigned tier__memtis_cooling_clock(const void *priv);
/* Pages in histogram bin `bin` (0..15). */
uint64_t tier__memtis_histogram(const void *priv, unsigned bin);

/* Huge-page splitting: the values the policy runs with (memtis.c cites
 * the upstream source of each). */
struct tier_memtis_split_params {
	unsigned thres_split;		/* htmm_thres_split (0: no splits) */
	unsigned split_period;		/* htmm_split_period: usage shift */
	unsigned gamma_tenths;		/* htmm_gamma */
	unsigned dram_latency_ns;	/* DRAM_ACCESS_LATENCY */
	unsigned slow_latency_ns;	/* NVM_ACCESS_LATENCY (cxl mode off) */
	unsigned max_splits_per_pass;	/* deferred_split_scan_for_htmm nr_max */
	unsigned nr_skew_bins;		/* access_map entries */
	unsigned no_split_threshold;	/* split_threshold meaning "none" */
	unsigned very_hot_idx;		/* meta bin from which skewness is 0 */
	unsigned skew_scale;		/* skewness divisor */
	unsigned ehr_pct;		/* share of may_hot hits taken as eHR */
	unsigned rhr_gain_pct;		/* real hits must reach this % after a split */
};

void tier__memtis_split_defaults(struct tier_memtis_split_params *sp);
/* get_skew_idx(): the access_map bin of a skewness value. */
unsigned tier__memtis_skew_idx(uint64_t num);

/* One huge page as the policy tracks it. */
struct tier_memtis_huge {
	uint32_t accesses;	/* meta total_accesses */
	unsigned idx;		/* its histogram bin */
	unsigned skewness_idx;
	unsigned hot_utils;
	bool active;
	bool queued;		/* on the split queue */
};

/* Fills *out for huge page `unit` (page ids unit << huge_shift ...);
 * false when the policy does not track it as one (split, or base pages). */
bool tier__memtis_huge(const void *priv, uint64_t unit, struct tier_memtis_huge *out);
void tier__memtis_split_state(const void *priv, unsigned *split_threshold, int64_t *nr_split,
			      int64_t *nr_split_tail, unsigned *thres_split);

/* --- memtierd heat -------------------------------------------------------- */

enum { TIER_MTD_MAX_CLASSES = 64, TIER_MTD_MAX_NODES = 8 };

/* The heat policy's configuration (memtierd's PolicyHeatConfig, its
 * HeatmapConfig, MoverConfig and the tracker's region size), units in the
 * names. tier__memtierd_heat_defaults() fills the values the registered
 * "memtierd-heat" policy runs with. */
struct tier_memtierd_heat_config {
	uint64_t interval_ms;			/* IntervalMs: heat round period */
	uint64_t pages_in_region;		/* tracker PagesInRegion */
	uint64_t max_count_per_region;		/* tracker MaxCountPerRegion, 0 = all */
	double heat_max;			/* HeatMax */
	double heat_retention;			/* HeatRetention, per second */
	unsigned heat_classes;			/* HeatClasses */
	/* HeatNumas: node ids per class, in the configured order. */
	int heat_numas[TIER_MTD_MAX_CLASSES][TIER_MTD_MAX_NODES];
	size_t nr_heat_numas[TIER_MTD_MAX_CLASSES];
	/* NumaSize: a cap in pages per node id; < 0 = not configured. */
	int64_t numa_size_pages[TIER_MAX_NODES];
	/* Upstream (17dc462) also enters every HeatNumas node into numaSize
	 * as unlimited, which selects the FillFastFree path whenever
	 * HeatNumas is set: true by default. false = earlier upstream, the
	 * selection the guest measurements show (FillFastFree only with a
	 * NumaSize): memtierd-heat-gated. */
	bool seed_numa_size_from_heat_numas;
	uint64_t mover_interval_ms;		/* Mover IntervalMs */
	uint64_t mover_bandwidth_mbps;		/* Mover Bandwidth, MB/s; 0 moves nothing */
};

void tier__memtierd_heat_defaults(const struct tier_env *env,
				  struct tier_memtierd_heat_config *cfg);
/* Creates the policy with cfg (copied). Returns 0 or -errno with err set
 * (-EINVAL: a bad configuration, -ENOMEM). */
int tier__memtierd_heat_create(const struct tier_env *env,
			       const struct tier_memtierd_heat_config *cfg, void **priv,
			       struct tier_err *err);
/* Heat of the range holding page (0 when not in the heatmap yet). */
double tier__memtierd_heat_of(const void *priv, uint64_t page);
/* Mover tasks queued (memtierd's Mover.TaskCount()). */
size_t tier__memtierd_tasks(const void *priv);

/* --- damon --------------------------------------------------------------- */

/* The parameters of the DAMOS schemes (damon.c cites each); units in the
 * names. */
struct tier_damon_config {
	uint64_t apply_interval_us;	/* --damos_apply_interval */
	uint64_t quota_reset_us;	/* --damos_quota_interval */
	uint64_t quota_sz_bytes;	/* --damos_quota_space */
	unsigned weight_sz, weight_nr_accesses, weight_age;	/* quota weights */
	unsigned hot_min_access_pct;	/* migrate_hot: --damos_access_rate MIN max */
	unsigned cold_max_access_pct;	/* migrate_cold: --damos_access_rate 0% MAX */
	uint64_t free_goal_bp;		/* migrate_cold goal: node_mem_free_bp */
	uint64_t used_goal_bp;		/* migrate_hot goal: node_mem_used_bp */
	/* The two goals above tune each scheme's effective quota; false:
	 * no goals, the effective quota is the size quota itself. */
	bool quota_goals;
};

/* The configuration a damon (or damon-fixed-quota) policy runs with. */
const struct tier_damon_config *tier__damon_config(const void *priv);

#endif
