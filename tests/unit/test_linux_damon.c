/* test_linux_damon.c - the DAMON tracker against fixture trees copied to a
 * temporary directory (tests/fixtures/damon-sysfs; its README.md): what it
 * writes to DAMON's sysfs and in which order, the kdamond's CPU share, the
 * schemes' tried regions, and damon_aggregated trace lines on kernels
 * before 6.2. */
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
#include <unistd.h>

#include "backend/linux/kernel_guard.h"
#include "backend/linux/kernel_tiering.h"
#include "backend/linux/maps.h"
#include "backend/linux/clock.h"
#include "backend/linux/damon_impl.h"
#include "backend/linux/schedstat.h"
#include "backend/linux/softdirty_picture.h"
#include "backend/linux/softdirty_rate.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"
#include "linux_fixture.h"

/* ---- DAMON: the writes -------------------------------------------------- */

struct journal {
	char line[512][128];
	size_t n;
	const char *busy_val;	/* this value fails with EBUSY ... */
	int busy_left;		/* ... this many times (-1: always) */
	int busy_errno;		/* or with this errno (0: EBUSY) */
	const char *busy_read;	/* reads of files ending so fail with EBUSY ... */
	int busy_read_left;	/* ... this many times (-1: always) */
	unsigned reads_busy;	/* how many reads failed so */
	/* The collect's waits on the kernel (ctx.wait): inside one now,
	 * how many began, and whether the snapshot's request and its clear
	 * were written inside one. */
	bool waiting;
	unsigned waits;
	bool update_waiting, clear_waiting;
};

static void on_wait(void *arg, bool begin)
{
	struct journal *j = arg;

	assert_true(begin != j->waiting);	/* begin, end, begin, ... */
	j->waiting = begin;
	j->waits += begin;
}

static int on_read(void *ctx, const char *rel)
{
	struct journal *j = ctx;
	size_t len = strlen(rel), end;

	if (!j->busy_read || !j->busy_read_left)
		return 0;
	end = strlen(j->busy_read);
	if (len < end || strcmp(rel + len - end, j->busy_read))
		return 0;
	if (j->busy_read_left > 0)
		j->busy_read_left--;
	j->reads_busy++;
	return -EBUSY;
}

static int on_write(void *ctx, const char *rel, const char *val)
{
	struct journal *j = ctx;
	size_t len = strlen(rel);

	if (j->n < 512)
		snprintf(j->line[j->n++], sizeof(j->line[0]), "%s=%s", rel, val);
	if (!strcmp(val, "update_schemes_tried_regions"))
		j->update_waiting = j->waiting;
	if (!strcmp(val, "clear_schemes_tried_regions"))
		j->clear_waiting = j->waiting;
	if (j->busy_val && !strcmp(val, j->busy_val) && j->busy_left) {
		if (j->busy_left > 0)
			j->busy_left--;
		return j->busy_errno ? -j->busy_errno : -EBUSY;
	}
	/* Like the kernel: a command leaves state "on"; only on/off land. */
	if (len >= 6 && !strcmp(rel + len - 6, "/state") && strcmp(val, "on") &&
	    strcmp(val, "off"))
		return 1;
	return 0;
}

/* Compares the journal from index *at with want[] (NULL-terminated;
 * "K/" stands for "kdamonds/<k>/"). */
static void expect_writes(const struct journal *j, size_t *at, unsigned k,
			  const char *const *want)
{
	char line[160];
	size_t i;

	for (i = 0; want[i]; i++, (*at)++) {
		if (!strncmp(want[i], "K/", 2))
			snprintf(line, sizeof(line), "kdamonds/%u/%s", k, want[i] + 2);
		else
			snprintf(line, sizeof(line), "%s", want[i]);
		if (*at >= j->n)
			fail_msg("write %zu: none, expected %s", *at, line);
		if (strcmp(j->line[*at], line))
			fail_msg("write %zu: %s, expected %s", *at, j->line[*at], line);
	}
}

static const char *const create_writes_v612[] = {
	"kdamonds/nr_kdamonds=2",
	"K/contexts/nr_contexts=1",
	"K/contexts/0/operations=vaddr",
	"K/contexts/0/monitoring_attrs/intervals/sample_us=5000",
	"K/contexts/0/monitoring_attrs/intervals/aggr_us=100000",
	"K/contexts/0/monitoring_attrs/intervals/update_us=1000000",
	"K/contexts/0/monitoring_attrs/nr_regions/min=200",
	"K/contexts/0/monitoring_attrs/nr_regions/max=2000",
	"K/contexts/0/targets/nr_targets=0",
	"K/contexts/0/schemes/nr_schemes=1",
	"K/contexts/0/schemes/0/filters/nr_filters=1",
	"K/contexts/0/schemes/0/filters/nr_filters=0",
	"K/contexts/0/schemes/nr_schemes=0",
	NULL,
};

/* A scheme of one target's regions: those accessed in the aggregation. */
#define SCHEME(s)                                                         \
	"K/contexts/0/schemes/" #s "/action=stat",                         \
	"K/contexts/0/schemes/" #s "/access_pattern/sz/min=0",             \
	"K/contexts/0/schemes/" #s "/access_pattern/sz/max=18446744073709551615", \
	"K/contexts/0/schemes/" #s "/access_pattern/nr_accesses/min=1",    \
	"K/contexts/0/schemes/" #s "/access_pattern/nr_accesses/max=4294967295", \
	"K/contexts/0/schemes/" #s "/access_pattern/age/min=0",            \
	"K/contexts/0/schemes/" #s "/access_pattern/age/max=4294967295",   \
	"K/contexts/0/schemes/" #s "/apply_interval_us=0"

#define TARGET_FILTER(s)                                                  \
	"K/contexts/0/schemes/" #s "/filters/nr_filters=1",                \
	"K/contexts/0/schemes/" #s "/filters/0/type=target",               \
	"K/contexts/0/schemes/" #s "/filters/0/damon_target_idx=" #s,      \
	"K/contexts/0/schemes/" #s "/filters/0/matching=N"

