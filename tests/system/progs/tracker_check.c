/* tracker_check.c - the Linux trackers and the kernel-tiering guard on a
 * real kernel (run in the test guest by tests/system/trackers.sh; needs
 * root). Prints TAP.
 *
 * The children share one address layout: child A keeps writing a 4 MiB
 * hot range and leaves a 32 MiB cold range (touched once) alone; child B
 * touched its own ranges at the same addresses once and sleeps. Between
 * the two ranges lies a 92 MiB PROT_NONE reservation, so that DAMON's
 * regions cannot smear the hot range over the cold one, and after the
 * cold range another, so that what the process maps next (its
 * libraries, used all the time) lies far from it too. Checked:
 *   - DAMON (both children as targets): A's hot range reported accessed,
 *     its cold range not, and nothing of B's (same addresses: a region
 *     attributed to the wrong process would show);
 *   - soft-dirty (after its first clear): A's hot range written, its cold
 *     range and B's ranges not;
 *   - DAMON and soft-dirty together (damon+softdirty) on child C, which
 *     keeps writing one page in SCATTER_STRIDE of its cold range: the
 *     written pages are resolved one by one (WRITTEN observations on them,
 *     not on the pages between) while DAMON's regions report the range
 *     accessed;
 *   - tier_linux_tracker_pick() chooses DAMON and soft-dirty together and
 *     explains why idle page tracking and perf sampling are unavailable;
 *   - kernel tiering switched off and restored (numa_balancing 2 -> 0 -> 2,
 *     demotion_enabled true -> false -> true);
 *   - where the kernel runs damon_stat (Debian's 7.x kernels): while it is
 *     on, pick(auto) falls back to soft-dirty and says why; the guard
 *     (kernel_guard.h) switches it off and DAMON runs; a kdamond left
 *     running by a tierd that "died" (the guard's state file, no exit
 *     path) is stopped by the next start, and damon_stat is on again.
 *
 * Usage: tracker_check [SECONDS]   (DAMON monitoring time, default 12)
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/damon_modules.h"
#include "backend/linux/kernel_guard.h"
#include "backend/linux/kernel_tiering.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define HOT_SZ		(4ul << 20)
#define GAP_SZ		(92ul << 20)
#define COLD_SZ		(32ul << 20)
#define TAIL_SZ		GAP_SZ
#define AREA_SZ		(HOT_SZ + GAP_SZ + COLD_SZ + TAIL_SZ)
#define PAGE		4096ul
#define SCRATCH_SZ	(64 * PAGE)
#define SCATTER_STRIDE	8	/* child C writes one page in 8 of its cold range */

static unsigned nr_tests, nr_failed;

