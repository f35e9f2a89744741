/* procs.c - process selection on Linux (see procs.h). */
#include "backend/linux/procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/sysfs.h"

/* <procfs_root>/PID/stat after its command's ") " (the command name may
 * hold spaces and parentheses: the last ')' ends it), into buf. */
static const char *stat_fields(const struct tier_linux_ctx *ctx, pid_t pid, char *buf, size_t sz)
{
	char path[512], *p;

	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d/stat", (int)pid) ||
	    tier_sysfs_read(path, buf, sz, NULL) < 0)
		return NULL;
	p = strrchr(buf, ')');
	return p ? p + 1 : "";
}

/* The CPU seconds in stat's fields after ") ": state ppid pgrp session
 * tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime. */
static int fields_cpu(const char *f, double *out)
{
	unsigned long long utime, stime;
	long hz = sysconf(_SC_CLK_TCK);

	if (sscanf(f, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
		   &stime) != 2)
		return -EINVAL;
	*out = (double)(utime + stime) / (double)(hz > 0 ? hz : 100);
	return 0;
}

int tier_linux_cpu_seconds(const struct tier_linux_ctx *ctx, pid_t pid, double *out)
{
	char buf[1024];
	const char *f = stat_fields(ctx, pid, buf, sizeof(buf));

	return f ? fields_cpu(f, out) : -ESRCH;
}

int tier_linux_own_threads_cpu(void (*fn)(void *arg, const char *name, double seconds),
			       void *arg)
{
	static const struct tier_linux_ctx task = { .procfs_root = "/proc/self/task" };
	struct dirent *e;
	DIR *d = opendir(task.procfs_root);

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char buf[1024], *name, *f;
		double s;

		/* One read of its stat: the name between the first '(' and
		 * the last ')', the CPU after (no second file per thread:
		 * under QEMU's emulation each open and read of procfs costs
		 * tens of microseconds, and status asks at every request). */
		if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
		    !(f = (char *)stat_fields(&task, (pid_t)atoi(e->d_name), buf, sizeof(buf))) ||
		    !(name = strchr(buf, '(')) || f == buf || fields_cpu(f, &s))
			continue;	/* ended since the listing */
		f[-1] = '\0';
		fn(arg, name + 1, s);
	}
	closedir(d);
	return 0;
}

int tier_linux_minor_faults(const struct tier_linux_ctx *ctx, pid_t pid, uint64_t *out)
{
	char buf[1024];
	const char *f = stat_fields(ctx, pid, buf, sizeof(buf));
	unsigned long long minflt;

	if (!f)
		return -ESRCH;
	if (sscanf(f, " %*c %*d %*d %*d %*d %*d %*u %llu", &minflt) != 1)
		return -EINVAL;
	*out = minflt;
	return 0;
}

struct pids {
	pid_t *v;
	size_t nr, cap;
};