static void test_damon_setup_and_collect(void **state)
{
	static const char *const targets_writes[] = {
		"K/contexts/0/targets/nr_targets=2",
		"K/contexts/0/targets/0/pid_target=100",
		"K/contexts/0/targets/1/pid_target=200",
		"K/contexts/0/schemes/nr_schemes=2",
		SCHEME(0), TARGET_FILTER(0),
		SCHEME(1), TARGET_FILTER(1),
		"K/state=on",
		NULL,
	};
	static const char *const collect_writes[] = {
		"K/state=update_schemes_tried_regions",
		"K/state=clear_schemes_tried_regions",
		NULL,
	};
	static const char *const retarget_writes[] = {
		"K/contexts/0/targets/nr_targets=1",
		"K/contexts/0/targets/0/pid_target=200",
		"K/contexts/0/schemes/nr_schemes=1",
		SCHEME(0),
		"K/state=commit",
		NULL,
	};
	static const char *const destroy_writes[] = {
		"K/state=off",
		"kdamonds/nr_kdamonds=1",
		NULL,
	};
	const pid_t pids[] = { 100, 300 /* gone */, 200 };
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j };
	struct tier__damon_info info;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	size_t at = 0;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	t.ctx.wait = on_wait;
	t.ctx.wait_arg = j;
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	tier__damon_info(priv, &info);
	assert_int_equal(info.kdamond, 1);	/* kdamond 0 runs: never taken */
	assert_true(info.grew);
	assert_false(info.tracepoint);
	assert_true(info.per_target_schemes);
	assert_int_equal(info.aggr_us, 100000);
	expect_writes(j, &at, 1, create_writes_v612);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds"), "2");
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "on");

	if (tier__linux_tracker_damon.set_targets(priv, pids, 3, &err))
		fail_msg("set_targets: %s", err.msg);
	expect_writes(j, &at, 1, targets_writes);
	assert_int_equal(at, j->n);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/state"), "on");
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/1/"
				"access_pattern/nr_accesses/max"), "4294967295");

	if (tier__linux_tracker_damon.collect(priv, sink, &g, &err))
		fail_msg("collect: %s", err.msg);
	expect_writes(j, &at, 1, collect_writes);
	/* The request, which returns at the kdamond's next aggregation, was
	 * made inside a wait (the daemon answers read-only requests then);
	 * the regions' reading and the clear after it, outside. */
	assert_true(j->waits >= 1);
	assert_false(j->waiting);
	assert_true(j->update_waiting);
	assert_false(j->clear_waiting);
	/* Each target's regions in address order, and what lies between
	 * and around them (the regions DAMON saw unaccessed, which the
	 * schemes leave out) as seen unaccessed: 0 of 20. */
	assert_int_equal(g.n, 11);
	expect_obs(&g.v[0], 100, 0, 0x555555554000, TIER_OBS_ACCESSED, 0, 20);
	expect_obs(&g.v[1], 100, 0x555555554000, 0x555555600000, TIER_OBS_ACCESSED, 18, 20);
	expect_obs(&g.v[2], 100, 0x555555600000, 0x555556000000, TIER_OBS_ACCESSED, 0, 20);
	expect_obs(&g.v[3], 100, 0x555556000000, 0x7ffd00000000, TIER_OBS_ACCESSED, 0, 20);
	/* nr_accesses 25 is above aggr / sample = 20: clamped. */
	expect_obs(&g.v[4], 100, 0x7ffd00000000, 0x7ffd00021000, TIER_OBS_ACCESSED, 20, 20);
	expect_obs(&g.v[5], 100, 0x7ffd00021000, UINT64_MAX, TIER_OBS_ACCESSED, 0, 20);
	/* Scheme 1's regions are numbered 3 and 4, after scheme 0's three:
	 * 6.12 counts the regions of all schemes with one counter. */
	expect_obs(&g.v[6], 200, 0, 0x400000, TIER_OBS_ACCESSED, 0, 20);
	expect_obs(&g.v[7], 200, 0x400000, 0x500000, TIER_OBS_ACCESSED, 7, 20);
	expect_obs(&g.v[8], 200, 0x500000, 0x7ffe00000000, TIER_OBS_ACCESSED, 0, 20);
	expect_obs(&g.v[9], 200, 0x7ffe00000000, 0x7ffe00010000, TIER_OBS_ACCESSED, 0, 20);
	expect_obs(&g.v[10], 200, 0x7ffe00010000, UINT64_MAX, TIER_OBS_ACCESSED, 0, 20);
	assert_int_equal(g.v[1].interval_us, 100000);
	assert_int_equal(g.v[0].interval_us, 100000);
	/* What the snapshot showed, for the debug line: three regions seen
	 * accessed, 688 + 132 + 1,024 KiB, the 132 in every sample, the
	 * others in 18 and 7 of 20. */
	{
		struct tier_linux_tracker_stats st;

		tier__linux_tracker_damon.stats(priv, &st);
		assert_int_equal(st.damon_aggr_us, 100000);
		assert_int_equal(st.damon_snap.regions, 3);
		assert_int_equal(st.damon_snap.kib, 688 + 132 + 1024);
		assert_int_equal(st.damon_snap.full_kib, 132);
		assert_true(fabs(st.damon_snap.weighted_kib - (688 * 0.9 + 132 + 1024 * 0.35)) < 1e-6);
	}

	/* The same targets again (every refresh): nothing written. */
	if (tier__linux_tracker_damon.set_targets(priv, pids, 3, &err))
		fail_msg("set_targets: %s", err.msg);
	assert_int_equal(j->n, at);

	/* Targets change while it runs: commit, one scheme, no filter. */
	if (tier__linux_tracker_damon.set_targets(priv, &pids[2], 1, &err))
		fail_msg("set_targets: %s", err.msg);
	expect_writes(j, &at, 1, retarget_writes);

	tier__linux_tracker_damon.destroy(priv);
	expect_writes(j, &at, 1, destroy_writes);
	assert_int_equal(at, j->n);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/state"), "off");
	free(j);
	tmp_release(&t);
}

/* The kdamond's CPU share: measured over 3 s windows (a new kdamond's first: 1 s) from its
 * /proc/PID/stat, kept near ctx.kthread_cpu_percent by the sample interval,
 * committed online. */
static uint64_t fake_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static void kdamond_ticks(const struct tmp *t, unsigned long long ticks)
{
	char stat[256];

	/* utime and stime are the 14th and 15th fields, in clock ticks. */
	snprintf(stat, sizeof(stat), "4242 (kdamond.1) S 2 0 0 0 -1 2129984 0 0 0 0 %llu 0 0 0 "
		 "20 0 1 0 100 0 0\n", ticks);
	put(t, "proc/4242/stat", stat);
}

