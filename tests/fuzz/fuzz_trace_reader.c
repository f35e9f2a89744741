/* fuzz_trace_reader.c - fuzz target of the trace reader (libFuzzer ABI).
 *
 * Each input is read as a trace file twice: once with the reader's whole
 * buffer and large batches, once with short refills (1 to 31 bytes) and
 * small, varying batches. Both must agree access for access and fail, if at
 * all, with the same message; every access must lie inside the header's
 * footprint and tenants, and a trace read to its end must hold exactly the
 * header's number of accesses. Reading stops after MAX_ACCESSES so that a
 * valid header promising 2^60 repeats does not stall the fuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ACCESSES = 1 << 16, BATCH = 1024 };

struct outcome {
	int open_rc;
	long last_rc;		/* 0 = end reached, < 0 = error, 1 = cap hit */
	uint64_t nr;		/* accesses read */
	uint64_t hash;		/* of the accesses, in order */
	char msg[sizeof(((struct tier_err *)0)->msg)];
};

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_trace_reader: invariant broken: %s\n", what);
		abort();
	}
}

static void read_all(const uint8_t *data, size_t size, size_t read_max, bool small_batches,
		     struct outcome *o)
{
	static const size_t batches[] = { 1, 3, 64, 7, 1000, 2 };
	struct tier_sim_access buf[BATCH];
	struct tier_trace_reader *r;
	struct tier_err err = { "" };
	uint64_t footprint, nr_tenants, nr_accesses;
	size_t round = 0;
	long k, i;

	memset(o, 0, sizeof(*o));
	o->hash = 1469598103934665603ull;
	o->open_rc = tier_trace_reader_open_mem(data, size, "fuzz", &r, &err);
	if (o->open_rc) {
		must(o->open_rc < 0 && err.msg[0], "open fails with a message");
		must(!r, "no reader after a failed open");
		snprintf(o->msg, sizeof(o->msg), "%s", err.msg);
		return;
	}
	if (read_max)
		tier__trace_reader_set_read_max(r, read_max);
	footprint = tier_trace_reader_footprint_pages(r);
	nr_tenants = tier_trace_reader_nr_tenants(r);
	nr_accesses = tier_trace_reader_nr_accesses(r);
	for (;;) {
		size_t n = small_batches ? batches[round++ % 6] : BATCH;

		k = tier_trace_reader_next(r, buf, n, &err);
		if (k <= 0) {
			o->last_rc = k;
			if (k < 0) {
				must(err.msg[0] != '\0', "errors come with a message");
				snprintf(o->msg, sizeof(o->msg), "%s", err.msg);
			} else {
				must(o->nr == nr_accesses, "a full read yields the header's count");
			}
			break;
		}
		must((size_t)k <= n, "no more than asked");
		for (i = 0; i < k; i++) {
			must(buf[i].page < footprint, "pages inside the footprint");
			must(buf[i].tenant < nr_tenants, "tenants inside the header's count");
			must(buf[i].write <= 1, "write is 0 or 1");
			o->hash = (o->hash ^ (buf[i].page * 4 + buf[i].write * 2)) * 1099511628211ull;
			o->hash = (o->hash ^ buf[i].tenant) * 1099511628211ull;
		}
		o->nr += (uint64_t)k;
		must(o->nr <= nr_accesses, "no more accesses than the header says");
		if (o->nr >= MAX_ACCESSES) {
			o->last_rc = 1;
			break;
		}
	}
	/* An error sticks until a rewind. */
	if (o->last_rc < 0)
		must(tier_trace_reader_next(r, buf, 1, NULL) == o->last_rc, "errors stick");
	must(tier_trace_reader_rewind(r) == 0, "rewind");
	k = tier_trace_reader_next(r, buf, 1, NULL);
	must(k != 0 || nr_accesses == 0, "rewind starts over");
	tier_trace_reader_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome a, b;

	read_all(data, size, 0, false, &a);
	read_all(data, size, 1 + size % 31, true, &b);
	/* The cap can cut the two runs at different points inside a repeat. */
	if (a.last_rc == 1 || b.last_rc == 1)
		return 0;
	must(a.open_rc == b.open_rc, "same open result");
	must(a.last_rc == b.last_rc, "same end");
	/* A failing batch is void, so the counts agree only on success. */
	if (!a.last_rc)
		must(a.nr == b.nr && a.hash == b.hash, "same accesses whatever the refill size");
	must(!strcmp(a.msg, b.msg), "same message whatever the refill size");
	return 0;
}
