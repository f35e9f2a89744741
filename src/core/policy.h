/* policy.h - the placement policy interface: what a policy sees, what it may
 * do, and how it is driven. The same policies run in tierd (over the Linux
 * backend) and in tiersim (over the simulated machine).
 *
 * The managed memory is a dense array of pages [0, nr_pages): the backend
 * maps its own addresses (a process's virtual pages, a simulated tenant's
 * pages) to dense ids and back. Each page's current node is in
 * env->page_node, kept up to date by the backend. A policy learns about
 * accesses only through observations (struct tier_obs) that a tracker
 * produces and the loop hands to policy->observe(); it acts only through
 * the migrator. Time comes from the clock.
 *
 * Driving loop (daemon and simulator alike), every interval:
 *   tracker->collect(...) -> policy->observe(obs...)   (zero or more times)
 *   policy->tick(now)     -> migrator->move(...)       (within the budget)
 */
#ifndef TIER_CORE_POLICY_H
#define TIER_CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/groups.h"
#include "core/ops.h"
#include "core/topology.h"

/* page_node value of a page that is not present (never touched, swapped). */
#define TIER_NODE_NONE 0xff

/* env->node_gen: one counter per 2^TIER_NODE_GEN_SHIFT pages (2 MiB of
 * 4 KiB pages). */
#define TIER_NODE_GEN_SHIFT 9

/* What an application or operator asked for a page (libtier's
 * enum tier_advice; the values are the same and never change). */
enum tier_hint {
	TIER_HINT_NONE = 0,	/* the policy decides */
	TIER_HINT_HOT = 1,	/* treat as hot: promote first, demote last */
	TIER_HINT_COLD = 2,	/* treat as cold: demote first, never promote */
	TIER_HINT_PIN_FAST = 3,	/* keep in the fastest tier, whatever its heat */
	TIER_HINT_LATENCY = 4,	/* latency-critical: as PIN_FAST */
	TIER_HINT_BANDWIDTH = 5,/* bandwidth-bound: no preference yet (as NONE) */
	TIER_HINT__COUNT,
};

/* Everything a policy may use; owned by the driving loop, valid for the
 * policy's lifetime. Policies never write through it. */
struct tier_env {
	const struct tier_topology *topo;	/* ranked tiers */
	uint64_t nr_pages;			/* managed pages */
	const uint8_t *page_node;		/* [nr_pages], TIER_NODE_NONE = absent */
	/* Optional (NULL: not kept). [(nr_pages >> TIER_NODE_GEN_SHIFT) + 1]:
	 * bumped by the backend whenever it changes a page_node byte of
	 * those pages (a move of the policy's or of anyone else, a page
	 * come or gone), so that a policy keeping counts of its own recounts
	 * only what changed. Moves with page_node (resize()). */
	const uint32_t *node_gen;
	const uint8_t *page_owner;		/* [nr_pages] tenant/cgroup id, or NULL */
	const uint8_t *page_hint;		/* [nr_pages] enum tier_hint, or NULL:
						 * no page has one */
	/* Control groups' tier rules over page_owner (core/groups.h), or
	 * NULL: no rules. The backend may change them between steps. */
	const struct tier_groups *groups;
	unsigned page_shift;			/* 12 for 4 KiB pages */
	/* Huge pages: page ids [k << huge_shift, (k + 1) << huge_shift) are
	 * one huge page while page_huge[k] is nonzero (9: 2 MiB of 4 KiB
	 * pages). A move of any of its pages moves all of them. The backend
	 * keeps it current. page_huge NULL: base pages only. */
	unsigned huge_shift;
	const uint8_t *page_huge;
	unsigned obs_kinds;			/* what the tracker will deliver */

	const struct tier_migrator_ops *migrator;
	void *migrator_priv;
	const struct tier_mem_ops *mem;
	void *mem_priv;
	const struct tier_clock_ops *clock;
	void *clock_priv;

