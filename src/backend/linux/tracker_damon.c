/* tracker_damon.c - DAMON through its sysfs interface, monitoring the
 * virtual address spaces of the target processes.
 *
 * Setup (Documentation/admin-guide/mm/damon/usage.rst), under
 * <sysfs>/kernel/mm/damon/admin:
 *   kdamonds/K                     the first kdamond whose state is "off",
 *                                  else nr_kdamonds raised by one (a
 *                                  running kdamond is never taken)
 *   contexts/nr_contexts = 1, contexts/0/operations = vaddr
 *   monitoring_attrs/intervals     sample 5 ms; aggregation a tenth of the
 *                                  collect interval within [100 ms, 1 s];
 *                                  update max(1 s, aggregation)
 *   monitoring_attrs/nr_regions    min 200, max 2000
 *   targets/N/pid_target           one target per process
 *   schemes/N                      action "stat" with access_pattern maxima
 *                                  raised so that every region matches
 *                                  (they default to 0..0, matching nothing),
 *                                  apply_interval_us 0 (= every aggregation;
 *                                  6.7+) so interval auto-tuning cannot
 *                                  starve it
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

#include "backend/linux/damon_modules.h"
#include "backend/linux/damon_sysfs.h"
#include "backend/linux/damon_trace.h"
#include "backend/linux/sysfs.h"
#include "backend/linux/tracker.h"
#include "backend/linux/tracker_util.h"
#include "core/policy.h"

#define DAMON_ADMIN		"kernel/mm/damon/admin"
#define DAMON_SAMPLE_US		5000u
#define DAMON_AGGR_MIN_US	100000u
#define DAMON_AGGR_MAX_US	1000000u
#define DAMON_UPDATE_MIN_US	1000000u
/* At least 200 regions: DAMON checks one page per region per sample, and
 * merges neighbours whose counts agree. Over a few big regions a hot set
 * of pages each touched tens of times a second (random updates over 100
 * MiB) shows as 0 or 1 of 20 checks, indistinguishable from the cold
 * pages around it, and the regions never split along it; at 200 a 1 GiB
 * process starts in 5 MiB regions. */
#define DAMON_MIN_REGIONS	200u
#define DAMON_MAX_REGIONS	2000u

struct damon_tracker {
	struct tier__roots roots;
	struct tier__damon_sysfs fs;	/* our kdamond's control files */
	unsigned nr_before;		/* nr_kdamonds before we grew it */
	bool grew;
	bool tracepoint;
	bool per_target;		/* target filters available */
	bool has_apply_interval;
	bool running;
	uint64_t sample_us, aggr_us, update_us;
	pid_t *pids;
	size_t nr_pids;
	uint64_t empty_snapshots;

	pid_t kdamond_pid;
	struct tier__damon_trace trace;	/* tracepoint mode */
};

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
	struct damon_tracker *t = priv;
	uint64_t nr = 0;

	if (!t)
		return;
	if (t->fs.admin[0] && (t->running || tier__damon_sysfs_is_on(&t->fs)))
		tier__damon_sysfs_command(&t->fs, "off", NULL);
	if (t->tracepoint)
		tier__damon_trace_close(&t->trace, &t->fs);
	/* Give back the kdamond we added, when it is still the last one. */
	if (t->grew && !tier__damon_sysfs_read_u64(&t->fs, &nr, NULL, "kdamonds/nr_kdamonds") &&
	    nr == t->fs.kdamond + 1)
		tier__damon_sysfs_write_u64(&t->fs, t->nr_before, NULL, "kdamonds/nr_kdamonds");
	free(t->pids);
	tier__roots_release(&t->roots);
	free(t);
}

