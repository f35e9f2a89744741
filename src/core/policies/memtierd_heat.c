/* memtierd_heat.c - intel/memtierd's heat policy re-implemented as a core
 * policy, after github.com/intel/memtierd pkg/memtier/policy_heat.go,
 * counters_heatmap.go, mover.go, page.go and tracker_softdirty.go (checked
 * at commit 17dc462 and the earlier policy_heat.go revisions).
 *
 * What memtierd does, and what this file does the same way:
 *  - The tracker splits the address space into regions of PagesInRegion
 *    pages (softdirty default 512) and counts, per scan, the written
 *    (softdirty) or accessed (idlepage) pages of each region, at most
 *    MaxCountPerRegion per scan (0 = all). tiersim's softdirty/idle bit scan
 *    runs before every tick, so the tick is the tracker's ScanIntervalMs.
 *  - Every IntervalMs the policy turns the counters of every region into a
 *    heat (Heatmap.UpdateFromCounters): heat = count / pages, capped at
 *    HeatMax, plus the old heat times HeatRetention ^ seconds since its last
 *    update, capped again. A range's `created` time is its first update.
 *  - Heat class = int(HeatClasses * heat / HeatMax), at most HeatClasses-1.
 *    HeatNumas maps a class to a node list; unmapped classes stay put.
 *  - New moves are planned only when the mover has no task left
 *    (Mover.TaskCount() == 0), on one of two paths (startMoves()):
 *    * no NumaSize (startMovesNoLimits): ranges in address order; a range is
 *      skipped until it is 20 s old (`timestamp - hr.created < 20 s`, "has
 *      the range stable (old) enough?") and when not updated for 10 s; the
 *      destination is always numas[0], the first node of the class's list
 *      ("TODO: calculate numas in mems_allowed"), whatever its free memory;
 *      the task holds the range's pages not on that node. This is the
 *      measured "a range is not moved until 20 s after it is first seen".
 *    * NumaSize set (startMovesFillFastFree): ranges hottest first; the
 *      node a range is on comes from the policy's own record (addrDatas),
 *      found out with move_pages status only while unknown; the target is
 *      the class node with the most NumaSize quota left (unlimited nodes
 *      count as 0 left, so the first of them wins); a range that does not
 *      fit is skipped and stays where it is (the NumaSize comment promises
 *      a spill to lower classes; the code has none), and the check needs
 *      room for twice the range (destFree already has the range
 *      subtracted). A task records the range as on its target at
 *      once (SetData), so a move that fails with ENOMEM is remembered as
 *      done and never retried: the measured stall.
 *      The discovery also adds each run's pages to the node of the run
 *      after it (p.numaUsed[node] in the loop), as upstream does.
 *  - The mover (mover.go) is a stack: it pops the task added last, moves
 *    count = Bandwidth MB/s * IntervalMs pages (as page.go MoveTo: one
 *    move_pages call; ENOMEM pages are only counted), re-queues the task
 *    while it holds more than `count` pages in all (Offset(count), not
 *    Offset(offset + count): one extra empty turn per long task), and sleeps
 *    IntervalMs between turns. Bandwidth 0 gives count 0: every task is
 *    dropped as blocked, nothing moves. Defaults {"IntervalMs":10,
 *    "Bandwidth":100}.
 *
 * Which path: current upstream (17dc462) enters every HeatNumas node into
 * numaSize as unlimited, which takes every configuration into
 * FillFastFree: the default here (seed_numa_size_from_heat_numas). The
 * guest measurements (20 s gate with a plain HeatNumas config; ENOMEM
 * stalls with NumaSize) follow the selection of upstream's earlier
 * policy_heat.go, where numaSize holds only NumaSize entries: the
 * memtierd-heat-gated policy.
 *
 * Configuration (tier__memtierd_heat_defaults()): the package defaults
 * where memtierd has them: heatmap HeatMax 1.0, HeatRetention 0.9513,
 * HeatClasses 10 (HeatmapConfigDefaults); mover 10 ms, 100 MB/s
 * (moverDefaults); softdirty tracker PagesInRegion 512, ScanIntervalMs 5000
 * (trackerSoftDirtyDefaults; the tick). memtierd has no default for the
 * rest, which come from its README's heat example: IntervalMs 10000,
 * MaxCountPerRegion 0 (the tracker's default 1 reports at most one written
 * page per region and scan), HeatNumas shaped as there: the hottest class to
 * the fastest tier's nodes, the coldest to the slowest tier's, one class in
 * between per intermediate tier, the rest unmoved. No NumaSize.
 *
 * Simplifications: one address space (memtierd keeps one heatmap per pid);
 * the mover's 10 ms turns of one tick run at the tick, not spread over it;
 * the forecaster and swap are not modelled.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/policies/peers.h"
#include "core/policy.h"

#define SCAN_INTERVAL_US 5000000	/* softdirty ScanIntervalMs 5000 = the tick */
#define STABLE_AFTER_US 20000000	/* policy_heat.go: 20 * time.Second */
#define FRESH_WITHIN_US 10000000	/* policy_heat.go: 10 * time.Second */
#define PAGE_BYTES_GO 4096		/* constPagesize */
#define NODE_UNKNOWN 0xff		/* NodeUndefined */
#define NUMA_SIZE_UNLIMITED (-1)	/* constNumaSizeUnlimited */
#define NUMA_SIZE_ABSENT INT64_MIN	/* no map entry: reads as 0 */

