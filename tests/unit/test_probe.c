/* test_probe.c - the probe's pure logic: statistics, --nodes, the plan
 * (initiators, references), the judgement of claims and tier order
 * against measurements, the measured-tier override, and the saved file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/topology.h"
#include "common/probe_out.h"
#include "common/topology_config.h"
#include "core/nodelist.h"
#include "core/probe.h"

#define FIXTURES TIERD_SOURCE_ROOT "/tests/fixtures/sysfs/"

static void discover(const char *name, struct tier_topology *t)
{
	struct tier_linux_topology lt;
	struct tier_err err = { "" };
	char root[512];

	snprintf(root, sizeof(root), FIXTURES "%s", name);
	lt.sysfs_root = root;
	if (tier_topology_discover(&tier_linux_topology_ops, &lt, NULL, 0, t, &err))
		fail_msg("%s: %s", name, err.msg);
}

/* Five samples whose best is best, the second best noise_bp away, and
 * three slowed down by other work (half as fast again, or more). */
static struct tier_probe_stat stat5(double best, unsigned noise_bp,
				    enum tier_probe_sense sense, double step)
{
	double n = noise_bp / 10000.0;
	double lat[5] = { best * 1.9, best, best * 1.5, best * (1 + n), best * 1.6 };
	double bw[5] = { best / 1.9, best, best / 1.5, best * (1 - n), best / 1.6 };
	struct tier_probe_stat st;

	assert_int_equal(tier_probe_stat_compute(sense == TIER_PROBE_LOWER_BETTER ? lat : bw,
						 5, step, &st), 0);
	return st;
}

/* Fills node id's pair from initiator with the given figures. */
static void measure(struct tier_probe_report *r, int id, int initiator, double lat_ns,
		    double rbw_mbps, double wbw_mbps, unsigned noise_bp)
{
	struct tier_probe_pair *p = tier_probe_node_pair(tier_probe_report_node(r, id),
							 initiator);

	assert_non_null(p);
	p->latency_ns = stat5(lat_ns, noise_bp, TIER_PROBE_LOWER_BETTER, TIER_PROBE_LATENCY_STEP);
	p->read_bw_mbps = stat5(rbw_mbps, noise_bp, TIER_PROBE_HIGHER_BETTER, TIER_PROBE_BW_STEP);
	p->write_bw_mbps = stat5(wbw_mbps, noise_bp, TIER_PROBE_HIGHER_BETTER, TIER_PROBE_BW_STEP);
	p->buffer_bytes = 32 << 20;
	p->on_node_bp = 10000;
}

static void plan_guest(struct tier_topology *t, struct tier_probe_report *r)
{
	struct tier_err err = { "" };

	discover("guest-3tier", t);
	tier_probe_report_init(r);
	if (tier_probe_plan(r, t, NULL, 0, &err))
		fail_msg("plan: %s", err.msg);
	r->nr_repeats = 5;
}

/* ---------------------------------------------------------------- stats */