/* The journal's first write of a sample interval from *at on. */
static void skip_to_intervals(const struct journal *j, size_t *at)
{
	while (*at < j->n && !strstr(j->line[*at], "intervals/sample_us"))
		(*at)++;
}

/* secs seconds in which the kdamond used share of a core (its tick count
 * *ticks grows by that), the upkeep, and what the tracker says. */
static void share_over(struct tmp *t, void *priv, unsigned long long *ticks, double share,
		       unsigned secs, struct tier__damon_info *info)
{
	*ticks += (unsigned long long)(share * secs * (double)sysconf(_SC_CLK_TCK));
	fake_now += secs * 1000000ull;
	kdamond_ticks(t, *ticks);
	tier__linux_tracker_damon.maintain(priv);
	tier__damon_info(priv, info);
}

/* One 3 s window of that. */
static void share_window(struct tmp *t, void *priv, unsigned long long *ticks, double share,
			 struct tier__damon_info *info)
{
	share_over(t, priv, ticks, share, 3, info);
}

/* A DAMON tracker of pid 100 whose kdamond (pid 4242, *ticks of CPU so
 * far) may take 2.5% of a core, created at 1 s on the fake clock. */
static void *share_fixture(struct tmp *t, struct tier__damon_hooks *hooks,
			   unsigned long long ticks)
{
	const pid_t pids[] = { 100 };
	struct tier_err err = { "" };
	char dir[600];
	void *priv;

	tmp_init(t, "damon-sysfs/v6.12");
	t->ctx.kthread_cpu_percent = 2.5;
	put(t, "sys/kernel/mm/damon/admin/kdamonds/1/pid", "4242\n");
	mkdir(t->proc, 0755);
	snprintf(dir, sizeof(dir), "%s/4242", t->proc);
	mkdir(dir, 0755);
	kdamond_ticks(t, ticks);
	fake_now = 1000000;
	if (tier__damon_create(&t->ctx, 1000000, hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	if (tier__linux_tracker_damon.set_targets(priv, pids, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	return priv;
}

/* The writes of a change to 50 ms samples (from DAMON's 5 ms at 20% of a
 * core over the first second). */
static const char *const slower_writes[] = {
	"K/contexts/0/monitoring_attrs/intervals/sample_us=50000",
	"K/contexts/0/monitoring_attrs/intervals/aggr_us=500000",
	"K/contexts/0/monitoring_attrs/intervals/update_us=1000000",
	"K/contexts/0/monitoring_attrs/nr_regions/max=2000",
	"K/state=commit",
	NULL,
};

static void test_damon_keeps_cpu_share(void **state)
{
	static const char *const faster_writes[] = {
		"K/contexts/0/monitoring_attrs/intervals/sample_us=25000",
		"K/contexts/0/monitoring_attrs/intervals/aggr_us=250000",
		"K/contexts/0/monitoring_attrs/intervals/update_us=1000000",
		"K/contexts/0/monitoring_attrs/nr_regions/max=2000",
		"K/state=commit",
		NULL,
	};
	unsigned long long ticks = 1000;
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j, .now_us = fake_clock };
	struct tier__damon_info info;
	unsigned changes;
	struct tmp t;
	size_t at;
	void *priv;

	(void)state;
	priv = share_fixture(&t, &hooks, ticks);
	/* The window starts with the kdamond, not at the first upkeep:
	 * the new kdamond's first window is 1 s: at 20% of a core (DAMON
	 * under TCG) ten times the sample interval (to 0.8 of the share),
	 * the aggregation ten samples, after that second. */
	at = j->n;
	fake_now += 900000;
	ticks += (unsigned long long)(0.2 * (double)sysconf(_SC_CLK_TCK));
	kdamond_ticks(&t, ticks);
	tier__linux_tracker_damon.maintain(priv);
	tier__damon_info(priv, &info);
	assert_true(info.kdamond_cpu_percent < 0);
	assert_int_equal(info.sample_us, 5000);		/* 0.9 s: not yet */
	fake_now += 100000;
	tier__linux_tracker_damon.maintain(priv);
	tier__damon_info(priv, &info);
	assert_true(info.kdamond_cpu_percent > 19 && info.kdamond_cpu_percent < 21);
	assert_int_equal(info.sample_us, 50000);
	assert_int_equal(info.aggr_us, 500000);
	assert_int_equal(info.interval_changes, 1);
	skip_to_intervals(j, &at);
	expect_writes(j, &at, 1, slower_writes);

	/* Within the band (0.4 to 1 times the 2.5%): nothing changes. */
	at = j->n;
	share_window(&t, priv, &ticks, 0.024, &info);
	assert_int_equal(info.sample_us, 50000);
	assert_int_equal(info.interval_changes, 1);
	skip_to_intervals(j, &at);
	assert_int_equal(at, j->n);

	at = j->n;
	share_window(&t, priv, &ticks, 0.011, &info);
	assert_int_equal(info.sample_us, 50000);
	skip_to_intervals(j, &at);
	assert_int_equal(at, j->n);

	/* Below 0.4 of it: back down by half. */
	at = j->n;
	share_window(&t, priv, &ticks, 0.009, &info);
	assert_int_equal(info.sample_us, 25000);
	assert_int_equal(info.aggr_us, 250000);
	skip_to_intervals(j, &at);
	expect_writes(j, &at, 1, faster_writes);

	/* The commit refused: the intervals stay as they were. */
	j->busy_val = "commit";
	j->busy_left = -1;
	j->busy_errno = EINVAL;
	share_window(&t, priv, &ticks, 0.45, &info);
	assert_int_equal(info.sample_us, 25000);
	assert_int_equal(info.aggr_us, 250000);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/"
				"monitoring_attrs/intervals/sample_us"), "25000");
	j->busy_val = NULL;

	/* 20% from 25 ms samples: 100 ms at most, 4 of the 10 times the
	 * correction asks; the regions take the rest (2.5). */
	share_window(&t, priv, &ticks, 0.20, &info);
	assert_int_equal(info.sample_us, 100000);
	assert_int_equal(info.max_regions, 800);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/"
				"monitoring_attrs/nr_regions/max"), "800");
	/* Still 4 times over at the longest samples: regions, 400 at least. */
	share_window(&t, priv, &ticks, 0.10, &info);
	assert_int_equal(info.sample_us, 100000);
	assert_int_equal(info.max_regions, 400);
	changes = info.interval_changes;
	share_window(&t, priv, &ticks, 0.45, &info);
	assert_int_equal(info.max_regions, 400);
	assert_int_equal(info.interval_changes, changes);	/* nothing left to give */
	/* Far below: the regions come back first, then shorter samples. */
	share_window(&t, priv, &ticks, 0.001, &info);
	assert_int_equal(info.max_regions, 800);
	assert_int_equal(info.sample_us, 100000);
	share_window(&t, priv, &ticks, 0.001, &info);
	assert_int_equal(info.max_regions, 1600);
	share_window(&t, priv, &ticks, 0.001, &info);
	assert_int_equal(info.max_regions, 2000);
	assert_int_equal(info.sample_us, 100000);
	share_window(&t, priv, &ticks, 0.001, &info);
	assert_int_equal(info.sample_us, 50000);
	/* Over it, if only a little: to 0.8 of it (3% to 2%: 1.5 times). */
	share_window(&t, priv, &ticks, 0.03, &info);
	assert_int_equal(info.sample_us, 75000);
	assert_int_equal(info.aggr_us, 750000);
	/* A reload raised the budget: a part of 10% keeps 5% (was over
	 * 2.5%), and below 4% the samples come back. */
	tier__linux_tracker_damon.set_budget(priv, 10.0, 0);
	share_window(&t, priv, &ticks, 0.05, &info);
	assert_int_equal(info.sample_us, 75000);
	share_window(&t, priv, &ticks, 0.03, &info);
	assert_int_equal(info.sample_us, 38000);

	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

