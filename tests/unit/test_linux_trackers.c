/* test_linux_trackers.c - the Linux trackers and the kernel-tiering guard
 * against fixture trees copied to a temporary directory
 * (tests/fixtures/damon-sysfs, pagemap, kernel-tiering; each has a
 * README.md): what the DAMON tracker writes and in which order, tried
 * regions and damon_aggregated trace lines, pagemap and page_idle bitmap
 * walks, soft-dirty bits, perf ring-buffer records, tracker selection, and
 * switching the kernel's own tiering off and back. */
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
#include "backend/linux/schedstat.h"
#include "backend/linux/softdirty_picture.h"
#include "backend/linux/softdirty_rate.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define FIXTURES TIERD_SOURCE_ROOT "/tests/fixtures/"

/* ---- temporary copies of fixture trees ---------------------------------- */

struct tmp {
	char dir[256];
	char sys[512], proc[512];
	struct tier_linux_ctx ctx;
};

static const char *copy_src, *copy_dst;

static int copy_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	char to[1024], buf[8192];
	int in, out;
	ssize_t n;

	(void)f;
	snprintf(to, sizeof(to), "%s%s", copy_dst, path + strlen(copy_src));
	if (type == FTW_D)
		return mkdir(to, 0755) && errno != EEXIST ? -1 : 0;
	if (type != FTW_F)
		return 0;
	in = open(path, O_RDONLY);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, st->st_mode & 0777);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	close(out);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	return remove(path);
}

/* Copies FIXTURES/name to a fresh temporary directory; sys/ and proc/ of
 * it are the roots. */
static void tmp_init(struct tmp *t, const char *name)
{
	char src[512];

	snprintf(t->dir, sizeof(t->dir), "/tmp/tierd-trk-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(src, sizeof(src), FIXTURES "%s", name);
	copy_src = src;
	copy_dst = t->dir;
	assert_int_equal(nftw(src, copy_one, 16, FTW_PHYS), 0);
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->dir);
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->dir);
	t->ctx.sysfs_root = t->sys;
	t->ctx.procfs_root = t->proc;
	t->ctx.debugfs_root = t->sys;	/* no debugfs in the fixtures */
}

