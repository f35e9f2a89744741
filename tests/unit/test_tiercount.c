/* test_tiercount.c - the pages of each tier kept for status
 * (core/tiercount): the counts against a count of every page after
 * changes, growth and shrinking, a change of ranks, and what a read costs:
 * the chunks whose node_gen moved, not every page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/tiercount.h"

#define CHUNK (1u << TIER_NODE_GEN_SHIFT)
#define MAXP (64u * CHUNK + 100u)

struct fixture {
	uint8_t node[MAXP];
	uint32_t gen[MAXP / CHUNK + 2];
	struct tier_env env;
	int t0[1], t1[2];
	struct tier_tier tiers[2];
	struct tier_topology topo;
	struct tier_tiercount tc;
};

/* Nodes 0 (tier 0), 1 and 2 (tier 1); node 3 in no tier. */
static struct fixture *fixture(uint64_t pages, bool gens)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->t0[0] = 0;
	f->t1[0] = 1;
	f->t1[1] = 2;
	f->tiers[0] = (struct tier_tier){ .rank = 0, .nodes = f->t0, .nr_nodes = 1 };
	f->tiers[1] = (struct tier_tier){ .rank = 1, .nodes = f->t1, .nr_nodes = 2 };
	f->topo.tiers = f->tiers;
	f->topo.nr_tiers = 2;
	f->env.topo = &f->topo;
	f->env.nr_pages = pages;
	f->env.page_node = f->node;
	f->env.node_gen = gens ? f->gen : NULL;
	memset(f->node, TIER_NODE_NONE, sizeof(f->node));
	tier_tiercount_init(&f->tc);
	return f;
}

static void release(struct fixture *f)
{
	tier_tiercount_release(&f->tc);
	free(f);
}

/* Page i to node nd, its chunk's counter bumped as a backend does. */
static void set(struct fixture *f, uint64_t i, uint8_t nd)
{
	f->node[i] = nd;
	f->gen[i / CHUNK]++;
}

/* The figures against a count of every page: per tier, and per node of
 * a tier (node 3, of none, reads 0). */
static void expect_every_page(struct fixture *f)
{
	uint64_t want[TIER_MAX_TIERS] = { 0 }, got[TIER_MAX_TIERS], i;
	uint64_t want_node[TIER_MAX_NODES] = { 0 }, *got_node = calloc(TIER_MAX_NODES, 8);
	size_t r, k;

	assert_non_null(got_node);
	for (i = 0; i < f->env.nr_pages; i++)
		want_node[f->node[i]]++;
	for (r = 0; r < f->topo.nr_tiers; r++)
		for (k = 0; k < f->tiers[r].nr_nodes; k++)
			want[r] += want_node[f->tiers[r].nodes[k]];
	assert_int_equal(tier_tiercount_read(&f->tc, &f->env, &f->topo, got, got_node), 0);
	assert_int_equal(got[0], want[0]);
	assert_int_equal(got[1], want[1]);
	assert_int_equal(got[2], 0);
	for (k = 0; k < 3; k++) {
		bool tiered = k == 0 || k == 1 || (k == 2 && f->tiers[1].nr_nodes == 2);

		assert_int_equal(got_node[k], tiered ? want_node[k] : 0);
	}
	assert_int_equal(got_node[3], 0);
	free(got_node);
}

static void test_counts_follow_changes(void **state)
{
	struct fixture *f = fixture(40 * CHUNK + 7, true);
	uint64_t i, round;

	(void)state;
	srand(7);
	for (i = 0; i < f->env.nr_pages; i++)
		set(f, i, (uint8_t)(rand() % 5 == 4 ? TIER_NODE_NONE : rand() % 4));
	expect_every_page(f);
	for (round = 0; round < 50; round++) {
		unsigned k, n = (unsigned)(rand() % 300);

		for (k = 0; k < n; k++)
			set(f, (uint64_t)rand() % f->env.nr_pages,
			    (uint8_t)(rand() % 5 == 4 ? TIER_NODE_NONE : rand() % 4));
		/* the managed pages grow or shrink, mid-chunk too */
		if (round % 7 == 3) {
			uint64_t to = (uint64_t)rand() % MAXP + 1, j;

			for (j = f->env.nr_pages; j < to; j++)
				set(f, j, (uint8_t)(rand() % 3));
			f->env.nr_pages = to;
		}
		expect_every_page(f);
	}
	release(f);
}

static void test_read_costs_what_changed(void **state)
{
	struct fixture *f = fixture(64 * CHUNK, true);
	uint64_t out[TIER_MAX_TIERS], i, before;

	(void)state;
	for (i = 0; i < f->env.nr_pages; i++)
		set(f, i, (uint8_t)(i % 3));
	assert_int_equal(tier_tiercount_read(&f->tc, &f->env, &f->topo, out, NULL), 0);
	assert_int_equal(f->tc.read_pages, 64 * CHUNK);
	/* nothing changed: no page read */
	before = f->tc.read_pages;
	assert_int_equal(tier_tiercount_read(&f->tc, &f->env, &f->topo, out, NULL), 0);
	assert_int_equal(f->tc.read_pages, before);
	/* three pages moved in two chunks: those chunks read, no other */
	set(f, 5, 0);
	set(f, 6, 0);
	set(f, 40 * CHUNK + 1, TIER_NODE_NONE);
	expect_every_page(f);
	assert_int_equal(f->tc.read_pages - before, 2 * CHUNK);
	release(f);
}

static void test_ranks_change(void **state)
{
	struct fixture *f = fixture(10 * CHUNK, true);
	uint64_t out[TIER_MAX_TIERS], i;

	(void)state;
	for (i = 0; i < f->env.nr_pages; i++)
		set(f, i, (uint8_t)(i % 4));
	expect_every_page(f);
	/* node 2 leaves tier 1 (a drain): its pages count in no tier, and no
	 * page_node byte or counter changed */
	f->tiers[1].nr_nodes = 1;
	assert_int_equal(tier_tiercount_read(&f->tc, &f->env, &f->topo, out, NULL), 0);
	assert_int_equal(out[0], 10 * CHUNK / 4);
	assert_int_equal(out[1], 10 * CHUNK / 4);
	expect_every_page(f);
	/* node 2 moves to tier 0 (an operator's override) */
	f->tiers[1].nr_nodes = 2;
	f->t1[1] = 0;
	f->t0[0] = 2;
	expect_every_page(f);
	f->t0[0] = 0;
	f->t1[1] = 2;
	expect_every_page(f);
	release(f);
}

static void test_without_node_gen(void **state)
{
	struct fixture *f = fixture(8 * CHUNK + 3, false);
	uint64_t i, before;

	(void)state;
	for (i = 0; i < f->env.nr_pages; i++)
		f->node[i] = (uint8_t)(i % 3);
	expect_every_page(f);
	before = f->tc.read_pages;
	f->node[3] = 1;		/* no counter to tell it */
	expect_every_page(f);
	assert_int_equal(f->tc.read_pages - before, 8 * CHUNK + 3);
	release(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_follow_changes),
		cmocka_unit_test(test_read_costs_what_changed),
		cmocka_unit_test(test_ranks_change),
		cmocka_unit_test(test_without_node_gen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
