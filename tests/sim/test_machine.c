/* test_machine.c - simulated machine presets run through the same topology
 * ranking as a real machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "backend/sim/machine.h"

static void discover(const char *preset, const char *ratio, struct tier_sim_machine *m,
		     struct tier_topology *t)
{
	struct tier_err err = { "" };

	if (tier_sim_machine_init(m, preset, ratio, 1ull << 30, &err))
		fail_msg("%s: %s", preset, err.msg);
	if (tier_topology_discover(&tier_sim_topology_ops, m, NULL, 0, t, &err))
		fail_msg("%s: %s", preset, err.msg);
}

static void test_every_preset_ranks_by_hmat(void **state)
{
	const struct tier_sim_preset *p;

	(void)state;
	for (p = tier_sim_presets; p->name; p++) {
		struct tier_sim_machine m;
		struct tier_topology t;

		discover(p->name, NULL, &m, &t);
		assert_int_equal(t.rank_source, TIER_RANK_HMAT);
		/* Each preset node is its own tier: distinct kinds of memory. */
		assert_int_equal(t.nr_tiers, p->nr_nodes);
		tier_topology_release(&t);
	}
}

static void test_dram_cxl_slow_matches_guest(void **state)
{
	struct tier_sim_machine m;
	struct tier_topology t;
	size_t i;

	(void)state;
	discover("dram-cxl-slow", NULL, &m, &t);
	for (i = 0; i < 3; i++)
		assert_int_equal(tier_topology_node_rank(&t, (int)i), (int)i);
	assert_int_equal(t.nodes[1].hmat.read_latency_ns, 250);
	assert_int_equal(t.nodes[2].hmat.read_bw_mbps, 2000);
	assert_int_equal(tier_topology_distance(&t, 0, 2), 50);
	assert_int_equal(t.nodes[0].nr_cpus, 2);
	assert_int_equal(t.nodes[2].nr_cpus, 0);
	tier_topology_release(&t);
}

static void test_hbm_ranks_above_dram(void **state)
{
	struct tier_sim_machine m;
	struct tier_topology t;

	(void)state;
	/* HBM's latency is a little above DRAM's, its bandwidth 8x: the
	 * latency-and-bandwidth model puts it first, one distance would not. */
	discover("hbm-dram-cxl", NULL, &m, &t);
	assert_int_equal(tier_topology_node_rank(&t, 0), 0);
	assert_true(t.nodes[0].hmat.read_latency_ns > t.nodes[1].hmat.read_latency_ns);
	assert_int_equal(tier_topology_node_rank(&t, 1), 1);
	assert_int_equal(tier_topology_node_rank(&t, 2), 2);
	tier_topology_release(&t);
}

static void test_ratio(void **state)
{
	struct tier_sim_machine m;
	struct tier_topology t;

	(void)state;
	discover("dram-cxl", NULL, &m, &t);
	assert_int_equal(t.nodes[1].mem_total_bytes, 4ull << 30);
	tier_topology_release(&t);
	discover("dram-cxl", "1:8", &m, &t);
	assert_int_equal(t.nodes[0].mem_total_bytes, 1ull << 30);
	assert_int_equal(t.nodes[1].mem_total_bytes, 8ull << 30);
	tier_topology_release(&t);
	discover("dram-cxl-slow", "1:4:8", &m, &t);
	assert_int_equal(t.nodes[2].mem_total_bytes, 8ull << 30);
	tier_topology_release(&t);
}

/* A trace's footprint sizes the ratio units (page granularity): the tiers
 * hold it with a quarter to spare, the fast tier a share of it; fixed
 * sizes stay. */
static void test_fit_to_footprint(void **state)
{
	static const struct tier_sim_preset fixed = {
		.name = "fixed",
		.nr_nodes = 2,
		.nodes = {
			{ "dram", 90, 100000, 90000, 0, 1, 64 },
			{ "cxl", 250, 32000, 28000, 0, 0, 256 },
		},
	};
	struct tier_err err = { "" };
	struct tier_sim_machine m;

	(void)state;
	assert_int_equal(tier_sim_machine_init(&m, "dram-cxl", "1:8", 1ull << 30, &err), 0);
	tier_sim_machine_fit(&m, 41 * 4096, 4096);
	/* 41 pages * 5/4 = 51.25 pages over 9 units: 6 pages a unit */
	assert_int_equal(m.node_bytes[0], 6 * 4096);
	assert_int_equal(m.node_bytes[1], 48 * 4096);
	/* the preset's own 1:4: 11-page units, a fast tier of a quarter */
	assert_int_equal(tier_sim_machine_init(&m, "dram-cxl", NULL, 1ull << 30, &err), 0);
	tier_sim_machine_fit(&m, 41 * 4096, 4096);
	assert_int_equal(m.node_bytes[0], 11 * 4096);
	assert_int_equal(m.node_bytes[1], 44 * 4096);
	/* one page still gets a page of fast memory */
	tier_sim_machine_fit(&m, 1, 4096);
	assert_int_equal(m.node_bytes[0], 4096);
	/* fixed sizes (a machine file's size_mb) are the operator's */
	assert_int_equal(tier_sim_machine_from_preset(&m, &fixed, NULL, 1ull << 30, &err), 0);
	tier_sim_machine_fit(&m, 41 * 4096, 4096);
	assert_int_equal(m.node_bytes[0], 64ull << 20);
	assert_int_equal(m.node_bytes[1], 256ull << 20);
}

static void expect_bad(const char *preset, const char *ratio, int code, const char *why)
{
	struct tier_sim_machine m;
	struct tier_err err = { "" };

	assert_int_equal(tier_sim_machine_init(&m, preset, ratio, 1ull << 30, &err), code);
	if (!strstr(err.msg, why))
		fail_msg("'%s' lacks '%s'", err.msg, why);
}

static void test_bad_input(void **state)
{
	(void)state;
	expect_bad("no-such", NULL, -ENOENT, "unknown machine preset 'no-such'");
	expect_bad("dram-cxl", "1:4:8", -EINVAL, "more than 2 parts");
	expect_bad("dram-cxl-slow", "1:4", -EINVAL, "2 parts, the machine has 3 tiers");
	expect_bad("dram-cxl", "1:0", -EINVAL, "part 2 is zero");
	expect_bad("dram-cxl", "1:x", -EINVAL, "found 'x'");
	expect_bad("dram-cxl", "1:", -EINVAL, "expected ':' between numbers");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_preset_ranks_by_hmat),
		cmocka_unit_test(test_dram_cxl_slow_matches_guest),
		cmocka_unit_test(test_hbm_ranks_above_dram),
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_fit_to_footprint),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests_name("sim-machine", tests, NULL, NULL);
}
