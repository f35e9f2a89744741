/* tracker_damon.c - DAMON through its sysfs interface, monitoring the
 * virtual address spaces of the target processes.
 *
 * The tracker takes a kdamond of its own (damon_kdamond.c): one vaddr
 * context with a target per process and "stat" schemes whose tried
 * regions report what DAMON saw.
 *
 * Which process a tried region belongs to: the tried_regions directory
 * does not say. With several targets and kernels that have DAMOS target
 * filters (filters/N/damon_target_idx, 6.6+), scheme N carries a filter
 * that rejects every region not of target N, so scheme N's tried regions
 * are exactly target N's. Without them one scheme lists every target's
 * regions, target after target, each in address order: a region that
 * starts below the end of the one before begins the next target; when
 * that does not split into exactly one group per target the snapshot is
 * dropped rather than guessed.
 *
 * collect() writes update_schemes_tried_regions to state (the write
 * returns once DAMON has applied the schemes at the end of the next
 * aggregation, which is why the aggregation is kept short), reads
 * schemes/N/tried_regions/M/{start,end,nr_accesses,age}, reports each
 * region as ACCESSED (count = nr_accesses of one aggregation, max =
 * aggregation / sample interval) and writes clear_schemes_tried_regions.
 *
 * Kernels 5.18-6.1 have the sysfs interface but no tried_regions: there the
 * tracker reads the damon:damon_aggregated tracepoint from its own tracefs
 * instance (instances/tierd-damon-K, so other tracers are undisturbed),
 * keeping the events of its own kdamond (by the task pid in each line).
 *
 * The kernel answers EBUSY to a write while another command is being
 * handled; every write is retried after a short pause. A kdamond whose
 * target processes all exited stops by itself: collect() then reports
 * nothing and the next set_targets() starts it again.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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
	if (t->fs.admin[0])
		tier__damon_kdamond_stop(t, NULL);
	if (t->tracepoint)
		tier__damon_trace_close(&t->trace, &t->fs);
	tier__damon_kdamond_give_back(t);
	free(t->pids);
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

	if (!t->running || t->kdamond_pid <= 0)
		return false;
	*index = t->fs.kdamond;
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
}

/* ---- targets ------------------------------------------------------------ */

static int keep_alive(struct tier__damon_tracker *t, const pid_t *pids, size_t n)
{
	pid_t *v = NULL;
	size_t i, j, nr = 0;

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
	free(t->pids);
	t->pids = v;
	t->nr_pids = nr;
	return 0;
}

static int damon_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct tier__damon_tracker *t = priv;
	int ret, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		if (keep_alive(t, pids, n))
			return tier_err_set(err, -ENOMEM, "DAMON: out of memory");
		if (!t->nr_pids)
			return tier__damon_kdamond_stop(t, err);
		ret = tier__damon_kdamond_write_targets(t, err);
		if (ret)
			return ret;
		if (t->tracepoint)	/* events of the old target indexes */
			tier__damon_trace_drain(&t->trace, NULL, NULL);
		ret = tier__damon_kdamond_start(t, err);
		/* EINVAL: a target exited between the check and the start. */
		if (ret != -EINVAL)
			return ret;
	}
	return ret;
}

/* ---- collect ------------------------------------------------------------ */

struct region {
	uint64_t start, end, nr_accesses;
};

