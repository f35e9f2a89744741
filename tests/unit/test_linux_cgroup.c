/* test_linux_cgroup.c - what tierd reads of cgroup v2 for the groups'
 * shares: a process's cgroup from /proc/PID/cgroup, a configured path made
 * relative to the mount, membership below a group, and memory.numa_stat
 * per node; malformed files name file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/cgroup.h"

struct tmp {
	char dir[64];
};

static void put(const struct tmp *t, const char *rel, const char *text)
{
	char path[256], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	for (slash = strchr(path + strlen(t->dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void tmp_init(struct tmp *t)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/tierd-cgroup.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
}

static void tmp_release(struct tmp *t)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
	assert_int_equal(system(cmd), 0);
}

static void test_proc_cgroup(void **state)
{
	struct tmp t;
	struct tier_linux_ctx ctx = { .procfs_root = NULL };
	struct tier_err err = { "" };
	char buf[256];

	(void)state;
	tmp_init(&t);
	ctx.procfs_root = t.dir;
	/* v1 lines first, then the v2 one. */
	put(&t, "100/cgroup", "12:memory:/old\n0::/system.slice/db.service\n");
	assert_int_equal(tier_linux_proc_cgroup(&ctx, 100, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "/system.slice/db.service");
	/* A removed group keeps its path with " (deleted)". */
	put(&t, "101/cgroup", "0::/batch (deleted)\n");
	assert_int_equal(tier_linux_proc_cgroup(&ctx, 101, buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "/batch");
	put(&t, "102/cgroup", "3:cpu:/x\n");
	assert_int_equal(tier_linux_proc_cgroup(&ctx, 102, buf, sizeof(buf), &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no cgroup v2 line"));
	put(&t, "103/cgroup", "0::batch\n");
	assert_int_equal(tier_linux_proc_cgroup(&ctx, 103, buf, sizeof(buf), &err), -EINVAL);
	assert_non_null(strstr(err.msg, "103/cgroup:1: '0::batch': not a cgroup path"));
	assert_int_equal(tier_linux_proc_cgroup(&ctx, 999, buf, sizeof(buf), &err), -ESRCH);
	assert_int_equal(tier_linux_proc_cgroup(&ctx, 100, buf, 8, &err), -ENAMETOOLONG);
	tmp_release(&t);
}

static void test_relative_and_contains(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(tier_linux_cgroup_relative("/sys/fs/cgroup", "db", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/db");
	assert_int_equal(tier_linux_cgroup_relative("/sys/fs/cgroup", "/sys/fs/cgroup/db/", buf,
						    sizeof(buf)), 0);
	assert_string_equal(buf, "/db");
	assert_int_equal(tier_linux_cgroup_relative("/sys/fs/cgroup/", "/sys/fs/cgroup", buf,
						    sizeof(buf)), 0);
	assert_string_equal(buf, "/");
	/* Not under the mount (nor a prefix that only looks like it). */
	assert_int_equal(tier_linux_cgroup_relative("/sys/fs/cgroup", "/sys/fs/cgroupx/a", buf,
						    sizeof(buf)), 0);
	assert_string_equal(buf, "/sys/fs/cgroupx/a");
	assert_int_equal(tier_linux_cgroup_relative("/sys/fs/cgroup", "a-very-long-group-name",
						    buf, 8), -ENAMETOOLONG);
	assert_true(tier_linux_cgroup_contains("/db", "/db"));
	assert_true(tier_linux_cgroup_contains("/db", "/db/replica"));
	assert_false(tier_linux_cgroup_contains("/db", "/dbx"));
	assert_false(tier_linux_cgroup_contains("/db/replica", "/db"));
	assert_true(tier_linux_cgroup_contains("/", "/anything"));
}

static void test_numa_stat(void **state)
{
	uint64_t anon[TIER_LINUX_MAX_NODES], file[TIER_LINUX_MAX_NODES];
	struct tier_err err = { "" };
	char dir[128];
	struct tmp t;

	(void)state;
	tmp_init(&t);
	put(&t, "db/memory.numa_stat",
	    "anon N0=134217728 N2=4096\nfile N0=8192 N1=0\nkernel_stack N0=16384\n");
	snprintf(dir, sizeof(dir), "%s/db", t.dir);
	assert_int_equal(tier_linux_cgroup_numa_stat(dir, anon, file, &err), 0);
	assert_int_equal(anon[0], 134217728);
	assert_int_equal(anon[1], 0);
	assert_int_equal(anon[2], 4096);
	assert_int_equal(file[0], 8192);
	/* Malformed: file and line named. */
	put(&t, "bad/memory.numa_stat", "anon N0=1\nfile N0=x\n");
	snprintf(dir, sizeof(dir), "%s/bad", t.dir);
	assert_int_equal(tier_linux_cgroup_numa_stat(dir, anon, file, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "memory.numa_stat:2: 'N0=x': expected N<node>=<bytes>"));
	/* A group without the memory controller, and one that is gone. */
	put(&t, "nomem/cgroup.procs", "");
	snprintf(dir, sizeof(dir), "%s/nomem", t.dir);
	assert_int_equal(tier_linux_cgroup_numa_stat(dir, anon, file, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "the memory controller is not enabled"));
	snprintf(dir, sizeof(dir), "%s/gone", t.dir);
	assert_int_equal(tier_linux_cgroup_numa_stat(dir, anon, file, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no such cgroup"));
	tmp_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_relative_and_contains),
		cmocka_unit_test(test_numa_stat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
