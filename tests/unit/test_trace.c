/* test_trace.c - the trace format (writer, reader, damage reports) and the
 * valgrind lackey importer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/sim/lackey.h"
#include "backend/sim/trace.h"

#define FIXTURE TIERD_SOURCE_ROOT "/tests/fixtures/lackey/sort.lackey"

struct tmp {
	char dir[64];
	char path[128];
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	strcpy(t->dir, "/tmp/test-trace.XXXXXX");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s/t.trc", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;
	char p[160];

	unlink(t->path);
	snprintf(p, sizeof(p), "%s/out.trc", t->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/in.txt", t->dir);
	unlink(p);
	rmdir(t->dir);
	free(t);
	return 0;
}

/* One access of an expected sequence, with its repeat count. */
struct rec {
	uint64_t page;
	bool write;
	uint8_t tenant;
	uint64_t count;
};

static void write_trace(const char *path, const struct rec *recs, size_t n)
{
	struct tier_trace_writer *w;
	struct tier_err err = { "" };
	size_t i;

	if (tier_trace_writer_new(path, 12, &w, &err))
		fail_msg("%s", err.msg);
	for (i = 0; i < n; i++) {
		tier_trace_writer_set_tenant(w, recs[i].tenant);
		assert_int_equal(tier_trace_writer_add(w, recs[i].page, recs[i].write,
						       recs[i].count), 0);
	}
	if (tier_trace_writer_finish(w, &err))
		fail_msg("%s", err.msg);
	tier_trace_writer_destroy(w);
}

/* Reads the whole trace in batches of `batch`, checking each access against
 * recs expanded; returns the number of accesses read. */
static uint64_t read_expect(struct tier_trace_reader *r, const struct rec *recs, size_t n,
			    size_t batch)
{
	struct tier_sim_access *buf = calloc(batch, sizeof(*buf));
	struct tier_err err = { "" };
	size_t ri = 0;
	uint64_t left = n ? recs[0].count : 0, total = 0;
	long k, i;

	assert_non_null(buf);
	while ((k = tier_trace_reader_next(r, buf, batch, &err)) > 0) {
		for (i = 0; i < k; i++) {
			while (!left) {
				ri++;
				assert_true(ri < n);
				left = recs[ri].count;
			}
			assert_int_equal(buf[i].page, recs[ri].page);
			assert_int_equal(buf[i].write, recs[ri].write);
			assert_int_equal(buf[i].tenant, recs[ri].tenant);
			left--;
			total++;
		}
	}
	if (k < 0)
		fail_msg("%s", err.msg);
	free(buf);
	return total;
}

static const struct rec mixed[] = {
	{ 0, false, 0, 1 },
	{ 5, true, 0, 1 },
	{ 5, true, 0, 1000 },		/* merges with the one before */
	{ 3, false, 0, 2 },		/* backwards */
	{ 1000000, false, 1, 1 },	/* far, another tenant */
	{ 7, true, 1, 70000 },
	{ 7, false, 1, 1 },		/* same page, other kind: no merge */
	{ 2, false, 0, 3 },
	{ 4095, true, 2, 1 },
};

static uint64_t sum_counts(const struct rec *recs, size_t n)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += recs[i].count;
	return s;
}

