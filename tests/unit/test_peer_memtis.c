/* test_peer_memtis.c - the memtis peer shows the behaviour MEMTIS's source
 * (cosmoss-jigu/memtis linux/mm/htmm_core.c, htmm_migrater.c) describes:
 * the hot threshold is the highest log2 bin whose pages fit the fast tier,
 * so it moves with the fast tier's size; cooling halves every count; the
 * warm band one bin below the threshold keeps pages from demotion until
 * the fast tier cannot make room otherwise. With huge pages, the split
 * decision (htmm_core.c set_memcg_nr_split, set_memcg_split_thres,
 * check_split_huge_page) splits a huge page whose few subpages take its
 * accesses and leaves a uniformly hot one whole. */
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

/* --- huge pages ------------------------------------------------------------ */

/* Units of 512 pages: 0 and 1 fill the fast tier (1024 pages), 2..6 are on
 * the slow tier, unit 7 is base pages on the slow tier (the padding page
 * P = 3584 takes the samples that make up the periods). */
#define UNIT_A 2	/* skewed: 4 hot subpages */
#define UNIT_B 3	/* uniform: every subpage a little hot */
#define PAD 3584

static void fx_init_thp(struct fx *f)
{
	struct tier_err err = { "" };
	uint64_t p;

	memset(f, 0, sizeof(*f));
	assert_int_equal(test_env_init(&f->te, "dram-cxl", "1:4", 1024, NR_PAGES), 0);
	assert_int_equal(test_env_huge(&f->te, 9), 0);
	f->te.page_huge[7] = 0;
	f->ops = tier_policy_find("memtis");
	assert_non_null(f->ops);
	f->te.env.interval_us = f->ops->interval_us;
	f->te.env.max_batch = 1024;
	f->te.now_us = 1000000;
	for (p = 0; p < NR_PAGES; p++)
		test_env_place(&f->te, p, p < 1024 ? 0 : 1);
	if (f->ops->create(&f->te.env, &f->priv, &err))
		fail_msg("create: %s", err.msg);
}

static struct tier_memtis_huge huge_of(struct fx *f, uint64_t unit)
{
	struct tier_memtis_huge h;

	if (!tier__memtis_huge(f->priv, unit, &h))
		fail_msg("unit %lu is not tracked as a huge page", (unsigned long)unit);
	return h;
}

/* A huge page's count is its samples (+1 each), its subpages' +512 each:
 * one sample of a subpage raises the huge page by 1 and the subpage by
 * HPAGE_PMD_NR (update_huge_page, htmm_core.c:922-924). */
static void test_huge_counts(void **state)
{
	struct fx f;
	struct tier_memtis_huge h;
	uint64_t a = UNIT_A * 512;

	(void)state;
	fx_init_thp(&f);
	/* New huge pages start at 2^(threshold + 1) = 4, meta and subpages. */
	h = huge_of(&f, UNIT_A);
	assert_int_equal(h.accesses, 4);
	assert_int_equal(tier__memtis_accesses(f.priv, a + 7), 4);
	sample(&f, a + 7);
	sample(&f, a + 7);
	sample(&f, a + 8);
	h = huge_of(&f, UNIT_A);
	assert_int_equal(h.accesses, 4 + 3);
	assert_int_equal(tier__memtis_accesses(f.priv, a + 7), 4 + 2 * 512);
	assert_int_equal(tier__memtis_accesses(f.priv, a + 8), 4 + 512);
	assert_int_equal(tier__memtis_accesses(f.priv, a + 9), 4);
	/* In the histogram as 512 pages at get_idx(7) = 3. */
	assert_int_equal(h.idx, 3);
	assert_int_equal(tier__memtis_histogram(f.priv, 3), 512);
	fx_release(&f);
}

/* A: 4 subpages sampled 100 times each; B: all 512 sampled 4 times each.
 * After the first cooling, A's skewness (sum of squares / 11 / hot_utils^2)
 * is bin 14 and B's bin 10; the split budget, (eHR - rHR) * sum_util /
 * nr_records / avg * (270 - 80) / 80 * 512 * 0.4 = 409 pages, covers part
 * of bin 14 only: A is queued by the adjusting walk after the next
 * adaptation and split at the next kmigraterd pass; B never is. */
