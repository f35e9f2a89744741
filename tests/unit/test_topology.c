/* test_topology.c - tier ranking from kernel tiers, HMAT, SLIT and an
 * operator override, on topologies built in memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/ops.h"
#include "core/topology.h"

struct spec {
	int id;
	int nr_cpus;
	int mem;		/* has memory */
	int kernel_tier;	/* -1 none */
	uint32_t lat, bw;	/* HMAT read figures; 0 = none */
};

/* Builds a topology from specs; distances: 10 local, else 10 * lat ratio
 * when latencies are known, else 20. */
static void build(struct tier_topology *t, const struct spec *s, size_t n)
{
	size_t i, j;
	int cpu = 0;

	tier_topology_init(t);
	assert_int_equal(tier_topology_alloc_nodes(t, n), 0);
	for (i = 0; i < n; i++) {
		struct tier_node *nd = &t->nodes[i];
		int cpus[16], k, row[16];

		nd->id = s[i].id;
		for (k = 0; k < s[i].nr_cpus; k++)
			cpus[k] = cpu++;
		assert_int_equal(tier_node_set_cpus(nd, cpus, (size_t)k), 0);
		nd->has_memory = s[i].mem;
		nd->mem_total_bytes = s[i].mem ? 1ull << 30 : 0;
		nd->mem_free_bytes = nd->mem_total_bytes / 2;
		nd->kernel_tier = s[i].kernel_tier;
		if (s[i].lat) {
			nd->has_hmat = true;
			nd->hmat.read_latency_ns = s[i].lat;
			nd->hmat.read_bw_mbps = s[i].bw;
		}
		for (j = 0; j < n; j++)
			row[j] = i == j ? 10 : (s[i].lat && s[j].lat ?
				 (int)(10 * (s[i].lat > s[j].lat ? s[i].lat : s[j].lat) /
				       s[0].lat) : 20);
		assert_int_equal(tier_node_set_distance(t, nd, row), 0);
	}
}

static void expect_tiers(const struct tier_topology *t, const char *want)
{
	char got[256] = "";
	size_t i, j, len = 0;

	for (i = 0; i < t->nr_tiers; i++) {
		assert_int_equal(t->tiers[i].rank, (int)i);
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s[", i ? " " : "");
		for (j = 0; j < t->tiers[i].nr_nodes; j++)
			len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%d",
						j ? "," : "", t->tiers[i].nodes[j]);
		len += (size_t)snprintf(got + len, sizeof(got) - len, "]");
	}
	assert_string_equal(got, want);
}

static void test_kernel_tiers_win(void **state)
{
	/* Kernel and HMAT disagree on purpose: the kernel's tiers are used. */
	const struct spec s[] = {
		{ 0, 2, 1, 4, 100, 20000 },
		{ 1, 0, 1, 4, 250, 8000 },
		{ 2, 0, 1, 22, 500, 2000 },
	};
	struct tier_topology t;

	(void)state;
	build(&t, s, 3);
	assert_int_equal(tier_topology_rank(&t, NULL, 0, NULL), 0);
	assert_int_equal(t.rank_source, TIER_RANK_KERNEL);
	expect_tiers(&t, "[0,1] [2]");
	assert_int_equal(tier_topology_node_rank(&t, 2), 1);
	tier_topology_release(&t);
}

static void test_hmat_when_no_kernel_tiers(void **state)
{
	const struct spec s[] = {
		{ 0, 2, 1, -1, 100, 20480 },
		{ 1, 0, 1, -1, 250, 8192 },
		{ 2, 0, 1, -1, 500, 2048 },
	};
	struct tier_topology t;

	(void)state;
	build(&t, s, 3);
	assert_int_equal(tier_topology_rank(&t, NULL, 0, NULL), 0);
	assert_int_equal(t.rank_source, TIER_RANK_HMAT);
	expect_tiers(&t, "[0] [1] [2]");
	tier_topology_release(&t);
}

static void test_abstract_distance_matches_kernel(void **state)
{
	/* The guest's figures give the kernel's memory_tier4/28/225. */
	struct tier_perf dram = { 100, 100, 20480, 20480 };
	struct tier_perf cxl = { 250, 250, 8192, 8192 };
	struct tier_perf slow = { 500, 0, 2048, 0 };

	(void)state;
	assert_int_equal(tier_abstract_distance(&dram, &dram) >> TIER_ADISTANCE_CHUNK_BITS, 4);
	assert_int_equal(tier_abstract_distance(&cxl, &dram) >> TIER_ADISTANCE_CHUNK_BITS, 28);
	assert_int_equal(tier_abstract_distance(&slow, &dram) >> TIER_ADISTANCE_CHUNK_BITS, 225);
	/* Bandwidth counts as much as latency: HBM with DRAM-like latency and
	 * 8x the bandwidth ranks above DRAM. */
	struct tier_perf hbm = { 120, 120, 800000, 700000 };
	struct tier_perf ddr = { 100, 100, 100000, 90000 };

	assert_true(tier_abstract_distance(&hbm, &ddr) < tier_abstract_distance(&ddr, &ddr));
}