static void tmp_release(struct tmp *t)
{
	nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void put(const struct tmp *t, const char *rel, const char *content)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static const char *get(const struct tmp *t, const char *rel)
{
	static char buf[4096];
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Makes <dir>/rel a directory (its parent must exist). */
static void mkdir_in(const struct tmp *t, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* ---- observations ------------------------------------------------------- */

struct got {
	struct tier_linux_addr_obs v[256];
	size_t n;
	unsigned calls;
};

static void sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct got *g = ctx;
	size_t i;

	g->calls++;
	for (i = 0; i < n && g->n < 256; i++)
		g->v[g->n++] = obs[i];
}

static void expect_obs(const struct tier_linux_addr_obs *o, pid_t pid, uint64_t start,
		       uint64_t end, uint16_t kind, uint32_t count, uint32_t max)
{
	if (o->pid != pid || o->start != start || o->end != end || o->kind != kind ||
	    o->count != count || o->max != max)
		fail_msg("obs pid %d [%#llx, %#llx) kind %u %u/%u, expected pid %d [%#llx, %#llx) "
			 "kind %u %u/%u", (int)o->pid, (unsigned long long)o->start,
			 (unsigned long long)o->end, o->kind, o->count, o->max, (int)pid,
			 (unsigned long long)start, (unsigned long long)end, kind, count, max);
}

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
};

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

static void test_damon_keeps_cpu_share(void **state)
{
	static const char *const slower_writes[] = {
		"K/contexts/0/monitoring_attrs/intervals/sample_us=50000",
		"K/contexts/0/monitoring_attrs/intervals/aggr_us=500000",
		"K/contexts/0/monitoring_attrs/intervals/update_us=1000000",
		"K/contexts/0/monitoring_attrs/nr_regions/max=2000",
		"K/state=commit",
		NULL,
	};
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

/* ---- pagemap, page_idle bitmap, soft-dirty ------------------------------ */

#define P  TIER__PM_PRESENT
#define SD TIER__PM_SOFT_DIRTY

/* The pages of fixture process 100 (see tests/fixtures/pagemap/README.md). */
static void write_pagemaps(const struct tmp *t)
{
	static const struct { uint64_t addr, entry; } pages[] = {
		/* [heap] 0x600000, 8 pages; page 2 swapped out */
		{ 0x600000, P | 0x1000 }, { 0x601000, P | SD | 0x1001 },
		{ 0x602000, TIER__PM_SWAPPED | SD }, { 0x603000, P | SD | 0x1003 },
		{ 0x604000, P | 0x2040 }, { 0x605000, P | 0x2041 },
		{ 0x606000, P | 0x2042 }, { 0x607000, P | 0x2043 },
		/* shared mapping 0x700000: not watched */
		{ 0x700000, P | SD | 0x6000 },
		/* anonymous 0x800000, 16 pages: a huge page (head 0x3000) and
		 * eight small pages */
		{ 0x800000, P | SD | 0x3000 }, { 0x801000, P | SD | 0x3001 },
		{ 0x802000, P | SD | 0x3002 }, { 0x803000, P | SD | 0x3003 },
		{ 0x804000, P | SD | 0x3004 }, { 0x805000, P | SD | 0x3005 },
		{ 0x806000, P | SD | 0x3006 }, { 0x807000, P | SD | 0x3007 },
		{ 0x808000, P | 0x4008 }, { 0x809000, P | 0x4009 }, { 0x80a000, P | 0x400a },
		{ 0x80b000, P | 0x400b }, { 0x80c000, P | 0x400c }, { 0x80d000, P | 0x400d },
		{ 0x80e000, P | 0x400e }, { 0x80f000, P | 0x400f },
		/* read-only anonymous 0x900000: its first page present */
		{ 0x900000, P | 0x7000 },
		/* private writable file mapping 0xa00000 */
		{ 0xa00000, P | SD | 0x5000 },
	};
	uint64_t flags[64] = { 0 };
	char path[1024];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/proc/100/pagemap", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		assert_int_equal(pwrite(fd, &pages[i].entry, 8, (off_t)(pages[i].addr >> 12) * 8), 8);
	/* up to the end of the last mapping */
	assert_int_equal(ftruncate(fd, (0xa01000 >> 12) * 8), 0);
	close(fd);

	/* Process 101: present pages, no PFNs (no CAP_SYS_ADMIN). */
	snprintf(path, sizeof(path), "%s/proc/101/pagemap", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < 2; i++) {
		uint64_t e = P;

		assert_int_equal(pwrite(fd, &e, 8, (off_t)((0x600000 >> 12) + i) * 8), 8);
	}
	close(fd);

	/* kpageflags: 0x3000 a compound head, 0x3001-0x3007 its tails. */
	snprintf(path, sizeof(path), "%s/proc/kpageflags", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	flags[0] = 1ull << TIER__KPF_COMPOUND_HEAD;
	for (i = 1; i < 8; i++)
		flags[i] = 1ull << TIER__KPF_COMPOUND_TAIL;
	assert_int_equal(pwrite(fd, flags, sizeof(flags), 0x3000 * 8), sizeof(flags));
	close(fd);

	/* An all-zero bitmap covering PFNs up to 0x7fff. */
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/page_idle/bitmap", t->dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 0x8000 / 8), 0);
	close(fd);
}

static uint64_t bitmap_word(const struct tmp *t, uint64_t pfn)
{
	char path[1024];
	uint64_t w = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/sys/kernel/mm/page_idle/bitmap", t->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &w, 8, (off_t)(pfn / 64) * 8), 8);
	close(fd);
	return w;
}

static bool idle_bit(const struct tmp *t, uint64_t pfn)
{
	return bitmap_word(t, pfn) & (1ull << (pfn % 64));
}

/* What the kernel does when a page is touched: its idle bit reads 0. */
static void touch(const struct tmp *t, uint64_t pfn)
{
	char path[1024];
	uint64_t w = bitmap_word(t, pfn) & ~(1ull << (pfn % 64));
	int fd;

	snprintf(path, sizeof(path), "%s/sys/kernel/mm/page_idle/bitmap", t->dir);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &w, 8, (off_t)(pfn / 64) * 8), 8);
	close(fd);
}

/* The mappings trackers watch are those the address space manages: one
 * parser (maps.h) decides for both. */
static void test_maps_lines(void **state)
{
	struct tier__maps_entry e;

	(void)state;
	assert_null(tier__maps_parse_line("00600000-00608000 rw-p 00000000 00:00 0      [heap]",
					  12, &e));
	assert_true(e.managed && e.start == 0x600000 && e.end == 0x608000);
	assert_null(tier__maps_parse_line("7f0000000000-7f0000100000 rw-p 00000000 00:00 0 ",
					  12, &e));
	assert_true(e.managed);
	assert_null(tier__maps_parse_line("00a00000-00a01000 rw-p 00001000 08:01 12 /a b c",
					  12, &e));
	assert_true(e.managed);
	assert_string_equal(e.path, "/a b c");
	/* Read-only private anonymous memory holds pages too. */
	assert_null(tier__maps_parse_line("00900000-00902000 r--p 00000000 00:00 0 ", 12, &e));
	assert_true(e.managed);
	assert_null(tier__maps_parse_line("00400000-00401000 r-xp 00000000 08:01 1 /bin/x",
					  12, &e));
	assert_false(e.managed);
	assert_null(tier__maps_parse_line("00700000-00704000 rw-s 00000000 00:05 9 /dev/shm/x",
					  12, &e));
	assert_false(e.managed);
	assert_null(tier__maps_parse_line("7ffc00000000-7ffc00002000 rw-p 00000000 00:00 0 "
					  "[vvar]", 12, &e));
	assert_false(e.managed);
	assert_non_null(tier__maps_parse_line("garbage", 12, &e));
	assert_non_null(tier__maps_parse_line("", 12, &e));
}

static void test_idle(void **state)
{
	static const uint64_t ours[] = {
		0x1000, 0x1001, 0x1003, 0x2040, 0x2041, 0x2042, 0x2043, 0x3000, 0x3001, 0x3002,
		0x3003, 0x3004, 0x3005, 0x3006, 0x3007, 0x4008, 0x4009, 0x400a, 0x400b, 0x400c,
		0x400d, 0x400e, 0x400f, 0x5000, 0x7000,
	};
	const pid_t pids[] = { 100, 300 /* gone */ };
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	struct tmp t;
	size_t i;
	void *priv;

	(void)state;
	tmp_init(&t, "pagemap");
	write_pagemaps(&t);
	if (tier__linux_tracker_idle.probe(&t.ctx, &err))
		fail_msg("probe: %s", err.msg);
	if (tier__linux_tracker_idle.create(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	if (tier__linux_tracker_idle.set_targets(priv, pids, 2, &err))
		fail_msg("set_targets: %s", err.msg);
	/* Every present page of the watched mappings marked idle, nothing
	 * else (not 0x1002 next to them, not the shared mapping's 0x6000). */
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!idle_bit(&t, ours[i]))
			fail_msg("pfn %#llx not marked idle", (unsigned long long)ours[i]);
	assert_false(idle_bit(&t, 0x1002));
	assert_false(idle_bit(&t, 0x6000));
	assert_false(idle_bit(&t, 0x3008));

	/* Accesses; a huge page's tails read "not idle" whatever happened,
	 * its head (idle) answers for them. */
	touch(&t, 0x1001);
	touch(&t, 0x2041);
	touch(&t, 0x400a);
	for (i = 1; i < 8; i++)
		touch(&t, 0x3000 + i);
	if (tier__linux_tracker_idle.collect(priv, sink, &g, &err))
		fail_msg("collect: %s", err.msg);
	assert_int_equal(g.n, 10);
	expect_obs(&g.v[0], 100, 0x600000, 0x601000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[1], 100, 0x601000, 0x602000, TIER_OBS_ACCESSED, 1, 1);
	/* page 2 is swapped out: a gap */
	expect_obs(&g.v[2], 100, 0x603000, 0x605000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[3], 100, 0x605000, 0x606000, TIER_OBS_ACCESSED, 1, 1);
	expect_obs(&g.v[4], 100, 0x606000, 0x608000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[5], 100, 0x800000, 0x80a000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[6], 100, 0x80a000, 0x80b000, TIER_OBS_ACCESSED, 1, 1);
	expect_obs(&g.v[7], 100, 0x80b000, 0x810000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[8], 100, 0x900000, 0x901000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[9], 100, 0xa00000, 0xa01000, TIER_OBS_ACCESSED, 0, 1);
	/* Marked idle again after the scan. */
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (!idle_bit(&t, ours[i]))
			fail_msg("pfn %#llx not marked idle again", (unsigned long long)ours[i]);
	assert_false(idle_bit(&t, 0x6000));

	/* The huge page's head touched: all 8 pages accessed. */
	touch(&t, 0x3000);
	for (i = 1; i < 8; i++)
		touch(&t, 0x3000 + i);
	g.n = 0;
	assert_int_equal(tier__linux_tracker_idle.collect(priv, sink, &g, &err), 0);
	assert_int_equal(g.n, 6);
	expect_obs(&g.v[0], 100, 0x600000, 0x602000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[1], 100, 0x603000, 0x608000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[2], 100, 0x800000, 0x808000, TIER_OBS_ACCESSED, 1, 1);
	expect_obs(&g.v[3], 100, 0x808000, 0x810000, TIER_OBS_ACCESSED, 0, 1);
	expect_obs(&g.v[4], 100, 0x900000, 0x901000, TIER_OBS_ACCESSED, 0, 1);
	tier__linux_tracker_idle.destroy(priv);
	tmp_release(&t);
}

static void test_idle_no_pfns(void **state)
{
	const pid_t pid = 101;
	struct tier_err err = { "" };
	struct tmp t;
	void *priv;

	(void)state;
	tmp_init(&t, "pagemap");
	write_pagemaps(&t);
	if (tier__linux_tracker_idle.create(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(tier__linux_tracker_idle.set_targets(priv, &pid, 1, &err), -EPERM);
	assert_non_null(strstr(err.msg, "pid 101"));
	assert_non_null(strstr(err.msg, "CAP_SYS_ADMIN"));
	tier__linux_tracker_idle.destroy(priv);

	/* probe: no CAP_SYS_ADMIN in the process's status. */
	snprintf(t.proc, sizeof(t.proc), "%s/proc-nocap", t.dir);
	t.ctx.procfs_root = t.proc;
	assert_int_equal(tier__linux_tracker_idle.probe(&t.ctx, &err), -EPERM);
	assert_non_null(strstr(err.msg, "CAP_SYS_ADMIN"));
	tmp_release(&t);

	/* No page_idle in the kernel. */
	tmp_init(&t, "damon-sysfs/v6.12");
	assert_int_equal(tier__linux_tracker_idle.probe(&t.ctx, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/kernel/mm/page_idle/bitmap missing (kernel without "
				"CONFIG_IDLE_PAGE_TRACKING"));
	tmp_release(&t);
}

/* Checks a soft-dirty observation: written, over the round, max = the
 * round over the time since the clear (so at least min_max), half of it. */
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
	const struct tier_linux_ctx live = { "/sys", "/proc", "/sys/kernel/debug", 0, 0 };
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
	/* one round alone: no standing estimate yet */
	assert_int_equal(g.v[0].write, 0);
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
	assert_int_equal(g.v[0].write, TIER_OBS_STANDING);
	assert_int_equal(g.v[3].write, TIER_OBS_STANDING);
	assert_int_equal(g.v[4].write, 0);
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
	/* 20 ms of computing shows in it, to the ns, as a run */
	t0 = tier_linux_now_us();
	while (tier_linux_now_us() - t0 < 20000)
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
	/* read once: what its picture holds is what the tracker knows */
	assert_false(tier__softdirty_has_read(priv, 100));
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ, &err), 0);
	assert_true(tier__softdirty_has_read(priv, 100));
	assert_false(tier__softdirty_has_read(priv, 101));
	assert_int_equal(tier__softdirty_step(priv, TIER__SD_READ_LAST, &err), 0);
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
 * runnable share over its life (run + wait since it started). */
static uint64_t sd_blocked_read(double duty, uint64_t *ran_us)
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
	/* 40 ms on the wall clock: it ran 5 ms and waited for none */
	snprintf(line, sizeof(line), "%llu %llu 4\n", (unsigned long long)run0 + 5000000,
		 (unsigned long long)wait0);
	put(&t, "proc/100/task/100/schedstat", line);
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
	assert_int_equal(sd_blocked_read(1.0, &ran), 5000 - 11);
	assert_int_equal(ran, 5000);
	/* Runnable a quarter of its life: a quarter of the wall clock is
	 * what 5 ms of running stands for. */
	assert_int_equal(sd_blocked_read(0.25, &ran), (5000 - 11) * 4);
	/* Runnable a hundredth: no more than the wall clock less waits
	 * and faults (the least of the two). */
	assert_int_equal(sd_blocked_read(0.01, &ran) + 11 >= 40000, 1);
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
					     (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate));
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
					     (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate));
	assert_true(fabs(rate[2][2] - mle[2][2]) < 0.5);
	assert_true(rate[1][3] > 10);
	pop_counts(brk, warm, few_n, 1, count);
	assert_false(tier__sd_rate_table_pop(brk, 4, brk, 4,
					      (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate));
	assert_true(rate[2][2] == mle[2][2]);
	/* no last round: the table */
	assert_false(tier__sd_rate_table_pop(brk, 0, brk, 4,
					      (const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate));
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
	double rate[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	const double r[] = { 5, 245 }, n[] = { 139000, 24500 };
	struct tier__sd_runs seen = { 0 }, prev = { 0 };
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
		pic.n = 0;
		tier__sd_picture(&pic, &rounds, false, rate);
		for (i = 0; i < pic.n; i++) {
			/* a run's rate: 1 write in 2 checks over interval_us */
			double ri = 2 * log(2) / (pic.v[i].interval_us / 1e6);

			assert_true(pic.v[i].write == TIER_OBS_STANDING);
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
	free(seen.v);
	free(prev.v);
	free(pic.v);
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

/* A writer's own CPU per dirty page bounds what a fault cost it: the least
 * over a round's reads (of 256 pages or more) dates the next round's first
 * writes, up to 4 times the calibration's figure; in a target's first
 * round, the least over that round's earlier reads. */
static void test_softdirty_fault_seen(void **state)
{
	const pid_t pids[] = { 100 };
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	char path[1024];
	struct tmp t;
	void *priv;
	FILE *f;
	int i, round;
	/* the writer's CPU over each round (ns): 1 ms, 3 ms, 3 ms */
	static const uint64_t ran[] = { 1000000, 3000000, 3000000 };
	/* what the round dates a fault at: the calibration's, then the last
	 * round's bound (1 ms / 311 pages), then 4 x the calibration's (the
	 * bound 3 ms / 311 is past it) */
	static const uint64_t dated_ns[] = { 1000, 1000000 / 311, 4000 };
	uint64_t run = 0;

	(void)state;
	tmp_init(&t, "pagemap");
	write_pagemaps(&t);
	/* 300 more pages written, in a mapping of their own */
	snprintf(path, sizeof(path), "%s/proc/100/maps", t.dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("00400000-00401000 r-xp 00000000 08:01 1234 /usr/bin/workload\n"
	      "00600000-00608000 rw-p 00000000 00:00 0 [heap]\n"
	      "00800000-00810000 rw-p 00000000 00:00 0\n"
	      "00a00000-00a01000 rw-p 00001000 08:01 1234 /usr/bin/workload with spaces\n"
	      "01000000-01200000 rw-p 00000000 00:00 0\n", f);
	fclose(f);
	for (i = 0; i < 300; i++)
		set_pagemap_entry(&t, 0x1000000 + (uint64_t)i * 4096, P | SD | (0x9000 + (uint64_t)i));
	snprintf(path, sizeof(path), "%s/proc/100/pagemap", t.dir);
	assert_int_equal(truncate(path, (0x1200000 >> 12) * 8), 0);
	mkdir_in(&t, "proc/100/task");
	mkdir_in(&t, "proc/100/task/100");
	put(&t, "proc/100/task/100/schedstat", "0 0 1\n");
	if (tier__softdirty_create_manual(&t.ctx, 1000000, &priv, &err))
		fail_msg("create: %s", err.msg);
	assert_int_equal(tier__linux_tracker_softdirty.set_targets(priv, pids, 1, &err), 0);
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

/* ---- perf records ------------------------------------------------------- */

#define ST (PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | \
	    PERF_SAMPLE_DATA_SRC)

struct ring {
	uint8_t data[256];
	uint64_t head;
};

static void ring_put(struct ring *r, const void *rec, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		r->data[(r->head + i) % sizeof(r->data)] = ((const uint8_t *)rec)[i];
	r->head += len;
}

static void put_sample(struct ring *r, uint32_t pid, uint64_t addr, uint64_t period,
		       uint64_t weight, uint64_t data_src)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t addr, period, weight, data_src;
	} s = { { PERF_RECORD_SAMPLE, 0, sizeof(s) }, pid, pid + 1, addr, period, weight,
		data_src };

	ring_put(r, &s, sizeof(s));
}

struct samples {
	struct tier__perf_sample v[16];
	size_t n;
};

static void on_sample(void *ctx, const struct tier__perf_sample *s)
{
	struct samples *ss = ctx;

	if (ss->n < 16)
		ss->v[ss->n++] = *s;
}

static void test_perf_decode(void **state)
{
	const uint64_t load = PERF_MEM_OP_LOAD, store = PERF_MEM_OP_STORE;
	struct tier__perf_stats st = { 0 };
	struct samples ss = { .n = 0 };
	struct ring r = { .head = 0 };
	struct {
		struct perf_event_header h;
		uint64_t id, lost;
	} lost = { { PERF_RECORD_LOST, 0, sizeof(lost) }, 7, 42 };
	struct {
		struct perf_event_header h;
		uint64_t x;
	} other = { { PERF_RECORD_MMAP, 0, sizeof(other) }, 0 };
	uint64_t tail;

	(void)state;
	assert_true(tier__perf_sample_type_ok(ST));
	assert_false(tier__perf_sample_type_ok(ST | PERF_SAMPLE_CALLCHAIN));
	assert_false(tier__perf_sample_type_ok(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT));

	/* Start near the end of the 256-byte area: the second sample (48
	 * bytes at 208) wraps around. */
	r.head = tail = 160;
	put_sample(&r, 100, 0x7f0000001234, 10007, 250, load | (1ull << 5));
	put_sample(&r, 100, 0x7f0000002000, 10007, 90, store);
	ring_put(&r, &lost, sizeof(lost));
	ring_put(&r, &other, sizeof(other));
	put_sample(&r, 200, 0x600000, 20011, 0, PERF_MEM_OP_NA);
	tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss, &st);
	assert_true(tail == r.head);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.lost, 42);
	assert_int_equal(st.other, 1);
	assert_int_equal(st.bad, 0);
	assert_int_equal(ss.n, 3);
	assert_int_equal(ss.v[0].pid, 100);
	assert_int_equal(ss.v[0].tid, 101);
	assert_true(ss.v[0].addr == 0x7f0000001234);
	assert_int_equal(ss.v[0].period, 10007);
	assert_int_equal(ss.v[0].weight, 250);
	assert_false(tier__perf_data_src_is_store(ss.v[0].data_src));
	assert_true(ss.v[1].addr == 0x7f0000002000);	/* the wrapped one */
	assert_true(tier__perf_data_src_is_store(ss.v[1].data_src));
	assert_int_equal(ss.v[2].pid, 200);
	assert_int_equal(ss.v[2].period, 20011);
	assert_false(tier__perf_data_src_is_store(ss.v[2].data_src));

	/* A record the kernel has not finished: left for the next call. */
	ss.n = 0;
	put_sample(&r, 100, 0x1000, 1, 1, load);
	tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head - 8, ST, on_sample, &ss,
				 &st);
	assert_int_equal(ss.n, 0);
	assert_true(tail == r.head - 48);
	tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss, &st);
	assert_int_equal(ss.n, 1);
	assert_true(tail == r.head);

	/* A sample shorter than its sample_type says: counted bad. */
	{
		struct {
			struct perf_event_header h;
			uint32_t pid, tid;
		} shortrec = { { PERF_RECORD_SAMPLE, 0, sizeof(shortrec) }, 1, 1 };

		ring_put(&r, &shortrec, sizeof(shortrec));
		tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss,
					 &st);
		assert_int_equal(st.bad, 1);
		assert_true(tail == r.head);
	}
	/* Garbage (size 0): everything up to head dropped, no endless loop. */
	{
		struct perf_event_header zero = { PERF_RECORD_SAMPLE, 0, 0 };

		ring_put(&r, &zero, sizeof(zero));
		put_sample(&r, 100, 0x1000, 1, 1, load);
		ss.n = 0;
		tail = tier__perf_decode(r.data, sizeof(r.data), tail, r.head, ST, on_sample, &ss,
					 &st);
		assert_int_equal(st.bad, 2);
		assert_int_equal(ss.n, 0);
		assert_true(tail == r.head);
	}

	/* WEIGHT_STRUCT: the latency is the low 32 bits; IDENTIFIER, IP,
	 * TIME, CPU and RAW are skipped in their places. */
	{
		uint64_t st2 = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;
		struct {
			struct perf_event_header h;
			uint64_t id, ip;
			uint32_t pid, tid;
			uint64_t time, addr;
			uint32_t cpu, res;
			uint32_t raw_size;
			uint8_t raw[12];	/* 4 + 12 = 16: u64 aligned */
			uint64_t weight, data_src;
		} __attribute__((packed)) s2 = {
			{ PERF_RECORD_SAMPLE, 0, sizeof(s2) }, 9, 0x401000, 300, 301, 5, 0xabc000,
			1, 0, 12, { 0 }, (7ull << 32) | 123, store,
		};

		struct ring r2 = { .head = 0 };

		ring_put(&r2, &s2, sizeof(s2));
		ss.n = 0;
		memset(&st, 0, sizeof(st));
		tier__perf_decode(r2.data, sizeof(r2.data), 0, r2.head, st2, on_sample, &ss, &st);
		assert_int_equal(ss.n, 1);
		assert_int_equal(ss.v[0].pid, 300);
		assert_true(ss.v[0].addr == 0xabc000);
		assert_int_equal(ss.v[0].weight, 123);
		assert_true(tier__perf_data_src_is_store(ss.v[0].data_src));
	}
}

