/* test_linux_hint.c - the kernel's NUMA hint faults as a tracker reads
 * them: its passes and rates (hint_passes.c), the cover of a process's
 * ranges that DAMON's regions go by (damon+hint, obs_merge.c), and - with
 * real software events of this host's kernel on child processes - its
 * rings read while the steps pause, and the perf rings' bound and their
 * closing when threads exit (tracker_perf.c). The rest of the Linux
 * trackers: test_linux_trackers.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"
#include "linux_fixture.h"

/* ---- hint faults --------------------------------------------------------- */

#define HR (1ull << HINT_RANGE_SHIFT)	/* a range's bytes */

/* The obs in g for [start, end) of pid: its rate (-1: none). */
static double hint_rate_of(const struct got *g, pid_t pid, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->v[i].pid == pid && g->v[i].start == start && g->v[i].end == end) {
			assert_int_equal(g->v[i].kind, TIER_OBS_ACCESSED);
			assert_int_equal(g->v[i].write, TIER_OBS_STANDING);
			return tier__obs_rate(&g->v[i]);
		}
	return -1;
}

/* The estimates are handed by blocks of 64 pages that hold one: a run
 * of pages at one rate joins across a block's edge, a block between two
 * runs breaks them, and a page's estimate that lapsed stays lapsed when
 * its pass number (mod 256) comes round again. */
static void test_hint_passes_blocks(void **state)
{
	struct tier__hint_passes hp;
	struct got g = { .n = 0 };
	const uint64_t a = 32 * HR, t = 7000000;
	unsigned k;

	(void)state;
	tier__hint_passes_init(&hp);
	/* pass 1: pages 62-65 (blocks 0 and 1) at 10 ms, page 200 (block 3)
	 * at 10 ms: two runs */
	assert_int_equal(tier__hint_fault(&hp, 100, a + 202 * 4096, t), 0);
	for (k = 62; k <= 65; k++)
		assert_int_equal(tier__hint_fault(&hp, 100, a + k * 4096, t + 10000), 0);
	assert_int_equal(tier__hint_fault(&hp, 100, a + 200 * 4096, t + 10000), 0);
	tier__hint_passes_hand(&hp, sink, &g);
	assert_int_equal(g.n, 3);	/* page 202, 62-65, 200 */
	assert_float_equal(hint_rate_of(&g, 100, a + 62 * 4096, a + 66 * 4096), M_LN2 / 0.010,
			   1e-6);
	assert_float_equal(hint_rate_of(&g, 100, a + 200 * 4096, a + 201 * 4096), M_LN2 / 0.010,
			   1e-6);
	/* 256 passes on (page 202, of its block, faulting again at each), page 200's
	 * estimate lapsed and stays so; page 202's holds */
	for (k = 1; k <= 256; k++) {
		assert_int_equal(tier__hint_fault(&hp, 100, a + 202 * 4096, t + k * 1000000), 0);
		if (k == 3 || k == 256) {
			g.n = 0;
			tier__hint_passes_hand(&hp, sink, &g);
			assert_int_equal(g.n, 1);
			assert_true(hint_rate_of(&g, 100, a + 200 * 4096, a + 201 * 4096) < 0);
			assert_true(hint_rate_of(&g, 100, a + 202 * 4096, a + 203 * 4096) > 0);
		}
	}
	tier__hint_passes_release(&hp);
}

/* The kernel's passes told apart per range by a page faulting again; a
 * fault's latency from its pass's start rates it at ln 2 over it; an
 * estimate holds for its pass and the next; a slow one is left out. */