	uint64_t budget_bytes_per_s;		/* migration budget; 0 = none */
	/* The first tick may spend a second's budget at once (a full token
	 * bucket): set by a world whose first tick comes after a pause of
	 * its own (the daemon catalogues the address space first). */
	bool budget_starts_full;
	size_t max_batch;			/* pages per move() call */
	uint64_t interval_us;			/* how often tick() is called */
	/* How many times slower than the cost model's CPU the machine's CPU
	 * runs kernel work: a policy that models a kernel thread's rate in
	 * CPU time per page (kernel-nb's kswapd) divides it by this. 0 or 1:
	 * as modelled (the daemon, every built-in simulated machine). */
	double cpu_slowdown;

	/* Work counter the policy bumps for its own CPU cost: one unit per
	 * page or observation it visits (the loop converts to time). */
	uint64_t *work_units;
	/* Called between batches of moves (core/mover.c), after a collect
	 * (core/loop.c) and between the long parts of the backend's own
	 * work: a point of a step where the world is consistent and may be
	 * read (the daemon answers read-only requests there), never changed.
	 * NULL: none. */
	void (*pause)(void *ctx);
	/* Called by the backend around a wait on the kernel that reads and
	 * changes nothing of the world or the policy (DAMON's snapshot
	 * request): begin true before it, false after; the world may be read
	 * meanwhile. NULL: none. */
	void (*wait)(void *ctx, bool begin);
	void *pause_ctx;		/* pause's and wait's */
	/* True while the policy works in the application's own thread rather
	 * than in a daemon or kernel thread: kernel-nb's promotion runs in
	 * the faulting task (do_numa_page()). The policy sets it around the
	 * migrator calls made there (through this pointer, as work_units; NULL:
	 * the backend does not care); a backend that models CPU costs charges
	 * those moves to the application's cores (tiersim's cost model). */
	bool *in_task;
};

/* What a policy tells about one page (tierctl explain). */
struct tier_page_explain {
	double long_rate;		/* accesses/s, long-term frequency */
	double short_rate;		/* accesses/s, recent momentum */
	double heat;			/* predicted accesses/s */
	double score;			/* heat bent by intent (hints) */
	int target_rank;		/* the tier the policy wants it in; -1 unknown */
	int group;			/* its control group (core/groups.h) */
	uint64_t moved_ago_ms;		/* since it last moved; UINT64_MAX never */
	char last_move[80];		/* why it last moved */
	char verdict[160];		/* why it is where it is, or what holds it back */
};