static void test_perf_event_alias(void **state)
{
	uint64_t config, config1;

	(void)state;
	assert_int_equal(tier__perf_parse_event("event=0xcd,umask=0x1,ldlat=3\n", &config,
						&config1), 0);
	assert_true(config == 0x1cd);
	assert_true(config1 == 3);
	assert_int_equal(tier__perf_parse_event("event=0xcd,umask=0x1", &config, &config1), 0);
	assert_true(config1 == 3);	/* the default threshold */
	assert_int_equal(tier__perf_parse_event("umask=0x1", &config, &config1), -EINVAL);
	assert_int_equal(tier__perf_parse_event("event=0xcd,frontend=0x8", &config, &config1),
			 -EINVAL);
	assert_int_equal(tier__perf_parse_event("event=zz", &config, &config1), -EINVAL);
}

static void test_perf_probe(void **state)
{
	struct tier_err err = { "" };
	struct tmp t;
	char path[1024];

	(void)state;
	tmp_init(&t, "damon-sysfs/v6.12");
	assert_int_equal(tier__linux_tracker_perf.probe(&t.ctx, &err), -ENODEV);
	assert_non_null(strstr(err.msg, "perf: no PMU with memory-access samples"));

	/* An Intel PMU with the mem-loads alias. */
	snprintf(path, sizeof(path), "%s/sys/bus", t.dir);
	mkdir(path, 0755);
	strcat(path, "/event_source");
	mkdir(path, 0755);
	strcat(path, "/devices");
	mkdir(path, 0755);
	strcat(path, "/cpu");
	mkdir(path, 0755);
	strcat(path, "/events");
	assert_int_equal(mkdir(path, 0755), 0);
	put(&t, "sys/bus/event_source/devices/cpu/events/mem-loads",
	    "event=0xcd,umask=0x1,ldlat=3\n");
	put(&t, "sys/bus/event_source/devices/cpu/type", "4\n");
	assert_int_equal(tier__linux_tracker_perf.probe(&t.ctx, &err), 0);
	put(&t, "sys/bus/event_source/devices/cpu/events/mem-loads", "event=what\n");
	assert_int_equal(tier__linux_tracker_perf.probe(&t.ctx, &err), -EINVAL);
	tmp_release(&t);
}

