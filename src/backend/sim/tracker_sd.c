/* tracker_sd.c - the simulator's model of the daemon's soft-dirty tracker
 * ("softdirty-rounds"; src/backend/linux/tracker_softdirty.c), and of its
 * merge with DAMON (the daemon's "damon+softdirty",
 * src/backend/linux/tracker_combo.c) when listed with damon.
 *
 * A round clears every page's soft-dirty bit (clear_refs: its cost per
 * page on the application), reads which pages are dirty TIER__SD_READ1_US,
 * _READ2_US and _READ3_US after the clear and at its end, and the round's
 * period comes from what its writers' faults and its reads cost
 * (tier__softdirty_period_us(): at least 1 s). Each read adds the pages
 * first seen dirty at it, in its bracket, to the round's runs; at the
 * round's end they become the last whole round's. The picture the policy
 * gets at each collect is the daemon's own: the same runs, pairs of
 * brackets, rates and populations' fits (softdirty_picture.c,
 * softdirty_rate.c), made at each read and rated at the collect after,
 * handed again at every collect (the daemon restates it too).
 *
 * With DAMON (in snapshot mode: the tierd policy), its regions and the
 * written runs are merged as the daemon merges them (obs_merge.c): the
 * written runs whole, each region with the accesses its written pages do
 * not explain; until the first whole round is over, DAMON's lukewarm
 * regions are held at 1 access/s a page, for at most 3 s after DAMON first
 * reported (tier__obs_hold()).
 *
 * A read is dated, and an early one held, by the writer's own time as the
 * daemon's are: the application's time since the clear less the
 * write-protect faults it took (one per page first written, each
 * cpu_ns.softdirty_fault), held until that reaches the read's time, at
 * most 16 times as long (TIER__SD_STRETCH).
 *
 * Not modelled: a writer starved of a CPU (the simulated application
 * always runs), a read that sees more than the writer could have written,
 * and the daemon's processes: the footprint is one target (a multi-tenant
 * workload's tenants are one population).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/softdirty_picture.h"
#include "backend/linux/tracker_util.h"
#include "backend/sim/engine_internal.h"

/* The one target's pid in the daemon's structures. */
#define SD_PID 1

static const uint64_t sd_reads_us[] = { TIER__SD_READ1_US, TIER__SD_READ2_US, TIER__SD_READ3_US };

