/* fill.c - the tierd policy's moves: filling one tier rank r a tick, in
 * named steps (tier__tierd_fill_tier()):
 *  1. caps      the coldest pages of every group over its cap of r go down;
 *  2. gather    pages of r advised cold go to the slowest tier; the other
 *               pages of r are the victims, the pages below r hot enough
 *               for it (or owed room by their group's share) the
 *               candidates;
 *  3. order     as many candidates as the budget can move, hottest first,
 *               those of groups below their share ahead; victims coldest
 *               first;
 *  4. promote   each candidate into free room above the headroom, else in
 *               exchange for the coldest victims while the exchange pays;
 *  5. headroom  clearly cold victims go down while r is short of its
 *               headroom.
 * A move must pay for itself (expected latency saved over the long time
 * constant > its cost), an exchange must gain a margin, and a page that
 * moved waits a cool-down before it may move back (ping-pong damping).
 * Moves queue on t->mover within the migration budget; the tick flushes
 * them before it plans the next tier.
 */
#include <math.h>
#include <stdlib.h>

#include "core/policies/tierd/internal.h"

/* An index of down[] whose page an exchange already took. */
#define TAKEN UINT64_MAX

/* One tier's fill, from step to step. */
struct fill {
	int r;				/* the tier rank filled */
	uint64_t now_us;
	uint64_t room_keep;		/* pages r keeps free: its headroom */
	uint64_t page_bytes;
	bool groups;			/* control groups' rules apply */
	size_t nr_up;			/* candidates: t->cand[0, nr_up) */
	size_t nr_first;		/* of which [0, nr_first) are owed room
					 * by their group's share */
	size_t nr_down;			/* victims: t->down[0, nr_down) */
	size_t j;			/* victims before down[j] are taken or
					 * passed over */
};

/* What became of a candidate. */
enum promoted {
	PROMOTED_NEXT,			/* moved, queued, or passed over */
	PROMOTED_NO_ROOM,		/* no victim would free room for it */
	PROMOTED_NO_BUDGET,		/* the budget ran out */
};

/* --- the lists ------------------------------------------------------------ */

/* Room for need entries in the list *v of *cap entries, grown by
 * doubling. False out of memory: the caller takes fewer entries (fewer
 * candidates or victims this tick; nothing is harmed). */
static bool room(uint64_t **v, size_t *cap, size_t need)
{
	size_t nc = *cap ? *cap : 1024;
	uint64_t *q;

	if (need <= *cap)
		return true;
	while (nc < need)
		nc *= 2;
	q = realloc(*v, nc * sizeof(**v));
	if (!q)
		return false;
	*v = q;
	*cap = nc;
	return true;
}

static bool cand_room(struct tier__tierd *t, size_t need)
{
	return room(&t->cand, &t->cap_cand, need);
}

static bool down_room(struct tier__tierd *t, size_t need)
{
	return room(&t->down, &t->cap_down, need);
}

/* --- ordering ------------------------------------------------------------- */

/* Moves the k pages of a[0..n) with the highest (desc) or lowest scores to
 * the front, in no order (quickselect, median of three: O(n)). */
static void select_k(uint64_t *a, size_t n, size_t k, const float *score, bool desc)
{
	size_t lo = 0, hi = n;

	if (k >= n)
		return;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, i, store;
		float x = score[a[lo]], y = score[a[mid]], z = score[a[hi - 1]];
		float pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		uint64_t tmp;

		/* Three-way partition: before, equal, after the pivot. */
		size_t lt = lo, gt = hi;

		i = lo;
		while (i < gt) {
			float v = score[a[i]];
			bool before = desc ? v > pivot : v < pivot;
			bool after = desc ? v < pivot : v > pivot;

			if (before) {
				tmp = a[i]; a[i] = a[lt]; a[lt] = tmp;
				lt++;
				i++;
			} else if (after) {
				gt--;
				tmp = a[i]; a[i] = a[gt]; a[gt] = tmp;
			} else {
				i++;
			}
		}
		store = k;
		if (store < lt)
			hi = lt;
		else if (store < gt)
			return;
		else
			lo = gt;
	}
}

/* qsort_r() orders of page ids by this tick's score (ctx: the policy),
 * hottest or coldest first; equal scores by id. */