static int pids_add(struct pids *p, pid_t pid)
{
	if (p->nr == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 64;
		pid_t *nv = realloc(p->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		p->v = nv;
		p->cap = ncap;
	}
	p->v[p->nr++] = pid;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static void pids_sort_unique(struct pids *p)
{
	size_t i, w = 0;

	if (p->nr < 2)
		return;
	qsort(p->v, p->nr, sizeof(*p->v), cmp_pid);
	for (i = 0; i < p->nr; i++)
		if (!w || p->v[w - 1] != p->v[i])
			p->v[w++] = p->v[i];
	p->nr = w;
}

/* Reads a whole file of any size into *buf (malloc'd, NUL-terminated).
 * Returns the length or -errno (no message: callers decide). */
static long read_all(const char *path, char **buf)
{
	size_t len = 0, cap = 4096;
	char *b = malloc(cap), *nb;
	int fd, e;

	*buf = NULL;
	if (!b)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		free(b);
		return -e;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			nb = realloc(b, cap * 2);
			if (!nb) {
				e = ENOMEM;
				goto out_err;
			}
			b = nb;
			cap *= 2;
		}
		n = read(fd, b + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			goto out_err;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	b[len] = '\0';
	*buf = b;
	return (long)len;
out_err:
	close(fd);
	free(b);
	return -e;
}

/* ---- mountinfo ---- */

/* Decodes the octal escapes (\040 space, \011 tab, \012 newline, \134
 * backslash) the kernel writes in mountinfo paths, in place. */
static void unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

int tier_linux_cgroup2_mount(const struct tier_linux_ctx *ctx, char *buf, size_t sz,
			     struct tier_err *err)
{
	char path[PATH_MAX], *text, *line, *save = NULL;
	unsigned lineno = 0;
	long n;
	int ret = -ENODEV;

	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "self/mountinfo"))
		return tier_err_set(err, -ENAMETOOLONG, "%s/self/mountinfo: path too long",
				    ctx->procfs_root);
	n = read_all(path, &text);
	if (n < 0)
		return tier_err_set(err, (int)n, "%s: %s", path, strerror((int)-n));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[5], *sep, *fstype, *p = line, *tok_save = NULL;
		int i;

		lineno++;
		/* "36 35 98:0 /root /mnt/point opts [optional...] - fstype src opts" */
		sep = strstr(line, " - ");
		if (!sep) {
			ret = tier_err_set(err, -EINVAL, "%s:%u: no ' - ' separator in '%.100s'",
					   path, lineno, line);
			goto out;
		}
		*sep = '\0';
		fstype = sep + 3;
		fstype[strcspn(fstype, " ")] = '\0';
		for (i = 0; i < 5; i++, p = NULL) {
			f[i] = strtok_r(p, " ", &tok_save);
			if (!f[i]) {
				ret = tier_err_set(err, -EINVAL, "%s:%u: fewer than 6 fields",
						   path, lineno);
				goto out;
			}
		}
		if (strcmp(fstype, "cgroup2"))
			continue;
		unescape(f[4]);
		if (strlen(f[4]) >= sz) {
			ret = tier_err_set(err, -ENAMETOOLONG, "%s:%u: mount point too long",
					   path, lineno);
			goto out;
		}
		strcpy(buf, f[4]);
		ret = 0;
		goto out;
	}
	tier_err_set(err, ret, "%s: no cgroup2 file system mounted", path);
out:
	free(text);
	return ret;
}

/* ---- cgroups ---- */

/* Appends the pids of cgroup.procs in dir. Returns 0, 1 when the cgroup is
 * gone, or -errno with err. */
static int read_cgroup(const char *dir, struct pids *cand, struct tier_err *err)
{
	char path[PATH_MAX], *text, *line, *save = NULL;
	unsigned lineno = 0;
	struct stat st;
	long n;
	int ret = 0;

	if (tier_sysfs_path(path, sizeof(path), dir, "cgroup.procs"))
		return tier_err_set(err, -ENAMETOOLONG, "%s: path too long", dir);
	n = read_all(path, &text);
	if (n == -ENOENT || n == -ENODEV) {
		/* ENODEV: removed after we opened it. */
		if (n == -ENODEV || stat(dir, &st) < 0)
			return 1;
		return tier_err_set(err, -ENOTDIR,
				    "%s: not a cgroup v2 directory (no cgroup.procs)", dir);
	}
	if (n < 0)
		return tier_err_set(err, (int)n, "%s: %s", path, strerror((int)-n));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end;
		long v;

		lineno++;
		errno = 0;
		v = strtol(line, &end, 10);
		if (line[0] < '0' || line[0] > '9' || *end || errno || v <= 0 || v > INT_MAX) {
			ret = tier_err_set(err, -EINVAL, "%s:%u: expected a pid, found '%.40s'",
					   path, lineno, line);
			break;
		}
		ret = pids_add(cand, (pid_t)v);
		if (ret) {
			tier_err_set(err, ret, "out of memory");
			break;
		}
	}
	free(text);
	return ret;
}

/* ---- per-process checks ---- */

struct proc_info {
	pid_t tgid;
	bool has_mm;		/* VmRSS present: not a kernel thread or zombie */
	uint64_t rss_bytes;
};