/* ---- picking ------------------------------------------------------------ */

/* The budget in equal parts: steps alone (idle, perf: no thread of
 * their own), steps and kdamond (damon), steps and soft-dirty's thread
 * (softdirty), a third each (damon+softdirty); the parts add up to it. */
static void test_budget_parts(void **state)
{
	static const struct {
		const char *name;
		double steps, kthread, thread;
	} want[] = {
		{ "idle", 1, 0, 0 },
		{ "perf", 1, 0, 0 },
		{ "damon", 0.5, 3, 0 },
		{ "softdirty", 0.5, 0, 3 },
		{ "damon+softdirty", 1.0 / 3, 2, 2 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct tier_linux_tracker_ops *t = tier_linux_tracker_find(want[i].name);
		double k = -1, th = -1, steps;

		assert_non_null(t);
		steps = tier_linux_tracker_budget(t, 6, &k, &th);
		assert_float_equal(steps, want[i].steps, 1e-9);
		assert_float_equal(k, want[i].kthread, 1e-9);
		assert_float_equal(th, want[i].thread, 1e-9);
		assert_float_equal(steps * 6 + k + th, 6, 1e-9);
	}
}

/* The steps' share with what the tracker's threads used: their own part
 * at least (threads over their parts take nothing from it), what the
 * threads leave of the whole, never more than all of it. */
static void test_step_share(void **state)
{
	(void)state;
	/* damon+softdirty under 5%: a kdamond at its 1.67%, soft-dirty's
	 * thread at 0.2% of a core: the steps get the other 3.13%. */
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, 5.0 / 3 + 0.2), 1 - (5.0 / 3 + 0.2) / 5,
			   1e-9);
	/* threads at or over their parts: the steps' own part */
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, 10.0 / 3), 1.0 / 3, 1e-9);
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, 4.5), 1.0 / 3, 1e-9);
	/* idle threads: all of it, not more */
	assert_float_equal(tier_linux_step_share(0.5, 5, 0), 1, 1e-9);
	assert_float_equal(tier_linux_step_share(0.5, 5, -1), 1, 1e-9);
	/* no budget to split: the own part */
	assert_float_equal(tier_linux_step_share(0.5, 0, 1), 0.5, 1e-9);
}