struct mtd_range {
	double heat;
	int64_t created_us;	/* -1: not in the heatmap yet */
	int64_t updated_us;
	double counter;		/* tracker counter since the last round */
	uint64_t scan_cnt;	/* pages counted in the current scan */
};

struct mtd_task {
	uint64_t first;		/* pages in pool[first .. first + nr) */
	uint64_t nr;
	uint64_t offset;
	int dest;
};

struct mtd {
	const struct tier_env *env;
	struct tier_memtierd_heat_config cfg;
	uint64_t nr_ranges;
	struct mtd_range *ranges;
	bool fill_fast_free;
	int64_t numa_size[TIER_MAX_NODES];
	int64_t numa_used[TIER_MAX_NODES];
	uint8_t *belief;		/* addrDatas: node per page as recorded */
	int64_t last_round_us;
	int64_t last_tick_us;
	bool scanned;			/* a tracker scan since the last round */
	/* mover */
	struct mtd_task *tasks;
	size_t nr_tasks, cap_tasks;
	uint64_t *pool;
	uint64_t pool_len;
	uint64_t credit_us;
	/* scratch */
	uint64_t *order;
	uint64_t *mv_pages;
	int *mv_nodes;
	int *mv_status;
	size_t batch;
	int move_err;
};

static uint64_t range_first(const struct mtd *d, uint64_t r)
{
	return r * d->cfg.pages_in_region;
}

static uint64_t range_len(const struct mtd *d, uint64_t r)
{
	uint64_t first = range_first(d, r), end = first + d->cfg.pages_in_region;

	return (end > d->env->nr_pages ? d->env->nr_pages : end) - first;
}

/* Heatmap.HeatClass() */
static unsigned heat_class(const struct mtd *d, double heat)
{
	long c;

	if (d->cfg.heat_max == 0)
		return 0;
	c = (long)((double)d->cfg.heat_classes * heat / d->cfg.heat_max);
	if (c >= (long)d->cfg.heat_classes)
		c = (long)d->cfg.heat_classes - 1;
	return c < 0 ? 0 : (unsigned)c;
}

static int64_t numa_size_of(const struct mtd *d, int node)
{
	int64_t v = d->numa_size[node];

	return v == NUMA_SIZE_ABSENT ? 0 : v;
}

void tier__memtierd_heat_defaults(const struct tier_env *env,
				  struct tier_memtierd_heat_config *cfg)
{
	const struct tier_topology *topo = env->topo;
	size_t i, nr_tiers = topo->nr_tiers;

