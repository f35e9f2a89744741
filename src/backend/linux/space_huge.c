/* space_huge.c - transparent huge pages in the address space: which
 * aligned blocks of ids are one huge page now (PAGEMAP_SCAN on
 * /proc/PID/pagemap), and the migrator's split op (debugfs
 * split_huge_pages). Contracts in space.h.
 */
#include "backend/linux/space.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/pagemap_scan.h"
#include "backend/linux/space_impl.h"

unsigned tier_linux_space_huge_shift(const struct tier_linux_space *s)
{
	return s->page_shift < 21 ? 21 - s->page_shift : 0;
}

const uint8_t *tier_linux_space_page_huge(const struct tier_linux_space *s)
{
	/* Not scanned since the space grew (or the scan ran out of memory):
	 * no map rather than one too short. */
	if (s->huge_unsupported ||
	    s->cap_huge < (size_t)(s->nr_pages >> tier_linux_space_huge_shift(s)) + 1)
		return NULL;
	return s->page_huge;
}

/* Marks in s->page_huge the blocks of extent e whose 2 MiB are one huge
 * page, asking the kernel over [start, end) (2 MiB aligned, inside e) with
 * PAGEMAP_SCAN on the process's pagemap fd. Returns 0 or -errno of the
 * ioctl (-ENOTTY, -EINVAL: the kernel has no PAGEMAP_SCAN). */
static int scan_extent(struct tier_linux_space *s, int fd, const struct tier__extent *e,
		       uint64_t start, uint64_t end)
{
	const unsigned hs = tier_linux_space_huge_shift(s);
	const uint64_t hb = UINT64_C(1) << (hs + s->page_shift);
	struct page_region vec[64];
	struct pm_scan_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.start = start;
	arg.end = end;
	arg.vec = (uintptr_t)vec;
	arg.vec_len = sizeof(vec) / sizeof(vec[0]);
	arg.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT;
	arg.return_mask = PAGE_IS_HUGE;
	for (;;) {
		long n = ioctl(fd, PAGEMAP_SCAN, &arg), i;

		if (n < 0)
			return -errno;
		for (i = 0; i < n; i++) {
			uint64_t a = (vec[i].start + hb - 1) & ~(hb - 1);

			for (; a + hb <= vec[i].end; a += hb)
				s->page_huge[(e->first + ((a - e->start) >> s->page_shift)) >> hs] = 1;
		}
		if (arg.walk_end >= end || (size_t)n < arg.vec_len)
			return 0;
		arg.start = arg.walk_end;
	}
}

int tier_linux_space_scan_huge(struct tier_linux_space *s)
{
	const unsigned hs = tier_linux_space_huge_shift(s);
	const uint64_t hp = UINT64_C(1) << hs, hb = hp << s->page_shift;
	size_t blocks = (size_t)(s->nr_pages >> hs) + 1, i, k;
	char path[PATH_MAX];

	if (s->huge_unsupported || !hs)
		return -EOPNOTSUPP;
	if (tier__space_grow((void **)&s->page_huge, &s->cap_huge, blocks, 1))
		return -ENOMEM;
	memset(s->page_huge, 0, blocks);
	for (i = 0; i < s->nr_slots; i++) {
		const struct tier__slot *sl = &s->slots[i];
		int fd, ret = 0;

		if (!sl->pid)
			continue;
		snprintf(path, sizeof(path), "%s/%d/pagemap", s->ctx->procfs_root, (int)sl->pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* gone, or not ours to read: base pages */
		for (k = sl->ext_begin; k < sl->ext_end && !ret; k++) {
			const struct tier__extent *e = &s->ext[k];
			uint64_t a = (e->start + hb - 1) & ~(hb - 1);
			uint64_t b = tier__space_ext_end(s, e) & ~(hb - 1);

			/* Only where ids keep the alignment (an extent taken
			 * before it grew past 2 MiB may not). */
			if (a >= b || ((e->first + ((a - e->start) >> s->page_shift)) & (hp - 1)))
				continue;
			ret = scan_extent(s, fd, e, a, b);
		}
		close(fd);
		if (ret == -ENOTTY || ret == -EINVAL) {
			s->huge_unsupported = true;
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* Splits the huge page holding id page through the kernel's
 * <debugfs>/split_huge_pages ("PID,0xSTART,0xEND"), then asks PAGEMAP_SCAN
 * whether it is still one. */
int tier__space_split(void *priv, uint64_t page)
{
	struct tier_linux_space *s = priv;
	const unsigned hs = tier_linux_space_huge_shift(s);
	const uint64_t hb = UINT64_C(1) << (hs + s->page_shift);
	const struct tier__extent *e = page < s->nr_pages ? tier__space_ext_by_id(s, page) : NULL;
	uint64_t addr, a;
	char path[PATH_MAX], cmd[80];
	pid_t pid;
	int fd, len, ret;
	ssize_t w;

	if (!e)
		return -EFAULT;
	if (!s->page_huge || s->huge_unsupported || !s->page_huge[page >> hs])
		return -EINVAL;
	if (!s->ctx->debugfs_root)
		return -EOPNOTSUPP;
	pid = s->slots[e->slot].pid;
	addr = e->start + ((page - e->first) << s->page_shift);
	a = addr & ~(hb - 1);
	snprintf(path, sizeof(path), "%s/split_huge_pages", s->ctx->debugfs_root);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	len = snprintf(cmd, sizeof(cmd), "%d,0x%llx,0x%llx", (int)pid, (unsigned long long)a,
		       (unsigned long long)(a + hb));
	w = write(fd, cmd, (size_t)len);
	ret = w < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	/* Did it split? The kernel skips a page it cannot lock or pin. */
	snprintf(path, sizeof(path), "%s/%d/pagemap", s->ctx->procfs_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	s->page_huge[page >> hs] = 0;
	ret = scan_extent(s, fd, e, a, a + hb);
	close(fd);
	if (ret)
		return ret;
	return s->page_huge[page >> hs] ? -EBUSY : 0;
}
