/* fuzz_probe_file.c - fuzz target of the saved probe report's reader
 * (common/probe_out.h: tier_probe_report_parse, what
 * tier_probe_report_load() and `tierctl probe --load` run on a file's
 * contents; libFuzzer ABI).
 *
 * Any bytes give a report or one error line naming the file, with the
 * report left empty; a report is read only from text (no NUL byte). A report read writes back (tier_probe_report_to_json)
 * to a document that reads to the same document again, and gives a tier
 * order (tier_probe_override) of every measured node once, or says that
 * no node was measured.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/probe_out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_probe_file: invariant broken: %s\n", what);
		abort();
	}
}

static void check_override(const struct tier_probe_report *r)
{
	struct tier_tier_override *tiers;
	struct tier_err err = { "" };
	size_t nr_tiers, nr_measured = 0, listed = 0, i, k;
	int *nodes, ret;

	for (i = 0; i < r->nr_nodes; i++)
		nr_measured += r->nodes[i].measured_rank >= 0;
	ret = tier_probe_override(r, &tiers, &nr_tiers, &nodes, &err);
	if (ret) {
		must(ret == -EINVAL && !nr_measured && err.msg[0], "no order only without measures");
		return;
	}
	for (k = 0; k < nr_tiers; k++) {
		must(tiers[k].nr_nodes > 0, "no empty tier");
		for (i = 0; i < tiers[k].nr_nodes; i++) {
			const struct tier_probe_node *n = tier_probe_report_node(r, tiers[k].nodes[i]);

			must(n && n->measured_rank >= 0, "tiers of measured nodes");
			listed++;
		}
	}
	must(listed == nr_measured, "every measured node once");
	free(tiers);
	free(nodes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tier_probe_report r, back;
	struct tier_err err = { "" };
	struct json_object *o;
	char *first, *second;
	int ret;

	tier_probe_report_init(&r);
	tier_probe_report_init(&back);
	ret = tier_probe_report_parse((const char *)data, size, "fuzz.json", &r, &err);
	if (ret) {
		must(ret < 0 && !strncmp(err.msg, "fuzz.json: ", 11) && !strchr(err.msg, '\n'),
		     "an error line naming the file");
		must(r.nr_nodes == 0, "a failed read leaves the report empty");
		tier_probe_report_release(&r);
		return 0;
	}
	must(!memchr(data, '\0', size), "no NUL byte in a JSON document read");
	o = tier_probe_report_to_json(&r);
	must(o != NULL, "to_json");
	first = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	must(first != NULL, "strdup");
	must(tier_probe_report_parse(first, strlen(first), "again", &back, &err) == 0,
	     "a report written back reads again");
	o = tier_probe_report_to_json(&back);
	must(o != NULL, "to_json again");
	second = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	must(second != NULL && !strcmp(first, second), "the same document again");
	free(first);
	free(second);
	check_override(&r);
	tier_probe_report_release(&back);
	tier_probe_report_release(&r);
	return 0;
}
