/* huge.c - huge pages in the tierd policy: a huge page moves as one unit
 * at its pages' mean score, its first page standing for it, unless
 * splitting it pays.
 */
#include "core/policies/tierd/internal.h"

/* Pages [*first, *first + return) move with page i: its huge page, or i. */
uint64_t tier__tierd_unit_of(const struct tier__tierd *t, uint64_t i, uint64_t *first)
{
	uint64_t f, n;

	if (!tier__tierd_huge_at(t, i)) {
		*first = i;
		return 1;
	}
	f = i >> t->env->huge_shift << t->env->huge_shift;
	n = UINT64_C(1) << t->env->huge_shift;
	*first = f;
	return f + n > t->nr_pages ? t->nr_pages - f : n;
}

/* Bytes a move of page p takes from the budget: its huge page's. */
uint64_t tier__tierd_move_bytes(const struct tier__tierd *t, uint64_t p)
{
	uint64_t first;

	return tier__tierd_unit_of(t, p, &first) << t->env->page_shift;
}

/* Latency a split of the huge page [first, first + n), whose pages' scores
 * sum to sum, saves per second (ns/s), at the current thresholds: at each
 * tier boundary r of threshold T, the pages placed one by one gain
 * sum(max(0, s_i - T)) over the boundary's latency step (the pages above T
 * belong above it), the huge page as a whole max(0, sum(s_i - T)). Equal
 * pages gain nothing by a split; one hot page among cold ones gains its
 * whole excess. */
static double split_gain(const struct tier__tierd *t, uint64_t first, uint64_t n, double sum)
{
	double gain = 0;
	size_t r;

	for (r = 0; r + 1 < t->nr_tiers; r++) {
		double thr = t->thr_bin[r] > 0 ? tier__tierd_bin_rate(t->thr_bin[r]) : 0;
		double apart = 0, whole;
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
/* One huge page [first, first + n): split, or its pages' mean score. */
static unsigned score_unit(struct tier__tierd *t, uint64_t first, uint64_t n, unsigned splits)
{
	const struct tier_env *env = t->env;
	const struct tier_tierd_params *prm = t->prm;
	const double tau = prm->long_tau_us / 1e6;
	double sum = 0, mean;
	bool pinned = false;
	uint64_t i;
	float sc;

	for (i = first; i < first + n; i++) {
		sum += t->score[i];
		pinned |= t->score[i] >= TIERD_PINNED_SCORE;
	}
	if (sum > 0 && !pinned && splits < prm->max_splits_per_tick && env->migrator->split &&
	    split_gain(t, first, n, sum) >
		    prm->split_margin_ratio * (sum * prm->split_walk_ns + prm->split_cost_ns / tau) &&
	    env->migrator->split(env->migrator_priv, first) == 0 &&
	    !env->page_huge[first >> env->huge_shift])
		return 1;
	mean = pinned ? TIERD_PINNED_SCORE : sum / (double)n;
	sc = (float)mean;
	for (i = first; i < first + n; i++) {
		t->score[i] = sc;
		t->bin[i] = (uint16_t)tier__tierd_score_bin(t, sc);
	}
	return 0;
}

/* The huge pages of [from, to), a whole number of huge pages (or the end
 * of the pages). Returns the pages visited. */
static uint64_t score_range(struct tier__tierd *t, uint64_t from, uint64_t to, unsigned *splits)
{
	const struct tier_env *env = t->env;
	const uint64_t unit = UINT64_C(1) << env->huge_shift;
	uint64_t first, visited = 0;

	for (first = from; first < to; first += unit) {
		uint64_t n = first + unit > t->nr_pages ? t->nr_pages - first : unit;

		if (!env->page_huge[first >> env->huge_shift])
			continue;
		visited += n;
		*splits += score_unit(t, first, n, *splits);
	}
	return visited + (to - from) / unit;
}

/* Huge pages: splits those whose split pays, and gives the pages of every
 * other one their mean score: they move together. A huge page with a
 * pinned page is pinned as a whole.
 * Splitting a huge page (env->page_huge) lets its hot pages rise and its
 * cold ones sink apart, but every access to its pages then needs a 4 KiB
 * translation: counted as a page walk each (split_walk_ns). The split
 * itself (split_cost_ns) is paid once, spread over the long time constant.
 * A split must save (split_gain) split_margin_ratio times the two; at most
 * max_splits_per_tick a tick. Only the visited chunks' huge pages: the
 * others' pages all score 0 (no split gains, the mean is 0) - unless a
 * huge page is larger than a chunk, when every chunk is visited. */
void tier__tierd_score_units(struct tier__tierd *t)
{
	const struct tier_env *env = t->env;
	unsigned splits = 0;
	uint64_t c, visited = 0;

	if (env->huge_shift > TIERD_REGION_SHIFT) {
		visited = score_range(t, 0, t->nr_pages, &splits);
	} else {
		tier__tierd_for_each_chunk(t, t->vis, c)
			visited += score_range(t, c << TIERD_REGION_SHIFT,
					       tier__tierd_chunk_end(t, c), &splits);
	}
	t->splits += splits;
	*env->work_units += visited;
}