/* Returns 0, 1 when the process is gone, or -EINVAL for a malformed status
 * (err names file:line). */
static int read_status(const struct tier_linux_ctx *ctx, pid_t pid, struct proc_info *pi,
		       struct tier_err *err)
{
	char path[PATH_MAX], *text, *line, *save = NULL;
	unsigned lineno = 0;
	bool have_tgid = false;
	long n;
	int ret = 0;

	memset(pi, 0, sizeof(*pi));
	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d/status", (int)pid))
		return tier_err_set(err, -ENAMETOOLONG, "%s/%d/status: path too long",
				    ctx->procfs_root, (int)pid);
	n = read_all(path, &text);
	if (n == -ENOMEM)
		return tier_err_set(err, -ENOMEM, "out of memory");
	if (n < 0)
		return 1;	/* gone, or not ours to see: skipped either way */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long v;
		char *p, *end;
		bool rss;

		lineno++;
		rss = !strncmp(line, "VmRSS:", 6);
		if (!rss && strncmp(line, "Tgid:", 5))
			continue;
		p = line + (rss ? 6 : 5);
		p += strspn(p, " \t");
		errno = 0;
		v = strtoull(p, &end, 10);
		if (*p < '0' || *p > '9' || errno || strcmp(end, rss ? " kB" : "")) {
			ret = tier_err_set(err, -EINVAL, "%s:%u: malformed '%.60s'", path, lineno,
					   line);
			goto out;
		}
		if (rss) {
			pi->has_mm = true;
			pi->rss_bytes = v > UINT64_MAX / 1024 ? UINT64_MAX : v * 1024;
		} else {
			pi->tgid = (pid_t)v;
			have_tgid = true;
		}
	}
	if (!have_tgid)
		ret = tier_err_set(err, -EINVAL, "%s: no Tgid line", path);
out:
	free(text);
	return ret;
}

