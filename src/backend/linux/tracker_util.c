/* tracker_util.c - helpers shared by the Linux trackers: control-file
 * writes, the watched mappings of a process, pagemap reads, and turning
 * per-page bits into runs of observations. */
#include "backend/linux/tracker_util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/maps.h"
#include "backend/linux/sysfs.h"

int tier__write_str(const char *path, const char *val, struct tier_err *err)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, ret;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
	}
	do {
		n = write(fd, val, len);
	} while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return tier_err_set(err, ret, "%s: writing '%s': %s", path, val, strerror(-ret));
	if ((size_t)n != len)
		return tier_err_set(err, -EIO, "%s: short write of '%s'", path, val);
	return 0;
}

int tier__read_line(const char *path, char *buf, size_t sz, struct tier_err *err)
{
	long n = tier_sysfs_read(path, buf, sz, err);

	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

bool tier__pid_alive(const struct tier_linux_ctx *ctx, pid_t pid)
{
	char path[512];

	if (pid <= 0 || tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d", (int)pid))
		return false;
	return tier_sysfs_exists(path);
}

struct vmas_reading {
	struct tier__vma *v;
	size_t n, cap;
	struct tier_err *err;
};

static int add_vma(void *arg, const struct tier__maps_entry *e)
{
	struct vmas_reading *r = arg;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 32;
		struct tier__vma *grown = realloc(r->v, cap * sizeof(*r->v));

		if (!grown)
			return tier_err_set(r->err, -ENOMEM, "out of memory");
		r->v = grown;
		r->cap = cap;
	}
	r->v[r->n++] = (struct tier__vma){ e->start, e->end };
	return 0;
}

int tier__vmas_read(const struct tier_linux_ctx *ctx, pid_t pid, struct tier__vma **out,
		    size_t *n, struct tier_err *err)
{
	struct vmas_reading r = { .err = err };
	int ret;

	*out = NULL;
	*n = 0;
	/* Pagemap entries are per 4 KiB page. */
	ret = tier__maps_read(ctx, pid, 12, add_vma, &r, NULL, err);
	if (ret) {
		free(r.v);
		if (ret == -ESRCH)
			tier_err_set(err, ret, "%s/%d/maps: process gone", ctx->procfs_root,
				     (int)pid);
		return ret;
	}
	*out = r.v;
	*n = r.n;
	return 0;
}

int tier__pagemap_read(int fd, uint64_t vaddr, uint64_t *entries, size_t n)
{
	size_t want = n * sizeof(*entries), got = 0;
	off_t off = (off_t)((vaddr >> 12) * sizeof(*entries));

	while (got < want) {
		ssize_t r = pread(fd, (char *)entries + got, want - got, off + (off_t)got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got < want)
		memset((char *)entries + got, 0, want - got);
	return 0;
}

void tier__run_init(struct tier__run *r, struct tier__obs_batch *b, pid_t pid, uint16_t kind,
		    uint32_t interval_us)
{
	memset(r, 0, sizeof(*r));
	r->batch = b;
	r->pid = pid;
	r->kind = kind;
	r->interval_us = interval_us;
}

void tier__run_gap(struct tier__run *r)
{
	struct tier_linux_addr_obs o;

	if (!r->open)
		return;
	memset(&o, 0, sizeof(o));
	o.pid = r->pid;
	o.start = r->start;
	o.end = r->end;
	o.kind = r->kind;
	o.count = r->value;
	o.max = 1;
	o.interval_us = r->interval_us;
	tier__batch_add(r->batch, &o);
	r->open = false;
}

void tier__run_page(struct tier__run *r, uint64_t addr, uint32_t value)
{
	if (r->open && (r->end != addr || r->value != value))
		tier__run_gap(r);
	if (!r->open) {
		r->open = true;
		r->start = addr;
		r->value = value;
	}
	r->end = addr + 4096;
}

#define WALK_CHUNK 512

int tier__pagemap_walk(const struct tier_linux_ctx *ctx, pid_t pid,
		       int (*fn)(void *arg, uint64_t vaddr, const uint64_t *pm, size_t n),
		       void *arg, struct tier_err *err)
{
	struct tier__vma *v = NULL;
	uint64_t *pm = NULL;
	char path[512];
	size_t nr, i;
	int fd = -1, ret;

	ret = tier__vmas_read(ctx, pid, &v, &nr, err);
	if (ret)
		return ret;
	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d/pagemap", (int)pid)) {
		ret = tier_err_set(err, -ENAMETOOLONG, "procfs root too long");
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		tier_err_set(err, ret, "%s: %s", path, strerror(errno));
		goto out;
	}
	pm = malloc(WALK_CHUNK * sizeof(*pm));
	if (!pm) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < nr; i++) {
		uint64_t a;

		for (a = v[i].start & ~4095ull; a < v[i].end;) {
			size_t n = (size_t)((v[i].end - a + 4095) >> 12);

			if (n > WALK_CHUNK)
				n = WALK_CHUNK;
			ret = tier__pagemap_read(fd, a, pm, n);
			if (ret) {
				/* ESRCH/EIO: the process went away mid-walk. */
				tier_err_set(err, ret, "%s: %s", path, strerror(-ret));
				goto out;
			}
			ret = fn(arg, a, pm, n);
			if (ret)
				goto out;
			a += (uint64_t)n << 12;
		}
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(pm);
	free(v);
	return ret;
}

int tier__targets_update(struct tier__targets *set, const struct tier_linux_ctx *ctx,
			 const pid_t *pids, size_t n,
			 int (*reset)(void *arg, pid_t pid, struct tier_err *err), void *arg,
			 struct tier_err *err)
{
	struct tier__target *v = NULL;
	size_t i, j, nr = 0;
	int ret;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return tier_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const struct tier__target *old = NULL;

		for (j = 0; j < nr && v[j].pid != pids[i]; j++)
			;
		if (j < nr)
			continue;	/* twice in pids */
		for (j = 0; j < set->n; j++)
			if (set->v[j].pid == pids[i])
				old = &set->v[j];
		if (old) {
			if (!tier__pid_alive(ctx, pids[i]))
				continue;
			v[nr++] = *old;
			continue;
		}
		if (!tier__pid_alive(ctx, pids[i]))
			continue;
		ret = reset ? reset(arg, pids[i], err) : 0;
		if (ret == -ESRCH) {
			tier_err_clear(err);
			continue;	/* exited meanwhile */
		}
		if (ret) {
			free(v);
			return ret;
		}
		v[nr].pid = pids[i];
		v[nr].since_us = tier_linux_now_us();
		nr++;
	}
	free(set->v);
	set->v = v;
	set->n = nr;
	return 0;
}

