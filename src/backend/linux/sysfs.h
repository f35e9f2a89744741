/* sysfs.h - small readers for sysfs/procfs files under a root directory.
 *
 * Every path is relative to a root taken from the caller's context ("/sys"
 * on a live system, a fixture tree in tests), so nothing here hard-codes
 * where the kernel's files live. Errors name the full path.
 */
#ifndef TIER_LINUX_SYSFS_H
#define TIER_LINUX_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Joins root and the printf-formatted relative path into buf.
 * Returns 0 or -ENAMETOOLONG. */
int tier_sysfs_path(char *buf, size_t sz, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Reads the whole file at path into buf (NUL-terminated). Returns the
 * number of bytes read, or -errno with err naming the path. A file larger
 * than sz - 1 is an error (-EFBIG), never silently cut. */
long tier_sysfs_read(const char *path, char *buf, size_t sz, struct tier_err *err);

bool tier_sysfs_exists(const char *path);

/* Reads a file holding one unsigned decimal number (and a newline).
 * Returns 0 or -errno (-EINVAL for anything else in the file). */
int tier_sysfs_read_u64(const char *path, uint64_t *out, struct tier_err *err);

#endif
