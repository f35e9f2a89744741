/* tierd.c - tierd's placement policy.
 *
 * Hotness: every observation kind is turned into an estimate of accesses
 * (tier_obs_accesses(), core/policy.h: a DAMON region accessed in k of m
 * samples: -ln(1 - k/m) * m accesses per page, a sample: its period, a hint
 * fault: one access plus a rate from its latency) and added to two
 * exponentially decaying per-page scores:
 *   long  - time constant 2 s: frequency, what deserves the fast tier;
 *   short - time constant 0.25 s: momentum, what just became hot.
 * Decay is in time (per tick, by the elapsed microseconds), not in counts.
 * Samples are sparse per page, so they are also pooled per 2 MiB region:
 * toward the region's mean where its pages are alike, and as the region's
 * own momentum (its recent sampled rate against its long one, beyond the
 * noise of 512 pages' samples), which sees a hot set move within a tick.
 *
 * Thresholds are fitted to the tiers' capacities: a log histogram of
 * scores (16 bins per octave) gives, for each tier, the score above which
 * the hottest pages fill it (tier 0 keeps a headroom free for promotions).
 * Each page's target tier follows from its score directly, so a cold page
 * in tier 0 may go straight to the slowest tier and a hot page straight to
 * the top.
 *
 * Moves: demotions of the coldest pages first, as far as needed to keep
 * the headroom and make room for promotions; then promotions of the
 * hottest. A move must pay for itself (expected latency saved over the
 * long time constant > its cost), must clear the threshold by a margin
 * (hysteresis), and a page that moved waits a cool-down before it may move
 * back (ping-pong damping). Everything within the migration budget.
 *
 * Control groups (core/groups.h): a group's cap on a tier demotes its
 * coldest pages there first and blocks promotions past it, and its pages
 * spilling from a faster tier skip a tier whose cap it reached; a group at
 * or below its min in a tier is no other group's victim there; with
 * weights, shares of each tier are split by weighted max-min fairness
 * over the pages each group has in use, and a group below its share
 * displaces the coldest pages of a group above its share.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/budget.h"
#include "core/mover.h"
#include "core/policy.h"
#include "core/policies/tierd.h"

#define BINS_PER_OCTAVE 16
#define MANT_BITS 10			/* score_bin()'s table: 2^10 entries */
#define NR_BINS 512