/* A new kdamond is measured every second until it is within its share,
 * then over the steady 3 s: at 40% of a core (DAMON's 5 ms samples under
 * TCG), 20 times the sample interval after the first second; still 6%
 * there (its regions grew), fewer regions one second later, not three;
 * within its share, the windows are 3 s long from then on. */
static void test_damon_new_kdamond_converges(void **state)
{
	unsigned long long ticks = 1000;
	struct tier__damon_hooks hooks = { .now_us = fake_clock };
	struct tier__damon_info info;
	struct tmp t;
	void *priv;

	(void)state;
	priv = share_fixture(&t, &hooks, ticks);
	share_over(&t, priv, &ticks, 0.40, 1, &info);
	assert_int_equal(info.sample_us, 100000);
	assert_int_equal(info.max_regions, 2000);
	share_over(&t, priv, &ticks, 0.06, 1, &info);
	assert_int_equal(info.sample_us, 100000);
	assert_int_equal(info.max_regions, 666);	/* 6% over 0.8 of 2.5%: 3 times fewer */
	share_over(&t, priv, &ticks, 0.02, 1, &info);
	assert_true(info.kdamond_cpu_percent > 1.9 && info.kdamond_cpu_percent < 2.1);
	/* Within it: the next window is 3 s, whatever the second after. */
	share_over(&t, priv, &ticks, 0.10, 1, &info);
	share_over(&t, priv, &ticks, 0.10, 1, &info);
	assert_int_equal(info.max_regions, 666);
	assert_true(info.kdamond_cpu_percent > 1.9 && info.kdamond_cpu_percent < 2.1);
	share_over(&t, priv, &ticks, 0.10, 1, &info);
	assert_int_equal(info.max_regions, 400);
	tier__linux_tracker_damon.destroy(priv);
	tmp_release(&t);
}

/* A new kdamond's first snapshot waits for its third aggregation (on the
 * tracker's clock), once: later collects, and a kdamond long started,
 * read at once. */
static uint64_t slept_us;
static unsigned sleeps;

static void fake_sleep(void *ctx, uint64_t us)
{
	(void)ctx;
	slept_us += us;
	sleeps++;
	fake_now += us;
}

