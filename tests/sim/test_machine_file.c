/* test_machine_file.c - tiersim machine files: a good file becomes a
 * machine the topology code ranks; bad files give one line with the file,
 * line, column and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/engine.h"
#include "tiersim/machine_file.h"

#define NODE(kind, lat, extra)                                                       \
	"  - kind: " kind "\n    latency_ns: " #lat "\n    read_bw_mbps: 20000\n"     \
	"    write_bw_mbps: 10000\n" extra

static void test_example_file(void **state)
{
	struct tier_machine_file mf;
	struct tier_sim_machine m;
	struct tier_topology t;
	struct tier_err err = { "" };

	(void)state;
	if (tier_machine_file_load(TIERD_SOURCE_ROOT "/tests/fixtures/machines/dram-cxl-pmem.yaml",
				   &mf, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(mf.preset.name, "dram-cxl-pmem");
	assert_int_equal(mf.preset.nr_nodes, 3);
	assert_string_equal(mf.preset.nodes[2].kind, "pmem");
	assert_int_equal(mf.preset.nodes[2].latency_ns, 305);
	assert_int_equal(mf.preset.nodes[2].write_bw_mbps, 14000);
	assert_int_equal(mf.preset.nodes[0].nr_cpus, 4);
	assert_int_equal(mf.preset.nodes[1].nr_cpus, 0);
	assert_int_equal(tier_sim_machine_from_preset(&m, &mf.preset, NULL, 1ull << 30, &err), 0);
	assert_int_equal(m.node_bytes[1], 2ull << 30);
	assert_int_equal(m.node_bytes[2], 4ull << 30);
	assert_int_equal(tier_topology_discover(&tier_sim_topology_ops, &m, NULL, 0, &t, &err), 0);
	assert_int_equal(t.rank_source, TIER_RANK_HMAT);
	assert_int_equal(t.nr_tiers, 3);
	assert_int_equal(tier_topology_node_rank(&t, 2), 2);
	assert_int_equal(t.nodes[0].nr_cpus, 4);
	tier_topology_release(&t);
}

static void test_sizes_and_ratio_override(void **state)
{
	static const char y[] = "nodes:\n"
		NODE("dram", 100, "    size_mb: 256\n    cpus: 1\n")
		NODE("cxl", 300, "    size_mb: 1024\n");
	struct tier_machine_file mf;
	struct tier_sim_machine m;
	struct tier_err err = { "" };

	(void)state;
	if (tier_machine_file_load_string(y, sizeof(y) - 1, "m.yaml", &mf, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(mf.preset.name, "m.yaml");	/* no name: the file's */
	assert_int_equal(tier_sim_machine_from_preset(&m, &mf.preset, NULL, 1ull << 30, &err), 0);
	assert_int_equal(m.node_bytes[0], 256ull << 20);
	assert_int_equal(m.node_bytes[1], 1024ull << 20);
	/* --ratio wins over sizes */
	assert_int_equal(tier_sim_machine_from_preset(&m, &mf.preset, "1:8", 1ull << 20, &err), 0);
	assert_int_equal(m.node_bytes[1], 8ull << 20);
}

