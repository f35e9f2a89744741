/* cli.c - --help's verb list and the bash completion script, both printed
 * from a program's verb tables (common/cli.h). */
#include "common/cli.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void tier_cli_usage(const struct tier_cli *cli, FILE *out)
{
	const struct tier_cli_verb *v;
	int width = 10;

	fprintf(out, "usage: %s VERB [OPTIONS]   (%s VERB --help for a verb's options)\n"
		     "       %s --completion bash (prints the bash completion script)\n\nverbs:\n",
		cli->prog, cli->prog, cli->prog);
	/* One column for "name synopsis", as wide as the widest. */
	for (v = cli->verbs; v->name; v++) {
		int w = (int)strlen(v->name) + (v->synopsis ? 1 + (int)strlen(v->synopsis) : 0);

		if (w > width)
			width = w;
	}
	for (v = cli->verbs; v->name; v++) {
		char col[256];

		snprintf(col, sizeof(col), "%s%s%s", v->name, v->synopsis ? " " : "",
			 v->synopsis ? v->synopsis : "");
		fprintf(out, "  %-*s %s\n", width, col, v->summary);
	}
}

const struct tier_cli_verb *tier_cli_find(const struct tier_cli *cli, const char *name)
{
	const struct tier_cli_verb *v;

	for (v = cli->verbs; v->name; v++)
		if (!strcmp(v->name, name))
			return v;
	return NULL;
}

int tier_cli_completion(const struct tier_cli *cli, int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[2], "bash")) {
		fprintf(stderr, "%s: --completion: expected the shell's name, bash\n", cli->prog);
		return 2;
	}
	tier_cli_bash_completion(cli, stdout);
	return 0;
}

/* --- the bash script ------------------------------------------------------ */

