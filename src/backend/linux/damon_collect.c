/* damon_collect.c - what the DAMON tracker's kdamond saw, as observations
 * of the target processes: from the schemes' tried_regions snapshots, or
 * from the damon_aggregated events on kernels without them.
 *
 * A snapshot: write update_schemes_tried_regions to state (the write
 * returns once DAMON has applied the schemes at the end of the next
 * aggregation, which is why the aggregation is kept short), read
 * schemes/N/tried_regions/M/{start,end,nr_accesses}, report each region
 * as ACCESSED (count = nr_accesses of one aggregation, max = aggregation
 * / sample interval) and write clear_schemes_tried_regions.
 *
 * Which process a tried region belongs to: the tried_regions directory
 * does not say. With one scheme per target (target filters, see
 * damon_kdamond.c) scheme N's tried regions are exactly target N's.
 * Without them one scheme lists every target's regions, target after
 * target, each in address order: a region that starts below the end of
 * the one before begins the next target; when that does not split into
 * exactly one group per target the snapshot is dropped rather than
 * guessed. A trace event names its target's index.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/damon_impl.h"
#include "core/policy.h"

/* Attempts at a snapshot in which every scheme has its regions. */
#define TRIED_ATTEMPTS 2
/* A new kdamond's first snapshot is read no sooner than this many of its
 * aggregations after its start, and at most FIRST_WAIT_MAX_US later than
 * asked. Read sooner, it showed one region of 132 KiB for a 96 MiB hot
 * set in the test guest: its first step, which takes the snapshot whole
 * and moves the hot set at once, moved nothing, and the hot set took 41
 * s to reach the fast tier where it had taken 1 s; whether the
 * aggregation had landed hung on 30 ms of the step's CPU before the read. */
#define FIRST_AGGRS 3
#define FIRST_WAIT_MAX_US 1000000u


static void emit(struct tier__damon_tracker *t, struct tier__obs_batch *b, pid_t pid,
		 const struct tier__damon_region *r)
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
	if (o.count) {
		uint64_t kib = (r->end - r->start) >> 10;

		t->snap.regions++;
		t->snap.kib += kib;
		if (o.count >= max)
			t->snap.full_kib += kib;
		t->snap.weighted_kib += (double)kib * o.count / max;
	}
}

/* ---- tried_regions ------------------------------------------------------ */

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* The numbers of the region directories in the directory path, sorted
 * (address order), into *idx (malloc'd, caller frees). The numbers need
 * not start at 0: 6.12 numbers the regions of all schemes with one
 * counter, so a second scheme's first region may be "13". A missing
 * directory has none. Returns 0 or -errno. */
static int list_tried(const char *path, unsigned **idx, size_t *nr_idx, struct tier_err *err)
{
	size_t cap_idx = 0;
	struct dirent *de;
	int ret = 0;
	DIR *dir;

	*idx = NULL;
	*nr_idx = 0;
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
		if (*nr_idx == cap_idx) {
			size_t c = cap_idx ? cap_idx * 2 : 64;
			unsigned *g = realloc(*idx, c * sizeof(*g));

			if (!g) {
				ret = tier_err_set(err, -ENOMEM, "DAMON: out of memory");
				break;
			}
			*idx = g;
			cap_idx = c;
		}
		(*idx)[(*nr_idx)++] = (unsigned)m;
	}
	closedir(dir);
	if (!ret && *nr_idx)
		qsort(*idx, *nr_idx, sizeof(**idx), cmp_uint);
	return ret;
}

/* Reads schemes/s/tried_regions/ into a growing array, in address
 * order. Returns 0 or -errno. */
