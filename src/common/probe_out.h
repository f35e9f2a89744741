/* probe_out.h - probe results as JSON (json-c; probe_json.c), as a file
 * (probe_file.c), and as a table (probe_table.c).
 *
 * The JSON shape is part of the command-line contract; docs/probe.md
 * documents every field. The same document is what `tierctl probe` saves
 * (default TIER_PROBE_DEFAULT_FILE) and what tier_probe_report_load() reads
 * back, so the tier model can rank by measured figures (config
 * `topology.rank_by: measured`).
 */
#ifndef TIER_COMMON_PROBE_OUT_H
#define TIER_COMMON_PROBE_OUT_H

#include <json-c/json.h>
#include <stdio.h>

#include "core/config.h"
#include "core/probe.h"

/* Version of the saved document; the loader refuses any other. */
enum { TIER_PROBE_FILE_VERSION = 1 };

/* ---- JSON (probe_json.c) ---------------------------------------------- */

/* A new JSON object (caller puts it with json_object_put), NULL on ENOMEM. */
struct json_object *tier_probe_report_to_json(const struct tier_probe_report *r);

/* Fills r (initialised or released storage; previous content released)
 * from a JSON document as tier_probe_report_to_json() writes it. Verdicts
 * are read as stored, not judged again. Returns 0 or -EINVAL with err
 * naming the field ("nodes[1].from[0].latency_ns.median: not a number");
 * on error r is left empty. */
int tier_probe_report_from_json(struct json_object *o, struct tier_probe_report *r,
				struct tier_err *err);

/* ---- the saved report (probe_file.c) ---------------------------------- */

/* Writes the report to path atomically (a temporary file in the same
 * directory, then rename), creating missing parent directories (0755).
 * Returns 0 or -errno with err naming the path. */
int tier_probe_report_save(const struct tier_probe_report *r, const char *path,
			   struct tier_err *err);

/* Reads a saved report. Returns 0 or -errno (-ENOENT: no such file,
 * -EINVAL: not a probe report) with err saying "PATH: ..." . */
int tier_probe_report_load(const char *path, struct tier_probe_report *r,
			   struct tier_err *err);

/* Parses a saved report from the len bytes at buf (a file's contents;
 * need not end in NUL) as tier_probe_report_load() does, name standing
 * for the file in messages. Returns 0 or -errno (-EINVAL: not a probe
 * report, -EFBIG: over 16 MiB) with err saying "NAME: ..."; on error r is
 * left empty. */
int tier_probe_report_parse(const char *buf, size_t len, const char *name,
			    struct tier_probe_report *r, struct tier_err *err);

/* The measured tier order of the report saved at path, as a topology
 * override (see tier_probe_override; the caller frees *tiers and *nodes).
 * Returns 0 or -errno with err set. */
int tier_probe_load_override(const char *path, struct tier_tier_override **tiers,
			     size_t *nr_tiers, int **nodes, struct tier_err *err);

/* ---- table (probe_table.c) -------------------------------------------- */

/* Prints the figures, claims and verdicts as a table, then one line per
 * disagreement saying what the firmware claims and what was measured. */
void tier_probe_report_print(const struct tier_probe_report *r, FILE *out);

#endif
