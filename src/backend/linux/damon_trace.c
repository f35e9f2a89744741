/* damon_trace.c - the damon:damon_aggregated tracepoint: DAMON's regions
 * on kernels 5.18-6.1, which have the sysfs interface but no
 * tried_regions.
 *
 * The tracker reads the tracepoint from its own tracefs instance
 * (instances/tierd-damon-K, so other tracers are undisturbed); the caller
 * keeps the events of its own kdamond (by the task pid in each line).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/damon_trace.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker_util.h"

#define DAMON_EVENT	" damon_aggregated: "

/* ---- the line parser ---------------------------------------------------- */

/* The task that emitted the event at ev: "<comm>-<pid>" before the
 * " [CPU]" column; comm may hold spaces and dashes, so take the first
 * " [digits]" and the last dash before it. 0 when there is none. */
static pid_t parse_task_pid(const char *line, const char *ev)
{
	const char *p, *cpu = NULL, *dash = NULL;
	unsigned long tid;
	char *e;

	for (p = line; p < ev; p++) {
		if (p[0] == ' ' && p[1] == '[' && isdigit((unsigned char)p[2])) {
			const char *q = p + 2;

			while (isdigit((unsigned char)*q))
				q++;
			if (*q == ']') {
				cpu = p;
				break;
			}
		}
	}
	if (!cpu)
		return 0;
	for (p = line; p < cpu; p++)
		if (*p == '-')
			dash = p;
	if (!dash)
		return 0;
	errno = 0;
	tid = strtoul(dash + 1, &e, 10);
	if (!errno && e > dash + 1 && (*e == ' ' || e == cpu))
		return (pid_t)tid;
	return 0;
}

int tier__damon_parse_trace_line(const char *line, struct tier__damon_trace_rec *rec)
{
	unsigned long tid, nr_regions, start, end, nr_acc, age;
	const char *ev, *p;
	char *e;

	memset(rec, 0, sizeof(*rec));
	ev = strstr(line, DAMON_EVENT);
	if (!ev)
		return -ENOENT;
	rec->task_pid = parse_task_pid(line, ev);
	p = ev + strlen(DAMON_EVENT);
	if (strncmp(p, "target_id=", 10))
		return -EINVAL;
	errno = 0;
	tid = strtoul(p + 10, &e, 10);
	if (errno || e == p + 10 || strncmp(e, " nr_regions=", 12))
		return -EINVAL;
	p = e + 12;
	nr_regions = strtoul(p, &e, 10);
	if (errno || e == p || *e != ' ')
		return -EINVAL;
	p = e + 1;
	start = strtoul(p, &e, 10);
	if (errno || e == p || *e != '-')
		return -EINVAL;
	p = e + 1;
	end = strtoul(p, &e, 10);
	if (errno || e == p || strncmp(e, ": ", 2))
		return -EINVAL;
	p = e + 2;
	nr_acc = strtoul(p, &e, 10);
	if (errno || e == p || nr_acc > UINT32_MAX)
		return -EINVAL;
	rec->has_age = false;
	if (*e == ' ' && isdigit((unsigned char)e[1])) {
		p = e + 1;
		age = strtoul(p, &e, 10);
		if (errno || age > UINT32_MAX)
			return -EINVAL;
		rec->age = (unsigned)age;
		rec->has_age = true;
	}
	while (*e == ' ' || *e == '\n' || *e == '\r')
		e++;
	if (*e || end <= start || nr_regions > UINT32_MAX)
		return -EINVAL;
	rec->target_id = tid;
	rec->nr_regions = (unsigned)nr_regions;
	rec->start = start;
	rec->end = end;
	rec->nr_accesses = (unsigned)nr_acc;
	return 0;
}

/* ---- the instance ------------------------------------------------------- */

void tier__damon_trace_init(struct tier__damon_trace *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->pipe_fd = -1;
}

/* True when root/rel is a tracefs with instances; dir[sz] gets root/rel. */
static bool tracefs_at(char *dir, size_t sz, const char *root, const char *rel)
{
	char path[1024];

	return !tier_sysfs_path(dir, sz, root, "%s", rel) &&
	       !tier_sysfs_path(path, sizeof(path), dir, "instances") &&
	       tier_sysfs_exists(path);
}

