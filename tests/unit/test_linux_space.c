/* test_linux_space.c - the Linux address space map (backend/linux/space.h):
 * maps parsing, id stability and reuse across updates, translation and
 * lookups against procfs fixture trees (tests/fixtures/procfs, see its
 * README.md); node memory against sysfs fixtures; and the move_pages(2)
 * migrator and queries on this process and a child (real /proc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/linux/pfn_node.h"
#include "backend/linux/space.h"
#include "backend/linux/tracker_util.h"
#include "backend/linux/vmstat.h"

#define PROCFS TIERD_SOURCE_ROOT "/tests/fixtures/procfs/"
#define SYSFS TIERD_SOURCE_ROOT "/tests/fixtures/sysfs/"
#define PG 4096ull

/* Addresses of the space-v1/v2 fixtures (see the README). */
#define APP_RW 0x55ff00001000ull
#define HEAP 0x560000000000ull
#define A 0x7f0000000000ull
#define B 0x7f0000100000ull
#define C 0x7f0000200000ull
#define E 0x7f0000300000ull
#define STK 0x7ffc00000000ull
#define D 0x7f1000000000ull

struct forgets {
	uint64_t first[32], nr[32];
	size_t n;
};

static void record_forget(void *ctx, uint64_t first, uint64_t nr)
{
	struct forgets *f = ctx;

	assert_true(f->n < 32);
	f->first[f->n] = first;
	f->nr[f->n] = nr;
	f->n++;
}

/* Ids that map a page: all ids but the gaps huge-page alignment leaves
 * between mappings. */
static uint64_t held_ids(const struct tier_linux_space *s)
{
	uint64_t id, n = 0;

	for (id = 0; id < tier_linux_space_nr_pages(s); id++)
		n += tier_linux_space_addr(s, id, NULL, NULL) == 0;
	return n;
}

struct fixture {
	struct tier_linux_ctx ctx;
	char procfs[512];
	struct tier_linux_space *s;
	struct forgets fg;
	struct tier_err err;
};

static void fx_root(struct fixture *fx, const char *tree)
{
	snprintf(fx->procfs, sizeof(fx->procfs), PROCFS "%s", tree);
	fx->ctx.procfs_root = fx->procfs;
}

static void fx_init(struct fixture *fx, const char *tree)
{
	memset(fx, 0, sizeof(*fx));
	fx->ctx.sysfs_root = SYSFS "guest-3tier";
	fx->ctx.debugfs_root = "/nonexistent";
	fx_root(fx, tree);
	if (tier_linux_space_new(&fx->ctx, 12, &fx->s, &fx->err))
		fail_msg("space_new: %s", fx->err.msg);
}

static int fx_update(struct fixture *fx, const char *tree, const pid_t *pids, size_t n)
{
	fx_root(fx, tree);
	fx->fg.n = 0;
	fx->err.msg[0] = '\0';
	return tier_linux_space_update(fx->s, pids, n, record_forget, &fx->fg, &fx->err);
}

static uint64_t page_of(const struct fixture *fx, pid_t pid, uint64_t addr)
{
	uint64_t id = UINT64_MAX;

	if (!tier_linux_space_page(fx->s, pid, addr, &id))
		fail_msg("pid %d address 0x%llx not managed", (int)pid, (unsigned long long)addr);
	return id;
}

static bool managed(const struct fixture *fx, pid_t pid, uint64_t addr)
{
	return tier_linux_space_page(fx->s, pid, addr, NULL);
}

static void expect_addr(const struct fixture *fx, uint64_t id, pid_t pid, uint64_t addr)
{
	pid_t got_pid = 0;
	uint64_t got_addr = 0;

	assert_int_equal(tier_linux_space_addr(fx->s, id, &got_pid, &got_addr), 0);
	assert_int_equal(got_pid, pid);
	assert_int_equal(got_addr, addr);
}

struct extents {
	const struct fixture *fx;
	uint64_t last_end, pages;
};

/* Extents come in address order, each page's id where page_of finds it. */
static void check_extent(void *ctx, uint64_t addr, uint64_t first, uint64_t nr)
{
	struct extents *ex = ctx;

	assert_true(addr >= ex->last_end);
	assert_int_equal(page_of(ex->fx, 4201, addr), first);
	assert_int_equal(page_of(ex->fx, 4201, addr + (nr - 1) * PG), first + nr - 1);
	ex->last_end = addr + nr * PG;
	ex->pages += nr;
}

/* ---- parsing ---- */

