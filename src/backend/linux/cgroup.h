/* cgroup.h - what tierd reads of cgroup v2 for the groups' shares of each
 * tier: which group a process is in, and a group's memory per node.
 *
 * Reads <procfs_root>/PID/cgroup (the "0::/path" line of cgroup v2) and
 * <dir>/memory.numa_stat ("anon N0=bytes N1=bytes ...", one line per
 * kind of memory).
 */
#ifndef TIER_LINUX_CGROUP_H
#define TIER_LINUX_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/linux/tracker.h"
#include "core/err.h"

#define TIER_LINUX_MAX_NODES 256

/* The cgroup v2 path of process pid, relative to the cgroup2 mount
 * ("/system.slice/db.service"; "/" for the root), into buf. Returns 0,
 * -ESRCH (the process is gone), -ENOENT (no cgroup v2 line: a v1-only
 * process), -ENAMETOOLONG or -EINVAL (malformed, with the line). */
int tier_linux_proc_cgroup(const struct tier_linux_ctx *ctx, pid_t pid, char *buf, size_t sz,
			   struct tier_err *err);

/* A configured group path ("db", "/db" relative to mount, or an absolute
 * "/sys/fs/cgroup/db") as the cgroup path that /proc/PID/cgroup shows
 * ("/db"), into buf. mount: the cgroup2 mount point. Returns 0 or
 * -ENAMETOOLONG. A path outside the mount is taken as relative to it. */
int tier_linux_cgroup_relative(const char *mount, const char *path, char *buf, size_t sz);

/* Whether the process cgroup path proc is group (or below it). */
int tier_linux_cgroup_contains(const char *group, const char *proc);

/* Memory per node of the cgroup directory dir: anon[n] and file[n] in
 * bytes (zero for nodes it does not list). Returns 0, -ENOENT (the group
 * is gone, or the memory controller is off: err says which), or -EINVAL
 * with file:line for a malformed line. */
int tier_linux_cgroup_numa_stat(const char *dir, uint64_t anon[TIER_LINUX_MAX_NODES],
				uint64_t file[TIER_LINUX_MAX_NODES], struct tier_err *err);

#endif
