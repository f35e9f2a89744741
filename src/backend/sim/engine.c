/* engine.c - tiersim's engine: builds the simulated machine, its workload,
 * trackers and policy (or the oracle) into one backend, runs the workload in
 * simulated time and reports the figures; for now it also holds the
 * trackers, the oracle and the timeline. See engine.h for the model and
 * engine_internal.h for what the parts share.
 */
#include "backend/sim/engine.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/engine_internal.h"
#include "core/loop.h"

#define EPOCH_NS 100000000.0		/* timeline row and oracle epoch: 100 ms */

static uint64_t sim_now_us(void *priv)
{
	return (uint64_t)(((struct tier_sim *)priv)->app_ns / 1000.0);
}

static const struct tier_clock_ops sim_clock_ops = {
	.name = "sim",
	.now_us = sim_now_us,
};

/* --- trackers ------------------------------------------------------------ */

/* Kernel NUMA balancing defaults (debugfs sched/numa_balancing). */
#define HINT_SCAN_PERIOD_NS 1000000000.0		/* scan_period_min_ms 1000 */
#define HINT_SCAN_PERIOD_MAX_NS 60000000000.0	/* scan_period_max_ms 60000 */
#define HINT_SCAN_PAGES (256u << (20 - PAGE_SHIFT))	/* scan_size_mb 256 */
#define HINT_CHUNK_SHIFT 9				/* unmap time per 2 MiB */

const char *const tier_sim_trackers[] = {
	"damon", "idle", "softdirty", "samples", "hintfault", NULL,
};

int tier__sim_obs_push(struct tier_sim *s, const struct tier_obs *o)
{
	if (s->nr_obs == s->cap_obs) {
		size_t cap = s->cap_obs ? s->cap_obs * 2 : 4096;
		struct tier_obs *n = realloc(s->obs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->obs = n;
		s->cap_obs = cap;
	}
	s->obs[s->nr_obs++] = *o;
	return 0;
}

/* Accessed-bit (idle) or soft-dirty scan of every page, reported as runs. */
static int bit_scan(struct tier_sim *s, uint8_t bit, uint16_t kind, uint32_t interval_us)
{
	uint64_t p = 0;
	int ret;

	while (p < s->nr_pages) {
		uint8_t v = s->flags[tier__sim_flag_idx(s, p)] & bit;
		uint64_t q = p + 1;
		struct tier_obs o;

		while (q < s->nr_pages && (s->flags[tier__sim_flag_idx(s, q)] & bit) == v &&
		       q - p < UINT32_MAX)
			q++;
		memset(&o, 0, sizeof(o));
		o.page = p;
		o.nr_pages = (uint32_t)(q - p);
		o.kind = kind;
		o.count = v ? 1 : 0;
		o.max = 1;
		o.interval_us = interval_us;
		ret = tier__sim_obs_push(s, &o);
		if (ret)
			return ret;
		p = q;
	}
	for (p = 0; p < s->nr_pages; p++)
		s->flags[p] &= (uint8_t)~bit;
	if (bit == F_ACCESSED) {
		s->policy_cpu_ns += IDLE_SCAN_PAGE_NS * (double)s->nr_pages;
	} else {
		s->policy_cpu_ns += IDLE_SCAN_PAGE_NS * (double)s->nr_pages;
		s->app_ns += SOFTDIRTY_CLEAR_PAGE_NS * (double)s->nr_pages;
	}
	return 0;
}

/* The next HINT_SCAN_PAGES pages, round robin: those below the top tier
 * are unmapped (protnone), so their next access faults. */
static void hint_scan(struct tier_sim *s)
{
	uint64_t n = HINT_SCAN_PAGES < s->nr_pages ? HINT_SCAN_PAGES : s->nr_pages;
	uint64_t i;

	for (i = 0; i < n; i++) {
		uint64_t p = s->hint.pos;
		uint8_t node = s->page_node[p];

		/* Tiering mode skips pages already on the top tier. */
		if (node != TIER_NODE_NONE && s->node_rank[node] > 0) {
			s->flags[tier__sim_flag_idx(s, p)] |= F_PROTNONE;
			s->hint.chunk_unmap_ns[p >> HINT_CHUNK_SHIFT] = s->app_ns;
		}
		s->hint.pos = (p + 1) % s->nr_pages;
		if (s->hint.pos == 0 && s->hint.period_ns < HINT_SCAN_PERIOD_MAX_NS) {
			/* A full pass done: the scan period backs off, as
			 * task_numa_work's does when the task's faults give no
			 * reason to scan faster (in tiering mode only faults
			 * that promote count): measured in the test guest as
			 * scans at about 1, 3, 7, 15, 31 s. */
			s->hint.period_ns *= 2;
			if (s->hint.period_ns > HINT_SCAN_PERIOD_MAX_NS)
				s->hint.period_ns = HINT_SCAN_PERIOD_MAX_NS;
		}
	}
	/* change_prot_numa() changes one PMD for a THP. */
	s->app_ns += HINT_SCAN_PAGE_NS * (double)(s->thp ? (n + THP_PAGES - 1) >> THP_SHIFT : n);
}

int tier__sim_hint_fault(struct tier_sim *s, uint64_t p, uint64_t fp, bool write, double t_ns)
{
	struct tier_obs o;
	uint64_t base;

	memset(&o, 0, sizeof(o));
	/* A THP faults as a whole (task_numa_fault of 512 pages). */
	o.page = fp;
	o.nr_pages = s->thp && s->huge[p >> THP_SHIFT] ? (uint32_t)tier__sim_unit_range(s, p, &base)
						       : 1;
	o.kind = TIER_OBS_HINT_FAULT;
	o.write = write;
	o.count = 1;
	o.latency_us = (uint32_t)((s->app_ns + t_ns - s->hint.chunk_unmap_ns[p >> HINT_CHUNK_SHIFT]) /
				  1000.0);
	return tier__sim_obs_push(s, &o);
}

int tier__sim_sample(struct tier_sim *s, uint64_t p, bool write)
{
	uint64_t period = s->sample.period;
	struct tier_obs o;

	memset(&o, 0, sizeof(o));
	o.page = p;
	o.nr_pages = 1;
	o.kind = TIER_OBS_SAMPLE;
	o.write = write;
	o.count = (uint32_t)period;
	if (tier__sim_obs_push(s, &o))
		return -ENOMEM;
	s->policy_cpu_ns += SAMPLE_NS;
	/* Jitter of +-1/8 so periodic patterns do not alias. */
	s->sample.countdown = period - period / 8 + tier_rng_below(&s->rng, period / 4 + 1);
	return 0;
}

int tier__sim_trackers_tick(struct tier_sim *s, struct tier_err *err)
{
	int ret;

	if (s->trackers & TRK_DAMON) {
		ret = tier__sim_damon_tick(s);
		if (ret)
			return tier_err_set(err, ret, "out of memory");
	}
	if ((s->trackers & TRK_HINT) && s->app_ns >= s->hint.next_scan_ns) {
		hint_scan(s);
		s->hint.next_scan_ns += s->hint.period_ns;
	}
	return 0;
}

static int sim_collect(void *priv, void (*sink)(void *, const struct tier_obs *, size_t),
		       void *ctx, struct tier_err *err)
{
	struct tier_sim *s = priv;
	uint32_t interval_us = (uint32_t)s->env.interval_us;
	int ret = 0;

	/* Scanning trackers look at the bits right before the policy runs. */
	if (s->trackers & TRK_IDLE)
		ret = bit_scan(s, F_ACCESSED, TIER_OBS_ACCESSED, interval_us);
	if (!ret && (s->trackers & TRK_SOFTDIRTY))
		ret = bit_scan(s, F_DIRTY, TIER_OBS_WRITTEN, interval_us);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	if (s->nr_obs)
		sink(ctx, s->obs, s->nr_obs);
	s->nr_obs = 0;
	return 0;
}

const struct tier_tracker_ops tier__sim_tracker_ops = {
	.name = "sim",
	.kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE | TIER_OBS_HINT_FAULT,
	.collect = sim_collect,
};

int tier__sim_trackers_parse(struct tier_sim *s, const char *list, struct tier_err *err)
{
	char buf[64], *save = NULL, *tok;
	size_t k;

	if (strlen(list) >= sizeof(buf))
		return tier_err_set(err, -EINVAL, "tracker list '%s' too long", list);
	snprintf(buf, sizeof(buf), "%s", list);
	snprintf(s->tracker_names, sizeof(s->tracker_names), "%s", list);
	if (!strcmp(list, "none"))
		return 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; tier_sim_trackers[k]; k++)
			if (!strcmp(tok, tier_sim_trackers[k]))
				break;
		if (!tier_sim_trackers[k])
			return tier_err_set(err, -EINVAL,
					    "unknown tracker '%s' (none, damon, idle, softdirty, samples, hintfault)",
					    tok);
		s->trackers |= 1u << k;
	}
	if (!s->trackers)
		return tier_err_set(err, -EINVAL, "no tracker named in '%s'", list);
	return 0;
}

