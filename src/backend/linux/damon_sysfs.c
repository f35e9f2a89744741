/* damon_sysfs.c - reading and writing DAMON's control files.
 *
 * The kernel answers EBUSY to a write while another command is being
 * handled, and (7.x) to a read of a kdamond's files while another reader
 * or writer holds DAMON's sysfs lock; every write and read is retried
 * after a short pause. Every write goes
 * through the test hook first, so a test can journal the writes, inject
 * errors, or stand in for the kernel's state file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/linux/damon_sysfs.h"
#include "backend/linux/sysfs.h"

#define DAMON_BUSY_TRIES	100u
#define DAMON_BUSY_PAUSE_US	20000u

static void pause_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int tier__damon_sysfs_path(const struct tier__damon_sysfs *fs, char *buf, size_t sz,
			   const char *rel)
{
	return tier_sysfs_path(buf, sz, fs->admin, "%s", rel);
}

int tier__damon_sysfs_write(const struct tier__damon_sysfs *fs, const char *rel,
			    const char *val, struct tier_err *err)
{
	char path[1024];
	unsigned tries;
	int ret = 0;

	if (!strncmp(rel, "tracing/", 8))
		ret = tier_sysfs_path(path, sizeof(path), fs->tracing, "%s", rel + 8);
	else
		ret = tier_sysfs_path(path, sizeof(path), fs->admin, "%s", rel);
	if (ret)
		return tier_err_set(err, ret, "DAMON: path too long: %s", rel);
	for (tries = 0; tries < DAMON_BUSY_TRIES; tries++) {
		ret = 0;
		if (fs->hooks.on_write)
			ret = fs->hooks.on_write(fs->hooks.ctx, rel, val);
		if (ret < 0)
			tier_err_set(err, ret, "%s: writing '%s': %s", path, val, strerror(-ret));
		else if (ret > 0)
			ret = 0;	/* the hook stood in for the kernel */
		else
			ret = tier__write_str(path, val, err);
		if (ret != -EBUSY)
			break;
		pause_us(fs->hooks.busy_retry_us ? fs->hooks.busy_retry_us : DAMON_BUSY_PAUSE_US);
	}
	if (ret == -EBUSY)
		tier_err_prefix(err, "DAMON: still busy after %u tries", tries);
	return ret;
}

/* Writes val to the printf-formatted rel. */
static int vwritef(const struct tier__damon_sysfs *fs, const char *val, struct tier_err *err,
		   const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

static int vwritef(const struct tier__damon_sysfs *fs, const char *val, struct tier_err *err,
		   const char *fmt, va_list ap)
{
	char rel[512];
	int n = vsnprintf(rel, sizeof(rel), fmt, ap);

	if (n < 0 || (size_t)n >= sizeof(rel))
		return tier_err_set(err, -ENAMETOOLONG, "DAMON: path too long");
	return tier__damon_sysfs_write(fs, rel, val, err);
}

int tier__damon_sysfs_writef(const struct tier__damon_sysfs *fs, const char *val,
			     struct tier_err *err, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vwritef(fs, val, err, fmt, ap);
	va_end(ap);
	return ret;
}

int tier__damon_sysfs_write_u64(const struct tier__damon_sysfs *fs, uint64_t v,
				struct tier_err *err, const char *fmt, ...)
{
	char val[32];
	va_list ap;
	int ret;

	snprintf(val, sizeof(val), "%" PRIu64, v);
	va_start(ap, fmt);
	ret = vwritef(fs, val, err, fmt, ap);
	va_end(ap);
	return ret;
}

/* The admin directory joined to the printf-formatted rel, into path[sz]
 * (and rel into rel[512] when given). A rel longer than 511 characters is
 * cut (none here comes near). Returns 0 or -ENAMETOOLONG. */
static int vpath(const struct tier__damon_sysfs *fs, char *path, size_t sz, char *rel,
		 struct tier_err *err, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

static int vpath(const struct tier__damon_sysfs *fs, char *path, size_t sz, char *rel,
		 struct tier_err *err, const char *fmt, va_list ap)
{
	char buf[512];

	if (!rel)
		rel = buf;
	vsnprintf(rel, 512, fmt, ap);
	if (tier__damon_sysfs_path(fs, path, sz, rel))
		return tier_err_set(err, -ENAMETOOLONG, "DAMON: path too long");
	return 0;
}

/* Reads path (rel under the admin directory) as a line into buf[sz], or
 * as a number into *v when buf is NULL, through the test hook; EBUSY is
 * retried after a short pause. */
static int read_busy(const struct tier__damon_sysfs *fs, const char *rel, const char *path,
		     char *buf, size_t sz, uint64_t *v, struct tier_err *err)
{
	unsigned tries;
	int ret = 0;

	for (tries = 0; tries < DAMON_BUSY_TRIES; tries++) {
		ret = fs->hooks.on_read ? fs->hooks.on_read(fs->hooks.ctx, rel) : 0;
		if (ret < 0)
			tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
		else if (buf)
			ret = tier__read_line(path, buf, sz, err);
		else
			ret = tier_sysfs_read_u64(path, v, err);
		if (ret != -EBUSY)
			return ret;
		pause_us(fs->hooks.busy_retry_us ? fs->hooks.busy_retry_us : DAMON_BUSY_PAUSE_US);
	}
	tier_err_prefix(err, "DAMON: still busy after %u tries", tries);
	return ret;
}

bool tier__damon_sysfs_exists(const struct tier__damon_sysfs *fs, const char *fmt, ...)
{
	char path[1024];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vpath(fs, path, sizeof(path), NULL, NULL, fmt, ap);
	va_end(ap);
	return !ret && tier_sysfs_exists(path);
}

int tier__damon_sysfs_read_line(const struct tier__damon_sysfs *fs, char *buf, size_t sz,
				struct tier_err *err, const char *fmt, ...)
{
	char path[1024], rel[512];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vpath(fs, path, sizeof(path), rel, err, fmt, ap);
	va_end(ap);
	return ret ? ret : read_busy(fs, rel, path, buf, sz, NULL, err);
}

int tier__damon_sysfs_read_u64(const struct tier__damon_sysfs *fs, uint64_t *v,
			       struct tier_err *err, const char *fmt, ...)
{
	char path[1024], rel[512];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vpath(fs, path, sizeof(path), rel, err, fmt, ap);
	va_end(ap);
	return ret ? ret : read_busy(fs, rel, path, NULL, 0, v, err);
}

int tier__damon_sysfs_kdamond_write(const struct tier__damon_sysfs *fs, const char *rest,
				    const char *val, struct tier_err *err)
{
	return tier__damon_sysfs_writef(fs, val, err, "kdamonds/%u/%s", fs->kdamond, rest);
}

int tier__damon_sysfs_command(const struct tier__damon_sysfs *fs, const char *cmd,
			      struct tier_err *err)
{
	return tier__damon_sysfs_kdamond_write(fs, "state", cmd, err);
}

bool tier__damon_sysfs_is_on(const struct tier__damon_sysfs *fs)
{
	char buf[32];

	if (tier__damon_sysfs_read_line(fs, buf, sizeof(buf), NULL, "kdamonds/%u/state",
					fs->kdamond))
		return false;
	return !strcmp(buf, "on");
}