	memset(cfg, 0, sizeof(*cfg));
	cfg->interval_ms = 10000;
	cfg->pages_in_region = 512;
	cfg->max_count_per_region = 0;
	cfg->heat_max = 1.0;
	cfg->heat_retention = 0.9513;
	cfg->heat_classes = 10;
	for (i = 0; i < TIER_MAX_NODES; i++)
		cfg->numa_size_pages[i] = -1;
	/* intel/memtierd at 17dc462, pkg/memtier/policy_heat.go SetConfig():
	 * every HeatNumas node enters numaSize as constNumaSizeUnlimited ("the
	 * default is unlimited"), so startMoves() never takes
	 * startMovesNoLimits() and its 20 s gate: upstream fills fast memory
	 * at once. The earlier selection is the memtierd-heat-gated policy. */
	cfg->seed_numa_size_from_heat_numas = true;
	cfg->mover_interval_ms = 10;
	cfg->mover_bandwidth_mbps = 100;
	/* Hottest class -> tier 0, coldest -> the slowest tier, intermediate
	 * tiers evenly in between. */
	for (i = 0; i < nr_tiers; i++) {
		const struct tier_tier *t = &topo->tiers[i];
		unsigned cls = nr_tiers > 1 ?
			       (unsigned)((cfg->heat_classes - 1) * (nr_tiers - 1 - i) / (nr_tiers - 1)) :
			       cfg->heat_classes - 1;
		size_t k;

		if (cfg->nr_heat_numas[cls])
			continue;
		for (k = 0; k < t->nr_nodes && k < TIER_MTD_MAX_NODES; k++)
			cfg->heat_numas[cls][k] = t->nodes[k];
		cfg->nr_heat_numas[cls] = k;
	}
}

/* --- moves ----------------------------------------------------------------- */

static void flush_moves(struct mtd *d, size_t n)
{
	long ret = d->env->migrator->move(d->env->migrator_priv, d->mv_pages, d->mv_nodes,
					  d->mv_status, n);

	/* page.go MoveTo(): per-page errors (ENOMEM) are only counted. */
	if (ret < 0 && ret != -EBUSY)
		d->move_err = (int)ret;
	*d->env->work_units += n;
}

static void move_to(struct mtd *d, const uint64_t *pages, uint64_t n, int node)
{
	uint64_t i;
	size_t k = 0;

	for (i = 0; i < n; i++) {
		d->mv_pages[k] = pages[i];
		d->mv_nodes[k] = node;
		if (++k == d->batch) {
			flush_moves(d, k);
			k = 0;
		}
	}
	if (k)
		flush_moves(d, k);
}

