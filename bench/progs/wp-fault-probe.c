/* wp-fault-probe.c - what a soft-dirty write-protect fault costs a writer
 * over a large array, against the same writes without a clear: a program
 * to run in the guest (scripts/tiered-vm --files build/wp-fault-probe --
 * wp-fault-probe [MiB]), for docs/linux-trackers.md's figures. It maps MiB
 * (default 640) of anonymous memory in base pages, writes every page, then
 * for 256, 4,096 and a quarter of its pages, strided and then in a seeded
 * random order: the writes again (no clear: the baseline), then a clear of
 * its own soft-dirty bits (/proc/self/clear_refs, 4) and the same writes,
 * each taking a fault. Prints per line the microseconds a page after the
 * clear and without it, and the thread's user and system time over the
 * faulting writes. Exit status 1 when it cannot map or clear. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void thread_times(double *user, double *sys)
{
	struct rusage r;

	getrusage(RUSAGE_THREAD, &r);
	*user = (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec / 1e6;
	*sys = (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec / 1e6;
}

static int clear_own(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	int ok = fd >= 0 && write(fd, "4", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 640, n = mib << 8, i, k;
	volatile char *a;
	int mode, t;

	if (!mib) {
		fprintf(stderr, "wp-fault-probe: MiB must be a positive number\n");
		return 2;
	}
	a = mmap(NULL, n << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		perror("wp-fault-probe: mmap");
		return 1;
	}
	madvise((void *)a, n << 12, MADV_NOHUGEPAGE);
	for (i = 0; i < n; i++)
		a[i << 12] = 1;
	for (mode = 0; mode < 2; mode++) {
		for (t = 0; t < 3; t++) {
			size_t m = t == 0 ? 256 : t == 1 ? 4096 : n / 4;
			uint64_t x = 88172645463325252ull;
			size_t *idx = malloc(m * sizeof(*idx));
			double w, base, after, u0, s0, u1, s1;

			if (!idx || m > n)
				break;
			for (k = 0; k < m; k++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				idx[k] = mode ? x % n : k * (n / m);
			}
			/* Every page written since the last clear: no faults. */
			for (i = 0; i < n; i++)
				a[i << 12]++;
			w = now_s();
			for (k = 0; k < m; k++)
				a[idx[k] << 12]++;
			base = now_s() - w;
			if (clear_own()) {
				perror("wp-fault-probe: /proc/self/clear_refs");
				return 1;
			}
			thread_times(&u0, &s0);
			w = now_s();
			for (k = 0; k < m; k++)
				a[idx[k] << 12]++;
			after = now_s() - w;
			thread_times(&u1, &s1);
			printf("%s %zu pages of %zu MiB: %.2f us a page after a clear, %.2f without; "
			       "user %.1f ms, system %.1f ms\n",
			       mode ? "random" : "strided", m, mib, after / (double)m * 1e6,
			       base / (double)m * 1e6, (u1 - u0) * 1e3, (s1 - s0) * 1e3);
			free(idx);
		}
	}
	return 0;
}
