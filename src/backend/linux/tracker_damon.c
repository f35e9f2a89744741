/* tracker_damon.c - DAMON through its sysfs interface, monitoring the
 * virtual address spaces of the target processes: the tracker's ops.
 *
 * The tracker takes a kdamond of its own (damon_kdamond.c): one vaddr
 * context with a target per process and "stat" schemes, whose
 * tried_regions snapshots collect() turns into observations
 * (damon_collect.c). Kernels 5.18-6.1 have the sysfs interface but no
 * tried_regions: there the tracker reads the damon:damon_aggregated
 * tracepoint from its own tracefs instance (damon_trace.c). Every control
 * file is read and written through damon_sysfs.c, which retries the
 * writes the kernel answers with EBUSY.
 *
 * A kdamond whose target processes all exited stops by itself: collect()
 * then reports nothing and the next set_targets() starts it again.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/damon_impl.h"
#include "backend/linux/damon_modules.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define DAMON_ADMIN		"kernel/mm/damon/admin"

/* ---- probe -------------------------------------------------------------- */

static int damon_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	char admin[512], path[1024], buf[256];
	const char *holder;
	uint64_t nr = 0;
	unsigned i;

	if (tier_sysfs_path(admin, sizeof(admin), ctx->sysfs_root, DAMON_ADMIN))
		return tier_err_set(err, -ENAMETOOLONG, "DAMON: sysfs root too long");
	if (!tier_sysfs_exists(admin))
		return tier_err_set(err, -ENOENT,
				    "DAMON: %s missing (kernel without CONFIG_DAMON_SYSFS, or "
				    "older than 5.18)", admin);
	snprintf(path, sizeof(path), "%s/kdamonds/nr_kdamonds", admin);
	if (access(path, W_OK))
		return tier_err_set(err, -EACCES, "DAMON: %s not writable (%s; run as root)",
				    path, strerror(errno));
	holder = tier_linux_damon_exclusive_holder(ctx);
	if (holder) {
		tier_sysfs_path(path, sizeof(path), ctx->sysfs_root,
				"module/%s/parameters/enabled", holder);
		return tier_err_set(err, -EBUSY,
				    "DAMON: %s is enabled and runs DAMON exclusively, so no "
				    "other kdamond can start (write N to %s, or boot with "
				    "%s.enabled=N)", holder, path, holder);
	}
	/* avail_operations lives in a context directory: check one that
	 * exists already; create() checks its own. */
	snprintf(path, sizeof(path), "%s/kdamonds/nr_kdamonds", admin);
	if (tier_sysfs_read_u64(path, &nr, NULL))
		nr = 0;
	for (i = 0; i < nr && i < 64; i++) {
		snprintf(path, sizeof(path), "%s/kdamonds/%u/contexts/0/avail_operations",
			 admin, i);
		if (tier_sysfs_read(path, buf, sizeof(buf), NULL) < 0)
			continue;
		if (!strstr(buf, "vaddr"))
			return tier_err_set(err, -EOPNOTSUPP,
					    "DAMON: no vaddr operations in %s (kernel without "
					    "CONFIG_DAMON_VADDR)", path);
		break;
	}
	return 0;
}

/* ---- create / destroy --------------------------------------------------- */

static void damon_destroy(void *priv)
{
	struct tier__damon_tracker *t = priv;

	if (!t)
		return;
	tier__damon_ahead_release(t);
	if (t->fs.admin[0])
		tier__damon_kdamond_stop(t, NULL);
	if (t->tracepoint)
		tier__damon_trace_close(&t->trace, &t->fs);
	tier__damon_kdamond_give_back(t);
	free(t->pids);
	tier__damon_collect_release(t);
	tier__roots_release(&t->roots);
	free(t);
}

int tier__damon_create(const struct tier_linux_ctx *ctx, uint64_t interval_us,
		       const struct tier__damon_hooks *hooks, void **priv,
		       struct tier_err *err)
{
	struct tier__damon_tracker *t;
	int ret;

	*priv = NULL;
	ret = damon_probe(ctx, err);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return tier_err_set(err, -ENOMEM, "DAMON: out of memory");
	tier__damon_trace_init(&t->trace);
	if (hooks)
		t->fs.hooks = *hooks;
	t->wait = ctx->wait;
	t->wait_arg = ctx->wait_arg;
	if (tier__roots_init(&t->roots, ctx)) {
		ret = tier_err_set(err, -ENOMEM, "DAMON: out of memory");
		goto out_free;
	}
	tier_sysfs_path(t->fs.admin, sizeof(t->fs.admin), ctx->sysfs_root, DAMON_ADMIN);
	ret = tier__damon_kdamond_take(t, err);
	if (ret && t->grew)
		goto out_destroy;	/* gives the added kdamond back */
	if (ret)
		goto out_free;
	ret = tier__damon_kdamond_setup(t, interval_us, err);
	if (ret)
		goto out_destroy;
	if (t->tracepoint) {
		ret = tier__damon_trace_open(&t->trace, &t->fs, ctx, err);
		if (ret)
			goto out_destroy;
	}
	*priv = t;
	return 0;
out_destroy:
	damon_destroy(t);
	return ret;
out_free:
	tier__roots_release(&t->roots);
	free(t);
	return ret;
}

