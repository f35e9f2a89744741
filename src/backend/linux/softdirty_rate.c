/* softdirty_rate.c - the soft-dirty tracker's rate estimate: the rate
 * that makes a page's first writes after the clears of its last two
 * rounds most likely (contract in softdirty_rate.h; the tracker in
 * tracker_softdirty.c). Pure: no I/O. */
#include "backend/linux/softdirty_rate.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* When a page was first written after a clear, as a read told it: in
 * (a, b] seconds, or not by a (b infinite). */
struct sd_first {
	double a, b;
};

/* The derivative of the log-likelihood of first writes o[0..n) at rate r,
 * a Poisson process's: in (a, b] with probability e^-ra - e^-rb, whose log
 * has derivative -a + w / (e^rw - 1) (w = b - a); none by a, e^-ra: -a.
 * Decreasing in r: the likelihood has one peak. */
static double first_dlogl(const struct sd_first *o, size_t n, double r)
{
	double d = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		d -= o[i].a;
		if (!isinf(o[i].b))
			d += (o[i].b - o[i].a) / expm1(r * (o[i].b - o[i].a));
	}
	return d;
}

/* The rate that makes first writes o[0..n) most likely, at most rmax
 * (where it has no bound - every write came before the first read - the
 * rate whose first write has the first read as its median, ln 2 / b):
 * bisection in log r, to 0.1%. */
static double first_rate(const struct sd_first *o, size_t n, double rmax)
{
	double lo = 1e-4, hi = rmax;
	int i;

	if (first_dlogl(o, n, hi) >= 0)
		return hi;
	if (first_dlogl(o, n, lo) <= 0)
		return lo;
	for (i = 0; i < 40 && hi > lo * 1.001; i++) {
		double mid = sqrt(lo * hi);

		if (first_dlogl(o, n, mid) > 0)
			lo = mid;
		else
			hi = mid;
	}
	return sqrt(lo * hi);
}

/* A bracket of a round's reads (brk[k - 1], brk[k]] in seconds. */
static struct sd_first bracket(const uint64_t *brk, unsigned k)
{
	return (struct sd_first){ k ? brk[k - 1] / 1e6 : 0, brk[k] / 1e6 };
}

/* Whether the last round was short (TIER__SD_SHORT_ROUND_US): its pages
 * not written then count that with this round's. */
static bool short_prev(const uint64_t *prev_brk_us, unsigned nprev)
{
	return nprev && prev_brk_us[nprev - 1] <= TIER__SD_SHORT_ROUND_US;
}

double tier__sd_rate_max(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us)
{
	if (nprev && prev_brk_us[0] < brk_us[0])
		return M_LN2 * 1e6 / (double)prev_brk_us[0];
	return M_LN2 * 1e6 / (double)brk_us[0];
}

void tier__sd_rate_table(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us,
			 unsigned nbrk, double rate[][TIER__SD_MAX_BRK + 1])
{
	double rmax = tier__sd_rate_max(prev_brk_us, nprev, brk_us);
	struct sd_first o[2];
	unsigned kp, kc;
	for (kp = 0; kp <= nprev; kp++)
		for (kc = 0; kc <= nbrk; kc++) {
			size_t n = 0;

			if (kp)
				o[n++] = bracket(prev_brk_us, kp - 1);
			else if (kc && short_prev(prev_brk_us, nprev))
				o[n++] = (struct sd_first){ prev_brk_us[nprev - 1] / 1e6, INFINITY };
			if (kc)
				o[n++] = bracket(brk_us, kc - 1);
			else
				o[n++] = (struct sd_first){ brk_us[nbrk - 1] / 1e6, INFINITY };
			rate[kp][kc] = kp || kc ? first_rate(o, n, rmax) : 0;
		}
}


/* P(first write in bracket k of brk[0, n) | r), and P(by the last read). */
static double bracket_p(const uint64_t *brk, unsigned k, double r)
{
	struct sd_first f = bracket(brk, k);

	return exp(-r * f.a) - exp(-r * f.b);
}

/* The cells of one population's fit: each cell's pair of brackets (its
 * place in the rate table), pages and likelihood at each rate of the
 * grid. */
struct pop {
	unsigned n;
	unsigned kp[TIER__SD_MAX_BRK * TIER__SD_MAX_BRK], kc[TIER__SD_MAX_BRK * TIER__SD_MAX_BRK];
	double count[TIER__SD_MAX_BRK * TIER__SD_MAX_BRK];
	double lik[TIER__SD_MAX_BRK * TIER__SD_MAX_BRK][TIER__SD_POP_GRID];
};

static double grid_rate(unsigned g)
{
	return 0.1 * pow(1e4, (double)g / (TIER__SD_POP_GRID - 1));
}

/* The reads' probabilities at each rate of the grid (r->made): of a first
 * write in each bracket of either round, and of one by each round's
 * latest read. */