static void test_stat(void **state)
{
	double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 7 };
	double neg[] = { 1, -1 }, nan_[] = { 1, NAN }, frac[] = { 92.46, 92.349, 92.41 };
	double five[] = { 900, 190, 100, 102, 250 };
	struct tier_probe_stat s;

	(void)state;
	assert_int_equal(tier_probe_stat_compute(odd, 3, 0, &s), 0);
	assert_true(s.median == 3 && s.min == 1 && s.max == 5 && s.nr_samples == 3);
	/* Hinges of 1 3 5: 2 and 4. Latency-like: best 1, noise (3 - 1) / 1;
	 * bandwidth-like: best 5, noise (5 - 3) / 5. */
	assert_true(s.q1 == 2 && s.q3 == 4);
	assert_true(s.samples[0] == 1 && s.samples[1] == 3 && s.samples[2] == 5);
	assert_true(tier_probe_stat_best(&s, TIER_PROBE_LOWER_BETTER) == 1);
	assert_true(tier_probe_stat_best(&s, TIER_PROBE_HIGHER_BETTER) == 5);
	assert_int_equal(tier_probe_stat_noise_bp(&s, TIER_PROBE_LOWER_BETTER), 20000);
	assert_int_equal(tier_probe_stat_noise_bp(&s, TIER_PROBE_HIGHER_BETTER), 4000);
	assert_int_equal(tier_probe_stat_compute(even, 4, 0, &s), 0);
	assert_true(s.median == 2.5 && s.min == 1 && s.max == 4);
	assert_true(s.q1 == 1.5 && s.q3 == 3.5);
	/* Five latency samples, three slowed down by other work: the best and
	 * the second best agree, so the figure is 100 with 2% noise. */
	assert_int_equal(tier_probe_stat_compute(five, 5, 0, &s), 0);
	assert_true(s.median == 190 && s.q1 == 102 && s.min == 100 && s.max == 900);
	assert_true(tier_probe_stat_best(&s, TIER_PROBE_LOWER_BETTER) == 100);
	assert_int_equal(tier_probe_stat_noise_bp(&s, TIER_PROBE_LOWER_BETTER), 200);
	/* Rounded to the step: 2.5 -> 3 with step 1. */
	assert_int_equal(tier_probe_stat_compute(even, 4, 1, &s), 0);
	assert_true(s.median == 3);
	/* Samples are rounded to the step first: 92.349 -> 92.3. */
	assert_int_equal(tier_probe_stat_compute(frac, 3, TIER_PROBE_LATENCY_STEP, &s), 0);
	assert_true(s.min == 92.3 && s.median == 92.4 && s.max == 92.5);
	assert_int_equal(tier_probe_stat_compute(one, 1, 0, &s), 0);
	assert_int_equal(tier_probe_stat_noise_bp(&s, TIER_PROBE_LOWER_BETTER), 0);
	assert_int_equal(tier_probe_stat_compute(one, 0, 0, &s), -EINVAL);
	assert_int_equal(tier_probe_stat_compute(neg, 2, 0, &s), -EINVAL);
	assert_int_equal(tier_probe_stat_compute(nan_, 2, 0, &s), -EINVAL);
	assert_int_equal(s.nr_samples, 0);
}

/* ---------------------------------------------------------------- --nodes */

static void expect_nodes(const struct tier_topology *t, const char *list,
			 const char *want_ids)
{
	struct tier_err err = { "" };
	char got[64];
	size_t nr;
	int *ids;

	if (tier_probe_select_nodes(t, list, &ids, &nr, &err))
		fail_msg("'%s': %s", list, err.msg);
	tier_nodelist_format(ids, nr, got, sizeof(got));
	assert_string_equal(got, want_ids);
	free(ids);
}

static void expect_bad_nodes(const struct tier_topology *t, const char *list,
			     const char *want)
{
	struct tier_err err = { "" };
	size_t nr = 9;
	int *ids = (int *)1;

	assert_int_equal(tier_probe_select_nodes(t, list, &ids, &nr, &err), -EINVAL);
	assert_null(ids);
	assert_int_equal(nr, 0);
	if (!strstr(err.msg, want))
		fail_msg("'%s': error '%s', expected it to contain '%s'", list, err.msg, want);
	assert_null(strchr(err.msg, '\n'));
}

static void test_select_nodes(void **state)
{
	struct tier_topology t, ml;

	(void)state;
	discover("guest-3tier", &t);
	expect_nodes(&t, "0-2", "0-2");
	expect_nodes(&t, "2,1", "1-2");
	expect_nodes(&t, "1\n", "1");
	expect_bad_nodes(&t, "7", "node 7 is not online (online: 0-2)");
	expect_bad_nodes(&t, "0-3", "node 3 is not online");
	expect_bad_nodes(&t, "1-x", "invalid list '1-x'");
	expect_bad_nodes(&t, "-1", "invalid list");
	expect_bad_nodes(&t, "", "empty node list");
	expect_bad_nodes(&t, ",", "invalid list");
	tier_topology_release(&t);
	/* Node 1 has CPUs but no memory. */
	discover("memoryless-node", &ml);
	expect_bad_nodes(&ml, "1", "node 1 has no memory to probe");
	expect_nodes(&ml, "0,2", "0,2");
	tier_topology_release(&ml);
}

