/* softdirty_writer.c - the soft-dirty tracker's view of its writers
 * (tracker_softdirty.c): a writer's own time since its clear, what a
 * write-protect fault costs it, whether a read saw more than it could have
 * written, whether it is starved or behind a read's time, and the rounds'
 * period from what their faults cost. Reads the writers' stat and schedstat
 * files (schedstat.h, procs.h). */
#include "backend/linux/softdirty_impl.h"

#include "backend/linux/clock.h"
#include "backend/linux/procs.h"

/* Whether a read that saw `dirty` pages first written since the clear,
 * the writer having run ran_ns since (all its threads; 0: unknown), saw
 * more than it could have written: each of those writes was a fault, of
 * at least a quarter of what the calibrating child's cost, and SD_SEEN_PAGES
 * or more of them. A mapping made or grown since the clear (a new
 * thread's stack or an allocator's arena mapped next to one of the
 * process's mappings, which the kernel merges into it) is soft-dirty
 * whole until the next clear (the VMA's flag, which pagemap reports for
 * every page of it): in a sid guest run, a GUPS process's first thread
 * made its 1.27 GiB mapping read written 20 ms after the clear, 310,000
 * pages in 20 ms of its time, and the round that followed, stretched by
 * those "faults" to keep their share, rated every page hot for the rest
 * of the run. */
bool tier__sd_dirty_unwritten(const struct sd_tracker *t, uint64_t dirty, uint64_t ran_ns)
{
	return ran_ns && dirty >= SD_SEEN_PAGES &&
	       (double)dirty * (double)t->fault_ns / SD_UNWRITTEN > (double)ran_ns;
}

/* What a fault cost tg's writer: the least CPU a dirty page over the last
 * whole round's reads - or, before the process has had one, over this
 * round's earlier reads (its first round is the one a new hot set is first
 * seen in; at the child's figure, a writer whose faults cost it 3-4 times
 * that had its first writes dated late: hot pages read below the bar a
 * move must pay for) - up to SD_SEEN_MAX times the child's, and at least
 * the child's. */
uint64_t tier__sd_writer_fault_ns(const struct sd_tracker *t, const struct sd_target *tg)
{
	uint64_t seen = tg->fault_ns_seen ? tg->fault_ns_seen : tg->cpu_page_ns;

	if (seen <= t->fault_ns)
		return t->fault_ns;
	return seen < SD_SEEN_MAX * t->fault_ns ? seen : SD_SEEN_MAX * t->fault_ns;
}

/* The writer's own time at wall_us after tg's clear, `dirty` pages written
 * since, its threads' runs and waits from the clear's two ends (d0, d1):
 * less the time its threads waited for a CPU between the middles of the
 * clear and of the read (schedstat.h: behind this thread's clear and read
 * on a machine with one CPU free, the writer waits all through them), and
 * less the faults the clear made it take - one per page dirty, taken as
 * serial (writers faulting on several CPUs at once read as faster than
 * they are) - but at least a sixteenth of it; and at most the time its
 * busiest thread ran, less the same faults, over the share of the wall
 * clock it wants a CPU (tg->duty): a writer that neither ran nor waited
 * meanwhile was blocked - by tierd's own moves (its pages under migration)
 * and page walks, or asleep longer than it sleeps - and wrote nothing.
 * stalled: none of its threads ran since the clear and one of them is
 * runnable or blocked in the kernel (tier_linux_waits_stalled()): waiting
 * since the clear, for a CPU (a wait schedstat shows only once it runs)
 * or for the kernel, it wrote nothing however long the wall clock (in a
 * sid guest run an early read went ahead 37.6 ms after the clear, dated
 * 0.9 ms of such a writer's time); one that ran nothing asleep by its own
 * choice has its wall clock, less what it waited. At least 1. */
