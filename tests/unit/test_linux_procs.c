/* test_linux_procs.c - process selection (backend/linux/procs.h) against
 * the procfs and cgroup fixture trees (tests/fixtures/procfs/host and
 * tests/fixtures/cgroup/unified, see tests/fixtures/procfs/README.md), and
 * once against the real /proc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/procs.h"

#define PROCFS TIERD_SOURCE_ROOT "/tests/fixtures/procfs/"
#define CGROUP TIERD_SOURCE_ROOT "/tests/fixtures/cgroup/unified"
#define MIB (1024ull * 1024)

static const struct tier_linux_ctx host = {
	.sysfs_root = "/nonexistent", .procfs_root = PROCFS "host",
	.debugfs_root = "/nonexistent",
};

/* Runs a selection and returns its result as "p1 p2 ..." (static). */
static const char *selected(const struct tier_linux_ctx *ctx,
			    const struct tier_linux_select *sel, int want_ret,
			    struct tier_err *err)
{
	static char buf[256];
	size_t nr = 99, i, len = 0;
	pid_t *out = (void *)1;
	int ret;

	err->msg[0] = '\0';
	ret = tier_linux_select_processes(ctx, sel, &out, &nr, err);
	if (ret != want_ret)
		fail_msg("returned %d, expected %d (%s)", ret, want_ret, err->msg);
	buf[0] = '\0';
	for (i = 0; i < nr; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? " " : "",
					(int)out[i]);
	free(out);
	return buf;
}

/* The fixture pids must not collide with ours (we never select ourselves). */
static int setup(void **state)
{
	pid_t self = getpid();

	(void)state;
	return self == 1 || self == 2 || (self >= 4101 && self <= 4107) ? -1 : 0;
}

static void test_default_min_rss(void **state)
{
	struct tier_linux_select sel = { .min_rss_bytes = 64 * MIB };
	struct tier_err err;

	(void)state;
	/* memhog 200 MiB, postgres 96 MiB, java 128 MiB (its exe unreadable
	 * does not matter without a pattern); the shell and init are small. */
	assert_string_equal(selected(&host, &sel, 0, &err), "4101 4102 4105");
	sel.min_rss_bytes = 100 * MIB;
	assert_string_equal(selected(&host, &sel, 0, &err), "4101 4105");
	sel.min_rss_bytes = 200 * MIB;
	assert_string_equal(selected(&host, &sel, 0, &err), "4101");
	sel.min_rss_bytes = 200 * MIB + 1;
	assert_string_equal(selected(&host, &sel, 0, &err), "");
}

static void test_no_kernel_threads_or_zombies(void **state)
{
	struct tier_linux_select sel = { .min_rss_bytes = 0 };
	struct tier_err err;

	(void)state;
	/* 2 is kthreadd, 4104 a zombie; 4107 is a thread of 4101. */
	assert_string_equal(selected(&host, &sel, 0, &err), "1 4101 4102 4103 4105");
}

static void test_exe_pattern(void **state)
{
	struct tier_linux_select sel = { .exe_pattern = "memhog" };
	struct tier_err err;

	(void)state;
	assert_string_equal(selected(&host, &sel, 0, &err), "4101");
	sel.exe_pattern = "post*";
	assert_string_equal(selected(&host, &sel, 0, &err), "4102");
	sel.exe_pattern = "/usr/lib/postgresql/*/bin/postgres";
	assert_string_equal(selected(&host, &sel, 0, &err), "4102");
	sel.exe_pattern = "/usr/bin/*";
	assert_string_equal(selected(&host, &sel, 0, &err), "4103");
	/* Every readable exe: not 4105 (no link), not the kernel thread. */
	sel.exe_pattern = "*";
	assert_string_equal(selected(&host, &sel, 0, &err), "1 4101 4102 4103");
	sel.exe_pattern = "*";
	sel.min_rss_bytes = 64 * MIB;
	assert_string_equal(selected(&host, &sel, 0, &err), "4101 4102");
	sel.exe_pattern = "nothing-like-it";
	assert_string_equal(selected(&host, &sel, 0, &err), "");
}

static void test_pids(void **state)
{
	static const pid_t pids[] = { 4103, 4107, 2, 9999, 4104, 4103 };
	struct tier_linux_select sel = { .pids = pids, .nr_pids = 6 };
	struct tier_err err;

	(void)state;
	/* 4107 stands for its process 4101; 2, 9999 and 4104 drop out. */
	assert_string_equal(selected(&host, &sel, 0, &err), "4101 4103");
	sel.min_rss_bytes = 64 * MIB;
	assert_string_equal(selected(&host, &sel, 0, &err), "4101");
	sel.exe_pattern = "dash";
	assert_string_equal(selected(&host, &sel, 0, &err), "");
}