int tier__sim_trackers_init(struct tier_sim *s, struct tier_err *err)
{
	if ((s->trackers & TRK_DAMON) && tier__sim_damon_init(s))
		return tier_err_set(err, -ENOMEM, "out of memory");
	if (s->trackers & TRK_HINT) {
		s->hint.chunk_unmap_ns = calloc((s->nr_pages >> HINT_CHUNK_SHIFT) + 1,
						sizeof(*s->hint.chunk_unmap_ns));
		if (!s->hint.chunk_unmap_ns)
			return tier_err_set(err, -ENOMEM, "out of memory");
	}
	s->sample.period = (s->pol && s->pol->sample_period_lines ? s->pol->sample_period_lines
								  : SAMPLE_PERIOD_LINES) /
			   LINES_PER_ACCESS;
	if (!s->sample.period)
		s->sample.period = 1;
	s->sample.countdown = s->sample.period;
	s->hint.next_scan_ns = HINT_SCAN_PERIOD_NS;
	s->hint.period_ns = HINT_SCAN_PERIOD_NS;
	return 0;
}

/* --- DAMON-like tracker -------------------------------------------------- */

#define DAMON_SAMPLE_NS 5000000.0
#define DAMON_AGGR_NS 100000000.0
#define DAMON_MIN_REGIONS 10
#define DAMON_MAX_REGIONS 1000