static void test_hmat_incomplete_falls_back_to_slit(void **state)
{
	/* Node 2 has no HMAT, so SLIT ranks all: node 1 is at distance 25
	 * from the CPUs (adistance chunk 11), node 2 at 20 (chunk 9). */
	const struct spec s[] = {
		{ 0, 2, 1, -1, 100, 20000 },
		{ 1, 0, 1, -1, 250, 8000 },
		{ 2, 0, 1, -1, 0, 0 },
	};
	struct tier_topology t;

	(void)state;
	build(&t, s, 3);
	assert_int_equal(tier_topology_rank(&t, NULL, 0, NULL), 0);
	assert_int_equal(t.rank_source, TIER_RANK_SLIT);
	expect_tiers(&t, "[0] [2] [1]");
	tier_topology_release(&t);
}

static void test_memoryless_node_in_no_tier(void **state)
{
	const struct spec s[] = {
		{ 0, 2, 1, 4, 0, 0 },
		{ 3, 2, 0, -1, 0, 0 },
		{ 5, 0, 1, 22, 0, 0 },
	};
	struct tier_topology t;

	(void)state;
	build(&t, s, 3);
	assert_int_equal(tier_topology_rank(&t, NULL, 0, NULL), 0);
	assert_int_equal(t.rank_source, TIER_RANK_KERNEL);
	expect_tiers(&t, "[0] [5]");
	assert_int_equal(tier_topology_node_rank(&t, 3), -1);
	assert_int_equal(tier_topology_distance(&t, 0, 5), 20);
	assert_int_equal(tier_topology_distance(&t, 0, 4), -1);
	tier_topology_release(&t);
}

static void test_override(void **state)
{
	const struct spec s[] = {
		{ 0, 2, 1, 4, 0, 0 },
		{ 1, 0, 1, 4, 0, 0 },
		{ 2, 0, 1, 22, 0, 0 },
	};
	const int t0[] = { 0 }, t1[] = { 2, 1 };
	const struct tier_tier_override ovr[] = { { t0, 1 }, { t1, 2 } };
	struct tier_topology t;

	(void)state;
	build(&t, s, 3);
	assert_int_equal(tier_topology_rank(&t, ovr, 2, NULL), 0);
	assert_int_equal(t.rank_source, TIER_RANK_CONFIG);
	expect_tiers(&t, "[0] [1,2]");
	tier_topology_release(&t);
}

static void expect_override_error(const struct tier_tier_override *ovr, size_t n,
				  const char *msg)
{
	const struct spec s[] = {
		{ 0, 2, 1, 4, 0, 0 },
		{ 1, 2, 0, -1, 0, 0 },
		{ 2, 0, 1, 22, 0, 0 },
	};
	struct tier_topology t;
	struct tier_err err = { "" };

	build(&t, s, 3);
	assert_int_equal(tier_topology_rank(&t, ovr, n, &err), -EINVAL);
	assert_non_null(strstr(err.msg, msg));
	assert_int_equal(t.nr_tiers, 0);
	tier_topology_release(&t);
}

static void test_override_errors(void **state)
{
	const int n0[] = { 0 }, n2[] = { 2 }, n02[] = { 0, 2 }, n7[] = { 7 }, n1[] = { 1 };

	(void)state;
	expect_override_error((struct tier_tier_override[]){ { n0, 1 } }, 1,
			      "node 2 has memory but is in no tier");
	expect_override_error((struct tier_tier_override[]){ { n02, 2 }, { n7, 1 } }, 2,
			      "tier 1: node 7 does not exist");
	expect_override_error((struct tier_tier_override[]){ { n02, 2 }, { n1, 1 } }, 2,
			      "tier 1: node 1 has no memory");
	expect_override_error((struct tier_tier_override[]){ { n02, 2 }, { n2, 1 } }, 2,
			      "node 2 is already in tier 0");
	expect_override_error((struct tier_tier_override[]){ { n02, 2 }, { NULL, 0 } }, 2,
			      "tier 1 lists no node");
}