/* The threads' CPU average: seeded with their parts, it follows a steady
 * rate within a few time constants, a 1 s burst moves it by a tenth of
 * the burst's excess (10 s), and readings less than 1 s apart wait. */
static void test_others_average(void **state)
{
	struct tier_linux_others o = { 0 };
	uint64_t now = 1000000;
	double cpu = 0, pct;
	int i;

	(void)state;
	/* Seeded: their parts (two thirds of 5%). */
	pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
	assert_float_equal(pct, 10.0 / 3, 1e-9);
	/* 0.5 s later, whatever was used: not yet counted. */
	pct = tier_linux_others_update(&o, now + 500000, 5.0, 10.0 / 3);
	assert_float_equal(pct, 10.0 / 3, 1e-9);
	/* The kdamond at 1%, the thread idle, for 60 s read every second:
	 * within 1% of 1% (e^-6 of the seed's excess is left). */
	for (i = 0; i < 60; i++) {
		now += 1000000;
		cpu += 0.01;
		pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
	}
	assert_true(fabs(pct - 1.0) < 0.01);
	/* A 1 s burst at 50% of a core: 1 - e^-0.1 of the way there. */
	now += 1000000;
	cpu += 0.5;
	pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
	assert_true(fabs(pct - (1.0 + -expm1(-0.1) * 49.0)) < 0.05);
	/* The share the steps then get is their own part: the threads are
	 * over what they leave. */
	assert_float_equal(tier_linux_step_share(1.0 / 3, 5, pct), 1.0 / 3, 1e-9);
	/* A gap of 5 s read at once: its mean rate, weighted for 5 s. */
	{
		double before = pct;

		now += 5000000;
		cpu += 0.05;
		pct = tier_linux_others_update(&o, now, cpu, 10.0 / 3);
		assert_true(fabs(pct - (before + -expm1(-0.5) * (1.0 - before))) < 1e-6);
	}
}

static void test_pick(void **state)
{
	const struct tier_linux_tracker_ops *ops;
	struct tmp t, p;
	char why[2048];

	(void)state;
	assert_ptr_equal(tier_linux_tracker_find("damon"), &tier__linux_tracker_damon);
	assert_ptr_equal(tier_linux_tracker_find("perf"), &tier__linux_tracker_perf);
	assert_null(tier_linux_tracker_find("hintfault"));
	assert_string_equal(tier_linux_trackers[0]->name, "damon+softdirty");
	assert_string_equal(tier_linux_trackers[1]->name, "damon");
	assert_string_equal(tier_linux_trackers[2]->name, "idle");
	assert_string_equal(tier_linux_trackers[3]->name, "softdirty");
	assert_string_equal(tier_linux_trackers[4]->name, "perf");
	assert_null(tier_linux_trackers[5]);

	/* DAMON's sysfs, the pagemap fixture's procfs: like Debian 6.12. */
	tmp_init(&t, "damon-sysfs/v6.12");
	tmp_init(&p, "pagemap");
	t.ctx.procfs_root = p.proc;
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, NULL, &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_combo);
	assert_non_null(strstr(why, "idle: "));
	assert_non_null(strstr(why, "CONFIG_IDLE_PAGE_TRACKING"));
	assert_non_null(strstr(why, "\nperf: no PMU"));
	assert_null(strstr(why, "DAMON"));
	assert_null(strstr(why, "softdirty"));
	assert_int_equal(why[strlen(why) - 1], '\n');

	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "softdirty", &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_softdirty);
	assert_string_equal(why, "");

	/* Both together, where both can run. */
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "damon+softdirty", &ops, why, sizeof(why)),
			 0);
	assert_ptr_equal(ops, &tier__linux_tracker_combo);
	assert_int_equal(ops->kinds, TIER_OBS_ACCESSED | TIER_OBS_WRITTEN);
	assert_string_equal(why, "");

	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "perf", &ops, why, sizeof(why)), -ENODEV);
	assert_null(ops);
	assert_non_null(strstr(why, "perf: no PMU"));

	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "bogus", &ops, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "unknown tracker 'bogus' (known: damon+softdirty damon idle softdirty perf, auto)\n");

	/* The pagemap fixture's sysfs has page_idle but no DAMON: idle. */
	assert_int_equal(tier_linux_tracker_pick(&p.ctx, "auto", &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_idle);
	assert_non_null(strstr(why, "DAMON: "));

	/* A small why: cut, never overrun. */
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, NULL, &ops, why, 16), 0);
	assert_true(strlen(why) < 16);
	tmp_release(&p);

	/* DAMON without soft-dirty (this procfs has no clear_refs): DAMON
	 * alone, and why not both. */
	t.ctx.procfs_root = t.proc;
	assert_int_equal(tier_linux_tracker_pick(&t.ctx, "auto", &ops, why, sizeof(why)), 0);
	assert_ptr_equal(ops, &tier__linux_tracker_damon);
	assert_non_null(strstr(why, "softdirty: "));
	tmp_release(&t);
}

/* ---- kernel tiering ----------------------------------------------------- */

