/* tracker_softdirty.c - soft-dirty bits (Documentation/admin-guide/mm/
 * soft-dirty.rst): writes only.
 *
 * Writing "4" to /proc/PID/clear_refs clears the soft-dirty bits of every
 * page of the process (and write-protects them, so the next write to each
 * takes one fault); bit 55 of a /proc/PID/pagemap entry then says whether
 * the page was written since (softdirty_scan.h reads them, by PAGEMAP_SCAN
 * where the kernel has it).
 *
 * One bit per page and clear says only "written at least once": read a
 * second after the clear, a page written 5 times a second and one written
 * 500 times look the same. So the tracker measures how soon each page is
 * written after a clear. A sampling thread works in rounds of period P
 * (at least 1 s): it clears every target's bits, then reads them when
 * the writer's own time (below) since the clear reaches SD_READ1_US,
 * SD_READ2_US and SD_READ3_US (at most SD_STRETCH times those of the wall
 * clock) and at the end of the round. Where a page was first seen written - in which bracket
 * between two reads - tells its rate: a Poisson process at rate r first
 * writes in (a, b] with probability e^-ra - e^-rb. One round is one
 * draw: a page written 2 times a second is first written within 60 ms in
 * one round in nine. So a page's rate is the one that makes its first
 * writes in the last two rounds most likely (softdirty_rate.c; a page not
 * written at all in the last round has changed, and counts this one
 * alone; a page this round has not seen yet counts "not by the latest
 * read"), at most ln 2 over the first read's time (35/s: a page first
 * written within 20 ms in both rounds, which no finer read could part).
 * Alone, a page first written within 20 ms reads 35/s, between 20 and
 * 60 ms 27.5/s, between 60 and 200 ms 8.6/s, after that about
 * ln(5 P) / P. The times are the writer's own: less the time its threads
 * waited for a CPU (schedstat.h; on a machine with one CPU free the writer
 * waits all through this thread's clear and reads, and behind the
 * policy's steps and the kdamond: in the sid guest's first round its own
 * time was 27.6 ms at the read 51 ms after the clear and still 27.6 ms at
 * the one 230 ms after it) and less its faults (below); and no more
 * than its busiest thread ran, less the same faults, over the share of
 * the wall clock that thread wants a CPU (tier_linux_runnable_share()):
 * blocked - on its pages under tierd's migration, on its address space's
 * lock behind tierd's page walks - a writer neither runs nor waits, and
 * writes nothing (in the sid guest a new process's writer had run 85 ms
 * and waited 336 ms at the read 842 ms after its first clear, blocked
 * most of the rest by the first step's moves). On a kernel without
 * schedstat, the writer's process CPU clock stands in for its threads'
 * runs, its waits unknown (schedstat.h); status and the log say which
 * (stats.writer_time).
 *
 * What the tracker hands collect() is its picture: every page written in
 * the last whole round or already in this one, at that rate; once a round
 * is over, the pages it saw written (softdirty_picture.c). collect() rates
 * it, on the step's thread, where the world tells which tier each page is
 * on (tier_linux_ctx.tiers): each tier's pages are a population of their
 * own (softdirty_picture.h). Pages at under
 * TIER__SD_PIC_MIN_RATE are left out: far below what a move must pay
 * for, their standing estimate would add nothing to a DAMON region's
 * rate, and, first written at
 * scattered times, they would part the picture into runs of a page or two,
 * and a step's CPU grows with the picture's runs (in the sid guest, at
 * 85,000-130,000 runs, 400-550 ms a step, and the steps 11-40 s apart).
 * The picture is a standing estimate,
 * handed over at every collect(), so that the policy's rates, which decay
 * in seconds, hold between rounds that the budget stretches to tens of
 * seconds (with one report a round, a page written 100 times a second read
 * 35/s in the step after its round's first read and under 4/s two steps
 * later). Each run's rate r goes as one write in two checks over
 * 2 ln 2 / r (TIER__SD_CHECKS): what a Poisson process at r leaves, which the
 * policy's reading (-ln(1 - count/max) * max over interval_us, core/ops.h)
 * turns back into r.
 *
 * Cost, and who pays it: the clears and reads are tierd's CPU (this
 * thread); each page written in a round costs its writer one write-protect
 * fault (the pages dirty at the round's last read: counted, and reported
 * as the workload's cost). What a fault costs is measured, not assumed
 * (tier__softdirty_calibrate(), softdirty_calib.c: a child of tierd's
 * takes 256 of them, at least SD_FAULT_NS, a fault on bare metal; under an
 * emulator 10-30 times that). The targets' own system time would tell it too, but mixed with
 * their system calls. A writer's faults can cost it more than the child's
 * (in the guest, a writer over 1.3 GiB spent 4.2 us a page, twice the
 * child's, and all but nothing else in the first 220 ms after a clear, as
 * its first write to each of the 47,000 pages it wrote then faulted): for
 * dating, each read also takes its writer's CPU since the clear over the
 * pages dirty then, an upper bound on what a fault cost it, and the least
 * of those over the last whole round (of SD_SEEN_PAGES pages or more) is
 * what one cost it, up to SD_SEEN_MAX times the child's (a writer that
 * mostly computes bounds nothing). Left at the child's figure, a page
 * first written in that sweep read as written long after the clear: hot
 * pages at 7/s beside pages written 3.6 times a second. The period
 * stretches so that those faults (at the child's figure) stay under SD_FAULT_SHARE of a
 * core, and so that the thread's own CPU stays under its part of tierd's
 * budget (tier_linux_ctx.thread_cpu_percent; SD_CPU_SHARE without one) of a
 * core, up to SD_MAX_US: the shares win over the resolution of long
 * rounds (a page first written late in one reads about ln(5 P) / P),
 * which only slows what the tracker sees.
 *
 * probe() looks for the "sd" flag in /proc/self/smaps VmFlags, which
 * exists only with CONFIG_MEM_SOFT_DIRTY (a mapping made since the last
 * clear carries it; this process never clears its own bits).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/procs.h"
#include "backend/linux/softdirty_impl.h"
#include "backend/linux/sysfs.h"
#include "core/policy.h"

static bool smaps_has_soft_dirty(const char *path)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p, *save = NULL;

		if (strncmp(line, "VmFlags:", 8))
			continue;
		for (p = strtok_r(line + 8, " \n", &save); p; p = strtok_r(NULL, " \n", &save))
			if (!strcmp(p, "sd"))
				found = true;
	}
	fclose(f);
	return found;
}

static int sd_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	char path[512];

	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "self/clear_refs"))
		return tier_err_set(err, -ENAMETOOLONG, "softdirty: procfs root too long");
	if (!tier_sysfs_exists(path))
		return tier_err_set(err, -ENOENT, "softdirty: %s missing (kernel without "
				    "CONFIG_PROC_PAGE_MONITOR)", path);
	tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "self/smaps");
	if (!smaps_has_soft_dirty(path))
		return tier_err_set(err, -EOPNOTSUPP,
				    "softdirty: no 'sd' flag in %s VmFlags (kernel without "
				    "CONFIG_MEM_SOFT_DIRTY)", path);
	return 0;
}

static uint64_t thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- one round's steps (the thread's, or a test's) ---------------------- */

