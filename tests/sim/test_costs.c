/* test_costs.c - tiersim's cost model: every CPU second of tiering work is
 * charged to the core it runs on, and the application's slowdown (its time
 * with the charged costs / with none) says what it cost, whichever way the
 * work was done (docs/tiersim.md, The model). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "backend/sim/engine.h"
#include "core/policy.h"
#include "sim_run.h"

/* The result's figures add up: slowdown = (accesses + stalls + daemon CPU
 * on the application's cores) / accesses, and AMAT's time is the accesses'
 * plus the stalls it counts. */
static void assert_adds_up(const struct tier_sim_result *r)
{
	assert_true(r->access_s > 0);
	assert_true(fabs(r->slowdown - (r->access_s + r->app_stall_s + r->daemon_on_app_s) /
					       r->access_s) < 1e-12);
	assert_true(r->daemon_on_app_s <= r->daemon_cpu_s + 1e-15);
}

/* A policy that only scans (static never moves; the idle tracker scans
 * every page's accessed bit each tick, in a daemon): on the application's
 * cores the scan slows it down; with a spare core it costs nothing. AMAT,
 * which counts only the application's own stalls, is the same both ways. */
static void test_scan_only_spare_core(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "static");
	struct tier_sim_result shared, spare;

	(void)state;
	p.tracker = "idle";
	run_ok(&p, &shared);
	p.app_cores = 1;
	run_ok(&p, &spare);
	assert_int_equal(shared.migrated_bytes, 0);
	assert_int_equal(shared.machine_cores, 2);
	assert_int_equal(shared.app_cores, 2);	/* the default: every core */
	assert_int_equal(spare.app_cores, 1);
	assert_true(shared.daemon_cpu_s > 0);
	assert_true(shared.daemon_on_app_s == shared.daemon_cpu_s);
	assert_true(shared.slowdown > 1 + 1e-4);
	assert_true(spare.daemon_on_app_s == 0);
	assert_true(fabs(spare.slowdown - 1) < 1e-12);
	assert_true(shared.amat_ns == spare.amat_ns);
	assert_adds_up(&shared);
	assert_adds_up(&spare);
}

/* Faults are the application's own: a spare core does not take them
 * (static with hint faults only: the scanner and the faults run in the
 * task). */
static void test_faults_stay_with_the_application(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "static");
	struct tier_sim_result shared, spare;

	(void)state;
	p.tracker = "hintfault";
	run_ok(&p, &shared);
	p.app_cores = 1;
	run_ok(&p, &spare);
	assert_true(shared.app_stall_s > 0);
	assert_true(shared.daemon_cpu_s == 0);
	assert_true(shared.slowdown > 1 + 1e-3);
	assert_true(shared.slowdown == spare.slowdown);
	/* AMAT's time = the accesses' + the stalls. */
	assert_true(fabs(shared.amat_ns * (double)shared.accesses / 1e9 -
			 (shared.access_s + shared.app_stall_s)) < 1e-9);
	assert_adds_up(&shared);
}

/* Moves the first n pages of node `from` to node `to` in one call, in the
 * application's thread (env in_task, as kernel-nb's fault path) or in a
 * daemon's; returns the pages moved. */
static long move_pages(struct tier_sim *s, int from, int to, size_t n, bool in_task)
{
	struct tier_env *env = tier_sim_env(s);
	uint64_t pages[256];
	int nodes[256], status[256];
	size_t k = 0;
	uint64_t p;
	long moved;

	assert_true(n <= 256);
	for (p = 0; p < env->nr_pages && k < n; p++)
		if (env->page_node[p] == from) {
			pages[k] = p;
			nodes[k++] = to;
		}
	*env->in_task = in_task;
	moved = env->migrator->move(env->migrator_priv, pages, nodes, status, k);
	*env->in_task = false;
	return moved;
}

/* One run of static on gups-hotset that moves 256 pages to the slow tier
 * and back every 100 ms, in the application's thread or a daemon's. */
static void run_moves(bool in_task, unsigned app_cores, struct tier_sim_result *r)
{
	struct tier_sim_params p = params("gups-hotset", "static");
	struct tier_err err = { "" };
	struct tier_sim *s;
	uint64_t t;

	p.tracker = "none";
	p.app_cores = app_cores;
	if (tier_sim_new(&p, &s, &err))
		fail_msg("%s", err.msg);
	for (t = 100000; tier_sim_advance(s, t, &err) > 0; t += 100000) {
		assert_int_equal(move_pages(s, 0, 1, 256, in_task), 256);
		assert_int_equal(move_pages(s, 1, 0, 256, in_task), 256);
	}
	assert_string_equal(err.msg, "");
	tier_sim_result(s, 0, r);
	tier_sim_destroy(s);
}

/* The same CPU cost, charged as the application's own work (a fault
 * path's moves) or as a daemon's, gives the same slowdown when both land
 * on the application's cores; with a spare core the daemon's is free and
 * the fault path's is not. */