/* ---------------------------------------------------------------- plan */

static void test_plan_guest(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	struct tier_err err = { "" };
	size_t i;

	(void)state;
	plan_guest(&t, &r);
	assert_int_equal(r.nr_initiators, 1);
	assert_int_equal(r.initiators[0].id, 0);
	assert_int_equal(r.initiators[0].reference, 0);
	assert_int_equal(r.initiators[0].nr_cpus, 2);
	assert_int_equal(r.nr_nodes, 3);
	assert_int_equal(r.rank_source, TIER_RANK_KERNEL);
	assert_int_equal(r.tolerance_bp, TIER_PROBE_TOLERANCE_BP);
	for (i = 0; i < 3; i++) {
		const struct tier_probe_node *n = &r.nodes[i];

		assert_int_equal(n->id, (int)i);
		assert_int_equal(n->reference, 0);
		assert_int_equal(n->kernel_rank, (int)i);
		assert_true(n->has_claim);
		assert_int_equal(n->nr_from, 1);
		assert_int_equal(n->from[0].initiator, 0);
		assert_int_equal(n->from[0].on_node_bp, -1);
		assert_int_equal(n->from[0].latency_ns.nr_samples, 0);
	}
	assert_int_equal(r.nodes[1].claim.read_latency_ns, 250);
	assert_int_equal(r.nodes[2].claim.read_bw_mbps, 2048);
	assert_int_equal(r.nodes[1].from[0].slit_distance, 25);
	assert_int_equal(r.nodes[2].from[0].slit_distance, 50);

	/* --nodes 2: the reference (node 0) comes along. */
	assert_int_equal(tier_probe_plan(&r, &t, (int[]){ 2 }, 1, &err), 0);
	assert_int_equal(r.nr_nodes, 2);
	assert_int_equal(r.nodes[0].id, 0);
	assert_int_equal(r.nodes[1].id, 2);
	assert_int_equal(tier_probe_plan(&r, &t, (int[]){ 5 }, 1, &err), -EINVAL);
	assert_string_equal(err.msg, "node 5 is not online");
	assert_int_equal(r.nr_nodes, 0);
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

/* Two sockets (nodes 0 and 1, CPUs and DRAM) and a CXL expander (node 2)
 * behind socket 1, ranked by SLIT. */
static void two_socket_cxl(struct tier_topology *t)
{
	static const int rows[3][3] = { { 10, 21, 30 }, { 21, 10, 20 }, { 30, 20, 10 } };
	size_t i;

	tier_topology_init(t);
	assert_int_equal(tier_topology_alloc_nodes(t, 3), 0);
	for (i = 0; i < 3; i++) {
		struct tier_node *n = &t->nodes[i];

		n->id = (int)i;
		n->has_memory = true;
		n->mem_total_bytes = n->mem_free_bytes = 1ull << 34;
		if (i < 2)
			assert_int_equal(tier_node_set_cpus(n, (int[]){ 2 * (int)i, 2 * (int)i + 1 }, 2), 0);
	}
	for (i = 0; i < 3; i++)
		assert_int_equal(tier_node_set_distance(t, &t->nodes[i], rows[i]), 0);
	assert_int_equal(tier_topology_rank(t, NULL, 0, NULL), 0);
}

static void test_plan_two_initiators(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	struct tier_err err = { "" };
	const struct tier_probe_node *n2;

	(void)state;
	two_socket_cxl(&t);
	tier_probe_report_init(&r);
	assert_int_equal(tier_probe_plan(&r, &t, NULL, 0, &err), 0);
	assert_int_equal(r.nr_initiators, 2);
	assert_int_equal(r.initiators[1].reference, 1);
	n2 = tier_probe_report_node(&r, 2);
	/* Home initiator: the nearest CPU node (1, distance 20), then 0. */
	assert_int_equal(n2->nr_from, 2);
	assert_int_equal(n2->from[0].initiator, 1);
	assert_int_equal(n2->from[1].initiator, 0);
	assert_int_equal(n2->reference, 1);
	assert_int_equal(tier_probe_report_node(&r, 0)->from[0].initiator, 0);

	/* Local 100 ns, remote socket 170 ns, CXL 220 ns from socket 1 and
	 * 300 ns from socket 0. SLIT says 2.1x for the remote socket (170/100:
	 * off by 24%, within 50%) and 2.0x for CXL from socket 1 (2.2x
	 * measured); from socket 0 it says 3.0 (300/100). */
	measure(&r, 0, 0, 100, 20000, 15000, 200);
	measure(&r, 1, 0, 170, 12000, 9000, 200);
	measure(&r, 2, 0, 300, 6000, 5000, 200);
	measure(&r, 0, 1, 170, 12000, 9000, 200);
	measure(&r, 1, 1, 100, 20000, 15000, 200);
	measure(&r, 2, 1, 220, 8000, 6000, 200);
	tier_probe_judge(&r);
	assert_false(tier_probe_report_node(&r, 0)->claim_mismatch);
	assert_false(n2->claim_mismatch);
	assert_true(fabs(n2->ratio[TIER_PROBE_LATENCY] - 2.2) < 1e-9);
	assert_true(fabs(n2->claimed_ratio[TIER_PROBE_SLIT] - 2.0) < 1e-9);
	assert_true(fabs(n2->from[1].slit_ratio - 3.0) < 1e-9);
	/* No HMAT: no claimed HMAT ratios. */
	assert_true(n2->claimed_ratio[TIER_PROBE_LATENCY] == 0);

	/* Socket 0 sees CXL at 600 ns: 6x against SLIT's 3x. */
	measure(&r, 2, 0, 600, 6000, 5000, 200);
	tier_probe_judge(&r);
	assert_true(n2->from[1].slit_mismatch);
	assert_false(n2->from[0].slit_mismatch);
	assert_true(n2->claim_mismatch);
	assert_int_equal(n2->mismatch, 1u << TIER_PROBE_SLIT);
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

static void test_plan_memoryless_initiator(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	struct tier_err err = { "" };

	(void)state;
	discover("memoryless-node", &t);
	tier_probe_report_init(&r);
	assert_int_equal(tier_probe_plan(&r, &t, (int[]){ 2 }, 1, &err), 0);
	assert_int_equal(r.nr_initiators, 2);
	assert_int_equal(r.initiators[0].reference, 0);
	/* Node 1 has CPUs, no memory: its reference is the nearest node with
	 * memory. */
	assert_int_not_equal(r.initiators[1].reference, 1);
	assert_non_null(tier_probe_report_node(&r, r.initiators[1].reference));
	assert_null(tier_probe_report_node(&r, 1));
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

/* ---------------------------------------------------------------- judge */

/* The tiered guest: three nodes of the same host RAM, HMAT claiming
 * 100/250/500 ns and 20/8/2 GiB/s. Measured alike (within 3%), nodes 1
 * and 2 contradict their claims; node 0 is the yardstick; the kernel's
 * order is not contradicted (nothing is measured faster than a node
 * ranked above it); all three form one measured tier. */
static void test_judge_guest_lies(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	size_t i;

	(void)state;
	plan_guest(&t, &r);
	measure(&r, 0, 0, 410, 900, 700, 300);
	measure(&r, 1, 0, 402, 910, 690, 250);
	measure(&r, 2, 0, 415, 880, 705, 300);
	tier_probe_judge(&r);
	assert_false(r.nodes[0].claim_mismatch);
	assert_int_equal(r.nodes[0].mismatch, 0);
	for (i = 1; i < 3; i++) {
		const struct tier_probe_node *n = &r.nodes[i];

		assert_true(n->claim_mismatch);
		assert_int_equal(n->mismatch, (1u << TIER_PROBE_LATENCY) | (1u << TIER_PROBE_READ_BW) |
					      (1u << TIER_PROBE_WRITE_BW) | (1u << TIER_PROBE_SLIT));
		assert_true(n->ratio[TIER_PROBE_LATENCY] > 0.9 && n->ratio[TIER_PROBE_LATENCY] < 1.1);
	}
	assert_true(fabs(r.nodes[1].claimed_ratio[TIER_PROBE_LATENCY] - 2.5) < 1e-9);
	assert_true(fabs(r.nodes[2].claimed_ratio[TIER_PROBE_READ_BW] - 10.0) < 1e-9);
	assert_true(fabs(r.nodes[2].claimed_ratio[TIER_PROBE_SLIT] - 5.0) < 1e-9);
	for (i = 0; i < 3; i++) {
		assert_false(r.nodes[i].order_mismatch);
		assert_int_equal(r.nodes[i].measured_rank, 0);
	}
	assert_true(fabs(r.nodes[0].measured_adistance - 576) < 1e-9);
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

/* Firmware that tells the truth: nothing flagged, three measured tiers. */
static void test_judge_honest(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	size_t i;

	(void)state;
	plan_guest(&t, &r);
	measure(&r, 0, 0, 100, 20480, 20480, 200);
	measure(&r, 1, 0, 260, 8000, 8100, 200);
	measure(&r, 2, 0, 480, 2100, 2000, 200);
	tier_probe_judge(&r);
	for (i = 0; i < 3; i++) {
		assert_false(r.nodes[i].claim_mismatch);
		assert_false(r.nodes[i].order_mismatch);
		assert_int_equal(r.nodes[i].measured_rank, (int)i);
	}
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

/* The tolerance: claimed 2.5x; measured 2.0x is 25% off (not more: ok),
 * 1.9x is 31.6% off (a mismatch), unless the noise makes up the rest. */
static void test_judge_tolerance(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	const struct tier_probe_node *n1;

	(void)state;
	plan_guest(&t, &r);
	n1 = &r.nodes[1];
	measure(&r, 0, 0, 100, 20480, 20480, 0);
	measure(&r, 1, 0, 200, 8192, 8192, 0);
	measure(&r, 2, 0, 500, 2048, 2048, 0);
	tier_probe_judge(&r);
	assert_false(n1->mismatch & (1u << TIER_PROBE_LATENCY));
	measure(&r, 1, 0, 190, 8192, 8192, 0);
	tier_probe_judge(&r);
	assert_true(n1->mismatch & (1u << TIER_PROBE_LATENCY));
	assert_false(n1->mismatch & (1u << TIER_PROBE_READ_BW));
	/* 10% noise on node 1: tolerance 35%. */
	measure(&r, 1, 0, 190, 8192, 8192, 1000);
	tier_probe_judge(&r);
	assert_false(n1->claim_mismatch);
	/* A wider tolerance from the caller. */
	measure(&r, 1, 0, 120, 8192, 8192, 0);
	tier_probe_judge(&r);
	assert_true(n1->claim_mismatch);
	r.tolerance_bp = 15000;
	tier_probe_judge(&r);
	assert_false(n1->mismatch & (1u << TIER_PROBE_LATENCY));
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

/* The kernel ranks 0 < 1 < 2; node 1 measures slower than node 2. */
static void test_judge_order(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	struct tier_tier_override *ovr;
	struct tier_err err = { "" };
	size_t nr;
	int *ids;

	(void)state;
	plan_guest(&t, &r);
	measure(&r, 0, 0, 100, 20000, 20000, 100);
	measure(&r, 1, 0, 600, 2000, 2000, 100);
	measure(&r, 2, 0, 250, 8000, 8000, 100);
	tier_probe_judge(&r);
	assert_false(r.nodes[0].order_mismatch);
	assert_true(r.nodes[1].order_mismatch);
	assert_true(r.nodes[2].order_mismatch);
	assert_int_equal(r.nodes[0].measured_rank, 0);
	assert_int_equal(r.nodes[2].measured_rank, 1);
	assert_int_equal(r.nodes[1].measured_rank, 2);

	/* The measured order as an override of the topology's ranking. */
	assert_int_equal(tier_probe_override(&r, &ovr, &nr, &ids, &err), 0);
	assert_int_equal(nr, 3);
	assert_int_equal(ovr[1].nr_nodes, 1);
	assert_int_equal(ovr[1].nodes[0], 2);
	assert_int_equal(ovr[2].nodes[0], 1);
	assert_int_equal(tier_topology_rank(&t, ovr, nr, &err), 0);
	assert_int_equal(t.rank_source, TIER_RANK_CONFIG);
	assert_int_equal(tier_topology_node_rank(&t, 1), 2);
	free(ovr);
	free(ids);

	/* Nothing measured: no override. */
	assert_int_equal(tier_probe_plan(&r, &t, NULL, 0, &err), 0);
	tier_probe_judge(&r);
	assert_int_equal(tier_probe_override(&r, &ovr, &nr, &ids, &err), -EINVAL);
	assert_string_equal(err.msg, "no node was measured");
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

/* ---------------------------------------------------------------- file */

static char *json_string(const struct tier_probe_report *r)
{
	struct json_object *o = tier_probe_report_to_json(r);
	char *s;

	assert_non_null(o);
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

/* A saved report is read as stored: its measured ranks may skip (node 0
 * rank 1, node 2 rank 2000000000, none rank 0). The override makes a tier
 * of the ranks that have nodes only, in their order; it once made a tier
 * of each rank up to the largest, empty ones and all. */
static void test_override_rank_gaps(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	struct tier_tier_override *ovr;
	struct tier_err err = { "" };
	size_t nr;
	int *ids;

	(void)state;
	plan_guest(&t, &r);
	r.nodes[0].measured_rank = 1;
	r.nodes[1].measured_rank = -1;
	r.nodes[2].measured_rank = 2000000000;
	assert_int_equal(tier_probe_override(&r, &ovr, &nr, &ids, &err), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(ovr[0].nr_nodes, 1);
	assert_int_equal(ovr[0].nodes[0], 0);
	assert_int_equal(ovr[1].nr_nodes, 1);
	assert_int_equal(ovr[1].nodes[0], 2);
	free(ovr);
	free(ids);
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

static void test_file_round_trip(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r, back;
	struct tier_tier_override *ovr;
	struct tier_config cfg;
	struct tier_err err = { "" };
	char path[] = "/tmp/tierd-probe-test.XXXXXX", file[64];
	char *a, *b;
	size_t nr;
	int *ids;

	(void)state;
	plan_guest(&t, &r);
	r.buffer_bytes = 32 << 20;
	r.nr_chase_steps = 100000;
	measure(&r, 0, 0, 410.26, 900.4, 700, 300);
	measure(&r, 1, 0, 402, 910, 690, 250);
	measure(&r, 2, 0, 415, 880, 705, 300);
	tier_probe_judge(&r);
	assert_non_null(mkdtemp(path));
	snprintf(file, sizeof(file), "%s/sub/probe.json", path);
	assert_int_equal(tier_probe_report_save(&r, file, &err), 0);
	tier_probe_report_init(&back);
	if (tier_probe_report_load(file, &back, &err))
		fail_msg("load: %s", err.msg);
	a = json_string(&r);
	b = json_string(&back);
	assert_string_equal(a, b);
	assert_true(strstr(a, "\"latency_ns\":410.3,"));
	assert_true(back.nodes[2].claim_mismatch);
	assert_int_equal(back.nodes[1].from[0].on_node_bp, 10000);
	assert_int_equal(tier_probe_load_override(file, &ovr, &nr, &ids, &err), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(ovr[0].nr_nodes, 3);
	free(ovr);
	free(ids);

	/* The configuration's choice: rank_by measured reads the file. */
	{
		struct tier_config_topology ct;

		assert_int_equal(tier_config_init(&cfg), 0);
		assert_int_equal(tier_config_topology_init(&ct, &cfg, &err), 0);
		assert_int_equal(ct.spec.nr_tiers, 0);
		assert_false(ct.spec.measured);
		tier_config_topology_release(&ct);
		cfg.rank_by = TIER_CONFIG_RANK_MEASURED;
		assert_int_equal(tier_config_set_probe_file(&cfg, file), 0);
		assert_int_equal(tier_config_topology_init(&ct, &cfg, &err), 0);
		assert_int_equal(ct.spec.nr_tiers, 1);
		assert_true(ct.spec.measured);
		assert_int_equal(ct.spec.tiers[0].nodes[2], 2);
		tier_config_topology_release(&ct);
		assert_int_equal(tier_config_set_probe_file(&cfg, "/nonexistent/p.json"), 0);
		assert_int_equal(tier_config_topology_init(&ct, &cfg, &err), -ENOENT);
		tier_config_topology_release(&ct);
		assert_string_equal(err.msg, "topology.rank_by: measured: /nonexistent/p.json: No such file or directory");
	}
	tier_config_release(&cfg);
	free(a);
	free(b);
	unlink(file);
	snprintf(file, sizeof(file), "%s/sub", path);
	rmdir(file);
	rmdir(path);
	tier_probe_report_release(&back);
	tier_probe_report_release(&r);
	tier_topology_release(&t);
}

static void expect_load_error(const char *doc, const char *want)
{
	char path[] = "/tmp/tierd-probe-bad.XXXXXX";
	struct tier_probe_report r;
	struct tier_err err = { "" };
	FILE *f;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(doc, f);
	fclose(f);
	tier_probe_report_init(&r);
	assert_int_equal(tier_probe_report_load(path, &r, &err), -EINVAL);
	if (strncmp(err.msg, path, strlen(path)) || !strstr(err.msg, want))
		fail_msg("error '%s', expected '%s: ...%s'", err.msg, path, want);
	assert_int_equal(r.nr_nodes, 0);
	unlink(path);
}

static void test_file_errors(void **state)
{
	struct tier_topology t;
	struct tier_probe_report r;
	struct tier_err err = { "" };
	char *good, *bad;
	char *p;

	(void)state;
	expect_load_error("", "not a JSON document");
	expect_load_error("{\"version\":1", "not a JSON document (unexpected end");
	expect_load_error("{} x", "trailing data");
	expect_load_error("[]", "not a JSON object");
	expect_load_error("{\"version\":2}", "version 2, expected 1");
	expect_load_error("{\"version\":1}", ": tolerance_pct: missing");
	/* Refused before it is converted (2.3e10 % overflowed the basis
	 * points; UBSan's finding). */
	expect_load_error("{\"version\":1,\"tolerance_pct\":232676608}", ": tolerance_pct: above 1000");
	expect_load_error("{\"version\":1,\"tolerance_pct\":25,\"slit_tolerance_pct\":1e300}",
			  ": slit_tolerance_pct: above 1000");

	plan_guest(&t, &r);
	measure(&r, 0, 0, 100, 1000, 1000, 0);
	measure(&r, 1, 0, 100, 1000, 1000, 0);
	tier_probe_judge(&r);
	good = json_string(&r);
	/* The first pair's first latency sample made a string. */
	p = strstr(good, "\"samples\":[100.0,");
	assert_non_null(p);
	bad = malloc(strlen(good) + 8);
	memcpy(bad, good, (size_t)(p - good));
	sprintf(bad + (p - good), "\"samples\":[\"x\",%s", p + strlen("\"samples\":[100.0,"));
	expect_load_error(bad, ": nodes[0].from[0].latency_ns.samples: not a list of numbers");
	free(bad);
	free(good);
	/* NUL bytes after the document are trailing data, not whitespace. */
	assert_int_equal(tier_probe_report_parse("{} \0\0", 5, "mem.json", &r, &err), -EINVAL);
	assert_string_equal(err.msg, "mem.json: not a JSON document (trailing data at byte 3)");
	/* A missing file says so (and leaves the report empty). */
	assert_int_equal(tier_probe_report_load("/nonexistent/probe.json", &r, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent/probe.json: No such file or directory");
	assert_int_equal(r.nr_nodes, 0);
	tier_topology_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_select_nodes),
		cmocka_unit_test(test_plan_guest),
		cmocka_unit_test(test_plan_two_initiators),
		cmocka_unit_test(test_plan_memoryless_initiator),
		cmocka_unit_test(test_judge_guest_lies),
		cmocka_unit_test(test_judge_honest),
		cmocka_unit_test(test_judge_tolerance),
		cmocka_unit_test(test_judge_order),
		cmocka_unit_test(test_override_rank_gaps),
		cmocka_unit_test(test_file_round_trip),
		cmocka_unit_test(test_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