static void test_damon_first_snapshot_waits(void **state)
{
	const pid_t pids[] = { 100 }, other[] = { 200 };
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j, .now_us = fake_clock,
					   .sleep_us = fake_sleep };
	struct tier__damon_info info;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	fake_now = 5000000;
	slept_us = 0;
	sleeps = 0;
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	tier__damon_info(priv, &info);
	assert_int_equal(info.aggr_us, 100000);
	if (tier__linux_tracker_damon.set_targets(priv, pids, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	fake_now += 40000;	/* read 40 ms after the start: 260 ms to go */
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(sleeps, 1);
	assert_int_equal(slept_us, 260000);
	assert_true(g.n > 0);
	g.n = 0;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(sleeps, 1);	/* the next one at once */
	/* New targets restart the kdamond ("off", "on" on 6.12 when the
	 * target count changes; "commit" otherwise): a new first snapshot
	 * only when it was started again. Read late: no wait. */
	if (tier__linux_tracker_damon.set_targets(priv, other, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	fake_now += 400000;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(sleeps, 1);
	tier__linux_tracker_damon.destroy(priv);
	tmp_release(&t);
	free(j);
}

/* A snapshot asked for ahead of the step (damon_ahead.c): the collect
 * reads it without a request of its own and the thread clears it after;
 * one not made yet is withdrawn and the collect asks itself; one made too
 * long before the collect, or before the targets changed, is not read. */
static void test_damon_snapshot_ahead(void **state)
{
	static const char *const update_writes[] = {
		"K/state=update_schemes_tried_regions",
		NULL,
	};
	static const char *const clear_writes[] = {
		"K/state=clear_schemes_tried_regions",
		NULL,
	};
	static const char *const collect_writes[] = {
		"K/state=update_schemes_tried_regions",
		"K/state=clear_schemes_tried_regions",
		NULL,
	};
	const pid_t pids[] = { 100, 200 }, other[] = { 200 };
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j, .now_us = fake_clock,
					   .sleep_us = fake_sleep };
	struct tier__damon_tracker *dt;
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	size_t at, n;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	t.ctx.wait = on_wait;
	t.ctx.wait_arg = j;
	fake_now = 5000000;
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	dt = priv;
	if (tier__linux_tracker_damon.set_targets(priv, pids, 2, &err))
		fail_msg("set_targets: %s", err.msg);
	/* Before the kdamond's first snapshot: nothing asked ahead. */
	tier__linux_tracker_damon.ahead(priv, fake_now + 1000000);
	assert_false(tier__damon_ahead_settle(dt));
	fake_now += 400000;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	n = g.n;
	assert_int_equal(n, 11);
	at = j->n;

	/* Due within an aggregation and the margin: asked at once; the
	 * collect reads it, and the thread clears it after. */
	assert_true(tier__damon_collect_waits(priv));	/* none asked: it would ask */
	tier__linux_tracker_damon.ahead(priv, fake_now + 100000);
	assert_true(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, update_writes);
	assert_int_equal(at, j->n);
	g.n = 0;
	fake_now += 100000;
	assert_false(tier__damon_collect_waits(priv));	/* one stands */
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_false(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, clear_writes);
	assert_int_equal(at, j->n);
	assert_int_equal(g.n, n);	/* the same snapshot's regions */
	tier__linux_tracker_damon.stats(priv, &st);
	assert_int_equal(st.damon_snap.requests, 0);

	/* Due in a minute, and a collect comes now: the last snapshot, read
	 * just now, is handed on again without a write - no news. */
	assert_true(tier__linux_tracker_damon.news(priv));	/* nothing asked */
	tier__linux_tracker_damon.ahead(priv, fake_now + 60000000);
	assert_false(tier__linux_tracker_damon.news(priv));
	assert_false(tier__damon_collect_waits(priv));	/* it restates */
	g.n = 0;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(at, j->n);
	assert_int_equal(g.n, n);
	tier__linux_tracker_damon.stats(priv, &st);
	assert_true(st.damon_snap.restated);
	assert_int_equal(st.damon_snap.requests, 0);
	/* ... and one more than two aggregations and the margin later, the
	 * request not made yet is withdrawn, the collect asks itself and
	 * nothing is asked after it. */
	fake_now += 2 * 100000 + 250000 + 1;
	assert_true(tier__linux_tracker_damon.news(priv));
	assert_true(tier__damon_collect_waits(priv));
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_false(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, collect_writes);
	assert_int_equal(at, j->n);
	tier__linux_tracker_damon.stats(priv, &st);
	assert_int_equal(st.damon_snap.requests, 1);
	assert_false(st.damon_snap.restated);

	/* Made, then the step came late (more than an aggregation and the
	 * margin after it): asked again. */
	tier__linux_tracker_damon.ahead(priv, fake_now);
	assert_true(tier__damon_ahead_settle(dt));
	assert_true(tier__linux_tracker_damon.news(priv));	/* a snapshot stands */
	expect_writes(j, &at, 1, update_writes);
	fake_now += 2000000;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_false(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, collect_writes);
	assert_int_equal(at, j->n);

	/* Asked while another command holds the thread: made once the hold
	 * ends, not before. */
	tier__damon_ahead_hold(dt, true);
	tier__linux_tracker_damon.ahead(priv, fake_now);
	usleep(20000);
	assert_int_equal(at, j->n);
	tier__damon_ahead_hold(dt, false);
	assert_true(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, update_writes);
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_false(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, clear_writes);

	/* Made, then the targets changed: not read, asked again. */
	tier__linux_tracker_damon.ahead(priv, fake_now);
	assert_true(tier__damon_ahead_settle(dt));
	if (tier__linux_tracker_damon.set_targets(priv, other, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	assert_false(tier__damon_ahead_settle(dt));
	at = j->n;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_false(tier__damon_ahead_settle(dt));
	tier__linux_tracker_damon.stats(priv, &st);
	assert_int_equal(st.damon_snap.requests, 1);
	expect_writes(j, &at, 1, collect_writes);
	assert_false(j->waiting);

	tier__linux_tracker_damon.destroy(priv);
	tmp_release(&t);
	free(j);
}

/* Once the tierd-damon thread runs, a change of intervals the CPU share
 * asks for is the thread's to commit (6.12 answers a commit at the end of
 * an aggregation): the upkeep returns without a write, the thread writes
 * and commits, and the collect after takes the new intervals in; a commit
 * the kernel refuses leaves the files and the intervals as they were. */
static void test_damon_intervals_through_thread(void **state)
{
	static const char *const collect_writes[] = {
		"K/state=update_schemes_tried_regions",
		"K/state=clear_schemes_tried_regions",
		NULL,
	};
	unsigned long long ticks = 1000;
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j, .now_us = fake_clock,
					   .sleep_us = fake_sleep };
	struct tier__damon_info info;
	struct tier__damon_tracker *dt;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	size_t at;
	void *priv;

	(void)state;
	priv = share_fixture(&t, &hooks, ticks);
	dt = priv;
	fake_now += 400000;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	tier__linux_tracker_damon.ahead(priv, fake_now);	/* starts the thread */
	assert_true(tier__damon_ahead_settle(dt));

	/* 20% of a core over the kdamond's first second, while the thread
	 * is held: the upkeep writes nothing itself. */
	at = j->n;
	tier__damon_ahead_hold(dt, true);
	fake_now += 600000;
	ticks += (unsigned long long)(0.2 * (double)sysconf(_SC_CLK_TCK));
	kdamond_ticks(&t, ticks);
	tier__linux_tracker_damon.maintain(priv);
	usleep(20000);
	assert_int_equal(at, j->n);
	tier__damon_info(priv, &info);
	assert_int_equal(info.sample_us, 5000);
	/* Released: the thread commits; the intervals are taken in by the
	 * next collect, which asks for its snapshot itself (one standing
	 * would be counted in the old samples). */
	tier__damon_ahead_hold(dt, false);
	assert_false(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, slower_writes);
	assert_int_equal(at, j->n);
	tier__damon_info(priv, &info);
	assert_int_equal(info.sample_us, 5000);
	assert_int_equal(info.interval_changes, 0);
	assert_true(tier__damon_collect_waits(priv));	/* for a snapshot in the new ones */
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_false(tier__damon_ahead_settle(dt));
	expect_writes(j, &at, 1, collect_writes);
	tier__damon_info(priv, &info);
	assert_int_equal(info.sample_us, 50000);
	assert_int_equal(info.aggr_us, 500000);
	assert_int_equal(info.interval_changes, 1);

	/* The window starts again with the new intervals, then 18% of a
	 * core asks for 100 ms samples; the kernel refuses the commit. */
	j->busy_val = "commit";
	j->busy_left = -1;
	j->busy_errno = EINVAL;
	share_window(&t, priv, &ticks, 0.18, &info);
	share_window(&t, priv, &ticks, 0.18, &info);
	assert_false(tier__damon_ahead_settle(dt));
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	tier__damon_info(priv, &info);
	assert_int_equal(info.sample_us, 50000);
	assert_int_equal(info.interval_changes, 1);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/"
				"monitoring_attrs/intervals/sample_us"), "50000");
	j->busy_val = NULL;

	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

static void test_damon_reuses_off_kdamond(void **state)
{
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j };
	struct tier__damon_info info;
	struct tier_err err = { "" };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "2\n");
	if (tier__damon_create(&t.ctx, 5000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	tier__damon_info(priv, &info);
	assert_int_equal(info.kdamond, 1);
	assert_false(info.grew);
	/* A 5 s collect interval: 500 ms aggregations. */
	assert_int_equal(info.aggr_us, 500000);
	assert_int_equal(info.sample_us, 5000);
	assert_int_equal(info.update_us, 1000000);
	assert_string_equal(j->line[0], "kdamonds/1/contexts/nr_contexts=1");
	tier__linux_tracker_damon.destroy(priv);
	/* Off and unused: nothing to stop, nr_kdamonds left alone. */
	assert_string_equal(j->line[j->n - 1], "kdamonds/1/contexts/0/schemes/nr_schemes=0");
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds"), "2");
	free(j);
	tmp_release(&t);
}

static void test_damon_all_running(void **state)
{
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j, .busy_retry_us = 1 };
	struct tier_err err = { "" };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	/* The kernel refuses to add a kdamond while one runs. */
	j->busy_val = "2";
	j->busy_left = -1;
	assert_int_equal(tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err), -EBUSY);
	assert_null(priv);
	assert_non_null(strstr(err.msg, "run for another user"));
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "on");
	free(j);
	tmp_release(&t);
}