/* The dirty pages as extents (addresses: page << 12), into scan. */
static int read_dirty(struct tier_sim *s, struct tier__sd_scan *scan)
{
	uint64_t p = 0;

	scan->n = 0;
	while (p < s->nr_pages) {
		uint64_t q;

		if (!(s->flags[tier__sim_flag_idx(s, p)] & F_DIRTY)) {
			p++;
			continue;
		}
		for (q = p + 1; q < s->nr_pages && (s->flags[tier__sim_flag_idx(s, q)] & F_DIRTY); q++)
			;
		if (scan->n == scan->cap) {
			size_t cap = scan->cap ? scan->cap * 2 : 1024;
			struct tier__sd_extent *v = realloc(scan->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			scan->v = v;
			scan->cap = cap;
		}
		scan->v[scan->n].start = p << 12;
		scan->v[scan->n].end = q << 12;
		scan->n++;
		p = q;
	}
	/* pagemap read page by page, as the idle scan's */
	s->policy_cpu_ns += s->cpu_ns.idle_scan_page * (double)s->nr_pages;
	s->sd.cpu_round_ns += s->cpu_ns.idle_scan_page * (double)s->nr_pages;
	return 0;
}

/* A new round: every bit cleared (the application pays), its period from
 * the last one's costs. */
static void clear_round(struct tier_sim *s)
{
	uint64_t p;

	for (p = 0; p < s->nr_pages; p++)
		s->flags[p] &= (uint8_t)~F_DIRTY;
	s->app_ns += s->cpu_ns.softdirty_clear_page * (double)s->nr_pages;
	s->cost.stall_ns += s->cpu_ns.softdirty_clear_page * (double)s->nr_pages;
	s->sd.period_us = tier__softdirty_period_us(
		(uint64_t)((double)s->sd.written_last * s->cpu_ns.softdirty_fault),
		(uint64_t)(s->sd.cpu_round_ns / 1000), 0);
	s->sd.cpu_round_ns = 0;
	s->sd.t0_ns = s->app_ns;
	s->sd.faults_t0 = s->sd.faults;
	s->sd.nbrk = 0;
	s->sd.seen.n = 0;
}

/* The writer's own time since the clear, us, as the daemon dates a read
 * (tier__sd_writer_us()): the application's time less the write-protect
 * faults the clear made it take, but at least a sixteenth of it. */
static uint64_t writer_us(const struct tier_sim *s)
{
	double all = s->app_ns - s->sd.t0_ns;
	double own = all - (double)(s->sd.faults - s->sd.faults_t0) * s->cpu_ns.softdirty_fault;

	if (own < all / TIER__SD_OWN_FLOOR)
		own = all / TIER__SD_OWN_FLOOR;
	return own > 1000 ? (uint64_t)(own / 1000) : 1;
}

/* One read: the pages first seen dirty now join the round's runs in the
 * read's bracket; the picture is made anew. At the round's end (last),
 * the round becomes the last whole one. */
static int sd_read(struct tier_sim *s, bool last)
{
	struct tier__sd_rounds r;
	uint64_t at = writer_us(s);
	int ret;

	ret = read_dirty(s, &s->sd.scan);
	if (ret)
		return ret;
	if (s->sd.nbrk && at <= s->sd.brk_us[s->sd.nbrk - 1])
		at = s->sd.brk_us[s->sd.nbrk - 1] + 1;
	if (s->sd.nbrk < TIER__SD_MAX_BRK)
		s->sd.nbrk++;
	s->sd.brk_us[s->sd.nbrk - 1] = at;
	ret = tier__sd_seen_update(&s->sd.seen, &s->sd.scratch, &s->sd.scan, s->sd.nbrk - 1);
	if (ret)
		return ret;
	r = (struct tier__sd_rounds){
		.pid = SD_PID,
		.seen = &s->sd.seen,
		.prev = &s->sd.prev,
		.brk_us = s->sd.brk_us,
		.prev_brk_us = s->sd.prev_brk_us,
		.nbrk = s->sd.nbrk,
		.nprev_brk = s->sd.nprev,
		.steady = s->sd.whole_rounds >= 2,
	};
	s->sd.pairs.n = 0;
	s->sd.pairs.ntg = 0;
	ret = tier__sd_pairs_add(&s->sd.pairs, &r, last);
	if (ret)
		return ret;
	s->sd.pic_gen++;
	if (last) {
		struct tier__sd_runs t = s->sd.prev;
		uint64_t written = 0;
		size_t k;

		for (k = 0; k < s->sd.seen.n; k++)
			written += (s->sd.seen.v[k].end - s->sd.seen.v[k].start) >> 12;
		s->sd.written_last = written;
		s->sd.prev = s->sd.seen;
		s->sd.seen = t;
		s->sd.seen.n = 0;
		memcpy(s->sd.prev_brk_us, s->sd.brk_us, sizeof(s->sd.brk_us));
		s->sd.nprev = s->sd.nbrk;
		s->sd.whole_rounds++;
	}
	return 0;
}

int tier__sim_sd_tick(struct tier_sim *s)
{
	int ret;

	if (!s->sd.started) {
		s->sd.started = true;
		clear_round(s);
	}
	for (;;) {
		double since_us = (s->app_ns - s->sd.t0_ns) / 1000;
		unsigned k = s->sd.nbrk;

		/* An early read waits for the writer's own time to reach its
		 * own, as the daemon's thread does, at most TIER__SD_STRETCH times
		 * as long on the application's clock. */
		if (k < sizeof(sd_reads_us) / sizeof(sd_reads_us[0])) {
			if ((double)writer_us(s) < (double)sd_reads_us[k] &&
			    since_us < (double)TIER__SD_STRETCH * (double)sd_reads_us[k])
				return 0;
			ret = sd_read(s, false);
		} else {
			if (since_us < (double)s->sd.period_us)
				return 0;
			ret = sd_read(s, true);
			if (!ret)
				clear_round(s);
		}
		if (ret)
			return ret;
	}
}

/* The pages' tiers over [start, end) (addresses), for the picture's
 * populations. */
static void sd_tiers(void *arg, pid_t pid, uint64_t start, uint64_t end, tier__sd_tier_fn *fn,
		     void *fctx)
{
	const struct tier_sim *s = arg;
	uint64_t p = start >> 12, e = end >> 12;

	(void)pid;
	if (e > s->nr_pages)
		e = s->nr_pages;
	while (p < e) {
		uint8_t n = s->page_node[p];
		unsigned tier = n == TIER_NODE_NONE ? TIER_LINUX_TIER_NONE : (unsigned)s->node_rank[n];
		uint64_t q = p + 1;

		while (q < e && s->page_node[q] == n)
			q++;
		fn(fctx, p << 12, q << 12, tier);
		p = q;
	}
}

static void to_obs(const struct tier_linux_addr_obs *a, struct tier_obs *o)
{
	memset(o, 0, sizeof(*o));
	o->page = a->start >> 12;
	o->nr_pages = (uint32_t)((a->end - a->start) >> 12);
	o->kind = a->kind;
	o->write = a->write;
	o->count = a->count;
	o->max = a->max;
	o->latency_us = a->latency_us;
	o->interval_us = a->interval_us;
}

/* The merge's sink: into the observations the collect hands over. */
static void push_sink(void *ctx, const struct tier_linux_addr_obs *obs, size_t n)
{
	struct tier_sim *s = ctx;
	size_t i;

	for (i = 0; i < n; i++) {
		struct tier_obs o;

		to_obs(&obs[i], &o);
		if (tier__sim_obs_push(s, &o))
			s->sd.lost++;
	}
}

int tier__sim_sd_collect(struct tier_sim *s)
{
	struct tier_linux_addr_obs *acc = NULL;
	size_t nacc = 0, i;

	/* Rated where the picture or the pages' tiers changed since the
	 * last collect; else its rates again. */
	if (!s->sd.obs_valid || s->sd.obs_gen != s->sd.pic_gen || s->sd.obs_placed != s->placed_gen) {
		tier__sd_picture(&s->sd.pic, &s->sd.pairs, sd_tiers, s, &s->sd.fits);
		s->sd.obs_valid = true;
		s->sd.obs_gen = s->sd.pic_gen;
		s->sd.obs_placed = s->placed_gen;
		s->work_units += s->sd.pairs.n;
	}
	/* DAMON's latest regions (snapshot mode), taken out to be merged. */
	if ((s->trackers & TRK_DAMON) && s->damon.snapshot && s->damon.snap_n) {
		size_t first = s->damon.snap_first, n = s->damon.snap_n;

		if (n > s->sd.cap_acc) {
			acc = realloc(s->sd.acc, n * sizeof(*acc));
			if (!acc)
				return -ENOMEM;
			s->sd.acc = acc;
			s->sd.cap_acc = n;
		}
		acc = s->sd.acc;
		for (i = 0; i < n; i++) {
			const struct tier_obs *o = &s->obs[first + i];

			acc[i] = (struct tier_linux_addr_obs){
				.pid = SD_PID,
				.start = o->page << 12,
				.end = (o->page + o->nr_pages) << 12,
				.kind = o->kind,
				.write = o->write,
				.count = o->count,
				.max = o->max,
				.interval_us = o->interval_us,
			};
		}
		memmove(s->obs + first, s->obs + first + n, (s->nr_obs - first - n) * sizeof(*s->obs));
		s->nr_obs -= n;
		s->damon.snap_n = 0;
		nacc = n;
		if (!s->sd.damon_seen) {
			s->sd.damon_seen = true;
			s->sd.damon_first_ns = s->app_ns;
		}
		if (!s->sd.whole_rounds && s->app_ns - s->sd.damon_first_ns <= TIER__OBS_HOLD_US * 1e3)
			tier__obs_hold(acc, nacc, SD_PID, TIER__OBS_HOLD_RATE);
	}
	if (!tier__obs_sums_reset(&s->sd.sums, nacc))
		return -ENOMEM;
	tier__obs_written(acc, nacc, &s->sd.sums, s->sd.pic.v, s->sd.pic.n, push_sink, s);
	if (nacc)
		tier__obs_rest(acc, nacc, &s->sd.sums, push_sink, s);
	return s->sd.lost ? -ENOMEM : 0;
}

void tier__sim_sd_release(struct tier_sim *s)
{
	free(s->sd.scan.v);
	free(s->sd.seen.v);
	free(s->sd.prev.v);
	free(s->sd.scratch.v);
	tier__sd_pairs_free(&s->sd.pairs);
	tier__sd_fits_free(&s->sd.fits);
	tier__sd_pic_free(&s->sd.pic);
	tier__obs_sums_free(&s->sd.sums);
	free(s->sd.acc);
	memset(&s->sd, 0, sizeof(s->sd));
}
