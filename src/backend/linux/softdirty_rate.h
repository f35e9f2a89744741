/* softdirty_rate.h - the soft-dirty tracker's rate estimate
 * (tracker_softdirty.c). */
#ifndef TIER_BACKEND_LINUX_SOFTDIRTY_RATE_H
#define TIER_BACKEND_LINUX_SOFTDIRTY_RATE_H

#include <stdbool.h>
#include <stdint.h>

/* A round: its reads after the clear (the writer's time), then its end;
 * the tracker's thread (tracker_softdirty.c) and tiersim's model of it
 * (src/backend/sim/tracker_sd.c) keep to these. */
#define TIER__SD_READ1_US	20000u
#define TIER__SD_READ2_US	60000u
#define TIER__SD_READ3_US	200000u
#define TIER__SD_STRETCH	16u		/* an early read waits for its writer's own
						 * time at most this many times the read's */
#define TIER__SD_OWN_FLOOR	16u		/* a writer's own time is at least 1/N of
						 * the time since the clear */
#define TIER__SD_MIN_US		1000000u	/* a round: at least 1 s */
#define TIER__SD_MAX_US		600000000u	/* ... and at most 10 min */
#define TIER__SD_FAULT_SHARE	0.02		/* its writers' faults: of a core */
#define TIER__SD_CPU_SHARE	0.03		/* the thread's own (default) */

/* A round's period: at least 1 s, stretched so that the faults a round
 * makes its writers take (fault_ns of their CPU over the last round, each
 * at what the round saw one cost its writer - under an emulator up to 4
 * times the calibration's figure) stay under 2% of a core, and the
 * thread's own CPU over the last round (cpu_us) under share of a core
 * (3% where share is 0); at most 10 min. */
uint64_t tier__softdirty_period_us(uint64_t fault_ns, uint64_t cpu_us, double share);

/* Reads a round at most (the last one's bracket widens beyond). */
#define TIER__SD_MAX_BRK 8u

/* The rates of a target's picture at its latest read, by the bracket a page was
 * first written in in the last round (kp, 0 where it was not written
 * then) and in this one (kc, 0 where not yet): rate[kp][kc], bracket k at
 * index k + 1. prev_brk_us[0, nprev) and brk_us[0, nbrk) (nbrk >= 1) are
 * the last round's and this one's reads after their clears, rising. A page's two rounds are taken together - a page written
 * 2 times a second is first written within 60 ms in one round in nine,
 * in both in one in 80, and one written 100 times a second in nearly
 * every round - but for a page not written in the whole last round: it
 * has changed, and its last round says nothing of now. */
void tier__sd_rate_table(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us,
			 unsigned nbrk, double rate[][TIER__SD_MAX_BRK + 1]);

/* The highest rate the table gives those reads: ln 2 over the shorter
 * of the two rounds' first reads (a page first written before both reads
 * is rated so, however fast it is written). */
double tier__sd_rate_max(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us);

/* ... unless the last round was short: its last read at most this long
 * after its clear (the writer's time). A process's first round lasts
 * SD_MIN_US of the wall clock (in the guest bench, 234-309 ms of its
 * writer's), and a page it did not see written is not one that has
 * changed since but one written seldom: a GUPS array page at 3.6/s is
 * missed by such a round in four in ten, and one in eighteen of those
 * is first written within the next round's first read (16 ms) - in the
 * bench 7,600 of its cold pages a run read 42/s from that read alone and
 * were moved up with the hot set, at two moves each. So for the pages
 * such a round did not see written, its "not by its last read" counts
 * with this round's bracket: those 16 ms pages read 4/s. */
#define TIER__SD_SHORT_ROUND_US 1000000u

/* The pages written in both rounds (TIER_OBS_STANDING: the policy acts on
 * them at once) are many draws of one population: most of a large
 * process's written pages are seldom written, and at 5 writes a second a
 * page is first written within 60 ms of the writer's time after both
 * clears in one round in 15 - 9,400 of a GUPS array's 139,000 pages at
 * 5/s each round, up to 27.5/s by the table above, above the 10/s a move
 * must pay for, a new set every round (reads at 20, 60 and 200 ms of the
 * writer's time). So where at least TIER__SD_POP_MIN pages were written in both
 * rounds, their rates are the mean a page of each pair of brackets has
 * under the rates' distribution over those pages, fitted to how many
 * fell in each pair (count[kp][kc], pages; empirical Bayes: a mixture
 * over TIER__SD_POP_GRID rates from 0.1 to 1,000 a second by EM, each
 * pair's likelihood given the page was written in both rounds) where
 * that is lower than the table's. A page of a population that is mostly
 * cold reads cold where its brackets are what cold pages often give
 * (27.5/s -> 5.5/s for that array's pages first written 20-60 ms after
 * both clears), and hot where only hot pages give them (within 20 ms in
 * both); a population that is all warm keeps its warm rates. Never
 * higher than the table's: a page the table leaves out of the picture
 * (under 2/s) stays out.
 *
 * The pages written in this round alone (kp 0: all of a process's in its
 * first round) are a population of their own too, each bracket's
 * likelihood given written by the latest read: in a GUPS array's first
 * round (reads at 20, 60 and 200 ms), 17,000 of its 139,000 pages at
 * 3.6/s are first written 20-60 ms after the clear and read 27.5/s
 * alone, where few hot pages are (97% of those at 180/s are written
 * within 20 ms):
 * moved up for nothing, at two moves each, before the population's
 * second round could tell. One draw a page: each bracket of these takes
 * the rate most of its pages have (the posterior's median), not their
 * mean, which the few hot pages among many cold ones raise above the
 * bar (11/s for that array's 20-60 ms bracket, 3.5% of its pages hot).
 *
 * Fills rate[][] as tier__sd_rate_table() does and lowers the pairs kp,
 * kc >= 1 and the pairs 0, kc >= 1 by their populations' fits; a
 * population of too few pages takes fallback's rates for its pairs
 * (NULL: the table's). Returns whether it fitted either. */
