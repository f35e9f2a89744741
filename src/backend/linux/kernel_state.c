/* kernel_state.c - the file of kernel settings tierd changed, and putting
 * them back. */
#include "backend/linux/kernel_state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/damon_modules.h"
#include "backend/linux/damon_sysfs.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

bool tier_linux_kernel_state_empty(const struct tier_linux_kernel_state *st)
{
	return !st->tiering.has_numa_balancing && !st->tiering.has_demotion &&
	       !st->tiering.has_rate_limit && !st->damon_stat && !st->has_kdamond;
}

/* A decimal number that fits in max, the whole word. */
static bool parse_num(const char *s, unsigned long max, unsigned long *out)
{
	char *e;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*out = strtoul(s, &e, 10);
	return !errno && !*e && *out <= max;
}

static int parse_line(char *line, struct tier_linux_kernel_state *st, const char *path,
		      unsigned lineno, struct tier_err *err)
{
	static const char *const keys[] = {
		"pid", "numa_balancing", "demotion_enabled", "damon_stat", "kdamond",
		"numa_balancing_promote_rate_limit_MBps", NULL,
	};
	char *words[4], *save = NULL, *w;
	unsigned long a, b;
	size_t n = 0, k;

	for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (n == 4)
			return tier_err_set(err, -EINVAL, "%s:%u: too many words", path, lineno);
		words[n++] = w;
	}
	if (!n)
		return 0;
	for (k = 0; keys[k] && strcmp(words[0], keys[k]); k++)
		;
	if (!keys[k])
		return tier_err_set(err, -EINVAL, "%s:%u: unknown key '%.64s'", path, lineno,
				    words[0]);
	if (!strcmp(words[0], "pid") && n == 2 && parse_num(words[1], INT_MAX, &a) && a) {
		st->pid = (pid_t)a;
	} else if (!strcmp(words[0], "numa_balancing") && n == 2 &&
		   parse_num(words[1], 255, &a)) {
		st->tiering.has_numa_balancing = true;
		st->tiering.numa_balancing = (unsigned)a;
	} else if (!strcmp(words[0], "demotion_enabled") && n == 2 &&
		   (!strcmp(words[1], "true") || !strcmp(words[1], "false"))) {
		st->tiering.has_demotion = true;
		st->tiering.demotion_enabled = !strcmp(words[1], "true");
	} else if (!strcmp(words[0], "numa_balancing_promote_rate_limit_MBps") && n == 2 &&
		   parse_num(words[1], ULONG_MAX, &a)) {
		st->tiering.has_rate_limit = true;
		st->tiering.rate_limit_mbps = a;
	} else if (!strcmp(words[0], "damon_stat") && n == 2 && !strcmp(words[1], "Y")) {
		st->damon_stat = true;
	} else if (!strcmp(words[0], "kdamond") && n == 3 && parse_num(words[1], 4095, &a) &&
		   parse_num(words[2], INT_MAX, &b)) {
		st->has_kdamond = true;
		st->kdamond = (unsigned)a;
		st->kdamond_pid = (pid_t)b;
	} else {
		return tier_err_set(err, -EINVAL, "%s:%u: bad value for '%s'", path, lineno,
				    words[0]);
	}
	return 0;
}

int tier_linux_kernel_state_load(const char *path, struct tier_linux_kernel_state *st,
				 struct tier_err *err)
{
	char line[256];
	unsigned lineno = 0;
	int ret = 0;
	FILE *f;

	memset(st, 0, sizeof(*st));
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		return ret == -ENOENT ? ret : tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		else if (!feof(f))
			ret = tier_err_set(err, -EINVAL, "%s:%u: line too long", path, lineno);
		if (!ret) {
			line[strcspn(line, "#")] = '\0';
			ret = parse_line(line, st, path, lineno, err);
		}
	}
	if (!ret && ferror(f))
		ret = tier_err_set(err, -EIO, "%s: read error", path);
	fclose(f);
	return ret;
}

static int mkdir_parent(const char *path, struct tier_err *err)
{
	char dir[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof(dir))
		return tier_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST)
		return tier_err_set(err, -errno, "%s: creating the directory: %s", dir,
				    strerror(errno));
	return 0;
}