static void test_hint_passes(void **state)
{
	struct tier__hint_passes hp;
	struct got g = { .n = 0 };
	const uint64_t a = 16 * HR, t = 5000000;	/* a range's start; the first fault */
	const pid_t keep[] = { 101 };
	uint64_t e;

	(void)state;
	tier__hint_passes_init(&hp);
	assert_false(tier__hint_passes_read(&hp, 100, t));
	/* Pass 1: page 0 at once, page 8 after 10 ms, pages 16 and 17 after
	 * 100 ms, page 1 after 500 ms. */
	assert_int_equal(tier__hint_fault(&hp, 100, a, t), 0);
	assert_int_equal(tier__hint_fault(&hp, 100, a + 8 * 4096 + 123, t + 10000), 0);
	assert_int_equal(tier__hint_fault(&hp, 100, a + 16 * 4096, t + 100000), 0);
	assert_int_equal(tier__hint_fault(&hp, 100, a + 17 * 4096, t + 100400), 0);
	assert_int_equal(tier__hint_fault(&hp, 100, a + 1 * 4096, t + 500000), 0);
	tier__hint_passes_hand(&hp, sink, &g);
	assert_int_equal(g.n, 3);
	/* ln 2 over at least 1 ms; over 10 ms; 16 and 17 one run at 100 ms */
	assert_float_equal(hint_rate_of(&g, 100, a, a + 4096), M_LN2 / 0.001, 1e-6);
	assert_float_equal(hint_rate_of(&g, 100, a + 8 * 4096, a + 9 * 4096), M_LN2 / 0.010, 1e-6);
	assert_float_equal(hint_rate_of(&g, 100, a + 16 * 4096, a + 18 * 4096), M_LN2 / 0.100,
			   1e-6);
	/* 1.39/s: under HINT_MIN_RATE, left out */
	assert_true(hint_rate_of(&g, 100, a + 4096, a + 2 * 4096) < 0);
	/* The first pass is over HINT_FIRST_PASS_US after the first fault. */
	assert_false(tier__hint_passes_read(&hp, 100, t + HINT_FIRST_PASS_US - 1));
	assert_true(tier__hint_passes_read(&hp, 100, t + HINT_FIRST_PASS_US));
	assert_false(tier__hint_passes_read(&hp, 101, t + HINT_FIRST_PASS_US));
	/* One pass: the kernel's scans do not cover the range yet. */
	assert_false(tier__hint_passes_covers(&hp, 100, a, a + HR, &e));
	assert_int_equal(e, a + HR);
	/* Page 0 faults again 1.5 s later: the range's pass 2 begins; page
	 * 8 keeps pass 1's estimate, page 0 has its new one (20 ms). */
	assert_int_equal(tier__hint_fault(&hp, 100, a + 100, t + 1500000), 0);
	/* ... and the range is covered, to its end; the next one is not,
	 * nor another process's range. */
	assert_true(tier__hint_passes_covers(&hp, 100, a + 4096, a + 3 * HR, &e));
	assert_int_equal(e, a + HR);
	assert_false(tier__hint_passes_covers(&hp, 100, a + HR, a + 3 * HR, &e));
	assert_int_equal(e, a + 3 * HR);
	assert_false(tier__hint_passes_covers(&hp, 101, a, a + HR, &e));
	/* Below it, not covered up to it. */
	assert_false(tier__hint_passes_covers(&hp, 100, 4096, a + 2 * HR, &e));
	assert_int_equal(e, a);
	assert_true(tier__hint_passes_covers(&hp, 100, a + 8192, a + 12288, &e));
	assert_int_equal(e, a + 12288);
	assert_int_equal(tier__hint_fault(&hp, 100, a + 2 * 4096, t + 1520000), 0);
	g.n = 0;
	tier__hint_passes_hand(&hp, sink, &g);
	assert_float_equal(hint_rate_of(&g, 100, a + 8 * 4096, a + 9 * 4096), M_LN2 / 0.010, 1e-6);
	assert_float_equal(hint_rate_of(&g, 100, a + 2 * 4096, a + 3 * 4096), M_LN2 / 0.020, 1e-6);
	/* Another range has passes of its own: its first fault starts one. */
	assert_int_equal(tier__hint_fault(&hp, 100, a + HR + 4096, t + 1600000), 0);
	/* Pass 3: page 8, not seen in pass 2, loses its estimate. */
	assert_int_equal(tier__hint_fault(&hp, 100, a, t + 3000000), 0);
	g.n = 0;
	tier__hint_passes_hand(&hp, sink, &g);
	assert_true(hint_rate_of(&g, 100, a + 8 * 4096, a + 9 * 4096) < 0);
	assert_float_equal(hint_rate_of(&g, 100, a, a + 4096), M_LN2 / 0.001, 1e-6);
	assert_float_equal(hint_rate_of(&g, 100, a + 2 * 4096, a + 3 * 4096), M_LN2 / 0.020, 1e-6);
	assert_float_equal(hint_rate_of(&g, 100, a + HR + 4096, a + HR + 2 * 4096),
			   M_LN2 / 0.001, 1e-6);
	assert_int_equal(hp.faults, 9);
	/* A process no longer watched: its ranges and its first pass go. */
	tier__hint_passes_drop(&hp, keep, 1);
	g.n = 0;
	tier__hint_passes_hand(&hp, sink, &g);
	assert_int_equal(g.n, 0);
	assert_false(tier__hint_passes_read(&hp, 100, t + 10000000));
	/* ... and it is new again if it comes back. */
	assert_int_equal(tier__hint_fault(&hp, 100, a + 8 * 4096, t + 4000000), 0);
	g.n = 0;
	tier__hint_passes_hand(&hp, sink, &g);
	assert_float_equal(hint_rate_of(&g, 100, a + 8 * 4096, a + 9 * 4096), M_LN2 / 0.001, 1e-6);
	tier__hint_passes_release(&hp);
}

