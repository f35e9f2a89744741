/* engine.h - tiersim's engine: replays a workload against the machine model
 * and drives a placement policy through the same ops the daemon uses.
 *
 * Machine model (all in simulated time):
 *  - Each simulated access stands for LINES_PER_ACCESS cache-line
 *    misses issued by an application with as many misses in flight, so one
 *    access advances the application's time by the loaded latency of the
 *    node it hits. AMAT = application time / accesses, stalls included.
 *  - Loaded latency: idle * (1 + 0.5 * r / (1 - r)), r = the node's
 *    bandwidth utilisation in the last millisecond (reads over read
 *    bandwidth plus writes over write bandwidth; application, migration and
 *    antagonist traffic), capped at 0.95. Under load a full fast tier can be
 *    slower than an idle slow one.
 *  - Migration: per page a fixed CPU cost on the mover, 4 KiB read on the
 *    source and written on the target (bandwidth), and a TLB shootdown per
 *    batch that stalls the application.
 *  - Pages are 4 KiB, or with thp 2 MiB units of 512 pages: first touch
 *    places a whole unit, a move of any of its pages moves the unit, and
 *    accessed/dirty bits and hint faults are per unit. A policy may split
 *    a unit into 4 KiB pages (migrator split); their accesses then go
 *    through a modelled TLB and pay a page walk on a miss.
 *  - Trackers with their costs: DAMON-like adaptive regions, accessed-bit
 *    scans, soft-dirty scans, 1-in-N sampled accesses, NUMA hint faults.
 * Costs are the constants in engine_internal.h, with their sources.
 */
#ifndef TIER_SIM_ENGINE_H
#define TIER_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/sim/machine.h"
#include "core/err.h"
#include "core/groups.h"

enum { TIER_SIM_MAX_TIERS = TIER_MAX_TIERS, TIER_SIM_MAX_TENANTS = 8 };

struct tier_sim_params {
	const char *machine;		/* preset name, or a label for preset */
	const struct tier_sim_preset *preset;	/* a machine file's (must outlive
						 * the run); NULL: look machine up */
	const char *ratio;		/* NULL: the preset's */
	uint64_t unit_bytes;		/* capacity of one ratio unit */
	const char *workload;		/* name or trace:FILE */
	const char *policy;		/* core policy name, or "oracle" */
	const char *tracker;		/* NULL: the policy's default */
	uint64_t seed;
	uint64_t duration_us;		/* simulated run length */
	uint64_t budget_bytes_per_s;	/* migration budget; 0: the default */
	/* budget_bytes_per_s binds every move the migrator makes, whatever
	 * the policy (a token bucket of one second's bytes): one budget for
	 * every policy. false: only policies that read env's budget keep to
	 * it (tierd); the peers keep their own limits. */
	bool budget_every_policy;
	bool thp;			/* 2 MiB pages (THP) instead of 4 KiB */
	/* The machine's cores the application runs on (the cost model,
	 * tier_sim_result's slowdown); the others are spare, where kernel
	 * threads and daemons run. 0: every core of the machine (a server
	 * running one workload per socket gives it every core of the socket,
	 * so the tiering work shares them). More than it has: -EINVAL. */
	unsigned app_cores;
	/* A paced policy's CPU share (struct tier_policy_ops's paced: tierd),
	 * % of one core, as the daemon's daemon.max_cpu_percent: its steps
	 * keep to it by their modelled CPU (core/pace.h), half of it with
	 * a DAMON tracker (the kdamond keeps the other half, as in the
	 * daemon). 0: the daemon's default, TIER_SIM_DEFAULT_MAX_CPU_PERCENT.
	 * Other policies step every interval. */
	unsigned max_cpu_percent;
	/* Measure this host's CPU in the loop's steps (policy_step_cpu_s):
	 * the one figure of a result that differs from run to run. */
	bool step_cpu;
	/* The oracle's epoch on a trace, in accesses; 0: the default
	 * (TIER_SIM_ORACLE_EPOCH_ACCESSES), UINT64_MAX: the whole run. */
	uint64_t oracle_epoch_accesses;
	/* Control groups over the workload's tenants (owner id = tenant),
	 * copied at tier_sim_new(); NULL: none. */
	const struct tier_groups *groups;
	/* How to rank the machine's nodes into tiers (an operator's
	 * override, as tierd's configuration gives it); NULL: as the
	 * machine's figures say. Used only while tier_sim_new() runs. */
	const struct tier_topology_spec *topology;
	FILE *timeline;			/* per-epoch CSV, or NULL */
	/* Progress callback (fraction done), or NULL. */
	void (*progress)(void *ctx, double done);
	void *progress_ctx;
};

/* Defaults the command line documents. */
#define TIER_SIM_DEFAULT_UNIT_BYTES (UINT64_C(32) << 20)
#define TIER_SIM_DEFAULT_DURATION_US UINT64_C(20000000)
#define TIER_SIM_DEFAULT_BUDGET UINT64_C(256) << 20	/* bytes/s */
#define TIER_SIM_DEFAULT_MAX_CPU_PERCENT 5u	/* the daemon's default */
/* The oracle's epoch on a trace: 2^20 accesses, 0.1 to 0.25 s of simulated
 * time at 90 to 250 ns an access, about one policy step (100 ms). */