/* A placement policy. */
struct tier_policy_ops {
	const char *name;
	const char *description;
	/* A named variant of the policy of this name (a patch set never
	 * merged, an older setup): run only where named, never among the
	 * defaults of a comparison. NULL: the policy as its upstream runs it
	 * by default (or tierd's own). */
	const char *variant_of;
	/* Tracker kinds the policy uses, as a mask of enum tier_obs_kind; the
	 * loop picks a tracker that offers at least one. */
	unsigned obs_kinds;
	/* The tracker the policy runs with by default ("damon", "idle",
	 * "softdirty", "samples", "hintfault"). */
	const char *default_tracker;
	/* Preferred tick interval, microseconds (0: the loop's default). */
	uint64_t interval_us;
	/* Sampling trackers: one sample per this many cache-line misses
	 * (perf's sample_period); 0: the tracker's default. */
	uint32_t sample_period_lines;
	/* Sampling trackers: stores sampled as a stream of their own, one
	 * sample per this many stores (a second perf event with its own
	 * sample_period, as HeMem's MEM_INST_RETIRED.ALL_STORES next to its
	 * load events); sample_period_lines then counts loads only. 0: loads
	 * and stores share the one stream. */
	uint32_t sample_period_store_lines;
	/* Its steps keep to a CPU share as tierd's daemon keeps them
	 * (core/pace.h): tiersim paces them by their modelled CPU at the
	 * share daemon.max_cpu_percent gives (tier_sim_params's
	 * max_cpu_percent). false: a step every interval, whatever it costs
	 * (the peers, as their upstreams run them). */
	bool paced;
	/* DAMON's regions as a daemon reads them: one snapshot a collect,
	 * the latest aggregation's (tried_regions), whatever the steps'
	 * spacing. false: every aggregation since the last collect (as a
	 * DAMOS scheme applied each aggregation sees them). */
	bool damon_snapshot;
	/* Required. Builds the policy's state over env. Returns 0 or -errno. */
	int (*create)(const struct tier_env *env, void **priv, struct tier_err *err);
	/* Required. */
	void (*destroy)(void *priv);
	/* Optional. Observations since the last call. */
	void (*observe)(void *priv, const struct tier_obs *obs, size_t n);
	/* Required. Decide and issue moves through env->migrator.
	 * Returns 0 or -errno. */
	int (*tick)(void *priv, uint64_t now_us);
	/* Optional. Goes on with the last tick's decisions: the moves the
	 * migration budget held back, from the same scores, with the budget
	 * accrued since; no observations in between. A world whose ticks
	 * come further apart than the interval (the daemon's CPU share
	 * spaces them) calls it in between while held_back() says so: moves
	 * are bounded by the budget, not by what a look costs. Returns 0 or
	 * -errno. */
	int (*resume)(void *priv, uint64_t now_us);
	/* Optional (with resume). Whether the last tick or resume left moves
	 * it wanted for want of budget. */
	bool (*held_back)(void *priv);
	/* Optional. The managed pages grew to env->nr_pages (a daemon's
	 * processes mapped more memory; env->page_node may have moved, and
	 * holds the new pages' nodes where they are known: a policy may
	 * count them once, here, and recheck them only slowly after). A
	 * policy without it is re-created, losing its state. Returns 0 or
	 * -ENOMEM (the policy keeps working on its old size). */
	int (*resize)(void *priv);
	/* Optional. Pages [first, first + nr) went away (unmapped, process
	 * exited); their ids may be reused. Forget their state. */
	void (*forget)(void *priv, uint64_t first, uint64_t nr);
	/* Optional. Fills out for one page. Returns 0, -ENOENT (no such
	 * page) or -EOPNOTSUPP. */
	int (*explain)(void *priv, uint64_t page, uint64_t now_us,
		       struct tier_page_explain *out);
	/* Optional. Bytes of the policy's own metadata. */
	size_t (*metadata_bytes)(void *priv);
};

/* The policies built into the core, terminated by NULL. */
extern const struct tier_policy_ops *const tier_policies[];

const struct tier_policy_ops *tier_policy_find(const char *name);

/* Helpers for policies. */

/* Rank of the node a page sits on, or -1 when absent. node_rank maps node
 * ids to ranks (see tier_node_rank_map). */
static inline int tier_page_rank(const struct tier_env *env, const int *node_rank,
				 uint64_t page)
{
	uint8_t n = env->page_node[page];

	return n == TIER_NODE_NONE ? -1 : node_rank[n];
}

/* Fills map[TIER_MAX_NODES] with the rank of each node id (-1 for none). */
void tier_node_rank_map(const struct tier_topology *topo, int map[TIER_MAX_NODES]);

/* Free pages of each node of the topology into free[node id] (0 for a node
 * whose figures cannot be read); other entries are left alone. */
void tier_node_free_pages(const struct tier_env *env, int64_t free[TIER_MAX_NODES]);

/* Free and total pages of a whole tier (all its nodes). */
int tier_tier_pages(const struct tier_env *env, int rank, uint64_t *total,
		    uint64_t *free);

/* The node of tier `rank` with the most free pages (-1 when the tier has
 * no node). */
int tier_tier_roomiest_node(const struct tier_env *env, int rank);

#endif