/* A random page of each region to check next, its accessed bit cleared. */
static void damon_pick_samples(struct tier_sim *s)
{
	size_t i;

	for (i = 0; i < s->damon.nr_regions; i++) {
		struct tier__sim_damon_region *r = &s->damon.regions[i];

		r->sample = r->start + tier_rng_below(&s->rng, r->end - r->start);
		s->flags[tier__sim_flag_idx(s, r->sample)] &= (uint8_t)~F_ACCESSED;	/* mkold */
	}
}

int tier__sim_damon_init(struct tier_sim *s)
{
	size_t i, n = DAMON_MIN_REGIONS;

	if (s->nr_pages < n)
		n = s->nr_pages;
	s->damon.regions = calloc(DAMON_MAX_REGIONS * 2, sizeof(*s->damon.regions));
	if (!s->damon.regions)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		s->damon.regions[i].start = s->nr_pages * i / n;
		s->damon.regions[i].end = s->nr_pages * (i + 1) / n;
	}
	s->damon.nr_regions = n;
	damon_pick_samples(s);
	s->damon.next_sample_ns = DAMON_SAMPLE_NS;
	s->damon.next_aggr_ns = DAMON_AGGR_NS;
	return 0;
}

static void damon_sample(struct tier_sim *s)
{
	size_t i;

	for (i = 0; i < s->damon.nr_regions; i++) {
		struct tier__sim_damon_region *r = &s->damon.regions[i];

		if (s->flags[tier__sim_flag_idx(s, r->sample)] & F_ACCESSED)
			r->nr_accesses++;
	}
	s->policy_cpu_ns += DAMON_CHECK_NS * (double)s->damon.nr_regions;
	damon_pick_samples(s);
}

static uint32_t diff_u32(uint32_t a, uint32_t b)
{
	return a > b ? a - b : b - a;
}

/* Each region's count as an observation. */
static int damon_report(struct tier_sim *s, uint32_t max)
{
	size_t i;
	int ret;

	for (i = 0; i < s->damon.nr_regions; i++) {
		struct tier__sim_damon_region *r = &s->damon.regions[i];
		struct tier_obs o = {
			.page = r->start,
			.nr_pages = (uint32_t)(r->end - r->start),
			.kind = TIER_OBS_ACCESSED,
			.count = r->nr_accesses,
			.max = max,
			.interval_us = (uint32_t)(DAMON_AGGR_NS / 1000),
		};

		ret = tier__sim_obs_push(s, &o);
		if (ret)
			return ret;
	}
	return 0;
}

/* Merges neighbours whose access counts differ by at most thres, up to a
 * tenth of the pages (kdamond_merge_regions), then ages each region: one
 * more aggregation with a count close to the last, or zero. */
static void damon_merge(struct tier_sim *s, uint32_t thres)
{
	struct tier__sim_damon_region *rs = s->damon.regions;
	uint64_t sz_limit = s->nr_pages / DAMON_MIN_REGIONS;
	size_t i, j;

	for (i = 0, j = 0; i < s->damon.nr_regions; i++) {
		struct tier__sim_damon_region *r = &rs[i];

		if (j) {
			struct tier__sim_damon_region *l = &rs[j - 1];

			if (diff_u32(l->nr_accesses, r->nr_accesses) <= thres &&
			    r->end - l->start <= sz_limit) {
				uint64_t ls = l->end - l->start, rsz = r->end - r->start;

				l->nr_accesses = (uint32_t)((l->nr_accesses * ls + r->nr_accesses * rsz) /
							    (ls + rsz));
				l->age = (uint32_t)((l->age * ls + r->age * rsz) / (ls + rsz));
				l->end = r->end;
				continue;
			}
		}
		rs[j++] = *r;
	}
	s->damon.nr_regions = j;
	for (i = 0; i < s->damon.nr_regions; i++) {
		struct tier__sim_damon_region *r = &rs[i];

		r->age = diff_u32(r->nr_accesses, r->last_nr_accesses) <= thres ? r->age + 1 : 0;
		r->last_nr_accesses = r->nr_accesses;
		r->nr_accesses = 0;
	}
}

/* Splits each region in two at a random point while there is room
 * (kdamond_split_regions). */
static void damon_split(struct tier_sim *s)
{
	struct tier__sim_damon_region *rs = s->damon.regions;
	size_t i, j, n = s->damon.nr_regions;

	if (n * 2 > DAMON_MAX_REGIONS)
		return;
	for (i = n; i-- > 0;) {
		struct tier__sim_damon_region *r = &rs[i];
		uint64_t len = r->end - r->start, cut;

		rs[2 * i] = *r;
		if (len < 2)
			continue;
		cut = r->start + 1 + tier_rng_below(&s->rng, len - 1);
		rs[2 * i + 1] = rs[2 * i];
		rs[2 * i].end = cut;
		rs[2 * i + 1].start = cut;
	}
	/* Compact: unsplit regions left a hole at 2i+1. */
	for (i = 0, j = 0; i < 2 * n; i++) {
		if (i % 2 == 1 && (rs[i - 1].end != rs[i].start || rs[i].start >= rs[i].end))
			continue;
		rs[j++] = rs[i];
	}
	s->damon.nr_regions = j;
}

/* Aggregation: report, merge similar neighbours, split. */
static int damon_aggregate(struct tier_sim *s)
{
	const uint32_t max = (uint32_t)(DAMON_AGGR_NS / DAMON_SAMPLE_NS);
	const uint32_t thres = max / 10 ? max / 10 : 1;
	int ret;

	ret = damon_report(s, max);
	if (ret)
		return ret;
	damon_merge(s, thres);
	damon_split(s);
	damon_pick_samples(s);
	return 0;
}