static int add_task(struct mtd *d, uint64_t first, uint64_t nr, int dest)
{
	if (d->nr_tasks == d->cap_tasks) {
		size_t cap = d->cap_tasks ? d->cap_tasks * 2 : 64;
		struct mtd_task *t = realloc(d->tasks, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		d->tasks = t;
		d->cap_tasks = cap;
	}
	d->tasks[d->nr_tasks++] = (struct mtd_task){ .first = first, .nr = nr, .dest = dest };
	return 0;
}

/* Mover.taskHandler(): one turn = pop the last task, handle it, re-queue
 * it when it continues. */
static void mover_turn(struct mtd *d)
{
	struct mtd_task t = d->tasks[--d->nr_tasks];
	uint64_t count, n;

	if (t.offset >= t.nr)
		return;		/* tsDone */
	/* bandwidth * 1024 * 1024 / constPagesize * intervalMs / 1000 */
	count = d->cfg.mover_bandwidth_mbps * 1024 * 1024 / PAGE_BYTES_GO *
		d->cfg.mover_interval_ms / 1000;
	if (!count)
		return;		/* tsBlocked: dropped */
	n = t.nr - t.offset < count ? t.nr - t.offset : count;
	move_to(d, d->pool + t.first + t.offset, n, t.dest);
	t.offset += count;
	if (t.nr > count)	/* len(task.pages.Offset(count).Pages()) > 0 */
		d->tasks[d->nr_tasks++] = t;
}

/* --- planning --------------------------------------------------------------- */

/* Present pages of range r (PagesMatching(PMPresentSet | PMExclusiveSet)),
 * those on node `skip_node` left out when >= 0, appended to the pool.
 * Returns how many. */
static uint64_t collect_pages(struct mtd *d, uint64_t r, int skip_node)
{
	const struct tier_env *env = d->env;
	uint64_t p = range_first(d, r), end = p + range_len(d, r), n = 0;

	for (; p < end; p++) {
		uint8_t node = env->page_node[p];

		if (node == TIER_NODE_NONE || (skip_node >= 0 && node == skip_node))
			continue;
		d->pool[d->pool_len + n++] = p;
	}
	*env->work_units += end - range_first(d, r);
	return n;
}

static int start_moves_no_limits(struct mtd *d, int64_t now_us)
{
	uint64_t r;

	for (r = 0; r < d->nr_ranges; r++) {
		const struct mtd_range *hr = &d->ranges[r];
		unsigned cls;
		int dest;
		uint64_t n;

		if (hr->created_us < 0)
			continue;
		if (now_us - hr->updated_us > FRESH_WITHIN_US)
			continue;	/* not fresh enough for a decision */
		if (now_us - hr->created_us < STABLE_AFTER_US)
			continue;	/* not stable (old) enough */
		cls = heat_class(d, hr->heat);
		if (!d->cfg.nr_heat_numas[cls])
			continue;
		dest = d->cfg.heat_numas[cls][0];	/* the first node, always */
		n = collect_pages(d, r, dest);
		if (!n)
			continue;
		if (add_task(d, d->pool_len, n, dest))
			return -ENOMEM;
		d->pool_len += n;
	}
	return 0;
}

static int cmp_hot_to_cold(const void *a, const void *b, void *ctx)
{
	const struct mtd *d = ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	double hx = d->ranges[x].heat, hy = d->ranges[y].heat;

	if (hx != hy)
		return hx > hy ? -1 : 1;
	return (x > y) - (x < y);
}

/* The node of each contiguous run of present pages goes into the record;
 * returns the node of the last page (NodeUndefined when none). */
static int discover(struct mtd *d, uint64_t r)
{
	const struct tier_env *env = d->env;
	uint64_t p = range_first(d, r), end = p + range_len(d, r), run_first = 0;
	int prev_node = NODE_UNKNOWN, node = NODE_UNKNOWN;
	bool in_run = false;
	uint64_t prev_page = 0;

	for (; p < end; p++) {
		uint8_t n = env->page_node[p];

		if (n == TIER_NODE_NONE)
			continue;
		node = n;
		if (!in_run || prev_page + 1 != p || prev_node != node) {
			if (in_run) {
				memset(d->belief + run_first, prev_node, prev_page + 1 - run_first);
				/* upstream adds the finished run to the new page's node */
				d->numa_used[node] += (int64_t)(prev_page + 1 - run_first);
			}
			run_first = p;
			prev_node = node;
			in_run = true;
		}
		prev_page = p;
	}
	if (in_run) {
		memset(d->belief + run_first, prev_node, prev_page + 1 - run_first);
		d->numa_used[node] += (int64_t)(prev_page + 1 - run_first);
	}
	*env->work_units += end - range_first(d, r);
	return node;
}

static int start_moves_fill_fast_free(struct mtd *d)
{
	uint64_t nr = 0, i;

	for (i = 0; i < d->nr_ranges; i++)
		if (d->ranges[i].created_us >= 0)
			d->order[nr++] = i;
	qsort_r(d->order, nr, sizeof(*d->order), cmp_hot_to_cold, d);
	*d->env->work_units += nr;
	for (i = 0; i < nr; i++) {
		uint64_t r = d->order[i], len = range_len(d, r), n;
		unsigned cls = heat_class(d, d->ranges[r].heat);
		const int *numas = d->cfg.heat_numas[cls];
		size_t nr_numas = d->cfg.nr_heat_numas[cls], k;
		int curr, dest = NODE_UNKNOWN;
		int64_t dest_free = -1;

		if (!nr_numas)
			continue;
		curr = d->belief[range_first(d, r)];
		if (curr == NODE_UNKNOWN)
			curr = discover(d, r);
		for (k = 0; k < nr_numas; k++)
			if (numas[k] == curr)
				break;
		if (k < nr_numas)
			continue;	/* already on a good node */
		if (curr == NODE_UNKNOWN)
			continue;
		for (k = 0; k < nr_numas; k++) {
			int64_t size = numa_size_of(d, numas[k]), cand_free = 0;

			if (size != NUMA_SIZE_UNLIMITED)
				cand_free = size - d->numa_used[numas[k]] - (int64_t)len;
			if (cand_free > dest_free) {
				dest = numas[k];
				dest_free = cand_free;
			}
		}
		if (dest == NODE_UNKNOWN)
			continue;
		if (numa_size_of(d, dest) != NUMA_SIZE_UNLIMITED && dest_free < (int64_t)len)
			continue;	/* not enough quota */
		n = collect_pages(d, r, -1);
		if (!n)
			continue;
		if (add_task(d, d->pool_len, n, dest))
			return -ENOMEM;
		d->pool_len += n;
		/* SetData(hr.AddrRange(), dest): recorded as moved now. */
		memset(d->belief + range_first(d, r), dest, len);
		d->numa_used[dest] += (int64_t)len;
		d->numa_used[curr] -= (int64_t)len;
	}
	return 0;
}

/* Heatmap.UpdateFromCounters() for every range the tracker reported. */
static void update_heatmap(struct mtd *d, int64_t now_us)
{
	uint64_t r;

	for (r = 0; r < d->nr_ranges; r++) {
		struct mtd_range *hr = &d->ranges[r];
		double thr = hr->counter / (double)range_len(d, r);

		if (thr > d->cfg.heat_max)
			thr = d->cfg.heat_max;
		hr->counter = 0;
		if (hr->created_us < 0) {
			hr->heat = thr;
			hr->created_us = hr->updated_us = now_us;
			continue;
		}
		{
			double secs = (double)(now_us - hr->updated_us) / 1e6;

			if (secs < 0)
				secs = 0;
			hr->heat = thr + hr->heat * pow(d->cfg.heat_retention, secs);
		}
		if (hr->heat > d->cfg.heat_max)
			hr->heat = d->cfg.heat_max;
		hr->updated_us = now_us;
	}
	*d->env->work_units += d->nr_ranges;
}

/* --- the policy ops -------------------------------------------------------- */

static void add_count(struct mtd *d, uint64_t page, uint64_t nr, double per_page, bool capped)
{
	uint64_t end = page + nr;

	if (end > d->env->nr_pages)
		end = d->env->nr_pages;
	while (page < end) {
		uint64_t r = page / d->cfg.pages_in_region;
		uint64_t stop = (r + 1) * d->cfg.pages_in_region;

		if (stop > end)
			stop = end;
		if (capped)
			d->ranges[r].scan_cnt += stop - page;
		else
			d->ranges[r].counter += per_page * (double)(stop - page);
		page = stop;
	}
}

static void mtd_observe(void *priv, const struct tier_obs *obs, size_t n)
{
	struct mtd *d = priv;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tier_obs *o = &obs[i];

		if (o->page >= d->env->nr_pages || !o->count)
			continue;
		switch (o->kind) {
		case TIER_OBS_ACCESSED:
		case TIER_OBS_WRITTEN:
			if (o->max <= 1)	/* idlepage / softdirty bit per page */
				add_count(d, o->page, o->nr_pages, 1, true);
			else			/* damon: nr_accesses over the region */
				add_count(d, o->page, o->nr_pages,
					  (double)o->count / (double)o->nr_pages, false);
			break;
		case TIER_OBS_SAMPLE:
			add_count(d, o->page, 1, 1, false);
			break;
		default:
			break;
		}
	}
	*d->env->work_units += n;
}

