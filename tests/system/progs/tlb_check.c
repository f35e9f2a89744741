/* tlb_check.c - how much of a hot page set the kernel's accessed-bit
 * trackers see (run in the test guest by tests/system/tlb.sh; needs root).
 * Prints TAP.
 *
 * A child keeps touching every page of a hot set (one byte per 4 KiB page,
 * in a tight loop) next to a cold set of the same size that it touched once;
 * a PROT_NONE gap between them keeps DAMON's regions apart. Measured:
 *   - DAMON (vaddr, sysfs): monitoring regions set to exactly the two sets,
 *     5 ms sampling, 100 ms aggregation, a stat scheme matching every
 *     region; after each aggregation window, update_schemes_tried_regions
 *     gives each region's nr_accesses. A page touched all the time is seen
 *     at every sample: nr_accesses = aggr / sample = 20, the maximum.
 *   - idle page tracking, where the kernel has it: every round marks both
 *     sets idle, waits 100 ms and reads back which pages were accessed.
 * Printed per page-set size, one line each the host script reads:
 *   tlb-figure tracker=damon pages=N hot_pct=H cold_pct=C windows=W max=M
 *   tlb-figure tracker=idle pages=N hot_pct=H cold_pct=C rounds=R
 * hot_pct: the hot set's mean nr_accesses in percent of the maximum (DAMON),
 * or the share of page-rounds seen accessed (idle); cold_pct the same for
 * the cold set. Checked here, on any kernel: DAMON ran and reported both
 * sets, and the cold set shows (almost) no accesses. How much of the hot set
 * is seen depends on the test bed (QEMU TCG keeps TLB entries whose
 * accessed bit was cleared unless the kernel flushes them; see
 * docs/tiered-vm.md): tlb.sh prints the figures and asserts them on the
 * kernel built to flush (scripts/build-guest-kernel).
 *
 * Usage: tlb_check [SECONDS [PAGES...]]   (per size and tracker; default 4 s,
 *        pages 64 4096)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096ul
#define SAMPLE_US	5000ul
#define AGGR_US		100000ul
#define MAX_ACCESSES	(AGGR_US / SAMPLE_US)
#define COLD_MAX_PCT	10.0
#define MIN_WINDOWS	5u
#define DAMON		"/sys/kernel/mm/damon/admin/kdamonds"
#define PAGE_IDLE	"/sys/kernel/mm/page_idle/bitmap"
#define DAMON_STAT	"/sys/module/damon_stat/parameters/enabled"

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

/* Writes val to path; EBUSY (DAMON handling another command) is retried
 * for up to 2 s. Returns 0 or -errno, with a diagnostic on failure. */
static int put(const char *path, const char *val)
{
	int tries, ret = 0;

	for (tries = 0; tries < 100; tries++) {
		int fd = open(path, O_WRONLY);

		if (fd < 0) {
			ret = -errno;
			break;
		}
		ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
		close(fd);
		if (ret != -EBUSY)
			break;
		sleep_s(0.02);
	}
	if (ret)
		diag("writing '%s' to %s: %s", val, path, strerror(-ret));
	return ret;
}

