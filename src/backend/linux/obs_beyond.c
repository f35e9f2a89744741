/* obs_beyond.c - written observations as what they add to the accessed
 * ones over them (tier__obs_beyond(), tracker_util.h): the damon+softdirty
 * tracker's merge (tracker_combo.c), pure and apart from its trackers. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backend/linux/tracker_util.h"
#include "core/policy.h"

double tier__obs_rate(const struct tier_linux_addr_obs *o)
{
	struct tier_obs t = { .kind = o->kind, .count = o->count, .max = o->max };

	if ((o->kind != TIER_OBS_ACCESSED && o->kind != TIER_OBS_WRITTEN) || !o->count ||
	    !o->interval_us)
		return 0;
	return tier_obs_accesses(&t) * 1e6 / o->interval_us;
}

struct beyond_out {
	struct tier_linux_addr_obs v[256];
	size_t n;
	tier_linux_obs_sink sink;
	void *ctx;
};

static void beyond_emit(struct beyond_out *b, const struct tier_linux_addr_obs *w, uint64_t start,
			uint64_t end, double rate, double own)
{
	struct tier_linux_addr_obs *o;

	if (rate <= 0 || start >= end)
		return;
	if (b->n == sizeof(b->v) / sizeof(b->v[0])) {
		b->sink(b->ctx, b->v, b->n);
		b->n = 0;
	}
	o = &b->v[b->n++];
	*o = *w;
	o->start = start;
	o->end = end;
	if (rate < own) {
		/* Seen in 1 of 2 checks: -ln(1/2) 2 accesses over the interval. */
		double iv = 2.0 * M_LN2 / rate * 1e6;

		o->count = 1;
		o->max = 2;
		o->interval_us = iv >= UINT32_MAX ? UINT32_MAX : iv < 1 ? 1 : (uint32_t)iv;
	}
}

/* acc[] before (pid, addr): the first region of pid ending after addr. */
static size_t acc_find(const struct tier_linux_addr_obs *acc, size_t nacc, pid_t pid,
		       uint64_t addr)
{
	size_t lo = 0, hi = nacc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (acc[mid].pid < pid || (acc[mid].pid == pid && acc[mid].end <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void tier__obs_beyond(const struct tier_linux_addr_obs *acc, size_t nacc,
		      const struct tier_linux_addr_obs *wr, size_t n, tier_linux_obs_sink sink,
		      void *ctx)
{
	struct beyond_out b = { .n = 0, .sink = sink, .ctx = ctx };
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tier_linux_addr_obs *w = &wr[i];
		double own = tier__obs_rate(w);
		uint64_t a = w->start;
		size_t k;

		/* A standing estimate is the least of the page's rate,
		 * whatever the region over it adds (TIER_OBS_STANDING): whole. */
		if (w->kind != TIER_OBS_WRITTEN || own <= 0 || (w->write & TIER_OBS_STANDING)) {
			beyond_emit(&b, w, w->start, w->end, 1, 1);
			continue;
		}
		k = acc_find(acc, nacc, w->pid, a);
		while (a < w->end) {
			const struct tier_linux_addr_obs *r = k < nacc && acc[k].pid == w->pid ?
							      &acc[k] : NULL;
			uint64_t e;

			if (r && r->end <= a) {
				k++;
				continue;
			}
			if (r && r->start <= a) {
				/* Under region r up to its end. */
				e = r->end < w->end ? r->end : w->end;
				beyond_emit(&b, w, a, e, own - tier__obs_rate(r), own);
				k++;
			} else {
				/* No region over a: up to the next one. */
				e = r && r->start < w->end ? r->start : w->end;
				beyond_emit(&b, w, a, e, own, own);
			}
			a = e;
		}
	}
	if (b.n)
		sink(ctx, b.v, b.n);
}