int tier__sim_damon_tick(struct tier_sim *s)
{
	int ret;

	while (s->app_ns >= s->damon.next_sample_ns) {
		damon_sample(s);
		s->damon.next_sample_ns += DAMON_SAMPLE_NS;
	}
	if (s->app_ns >= s->damon.next_aggr_ns) {
		ret = damon_aggregate(s);
		if (ret)
			return ret;
		s->damon.next_aggr_ns += DAMON_AGGR_NS;
	}
	return 0;
}

/* --- oracle -------------------------------------------------------------- */

struct weight_order {
	const double *w;
	const struct tier_sim *s;
};

/* Heaviest first; among equal weights the page already in the faster tier
 * first, so that ties never move pages (on a uniform workload the oracle
 * then keeps first touch: it cannot gain from noise, nor lose to it). */
static int cmp_weight_desc(const void *a, const void *b, void *ctx)
{
	const struct weight_order *o = ctx;
	uint64_t pa = *(const uint64_t *)a, pb = *(const uint64_t *)b;
	double x = o->w[pa], y = o->w[pb];
	int ra, rb;

	if (x != y)
		return x > y ? -1 : 1;
	ra = o->s->page_node[pa] == TIER_NODE_NONE ? 255 : o->s->node_rank[o->s->page_node[pa]];
	rb = o->s->page_node[pb] == TIER_NODE_NONE ? 255 : o->s->node_rank[o->s->page_node[pb]];
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (pa > pb) - (pa < pb);
}

/* Expected AMAT when tier r serves share[r] of accesses (closed loop:
 * the access rate follows the latency, the latency the load). */
static double model_amat(const struct tier_sim *s, const double *share, double wfrac)
{
	double amat = 0, lat[TIER_SIM_MAX_TIERS];
	size_t r, it;

	for (r = 0; r < s->nr_tiers; r++) {
		lat[r] = s->idle_ns[s->topo.tiers[r].nodes[0]];
		amat += share[r] * lat[r];
	}
	for (it = 0; it < 40; it++) {
		double rate = 1.0 / amat, next = 0;	/* accesses per ns */

		for (r = 0; r < s->nr_tiers; r++) {
			int node = s->topo.tiers[r].nodes[0];
			double nn = (double)s->topo.tiers[r].nr_nodes;
			double bytes = rate * share[r] * LINES_PER_ACCESS * LINE_BYTES / nn;
			/* As the engine counts it: every access reads, a store also
			 * writes back. */
			double util = bytes * (1.0 / s->rd_bw[node] + wfrac / s->wr_bw[node]);

			if (r == 0)
				util += (double)s->antagonist_bps / 1e9 / s->rd_bw[node];
			lat[r] = 0.5 * lat[r] + 0.5 * tier__sim_loaded_latency(s->idle_ns[node], util);
			next += share[r] * lat[r];
		}
		amat = next;
	}
	return amat;
}

/* Pages sorted by weight; cum[i] = share of the first i pages. Chooses how
 * many of the hottest pages each tier gets (best_cnt), trying fills below
 * capacity on the faster tiers to balance loaded latency: a/steps of tier
 * 0's capacity, b/steps of tier 1's (three or more tiers), the rest
 * top-down. */
static void choose_counts(const struct tier_sim *s, const double *cum, uint64_t n,
			  uint64_t best_cnt[TIER_SIM_MAX_TIERS])
{
	uint64_t cap[TIER_SIM_MAX_TIERS];
	double best = INFINITY, wfrac = s->accesses ? (double)s->writes / (double)s->accesses : 0.2;
	const int steps = 24;
	size_t r;
	int a, b;

	for (r = 0; r < s->nr_tiers; r++)
		cap[r] = tier__sim_tier_cap(s, r);
	for (a = 0; a <= steps; a++) {
		for (b = 0; b <= (s->nr_tiers > 2 ? steps : steps - 1) ; b++) {
			uint64_t cnt[TIER_SIM_MAX_TIERS], left = n, used = 0;
			double share[TIER_SIM_MAX_TIERS], amat;

			if (s->nr_tiers <= 2 && b > 0)
				break;
			for (r = 0; r < s->nr_tiers; r++) {
				uint64_t c = cap[r];

				if (r == 0)
					c = cap[0] * (uint64_t)a / steps;
				else if (r == 1 && s->nr_tiers > 2)
					c = cap[1] * (uint64_t)b / steps;
				if (r + 1 == s->nr_tiers)
					c = left;
				if (c > left)
					c = left;
				cnt[r] = c;
				share[r] = cum[used + c] - cum[used];
				used += c;
				left -= c;
			}
			if (left || cnt[s->nr_tiers - 1] > cap[s->nr_tiers - 1])
				continue;	/* does not fit */
			amat = model_amat(s, share, wfrac);
			if (amat < best - 1e-9) {
				best = amat;
				memcpy(best_cnt, cnt, sizeof(cnt));
			}
		}
	}
}

/* Clears the placement, then fills each tier's nodes in weight order,
 * cnt[r] pages to tier r. */
