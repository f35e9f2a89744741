/* move-batch-probe.c - what a move_pages(2) call's batch size does to the
 * cost of moving pages of another process: the mover's CPU, its wall
 * time, its waits for a CPU and the rest (blocked), per page.
 *
 * A child maps MIB MiB of private anonymous memory (no THP) on node 1,
 * then either sleeps (BUSY 0) or updates it at random, 8 bytes at a time
 * (BUSY 1), as a workload does while tierd moves its pages. The parent, at
 * nice -10 as tierd runs, moves every page to node 0 and back with
 * MPOL_MF_MOVE in calls of 16, 64, 256, 1024, 4096 and 16384 pages and
 * prints one line per batch size and direction; the waits come from
 * /proc/thread-self/schedstat. Run in the guest (scripts/tiered-vm), as
 * root.
 *
 * Usage: move-batch-probe [MIB [BUSY]]   (defaults 128 1) */
#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The calling thread's time on a CPU and waiting for one, in seconds. */
static void sched(double *run, double *wait)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long r = 0, w = 0;

	if (f) {
		if (fscanf(f, "%llu %llu", &r, &w) != 2)
			r = w = 0;
		fclose(f);
	}
	*run = (double)r / 1e9;
	*wait = (double)w / 1e9;
}

/* The child: MIB MiB on node 1, then updated at random (busy) or not. */
static void child(size_t mib, int busy, int fd)
{
	unsigned long mask = 2;
	uint64_t x = 88172645463325252ull;
	size_t words = (mib << 20) / 8;
	char *m = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		_exit(1);
	madvise(m, mib << 20, MADV_NOHUGEPAGE);
	if (mbind(m, mib << 20, MPOL_BIND, &mask, 8, 0))
		_exit(1);
	memset(m, 1, mib << 20);
	mbind(m, mib << 20, MPOL_DEFAULT, NULL, 0, 0);
	if (write(fd, &m, sizeof(m)) != sizeof(m))
		_exit(1);
	for (;;) {
		if (!busy) {
			pause();
			continue;
		}
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		((volatile uint64_t *)m)[x % words]++;
	}
}

int main(int argc, char **argv)
{
	static const size_t batches[] = { 16, 64, 256, 1024, 4096, 16384 };
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 128, n = mib << 8, i, b;
	int busy = argc > 2 ? atoi(argv[2]) : 1, p[2], dir;
	void **addr = malloc(n * sizeof(*addr));
	int *nodes = malloc(n * sizeof(*nodes)), *st = malloc(n * sizeof(*st));
	char *base;
	pid_t pid;

	if (!mib || !addr || !nodes || !st || pipe(p)) {
		fprintf(stderr, "usage: move-batch-probe [MIB [BUSY]] (out of memory?)\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		child(mib, busy, p[1]);
	if (read(p[0], &base, sizeof(base)) != sizeof(base)) {
		fprintf(stderr, "move-batch-probe: the child could not set up %zu MiB on node 1\n",
			mib);
		return 1;
	}
	setpriority(PRIO_PROCESS, 0, -10);
	for (i = 0; i < n; i++)
		addr[i] = base + (i << 12);
	for (b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		for (dir = 0; dir < 2; dir++) {
			int to = dir ? 1 : 0;
			double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
			double r0, q0, r1, q1, w, c;
			size_t calls = 0, moved = 0;

			sched(&r0, &q0);
			for (i = 0; i < n; i += batches[b]) {
				size_t k = n - i < batches[b] ? n - i : batches[b], j;

				for (j = 0; j < k; j++)
					nodes[i + j] = to;
				if (move_pages(pid, k, addr + i, nodes + i, st + i, MPOL_MF_MOVE) < 0)
					perror("move_pages");
				calls++;
				for (j = 0; j < k; j++)
					moved += st[i + j] == to;
			}
			sched(&r1, &q1);
			w = now(CLOCK_MONOTONIC) - w0;
			c = now(CLOCK_THREAD_CPUTIME_ID) - c0;
			printf("batch=%zu to=%d busy=%d pages=%zu moved=%zu calls=%zu wall_ms=%.1f "
			       "cpu_ms=%.1f runq_wait_ms=%.1f blocked_ms=%.1f us_per_page_wall=%.2f "
			       "us_per_page_cpu=%.2f\n",
			       batches[b], to, busy, n, moved, calls, w * 1e3, c * 1e3, (q1 - q0) * 1e3,
			       (w - (r1 - r0) - (q1 - q0)) * 1e3, w * 1e6 / (double)n,
			       c * 1e6 / (double)n);
			fflush(stdout);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}