static void test_validate(void **state)
{
	const struct spec s[] = {
		{ 0, 2, 1, 4, 0, 0 },
		{ 1, 0, 1, 22, 0, 0 },
	};
	struct tier_topology t;
	struct tier_err err = { "" };

	(void)state;
	build(&t, s, 2);
	assert_int_equal(tier_topology_validate(&t, &err), 0);
	t.nodes[1].distance[0] = 5;	/* below local distance 10 */
	assert_int_equal(tier_topology_validate(&t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "below its local distance"));
	t.nodes[1].distance[0] = 20;
	t.nodes[1].mem_free_bytes = t.nodes[1].mem_total_bytes + 1;
	assert_int_equal(tier_topology_validate(&t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "exceeds total"));
	t.nodes[1].mem_free_bytes = 0;
	t.nodes[1].id = 0;
	assert_int_equal(tier_topology_validate(&t, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not unique"));
	tier_topology_release(&t);
}

static void test_no_memory_anywhere(void **state)
{
	const struct spec s[] = { { 0, 2, 0, -1, 0, 0 } };
	struct tier_topology t;
	struct tier_err err = { "" };

	(void)state;
	build(&t, s, 1);
	assert_int_equal(tier_topology_rank(&t, NULL, 0, &err), -EINVAL);
	assert_string_equal(err.msg, "no node has memory");
	tier_topology_release(&t);
}

/* More tiers than the policies' tables hold: discovery refuses them, with
 * the way out; as many as they hold pass. */
static const struct spec *many_spec;
static size_t many_n;

static int read_many(void *priv, struct tier_topology *t, struct tier_err *err)
{
	(void)priv;
	(void)err;
	tier_topology_release(t);
	build(t, many_spec, many_n);
	return 0;
}

static void test_too_many_tiers(void **state)
{
	static const struct tier_topology_ops ops = { .name = "test", .read = read_many };
	struct spec s[TIER_MAX_TIERS + 1];
	struct tier_topology t;
	struct tier_err err = { "" };
	size_t i;

	(void)state;
	for (i = 0; i <= TIER_MAX_TIERS; i++)
		s[i] = (struct spec){ (int)i, i ? 0 : 1, 1, (int)i, 0, 0 };
	many_spec = s;
	many_n = TIER_MAX_TIERS;
	assert_int_equal(tier_topology_build(&ops, NULL, NULL, &t, &err), 0);
	assert_int_equal(t.nr_tiers, TIER_MAX_TIERS);
	tier_topology_release(&t);
	many_n = TIER_MAX_TIERS + 1;
	assert_int_equal(tier_topology_build(&ops, NULL, NULL, &t, &err), -E2BIG);
	assert_string_equal(err.msg, "test: 9 tiers, at most 8 (merge some with topology.tiers)");
	assert_int_equal(t.nr_tiers, 0);
}

/* Run-time pins and drains: a device's node put in a tier, or a new
 * slowest one; a drained node in no tier; a pin past the tiers refused;
 * an operator list that leaves out a pinned node. */
static void test_pins_and_drains(void **state)
{
	static const struct tier_topology_ops ops = { .name = "test", .read = read_many };
	struct spec s[] = {
		{ 0, 2, 1, 4, 0, 0 }, { 1, 0, 1, 28, 0, 0 }, { 2, 0, 1, 67, 0, 0 },
	};
	struct tier_node_pin pin = { 2, 1 };
	int drained = 1, ovr0[] = { 0 }, ovr1[] = { 1 };
	struct tier_tier_override ovr[] = { { ovr0, 1 }, { ovr1, 1 } };
	struct tier_topology_spec spec = { .pins = &pin, .nr_pins = 1 };
	struct tier_topology t;
	struct tier_err err = { "" };

	(void)state;
	many_spec = s;
	many_n = 3;
	assert_int_equal(tier_topology_build(&ops, NULL, NULL, &t, &err), 0);
	expect_tiers(&t, "[0] [1] [2]");
	tier_topology_release(&t);
	assert_int_equal(tier_topology_build(&ops, NULL, &spec, &t, &err), 0);
	expect_tiers(&t, "[0] [1,2]");
	assert_int_equal(tier_topology_node_rank(&t, 2), 1);
	tier_topology_release(&t);
	pin.rank = 2;
	spec.drained = &drained;
	spec.nr_drained = 1;
	assert_int_equal(tier_topology_build(&ops, NULL, &spec, &t, &err), 0);
	expect_tiers(&t, "[0] [2]");
	assert_int_equal(tier_topology_node_rank(&t, 1), -1);
	tier_topology_release(&t);
	spec.nr_drained = 0;
	pin.rank = -2;
	assert_int_equal(tier_topology_build(&ops, NULL, &spec, &t, &err), -EINVAL);
	assert_string_equal(err.msg, "node 2: no tier -2");
	/* The operator's list names nodes 0 and 1; node 2 is pinned. */
	pin.rank = 2;
	spec.tiers = ovr;
	spec.nr_tiers = 2;
	assert_int_equal(tier_topology_build(&ops, NULL, &spec, &t, &err), 0);
	expect_tiers(&t, "[0] [1] [2]");
	tier_topology_release(&t);
	pin.node = 7;
	assert_int_equal(tier_topology_build(&ops, NULL, &spec, &t, &err), -ENOENT);
	assert_string_equal(err.msg, "node 7 does not exist");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_tiers_win),
		cmocka_unit_test(test_hmat_when_no_kernel_tiers),
		cmocka_unit_test(test_abstract_distance_matches_kernel),
		cmocka_unit_test(test_hmat_incomplete_falls_back_to_slit),
		cmocka_unit_test(test_memoryless_node_in_no_tier),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_override_errors),
		cmocka_unit_test(test_pins_and_drains),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_no_memory_anywhere),
		cmocka_unit_test(test_too_many_tiers),
	};

	return cmocka_run_group_tests_name("topology", tests, NULL, NULL);
}
