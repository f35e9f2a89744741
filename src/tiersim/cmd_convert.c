/* cmd_convert.c - tiersim convert: foreign access traces to tiersim traces. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/lackey.h"
#include "tiersim/tiersim.h"

static void convert_usage(FILE *out)
{
	fprintf(out,
		"usage: tiersim convert --from lackey [OPTIONS] IN OUT\n\n"
		"Converts `valgrind --tool=lackey --trace-mem=yes` output IN (\"-\" = stdin)\n"
		"into a tiersim trace OUT (docs/trace-format.md), for --workload trace:OUT.\n\n"
		"options:\n"
		"  --from FORMAT      input format; only 'lackey'\n"
		"  --include-instr    import instruction fetches (I lines) as reads\n"
		"  --skip-bad         skip and count malformed lines instead of failing\n"
		"  --sample N         keep one access line in N, chosen at random\n"
		"  --seed N           seed of the sampling (default 1)\n"
		"  --json             print the summary as JSON\n");
}

/* Parses a positive decimal integer no larger than max. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static void print_summary(const char *in, const char *out,
			  const struct tier_lackey_stats *st, bool json)
{
	if (json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "input", json_object_new_string(in));
		json_object_object_add(o, "output", json_object_new_string(out));
		json_object_object_add(o, "lines", json_object_new_int64((int64_t)st->nr_lines));
		json_object_object_add(o, "data_lines", json_object_new_int64((int64_t)st->nr_data_lines));
		json_object_object_add(o, "instr_lines", json_object_new_int64((int64_t)st->nr_instr_lines));
		json_object_object_add(o, "ignored_lines", json_object_new_int64((int64_t)st->nr_ignored_lines));
		json_object_object_add(o, "bad_lines", json_object_new_int64((int64_t)st->nr_bad_lines));
		json_object_object_add(o, "sampled_out", json_object_new_int64((int64_t)st->nr_sampled_out));
		json_object_object_add(o, "accesses", json_object_new_int64((int64_t)st->nr_accesses));
		json_object_object_add(o, "footprint_pages", json_object_new_int64((int64_t)st->nr_pages));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		return;
	}
	printf("%s: %" PRIu64 " accesses to %" PRIu64 " pages from %" PRIu64 " lines of %s\n",
	       out, st->nr_accesses, st->nr_pages, st->nr_lines, in);
	if (st->nr_sampled_out)
		printf("  %" PRIu64 " access lines dropped by sampling\n", st->nr_sampled_out);
	if (st->nr_bad_lines)
		printf("  %" PRIu64 " malformed lines skipped, the first: %s\n", st->nr_bad_lines,
		       st->first_bad.msg);
}

const struct option tiersim_convert_opts[] = {
	{ "from", required_argument, NULL, 'f' },
	{ "include-instr", no_argument, NULL, 'i' },
	{ "skip-bad", no_argument, NULL, 'k' },
	{ "sample", required_argument, NULL, 's' },
	{ "seed", required_argument, NULL, 'S' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int tiersim_convert(int argc, char **argv)
{
	struct tier_lackey_opts lo;
	struct tier_lackey_stats st;
	struct tier_err err = { "" };
	const char *from = NULL;
	bool json = false;
	uint64_t v;
	int c;

	tier_lackey_opts_init(&lo);
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", tiersim_convert_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			from = optarg;
			break;
		case 'i':
			lo.include_instr = true;
			break;
		case 'k':
			lo.skip_bad = true;
			break;
		case 's':
			if (!parse_u64(optarg, UINT32_MAX, &v) || !v) {
				fprintf(stderr, "tiersim convert: --sample '%s': expected a whole number"
					" from 1 to %" PRIu32 "\n", optarg, UINT32_MAX);
				return 2;
			}
			lo.sample_every = (uint32_t)v;
			break;
		case 'S':
			if (!parse_u64(optarg, UINT64_MAX, &v)) {
				fprintf(stderr, "tiersim convert: --seed '%s': expected a whole number\n",
					optarg);
				return 2;
			}
			lo.seed = v;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			convert_usage(stdout);
			return 0;
		default:	/* getopt said what */
			return 2;
		}
	}
	if (!from) {
		fprintf(stderr, "tiersim convert: --from FORMAT is required (known: lackey)\n");
		return 2;
	}
	if (strcmp(from, "lackey")) {
		fprintf(stderr, "tiersim convert: unknown input format '%s' (known: lackey)\n", from);
		return 2;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "tiersim convert: expected IN and OUT, got %d argument%s"
			" (see tiersim convert --help)\n", argc - optind, argc - optind == 1 ? "" : "s");
		return 2;
	}
	if (tier_lackey_convert(argv[optind], argv[optind + 1], &lo, &st, &err)) {
		fprintf(stderr, "tiersim convert: %s\n", err.msg);
		return 1;
	}
	print_summary(argv[optind], argv[optind + 1], &st, json);
	return 0;
}