/* Finds a kdamond that is off, or adds one. */
static int take_kdamond(struct damon_tracker *t, struct tier_err *err)
{
	char buf[32];
	uint64_t nr;
	unsigned i;
	int ret;

	ret = tier__damon_sysfs_read_u64(&t->fs, &nr, err, "kdamonds/nr_kdamonds");
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		if (tier__damon_sysfs_read_line(&t->fs, buf, sizeof(buf), NULL,
						"kdamonds/%u/state", i))
			continue;
		if (!strcmp(buf, "off")) {
			t->fs.kdamond = i;
			return 0;
		}
	}
	/* Every existing kdamond runs (or there is none): add one. The
	 * kernel re-creates the kdamond directories on this write and
	 * refuses it (EBUSY) while any of them runs. */
	ret = tier__damon_sysfs_write_u64(&t->fs, nr + 1, err, "kdamonds/nr_kdamonds");
	if (ret == -EBUSY)
		return tier_err_set(err, ret,
				    "DAMON: all %" PRIu64 " kdamonds run for another user, and "
				    "the kernel adds a kdamond only while none runs", nr);
	if (ret)
		return ret;
	t->fs.kdamond = (unsigned)nr;
	t->nr_before = (unsigned)nr;
	t->grew = true;
	if (!tier__damon_sysfs_exists(&t->fs, "kdamonds/%u/state", t->fs.kdamond))
		return tier_err_set(err, -ENOENT, "DAMON: kdamonds/%u missing after raising "
				    "nr_kdamonds to %" PRIu64, t->fs.kdamond, nr + 1);
	return 0;
}

static void pick_intervals(struct damon_tracker *t, uint64_t interval_us)
{
	uint64_t aggr = interval_us / 10;

	/* update_schemes_tried_regions waits for the end of the next
	 * aggregation, so collect() waits up to one aggregation and the
	 * kernel's reaction (0.1-0.3 s measured with 100 ms aggregations on
	 * 6.12 under TCG): keep it a tenth of the collect interval, between
	 * DAMON's default 100 ms and 1 s. The sample interval stays at
	 * DAMON's 5 ms default. */
	if (aggr < DAMON_AGGR_MIN_US)
		aggr = DAMON_AGGR_MIN_US;
	if (aggr > DAMON_AGGR_MAX_US)
		aggr = DAMON_AGGR_MAX_US;
	t->sample_us = DAMON_SAMPLE_US;
	t->aggr_us = aggr / DAMON_SAMPLE_US * DAMON_SAMPLE_US;
	t->update_us = t->aggr_us > DAMON_UPDATE_MIN_US ? t->aggr_us : DAMON_UPDATE_MIN_US;
}

int tier__damon_create(const struct tier_linux_ctx *ctx, uint64_t interval_us,
		       const struct tier__damon_hooks *hooks, void **priv,
		       struct tier_err *err)
{
	struct damon_tracker *t;
	char buf[256];
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
	pick_intervals(t, interval_us);