int tier_linux_kernel_state_save(const char *path, const struct tier_linux_kernel_state *st,
				 struct tier_err *err)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return tier_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
	ret = mkdir_parent(path, err);
	if (ret)
		return ret;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return tier_err_set(err, -errno, "%s: %s", tmp, strerror(errno));
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return tier_err_set(err, ret, "%s: %s", tmp, strerror(-ret));
	}
	fprintf(f, "# tierd: kernel settings tierd changed, put back when it exits\n"
		   "# (or by the next start, or tierd --restore, if it died)\n");
	fprintf(f, "pid %d\n", (int)st->pid);
	if (st->tiering.has_numa_balancing)
		fprintf(f, "numa_balancing %u\n", st->tiering.numa_balancing);
	if (st->tiering.has_demotion)
		fprintf(f, "demotion_enabled %s\n", st->tiering.demotion_enabled ? "true" : "false");
	if (st->tiering.has_rate_limit)
		fprintf(f, "numa_balancing_promote_rate_limit_MBps %llu\n",
			(unsigned long long)st->tiering.rate_limit_mbps);
	if (st->damon_stat)
		fprintf(f, "damon_stat Y\n");
	if (st->has_kdamond)
		fprintf(f, "kdamond %u %d\n", st->kdamond, (int)st->kdamond_pid);
	ret = fflush(f) || fsync(fd) ? -errno : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
	}
	return 0;
}

int tier_linux_kernel_state_remove(const char *path, struct tier_err *err)
{
	if (unlink(path) && errno != ENOENT)
		return tier_err_set(err, -errno, "%s: %s", path, strerror(errno));
	return 0;
}

static void done_add(char *done, size_t sz, const char *item)
{
	size_t len = strlen(done);

	if (len < sz)
		snprintf(done + len, sz - len, "%s%s", len ? ", " : "", item);
}

/* Stops kdamonds/K when its thread is still the one recorded (any, where
 * none is: the kdamond was being started, or started again for new
 * targets, when tierd died - its new thread not saved yet). Reads and
 * the write go through the DAMON sysfs module, which retries the EBUSY a
 * 7.x kernel answers while another task holds DAMON's sysfs lock (an
 * unretried read taken for "gone" would leave the kdamond running). */
static int stop_kdamond(const struct tier_linux_ctx *ctx,
			const struct tier_linux_kernel_state *st, char *done, size_t sz,
			struct tier_err *err)
{
	struct tier__damon_sysfs fs = { .kdamond = st->kdamond };
	char buf[32];
	uint64_t pid;
	int ret;

	if (tier_sysfs_path(fs.admin, sizeof(fs.admin), ctx->sysfs_root, "kernel/mm/damon/admin"))
		return tier_err_set(err, -ENAMETOOLONG, "DAMON: sysfs root too long");
	if (tier__damon_sysfs_read_u64(&fs, &pid, NULL, "kdamonds/%u/pid", st->kdamond) ||
	    (st->kdamond_pid && pid != (uint64_t)st->kdamond_pid))
		return 0;	/* gone, or the index serves someone else now */
	if (!tier__damon_sysfs_read_line(&fs, buf, sizeof(buf), NULL, "kdamonds/%u/state",
					 st->kdamond) && strcmp(buf, "on"))
		return 0;
	ret = tier__damon_sysfs_command(&fs, "off", err);
	if (!ret) {
		char item[64];

		snprintf(item, sizeof(item), "stopped kdamond %u (pid %d)", st->kdamond,
			 (int)pid);
		done_add(done, sz, item);
	}
	return ret;
}

int tier_linux_kernel_state_restore(const struct tier_linux_ctx *ctx,
				    const struct tier_linux_kernel_state *st, char *done,
				    size_t done_sz, struct tier_err *err)
{
	struct tier_err e2;
	int ret, first = 0;

	if (done_sz)
		done[0] = '\0';
	if (st->has_kdamond)
		first = stop_kdamond(ctx, st, done, done_sz, err);
	if (st->tiering.has_numa_balancing || st->tiering.has_demotion ||
	    st->tiering.has_rate_limit) {
		ret = tier_linux_kernel_tiering_restore(ctx, &st->tiering, first ? &e2 : err);
		if (!ret) {
			char desc[128];

			tier_linux_kernel_tiering_describe(&st->tiering, desc, sizeof(desc));
			done_add(done, done_sz, desc);
			if (st->tiering.has_rate_limit) {
				snprintf(desc, sizeof(desc), "numa_balancing_promote_rate_limit_MBps=%llu",
					 (unsigned long long)st->tiering.rate_limit_mbps);
				done_add(done, done_sz, desc);
			}
		} else if (!first) {
			first = ret;
		}
	}
	if (st->damon_stat) {
		ret = tier_linux_damon_module_set(ctx, "damon_stat", true, first ? &e2 : err);
		if (!ret)
			done_add(done, done_sz, "damon_stat enabled=Y");
		else if (!first)
			first = ret;
	}
	return first;
}