static void test_kernel_tiering(void **state)
{
	struct tier_linux_kernel_tiering kt, saved;
	struct tier_err err = { "" };
	struct tmp t;
	char buf[256];

	(void)state;
	tmp_init(&t, "kernel-tiering/debian");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	assert_true(kt.has_numa_balancing && kt.has_demotion);
	assert_int_equal(kt.numa_balancing, 1);
	assert_false(kt.demotion_enabled);
	/* Mode 1 migrates too. */
	assert_true(tier_linux_kernel_tiering_active(&kt));
	tier_linux_kernel_tiering_describe(&kt, buf, sizeof(buf));
	assert_string_equal(buf, "numa_balancing=1 (NUMA balancing), demotion_enabled=false");
	tmp_release(&t);

	tmp_init(&t, "kernel-tiering/tiering");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	tier_linux_kernel_tiering_describe(&kt, buf, sizeof(buf));
	assert_string_equal(buf, "numa_balancing=2 (memory tiering), demotion_enabled=true");
	if (tier_linux_kernel_tiering_disable(&t.ctx, &saved, &err))
		fail_msg("disable: %s", err.msg);
	assert_int_equal(saved.numa_balancing, 2);
	assert_true(saved.demotion_enabled);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "0");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "false");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	assert_false(tier_linux_kernel_tiering_active(&kt));
	if (tier_linux_kernel_tiering_restore(&t.ctx, &saved, &err))
		fail_msg("restore: %s", err.msg);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "true");

	/* Not writable: a clear error, nothing left half-done. As root the
	 * check runs in a child that gave up root. */
	{
		char path[1024];
		pid_t pid;
		int status = -1;

		snprintf(path, sizeof(path), "%s/proc/sys/kernel/numa_balancing", t.dir);
		assert_int_equal(chmod(path, 0666), 0);
		snprintf(path, sizeof(path), "%s/sys/kernel/mm/numa/demotion_enabled", t.dir);
		assert_int_equal(chmod(path, 0444), 0);
		assert_int_equal(chmod(t.dir, 0755), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
				_exit(2);
			if (tier_linux_kernel_tiering_disable(&t.ctx, &saved, &err) != -EACCES)
				_exit(3);
			if (!strstr(err.msg, "demotion_enabled: writing 'false': Permission "
				    "denied; switching kernel tiering needs root"))
				_exit(4);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		/* numa_balancing was put back after demotion failed. */
		assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
		chmod(path, 0644);
	}
	tmp_release(&t);

	/* An old kernel: neither file. */
	tmp_init(&t, "pagemap");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), 0);
	assert_false(kt.has_numa_balancing || kt.has_demotion);
	assert_false(tier_linux_kernel_tiering_active(&kt));
	assert_int_equal(tier_linux_kernel_tiering_disable(&t.ctx, &saved, &err), 0);
	assert_int_equal(tier_linux_kernel_tiering_restore(&t.ctx, &saved, &err), 0);
	tier_linux_kernel_tiering_describe(&kt, buf, sizeof(buf));
	assert_string_equal(buf, "numa_balancing absent, demotion_enabled absent");
	tmp_release(&t);

	tmp_init(&t, "kernel-tiering/bad");
	assert_int_equal(tier_linux_kernel_tiering_read(&t.ctx, &kt, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "demotion_enabled: expected true or false, found 'maybe'"));
	tmp_release(&t);
}


/* ---- the kernel guard: damon_stat, kernel tiering, the state file ------- */

static char said[2048];

static void say_collect(void *arg, int level, const char *msg)
{
	size_t len = strlen(said);

	(void)arg;
	snprintf(said + len, sizeof(said) - len, "%d %s\n", level, msg);
}

static const char *state_file(const struct tmp *t)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s/tierd/state", t->dir);
	return path;
}

static void test_guard_take_and_give_back(void **state)
{
	struct tier_linux_guard g;
	struct tier_err err = { "" };
	struct tmp t;
	char want[64];

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	said[0] = '\0';
	if (tier_linux_guard_open(&g, &t.ctx, state_file(&t), say_collect, NULL, &err))
		fail_msg("open: %s", err.msg);
	assert_string_equal(said, "");
	assert_null(get(&t, "tierd/state"));	/* nothing changed yet */
	if (tier_linux_guard_damon_stat(&g, true, &err))
		fail_msg("damon_stat: %s", err.msg);
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "N");
	assert_non_null(strstr(said, "damon_stat switched off while tierd runs"));
	if (tier_linux_guard_kernel_tiering(&g, true, &err))
		fail_msg("kernel tiering: %s", err.msg);
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "0");
	assert_int_equal(tier_linux_guard_kdamond(&g, true, 0, 127, &err), 0);
	{
		struct tier_linux_kernel_state st;

		if (tier_linux_kernel_state_load(state_file(&t), &st, &err))
			fail_msg("load: %s", err.msg);
		assert_int_equal(st.pid, getpid());
		assert_true(st.damon_stat && st.has_kdamond);
		assert_int_equal(st.kdamond_pid, 127);
		assert_int_equal(st.tiering.numa_balancing, 2);
		assert_true(st.tiering.has_demotion && st.tiering.demotion_enabled);
	}
	/* The clean exit: everything back, the file gone. */
	said[0] = '\0';
	if (tier_linux_guard_close(&g, &err))
		fail_msg("close: %s", err.msg);
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "sys/kernel/mm/numa/demotion_enabled"), "true");
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "off");
	assert_null(get(&t, "tierd/state"));
	snprintf(want, sizeof(want), "stopped kdamond 0 (pid 127)");
	assert_non_null(strstr(said, want));
	tmp_release(&t);
}

static void test_guard_after_crash(void **state)
{
	struct tier_linux_guard g, g2;
	struct tier_err err = { "" };
	bool found;
	struct tmp t;

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	said[0] = '\0';
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), say_collect, NULL,
					       &err), 0);
	assert_int_equal(tier_linux_guard_damon_stat(&g, true, &err), 0);
	assert_int_equal(tier_linux_guard_kernel_tiering(&g, true, &err), 0);
	assert_int_equal(tier_linux_guard_kdamond(&g, true, 0, 127, &err), 0);
	/* Killed here: no close. The next start puts everything back. */
	said[0] = '\0';
	if (tier_linux_guard_open(&g2, &t.ctx, state_file(&t), say_collect, NULL, &err))
		fail_msg("reopen: %s", err.msg);
	assert_non_null(strstr(said, "did not exit cleanly"));
	assert_non_null(strstr(said, "stopped kdamond 0 (pid 127)"));
	assert_non_null(strstr(said, "numa_balancing=2"));
	assert_non_null(strstr(said, "damon_stat enabled=Y"));
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "off");
	assert_null(get(&t, "tierd/state"));
	assert_int_equal(tier_linux_guard_close(&g2, &err), 0);

	/* A kdamond index that serves someone else by now is left alone. */
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n");
	put(&t, "sys/kernel/mm/damon/admin/kdamonds/0/pid", "300\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err), 0);
	assert_int_equal(tier_linux_guard_kdamond(&g, true, 0, 127, &err), 0);
	assert_int_equal(tier_linux_guard_restore_leftovers(&t.ctx, state_file(&t), NULL, NULL,
							    &found, &err), 0);
	assert_true(found);
	assert_string_equal(get(&t, "sys/kernel/mm/damon/admin/kdamonds/0/state"), "on");
	assert_int_equal(tier_linux_guard_restore_leftovers(&t.ctx, state_file(&t), NULL, NULL,
							    &found, &err), 0);
	assert_false(found);
	tmp_release(&t);
}

static void test_guard_refuses(void **state)
{
	struct tier_linux_guard g;
	struct tier_err err = { "" };
	struct tmp t;
	char path[700];

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	/* Another tierd runs (proc/4242/comm is tierd): its file is not ours. */
	snprintf(path, sizeof(path), "%s/tierd", t.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	put(&t, "tierd/state", "pid 4242\nnuma_balancing 2\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err),
			 -EBUSY);
	assert_non_null(strstr(err.msg, "another tierd (pid 4242) runs"));
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	/* A damaged file: its line named, nothing written. */
	put(&t, "tierd/state", "pid 1\nnuma_balancing two\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "state:2: bad value for 'numa_balancing'"));
	put(&t, "tierd/state", "pid 1\nnuma 2\n");
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), NULL, NULL, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "state:2: unknown key 'numa'"));
	tmp_release(&t);
}

