/* test_linux_softdirty.c - the soft-dirty tracker against fixture trees
 * copied to a temporary directory (tests/fixtures/pagemap; its README.md):
 * its rounds of clears and reads, the rates it dates first writes to, by
 * the writer's own time (schedstat, its CPU clock, its faults), and the
 * pages written in both rounds rated as one population. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/kernel_guard.h"
#include "backend/linux/kernel_tiering.h"
#include "backend/linux/maps.h"
#include "backend/linux/clock.h"
#include "backend/linux/schedstat.h"
#include "backend/linux/softdirty_picture.h"
#include "backend/linux/softdirty_rate.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"
#include "linux_fixture.h"

/* The rate an observation stands for, as the policy reads it (core/ops.h:
 * -ln(1 - count/max) * max accesses over interval_us). */
static double obs_rate(const struct tier_linux_addr_obs *o)
{
	double m = o->max ? o->max : 1, f = o->count / m;

	if (f > 1 - 0.5 / m)
		f = 1 - 0.5 / m;
	return -log(1 - f) * m / (o->interval_us / 1e6);
}

/* A run of process 100's picture: one write in two checks over the window
 * that stands for its rate, at least min_rate a second. */
static double expect_written(const struct tier_linux_addr_obs *o, uint64_t start, uint64_t end,
			     double min_rate)
{
	double r = obs_rate(o);

	expect_obs(o, 100, start, end, TIER_OBS_WRITTEN, 1, 2);
	if (r < min_rate)
		fail_msg("[%#llx, %#llx): %.2f/s, expected at least %.2f", (unsigned long long)start,
			 (unsigned long long)end, r, min_rate);
	return r;
}

static void set_pagemap_entry(const struct tmp *t, uint64_t addr, uint64_t e)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/proc/100/pagemap", t->dir);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &e, 8, (off_t)(addr >> 12) * 8), 8);
	close(fd);
}

/* Rounds of random writes to process 100's 16-page anonymous mapping
 * (0x800000): every picture is runs in address order, disjoint, each
 * non-empty, within the pages written in this round or the last, every
 * page written this round in it; after a round's last read, exactly the
 * pages written in it. */
