/* damon_kdamond.c - the DAMON tracker's kdamond: taking one, setting up
 * its context, its targets and schemes, starting and stopping it.
 *
 * Setup (Documentation/admin-guide/mm/damon/usage.rst), under
 * <sysfs>/kernel/mm/damon/admin:
 *   kdamonds/K                     the first kdamond whose state is "off",
 *                                  else nr_kdamonds raised by one (a
 *                                  running kdamond is never taken)
 *   contexts/nr_contexts = 1, contexts/0/operations = vaddr
 *   monitoring_attrs/intervals     sample 5 ms; aggregation a tenth of the
 *                                  collect interval within [100 ms, 1 s];
 *                                  update max(1 s, aggregation); the sample
 *                                  interval then grows (up to 100 ms) and
 *                                  shrinks back to keep the kdamond within
 *                                  its CPU share, committed online
 *   monitoring_attrs/nr_regions    min 200, max 2000
 *   targets/N/pid_target           one target per process
 *   schemes/N                      action "stat" with access_pattern maxima
 *                                  raised (they default to 0..0, matching
 *                                  nothing) and nr_accesses/min 1: every
 *                                  region accessed in its aggregation,
 *                                  apply_interval_us 0 (= every aggregation;
 *                                  6.7+) so interval auto-tuning cannot
 *                                  starve it
 *
 * With several targets and kernels that have DAMOS target filters
 * (filters/N/damon_target_idx, 6.6+), scheme N carries a filter that
 * rejects every region not of target N, so scheme N's tried regions are
 * exactly target N's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backend/linux/clock.h"
#include "backend/linux/damon_impl.h"
#include "backend/linux/procs.h"

#define DAMON_SAMPLE_US		5000u
#define DAMON_AGGR_MIN_US	100000u
#define DAMON_AGGR_MAX_US	1000000u
#define DAMON_UPDATE_MIN_US	1000000u
/* The longest sample interval the CPU share may ask for, the samples an
 * aggregation keeps at least (so that nr_accesses still tells a rate), and
 * the window the share is measured over. */
#define DAMON_SAMPLE_MAX_US	100000u
#define DAMON_MIN_SAMPLES	10u
#define DAMON_SHARE_WINDOW_US	3000000u
/* A new kdamond's windows are shorter until one finds it within its
 * share: it starts at DAMON's 5 ms samples, which under TCG took 40-50%
 * of a core, and the first correction (20 times the sample interval at
 * most) can leave it far over still - in the hardware-like guest 20% of
 * a core at 75 ms samples, for the 3 s of a steady window, while the
 * workload it watches, on the same CPU, made its first hot pages known. */
#define DAMON_SHARE_SHORT_WINDOW_US	1000000u
/* What a correction aims at, as a share of the kdamond's part, and below
 * what share of it the kdamond may take more. The aim is below the part,
 * so that the kdamond's cost - noisy from window to window - averages
 * within it: with a band from the part up to 1.25 times it, the guest
 * bench's kdamond took 1.75-2.3% of a core over whole runs, against a
 * part of 1.67%. A kdamond at
 * less than LOW of its part doubles its cost and stays within the aim. */
#define DAMON_SHARE_AIM		0.8
#define DAMON_SHARE_LOW		0.4
/* The most the sample interval may grow at once (5 ms to 100 ms). */
#define DAMON_SAMPLE_MAX_GROWTH	20.0
/* At least 200 regions: DAMON checks one page per region per sample, and
 * merges neighbours whose counts agree. Over a few big regions a hot set
 * of pages each touched tens of times a second (random updates over 100
 * MiB) shows as 0 or 1 of 20 checks, indistinguishable from the cold
 * pages around it, and the regions never split along it; at 200 a 1 GiB
 * process starts in 5 MiB regions. */
#define DAMON_MIN_REGIONS	200u
#define DAMON_MAX_REGIONS	2000u
/* The fewest regions the CPU share may leave DAMON (twice the least). */
#define DAMON_MAX_REGIONS_LEAST	400u

/* ---- taking a kdamond --------------------------------------------------- */

