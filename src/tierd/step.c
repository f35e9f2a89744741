/* step.c - the step thread: one step of the shared policy loop over the
 * backend (the machine brought up to date, the tracker's observations to
 * the policy and the heatmaps, the policy's moves) every interval, with
 * tierd's CPU share between steps; and, between steps, the requests that
 * wait for the world. */
#include "tierd/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t cpu_us(void)
{
	struct timespec ts;

	/* The step thread's own: the control thread's clients and a
	 * tracker's thread (which keeps its own share) are not the step's. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The step thread's time waiting for a CPU so far, in us
 * (/proc/thread-self/schedstat's second field; 0 without it): at debug
 * level, a step's wall time is told apart into its CPU, its waits for a
 * CPU and the rest, its waits on the kernel and the kdamond. */
static uint64_t runq_wait_us(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait / 1000;
}

static uint64_t env_now_us(const struct tierd *d)
{
	return d->be->env->clock->now_us(d->be->env->clock_priv);
}

static void step_once(struct tierd *d)
{
	struct tier_err err = { "" };
	uint64_t t0, t1, t2;
	int ret;

	d->step_loop_us = d->step_heat_us = 0;
	ret = d->be->prepare(d->be, &d->loop, tier_linux_now_us(), &err);
	if (ret == 1) {
		tierd_log(&d->log, LOG_INFO, "the machine's run is over; stopping");
		tierd_stop(d);
		return;
	}
	t0 = cpu_us();
	if (!ret && tierd_heat_sync(&d->heat, env_now_us(d)))
		tierd_log(&d->log, LOG_DEBUG, "heatmaps: out of memory; some processes have none");
	t1 = cpu_us();
	if (!ret)
		ret = tier_loop_step(&d->loop, &err);
	d->step_loop_us = cpu_us() - t1;
	/* Drains go on whatever the policy's step did. */
	if (ret != 1)
		tierd_drain_step(d);
	/* The step's observations go into the heatmaps' time slices. */
	t2 = cpu_us();
	tierd_heat_commit(&d->heat, env_now_us(d));
	d->step_heat_us = t1 - t0 + cpu_us() - t2;
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
	if (tierd_history_due(&d->hist, tier_linux_now_us())) {
		const struct tier_env *env = d->be->env;
		uint64_t per_tier[TIER_MAX_TIERS];
		struct tier_world_stats st;
		size_t r;

		d->be->stats(d->be, &st);
		/* status's counts: what changed since they were last read */
		tier_tiercount_read(&d->tiercount, env, d->be->topo, per_tier, NULL);
		for (r = 0; r < TIER_MAX_TIERS; r++)
			per_tier[r] <<= env->page_shift;
		tierd_history_step(&d->hist, d->be->topo, per_tier, st.promoted_bytes,
				   st.demoted_bytes, tier_linux_now_us());
	}
}

/* At debug level, one line per step: its CPU by part (the world's
 * step_cpu figures before and after) and the pause the share asks for. */
static void log_step(const struct tierd *d, const struct tier_world_stats *a,
		     const struct tier_world_stats *b, uint64_t cpu, uint64_t wall,
		     uint64_t runq, uint64_t pause)
{
	uint64_t up = b->promoted_bytes - a->promoted_bytes;
	uint64_t down = b->demoted_bytes - a->demoted_bytes;
	uint64_t off = wall > cpu + runq ? wall - cpu - runq : 0;

	tierd_log(&d->log, LOG_DEBUG,
		  "step %llu at %.2f s: %.1f ms CPU in %.1f ms (%.1f waiting for a CPU, %.1f "
		  "blocked) (tracker %.1f, maps %.1f, "
		  "placement check %.1f, node query %.1f, moves %.1f in %.1f; the loop's step %.1f, "
		  "heatmaps %.1f, publishing %.1f); %llu pages moved (%llu up, %llu down); %llu "
		  "steps skipped before it (no news); next in %.1f ms",
		  (unsigned long long)d->steps,
		  (double)(tier_linux_now_us() - wall - d->start_us) / 1e6, (double)cpu / 1e3,
		  (double)wall / 1e3, (double)runq / 1e3, (double)off / 1e3,
		  (b->tracker_cpu_seconds - a->tracker_cpu_seconds) * 1e3,
		  (b->maps_cpu_seconds - a->maps_cpu_seconds) * 1e3,
		  (b->verify_cpu_seconds - a->verify_cpu_seconds) * 1e3,
		  (b->query_cpu_seconds - a->query_cpu_seconds) * 1e3,
		  (b->move_cpu_seconds - a->move_cpu_seconds) * 1e3,
		  (b->move_wall_seconds - a->move_wall_seconds) * 1e3,
		  (double)d->step_loop_us / 1e3, (double)d->step_heat_us / 1e3,
		  (double)d->step_publish_us / 1e3,
		  (unsigned long long)((up + down) >> d->be->env->page_shift),
		  (unsigned long long)(up >> d->be->env->page_shift),
		  (unsigned long long)(down >> d->be->env->page_shift),
		  (unsigned long long)d->quiet_since_step, (double)pause / 1e3);
}

/* After a step or a resume: the next resume, when the policy has moves
 * the budget held back, the CPU share allows one, and it comes before the
 * next step (next_step). */
static void schedule_resume(struct tierd *d, uint64_t next_step)
{
	uint64_t gap = d->cfg.interval_ms * 1000, at;
	unsigned share = tierd_step_share_milli(d);

	d->next_resume_us = 0;
	/* A simulated machine's steps come at every interval already. */
	if (d->args->machine || !tier_loop_held_back(&d->loop) ||
	    !tier_pace_may_resume(&d->pace, share ? share : 1))
		return;
	if (gap < TIER_PACE_RESUME_GAP_US)
		gap = TIER_PACE_RESUME_GAP_US;
	at = tier_linux_now_us() + gap;
	if (at < next_step)
		d->next_resume_us = at;
}

unsigned tierd_step_share_milli(const struct tierd *d)
{
	unsigned share;

	if (d->args->machine)
		return 0;
	share = d->cfg.max_cpu_percent * 10;	/* thousandths of a core */
	if (d->be->step_cpu_share > 0)
		share = (unsigned)(share * d->be->step_cpu_share);
	return share;
}

/* A step waits for news from the tracker at most this long after the last
 * one taken: the policy's other inputs (new processes, intents, a
 * reload's limits) are taken in by steps too. */
#define QUIET_MAX_US 2000000u

/* No news from the tracker (a collect would hand over what the last one
 * did: DAMON's last snapshot while the next is made, soft-dirty's picture
 * as rated before), within QUIET_MAX_US of the last step taken: no step
 * now, the next in an interval. In the guest, such steps came every
 * 100 ms between DAMON's aggregations (0.5-1 s) and soft-dirty's rounds
 * (1-2 s) in the first seconds, each 70-110 ms of CPU taking the same
 * picture in again, on the CPU the soft-dirty round and the workload
 * wanted, and the CPU share's bucket they emptied paused the step that
 * had news for 4-7 s. Returns the next step's time, or 0: take this
 * one. */
static uint64_t quiet_step(struct tierd *d, uint64_t now)
{
	uint64_t next;

	if (d->args->machine || !d->be->news || !d->last_look_us ||
	    now - d->last_look_us >= QUIET_MAX_US || d->be->news(d->be))
		return 0;
	d->quiet_steps++;
	d->quiet_since_step++;
	next = now + d->cfg.interval_ms * 1000;
	if (next < d->next_step_us)
		next = d->next_step_us;
	if (d->be->ahead)
		d->be->ahead(d->be, next);
	return next;
}

uint64_t tierd_step(struct tierd *d)
{
	uint64_t now = tier_linux_now_us(), cpu0 = cpu_us(), next;
	bool debug = __atomic_load_n(&d->log.level, __ATOMIC_RELAXED) >= LOG_DEBUG;
	bool figures = !d->args->machine || debug;	/* the world's, before and after */
	uint64_t runq0 = debug ? runq_wait_us() : 0;
	struct tier_world_stats before, after;

	next = quiet_step(d, now);
	if (next)
		return next;
	d->last_look_us = now;

	if (figures)
		d->be->stats(d->be, &before);
	atomic_store(&d->step_started_us, now);
	step_once(d);
	/* The step's own CPU, in the figures it publishes (their parts add
	 * up to it); publishing and the metrics count toward the share. */
	d->step_cpu_us += cpu_us() - cpu0;
	d->step_publish_us = cpu_us();
	tierd_publish(d);
	/* Within the CPU share: rendering the metrics is tierd's work too. */
	tierd_metrics_step(d, tier_linux_now_us() - now);
	d->step_publish_us = cpu_us() - d->step_publish_us;
	atomic_store(&d->step_started_us, 0);
	next = now + d->cfg.interval_ms * 1000;
	/* The CPU share (core/pace.h): steps are spaced by what they cost
	 * without their moves, a bucket of 40 s of the share absorbs bursts
	 * (the moves a new hot set asks for, a step at start), and a debt is
	 * paid off in pauses of at most 2 s while within the bucket's size, so
	 * tierd keeps to its share of a core however large the managed memory
	 * (the policy then reacts more slowly, never harder) without standing
	 * still after an expensive step. The share is the part of
	 * max_cpu_percent the world leaves the steps (step_cpu_share): the
	 * tracker's threads (a kdamond, soft-dirty's thread) keep the rest,
	 * each an equal part (the Linux world). On a
	 * simulated machine tierd's CPU is mostly the simulated
	 * application's: no share to keep. */
	cpu0 = cpu_us() - cpu0;
	if (figures)
		d->be->stats(d->be, &after);
	if (!d->args->machine) {
		unsigned share = tierd_step_share_milli(d);
		double moves = after.move_cpu_seconds - before.move_cpu_seconds;

		d->next_step_us = tier_pace_step(&d->pace, now, tier_linux_now_us(), cpu0,
						  moves > 0 ? (uint64_t)(moves * 1e6) : 0,
						  share ? share : 1);
	}
	if (next < d->next_step_us)
		next = d->next_step_us;
	schedule_resume(d, next);
	/* What the next step's collect reads, asked for ahead of it. */
	if (d->be->ahead)
		d->be->ahead(d->be, next);
	if (debug) {
		uint64_t t = tier_linux_now_us();

		log_step(d, &before, &after, cpu0, t - now, runq_wait_us() - runq0,
			 next > t ? next - t : 0);
	}
	d->quiet_since_step = 0;
	return next;
}

uint64_t tierd_resume(struct tierd *d)
{
	uint64_t now = tier_linux_now_us(), cpu0 = cpu_us(), next;
	struct tier_err err = { "" };
	struct tier_world_stats before, after;
	bool debug = __atomic_load_n(&d->log.level, __ATOMIC_RELAXED) >= LOG_DEBUG;
	int ret;

	d->next_resume_us = 0;
	if (debug)
		d->be->stats(d->be, &before);
	atomic_store(&d->step_started_us, now);
	ret = tier_loop_resume(&d->loop, &err);
	atomic_store(&d->step_started_us, 0);
	cpu0 = cpu_us() - cpu0;
	d->step_cpu_us += cpu0;
	if (ret) {
		tierd_log(&d->log, LOG_WARNING, "resume: %s", err.msg);
		return d->next_step_us;
	}
	d->resumes++;
	tierd_publish(d);
	if (!d->args->machine) {
		unsigned share = tierd_step_share_milli(d);

		next = tier_pace_resume(&d->pace, tier_linux_now_us(), cpu0, share ? share : 1);
		if (next > d->next_step_us) {
			d->next_step_us = next;
			if (d->be->ahead)
				d->be->ahead(d->be, next);
		}
	}
	schedule_resume(d, d->next_step_us);
	if (debug) {
		uint64_t t = tier_linux_now_us();

		d->be->stats(d->be, &after);
		tierd_log(&d->log, LOG_DEBUG,
			  "resume %llu at %.2f s: %.1f ms CPU in %.1f ms (moves %.1f); %llu pages moved "
			  "(%llu up, %llu down); %s",
			  (unsigned long long)d->resumes, (double)(now - d->start_us) / 1e6,
			  (double)cpu0 / 1e3, (double)(t - now) / 1e3,
			  (after.move_cpu_seconds - before.move_cpu_seconds) * 1e3,
			  (unsigned long long)((after.promoted_bytes - before.promoted_bytes +
						after.demoted_bytes - before.demoted_bytes) >>
					       d->be->env->page_shift),
			  (unsigned long long)((after.promoted_bytes - before.promoted_bytes) >>
					       d->be->env->page_shift),
			  (unsigned long long)((after.demoted_bytes - before.demoted_bytes) >>
					       d->be->env->page_shift),
			  d->next_resume_us ? "more held back" : "none held back or none allowed");
	}
	return d->next_step_us;
}

void tierd_jobs_push(struct tierd *d, struct tierd_job *j)
{
	struct tierd_job **p;

	j->next = NULL;
	pthread_mutex_lock(&d->jobs_lock);
	for (p = &d->jobs; *p; p = &(*p)->next)
		;
	*p = j;
	if (tierd_job_reads_only(j))
		atomic_fetch_add(&d->readers, 1);
	pthread_cond_signal(&d->jobs_cond);
	pthread_mutex_unlock(&d->jobs_lock);
}

struct tierd_job *tierd_jobs_done(struct tierd *d)
{
	struct tierd_job *j;
	uint64_t n;

	if (read(d->done_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		tierd_log(&d->log, LOG_DEBUG, "eventfd: %s", strerror(errno));
	pthread_mutex_lock(&d->jobs_lock);
	j = d->done;
	d->done = NULL;
	pthread_mutex_unlock(&d->jobs_lock);
	return j;
}

/* Runs the jobs taken off the queue (world lock held) and hands those
 * with an answer to the control thread. */
static void run_jobs(struct tierd *d, struct tierd_job *jobs)
{
	struct tierd_job *j, *next, *answered = NULL, **tail = &answered;
	uint64_t one = 1;

	for (j = jobs; j; j = next) {
		next = j->next;
		tierd_job_run(d, j);
		if (j->slot < 0) {
			tierd_job_free(j);
			continue;
		}
		j->next = NULL;
		*tail = j;
		tail = &j->next;
	}
	if (!answered)
		return;
	pthread_mutex_lock(&d->jobs_lock);
	for (tail = &d->done; *tail; tail = &(*tail)->next)
		;
	*tail = answered;
	pthread_mutex_unlock(&d->jobs_lock);
	if (write(d->done_fd, &one, sizeof(one)) < 0)
		tierd_log(&d->log, LOG_DEBUG, "eventfd: %s", strerror(errno));
}

void tierd_step_pause(void *ctx)
{
	struct tierd *d = ctx;
	struct tierd_job *readers = NULL, **tail = &readers, **p, *j;

	if (!atomic_load(&d->readers))
		return;
	pthread_mutex_lock(&d->jobs_lock);
	for (p = &d->jobs; (j = *p);) {
		if (!tierd_job_reads_only(j)) {
			p = &j->next;
			continue;
		}
		*p = j->next;
		j->next = NULL;
		*tail = j;
		tail = &j->next;
		atomic_fetch_sub(&d->readers, 1);
	}
	pthread_mutex_unlock(&d->jobs_lock);
	if (readers)
		run_jobs(d, readers);
}

void tierd_step_wait(void *ctx, bool begin)
{
	struct tierd *d = ctx;

	if (begin)
		pthread_mutex_unlock(&d->read_lock);
	else
		pthread_mutex_lock(&d->read_lock);
}

static struct timespec abs_monotonic(uint64_t us)
{
	return (struct timespec){ .tv_sec = (time_t)(us / 1000000),
				  .tv_nsec = (long)(us % 1000000) * 1000 };
}

/* The world's upkeep between steps (every interval while a node drains). */
#define MAINTAIN_EVERY_US 1000000

static bool drains_running(const struct tierd *d)
{
	size_t i;

	for (i = 0; i < d->dev.nr_drains; i++)
		if (!d->dev.drains[i].done)
			return true;
	return false;
}

void *tierd_step_main(void *arg)
{
	struct tierd *d = arg;
	uint64_t next = tier_linux_now_us();	/* the first step at once */
	uint64_t next_maintain = next + MAINTAIN_EVERY_US;

	pthread_mutex_lock(&d->jobs_lock);
	for (;;) {
		struct tierd_job *jobs;
		bool due;

		while (!atomic_load(&d->stop) && !d->jobs && tier_linux_now_us() < next &&
		       tier_linux_now_us() < next_maintain &&
		       (!d->next_resume_us || tier_linux_now_us() < d->next_resume_us)) {
			uint64_t wake = next < next_maintain ? next : next_maintain;
			struct timespec ts;

			if (d->next_resume_us && d->next_resume_us < wake)
				wake = d->next_resume_us;
			ts = abs_monotonic(wake);

			pthread_cond_timedwait(&d->jobs_cond, &d->jobs_lock, &ts);
		}
		if (atomic_load(&d->stop))
			break;
		jobs = d->jobs;
		d->jobs = NULL;
		atomic_store(&d->readers, 0);
		pthread_mutex_unlock(&d->jobs_lock);

		pthread_mutex_lock(&d->world_lock);
		pthread_mutex_lock(&d->read_lock);
		if (jobs)
			run_jobs(d, jobs);
		due = tier_linux_now_us() >= next;
		if (due && !atomic_load(&d->stop))
			next = tierd_step(d);
		else if (d->next_resume_us && tier_linux_now_us() >= d->next_resume_us &&
			 !atomic_load(&d->stop)) {
			uint64_t after = tierd_resume(d);

			if (next < after)
				next = after;
		}
		if (tier_linux_now_us() >= next_maintain) {
			if (d->be->maintain)
				d->be->maintain(d->be);
			/* A drain does not wait for the policy's pause: the
			 * operator waits on it, and its moves are bounded by
			 * the budget. */
			if (!due) {
				tierd_drain_step(d);
				/* Figures at most a second old while steps
				 * pause (a group removed, a drain's progress). */
				tierd_publish(d);
			}
			next_maintain = tier_linux_now_us() +
					(drains_running(d) ? d->cfg.interval_ms * 1000 :
							     MAINTAIN_EVERY_US);
		}
		pthread_mutex_unlock(&d->read_lock);
		pthread_mutex_unlock(&d->world_lock);
		pthread_mutex_lock(&d->jobs_lock);
	}
	/* Jobs left at the stop are dropped with their clients. */
	while (d->jobs) {
		struct tierd_job *j = d->jobs;

		d->jobs = j->next;
		tierd_job_free(j);
	}
	pthread_mutex_unlock(&d->jobs_lock);
	return NULL;
}
