/* test_heatmap.c - the access heatmap of one address space (core/heatmap):
 * the axis with its gaps left out, rates from scans (dense, sparse and
 * uneven steps) and from samples, the ring of slices, views, and history
 * carried over a change of layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/heatmap.h"

#define BASE UINT64_C(0x10000000)
#define PAGE UINT64_C(4096)
#define MS UINT64_C(1000)
#define SEC UINT64_C(1000000)

/* k of m checks over 100 ms: -ln(1 - k/m) * m accesses per page. */
#define HALF_OF_20 (-log(0.5) * 20)

static struct tier_heatmap *new_map(uint64_t pages)
{
	struct tier_heatmap *hm = malloc(sizeof(*hm));
	struct tier_heatmap_range r = { BASE, BASE + pages * PAGE };

	assert_non_null(hm);
	tier_heatmap_init(hm, 12, 0);
	assert_int_equal(tier_heatmap_set_layout(hm, &r, 1), 1);
	return hm;
}

/* One scan of pages [first, first + nr): count of max checks over covered_us. */
static void scan(struct tier_heatmap *hm, uint64_t first, uint64_t nr, uint32_t count,
		 uint32_t max, uint32_t covered_us)
{
	struct tier_obs o = { .page = first, .nr_pages = (uint32_t)nr, .kind = TIER_OBS_ACCESSED,
			      .count = count, .max = max, .interval_us = covered_us };

	tier_heatmap_add(hm, BASE + first * PAGE, nr, tier_obs_accesses(&o), covered_us);
}

/* Scans every 100 ms from 0 to until_us: pages 0-63 seen in 10 of 20
 * checks, pages 64-255 in none. */
static void scan_hot_quarter(struct tier_heatmap *hm, uint64_t until_us)
{
	uint64_t t;

	for (t = 100 * MS; t <= until_us; t += 100 * MS) {
		scan(hm, 0, 64, 10, 20, 100 * MS);
		scan(hm, 64, 192, 0, 20, 100 * MS);
		tier_heatmap_commit(hm, t);
	}
}

/* The view over everything, one bin per `per` pages, slices ended by now. */
static void whole(const struct tier_heatmap *hm, size_t bins, size_t slices, uint64_t now,
		  struct tier_heatmap_view *v)
{
	assert_int_equal(tier_heatmap_view(hm, 0, UINT64_MAX, bins, slices, now, v), 0);
}

static void assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-3 * (fabs(want) + 1e-9)) {
		print_error("got %.6f, want %.6f\n", got, want);
		fail();
	}
}

/* Bin `bin` of v reads `want` in every slice of v (at least one). */
static void assert_bin_rate(const struct tier_heatmap *hm, const struct tier_heatmap_view *v,
			    size_t bin, double want)
{
	size_t k;

	assert_true(v->nr_slices > 0);
	for (k = 0; k < v->nr_slices; k++)
		assert_near(tier_heatmap_view_rate(hm, v, bin, k), want);
}

