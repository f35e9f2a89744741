/* hint-fault-probe.c - whether tierd could see the kernel's NUMA hint
 * faults from user space, and how well they part a scattered hot set from
 * the cold pages around it.
 *
 * A child first touches an array on node 1 (the slow tier), then updates
 * it at random: 90% of its updates go to one page in HOT_EVERY (the hot
 * set), the rest to any page. The kernel's NUMA balancing in memory
 * tiering mode (numa_balancing = 2) protects a slow tier's pages, a scan
 * of up to scan_size_mb at a time (task_numa_work()), and takes a hint
 * fault at the next access to each; with its promotion rate limit at 0
 * (numa_balancing_promote_rate_limit_MBps) it promotes none of them
 * (should_numa_migrate_memory(): numa_promotion_rate_limit() always
 * says over). The parent samples the child's minor faults, hint faults
 * among them, through perf_event_open(2)'s software event
 * PERF_COUNT_SW_PAGE_FAULTS_MIN (every fault, its address and time; no
 * PMU needed), and tells the scans' passes apart as a daemon would: per
 * 64 MiB of the array, a page that faults again has been protected again,
 * so its fault starts that range's next pass; a fault's latency is its
 * time since its pass began.
 *
 * Usage: hint-fault-probe MODE [SECONDS]
 *   MODE off: numa_balancing 0 (the workload alone); nb: 2, promotion
 *   rate limit 0 (the scans' cost, nothing sampled); perf: the same,
 *   sampled and analysed. Puts the three settings back at the end.
 * Prints the update rate each second, then (perf) one line per range and
 * pass: its hot and cold pages that faulted, within 50, 100 and 200 ms of
 * the pass's start; then the pages under 100 ms in both of their first
 * two passes; and where every 16th page of the array is at the end. */
#include <errno.h>
#include <linux/perf_event.h>
#include <numaif.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGES		65536ul		/* 256 MiB, the kernel's default scan size */
#define PAGE_SZ		4096ul
#define HOT_EVERY	8ul
#define RANGE_PAGES	16384ul		/* 64 MiB */
#define RANGES		(PAGES / RANGE_PAGES)
#define MAX_PASSES	16
#define RING_PAGES	4096ul		/* 16 MiB of samples */

