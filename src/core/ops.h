/* ops.h - what the core asks of a backend.
 *
 * The core never touches the OS. A backend (src/backend/linux: sysfs,
 * procfs, DAMON, move_pages; src/backend/sim: the simulated machine) hands
 * the core small ops tables, after DAMON's struct damon_operations: a name
 * plus documented hooks. Each table travels with an opaque `priv` pointer
 * that the backend owns. All of them are here: the topology source, the
 * clock, the hotness tracker (with the observations it produces), the page
 * migrator and the nodes' memory. The policies' own table is in policy.h,
 * and what a driver needs of a whole machine in world.h.
 */
#ifndef TIER_CORE_OPS_H
#define TIER_CORE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/topology.h"

/* Topology source: describes the machine's memory nodes. */
struct tier_topology_ops {
	const char *name;
	/* Required. Fills topo's nodes (ids, CPUs, memory, distances, HMAT,
	 * kernel tier), not its tiers; topo arrives initialised and empty.
	 * Returns 0 or -errno with err saying what and where (a path, a
	 * preset name). */
	int (*read)(void *priv, struct tier_topology *topo, struct tier_err *err);
};

/* Clock: monotonic time, so the simulator can run on virtual time. */
struct tier_clock_ops {
	const char *name;
	/* Required. Monotonic microseconds since an arbitrary origin. */
	uint64_t (*now_us)(void *priv);
};

/* What a tracker can report. A policy names the kinds it uses. */
enum tier_obs_kind {
	/* Pages [page, page + nr_pages) were found accessed in `count` of
	 * `max` checks during the last `interval_us` (DAMON regions:
	 * count = nr_accesses, max = aggregation / sample interval;
	 * an accessed-bit scan of one page: max = 1). */
	TIER_OBS_ACCESSED = 1u << 0,
	/* Like ACCESSED for writes only (soft-dirty). */
	TIER_OBS_WRITTEN = 1u << 1,
	/* One sampled access to `page` (PEBS/IBS-like); count = the sampling
	 * period (accesses it stands for); write tells a store. */
	TIER_OBS_SAMPLE = 1u << 2,
	/* A NUMA hint fault on `page`: it was touched latency_us after its
	 * range was unmapped by the scanner. */
	TIER_OBS_HINT_FAULT = 1u << 3,
};

struct tier_obs {
	uint64_t page;
	uint32_t nr_pages;
	uint16_t kind;		/* one enum tier_obs_kind */
	uint16_t write;		/* SAMPLE: 1 for a store; ACCESSED/WRITTEN:
				 * TIER_OBS_STANDING or 0 */
	uint32_t count;
	uint32_t max;
	uint32_t latency_us;	/* HINT_FAULT */
	uint32_t interval_us;	/* ACCESSED/WRITTEN: time the checks covered */
};

/* An ACCESSED or WRITTEN observation whose rate is a tracker's standing
 * estimate of each page's own rate, restated at every collect while it
 * holds (the Linux soft-dirty tracker's picture), rather than what one
 * scan saw: a policy may take it as the least the page's rate is, at once,
 * whatever other trackers see of it (the tierd policy adds it to nothing;
 * the page's rate is the larger of it and the others'). */
#define TIER_OBS_STANDING 1u

/* ... whose rate is a lower bound: the tracker cannot tell faster pages
 * from it (a soft-dirty picture's pages first written before the first
 * read after each clear). A merge of trackers may give such pages the
 * accesses another tracker saw over them and nothing else explains
 * (src/backend/linux/obs_merge.c); policies may take it as any rate. */
#define TIER_OBS_AT_LEAST 2u

