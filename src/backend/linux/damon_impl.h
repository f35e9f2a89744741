/* damon_impl.h - what the pieces of the DAMON tracker share:
 * tracker_damon.c (the tracker's ops), damon_kdamond.c (its kdamond,
 * targets and schemes) and damon_collect.c (turning what the kdamond saw
 * into observations). Internal to those files; the control files are in
 * damon_sysfs.h, the tracepoint path in damon_trace.h.
 */
#ifndef TIER_LINUX_DAMON_IMPL_H
#define TIER_LINUX_DAMON_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/clock.h"
#include "backend/linux/damon_sysfs.h"
#include "backend/linux/damon_trace.h"
#include "backend/linux/tracker_util.h"
#include "core/err.h"

/* The kdamond's monitoring intervals and regions (damon_kdamond.c). */
struct tier__damon_intervals {
	uint64_t sample_us, aggr_us, update_us;
	unsigned max_regions;
};

/* One region of a tried_regions snapshot. */
struct tier__damon_region {
	uint64_t start, end, nr_accesses;
};

/* One DAMON tracker: a kdamond of its own, monitoring the virtual
 * address spaces of the target processes. */
struct tier__damon_tracker {
	struct tier__roots roots;
	struct tier__damon_sysfs fs;	/* our kdamond's control files */
	unsigned nr_before;		/* nr_kdamonds before we grew it */
	bool grew;			/* we added the kdamond */
	bool tracepoint;		/* no tried_regions: damon_aggregated */
	bool per_target;		/* target filters available */
	bool has_apply_interval;	/* schemes have apply_interval_us */
	bool running;			/* we started it (it may have stopped since) */
	uint64_t sample_us, aggr_us, update_us;
	unsigned max_regions;		/* monitoring_attrs/nr_regions/max */
	pid_t *pids;			/* the targets, by index (owned) */
	size_t nr_pids;
	uint64_t empty_snapshots;	/* empty tried_regions, asked again */
	pid_t kdamond_pid;		/* its kernel thread, 0 when unknown */
	/* Its CPU share (damon_kdamond.c): the window being measured. */
	uint64_t base_aggr_us;		/* the aggregation picked for collect */
	pid_t share_pid;
	uint64_t share_since_us;
	double share_cpu_s;		/* its CPU seconds at share_since_us */
	bool share_short;		/* short windows: not yet measured within
					 * its share since it started */
	bool share_restart;		/* new intervals: the window starts again */
	/* When the running kdamond was started (its clock: hooks.now_us),
	 * until its first snapshot was read; 0 after. */
	uint64_t started_us;
	void (*wait)(void *arg, bool begin);	/* ctx's (tracker.h) */
	void *wait_arg;
	double share_percent;		/* of the last window, -1: none yet */
	struct tier_linux_damon_snap snap;	/* the last collect's */
	unsigned interval_changes;
	struct tier__damon_trace trace;	/* tracepoint mode */
	struct tier__damon_ahead *ahead;	/* damon_ahead.c; NULL until asked */
	/* The last snapshot read whole (damon_collect.c): its regions,
	 * scheme after scheme (scheme s's from last_off[s] to
	 * last_off[s + 1]), restated by a collect that comes while the next
	 * one is being made ahead; last_us 0: none to restate (none read
	 * yet, or the targets or intervals changed since). */
	struct tier__damon_region *last;
	size_t last_nr, last_cap;
	size_t *last_off, last_schemes;
	uint64_t last_us;
};

/* One target-filtered scheme per target up to this many targets. The
 * kdamond applies every scheme's filter to every target's regions, a cost
 * that grows with the square of the targets: 1000 small processes kept
 * the 6.12 test guest's kdamond in a soft lockup for minutes. Above it
 * one scheme reports every target's regions, in target order, told apart
 * where the addresses start again (damon_collect.c). */
#define TIER_DAMON_MAX_FILTERED_TARGETS 32

/* The "stat" schemes t's targets need: one per target, or one for all. */
static inline size_t tier__damon_nr_schemes(const struct tier__damon_tracker *t)
{
	return t->per_target && t->nr_pids > 1 && t->nr_pids <= TIER_DAMON_MAX_FILTERED_TARGETS ?
		       t->nr_pids :
		       1;
}

