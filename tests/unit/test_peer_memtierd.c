/* test_peer_memtierd.c - the memtierd-heat peer shows the behaviour of
 * intel/memtierd's heat policy (pkg/memtier/policy_heat.go, mover.go,
 * counters_heatmap.go): upstream's defaults, which fill fast memory at
 * once, and what was measured in the test guest with an earlier memtierd
 * (memtierd-heat-gated): a range is not moved until 20 s after it is first
 * seen; the mover only ever uses the
 * first node of a class's node list; with NumaSize caps a move that failed
 * with ENOMEM is recorded as done and never retried; heat decays by
 * HeatRetention per second and is capped at HeatMax; the mover moves
 * Bandwidth x IntervalMs per turn, newest task first, and nothing at all
 * without a bandwidth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "../lib/policy_env.h"
#include "core/policies/peers.h"

/* dram-cxl-slow at 1:4:8 with 512 pages per unit: node 0 512 pages, node 1
 * 2048, node 2 4096. Eight regions of 512 pages. */
#define NR_PAGES 4096
#define RP 512

struct fx {
	struct test_env te;
	const struct tier_policy_ops *ops;
	struct tier_memtierd_heat_config cfg;
	void *priv;
	uint64_t hot_mask;	/* regions written in every scan */
};

/* node_of_region[r] places region r. */
static void fx_init(struct fx *f, const int node_of_region[8])
{
	uint64_t p;

	memset(f, 0, sizeof(*f));
	assert_int_equal(test_env_init(&f->te, "dram-cxl-slow", "1:4:8", RP, NR_PAGES), 0);
	f->ops = tier_policy_find("memtierd-heat");
	assert_non_null(f->ops);
	assert_string_equal(f->ops->default_tracker, "softdirty");
	assert_int_equal(f->ops->interval_us, 5000000);	/* ScanIntervalMs 5000 */
	f->te.env.interval_us = 500000;	/* scans every 500 ms here */
	f->te.env.max_batch = 1024;
	f->te.now_us = 1000000;
	for (p = 0; p < NR_PAGES; p++)
		test_env_place(&f->te, p, node_of_region[p / RP]);
	tier__memtierd_heat_defaults(&f->te.env, &f->cfg);
	memset(f->cfg.nr_heat_numas, 0, sizeof(f->cfg.nr_heat_numas));
	f->cfg.interval_ms = 1000;
	f->cfg.heat_classes = 2;
	/* The hot class goes to nodes 1 and 0, in that order. */
	f->cfg.heat_numas[1][0] = 1;
	f->cfg.heat_numas[1][1] = 0;
	f->cfg.nr_heat_numas[1] = 2;
}

static void fx_start(struct fx *f)
{
	struct tier_err err = { "" };

	if (tier__memtierd_heat_create(&f->te.env, &f->cfg, &f->priv, &err))
		fail_msg("create: %s", err.msg);
}

static void fx_release(struct fx *f)
{
	f->ops->destroy(f->priv);
	test_env_release(&f->te);
}

/* One tracker scan (every page of the hot regions written) and a tick. */
static void tick(struct fx *f)
{
	uint64_t r;

	for (r = 0; r < 8; r++)
		if (f->hot_mask & (UINT64_C(1) << r))
			test_env_observe(f->ops, f->priv, TIER_OBS_WRITTEN, r * RP, RP, 1, 1);
	f->te.now_us += f->te.env.interval_us;
	assert_int_equal(f->ops->tick(f->priv, f->te.now_us), 0);
}

static void run_until(struct fx *f, uint64_t t_us)
{
	while (f->te.now_us + f->te.env.interval_us <= t_us)
		tick(f);
}

static uint64_t on_node(const struct fx *f, uint64_t r, int n)
{
	uint64_t p, c = 0;

	for (p = r * RP; p < (r + 1) * RP; p++)
		c += f->te.page_node[p] == n;
	return c;
}

static const int node1_full[8] = { 1, 1, 1, 1, 2, 2, 2, 2 };

