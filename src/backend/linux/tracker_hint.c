/* tracker_hint.c - the kernel's NUMA hint faults ("hint").
 *
 * In memory tiering mode (numa_balancing = 2) the kernel's NUMA balancing
 * protects the pages of a process that are off the top tier, a scan of
 * scan_size_mb (256 MiB) at a time (task_numa_work()), and the next
 * access to each takes a hint fault. With its promotion rate limit at 0
 * the fault moves nothing (should_numa_migrate_memory(): the limit is
 * always reached); the daemon sets both while this tracker runs
 * (tracker.h: hint_faults; kernel_guard.h). Every fault, hint faults among
 * them, is perf's software event PERF_COUNT_SW_PAGE_FAULTS_MIN, sampled
 * here at period 1 per thread of each target (threads created later from
 * the collect a second or more after the last look) with its address and
 * time: no PMU needed, and under an
 * emulator the faults are seen as on hardware (docs/linux-trackers.md:
 * "The kernel's hint faults").
 *
 * A page faults once per protection, so a page that faults again has been
 * protected again: its fault starts that range's next pass (ranges of
 * HINT_RANGE_SHIFT, each with the pages faulted in its current pass). A
 * fault's latency is its time since its pass began: in the guest, a
 * scattered hot set's pages (one in 8, 90% of the accesses) faulted within
 * 100 ms of their pass's start 99.6% of the time, the others 7.5%
 * (bench/results/hint-fault-probe.txt). A fault's page is rated ln 2 over
 * its latency - the rate whose median first access after a protection is
 * then - a standing estimate (TIER_OBS_STANDING) handed over at every
 * collect while its range has had fewer than HINT_KEEP_PASSES passes since:
 * a page that no longer faults (moved to the top tier, which the kernel
 * does not scan, or gone cold) loses it. Pages rated under HINT_MIN_RATE
 * are left out (to DAMON's regions, where the tracker runs with DAMON).
 *
 * Faults that are not hint faults (first touches, copy-on-write, soft-
 * dirty write protection) are sampled as well and read as accesses too:
 * a page first touched is being accessed.
 *
 * The passes and the rates are hint_passes.c's; this file reads the faults.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/kernel_tiering.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define HINT_DATA_PAGES		1024u	/* 4 MiB of samples a thread, at most
					 * (TIER__PERF_RINGS_MAX_BYTES in all) */
#define HINT_SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)

static void hint_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	attr->sample_period = 1;
	attr->sample_type = HINT_SAMPLE_TYPE;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->exclude_hv = 1;
}

/* ---- the tracker --------------------------------------------------------- */

struct hint_fault {
	uint64_t t_us, addr;
	pid_t pid;
};

struct hint_tracker {
	struct tier__roots roots;
	struct tier__perf_rings rings;
	struct tier__perf_stats stats;
	struct tier__hint_passes passes;
	pid_t *pids;
	size_t nr_pids;
	struct hint_fault *buf;		/* a collect's samples, put in time order */
	size_t nr_buf, cap_buf;
	uint64_t threads_us;		/* the last look for new threads */
	bool nomem;
};

static int hint_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	struct tier_linux_kernel_tiering kt;
	struct perf_event_attr attr;
	long fd;
	int ret;

	ret = tier_linux_kernel_tiering_read(ctx, &kt, err);
	if (ret)
		return ret;
	if (!kt.has_numa_balancing || !kt.has_rate_limit) {
		char path[512];

		tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "%s",
				!kt.has_numa_balancing ? "sys/kernel/numa_balancing" :
				"sys/kernel/numa_balancing_promote_rate_limit_MBps");
		return tier_err_set(err, -EOPNOTSUPP, "hint: %s missing (a kernel without "
				    "memory tiering's NUMA balancing: CONFIG_NUMA_BALANCING, 6.0+)",
				    path);
	}
	/* The event on this thread, not sampled: does the kernel have it? */
	hint_attr(&attr);
	attr.sample_period = 0;
	attr.sample_type = 0;
	fd = tier__perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return tier_err_set(err, ret, "hint: perf's software page-fault event: %s%s",
				    strerror(-ret),
				    ret == -EACCES || ret == -EPERM ?
				    " (needs CAP_PERFMON or kernel.perf_event_paranoid <= 1)" :
				    ret == -ENOENT || ret == -ENOSYS ? " (no CONFIG_PERF_EVENTS)" : "");
	}
	close((int)fd);
	return 0;
}

static void hint_destroy(void *priv)
{
	struct hint_tracker *t = priv;

	if (!t)
		return;
	tier__perf_rings_free(&t->rings);
	tier__hint_passes_release(&t->passes);
	free(t->buf);
	free(t->pids);
	tier__roots_release(&t->roots);
	free(t);
}

static int hint_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
		       struct tier_err *err)
{
	struct hint_tracker *t;

