/* obs_merge.c - the damon+softdirty tracker's merge (tracker_combo.c):
 * written observations whole, and each DAMON region with the accesses its
 * written pages do not explain (tier__obs_written(), tier__obs_rest(),
 * tracker_util.h); and the batches observations go to a sink in
 * (tier__batch_*()). Pure and apart from its trackers: tiersim's model of
 * the daemon's trackers runs it too (src/backend/sim/tracker_sd.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/tracker_util.h"
#include "core/policy.h"

void tier__batch_init(struct tier__obs_batch *b, tier_linux_obs_sink sink, void *ctx)
{
	b->n = 0;
	b->sink = sink;
	b->ctx = ctx;
	b->total = 0;
}

void tier__batch_flush(struct tier__obs_batch *b)
{
	if (b->n && b->sink)
		b->sink(b->ctx, b->obs, b->n);
	b->total += b->n;
	b->n = 0;
}

void tier__batch_add(struct tier__obs_batch *b, const struct tier_linux_addr_obs *o)
{
	if (b->n == sizeof(b->obs) / sizeof(b->obs[0]))
		tier__batch_flush(b);
	b->obs[b->n++] = *o;
}

double tier__obs_rate(const struct tier_linux_addr_obs *o)
{
	struct tier_obs t = { .kind = o->kind, .count = o->count, .max = o->max };

	if ((o->kind != TIER_OBS_ACCESSED && o->kind != TIER_OBS_WRITTEN) || !o->count ||
	    !o->interval_us)
		return 0;
	return tier_obs_accesses(&t) * 1e6 / o->interval_us;
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

/* acc_find()'s answer when it is k (a guess: the region the last run
 * began in, or the next), else acc_find()'s. */
static size_t acc_find_from(const struct tier_linux_addr_obs *acc, size_t nacc, pid_t pid,
			    uint64_t addr, size_t k)
{
	if (k < nacc && acc[k].pid == pid && acc[k].end > addr &&
	    (k == 0 || acc[k - 1].pid != pid || acc[k - 1].end <= addr))
		return k;
	if (k + 1 < nacc && acc[k + 1].pid == pid && acc[k + 1].end > addr && acc[k].pid == pid &&
	    acc[k].end <= addr)
		return k + 1;
	return acc_find(acc, nacc, pid, addr);
}

bool tier__obs_sums_reset(struct tier__obs_sums *s, size_t nacc)
{
	s->nlow = 0;
	s->lost = false;
	if (nacc > s->cap) {
		size_t nc = s->cap ? s->cap : 64;
		double *w, *l;

		while (nc < nacc)
			nc *= 2;
		w = realloc(s->wsum, nc * sizeof(*w));
		if (w)
			s->wsum = w;
		l = w ? realloc(s->lsum, nc * sizeof(*l)) : NULL;
		if (!l) {
			s->cap = 0;
			return false;
		}
		s->lsum = l;
		s->cap = nc;
	}
	if (nacc) {
		memset(s->wsum, 0, nacc * sizeof(*s->wsum));
		memset(s->lsum, 0, nacc * sizeof(*s->lsum));
	}
	return true;
}

void tier__obs_sums_free(struct tier__obs_sums *s)
{
	free(s->wsum);
	free(s->lsum);
	free(s->low);
	memset(s, 0, sizeof(*s));
}

/* Keeps a lower-bound piece [a, e) of pid under region k. */
static void low_add(struct tier__obs_sums *s, pid_t pid, uint64_t a, uint64_t e, size_t k)
{
	if (s->nlow && s->low[s->nlow - 1].pid == pid && s->low[s->nlow - 1].k == k &&
	    s->low[s->nlow - 1].end == a) {
		s->low[s->nlow - 1].end = e;
		return;
	}
	if (s->nlow == s->cap_low) {
		size_t nc = s->cap_low ? s->cap_low * 2 : 256;
		struct tier__obs_low *v = realloc(s->low, nc * sizeof(*v));

		if (!v) {
			s->lost = true;
			return;
		}
		s->low = v;
		s->cap_low = nc;
	}
	s->low[s->nlow++] = (struct tier__obs_low){ pid, a, e, k };
}

void tier__obs_written(const struct tier_linux_addr_obs *acc, size_t nacc,
		       struct tier__obs_sums *s, const struct tier_linux_addr_obs *wr, size_t n,
		       tier_linux_obs_sink sink, void *ctx)
{
	size_t i, from = 0;

	if (nacc > s->cap)
		nacc = 0;	/* no room to add up: the regions pass unchanged */
	for (i = 0; i < n; i++) {
		const struct tier_linux_addr_obs *w = &wr[i];
		double own = w->kind == TIER_OBS_WRITTEN ? tier__obs_rate(w) : 0;
		bool low = own > 0 && (w->write & TIER_OBS_AT_LEAST);
		size_t k;

		if (own <= 0)
			continue;
		/* Runs come in address order: the region the last one
		 * began in is where to look first. */
		from = acc_find_from(acc, nacc, w->pid, w->start, from);
		for (k = from;
		     k < nacc && acc[k].pid == w->pid && acc[k].start < w->end; k++) {
			uint64_t a = acc[k].start > w->start ? acc[k].start : w->start;
			uint64_t e = acc[k].end < w->end ? acc[k].end : w->end;

			if (a >= e)
				continue;
			s->wsum[k] += own * (double)(e - a);
			if (low) {
				s->lsum[k] += (double)(e - a);
				low_add(s, w->pid, a, e, k);
			}
		}
	}
	if (n)
		sink(ctx, wr, n);
}