static void reads_grid(struct tier__sd_reads *r)
{
	unsigned k, g;

	for (g = 0; g < TIER__SD_POP_GRID; g++) {
		double rate = grid_rate(g);

		for (k = 0; k < r->nprev; k++)
			r->prev_p[k][g] = bracket_p(r->prev_brk_us, k, rate);
		for (k = 0; k < r->nbrk; k++)
			r->cur_p[k][g] = bracket_p(r->brk_us, k, rate);
		r->by_prev[g] = r->nprev ? -expm1(-rate * r->prev_brk_us[r->nprev - 1] / 1e6) : 0;
		r->by_cur[g] = -expm1(-rate * r->brk_us[r->nbrk - 1] / 1e6);
		r->none_prev[g] = short_prev(r->prev_brk_us, r->nprev) ?
					  exp(-rate * r->prev_brk_us[r->nprev - 1] / 1e6) : 1;
	}
	r->made = true;
}

/* Fits the mixture's weights over the grid to the cells' counts by EM and
 * lowers each cell's rate to its posterior mean (median: the rate most of
 * its pages have, the posterior's median) where that is lower. Fewer than
 * TIER__SD_POP_MIN pages: each cell takes fb's rate (NULL: keeps its own),
 * and false. */
static bool pop_fit(const struct pop *p, double rate[][TIER__SD_MAX_BRK + 1],
		    const double fb[][TIER__SD_MAX_BRK + 1], bool median, struct tier__sd_prior *prior)
{
	double w[TIER__SD_POP_GRID], acc[TIER__SD_POP_GRID], total = 0;
	bool warm = prior && prior->valid;
	unsigned c, g, it, iters = warm ? TIER__SD_POP_ITERS_WARM : TIER__SD_POP_ITERS;

	for (c = 0; c < p->n; c++)
		total += p->count[c];
	if (total < TIER__SD_POP_MIN) {
		for (c = 0; fb && c < p->n; c++)
			rate[p->kp[c]][p->kc[c]] = fb[p->kp[c]][p->kc[c]];
		return false;
	}
	/* From the last fit's weights where there is one (a floor of the
	 * uniform start's mixed in, so that rates it had all but ruled out
	 * can come back when the population changed), else uniform. */
	for (g = 0; g < TIER__SD_POP_GRID; g++)
		w[g] = warm ? (1 - TIER__SD_PRIOR_FLOOR) * prior->w[g] +
				      TIER__SD_PRIOR_FLOOR / TIER__SD_POP_GRID
			    : 1.0 / TIER__SD_POP_GRID;
	for (it = 0; it < iters; it++) {
		double change = 0;

		for (g = 0; g < TIER__SD_POP_GRID; g++)
			acc[g] = 0;
		/* acc[g] is w[g] sum_c count_c l_cg / z_c, w[g] taken out of
		 * the sum: one multiply-add a cell and rate, no division
		 * (emulated floating point charges each operation). */
		for (c = 0; c < p->n; c++) {
			const double *l = p->lik[c];
			double z = 0, f;

			if (!p->count[c])
				continue;
			for (g = 0; g < TIER__SD_POP_GRID; g++)
				z += w[g] * l[g];
			if (z <= 0)
				continue;
			f = p->count[c] / z;
			for (g = 0; g < TIER__SD_POP_GRID; g++)
				acc[g] += f * l[g];
		}
		for (g = 0; g < TIER__SD_POP_GRID; g++) {
			double nw = w[g] * acc[g] / total;

			change += fabs(nw - w[g]);
			w[g] = nw;
		}
		if (change < 1e-7)
			break;
	}
	if (prior) {
		memcpy(prior->w, w, sizeof(w));
		prior->valid = true;
	}
	for (c = 0; c < p->n; c++) {
		const double *l = p->lik[c];
		double z = 0, m = 0, cum = 0;

		for (g = 0; g < TIER__SD_POP_GRID; g++) {
			z += w[g] * l[g];
			m += w[g] * l[g] * grid_rate(g);
		}
		if (z <= 0)
			continue;
		m /= z;
		for (g = 0; median && g < TIER__SD_POP_GRID; g++) {
			cum += w[g] * l[g] / z;
			if (cum >= 0.5) {
				m = grid_rate(g);
				break;
			}
		}
		if (m < rate[p->kp[c]][p->kc[c]])
			rate[p->kp[c]][p->kc[c]] = m;
	}
	return true;
}

void tier__sd_reads_init(struct tier__sd_reads *r, const uint64_t *prev_brk_us, unsigned nprev,
			 const uint64_t *brk_us, unsigned nbrk)
{
	r->prev_brk_us = prev_brk_us;
	r->nprev = nprev;
	r->brk_us = brk_us;
	r->nbrk = nbrk;
	r->made = false;
	memset(r->table, 0, sizeof(r->table));
	tier__sd_rate_table(prev_brk_us, nprev, brk_us, nbrk, r->table);
}

