/* pace.c - when the next policy step may run (contract in pace.h). */
#include "core/pace.h"

/* The bucket's size: TIER_PACE_BURST_S seconds of the share. */
static int64_t bucket_size(unsigned share_milli)
{
	return (int64_t)(1000000ull * TIER_PACE_BURST_S * share_milli / 1000);
}

/* The share accrued since the last step or resume ended, then cpu_us. */
static void charge(struct tier_pace *p, uint64_t end_us, uint64_t cpu_us, unsigned share_milli)
{
	int64_t size = bucket_size(share_milli);
	uint64_t allowed = p->last_end_us && end_us > p->last_end_us ?
			   (end_us - p->last_end_us) * share_milli / 1000 : 0;

	p->debt_us -= (int64_t)allowed;
	if (p->debt_us < -size)
		p->debt_us = -size;
	p->debt_us += (int64_t)cpu_us;
	p->last_end_us = end_us;
}

/* The pause a debt asks for, given the steady spacing: within the
 * bucket's size at most 2 s, or the steady spacing where that is longer
 * (steps growing dearer pay as they go); beyond it, the excess at once. */
static uint64_t debt_gap(const struct tier_pace *p, uint64_t steady_gap, unsigned share_milli)
{
	int64_t size = bucket_size(share_milli);
	uint64_t catchup = steady_gap > TIER_PACE_MAX_CATCHUP_US ? steady_gap :
								     TIER_PACE_MAX_CATCHUP_US;
	uint64_t gap = p->debt_us > 0 ? (uint64_t)p->debt_us * 1000 / share_milli : 0;

	if (p->debt_us > size)
		return (uint64_t)(p->debt_us - size) * 1000 / share_milli + catchup;
	return gap > catchup ? catchup : gap;
}

uint64_t tier_pace_step(struct tier_pace *p, uint64_t start_us, uint64_t end_us,
			 uint64_t cpu_us, uint64_t move_us, unsigned share_milli)
{
	uint64_t steady = UINT64_MAX, steady_gap, gap;
	unsigned i;

	if (!share_milli)
		return end_us;
	if (move_us > cpu_us)
		move_us = cpu_us;
	charge(p, end_us, cpu_us, share_milli);
	if (p->steps++ > 0) {
		p->recent_us[p->next_recent] = cpu_us - move_us;
		p->next_recent = (p->next_recent + 1) % TIER_PACE_WINDOW;
		if (p->nr_recent < TIER_PACE_WINDOW)
			p->nr_recent++;
	} else {
		p->debt_us = -bucket_size(share_milli);	/* full after the first */
	}
	/* While the bucket holds credit, steps come at their interval. */
	if (p->debt_us < 0)
		return end_us;
	for (i = 0; i < p->nr_recent; i++)
		if (p->recent_us[i] < steady)
			steady = p->recent_us[i];
	/* One step is no steady cost: the first after the catalogue takes in
	 * the trackers' first whole picture (in the guest 0.3-0.7 s of CPU
	 * against 0.15 s for the steps after it); till a second, the debt
	 * alone spaces them. */
	steady_gap = p->nr_recent >= 2 ? steady * 1000 / share_milli : 0;
	/* A step that moved pages is followed by a look as soon as the debt
	 * allows: what it moved changes what the trackers see next (the
	 * writer its moves blocked writes again; the part of a hot set the
	 * last picture did not rate yet shows in the next). Spaced by the
	 * steady cost, the guest bench's scattered hot set stood at 85% on
	 * node 0 for 10-12 s after the step that placed it. */
	if (move_us)
		steady_gap = 0;
	gap = debt_gap(p, steady_gap, share_milli);
	/* The steady spacing counts from the step's start (a step costing
	 * c is followed by c / share of wall time in all), the debt's
	 * pause from its end. */
	return start_us + steady_gap > end_us + gap ? start_us + steady_gap : end_us + gap;
}

uint64_t tier_pace_resume(struct tier_pace *p, uint64_t end_us, uint64_t cpu_us,
			   unsigned share_milli)
{
	if (!share_milli)
		return end_us;
	charge(p, end_us, cpu_us, share_milli);
	return p->debt_us < 0 ? end_us : end_us + debt_gap(p, 0, share_milli);
}

bool tier_pace_may_resume(const struct tier_pace *p, unsigned share_milli)
{
	return !share_milli || p->debt_us < bucket_size(share_milli);
}