#define TIER_SIM_ORACLE_EPOCH_ACCESSES (UINT64_C(1) << 20)

struct tier_sim_result {
	char machine[64];
	char workload[128];
	char policy[32];
	char tracker[64];
	double amat_ns;
	/* AMAT from half the duration to the end: the run without its first
	 * half's warm-up; 0 when the run ended before half its duration (a
	 * trace) or with no access after it. */
	double amat_second_half_ns;
	double fast_access_ratio;	/* accesses served by tier 0 */
	uint64_t accesses;
	uint64_t footprint_pages;	/* the workload's 4 KiB pages */
	uint64_t fast_tier_pages;	/* capacity of tier 0, 4 KiB pages */
	uint64_t migrated_bytes;
	uint64_t promoted_bytes;
	uint64_t demoted_bytes;
	/* moved_bytes[from][to] by tier rank */
	uint64_t moved_bytes[TIER_SIM_MAX_TIERS][TIER_SIM_MAX_TIERS];
	size_t nr_tiers;
	uint64_t pingpong_pages;	/* moved back within 2 s */
	double policy_cpu_s;		/* policy + tracker + mover CPU */
	double move_page_ns;		/* the cost model's CPU a page move takes */
	/* The cost model: every CPU second of tracking, sampling, faults and
	 * migration is charged to the core it runs on. The simulated stream
	 * is what each of the application's app_cores cores runs (the machine
	 * holds app_cores such streams, and as much tiering work per stream
	 * as the simulation sees); the figures are per stream, in s. */
	unsigned machine_cores;		/* the machine's CPUs */
	unsigned app_cores;		/* those the application runs on */
	double access_s;		/* its time with no cost: the accesses' latency */
	double app_stall_s;		/* faults, shootdowns, task-context work */
	double daemon_cpu_s;		/* kernel threads' and daemons' CPU */
	double daemon_on_app_s;		/* of it, what found no spare core */
	/* (access_s + app_stall_s + daemon_on_app_s) / access_s. */
	double slowdown;
	uint64_t policy_work_units;	/* the policy's own work units (policy.h) */
	uint64_t policy_steps;		/* loop steps (collect, observe, tick) */
	uint64_t policy_resumes;	/* a paced policy's resumes between them */
	bool step_cpu;			/* policy_step_cpu_s measured (params) */
	double policy_step_cpu_s;	/* this host's CPU in those steps */
	double sim_time_s;		/* simulated application time */
	size_t metadata_bytes;
	bool thp;			/* ran with 2 MiB pages */
	uint64_t split_units;		/* THP: huge pages the policy split */
	uint64_t tlb_misses;		/* THP: 4 KiB translations that missed */
	/* Per tenant of the workload (the first TIER_SIM_MAX_TENANTS). */
	size_t nr_tenants;
	struct tier_sim_tenant_result {
		uint64_t accesses;
		double amat_ns;			/* idle-or-loaded latency, stalls apart */
		uint64_t pages[TIER_SIM_MAX_TIERS];	/* at the end, per tier */
		/* Most pages per tier at any 100 ms epoch after the first
		 * TIER_SIM_SETTLE_US (first touch is the kernel's, not the
		 * policy's). */
		uint64_t peak_pages[TIER_SIM_MAX_TIERS];
	} tenant[TIER_SIM_MAX_TENANTS];
};

#define TIER_SIM_SETTLE_US UINT64_C(2000000)

/* Runs one simulation: tier_sim_new(), then the shared driving loop
 * (core/loop.h) stepping every env interval, then tier_sim_result().
 * Returns 0 or -errno with err set (unknown preset, workload or policy; bad
 * ratio; a corrupt trace). */
int tier_sim_run(const struct tier_sim_params *p, struct tier_sim_result *r,
		 struct tier_err *err);

/* The simulated machine as a backend, for a caller that drives the loop
 * itself (tierd --machine sim:PRESET). */
struct tier_sim;

/* Builds machine, workload and trackers from p (p->policy picks the
 * tracker; "oracle" places pages itself). Returns 0 or -errno. */
int tier_sim_new(const struct tier_sim_params *p, struct tier_sim **out,
		 struct tier_err *err);
void tier_sim_destroy(struct tier_sim *s);

/* The env a policy runs over and the tracker feeding it (NULL for the
 * oracle); both live as long as the simulator. */
struct tier_env *tier_sim_env(struct tier_sim *s);
const struct tier_tracker_ops *tier_sim_tracker(struct tier_sim *s, void **priv);
/* The policy p->policy named (NULL for the oracle). */
const struct tier_policy_ops *tier_sim_policy(const struct tier_sim *s);

/* Runs the workload up to simulated time until_us. Returns 1 while there is
 * more to run, 0 when the run is over (duration reached, trace ended),
 * -errno with err set on failure. */
int tier_sim_advance(struct tier_sim *s, uint64_t until_us, struct tier_err *err);
uint64_t tier_sim_now_us(const struct tier_sim *s);

/* Figures so far; policy_metadata_bytes is the policy's own. */
void tier_sim_result(struct tier_sim *s, size_t policy_metadata_bytes,
		     struct tier_sim_result *r);

/* Names of the trackers the simulator offers, NULL-terminated. */
extern const char *const tier_sim_trackers[];

#endif