#define TIER__SD_POP_MIN 256u
#define TIER__SD_POP_GRID 60u
bool tier__sd_rate_table_pop(const uint64_t *prev_brk_us, unsigned nprev, const uint64_t *brk_us,
			     unsigned nbrk, const uint64_t count[][TIER__SD_MAX_BRK + 1],
			     double rate[][TIER__SD_MAX_BRK + 1],
			     const double fallback[][TIER__SD_MAX_BRK + 1]);

/* A target's reads, for the fits of each of its populations (each tier's
 * pages, the whole's: the reads are the same, the counts differ): the
 * table (tier__sd_rate_table()) made once, and the reads' probabilities
 * at each rate of the grid made when a population first has enough pages
 * to fit. Under an emulator's floating point one target's fits cost 10-20
 * ms when each population made both anew, and a step rates every target
 * (1,000 small processes: 10-13 s of a step's CPU). */
struct tier__sd_reads {
	const uint64_t *prev_brk_us, *brk_us;	/* the caller's, while in use */
	unsigned nprev, nbrk;
	double table[TIER__SD_MAX_BRK + 1][TIER__SD_MAX_BRK + 1];
	bool made;				/* the rest */
	double prev_p[TIER__SD_MAX_BRK][TIER__SD_POP_GRID];	/* first write in bracket k */
	double cur_p[TIER__SD_MAX_BRK][TIER__SD_POP_GRID];
	double by_prev[TIER__SD_POP_GRID], by_cur[TIER__SD_POP_GRID];	/* by the latest read */
	double none_prev[TIER__SD_POP_GRID];	/* not in a short last round (else 1) */
};

void tier__sd_reads_init(struct tier__sd_reads *r, const uint64_t *prev_brk_us, unsigned nprev,
			 const uint64_t *brk_us, unsigned nbrk);

/* The mixture's weights over the grid a population's last fit ended
 * with, for the next fit of that population to start from. EM creeps
 * towards the weights' maximum likelihood: from the uniform start, 500
 * iterations leave a GUPS array's hot pages at 79-81/s where the fit's
 * end is 73.5/s (they write 73/s), and even 2,000 do not get there; each
 * iteration is two multiply-adds per cell and rate, and under an emulator's
 * floating point one target's fits cost 10-30 ms of a step. A population
 * rated again (the next picture of the same process: its rates have
 * moved little) goes on from where its last fit ended,
 * TIER__SD_POP_ITERS_WARM iterations at a time: a fifth of the cost,
 * the iteration carried on from picture to picture (over eight pictures
 * of the same counts each pair's rate moves less than 10%). A floor of
 * TIER__SD_PRIOR_FLOOR of the uniform start is mixed in, so that rates
 * the last fit had all but ruled out can come back (pages that moved
 * between tiers change a tier's population at once). */
#define TIER__SD_POP_ITERS 500u
#define TIER__SD_POP_ITERS_WARM 100u
#define TIER__SD_PRIOR_FLOOR 0.01
struct tier__sd_prior {
	bool valid;
	double w[TIER__SD_POP_GRID];
};

/* A population's two fits: the pages written in both rounds, and those
 * written in this one alone. */
struct tier__sd_priors {
	struct tier__sd_prior both, alone;
};

/* tier__sd_rate_table_pop() of the reads r (the same figures with priors
 * NULL). priors (NULL: none kept): where valid, each fit starts from its
 * weights and runs TIER__SD_POP_ITERS_WARM iterations; each fit made
 * leaves its weights there. */
bool tier__sd_rate_pop(struct tier__sd_reads *r, const uint64_t count[][TIER__SD_MAX_BRK + 1],
		       double rate[][TIER__SD_MAX_BRK + 1],
		       const double fallback[][TIER__SD_MAX_BRK + 1], struct tier__sd_priors *priors);

#endif