/* Whether t's schemes list only the regions accessed in their aggregation
 * (access_pattern/nr_accesses/min 1): each scheme is one target's (one
 * target, or one scheme per target). One scheme over several targets
 * lists every region: its list is split into targets by address order,
 * which needs every target's regions (damon_collect.c). */
static inline bool tier__damon_accessed_only(const struct tier__damon_tracker *t)
{
	return t->nr_pids <= 1 || tier__damon_nr_schemes(t) > 1;
}

/* ---- the kdamond (damon_kdamond.c) -------------------------------------- */

/* Takes the first kdamond whose state is "off", else raises nr_kdamonds
 * by one (a running kdamond is never taken) and sets t->grew; sets
 * t->fs.kdamond. Returns 0 or -errno; after a failure with t->grew set,
 * tier__damon_kdamond_give_back undoes the raise. */
int tier__damon_kdamond_take(struct tier__damon_tracker *t, struct tier_err *err);

/* Lowers nr_kdamonds back when t raised it and its kdamond is still the
 * last one. Errors are ignored. */
void tier__damon_kdamond_give_back(struct tier__damon_tracker *t);

/* Picks the intervals for a collect every interval_us, sets up the
 * kdamond's one vaddr context with them and no targets, and finds out
 * on a scratch scheme what this kernel's schemes offer (t->tracepoint,
 * t->has_apply_interval, t->per_target). Returns 0 or -errno
 * (-EOPNOTSUPP: no vaddr operations). */
int tier__damon_kdamond_setup(struct tier__damon_tracker *t, uint64_t interval_us,
			      struct tier_err *err);

/* Measures the kdamond's CPU share over windows of a few seconds and,
 * when it strays from ctx.kthread_cpu_percent, commits a longer (or, back
 * towards DAMON's 5 ms, shorter) sample interval online: the kdamond's
 * cost is one page-table check per region per sample. Failures leave the
 * intervals as they were. The tracker's maintain op. */
void tier__damon_kdamond_keep_share(struct tier__damon_tracker *t);

/* Writes want's intervals and regions to the kdamond's files and commits
 * them online; on failure writes was's back (the running kdamond keeps
 * its attributes). Touches t->fs only, not t's intervals: the tierd-damon
 * thread calls it. Returns 0 or -errno. */
int tier__damon_kdamond_commit_intervals(struct tier__damon_tracker *t,
					 const struct tier__damon_intervals *want,
					 const struct tier__damon_intervals *was);

/* Makes iv t's intervals once the kdamond has them: counts the change,
 * drops the last snapshot (its counts are in the old samples) and starts
 * the CPU share's window again at the next upkeep. */
void tier__damon_kdamond_set_intervals(struct tier__damon_tracker *t,
				       const struct tier__damon_intervals *iv);

/* Writes t->pids as the context's targets and, unless t->tracepoint,
 * the "stat" schemes that report their regions: one per target with a
 * target filter when t->per_target and there are not too many targets
 * (tier__damon_nr_schemes), else one for all. Returns 0 or
 * -errno. */
int tier__damon_kdamond_write_targets(struct tier__damon_tracker *t, struct tier_err *err);

/* Commits the written targets to the running kdamond; when it does not
 * run, or the commit fails (kernels before 6.11 cannot commit every
 * change of targets online), (re)starts it and sets t->running and
 * t->kdamond_pid. Returns 0 or -errno (-EINVAL: a target exited before
 * the start). */
int tier__damon_kdamond_start(struct tier__damon_tracker *t, struct tier_err *err);

/* Turns the kdamond off when it runs; clears t->running. Returns 0 or
 * -errno. */
int tier__damon_kdamond_stop(struct tier__damon_tracker *t, struct tier_err *err);

/* ---- collect (damon_collect.c) ------------------------------------------ */

/* Takes a tried_regions snapshot of every scheme, asking again (once) for
 * the schemes whose snapshot came back empty, and adds their regions to
 * b as observations of the targets; clears the snapshot. A kdamond that
 * stopped by itself (every target exited) clears t->running and gives 0.
 * Returns 0 or -errno. */
int tier__damon_collect_tried(struct tier__damon_tracker *t, struct tier__obs_batch *b,
			      struct tier_err *err);

/* Frees what tier__damon_collect_tried() keeps between collects (the last
 * snapshot read whole). */
void tier__damon_collect_release(struct tier__damon_tracker *t);

/* Adds the damon_aggregated events of t's kdamond that the trace pipe
 * holds now to b as observations of the targets. */
