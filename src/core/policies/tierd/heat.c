/* heat.c - the tierd policy's heat estimate: observations become access
 * rates (tier_obs_accesses(), core/policy.h), added to two exponentially
 * decaying per-page rates - long (long_tau_us): frequency, what deserves
 * the fast tier; short (short_tau_us): momentum, what just became hot.
 * Decay is in time (by the elapsed microseconds), not in counts. Samples
 * are sparse per page, so they are also pooled per 2 MiB region: toward
 * the region's mean where its pages are alike, and as the region's own
 * momentum (its recent sampled rate against its long one, beyond the noise
 * of 512 pages' samples), which sees a hot set move within a tick. A
 * page's score is its predicted rate, bent by its hint.
 */
#include <math.h>
#include <string.h>

#include "core/policies/tierd/internal.h"

/* The sampled part of a page's rate, shrunk toward its region's mean
 * (empirical Bayes): a page's own count is a noisy Poisson draw; where the
 * pages of a region really differ (the region's spread exceeds the sampling
 * noise) the page's own count stands, where they do not (a uniform region,
 * the inside of a hot set) the region's mean - 512 times the samples -
 * replaces it. */
static double shrunk_samples(const struct tier__tierd *t, uint64_t i)
{
	size_t r = i >> TIERD_REGION_SHIFT;
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
static double page_heat(const struct tier__tierd *t, uint64_t i)
{
	const double shrt = tier__tierd_shrt(t, i);
	double lng = tier__tierd_lng(t, i) - t->pages[i].smp + shrunk_samples(t, i);
	const double ts = t->prm->short_tau_us / 1e6;
	const double up = t->prm->momentum_sd, down = t->prm->cooling_sd;
	double d = shrt - lng, var = (lng * ts + 1) / (ts * ts), sd;

	/* Within the noise band (the common case) without a square root:
	 * -down sd < d < up sd. */
	if (d >= 0 ? d * d <= up * up * var : d * d <= down * down * var)
		return lng;
	sd = sqrt(var);
	if (d > 0)
		return shrt - up * sd;
	{
		double high = shrt + down * sd, mean = 0.5 * (lng + shrt);

		return high > mean ? high : mean;
	}
}

/* The predicted rate: the page's own, moved by its region's momentum
 * where the region's pages are alike (the part of a page's samples that
 * pooling gives the region mean). */
double tier__tierd_heat_score(const struct tier__tierd *t, uint64_t i)
{
	size_t r = i >> TIERD_REGION_SHIFT;
	double h = page_heat(t, i) + (1.0 - t->reg_shrink[r]) * t->reg_boost[r];

	return h > 0 ? h : 0;
}

/* The score placement works with: the heat, bent by intent. A pinned or
 * latency-critical page outranks any heat; a page advised hot counts
 * hot_hint_ratio times its heat plus hot_hint_min_per_s (never less than a
 * warm page); a page advised cold counts nothing. */
double tier__tierd_score(const struct tier__tierd *t, uint64_t i)
{
	switch (tier__tierd_hint_of(t, i)) {
	case TIER_HINT_PIN_FAST:
	case TIER_HINT_LATENCY:
		return TIERD_PINNED_SCORE;
	case TIER_HINT_HOT:
		return t->prm->hot_hint_ratio * tier__tierd_heat_score(t, i) +
		       t->prm->hot_hint_min_per_s;
	case TIER_HINT_COLD:
		return 0;
	default:
		return tier__tierd_heat_score(t, i);
	}
}

/* Momentum from a region's pooled samples (per page, accesses/s): its
 * recent sampled rate ms (short time constant) against its long one m,
 * beyond region_sd times the noise of ms - samples of weight w over
 * short_tau_us, pooled over the region's n pages, so 512 times as many as
 * one page's: heating, the lower bound of ms less m; cooling, the upper
 * bound (or the mean of the two) less m; else 0. A hot set that moved
 * shows in its regions within tens of milliseconds, long before each page
 * has samples of its own.
 * age_ms: since the region's first sample (0: none). */
static double region_momentum(const struct tier__tierd *t, double m, double ms, double n,
			      uint32_t age_ms)
{
	const double ts = t->prm->short_tau_us / 1e6, w = t->sample_weight, q = w / (ts * n);
	const double z = t->prm->region_sd;
	double d, sd;

	if (!age_ms)
		return 0;
	/* Both averages started from zero at the region's first sample:
	 * undo that bias (else every region looks heating for seconds). */
	m /= -expm1(-(double)age_ms * 1e3 / t->long_tau_us);
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

/* Per-region mean and shrinkage factor of the sampled rates, for the live
 * chunks (an idle region keeps mean 0, shrinkage 1, momentum 0: what its
 * all-zero rates give). */
void tier__tierd_pool_samples(struct tier__tierd *t)
{
	const double tau = t->long_tau_us / 1e6;
	uint64_t r, visited = 0;

	tier__tierd_for_each_chunk(t, t->live, r) {
		uint64_t first = r << TIERD_REGION_SHIFT, i;
		uint64_t end = tier__tierd_chunk_end(t, r);
		double sum = 0, sum2 = 0, n, m, var, noise, spread;
		uint32_t age_ms;

		if (t->sample_weight <= 0 || tier__tierd_bit(t->uni, r)) {
			/* No sampling tracker, or a uniform chunk: nothing to
			 * pool (smp is 0; so is the short sampled rate). */
			t->reg_mean[r] = 0;
			t->reg_boost[r] = 0;
			t->reg_shrink[r] = 1.0f;
			continue;
		}
		n = (double)(end - first);
		for (i = first; i < end; i++) {
			sum += t->pages[i].smp;
			sum2 += (double)t->pages[i].smp * t->pages[i].smp;
		}
		visited += end - first;
		m = sum / n;
		var = sum2 / n - m * m;
		noise = m * t->sample_weight / tau;	/* Poisson: variance of one page's estimate */
		spread = var > noise ? var - noise : 0;
		t->reg_mean[r] = (float)m;
		t->reg_shrink[r] = spread + noise > 0 ? (float)(spread / (spread + noise)) : 1.0f;
		age_ms = t->reg_since_ms[r] ? tier__tierd_stamp_ms(t->last_us) - t->reg_since_ms[r] : 0;
		t->reg_boost[r] = (float)region_momentum(t, m, t->reg_sshort[r] / n, n, age_ms);
	}
	*t->env->work_units += visited;
}

/* The weight of `accesses` seen over covered_us in a rate of time
 * constant tau_us, when the scores last decayed gap_us ago. Events
 * (covered_us 0): the accesses themselves. A scan's checks give a rate,
 * accesses / covered_us, which speaks for the gap - a snapshot of the
 * last aggregation, taken by a daemon whose CPU share spaces its steps
 * seconds apart; a tracker's standing estimate, re-stated every step; or a
 * tick's own scan - and weighs as an exponential average of that rate over
 * the gap would: rate (1 - e^(-gap / tau)). Steady, it holds the rate
 * whatever the spacing of the steps. (The accesses over the gap divided by
 * tau, where the checks covered more than the gap, counted a rate measured
 * over a long round once per step: many times over.) */
static double rate_weight(double accesses, double covered_us, double gap_us, double tau_us)
{
	if (covered_us <= 0)
		return accesses * 1e6 / tau_us;
	if (gap_us <= 0)
		gap_us = covered_us;
	return accesses * 1e6 / covered_us * -expm1(-gap_us / tau_us);
}

/* Whether a page (or uniform chunk) of long rate lng, born in step *born,
 * takes a scan's rate whole (first > 0: steps are sparse): when its rate
 * begins in this step - it has none yet, or got its first in this step
 * from another tracker's scan (soft-dirty's written rate, then what
 * DAMON's region over it leaves: together, the page's rate). */
static inline bool first_sight(struct tier__tierd *t, float first, float lng, uint8_t *born)
{
	if (first <= 0)
		return false;
	if (lng == 0) {
		*born = t->step_gen;
		return true;
	}
	return *born == t->step_gen;
}

/* Adds `accesses` per page to pages [page, page + nr): a sample's to the
 * long rate and its sampled part (and to its region's short sampled rate),
 * a scan's or a fault's to the long and the short rate. covered_us: the
 * time a scan's checks covered (0: events). standing: the scan's rate is a
 * tracker's standing estimate of each page's own (TIER_OBS_STANDING,
 * core/ops.h): it adds nothing, and holds both rates at least there. */
static void add_accesses(struct tier__tierd *t, uint64_t page, uint32_t nr, double accesses,
			 bool sampled, double covered_us, bool standing)
{
	uint64_t end = page + nr;
	double gap = sampled ? 0 : (double)t->gap_us;
	float l, s, m, first = 0, least = 0;

	uint64_t c;

	if (!sampled && covered_us > 0 && gap > 0) {
		/* rate_weight() with this step's factors, computed once a
		 * step (a soft-dirty picture is tens of thousands of runs, and
		 * an exponential each is most of their cost where floating
		 * point is emulated). */
		double rate = accesses * 1e6 / covered_us;

		l = (float)(rate * t->gap_long);
		s = (float)(rate * t->gap_short);
		/* Where steps come so far apart that the long rate spans
		 * long_min_steps of them, a page whose rate begins in this
		 * step takes the scans' rates whole (first_sight()): an
		 * average that starts from nothing would hold a page seen at
		 * 20/s at 5.6/s for a step, 9.6/s for two, below the 10/s a
		 * move must pay for (a hot set seen through an emulator's
		 * TLB), and cost it 20 s. */
		if (t->long_tau_us > t->prm->long_tau_us)
			first = (float)rate;
	} else {
		l = (float)rate_weight(accesses, covered_us, gap, t->long_tau_us);
		s = sampled ? 0 : (float)rate_weight(accesses, covered_us, gap, t->prm->short_tau_us);
	}
	/* A standing estimate is what the tracker makes of the page's own
	 * history (soft-dirty: its first writes after the clears of its last
	 * two rounds); averaged again, a page it rates at 35/s, with a
	 * DAMON region's 2/s before, stayed below the 10/s bar for two steps
	 * spaced 6-10 s apart, and a scattered hot set reached the fast tier
	 * a few thousand pages a step. It is the least the page's rates may
	 * read, long and short (a long rate above a short one that nothing
	 * feeds reads as cooling), and adds nothing: other trackers' rates
	 * still raise the average above it (the page's rate is the larger of
	 * theirs and the estimate's), and it decays from the estimate once
	 * that falls. */
	if (standing && !sampled && covered_us > 0) {
		least = (float)(accesses * 1e6 / covered_us);
		l = s = first = 0;
	}
	m = sampled ? l : 0;
	if (end > t->nr_pages)
		end = t->nr_pages;
	if (page >= end)
		return;
	tier__tierd_mark_live(t, page, end);
	if (!sampled && !(t->env->page_huge && t->sample_weight > 0)) {
		/* A scan or a fault: the same accesses for every page - one
		 * update for each uniform chunk it covers whole (a DAMON
		 * region of many chunks costs as many updates, not 512 times
		 * as many); the other chunks' pages each their own. */
		for (c = page >> TIERD_REGION_SHIFT; page < end; c++) {
			uint64_t cend = tier__tierd_chunk_end(t, c), stop = cend < end ? cend : end;

			if (tier__tierd_bit(t->uni, c) && page == c << TIERD_REGION_SHIFT &&
			    stop == cend) {
				t->ulng[c] += first_sight(t, first, t->ulng[c], &t->uborn[c]) ? first : l;
				t->ushrt[c] += s;
				if (t->ulng[c] < least)
					t->ulng[c] = least;
				if (t->ushrt[c] < least)
					t->ushrt[c] = least;
				*t->env->work_units += 1;
				page = stop;
				continue;
			}
			tier__tierd_chunk_split(t, c);
			*t->env->work_units += stop - page;
			for (; page < stop; page++) {
				struct tier__tierd_page *p = &t->pages[page];

				p->lng += first_sight(t, first, p->lng, &p->born) ? first : l;
				p->shrt += s;
				if (p->lng < least)
					p->lng = least;
				if (p->shrt < least)
					p->shrt = least;
			}
		}
		return;
	}
	/* Samples and huge pages' shares tell pages apart. */
	for (c = page >> TIERD_REGION_SHIFT; c < t->nr_chunks && (c << TIERD_REGION_SHIFT) < end; c++)
		tier__tierd_chunk_split(t, c);
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
			float k = tier__tierd_huge_at(t, page) ? share : 1.0f;

			t->pages[page].lng += l * k;
			t->pages[page].shrt += s * k;
		}
		*t->env->work_units += nr;
		return;
	}
	if (sampled) {
		size_t r = page >> TIERD_REGION_SHIFT;

		t->reg_sshort[r] += (float)rate_weight(accesses, 0, 0, t->prm->short_tau_us) *
				    (float)(end - page);
		if (!t->reg_since_ms[r])
			t->reg_since_ms[r] = tier__tierd_stamp_ms(t->last_us);
	}
	for (; page < end; page++) {
		t->pages[page].lng += l;
		t->pages[page].shrt += s;
		t->pages[page].smp += m;
	}
	*t->env->work_units += nr;
}