int tier__damon_kdamond_take(struct tier__damon_tracker *t, struct tier_err *err)
{
	struct tier__damon_sysfs *fs = &t->fs;
	char buf[32];
	uint64_t nr;
	unsigned i;
	int ret;

	ret = tier__damon_sysfs_read_u64(fs, &nr, err, "kdamonds/nr_kdamonds");
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		if (tier__damon_sysfs_read_line(fs, buf, sizeof(buf), NULL, "kdamonds/%u/state", i))
			continue;
		if (!strcmp(buf, "off")) {
			fs->kdamond = i;
			return 0;
		}
	}
	/* Every existing kdamond runs (or there is none): add one. The
	 * kernel re-creates the kdamond directories on this write and
	 * refuses it (EBUSY) while any of them runs. */
	ret = tier__damon_sysfs_write_u64(fs, nr + 1, err, "kdamonds/nr_kdamonds");
	if (ret == -EBUSY)
		return tier_err_set(err, ret,
				    "DAMON: all %" PRIu64 " kdamonds run for another user, and "
				    "the kernel adds a kdamond only while none runs", nr);
	if (ret)
		return ret;
	fs->kdamond = (unsigned)nr;
	t->nr_before = (unsigned)nr;
	t->grew = true;
	if (!tier__damon_sysfs_exists(fs, "kdamonds/%u/state", fs->kdamond))
		return tier_err_set(err, -ENOENT, "DAMON: kdamonds/%u missing after raising "
				    "nr_kdamonds to %" PRIu64, fs->kdamond, nr + 1);
	return 0;
}

void tier__damon_kdamond_give_back(struct tier__damon_tracker *t)
{
	uint64_t nr = 0;

	if (t->grew && !tier__damon_sysfs_read_u64(&t->fs, &nr, NULL, "kdamonds/nr_kdamonds") &&
	    nr == t->fs.kdamond + 1)
		tier__damon_sysfs_write_u64(&t->fs, t->nr_before, NULL, "kdamonds/nr_kdamonds");
}

/* ---- its context -------------------------------------------------------- */

/* The intervals for a sample interval: the aggregation the collect
 * interval asked for (t->base_aggr_us), or longer to keep
 * DAMON_MIN_SAMPLES in it (up to DAMON_AGGR_MAX_US), a whole number of
 * samples; with max_regions regions at most. */
static struct tier__damon_intervals intervals_for(const struct tier__damon_tracker *t,
						  uint64_t sample_us, unsigned max_regions)
{
	struct tier__damon_intervals iv = { .sample_us = sample_us, .max_regions = max_regions };
	uint64_t aggr = t->base_aggr_us;

	if (aggr < sample_us * DAMON_MIN_SAMPLES)
		aggr = sample_us * DAMON_MIN_SAMPLES;
	if (aggr > DAMON_AGGR_MAX_US)
		aggr = DAMON_AGGR_MAX_US;
	iv.aggr_us = aggr / sample_us * sample_us;
	iv.update_us = iv.aggr_us > DAMON_UPDATE_MIN_US ? iv.aggr_us : DAMON_UPDATE_MIN_US;
	return iv;
}

static struct tier__damon_intervals intervals_of(const struct tier__damon_tracker *t)
{
	return (struct tier__damon_intervals){ .sample_us = t->sample_us,
					       .aggr_us = t->aggr_us,
					       .update_us = t->update_us,
					       .max_regions = t->max_regions };
}

static void set_intervals(struct tier__damon_tracker *t, const struct tier__damon_intervals *iv)
{
	t->sample_us = iv->sample_us;
	t->aggr_us = iv->aggr_us;
	t->update_us = iv->update_us;
	t->max_regions = iv->max_regions;
}

static void pick_intervals(struct tier__damon_tracker *t, uint64_t interval_us)
{
	struct tier__damon_intervals iv;
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
	t->base_aggr_us = aggr;
	t->share_percent = -1;
	iv = intervals_for(t, DAMON_SAMPLE_US, DAMON_MAX_REGIONS);
	set_intervals(t, &iv);
}

