/* internal.h - the tierd policy's state and the contracts between its
 * modules (what the policy does: policy.c):
 *   chunks.c      the pages in chunks of 2 MiB: which hold any state (the
 *                 passes visit only those), pages per tier, idle victims
 *   heat.c        observations -> per-page rates, decay, sample pooling,
 *                 the score each page is placed by
 *   thresholds.c  the score histogram, thresholds fitted to the tiers'
 *                 capacities, the loaded-latency balance, the headroom
 *   huge.c        huge pages as units of placement, and their splitting
 *   groups.c      control groups' figures and rules (caps, mins, shares)
 *   fill.c        the moves that fill one tier
 *   explain.c     why a page is where it is (tierctl explain)
 *   policy.c      the state's life, the tick, the ops table
 * Not for use outside src/core/policies/tierd/. The parameters are in
 * core/policies/tierd.h.
 */
#ifndef TIER_CORE_POLICIES_TIERD_INTERNAL_H
#define TIER_CORE_POLICIES_TIERD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/budget.h"
#include "core/mover.h"
#include "core/policies/tierd.h"
#include "core/policy.h"

enum {
	/* Score histogram: bins per doubling of score + 1, and bins. */
	TIERD_BINS_PER_OCTAVE = 16,
	TIERD_NR_BINS = 512,
	/* Bits of a float's mantissa the score_bin() table reads. */
	TIERD_MANT_BITS = 10,
	/* Pages per region for pooling sample counts (2 MiB of 4 KiB pages),
	 * and per chunk (chunks.c). */
	TIERD_REGION_SHIFT = 9,
	TIERD_CHUNK_PAGES = 1 << TIERD_REGION_SHIFT,
	/* Per-tier counts per chunk: a slot per rank, one for pages on no
	 * tier's node. */
	TIERD_CNT_SLOTS = TIER_MAX_TIERS + 1,
	/* Every chunk's counts are checked against page_node within this
	 * many ticks (pages moved behind the policy's back). */
	TIERD_RECHECK_TICKS = 64,
};

/* The score of a pinned or latency-critical page: above any heat. */
#define TIERD_PINNED_SCORE 1e9

/* Why a page last moved (for tierctl explain). */
enum tier__tierd_reason {
	TIERD_REASON_NONE = 0,
	TIERD_REASON_PROMOTE_ROOM,	/* hot, and the tier had room */
	TIERD_REASON_PROMOTE_EXCHANGE,	/* hot, exchanged for a colder page */
	TIERD_REASON_DEMOTE_EXCHANGE,	/* made room for a hotter page */
	TIERD_REASON_DEMOTE_SKIP,	/* cold for long: straight past the next tier */
	TIERD_REASON_DEMOTE_HEADROOM,	/* cold, freed headroom for promotions */
	TIERD_REASON_DEMOTE_ADVISED,	/* advised cold (libtier, tierctl hint) */
	TIERD_REASON_DEMOTE_CAP,	/* its group was over its cap of the tier */
	TIERD_REASON_DEMOTE_SHARE,	/* displaced: its group was over its share */
	TIERD_REASON_PROMOTE_SHARE,	/* its group was below its share */
	TIERD_REASON__COUNT,
};

/* Control groups' figures for one tick; kept current as moves queue. */
struct tier__tierd_groups {
	bool active;			/* any rule applies */
	bool shares;			/* some group set a weight */
	size_t nr;
	uint64_t use[TIER_GROUPS_MAX][TIER_MAX_TIERS];	/* present pages per tier */
	uint64_t max[TIER_GROUPS_MAX][TIER_MAX_TIERS];	/* UINT64_MAX: none */
	uint64_t min[TIER_GROUPS_MAX][TIER_MAX_TIERS];	/* 0: none */
	uint64_t share[TIER_GROUPS_MAX][TIER_MAX_TIERS];	/* fair share; UINT64_MAX: no weights */
	uint64_t demand[TIER_GROUPS_MAX];	/* pages in use */
};