static void test_round_trip(void **state)
{
	static const size_t batches[] = { 1, 2, 999, 4096, 100000 };
	struct tmp *t = *state;
	struct tier_trace_reader *r;
	struct tier_err err = { "" };
	size_t n = sizeof(mixed) / sizeof(mixed[0]), b;

	write_trace(t->path, mixed, n);
	if (tier_trace_reader_open(t->path, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(tier_trace_reader_footprint_pages(r), 1000001);
	assert_int_equal(tier_trace_reader_nr_accesses(r), sum_counts(mixed, n));
	assert_int_equal(tier_trace_reader_nr_records(r), n - 1);	/* one merge */
	assert_int_equal(tier_trace_reader_page_shift(r), 12);
	assert_int_equal(tier_trace_reader_nr_tenants(r), 3);
	for (b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		assert_int_equal(read_expect(r, mixed, n, batches[b]), sum_counts(mixed, n));
		assert_int_equal(tier_trace_reader_rewind(r), 0);
	}
	/* Refills of 1 byte split every record. */
	tier__trace_reader_set_read_max(r, 1);
	assert_int_equal(read_expect(r, mixed, n, 3), sum_counts(mixed, n));
	tier_trace_reader_destroy(r);
}

static void test_round_trip_large(void **state)
{
	struct tmp *t = *state;
	enum { N = 300000 };
	struct rec *recs = calloc(N, sizeof(*recs));
	struct tier_trace_reader *r;
	struct tier_err err = { "" };
	uint64_t x = 42;
	size_t i;

	assert_non_null(recs);
	for (i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* Alternate kinds so no two neighbours merge. */
		recs[i] = (struct rec){ (x >> 33) % ((x >> 20 & 1) ? 100 : (1ull << 40)),
					i & 1, 0, (x >> 10 & 7) ? 1 : 1 + (x >> 40) % 50 };
	}
	write_trace(t->path, recs, N);
	if (tier_trace_reader_open(t->path, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(tier_trace_reader_nr_records(r), N);
	assert_int_equal(read_expect(r, recs, N, 777), sum_counts(recs, N));
	tier_trace_reader_rewind(r);
	tier__trace_reader_set_read_max(r, 13);
	assert_int_equal(read_expect(r, recs, N, 4096), sum_counts(recs, N));
	tier_trace_reader_destroy(r);
	free(recs);
}

static void test_empty_trace(void **state)
{
	struct tmp *t = *state;
	struct tier_trace_reader *r;
	struct tier_sim_access a;
	struct tier_err err = { "" };

	write_trace(t->path, NULL, 0);
	if (tier_trace_reader_open(t->path, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(tier_trace_reader_footprint_pages(r), 0);
	assert_int_equal(tier_trace_reader_nr_accesses(r), 0);
	assert_int_equal(tier_trace_reader_next(r, &a, 1, &err), 0);
	tier_trace_reader_destroy(r);
}

static void test_writer_rejects(void **state)
{
	struct tmp *t = *state;
	struct tier_trace_writer *w;
	struct tier_err err = { "" };
	struct stat st;

	assert_int_equal(tier_trace_writer_new(t->path, 11, &w, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "page shift 11"));
	assert_int_equal(tier_trace_writer_new("/nonexistent-dir/x.trc", 12, &w, &err), -ENOENT);
	assert_string_equal(err.msg, "/nonexistent-dir/x.trc: No such file or directory");
	assert_int_equal(tier_trace_writer_new(t->path, 12, &w, &err), 0);
	assert_int_equal(tier_trace_writer_add(w, 1, false, 0), -EINVAL);
	assert_int_equal(tier_trace_writer_add(w, TIER_TRACE_MAX_PAGES, false, 1), -ERANGE);
	assert_int_equal(tier_trace_writer_add(w, 1, false, 1), 0);
	/* Not finished: destroy removes the file. */
	tier_trace_writer_destroy(w);
	assert_int_equal(stat(t->path, &st), -1);
}

/* ---- damaged traces ---------------------------------------------------- */

static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void spill(const char *path, const uint8_t *buf, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
}

static void put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Three reads of pages 0, 1, 2: records 0x00 0x10 0x10 at bytes 64-66. */
static const struct rec three[] = {
	{ 0, false, 0, 1 }, { 1, false, 0, 1 }, { 2, false, 0, 1 },
};

/* Opens path expecting failure code with message msg. */
static void expect_open_error(const char *path, int code, const char *msg)
{
	struct tier_trace_reader *r;
	struct tier_err err = { "" };

	assert_int_equal(tier_trace_reader_open(path, &r, &err), code);
	assert_null(r);
	assert_string_equal(err.msg, msg);
}

/* Opens path fine, then expects reading to fail with code and message. */
static void expect_read_error(const char *path, int code, const char *msg)
{
	struct tier_sim_access buf[16];
	struct tier_trace_reader *r;
	struct tier_err err = { "" };
	long k;

	if (tier_trace_reader_open(path, &r, &err))
		fail_msg("%s", err.msg);
	while ((k = tier_trace_reader_next(r, buf, 16, &err)) > 0)
		;
	assert_int_equal(k, code);
	assert_string_equal(err.msg, msg);
	/* The error sticks. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(tier_trace_reader_next(r, buf, 16, &err), code);
	assert_string_equal(err.msg, msg);
	tier_trace_reader_destroy(r);
}

static void test_layout(void **state)
{
	struct tmp *t = *state;
	uint8_t b[128] = { 0 };
	static const uint8_t want[] = {
		'T', 'I', 'E', 'R', 'T', 'R', 'C', '\n', 1, 0, 64, 0, 12, 0, 1, 0,
		1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
		3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
		3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x10, 0x10,
	};

	write_trace(t->path, three, 3);
	assert_int_equal(slurp(t->path, b, sizeof(b)), sizeof(want));
	assert_memory_equal(b, want, sizeof(want));
}

static void test_truncated(void **state)
{
	struct tmp *t = *state;
	char msg[256];
	uint8_t b[128] = { 0 };
	size_t n;

	write_trace(t->path, three, 3);
	n = slurp(t->path, b, sizeof(b));
	spill(t->path, b, n - 1);
	snprintf(msg, sizeof(msg), "%s: truncated at byte 66: the header says the trace is 67 bytes",
		 t->path);
	expect_open_error(t->path, -ENODATA, msg);
	spill(t->path, b, 30);
	snprintf(msg, sizeof(msg), "%s: truncated at byte 30: the header is 64 bytes", t->path);
	expect_open_error(t->path, -ENODATA, msg);
	spill(t->path, b, 0);
	snprintf(msg, sizeof(msg), "%s: empty file, not a tierd trace", t->path);
	expect_open_error(t->path, -EINVAL, msg);
	/* Cut inside the stream with a consistent size: the last record
	 * (a repeat: head 0x12, count 0x05) loses its count byte. */
	b[66] = 0x12;
	b[67] = 0x05;
	put64(b + 40, 1 + 1 + 7);	/* accesses */
	put64(b + 48, 3);		/* data bytes: record 2 is cut */
	spill(t->path, b, 67);
	snprintf(msg, sizeof(msg), "%s: record 2 at byte 66: truncated: record runs past the end"
		 " of the data at byte 67", t->path);
	expect_read_error(t->path, -ENODATA, msg);
}

static void test_bad_magic_and_version(void **state)
{
	struct tmp *t = *state;
	char msg[256];
	uint8_t b[128] = { 0 };
	size_t n;

	write_trace(t->path, three, 3);
	n = slurp(t->path, b, sizeof(b));
	b[0] = 'X';
	spill(t->path, b, n);
	snprintf(msg, sizeof(msg), "%s: bad magic at byte 0, not a tierd trace", t->path);
	expect_open_error(t->path, -EINVAL, msg);
	b[0] = 'T';
	b[8] = 2;
	spill(t->path, b, n);
	snprintf(msg, sizeof(msg), "%s: trace version 2 at byte 8, this build reads version 1",
		 t->path);
	expect_open_error(t->path, -EPROTONOSUPPORT, msg);
	b[8] = 1;
	b[16] = 0;	/* not complete */
	spill(t->path, b, n);
	snprintf(msg, sizeof(msg), "%s: incomplete trace: its writer did not finish", t->path);
	expect_open_error(t->path, -EINVAL, msg);
	b[16] = 1;
	spill(t->path, b, n + 1);
	snprintf(msg, sizeof(msg), "%s: trailing data at byte 67: the header says the trace is"
		 " 67 bytes", t->path);
	expect_open_error(t->path, -EINVAL, msg);
	b[12] = 40;
	spill(t->path, b, n);
	snprintf(msg, sizeof(msg), "%s: page shift 40 at byte 12 outside [12, 30]", t->path);
	expect_open_error(t->path, -EINVAL, msg);
	b[12] = 12;
	expect_open_error("/nonexistent.trc", -ENOENT, "/nonexistent.trc: No such file or directory");
	expect_open_error("/tmp", -EINVAL, "/tmp: not a regular file");
}

static void test_corrupt_record(void **state)
{
	struct tmp *t = *state;
	char msg[256];
	uint8_t b[128] = { 0 };
	size_t n;

	write_trace(t->path, three, 3);
	n = slurp(t->path, b, sizeof(b));
	/* Record 2 jumps by +5 from page 1: page 6, outside 3 pages. */
	b[66] = 0x50;
	spill(t->path, b, n);
	snprintf(msg, sizeof(msg), "%s: record 2 at byte 66: page 6 outside the footprint of"
		 " 3 pages", t->path);
	expect_read_error(t->path, -EINVAL, msg);
	/* A tenant past the header's count. */
	b[66] = 0x10 | TIER_TRACE_R_TENANT;
	b[67] = 9;
	put64(b + 48, 4);
	spill(t->path, b, 68);
	snprintf(msg, sizeof(msg), "%s: record 2 at byte 66: tenant 9 outside the header's 1",
		 t->path);
	expect_read_error(t->path, -EINVAL, msg);
	/* Header promises one more access than the records hold. */
	b[66] = 0x10;
	put64(b + 48, 3);
	put64(b + 40, 4);
	spill(t->path, b, 67);
	snprintf(msg, sizeof(msg), "%s: record 3 at byte 67: end of data after 3 accesses,"
		 " the header says 4", t->path);
	expect_read_error(t->path, -EINVAL, msg);
	/* A varint of 11 bytes. */
	{
		uint8_t v[64 + 11 + 11];

		memcpy(v, b, 64);
		memset(v + 64, 0xff, 22);
		put64(v + 32, 2);	/* records */
		put64(v + 40, 2);
		put64(v + 48, 22);
		spill(t->path, v, sizeof(v));
		snprintf(msg, sizeof(msg), "%s: record 0 at byte 64: varint longer than 64 bits",
			 t->path);
		expect_read_error(t->path, -EINVAL, msg);
	}
}

static void test_mem_reader(void **state)
{
	struct tmp *t = *state;
	struct tier_trace_reader *r;
	struct tier_err err = { "" };
	uint8_t b[128] = { 0 };
	size_t n;

	write_trace(t->path, three, 3);
	n = slurp(t->path, b, sizeof(b));
	if (tier_trace_reader_open_mem(b, n, "mem", &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(read_expect(r, three, 3, 2), 3);
	tier_trace_reader_destroy(r);
	assert_int_equal(tier_trace_reader_open_mem(b, 10, "mem", &r, &err), -ENODATA);
	assert_string_equal(err.msg, "mem: truncated at byte 10: the header is 64 bytes");
}

/* ---- lackey ------------------------------------------------------------ */

static void parse_ok(const char *line, enum tier_lackey_kind kind, uint64_t addr, uint64_t sz)
{
	struct tier_lackey_access a;
	struct tier_err err = { "" };

	if (tier_lackey_parse_line(line, strlen(line), &a, &err))
		fail_msg("'%s': %s", line, err.msg);
	assert_int_equal(a.kind, kind);
	if (kind != TIER_LACKEY_NONE) {
		assert_int_equal(a.addr, addr);
		assert_int_equal(a.sz_bytes, sz);
	}
}

static void parse_bad(const char *line, const char *msg)
{
	struct tier_lackey_access a;
	struct tier_err err = { "" };

	assert_int_equal(tier_lackey_parse_line(line, strlen(line), &a, &err), -EINVAL);
	assert_string_equal(err.msg, msg);
}

static void test_lackey_parse(void **state)
{
	(void)state;
	parse_ok("I  0401ab70,3", TIER_LACKEY_INSTR, 0x401ab70, 3);
	parse_ok(" L 1fff000628,8", TIER_LACKEY_LOAD, 0x1fff000628, 8);
	parse_ok(" S 04022e30,8\r", TIER_LACKEY_STORE, 0x4022e30, 8);
	parse_ok(" M 0421f5b0,4", TIER_LACKEY_MODIFY, 0x421f5b0, 4);
	parse_ok(" L ffffffffffffffff,1", TIER_LACKEY_LOAD, UINT64_MAX, 1);
	parse_ok(" L 10,0", TIER_LACKEY_LOAD, 0x10, 1);
	parse_ok("==21782== Lackey, an example Valgrind tool", TIER_LACKEY_NONE, 0, 0);
	parse_ok("--21782-- Reading syms from /usr/bin/true", TIER_LACKEY_NONE, 0, 0);
	parse_ok("", TIER_LACKEY_NONE, 0, 0);
	parse_bad("hello world", "not a lackey line (expected 'I', ' L', ' S', ' M' or '=='):"
		  " 'hello world'");
	parse_bad(" X 1000,4", "not a lackey line (expected 'I', ' L', ' S', ' M' or '=='):"
		  " ' X 1000,4'");
	parse_bad(" L1000,4", "expected a space after the access kind: ' L1000,4'");
	parse_bad(" L zz,4", "bad address (expected 1 to 16 hex digits): ' L zz,4'");
	parse_bad(" L 10000000000000000,4",
		  "bad address (expected 1 to 16 hex digits): ' L 10000000000000000,4'");
	parse_bad(" L 1000", "expected ',SIZE' after the address: ' L 1000'");
	parse_bad(" L 1000,", "bad size (expected 0 to 1048576): ' L 1000,'");
	parse_bad(" L 1000,99999999", "bad size (expected 0 to 1048576): ' L 1000,99999999'");
	parse_bad(" L 1000,4x", "unexpected text after the size: ' L 1000,4x'");
	parse_bad(" L ffffffffffffffff,2",
		  "access wraps past the top of the address space: ' L ffffffffffffffff,2'");
	parse_bad(" L 1000,4 and a very long tail that goes on and on",
		  "unexpected text after the size: ' L 1000,4 and a very long tail that goes...'");
}

struct import {
	struct tier_trace_writer *w;
	struct tier_lackey_importer *imp;
};

static void import_start(struct import *im, const char *path, const struct tier_lackey_opts *o)
{
	struct tier_err err = { "" };

	if (tier_trace_writer_new(path, 12, &im->w, &err) ||
	    tier_lackey_importer_new("in.txt", o, im->w, &im->imp, &err))
		fail_msg("%s", err.msg);
}

/* Feeds text in chunks of `chunk` bytes; returns the first error. */
static int import_feed(struct import *im, const char *text, size_t chunk, struct tier_err *err)
{
	size_t len = strlen(text), i, n;
	int rc;

	for (i = 0; i < len; i += n) {
		n = len - i < chunk ? len - i : chunk;
		rc = tier_lackey_importer_feed(im->imp, text + i, n, err);
		if (rc)
			return rc;
	}
	return tier_lackey_importer_finish(im->imp, err);
}

static void import_end(struct import *im)
{
	struct tier_err err = { "" };

	if (tier_trace_writer_finish(im->w, &err))
		fail_msg("%s", err.msg);
	tier_lackey_importer_destroy(im->imp);
	tier_trace_writer_destroy(im->w);
}

static const char sample[] =
	"==1== Lackey, an example Valgrind tool\n"
	"I  0401ab70,3\n"
	" L 7000,8\n"		/* vpage 7: id 0 */
	" S 1000,4\n"		/* vpage 1: id 1 */
	" M 7008,4\n"		/* id 0, a write */
	" L 1ffe,4\n"		/* spans vpages 1 and 2: ids 1, 2 */
	"I  0401ab73,5\n"
	"==1== \n"
	" L 2000,8";		/* no final newline: id 2 */

static const struct rec sample_recs[] = {
	{ 0, false, 0, 1 }, { 1, true, 0, 1 }, { 0, true, 0, 1 },
	{ 1, false, 0, 1 }, { 2, false, 0, 1 }, { 2, false, 0, 1 },
};

static void test_lackey_import(void **state)
{
	static const size_t chunks[] = { 1, 2, 7, 4096 };
	struct tmp *t = *state;
	struct tier_lackey_opts o;
	struct tier_trace_reader *r;
	struct tier_err err = { "" };
	const struct tier_lackey_stats *st;
	struct import im;
	size_t c;

	tier_lackey_opts_init(&o);
	for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		import_start(&im, t->path, &o);
		if (import_feed(&im, sample, chunks[c], &err))
			fail_msg("%s", err.msg);
		st = tier_lackey_importer_stats(im.imp);
		assert_int_equal(st->nr_lines, 9);
		assert_int_equal(st->nr_data_lines, 5);
		assert_int_equal(st->nr_instr_lines, 2);
		assert_int_equal(st->nr_ignored_lines, 2);
		assert_int_equal(st->nr_accesses, 6);
		assert_int_equal(st->nr_pages, 3);
		import_end(&im);
		if (tier_trace_reader_open(t->path, &r, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(tier_trace_reader_footprint_pages(r), 3);
		assert_int_equal(read_expect(r, sample_recs, 6, 4), 6);
		tier_trace_reader_destroy(r);
	}
}

static void test_lackey_instr(void **state)
{
	struct tmp *t = *state;
	struct tier_lackey_opts o;
	struct tier_err err = { "" };
	struct import im;

	tier_lackey_opts_init(&o);
	o.include_instr = true;
	import_start(&im, t->path, &o);
	if (import_feed(&im, sample, 64, &err))
		fail_msg("%s", err.msg);
	/* I 0401ab70 is page 0x401a, first touched: id 0. */
	assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_accesses, 8);
	assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_pages, 4);
	import_end(&im);
}

static void test_lackey_bad_lines(void **state)
{
	static const char text[] =
		"==1== hello\n"
		" L 1000,4\n"
		"program output mixed in\n"
		" L 2000,4\n"
		" Q 3000,4\n";
	struct tmp *t = *state;
	struct tier_lackey_opts o;
	struct tier_err err = { "" };
	struct import im;
	size_t chunk;

	tier_lackey_opts_init(&o);
	for (chunk = 1; chunk < 20; chunk += 9) {
		import_start(&im, t->path, &o);
		assert_int_equal(import_feed(&im, text, chunk, &err), -EINVAL);
		assert_string_equal(err.msg, "in.txt:3: not a lackey line (expected 'I', ' L', ' S',"
				    " ' M' or '=='): 'program output mixed in'");
		tier_lackey_importer_destroy(im.imp);
		tier_trace_writer_destroy(im.w);
	}
	o.skip_bad = true;
	import_start(&im, t->path, &o);
	if (import_feed(&im, text, 5, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_bad_lines, 2);
	assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_accesses, 2);
	assert_string_equal(tier_lackey_importer_stats(im.imp)->first_bad.msg,
			    "in.txt:3: not a lackey line (expected 'I', ' L', ' S', ' M' or '=='):"
			    " 'program output mixed in'");
	import_end(&im);
}

static void test_lackey_long_line(void **state)
{
	struct tmp *t = *state;
	struct tier_lackey_opts o;
	struct tier_err err = { "" };
	struct import im;
	char *text = malloc(3 * TIER_LACKEY_LINE_MAX_BYTES);
	size_t chunk;

	assert_non_null(text);
	strcpy(text, " L 1000,4\n");
	memset(text + 10, 'x', 2 * TIER_LACKEY_LINE_MAX_BYTES);
	strcpy(text + 10 + 2 * TIER_LACKEY_LINE_MAX_BYTES, "\n L 5000,4\n");
	tier_lackey_opts_init(&o);
	for (chunk = 100; chunk < 100000; chunk *= 30) {
		o.skip_bad = false;
		import_start(&im, t->path, &o);
		assert_int_equal(import_feed(&im, text, chunk, &err), -EINVAL);
		assert_string_equal(err.msg, "in.txt:2: line longer than 4096 bytes");
		tier_lackey_importer_destroy(im.imp);
		tier_trace_writer_destroy(im.w);
		o.skip_bad = true;
		import_start(&im, t->path, &o);
		if (import_feed(&im, text, chunk, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_lines, 3);
		assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_bad_lines, 1);
		assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_accesses, 2);
		import_end(&im);
	}
	free(text);
}

/* Imports n lines " L <page>000,8" of distinct pages with 1-in-every
 * sampling; returns the accesses kept and, in *first, the page of the
 * first kept line. */
static uint64_t sampled(const char *path, uint32_t every, uint64_t seed, uint64_t *first)
{
	struct tier_lackey_opts o;
	struct tier_err err = { "" };
	struct import im;
	char line[64];
	uint64_t i, kept, prev = 0;

	tier_lackey_opts_init(&o);
	o.sample_every = every;
	o.seed = seed;
	import_start(&im, path, &o);
	*first = UINT64_MAX;
	for (i = 0; i < 20000; i++) {
		snprintf(line, sizeof(line), " L %" PRIx64 "000,8\n", i + 1);
		if (tier_lackey_importer_feed(im.imp, line, strlen(line), &err))
			fail_msg("%s", err.msg);
		if (*first == UINT64_MAX && tier_lackey_importer_stats(im.imp)->nr_accesses > prev)
			*first = i;
		prev = tier_lackey_importer_stats(im.imp)->nr_accesses;
	}
	kept = tier_lackey_importer_stats(im.imp)->nr_accesses;
	assert_int_equal(kept + tier_lackey_importer_stats(im.imp)->nr_sampled_out, 20000);
	/* Dense ids: the footprint is the sampled pages only. */
	assert_int_equal(tier_lackey_importer_stats(im.imp)->nr_pages, kept);
	import_end(&im);
	return kept;
}

static void test_lackey_sampling(void **state)
{
	struct tmp *t = *state;
	uint64_t a, b, c, fa, fb, fc;

	a = sampled(t->path, 10, 1, &fa);
	b = sampled(t->path, 10, 1, &fb);
	c = sampled(t->path, 10, 2, &fc);
	assert_int_equal(a, b);			/* deterministic */
	assert_int_equal(fa, fb);
	assert_true(a > 1700 && a < 2300);	/* 2000 expected; 7 sigma is ~300 */
	assert_true(c > 1700 && c < 2300);
	assert_true(a != c || fa != fc);	/* the seed matters */
	assert_int_equal(sampled(t->path, 1, 1, &fa), 20000);
	assert_int_equal(fa, 0);
}

static void test_lackey_convert_fixture(void **state)
{
	struct tmp *t = *state;
	struct tier_lackey_opts o;
	struct tier_lackey_stats st;
	struct tier_trace_reader *r;
	struct tier_sim_access buf[512];
	struct tier_err err = { "" };
	uint64_t total = 0, writes = 0;
	char in[160];
	FILE *f;
	long k, i;

	tier_lackey_opts_init(&o);
	if (tier_lackey_convert(FIXTURE, t->path, &o, &st, &err))
		fail_msg("%s", err.msg);
	/* Counts in tests/fixtures/lackey/README.md. */
	assert_int_equal(st.nr_bad_lines, 0);
	assert_int_equal(st.nr_lines, 9025);
	assert_int_equal(st.nr_data_lines, 1881 + 970 + 76);
	assert_int_equal(st.nr_instr_lines, 6073);
	assert_int_equal(st.nr_ignored_lines, 25);
	assert_int_equal(st.nr_accesses, 2927);
	assert_int_equal(st.nr_pages, 41);
	if (tier_trace_reader_open(t->path, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(tier_trace_reader_nr_accesses(r), st.nr_accesses);
	assert_int_equal(tier_trace_reader_footprint_pages(r), st.nr_pages);
	while ((k = tier_trace_reader_next(r, buf, 512, &err)) > 0) {
		for (i = 0; i < k; i++)
			writes += buf[i].write;
		total += (uint64_t)k;
	}
	assert_int_equal(k, 0);
	assert_int_equal(total, st.nr_accesses);
	assert_int_equal(writes, 1046);	/* S and M */
	tier_trace_reader_destroy(r);
	o.include_instr = true;
	if (tier_lackey_convert(FIXTURE, t->path, &o, &st, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(st.nr_accesses, 9011);	/* 11 fetches cross a page */
	assert_int_equal(st.nr_pages, 84);
	o.include_instr = false;

	/* A malformed line in the middle of a real trace. */
	snprintf(in, sizeof(in), "%s/in.txt", t->dir);
	f = fopen(in, "w");
	assert_non_null(f);
	fputs(" L 1000,4\n L 2000,4\nSegmentation fault\n", f);
	fclose(f);
	assert_int_equal(tier_lackey_convert(in, t->path, &o, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "/in.txt:3: not a lackey line"));
	assert_int_equal(access(t->path, F_OK), -1);	/* no half output */
	/* Only valgrind's messages: nothing to import. */
	f = fopen(in, "w");
	assert_non_null(f);
	fputs("==5== Lackey\n==5== Exit code: 0\n", f);
	fclose(f);
	assert_int_equal(tier_lackey_convert(in, t->path, &o, &st, &err), -ENODATA);
	assert_non_null(strstr(err.msg, "no memory accesses found"));
	/* Output over input is refused before the input is harmed. */
	assert_int_equal(tier_lackey_convert(in, in, &o, &st, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "input and output are the same file"));
	assert_int_equal(access(in, F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_large, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_empty_trace, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_writer_rejects, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_layout, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_truncated, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_bad_magic_and_version, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_record, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_mem_reader, tmp_setup, tmp_teardown),
		cmocka_unit_test(test_lackey_parse),
		cmocka_unit_test_setup_teardown(test_lackey_import, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_lackey_instr, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_lackey_bad_lines, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_lackey_long_line, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_lackey_sampling, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_lackey_convert_fixture, tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
