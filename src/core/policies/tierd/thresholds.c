/* thresholds.c - the tierd policy's thresholds, fitted to the tiers'
 * capacities: a log histogram of scores (16 bins per octave) gives, for
 * each tier, the score above which the hottest pages fill it (tier 0
 * keeps a headroom free for promotions). Each page's target tier
 * follows from its score directly, so a cold page in tier 0 may go
 * straight to the slowest tier and a hot page straight to the top. The
 * share of a tier that is filled shrinks where its loaded latency rises
 * above the next tier's.
 */
#include <math.h>
#include <string.h>

#include "core/policies/tierd/internal.h"

/* The table tier__tierd_score_bin() reads: the bin within an octave of
 * each value of a float's top TIERD_MANT_BITS mantissa bits. */
void tier__tierd_bins_init(struct tier__tierd *t)
{
	unsigned k;

	for (k = 0; k < (1u << TIERD_MANT_BITS); k++)
		t->mant_bin[k] = (uint8_t)(log2(1.0 + (double)k / (1u << TIERD_MANT_BITS)) *
					   TIERD_BINS_PER_OCTAVE);
}

/* Bin of a score: TIERD_BINS_PER_OCTAVE bins per doubling of score + 1,
 * from the float's exponent and the table over the top bits of its
 * mantissa (a log2 per page and tick cost a fifth of a tick). */
int tier__tierd_score_bin(const struct tier__tierd *t, double score)
{
	float x = (float)score + 1.0f;
	uint32_t u;
	int e, b;

	if (!(score > 0))
		return 0;
	memcpy(&u, &x, sizeof(u));
	e = (int)(u >> 23) - 127;
	b = e * TIERD_BINS_PER_OCTAVE +
	    t->mant_bin[(u >> (23 - TIERD_MANT_BITS)) & ((1u << TIERD_MANT_BITS) - 1)];
	return b < TIERD_NR_BINS ? b : TIERD_NR_BINS - 1;
}

/* Accesses/s at the lower edge of a score bin. */
double tier__tierd_bin_rate(int bin)
{
	return exp2((double)bin / TIERD_BINS_PER_OCTAVE) - 1.0;
}

/* Loaded-latency balance (Colloid's idea, for each pair of adjacent
 * tiers): where the backend measures each node's latency under load, a
 * faster tier whose loaded latency rose above the next tier's is filled
 * less - its share of capacity shrinks in proportion to the excess, so its
 * coldest pages go down and promotions into it wait - and refilled as its
 * latency falls back below. Idle the faster tier is much faster and fills
 * whole. */
void tier__tierd_balance_loaded(struct tier__tierd *t)
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
void tier__tierd_fit_thresholds(struct tier__tierd *t)
{
	uint64_t cap[TIER_MAX_TIERS], i, acc = 0;
	size_t r;
	int b;

	memset(t->hist, 0, TIERD_NR_BINS * sizeof(*t->hist));
	/* The visited chunks page by page (counted again on the way); every
	 * other present page is idle: bin 0, by the chunks' counts. */
	tier__tierd_recheck(t);
	{
		uint64_t c, present = 0, seen = 0;
		size_t k;

		tier__tierd_for_each_chunk(t, t->vis, c) {
			uint64_t end = tier__tierd_chunk_end(t, c), here = 0;

			tier__tierd_chunk_refresh(t, c);
			for (k = 0; k < TIERD_CNT_SLOTS; k++)
				here += t->cnt[c * TIERD_CNT_SLOTS + k];
			seen += here;
			if (tier__tierd_chunk_flat(t, c)) {
				/* One bin for all its pages. */
				t->hist[t->bin[c << TIERD_REGION_SHIFT]] += (uint32_t)here;
				continue;
			}
			for (i = c << TIERD_REGION_SHIFT; i < end; i++)
				if (t->env->page_node[i] != TIER_NODE_NONE)
					t->hist[t->bin[i]]++;
		}
		for (k = 0; k < TIERD_CNT_SLOTS; k++)
			present += t->tier_present[k];
		t->hist[0] += (uint32_t)(present - seen);
	}
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

		for (b = TIERD_NR_BINS - 1; b >= 0 && r + 1 < t->nr_tiers; b--) {
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

/* The fastest tier whose threshold the bin reaches; the slowest else. */
int tier__tierd_target_rank(const struct tier__tierd *t, int bin)
{
	size_t r;

	for (r = 0; r + 1 < t->nr_tiers; r++)
		if (bin >= t->thr_bin[r])
			return (int)r;
	return (int)t->nr_tiers - 1;
}

/* Pages of tier rank to keep free: tier 0's headroom for promotions, and
 * what the loaded-latency balance takes out of the tier. */
uint64_t tier__tierd_headroom_pages(const struct tier__tierd *t, int rank)
{
	uint64_t total, free, keep;

	if (tier_tier_pages(t->env, rank, &total, &free))
		return 0;
	keep = rank == 0 ? total * t->prm->headroom_bp / 10000 : 0;
	if (rank + 1 < (int)t->nr_tiers && t->fill[rank] < 1)
		keep += total - (uint64_t)((double)total * t->fill[rank]);
	return keep;
}