/* Many ranges of many processes: the table grows and finds each again. */
static void test_hint_passes_many(void **state)
{
	struct tier__hint_passes hp;
	struct got g = { .n = 0 };
	pid_t keep[8];
	uint64_t e;
	int p, r;

	(void)state;
	tier__hint_passes_init(&hp);
	for (p = 0; p < 16; p++)
		for (r = 0; r < 12; r++)
			assert_int_equal(tier__hint_fault(&hp, 200 + p, (uint64_t)r * HR, 1000000), 0);
	for (p = 0; p < 16; p++)
		for (r = 0; r < 12; r++)	/* page 0 again: pass 2 of each */
			assert_int_equal(tier__hint_fault(&hp, 200 + p, (uint64_t)r * HR, 1005000), 0);
	assert_int_equal(hp.n, 192);
	/* Twelve ranges covered in a row: one run; none beyond them. */
	assert_true(tier__hint_passes_covers(&hp, 203, 4096, 20 * HR, &e));
	assert_int_equal(e, 12 * HR);
	assert_false(tier__hint_passes_covers(&hp, 203, 12 * HR, 20 * HR, &e));
	assert_int_equal(e, 20 * HR);
	/* Not covered up to the next covered range, however far the end
	 * (a region to the top of the address space) - or to the end. */
	assert_true(tier__hint_passes_covers(&hp, 203, 0, UINT64_MAX, &e));
	assert_int_equal(e, 12 * HR);
	assert_false(tier__hint_passes_covers(&hp, 203, 12 * HR, UINT64_MAX - 4095, &e));
	assert_int_equal(e, UINT64_MAX - 4095);
	assert_false(tier__hint_passes_covers(&hp, 999, 0, 40 * HR, &e));
	assert_int_equal(e, 40 * HR);
	tier__hint_passes_hand(&hp, sink, &g);
	assert_int_equal(g.n, 192);	/* page 0 of each */
	for (p = 0; p < 8; p++)
		keep[p] = 200 + 2 * p;
	tier__hint_passes_drop(&hp, keep, 8);
	assert_int_equal(hp.n, 96);
	for (p = 0; p < 8; p++)
		assert_int_equal(tier__hint_fault(&hp, keep[p], 4096, 2000000), 0);
	assert_int_equal(hp.n, 96);	/* found again, not added */
	tier__hint_passes_release(&hp);
}

/* A child that takes n x 4,096 minor faults (16 MiB written, then
 * dropped, n times) for each byte n read from go, a byte to done after. */
