/* test_peer_memtis.c - the memtis peer shows the behaviour MEMTIS's source
 * (cosmoss-jigu/memtis linux/mm/htmm_core.c, htmm_migrater.c) describes:
 * the hot threshold is the highest log2 bin whose pages fit the fast tier,
 * so it moves with the fast tier's size; cooling halves every count; the
 * warm band one bin below the threshold keeps pages from demotion until
 * the fast tier cannot make room otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../lib/policy_env.h"
#include "core/policies/peers.h"

#define NR_PAGES 4096
/* htmm_adaptation_period and htmm_cooling_period, in samples. */
#define ADAPT 100000
#define COOL 2000000

struct fx {
	struct test_env te;
	const struct tier_policy_ops *ops;
	void *priv;
	uint64_t nr_samples;
};

/* dram-cxl at 1:4: node 0 holds unit_pages pages, node 1 four times that.
 * Pages [0, nr_fast) start on node 0, the rest on node 1. */
static void fx_init(struct fx *f, uint64_t unit_pages, uint64_t nr_fast)
{
	struct tier_err err = { "" };
	uint64_t p;

	memset(f, 0, sizeof(*f));
	assert_int_equal(test_env_init(&f->te, "dram-cxl", "1:4", unit_pages, NR_PAGES), 0);
	f->ops = tier_policy_find("memtis");
	assert_non_null(f->ops);
	assert_string_equal(f->ops->default_tracker, "samples");
	f->te.env.interval_us = f->ops->interval_us;
	f->te.env.max_batch = 1024;
	f->te.now_us = 1000000;
	for (p = 0; p < NR_PAGES; p++)
		test_env_place(&f->te, p, p < nr_fast ? 0 : 1);
	if (f->ops->create(&f->te.env, &f->priv, &err))
		fail_msg("create: %s", err.msg);
}

static void fx_release(struct fx *f)
{
	f->ops->destroy(f->priv);
	test_env_release(&f->te);
}

static void sample(struct fx *f, uint64_t page)
{
	struct tier_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = TIER_OBS_SAMPLE;
	o.page = page;
	o.nr_pages = 1;
	o.count = 2500;
	f->ops->observe(f->priv, &o, 1);
	f->nr_samples++;
}

/* Samples `page` until the total is a multiple of `period`. */
static void pad_to(struct fx *f, uint64_t page, uint64_t period)
{
	while (f->nr_samples % period)
		sample(f, page);
}

static void tick(struct fx *f)
{
	f->te.now_us += f->te.env.interval_us;
	assert_int_equal(f->ops->tick(f->priv, f->te.now_us), 0);
}

/* 600 pages sampled once (bin 9: 512 accesses) and 600 sampled 8 times
 * (bin 12), pages [hot, hot + 600) and [warm, warm + 600). */
static void two_groups(struct fx *f, uint64_t hot, uint64_t warm)
{
	uint64_t p;
	int round;

	for (p = 0; p < 600; p++)
		sample(f, warm + p);
	for (round = 0; round < 8; round++)
		for (p = 0; p < 600; p++)
			sample(f, hot + p);
	pad_to(f, hot, ADAPT);
}

/* Fast tier of 1024 pages (max 1024 - 3% = 994): bin 12 (600 pages) fits,
 * bins 12 + 9 (1200) do not, so the hot threshold is bin 10; the hot pages
 * fill less than 75%, so the warm threshold is one lower. With a fast tier
 * of 2048 pages everything fits and the threshold stays at its minimum. */
static void test_threshold_follows_fast_capacity(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, 1024, 1024);
	assert_int_equal(tier__memtis_hot_threshold(f.priv), 1);
	two_groups(&f, 2000, 3000);
	assert_int_equal(tier__memtis_histogram(f.priv, 9), 600);
	assert_int_equal(tier__memtis_hot_threshold(f.priv), 10);
	assert_int_equal(tier__memtis_warm_threshold(f.priv), 9);
	fx_release(&f);

	fx_init(&f, 2048, 2048);
	two_groups(&f, 2000, 3000);
	assert_int_equal(tier__memtis_hot_threshold(f.priv), 1);
	fx_release(&f);
}

/* htmm_cooling_period: the cooling clock advances and kmigraterd
 * halves every page's count; a page sampled after the cooling but before
 * kmigraterd reached it is halved lazily first (check_base_cooling()). */
