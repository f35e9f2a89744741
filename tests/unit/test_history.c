/* test_history.c - the daemon's history ring (src/tierd/history.c): one
 * sample a second at most, points cut from the samples with the bytes per
 * tier of each point's last sample and the moves within it (from zero for
 * the daemon's first sample, from the oldest kept once the ring went
 * round), and the request's arguments checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/tiercount.h"
#include "tierd/history.h"

#define S UINT64_C(1000000)
#define NR_PAGES 8

/* Two tiers of one node each: node 0 64 KiB, node 1 1 MiB. */
struct machine {
	struct tier_node nodes[2];
	int n0, n1;
	struct tier_tier tiers[2];
	struct tier_topology topo;
	uint8_t page_node[NR_PAGES];
	struct tier_env env;
	struct tier_tiercount tc;	/* the daemon's counts per tier */
};

static void machine_init(struct machine *m)
{
	memset(m, 0, sizeof(*m));
	m->nodes[0].id = 0;
	m->nodes[0].mem_total_bytes = 64 << 10;
	m->nodes[1].id = 1;
	m->nodes[1].mem_total_bytes = 1 << 20;
	m->n0 = 0;
	m->n1 = 1;
	m->tiers[0] = (struct tier_tier){ 0, &m->n0, 1 };
	m->tiers[1] = (struct tier_tier){ 1, &m->n1, 1 };
	m->topo.nodes = m->nodes;
	m->topo.nr_nodes = 2;
	m->topo.tiers = m->tiers;
	m->topo.nr_tiers = 2;
	memset(m->page_node, 1, sizeof(m->page_node));
	m->page_node[7] = TIER_NODE_NONE;	/* not present: in no tier */
	m->env.topo = &m->topo;
	m->env.nr_pages = NR_PAGES;
	m->env.page_node = m->page_node;
	m->env.page_shift = 12;
	tier_tiercount_init(&m->tc);
}

/* A step as the daemon takes one: the bytes per tier as its status counts
 * them (core/tiercount.h). */
static void step(struct tierd_history *h, struct machine *m, uint64_t promoted, uint64_t demoted,
		 uint64_t now)
{
	uint64_t per_tier[TIER_MAX_TIERS];
	size_t r;

	assert_int_equal(tier_tiercount_read(&m->tc, &m->env, &m->topo, per_tier, NULL), 0);
	for (r = 0; r < TIER_MAX_TIERS; r++)
		per_tier[r] <<= m->env.page_shift;
	tierd_history_step(h, &m->topo, per_tier, promoted, demoted, now);
}

static struct json_object *request(struct tierd_history *h, const struct machine *m,
				   const char *args, uint64_t now, int *ret, struct tier_err *err)
{
	struct json_object *a = json_tokener_parse(args), *res;

	assert_non_null(a);
	res = tierd_history_json(h, &m->topo, a, now, ret, err);
	json_object_put(a);
	return res;
}

static int64_t at(struct json_object *o, const char *path0, size_t i, const char *key)
{
	struct json_object *arr, *v;

	assert_true(json_object_object_get_ex(o, path0, &arr));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(arr, i), key, &v));
	return json_object_get_int64(v);
}

static int64_t tier_at(struct json_object *o, size_t i, size_t r)
{
	struct json_object *arr, *v;

	assert_true(json_object_object_get_ex(o, "points", &arr));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(arr, i), "tier_bytes", &v));
	return json_object_get_int64(json_object_array_get_idx(v, r));
}

static size_t nr_points(struct json_object *o)
{
	struct json_object *arr;

	assert_true(json_object_object_get_ex(o, "points", &arr));
	return json_object_array_length(arr);
}

/* Samples at 1..10 s, 100 bytes promoted and 50 demoted a second; from
 * 6 s on, two pages moved up. 10 s in 5 points: 2 s each. */