static int cmp_score_desc(const void *a, const void *b, void *ctx)
{
	const struct tier__tierd *t = ctx;
	double x = t->score[*(const uint64_t *)a];
	double y = t->score[*(const uint64_t *)b];

	if (x != y)
		return x > y ? -1 : 1;
	return (*(const uint64_t *)a > *(const uint64_t *)b) -
	       (*(const uint64_t *)a < *(const uint64_t *)b);
}

static int cmp_score_asc(const void *a, const void *b, void *ctx)
{
	return -cmp_score_desc(a, b, ctx);
}

/* --- what a move must gain ------------------------------------------------ */

/* Whether moving page from tier rank `from` to `to` pays for itself: the
 * latency a promotion saves over the long time constant exceeds
 * move_cost_ns (tier__tierd_pays_from()). */
static bool pays_off(const struct tier__tierd *t, uint64_t page, int from, int to)
{
	/* Promotion: the page's accesses get faster; demotion of a cold page:
	 * its few accesses get slower, which must stay below the cost of the
	 * room it frees being unused - demotions make room, so only gate
	 * promotions. */
	if (to > from)
		return true;
	return (double)t->score[page] > tier__tierd_pays_from(t, from, to);
}

double tier__tierd_pays_from(const struct tier__tierd *t, int from, int to)
{
	double gap = t->tier_lat_ns[from > to ? from : to] - t->tier_lat_ns[from < to ? from : to];

	if (gap <= 0)
		return HUGE_VAL;	/* saves nothing */
	return t->prm->move_cost_ns / (gap * t->prm->long_tau_us / 1e6);
}

/* Whether moving a page of predicted rate hot up and one of rate cold down
 * is worth it: hot must be swap_margin_ratio times as hot (plus
 * swap_min_delta_per_s), and - when the rates come from samples, whose
 * counts are Poisson - the difference must stand swap_noise_sd standard
 * deviations above the sampling noise of the two estimates (the sampled
 * part r of a rate over long_tau_us, from samples of weight w, has variance
 * r * w / tau).
 * Without it, pages of equal heat trade places on noise (uniform, thrash). */
static bool exchange_pays(const struct tier__tierd *t, uint64_t up, uint64_t down)
{
	double hot = ((double)t->score[up]), cold = ((double)t->score[down]);
	double noise;

	if (hot <= cold * t->prm->swap_margin_ratio + t->prm->swap_min_delta_per_s)
		return false;
	if (t->sample_weight <= 0)
		return true;
	/* After pooling, what is left of each page's noise scales with its
	 * region's shrinkage factor. */
	noise = sqrt(((double)t->pages[up].smp * t->reg_shrink[up >> TIERD_REGION_SHIFT] +
		      (double)t->pages[down].smp * t->reg_shrink[down >> TIERD_REGION_SHIFT]) *
		     t->sample_weight / (t->long_tau_us / 1e6));
	return hot - cold > t->prm->swap_noise_sd * noise;
}

/* --- queueing ------------------------------------------------------------- */

/* Stamps page p's move: its cool-down starts, explain tells why. */
static void mark_moved(struct tier__tierd *t, uint64_t p, uint64_t now_us, uint8_t reason)
{
	t->pages[p].moved_ms = tier__tierd_stamp_ms(now_us);
	t->pages[p].reason = reason;
}

/* Queues one page's move and keeps the groups' figures current. */
static bool queue_page(struct tier__tierd *t, uint64_t p, int from, int to, uint64_t now_us,
		       uint8_t reason)
{
	if (!tier_mover_add(&t->mover, p, to))
		return false;
	mark_moved(t, p, now_us, reason);
	tier__tierd_mark_moved(t, p);
	if (t->gs->active && from >= 0) {
		size_t g = tier__tierd_group_of(t, p);

		if (t->gs->use[g][from])
			t->gs->use[g][from]--;
		t->gs->use[g][to]++;
	}
	return true;
}

/* Queues the move of page p and of every page that moves with it (its
 * huge page). Returns whether any was queued. */
static bool queue_move(struct tier__tierd *t, uint64_t p, int from, int to, uint64_t now_us,
		       uint8_t reason)
{
	uint64_t first, n = tier__tierd_unit_of(t, p, &first), q;
	bool any = false;

	for (q = first; q < first + n; q++)
		any |= queue_page(t, q, from, to, now_us, reason);
	return any;
}

/* Where page v of tier r goes when it must go down: where its own score
 * puts it (a page with long predicted idleness skips the tiers in
 * between), at least one tier down, and past any tier its group may not
 * fill further. */
