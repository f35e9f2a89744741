/* schedstat.h - how long a process's threads waited for a CPU:
 * <procfs>/PID/task/TID/schedstat (Documentation/scheduler/sched-stats.rst,
 * CONFIG_SCHED_INFO, which Debian's kernels have): the thread's time on a
 * CPU and its time runnable on a runqueue but not running, in ns.
 *
 * The soft-dirty tracker dates a page's first write after a clear by the
 * time its writer could write: a writer that waited for a CPU meanwhile (on
 * a busy machine, or behind tierd's own threads and the kdamond on a
 * small one) wrote nothing while it waited. */
#ifndef TIER_LINUX_SCHEDSTAT_H
#define TIER_LINUX_SCHEDSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TIER_LINUX_WAITS_MAX 64u	/* threads read, the first in the task directory */

struct tier_linux_waits {
	size_t n;
	/* The kernel has no schedstat files (no CONFIG_SCHED_INFO): v[0] is
	 * the whole process (tid = pid), its time on a CPU read from its CPU
	 * clock (clock_getcpuclockid(3): the scheduler's runtime in ns, which
	 * every kernel keeps), all its threads' together, its waits unknown
	 * (0). */
	bool cpu_clock;
	struct {
		pid_t tid;
		uint64_t run_ns, wait_ns;
	} v[TIER_LINUX_WAITS_MAX];	/* by tid, ascending */
};

/* Reads the times of pid's threads (at most TIER_LINUX_WAITS_MAX).
 * Returns 0, or -errno (-ESRCH: no such process) with w->n 0. Threads
 * without a schedstat file (gone since the directory was read) are left
 * out; where none of them has one (a kernel without CONFIG_SCHED_INFO),
 * w holds the process's CPU clock instead (w->cpu_clock), or nothing
 * when that cannot be read either. */
int tier_linux_waits_read(const char *procfs_root, pid_t pid, struct tier_linux_waits *w);

/* What the threads in both readings a and then b did in between, all
 * together: their time on a CPU and waiting for one, and how many of them
 * ran or waited. */
struct tier_linux_waits_delta {
	uint64_t ran_ns, waited_ns;
	uint64_t max_ran_ns;		/* the most one of them ran */
	size_t threads;
};
void tier_linux_waits_delta(const struct tier_linux_waits *a, const struct tier_linux_waits *b,
			    struct tier_linux_waits_delta *d);

/* Whether a thread in both readings a and then b that neither ran nor
 * waited in between is runnable or blocked in the kernel now
 * (<procfs>/PID/task/TID/stat's state R or D): waiting for a CPU since
 * before a (the kernel adds a wait to schedstat only when the thread runs
 * again), or for the kernel (its page under migration, its address space's
 * lock) - not asleep by its own choice. False for CPU clock readings. */
bool tier_linux_waits_stalled(const char *procfs_root, pid_t pid, const struct tier_linux_waits *a,
			      const struct tier_linux_waits *b);

/* The share of its life each thread of reading w was runnable (on a CPU
 * or waiting for one: schedstat's two times over the time since it
 * started, <procfs>/PID/task/TID/stat's starttime against
 * <procfs>/uptime), the largest of them: how much of the wall clock a
 * process's busiest thread wants a CPU (1 for a thread that computes
 * without a pause, a tenth for one asleep nine tenths of its life). From
 * a CPU clock reading (w->cpu_clock), the process's CPU time over its
 * age, at most 1: less than the truth by what it waited.
 * Returns it, or 0 when w holds no thread or none can be read. */
double tier_linux_runnable_share(const char *procfs_root, pid_t pid,
				 const struct tier_linux_waits *w);

/* ... and the mean time one of them waited, in ns (0: none ran or waited). */
static inline uint64_t tier_linux_waits_delta_mean(const struct tier_linux_waits_delta *d)
{
	return d->threads ? d->waited_ns / d->threads : 0;
}

/* The mean time a thread waited for a CPU between readings a and then b,
 * over the threads in both that ran or waited in between (those asleep
 * throughout wrote nothing either way), in ns; 0 where there are none. */
uint64_t tier_linux_waits_mean(const struct tier_linux_waits *a, const struct tier_linux_waits *b);

/* The time the threads in both readings a and then b ran on a CPU in
 * between, all together, in ns. */
uint64_t tier_linux_waits_ran(const struct tier_linux_waits *a, const struct tier_linux_waits *b);

#endif
