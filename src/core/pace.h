/* pace.h - when a paced policy's next step may run, so that its steps
 * keep to their CPU share: the daemon's (daemon.max_cpu_percent, halved
 * when a kdamond keeps the other half; tierd/step.c, by its thread's CPU)
 * and tiersim's runs of tierd (the same share, by the steps' modelled
 * CPU; backend/sim/engine.c).
 *
 * A token bucket of CPU time: it fills at the share, holds at most
 * TIER_PACE_BURST_S seconds of it (1 s of CPU at a 2.5% share) and starts
 * full, so that a hot set that appears after a quiet spell - or at start -
 * is acted on at once rather than at the share's pace. Each step's CPU is
 * taken from it; the bucket may go negative (a debt).
 *
 * While the bucket holds credit, steps come at their interval. Once it is
 * empty, what spaces them:
 * - a step's steady cost (the least of the last TIER_PACE_WINDOW steps,
 *   the first left out, without the CPU its page moves took; none until
 *   two steps after the first are known): after a step that moved no
 *   page, the next step waits steady cost / share from its start (after
 *   one that moved pages, the debt alone spaces the next: its moves
 *   change what the trackers see, and the rest of a hot set being placed
 *   shows in the next picture). Moves are left out
 *   because they are work the data asks for, bounded by the migration
 *   budget, not a cost of looking: a step that moved 50 MiB must not stretch
 *   the spacing of the steps after it, which may move nothing;
 * - a debt: paid in pauses of at most TIER_PACE_MAX_CATCHUP_US (or the
 *   steady spacing, where longer) while it is within the bucket's size, so
 *   that a burst of moves does not stop the policy for share^-1 times its
 *   cost; beyond the bucket's size, the excess is paid at once (the pause
 *   lasts until the debt is back to the bucket's size).
 * The first step (cataloguing the whole address space, which can take
 * seconds, and moving the hot sets found there) is a one-off that is not
 * charged: the steps after it start from a full bucket. Carried, it made
 * the next step that moved pages pay at once: in the guest, pauses of
 * 27-75 s after the second step; charged within the bucket (0.2-0.4 s of
 * the 0.67 s a 1.67% share holds), the second step, which acts on the
 * trackers' first reports, emptied it, and the third, which finds a
 * scattered hot set, came 5-8 s later instead of at once.
 *
 * The bound this keeps: over any window of W seconds after the first step,
 * the steps take at most share x (W + 2 x TIER_PACE_BURST_S) of CPU, plus
 * the one step and the one resume that ran when they were due.
 * Pure: no clock, no CPU reading; the step thread feeds it.
 */
#ifndef TIER_PACE_H
#define TIER_PACE_H

#include <stdbool.h>
#include <stdint.h>

enum { TIER_PACE_WINDOW = 4 };
#define TIER_PACE_MAX_CATCHUP_US 2000000ull
#define TIER_PACE_BURST_S 40u
/* Resumes come no closer than this (or the interval, where longer): each
 * moves what the budget accrued since, a quarter second's worth at least,
 * for the cost of one pass over the candidates. */
#define TIER_PACE_RESUME_GAP_US 250000u

struct tier_pace {
	uint64_t last_end_us;		/* when the last step ended; 0 before the first */
	int64_t debt_us;		/* CPU used beyond the share (negative: credit) */
	uint64_t recent_us[TIER_PACE_WINDOW];	/* steps' CPU less moves, the first left out */
	unsigned nr_recent, next_recent;
	uint64_t steps;
};

/* A step that began at start_us, ended at end_us and used cpu_us of CPU,
 * move_us of it in page moves, under a share of share_milli thousandths of
 * a core (25 = 2.5%). Returns the earliest time the next step may begin
 * (the caller also keeps its interval). share_milli 0: no share to keep
 * (returns end_us). */
uint64_t tier_pace_step(struct tier_pace *p, uint64_t start_us, uint64_t end_us,
			 uint64_t cpu_us, uint64_t move_us, unsigned share_milli);

/* A resume (the moves the last step's decisions left for want of
 * migration budget, made without a new look) that ended at end_us and
 * used cpu_us of CPU, all of it moves: charged to the bucket as a step's
 * CPU is, and kept out of the steady cost. Returns the earliest time the
 * next step may begin on the debt's account (the caller keeps the later of
 * it and the time the last step gave). */
uint64_t tier_pace_resume(struct tier_pace *p, uint64_t end_us, uint64_t cpu_us,
			   unsigned share_milli);

/* Whether a resume may run: while the bucket is not overdrawn beyond its
 * size. So resumes move a new hot set at the budget's rate, out of the
 * burst the bucket holds, and never push the steps past the bound above. */
bool tier_pace_may_resume(const struct tier_pace *p, unsigned share_milli);

#endif
