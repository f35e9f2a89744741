/* softdirty_calib.c - what one write-protect fault costs on this machine,
 * for the soft-dirty tracker's budget (tracker_softdirty.c): the faults a
 * clear makes a workload take are its cost, not tierd's. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

#define CAL_PAGES	256u		/* faults the calibration takes, thrice */

static uint64_t cpu_ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What one write-protect fault costs here, in ns of the faulting thread's
 * CPU: a child of this process (single-threaded, so its faults are its
 * own) writes CAL_PAGES pages of its own, clears its soft-dirty bits
 * through <procfs_root>/self/clear_refs and writes them again, each write
 * one fault, three times; the least of the three. Neither a workload's
 * bits nor tierd's own are touched. 0 when it cannot be measured (no
 * fork, no clear_refs). */
uint64_t tier__softdirty_calibrate(const struct tier_linux_ctx *ctx)
{
	char path[512];
	uint64_t best = 0;
	int fds[2], status;
	pid_t pid;

	/* /proc/self in the child is the child. */
	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "self/clear_refs") || pipe(fds))
		return 0;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		const size_t sz = (size_t)CAL_PAGES << 12;
		char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t ns = 0;
		int round, fd;
		size_t i;

		close(fds[0]);
		if (p == MAP_FAILED)
			_exit(1);
		for (i = 0; i < sz; i += 4096)
			((volatile char *)p)[i] = 1;
		for (round = 0; round < 3; round++) {
			uint64_t t0, d;

			fd = open(path, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "4", 1) != 1)
				_exit(1);
			close(fd);
			t0 = cpu_ns_now();
			for (i = 0; i < sz; i += 4096)
				((volatile char *)p)[i] = (char)(round + 2);
			d = (cpu_ns_now() - t0) / CAL_PAGES;
			if (!ns || d < ns)
				ns = d;
		}
		_exit(write(fds[1], &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &best, sizeof(best)) != sizeof(best))
		best = 0;
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return best;
}