static void test_parse_host(void **state)
{
	static const pid_t pids[] = { 4102, 2, 4104, 9999, 4101 };
	struct fixture fx;
	const uint8_t *owner;
	uint64_t i;

	(void)state;
	fx_init(&fx, "host");
	if (fx_update(&fx, "host", pids, 5))
		fail_msg("update: %s", fx.err.msg);
	/* 2 (kernel thread), 4104 (zombie), 9999 (gone) are dropped. */
	assert_int_equal(tier_linux_space_nr_procs(fx.s), 2);
	assert_int_equal(tier_linux_space_proc_pid(fx.s, 0), 4101);
	assert_int_equal(tier_linux_space_proc_pid(fx.s, 1), 4102);
	assert_int_equal(tier_linux_space_proc_pid(fx.s, 2), 0);
	/* 4101: 1 + 33 + 25600 + 2048 + 2 + 13 + 2 + 33; 4102: 1 + 1024 +
	 * 24576 + 2 + 13 + 33 pages hold ids. Ids of a mapping that can hold
	 * a huge page keep its alignment (id = page number modulo 512), so a
	 * few ids between mappings stay free: fewer than 512 a mapping. */
	{
		uint64_t nr = tier_linux_space_nr_pages(fx.s), held = 0, id;

		for (id = 0; id < nr; id++) {
			pid_t pid;
			uint64_t addr;

			if (tier_linux_space_addr(fx.s, id, &pid, &addr) == 0) {
				held++;
				if (pid == 4101 && addr >= 0x7f3a40000000 &&
				    addr < 0x7f3a40000000 + 25600 * 4096ull)
					assert_int_equal(id & 511, (addr >> 12) & 511);
			}
		}
		assert_int_equal(held, 27732 + 25649);
		assert_true(nr < held + 4 * 512);
	}
	assert_int_equal(fx.fg.n, 0);

	assert_true(managed(&fx, 4101, 0x55d0c0a04000));	/* exe .data, rw-p */
	assert_false(managed(&fx, 4101, 0x55d0c0a03000));	/* exe, r--p */
	assert_true(managed(&fx, 4101, 0x55d0c1e6b000));	/* [heap] last page */
	assert_false(managed(&fx, 4101, 0x55d0c1e6c000));	/* just past it */
	assert_true(managed(&fx, 4101, 0x7f3a40000000));	/* anonymous */
	assert_false(managed(&fx, 4101, 0x7f3a46400000));	/* ---p guard */
	assert_true(managed(&fx, 4101, 0x7f3a46401000));	/* [anon:worker stack] */
	assert_true(managed(&fx, 4101, 0x7f3a46ff9000));	/* libc rw-p */
	assert_true(managed(&fx, 4101, 0x7f3a47007000));	/* anon after libc */
	assert_false(managed(&fx, 4101, 0x7f3a47100000));	/* rw-s /dev/shm */
	assert_false(managed(&fx, 4101, 0x7f3a47200000));	/* /dev/dri/card0 */
	assert_false(managed(&fx, 4101, 0x7f3a47300000));	/* r--p file */
	assert_true(managed(&fx, 4101, 0x7f3a47401000));	/* rw-p "(deleted)" */
	assert_true(managed(&fx, 4101, 0x7ffd5e5d4000));	/* [stack] */
	assert_false(managed(&fx, 4101, 0x7ffd5e5f8000));	/* [vvar] */
	assert_false(managed(&fx, 4101, 0x7ffd5e5fc000));	/* [vdso] */
	assert_false(managed(&fx, 4101, 0xffffffffff600000ull));	/* [vsyscall] */
	assert_false(managed(&fx, 4103, 0x5611bc000000));	/* not managed */

	/* Ids in pid then address order on a first update; the 100 MiB
	 * anonymous mapping (2 MiB aligned) starts at the next id that is a
	 * multiple of 512, and the gap before it is taken by later small
	 * mappings. */
	assert_int_equal(page_of(&fx, 4101, 0x55d0c0a04000), 0);
	assert_int_equal(page_of(&fx, 4101, 0x55d0c1e4b000), 1);
	assert_int_equal(page_of(&fx, 4101, 0x7f3a40000000), 512);
	assert_int_equal(page_of(&fx, 4101, 0x7f3a40000fff), 512);
	assert_int_equal(page_of(&fx, 4101, 0x7f3a40001000), 513);
	assert_int_equal(page_of(&fx, 4101, 0x7f3a46ff9000), 34);	/* libc rw-p */
	expect_addr(&fx, 512 + 25599, 4101, 0x7f3a463ff000);
	{
		uint64_t first_4102 = page_of(&fx, 4102, 0x5600aa004000);

		expect_addr(&fx, first_4102, 4102, 0x5600aa004000);
	}
	assert_int_equal(tier_linux_space_addr(fx.s, tier_linux_space_nr_pages(fx.s), NULL, NULL),
			 -ENOENT);

	/* Each held id's owner is its process's slot (4101: 0, 4102: 1). */
	owner = tier_linux_space_page_owner(fx.s);
	for (i = 0; i < tier_linux_space_nr_pages(fx.s); i++) {
		pid_t pid;

		if (tier_linux_space_addr(fx.s, i, &pid, NULL)) {
			/* A gap left by alignment: no page, no owner. */
			assert_int_equal(owner[i], TIER_LINUX_OWNER_NONE);
			assert_int_equal(tier_linux_space_page_node(fx.s)[i], TIER_NODE_NONE);
			continue;
		}
		if (owner[i] != (pid == 4101 ? 0 : 1))
			fail_msg("page %llu of %d: owner %u", (unsigned long long)i, (int)pid,
				 owner[i]);
		/* Never queried yet: where a page is is not known. */
		assert_int_equal(tier_linux_space_page_node(fx.s)[i], TIER_NODE_NONE);
	}
	tier_linux_space_destroy(fx.s);
}

static void test_sparse_reservation(void **state)
{
	static const pid_t pid = 4105;
	struct fixture fx;

	(void)state;
	/* 4105: 128 MiB of heap and a 64 GiB reservation, more than the
	 * machine's 1.5 GiB (guest-3tier): left out. */
	fx_init(&fx, "host");
	assert_int_equal(fx_update(&fx, "host", &pid, 1), 0);
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 32768);
	assert_true(managed(&fx, 4105, 0x7f4000000000));
	assert_false(managed(&fx, 4105, 0x7f5000000000));
	tier_linux_space_destroy(fx.s);
}

static void expect_bad(const char *pid_dir, pid_t pid, const char *what)
{
	static const pid_t good[] = { 4201, 4202 };
	struct fixture fx;
	char want[256];
	int ret;

	fx_init(&fx, "space-v1");
	assert_int_equal(fx_update(&fx, "space-v1", good, 2), 0);
	ret = fx_update(&fx, "bad-maps", &pid, 1);
	assert_int_equal(ret, -EINVAL);
	snprintf(want, sizeof(want), "bad-maps/%s", pid_dir);
	if (!strstr(fx.err.msg, want) || !strstr(fx.err.msg, what))
		fail_msg("error '%s' lacks '%s' or '%s'", fx.err.msg, want, what);
	/* The space is as it was; nothing forgotten. */
	assert_int_equal(fx.fg.n, 0);
	assert_int_equal(tier_linux_space_nr_procs(fx.s), 2);
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 43);
	assert_int_equal(page_of(&fx, 4202, D), 41);
	tier_linux_space_destroy(fx.s);
}

static void test_malformed_maps(void **state)
{
	(void)state;
	expect_bad("4501/maps:3:", 4501, "bad permissions in '7f0000100000-7f0000104000 rwzp");
	expect_bad("4502/maps:2:", 4502, "overlaps");
	expect_bad("4503/maps:2:", 4503, "bad device");
	expect_bad("4504/maps:1:", 4504, "not page aligned");
}

/* ---- updates ---- */

/* space-v1: 4201 app .data 0, [heap] 1-8, A 9-24, B 25-28, C 29-36,
 * [stack] 37-40; 4202 D 41-42. */
static void load_v1(struct fixture *fx)
{
	static const pid_t pids[] = { 4202, 4201 };

	fx_init(fx, "space-v1");
	if (fx_update(fx, "space-v1", pids, 2))
		fail_msg("update: %s", fx->err.msg);
	assert_int_equal(tier_linux_space_nr_pages(fx->s), 43);
	assert_int_equal(page_of(fx, 4201, APP_RW), 0);
	assert_int_equal(page_of(fx, 4201, HEAP), 1);
	assert_int_equal(page_of(fx, 4201, A), 9);
	assert_int_equal(page_of(fx, 4201, B), 25);
	assert_int_equal(page_of(fx, 4201, C), 29);
	assert_int_equal(page_of(fx, 4201, STK), 37);
	assert_int_equal(page_of(fx, 4202, D), 41);
}

/* ---- numa_maps checks ---- */

/* A mapping whose numa_maps counts differ from the picture is queued for
 * a query; one that keeps differing (numa_maps and move_pages disagreeing)
 * is checked less and less often, and every time again once it agrees. */
static void test_verify_backoff(void **state)
{
	/* Both mappings (1 + 8 pages) differ every time they are read: the
	 * checks skipped after each difference in a row go 0, 1, 3, 7. */
	static const long long expect[] = { 9, 9, 0, 9, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 9 };
	struct fixture fx;
	size_t i;

	(void)state;
	load_v1(&fx);
	fx_root(&fx, "space-v1");
	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		if (tier_linux_space_verify(fx.s, UINT64_MAX) != expect[i])
			fail_msg("check %zu: expected %lld pages queued", i, expect[i]);
	/* The 15 checks due to be skipped, then one that agrees: every check
	 * reads the mappings again. */
	fx_root(&fx, "numa-maps-agree");
	for (i = 0; i < 16; i++)
		assert_int_equal(tier_linux_space_verify(fx.s, UINT64_MAX), 0);
	fx_root(&fx, "space-v1");
	assert_int_equal(tier_linux_space_verify(fx.s, UINT64_MAX), 9);
	assert_int_equal(tier_linux_space_verify(fx.s, UINT64_MAX), 9);
	assert_int_equal(tier_linux_space_verify(fx.s, UINT64_MAX), 0);
	tier_linux_space_destroy(fx.s);
}