static void test_damon_busy_retry(void **state)
{
	const pid_t pid = 100;
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j, .busy_retry_us = 1 };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	size_t i, tries = 0;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	/* Two EBUSY answers to "on", then it goes through. */
	j->busy_val = "on";
	j->busy_left = 2;
	if (tier__linux_tracker_damon.set_targets(priv, &pid, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	for (i = 0; i < j->n; i++)
		tries += !strcmp(j->line[i], "kdamonds/1/state=on");
	assert_int_equal(tries, 3);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/state"), "on");

	/* Busy for good: the error says so. */
	j->busy_val = "update_schemes_tried_regions";
	j->busy_left = -1;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "still busy"));
	assert_int_equal(g.n, 0);
	j->busy_val = NULL;
	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

/* A 7.x kernel answers EBUSY to a read of a kdamond's files while another
 * task holds DAMON's sysfs lock (seen: a test's cat of "state" while tierd
 * wrote): reads are retried like writes, and a read busy for good fails
 * with an error that says so rather than passing for "off" or "gone". */
static void test_damon_busy_read(void **state)
{
	const pid_t pid = 100;
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .on_read = on_read, .ctx = j,
					   .busy_retry_us = 1 };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	/* Another kdamond's state busy three times while a free one is
	 * sought: kdamond 0 still counts as running and is not taken. */
	j->busy_read = "kdamonds/0/state";
	j->busy_read_left = 3;
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(j->reads_busy, 3);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "on");
	if (tier__linux_tracker_damon.set_targets(priv, &pid, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	/* Region bounds busy twice: the snapshot is read whole. */
	j->busy_read = "/start";
	j->busy_read_left = 2;
	j->reads_busy = 0;
	if (tier__linux_tracker_damon.collect(priv, sink, &g, &err))
		fail_msg("collect: %s", err.msg);
	assert_int_equal(j->reads_busy, 2);
	assert_int_equal(g.n, 6);	/* three regions, three gaps */
	expect_obs(&g.v[1], 100, 0x555555554000, 0x555555600000, TIER_OBS_ACCESSED, 18, 20);
	/* Busy for good: an error naming the file, nothing reported. */
	j->busy_read = "/nr_accesses";
	j->busy_read_left = -1;
	g.n = 0;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "still busy"));
	assert_non_null(strstr(err.msg, "nr_accesses"));
	assert_int_equal(g.n, 0);
	j->busy_read = NULL;
	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