	ret = take_kdamond(t, err);
	if (ret && t->grew)
		goto out_destroy;	/* gives the added kdamond back */
	if (ret)
		goto out_free;
	ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/nr_contexts", "1", err);
	if (ret)
		goto out_destroy;
	if (!tier__damon_sysfs_read_line(&t->fs, buf, sizeof(buf), NULL,
					 "kdamonds/%u/contexts/0/avail_operations",
					 t->fs.kdamond) &&
	    !strstr(buf, "vaddr")) {
		ret = tier_err_set(err, -EOPNOTSUPP,
				   "DAMON: no vaddr operations (avail_operations: %s; kernel "
				   "without CONFIG_DAMON_VADDR)", buf);
		goto out_destroy;
	}
	ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/0/operations", "vaddr", err);
	if (!ret)
		ret = tier__damon_sysfs_write_u64(&t->fs, t->sample_us, err,
				"kdamonds/%u/contexts/0/monitoring_attrs/intervals/sample_us",
				t->fs.kdamond);
	if (!ret)
		ret = tier__damon_sysfs_write_u64(&t->fs, t->aggr_us, err,
				"kdamonds/%u/contexts/0/monitoring_attrs/intervals/aggr_us",
				t->fs.kdamond);
	if (!ret)
		ret = tier__damon_sysfs_write_u64(&t->fs, t->update_us, err,
				"kdamonds/%u/contexts/0/monitoring_attrs/intervals/update_us",
				t->fs.kdamond);
	if (!ret)
		ret = tier__damon_sysfs_write_u64(&t->fs, DAMON_MIN_REGIONS, err,
				"kdamonds/%u/contexts/0/monitoring_attrs/nr_regions/min",
				t->fs.kdamond);
	if (!ret)
		ret = tier__damon_sysfs_write_u64(&t->fs, DAMON_MAX_REGIONS, err,
				"kdamonds/%u/contexts/0/monitoring_attrs/nr_regions/max",
				t->fs.kdamond);
	if (!ret)
		ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/0/targets/nr_targets", "0",
						      err);
	/* What this kernel's schemes offer, seen on a scratch scheme. */
	if (!ret)
		ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/0/schemes/nr_schemes", "1",
						      err);
	if (ret)
		goto out_destroy;
	t->tracepoint = !tier__damon_sysfs_exists(&t->fs,
						  "kdamonds/%u/contexts/0/schemes/0/tried_regions",
						  t->fs.kdamond);
	t->has_apply_interval = tier__damon_sysfs_exists(&t->fs, "kdamonds/%u/contexts/0/schemes/0/"
							 "apply_interval_us", t->fs.kdamond);
	if (!t->tracepoint &&
	    tier__damon_sysfs_exists(&t->fs, "kdamonds/%u/contexts/0/schemes/0/filters/nr_filters",
				     t->fs.kdamond)) {
		ret = tier__damon_sysfs_kdamond_write(&t->fs,
						      "contexts/0/schemes/0/filters/nr_filters", "1",
						      err);
		if (ret)
			goto out_destroy;
		t->per_target = tier__damon_sysfs_exists(&t->fs, "kdamonds/%u/contexts/0/schemes/0/"
							 "filters/0/damon_target_idx",
							 t->fs.kdamond);
		ret = tier__damon_sysfs_kdamond_write(&t->fs,
						      "contexts/0/schemes/0/filters/nr_filters", "0",
						      err);
		if (ret)
			goto out_destroy;
	}
	ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/0/schemes/nr_schemes", "0", err);
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
	const struct damon_tracker *t = priv;

	if (!t->running || t->kdamond_pid <= 0)
		return false;
	*index = t->fs.kdamond;
	*pid = t->kdamond_pid;
	return true;
}

void tier__damon_info(void *priv, struct tier__damon_info *out)
{
	const struct damon_tracker *t = priv;

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

/* Scheme s: "stat" on every region; with filter_idx >= 0, only on the
 * regions of target filter_idx. */
static int write_scheme(struct damon_tracker *t, unsigned s, int filter_idx,
			struct tier_err *err)
{
	static const struct {
		const char *file, *val;
	} pattern[] = {
		/* Every region matches: sizes and ages up to the type's max. */
		{ "access_pattern/sz/min", "0" },
		{ "access_pattern/sz/max", "18446744073709551615" },
		{ "access_pattern/nr_accesses/min", "0" },
		{ "access_pattern/nr_accesses/max", "4294967295" },
		{ "access_pattern/age/min", "0" },
		{ "access_pattern/age/max", "4294967295" },
	};
	char rel[256], idx[16];
	size_t i;
	int ret;

	snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/action", s);
	ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, "stat", err);
	for (i = 0; !ret && i < sizeof(pattern) / sizeof(pattern[0]); i++) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/%s", s, pattern[i].file);
		ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, pattern[i].val, err);
	}
	if (!ret && t->has_apply_interval) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/apply_interval_us", s);
		ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, "0", err);
	}
	if (ret || filter_idx < 0)
		return ret;
	snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/nr_filters", s);
	ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, "1", err);
	if (!ret) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/0/type", s);
		ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, "target", err);
	}
	if (!ret) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/0/damon_target_idx", s);
		snprintf(idx, sizeof(idx), "%d", filter_idx);
		ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, idx, err);
	}
	if (!ret) {
		/* Filter out what does NOT match target filter_idx. */
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/0/matching", s);
		ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, "N", err);
	}
	return ret;
}

