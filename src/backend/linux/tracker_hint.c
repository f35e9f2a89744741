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
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/kernel_tiering.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define HINT_DATA_PAGES		1024u	/* 4 MiB of samples a thread */
#define HINT_SAMPLE_TYPE	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR)

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
				unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

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

/* ---- passes ------------------------------------------------------------- */

struct tier__hint_range {
	pid_t pid;
	uint64_t base;			/* address >> HINT_RANGE_SHIFT */
	uint64_t start_us;		/* the current pass's start */
	uint32_t pass;			/* the current pass (1 the first) */
	uint8_t seen[HINT_RANGE_PAGES / 8];	/* faulted in the current pass */
	uint16_t lat_ms[HINT_RANGE_PAGES];	/* each page's last latency, ms + 1 (0: none) */
	uint8_t pass_of[HINT_RANGE_PAGES];	/* ... its pass, mod 256 */
};

void tier__hint_passes_init(struct tier__hint_passes *hp)
{
	memset(hp, 0, sizeof(*hp));
}

void tier__hint_passes_release(struct tier__hint_passes *hp)
{
	size_t i;

	for (i = 0; i < hp->cap; i++)
		free(hp->slot[i]);
	free(hp->slot);
	free(hp->read);
	memset(hp, 0, sizeof(*hp));
}

static size_t slot_of(const struct tier__hint_passes *hp, pid_t pid, uint64_t base)
{
	uint64_t h = ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) ^ (base * 0xc2b2ae3d27d4eb4full);

	return (size_t)(h >> 17) & (hp->cap - 1);
}

static struct tier__hint_range *range_get(struct tier__hint_passes *hp, pid_t pid, uint64_t base)
{
	size_t i;

	if ((hp->n + 1) * 2 > hp->cap) {
		size_t nc = hp->cap ? hp->cap * 2 : 64, k;
		struct tier__hint_range **ns = calloc(nc, sizeof(*ns)), **old = hp->slot;
		size_t oc = hp->cap;

		if (!ns)
			return NULL;
		hp->slot = ns;
		hp->cap = nc;
		for (k = 0; k < oc; k++) {
			if (!old[k])
				continue;
			for (i = slot_of(hp, old[k]->pid, old[k]->base); hp->slot[i];
			     i = (i + 1) & (nc - 1))
				;
			hp->slot[i] = old[k];
		}
		free(old);
	}
	for (i = slot_of(hp, pid, base); hp->slot[i]; i = (i + 1) & (hp->cap - 1))
		if (hp->slot[i]->pid == pid && hp->slot[i]->base == base)
			return hp->slot[i];
	hp->slot[i] = calloc(1, sizeof(**hp->slot));
	if (!hp->slot[i])
		return NULL;
	hp->slot[i]->pid = pid;
	hp->slot[i]->base = base;
	hp->n++;
	return hp->slot[i];
}

/* The first fault seen of pid at t_us (kept once). */
static void mark_first(struct tier__hint_passes *hp, pid_t pid, uint64_t t_us)
{
	struct tier__hint_first *nv;
	size_t i;

	for (i = 0; i < hp->nr_read; i++)
		if (hp->read[i].pid == pid)
			return;
	nv = realloc(hp->read, (hp->nr_read + 1) * sizeof(*nv));
	if (!nv)
		return;
	hp->read = nv;
	hp->read[hp->nr_read].pid = pid;
	hp->read[hp->nr_read++].first_us = t_us;
}

int tier__hint_fault(struct tier__hint_passes *hp, pid_t pid, uint64_t addr, uint64_t t_us)
{
	struct tier__hint_range *r = range_get(hp, pid, addr >> HINT_RANGE_SHIFT);
	uint64_t i = (addr >> 12) & (HINT_RANGE_PAGES - 1), lat;

	if (!r)
		return -ENOMEM;
	if (!r->pass || (r->seen[i / 8] & (1u << (i % 8)))) {
		/* Protected again since it faulted: the range's next pass. */
		r->pass++;
		r->start_us = t_us;
		memset(r->seen, 0, sizeof(r->seen));
		if (r->pass == 1)
			mark_first(hp, pid, t_us);
	}
	r->seen[i / 8] |= (uint8_t)(1u << (i % 8));
	lat = t_us > r->start_us ? (t_us - r->start_us) / 1000 : 0;
	r->lat_ms[i] = (uint16_t)(lat >= 65534 ? 65535 : lat + 1);
	r->pass_of[i] = (uint8_t)r->pass;
	hp->faults++;
	return 0;
}