static void test_cooling_halves_counts(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, 1024, 1024);
	/* New pages start at 2^(threshold + 1) = 4 and skip one cooling. */
	assert_int_equal(tier__memtis_accesses(f.priv, 10), 4);
	sample(&f, 10);
	sample(&f, 11);
	assert_int_equal(tier__memtis_accesses(f.priv, 10), 4 + 512);
	pad_to(&f, 20, COOL);
	assert_int_equal(tier__memtis_cooling_clock(f.priv), 1);
	/* Lazy: page 11 is halved when sampled again. */
	sample(&f, 11);
	assert_int_equal(tier__memtis_accesses(f.priv, 11), (4 + 512) / 2 + 512);
	/* kmigraterd's cooling walk halves page 10 and leaves an unsampled
	 * page alone (it skips this cooling). */
	tick(&f);
	assert_int_equal(tier__memtis_accesses(f.priv, 10), (4 + 512) / 2);
	assert_int_equal(tier__memtis_accesses(f.priv, 30), 4);
	assert_int_equal(tier__memtis_accesses(f.priv, 20), (4 + (COOL - 2) * 512) / 2);
	/* The next cooling halves the unsampled page too. */
	pad_to(&f, 20, COOL);
	tick(&f);
	assert_int_equal(tier__memtis_cooling_clock(f.priv), 2);
	assert_int_equal(tier__memtis_accesses(f.priv, 30), 2);
	assert_int_equal(tier__memtis_accesses(f.priv, 10), (4 + 512) / 4);
	fx_release(&f);
}

/* The warm band: with the hot threshold at bin 10 and the warm one at 9,
 * fast-tier pages in bin 9 are not demoted while colder ones are; when
 * that does not make room for the slow tier's hot pages, the band closes
 * (warm = hot) and the next pass demotes them. */
static void test_warm_band(void **state)
{
	struct fx f;
	uint64_t p, fast_hot = 0, warm_kept = 0;

	(void)state;
	fx_init(&f, 1024, 1024);
	/* Warm: fast pages 0..599. Hot: slow pages 2000..2599. */
	two_groups(&f, 2000, 0);
	assert_int_equal(tier__memtis_hot_threshold(f.priv), 10);
	assert_int_equal(tier__memtis_warm_threshold(f.priv), 9);

	tick(&f);
	/* Needed: 1024 + 600 active + 30 - 1024 = 630; only the 424 unsampled
	 * fast pages are below the warm threshold. */
	for (p = 0; p < 600; p++)
		warm_kept += f.te.page_node[p] == 0;
	assert_int_equal(warm_kept, 600);
	for (p = 600; p < 1024; p++)
		assert_int_equal(f.te.page_node[p], 1);
	/* Promotion fills up to the 3% watermark: 1024 - 30 - 600 = 394. */
	for (p = 2000; p < 2600; p++)
		fast_hot += f.te.page_node[p] == 0;
	assert_int_equal(fast_hot, 394);
	assert_int_equal(tier__memtis_warm_threshold(f.priv), 10);

	/* The band is closed: warm pages make room for the remaining 206. */
	tick(&f);
	fast_hot = 0;
	for (p = 2000; p < 2600; p++)
		fast_hot += f.te.page_node[p] == 0;
	assert_int_equal(fast_hot, 600);
	assert_true(f.te.used[0] <= 1024 - 30);
	fx_release(&f);
}

/* A page in the slow tier below the hot threshold is not promoted even
 * with room in the fast tier. */
static void test_cold_page_not_promoted(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f, 1024, 512);
	two_groups(&f, 2000, 3000);	/* threshold 10: bin 9 is not hot */
	tick(&f);
	tick(&f);
	assert_int_equal(f.te.page_node[3000], 1);
	assert_int_equal(f.te.page_node[2000], 0);
	fx_release(&f);
}

/* The knobs as MEMTIS's kernel sets them (cosmoss-jigu/memtis
 * linux/mm/mempolicy.c: htmm_sample_period = 199,
 * htmm_{promotion,demotion}_period_in_ms = 500; adaptation and cooling
 * periods, 100000 and 2000000 samples, are pinned by the tests above
 * through ADAPT and COOL). A change to a default fails here. */
static void test_upstream_defaults(void **state)
{
	const struct tier_policy_ops *ops = tier_policy_find("memtis");

	(void)state;
	assert_non_null(ops);
	assert_int_equal(ops->sample_period_lines, 199);
	assert_int_equal(ops->interval_us, 500000);
	assert_string_equal(ops->default_tracker, "samples");
	assert_null(ops->variant_of);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_follows_fast_capacity),
		cmocka_unit_test(test_cooling_halves_counts),
		cmocka_unit_test(test_warm_band),
		cmocka_unit_test(test_cold_page_not_promoted),
		cmocka_unit_test(test_upstream_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
