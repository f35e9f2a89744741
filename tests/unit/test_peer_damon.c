/* test_peer_damon.c - the damon peer shows the behaviour DAMON's
 * documentation and source describe for damo's mem_tier.sh: the quota
 * goal tuner starts at one byte and never lets a charge window exceed the
 * effective quota; migrate_cold runs only while node 0 misses its free
 * goal; migrate_hot serves the hottest regions first within the quota. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../lib/policy_env.h"
#include "core/policies/peers.h"

/* dram-cxl at 1:4, 1024 pages per unit: node 0 1024 pages, node 1 4096. */
#define NR_PAGES 4096
#define UNIT_PAGES 1024
#define MAX_NR 20		/* 100 ms aggregation / 5 ms sampling */

struct region {
	uint64_t start, end;
	uint32_t nr_accesses;
};

struct fx {
	struct test_env te;
	const struct tier_policy_ops *ops;
	void *priv;
};

static void fx_init_policy(struct fx *f, const char *policy)
{
	assert_int_equal(test_env_init(&f->te, "dram-cxl", "1:4", UNIT_PAGES, NR_PAGES), 0);
	f->ops = tier_policy_find(policy);
	assert_non_null(f->ops);
	f->te.env.interval_us = f->ops->interval_us;
	f->te.now_us = 0;
}

/* damon, as damo's mem_tier.sh sets it up. */
static void fx_init(struct fx *f)
{
	fx_init_policy(f, "damon");
}

static void fx_create(struct fx *f)
{
	struct tier_err err = { "" };

	if (f->ops->create(&f->te.env, &f->priv, &err))
		fail_msg("create: %s", err.msg);
}

static void fx_release(struct fx *f)
{
	f->ops->destroy(f->priv);
	test_env_release(&f->te);
}

static void place(struct fx *f, uint64_t first, uint64_t end, int node)
{
	for (; first < end; first++)
		test_env_place(&f->te, first, node);
}

/* One second: one DAMON aggregation over all pages, the accessed bits of
 * [young_start, young_end), then the policy's tick. */
static void second(struct fx *f, const struct region *r, size_t nr, uint64_t young_start,
		   uint64_t young_end)
{
	struct tier_obs o;
	size_t i;

	for (i = 0; i < nr; i++) {
		memset(&o, 0, sizeof(o));
		o.kind = TIER_OBS_ACCESSED;
		o.page = r[i].start;
		o.nr_pages = (uint32_t)(r[i].end - r[i].start);
		o.count = r[i].nr_accesses;
		o.max = MAX_NR;
		o.interval_us = 100000;
		f->ops->observe(f->priv, &o, 1);
	}
	memset(&o, 0, sizeof(o));
	o.kind = TIER_OBS_ACCESSED;
	o.page = 0;
	o.nr_pages = NR_PAGES;
	o.max = 1;
	f->ops->observe(f->priv, &o, 1);	/* accessed bits: none... */
	if (young_end > young_start) {
		o.page = young_start;
		o.nr_pages = (uint32_t)(young_end - young_start);
		o.count = 1;
		f->ops->observe(f->priv, &o, 1);	/* ...but these */
	}
	f->te.now_us += 1000000;
	assert_int_equal(f->ops->tick(f->priv, f->te.now_us), 0);
}

/* damon_feed_loop_next_input(): with node 0 full (free goal score 0) the
 * effective quota doubles every window from 1 byte, so window k may move
 * at most 2^k bytes: nothing before the 12th (4 KiB), then a growing
 * trickle, never more than the quota. */
static void test_quota_never_exceeded(void **state)
{
	const struct region cold[] = { { 0, NR_PAGES, 0 } };
	uint64_t before, k;
	struct fx f;

	(void)state;
	fx_init(&f);
	place(&f, 0, UNIT_PAGES, 0);		/* node 0 full */
	place(&f, UNIT_PAGES, 3 * UNIT_PAGES, 1);
	fx_create(&f);
	for (k = 1; k <= 20; k++) {
		before = f.te.moves;
		second(&f, cold, 1, 0, 0);
		assert_true((f.te.moves - before) * 4096 <= (UINT64_C(1) << k));
		if (k < 12)
			assert_int_equal(f.te.moves, 0);
	}
	assert_true(f.te.moves > 0);
	assert_true(f.te.used[1] > 2 * UNIT_PAGES);	/* they went down */
	fx_release(&f);
}

/* migrate_cold with goal node_mem_free_bp 0.5%: node 0 with 2.3% free is
 * past twice the goal, so the quota stays at its 1-byte floor and nothing
 * is demoted however cold; once node 0 is full the goal is missed and cold
 * pages go. */
static void test_cold_demoted_only_below_free_goal(void **state)
{
	const struct region cold[] = { { 0, NR_PAGES, 0 } };
	struct fx f;
	int i;

	(void)state;
	fx_init(&f);
	place(&f, 0, 1000, 0);			/* 24 free: 234 bp */
	place(&f, UNIT_PAGES, 2 * UNIT_PAGES, 1);
	fx_create(&f);
	for (i = 0; i < 30; i++)
		second(&f, cold, 1, 0, 0);
	assert_int_equal(f.te.moves, 0);
	place(&f, 1000, UNIT_PAGES, 0);		/* node 0 full */
	for (i = 0; i < 30; i++)
		second(&f, cold, 1, 0, 0);
	assert_true(f.te.moves > 0);
	assert_true(f.te.used[0] < UNIT_PAGES);
	fx_release(&f);
}