void tier__tierd_observe(void *priv, const struct tier_obs *obs, size_t n)
{
	struct tier__tierd *t = priv;
	size_t i;

	/* Fresh observations must not be decayed over the time before they
	 * arrived: decay the old scores to now first (once per step). */
	if (!t->decayed) {
		tier__tierd_decay(t, t->env->clock->now_us(t->env->clock_priv));
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
			     o->interval_us : 0,
			     (o->kind == TIER_OBS_ACCESSED || o->kind == TIER_OBS_WRITTEN) &&
			     (o->write & TIER_OBS_STANDING));
	}
	*t->env->work_units += n;
}

/* Decays the live chunks' rates (the others' are all zero); a chunk whose
 * rates all reached zero is idle from now on. */
void tier__tierd_decay(struct tier__tierd *t, uint64_t now_us)
{
	double dt = (double)(now_us - t->last_us);
	float fl;
	float fs = (float)exp(-dt / t->prm->short_tau_us);
	const float rate_floor = t->prm->rate_floor_per_s;
	uint64_t c, visited = 0;

	t->gap_us = now_us - t->last_us;
	t->step_gen++;
	/* The long time constant spans long_min_steps steps at least: the
	 * decay here and the weight of this step's observations (add_accesses())
	 * use the same one, so a steady rate holds whatever it is. */
	t->long_tau_us = t->prm->long_tau_us;
	if (t->prm->long_min_steps * dt > t->long_tau_us)
		t->long_tau_us = t->prm->long_min_steps * dt;
	fl = (float)exp(-dt / t->long_tau_us);
	t->gap_long = -expm1(-dt / t->long_tau_us);
	t->gap_short = -expm1(-dt / t->prm->short_tau_us);

	tier__tierd_for_each_chunk(t, t->live, c) {
		uint64_t i, end = tier__tierd_chunk_end(t, c);
		bool any;

		if (tier__tierd_bit(t->uni, c)) {
			/* Uniform: its pages' rates decay as one (no samples,
			 * no short sampled rate). */
			t->ulng[c] = t->ulng[c] * fl < rate_floor ? 0 : t->ulng[c] * fl;
			t->ushrt[c] = t->ushrt[c] * fs < rate_floor ? 0 : t->ushrt[c] * fs;
			visited++;
			if (t->ulng[c] == 0 && t->ushrt[c] == 0 && t->reg_sshort[c] == 0)
				t->live[c >> 6] &= ~(UINT64_C(1) << (c & 63));
			continue;
		}
		for (i = c << TIERD_REGION_SHIFT; i < end; i++) {
			struct tier__tierd_page *p = &t->pages[i];

			/* A rate that decayed below the floor is none: exact
			 * zeros let idle pages take the short way through
			 * every pass (and idle chunks out of them), and keep
			 * floats out of denormals (slow on every FPU, and far
			 * slower where floating point is emulated). */
			if (p->lng == 0 && p->shrt == 0)
				continue;
			p->lng = p->lng * fl < rate_floor ? 0 : p->lng * fl;
			p->shrt = p->shrt * fs < rate_floor ? 0 : p->shrt * fs;
			p->smp = p->lng == 0 ? 0 : p->smp * fl;
		}
		visited += end - (c << TIERD_REGION_SHIFT);
		t->reg_sshort[c] = t->reg_sshort[c] * fs < rate_floor ? 0 : t->reg_sshort[c] * fs;
		any = t->reg_sshort[c] != 0;
		for (i = c << TIERD_REGION_SHIFT; i < end && !any; i++)
			any = t->pages[i].lng != 0 || t->pages[i].shrt != 0;
		if (!any) {
			/* Idle: uniform at no rate again. */
			t->live[c >> 6] &= ~(UINT64_C(1) << (c & 63));
			t->uni[c >> 6] |= UINT64_C(1) << (c & 63);
			t->reg_mean[c] = 0;
			t->reg_boost[c] = 0;
			t->reg_shrink[c] = 1.0f;
		}
	}
	*t->env->work_units += visited;
	t->last_us = now_us;
}

