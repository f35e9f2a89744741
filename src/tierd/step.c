/* step.c - one step of the shared policy loop over the backend: the
 * machine brought up to date, the tracker's observations to the policy and
 * the heatmaps, the policy's moves; and tierd's CPU share between steps. */
#include "tierd/internal.h"

#include <time.h>

static uint64_t cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t env_now_us(const struct tierd *d)
{
	return d->be->env->clock->now_us(d->be->env->clock_priv);
}

static void step_once(struct tierd *d)
{
	struct tier_err err = { "" };
	int ret;

	ret = d->be->prepare(d->be, &d->loop, tier_linux_now_us(), &err);
	if (ret == 1) {
		tierd_log(&d->log, LOG_INFO, "the machine's run is over; stopping");
		d->stop = true;
		return;
	}
	if (!ret && tierd_heat_sync(&d->heat, env_now_us(d)))
		tierd_log(&d->log, LOG_DEBUG, "heatmaps: out of memory; some processes have none");
	if (!ret)
		ret = tier_loop_step(&d->loop, &err);
	/* The step's observations go into the heatmaps' time slices. */
	tierd_heat_commit(&d->heat, env_now_us(d));
	if (ret) {
		/* Errors of one step are logged, not fatal: a workload that
		 * exits mid-batch must not take the daemon down. Past the
		 * first few of a run of failed steps, at debug level to avoid
		 * storms; a good step ends the run. */
		d->step_errors++;
		tierd_log(&d->log, d->step_errors <= 3 ? LOG_WARNING : LOG_DEBUG, "step: %s", err.msg);
		return;
	}
	d->step_errors = 0;
	d->steps++;
}

void tierd_step(struct tierd *d)
{
	uint64_t now = tier_linux_now_us(), cpu0;

	/* The CPU share: a step that cost c microseconds of CPU is followed
	 * by a pause of c * 100 / max_cpu_percent before the next one, so
	 * tierd never takes more than its share of a core, however large the
	 * managed memory (the policy then reacts more slowly, never harder). */
	if (now < d->next_step_us)
		return;
	cpu0 = cpu_us();
	step_once(d);
	d->ctl.pages_on_node_fresh = false;
	/* On a simulated machine tierd's CPU is mostly the simulated
	 * application's: no share to keep. */
	if (!d->args->machine)
		d->next_step_us = now + (cpu_us() - cpu0) * 100 / d->cfg.max_cpu_percent;
}
