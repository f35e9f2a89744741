/* trace_workload.c - the trace:FILE workload: replays a recorded trace
 * (docs/trace-format.md) through the streaming reader, and counts the
 * accesses ahead of the replay for the oracle with a second reader. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/trace.h"
#include "backend/sim/workload.h"

enum { AHEAD_BATCH = 1024 };

struct trace_wl {
	struct tier_trace_reader *r;	/* the replay */
	uint64_t pos;			/* accesses r has returned */
	/* The oracle's look-ahead (opened at its first use): at ahead_pos. */
	char *path;
	struct tier_trace_reader *ahead;
	uint64_t ahead_pos;
	struct tier_sim_access *buf;	/* [AHEAD_BATCH] */
};

static void trace_destroy(void *priv)
{
	struct trace_wl *t = priv;

	tier_trace_reader_destroy(t->r);
	tier_trace_reader_destroy(t->ahead);
	free(t->path);
	free(t->buf);
	free(t);
}

static int trace_create(const struct tier_sim_workload_params *p, void **priv,
			struct tier_err *err)
{
	struct trace_wl *t;
	int ret;

	if (!p->arg || !p->arg[0])
		return tier_err_set(err, -EINVAL, "trace: needs a file (trace:FILE)");
	t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(p->arg))) {
		free(t);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	ret = tier_trace_reader_open(p->arg, &t->r, err);
	if (ret) {
		trace_destroy(t);
		return ret;
	}
	*priv = t;
	return 0;
}

static uint64_t trace_footprint(void *priv)
{
	return tier_trace_reader_footprint_pages(((struct trace_wl *)priv)->r);
}

static long trace_next(void *priv, uint64_t now_us, struct tier_sim_access *buf, size_t n,
		       struct tier_err *err)
{
	struct trace_wl *t = priv;
	long got = tier_trace_reader_next(t->r, buf, n, err);

	(void)now_us;
	if (got > 0)
		t->pos += (uint64_t)got;
	return got;
}

/* Reads up to nr accesses with the look-ahead reader; with w, counts them
 * per page. Returns the number read or -errno. */
static long ahead_read(struct trace_wl *t, uint64_t nr, double *w, struct tier_err *err)
{
	uint64_t done = 0;

	while (done < nr) {
		size_t want = nr - done < AHEAD_BATCH ? (size_t)(nr - done) : AHEAD_BATCH;
		long got = tier_trace_reader_next(t->ahead, t->buf, want, err);
		long i;

		if (got < 0)
			return got;
		if (got == 0)
			break;
		for (i = 0; w && i < got; i++)
			w[t->buf[i].page] += 1;
		done += (uint64_t)got;
		t->ahead_pos += (uint64_t)got;
	}
	return (long)done;
}

static long trace_counts_ahead(void *priv, uint64_t nr, double *w, struct tier_err *err)
{
	struct trace_wl *t = priv;
	long ret;

	if (!t->ahead) {
		t->buf = malloc(AHEAD_BATCH * sizeof(*t->buf));
		if (!t->buf)
			return tier_err_set(err, -ENOMEM, "out of memory");
		ret = tier_trace_reader_open(t->path, &t->ahead, err);
		if (ret)
			return ret;
	}
	/* Bring the look-ahead to where the replay is: usually already there
	 * (it counted the epoch the replay just ran). */
	if (t->ahead_pos > t->pos) {
		tier_trace_reader_rewind(t->ahead);
		t->ahead_pos = 0;
	}
	if (t->ahead_pos < t->pos) {
		ret = ahead_read(t, t->pos - t->ahead_pos, NULL, err);
		if (ret < 0)
			return ret;
	}
	return ahead_read(t, nr, w, err);
}

static const struct tier_sim_workload_ops trace_ops = {
	.name = "trace",
	.description = "replay a recorded trace: trace:FILE",
	.own_footprint = true,
	.create = trace_create,
	.destroy = trace_destroy,
	.footprint_pages = trace_footprint,
	.next = trace_next,
	.counts_ahead = trace_counts_ahead,
};

const struct tier_sim_workload_ops *tier_sim_workload_trace_ops(void)
{
	return &trace_ops;
}
