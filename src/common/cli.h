/* cli.h - the verb tables of tierctl and tiersim: each verb's name, one-line
 * summary and getopt_long options. --help's verb list and the bash
 * completion script (PROG --completion bash) are both printed from them,
 * so a verb or an option added to a table is offered by both. */
#ifndef TIER_COMMON_CLI_H
#define TIER_COMMON_CLI_H

#include <getopt.h>
#include <stdio.h>

struct tier_cli_verb {
	const char *name;
	/* Runs the verb: argv[0] is the verb. Returns the exit status
	 * (0, 1 failure, 2 usage error). NULL in a table of sub-verbs that
	 * the parent verb dispatches itself. */
	int (*fn)(int argc, char **argv);
	/* Operands and options in brief, after the name in --help ("--machine
	 * M --workload W ..."), or NULL. */
	const char *synopsis;
	const char *summary;
	/* The verb's getopt_long table (ends with a NULL name), or NULL when
	 * it takes no option. */
	const struct option *opts;
	/* Sub-verbs (cgroup set, show), ending with a NULL name, or NULL. */
	const struct tier_cli_verb *sub;
};

struct tier_cli {
	const char *prog;
	const struct tier_cli_verb *verbs;	/* ends with a NULL name */
	/* Optional: prints, separated by spaces, the words that complete the
	 * argument of option opt ("--machine") of verb ("run", "cgroup set"),
	 * or when opt is NULL the verb's operands. Nothing printed: file
	 * names complete. */
	void (*words)(FILE *out, const char *verb, const char *opt);
};

/* --help of the program: usage line and one line per verb. */
void tier_cli_usage(const struct tier_cli *cli, FILE *out);

/* The verb of cli called name, or NULL. */
const struct tier_cli_verb *tier_cli_find(const struct tier_cli *cli, const char *name);

/* Handles PROG --completion SHELL (argv[1] is "--completion"): prints the
 * completion script on stdout. Returns the exit status; an unknown shell
 * is a usage error of one line on stderr. */
int tier_cli_completion(const struct tier_cli *cli, int argc, char **argv);

/* Prints the bash completion script of cli: a function _PROG and its
 * `complete -F` line, self-contained (no bash-completion helpers). */
void tier_cli_bash_completion(const struct tier_cli *cli, FILE *out);

#endif
