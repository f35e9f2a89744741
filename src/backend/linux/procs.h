/* procs.h - which processes tierd manages on Linux: every large process by
 * default, or given pids and cgroup v2 groups, filtered by executable and
 * resident size.
 *
 * Reads, under ctx->procfs_root (normally "/proc"):
 *   PID/status           Tgid, VmRSS (absent for kernel threads and zombies)
 *   PID/exe              the executable (readlink)
 *   self/mountinfo       where cgroup2 is mounted (relative cgroup paths)
 * and, in each selected cgroup directory, cgroup.procs. Every call reads
 * afresh, so processes that join or leave a cgroup are followed.
 *
 * Processes that exit (or exec) while they are being looked at are judged
 * by whatever their files show at that moment, or skipped silently when the
 * files are gone; the next call sees them as they are.
 */
#ifndef TIER_LINUX_PROCS_H
#define TIER_LINUX_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/tracker.h"
#include "core/err.h"

struct tier_linux_select {
	/* Candidates: pids plus the members of cgroups; when both are empty,
	 * every process. A thread id stands for its process (Tgid). */
	const pid_t *pids;
	size_t nr_pids;
	/* cgroup v2 directories: an absolute path ("/sys/fs/cgroup/db"), or a
	 * path relative to the cgroup2 mount point ("db", "system.slice/x"). */
	const char *const *cgroups;
	size_t nr_cgroups;
	/* Where relative cgroup paths start; NULL: the cgroup2 mount point
	 * from <procfs_root>/self/mountinfo (tests pass a fixture tree). */
	const char *cgroup_mount;
	/* fnmatch(3) pattern on the executable (the /proc/PID/exe link):
	 * against the full path when it holds a '/' ("/usr/bin/post*"), else
	 * against the base name ("memhog", "post*"). NULL: any. A process whose
	 * exe cannot be read (kernel thread, no permission) does not match. */
	const char *exe_pattern;
	/* Minimum resident set (VmRSS), bytes; 0: any. The daemon's default
	 * is 64 MiB. */
	uint64_t min_rss_bytes;
};

/* Fills *out (malloc'd, caller frees; NULL when empty) with the selected
 * processes, sorted by pid, never a kernel thread, a zombie or the calling
 * process itself.
 *
 * Returns 0, or:
 *   -ENOENT  one or more of sel->cgroups no longer exist (removed): the
 *            processes of everything else ARE in *out and *nr, and err says
 *            which cgroup ("cgroup db (/sys/fs/cgroup/db): removed", with
 *            "and N more" when several). A caller treats this as a warning
 *            and logs it when the message changes, not at every call.
 *   other -errno, with err set and *out = NULL, *nr = 0:
 *            -ENODEV  a relative cgroup path but no cgroup2 mount;
 *            -ENOTDIR a cgroup path that is not a cgroup v2 directory;
 *            -EINVAL  a malformed cgroup.procs or status file (file:line);
 *            -EACCES, -ENOMEM, ... (the path is named).
 */
int tier_linux_select_processes(const struct tier_linux_ctx *ctx,
				const struct tier_linux_select *sel, pid_t **out, size_t *nr,
				struct tier_err *err);

/* The mount point of the cgroup2 file system, from
 * <procfs_root>/self/mountinfo (octal escapes decoded), into buf.
 * Returns 0, -ENODEV when none is mounted, -ENAMETOOLONG, or the -errno of
 * reading the file; err says which. */
int tier_linux_cgroup2_mount(const struct tier_linux_ctx *ctx, char *buf, size_t sz,
			     struct tier_err *err);

/* CPU time (user + system) of thread or process pid so far, in seconds,
 * from <procfs_root>/PID/stat (fields 14 and 15, in clock ticks; the
 * command name may hold spaces and parentheses: the last ')' ends it).
 * Returns 0, -ESRCH when it is gone, or -EINVAL for a malformed file. */
int tier_linux_cpu_seconds(const struct tier_linux_ctx *ctx, pid_t pid, double *out);

/* Each live thread of this process, to fn: its name (/proc/self/task/
 * TID/comm) and its CPU seconds (tier_linux_cpu_seconds() of
 * /proc/self/task/TID). A thread that ends meanwhile is left out. Returns
 * 0, or -errno where /proc/self/task cannot be listed. */
int tier_linux_own_threads_cpu(void (*fn)(void *arg, const char *name, double seconds),
			       void *arg);

/* The minor faults of process pid so far (all its threads, those gone
 * included), from <procfs_root>/PID/stat (field 10): among them one for
 * each page it wrote first after its soft-dirty bits were cleared.
 * Returns 0, -ESRCH when it is gone, or -EINVAL for a malformed file. */
int tier_linux_minor_faults(const struct tier_linux_ctx *ctx, pid_t pid, uint64_t *out);

/* How long after a re-read of the processes and their mappings (one that
 * cost cost_ns of CPU) the next one comes: every refresh_us
 * (daemon.refresh_ms), or, where that would take more than
 * TIER_LINUX_REFRESH_SHARE of the steps' CPU share (share_percent of a
 * core; 0: none to keep), as far apart as keeps it within that part -
 * but never more than TIER_LINUX_REFRESH_MAX_US apart (or refresh_us,
 * where longer): a new process is taken in within that. A re-read is a
 * few system calls a process, a process's whole /proc/PID/status among
 * them (and a selection by cgroup or executable reads every process's):
 * with 1,000 processes, 60-80 ms of CPU on the development host and 200-420 ms under
 * an emulator, which every second was the whole of a 5% budget. */
#define TIER_LINUX_REFRESH_SHARE 0.25
#define TIER_LINUX_REFRESH_MAX_US 30000000ull
uint64_t tier_linux_refresh_gap_us(uint64_t cost_ns, uint64_t refresh_us, double share_percent);

#endif
