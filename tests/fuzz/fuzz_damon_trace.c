/* fuzz_damon_trace.c - fuzz target of the DAMON tracker's tracepoint path
 * (kernels 5.18-6.1): the damon:damon_aggregated line parser and the
 * trace_pipe reader that feeds it (backend/linux/damon_trace.h,
 * damon_collect.c; libFuzzer ABI).
 *
 * Each input is what trace_pipe holds. Every line goes through
 * tier__damon_parse_trace_line(): -ENOENT, -EINVAL, or a record whose
 * region is not empty and that formats back to a line giving the same
 * record. Then the input goes through a pipe to the tracker's collect, in
 * one write and again in short writes with a drain after each (so that
 * reads cut lines anywhere): both must emit exactly the observations the
 * lines say, in order - one per whole line of at most 1023 bytes that
 * parses, comes from the tracker's kdamond and names one of its targets,
 * with the count capped at aggregation / sample interval.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/damon_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A line the tracker keeps: shorter than its carry buffer. */
#define LINE_MAX_BYTES (sizeof(((struct tier__damon_trace *)0)->carry) - 1)
#define MAX_OBS 8192

static int pipe_fd[2] = { -1, -1 };
static pid_t pids[] = { 100, 200, 300 };

struct seen {
	struct tier_linux_addr_obs obs[MAX_OBS];
	size_t n;
};

static struct seen want, got;

static void must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_damon_trace: invariant broken: %s\n", what);
		abort();
	}
}

static void sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct seen *s = ctx;
	size_t i;

	for (i = 0; i < n && s->n < MAX_OBS; i++)
		s->obs[s->n++] = obs[i];
}

/* The record formatted as the kernel prints it, parsed again. */
static void check_round_trip(const struct tier__damon_trace_rec *rec)
{
	struct tier__damon_trace_rec again;
	char line[512], age[32] = "";

	if (rec->has_age)
		snprintf(age, sizeof(age), " %u", rec->age);
	snprintf(line, sizeof(line),
		 "  kdamond.0-%d [001] ..... 1.5: damon_aggregated: target_id=%lu "
		 "nr_regions=%u %" PRIu64 "-%" PRIu64 ": %u%s", rec->task_pid > 0 ? rec->task_pid : 0,
		 rec->target_id, rec->nr_regions, rec->start, rec->end, rec->nr_accesses, age);
	must(tier__damon_parse_trace_line(line, &again) == 0, "a record formats to a line that parses");
	must(again.target_id == rec->target_id && again.nr_regions == rec->nr_regions &&
	     again.start == rec->start && again.end == rec->end &&
	     again.nr_accesses == rec->nr_accesses && again.has_age == rec->has_age &&
	     again.age == rec->age, "the same record back");
	must(again.task_pid == (rec->task_pid > 0 ? rec->task_pid : 0), "the same task back");
}

/* The observations the lines of data say, into want. */
static void expect(const struct tier__damon_tracker *t, const uint8_t *data, size_t size)
{
	uint32_t max = (uint32_t)(t->aggr_us / t->sample_us);
	char line[LINE_MAX_BYTES + 1];
	size_t at = 0;

	want.n = 0;
	while (at < size) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		struct tier__damon_trace_rec rec;
		int rc;

		if (!nl)
			break;		/* a cut line waits for its end */
		at += len + 1;
		if (len > LINE_MAX_BYTES)
			continue;	/* over-long: dropped */
		memcpy(line, data + at - len - 1, len);
		line[len] = '\0';
		rc = tier__damon_parse_trace_line(line, &rec);
		must(rc == 0 || rc == -ENOENT || rc == -EINVAL, "parse: 0, -ENOENT or -EINVAL");
		if (rc)
			continue;
		must(rec.start < rec.end, "parse: a region that is not empty");
		check_round_trip(&rec);
		if (t->kdamond_pid > 0 && rec.task_pid > 0 && rec.task_pid != t->kdamond_pid)
			continue;
		if (rec.target_id >= t->nr_pids || want.n == MAX_OBS)
			continue;
		want.obs[want.n++] = (struct tier_linux_addr_obs){
			.pid = t->pids[rec.target_id], .start = rec.start, .end = rec.end,
			.kind = TIER_OBS_ACCESSED,
			.count = rec.nr_accesses > max ? max : rec.nr_accesses,
			.max = max, .interval_us = (uint32_t)t->aggr_us,
		};
	}
}

static void collect(struct tier__damon_tracker *t, const uint8_t *data, size_t size, size_t chunk)
{
	struct tier__obs_batch b;
	size_t at = 0;

	got.n = 0;
	tier__damon_trace_init(&t->trace);
	t->trace.pipe_fd = pipe_fd[0];
	tier__batch_init(&b, sink, &got);
	while (at < size) {
		size_t n = size - at < chunk ? size - at : chunk;

		must(write(pipe_fd[1], data + at, n) == (ssize_t)n, "write to the pipe");
		at += n;
		tier__damon_collect_trace(t, &b);
	}
	tier__batch_flush(&b);
}

static void compare(const char *how)
{
	size_t i;

	if (got.n != want.n) {
		fprintf(stderr, "fuzz_damon_trace: %s: %zu observations, expected %zu\n", how,
			got.n, want.n);
		abort();
	}
	for (i = 0; i < got.n; i++) {
		const struct tier_linux_addr_obs *g = &got.obs[i], *w = &want.obs[i];

		must(g->pid == w->pid && g->start == w->start && g->end == w->end &&
		     g->kind == w->kind && g->count == w->count && g->max == w->max &&
		     g->interval_us == w->interval_us, "the observations the lines say");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tier__damon_tracker t;

	if (pipe_fd[0] < 0) {
		must(pipe2(pipe_fd, O_NONBLOCK | O_CLOEXEC) == 0, "pipe");
		fcntl(pipe_fd[1], F_SETPIPE_SZ, 1 << 20);
	}
	memset(&t, 0, sizeof(t));
	t.pids = pids;
	t.nr_pids = 1 + size % 3;
	t.kdamond_pid = size & 4 ? 179 : 0;
	t.sample_us = 5000;
	t.aggr_us = 100000;
	expect(&t, data, size);
	/* In writes of up to 32 KiB (the pipe holds 64 KiB at least). */
	collect(&t, data, size, 32768);
	compare("one write");
	collect(&t, data, size, 1 + size % 61);
	compare("short writes");
	return 0;
}