static void test_axis_leaves_gaps_out(void **state)
{
	struct tier_heatmap *hm = malloc(sizeof(*hm));
	struct tier_heatmap_range r[] = {
		{ BASE + 100 * PAGE, BASE + 104 * PAGE },	/* given out of order */
		{ BASE, BASE + 4 * PAGE },
		{ BASE + 2 * PAGE, BASE + 6 * PAGE },		/* overlaps the one above */
	};
	struct tier_heatmap_view v;
	uint64_t s, e, bytes;

	(void)state;
	tier_heatmap_init(hm, 12, 0);
	assert_int_equal(tier_heatmap_set_layout(hm, r, 3), 1);
	/* [BASE, +6 pages) and [+100, +104): 10 pages on the axis. */
	assert_int_equal(hm->lay.nr_ranges, 2);
	assert_int_equal(hm->lay.axis_bytes, 10 * PAGE);
	assert_int_equal(hm->lay.bin_bytes, PAGE);
	whole(hm, 3, 1, 0, &v);
	assert_int_equal(v.nr_bins, 3);
	assert_int_equal(v.bin_bytes, 4 * PAGE);
	/* Bin 1 holds the last two pages of the first range and the first
	 * two of the second: it spans the gap. */
	tier_heatmap_view_bin(hm, &v, 1, &s, &e, &bytes);
	assert_int_equal(s, BASE + 4 * PAGE);
	assert_int_equal(e, BASE + 102 * PAGE);
	assert_int_equal(bytes, 4 * PAGE);
	assert_int_equal(tier_heatmap_view_bin_of(hm, &v, BASE + 5 * PAGE + 7), 1);
	assert_int_equal(tier_heatmap_view_bin_of(hm, &v, BASE + 100 * PAGE), 1);
	assert_int_equal(tier_heatmap_view_bin_of(hm, &v, BASE + 103 * PAGE), 2);
	assert_int_equal(tier_heatmap_view_bin_of(hm, &v, BASE + 50 * PAGE), -1);	/* gap */
	assert_int_equal(tier_heatmap_view_bin_of(hm, &v, BASE + 104 * PAGE), -1);
	/* More bins than pages: one page each. */
	whole(hm, 256, 1, 0, &v);
	assert_int_equal(v.nr_bins, 10);
	/* A window from inside the gap to the end: the second range only. */
	assert_int_equal(tier_heatmap_view(hm, BASE + 50 * PAGE, UINT64_MAX, 4, 1, 0, &v), 0);
	tier_heatmap_view_bin(hm, &v, 0, &s, &e, &bytes);
	assert_int_equal(s, BASE + 100 * PAGE);
	assert_int_equal(v.nr_bins, 4);
	/* Windows with nothing managed, bad sizes. */
	assert_int_equal(tier_heatmap_view(hm, BASE + 50 * PAGE, BASE + 60 * PAGE, 4, 1, 0, &v), -ENOENT);
	assert_int_equal(tier_heatmap_view(hm, 0, UINT64_MAX, 0, 1, 0, &v), -EINVAL);
	assert_int_equal(tier_heatmap_view(hm, 0, UINT64_MAX, 257, 1, 0, &v), -EINVAL);
	assert_int_equal(tier_heatmap_view(hm, 0, UINT64_MAX, 4, 61, 0, &v), -EINVAL);
	assert_int_equal(tier_heatmap_view(hm, 9, 9, 4, 1, 0, &v), -EINVAL);
	/* The same ranges again: no change. Unaligned or empty: refused. */
	r[0] = (struct tier_heatmap_range){ BASE, BASE + 6 * PAGE };
	r[1] = (struct tier_heatmap_range){ BASE + 100 * PAGE, BASE + 104 * PAGE };
	assert_int_equal(tier_heatmap_set_layout(hm, r, 2), 0);
	r[0].end = BASE + 6 * PAGE + 1;
	assert_int_equal(tier_heatmap_set_layout(hm, r, 2), -EINVAL);
	r[0].end = r[0].start;
	assert_int_equal(tier_heatmap_set_layout(hm, r, 2), -EINVAL);
	free(hm);
}