/* One context, of vaddr operations. */
static int write_context(struct tier__damon_tracker *t, struct tier_err *err)
{
	struct tier__damon_sysfs *fs = &t->fs;
	char buf[256];
	int ret;

	ret = tier__damon_sysfs_kdamond_write(fs, "contexts/nr_contexts", "1", err);
	if (ret)
		return ret;
	if (!tier__damon_sysfs_read_line(fs, buf, sizeof(buf), NULL,
					 "kdamonds/%u/contexts/0/avail_operations", fs->kdamond) &&
	    !strstr(buf, "vaddr"))
		return tier_err_set(err, -EOPNOTSUPP,
				    "DAMON: no vaddr operations (avail_operations: %s; kernel "
				    "without CONFIG_DAMON_VADDR)", buf);
	return tier__damon_sysfs_kdamond_write(fs, "contexts/0/operations", "vaddr", err);
}

static int write_monitoring_attrs(struct tier__damon_tracker *t, struct tier_err *err)
{
	const struct {
		const char *file;
		uint64_t val;
	} attrs[] = {
		{ "intervals/sample_us", t->sample_us },
		{ "intervals/aggr_us", t->aggr_us },
		{ "intervals/update_us", t->update_us },
		{ "nr_regions/min", DAMON_MIN_REGIONS },
		{ "nr_regions/max", t->max_regions },
	};
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < sizeof(attrs) / sizeof(attrs[0]); i++)
		ret = tier__damon_sysfs_write_u64(&t->fs, attrs[i].val, err,
						  "kdamonds/%u/contexts/0/monitoring_attrs/%s",
						  t->fs.kdamond, attrs[i].file);
	return ret;
}

/* What this kernel's schemes offer, seen on a scratch scheme. */
static int detect_schemes(struct tier__damon_tracker *t, struct tier_err *err)
{
	struct tier__damon_sysfs *fs = &t->fs;
	int ret;

	ret = tier__damon_sysfs_kdamond_write(fs, "contexts/0/schemes/nr_schemes", "1", err);
	if (ret)
		return ret;
	t->tracepoint = !tier__damon_sysfs_exists(fs, "kdamonds/%u/contexts/0/schemes/0/"
						  "tried_regions", fs->kdamond);
	t->has_apply_interval = tier__damon_sysfs_exists(fs, "kdamonds/%u/contexts/0/schemes/0/"
							 "apply_interval_us", fs->kdamond);
	if (!t->tracepoint &&
	    tier__damon_sysfs_exists(fs, "kdamonds/%u/contexts/0/schemes/0/filters/nr_filters",
				     fs->kdamond)) {
		ret = tier__damon_sysfs_kdamond_write(fs, "contexts/0/schemes/0/filters/nr_filters",
						      "1", err);
		if (ret)
			return ret;
		t->per_target = tier__damon_sysfs_exists(fs, "kdamonds/%u/contexts/0/schemes/0/"
							 "filters/0/damon_target_idx",
							 fs->kdamond);
		ret = tier__damon_sysfs_kdamond_write(fs, "contexts/0/schemes/0/filters/nr_filters",
						      "0", err);
		if (ret)
			return ret;
	}
	return tier__damon_sysfs_kdamond_write(fs, "contexts/0/schemes/nr_schemes", "0", err);
}

int tier__damon_kdamond_setup(struct tier__damon_tracker *t, uint64_t interval_us,
			      struct tier_err *err)
{
	int ret;

	pick_intervals(t, interval_us);
	ret = write_context(t, err);
	if (!ret)
		ret = write_monitoring_attrs(t, err);
	if (!ret)
		ret = tier__damon_sysfs_kdamond_write(&t->fs, "contexts/0/targets/nr_targets", "0",
						      err);
	if (!ret)
		ret = detect_schemes(t, err);
	return ret;
}

/* ---- targets and schemes ------------------------------------------------ */

/* Scheme s: "stat" on every region that was accessed in its aggregation;
 * with filter_idx >= 0, only on the regions of target filter_idx.
 *
 * Regions DAMON saw no access in are left out of the snapshot (their
 * nr_accesses 0 tells the policy nothing: a page's rates decay without
 * observations), so that a step reads the regions in use, not every
 * region of the managed memory: three sysfs files a region, 20-30 us
 * each under TCG; the collect reports the gaps between them as seen
 * unaccessed. Except where one scheme lists several targets' regions
 * (tier__damon_accessed_only()). */