static int demote_target(const struct tier__tierd *t, uint64_t v, int r)
{
	int to = tier__tierd_target_rank(t, t->bin[v]);

	if (to <= r)
		to = r + 1;
	return tier__tierd_allowed_rank(t, tier__tierd_group_of(t, v), to);
}

/* --- 1. caps -------------------------------------------------------------- */

/* Demotes the coldest pages of every group over its cap of tier r until
 * it is within. Returns false when the budget ran out. */
static bool enforce_caps(struct tier__tierd *t, int r, uint64_t now_us)
{
	size_t g, n = 0, k;
	bool over = false;
	uint64_t i;

	if (!t->gs->active)
		return true;
	for (g = 0; g < t->gs->nr; g++)
		over |= t->gs->use[g][r] > t->gs->max[g][r];
	if (!over)
		return true;
	for (i = 0; i < t->nr_pages; i++) {
		if (tier_page_rank(t->env, t->node_rank, i) != r || tier__tierd_unit_tail(t, i))
			continue;
		g = tier__tierd_group_of(t, i);
		if (t->gs->use[g][r] > t->gs->max[g][r] && cand_room(t, n + 1))
			t->cand[n++] = i;
	}
	*t->env->work_units += t->nr_pages;
	if (n)
		qsort_r(t->cand, n, sizeof(*t->cand), cmp_score_asc, t);
	for (k = 0; k < n; k++) {
		uint64_t p = t->cand[k];

		g = tier__tierd_group_of(t, p);
		if (t->gs->use[g][r] <= t->gs->max[g][r])
			continue;
		if (tier_mover_budget_left(&t->mover) < tier__tierd_move_bytes(t, p))
			return false;
		queue_move(t, p, r, demote_target(t, p, r), now_us, TIERD_REASON_DEMOTE_CAP);
	}
	return true;
}

/* --- 2. gather ------------------------------------------------------------ */

/* Takes page i, in tier cur below f->r, as a candidate for f->r when it
 * belongs there or its group is owed room there, may move and its move
 * pays. */
static void add_candidate(struct tier__tierd *t, struct fill *f, uint64_t i, int cur)
{
	const int r = f->r, bin = t->bin[i];
	size_t g = f->groups ? tier__tierd_group_of(t, i) : 0;
	bool owed = tier__tierd_under_share(t, g, r);

	if (!owed && bin < t->thr_bin[r] && bin < t->pinned_bin)
		return;	/* not hot enough for r (the common case) */
	if ((f->groups && tier__tierd_at_cap(t, g, r)) || tier__tierd_cooling_down(t, i, f->now_us))
		return;
	/* Only pages whose move pays compete for the budget. */
	if ((!owed && !pays_off(t, i, cur, r)) || !cand_room(t, f->nr_up + 1))
		return;
	if (tier__tierd_target_rank(t, bin) <= r || bin >= t->pinned_bin)
		t->cand[f->nr_up++] = i;	/* the exchange margin is the hysteresis */
	else if (owed && t->score[i] >= t->prm->demand_min_per_s)
		t->cand[f->nr_up++] = i;	/* in use, and its group is owed room */
	else
		return;
	/* Candidates of groups below their share go first. */
	if (owed) {
		uint64_t tmp = t->cand[f->nr_first];

		t->cand[f->nr_first++] = t->cand[f->nr_up - 1];
		t->cand[f->nr_up - 1] = tmp;
	}
}

/* Page i of tier cur (-1: absent): an advised-cold page of r goes to the
 * slowest tier, another page of r becomes a victim (a pinned page never),
 * a page below r a candidate (add_candidate()). */
static void gather_page(struct tier__tierd *t, struct fill *f, uint64_t i, int cur)
{
	const int r = f->r;
	uint8_t hint;

	if (cur < 0 || tier__tierd_unit_tail(t, i))
		return;
	hint = tier__tierd_hint_of(t, i);
	if (hint == TIER_HINT_COLD) {
		/* Advised cold: to the slowest tier, first of all moves. */
		if (cur == r && r + 1 < (int)t->nr_tiers && !tier__tierd_cooling_down(t, i, f->now_us))
			queue_move(t, i, cur, (int)t->nr_tiers - 1, f->now_us,
				   TIERD_REASON_DEMOTE_ADVISED);
		return;
	}
	if (cur == r) {
		/* A pinned page is never anyone's victim. */
		if ((r != 0 || (hint != TIER_HINT_PIN_FAST && hint != TIER_HINT_LATENCY)) &&
		    down_room(t, f->nr_down + 1))
			t->down[f->nr_down++] = i;
	} else if (cur > r) {
		add_candidate(t, f, i, cur);
	}
}