static void test_many_ranges_join_smallest_gaps(void **state)
{
	struct tier_heatmap *hm = malloc(sizeof(*hm));
	struct tier_heatmap_range r[100];
	size_t i;

	(void)state;
	tier_heatmap_init(hm, 12, 0);
	/* 100 one-page ranges; gaps of 1 page, but every tenth of 1000. */
	for (i = 0; i < 100; i++) {
		uint64_t at = BASE + i * 2 * PAGE + (i / 10) * 1000 * PAGE;

		r[i] = (struct tier_heatmap_range){ at, at + PAGE };
	}
	assert_int_equal(tier_heatmap_set_layout(hm, r, 100), 1);
	/* The 90 small gaps are joined, the 9 wide ones kept: 10 ranges. */
	assert_int_equal(hm->lay.nr_ranges, 10);
	assert_true(hm->lay.nr_ranges <= TIER_HEATMAP_MAX_RANGES);
	assert_int_equal(hm->lay.range[0].start, BASE);
	assert_int_equal(hm->lay.range[0].end, BASE + 19 * PAGE);
	/* 200 ranges with gaps of growing width: at most the maximum. */
	tier_heatmap_init(hm, 12, 0);
	{
		struct tier_heatmap_range many[200];
		uint64_t at = BASE;

		for (i = 0; i < 200; i++) {
			many[i] = (struct tier_heatmap_range){ at, at + PAGE };
			at += PAGE * (2 + i);
		}
		assert_int_equal(tier_heatmap_set_layout(hm, many, 200), 1);
		assert_int_equal(hm->lay.nr_ranges, TIER_HEATMAP_MAX_RANGES);
		/* The widest gaps (the last ones) are the ones kept. */
		assert_int_equal(hm->lay.range[TIER_HEATMAP_MAX_RANGES - 1].start,
				 many[199].start);
	}
	free(hm);
}

/* A hot quarter scanned every 100 ms: 10 of 20 checks; the rest never. */
static void test_dense_scans(void **state)
{
	struct tier_heatmap *hm = new_map(256);
	struct tier_heatmap_view v;
	size_t b;

	(void)state;
	scan_hot_quarter(hm, 5 * SEC);
	whole(hm, 4, 60, 5 * SEC, &v);
	assert_int_equal(v.nr_bins, 4);
	assert_int_equal(v.nr_slices, 5);	/* five slices ended */
	assert_bin_rate(hm, &v, 0, HALF_OF_20 * 10);
	for (b = 1; b < 4; b++)
		assert_bin_rate(hm, &v, b, 0);
	/* Halves of a bin: a view bin finer than a layout bin reads its rate. */
	whole(hm, 256, 1, 5 * SEC, &v);
	assert_near(tier_heatmap_view_rate(hm, &v, 63, 0), HALF_OF_20 * 10);
	assert_near(tier_heatmap_view_rate(hm, &v, 64, 0), 0);
	{
		int64_t s, e;

		tier_heatmap_view_slice(hm, &v, 0, &s, &e);
		assert_int_equal(s, -(int64_t)SEC);
		assert_int_equal(e, 0);
	}
	free(hm);
}

/* The same rate seen three ways: a 100 ms snapshot every 2 s (a daemon
 * whose CPU share spaces its steps), five aggregations a step, and steps
 * that alternately bring none and two. */
static void test_sparse_and_uneven_scans(void **state)
{
	static const struct {
		uint64_t step_us;
		unsigned scans;		/* of 100 ms each, per step */
		bool every_other;	/* only on odd steps */
	} ways[] = {
		{ 2 * SEC, 1, false },
		{ 500 * MS, 5, false },
		{ 100 * MS, 2, true },
	};
	size_t w;

	(void)state;
	for (w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
		struct tier_heatmap *hm = new_map(256);
		struct tier_heatmap_view v;
		uint64_t t, i;
		unsigned n;

		for (t = ways[w].step_us, i = 0; t <= 10 * SEC; t += ways[w].step_us, i++) {
			for (n = 0; n < ways[w].scans && (!ways[w].every_other || i % 2); n++)
				scan(hm, 0, 256, 10, 20, 100 * MS);
			tier_heatmap_commit(hm, t);
		}
		whole(hm, 1, 60, 10 * SEC, &v);
		assert_int_equal(v.nr_slices, 10);
		assert_bin_rate(hm, &v, 0, HALF_OF_20 * 10);
		free(hm);
	}
}