static int clear_refs(struct sd_tracker *t, pid_t pid, struct tier_err *err)
{
	char path[512];
	int ret;

	if (tier_sysfs_path(path, sizeof(path), t->roots.ctx.procfs_root, "%d/clear_refs",
			    (int)pid))
		return tier_err_set(err, -ENAMETOOLONG, "softdirty: procfs root too long");
	ret = tier__write_str(path, "4", err);
	if (ret == -ENOENT)
		ret = -ESRCH;	/* exited */
	return ret;
}

static void target_free(struct sd_target *tg)
{
	free(tg->seen.v);
	free(tg->prev.v);
	memset(&tg->seen, 0, sizeof(tg->seen));
	memset(&tg->prev, 0, sizeof(tg->prev));
}

/* Takes the targets set_targets() asked for: new ones start empty (their
 * bits are cleared at the round's start), gone ones are dropped. */
static int sync_targets(struct sd_tracker *t)
{
	struct sd_target *nv;
	size_t i, j, n;

	pthread_mutex_lock(&t->lock);
	t->kick = false;
	nv = calloc(t->nr_want ? t->nr_want : 1, sizeof(*nv));
	if (!nv) {
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	for (n = 0, i = 0; i < t->nr_want; i++) {
		for (j = 0; j < t->nr_tg && t->tg[j].pid != t->want[i]; j++)
			;
		if (j < t->nr_tg) {
			nv[n++] = t->tg[j];
			memset(&t->tg[j].seen, 0, sizeof(t->tg[j].seen));
			memset(&t->tg[j].prev, 0, sizeof(t->tg[j].prev));
		} else {
			nv[n++].pid = t->want[i];
		}
	}
	/* Under the same lock as the targets it read: a set_targets() that
	 * comes after finds the round idle and ends it. */
	t->idle_round = !n;
	pthread_mutex_unlock(&t->lock);
	for (j = 0; j < t->nr_tg; j++)
		target_free(&t->tg[j]);
	free(t->tg);
	t->tg = nv;
	t->nr_tg = n;
	return 0;
}

/* What the first target's reads are dated by (the status's). */
static void writer_time(struct sd_tracker *t, enum tier_linux_writer_time wt)
{
	pthread_mutex_lock(&t->lock);
	t->stats.writer_time = wt;
	pthread_mutex_unlock(&t->lock);
}

/* Clears tg's bits, starting its round over: 0 (also when the process
 * exited: it drops out, not cleared) or -errno, said in err. first: tg is
 * the first target (the one the status's writer time speaks of). */
static int clear_target(struct sd_tracker *t, struct sd_target *tg, bool first,
			struct tier_err *err)
{
	uint64_t c0 = tier_linux_now_us();
	int read, ret;

	tg->seen.n = 0;
	tg->nbrk = 0;
	tg->cleared = false;
	tg->cpu_page_ns = 0;
	/* a reading that failed holds no threads: no wait taken off */
	read = tier_linux_waits_read(t->roots.ctx.procfs_root, tg->pid, &tg->wait_c0);
	tg->duty = tier_linux_runnable_share(t->roots.ctx.procfs_root, tg->pid, &tg->wait_c0);
	if (tg->duty > 0 && tg->duty < 1.0 / 16)
		tg->duty = 1.0 / 16;
	tg->minflt_known = !tier_linux_minor_faults(&t->roots.ctx, tg->pid, &tg->minflt_c0);
	if (first && !read)
		writer_time(t, !tg->wait_c0.n	       ? TIER_LINUX_WT_WALL :
			       tg->wait_c0.cpu_clock ? TIER_LINUX_WT_CPU_CLOCK :
						       TIER_LINUX_WT_SCHEDSTAT);
	ret = clear_refs(t, tg->pid, err);
	if (ret == -ESRCH) {
		tier_err_clear(err);
		return 0;
	}
	if (ret) {
		tier_err_prefix(err, "softdirty: pid %d", (int)tg->pid);
		return ret;
	}
	/* The kernel clears page by page, in address order, as the reads
	 * read: the middle of each is when it saw the middle page. */
	tg->t0_us = c0 / 2 + tier_linux_now_us() / 2;
	tier_linux_waits_read(t->roots.ctx.procfs_root, tg->pid, &tg->wait_c1);
	tg->cleared = true;
	return 0;
}

/* Clears the bits of every target; a process that exited drops out. */
static int round_clear(struct sd_tracker *t, struct tier_err *err)
{
	size_t i;
	int ret;

	for (i = 0; i < t->nr_tg; i++) {
		ret = clear_target(t, &t->tg[i], i == 0, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* tg's picture, added to the one being built (softdirty_picture.h). */
static int picture_target(struct sd_tracker *t, const struct sd_target *tg, bool last)
{
	const struct tier__sd_rounds r = {
		.pid = tg->pid,
		.seen = &tg->seen,
		.prev = &tg->prev,
		.brk_us = tg->brk_us,
		.prev_brk_us = tg->prev_brk_us,
		.nbrk = tg->nbrk,
		.nprev_brk = tg->nprev_brk,
		.steady = tg->whole_rounds >= 2,
	};

	return tier__sd_pairs_add(&t->build, &r, last);
}

/* The write-protect faults tg's writer took since its clear, for a read
 * that found `dirty` pages written: one a page at most, and no more than
 * its minor faults since (where they are known). A page can be dirty
 * without a fault of its own - a mapping made or grown since the clear is
 * dirty whole, a huge page's one fault dirties 512 - and the early reads
 * are held until the writer's time less its minor faults reaches theirs
 * (tier__softdirty_behind()): dated by one fault a dirty page, a read held
 * to 20 ms read 15.6 ms in a guest run (3,385 pages dirty). */
static uint64_t faulted(const struct sd_tracker *t, const struct sd_target *tg, uint64_t dirty)
{
	uint64_t mf;

	if (!tg->minflt_known || tier_linux_minor_faults(&t->roots.ctx, tg->pid, &mf) ||
	    mf < tg->minflt_c0)
		return dirty;
	return mf - tg->minflt_c0 < dirty ? mf - tg->minflt_c0 : dirty;
}

/* Reads every target's bits and makes the new picture. */
static int round_read(struct sd_tracker *t, bool last, struct tier_err *err)
{
	uint64_t dirty_pages = 0, fault_cost_ns = 0;
	struct tier__sd_pairs swap;
	size_t i, k;
	int ret;

	t->build.n = 0;
	t->build.ntg = 0;
	for (i = 0; i < t->nr_tg; i++) {
		struct sd_target *tg = &t->tg[i];
		uint64_t w0, w1, at, wall, ran_us;
		bool by_ioctl, whole = false;

		if (!tg->cleared)
			continue;
		tier_linux_waits_read(t->roots.ctx.procfs_root, tg->pid, &t->wait_r0);
		w0 = tier_linux_now_us();
		ret = tier__sd_scan_read(&t->scan, &t->roots.ctx, tg->pid, &by_ioctl, err);
		if (!ret && by_ioctl) {
			pthread_mutex_lock(&t->lock);
			t->stats.scan_reads++;
			pthread_mutex_unlock(&t->lock);
		}
		if (ret == -ESRCH) {
			tier_err_clear(err);
			tg->cleared = false;
			continue;
		}
		if (ret) {
			tier_err_prefix(err, "softdirty: pid %d", (int)tg->pid);
			return ret;
		}
		w1 = tier_linux_now_us();
		tier_linux_waits_read(t->roots.ctx.procfs_root, tg->pid, &t->wait_r1);
		/* The read saw the bits over its own time: its middle. */
		wall = w0 / 2 + w1 / 2 > tg->t0_us ? w0 / 2 + w1 / 2 - tg->t0_us : 1;
		{
			struct tier_linux_waits_delta d0, d1;	/* from the clear's ends */
			uint64_t dirty = 0, ran;

			tier_linux_waits_delta(&tg->wait_c0, &t->wait_r0, &d0);
			tier_linux_waits_delta(&tg->wait_c1, &t->wait_r1, &d1);
			ran = (d0.ran_ns + d1.ran_ns) / 2;
			for (k = 0; k < t->scan.n; k++)
				dirty += (t->scan.v[k].end - t->scan.v[k].start) >> 12;
			whole = tier__sd_dirty_unwritten(t, dirty, ran);
			at = tier__sd_writer_us(t, tg, wall, faulted(t, tg, dirty), &d0, &d1,
						tier__sd_stalled(t, tg, &d0, &d1, &t->wait_r1));
			/* What a fault cost the writer, bounded by its CPU per
			 * dirty page (tier__sd_writer_fault_ns()). */
			if (!whole && dirty >= SD_SEEN_PAGES && ran &&
			    (!tg->cpu_page_ns || ran / dirty < tg->cpu_page_ns))
				tg->cpu_page_ns = ran / dirty;
			ran_us = (d0.max_ran_ns + d1.max_ran_ns) / 2000;
		}
		if (whole) {
			/* Its round starts over; its pages are out of this
			 * read's picture. */
			pthread_mutex_lock(&t->lock);
			t->stats.restarts++;
			pthread_mutex_unlock(&t->lock);
			ret = clear_target(t, tg, i == 0, err);
			if (ret)
				return ret;
			continue;
		}
		if (tg->nbrk && at <= tg->brk_us[tg->nbrk - 1])
			at = tg->brk_us[tg->nbrk - 1] + 1;
		if (tg->nbrk < SD_MAX_BRK)
			tg->nbrk++;
		tg->brk_us[tg->nbrk - 1] = at;
		tg->wall_us[tg->nbrk - 1] = wall;
		tg->ran_us[tg->nbrk - 1] = ran_us;
		if (tier__sd_seen_update(&tg->seen, &t->next, &t->scan, tg->nbrk - 1))
			return tier_err_set(err, -ENOMEM, "softdirty: out of memory");
		if (picture_target(t, tg, last))
			return tier_err_set(err, -ENOMEM, "softdirty: out of memory");
		if (!last)
			continue;
		/* Each page dirty now took its writer one fault since the
		 * clear; this round is the next one's last. */
		{
			uint64_t written = 0;

			for (k = 0; k < tg->seen.n; k++)
				written += (tg->seen.v[k].end - tg->seen.v[k].start) >> 12;
			dirty_pages += written;
			if (tg->cpu_page_ns)
				tg->fault_ns_seen = tg->cpu_page_ns;
			/* ... at what the round saw one cost it */
			fault_cost_ns += written * tier__sd_writer_fault_ns(t, tg);
		}
		{
			struct tier__sd_runs r = tg->prev;

			tg->prev = tg->seen;
			tg->seen = r;
			tg->seen.n = 0;
			memcpy(tg->prev_brk_us, tg->brk_us, sizeof(tg->brk_us));
			memcpy(tg->prev_wall_us, tg->wall_us, sizeof(tg->wall_us));
			memcpy(tg->prev_ran_us, tg->ran_us, sizeof(tg->ran_us));
			tg->nprev_brk = tg->nbrk;
			tg->whole_rounds++;
		}
	}
	pthread_mutex_lock(&t->lock);
	if (t->cap_read < t->nr_tg) {
		pid_t *v = realloc(t->read, t->nr_tg * sizeof(*v));

		if (v) {
			t->read = v;
			t->cap_read = t->nr_tg;
		}
	}
	t->nr_read = 0;
	for (k = 0; k < t->nr_tg && k < t->cap_read; k++)
		if (t->tg[k].nprev_brk)
			t->read[t->nr_read++] = t->tg[k].pid;
	t->stats.dropped += t->build.dropped;
	t->build.dropped = 0;
	swap = t->pic;
	t->pic = t->build;
	t->build = swap;
	t->pic_gen++;
	if (last && t->nr_tg && t->tg[0].nprev_brk) {
		const struct sd_target *tg = &t->tg[0];

		memcpy(t->stats.read_us, tg->prev_brk_us, sizeof(t->stats.read_us));
		memcpy(t->stats.read_wall_us, tg->prev_wall_us, sizeof(t->stats.read_wall_us));
		memcpy(t->stats.read_ran_us, tg->prev_ran_us, sizeof(t->stats.read_ran_us));
		t->stats.fault_ns_seen = tg->fault_ns_seen;
		memset(t->stats.read_pages, 0, sizeof(t->stats.read_pages));
		for (k = 0; k < tg->prev.n; k++)
			t->stats.read_pages[tg->prev.v[k].k] +=
				(tg->prev.v[k].end - tg->prev.v[k].start) >> 12;
		t->stats.nr_reads = tg->nprev_brk;
	}
	if (last) {
		t->faults_last = dirty_pages;
		t->faults_last_ns = fault_cost_ns;
		t->stats.workload_faults += dirty_pages;
		t->stats.workload_fault_ns += fault_cost_ns;
		t->stats.rounds++;
	}
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* ---- the thread ------------------------------------------------------------ */

/* Waits until the monotonic time at_us; false when told to stop. */
static bool wait_until(struct sd_tracker *t, uint64_t at_us)
{
	struct timespec ts = { .tv_sec = (time_t)(at_us / 1000000u),
			       .tv_nsec = (long)(at_us % 1000000u) * 1000 };
	bool go;

	pthread_mutex_lock(&t->lock);
	while (!t->stop && !(t->kick && t->idle_round) && tier_linux_now_us() < at_us)
		pthread_cond_timedwait(&t->cond, &t->lock, &ts);
	go = !t->stop;
	pthread_mutex_unlock(&t->lock);
	return go;
}

static void report(struct sd_tracker *t, int ret, const struct tier_err *err)
{
	pthread_mutex_lock(&t->lock);
	t->error = ret;
	snprintf(t->error_msg, sizeof(t->error_msg), "%s", err->msg);
	pthread_mutex_unlock(&t->lock);
}

static void *sd_thread(void *arg)
{
	static const uint64_t reads[] = { SD_READ1_US, SD_READ2_US, SD_READ3_US };
	struct sd_tracker *t = arg;
	struct tier_err err = { "" };
	uint64_t start;

	for (;;) {
		uint64_t cpu0 = thread_cpu_us();
		size_t k;
		int ret;

		tier__sd_plan_period(t);
		ret = sync_targets(t);
		if (!ret)
			ret = round_clear(t, &err);
		start = tier_linux_now_us();
		for (k = 0; !ret && k < sizeof(reads) / sizeof(reads[0]); k++) {
			if (!wait_until(t, start + reads[k]))
				return NULL;
			/* A writer starved of CPU since the clear (behind
			 * this thread, the policy's steps and a kdamond on a
			 * machine with one CPU free) has written little yet:
			 * the read waits for it to run, a while. In the sid
			 * guest's first rounds, a writer that had run 47 ms
			 * by the third read had written 6,800 of its 24,576
			 * hot pages, and the round after came 47 s later. */
			while (tier__softdirty_starved(t, reads[k]) &&
			       tier_linux_now_us() < start + SD_HOLD * reads[k])
				if (!wait_until(t, tier_linux_now_us() + SD_HOLD_STEP_US))
					return NULL;
			/* ... and for its own time to reach the read's: its
			 * first write to each page after the clear is a fault,
			 * and under an emulator a writer spends most of its
			 * first 200 ms taking them (in the guest, its own time
			 * 1.3, 3.0 and 10 ms at reads 31, 75 and 214 ms after
			 * the clear): read then, a page written 180 times a
			 * second was first seen after the third read in one
			 * round in six, and the pages that went with it - a
			 * few hundred written 3.6 times a second among them -
			 * read 65-100/s. Its minor faults stand for its dirty
			 * pages (other faults make it wait longer, never
			 * less). It has that much of its own time to go, which
			 * takes at least as long on the wall clock: the thread
			 * looks again then, not every 10 ms (each look reads
			 * the writer's stat and schedstat files). */
			for (;;) {
				uint64_t now = tier_linux_now_us(), cap = start + SD_STRETCH * reads[k];
				uint64_t to_go = now < cap ? tier__softdirty_behind(t, reads[k]) : 0;

				if (!to_go)
					break;
				if (to_go < SD_HOLD_STEP_US)
					to_go = SD_HOLD_STEP_US;
				if (!wait_until(t, now + to_go < cap ? now + to_go : cap))
					return NULL;
			}
			ret = round_read(t, false, &err);
		}
		if (!ret) {
			if (!wait_until(t, start + t->period_us))
				return NULL;
			ret = round_read(t, true, &err);
		}
		if (ret) {
			if (ret == -ENOMEM)
				tier_err_set(&err, ret, "softdirty: out of memory");
			report(t, ret, &err);
			if (!wait_until(t, tier_linux_now_us() + SD_MIN_US))
				return NULL;
		}
		t->cpu_last_us = thread_cpu_us() - cpu0;
	}
}

/* ---- the tracker ops --------------------------------------------------------- */

static void sd_destroy(void *priv)
{
	struct sd_tracker *t = priv;
	size_t i;

	if (!t)
		return;
	if (t->threaded) {
		pthread_mutex_lock(&t->lock);
		t->stop = true;
		pthread_cond_broadcast(&t->cond);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
	}
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	for (i = 0; i < t->nr_tg; i++)
		target_free(&t->tg[i]);
	free(t->tg);
	tier__sd_scan_free(&t->scan);
	free(t->next.v);
	tier__sd_pairs_free(&t->build);
	tier__sd_pairs_free(&t->pic);
	tier__sd_fits_free(&t->fits);
	tier__sd_pic_free(&t->obs);
	free(t->read);
	free(t->want);
	tier__roots_release(&t->roots);
	free(t);
}

static int sd_new(const struct tier_linux_ctx *ctx, bool threaded, void **priv,
		  struct tier_err *err)
{
	pthread_condattr_t ca;
	struct sd_tracker *t;
	int ret;

	*priv = NULL;
	ret = sd_probe(ctx, err);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t || tier__roots_init(&t->roots, ctx)) {
		free(t);
		return tier_err_set(err, -ENOMEM, "softdirty: out of memory");
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	t->period_us = SD_MIN_US;
	t->idle_round = true;	/* no targets until the first set_targets() */
	t->fault_ns = tier__softdirty_calibrate(&t->roots.ctx);
	if (t->fault_ns < SD_FAULT_NS)
		t->fault_ns = SD_FAULT_NS;
	t->stats.fault_ns = t->fault_ns;
	if (threaded) {
		sigset_t all, old;

		/* The thread takes no signals: a daemon that waits for them
		 * with signalfd must get them, not have them kill it here. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ret = pthread_create(&t->thread, NULL, sd_thread, t);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (ret) {
			sd_destroy(t);
			return tier_err_set(err, -ret, "softdirty: starting its thread: %s",
					    strerror(ret));
		}
		pthread_setname_np(t->thread, "tierd-softdirty");
		t->threaded = true;
	}
	*priv = t;
	return 0;
}

static int sd_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
		     struct tier_err *err)
{
	(void)interval_us;
	return sd_new(ctx, true, priv, err);
}

static int sd_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct sd_tracker *t = priv;
	pid_t *v = NULL;
	size_t i, nr = 0;

	if (n && !(v = calloc(n, sizeof(*v))))
		return tier_err_set(err, -ENOMEM, "softdirty: out of memory");
	for (i = 0; i < n; i++)
		if (tier__pid_alive(&t->roots.ctx, pids[i]))
			v[nr++] = pids[i];
	pthread_mutex_lock(&t->lock);
	free(t->want);
	t->want = v;
	t->nr_want = nr;
	if (nr && t->idle_round) {
		t->kick = true;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* Hands over the picture. collect() owns it while the sink reads it; a
 * newer one the thread made meanwhile replaces it. */
static int sd_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct sd_tracker *t = priv;
	struct tier__sd_pairs p;
	uint64_t gen, rate_ns, tiers_gen;
	bool reused = false;
	int ret;

	pthread_mutex_lock(&t->lock);
	p = t->pic;
	gen = t->pic_gen;
	memset(&t->pic, 0, sizeof(t->pic));
	ret = t->error;
	if (ret)
		tier_err_set(err, ret, "%s", t->error_msg);
	t->error = 0;
	pthread_mutex_unlock(&t->lock);
	/* Rated here, where the pages' tiers may be asked for - unless the
	 * picture and the pages' tiers are those of the last collect: its
	 * rates again (a round's pairs change only at its reads, seconds
	 * to a minute apart, while collects come at every step). */
	rate_ns = tier_linux_thread_cpu_ns();
	tiers_gen = t->roots.ctx.tiers_gen ? t->roots.ctx.tiers_gen(t->roots.ctx.tiers_arg) : 0;
	if (t->obs_valid && t->roots.ctx.tiers_gen && t->obs_pic_gen == gen &&
	    t->obs_tiers_gen == tiers_gen) {
		reused = true;
	} else {
		tier__sd_picture(&t->obs, &p, t->roots.ctx.tiers, t->roots.ctx.tiers_arg, &t->fits);
		t->obs_valid = true;
		t->obs_pic_gen = gen;
		t->obs_tiers_gen = tiers_gen;
	}
	rate_ns = tier_linux_thread_cpu_ns() - rate_ns;
	if (t->obs.n)
		sink(ctx, t->obs.v, t->obs.n);
	pthread_mutex_lock(&t->lock);
	t->stats.dropped += t->obs.dropped;
	t->obs.dropped = 0;
	t->stats.sd_fitted = t->fits.fitted;
	t->stats.sd_fits_reused = t->fits.reused;
	t->stats.collect_sd_rate_ns = rate_ns;
	t->stats.sd_pictures_reused += reused;
	if (!reused)
		memcpy(t->stats.sd_pairs, t->fits.say, sizeof(t->stats.sd_pairs));
	if (t->pic_gen == gen)
		t->pic = p;
	else
		tier__sd_pairs_free(&p);
	pthread_mutex_unlock(&t->lock);
	return ret;
}

/* A new picture, or the pages' tiers changed since the last rating, or
 * an error to hand over. */
static bool sd_news(void *priv)
{
	struct sd_tracker *t = priv;
	uint64_t tiers_gen;
	bool news;

	if (!t->roots.ctx.tiers_gen)
		return true;
	tiers_gen = t->roots.ctx.tiers_gen(t->roots.ctx.tiers_arg);
	pthread_mutex_lock(&t->lock);
	news = !t->obs_valid || t->obs_pic_gen != t->pic_gen || t->obs_tiers_gen != tiers_gen ||
	       t->error;
	pthread_mutex_unlock(&t->lock);
	return news;
}

static void sd_stats(void *priv, struct tier_linux_tracker_stats *st)
{
	struct sd_tracker *t = priv;

	pthread_mutex_lock(&t->lock);
	*st = t->stats;
	pthread_mutex_unlock(&t->lock);
}

bool tier__softdirty_has_round(void *priv, pid_t pid)
{
	struct sd_tracker *t = priv;
	bool found = false;
	size_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr_read && !found; i++)
		found = t->read[i] == pid;
	pthread_mutex_unlock(&t->lock);
	return found;
}

/* ---- for tests: the rounds by hand ----------------------------------------- */

int tier__softdirty_create_manual(const struct tier_linux_ctx *ctx, uint64_t period_us,
				  void **priv, struct tier_err *err)
{
	int ret = sd_new(ctx, false, priv, err);

	if (!ret)
		((struct sd_tracker *)*priv)->period_us = period_us;
	return ret;
}

int tier__softdirty_step(void *priv, enum tier__softdirty_op op, struct tier_err *err)
{
	struct sd_tracker *t = priv;
	int ret;

	switch (op) {
	case TIER__SD_CLEAR:
		ret = sync_targets(t);
		return ret ? tier_err_set(err, ret, "softdirty: out of memory")
			   : round_clear(t, err);
	case TIER__SD_READ:
		return round_read(t, false, err);
	case TIER__SD_READ_LAST:
		return round_read(t, true, err);
	}
	return -EINVAL;
}

/* The next round is planned with the new part. */
static void sd_set_budget(void *priv, double kthread_percent, double thread_percent)
{
	struct sd_tracker *t = priv;

	(void)kthread_percent;
	pthread_mutex_lock(&t->lock);
	t->roots.ctx.thread_cpu_percent = thread_percent;
	pthread_mutex_unlock(&t->lock);
}

const struct tier_linux_tracker_ops tier__linux_tracker_softdirty = {
	.name = "softdirty",
	.kinds = TIER_OBS_WRITTEN,
	.own_thread = true,
	.probe = sd_probe,
	.create = sd_create,
	.destroy = sd_destroy,
	.set_targets = sd_set_targets,
	.collect = sd_collect,
	.news = sd_news,
	.stats = sd_stats,
	.set_budget = sd_set_budget,
};