static void test_damon_exited_targets(void **state)
{
	const pid_t pid = 100, gone = 300;
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	size_t before;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	if (tier__linux_tracker_damon.set_targets(priv, &pid, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	/* Every target exited: the kdamond stopped by itself; the command
	 * fails (EINVAL), collect reports nothing and no error. */
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/1/state", "off\n");
	j->busy_val = "update_schemes_tried_regions";
	j->busy_left = -1;
	j->busy_errno = EINVAL;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 0);
	/* Only processes that are gone: nothing to start. */
	before = j->n;
	assert_int_equal(tier__linux_tracker_damon.set_targets(priv, &gone, 1, &err), 0);
	assert_int_equal(j->n, before);
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 0);
	/* A live one again: started with "on" (not "commit"). */
	assert_int_equal(tier__linux_tracker_damon.set_targets(priv, &pid, 1, &err), 0);
	assert_string_equal(j->line[j->n - 1], "kdamonds/1/state=on");
	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

static void test_damon_empty_snapshot(void **state)
{
	static const char *const collect_writes[] = {
		"K/state=update_schemes_tried_regions",
		"K/state=update_schemes_tried_regions",
		"K/state=clear_schemes_tried_regions",
		NULL,
	};
	const pid_t pid = 100;
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	char from[1024], to[1024];
	struct tmp t;
	size_t at;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	/* No tried regions: the kernel's snapshot came back empty. */
	snprintf(from, sizeof(from), "%s/sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/"
		 "schemes/0/tried_regions", t.dir);
	snprintf(to, sizeof(to), "%s/sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/"
		 "schemes/0/tried_regions.away", t.dir);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(mkdir(from, 0755), 0);
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	if (tier__linux_tracker_damon.set_targets(priv, &pid, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	at = j->n;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	/* Asked once more, then gave up for this round. */
	expect_writes(j, &at, 1, collect_writes);
	assert_int_equal(at, j->n);
	assert_int_equal(g.n, 0);
	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

/* A tried region whose start is not a number: the collect fails with the
 * file and what it holds (it once failed with no message at all). */
static void test_damon_bad_region(void **state)
{
	const pid_t pid = 100;
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/0/tried_regions/1/start",
	    "0x1000\n");
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	if (tier__linux_tracker_damon.set_targets(priv, &pid, 1, &err))
		fail_msg("set_targets: %s", err.msg);
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "kdamonds/1/contexts/0/schemes/0/tried_regions/1/start: "
			       "expected an unsigned number, found '0x1000'"));
	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

static void region(const struct tmp *t, unsigned s, unsigned i, unsigned long long start,
		   unsigned long long end, unsigned nr)
{
	char rel[256], val[32];
	char dir[1024];

	snprintf(dir, sizeof(dir), "%s/sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/"
		 "%u/tried_regions/%u", t->dir, s, i);
	mkdir(dir, 0755);
	snprintf(rel, sizeof(rel), "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/%u/"
		 "tried_regions/%u/start", s, i);
	snprintf(val, sizeof(val), "%llu\n", start);
	put(t, rel, val);
	snprintf(rel + strlen(rel) - 5, 16, "end");
	snprintf(val, sizeof(val), "%llu\n", end);
	put(t, rel, val);
	snprintf(rel + strlen(rel) - 3, 16, "nr_accesses");
	snprintf(val, sizeof(val), "%u\n", nr);
	put(t, rel, val);
	snprintf(rel + strlen(rel) - 11, 16, "age");
	put(t, rel, "1\n");
}

static void test_damon_without_target_filters(void **state)
{
	const pid_t pids[] = { 100, 200 };
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j };
	struct tier__damon_info info;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	char path[1024];
	struct tmp t;
	size_t i;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	/* A 6.2-6.5 kernel: filters without damon_target_idx. */
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/"
		 "0/filters/0/damon_target_idx", t.dir);
	assert_int_equal(unlink(path), 0);
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	tier__damon_info(priv, &info);
	assert_false(info.per_target_schemes);
	if (tier__linux_tracker_damon.set_targets(priv, pids, 2, &err))
		fail_msg("set_targets: %s", err.msg);
	for (i = 0; i < j->n; i++)
		assert_null(strstr(j->line[i], "filters/0/type"));
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/"
				"nr_schemes"), "1");
	/* Every region, accessed or not: the list is split by address. */
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/1/contexts/0/schemes/"
				"0/access_pattern/nr_accesses/min"), "0");
	/* One scheme lists target 0's regions, then target 1's: the
	 * address going down starts the next target. */
	region(&t, 0, 3, 0x400000, 0x500000, 7);
	region(&t, 0, 4, 0x7ffe00000000, 0x7ffe00010000, 0);
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 5);
	for (i = 0; i < 3; i++)
		assert_int_equal(g.v[i].pid, 100);
	expect_obs(&g.v[3], 200, 0x400000, 0x500000, TIER_OBS_ACCESSED, 7, 20);
	assert_int_equal(g.v[4].pid, 200);

	/* Three regions groups for two targets: cannot tell, dropped. */
	region(&t, 0, 5, 0x1000, 0x2000, 3);
	g.n = 0;
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 0);
	tier__linux_tracker_damon.destroy(priv);
	free(j);
	tmp_release(&t);
}

static void test_damon_probe(void **state)
{
	struct tier_err err = { "" };
	struct tmp t;
	char path[1024];

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	assert_int_equal(tier__linux_tracker_damon.probe(&t.ctx, &err), 0);

	put(&t, "sys/module/damon_stat/parameters/enabled", "Y\n");
	assert_int_equal(tier__linux_tracker_damon.probe(&t.ctx, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "damon_stat is enabled"));
	assert_non_null(strstr(err.msg, "damon_stat.enabled=N"));
	put(&t, "sys/module/damon_stat/parameters/enabled", "N\n");

	put(&t, "sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/avail_operations", "paddr\n");
	assert_int_equal(tier__linux_tracker_damon.probe(&t.ctx, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "CONFIG_DAMON_VADDR"));
	tmp_release(&t);

	/* No DAMON at all (the pagemap fixture has no damon directory). */
	tmp_init(&t, "pagemap");
	assert_int_equal(tier__linux_tracker_damon.probe(&t.ctx, &err), -ENOENT);
	snprintf(path, sizeof(path), "DAMON: %s/kernel/mm/damon/admin missing (kernel without "
		 "CONFIG_DAMON_SYSFS", t.sys);
	assert_non_null(strstr(err.msg, path));
	tmp_release(&t);
}

/* ---- DAMON: the tracepoint (kernels before 6.2) ------------------------- */

static void test_damon_trace_line(void **state)
{
	struct tier__damon_trace_rec r;

	(void)state;
	assert_int_equal(tier__damon_parse_trace_line(
		"         kdamond.0-179     [001] .....   101.234567: damon_aggregated: "
		"target_id=0 nr_regions=3 93824992231424-93824992935936: 12 4\n", &r), 0);
	assert_int_equal(r.task_pid, 179);
	assert_int_equal(r.target_id, 0);
	assert_int_equal(r.nr_regions, 3);
	assert_true(r.start == 93824992231424ull && r.end == 93824992935936ull);
	assert_int_equal(r.nr_accesses, 12);
	assert_true(r.has_age);
	assert_int_equal(r.age, 4);

	/* 5.15/5.16 lines have no age; comm may hold dashes and spaces. */
	assert_int_equal(tier__damon_parse_trace_line(
		"  my-daemon thing-4242  [000] d..1  5.000001: damon_aggregated: target_id=2 "
		"nr_regions=10 4096-8192: 0", &r), 0);
	assert_int_equal(r.task_pid, 4242);
	assert_int_equal(r.target_id, 2);
	assert_false(r.has_age);
	assert_int_equal(r.nr_accesses, 0);

	/* Without the task column (a trace_pipe with other options). */
	assert_int_equal(tier__damon_parse_trace_line(
		"damon_aggregated: target_id=1 nr_regions=1 0-4096: 1 1", &r), -ENOENT);
	assert_int_equal(tier__damon_parse_trace_line(
		"x-1 [000] 1.0: damon_aggregated: target_id=1 nr_regions=1 0-4096: 1 1", &r), 0);
	assert_int_equal(r.task_pid, 1);

	/* Not ours. */
	assert_int_equal(tier__damon_parse_trace_line("CPU:1 [LOST 17 EVENTS]", &r), -ENOENT);
	assert_int_equal(tier__damon_parse_trace_line(
		"k-1 [001] 1.0: damos_before_apply: ctx_idx=0 scheme_idx=0 target_idx=0 "
		"nr_regions=2 0-4096: 0 0", &r), -ENOENT);
	assert_int_equal(tier__damon_parse_trace_line("", &r), -ENOENT);

	/* Malformed. */
	assert_int_equal(tier__damon_parse_trace_line(
		"k-1 [001] 1.0: damon_aggregated: target_id=x nr_regions=1 0-4096: 1 1", &r),
		-EINVAL);
	assert_int_equal(tier__damon_parse_trace_line(
		"k-1 [001] 1.0: damon_aggregated: target_id=0 nr_regions=1 8192-4096: 1 1", &r),
		-EINVAL);
	assert_int_equal(tier__damon_parse_trace_line(
		"k-1 [001] 1.0: damon_aggregated: target_id=0 nr_regions=1 0-4096 1 1", &r),
		-EINVAL);
	assert_int_equal(tier__damon_parse_trace_line(
		"k-1 [001] 1.0: damon_aggregated: target_id=0 nr_regions=1 0-4096: 1 1 junk", &r),
		-EINVAL);
	assert_int_equal(tier__damon_parse_trace_line(
		"k-1 [001] 1.0: damon_aggregated: target_id=0 nr_regions=1 0-4096: 99999999999",
		&r), -EINVAL);
}