static void test_update_unchanged(void **state)
{
	static const pid_t pids[] = { 4201, 4202 };
	struct fixture fx;
	uint64_t gen;

	(void)state;
	load_v1(&fx);
	gen = tier_linux_space_gen(fx.s);
	assert_int_equal(fx_update(&fx, "space-v1", pids, 2), 0);
	/* every address on the page it was: what the pages' nodes say holds */
	assert_int_equal(tier_linux_space_gen(fx.s), gen);
	assert_int_equal(fx.fg.n, 0);
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 43);
	assert_int_equal(page_of(&fx, 4201, A + 15 * PG), 24);
	assert_int_equal(page_of(&fx, 4202, D + PG), 42);
	tier_linux_space_destroy(fx.s);
}

static void test_update_grow_shrink_vanish(void **state)
{
	static const pid_t pids[] = { 4201, 4202 };
	const uint8_t *node, *owner;
	struct fixture fx;
	uint64_t i;

	uint64_t gen;

	(void)state;
	load_v1(&fx);
	gen = tier_linux_space_gen(fx.s);
	/* v2: [heap] grew by 4 pages, A lost its first 4, B went, C was
	 * remapped from another file, E is new, [stack] grew down 4 pages,
	 * 4202 exited. */
	if (fx_update(&fx, "space-v2", pids, 2))
		fail_msg("update: %s", fx.err.msg);
	assert_true(tier_linux_space_gen(fx.s) != gen);
	/* A's head 9-12; B 25-28 and C 29-36 (adjacent, one range); 4202. */
	assert_int_equal(fx.fg.n, 3);
	assert_int_equal(fx.fg.first[0], 9);
	assert_int_equal(fx.fg.nr[0], 4);
	assert_int_equal(fx.fg.first[1], 25);
	assert_int_equal(fx.fg.nr[1], 12);
	assert_int_equal(fx.fg.first[2], 41);
	assert_int_equal(fx.fg.nr[2], 2);

	/* Unchanged pages keep their ids. */
	assert_int_equal(page_of(&fx, 4201, APP_RW), 0);
	assert_int_equal(page_of(&fx, 4201, HEAP), 1);
	assert_int_equal(page_of(&fx, 4201, HEAP + 7 * PG), 8);
	assert_int_equal(page_of(&fx, 4201, A + 4 * PG), 13);
	assert_int_equal(page_of(&fx, 4201, A + 15 * PG), 24);
	assert_int_equal(page_of(&fx, 4201, STK), 37);
	/* New pages reuse released ids, first fit in address order:
	 * heap +4 -> 9-12, C' (8) -> 25-32, E -> 33; the stack's 4 new pages
	 * fit no free range (34-36, 41-42) and are appended: 43-46. */
	assert_int_equal(page_of(&fx, 4201, HEAP + 8 * PG), 9);
	assert_int_equal(page_of(&fx, 4201, HEAP + 11 * PG), 12);
	assert_int_equal(page_of(&fx, 4201, C), 25);
	assert_int_equal(page_of(&fx, 4201, C + 7 * PG), 32);
	assert_int_equal(page_of(&fx, 4201, E), 33);
	assert_int_equal(page_of(&fx, 4201, STK - 4 * PG), 43);
	assert_int_equal(page_of(&fx, 4201, STK - PG), 46);
	assert_false(managed(&fx, 4201, A));
	assert_false(managed(&fx, 4201, B));
	assert_false(managed(&fx, 4202, D));
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 47);
	assert_int_equal(tier_linux_space_nr_procs(fx.s), 1);
	expect_addr(&fx, 12, 4201, HEAP + 11 * PG);
	expect_addr(&fx, 46, 4201, STK - PG);
	{
		/* Runs of ids and addresses: the rest of an extent; the
		 * extents of a process in address order, ids that match. */
		struct extents ex = { .fx = &fx };
		uint64_t addr, nr;
		pid_t pid;

		assert_int_equal(tier_linux_space_run(fx.s, 12, &pid, &addr, &nr), 0);
		assert_int_equal(addr, HEAP + 11 * PG);
		assert_int_equal(nr, 1);
		assert_int_equal(tier_linux_space_run(fx.s, 25, &pid, &addr, &nr), 0);
		assert_int_equal(pid, 4201);
		assert_int_equal(addr, C);
		assert_int_equal(nr, 8);
		assert_int_equal(tier_linux_space_run(fx.s, 34, NULL, NULL, &nr), -ENOENT);
		assert_int_equal(tier_linux_space_extents(fx.s, 4201, check_extent, &ex), 0);
		assert_int_equal(ex.pages, 47 - 5);	/* all but 34-36 and 41-42 */
		assert_int_equal(tier_linux_space_extents(fx.s, 4202, check_extent, &ex), -ESRCH);
	}

	/* Ids no mapping holds: absent, no owner, not found. */
	node = tier_linux_space_page_node(fx.s);
	owner = tier_linux_space_page_owner(fx.s);
	for (i = 0; i < 47; i++) {
		bool held = !(i >= 34 && i <= 36) && i != 41 && i != 42;

		assert_int_equal(tier_linux_space_addr(fx.s, i, NULL, NULL), held ? 0 : -ENOENT);
		assert_int_equal(owner[i], held ? 0 : TIER_LINUX_OWNER_NONE);
		assert_int_equal(node[i], TIER_NODE_NONE);
	}
	tier_linux_space_destroy(fx.s);
}

static void test_update_split(void **state)
{
	static const pid_t pid = 4201;
	struct fixture fx;

	(void)state;
	load_v1(&fx);
	/* mprotect split A into rw / --- / r-- / rw; 4202 not asked for. */
	assert_int_equal(fx_update(&fx, "space-split", &pid, 1), 0);
	assert_int_equal(fx.fg.n, 2);
	assert_int_equal(fx.fg.first[0], 13);	/* the PROT_NONE part */
	assert_int_equal(fx.fg.nr[0], 4);
	assert_int_equal(fx.fg.first[1], 41);	/* 4202, no longer managed */
	assert_int_equal(fx.fg.nr[1], 2);
	assert_int_equal(page_of(&fx, 4201, A), 9);
	assert_false(managed(&fx, 4201, A + 4 * PG));
	assert_int_equal(page_of(&fx, 4201, A + 8 * PG), 17);	/* read-only anon */
	assert_int_equal(page_of(&fx, 4201, A + 12 * PG), 21);
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 43);
	tier_linux_space_destroy(fx.s);
}