static void place_in_order(struct tier_sim *s, const uint64_t cnt[TIER_SIM_MAX_TIERS])
{
	uint64_t i = 0;
	size_t r;

	for (r = 0; r < s->nr_nodes; r++)
		s->used_pages[r] = 0;
	for (i = 0; i < s->nr_pages; i++)
		s->page_node[i] = TIER_NODE_NONE;
	i = 0;
	for (r = 0; r < s->nr_tiers; r++) {
		uint64_t k;

		for (k = 0; k < cnt[r]; k++, i++) {
			const struct tier_tier *t = &s->topo.tiers[r];
			int node = t->nodes[k % t->nr_nodes];
			size_t m;

			for (m = 0; m < t->nr_nodes && s->used_pages[node] >= s->cap_pages[node]; m++)
				node = t->nodes[(k + m + 1) % t->nr_nodes];
			tier__sim_place_page(s, s->oracle.order[i], node);
		}
	}
}

/* Places pages for weights w (one per page). */
static int oracle_epoch(struct tier_sim *s, const double *w)
{
	struct weight_order wo = { w, s };
	uint64_t best_cnt[TIER_SIM_MAX_TIERS] = { 0 };
	double *cum, total = 0;
	uint64_t i, n = s->nr_pages;
	double wfrac = s->accesses ? (double)s->writes / (double)s->accesses : 0.2;

	/* Same distribution and the same mix of stores (which load the tiers'
	 * write bandwidth), same placement. The store share is only known once
	 * the workload ran, so it is re-checked every epoch. */
	if (s->oracle.prev_weights && !memcmp(w, s->oracle.prev_weights, n * sizeof(*w)) &&
	    fabs(wfrac - s->oracle.wfrac) < 0.02)
		return 0;
	s->oracle.wfrac = wfrac;
	cum = malloc((n + 1) * sizeof(*cum));
	if (!cum)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		s->oracle.order[i] = i;
	qsort_r(s->oracle.order, n, sizeof(*s->oracle.order), cmp_weight_desc, &wo);
	cum[0] = 0;
	for (i = 0; i < n; i++)
		total += w[i];
	for (i = 0; i < n; i++)
		cum[i + 1] = cum[i] + (total > 0 ? w[s->oracle.order[i]] / total : 0);
	choose_counts(s, cum, n, best_cnt);
	place_in_order(s, best_cnt);
	free(cum);
	if (s->oracle.prev_weights)
		memcpy(s->oracle.prev_weights, w, n * sizeof(*w));
	return 0;
}

/* Traces: count every page's accesses over the whole run (one pass), then
 * rewind; the placement is static (one epoch). */
static int oracle_trace_counts(struct tier_sim *s, struct tier_err *err)
{
	struct tier_sim_access *buf = malloc(BATCH * sizeof(*buf));
	long n;
	size_t i;
	int ret = 0;

	if (!buf)
		return tier_err_set(err, -ENOMEM, "out of memory");
	memset(s->oracle.weights, 0, s->nr_pages * sizeof(*s->oracle.weights));
	while ((n = s->wl->next(s->wl_priv, 0, buf, BATCH, err)) > 0)
		for (i = 0; i < (size_t)n; i++)
			if (buf[i].page < s->nr_pages)
				s->oracle.weights[buf[i].page] += 1;
	if (n < 0)
		ret = (int)n;
	else if (s->wl->rewind)
		ret = s->wl->rewind(s->wl_priv, err);
	free(buf);
	return ret;
}

int tier__sim_oracle_init(struct tier_sim *s, struct tier_err *err)
{
	uint64_t i;

	s->oracle.enabled = true;
	s->oracle.weights = calloc(s->nr_pages, sizeof(*s->oracle.weights));
	s->oracle.prev_weights = calloc(s->nr_pages, sizeof(*s->oracle.prev_weights));
	s->oracle.order = calloc(s->nr_pages, sizeof(*s->oracle.order));
	if (!s->oracle.weights || !s->oracle.prev_weights || !s->oracle.order)
		return tier_err_set(err, -ENOMEM, "out of memory");
	/* Never equal to real weights: the first epoch always places. */
	for (i = 0; i < s->nr_pages; i++)
		s->oracle.prev_weights[i] = -1;
	return 0;
}

int tier__sim_oracle_prepare(struct tier_sim *s, struct tier_err *err)
{
	int ret;

	if (!s->oracle.enabled || s->oracle.ready || s->wl->weights)
		return 0;
	ret = oracle_trace_counts(s, err);
	if (!ret)
		ret = oracle_epoch(s, s->oracle.weights);
	if (ret)
		return ret;
	s->oracle.ready = true;
	return 0;
}

int tier__sim_oracle_step(struct tier_sim *s, uint64_t now_us, struct tier_err *err)
{
	int ret;

	if (!s->oracle.enabled || !s->wl->weights || s->app_ns < s->ep.start_ns ||
	    s->accesses != s->ep.acc)
		return 0;
	/* Start of an epoch: place for this epoch's distribution. */
	s->wl->weights(s->wl_priv, now_us, s->oracle.weights);
	ret = oracle_epoch(s, s->oracle.weights);
	if (ret)
		return tier_err_set(err, ret, "out of memory");
	return 0;
}

void tier__sim_oracle_release(struct tier_sim *s)
{
	free(s->oracle.weights);
	free(s->oracle.prev_weights);
	free(s->oracle.order);
}

/* --- timeline and tenant census ------------------------------------------ */