/* Gathers the pages of the visited chunks (gather_page()). The others'
 * pages score 0 and carry no hint: never candidates; the victims among
 * them follow in order(), as many as the tick needs. Control groups'
 * rules may pass over any victim and owe room to any page: with them,
 * every page. */
static void gather(struct tier__tierd *t, struct fill *f)
{
	uint64_t i, c, visited = 0;

	t->nr_flat = 0;
	if (f->groups) {
		for (i = 0; i < t->nr_pages; i++)
			gather_page(t, f, i, tier_page_rank(t->env, t->node_rank, i));
		*t->env->work_units += t->nr_pages;
		return;
	}
	tier__tierd_for_each_chunk(t, t->vis, c) {
		uint64_t end = tier__tierd_chunk_end(t, c);

		/* A chunk of one score holds no candidate when the score is
		 * below r's threshold or no move of its pages below r up to r
		 * pays (its pages per tier are counted this tick, and again
		 * after every flush); its pages in r are victims of that one
		 * score, taken in order() as far as the tick needs them. */
		if (tier__tierd_chunk_flat(t, c)) {
			const uint16_t *cnt = &t->cnt[c * TIERD_CNT_SLOTS];
			int bin = t->bin[c << TIERD_REGION_SHIFT], k;
			bool any = false;

			/* As add_candidate() would find for each of its pages
			 * below r: hot enough, and the move pays. */
			if (bin >= t->thr_bin[f->r] || bin >= t->pinned_bin)
				for (k = f->r + 1; k < (int)t->nr_tiers && !any; k++)
					any = cnt[k] && pays_off(t, c << TIERD_REGION_SHIFT, k, f->r);
			if (!any) {
				if (cnt[f->r])
					t->flat[t->nr_flat++] = c;
				visited++;
				continue;
			}
		}
		for (i = c << TIERD_REGION_SHIFT; i < end; i++)
			gather_page(t, f, i, tier_page_rank(t->env, t->node_rank, i));
		visited += end - (c << TIERD_REGION_SHIFT);
	}
	*t->env->work_units += visited;
}

/* --- 3. order ------------------------------------------------------------- */

/* Appends the victims the tick may need to down[] from the chunks gather()
 * left whole: the idle ones' (tier__tierd_idle_victims()), which score 0,
 * the coldest of all, then the flat chunks' (one score each), coldest
 * chunk first, until there are as many as the tick may need: so the
 * coldest of all victims are among them and the visited chunks' pages
 * taken one by one. Each victim frees at least a page: exchanges take no
 * more than the pages of the candidates chosen (f->cand[0, f->nr_up)),
 * keep_headroom() no more than the headroom missing now; 64 more stand for
 * the victims passed over. */
static void add_idle_victims(struct tier__tierd *t, struct fill *f, size_t want_down)
{
	int64_t short_of = (int64_t)f->room_keep - tier_mover_tier_free(&t->mover, f->r);
	uint64_t need = (short_of > 0 ? (uint64_t)short_of : 0) + 64, first;
	size_t k, got;

	for (k = 0; k < f->nr_up; k++)
		need += tier__tierd_unit_of(t, t->cand[k], &first);
	if (need > want_down)
		need = want_down;
	if (!down_room(t, f->nr_down + (size_t)need))
		return;
	got = tier__tierd_idle_victims(t, f->r, f->now_us, t->down + f->nr_down, (size_t)need);
	if (got < need)
		got += tier__tierd_flat_victims(t, f->r, f->now_us, t->down + f->nr_down + got,
						(size_t)need - got);
	f->nr_down += got;
}

/* Only as many as this tick can move need an order: the hottest
 * candidates and the coldest victims the budget allows (groups' rules may
 * pass over victims: then all of them). Candidates owed room stay ahead. */
