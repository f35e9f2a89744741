/* test_cli.c - the verb tables' --help list and bash completion script
 * (common/cli.h): the script is sourced into bash and asked as bash asks
 * it; a verb, sub-verb or option added to a table is completed with no
 * script edited. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"

static int run_verb(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static const struct option fetch_opts[] = {
	{ "depth", required_argument, NULL, 'd' },
	{ "mode", required_argument, NULL, 'm' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const struct option add_opts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

static const struct tier_cli_verb remote_verbs[] = {
	{ "add", NULL, NULL, "add a remote", add_opts, NULL },
	{ "remove", NULL, NULL, "remove one", NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

/* The same table twice, the second with one verb more. */
static const struct tier_cli_verb base_verbs[] = {
	{ "fetch", run_verb, "[--depth N] URL", "fetch a thing", fetch_opts, NULL },
	{ "remote", run_verb, NULL, "remotes: add, remove", NULL, remote_verbs },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static const struct tier_cli_verb more_verbs[] = {
	{ "fetch", run_verb, "[--depth N] URL", "fetch a thing", fetch_opts, NULL },
	{ "remote", run_verb, NULL, "remotes: add, remove", NULL, remote_verbs },
	{ "frobnicate", run_verb, NULL, "a verb added later", add_opts, NULL },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

static void words(FILE *out, const char *verb, const char *opt)
{
	if (opt && !strcmp(verb, "fetch") && !strcmp(opt, "--mode"))
		fputs("fast 'slow' safe", out);
	else if (!opt && !strcmp(verb, "remote add"))
		fputs("origin upstream", out);
}

static const struct tier_cli base = { "my-tool", base_verbs, words };
static const struct tier_cli more = { "my-tool", more_verbs, words };

/* What the script of cli offers for the last of words (space-separated,
 * "" for an empty last word), sorted and space-separated, in a static
 * buffer. */
static const char *complete(const struct tier_cli *cli, const char *words_line)
{
	static char out[1024];
	char script[] = "/tmp/tier-test-cli.XXXXXX", cmd[2048];
	FILE *f, *p;
	size_t n;
	int fd = mkstemp(script);

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	tier_cli_bash_completion(cli, f);
	assert_int_equal(fclose(f), 0);
	/* words_line is split by bash itself, as the command line would be. */
	snprintf(cmd, sizeof(cmd),
		 "bash -c '. %s && COMP_WORDS=(my-tool %s) && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) "
		 "&& _my_tool && printf \"%%s\\n\" \"${COMPREPLY[@]}\" | sort | tr \"\\n\" \" \"'",
		 script, words_line);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	unlink(script);
	while (n && out[n - 1] == ' ')
		out[--n] = '\0';
	return out;
}

static void test_verbs(void **state)
{
	(void)state;
	assert_string_equal(complete(&base, "\"\""), "fetch remote");
	assert_string_equal(complete(&base, "f"), "fetch");
	assert_string_equal(complete(&base, "--"), "--completion --help");
	assert_string_equal(complete(&base, "--completion \"\""), "bash");
}

static void test_added_verb(void **state)
{
	(void)state;
	/* The verb added to the table, its options too: no script edited. */
	assert_string_equal(complete(&more, "\"\""), "fetch frobnicate remote");
	assert_string_equal(complete(&more, "f"), "fetch frobnicate");
	assert_string_equal(complete(&more, "frobnicate --"), "--force");
	assert_string_equal(complete(&base, "frobnicate --"), "");
}

static void test_options(void **state)
{
	(void)state;
	assert_string_equal(complete(&base, "fetch --"), "--depth --help --mode --quiet");
	assert_string_equal(complete(&base, "fetch --q"), "--quiet");
	/* An option's words (a quote in them survives the script's own
	 * quoting, and bash's compgen removes it); after a value, options
	 * again. */
	assert_string_equal(complete(&base, "fetch --mode \"\""), "fast safe slow");
	assert_string_equal(complete(&base, "fetch --mode s"), "safe slow");
	assert_string_equal(complete(&base, "fetch --mode fast --d"), "--depth");
	/* A verb without a table takes --help. */
	assert_string_equal(complete(&base, "remote remove --"), "--help");
}

static void test_sub_verbs(void **state)
{
	(void)state;
	assert_string_equal(complete(&base, "remote \"\""), "add remove");
	assert_string_equal(complete(&base, "remote add --"), "--force");
	assert_string_equal(complete(&base, "remote add \"\""), "origin upstream");
	assert_string_equal(complete(&base, "remote add --force u"), "upstream");
}

static void test_files(void **state)
{
	char dir[] = "/tmp/tier-test-cli-dir.XXXXXX", words_line[256], want[256], path[300];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/depth-file", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	/* An option whose words are none completes file names. */
	snprintf(words_line, sizeof(words_line), "fetch --depth %s/dep", dir);
	snprintf(want, sizeof(want), "%s/depth-file", dir);
	assert_string_equal(complete(&base, words_line), want);
	unlink(path);
	rmdir(dir);
}

static void test_usage(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	tier_cli_usage(&more, f);
	fclose(f);
	assert_non_null(strstr(buf, "usage: my-tool VERB [OPTIONS]"));
	assert_non_null(strstr(buf, "  fetch [--depth N] URL fetch a thing\n"));
	assert_non_null(strstr(buf, "  frobnicate            a verb added later\n"));
	free(buf);
	assert_ptr_equal(tier_cli_find(&more, "frobnicate"), &more_verbs[2]);
	assert_null(tier_cli_find(&base, "frobnicate"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verbs),
		cmocka_unit_test(test_added_verb),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_sub_verbs),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_usage),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
