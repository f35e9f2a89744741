/* test_nodelist.c - the kernel list format parser and formatter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/nodelist.h"

static void expect_list(const char *s, const int *want, size_t nr_want)
{
	struct tier_err err = { "" };
	int *ids;
	size_t nr, i;

	assert_int_equal(tier_nodelist_parse(s, &ids, &nr, &err), 0);
	assert_int_equal(nr, nr_want);
	for (i = 0; i < nr; i++)
		assert_int_equal(ids[i], want[i]);
	free(ids);
}

static void test_parse_valid(void **state)
{
	(void)state;
	expect_list("0\n", (int[]){ 0 }, 1);
	expect_list("0-3,8,10-11\n", (int[]){ 0, 1, 2, 3, 8, 10, 11 }, 7);
	expect_list("5,1-2", (int[]){ 1, 2, 5 }, 3);
	expect_list("1,1,0-1", (int[]){ 0, 1 }, 2);
	expect_list("\n", NULL, 0);
	expect_list("", NULL, 0);
}

static void expect_invalid(const char *s)
{
	struct tier_err err = { "" };
	int *ids = (int *)1;
	size_t nr = 99;

	assert_int_equal(tier_nodelist_parse(s, &ids, &nr, &err), -EINVAL);
	assert_null(ids);
	assert_int_equal(nr, 0);
	assert_non_null(strstr(err.msg, "invalid list"));
}

static void test_parse_invalid(void **state)
{
	(void)state;
	expect_invalid("0-x");
	expect_invalid("3-1");
	expect_invalid("1,");
	expect_invalid(",1");
	expect_invalid("a");
	expect_invalid("1 2");
	expect_invalid("-1");
	expect_invalid("99999999");
}

static void test_format(void **state)
{
	char buf[64];
	size_t n;

	(void)state;
	n = tier_nodelist_format((int[]){ 0, 1, 2, 3, 8, 10, 11 }, 7, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,8,10-11");
	assert_int_equal(n, strlen("0-3,8,10-11"));
	tier_nodelist_format(NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* Truncation keeps the buffer terminated and reports the full length. */
	n = tier_nodelist_format((int[]){ 100, 200, 300 }, 3, buf, 6);
	assert_int_equal(n, strlen("100,200,300"));
	assert_true(strlen(buf) < 6);
}

static void test_contains(void **state)
{
	int ids[] = { 1, 4, 7 };

	(void)state;
	assert_true(tier_nodelist_contains(ids, 3, 4));
	assert_false(tier_nodelist_contains(ids, 3, 5));
	assert_false(tier_nodelist_contains(NULL, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_invalid),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_contains),
	};

	return cmocka_run_group_tests_name("nodelist", tests, NULL, NULL);
}