/* Why a page last moved (for tierctl explain). */
enum tierd_reason {
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

/* An index of down[] whose page an exchange already took. */
#define TAKEN UINT64_MAX

/* Control groups' figures for one tick; kept current as moves queue. */
struct tierd_groups {
	bool active;			/* any rule applies */
	bool shares;			/* some group set a weight */
	size_t nr;
	uint64_t use[TIER_GROUPS_MAX][8];	/* present pages per tier */
	uint64_t max[TIER_GROUPS_MAX][8];	/* UINT64_MAX: none */
	uint64_t min[TIER_GROUPS_MAX][8];	/* 0: none */
	uint64_t share[TIER_GROUPS_MAX][8];	/* fair share; UINT64_MAX: no weights */
	uint64_t demand[TIER_GROUPS_MAX];	/* pages in use */
};

struct tierd_page {
	float lng;		/* accesses/s, long time constant */
	float shrt;		/* accesses/s, short time constant */
	float smp;		/* the part of lng that came from samples */
	uint32_t moved_ms;	/* when it last moved (ms), 0 = never */
	uint8_t reason;		/* enum tierd_reason of that move */
};

struct tierd {
	const struct tier_env *env;
	const struct tier_tierd_params *prm;	/* what it is tuned by */
	struct tierd_page *pages;
	uint64_t nr_pages;		/* size of pages[] and cand[] */
	struct tier_budget budget;
	struct tier_mover mover;
	int node_rank[256];
	size_t nr_tiers;
	double tier_lat_ns[8];		/* idle latency per tier (HMAT) */
	double loaded_ns[8];		/* measured loaded latency per tier, smoothed; 0 = none */
	double fill[8];			/* share of tier r's capacity to fill, (0, 1] */
	uint64_t last_us;
	uint64_t last_tick_us;		/* the last tick, 0 before the first */
	uint64_t gap_us;		/* the last decay's span: what this step's
					 * observations speak for */
	uint32_t *hist;
	int thr_bin[8];			/* score bin threshold per tier */
	double sample_weight;		/* accesses one sample stands for; 0 = no samples */
	float *reg_mean;		/* per region: mean sampled rate */
	float *reg_shrink;		/* per region: weight of a page's own samples */
	float *reg_sshort;		/* per region: sampled accesses/s of its pages,
					 * short time constant */
	float *reg_boost;		/* per region: its recent sampled rate beyond
					 * its noise, less its long one (per page) */
	uint32_t *reg_since_ms;		/* per region: its first sample (stamp_ms), 0 none */
	uint64_t *cand;			/* promotion candidates */
	uint64_t *down;			/* pages of the tier being filled */
	float *score;			/* this tick's score per page */
	uint16_t *bin;			/* and its score_bin() */
	struct tierd_groups *gs;
	uint64_t splits;		/* huge pages split */
	uint8_t mant_bin[1u << MANT_BITS];	/* score_bin()'s table */
	int pinned_bin;			/* score_bin(PINNED_SCORE) */
	bool decayed;			/* scores decayed to the current collect */
};

/* Pages per region for pooling sample counts (2 MiB of 4 KiB pages). */
#define REGION_SHIFT 9

/* Move times are milliseconds, odd so that 0 means never, compared in 32
 * bits (they wrap every 49.7 days of the clock). */
static uint32_t stamp_ms(uint64_t now_us)
{
	return (uint32_t)(now_us / 1000) | 1;
}

/* The sampled part of a page's rate, shrunk toward its region's mean
 * (empirical Bayes): a page's own count is a noisy Poisson draw; where the
 * pages of a region really differ (the region's spread exceeds the sampling
 * noise) the page's own count stands, where they do not (a uniform region,
 * the inside of a hot set) the region's mean - 512 times the samples -
 * replaces it. */
static double shrunk_samples(const struct tierd *t, uint64_t i)
{
	size_t r = i >> REGION_SHIFT;
	double m = t->reg_mean[r];

	return m + t->reg_shrink[r] * (t->pages[i].smp - m);
}

/* Predicted access rate. The recent rate (short_tau_us) counts as a change
 * only beyond its noise: the accesses it stands for, taken as Poisson, have
 * a standard deviation sd. A page heating up is as hot as the lower bound
 * of its recent rate (shrt - momentum_sd sd) where that exceeds its
 * long-term frequency; a page cooling down, whose recent rate's upper bound
 * (shrt + cooling_sd sd) is below its long-term frequency, counts that bound
 * or the mean of the two (a finished phase's pages make room within a
 * second, not after the long time constant). Otherwise the long-term rate
 * stands: a sparse page's recent estimate swings by multiples (a DAMON
 * region seen accessed in 1 or in 3 of 20 checks), and taking each swing
 * for a change trades pages of equal heat between tiers without end. The
 * bounds keep the prediction continuous as a page crosses them. */
static double page_heat(const struct tierd *t, uint64_t i)
{
	const struct tierd_page *p = &t->pages[i];
	double lng = p->lng - p->smp + shrunk_samples(t, i);
	const double ts = t->prm->short_tau_us / 1e6;
	const double up = t->prm->momentum_sd, down = t->prm->cooling_sd;
	double d = p->shrt - lng, var = (lng * ts + 1) / (ts * ts), sd;

	/* Within the noise band (the common case) without a square root:
	 * -down sd < d < up sd. */
	if (d >= 0 ? d * d <= up * up * var : d * d <= down * down * var)
		return lng;
	sd = sqrt(var);
	if (d > 0)
		return p->shrt - up * sd;
	{
		double high = p->shrt + down * sd, mean = 0.5 * (lng + p->shrt);

		return high > mean ? high : mean;
	}
}

/* The predicted rate: the page's own, moved by its region's momentum
 * where the region's pages are alike (the part of a page's samples that
 * pooling gives the region mean). */
static double heat_score(const struct tierd *t, uint64_t i)
{
	size_t r = i >> REGION_SHIFT;
	double h = page_heat(t, i) + (1.0 - t->reg_shrink[r]) * t->reg_boost[r];

	return h > 0 ? h : 0;
}

static uint8_t hint_of(const struct tierd *t, uint64_t i)
{
	return t->env->page_hint ? t->env->page_hint[i] : TIER_HINT_NONE;
}

/* Huge pages move as one: placement treats each as one unit at its
 * pages' mean score (its worth per page of the tier it takes), and its
 * first page stands for it. */
static bool huge_at(const struct tierd *t, uint64_t i)
{
	const struct tier_env *env = t->env;

	return env->page_huge && env->page_huge[i >> env->huge_shift];
}

/* Pages [*first, *first + return) move with page i: its huge page, or i. */
static uint64_t unit_of(const struct tierd *t, uint64_t i, uint64_t *first)
{
	uint64_t f, n;

	if (!huge_at(t, i)) {
		*first = i;
		return 1;
	}
	f = i >> t->env->huge_shift << t->env->huge_shift;
	n = UINT64_C(1) << t->env->huge_shift;
	*first = f;
	return f + n > t->nr_pages ? t->nr_pages - f : n;
}

/* A page its huge page's first page stands for. */
static bool unit_tail(const struct tierd *t, uint64_t i)
{
	return huge_at(t, i) && (i & ((UINT64_C(1) << t->env->huge_shift) - 1));
}

/* The score placement works with: the heat, bent by intent. A pinned or
 * latency-critical page outranks any heat; a page advised hot counts four
 * times its heat (and never less than a warm page); a page advised cold
 * counts nothing. */
#define PINNED_SCORE 1e9
static double compute_score(const struct tierd *t, uint64_t i)
{
	switch (hint_of(t, i)) {
	case TIER_HINT_PIN_FAST:
	case TIER_HINT_LATENCY:
		return PINNED_SCORE;
	case TIER_HINT_HOT:
		return t->prm->hot_hint_ratio * heat_score(t, i) + t->prm->hot_hint_min_per_s;
	case TIER_HINT_COLD:
		return 0;
	default:
		return heat_score(t, i);
	}
}

/* Momentum from a region's pooled samples (per page, accesses/s): its
 * recent sampled rate ms (short time constant) against its long one m,
 * beyond region_sd times the noise of ms - samples of weight w over
 * short_tau_us, pooled over the region's n pages, so 512 times as many as
 * one page's: heating, the lower bound of ms less m; cooling, the upper
 * bound (or the mean of the two) less m; else 0. A hot set that moved shows in its regions within
 * tens of milliseconds, long before each page has samples of its own.
 * age_ms: since the region's first sample (0: none). */
static double region_momentum(const struct tierd *t, double m, double ms, double n,
			      uint32_t age_ms)
{
	const double ts = t->prm->short_tau_us / 1e6, w = t->sample_weight, q = w / (ts * n);
	const double z = t->prm->region_sd;
	double d, sd;

	if (!age_ms)
		return 0;
	/* Both averages started from zero at the region's first sample:
	 * undo that bias (else every region looks heating for seconds). */
	m /= -expm1(-(double)age_ms * 1e3 / t->prm->long_tau_us);
	ms /= -expm1(-(double)age_ms * 1e3 / t->prm->short_tau_us);
	d = ms - m;
	sd = sqrt((m / q + 1) * q * q);

	if (d > z * sd)
		return d - z * sd;
	if (d < -z * sd) {
		double high = ms + z * sd, mean = 0.5 * (m + ms);

		return (high > mean ? high : mean) - m;
	}
	return 0;
}

/* Per-region mean and shrinkage factor of the sampled rates. */
static void pool_samples(struct tierd *t)
{
	const double tau = t->prm->long_tau_us / 1e6;
	uint64_t nr_regions = (t->nr_pages + (1u << REGION_SHIFT) - 1) >> REGION_SHIFT, r;

	if (t->sample_weight <= 0) {
		/* No sampling tracker: nothing to pool (smp is 0 everywhere). */
		memset(t->reg_mean, 0, nr_regions * sizeof(*t->reg_mean));
		memset(t->reg_boost, 0, nr_regions * sizeof(*t->reg_boost));
		for (r = 0; r < nr_regions; r++)
			t->reg_shrink[r] = 1.0f;
		return;
	}
	for (r = 0; r < nr_regions; r++) {
		uint64_t first = r << REGION_SHIFT, end = first + (1u << REGION_SHIFT), i;
		double sum = 0, sum2 = 0, n, m, var, noise, spread;

		if (end > t->nr_pages)
			end = t->nr_pages;
		n = (double)(end - first);
		for (i = first; i < end; i++) {
			sum += t->pages[i].smp;
			sum2 += (double)t->pages[i].smp * t->pages[i].smp;
		}
		m = sum / n;
		var = sum2 / n - m * m;
		noise = m * t->sample_weight / tau;	/* Poisson: variance of one page's estimate */
		spread = var > noise ? var - noise : 0;
		t->reg_mean[r] = (float)m;
		t->reg_shrink[r] = spread + noise > 0 ? (float)(spread / (spread + noise)) : 1.0f;
		t->reg_boost[r] = (float)region_momentum(t, m, t->reg_sshort[r] / n, n,
							 t->reg_since_ms[r] ?
							 stamp_ms(t->last_us) - t->reg_since_ms[r] : 0);
	}
	*t->env->work_units += t->nr_pages;
}

/* Bin of a score: BINS_PER_OCTAVE bins per doubling of score + 1, from
 * the float's exponent and a table over the top MANT_BITS bits of its
 * mantissa (a log2 per page and tick cost a fifth of a tick). Monotonic. */
static void init_mant_bin(struct tierd *t)
{
	unsigned k;

	for (k = 0; k < (1u << MANT_BITS); k++)
		t->mant_bin[k] = (uint8_t)(log2(1.0 + (double)k / (1u << MANT_BITS)) * BINS_PER_OCTAVE);
}

static int score_bin(const struct tierd *t, double score)
{
	float x = (float)score + 1.0f;
	uint32_t u;
	int e, b;

	if (!(score > 0))
		return 0;
	memcpy(&u, &x, sizeof(u));
	e = (int)(u >> 23) - 127;
	b = e * BINS_PER_OCTAVE + t->mant_bin[(u >> (23 - MANT_BITS)) & ((1u << MANT_BITS) - 1)];
	return b < NR_BINS ? b : NR_BINS - 1;
}

static void free_state(struct tierd *t)
{
	free(t->pages);
	free(t->hist);
	free(t->cand);
	free(t->down);
	free(t->score);
	free(t->bin);
	free(t->reg_mean);
	free(t->reg_shrink);
	free(t->reg_sshort);
	free(t->reg_since_ms);
	free(t->reg_boost);
	free(t->gs);
	free(t);
}

/* Grows every per-page and per-region array to n pages (new pages start
 * with no heat; region figures are recomputed every tick). On -ENOMEM the
 * policy keeps working on its old size. */
static int grow(struct tierd *t, uint64_t n)
{
	/* At least one slot: a daemon may start with nothing managed yet. */
	size_t slots = n ? n : 1, nr_regions = (n >> REGION_SHIFT) + 1;

	if (t->pages && n <= t->nr_pages)
		return 0;
#define GROW(field, count)                                                \
	do {                                                              \
		void *q = realloc(t->field, (count) * sizeof(*t->field)); \
		if (!q)                                                   \
			return -ENOMEM;                                   \
		t->field = q;                                             \
	} while (0)
	GROW(cand, slots);
	GROW(down, slots);
	GROW(score, slots);
	GROW(bin, slots);
	GROW(reg_mean, nr_regions);
	GROW(reg_shrink, nr_regions);
	GROW(reg_boost, nr_regions);
	{
		size_t old_regions = t->pages ? (size_t)(t->nr_pages >> REGION_SHIFT) + 1 : 0;

		GROW(reg_sshort, nr_regions);
		memset(t->reg_sshort + old_regions, 0,
		       (nr_regions - old_regions) * sizeof(*t->reg_sshort));
		GROW(reg_since_ms, nr_regions);
		memset(t->reg_since_ms + old_regions, 0,
		       (nr_regions - old_regions) * sizeof(*t->reg_since_ms));
		memset(t->reg_boost, 0, nr_regions * sizeof(*t->reg_boost));
	}
	GROW(pages, slots);
#undef GROW
	memset(t->pages + t->nr_pages, 0, (slots - t->nr_pages) * sizeof(*t->pages));
	t->nr_pages = n;
	return 0;
}

static int tierd_create(const struct tier_env *env, void **priv, struct tier_err *err)
{
	struct tierd *t = calloc(1, sizeof(*t));
	size_t r;

	if (!t)
		return tier_err_set(err, -ENOMEM, "out of memory");
	t->env = env;
	t->prm = &tier_tierd_params_default;
	t->nr_tiers = env->topo->nr_tiers < 8 ? env->topo->nr_tiers : 8;
	t->hist = calloc(NR_BINS, sizeof(*t->hist));
	t->gs = calloc(1, sizeof(*t->gs));
	if (!t->hist || !t->gs || grow(t, env->nr_pages) || tier_mover_init(&t->mover, env, &t->budget)) {
		free_state(t);
		return tier_err_set(err, -ENOMEM, "out of memory");
	}
	tier_node_rank_map(env->topo, t->node_rank);
	init_mant_bin(t);
	for (r = 0; r < 8; r++)
		t->fill[r] = 1.0;
	t->pinned_bin = score_bin(t, PINNED_SCORE);
	for (r = 0; r < t->nr_tiers; r++) {
		const struct tier_node *n = tier_topology_node(env->topo, env->topo->tiers[r].nodes[0]);

		t->tier_lat_ns[r] = n && n->has_hmat && n->hmat.read_latency_ns ?
				    n->hmat.read_latency_ns : 100.0 * (double)(r + 1);
	}
	t->last_us = env->clock->now_us(env->clock_priv);
	tier_budget_init(&t->budget, env->budget_bytes_per_s,
			 env->budget_bytes_per_s * env->interval_us / 1000000 * 2, t->last_us);
	*priv = t;
	return 0;
}

static void tierd_destroy(void *priv)
{
	struct tierd *t = priv;


	tier_mover_release(&t->mover);
	free_state(t);
}

/* The weight of `accesses` seen over covered_us in a rate of time
 * constant tau_us, when the scores last decayed gap_us ago: the accesses
 * themselves when the observation covered the gap (a continuous tracker,
 * a tick per aggregation), else the rate they show extrapolated over the
 * gap - a snapshot of the last aggregation, taken by a daemon whose CPU
 * share spaces its steps seconds apart, speaks for the whole gap - as an
 * exponential average would weigh it. */
static double rate_weight(double accesses, double covered_us, double gap_us, double tau_us)
{
	if (covered_us <= 0 || gap_us <= covered_us)
		return accesses * 1e6 / tau_us;
	return accesses * 1e6 / covered_us * -expm1(-gap_us / tau_us);
}

static void add_accesses(struct tierd *t, uint64_t page, uint32_t nr, double accesses,
			 bool sampled, double covered_us)
{
	uint64_t end = page + nr;
	double gap = sampled ? 0 : (double)t->gap_us;
	float l = (float)rate_weight(accesses, covered_us, gap, t->prm->long_tau_us);
	float s = sampled ? 0 : (float)rate_weight(accesses, covered_us, gap, t->prm->short_tau_us);
	float m = sampled ? l : 0;

	if (end > t->nr_pages)
		end = t->nr_pages;
	if (!sampled && t->env->page_huge && t->sample_weight > 0) {
		/* A huge page's accessed bit and hint fault are its PMD's: an
		 * access to any of its pages sets it, so they show how often
		 * the huge page is touched, not how its pages share the
		 * touches. With samples, which carry each access's own 4 KiB
		 * page and tell the pages apart, the huge page's rate is spread
		 * over its 512 pages (right for scattered accesses). Without
		 * them each page counts as touched as often as the huge page
		 * (right for sweeps over it; placement ranks huge pages among
		 * themselves the same either way). */
		const float share = 1.0f / (float)(UINT64_C(1) << t->env->huge_shift);

		for (; page < end; page++) {
			float k = huge_at(t, page) ? share : 1.0f;

			t->pages[page].lng += l * k;
			t->pages[page].shrt += s * k;
		}
		*t->env->work_units += nr;
		return;
	}
	if (sampled) {
		size_t r = page >> REGION_SHIFT;

		t->reg_sshort[r] += (float)rate_weight(accesses, 0, 0, t->prm->short_tau_us) * (float)(end - page);
		if (!t->reg_since_ms[r])
			t->reg_since_ms[r] = stamp_ms(t->last_us);
	}
	for (; page < end; page++) {
		t->pages[page].lng += l;
		t->pages[page].shrt += s;
		t->pages[page].smp += m;
	}
	*t->env->work_units += nr;
}

static void decay(struct tierd *t, uint64_t now_us);

static void tierd_observe(void *priv, const struct tier_obs *obs, size_t n)
{
	struct tierd *t = priv;
	size_t i;

	/* Fresh observations must not be decayed over the time before they
	 * arrived: decay the old scores to now first (once per step). */
	if (!t->decayed) {
		decay(t, t->env->clock->now_us(t->env->clock_priv));
		t->decayed = true;
	}
	for (i = 0; i < n; i++) {
		const struct tier_obs *o = &obs[i];
		double acc;

		/* Nothing seen, or a kind the policy does not read: no
		 * accesses; a sample tells what one sample stands for. */
		switch (o->kind) {
		case TIER_OBS_ACCESSED:
		case TIER_OBS_WRITTEN:
			if (!o->count)
				continue;
			break;
		case TIER_OBS_SAMPLE:
			t->sample_weight = o->count;
			break;
		case TIER_OBS_HINT_FAULT:
			break;
		default:
			continue;
		}
		acc = tier_obs_accesses(o);
		/* A sample is one draw of a sparse process: it feeds the
		 * frequency estimate only; one sample on a cold page must not
		 * look like momentum. Scans and faults see every page's recent
		 * past and feed both. */
		add_accesses(t, o->page, o->nr_pages, acc, o->kind == TIER_OBS_SAMPLE,
			     o->kind == TIER_OBS_ACCESSED || o->kind == TIER_OBS_WRITTEN ?
			     o->interval_us : 0);
	}
	*t->env->work_units += n;
}

static void decay(struct tierd *t, uint64_t now_us)
{
	double dt = (double)(now_us - t->last_us);

	t->gap_us = now_us - t->last_us;
	float fl = (float)exp(-dt / t->prm->long_tau_us), fs = (float)exp(-dt / t->prm->short_tau_us);
	const float rate_floor = t->prm->rate_floor_per_s;
	uint64_t i;

	for (i = 0; i < t->nr_pages; i++) {
		struct tierd_page *p = &t->pages[i];

		/* A rate that decayed below the floor is none: exact zeros let
		 * idle pages take the short way through every pass, and keep
		 * floats out of denormals (slow on every FPU, and far slower
		 * where floating point is emulated). */
		if (p->lng == 0 && p->shrt == 0)
			continue;
		p->lng = p->lng * fl < rate_floor ? 0 : p->lng * fl;
		p->shrt = p->shrt * fs < rate_floor ? 0 : p->shrt * fs;
		p->smp = p->lng == 0 ? 0 : p->smp * fl;
	}
	{
		uint64_t r, nr_regions = (t->nr_pages + (1u << REGION_SHIFT) - 1) >> REGION_SHIFT;

		for (r = 0; r < nr_regions; r++)
			t->reg_sshort[r] = t->reg_sshort[r] * fs < rate_floor ? 0 : t->reg_sshort[r] * fs;
	}
	*t->env->work_units += t->nr_pages;
	t->last_us = now_us;
}

/* Loaded-latency balance (Colloid's idea, for each pair of adjacent
 * tiers): where the backend measures each node's latency under load, a
 * faster tier whose loaded latency rose above the next tier's is filled
 * less - its share of capacity shrinks in proportion to the excess, so its
 * coldest pages go down and promotions into it wait - and refilled as its
 * latency falls back below. Idle the faster tier is much faster and fills
 * whole. */
static void balance_loaded(struct tierd *t)
{
	const struct tier_env *env = t->env;
	const struct tier_tierd_params *prm = t->prm;
	size_t r, k;

	if (!env->mem->node_latency_ns)
		return;
	for (r = 0; r < t->nr_tiers; r++) {
		const struct tier_tier *tier = &env->topo->tiers[r];
		double sum = 0, ns;
		size_t n = 0;

		for (k = 0; k < tier->nr_nodes; k++)
			if (!env->mem->node_latency_ns(env->mem_priv, tier->nodes[k], &ns) && ns > 0) {
				sum += ns;
				n++;
			}
		if (!n)
			return;	/* not measurable: no balance */
		t->loaded_ns[r] = t->loaded_ns[r] > 0 ?
				  (1 - prm->loaded_smooth_ratio) * t->loaded_ns[r] +
					  prm->loaded_smooth_ratio * sum / (double)n :
				  sum / (double)n;
	}
	for (r = 0; r + 1 < t->nr_tiers; r++) {
		double q = t->loaded_ns[r] / t->loaded_ns[r + 1];

		if (q > 1 + prm->loaded_deadband_ratio)
			t->fill[r] *= 1 - prm->loaded_gain_ratio * (q - 1 < 0.5 ? q - 1 : 0.5);
		else if (q < 1 - prm->loaded_deadband_ratio)
			t->fill[r] *= 1 + prm->loaded_gain_ratio * (1 - q);
		if (t->fill[r] < prm->fill_min_ratio)
			t->fill[r] = prm->fill_min_ratio;
		if (t->fill[r] > 1)
			t->fill[r] = 1;
	}
}

/* Fits one score threshold per tier to the capacities. */
static void fit_thresholds(struct tierd *t)
{
	uint64_t cap[8], i, acc = 0;
	size_t r;
	int b;

	memset(t->hist, 0, NR_BINS * sizeof(*t->hist));
	for (i = 0; i < t->nr_pages; i++)
		if (t->env->page_node[i] != TIER_NODE_NONE)
			t->hist[t->bin[i]]++;
	for (r = 0; r < t->nr_tiers; r++) {
		uint64_t total, free;

		tier_tier_pages(t->env, (int)r, &total, &free);
		cap[r] = r + 1 < t->nr_tiers ? (uint64_t)((double)total * t->fill[r]) : total;
	}
	cap[0] -= cap[0] * t->prm->headroom_bp / 10000;
	/* Walk from the hottest bin down; tier r's threshold is the lowest bin
	 * whose pages (with all hotter ones) still fit tiers 0..r. */
	r = 0;
	{
		uint64_t room = cap[0];

		for (b = NR_BINS - 1; b >= 0 && r + 1 < t->nr_tiers; b--) {
			while (r + 1 < t->nr_tiers && acc + t->hist[b] > room) {
				t->thr_bin[r] = b + 1;
				r++;
				room += cap[r];
			}
			acc += t->hist[b];
		}
		for (; r + 1 < t->nr_tiers; r++)
			t->thr_bin[r] = 0;	/* everything fits above */
	}
	t->thr_bin[t->nr_tiers - 1] = 0;
}

static int target_rank(const struct tierd *t, int bin)
{
	size_t r;

	for (r = 0; r + 1 < t->nr_tiers; r++)
		if (bin >= t->thr_bin[r])
			return (int)r;
	return (int)t->nr_tiers - 1;
}

/* Accesses/s at the lower edge of a score bin. */
static double bin_rate(int bin)
{
	return exp2((double)bin / BINS_PER_OCTAVE) - 1.0;
}

/* Latency a split of the huge page [first, first + n), whose pages' scores
 * sum to sum, saves per second (ns/s), at the current thresholds: at each
 * tier boundary r of threshold T, the pages placed one by one gain
 * sum(max(0, s_i - T)) over the boundary's latency step (the pages above T
 * belong above it), the huge page as a whole max(0, sum(s_i - T)). Equal
 * pages gain nothing by a split; one hot page among cold ones gains its
 * whole excess. */
static double split_gain(const struct tierd *t, uint64_t first, uint64_t n, double sum)
{
	double gain = 0;
	size_t r;

	for (r = 0; r + 1 < t->nr_tiers; r++) {
		double thr = t->thr_bin[r] > 0 ? bin_rate(t->thr_bin[r]) : 0, apart = 0, whole;
		uint64_t i;

		if (thr <= 0)
			continue;
		for (i = first; i < first + n; i++)
			if (t->score[i] > thr)
				apart += t->score[i] - thr;
		whole = sum - (double)n * thr;
		if (whole > 0)
			apart -= whole;
		gain += apart * (t->tier_lat_ns[r + 1] - t->tier_lat_ns[r]);
	}
	return gain;
}

/* Huge pages: splits those whose split pays, and gives the pages of every
 * other one their mean score: they move together. A huge page with a
 * pinned page is pinned as a whole.
 * Splitting a huge page (env->page_huge) lets its hot pages rise and its
 * cold ones sink apart, but every access to its pages then needs a 4 KiB
 * translation: counted as a page walk each (split_walk_ns). The split
 * itself (split_cost_ns) is paid once, spread over the long time constant.
 * A split must save (split_gain) split_margin_ratio times the two; at most
 * max_splits_per_tick a tick. */
static void score_units(struct tierd *t)
{
	const struct tier_env *env = t->env;
	const struct tier_tierd_params *prm = t->prm;
	const uint64_t unit = UINT64_C(1) << env->huge_shift;
	const double tau = prm->long_tau_us / 1e6;
	unsigned splits = 0;
	uint64_t first, visited = 0;

	for (first = 0; first < t->nr_pages; first += unit) {
		uint64_t n = first + unit > t->nr_pages ? t->nr_pages - first : unit, i;
		double sum = 0, mean;
		bool pinned = false;
		float sc;

		if (!env->page_huge[first >> env->huge_shift])
			continue;
		visited += n;
		for (i = first; i < first + n; i++) {
			sum += t->score[i];
			pinned |= t->score[i] >= PINNED_SCORE;
		}
		if (sum > 0 && !pinned && splits < prm->max_splits_per_tick && env->migrator->split &&
		    split_gain(t, first, n, sum) >
			    prm->split_margin_ratio *
				    (sum * prm->split_walk_ns + prm->split_cost_ns / tau) &&
		    env->migrator->split(env->migrator_priv, first) == 0 &&
		    !env->page_huge[first >> env->huge_shift]) {
			splits++;
			continue;
		}
		mean = pinned ? PINNED_SCORE : sum / (double)n;
		sc = (float)mean;
		for (i = first; i < first + n; i++) {
			t->score[i] = sc;
			t->bin[i] = (uint16_t)score_bin(t, sc);
		}
	}
	t->splits += splits;
	*env->work_units += (t->nr_pages >> env->huge_shift) + visited;
}

/* Computes every page's score once per tick (placement reads it many
 * times: histogram, candidates, sorting, exchanges). */
static void compute_scores(struct tierd *t)
{
	uint64_t i;

	for (i = 0; i < t->nr_pages; i++) {
		const struct tierd_page *p = &t->pages[i];

		/* Idle, in a region without samples, no hint: nothing to
		 * compute. */
		if (p->lng == 0 && p->shrt == 0 && t->reg_mean[i >> REGION_SHIFT] == 0 &&
		    hint_of(t, i) == TIER_HINT_NONE) {
			t->score[i] = 0;
			t->bin[i] = 0;
			continue;
		}
		t->score[i] = (float)compute_score(t, i);
		t->bin[i] = (uint16_t)score_bin(t, t->score[i]);
	}
	*t->env->work_units += t->nr_pages;
	if (t->env->page_huge)
		score_units(t);
}

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

static int cmp_score_desc(const void *a, const void *b, void *ctx)
{
	const struct tierd *t = ctx;
	double x = t->score[*(const uint64_t *)a];
	double y = t->score[*(const uint64_t *)b];

	if (x != y)
		return x > y ? -1 : 1;
	return (*(const uint64_t *)a > *(const uint64_t *)b) -
	       (*(const uint64_t *)a < *(const uint64_t *)b);
}

static uint32_t ms_since_move(const struct tierd *t, uint64_t page, uint64_t now_us)
{
	return stamp_ms(now_us) - t->pages[page].moved_ms;
}

static bool cooling_down(const struct tierd *t, uint64_t page, uint64_t now_us)
{
	return t->pages[page].moved_ms && ms_since_move(t, page, now_us) < t->prm->cooldown_us / 1000;
}

static bool pays_off(const struct tierd *t, uint64_t page, int from, int to)
{
	double gap = t->tier_lat_ns[from > to ? from : to] - t->tier_lat_ns[from < to ? from : to];
	double s = ((double)t->score[page]);

	/* Promotion: the page's accesses get faster; demotion of a cold page:
	 * its few accesses get slower, which must stay below the cost of the
	 * room it frees being unused - demotions make room, so only gate
	 * promotions. */
	if (to > from)
		return true;
	return s * gap * t->prm->long_tau_us / 1e6 > t->prm->move_cost_ns;
}

static int cmp_score_asc(const void *a, const void *b, void *ctx)
{
	return -cmp_score_desc(a, b, ctx);
}

/* Pages of tier rank to keep free: tier 0's headroom for promotions, and
 * what the loaded-latency balance takes out of the tier. */
static uint64_t headroom_pages(const struct tierd *t, int rank)
{
	uint64_t total, free, keep;

	if (tier_tier_pages(t->env, rank, &total, &free))
		return 0;
	keep = rank == 0 ? total * t->prm->headroom_bp / 10000 : 0;
	if (rank + 1 < (int)t->nr_tiers && t->fill[rank] < 1)
		keep += total - (uint64_t)((double)total * t->fill[rank]);
	return keep;
}

static void mark_moved(struct tierd *t, uint64_t p, uint64_t now_us, uint8_t reason)
{

	t->pages[p].moved_ms = stamp_ms(now_us);
	t->pages[p].reason = reason;
}

/* Whether moving a page of predicted rate hot up and one of rate cold down
 * is worth it: hot must be swap_margin_ratio times as hot (plus
 * swap_min_delta_per_s), and - when the rates come from samples, whose
 * counts are Poisson - the difference must stand swap_noise_sd standard
 * deviations above the sampling noise of the two estimates (the sampled
 * part r of a rate over long_tau_us, from samples of weight w, has variance
 * r * w / tau).
 * Without it, pages of equal heat trade places on noise (uniform, thrash). */
static bool exchange_pays(const struct tierd *t, uint64_t up, uint64_t down)
{
	double hot = ((double)t->score[up]), cold = ((double)t->score[down]);
	double noise;

	if (hot <= cold * t->prm->swap_margin_ratio + t->prm->swap_min_delta_per_s)
		return false;
	if (t->sample_weight <= 0)
		return true;
	/* After pooling, what is left of each page's noise scales with its
	 * region's shrinkage factor. */
	noise = sqrt(((double)t->pages[up].smp * t->reg_shrink[up >> REGION_SHIFT] +
		      (double)t->pages[down].smp * t->reg_shrink[down >> REGION_SHIFT]) *
		     t->sample_weight / (t->prm->long_tau_us / 1e6));
	return hot - cold > t->prm->swap_noise_sd * noise;
}

static size_t group_of(const struct tierd *t, uint64_t i)
{
	const struct tier_env *env = t->env;
	size_t g;

	if (!env->groups || !env->page_owner)
		return 0;
	g = env->groups->owner_group[env->page_owner[i]];
	return g < t->gs->nr ? g : 0;
}

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
static void groups_update(struct tierd *t)
{
	const struct tier_groups *gr = t->env->groups;
	struct tierd_groups *gs = t->gs;
	uint64_t cap[8], i;
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
		g = group_of(t, i);
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
static int allowed_rank(const struct tierd *t, size_t g, int want)
{
	int last = (int)t->nr_tiers - 1;

	if (!t->gs->active)
		return want;
	while (want < last && t->gs->use[g][want] >= t->gs->max[g][want])
		want++;
	return want;
}

/* Queues one page's move and keeps the groups' figures current. */
static bool queue_page(struct tierd *t, uint64_t p, int from, int to, uint64_t now_us,
		       uint8_t reason)
{
	if (!tier_mover_add(&t->mover, p, to))
		return false;
	mark_moved(t, p, now_us, reason);
	if (t->gs->active && from >= 0) {
		size_t g = group_of(t, p);

		if (t->gs->use[g][from])
			t->gs->use[g][from]--;
		t->gs->use[g][to]++;
	}
	return true;
}

/* Queues the move of page p and of every page that moves with it (its
 * huge page). Returns whether any was queued. */
static bool queue_move(struct tierd *t, uint64_t p, int from, int to, uint64_t now_us,
		       uint8_t reason)
{
	uint64_t first, n = unit_of(t, p, &first), q;
	bool any = false;

	for (q = first; q < first + n; q++)
		any |= queue_page(t, q, from, to, now_us, reason);
	return any;
}

/* Bytes a move of page p takes from the budget: its huge page's. */
static uint64_t move_bytes(const struct tierd *t, uint64_t p)
{
	uint64_t first;

	return unit_of(t, p, &first) << t->env->page_shift;
}

static bool at_cap(const struct tierd *t, size_t g, int r)
{
	return t->gs->active && t->gs->use[g][r] >= t->gs->max[g][r];
}

static bool under_share(const struct tierd *t, size_t g, int r)
{
	return t->gs->shares && t->gs->use[g][r] < t->gs->share[g][r];
}

static bool over_share(const struct tierd *t, size_t g, int r)
{
	return t->gs->shares && t->gs->use[g][r] > t->gs->share[g][r];
}

/* A page of group g in tier r that another group may not take: the group
 * holds no more than its min there. */
static bool protected_by_min(const struct tierd *t, size_t g, int r)
{
	return t->gs->active && t->gs->use[g][r] <= t->gs->min[g][r];
}

/* Whether promoting up into tier r may displace down. 1: by the groups'
 * shares, whatever the heat; 0: by heat (exchange_pays); -1: never. */
static int victim_rule(const struct tierd *t, uint64_t up, uint64_t down, int r)
{
	size_t a, b;

	if (!t->gs->active)
		return 0;
	a = group_of(t, up);
	b = group_of(t, down);
	if (a == b)
		return 0;
	if (protected_by_min(t, b, r))
		return -1;
	if (t->gs->shares) {
		bool a_under = under_share(t, a, r), b_over = over_share(t, b, r);

		if (a_under && b_over)
			return 1;
		if (!a_under && !b_over)
			return -1;
	}
	return 0;
}

/* Demotes the coldest pages of every group over its cap of tier r until
 * it is within. Returns false when the budget ran out. */
static bool enforce_caps(struct tierd *t, int r, uint64_t now_us)
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
		if (tier_page_rank(t->env, t->node_rank, i) != r || unit_tail(t, i))
			continue;
		g = group_of(t, i);
		if (t->gs->use[g][r] > t->gs->max[g][r])
			t->cand[n++] = i;
	}
	*t->env->work_units += t->nr_pages;
	if (n)
		qsort_r(t->cand, n, sizeof(*t->cand), cmp_score_asc, t);
	for (k = 0; k < n; k++) {
		uint64_t p = t->cand[k];
		int to;

		g = group_of(t, p);
		if (t->gs->use[g][r] <= t->gs->max[g][r])
			continue;
		if (tier_mover_budget_left(&t->mover) < move_bytes(t, p))
			return false;
		to = target_rank(t, t->bin[p]);
		to = allowed_rank(t, g, to > r ? to : r + 1);
		queue_move(t, p, r, to, now_us, TIERD_REASON_DEMOTE_CAP);
	}
	return true;
}