void tier__targets_release(struct tier__targets *set)
{
	free(set->v);
	set->v = NULL;
	set->n = 0;
}

int tier__roots_init(struct tier__roots *r, const struct tier_linux_ctx *ctx)
{
	memset(r, 0, sizeof(*r));
	r->sysfs_root = strdup(ctx->sysfs_root ? ctx->sysfs_root : "/sys");
	r->procfs_root = strdup(ctx->procfs_root ? ctx->procfs_root : "/proc");
	r->debugfs_root = strdup(ctx->debugfs_root ? ctx->debugfs_root : "/sys/kernel/debug");
	if (!r->sysfs_root || !r->procfs_root || !r->debugfs_root) {
		tier__roots_release(r);
		return -ENOMEM;
	}
	r->ctx.sysfs_root = r->sysfs_root;
	r->ctx.procfs_root = r->procfs_root;
	r->ctx.debugfs_root = r->debugfs_root;
	r->ctx.kthread_cpu_percent = ctx->kthread_cpu_percent;
	r->ctx.thread_cpu_percent = ctx->thread_cpu_percent;
	r->ctx.wait = ctx->wait;
	r->ctx.wait_arg = ctx->wait_arg;
	r->ctx.tiers = ctx->tiers;
	r->ctx.tiers_gen = ctx->tiers_gen;
	r->ctx.tiers_arg = ctx->tiers_arg;
	return 0;
}

void tier__roots_release(struct tier__roots *r)
{
	free(r->sysfs_root);
	free(r->procfs_root);
	free(r->debugfs_root);
	memset(r, 0, sizeof(*r));
}
