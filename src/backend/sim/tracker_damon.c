/* tracker_damon.c - the simulator's DAMON: adaptive regions, one sampled
 * page per region checked every sampling interval, counts reported and
 * regions merged and split every aggregation interval, with DAMON's
 * defaults (Documentation/admin-guide/mm/damon/usage.rst).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/engine_internal.h"

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
	s->policy_cpu_ns += s->cpu_ns.damon_check * (double)s->damon.nr_regions;
	damon_pick_samples(s);
}

static uint32_t diff_u32(uint32_t a, uint32_t b)
{
	return a > b ? a - b : b - a;
}

/* Each region's count as an observation. A policy that reads snapshots
 * gets the latest aggregation's: the one before it, if not yet
 * collected, is taken out of the observations first. */
static int damon_report(struct tier_sim *s, uint32_t max)
{
	size_t i;
	int ret;

	if (s->damon.snapshot) {
		if (s->damon.snap_n) {
			size_t end = s->damon.snap_first + s->damon.snap_n;

			memmove(s->obs + s->damon.snap_first, s->obs + end,
				(s->nr_obs - end) * sizeof(*s->obs));
			s->nr_obs -= s->damon.snap_n;
		}
		s->damon.snap_first = s->nr_obs;
		s->damon.snap_n = s->damon.nr_regions;
	}
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