/* Samples count where they fall; with scans too, the larger counts. */
static void test_samples(void **state)
{
	struct tier_heatmap *hm = new_map(256);
	struct tier_obs smp = { .kind = TIER_OBS_SAMPLE, .count = 1000, .nr_pages = 1 };
	struct tier_heatmap_view v;
	uint64_t t;

	(void)state;
	assert_near(tier_obs_accesses(&smp), 1000);
	for (t = 100 * MS; t <= 3 * SEC; t += 100 * MS) {
		/* page 5: a sample a step, 10000 accesses/s; a scan sees it
		 * in every check (saturated: far less). */
		tier_heatmap_add(hm, BASE + 5 * PAGE, 1, tier_obs_accesses(&smp), 0);
		scan(hm, 5, 1, 20, 20, 100 * MS);
		/* page 9: scanned warm, never sampled. */
		scan(hm, 9, 1, 10, 20, 100 * MS);
		tier_heatmap_commit(hm, t);
	}
	whole(hm, 256, 60, 3 * SEC, &v);
	assert_near(tier_heatmap_view_rate(hm, &v, 5, 2), 10000);
	assert_near(tier_heatmap_view_rate(hm, &v, 9, 2), HALF_OF_20 * 10);
	assert_near(tier_heatmap_view_rate(hm, &v, 6, 2), 0);
	/* A sample outside the layout is dropped. */
	tier_heatmap_add(hm, BASE + 999 * PAGE, 1, 1000, 0);
	tier_heatmap_commit(hm, 3 * SEC + 100 * MS);
	/* Events of a step 2.5 s long spread evenly over its slices. */
	tier_heatmap_add(hm, BASE + 7 * PAGE, 1, 2500, 0);
	tier_heatmap_commit(hm, 5 * SEC + 600 * MS);
	tier_heatmap_commit(hm, 6 * SEC);
	whole(hm, 256, 3, 6 * SEC, &v);
	assert_int_equal(v.first_slice, 3);
	assert_near(tier_heatmap_view_rate(hm, &v, 7, 1), 1000);	/* [4 s, 5 s) */
	free(hm);
}

/* The estimate the heatmap shares with the policies (tier_obs_accesses):
 * a hint fault counts its access and the rate its latency shows, as the
 * tierd policy reads it - touched 1 ms after the unmapping, about 100
 * accesses a step - and falls where it is taken. */
static void test_hint_faults(void **state)
{
	struct tier_heatmap *hm = new_map(256);
	struct tier_obs o = { .kind = TIER_OBS_HINT_FAULT, .nr_pages = 1, .latency_us = 999 };
	struct tier_obs none = { .kind = TIER_OBS_ACCESSED, .nr_pages = 1, .count = 0, .max = 20 };
	struct tier_obs all = { .kind = TIER_OBS_ACCESSED, .nr_pages = 1, .count = 20, .max = 20 };
	struct tier_heatmap_view v;
	uint64_t t;

	(void)state;
	assert_near(tier_obs_accesses(&o), 101);
	o.latency_us = 0;
	assert_near(tier_obs_accesses(&o), 100001);
	o.latency_us = 999;
	assert_near(tier_obs_accesses(&none), 0);
	/* Every check saw an access: as if half a check missed. */
	assert_near(tier_obs_accesses(&all), -log(0.5 / 20) * 20);
	for (t = 100 * MS; t <= 2 * SEC; t += 100 * MS) {
		tier_heatmap_add(hm, BASE + 3 * PAGE, 1, tier_obs_accesses(&o), 0);
		tier_heatmap_commit(hm, t);
	}
	whole(hm, 256, 60, 2 * SEC, &v);
	assert_near(tier_heatmap_view_rate(hm, &v, 3, 1), 1010);
	assert_near(tier_heatmap_view_rate(hm, &v, 4, 1), 0);
	free(hm);
}