	(void)interval_us;
	*priv = NULL;
	t = calloc(1, sizeof(*t));
	if (!t || tier__roots_init(&t->roots, ctx)) {
		free(t);
		return tier_err_set(err, -ENOMEM, "hint: out of memory");
	}
	t->rings.data_pages = HINT_DATA_PAGES;
	t->rings.max_bytes = TIER__PERF_RINGS_MAX_BYTES;
	tier__hint_passes_init(&t->passes);
	*priv = t;
	return 0;
}

static int hint_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct hint_tracker *t = priv;
	struct perf_event_attr attr;
	pid_t *v = NULL;
	size_t i, k;
	int ret;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return tier_err_set(err, -ENOMEM, "hint: out of memory");
		memcpy(v, pids, n * sizeof(*v));
	}
	/* The same set: the events stay (their passes with them). */
	if (n == t->nr_pids) {
		for (i = 0; i < n; i++) {
			for (k = 0; k < n && t->pids[k] != pids[i]; k++)
				;
			if (k == n)
				break;
		}
		if (i == n) {
			free(v);
			return 0;
		}
	}
	free(t->pids);
	t->pids = v;
	t->nr_pids = n;
	tier__hint_passes_drop(&t->passes, pids, n);
	tier__perf_rings_close(&t->rings);
	hint_attr(&attr);
	t->threads_us = 0;	/* every thread now */
	ret = tier__perf_follow_threads(&t->rings, t->roots.ctx.procfs_root, pids, n, &attr,
					&t->threads_us, err);
	if (ret)
		tier_err_prefix(err, "hint");
	return ret;
}

static void hint_sample(void *arg, const struct tier__perf_sample *s)
{
	struct hint_tracker *t = arg;

	if (!s->addr || !s->time)
		return;
	if (t->nr_buf == t->cap_buf) {
		size_t nc = t->cap_buf ? t->cap_buf * 2 : 4096;
		struct hint_fault *nv = realloc(t->buf, nc * sizeof(*nv));

		if (!nv) {
			t->nomem = true;
			return;
		}
		t->buf = nv;
		t->cap_buf = nc;
	}
	t->buf[t->nr_buf++] = (struct hint_fault){ s->time / 1000, s->addr, (pid_t)s->pid };
}

static int fault_cmp(const void *x, const void *y)
{
	const struct hint_fault *a = x, *b = y;

	return (a->t_us > b->t_us) - (a->t_us < b->t_us);
}

/* The faults in the rings to the passes. At every collect, and at every
 * upkeep (about a second) while the steps pause: a ring holds 131,072
 * faults, which a workload touching its slow-tier pages takes in a second
 * or two of a pass, and the kernel drops what finds its ring full. */
static void drain(struct hint_tracker *t)
{
	size_t i;

	t->nr_buf = 0;
	tier__perf_rings_read(&t->rings, HINT_SAMPLE_TYPE, hint_sample, t, &t->stats);
	/* One ring a thread: the passes go by the faults in time order (a
	 * fault read at the next drain but dated before this one's last
	 * counts at no latency, as late in the order as it can be). */
	qsort(t->buf, t->nr_buf, sizeof(*t->buf), fault_cmp);
	for (i = 0; i < t->nr_buf; i++)
		if (tier__hint_fault(&t->passes, t->buf[i].pid, t->buf[i].addr, t->buf[i].t_us))
			t->nomem = true;
}

static void hint_maintain(void *priv)
{
	drain(priv);
}

static int hint_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct hint_tracker *t = priv;

	drain(t);
	tier__hint_passes_hand(&t->passes, sink, ctx);
	if (t->nomem) {
		t->nomem = false;
		return tier_err_set(err, -ENOMEM, "hint: out of memory");
	}
	{
		struct perf_event_attr attr;
		int ret;

		hint_attr(&attr);
		ret = tier__perf_follow_threads(&t->rings, t->roots.ctx.procfs_root, t->pids,
						t->nr_pids, &attr, &t->threads_us, err);
		if (ret)
			tier_err_prefix(err, "hint");
		return ret;
	}
}

bool tier__hint_has_read(void *priv, pid_t pid)
{
	const struct hint_tracker *t = priv;

	return tier__hint_passes_read(&t->passes, pid, tier_linux_now_us());
}

bool tier__hint_covers(void *priv, pid_t pid, uint64_t start, uint64_t end, uint64_t *run_end)
{
	const struct hint_tracker *t = priv;

	return tier__hint_passes_covers(&t->passes, pid, start, end, run_end);
}

static void hint_stats(void *priv, struct tier_linux_tracker_stats *st)
{
	const struct hint_tracker *t = priv;

	memset(st, 0, sizeof(*st));
	st->workload_faults = t->passes.faults;
	st->dropped = t->stats.lost;
}

const struct tier_linux_tracker_ops tier__linux_tracker_hint = {
	.name = "hint",
	.kinds = TIER_OBS_ACCESSED,
	.hint_faults = true,
	.probe = hint_probe,
	.create = hint_create,
	.destroy = hint_destroy,
	.set_targets = hint_set_targets,
	.collect = hint_collect,
	.maintain = hint_maintain,
	.stats = hint_stats,
};