struct tier__tierd_page {
	float lng;		/* accesses/s, long time constant */
	float shrt;		/* accesses/s, short time constant */
	float smp;		/* the part of lng that came from samples */
	uint32_t moved_ms;	/* when it last moved (ms), 0 = never */
	uint8_t reason;		/* enum tier__tierd_reason of that move */
	uint8_t born;		/* the step (step_gen) its long rate began in */
};

struct tier__tierd {
	const struct tier_env *env;
	const struct tier_tierd_params *prm;	/* what it is tuned by */
	struct tier__tierd_page *pages;
	uint64_t nr_pages;		/* size of pages[] and cand[] */
	struct tier_budget budget;
	struct tier_mover mover;
	int node_rank[TIER_MAX_NODES];
	size_t nr_tiers;
	double tier_lat_ns[TIER_MAX_TIERS];		/* idle latency per tier (HMAT) */
	double loaded_ns[TIER_MAX_TIERS];		/* measured loaded latency per tier, smoothed; 0 = none */
	double fill[TIER_MAX_TIERS];			/* share of tier r's capacity to fill, (0, 1] */
	uint64_t last_us;
	uint64_t last_tick_us;		/* the last tick */
	bool ticked;			/* there was a tick before */
	bool held_back;			/* the last fill ran out of budget */
	uint64_t gap_us;		/* the last decay's span: what this step's
					 * observations speak for */
	double long_tau_us;		/* the long time constant in force
					 * (tier__tierd_decay()) */
	double gap_long, gap_short;	/* 1 - e^(-gap / tau) of the long and short
					 * time constants for gap_us (rate_weight()) */
	uint8_t step_gen;		/* the step, mod 256 (page born) */
	uint32_t *hist;
	int thr_bin[TIER_MAX_TIERS];			/* score bin threshold per tier */
	double sample_weight;		/* accesses one sample stands for; 0 = no samples */
	float *reg_mean;		/* per region: mean sampled rate */
	float *reg_shrink;		/* per region: weight of a page's own samples */
	float *reg_sshort;		/* per region: sampled accesses/s of its pages,
					 * short time constant */
	float *reg_boost;		/* per region: its recent sampled rate beyond
					 * its noise, less its long one (per page) */
	uint32_t *reg_since_ms;		/* per region: its first sample
					 * (tier__tierd_stamp_ms()), 0 none */
	uint64_t *cand;			/* promotion candidates, cap_cand of room */
	uint64_t *down;			/* pages of the tier being filled, cap_down */
	size_t cap_cand, cap_down;	/* grown as a fill needs (fill.c):
					 * a step's lists hold what it visits, not
					 * every page managed */
	float *score;			/* this tick's score per page */
	uint16_t *bin;			/* and its bin */
	struct tier__tierd_groups *gs;
	uint64_t splits;		/* huge pages split */
	/* Chunks (chunks.c): pages [c << TIERD_REGION_SHIFT, ...) of
	 * chunk c, as the regions above. Bitmaps of nr_chunks bits. */
	uint64_t nr_chunks;
	uint64_t *live;			/* any rate in its pages or region */
	uint64_t *vis;			/* visited this tick: live or hinted; the
					 * others' pages score 0 in bin 0 */
	uint64_t *hinted;		/* a page has a hint (this tick) */
	/* Uniform chunks: every page's rates are the chunk's (ulng, ushrt),
	 * none sampled; their entries in pages[] hold 0 rates. Whole-chunk
	 * observations (DAMON's regions) and decay cost one update a chunk;
	 * a partial one, a sample or a huge page's share makes the chunk's
	 * pages their own (tier__tierd_chunk_split()), until it goes idle. */
	uint64_t *uni;
	float *ulng, *ushrt;
	uint8_t *uborn;			/* born of a uniform chunk's pages */
	uint64_t *dirty;		/* the policy queued moves of its pages */
	uint64_t *dirty_list;		/* those chunks, nr_dirty of them */
	uint64_t *flat;			/* the tier being filled: its flat chunks
					 * (tier__tierd_chunk_flat()) with pages in
					 * it and no candidate, nr_flat of them */
	size_t nr_flat;
	size_t nr_dirty;
	uint16_t *cnt;			/* [c * TIERD_CNT_SLOTS + rank] present pages */
	uint32_t *seen_gen;		/* env->node_gen[c] when c was counted */
	uint64_t tier_present[TIERD_CNT_SLOTS];	/* cnt summed over the chunks */
	uint64_t recheck_next;		/* the rotating recount's next chunk */
	uint64_t victim_next[TIER_MAX_TIERS];	/* per rank: where idle victims are
						 * looked for first */
	uint8_t mant_bin[1u << TIERD_MANT_BITS];	/* the score_bin() table */
	int pinned_bin;			/* the bin of TIERD_PINNED_SCORE */
	bool decayed;			/* scores decayed to the current collect */
};