int tier__damon_trace_open(struct tier__damon_trace *tr, struct tier__damon_sysfs *fs,
			   const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	char path[1024], inst[600];
	int ret;

	/* tracefs: /sys/kernel/tracing (4.1+), else under debugfs. */
	if (!tracefs_at(fs->tracing, sizeof(fs->tracing), ctx->sysfs_root, "kernel/tracing") &&
	    !(ctx->debugfs_root &&
	      tracefs_at(fs->tracing, sizeof(fs->tracing), ctx->debugfs_root, "tracing")))
		return tier_err_set(err, -ENOENT, "DAMON: no tried_regions (kernel older "
				    "than 6.2) and no tracefs instances directory for the "
				    "damon_aggregated tracepoint (mount tracefs on "
				    "/sys/kernel/tracing)");
	snprintf(tr->instance, sizeof(tr->instance), "tierd-damon-%u", fs->kdamond);
	snprintf(inst, sizeof(inst), "%s/instances/%s", fs->tracing, tr->instance);
	if (mkdir(inst, 0700) && errno != EEXIST) {
		ret = -errno;
		return tier_err_set(err, ret, "DAMON: creating trace instance %s: %s", inst,
				    strerror(-ret));
	}
	snprintf(path, sizeof(path), "%s/events/damon/damon_aggregated/enable", inst);
	if (!tier_sysfs_exists(path)) {
		rmdir(inst);
		return tier_err_set(err, -ENOENT,
				    "DAMON: no tried_regions (kernel older than 6.2) and no "
				    "damon:damon_aggregated tracepoint (%s missing)", path);
	}
	ret = tier__damon_sysfs_writef(fs, "1", err,
				       "tracing/instances/%s/events/damon/damon_aggregated/enable",
				       tr->instance);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/trace_pipe", inst);
	tr->pipe_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (tr->pipe_fd < 0) {
		ret = -errno;
		return tier_err_set(err, ret, "DAMON: %s: %s", path, strerror(-ret));
	}
	return 0;
}

void tier__damon_trace_close(struct tier__damon_trace *tr, const struct tier__damon_sysfs *fs)
{
	char inst[600];

	if (tr->pipe_fd >= 0)
		close(tr->pipe_fd);
	tr->pipe_fd = -1;
	if (!tr->instance[0])
		return;
	tier__damon_sysfs_writef(fs, "0", NULL,
				 "tracing/instances/%s/events/damon/damon_aggregated/enable",
				 tr->instance);
	snprintf(inst, sizeof(inst), "%s/instances/%s", fs->tracing, tr->instance);
	rmdir(inst);
	tr->instance[0] = '\0';
}

/* ---- reading the pipe --------------------------------------------------- */

/* Splits the n bytes just read into lines, the first one continuing the
 * carried part, and keeps what follows the last newline. */
static void trace_feed(struct tier__damon_trace *tr, const char *buf, size_t n,
		       void (*fn)(void *arg, const char *line), void *arg)
{
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		if (buf[i] != '\n')
			continue;
		if (tr->carry_len + (i - from) < sizeof(tr->carry)) {
			memcpy(tr->carry + tr->carry_len, buf + from, i - from);
			tr->carry_len += i - from;
			tr->carry[tr->carry_len] = '\0';
			if (fn)
				fn(arg, tr->carry);
		}
		tr->carry_len = 0;
		from = i + 1;
	}
	if (from < n) {
		size_t rest = n - from;

		if (tr->carry_len + rest < sizeof(tr->carry)) {
			memcpy(tr->carry + tr->carry_len, buf + from, rest);
			tr->carry_len += rest;
		} else {
			tr->carry_len = sizeof(tr->carry);	/* over-long: dropped */
		}
	}
}

void tier__damon_trace_drain(struct tier__damon_trace *tr,
			     void (*fn)(void *arg, const char *line), void *arg)
{
	char buf[8192];

	if (tr->pipe_fd < 0)
		return;
	for (;;) {
		ssize_t n = read(tr->pipe_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		trace_feed(tr, buf, (size_t)n, fn, arg);
	}
}