/* Rate r as one access seen in two checks over 2 ln 2 / r. */
static void set_rate(struct tier_linux_addr_obs *o, double rate)
{
	double iv = 2.0 * M_LN2 / rate * 1e6;

	o->count = 1;
	o->max = 2;
	o->interval_us = iv >= UINT32_MAX ? UINT32_MAX : iv < 1 ? 1 : (uint32_t)iv;
}

void tier__obs_hold(struct tier_linux_addr_obs *acc, size_t nacc, pid_t pid, double max_rate)
{
	size_t i;

	for (i = 0; i < nacc; i++) {
		struct tier_linux_addr_obs *r = &acc[i];

		if (r->pid != pid || r->kind != TIER_OBS_ACCESSED || !r->count ||
		    (uint64_t)r->count * 2 >= r->max || tier__obs_rate(r) <= max_rate)
			continue;
		set_rate(r, max_rate);
	}
}

/* The most accesses per second a page of region r can have read as: every
 * check saw one. */
static double region_max_rate(const struct tier_linux_addr_obs *r)
{
	struct tier_linux_addr_obs full = *r;

	full.count = full.max ? full.max : 1;
	return tier__obs_rate(&full);
}

static int low_cmp(const void *a, const void *b)
{
	const struct tier__obs_low *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

void tier__obs_rest(const struct tier_linux_addr_obs *acc, size_t nacc,
		    struct tier__obs_sums *s, tier_linux_obs_sink sink, void *ctx)
{
	struct tier_linux_addr_obs v[256];
	size_t i, nv = 0, j = 0;
	bool sums = nacc <= s->cap;

	/* The pieces in region order (targets may come in another order
	 * than the regions' pids). */
	for (i = 1; i < s->nlow; i++)
		if (low_cmp(&s->low[i - 1], &s->low[i]) > 0) {
			qsort(s->low, s->nlow, sizeof(*s->low), low_cmp);
			break;
		}

	for (i = 0; i < nacc; i++) {
		const struct tier_linux_addr_obs *r = &acc[i];
		double rate = tier__obs_rate(r), len = (double)(r->end - r->start), rest;
		double wsum = sums ? s->wsum[i] : 0, lsum = sums ? s->lsum[i] : 0, extra = 0;

		if (nv + 1 >= sizeof(v) / sizeof(v[0])) {
			sink(ctx, v, nv);
			nv = 0;
		}
		v[nv] = *r;
		if (rate > 0 && wsum > 0) {
			rest = rate * len - wsum;
			/* First to the pages rated only at least (their pieces
			 * are kept in region order: j walks them along). */
			if (rest > 0 && lsum > 0) {
				extra = rest / lsum;
				if (extra > region_max_rate(r))
					extra = region_max_rate(r);
				rest -= extra * lsum;
			}
			if (rest <= rate * len * 1e-6) {
				/* Its written pages explain all its accesses. */
				v[nv].count = 0;
			} else {
				set_rate(&v[nv], rest / len);
			}
		}
		nv++;
		for (; sums && j < s->nlow && s->low[j].k <= i; j++) {
			if (s->low[j].k < i || extra <= 0)
				continue;
			if (nv == sizeof(v) / sizeof(v[0])) {
				sink(ctx, v, nv);
				nv = 0;
			}
			v[nv] = *r;
			v[nv].start = s->low[j].start;
			v[nv].end = s->low[j].end;
			v[nv].write = 0;
			set_rate(&v[nv], extra);
			nv++;
		}
	}
	if (nv)
		sink(ctx, v, nv);
}

struct top_pass {
	struct tier__obs_batch *b;
	const struct tier_linux_addr_obs *r;
};

static void top_piece(void *fctx, uint64_t start, uint64_t end, unsigned tier)
{
	struct top_pass *tp = fctx;
	struct tier_linux_addr_obs o;

	if (tier != 0 && tier != TIER_LINUX_TIER_NONE)
		return;
	o = *tp->r;
	o.start = start > tp->r->start ? start : tp->r->start;
	o.end = end < tp->r->end ? end : tp->r->end;
	if (o.start < o.end)
		tier__batch_add(tp->b, &o);
}

void tier__obs_top_tier(const struct tier_linux_addr_obs *acc, size_t nacc,
			const struct tier_linux_ctx *ctx, tier__covers_fn covered, void *cov_arg,
			tier_linux_obs_sink sink, void *sctx)
{
	struct tier__obs_batch b;
	size_t i;

	tier__batch_init(&b, sink, sctx);
	for (i = 0; i < nacc; i++) {
		struct top_pass tp = { &b, &acc[i] };
		uint64_t a = acc[i].start, e;

		if (!ctx->tiers) {
			tier__batch_add(&b, &acc[i]);
			continue;
		}
		/* Run by run of the same cover: the covered ones by tier. */
		for (; a < acc[i].end; a = e) {
			if (covered(cov_arg, acc[i].pid, a, acc[i].end, &e)) {
				ctx->tiers(ctx->tiers_arg, acc[i].pid, a, e, top_piece, &tp);
			} else {
				struct tier_linux_addr_obs o = acc[i];

				o.start = a;
				o.end = e;
				tier__batch_add(&b, &o);
			}
		}
	}
	tier__batch_flush(&b);
}