void tier__sim_timeline_header(const struct tier_sim *s, FILE *f)
{
	size_t r;

	fprintf(f, "time_s,amat_ns,fast_access_ratio,promoted_pages,demoted_pages");
	for (r = 0; r < s->nr_tiers; r++)
		fprintf(f, ",tier%zu_used_pages,tier%zu_latency_ns", r, r);
	fprintf(f, "\n");
}

/* Per tier: used pages, then the mean latency of its nodes. */
static void timeline_tiers(const struct tier_sim *s, FILE *f)
{
	size_t r, k;

	for (r = 0; r < s->nr_tiers; r++) {
		const struct tier_tier *t = &s->topo.tiers[r];
		uint64_t used = 0;
		double lat = 0;

		for (k = 0; k < t->nr_nodes; k++) {
			used += s->used_pages[t->nodes[k]];
			lat += s->lat_ns[t->nodes[k]];
		}
		fprintf(f, ",%llu,%.1f", (unsigned long long)used, lat / (double)t->nr_nodes);
	}
}

void tier__sim_timeline_row(struct tier_sim *s, FILE *f)
{
	uint64_t acc = s->accesses - s->ep.acc;
	uint64_t fast = s->fast_accesses - s->ep.fast;
	double app = s->app_ns - s->ep.app_ns;

	if (f && acc) {
		fprintf(f, "%.3f,%.2f,%.4f,%llu,%llu", s->app_ns / 1e9, app / (double)acc,
			(double)fast / (double)acc, (unsigned long long)s->ep.promoted,
			(unsigned long long)s->ep.demoted);
		timeline_tiers(s, f);
		fprintf(f, "\n");
	}
	s->ep.acc = s->accesses;
	s->ep.fast = s->fast_accesses;
	s->ep.app_ns = s->app_ns;
	s->ep.promoted = s->ep.demoted = 0;
	s->ep.start_ns = s->app_ns;
}

void tier__sim_tenant_pages(const struct tier_sim *s,
			    uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS])
{
	uint64_t p;

	memset(pages, 0, sizeof(uint64_t) * TIER_SIM_MAX_TENANTS * TIER_SIM_MAX_TIERS);
	for (p = 0; p < s->nr_pages; p++) {
		uint8_t n = s->page_node[p];

		if (n != TIER_NODE_NONE && s->page_owner[p] < TIER_SIM_MAX_TENANTS)
			pages[s->page_owner[p]][s->node_rank[n]]++;
	}
}

void tier__sim_tenant_census(struct tier_sim *s)
{
	uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];
	size_t k, r;

	if (s->nr_tenants < 2 || s->app_ns < TIER_SIM_SETTLE_US * 1e3)
		return;
	tier__sim_tenant_pages(s, pages);
	for (k = 0; k < s->nr_tenants; k++)
		for (r = 0; r < s->nr_tiers; r++)
			if (pages[k][r] > s->tenant_peak[k][r])
				s->tenant_peak[k][r] = pages[k][r];
}

/* --- the run ------------------------------------------------------------- */

/* Replays the workload's next batch. Returns 1 when it ran, 0 when the
 * workload has ended, -errno with err set on failure. */
static int run_batch(struct tier_sim *s, uint64_t now_us, struct tier_err *err)
{
	long n;
	int ret;

	n = s->wl->next(s->wl_priv, now_us, s->buf, BATCH, err);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	ret = tier__sim_replay(s, s->buf, (size_t)n);
	if (ret)
		return tier_err_set(err, ret, ret == -ERANGE ?
				    "workload touched a page beyond its footprint" :
				    "simulated machine out of memory");
	if (s->antagonist_bps == 0 && s->wl->antagonist_bytes_per_s)
		s->antagonist_bps = s->wl->antagonist_bytes_per_s(s->wl_priv, now_us);
	return 1;
}

/* The end of an epoch: a timeline row, the tenants' census. */
static void end_epochs(struct tier_sim *s)
{
	if (s->app_ns < s->next_epoch)
		return;
	tier__sim_timeline_row(s, s->p.timeline);
	tier__sim_tenant_census(s);
	while (s->next_epoch <= s->app_ns)
		s->next_epoch += EPOCH_NS;
}

static void report_progress(struct tier_sim *s)
{
	const struct tier_sim_params *p = &s->p;

	if (p->progress && s->app_ns >= s->next_progress) {
		p->progress(p->progress_ctx, s->app_ns / s->duration_ns);
		s->next_progress += s->duration_ns / 100;
	}
}

/* Runs accesses until simulated time until_ns, the duration or the end of
 * the workload. Each batch: the oracle's placement at an epoch's start, the
 * accesses, their traffic into the latency model, the trackers' timed
 * work, the epoch's records. Returns 1 when there is more to run, 0 when
 * the run is over, -errno on failure. */
