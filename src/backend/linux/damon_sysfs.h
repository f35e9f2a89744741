/* damon_sysfs.h - the control files of DAMON's sysfs interface (and of the
 * tracefs instance its tracepoint path uses), for the DAMON tracker's
 * modules; not part of the backend's interface.
 *
 * Paths are relative: "kdamonds/1/state" under
 * <sysfs>/kernel/mm/damon/admin, or "tracing/instances/..." under the
 * tracefs directory. They are what struct tier__damon_hooks sees.
 */
#ifndef TIER_LINUX_DAMON_SYSFS_H
#define TIER_LINUX_DAMON_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/linux/tracker_util.h"
#include "core/err.h"

/* Where one kdamond's control files are. Caller-owned storage. */
struct tier__damon_sysfs {
	char admin[512];		/* <sysfs>/kernel/mm/damon/admin */
	char tracing[512];		/* the tracefs directory (tracepoint path) */
	unsigned kdamond;		/* index under kdamonds/ */
	struct tier__damon_hooks hooks;
};

/* Joins the admin directory and rel into buf. Returns 0 or -ENAMETOOLONG. */
int tier__damon_sysfs_path(const struct tier__damon_sysfs *fs, char *buf, size_t sz,
			   const char *rel);

/* Writes val to the control file rel (under the admin directory, or under
 * the tracefs directory for "tracing/..."), through hooks.on_write first.
 * The kernel answers EBUSY while it handles another command: the write is
 * retried after a pause (hooks.busy_retry_us, else 20 ms), up to 100
 * times. Returns 0 or -errno with err naming the file and the value. */
int tier__damon_sysfs_write(const struct tier__damon_sysfs *fs, const char *rel,
			    const char *val, struct tier_err *err);

/* tier__damon_sysfs_write with rel printf-formatted. */
int tier__damon_sysfs_writef(const struct tier__damon_sysfs *fs, const char *val,
			     struct tier_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* tier__damon_sysfs_write of a decimal number, rel printf-formatted. */
int tier__damon_sysfs_write_u64(const struct tier__damon_sysfs *fs, uint64_t v,
				struct tier_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* True when the printf-formatted rel exists under the admin directory. */
bool tier__damon_sysfs_exists(const struct tier__damon_sysfs *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reads the one-line file rel (printf-formatted, under the admin
 * directory) into buf without its newline, through hooks.on_read first.
 * The kernel (7.x) answers EBUSY to a read while another task holds
 * DAMON's sysfs lock: the read is retried as a write is. Returns 0 or
 * -errno. */
int tier__damon_sysfs_read_line(const struct tier__damon_sysfs *fs, char *buf, size_t sz,
				struct tier_err *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Reads the decimal number in rel (printf-formatted, under the admin
 * directory), retried on EBUSY as above. Returns 0 or -errno. */
int tier__damon_sysfs_read_u64(const struct tier__damon_sysfs *fs, uint64_t *v,
			       struct tier_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Writes val to "kdamonds/<kdamond>/<rest>". Returns 0 or -errno. */
int tier__damon_sysfs_kdamond_write(const struct tier__damon_sysfs *fs, const char *rest,
				    const char *val, struct tier_err *err);

/* Writes cmd ("on", "off", "commit", "update_schemes_tried_regions", ...)
 * to the kdamond's state file. Returns 0 or -errno. */
int tier__damon_sysfs_command(const struct tier__damon_sysfs *fs, const char *cmd,
			      struct tier_err *err);

/* True when the kdamond's state file reads "on". */
bool tier__damon_sysfs_is_on(const struct tier__damon_sysfs *fs);

#endif
