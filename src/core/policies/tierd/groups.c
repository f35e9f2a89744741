/* groups.c - control groups (core/groups.h) in the tierd policy: each
 * group's pages per tier, its caps and mins in pages, and with weights its
 * fair share of each tier (weighted max-min fairness over the pages each
 * group has in use), kept current as moves queue; which page of which
 * group may displace which.
 */
#include <string.h>

#include "core/policies/tierd/internal.h"

/* Adds v to *sum, or saturates it at UINT64_MAX (then returns false). */
static bool saturating_add(uint64_t *sum, uint64_t v)
{
	if (*sum > UINT64_MAX - v) {
		*sum = UINT64_MAX;
		return false;
	}
	*sum += v;
	return true;
}

/* Counts each group's pages per tier and what it uses, resolves its
 * limits to pages, and splits contended tiers by weight. */
void tier__tierd_groups_update(struct tier__tierd *t)
{
	const struct tier_groups *gr = t->env->groups;
	struct tier__tierd_groups *gs = t->gs;
	uint64_t cap[TIER_MAX_TIERS], i;
	size_t g, r;

	gs->active = false;
	gs->shares = false;
	if (!gr || !t->env->page_owner || gr->nr <= 1)
		return;
	gs->nr = gr->nr < TIER_GROUPS_MAX ? gr->nr : TIER_GROUPS_MAX;
	for (r = 0; r < t->nr_tiers; r++) {
		uint64_t total, free;

		tier_tier_pages(t->env, (int)r, &total, &free);
		cap[r] = total;
	}
	for (g = 0; g < gs->nr; g++) {
		const struct tier_group_rule *rule = &gr->rule[g];

		for (r = 0; r < t->nr_tiers; r++) {
			gs->max[g][r] = tier_amount_pages(&rule->max[r], cap[r], t->env->page_shift);
			gs->min[g][r] = rule->min[r].kind == TIER_AMOUNT_NONE ? 0 :
					tier_amount_pages(&rule->min[r], cap[r], t->env->page_shift);
			gs->share[g][r] = UINT64_MAX;
			if (gs->max[g][r] != UINT64_MAX || gs->min[g][r])
				gs->active = true;
		}
		if (rule->weight)
			gs->active = gs->shares = true;
	}
	if (!gs->active)
		return;
	memset(gs->use, 0, sizeof(gs->use));
	memset(gs->demand, 0, sizeof(gs->demand));
	for (i = 0; i < t->nr_pages; i++) {
		int cur = tier_page_rank(t->env, t->node_rank, i);

		if (cur < 0)
			continue;
		g = tier__tierd_group_of(t, i);
		gs->use[g][cur]++;
		if (t->score[i] >= t->prm->demand_min_per_s)
			gs->demand[g]++;
	}
	*t->env->work_units += t->nr_pages;
	if (!gs->shares)
		return;
	/* Shares of tiers 0..r together, by weighted max-min fairness; a
	 * tier's share is the difference of two such splits. */
	{
		uint64_t floor[TIER_GROUPS_MAX], ceil[TIER_GROUPS_MAX], cum[TIER_GROUPS_MAX];
		uint64_t prev[TIER_GROUPS_MAX] = { 0 }, room = 0;
		uint32_t w[TIER_GROUPS_MAX];

		memset(floor, 0, sizeof(floor));
		for (g = 0; g < gs->nr; g++) {
			ceil[g] = 0;
			w[g] = gr->rule[g].weight ? gr->rule[g].weight : TIER_GROUP_DEFAULT_WEIGHT;
		}
		for (r = 0; r + 1 < t->nr_tiers; r++) {
			room += r == 0 ? cap[0] - cap[0] * t->prm->headroom_bp / 10000 : cap[r];
			for (g = 0; g < gs->nr; g++) {
				saturating_add(&floor[g], gs->min[g][r]);
				saturating_add(&ceil[g], gs->max[g][r]);
			}
			tier_fair_share(gs->nr, gs->demand, floor, ceil, w, room, cum);
			for (g = 0; g < gs->nr; g++) {
				gs->share[g][r] = cum[g] > prev[g] ? cum[g] - prev[g] : 0;
				prev[g] = cum[g];
			}
		}
	}
}

/* The first tier from want down that group g may still take pages into
 * (its cap there not reached); the slowest tier takes what is left. */
int tier__tierd_allowed_rank(const struct tier__tierd *t, size_t g, int want)
{
	int last = (int)t->nr_tiers - 1;

	if (!t->gs->active)
		return want;
	while (want < last && t->gs->use[g][want] >= t->gs->max[g][want])
		want++;
	return want;
}

/* Whether group g holds more than its fair share of tier r. */
static bool over_share(const struct tier__tierd *t, size_t g, int r)
{
	return t->gs->shares && t->gs->use[g][r] > t->gs->share[g][r];
}

/* A page of group g in tier r that another group may not take: the group
 * holds no more than its min there. */
bool tier__tierd_protected_by_min(const struct tier__tierd *t, size_t g, int r)
{
	return t->gs->active && t->gs->use[g][r] <= t->gs->min[g][r];
}

/* Whether promoting up into tier r may displace down. 1: by the groups'
 * shares, whatever the heat; 0: by heat (exchange_pays() in fill.c);
 * -1: never. */
int tier__tierd_victim_rule(const struct tier__tierd *t, uint64_t up, uint64_t down, int r)
{
	size_t a, b;

	if (!t->gs->active)
		return 0;
	a = tier__tierd_group_of(t, up);
	b = tier__tierd_group_of(t, down);
	if (a == b)
		return 0;
	if (tier__tierd_protected_by_min(t, b, r))
		return -1;
	if (t->gs->shares) {
		bool a_under = tier__tierd_under_share(t, a, r), b_over = over_share(t, b, r);

		if (a_under && b_over)
			return 1;
		if (!a_under && !b_over)
			return -1;
	}
	return 0;
}
