/* kernel_guard.h - the kernel features that would fight tierd or lock it
 * out, switched off while it runs and put back after it, also after a
 * crash.
 *
 *  - the kernel's own tiering (NUMA balancing, demotion: kernel_tiering.h)
 *    moves the pages tierd places;
 *  - damon_stat (damon_modules.h) holds DAMON exclusively, so tierd's
 *    DAMON tracker cannot start;
 *  - the kdamond tierd's DAMON tracker starts outlives tierd if tierd dies.
 *
 * Every change is first written to the state file (kernel_state.h), so a
 * tierd that dies leaves a record: the next guard_open() (a restart, or
 * `tierd --restore`) puts it back before anything else.
 *
 * The guard says what it does through say() (syslog levels), one line per
 * change, so the daemon logs each decision once.
 */
#ifndef TIER_LINUX_KERNEL_GUARD_H
#define TIER_LINUX_KERNEL_GUARD_H

#include <limits.h>
#include <stdbool.h>

#include "backend/linux/kernel_state.h"
#include "backend/linux/tracker.h"
#include "core/err.h"

struct tier_linux_guard {
	struct tier_linux_ctx ctx;
	char state_path[PATH_MAX];
	struct tier_linux_kernel_state st;	/* what this tierd changed */
	bool saved;				/* the state file exists */
	tier_say_fn say;
	void *say_arg;
};

/* Opens the guard on state_path. A state file left by a tierd that died
 * is acted on first: its kdamond stopped, its settings written back, the
 * file removed, and one line said. A file of a tierd that still runs
 * (its pid alive, named tierd, not this process) is not touched: -EBUSY
 * ("another tierd (pid N) runs ..."). A malformed file: -EINVAL naming
 * the line, nothing changed. Returns 0 or -errno with err set. */
int tier_linux_guard_open(struct tier_linux_guard *g, const struct tier_linux_ctx *ctx,
			  const char *state_path, tier_say_fn say, void *say_arg,
			  struct tier_err *err);

/* damon_stat: when it is on and disable is true, switches it off (saved
 * first) so that DAMON is free for tierd; when it is on and disable is
 * false, says that DAMON stays with damon_stat and what tierd loses. The
 * other exclusive DAMON users (damon_reclaim, damon_lru_sort) are the
 * operator's memory policy and never touched: said, not changed. Returns
 * 0 or -errno (the switch could not be written). */
int tier_linux_guard_damon_stat(struct tier_linux_guard *g, bool disable, struct tier_err *err);

/* The kernel's tiering: when on and disable is true, switched off (saved
 * first); when on and disable is false, a warning. Returns 0 or -errno. */
int tier_linux_guard_kernel_tiering(struct tier_linux_guard *g, bool disable,
				    struct tier_err *err);

/* For a tracker that reads the kernel's NUMA hint faults: the kernel's
 * NUMA balancing set to take them on the slower tiers' pages and move
 * nothing (tier_linux_kernel_tiering_hint_only()), saved first, put back
 * at close. Returns 0 or -errno (-EOPNOTSUPP: a kernel without it). */
int tier_linux_guard_hint_faults(struct tier_linux_guard *g, struct tier_err *err);

/* The kdamond tierd runs now (running false: none). Rewrites the state
 * file when this changed. Returns 0 or -errno. */
int tier_linux_guard_kdamond(struct tier_linux_guard *g, bool running, unsigned index,
			     pid_t pid, struct tier_err *err);

/* Puts back everything this tierd changed (its kdamond must have been
 * stopped by then: the tracker's destroy), says so, and removes the state
 * file; on a failure the file stays for the next start. Returns 0 or the
 * first -errno. */
int tier_linux_guard_close(struct tier_linux_guard *g, struct tier_err *err);

/* `tierd --restore`: acts on a state file left by a tierd that died
 * (as guard_open does) and returns; *found tells whether there was one. */
int tier_linux_guard_restore_leftovers(const struct tier_linux_ctx *ctx,
				       const char *state_path, tier_say_fn say,
				       void *say_arg, bool *found, struct tier_err *err);

#endif
