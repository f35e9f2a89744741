/* test_groups.c - control groups' shares of each tier in tiersim: the
 * multi-tenant workload (two tenants whose hot sets together exceed the
 * fast tier) under the tierd policy, each tenant a group.
 *   - a cap on tier 0 holds the capped tenant's fast pages within it (plus
 *     one migration batch) while the other tenant's rise;
 *   - on three tiers, the pages that a cap pushes out of tier 0 skip tier 1
 *     where the group's cap there is reached;
 *   - weights 1:3 split a contended tier 0 about 1:3;
 *   - a min keeps a tenant's pages from being taken below it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "backend/sim/engine.h"
#include "core/groups.h"

#define MAX_BATCH 1024		/* pages per move() call in the engine */

static struct tier_sim_params params(const char *machine, const struct tier_groups *g)
{
	struct tier_sim_params p;

	memset(&p, 0, sizeof(p));
	p.machine = machine;
	p.unit_bytes = 16u << 20;
	p.workload = "multi-tenant";
	p.policy = "tierd";
	p.seed = 3;
	p.duration_us = 6000000;
	p.groups = g;
	return p;
}

static void run_ok(const struct tier_sim_params *p, struct tier_sim_result *r)
{
	struct tier_err err = { "" };

	if (tier_sim_run(p, r, &err))
		fail_msg("%s: %s", p->workload, err.msg);
	assert_int_equal(r->nr_tenants, 2);
}

/* A group per tenant given; rules by "max"/"min" specs. */
static void one_rule(struct tier_groups *g, unsigned tenant, const char *which, const char *spec)
{
	struct tier_err err = { "" };
	size_t k;

	if (g->nr == 0)
		tier_groups_init(g);
	for (k = 1; k < g->nr; k++)
		if (g->owner_group[tenant] == k)
			break;
	if (k == g->nr) {
		g->owner_group[tenant] = (uint8_t)k;
		g->nr++;
	}
	if (which && tier_group_rule_set(&g->rule[k], which, spec, &err))
		fail_msg("%s: %s", spec, err.msg);
}

static uint64_t tier_pages(const struct tier_sim_result *r, size_t rank)
{
	return r->tenant[0].pages[rank] + r->tenant[1].pages[rank];
}

static void test_cap_holds(void **state)
{
	struct tier_groups g;
	struct tier_sim_params p = params("dram-cxl", NULL);
	struct tier_sim_result base, capped;
	uint64_t fast, cap;

	(void)state;
	run_ok(&p, &base);
	fast = tier_pages(&base, 0);
	/* Uncapped, tenant 1 (the hotter per page) holds most of tier 0. */
	assert_true(base.tenant[1].pages[0] > fast / 2);

	memset(&g, 0, sizeof(g));
	one_rule(&g, 1, "max", "0=10%");
	p.groups = &g;
	run_ok(&p, &capped);
	cap = fast / 10;
	assert_true(capped.tenant[1].peak_pages[0] <= cap + cap / 50 + MAX_BATCH);
	assert_true(capped.tenant[1].pages[0] <= cap + cap / 50);
	/* The room goes to the other tenant, and its accesses get faster. */
	assert_true(capped.tenant[0].pages[0] > base.tenant[0].pages[0] + fast / 4);
	assert_true(capped.tenant[0].amat_ns < base.tenant[0].amat_ns);
	assert_true(capped.tenant[1].amat_ns > base.tenant[1].amat_ns);
}

static void test_cap_spills_past_capped_tier(void **state)
{
	struct tier_groups g;
	struct tier_sim_params p = params("dram-cxl-slow", NULL);
	struct tier_sim_result r;
	uint64_t t0, t1;

	(void)state;
	memset(&g, 0, sizeof(g));
	one_rule(&g, 1, "max", "0=10%");
	one_rule(&g, 1, "max", "1=5%");
	p.groups = &g;
	run_ok(&p, &r);
	t0 = tier_pages(&r, 0);
	t1 = tier_pages(&r, 1);
	assert_true(r.tenant[1].pages[0] <= t0 / 10 + t0 / 50);
	/* Tier 1 is nearly empty of tenant 1 beyond its 5%: its pages went
	 * on to tier 2. */
	assert_true(r.tenant[1].peak_pages[1] <= t1 / 20 + t1 / 50 + MAX_BATCH);
	assert_true(r.tenant[1].pages[2] > r.tenant[1].pages[0] + r.tenant[1].pages[1]);
}

static void test_weights_split(void **state)
{
	struct tier_groups g;
	struct tier_sim_params p = params("dram-cxl", NULL);
	struct tier_sim_result r;
	double share0;

	(void)state;
	memset(&g, 0, sizeof(g));
	one_rule(&g, 0, NULL, NULL);
	one_rule(&g, 1, NULL, NULL);
	g.rule[g.owner_group[0]].weight = 300;
	g.rule[g.owner_group[1]].weight = 100;
	p.groups = &g;
	run_ok(&p, &r);
	share0 = (double)r.tenant[0].pages[0] / (double)tier_pages(&r, 0);
	assert_true(share0 > 0.70 && share0 < 0.80);

	/* And the other way round. */
	g.rule[g.owner_group[0]].weight = 100;
	g.rule[g.owner_group[1]].weight = 300;
	run_ok(&p, &r);
	share0 = (double)r.tenant[0].pages[0] / (double)tier_pages(&r, 0);
	assert_true(share0 > 0.20 && share0 < 0.30);
}

static void test_min_protects(void **state)
{
	struct tier_groups g;
	struct tier_sim_params p = params("dram-cxl", NULL);
	struct tier_sim_result base, r;
	uint64_t fast;

	(void)state;
	run_ok(&p, &base);
	fast = tier_pages(&base, 0);
	/* Tenant 0 ends with less than 40% of tier 0 on heat alone... */
	assert_true(base.tenant[0].pages[0] < fast * 35 / 100);
	memset(&g, 0, sizeof(g));
	one_rule(&g, 0, "min", "0=40%");
	p.groups = &g;
	run_ok(&p, &r);
	/* ...and keeps 40% with a min (first touch gave it about half). */
	assert_true(r.tenant[0].pages[0] >= fast * 40 / 100 - 1);
}

static void test_no_rules_no_change(void **state)
{
	struct tier_groups g;
	struct tier_sim_params p = params("dram-cxl", NULL);
	struct tier_sim_result a, b;

	(void)state;
	run_ok(&p, &a);
	/* Groups without limits or weights change nothing. */
	memset(&g, 0, sizeof(g));
	one_rule(&g, 1, NULL, NULL);
	p.groups = &g;
	run_ok(&p, &b);
	assert_true(a.amat_ns == b.amat_ns);
	assert_int_equal(a.migrated_bytes, b.migrated_bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_holds),
		cmocka_unit_test(test_cap_spills_past_capped_tier),
		cmocka_unit_test(test_weights_split),
		cmocka_unit_test(test_min_protects),
		cmocka_unit_test(test_no_rules_no_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
