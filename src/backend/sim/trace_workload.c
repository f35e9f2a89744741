/* trace_workload.c - the trace:FILE workload: replays a recorded trace
 * (docs/trace-format.md) through the streaming reader. */
#include <errno.h>

#include "backend/sim/trace.h"
#include "backend/sim/workload.h"

static int trace_create(const struct tier_sim_workload_params *p, void **priv,
			struct tier_err *err)
{
	struct tier_trace_reader *r;
	int ret;

	if (!p->arg || !p->arg[0])
		return tier_err_set(err, -EINVAL, "trace: needs a file (trace:FILE)");
	ret = tier_trace_reader_open(p->arg, &r, err);
	if (ret)
		return ret;
	*priv = r;
	return 0;
}

static void trace_destroy(void *priv)
{
	tier_trace_reader_destroy(priv);
}

static uint64_t trace_footprint(void *priv)
{
	return tier_trace_reader_footprint_pages(priv);
}

static long trace_next(void *priv, uint64_t now_us, struct tier_sim_access *buf, size_t n,
		       struct tier_err *err)
{
	(void)now_us;
	return tier_trace_reader_next(priv, buf, n, err);
}

static int trace_rewind(void *priv, struct tier_err *err)
{
	int ret = tier_trace_reader_rewind(priv);

	return ret ? tier_err_set(err, ret, "trace: cannot rewind") : 0;
}

static const struct tier_sim_workload_ops trace_ops = {
	.name = "trace",
	.description = "replay a recorded trace: trace:FILE",
	.own_footprint = true,
	.create = trace_create,
	.destroy = trace_destroy,
	.footprint_pages = trace_footprint,
	.next = trace_next,
	.rewind = trace_rewind,
};

const struct tier_sim_workload_ops *tier_sim_workload_trace_ops(void)
{
	return &trace_ops;
}