static int write_scheme(struct tier__damon_tracker *t, unsigned s, int filter_idx,
			struct tier_err *err)
{
	static const struct {
		const char *file, *val;
	} pattern[] = {
		/* Sizes and ages up to the type's max. */
		{ "access_pattern/sz/min", "0" },
		{ "access_pattern/sz/max", "18446744073709551615" },
		{ "access_pattern/nr_accesses/min", NULL },	/* 1, or 0 (above) */
		{ "access_pattern/nr_accesses/max", "4294967295" },
		{ "access_pattern/age/min", "0" },
		{ "access_pattern/age/max", "4294967295" },
	};
	const char *min_accesses = tier__damon_accessed_only(t) ? "1" : "0";
	struct tier__damon_sysfs *fs = &t->fs;
	char rel[256], idx[16];
	size_t i;
	int ret;

	snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/action", s);
	ret = tier__damon_sysfs_kdamond_write(fs, rel, "stat", err);
	for (i = 0; !ret && i < sizeof(pattern) / sizeof(pattern[0]); i++) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/%s", s, pattern[i].file);
		ret = tier__damon_sysfs_kdamond_write(fs, rel,
						      pattern[i].val ? pattern[i].val : min_accesses,
						      err);
	}
	if (!ret && t->has_apply_interval) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/apply_interval_us", s);
		ret = tier__damon_sysfs_kdamond_write(fs, rel, "0", err);
	}
	if (ret || filter_idx < 0)
		return ret;
	snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/nr_filters", s);
	ret = tier__damon_sysfs_kdamond_write(fs, rel, "1", err);
	if (!ret) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/0/type", s);
		ret = tier__damon_sysfs_kdamond_write(fs, rel, "target", err);
	}
	if (!ret) {
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/0/damon_target_idx", s);
		snprintf(idx, sizeof(idx), "%d", filter_idx);
		ret = tier__damon_sysfs_kdamond_write(fs, rel, idx, err);
	}
	if (!ret) {
		/* Filter out what does NOT match target filter_idx. */
		snprintf(rel, sizeof(rel), "contexts/0/schemes/%u/filters/0/matching", s);
		ret = tier__damon_sysfs_kdamond_write(fs, rel, "N", err);
	}
	return ret;
}

int tier__damon_kdamond_write_targets(struct tier__damon_tracker *t, struct tier_err *err)
{
	struct tier__damon_sysfs *fs = &t->fs;
	char rel[128], val[32];
	size_t i, nr_schemes;
	int ret;

	snprintf(val, sizeof(val), "%zu", t->nr_pids);
	ret = tier__damon_sysfs_kdamond_write(fs, "contexts/0/targets/nr_targets", val, err);
	for (i = 0; !ret && i < t->nr_pids; i++) {
		snprintf(rel, sizeof(rel), "contexts/0/targets/%zu/pid_target", i);
		snprintf(val, sizeof(val), "%d", (int)t->pids[i]);
		ret = tier__damon_sysfs_kdamond_write(fs, rel, val, err);
	}
	if (ret || t->tracepoint)
		return ret;
	nr_schemes = tier__damon_nr_schemes(t);
	snprintf(val, sizeof(val), "%zu", nr_schemes);
	ret = tier__damon_sysfs_kdamond_write(fs, "contexts/0/schemes/nr_schemes", val, err);
	for (i = 0; !ret && i < nr_schemes; i++)
		ret = write_scheme(t, (unsigned)i, nr_schemes > 1 ? (int)i : -1, err);
	return ret;
}

/* ---- running it --------------------------------------------------------- */

