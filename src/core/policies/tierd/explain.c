/* explain.c - why the tierd policy keeps a page where it is, or what
 * holds it back (tierctl explain).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/policies/tierd/internal.h"

static const char *const reason_text[TIERD_REASON__COUNT] = {
	[TIERD_REASON_NONE] = "never moved",
	[TIERD_REASON_PROMOTE_ROOM] = "promoted: hot, and the tier had room",
	[TIERD_REASON_PROMOTE_EXCHANGE] = "promoted: hot, exchanged for a colder page",
	[TIERD_REASON_DEMOTE_EXCHANGE] = "demoted: made room for a hotter page",
	[TIERD_REASON_DEMOTE_SKIP] = "demoted past the next tier: cold for long",
	[TIERD_REASON_DEMOTE_HEADROOM] = "demoted: cold, freed headroom for promotions",
	[TIERD_REASON_DEMOTE_ADVISED] = "demoted: advised cold",
	[TIERD_REASON_DEMOTE_CAP] = "demoted: its control group was over its cap of the tier",
	[TIERD_REASON_DEMOTE_SHARE] = "demoted: its control group was over its share of the tier",
	[TIERD_REASON_PROMOTE_SHARE] = "promoted: its control group was below its share of the tier",
};

int tier__tierd_explain(void *priv, uint64_t page, uint64_t now_us,
		       struct tier_page_explain *out)
{
	struct tier__tierd *t = priv;
	const struct tier__tierd_page *p;
	int cur, target;
	uint8_t hint;
	size_t g;
	double score, pays_from;

	if (page >= t->nr_pages || page >= t->env->nr_pages)
		return -ENOENT;
	p = &t->pages[page];
	memset(out, 0, sizeof(*out));
	out->long_rate = tier__tierd_lng(t, page);
	out->short_rate = tier__tierd_shrt(t, page);
	out->heat = tier__tierd_heat_score(t, page);
	score = tier__tierd_score(t, page);
	out->score = score;
	target = tier__tierd_target_rank(t, tier__tierd_score_bin(t, score));
	g = tier__tierd_group_of(t, page);
	out->group = (int)g;
	out->moved_ago_ms = p->moved_ms ? tier__tierd_ms_since_move(t, page, now_us) : UINT64_MAX;
	snprintf(out->last_move, sizeof(out->last_move), "%s",
		 p->reason < TIERD_REASON__COUNT ? reason_text[p->reason] : "?");
	cur = tier_page_rank(t->env, t->node_rank, page);
	hint = tier__tierd_hint_of(t, page);
	if (hint == TIER_HINT_COLD)
		target = (int)t->nr_tiers - 1;
	else if (t->gs->active)
		target = tier__tierd_allowed_rank(t, g, target);
	out->target_rank = target;
	if (cur < 0) {
		snprintf(out->verdict, sizeof(out->verdict), "not present (never touched or swapped out)");
		return 0;
	}
	if (hint == TIER_HINT_PIN_FAST || hint == TIER_HINT_LATENCY)
		snprintf(out->verdict, sizeof(out->verdict),
			     "%s hint: kept in the fastest tier whatever its heat",
			     hint == TIER_HINT_PIN_FAST ? "pin-fast" : "latency");
	else if (hint == TIER_HINT_COLD)
		snprintf(out->verdict, sizeof(out->verdict),
			     "cold hint: demoted to the slowest tier first, never promoted");
	else if (score < t->prm->demand_min_per_s && cur > target)
		snprintf(out->verdict, sizeof(out->verdict),
			     "no accesses seen lately: stays in tier %d", cur);
	else if (cur == target)
		snprintf(out->verdict, sizeof(out->verdict),
			     "in place: %.3g accesses/s is within tier %d's band", out->score, cur);
	else if (cur > target) {
		if (tier__tierd_cooling_down(t, page, now_us))
			snprintf(out->verdict, sizeof(out->verdict),
				     "wants tier %d; waits: moved %llu ms ago, cool-down %llu ms",
				     target, (unsigned long long)out->moved_ago_ms,
				     (unsigned long long)(t->prm->cooldown_us / 1000));
		else if (t->gs->active && tier__tierd_at_cap(t, g, target))
			snprintf(out->verdict, sizeof(out->verdict),
				     "wants tier %d; its control group is at its cap there", target);
		else if (!tier__tierd_under_share(t, g, target) &&
			 score <= (pays_from = tier__tierd_pays_from(t, cur, target)))
			snprintf(out->verdict, sizeof(out->verdict),
				     "wants tier %d; stays: a move pays from %.3g accesses/s (it costs "
				     "%.0f ns, its gain is counted over %.1f s)",
				     target, pays_from, t->prm->move_cost_ns,
				     t->prm->long_tau_us / 1e6);
		else
			snprintf(out->verdict, sizeof(out->verdict),
				     "wants tier %d (above %.3g accesses/s); promoted when room, the budget and a %.3gx colder page to exchange allow",
				     target, tier__tierd_bin_rate(t->thr_bin[target]),
				     t->prm->swap_margin_ratio);
	} else {
		snprintf(out->verdict, sizeof(out->verdict),
			     "belongs in tier %d (below %.3g accesses/s); demoted when tier %d needs room",
			     target, tier__tierd_bin_rate(t->thr_bin[cur]), cur);
	}
	return 0;
}