/* The accesses one observation stands for, per page of it - the one
 * estimate the policies and the heatmap (core/heatmap.h) read:
 *  - ACCESSED/WRITTEN, seen in k of m checks (max 0 counts as 1): an access
 *    rate, taken as Poisson, leaves a check empty with probability 1 - k/m,
 *    so -ln(1 - k/m) * m accesses; k = m (every check saw one) counts as if
 *    half a check missed, k/m = 1 - 0.5/m. 10 of 20: 13.9; 20 of 20: 73.8.
 *  - SAMPLE: count, the sampling period (accesses one sample stands for).
 *  - HINT_FAULT: touched latency_us after its range was unmapped, about
 *    one access per latency_us from then on: 1 + 1e5 / (latency_us + 1),
 *    that rate over a 100 ms step plus the faulting access itself.
 *    Touched at once: 100001; 100 ms later: about 2.
 *  - any other kind: 0.
 * No accesses seen (count 0) gives 0. */
double tier_obs_accesses(const struct tier_obs *o);

/* Hotness tracker: produces observations. */
struct tier_tracker_ops {
	const char *name;	/* "damon", "idle", "softdirty", "samples", "hintfault" */
	unsigned kinds;		/* enum tier_obs_kind bits it produces */
	/* Required. Hands the observations gathered since the last call to
	 * sink (in batches); returns 0 or -errno with err set. */
	int (*collect)(void *priv,
		       void (*sink)(void *ctx, const struct tier_obs *obs, size_t n),
		       void *ctx, struct tier_err *err);
};

/* Page migrator. */
struct tier_migrator_ops {
	const char *name;
	/* Required. Moves pages[i] to nodes[i] for i < n; status[i] receives
	 * the page's node afterwards, or -errno: -ENOMEM (target node full),
	 * -EBUSY (try later), -ENOENT (page not present), -EFAULT (no such
	 * page). Returns the number of pages moved, or -errno for a failure of
	 * the whole call. Never blocks the workload for long: callers keep n
	 * bounded (see tier_env.max_batch). */
	long (*move)(void *priv, const uint64_t *pages, const int *nodes,
		     int *status, size_t n);
	/* Optional. Splits the huge page holding page into base pages in
	 * place (nothing moves); env->page_huge shows it afterwards. Returns
	 * 0, -EINVAL (not in a huge page), -EFAULT (no such page), -EBUSY
	 * (try later) or -EOPNOTSUPP. */
	int (*split)(void *priv, uint64_t page);
};

/* Memory state of the nodes. */
struct tier_mem_ops {
	const char *name;
	/* Required. Capacity and free pages of node (in page units).
	 * Returns 0 or -errno (-ENOENT: no such node). */
	int (*node_pages)(void *priv, int node, uint64_t *total, uint64_t *free);
	/* Optional. The node's access latency under its current load (ns),
	 * as measured (memory controller counters, a simulated machine's
	 * model). Returns 0, -ENOENT, or -EOPNOTSUPP when not measurable. */
	int (*node_latency_ns)(void *priv, int node, double *ns);
	/* Optional. Whether a page table maps page young (accessed since
	 * the last call for it), clearing that: what reclaim's
	 * folio_referenced() does to each page it looks at, at that cost.
	 * For policies that read accessed bits only of the pages they look
	 * at, not in a periodic scan of all. Returns 1, 0, or -errno
	 * (-EFAULT: no such page). */
	int (*test_and_clear_young)(void *priv, uint64_t page);
};

/* Reads the topology through ops, validates it and ranks it into tiers
 * (override as in tier_topology_rank(); NULL/0 for none). On failure topo
 * is left empty. Returns 0 or -errno with err set. */
int tier_topology_discover(const struct tier_topology_ops *ops, void *priv,
			   const struct tier_tier_override *override,
			   size_t nr_override, struct tier_topology *topo,
			   struct tier_err *err);

/* tier_topology_discover() with the ranking spec asks for (NULL: none),
 * and rank_source set to say where the order came from. The one way
 * every front end and world turns a configuration into tiers. */
int tier_topology_build(const struct tier_topology_ops *ops, void *priv,
			const struct tier_topology_spec *spec, struct tier_topology *topo,
			struct tier_err *err);

#endif
