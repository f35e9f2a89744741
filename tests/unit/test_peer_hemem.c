/* test_peer_hemem.c - the hemem peer shows the behaviour HeMem's source
 * (cuhk-mass/hemem src/pebs.c) describes: a 2 MiB region is hot at 4
 * sampled loads or 4 sampled stores, counted apart; a count passing the
 * cooling threshold advances the global clock and halves every count
 * lazily; cold DRAM regions are demoted first-in first-out to make room;
 * a pass moves a bounded amount. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../lib/policy_env.h"
#include "core/policies/peers.h"

/* dram-cxl at 1:4 with 2048 pages per unit: node 0 holds 2048 pages (4
 * regions of 512), node 1 8192. Regions 0-3 start in DRAM, 4-15 in CXL. */
#define NR_PAGES 8192
#define UNIT_PAGES 2048
#define RP 512

struct fx {
	struct test_env te;
	const struct tier_policy_ops *ops;
	void *priv;
};

static void fx_init(struct fx *f)
{
	struct tier_err err = { "" };
	uint64_t p;

	assert_int_equal(test_env_init(&f->te, "dram-cxl", "1:4", UNIT_PAGES, NR_PAGES), 0);
	f->ops = tier_policy_find("hemem");
	assert_non_null(f->ops);
	assert_string_equal(f->ops->default_tracker, "samples");
	f->te.env.interval_us = f->ops->interval_us;
	f->te.now_us = 1000000;
	for (p = 0; p < NR_PAGES; p++)
		test_env_place(&f->te, p, p < 4 * RP ? 0 : 1);
	if (f->ops->create(&f->te.env, &f->priv, &err))
		fail_msg("create: %s", err.msg);
}

static void fx_release(struct fx *f)
{
	f->ops->destroy(f->priv);
	test_env_release(&f->te);
}

static void sample(struct fx *f, uint64_t region, bool write)
{
	struct tier_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = TIER_OBS_SAMPLE;
	o.page = region * RP + 7;
	o.nr_pages = 1;
	o.count = 2500;
	o.write = write;
	f->ops->observe(f->priv, &o, 1);
}

static void samples(struct fx *f, uint64_t region, bool write, int n)
{
	while (n--)
		sample(f, region, write);
}

static void tick(struct fx *f)
{
	f->te.now_us += f->te.env.interval_us;
	assert_int_equal(f->ops->tick(f->priv, f->te.now_us), 0);
}

/* Pages of region r on node n. */
static uint64_t on_node(const struct fx *f, uint64_t r, int n)
{
	uint64_t p, c = 0;

	for (p = r * RP; p < (r + 1) * RP; p++)
		c += f->te.page_node[p] == n;
	return c;
}

/* pebs.h HOT_READ_THRESHOLD 4: three sampled loads leave a region cold,
 * the fourth makes it hot and the policy thread promotes it, demoting the
 * oldest cold DRAM region to make room. */
static void test_hot_at_four_reads(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	samples(&f, 8, false, 3);
	tick(&f);
	assert_false(tier__hemem_is_hot(f.priv, 8));
	assert_int_equal(on_node(&f, 8, 0), 0);
	assert_int_equal(f.te.moves, 0);

	sample(&f, 8, false);
	tick(&f);
	assert_true(tier__hemem_is_hot(f.priv, 8));
	assert_int_equal(on_node(&f, 8, 0), RP);
	/* Region 0 was the first on the DRAM cold list. */
	assert_int_equal(on_node(&f, 0, 1), RP);
	assert_int_equal(on_node(&f, 1, 0), RP);
	fx_release(&f);
}

/* Loads and stores count apart (accesses[DRAMREAD/NVMREAD] vs
 * accesses[WRITE]): 2 + 2 is not hot, 4 stores are. */
static void test_reads_and_writes_count_apart(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	samples(&f, 9, false, 2);
	samples(&f, 9, true, 2);
	samples(&f, 10, true, 3);
	tick(&f);
	assert_false(tier__hemem_is_hot(f.priv, 9));
	assert_false(tier__hemem_is_hot(f.priv, 10));
	assert_int_equal(tier__hemem_count(f.priv, 9, TIER_HEMEM_READS), 2);
	assert_int_equal(tier__hemem_count(f.priv, 9, TIER_HEMEM_WRITES), 2);

	sample(&f, 10, true);
	tick(&f);
	assert_true(tier__hemem_is_hot(f.priv, 10));
	assert_int_equal(on_node(&f, 10, 0), RP);
	assert_int_equal(on_node(&f, 9, 0), 0);
	fx_release(&f);
}

/* PEBS_COOLING_THRESHOLD 10: the sample that takes a count past 10
 * advances the global clock; every count is then worth half (applied
 * lazily, at the region's next sample or when the policy looks). */