/* The end of one tracker scan: MaxCountPerRegion, then into the counter. */
static void end_scan(struct mtd *d)
{
	uint64_t r, cap = d->cfg.max_count_per_region;

	for (r = 0; r < d->nr_ranges; r++) {
		uint64_t c = d->ranges[r].scan_cnt;

		if (cap && c > cap)
			c = cap;
		d->ranges[r].counter += (double)c;
		d->ranges[r].scan_cnt = 0;
	}
	d->scanned = true;
}

static int mtd_tick(void *priv, uint64_t now_us)
{
	struct mtd *d = priv;
	int64_t now = (int64_t)now_us;
	uint64_t mover_us = d->cfg.mover_interval_ms * 1000;
	int ret = 0;

	d->move_err = 0;
	end_scan(d);
	if (now - d->last_round_us >= (int64_t)(d->cfg.interval_ms * 1000)) {
		/* The ticker keeps its cadence. */
		while (now - d->last_round_us >= (int64_t)(d->cfg.interval_ms * 1000))
			d->last_round_us += (int64_t)(d->cfg.interval_ms * 1000);
		if (d->scanned)
			update_heatmap(d, now);
		d->scanned = false;
		if (!d->nr_tasks) {
			d->pool_len = 0;
			ret = d->fill_fast_free ? start_moves_fill_fast_free(d) :
						  start_moves_no_limits(d, now);
			if (ret)
				return ret;
		}
	}
	/* The mover's turns over this tick; it sleeps while it has no task. */
	if (!d->nr_tasks)
		d->credit_us = 0;
	else
		d->credit_us += (uint64_t)(now - d->last_tick_us);
	while (d->nr_tasks && mover_us && d->credit_us >= mover_us) {
		d->credit_us -= mover_us;
		mover_turn(d);
	}
	if (!mover_us)
		while (d->nr_tasks)
			mover_turn(d);
	d->last_tick_us = now;
	return d->move_err;
}