static int advance(struct tier_sim *s, double until_ns, struct tier_err *err)
{
	int ret;

	if (s->ended)
		return 0;
	ret = tier__sim_oracle_prepare(s, err);
	if (ret)
		return ret;
	if (until_ns > s->duration_ns)
		until_ns = s->duration_ns;
	while (s->app_ns < until_ns) {
		uint64_t now_us = (uint64_t)(s->app_ns / 1000);

		ret = tier__sim_oracle_step(s, now_us, err);
		if (ret)
			return ret;
		ret = run_batch(s, now_us, err);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			s->ended = true;	/* a trace ended */
			break;
		}
		tier__sim_account_traffic(s);
		tier__sim_quanta(s);
		ret = tier__sim_trackers_tick(s, err);
		if (ret)
			return ret;
		if (s->oracle.enabled)
			s->nr_obs = 0;
		end_epochs(s);
		report_progress(s);
	}
	if (s->app_ns >= s->duration_ns)
		s->ended = true;
	if (s->ended && s->accesses != s->ep.acc)
		tier__sim_timeline_row(s, s->p.timeline);
	return s->ended ? 0 : 1;
}

int tier_sim_advance(struct tier_sim *s, uint64_t until_us, struct tier_err *err)
{
	return advance(s, (double)until_us * 1e3, err);
}

uint64_t tier_sim_now_us(const struct tier_sim *s)
{
	return (uint64_t)(s->app_ns / 1000);
}

struct tier_env *tier_sim_env(struct tier_sim *s)
{
	return &s->env;
}

const struct tier_tracker_ops *tier_sim_tracker(struct tier_sim *s, void **priv)
{
	*priv = s;
	return s->oracle.enabled ? NULL : &tier__sim_tracker_ops;
}

const struct tier_policy_ops *tier_sim_policy(const struct tier_sim *s)
{
	return s->pol;
}

/* --- construction -------------------------------------------------------- */

void tier_sim_destroy(struct tier_sim *s)
{
	if (!s)
		return;
	if (s->wl && s->wl_priv)
		s->wl->destroy(s->wl_priv);
	tier_topology_release(&s->topo);
	free(s->page_node);
	free(s->page_owner);
	free(s->flags);
	free(s->huge);
	free(s->tlb);
	free(s->unit_gen);
	free(s->unit_status);
	free(s->last_move_ms);
	free(s->prev_rank);
	free(s->obs);
	free(s->damon.regions);
	free(s->hint.chunk_unmap_ns);
	tier__sim_oracle_release(s);
	free(s->buf);
	free(s);
}

/* Finds and creates the workload p names, sized to the machine. */
static int setup_workload(struct tier_sim *s, const struct tier_sim_params *p,
			  struct tier_err *err)
{
	struct tier_sim_workload_params wp;
	const char *wl_arg = NULL;
	size_t i;
	int ret;

	s->wl = tier_sim_workload_find(p->workload, &wl_arg);
	if (!s->wl)
		return tier_err_set(err, -ENOENT, "unknown workload '%s' (see 'tiersim list')",
				    p->workload);
	memset(&wp, 0, sizeof(wp));
	wp.seed = p->seed;
	wp.fast_pages = tier__sim_tier_cap(s, 0);
	for (i = 0; i < s->nr_nodes; i++)
		wp.total_pages += s->cap_pages[i];
	wp.duration_us = (uint64_t)(s->duration_ns / 1e3);
	wp.fast_bw_bytes_per_s = (uint64_t)(s->rd_bw[s->fast_node] * 1e9);
	wp.arg = wl_arg;
	ret = s->wl->create(&wp, &s->wl_priv, err);
	if (ret)
		s->wl_priv = NULL;
	return ret;
}

/* The policy p names and its trackers, or the oracle. */
static int setup_policy(struct tier_sim *s, const struct tier_sim_params *p,
			struct tier_err *err)
{
	if (!strcmp(p->policy, "oracle")) {
		snprintf(s->tracker_names, sizeof(s->tracker_names), "future");
		return tier__sim_oracle_init(s, err);
	}
	s->pol = tier_policy_find(p->policy);
	if (!s->pol)
		return tier_err_set(err, -ENOENT, "unknown policy '%s' (see 'tiersim list')",
				    p->policy);
	return tier__sim_trackers_parse(s, p->tracker ? p->tracker : s->pol->default_tracker, err);
}

/* What the policy sees: the pages, the groups, the ops over this
 * simulator. */
static void setup_env(struct tier_sim *s, const struct tier_sim_params *p)
{
	s->env.topo = &s->topo;
	s->env.nr_pages = s->nr_pages;
	s->env.page_node = s->page_node;
	s->env.page_owner = s->page_owner;
	if (p->groups) {
		s->groups = *p->groups;
		s->env.groups = &s->groups;
	}
	s->env.page_shift = PAGE_SHIFT;
	if (s->thp) {
		s->env.huge_shift = THP_SHIFT;
		s->env.page_huge = s->huge;
	}
	s->env.obs_kinds = tier__sim_tracker_ops.kinds;
	s->env.migrator = &tier__sim_migrator_ops;
	s->env.migrator_priv = s;
	s->env.mem = &tier__sim_mem_ops;
	s->env.mem_priv = s;
	s->env.clock = &sim_clock_ops;
	s->env.clock_priv = s;
	s->env.budget_bytes_per_s = p->budget_bytes_per_s ? p->budget_bytes_per_s
							   : TIER_SIM_DEFAULT_BUDGET;
	s->env.max_batch = 1024;
	s->env.interval_us = s->pol && s->pol->interval_us ? s->pol->interval_us : 100000;
	s->env.work_units = &s->work_units;
}