static const char *const settings[] = {
	"/proc/sys/kernel/numa_balancing",
	"/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps",
	"/sys/kernel/mm/numa/demotion_enabled",
};
#define NSET (sizeof(settings) / sizeof(settings[0]))

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int get(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "r");

	if (!f || !fgets(buf, (int)sz, f)) {
		fprintf(stderr, "hint-fault-probe: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int put(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(v, f) < 0 || fclose(f)) {
		fprintf(stderr, "hint-fault-probe: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void updater(volatile uint64_t *shared)
{
	unsigned long node1 = 1ul << 1;
	uint64_t x = 88172645463325252ull, k = 0;
	char *a;

	a = mmap(NULL, PAGES * PAGE_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		_exit(1);
	madvise(a, PAGES * PAGE_SZ, MADV_NOHUGEPAGE);
	if (mbind(a, PAGES * PAGE_SZ, MPOL_BIND, &node1, 8 * sizeof(node1), 0))
		_exit(2);
	memset(a, 1, PAGES * PAGE_SZ);
	mbind(a, PAGES * PAGE_SZ, MPOL_DEFAULT, NULL, 0, 0);
	shared[1] = (uint64_t)(uintptr_t)a;
	for (;;) {
		uint64_t p;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p = x % 10 < 9 ? (x >> 8) % (PAGES / HOT_EVERY) * HOT_EVERY : (x >> 8) % PAGES;
		a[p * PAGE_SZ + (x >> 40) % PAGE_SZ]++;
		if (!(++k & 1023))
			shared[0] = k;
	}
}

/* The passes of one range: which pages faulted in the current one. */
struct range {
	int pass;			/* -1: none yet */
	uint64_t start_us[MAX_PASSES];
	uint8_t seen[RANGE_PAGES / 8];
	/* per pass: hot and cold pages that faulted, within 50/100/200 ms */
	uint32_t n[MAX_PASSES][2], within[MAX_PASSES][2][3];
};

static struct range ranges[RANGES];
static uint32_t lat_ms[2][PAGES];	/* each page's latency in its first two passes */
static uint8_t passes_seen[PAGES];

static void fault(uint64_t t_us, uint64_t page)
{
	struct range *r = &ranges[page / RANGE_PAGES];
	uint64_t i = page % RANGE_PAGES, lat;
	int hot = page % HOT_EVERY == 0, k;

	if (r->pass < 0 || (r->seen[i / 8] & (1u << (i % 8)))) {
		if (r->pass + 1 >= MAX_PASSES)
			return;
		r->pass++;
		r->start_us[r->pass] = t_us;
		memset(r->seen, 0, sizeof(r->seen));
	}
	r->seen[i / 8] |= (uint8_t)(1u << (i % 8));
	lat = t_us - r->start_us[r->pass];
	r->n[r->pass][hot]++;
	for (k = 0; k < 3; k++)
		r->within[r->pass][hot][k] += lat < (50000ull << k);	/* 50, 100, 200 ms */
	if (passes_seen[page] < 2)
		lat_ms[passes_seen[page]++][page] = (uint32_t)(lat / 1000);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "perf";
	int secs = argc > 2 ? atoi(argv[2]) : 20;
	char saved[NSET][64];
	volatile uint64_t *shared;
	struct perf_event_mmap_page *mp = NULL;
	uint64_t t0, next, last = 0, samples = 0, lost = 0, base;
	pid_t child;
	size_t i;
	int fd = -1;

	if (strcmp(mode, "off") && strcmp(mode, "nb") && strcmp(mode, "perf")) {
		fprintf(stderr, "usage: hint-fault-probe off|nb|perf [SECONDS]\n");
		return 2;
	}
	for (i = 0; i < NSET; i++)
		if (get(settings[i], saved[i], sizeof(saved[i])))
			return 1;
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 1;
	for (i = 0; i < RANGES; i++)
		ranges[i].pass = -1;
	if (put(settings[0], strcmp(mode, "off") ? "2" : "0") || put(settings[1], "0") ||
	    put(settings[2], "false"))
		return 1;
	child = fork();
	if (!child)
		updater(shared);
	while (!shared[1])
		usleep(1000);
	base = shared[1];
	if (!strcmp(mode, "perf")) {
		struct perf_event_attr at;

		memset(&at, 0, sizeof(at));
		at.size = sizeof(at);
		at.type = PERF_TYPE_SOFTWARE;
		at.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
		at.sample_period = 1;
		at.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
		at.use_clockid = 1;
		at.clockid = CLOCK_MONOTONIC;
		fd = (int)syscall(SYS_perf_event_open, &at, child, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			perror("hint-fault-probe: perf_event_open");
		else
			mp = mmap(NULL, (RING_PAGES + 1) * PAGE_SZ, PROT_READ | PROT_WRITE, MAP_SHARED,
				  fd, 0);
		if (mp == MAP_FAILED || !mp) {
			kill(child, SIGKILL);
			return 1;
		}
	}
	t0 = now_us();
	next = t0 + 1000000;
	printf("# mode %s: %lu pages on node 1, one in %lu hot (90%% of the updates)\n", mode,
	       PAGES, HOT_EVERY);
	for (;;) {
		uint64_t t = now_us();

		if (mp) {
			const uint8_t *data = (const uint8_t *)mp + PAGE_SZ;
			uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
			uint64_t tail = mp->data_tail;
			const size_t sz = RING_PAGES * PAGE_SZ;

			while (head - tail >= sizeof(struct perf_event_header)) {
				struct perf_event_header h;
				uint64_t rec[8];
				size_t j;

				for (j = 0; j < sizeof(h); j++)
					((uint8_t *)&h)[j] = data[(tail + j) & (sz - 1)];
				if (h.size < sizeof(h) || h.size > sizeof(h) + sizeof(rec))
					break;
				for (j = 0; j < h.size - sizeof(h); j++)
					((uint8_t *)rec)[j] = data[(tail + sizeof(h) + j) & (sz - 1)];
				if (h.type == PERF_RECORD_SAMPLE) {
					samples++;
					if (rec[1] >= base && rec[1] < base + PAGES * PAGE_SZ &&
					    rec[0] / 1000 >= t0)
						fault(rec[0] / 1000 - t0, (rec[1] - base) / PAGE_SZ);
				} else if (h.type == PERF_RECORD_LOST) {
					lost += rec[1];
				}
				tail += h.size;
			}
			__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
		}
		if (t >= next) {
			uint64_t c = shared[0];

			printf("# at %4.1f s: %.2f M updates/s, faults sampled %llu, lost %llu\n",
			       (t - t0) / 1e6, (c - last) / 1e6, (unsigned long long)samples,
			       (unsigned long long)lost);
			last = c;
			next += 1000000;
		}
		if (t - t0 >= (uint64_t)secs * 1000000)
			break;
		usleep(20000);
	}
	if (mp) {
		uint32_t both[2] = { 0, 0 }, first[2] = { 0, 0 };
		int p;

		for (i = 0; i < RANGES; i++)
			for (p = 0; p <= ranges[i].pass; p++) {
				const struct range *r = &ranges[i];

				printf("range %zu pass %d at %.2f s: hot %u (%u/%u/%u within 50/100/200 ms)"
				       ", cold %u (%u/%u/%u)\n", i, p, r->start_us[p] / 1e6,
				       r->n[p][1], r->within[p][1][0], r->within[p][1][1],
				       r->within[p][1][2], r->n[p][0], r->within[p][0][0],
				       r->within[p][0][1], r->within[p][0][2]);
			}
		for (i = 0; i < PAGES; i++) {
			int hot = i % HOT_EVERY == 0;

			first[hot] += passes_seen[i] >= 1 && lat_ms[0][i] < 100;
			both[hot] += passes_seen[i] >= 2 && lat_ms[0][i] < 100 && lat_ms[1][i] < 100;
		}
		printf("under 100 ms in its first pass: hot %u of %lu, cold %u of %lu\n", first[1],
		       PAGES / HOT_EVERY, first[0], PAGES - PAGES / HOT_EVERY);
		printf("under 100 ms in both of its first two passes: hot %u, cold %u\n", both[1],
		       both[0]);
	}
	{
		void *pages[PAGES / 16];
		int status[PAGES / 16], on1 = 0;

		for (i = 0; i < PAGES / 16; i++)
			pages[i] = (char *)(uintptr_t)base + i * 16 * PAGE_SZ;
		if (!move_pages(child, PAGES / 16, pages, NULL, status, 0))
			for (i = 0; i < PAGES / 16; i++)
				on1 += status[i] == 1;
		printf("at the end: %d of %lu sampled pages still on node 1\n", on1, PAGES / 16);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	for (i = 0; i < NSET; i++)
		put(settings[i], saved[i]);
	return 0;
}