/* The victim in down[j..nr) for promoting up into r: for a group below its
 * share, the coldest page of a group above its share; else the coldest
 * page that may go. Returns its index, or nr when none; *rule receives
 * victim_rule() for it. */
static size_t pick_victim(const struct tierd *t, const uint64_t *down, size_t j, size_t nr,
			  uint64_t up, int r, uint64_t now_us, int *rule)
{
	size_t k;

	if (t->gs->shares && under_share(t, group_of(t, up), r)) {
		for (k = j; k < nr; k++) {
			if (down[k] == TAKEN || cooling_down(t, down[k], now_us))
				continue;
			if (victim_rule(t, up, down[k], r) == 1) {
				*rule = 1;
				return k;
			}
		}
	}
	for (k = j; k < nr; k++) {
		if (down[k] == TAKEN || cooling_down(t, down[k], now_us))
			continue;
		*rule = victim_rule(t, up, down[k], r);
		if (*rule >= 0)
			return k;
	}
	return nr;
}

/* Fills tier rank r: promotes the hottest pages below it that belong at r
 * or above, into free room first, then by exchanging them for the coldest
 * pages of r while the exchange pays. Returns false when the budget ran out. */
static bool fill_tier(struct tierd *t, int r, uint64_t now_us)
{
	const struct tier_env *env = t->env;
	size_t nr_up = 0, nr_down = 0, nr_first = 0, k, j = 0;
	uint64_t i, room_keep = headroom_pages(t, r);
	const uint64_t page_bytes = UINT64_C(1) << env->page_shift;
	const bool groups = t->gs->active;

	if (!enforce_caps(t, r, now_us))
		return false;
	for (i = 0; i < t->nr_pages; i++) {
		int cur = tier_page_rank(env, t->node_rank, i), bin;
		uint8_t hint = hint_of(t, i);

		if (cur < 0 || unit_tail(t, i))
			continue;
		if (hint == TIER_HINT_COLD) {
			/* Advised cold: to the slowest tier, first of all moves. */
			if (cur == r && r + 1 < (int)t->nr_tiers && !cooling_down(t, i, now_us))
				queue_move(t, i, cur, (int)t->nr_tiers - 1, now_us,
					   TIERD_REASON_DEMOTE_ADVISED);
			continue;
		}
		bin = t->bin[i];
		if (cur == r) {
			/* A pinned page is never anyone's victim. */
			if (r != 0 || (hint != TIER_HINT_PIN_FAST && hint != TIER_HINT_LATENCY))
				t->down[nr_down++] = i;
		} else if (cur > r) {
			size_t g = groups ? group_of(t, i) : 0;

			bool owed = under_share(t, g, r);

			if (!owed && bin < t->thr_bin[r] && bin < t->pinned_bin)
				continue;	/* not hot enough for r (the common case) */
			if ((groups && at_cap(t, g, r)) || cooling_down(t, i, now_us))
				continue;
			/* Only pages whose move pays compete for the budget. */
			if (!owed && !pays_off(t, i, cur, r))
				continue;
			if (target_rank(t, bin) <= r || bin >= t->pinned_bin) {
				t->cand[nr_up++] = i;	/* the exchange margin is the hysteresis */
			} else if (owed && t->score[i] >= t->prm->demand_min_per_s) {
				t->cand[nr_up++] = i;	/* in use, and its group is owed room */
			} else {
				continue;
			}
			/* Candidates of groups below their share go first. */
			if (under_share(t, g, r)) {
				uint64_t tmp = t->cand[nr_first];

				t->cand[nr_first++] = t->cand[nr_up - 1];
				t->cand[nr_up - 1] = tmp;
			}
		}
	}
	*env->work_units += t->nr_pages;
	/* Only as many as this tick can move need an order: the hottest
	 * candidates and the coldest victims the budget allows (groups'
	 * rules may pass over victims: then all of them). */
	{
		uint64_t left = tier_mover_budget_left(&t->mover) / page_bytes;
		size_t want = left < nr_up ? (size_t)left : nr_up;
		size_t want_down = want + (size_t)room_keep + 64;

		if (nr_first >= want) {
			select_k(t->cand, nr_first, want, t->score, true);
			nr_first = want;
		} else {
			select_k(t->cand + nr_first, nr_up - nr_first, want - nr_first, t->score, true);
		}
		nr_up = want;
		if (!groups && want_down < nr_down) {
			select_k(t->down, nr_down, want_down, t->score, false);
			nr_down = want_down;
		}
	}
	if (nr_first)
		qsort_r(t->cand, nr_first, sizeof(*t->cand), cmp_score_desc, t);
	if (nr_up > nr_first)
		qsort_r(t->cand + nr_first, nr_up - nr_first, sizeof(*t->cand), cmp_score_desc, t);
	if (nr_down)
		qsort_r(t->down, nr_down, sizeof(*t->down), cmp_score_asc, t);
	*env->work_units += nr_up + nr_down;

	for (k = 0; k < nr_up; k++) {
		uint64_t p = t->cand[k], v, up_bytes;
		int cur = tier_page_rank(env, t->node_rank, p), vtgt, rule;
		size_t g = group_of(t, p), vk, b;
		int64_t need, room;
		bool fair = under_share(t, g, r);

		if (cooling_down(t, p, now_us) || (!fair && !pays_off(t, p, cur, r)))
			continue;
		if (groups && at_cap(t, g, r))
			continue;
		up_bytes = move_bytes(t, p);
		if (tier_mover_budget_left(&t->mover) < up_bytes)
			return false;
		/* Pages to free first: none while the tier has room above
		 * its headroom (a huge page needs room for all of its pages);
		 * the headroom itself is restored below, by cold pages. */
		room = tier_mover_tier_free(&t->mover, r) - (int64_t)room_keep;
		need = (int64_t)(up_bytes / page_bytes) - (room > 0 ? room : 0);
		if (need <= 0) {
			queue_move(t, p, cur, r, now_us,
				   fair ? TIERD_REASON_PROMOTE_SHARE : TIERD_REASON_PROMOTE_ROOM);
			continue;
		}
		/* No room: exchange with the coldest pages of r that may move,
		 * as many as p needs. */
		rule = 0;
		while (need > 0) {
			while (j < nr_down &&
			       (t->down[j] == TAKEN || cooling_down(t, t->down[j], now_us)))
				j++;
			vk = pick_victim(t, t->down, j, nr_down, p, r, now_us, &rule);
			if (vk == nr_down)
				break;
			v = t->down[vk];
			if (rule == 0 && !exchange_pays(t, p, v))
				break;	/* the rest are colder: no exchange pays */
			if (tier_mover_budget_left(&t->mover) < up_bytes + move_bytes(t, v))
				return false;
			/* The victim goes where its own score puts it: a page
			 * with long predicted idleness skips the tiers in
			 * between, and past any tier its group may not fill
			 * further. */
			b = group_of(t, v);
			vtgt = target_rank(t, t->bin[v]);
			if (vtgt <= r)
				vtgt = r + 1;
			vtgt = allowed_rank(t, b, vtgt);
			if (!queue_move(t, v, r, vtgt, now_us,
					rule == 1 ? TIERD_REASON_DEMOTE_SHARE :
					vtgt > r + 1 ? TIERD_REASON_DEMOTE_SKIP
						     : TIERD_REASON_DEMOTE_EXCHANGE))
				break;
			need -= (int64_t)(move_bytes(t, v) / page_bytes);
			if (vk == j)
				j++;
			else
				t->down[vk] = TAKEN;
		}
		if (need > 0) {
			if (!groups)
				break;
			continue;
		}
		queue_move(t, p, cur, r, now_us,
			   rule == 1 ? TIERD_REASON_PROMOTE_SHARE : TIERD_REASON_PROMOTE_EXCHANGE);
	}
	/* Keep the headroom: demote clearly cold pages while below it. */
	for (; j < nr_down && tier_mover_tier_free(&t->mover, r) < (int64_t)room_keep; j++) {
		uint64_t v = t->down[j];
		int bin, vtgt;

		if (v == TAKEN)
			continue;
		bin = t->bin[v];
		/* Clearly cold pages only - unless the loaded-latency balance
		 * takes room out of the tier: then the coldest, whatever their
		 * heat (pages of equal heat share one bin). */
		if (cooling_down(t, v, now_us) ||
		    (t->fill[r] >= 1 && bin + t->prm->hysteresis_bins > t->thr_bin[r]))
			continue;
		if (groups && protected_by_min(t, group_of(t, v), r))
			continue;
		/* A huge page for a headroom of less than half its size would
		 * leave most of what it frees unused (a tier of huge pages is
		 * filled by exchanges instead). */
		if ((int64_t)(move_bytes(t, v) / page_bytes) >
		    2 * ((int64_t)room_keep - tier_mover_tier_free(&t->mover, r)))
			continue;
		if (tier_mover_budget_left(&t->mover) < move_bytes(t, v))
			return false;
		vtgt = target_rank(t, bin);
		if (vtgt <= r)
			vtgt = r + 1;
		vtgt = allowed_rank(t, group_of(t, v), vtgt);
		queue_move(t, v, r, vtgt, now_us, TIERD_REASON_DEMOTE_HEADROOM);
	}
	return true;
}