static void test_damon_tracepoint(void **state)
{
	static const char *const create_writes[] = {
		"K/contexts/nr_contexts=1",
		"K/contexts/0/operations=vaddr",
		"K/contexts/0/monitoring_attrs/intervals/sample_us=5000",
		"K/contexts/0/monitoring_attrs/intervals/aggr_us=100000",
		"K/contexts/0/monitoring_attrs/intervals/update_us=1000000",
		"K/contexts/0/monitoring_attrs/nr_regions/min=200",
		"K/contexts/0/monitoring_attrs/nr_regions/max=2000",
		"K/contexts/0/targets/nr_targets=0",
		"K/contexts/0/schemes/nr_schemes=1",
		"K/contexts/0/schemes/nr_schemes=0",
		"tracing/instances/tierd-damon-0/events/damon/damon_aggregated/enable=1",
		NULL,
	};
	static const char *const targets_writes[] = {
		"K/contexts/0/targets/nr_targets=2",
		"K/contexts/0/targets/0/pid_target=100",
		"K/contexts/0/targets/1/pid_target=200",
		"K/state=on",
		NULL,
	};
	const pid_t pids[] = { 100, 200 };
	const char *pipe_rel = "sys/kernel/tracing/instances/tierd-damon-0/trace_pipe";
	struct journal *j = calloc(1, sizeof(*j));
	struct tier__damon_hooks hooks = { .on_write = on_write, .ctx = j };
	struct tier__damon_info info;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	char src[512], dst[1024], buf[4096];
	size_t at = 0, n;
	struct tmp t;
	FILE *in, *out;
	void *priv;

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.1");
	if (tier__damon_create(&t.ctx, 1000000, &hooks, &priv, &err))
		fail_msg("create: %s", err.msg);
	tier__damon_info(priv, &info);
	assert_true(info.tracepoint);
	assert_int_equal(info.kdamond, 0);
	expect_writes(j, &at, 0, create_writes);
	assert_string_equal(get(&t, "sys/kernel/tracing/instances/tierd-damon-0/events/damon/"
				"damon_aggregated/enable"), "1");

	/* What the pipe held before the targets were set is dropped (its
	 * target indexes are stale). */
	if (tier__linux_tracker_damon.set_targets(priv, pids, 2, &err))
		fail_msg("set_targets: %s", err.msg);
	expect_writes(j, &at, 0, targets_writes);
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 0);

	/* New events arrive. */
	snprintf(src, sizeof(src), FIXTURES "damon-sysfs/v6.1/%s", pipe_rel);
	snprintf(dst, sizeof(dst), "%s/%s", t.dir, pipe_rel);
	in = fopen(src, "r");
	out = fopen(dst, "a");
	assert_non_null(in);
	assert_non_null(out);
	n = fread(buf, 1, sizeof(buf), in);
	fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
	assert_int_equal(tier__linux_tracker_damon.collect(priv, sink, &g, &err), 0);
	/* kdamond 250's line, the lost-events note, the other event and
	 * target 5 are skipped. */
	assert_int_equal(g.n, 4);
	expect_obs(&g.v[0], 100, 93824992231424ull, 93824992935936ull, TIER_OBS_ACCESSED, 12, 20);
	expect_obs(&g.v[1], 100, 93824992935936ull, 93825001324544ull, TIER_OBS_ACCESSED, 0, 20);
	expect_obs(&g.v[2], 200, 4194304, 5242880, TIER_OBS_ACCESSED, 7, 20);
	expect_obs(&g.v[3], 200, 140729898270720ull, 140729898336256ull, TIER_OBS_ACCESSED, 3, 20);
	tier__linux_tracker_damon.destroy(priv);
	assert_string_equal(j->line[at + 0], "kdamonds/0/state=off");
	assert_string_equal(j->line[at + 1],
			    "tracing/instances/tierd-damon-0/events/damon/damon_aggregated/enable=0");
	free(j);
	tmp_release(&t);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_damon_setup_and_collect),
		cmocka_unit_test(test_damon_keeps_cpu_share),
		cmocka_unit_test(test_damon_new_kdamond_converges),
		cmocka_unit_test(test_damon_first_snapshot_waits),
		cmocka_unit_test(test_damon_snapshot_ahead),
		cmocka_unit_test(test_damon_intervals_through_thread),
		cmocka_unit_test(test_damon_reuses_off_kdamond),
		cmocka_unit_test(test_damon_all_running),
		cmocka_unit_test(test_damon_busy_retry),
		cmocka_unit_test(test_damon_busy_read),
		cmocka_unit_test(test_damon_exited_targets),
		cmocka_unit_test(test_damon_empty_snapshot),
		cmocka_unit_test(test_damon_bad_region),
		cmocka_unit_test(test_damon_without_target_filters),
		cmocka_unit_test(test_damon_probe),
		cmocka_unit_test(test_damon_trace_line),
		cmocka_unit_test(test_damon_tracepoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