static void test_skewed_huge_page_split(void **state)
{
	struct fx f;
	struct tier_memtis_huge ha, hb;
	uint64_t a = UNIT_A * 512, b = UNIT_B * 512, p;
	unsigned split_thr, thres_split;
	int64_t nr_split, nr_tail;
	int round;

	(void)state;
	fx_init_thp(&f);
	for (round = 0; round < 100; round++)
		for (p = 0; p < 4; p++)
			sample(&f, a + p);
	for (round = 0; round < 4; round++)
		for (p = 0; p < 512; p++)
			sample(&f, b + p);
	/* Before any cooling nothing may be split (split_threshold 21). */
	tier__memtis_split_state(f.priv, &split_thr, &nr_split, &nr_tail, &thres_split);
	assert_int_equal(split_thr, 21);
	assert_int_equal(thres_split, 2);
	pad_to(&f, PAD, COOL);
	assert_int_equal(tier__memtis_cooling_clock(f.priv), 1);
	tick(&f);	/* the cooling walk computes the skewness */
	ha = huge_of(&f, UNIT_A);
	hb = huge_of(&f, UNIT_B);
	assert_int_equal(ha.hot_utils, 512);
	assert_int_equal(hb.hot_utils, 512);
	assert_int_equal(ha.skewness_idx, 14);
	assert_int_equal(hb.skewness_idx, 10);
	assert_false(ha.queued);
	/* Cooling halved the counts: A's meta (4 + 400) / 2, a hot subpage
	 * (4 + 100 * 512) / 2. */
	assert_int_equal(ha.accesses, 202);
	assert_int_equal(tier__memtis_accesses(f.priv, a), (4 + 100 * 512) / 2);

	/* The adaptation after the cooling sets the split budget. */
	sample(&f, PAD);
	pad_to(&f, PAD, ADAPT);
	tier__memtis_split_state(f.priv, &split_thr, &nr_split, &nr_tail, &thres_split);
	assert_int_equal(split_thr, 15);
	assert_int_equal(nr_split, 0);
	assert_int_equal(nr_tail, 409);

	tick(&f);	/* adjusting walk: A queued, off the LRU */
	assert_true(huge_of(&f, UNIT_A).queued);
	assert_false(huge_of(&f, UNIT_B).queued);
	assert_int_equal(f.te.splits, 0);
	tick(&f);	/* kmigraterd splits the queue first */
	assert_int_equal(f.te.splits, 1);
	assert_int_equal(f.te.page_huge[UNIT_A], 0);
	assert_int_equal(f.te.page_huge[UNIT_B], 1);
	assert_false(tier__memtis_huge(f.priv, UNIT_A, &ha));
	assert_true(tier__memtis_huge(f.priv, UNIT_B, &hb));

	/* The subpages keep their counts, with the tail's cooling_clock (0):
	 * the next sample halves once per cooling so far (1) first. */
	assert_int_equal(tier__memtis_accesses(f.priv, a), (4 + 100 * 512) / 2);
	sample(&f, a);
	assert_int_equal(tier__memtis_accesses(f.priv, a), (4 + 100 * 512) / 4 + 512);

	/* B stays whole however long it runs. */
	for (round = 0; round < 4; round++)
		tick(&f);
	assert_int_equal(f.te.page_huge[UNIT_B], 1);
	assert_int_equal(f.te.splits, 1);
	fx_release(&f);
}

/* Without huge pages nothing is split, whatever the skew. */
static void test_no_split_without_huge_pages(void **state)
{
	struct fx f;
	unsigned split_thr, thres_split;
	int64_t nr_split, nr_tail;

	(void)state;
	fx_init(&f, 1024, 1024);
	two_groups(&f, 2000, 3000);
	pad_to(&f, 20, COOL);
	tick(&f);
	sample(&f, 20);
	pad_to(&f, 20, ADAPT);
	tier__memtis_split_state(f.priv, &split_thr, &nr_split, &nr_tail, &thres_split);
	assert_int_equal(nr_split + nr_tail, 0);
	assert_int_equal(split_thr, 21);
	tick(&f);
	assert_int_equal(f.te.splits, 0);
	fx_release(&f);
}

/* The split parameters as MEMTIS's source sets them (cosmoss-jigu/memtis
 * 92487b9). A change to one fails here. */
static void test_split_upstream_defaults(void **state)
{
	struct tier_memtis_split_params sp;

	(void)state;
	tier__memtis_split_defaults(&sp);
	assert_int_equal(sp.thres_split, 2);		/* mempolicy.c:3041 htmm_thres_split */
	assert_int_equal(sp.split_period, 2);		/* mempolicy.c:3036 htmm_split_period */
	assert_int_equal(sp.gamma_tenths, 4);		/* mempolicy.c:3045 htmm_gamma */
	assert_int_equal(sp.dram_latency_ns, 80);	/* htmm.h:26 DRAM_ACCESS_LATENCY */
	assert_int_equal(sp.slow_latency_ns, 270);	/* htmm.h:27 NVM_ACCESS_LATENCY; cxl mode off, mempolicy.c:3046 */
	assert_int_equal(sp.max_splits_per_pass, 50);	/* htmm_core.c:394 nr_max */
	assert_int_equal(sp.nr_skew_bins, 21);		/* access_map[21], memcontrol.h:384 */
	assert_int_equal(sp.no_split_threshold, 21);	/* memcontrol.c:5252, htmm_core.c:1111 */
	assert_int_equal(sp.very_hot_idx, 13);		/* htmm_core.c:212 */
	assert_int_equal(sp.skew_scale, 11);		/* htmm_core.c:215 */
	assert_int_equal(sp.ehr_pct, 95);		/* htmm_core.c:1144 */
	assert_int_equal(sp.rhr_gain_pct, 103);		/* htmm_core.c:1411 */
	/* get_skew_idx() (htmm_core.c:560-582): bit length below 1024, then
	 * 11 plus one per started 1024 above it, at most 20. */
	assert_int_equal(tier__memtis_skew_idx(0), 0);
	assert_int_equal(tier__memtis_skew_idx(1), 1);
	assert_int_equal(tier__memtis_skew_idx(3), 2);
	assert_int_equal(tier__memtis_skew_idx(4), 3);
	assert_int_equal(tier__memtis_skew_idx(1023), 10);
	assert_int_equal(tier__memtis_skew_idx(1024), 11);
	assert_int_equal(tier__memtis_skew_idx(1025), 12);
	assert_int_equal(tier__memtis_skew_idx(2048), 12);
	assert_int_equal(tier__memtis_skew_idx(2049), 13);
	assert_int_equal(tier__memtis_skew_idx(UINT64_C(1) << 40), 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_follows_fast_capacity),
		cmocka_unit_test(test_cooling_halves_counts),
		cmocka_unit_test(test_warm_band),
		cmocka_unit_test(test_cold_page_not_promoted),
		cmocka_unit_test(test_upstream_defaults),
		cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_skewed_huge_page_split),
		cmocka_unit_test(test_no_split_without_huge_pages),
		cmocka_unit_test(test_split_upstream_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