static void ok(int pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ok(int pass, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %u - ", pass ? "" : "not ", ++nr_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!pass)
		nr_failed++;
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ---- the children ------------------------------------------------------- */

/* Maps hot and cold at fixed places of a PROT_NONE reservation at base. */
static int map_area(char *base)
{
	if (mmap(base, AREA_SZ, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE |
		 MAP_NORESERVE, -1, 0) != base)
		return -1;
	if (mmap(base, HOT_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) != base)
		return -1;
	if (mmap(base + HOT_SZ + GAP_SZ, COLD_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != base + HOT_SZ + GAP_SZ)
		return -1;
	/* No huge pages: the checks count 4 KiB pages. */
	madvise(base, HOT_SZ, MADV_NOHUGEPAGE);
	madvise(base + HOT_SZ + GAP_SZ, COLD_SZ, MADV_NOHUGEPAGE);
	return 0;
}

static void touch_all(char *p, size_t sz, char v)
{
	size_t i;

	for (i = 0; i < sz; i += PAGE)
		((volatile char *)p)[i] = v;
}

/* Writes one page in SCATTER_STRIDE of [p, p + sz). */
static void touch_scattered(char *p, size_t sz, char v)
{
	size_t i;

	for (i = 0; i < sz; i += SCATTER_STRIDE * PAGE)
		((volatile char *)p)[i] = v;
}

/* hot 1: keep writing the hot range; hot 2: keep writing one page in
 * SCATTER_STRIDE of the cold range; 0: sleep. Writes one byte to fd when
 * set up. */
static pid_t spawn_child(char *base, int hot)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *scratch;

		close(fds[0]);
		/* The area first, in place of the parent's reservation. */
		munmap(base, AREA_SZ);
		if (map_area(base))
			_exit(1);
		scratch = mmap(NULL, SCRATCH_SZ, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (scratch == MAP_FAILED)
			_exit(1);
		touch_all(scratch, SCRATCH_SZ, 1);
		touch_all(base, HOT_SZ, 1);
		touch_all(base + HOT_SZ + GAP_SZ, COLD_SZ, 1);
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		close(fds[1]);
		for (char v = 2;; v++) {
			if (!hot) {
				pause();
				continue;
			}
			/* QEMU's TCG sets a PTE's accessed bit only when it
			 * fills its (large) software TLB, and clearing the bit
			 * (DAMON does, like the kernel's aging) flushes no TLB
			 * on x86: a process that keeps its TLB entries - one
			 * that is never switched out for another process, or
			 * sleeps into the idle task - shows no accesses at all
			 * to DAMON (measured in the guest: spinning, a run saw
			 * none in 6 windows in a row; sleeping 0.5 ms per pass,
			 * 4 windows of 10 saw any). Hardware TLBs
			 * hold ~1-2k entries and refill all the time. Changing
			 * the protection of a scratch mapping of more than 33
			 * pages flushes the whole TLB on x86 (above
			 * tlb_single_page_flush_ceiling), standing in for that
			 * without touching the ranges under test. */
			if (hot == 2)
				touch_scattered(base + HOT_SZ + GAP_SZ, COLD_SZ, v);
			else
				touch_all(base, HOT_SZ, v);
			mprotect(scratch, SCRATCH_SZ, PROT_READ);
			mprotect(scratch, SCRATCH_SZ, PROT_READ | PROT_WRITE);
		}
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1) {
		close(fds[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	close(fds[0]);
	return pid;
}

/* ---- what a tracker reported -------------------------------------------- */

struct range_score {
	pid_t pid;
	uint64_t start, end;
	uint64_t hit_bytes;	/* covered by observations with count > 0 */
	uint64_t seen_bytes;	/* covered by any observation */
	double rate_bytes;	/* sum of bytes x the rate they were reported at */
	uint64_t hit_lo, hit_hi; /* the span of the observations counted in hit_bytes */
};

struct scores {
	struct range_score r[4];
	size_t n;
	uint64_t nr_obs;
};

static void score_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct scores *s = ctx;
	size_t i, k;

	s->nr_obs += n;
	for (i = 0; i < n; i++) {
		for (k = 0; k < s->n; k++) {
			struct range_score *r = &s->r[k];
			uint64_t a = obs[i].start > r->start ? obs[i].start : r->start;
			uint64_t b = obs[i].end < r->end ? obs[i].end : r->end;

			if (obs[i].pid != r->pid || a >= b)
				continue;
			r->seen_bytes += b - a;
			if (obs[i].count > 0) {
				/* accesses/s as the policy reads a count of
				 * max checks over the interval */
				double m = obs[i].max ? obs[i].max : 1, f = obs[i].count / m;

				if (f > 1 - 0.5 / m)
					f = 1 - 0.5 / m;
				r->hit_bytes += b - a;
				if (!r->hit_hi || obs[i].start < r->hit_lo)
					r->hit_lo = obs[i].start;
				if (obs[i].end > r->hit_hi)
					r->hit_hi = obs[i].end;
				r->rate_bytes += (double)(b - a) * -log(1 - f) * m /
						 (obs[i].interval_us ? obs[i].interval_us / 1e6 : 1);
			}
		}
	}
}

static void scores_init(struct scores *s, pid_t a, pid_t b, char *base)
{
	uint64_t hot = (uint64_t)(uintptr_t)base, cold = hot + HOT_SZ + GAP_SZ;

	memset(s, 0, sizeof(*s));
	s->r[0] = (struct range_score){ .pid = a, .start = hot, .end = hot + HOT_SZ };
	s->r[1] = (struct range_score){ .pid = a, .start = cold, .end = cold + COLD_SZ };
	s->r[2] = (struct range_score){ .pid = b, .start = hot, .end = hot + HOT_SZ };
	s->r[3] = (struct range_score){ .pid = b, .start = cold, .end = cold + COLD_SZ };
	s->n = 4;
}

static double frac(const struct range_score *r)
{
	return (double)r->hit_bytes / (double)(r->end - r->start);
}

/* ---- checks ------------------------------------------------------------- */

static const struct tier_linux_ctx live = {
	.sysfs_root = "/sys",
	.procfs_root = "/proc",
	.debugfs_root = "/sys/kernel/debug",
};

static int read_str(const char *path, char *buf, size_t sz)
{
	return tier__read_line(path, buf, sz, NULL);
}

#define STATE_FILE "/tmp/tracker_check/state"

static struct tier_linux_guard guard;
static bool guard_on;	/* damon_stat switched off by the guard */

static void say_diag(void *arg, int level, const char *msg)
{
	(void)arg;
	diag("guard (level %d): %s", level, msg);
}

/* Where damon_stat holds DAMON: the fallback while it does, then the
 * guard takes DAMON over (as tierd does by default). */
static void check_damon_stat_taken(void)
{
	const struct tier_linux_tracker_ops *ops = NULL;
	struct tier_err err = { "" };
	bool present, enabled;
	char why[2048], val[8] = "";
	int ret;

	if (tier_linux_damon_module_read(&live, "damon_stat", &present, &enabled, &err) ||
	    !present || !enabled) {
		diag("damon_stat: %s on this kernel", present ? "off" : "absent");
		return;
	}
	ret = tier_linux_tracker_pick(&live, "auto", &ops, why, sizeof(why));
	ok(ret == 0 && ops && !strcmp(ops->name, "softdirty") &&
	   strstr(why, "damon_stat is enabled and runs DAMON exclusively"),
	   "damon_stat on: pick(auto) falls back to softdirty and says why (got %s)",
	   ops ? ops->name : "none");
	ret = tier_linux_guard_open(&guard, &live, STATE_FILE, say_diag, NULL, &err);
	if (!ret)
		ret = tier_linux_guard_damon_stat(&guard, true, &err);
	read_str("/sys/module/damon_stat/parameters/enabled", val, sizeof(val));
	ok(ret == 0 && !strcmp(val, "N"), "the guard switched damon_stat off (enabled=%s)%s%s",
	   val, ret ? ": " : "", ret ? err.msg : "");
	guard_on = ret == 0;
}

/* A kdamond started for tierd, then tierd "dies" (no destroy, no close):
 * the next start stops it and switches damon_stat on again. */
static void check_crash_leftovers(pid_t a)
{
	const struct tier_linux_tracker_ops *damon = tier_linux_tracker_find("damon");
	struct tier_linux_guard again;
	struct tier_err err = { "" };
	char path[256], st[32] = "", val[8] = "";
	unsigned idx = 0;
	pid_t kpid = 0;
	void *priv = NULL;
	int ret;

	if (!guard_on)
		return;
	ret = damon->create(&live, 1000000, &priv, &err);
	if (!ret)
		ret = damon->set_targets(priv, &a, 1, &err);
	if (!ret && !damon->kdamond(priv, &idx, &kpid))
		ret = -ESRCH;
	ok(ret == 0,
	   "crash: a kdamond runs for the tracker (kdamond %u, pid %d)%s%s", idx, (int)kpid,
	   ret ? ": " : "", ret ? err.msg : "");
	if (ret)
		return;
	tier_linux_guard_kdamond(&guard, true, idx, kpid, &err);
	/* Dead here. The next start: */
	ret = tier_linux_guard_open(&again, &live, STATE_FILE, say_diag, NULL, &err);
	snprintf(path, sizeof(path), "/sys/kernel/mm/damon/admin/kdamonds/%u/state", idx);
	read_str(path, st, sizeof(st));
	read_str("/sys/module/damon_stat/parameters/enabled", val, sizeof(val));
	ok(ret == 0 && !strcmp(st, "off"), "crash: the next start stopped the kdamond left "
	   "running (state %s)%s%s", st, ret ? ": " : "", ret ? err.msg : "");
	ok(!strcmp(val, "Y"), "crash: and switched damon_stat on again (enabled=%s)", val);
	ok(access(STATE_FILE, F_OK) != 0, "crash: and removed the state file");
	damon->destroy(priv);
	guard_on = false;
}

static void check_pick(void)
{
	const struct tier_linux_tracker_ops *ops = NULL;
	char why[2048], *line, *save = NULL;
	int ret;

	ret = tier_linux_tracker_pick(&live, "auto", &ops, why, sizeof(why));
	ok(ret == 0 && ops && !strcmp(ops->name, "damon+softdirty"),
	   "pick(auto) chooses damon+softdirty (got %s)", ops ? ops->name : "none");
	ok(strstr(why, "idle: ") && strstr(why, "CONFIG_IDLE_PAGE_TRACKING"),
	   "pick explains that idle page tracking is missing");
	ok(strstr(why, "perf: no PMU with memory-access samples") != NULL,
	   "pick explains that no PMU samples memory accesses");
	ok(!strstr(why, "DAMON") && !strstr(why, "softdirty"),
	   "damon and softdirty are not reported unavailable");
	for (line = strtok_r(why, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		diag("unavailable: %s", line);
}

static void check_kernel_tiering(void)
{
	struct tier_linux_kernel_tiering boot, kt, saved;
	struct tier_err err = { "" };
	char desc[256], nb[32] = "", dem[32] = "";
	int ret;

	ret = tier_linux_kernel_tiering_read(&live, &boot, &err);
	tier_linux_kernel_tiering_describe(&boot, desc, sizeof(desc));
	ok(ret == 0 && boot.has_numa_balancing && boot.has_demotion,
	   "kernel tiering read at boot: %s", ret ? err.msg : desc);
	/* Turn the kernel's own tiering on, as an operator might have. */
	tier__write_str("/proc/sys/kernel/numa_balancing", "2", NULL);
	tier__write_str("/sys/kernel/mm/numa/demotion_enabled", "true", NULL);
	ret = tier_linux_kernel_tiering_read(&live, &kt, &err);
	ok(!ret && kt.numa_balancing == 2 && kt.demotion_enabled &&
	   tier_linux_kernel_tiering_active(&kt), "kernel tiering on: numa_balancing=2, "
	   "demotion_enabled=true");

	ret = tier_linux_kernel_tiering_disable(&live, &saved, &err);
	read_str("/proc/sys/kernel/numa_balancing", nb, sizeof(nb));
	read_str("/sys/kernel/mm/numa/demotion_enabled", dem, sizeof(dem));
	ok(ret == 0 && !strcmp(nb, "0") && !strcmp(dem, "false"),
	   "disable: numa_balancing %s, demotion_enabled %s%s%s", nb, dem, ret ? ": " : "",
	   ret ? err.msg : "");
	ok(saved.numa_balancing == 2 && saved.demotion_enabled, "disable saved 2 and true");

	ret = tier_linux_kernel_tiering_restore(&live, &saved, &err);
	read_str("/proc/sys/kernel/numa_balancing", nb, sizeof(nb));
	read_str("/sys/kernel/mm/numa/demotion_enabled", dem, sizeof(dem));
	ok(ret == 0 && !strcmp(nb, "2") && !strcmp(dem, "true"),
	   "restore: numa_balancing %s, demotion_enabled %s", nb, dem);

	/* Leave the guest as it booted. */
	tier_linux_kernel_tiering_restore(&live, &boot, NULL);
}

static void check_damon(pid_t a, pid_t b, char *base, double seconds)
{
	const struct tier_linux_tracker_ops *damon = tier_linux_tracker_find("damon");
	const pid_t pids[] = { a, b };
	struct tier__damon_info info;
	struct tier_err err = { "" };
	struct scores last;
	double t0, wait_max = 0, hot_best = 0, cold_a_worst = 0, b_worst = 0;
	unsigned rounds = 0, late = 0, late_hot = 0, late_empty = 0, late_cold = 0;
	char path[256], st[32] = "", comm[64] = "";
	uint64_t kpid = 0;
	void *priv = NULL;
	int ret;

	ret = damon->create(&live, 1000000, &priv, &err);
	ok(ret == 0, "damon: create%s%s", ret ? ": " : "", ret ? err.msg : "");
	if (ret)
		return;
	tier__damon_info(priv, &info);
	diag("damon: kdamond %u%s, sample %llu us, aggregation %llu us, %s", info.kdamond,
	     info.grew ? " (added)" : "", (unsigned long long)info.sample_us,
	     (unsigned long long)info.aggr_us,
	     info.tracepoint ? "damon_aggregated tracepoint" :
	     info.per_target_schemes ? "tried_regions, a target filter per scheme" :
	     "tried_regions");
	ok(!info.tracepoint, "damon: this kernel has tried_regions (the tracepoint path is "
	   "covered by unit tests only)");
	ret = damon->set_targets(priv, pids, 2, &err);
	ok(ret == 0, "damon: set_targets(A, B)%s%s", ret ? ": " : "", ret ? err.msg : "");
	snprintf(path, sizeof(path), "/sys/kernel/mm/damon/admin/kdamonds/%u/state", info.kdamond);
	read_str(path, st, sizeof(st));
	ok(!strcmp(st, "on"), "damon: kdamond %u is on", info.kdamond);

	/* Collect once a second; the first seconds let the regions adapt.
	 * An empty snapshot says nothing (below): while fewer than 2 of the
	 * settled half came back with regions, go on, up to three times
	 * as long (4 of 5 came back empty in one full run, none in the
	 * next, with nothing else running on the host). */
	t0 = now_s();
	while (now_s() - t0 < seconds || (late < 2 && now_s() - t0 < 3.0 * seconds)) {
		double c0;

		sleep_s(1.0);
		scores_init(&last, a, b, base);
		c0 = now_s();
		ret = damon->collect(priv, score_sink, &last, &err);
		if (now_s() - c0 > wait_max)
			wait_max = now_s() - c0;
		if (ret) {
			ok(0, "damon: collect: %s", err.msg);
			break;
		}
		rounds++;
		diag("damon %4.1fs: %llu regions; A hot %3.0f%% accessed (%3.0f%% seen), A cold "
		     "%3.0f%%, B hot %3.0f%%, B cold %3.0f%%", now_s() - t0,
		     (unsigned long long)last.nr_obs, 100 * frac(&last.r[0]),
		     100.0 * (double)last.r[0].seen_bytes / HOT_SZ, 100 * frac(&last.r[1]),
		     100 * frac(&last.r[2]), 100 * frac(&last.r[3]));
		if (now_s() - t0 < seconds / 2)
			continue;
		/* The second half: regions have settled. A snapshot still
		 * empty after the tracker asked again (the kdamond had not
		 * updated it in time: a loaded host's emulated guest) says
		 * nothing of any range: not counted. */
		if (!last.nr_obs) {
			late_empty++;
			continue;
		}
		late++;
		if (frac(&last.r[0]) > hot_best)
			hot_best = frac(&last.r[0]);
		if (frac(&last.r[0]) >= 0.75)
			late_hot++;
		if (frac(&last.r[1]) > cold_a_worst)
			cold_a_worst = frac(&last.r[1]);
		if (frac(&last.r[1]) > 0.1)
			late_cold++;
		if (last.r[1].hit_bytes)
			diag("damon: A's cold range [%#llx, %#llx) overlapped by accessed "
			     "regions spanning [%#llx, %#llx)",
			     (unsigned long long)last.r[1].start, (unsigned long long)last.r[1].end,
			     (unsigned long long)last.r[1].hit_lo,
			     (unsigned long long)last.r[1].hit_hi);
		if (frac(&last.r[2]) > b_worst)
			b_worst = frac(&last.r[2]);
		if (frac(&last.r[3]) > b_worst)
			b_worst = frac(&last.r[3]);
	}
	tier__damon_info(priv, &info);
	diag("damon: %u collects, longest %.2f s, %llu empty snapshots asked again", rounds,
	     wait_max, (unsigned long long)info.empty_snapshots);
	ok(late >= 2, "damon: at least 2 collects with regions after the regions settled (%u; "
	   "%u empty)", late, late_empty);
	/* Region edges need not fall on the range's: most of it will do. */
	ok(hot_best >= 0.75, "damon: A's hot range reported accessed (best %.0f%% of it)",
	   100 * hot_best);
	ok(late_hot * 2 > late, "damon: ... in most collects (%u of %u)", late_hot, late);
	/* A region keeps the accesses of what it was merged with for a
	 * while, and edges move: a sid run saw 20% of the cold range
	 * reported accessed in one collect. A misattributed range
	 * would show in every collect. */
	ok(late_cold * 3 <= late, "damon: A's cold range not (over 10%% of it in %u of %u "
	   "collects)", late_cold, late);
	ok(cold_a_worst <= 0.5, "damon: ... and never most of it (worst %.0f%%)",
	   100 * cold_a_worst);
	ok(b_worst <= 0.2, "damon: nothing of B's ranges at the same addresses (worst %.0f%%)",
	   100 * b_worst);
	ok(wait_max < 2.0, "damon: collect() waits under 2 s (longest %.2f s)", wait_max);

	snprintf(path, sizeof(path), "/sys/kernel/mm/damon/admin/kdamonds/%u/pid", info.kdamond);
	tier_sysfs_read_u64(path, &kpid, NULL);
	damon->destroy(priv);
	/* The kernel thread exits right after "off"; give it a moment. */
	snprintf(path, sizeof(path), "/proc/%llu/comm", (unsigned long long)kpid);
	for (ret = 0; ret < 30 && !read_str(path, comm, sizeof(comm)); ret++)
		sleep_s(0.1);
	ret = read_str(path, comm, sizeof(comm));
	ok(kpid > 0 && ret != 0, "damon: destroy stops the kdamond (pid %llu%s%s)",
	   (unsigned long long)kpid, ret ? "" : ", still there: ", ret ? "" : comm);
	st[0] = '\0';
	read_str("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", st, sizeof(st));
	ok(!info.grew || (unsigned)atoi(st) == info.kdamond,
	   "damon: destroy gives back the kdamond it added (nr_kdamonds %s)", st);
}

static void check_softdirty(pid_t a, pid_t b, char *base)
{
	const struct tier_linux_tracker_ops *sd = tier_linux_tracker_find("softdirty");
	const pid_t pids[] = { a, b };
	struct tier_err err = { "" };
	struct tier_linux_tracker_stats st;
	struct scores s;
	void *priv = NULL;
	double rate, t_set, first_s = 0;
	int ret, round;

	ret = sd->probe(&live, &err);
	ok(ret == 0, "softdirty: probe%s%s", ret ? ": " : "", ret ? err.msg : "");
	{
		/* dearer than a plain store (nanoseconds) by far */
		uint64_t ns = tier__softdirty_calibrate(&live);

		ok(ns >= 100 && ns < 10000000, "softdirty: a write-protect fault measured at %llu ns",
		   (unsigned long long)ns);
	}
	ret = sd->create(&live, 1000000, &priv, &err);
	if (!ret)
		ret = sd->set_targets(priv, pids, 2, &err);
	t_set = now_s();
	ok(ret == 0, "softdirty: create and set_targets%s%s", ret ? ": " : "",
	   ret ? err.msg : "");
	if (ret)
		goto out;
	/* Rounds of at least 1 s (longer when the thread's CPU or the
	 * writer's faults ask for it: under TCG both are slow): clear, read
	 * 20 ms and 200 ms later and at the end; each collect hands over the
	 * picture: the pages written in the last round, or already in this
	 * one, with their rates. Each check covers two rounds' ends. */
	for (round = 1; round <= 2; round++) {
		uint64_t done;
		double t0 = now_s();

		sd->stats(priv, &st);
		done = st.rounds;
		scores_init(&s, a, b, base);
		/* Each collect hands over the tracker's whole picture: the
		 * last one counts. */
		do {
			static struct scores cur;

			sleep_s(0.1);
			scores_init(&cur, a, b, base);
			ret = sd->collect(priv, score_sink, &cur, &err);
			sd->stats(priv, &st);
			if (cur.nr_obs)
				s = cur;
			if (!first_s && s.r[0].hit_bytes)
				first_s = now_s() - t_set;
		} while (!ret && st.rounds < done + 2 && now_s() - t0 < 20);
		if (round == 1)
			/* The round without targets that began at create ends
			 * when they arrive: the first reads come 20 and 200 ms
			 * after, not a round (1 s) later. */
			ok(first_s > 0 && first_s < 0.7, "softdirty: first writes reported %.2f s "
			   "after set_targets", first_s);
		ok(ret == 0 && st.rounds >= done + 2, "softdirty: collect over round %d%s%s", round,
		   ret ? ": " : "", ret ? err.msg : "");
		rate = s.r[0].hit_bytes ? s.r[0].rate_bytes / (double)s.r[0].hit_bytes : 0;
		diag("softdirty: A hot %.1f%% written at %.1f/s, A cold %.1f%%, B hot "
		     "%.1f%%, B cold %.1f%% (round period %.1f s)", 100 * frac(&s.r[0]), rate,
		     100 * frac(&s.r[1]), 100 * frac(&s.r[2]), 100 * frac(&s.r[3]),
		     st.period_us / 1e6);
		ok(frac(&s.r[0]) >= 0.9, "softdirty %d: A's hot range written (%.1f%%)", round,
		   100 * frac(&s.r[0]));
		/* Written all the time, so first seen at the read 20 ms after
		 * the clear (35/s), or at 200 ms where a pass of the writer
		 * over its 1024 pages with a write-protect fault each takes
		 * longer than 20 ms (TCG: tens of microseconds a fault:
		 * 12.8/s); a page written once late in the round reads about
		 * ln(5 P) / P (1.6/s for P = 1 s). */
		ok(rate >= 3, "softdirty %d: ... as written often (%.1f/s estimated)", round,
		   rate);
		ok(frac(&s.r[1]) <= 0.01, "softdirty %d: A's cold range not written (%.1f%%)",
		   round, 100 * frac(&s.r[1]));
		ok(frac(&s.r[2]) <= 0.01 && frac(&s.r[3]) <= 0.01,
		   "softdirty %d: B's ranges not written (%.1f%%, %.1f%%)", round,
		   100 * frac(&s.r[2]), 100 * frac(&s.r[3]));
	}
	sd->stats(priv, &st);
	diag("softdirty: %llu rounds, period %.1f s, %llu write-protect faults of the watched "
	     "processes", (unsigned long long)st.rounds, st.period_us / 1e6,
	     (unsigned long long)st.workload_faults);
	/* The guest's kernels (6.12, 7.x) have PAGEMAP_SCAN (Linux 6.7):
	 * every read is one (three or four a round). */
	ok(st.scan_reads >= 3 * st.rounds,
	   "softdirty: reads by PAGEMAP_SCAN (%llu in %llu rounds)",
	   (unsigned long long)st.scan_reads, (unsigned long long)st.rounds);
	/* Every round after the targets arrived: one fault per hot page (the
	 * first round may have started before set_targets()). */
	ok(st.rounds >= 2 && st.workload_faults >= (st.rounds - 1) * (HOT_SZ / PAGE) * 9 / 10,
	   "softdirty: the faults it costs the writer are counted (%llu in %llu rounds)",
	   (unsigned long long)st.workload_faults, (unsigned long long)st.rounds);
out:
	if (priv)
		sd->destroy(priv);
}

/* Pages of C's cold range seen written, and whether DAMON saw it. */
struct scatter_seen {
	pid_t pid;
	uint64_t start;
	uint8_t written[COLD_SZ / PAGE];
	uint64_t accessed_obs;	/* DAMON's regions on the range */
};

static void scatter_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct scatter_seen *s = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t a = obs[i].start > s->start ? obs[i].start : s->start;
		uint64_t b = obs[i].end < s->start + COLD_SZ ? obs[i].end : s->start + COLD_SZ;

		if (obs[i].pid != s->pid || a >= b)
			continue;
		/* A region goes on with what its written pages leave of its
		 * accesses: nothing (count 0) where they explain them all. */
		if (obs[i].kind == TIER_OBS_ACCESSED)
			s->accessed_obs++;
		if (obs[i].kind != TIER_OBS_WRITTEN || !obs[i].count)
			continue;
		for (; a < b; a += PAGE)
			s->written[(a - s->start) / PAGE] = 1;
	}
}

/* C writes one page in SCATTER_STRIDE of its cold range: DAMON's regions,
 * one sampled address each, see the range lukewarm; the soft-dirty half
 * must name the written pages and only them. */
static void check_combo(pid_t c, char *base, double seconds)
{
	const struct tier_linux_tracker_ops *co = tier_linux_tracker_find("damon+softdirty");
	static struct scatter_seen s;
	struct tier_err err = { "" };
	struct tier_linux_tracker_stats st;
	size_t i, hot = 0, hot_seen = 0, cold = 0, cold_seen = 0;
	void *priv = NULL;
	double t0;
	int ret;

	ok(co != NULL, "damon+softdirty: known");
	if (!co)
		return;
	ret = co->probe(&live, &err);
	ok(ret == 0, "damon+softdirty: probe%s%s", ret ? ": " : "", ret ? err.msg : "");
	ret = co->create(&live, 1000000, &priv, &err);
	if (!ret)
		ret = co->set_targets(priv, &c, 1, &err);
	ok(ret == 0, "damon+softdirty: create and set_targets%s%s", ret ? ": " : "",
	   ret ? err.msg : "");
	if (ret)
		goto out;
	/* Soft-dirty takes the targets with DAMON, not at the first collect
	 * (tracker_combo.c): a whole round of C's ends before any collect. */
	t0 = now_s();
	do {
		sleep_s(0.1);
		co->stats(priv, &st);
	} while (!st.nr_reads && now_s() - t0 < 10);
	ok(st.nr_reads > 0, "damon+softdirty: soft-dirty's first round of the target over %.1f s "
	   "after set_targets, before any collect", now_s() - t0);
	memset(&s, 0, sizeof(s));
	s.pid = c;
	s.start = (uint64_t)(uintptr_t)base + HOT_SZ + GAP_SZ;
	/* Two soft-dirty rounds at least (the first may have begun before
	 * the target arrived), and DAMON's time. */
	t0 = now_s();
	do {
		sleep_s(0.5);
		ret = co->collect(priv, scatter_sink, &s, &err);
		co->stats(priv, &st);
	} while (!ret && (st.rounds < 3 || now_s() - t0 < seconds) && now_s() - t0 < 60);
	ok(ret == 0 && st.rounds >= 3, "damon+softdirty: collect over %llu rounds in %.0f s%s%s",
	   (unsigned long long)st.rounds, now_s() - t0, ret ? ": " : "", ret ? err.msg : "");
	for (i = 0; i < COLD_SZ / PAGE; i++) {
		if (i % SCATTER_STRIDE == 0) {
			hot++;
			hot_seen += s.written[i];
		} else {
			cold++;
			cold_seen += s.written[i];
		}
	}
	ok(hot_seen * 10 >= hot * 9, "damon+softdirty: %zu of C's %zu scattered hot pages seen "
	   "written", hot_seen, hot);
	ok(cold_seen * 100 <= cold, "damon+softdirty: %zu of the %zu pages between them seen "
	   "written", cold_seen, cold);
	ok(s.accessed_obs > 0, "damon+softdirty: DAMON's regions cover the range "
	   "(%llu observations)", (unsigned long long)s.accessed_obs);
	ok(co->kdamond && co->kdamond(priv, &(unsigned){ 0 }, &(pid_t){ 0 }),
	   "damon+softdirty: names its kdamond (for its CPU)");
out:
	if (priv)
		co->destroy(priv);
}

static void check_unavailable(void)
{
	struct tier_err err = { "" };
	int ret;

	ret = tier_linux_tracker_find("idle")->probe(&live, &err);
	ok(ret == -ENOENT && strstr(err.msg, "CONFIG_IDLE_PAGE_TRACKING"),
	   "idle: probe fails: %s", err.msg);
	ret = tier_linux_tracker_find("perf")->probe(&live, &err);
	ok(ret == -ENODEV, "perf: probe fails: %s", err.msg);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 12;
	char *base;
	pid_t a, b, c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root (DAMON sysfs, clear_refs, sysctls)\n");
		return 0;
	}
	/* A place for the children's areas (the same in each), kept reserved
	 * here so that nothing the checks allocate lands in it before the
	 * last child is made. */
	base = mmap(NULL, AREA_SZ, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}

	check_kernel_tiering();
	check_damon_stat_taken();
	check_pick();
	check_unavailable();

	a = spawn_child(base, 1);
	b = spawn_child(base, 0);
	ok(a > 0 && b > 0, "children A (hot writer, pid %d) and B (sleeper, pid %d) set up",
	   (int)a, (int)b);
	if (a > 0 && b > 0) {
		check_damon(a, b, base, seconds);
		check_softdirty(a, b, base);
	}
	/* Before the crash check, which leaves damon_stat on again where
	 * the kernel has it. */
	c = spawn_child(base, 2);
	ok(c > 0, "child C (scattered writer, pid %d) set up", (int)c);
	if (c > 0) {
		check_combo(c, base, seconds);
		kill(c, SIGKILL);
	}
	if (a > 0 && b > 0)
		check_crash_leftovers(a);
	if (guard_on) {
		struct tier_err err = { "" };

		ok(tier_linux_guard_close(&guard, &err) == 0, "the guard put damon_stat back%s%s",
		   err.msg[0] ? ": " : "", err.msg);
	}
	if (a > 0)
		kill(a, SIGKILL);
	if (b > 0)
		kill(b, SIGKILL);
	while (wait(NULL) > 0)
		;
	printf("1..%u\n", nr_tests);
	return nr_failed ? 1 : 0;
}
