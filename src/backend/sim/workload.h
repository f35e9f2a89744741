/* workload.h - simulated workloads: deterministic, seeded access generators
 * (and recorded traces) that the engine replays against the machine model.
 *
 * Sizes scale with the machine's fastest tier (fast_pages, F): most
 * workloads have a footprint of 4F, so a 1:4 machine can hold them all and
 * the policy decides which quarter sits in the fast tier. Phases are in
 * simulated time, so a policy's reaction speed shows.
 */
#ifndef TIER_SIM_WORKLOAD_H
#define TIER_SIM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/sim/access.h"
#include "core/err.h"

struct tier_sim_workload_params {
	uint64_t seed;
	uint64_t fast_pages;		/* F: capacity of the fastest tier */
	uint64_t total_pages;		/* capacity of the whole machine */
	uint64_t duration_us;		/* planned run length (simulated) */
	uint64_t fast_bw_bytes_per_s;	/* the fastest tier's bandwidth */
	const char *arg;		/* "trace:FILE" -> "FILE"; "NAME:k=v[:k=v]"
					 * -> "k=v[:k=v]"; else NULL */
};

struct tier_sim_workload_ops {
	const char *name;
	const char *description;
	/* Parameters the workload takes after its name, with their defaults
	 * ("hot=0.4:share=0.9"); NULL: none. */
	const char *params;
	/* The footprint is the workload's own (a trace), not taken from the
	 * machine: the engine creates the workload before the machine (the
	 * params' machine figures are then 0) and sizes the machine from it. */
	bool own_footprint;
	/* Sized for one machine, not from the machine (gups-guest): compare
	 * runs it only when --workloads names it. */
	bool named_only;
	/* Required. */
	int (*create)(const struct tier_sim_workload_params *p, void **priv,
		      struct tier_err *err);
	void (*destroy)(void *priv);
	/* Required. Pages [0, footprint) the workload touches. */
	uint64_t (*footprint_pages)(void *priv);
	/* Required. Fills up to n accesses for simulated time now_us; returns
	 * the number filled, 0 when a finite workload (a trace) has ended, or
	 * -errno with err set (a corrupt trace). */
	long (*next)(void *priv, uint64_t now_us, struct tier_sim_access *buf,
		     size_t n, struct tier_err *err);
	/* Optional. Each page's expected share of accesses at now_us (any
	 * scale) into w[footprint]; the oracle uses it. Returns 0, or
	 * -EOPNOTSUPP for workloads that cannot tell (traces). */
	int (*weights)(void *priv, uint64_t now_us, double *w);
	/* Optional. Background bandwidth another process puts on the fastest
	 * tier at now_us, bytes/s (bandwidth-antagonist). */
	uint64_t (*antagonist_bytes_per_s)(void *priv, uint64_t now_us);
	/* Optional (workloads without weights: a trace). Adds to w[footprint]
	 * each page's count among the next nr accesses next() will return,
	 * without taking them from next(); the oracle places each epoch from
	 * them. Returns the number counted (< nr only at the end), or -errno
	 * with err set (a corrupt trace). */
	long (*counts_ahead)(void *priv, uint64_t nr, double *w, struct tier_err *err);
	/* Optional. Number of tenants (processes); 1 when NULL. */
	unsigned (*nr_tenants)(void *priv);
	/* Optional. The tenant whose page `page` is (first touch before the
	 * run: the owner of each page); 0 when NULL. */
	unsigned (*page_tenant)(void *priv, uint64_t page);
	/* Optional. Checks the parameters after the name (arg as
	 * tier_sim_workload_find sets it) for a workload with a parser of its
	 * own; 0, or -EINVAL with err naming the bad one. */
	int (*check)(const char *arg, struct tier_err *err);
	/* Optional. The node (index in the machine) page's first touch
	 * prefers, as a program's mbind/set_mempolicy would; the others by
	 * distance when it is full. With it the pages are first touched in
	 * page order, as the program's set-up does, not in a random order. */
	int (*first_touch_node)(void *priv, uint64_t page);
	/* Optional. Application time per access, ns, whatever node it hits
	 * (a program whose rate its own code sets, not the memory: under QEMU
	 * TCG); 0 or NULL: the node's loaded latency (the model). */
	double (*access_ns)(void *priv);
	/* Optional. Whether page is in the workload's hot set: the timeline
	 * then gives the hot set's share on the fastest tier. */
	bool (*page_hot)(void *priv, uint64_t page);
};

/* Built-in workloads, terminated by NULL. */
extern const struct tier_sim_workload_ops *const tier_sim_workloads[];

/* The server-density workloads (workload_server.c), listed in the above. */
extern const struct tier_sim_workload_ops tier__sim_workload_server;
extern const struct tier_sim_workload_ops tier__sim_workload_server_moving;
/* bench/progs/gups.c as the guest bench runs it (workload_guest.c). */
extern const struct tier_sim_workload_ops tier__sim_workload_gups_guest;

/* The trace replayer (trace:FILE), or NULL when this build has none. */
const struct tier_sim_workload_ops *tier_sim_workload_trace_ops(void);

/* Finds a workload by name; "trace:FILE" selects the trace replayer and
 * sets *arg to FILE, "NAME:k=v[:k=v]" selects NAME and sets *arg to its
 * parameters (NULL when there are none). Returns NULL for an unknown name. */
const struct tier_sim_workload_ops *tier_sim_workload_find(const char *name,
							   const char **arg);

/* Checks a workload argument as the command line gives it, before any run:
 * a known name whose parameters parse (a trace's file is read only when
 * the run starts). Returns 0, -ENOENT for an unknown name (err says only
 * "unknown workload"), or -EINVAL with err naming the bad parameter. */
int tier_sim_workload_check(const char *name, struct tier_err *err);

#endif
