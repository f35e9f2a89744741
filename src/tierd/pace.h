/* pace.h - when tierd's next policy step may run, so that its steps keep
 * to their CPU share (daemon.max_cpu_percent, halved when a kdamond keeps
 * the other half).
 *
 * Two costs are told apart. A step's steady cost (what steps cost now,
 * the least of the last TIERD_PACE_WINDOW steps, the first step left out)
 * sets the least spacing between steps: steady cost / share. A one-off
 * cost - the first step cataloguing the whole address space, a step that
 * adopted a large process - is debt, paid off at the share's rate by
 * pausing at most TIERD_PACE_MAX_CATCHUP_US (or the steady spacing, where
 * longer) at a time, so that such a
 * step does not stop the policy for share^-1 times its cost (40 times at
 * a 2.5% share). Over any long window the steps still take no more than
 * their share: the debt is carried until paid, and steps whose steady
 * cost exceeds share x TIERD_PACE_MAX_CATCHUP_US are spaced by it.
 * Pure: no clock, no CPU reading; the step thread feeds it.
 */
#ifndef TIERD_PACE_H
#define TIERD_PACE_H

#include <stdint.h>

enum { TIERD_PACE_WINDOW = 4 };
#define TIERD_PACE_MAX_CATCHUP_US 2000000ull

struct tierd_pace {
	uint64_t last_end_us;		/* when the last step ended; 0 before the first */
	int64_t debt_us;		/* CPU used beyond the share (negative: credit) */
	uint64_t recent_us[TIERD_PACE_WINDOW];	/* steps' CPU, the first left out */
	unsigned nr_recent, next_recent;
	uint64_t steps;
};

/* A step that began at start_us, ended at end_us and used cpu_us of CPU,
 * under a share of share_milli thousandths of a core (25 = 2.5%). Returns
 * the earliest time the next step may begin (the caller also keeps its
 * interval). share_milli 0: no share to keep (returns end_us). */
uint64_t tierd_pace_step(struct tierd_pace *p, uint64_t start_us, uint64_t end_us,
			 uint64_t cpu_us, unsigned share_milli);

#endif
