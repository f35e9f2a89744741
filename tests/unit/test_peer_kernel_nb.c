/* test_peer_kernel_nb.c - the kernel-nb peer shows the behaviour the kernel
 * source and the TPP paper describe: TPP's active-LRU filter, the hot
 * threshold on hint-fault latency, no promotion at the fast node's
 * watermark (kswapd woken instead), demotion only under memory pressure
 * with second chances for recently used pages, and the kernel's
 * watermark formula. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../lib/policy_env.h"
#include "core/policies/kernel_nb_impl.h"
#include "core/policies/linux_mm.h"

/* dram-cxl at 1:4 with 1024 pages per unit: node 0 has 1024 pages,
 * node 1 4096. Watermarks (5120 pages, 20 MiB: min_free_kbytes 572):
 * node 0 min 28, low 35, high 42, promo 49. */
#define NR_PAGES 4096
#define UNIT_PAGES 1024

struct fx {
	struct test_env te;
	const struct tier_policy_ops *ops;
	void *priv;
};

static void fx_init_policy(struct fx *f, const char *policy, uint64_t nr_fast)
{
	struct tier_err err = { "" };
	uint64_t p;

	assert_int_equal(test_env_init(&f->te, "dram-cxl", "1:4", UNIT_PAGES, NR_PAGES), 0);
	f->ops = tier_policy_find(policy);
	assert_non_null(f->ops);
	f->te.env.interval_us = f->ops->interval_us;
	f->te.now_us = 1000000;
	for (p = 0; p < nr_fast; p++)
		test_env_place(&f->te, p, 0);
	for (p = nr_fast; p < NR_PAGES; p++)
		test_env_place(&f->te, p, 1);
	if (f->ops->create(&f->te.env, &f->priv, &err))
		fail_msg("create: %s", err.msg);
}

/* kernel-nb, as upstream runs it. */
static void fx_init(struct fx *f, uint64_t nr_fast)
{
	fx_init_policy(f, "kernel-nb", nr_fast);
}

static void fx_release(struct fx *f)
{
	f->ops->destroy(f->priv);
	test_env_release(&f->te);
}

static void fault(struct fx *f, uint64_t page, uint32_t latency_ms)
{
	struct tier_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = TIER_OBS_HINT_FAULT;
	o.page = page;
	o.nr_pages = 1;
	o.count = 1;
	o.latency_us = latency_ms * 1000;
	f->ops->observe(f->priv, &o, 1);
}

static void tick(struct fx *f)
{
	f->te.now_us += f->te.env.interval_us;
	assert_int_equal(f->ops->tick(f->priv, f->te.now_us), 0);
}

static uint64_t free_pages(const struct fx *f, int node)
{
	return f->te.cap[node] - f->te.used[node];
}

/* TPP (ASPLOS'23 sec. 5; patch "active LRU-based promotion"): a fault on a
 * page that is not on the active LRU only marks it accessed. A fresh
 * inactive page: first fault sets PG_referenced, second activates, third
 * promotes. */
static void test_tpp_promotes_only_active_pages(void **state)
{
	struct fx f;
	const uint64_t page = 3000;

	(void)state;
	fx_init_policy(&f, "tpp", 512);
	fault(&f, page, 10);
	assert_int_equal(f.te.page_node[page], 1);
	fault(&f, page, 10);
	assert_int_equal(f.te.page_node[page], 1);	/* now active, still there */
	assert_int_equal(f.te.moves, 0);
	fault(&f, page, 10);
	assert_int_equal(f.te.page_node[page], 0);
	assert_int_equal(f.te.moves, 1);
	fx_release(&f);
}

/* The knobs as upstream Linux sets them (kernel_nb.c cites each), and TPP's
 * two patches only in the tpp policy. */
static void test_upstream_defaults(void **state)
{
	struct fx f;
	const struct knb_config *c;

	(void)state;
	fx_init(&f, 512);
	c = &((const struct knb *)f.priv)->cfg;
	/* kernel/sched/fair.c (torvalds/linux 04026c23c8d8, as 6.12):
	 * sysctl_numa_balancing_hot_threshold = MSEC_PER_SEC */
	assert_int_equal(c->hot_threshold_ms, 1000);
	/* sysctl_numa_balancing_promote_rate_limit = 65536 */
	assert_int_equal(c->promote_rate_limit_mbps, 65536);
	/* sysctl_numa_balancing_scan_period_max = 60000 */
	assert_int_equal(c->scan_period_max_ms, 60000);
	/* mm/page_alloc.c: watermark_scale_factor = 10 */
	assert_int_equal(c->watermark_scale_factor, 10);
	/* should_numa_migrate_memory() never tests folio_test_active() */
	assert_false(c->tpp_active_filter);
	/* mm/vmscan.c pgdat_balanced(): WMARK_PROMO, no demote_scale_factor */
	assert_int_equal(c->tpp_demote_scale_factor, 0);
	/* Hint faults; reclaim reads young bits itself (no scan's cost). */
	assert_string_equal(f.ops->default_tracker, "hintfault,young");
	assert_null(f.ops->variant_of);
	fx_release(&f);
	fx_init_policy(&f, "tpp", 512);
	c = &((const struct knb *)f.priv)->cfg;
	assert_true(c->tpp_active_filter);
	assert_int_equal(c->tpp_demote_scale_factor, 200);
	assert_int_equal(c->hot_threshold_ms, 1000);
	assert_string_equal(f.ops->variant_of, "kernel-nb");
	fx_release(&f);
}