static void test_update_reuses_ids(void **state)
{
	static const pid_t pid = 4301;
	const uint64_t X = 0x7f2000000000ull, Y = 0x7f2100000000ull;
	const uint64_t Z = 0x7f2200000000ull, W = 0x7f2300000000ull;
	struct fixture fx;
	int round;

	(void)state;
	fx_init(&fx, "churn-a");
	assert_int_equal(fx_update(&fx, "churn-a", &pid, 1), 0);
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 300);
	/* X and Z unmapped, W (150 pages) mapped: no free range holds 150,
	 * so W takes X's 100 ids whole and 50 of Z's. */
	assert_int_equal(fx_update(&fx, "churn-b", &pid, 1), 0);
	assert_int_equal(fx.fg.n, 2);
	assert_int_equal(fx.fg.first[0], 0);
	assert_int_equal(fx.fg.nr[0], 100);
	assert_int_equal(fx.fg.first[1], 200);
	assert_int_equal(fx.fg.nr[1], 100);
	assert_int_equal(page_of(&fx, 4301, W), 0);
	assert_int_equal(page_of(&fx, 4301, W + 99 * PG), 99);
	assert_int_equal(page_of(&fx, 4301, W + 100 * PG), 200);
	assert_int_equal(page_of(&fx, 4301, W + 149 * PG), 249);
	assert_int_equal(page_of(&fx, 4301, Y), 100);
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 300);
	/* Mappings coming and going do not grow the id space. */
	for (round = 0; round < 10; round++) {
		assert_int_equal(fx_update(&fx, round % 2 ? "churn-b" : "churn-a", &pid, 1), 0);
		assert_int_equal(page_of(&fx, 4301, Y), 100);
		assert_int_equal(tier_linux_space_nr_pages(fx.s), 300);
	}
	assert_int_equal(page_of(&fx, 4301, W), 0);
	assert_false(managed(&fx, 4301, X));
	assert_false(managed(&fx, 4301, Z));
	tier_linux_space_destroy(fx.s);
}

static void test_owner_slots(void **state)
{
	static const pid_t only_4202 = 4202, both[] = { 4202, 4201 };
	const uint8_t *owner;
	struct fixture fx;
	uint64_t id;

	(void)state;
	load_v1(&fx);
	assert_int_equal(tier_linux_space_page_owner(fx.s)[41], 1);
	/* 4201 leaves: 4202 keeps slot 1; slot 0 is free. */
	assert_int_equal(fx_update(&fx, "space-v1", &only_4202, 1), 0);
	assert_int_equal(tier_linux_space_nr_procs(fx.s), 2);
	assert_int_equal(tier_linux_space_proc_pid(fx.s, 0), 0);
	assert_int_equal(tier_linux_space_proc_pid(fx.s, 1), 4202);
	assert_int_equal(fx.fg.n, 1);
	assert_int_equal(fx.fg.first[0], 0);
	assert_int_equal(fx.fg.nr[0], 41);
	/* It comes back (same pid): a new process to us, slot 0 again, and
	 * its pages take the released ids. */
	assert_int_equal(fx_update(&fx, "space-v1", both, 2), 0);
	assert_int_equal(tier_linux_space_proc_pid(fx.s, 0), 4201);
	owner = tier_linux_space_page_owner(fx.s);
	id = page_of(&fx, 4201, A);
	assert_true(id < 43);
	assert_int_equal(owner[id], 0);
	assert_int_equal(owner[page_of(&fx, 4202, D)], 1);
	assert_int_equal(tier_linux_space_nr_pages(fx.s), 43);
	/* Nobody left. */
	assert_int_equal(fx_update(&fx, "space-v1", NULL, 0), 0);
	assert_int_equal(tier_linux_space_nr_procs(fx.s), 0);
	assert_int_equal(fx.fg.n, 1);
	assert_int_equal(fx.fg.first[0], 0);
	assert_int_equal(fx.fg.nr[0], 43);
	assert_false(managed(&fx, 4202, D));
	tier_linux_space_destroy(fx.s);
}

/* ---- translate ---- */

struct sunk {
	struct tier_obs obs[512];
	size_t n, calls;
};

static void sink(void *ctx, const struct tier_obs *obs, size_t n)
{
	struct sunk *k = ctx;

	assert_true(n > 0);
	assert_true(k->n + n <= 512);
	memcpy(&k->obs[k->n], obs, n * sizeof(*obs));
	k->n += n;
	k->calls++;
}

static void test_translate(void **state)
{
	const struct tier_linux_addr_obs in[] = {
		/* A's tail and B's head: two observations, the gap dropped. */
		{ .pid = 4201, .start = A + 2 * PG, .end = B + 2 * PG,
		  .kind = TIER_OBS_ACCESSED, .count = 7, .max = 20, .interval_us = 100000 },
		{ .pid = 4202, .start = D, .end = D + 2 * PG, .kind = TIER_OBS_WRITTEN,
		  .count = 1, .max = 1, .interval_us = 5000 },
		{ .pid = 9999, .start = A, .end = A + PG, .kind = TIER_OBS_ACCESSED },
		{ .pid = 4201, .start = 0x1000, .end = 0x2000, .kind = TIER_OBS_ACCESSED },
		/* A sample inside C. */
		{ .pid = 4201, .start = C + 3 * PG, .end = C + 4 * PG, .kind = TIER_OBS_SAMPLE,
		  .write = 1, .count = 10007 },
		/* The whole space of 4201: one per extent (6). */
		{ .pid = 4201, .start = 0, .end = UINT64_MAX & ~(PG - 1),
		  .kind = TIER_OBS_HINT_FAULT, .latency_us = 250 },
	};
	struct sunk *k = calloc(1, sizeof(*k));
	struct fixture fx;

	(void)state;
	load_v1(&fx);
	tier_linux_space_translate(fx.s, in, 6, sink, k);
	assert_int_equal(k->n, 2 + 1 + 1 + 6);
	assert_int_equal(k->obs[0].page, 11);
	assert_int_equal(k->obs[0].nr_pages, 14);
	assert_int_equal(k->obs[0].kind, TIER_OBS_ACCESSED);
	assert_int_equal(k->obs[0].count, 7);
	assert_int_equal(k->obs[0].max, 20);
	assert_int_equal(k->obs[0].interval_us, 100000);
	assert_int_equal(k->obs[1].page, 25);
	assert_int_equal(k->obs[1].nr_pages, 2);
	assert_int_equal(k->obs[2].page, 41);
	assert_int_equal(k->obs[2].nr_pages, 2);
	assert_int_equal(k->obs[2].kind, TIER_OBS_WRITTEN);
	assert_int_equal(k->obs[3].page, 32);
	assert_int_equal(k->obs[3].nr_pages, 1);
	assert_int_equal(k->obs[3].write, 1);
	assert_int_equal(k->obs[3].count, 10007);
	assert_int_equal(k->obs[4].page, 0);
	assert_int_equal(k->obs[4].nr_pages, 1);
	assert_int_equal(k->obs[5].page, 1);
	assert_int_equal(k->obs[5].nr_pages, 8);
	assert_int_equal(k->obs[9].page, 37);
	assert_int_equal(k->obs[9].nr_pages, 4);
	assert_int_equal(k->obs[9].latency_us, 250);

	/* Many observations go to the sink in several batches. */
	{
		struct tier_linux_addr_obs many[300];
		size_t i;

		for (i = 0; i < 300; i++)
			many[i] = (struct tier_linux_addr_obs){
				.pid = 4201, .start = A + (i % 16) * PG, .end = A + (i % 16 + 1) * PG,
				.kind = TIER_OBS_ACCESSED, .count = (uint32_t)i, .max = 1000,
			};
		memset(k, 0, sizeof(*k));
		tier_linux_space_translate(fx.s, many, 300, sink, k);
		assert_int_equal(k->n, 300);
		assert_true(k->calls >= 2);
		assert_int_equal(k->obs[299].page, 9 + 299 % 16);
		assert_int_equal(k->obs[299].count, 299);
	}
	free(k);
	tier_linux_space_destroy(fx.s);
}