static void test_task_and_daemon_cost_alike(void **state)
{
	struct tier_sim_result task, daemon, task1, daemon1;

	(void)state;
	run_moves(true, 0, &task);
	run_moves(false, 0, &daemon);
	assert_true(task.migrated_bytes > 0);
	assert_true(task.migrated_bytes == daemon.migrated_bytes);
	assert_true(task.amat_ns == daemon.amat_ns);
	assert_true(task.policy_cpu_s == daemon.policy_cpu_s);
	assert_true(task.daemon_cpu_s == 0);
	assert_true(daemon.daemon_cpu_s > 0);
	assert_true(fabs(task.app_stall_s - daemon.app_stall_s - daemon.daemon_cpu_s) < 1e-12);
	assert_true(task.slowdown > 1 + 1e-3);
	assert_true(fabs(task.slowdown - daemon.slowdown) < 1e-12);
	assert_adds_up(&task);
	assert_adds_up(&daemon);

	run_moves(true, 1, &task1);
	run_moves(false, 1, &daemon1);
	assert_true(task1.slowdown == task.slowdown);
	assert_true(daemon1.slowdown < daemon.slowdown);
	/* Only the shootdowns are left: they stall the application. */
	assert_true(fabs(daemon1.slowdown - (daemon1.access_s + daemon1.app_stall_s) /
						    daemon1.access_s) < 1e-12);
}

/* A daemon with more work than the spare cores have room for spills onto
 * the application's cores, in proportion: idle scans of a large footprint
 * every millisecond (kernel-nb's old tracker) take more than a core. */
static void test_spare_core_overflows(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "kernel-nb");
	struct tier_sim_result shared, spare;
	double k = 1;	/* (2 - 1) / 1 spare core per application core */
	double own;

	(void)state;
	p.tracker = "hintfault,idle";
	p.unit_bytes = 32u << 20;	/* 40960 pages: 2 ms of scan a tick */
	p.duration_us = 1000000;
	run_ok(&p, &shared);
	p.app_cores = 1;
	run_ok(&p, &spare);
	assert_true(spare.daemon_cpu_s > spare.access_s + spare.app_stall_s);
	own = spare.access_s + spare.app_stall_s;
	assert_true(fabs(spare.daemon_on_app_s - (spare.daemon_cpu_s - k * own) / (1 + k)) <
		    1e-9);
	assert_true(spare.slowdown > 1);
	assert_true(spare.slowdown < shared.slowdown);
	assert_adds_up(&spare);
}

/* The oracle's moves cost what anyone's do: AMAT leaves them out (it is a
 * bound), the slowdown does not. */
static void test_oracle_pays_for_moves(void **state)
{
	struct tier_sim_params p = params("gups-moving-hotset", "oracle");
	struct tier_sim_result r;

	(void)state;
	run_ok(&p, &r);
	assert_true(r.migrated_bytes > 0);
	assert_true(r.daemon_cpu_s > 0);
	assert_true(r.slowdown > 1);
	assert_true(fabs(r.amat_ns * (double)r.accesses / 1e9 - r.access_s) < 1e-9);
	assert_adds_up(&r);
}

static void test_too_many_app_cores(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "static");
	struct tier_sim_result r;
	struct tier_err err = { "" };

	(void)state;
	p.app_cores = 3;
	assert_int_equal(tier_sim_run(&p, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "app cores 3: the machine 'dram-cxl' has 2 cores"));
}

/* tierd's steps keep to a CPU share as the daemon's do (core/pace.h):
 * on a 16 GiB footprint a step visits every page (about a third of a core
 * at a step every 100 ms); at the daemon's default share (5%, half of it
 * beside DAMON) the steps come further apart once the bucket's burst is
 * spent, and the moves the budget held back go on in resumes between
 * them. Its CPU, and so the application's slowdown, drop; its placement
 * holds. At a share its steps never exhaust, they come every interval. */
static void test_paced_steps_keep_their_share(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "tierd");
	struct tier_sim_result open, paced;

	(void)state;
	p.machine = "server-dram-cxl";
	p.unit_bytes = 0;
	p.duration_us = 6000000;
	p.max_cpu_percent = 100;
	run_ok(&p, &open);
	p.max_cpu_percent = 0;		/* the daemon's default */
	run_ok(&p, &paced);
	assert_int_equal(open.policy_steps, 59);
	assert_int_equal(open.policy_resumes, 0);
	/* (half as many, 28-29 of 59, as the steps' cost stands) */
	assert_true(paced.policy_steps * 3 < open.policy_steps * 2);
	assert_true(paced.policy_resumes > 0);
	assert_true(paced.daemon_cpu_s < 0.6 * open.daemon_cpu_s);
	assert_true(paced.slowdown < open.slowdown - 0.1);
	assert_true(paced.amat_ns < 1.03 * open.amat_ns);
	assert_adds_up(&open);
	assert_adds_up(&paced);
}

/* Where steps are cheap (a small footprint) the share never spaces them:
 * a step every interval at the default share as at 100%; the peers step
 * at their own intervals whatever the share. */
static void test_cheap_steps_every_interval(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "tierd");
	struct tier_sim_result a, b;

	(void)state;
	run_ok(&p, &a);
	p.max_cpu_percent = 100;
	run_ok(&p, &b);
	assert_int_equal(a.policy_steps, 29);
	assert_int_equal(a.policy_steps, b.policy_steps);
	assert_true(a.amat_ns == b.amat_ns);
	p = params("gups-hotset", "memtis");
	p.max_cpu_percent = 1;
	run_ok(&p, &a);
	p.max_cpu_percent = 100;
	run_ok(&p, &b);
	assert_true(a.policy_steps > 0);
	assert_int_equal(a.policy_steps, b.policy_steps);
	assert_true(a.amat_ns == b.amat_ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_only_spare_core),
		cmocka_unit_test(test_faults_stay_with_the_application),
		cmocka_unit_test(test_task_and_daemon_cost_alike),
		cmocka_unit_test(test_spare_core_overflows),
		cmocka_unit_test(test_oracle_pays_for_moves),
		cmocka_unit_test(test_too_many_app_cores),
		cmocka_unit_test(test_paced_steps_keep_their_share),
		cmocka_unit_test(test_cheap_steps_every_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