/* Upstream promotes at the first hint fault under the threshold: no LRU
 * filter in do_numa_page() or should_numa_migrate_memory(). */
static void test_upstream_promotes_at_first_fault(void **state)
{
	struct fx f;
	const uint64_t page = 3004;

	(void)state;
	fx_init(&f, 512);
	fault(&f, page, 10);
	assert_int_equal(f.te.page_node[page], 0);
	assert_int_equal(f.te.moves, 1);
	fx_release(&f);
}

/* should_numa_migrate_memory(): a hint-fault latency at or above the hot
 * threshold (1000 ms) is no candidate, below it is. */
static void test_latency_threshold(void **state)
{
	struct fx f;
	const uint64_t page = 3001;

	(void)state;
	fx_init(&f, 512);
	fault(&f, page, 5000);
	fault(&f, page, 1500);
	assert_int_equal(f.te.page_node[page], 1);
	fault(&f, page, 1000);
	assert_int_equal(f.te.page_node[page], 1);
	fault(&f, page, 999);
	assert_int_equal(f.te.page_node[page], 0);
	fx_release(&f);
}

/* migrate_balanced_pgdat(): with the fast node at WMARK_HIGH + 1 free the
 * page stays and kswapd is woken; kswapd demotes cold pages past
 * WMARK_PROMO, and the next fault promotes. */
static void test_no_promotion_at_watermark(void **state)
{
	struct fx f;
	const uint64_t page = 3002;

	(void)state;
	fx_init(&f, UNIT_PAGES - 43);		/* 43 free = high + 1 */
	assert_int_equal(free_pages(&f, 0), 43);
	fault(&f, page, 10);
	fault(&f, page, 10);
	fault(&f, page, 10);
	assert_int_equal(f.te.page_node[page], 1);
	assert_int_equal(f.te.moves, 0);
	/* 43 free is above the low watermark (35): only the failed
	 * promotion woke kswapd. Its first look finds every page young from
	 * its first touch and gives it a second chance; the next one, in the
	 * following tick, demotes. */
	tick(&f);
	assert_true(f.te.moves > 0);
	assert_true(free_pages(&f, 0) > 49);
	fault(&f, page, 10);
	assert_int_equal(f.te.page_node[page], 0);
	fx_release(&f);
}

static void accessed(struct fx *f, uint64_t first, uint32_t nr)
{
	struct tier_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = TIER_OBS_ACCESSED;
	o.page = first;
	o.nr_pages = nr;
	o.count = 1;
	o.max = 1;
	f->ops->observe(f->priv, &o, 1);
}

/* Demotion happens in reclaim only: above the low watermark kswapd sleeps
 * and cold pages stay; below it kswapd demotes unreferenced inactive pages
 * until free > WMARK_PROMO, and pages used meanwhile get a second chance
 * (folio_check_references()). */
static void test_demotion_only_under_pressure(void **state)
{
	struct fx f;
	uint64_t p;
	int i;

	(void)state;
	fx_init(&f, 900);			/* 124 free > low 35 */
	for (i = 0; i < 50; i++)
		tick(&f);
	assert_int_equal(f.te.moves, 0);
	fx_release(&f);

	fx_init(&f, 1000);			/* 24 free < low 35 */
	for (i = 0; i < 5; i++) {
		accessed(&f, 0, 100);		/* pages 0..99 in use */
		tick(&f);
	}
	assert_true(f.te.moves > 0);
	assert_true(free_pages(&f, 0) > 49);
	for (p = 0; p < 100; p++)
		assert_int_equal(f.te.page_node[p], 0);
	/* Demotion stops once balanced: not every cold page went. */
	assert_true(f.te.moves < 100);
	fx_release(&f);
}

/* Page-table young bits behind test_and_clear_young, and the pages it was
 * asked about. */
static uint8_t pte_young[NR_PAGES];
static uint64_t young_calls;

static int young_node_pages(void *priv, int node, uint64_t *total, uint64_t *free)
{
	struct test_env *te = priv;

	if (node < 0 || (size_t)node >= te->machine.nr_nodes)
		return -ENOENT;
	*total = te->cap[node];
	*free = te->cap[node] - te->used[node];
	return 0;
}

static int young_test_and_clear(void *priv, uint64_t page)
{
	int y = pte_young[page];

	(void)priv;
	pte_young[page] = 0;
	young_calls++;
	return y;
}

static const struct tier_mem_ops young_mem_ops = {
	.name = "young",
	.node_pages = young_node_pages,
	.test_and_clear_young = young_test_and_clear,
};

