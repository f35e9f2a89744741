/* softdirty_scan.c - a process's present, soft-dirty runs of pages. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/pagemap_scan.h"
#include "backend/linux/softdirty_scan.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

#define SCAN_VEC	4096u		/* runs one PAGEMAP_SCAN call hands back */

static bool grow(struct tier__sd_extent **v, size_t *cap, size_t need)
{
	struct tier__sd_extent *nv;
	size_t nc = *cap ? *cap : 64;

	if (need <= *cap)
		return true;
	while (nc < need)
		nc *= 2;
	nv = realloc(*v, nc * sizeof(**v));
	if (!nv)
		return false;
	*v = nv;
	*cap = nc;
	return true;
}

static int scan_chunk(void *arg, uint64_t vaddr, const uint64_t *pm, size_t n)
{
	struct tier__sd_scan *t = arg;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t a = vaddr + ((uint64_t)i << 12);

		if ((pm[i] & (TIER__PM_PRESENT | TIER__PM_SOFT_DIRTY)) !=
		    (TIER__PM_PRESENT | TIER__PM_SOFT_DIRTY))
			continue;
		if (t->n && t->v[t->n - 1].end == a) {
			t->v[t->n - 1].end = a + 4096;
			continue;
		}
		if (!grow(&t->v, &t->cap, t->n + 1))
			return -ENOMEM;
		t->v[t->n].start = a;
		t->v[t->n++].end = a + 4096;
	}
	return 0;
}

/* Appends [start, end) to the runs, joined to the last run where they meet
 * or overlap (a PAGEMAP_SCAN call that resumes where the last one stopped
 * may hand back again the part of a run the last one had: runs that
 * overlapped made the picture's sweep emit runs that end before they
 * start). */
static int scan_add(struct tier__sd_scan *t, uint64_t start, uint64_t end)
{
	if (end <= start)
		return 0;
	if (t->n && start <= t->v[t->n - 1].end &&
	    start >= t->v[t->n - 1].start) {
		if (end > t->v[t->n - 1].end)
			t->v[t->n - 1].end = end;
		return 0;
	}
	if (!grow(&t->v, &t->cap, t->n + 1))
		return -ENOMEM;
	t->v[t->n].start = start;
	t->v[t->n++].end = end;
	return 0;
}

/* The present, soft-dirty runs of pid's watched mappings, by
 * PAGEMAP_SCAN: under TCG a quarter of the time of reading pagemap's
 * entries one by one (1.3 GiB, 10,000 runs: 7-10 ms against 38-45 ms, the
 * 6.12 guest). -EOPNOTSUPP where the kernel has no such ioctl or no
 * soft-dirty category (before 6.7; a procfs that is not one). */
static int scan_ioctl(struct tier__sd_scan *t, const struct tier_linux_ctx *ctx, pid_t pid,
		      struct tier_err *err)
{
	struct tier__vma *v = NULL;
	char path[512];
	size_t nr, i;
	int fd, ret;

	if (!t->vec && !(t->vec = malloc(SCAN_VEC * sizeof(*t->vec))))
		return tier_err_set(err, -ENOMEM, "out of memory");
	ret = tier__vmas_read(ctx, pid, &v, &nr, err);
	if (ret)
		return ret;
	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%d/pagemap", (int)pid)) {
		free(v);
		return tier_err_set(err, -ENAMETOOLONG, "procfs root too long");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		tier_err_set(err, ret, "%s: %s", path, strerror(errno));
		free(v);
		return ret;
	}
	for (i = 0; !ret && i < nr; i++) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg),
			.start = v[i].start & ~4095ull,
			.end = v[i].end,
			.vec = (uint64_t)(uintptr_t)t->vec,
			.vec_len = SCAN_VEC,
			.category_mask = PAGE_IS_PRESENT | PAGE_IS_SOFT_DIRTY,
			.return_mask = PAGE_IS_PRESENT | PAGE_IS_SOFT_DIRTY,
		};

		while (!ret) {
			long k, got = ioctl(fd, PAGEMAP_SCAN, &arg);

			if (got < 0) {
				ret = errno == ENOTTY || errno == EINVAL ? -EOPNOTSUPP :
				      errno == ESRCH ? -ESRCH : -errno;
				tier_err_set(err, ret, "%s: PAGEMAP_SCAN: %s", path, strerror(errno));
				break;
			}
			for (k = 0; !ret && k < got; k++)
				ret = scan_add(t, t->vec[k].start, t->vec[k].end);
			if (ret) {
				tier_err_set(err, ret, "out of memory");
				break;
			}
			if (arg.walk_end >= arg.end || arg.walk_end <= arg.start)
				break;
			arg.start = arg.walk_end;
		}
	}
	close(fd);
	free(v);
	return ret;
}

static int cmp_extent(const void *a, const void *b)
{
	const struct tier__sd_extent *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* The runs in address order, overlaps joined (the mappings come in order
 * and so do a call's runs: a no-op but for a kernel that answers
 * otherwise). */
static void scan_order(struct tier__sd_scan *t)
{
	size_t i, n = 0;

	for (i = 1; i < t->n && t->v[i].start >= t->v[i - 1].end; i++)
		;
	if (i >= t->n)
		return;
	qsort(t->v, t->n, sizeof(*t->v), cmp_extent);
	for (i = 0; i < t->n; i++) {
		if (n && t->v[i].start <= t->v[n - 1].end) {
			if (t->v[i].end > t->v[n - 1].end)
				t->v[n - 1].end = t->v[i].end;
			continue;
		}
		t->v[n++] = t->v[i];
	}
	t->n = n;
}

int tier__sd_scan_read(struct tier__sd_scan *t, const struct tier_linux_ctx *ctx, pid_t pid,
		       bool *by_ioctl, struct tier_err *err)
{
	int ret;

	t->n = 0;
	*by_ioctl = false;
	if (!t->no_ioctl) {
		ret = scan_ioctl(t, ctx, pid, err);
		if (!ret) {
			scan_order(t);
			*by_ioctl = true;
		}
		if (ret != -EOPNOTSUPP)
			return ret;
		tier_err_clear(err);
		t->no_ioctl = true;
		t->n = 0;
	}
	return tier__pagemap_walk(ctx, pid, scan_chunk, t, err);
}

void tier__sd_scan_free(struct tier__sd_scan *t)
{
	free(t->v);
	free(t->vec);
	memset(t, 0, sizeof(*t));
}
