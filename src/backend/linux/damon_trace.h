/* damon_trace.h - DAMON's regions through the damon:damon_aggregated
 * tracepoint, for kernels (5.18-6.1) whose sysfs interface has no
 * tried_regions. Internal to the DAMON tracker; the line parser,
 * tier__damon_parse_trace_line, is declared in tracker_util.h for tests.
 */
#ifndef TIER_LINUX_DAMON_TRACE_H
#define TIER_LINUX_DAMON_TRACE_H

#include <stddef.h>

#include "backend/linux/damon_sysfs.h"
#include "backend/linux/tracker.h"
#include "core/err.h"

/* The tracker's own tracefs instance. Caller-owned storage. */
struct tier__damon_trace {
	char instance[64];		/* "tierd-damon-K" under instances/, "" none */
	int pipe_fd;			/* its trace_pipe, -1 when closed */
	char carry[1024];		/* the start of a line a read cut short */
	size_t carry_len;
};

/* Sets up tr with no instance and no pipe. */
void tier__damon_trace_init(struct tier__damon_trace *tr);

/* Finds tracefs (<sysfs>/kernel/tracing, else <debugfs>/tracing: the one
 * with an instances directory) and stores it in fs->tracing, makes the
 * instance tierd-damon-<fs->kdamond> there (so other tracers are
 * undisturbed), enables damon:damon_aggregated in it and opens its
 * trace_pipe (non-blocking). Returns 0 or -errno (-ENOENT: no tracefs or
 * no such tracepoint). After a failure, tier__damon_trace_close removes
 * what was made. */
int tier__damon_trace_open(struct tier__damon_trace *tr, struct tier__damon_sysfs *fs,
			   const struct tier_linux_ctx *ctx, struct tier_err *err);

/* Closes the pipe, disables the event and removes the instance. */
void tier__damon_trace_close(struct tier__damon_trace *tr, const struct tier__damon_sysfs *fs);

/* Reads what the pipe holds now and hands each whole line (without its
 * newline) to fn; fn may be NULL to discard them. A line cut by a read is
 * kept for the next; a line longer than the carry buffer is dropped. */
void tier__damon_trace_drain(struct tier__damon_trace *tr,
			     void (*fn)(void *arg, const char *line), void *arg);

#endif
