/* damon_ahead.c - a DAMON snapshot asked for ahead of the collect that
 * takes it (contract in damon_impl.h, "snapshots ahead").
 *
 * update_schemes_tried_regions returns only once the kdamond has applied
 * its schemes at the end of its next aggregation, and on 6.12 the writer
 * then polls for the answer in sleeps of 100 ms (damon_sysfs_handle_cmd()):
 * a collect that asked for its own snapshot waited 100-200 ms at 100 ms
 * aggregations and 1.05 s at the 1 s ones the CPU share leads to, most of a
 * step's wall time under TCG (the step's debug line). Asked by a thread of
 * its own one aggregation and a margin before the step is due, the
 * snapshot is there when the step begins, as fresh as one asked for then
 * (from an aggregation that ended at most that long before). The clear
 * after the collect read it, which 6.12 also hands to the kdamond and
 * polls for (a step blocked about 100 ms on it), goes to that thread
 * too, and so does the commit of new intervals the kdamond's CPU share
 * asks for (the same wait, up to an aggregation and the poll: a step of
 * the first seconds, when the share moves the intervals most, blocked
 * 2.9 s, 1.8 s of it not on the snapshot). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/linux/clock.h"
#include "backend/linux/damon_impl.h"
#include "backend/linux/tracker_util.h"

/* How long before the step the snapshot is asked for, beyond one
 * aggregation: the kernel's poll (100 ms on 6.12) and the kdamond's
 * scheduling; and how old a snapshot may be when the collect takes it
 * (beyond that, the step came later than it was expected and asks again). */
#define AHEAD_MARGIN_US 250000u

struct tier__damon_ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* CLOCK_MONOTONIC */
	bool stop;
	uint64_t at_us;			/* the request due then (tracker's clock); 0: none */
	bool clear_due;			/* a clear to make, before any request */
	bool running;			/* a request or a clear being made */
	bool updating;			/* ... a request */
	unsigned holds;			/* other commands under way: wait */
	/* New intervals: due, being committed, made (for the collect to
	 * take in) or refused. */
	enum { IV_NONE, IV_DUE, IV_RUNNING, IV_MADE, IV_REFUSED } iv;
	struct tier__damon_intervals iv_want, iv_was;
	bool ready;			/* a snapshot stands in the files */
	uint64_t done_us;		/* ... made then */
	uint64_t wait_us;		/* ... after waiting this long */
};

static void *ahead_main(void *arg)
{
	struct tier__damon_tracker *t = arg;
	struct tier__damon_ahead *a = t->ahead;

	pthread_mutex_lock(&a->lock);
	while (!a->stop) {
		uint64_t now = tier__damon_now_us(t), t0;
		int ret;

		if (a->holds) {
			pthread_cond_wait(&a->cond, &a->lock);
			continue;
		}
		if (a->clear_due) {
			a->clear_due = false;
			a->running = true;
			a->ready = false;
			pthread_mutex_unlock(&a->lock);
			tier__damon_sysfs_command(&t->fs, "clear_schemes_tried_regions", NULL);
			pthread_mutex_lock(&a->lock);
			a->running = false;
			pthread_cond_broadcast(&a->cond);
			continue;
		}
		if (a->iv == IV_DUE) {
			struct tier__damon_intervals want = a->iv_want, was = a->iv_was;

			a->iv = IV_RUNNING;
			a->running = true;
			a->ready = false;	/* counted in the old samples */
			pthread_mutex_unlock(&a->lock);
			ret = tier__damon_kdamond_commit_intervals(t, &want, &was);
			pthread_mutex_lock(&a->lock);
			a->iv = ret ? IV_REFUSED : IV_MADE;
			a->ready = false;
			a->running = false;
			pthread_cond_broadcast(&a->cond);
			continue;
		}
		if (!a->at_us) {
			pthread_cond_wait(&a->cond, &a->lock);
			continue;
		}
		if (now < a->at_us) {
			/* The tracker's clock may be a test's: wait by the
			 * monotonic one for the difference. */
			uint64_t until = tier_linux_now_us() + (a->at_us - now);
			struct timespec ts = { .tv_sec = (time_t)(until / 1000000),
					       .tv_nsec = (long)(until % 1000000) * 1000 };

			pthread_cond_timedwait(&a->cond, &a->lock, &ts);
			continue;
		}
		a->at_us = 0;
		a->running = a->updating = true;
		a->ready = false;
		pthread_mutex_unlock(&a->lock);
		t0 = tier__damon_now_us(t);
		ret = tier__damon_sysfs_command(&t->fs, "update_schemes_tried_regions", NULL);
		pthread_mutex_lock(&a->lock);
		a->running = a->updating = false;
		a->ready = !ret;
		a->done_us = tier__damon_now_us(t);
		a->wait_us = a->done_us - t0;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static int ahead_start(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = calloc(1, sizeof(*a));
	pthread_condattr_t ca;

	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cond, &ca);
	pthread_condattr_destroy(&ca);
	t->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_main, t)) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		free(a);
		t->ahead = NULL;
		return -EAGAIN;
	}
	pthread_setname_np(a->thread, "tierd-damon");
	return 0;
}