static int kdamond_start(struct tier__damon_tracker *t, struct tier_err *err)
{
	struct tier__damon_sysfs *fs = &t->fs;
	uint64_t pid;
	double cpu;
	int ret;

	if (t->running && tier__damon_sysfs_is_on(fs)) {
		ret = tier__damon_sysfs_command(fs, "commit", err);
		if (!ret)
			return 0;
		/* Kernels before 6.11 cannot commit every change of targets
		 * online: restart the kdamond instead. */
		tier__damon_sysfs_command(fs, "off", NULL);
	}
	t->running = false;
	ret = tier__damon_sysfs_command(fs, "on", err);
	if (ret == -EBUSY)
		tier_err_prefix(err, "DAMON: the kernel refused to start kdamond %u (another "
				"DAMON user runs exclusively?)", fs->kdamond);
	if (ret)
		return ret;
	t->running = true;
	t->started_us = tier__damon_now_us(t);
	tier__damon_ahead_cancel(t);
	if (!tier__damon_sysfs_read_u64(fs, &pid, NULL, "kdamonds/%u/pid", fs->kdamond))
		t->kdamond_pid = (pid_t)pid;
	/* Its CPU share is measured from its start: at DAMON's 5 ms samples
	 * a new kdamond took 30% of a core under TCG, and the first upkeep
	 * comes only after the step that catalogues the address space. */
	if (t->kdamond_pid > 0 && t->kdamond_pid != t->share_pid &&
	    !tier_linux_cpu_seconds(&t->roots.ctx, t->kdamond_pid, &cpu)) {
		t->share_pid = t->kdamond_pid;
		t->share_since_us = tier__damon_now_us(t);
		t->share_cpu_s = cpu;
		t->share_short = true;
	}
	return 0;
}

int tier__damon_kdamond_start(struct tier__damon_tracker *t, struct tier_err *err)
{
	int ret;

	tier__damon_ahead_hold(t, true);
	ret = kdamond_start(t, err);
	tier__damon_ahead_hold(t, false);
	return ret;
}

int tier__damon_kdamond_stop(struct tier__damon_tracker *t, struct tier_err *err)
{
	int ret = 0;

	tier__damon_ahead_hold(t, true);
	if (t->running || tier__damon_sysfs_is_on(&t->fs))
		ret = tier__damon_sysfs_command(&t->fs, "off", err);
	t->running = false;
	tier__damon_ahead_cancel(t);
	tier__damon_ahead_hold(t, false);
	return ret;
}

/* ---- its CPU share ------------------------------------------------------ */

static int write_intervals(struct tier__damon_tracker *t, const struct tier__damon_intervals *iv,
			   struct tier_err *err)
{
	const struct {
		const char *file;
		uint64_t val;
	} attrs[] = {
		{ "sample_us", iv->sample_us },
		{ "aggr_us", iv->aggr_us },
		{ "update_us", iv->update_us },
	};
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < sizeof(attrs) / sizeof(attrs[0]); i++)
		ret = tier__damon_sysfs_write_u64(&t->fs, attrs[i].val, err,
						  "kdamonds/%u/contexts/0/monitoring_attrs/intervals/%s",
						  t->fs.kdamond, attrs[i].file);
	if (!ret)
		ret = tier__damon_sysfs_write_u64(&t->fs, iv->max_regions, err,
						  "kdamonds/%u/contexts/0/monitoring_attrs/nr_regions/max",
						  t->fs.kdamond);
	return ret;
}

int tier__damon_kdamond_commit_intervals(struct tier__damon_tracker *t,
					 const struct tier__damon_intervals *want,
					 const struct tier__damon_intervals *was)
{
	struct tier_err err = { "" };
	int ret;

	ret = write_intervals(t, want, &err);
	if (!ret)
		ret = tier__damon_sysfs_command(&t->fs, "commit", &err);
	/* The running kdamond keeps its attributes; so do the files. */
	if (ret)
		write_intervals(t, was, NULL);
	return ret;
}

void tier__damon_kdamond_set_intervals(struct tier__damon_tracker *t,
				       const struct tier__damon_intervals *iv)
{
	set_intervals(t, iv);
	t->interval_changes++;
	t->last_us = 0;		/* its regions counted in the old samples */
	/* The next window measures the new intervals alone. */
	t->share_restart = true;
}