void tier__damon_collect_trace(struct tier__damon_tracker *t, struct tier__obs_batch *b);

/* The tracker's clock: its hooks' (tests), else the monotonic one. */
static inline uint64_t tier__damon_now_us(const struct tier__damon_tracker *t)
{
	const struct tier__damon_hooks *h = &t->fs.hooks;

	return h->now_us ? h->now_us(h->ctx) : tier_linux_now_us();
}

/* ---- snapshots ahead (damon_ahead.c) ------------------------------------
 * The tried_regions snapshot the next collect takes, asked for by a thread
 * of the tracker's own ("tierd-damon") one aggregation and a margin before
 * the step that collects is due, so that the step does not wait for the
 * kdamond; the thread also makes the clear after the collect and the
 * commits of new intervals the CPU share asks for. The other commands to
 * the kdamond (targets, on and off) hold it: a snapshot made before them
 * may no longer match, and the kernel takes one command at a time.
 *
 * tier__damon_ahead: the next step is due at step_us (the tracker's
 * clock); nothing for a kdamond not running, not past its first snapshot,
 * or reporting by trace events. Starts the thread at its first call.
 * tier__damon_ahead_take: for the collect: TIER__DAMON_AHEAD_READY when a
 * snapshot made at most an aggregation and the margin ago stands in the
 * files (the collect reads it); TIER__DAMON_AHEAD_RESTATE when one (or a
 * commit of intervals) is being made or asked for and the last snapshot read whole (t->last_us)
 * is at most two aggregations and the margin old (the collect hands it on
 * again rather than wait for the kdamond; the request goes on); else a
 * request asked for and not made yet is withdrawn, one being made (and a
 * commit of intervals due) waited for (ctx.wait around it), and READY, or TIER__DAMON_AHEAD_NONE (the
 * collect asks itself).
 * tier__damon_ahead_news: false when a collect now would restate the last
 * snapshot (TIER__DAMON_AHEAD_RESTATE above), else true (also without the
 * thread, before the first snapshot, and by trace events).
 * tier__damon_ahead_clear: for the collect, once it read the snapshot:
 * returns 1 when the thread clears the files (before any request it makes
 * next), 0 when there is no thread (the collect clears them itself).
 * tier__damon_ahead_hold: around another command (hold true, then
 * false): a request or clear being made is waited out and none is made
 * until the last hold ends; no snapshot stands after it, and one asked for
 * is made after the command (with the targets and intervals it set).
 * tier__damon_ahead_intervals: for the CPU share's upkeep: has the thread
 * commit want (was: the intervals in force, written back if the commit
 * fails) before any request it makes next; a snapshot standing is
 * dropped when it is made. Returns 1 when the thread takes it, 0 when
 * there is no thread (the caller commits itself).
 * tier__damon_ahead_sync: takes a commit the thread made into t's
 * intervals (tier__damon_kdamond_set_intervals); returns 1 while one is
 * due or being made, else 0. The collect calls it (through
 * tier__damon_ahead_take too), and the upkeep.
 * tier__damon_ahead_cancel: withdraws a request not made yet (a kdamond
 * started anew: its first snapshot waits for its first aggregations).
 * tier__damon_ahead_settle: for tests: waits until no request, clear or
 * commit of intervals is due or being made; returns whether a snapshot stands.
 * tier__damon_ahead_release: stops the thread (the tracker's destroy). */
struct tier__damon_ahead;
void tier__damon_ahead(struct tier__damon_tracker *t, uint64_t step_us);
enum { TIER__DAMON_AHEAD_NONE, TIER__DAMON_AHEAD_READY, TIER__DAMON_AHEAD_RESTATE };
int tier__damon_ahead_take(struct tier__damon_tracker *t);
bool tier__damon_ahead_news(struct tier__damon_tracker *t);
void tier__damon_ahead_hold(struct tier__damon_tracker *t, bool hold);
void tier__damon_ahead_cancel(struct tier__damon_tracker *t);
int tier__damon_ahead_intervals(struct tier__damon_tracker *t,
				const struct tier__damon_intervals *want,
				const struct tier__damon_intervals *was);
int tier__damon_ahead_sync(struct tier__damon_tracker *t);
int tier__damon_ahead_clear(struct tier__damon_tracker *t);
bool tier__damon_ahead_settle(struct tier__damon_tracker *t);
void tier__damon_ahead_release(struct tier__damon_tracker *t);

#endif