static void test_guard_keeps(void **state)
{
	struct tier_linux_guard g;
	struct tier_err err = { "" };
	struct tmp t;

	(void)state;
	tmp_init(&t, "kernel-tiering/sid");
	put(&t, "sys/module/damon_reclaim/parameters/enabled", "Y\n");
	said[0] = '\0';
	assert_int_equal(tier_linux_guard_open(&g, &t.ctx, state_file(&t), say_collect, NULL,
					       &err), 0);
	assert_int_equal(tier_linux_guard_damon_stat(&g, false, &err), 0);
	assert_int_equal(tier_linux_guard_kernel_tiering(&g, false, &err), 0);
	assert_string_equal(get(&t, "sys/module/damon_stat/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "sys/module/damon_reclaim/parameters/enabled"), "Y");
	assert_string_equal(get(&t, "proc/sys/kernel/numa_balancing"), "2");
	assert_non_null(strstr(said, "damon_stat kept on (daemon.damon_stat: keep)"));
	assert_non_null(strstr(said, "lost: DAMON's access counts"));
	assert_non_null(strstr(said, "damon_reclaim is enabled"));
	assert_non_null(strstr(said, "kernel's own tiering is on"));
	assert_null(get(&t, "tierd/state"));
	assert_int_equal(tier_linux_guard_close(&g, &err), 0);
	/* The DAMON tracker names the holder when it cannot start. */
	assert_int_equal(tier__linux_tracker_damon.probe(&t.ctx, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "damon_stat is enabled and runs DAMON exclusively"));
	tmp_release(&t);
}

/* ---- damon+softdirty: the regions with what their written pages leave - */

#define BY_PAGES	2048
#define BY_PIDS		2

struct merge_got {
	double rate[BY_PIDS][BY_PAGES];	/* written accesses/s handed on, per page */
	double region[BY_PIDS][BY_PAGES];	/* regions' accesses/s handed on, per page */
	double other[BY_PIDS][BY_PAGES];	/* other kinds' */
	unsigned calls;
	size_t n;
};

static void merge_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct merge_got *g = ctx;
	size_t i;

	g->calls++;
	g->n += n;
	for (i = 0; i < n; i++) {
		double r = tier__obs_rate(&obs[i]);
		uint64_t a;

		assert_true(obs[i].start < obs[i].end);
		for (a = obs[i].start; a < obs[i].end; a += 4096) {
			if (obs[i].kind == TIER_OBS_WRITTEN)
				g->rate[obs[i].pid - 1][a / 4096] += r;
			else if (obs[i].kind == TIER_OBS_ACCESSED)
				g->region[obs[i].pid - 1][a / 4096] += r;
			else
				g->other[obs[i].pid - 1][a / 4096] += 1;
		}
	}
}

static struct tier_linux_addr_obs by_obs(pid_t pid, uint64_t first, uint64_t nr, uint16_t kind,
					 uint32_t count, uint32_t max, uint32_t interval_us)
{
	return (struct tier_linux_addr_obs){ .pid = pid, .start = first * 4096,
					     .end = (first + nr) * 4096, .kind = kind,
					     .count = count, .max = max,
					     .interval_us = interval_us };
}

static uint32_t iv_of(double rate)
{
	return (uint32_t)(2 * M_LN2 / rate * 1e6);
}

/* Written runs pass whole; each region goes on with its rate less what
 * the written pages under it stand for, spread over its pages (nothing
 * left: count 0); an idle region, one with nothing written under it, and
 * another process's runs change nothing; standing estimates count as
 * written; other kinds pass. */
static void test_obs_merge(void **state)
{
	static struct merge_got g;
	struct tier_linux_addr_obs acc[4], wr[5];
	double wsum[4] = { 0 }, d, h;
	size_t i;

	(void)state;
	memset(&g, 0, sizeof(g));
	/* pid 1: [16, 32) at 10 of 20 checks in 100 ms (138.6/s), [32, 48)
	 * seen in none, [64, 80) at 138.6/s; pid 2: [0, 64) hot (20 of 20). */
	acc[0] = by_obs(1, 16, 16, TIER_OBS_ACCESSED, 10, 20, 100000);
	acc[1] = by_obs(1, 32, 16, TIER_OBS_ACCESSED, 0, 20, 100000);
	acc[2] = by_obs(1, 64, 16, TIER_OBS_ACCESSED, 10, 20, 100000);
	acc[3] = by_obs(2, 0, 64, TIER_OBS_ACCESSED, 20, 20, 100000);
	d = tier__obs_rate(&acc[0]);
	h = tier__obs_rate(&acc[3]);
	assert_true(fabs(d - 138.63) < 0.01);
	assert_true(h > 700);
	/* pid 1: 50/s over [28, 40), 500/s over [64, 72), 50/s over
	 * [100, 104) (no region), a sample; pid 2: 500/s over [60, 70) and
	 * a standing 500/s over [0, 4). */
	wr[0] = by_obs(1, 28, 12, TIER_OBS_WRITTEN, 1, 2, iv_of(50));
	wr[1] = by_obs(1, 64, 8, TIER_OBS_WRITTEN, 1, 2, iv_of(500));
	wr[2] = by_obs(1, 100, 4, TIER_OBS_WRITTEN, 1, 2, iv_of(50));
	wr[3] = by_obs(1, 200, 1, TIER_OBS_SAMPLE, 1, 0, 0);
	wr[4] = by_obs(2, 60, 10, TIER_OBS_WRITTEN, 1, 2, iv_of(500));
	/* In two batches, as soft-dirty's thread hands them. */
	tier__obs_written(acc, 4, wsum, wr, 4, merge_sink, &g);
	tier__obs_written(acc, 4, wsum, wr + 4, 1, merge_sink, &g);
	wr[0] = by_obs(2, 0, 4, TIER_OBS_WRITTEN, 1, 2, iv_of(500));
	wr[0].write = TIER_OBS_STANDING;
	tier__obs_written(acc, 4, wsum, wr, 1, merge_sink, &g);
	tier__obs_rest(acc, 4, wsum, merge_sink, &g);
	/* Written: whole, wherever they lie. */
	assert_true(fabs(g.rate[0][28] - 50) < 0.1 && fabs(g.rate[0][39] - 50) < 0.1);
	assert_true(fabs(g.rate[0][64] - 500) < 0.5 && fabs(g.rate[0][71] - 500) < 0.5);
	assert_true(fabs(g.rate[0][100] - 50) < 0.1);
	assert_true(g.rate[0][27] == 0 && g.rate[0][40] == 0 && g.rate[0][72] == 0);
	assert_true(fabs(g.rate[1][0] - 500) < 0.5 && fabs(g.rate[1][69] - 500) < 0.5);
	assert_true(g.other[0][200] == 1);
	/* [16, 32): 4 pages written at 50/s explain 12.5/s of its 138.6/s
	 * a page: every page of it, written or not, goes on at 126.1/s. */
	for (i = 16; i < 32; i++)
		assert_true(fabs(g.region[0][i] - (d - 12.5)) < 0.01 * d);
	/* [32, 48) idle: nothing, written or not; [64, 80): half its pages
	 * at 500/s explain more than its 138.6/s: nothing left. */
	for (i = 32; i < 48; i++)
		assert_true(g.region[0][i] == 0);
	for (i = 64; i < 80; i++)
		assert_true(g.region[0][i] == 0);
	/* pid 2's [0, 64): 4 pages at 500/s and 4 standing at 500/s. */
	for (i = 0; i < 64; i++)
		assert_true(fabs(g.region[1][i] - (h - 8 * 500.0 / 64)) < 0.01 * h);
	assert_true(g.region[1][64] == 0);
	/* Five written and a sample, as handed; four regions. */
	assert_int_equal(g.n, 10);
}

/* Held regions: pid's lukewarm ones (under half their checks) at no more
 * than the rate given; hot, idle, slow and other processes' as they are. */
static void test_obs_hold(void **state)
{
	struct tier_linux_addr_obs acc[5], was[5];
	size_t i;

	(void)state;
	acc[0] = by_obs(1, 0, 16, TIER_OBS_ACCESSED, 10, 20, 100000);		/* hot enough */
	acc[1] = by_obs(1, 16, 16, TIER_OBS_ACCESSED, 5, 20, 100000);		/* 57.5/s */
	acc[2] = by_obs(1, 32, 16, TIER_OBS_ACCESSED, 0, 20, 100000);		/* idle */
	acc[3] = by_obs(1, 48, 16, TIER_OBS_ACCESSED, 1, 20, 10000000);	/* 0.1/s */
	acc[4] = by_obs(2, 0, 16, TIER_OBS_ACCESSED, 5, 20, 100000);		/* pid 2 */
	memcpy(was, acc, sizeof(acc));
	assert_true(tier__obs_rate(&acc[1]) > 57 && tier__obs_rate(&acc[3]) < 0.11);
	tier__obs_hold(acc, 5, 1, 1.0);
	assert_true(fabs(tier__obs_rate(&acc[1]) - 1.0) < 1e-3);
	assert_true(acc[1].start == was[1].start && acc[1].end == was[1].end &&
		    acc[1].kind == TIER_OBS_ACCESSED);
	for (i = 0; i < 5; i++)
		if (i != 1)
			assert_memory_equal(&acc[i], &was[i], sizeof(acc[i]));
}

/* Random regions and written runs, enough regions to fill several
 * batches: written rates pass whole, and over every region what is
 * handed on adds up to the larger of the region's accesses and those of
 * the written pages under it. */
static void test_obs_merge_random(void **state)
{
	static struct merge_got g;
	static struct tier_linux_addr_obs acc[2 * BY_PAGES], wr[2 * BY_PAGES];
	static double wrate[BY_PIDS][BY_PAGES], wsum[2 * BY_PAGES];
	size_t nacc = 0, nwr = 0;
	unsigned seed, round;

	(void)state;
	for (round = 0; round < 20; round++) {
		pid_t pid;
		size_t k;

		seed = 12345 + round;
		memset(&g, 0, sizeof(g));
		memset(wrate, 0, sizeof(wrate));
		nacc = nwr = 0;
		for (pid = 1; pid <= BY_PIDS; pid++) {
			uint64_t p = (uint64_t)(rand_r(&seed) % 4);

			/* Regions in address order, with gaps, some idle. */
			while (p < BY_PAGES) {
				uint64_t len = 1 + (uint64_t)(rand_r(&seed) % 8);

				if (p + len > BY_PAGES)
					len = BY_PAGES - p;
				acc[nacc++] = by_obs(pid, p, len, TIER_OBS_ACCESSED,
						     (uint32_t)(rand_r(&seed) % 21), 20, 100000);
				p += len + (uint64_t)(rand_r(&seed) % 3);
			}
			/* Written runs, disjoint, 1/s to 1000/s. */
			p = (uint64_t)(rand_r(&seed) % 5);
			while (p < BY_PAGES) {
				uint64_t len = 1 + (uint64_t)(rand_r(&seed) % 20), i;
				double r = pow(10, (rand_r(&seed) % 3001) / 1000.0);

				if (p + len > BY_PAGES)
					len = BY_PAGES - p;
				wr[nwr] = by_obs(pid, p, len, TIER_OBS_WRITTEN, 1, 2, iv_of(r));
				for (i = p; i < p + len; i++)
					wrate[pid - 1][i] = tier__obs_rate(&wr[nwr]);
				nwr++;
				p += len + (uint64_t)(rand_r(&seed) % 4);
			}
		}
		memset(wsum, 0, nacc * sizeof(wsum[0]));
		tier__obs_written(acc, nacc, wsum, wr, nwr / 2, merge_sink, &g);
		tier__obs_written(acc, nacc, wsum, wr + nwr / 2, nwr - nwr / 2, merge_sink, &g);
		tier__obs_rest(acc, nacc, wsum, merge_sink, &g);
		assert_true(g.calls >= 4);	/* the regions in more than one batch */
		for (pid = 0; pid < BY_PIDS; pid++) {
			size_t i;

			for (i = 0; i < BY_PAGES; i++)
				if (fabs(g.rate[pid][i] - wrate[pid][i]) > 1e-9)
					fail_msg("round %u pid %d page %zu: written %.3f/s, handed on "
						 "%.3f/s", round, (int)pid + 1, i, wrate[pid][i],
						 g.rate[pid][i]);
		}
		for (k = 0; k < nacc; k++) {
			int q = acc[k].pid - 1;
			uint64_t i, first = acc[k].start / 4096, last = acc[k].end / 4096;
			double region = tier__obs_rate(&acc[k]) * (double)(last - first);
			double written = 0, handed = 0, want;

			for (i = first; i < last; i++) {
				written += wrate[q][i];
				handed += g.region[q][i] + g.rate[q][i];
				/* Spread evenly over the region's pages. */
				if (fabs(g.region[q][i] - g.region[q][first]) > 1e-6 * (1 + region))
					fail_msg("round %u region %zu: page %llu gets %.3f/s, its "
						 "first %.3f/s", round, k, (unsigned long long)i,
						 g.region[q][i], g.region[q][first]);
			}
			want = region > written ? region : written;
			if (fabs(handed - want) > 1e-3 * want + 1e-6)
				fail_msg("round %u region %zu: region %.3f, written %.3f accesses/s: "
					 "handed on %.3f, want %.3f", round, k, region, written,
					 handed, want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_damon_setup_and_collect),
		cmocka_unit_test(test_damon_keeps_cpu_share),
		cmocka_unit_test(test_damon_new_kdamond_converges),
		cmocka_unit_test(test_damon_first_snapshot_waits),
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
		cmocka_unit_test(test_maps_lines),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_idle_no_pfns),
		cmocka_unit_test(test_softdirty),
		cmocka_unit_test(test_waits),
		cmocka_unit_test(test_waits_cpu_clock),
		cmocka_unit_test(test_softdirty_writer_time),
		cmocka_unit_test(test_softdirty_rate_population),
		cmocka_unit_test(test_softdirty_picture_population),
		cmocka_unit_test(test_softdirty_waits),
		cmocka_unit_test(test_softdirty_blocked_writer),
		cmocka_unit_test(test_softdirty_fault_seen),
		cmocka_unit_test(test_softdirty_starved_threads),
		cmocka_unit_test(test_softdirty_slow_left_out),
		cmocka_unit_test(test_softdirty_picture_random),
		cmocka_unit_test(test_softdirty_fault_cost),
		cmocka_unit_test(test_obs_merge),
		cmocka_unit_test(test_obs_hold),
		cmocka_unit_test(test_obs_merge_random),
		cmocka_unit_test(test_perf_decode),
		cmocka_unit_test(test_perf_event_alias),
		cmocka_unit_test(test_perf_probe),
		cmocka_unit_test(test_budget_parts),
		cmocka_unit_test(test_step_share),
		cmocka_unit_test(test_others_average),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_kernel_tiering),
		cmocka_unit_test(test_guard_take_and_give_back),
		cmocka_unit_test(test_guard_after_crash),
		cmocka_unit_test(test_guard_refuses),
		cmocka_unit_test(test_guard_keeps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