/* The pages of a population in count: those written in both rounds
 * (both), or in this one alone - what pop_fit() asks TIER__SD_POP_MIN of
 * before it fits (the likelihoods are made only then). */
static double pop_total(const uint64_t count[][TIER__SD_MAX_BRK + 1], bool both, unsigned nprev,
			unsigned nbrk)
{
	double total = 0;
	unsigned kp, kc;

	for (kp = both ? 1 : 0; kp <= (both ? nprev : 0); kp++)
		for (kc = 1; kc <= nbrk; kc++)
			total += (double)count[kp][kc];
	return total;
}

bool tier__sd_rate_pop(struct tier__sd_reads *r, const uint64_t count[][TIER__SD_MAX_BRK + 1],
		       double rate[][TIER__SD_MAX_BRK + 1],
		       const double fallback[][TIER__SD_MAX_BRK + 1], struct tier__sd_priors *priors)
{
	struct pop p;
	unsigned kp, kc, g;
	bool both = false;

	memcpy(rate, r->table, sizeof(r->table));
	if (!r->nbrk)
		return false;
	/* The pages written in both rounds: each pair's likelihood at each
	 * rate, given written in both (by the last round's end and by this
	 * one's latest read). */
	p.n = 0;
	if (r->nprev && pop_total(count, true, r->nprev, r->nbrk) < TIER__SD_POP_MIN) {
		/* too few to fit (pop_fit()): the fallback's rates */
		for (kp = 1; fallback && kp <= r->nprev; kp++)
			for (kc = 1; kc <= r->nbrk; kc++)
				rate[kp][kc] = fallback[kp][kc];
	} else if (r->nprev) {
		if (!r->made)
			reads_grid(r);
		for (kp = 1; kp <= r->nprev; kp++)
			for (kc = 1; kc <= r->nbrk; kc++) {
				p.kp[p.n] = kp;
				p.kc[p.n] = kc;
				p.count[p.n] = (double)count[kp][kc];
				for (g = 0; g < TIER__SD_POP_GRID; g++) {
					double by = r->by_prev[g] * r->by_cur[g];

					p.lik[p.n][g] = by > 0 ? r->prev_p[kp - 1][g] *
									 r->cur_p[kc - 1][g] / by
							       : 0;
				}
				p.n++;
			}
		both = pop_fit(&p, rate, fallback, false, priors ? &priors->both : NULL);
	}
	/* The pages written in this round alone (all of a process's in its
	 * first round): each bracket's likelihood given written by the latest
	 * read. One draw each, so the rate most of a bracket's pages have (the
	 * posterior's median), not their mean: in a GUPS array's first round
	 * 3.5% of the pages first written 20-60 ms after the clear are hot,
	 * and at 183/s against 3.6/s they made that bracket's mean 11/s, above
	 * the 10/s a move must pay for - 18,000 cold pages moved up in one
	 * step, and as many down, for 600 hot ones the next round finds. */
	if (pop_total(count, false, r->nprev, r->nbrk) < TIER__SD_POP_MIN) {
		for (kc = 1; fallback && kc <= r->nbrk; kc++)
			rate[0][kc] = fallback[0][kc];
		return both;
	}
	if (!r->made)
		reads_grid(r);
	p.n = 0;
	for (kc = 1; kc <= r->nbrk; kc++) {
		p.kp[p.n] = 0;
		p.kc[p.n] = kc;
		p.count[p.n] = (double)count[0][kc];
		for (g = 0; g < TIER__SD_POP_GRID; g++) {
			double by = r->by_cur[g];

			p.lik[p.n][g] = by > 0 ? r->cur_p[kc - 1][g] * r->none_prev[g] / by : 0;
		}
		p.n++;
	}
	return pop_fit(&p, rate, fallback, true, priors ? &priors->alone : NULL) || both;
}

bool tier__sd_rate_table_pop(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us,
			     unsigned nbrk, const uint64_t count[][TIER__SD_MAX_BRK + 1],
			     double rate[][TIER__SD_MAX_BRK + 1],
			     const double fallback[][TIER__SD_MAX_BRK + 1])
{
	struct tier__sd_reads r;

	tier__sd_reads_init(&r, prev_brk_us, nprev, brk_us, nbrk);
	return tier__sd_rate_pop(&r, count, rate, fallback, NULL);
}

uint64_t tier__softdirty_period_us(uint64_t fault_ns, uint64_t cpu_us, double share)
{
	double p = TIER__SD_MIN_US;
	double faults = (double)fault_ns / 1000.0 / TIER__SD_FAULT_SHARE;
	double cpu = (double)cpu_us / (share > 0 ? share : TIER__SD_CPU_SHARE);

	if (faults > p)
		p = faults;
	if (cpu > p)
		p = cpu;
	return p > TIER__SD_MAX_US ? TIER__SD_MAX_US : (uint64_t)p;
}
