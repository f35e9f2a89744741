/* test_groups.c - tier amounts ("0=128M", "1=25%"), rules, and the
 * weighted max-min fair split of a tier. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "core/groups.h"

static void test_amount_parse(void **state)
{
	struct tier_err err = { "" };
	struct tier_amount a;
	char buf[32];
	int rank;

	(void)state;
	assert_int_equal(tier_amount_parse("0=128M", &rank, &a, &err), 0);
	assert_int_equal(rank, 0);
	assert_int_equal(a.kind, TIER_AMOUNT_BYTES);
	assert_int_equal(a.value, UINT64_C(128) << 20);
	tier_amount_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "128M");
	assert_int_equal(tier_amount_parse("2=12.5%", &rank, &a, &err), 0);
	assert_int_equal(rank, 2);
	assert_int_equal(a.kind, TIER_AMOUNT_PERMYRIAD);
	assert_int_equal(a.value, 1250);
	tier_amount_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "12.50%");
	assert_int_equal(tier_amount_parse("1=1GiB", &rank, &a, &err), 0);
	assert_int_equal(a.value, UINT64_C(1) << 30);
	assert_int_equal(tier_amount_parse("1=4096", &rank, &a, &err), 0);
	assert_int_equal(a.value, 4096);
	tier_amount_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "4K");
	/* Pages of an amount: bytes by the page size, a percentage of the tier. */
	assert_int_equal(tier_amount_pages(&a, 1000, 12), 1);
	assert_int_equal(tier_amount_parse("0=25%", &rank, &a, &err), 0);
	assert_int_equal(tier_amount_pages(&a, 1000, 12), 250);
	a.kind = TIER_AMOUNT_NONE;
	assert_true(tier_amount_pages(&a, 1000, 12) == UINT64_MAX);
}

static void test_amount_errors(void **state)
{
	static const struct {
		const char *in, *says;
	} bad[] = {
		{ "128M", "expected RANK=SIZE or RANK=PCT%" },
		{ "=128M", "expected RANK=SIZE" },
		{ "8=1M", "tier rank must be 0..7" },
		{ "-1=1M", "tier rank must be 0..7" },
		{ "x=1M", "tier rank must be 0..7" },
		{ "0=", "no amount after '='" },
		{ "0=101%", "a percentage must be 0..100%" },
		{ "0=-5%", "a percentage must be 0..100%" },
		{ "0=12Q", "unknown size suffix" },
		{ "0=lots", "must be a size" },
		{ "0=99999999999999999999", "size out of range" },
		{ "0=99999999999T", "size out of range" },
	};
	struct tier_err err;
	struct tier_amount a;
	int rank;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(tier_amount_parse(bad[i].in, &rank, &a, &err), -EINVAL);
		if (!strstr(err.msg, bad[i].says))
			fail_msg("'%s': '%s' lacks '%s'", bad[i].in, err.msg, bad[i].says);
	}
}

static void test_rule(void **state)
{
	struct tier_group_rule r;
	struct tier_err err = { "" };

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(tier_group_rule_set(&r, "max", "0=128M", &err), 0);
	assert_int_equal(tier_group_rule_set(&r, "min", "0=64M", &err), 0);
	assert_int_equal(tier_group_rule_check(&r, &err), 0);
	assert_int_equal(tier_group_rule_set(&r, "min", "0=256M", &err), 0);
	assert_int_equal(tier_group_rule_check(&r, &err), -EINVAL);
	assert_string_equal(err.msg, "tier 0: min 256M is above max 128M");
	assert_int_equal(tier_group_rule_set(&r, "mid", "0=1M", &err), -EINVAL);
	r.min[0].kind = TIER_AMOUNT_NONE;
	r.weight = TIER_GROUP_MAX_WEIGHT + 1;
	assert_int_equal(tier_group_rule_check(&r, &err), -EINVAL);
}

static void test_fair_share(void **state)
{
	uint64_t demand[3] = { 1000, 1000, 1000 }, floor[3] = { 0, 0, 0 };
	uint64_t ceil[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX }, share[3];
	uint32_t w[3] = { 100, 100, 200 };

	(void)state;
	/* Contended: split by weight. */
	tier_fair_share(3, demand, floor, ceil, w, 1000, share);
	assert_int_equal(share[0], 250);
	assert_int_equal(share[1], 250);
	assert_int_equal(share[2], 500);
	/* A group that wants less than its part gets what it wants; the rest
	 * goes to the others by weight. */
	demand[0] = 100;
	tier_fair_share(3, demand, floor, ceil, w, 1000, share);
	assert_int_equal(share[0], 100);
	assert_int_equal(share[1], 300);
	assert_int_equal(share[2], 600);
	/* A ceiling (max) caps a share; a floor (min) is served first. */
	ceil[2] = 400;
	floor[1] = 500;
	tier_fair_share(3, demand, floor, ceil, w, 1000, share);
	assert_int_equal(share[2], 400);
	assert_int_equal(share[1], 500);
	assert_int_equal(share[0] + share[1] + share[2], 1000);
	/* Uncontended: everyone gets its demand. */
	demand[0] = demand[1] = demand[2] = 10;
	floor[1] = 0;
	tier_fair_share(3, demand, floor, ceil, w, 1000, share);
	assert_int_equal(share[0], 10);
	assert_int_equal(share[1], 10);
	assert_int_equal(share[2], 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_amount_parse),
		cmocka_unit_test(test_amount_errors),
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_fair_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