static int tierd_tick(void *priv, uint64_t now_us)
{
	struct tierd *t = priv;
	int r, ret;

	if (!t->decayed)
		decay(t, now_us);
	t->decayed = false;
	pool_samples(t);
	compute_scores(t);
	balance_loaded(t);
	fit_thresholds(t);
	groups_update(t);
	/* The budget may change (a reload): its burst with it. The burst is
	 * two ticks' worth, or what accrued since the last tick (at most a
	 * second's) when ticks came further apart than the interval (the
	 * daemon's CPU share spaces them out): the rate, not the tick
	 * count, is the limit. */
	{
		uint64_t span = 2 * t->env->interval_us, since = now_us - t->last_tick_us;

		if (t->last_tick_us && since > span)
			span = since < 1000000 ? since : 1000000;
		t->budget.rate_bytes_per_s = t->env->budget_bytes_per_s;
		t->budget.burst_bytes = t->env->budget_bytes_per_s * span / 1000000;
		t->last_tick_us = now_us;
	}
	tier_budget_refill(&t->budget, now_us);
	tier_mover_begin(&t->mover);
	for (r = 0; r + 1 < (int)t->nr_tiers; r++) {
		bool more = fill_tier(t, r, now_us);

		/* Moves queued for r must land before r + 1 is planned. */
		ret = tier_mover_flush(&t->mover);
		if (ret && ret != -EBUSY)
			return ret;
		if (!more)
			break;
	}
	return 0;
}