/* The configuration as upstream's defaults give it (memtierd_heat.c cites
 * each), and the earlier path selection only in memtierd-heat-gated. */
static void test_upstream_defaults(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, node1_full);
	tier__memtierd_heat_defaults(&f.te.env, &f.cfg);
	assert_int_equal(f.cfg.pages_in_region, 512);	/* trackerSoftDirtyDefaults */
	assert_true(f.cfg.heat_max == 1.0);		/* HeatmapConfigDefaults */
	assert_true(f.cfg.heat_retention == 0.9513);
	assert_int_equal(f.cfg.heat_classes, 10);
	assert_int_equal(f.cfg.mover_interval_ms, 10);	/* moverDefaults */
	assert_int_equal(f.cfg.mover_bandwidth_mbps, 100);
	assert_true(f.cfg.seed_numa_size_from_heat_numas);	/* SetConfig() at 17dc462 */
	assert_int_equal(f.cfg.numa_size_pages[0], -1);	/* no NumaSize */
	assert_null(f.ops->variant_of);
	assert_non_null(tier_policy_find("memtierd-heat-gated"));
	assert_string_equal(tier_policy_find("memtierd-heat-gated")->variant_of, "memtierd-heat");
	test_env_release(&f.te);
}

/* Upstream: HeatNumas nodes are unlimited numaSize entries, so a hot range
 * moves at the first round it is hot, with no 20 s wait. */
static void test_upstream_moves_without_waiting(void **state)
{
	struct fx f;
	static const int spread[8] = { 1, 1, 2, 2, 2, 2, 2, 2 };

	(void)state;
	fx_init(&f, spread);
	f.cfg.seed_numa_size_from_heat_numas = true;
	fx_start(&f);
	f.hot_mask = 1u << 4;
	run_until(&f, 4000000);
	assert_true(f.te.moves > 0);
	assert_int_equal(on_node(&f, 4, 1), RP);
	fx_release(&f);
}

/* No NumaSize: startMovesNoLimits(). Region 4 is hot from the first round
 * (t = 2 s, its `created`), yet nothing moves before it is 20 s old. The
 * destination is numas[0] = node 1, which is full: every page fails with
 * ENOMEM, node 0 with room is never tried, and the next rounds try node 1
 * again. Once node 1 has room, the range moves there. */
static void test_first_node_only_after_20s(void **state)
{
	struct fx f;
	uint64_t p, calls;

	(void)state;
	fx_init(&f, node1_full);
	f.cfg.seed_numa_size_from_heat_numas = false;	/* memtierd-heat-gated */
	fx_start(&f);
	f.hot_mask = 1u << 4;
	run_until(&f, 21500000);
	assert_true(tier__memtierd_heat_of(f.priv, 4 * RP) > 0.5);
	assert_int_equal(f.te.move_calls, 0);

	run_until(&f, 22000000);	/* the round at created + 20 s */
	assert_true(f.te.move_calls > 0);
	assert_int_equal(f.te.moves, 0);
	assert_int_equal(f.te.used[0], 0);
	calls = f.te.move_calls;
	run_until(&f, 26000000);
	assert_true(f.te.move_calls > calls);	/* retried, still node 1 */
	assert_int_equal(f.te.used[0], 0);

	/* Make room on node 1: move region 0 out of the way. */
	for (p = 0; p < RP; p++)
		test_env_place(&f.te, p, 2);
	run_until(&f, 28000000);
	assert_int_equal(on_node(&f, 4, 1), RP);
	assert_int_equal(f.te.used[0], 0);
	fx_release(&f);
}

/* With a NumaSize cap: startMovesFillFastFree(). No 20 s gate; the task
 * records the range as on node 1 at once, so the ENOMEM failure is never
 * retried, even after node 1 has room. */