int tier_sim_new(const struct tier_sim_params *p, struct tier_sim **out,
		 struct tier_err *err)
{
	struct tier_sim *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return tier_err_set(err, -ENOMEM, "out of memory");
	s->p = *p;
	s->duration_ns = (double)(p->duration_us ? p->duration_us : TIER_SIM_DEFAULT_DURATION_US) * 1e3;
	s->next_epoch = EPOCH_NS;
	s->next_progress = s->duration_ns / 100;
	tier_topology_init(&s->topo);
	tier_rng_seed(&s->rng, p->seed ^ UINT64_C(0x7469657273696d));	/* "tiersim" */
	s->buf = malloc(BATCH * sizeof(*s->buf));
	if (!s->buf) {
		ret = tier_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = tier__sim_machine_setup(s, p, err);
	if (ret)
		goto out;
	ret = setup_workload(s, p, err);
	if (ret)
		goto out;
	s->thp = p->thp;
	ret = tier__sim_pages_setup(s, err);
	if (ret)
		goto out;
	ret = setup_policy(s, p, err);
	if (ret)
		goto out;
	ret = tier__sim_trackers_init(s, err);
	if (ret)
		goto out;
	s->nr_tenants = s->wl->nr_tenants ? s->wl->nr_tenants(s->wl_priv) : 1;
	if (s->nr_tenants > TIER_SIM_MAX_TENANTS)
		s->nr_tenants = TIER_SIM_MAX_TENANTS;
	setup_env(s, p);
	if (p->timeline)
		tier__sim_timeline_header(s, p->timeline);
	*out = s;
	return 0;
out:
	tier_sim_destroy(s);
	return ret;
}

/* --- results ------------------------------------------------------------- */

/* Bytes moved per tier pair, and in sum, up and down. */
static void result_moves(const struct tier_sim *s, struct tier_sim_result *r)
{
	size_t i, j;

	for (i = 0; i < s->nr_tiers; i++)
		for (j = 0; j < s->nr_tiers; j++) {
			uint64_t b = s->moved[i][j] * PAGE_BYTES;

			r->moved_bytes[i][j] = b;
			r->migrated_bytes += b;
			if (j < i)
				r->promoted_bytes += b;
			else if (j > i)
				r->demoted_bytes += b;
		}
}

static void result_tenants(const struct tier_sim *s, struct tier_sim_result *r)
{
	uint64_t pages[TIER_SIM_MAX_TENANTS][TIER_SIM_MAX_TIERS];
	size_t i, j;

	r->nr_tenants = s->nr_tenants;
	tier__sim_tenant_pages(s, pages);
	for (i = 0; i < s->nr_tenants; i++) {
		struct tier_sim_tenant_result *t = &r->tenant[i];

		t->accesses = s->tenant_acc[i];
		t->amat_ns = s->tenant_acc[i] ? s->tenant_ns[i] / (double)s->tenant_acc[i] : 0;
		for (j = 0; j < s->nr_tiers; j++) {
			t->pages[j] = pages[i][j];
			t->peak_pages[j] = s->tenant_peak[i][j];
		}
	}
}

void tier_sim_result(struct tier_sim *s, size_t policy_metadata_bytes,
		     struct tier_sim_result *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->machine, sizeof(r->machine), "%s",
		 s->p.machine ? s->p.machine : s->machine.preset->name);
	snprintf(r->workload, sizeof(r->workload), "%s", s->p.workload);
	snprintf(r->policy, sizeof(r->policy), "%s", s->p.policy);
	snprintf(r->tracker, sizeof(r->tracker), "%s", s->tracker_names);
	r->accesses = s->accesses;
	r->amat_ns = s->accesses ? s->app_ns / (double)s->accesses : 0;
	r->fast_access_ratio = s->accesses ? (double)s->fast_accesses / (double)s->accesses : 0;
	r->nr_tiers = s->nr_tiers;
	result_moves(s, r);
	r->pingpong_pages = s->pingpong;
	r->policy_cpu_s = (s->policy_cpu_ns + (double)s->work_units * WORK_UNIT_NS) / 1e9;
	r->sim_time_s = s->app_ns / 1e9;
	r->metadata_bytes = policy_metadata_bytes +
			    s->damon.nr_regions * sizeof(*s->damon.regions);
	r->thp = s->thp;
	r->split_units = s->splits;
	r->tlb_misses = s->tlb_misses;
	result_tenants(s, r);
}

int tier_sim_run(const struct tier_sim_params *p, struct tier_sim_result *r,
		 struct tier_err *err)
{
	struct tier_loop loop;
	const struct tier_tracker_ops *trk;
	struct tier_sim *s;
	void *trk_priv;
	uint64_t next;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = tier_sim_new(p, &s, err);
	if (ret)
		return ret;
	memset(&loop, 0, sizeof(loop));
	trk = tier_sim_tracker(s, &trk_priv);
	if (s->pol) {
		ret = tier_loop_init(&loop, &s->env, s->pol, trk, trk_priv, err);
		if (ret)
			goto out;
	}
	next = s->env.interval_us;
	while ((ret = tier_sim_advance(s, next, err)) > 0) {
		if (s->pol) {
			ret = tier_loop_step(&loop, err);
			if (ret)
				goto out;
		}
		next += s->env.interval_us;
	}
	if (ret)
		goto out;
	tier_sim_result(s, s->pol && s->pol->metadata_bytes ?
			   s->pol->metadata_bytes(loop.policy_priv) : 0, r);
out:
	tier_loop_release(&loop);
	tier_sim_destroy(s);
	return ret;
}
