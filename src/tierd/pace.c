/* pace.c - when the next policy step may run (contract in pace.h). */
#include "tierd/pace.h"

uint64_t tierd_pace_step(struct tierd_pace *p, uint64_t start_us, uint64_t end_us,
			 uint64_t cpu_us, uint64_t move_us, unsigned share_milli)
{
	uint64_t allowed, steady = UINT64_MAX, steady_gap, debt_gap, catchup;
	/* The bucket's size: TIERD_PACE_BURST_S seconds of the share. */
	int64_t size = (int64_t)(1000000ull * TIERD_PACE_BURST_S * share_milli / 1000);
	unsigned i;

	if (!share_milli)
		return end_us;
	if (move_us > cpu_us)
		move_us = cpu_us;
	if (!p->steps)
		p->debt_us = -size;	/* starts full */
	allowed = p->last_end_us && end_us > p->last_end_us ?
		  (end_us - p->last_end_us) * share_milli / 1000 : 0;
	p->debt_us -= (int64_t)allowed;
	if (p->debt_us < -size)
		p->debt_us = -size;
	p->debt_us += (int64_t)cpu_us;
	p->last_end_us = end_us;
	if (p->steps++ > 0) {
		p->recent_us[p->next_recent] = cpu_us - move_us;
		p->next_recent = (p->next_recent + 1) % TIERD_PACE_WINDOW;
		if (p->nr_recent < TIERD_PACE_WINDOW)
			p->nr_recent++;
	} else if (p->debt_us > 0) {
		p->debt_us = 0;		/* the first step's one-off excess */
	}
	/* While the bucket holds credit, steps come at their interval. */
	if (p->debt_us < 0)
		return end_us;
	for (i = 0; i < p->nr_recent; i++)
		if (p->recent_us[i] < steady)
			steady = p->recent_us[i];
	steady_gap = p->nr_recent ? steady * 1000 / share_milli : 0;
	/* Within the bucket's size a debt is paid in pauses of at most 2 s,
	 * or of the steady spacing where that is longer (steps growing
	 * dearer pay as they go); beyond it, the excess at once. */
	catchup = steady_gap > TIERD_PACE_MAX_CATCHUP_US ? steady_gap : TIERD_PACE_MAX_CATCHUP_US;
	debt_gap = p->debt_us > 0 ? (uint64_t)p->debt_us * 1000 / share_milli : 0;
	if (p->debt_us > size)
		debt_gap = (uint64_t)(p->debt_us - size) * 1000 / share_milli + catchup;
	else if (debt_gap > catchup)
		debt_gap = catchup;
	/* The steady spacing counts from the step's start (a step costing
	 * c is followed by c / share of wall time in all), the debt's
	 * pause from its end. */
	return start_us + steady_gap > end_us + debt_gap ? start_us + steady_gap : end_us + debt_gap;
}