uint64_t tier__sd_writer_us(const struct sd_tracker *t, const struct sd_target *tg,
			  uint64_t wall_us, uint64_t dirty, const struct tier_linux_waits_delta *d0,
			  const struct tier_linux_waits_delta *d1, bool stalled)
{
	uint64_t faults = dirty * tier__sd_writer_fault_ns(t, tg) / 1000;
	uint64_t lost = faults + (tier_linux_waits_delta_mean(d0) +
				  tier_linux_waits_delta_mean(d1)) / 2000;
	uint64_t at = lost < wall_us - wall_us / TIER__SD_OWN_FLOOR ? wall_us - lost :
			wall_us / TIER__SD_OWN_FLOOR + 1;
	uint64_t busy = (d0->max_ran_ns + d1->max_ran_ns) / 2000;

	if (!busy && stalled)
		return 1;
	if (busy && tg->duty > 0) {
		uint64_t own = faults < busy - busy / TIER__SD_OWN_FLOOR ? busy - faults :
			       busy / TIER__SD_OWN_FLOOR + 1;

		own = (uint64_t)((double)own / tg->duty);
		if (own < at)
			at = own;
	}
	return at ? at : 1;
}

bool tier__sd_stalled(const struct sd_tracker *t, const struct sd_target *tg,
		      const struct tier_linux_waits_delta *d0, const struct tier_linux_waits_delta *d1,
		      const struct tier_linux_waits *now)
{
	return !d0->max_ran_ns && !d1->max_ran_ns &&
	       tier_linux_waits_stalled(t->roots.ctx.procfs_root, tg->pid, &tg->wait_c1, now);
}

/* The next round's period (tier__softdirty_period_us()). */
void tier__sd_plan_period(struct sd_tracker *t)
{
	double share;

	pthread_mutex_lock(&t->lock);	/* set_budget() may change it */
	share = t->roots.ctx.thread_cpu_percent / 100;
	pthread_mutex_unlock(&t->lock);
	t->period_us = tier__softdirty_period_us(t->faults_last_ns, t->cpu_last_us, share);
	pthread_mutex_lock(&t->lock);
	t->stats.period_us = t->period_us;
	pthread_mutex_unlock(&t->lock);
}

bool tier__softdirty_starved(void *priv, uint64_t need_us)
{
	struct sd_tracker *t = priv;
	size_t i;

	for (i = 0; i < t->nr_tg; i++) {
		const struct sd_target *tg = &t->tg[i];
		struct tier_linux_waits_delta d;

		if (!tg->cleared || !tg->wait_c1.n ||
		    tier_linux_waits_read(t->roots.ctx.procfs_root, tg->pid, &t->wait_r0))
			continue;
		/* per thread that ran or waited: both sums over as many */
		tier_linux_waits_delta(&tg->wait_c1, &t->wait_r0, &d);
		if (d.threads && d.waited_ns > d.ran_ns && d.ran_ns / d.threads / 1000 < need_us / 2)
			return true;
	}
	return false;
}

uint64_t tier__softdirty_behind(void *priv, uint64_t need_us)
{
	struct sd_tracker *t = priv;
	uint64_t most = 0;
	size_t i;

	for (i = 0; i < t->nr_tg; i++) {
		const struct sd_target *tg = &t->tg[i];
		struct tier_linux_waits_delta d0, d1;
		uint64_t now = tier_linux_now_us(), minflt, at;

		if (!tg->cleared || !tg->minflt_known || !tg->wait_c1.n ||
		    tier_linux_minor_faults(&t->roots.ctx, tg->pid, &minflt) ||
		    tier_linux_waits_read(t->roots.ctx.procfs_root, tg->pid, &t->wait_r0))
			continue;
		tier_linux_waits_delta(&tg->wait_c0, &t->wait_r0, &d0);
		tier_linux_waits_delta(&tg->wait_c1, &t->wait_r0, &d1);
		at = tier__sd_writer_us(t, tg, now > tg->t0_us ? now - tg->t0_us : 1,
			       minflt > tg->minflt_c0 ? minflt - tg->minflt_c0 : 0, &d0, &d1,
			       tier__sd_stalled(t, tg, &d0, &d1, &t->wait_r0));
		if (at < need_us && need_us - at > most)
			most = need_us - at;
	}
	return most;
}
