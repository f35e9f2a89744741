/* kernel_state.h - what tierd changed in the kernel, kept in a file so
 * that it is put back even when tierd dies without its exit path (SIGKILL,
 * a crash, the OOM killer).
 *
 * tierd writes the file (daemon.state_file, /run/tierd/state by default:
 * a tmpfs, so a reboot, which resets the kernel's settings anyway, also
 * forgets it) before it changes a setting, with the value it found, and
 * each time the kdamond it runs changes; it removes the file once it has
 * put everything back on a clean exit. A file left behind means a tierd
 * died: the next start (or `tierd --restore`, the systemd unit's
 * ExecStopPost) stops the kdamond it left running and writes the saved
 * settings back before anything else.
 *
 * The file is text, one setting a line, '#' starting a comment:
 *   pid 1234                 the tierd that wrote it
 *   numa_balancing 2         /proc/sys/kernel/numa_balancing before
 *   demotion_enabled true    /sys/kernel/mm/numa/demotion_enabled before
 *   numa_balancing_promote_rate_limit_MBps 65536
 *                            /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
 *                            before (the hint-fault tracker sets it to 0)
 *   damon_stat Y             damon_stat was enabled and tierd switched it off
 *   kdamond 0 567            kdamonds/0 runs for tierd, its thread is pid 567
 *   kdamond 0 0              kdamonds/0 is being started (or started again)
 *                            for tierd: its thread, whichever it is
 * A key appears only when tierd changed that setting (or runs a kdamond).
 */
#ifndef TIER_LINUX_KERNEL_STATE_H
#define TIER_LINUX_KERNEL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "backend/linux/kernel_tiering.h"
#include "backend/linux/tracker.h"
#include "core/err.h"

#define TIER_LINUX_STATE_FILE_DEFAULT "/run/tierd/state"

struct tier_linux_kernel_state {
	pid_t pid;				/* the tierd that wrote it */
	struct tier_linux_kernel_tiering tiering;	/* has_* set: saved */
	bool damon_stat;			/* damon_stat was on; tierd switched it off */
	bool has_kdamond;
	unsigned kdamond;			/* index under kdamonds/ */
	pid_t kdamond_pid;			/* its kernel thread */
};

/* True when the state holds nothing to put back. */
bool tier_linux_kernel_state_empty(const struct tier_linux_kernel_state *st);

/* Parses the file at path into *st. Returns 0, -ENOENT when there is no
 * file (err untouched), or -errno with err naming the file and line
 * ("/run/tierd/state:3: unknown key 'numa'"). */
int tier_linux_kernel_state_load(const char *path, struct tier_linux_kernel_state *st,
				 struct tier_err *err);

/* Writes *st to path atomically (a temporary file beside it, fsync,
 * rename), creating the directory if it is missing. Returns 0 or -errno. */
int tier_linux_kernel_state_save(const char *path, const struct tier_linux_kernel_state *st,
				 struct tier_err *err);

/* Removes the file; a missing file is not an error. */
int tier_linux_kernel_state_remove(const char *path, struct tier_err *err);

/* Puts back what *st holds: stops the kdamond first (only while
 * kdamonds/K/pid is still st->kdamond_pid: an index reused by someone
 * else is left alone), then writes numa_balancing, demotion_enabled and
 * damon_stat's switch. Tries everything; done gets a description of what
 * was put back ("stopped kdamond 0 (pid 567), numa_balancing=2, ...", ""
 * for nothing). Returns 0 or the first -errno with err set. */
int tier_linux_kernel_state_restore(const struct tier_linux_ctx *ctx,
				    const struct tier_linux_kernel_state *st, char *done,
				    size_t done_sz, struct tier_err *err);

#endif
