/* loop.h - the driving loop that tierd and tiersim share.
 *
 * One step: the tracker hands over what it saw since the last step, the
 * policy observes it, then ticks (decides and moves through the migrator).
 * What happens between steps - real time passing on Linux, the simulated
 * machine running its workload - is the backend's business.
 */
#ifndef TIER_CORE_LOOP_H
#define TIER_CORE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"
#include "core/policy.h"

struct tier_loop {
	const struct tier_env *env;
	const struct tier_policy_ops *policy;
	void *policy_priv;
	const struct tier_tracker_ops *tracker;
	void *tracker_priv;
	uint64_t steps;
	uint64_t resumes;		/* tier_loop_resume() calls that ran */
	uint64_t observations;		/* delivered to the policy */
	uint64_t last_step_us;
	/* Optional: sees every batch of observations the policy gets, after
	 * it (tierd's heatmaps). Set after tier_loop_init(); NULL: none. */
	void (*watch)(void *ctx, const struct tier_obs *obs, size_t n);
	void *watch_ctx;
};

/* Creates the policy over env. The loop borrows env and the tracker (may
 * be NULL: no observations). Returns 0 or -errno with err set. */
int tier_loop_init(struct tier_loop *l, const struct tier_env *env,
		   const struct tier_policy_ops *policy,
		   const struct tier_tracker_ops *tracker, void *tracker_priv,
		   struct tier_err *err);

/* One step at the env clock's now. Returns 0 or -errno with err set
 * ("tracker damon: ...", "policy tierd: ..."). */
int tier_loop_step(struct tier_loop *l, struct tier_err *err);

/* Whether the policy has moves its last tick (or resume) chose but the
 * migration budget held back (policy->held_back(); false without it). */
bool tier_loop_held_back(const struct tier_loop *l);

/* Goes on with those moves at the env clock's now, without observing
 * (policy->resume()). Returns 0 (also when the policy cannot resume) or
 * -errno with err set. */
int tier_loop_resume(struct tier_loop *l, struct tier_err *err);

/* The managed pages grew (env->nr_pages, env->page_node updated by the
 * backend): the policy resizes, or is re-created when it cannot. Returns 0
 * or -errno. */
int tier_loop_resize(struct tier_loop *l, struct tier_err *err);

/* Pages [first, first + nr) went away. */
void tier_loop_forget(struct tier_loop *l, uint64_t first, uint64_t nr);

/* Destroys the policy. */
void tier_loop_release(struct tier_loop *l);

#endif
