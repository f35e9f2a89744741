/* tracker_idle.c - idle page tracking
 * (Documentation/admin-guide/mm/idle_page_tracking.rst).
 *
 * <sysfs>/kernel/mm/page_idle/bitmap holds one bit per PFN in 8-byte words
 * (word PFN / 64, bit PFN % 64), read and written 8 bytes at a time:
 * writing a 1 marks the page idle, reading a 1 says it was not accessed
 * since. The PFNs of a process's pages come from /proc/PID/pagemap (bits
 * 0-54, zero without CAP_SYS_ADMIN).
 *
 * Per target: set_targets() marks every present page of the watched
 * mappings idle; collect() walks them again, reports each run of
 * consecutive pages that were (not) accessed since as one ACCESSED
 * observation (count 1 or 0, max 1, interval = time since marking), and
 * marks them idle again - only our pages' bits are written, never the
 * other 63 of a word.
 *
 * Transparent huge pages: only the head page's bit reports; a tail page
 * reads as "not idle" whatever happened. Where /proc/kpageflags is
 * readable, tail pages take their head page's answer. Pages still in a
 * per-CPU LRU batch cannot be marked idle and read as accessed once.
 *
 * No Debian kernel sets CONFIG_IDLE_PAGE_TRACKING (6.1, 6.12, 7.2): there
 * probe() says so and the next tracker is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define CAP_SYS_ADMIN_BIT 21

struct idle_tracker {
	struct tier__roots roots;
	struct tier__targets targets;
	int bitmap_fd;
	int kpf_fd;			/* /proc/kpageflags, or -1 */
	char bitmap_path[512];
};

/* One walk over a process: reads bits, marks pages idle again. */
struct idle_walk {
	struct idle_tracker *t;
	struct tier__run run;
	bool emit;
	/* bitmap word cache */
	int64_t word_idx;		/* -1: none */
	uint64_t word, mark;
	/* kpageflags cache: 64 PFNs from kpf_base */
	int64_t kpf_base;
	uint64_t kpf[64];
	bool head_seen;
	uint32_t head_accessed;
	uint64_t present, pfns;
	int error;
};

static bool has_cap_sys_admin(const struct tier_linux_ctx *ctx)
{
	char path[512], buf[4096], *p;
	unsigned long long caps;

	if (tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "self/status") ||
	    tier_sysfs_read(path, buf, sizeof(buf), NULL) < 0)
		return geteuid() == 0;
	p = strstr(buf, "\nCapEff:");
	if (!p || sscanf(p + 8, "%llx", &caps) != 1)
		return geteuid() == 0;
	return caps & (1ull << CAP_SYS_ADMIN_BIT);
}

static int idle_probe(const struct tier_linux_ctx *ctx, struct tier_err *err)
{
	char path[512];

	if (tier_sysfs_path(path, sizeof(path), ctx->sysfs_root, "kernel/mm/page_idle/bitmap"))
		return tier_err_set(err, -ENAMETOOLONG, "idle: sysfs root too long");
	if (!tier_sysfs_exists(path))
		return tier_err_set(err, -ENOENT,
				    "idle: %s missing (kernel without "
				    "CONFIG_IDLE_PAGE_TRACKING; no Debian kernel has it)", path);
	if (access(path, R_OK | W_OK))
		return tier_err_set(err, -EACCES, "idle: %s not readable and writable (%s; "
				    "run as root)", path, strerror(errno));
	if (!has_cap_sys_admin(ctx))
		return tier_err_set(err, -EPERM,
				    "idle: pagemap shows page frame numbers only with "
				    "CAP_SYS_ADMIN, which this process lacks");
	return 0;
}

static void idle_destroy(void *priv)
{
	struct idle_tracker *t = priv;

	if (!t)
		return;
	if (t->bitmap_fd >= 0)
		close(t->bitmap_fd);
	if (t->kpf_fd >= 0)
		close(t->kpf_fd);
	tier__targets_release(&t->targets);
	tier__roots_release(&t->roots);
	free(t);
}

static int idle_create(const struct tier_linux_ctx *ctx, uint64_t interval_us, void **priv,
		       struct tier_err *err)
{
	struct idle_tracker *t;
	char path[512];
	int ret;

	(void)interval_us;
	*priv = NULL;
	ret = idle_probe(ctx, err);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return tier_err_set(err, -ENOMEM, "idle: out of memory");
	t->bitmap_fd = t->kpf_fd = -1;
	if (tier__roots_init(&t->roots, ctx)) {
		free(t);
		return tier_err_set(err, -ENOMEM, "idle: out of memory");
	}
	tier_sysfs_path(t->bitmap_path, sizeof(t->bitmap_path), ctx->sysfs_root,
			"kernel/mm/page_idle/bitmap");
	t->bitmap_fd = open(t->bitmap_path, O_RDWR | O_CLOEXEC);
	if (t->bitmap_fd < 0) {
		ret = -errno;
		tier_err_set(err, ret, "idle: %s: %s", t->bitmap_path, strerror(-ret));
		idle_destroy(t);
		return ret;
	}
	if (!tier_sysfs_path(path, sizeof(path), ctx->procfs_root, "kpageflags"))
		t->kpf_fd = open(path, O_RDONLY | O_CLOEXEC);
	*priv = t;
	return 0;
}

static int flush_word(struct idle_walk *w)
{
	if (w->word_idx < 0 || !w->mark)
		return 0;
	if (pwrite(w->t->bitmap_fd, &w->mark, sizeof(w->mark),
		   (off_t)w->word_idx * (off_t)sizeof(uint64_t)) != (ssize_t)sizeof(w->mark))
		return errno ? -errno : -EIO;
	w->mark = 0;
	return 0;
}