bool tier__hint_passes_read(const struct tier__hint_passes *hp, pid_t pid, uint64_t now_us)
{
	size_t i;

	for (i = 0; i < hp->nr_read; i++)
		if (hp->read[i].pid == pid)
			return now_us >= hp->read[i].first_us + HINT_FIRST_PASS_US;
	return false;
}

/* The rate of a fault latency_ms + 1 = l after its pass began: ln 2 over
 * it (at least HINT_MIN_LAT_MS). */
double tier__hint_rate(uint16_t l)
{
	double ms = l ? (double)(l - 1) : 0;

	if (ms < HINT_MIN_LAT_MS)
		ms = HINT_MIN_LAT_MS;
	return M_LN2 / (ms / 1000.0);
}

void tier__hint_passes_hand(struct tier__hint_passes *hp, tier_linux_obs_sink sink, void *ctx)
{
	struct tier__obs_batch b;
	size_t s;

	tier__batch_init(&b, sink, ctx);
	for (s = 0; s < hp->cap; s++) {
		const struct tier__hint_range *r = hp->slot[s];
		struct tier_linux_addr_obs o;
		bool open = false;
		uint32_t i;

		if (!r)
			continue;
		for (i = 0; i < HINT_RANGE_PAGES; i++) {
			uint8_t age = (uint8_t)((uint8_t)r->pass - r->pass_of[i]);
			uint64_t addr = (r->base << HINT_RANGE_SHIFT) + ((uint64_t)i << 12);
			double rate;
			uint32_t iv;

			if (!r->lat_ms[i] || age >= HINT_KEEP_PASSES ||
			    (rate = tier__hint_rate(r->lat_ms[i])) < HINT_MIN_RATE) {
				if (open)
					tier__batch_add(&b, &o);
				open = false;
				continue;
			}
			/* one access seen in two checks over 2 ln 2 / rate */
			iv = (uint32_t)(2.0 * M_LN2 / rate * 1e6);
			if (open && o.end == addr && o.interval_us == iv) {
				o.end += 4096;
				continue;
			}
			if (open)
				tier__batch_add(&b, &o);
			memset(&o, 0, sizeof(o));
			o.pid = r->pid;
			o.start = addr;
			o.end = addr + 4096;
			o.kind = TIER_OBS_ACCESSED;
			o.write = TIER_OBS_STANDING;
			o.count = 1;
			o.max = 2;
			o.interval_us = iv;
			open = true;
		}
		if (open)
			tier__batch_add(&b, &o);
	}
	tier__batch_flush(&b);
}

void tier__hint_passes_drop(struct tier__hint_passes *hp, const pid_t *keep, size_t n)
{
	size_t s, k, w = 0;

	for (s = 0; s < hp->cap; s++) {
		struct tier__hint_range *r = hp->slot[s];

		if (!r)
			continue;
		for (k = 0; k < n && keep[k] != r->pid; k++)
			;
		if (k < n)
			continue;
		free(r);
		hp->slot[s] = NULL;
		hp->n--;
	}
	/* Open addressing: put the survivors back where a lookup finds them. */
	if (hp->cap) {
		struct tier__hint_range **old = hp->slot;
		size_t oc = hp->cap;

		hp->slot = calloc(oc, sizeof(*hp->slot));
		if (!hp->slot) {
			hp->slot = old;		/* out of memory: lookups may miss, no harm */
		} else {
			for (s = 0; s < oc; s++) {
				size_t i;

				if (!old[s])
					continue;
				for (i = slot_of(hp, old[s]->pid, old[s]->base); hp->slot[i];
				     i = (i + 1) & (oc - 1))
					;
				hp->slot[i] = old[s];
			}
			free(old);
		}
	}
	for (s = 0; s < hp->nr_read; s++) {
		for (k = 0; k < n && keep[k] != hp->read[s].pid; k++)
			;
		if (k < n)
			hp->read[w++] = hp->read[s];
	}
	hp->nr_read = w;
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
	fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
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

static int hint_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct hint_tracker *t = priv;
	size_t i;

	t->nomem = false;
	t->nr_buf = 0;
	tier__perf_rings_read(&t->rings, HINT_SAMPLE_TYPE, hint_sample, t, &t->stats);
	/* One ring a thread: the passes go by the faults in time order. */
	qsort(t->buf, t->nr_buf, sizeof(*t->buf), fault_cmp);
	for (i = 0; i < t->nr_buf; i++)
		if (tier__hint_fault(&t->passes, t->buf[i].pid, t->buf[i].addr, t->buf[i].t_us))
			t->nomem = true;
	tier__hint_passes_hand(&t->passes, sink, ctx);
	if (t->nomem)
		return tier_err_set(err, -ENOMEM, "hint: out of memory");
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
	.stats = hint_stats,
};