/* --- chunks.c ----------------------------------------------------------- */

/* Grows the chunks' arrays for new_pages pages (zeroed); nr_chunks
 * follows in tier__tierd_chunks_count_new(). Returns 0 or -ENOMEM. */
int tier__tierd_chunks_grow(struct tier__tierd *t, uint64_t new_pages);
/* After t->nr_pages grew from old_pages: counts the new chunks' pages. */
void tier__tierd_chunks_count_new(struct tier__tierd *t, uint64_t old_pages);
void tier__tierd_chunks_free(struct tier__tierd *t);
/* The end of chunk c's pages. */
uint64_t tier__tierd_chunk_end(const struct tier__tierd *t, uint64_t c);
/* Counts chunk c's present pages per tier again from page_node. */
void tier__tierd_chunk_recount(struct tier__tierd *t, uint64_t c);
/* ... where its page_node bytes may have changed since it was counted
 * (env->node_gen; without it, always). */
void tier__tierd_chunk_refresh(struct tier__tierd *t, uint64_t c);
/* Pages [first, end) got a rate: their chunks are live. */
void tier__tierd_mark_live(struct tier__tierd *t, uint64_t first, uint64_t end);
/* A move of page was queued: its chunk is counted again after the flush. */
void tier__tierd_mark_moved(struct tier__tierd *t, uint64_t page);
/* Counts the chunks of the pages moved since the last call again. */
void tier__tierd_recount_moved(struct tier__tierd *t);
/* Counts the chunks not visited again where their pages' nodes changed
 * (env->node_gen), or without node_gen the tick's slice of them. */
void tier__tierd_recheck(struct tier__tierd *t);
/* The first chunk >= c set in map, or nr_chunks. */
uint64_t tier__tierd_next_chunk(const struct tier__tierd *t, const uint64_t *map, uint64_t c);
/* Gives uniform chunk c's rates to its pages (no longer uniform). */
void tier__tierd_chunk_split(struct tier__tierd *t, uint64_t c);
/* Sets the tick's visited chunks (live or hinted); the pages of chunks
 * no longer visited get score and bin 0. */
void tier__tierd_visit_begin(struct tier__tierd *t);
/* Up to max pages of tier rank r in chunks not visited (score 0), that may
 * move now (no cool-down; the first page of a huge one), into out, from
 * the rank's cursor on. Returns how many. */
size_t tier__tierd_idle_victims(struct tier__tierd *t, int r, uint64_t now_us, uint64_t *out,
				size_t max);

/* Up to max pages of tier rank r in t->flat's chunks that may move now,
 * the coldest chunks' first, into out. Returns how many. */
size_t tier__tierd_flat_victims(struct tier__tierd *t, int r, uint64_t now_us, uint64_t *out,
				size_t max);

/* Iterates chunk c over the chunks set in map. */
#define tier__tierd_for_each_chunk(t, map, c)                                   \
	for ((c) = tier__tierd_next_chunk((t), (map), 0); (c) < (t)->nr_chunks; \
	     (c) = tier__tierd_next_chunk((t), (map), (c) + 1))