static void order(struct tier__tierd *t, struct fill *f)
{
	uint64_t left = tier_mover_budget_left(&t->mover) / f->page_bytes;
	size_t want = left < f->nr_up ? (size_t)left : f->nr_up;
	size_t want_down = want + (size_t)f->room_keep + 64;

	/* Candidates beyond what the budget moves wait for a resume or the
	 * next tick. */
	if (want < f->nr_up)
		t->held_back = true;
	if (f->nr_first >= want) {
		select_k(t->cand, f->nr_first, want, t->score, true);
		f->nr_first = want;
	} else {
		select_k(t->cand + f->nr_first, f->nr_up - f->nr_first, want - f->nr_first,
			 t->score, true);
	}
	f->nr_up = want;
	if (!f->groups)
		add_idle_victims(t, f, want_down);
	if (!f->groups && want_down < f->nr_down) {
		select_k(t->down, f->nr_down, want_down, t->score, false);
		f->nr_down = want_down;
	}
	if (f->nr_first)
		qsort_r(t->cand, f->nr_first, sizeof(*t->cand), cmp_score_desc, t);
	if (f->nr_up > f->nr_first)
		qsort_r(t->cand + f->nr_first, f->nr_up - f->nr_first, sizeof(*t->cand),
			cmp_score_desc, t);
	if (f->nr_down)
		qsort_r(t->down, f->nr_down, sizeof(*t->down), cmp_score_asc, t);
	*t->env->work_units += f->nr_up + f->nr_down;
}

/* --- 4. promote ----------------------------------------------------------- */

/* The victim in down[f->j..f->nr_down) for promoting up into f->r: for a
 * group below its share, the coldest page of a group above its share;
 * else the coldest page that may go. Returns its index, or f->nr_down when
 * none; *rule receives tier__tierd_victim_rule() for it. */
static size_t pick_victim(const struct tier__tierd *t, const struct fill *f, uint64_t up, int *rule)
{
	const uint64_t *down = t->down;
	const int r = f->r;
	size_t k;

	if (t->gs->shares && tier__tierd_under_share(t, tier__tierd_group_of(t, up), r)) {
		for (k = f->j; k < f->nr_down; k++) {
			if (down[k] == TAKEN || tier__tierd_cooling_down(t, down[k], f->now_us))
				continue;
			if (tier__tierd_victim_rule(t, up, down[k], r) == 1) {
				*rule = 1;
				return k;
			}
		}
	}
	for (k = f->j; k < f->nr_down; k++) {
		if (down[k] == TAKEN || tier__tierd_cooling_down(t, down[k], f->now_us))
			continue;
		*rule = tier__tierd_victim_rule(t, up, down[k], r);
		if (*rule >= 0)
			return k;
	}
	return f->nr_down;
}

/* Frees *need pages of f->r for candidate p (up_bytes to move) by demoting
 * the coldest victims that may go, while the exchange pays or the groups'
 * shares call for it. On return *need is what is still to free, *rule
 * tier__tierd_victim_rule() of the last victim. Returns false when the budget ran
 * out. */
static bool exchange(struct tier__tierd *t, struct fill *f, uint64_t p, uint64_t up_bytes,
		     int64_t *need, int *rule)
{
	const int r = f->r;

	while (*need > 0) {
		size_t vk;
		uint64_t v;
		int to;

		while (f->j < f->nr_down &&
		       (t->down[f->j] == TAKEN ||
			tier__tierd_cooling_down(t, t->down[f->j], f->now_us)))
			f->j++;
		vk = pick_victim(t, f, p, rule);
		if (vk == f->nr_down)
			break;
		v = t->down[vk];
		if (*rule == 0 && !exchange_pays(t, p, v))
			break;	/* the rest are colder: no exchange pays */
		if (tier_mover_budget_left(&t->mover) < up_bytes + tier__tierd_move_bytes(t, v))
			return false;
		to = demote_target(t, v, r);
		if (!queue_move(t, v, r, to, f->now_us,
				*rule == 1 ? TIERD_REASON_DEMOTE_SHARE :
				to > r + 1 ? TIERD_REASON_DEMOTE_SKIP
					   : TIERD_REASON_DEMOTE_EXCHANGE))
			break;
		*need -= (int64_t)(tier__tierd_move_bytes(t, v) / f->page_bytes);
		if (vk == f->j)
			f->j++;
		else
			t->down[vk] = TAKEN;
	}
	return true;
}

/* Promotes candidate p into f->r: into the room the tier has above its
 * headroom, else in exchange for victims (exchange()). */
static enum promoted promote(struct tier__tierd *t, struct fill *f, uint64_t p)
{
	const int r = f->r;
	int cur = tier_page_rank(t->env, t->node_rank, p), rule;
	size_t g = tier__tierd_group_of(t, p);
	bool fair = tier__tierd_under_share(t, g, r);
	uint64_t up_bytes;
	int64_t need, room;