static void test_cgroups(void **state)
{
	static const char *const db[] = { "db" };
	static const char *const two[] = { "db", CGROUP "/batch" };
	static const pid_t p1 = 4105;
	struct tier_linux_select sel = { .cgroups = db, .nr_cgroups = 1,
					 .cgroup_mount = CGROUP };
	struct tier_err err;

	(void)state;
	assert_string_equal(selected(&host, &sel, 0, &err), "4102 4103");
	sel.min_rss_bytes = 64 * MIB;
	assert_string_equal(selected(&host, &sel, 0, &err), "4102");
	/* Relative and absolute paths, and pids, together. */
	sel.cgroups = two;
	sel.nr_cgroups = 2;
	sel.pids = &p1;
	sel.nr_pids = 1;
	assert_string_equal(selected(&host, &sel, 0, &err), "4101 4102 4105");
	/* The root cgroup by relative path. */
	sel.nr_cgroups = 1;
	sel.nr_pids = 0;
	sel.min_rss_bytes = 0;
	sel.cgroups = (const char *const[]){ "." };
	assert_string_equal(selected(&host, &sel, 0, &err), "1 4103");
	sel.cgroups = (const char *const[]){ "empty" };
	assert_string_equal(selected(&host, &sel, 0, &err), "");
}

static void test_cgroup_removed(void **state)
{
	static const char *const some_gone[] = { "db", "gone", "batch" };
	static const char *const all_gone[] = { "gone", "also-gone" };
	struct tier_linux_select sel = { .cgroups = some_gone, .nr_cgroups = 3,
					 .cgroup_mount = CGROUP };
	struct tier_err err;

	(void)state;
	/* The others are still returned, with -ENOENT and a clear message. */
	assert_string_equal(selected(&host, &sel, -ENOENT, &err), "4101 4102 4103");
	assert_non_null(strstr(err.msg, "cgroup gone (" CGROUP "/gone): removed"));
	assert_null(strstr(err.msg, "more"));
	sel.cgroups = all_gone;
	sel.nr_cgroups = 2;
	assert_string_equal(selected(&host, &sel, -ENOENT, &err), "");
	assert_non_null(strstr(err.msg, "cgroup gone ("));
	assert_non_null(strstr(err.msg, "(and 1 more)"));
}

static void test_cgroup_errors(void **state)
{
	struct tier_linux_ctx no_cg2 = host, escaped = host;
	struct tier_linux_select sel = { .nr_cgroups = 1, .cgroup_mount = CGROUP };
	struct tier_err err;
	char mount[256];

	(void)state;
	sel.cgroups = (const char *const[]){ "notacg" };
	assert_string_equal(selected(&host, &sel, -ENOTDIR, &err), "");
	assert_non_null(strstr(err.msg, "notacg: not a cgroup v2 directory"));
	sel.cgroups = (const char *const[]){ "bad" };
	assert_string_equal(selected(&host, &sel, -EINVAL, &err), "");
	assert_non_null(strstr(err.msg, "bad/cgroup.procs:2: expected a pid, found 'abc'"));

	/* Relative paths start at the cgroup2 mount from mountinfo. */
	assert_int_equal(tier_linux_cgroup2_mount(&host, mount, sizeof(mount), &err), 0);
	assert_string_equal(mount, "/sys/fs/cgroup/unified");
	escaped.procfs_root = PROCFS "escaped";
	assert_int_equal(tier_linux_cgroup2_mount(&escaped, mount, sizeof(mount), &err), 0);
	assert_string_equal(mount, "/mnt/cgroup two");
	assert_int_equal(tier_linux_cgroup2_mount(&escaped, mount, 8, &err), -ENAMETOOLONG);
	no_cg2.procfs_root = PROCFS "no-cgroup2";
	assert_int_equal(tier_linux_cgroup2_mount(&no_cg2, mount, sizeof(mount), &err), -ENODEV);
	assert_non_null(strstr(err.msg, "no-cgroup2/self/mountinfo: no cgroup2 file system"));
	sel.cgroup_mount = NULL;
	sel.cgroups = (const char *const[]){ "db" };
	assert_string_equal(selected(&no_cg2, &sel, -ENODEV, &err), "");
	assert_non_null(strstr(err.msg, "cgroup db: "));
}

