/* softdirty_picture.c - the soft-dirty tracker's runs and picture
 * (contract in softdirty_picture.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/softdirty_picture.h"
#include "core/policy.h"

static bool runs_add(struct tier__sd_runs *r, uint64_t start, uint64_t end, unsigned k)
{
	if (r->n && r->v[r->n - 1].end == start && r->v[r->n - 1].k == k) {
		r->v[r->n - 1].end = end;
		return true;
	}
	if (r->n == r->cap) {
		size_t nc = r->cap ? 2 * r->cap : 64;
		struct tier__sd_run *nv = realloc(r->v, nc * sizeof(*nv));

		if (!nv)
			return false;
		r->v = nv;
		r->cap = nc;
	}
	r->v[r->n++] = (struct tier__sd_run){ start, end, k };
	return true;
}

int tier__sd_seen_update(struct tier__sd_runs *seen, struct tier__sd_runs *scratch,
			 const struct tier__sd_scan *scan, unsigned k_new)
{
	const struct tier__sd_runs *old = seen;
	struct tier__sd_runs swap;
	size_t i, k = 0;

	scratch->n = 0;
	for (i = 0; i < scan->n; i++) {
		uint64_t a = scan->v[i].start, e = scan->v[i].end;

		while (a < e) {
			uint64_t b;

			while (k < old->n && old->v[k].end <= a)
				k++;
			if (k == old->n || old->v[k].start >= e) {
				if (!runs_add(scratch, a, e, k_new))
					return -ENOMEM;
				break;
			}
			if (old->v[k].start > a) {
				if (!runs_add(scratch, a, old->v[k].start, k_new))
					return -ENOMEM;
				a = old->v[k].start;
			}
			b = old->v[k].end < e ? old->v[k].end : e;
			if (!runs_add(scratch, a, b, old->v[k].k))
				return -ENOMEM;
			a = b;
		}
	}
	swap = *seen;
	*seen = *scratch;
	*scratch = swap;
	return 0;
}

/* A run of the picture at rate; standing: the rate stands on both rounds
 * (TIER_OBS_STANDING, core/ops.h). */
static void pic_add(struct tier__sd_pic *pic, pid_t pid, uint64_t start, uint64_t end, double rate,
		    bool standing)
{
	struct tier_linux_addr_obs *o;
	double win = -log(1.0 - 1.0 / TIER__SD_CHECKS) * TIER__SD_CHECKS / rate * 1e6;
	uint32_t iv = win >= UINT32_MAX ? UINT32_MAX : win < 1 ? 1 : (uint32_t)win;

	if (pic->n) {
		o = &pic->v[pic->n - 1];
		if (o->pid == pid && o->end == start && o->interval_us == iv &&
		    o->write == (standing ? TIER_OBS_STANDING : 0)) {
			o->end = end;
			return;
		}
	}
	if (pic->n == pic->cap) {
		size_t nc = pic->cap ? 2 * pic->cap : 256;
		struct tier_linux_addr_obs *nv;

		if (nc > TIER__SD_PICTURE_MAX || !(nv = realloc(pic->v, nc * sizeof(*nv)))) {
			pic->dropped++;
			return;
		}
		pic->v = nv;
		pic->cap = nc;
	}
	o = &pic->v[pic->n++];
	memset(o, 0, sizeof(*o));
	o->pid = pid;
	o->start = start;
	o->end = end;
	o->kind = TIER_OBS_WRITTEN;
	o->write = standing ? TIER_OBS_STANDING : 0;
	o->count = 1;
	o->max = TIER__SD_CHECKS;
	o->interval_us = iv;
}

/* The pages written in the last round or in this one, address order, in
 * pieces over which neither round's bracket changes: f(ctx, start, end,
 * kp, kc), kp and kc the brackets + 1 (0: not written in that round). */
typedef void pair_fn(void *ctx, uint64_t start, uint64_t end, unsigned kp, unsigned kc);

static void walk_pairs(const struct tier__sd_rounds *r, pair_fn *f, void *ctx)
{
	const struct tier__sd_runs *sn = r->seen, *pv = r->prev;
	size_t i = 0, j = 0, np = pv->n;
	uint64_t pos = 0;

	while (i < sn->n || j < np) {
		uint64_t ss = i < sn->n ? sn->v[i].start : UINT64_MAX;
		uint64_t ps = j < np ? pv->v[j].start : UINT64_MAX;
		uint64_t x = ss < ps ? ss : ps, e = UINT64_MAX;
		bool in_s, in_p;

		if (x < pos)
			x = pos;
		in_s = i < sn->n && sn->v[i].start <= x;
		in_p = j < np && pv->v[j].start <= x;
		if (in_s || i < sn->n)
			e = in_s ? sn->v[i].end : sn->v[i].start;
		if (j < np) {
			uint64_t pe = in_p ? pv->v[j].end : pv->v[j].start;

			e = pe < e ? pe : e;
		}
		if (in_s || in_p)
			f(ctx, x, e, in_p ? pv->v[j].k + 1 : 0, in_s ? sn->v[i].k + 1 : 0);
		pos = e;
		if (i < sn->n && sn->v[i].end <= pos)
			i++;
		if (j < np && pv->v[j].end <= pos)
			j++;
	}
}

/* Pages per pair of brackets, of those written in both rounds. */
static void count_pair(void *ctx, uint64_t start, uint64_t end, unsigned kp, unsigned kc)
{
	uint64_t (*count)[TIER__SD_MAX_BRK + 1] = ctx;

	if (kp && kc)
		count[kp][kc] += (end - start) >> 12;
}

struct pic_ctx {
	struct tier__sd_pic *pic;
	pid_t pid;
	bool last;
	double (*rate)[TIER__SD_MAX_BRK + 1];
};

static void pic_pair(void *ctx, uint64_t start, uint64_t end, unsigned kp, unsigned kc)
{
	struct pic_ctx *pc = ctx;
	double r = pc->rate[kp][kc];

	if ((kc || !pc->last) && r >= TIER__SD_PIC_MIN_RATE)
		pic_add(pc->pic, pc->pid, start, end, r, kp && kc);
}

void tier__sd_picture(struct tier__sd_pic *pic, const struct tier__sd_rounds *r, bool last,
		      double rate[][TIER__SD_MAX_BRK + 1])
{
	uint64_t count[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	struct pic_ctx pc = { pic, r->pid, last, rate };

	memset(count, 0, sizeof(count));
	if (r->steady)
		walk_pairs(r, count_pair, count);
	tier__sd_rate_table_pop(r->prev_brk_us, r->nprev_brk, r->brk_us, r->nbrk,
				(const uint64_t(*)[TIER__SD_MAX_BRK + 1])count, rate);
	walk_pairs(r, pic_pair, &pc);
}