static int tierd_resize(void *priv)
{
	struct tierd *t = priv;

	return grow(t, t->env->nr_pages);
}

static void tierd_forget(void *priv, uint64_t first, uint64_t nr)
{
	struct tierd *t = priv;

	if (first >= t->nr_pages)
		return;
	if (nr > t->nr_pages - first)
		nr = t->nr_pages - first;
	memset(t->pages + first, 0, nr * sizeof(*t->pages));
}

static int tierd_explain(void *priv, uint64_t page, uint64_t now_us,
			 struct tier_page_explain *out)
{
	struct tierd *t = priv;
	const struct tierd_page *p;
	int cur, target;
	uint8_t hint;
	size_t g;
	double score;

	if (page >= t->nr_pages || page >= t->env->nr_pages)
		return -ENOENT;
	p = &t->pages[page];
	memset(out, 0, sizeof(*out));
	out->long_rate = p->lng;
	out->short_rate = p->shrt;
	out->heat = heat_score(t, page);
	score = compute_score(t, page);
	out->score = score;
	target = target_rank(t, score_bin(t, score));
	g = group_of(t, page);
	out->group = (int)g;
	out->moved_ago_ms = p->moved_ms ? ms_since_move(t, page, now_us) : UINT64_MAX;
	snprintf(out->last_move, sizeof(out->last_move), "%s",
		 p->reason < TIERD_REASON__COUNT ? reason_text[p->reason] : "?");
	cur = tier_page_rank(t->env, t->node_rank, page);
	hint = hint_of(t, page);
	if (hint == TIER_HINT_COLD)
		target = (int)t->nr_tiers - 1;
	else if (t->gs->active)
		target = allowed_rank(t, g, target);
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
		if (cooling_down(t, page, now_us))
			snprintf(out->verdict, sizeof(out->verdict),
				     "wants tier %d; waits: moved %llu ms ago, cool-down %llu ms",
				     target, (unsigned long long)out->moved_ago_ms,
				     (unsigned long long)(t->prm->cooldown_us / 1000));
		else if (t->gs->active && at_cap(t, g, target))
			snprintf(out->verdict, sizeof(out->verdict),
				     "wants tier %d; its control group is at its cap there", target);
		else
			snprintf(out->verdict, sizeof(out->verdict),
				     "wants tier %d (above %.3g accesses/s); promoted when room, the budget and a 2x colder page to exchange allow",
				     target, bin_rate(t->thr_bin[target]));
	} else {
		snprintf(out->verdict, sizeof(out->verdict),
			     "belongs in tier %d (below %.3g accesses/s); demoted when tier %d needs room",
			     target, bin_rate(t->thr_bin[cur]), cur);
	}
	return 0;
}

