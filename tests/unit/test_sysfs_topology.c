/* test_sysfs_topology.c - the Linux topology source against sysfs fixture
 * trees (tests/fixtures/sysfs, described in its README.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/linux/topology.h"

#define FIXTURES TIERD_SOURCE_ROOT "/tests/fixtures/sysfs/"

static int discover(const char *name, struct tier_topology *t, struct tier_err *err)
{
	struct tier_linux_topology lt = { .sysfs_root = NULL };
	char root[512];

	snprintf(root, sizeof(root), FIXTURES "%s", name);
	lt.sysfs_root = root;
	return tier_topology_discover(&tier_linux_topology_ops, &lt, NULL, 0, t, err);
}

static void tiers_string(const struct tier_topology *t, char *got, size_t sz)
{
	size_t i, j, len = 0;

	got[0] = '\0';
	for (i = 0; i < t->nr_tiers; i++) {
		len += (size_t)snprintf(got + len, sz - len, "%s[", i ? " " : "");
		for (j = 0; j < t->tiers[i].nr_nodes; j++)
			len += (size_t)snprintf(got + len, sz - len, "%s%d", j ? "," : "",
						t->tiers[i].nodes[j]);
		len += (size_t)snprintf(got + len, sz - len, "]");
	}
}

static void expect_fixture(const char *name, size_t nr_nodes, const char *tiers,
			   enum tier_rank_source src)
{
	struct tier_topology t;
	struct tier_err err = { "" };
	char got[256];

	if (discover(name, &t, &err))
		fail_msg("%s: %s", name, err.msg);
	assert_int_equal(t.nr_nodes, nr_nodes);
	tiers_string(&t, got, sizeof(got));
	if (strcmp(got, tiers))
		fail_msg("%s: tiers %s, expected %s", name, got, tiers);
	assert_int_equal(t.rank_source, src);
	tier_topology_release(&t);
}

static void test_one_node(void **state)
{
	struct tier_topology t;
	struct tier_node *n;

	(void)state;
	expect_fixture("one-node", 1, "[0]", TIER_RANK_KERNEL);
	assert_int_equal(discover("one-node", &t, NULL), 0);
	n = &t.nodes[0];
	assert_int_equal(n->nr_cpus, 2);
	assert_int_equal(n->cpus[1], 1);
	assert_true(n->has_memory);
	assert_false(n->has_hmat);
	assert_int_equal(n->kernel_tier, 4);
	assert_int_equal(n->distance[0], 10);
	assert_true(n->mem_total_bytes > 20ull << 30);
	assert_true(n->mem_free_bytes < n->mem_total_bytes);
	tier_topology_release(&t);
}

static void test_two_socket(void **state)
{
	(void)state;
	expect_fixture("two-socket", 2, "[0,1]", TIER_RANK_KERNEL);
}

static void test_dram_cxl_hmat(void **state)
{
	struct tier_topology t;
	struct tier_node *n;

	(void)state;
	expect_fixture("dram-cxl-hmat", 2, "[0] [1]", TIER_RANK_KERNEL);
	assert_int_equal(discover("dram-cxl-hmat", &t, NULL), 0);
	n = tier_topology_node(&t, 1);
	assert_non_null(n);
	assert_true(n->has_hmat);
	assert_int_equal(n->hmat.read_latency_ns, 250);
	assert_int_equal(n->hmat.write_latency_ns, 270);
	assert_int_equal(n->hmat.read_bw_mbps, 32000);
	assert_int_equal(n->hmat.write_bw_mbps, 28000);
	assert_int_equal(n->kernel_tier, 22);
	assert_int_equal(n->nr_cpus, 0);
	tier_topology_release(&t);
}

static void test_hmat_without_memory_tiering(void **state)
{
	(void)state;
	expect_fixture("dram-cxl-hmat-no-tiering", 2, "[0] [1]", TIER_RANK_HMAT);
}

static void test_slit_only(void **state)
{
	(void)state;
	expect_fixture("two-socket-cxl-slit", 4, "[0,1] [2,3]", TIER_RANK_SLIT);
}

static void test_guest_3tier(void **state)
{
	struct tier_topology t;
	static const uint32_t lat[] = { 100, 250, 500 }, bw[] = { 20480, 8192, 2048 };
	static const int ktier[] = { 4, 28, 225 };
	size_t i;

	(void)state;
	expect_fixture("guest-3tier", 3, "[0] [1] [2]", TIER_RANK_KERNEL);
	assert_int_equal(discover("guest-3tier", &t, NULL), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(t.nodes[i].hmat.read_latency_ns, lat[i]);
		assert_int_equal(t.nodes[i].hmat.read_bw_mbps, bw[i]);
		assert_int_equal(t.nodes[i].kernel_tier, ktier[i]);
	}
	assert_int_equal(tier_topology_distance(&t, 0, 2), 50);
	/* Without the kernel's tiers, HMAT gives the same order. */
	for (i = 0; i < 3; i++)
		t.nodes[i].kernel_tier = -1;
	assert_int_equal(tier_topology_rank(&t, NULL, 0, NULL), 0);
	assert_int_equal(t.rank_source, TIER_RANK_HMAT);
	assert_int_equal(t.nr_tiers, 3);
	assert_int_equal(tier_topology_node_rank(&t, 2), 2);
	tier_topology_release(&t);
}