static void test_softdirty_picture_random(void **state)
{
	const pid_t pids[] = { 100 };
	struct tier_err err = { "" };
	static struct got g;
	unsigned seed = 12345, round, rd;
	bool prev[16] = { false };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "pagemap");
	write_pagemaps(&t);
	if (tier__softdirty_create_manual(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(tier__linux_tracker_softdirty.set_targets(priv, pids, 1, &err), 0);
	for (round = 0; round < 40; round++) {
		bool dirty[16] = { false };
		unsigned k;

		for (k = 0; k < 16; k++)
			set_pagemap_entry(&t, 0x800000 + k * 0x1000, P | (0x3000 + k));
		assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
		for (rd = 0; rd < 4; rd++) {
			size_t i;

			for (k = 0; k < 16; k++)
				if (!dirty[k] && rand_r(&seed) % 4 == 0) {
					dirty[k] = true;
					set_pagemap_entry(&t, 0x800000 + k * 0x1000,
							  P | SD | (0x3000 + k));
				}
			assert_int_equal(tier__softdirty_step(priv, rd == 3 ? TIER__SD_READ_LAST
									   : TIER__SD_READ, &err), 0);
			g.n = 0;
			assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
			{
				bool in[16] = { false };

				for (i = 0; i < g.n; i++) {
					const struct tier_linux_addr_obs *o = &g.v[i];
					uint64_t a;

					if (o->start >= o->end || (i && o->start < g.v[i - 1].end))
						fail_msg("round %u read %u: run %zu [%#llx, %#llx) after "
							 "[%#llx, %#llx)", round, rd, i,
							 (unsigned long long)o->start,
							 (unsigned long long)o->end,
							 (unsigned long long)(i ? g.v[i - 1].start : 0),
							 (unsigned long long)(i ? g.v[i - 1].end : 0));
					if (o->end <= 0x800000 || o->start >= 0x810000)
						continue;	/* the fixture's other pages */
					assert_true(o->start >= 0x800000 && o->end <= 0x810000);
					for (a = o->start; a < o->end; a += 0x1000)
						in[(a - 0x800000) >> 12] = true;
				}
				for (k = 0; k < 16; k++) {
					if (dirty[k])
						assert_true(in[k]);
					else if (rd == 3 || !prev[k])
						assert_false(in[k]);
				}
			}
		}
		memcpy(prev, dirty, sizeof(prev));
	}
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* What a write-protect fault costs is measured by a child of the tracker's
 * process: on this machine's kernel (when it has soft-dirty) each write
 * after the clear takes a fault, far dearer than a plain store; where
 * clear_refs is missing nothing is measured; the tracker never goes below
 * a bare-metal fault (1 us). */
static void test_softdirty_fault_cost(void **state)
{
	const struct tier_linux_ctx live = { .sysfs_root = "/sys", .procfs_root = "/proc",
					     .debugfs_root = "/sys/kernel/debug" };
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct tmp t;
	uint64_t ns;
	void *priv;

	(void)state;
	if (!tier__linux_tracker_softdirty.probe(&live, &err)) {
		ns = tier__softdirty_calibrate(&live);
		/* a store to a present, writable page costs nanoseconds */
		if (ns < 100 || ns > 10000000)
			fail_msg("a write-protect fault measured at %llu ns", (unsigned long long)ns);
	} else {
		print_message("# this kernel has no soft-dirty (%s): live half not run\n", err.msg);
	}
	/* No clear_refs under this procfs root: nothing measured. */
	tmp_init(&t, "damon-sysfs/v6.12");
	assert_int_equal(tier__softdirty_calibrate(&t.ctx), 0);
	tmp_release(&t);
	/* The fixture's clear_refs is a plain file: no fault is taken, and
	 * the tracker keeps the least. */
	tmp_init(&t, "pagemap");
	if (tier__softdirty_create_manual(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.fault_ns, 1000);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* One read of the manual rounds (op), then a collect into g, emptied
 * first: expects n runs. */
static void read_collect(void *priv, enum tier__softdirty_op op, struct got *g, size_t n)
{
	struct tier_err err = { "" };

	g->n = 0;
	assert_int_equal(tier__softdirty_step(priv, op, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, g, &err), 0);
	assert_int_equal(g->n, n);
}

static void test_softdirty(void **state)
{
	const pid_t pids[] = { 100, 300 /* gone */ };
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	double r0;
	void *priv;

	(void)state;
	tmp_init(&t, "pagemap");
	write_pagemaps(&t);
	if (tier__linux_tracker_softdirty.probe(&t.ctx, &err))
		fail_msg("probe: %s", err.msg);
	if (tier__softdirty_create_manual(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	if (tier__linux_tracker_softdirty.set_targets(priv, pids, 2, &err))
		fail_msg("set_targets: %s", err.msg);
	/* A round starts by clearing the bits. */
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	assert_string_equal(get(&t, "proc/100/clear_refs"), "4");
	/* Read right away: the pages written are reported at once, as
	 * written often (ln 2 over the moments since the clear: far above
	 * the 35/s of a read 20 ms after it). */
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	if (tier__linux_tracker_softdirty.collect(priv, sink, &g, &err))
		fail_msg("collect: %s", err.msg);
	assert_int_equal(g.n, 4);
	/* the swapped page carries soft-dirty but is not present: a gap */
	r0 = expect_written(&g.v[0], 0x601000, 0x602000, 100);
	/* one round alone: no standing estimate yet; first written before
	 * the first read, its rate is the table's highest: a lower bound */
	assert_int_equal(g.v[0].write, TIER_OBS_AT_LEAST);
	expect_written(&g.v[1], 0x603000, 0x604000, 100);
	expect_written(&g.v[2], 0x800000, 0x808000, 100);
	expect_written(&g.v[3], 0xa00000, 0xa01000, 100);
	/* Read again with nothing new: the same picture, at every collect (a
	 * standing estimate: the policy's rates decay between them). */
	g.n = 0;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	assert_true(fabs(expect_written(&g.v[0], 0x601000, 0x602000, 100) - r0) < r0 * 1e-3);
	g.n = 0;
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	/* A page first written between the second read and one 20 ms later:
	 * the rate that makes a first write in that bracket most likely,
	 * below the first pages' and above the 35/s of a page seen only at
	 * 20 ms after the clear (its median: ln 2 / 20 ms). */
	set_pagemap_entry(&t, 0x600000, P | SD | 0x1000);
	usleep(20000);
	read_collect(priv, TIER__SD_READ, &g, 5);
	{
		double r = expect_written(&g.v[0], 0x600000, 0x601000, 1);

		assert_true(r < r0);
		assert_true(r > M_LN2 / 0.020 && r < M_LN2 / 0.020 * 10);
	}
	expect_written(&g.v[1], 0x601000, 0x602000, 100);
	/* The round's end: the same pages (nothing new), as the last
	 * round's picture. */
	g.n = 0;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 5);
	/* Each page dirty at the round's end cost its writer one fault. */
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.workload_faults, 12);
	assert_true(st.workload_fault_ns >= 12 * st.fault_ns &&
		    st.workload_fault_ns <= 12 * 4 * st.fault_ns);
	assert_int_equal(st.rounds, 1);
	assert_int_equal(st.dropped, 0);
	/* The round's four reads, in wall time and in the writer's (less 12
	 * faults of at least 1 us each by the last, or a sixteenth of it
	 * left), both rising; the third 20 ms after the second at least. */
	assert_int_equal(st.nr_reads, 4);
	{
		unsigned k;

		for (k = 0; k < 4; k++) {
			assert_true(st.read_us[k] <= st.read_wall_us[k]);
			assert_true(!k || st.read_us[k] > st.read_us[k - 1]);
			assert_true(!k || st.read_wall_us[k] >= st.read_wall_us[k - 1]);
		}
		assert_true(st.read_wall_us[2] - st.read_wall_us[1] >= 20000);
		assert_true(st.read_us[3] + 12 <= st.read_wall_us[3]);
	}
	/* ... and the pages each first saw written: 11 at once, 0x600000 at
	 * the third. */
	assert_int_equal(st.read_pages[0], 11);
	assert_int_equal(st.read_pages[1], 0);
	assert_int_equal(st.read_pages[2], 1);
	assert_int_equal(st.read_pages[3], 0);
	/* too few faults to measure their cost: the bare-metal least */
	assert_int_equal(st.fault_ns, 1000);

	/* The next round: 0xa00000 is not written again. Until the round
	 * has seen it, its rate is the one most likely for its first write
	 * within moments of the last round's clear and none within 30 ms of
	 * this one's: less than 1 / 30 ms. The pages written again count
	 * both rounds: 0x600000, first written late in the last one, apart
	 * from 0x601000. Once the round is over, 0xa00000, not written in
	 * it, is out of the picture. */
	set_pagemap_entry(&t, 0xa00000, P | 0x5000);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	usleep(30000);
	read_collect(priv, TIER__SD_READ, &g, 5);
	{
		double r = expect_written(&g.v[0], 0x600000, 0x601000, 1);

		assert_true(r < expect_written(&g.v[1], 0x601000, 0x602000, 1));
	}
	expect_written(&g.v[2], 0x603000, 0x604000, 1);
	expect_written(&g.v[3], 0x800000, 0x808000, 1);
	assert_true(expect_written(&g.v[4], 0xa00000, 0xa01000, 1) < 1 / 0.030);
	/* Written in both rounds: standing estimates (TIER_OBS_STANDING);
	 * 0xa00000, not seen yet in this one, not. */
	assert_true(g.v[0].write & TIER_OBS_STANDING);
	assert_true(g.v[3].write & TIER_OBS_STANDING);
	assert_false(g.v[4].write & TIER_OBS_STANDING);
	/* 0x800000 read at once in both rounds: the table's highest, a
	 * lower bound (TIER_OBS_AT_LEAST); 0x600000, later in one, is not. */
	assert_true(g.v[3].write & TIER_OBS_AT_LEAST);
	assert_false(g.v[0].write & TIER_OBS_AT_LEAST);
	g.n = 0;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	expect_written(&g.v[3], 0x800000, 0x808000, 1);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.workload_faults, 12 + 11);
	set_pagemap_entry(&t, 0xa00000, P | SD | 0x5000);

	/* The process exits: skipped without error. */
	{
		char from[1024], to[1024];

		snprintf(from, sizeof(from), "%s/proc/100", t.dir);
		snprintf(to, sizeof(to), "%s/proc/100.gone", t.dir);
		assert_int_equal(rename(from, to), 0);
	}
	g.n = 0;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 0);
	tier__linux_tracker_softdirty.destroy(priv);

	/* The real tracker: its thread clears and reads by itself, collect()
	 * hands over its picture, destroy() stops it. */
	{
		char from[1024], to[1024];
		int i;

		snprintf(from, sizeof(from), "%s/proc/100.gone", t.dir);
		snprintf(to, sizeof(to), "%s/proc/100", t.dir);
		assert_int_equal(rename(from, to), 0);
		put(&t, "proc/100/clear_refs", "");
		if (tier__linux_tracker_softdirty.create(&t.ctx, 100000, &priv, &err))
			fail_msg("create: %s", err.msg);
		assert_int_equal(tier__linux_tracker_softdirty.set_targets(priv, pids, 2, &err), 0);
		g.n = 0;
		for (i = 0; i < 200 && g.n < 4; i++) {
			usleep(10000);
			assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
		}
		assert_int_equal(g.n, 4);
		assert_string_equal(get(&t, "proc/100/clear_refs"), "4");
		expect_written(&g.v[0], 0x600000, 0x602000, 5);
		expect_written(&g.v[3], 0xa00000, 0xa01000, 5);
		tier__linux_tracker_softdirty.destroy(priv);
	}

	/* No soft-dirty support: no "sd" VmFlags. */
	snprintf(t.proc, sizeof(t.proc), "%s/proc-nocap", t.dir);
	assert_int_equal(tier__linux_tracker_softdirty.probe(&t.ctx, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "CONFIG_MEM_SOFT_DIRTY"));
	tmp_release(&t);
}

/* A process's threads' time on a CPU and waiting for one: read from
 * task/TID/schedstat, matched by tid; the mean wait of the threads that
 * ran or waited in between. */
static void test_waits(void **state)
{
	struct tier_linux_waits a, b;
	struct tmp t;
	char path[1024];

	(void)state;
	tmp_init(&t, "pagemap");
	assert_int_equal(tier_linux_waits_read(t.proc, 100, &a), -ESRCH);	/* no task/ */
	mkdir_in(&t, "proc/100/task");
	assert_int_equal(tier_linux_waits_read(t.proc, 100, &a), 0);
	assert_int_equal(a.n, 0);
	mkdir_in(&t, "proc/100/task/100");
	mkdir_in(&t, "proc/100/task/102");
	mkdir_in(&t, "proc/100/task/101");
	/* 101 has no schedstat (a kernel without CONFIG_SCHED_INFO): left out */
	put(&t, "proc/100/task/100/schedstat", "1000000 500000 7\n");
	put(&t, "proc/100/task/102/schedstat", "2000000 0 3\n");
	assert_int_equal(tier_linux_waits_read(t.proc, 100, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.v[0].tid, 100);
	assert_int_equal(a.v[0].run_ns, 1000000);
	assert_int_equal(a.v[0].wait_ns, 500000);
	assert_int_equal(a.v[1].tid, 102);
	/* 100 ran and waited 4 ms, 102 ran and did not wait: 2 ms each */
	put(&t, "proc/100/task/100/schedstat", "3000000 4500000 9\n");
	put(&t, "proc/100/task/102/schedstat", "2500000 0 4\n");
	assert_int_equal(tier_linux_waits_read(t.proc, 100, &b), 0);
	assert_int_equal(tier_linux_waits_mean(&a, &b), 2000000);
	assert_int_equal(tier_linux_waits_ran(&a, &b), 2500000);
	{
		struct tier_linux_waits_delta d;
		long hz = sysconf(_SC_CLK_TCK);
		char line[160];

		tier_linux_waits_delta(&a, &b, &d);
		assert_int_equal(d.max_ran_ns, 2000000);	/* 100's */
		/* Runnable shares: none without uptime or stat files; 100
		 * started 10 ms ago (7.5 ms runnable), 102 a second ago. */
		assert_true(tier_linux_runnable_share(t.proc, 100, &b) == 0);
		put(&t, "proc/uptime", "50.00 10.00\n");
		assert_true(tier_linux_runnable_share(t.proc, 100, &b) == 0);
		snprintf(line, sizeof(line),
			 "100 (a (b) c) S 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 2 0 %llu 0\n",
			 (unsigned long long)(49.99 * hz + 0.5));
		put(&t, "proc/100/task/100/stat", line);
		snprintf(line, sizeof(line), "102 (w) R 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 2 0 %llu 0\n",
			 (unsigned long long)(49 * hz));
		put(&t, "proc/100/task/102/stat", line);
		if (hz == 100)
			assert_true(fabs(tier_linux_runnable_share(t.proc, 100, &b) - 0.75) < 1e-6);
		else
			assert_true(tier_linux_runnable_share(t.proc, 100, &b) > 0);
	}
	/* 102 asleep throughout: 100's alone */
	put(&t, "proc/100/task/102/schedstat", "2000000 0 3\n");
	assert_int_equal(tier_linux_waits_read(t.proc, 100, &b), 0);
	assert_int_equal(tier_linux_waits_mean(&a, &b), 4000000);
	/* Stalled: a thread that neither ran nor waited in between and is
	 * runnable (R) or blocked in the kernel (D) now; 100 ran, so it is
	 * not, whatever its state; 102 in S (asleep) is not, in R or D it
	 * is, and with no stat file it is not. */
	put(&t, "proc/100/task/100/stat", "100 (a (b) c) R 1 100 100 0 -1 0\n");
	put(&t, "proc/100/task/102/stat", "102 (w) S 1 100 100 0 -1 0\n");
	assert_false(tier_linux_waits_stalled(t.proc, 100, &a, &b));
	put(&t, "proc/100/task/102/stat", "102 (w) R 1 100 100 0 -1 0\n");
	assert_true(tier_linux_waits_stalled(t.proc, 100, &a, &b));
	put(&t, "proc/100/task/102/stat", "102 (w) D 1 100 100 0 -1 0\n");
	assert_true(tier_linux_waits_stalled(t.proc, 100, &a, &b));
	snprintf(path, sizeof(path), "%s/proc/100/task/102/stat", t.dir);
	assert_int_equal(unlink(path), 0);
	assert_false(tier_linux_waits_stalled(t.proc, 100, &a, &b));
	/* 100 gone, a new thread 103 in its place: none in both that ran */
	snprintf(path, sizeof(path), "%s/proc/100/task/100/schedstat", t.dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/proc/100/task/100/stat", t.dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/proc/100/task/100", t.dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(tier_linux_waits_read(t.proc, 100, &b), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(tier_linux_waits_mean(&a, &b), 0);
	/* a counter that went back: another thread that got the tid */
	put(&t, "proc/100/task/102/schedstat", "100 50 1\n");
	assert_int_equal(tier_linux_waits_read(t.proc, 100, &b), 0);
	assert_int_equal(tier_linux_waits_mean(&a, &b), 0);
	tmp_release(&t);
	/* this process's own (Debian's kernels have CONFIG_SCHED_INFO) */
	assert_int_equal(tier_linux_waits_read("/proc", getpid(), &a), 0);
	assert_true(a.n >= 1);
	assert_true(a.v[0].run_ns > 0);
	assert_false(a.cpu_clock);
}

/* proc/PID/task/PID under t: a process of one thread, no files. */
static void mkdir_task(const struct tmp *t, pid_t pid)
{
	char rel[96];

	snprintf(rel, sizeof(rel), "proc/%d", (int)pid);
	mkdir_in(t, rel);
	snprintf(rel, sizeof(rel), "proc/%d/task", (int)pid);
	mkdir_in(t, rel);
	snprintf(rel, sizeof(rel), "proc/%d/task/%d", (int)pid, (int)pid);
	mkdir_in(t, rel);
}

/* This process's CPU time, us. */
static uint64_t cpu_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* A kernel without CONFIG_SCHED_INFO: threads listed, none with a
 * schedstat file - the process's CPU clock stands in, all its threads'
 * time on a CPU, its waits unknown; a process gone leaves nothing. */
static void test_waits_cpu_clock(void **state)
{
	struct tier_linux_waits a, b;
	struct tmp t;
	char rel[96], line[160];
	pid_t me = getpid(), gone;
	long hz = sysconf(_SC_CLK_TCK);
	volatile uint64_t x = 0;
	uint64_t i, t0;
	double share, age;

	(void)state;
	tmp_init(&t, "pagemap");
	mkdir_task(&t, me);
	assert_int_equal(tier_linux_waits_read(t.proc, me, &a), 0);
	assert_true(a.cpu_clock);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0].tid, me);
	assert_true(a.v[0].run_ns > 0);
	assert_int_equal(a.v[0].wait_ns, 0);
	/* 20 ms of computing shows in it, to the ns, as a run (20 ms of
	 * this process's CPU, however loaded the host) */
	t0 = cpu_now_us();
	while (cpu_now_us() - t0 < 20000)
		for (i = 0; i < 100000; i++)
			x += i;
	assert_int_equal(tier_linux_waits_read(t.proc, me, &b), 0);
	assert_true(b.cpu_clock);
	assert_true(tier_linux_waits_ran(&a, &b) >= 10000000);
	assert_int_equal(tier_linux_waits_mean(&a, &b), 0);
	/* its runnable share: its CPU time over its age, at most 1 */
	put(&t, "proc/uptime", "50.00 10.00\n");
	snprintf(rel, sizeof(rel), "proc/%d/task/%d/stat", (int)me, (int)me);
	snprintf(line, sizeof(line), "%d (t) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0\n",
		 (int)me, (unsigned long long)(40 * hz));
	put(&t, rel, line);
	share = tier_linux_runnable_share(t.proc, me, &b);
	age = 10.0;
	assert_true(share > 0 && share <= 1);
	assert_true(b.v[0].run_ns / 1e9 / age > 1 ? share == 1 :
						       fabs(share - b.v[0].run_ns / 1e9 / age) < 1e-6);
	/* a process gone (reaped): no clock either */
	gone = fork();
	assert_true(gone >= 0);
	if (!gone)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	mkdir_task(&t, gone);
	assert_int_equal(tier_linux_waits_read(t.proc, gone, &a), 0);
	assert_int_equal(a.n, 0);
	assert_false(a.cpu_clock);
	tmp_release(&t);
}

/* A soft-dirty tracker by hand over process 100 of the pagemap fixture,
 * rounds of period_us, with threads 100 .. 100 + threads - 1, each having
 * run and waited 1 ms so far. */
static void *sd_fixture(struct tmp *t, uint64_t period_us, int threads)
{
	const pid_t pids[] = { 100 };
	struct tier_err err = { "" };
	char rel[64];
	void *priv;
	int i;

	tmp_init(t, "pagemap");
	write_pagemaps(t);
	if (threads)
		mkdir_in(t, "proc/100/task");
	for (i = 0; i < threads; i++) {
		snprintf(rel, sizeof(rel), "proc/100/task/%d", 100 + i);
		mkdir_in(t, rel);
		snprintf(rel, sizeof(rel), "proc/100/task/%d/schedstat", 100 + i);
		put(t, rel, "1000000 1000000 1\n");
	}
	if (tier__softdirty_create_manual(&t->ctx, period_us, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(tier__linux_tracker_softdirty.set_targets(priv, pids, 1, &err), 0);
	return priv;
}

/* A read is dated by the writer's time less the faults it took: one a
 * dirty page at most, and no more than its minor faults since the clear -
 * 11 pages dirty, 3 faults taken (a mapping grown since the clear is dirty
 * whole without a fault of its own). */
static void test_softdirty_dated_by_faults_taken(void **state)
{
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct tmp t;
	void *priv = sd_fixture(&t, 1000000, 1);

	(void)state;
	put(&t, "proc/100/stat", "100 (a (b) c) R 1 1 1 0 -1 4194304 1000 0 0 0 5 3\n");
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	/* the writer waits 30 ms of the 40 before the read; 3 faults */
	put(&t, "proc/100/task/100/schedstat", "11000000 31000000 4\n");
	put(&t, "proc/100/stat", "100 (a (b) c) R 1 1 1 0 -1 4194304 1003 0 0 0 5 3\n");
	usleep(40000);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.nr_reads, 2);
	assert_int_equal(st.fault_ns, 1000);
	assert_int_equal(st.read_us[0] + 30000 + 3, st.read_wall_us[0]);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* The soft-dirty tracker dates a first write by its writer's own time: the
 * time its threads waited for a CPU between the clear and a read is no time
 * to write in. */
static void test_softdirty_waits(void **state)
{
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	void *priv = sd_fixture(&t, 1000000, 1);

	(void)state;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	/* Starved: waited more than it ran, and ran less than half of what a
	 * read asks (the thread holds the read back); not once it ran that
	 * much, nor a writer that sleeps rather than waits. */
	assert_false(tier__softdirty_starved(priv, 20000));
	put(&t, "proc/100/task/100/schedstat", "6000000 31000000 4\n");
	assert_true(tier__softdirty_starved(priv, 20000));
	assert_false(tier__softdirty_starved(priv, 10000));
	put(&t, "proc/100/task/100/schedstat", "2000000 1500000 4\n");
	assert_false(tier__softdirty_starved(priv, 20000));
	/* the writer waits 30 ms of the 40 before the read */
	put(&t, "proc/100/task/100/schedstat", "11000000 31000000 4\n");
	usleep(40000);
	/* a whole round: not after its first read, once its last is done */
	assert_false(tier__softdirty_has_round(priv, 100));
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_false(tier__softdirty_has_round(priv, 100));
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
	assert_true(tier__softdirty_has_round(priv, 100));
	assert_false(tier__softdirty_has_round(priv, 101));
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.nr_reads, 2);
	assert_true(st.read_wall_us[0] >= 40000);
	/* 30 ms waited (between the middles of the clear and of the read),
	 * and 11 faults of 1 us (the least: too few to measure) */
	assert_int_equal(st.fault_ns, 1000);
	assert_int_equal(st.read_us[0] + 30000 + 11, st.read_wall_us[0]);
	/* the pages first seen then read as first written within the
	 * writer's own time: ln 2 over it (above 69/s for 10 ms), not over
	 * the wall time (17/s for 40 ms) */
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	assert_true(expect_written(&g.v[0], 0x601000, 0x602000, 1) >
		    M_LN2 * 1e6 / (double)st.read_us[0] * 0.99);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* ... and by no more than its busiest thread ran, less its faults, over
 * the share of the wall clock it wants a CPU: a writer blocked meanwhile
 * (by tierd's moves of its pages, say) wrote nothing. duty: the writer's
 * runnable share over its life (run + wait since it started); it ran
 * run_us in the read's 40 ms and is in state `state` then. */
static uint64_t sd_blocked_read(double duty, uint64_t run_us, char state, uint64_t *ran_us)
{
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct tmp t;
	void *priv = sd_fixture(&t, 1000000, 1);
	long hz = sysconf(_SC_CLK_TCK);
	char line[256];
	uint64_t run0 = (uint64_t)(2e9 * duty * 0.75), wait0 = (uint64_t)(2e9 * duty * 0.25);

	/* 100 s up, the thread started 2 s ago, runnable duty of them */
	put(&t, "proc/uptime", "100.00 50.00\n");
	snprintf(line, sizeof(line),
		 "100 (a writer) R 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n",
		 (unsigned long long)(98 * hz));
	put(&t, "proc/100/task/100/stat", line);
	snprintf(line, sizeof(line), "%llu %llu 1\n", (unsigned long long)run0,
		 (unsigned long long)wait0);
	put(&t, "proc/100/task/100/schedstat", line);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	/* 40 ms on the wall clock: it ran run_us and waited for none */
	snprintf(line, sizeof(line), "%llu %llu 4\n", (unsigned long long)(run0 + run_us * 1000),
		 (unsigned long long)wait0);
	put(&t, "proc/100/task/100/schedstat", line);
	snprintf(line, sizeof(line),
		 "100 (a writer) %c 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n",
		 state, (unsigned long long)(98 * hz));
	put(&t, "proc/100/task/100/stat", line);
	usleep(40000);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.nr_reads, 2);
	assert_true(st.read_wall_us[0] >= 40000);
	*ran_us = st.read_ran_us[0];
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
	return st.read_us[0];
}

static void test_softdirty_blocked_writer(void **state)
{
	uint64_t ran;

	(void)state;
	/* Runnable all its life: its 5 ms less 11 faults of 1 us, not the
	 * 40 ms of the wall clock. */
	assert_int_equal(sd_blocked_read(1.0, 5000, 'R', &ran), 5000 - 11);
	assert_int_equal(ran, 5000);
	/* Runnable a quarter of its life: a quarter of the wall clock is
	 * what 5 ms of running stands for. */
	assert_int_equal(sd_blocked_read(0.25, 5000, 'S', &ran), (5000 - 11) * 4);
	/* Runnable a hundredth: no more than the wall clock less waits
	 * and faults (the least of the two). */
	assert_int_equal(sd_blocked_read(0.01, 5000, 'S', &ran) + 11 >= 40000, 1);
	/* Not run at all since the clear, runnable now (waiting for a CPU
	 * since before the clear: schedstat shows no wait until it runs)
	 * or blocked in the kernel: it wrote nothing, whatever the wall
	 * clock - at any duty. */
	assert_true(sd_blocked_read(1.0, 0, 'R', &ran) <= 1);
	assert_int_equal(ran, 0);
	assert_true(sd_blocked_read(0.01, 0, 'D', &ran) <= 1);
	/* ... asleep by its own choice: its wall clock less its faults, as
	 * where its runs are unknown (a writer that sleeps between bursts
	 * has its pages rated by the wall clock). */
	assert_true(sd_blocked_read(1.0, 0, 'S', &ran) + 11 >= 40000);
	assert_true(sd_blocked_read(0.25, 0, 'S', &ran) + 11 >= 40000);
}

/* A page written slower than twice a second is left out of the picture
 * (to DAMON's regions): first seen between reads 0.3 and 1.5 s after the
 * clear, it reads at ln 5 / 1.2 s, 1.3/s; the pages seen at once stay. */
static void test_softdirty_slow_left_out(void **state)
{
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	void *priv = sd_fixture(&t, 1500000, 0);
	size_t i;

	(void)state;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	usleep(300000);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	set_pagemap_entry(&t, 0x808000, P | SD | 0x4008);
	usleep(1200000);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	expect_written(&g.v[2], 0x800000, 0x808000, 2);
	for (i = 0; i < g.n; i++)
		assert_false(g.v[i].start <= 0x808000 && 0x808000 < g.v[i].end);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* Pages per pair of brackets a population gives (expected counts): n[i]
 * pages at rate r[i], first writes in (brk[k - 1], brk[k]] after each of
 * two clears read at brk[0..3]. */
static void pop_counts(const uint64_t *brk, const double *r, const double *n, size_t nr,
		       uint64_t count[][TIER__SD_MAX_BRK + 1])
{
	unsigned kp, kc;
	size_t i;

	memset(count, 0, sizeof(uint64_t) * (TIER__SD_MAX_BRK + 1) * (TIER__SD_MAX_BRK + 1));
	for (kp = 1; kp <= 4; kp++)
		for (kc = 1; kc <= 4; kc++) {
			double c = 0;

			for (i = 0; i < nr; i++) {
				double a = kp > 1 ? brk[kp - 2] / 1e6 : 0, b = brk[kp - 1] / 1e6;
				double x = kc > 1 ? brk[kc - 2] / 1e6 : 0, y = brk[kc - 1] / 1e6;

				c += n[i] * (exp(-r[i] * a) - exp(-r[i] * b)) *
				     (exp(-r[i] * x) - exp(-r[i] * y));
			}
			count[kp][kc] = (uint64_t)(c + 0.5);
		}
}

/* The pages written in both rounds are draws of one population: where
 * most are cold (a GUPS array: 139,000 pages at 5/s, 24,500 at 245/s;
 * reads 20, 60 and 200 ms of the writer's time after the clear, as with
 * faults of about 1 us; rounds of 33 s), a page first
 * written 20-60 ms after both clears is one of them (27.5/s alone, under
 * the 10/s a move must pay for with its population) while the hot ones,
 * within 20 ms in both, keep the first read's bound; a population all
 * warm (30/s) keeps its rates; too few pages, the table alone. */
static void test_softdirty_rate_population(void **state)
{
	static const uint64_t brk[] = { 20000, 60000, 200000, 33000000 };
	uint64_t count[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double mle[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double rate[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	const double cold_hot[] = { 5, 245 }, cold_hot_n[] = { 139000, 24500 };
	const double warm[] = { 30 }, warm_n[] = { 50000 }, few_n[] = { 200 };
	unsigned kp, kc;

	(void)state;
	tier__sd_rate_table(brk, 4, brk, 4, mle);
	assert_true(fabs(mle[2][2] - log(3) / 0.04) < 0.1);	/* 27.5/s */
	pop_counts(brk, cold_hot, cold_hot_n, 2, count);
	assert_true(tier__sd_rate_table_pop(brk, 4, brk, 4,
					     (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate,
					     NULL));
	assert_true(rate[2][2] < 10 && rate[2][2] > 3);
	assert_true(rate[2][3] < 10 && rate[3][2] < 10 && rate[1][3] < 10);
	assert_true(fabs(rate[1][1] - mle[1][1]) < 1e-9);
	for (kp = 0; kp <= 4; kp++)
		for (kc = 0; kc <= 4; kc++) {
			assert_true(rate[kp][kc] <= mle[kp][kc] + 1e-9);	/* never higher */
			if (!kp || !kc)		/* one round alone: the table's */
				assert_true(rate[kp][kc] == mle[kp][kc]);
		}
	pop_counts(brk, warm, warm_n, 1, count);
	assert_true(tier__sd_rate_table_pop(brk, 4, brk, 4,
					     (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate,
					     NULL));
	assert_true(fabs(rate[2][2] - mle[2][2]) < 0.5);
	assert_true(rate[1][3] > 10);
	pop_counts(brk, warm, few_n, 1, count);
	assert_false(tier__sd_rate_table_pop(brk, 4, brk, 4,
					      (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate,
					     NULL));
	assert_true(rate[2][2] == mle[2][2]);
	/* too few pages, with a fallback: the fallback's rates there */
	{
		double fb[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];

		for (kp = 0; kp <= 4; kp++)
			for (kc = 0; kc <= 4; kc++)
				fb[kp][kc] = 1000 + kp * 10 + kc;
		assert_false(tier__sd_rate_table_pop(
			brk, 4, brk, 4, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate,
			(const double(*)[TIER__SD_MAX_BRK + 1])fb));
		assert_true(rate[2][3] == 1023 && rate[0][2] == 1002);
		assert_true(rate[2][0] == mle[2][0]);	/* in neither population */
	}
	/* no last round: the table */
	assert_false(tier__sd_rate_table_pop(brk, 0, brk, 4,
					      (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate,
					     NULL));
}

/* One target's reads serve all its populations (tier__sd_reads): the
 * figures are those of a fit from scratch, bit for bit, whichever
 * populations came before; the likelihoods over the grid are made only
 * once a population has pages enough to fit - a thousand small processes'
 * fits are each the table alone. */
static void test_softdirty_rate_reads_shared(void **state)
{
	static const uint64_t prev[] = { 20000, 60000, 200000, 33000000 };
	static const uint64_t cur[] = { 18000, 55000, 190000 };
	const double cold_hot[] = { 5, 245 }, cold_hot_n[] = { 139000, 24500 };
	const double few[] = { 30 }, few_n[] = { 200 };
	uint64_t big[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	uint64_t small[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double alone[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double shared[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double fb[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	struct tier__sd_reads r;
	unsigned kp, kc, pass;

	(void)state;
	pop_counts(prev, cold_hot, cold_hot_n, 2, big);
	pop_counts(prev, few, few_n, 1, small);
	for (kp = 0; kp <= 4; kp++)
		for (kc = 0; kc <= 3; kc++)
			fb[kp][kc] = 100 + kp * 10 + kc;
	tier__sd_reads_init(&r, prev, 4, cur, 3);
	/* small first, then big, then small again with a fallback */
	for (pass = 0; pass < 3; pass++) {
		const uint64_t(*count)[TIER__SD_MAX_BRK + 1] =
			(const uint64_t(*)[TIER__SD_MAX_BRK + 1])(pass == 1 ? big : small);
		const double(*f)[TIER__SD_MAX_BRK + 1] =
			pass == 2 ? (const double(*)[TIER__SD_MAX_BRK + 1])fb : NULL;
		bool a = tier__sd_rate_table_pop(prev, 4, cur, 3, count, alone, f);
		bool b = tier__sd_rate_pop(&r, count, shared, f, NULL);

		assert_int_equal(a, b);
		assert_int_equal(b, pass == 1);
		for (kp = 0; kp <= 4; kp++)
			for (kc = 0; kc <= 3; kc++)
				assert_true(alone[kp][kc] == shared[kp][kc]);
		/* the grid: not made for the small population, made for the
		 * big one and kept */
		assert_int_equal(r.made, pass >= 1);
	}
	/* what the small population took with a fallback */
	assert_true(shared[2][3] == fb[2][3] && shared[0][2] == fb[0][2]);
}

/* A population fitted again starts from its last fit (priors): the first
 * fit with priors is the fit without, bit for bit, and leaves its weights;
 * eight fits more of the same counts from them stay within 10% of the fit
 * from scratch wherever a pair reads 1/s or more; after the population
 * changed (a warm set in place of the hot one), three fits from the old
 * weights are within 10% of a fit from scratch there. */
static void test_softdirty_rate_prior(void **state)
{
	static const uint64_t brk[] = { 20000, 60000, 200000, 33000000 };
	const double cold_hot[] = { 5, 245 }, cold_hot_n[] = { 139000, 24500 };
	const double cold_warm[] = { 5, 30 }, cold_warm_n[] = { 139000, 5000 };
	uint64_t a[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	uint64_t b[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double fresh[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double rate[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	struct tier__sd_priors pr;
	struct tier__sd_reads r;
	unsigned kp, kc, k;

	(void)state;
	memset(&pr, 0, sizeof(pr));
	pop_counts(brk, cold_hot, cold_hot_n, 2, a);
	pop_counts(brk, cold_warm, cold_warm_n, 2, b);
	tier__sd_reads_init(&r, brk, 4, brk, 4);
	assert_true(tier__sd_rate_pop(&r, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])a, fresh, NULL, NULL));
	assert_true(tier__sd_rate_pop(&r, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])a, rate, NULL, &pr));
	assert_true(pr.both.valid);
	assert_false(pr.alone.valid);	/* no page written in this round alone */
	for (kp = 0; kp <= 4; kp++)
		for (kc = 0; kc <= 4; kc++)
			assert_true(rate[kp][kc] == fresh[kp][kc]);
	/* the same counts again, from the last fit's weights: the iteration
	 * goes on (EM's slow way to the maximum), each pair within 10% of
	 * the fit from scratch */
	for (k = 0; k < 8; k++)
		assert_true(tier__sd_rate_pop(&r, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])a, rate,
					      NULL, &pr));
	for (kp = 1; kp <= 4; kp++)
		for (kc = 1; kc <= 4; kc++)
			if (fresh[kp][kc] >= 1)
				assert_true(fabs(rate[kp][kc] - fresh[kp][kc]) <= 0.1 * fresh[kp][kc]);
	print_message("# 1/2 (7%% of its pages hot): %.2f/s from scratch, %.2f/s after 8 fits "
		      "from the last\n", fresh[1][2], rate[1][2]);
	/* a warm set in place of the hot one */
	assert_true(tier__sd_rate_pop(&r, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])b, fresh, NULL, NULL));
	for (k = 0; k < 3; k++)
		assert_true(tier__sd_rate_pop(&r, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])b, rate,
					      NULL, &pr));
	for (kp = 1; kp <= 4; kp++)
		for (kc = 1; kc <= 4; kc++) {
			if (fresh[kp][kc] < 1)
				continue;
			assert_true(fabs(rate[kp][kc] - fresh[kp][kc]) <= 0.1 * fresh[kp][kc]);
		}
}

/* A process's first round: its pages, first written in each bracket as a
 * GUPS array's (139,000 at 3.6/s, 24,500 at 183/s) are at its third read,
 * are one population too: those first written 20-60 ms after the clear
 * (27.5/s alone) and 60-200 ms (8.6/s) read near the population's means
 * there, those within 20 ms keep the first read's bound. */
static void test_softdirty_rate_first_round(void **state)
{
	static const uint64_t brk[] = { 20000, 60000, 200000 };
	const double r[] = { 3.6, 183 }, n[] = { 139000, 24500 };
	uint64_t count[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double mle[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double rate[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	unsigned kc;
	size_t i;

	(void)state;
	memset(count, 0, sizeof(count));
	for (kc = 1; kc <= 3; kc++)
		for (i = 0; i < 2; i++)
			count[0][kc] += (uint64_t)(n[i] * (exp(-r[i] * (kc > 1 ? brk[kc - 2] : 0) / 1e6) -
							   exp(-r[i] * brk[kc - 1] / 1e6)));
	tier__sd_rate_table(brk, 0, brk, 3, mle);
	assert_true(tier__sd_rate_table_pop(brk, 0, brk, 3,
					    (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate, NULL));
	print_message("# first round: %.1f, %.1f, %.1f /s (alone %.1f, %.1f, %.1f)\n", rate[0][1],
		      rate[0][2], rate[0][3], mle[0][1], mle[0][2], mle[0][3]);
	/* the population's own means: 3.5% of those 20-60 ms are hot, and
	 * they make a third of that bracket's mean, 9.9/s; one draw a page,
	 * each bracket reads the rate most of its pages have (the cold
	 * pages' after the first 20 ms: under the 10/s a move must pay for;
	 * the fit spreads the cold pages' rate, so lower than theirs) */
	for (kc = 1; kc <= 3; kc++) {
		double m = 0, z = 0;

		for (i = 0; i < 2; i++) {
			double k = n[i] * (exp(-r[i] * (kc > 1 ? brk[kc - 2] : 0) / 1e6) -
					   exp(-r[i] * brk[kc - 1] / 1e6));

			m += k * r[i];
			z += k;
		}
		print_message("# bracket %u: the population's mean %.1f/s\n", kc, m / z);
		if (kc > 1)
			assert_true(m / z > 3 && rate[0][kc] < 3.6 * 1.5);
	}
	assert_true(mle[0][2] > 20 && rate[0][2] < 5);
	assert_true(mle[0][3] > 8 && rate[0][3] < 4);
	assert_true(rate[0][1] > 30);
	/* Most of a bracket's pages hot: it reads hot. Half the pages at
	 * 15/s, half at 1/s: hot pages are most of every bracket's; the
	 * first two read above the 10/s bar, the third (60-200 ms) its own
	 * rate - none is ever raised above it. */
	{
		const double r2[] = { 1, 15 }, n2[] = { 50000, 50000 };

		memset(count, 0, sizeof(count));
		for (kc = 1; kc <= 3; kc++)
			for (i = 0; i < 2; i++)
				count[0][kc] += (uint64_t)(n2[i] *
							   (exp(-r2[i] * (kc > 1 ? brk[kc - 2] : 0) / 1e6) -
							    exp(-r2[i] * brk[kc - 1] / 1e6)));
		assert_true(tier__sd_rate_table_pop(brk, 0, brk, 3,
						    (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count,
						    rate, NULL));
		print_message("# half at 15/s, half at 1/s: %.1f, %.1f, %.1f /s\n", rate[0][1],
			      rate[0][2], rate[0][3]);
		assert_true(rate[0][1] > 10 && rate[0][2] > 10);
		assert_true(fabs(rate[0][3] - mle[0][3]) < 1e-9 * mle[0][3]);
	}
}

/* A page the last round did not see written, first written within this
 * round's first read: where that round was a process's first (1 s of the
 * wall clock, its last read at 234 ms of the writer's), a GUPS array's
 * cold page (3.6/s) missed by it - 43% of them - and quick now, one in
 * eighteen: it reads as that, about 4/s, by the table and by its
 * population's fit, even with more such pages than the cold ones give (the
 * guest bench's 7,600 against 3,400); where the last round was long
 * (33 s), a page it did not see written has changed, and reads this
 * round's 43/s alone. The hot pages, written in both rounds, keep the
 * first read's bound. */
static void test_softdirty_rate_short_last_round(void **state)
{
	static const uint64_t first[] = { 21000, 63000, 204000, 234000 };
	static const uint64_t longer[] = { 21000, 63000, 204000, 33000000 };
	static const uint64_t cur[] = { 16000, 61000, 205000 };
	const double r[] = { 3.6, 183 }, n[] = { 139000, 24500 };
	uint64_t count[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double mle[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double rate[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	unsigned kp, kc;
	size_t i;

	(void)state;
	/* expected counts: kp 0 where the last round missed the page */
	memset(count, 0, sizeof(count));
	for (kp = 0; kp <= 4; kp++)
		for (kc = 1; kc <= 3; kc++)
			for (i = 0; i < 2; i++) {
				double pa = kp ? (kp > 1 ? exp(-r[i] * first[kp - 2] / 1e6) : 1) -
							 exp(-r[i] * first[kp - 1] / 1e6)
					       : exp(-r[i] * first[3] / 1e6);
				double pc = (kc > 1 ? exp(-r[i] * cur[kc - 2] / 1e6) : 1) -
					    exp(-r[i] * cur[kc - 1] / 1e6);

				count[kp][kc] += (uint64_t)(n[i] * pa * pc + 0.5);
			}
	tier__sd_rate_table(first, 4, cur, 3, mle);
	print_message("# after a short round, not written then: %.1f, %.1f, %.1f /s by the table "
		      "(%llu pages within 16 ms)\n", mle[0][1], mle[0][2], mle[0][3],
		      (unsigned long long)count[0][1]);
	assert_true(mle[0][1] > 3 && mle[0][1] < 6);
	assert_true(mle[1][1] > 30);
	assert_true(tier__sd_rate_table_pop(first, 4, cur, 3,
					    (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate, NULL));
	assert_true(rate[0][1] < 6 && rate[0][2] < 6);
	assert_true(rate[1][1] > 30);
	/* more of them than the cold pages give */
	count[0][1] += 4200;
	assert_true(tier__sd_rate_table_pop(first, 4, cur, 3,
					    (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate, NULL));
	print_message("# with %llu pages within 16 ms: %.1f/s\n", (unsigned long long)count[0][1],
		      rate[0][1]);
	assert_true(rate[0][1] < 10);
	/* after a long round: changed, this round alone */
	tier__sd_rate_table(longer, 4, cur, 3, mle);
	assert_true(mle[0][1] > 40);
	{
		double alone[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];

		tier__sd_rate_table(cur, 0, cur, 3, alone);
		for (kc = 1; kc <= 3; kc++)
			assert_true(fabs(mle[0][kc] - alone[0][kc]) < 1e-9 * alone[0][kc]);
	}
}

/* The picture of a target whose pages fell in each pair of brackets as
 * that population gives them (one run per pair): the pages written
 * 20-60 ms after both clears read 27.5/s while the last round was the
 * process's first, and as the population's cold pages once its rounds
 * are alike (steady); the hot pages' pair keeps the first read's bound. */
static void test_softdirty_picture_population(void **state)
{
	static const uint64_t brk[] = { 20000, 60000, 200000, 33000000 };
	uint64_t count[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	struct tier__sd_fits fits = { 0 };
	const double r[] = { 5, 245 }, n[] = { 139000, 24500 };
	struct tier__sd_runs seen = { 0 }, prev = { 0 };
	struct tier__sd_pairs pairs = { 0 };
	struct tier__sd_pic pic = { 0 };
	struct tier__sd_rounds rounds = {
		.pid = 100, .seen = &seen, .prev = &prev,
		.brk_us = brk, .prev_brk_us = brk, .nbrk = 4, .nprev_brk = 4,
	};
	uint64_t at = 0x10000000, cell22 = 0, cell11 = 0;
	unsigned kp, kc, steady;
	size_t i;

	(void)state;
	pop_counts(brk, r, n, 2, count);
	seen.cap = prev.cap = 16;
	seen.v = calloc(16, sizeof(*seen.v));
	prev.v = calloc(16, sizeof(*prev.v));
	assert_non_null(seen.v);
	assert_non_null(prev.v);
	for (kp = 1; kp <= 4; kp++)
		for (kc = 1; kc <= 4; kc++) {
			uint64_t end = at + (count[kp][kc] << 12);

			prev.v[prev.n++] = (struct tier__sd_run){ at, end, kp - 1 };
			seen.v[seen.n++] = (struct tier__sd_run){ at, end, kc - 1 };
			if (kp == 2 && kc == 2)
				cell22 = at;
			if (kp == 1 && kc == 1)
				cell11 = at;
			at = end;
		}
	for (steady = 0; steady < 2; steady++) {
		double r22 = 0, r11 = 0;

		rounds.steady = steady;
		pairs.n = pairs.ntg = 0;
		assert_int_equal(tier__sd_pairs_add(&pairs, &rounds, false), 0);
		tier__sd_picture(&pic, &pairs, NULL, NULL, &fits);
		for (i = 0; i < pic.n; i++) {
			/* a run's rate: 1 write in 2 checks over interval_us */
			double ri = 2 * log(2) / (pic.v[i].interval_us / 1e6);

			assert_true(pic.v[i].write & TIER_OBS_STANDING);
			if (pic.v[i].start <= cell22 && cell22 < pic.v[i].end)
				r22 = ri;
			if (pic.v[i].start <= cell11 && cell11 < pic.v[i].end)
				r11 = ri;
		}
		assert_true(r11 > 30);
		if (steady)
			assert_true(r22 > 3 && r22 < 10);
		else
			assert_true(fabs(r22 - log(3) / 0.04) < 0.5);
	}
	/* steady or not, the counts differ: fitted each time */
	assert_int_equal(fits.fitted, 2);
	assert_int_equal(fits.reused, 0);
	free(seen.v);
	free(prev.v);
	tier__sd_pic_free(&pic);
	tier__sd_pairs_free(&pairs);
	tier__sd_fits_free(&fits);
}

/* The tiers of the picture-by-tier test: pages below split on tier 0, the
 * rest on tier 1. Counts the times it was asked. */
static size_t two_tiers_asked;

static void two_tiers(void *arg, pid_t pid, uint64_t start, uint64_t end,
		      void (*fn)(void *fctx, uint64_t start, uint64_t end, unsigned tier), void *fctx)
{
	uint64_t split = *(const uint64_t *)arg;

	two_tiers_asked++;
	assert_int_equal(pid, 100);
	if (start < split)
		fn(fctx, start, end < split ? end : split, 0);
	if (end > split)
		fn(fctx, start > split ? start : split, end, 1);
}

/* The rate a picture gives the page at addr (0: none). */
static double pic_rate_at(const struct tier__sd_pic *pic, uint64_t addr)
{
	size_t i;

	for (i = 0; i < pic->n; i++)
		if (pic->v[i].start <= addr && addr < pic->v[i].end)
			return 2 * log(2) / (pic->v[i].interval_us / 1e6);
	return 0;
}

/* Each tier's pages are a population of their own: once a GUPS array's
 * hot pages (24,500 at 245/s) are on tier 0 and its cold ones (139,000 at
 * 5/s) on tier 1, a cold page first written within 20 ms after one clear
 * and 20-60 ms after the other reads as the cold page it is, not at the
 * rate of the pair over the whole process (a third of whose pages are
 * hot); the hot pages keep theirs. */
static void test_softdirty_picture_by_tier(void **state)
{
	static const uint64_t brk[] = { 20000, 60000, 200000, 33000000 };
	uint64_t hot[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	uint64_t cold[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	struct tier__sd_fits fits = { 0 };
	struct tier__sd_pic again = { 0 };
	const double rh = 245, nh = 24500, rc = 5, nc = 139000;
	struct tier__sd_runs seen = { 0 }, prev = { 0 };
	struct tier__sd_pairs pairs = { 0 };
	struct tier__sd_pic pic = { 0 };
	struct tier__sd_rounds rounds = {
		.pid = 100, .seen = &seen, .prev = &prev, .brk_us = brk, .prev_brk_us = brk,
		.nbrk = 4, .nprev_brk = 4, .steady = true,
	};
	uint64_t at = 0x10000000, split, cold12 = 0, hot11 = 0, hot12 = 0;
	double whole11;
	unsigned kp, kc, pop;

	(void)state;
	pop_counts(brk, &rh, &nh, 1, hot);
	pop_counts(brk, &rc, &nc, 1, cold);
	seen.cap = prev.cap = 32;
	seen.v = calloc(32, sizeof(*seen.v));
	prev.v = calloc(32, sizeof(*prev.v));
	assert_non_null(seen.v);
	assert_non_null(prev.v);
	split = at;
	for (pop = 0; pop < 2; pop++) {
		for (kp = 1; kp <= 4; kp++)
			for (kc = 1; kc <= 4; kc++) {
				uint64_t n = pop ? cold[kp][kc] : hot[kp][kc], end = at + (n << 12);

				if (!n)
					continue;
				prev.v[prev.n++] = (struct tier__sd_run){ at, end, kp - 1 };
				seen.v[seen.n++] = (struct tier__sd_run){ at, end, kc - 1 };
				if (kp == 1 && kc == 2)
					*(pop ? &cold12 : &hot12) = at;
				if (!pop && kp == 1 && kc == 1)
					hot11 = at;
				at = end;
			}
		if (!pop)
			split = at;
	}
	assert_true(cold12 && hot12 && hot11);
	assert_int_equal(tier__sd_pairs_add(&pairs, &rounds, false), 0);
	/* one population: the pair reads the same on both tiers, over the
	 * 10/s a move must pay for */
	tier__sd_picture(&pic, &pairs, NULL, NULL, &fits);
	whole11 = pic_rate_at(&pic, hot11);
	assert_true(pic_rate_at(&pic, cold12) > 10);
	assert_true(fabs(pic_rate_at(&pic, cold12) - pic_rate_at(&pic, hot12)) < 1e-6);
	/* by tier: the cold ones' pair reads as cold pages do, the hot ones
	 * keep theirs */
	two_tiers_asked = 0;
	tier__sd_picture(&pic, &pairs, two_tiers, &split, &fits);
	/* each run's tiers asked for once: the rates go out over the pieces
	 * the count found */
	assert_int_equal(two_tiers_asked, pairs.n);
	assert_true(pic_rate_at(&pic, cold12) < 10);
	assert_true(pic_rate_at(&pic, hot12) > 30);
	assert_true(pic_rate_at(&pic, hot11) > 30);
	assert_int_equal(fits.n, 1);
	print_message("# pair 1,2: %.1f/s the whole, %.1f/s the cold tier's, %.1f/s the hot tier's\n",
		      fits.v[0].rate[TIER__SD_CLASSES][1][2], pic_rate_at(&pic, cold12),
		      pic_rate_at(&pic, hot12));
	/* the same pairs on the same tiers: the fits are taken again, and
	 * the picture is the same */
	assert_int_equal(fits.fitted, 2);
	assert_int_equal(fits.reused, 0);
	tier__sd_picture(&again, &pairs, two_tiers, &split, &fits);
	assert_int_equal(fits.fitted, 2);
	assert_int_equal(fits.reused, 1);
	assert_int_equal(again.n, pic.n);
	assert_memory_equal(again.v, pic.v, pic.n * sizeof(*pic.v));
	/* too few pages on a tier (255): the whole's fit there - the pages'
	 * tiers changed, so the fits are made anew */
	split = hot11 + (255 << 12);
	tier__sd_picture(&pic, &pairs, two_tiers, &split, &fits);
	assert_int_equal(fits.fitted, 3);
	assert_true(fabs(pic_rate_at(&pic, hot11) - whole11) < 1e-6);
	assert_true(pic_rate_at(&pic, cold12) > 10);
	/* a picture without the target drops its fits */
	pairs.n = pairs.ntg = 0;
	tier__sd_picture(&pic, &pairs, two_tiers, &split, &fits);
	assert_int_equal(fits.n, 0);
	assert_int_equal(pic.n, 0);
	free(seen.v);
	free(prev.v);
	tier__sd_pic_free(&pic);
	tier__sd_pic_free(&again);
	tier__sd_pairs_free(&pairs);
	tier__sd_fits_free(&fits);
}

/* Pages of each pair of brackets (first seen at read kp in one round, at
 * kc in the next) that a population of 1,000 pages written 5 times a
 * second and 150 written 245 times gives, reads 20, 60 and 200 ms after
 * the clear and a round of 400 ms (pop_counts()); symmetric. */
static const unsigned steady_cells[4][4] = {
	{ 157, 17, 35, 22 },
	{ 17, 27, 61, 38 },
	{ 35, 61, 139, 87 },
	{ 22, 38, 87, 54 },
};

#define STEADY_MAP 0x1000000ull

/* The first page of cell kp, kc (0-based) in the steady test's mapping:
 * the cells' pages one run each, in row order. */
static uint64_t steady_cell_at(unsigned kp, unsigned kc)
{
	uint64_t at = STEADY_MAP;
	unsigned i, j;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++) {
			if (i == kp && j == kc)
				return at;
			at += (uint64_t)steady_cells[i][j] << 12;
		}
	return at;
}

/* Sets the cells' pages as a round's writes show them at read k (1-4) of
 * round `round`: soft-dirty on those whose bracket that round is k or
 * less (a page's bracket: kp in rounds 0 and 2, kc in round 1), clean the
 * others. */
static void steady_bits(const struct tmp *t, unsigned round, unsigned k)
{
	char path[1024];
	unsigned kp, kc, i;
	int fd;

	snprintf(path, sizeof(path), "%s/proc/100/pagemap", t->dir);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	for (kp = 0; kp < 4; kp++)
		for (kc = 0; kc < 4; kc++) {
			uint64_t at = steady_cell_at(kp, kc);
			unsigned b = round == 1 ? kc : kp;

			for (i = 0; i < steady_cells[kp][kc]; i++) {
				uint64_t a = at + ((uint64_t)i << 12);
				uint64_t e = P | (b < k ? SD : 0) | (0x10000 + ((a - STEADY_MAP) >> 12));

				assert_int_equal(pwrite(fd, &e, 8, (off_t)(a >> 12) * 8), 8);
			}
		}
	close(fd);
}

/* The rate the picture in g gives the page at addr (0: not in it). */
static double rate_at(const struct got *g, uint64_t addr)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->v[i].start <= addr && addr < g->v[i].end)
			return obs_rate(&g->v[i]);
	return 0;
}

/* The '/'s between "reads" and " ms;" of a debug account (sd_pairs). */
static unsigned slashes(const char *say)
{
	const char *q = strstr(say, "reads "), *end = strstr(say, " ms;");
	unsigned n = 0;

	while (q && end && (q = strchr(q, '/')) && q < end)
		n++, q++;
	return n;
}

/* The tracker turns the population fit on once a target's last round was
 * not its first (softdirty_rate.h): three rounds of the same writes (the
 * population above, each page in its pair of brackets), and the pages
 * first written 20-60 ms after both clears read as the warm pages the
 * second round's picture makes of them (27.5/s alone), as the cold ones
 * the third's does (under 10/s); the hot pages' pair keeps its rate. The
 * debug log's account of the pairs (sd_pairs) names the rounds' reads and
 * the pairs above 5/s. */
static void test_softdirty_steady_population(void **state)
{
	struct tier_linux_tracker_stats st;
	static const uint64_t at_us[] = { 20000, 60000, 200000, 400000 };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	double r22[3] = { 0 }, r11[3] = { 0 };
	char path[1024];
	struct tmp t;
	unsigned round, k;
	void *priv = sd_fixture(&t, 1000000, 0);
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/proc/100/maps", t.dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("01000000-01400000 rw-p 00000000 00:00 0\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/proc/100/pagemap", t.dir);
	assert_int_equal(truncate(path, (0x1400000 >> 12) * 8), 0);
	for (round = 0; round < 3; round++) {
		uint64_t t0;

		assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
		t0 = tier_linux_now_us();
		for (k = 1; k <= 4; k++) {
			uint64_t now;

			steady_bits(&t, round, k);
			now = tier_linux_now_us();
			if (now < t0 + at_us[k - 1])
				usleep((useconds_t)(t0 + at_us[k - 1] - now));
			assert_int_equal(tier__softdirty_step(priv, k < 4 ? TIER__SD_READ :
									    TIER__SD_READ_LAST, &err), 0);
		}
		g.n = 0;
		assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
		r22[round] = rate_at(&g, steady_cell_at(1, 1));
		r11[round] = rate_at(&g, steady_cell_at(0, 0));
		tier__linux_tracker_softdirty.stats(priv, &st);
		printf("# round %u: %s\n", round, st.sd_pairs);
		/* the debug log's account: the process, steady from its third
		 * round, both rounds' four reads, the pairs rated 5/s or more */
		assert_non_null(strstr(st.sd_pairs, round < 2 ? "pid 100 (not steady), reads " :
								 "pid 100, reads "));
		assert_int_equal(slashes(st.sd_pairs), round ? 6 : 3);
		assert_true(round == 2 || strstr(st.sd_pairs, " tier 4 1/1 ") ||
			    strstr(st.sd_pairs, " tier 4 0/1 "));
	}
	/* the second round's picture: the pair's own rate, well above the
	 * bar (brackets stretched by a loaded host lower it somewhat) */
	assert_true(r22[1] > 15);
	assert_true(r22[2] < 10);
	assert_true(r22[2] < 0.5 * r22[1]);
	assert_true(r11[1] > 20);
	assert_true(r11[2] > 0.8 * r11[1]);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* Fixture process 100 with the mappings `maps` (a copy of the fixture's
 * pages, and 300 more written at 0x1000000), one thread whose schedstat
 * says 0 ns run, and a manual soft-dirty tracker watching it. */
static void *sd_300_fixture(struct tmp *t, const char *maps)
{
	void *priv = sd_fixture(t, 1000000, 1);
	char path[1024];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/100/maps", t->dir);
	assert_non_null(f = fopen(path, "w"));
	fputs(maps, f);
	fclose(f);
	for (i = 0; i < 300; i++)
		set_pagemap_entry(t, 0x1000000 + (uint64_t)i * 4096, P | SD | (0x9000 + (uint64_t)i));
	snprintf(path, sizeof(path), "%s/proc/100/pagemap", t->dir);
	assert_int_equal(truncate(path, (0x1200000 >> 12) * 8), 0);
	put(t, "proc/100/task/100/schedstat", "0 0 1\n");
	return priv;
}

/* A read that sees more pages written than the writer could have written
 * since the clear (308 pages in 10 us of its time: a mapping made or grown
 * since, soft-dirty whole) starts the process's round over - it is
 * cleared again, its pages left out of the picture - and a read that fits
 * the writer's time (100 ms) is taken as it is. */
static void test_softdirty_restart_unwritten(void **state)
{
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	void *priv;
	size_t i;
	bool seen = false;

	(void)state;
	priv = sd_300_fixture(&t, "00800000-00810000 rw-p 00000000 00:00 0\n"
				  "01000000-01200000 rw-p 00000000 00:00 0\n");
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	assert_string_equal(get(&t, "proc/100/clear_refs"), "4");
	put(&t, "proc/100/clear_refs", "x");
	/* 308 pages dirty (8 of 0x800000's, 300), the writer 10 us on a CPU */
	put(&t, "proc/100/task/100/schedstat", "10000 0 2\n");
	usleep(20000);
	g.n = 0;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.restarts, 1);
	assert_string_equal(get(&t, "proc/100/clear_refs"), "4");	/* cleared again */
	assert_int_equal(g.n, 0);
	/* the same pages, the writer 100 ms on a CPU since: written */
	put(&t, "proc/100/clear_refs", "x");
	put(&t, "proc/100/task/100/schedstat", "100010000 0 3\n");
	usleep(20000);
	g.n = 0;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.restarts, 1);
	assert_string_equal(get(&t, "proc/100/clear_refs"), "x");
	for (i = 0; i < g.n; i++)
		if (g.v[i].start <= 0x1000000 && 0x1000000 < g.v[i].end)
			seen = true;
	assert_true(seen);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* What the tracker says its reads were dated by: schedstat where the
 * writer's threads have it; the wall clock where its task directory
 * lists none (the CPU clock's case is test_waits_cpu_clock's: it reads
 * a real process); nothing before a clear. */
static void test_softdirty_writer_time(void **state)
{
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct tmp t;
	void *priv = sd_fixture(&t, 1000000, 1);

	(void)state;
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.writer_time, TIER_LINUX_WT_UNKNOWN);
	assert_null(tier_linux_writer_time_name(st.writer_time));
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.writer_time, TIER_LINUX_WT_SCHEDSTAT);
	assert_string_equal(tier_linux_writer_time_name(st.writer_time), "schedstat");
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);

	priv = sd_fixture(&t, 1000000, 0);
	mkdir_in(&t, "proc/100/task");
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.writer_time, TIER_LINUX_WT_WALL);
	assert_string_equal(tier_linux_writer_time_name(st.writer_time), "wall");
	assert_string_equal(tier_linux_writer_time_name(TIER_LINUX_WT_CPU_CLOCK), "cpu-clock");
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* A writer of two threads is starved by each thread's mean: both waited
 * 31 ms and ran 6 ms, less than half of a 20 ms read each, though 12 ms
 * together. */
static void test_softdirty_starved_threads(void **state)
{
	struct tier_err err = { "" };
	struct tmp t;
	void *priv = sd_fixture(&t, 1000000, 2);

	(void)state;
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	put(&t, "proc/100/task/100/schedstat", "7000000 32000000 4\n");
	put(&t, "proc/100/task/101/schedstat", "7000000 32000000 4\n");
	assert_true(tier__softdirty_starved(priv, 20000));
	assert_false(tier__softdirty_starved(priv, 12000));
	/* one thread asleep throughout: the other alone */
	put(&t, "proc/100/task/101/schedstat", "1000000 1000000 1\n");
	assert_true(tier__softdirty_starved(priv, 20000));
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* The tiers the world says pages are on: all on tier 1; counts what it
 * was asked. */
struct asked {
	unsigned calls;
	uint64_t pages;
	pid_t pid;
};

static void tiers_asked(void *arg, pid_t pid, uint64_t start, uint64_t end,
			void (*fn)(void *fctx, uint64_t start, uint64_t end, unsigned tier), void *fctx)
{
	struct asked *a = arg;

	a->calls++;
	a->pages += (end - start) >> 12;
	a->pid = pid;
	fn(fctx, start, end, 1);
}

/* A tracker by hand over fixture process 100's pages (its bits cleared),
 * with the world's tiers' hook and its generation (NULL: none). */
static void *manual_with_tiers(struct tmp *t,
			       void (*tiers)(void *, pid_t, uint64_t, uint64_t,
					     void (*)(void *, uint64_t, uint64_t, unsigned), void *),
			       uint64_t (*tiers_gen)(void *), void *arg)
{
	const pid_t pids[] = { 100 };
	struct tier_err err = { "" };
	void *priv;

	tmp_init(t, "pagemap");
	write_pagemaps(t);
	t->ctx.tiers = tiers;
	t->ctx.tiers_gen = tiers_gen;
	t->ctx.tiers_arg = arg;
	if (tier__softdirty_create_manual(&t->ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(tier__linux_tracker_softdirty.set_targets(priv, pids, 1, &err), 0);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	return priv;
}

/* collect() asks the world which tier the picture's pages are on (the
 * tracker keeps the hook its context came with). */
static void test_softdirty_asks_tiers(void **state)
{
	struct asked a = { 0 };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	void *priv;

	(void)state;
	priv = manual_with_tiers(&t, tiers_asked, NULL, &a);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_int_equal(a.calls, 0);	/* the tracker's thread does not */
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	assert_true(a.calls >= 4);
	assert_int_equal(a.pid, 100);
	assert_true(a.pages >= 11);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* Process 100's one thread, runnable all its life (started 2 s ago, run
 * all of it), has run ran_us more: a read is dated by that rather than
 * by the wall clock, which a loaded host stretches. The first call makes
 * its task directory. */
static void writer_ran(struct tmp *t, uint64_t ran_us)
{
	long hz = sysconf(_SC_CLK_TCK);
	char line[256];

	if (!ran_us) {
		mkdir_in(t, "proc/100/task");
		mkdir_in(t, "proc/100/task/100");
	}
	put(t, "proc/uptime", "100.00 50.00\n");
	snprintf(line, sizeof(line),
		 "100 (a writer) R 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n",
		 (unsigned long long)(98 * hz));
	put(t, "proc/100/task/100/stat", line);
	snprintf(line, sizeof(line), "%llu 0 %llu\n",
		 (unsigned long long)(2000000000ULL + ran_us * 1000),
		 (unsigned long long)(1 + ran_us / 1000));
	put(t, "proc/100/task/100/schedstat", line);
}

/* ... and rates the picture again only when it or the pages' tiers
 * changed: collects in between hand over the last rates, asking nothing. */
struct asked_gen {
	struct asked a;
	uint64_t gen;
};

static void tiers_asked_gen(void *arg, pid_t pid, uint64_t start, uint64_t end,
			    void (*fn)(void *fctx, uint64_t start, uint64_t end, unsigned tier),
			    void *fctx)
{
	tiers_asked(&((struct asked_gen *)arg)->a, pid, start, end, fn, fctx);
}

static uint64_t tiers_gen_of(void *arg)
{
	return ((struct asked_gen *)arg)->gen;
}

static void test_softdirty_picture_reused(void **state)
{
	struct asked_gen a = { { 0 }, 7 };
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct got g = { .n = 0 }, first;
	struct tmp t;
	unsigned calls;
	void *priv;

	(void)state;
	priv = manual_with_tiers(&t, tiers_asked_gen, tiers_gen_of, &a);
	/* Its reads dated by the writer's runs (20 ms each): a read is
	 * dated by the lesser of the wall clock and the writer's time, so
	 * the wall clock is let run past the writer's first. Dated by a
	 * wall clock of microseconds, the page first written by the third
	 * read got the first one's rate (both at the cap) and merged with
	 * its neighbour into one run; on a loaded host, the wall clock
	 * would age the pages below the tracker's bar. */
	writer_ran(&t, 0);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	writer_ran(&t, 20000);
	usleep(20000);
	read_collect(priv, TIER__SD_READ, &g, 4);
	calls = a.a.calls;
	assert_true(calls >= 4);
	first = g;
	/* Nothing changed: the same observations, the world not asked; no
	 * news for a step. */
	assert_false(tier__linux_tracker_softdirty.news(priv));
	g.n = 0;
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	assert_memory_equal(g.v, first.v, 4 * sizeof(g.v[0]));
	assert_int_equal(a.a.calls, calls);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.sd_pictures_reused, 1);
	/* A page moved (the world's number changed): news, asked again. */
	a.gen++;
	assert_true(tier__linux_tracker_softdirty.news(priv));
	g.n = 0;
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 4);
	assert_true(a.a.calls >= calls + 4);
	calls = a.a.calls;
	assert_false(tier__linux_tracker_softdirty.news(priv));
	/* A new read (a new picture), the tiers as they were: news, asked
	 * again. */
	set_pagemap_entry(&t, 0x600000, P | SD | 0x1000);
	writer_ran(&t, 40000);
	usleep(20000);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_true(tier__linux_tracker_softdirty.news(priv));
	g.n = 0;
	assert_int_equal(tier__linux_tracker_softdirty.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 5);
	assert_true(a.a.calls >= calls + 5);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.sd_pictures_reused, 1);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* The tracker holds an early read back until its writer's own time reaches
 * the read's: dated as a read would date it, its minor faults since the
 * clear standing for the pages it wrote (each a fault). */
static void test_softdirty_behind(void **state)
{
	struct tier_err err = { "" };
	struct tmp t;
	void *priv = sd_fixture(&t, 1000000, 1);

	(void)state;
	put(&t, "proc/100/stat", "100 (a (b) c) R 1 1 1 0 -1 4194304 1000 0 0 0 5 3\n");
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	usleep(40000);
	/* 40 ms and more, nothing written: ran all through */
	assert_false(tier__softdirty_behind(priv, 5000));
	assert_true(tier__softdirty_behind(priv, 60000000));
	/* 10 million faults of 1 us: all but a sixteenth of it (at most a
	 * few ms of a wall clock under a second) was faulting */
	put(&t, "proc/100/stat", "100 (a (b) c) R 1 1 1 0 -1 4194304 10001000 0 0 0 5 3\n");
	assert_true(tier__softdirty_behind(priv, 100000) > 50000);	/* how far: the rest */
	/* waits count as the faults do: 10 s waited */
	put(&t, "proc/100/stat", "100 (a (b) c) R 1 1 1 0 -1 4194304 1000 0 0 0 5 3\n");
	assert_false(tier__softdirty_behind(priv, 5000));
	put(&t, "proc/100/task/100/schedstat", "2000000 10001000000 9\n");
	assert_true(tier__softdirty_behind(priv, 100000));
	/* its faults unreadable: nothing to wait for */
	put(&t, "proc/100/stat", "");
	assert_false(tier__softdirty_behind(priv, 100000));
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* A writer's own CPU per dirty page bounds what a fault cost it: the least
 * over a round's reads (of 256 pages or more) dates the next round's first
 * writes, up to 4 times the calibration's figure; in a target's first
 * round, the least over that round's earlier reads. */
static void test_softdirty_fault_seen(void **state)
{
	const pid_t pids[] = { 100 };
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct tmp t;
	void *priv;
	int i, round;
	/* the writer's CPU over each round (ns): 1 ms, 3 ms, 3 ms */
	static const uint64_t ran[] = { 1000000, 3000000, 3000000 };
	/* what the round dates a fault at: the calibration's, then the last
	 * round's bound (1 ms / 311 pages), then 4 x the calibration's (the
	 * bound 3 ms / 311 is past it) */
	static const uint64_t dated_ns[] = { 1000, 1000000 / 311, 4000 };
	uint64_t run = 0, cost = 0;

	(void)state;
	/* 300 more pages written, in a mapping of their own */
	priv = sd_300_fixture(&t, "00400000-00401000 r-xp 00000000 08:01 1234 /usr/bin/workload\n"
				  "00600000-00608000 rw-p 00000000 00:00 0 [heap]\n"
				  "00800000-00810000 rw-p 00000000 00:00 0\n"
				  "00a00000-00a01000 rw-p 00001000 08:01 1234 /usr/bin/workload with spaces\n"
				  "01000000-01200000 rw-p 00000000 00:00 0\n");
	for (round = 0; round < 3; round++) {
		char line[64];

		assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
		run += ran[round];
		snprintf(line, sizeof(line), "%llu 0 %d\n", (unsigned long long)run, round + 2);
		put(&t, "proc/100/task/100/schedstat", line);
		usleep(20000);
		assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
		assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
		tier__linux_tracker_softdirty.stats(priv, &st);
		assert_int_equal(st.fault_ns, 1000);
		/* 311 pages dirty (11 and 300), no waits */
		assert_int_equal(st.read_us[0] + 311 * dated_ns[round] / 1000, st.read_wall_us[0]);
		assert_int_equal(st.fault_ns_seen, ran[round] / 311);
		/* the round's faults cost the writer what it saw one cost */
		cost += 311 * (ran[round] / 311 < 4000 ? ran[round] / 311 : 4000);
		assert_int_equal(st.workload_fault_ns, cost);
	}
	/* A new target's first round: its first read dates faults at the
	 * calibration's figure, the next at the first's bound (1 ms of the
	 * writer's CPU over 311 dirty pages), not at the calibration's. */
	tier__linux_tracker_softdirty.destroy(priv);
	if (tier__softdirty_create_manual(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(tier__linux_tracker_softdirty.set_targets(priv, pids, 1, &err), 0);
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_CLEAR, &err), 0);
	for (i = 0; i < 2; i++) {
		char line[64];

		run += 1000000;
		snprintf(line, sizeof(line), "%llu 0 %d\n", (unsigned long long)run, i + 10);
		put(&t, "proc/100/task/100/schedstat", line);
		usleep(20000);
		assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	}
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
	tier__linux_tracker_softdirty.stats(priv, &st);
	assert_int_equal(st.nr_reads, 3);
	assert_int_equal(st.read_us[0] + 311 * 1000 / 1000, st.read_wall_us[0]);
	assert_int_equal(st.read_us[1] + 311 * (1000000 / 311) / 1000, st.read_wall_us[1]);
	tier__linux_tracker_softdirty.destroy(priv);
	tmp_release(&t);
}

/* A round's period keeps the faults it makes at 2% of a core, at what
 * they cost the writers, and the thread's CPU at its share: a GUPS array
 * in the guest, 164,000 pages dirty a round at 6.4 us each (2.2 us each
 * at the calibration's figure, which held the faults to 18 s rounds and
 * cost the workload 5% of its CPU). */
static void test_softdirty_period(void **state)
{
	(void)state;
	assert_int_equal(tier__softdirty_period_us(0, 0, 0.03), 1000000);
	assert_int_equal(tier__softdirty_period_us(164000ull * 6421, 0, 0.03),
			 164000ull * 6421 / 1000 * 50);
	assert_int_equal(tier__softdirty_period_us(164000ull * 2225, 0, 0.03),
			 164000ull * 2225 / 1000 * 50);
	/* the thread's CPU at its share: 90 ms at 3% is 3 s; without a share, 3% */
	assert_int_equal(tier__softdirty_period_us(1000000, 90000, 0.03), 3000000);
	assert_int_equal(tier__softdirty_period_us(1000000, 90000, 0), 3000000);
	assert_int_equal(tier__softdirty_period_us(1000000, 90000, 0.015), 6000000);
	/* at most 10 min */
	assert_int_equal(tier__softdirty_period_us(UINT64_MAX / 2, 0, 0.03), 600000000);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_softdirty),
		cmocka_unit_test(test_waits),
		cmocka_unit_test(test_waits_cpu_clock),
		cmocka_unit_test(test_softdirty_writer_time),
		cmocka_unit_test(test_softdirty_rate_population),
		cmocka_unit_test(test_softdirty_picture_population),
		cmocka_unit_test(test_softdirty_steady_population),
		cmocka_unit_test(test_softdirty_waits),
		cmocka_unit_test(test_softdirty_period),
		cmocka_unit_test(test_softdirty_blocked_writer),
		cmocka_unit_test(test_softdirty_fault_seen),
		cmocka_unit_test(test_softdirty_restart_unwritten),
		cmocka_unit_test(test_softdirty_starved_threads),
		cmocka_unit_test(test_softdirty_behind),
		cmocka_unit_test(test_softdirty_asks_tiers),
		cmocka_unit_test(test_softdirty_dated_by_faults_taken),
		cmocka_unit_test(test_softdirty_picture_reused),
		cmocka_unit_test(test_softdirty_picture_by_tier),
		cmocka_unit_test(test_softdirty_rate_reads_shared),
		cmocka_unit_test(test_softdirty_rate_prior),
		cmocka_unit_test(test_softdirty_rate_first_round),
		cmocka_unit_test(test_softdirty_rate_short_last_round),
		cmocka_unit_test(test_softdirty_slow_left_out),
		cmocka_unit_test(test_softdirty_picture_random),
		cmocka_unit_test(test_softdirty_fault_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