static int damon_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
			struct tier_err *err)
{
	return tier__damon_create(ctx, interval_us, NULL, priv, err);
}

static bool damon_kdamond(void *priv, unsigned *index, pid_t *pid)
{
	const struct tier__damon_tracker *t = priv;

	*index = t->fs.kdamond;
	if (!t->running || t->kdamond_pid <= 0)
		return false;
	*pid = t->kdamond_pid;
	return true;
}

void tier__damon_info(void *priv, struct tier__damon_info *out)
{
	const struct tier__damon_tracker *t = priv;

	out->kdamond = t->fs.kdamond;
	out->grew = t->grew;
	out->tracepoint = t->tracepoint;
	out->per_target_schemes = t->per_target;
	out->sample_us = t->sample_us;
	out->aggr_us = t->aggr_us;
	out->update_us = t->update_us;
	out->empty_snapshots = t->empty_snapshots;
	out->kdamond_cpu_percent = t->share_percent;
	out->interval_changes = t->interval_changes;
	out->max_regions = t->max_regions;
}

/* ---- targets ------------------------------------------------------------ */

/* Makes t's targets the live ones of pids[0, n) (duplicates dropped).
 * Returns 1 when they changed, 0 when not, or -ENOMEM. */
static int keep_alive(struct tier__damon_tracker *t, const pid_t *pids, size_t n)
{
	pid_t *v = NULL;
	size_t i, j, nr = 0;
	bool same;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (!tier__pid_alive(&t->roots.ctx, pids[i]))
			continue;
		for (j = 0; j < nr && v[j] != pids[i]; j++)
			;
		if (j == nr)
			v[nr++] = pids[i];
	}
	same = nr == t->nr_pids && (!nr || !memcmp(v, t->pids, nr * sizeof(*v)));
	free(t->pids);
	t->pids = v;
	t->nr_pids = nr;
	return !same;
}

static int damon_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct tier__damon_tracker *t = priv;
	int ret, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		ret = keep_alive(t, pids, n);
		if (ret < 0)
			return tier_err_set(err, -ENOMEM, "DAMON: out of memory");
		if (!t->nr_pids)
			return tier__damon_kdamond_stop(t, err);
		/* The same targets, still monitored: nothing to write. Every
		 * refresh (a second) used to rewrite the targets and schemes
		 * and commit them, dozens of writes and a kdamond round. */
		if (!ret && t->running && !attempt)
			return 0;
		/* No snapshot asked ahead is made meanwhile. */
		tier__damon_ahead_hold(t, true);
		ret = tier__damon_kdamond_write_targets(t, err);
		if (ret) {
			tier__damon_ahead_hold(t, false);
			return ret;
		}
		if (t->tracepoint)	/* events of the old target indexes */
			tier__damon_trace_drain(&t->trace, NULL, NULL);
		ret = tier__damon_kdamond_start(t, err);
		tier__damon_ahead_hold(t, false);
		/* EINVAL: a target exited between the check and the start. */
		if (ret != -EINVAL)
			return ret;
	}
	return ret;
}

/* ---- collect ------------------------------------------------------------ */

static int damon_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct tier__damon_tracker *t = priv;
	struct tier__obs_batch *b;
	int ret = 0;

	if (!t->running || !t->nr_pids)
		return 0;
	b = malloc(sizeof(*b));
	if (!b)
		return tier_err_set(err, -ENOMEM, "DAMON: out of memory");
	tier__batch_init(b, sink, ctx);
	memset(&t->snap, 0, sizeof(t->snap));
	if (t->tracepoint) {
		tier__damon_collect_trace(t, b);
		if (!tier__damon_sysfs_is_on(&t->fs))
			t->running = false;
	} else {
		ret = tier__damon_collect_tried(t, b, err);
	}
	tier__batch_flush(b);
	free(b);
	return ret;
}

static void damon_maintain(void *priv)
{
	tier__damon_kdamond_keep_share(priv);
}

static void damon_ahead(void *priv, uint64_t step_us)
{
	tier__damon_ahead(priv, step_us);
}

static bool damon_news(void *priv)
{
	return tier__damon_ahead_news(priv);
}

static void damon_stats(void *priv, struct tier_linux_tracker_stats *st)
{
	const struct tier__damon_tracker *t = priv;

	memset(st, 0, sizeof(*st));
	st->damon_sample_us = t->sample_us;
	st->damon_max_regions = t->max_regions;
	st->damon_share_percent = t->share_percent;
	st->damon_aggr_us = t->aggr_us;
	st->damon_snap = t->snap;
}

/* The next share check compares with the new part. */
static void damon_set_budget(void *priv, double kthread_percent, double thread_percent)
{
	struct tier__damon_tracker *t = priv;

	(void)thread_percent;
	t->roots.ctx.kthread_cpu_percent = kthread_percent;
}

const struct tier_linux_tracker_ops tier__linux_tracker_damon = {
	.name = "damon",
	.kinds = TIER_OBS_ACCESSED,
	.kthreads = true,
	.probe = damon_probe,
	.create = damon_create,
	.destroy = damon_destroy,
	.set_targets = damon_set_targets,
	.collect = damon_collect,
	.maintain = damon_maintain,
	.ahead = damon_ahead,
	.news = damon_news,
	.kdamond = damon_kdamond,
	.stats = damon_stats,
	.set_budget = damon_set_budget,
};