static void emit(struct tier__damon_tracker *t, struct tier__obs_batch *b, pid_t pid,
		 const struct region *r)
{
	struct tier_linux_addr_obs o;
	uint32_t max = (uint32_t)(t->aggr_us / t->sample_us);

	memset(&o, 0, sizeof(o));
	o.pid = pid;
	o.start = r->start;
	o.end = r->end;
	o.kind = TIER_OBS_ACCESSED;
	o.count = r->nr_accesses > max ? max : (uint32_t)r->nr_accesses;
	o.max = max;
	o.interval_us = (uint32_t)t->aggr_us;
	tier__batch_add(b, &o);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* Reads schemes/s/tried_regions/ into a growing array, in the order of
 * the region directories' numbers (address order). The numbers need not
 * start at 0: 6.12 numbers the regions of all schemes with one counter,
 * so a second scheme's first region may be "13". */
static int read_tried(struct tier__damon_tracker *t, unsigned s, struct region **v, size_t *nr,
		      size_t *cap, struct tier_err *err)
{
	char rel[160], path[1024];
	unsigned *idx = NULL;
	size_t nr_idx = 0, cap_idx = 0, k;
	struct dirent *de;
	int ret = 0;
	DIR *dir;

	snprintf(rel, sizeof(rel), "kdamonds/%u/contexts/0/schemes/%u/tried_regions",
		 t->fs.kdamond, s);
	if (tier__damon_sysfs_path(&t->fs, path, sizeof(path), rel))
		return tier_err_set(err, -ENAMETOOLONG, "DAMON: path too long");
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : tier_err_set(err, -errno, "DAMON: %s: %s", path,
							   strerror(errno));
	while ((de = readdir(dir))) {
		char *end;
		unsigned long m;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;	/* total_bytes, ., .. */
		m = strtoul(de->d_name, &end, 10);
		if (*end || m > UINT32_MAX)
			continue;
		if (nr_idx == cap_idx) {
			size_t c = cap_idx ? cap_idx * 2 : 64;
			unsigned *g = realloc(idx, c * sizeof(*g));

			if (!g) {
				ret = tier_err_set(err, -ENOMEM, "DAMON: out of memory");
				goto out;
			}
			idx = g;
			cap_idx = c;
		}
		idx[nr_idx++] = (unsigned)m;
	}
	if (nr_idx)
		qsort(idx, nr_idx, sizeof(*idx), cmp_uint);
	for (k = 0; k < nr_idx; k++) {
		struct region r;
		char base[200];

		snprintf(base, sizeof(base), "%s/%u", rel, idx[k]);
		ret = tier__damon_sysfs_read_u64(&t->fs, &r.start, NULL, "%s/start", base);
		if (!ret)
			ret = tier__damon_sysfs_read_u64(&t->fs, &r.end, err, "%s/end", base);
		if (!ret)
			ret = tier__damon_sysfs_read_u64(&t->fs, &r.nr_accesses, err,
							 "%s/nr_accesses", base);
		if (ret == -ENOENT) {
			ret = 0;	/* cleared under us */
			break;
		}
		if (ret)
			goto out;
		if (r.end <= r.start)
			continue;
		if (*nr == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			struct region *g = realloc(*v, c * sizeof(*g));

			if (!g) {
				ret = tier_err_set(err, -ENOMEM, "DAMON: out of memory");
				goto out;
			}
			*v = g;
			*cap = c;
		}
		(*v)[(*nr)++] = r;
	}
out:
	closedir(dir);
	free(idx);
	return ret;
}

/* Asks for a snapshot of the regions. Returns 1 when the kdamond has
 * stopped (every target exited), 0 or -errno. */
static int request_tried(struct tier__damon_tracker *t, struct tier_err *err)
{
	int ret = tier__damon_sysfs_command(&t->fs, "update_schemes_tried_regions", err);

	if (ret && !tier__damon_sysfs_is_on(&t->fs)) {
		t->running = false;
		tier_err_clear(err);
		return 1;
	}
	return ret;
}

/* Emits the regions of scheme s (all of one target, or every target's
 * in turn). Returns the number of regions, or -errno. */
static long emit_scheme(struct tier__damon_tracker *t, struct tier__obs_batch *b, size_t s,
			size_t nr_schemes, struct region **v, size_t *cap, struct tier_err *err)
{
	size_t nr = 0, i;
	int ret = read_tried(t, (unsigned)s, v, &nr, cap, err);

	if (ret)
		return ret;
	if (nr_schemes > 1 || t->nr_pids == 1) {
		for (i = 0; i < nr; i++)
			emit(t, b, t->pids[s], &(*v)[i]);
		return (long)nr;
	}
	/* One scheme over several targets: split where the address goes
	 * back down (a new target starts). */
	{
		size_t groups = nr ? 1 : 0, g = 0;

		for (i = 1; i < nr; i++)
			if ((*v)[i].start < (*v)[i - 1].end)
				groups++;
		if (groups != t->nr_pids)
			return (long)nr;	/* cannot tell: dropped */
		for (i = 0; i < nr; i++) {
			if (i && (*v)[i].start < (*v)[i - 1].end)
				g++;
			emit(t, b, t->pids[g], &(*v)[i]);
		}
	}
	return (long)nr;
}

/* Attempts at a snapshot in which every scheme has its regions. */
#define TRIED_ATTEMPTS 2

static int collect_tried(struct tier__damon_tracker *t, struct tier__obs_batch *b,
			 struct tier_err *err)
{
	struct region *v = NULL;
	size_t cap = 0, s, nr_schemes, missing;
	bool *done;
	int ret = 0, attempt;

	nr_schemes = t->per_target && t->nr_pids > 1 ? t->nr_pids : 1;
	done = calloc(nr_schemes, sizeof(*done));
	if (!done)
		return tier_err_set(err, -ENOMEM, "DAMON: out of memory");
	/* A live vaddr target always has regions (at least min of them), yet
	 * the kernel may hand back a scheme's snapshot empty when the
	 * command returns before the kdamond applied that scheme (seen on
	 * 6.12 in the test guest: the first seconds, and the second and
	 * later schemes of several targets). Ask again for those. */
	for (attempt = 0, missing = nr_schemes; attempt < TRIED_ATTEMPTS && missing; attempt++) {
		ret = request_tried(t, err);
		if (ret) {
			ret = ret > 0 ? 0 : ret;
			goto out;
		}
		if (attempt)
			t->empty_snapshots++;
		for (s = 0; s < nr_schemes; s++) {
			long n;

			if (done[s])
				continue;
			n = emit_scheme(t, b, s, nr_schemes, &v, &cap, err);
			if (n < 0) {
				ret = (int)n;
				goto out;
			}
			if (n) {
				done[s] = true;
				missing--;
			}
		}
	}
	ret = tier__damon_sysfs_command(&t->fs, "clear_schemes_tried_regions", err);
out:
	free(v);
	free(done);
	return ret;
}

struct trace_arg {
	struct tier__damon_tracker *t;
	struct tier__obs_batch *b;
};

static void trace_line(void *arg, const char *line)
{
	struct trace_arg *a = arg;
	struct tier__damon_tracker *t = a->t;
	struct tier__damon_trace_rec rec;
	struct region r;

	if (tier__damon_parse_trace_line(line, &rec))
		return;
	if (t->kdamond_pid > 0 && rec.task_pid > 0 && rec.task_pid != t->kdamond_pid)
		return;		/* another kdamond's */
	if (rec.target_id >= t->nr_pids)
		return;
	r.start = rec.start;
	r.end = rec.end;
	r.nr_accesses = rec.nr_accesses;
	emit(t, a->b, t->pids[rec.target_id], &r);
}

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
	if (t->tracepoint) {
		struct trace_arg a = { .t = t, .b = b };

		tier__damon_trace_drain(&t->trace, trace_line, &a);
		if (!tier__damon_sysfs_is_on(&t->fs))
			t->running = false;
	} else {
		ret = collect_tried(t, b, err);
	}
	tier__batch_flush(b);
	free(b);
	return ret;
}

const struct tier_linux_tracker_ops tier__linux_tracker_damon = {
	.name = "damon",
	.kinds = TIER_OBS_ACCESSED,
	.probe = damon_probe,
	.create = damon_create,
	.destroy = damon_destroy,
	.set_targets = damon_set_targets,
	.collect = damon_collect,
	.kdamond = damon_kdamond,
};