static pid_t fault_child(int *go, int *done)
{
	int a[2], b[2];
	pid_t pid;

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		const size_t len = 4096 * 4096;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned char n;

		close(a[1]);
		close(b[0]);
		if (m == MAP_FAILED)
			_exit(1);
		while (read(a[0], &n, 1) == 1) {
			size_t i;

			for (; n; n--) {
				for (i = 0; i < len; i += 4096)
					m[i] = 1;
				madvise(m, len, MADV_DONTNEED);
			}
			if (write(b[1], &n, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	*go = a[1];
	*done = b[0];
	return pid;
}

/* Has the child take n x 4,096 faults and waits for them. */
static void child_faults(int go, int done, unsigned char n)
{
	assert_int_equal(write(go, &n, 1), 1);
	assert_int_equal(read(done, &n, 1), 1);
}

/* Two batches of 81,920 faults, more than a thread's ring holds (4 MiB of
 * 32-byte samples: 131,072) together, then a collect, 4,096 more and
 * another: with an upkeep between the two batches (the steps pausing)
 * every fault is read; read at the collects alone, the kernel drops what
 * found the ring full, and says so in the ring once there is room again
 * (the second collect). Returns the samples dropped, and the faults read
 * in *faults. Skips where perf's events cannot be opened. */
static uint64_t hint_two_batches(bool upkeep, uint64_t *faults)
{
	struct tier_linux_ctx ctx = { .sysfs_root = "/sys", .procfs_root = "/proc" };
	struct tier_linux_tracker_stats st;
	struct tier_err err = { "" };
	struct got g = { .n = 0 };
	int go, done, status;
	pid_t pid = fault_child(&go, &done);
	void *priv;

	assert_int_equal(tier__linux_tracker_hint.create(&ctx, 100000, &priv, &err), 0);
	if (tier__linux_tracker_hint.set_targets(priv, &pid, 1, &err)) {
		tier__linux_tracker_hint.destroy(priv);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		print_message("no perf events here: %s\n", err.msg);
		skip();
	}
	child_faults(go, done, 20);
	if (upkeep)
		tier__linux_tracker_hint.maintain(priv);
	child_faults(go, done, 20);
	assert_int_equal(tier__linux_tracker_hint.collect(priv, sink, &g, &err), 0);
	child_faults(go, done, 1);
	g.n = 0;
	assert_int_equal(tier__linux_tracker_hint.collect(priv, sink, &g, &err), 0);
	tier__linux_tracker_hint.stats(priv, &st);
	close(go);
	close(done);
	waitpid(pid, &status, 0);
	tier__linux_tracker_hint.destroy(priv);
	*faults = st.workload_faults;
	return st.dropped;
}

static void test_hint_drained_at_upkeep(void **state)
{
	uint64_t faults, dropped;

	(void)state;
	assert_int_equal(hint_two_batches(true, &faults), 0);
	assert_true(faults >= 41 * 4096);
	print_message("with an upkeep between: %llu faults read, none dropped\n",
		      (unsigned long long)faults);
	dropped = hint_two_batches(false, &faults);
	print_message("at the collects alone: %llu faults read, %llu dropped\n",
		      (unsigned long long)faults, (unsigned long long)dropped);
	assert_true(dropped > 0);
	assert_true(faults < 41 * 4096);
}

/* ---- perf rings: their bound, and threads that exit --------------------- */

static int ring_quit_fd;	/* the child's threads read a byte each from it, then exit */

static void *ring_thread(void *arg)
{
	char c;

	(void)arg;
	if (read(ring_quit_fd, &c, 1) != 1)
		return NULL;
	return NULL;
}

/* A child of 1 + nr threads, the nr waiting for a byte each on *quit. */
static pid_t threads_child(int nr, int *quit)
{
	int q[2], ready[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(q), 0);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		pthread_t th;
		int i;

		close(q[1]);
		close(ready[0]);
		ring_quit_fd = q[0];
		for (i = 0; i < nr; i++)
			if (pthread_create(&th, NULL, ring_thread, NULL))
				_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(q[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*quit = q[1];
	return pid;
}

/* The threads /proc lists for pid. */
static int nr_tasks(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Rings for 1 + 6 threads within a bound of two full ones: the first two
 * full, the rest of TIER__PERF_MIN_PAGES; when the 6 exit their rings
 * close at the next look, and when the process goes, the last. */
static void test_perf_rings_bounded_and_pruned(void **state)
{
	struct tier__perf_rings rs = { .data_pages = 64 };
	struct perf_event_attr attr;
	struct tier_err err = { "" };
	size_t page_sz = (size_t)sysconf(_SC_PAGESIZE), i, full = 0;
	uint64_t last = 0;
	int quit, status, k;
	pid_t pid = threads_child(6, &quit);

	(void)state;
	rs.max_bytes = 2 * 64 * page_sz;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
	if (tier__perf_follow_threads(&rs, "/proc", &pid, 1, &attr, &last, &err)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		tier__perf_rings_free(&rs);
		print_message("no perf events here: %s\n", err.msg);
		skip();
	}
	assert_int_equal(rs.n, 7);
	for (i = 0; i < rs.n; i++) {
		assert_true(rs.v[i].data_pages == 64 || rs.v[i].data_pages == TIER__PERF_MIN_PAGES);
		full += rs.v[i].data_pages == 64;
	}
	assert_int_equal(full, 2);
	assert_int_equal(rs.bytes, (2 * 64 + 5 * TIER__PERF_MIN_PAGES) * page_sz);
	/* The 6 exit: at the next look (not before a second) their rings go. */
	assert_int_equal(write(quit, "qqqqqq", 6), 6);
	for (k = 0; k < 200 && nr_tasks(pid) > 1; k++)
		usleep(10000);
	assert_int_equal(nr_tasks(pid), 1);
	assert_int_equal(tier__perf_follow_threads(&rs, "/proc", &pid, 1, &attr, &last, &err), 0);
	assert_int_equal(rs.n, 7);
	last = 0;
	assert_int_equal(tier__perf_follow_threads(&rs, "/proc", &pid, 1, &attr, &last, &err), 0);
	assert_int_equal(rs.n, 1);
	assert_int_equal(rs.v[0].tid, pid);
	assert_int_equal(rs.bytes, rs.v[0].data_pages * page_sz);
	/* The process gone: its last ring too. */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	last = 0;
	assert_int_equal(tier__perf_follow_threads(&rs, "/proc", &pid, 1, &attr, &last, &err), 0);
	assert_int_equal(rs.n, 0);
	assert_int_equal(rs.bytes, 0);
	close(quit);
	tier__perf_rings_free(&rs);
}

/* Pages 0-1 on tier 0, 2-5 on tier 1, the rest of no known tier. */
static void tiers_fake(void *arg, pid_t pid, uint64_t start, uint64_t end,
		       void (*fn)(void *fctx, uint64_t start, uint64_t end, unsigned tier), void *fctx)
{
	static const uint64_t cut[] = { 0, 2 * 4096, 6 * 4096, UINT64_MAX };
	static const unsigned tier[] = { 0, 1, TIER_LINUX_TIER_NONE };
	int k;

	(void)arg;
	(void)pid;
	for (k = 0; k < 3; k++) {
		uint64_t a = start > cut[k] ? start : cut[k], e = end < cut[k + 1] ? end : cut[k + 1];

		if (a < e)
			fn(fctx, a, e, tier[k]);
	}
}

/* Process 100's pages are covered below 7 pages; 101's none. */
static bool covered_100(void *arg, pid_t pid, uint64_t start, uint64_t end, uint64_t *run_end)
{
	(void)arg;
	if (pid == 100 && start < 7 * 4096) {
		*run_end = end < 7 * 4096 ? end : 7 * 4096;
		return true;
	}
	*run_end = end;
	return false;
}

/* damon+hint: DAMON's regions go on only on the top tier (or where the
 * tier is not known) where the hint faults cover the pages; elsewhere
 * whole. */
static void test_obs_top_tier(void **state)
{
	struct tier_linux_addr_obs acc[2] = {
		{ .pid = 100, .start = 0, .end = 8 * 4096, .kind = TIER_OBS_ACCESSED, .count = 3,
		  .max = 20, .interval_us = 100000 },
		{ .pid = 101, .start = 0, .end = 4 * 4096, .kind = TIER_OBS_ACCESSED, .count = 1,
		  .max = 20, .interval_us = 100000 },
	};
	struct tier_linux_ctx ctx = { 0 };
	struct got g = { .n = 0 };

	(void)state;
	ctx.tiers = tiers_fake;
	tier__obs_top_tier(acc, 2, &ctx, covered_100, NULL, sink, &g);
	assert_int_equal(g.n, 4);
	expect_obs(&g.v[0], 100, 0, 2 * 4096, TIER_OBS_ACCESSED, 3, 20);
	/* pages 2-5 on tier 1, covered: left to the hint faults */
	expect_obs(&g.v[1], 100, 6 * 4096, 7 * 4096, TIER_OBS_ACCESSED, 3, 20);
	/* page 7 not covered: as DAMON read it */
	expect_obs(&g.v[2], 100, 7 * 4096, 8 * 4096, TIER_OBS_ACCESSED, 3, 20);
	expect_obs(&g.v[3], 101, 0, 4 * 4096, TIER_OBS_ACCESSED, 1, 20);
	assert_int_equal(g.v[0].interval_us, 100000);
	/* Without the world's tiers: all of them whole. */
	ctx.tiers = NULL;
	g.n = 0;
	tier__obs_top_tier(acc, 2, &ctx, covered_100, NULL, sink, &g);
	assert_int_equal(g.n, 2);
	expect_obs(&g.v[0], 100, 0, 8 * 4096, TIER_OBS_ACCESSED, 3, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hint_passes),
		cmocka_unit_test(test_hint_passes_blocks),
		cmocka_unit_test(test_hint_passes_many),
		cmocka_unit_test(test_hint_drained_at_upkeep),
		cmocka_unit_test(test_perf_rings_bounded_and_pruned),
		cmocka_unit_test(test_obs_top_tier),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