static void test_cooling_halves_counts(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	samples(&f, 5, false, 3);
	samples(&f, 11, false, 10);
	assert_int_equal(tier__hemem_clock(f.priv), 0);
	assert_int_equal(tier__hemem_count(f.priv, 11, TIER_HEMEM_READS), 10);

	sample(&f, 11, false);	/* 11 > 10 */
	assert_int_equal(tier__hemem_clock(f.priv), 1);
	assert_int_equal(tier__hemem_count(f.priv, 11, TIER_HEMEM_READS), 5);
	assert_int_equal(tier__hemem_count(f.priv, 5, TIER_HEMEM_READS), 1);

	/* Region 5's fourth sample meets a raw count of 4 (HeMem checks before
	 * it shifts) and asks to be hot; the policy thread then sees the
	 * halved count and files it cold: not promoted. */
	sample(&f, 5, false);
	assert_int_equal(tier__hemem_count(f.priv, 5, TIER_HEMEM_READS), 2);
	tick(&f);
	tick(&f);
	assert_false(tier__hemem_is_hot(f.priv, 5));
	assert_int_equal(on_node(&f, 5, 0), 0);
	/* Region 11 was hot and stays hot: 11 >> 1 = 5 >= 4. */
	assert_true(tier__hemem_is_hot(f.priv, 11));
	assert_int_equal(on_node(&f, 11, 0), RP);
	fx_release(&f);
}

/* Cooling moves regions off the hot lists once their halved counts fall
 * below the thresholds (partial_cool_peek_and_move()). */
static void test_cooling_cools_hot_regions(void **state)
{
	struct fx f;
	int i;

	(void)state;
	fx_init(&f);
	samples(&f, 12, true, 4);
	tick(&f);
	assert_true(tier__hemem_is_hot(f.priv, 12));
	assert_int_equal(on_node(&f, 12, 0), RP);
	/* Two clock advances from another region: 4 >> 2 = 1. */
	for (i = 0; i < 2; i++)
		samples(&f, 13, false, 11);
	assert_int_equal(tier__hemem_clock(f.priv), 2);
	tick(&f);
	tick(&f);
	assert_false(tier__hemem_is_hot(f.priv, 12));
	/* Cold, but it stays in DRAM until room is needed. */
	assert_int_equal(on_node(&f, 12, 0), RP);
	fx_release(&f);
}

/* Each pass moves at most 10 GB of 128 GB DRAM (scaled: 10/128 of tier 0,
 * at least one region), and cold DRAM regions leave in FIFO order. */
static void test_pass_is_bounded_and_fifo(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	samples(&f, 6, false, 4);
	samples(&f, 7, false, 4);
	samples(&f, 14, false, 4);
	tick(&f);
	assert_int_equal(on_node(&f, 6, 0) + on_node(&f, 7, 0) + on_node(&f, 14, 0), RP);
	tick(&f);
	assert_int_equal(on_node(&f, 6, 0) + on_node(&f, 7, 0) + on_node(&f, 14, 0), 2 * RP);
	tick(&f);
	assert_int_equal(on_node(&f, 6, 0) + on_node(&f, 7, 0) + on_node(&f, 14, 0), 3 * RP);
	/* Regions 0, 1, 2 were demoted in that order; 3 stays. */
	assert_int_equal(on_node(&f, 0, 1), RP);
	assert_int_equal(on_node(&f, 1, 1), RP);
	assert_int_equal(on_node(&f, 2, 1), RP);
	assert_int_equal(on_node(&f, 3, 0), RP);
	assert_int_equal(f.te.used[0], 4 * RP);
	fx_release(&f);
}

/* With every DRAM region hot there is nothing to demote: the hot NVM
 * region waits ("all dram pages are hot"). */
static void test_no_demotion_of_hot_dram(void **state)
{
	struct fx f;
	uint64_t r;

	(void)state;
	fx_init(&f);
	for (r = 0; r < 4; r++)
		samples(&f, r, true, 4);
	tick(&f);
	samples(&f, 9, true, 4);
	tick(&f);
	tick(&f);
	assert_true(tier__hemem_is_hot(f.priv, 9));
	assert_int_equal(on_node(&f, 9, 0), 0);
	assert_int_equal(f.te.moves, 0);
	fx_release(&f);
}

/* The sampling setup as HeMem's source (cuhk-mass/hemem 57fb561) has it:
 * pebs.c pebs_init() opens a load event per tier (DRAMREAD, NVMREAD) and a
 * store event (WRITE), and perf_setup() gives each sample_period =
 * SAMPLE_PERIOD (pebs.h: 19997); the policy thread's interval is
 * PEBS_KSWAPD_INTERVAL (pebs.h: 10 ms). A change to a default fails here. */
static void test_upstream_defaults(void **state)
{
	const struct tier_policy_ops *ops = tier_policy_find("hemem");

	(void)state;
	assert_non_null(ops);
	assert_int_equal(ops->sample_period_lines, 19997);	/* loads */
	assert_int_equal(ops->sample_period_store_lines, 19997);	/* stores, own stream */
	assert_int_equal(ops->interval_us, 10000);
	assert_string_equal(ops->default_tracker, "samples");
	assert_null(ops->variant_of);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hot_at_four_reads),
		cmocka_unit_test(test_reads_and_writes_count_apart),
		cmocka_unit_test(test_cooling_halves_counts),
		cmocka_unit_test(test_cooling_cools_hot_regions),
		cmocka_unit_test(test_pass_is_bounded_and_fifo),
		cmocka_unit_test(test_no_demotion_of_hot_dram),
		cmocka_unit_test(test_upstream_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