static int read_tried(struct tier__damon_tracker *t, unsigned s, struct tier__damon_region **v, size_t *nr,
		      size_t *cap, struct tier_err *err)
{
	char rel[160], path[1024];
	unsigned *idx;
	size_t nr_idx, k;
	int ret;

	snprintf(rel, sizeof(rel), "kdamonds/%u/contexts/0/schemes/%u/tried_regions",
		 t->fs.kdamond, s);
	if (tier__damon_sysfs_path(&t->fs, path, sizeof(path), rel))
		return tier_err_set(err, -ENAMETOOLONG, "DAMON: path too long");
	ret = list_tried(path, &idx, &nr_idx, err);
	if (ret)
		goto out;
	for (k = 0; k < nr_idx; k++) {
		struct tier__damon_region r;
		char base[200];

		snprintf(base, sizeof(base), "%s/%u", rel, idx[k]);
		ret = tier__damon_sysfs_read_u64(&t->fs, &r.start, err, "%s/start", base);
		if (!ret)
			ret = tier__damon_sysfs_read_u64(&t->fs, &r.end, err, "%s/end", base);
		if (!ret)
			ret = tier__damon_sysfs_read_u64(&t->fs, &r.nr_accesses, err,
							 "%s/nr_accesses", base);
		if (ret == -ENOENT) {
			tier_err_clear(err);
			ret = 0;	/* cleared under us */
			break;
		}
		if (ret)
			goto out;
		if (r.end <= r.start)
			continue;
		if (*nr == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			struct tier__damon_region *g = realloc(*v, c * sizeof(*g));

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
	free(idx);
	return ret;
}

/* Asks for a snapshot of the regions. Returns 1 when the kdamond has
 * stopped (every target exited), 0 or -errno. */
/* Around a wait on the kdamond (ctx.wait). */
static void waiting(const struct tier__damon_tracker *t, bool begin)
{
	if (t->wait)
		t->wait(t->wait_arg, begin);
}

static int request_tried(struct tier__damon_tracker *t, struct tier_err *err)
{
	uint64_t t0 = tier__damon_now_us(t);
	int ret;

	waiting(t, true);
	ret = tier__damon_sysfs_command(&t->fs, "update_schemes_tried_regions", err);
	waiting(t, false);
	t->snap.wait_us += tier__damon_now_us(t) - t0;
	t->snap.requests++;

	if (ret && !tier__damon_sysfs_is_on(&t->fs)) {
		t->running = false;
		tier_err_clear(err);
		return 1;
	}
	return ret;
}

/* The nr regions of one scheme over several targets, target after
 * target: split where the address goes back down (a new target starts).
 * When that does not give one group per target, nothing is emitted. */
static void emit_split(struct tier__damon_tracker *t, struct tier__obs_batch *b,
		       const struct tier__damon_region *v, size_t nr)
{
	size_t groups = nr ? 1 : 0, g = 0, i;

	for (i = 1; i < nr; i++)
		if (v[i].start < v[i - 1].end)
			groups++;
	if (groups != t->nr_pids)
		return;		/* cannot tell: dropped */
	for (i = 0; i < nr; i++) {
		if (i && v[i].start < v[i - 1].end)
			g++;
		emit(t, b, t->pids[g], &v[i]);
	}
}

/* The regions v[0, nr) of one target, accessed only (address order),
 * with what lies between and around them as seen unaccessed: DAMON
 * checked those addresses too, and a heatmap's rate is what was seen
 * over what was covered. The policy skips them (no accesses); the
 * translation to pages touches only the mappings they span. */
static void emit_with_gaps(struct tier__damon_tracker *t, struct tier__obs_batch *b, pid_t pid,
			   const struct tier__damon_region *v, size_t nr)
{
	struct tier__damon_region gap = { 0, 0, 0 };
	size_t i;

	for (i = 0; i <= nr; i++) {
		gap.end = i < nr ? v[i].start : UINT64_MAX;
		if (gap.end > gap.start)
			emit(t, b, pid, &gap);
		if (i == nr)
			break;
		emit(t, b, pid, &v[i]);
		gap.start = v[i].end > gap.start ? v[i].end : gap.start;
	}
}

/* Emits the regions of scheme s (all of one target, or every target's
 * in turn). Returns the number of regions, or -errno. */
static void emit_regions(struct tier__damon_tracker *t, struct tier__obs_batch *b, size_t s,
			 const struct tier__damon_region *v, size_t nr)
{
	/* An empty snapshot tells nothing (nothing accessed, or the
	 * scheme not applied yet): no gaps either. */
	if (!tier__damon_accessed_only(t))
		emit_split(t, b, v, nr);
	else if (nr)
		emit_with_gaps(t, b, t->pids[s], v, nr);
}

static long emit_scheme(struct tier__damon_tracker *t, struct tier__obs_batch *b, size_t s,
			struct tier__damon_region **v, size_t *cap, struct tier_err *err)
{
	size_t nr = 0;
	int ret = read_tried(t, (unsigned)s, v, &nr, cap, err);

	if (ret)
		return ret;
	emit_regions(t, b, s, *v, nr);
	return (long)nr;
}

/* Keeps the schemes' regions got[s][0, got_nr[s]) as the last snapshot
 * read whole (t->last), to be restated while the next one is made. */
static void keep_last(struct tier__damon_tracker *t, struct tier__damon_region *const *got,
		      const size_t *got_nr, size_t nr_schemes)
{
	size_t total = 0, s, *off;

	t->last_us = 0;
	for (s = 0; s < nr_schemes; s++)
		total += got_nr[s];
	if (total > t->last_cap) {
		struct tier__damon_region *g = realloc(t->last, total * sizeof(*g));

		if (!g)
			return;
		t->last = g;
		t->last_cap = total;
	}
	off = realloc(t->last_off, (nr_schemes + 1) * sizeof(*off));
	if (!off)
		return;
	t->last_off = off;
	t->last_nr = 0;
	for (s = 0; s < nr_schemes; s++) {
		off[s] = t->last_nr;
		if (got_nr[s])
			memcpy(t->last + t->last_nr, got[s], got_nr[s] * sizeof(*got[s]));
		t->last_nr += got_nr[s];
	}
	off[nr_schemes] = t->last_nr;
	t->last_schemes = nr_schemes;
	t->last_us = tier__damon_now_us(t);
}

void tier__damon_collect_release(struct tier__damon_tracker *t)
{
	free(t->last);
	free(t->last_off);
	t->last = NULL;
	t->last_off = NULL;
	t->last_nr = t->last_cap = t->last_schemes = 0;
	t->last_us = 0;
}

/* The last snapshot handed on again (a collect that comes while the next
 * is being made ahead: the last aggregation known speaks for the time
 * since, as a snapshot always does). */
static void restate(struct tier__damon_tracker *t, struct tier__obs_batch *b)
{
	size_t s;

	for (s = 0; s < t->last_schemes; s++)
		emit_regions(t, b, s, t->last + t->last_off[s], t->last_off[s + 1] - t->last_off[s]);
	t->snap.restated = true;
}

/* Until a new kdamond has had FIRST_AGGRS aggregations, a wait (its
 * thread runs meanwhile: on one CPU, the step's own work would hold it
 * back). */
static void await_first_snapshot(struct tier__damon_tracker *t)
{
	const struct tier__damon_hooks *h = &t->fs.hooks;
	uint64_t due, now, wait;

	if (!t->started_us)
		return;
	due = t->started_us + FIRST_AGGRS * t->aggr_us;
	now = tier__damon_now_us(t);
	t->started_us = 0;
	if (now >= due)
		return;
	wait = due - now < FIRST_WAIT_MAX_US ? due - now : FIRST_WAIT_MAX_US;
	t->snap.wait_us += wait;
	waiting(t, true);
	if (h->sleep_us)
		h->sleep_us(h->ctx, wait);
	else if (!h->now_us)
		usleep((useconds_t)wait);
	waiting(t, false);
}

int tier__damon_collect_tried(struct tier__damon_tracker *t, struct tier__obs_batch *b,
			      struct tier_err *err)
{
	struct tier__damon_region *v = NULL, **got;
	size_t cap = 0, s, nr_schemes, missing, *got_nr;
	bool *done;
	int ret = 0, attempt, took;

	await_first_snapshot(t);

	nr_schemes = tier__damon_nr_schemes(t);
	took = tier__damon_ahead_take(t);
	if (took == TIER__DAMON_AHEAD_RESTATE) {
		restate(t, b);
		return 0;
	}
	done = calloc(nr_schemes, sizeof(*done));
	got = calloc(nr_schemes, sizeof(*got));
	got_nr = calloc(nr_schemes, sizeof(*got_nr));
	if (!done || !got || !got_nr) {
		ret = tier_err_set(err, -ENOMEM, "DAMON: out of memory");
		goto out;
	}
	/* The kernel may hand back a scheme's snapshot empty when the
	 * command returns before the kdamond applied that scheme (seen on
	 * 6.12 in the test guest: the first seconds, and the second and
	 * later schemes of several targets), and a scheme of accessed
	 * regions only is empty when its target touched nothing in the
	 * aggregation. Ask again once for those. */
	for (attempt = 0, missing = nr_schemes; attempt < TRIED_ATTEMPTS && missing; attempt++) {
		/* The first from a request made ahead where one stands. */
		ret = attempt || took != TIER__DAMON_AHEAD_READY ? request_tried(t, err) : 0;
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
			n = emit_scheme(t, b, s, &v, &cap, err);
			if (n < 0) {
				ret = (int)n;
				goto out;
			}
			if (n) {
				done[s] = true;
				missing--;
				got[s] = v;	/* kept for keep_last() */
				got_nr[s] = (size_t)n;
				v = NULL;
				cap = 0;
			}
		}
	}
	keep_last(t, got, got_nr, nr_schemes);
	/* 6.12 hands the clear to the kdamond and polls for it too: the
	 * thread that asks ahead makes it, where there is one. */
	ret = tier__damon_ahead_clear(t) ? 0 :
	      tier__damon_sysfs_command(&t->fs, "clear_schemes_tried_regions", err);
out:
	for (s = 0; got && s < nr_schemes; s++)
		free(got[s]);
	free(got);
	free(got_nr);
	free(v);
	free(done);
	return ret;
}

/* ---- damon_aggregated events -------------------------------------------- */

struct trace_arg {
	struct tier__damon_tracker *t;
	struct tier__obs_batch *b;
};

static void trace_line(void *arg, const char *line)
{
	struct trace_arg *a = arg;
	struct tier__damon_tracker *t = a->t;
	struct tier__damon_trace_rec rec;
	struct tier__damon_region r;

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

void tier__damon_collect_trace(struct tier__damon_tracker *t, struct tier__obs_batch *b)
{
	struct trace_arg a = { .t = t, .b = b };

	tier__damon_trace_drain(&t->trace, trace_line, &a);
}