	if (tier__tierd_cooling_down(t, p, f->now_us) || (!fair && !pays_off(t, p, cur, r)))
		return PROMOTED_NEXT;
	if (f->groups && tier__tierd_at_cap(t, g, r))
		return PROMOTED_NEXT;
	up_bytes = tier__tierd_move_bytes(t, p);
	if (tier_mover_budget_left(&t->mover) < up_bytes)
		return PROMOTED_NO_BUDGET;
	/* Pages to free first: none while the tier has room above its
	 * headroom (a huge page needs room for all of its pages); the
	 * headroom itself is restored by keep_headroom(), with cold pages. */
	room = tier_mover_tier_free(&t->mover, r) - (int64_t)f->room_keep;
	need = (int64_t)(up_bytes / f->page_bytes) - (room > 0 ? room : 0);
	if (need <= 0) {
		queue_move(t, p, cur, r, f->now_us,
			   fair ? TIERD_REASON_PROMOTE_SHARE : TIERD_REASON_PROMOTE_ROOM);
		return PROMOTED_NEXT;
	}
	rule = 0;
	if (!exchange(t, f, p, up_bytes, &need, &rule))
		return PROMOTED_NO_BUDGET;
	if (need > 0)
		return PROMOTED_NO_ROOM;
	queue_move(t, p, cur, r, f->now_us,
		   rule == 1 ? TIERD_REASON_PROMOTE_SHARE : TIERD_REASON_PROMOTE_EXCHANGE);
	return PROMOTED_NEXT;
}

/* --- 5. headroom ---------------------------------------------------------- */

/* Demotes clearly cold victims left over while f->r is below its
 * headroom. Returns false when the budget ran out. */
static bool keep_headroom(struct tier__tierd *t, struct fill *f)
{
	const int r = f->r;

	for (; f->j < f->nr_down && tier_mover_tier_free(&t->mover, r) < (int64_t)f->room_keep;
	     f->j++) {
		uint64_t v = t->down[f->j];
		int bin;

		if (v == TAKEN)
			continue;
		bin = t->bin[v];
		/* Clearly cold pages only - unless the loaded-latency balance
		 * takes room out of the tier: then the coldest, whatever their
		 * heat (pages of equal heat share one bin). */
		if (tier__tierd_cooling_down(t, v, f->now_us) ||
		    (t->fill[r] >= 1 && bin + t->prm->hysteresis_bins > t->thr_bin[r]))
			continue;
		if (f->groups && tier__tierd_protected_by_min(t, tier__tierd_group_of(t, v), r))
			continue;
		/* A huge page for a headroom of less than half its size would
		 * leave most of what it frees unused (a tier of huge pages is
		 * filled by exchanges instead). */
		if ((int64_t)(tier__tierd_move_bytes(t, v) / f->page_bytes) >
		    2 * ((int64_t)f->room_keep - tier_mover_tier_free(&t->mover, r)))
			continue;
		if (tier_mover_budget_left(&t->mover) < tier__tierd_move_bytes(t, v))
			return false;
		queue_move(t, v, r, demote_target(t, v, r), f->now_us,
			   TIERD_REASON_DEMOTE_HEADROOM);
	}
	return true;
}

/* Fills tier rank r: promotes the hottest pages below it that belong at r
 * or above, into free room first, then by exchanging them for the coldest
 * pages of r while the exchange pays. Returns false when the budget ran out. */
bool tier__tierd_fill_tier(struct tier__tierd *t, int r, uint64_t now_us)
{
	struct fill f = {
		.r = r,
		.now_us = now_us,
		.room_keep = tier__tierd_headroom_pages(t, r),
		.page_bytes = UINT64_C(1) << t->env->page_shift,
		.groups = t->gs->active,
	};
	size_t k;

	if (!enforce_caps(t, r, now_us))
		return false;
	gather(t, &f);
	order(t, &f);
	for (k = 0; k < f.nr_up; k++) {
		enum promoted o = promote(t, &f, t->cand[k]);

		if (o == PROMOTED_NO_BUDGET)
			return false;
		/* Without groups' rules no colder candidate finds room
		 * either. */
		if (o == PROMOTED_NO_ROOM && !f.groups)
			break;
	}
	return keep_headroom(t, &f);
}