static void test_v61_dax(void **state)
{
	(void)state;
	expect_fixture("v6.1-dax", 3, "[0,1] [2]", TIER_RANK_KERNEL);
}

static void test_memoryless_node(void **state)
{
	struct tier_topology t;

	(void)state;
	expect_fixture("memoryless-node", 3, "[0] [2]", TIER_RANK_KERNEL);
	assert_int_equal(discover("memoryless-node", &t, NULL), 0);
	assert_false(tier_topology_node(&t, 1)->has_memory);
	assert_int_equal(tier_topology_node_rank(&t, 1), -1);
	assert_int_equal(tier_topology_node(&t, 1)->nr_cpus, 4);
	tier_topology_release(&t);
}

static void expect_error(const char *name, int code, const char *file, const char *why)
{
	struct tier_topology t;
	struct tier_err err = { "" };
	int ret = discover(name, &t, &err);

	if (ret != code)
		fail_msg("%s: returned %d, expected %d (%s)", name, ret, code, err.msg);
	if (!strstr(err.msg, file) || !strstr(err.msg, why))
		fail_msg("%s: message '%s' lacks '%s' or '%s'", name, err.msg, file, why);
	/* One line, no trailing newline. */
	assert_null(strchr(err.msg, '\n'));
	assert_int_equal(t.nr_nodes, 0);
	assert_null(t.nodes);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_error("bad-distance", -EINVAL, "bad-distance/devices/system/node/node1/distance",
		     "field 2 is not a number");
	expect_error("bad-meminfo", -EINVAL, "node2/meminfo", "no MemTotal line");
	expect_error("bad-nodelist", -EINVAL, "devices/system/node/online", "invalid list '0-x'");
	expect_error("missing-node-dir", -ENOENT, "devices/system/node/node2",
		     "missing, but node 2 is listed");
	expect_error("bad-hmat", -EINVAL, "node1/access0/initiators/read_latency",
		     "expected an unsigned number, found 'fast'");
	expect_error("no-such-fixture", -ENOENT, "no-such-fixture/devices/system/node",
		     "not found");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_node),
		cmocka_unit_test(test_two_socket),
		cmocka_unit_test(test_dram_cxl_hmat),
		cmocka_unit_test(test_hmat_without_memory_tiering),
		cmocka_unit_test(test_slit_only),
		cmocka_unit_test(test_guest_3tier),
		cmocka_unit_test(test_v61_dax),
		cmocka_unit_test(test_memoryless_node),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests_name("sysfs-topology", tests, NULL, NULL);
}