static void test_malformed_status(void **state)
{
	struct tier_linux_ctx bad = host;
	struct tier_linux_select sel = { .min_rss_bytes = 0 };
	struct tier_err err;

	(void)state;
	bad.procfs_root = PROCFS "bad-status";
	assert_string_equal(selected(&bad, &sel, -EINVAL, &err), "");
	assert_non_null(strstr(err.msg, "bad-status/4401/status:23: malformed 'VmRSS:"));
}

static void test_live_self_excluded(void **state)
{
	static const struct tier_linux_ctx live = {
		.sysfs_root = "/sys", .procfs_root = "/proc", .debugfs_root = "/sys/kernel/debug",
	};
	pid_t self = getpid(), parent = getppid(), *out;
	struct tier_linux_select sel = { .pids = &self, .nr_pids = 1 };
	struct tier_err err;
	size_t nr, i;
	bool saw_parent = false;

	(void)state;
	assert_string_equal(selected(&live, &sel, 0, &err), "");
	sel.nr_pids = 0;
	assert_int_equal(tier_linux_select_processes(&live, &sel, &out, &nr, &err), 0);
	for (i = 0; i < nr; i++) {
		assert_int_not_equal(out[i], self);
		saw_parent |= out[i] == parent;
		if (i)
			assert_true(out[i - 1] < out[i]);
	}
	/* Our parent (a shell or the test runner) has memory of its own. */
	assert_true(saw_parent);
	free(out);
}

static void test_cpu_seconds(void **state)
{
	const struct tier_linux_ctx ctx = {
		.sysfs_root = "/nonexistent", .procfs_root = PROCFS "stat",
		.debugfs_root = "/nonexistent",
	};
	double hz = (double)sysconf(_SC_CLK_TCK), s = -1;

	(void)state;
	assert_int_equal(tier_linux_cpu_seconds(&ctx, 127, &s), 0);
	assert_true(s > 4321 / hz - 1e-9 && s < 4321 / hz + 1e-9);
	assert_int_equal(tier_linux_cpu_seconds(&ctx, 4107, &s), 0);
	assert_true(s > 300 / hz - 1e-9 && s < 300 / hz + 1e-9);
	assert_int_equal(tier_linux_cpu_seconds(&ctx, 66, &s), -EINVAL);
	assert_int_equal(tier_linux_cpu_seconds(&ctx, 9999, &s), -ESRCH);
}

/* The processes are re-read every refresh_ms while that costs at most a
 * quarter of the steps' share, further apart where it costs more - at
 * most 30 s (or refresh_ms, where longer) - and every refresh_ms with no
 * share to keep. */
static void test_refresh_gap(void **state)
{
	(void)state;
	/* 5 ms a re-read, a 2.5% share: 5 / 0.00625 = 0.8 s, under 1 s */
	assert_int_equal(tier_linux_refresh_gap_us(5000000, 1000000, 2.5), 1000000);
	/* 80 ms (1,000 processes): 12.8 s */
	assert_int_equal(tier_linux_refresh_gap_us(80000000, 1000000, 2.5), 12800000);
	/* 400 ms: 64 s, held at 30 s */
	assert_int_equal(tier_linux_refresh_gap_us(400000000, 1000000, 2.5),
			 TIER_LINUX_REFRESH_MAX_US);
	/* ... or at refresh_ms where that is longer */
	assert_int_equal(tier_linux_refresh_gap_us(400000000, 60000000, 2.5), 60000000);
	/* 100 ms at a 10 s refresh_ms: 16 s */
	assert_int_equal(tier_linux_refresh_gap_us(100000000, 10000000, 2.5), 16000000);
	/* no share to keep */
	assert_int_equal(tier_linux_refresh_gap_us(400000000, 1000000, 0), 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_min_rss),
		cmocka_unit_test(test_no_kernel_threads_or_zombies),
		cmocka_unit_test(test_exe_pattern),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_cgroups),
		cmocka_unit_test(test_cgroup_removed),
		cmocka_unit_test(test_cgroup_errors),
		cmocka_unit_test(test_malformed_status),
		cmocka_unit_test(test_live_self_excluded),
		cmocka_unit_test(test_cpu_seconds),
		cmocka_unit_test(test_refresh_gap),
	};

	return cmocka_run_group_tests_name("linux-procs", tests, setup, NULL);
}