/* ---- node memory ---- */

static void test_mem_ops(void **state)
{
	struct fixture fx;
	uint64_t total = 0, free_pages = 0;

	(void)state;
	fx_init(&fx, "space-v1");
	assert_int_equal(tier_linux_mem_ops.node_pages(fx.s, 1, &total, &free_pages), 0);
	assert_int_equal(total, 515436 / 4);
	/* MemFree less the kernel's reserve: node 1's zones' high
	 * watermarks (zoneinfo: 1500 + 32 pages), and the gap from their
	 * min watermarks again (500 + 0). */
	assert_int_equal(free_pages, 489720 / 4 - 1532 - 500);
	assert_int_equal(tier_linux_mem_ops.node_pages(fx.s, 3, &total, &free_pages), -ENOENT);
	assert_int_equal(tier_linux_mem_ops.node_pages(fx.s, -1, &total, &free_pages), -ENOENT);
	fx.ctx.sysfs_root = SYSFS "bad-meminfo";
	assert_int_equal(tier_linux_mem_ops.node_pages(fx.s, 2, &total, &free_pages), -EINVAL);
	assert_int_equal(tier_linux_mem_ops.node_pages(fx.s, 1, &total, &free_pages), 0);
	tier_linux_space_destroy(fx.s);
}

static void test_new_errors(void **state)
{
	struct tier_linux_ctx ctx = { .sysfs_root = "/sys", .procfs_root = "/proc" };
	struct tier_linux_space *s = (void *)1;
	struct tier_err err = { "" };

	(void)state;
	assert_int_equal(tier_linux_space_new(&ctx, 9, &s, &err), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err.msg, "page shift 9"));
}

/* ---- nodes from pagemap's frames ---- */