static void test_runs_in_the_simulator(void **state)
{
	struct tier_machine_file mf;
	struct tier_sim_params p;
	struct tier_sim_result r;
	struct tier_err err = { "" };

	(void)state;
	if (tier_machine_file_load(TIERD_SOURCE_ROOT "/tests/fixtures/machines/dram-cxl-pmem.yaml",
				   &mf, &err))
		fail_msg("%s", err.msg);
	memset(&p, 0, sizeof(p));
	p.preset = &mf.preset;
	p.unit_bytes = 8u << 20;
	p.workload = "gups-hotset";
	p.policy = "static";
	p.seed = 1;
	p.duration_us = 200000;
	if (tier_sim_run(&p, &r, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(r.machine, "dram-cxl-pmem");
	assert_int_equal(r.nr_tiers, 3);
	assert_true(r.accesses > 0);
}

/* Runs workload under policy on the guest machine
 * (bench/machines/guest.yaml) for duration_us, seed 1, with its timeline
 * into *buf (the caller frees it); mf, when given, gets the machine file. */
static void run_on_guest(const char *workload, const char *policy, uint64_t duration_us,
			 struct tier_machine_file *mf, struct tier_sim_result *r, char **buf)
{
	struct tier_machine_file own;
	struct tier_sim_params p;
	struct tier_err err = { "" };
	size_t len = 0;

	if (!mf)
		mf = &own;
	if (tier_machine_file_load(TIERD_SOURCE_ROOT "/bench/machines/guest.yaml", mf, &err))
		fail_msg("%s", err.msg);
	memset(&p, 0, sizeof(p));
	p.preset = &mf->preset;
	p.workload = workload;
	p.policy = policy;
	p.seed = 1;
	p.duration_us = duration_us;
	*buf = NULL;
	p.timeline = open_memstream(buf, &len);
	assert_non_null(p.timeline);
	if (tier_sim_run(&p, r, &err))
		fail_msg("%s", err.msg);
	fclose(p.timeline);
}

/* The guest machine (bench/machines/guest.yaml) with gups-guest, the
 * calibration's pair (docs/tiersim.md): the sizes, the first touch as the
 * bench's set-up leaves it (array on node 1, idle memory on node 0), the
 * update rate the workload sets, and the hot set's share in the timeline. */
static void test_guest_and_gups_guest(void **state)
{
	struct tier_machine_file mf;
	struct tier_sim_result r;
	char *buf, *row;
	unsigned long long t0, t1, t2;
	double share;

	(void)state;
	run_on_guest("gups-guest:layout=scattered:rate=4", "static", 300000, &mf, &r, &buf);
	assert_int_equal(mf.preset.nodes[0].size_mb, 650);
	assert_int_equal(mf.preset.nodes[1].size_mb, 742);
	assert_int_equal(mf.preset.nodes[2].size_mb, 711);
	assert_int_equal(r.footprint_pages, 163840 + 153600);
	/* 4 M updates/s: 250 ns each whatever node (the nodes' latencies
	 * are 100-500 ns), no stall under static. */
	assert_true(r.accesses > 0);
	assert_true(r.amat_ns > 249.99 && r.amat_ns < 250.01);
	assert_non_null(strstr(buf, ",hot_fast_share\n"));
	row = strchr(buf, '\n') + 1;
	/* time,amat,ratio,promoted,demoted, then used pages and latency per tier */
	assert_int_equal(sscanf(row, "%*f,%*f,%*f,%*u,%*u,%llu,%*f,%llu,%*f,%llu,%*f,%lf", &t0, &t1,
				&t2, &share), 4);
	assert_int_equal(t0, 153600);	/* 600 MiB idle on node 0: 50 MiB free */
	assert_int_equal(t1, 163840);	/* the array on node 1: 102 MiB free */
	assert_int_equal(t2, 0);
	assert_true(share == 0);
	free(buf);
}

/* A run of static with an accessed-bit scan every tick on the machine
 * file y: its modelled tracker CPU, s (nothing moves, so the scans are
 * the same whatever the costs). */
static double idle_scan_cpu_s(const char *y)
{
	struct tier_machine_file mf;
	struct tier_sim_params p;
	struct tier_sim_result r;
	struct tier_err err = { "" };

	if (tier_machine_file_load_string(y, strlen(y), "m.yaml", &mf, &err))
		fail_msg("%s", err.msg);
	memset(&p, 0, sizeof(p));
	p.preset = &mf.preset;
	p.unit_bytes = 8u << 20;
	p.workload = "gups-hotset";
	p.policy = "static";
	p.tracker = "idle";
	p.seed = 1;
	p.duration_us = 2500000;	/* two ticks of static's 1 s */
	if (tier_sim_run(&p, &r, &err))
		fail_msg("%s", err.msg);
	return r.policy_cpu_s;
}

/* cpu_slowdown: absent is 1 (the preset leaves it 0), the guest's is
 * 5.6, and it multiplies the modelled CPU costs. */
static void test_cpu_slowdown(void **state)
{
	static const char plain[] = "nodes:\n"
		NODE("dram", 100, "    cpus: 1\n    ratio: 1\n") NODE("cxl", 300, "    ratio: 4\n");
	static const char slow[] = "cpu_slowdown: 2.5\nnodes:\n"
		NODE("dram", 100, "    cpus: 1\n    ratio: 1\n") NODE("cxl", 300, "    ratio: 4\n");
	struct tier_machine_file mf;
	struct tier_sim_machine m;
	struct tier_err err = { "" };
	double a, b;

	(void)state;
	if (tier_machine_file_load_string(plain, sizeof(plain) - 1, "m.yaml", &mf, &err))
		fail_msg("%s", err.msg);
	assert_true(mf.preset.cpu_slowdown == 0);
	assert_int_equal(tier_sim_machine_from_preset(&m, &mf.preset, NULL, 1ull << 30, &err), 0);
	assert_true(m.cpu_slowdown == 1.0);
	if (tier_machine_file_load_string(slow, sizeof(slow) - 1, "m.yaml", &mf, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(tier_sim_machine_from_preset(&m, &mf.preset, NULL, 1ull << 30, &err), 0);
	assert_true(m.cpu_slowdown == 2.5);
	if (tier_machine_file_load(TIERD_SOURCE_ROOT "/bench/machines/guest.yaml", &mf, &err))
		fail_msg("%s", err.msg);
	assert_true(mf.preset.cpu_slowdown == 5.6);
	a = idle_scan_cpu_s(plain);
	b = idle_scan_cpu_s(slow);
	assert_true(a > 0);
	assert_true(b > a * 2.4999 && b < a * 2.5001);
}

/* The hot set's share (timeline's last column) in the row of time t. */
static double share_at(const char *csv, double t)
{
	const char *row = strchr(csv, '\n');
	double at, share;

	for (; row; row = strchr(row + 1, '\n')) {
		const char *last = row + 1;
		const char *nl = strchr(last, '\n');
		const char *c;

		if (sscanf(row + 1, "%lf,", &at) != 1 || at + 1e-6 < t)
			continue;
		for (c = last; *c && c != nl; c++)
			if (*c == ',')
				last = c + 1;
		assert_int_equal(sscanf(last, "%lf", &share), 1);
		return share;
	}
	fail_msg("no timeline row at %.1f s", t);
	return -1;
}

/* kernel-nb's NUMA scan on the guest as task_numa_work() counts it: a
 * range counts against the 256 MB only when it unmapped something, and a
 * run stops at the end of the address space. gups-guest's array (page ids
 * 0-640 MiB) is unmapped in the runs at 1, 2 and 3 s, the idle memory
 * behind it in those at 4 and 5 s, where the pass ends and the period
 * doubles: the hot set (the array's first 96 MiB) is unmapped again at
 * 7 s, not before. (Counting every page walked and wrapping round within
 * a run, the run at 5 s went on into the hot set and promoted more of it
 * at 5.1 s.) */
static void test_guest_hint_scan_passes(void **state)
{
	struct tier_sim_result r;
	char *buf;

	(void)state;
	run_on_guest("gups-guest:layout=contiguous:rate=6.85", "kernel-nb", 7500000, NULL, &r, &buf);
	assert_true(share_at(buf, 2.5) > 0.5 && share_at(buf, 2.5) < 0.99);
	assert_true(share_at(buf, 6.9) == share_at(buf, 2.5));
	assert_true(share_at(buf, 7.4) > 0.99);
	free(buf);
}

static void expect_error(const char *yaml, int code, const char *msg)
{
	struct tier_machine_file mf;
	struct tier_err err = { "" };

	assert_int_equal(tier_machine_file_load_string(yaml, strlen(yaml), "m.yaml", &mf, &err),
			 code);
	assert_string_equal(err.msg, msg);
	assert_null(strchr(err.msg, '\n'));
}

static void test_unknown_field(void **state)
{
	(void)state;
	expect_error("nodes:\n"
		     NODE("dram", 100, "    cpus: 1\n    ratio: 1\n    latncy_ns: 3\n"),
		     -EINVAL, "m.yaml:8:5: nodes[0]: unknown field 'latncy_ns'");
	expect_error("node: []\n", -EINVAL, "m.yaml:1:1: unknown field 'node'");
}

static void test_wrong_type(void **state)
{
	(void)state;
	expect_error("nodes:\n"
		     NODE("dram", fast, "    cpus: 1\n    ratio: 1\n"),
		     -EINVAL, "m.yaml:3:17: nodes[0].latency_ns: invalid uint64_t value: 'fast'");
	expect_error("nodes: 3\n", -EINVAL, "m.yaml:1:8: nodes: expecting SEQUENCE, got event: SCALAR");
}

static void test_zero_latency(void **state)
{
	(void)state;
	expect_error("nodes:\n"
		     NODE("dram", 100, "    cpus: 1\n    ratio: 1\n")
		     NODE("cxl", 0, "    ratio: 4\n"),
		     -EINVAL, "m.yaml:9:5: nodes[1].latency_ns: must be positive");
}

static void test_no_cpu_node(void **state)
{
	(void)state;
	expect_error("nodes:\n"
		     NODE("dram", 100, "    ratio: 1\n")
		     NODE("cxl", 300, "    ratio: 4\n"),
		     -EINVAL, "m.yaml:1:1: nodes: no node has CPUs (give one node cpus: N)");
}

static void test_other_rules(void **state)
{
	struct tier_machine_file mf;
	struct tier_err err = { "" };

	(void)state;
	expect_error("nodes: []\n", -EINVAL, "m.yaml:1:1: nodes: at least one node is needed");
	expect_error("nodes:\n"
		     NODE("dram", 100, "    cpus: 1\n"),
		     -EINVAL, "m.yaml:2:5: nodes[0]: needs ratio (capacity share) or size_mb");
	expect_error("nodes:\n"
		     NODE("dram", 100, "    cpus: 1\n    ratio: 1\n")
		     NODE("cxl", 300, "    size_mb: 64\n"),
		     -EINVAL,
		     "m.yaml:12:5: nodes[1].size_mb: every node gives ratio, or every node gives size_mb");
	expect_error("nodes:\n"
		     NODE("dram", 100, "    cpus: 1\n    ratio: 0\n"),
		     -EINVAL, "m.yaml:7:5: nodes[0].ratio: must be positive");
	expect_error("nodes:\n"
		     NODE("a", 1, "    cpus: 1\n    ratio: 1\n") NODE("b", 2, "    ratio: 1\n")
		     NODE("c", 3, "    ratio: 1\n") NODE("d", 4, "    ratio: 1\n")
		     NODE("e", 5, "    ratio: 1\n") NODE("f", 6, "    ratio: 1\n")
		     NODE("g", 7, "    ratio: 1\n") NODE("h", 8, "    ratio: 1\n")
		     NODE("i", 9, "    ratio: 1\n"),
		     -EINVAL, "m.yaml:1:1: nodes: 9 nodes, at most 8");
	expect_error("cpu_slowdown: 0\nnodes:\n"
		     NODE("dram", 100, "    cpus: 1\n    ratio: 1\n"),
		     -EINVAL, "m.yaml:1:1: cpu_slowdown: a factor from 0.01 to 1000 (1: the cost model's CPU)");
	expect_error("nodes:\n"
		     NODE("dram", 100, "    cpus: 1\n    ratio: 1\n") "cpu_slowdown: 1e4\n",
		     -EINVAL, "m.yaml:8:1: cpu_slowdown: a factor from 0.01 to 1000 (1: the cost model's CPU)");
	expect_error("cpu_slowdown: slow\nnodes:\n"
		     NODE("dram", 100, "    cpus: 1\n    ratio: 1\n"),
		     -EINVAL, "m.yaml:1:15: cpu_slowdown: invalid FLOAT value: slow");
	assert_int_equal(tier_machine_file_load("/nonexistent/m.yaml", &mf, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/m.yaml: No such file or directory");
	assert_string_equal(tier_machine_file_arg("file:a/b.yaml"), "a/b.yaml");
	assert_null(tier_machine_file_arg("dram-cxl"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_sizes_and_ratio_override),
		cmocka_unit_test(test_runs_in_the_simulator),
		cmocka_unit_test(test_guest_and_gups_guest),
		cmocka_unit_test(test_cpu_slowdown),
		cmocka_unit_test(test_guest_hint_scan_passes),
		cmocka_unit_test(test_unknown_field),
		cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_zero_latency),
		cmocka_unit_test(test_no_cpu_node),
		cmocka_unit_test(test_other_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