void tier__damon_ahead(struct tier__damon_tracker *t, uint64_t step_us)
{
	uint64_t lead = t->aggr_us + AHEAD_MARGIN_US, at;
	struct tier__damon_ahead *a;

	/* Not for a kdamond that is not running, whose first snapshot is
	 * still awaited (the collect waits for its first aggregations), or
	 * that reports by trace events. */
	if (!t->running || t->started_us || t->tracepoint || !t->nr_pids)
		return;
	if (!t->ahead && ahead_start(t))
		return;		/* the collect asks for itself */
	a = t->ahead;
	at = step_us > lead ? step_us - lead : 1;
	pthread_mutex_lock(&a->lock);
	if (!a->updating) {
		a->at_us = at;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
}

int tier__damon_ahead_clear(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	a->clear_due = true;
	a->ready = false;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return 1;
}

/* Whether the thread has a command under way, or a commit of intervals
 * it will make at once (none while held); with the lock held. */
static bool busy(const struct tier__damon_ahead *a)
{
	return a->running || (a->iv == IV_DUE && !a->holds);
}

/* Waits for a command being made (and a commit of intervals due, made
 * first); with the lock held. */
static void settle(struct tier__damon_tracker *t, bool tell)
{
	struct tier__damon_ahead *a = t->ahead;

	if (!busy(a))
		return;
	if (tell && t->wait)
		t->wait(t->wait_arg, true);
	while (busy(a))
		pthread_cond_wait(&a->cond, &a->lock);
	if (tell && t->wait)
		t->wait(t->wait_arg, false);
}

/* Whether a snapshot made ahead stands and is recent enough to read at
 * now (at most an aggregation and the margin old); with the lock held. */
static bool fresh(const struct tier__damon_tracker *t, uint64_t now)
{
	const struct tier__damon_ahead *a = t->ahead;

	return a->ready && now - a->done_us <= t->aggr_us + AHEAD_MARGIN_US;
}

/* Whether a collect at now hands on the last snapshot again: no fresh
 * one stands, the next (or a commit of intervals) is on its way, and the
 * last read whole is at most two aggregations and the margin old; with
 * the lock held. */
static bool restates(const struct tier__damon_tracker *t, uint64_t now)
{
	const struct tier__damon_ahead *a = t->ahead;

	return !fresh(t, now) &&
	       (a->updating || a->at_us || a->iv == IV_DUE || a->iv == IV_RUNNING) && t->last_us &&
	       t->last_schemes == tier__damon_nr_schemes(t) &&
	       now - t->last_us <= 2 * t->aggr_us + AHEAD_MARGIN_US;
}

/* Takes in the intervals the thread committed; with the lock held.
 * Returns 1 while a commit is due or being made. */
static int sync_locked(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;

	switch (a->iv) {
	case IV_DUE:
	case IV_RUNNING:
		return 1;
	case IV_MADE:
		tier__damon_kdamond_set_intervals(t, &a->iv_want);
		break;
	default:
		break;
	}
	a->iv = IV_NONE;
	return 0;
}

int tier__damon_ahead_sync(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;
	int ret;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	ret = sync_locked(t);
	pthread_mutex_unlock(&a->lock);
	return ret;
}

int tier__damon_ahead_intervals(struct tier__damon_tracker *t,
				const struct tier__damon_intervals *want,
				const struct tier__damon_intervals *was)
{
	struct tier__damon_ahead *a = t->ahead;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	if (!sync_locked(t)) {
		a->iv_want = *want;
		a->iv_was = *was;
		a->iv = IV_DUE;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	return 1;
}

bool tier__damon_ahead_news(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;
	uint64_t now;
	bool news;

	if (!a || !t->running || t->tracepoint || t->started_us || !t->nr_pids)
		return true;
	now = tier__damon_now_us(t);
	pthread_mutex_lock(&a->lock);
	/* What tier__damon_ahead_take() would restate is no news. */
	news = a->iv == IV_MADE || !restates(t, now);
	pthread_mutex_unlock(&a->lock);
	return news;
}

bool tier__damon_collect_waits(void *priv)
{
	struct tier__damon_tracker *t = priv;
	struct tier__damon_ahead *a = t->ahead;
	uint64_t now;
	bool waits;

	if (!t->running || t->tracepoint || !t->nr_pids)
		return false;	/* nothing to wait for */
	if (!a || t->started_us)
		return true;	/* asks itself, or awaits the first aggregations */
	now = tier__damon_now_us(t);
	pthread_mutex_lock(&a->lock);
	waits = a->iv == IV_MADE ||
		!(fresh(t, now) || restates(t, now));
	pthread_mutex_unlock(&a->lock);
	return waits;
}

int tier__damon_ahead_take(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;
	uint64_t t0, now;
	int got = TIER__DAMON_AHEAD_NONE;

	if (!a)
		return got;
	t0 = now = tier__damon_now_us(t);
	pthread_mutex_lock(&a->lock);
	sync_locked(t);
	if (restates(t, now)) {
		/* The next snapshot (or a commit of intervals) is on its
		 * way and the last is recent: the step does not wait for
		 * the kdamond. */
		pthread_mutex_unlock(&a->lock);
		return TIER__DAMON_AHEAD_RESTATE;
	}
	a->at_us = 0;		/* not yet asked: the collect asks now */
	a->clear_due = false;	/* a request clears the files itself */
	/* A commit of intervals due is made first: the collect's own
	 * request is then counted in them. */
	settle(t, true);
	sync_locked(t);
	now = tier__damon_now_us(t);
	if (fresh(t, now)) {
		got = TIER__DAMON_AHEAD_READY;
		t->snap.wait_us += now - t0;
		t->snap.ahead_wait_us = a->wait_us;
	}
	a->ready = false;
	pthread_mutex_unlock(&a->lock);
	return got;
}

void tier__damon_ahead_hold(struct tier__damon_tracker *t, bool hold)
{
	struct tier__damon_ahead *a = t->ahead;

	if (hold)
		t->last_us = 0;		/* nothing to restate either */
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	if (hold) {
		a->holds++;
		settle(t, false);
		a->ready = false;
	} else if (a->holds && !--a->holds) {
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
}

void tier__damon_ahead_cancel(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->at_us = 0;
	pthread_mutex_unlock(&a->lock);
}

bool tier__damon_ahead_settle(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;
	bool ready;

	if (!a)
		return false;
	pthread_mutex_lock(&a->lock);
	while (a->at_us || a->clear_due || a->running || a->iv == IV_DUE)
		pthread_cond_wait(&a->cond, &a->lock);
	ready = a->ready;
	pthread_mutex_unlock(&a->lock);
	return ready;
}

void tier__damon_ahead_release(struct tier__damon_tracker *t)
{
	struct tier__damon_ahead *a = t->ahead;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a);
	t->ahead = NULL;
}