static size_t tierd_metadata_bytes(void *priv)
{
	const struct tierd *t = priv;

	return sizeof(*t) + t->nr_pages * (sizeof(*t->pages) + 2 * sizeof(*t->cand) +
					   sizeof(*t->score) + sizeof(*t->bin)) +
	       ((t->nr_pages >> REGION_SHIFT) + 1) *
		       (sizeof(*t->reg_mean) + sizeof(*t->reg_shrink) + sizeof(*t->reg_sshort) +
			sizeof(*t->reg_boost) + sizeof(*t->reg_since_ms)) +
	       NR_BINS * sizeof(*t->hist);
}

const struct tier_policy_ops tier_policy_tierd = {
	.name = "tierd",
	.description = "tierd: frequency + momentum, capacity-fitted thresholds, budgeted moves",
	.obs_kinds = TIER_OBS_ACCESSED | TIER_OBS_WRITTEN | TIER_OBS_SAMPLE | TIER_OBS_HINT_FAULT,
	.default_tracker = "damon,samples",
	.interval_us = 100000,
	/* One sample per 2000 cache-line misses: ~2% of a CPU at tiersim's
	 * access rate (MEMTIS keeps sampling under 3%); ten times HeMem's
	 * rate, which pays on skewed workloads whose hot pages are scattered
	 * (zipf). */
	.sample_period_lines = 2000,
	.create = tierd_create,
	.destroy = tierd_destroy,
	.observe = tierd_observe,
	.tick = tierd_tick,
	.resize = tierd_resize,
	.forget = tierd_forget,
	.explain = tierd_explain,
	.metadata_bytes = tierd_metadata_bytes,
};