static void mtd_destroy(void *priv)
{
	struct mtd *d = priv;

	if (!d)
		return;
	free(d->ranges);
	free(d->belief);
	free(d->tasks);
	free(d->pool);
	free(d->order);
	free(d->mv_pages);
	free(d->mv_nodes);
	free(d->mv_status);
	free(d);
}

int tier__memtierd_heat_create(const struct tier_env *env,
			       const struct tier_memtierd_heat_config *cfg, void **priv,
			       struct tier_err *err)
{
	struct mtd *d;
	size_t c, k;
	uint64_t r;

	if (!cfg->interval_ms)
		return tier_err_set(err, -EINVAL, "memtierd-heat: IntervalMs must be > 0");
	if (!cfg->pages_in_region)
		return tier_err_set(err, -EINVAL, "memtierd-heat: PagesInRegion must be > 0");
	if (!cfg->heat_classes || cfg->heat_classes > TIER_MTD_MAX_CLASSES)
		return tier_err_set(err, -EINVAL, "memtierd-heat: HeatClasses must be 1..%d",
				    TIER_MTD_MAX_CLASSES);
	for (c = 0; c < TIER_MTD_MAX_CLASSES; c++) {
		if (cfg->nr_heat_numas[c] > TIER_MTD_MAX_NODES)
			return tier_err_set(err, -EINVAL, "memtierd-heat: too many nodes for class %zu", c);
		for (k = 0; k < cfg->nr_heat_numas[c]; k++)
			if (cfg->heat_numas[c][k] < 0 || cfg->heat_numas[c][k] >= NODE_UNKNOWN)
				return tier_err_set(err, -EINVAL, "memtierd-heat: bad node %d in HeatNumas",
						    cfg->heat_numas[c][k]);
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return tier_err_set(err, -ENOMEM, "out of memory");
	d->env = env;
	d->cfg = *cfg;
	d->nr_ranges = (env->nr_pages + cfg->pages_in_region - 1) / cfg->pages_in_region;
	d->batch = env->max_batch ? env->max_batch : 1024;
	d->ranges = calloc(d->nr_ranges ? d->nr_ranges : 1, sizeof(*d->ranges));
	d->pool = calloc(env->nr_pages ? env->nr_pages : 1, sizeof(*d->pool));
	d->order = calloc(d->nr_ranges ? d->nr_ranges : 1, sizeof(*d->order));
	d->mv_pages = calloc(d->batch, sizeof(*d->mv_pages));
	d->mv_nodes = calloc(d->batch, sizeof(*d->mv_nodes));
	d->mv_status = calloc(d->batch, sizeof(*d->mv_status));
	if (!d->ranges || !d->pool || !d->order || !d->mv_pages || !d->mv_nodes || !d->mv_status) {
		mtd_destroy(d);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	for (r = 0; r < d->nr_ranges; r++)
		d->ranges[r].created_us = -1;
	/* SetConfig(): the numaSize map, and with it the path. */
	for (k = 0; k < TIER_MAX_NODES; k++)
		d->numa_size[k] = NUMA_SIZE_ABSENT;
	if (cfg->seed_numa_size_from_heat_numas)
		for (c = 0; c < TIER_MTD_MAX_CLASSES; c++)
			for (k = 0; k < cfg->nr_heat_numas[c]; k++) {
				d->numa_size[cfg->heat_numas[c][k]] = NUMA_SIZE_UNLIMITED;
				d->fill_fast_free = true;
			}
	for (k = 0; k < TIER_MAX_NODES; k++)
		if (cfg->numa_size_pages[k] >= 0) {
			d->numa_size[k] = cfg->numa_size_pages[k];
			d->fill_fast_free = true;
		}
	if (d->fill_fast_free) {
		d->belief = malloc(env->nr_pages ? env->nr_pages : 1);
		if (!d->belief) {
			mtd_destroy(d);
			return tier_err_set(err, -ENOMEM, "out of memory");
		}
		memset(d->belief, NODE_UNKNOWN, env->nr_pages);
	}
	/* The policy loop's first round runs at start, with no counters. */
	d->last_round_us = d->last_tick_us = (int64_t)env->clock->now_us(env->clock_priv);
	*priv = d;
	return 0;
}

static int mtd_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	struct tier_memtierd_heat_config cfg;

	tier__memtierd_heat_defaults(env, &cfg);
	return tier__memtierd_heat_create(env, &cfg, priv, err);
}

/* The selection of policy_heat.go before SetConfig() seeded numaSize from
 * HeatNumas, which the guest's memtierd shows (docs/tiersim.md, Peers): no
 * NumaSize -> startMovesNoLimits(), a range moved only once 20 s old. */
static int mtd_gated_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	struct tier_memtierd_heat_config cfg;