void tier__damon_kdamond_keep_share(struct tier__damon_tracker *t)
{
	double want = t->roots.ctx.kthread_cpu_percent, cpu, pct;
	uint64_t now = tier__damon_now_us(t);
	uint64_t sample = t->sample_us;
	unsigned regions = t->max_regions;
	struct tier__damon_intervals iv, was;

	/* A change the tierd-damon thread commits is taken in first; while
	 * it is under way, no other. */
	if (tier__damon_ahead_sync(t))
		return;
	if (want <= 0 || !t->running || t->kdamond_pid <= 0 ||
	    tier_linux_cpu_seconds(&t->roots.ctx, t->kdamond_pid, &cpu))
		return;
	if (t->share_restart) {
		/* New intervals since the window began: it starts again. */
		t->share_restart = false;
		t->share_since_us = now;
		t->share_cpu_s = cpu;
		return;
	}
	/* A new kdamond (restarted for new targets) starts a new window. */
	if (t->share_pid != t->kdamond_pid || !t->share_since_us || cpu < t->share_cpu_s) {
		t->share_pid = t->kdamond_pid;
		t->share_since_us = now;
		t->share_cpu_s = cpu;
		t->share_short = true;
		return;
	}
	if (now - t->share_since_us <
	    (t->share_short ? DAMON_SHARE_SHORT_WINDOW_US : DAMON_SHARE_WINDOW_US))
		return;
	pct = (cpu - t->share_cpu_s) * 1e8 / (double)(now - t->share_since_us);
	if (pct <= want)
		t->share_short = false;
	t->share_percent = pct;
	t->share_since_us = now;
	t->share_cpu_s = cpu;
	/* The cost is inversely proportional to the sample interval and
	 * proportional to the regions checked at each sample. Over the
	 * share, a longer sample interval that brings it to DAMON_SHARE_AIM
	 * of it (at most 20 times at once), and once it is at its longest
	 * fewer regions at most (down to DAMON_MAX_REGIONS_LEAST; 2000
	 * regions at 100 ms samples still took 5-11% of a core in the test
	 * guest); below DAMON_SHARE_LOW of it, the regions back first
	 * (resolution), then shorter samples, by half; between the two, a
	 * dead band against noise. */
	if (pct > want) {
		double over = pct / (want * DAMON_SHARE_AIM);

		if (over > DAMON_SAMPLE_MAX_GROWTH)
			over = DAMON_SAMPLE_MAX_GROWTH;

		sample = (uint64_t)((double)t->sample_us * over);
		if (sample > DAMON_SAMPLE_MAX_US) {
			/* What the longest samples leave over, from the regions. */
			regions = (unsigned)((double)t->max_regions * DAMON_SAMPLE_MAX_US /
					     (double)sample);
			sample = DAMON_SAMPLE_MAX_US;
		}
	} else if (pct < want * DAMON_SHARE_LOW && t->max_regions < DAMON_MAX_REGIONS) {
		regions = t->max_regions * 2;
	} else if (pct < want * DAMON_SHARE_LOW && t->sample_us > DAMON_SAMPLE_US) {
		sample = t->sample_us / 2;
	} else {
		return;
	}
	sample = (sample + 500) / 1000 * 1000;
	if (sample < DAMON_SAMPLE_US)
		sample = DAMON_SAMPLE_US;
	if (sample > DAMON_SAMPLE_MAX_US)
		sample = DAMON_SAMPLE_MAX_US;
	if (regions < DAMON_MAX_REGIONS_LEAST)
		regions = DAMON_MAX_REGIONS_LEAST;
	if (regions > DAMON_MAX_REGIONS)
		regions = DAMON_MAX_REGIONS;
	if (sample == t->sample_us && regions == t->max_regions)
		return;
	iv = intervals_for(t, sample, regions);
	was = intervals_of(t);
	/* 6.12 answers a commit at the end of the kdamond's aggregation (up
	 * to a second here) and polls for it in 100 ms sleeps: the thread
	 * that asks for snapshots makes it, where there is one, and the
	 * collect takes the new intervals in once it is made. */
	if (tier__damon_ahead_intervals(t, &iv, &was))
		return;
	tier__damon_ahead_hold(t, true);
	if (!tier__damon_kdamond_commit_intervals(t, &iv, &was)) {
		tier__damon_kdamond_set_intervals(t, &iv);
		t->share_restart = false;	/* the window began now */
	}
	tier__damon_ahead_hold(t, false);
}