/* The memory blocks each node lists, names that are no block skipped. */
static void test_pfn_nodes(void **state)
{
	struct tier_linux_pfn_nodes t = { 0 };
	struct tier_err err = { "" };
	const uint64_t b = 0x8000000 / 4096;	/* frames per 128 MiB block */

	(void)state;
	if (tier_linux_pfn_nodes_load(&t, SYSFS "pfn-nodes", 4096, &err))
		fail_msg("load: %s", err.msg);
	assert_int_equal(t.block_frames, b);
	assert_int_equal(tier_linux_pfn_node(&t, 0), 0);
	assert_int_equal(tier_linux_pfn_node(&t, 2 * b - 1), 0);
	assert_int_equal(tier_linux_pfn_node(&t, 2 * b), -1);	/* a hole */
	assert_int_equal(tier_linux_pfn_node(&t, 3 * b), -1);	/* not under a node */
	assert_int_equal(tier_linux_pfn_node(&t, 4 * b + 7), 1);
	assert_int_equal(tier_linux_pfn_node(&t, 5 * b), -1);
	assert_int_equal(tier_linux_pfn_node(&t, 6 * b), 2);
	assert_int_equal(tier_linux_pfn_node(&t, 8 * b - 1), 2);
	assert_int_equal(tier_linux_pfn_node(&t, 8 * b), -1);	/* past the last */
	assert_int_equal(tier_linux_pfn_node(&t, UINT64_C(1) << 54), -1);
	/* A failed reload keeps the table. */
	assert_int_equal(tier_linux_pfn_nodes_load(&t, SYSFS "pfn-nodes-bad", 4096, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "block_size_bytes"));
	assert_non_null(strstr(err.msg, "0x1000 blocks"));
	assert_int_equal(tier_linux_pfn_node(&t, 4 * b), 1);
	assert_int_equal(tier_linux_pfn_nodes_load(&t, SYSFS "pfn-nodes-none", 4096, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no node lists a memory block"));
	assert_int_equal(tier_linux_pfn_nodes_load(&t, SYSFS "pfn-nodes", 3000, &err), -EINVAL);
	assert_int_equal(tier_linux_pfn_nodes_load(&t, SYSFS "nonexistent", 4096, &err), -ENOENT);
	assert_int_equal(t.block_frames, b);
	tier_linux_pfn_nodes_free(&t);
	assert_int_equal(tier_linux_pfn_node(&t, 0), -1);
}

/* Writes the pagemap entries pm[0, n) for pid's pages from base into the
 * procfs tree at root. */
static void put_pagemap(const char *root, pid_t pid, uint64_t base, const uint64_t *pm, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/pagemap", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fseeko(f, (off_t)(base >> 12) * 8, SEEK_SET), 0);
	assert_int_equal(fwrite(pm, sizeof(*pm), n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* A query reads the nodes from pagemap's frames; frames in no known block
 * are asked of move_pages(2), and so is everything once the frames read
 * as 0 (a reader without CAP_SYS_ADMIN). The process exists only in the
 * fixture: move_pages finds no such process, so what it is asked comes
 * back absent. */
/* A process directory under root with one mapping in its maps. */
static void put_proc(const char *root, pid_t pid, const char *maps_line)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", maps_line);
	assert_int_equal(fclose(f), 0);
}

static void put_numa_maps(const char *root, pid_t pid, const char *line)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/numa_maps", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", line);
	assert_int_equal(fclose(f), 0);
}

/* A mapping of 128 pages, all on node 1 in the picture: as many pages
 * spread otherwise (moved) are queried again; a total one page higher
 * (a mapping that grew or merged with a new one) is left to the next
 * read of the maps; a quarter of it in question is queried again. */
static void test_verify_changing(void **state)
{
	const uint64_t b = 0x8000000 / 4096, base = 0x7f0000000000;
	struct tier_linux_ctx ctx = { .sysfs_root = SYSFS "pfn-nodes", .debugfs_root = "/nonexistent" };
	char root[] = "/tmp/tierd-verify-XXXXXX", path[512];
	struct tier_linux_space *s;
	struct tier_linux_space_diff d;
	struct tier_err err = { "" };
	const pid_t pid = 4194001;
	uint64_t pm[128], i;

	(void)state;
	assert_non_null(mkdtemp(root));
	ctx.procfs_root = root;
	put_proc(root, pid, "7f0000000000-7f0000080000 rw-p 00000000 00:00 0 ");
	for (i = 0; i < 128; i++)
		pm[i] = TIER__PM_PRESENT | (4 * b + 16 + i);	/* node 1's frames */
	put_pagemap(root, pid, base, pm, 128);
	assert_int_equal(tier_linux_space_new(&ctx, 12, &s, &err), 0);
	if (tier_linux_space_update(s, &pid, 1, NULL, NULL, &err))
		fail_msg("update: %s", err.msg);
	assert_int_equal(tier_linux_space_query(s, 128, &err), 0);

	put_numa_maps(root, pid, "7f0000000000 default anon=128 dirty=128 N1=128 kernelpagesize_kB=4");
	assert_int_equal(tier_linux_space_verify(s, UINT64_MAX), 0);
	put_numa_maps(root, pid, "7f0000000000 default anon=129 dirty=129 N1=129 kernelpagesize_kB=4");
	assert_int_equal(tier_linux_space_verify(s, UINT64_MAX), 0);
	put_numa_maps(root, pid, "7f0000000000 default anon=128 dirty=128 N0=2 N1=126 kernelpagesize_kB=4");
	assert_int_equal(tier_linux_space_verify(s, UINT64_MAX), 128);
	tier_linux_space_last_diff(s, &d);
	assert_int_equal(d.pid, pid);
	assert_int_equal(d.start, base);
	assert_int_equal(d.theirs[0], 2);
	assert_int_equal(d.theirs[1], 126);
	assert_int_equal(d.mine[1], 128);
	assert_int_equal(tier_linux_space_query(s, 128, &err), 0);
	put_numa_maps(root, pid, "7f0000000000 default anon=96 dirty=96 N1=96 kernelpagesize_kB=4");
	assert_int_equal(tier_linux_space_verify(s, UINT64_MAX), 128);
	tier_linux_space_destroy(s);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	assert_int_equal(system(path), 0);
}

/* The churn counters: read from a vmstat file (missing counters read 0,
 * a kernel without pgmigrate_success is told apart), and what counts as
 * pages moved by other hands than tierd's. */
static void test_churn(void **state)
{
	char root[] = "/tmp/tierd-vmstat-XXXXXX", path[512];
	struct tier_linux_churn a, b;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_int_equal(tier_linux_churn_read(root, &a), -ENOENT);
	snprintf(path, sizeof(path), "%s/vmstat", root);
	assert_non_null(f = fopen(path, "w"));
	fputs("nr_free_pages 1000\npswpin 7\npgmigrate_success 120\npgmigrate_fail 3\n"
	      "thp_collapse_alloc 2\nthp_collapse_alloc_failed 9\n", f);
	fclose(f);
	assert_int_equal(tier_linux_churn_read(root, &a), 0);
	assert_int_equal(a.migrated, 120);
	assert_int_equal(a.swapped_in, 7);
	assert_int_equal(a.collapsed, 2);
	assert_non_null(f = fopen(path, "w"));
	fputs("nr_free_pages 1000\npgmigrate_success 150\n", f);	/* no swap, no THP */
	fclose(f);
	assert_int_equal(tier_linux_churn_read(root, &b), 0);
	assert_int_equal(b.swapped_in, 0);
	assert_int_equal(b.collapsed, 0);
	assert_non_null(f = fopen(path, "w"));
	fputs("nr_free_pages 1000\n", f);	/* no CONFIG_MIGRATION */
	fclose(f);
	assert_int_equal(tier_linux_churn_read(root, &b), -ENODATA);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	assert_int_equal(system(path), 0);

	/* tierd's own moves, and only those */
	b = a;
	b.migrated += 40;
	assert_false(tier_linux_churn_foreign(&a, &b, 40));
	assert_false(tier_linux_churn_foreign(&a, &b, 41));	/* some of tierd's were no-ops */
	assert_true(tier_linux_churn_foreign(&a, &b, 39));	/* one page more: someone else */
	assert_true(tier_linux_churn_foreign(&a, &b, 0));
	assert_false(tier_linux_churn_foreign(&a, &a, 0));
	b = a;
	b.swapped_in++;
	assert_true(tier_linux_churn_foreign(&a, &b, 1000));
	b = a;
	b.collapsed++;
	assert_true(tier_linux_churn_foreign(&a, &b, 1000));
	b = a;
	b.migrated--;		/* went back: not the counters of before */
	assert_true(tier_linux_churn_foreign(&a, &b, 1000));

	/* this host's own */
	assert_int_equal(tier_linux_churn_read("/proc", &a), 0);
}

struct pieces {
	uint64_t start[32], end[32];
	uint8_t node[32];
	size_t n;
};

static void record_piece(void *ctx, uint64_t start, uint64_t end, uint8_t node)
{
	struct pieces *p = ctx;

	assert_true(p->n < 32);
	p->start[p->n] = start;
	p->end[p->n] = end;
	p->node[p->n++] = node;
}

static void test_pagemap_query(void **state)
{
	const uint64_t b = 0x8000000 / 4096, base = 0x7f0000000000;
	const uint64_t P = TIER__PM_PRESENT;
	uint64_t pm[16] = {
		P | 5, P | 9, P | (4 * b + 7), TIER__PM_SWAPPED | 123, P | (6 * b), P | (7 * b + 1),
		P | (2 * b), P | (3 * b), P | TIER__PM_FILE | (b + 9),
	};
	static const uint8_t want[16] = { 0, 0, 1, 0xff, 2, 2, 0xff, 0xff, 0, 1, 1, 1, 1, 1, 1, 1 };
	struct tier_linux_ctx ctx = { .sysfs_root = SYSFS "pfn-nodes", .debugfs_root = "/nonexistent" };
	struct tier_linux_migrate_stats st, before;
	struct tier_linux_space *s;
	struct tier_err err = { "" };
	char root[] = "/tmp/tierd-pagemap-XXXXXX", path[512];
	const pid_t pid = 4194000;
	const uint8_t *node;
	uint64_t first, i, gen;

	(void)state;
	assert_non_null(mkdtemp(root));
	ctx.procfs_root = root;
	put_proc(root, pid, "7f0000000000-7f0000010000 rw-p 00000000 00:00 0 ");
	for (i = 9; i < 16; i++)
		pm[i] = P | (4 * b + i);
	put_pagemap(root, pid, base, pm, 16);

	assert_int_equal(tier_linux_space_new(&ctx, 12, &s, &err), 0);
	if (tier_linux_space_update(s, &pid, 1, NULL, NULL, &err))
		fail_msg("update: %s", err.msg);
	assert_true(tier_linux_space_page(s, pid, base, &first));
	gen = tier_linux_space_gen(s);
	assert_int_equal(tier_linux_space_query(s, 16, &err), 0);
	/* nodes found: what they say changed */
	assert_true(tier_linux_space_gen(s) != gen);
	node = tier_linux_space_page_node(s);
	for (i = 0; i < 16; i++)
		if (node[first + i] != want[i])
			fail_msg("page %llu: node %u, expected %u", (unsigned long long)i,
				 node[first + i], want[i]);
	tier_linux_space_migrate_stats(s, &st);
	assert_int_equal(st.pagemap_pages, 14);
	assert_int_equal(st.queried_pages, 2);	/* the frames in no node's block */
	/* The nodes of an address range, in pieces of one node: none before
	 * and after the mapping, and for another process. */
	{
		static const uint8_t runs[] = { 0xff, 0, 1, 0xff, 2, 0xff, 0, 1, 0xff };
		static const unsigned at[] = { 0, 2, 4, 5, 6, 8, 10, 11, 18, 19 };
		struct pieces pc = { .n = 0 };

		tier_linux_space_nodes(s, pid, base - 2 * 4096, base + 17 * 4096, record_piece, &pc);
		assert_int_equal(pc.n, 9);
		for (i = 0; i < pc.n; i++) {
			assert_int_equal(pc.node[i], runs[i]);
			assert_int_equal(pc.start[i], base - 2 * 4096 + at[i] * 4096);
			assert_int_equal(pc.end[i], base - 2 * 4096 + at[i + 1] * 4096);
		}
		pc.n = 0;
		tier_linux_space_nodes(s, pid + 1, base, base + 4096, record_piece, &pc);
		assert_int_equal(pc.n, 1);
		assert_int_equal(pc.node[0], TIER_NODE_NONE);
	}

	/* Queried again, every page where it was: nothing changed. */
	gen = tier_linux_space_gen(s);
	assert_int_equal(tier_linux_space_query(s, 16, &err), 0);
	assert_int_equal(tier_linux_space_gen(s), gen);
	/* Page 1 unmapped since: absent at the next query (round robin). */
	pm[1] = 0;
	put_pagemap(root, pid, base, pm, 16);
	assert_int_equal(tier_linux_space_query(s, 16, &err), 0);
	assert_true(tier_linux_space_gen(s) != gen);
	node = tier_linux_space_page_node(s);
	assert_int_equal(node[first + 1], TIER_NODE_NONE);
	assert_int_equal(node[first + 2], 1);

	/* Frames hidden (read as 0): move_pages for this page and all the rest,
	 * from now on. */
	pm[2] = P;
	put_pagemap(root, pid, base, pm, 16);
	tier_linux_space_migrate_stats(s, &before);
	assert_int_equal(tier_linux_space_query(s, 16, &err), 0);
	assert_int_equal(tier_linux_space_query(s, 16, &err), 0);
	tier_linux_space_migrate_stats(s, &st);
	assert_int_equal(st.pagemap_pages, before.pagemap_pages + 2);	/* pages 0 and 1 */
	assert_int_equal(st.queried_pages, before.queried_pages + 14 + 16);
	tier_linux_space_destroy(s);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

/* ---- real processes (this one and a child) ---- */

static const struct tier_linux_ctx live_ctx = {
	.sysfs_root = "/sys", .procfs_root = "/proc", .debugfs_root = "/sys/kernel/debug",
};

/* move_pages(2) may be filtered (seccomp in containers). */
static bool move_pages_usable(void)
{
	int status = -1;
	char *p = aligned_alloc(PG, PG);
	void *pages[1] = { p };
	long r;

	p[0] = 1;
	r = numa_move_pages(0, 1, pages, NULL, &status, 0);
	free(p);
	return r == 0 && status >= 0;
}

static int node_of(pid_t pid, uint64_t addr)
{
	void *pages[1] = { (void *)(uintptr_t)addr };
	int status = -1000;

	if (numa_move_pages(pid, 1, pages, NULL, &status, 0))
		return -1000;
	return status;
}

static void test_live_query(void **state)
{
	struct tier_linux_space *s;
	struct tier_err err = { "" };
	const size_t nr = 64;
	char *p;
	pid_t self = getpid();
	uint64_t i, base = 0, id, known;
	struct tier_linux_migrate_stats st;
	struct tier_linux_pfn_nodes t = { 0 };
	const uint8_t *node;
	int here, zeros;

	(void)state;
	if (!move_pages_usable())
		skip();
	p = mmap(NULL, nr * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	for (i = 0; i < nr; i += 2)
		p[i * PG] = 1;
	/* Every fourth page only read: the shared zero page where the kernel
	 * maps one, which move_pages calls absent (-EFAULT), and so must
	 * pagemap's reading (some kernels give a page of its own). */
	for (i = 1, zeros = 0; i < nr; i += 4)
		zeros += ((volatile char *)p)[i * PG];
	assert_int_equal(zeros, 0);
	here = node_of(0, (uint64_t)(uintptr_t)p);
	assert_true(here >= 0);
	assert_int_equal(tier_linux_space_new(&live_ctx, 12, &s, &err), 0);
	if (tier_linux_space_update(s, &self, 1, NULL, NULL, &err))
		fail_msg("update: %s", err.msg);
	assert_true(tier_linux_space_page(s, self, (uint64_t)(uintptr_t)p, &base));
	for (i = 1; i < nr; i++) {
		assert_true(tier_linux_space_page(s, self, (uint64_t)(uintptr_t)p + i * PG, &id));
		assert_int_equal(id, base + i);	/* one mapping, one extent */
	}
	/* Every page is new: none was queried yet. */
	assert_int_equal(tier_linux_space_nr_fresh(s), held_ids(s));
	/* A bounded query resolves at most that many pages. */
	assert_int_equal(tier_linux_space_query(s, 10, &err), 0);
	assert_int_equal(tier_linux_space_nr_fresh(s), held_ids(s) - 10);
	node = tier_linux_space_page_node(s);
	for (i = 0, known = 0; i < tier_linux_space_nr_pages(s); i++)
		known += node[i] != TIER_NODE_NONE;
	assert_true(known <= 10);
	/* Enough calls cover everything. */
	for (i = 0; i * 4096 <= tier_linux_space_nr_pages(s) + 4096; i++)
		assert_int_equal(tier_linux_space_query(s, 4096, &err), 0);
	assert_int_equal(tier_linux_space_nr_fresh(s), 0);
	node = tier_linux_space_page_node(s);
	for (i = 0; i < nr; i++) {
		int want = i % 2 == 0 ? here : i % 4 == 1 ? node_of(0, (uintptr_t)p + i * PG) : -1;

		if (node[base + i] != (want < 0 ? TIER_NODE_NONE : want))
			fail_msg("page %llu: node %d, move_pages says %d", (unsigned long long)i,
				 node[base + i], want);
	}
	/* As root where sysfs lists memory blocks, from pagemap's frames. */
	tier_linux_space_migrate_stats(s, &st);
	if (geteuid() == 0 && !tier_linux_pfn_nodes_load(&t, "/sys", PG, &err))
		assert_true(st.pagemap_pages >= nr);
	tier_linux_pfn_nodes_free(&t);
	print_message("# %llu pages placed from pagemap, %llu asked of move_pages\n",
		      (unsigned long long)st.pagemap_pages, (unsigned long long)st.queried_pages);
	tier_linux_space_destroy(s);
	munmap(p, nr * PG);
}

/* Pauses of a query: one between each two of its chunks of 4,096 pages,
 * none after the last. */
static void count_pause(void *ctx)
{
	(*(unsigned *)ctx)++;
}

static void test_live_query_pauses(void **state)
{
	const size_t nr = 3 * 4096 + 100;
	struct tier_linux_space *s;
	struct tier_err err = { "" };
	pid_t self = getpid();
	unsigned pauses = 0;
	char *p;

	(void)state;
	if (!move_pages_usable())
		skip();
	/* Never touched: ids (and a query) all the same. */
	p = mmap(NULL, nr * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(tier_linux_space_new(&live_ctx, 12, &s, &err), 0);
	if (tier_linux_space_update(s, &self, 1, NULL, NULL, &err))
		fail_msg("update: %s", err.msg);
	assert_true(held_ids(s) >= nr);
	tier_linux_space_set_pause(s, count_pause, &pauses);
	assert_int_equal(tier_linux_space_query(s, nr, &err), 0);
	assert_int_equal(pauses, 3);
	assert_int_equal(tier_linux_space_query(s, 4096, &err), 0);
	assert_int_equal(pauses, 3);
	tier_linux_space_set_pause(s, NULL, NULL);
	assert_int_equal(tier_linux_space_query(s, nr, &err), 0);
	assert_int_equal(pauses, 3);
	tier_linux_space_destroy(s);
	munmap(p, nr * PG);
}

static int first_absent_node(void)
{
	char path[64];
	int n;

	for (n = 1; n < 255; n++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", n);
		if (access(path, F_OK))
			return n;
	}
	return -1;
}

static void test_live_move(void **state)
{
	struct tier_linux_migrate_stats st;
	struct tier_linux_space *s;
	struct tier_err err = { "" };
	uint64_t pages[8], base;
	int nodes[8], status[8];
	pid_t self = getpid();
	char *p;
	int here, absent = first_absent_node();
	long moved;

	(void)state;
	if (!move_pages_usable())
		skip();
	p = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	p[0] = p[PG] = p[2 * PG] = p[3 * PG] = 1;	/* pages 4-7 never touched */
	here = node_of(0, (uint64_t)(uintptr_t)p);
	assert_int_equal(tier_linux_space_new(&live_ctx, 12, &s, &err), 0);
	assert_int_equal(tier_linux_space_update(s, &self, 1, NULL, NULL, &err), 0);
	assert_true(tier_linux_space_page(s, self, (uint64_t)(uintptr_t)p, &base));

	pages[0] = base;	nodes[0] = here;	/* stays: status = node */
	pages[1] = base + 1;	nodes[1] = here;
	pages[2] = base + 4;	nodes[2] = here;	/* not present */
	pages[3] = tier_linux_space_nr_pages(s) + 5;	nodes[3] = here;	/* no such id */
	pages[4] = base + 2;	nodes[4] = 255;		/* no such node */
	pages[5] = base + 3;	nodes[5] = absent;	/* node without memory */
	pages[6] = base + 5;	nodes[6] = -1;
	moved = tier_linux_migrator_ops.move(s, pages, nodes, status, 7);
	assert_int_equal(moved, 2);
	assert_int_equal(status[0], here);
	assert_int_equal(status[1], here);
	assert_int_equal(status[2], -ENOENT);
	assert_int_equal(status[3], -EFAULT);
	assert_int_equal(status[4], -EINVAL);
	assert_int_equal(status[5], -ENODEV);
	assert_int_equal(status[6], -EINVAL);
	assert_int_equal(tier_linux_space_page_node(s)[base], here);
	assert_int_equal(tier_linux_space_page_node(s)[base + 4], TIER_NODE_NONE);
	/* The page bound for a node that failed is still where it was. */
	assert_int_equal(node_of(0, (uint64_t)(uintptr_t)p + 3 * PG), here);
	tier_linux_space_migrate_stats(s, &st);
	assert_int_equal(st.moved_pages, 2);
	assert_int_equal(st.gone, 2);
	assert_int_equal(st.other, 3);
	assert_int_equal(st.nomem + st.busy + st.access_denied, 0);
	/* One move call; the stop at the absent node is re-queried. */
	assert_int_equal(st.calls, 2);
	assert_int_equal(tier_linux_migrator_ops.move(s, pages, nodes, status, 0), 0);
	tier_linux_space_destroy(s);
	munmap(p, 8 * PG);
}

/* A child maps and touches 16 pages, reports the address, and waits. */
static pid_t spawn_child(uint64_t *addr)
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char *p = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t a = (uint64_t)(uintptr_t)p;
		int i;

		for (i = 0; i < 16; i++)
			p[i * PG] = 1;
		if (write(fds[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], addr, sizeof(*addr)), sizeof(*addr));
	close(fds[0]);
	return pid;
}

static void test_live_process_exits(void **state)
{
	struct tier_linux_migrate_stats st;
	struct tier_linux_space *s;
	struct tier_err err = { "" };
	struct forgets fg = { .n = 0 };
	uint64_t addr, pages[16], base, held, forgot;
	int nodes[16], status[16], i, here;
	siginfo_t info;
	pid_t child;

	(void)state;
	if (!move_pages_usable())
		skip();
	child = spawn_child(&addr);
	here = node_of(child, addr);
	assert_true(here >= 0);
	assert_int_equal(tier_linux_space_new(&live_ctx, 12, &s, &err), 0);
	assert_int_equal(tier_linux_space_update(s, &child, 1, record_forget, &fg, &err), 0);
	assert_true(tier_linux_space_page(s, child, addr, &base));
	for (i = 0; i < 16; i++) {
		pages[i] = base + (uint64_t)i;
		nodes[i] = here;
	}
	assert_int_equal(tier_linux_migrator_ops.move(s, pages, nodes, status, 8), 8);

	/* Killed, not reaped: a zombie (move_pages: EINVAL, no mm). */
	kill(child, SIGKILL);
	assert_int_equal(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT), 0);
	assert_int_equal(tier_linux_migrator_ops.move(s, pages + 8, nodes + 8, status + 8, 4), 0);
	for (i = 8; i < 12; i++)
		assert_int_equal(status[i], -ENOENT);
	/* Reaped (ESRCH). */
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(tier_linux_migrator_ops.move(s, pages + 12, nodes + 12, status + 12, 4), 0);
	for (i = 12; i < 16; i++)
		assert_int_equal(status[i], -ENOENT);
	assert_int_equal(tier_linux_space_page_node(s)[base + 12], TIER_NODE_NONE);
	tier_linux_space_migrate_stats(s, &st);
	assert_int_equal(st.moved_pages, 8);
	assert_int_equal(st.gone, 8);
	assert_int_equal(st.other, 0);
	/* Queries of a gone process are not errors either. */
	assert_int_equal(tier_linux_space_query(s, 100, &err), 0);
	/* The next update drops it and forgets all its ids. */
	held = held_ids(s);
	assert_int_equal(tier_linux_space_update(s, &child, 1, record_forget, &fg, &err), 0);
	assert_int_equal(tier_linux_space_nr_procs(s), 0);
	/* Every id it held, in ranges apart where alignment left gaps. */
	for (i = 0, forgot = 0; i < (int)fg.n; i++) {
		assert_true(fg.first[i] + fg.nr[i] <= tier_linux_space_nr_pages(s));
		forgot += fg.nr[i];
	}
	assert_true(fg.n >= 1);
	assert_int_equal(forgot, held);
	tier_linux_space_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_host),
		cmocka_unit_test(test_sparse_reservation),
		cmocka_unit_test(test_malformed_maps),
		cmocka_unit_test(test_update_unchanged),
		cmocka_unit_test(test_verify_backoff),
		cmocka_unit_test(test_verify_changing),
		cmocka_unit_test(test_update_grow_shrink_vanish),
		cmocka_unit_test(test_update_split),
		cmocka_unit_test(test_update_reuses_ids),
		cmocka_unit_test(test_owner_slots),
		cmocka_unit_test(test_translate),
		cmocka_unit_test(test_mem_ops),
		cmocka_unit_test(test_new_errors),
		cmocka_unit_test(test_pfn_nodes),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_pagemap_query),
		cmocka_unit_test(test_live_query),
		cmocka_unit_test(test_live_query_pauses),
		cmocka_unit_test(test_live_move),
		cmocka_unit_test(test_live_process_exits),
	};

	return cmocka_run_group_tests_name("linux-space", tests, NULL, NULL);
}