/* --- heat.c ------------------------------------------------------------- */

/* The observe hook: adds the accesses the observations stand for to their
 * pages' rates (decaying the old rates to now first, once per step). */
void tier__tierd_observe(void *priv, const struct tier_obs *obs, size_t n);
/* Decays every rate to now_us; the span is what the next observations
 * speak for. */
void tier__tierd_decay(struct tier__tierd *t, uint64_t now_us);
/* Per-region mean, shrinkage factor and momentum of the sampled rates. */
void tier__tierd_pool_samples(struct tier__tierd *t);
/* Page i's predicted rate, accesses/s (needs tier__tierd_pool_samples()). */
double tier__tierd_heat_score(const struct tier__tierd *t, uint64_t i);
/* The score page i is placed by: its heat, bent by its hint. */
double tier__tierd_score(const struct tier__tierd *t, uint64_t i);
/* Fills t->score[] and t->bin[] for this tick (huge pages as units). */
void tier__tierd_compute_scores(struct tier__tierd *t);

/* --- thresholds.c ------------------------------------------------------- */

/* Fills the score_bin() table. */
void tier__tierd_bins_init(struct tier__tierd *t);
/* Bin of a score, 0..TIERD_NR_BINS - 1: TIERD_BINS_PER_OCTAVE per
 * doubling of score + 1. Monotonic. */
int tier__tierd_score_bin(const struct tier__tierd *t, double score);
/* Accesses/s at the lower edge of a score bin. */
double tier__tierd_bin_rate(int bin);
/* The rate (accesses/s) above which moving a page from tier rank from up
 * to rank to pays for itself (fill.c): move_cost_ns over the latency gap
 * times long_tau_us. */
double tier__tierd_pays_from(const struct tier__tierd *t, int from, int to);
/* Shrinks or refills each tier's share t->fill[] by its loaded latency. */
void tier__tierd_balance_loaded(struct tier__tierd *t);
/* Fits t->thr_bin[] to the tiers' capacities. */
void tier__tierd_fit_thresholds(struct tier__tierd *t);
/* The tier rank a page of score bin `bin` belongs in. */
int tier__tierd_target_rank(const struct tier__tierd *t, int bin);
/* Pages of tier rank to keep free. */
uint64_t tier__tierd_headroom_pages(const struct tier__tierd *t, int rank);

/* --- huge.c ------------------------------------------------------------- */

/* Pages [*first, *first + return) move with page i: its huge page, or i. */
uint64_t tier__tierd_unit_of(const struct tier__tierd *t, uint64_t i, uint64_t *first);
/* Bytes a move of page p takes from the budget: its huge page's. */
uint64_t tier__tierd_move_bytes(const struct tier__tierd *t, uint64_t p);
/* Splits the huge pages whose split pays, and gives the pages of every
 * other one their mean score. */
void tier__tierd_score_units(struct tier__tierd *t);

/* --- groups.c ----------------------------------------------------------- */

/* Refreshes t->gs for this tick. */
void tier__tierd_groups_update(struct tier__tierd *t);
/* The first tier from want down that group g may still take pages into. */
int tier__tierd_allowed_rank(const struct tier__tierd *t, size_t g, int want);
/* Whether group g's pages in tier r are safe from other groups there. */
bool tier__tierd_protected_by_min(const struct tier__tierd *t, size_t g, int r);
/* Whether promoting up into tier r may displace down. 1: by the groups'
 * shares, whatever the heat; 0: by heat; -1: never. */
int tier__tierd_victim_rule(const struct tier__tierd *t, uint64_t up, uint64_t down, int r);

/* --- fill.c ------------------------------------------------------------- */

/* Fills tier rank r (queued on t->mover; the caller flushes). Returns
 * false when the budget ran out. */
bool tier__tierd_fill_tier(struct tier__tierd *t, int r, uint64_t now_us);

/* --- explain.c ---------------------------------------------------------- */