/* Prints s single-quoted for the shell. */
static void put_quoted(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

/* The option names of a table as "--a --b", those taking an argument only
 * when args; "--help" when the table is empty (every verb takes it). */
static void put_opts(FILE *out, const struct option *opts, bool args)
{
	const struct option *o;
	bool any = false;

	fputc('\'', out);
	for (o = opts; o && o->name; o++) {
		if (args && o->has_arg != required_argument)
			continue;
		fprintf(out, "%s--%s", any ? " " : "", o->name);
		any = true;
	}
	if (!any && !args)
		fputs("--help", out);
	fputc('\'', out);
}

/* The words cli->words prints for (verb, opt), in a heap string ("" when
 * none or no callback); NULL when out of memory. */
static char *words_of(const struct tier_cli *cli, const char *verb, const char *opt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!cli->words)
		return strdup("");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	cli->words(f, verb, opt);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* One case line `'PATH --opt') words='...' ;;` per option argument (or
 * operand, opt NULL) that has words. */
static void put_words_case(const struct tier_cli *cli, FILE *out, const char *path,
			   const struct option *opts)
{
	const struct option *o;
	char *w;

	for (o = opts; o && o->name; o++) {
		char opt[128], key[256];

		if (o->has_arg != required_argument)
			continue;
		snprintf(opt, sizeof(opt), "--%s", o->name);
		w = words_of(cli, path, opt);
		if (w && *w) {
			snprintf(key, sizeof(key), "%s %s", path, opt);
			fputs("\t\t", out);
			put_quoted(out, key);
			fputs(") words=", out);
			put_quoted(out, w);
			fputs(" ;;\n", out);
		}
		free(w);
	}
}

/* The case line `'PATH') words='...' ;;` of the verb's operands, if it
 * has words. */
static void put_operand_case(const struct tier_cli *cli, FILE *out, const char *path)
{
	char *w = words_of(cli, path, NULL);

	if (w && *w) {
		fputs("\t\t", out);
		put_quoted(out, path);
		fputs(") words=", out);
		put_quoted(out, w);
		fputs(" ;;\n", out);
	}
	free(w);
}

static void put_verb_case(FILE *out, const char *path, const struct tier_cli_verb *v)
{
	const struct tier_cli_verb *s;

	fputs("\t", out);
	put_quoted(out, path);
	fputs(") opts=", out);
	put_opts(out, v->opts, false);
	fputs(" argopts=", out);
	put_opts(out, v->opts, true);
	if (v->sub) {
		fputs(" subs='", out);
		for (s = v->sub; s->name; s++)
			fprintf(out, "%s%s", s == v->sub ? "" : " ", s->name);
		fputc('\'', out);
	}
	fputs(" ;;\n", out);
}

void tier_cli_bash_completion(const struct tier_cli *cli, FILE *out)
{
	const struct tier_cli_verb *v, *s;
	char fn[64], path[128];
	size_t i;

	/* The function's name: _PROG with characters bash names cannot hold
	 * turned into '_'. */
	snprintf(fn, sizeof(fn), "_%s", cli->prog);
	for (i = 1; fn[i]; i++)
		if (!(fn[i] >= 'a' && fn[i] <= 'z') && !(fn[i] >= 'A' && fn[i] <= 'Z') &&
		    !(fn[i] >= '0' && fn[i] <= '9'))
			fn[i] = '_';

	fprintf(out,
		"# bash completion for %s                             -*- shell-script -*-\n"
		"# Printed by `%s --completion bash` from the verb and option tables\n"
		"# behind `%s --help`: regenerate it rather than edit it.\n\n"
		"%s()\n{\n"
		"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= path= opts= argopts= subs= words=\n"
		"\t[ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
		"\tCOMPREPLY=()\n"
		"\t# path: the verb, and the sub-verb of a verb that has them\n"
		"\t# ('' while the verb is being typed, '-' after a program option).\n"
		"\tif [ \"$COMP_CWORD\" -gt 1 ]; then\n"
		"\t\tcase ${COMP_WORDS[1]} in\n"
		"\t\t-*) path=- ;;\n"
		"\t\t*) path=${COMP_WORDS[1]} ;;\n"
		"\t\tesac\n"
		"\t\tcase $path in\n",
		cli->prog, cli->prog, cli->prog, fn);
	for (v = cli->verbs; v->name; v++) {
		if (!v->sub)
			continue;
		fputs("\t\t", out);
		put_quoted(out, v->name);
		fputs(") [ \"$COMP_CWORD\" -gt 2 ] && path=\"$path ${COMP_WORDS[2]}\" ;;\n", out);
	}
	fputs("\t\tesac\n\tfi\n\tcase $path in\n\t'') opts='--help --completion' subs='", out);
	for (v = cli->verbs; v->name; v++)
		fprintf(out, "%s%s", v == cli->verbs ? "" : " ", v->name);
	fputs("' ;;\n\t-) opts='--help --completion' argopts='--completion' ;;\n", out);
	for (v = cli->verbs; v->name; v++) {
		put_verb_case(out, v->name, v);
		for (s = v->sub; s && s->name; s++) {
			snprintf(path, sizeof(path), "%s %s", v->name, s->name);
			put_verb_case(out, path, s);
		}
	}
	fputs("\t*) return 0 ;;\n\tesac\n"
	      "\tif [ -n \"$prev\" ] && [[ \" $argopts \" == *\" $prev \"* ]]; then\n"
	      "\t\t# The option's argument.\n"
	      "\t\tcase \"$path $prev\" in\n"
	      "\t\t'- --completion') words=bash ;;\n", out);
	for (v = cli->verbs; v->name; v++) {
		put_words_case(cli, out, v->name, v->opts);
		for (s = v->sub; s && s->name; s++) {
			snprintf(path, sizeof(path), "%s %s", v->name, s->name);
			put_words_case(cli, out, path, s->opts);
		}
	}
	fputs("\t\tesac\n"
	      "\telif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\t\treturn 0\n"
	      "\telif [ -n \"$subs\" ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
	      "\t\treturn 0\n"
	      "\telse\n"
	      "\t\t# An operand.\n"
	      "\t\tcase $path in\n", out);
	/* A verb with sub-verbs has its operands after them. */
	for (v = cli->verbs; v->name; v++) {
		if (!v->sub)
			put_operand_case(cli, out, v->name);
		for (s = v->sub; s && s->name; s++) {
			snprintf(path, sizeof(path), "%s %s", v->name, s->name);
			put_operand_case(cli, out, path);
		}
	}
	fprintf(out, "\t\tesac\n"
		     "\tfi\n"
		     "\tif [ -n \"$words\" ]; then\n"
		     "\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
		     "\telse\n"
		     "\t\tcompopt -o filenames 2>/dev/null\n"
		     "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
		     "\tfi\n"
		     "\treturn 0\n"
		     "}\n"
		     "complete -F %s %s\n", fn, cli->prog);
}