/* Computes the score of every page of the visited chunks once per tick
 * (placement reads it many times: histogram, candidates, sorting,
 * exchanges); the other pages' is 0. */
void tier__tierd_compute_scores(struct tier__tierd *t)
{
	uint64_t c, visited = 0;

	tier__tierd_visit_begin(t);
	tier__tierd_for_each_chunk(t, t->vis, c) {
		uint64_t i, first = c << TIERD_REGION_SHIFT, end = tier__tierd_chunk_end(t, c);

		if (tier__tierd_chunk_flat(t, c)) {
			/* Uniform, no hint: one score for all its pages. */
			float sc = t->ulng[c] == 0 && t->ushrt[c] == 0 ? 0 :
				   (float)tier__tierd_heat_score(t, first);
			uint16_t b = (uint16_t)tier__tierd_score_bin(t, sc);

			for (i = first; i < end; i++) {
				t->score[i] = sc;
				t->bin[i] = b;
			}
			*t->env->work_units += 1 + (end - first) / 8;
			continue;
		}
		for (i = first; i < end; i++) {
			/* Idle, in a region without samples, no hint: nothing
			 * to compute. */
			if (tier__tierd_lng(t, i) == 0 && tier__tierd_shrt(t, i) == 0 &&
			    t->reg_mean[c] == 0 && tier__tierd_hint_of(t, i) == TIER_HINT_NONE) {
				t->score[i] = 0;
				t->bin[i] = 0;
				continue;
			}
			t->score[i] = (float)tier__tierd_score(t, i);
			t->bin[i] = (uint16_t)tier__tierd_score_bin(t, t->score[i]);
		}
		visited += end - (c << TIERD_REGION_SHIFT);
	}
	*t->env->work_units += visited;
	if (t->env->page_huge)
		tier__tierd_score_units(t);
}