static void test_enomem_is_remembered_with_numa_size(void **state)
{
	struct fx f;
	uint64_t p, calls;

	(void)state;
	fx_init(&f, node1_full);
	f.cfg.numa_size_pages[1] = 2048;
	fx_start(&f);
	f.hot_mask = 1u << 4;
	run_until(&f, 3000000);
	assert_true(f.te.move_calls > 0);
	assert_int_equal(f.te.moves, 0);
	calls = f.te.move_calls;
	assert_int_equal(tier__memtierd_tasks(f.priv), 0);

	for (p = 0; p < RP; p++)
		test_env_place(&f.te, p, 2);
	run_until(&f, 40000000);
	assert_int_equal(f.te.move_calls, calls);
	assert_int_equal(on_node(&f, 4, 1), 0);
	assert_int_equal(on_node(&f, 4, 2), RP);
	fx_release(&f);
}

/* Heatmap: heat = count / pages capped at HeatMax, then decays by
 * HeatRetention per second without accesses. */
static void test_heat_retention_and_cap(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, node1_full);
	fx_start(&f);
	f.hot_mask = 1u << 5;
	run_until(&f, 2000000);		/* two scans: 1024 / 512 = 2 */
	assert_true(fabs(tier__memtierd_heat_of(f.priv, 5 * RP) - 1.0) < 1e-9);
	assert_true(fabs(tier__memtierd_heat_of(f.priv, 6 * RP)) < 1e-9);
	f.hot_mask = 0;
	run_until(&f, 3000000);
	assert_true(fabs(tier__memtierd_heat_of(f.priv, 5 * RP) - 0.9513) < 1e-9);
	run_until(&f, 5000000);
	assert_true(fabs(tier__memtierd_heat_of(f.priv, 5 * RP) - pow(0.9513, 3)) < 1e-9);
	fx_release(&f);
}

static const int all_slow[8] = { 2, 2, 2, 2, 2, 2, 2, 2 };

/* Mover: 100 MB/s every 10 ms is 256 pages a turn; tasks are a stack (the
 * last added runs first, here region 5 before region 4); a task longer
 * than one turn costs one extra, empty turn. With unlimited NumaSize
 * entries (current upstream's seeding) the first node of the list wins. */
static void test_mover_pace_and_order(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, all_slow);
	f.cfg.seed_numa_size_from_heat_numas = true;
	f.te.env.interval_us = 10000;	/* one mover turn per tick */
	fx_start(&f);
	f.hot_mask = (1u << 4) | (1u << 5);
	run_until(&f, 2000000);		/* the first round plans both */
	assert_int_equal(on_node(&f, 5, 1), 256);
	assert_int_equal(on_node(&f, 4, 1), 0);
	tick(&f);
	assert_int_equal(on_node(&f, 5, 1), RP);
	assert_int_equal(on_node(&f, 4, 1), 0);
	tick(&f);			/* region 5's empty last turn */
	assert_int_equal(on_node(&f, 4, 1), 0);
	tick(&f);
	assert_int_equal(on_node(&f, 4, 1), 256);
	tick(&f);
	assert_int_equal(on_node(&f, 4, 1), RP);
	assert_int_equal(f.te.used[0], 0);
	fx_release(&f);
}

/* A mover without a bandwidth (count 0) drops every task as blocked. */
static void test_no_bandwidth_moves_nothing(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, all_slow);
	f.cfg.seed_numa_size_from_heat_numas = true;
	f.cfg.mover_bandwidth_mbps = 0;
	fx_start(&f);
	f.hot_mask = 1u << 4;
	run_until(&f, 10000000);
	assert_int_equal(f.te.move_calls, 0);
	assert_int_equal(on_node(&f, 4, 2), RP);
	fx_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_defaults),
		cmocka_unit_test(test_upstream_moves_without_waiting),
		cmocka_unit_test(test_first_node_only_after_20s),
		cmocka_unit_test(test_enomem_is_remembered_with_numa_size),
		cmocka_unit_test(test_heat_retention_and_cap),
		cmocka_unit_test(test_mover_pace_and_order),
		cmocka_unit_test(test_no_bandwidth_moves_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
