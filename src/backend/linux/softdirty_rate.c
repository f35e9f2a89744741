/* softdirty_rate.c - the soft-dirty tracker's rate estimate: the rate
 * that makes a page's first writes after the clears of its last two
 * rounds most likely (contract in softdirty_rate.h; the tracker in
 * tracker_softdirty.c). Pure: no I/O. */
#include "backend/linux/softdirty_rate.h"

#include <math.h>
#include <stddef.h>

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

void tier__sd_rate_table(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us,
			 unsigned nbrk, double rate[][TIER__SD_MAX_BRK + 1])
{
	double rmax = M_LN2 * 1e6 / (double)brk_us[0];
	struct sd_first o[2];
	unsigned kp, kc;

	if (nprev && prev_brk_us[0] < brk_us[0])
		rmax = M_LN2 * 1e6 / (double)prev_brk_us[0];
	for (kp = 0; kp <= nprev; kp++)
		for (kc = 0; kc <= nbrk; kc++) {
			size_t n = 0;

			if (kp)
				o[n++] = bracket(prev_brk_us, kp - 1);
			if (kc)
				o[n++] = bracket(brk_us, kc - 1);
			else
				o[n++] = (struct sd_first){ brk_us[nbrk - 1] / 1e6, INFINITY };
			rate[kp][kc] = kp || kc ? first_rate(o, n, rmax) : 0;
		}
}