/* The ring keeps the last 60 slices; a long pause leaves empty ones. */
static void test_ring(void **state)
{
	struct tier_heatmap *hm = new_map(4);
	struct tier_heatmap_view v;
	uint64_t t;
	size_t k;

	(void)state;
	/* One step a slice; slice k gets k accesses/s on page 0. */
	for (t = SEC; t <= 100 * SEC; t += SEC) {
		tier_heatmap_add(hm, BASE, 1, (double)(t / SEC - 1), 0);
		tier_heatmap_commit(hm, t);
	}
	whole(hm, 4, TIER_HEATMAP_SLICES, 100 * SEC, &v);
	assert_int_equal(v.nr_slices, TIER_HEATMAP_SLICES);
	assert_int_equal(v.first_slice, 40);
	for (k = 0; k < v.nr_slices; k++)
		assert_near(tier_heatmap_view_rate(hm, &v, 0, k), (double)(40 + k));
	/* Nothing committed for 30 s: those slices read 0, the older ones
	 * are still there. */
	whole(hm, 4, TIER_HEATMAP_SLICES, 130 * SEC, &v);
	assert_near(tier_heatmap_view_rate(hm, &v, 0, 0), 70);
	assert_near(tier_heatmap_view_rate(hm, &v, 0, 59), 0);
	/* Then a step 10 minutes later: only its own slices remain. */
	tier_heatmap_add(hm, BASE, 1, 600, 0);
	tier_heatmap_commit(hm, 700 * SEC);
	tier_heatmap_commit(hm, 701 * SEC);
	whole(hm, 4, TIER_HEATMAP_SLICES, 701 * SEC, &v);
	for (k = 0; k + 1 < v.nr_slices; k++)
		assert_near(tier_heatmap_view_rate(hm, &v, 0, k), 1);
	assert_near(tier_heatmap_view_rate(hm, &v, 0, 59), 0);	/* [700 s, 701 s) */
	free(hm);
}

/* A new mapping far away: the axis changes, the history of the old range
 * stays where its addresses are. */
static void test_relayout_keeps_history(void **state)
{
	struct tier_heatmap *hm = new_map(256);
	struct tier_heatmap_range r[2] = {
		{ BASE, BASE + 256 * PAGE },
		{ BASE + 4096 * PAGE, BASE + 4352 * PAGE },
	};
	struct tier_heatmap_view v;
	uint64_t t;

	(void)state;
	scan_hot_quarter(hm, 3 * SEC);
	assert_int_equal(tier_heatmap_set_layout(hm, r, 2), 1);
	assert_int_equal(hm->lay.bin_bytes, 2 * PAGE);
	/* The old range alone, in four bins: the hot quarter is still hot. */
	assert_int_equal(tier_heatmap_view(hm, BASE, BASE + 256 * PAGE, 4, 60, 3 * SEC, &v), 0);
	assert_bin_rate(hm, &v, 0, HALF_OF_20 * 10);
	assert_bin_rate(hm, &v, 1, 0);
	/* The new range has no history. */
	assert_int_equal(tier_heatmap_view(hm, BASE + 4096 * PAGE, UINT64_MAX, 1, 60, 3 * SEC, &v), 0);
	assert_near(tier_heatmap_view_rate(hm, &v, 0, 0), 0);
	/* Observations go on into the new layout. */
	for (t = 3 * SEC + 100 * MS; t <= 4 * SEC; t += 100 * MS) {
		tier_heatmap_add(hm, BASE + 4096 * PAGE, 256, 0.1, 0);
		tier_heatmap_commit(hm, t);
	}
	assert_int_equal(tier_heatmap_view(hm, BASE + 4096 * PAGE, UINT64_MAX, 1, 1, 4 * SEC, &v), 0);
	assert_near(tier_heatmap_view_rate(hm, &v, 0, 0), 1);
	/* A young heatmap has no ended slice to show. */
	tier_heatmap_init(hm, 12, 50 * SEC);
	assert_int_equal(tier_heatmap_set_layout(hm, r, 2), 1);
	whole(hm, 4, 60, 50 * SEC + 900 * MS, &v);
	assert_int_equal(v.nr_slices, 0);
	free(hm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_axis_leaves_gaps_out),
		cmocka_unit_test(test_many_ranges_join_smallest_gaps),
		cmocka_unit_test(test_dense_scans),
		cmocka_unit_test(test_sparse_and_uneven_scans),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_hint_faults),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_relayout_keeps_history),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