/* kswapd reads each page's young bit when it looks at the page
 * (folio_referenced() from shrink_active_list() and
 * folio_check_references()), and only then: no bit is read while the
 * node is balanced, however many ticks pass; under pressure a page whose
 * PTE is young gets its second chance, the others are demoted. */
static void test_young_read_by_reclaim_only(void **state)
{
	struct tier_err err = { "" };
	struct fx f;
	uint64_t p;
	int i;

	(void)state;
	assert_int_equal(test_env_init(&f.te, "dram-cxl", "1:4", UNIT_PAGES, NR_PAGES), 0);
	f.ops = tier_policy_find("kernel-nb");
	f.te.env.interval_us = f.ops->interval_us;
	f.te.env.mem = &young_mem_ops;
	f.te.now_us = 1000000;
	for (p = 0; p < NR_PAGES; p++)
		test_env_place(&f.te, p, p < 900 ? 0 : 1);	/* 124 free > low 35 */
	if (f.ops->create(&f.te.env, &f.priv, &err))
		fail_msg("create: %s", err.msg);
	memset(pte_young, 1, sizeof(pte_young));
	young_calls = 0;
	for (i = 0; i < 1000; i++)
		tick(&f);
	assert_int_equal(young_calls, 0);	/* one second, no reclaim */
	assert_int_equal(f.te.moves, 0);
	for (p = 900; p < 1000; p++)		/* node 0 under its low mark */
		test_env_place(&f.te, p, 0);
	for (i = 0; i < 5; i++) {
		memset(pte_young, 0, sizeof(pte_young));
		memset(pte_young, 1, 100);	/* pages 0..99 in use */
		tick(&f);
	}
	assert_true(f.te.moves > 0);
	assert_true(free_pages(&f, 0) > 49);
	for (p = 0; p < 100; p++)
		assert_int_equal(f.te.page_node[p], 0);
	/* kswapd looked at some pages, not at every page every tick. */
	assert_true(young_calls > 0);
	assert_true(young_calls < 5 * 1000);
	fx_release(&f);
}

/* resize/forget: pages that appear later join the LRU like fresh ones;
 * a forgotten page starts over. */
static void test_resize_and_forget(void **state)
{
	struct fx f;
	const uint64_t page = 3003;

	(void)state;
	fx_init_policy(&f, "tpp", 512);
	f.ops->destroy(f.priv);
	f.te.env.nr_pages = 2048;		/* the policy sees half at first */
	{
		struct tier_err err = { "" };

		if (f.ops->create(&f.te.env, &f.priv, &err))
			fail_msg("create: %s", err.msg);
	}
	f.te.env.nr_pages = NR_PAGES;
	assert_int_equal(f.ops->resize(f.priv), 0);
	fault(&f, page, 10);
	fault(&f, page, 10);
	f.ops->forget(f.priv, page, 1);
	fault(&f, page, 10);			/* inactive again */
	assert_int_equal(f.te.page_node[page], 1);
	fault(&f, page, 10);
	fault(&f, page, 10);
	assert_int_equal(f.te.page_node[page], 0);
	fx_release(&f);
}

/* mm/page_alloc.c on the test guest (3 x 768 MiB): min_free_kbytes =
 * int_sqrt(2359296 * 16) = 6144 KiB, 512 pages per node; tmp = max(128,
 * 196608 * 10 / 10000) = 196. */
static void test_watermarks_follow_kernel_formula(void **state)
{
	struct test_env te;
	struct tier__lmm_wmarks wm[256];
	int n;

	(void)state;
	assert_int_equal(test_env_init(&te, "dram-cxl-slow", "1:1:1", 196608, 16), 0);
	assert_int_equal(tier__lmm_wmarks_init(&te.env, TIER_LMM_WATERMARK_SCALE_FACTOR, wm), 0);
	for (n = 0; n < 3; n++) {
		assert_int_equal(wm[n].min, 512);
		assert_int_equal(wm[n].low, 708);
		assert_int_equal(wm[n].high, 904);
		assert_int_equal(wm[n].promo, 1100);
	}
	assert_int_equal(tier__lmm_demotion_target(&te.env, 0), 1);
	assert_int_equal(tier__lmm_demotion_target(&te.env, 1), 2);
	assert_int_equal(tier__lmm_demotion_target(&te.env, 2), -1);
	assert_int_equal(tier__lmm_cpu_node(&te.env), 0);
	test_env_release(&te);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_defaults),
		cmocka_unit_test(test_upstream_promotes_at_first_fault),
		cmocka_unit_test(test_tpp_promotes_only_active_pages),
		cmocka_unit_test(test_latency_threshold),
		cmocka_unit_test(test_no_promotion_at_watermark),
		cmocka_unit_test(test_demotion_only_under_pressure),
		cmocka_unit_test(test_young_read_by_reclaim_only),
		cmocka_unit_test(test_resize_and_forget),
		cmocka_unit_test(test_watermarks_follow_kernel_formula),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
