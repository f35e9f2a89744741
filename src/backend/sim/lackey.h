/* lackey.h - imports valgrind lackey memory traces into tiersim traces.
 *
 * `valgrind --tool=lackey --trace-mem=yes PROG` prints one line per access:
 *
 *   I  04001100,3          instruction fetch of 3 bytes
 *    L 1ffefffd38,8        load
 *    S 1ffefffd30,8        store
 *    M 0421f5b0,4          modify: load and store of the same bytes
 *   ==12345== ...          valgrind's own messages (ignored)
 *
 * The importer streams such text of any size line by line, maps each
 * virtual page (addr >> 12) to a dense page id in first-touch order, and
 * writes one access per page touched (an access that spans a page boundary
 * touches both pages). Memory grows with the number of distinct pages only.
 */
#ifndef TIER_SIM_LACKEY_H
#define TIER_SIM_LACKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/sim/trace.h"
#include "core/err.h"

/* Page size of the imported trace: lackey addresses are virtual, 4 KiB pages. */
#define TIER_LACKEY_PAGE_SHIFT		12
/* Longest line accepted; lackey's are under 40 bytes. */
#define TIER_LACKEY_LINE_MAX_BYTES	4096
/* Largest access size accepted on a line. */
#define TIER_LACKEY_ACCESS_MAX_BYTES	(1u << 20)

enum tier_lackey_kind {
	TIER_LACKEY_NONE,	/* valgrind message or blank line: nothing to import */
	TIER_LACKEY_INSTR,	/* I: instruction fetch */
	TIER_LACKEY_LOAD,	/* L */
	TIER_LACKEY_STORE,	/* S */
	TIER_LACKEY_MODIFY,	/* M: counts as one write */
};

struct tier_lackey_access {
	enum tier_lackey_kind kind;
	uint64_t addr;		/* virtual address */
	uint64_t sz_bytes;	/* 0 is taken as 1 */
};

struct tier_lackey_opts {
	bool include_instr;	/* import I lines as reads (default: skip) */
	bool skip_bad;		/* skip and count malformed lines (default: fail) */
	uint32_t sample_every;	/* keep 1 access line in N, at random; 0, 1 = all */
	uint64_t seed;		/* of the sampling's random sequence */
};

struct tier_lackey_stats {
	uint64_t nr_lines;		/* lines read */
	uint64_t nr_data_lines;		/* L, S and M lines */
	uint64_t nr_instr_lines;	/* I lines (imported or not) */
	uint64_t nr_ignored_lines;	/* valgrind messages, blank lines */
	uint64_t nr_bad_lines;		/* malformed lines skipped (skip_bad) */
	uint64_t nr_sampled_out;	/* access lines dropped by sampling */
	uint64_t nr_accesses;		/* page accesses written */
	uint64_t nr_pages;		/* distinct pages: the trace's footprint */
	struct tier_err first_bad;	/* "NAME:LINE: reason" of the first
					 * skipped line; "" = none */
};

/* Fills o with the defaults: skip I lines, fail on malformed lines, keep
 * every access, seed 1. */
void tier_lackey_opts_init(struct tier_lackey_opts *o);

/* Parses one line (without its newline; a trailing '\r' is allowed).
 * Returns 0 and fills *out, or -EINVAL with the reason in err (no file or
 * line prefix). */
int tier_lackey_parse_line(const char *line, size_t len, struct tier_lackey_access *out,
			   struct tier_err *err);

struct tier_lackey_importer;

/* Creates an importer feeding writer w, which stays the caller's (it must
 * outlive the importer). name is the input's name in messages. Returns 0,
 * -EINVAL (bad opts) or -ENOMEM. */
int tier_lackey_importer_new(const char *name, const struct tier_lackey_opts *opts,
			     struct tier_trace_writer *w, struct tier_lackey_importer **out,
			     struct tier_err *err);

/* Feeds the next len bytes of the input, in chunks of any size (lines may
 * straddle calls). Returns 0, or -EINVAL on a malformed line (unless
 * skip_bad) with err "NAME:LINE: reason", or -ENOMEM / a write error. */
int tier_lackey_importer_feed(struct tier_lackey_importer *imp, const char *data, size_t len,
			      struct tier_err *err);

/* Ends the input: imports a last line that has no newline. Same returns. */
int tier_lackey_importer_finish(struct tier_lackey_importer *imp, struct tier_err *err);

/* Counters so far; valid until the importer is destroyed. */
const struct tier_lackey_stats *tier_lackey_importer_stats(const struct tier_lackey_importer *imp);

/* Frees imp (not its writer). NULL is a no-op. */
void tier_lackey_importer_destroy(struct tier_lackey_importer *imp);

/* Converts the lackey output at in_path ("-" = standard input) into a trace
 * at out_path. Fills *stats (may be NULL). Returns 0 or -errno with err set:
 * open/read/write errors name the file, malformed lines "IN:LINE: reason",
 * -ENODATA when the input holds no memory access. No output file is left
 * behind on failure. */
int tier_lackey_convert(const char *in_path, const char *out_path,
			const struct tier_lackey_opts *opts, struct tier_lackey_stats *stats,
			struct tier_err *err);

#endif