static int write_targets(struct damon_tracker *t, struct tier_err *err)
{
	char rel[128], val[32];
	size_t i, nr_schemes;
	int ret;

	snprintf(val, sizeof(val), "%zu", t->nr_pids);
	ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/0/targets/nr_targets", val, err);
	for (i = 0; !ret && i < t->nr_pids; i++) {
		snprintf(rel, sizeof(rel), "contexts/0/targets/%zu/pid_target", i);
		snprintf(val, sizeof(val), "%d", (int)t->pids[i]);
		ret = tier__damon_sysfs_kdamond_write(&t->fs, rel, val, err);
	}
	if (ret || t->tracepoint)
		return ret;
	nr_schemes = t->per_target && t->nr_pids > 1 ? t->nr_pids : 1;
	snprintf(val, sizeof(val), "%zu", nr_schemes);
	ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/0/schemes/nr_schemes", val, err);
	for (i = 0; !ret && i < nr_schemes; i++)
		ret = write_scheme(t, (unsigned)i, nr_schemes > 1 ? (int)i : -1, err);
	return ret;
}

static int keep_alive(struct damon_tracker *t, const pid_t *pids, size_t n)
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

static int start_or_commit(struct damon_tracker *t, struct tier_err *err)
{
	uint64_t pid;
	int ret;

	if (t->running && tier__damon_sysfs_is_on(&t->fs)) {
		ret = tier__damon_sysfs_command(&t->fs, "commit", err);
		if (!ret)
			return 0;
		/* Kernels before 6.11 cannot commit every change of targets
		 * online: restart the kdamond instead. */
		tier__damon_sysfs_command(&t->fs, "off", NULL);
	}
	t->running = false;
	ret = tier__damon_sysfs_command(&t->fs, "on", err);
	if (ret == -EBUSY)
		tier_err_prefix(err, "DAMON: the kernel refused to start kdamond %u (another "
				"DAMON user runs exclusively?)", t->fs.kdamond);
	if (ret)
		return ret;
	t->running = true;
	if (!tier__damon_sysfs_read_u64(&t->fs, &pid, NULL, "kdamonds/%u/pid", t->fs.kdamond))
		t->kdamond_pid = (pid_t)pid;
	return 0;
}

static int damon_set_targets(void *priv, const pid_t *pids, size_t n, struct tier_err *err)
{
	struct damon_tracker *t = priv;
	int ret, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		if (keep_alive(t, pids, n))
			return tier_err_set(err, -ENOMEM, "DAMON: out of memory");
		if (!t->nr_pids) {
			if (t->running || tier__damon_sysfs_is_on(&t->fs))
				ret = tier__damon_sysfs_command(&t->fs, "off", err);
			else
				ret = 0;
			t->running = false;
			return ret;
		}
		ret = write_targets(t, err);
		if (ret)
			return ret;
		if (t->tracepoint)	/* events of the old target indexes */
			tier__damon_trace_drain(&t->trace, NULL, NULL);
		ret = start_or_commit(t, err);
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

static void emit(struct damon_tracker *t, struct tier__obs_batch *b, pid_t pid,
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
static int read_tried(struct damon_tracker *t, unsigned s, struct region **v, size_t *nr,
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
static int request_tried(struct damon_tracker *t, struct tier_err *err)
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
static long emit_scheme(struct damon_tracker *t, struct tier__obs_batch *b, size_t s,
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

static int collect_tried(struct damon_tracker *t, struct tier__obs_batch *b,
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
	struct damon_tracker *t;
	struct tier__obs_batch *b;
};

static void trace_line(void *arg, const char *line)
{
	struct trace_arg *a = arg;
	struct damon_tracker *t = a->t;
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
	struct damon_tracker *t = priv;
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
