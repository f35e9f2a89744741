/* softdirty_picture.c - the soft-dirty tracker's runs and picture
 * (contract in softdirty_picture.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/softdirty_picture.h"
#include "core/policy.h"

/* Array v of n elements of size elem in cap, with room for one more:
 * doubled when full (first elements at first), to at most max; NULL when
 * there is no room (v unchanged). */
static void *room(void *v, size_t n, size_t *cap, size_t elem, size_t first, size_t max)
{
	size_t nc = *cap ? 2 * *cap : first;

	if (n < *cap)
		return v;
	if (nc > max || !(v = realloc(v, nc * elem)))
		return NULL;
	*cap = nc;
	return v;
}

static bool runs_add(struct tier__sd_runs *r, uint64_t start, uint64_t end, unsigned k)
{
	struct tier__sd_run *nv;

	if (r->n && r->v[r->n - 1].end == start && r->v[r->n - 1].k == k) {
		r->v[r->n - 1].end = end;
		return true;
	}
	nv = room(r->v, r->n, &r->cap, sizeof(*r->v), 64, SIZE_MAX / sizeof(*r->v));
	if (!nv)
		return false;
	r->v = nv;
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

/* A run of the picture at rate; flags: TIER_OBS_STANDING (the rate
 * stands on both rounds), TIER_OBS_AT_LEAST (it is the table's highest:
 * a lower bound), core/ops.h. */
static void pic_add(struct tier__sd_pic *pic, pid_t pid, uint64_t start, uint64_t end, double rate,
		    uint16_t flags)
{
	struct tier_linux_addr_obs *o, *nv;
	double win = -log(1.0 - 1.0 / TIER__SD_CHECKS) * TIER__SD_CHECKS / rate * 1e6;
	uint32_t iv = win >= UINT32_MAX ? UINT32_MAX : win < 1 ? 1 : (uint32_t)win;

	if (pic->n) {
		o = &pic->v[pic->n - 1];
		if (o->pid == pid && o->end == start && o->interval_us == iv && o->write == flags) {
			o->end = end;
			return;
		}
	}
	nv = room(pic->v, pic->n, &pic->cap, sizeof(*pic->v), 256, TIER__SD_PICTURE_MAX);
	if (!nv) {
		pic->dropped++;
		return;
	}
	pic->v = nv;
	o = &pic->v[pic->n++];
	memset(o, 0, sizeof(*o));
	o->pid = pid;
	o->start = start;
	o->end = end;
	o->kind = TIER_OBS_WRITTEN;
	o->write = flags;
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

/* Adds a run of pair kp, kc of the picture's latest target. */
static void pair_add(void *ctx, uint64_t start, uint64_t end, unsigned kp, unsigned kc)
{
	struct tier__sd_pairs *p = ctx;
	uint32_t tg = (uint32_t)(p->ntg - 1);
	struct tier__sd_pair_run *r, *nv;

	if (p->n && p->v[p->n - 1].tg == tg && p->v[p->n - 1].end == start &&
	    p->v[p->n - 1].kp == kp && p->v[p->n - 1].kc == kc) {
		p->v[p->n - 1].end = end;
		return;
	}
	nv = room(p->v, p->n, &p->cap, sizeof(*p->v), 256, TIER__SD_PICTURE_MAX);
	if (!nv) {
		p->dropped++;
		return;
	}
	p->v = nv;
	r = &p->v[p->n++];
	r->start = start;
	r->end = end;
	r->tg = tg;
	r->kp = (uint8_t)kp;
	r->kc = (uint8_t)kc;
}

int tier__sd_pairs_add(struct tier__sd_pairs *p, const struct tier__sd_rounds *r, bool last)
{
	struct tier__sd_pair_tg *t;

	t = room(p->tg, p->ntg, &p->cap_tg, sizeof(*p->tg), 8, SIZE_MAX / sizeof(*p->tg));
	if (!t)
		return -ENOMEM;
	p->tg = t;
	t = &p->tg[p->ntg++];
	memset(t, 0, sizeof(*t));
	t->pid = r->pid;
	t->nbrk = r->nbrk < TIER__SD_MAX_BRK ? r->nbrk : TIER__SD_MAX_BRK;
	t->nprev_brk = r->nprev_brk < TIER__SD_MAX_BRK ? r->nprev_brk : TIER__SD_MAX_BRK;
	memcpy(t->brk_us, r->brk_us, t->nbrk * sizeof(*t->brk_us));
	memcpy(t->prev_brk_us, r->prev_brk_us, t->nprev_brk * sizeof(*t->prev_brk_us));
	t->steady = r->steady;
	t->last = last;
	walk_pairs(r, pair_add, p);
	return 0;
}

void tier__sd_pairs_free(struct tier__sd_pairs *p)
{
	free(p->v);
	free(p->tg);
	memset(p, 0, sizeof(*p));
}

/* A population's class: its tier, the slower ones and the unknown
 * together in the last. */
static unsigned tier_class(unsigned tier)
{
	return tier < TIER__SD_CLASSES - 1 ? tier : TIER__SD_CLASSES - 1;
}

struct pic_ctx {
	struct tier__sd_pic *pic;
	const struct tier__sd_pair_tg *tg;
	const struct tier__sd_pair_run *run;
	uint32_t run_idx;
	bool lost;			/* a piece found no room in pic->pieces */
	/* counting: pages per class and pair */
	uint64_t (*count)[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	/* emitting: each class's rates, and the table's highest */
	const double (*rate)[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	double rmax;
};

static void emit(struct pic_ctx *pc, const struct tier__sd_pair_run *run, uint64_t start,
		 uint64_t end, unsigned c)
{
	double r = pc->rate[c][run->kp][run->kc];
	uint16_t flags = (run->kp && run->kc ? TIER_OBS_STANDING : 0) |
			 (r >= pc->rmax * (1 - 1e-9) ? TIER_OBS_AT_LEAST : 0);

	if ((run->kc || !pc->tg->last) && r >= TIER__SD_PIC_MIN_RATE)
		pic_add(pc->pic, pc->tg->pid, start, end, r, flags);
}

static void piece(void *ctx, uint64_t start, uint64_t end, unsigned tier)
{
	struct pic_ctx *pc = ctx;
	const struct tier__sd_pair_run *run = pc->run;
	unsigned c = tier_class(tier);
	struct tier__sd_pic *pic = pc->pic;

	if (!pc->count) {
		emit(pc, run, start, end, c);
		return;
	}
	pc->count[c][run->kp][run->kc] += (end - start) >> 12;
	if (pc->lost)
		return;
	if (pic->nr_pieces && pic->pieces[pic->nr_pieces - 1].run == pc->run_idx &&
	    pic->pieces[pic->nr_pieces - 1].end == start && pic->pieces[pic->nr_pieces - 1].cls == c) {
		pic->pieces[pic->nr_pieces - 1].end = end;
		return;
	}
	{
		struct tier__sd_piece *nv = room(pic->pieces, pic->nr_pieces, &pic->cap_pieces,
						 sizeof(*pic->pieces), 256,
						 SIZE_MAX / sizeof(*pic->pieces));

		if (!nv) {
			pc->lost = true;
			return;
		}
		pic->pieces = nv;
		pic->pieces[pic->nr_pieces++] = (struct tier__sd_piece){ start, end, pc->run_idx, c };
	}
}

/* Calls piece() over runs [i, j) of one target, split by tier where
 * tiers tells them (all in the last class where not). Counting, it keeps
 * the pieces in pic->pieces (emptied first); emitting, it hands out the
 * pieces kept, where all were, rather than asking for the tiers again
 * (the two walks of every run's pages were 8-9% of a steady step's CPU in
 * the test guest; bench/results/guest-steady-profile.txt). */
static void target_pieces(struct pic_ctx *pc, const struct tier__sd_pairs *p, size_t i, size_t j,
			  tier__sd_tiers_fn *tiers, void *tiers_arg)
{
	if (pc->count) {
		pc->pic->nr_pieces = 0;
		pc->lost = false;
	} else if (!pc->lost) {
		size_t k;

		for (k = 0; k < pc->pic->nr_pieces; k++) {
			const struct tier__sd_piece *q = &pc->pic->pieces[k];

			emit(pc, &p->v[q->run], q->start, q->end, q->cls);
		}
		return;
	}
	for (; i < j; i++) {
		pc->run = &p->v[i];
		pc->run_idx = (uint32_t)i;
		if (tiers)
			tiers(tiers_arg, pc->tg->pid, p->v[i].start, p->v[i].end, piece, pc);
		else
			piece(pc, p->v[i].start, p->v[i].end, TIER__SD_CLASSES - 1);
	}
}

void tier__sd_pic_free(struct tier__sd_pic *pic)
{
	free(pic->v);
	free(pic->pieces);
	memset(pic, 0, sizeof(*pic));
}

/* Whether a tier has pages written in both rounds, or in this one alone,
 * but too few of them for a fit of its own. */
static bool few_somewhere(const uint64_t count[][TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1],
			  const struct tier__sd_pair_tg *tg)
{
	unsigned c, kp, kc;

	for (c = 0; c < TIER__SD_CLASSES; c++) {
		uint64_t both = 0, alone = 0;

		for (kp = 0; kp <= tg->nprev_brk; kp++)
			for (kc = 1; kc <= tg->nbrk; kc++)
				*(kp ? &both : &alone) += count[c][kp][kc];
		if ((both && both < TIER__SD_POP_MIN) || (alone && alone < TIER__SD_POP_MIN))
			return true;
	}
	return false;
}

void tier__sd_fits_free(struct tier__sd_fits *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

/* The entry of target pid in f (a new one, not valid, where it has none;
 * the spare where there is no room for one). Looked for from the one after
 * the last found: a picture's targets come in the last one's order, and
 * from the start each lookup was a pass over a thousand processes'
 * entries of 8 KiB each. */
static struct tier__sd_fit *fit_of(struct tier__sd_fits *f, pid_t pid)
{
	struct tier__sd_fit *e;
	size_t i, k;

	for (k = 0; k < f->n; k++) {
		i = (f->next + k) % f->n;
		if (f->v[i].pid == pid && !f->v[i].used) {
			f->next = i + 1;
			return &f->v[i];
		}
	}
	e = room(f->v, f->n, &f->cap, sizeof(*f->v), 4, SIZE_MAX / sizeof(*f->v));
	if (e)
		f->v = e;
	e = e ? &f->v[f->n++] : &f->spare;
	e->pid = pid;
	e->valid = false;
	memset(e->prior, 0, sizeof(e->prior));
	return e;
}

/* Whether e's rates are the fit of target tg's counts (in e->count). */
static bool fit_holds(const struct tier__sd_fit *e, const struct tier__sd_pair_tg *tg,
		      const uint64_t count[][TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1],
		      bool tiers)
{
	return e->valid && e->tiers == tiers && e->nbrk == tg->nbrk &&
	       e->nprev_brk == tg->nprev_brk &&
	       !memcmp(e->brk_us, tg->brk_us, tg->nbrk * sizeof(*tg->brk_us)) &&
	       !memcmp(e->prev_brk_us, tg->prev_brk_us, tg->nprev_brk * sizeof(*tg->prev_brk_us)) &&
	       !memcmp(e->count, count, sizeof(e->count));
}

/* Fits e's rates to target tg's counts (e->count): the reads' table and
 * likelihoods made once for all its populations (tier__sd_reads). */
static void fit(struct tier__sd_fit *e, const struct tier__sd_pair_tg *tg, bool tiers)
{
	const unsigned all = TIER__SD_CLASSES;
	struct tier__sd_reads r;
	unsigned c;

	tier__sd_reads_init(&r, tg->prev_brk_us, tg->nprev_brk, tg->brk_us, tg->nbrk);
	/* the whole target's populations where a tier has too few pages
	 * for its own (or tiers are not told apart), then each tier's */
	if (!tiers || few_somewhere((const uint64_t(*)[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1])
				    e->count, tg))
		tier__sd_rate_pop(&r, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])e->count[all],
				  e->rate[all], NULL, &e->prior[all]);
	else	/* what a tier without such pages falls back to: none read */
		memcpy(e->rate[all], r.table, sizeof(r.table));
	for (c = 0; c < TIER__SD_CLASSES; c++) {
		if (!tiers) {
			memcpy(e->rate[c], e->rate[all], sizeof(e->rate[all]));
			continue;
		}
		tier__sd_rate_pop(&r, (const uint64_t(*)[TIER__SD_MAX_BRK + 1])e->count[c], e->rate[c],
				  (const double(*)[TIER__SD_MAX_BRK + 1])e->rate[all], &e->prior[c]);
	}
	e->tiers = tiers;
	e->nbrk = tg->nbrk;
	e->nprev_brk = tg->nprev_brk;
	memcpy(e->brk_us, tg->brk_us, sizeof(e->brk_us));
	memcpy(e->prev_brk_us, tg->prev_brk_us, sizeof(e->prev_brk_us));
	e->valid = true;
}

/* Drops the entries of targets the picture did not have. */
static void fits_prune(struct tier__sd_fits *f)
{
	size_t i, n = 0;

	for (i = 0; i < f->n; i++)
		if (f->v[i].used) {
			if (n != i)
				f->v[n] = f->v[i];
			f->v[n++].used = false;
		}
	f->n = n;
}

/* fits->say (softdirty_picture.h) for target tg, its pages by class and
 * pair as counted before the fit (count), at e's rates. */
static void say_pairs(struct tier__sd_fits *fits, const struct tier__sd_pair_tg *tg,
		      const uint64_t count[][TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1],
		      const struct tier__sd_fit *e)
{
	char *b = fits->say;
	size_t len = sizeof(fits->say), off = 0;
	unsigned c, kp, kc, k;

#define SAY(...)                                                              \
	do {                                                                  \
		if (off < len)                                                \
			off += (size_t)snprintf(b + off, len - off, __VA_ARGS__); \
	} while (0)
	b[0] = 0;
	SAY("pid %d%s, reads", (int)tg->pid, tg->steady ? "" : " (not steady)");
	for (k = 0; k < tg->nprev_brk; k++)
		SAY("%s%.0f", k ? "/" : " ", tg->prev_brk_us[k] / 1e3);
	SAY(" then");
	for (k = 0; k < tg->nbrk; k++)
		SAY("%s%.0f", k ? "/" : " ", tg->brk_us[k] / 1e3);
	SAY(" ms; pairs at %.0f/s or more:", TIER__SD_SAY_RATE);
	for (c = 0; c < TIER__SD_CLASSES; c++)
		for (kp = 0; kp <= tg->nprev_brk; kp++)
			for (kc = 0; kc <= tg->nbrk; kc++)
				if (count[c][kp][kc] >= TIER__SD_SAY_PAGES &&
				    e->rate[c][kp][kc] >= TIER__SD_SAY_RATE)
					SAY(" tier %u %u/%u %llu@%.1f", c, kp, kc,
					    (unsigned long long)count[c][kp][kc], e->rate[c][kp][kc]);
#undef SAY
}

void tier__sd_picture(struct tier__sd_pic *pic, const struct tier__sd_pairs *p,
		      tier__sd_tiers_fn *tiers, void *tiers_arg, struct tier__sd_fits *fits)
{
	uint64_t count[TIER__SD_CLASSES + 1][TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	uint64_t said[TIER__SD_CLASSES + 1][TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	const unsigned all = TIER__SD_CLASSES;
	size_t i = 0, j;

	pic->n = 0;
	fits->say[0] = 0;
	fits->next = 0;
	while (i < p->n) {
		const struct tier__sd_pair_tg *tg = &p->tg[p->v[i].tg];
		struct pic_ctx pc = { .pic = pic, .tg = tg, .count = count };
		struct tier__sd_fit *e;
		unsigned c, kp, kc;

		for (j = i; j < p->n && p->v[j].tg == p->v[i].tg; j++)
			;
		memset(count, 0, sizeof(count));
		target_pieces(&pc, p, i, j, tiers, tiers_arg);
		if (!i)
			memcpy(said, count, sizeof(said));
		for (c = 0; c < TIER__SD_CLASSES; c++)
			for (kp = 0; kp <= tg->nprev_brk; kp++)
				for (kc = 0; kc <= tg->nbrk; kc++) {
					/* pairs over both rounds: steady targets only */
					if (kp && kc && !tg->steady)
						count[c][kp][kc] = 0;
					count[all][kp][kc] += count[c][kp][kc];
				}
		e = fit_of(fits, tg->pid);
		if (fit_holds(e, tg, (const uint64_t(*)[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1])count,
			      tiers != NULL)) {
			fits->reused++;
		} else {
			memcpy(e->count, count, sizeof(count));
			fit(e, tg, tiers != NULL);
			fits->fitted++;
		}
		e->used = true;
		if (!i)
			say_pairs(fits, tg, (const uint64_t(*)[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1])said, e);
		pc.count = NULL;
		pc.rate = (const double(*)[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1])e->rate;
		pc.rmax = tier__sd_rate_max(tg->prev_brk_us, tg->nprev_brk, tg->brk_us);
		target_pieces(&pc, p, i, j, tiers, tiers_arg);
		i = j;
	}
	fits_prune(fits);
	fits->spare.used = false;
}
