/* test_engine.c - tiersim's engine: determinism, the oracle as a bound,
 * the memory model's load response, the static baseline, bad input. */
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
#include "core/policy.h"

static struct tier_sim_params params(const char *workload, const char *policy)
{
	struct tier_sim_params p;

	memset(&p, 0, sizeof(p));
	p.machine = "dram-cxl";
	p.unit_bytes = 8u << 20;	/* small machine: fast tests */
	p.workload = workload;
	p.policy = policy;
	p.seed = 7;
	p.duration_us = 3000000;
	return p;
}

static void run_ok(const struct tier_sim_params *p, struct tier_sim_result *r)
{
	struct tier_err err = { "" };

	if (tier_sim_run(p, r, &err))
		fail_msg("%s/%s: %s", p->workload, p->policy, err.msg);
}

static void test_same_seed_same_result(void **state)
{
	struct tier_sim_params p = params("zipf", "tierd");
	struct tier_sim_result a, b;

	(void)state;
	run_ok(&p, &a);
	run_ok(&p, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	p.seed = 8;
	run_ok(&p, &b);
	assert_true(a.amat_ns != b.amat_ns || a.accesses != b.accesses);
}

static void test_static_never_moves(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "static");
	struct tier_sim_result r;

	(void)state;
	run_ok(&p, &r);
	assert_int_equal(r.migrated_bytes, 0);
	assert_true(r.accesses > 1000000);
	/* First touch in random order: the fast tier (1 of 5 units, the
	 * footprint 4 units) holds a quarter of the pages, so about a quarter
	 * of the accesses. */
	assert_true(r.fast_access_ratio > 0.20 && r.fast_access_ratio < 0.30);
}

static void test_oracle_bounds_policies(void **state)
{
	static const char *const workloads[] = {
		"gups-hotset", "zipf", "scan-plus-hotset", "bandwidth-antagonist", "thrash",
	};
	size_t w, k;

	(void)state;
	for (w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++) {
		struct tier_sim_params p = params(workloads[w], "oracle");
		struct tier_sim_result o;

		run_ok(&p, &o);
		assert_int_equal(o.migrated_bytes, 0);	/* moved for free */
		for (k = 0; tier_policies[k]; k++) {
			struct tier_sim_result r;

			p.policy = tier_policies[k]->name;
			run_ok(&p, &r);
			if (o.amat_ns > r.amat_ns)
				fail_msg("%s: oracle %.2f ns > %s %.2f ns", workloads[w], o.amat_ns,
					 r.policy, r.amat_ns);
		}
	}
}

static void test_oracle_no_gain_on_uniform(void **state)
{
	struct tier_sim_params p = params("uniform", "oracle");
	struct tier_sim_result o, s;

	(void)state;
	run_ok(&p, &o);
	p.policy = "static";
	run_ok(&p, &s);
	/* Nothing to learn from a uniform workload: the oracle may not profit
	 * from noise. Within 1%. */
	assert_true(o.amat_ns > s.amat_ns * 0.99);
}

static void test_antagonist_loads_fast_tier(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "oracle");
	struct tier_sim_result quiet, loaded;

	(void)state;
	run_ok(&p, &quiet);
	p.workload = "bandwidth-antagonist";
	run_ok(&p, &loaded);
	/* Same access pattern, a loaded fast tier: slower, and the oracle
	 * then keeps fewer accesses in the fast tier (it balances). */
	assert_true(loaded.amat_ns > quiet.amat_ns * 1.05);
	assert_true(loaded.fast_access_ratio < quiet.fast_access_ratio);
}

static void test_timeline(void **state)
{
	struct tier_sim_params p = params("phase-change", "tierd");
	struct tier_sim_result r;
	char line[512];
	size_t rows = 0;
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	p.timeline = f;
	run_ok(&p, &r);
	rewind(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_true(strncmp(line, "time_s,amat_ns,fast_access_ratio", 32) == 0);
	while (fgets(line, sizeof(line), f))
		rows++;
	/* 100 ms epochs over 3 s. */
	assert_true(rows >= 29 && rows <= 31);
	fclose(f);
}

static void expect_error(struct tier_sim_params p, int code, const char *msg)
{
	struct tier_sim_result r;
	struct tier_err err = { "" };

	assert_int_equal(tier_sim_run(&p, &r, &err), code);
	if (!strstr(err.msg, msg))
		fail_msg("'%s' lacks '%s'", err.msg, msg);
}

static void test_bad_input(void **state)
{
	struct tier_sim_params p = params("gups-hotset", "tierd");

	(void)state;
	p.machine = "nope";
	expect_error(p, -ENOENT, "unknown machine preset 'nope'");
	p = params("nope", "tierd");
	expect_error(p, -ENOENT, "unknown workload 'nope'");
	p = params("gups-hotset", "nope");
	expect_error(p, -ENOENT, "unknown policy 'nope'");
	p = params("gups-hotset", "tierd");
	p.tracker = "pebs";
	expect_error(p, -EINVAL, "unknown tracker 'pebs'");
	p = params("trace:/nonexistent/x.trace", "tierd");
	expect_error(p, -ENOENT, "/nonexistent/x.trace");
	p = params("gups-hotset", "tierd");
	p.ratio = "1:2:3";
	expect_error(p, -EINVAL, "ratio '1:2:3'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_result),
		cmocka_unit_test(test_static_never_moves),
		cmocka_unit_test(test_oracle_bounds_policies),
		cmocka_unit_test(test_oracle_no_gain_on_uniform),
		cmocka_unit_test(test_antagonist_loads_fast_tier),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests_name("sim-engine", tests, NULL, NULL);
}