/* The explain hook. */
int tier__tierd_explain(void *priv, uint64_t page, uint64_t now_us,
		       struct tier_page_explain *out);

/* --- per-page helpers, inline: the hot loops call them for every page --- */

/* Move times are milliseconds, odd so that 0 means never, compared in 32
 * bits (they wrap every 49.7 days of the clock). */
static inline uint32_t tier__tierd_stamp_ms(uint64_t now_us)
{
	return (uint32_t)(now_us / 1000) | 1;
}

/* Milliseconds since page last moved (meaningful when it did). */
static inline uint32_t tier__tierd_ms_since_move(const struct tier__tierd *t, uint64_t page,
						 uint64_t now_us)
{
	return tier__tierd_stamp_ms(now_us) - t->pages[page].moved_ms;
}

/* Whether page moved less than the cool-down ago: it may not move yet. */
static inline bool tier__tierd_cooling_down(const struct tier__tierd *t, uint64_t page,
					    uint64_t now_us)
{
	return t->pages[page].moved_ms &&
	       tier__tierd_ms_since_move(t, page, now_us) < t->prm->cooldown_us / 1000;
}

static inline bool tier__tierd_bit(const uint64_t *map, uint64_t c)
{
	return map[c >> 6] >> (c & 63) & 1;
}

/* Page i's long and short rates (accesses/s), its chunk's where uniform. */
static inline float tier__tierd_lng(const struct tier__tierd *t, uint64_t i)
{
	uint64_t c = i >> TIERD_REGION_SHIFT;

	return tier__tierd_bit(t->uni, c) ? t->ulng[c] : t->pages[i].lng;
}

static inline float tier__tierd_shrt(const struct tier__tierd *t, uint64_t i)
{
	uint64_t c = i >> TIERD_REGION_SHIFT;

	return tier__tierd_bit(t->uni, c) ? t->ushrt[c] : t->pages[i].shrt;
}

/* Whether every page of visited chunk c has the same score and bin this
 * tick: uniform, no hint. */
static inline bool tier__tierd_chunk_flat(const struct tier__tierd *t, uint64_t c)
{
	return tier__tierd_bit(t->uni, c) && !tier__tierd_bit(t->hinted, c);
}

/* Page i's enum tier_hint. */
static inline uint8_t tier__tierd_hint_of(const struct tier__tierd *t, uint64_t i)
{
	return t->env->page_hint ? t->env->page_hint[i] : TIER_HINT_NONE;
}

/* Huge pages move as one: placement treats each as one unit at its
 * pages' mean score (its worth per page of the tier it takes), and its
 * first page stands for it. */
static inline bool tier__tierd_huge_at(const struct tier__tierd *t, uint64_t i)
{
	const struct tier_env *env = t->env;

	return env->page_huge && env->page_huge[i >> env->huge_shift];
}

/* A page its huge page's first page stands for. */
static inline bool tier__tierd_unit_tail(const struct tier__tierd *t, uint64_t i)
{
	return tier__tierd_huge_at(t, i) && (i & ((UINT64_C(1) << t->env->huge_shift) - 1));
}

/* Page i's control group (0 without groups). */
static inline size_t tier__tierd_group_of(const struct tier__tierd *t, uint64_t i)
{
	const struct tier_env *env = t->env;
	size_t g;

	if (!env->groups || !env->page_owner)
		return 0;
	g = env->groups->owner_group[env->page_owner[i]];
	return g < t->gs->nr ? g : 0;
}

/* Whether group g reached its cap of tier r. */
static inline bool tier__tierd_at_cap(const struct tier__tierd *t, size_t g, int r)
{
	return t->gs->active && t->gs->use[g][r] >= t->gs->max[g][r];
}

/* Whether group g holds less than its fair share of tier r. */
static inline bool tier__tierd_under_share(const struct tier__tierd *t, size_t g, int r)
{
	return t->gs->shares && t->gs->use[g][r] < t->gs->share[g][r];
}

#endif