static int putf(const char *val, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int putf(const char *val, const char *fmt, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return put(path, val);
}

/* Reads the first line of the printf-formatted path into buf; 0 or -errno. */
static int get(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int get(char *buf, size_t sz, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)sz, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* ---- the child ---------------------------------------------------------- */

struct sets {
	pid_t pid;
	unsigned long nr_pages;
	uintptr_t hot, cold;	/* start addresses; each set nr_pages long */
};

/* Maps hot set, gap, cold set (4 KiB pages, populated) and forks a child
 * that keeps touching the hot set. Returns 0 or -1. */
static int spawn(struct sets *s, unsigned long nr_pages)
{
	size_t set_sz = nr_pages * PAGE, gap_sz = 64 * PAGE + set_sz;
	size_t area_sz = 2 * set_sz + gap_sz;
	char *area, *hot, *cold;
	int fds[2];
	char c;

	area = mmap(NULL, area_sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		return -1;
	hot = area;
	cold = area + set_sz + gap_sz;
	if (mprotect(hot, set_sz, PROT_READ | PROT_WRITE) ||
	    mprotect(cold, set_sz, PROT_READ | PROT_WRITE))
		return -1;
	/* 4 KiB pages: the figures count pages, and a huge page has one
	 * accessed bit for 512 of them. */
	madvise(hot, set_sz, MADV_NOHUGEPAGE);
	madvise(cold, set_sz, MADV_NOHUGEPAGE);
	if (pipe(fds))
		return -1;
	s->nr_pages = nr_pages;
	s->hot = (uintptr_t)hot;
	s->cold = (uintptr_t)cold;
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		volatile char *h = hot;
		unsigned long i;

		close(fds[0]);
		for (i = 0; i < nr_pages; i++) {
			h[i * PAGE] = 1;
			cold[i * PAGE] = 1;
		}
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		close(fds[1]);
		for (;;)
			for (i = 0; i < nr_pages; i++)
				h[i * PAGE]++;
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1) {
		close(fds[0]);
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
		return -1;
	}
	close(fds[0]);
	munmap(area, area_sz);
	return 0;
}

static void reap(struct sets *s)
{
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
}

/* ---- DAMON ---------------------------------------------------------------- */

/* Sets up kdamond 0 for s (stopped). Returns 0 or -errno. */
static int damon_setup(const struct sets *s)
{
	const char *k = DAMON "/0", *c = DAMON "/0/contexts/0";
	char v[64];
	int ret = 0;

	ret |= put(DAMON "/nr_kdamonds", "1");
	ret |= putf("1", "%s/contexts/nr_contexts", k);
	ret |= putf("vaddr", "%s/operations", c);
	snprintf(v, sizeof(v), "%lu", SAMPLE_US);
	ret |= putf(v, "%s/monitoring_attrs/intervals/sample_us", c);
	snprintf(v, sizeof(v), "%lu", AGGR_US);
	ret |= putf(v, "%s/monitoring_attrs/intervals/aggr_us", c);
	/* vaddr would widen the regions to the mappings at each update. */
	ret |= putf("1000000000", "%s/monitoring_attrs/intervals/update_us", c);
	/* DAMON refuses fewer than 3. */
	ret |= putf("3", "%s/monitoring_attrs/nr_regions/min", c);
	/* Few regions: each window's are read back file by file. */
	ret |= putf("20", "%s/monitoring_attrs/nr_regions/max", c);
	ret |= putf("1", "%s/targets/nr_targets", c);
	snprintf(v, sizeof(v), "%d", (int)s->pid);
	ret |= putf(v, "%s/targets/0/pid_target", c);
	ret |= putf("2", "%s/targets/0/regions/nr_regions", c);
	snprintf(v, sizeof(v), "%" PRIuPTR, s->hot);
	ret |= putf(v, "%s/targets/0/regions/0/start", c);
	snprintf(v, sizeof(v), "%" PRIuPTR, s->hot + s->nr_pages * PAGE);
	ret |= putf(v, "%s/targets/0/regions/0/end", c);
	snprintf(v, sizeof(v), "%" PRIuPTR, s->cold);
	ret |= putf(v, "%s/targets/0/regions/1/start", c);
	snprintf(v, sizeof(v), "%" PRIuPTR, s->cold + s->nr_pages * PAGE);
	ret |= putf(v, "%s/targets/0/regions/1/end", c);
	ret |= putf("1", "%s/schemes/nr_schemes", c);
	ret |= putf("stat", "%s/schemes/0/action", c);
	/* The access pattern defaults to 0..0, which matches nothing. */
	ret |= putf("18446744073709551615", "%s/schemes/0/access_pattern/sz/max", c);
	ret |= putf("4294967295", "%s/schemes/0/access_pattern/nr_accesses/max", c);
	ret |= putf("4294967295", "%s/schemes/0/access_pattern/age/max", c);
	/* Apply at every aggregation (the default since 6.7 where present). */
	putf("0", "%s/schemes/0/apply_interval_us", c);
	return ret ? -EIO : 0;
}

/* One window's size-weighted nr_accesses over [start, start + sz) into
 * *acc (page-samples), *pages (pages reported). */
static void damon_sum(uintptr_t start, size_t sz, unsigned long nr, double *acc, double *pages)
{
	const char *t = DAMON "/0/contexts/0/schemes/0/tried_regions";
	unsigned long i;
	char buf[64];

	for (i = 0; i < nr; i++) {
		uintptr_t rs, re, lo, hi;
		unsigned long na;

		if (get(buf, sizeof(buf), "%s/%lu/start", t, i))
			break;
		rs = strtoull(buf, NULL, 0);
		if (get(buf, sizeof(buf), "%s/%lu/end", t, i))
			break;
		re = strtoull(buf, NULL, 0);
		if (get(buf, sizeof(buf), "%s/%lu/nr_accesses", t, i))
			break;
		na = strtoul(buf, NULL, 0);
		lo = rs > start ? rs : start;
		hi = re < start + sz ? re : start + sz;
		if (hi <= lo)
			continue;
		*acc += (double)na * (double)((hi - lo) / PAGE);
		*pages += (double)((hi - lo) / PAGE);
	}
}

/* Counts the tried_regions directories. */
static unsigned long damon_nr_tried(void)
{
	char buf[64];
	unsigned long n = 0;

	while (!get(buf, sizeof(buf), DAMON "/0/contexts/0/schemes/0/tried_regions/%lu/start", n))
		n++;
	return n;
}

static void check_damon(const struct sets *s, double seconds)
{
	double hot_acc = 0, hot_pages = 0, cold_acc = 0, cold_pages = 0, start, end;
	size_t sz = s->nr_pages * PAGE;
	unsigned windows = 0;
	char st[32] = "";

	if (damon_setup(s) || put(DAMON "/0/state", "on")) {
		ok(0, "damon: kdamond on for %lu pages", s->nr_pages);
		return;
	}
	/* The first window starts from the initial regions. */
	sleep_s(2.0 * AGGR_US / 1e6);
	/* At least MIN_WINDOWS windows: each update waits for the next one,
	 * which can take a second or more when the host is busy. */
	start = now_s();
	end = start + seconds;
	while (now_s() < end || (windows < MIN_WINDOWS && now_s() < start + 4 * seconds)) {
		unsigned long nr;

		if (put(DAMON "/0/state", "update_schemes_tried_regions"))
			break;
		nr = damon_nr_tried();
		if (!nr)
			continue;
		damon_sum(s->hot, sz, nr, &hot_acc, &hot_pages);
		damon_sum(s->cold, sz, nr, &cold_acc, &cold_pages);
		windows++;	/* the next update waits for the next window */
	}
	get(st, sizeof(st), DAMON "/0/state");
	put(DAMON "/0/state", "off");
	ok(windows >= MIN_WINDOWS && hot_pages > 0 && cold_pages > 0,
	   "damon: %u windows with both %lu-page sets reported (kdamond %s)", windows,
	   s->nr_pages, st);
	if (!hot_pages || !cold_pages)
		return;
	double hot_pct = 100.0 * hot_acc / hot_pages / (double)MAX_ACCESSES;
	double cold_pct = 100.0 * cold_acc / cold_pages / (double)MAX_ACCESSES;

	printf("tlb-figure tracker=damon pages=%lu hot_pct=%.1f cold_pct=%.1f windows=%u max=%lu\n",
	       s->nr_pages, hot_pct, cold_pct, windows, MAX_ACCESSES);
	diag("damon, %lu pages: hot set nr_accesses %.2f of %lu (%.1f%%), cold set %.2f",
	     s->nr_pages, hot_acc / hot_pages, MAX_ACCESSES, hot_pct, cold_acc / cold_pages);
	ok(cold_pct <= COLD_MAX_PCT, "damon: the cold %lu-page set is seen cold (%.1f%% <= %.0f%%)",
	   s->nr_pages, cold_pct, COLD_MAX_PCT);
}

/* ---- idle page tracking --------------------------------------------------- */

/* The PFNs of the nr pages from start of pid; 0 or -1. */
static int pfns_of(pid_t pid, uintptr_t start, unsigned long nr, uint64_t *pfn)
{
	char path[64];
	unsigned long i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	for (i = 0; i < nr; i++) {
		uint64_t e;

		if (pread(fd, &e, sizeof(e), (off_t)((start / PAGE + i) * 8)) != sizeof(e) ||
		    !(e >> 63) || !(e & ((1ull << 55) - 1))) {
			close(fd);
			return -1;
		}
		pfn[i] = e & ((1ull << 55) - 1);
	}
	close(fd);
	return 0;
}

/* Marks the pages idle (fd: the bitmap, opened read-write). */
static void mark_idle(int fd, const uint64_t *pfn, unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++) {
		uint64_t w = 1ull << (pfn[i] % 64);

		if (pwrite(fd, &w, sizeof(w), (off_t)(pfn[i] / 64 * 8)) != sizeof(w))
			return;
	}
}

/* How many of the pages are no longer idle (were accessed). */
static unsigned long count_accessed(int fd, const uint64_t *pfn, unsigned long nr)
{
	unsigned long i, n = 0;

	for (i = 0; i < nr; i++) {
		uint64_t w = 0;

		if (pread(fd, &w, sizeof(w), (off_t)(pfn[i] / 64 * 8)) != sizeof(w) ||
		    !(w & (1ull << (pfn[i] % 64))))
			n++;
	}
	return n;
}

static void check_idle(const struct sets *s, double seconds)
{
	unsigned long nr = s->nr_pages, hot_seen = 0, cold_seen = 0;
	uint64_t *hot = calloc(nr, sizeof(*hot)), *cold = calloc(nr, sizeof(*cold));
	unsigned rounds = 0;
	double start, end;
	int fd;

	if (access(PAGE_IDLE, F_OK)) {
		printf("ok %u - idle: %lu pages # SKIP no idle page tracking in this kernel "
		       "(CONFIG_IDLE_PAGE_TRACKING)\n", ++nr_tests, nr);
		goto out;
	}
	/* Pages still in a per-CPU LRU batch cannot be marked idle (they
	 * would read as accessed): compaction drains the batches. */
	put("/proc/sys/vm/compact_memory", "1");
	fd = open(PAGE_IDLE, O_RDWR);
	if (!hot || !cold || fd < 0 || pfns_of(s->pid, s->hot, nr, hot) ||
	    pfns_of(s->pid, s->cold, nr, cold)) {
		ok(0, "idle: the PFNs of both %lu-page sets and the bitmap", nr);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	/* At least MIN_WINDOWS rounds: marking and reading thousands of
	 * pages one word at a time takes seconds when the host is busy. */
	start = now_s();
	end = start + seconds;
	while (now_s() < end || (rounds < MIN_WINDOWS && now_s() < start + 4 * seconds)) {
		mark_idle(fd, hot, nr);
		mark_idle(fd, cold, nr);
		sleep_s(AGGR_US / 1e6);
		hot_seen += count_accessed(fd, hot, nr);
		cold_seen += count_accessed(fd, cold, nr);
		rounds++;
	}
	close(fd);
	double hot_pct = 100.0 * (double)hot_seen / (double)(nr * rounds);
	double cold_pct = 100.0 * (double)cold_seen / (double)(nr * rounds);

	printf("tlb-figure tracker=idle pages=%lu hot_pct=%.1f cold_pct=%.1f rounds=%u\n", nr,
	       hot_pct, cold_pct, rounds);
	diag("idle, %lu pages: hot set seen accessed in %.1f%% of page-rounds, cold set %.1f%%",
	     nr, hot_pct, cold_pct);
	ok(rounds >= 1 && cold_pct <= COLD_MAX_PCT,
	   "idle: %u rounds, the cold %lu-page set is seen cold (%.1f%% <= %.0f%%)", rounds, nr,
	   cold_pct, COLD_MAX_PCT);
out:
	free(hot);
	free(cold);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 4.0;
	unsigned long sizes[8] = { 64, 4096 };
	int i, nr_sizes = 2;
	struct utsname u;
	char val[8] = "";

	if (argc > 2) {
		for (nr_sizes = 0; nr_sizes < 8 && nr_sizes + 2 < argc; nr_sizes++)
			sizes[nr_sizes] = strtoul(argv[nr_sizes + 2], NULL, 0);
	}
	if (seconds <= 0 || nr_sizes < 1) {
		fprintf(stderr, "usage: tlb_check [SECONDS [PAGES...]]\n");
		return 2;
	}
	uname(&u);
	printf("tlb-kernel %s\n", u.release);
	if (access(DAMON, F_OK)) {
		printf("1..1\nok 1 - DAMON # SKIP no DAMON sysfs in this kernel\n");
		return 0;
	}
	/* damon_stat (Linux 6.17+) runs DAMON on its own where enabled. */
	if (!get(val, sizeof(val), DAMON_STAT) && !strcmp(val, "Y"))
		put(DAMON_STAT, "N");
	for (i = 0; i < nr_sizes; i++) {
		struct sets s;

		if (!sizes[i] || spawn(&s, sizes[i])) {
			ok(0, "a child touching %lu pages", sizes[i]);
			continue;
		}
		check_damon(&s, seconds);
		check_idle(&s, seconds);
		reap(&s);
	}
	printf("1..%u\n", nr_tests);
	return nr_failed ? 1 : 0;
}