/* migrate_hot with goal node_mem_used_bp 99.7% on a half-used node 0: the
 * quota grows ~50%/s from 1 byte; once it admits pages, the quota's score
 * threshold (damos_adjust_quota()) takes the hottest region first. */
static void test_hot_promoted_hottest_first(void **state)
{
	/* node 1 holds [1024, 4096): A warm, B hottest, C hot, rest idle. */
	const struct region regs[] = {
		{ 0, 1024, 0 },
		{ 1024, 1536, 4 },		/* A */
		{ 1536, 2048, 18 },		/* B */
		{ 2048, 2560, 10 },		/* C */
		{ 2560, NR_PAGES, 0 },
	};
	uint64_t p, promoted = 0;
	struct fx f;
	int i;

	(void)state;
	fx_init(&f);
	place(&f, 0, 512, 0);			/* node 0 half used */
	place(&f, 1024, NR_PAGES, 1);
	fx_create(&f);
	for (i = 0; i < 40 && promoted < 64; i++) {
		second(&f, regs, 5, 1024, 2560);
		promoted = f.te.moves;
	}
	assert_true(promoted >= 64);
	for (p = 1024; p < NR_PAGES; p++)
		if (f.te.page_node[p] == 0)
			assert_true(p >= 1536 && p < 2048);	/* only B */
	fx_release(&f);
}

/* damon-fixed-quota: no goals, so the first window may charge the whole
 * 200 MB size quota (damos_set_effective_quota(): esz = sz), whatever node
 * 0's free space; the young filter still keeps the pages touched since the
 * last look. */
static void test_fixed_quota_demotes_at_once(void **state)
{
	const struct region cold[] = { { 0, NR_PAGES, 0 } };
	struct fx f;
	uint64_t p;

	(void)state;
	fx_init_policy(&f, "damon-fixed-quota");
	place(&f, 0, 512, 0);			/* node 0 half free */
	place(&f, UNIT_PAGES, 2 * UNIT_PAGES, 1);
	fx_create(&f);
	second(&f, cold, 1, 0, 512);		/* the first apply: all young */
	assert_int_equal(f.te.moves, 0);
	second(&f, cold, 1, 0, 256);		/* [0, 256) young */
	assert_int_equal(f.te.moves, 256);	/* [256, 512) demoted at once */
	for (p = 0; p < 256; p++)
		assert_int_equal(f.te.page_node[p], 0);
	for (p = 256; p < 512; p++)
		assert_int_equal(f.te.page_node[p], 1);
	fx_release(&f);
}

/* The schemes as damo's scripts/mem_tier.sh (damonitor/damo 7e1d3afcf9b9)
 * starts them, one assertion per line of its `damo start` command, and
 * the variant without goals. A change to a default fails here. */
static void test_upstream_defaults(void **state)
{
	const struct tier_damon_config *c;
	struct fx f;

	(void)state;
	fx_init(&f);
	fx_create(&f);
	c = tier__damon_config(f.priv);
	assert_int_equal(c->apply_interval_us, 1000000);	/* --damos_apply_interval 1s */
	assert_int_equal(c->quota_reset_us, 1000000);	/* --damos_quota_interval 1s */
	assert_int_equal(c->quota_sz_bytes, 200 << 20);	/* --damos_quota_space 200MB */
	assert_int_equal(c->cold_max_access_pct, 0);	/* migrate_cold: --damos_access_rate 0% 0% */
	assert_int_equal(c->hot_min_access_pct, 5);	/* migrate_hot: --damos_access_rate 5% max */
	assert_int_equal(c->free_goal_bp, 50);		/* --damos_quota_goal node_mem_free_bp 0.5% 0 */
	assert_int_equal(c->used_goal_bp, 9970);	/* --damos_quota_goal node_mem_used_bp 99.7% 0 */
	assert_true(c->quota_goals);
	assert_int_equal(c->weight_sz, 1);
	assert_int_equal(c->weight_nr_accesses, 1);
	assert_int_equal(c->weight_age, 1);
	assert_null(f.ops->variant_of);
	/* The young filters (reject young, allow young) read accessed bits. */
	assert_string_equal(f.ops->default_tracker, "damon,idle");
	assert_int_equal(f.ops->interval_us, 1000000);
	fx_release(&f);

	fx_init_policy(&f, "damon-fixed-quota");
	fx_create(&f);
	c = tier__damon_config(f.priv);
	assert_false(c->quota_goals);
	assert_int_equal(c->quota_sz_bytes, 200 << 20);
	assert_int_equal(c->hot_min_access_pct, 5);
	assert_int_equal(c->cold_max_access_pct, 0);
	assert_string_equal(f.ops->variant_of, "damon");
	fx_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_never_exceeded),
		cmocka_unit_test(test_cold_demoted_only_below_free_goal),
		cmocka_unit_test(test_hot_promoted_hottest_first),
		cmocka_unit_test(test_fixed_quota_demotes_at_once),
		cmocka_unit_test(test_upstream_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