static void test_points(void **state)
{
	struct tierd_history h;
	struct machine m;
	struct tier_err err = { "" };
	struct json_object *res, *v;
	int ret, k;

	(void)state;
	machine_init(&m);
	tierd_history_init(&h);
	for (k = 1; k <= 10; k++) {
		if (k == 6)
			m.page_node[0] = m.page_node[1] = 0;
		step(&h, &m, 100 * (uint64_t)k, 50 * (uint64_t)k, (uint64_t)k * S);
		/* A step half a second later takes no sample. */
		step(&h, &m, 100 * (uint64_t)k + 7, 0, (uint64_t)k * S + S / 2);
	}
	res = request(&h, &m, "{\"seconds\":10,\"points\":5}", 10 * S, &ret, &err);
	assert_int_equal(ret, 0);
	assert_true(json_object_object_get_ex(res, "samples", &v));
	assert_int_equal(json_object_get_int64(v), 10);
	assert_true(json_object_object_get_ex(res, "step_s", &v));
	assert_int_equal(json_object_get_int64(v), 2);
	assert_int_equal(nr_points(res), 5);
	for (k = 0; k < 5; k++) {
		struct json_object *pts, *e;

		assert_true(json_object_object_get_ex(res, "points", &pts));
		assert_true(json_object_object_get_ex(json_object_array_get_idx(pts, (size_t)k), "end_s", &e));
		assert_true(json_object_get_double(e) == -8.0 + 2 * k);
		/* Each point holds two samples' moves; the first counts from
		 * the daemon's start. */
		assert_int_equal(at(res, "points", (size_t)k, "promoted_bytes"), 200);
		assert_int_equal(at(res, "points", (size_t)k, "demoted_bytes"), 100);
	}
	/* Bytes per tier of each point's last sample; page 7 in none. */
	assert_int_equal(tier_at(res, 0, 0), 0);
	assert_int_equal(tier_at(res, 0, 1), 7 * 4096);
	assert_int_equal(tier_at(res, 2, 0), 2 * 4096);	/* ends at 6 s */
	assert_int_equal(tier_at(res, 2, 1), 5 * 4096);
	assert_int_equal(at(res, "tiers", 0, "capacity_bytes"), 64 << 10);
	assert_int_equal(at(res, "tiers", 1, "capacity_bytes"), 1 << 20);
	json_object_put(res);

	/* A request as of 4 s (samples after it are not its): 3 s in 3
	 * points, the samples of 2, 3 and 4 s, moves from 1 s's. */
	res = request(&h, &m, "{\"seconds\":3,\"points\":3}", 4 * S, &ret, &err);
	assert_int_equal(ret, 0);
	assert_int_equal(nr_points(res), 3);
	assert_int_equal(at(res, "points", 0, "promoted_bytes"), 100);
	json_object_put(res);
	/* 30 s in 30 points at 10 s: the first 20 are before the first
	 * sample and left out. */
	res = request(&h, &m, "{\"seconds\":30,\"points\":30}", 10 * S, &ret, &err);
	assert_int_equal(ret, 0);
	assert_int_equal(nr_points(res), 10);
	json_object_put(res);
	tierd_history_release(&h);
	tier_tiercount_release(&m.tc);
}

/* Past an hour the ring keeps the last 3600 samples; the oldest kept is
 * the base of the moves, not zero. */
static void test_wrap(void **state)
{
	struct tierd_history h;
	struct machine m;
	struct tier_err err = { "" };
	struct json_object *res, *v, *pts;
	uint64_t sum = 0;
	size_t i;
	int ret, k;

	(void)state;
	machine_init(&m);
	tierd_history_init(&h);
	for (k = 1; k <= 4000; k++)
		step(&h, &m, 10 * (uint64_t)k, 0, (uint64_t)k * S);
	res = request(&h, &m, "{}", 4000 * S, &ret, &err);
	assert_int_equal(ret, 0);
	assert_true(json_object_object_get_ex(res, "samples", &v));
	assert_int_equal(json_object_get_int64(v), 3600);
	assert_true(json_object_object_get_ex(res, "seconds", &v));
	assert_int_equal(json_object_get_int64(v), 3600);
	assert_int_equal(nr_points(res), 360);
	assert_true(json_object_object_get_ex(res, "points", &pts));
	for (i = 0; i < 360; i++)
		sum += (uint64_t)at(res, "points", i, "promoted_bytes");
	/* Samples 401..4000 kept: 3599 seconds of moves after the first. */
	assert_int_equal(sum, 10 * 3599);
	json_object_put(res);
	tierd_history_release(&h);
	tier_tiercount_release(&m.tc);
}

static void test_bad_args(void **state)
{
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "{\"seconds\":0}", "history: 'seconds' must be an integer in 1..3600" },
		{ "{\"seconds\":3601}", "history: 'seconds' must be an integer in 1..3600" },
		{ "{\"seconds\":\"60\"}", "history: 'seconds' must be an integer in 1..3600" },
		{ "{\"points\":721}", "history: 'points' must be an integer in 1..720" },
		{ "{\"points\":-1}", "history: 'points' must be an integer in 1..720" },
		{ "{\"hours\":1}", "history: unknown argument 'hours'" },
	};
	struct tierd_history h;
	struct machine m;
	size_t i;

	(void)state;
	machine_init(&m);
	tierd_history_init(&h);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tier_err err = { "" };
		int ret = 0;

		assert_null(request(&h, &m, bad[i].args, 10 * S, &ret, &err));
		assert_int_equal(ret, -EINVAL);
		assert_string_equal(err.msg, bad[i].msg);
	}
	tierd_history_release(&h);
	tier_tiercount_release(&m.tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_points),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
