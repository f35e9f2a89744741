/* linux_fixture.h - what the Linux trackers' test files share: temporary
 * copies of the fixture trees (tests/fixtures/; each has a README.md), the
 * observations a tracker hands on, and fixture process 100's pages.
 * Included by one test file each (static inline: each uses a part; needs
 * cmocka.h first). */
#ifndef TIERD_TESTS_UNIT_LINUX_FIXTURE_H
#define TIERD_TESTS_UNIT_LINUX_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/linux/kernel_guard.h"
#include "backend/linux/kernel_tiering.h"
#include "backend/linux/maps.h"
#include "backend/linux/clock.h"
#include "backend/linux/schedstat.h"
#include "backend/linux/softdirty_picture.h"
#include "backend/linux/softdirty_rate.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define FIXTURES TIERD_SOURCE_ROOT "/tests/fixtures/"

/* ---- temporary copies of fixture trees ---------------------------------- */

struct tmp {
	char dir[256];
	char sys[512], proc[512];
	struct tier_linux_ctx ctx;
};

static const char *copy_src, *copy_dst;

static inline int copy_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	char to[1024], buf[8192];
	int in, out;
	ssize_t n;

	(void)f;
	snprintf(to, sizeof(to), "%s%s", copy_dst, path + strlen(copy_src));
	if (type == FTW_D)
		return mkdir(to, 0755) && errno != EEXIST ? -1 : 0;
	if (type != FTW_F)
		return 0;
	in = open(path, O_RDONLY);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, st->st_mode & 0777);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	close(out);
	return 0;
}

static inline int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	return remove(path);
}

/* Copies FIXTURES/name to a fresh temporary directory; sys/ and proc/ of
 * it are the roots. */
static inline void tmp_init(struct tmp *t, const char *name)
{
	char src[512];

	memset(t, 0, sizeof(*t));	/* the ctx's bounds and hooks: none */
	snprintf(t->dir, sizeof(t->dir), "/tmp/tierd-trk-XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(src, sizeof(src), FIXTURES "%s", name);
	copy_src = src;
	copy_dst = t->dir;
	assert_int_equal(nftw(src, copy_one, 16, FTW_PHYS), 0);
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->dir);
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->dir);
	t->ctx.sysfs_root = t->sys;
	t->ctx.procfs_root = t->proc;
	t->ctx.debugfs_root = t->sys;	/* no debugfs in the fixtures */
}

static inline void tmp_release(struct tmp *t)
{
	nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void put(const struct tmp *t, const char *rel, const char *content)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static inline const char *get(const struct tmp *t, const char *rel)
{
	static char buf[4096];
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Makes <dir>/rel a directory (its parent must exist). */
static inline void mkdir_in(const struct tmp *t, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* ---- observations ------------------------------------------------------- */

struct got {
	struct tier_linux_addr_obs v[256];
	size_t n;
	unsigned calls;
};

static inline void sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct got *g = ctx;
	size_t i;

	g->calls++;
	for (i = 0; i < n && g->n < 256; i++)
		g->v[g->n++] = obs[i];
}

static inline void expect_obs(const struct tier_linux_addr_obs *o, pid_t pid, uint64_t start,
		       uint64_t end, uint16_t kind, uint32_t count, uint32_t max)
{
	if (o->pid != pid || o->start != start || o->end != end || o->kind != kind ||
	    o->count != count || o->max != max)
		fail_msg("obs pid %d [%#llx, %#llx) kind %u %u/%u, expected pid %d [%#llx, %#llx) "
			 "kind %u %u/%u", (int)o->pid, (unsigned long long)o->start,
			 (unsigned long long)o->end, o->kind, o->count, o->max, (int)pid,
			 (unsigned long long)start, (unsigned long long)end, kind, count, max);
}


/* ---- pagemap, page_idle bitmap, soft-dirty ------------------------------ */

#define P  TIER__PM_PRESENT
#define SD TIER__PM_SOFT_DIRTY

/* The pages of fixture process 100 (see tests/fixtures/pagemap/README.md). */
static inline void write_pagemaps(const struct tmp *t)
{
	static const struct { uint64_t addr, entry; } pages[] = {
		/* [heap] 0x600000, 8 pages; page 2 swapped out */
		{ 0x600000, P | 0x1000 }, { 0x601000, P | SD | 0x1001 },
		{ 0x602000, TIER__PM_SWAPPED | SD }, { 0x603000, P | SD | 0x1003 },
		{ 0x604000, P | 0x2040 }, { 0x605000, P | 0x2041 },
		{ 0x606000, P | 0x2042 }, { 0x607000, P | 0x2043 },
		/* shared mapping 0x700000: not watched */
		{ 0x700000, P | SD | 0x6000 },
		/* anonymous 0x800000, 16 pages: a huge page (head 0x3000) and
		 * eight small pages */
		{ 0x800000, P | SD | 0x3000 }, { 0x801000, P | SD | 0x3001 },
		{ 0x802000, P | SD | 0x3002 }, { 0x803000, P | SD | 0x3003 },
		{ 0x804000, P | SD | 0x3004 }, { 0x805000, P | SD | 0x3005 },
		{ 0x806000, P | SD | 0x3006 }, { 0x807000, P | SD | 0x3007 },
		{ 0x808000, P | 0x4008 }, { 0x809000, P | 0x4009 }, { 0x80a000, P | 0x400a },
		{ 0x80b000, P | 0x400b }, { 0x80c000, P | 0x400c }, { 0x80d000, P | 0x400d },
		{ 0x80e000, P | 0x400e }, { 0x80f000, P | 0x400f },
		/* read-only anonymous 0x900000: its first page present */
		{ 0x900000, P | 0x7000 },
		/* private writable file mapping 0xa00000 */
		{ 0xa00000, P | SD | 0x5000 },
	};
	uint64_t flags[64] = { 0 };
	char path[1024];
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/proc/100/pagemap", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		assert_int_equal(pwrite(fd, &pages[i].entry, 8, (off_t)(pages[i].addr >> 12) * 8), 8);
	/* up to the end of the last mapping */
	assert_int_equal(ftruncate(fd, (0xa01000 >> 12) * 8), 0);
	close(fd);

	/* Process 101: present pages, no PFNs (no CAP_SYS_ADMIN). */
	snprintf(path, sizeof(path), "%s/proc/101/pagemap", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < 2; i++) {
		uint64_t e = P;

		assert_int_equal(pwrite(fd, &e, 8, (off_t)((0x600000 >> 12) + i) * 8), 8);
	}
	close(fd);

	/* kpageflags: 0x3000 a compound head, 0x3001-0x3007 its tails. */
	snprintf(path, sizeof(path), "%s/proc/kpageflags", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	flags[0] = 1ull << TIER__KPF_COMPOUND_HEAD;
	for (i = 1; i < 8; i++)
		flags[i] = 1ull << TIER__KPF_COMPOUND_TAIL;
	assert_int_equal(pwrite(fd, flags, sizeof(flags), 0x3000 * 8), sizeof(flags));
	close(fd);

	/* An all-zero bitmap covering PFNs up to 0x7fff. */
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/page_idle/bitmap", t->dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 0x8000 / 8), 0);
	close(fd);
}


#endif