static bool exe_matches(const struct tier_linux_ctx *ctx, pid_t pid, const char *pattern)
{
	char path[PATH_MAX], exe[PATH_MAX];
	const char *subject = exe;
	ssize_t n;

	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d/exe", (int)pid))
		return false;
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	if (!strchr(pattern, '/')) {
		const char *slash = strrchr(exe, '/');

		subject = slash ? slash + 1 : exe;
	}
	return fnmatch(pattern, subject, 0) == 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Where cgroup cg is: itself when absolute, else under the cgroup2 mount
 * point (sel->cgroup_mount, or found once per call into mount). dir and
 * mount are PATH_MAX long. Returns 0 or -errno with err. */
static int cgroup_dir(const struct tier_linux_ctx *ctx, const struct tier_linux_select *sel,
		      const char *cg, char *mount, char *dir, struct tier_err *err)
{
	int ret;

	if (cg[0] == '/') {
		if (strlen(cg) >= PATH_MAX)
			return tier_err_set(err, -ENAMETOOLONG, "cgroup %.80s...: path too long", cg);
		strcpy(dir, cg);
		return 0;
	}
	if (!mount[0] && sel->cgroup_mount) {
		snprintf(mount, PATH_MAX, "%s", sel->cgroup_mount);
	} else if (!mount[0]) {
		ret = tier_linux_cgroup2_mount(ctx, mount, PATH_MAX, err);
		if (ret) {
			tier_err_prefix(err, "cgroup %s", cg);
			return ret;
		}
	}
	if (tier_sysfs_path(dir, PATH_MAX, mount, "%s", cg))
		return tier_err_set(err, -ENAMETOOLONG, "cgroup %.80s: path too long", cg);
	return 0;
}

static int list_all(const struct tier_linux_ctx *ctx, struct pids *cand, struct tier_err *err)
{
	struct dirent *de;
	DIR *d;
	int ret = 0;

	d = opendir(ctx->procfs_root);
	if (!d) {
		ret = -errno;
		return tier_err_set(err, ret, "%s: %s", ctx->procfs_root, strerror(-ret));
	}
	while ((de = readdir(d))) {
		long v;

		if (!all_digits(de->d_name) || strlen(de->d_name) > 9)
			continue;
		v = strtol(de->d_name, NULL, 10);
		if (v <= 0)
			continue;
		ret = pids_add(cand, (pid_t)v);
		if (ret) {
			tier_err_set(err, ret, "out of memory");
			break;
		}
	}
	closedir(d);
	return ret;
}

int tier_linux_select_processes(const struct tier_linux_ctx *ctx,
				const struct tier_linux_select *sel, pid_t **out, size_t *nr,
				struct tier_err *err)
{
	struct pids cand = { 0 }, res = { 0 };
	char mount[PATH_MAX] = "", dir[PATH_MAX];
	const char *first_missing = NULL, *first_missing_dir = NULL;
	char missing_dir[PATH_MAX] = "";
	size_t i, nr_missing = 0;
	pid_t self = getpid();
	int ret = 0;

	*out = NULL;
	*nr = 0;
	if (!sel->nr_pids && !sel->nr_cgroups) {
		ret = list_all(ctx, &cand, err);
		if (ret)
			goto out_fail;
	}
	for (i = 0; i < sel->nr_pids; i++) {
		if (sel->pids[i] <= 0)
			continue;
		ret = pids_add(&cand, sel->pids[i]);
		if (ret) {
			tier_err_set(err, ret, "out of memory");
			goto out_fail;
		}
	}
	for (i = 0; i < sel->nr_cgroups; i++) {
		const char *cg = sel->cgroups[i];

		ret = cgroup_dir(ctx, sel, cg, mount, dir, err);
		if (ret)
			goto out_fail;
		ret = read_cgroup(dir, &cand, err);
		if (ret < 0) {
			tier_err_prefix(err, "cgroup %s", cg);
			goto out_fail;
		}
		if (ret == 1) {
			if (!nr_missing++) {
				first_missing = cg;
				snprintf(missing_dir, sizeof(missing_dir), "%s", dir);
				first_missing_dir = missing_dir;
			}
		}
		ret = 0;
	}

	pids_sort_unique(&cand);
	for (i = 0; i < cand.nr; i++) {
		struct proc_info pi;
		pid_t pid = cand.v[i];

		if (pid == self)
			continue;
		ret = read_status(ctx, pid, &pi, err);
		if (ret < 0)
			goto out_fail;
		ret = 0;
		if (!pi.has_mm || pi.tgid <= 0 || pi.tgid == self)
			continue;
		if (pi.rss_bytes < sel->min_rss_bytes)
			continue;
		if (sel->exe_pattern && !exe_matches(ctx, pi.tgid, sel->exe_pattern))
			continue;
		ret = pids_add(&res, pi.tgid);
		if (ret) {
			tier_err_set(err, ret, "out of memory");
			goto out_fail;
		}
	}
	pids_sort_unique(&res);
	free(cand.v);
	*out = res.v;
	*nr = res.nr;
	if (!res.nr) {
		free(res.v);
		*out = NULL;
	}
	if (nr_missing) {
		if (nr_missing > 1)
			return tier_err_set(err, -ENOENT, "cgroup %s (%s): removed (and %zu more)",
					    first_missing, first_missing_dir, nr_missing - 1);
		return tier_err_set(err, -ENOENT, "cgroup %s (%s): removed", first_missing,
				    first_missing_dir);
	}
	return 0;

out_fail:
	free(cand.v);
	free(res.v);
	return ret;
}

uint64_t tier_linux_refresh_gap_us(uint64_t cost_ns, uint64_t refresh_us, double share_percent)
{
	double need, most = (double)(refresh_us > TIER_LINUX_REFRESH_MAX_US ? refresh_us
									 : TIER_LINUX_REFRESH_MAX_US);

	if (share_percent <= 0)
		return refresh_us;
	need = (double)cost_ns / 1e3 / (share_percent / 100 * TIER_LINUX_REFRESH_SHARE);
	if (need <= (double)refresh_us)
		return refresh_us;
	return need < most ? (uint64_t)need : (uint64_t)most;
}
