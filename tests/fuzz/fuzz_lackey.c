/* fuzz_lackey.c - fuzz target of the lackey importer (backend/sim/lackey.h,
 * what `tiersim convert` runs; libFuzzer ABI).
 *
 * Each input is valgrind lackey text. Every line goes through
 * tier_lackey_parse_line(), which gives an access or nothing with no
 * message, or -EINVAL with one line of reason. The input is then imported
 * twice into a trace on tmpfs: in one chunk, and in short chunks (1 to 17
 * bytes, so that lines straddle calls). Both must end alike (the same
 * return, message and counters); a failure names the input and a line
 * ("fuzz:LINE: ..."). When they fail, a third import skips bad lines: it
 * must not fail, and must skip some.
 * A finished trace is read back: as many accesses and pages as the
 * importer counted, every page below the footprint.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/sim/lackey.h"
#include "backend/sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char trace_path[PATH_MAX];

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_lackey: invariant broken: %s\n", what);
		abort();
	}
}

static void cleanup(void)
{
	unlink(trace_path);
}

static void setup(void)
{
	const char *base = getenv("TMPDIR");
	struct stat st;
	int fd;

	/* A trace is rewritten on every input: tmpfs, not a disk. */
	if (!base || !*base)
		base = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(trace_path, sizeof(trace_path), "%s/fuzz-lackey.XXXXXX", base);
	fd = mkstemp(trace_path);
	must(fd >= 0, "mkstemp");
	close(fd);
	atexit(cleanup);
}

/* Checks the line parser on each line of data. */
static void check_lines(const uint8_t *data, size_t size)
{
	size_t at = 0;

	while (at < size) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		struct tier_lackey_access a;
		struct tier_err err = { "" };
		int rc = tier_lackey_parse_line((const char *)data + at, len, &a, &err);

		if (rc) {
			must(rc == -EINVAL, "parse: -EINVAL");
			must(err.msg[0] && !strchr(err.msg, '\n'), "parse: one line of reason");
			must(a.kind == TIER_LACKEY_NONE, "parse: no access on error");
		} else {
			must(!err.msg[0], "parse: no message on success");
			if (a.kind != TIER_LACKEY_NONE) {
				must(a.sz_bytes >= 1 && a.sz_bytes <= TIER_LACKEY_ACCESS_MAX_BYTES,
				     "parse: size in range");
				must(a.addr + (a.sz_bytes - 1) >= a.addr, "parse: no wrap");
			}
		}
		at += len + (nl != NULL);
	}
}

struct outcome {
	int rc;
	struct tier_lackey_stats st;
	char msg[sizeof(((struct tier_err *)0)->msg)];
};

/* Imports data in chunks of chunk bytes (0: one chunk) into the trace;
 * reads a finished trace back. */
static void import(const uint8_t *data, size_t size, size_t chunk, bool skip_bad,
		   struct outcome *o)
{
	struct tier_lackey_importer *imp;
	struct tier_trace_writer *w;
	struct tier_lackey_opts opts;
	struct tier_err err = { "" };
	size_t at = 0, n;

	memset(o, 0, sizeof(*o));
	tier_lackey_opts_init(&opts);
	opts.include_instr = size & 1;
	opts.skip_bad = skip_bad;
	must(tier_trace_writer_new(trace_path, TIER_LACKEY_PAGE_SHIFT, &w, &err) == 0,
	     "writer_new");
	must(tier_lackey_importer_new("fuzz", &opts, w, &imp, &err) == 0, "importer_new");
	do {
		n = chunk && size - at > chunk ? chunk : size - at;
		o->rc = tier_lackey_importer_feed(imp, (const char *)data + at, n, &err);
		at += n;
	} while (!o->rc && at < size);
	if (!o->rc)
		o->rc = tier_lackey_importer_finish(imp, &err);
	o->st = *tier_lackey_importer_stats(imp);
	if (o->rc) {
		must(o->rc == -EINVAL, "import fails with -EINVAL only");
		must(!strncmp(err.msg, "fuzz:", 5) && !strchr(err.msg, '\n'),
		     "error names the input, on one line");
		snprintf(o->msg, sizeof(o->msg), "%s", err.msg);
	} else if (o->st.nr_accesses) {
		struct tier_sim_access buf[256];
		struct tier_trace_reader *r;
		uint64_t nr = 0;
		long k, i;

		must(tier_trace_writer_finish(w, &err) == 0, "writer_finish");
		must(tier_trace_reader_open(trace_path, &r, &err) == 0, "reader_open");
		must(tier_trace_reader_footprint_pages(r) == o->st.nr_pages,
		     "footprint = distinct pages");
		must(tier_trace_reader_nr_accesses(r) == o->st.nr_accesses,
		     "trace holds every access");
		while ((k = tier_trace_reader_next(r, buf, 256, &err)) > 0) {
			for (i = 0; i < k; i++)
				must(buf[i].page < o->st.nr_pages, "pages below the footprint");
			nr += (uint64_t)k;
		}
		must(k == 0 && nr == o->st.nr_accesses, "trace reads back whole");
		tier_trace_reader_destroy(r);
	}
	must(o->st.nr_lines >= o->st.nr_data_lines + o->st.nr_instr_lines +
	     o->st.nr_ignored_lines + o->st.nr_bad_lines, "lines add up");
	must(!o->st.nr_bad_lines || skip_bad, "bad lines skipped only when asked");
	tier_lackey_importer_destroy(imp);
	tier_trace_writer_destroy(w);
}

static bool same_counts(const struct tier_lackey_stats *a, const struct tier_lackey_stats *b)
{
	return a->nr_lines == b->nr_lines && a->nr_data_lines == b->nr_data_lines &&
	       a->nr_instr_lines == b->nr_instr_lines &&
	       a->nr_ignored_lines == b->nr_ignored_lines && a->nr_bad_lines == b->nr_bad_lines &&
	       a->nr_sampled_out == b->nr_sampled_out && a->nr_accesses == b->nr_accesses &&
	       a->nr_pages == b->nr_pages && !strcmp(a->first_bad.msg, b->first_bad.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome whole, cut, skip;

	if (!trace_path[0])
		setup();
	check_lines(data, size);
	import(data, size, 0, false, &whole);
	import(data, size, 1 + size % 17, false, &cut);
	must(whole.rc == cut.rc && !strcmp(whole.msg, cut.msg), "same end whatever the chunks");
	must(same_counts(&whole.st, &cut.st), "same counts whatever the chunks");
	if (!whole.rc)
		return 0;	/* no bad line: skipping them changes nothing */
	import(data, size, 0, true, &skip);
	must(skip.rc == 0, "skipping bad lines never fails");
	must(skip.st.nr_bad_lines > 0, "skips where a plain import fails");
	return 0;
}