	tier__memtierd_heat_defaults(env, &cfg);
	cfg.seed_numa_size_from_heat_numas = false;
	return tier__memtierd_heat_create(env, &cfg, priv, err);
}

static size_t mtd_metadata_bytes(void *priv)
{
	const struct mtd *d = priv;

	return sizeof(*d) + d->nr_ranges * (sizeof(*d->ranges) + sizeof(*d->order)) +
	       d->env->nr_pages * (sizeof(*d->pool) + (d->belief ? 1 : 0)) +
	       d->cap_tasks * sizeof(*d->tasks);
}

/* --- test hooks (peers.h) -------------------------------------------------- */

double tier__memtierd_heat_of(const void *priv, uint64_t page)
{
	const struct mtd *d = priv;
	uint64_t r = page / d->cfg.pages_in_region;

	return r < d->nr_ranges && d->ranges[r].created_us >= 0 ? d->ranges[r].heat : 0;
}

size_t tier__memtierd_tasks(const void *priv)
{
	return ((const struct mtd *)priv)->nr_tasks;
}

const struct tier_policy_ops tier_policy_memtierd_heat = {
	.name = "memtierd-heat",
	.description = "memtierd heat policy: heat classes with retention, HeatNumas first node, bandwidth-paced mover",
	.obs_kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE,
	.default_tracker = "softdirty",
	.interval_us = SCAN_INTERVAL_US,
	.create = mtd_create,
	.destroy = mtd_destroy,
	.observe = mtd_observe,
	.tick = mtd_tick,
	.metadata_bytes = mtd_metadata_bytes,
};

const struct tier_policy_ops tier_policy_memtierd_heat_gated = {
	.name = "memtierd-heat-gated",
	.variant_of = "memtierd-heat",
	.description = "memtierd-heat as earlier memtierd selects its path: a range moves only once 20 s old",
	.obs_kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE,
	.default_tracker = "softdirty",
	.interval_us = SCAN_INTERVAL_US,
	.create = mtd_gated_create,
	.destroy = mtd_destroy,
	.observe = mtd_observe,
	.tick = mtd_tick,
	.metadata_bytes = mtd_metadata_bytes,
};