/* Bit of pfn in the bitmap: 1 = idle since marked. */
static int read_bit(struct idle_walk *w, uint64_t pfn, bool *idle)
{
	int64_t idx = (int64_t)(pfn / 64);
	ssize_t n;
	int ret;

	if (idx != w->word_idx) {
		ret = flush_word(w);
		if (ret)
			return ret;
		n = pread(w->t->bitmap_fd, &w->word, sizeof(w->word),
			  (off_t)idx * (off_t)sizeof(uint64_t));
		if (n < 0)
			return -errno;
		if (n != (ssize_t)sizeof(w->word))
			w->word = 0;	/* past the end (fixtures): not idle */
		w->word_idx = idx;
	}
	*idle = w->word & (1ull << (pfn % 64));
	w->mark |= 1ull << (pfn % 64);
	return 0;
}

static uint64_t page_flags(struct idle_walk *w, uint64_t pfn)
{
	int64_t base = (int64_t)(pfn & ~63ull);

	if (w->t->kpf_fd < 0)
		return 0;
	if (base != w->kpf_base) {
		ssize_t n = pread(w->t->kpf_fd, w->kpf, sizeof(w->kpf),
				  (off_t)base * (off_t)sizeof(uint64_t));

		if (n < (ssize_t)sizeof(w->kpf))
			memset((char *)w->kpf + (n > 0 ? n : 0), 0,
			       sizeof(w->kpf) - (size_t)(n > 0 ? n : 0));
		w->kpf_base = base;
	}
	return w->kpf[pfn - (uint64_t)base];
}

static int idle_chunk(void *arg, uint64_t vaddr, const uint64_t *pm, size_t n)
{
	struct idle_walk *w = arg;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		uint64_t addr = vaddr + ((uint64_t)i << 12), pfn = pm[i] & TIER__PM_PFN_MASK;
		uint64_t flags;
		uint32_t accessed;
		bool idle = false;

		if (!(pm[i] & TIER__PM_PRESENT)) {
			tier__run_gap(&w->run);
			continue;
		}
		w->present++;
		if (!pfn) {
			tier__run_gap(&w->run);
			continue;
		}
		w->pfns++;
		ret = read_bit(w, pfn, &idle);
		if (ret)
			return ret;
		accessed = !idle;
		flags = page_flags(w, pfn);
		if (flags & (1ull << TIER__KPF_COMPOUND_TAIL)) {
			if (w->head_seen)
				accessed = w->head_accessed;
		} else if (flags & (1ull << TIER__KPF_COMPOUND_HEAD)) {
			w->head_seen = true;
			w->head_accessed = accessed;
		} else {
			w->head_seen = false;
		}
		if (w->emit)
			tier__run_page(&w->run, addr, accessed);
	}
	return 0;
}

/* Walks pid; emit = false only marks its pages idle. */
static int idle_walk_pid(struct idle_tracker *t, pid_t pid, bool emit, uint32_t interval_us,
			 struct tier__obs_batch *b, struct tier_err *err)
{
	struct idle_walk w;
	int ret;

	memset(&w, 0, sizeof(w));
	w.t = t;
	w.emit = emit;
	w.word_idx = -1;
	w.kpf_base = -1;
	tier__run_init(&w.run, b, pid, TIER_OBS_ACCESSED, interval_us);
	ret = tier__pagemap_walk(&t->roots.ctx, pid, idle_chunk, &w, err);
	if (!ret)
		ret = flush_word(&w);
	if (ret) {
		if (ret != -ESRCH)
			tier_err_prefix(err, "idle: pid %d", (int)pid);
		return ret;
	}
	if (emit)
		tier__run_gap(&w.run);
	if (w.present && !w.pfns)
		return tier_err_set(err, -EPERM, "idle: pid %d: pagemap shows no page frame "
				    "numbers (needs CAP_SYS_ADMIN)", (int)pid);
	return 0;
}

static int idle_reset(void *arg, pid_t pid, struct tier_err *err)
{
	return idle_walk_pid(arg, pid, false, 0, NULL, err);
}

static int idle_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct idle_tracker *t = priv;

	return tier__targets_update(&t->targets, &t->roots.ctx, pids, n, idle_reset, t, err);
}

static int idle_collect(void *priv, tier_linux_obs_sink sink, void *ctx, struct tier_err *err)
{
	struct idle_tracker *t = priv;
	struct tier__obs_batch *b;
	size_t i;
	int ret = 0;

	b = malloc(sizeof(*b));
	if (!b)
		return tier_err_set(err, -ENOMEM, "idle: out of memory");
	tier__batch_init(b, sink, ctx);
	for (i = 0; i < t->targets.n; i++) {
		struct tier__target *tg = &t->targets.v[i];
		uint64_t now = tier_linux_now_us(), span = now - tg->since_us;

		ret = idle_walk_pid(t, tg->pid, true, span > UINT32_MAX ? UINT32_MAX :
				    (uint32_t)span, b, err);
		if (ret == -ESRCH) {
			tier_err_clear(err);	/* exited: skipped */
			ret = 0;
			continue;
		}
		if (ret)
			break;
		tg->since_us = now;
	}
	tier__batch_flush(b);
	free(b);
	return ret;
}

const struct tier_linux_tracker_ops tier__linux_tracker_idle = {
	.name = "idle",
	.kinds = TIER_OBS_ACCESSED,
	.probe = idle_probe,
	.create = idle_create,
	.destroy = idle_destroy,
	.set_targets = idle_set_targets,
	.collect = idle_collect,
};
